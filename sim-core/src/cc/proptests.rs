//! One operation-sequence property test over every controller the factory builds:
//! NewReno and CUBIC, each with HyStart++ off and on (paced and unpaced), CUBIC with
//! emulated connections, with segment sizes equal to or larger than the datagram size.
//! Every case runs its operation sequence against **every** configuration of
//! [`configs`], each naming its controller (never the default, which has changed
//! before: the test stopped exercising NewReno when CUBIC became the default).
//!
//! The test plays the transport: it keeps the outstanding packets and bytes in flight
//! (RFC 9002 Appendix A/B call order: RTT sample, losses as one congestion event, then
//! persistent congestion, then each newly acknowledged packet) and feeds random sequences
//! of sends (cwnd-limited or app-limited), acknowledgements, losses, persistent
//! congestion, RTT samples and idle time. After every operation:
//! - bytes in flight equal the sum of the outstanding packets' sizes;
//! - the window is never below the controller's minimum window;
//! - an acknowledgement never shrinks the window, and one of an app-limited packet or of
//!   a packet sent before the recovery period started never grows it (RFC 9002 §7.8, B.5);
//! - a congestion event that starts a recovery period sets the window to
//!   `max(minimum, ⌊window · loss_reduction_factor⌋)` (RFC 9002 B.6 with 0.5, RFC 9438
//!   §4.6 with β); one within the current recovery period leaves it unchanged (B.6: at
//!   most one reduction per round trip); persistent congestion leaves exactly the
//!   minimum window (RFC 9002 §7.6.2);
//! - the state name is one of qlog's and agrees with `in_slow_start`;
//! - nothing panics.
//!
//! A model-based controller (one that takes rate samples, BBR) is also fed the
//! [`super::RateSampler`]'s sample after every acknowledgement, and its loss response is
//! BBR's (draft-cardwell-iccrg-bbr-congestion-control-00 §4.2.3.4) instead of a
//! multiplicative decrease: a congestion event that starts a recovery period sets the
//! window to bytes in flight plus one packet (its minimum window); its
//! `loss_reduction_factor` may be 1 (no reduction).

use super::{build, CcAlgorithm, CcParams, CongestionController, CubicFlavor};
use crate::time::{SimDuration, SimTime};
use crate::transport::rtt::RttEstimator;
use proptest::prelude::*;

/// Cases per test: `PROPTEST_CASES` (the suite sets 48), else 32, at most 256 (every case
/// runs all [`configs`]).
fn proptest_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32)
        .min(256)
}

/// Datagram size the sender uses.
const MDS: u64 = 1250;

/// Every controller configuration under test, with a label for failure messages: both
/// built-in controllers, each with HyStart++ off and on (paced and unpaced), and CUBIC
/// with emulated connections. Each names its algorithm explicitly.
fn configs(segment: Option<u64>, iw_segments: u64) -> Vec<(String, CcParams)> {
    let base = |algorithm: CcAlgorithm| CcParams {
        algorithm,
        cc_segment_size: segment,
        ..CcParams::default()
    };
    let with = |algorithm: CcAlgorithm, hystart: bool, pacing: bool| CcParams {
        hystart,
        pacing,
        ..base(algorithm)
    };
    // Every row of the controller table, HyStart++ off, on, and on unpaced.
    let mut all: Vec<(String, CcParams)> = Vec::new();
    for def in super::CONTROLLERS {
        let a = CcAlgorithm::Builtin(def);
        all.push((def.name.to_string(), with(a.clone(), false, true)));
        all.push((format!("{}+hystart", def.name), with(a.clone(), true, true)));
        all.push((
            format!("{}+hystart unpaced", def.name),
            with(a, true, false),
        ));
    }
    let specific = vec![
        // Chromium's N = 2 and a larger N, without fast convergence for variety.
        (
            "cubic N=2",
            CcParams {
                emulated_connections: 2,
                cubic_c: 0.400390625,
                ..base(CcAlgorithm::Cubic)
            },
        ),
        (
            "cubic N=5 no fast convergence +hystart",
            CcParams {
                emulated_connections: 5,
                fast_convergence: false,
                hystart: true,
                ..base(CcAlgorithm::Cubic)
            },
        ),
        // Linux's CUBIC (TCP's default), with Linux HyStart unpaced and without HyStart.
        (
            "cubic linux+hystart unpaced",
            CcParams {
                cubic_flavor: CubicFlavor::Linux,
                hystart: true,
                pacing: false,
                ..base(CcAlgorithm::Cubic)
            },
        ),
        (
            "cubic linux no fast convergence",
            CcParams {
                cubic_flavor: CubicFlavor::Linux,
                fast_convergence: false,
                ..base(CcAlgorithm::Cubic)
            },
        ),
    ];
    all.extend(specific.into_iter().map(|(l, p)| (l.to_string(), p)));
    for (_, p) in &mut all {
        // A controller starts at or above its minimum window (2 segments).
        p.initial_cwnd_bytes = Some(iw_segments.max(2) * p.segment_size(MDS));
    }
    all
}

