//! qlog output and the streaming tracer (issue 6).
//!
//! - both shapes parse as JSON-SEQ (RFC 7464: every record is RS, one JSON text, LF), the
//!   header is complete, events are time-ordered;
//! - the qvis shape matches a small hand-verified golden file byte for byte
//!   (`tests/golden/qvis-small.sqlog`), and real runs' events have the golden's shape;
//! - tracing observes and never changes a run (same result and digest on or off);
//! - every packet the network dropped appears as a `link_drop` marker in its flow's traces.

use serde_json::Value;
use sim_core::config::{AddressChange, LinkChange};
use sim_core::metrics::{DropReason, RunResult};
use sim_core::qlog::{QlogFormat, QlogWriter, TraceKey, QUIC_EVENT_SCHEMA_URI, RS};
use sim_core::runner::run_traced;
use sim_core::trace::{
    BlockedReason, ConnectionState, DatagramContent, EndpointId, EndpointInfo, Initiator,
    LossTrigger, ProtocolPacket, ProtocolParameters, RecoveryMetrics, RecoveryParameters, RunInfo,
    SendTrigger, TraceEvent, TraceRecord, TraceSource, Tracer, Vantage,
};
use sim_core::units::Rate;
use sim_core::wire::quic::{Frame, PacketRef, PacketType, QuicPacket, TransportParameters};
use sim_core::{Config, SimDuration, SimTime};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------
// helpers

fn scenario(text: &str) -> Config {
    sim_core::scenario::parse_str(text).expect("scenario").base
}

/// CBR up and down over a link that goes down for a while and a handover with a new IP:
/// link changes, handover markers and drops of every kind the runner reports.
const CBR_EVENTS: &str = r#"
name = "qlog-cbr"
seed = 3
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "10ms", queue = { packets = 20 } }
[[topology.forward.changes]]
at = "300ms"
rate = "0bps"
[[topology.forward.changes]]
at = "400ms"
rate = "10Mbps"
[topology.reverse.loss]
model = "bernoulli"
p = 0.02
[[topology.handovers]]
at = "700ms"
address = "ip"
link = { rate = "5Mbps", delay = "30ms" }
[[flows]]
kind = "cbr"
direction = "up"
rate = "6Mbps"
duration = "1s"
[[flows]]
kind = "cbr"
direction = "down"
rate = "3Mbps"
duration = "1s"
"#;

/// A small QUIC transfer over a lossy link (QUIC endpoints emit protocol events once
/// they are instrumented; until then only the network's events).
const QUIC_LOSSY: &str = r#"
name = "qlog-quic"
seed = 4
[topology]
kind = "two_hosts"
link = { rate = "20Mbps", delay = "15ms", loss = { model = "bernoulli", p = 0.01 } }
[[flows]]
kind = "quic_bulk"
bytes = "400kB"
streams = 2
"#;

/// Runs `cfg` with a qlog writer into memory; returns the result and each trace's bytes.
fn run_qlog(cfg: &Config, seed: u64, fmt: QlogFormat) -> (RunResult, Vec<(TraceKey, Vec<u8>)>) {
    let mut w = QlogWriter::new(fmt, "test", Box::new(|_| Ok(Vec::new())));
    let r = run_traced(cfg, seed, &mut w).expect("run");
    (r, w.into_outputs().expect("no I/O error"))
}

/// Splits a JSON-SEQ text into records, checking the framing: it starts with RS, every
/// record ends with LF and holds exactly one JSON value, which must be an object.
fn parse_json_seq(bytes: &[u8]) -> Vec<Value> {
    assert_eq!(bytes.first(), Some(&RS), "a JSON-SEQ file starts with RS");
    let mut out = Vec::new();
    for (i, rec) in bytes.split(|&b| b == RS).enumerate().skip(1) {
        assert_eq!(rec.last(), Some(&b'\n'), "record {i} must end with LF");
        let v: Value = serde_json::from_slice(rec)
            .unwrap_or_else(|e| panic!("record {i} is not one JSON text: {e}"));
        assert!(v.is_object(), "record {i} is not an object");
        out.push(v);
    }
    assert!(out.len() >= 2, "a header and at least one event");
    out
}

/// Checks the events after the header: `time` (ms, number), `name` (`namespace:type`),
/// `data` (object); times non-decreasing. Returns (time, name, data) per event.
fn check_events(recs: &[Value]) -> Vec<(f64, String, Value)> {
    let mut last = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for (i, e) in recs.iter().enumerate().skip(1) {
        let t = e["time"]
            .as_f64()
            .unwrap_or_else(|| panic!("event {i}: time"));
        let name = e["name"]
            .as_str()
            .unwrap_or_else(|| panic!("event {i}: name"));
        assert!(
            name.contains(':'),
            "event {i}: name {name} is namespace:type"
        );
        assert!(e["data"].is_object(), "event {i}: data");
        assert!(
            t >= last,
            "event {i} at {t} ms precedes the previous one at {last} ms"
        );
        last = t;
        out.push((t, name.to_string(), e["data"].clone()));
    }
    out
}

