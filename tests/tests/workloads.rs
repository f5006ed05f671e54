//! The workloads of issue 11 item 4 end to end over QUIC from TOML scenarios: `web_page`
//! (page load and per-object times), `video` (startup, quality by delay, seek, rebuffering)
//! and the time-limited `bulk` (iperf3 `-t`). Each asserts properties that follow from
//! the workload's rules and the path, not from a recorded answer.

use sim_core::config::Config;
use sim_core::metrics::workload::{PageReport, VideoReport};
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::validate::ConfigError;

fn parse(text: &str) -> Result<Config, ConfigError> {
    sim_core::scenario::parse_str(text).map(|s| s.base)
}

fn two_hosts(link: &str, flows: &str) -> String {
    format!("[topology]\nkind = \"two_hosts\"\nlink = {link}\n\n{flows}")
}

fn run(text: &str) -> RunResult {
    let cfg = parse(text).expect("scenario parses");
    sim_core::runner::run(&cfg, 1).expect("runs")
}

fn page(r: &RunResult, ep: usize) -> PageReport {
    r.flows[0].endpoints[ep]
        .workload()
        .unwrap()
        .page
        .clone()
        .expect("a page report")
}

fn video(r: &RunResult) -> VideoReport {
    r.flows[0].endpoints[0]
        .workload()
        .unwrap()
        .video
        .clone()
        .expect("a video report")
}

const PAGE: &str = r#"
[[flows]]
transport = "quic"
workload = { kind = "web_page" }
"#;

