//! TCP and SCTP flows written in scenarios (`transport = "tcp" | "sctp"`): parsing, per-side
//! keys, errors naming the field, the descriptors against the configs, and runs.

use super::*;
use crate::config::sctp::{SctpCc, SctpConfig};
use crate::config::tcp::{TcpConfig, TlsVersion};
use crate::config::*;
use crate::metrics::{EndpointMetrics, RunResult, RunStatus};
use crate::time::{SimDuration, SimTime};

/// A two-host document (20 Mbit/s, 20 ms one way) with one flow written as `flow`.
fn doc(flow: &str) -> String {
    format!(
        "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"20Mbps\", delay = \"20ms\" }}\n\n[[flows]]\n{flow}"
    )
}

fn ok(text: &str) -> Config {
    match parse_str(text) {
        Ok(s) => s.base,
        Err(e) => panic!("unexpected error: {e}\n--- document ---\n{text}"),
    }
}

/// Asserts the error names `field` and its `allowed` mentions `part`.
#[track_caller]
fn assert_err(text: &str, field: &str, part: &str) {
    let e = match parse_str(text) {
        Ok(_) => panic!("document should be rejected:\n{text}"),
        Err(e) => e,
    };
    assert_eq!(e.field, field, "wrong field in: {e}");
    assert!(
        e.allowed.contains(part),
        "`allowed` of {e} should mention {part:?}"
    );
}

fn run(cfg: &Config) -> RunResult {
    crate::runner::run(cfg, cfg.seed).expect("runs")
}

/// The client's and the server's metrics of flow 0.
fn endpoints(r: &RunResult) -> (&EndpointMetrics, &EndpointMetrics) {
    let e = &r.flows[0].endpoints;
    (&e[0], &e[1])
}

#[test]
fn tcp_flow_gets_the_tcp_preset_and_its_keys() {
    let c = ok(&doc(
        "transport = \"tcp\"\nworkload = { kind = \"bulk\" }\n",
    ));
    let t = c.flows[0].tcp().expect("a TCP flow");
    assert!(t.same());
    // The TCP preset, not the flattened CcParams defaults (QUIC's: pacing on, no HyStart).
    assert_eq!(t.client, TcpConfig::default());
    assert!(t.client.cc.hystart && !t.client.cc.pacing);
    // Flat, in `tcp = { .. }`, and in units.
    let flat = ok(&doc(
        "transport = \"tcp\"\ntls = \"1.2\"\nrecv_window = \"1MiB\"\nrto_min = \"1s\"\nworkload = { kind = \"bulk\" }\n",
    ));
    let table = ok(&doc(
        "transport = \"tcp\"\ntcp = { tls = \"1.2\", recv_window = 1048576, rto_min = \"1000ms\" }\nworkload = { kind = \"bulk\" }\n",
    ));
    assert_eq!(flat, table);
    let t = &flat.flows[0].tcp().unwrap().server;
    assert_eq!(t.tls, TlsVersion::Tls12);
    assert_eq!(t.recv_window, 1 << 20);
    assert_eq!(t.rto_min, SimDuration::from_secs(1));
    assert_eq!(t.mss, 1460, "the other keys keep their defaults");
}

