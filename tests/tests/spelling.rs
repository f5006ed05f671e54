//! The transport × workload spelling of flows (`docs/scenario-format.md`, "Transport ×
//! workload") means exactly what the flow-kind spelling means: the same `Config` (so the
//! same run and the same `resolved_config`), and errors that name the key where it was
//! written.

use sim_core::config::Config;
use sim_core::validate::ConfigError;

const HEAD: &str = r#"
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "10ms" }
"#;

fn parse(flows: &str) -> Result<Config, ConfigError> {
    sim_core::scenario::parse_str(&format!("{HEAD}{flows}")).map(|s| s.base)
}

fn same(old: &str, new: &str) {
    let a = parse(old).expect("old spelling parses");
    let b = parse(new).expect("new spelling parses");
    assert_eq!(a, b);
    assert_eq!(
        sim_core::scenario::to_toml(&a).unwrap(),
        sim_core::scenario::to_toml(&b).unwrap()
    );
}

fn error(flows: &str) -> ConfigError {
    parse(flows).expect_err("must be rejected")
}

#[test]
fn bulk_spellings_agree() {
    let old = r#"
[[flows]]
kind = "quic_bulk"
bytes = "200KB"
streams = 3
request_size = 50
cc = "cubic"
profile = "chromium"
"#;
    same(
        old,
        r#"
[[flows]]
transport = "quic"
quic = { cc = "cubic", profile = "chromium" }
workload = { kind = "bulk", bytes = "200KB", streams = 3, request_size = 50 }
"#,
    );
    // The QUIC keys may also be flat.
    same(
        old,
        r#"
[[flows]]
transport = "quic"
cc = "cubic"
profile = "chromium"
workload = { kind = "bulk", bytes = "200KB", streams = 3, request_size = 50 }
"#,
    );
}

#[test]
fn sequence_spellings_agree() {
    let old = r#"
[[flows]]
kind = "quic_connections"
zero_rtt = true
bytes = "20KB"
[[flows.connections]]
bytes = "5KB"
[[flows.connections]]
gap = "1s"
close = "idle"
"#;
    same(
        old,
        r#"
[[flows]]
transport = "quic"
quic = { zero_rtt = true }
workload = { kind = "sequence", bytes = "20KB", connections = [
    { bytes = "5KB" },
    { gap = "1s", close = "idle" },
] }
"#,
    );
    same(
        old,
        r#"
[[flows]]
transport = "quic"
zero_rtt = true
[flows.workload]
kind = "sequence"
bytes = "20KB"
[[flows.workload.connections]]
bytes = "5KB"
[[flows.workload.connections]]
gap = "1s"
close = "idle"
"#,
    );
}

#[test]
fn errors_name_the_key_where_it_was_written() {
    let e = error(
        "[[flows]]\nkind = \"quic_bulk\"\ntransport = \"quic\"\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].kind");
    let e = error("[[flows]]\ntransport = \"udp\"\nworkload = { kind = \"bulk\" }\n");
    assert_eq!(e.field, "flows[0].transport");
    let e = error("[[flows]]\ntransport = \"quic\"\n");
    assert_eq!(e.field, "flows[0].workload");
    let e = error("[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"podcast\" }\n");
    assert_eq!(e.field, "flows[0].workload.kind");
    let e =
        error("[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\", cc = \"cubic\" }\n");
    assert_eq!(e.field, "flows[0].workload.cc");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { bytes = 5 }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.bytes");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nbytes = 5\nworkload = { kind = \"bulk\", bytes = 6 }\n",
    );
    assert_eq!(e.field, "flows[0].workload.bytes");
    // A value error is reported where the value was written.
    let e = error("[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\", streams = 0 }\n");
    assert_eq!(e.field, "flows[0].workload.streams");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { max_udp_payload = 100 }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.max_udp_payload");
}

#[test]
fn the_documented_example_parses() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/scenario-format.md"),
    )
    .expect("read docs/scenario-format.md");
    let section = &doc[doc.find("### Transport × workload").expect("section")..];
    let start = section.find("```toml\n").expect("example") + "```toml\n".len();
    let example = &section[start..start + section[start..].find("```").expect("end")];
    let cfg = parse(example).expect("the example parses");
    assert!(cfg.flows[0].sequence().is_some());
}

/// `resolved_config` (the serde form of `Config`, in the run output) and `to_toml` write a
/// transport flow in the transport × workload spelling, whichever spelling the scenario
/// used; both read back to the same `Config`.
#[test]
fn resolved_config_uses_the_transport_workload_spelling() {
    for (old, workload) in [
        (
            "[[flows]]\nkind = \"quic_bulk\"\nbytes = \"200KB\"\nstreams = 3\ncc = \"cubic\"\n",
            "bulk",
        ),
        (
            "[[flows]]\nkind = \"quic_connections\"\nbytes = \"200KB\"\ncc = \"cubic\"\n\
             [[flows.connections]]\n[[flows.connections]]\ngap = \"1s\"\nbytes = 1000\n",
            "sequence",
        ),
    ] {
        let cfg = parse(old).expect("valid");
        let result = sim_core::run(&cfg, 1).expect("runs");
        let json = serde_json::to_value(&result).unwrap();
        let app = &json["resolved_config"]["flows"][0]["app"];
        assert_eq!(app["transport"], "quic", "{app}");
        assert!(app.get("kind").is_none(), "{app}");
        assert_eq!(app["quic"]["cc"], "cubic");
        assert!(app["quic"].get("bytes").is_none(), "{app}");
        assert_eq!(app["workload"]["kind"], workload);
        assert_eq!(app["workload"]["bytes"], 200_000);
        let back: Config = serde_json::from_value(json["resolved_config"].clone()).unwrap();
        assert_eq!(back, cfg);
        let text = sim_core::scenario::to_toml(&cfg).unwrap();
        assert!(text.contains("transport = \"quic\""), "{text}");
        assert!(!text.contains("quic_bulk") && !text.contains("quic_connections"));
        let again = sim_core::scenario::parse_str(&text).expect("parses").base;
        assert_eq!(again, cfg, "{text}");
    }
}