fn check_draft_header(h: &Value, vantage: &str) {
    assert_eq!(h["file_schema"], "urn:ietf:params:qlog:file:sequential");
    assert_eq!(h["serialization_format"], "application/qlog+json-seq");
    assert!(h["title"].is_string() && h["description"].is_string());
    let t = &h["trace"];
    assert_eq!(t["vantage_point"]["type"], vantage);
    assert!(t["vantage_point"]["name"].is_string());
    let schemas: Vec<&str> = t["event_schemas"]
        .as_array()
        .expect("event_schemas")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(schemas.contains(&QUIC_EVENT_SCHEMA_URI));
    assert!(schemas.contains(&"urn:ietf:params:qlog:events:simulation"));
    let cf = &t["common_fields"];
    assert_eq!(cf["time_format"], "relative_to_epoch");
    assert_eq!(cf["reference_time"]["clock_type"], "monotonic");
    assert_eq!(cf["reference_time"]["epoch"], "unknown");
    assert!(cf["group_id"].is_string());
    // The draft versions are recorded in the header.
    assert_eq!(
        h["quicsim"]["qlog_main_schema"],
        "draft-ietf-quic-qlog-main-schema-14"
    );
    assert_eq!(
        h["quicsim"]["qlog_quic_events"],
        "draft-ietf-quic-qlog-quic-events-14"
    );
    assert!(QUIC_EVENT_SCHEMA_URI.ends_with("quic-14"));
}

fn check_qvis_header(h: &Value, vantage: &str) {
    assert_eq!(h["qlog_version"], "0.3");
    assert_eq!(h["qlog_format"], "JSON-SEQ");
    let t = &h["trace"];
    assert_eq!(t["vantage_point"]["type"], vantage);
    assert_eq!(t["common_fields"]["time_format"], "relative");
    assert_eq!(t["common_fields"]["reference_time"], 0);
    // qvis sniffs the first 1024 characters for these (FileLoader).
    let text = serde_json::to_string(h).unwrap();
    let head = &text[..text.len().min(1024)];
    assert!(head.contains("qlog_version") && head.contains("JSON-SEQ"));
}

// ---------------------------------------------------------------------------------------
// framing, header, order

#[test]
fn both_formats_parse_as_json_seq_with_complete_headers_and_ordered_events() {
    for text in [CBR_EVENTS, QUIC_LOSSY] {
        let cfg = scenario(text);
        for fmt in [QlogFormat::Draft, QlogFormat::Qvis] {
            let (r, outs) = run_qlog(&cfg, cfg.seed, fmt);
            // One trace per flow and vantage point.
            assert_eq!(outs.len(), 2 * cfg.flows.len(), "{fmt:?}");
            for (key, bytes) in &outs {
                let recs = parse_json_seq(bytes);
                let vantage = key.vantage.as_str();
                match fmt {
                    QlogFormat::Draft => check_draft_header(&recs[0], vantage),
                    QlogFormat::Qvis => check_qvis_header(&recs[0], vantage),
                }
                let evs = check_events(&recs);
                assert_eq!(evs[0].1, "simulation:scenario");
                let (t_end, last, data) = evs.last().unwrap();
                assert_eq!(last, "simulation:marker");
                assert_eq!(data["type"], "run_end");
                assert!((t_end - r.end_time_secs * 1e3).abs() < 1e-6);
            }
        }
    }
}

#[test]
fn records_reach_the_tracer_in_time_order() {
    for text in [CBR_EVENTS, QUIC_LOSSY] {
        let cfg = scenario(text);
        let mut last = SimTime::ZERO;
        let mut n = 0u64;
        let mut t = |rec: &TraceRecord| {
            assert!(rec.time >= last, "{:?} after {last:?}", rec.time);
            last = rec.time;
            n += 1;
        };
        run_traced(&cfg, cfg.seed, &mut t).unwrap();
        assert!(n > 0);
    }
}

// ---------------------------------------------------------------------------------------
// tracing never changes the run

#[test]
fn tracing_on_or_off_gives_the_same_run() {
    for text in [CBR_EVENTS, QUIC_LOSSY, QUIC_CONSISTENCY] {
        let cfg = scenario(text);
        for seed in [cfg.seed, 77] {
            let plain = sim_core::run(&cfg, seed).unwrap();
            for fmt in [QlogFormat::Draft, QlogFormat::Qvis] {
                let (traced, _) = run_qlog(&cfg, seed, fmt);
                assert_eq!(traced.digest, plain.digest, "{} seed {seed}", cfg.name);
                assert_eq!(traced, plain, "{} seed {seed}: the whole result", cfg.name);
            }
            let mut count = 0u64;
            let mut counter = |_: &TraceRecord| count += 1;
            let traced = run_traced(&cfg, seed, &mut counter).unwrap();
            assert_eq!(traced, plain);
        }
    }
}

/// A tracer that says it wants nothing gets nothing.
#[test]
fn a_disabled_tracer_receives_nothing() {
    struct Off(u64);
    impl Tracer for Off {
        fn enabled(&self) -> bool {
            false
        }
        fn begin(&mut self, _: &RunInfo) {
            self.0 += 1;
        }
        fn record(&mut self, _: &TraceRecord) {
            self.0 += 1;
        }
        fn finish(&mut self, _: SimTime) {
            self.0 += 1;
        }
    }
    let cfg = scenario(CBR_EVENTS);
    let mut off = Off(0);
    run_traced(&cfg, 1, &mut off).unwrap();
    assert_eq!(off.0, 0);
}

// ---------------------------------------------------------------------------------------
// network events vs the run's accounting

