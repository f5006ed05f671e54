//! BBRv1 (`cc = "bbr1"`) against the statements of its specification
//! (draft-cardwell-iccrg-bbr-congestion-control-00; Cardwell et al., ACM Queue 2016), for
//! QUIC and TCP. The bounds come from the draft's rules, stated before the runs, not
//! fitted to them:
//! - on a clean path with a deep drop-tail buffer, delivery settles at the bottleneck rate
//!   and the flight at about one to two BDP (cwnd_gain 2 caps it at 2 BDP + quanta, §4.2.3.2,
//!   §4.3.4), so the queue stays below one BDP, where CUBIC fills the buffer (it only backs
//!   off on loss);
//! - ProbeRTT (cwnd 4 packets, §4.3.5) comes back every RTpropFilterLen = 10 s when no lower
//!   RTT is seen (plus its own 200 ms and a round);
//! - under random loss (1 %, 5 %) BBRv1's delivery stays near the bottleneck rate (its model
//!   ignores loss, §4.2.3.4 only conserves packets for a round) while CUBIC's collapses.
//!
//! Startup's exit rule, the Drain / ProbeBW / ProbeRTT transitions and the loss response are
//! unit-tested in `sim-core/src/cc/bbr1.rs`, the rate sample's hand-worked example in
//! `sim-core/src/cc/rate_sample.rs`.
//!
//! BBRv3 (`cc = "bbr3"`, draft-ietf-ccwg-bbr-06; its state machine is unit-tested in
//! `sim-core/src/cc/bbr3.rs`), from the draft's statements:
//! - on a clean path delivery settles at the bottleneck rate (§3.1: full throughput);
//! - its model responds to loss (§5.5.10): a round with more than `LossThresh` = 2 % loss
//!   while probing bounds `inflight_longterm`, and every round with loss outside a probe
//!   cuts the short-term model by `Beta` = 0.7, so at 5-10 % random loss it backs off where
//!   BBRv1 does not, while 1 % (below the threshold; §5.3.3.8.3 designs the probing time
//!   scale to tolerate 1 % loss) keeps it near the bottleneck rate;
//! - as for every controller, goodput does not increase with the loss rate.

use sim_core::metrics::{EndpointMetrics, RunResult};
use sim_core::Config;

/// 10 Mbit/s, 40 ms RTT: BDP = 50 000 bytes.
const RATE_BPS: f64 = 10e6;
const BDP: f64 = 50_000.0;

fn parse(toml: &str) -> Config {
    sim_core::scenario::parse_str(toml)
        .unwrap_or_else(|e| panic!("{e}\n{toml}"))
        .base
}

/// The flow's keys for `transport` with controller `cc`.
fn flow_keys(transport: &str, cc: &str) -> String {
    match transport {
        "quic" => {
            format!("transport = \"quic\"\nquic = {{ cc = \"{cc}\", stream_window = \"1GB\" }}")
        }
        _ => format!("transport = \"tcp\"\n[flows.tcp]\ncc = \"{cc}\""),
    }
}

/// A long bulk download over 10 Mbit/s, 20 ms each way, an 8-BDP drop-tail queue,
/// `seconds` long, with the series sampled every 100 ms.
fn clean_run(transport: &str, cc: &str, seconds: u64) -> RunResult {
    let keys = flow_keys(transport, cc);
    let text = format!(
        r#"
name = "bbr-clean"
seed = 1
[sim]
time_limit = "{seconds}s"
[output]
series = true
sample_interval = "100ms"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "20ms", queue = "8BDP" }}
[[flows]]
workload = {{ kind = "bulk", bytes = "10GB" }}
{keys}
"#
    );
    sim_core::run(&parse(&text), 1).expect("runs")
}

