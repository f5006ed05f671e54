//! ECN (issue 30 item 3): a marking bottleneck (step threshold) marks the ECN-capable
//! packets of a QUIC or TCP bulk transfer CE instead of dropping them; the endpoints report
//! the marks (QUIC ACK frames with ECN counts, RFC 9000 §19.3.2; TCP ECE / CWR, RFC 3168
//! §6.1) and the sender reduces its window at most once per round trip (RFC 9002 §7.1,
//! RFC 3168 §6.1.2). ECN off is the run of before, byte for byte.

use sim_core::cc::{CongestionController, Cubic, CubicParams, NewReno};
use sim_core::metrics::{EndpointMetrics, RunResult};
use sim_core::time::SimTime;

/// A bulk download of `bytes` over `transport` on a 20 Mbit/s, 40 ms RTT path whose data
/// direction (server -> client) has the `ecn` marking table `marking` ("" for none);
/// `keys`: the transport's table.
fn scenario(transport: &str, bytes: &str, marking: &str, keys: &str) -> String {
    let reverse = if marking.is_empty() {
        String::new()
    } else {
        format!("reverse = {{ ecn = {marking} }}")
    };
    format!(
        r#"
name = "marking-bottleneck"
[sim]
time_limit = "60s"
[topology]
kind = "two_hosts"
link = {{ rate = "20Mbps", delay = "20ms", queue = "4BDP" }}
{reverse}
[[flows]]
transport = "{transport}"
workload = {{ kind = "bulk", bytes = "{bytes}" }}
{keys}
"#
    )
}

/// No ECN key (`ecn`, `ecn_marked`, ...) nor `aqm` drop counter in a run's JSON.
fn assert_no_ecn_keys(json: &str) {
    for key in ["\"ecn", "\"aqm\""] {
        if let Some(i) = json.find(key) {
            panic!(
                "{key} in {}",
                &json[i.saturating_sub(200)..(i + 100).min(json.len())]
            );
        }
    }
}

fn run(text: &str) -> RunResult {
    let cfg = sim_core::scenario::parse_str(text).unwrap().base;
    sim_core::run(&cfg, 1).unwrap()
}

const STEP: &str = r#"{ mode = "step", threshold = "5ms" }"#;
/// A step at 20 ms (half the 40 ms BDP): after CUBIC's reduction to 0.7 the window
/// (0.7 × 1.5 BDP) still fills the path (RFC 9438 §4.6), so the throughput stays at the
/// bottleneck's.
const STEP_20: &str = r#"{ mode = "step", threshold = "20ms" }"#;

/// The server's (data sender's) endpoint metrics.
fn server(r: &RunResult) -> &EndpointMetrics {
    &r.flows[0].endpoints[1]
}

fn reverse_link(r: &RunResult) -> &sim_core::metrics::LinkReport {
    r.links.iter().find(|l| l.name == "reverse").unwrap()
}

#[test]
fn quic_over_a_marking_bottleneck_loses_nothing_and_reduces_once_per_round_trip() {
    let r = run(&scenario("quic", "20MB", STEP_20, "quic = { ecn = true }"));
    assert_eq!(r.status.as_str(), "completed");
    let link = reverse_link(&r);
    let marked = link.ecn_marked.unwrap();
    println!(
        "marked {marked}, drops {:?}, max queue {} B",
        link.drops.nonzero(),
        link.max_queue_bytes
    );
    assert_eq!(link.drops.total(), 0, "nothing dropped: {:?}", link.drops);
    assert!(marked > 50, "{marked}");
    // Slow start overshoots the 20 ms threshold (50 KB at 20 Mbit/s) by one round trip
    // of growth at most: the 4 BDP queue (400 KB) never fills.
    assert!(link.max_queue_bytes < 300_000, "{}", link.max_queue_bytes);
    let EndpointMetrics::Quic(q) = server(&r) else {
        panic!()
    };
    let ecn = q.quic.ecn.as_ref().unwrap();
    let t = &q.transport;
    println!(
        "server ecn {ecn:?}, congestion events {}, lost {}",
        t.congestion_events, t.packets_lost
    );
    assert!(!ecn.disabled, "validation passed");
    assert_eq!(t.packets_lost, 0);
    assert_eq!(
        ecn.congestion_events, t.congestion_events,
        "every reduction is a CE response"
    );
    assert!(
        ecn.ce_signals > ecn.congestion_events,
        "several marks per round trip, one reduction"
    );
    // At most one reduction per round trip (40 ms) of the transfer.
    let secs = r.end_time_secs;
    assert!(
        (ecn.congestion_events as f64) <= secs / 0.040,
        "{} in {secs} s",
        ecn.congestion_events
    );
    // The client counted the CE marks it received.
    let EndpointMetrics::Quic(c) = &r.flows[0].endpoints[0] else {
        panic!()
    };
    assert_eq!(c.quic.ecn.as_ref().unwrap().ce_received, marked);
    // Throughput close to the bottleneck: 20 MB at 20 Mbit/s is 8 s.
    let goodput = c.transport.goodput_bps.unwrap();
    println!("goodput {:.2} Mbit/s", goodput / 1e6);
    assert!(goodput > 0.85 * 20e6, "{goodput}");
}

