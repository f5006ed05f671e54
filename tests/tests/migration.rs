//! Connection migration (RFC 9000 §8.2, §9; paper 004) end to end: a live QUIC connection
//! follows its client through a handover that changes its address, validates the new path
//! both ways, respects the 3x anti-amplification limit there until validated, applies the
//! window policy, and falls back or closes when the new path drops everything.
//!
//! Scenarios are written in the transport × workload spelling.

use proptest::prelude::*;
use sim_core::metrics::quic::{MigrationMetrics, QuicMetrics};
use sim_core::metrics::{EndpointMetrics, RunResult, RunStatus};

/// Chromium's initial window (32 × 1460 B, `profile = "chromium"`).
const CHROMIUM_INITIAL_WINDOW: u64 = 46_720;

use quicsim_tests::support::run_scenario as run;

fn quic(r: &RunResult, role: &str) -> QuicMetrics {
    for e in &r.flows[0].endpoints {
        if let EndpointMetrics::Quic(q) = e {
            if q.transport.role == role {
                return (**q).clone();
            }
        }
    }
    panic!("no QUIC {role}")
}

fn migration(r: &RunResult, role: &str) -> MigrationMetrics {
    let q = quic(r, role);
    assert_eq!(q.quic.migrations.len(), 1, "{role}: one migration");
    q.quic.migrations[0].clone()
}

/// A bulk download over a two-host path that switches to `new_link` at `at`.
#[allow(clippy::too_many_arguments)]
fn scenario(
    old_link: &str,
    new_link: &str,
    at: &str,
    address: &str,
    migration: &str,
    bytes: &str,
    extra_quic: &str,
) -> String {
    format!(
        r#"
name = "migration"
seed = 3
[sim]
time_limit = "120s"
[topology]
kind = "two_hosts"
link = {old_link}
[[topology.handovers]]
at = "{at}"
address = "{address}"
link = {new_link}
[[flows]]
transport = "quic"
quic = {{ profile = "chromium", {extra_quic} {migration} }}
workload = {{ kind = "bulk", bytes = "{bytes}" }}
"#
    )
}

const FIVE_G: &str = r#"{ rate = "120Mbps", delay = "15ms" }"#;
const CAMPUS: &str = r#"{ rate = "180Mbps", delay = "1250us" }"#;

fn secs_to_ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

#[test]
fn a_live_connection_survives_an_ip_change() {
    for policy in ["reset", "rtt_ratio"] {
        let m = format!("migration = {{ policy = \"{policy}\" }}");
        let r = run(&scenario(FIVE_G, CAMPUS, "200ms", "ip", &m, "8MB", ""));
        assert_eq!(r.status, RunStatus::Completed, "{policy}");
        let c = quic(&r, "client");
        assert_eq!(c.transport.stream_bytes_read, 8_000_000, "{policy}");
        for role in ["client", "server"] {
            let mm = migration(&r, role);
            assert_eq!(mm.outcome, "validated", "{policy} {role}");
            assert_eq!(mm.address_change, "ip");
            assert_eq!(mm.policy, policy);
        }
        // The handover destroyed data in flight; it was sent again.
        assert!(migration(&r, "server").bytes_lost > 0, "{policy}");
    }
}

/// Without `migration` nothing changes: the connection keeps its old address (and in
/// `two_hosts` still reaches the server from it, as before this model existed).
#[test]
fn without_migration_a_connection_reports_none() {
    let r = run(&scenario(FIVE_G, CAMPUS, "200ms", "ip", "", "2MB", ""));
    assert!(quic(&r, "client").quic.migrations.is_empty());
    assert!(quic(&r, "server").quic.migrations.is_empty());
}

/// RFC 9000 §8.2: the server's own PATH_CHALLENGE goes out when the first packet from the
/// new address arrives and its PATH_RESPONSE comes back one new-path round trip later:
/// two propagation delays plus serialising the two datagrams, each expanded to at least
/// 1200 bytes (RFC 9000 §8.2.1, §8.2.2) and at most `max_udp_payload` (1250), with 28
/// bytes of IP/UDP overhead on each link.
#[test]
fn server_validation_completes_one_new_path_rtt_after_the_first_packet() {
    for (rate_bps, delay_us) in [(180_000_000u64, 1_250u64), (20_000_000, 40_000)] {
        let link = format!("{{ rate = \"{rate_bps}bps\", delay = \"{delay_us}us\" }}");
        let m = "migration = { policy = \"reset\" }";
        let r = run(&scenario(FIVE_G, &link, "300ms", "ip", m, "6MB", ""));
        let s = migration(&r, "server");
        let tx = |bytes: u64| (bytes * 8 * 1_000_000_000).div_ceil(rate_bps);
        let lo = 2 * delay_us * 1000 + 2 * tx(1200 + 28);
        let hi = 2 * delay_us * 1000 + 2 * tx(1250 + 28);
        let v = secs_to_ns(s.validation_secs.expect("validated"));
        assert_eq!(
            secs_to_ns(s.rtt_new_secs.unwrap()),
            v,
            "challenge sent at the switch"
        );
        // Serialisation rounding: a few nanoseconds per link.
        assert!(
            (lo.saturating_sub(10)..=hi + 10).contains(&v),
            "validation {v} ns vs one RTT in [{lo}, {hi}] ns"
        );
    }
}

