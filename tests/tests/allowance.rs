//! The receive-window allowances of paper 001 (`docs/algorithms.md`): the scenario keys
//! (`allowance`, `connection_allowance`, `max_stream_window`, `max_connection_window`),
//! their errors, and lossless transfers with each policy against an analytic model of
//! that policy (`quicsim_tests::model`, `docs/validation.md` §2b).

use sim_core::config::Config;
use sim_core::transport::allowance::AllowanceKind;
use sim_core::validate::ConfigError;

const HEAD: &str = r#"
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "10ms" }
"#;

fn parse(quic: &str) -> Result<Config, ConfigError> {
    let text = format!(
        "{HEAD}[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"bulk\", bytes = \"100KB\" }}\n{quic}\n"
    );
    sim_core::scenario::parse_str(&text).map(|s| s.base)
}

#[track_caller]
fn error(quic: &str, field_end: &str, allowed_part: &str) {
    let e = parse(quic).expect_err("must be rejected");
    assert!(e.field.ends_with(field_end), "field of {e}");
    assert!(e.allowed.contains(allowed_part), "allowed text of {e}");
}

fn quic(c: &Config) -> &sim_core::quic::QuicConfig {
    let sides = c.flows[0].quic().expect("a QUIC flow");
    assert!(sides.same(), "both sides configured alike");
    &sides.client
}

#[test]
fn every_policy_is_a_scenario_value_at_both_levels() {
    for k in AllowanceKind::ALL {
        for ck in AllowanceKind::ALL {
            let c = parse(&format!(
                "allowance = \"{}\"\nconnection_allowance = \"{}\"",
                k.name(),
                ck.name()
            ))
            .expect("valid");
            let q = quic(&c);
            assert_eq!(q.stream_allowance().0, k);
            assert_eq!(q.connection_allowance_params().0, ck);
        }
    }
    // Unset connection policy = the stream policy.
    let c = parse("allowance = \"fast_autotune\"").unwrap();
    assert_eq!(
        quic(&c).connection_allowance_params().0,
        AllowanceKind::FastAutotune
    );
}

#[test]
fn defaults_are_unchanged_and_bounds_default_to_quiche() {
    let c = parse("").unwrap();
    let q = quic(&c);
    let (k, p) = q.stream_allowance();
    assert_eq!(
        (k, p.initial_window, p.max_window),
        (AllowanceKind::Static.into(), 1_250_000, 1_250_000)
    );
    // The resolved config of a scenario without the new keys does not show them.
    let text = sim_core::scenario::to_toml(&c).unwrap();
    for key in [
        "connection_allowance",
        "max_stream_window",
        "max_connection_window",
    ] {
        assert!(!text.contains(key), "{key} in {text}");
    }
    // A growing policy without bounds: Google quiche's limits (16 MiB / 24 MiB), or the
    // initial window when larger (the default connection window is unlimited).
    let c =
        parse("allowance = \"autotune\"\nstream_window = \"8KB\"\nconnection_window = \"32KB\"")
            .unwrap();
    let q = quic(&c);
    assert_eq!(q.stream_allowance().1.max_window, 16 << 20);
    assert_eq!(q.connection_allowance_params().1.max_window, 24 << 20);
    let c = parse("allowance = \"autotune\"").unwrap();
    assert_eq!(
        quic(&c).connection_allowance_params().1.max_window,
        (1 << 62) - 1
    );
    // MSS of improved_static: the full-datagram STREAM payload, 1215 B by default.
    assert_eq!(q.stream_mss(), 1215);
}

