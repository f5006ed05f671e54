//! Allocations per simulated packet in a bulk transfer's steady state (issue 14: "no
//! allocation per packet in steady state").
//!
//! A counting global allocator (this file is its own test binary, so the count sees only
//! what this test runs) counts the allocations of a longer and a shorter bulk transfer of
//! each transport; the difference per extra packet is what the steady state costs: the
//! set-up, handshake and teardown cancel out.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: delegates to the system allocator; the counter is only a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A bulk transfer of `bytes` over `transport` on a 100 Mbit/s, 20 ms path with a 1-BDP
/// drop-tail queue (losses only from the queue), series and qlog off. TCP without HyStart:
/// Linux HyStart (the preset's) leaves slow start before the queue overflows and the
/// window then keeps growing through the shorter transfer, so buffers would still be
/// growing when it ends.
fn scenario(transport: &str, bytes: &str) -> sim_core::config::Config {
    let extra = if transport == "tcp" {
        "hystart = false"
    } else {
        ""
    };
    let text = format!(
        r#"
name = "alloc-per-packet"
[topology]
kind = "two_hosts"
link = {{ rate = "100Mbps", delay = "20ms", queue = "1BDP" }}
[sim]
time_limit = "600s"
[[flows]]
transport = "{transport}"
workload = {{ kind = "bulk", bytes = "{bytes}" }}
{extra}
"#
    );
    sim_core::scenario::parse_str(&text)
        .expect("valid scenario")
        .base
}

/// (allocations, packets sent) of one run.
fn count(cfg: &sim_core::config::Config) -> (u64, u64) {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let r = sim_core::run(cfg, 1).expect("runs");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    let packets: u64 = r.flows.iter().map(|f| f.packets_sent).sum();
    drop(r);
    (after - before, packets)
}

/// Allocations per extra packet between an 8 MB and a 32 MB transfer: both reach the
/// window's sawtooth (the 1-BDP queue overflows in slow start), so pools and buffers have
/// grown to what is in flight before the shorter one ends.
fn per_packet(transport: &str) -> f64 {
    let (a_short, p_short) = count(&scenario(transport, "8MB"));
    let (a_long, p_long) = count(&scenario(transport, "32MB"));
    assert!(
        p_long > p_short + 1000,
        "{transport}: {p_short} -> {p_long} packets"
    );
    let per = (a_long as f64 - a_short as f64) / (p_long - p_short) as f64;
    eprintln!(
        "{transport}: {a_short} allocations / {p_short} packets, {a_long} / {p_long}: \
         {per:.3} per extra packet"
    );
    per
}

/// Steady state allows no allocation per packet; 0.01 per packet leaves room for the odd
/// buffer that grows once more late in a run (0.001 for QUIC, 0 for TCP and SCTP when
/// written).
const MAX_PER_PACKET: f64 = 0.01;

#[test]
fn no_allocation_per_packet_in_steady_state() {
    // Before session 8: QUIC 3.2 per packet (the payload box, the ACK frame's range vector
    // and its copy in the recovery record, buffers dropped with refused packets), TCP about
    // 1.9 (the payload box, the SACK scratch list), SCTP about 2.8 (the payload box, the
    // chunk vector, the per-SACK lists of acknowledged chunks and touched streams).
    for transport in ["quic", "tcp", "sctp"] {
        let per = per_packet(transport);
        assert!(
            per <= MAX_PER_PACKET,
            "{transport}: {per:.3} allocations per packet"
        );
    }
}