/// Series columns as `(time_s, value)` rows.
fn column(r: &RunResult, name: &str) -> Vec<(f64, f64)> {
    let s = r.series.as_ref().expect("series");
    let c = s
        .columns
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", s.columns));
    s.rows.iter().map(|row| (row[0], row[c])).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The steady-state figures of a clean run: delivery rate (bit/s of stream payload) over
/// `from`..end, median flight and median bottleneck queue (bytes) over the same span, and
/// the start times of the episodes with the sender's window at most `min_cwnd`.
struct Clean {
    rate_bps: f64,
    inflight: f64,
    queue: f64,
    probe_rtt_starts: Vec<f64>,
}

fn clean(transport: &str, cc: &str, seconds: u64, from: f64, min_cwnd: f64) -> Clean {
    let r = clean_run(transport, cc, seconds);
    let delivered = column(&r, "flow0.delivered_bytes");
    let a = delivered.iter().find(|(t, _)| *t >= from).expect("samples");
    let b = delivered.last().unwrap();
    let rate_bps = (b.1 - a.1) * 8.0 / (b.0 - a.0);
    // ep1: the server, the data sender.
    let inflight = median(
        column(&r, "flow0.ep1.bytes_in_flight")
            .into_iter()
            .filter(|(t, _)| *t >= from)
            .map(|(_, v)| v)
            .collect(),
    );
    let queue = median(
        column(&r, "reverse.queue_bytes")
            .into_iter()
            .filter(|(t, _)| *t >= from)
            .map(|(_, v)| v)
            .collect(),
    );
    let mut probe_rtt_starts = Vec::new();
    let mut low = false;
    for (t, cwnd) in column(&r, "flow0.ep1.cwnd") {
        let now_low = cwnd <= min_cwnd;
        if now_low && !low && t > 1.0 {
            probe_rtt_starts.push(t);
        }
        low = now_low;
    }
    Clean {
        rate_bps,
        inflight,
        queue,
        probe_rtt_starts,
    }
}

fn check_clean(transport: &str, mss: f64) {
    let seconds = 62;
    let bbr = clean(transport, "bbr1", seconds, 5.0, 4.0 * mss);
    let cubic = clean(transport, "cubic", seconds, 5.0, 4.0 * mss);
    eprintln!(
        "{transport} bbr1: {:.3} Mbit/s, median inflight {:.0} B ({:.2} BDP), median queue {:.0} B \
         ({:.1} ms), ProbeRTT at {:?}",
        bbr.rate_bps / 1e6,
        bbr.inflight,
        bbr.inflight / BDP,
        bbr.queue,
        bbr.queue * 8.0 / RATE_BPS * 1e3,
        bbr.probe_rtt_starts
    );
    eprintln!(
        "{transport} cubic: {:.3} Mbit/s, median inflight {:.0} B ({:.2} BDP), median queue {:.0} B ({:.1} ms)",
        cubic.rate_bps / 1e6,
        cubic.inflight,
        cubic.inflight / BDP,
        cubic.queue,
        cubic.queue * 8.0 / RATE_BPS * 1e3
    );
    // Delivery at the bottleneck rate: payload is at least 90 % of the link's bits
    // (headers take ~4-5 %; ProbeRTT's 200 ms of 4 packets every 10 s ~2 %).
    assert!(
        bbr.rate_bps >= 0.90 * RATE_BPS,
        "{transport}: {}",
        bbr.rate_bps
    );
    // Flight between one and two BDP (cwnd = 2 BDP + quanta caps it).
    assert!(
        bbr.inflight >= 1.0 * BDP && bbr.inflight <= 2.0 * BDP,
        "{transport}: median inflight {}",
        bbr.inflight
    );
    // So the queue stays under one BDP, and far below CUBIC's, which fills the buffer.
    assert!(bbr.queue <= BDP, "{transport}: median queue {}", bbr.queue);
    assert!(
        cubic.queue >= 4.0 * bbr.queue.max(0.25 * BDP),
        "{transport}: CUBIC's median queue {} vs BBR's {}",
        cubic.queue,
        bbr.queue
    );
    // ProbeRTT about every 10 s: 5 or 6 episodes in 62 s, 10 to 11 s apart (10 s of
    // filter, then the 200 ms and a round of ProbeRTT itself, before the stamp renews).
    let starts = &bbr.probe_rtt_starts;
    assert!(
        (5..=6).contains(&starts.len()),
        "{transport}: ProbeRTT at {starts:?}"
    );
    for w in starts.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            (10.0..=11.0).contains(&gap),
            "{transport}: ProbeRTT {gap} s apart ({starts:?})"
        );
    }
}

#[test]
fn quic_bbr1_on_a_clean_path_fills_the_pipe_not_the_buffer_and_probes_rtt_every_10_s() {
    check_clean("quic", 1250.0);
}

