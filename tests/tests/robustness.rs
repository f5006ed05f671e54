//! Regression tests of issue 15 (reliability): inputs that used to panic, hang, run to the
//! time limit or be silently ignored. Each test names the item of the issue it covers.

use sim_core::config::Config;
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::trace::{ProtocolPacket, TraceEvent, TraceRecord, TraceSource};
use std::collections::BTreeMap;

fn config(text: &str) -> Config {
    sim_core::scenario::parse_str(text)
        .unwrap_or_else(|e| panic!("scenario must parse: {e}"))
        .base
}

/// Runs `cfg` and returns the result with the largest UDP payload any endpoint sent (the
/// packets of one datagram summed).
fn run_max_datagram(cfg: &Config) -> (RunResult, u64) {
    let mut per_datagram: BTreeMap<(String, u64), u64> = BTreeMap::new();
    let mut tracer = |r: &TraceRecord| {
        if let (
            TraceSource::Endpoint(id),
            TraceEvent::PacketSent {
                packet,
                datagram_id,
                ..
            },
        ) = (&r.source, &r.event)
        {
            if let ProtocolPacket::Quic(p) = packet {
                *per_datagram
                    .entry((format!("{id:?}"), *datagram_id))
                    .or_default() += p.size;
            }
        }
    };
    let res = sim_core::runner::run_traced(cfg, 1, &mut tracer).expect("runs");
    let max = per_datagram.values().copied().max().unwrap_or(0);
    (res, max)
}

/// Item 4: a long-header packet whose Length needs a 4-byte varint (above 16383 bytes)
/// stays within the datagram's room (it used to overrun by 2 bytes: a debug assertion, or
/// a datagram above `max_udp_payload` in release).
#[test]
fn long_header_packets_above_16383_bytes_fit_their_datagram() {
    for (max, keys) in [
        (20000, "client_hello_size = 20000"),
        (20000, "server_handshake_size = 40000"),
        (16400, "client_hello_size = 20000"),
        (16389, "server_handshake_size = 40000"),
        (65527, "server_handshake_size = 100000"),
    ] {
        let cfg = config(&format!(
            r#"
[topology]
kind = "two_hosts"
[[flows]]
kind = "quic_bulk"
bytes = "100KB"
max_udp_payload = {max}
{keys}
"#
        ));
        let (res, largest) = run_max_datagram(&cfg);
        assert_eq!(res.status, RunStatus::Completed, "{keys} at {max}");
        assert!(largest <= max, "{keys}: a datagram of {largest} > {max}");
        assert!(largest > 16383, "{keys}: the case is exercised ({largest})");
    }
}