/// TCP runs Linux's CUBIC by default (`cubic = "linux"`, with Linux HyStart): the
/// resolved configuration says so and the server's controller reports the flavour;
/// `cubic = "rfc9438"` selects the RFC's (QUIC's) controller; any other value is an error
/// naming the key. QUIC and SCTP have no `cubic` key.
#[test]
fn tcp_defaults_to_the_linux_cubic_flavour() {
    use crate::cc::CubicFlavor;
    let flow = |extra: &str| {
        doc(&format!(
            "transport = \"tcp\"\nworkload = {{ kind = \"bulk\", bytes = \"100KB\" }}\n{extra}"
        ))
    };
    let c = ok(&flow(""));
    let t = c.flows[0].tcp().expect("a TCP flow");
    assert_eq!(t.server.cubic, CubicFlavor::Linux);
    assert_eq!(t.server.cc_params().cubic().flavor, CubicFlavor::Linux);
    let resolved = serde_json::to_value(&c).expect("serialises");
    assert!(
        resolved.to_string().contains("\"cubic\":\"linux\""),
        "resolved config names the flavour: {resolved}"
    );
    let rfc = ok(&flow("cubic = \"rfc9438\"\n"));
    let t = rfc.flows[0].tcp().unwrap();
    assert_eq!(t.client.cubic, CubicFlavor::Rfc9438);
    assert_eq!(t.server.cc_params().cubic().flavor, CubicFlavor::Rfc9438);
    assert_err(&flow("cubic = \"bsd\"\n"), "flows[0].cubic", "\"linux\"");
    assert_err(
        &flow("tcp = { cubic = \"linux\", emulated_connections = 2 }\n"),
        "flows[0].tcp.emulated_connections",
        "1 with cubic = \"linux\"",
    );
    assert!(
        ok(&flow("cubic = \"rfc9438\"\nemulated_connections = 2\n")).flows[0]
            .tcp()
            .is_some()
    );
    for other in ["quic", "sctp"] {
        let text = doc(&format!(
            "transport = \"{other}\"\ncubic = \"linux\"\nworkload = {{ kind = \"bulk\" }}\n"
        ));
        let e = parse_str(&text).expect_err(other);
        assert_eq!(e.field, "flows[0].cubic", "{other}: {e}");
    }
    // The run: both finish, and differently (another controller).
    let (a, b) = (run(&c), run(&rfc));
    assert_eq!(a.status, RunStatus::Completed);
    assert_eq!(b.status, RunStatus::Completed);
}

#[test]
fn sctp_flow_gets_rfc9260_defaults_and_its_keys() {
    let c = ok(&doc(
        "transport = \"sctp\"\nworkload = { kind = \"bulk\" }\n",
    ));
    assert_eq!(c.flows[0].sctp().unwrap().client, SctpConfig::default());
    let c = ok(&doc(
        "transport = \"sctp\"\nsctp = { cc = \"cubic\", a_rwnd = \"64KB\", rto_min = \"200ms\", rto_initial = \"200ms\" }\nworkload = { kind = \"bulk\" }\n",
    ));
    let s = &c.flows[0].sctp().unwrap().client;
    assert_eq!(s.cc, SctpCc::Shared(crate::cc::CcAlgorithm::Cubic));
    assert_eq!(s.a_rwnd, 64_000);
    assert_eq!(s.rto_min, SimDuration::from_millis(200));
}

/// `tcp = { client = {..}, server = {..} }` and `[flows.tcp.server]` set one side only,
/// over the shared keys; the same for SCTP.
#[test]
fn per_side_keys_apply_to_their_side() {
    let inline = ok(&doc(
        "transport = \"tcp\"\ntcp = { tls = \"none\", server = { recv_window = \"1MB\" }, client = { ack_every = 1 } }\nworkload = { kind = \"bulk\" }\n",
    ));
    let t = inline.flows[0].tcp().unwrap();
    assert_eq!(
        (t.client.tls, t.server.tls),
        (TlsVersion::None, TlsVersion::None)
    );
    assert_eq!(t.server.recv_window, 1_000_000);
    assert_eq!(t.client.recv_window, TcpConfig::default().recv_window);
    assert_eq!((t.client.ack_every, t.server.ack_every), (1, 2));
    let tables = ok(&doc(
        "transport = \"tcp\"\ntls = \"none\"\nworkload = { kind = \"bulk\" }\n[flows.tcp.server]\nrecv_window = \"1MB\"\n[flows.tcp.client]\nack_every = 1\n",
    ));
    assert_eq!(inline, tables);
    let c = ok(&doc(
        "transport = \"sctp\"\nworkload = { kind = \"bulk\" }\n[flows.sctp.client]\na_rwnd = 3000\n",
    ));
    let s = c.flows[0].sctp().unwrap();
    assert_eq!((s.client.a_rwnd, s.server.a_rwnd), (3000, 1_250_000));
}