#[test]
fn tcp_bbr1_on_a_clean_path_fills_the_pipe_not_the_buffer_and_probes_rtt_every_10_s() {
    check_clean("tcp", 1448.0);
}

/// Goodput (bit/s) of a 10 MB download with `loss` random loss each way, same path.
fn lossy_goodput(transport: &str, cc: &str, loss: &str) -> f64 {
    goodput(transport, cc, &format!("loss = \"{loss}\""), "")
}

/// Goodput (bit/s) of a 10 MB download over the path with `link_keys` added to the link
/// and `extra` after it (a `reverse` table).
fn goodput(transport: &str, cc: &str, link_keys: &str, extra: &str) -> f64 {
    let keys = flow_keys(transport, cc);
    let text = format!(
        r#"
name = "bbr-loss"
seed = 1
[sim]
time_limit = "1000s"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "20ms", queue = "8BDP", {link_keys} }}
{extra}
[[flows]]
workload = {{ kind = "bulk", bytes = "10MB" }}
{keys}
"#
    );
    let r = sim_core::run(&parse(&text), 1).expect("runs");
    let client = r.flows[0]
        .endpoints
        .iter()
        .filter_map(EndpointMetrics::transport)
        .find(|m| m.role == "client")
        .expect("client");
    client.goodput_bps.expect("completed")
}

fn check_loss(transport: &str) {
    for loss in ["1%", "5%"] {
        let bbr = lossy_goodput(transport, "bbr1", loss);
        let cubic = lossy_goodput(transport, "cubic", loss);
        eprintln!(
            "{transport} {loss}: bbr1 {:.3} Mbit/s, cubic {:.3} Mbit/s",
            bbr / 1e6,
            cubic / 1e6
        );
        // BBRv1 stays near the bottleneck rate (its loss response is one round of packet
        // conservation; the model does not shrink) ...
        assert!(bbr >= 0.80 * RATE_BPS, "{transport} {loss}: bbr1 {bbr}");
        // ... CUBIC's window follows the loss rate (RFC 9438 §5's response function),
        // far below the path's BDP at these rates: at most half of BBRv1's goodput.
        assert!(
            cubic <= 0.5 * bbr,
            "{transport} {loss}: cubic {cubic} vs bbr1 {bbr}"
        );
    }
}

#[test]
fn quic_bbr1_holds_the_bottleneck_rate_under_random_loss_where_cubic_collapses() {
    check_loss("quic");
}

#[test]
fn tcp_bbr1_holds_the_bottleneck_rate_under_random_loss_where_cubic_collapses() {
    check_loss("tcp");
}

/// Goodput (bit/s) of a 10 MB download with `loss` random loss on the data path only
/// (server → client, `reverse`), as a sender-side netem would apply it.
fn data_path_goodput(transport: &str, loss: f64) -> f64 {
    goodput(
        transport,
        "bbr1",
        "loss = 0",
        &format!("reverse = {{ loss = {loss} }}"),
    )
}

/// Cardwell et al. (ACM Queue 2016, "BBR vs. CUBIC under random loss"): BBRv1's goodput
/// holds up to ~15 % random loss. What a lossy link can deliver is (1 − p) of its rate;
/// BBRv1 keeps sending at the bottleneck rate, so it delivers at least 85 % of that
/// (headers ~4 %, Startup and the handshake in a 10 MB transfer, ProbeRTT ~2 %).
#[test]
fn bbr1_delivers_near_the_lossy_bottleneck_rate_up_to_15_percent_data_path_loss() {
    for transport in ["quic", "tcp"] {
        for p in [0.10, 0.15] {
            let g = data_path_goodput(transport, p);
            eprintln!(
                "{transport} {p}: bbr1 {:.3} Mbit/s ({:.2} of (1 - p) x rate)",
                g / 1e6,
                g / ((1.0 - p) * RATE_BPS)
            );
            assert!(
                g >= 0.85 * (1.0 - p) * RATE_BPS,
                "{transport} {p}: bbr1 {g}"
            );
        }
    }
}