/// Per-side keys (`quic = { client = { .. }, server = { .. } }`): each side's connection
/// advertises its own window. A 16 KB window on the client (the receiver of the 200 KB
/// response) blocks the server's sending; the same window on the server only (which
/// receives 100-byte requests) changes nothing in the response direction.
#[test]
fn per_side_transport_keys_configure_each_side() {
    use quicsim_tests::support::quic_metrics;
    let flow = |quic: &str| {
        format!(
            "[[flows]]\ntransport = \"quic\"\nquic = {{ {quic} }}\n\
             workload = {{ kind = \"bulk\", bytes = \"200KB\" }}\n"
        )
    };
    let run = |quic: &str| {
        let cfg = parse(&flow(quic)).expect("valid");
        let r = sim_core::run(&cfg, 1).expect("runs");
        (
            cfg,
            quic_metrics(&r, 0, "client"),
            quic_metrics(&r, 0, "server"),
        )
    };
    let (both, ..) = run("");
    let (server_only, c, s) = run("server = { stream_window = \"16KB\" }");
    let sides = server_only.flows[0].quic().unwrap();
    assert_eq!(sides.server.stream_window, 16_000);
    assert_eq!(sides.client.stream_window, 1_250_000);
    assert_ne!(server_only, both);
    // The client's advertised window (1.25 MB) governs the response: never blocked.
    assert_eq!(s.quic.stream_data_blocked_sent, 0);
    assert_eq!(c.quic.max_stream_data_sent, 0);
    assert_eq!(s.transport.flow_control_blocked_secs, 0.0);
    let (client_only, c, s) = run("client = { stream_window = \"16KB\" }");
    assert_eq!(
        client_only.flows[0].quic().unwrap().client.stream_window,
        16_000
    );
    // The client's 16 KB window governs the 200 KB response.
    assert!(s.quic.stream_data_blocked_sent > 0);
    assert!(c.quic.max_stream_data_sent > 0);
    assert!(s.transport.flow_control_blocked_secs > 0.0);
    // Written for both sides, the same key reaches the same flow as the client-only one
    // in the response direction; a shared key with a per-side override: the side wins.
    let (mixed, ..) = run("stream_window = \"16KB\", server = { stream_window = \"1250000B\" }");
    assert_eq!(mixed, client_only);
}

/// A bad per-side value names the side's key; per-side keys are transport keys and only
/// live in the transport's table.
#[test]
fn per_side_errors_name_the_side() {
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { server = { stream_window = 0 } }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.server.stream_window");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { client = { max_udp_payload = 100 } }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.client.max_udp_payload");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { client = { bytes = 5 } }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.client.bytes");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { client = { nonsense = 5 } }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.client.nonsense");
    let e = error(
        "[[flows]]\ntransport = \"quic\"\nquic = { server = 3 }\nworkload = { kind = \"bulk\" }\n",
    );
    assert_eq!(e.field, "flows[0].quic.server");
    let e = error("[[flows]]\nkind = \"quic_bulk\"\nserver = { stream_window = 1 }\n");
    assert_eq!(e.field, "flows[0].server");
    // Config::validate names a side's key when the sides differ.
    let mut cfg = parse(
        "[[flows]]\ntransport = \"quic\"\nquic = { server = { stream_window = \"16KB\" } }\nworkload = { kind = \"bulk\" }\n",
    )
    .unwrap();
    cfg.flows[0].quic_mut().unwrap().server.cid_len = 0;
    assert_eq!(
        cfg.validate().unwrap_err().field,
        "flows[0].quic.server.cid_len"
    );
}

/// Per-side configs survive the round trip: resolved_config (JSON) and `to_toml` read
/// back to the same `Config`, a side's profile included.
#[test]
fn per_side_configs_round_trip() {
    let cfg = parse(
        "[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"sequence\", connections = [{}, { gap = \"1s\" }] }\n\
         [flows.quic]\ncc = \"cubic\"\n[flows.quic.client]\nprofile = \"chromium\"\n\
         [flows.quic.server]\nstream_window = \"64KB\"\nzero_rtt = false\n",
    )
    .expect("valid");
    let sides = cfg.flows[0].quic().unwrap();
    assert_eq!(
        sides.client.initial_rtt,
        sim_core::SimDuration::from_millis(100)
    );
    assert_eq!(
        sides.server.initial_rtt,
        sim_core::SimDuration::from_millis(333)
    );
    assert_eq!(sides.server.cc.algorithm, sim_core::cc::CcAlgorithm::Cubic);
    assert!(!sides.server.zero_rtt && sides.client.zero_rtt);
    let json = serde_json::to_value(&cfg).unwrap();
    let quic = &json["flows"][0]["app"]["quic"];
    assert_eq!(quic["server"]["stream_window"], 64_000);
    assert_eq!(quic["client"]["profile"], "chromium");
    let back: Config = serde_json::from_value(json).unwrap();
    assert_eq!(back, cfg);
    let text = sim_core::scenario::to_toml(&cfg).unwrap();
    let again = sim_core::scenario::parse_str(&text).expect("parses").base;
    assert_eq!(again, cfg, "{text}");
}