/// RFC 9000 §9.3.1, §8.1: before the new address is validated the server sends at most
/// three times what it received from it. On the short campus path the server has data
/// waiting and spends the budget (it is held by the limit for a while); on a long one
/// (100 ms one way) validation takes 200 ms.
#[test]
fn the_server_never_exceeds_three_times_before_validation() {
    let long = r#"{ rate = "100Mbps", delay = "100ms" }"#;
    for (new, at, held) in [(CAMPUS, "200ms", true), (long, "250ms", false)] {
        let m = "migration = { policy = \"reset\" }";
        let r = run(&scenario(FIVE_G, new, at, "ip", m, "6MB", ""));
        let s = migration(&r, "server");
        assert!(s.unvalidated_bytes_received >= 1200, "{s:?}");
        assert!(
            s.unvalidated_bytes_sent <= 3 * s.unvalidated_bytes_received,
            "{} > 3 x {}",
            s.unvalidated_bytes_sent,
            s.unvalidated_bytes_received
        );
        if held {
            assert!(quic(&r, "server").quic.amplification_blocked_secs > 0.0);
        }
    }
}

#[test]
fn the_window_after_the_switch_follows_each_policy() {
    // reset: the initial window, a fresh estimator seeded with the validation round trip
    // (RFC 9002 §6.2.2: not a sample, so no minimum yet).
    let r = run(&scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { policy = \"reset\" }",
        "8MB",
        "",
    ));
    let s = migration(&r, "server");
    assert_eq!(s.cwnd_after, Some(CHROMIUM_INITIAL_WINDOW));
    assert_eq!(s.srtt_after_secs, s.rtt_new_secs);
    assert_eq!(s.rtt_min_after_secs, None);

    // rtt_ratio: max(((RTT_old − RTT_new) / RTT_old) × cwnd_old, initial), RTT_old the
    // old path's minimum RTT.
    let r = run(&scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { policy = \"rtt_ratio\" }",
        "8MB",
        "",
    ));
    let s = migration(&r, "server");
    let old = secs_to_ns(s.rtt_old_min_secs.unwrap()) as u128;
    let new = secs_to_ns(s.rtt_new_secs.unwrap()) as u128;
    assert!(new < old);
    let formula = (u128::from(s.cwnd_before) * (old - new) / old) as u64;
    assert!(
        formula > CHROMIUM_INITIAL_WINDOW,
        "the old window was large: {formula}"
    );
    assert_eq!(s.cwnd_after, Some(formula.max(CHROMIUM_INITIAL_WINDOW)));

    // rtt_ratio onto a longer path: the initial window (the paper's fallback).
    let slow = r#"{ rate = "50Mbps", delay = "40ms" }"#;
    let r = run(&scenario(
        FIVE_G,
        slow,
        "200ms",
        "ip",
        "migration = { policy = \"rtt_ratio\" }",
        "4MB",
        "",
    ));
    let s = migration(&r, "server");
    assert!(s.rtt_new_secs.unwrap() >= s.rtt_old_min_secs.unwrap());
    assert_eq!(s.cwnd_after, Some(CHROMIUM_INITIAL_WINDOW));
}

/// RFC 9000 §9.4: on a port-only change the endpoint may keep its congestion and RTT
/// state. Same links before and after (NAT rebinding): the minimum RTT survives the
/// validation and the window is not cut back to the initial one.
#[test]
fn keep_on_a_port_only_change_keeps_rtt_state() {
    let m = "migration = { policy = \"keep\" }";
    let r = run(&scenario(FIVE_G, FIVE_G, "300ms", "port", m, "8MB", ""));
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(quic(&r, "client").transport.stream_bytes_read, 8_000_000);
    let s = migration(&r, "server");
    assert_eq!(s.address_change, "port");
    assert_eq!(s.outcome, "validated");
    assert_eq!(s.rtt_min_after_secs, s.rtt_old_min_secs);
    assert!(s.cwnd_before > CHROMIUM_INITIAL_WINDOW);
    assert!(s.cwnd_after.unwrap() >= s.cwnd_before, "{s:?}");
    // reset on the same change forgets both.
    let r = run(&scenario(
        FIVE_G,
        FIVE_G,
        "300ms",
        "port",
        "migration = { policy = \"reset\" }",
        "8MB",
        "",
    ));
    let s = migration(&r, "server");
    assert_eq!(s.rtt_min_after_secs, None);
    assert_eq!(s.cwnd_after, Some(CHROMIUM_INITIAL_WINDOW));
}

