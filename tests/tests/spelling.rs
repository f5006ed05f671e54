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
    let e = error("[[flows]]\ntransport = \"tcp\"\nworkload = { kind = \"bulk\" }\n");
    assert_eq!(e.field, "flows[0].transport");
    let e = error("[[flows]]\ntransport = \"quic\"\n");
    assert_eq!(e.field, "flows[0].workload");
    let e = error("[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"video\" }\n");
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