/// The time series carry the model a BBR sender steers by (issue 30: "qlog and the series
/// carry BBR's state, bandwidth and min-RTT estimates"): the bandwidth estimate settles at
/// the bottleneck rate less the headers it does not count, the min-RTT estimate at the path's
/// 40 ms round trip plus one packet's serialisation, and the state goes Startup -> ProbeBW
/// and visits ProbeRTT (codes: `sim_core::cc::MODEL_STATES`). A window-based sender has no
/// such columns.
fn check_model_series(transport: &str) {
    let r = clean_run(transport, "bbr1", 14);
    let late = |name: &str| -> Vec<f64> {
        column(&r, name)
            .into_iter()
            .filter(|(t, _)| *t >= 3.0)
            .map(|(_, v)| v)
            .collect()
    };
    let bw = median(late("flow0.ep1.bbr_bw_bps"));
    assert!(
        (0.9 * RATE_BPS..=1.0 * RATE_BPS).contains(&bw),
        "{transport}: bandwidth estimate {bw} bit/s"
    );
    let min_rtt = median(late("flow0.ep1.bbr_min_rtt_s"));
    assert!(
        (0.040..0.045).contains(&min_rtt),
        "{transport}: min RTT {min_rtt} s"
    );
    let state = |name: &str| {
        sim_core::cc::MODEL_STATES
            .iter()
            .position(|s| *s == name)
            .unwrap() as f64
    };
    let states: Vec<f64> = column(&r, "flow0.ep1.bbr_state")
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert_eq!(states[0], state("startup"), "{transport}");
    assert!(
        states.contains(&state("probe_bw")),
        "{transport}: {states:?}"
    );
    assert!(
        states.contains(&state("probe_rtt")),
        "{transport}: {states:?}"
    );
    let cubic = clean_run(transport, "cubic", 1);
    let cols = &cubic.series.as_ref().unwrap().columns;
    assert!(!cols.iter().any(|c| c.contains("bbr_")), "{cols:?}");
}

#[test]
fn quic_bbr1_series_carry_its_bandwidth_min_rtt_and_state() {
    check_model_series("quic");
}

#[test]
fn tcp_bbr1_series_carry_its_bandwidth_min_rtt_and_state() {
    check_model_series("tcp");
}

/// Random loss in both directions (data and ACKs, 10 %): BBRv1 still delivers at least 85 %
/// of (1 − p) × rate over TCP as over QUIC, and its min-RTT estimate never reads below the
/// path's 40 ms propagation round trip. Before Karn's rule was applied to the rate sample's
/// RTT (`RateSample::karn_rtt`, RFC 6298 §3), an ACK of a spuriously retransmitted TCP
/// segment (its first ACK lost, the segment sent again, the second ACK answering the
/// original) was timed from the retransmission: BBR's RTprop fell to 5.7 ms, its window to
/// 2 × 5.7 ms of bandwidth, and TCP delivered 3.8 Mbit/s where QUIC delivered 8.3.
#[test]
fn bbr1_under_loss_both_ways_keeps_its_min_rtt_and_rate_over_tcp_as_over_quic() {
    let p = 0.10;
    for transport in ["quic", "tcp"] {
        let g = lossy_goodput(transport, "bbr1", "10%");
        eprintln!(
            "{transport} both ways {p}: bbr1 {:.3} Mbit/s ({:.2} of (1 - p) x rate)",
            g / 1e6,
            g / ((1.0 - p) * RATE_BPS)
        );
        assert!(g >= 0.85 * (1.0 - p) * RATE_BPS, "{transport}: bbr1 {g}");
        let keys = flow_keys(transport, "bbr1");
        let text = format!(
            r#"
name = "bbr-both"
seed = 1
[sim]
time_limit = "20s"
[output]
series = true
sample_interval = "50ms"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "20ms", queue = "8BDP", loss = 0.1 }}
[[flows]]
workload = {{ kind = "bulk", bytes = "10GB" }}
{keys}
"#
        );
        let r = sim_core::run(&parse(&text), 1).expect("runs");
        let low = column(&r, "flow0.ep1.bbr_min_rtt_s")
            .into_iter()
            .map(|(_, v)| v)
            .filter(|v| !v.is_nan())
            .fold(f64::INFINITY, f64::min);
        assert!(low >= 0.040, "{transport}: min-RTT estimate {low} s");
    }
}

// ---- BBRv3 ----