/// Every drop the flow report counts is a `link_drop` marker in both of the flow's traces,
/// with the same reason; link changes and handovers are markers in every trace.
#[test]
fn every_network_drop_is_a_marker_in_its_flows_traces() {
    let cfg = scenario(CBR_EVENTS);
    let (r, outs) = run_qlog(&cfg, cfg.seed, QlogFormat::Draft);
    assert!(r.drops.total() > 0, "the scenario must drop packets");
    for (key, bytes) in &outs {
        let evs = check_events(&parse_json_seq(bytes));
        let mut by_reason: BTreeMap<String, u64> = BTreeMap::new();
        let (mut changes, mut handovers) = (0, 0);
        for (_, name, d) in &evs {
            if name != "simulation:marker" {
                continue;
            }
            match d["type"].as_str().unwrap() {
                "link_drop" => {
                    *by_reason
                        .entry(d["reason"].as_str().unwrap().to_string())
                        .or_default() += 1;
                    assert!(d["cbr_seq"].is_u64());
                    assert_eq!(d["size"], 1200);
                }
                "link_changed" => changes += 1,
                "handover" => handovers += 1,
                _ => {}
            }
        }
        assert_eq!(changes, 2, "{key:?}");
        assert_eq!(handovers, 1, "{key:?}");
        let f = &r.flows[key.flow as usize];
        let total: u64 = by_reason.values().sum();
        assert_eq!(total, f.drops.total(), "{key:?}");
        for (reason, n) in &by_reason {
            let reason: DropReason = serde_json::from_value(Value::String(reason.clone())).unwrap();
            assert_eq!(*n, f.drops.get(reason), "{key:?} {reason:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// golden file: the qvis (qlog 0.3) shape

/// A fixed, synthetic stream of records covering every event type the writer knows, for
/// the client of flow 0 (plus the network events every trace gets).
fn golden_stream(w: &mut dyn Tracer) {
    let client = EndpointId {
        flow: 0,
        endpoint: 0,
        vantage: Vantage::Client,
        connection: 0,
    };
    let server = EndpointId {
        endpoint: 1,
        vantage: Vantage::Server,
        ..client
    };
    w.begin(&RunInfo {
        scenario: "golden".into(),
        seed: 1,
        endpoints: vec![
            EndpointInfo {
                id: client,
                kind: "quic",
                local: "10.0.0.1:10000".into(),
                remote: Some("10.1.0.1:10000".into()),
            },
            EndpointInfo {
                id: server,
                kind: "quic",
                local: "10.1.0.1:10000".into(),
                remote: Some("10.0.0.1:10000".into()),
            },
        ],
        links: vec!["forward".into(), "reverse".into()],
    });
    let ms = |x: u64| SimTime(x * 1_000_000);
    let us = |x: u64| SimTime(x * 1_000);
    let ep = |time: SimTime, event: TraceEvent| TraceRecord {
        time,
        source: TraceSource::Endpoint(client),
        event,
    };
    let net = |time: SimTime, flow: Option<u32>, event: TraceEvent| TraceRecord {
        time,
        source: TraceSource::Network { flow },
        event,
    };
    let params = TransportParameters {
        max_idle_timeout: Some(SimDuration::from_secs(30)),
        max_udp_payload_size: Some(1472),
        ack_delay_exponent: Some(3),
        max_ack_delay: Some(SimDuration::from_millis(25)),
        active_connection_id_limit: Some(2),
        initial_max_data: Some(10_000_000),
        initial_max_stream_data_bidi_local: Some(1_250_000),
        initial_max_stream_data_bidi_remote: Some(1_250_000),
        initial_max_stream_data_uni: Some(0),
        initial_max_streams_bidi: Some(100),
        initial_max_streams_uni: Some(0),
        disable_active_migration: None,
    };
    let recs = vec![
        ep(
            SimTime::ZERO,
            TraceEvent::ParametersSet {
                initiator: Initiator::Local,
                params: ProtocolParameters::Quic(params),
            },
        ),
        ep(
            SimTime::ZERO,
            TraceEvent::RecoveryParametersSet(RecoveryParameters {
                reordering_threshold: 3,
                time_threshold: 1.125,
                timer_granularity: SimDuration::from_millis(1),
                initial_rtt: SimDuration::from_millis(333),
                max_datagram_size: 1250,
                initial_congestion_window: 12500,
                minimum_congestion_window: 2500,
                loss_reduction_factor: 0.5,
                persistent_congestion_threshold: 3,
                congestion_controller: "new_reno",
            }),
        ),
        ep(
            SimTime::ZERO,
            TraceEvent::ConnectionStateUpdated {
                old: None,
                new: ConnectionState::Attempted,
            },
        ),
        ep(
            SimTime::ZERO,
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::Initial,
                    pn: 0,
                    size: 1250,
                    frames: vec![
                        Frame::Crypto {
                            offset: 0,
                            len: 280,
                        },
                        Frame::Padding { len: 904 },
                    ]
                    .into(),
                }),
                datagram_id: 0,
                trigger: None,
            },
        ),
        ep(
            SimTime::ZERO,
            TraceEvent::MetricsUpdated(RecoveryMetrics {
                congestion_window: Some(12500),
                bytes_in_flight: Some(1250),
                packets_in_flight: Some(1),
                pto_count: Some(0),
                ..Default::default()
            }),
        ),
        ep(
            us(40_500),
            TraceEvent::PacketReceived {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::Initial,
                    pn: 0,
                    size: 1250,
                    frames: vec![
                        Frame::Ack {
                            ranges: vec![(0, 0)].into(),
                            ack_delay_encoded: 0,
                            ecn: None,
                        },
                        Frame::Crypto { offset: 0, len: 90 },
                        Frame::Padding { len: 1099 },
                    ]
                    .into(),
                }),
                datagram_id: 0,
            },
        ),
        ep(
            us(40_500),
            TraceEvent::ParametersSet {
                initiator: Initiator::Remote,
                params: ProtocolParameters::Quic(TransportParameters {
                    ack_delay_exponent: Some(3),
                    ..params
                }),
            },
        ),
        ep(
            us(40_500),
            TraceEvent::MetricsUpdated(RecoveryMetrics {
                min_rtt: Some(SimDuration::from_micros(40_500)),
                smoothed_rtt: Some(SimDuration::from_micros(40_500)),
                latest_rtt: Some(SimDuration::from_micros(40_500)),
                rtt_variance: Some(SimDuration::from_micros(20_250)),
                bytes_in_flight: Some(0),
                packets_in_flight: Some(0),
                ..Default::default()
            }),
        ),
        ep(
            us(40_500),
            TraceEvent::ConnectionStateUpdated {
                old: Some(ConnectionState::Attempted),
                new: ConnectionState::HandshakeComplete,
            },
        ),
        ep(
            us(40_500),
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::OneRtt,
                    pn: 0,
                    size: 136,
                    frames: vec![Frame::Stream {
                        id: 0,
                        offset: 0,
                        len: 100,
                        fin: true,
                    }]
                    .into(),
                }),
                datagram_id: 1,
                trigger: None,
            },
        ),
        net(
            ms(50),
            Some(0),
            TraceEvent::LinkDrop {
                link: Some("forward".into()),
                reason: DropReason::QueueOverflow,
                size: 1250,
                content: DatagramContent::Quic(vec![PacketRef {
                    packet_type: PacketType::OneRtt,
                    packet_number: 3,
                    size: 1250,
                }]),
            },
        ),
        net(
            ms(60),
            None,
            TraceEvent::LinkChanged {
                link: "forward".into(),
                change: LinkChange {
                    at: ms(60),
                    rate: Some(Rate(5_000_000)),
                    delay: None,
                    loss: None,
                    corruption: None,
                },
            },
        ),
        ep(
            ms(81),
            TraceEvent::PacketReceived {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::OneRtt,
                    pn: 1,
                    size: 1250,
                    frames: vec![
                        Frame::Ack {
                            ranges: vec![(2, 4), (0, 0)].into(),
                            ack_delay_encoded: 125,
                            ecn: None,
                        },
                        Frame::MaxStreamData {
                            id: 0,
                            max: 2_500_000,
                        },
                        Frame::HandshakeDone,
                        Frame::Stream {
                            id: 0,
                            offset: 0,
                            len: 1180,
                            fin: false,
                        },
                    ]
                    .into(),
                }),
                datagram_id: 1,
            },
        ),
        ep(
            ms(100),
            TraceEvent::PacketLost {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::OneRtt,
                    pn: 3,
                    size: 1250,
                    frames: vec![Frame::Stream {
                        id: 4,
                        offset: 0,
                        len: 1200,
                        fin: false,
                    }]
                    .into(),
                }),
                trigger: LossTrigger::TimeThreshold,
            },
        ),
        ep(
            ms(100),
            TraceEvent::CongestionStateUpdated {
                old: Some("slow_start"),
                new: "recovery",
                trigger: Some("loss"),
            },
        ),
        ep(
            ms(100),
            TraceEvent::MetricsUpdated(RecoveryMetrics {
                min_rtt: Some(SimDuration::from_micros(40_500)),
                smoothed_rtt: Some(SimDuration::from_micros(45_250)),
                latest_rtt: Some(SimDuration::from_micros(60_125)),
                rtt_variance: Some(SimDuration::from_micros(12_500)),
                pto_count: Some(0),
                congestion_window: Some(6250),
                bytes_in_flight: Some(5000),
                ssthresh: Some(6250),
                packets_in_flight: Some(4),
                pacing_rate: Some(1_381_215),
                model_bandwidth: None,
                model_min_rtt: None,
            }),
        ),
        ep(
            ms(101),
            TraceEvent::DataBlockedUpdated {
                stream: None,
                blocked: true,
                reason: BlockedReason::CongestionControl,
            },
        ),
        ep(
            ms(120),
            TraceEvent::DataBlockedUpdated {
                stream: Some(0),
                blocked: false,
                reason: BlockedReason::StreamFlowControl,
            },
        ),
        ep(
            ms(130),
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(QuicPacket {
                    ty: PacketType::OneRtt,
                    pn: 5,
                    size: 41,
                    frames: vec![Frame::Ping, Frame::Padding { len: 15 }].into(),
                }),
                datagram_id: 2,
                trigger: Some(SendTrigger::PtoProbe),
            },
        ),
        net(
            ms(150),
            None,
            TraceEvent::Handover {
                index: 0,
                pair: 0,
                address: AddressChange::Ip,
                new_links: ["handover0/forward".into(), "handover0/reverse".into()],
                flushed: 0,
            },
        ),
    ];
    for r in &recs {
        w.record(r);
    }
    w.finish(ms(200));
}