#[test]
fn keep_on_an_ip_change_is_an_error_naming_the_field() {
    let text = scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { policy = \"keep\" }",
        "1MB",
        "",
    );
    let e = sim_core::scenario::parse_str(&text).expect_err("keep with an IP change");
    let msg = e.to_string();
    assert!(msg.contains("flows[0].migration.policy"), "{msg}");
    assert!(msg.contains("§9.4"), "{msg}");
}

#[test]
fn unknown_or_bad_migration_keys_are_errors_naming_the_field() {
    let text = scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { policy = \"reset\", alpha = 0.5 }",
        "1MB",
        "",
    );
    let msg = sim_core::scenario::parse_str(&text)
        .expect_err("unknown key")
        .to_string();
    assert!(msg.contains("migration.alpha"), "{msg}");
    let text = scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { throughput_window = \"0s\" }",
        "1MB",
        "",
    );
    let msg = sim_core::scenario::parse_str(&text)
        .expect_err("zero window")
        .to_string();
    assert!(msg.contains("migration.throughput_window"), "{msg}");
    let text = scenario(
        FIVE_G,
        CAMPUS,
        "200ms",
        "ip",
        "migration = { policy = \"cwnd\" }",
        "1MB",
        "",
    );
    let msg = sim_core::scenario::parse_str(&text)
        .expect_err("unknown policy")
        .to_string();
    assert!(
        msg.contains("migration.policy") && msg.contains("rtt_ratio"),
        "{msg}"
    );
}

/// A new path that drops everything: the client's validation is abandoned after
/// 3 × max(PTO, PTO with kInitialRtt) (RFC 9000 §8.2.4) and, its old address gone, it
/// closes; the run ends (the server idles out), it does not hang.
#[test]
fn a_blackholed_new_path_ends_in_a_clear_close() {
    let dead = r#"{ rate = "100Mbps", delay = "5ms", loss = 1.0 }"#;
    let m = "migration = { policy = \"reset\" }";
    let r = run(&scenario(
        FIVE_G,
        dead,
        "200ms",
        "ip",
        m,
        "20MB",
        "idle_timeout = \"5s\",",
    ));
    assert_ne!(r.status, RunStatus::TimeLimit);
    assert!(r.end_time_secs < 20.0, "ended at {}", r.end_time_secs);
    let c = quic(&r, "client");
    assert!(c.transport.closed);
    let cm = migration(&r, "client");
    assert_eq!(cm.outcome, "failed");
    assert_eq!(cm.validation_secs, None);
    // The server never heard from the new address: it never migrated.
    assert!(quic(&r, "server").quic.migrations.is_empty());
    assert!(quic(&r, "server").transport.closed, "idle timeout");
}

/// Only the new path's downstream drops everything: the server hears the client from its
/// new address, migrates, cannot validate it, and falls back to the old (last validated)
/// address (RFC 9000 §9.3); the client's validation fails too and it closes.
#[test]
fn a_server_that_cannot_validate_falls_back_to_the_old_address() {
    let text = r#"
name = "fallback"
seed = 3
[sim]
time_limit = "120s"
[topology]
kind = "two_hosts"
link = { rate = "120Mbps", delay = "15ms" }
[[topology.handovers]]
at = "200ms"
address = "ip"
forward = { rate = "100Mbps", delay = "5ms" }
reverse = { rate = "100Mbps", delay = "5ms", loss = 1.0 }
[[flows]]
transport = "quic"
quic = { profile = "chromium", idle_timeout = "5s", migration = { policy = "reset" } }
workload = { kind = "bulk", bytes = "20MB" }
"#;
    let r = run(text);
    assert_ne!(r.status, RunStatus::TimeLimit);
    let s = quic(&r, "server").quic.migrations[0].clone();
    assert_eq!(s.outcome, "fallback");
    assert!(s.unvalidated_bytes_sent <= 3 * s.unvalidated_bytes_received);
    assert_eq!(migration(&r, "client").outcome, "failed");
}