#[test]
fn a_bound_the_policy_does_not_use_is_an_error_naming_it() {
    error(
        "max_stream_window = \"1MB\"",
        "max_stream_window",
        "allowance = \"static\"",
    );
    error(
        "allowance = \"improved_static\"\nmax_stream_window = \"1MB\"",
        "max_stream_window",
        "only \"autotune\" and \"fast_autotune\"",
    );
    error(
        "allowance = \"autotune\"\nconnection_allowance = \"static\"\nconnection_window = \"8KB\"\nmax_connection_window = \"1MB\"",
        "max_connection_window",
        "connection allowance of \"static\"",
    );
    error(
        "max_connection_window = \"1MB\"",
        "max_connection_window",
        "\"static\"",
    );
    // Bounds below the initial window.
    error(
        "allowance = \"autotune\"\nstream_window = \"64KB\"\nmax_stream_window = \"32KB\"",
        "max_stream_window",
        "[stream_window, 2^62 - 1]",
    );
    error(
        "allowance = \"fast_autotune\"\nconnection_window = \"64KB\"\nmax_connection_window = \"32KB\"",
        "max_connection_window",
        "[connection_window, 2^62 - 1]",
    );
    // A policy name that does not exist.
    // (Unknown enum values in a QUIC table are reported at the flow, with serde's list of
    // variants, as for `cc`.)
    let e = parse("allowance = \"turbo\"").expect_err("unknown policy");
    let text = e.to_string();
    assert!(
        text.contains("turbo") && text.contains("fast_autotune"),
        "{e}"
    );
    // Accepted: a growing policy with bounds at each level.
    let c = parse(
        "allowance = \"fast_autotune\"\nstream_window = \"8KB\"\nconnection_window = \"32KB\"\nmax_stream_window = \"1MB\"\nmax_connection_window = \"64MB\"",
    )
    .unwrap();
    let q = quic(&c);
    assert_eq!(q.stream_allowance().1.max_window, 1_000_000);
    assert_eq!(q.connection_allowance_params().1.max_window, 64_000_000);
}

// ---------------------------------------------------------------------------------------
// Lossless transfers against the model of each policy (`docs/validation.md` §2b).

use quicsim_tests::model::{transfer, Policy};
use quicsim_tests::support::{params, quic_metrics};
use sim_core::metrics::RunStatus;

/// A congestion window no transfer here fills, so only flow control limits (as §2 takes
/// `W <= cwnd0`): the model and the scenario both start with it.
const BIG_CWND: u64 = 64_000_000;

/// Runs `bytes` over `rate` bit/s and `rtt_ms` with stream window `w0` under `policy`
/// (bound `bound` for the growing ones), in the model and in the simulator; returns
/// (model completion, simulated completion) in ns after checking them within 1 %.
fn check_policy(policy: AllowanceKind, rate: u64, rtt_ms: u64, w0: u64, bound: u64, bytes: u64) {
    let mss = 1250 - 9 - 2 - 16 - (1 + 1 + 4 + 2); // docs/validation.md's P
    let mut p = params(rate, rtt_ms / 2, bytes);
    p.stream_window = Some(w0);
    p.cwnd0 = BIG_CWND;
    p.policy = match policy {
        AllowanceKind::Static => Policy::Static,
        AllowanceKind::ImprovedStatic => Policy::ImprovedStatic { mss },
        AllowanceKind::Autotune => Policy::Autotune { max: bound },
        AllowanceKind::FastAutotune => Policy::FastAutotune { max: bound },
    };
    let m = transfer(&p);
    let bound_key = if policy.grows() {
        format!("max_stream_window = {bound}\n")
    } else {
        String::new()
    };
    let text = format!(
        r#"
[sim]
time_limit = "100000s"
[topology]
kind = "two_hosts"
link = {{ rate = "{rate}bps", delay = "{d}ms", queue = "unlimited" }}
[[flows]]
transport = "quic"
workload = {{ kind = "bulk", bytes = {bytes} }}
allowance = "{name}"
stream_window = {w0}
{bound_key}pacing = false
initial_cwnd_bytes = {BIG_CWND}
"#,
        d = rtt_ms / 2,
        name = policy.name(),
    );
    let cfg = sim_core::scenario::parse_str(&text).expect("valid").base;
    assert_eq!(
        quic(&cfg).stream_mss(),
        mss,
        "the model's MSS is the config's"
    );
    let r = sim_core::run(&cfg, 1).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic_metrics(&r, 0, "client");
    let sim = (c.transport.completion_secs.expect("completed") * 1e9).round() as u64;
    let tol = m.completion / 100;
    eprintln!(
        "{:>15} {:>5} Mbit/s {:>4} ms W0 {:>6} bound {:>8}: model {:.4} s ({} updates, windows {:?}, margin {:.2}) sim {:.4} s ({} updates, {} increases, window {}) {:+.3} %",
        policy.name(),
        rate / 1_000_000,
        rtt_ms,
        w0,
        bound,
        m.completion as f64 / 1e9,
        m.updates,
        &m.windows[..m.windows.len().min(12)],
        m.min_margin,
        sim as f64 / 1e9,
        c.quic.stream_window_updates,
        c.quic.stream_window_increases,
        c.quic.stream_window_max,
        100.0 * (sim as f64 / m.completion as f64 - 1.0),
    );
    // Every growth decision of the model was clear of the 2-RTT boundary by 25 %, so a
    // receiver's srtt a few per cent off the base RTT decides the same.
    assert!(
        m.min_margin > 0.25,
        "ambiguous 2-RTT decision: {}",
        m.min_margin
    );
    assert!(
        sim.abs_diff(m.completion) <= tol,
        "{}: sim {sim} vs model {} ns",
        policy.name(),
        m.completion
    );
    // The same number of updates, and the final window is the model's.
    assert_eq!(c.quic.stream_window_updates, m.updates);
    assert_eq!(c.quic.stream_window_max, *m.windows.last().unwrap_or(&w0));
}