#[test]
fn keys_of_another_transport_are_errors_naming_the_field() {
    let bulk = "workload = { kind = \"bulk\" }\n";
    let tcp = |extra: &str| doc(&format!("transport = \"tcp\"\n{bulk}{extra}"));
    assert_err(
        &tcp("max_udp_payload = 1200\n"),
        "flows[0].max_udp_payload",
        "unknown field `max_udp_payload`",
    );
    assert_err(
        &tcp("tcp = { max_udp_payload = 1200 }\n"),
        "flows[0].tcp.max_udp_payload",
        "a TCP key",
    );
    assert_err(
        &tcp("[flows.tcp.client]\nmax_udp_payload = 1200\n"),
        "flows[0].tcp.client.max_udp_payload",
        "a TCP key",
    );
    assert_err(
        &tcp("a_rwnd = 3000\n"),
        "flows[0].a_rwnd",
        "unknown field `a_rwnd`",
    );
    assert_err(
        &tcp("quic = { cc = \"cubic\" }\n"),
        "flows[0].quic",
        "no `quic` table",
    );
    let sctp = |extra: &str| doc(&format!("transport = \"sctp\"\n{bulk}{extra}"));
    assert_err(
        &sctp("tls = \"1.3\"\n"),
        "flows[0].tls",
        "unknown field `tls`",
    );
    assert_err(
        &sctp("sctp = { mss = 1000 }\n"),
        "flows[0].sctp.mss",
        "SCTP key",
    );
    assert_err(
        &sctp("tcp = { mss = 1000 }\n"),
        "flows[0].tcp",
        "no `tcp` table",
    );
    let quic = |extra: &str| doc(&format!("transport = \"quic\"\n{bulk}{extra}"));
    assert_err(
        &quic("tls = \"1.3\"\n"),
        "flows[0].tls",
        "unknown field `tls`",
    );
    assert_err(
        &quic("quic = { sack = false }\n"),
        "flows[0].quic.sack",
        "a QUIC key",
    );
}

#[test]
fn bad_values_name_the_field_and_the_side() {
    let tcp = |extra: &str| {
        doc(&format!(
            "transport = \"tcp\"\nworkload = {{ kind = \"bulk\" }}\n{extra}"
        ))
    };
    assert_err(&tcp("mss = 100\n"), "flows[0].mss", "[536, 65495]");
    assert_err(
        &tcp("tcp = { mss = 100 }\n"),
        "flows[0].tcp.mss",
        "[536, 65495]",
    );
    assert_err(&tcp("tls = \"1.4\"\n"), "flows[0].tls", "\"1.3\"");
    assert_err(
        &tcp("[flows.tcp.server]\ndelayed_ack = \"1s\"\n"),
        "flows[0].tcp.server.delayed_ack",
        "500ms",
    );
    // A rule between keys, named where the offending value was written.
    assert_err(
        &tcp("[flows.tcp.server]\nwindow_scale = false\n"),
        "flows[0].recv_window",
        "65535 without window_scale",
    );
    assert_err(
        &tcp("[flows.tcp.client]\nrecv_window = 1000\n"),
        "flows[0].tcp.client.recv_window",
        "at least one mss",
    );
    let sctp = |extra: &str| {
        doc(&format!(
            "transport = \"sctp\"\nworkload = {{ kind = \"bulk\" }}\n{extra}"
        ))
    };
    assert_err(&sctp("a_rwnd = 1000\n"), "flows[0].a_rwnd", "at least 1500");
    assert_err(&sctp("cc = \"bbr\"\n"), "flows[0].cc", "\"rfc9260\"");
    assert_err(
        &sctp("[flows.sctp.client]\nrto_initial = \"100ms\"\n"),
        "flows[0].sctp.client.rto_initial",
        "[rto_min, rto_max]",
    );
    // What TCP and SCTP do not run (yet): a read rate, a connection sequence.
    assert_err(
        &doc("transport = \"tcp\"\nworkload = { kind = \"bulk\", read_rate = \"1Mbps\" }\n"),
        "flows[0].workload.read_rate",
        "no `read_rate` on a tcp flow",
    );
    assert_err(
        &doc("transport = \"sctp\"\nworkload = { kind = \"sequence\", connections = [{}] }\n"),
        "flows[0].workload.kind",
        "a workload the \"sctp\" transport runs",
    );
}