#[test]
fn paper003_page_loads_html_first_then_the_rest_in_parallel() {
    // 100 ms one way: the html's response is read after the handshake (1 RTT) and one
    // request round trip, and nothing else is requested before it.
    let r = run(&two_hosts(r#"{ rate = "50Mbps", delay = "100ms" }"#, PAGE));
    assert_eq!(r.status, RunStatus::Completed);
    let p = page(&r, 0);
    assert_eq!(p.objects.len(), 8);
    let html = &p.objects[0];
    assert_eq!(html.name, "index.html");
    let html_done = html.complete_secs.unwrap();
    assert!(
        html_done >= 0.4,
        "handshake + request: at least 2 RTT, got {html_done}"
    );
    for o in &p.objects[1..] {
        let req = o.request_secs.unwrap();
        assert!(
            req >= html_done - 1e-12,
            "{} requested at {req}, before the html was read",
            o.name
        );
        assert!(
            (req - html_done).abs() < 1e-9,
            "the rest go at once when the html is read"
        );
        let (fb, done) = (o.first_byte_secs.unwrap(), o.complete_secs.unwrap());
        assert!(
            fb >= req + 0.2 - 1e-9,
            "{}: first byte a round trip after the request",
            o.name
        );
        assert!(done >= fb);
    }
    let last = p
        .objects
        .iter()
        .map(|o| o.complete_secs.unwrap())
        .fold(0.0, f64::max);
    assert_eq!(
        p.page_load_secs,
        Some(last),
        "the page is loaded when its last object is"
    );
    // The server reports the same objects (acknowledged, so after the client read them).
    let s = page(&r, 1);
    assert!(s.page_load_secs.unwrap() >= last);
}

#[test]
fn objects_dependencies_by_name_and_per_object_request_sizes() {
    let flows = r#"
[[flows]]
transport = "quic"
workload = { kind = "web_page", request_size = 300, objects = [
  { name = "a", size = "10KB" },
  { name = "b", size = "20KB", request_size = 50, after = ["a"] },
  { name = "c", size = "5KB", after = [0, 1] },
] }
"#;
    let cfg = parse(&two_hosts(r#"{ rate = "10Mbps", delay = "10ms" }"#, flows)).unwrap();
    let w = match cfg.flows[0].workload().unwrap() {
        sim_core::config::WorkloadConfig::WebPage(w) => w.clone(),
        other => panic!("{other:?}"),
    };
    let req: Vec<u64> = w.objects.iter().map(|o| o.request_size).collect();
    assert_eq!(req, [300, 50, 300]);
    assert_eq!(w.objects[1].after, [0]);
    // The resolved form parses back to the same config.
    let text = sim_core::scenario::to_toml(&cfg).unwrap();
    assert_eq!(parse(&text).unwrap(), cfg);
    let r = sim_core::runner::run(&cfg, 1).unwrap();
    let p = page(&r, 0);
    let t = |i: usize| &p.objects[i];
    assert!(t(1).request_secs.unwrap() >= t(0).complete_secs.unwrap());
    assert!(t(2).request_secs.unwrap() >= t(1).complete_secs.unwrap());
}

#[test]
fn bad_pages_name_the_field() {
    let cases = [
        (
            r#"objects = [{ size = 1 }, { size = 1, after = [1] }]"#,
            "flows[0].workload.objects[1].after",
        ),
        (
            r#"objects = [{ size = 1, after = [3] }]"#,
            "flows[0].workload.objects[0].after",
        ),
        (
            r#"objects = [{ size = 1, after = ["nope"] }]"#,
            "flows[0].workload.objects[0].after[0]",
        ),
        (
            r#"objects = [{ size = 0 }]"#,
            "flows[0].workload.objects[0].size",
        ),
        (r#"objects = []"#, "flows[0].workload.objects"),
        (
            r#"objects = [{ size = 1, colour = 2 }]"#,
            "flows[0].workload.objects[0].colour",
        ),
        (
            r#"objects = [{ size = 1 }], preset = "paper003""#,
            "flows[0].workload.preset",
        ),
        (r#"preset = "paper999""#, "flows[0].workload.preset"),
    ];
    for (keys, field) in cases {
        let flows = format!(
            "[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"web_page\", {keys} }}\n"
        );
        let e =
            parse(&two_hosts(r#"{ rate = "10Mbps", delay = "10ms" }"#, &flows)).expect_err(keys);
        assert_eq!(e.field, field, "{keys}: {e}");
    }
}

fn video_flow(keys: &str) -> String {
    format!("[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"video\", {keys} }}\n")
}

#[test]
fn video_quality_follows_the_measured_delay() {
    // Short video, fast link: every segment in the quality of the path's one-way delay.
    for (delay, quality) in [("20ms", "qhd"), ("150ms", "fhd"), ("250ms", "hd")] {
        let link = format!("{{ rate = \"100Mbps\", delay = \"{delay}\" }}");
        let r = run(&two_hosts(
            &link,
            &video_flow(r#"length = "8s", segment = "2s", buffer = "4s", startup = "2s""#),
        ));
        assert_eq!(r.status, RunStatus::Completed, "{delay}");
        let v = video(&r);
        assert_eq!(v.segments.len(), 4);
        for s in &v.segments {
            assert_eq!(
                s.quality, quality,
                "{delay}: delay measured {}",
                s.delay_secs
            );
        }
        // Playback: startup + 8 s of video, no stall on a fast path.
        let start = v.startup_delay_secs.unwrap();
        assert_eq!(v.rebuffer_count, 0);
        let end = v.playback_end_secs.unwrap();
        assert!(
            (end - start - 8.0).abs() < 1e-6,
            "{delay}: {start} .. {end}"
        );
    }
}

#[test]
fn video_buffer_never_exceeds_its_target_and_requests_follow_playback() {
    let r = run(&two_hosts(
        r#"{ rate = "100Mbps", delay = "10ms" }"#,
        &video_flow(r#"length = "20s", segment = "2s", buffer = "6s", startup = "2s""#),
    ));
    let v = video(&r);
    let start = v.startup_delay_secs.unwrap();
    // Segment k is requested when at most buffer - segment = 4 s is buffered ahead: after
    // the first three, not before playback reached (k - 2) x 2 s.
    for s in &v.segments {
        if s.index >= 3 {
            let played = s.request_secs - start;
            assert!(
                played + 1e-9 >= (s.index as f64 - 2.0) * 2.0,
                "segment {} requested at {}",
                s.index,
                s.request_secs
            );
        }
    }
}

#[test]
fn a_seek_flushes_the_buffer_and_restarts_at_the_seek_position() {
    let r = run(&two_hosts(
        r#"{ rate = "20Mbps", delay = "50ms" }"#,
        &video_flow(
            r#"length = "40s", segment = "4s", buffer = "12s", startup = "2.5s", seek_at = "10s", seek_to = "25s""#,
        ),
    ));
    assert_eq!(r.status, RunStatus::Completed);
    let v = video(&r);
    assert_eq!(v.seek_secs, Some(10.0));
    let loading = v.seek_loading_delay_secs.unwrap();
    // At least one request round trip (100 ms) plus the segment's transfer.
    assert!(loading >= 0.1, "{loading}");
    let after: Vec<u64> = v
        .segments
        .iter()
        .filter(|s| s.request_secs >= 10.0)
        .map(|s| s.index)
        .collect();
    assert_eq!(
        after.first(),
        Some(&6),
        "requests restart at the segment holding 25 s"
    );
    assert!(after.windows(2).all(|w| w[1] == w[0] + 1));
    assert_eq!(*after.last().unwrap(), 9);
    // Playback ends 40 - 24 = 16 s of video after it resumed, plus any stall.
    let end = v.playback_end_secs.unwrap();
    assert!(end + 1e-6 >= 10.0 + loading + 16.0 + v.rebuffer_secs - 1e-6);
}

#[test]
fn a_slow_path_rebuffers() {
    // 16 Mbit/s QHD segments over 10 Mbit/s: playback must stall.
    let r = run(&two_hosts(
        r#"{ rate = "10Mbps", delay = "10ms" }"#,
        &video_flow(r#"length = "12s", segment = "2s", buffer = "4s", startup = "2s""#),
    ));
    let v = video(&r);
    assert!(v.rebuffer_count >= 1 && v.rebuffer_secs > 0.0, "{v:?}");
}

#[test]
fn bad_videos_name_the_field() {
    for (keys, field) in [
        (
            r#"length = "10s", segment = "4s""#,
            "flows[0].workload.length",
        ),
        (r#"startup = "20s""#, "flows[0].workload.startup"),
        (r#"seek_at = "1s""#, "flows[0].workload.seek_to"),
        (r#"seek_to = "1s""#, "flows[0].workload.seek_to"),
        (
            r#"seek_at = "1s", seek_to = "90s""#,
            "flows[0].workload.seek_to",
        ),
        (r#"qhd_rate = "0bps""#, "flows[0].workload.qhd_rate"),
        (r#"bytes = 3"#, "flows[0].workload.bytes"),
    ] {
        let e = parse(&two_hosts(
            r#"{ rate = "10Mbps", delay = "10ms" }"#,
            &video_flow(keys),
        ))
        .expect_err(keys);
        assert_eq!(e.field, field, "{keys}: {e}");
    }
}

#[test]
fn time_limited_bulk_sends_until_the_limit_then_closes() {
    let flows = r#"
[[flows]]
transport = "quic"
workload = { kind = "bulk", duration = "2s" }
"#;
    let r = run(&two_hosts(r#"{ rate = "10Mbps", delay = "10ms" }"#, flows));
    assert_eq!(r.status, RunStatus::Completed);
    let c = r.flows[0].endpoints[0].transport().unwrap();
    let s = r.flows[0].endpoints[1].transport().unwrap();
    // The server stops 2 s after the request arrived (handshake 1 RTT + half a RTT), so
    // the client has read about 2 s of a 10 Mbit/s link, far more than nothing and less
    // than the link could carry in 2 s.
    let read = c.stream_bytes_read as f64;
    assert!(read > 1.5e6 && read < 2.5e6, "read {read} B");
    let done = s.completion_secs.unwrap();
    // The request arrives 1.5 RTT (30 ms) after the start plus serialisation.
    assert!(done > 2.03 && done < 2.04, "server closed at {done}");
    assert!(c.completion_secs.unwrap() > done);
    // Unset: today's size-limited bulk (no change).
    let e = parse(&two_hosts(
        r#"{ rate = "10Mbps", delay = "10ms" }"#,
        "[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\", duration = \"0s\" }\n",
    ))
    .unwrap_err();
    assert_eq!(e.field, "flows[0].workload.duration");
}

fn reconnects(link: &str, quic: &str, keys: &str) -> RunResult {
    let flows = format!(
        "[[flows]]\ntransport = \"quic\"\nquic = {{ {quic} }}\nworkload = {{ kind = \"reconnects\", {keys} }}\n"
    );
    run(&two_hosts(link, &flows))
}

fn reconnects_report(r: &RunResult) -> sim_core::metrics::workload::ReconnectsReport {
    r.flows[0].endpoints[0]
        .workload()
        .unwrap()
        .reconnects
        .clone()
        .expect("a reconnects report")
}

#[test]
fn reconnections_split_the_transfer_and_resume() {
    // K = 2 explicit closes: three connections of 100 KB, the later two resumed with 0-RTT.
    let r = reconnects(
        r#"{ rate = "10Mbps", delay = "20ms" }"#,
        "zero_rtt = true",
        r#"bytes = "300KB", reconnections = 2, on = "close""#,
    );
    assert_eq!(r.status, RunStatus::Completed);
    let w = r.flows[0].endpoints[0].workload().unwrap();
    assert_eq!(w.connections.len(), 3);
    for c in &w.connections {
        assert_eq!(c.metrics.transport().stream_bytes_read, 100_000);
    }
    let rep = reconnects_report(&r);
    assert_eq!(rep.resumed, [false, true, true]);
    assert_eq!(rep.handshake_secs.len(), 3);
    // A full handshake takes one RTT (40 ms) at the client; a resumed one too (1-RTT
    // handshake, data in 0-RTT meanwhile), never less.
    for h in &rep.handshake_secs {
        assert!(h.unwrap() >= 0.04 - 1e-9, "{h:?}");
    }
    let t = rep.transfer_secs.unwrap();
    let one = w.connections[0]
        .metrics
        .transport()
        .completion_secs
        .unwrap();
    assert!(
        t > 2.0 * one && t < 3.0 * one + 0.5,
        "three parts: {t} vs one part {one}"
    );
}

#[test]
fn idle_reconnections_wait_for_the_idle_timeout() {
    let r = reconnects(
        r#"{ rate = "10Mbps", delay = "10ms" }"#,
        "idle_timeout = \"1s\"",
        r#"bytes = "60KB", reconnections = 2"#,
    );
    assert_eq!(r.status, RunStatus::Completed);
    let rep = reconnects_report(&r);
    // Each of the two reconnections waits out an idle timeout (>= 1 s) first.
    let t = rep.transfer_secs.unwrap();
    assert!(t > 2.0 && t < 2.6, "{t}");
    // K = 0: one connection, no reconnection.
    let r = reconnects(
        r#"{ rate = "10Mbps", delay = "10ms" }"#,
        "",
        r#"reconnections = 0, bytes = "50KB""#,
    );
    assert_eq!(reconnects_report(&r).handshake_secs.len(), 1);
}

#[test]
fn bad_reconnects_name_the_field() {
    let link = r#"{ rate = "10Mbps", delay = "10ms" }"#;
    for (keys, field) in [
        ("reconnections = 5000", "flows[0].workload.reconnections"),
        // A trigger that no handover of the pair fires.
        ("on = \"address_change\"", "flows[0].workload.on"),
        ("on = \"handover\"", "flows[0].workload.on"),
        ("streams = 0", "flows[0].workload.streams"),
    ] {
        let flows = format!(
            "[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"reconnects\", {keys} }}\n"
        );
        let e = parse(&two_hosts(link, &flows)).expect_err(keys);
        assert_eq!(e.field, field, "{keys}: {e}");
    }
}

#[test]
fn a_history_policy_on_a_single_connection_workload_is_an_error() {
    let flows = "[[flows]]\ntransport = \"quic\"\nquic = { initial_window = { policy = \"history\" } }\nworkload = { kind = \"web_page\" }\n";
    let e = parse(&two_hosts(r#"{ rate = "10Mbps", delay = "10ms" }"#, flows)).unwrap_err();
    assert_eq!(e.field, "flows[0].initial_window.policy", "{e}");
}

/// `start` applies to every workload but `sequence`, on every transport: a page load
/// started 1 s later ends exactly 1 s later on a lossless path (one parser for web_page,
/// video and reconnects flows, whatever the transport).
#[test]
fn start_delays_web_page_flows_on_every_transport() {
    for transport in ["quic", "tcp", "sctp"] {
        let end = |start: &str| {
            let text = format!(
                "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"20ms\" }}\n\
                 [[flows]]\ntransport = \"{transport}\"\nstart = \"{start}\"\n\
                 workload = {{ kind = \"web_page\" }}\n"
            );
            let cfg = sim_core::scenario::parse_str(&text)
                .unwrap_or_else(|e| panic!("{transport}: {e}"))
                .base;
            sim_core::run(&cfg, 1).unwrap().end_time
        };
        let (a, b) = (end("0s"), end("1s"));
        assert_eq!(
            b.saturating_since(a).as_nanos(),
            1_000_000_000,
            "{transport}"
        );
    }
}
