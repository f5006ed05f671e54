//! The history-based initial window (paper 000, `docs/algorithms.md` "Initial window from
//! history (paper 000)"): configs built from scenario text in the transport × workload
//! spelling; every expected value is computed here from the samples the run's metrics
//! report, by the policy's formula.

use quicsim_tests::support::quic_metrics;
use sim_core::metrics::quic::QuicMetrics;
use sim_core::metrics::workload::{HistorySample, InitialWindowGrant, InitialWindowReport};
use sim_core::metrics::RunStatus;
use sim_core::Config;

/// A two-host scenario: `link` (a link table for both directions), `reverse` (the
/// server -> client overrides), one sequence flow with `quic` keys and `connections`.
fn config(link: &str, reverse: &str, quic: &str, connections: &str) -> Config {
    let text = format!(
        r#"
[topology]
kind = "two_hosts"
link = {link}
reverse = {reverse}

[[flows]]
transport = "quic"
quic = {quic}
workload = {{ kind = "sequence", bytes = "1MB", connections = [{connections}] }}
"#
    );
    sim_core::scenario::parse_str(&text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .base
}

/// Warm-up connections closed by the idle timeout, then a measured full handshake.
const WARMUP_THEN_FULL: &str = r#"
  { resume = false, close = "idle" },
  { gap = "200ms", close = "idle" },
  { gap = "200ms", resume = false, close = "idle" },
  { gap = "200ms", resume = false }"#;

const GOOD: &str = r#"{ rate = "100Mbps", delay = "10ms", queue = 1000 }"#;

fn run(c: &Config, seed: u64) -> (QuicMetrics, QuicMetrics) {
    let r = sim_core::run(c, seed).expect("valid");
    assert_eq!(r.status, RunStatus::Completed);
    (quic_metrics(&r, 0, "client"), quic_metrics(&r, 0, "server"))
}

fn report(server: &QuicMetrics) -> &InitialWindowReport {
    server
        .workload
        .initial_window
        .as_ref()
        .expect("a history policy reports its grants")
}

/// The samples the server had taken from `g`'s client when it accepted `g`.
fn samples_before<'a>(server: &'a QuicMetrics, g: &InitialWindowGrant) -> Vec<&'a HistorySample> {
    server
        .workload
        .history
        .iter()
        .filter(|s| s.time_secs < g.time_secs && s.client.split(':').next() == Some(&g.client))
        .collect()
}

fn mean(xs: &[&HistorySample]) -> u64 {
    (xs.iter().map(|s| u128::from(s.cwnd)).sum::<u128>() / xs.len() as u128) as u64
}

fn ema(xs: &[&HistorySample], alpha: f64) -> u64 {
    let mut a = xs[0].cwnd as f64;
    for s in &xs[1..] {
        a += alpha * (s.cwnd as f64 - a);
    }
    a as u64
}

#[test]
fn good_path_the_measured_connection_starts_above_the_default() {
    let history = config(
        GOOD,
        "{}",
        r#"{ idle_timeout = "500ms", initial_window = { policy = "history" } }"#,
        WARMUP_THEN_FULL,
    );
    let default = config(
        GOOD,
        "{}",
        r#"{ idle_timeout = "500ms" }"#,
        WARMUP_THEN_FULL,
    );
    for seed in 1..4 {
        let (client, server) = run(&history, seed);
        let r = report(&server);
        assert_eq!(r.policy, "history");
        assert_eq!(r.connections.len(), 4);
        let first = &r.connections[0];
        assert_eq!(
            (first.average, first.initial_cwnd),
            (None, first.default_cwnd),
            "no history yet"
        );
        let g = &r.connections[3];
        let before = samples_before(&server, g);
        assert_eq!(
            before.len(),
            4,
            "idle closes of 0, 1, 2 and the resumption of 1"
        );
        let avg = mean(&before);
        assert_eq!(g.average, Some(avg));
        assert!(avg > g.default_cwnd, "a good path grows the window: {avg}");
        assert_eq!(g.initial_cwnd, avg.min(200 * 1250));
        // The connection used it: the same transfer with the default window is slower.
        let (base, _) = run(&default, seed);
        let t = |m: &QuicMetrics| {
            m.workload.connections[3]
                .metrics
                .transport()
                .completion_secs
                .unwrap()
        };
        assert!(t(&client) < t(&base), "{} vs {}", t(&client), t(&base));
        // Resumed connections keep the default (paper 000: full handshakes only).
        assert!(r.connections[1].resumed);
        assert_eq!(r.connections[1].initial_cwnd, r.connections[1].default_cwnd);
    }
}