#[test]
fn bbr3_on_a_clean_path_settles_at_the_bottleneck_rate() {
    for (transport, mss) in [("quic", 1250.0), ("tcp", 1448.0)] {
        let c = clean(transport, "bbr3", 20, 5.0, 4.0 * mss);
        eprintln!(
            "{transport} bbr3: {:.3} Mbit/s, median inflight {:.0} B ({:.2} BDP), median queue {:.0} B \
             ({:.1} ms), window at most 4 packets at {:?}",
            c.rate_bps / 1e6,
            c.inflight,
            c.inflight / BDP,
            c.queue,
            c.queue * 8.0 / RATE_BPS * 1e3,
            c.probe_rtt_starts
        );
        // Payload at least 90 % of the link's bits (headers ~4-5 %; ProbeRTT's 200 ms at
        // half a BDP every 5 s ~2 %, §5.3.4.2).
        assert!(c.rate_bps >= 0.90 * RATE_BPS, "{transport}: {}", c.rate_bps);
    }
}

/// Goodput (bit/s) of a `bytes` download over 10 Mbit/s with `delay_ms` each way, an 8-BDP
/// queue and random loss `p` on the data path only (server → client).
fn data_loss_goodput(transport: &str, cc: &str, delay_ms: u64, p: f64, bytes: &str) -> f64 {
    let keys = flow_keys(transport, cc);
    let text = format!(
        r#"
name = "bbr3-loss"
seed = 1
[sim]
time_limit = "1000s"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "{delay_ms}ms", queue = "8BDP", loss = 0 }}
reverse = {{ loss = {p} }}
[[flows]]
workload = {{ kind = "bulk", bytes = "{bytes}" }}
{keys}
"#
    );
    let r = sim_core::run(&parse(&text), 1).expect("runs");
    let client = r.flows[0]
        .endpoints
        .iter()
        .filter_map(EndpointMetrics::transport)
        .find(|m| m.role == "client")
        .expect("client");
    client.goodput_bps.expect("completed")
}

/// §5.5.10: above the 2 % loss threshold BBRv3 backs off (BBRv1 does not); at 1 % it stays
/// near the bottleneck rate.
#[test]
fn bbr3_backs_off_above_the_loss_threshold_where_bbr1_does_not() {
    for transport in ["quic", "tcp"] {
        let at = |cc: &str, p: f64| data_loss_goodput(transport, cc, 20, p, "10MB");
        let (v3_1, v1_1) = (at("bbr3", 0.01), at("bbr1", 0.01));
        eprintln!(
            "{transport} 1 %: bbr3 {:.3} Mbit/s, bbr1 {:.3} Mbit/s",
            v3_1 / 1e6,
            v1_1 / 1e6
        );
        assert!(v3_1 >= 0.80 * RATE_BPS, "{transport} 1 %: bbr3 {v3_1}");
        for p in [0.05, 0.10] {
            let (v3, v1) = (at("bbr3", p), at("bbr1", p));
            eprintln!(
                "{transport} {p}: bbr3 {:.3} Mbit/s, bbr1 {:.3} Mbit/s ({:.2})",
                v3 / 1e6,
                v1 / 1e6,
                v3 / v1
            );
            assert!(v3 <= 0.75 * v1, "{transport} {p}: bbr3 {v3} vs bbr1 {v1}");
        }
    }
}

/// The project's rule for controllers: goodput does not increase with the random loss
/// rate (0, 1, 2, 5, 10 % on the data path), for QUIC and TCP, at 40 ms and 100 ms RTT.
#[test]
fn bbr3_goodput_is_non_increasing_in_the_loss_rate() {
    for transport in ["quic", "tcp"] {
        for delay_ms in [20, 50] {
            let g: Vec<f64> = [0.0, 0.01, 0.02, 0.05, 0.10]
                .iter()
                .map(|&p| data_loss_goodput(transport, "bbr3", delay_ms, p, "5MB"))
                .collect();
            eprintln!(
                "{transport} RTT {} ms: bbr3 goodput at 0/1/2/5/10 % loss: {:.3?} Mbit/s",
                2 * delay_ms,
                g.iter().map(|x| x / 1e6).collect::<Vec<_>>()
            );
            for w in g.windows(2) {
                assert!(w[1] <= w[0], "{transport} {delay_ms} ms: {g:?}");
            }
        }
    }
}
