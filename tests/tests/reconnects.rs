//! `reconnects` with `on = "address_change"` (issue 11) end to end, on every transport: at a
//! handover that changes the client's address, TCP and SCTP (and QUIC without migration)
//! abandon the connection and fetch the rest over a new one from the new address; QUIC
//! with `migration` keeps its connection. On a lossless path the time lost — from the
//! change to the client's next read — is a whole number of round trips the handshakes
//! dictate (`../shared/NOTES-rfc.md` §5; docs/workloads.md):
//!
//! | transport | new connection | lost |
//! |---|---|---|
//! | TCP + TLS 1.3 | SYN/SYN-ACK, TLS flight, request with Finished, 2nd flight | 4 RTT |
//! | TCP + TLS 1.2 | SYN/SYN-ACK, two TLS round trips, request, 2nd flight | 5 RTT |
//! | TCP, no TLS | SYN/SYN-ACK, request, 2nd flight | 3 RTT |
//! | SCTP | INIT/INIT-ACK, COOKIE-ECHO + request | 2 RTT |
//! | QUIC resumed, 1-RTT | Initial/Handshake, request with Finished | 2 RTT |
//! | QUIC resumed, 0-RTT | request in 0-RTT | 1 RTT |
//! | QUIC migration | PING on the new path; data lost on the old links repaired | 2 RTT |
//!
//! TCP's "2nd flight": the response's first HTTP/2 DATA frame (16384 B + 9 B header, one
//! TLS record) is delivered whole (docs/tcp.md: a record is delivered when the byte stream
//! is in order up to its end) and is longer than the 10-segment initial window (RFC 6928,
//! 10 × 1448 B), so its end comes with the second flight, one RTT after the first.
//!
//! QUIC can lose up to half an RTT more: its server paces, so until the new connection's
//! (or the migrated path's) first packet reaches it half an RTT after the change, the
//! old connection keeps sending towards the old address; in a `two_hosts` network those
//! packets cross the one link and are dropped at the client's host, delaying the new
//! connection's packets queued behind them by at most that half RTT of link time. TCP's
//! server is ACK-clocked and sends nothing once the ACKs stop; SCTP likewise.

use sim_core::metrics::workload::{AddressChangeReport, ConnectionStatus};
use sim_core::metrics::{RunResult, RunStatus};

const RTT: f64 = 0.05;

/// A `bytes` download over a 100 Mbit/s, 25 ms path (RTT 50 ms) whose client gets a new
/// IP address at 1 s (same links after the change).
fn scenario(transport: &str, keys: &str, bytes: &str, extra_workload: &str) -> String {
    format!(
        r#"
name = "reconnects-address-change"
seed = 1
[sim]
time_limit = "60s"
[topology]
kind = "two_hosts"
link = {{ rate = "100Mbps", delay = "25ms" }}
[[topology.handovers]]
at = "1s"
address = "ip"
link = {{ rate = "100Mbps", delay = "25ms" }}
[[flows]]
transport = "{transport}"
{keys}
workload = {{ kind = "reconnects", on = "address_change", bytes = "{bytes}" {extra_workload} }}
"#
    )
}

use quicsim_tests::support::run_scenario as run;

use quicsim_tests::support::client_workload as client;

fn change(r: &RunResult) -> AddressChangeReport {
    let rep = client(r).reconnects.expect("a reconnects report");
    assert_eq!(rep.address_changes.len(), 1, "{:?}", rep.address_changes);
    rep.address_changes[0].clone()
}