#[test]
fn bad_path_the_average_is_below_the_default_and_the_default_stands() {
    // Paper 000's Bad network (100 Mbit/s, RTT 188 ms, 8 % loss), Chromium's 32-segment
    // initial window: losses keep the window small, the closes sample it small.
    let c = config(
        r#"{ rate = "100Mbps", delay = "94ms", queue = 1000 }"#,
        r#"{ loss = "8%" }"#,
        r#"{ profile = "chromium", stream_window = "15MiB", idle_timeout = "1s", initial_window = { policy = "history" } }"#,
        r#"
  { resume = false, close = "idle" },
  { gap = "500ms", resume = false, close = "idle" },
  { gap = "500ms", resume = false }"#,
    );
    for seed in 1..3 {
        let (_, server) = run(&c, seed);
        let g = &report(&server).connections[2];
        let avg = mean(&samples_before(&server, g));
        assert_eq!(g.average, Some(avg));
        assert!(avg < g.default_cwnd, "{avg} vs {}", g.default_cwnd);
        assert_eq!(g.initial_cwnd, g.default_cwnd);
    }
}

#[test]
fn mean_and_moving_average_match_the_logged_samples() {
    for (avg, alpha) in [("mean", None), ("ema", Some(0.125)), ("ema", Some(0.6))] {
        let keys = match alpha {
            Some(a) => format!(r#"average = "{avg}", alpha = {a}"#),
            None => format!(r#"average = "{avg}""#),
        };
        let c = config(
            GOOD,
            r#"{ loss = "1%" }"#,
            &format!(
                r#"{{ idle_timeout = "500ms", initial_window = {{ policy = "history", {keys} }} }}"#
            ),
            WARMUP_THEN_FULL,
        );
        let (_, server) = run(&c, 7);
        let r = report(&server);
        let by_formula = |xs: &[&HistorySample]| match alpha {
            Some(a) => ema(xs, a),
            None => mean(xs),
        };
        for g in &r.connections[1..] {
            assert_eq!(
                g.average,
                Some(by_formula(&samples_before(&server, g))),
                "{avg} {alpha:?}"
            );
        }
        // The store at the end: every sample of the run.
        let all: Vec<&HistorySample> = server.workload.history.iter().collect();
        assert_eq!(r.store.len(), 1);
        assert_eq!(r.store[0].client, "10.0.0.1");
        assert_eq!(r.store[0].samples, all.len() as u64);
        assert_eq!(r.store[0].average, by_formula(&all));
    }
}

#[test]
fn the_cap_bounds_the_window() {
    // 12 segments of 1250 B = 15000 B, just above the RFC 9002 default 12500 B.
    let c = config(
        GOOD,
        "{}",
        r#"{ idle_timeout = "500ms", initial_window = { policy = "history", cap_packets = 12 } }"#,
        WARMUP_THEN_FULL,
    );
    let (_, server) = run(&c, 1);
    let g = &report(&server).connections[3];
    assert_eq!(g.default_cwnd, 12_500);
    assert!(g.average.unwrap() > 15_000);
    assert_eq!(g.initial_cwnd, 15_000);
}

#[test]
fn resumed_connections_get_the_history_window_only_when_asked() {
    let conns = r#"
  { resume = false, close = "idle" },
  { gap = "200ms" }"#;
    for (resumed, expect_history) in [("false", false), ("true", true)] {
        let c = config(
            GOOD,
            "{}",
            &format!(
                r#"{{ idle_timeout = "500ms", initial_window = {{ policy = "history", resumed = {resumed} }} }}"#
            ),
            conns,
        );
        let (client, server) = run(&c, 1);
        assert!(client.workload.connections[1].resumed);
        let g = &report(&server).connections[1];
        assert!(g.resumed && g.average.unwrap() > g.default_cwnd);
        // The history window: the average, at most the default cap of 200 segments.
        let got_history = g.initial_cwnd == g.average.unwrap().min(200 * 1250);
        assert_eq!(got_history, expect_history, "resumed = {resumed}");
    }
}

#[test]
fn a_new_client_address_has_no_history() {
    // The client moves to a new network (new IP) before the measured connection: the
    // store is keyed by IP, so it starts at the default.
    let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "100Mbps", delay = "10ms", queue = 1000 }

[[topology.handovers]]
at = "1500ms"
address = "ip"
link = { rate = "100Mbps", delay = "10ms", queue = 1000 }

[[flows]]
transport = "quic"
quic = { idle_timeout = "500ms", initial_window = { policy = "history" } }
workload = { kind = "sequence", bytes = "1MB", connections = [
  { resume = false, close = "idle" },
  { start = "2s", resume = false },
] }
"#;
    let c = sim_core::scenario::parse_str(text).unwrap().base;
    let (_, server) = run(&c, 1);
    let r = report(&server);
    assert_eq!(r.connections[0].client, "10.0.0.1");
    assert_ne!(r.connections[1].client, "10.0.0.1");
    assert_eq!(r.connections[1].average, None);
    assert_eq!(r.connections[1].initial_cwnd, r.connections[1].default_cwnd);
    // The old address's entry stays; the new address starts its own (the measured
    // connection's close).
    let clients: Vec<(&str, u64)> = r
        .store
        .iter()
        .map(|e| (e.client.as_str(), e.samples))
        .collect();
    assert_eq!(
        clients,
        vec![("10.0.0.1", 1), (r.connections[1].client.as_str(), 1)]
    );
}

#[test]
fn default_policy_reports_nothing_new() {
    let c = config(
        GOOD,
        "{}",
        r#"{ idle_timeout = "500ms", initial_window = { policy = "default" } }"#,
        WARMUP_THEN_FULL,
    );
    let (_, server) = run(&c, 1);
    assert!(server.workload.initial_window.is_none());
    assert!(
        !server.workload.history.is_empty(),
        "samples are still taken"
    );
}

#[test]
fn keys_the_policy_does_not_use_are_errors_naming_the_field() {
    let bad = |quic: &str| {
        let text = format!(
            r#"
[topology]
kind = "two_hosts"

[[flows]]
transport = "quic"
quic = {quic}
workload = {{ kind = "sequence", connections = [{{}}] }}
"#
        );
        sim_core::scenario::parse_str(&text)
            .map(|_| ())
            .unwrap_err()
    };
    let e = bad(r#"{ initial_window = { policy = "history", alpha = 0.2 } }"#);
    assert_eq!(e.field, "flows[0].quic.initial_window.alpha", "{e}");
    let e = bad(r#"{ initial_window = { alpha = 0.2 } }"#);
    assert_eq!(e.field, "flows[0].quic.initial_window.alpha", "{e}");
    let e = bad(r#"{ initial_window = { policy = "history", average = "ema", alpha = 1.5 } }"#);
    assert_eq!(e.field, "flows[0].quic.initial_window.alpha", "{e}");
    assert!(e.to_string().contains("(0, 1]"), "{e}");
    let e = bad(r#"{ initial_window = { policy = "history", cap_packets = 5 } }"#);
    assert_eq!(e.field, "flows[0].quic.initial_window.cap_packets", "{e}");
    let e = bad(r#"{ initial_window = { policy = "history", beta = 1 } }"#);
    assert!(e.to_string().contains("beta"), "{e}");
}

#[test]
fn the_series_show_each_connection_starting_at_its_granted_window() {
    let mut c = config(
        GOOD,
        "{}",
        r#"{ idle_timeout = "500ms", initial_window = { policy = "history" } }"#,
        WARMUP_THEN_FULL,
    );
    c.output.series = true;
    let r = sim_core::run(&c, 1).expect("valid");
    let server = quic_metrics(&r, 0, "server");
    let s = r.series.as_ref().expect("series");
    let col = |name: &str| s.columns.iter().position(|c| c == name).unwrap();
    let (cwnd, conn) = (col("flow0.ep1.cwnd"), col("flow0.ep1.connection"));
    for g in &report(&server).connections {
        // The first sample after the server accepted the connection (10 ms sampling,
        // before the first acknowledgement one 20 ms round trip later).
        let row = s
            .rows
            .iter()
            .find(|row| row[conn] == g.connection as f64)
            .expect("sampled");
        assert_eq!(
            row[cwnd], g.initial_cwnd as f64,
            "connection {}",
            g.connection
        );
    }
}

/// A bulk flow has one connection and no history to learn from: the `history` policy
/// there is an error naming the key, never silently ignored.
#[test]
fn history_on_a_single_connection_bulk_flow_is_an_error_naming_the_key() {
    let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "100Mbps", delay = "10ms" }

[[flows]]
transport = "quic"
quic = { initial_window = { policy = "history" } }
workload = { kind = "bulk", bytes = "1MB" }
"#;
    let e = sim_core::scenario::parse_str(text).expect_err("must be rejected");
    assert_eq!(e.field, "flows[0].initial_window.policy", "{e}");
    assert!(e.allowed.contains("sequence"), "{e}");
    // The same flow with the default policy is fine, and so is history in a sequence.
    assert!(sim_core::scenario::parse_str(&text.replace("\"history\"", "\"default\"")).is_ok());
}
