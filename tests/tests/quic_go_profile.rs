//! `profile = "quic-go"` end to end: quic-go's hybrid slow start (`hystart_flavor =
//! "hybrid_slow_start"`, Chromium's `HybridSlowStart`) leaves slow start on the queueing
//! delay of a deep bottleneck queue, before any loss, where slow start left only on loss
//! overshoots the queue.

use quicsim_tests::support::{quic_metrics, run_scenario};

/// 20 MB over 100 Mbit/s, 20 ms each way, a 2000-packet queue (about 2.4 MB: 190 ms of
/// queueing), QUIC with the quic-go profile and receive windows that never limit.
fn scenario(extra: &str) -> String {
    format!(
        r#"
name = "quic-go-slow-start"
[topology]
kind = "two_hosts"
link = {{ rate = "100Mbps", delay = "20ms", queue = {{ packets = 2000 }} }}
[[flows]]
transport = "quic"
workload = {{ kind = "bulk", bytes = "20MB" }}
quic = {{ profile = "quic-go", stream_window = "16MiB", max_stream_window = "16MiB", connection_window = "24MiB", max_connection_window = "24MiB"{extra} }}
"#
    )
}

#[test]
fn hybrid_slow_start_leaves_before_the_queue_overflows() {
    let r = run_scenario(&scenario(""));
    let server = quic_metrics(&r, 0, "server");
    assert_eq!(
        server.transport.packets_lost, 0,
        "left slow start on the delay increase"
    );
    let r = run_scenario(&scenario(", hystart = false"));
    let server = quic_metrics(&r, 0, "server");
    assert!(
        server.transport.packets_lost > 100,
        "slow start until the queue overflows: {} lost",
        server.transport.packets_lost
    );
}