fn golden_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/qvis-small.sqlog")
}

/// The qvis writer's output for [`golden_stream`] equals `tests/golden/qvis-small.sqlog`
/// byte for byte. Set `QUICSIM_BLESS=1` to rewrite the file, then re-verify it by hand
/// (see the comment in the file's neighbour, `tests/golden/README.md`).
#[test]
fn qvis_shape_matches_the_golden_file() {
    let mut w = QlogWriter::new(QlogFormat::Qvis, "golden", Box::new(|_| Ok(Vec::new())));
    golden_stream(&mut w);
    let outs = w.into_outputs().unwrap();
    let client = &outs
        .iter()
        .find(|(k, _)| k.vantage == Vantage::Client)
        .unwrap()
        .1;
    let path = golden_path();
    if std::env::var_os("QUICSIM_BLESS").is_some() {
        std::fs::write(&path, client).unwrap();
    }
    let golden = std::fs::read(&path).expect("golden file");
    if *client != golden {
        let got = String::from_utf8_lossy(client);
        let want = String::from_utf8_lossy(&golden);
        for (i, (g, w)) in got.split('\u{1e}').zip(want.split('\u{1e}')).enumerate() {
            assert_eq!(g, w, "record {i} differs from {}", path.display());
        }
        panic!("output and golden file differ in length");
    }
    // And the golden file itself is valid JSON-SEQ with a qvis header.
    let recs = parse_json_seq(&golden);
    check_qvis_header(&recs[0], "client");
    check_events(&recs);
}

