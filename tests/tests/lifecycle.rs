//! Connection lifecycle (`quic_connections`, `docs/lifecycle.md`): 0-RTT resumption
//! against an analytic model, lost 0-RTT data, idle timeout, explicit close, validation
//! rules, and properties over random connection sequences.
//!
//! The lossless 1-RTT transfer model is the one `quic_validation.rs` checks
//! (`quicsim_tests::model`, `tests/src/model.rs`; derivation in `docs/validation.md` §1),
//! extended with the resumed handshake ([`model::transfer_resumed`]). No constant is
//! fitted to simulation output; the tolerance is the core issue's
//! `max(1 %, 2 bottleneck packet times)`.

use quicsim_tests::model::{self, transfer, transfer_resumed, Params, Resumption};
use quicsim_tests::support::{params, quic_metrics, tolerance, MS};
use sim_core::config::workload::{CloseMode, ConnectionSpec};
use sim_core::config::{Config, FlowConfig, LinkChange, LinkConfig, LossModel, SequenceSpec};
use sim_core::metrics::workload::{ConnectionReport, ConnectionStatus};
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::quic::QuicConfig;
use sim_core::units::Rate;
use sim_core::{SimDuration, SimTime};

/// The `QuicConfig` the models assume: defaults, no pacing (the ACK-clocked model of
/// `docs/validation.md` §1 has none), windows that never limit.
fn model_quic(token: bool) -> QuicConfig {
    let mut q = QuicConfig {
        stream_window: 1 << 40,
        address_token_size: if token { 64 } else { 0 },
        ..QuicConfig::default()
    };
    q.cc.pacing = false;
    q
}

fn link(rate: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(Rate(rate), SimDuration::from_millis(delay_ms))
}

fn spec(bytes: u64) -> ConnectionSpec {
    ConnectionSpec::new(bytes)
}

/// A `two_hosts` run of one `quic_connections` flow.
fn run_connections(
    q: QuicConfig,
    specs: Vec<ConnectionSpec>,
    forward: LinkConfig,
    reverse: LinkConfig,
    seed: u64,
) -> RunResult {
    let flow = FlowConfig::quic_sequence(q, SequenceSpec::new(specs));
    let mut cfg = Config::two_hosts(forward, reverse, vec![flow]);
    cfg.sim.time_limit = SimDuration::from_secs(10_000);
    cfg.sim.max_events = 200_000_000;
    sim_core::run(&cfg, seed).expect("valid config")
}

fn ns(s: Option<f64>) -> u64 {
    (s.expect("time") * 1e9).round() as u64
}

/// A warm-up connection (10 kB, closed explicitly) then the measured one, resumed with
/// the warm-up's ticket 100 ms after it closed. Returns the measured connection's
/// client report.
fn resumed_transfer(q: &QuicConfig, p: &Params) -> ConnectionReport {
    let warm = spec(10_000);
    let mut target = spec(p.bytes);
    target.gap = Some(SimDuration::from_millis(100));
    let r = run_connections(
        q.clone(),
        vec![warm, target],
        link(p.up_rate, p.up_delay / MS),
        link(p.down_rate, p.down_delay / MS),
        1,
    );
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic_metrics(&r, 0, "client").workload.connections[1].clone();
    assert_eq!(c.status, ConnectionStatus::Completed);
    assert!(c.resumed && c.ticket, "{c:?}");
    c
}

const GRID: &[(u64, u64, u64)] = &[
    (10_000_000, 20, 10_000),
    (10_000_000, 100, 100_000),
    (100_000_000, 20, 10_000),
    (100_000_000, 40, 100_000),
    (100_000_000, 100, 1_000_000),
    (1_000_000_000, 50, 1_000_000),
    (20_000_000, 300, 2_000_000),
];