/// `resolved_config` / `to_toml` write TCP and SCTP flows in the same spelling, and they
/// read back to the same config (sides apart when they differ).
#[test]
fn tcp_and_sctp_flows_round_trip() {
    for flow in [
        "transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = \"3MB\" }\n",
        "transport = \"tcp\"\ntcp = { tls = \"1.2\", tls_record_overhead = 10, cc = \"new_reno\", server = { recv_window = \"1MB\", initial_cwnd_packets = 4 } }\nworkload = { kind = \"bulk\" }\n",
        "transport = \"sctp\"\nworkload = { kind = \"bulk\", streams = 3 }\n",
        "transport = \"sctp\"\nsctp = { cc = \"new_reno\", client = { a_rwnd = 3000, initial_cwnd_bytes = 3000 } }\nworkload = { kind = \"bulk\" }\n",
    ] {
        let c = ok(&doc(flow));
        let text = to_toml(&c).expect("to_toml");
        let back = parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.base, c, "{text}");
        // The JSON of the resolved config reads back too.
        let json = serde_json::to_string(&c).unwrap();
        let again: Config = serde_json::from_str(&json).unwrap();
        assert_eq!(again, c);
    }
}

/// A TCP and an SCTP bulk transfer complete with every byte read by the client and every
/// request read by the server; the endpoints report their own metrics.
#[test]
fn tcp_and_sctp_bulk_transfers_complete() {
    for (transport, kind) in [("tcp", "tcp"), ("sctp", "sctp")] {
        let c = ok(&doc(&format!(
            "transport = \"{transport}\"\nworkload = {{ kind = \"bulk\", bytes = \"300KB\", streams = 3, request_size = 200 }}\n"
        )));
        let r = run(&c);
        assert_eq!(r.status, RunStatus::Completed, "{transport}");
        let (cl, sv) = endpoints(&r);
        assert_eq!((cl.kind(), sv.kind()), (kind, kind));
        let (ct, st) = (cl.transport().unwrap(), sv.transport().unwrap());
        assert_eq!(ct.stream_bytes_read, 300_000, "{transport}");
        assert_eq!(st.stream_bytes_read, 3 * 200, "{transport}");
        assert!(ct.completion_secs.is_some() && ct.goodput_bps.unwrap() > 0.0);
        assert_eq!(cl.workload().unwrap().stream_completion_secs.len(), 3);
        match (transport, cl) {
            ("tcp", EndpointMetrics::Tcp(m)) => assert_eq!(m.tcp.tls, "1.3"),
            ("sctp", EndpointMetrics::Sctp(m)) => assert!(m.sctp.data_chunks_sent > 0),
            _ => panic!("{transport}: {}", cl.kind()),
        }
    }
}

/// More bulk streams than SCTP negotiates (RFC 9260 §5.1.1: min(OS, peer's MIS) each way,
/// 10 outbound by default) stalled the run (stream 10 had no number), and then was
/// rejected; now the streams beyond the numbers wait for a number whose exchange ended,
/// as an application reuses SCTP streams (they are never closed), and the run completes,
/// whichever direction has fewer streams.
#[test]
fn sctp_bulk_streams_beyond_the_negotiated_streams_reuse_stream_numbers() {
    let flow = |extra: &str| {
        doc(&format!(
            "transport = \"sctp\"\n{extra}workload = {{ kind = \"bulk\", bytes = \"60KB\", streams = 12, request_size = 100 }}\n"
        ))
    };
    for extra in [
        "",
        "sctp = { server = { inbound_streams = 5 }, client = { outbound_streams = 20 } }\n",
        "sctp = { server = { outbound_streams = 3 } }\n",
        "outbound_streams = 12\n",
    ] {
        let r = run(&ok(&flow(extra)));
        assert_eq!(r.status, RunStatus::Completed, "{extra}");
        let (c, _) = endpoints(&r);
        let per_stream = &c.workload().expect("bulk").stream_completion_secs;
        assert_eq!(per_stream.len(), 12, "{extra}");
        assert!(per_stream.iter().all(|t| t.is_some()), "{extra}");
    }
}