#[test]
fn quic_without_ecn_meets_aqm_drops_and_ecn_off_is_the_run_of_before() {
    // The same marking queue, ECN off: the packets are not ECN-capable, so dropped.
    let r = run(&scenario("quic", "4MB", STEP, ""));
    let link = reverse_link(&r);
    assert_eq!(link.ecn_marked, Some(0));
    assert!(link.drops.aqm > 0, "{:?}", link.drops);
    // `ecn = false` written or not, no marking queue: the same run, digest and JSON.
    let plain = run(&scenario("quic", "4MB", "", ""));
    let off = run(&scenario("quic", "4MB", "", "quic = { ecn = false }"));
    assert_eq!(plain.digest, off.digest);
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&off).unwrap()
    );
    let json = serde_json::to_string(&plain).unwrap();
    assert_no_ecn_keys(&json);
    // ECN on over a path that does not mark: nothing reduces for ECN.
    let on = run(&scenario("quic", "4MB", "", "quic = { ecn = true }"));
    let EndpointMetrics::Quic(q) = server(&on) else {
        panic!()
    };
    let ecn = q.quic.ecn.as_ref().unwrap();
    assert_eq!(
        (ecn.ce_signals, ecn.congestion_events, ecn.disabled),
        (0, 0, false)
    );
    assert!(ecn.ect_sent > 3000);
}

#[test]
fn the_default_ce_response_is_one_congestion_event_per_recovery_period() {
    let mss = 1200;
    let t = |ms: u64| SimTime(ms * 1_000_000);
    let mut controllers: Vec<(Box<dyn CongestionController>, f64)> = vec![
        (Box::new(NewReno::new(mss, 100 * mss)), 0.5),
        (
            Box::new(Cubic::new(mss, 100 * mss, CubicParams::default(), false)),
            0.7,
        ),
    ];
    for (cc, beta) in controllers.iter_mut() {
        let before = cc.window();
        // A CE mark on a packet sent at 10 ms, reported at 50 ms: a congestion event.
        cc.on_ecn_ce(t(50), t(10), 1, before);
        let after = cc.window();
        assert_eq!(after, (before as f64 * *beta) as u64, "{}", cc.name());
        assert!(cc.recovering());
        // More marks on packets sent before the reduction: nothing more.
        cc.on_ecn_ce(t(60), t(40), 3, after);
        assert_eq!(cc.window(), after, "{}", cc.name());
        // A mark on a packet sent after it: a new event.
        cc.on_ecn_ce(t(120), t(70), 1, after);
        assert!(cc.window() < after, "{}", cc.name());
    }
}

#[test]
fn bbr1_does_not_react_to_ce() {
    let r = run(&scenario(
        "quic",
        "4MB",
        STEP,
        r#"quic = { ecn = true, cc = "bbr1" }"#,
    ));
    let EndpointMetrics::Quic(q) = server(&r) else {
        panic!()
    };
    let ecn = q.quic.ecn.as_ref().unwrap();
    println!("bbr1 server ecn {ecn:?}");
    // The marks are reported, and the controller does not reduce for them
    // (draft-cardwell-iccrg-bbr-congestion-control-00 has no ECN response).
    assert!(ecn.ce_signals > 0);
    assert_eq!(ecn.congestion_events, 0);
    assert!(reverse_link(&r).ecn_marked.unwrap() > 0);
}