#[test]
fn resumed_completion_matches_the_resumption_model() {
    for token in [true, false] {
        for &(rate, rtt_ms, bytes) in GRID {
            let p = params(rate, rtt_ms / 2, bytes);
            let q = model_quic(token);
            let r = Resumption {
                server_flight: q.resumption_server_handshake_size,
                token,
            };
            let m = transfer_resumed(&p, &r);
            let c = resumed_transfer(&q, &p);
            assert_eq!(c.zero_rtt_accepted, Some(true));
            assert_eq!(c.token, token);
            let sim = ns(c.metrics.transport().completion_secs);
            let fb = ns(c.metrics.transport().time_to_first_byte_secs);
            let tol = tolerance(&p, m.completion);
            eprintln!(
                "token {token:5} {:>5} Mbit/s {:>4} ms {:>8} B: model {:>10.6} s sim {:>10.6} s diff {:>+8.3} ms (tol {:.3} ms); first byte model {:.6} sim {:.6}",
                rate / 1_000_000,
                rtt_ms,
                bytes,
                m.completion as f64 / 1e9,
                sim as f64 / 1e9,
                (sim as f64 - m.completion as f64) / 1e6,
                tol as f64 / 1e6,
                m.first_byte as f64 / 1e9,
                fb as f64 / 1e9,
            );
            assert!(
                sim.abs_diff(m.completion) <= tol,
                "token {token}, {rate} bit/s, {rtt_ms} ms, {bytes} B: sim {sim} vs model {}",
                m.completion
            );
            // First byte: 1 RTT plus serialization (the request rides in 0-RTT).
            assert!(
                fb.abs_diff(m.first_byte) <= tolerance(&p, m.first_byte),
                "{fb}"
            );
        }
    }
}

#[test]
fn resumption_saves_one_round_trip_over_the_one_rtt_model() {
    // The 1-RTT model minus one round trip: data starts when the 0-RTT request reaches
    // the server (t₁) instead of when the client's Finished + request does (t₃).
    for &(rate, rtt_ms, bytes) in GRID {
        let p = params(rate, rtt_ms / 2, bytes);
        // Both models assume the ClientHello fits in the client's first datagram.
        assert!(p.client_hello < 1_100);
        let one = transfer(&p);
        let t1 = model::tx(p.up_rate, p.overhead, 1200) + p.up_delay;
        let predicted = one.completion - (one.data_start - t1);
        let c = resumed_transfer(&model_quic(true), &p);
        let sim = ns(c.metrics.transport().completion_secs);
        let tol = tolerance(&p, predicted);
        eprintln!(
            "{:>5} Mbit/s {:>4} ms {:>8} B: 1-RTT model {:.6} s, minus one round trip {:.6} s, resumed sim {:.6} s, diff {:+.3} ms (tol {:.3} ms)",
            rate / 1_000_000,
            rtt_ms,
            bytes,
            one.completion as f64 / 1e9,
            predicted as f64 / 1e9,
            sim as f64 / 1e9,
            (sim as f64 - predicted as f64) / 1e6,
            tol as f64 / 1e6
        );
        assert!(sim.abs_diff(predicted) <= tol, "{sim} vs {predicted}");
    }
}

// ---------------------------------------------------------------------------------------
// Lost and rejected 0-RTT data.

/// Warm-up at 0, then a resumed connection at 1 s whose request spans several 0-RTT
/// packets; the forward link drops the `offset`-th packet it judges after 1 s
/// (offset 0: the client's first datagram, Initial + 0-RTT).
fn lost_zero_rtt_run(offset: u64, reject: bool) -> (RunResult, ConnectionReport, ConnectionReport) {
    let q = QuicConfig {
        reject_zero_rtt: reject,
        ..QuicConfig::default()
    };
    let warm = spec(20_000);
    let mut target = spec(300_000);
    target.start = Some(SimTime(1_000_000_000));
    target.streams = 3;
    target.request_size = 1_500;
    let mut forward = link(20_000_000, 20);
    forward.changes = vec![LinkChange {
        at: SimTime(1_000_000_000),
        rate: None,
        delay: None,
        loss: Some(LossModel::Periodic(sim_core::config::loss::Periodic {
            every: 1_000_000,
            offset,
        })),
        corruption: None,
    }];
    let r = run_connections(q, vec![warm, target], forward, link(20_000_000, 20), 3);
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic_metrics(&r, 0, "client").workload.connections[1].clone();
    let s = quic_metrics(&r, 0, "server").workload.connections[1].clone();
    (r, c, s)
}