#[test]
fn configs_cover_every_builtin_controller_with_and_without_hystart() {
    let all = configs(None, 10);
    let registry = super::ControllerRegistry::builtin();
    for name in registry.names() {
        let algorithm = registry.algorithm(name).expect("a built-in");
        for hystart in [false, true] {
            assert!(
                all.iter()
                    .any(|(_, p)| p.algorithm == algorithm && p.hystart == hystart),
                "{name} with hystart = {hystart} is not under test"
            );
        }
        // The built controller is the one named (not the default's).
        let (_, p) = all.iter().find(|(_, p)| p.algorithm == algorithm).unwrap();
        assert_eq!(build(p, MDS).name(), algorithm.name());
    }
}

/// One step of the transport.
#[derive(Clone, Debug)]
enum Op {
    /// Send a packet of this many bytes; `app_limited`: the sender was not
    /// congestion-window-limited (it may send even when the window is full: a probe).
    Send { bytes: u64, app_limited: bool },
    /// Acknowledge `count` outstanding packets from position `at` (modulo), with an RTT
    /// sample of `rtt_ms` taken first.
    Ack {
        at: usize,
        count: usize,
        rtt_ms: u64,
    },
    /// Declare `count` outstanding packets from `at` lost (one congestion event).
    Loss { at: usize, count: usize },
    /// Declare every outstanding packet lost and persistent congestion.
    Persistent,
    /// An RTT sample without acknowledged in-flight packets (e.g. an ACK-only packet's).
    Rtt { rtt_ms: u64 },
    /// Time passes.
    Idle { ms: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u64..=1500, any::<bool>()).prop_map(|(bytes, app_limited)| Op::Send { bytes, app_limited }),
        5 => (0usize..64, 1usize..6, 1u64..400).prop_map(|(at, count, rtt_ms)| Op::Ack { at, count, rtt_ms }),
        1 => (0usize..64, 1usize..4).prop_map(|(at, count)| Op::Loss { at, count }),
        1 => Just(Op::Persistent),
        1 => (1u64..400).prop_map(|rtt_ms| Op::Rtt { rtt_ms }),
        2 => (0u64..2000).prop_map(|ms| Op::Idle { ms }),
    ]
}

/// A packet the test's transport has in flight.
#[derive(Clone, Copy, Debug)]
struct Outstanding {
    id: u64,
    sent: SimTime,
    bytes: u64,
    app_limited: bool,
}

/// Removes `count` packets from position `at` (modulo the length), in send order.
fn take(out: &mut Vec<Outstanding>, at: usize, count: usize) -> Vec<Outstanding> {
    if out.is_empty() {
        return Vec::new();
    }
    let start = at % out.len();
    let end = (start + count).min(out.len());
    out.drain(start..end).collect()
}

fn check_state(
    label: &str,
    cc: &dyn CongestionController,
    out: &[Outstanding],
    in_flight: u64,
) -> Result<(), TestCaseError> {
    let sum: u64 = out.iter().map(|p| p.bytes).sum();
    prop_assert_eq!(
        in_flight,
        sum,
        "{}: bytes in flight = outstanding packets",
        label
    );
    prop_assert!(
        cc.window() >= cc.minimum_window(),
        "{}: window {} below the minimum {}",
        label,
        cc.window(),
        cc.minimum_window()
    );
    let state = cc.state_name();
    prop_assert!(
        ["slow_start", "congestion_avoidance", "recovery"].contains(&state),
        "{label}: {state}"
    );
    if state == "slow_start" {
        prop_assert!(cc.in_slow_start(), "{label}");
    }
    if state == "congestion_avoidance" {
        prop_assert!(!cc.in_slow_start(), "{label}");
    }
    let f = cc.loss_reduction_factor();
    if cc.wants_rate_samples() {
        prop_assert!(f > 0.0 && f <= 1.0, "{label}: {f}");
    } else {
        prop_assert!(f > 0.0 && f < 1.0, "{label}: {f}");
    }
    Ok(())
}

