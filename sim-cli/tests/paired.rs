//! `quicsim run` and `quicsim sweep` on a paired comparison (`transports = [...]`,
//! `docs/paired.md`), through the real binary. They need `transport = "tcp"` (branch
//! `wire`); the pairing code itself is tested now in sim-core (`study::paired`), in
//! `tests/tests/paired.rs` and by the CLI's `paired_table` unit test.

mod common;

use common::TmpDir;
use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

const SCENARIO: &str = r#"
name = "paired-cli"
seed = 11
runs = 3
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "20ms", loss = 0.01 }
[[flows]]
transports = ["tcp", "quic"]
workload = { kind = "bulk", bytes = "200KB" }
"#;

/// The scenario file `s.toml` holding `text` in a fresh directory, and the directory's guard
/// (the directory is removed when the guard drops).
fn file(name: &str, text: &str) -> (TmpDir, PathBuf) {
    let d = TmpDir::new("paired", name);
    let p = d.join("s.toml");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "quicsim failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn run_prints_the_paired_table_and_json_carries_it() {
    let (_d, f) = file("run", SCENARIO);
    let text = ok(Command::new(BIN).arg("run").arg(&f).output().unwrap());
    assert!(text.contains("paired comparison — baseline tcp"), "{text}");
    assert!(text.contains("flow0.ep0.completion_secs"), "{text}");
    assert!(text.contains("quic - tcp: mean "), "{text}");
    let json = ok(Command::new(BIN)
        .arg("run")
        .arg(&f)
        .arg("--json")
        .output()
        .unwrap());
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["paired"]["baseline"], "tcp");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 6);
    let m = &doc["paired"]["points"][0]["metrics"][0];
    assert_eq!(m["runs"].as_array().unwrap().len(), 3);
    assert_eq!(m["differences"][0]["summary"]["n"], 3);
}

#[test]
fn sweep_summaries_gain_paired_differences() {
    let text = format!("{SCENARIO}[sweep]\n\"topology.link.delay\" = [\"10ms\", \"30ms\"]\n");
    let (_d, f) = file("sweep", &text);
    let out = f.parent().unwrap().join("out");
    ok(Command::new(BIN)
        .arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        csv.starts_with("point,topology.link.delay,transports,metric,"),
        "{csv}"
    );
    let diffs: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("diff_vs_tcp.flow0.ep0.completion_secs"))
        .collect();
    // One row per grid point, at the QUIC variant's point (1 and 3).
    assert_eq!(diffs.len(), 2, "{csv}");
    assert!(diffs[0].starts_with("1,10ms,quic,") && diffs[1].starts_with("3,30ms,quic,"));
    let sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(sum["paired"]["points"].as_array().unwrap().len(), 2);
    assert!(sum["paired"]["points"][0]["metrics"][0]
        .get("runs")
        .is_none());
}