#[test]
fn lost_zero_rtt_data_is_delivered_exactly_once() {
    for offset in [0u64, 1, 2] {
        let (r, c, s) = lost_zero_rtt_run(offset, false);
        let fwd = r.links.iter().find(|l| l.name == "forward").unwrap();
        assert_eq!(fwd.drops.total(), 1, "offset {offset}");
        eprintln!(
            "offset {offset}: 0-RTT packets {} ({} stream bytes), retransmitted stream bytes {}, completion {:?}, server duplicate bytes {}",
            c.zero_rtt_packets,
            c.zero_rtt_stream_bytes,
            c.metrics.transport().stream_bytes_retransmitted,
            c.metrics.transport().completion_secs,
            s.metrics.transport().duplicate_stream_bytes
        );
        assert_eq!(c.status, ConnectionStatus::Completed);
        assert_eq!(c.zero_rtt_accepted, Some(true));
        assert!(
            c.zero_rtt_packets >= 2,
            "the request spans several 0-RTT packets"
        );
        // Exactly once: the server read each request byte once, the client each
        // response byte once.
        assert_eq!(s.metrics.transport().stream_bytes_read, 3 * 1_500);
        assert_eq!(c.metrics.transport().stream_bytes_read, 300_000);
        assert_eq!(
            s.metrics.workload().stream_completion_secs.len(),
            3,
            "three request streams"
        );
        assert!(c.metrics.transport().stream_bytes_retransmitted > 0);
        if offset > 0 {
            // The Initial got through: the lost 0-RTT data is sent again in 1-RTT
            // packets (no 0-RTT packet carries it a second time).
            assert_eq!(c.zero_rtt_stream_bytes, 3 * 1_500);
        }
    }
}

#[test]
fn rejected_zero_rtt_is_resent_in_one_rtt() {
    let (_, c, s) = lost_zero_rtt_run(1_000_000 - 1, true);
    assert_eq!(c.status, ConnectionStatus::Completed);
    assert!(c.resumed, "the ticket is accepted, 0-RTT is not");
    assert_eq!(c.zero_rtt_accepted, Some(false));
    assert_eq!(s.zero_rtt_accepted, Some(false));
    assert!(s.zero_rtt_packets_rejected >= 2);
    assert!(c.metrics.transport().stream_bytes_retransmitted >= 3 * 1_500);
    assert_eq!(s.metrics.transport().stream_bytes_read, 3 * 1_500);
    assert_eq!(c.metrics.transport().stream_bytes_read, 300_000);
    // No 0-RTT gain: the first byte comes after the handshake round trip.
    let accepted = lost_zero_rtt_run(1_000_000 - 1, false).1;
    let fb = c.metrics.transport().time_to_first_byte_secs.unwrap();
    let fb0 = accepted
        .metrics
        .transport()
        .time_to_first_byte_secs
        .unwrap();
    eprintln!("first byte: 0-RTT rejected {fb:.6} s, accepted {fb0:.6} s");
    assert!(fb > fb0 + 0.039, "{fb} vs {fb0}");
}

// ---------------------------------------------------------------------------------------
// Idle timeout and close.

#[test]
fn idle_timeout_fires_at_the_negotiated_time_after_the_last_activity() {
    for idle_ms in [1_000u64, 1] {
        let q = QuicConfig {
            idle_timeout: SimDuration::from_millis(idle_ms),
            ..QuicConfig::default()
        };
        let mut a = spec(50_000);
        a.close = CloseMode::Idle;
        let mut b = spec(50_000);
        b.gap = Some(SimDuration::from_millis(300));
        let r = run_connections(q, vec![a, b], link(10_000_000, 25), link(10_000_000, 25), 1);
        assert_eq!(r.status, RunStatus::Completed);
        for role in ["client", "server"] {
            let m = quic_metrics(&r, 0, role);
            let c = &m.workload.connections[0];
            assert_eq!(c.status, ConnectionStatus::Completed, "{role}");
            assert_eq!(c.close_reason.as_deref(), Some("idle_timeout"), "{role}");
            let waited = c.close_secs.unwrap() - c.last_activity_secs;
            eprintln!(
                "idle_timeout {idle_ms} ms, {role}: closed {waited:.9} s after the last activity (effective timeout {:.9} s)",
                c.idle_timeout_secs
            );
            // RFC 9000 §10.1: max(idle_timeout, 3 PTO), never earlier.
            assert!(c.idle_timeout_secs >= idle_ms as f64 / 1e3 - 1e-9);
            assert!((waited - c.idle_timeout_secs).abs() < 2e-9, "{role}");
            if idle_ms == 1 {
                // 3 PTO > 3 RTT = 150 ms here.
                assert!(c.idle_timeout_secs > 0.15, "{}", c.idle_timeout_secs);
            } else {
                assert!((c.idle_timeout_secs - 1.0).abs() < 1e-9);
            }
            // The second connection starts 300 ms after the client's idle close.
            if role == "client" {
                let next = m.workload.connections[1].start_secs.unwrap();
                assert!((next - c.close_secs.unwrap() - 0.3).abs() < 1e-9);
                assert_eq!(
                    m.workload.connections[1].close_reason.as_deref(),
                    Some("local_close")
                );
            }
        }
    }
}