/// The client read exactly `bytes` over its connections, the abandoned one failing at the
/// change and the last one completing.
fn check_transfer(r: &RunResult, bytes: u64, connections: usize, transport: &str) {
    assert_eq!(r.status, RunStatus::Completed, "run status");
    let w = client(r);
    assert_eq!(w.connections.len(), connections);
    let read: u64 = w
        .connections
        .iter()
        .map(|c| c.metrics.transport().stream_bytes_read)
        .sum();
    assert_eq!(read, bytes, "every byte read once over the connections");
    let last = w.connections.last().unwrap();
    assert_eq!(last.status, ConnectionStatus::Completed);
    for c in &w.connections[..connections - 1] {
        assert_eq!(c.status, ConnectionStatus::Failed);
        assert_eq!(c.close_reason.as_deref(), Some("address_change"));
        assert_eq!(c.close_secs, Some(1.0));
    }
    assert!(w.reconnects.unwrap().transfer_secs.is_some());
    let s = r.flows[0].endpoints[1].workload().unwrap();
    assert_eq!(s.connections.len(), connections);
    // The server's sequence completed too (the old connection abandoned, not failed).
    // SCTP: not checked — its server's last DATA is often still unacknowledged when the
    // client's SHUTDOWN arrives, so its report says `Failed` with or without address
    // changes (a separate finding, docs/workloads.md).
    if transport != "sctp" {
        let t = r.flows[0].endpoints[1].transport().unwrap();
        assert!(
            t.completion_secs.is_some(),
            "{transport}: server completion"
        );
    }
}

/// `lost` is `rtts` round trips plus serialisation at 100 Mbit/s (a few 0.1 ms) and, for
/// QUIC (`slack`), at most half an RTT behind the old connection's paced packets.
fn assert_rtts(lost: f64, rtts: f64, slack: bool, what: &str) {
    let expected = rtts * RTT;
    let extra = if slack { RTT / 2.0 } else { 0.0 };
    assert!(
        lost >= expected - 1e-6 && lost < expected + extra + 0.002,
        "{what}: lost {lost} s, expected {rtts} RTT = {expected} s"
    );
}