/// The server's first packet on the new path (its PATH_RESPONSE and its own
/// PATH_CHALLENGE) is lost on a 2.5 % loss link, while the client's challenge is
/// acknowledged. Neither side has a PTO to probe with (ACKs keep flowing), so each must
/// send a new PATH_CHALLENGE a PTO after the last one (RFC 9000 §8.2.1, §13.3): both
/// validate and the transfer completes. Before that rule the client abandoned the path
/// after 3 PTOs (§8.2.4), closed, and the run stalled (a case the property below found).
#[test]
fn a_lost_path_response_is_answered_by_a_new_challenge() {
    let r = run(&scenario(
        r#"{ rate = "20Mbps", delay = "30ms", loss = 0 }"#,
        r#"{ rate = "120Mbps", delay = "15ms", loss = 0.025 }"#,
        "227ms",
        "ip",
        "migration = { policy = \"reset\" }",
        "3MB",
        "",
    ));
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(quic(&r, "client").transport.stream_bytes_read, 3_000_000);
    for role in ["client", "server"] {
        let m = migration(&r, role);
        assert_eq!(m.outcome, "validated", "{role}");
        // Not at the first round trip (its response was lost): a later challenge did it.
        assert!(
            m.validation_secs.unwrap() > 0.1,
            "{role}: {:?}",
            m.validation_secs
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// No byte lost or duplicated across the switch: whatever the switch time (after the
    /// handshake is confirmed: RFC 9000 §9 forbids migrating before), the link pair, the
    /// new path's loss and the kind of address change, the client reads exactly the bytes
    /// the server wrote, and the run completes.
    #[test]
    fn every_byte_arrives_exactly_once_across_the_switch(
        at_ms in 150u64..450,
        old in 0usize..3,
        new in 0usize..3,
        loss_permille in 0u64..30,
        port_only in any::<bool>(),
        policy in 0usize..3,
    ) {
        let links = [
            (r#""120Mbps""#, r#""15ms""#),
            (r#""180Mbps""#, r#""1250us""#),
            (r#""20Mbps""#, r#""30ms""#),
        ];
        let link = |(rate, delay): (&str, &str), loss: u64| {
            format!("{{ rate = {rate}, delay = {delay}, loss = {} }}", loss as f64 / 1000.0)
        };
        let policy = match (policy, port_only) {
            (0, _) => "reset",
            (1, true) => "keep",
            _ => "rtt_ratio",
        };
        let text = scenario(
            &link(links[old], 0),
            &link(links[new], loss_permille),
            &format!("{at_ms}ms"),
            if port_only { "port" } else { "ip" },
            &format!("migration = {{ policy = \"{policy}\" }}"),
            "3MB",
            "",
        );
        let r = run(&text);
        prop_assert_eq!(r.status, RunStatus::Completed);
        let c = quic(&r, "client");
        prop_assert_eq!(c.transport.stream_bytes_read, 3_000_000);
        prop_assert_eq!(c.workload.stream_completion_secs.len(), 1);
        // The connection migrated if the transfer was still running at the switch.
        let done = c.transport.completion_secs.unwrap();
        if done > at_ms as f64 / 1000.0 {
            prop_assert_eq!(c.quic.migrations.len(), 1);
        }
        for m in c.quic.migrations.iter().chain(quic(&r, "server").quic.migrations.iter()) {
            prop_assert_eq!(&m.outcome, "validated");
            prop_assert!(m.unvalidated_bytes_sent <= 3 * m.unvalidated_bytes_received);
        }
    }
}

/// Two handovers in a row (an IP change, then NAT rebinding): each side issues a fresh
/// connection ID at every path change (RFC 9000 §5.1.1, §9.5), so the second handover
/// migrates too, and the transfer completes.
#[test]
fn two_handovers_migrate_twice() {
    let text = r#"
name = "two"
seed = 3
[sim]
time_limit = "60s"
[topology]
kind = "two_hosts"
link = { rate = "50Mbps", delay = "15ms" }
[[topology.handovers]]
at = "300ms"
address = "ip"
link = { rate = "80Mbps", delay = "5ms" }
[[topology.handovers]]
at = "700ms"
address = "port"
link = { rate = "40Mbps", delay = "10ms" }
[[flows]]
transport = "quic"
quic = { profile = "chromium", migration = { policy = "rtt_ratio" } }
workload = { kind = "bulk", bytes = "10MB" }
"#;
    let r = run(text);
    assert_eq!(r.status, RunStatus::Completed);
    let c = quic(&r, "client");
    assert_eq!(c.transport.stream_bytes_read, 10_000_000);
    for role in ["client", "server"] {
        let ms = quic(&r, role).quic.migrations;
        assert_eq!(ms.len(), 2, "{role}");
        assert_eq!(ms[0].address_change, "ip");
        assert_eq!(ms[1].address_change, "port");
        assert!(
            ms.iter().all(|m| m.outcome == "validated"),
            "{role}: {ms:?}"
        );
    }
}