#[test]
fn a_connection_with_traffic_never_times_out() {
    for loss in [0.0, 0.01] {
        // Idle timeout 1 ms: the effective 3 PTO is far below the transfer time (4 s).
        // NewReno keeps the queue (and so the PTO) short enough for that margin; CUBIC's
        // deeper queue at 2 Mbit/s stretches 3 PTO past half the transfer.
        let mut q = QuicConfig {
            idle_timeout: SimDuration::from_millis(1),
            ..QuicConfig::default()
        };
        q.cc.algorithm = sim_core::cc::CcAlgorithm::NewReno;
        let mut down = link(2_000_000, 20);
        down.loss = if loss > 0.0 {
            LossModel::Bernoulli(sim_core::config::loss::Bernoulli { p: loss })
        } else {
            LossModel::NONE
        };
        let r = run_connections(
            q.clone(),
            vec![spec(1_000_000), spec(200_000)],
            link(2_000_000, 20),
            down,
            5,
        );
        assert_eq!(r.status, RunStatus::Completed);
        let m = quic_metrics(&r, 0, "client");
        for c in &m.workload.connections {
            assert_eq!(c.status, ConnectionStatus::Completed);
            assert_eq!(c.close_reason.as_deref(), Some("local_close"));
            assert!(c.metrics.transport().completion_secs.unwrap() > 2.0 * c.idle_timeout_secs);
        }
        let s = quic_metrics(&r, 0, "server");
        assert!(s
            .workload
            .connections
            .iter()
            .all(|c| c.close_reason.as_deref() == Some("peer_close")));
    }
}

#[test]
fn history_samples_at_resumption_and_close() {
    let q = QuicConfig::default();
    let mut a = spec(100_000);
    a.close = CloseMode::Idle;
    let b = spec(100_000);
    let mut c = spec(100_000);
    c.resume = false;
    let r = run_connections(
        q,
        vec![a, b, c],
        link(20_000_000, 20),
        link(20_000_000, 20),
        1,
    );
    let s = quic_metrics(&r, 0, "server");
    let events: Vec<(String, u64)> = s
        .workload
        .history
        .iter()
        .map(|h| (format!("{:?}", h.event), h.connection))
        .collect();
    assert_eq!(
        events,
        vec![
            ("IdleClose".to_string(), 0),
            ("ResumptionComplete".to_string(), 1),
            ("ExplicitClose".to_string(), 1),
            ("ExplicitClose".to_string(), 2),
        ]
    );
    let m = quic_metrics(&r, 0, "client");
    assert!(!m.workload.connections[0].resumed && m.workload.connections[1].resumed);
    assert!(
        !m.workload.connections[2].resumed && !m.workload.connections[2].ticket,
        "resume = false"
    );
}

// ---------------------------------------------------------------------------------------
// Properties over random connection sequences.

use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Conn {
    resume: bool,
    gap_ms: u64,
    bytes: u64,
    streams: u64,
    idle: bool,
}

