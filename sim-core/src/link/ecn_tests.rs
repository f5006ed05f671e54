//! A marking queue ([`crate::config::ecn`]) marks ECN-capable packets CE instead of
//! dropping them, and drops the others where it would have marked them.

use super::{Link, Offer};
use crate::config::{EcnMarking, LinkConfig, QueueLevel};
use crate::metrics::DropReason;
use crate::packet::{Addr, Datagram, Ecn, Payload};
use crate::time::{SimDuration, SimTime};
use crate::units::Rate;

/// 1000-byte wire packets (972 + 28 B overhead) on a 8 Mbit/s link: 1 ms each.
fn dgram(ecn: Ecn, tag: u64) -> Datagram {
    let a = Addr { ip: 1, port: 1 };
    let mut d = Datagram::new(a, a, 972, 0, Payload::Raw { tag });
    d.ecn = ecn;
    d
}

fn link(ecn: Option<EcnMarking>) -> Link {
    let cfg = LinkConfig {
        ecn,
        ..LinkConfig::new(Rate(8_000_000), SimDuration::ZERO)
    };
    Link::new("l", 0, 1, &cfg, 7)
}

/// Offers `n` packets at time 0 (one serializing, the rest queued); returns what each
/// offer became and the codepoints of the packets that arrive, in order.
fn burst(l: &mut Link, n: u64, ecn: Ecn) -> (Vec<Option<DropReason>>, Vec<Ecn>) {
    let mut offers = Vec::new();
    let mut next = None;
    for i in 0..n {
        match l.offer(SimTime::ZERO, dgram(ecn, i)) {
            Offer::StartedTx(t) => {
                next = Some(t);
                offers.push(None)
            }
            Offer::Accepted => offers.push(None),
            Offer::Dropped(r, _) => offers.push(Some(r)),
        }
    }
    let mut out = Vec::new();
    while let Some(t) = next {
        let done = l.tx_done(t);
        out.push(l.arrive().ecn);
        next = done.next_tx_done;
    }
    (offers, out)
}

#[test]
fn step_marks_ect_and_drops_not_ect_above_the_threshold() {
    // Threshold 3 ms = 3000 bytes at 8 Mbit/s: packets 0 (serializer), 1, 2, 3 find 0,
    // 0, 1000, 2000 bytes waiting; packets 4.. find >= 3000.
    for threshold in [
        QueueLevel::Delay(SimDuration::from_millis(3)),
        QueueLevel::Bytes(3000),
    ] {
        let step = Some(EcnMarking::Step { threshold });
        let mut l = link(step);
        let (offers, arrived) = burst(&mut l, 10, Ecn::Ect0);
        assert!(offers.iter().all(Option::is_none), "ECT: nothing dropped");
        let want: Vec<Ecn> = (0..10)
            .map(|i| if i >= 4 { Ecn::Ce } else { Ecn::Ect0 })
            .collect();
        assert_eq!(arrived, want);
        let r = l.finish_report();
        assert_eq!(r.ecn_marked, Some(6));
        assert_eq!(r.drops.total(), 0);

        let mut l = link(step);
        let (offers, arrived) = burst(&mut l, 10, Ecn::NotEct);
        let dropped = offers
            .iter()
            .filter(|o| **o == Some(DropReason::Aqm))
            .count();
        // Not ECT: the queue holds at most 3000 bytes, so packets 4.. are dropped
        // (the queue stays at 3000 bytes: 3 waiting).
        assert_eq!(dropped, 6);
        assert_eq!(arrived, vec![Ecn::NotEct; 4]);
        let r = l.finish_report();
        assert_eq!(r.ecn_marked, Some(0));
        assert_eq!(r.drops.aqm, 6);
    }
}

#[test]
fn without_marking_nothing_is_marked_or_reported() {
    let mut l = link(None);
    let (offers, arrived) = burst(&mut l, 10, Ecn::Ect0);
    assert!(offers.iter().all(Option::is_none));
    assert_eq!(arrived, vec![Ecn::Ect0; 10]);
    let r = l.finish_report();
    assert_eq!(r.ecn_marked, None);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("ecn") && !json.contains("aqm"), "{json}");
}

#[test]
fn red_marks_more_as_the_average_grows() {
    // min 2000 B, max 20000 B, max_p 1, weight 1 (the average is the backlog): packets
    // finding <2000 B are never marked, >= 20000 B always; in between, some.
    let red = Some(EcnMarking::Red {
        min: QueueLevel::Bytes(2000),
        max: QueueLevel::Bytes(20_000),
        max_p: 1.0,
        weight: 1.0,
    });
    let mut l = link(red);
    let (offers, arrived) = burst(&mut l, 40, Ecn::Ect1);
    assert!(offers.iter().all(Option::is_none));
    // Packet i (i >= 1) finds (i - 1) * 1000 bytes waiting.
    assert!(arrived[..3].iter().all(|&e| e == Ecn::Ect1));
    assert!(arrived[21..].iter().all(|&e| e == Ecn::Ce));
    let between = arrived[3..21].iter().filter(|&&e| e == Ecn::Ce).count();
    assert!(between > 0 && between < 18, "{between}");
    // Deterministic: the same seed marks the same packets.
    let mut again = link(red);
    assert_eq!(burst(&mut again, 40, Ecn::Ect1).1, arrived);
}