/// A `video` or `web_page` workload opens one stream per request, more than SCTP's 10
/// negotiated streams: a default video (15 segments) stalled at 32.8 s when segment 10
/// found no stream number, and so did a page of more than 10 objects. Streams whose
/// exchange ended give their numbers to the next requests, and both complete (the
/// default page, 8 objects, completed before and still does).
#[test]
fn sctp_video_and_web_pages_with_more_requests_than_streams_complete() {
    let many: Vec<String> = (0..15)
        .map(|i| {
            let after = if i == 0 { "" } else { ", after = [0]" };
            format!("{{ size = \"20KB\"{after} }}")
        })
        .collect();
    for workload in [
        "{ kind = \"video\" }".to_string(),
        "{ kind = \"web_page\" }".to_string(),
        format!("{{ kind = \"web_page\", objects = [{}] }}", many.join(", ")),
    ] {
        let c = ok(&doc(&format!(
            "transport = \"sctp\"\nworkload = {workload}\n"
        )));
        let r = run(&c);
        assert_eq!(r.status, RunStatus::Completed, "{workload}");
        let (client, _) = endpoints(&r);
        assert!(
            client.transport().expect("sctp").completion_secs.is_some(),
            "{workload}"
        );
    }
}

/// The client's receive buffer limits a download, the server's does not: SCTP with a
/// 3000-byte a_rwnd at the client sends about 3000 B per round trip (40 ms), so 150 KB
/// take at least 50 round trips; the same buffer at the server (which only receives
/// the request) leaves the transfer a few round trips long.
#[test]
fn a_per_side_window_applies_to_its_side_in_the_run() {
    let completion = |side: &str| {
        let c = ok(&doc(&format!(
            "transport = \"sctp\"\nworkload = {{ kind = \"bulk\", bytes = \"150KB\" }}\n[flows.sctp.{side}]\na_rwnd = 3000\n"
        )));
        let r = run(&c);
        assert_eq!(r.status, RunStatus::Completed);
        endpoints(&r)
            .0
            .transport()
            .unwrap()
            .completion_secs
            .unwrap()
    };
    let (client, server) = (completion("client"), completion("server"));
    assert!(client >= 50.0 * 0.040, "client-limited: {client}");
    assert!(server < 0.5, "server-limited only the request: {server}");
}

/// `fast_open`, `early_data` and `resumed` parse flat and per side; the sides must agree
/// on the first two (errors name the server's key), 0-RTT needs TLS 1.3 and `resumed`
/// something to hold (errors name the field).
#[test]
fn fast_open_and_early_data_keys_parse_per_side_and_bad_combinations_are_rejected() {
    let bulk = "workload = { kind = \"bulk\" }\n";
    let tcp = |extra: &str| doc(&format!("transport = \"tcp\"\n{bulk}{extra}"));
    let c = ok(&tcp(
        "tcp = { fast_open = true, early_data = true, client = { resumed = true } }\n",
    ));
    let t = c.flows[0].tcp().unwrap();
    assert!(t.client.fast_open && t.server.fast_open);
    assert!(t.client.early_data && t.server.early_data);
    assert!(t.client.resumed && !t.server.resumed);
    let d = ok(&tcp(
        "fast_open = true\nearly_data = true\n[flows.tcp.client]\nresumed = true\n",
    ));
    assert_eq!(c, d);
    assert_err(
        &tcp("fast_open = true\n[flows.tcp.server]\nfast_open = false\n"),
        "flows[0].tcp.server.fast_open",
        "both sides",
    );
    assert_err(
        &tcp("tcp = { client = { early_data = true } }\n"),
        "flows[0].tcp.server.early_data",
        "both sides",
    );
    assert_err(
        &tcp("tls = \"1.2\"\nearly_data = true\n"),
        "flows[0].early_data",
        "1.3",
    );
    assert_err(&tcp("resumed = true\n"), "flows[0].resumed", "fast_open");
}