fn conn_strategy() -> impl Strategy<Value = Conn> {
    (
        any::<bool>(),
        0u64..400,
        0u64..150_000,
        1u64..4,
        any::<bool>(),
    )
        .prop_map(|(resume, gap_ms, bytes, streams, idle)| Conn {
            resume,
            gap_ms,
            bytes,
            streams,
            idle,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    /// Every connection ends with a status, and every byte of every connection (requests
    /// and responses) is delivered exactly once and in order (read by the application,
    /// which reads in order only).
    #[test]
    fn every_connection_ends_and_delivers_every_byte_once(
        conns in prop::collection::vec(conn_strategy(), 1..5),
        loss in prop_oneof![Just(0.0), 0.0f64..0.05],
        token in any::<bool>(),
        reject in any::<bool>(),
        seed in 0u64..1_000,
    ) {
        let q = QuicConfig {
            idle_timeout: SimDuration::from_secs(2),
            address_token_size: if token { 64 } else { 0 },
            reject_zero_rtt: reject,
            ..QuicConfig::default()
        };
        let specs: Vec<ConnectionSpec> = conns
            .iter()
            .map(|c| {
                let mut s = spec(c.bytes);
                s.resume = c.resume;
                s.gap = Some(SimDuration::from_millis(c.gap_ms));
                s.streams = c.streams;
                s.close = if c.idle { CloseMode::Idle } else { CloseMode::Explicit };
                s
            })
            .collect();
        let mut fwd = link(20_000_000, 15);
        let mut rev = link(20_000_000, 15);
        fwd.loss = LossModel::Bernoulli(sim_core::config::loss::Bernoulli { p: loss });
        rev.loss = LossModel::Bernoulli(sim_core::config::loss::Bernoulli { p: loss });
        let r = run_connections(q.clone(), specs.clone(), fwd, rev, seed);
        prop_assert_eq!(r.status, RunStatus::Completed);
        let client = quic_metrics(&r, 0, "client");
        let server = quic_metrics(&r, 0, "server");
        prop_assert_eq!(client.workload.connections.len(), specs.len());
        prop_assert_eq!(server.workload.connections.len(), specs.len());
        let mut had_ticket = false;
        for (k, (c, s)) in client.workload.connections.iter().zip(&server.workload.connections).enumerate() {
            let sp = &specs[k];
            prop_assert_eq!(c.status, ConnectionStatus::Completed, "client {}", k);
            prop_assert!(c.close_reason.is_some(), "client {} has no close", k);
            prop_assert!(s.close_reason.is_some(), "server {} has no close", k);
            prop_assert!(
                matches!(s.status, ConnectionStatus::Completed | ConnectionStatus::Failed),
                "server {} {:?}", k, s.status
            );
            prop_assert_eq!(c.metrics.transport().stream_bytes_read, sp.bytes, "client {}", k);
            prop_assert_eq!(s.metrics.transport().stream_bytes_read, sp.streams * sp.request_size, "server {}", k);
            // Resumed exactly when asked and a ticket was available.
            prop_assert_eq!(c.ticket, sp.resume && had_ticket, "ticket {}", k);
            prop_assert_eq!(c.resumed, c.ticket, "resumed {}", k);
            if c.ticket {
                prop_assert_eq!(c.zero_rtt_accepted, Some(!reject));
                prop_assert_eq!(c.token, token);
            }
            had_ticket |= c.metrics.quic().unwrap().quic.handshake_confirmed_secs.is_some();
        }
        // Packet conservation for the flow.
        let f = &r.flows[0];
        prop_assert_eq!(f.packets_sent, f.packets_delivered + f.drops.total() + f.in_network);
    }
}

// ---------------------------------------------------------------------------------------
// Scenario keys and validation rules (one test per rule).

fn parse(extra: &str) -> Result<Config, sim_core::validate::ConfigError> {
    let text = format!(
        "[topology]\nkind = \"two_hosts\"\n\n[[flows]]\nkind = \"quic_connections\"\n{extra}"
    );
    sim_core::scenario::parse_str(&text).map(|s| s.base)
}

fn err_field(extra: &str) -> String {
    parse(extra).expect_err("invalid").field
}

#[test]
fn scenario_keys_resolve_with_flow_defaults() {
    let cfg = parse(
        "bytes = \"50KB\"\nstreams = 2\nidle_timeout = \"3s\"\nreject_zero_rtt = true\n\
         [[flows.connections]]\n\
         [[flows.connections]]\ngap = \"1s\"\nbytes = 1000\nclose = \"idle\"\nresume = false\n\
         [[flows.connections]]\nstart = \"10s\"\nrequest_size = \"1KB\"\n",
    )
    .expect("valid");
    let connections = &cfg.flows[0].sequence().expect("kind").connections;
    let quic = &cfg.flows[0].quic().expect("kind").client;
    assert!(quic.reject_zero_rtt);
    assert_eq!(quic.idle_timeout, SimDuration::from_secs(3));
    assert_eq!(connections.len(), 3);
    assert_eq!((connections[0].bytes, connections[0].streams), (50_000, 2));
    assert_eq!(connections[1].gap, Some(SimDuration::from_secs(1)));
    assert_eq!(connections[1].close, CloseMode::Idle);
    assert!(!connections[1].resume && connections[0].resume);
    assert_eq!(connections[2].start, Some(SimTime(10_000_000_000)));
    assert_eq!(connections[2].request_size, 1_000);
    // Round trip through the resolved form.
    let text = sim_core::scenario::to_toml(&cfg).expect("toml");
    let back = sim_core::scenario::parse_str(&text).expect("parses").base;
    assert_eq!(back, cfg);
}

#[test]
fn rule_at_least_one_connection() {
    assert_eq!(err_field(""), "flows[0].connections");
}

#[test]
fn rule_streams_at_least_one() {
    assert_eq!(
        err_field("[[flows.connections]]\nstreams = 0\n"),
        "flows[0].connections[0].streams"
    );
}

#[test]
fn rule_start_or_gap_not_both() {
    assert_eq!(
        err_field("[[flows.connections]]\n[[flows.connections]]\nstart = \"1s\"\ngap = \"1s\"\n"),
        "flows[0].connections[1].gap"
    );
}

#[test]
fn rule_start_times_do_not_go_back() {
    assert_eq!(
        err_field("[[flows.connections]]\nstart = \"2s\"\n[[flows.connections]]\nstart = \"1s\"\n"),
        "flows[0].connections[1].start"
    );
}

#[test]
fn rule_unknown_connection_key() {
    assert_eq!(
        err_field("[[flows.connections]]\nbyts = 1\n"),
        "flows[0].connections[0].byts"
    );
}

#[test]
fn rule_close_mode() {
    assert_eq!(
        err_field("[[flows.connections]]\nclose = \"never\"\n"),
        "flows[0].connections[0].close"
    );
}

#[test]
fn rule_sizes_fit_toml_integers() {
    let q = QuicConfig::default();
    let mut s = spec(u64::MAX);
    s.streams = 1;
    let flow = FlowConfig::quic_sequence(q, SequenceSpec::new(vec![s]));
    let cfg = Config::two_hosts(link(1_000_000, 1), link(1_000_000, 1), vec![flow]);
    assert_eq!(
        cfg.validate().expect_err("too large").field,
        "flows[0].connections[0].bytes"
    );
}

#[test]
fn rule_resumption_sizes() {
    assert_eq!(
        err_field("resumption_client_hello_size = 0\n[[flows.connections]]\n"),
        "flows[0].resumption_client_hello_size"
    );
    assert_eq!(
        err_field("resumption_server_handshake_size = 0\n[[flows.connections]]\n"),
        "flows[0].resumption_server_handshake_size"
    );
}

#[test]
fn rule_address_token_size() {
    assert_eq!(
        err_field("address_token_size = 1000\n[[flows.connections]]\n"),
        "flows[0].address_token_size"
    );
}

#[test]
fn example_scenario_reports_every_connection() {
    let text = include_str!("../../scenarios/examples/connection-lifecycle.toml");
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, cfg.seed).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic_metrics(&r, 0, "client");
    let reasons: Vec<Option<&str>> = c
        .workload
        .connections
        .iter()
        .map(|c| c.close_reason.as_deref())
        .collect();
    assert_eq!(
        reasons,
        vec![
            Some("local_close"),
            Some("idle_timeout"),
            Some("local_close")
        ]
    );
    assert!(c
        .workload
        .connections
        .iter()
        .all(|c| c.status == ConnectionStatus::Completed));
    assert!(!c.workload.connections[0].resumed && c.workload.connections[2].resumed);
    assert_eq!(c.workload.connections[2].zero_rtt_accepted, Some(true));
}

#[test]
fn a_connection_on_a_new_network_uses_the_new_address() {
    // Handover to a slower network with a new IP address between connections 0 and 1:
    // connection 1 starts from the new address; its ticket still resumes the session
    // (0-RTT), but the address-validation token was issued to the old address, so the
    // server does not count the new one as validated (RFC 9000 §8.1.3).
    let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "50Mbps", delay = "10ms" }

[[topology.handovers]]
at = "1s"
address = "ip"
link = { rate = "10Mbps", delay = "30ms" }

[[flows]]
kind = "quic_connections"

[[flows.connections]]
bytes = "100KB"

[[flows.connections]]
start = "2s"
bytes = "100KB"
"#;
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, 1).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic_metrics(&r, 0, "client");
    let s = quic_metrics(&r, 0, "server");
    assert_eq!(c.workload.connections[0].local, "10.0.0.1:10000");
    assert_eq!(c.workload.connections[1].local, "10.0.0.2:10000");
    assert!(c.workload.connections[1].resumed);
    assert_eq!(c.workload.connections[1].zero_rtt_accepted, Some(true));
    assert!(
        c.workload.connections[1].token,
        "the client sends its token"
    );
    assert!(
        !s.workload.connections[1].token,
        "but it is not valid from the new address"
    );
    // The new path's RTT (60 ms + serialization) shows in the first byte.
    let fb = c.workload.connections[1]
        .metrics
        .transport()
        .time_to_first_byte_secs
        .unwrap();
    assert!(fb > 0.060 && fb < 0.070, "{fb}");
    assert!(c
        .workload
        .connections
        .iter()
        .all(|c| c.status == ConnectionStatus::Completed));
}