/// The JSON "shape" of a value: object keys (sorted) with the shapes of their values,
/// array element shapes (deduplicated), and scalar kinds.
fn shape(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(a) => {
            let mut s: Vec<String> = a.iter().map(shape).collect();
            s.sort();
            s.dedup();
            format!("[{}]", s.join("|"))
        }
        Value::Object(m) => {
            let mut s: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", shape(v))).collect();
            s.sort();
            format!("{{{}}}", s.join(","))
        }
    }
}

/// Key of an event for shape comparison: its name, the marker type, and for packets the
/// packet type (Initial packets carry other frames than 1-RTT ones).
fn shape_key(name: &str, data: &Value) -> String {
    let sub = data["type"]
        .as_str()
        .or_else(|| data["header"]["packet_type"].as_str())
        .unwrap_or("");
    // A drop marker describes QUIC packets or a CBR datagram.
    let content = if data.get("cbr_seq").is_some() {
        "/cbr"
    } else {
        ""
    };
    format!("{name}/{sub}{content}")
}

/// Whether `real` has a shape the golden value allows: every key of an object is in the
/// golden object (optional fields may be missing) with a conforming value, every array
/// element conforms to some golden element, scalars are of the same kind.
fn conforms(real: &Value, golden: &Value) -> Result<(), String> {
    match (real, golden) {
        (Value::Object(r), Value::Object(g)) => {
            for (k, v) in r {
                let gv = g.get(k).ok_or_else(|| format!("unexpected key {k}"))?;
                conforms(v, gv).map_err(|e| format!("{k}.{e}"))?;
            }
            Ok(())
        }
        (Value::Array(r), Value::Array(g)) => {
            for (i, v) in r.iter().enumerate() {
                if !g.iter().any(|gv| conforms(v, gv).is_ok()) {
                    return Err(format!("[{i}]: {v} fits no golden element"));
                }
            }
            Ok(())
        }
        _ if shape(real) == shape(golden) => Ok(()),
        _ => Err(format!(
            "{} where the golden file has {}",
            shape(real),
            shape(golden)
        )),
    }
}

/// `None` if `real` conforms to one of the golden values, else the first reason it does not.
fn first_misfit(real: &Value, golden: &[Value]) -> Option<String> {
    let errs: Vec<String> = golden
        .iter()
        .filter_map(|g| conforms(real, g).err())
        .collect();
    if errs.len() < golden.len() {
        None
    } else {
        errs.into_iter().next()
    }
}