#[test]
fn bad_ecn_tables_name_the_field() {
    for (marking, field, allowed) in [
        (r#"{ mode = "step" }"#, "ecn.threshold", "required"),
        (
            r#"{ mode = "step", threshold = "0ms" }"#,
            "ecn.threshold",
            "> 0",
        ),
        (
            r#"{ mode = "step", threshold = "fast" }"#,
            "ecn.threshold",
            "queuing delay",
        ),
        (
            r#"{ mode = "wred", threshold = "5ms" }"#,
            "ecn.mode",
            "step",
        ),
        (
            r#"{ mode = "step", threshold = "5ms", max_p = 0.2 }"#,
            "ecn.max_p",
            "red",
        ),
        (
            r#"{ mode = "red", min = "10ms", max = "5ms" }"#,
            "ecn.max",
            "above",
        ),
        (
            r#"{ mode = "red", min = "10ms", max = "50KB" }"#,
            "ecn.max",
            "same unit",
        ),
        (
            r#"{ mode = "red", min = "1ms", max = "5ms", max_p = 0 }"#,
            "ecn.max_p",
            "(0, 1]",
        ),
        (
            r#"{ mode = "red", min = "1ms", max = "5ms", weight = 2 }"#,
            "ecn.weight",
            "(0, 1]",
        ),
        (
            r#"{ mode = "step", threshold = "5ms", color = 1 }"#,
            "ecn.color",
            "",
        ),
    ] {
        let err = match sim_core::scenario::parse_str(&scenario("quic", "1MB", marking, "")) {
            Ok(_) => panic!("{marking} accepted"),
            Err(e) => e.to_string(),
        };
        println!("{err}");
        assert!(err.contains(field), "{marking}: {err}");
        assert!(err.contains(allowed), "{marking}: {err}");
    }
}

#[test]
fn tcp_negotiates_ecn_echoes_ce_and_reduces_once_per_window() {
    let r = run(&scenario("tcp", "20MB", STEP_20, "tcp = { ecn = true }"));
    assert_eq!(r.status.as_str(), "completed");
    let link = reverse_link(&r);
    let marked = link.ecn_marked.unwrap();
    println!("marked {marked}, drops {:?}", link.drops.nonzero());
    assert_eq!(link.drops.total(), 0, "{:?}", link.drops);
    assert!(marked > 10, "{marked}");
    let EndpointMetrics::Tcp(s) = server(&r) else {
        panic!()
    };
    let ecn = s.tcp.ecn.as_ref().unwrap();
    let t = &s.transport;
    println!(
        "server ecn {ecn:?}, congestion events {}",
        t.congestion_events
    );
    assert!(!ecn.disabled, "negotiated");
    assert_eq!(t.packets_lost, 0);
    assert!(ecn.ect_sent > 10_000);
    assert_eq!(ecn.congestion_events, t.congestion_events);
    // ECE on every ACK until CWR: many echoes, one reduction per window.
    assert!(ecn.ce_signals > ecn.congestion_events);
    assert!((ecn.congestion_events as f64) <= r.end_time_secs / 0.040);
    let EndpointMetrics::Tcp(c) = &r.flows[0].endpoints[0] else {
        panic!()
    };
    assert_eq!(c.tcp.ecn.as_ref().unwrap().ce_received, marked);
    let goodput = c.transport.goodput_bps.unwrap();
    println!("goodput {:.2} Mbit/s", goodput / 1e6);
    assert!(goodput > 0.85 * 20e6, "{goodput}");
}

#[test]
fn tcp_ecn_needs_both_sides_and_off_is_the_run_of_before() {
    // Only the client asks: the server's SYN-ACK does not accept, nothing is ECT, the
    // marking queue drops.
    let r = run(&scenario(
        "tcp",
        "4MB",
        STEP,
        "[flows.tcp.client]\necn = true",
    ));
    let EndpointMetrics::Tcp(c) = &r.flows[0].endpoints[0] else {
        panic!()
    };
    assert!(c.tcp.ecn.as_ref().unwrap().disabled);
    assert!(reverse_link(&r).drops.aqm > 0);
    let plain = run(&scenario("tcp", "4MB", "", ""));
    let off = run(&scenario("tcp", "4MB", "", "tcp = { ecn = false }"));
    assert_eq!(plain.digest, off.digest);
    let json = serde_json::to_string(&plain).unwrap();
    assert_eq!(json, serde_json::to_string(&off).unwrap());
    assert_no_ecn_keys(&json);
}

/// BBRv3 (draft-ietf-ccwg-bbr) answers CE marks through its model, not with a congestion
/// event: the marks are reported, no window reduction is counted as a CE response, the
/// transfer keeps the bottleneck's rate and nothing is dropped; the CE share of each round
/// bounds inflight_shortterm (unit-tested in `cc::bbr3`).
#[test]
fn bbr3_answers_ce_through_its_model() {
    let run_cc = |cc: &str| {
        run(&scenario(
            "quic",
            "10MB",
            STEP_20,
            &format!("quic = {{ ecn = true, cc = \"{cc}\" }}"),
        ))
    };
    let r = run_cc("bbr3");
    let link = reverse_link(&r);
    let EndpointMetrics::Quic(q) = server(&r) else {
        panic!()
    };
    let ecn = q.quic.ecn.as_ref().unwrap();
    let goodput = r.flows[0].endpoints[0]
        .transport()
        .and_then(|m| m.goodput_bps)
        .unwrap();
    println!(
        "bbr3: ecn {ecn:?}, marked {:?}, drops {}, max queue {} B, goodput {goodput}",
        link.ecn_marked,
        link.drops.total(),
        link.max_queue_bytes,
    );
    assert!(ecn.ce_signals > 0);
    assert_eq!(
        ecn.congestion_events, 0,
        "no congestion event for a CE mark"
    );
    assert_eq!(link.drops.total(), 0);
    assert!(goodput >= 0.85 * 20e6, "{goodput}");
}