#[test]
fn several_clients_against_their_servers_on_the_dumbbell() {
    // One quic_connections flow per pair: each pair has its own server host, store and
    // tickets; the pairs share the bottleneck and are otherwise independent.
    let text = r#"
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { rate = "30Mbps", delay = "10ms" }

[[flows]]
kind = "quic_connections"
pair = 0
[[flows.connections]]
bytes = "200KB"
[[flows.connections]]
gap = "200ms"
bytes = "200KB"

[[flows]]
kind = "quic_connections"
pair = 1
[[flows.connections]]
bytes = "300KB"
[[flows.connections]]
bytes = "100KB"
resume = false

[[flows]]
kind = "quic_connections"
pair = 2
address_token_size = 0
[[flows.connections]]
start = "100ms"
bytes = "50KB"
[[flows.connections]]
gap = "1s"
bytes = "50KB"
"#;
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, 9).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    for (f, expect_resumed) in [(0, true), (1, false), (2, true)] {
        let client = quic_metrics(&r, f, "client");
        assert_eq!(client.workload.connections.len(), 2);
        assert!(client
            .workload
            .connections
            .iter()
            .all(|c| c.status == ConnectionStatus::Completed));
        assert_eq!(
            client.workload.connections[1].resumed, expect_resumed,
            "flow {f}"
        );
        assert_eq!(client.workload.connections[1].token, f == 0, "flow {f}");
    }
}