/// Events of real runs in the qvis shape conform to the golden file's events of the same
/// kind (optional fields may be absent; each frame conforms to the golden frame of its
/// type); the header has the golden header's exact shape.
#[test]
fn real_qvis_traces_have_the_golden_shape() {
    let golden = parse_json_seq(&std::fs::read(golden_path()).unwrap());
    let mut want: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut frame_want: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let without_frames = |d: &Value| {
        let mut d = d.clone();
        if let Some(m) = d.as_object_mut() {
            m.remove("frames");
        }
        d
    };
    for e in &golden[1..] {
        let (name, d) = (e["name"].as_str().unwrap(), &e["data"]);
        want.entry(shape_key(name, d))
            .or_default()
            .push(without_frames(d));
        for f in d["frames"].as_array().into_iter().flatten() {
            let ft = f["frame_type"].as_str().unwrap().to_string();
            frame_want.entry(ft).or_default().push(f.clone());
        }
    }
    for text in [CBR_EVENTS, QUIC_LOSSY] {
        let cfg = scenario(text);
        let (_, outs) = run_qlog(&cfg, cfg.seed, QlogFormat::Qvis);
        for (key, bytes) in &outs {
            let recs = parse_json_seq(bytes);
            assert_eq!(shape(&recs[0]), shape(&golden[0]), "{key:?} header");
            for e in &recs[1..] {
                let (name, d) = (e["name"].as_str().unwrap(), &e["data"]);
                let k = shape_key(name, d);
                if let Some(ws) = want.get(&k) {
                    let d = without_frames(d);
                    if let Some(err) = first_misfit(&d, ws) {
                        panic!("{key:?} {k}: {err}");
                    }
                }
                for f in d["frames"].as_array().into_iter().flatten() {
                    let ft = f["frame_type"].as_str().unwrap();
                    if let Some(ws) = frame_want.get(ft) {
                        if let Some(err) = first_misfit(f, ws) {
                            panic!("{key:?} {k} frame {ft}: {err}");
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// consistency of the QUIC events with the run (read back from the draft-format qlog)

/// QUIC over a lossy, queue-limited link with the time series on: losses of both kinds
/// (random and queue overflow), recovery, and a cwnd that moves.
const QUIC_CONSISTENCY: &str = r#"
name = "qlog-consistency"
seed = 9
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "20ms", queue = { packets = 30 } }
[topology.forward.loss]
model = "bernoulli"
p = 0.01
[topology.reverse.loss]
model = "bernoulli"
p = 0.02
[[flows]]
kind = "quic_bulk"
bytes = "1MB"
streams = 3
[output]
series = true
sample_interval = "5ms"
"#;

/// One trace read back: its endpoint index and its events.
struct ReadTrace {
    key: TraceKey,
    endpoint: u64,
    events: Vec<(f64, String, Value)>,
}

fn read_traces(cfg: &Config, seed: u64) -> (RunResult, Vec<ReadTrace>) {
    let (r, outs) = run_qlog(cfg, seed, QlogFormat::Draft);
    let traces = outs
        .iter()
        .map(|(key, bytes)| {
            let recs = parse_json_seq(bytes);
            ReadTrace {
                key: *key,
                endpoint: recs[0]["quicsim"]["endpoints"][0].as_u64().unwrap(),
                events: check_events(&recs),
            }
        })
        .collect();
    (r, traces)
}

fn quic_metrics(r: &RunResult, endpoint: u64) -> sim_core::metrics::quic::QuicMetrics {
    let mut i = 0;
    for f in &r.flows {
        for e in &f.endpoints {
            if i == endpoint {
                if let sim_core::metrics::EndpointMetrics::Quic(q) = e {
                    return (**q).clone();
                }
                panic!("endpoint {endpoint} is not QUIC");
            }
            i += 1;
        }
    }
    panic!("no endpoint {endpoint}")
}

/// (packet type, packet number) of a header.
fn pkt_id(h: &Value) -> (String, u64) {
    (
        h["packet_type"].as_str().unwrap().to_string(),
        h["packet_number"].as_u64().unwrap(),
    )
}

/// cwnd and bytes in flight of `quic:recovery_metrics_updated` equal the run's sampled time
/// series (the CSV columns `flow0.ep<i>.cwnd` / `.bytes_in_flight`): at each sampling
/// instant the series value is the value the trace says held then (the last update
/// before that instant, or one set at that very instant, where event order decides).
#[test]
fn metrics_events_match_the_time_series() {
    let cfg = scenario(QUIC_CONSISTENCY);
    let (r, traces) = read_traces(&cfg, cfg.seed);
    let series = r.series.as_ref().expect("series on");
    let mut checked = 0;
    for t in &traces {
        for metric in ["congestion_window", "bytes_in_flight"] {
            let col_name = match metric {
                "congestion_window" => "cwnd",
                _ => "bytes_in_flight",
            };
            let col = format!("flow{}.ep{}.{col_name}", t.key.flow, t.endpoint);
            let ci = series
                .columns
                .iter()
                .position(|c| *c == col)
                .unwrap_or_else(|| panic!("no column {col}"));
            // The metric's updates: (time ms, value).
            let updates: Vec<(f64, f64)> = t
                .events
                .iter()
                .filter(|(_, n, d)| n == "quic:recovery_metrics_updated" && d.get(metric).is_some())
                .map(|(time, _, d)| (*time, d[metric].as_f64().unwrap()))
                .collect();
            assert!(!updates.is_empty(), "{col}: no updates traced");
            for row in &series.rows {
                let at = row[0] * 1e3; // seconds -> ms
                let before = updates.iter().rev().find(|(u, _)| *u < at - 1e-6);
                let at_instant: Vec<f64> = updates
                    .iter()
                    .filter(|(u, _)| (*u - at).abs() <= 1e-6)
                    .map(|(_, v)| *v)
                    .collect();
                let Some(before) = before.map(|b| b.1).or(at_instant.first().copied()) else {
                    continue; // sampled before the endpoint reported anything
                };
                let v = row[ci];
                assert!(
                    v == before || at_instant.contains(&v),
                    "{col} at {at} ms: series {v}, trace {before} (or {at_instant:?} at that instant)"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} samples checked");
}

/// Every packet the endpoint's metrics count as lost has a `quic:packet_lost` event, for
/// a packet it sent, with a trigger.
#[test]
fn every_lost_packet_has_a_packet_lost_event() {
    let cfg = scenario(QUIC_CONSISTENCY);
    let (r, traces) = read_traces(&cfg, cfg.seed);
    let mut total = 0;
    for t in &traces {
        let m = quic_metrics(&r, t.endpoint);
        let sent: std::collections::BTreeSet<(String, u64)> = t
            .events
            .iter()
            .filter(|(_, n, _)| n == "quic:packet_sent")
            .map(|(_, _, d)| pkt_id(&d["header"]))
            .collect();
        let lost: Vec<&Value> = t
            .events
            .iter()
            .filter(|(_, n, _)| n == "quic:packet_lost")
            .map(|(_, _, d)| d)
            .collect();
        assert_eq!(lost.len() as u64, m.transport.packets_lost, "{:?}", t.key);
        for d in lost {
            let id = pkt_id(&d["header"]);
            assert!(
                sent.contains(&id),
                "{:?}: lost {id:?} was never sent",
                t.key
            );
            let trig = d["trigger"].as_str().unwrap();
            assert!(
                ["reordering_threshold", "time_threshold", "pto_expired"].contains(&trig),
                "{trig}"
            );
        }
        total += m.transport.packets_lost;
    }
    assert!(total > 0, "the scenario must lose packets");
}

/// Packet numbers and sizes are those the network carried: the client's datagrams are
/// what the forward link was offered (count and bytes), every packet a link dropped was
/// sent with that number and size, and every packet received was sent with that number
/// and size by the peer; sent = received + dropped by the network.
#[test]
fn packet_numbers_and_sizes_match_what_the_link_saw() {
    let cfg = scenario(QUIC_CONSISTENCY);
    let (r, traces) = read_traces(&cfg, cfg.seed);
    assert_eq!(r.status, sim_core::RunStatus::Completed);
    type Pkts = BTreeMap<(String, u64), u64>;
    let mut sent: BTreeMap<Vantage, Pkts> = BTreeMap::new();
    let mut received: BTreeMap<Vantage, Pkts> = BTreeMap::new();
    let mut dropped: BTreeMap<Vantage, Pkts> = BTreeMap::new();
    for t in &traces {
        let v = t.key.vantage;
        let m = quic_metrics(&r, t.endpoint);
        let (mut bytes, mut dgrams) = (0u64, std::collections::BTreeSet::new());
        for (_, name, d) in &t.events {
            let size = d["raw"]["length"].as_u64();
            match name.as_str() {
                "quic:packet_sent" => {
                    let prev = sent
                        .entry(v)
                        .or_default()
                        .insert(pkt_id(&d["header"]), size.unwrap());
                    assert!(prev.is_none(), "{v:?}: packet number sent twice");
                    bytes += size.unwrap();
                    dgrams.insert(d["datagram_id"].as_u64().unwrap());
                }
                "quic:packet_received" => {
                    received
                        .entry(v)
                        .or_default()
                        .insert(pkt_id(&d["header"]), size.unwrap());
                }
                "simulation:marker" if d["type"] == "link_drop" && v == Vantage::Client => {
                    // Drops are in both traces; read them once. Forward links carry the
                    // client's packets.
                    let from = if d["link"].as_str().unwrap_or("").ends_with("forward") {
                        Vantage::Client
                    } else {
                        Vantage::Server
                    };
                    for p in d["packets"].as_array().unwrap() {
                        let id = pkt_id(&p["header"]);
                        dropped
                            .entry(from)
                            .or_default()
                            .insert(id, p["raw"]["length"].as_u64().unwrap());
                    }
                }
                _ => {}
            }
        }
        // What the endpoint counted.
        assert_eq!(bytes, m.transport.bytes_sent, "{v:?} bytes");
        assert_eq!(
            dgrams.len() as u64,
            m.quic.datagrams_sent,
            "{v:?} datagrams"
        );
        // What the first link saw (two_hosts: forward from the client, reverse from the
        // server; a single flow).
        let link = match v {
            Vantage::Client => "forward",
            Vantage::Server => "reverse",
        };
        let l = r.links.iter().find(|l| l.name == link).unwrap();
        assert_eq!(l.packets_in, m.quic.datagrams_sent, "{link} packets");
        assert_eq!(
            l.bytes_in,
            m.transport.bytes_sent + 28 * m.quic.datagrams_sent,
            "{link} bytes"
        );
    }
    for (v, peer) in [
        (Vantage::Client, Vantage::Server),
        (Vantage::Server, Vantage::Client),
    ] {
        let s = &sent[&v];
        let d = dropped.get(&v).cloned().unwrap_or_default();
        let rcv = received.get(&peer).cloned().unwrap_or_default();
        for (id, size) in d.iter().chain(rcv.iter()) {
            assert_eq!(
                s.get(id),
                Some(size),
                "{v:?} {id:?}: not sent with that size"
            );
        }
        let mut union = d.clone();
        union.extend(rcv.clone());
        assert_eq!(
            union.len(),
            d.len() + rcv.len(),
            "{v:?}: dropped and received"
        );
        assert_eq!(&union, s, "{v:?}: sent = received by the peer + dropped");
    }
    assert!(!dropped.is_empty(), "the scenario must drop packets");
}

/// Events of a connection that was not in [`RunInfo`] (an endpoint that runs several
/// connections tags them 1, 2, ...) open their own trace, with a header, when they come.
#[test]
fn a_later_connection_gets_its_own_trace() {
    let mut w = QlogWriter::new(QlogFormat::Draft, "t", Box::new(|_| Ok(Vec::new())));
    golden_stream(&mut w); // begins, records connection 0, finishes
    let second = EndpointId {
        flow: 0,
        endpoint: 0,
        vantage: Vantage::Client,
        connection: 1,
    };
    w.record(&TraceRecord {
        time: SimTime(250_000_000),
        source: TraceSource::Endpoint(second),
        event: TraceEvent::ConnectionStateUpdated {
            old: None,
            new: ConnectionState::Attempted,
        },
    });
    let outs = w.into_outputs().unwrap();
    let keys: Vec<(u32, Vantage)> = outs
        .iter()
        .map(|(k, _)| (k.connection, k.vantage))
        .collect();
    assert_eq!(
        keys,
        vec![
            (0, Vantage::Client),
            (0, Vantage::Server),
            (1, Vantage::Client)
        ]
    );
    let recs = parse_json_seq(&outs[2].1);
    check_draft_header(&recs[0], "client");
    assert_eq!(recs[0]["quicsim"]["connection"], 1);
    let evs = check_events(&recs);
    assert_eq!(evs[0].1, "simulation:scenario");
    assert_eq!(evs[1].1, "quic:connection_state_updated");
    assert_eq!(evs[1].0, 250.0);
}

/// A trace is as deterministic as the run: the same config and seed give the same bytes.
#[test]
fn traces_are_deterministic() {
    let cfg = scenario(QUIC_LOSSY);
    for fmt in [QlogFormat::Draft, QlogFormat::Qvis] {
        let (_, a) = run_qlog(&cfg, 5, fmt);
        let (_, b) = run_qlog(&cfg, 5, fmt);
        assert_eq!(a, b, "{fmt:?}");
    }
}

/// `recovery_parameters_set` reports the controller's own minimum window and loss
/// reduction factor: NewReno kLossReductionFactor 0.5 (RFC 9002 §7.3.2), CUBIC β = 0.7
/// (RFC 9438 §4.6), β_eff = (N − 1 + β)/N with N emulated connections (Chromium N = 2:
/// 0.85), and kMinimumWindow = 2 segments of the controller's segment size (Chromium
/// counts in kDefaultTCPMSS = 1460 B: 2920 B, not 2 x 1250).
#[test]
fn recovery_parameters_come_from_the_controller() {
    let cases: [(&str, f64, u64, &str); 6] = [
        ("", 0.7, 2 * 1250, "cubic"),
        (
            "cc = \"new_reno\"\nhystart = true",
            0.5,
            2 * 1250,
            "newreno",
        ),
        ("cc = \"cubic\"", 0.7, 2 * 1250, "cubic"),
        (
            "cc = \"cubic\"\nemulated_connections = 3",
            2.7 / 3.0,
            2 * 1250,
            "cubic",
        ),
        ("profile = \"chromium\"", 0.85, 2 * 1460, "cubic"),
        (
            "cc = \"new_reno\"\ncc_segment_size = 1460",
            0.5,
            2 * 1460,
            "newreno",
        ),
    ];
    for (keys, factor, min_window, name) in cases {
        let cfg = scenario(&format!(
            "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"20Mbps\", delay = \"10ms\" }}\n\
             [[flows]]\nkind = \"quic_bulk\"\nbytes = \"20kB\"\n{keys}\n"
        ));
        let (_, traces) = read_traces(&cfg, 1);
        let mut seen = 0;
        for t in &traces {
            for (_, ev, data) in &t.events {
                if ev != "quic:recovery_parameters_set" {
                    continue;
                }
                seen += 1;
                let got = data["loss_reduction_factor"].as_f64().unwrap();
                assert!(
                    (got - factor).abs() < 1e-12,
                    "{keys:?}: factor {got}, want {factor}"
                );
                assert_eq!(
                    data["minimum_congestion_window"].as_u64(),
                    Some(min_window),
                    "{keys:?}"
                );
                assert_eq!(
                    data["congestion_controller"].as_str(),
                    Some(name),
                    "{keys:?}"
                );
            }
        }
        assert_eq!(seen, 2, "{keys:?}: one record per endpoint");
    }
}

/// A BBR sender's qlog carries its model (issue 30): `metrics_updated` has the extension
/// fields `bbr_bandwidth` (bit/s) and `bbr_min_rtt` (ms), and `congestion_state_updated`
/// BBR's states; a window-based sender's has neither field.
#[test]
fn a_bbr_senders_qlog_carries_its_bandwidth_and_min_rtt_estimates() {
    let text = |cc: &str| {
        format!(
            r#"
name = "qlog-bbr"
seed = 1
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "20ms" }}
[[flows]]
transport = "quic"
quic = {{ cc = "{cc}" }}
workload = {{ kind = "bulk", bytes = "3MB" }}
"#
        )
    };
    let (_, traces) = run_qlog(&scenario(&text("bbr1")), 1, QlogFormat::Draft);
    let server = traces
        .iter()
        .find(|(k, _)| k.vantage == Vantage::Server)
        .expect("server trace");
    let events = check_events(&parse_json_seq(&server.1));
    let bw: Vec<f64> = events
        .iter()
        .filter(|(_, n, _)| n.ends_with("metrics_updated"))
        .filter_map(|(_, _, d)| d["bbr_bandwidth"].as_f64())
        .collect();
    let last_bw = *bw.last().expect("bandwidth estimates");
    assert!((8e6..=10e6).contains(&last_bw), "{last_bw} bit/s");
    let rtt: Vec<f64> = events
        .iter()
        .filter_map(|(_, _, d)| d["bbr_min_rtt"].as_f64())
        .collect();
    assert!(rtt.iter().all(|r| (40.0..45.0).contains(r)), "{rtt:?}");
    assert!(!rtt.is_empty());
    let states: Vec<&str> = events
        .iter()
        .filter(|(_, n, _)| n.ends_with("congestion_state_updated"))
        .filter_map(|(_, _, d)| d["new"].as_str())
        .collect();
    assert!(
        states.contains(&"startup") && states.contains(&"probe_bw"),
        "{states:?}"
    );
    let (_, traces) = run_qlog(&scenario(&text("cubic")), 1, QlogFormat::Draft);
    for (_, bytes) in &traces {
        let t = String::from_utf8_lossy(bytes);
        assert!(!t.contains("bbr_bandwidth") && !t.contains("bbr_min_rtt"));
    }
}
