//! A trace-driven link delivers exactly its trace's opportunities (Mahimahi's rule).

use super::{Link, Offer};
use crate::config::trace::{parse_trace, LinkTrace, OPPORTUNITY_BYTES};
use crate::config::LinkConfig;
use crate::packet::{Addr, Datagram, Payload};
use crate::time::{SimDuration, SimTime};

const MS: u64 = 1_000_000;
/// The link's per-packet overhead (the default 28 B).
const OVERHEAD: u64 = 28;

fn link(trace: &str) -> Link {
    let t = LinkTrace::new("t.trace", parse_trace(trace).unwrap());
    let cfg = LinkConfig {
        rate: t.mean_rate(),
        trace: Some(t),
        ..LinkConfig::new(crate::units::Rate(1), SimDuration::ZERO)
    };
    Link::new("l", 0, 1, &cfg, 1)
}

/// A datagram of `wire` bytes on the wire.
fn dgram(wire: u64, tag: u64) -> Datagram {
    let a = Addr { ip: 1, port: 1 };
    Datagram::new(a, a, (wire - OVERHEAD) as u32, 0, Payload::Raw { tag })
}

/// Offers `n` packets of `wire` bytes at time 0 (a saturating sender: the queue never
/// empties) and returns every departure time, in order.
fn saturate(l: &mut Link, n: u64, wire: u64) -> Vec<u64> {
    let mut next = None;
    for i in 0..n {
        match l.offer(SimTime::ZERO, dgram(wire, i)) {
            Offer::StartedTx(t) => next = Some(t),
            Offer::Accepted => {}
            Offer::Dropped(r, _) => panic!("dropped: {r:?}"),
        }
    }
    let mut out = Vec::new();
    while let Some(t) = next {
        out.push(t.0);
        let done = l.tx_done(t);
        assert_eq!(done.arrival, Some(t), "zero delay: arrives when it departs");
        l.arrive();
        next = done.next_tx_done;
    }
    out
}

#[test]
fn full_packets_depart_at_the_trace_timestamps_repeating() {
    let mut l = link("1\n2\n2\n10\n");
    let got = saturate(&mut l, 12, OPPORTUNITY_BYTES);
    let want: Vec<u64> = [1, 2, 2, 10, 11, 12, 12, 20, 21, 22, 22, 30]
        .iter()
        .map(|m| m * MS)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn bytes_per_opportunity_follow_mahimahi() {
    // Under saturation the opportunities are a byte pipe of 1500 B each: packet k (from 1)
    // departs at the opportunity that carries its last byte, ceil(k × wire / 1500) − 1,
    // for packets smaller (their leftovers serve the next packet) and larger (they take
    // several opportunities) than an opportunity.
    let trace = "1\n2\n2\n7\n10\n";
    let t = LinkTrace::new("t", parse_trace(trace).unwrap());
    for wire in [100, 750, 1000, 1228, 1499, 1500, 1501, 2000, 4000] {
        let mut l = link(trace);
        let n = 40;
        let got = saturate(&mut l, n, wire);
        let want: Vec<u64> = (1..=n)
            .map(|k| t.opportunity_ns((k * wire).div_ceil(OPPORTUNITY_BYTES) - 1))
            .collect();
        assert_eq!(got, want, "wire {wire}");
    }
}

#[test]
fn an_idle_link_wastes_its_opportunities() {
    let mut l = link("1\n2\n10\n");
    // A 500 B packet at 0 departs at 1 ms; 1000 B of that opportunity are left.
    let Offer::StartedTx(t) = l.offer(SimTime::ZERO, dgram(500, 0)) else {
        panic!("idle link")
    };
    assert_eq!(t.0, MS);
    // A packet queued behind it uses the leftover: it departs at 1 ms too.
    assert!(matches!(
        l.offer(SimTime(MS / 2), dgram(500, 1)),
        Offer::Accepted
    ));
    let d = l.tx_done(t);
    assert_eq!(d.next_tx_done, Some(SimTime(MS)));
    let d = l.tx_done(SimTime(MS));
    assert_eq!(d.next_tx_done, None);
    // The link is idle from 1 ms: the 500 B left of that opportunity are lost, and a packet
    // arriving exactly at 2 ms cannot use the opportunity due then (Mahimahi spends it
    // before enqueuing the packet): it waits for 10 ms.
    let Offer::StartedTx(t) = l.offer(SimTime(2 * MS), dgram(500, 2)) else {
        panic!("idle link")
    };
    assert_eq!(t.0, 10 * MS);
    l.tx_done(t);
    // Far into the run: cycle 100 of the 10 ms trace.
    let Offer::StartedTx(t) = l.offer(SimTime(1000 * MS + 123), dgram(1500, 3)) else {
        panic!("idle link")
    };
    assert_eq!(t.0, 1001 * MS);
}

#[test]
fn outages_hold_packets_until_the_next_opportunity() {
    // No opportunity between 3 and 2000 ms: a packet offered at 5 ms waits for 2000 ms,
    // then the trace repeats from 2001 ms.
    let mut l = link("1\n2\n3\n2000\n");
    let Offer::StartedTx(t) = l.offer(SimTime(5 * MS), dgram(1500, 0)) else {
        panic!("idle link")
    };
    assert_eq!(t.0, 2000 * MS);
    l.tx_done(t);
    let Offer::StartedTx(t) = l.offer(SimTime(2000 * MS), dgram(1500, 1)) else {
        panic!("idle link")
    };
    assert_eq!(t.0, 2001 * MS);
}
