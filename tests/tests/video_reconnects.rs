//! `video` with `reconnections` (paper 003 Fig. 13) end to end, on every transport: at each
//! address change of the client during the loading after a seek, TCP and SCTP (and QUIC
//! without migration) abandon the connection and ask a new one from the new address for
//! the rest of the segment in flight; QUIC with `migration` keeps its connection. On a
//! lossless path each change costs, from the change to the next read, the round trips of
//! the new connection's handshake that docs/workloads.md derives for `reconnects` (TCP +
//! TLS 1.3: 4, SCTP: 2, QUIC resumed with 0-RTT: 1, QUIC migration: 2; see
//! tests/tests/reconnects.rs for the derivation), so the seek's loading delay grows by at
//! least those round trips per change.

use sim_core::metrics::{RunResult, RunStatus};

const RTT: f64 = 0.05;

/// A 16 s video over a 100 Mbit/s, 25 ms path (RTT 50 ms: QHD, 8 MB segments), a seek at
/// 3 s to 4.8 s, and `changes` new IP addresses of the client from 3.1 s, 0.5 s apart.
fn scenario(transport: &str, keys: &str, changes: u64) -> String {
    format!(
        r#"
name = "video-reconnections"
seed = 1
[sim]
time_limit = "60s"
[topology]
kind = "two_hosts"
link = {{ rate = "100Mbps", delay = "25ms" }}
[[topology.handovers]]
at = "3.1s"
repeat = {changes}
every = "500ms"
address = "ip"
link = {{ rate = "100Mbps", delay = "25ms" }}
[[flows]]
transport = "{transport}"
{keys}
workload = {{ kind = "video", length = "16s", seek_at = "3s", seek_to = "4.8s", reconnections = 100 }}
"#
    )
}

use quicsim_tests::support::run_scenario as run;

use quicsim_tests::support::client_workload as client;

fn loading(r: &RunResult) -> f64 {
    client(r)
        .video
        .expect("a video report")
        .seek_loading_delay_secs
        .expect("the seek finished loading")
}

#[test]
fn each_address_change_costs_the_handshake_round_trips_of_its_transport() {
    let quic_keys = "quic = { stream_window = \"16MiB\", zero_rtt = true }";
    for (transport, keys, rtts, action, slack) in [
        (
            "tcp",
            "tcp = { recv_window = \"16MiB\" }",
            4.0,
            "reconnected",
            false,
        ),
        (
            "sctp",
            "sctp = { a_rwnd = \"16MiB\" }",
            2.0,
            "reconnected",
            false,
        ),
        ("quic", quic_keys, 1.0, "reconnected", true),
        (
            "quic",
            "quic = { stream_window = \"16MiB\", migration = { policy = \"reset\" } }",
            2.0,
            "migrated",
            true,
        ),
    ] {
        let base = run(&scenario(transport, keys, 0));
        assert_eq!(base.status, RunStatus::Completed, "{transport}");
        let none = loading(&base);
        for n in [2u64] {
            let r = run(&scenario(transport, keys, n));
            let what = format!("{transport} {action}, {n} change(s)");
            assert_eq!(r.status, RunStatus::Completed, "{what}");
            let rep = client(&r).reconnects.expect("address changes reported");
            assert_eq!(rep.address_changes.len(), n as usize, "{what}");
            let mut lost_total = 0.0;
            for c in &rep.address_changes {
                assert_eq!(c.action, action, "{what}");
                let lost = c.lost_secs.expect("a read after the change");
                // `rtts` round trips plus serialisation (a few 0.1 ms) and, for QUIC, at
                // most half an RTT behind the old connection's paced packets
                // (docs/workloads.md).
                let expected = rtts * RTT;
                let extra = if slack { RTT / 2.0 } else { 0.0 };
                assert!(
                    lost >= expected - 1e-6 && lost < expected + extra + 0.002,
                    "{what}: lost {lost} s, expected {rtts} RTT = {expected} s"
                );
                lost_total += lost;
            }
            let grown = loading(&r) - none;
            assert!(
                grown >= lost_total - 1e-6,
                "{what}: the loading delay grew by {grown} s, less than the {lost_total} s lost"
            );
        }
    }
}

#[test]
fn repeated_handovers_need_their_period() {
    let e =
        sim_core::scenario::parse_str(&scenario("tcp", "", 2).replace("every = \"500ms\"\n", ""))
            .expect_err("repeat without every");
    assert_eq!(e.field, "topology.handovers[0].every", "{e}");
}