#[test]
fn resumption_without_zero_rtt_saves_only_the_certificate() {
    // zero_rtt = false: the abbreviated handshake (no certificate) but the request waits
    // for 1-RTT keys, so the first byte comes at 2 RTT as with a full handshake.
    let run = |zero_rtt: bool| {
        let q = QuicConfig {
            zero_rtt,
            ..model_quic(true)
        };
        let mut second = spec(100_000);
        second.gap = Some(SimDuration::from_millis(50));
        let r = run_connections(
            q.clone(),
            vec![spec(10_000), second],
            link(20_000_000, 20),
            link(20_000_000, 20),
            1,
        );
        quic_metrics(&r, 0, "client").workload.connections[1].clone()
    };
    let (no0, with0) = (run(false), run(true));
    assert!(no0.resumed && no0.zero_rtt_accepted.is_none() && no0.zero_rtt_packets == 0);
    let fb = no0.metrics.transport().time_to_first_byte_secs.unwrap();
    let fb0 = with0.metrics.transport().time_to_first_byte_secs.unwrap();
    eprintln!("first byte: resumed without 0-RTT {fb:.6} s, with 0-RTT {fb0:.6} s");
    assert!(fb > 0.080 && fb < 0.085, "{fb}");
    assert!(fb0 > 0.040 && fb0 < 0.043, "{fb0}");
}