#[test]
fn tcp_and_sctp_reconnect_at_an_address_change_losing_their_handshake_rtts() {
    for (transport, keys, rtts) in [
        ("tcp", r#"tcp = { tls = "1.3" }"#, 4.0),
        ("tcp", r#"tcp = { tls = "1.2" }"#, 5.0),
        ("tcp", r#"tcp = { tls = "none" }"#, 3.0),
        ("sctp", "", 2.0),
    ] {
        let r = run(&scenario(transport, keys, "20MB", ""));
        check_transfer(&r, 20_000_000, 2, transport);
        let c = change(&r);
        assert_eq!(c.action, "reconnected", "{transport} {keys}");
        assert!(c.read_bytes > 1_000_000 && c.read_bytes < 20_000_000);
        assert_rtts(
            c.lost_secs.unwrap(),
            rtts,
            false,
            &format!("{transport} {keys}"),
        );
        // The rest came over a connection from the new address.
        let w = client(&r);
        assert_ne!(w.connections[0].local, w.connections[1].local);
        assert_eq!(
            w.connections[1].metrics.transport().stream_bytes_read,
            20_000_000 - w.connections[0].metrics.transport().stream_bytes_read
        );
    }
}

#[test]
fn quic_without_migration_resumes_at_an_address_change() {
    for (keys, rtts, zero_rtt) in [
        ("quic = { zero_rtt = true }", 1.0, true),
        ("quic = { zero_rtt = false }", 2.0, false),
    ] {
        for rate in ["50Mbps", "100Mbps", "200Mbps"] {
            let r = run(&scenario("quic", keys, "20MB", "").replace("100Mbps", rate));
            check_transfer(&r, 20_000_000, 2, "quic");
            let c = change(&r);
            assert_eq!(c.action, "reconnected");
            assert_rtts(c.lost_secs.unwrap(), rtts, true, &format!("{keys} {rate}"));
        }
        let r = run(&scenario("quic", keys, "20MB", ""));
        let w = client(&r);
        let second = &w.connections[1];
        assert!(second.resumed, "the new connection resumes the session");
        assert_eq!(second.zero_rtt_accepted.is_some(), zero_rtt);
    }
}

#[test]
fn quic_with_migration_keeps_its_connection() {
    let r = run(&scenario(
        "quic",
        r#"quic = { migration = { policy = "reset" } }"#,
        "20MB",
        "",
    ));
    assert_eq!(r.status, RunStatus::Completed);
    let w = client(&r);
    assert_eq!(w.connections.len(), 1, "no reconnection");
    assert_eq!(w.connections[0].status, ConnectionStatus::Completed);
    assert_eq!(
        w.connections[0].metrics.transport().stream_bytes_read,
        20_000_000
    );
    let c = change(&r);
    assert_eq!(c.action, "migrated");
    // The client's PING from the new address reaches the server half a round trip
    // later; the server answers on the new path (RFC 9000 §9.3), its data arriving a
    // round trip after the change at the earliest. Data in flight on the old links was
    // lost at the handover and blocks in-order reading until it is repaired: the
    // packet-threshold rule sees later packets acknowledged at 1.5 RTT (RFC 9002 §6.1.1)
    // and the retransmission arrives at 2 RTT.
    assert_rtts(c.lost_secs.unwrap(), 2.0, true, "migration");
}

#[test]
fn reconnections_stop_at_the_limit_and_finished_transfers_do_not_reconnect() {
    // reconnections = 0: the change does not reconnect; the old connection's answers go
    // to the old address and the transfer does not complete.
    let r = run(&scenario("tcp", "", "20MB", ", reconnections = 0"));
    let c = change(&r);
    assert_eq!(c.action, "none");
    assert_eq!(c.lost_secs, None);
    let w = client(&r);
    assert_eq!(w.connections.len(), 1);
    assert!(w.reconnects.unwrap().transfer_secs.is_none());
    // A transfer that ended before the change: one connection; the run ended first.
    let r = run(&scenario("sctp", "", "100KB", ""));
    check_transfer(&r, 100_000, 1, "sctp");
    assert!(client(&r).reconnects.unwrap().address_changes.is_empty());
    // A transfer that ended before the change while the run goes on (a second flow
    // lasts past it): the change is recorded, nothing reconnects.
    let text = scenario("tcp", "", "100KB", "")
        + "[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nduration = \"2s\"\n";
    let r = run(&text);
    assert_eq!(client(&r).connections.len(), 1);
    let c = change(&r);
    assert_eq!(
        (c.action.as_str(), c.read_bytes, c.lost_secs),
        ("none", 100_000, None)
    );
}

#[test]
fn address_change_without_a_handover_of_the_pair_is_an_error() {
    let text = scenario("tcp", "", "1MB", "").replace("address = \"ip\"", "address = \"none\"");
    let e = sim_core::scenario::parse_str(&text).unwrap_err();
    assert_eq!(e.field, "flows[0].workload.on", "{e}");
}

/// A reconnecting transfer completed only when every part did: with `on = "close"`, a
/// first connection whose address changes during its transfer fails (QUIC must not
/// migrate before its handshake is confirmed, RFC 9000 §9; here it fails at its idle
/// timeout) and the second part alone does not make `transfer_secs` (it did before: only
/// the last connection was looked at; found by tests/tests/delivery.rs).
#[test]
fn a_failed_part_means_the_transfer_did_not_complete() {
    let text = scenario(
        "quic",
        r#"quic = { migration = { policy = "reset" } }"#,
        "20KB",
        "",
    )
    .replace("on = \"address_change\"", "on = \"close\"")
    .replace("at = \"1s\"", "at = \"100ms\"")
    .replace("100Mbps", "20Mbps");
    let r = run(&text);
    let w = client(&r);
    assert_eq!(w.connections.len(), 2);
    assert_eq!(w.connections[0].status, ConnectionStatus::Failed);
    assert_eq!(w.connections[1].status, ConnectionStatus::Completed);
    assert_eq!(w.reconnects.unwrap().transfer_secs, None);
}