/// Plays `ops` against the controller built from `p`, checking the invariants of the
/// module documentation after every operation.
fn play(label: &str, p: &CcParams, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut cc = build(p, MDS);
    let mut rtt = RttEstimator::new(SimDuration::from_millis(100));
    let mut out: Vec<Outstanding> = Vec::new();
    let mut in_flight = 0u64;
    let mut now = SimTime::ZERO;
    let mut sampler = cc.wants_rate_samples().then(super::RateSampler::new);
    let mut next_id = 0u64;
    check_state(label, cc.as_ref(), &out, in_flight)?;
    for op in ops {
        // Every operation takes a little time, so send times are distinct.
        now += SimDuration::from_micros(100);
        match *op {
            Op::Send { bytes, app_limited } => {
                if let Some(s) = sampler.as_mut() {
                    s.on_packet_sent(next_id, now, bytes, in_flight, app_limited);
                }
                in_flight += bytes;
                out.push(Outstanding {
                    id: next_id,
                    sent: now,
                    bytes,
                    app_limited,
                });
                next_id += 1;
                cc.on_packet_sent(now, bytes, in_flight);
            }
            Op::Ack { at, count, rtt_ms } => {
                let acked = take(&mut out, at, count);
                if acked.is_empty() {
                    continue;
                }
                rtt.update(
                    now,
                    SimDuration::from_millis(rtt_ms),
                    SimDuration::ZERO,
                    None,
                );
                let snap = rtt.snapshot();
                for pkt in acked {
                    in_flight -= pkt.bytes;
                    let before = cc.window();
                    let frozen = pkt.app_limited || cc.in_recovery(pkt.sent);
                    cc.on_packet_acked(now, pkt.sent, pkt.bytes, pkt.app_limited, &snap);
                    prop_assert!(cc.window() >= before, "{label}: an ACK shrank the window");
                    if frozen {
                        prop_assert_eq!(cc.window(), before, "{}: growth on a frozen ACK", label);
                    }
                    if let Some(s) = sampler.as_mut() {
                        s.on_packet_acked(pkt.id, now);
                    }
                }
                if let Some(s) = sampler.as_mut() {
                    let rs = s.generate(snap.min_rtt, in_flight);
                    cc.on_rate_sample(now, &rs, &snap);
                }
            }
            Op::Loss { at, count } => {
                let lost = take(&mut out, at, count);
                let Some(newest) = lost.iter().map(|p| p.sent).max() else {
                    continue;
                };
                in_flight -= lost.iter().map(|p| p.bytes).sum::<u64>();
                if let Some(s) = sampler.as_mut() {
                    for p in &lost {
                        s.on_packet_lost(p.id);
                    }
                }
                let before = cc.window();
                let in_period = cc.in_recovery(newest);
                cc.on_congestion_event(now, newest, in_flight);
                if in_period {
                    prop_assert_eq!(
                        cc.window(),
                        before,
                        "{}: a second reduction in one recovery period",
                        label
                    );
                } else if cc.wants_rate_samples() {
                    // BBRv1: packet conservation from the flight left. BBRv3
                    // (draft-ietf-ccwg-bbr §5.6.4.4 OnEnterFastRecovery) only saves the
                    // window: its model answers the loss on the following ACKs.
                    let want = if cc.name() == "bbr1" {
                        in_flight + cc.minimum_window()
                    } else {
                        before
                    };
                    prop_assert_eq!(cc.window(), want, "{}: entering recovery", label);
                } else {
                    let f = cc.loss_reduction_factor();
                    // Linux's CUBIC reduces whole segments (cubictcp_recalc_ssthresh:
                    // snd_cwnd in packets · β / 1024).
                    let want = if cc.flavor() == Some("linux") {
                        let seg = cc.minimum_window() / 2;
                        ((before / seg) * 717 / 1024).max(2) * seg
                    } else {
                        (before as f64 * f) as u64
                    }
                    .max(cc.minimum_window());
                    prop_assert!(
                        cc.window().abs_diff(want) <= 1,
                        "{}: a congestion event took the window from {} to {}, not max(minimum {}, {} x {} = {})",
                        label,
                        before,
                        cc.window(),
                        cc.minimum_window(),
                        before,
                        f,
                        want
                    );
                }
                prop_assert!(
                    cc.in_recovery(newest),
                    "{}: a congestion event starts or extends a recovery period",
                    label
                );
            }
            Op::Persistent => {
                let lost: Vec<Outstanding> = std::mem::take(&mut out);
                if let Some(s) = sampler.as_mut() {
                    for p in &lost {
                        s.on_packet_lost(p.id);
                    }
                }
                in_flight = 0;
                if let Some(newest) = lost.iter().map(|p| p.sent).max() {
                    cc.on_congestion_event(now, newest, in_flight);
                }
                cc.on_persistent_congestion(now);
                rtt.on_persistent_congestion();
                prop_assert_eq!(cc.window(), cc.minimum_window(), "{}", label);
            }
            Op::Rtt { rtt_ms } => {
                rtt.update(
                    now,
                    SimDuration::from_millis(rtt_ms),
                    SimDuration::ZERO,
                    None,
                );
            }
            Op::Idle { ms } => {
                now += SimDuration::from_millis(ms);
            }
        }
        check_state(label, cc.as_ref(), &out, in_flight)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(proptest_cases())
    })]

    #[test]
    fn every_controller_keeps_its_invariants(
        segment in prop_oneof![Just(None), Just(Some(1460u64)), Just(Some(600u64))],
        iw_segments in 1u64..40,
        ops in proptest::collection::vec(op(), 0..400),
    ) {
        for (label, p) in configs(segment, iw_segments) {
            play(&label, &p, &ops)?;
        }
    }
}
