//! The receive-window allowances of paper 001 (`docs/algorithms.md`): the scenario keys
//! (`allowance`, `connection_allowance`, `max_stream_window`, `max_connection_window`),
//! and their errors.

use sim_core::config::{AppConfig, Config};
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
    match &c.flows[0].app {
        AppConfig::QuicBulk(q) => q,
        other => panic!("a bulk flow, not {other:?}"),
    }
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
        (AllowanceKind::Static, 1_250_000, 1_250_000)
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