/// A `reconnects` flow over TCP with Fast Open and 0-RTT: the first connection makes a
/// full handshake (requesting a cookie, receiving a ticket), the two reconnections resume
/// with both and each saves two RTTs (TFO's and TLS's) against the same flow without.
#[test]
fn tcp_reconnections_resume_with_fast_open_and_early_data() {
    let transfer = |keys: &str| {
        let c = ok(&doc(&format!(
            "transport = \"tcp\"\n{keys}workload = {{ kind = \"reconnects\", bytes = \"60KB\", reconnections = 2, on = \"close\" }}\n"
        )));
        let r = run(&c);
        assert_eq!(r.status, RunStatus::Completed);
        let w = endpoints(&r).0.workload().unwrap().clone();
        let rep = w.reconnects.clone().expect("a reconnects report");
        for k in &w.connections {
            assert_eq!(k.metrics.transport().stream_bytes_read, 20_000);
        }
        (rep.transfer_secs.unwrap(), rep.resumed)
    };
    let (plain, resumed0) = transfer("");
    let (fast, resumed) = transfer("fast_open = true\nearly_data = true\n");
    assert_eq!(resumed0, [false, false, false]);
    assert_eq!(resumed, [false, true, true]);
    // Two reconnections × two RTTs of 40 ms (+ 20 Mbit/s serialization differences).
    let saved = plain - fast;
    assert!(
        (0.9 * 0.16..1.1 * 0.16).contains(&saved),
        "saved {saved:.4} s ({plain:.4} vs {fast:.4})"
    );
}

/// Runs with series on give TCP and SCTP endpoints their columns.
#[test]
fn series_have_tcp_and_sctp_columns() {
    for transport in ["tcp", "sctp"] {
        let c = ok(&format!(
            "{}[output]\nseries = true\n",
            doc(&format!(
                "transport = \"{transport}\"\nworkload = {{ kind = \"bulk\", bytes = \"100KB\" }}\n"
            ))
        ));
        let s = run(&c).series.expect("series");
        for col in [
            "flow0.ep0.cwnd",
            "flow0.ep1.bytes_in_flight",
            "flow0.ep1.srtt_s",
            "flow0.delivered_bytes",
        ] {
            assert!(
                s.columns.iter().any(|c| c == col),
                "{transport}: {col} in {:?}",
                s.columns
            );
        }
    }
}

mod descriptors {
    use crate::config::sctp::SctpConfig;
    use crate::config::tcp::TcpConfig;
    use crate::time::SimDuration;
    use crate::units::format_duration;
    use crate::validate::schema::{Bound, DefaultValue, Kind, Num, Table, SCTP, TCP};
    use serde::{de::DeserializeOwned, Serialize};