#[test]
fn lossless_transfer_with_each_policy_matches_its_model() {
    // 100 Mbit/s x 100 ms (BDP 1.25 MB): windows from 8 KB stay flow-control-limited up to
    // a 512 KB bound.
    for policy in AllowanceKind::ALL {
        check_policy(policy, 100_000_000, 100, 8_000, 512_000, 3_000_000);
    }
}

#[test]
fn lossless_transfer_growing_policies_other_paths() {
    for policy in [AllowanceKind::Autotune, AllowanceKind::FastAutotune] {
        check_policy(policy, 10_000_000, 40, 4_000, 40_000, 1_000_000);
        check_policy(policy, 1_000_000_000, 20, 16_000, 1_000_000, 10_000_000);
    }
}

/// Who auto-tunes is a scenario parameter: each side's allowance comes from its own
/// config (`[flows.quic.client]` / `[flows.quic.server]`). In a download the client is the
/// receiver: its windows grow when the client auto-tunes and stay fixed when only the
/// server does (Google quiche auto-tunes in the receiver's session only).
#[test]
fn who_autotunes_is_a_per_side_scenario_key() {
    let run = |side: &str| {
        let text = format!(
            r#"{HEAD}
[[flows]]
transport = "quic"
workload = {{ kind = "bulk", bytes = "400KB" }}
[flows.quic]
stream_window = "8KB"
connection_window = "16KB"
[flows.quic.{side}]
allowance = "autotune"
max_stream_window = "256KB"
max_connection_window = "512KB"
"#
        );
        let cfg = sim_core::scenario::parse_str(&text)
            .unwrap_or_else(|e| panic!("{e}"))
            .base;
        let r = sim_core::run(&cfg, 1).unwrap();
        assert_eq!(r.status, sim_core::metrics::RunStatus::Completed);
        (
            quicsim_tests::support::quic_metrics(&r, 0, "client"),
            quicsim_tests::support::quic_metrics(&r, 0, "server"),
        )
    };
    let (c, _) = run("client");
    assert!(c.quic.stream_window_increases > 0, "{:?}", c.quic);
    assert!(c.quic.stream_window_max > 8_000);
    let (c2, s2) = run("server");
    assert_eq!(c2.quic.stream_window_increases, 0);
    assert_eq!(c2.quic.stream_window_max, 8_000);
    // The server's own (request) windows never fill, so they do not grow either.
    assert_eq!(s2.quic.stream_window_increases, 0);
    // A fixed-window client is slower than an auto-tuning one on the same path.
    assert!(c2.transport.completion_secs.unwrap() > c.transport.completion_secs.unwrap());
}