    /// A config's `validate`.
    type Validate<T> = fn(&T) -> Result<(), (&'static str, String, String)>;

    /// The descriptors of `keys` agree with the config `T`: the same keys, the same
    /// defaults (each default written over the serialised defaults gives them back), and
    /// the same range rules (the value just outside each bound is rejected by `validate`
    /// with the descriptor's `allowed` text).
    fn agree<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
        keys: &Table,
        defaults: T,
        validate: Validate<T>,
    ) {
        let toml::Value::Table(serialised) = toml::Value::try_from(&defaults).unwrap() else {
            panic!("a table");
        };
        for k in serialised.keys() {
            assert!(keys.has(k), "{}: config key {k} has no descriptor", keys.id);
        }
        let with = |name: &str, v: toml::Value| -> T {
            let mut t = serialised.clone();
            t.insert(name.into(), v);
            toml::Value::Table(t)
                .try_into::<T>()
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        for f in keys.fields {
            assert!(
                serialised.contains_key(f.name) || !matches!(f.default, DefaultValue::Value(_)),
                "{}: descriptor {} has a default but no config key",
                keys.id,
                f.name
            );
            if let DefaultValue::Value(d) = f.default {
                let v: toml::Table = toml::from_str(&format!("v = {d}")).unwrap();
                assert_eq!(
                    with(f.name, v["v"].clone()),
                    defaults,
                    "default of {}",
                    f.name
                );
            }
            let outside = |b: &Bound, below: bool| -> toml::Value {
                match (f.kind, f.bound(b)) {
                    (Kind::Number, Num::F(x)) => toml::Value::Float(match (below, b.inclusive) {
                        (true, true) => x - 0.5,
                        (false, true) => x + 0.5,
                        _ => x,
                    }),
                    (_, Num::U(u)) => {
                        let u = match (below, b.inclusive) {
                            (true, true) => u - 1,
                            (false, true) => u + 1,
                            _ => u,
                        };
                        match f.kind {
                            Kind::Time => toml::Value::String(format_duration(SimDuration(u))),
                            _ => toml::Value::Integer(u as i64),
                        }
                    }
                    _ => unreachable!(),
                }
            };
            for (b, below) in [(f.min, true), (f.max, false)] {
                let Some(b) = b else { continue };
                if below && b.inclusive && f.bound(&b) == Num::U(0) {
                    continue;
                }
                let c = with(f.name, outside(&b, below));
                let e = validate(&c).expect_err(f.name);
                assert_eq!(e.2, f.allowed, "allowed text of {}.{}", keys.id, f.name);
            }
        }
    }

    #[test]
    fn tcp_descriptors_agree_with_tcp_config() {
        agree(&TCP, TcpConfig::default(), TcpConfig::validate);
    }

    #[test]
    fn sctp_descriptors_agree_with_sctp_config() {
        agree(&SCTP, SctpConfig::default(), SctpConfig::validate);
    }
}

/// A connection report's metrics read back as their protocol's variant (the untagged
/// JSON of each protocol's flat object tells them apart).
#[test]
fn report_metrics_read_back_as_their_protocol() {
    use crate::metrics::workload::ReportMetrics;
    for transport in ["tcp", "sctp"] {
        let c = ok(&doc(&format!(
            "transport = \"{transport}\"\nworkload = {{ kind = \"bulk\", bytes = \"20KB\" }}\n"
        )));
        let r = run(&c);
        let m: ReportMetrics = match endpoints(&r).0.clone() {
            EndpointMetrics::Tcp(m) => ReportMetrics::Tcp(m),
            EndpointMetrics::Sctp(m) => ReportMetrics::Sctp(m),
            other => panic!("{}", other.kind()),
        };
        let json = serde_json::to_string(&m).unwrap();
        let back: ReportMetrics = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m, "{transport}");
        assert!(back.quic().is_none());
        assert_eq!(back.transport().stream_bytes_read, 20_000);
    }
}

/// `start` delays both endpoints of a transport flow: on a lossless path the same
/// transfer ends exactly `start` later, with the same times relative to its start; a
/// sequence times its connections itself, so `start` is an error there.
#[test]
fn transport_flow_start_delays_the_flow() {
    for transport in ["quic", "tcp", "sctp"] {
        let with = |start: &str| {
            let c = ok(&doc(&format!(
                "transport = \"{transport}\"\n{start}workload = {{ kind = \"bulk\", bytes = \"100KB\" }}\n"
            )));
            let r = run(&c);
            assert_eq!(r.status, RunStatus::Completed);
            let done = endpoints(&r)
                .0
                .transport()
                .unwrap()
                .completion_secs
                .unwrap();
            (c, r.end_time, done)
        };
        let (c0, end0, done0) = with("");
        let (c2, end2, done2) = with("start = \"2500ms\"\n");
        assert_eq!(c0.flows[0].transport_flow().unwrap().start, SimTime::ZERO);
        assert_eq!(
            c2.flows[0].transport_flow().unwrap().start,
            SimTime::ZERO + SimDuration::from_millis(2500)
        );
        assert_eq!(
            end2.saturating_since(end0),
            SimDuration::from_millis(2500),
            "{transport}"
        );
        assert_eq!(
            done2, done0,
            "{transport}: times are relative to the connection start"
        );
        // Written back and read again.
        let text = to_toml(&c2).unwrap();
        assert!(text.contains("start = \"2500ms\""), "{text}");
        assert_eq!(parse_str(&text).unwrap().base, c2);
        // Without `start`, nothing is written (outputs of older scenarios unchanged).
        assert!(!to_toml(&c0)
            .unwrap()
            .lines()
            .any(|l| l.starts_with("start =")));
    }
    assert_err(
        &doc("transport = \"quic\"\nstart = \"1s\"\nworkload = { kind = \"sequence\", connections = [{}] }\n"),
        "flows[0].start",
        "no `start` with a `sequence` workload",
    );
    assert_err(
        &doc("transport = \"tcp\"\nstart = -1\nworkload = { kind = \"bulk\" }\n"),
        "flows[0].start",
        "a time",
    );
}
