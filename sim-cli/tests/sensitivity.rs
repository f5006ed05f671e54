//! `quicsim reproduce` with `[[paper.unstated]]`, through the real binary: every claim is
//! judged under each alternative of the unstated parameter (each its own resumable sweep;
//! the alternative that is the scenario as written reuses its sweep), the index says
//! whether the verdict is robust or depends on it, the paper's page has the table; the
//! figure has human axis labels and the paper's numbers in its legend.

mod common;

use common::TmpDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

fn tmp(name: &str) -> TmpDir {
    TmpDir::new("sensitivity", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn quicsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "quicsim failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every file under a directory (recursively), by relative path.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sensitivity")
}

#[test]
fn a_verdict_that_depends_on_an_unstated_parameter_says_so() {
    let out = tmp("depends");
    let run = || {
        ok(quicsim(&[
            "reproduce",
            "990",
            "--scenarios",
            s(&fixtures()),
            "--out",
            s(&out),
        ]))
    };
    run();
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    let md = std::fs::read_to_string(out.join("paper990.md")).unwrap();
    // The nominal verdict (the scenario as written, 1 Gbps) and the sensitivity column.
    assert!(
        index.contains("| 990 | [tiny: a longer delay slows a short download](paper990.md) | Fig. 1 | 1 of 1 effects reproduced, 0 in direction only | depends on topology.link.rate: 1 of 1 claims |"),
        "{index}"
    );
    assert!(index.contains("| paper | experiment | source | verdict | sensitivity |"));
    // The per-combination table: 1 Gbps is the scenario as written (*).
    assert!(
        md.contains("- **topology.link.rate**: The paper names no link rate. Values: `topology.link.rate` = 1Gbps, 200kbps."),
        "{md}"
    );
    assert!(
        md.contains("| claim | 1Gbps * | 200kbps | verdict |"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| `topology.link.delay` = 50ms (paper +900.0 %) |"))
        .unwrap_or_else(|| panic!("no claim row: {md}"));
    assert!(
        row.contains(", reproduced |") && row.contains(", not reproduced |"),
        "{row}"
    );
    assert!(row.ends_with("| depends on topology.link.rate |"), "{row}");
    assert!(
        md.contains("Under the unstated parameters: depends on topology.link.rate: 1 of 1 claims.")
    );
    // Sweeps: the scenario's own, and one for the alternative that differs from it (the
    // alternative equal to the scenario as written reuses its sweep).
    let sweeps = out.join("sweeps/990");
    let mut dirs: Vec<String> = std::fs::read_dir(&sweeps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["tiny", "tiny@1-200kbps"]);
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sweeps.join("tiny@1-200kbps/sweep.json")).unwrap())
            .unwrap();
    assert_eq!(info["complete"], true);
    // Human axis labels and the paper's numbers ("paper" in the legend).
    let svg = std::fs::read_to_string(out.join("figures/990-tiny.svg")).unwrap();
    for label in ["one-way delay (s)", "download time (ms)", "paper", "ours"] {
        assert!(
            svg.contains(&format!("\n{label}\n</text>")),
            "{label}: {svg}"
        );
    }
    assert!(!svg.contains("flow0.ep0.completion_secs") && !svg.contains("topology.link.delay"));
    // A second run resumes everything and writes the same bytes.
    let before = files(&out);
    run();
    assert_eq!(files(&out), before);
}

/// A change or direction the paper gives without numbers is drawn too: a relative change
/// applied to our baseline, a direction as an arrow and a word beside our mean; the
/// scenario's own axis labels win.
#[test]
fn figures_draw_changes_and_directions_and_take_label_overrides() {
    let d = tmp("marks");
    let sc = d.join("scenarios/paper990");
    std::fs::create_dir_all(&sc).unwrap();
    let text = std::fs::read_to_string(fixtures().join("paper990/tiny.toml")).unwrap();
    let head = &text[..text.find("[paper]").unwrap()];
    let paper = r#"[paper]
id = "990"
experiment = "tiny: marks"
source = "Fig. 2"
metric = "flow0.ep0.completion_secs"
unit = "ms"
scale = 1000
baseline = { "topology.link.delay" = "5ms" }
plot = { x = "topology.link.delay", x_label = "delay per direction (s)", y_label = "latency (ms)" }
[[paper.reported]]
point = { "topology.link.delay" = "50ms" }
change = 8.0
[[paper.reported]]
point = { "topology.link.delay" = "50ms" }
statistic = "mean"
direction = "higher"
"#;
    // Two entries on one point: a change and a direction (the verdicts do not matter here).
    std::fs::write(sc.join("marks.toml"), format!("{head}{paper}")).unwrap();
    let out = d.join("out");
    ok(quicsim(&[
        "reproduce",
        "990",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    let svg = std::fs::read_to_string(out.join("figures/990-marks.svg")).unwrap();
    for label in [
        "delay per direction (s)",
        "latency (ms)",
        "paper (change applied to our baseline)",
        "↑ paper: higher",
        "paper: higher than its baseline (↑)",
    ] {
        assert!(
            svg.contains(&format!("\n{label}\n</text>")),
            "{label}: {svg}"
        );
    }
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(
        index.contains("| Fig. 2 | 2 of 2 effects reproduced, 0 in direction only | – |"),
        "{index}"
    );
}

/// A combination is a sweep like any other: `quicsim sweep --unstated NAME` runs it (here
/// in two shards, merged), and `quicsim reproduce` finds that directory complete and
/// uses it as is: the same bytes as its own run of the combination.
#[test]
fn a_combination_runs_in_shards_and_reproduce_resumes_it() {
    let d = tmp("shards");
    let f = fixtures().join("paper990/tiny.toml");
    let o = ok(quicsim(&["validate", s(&f)]));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("unstated parameters: 2 combination(s): 0-1gbps, 1-200kbps"),
        "{stdout}"
    );
    for k in 0..2 {
        ok(quicsim(&[
            "sweep",
            s(&f),
            "--unstated",
            "1-200kbps",
            "--shard",
            &format!("{k}/2"),
            "--out",
            s(&d.join(format!("shard{k}"))),
        ]));
    }
    let combo = d.join("out/sweeps/990/tiny@1-200kbps");
    ok(quicsim(&[
        "merge",
        s(&d.join("shard0")),
        s(&d.join("shard1")),
        "--out",
        s(&combo),
    ]));
    let merged = files(&combo);
    let reproduce = |out: &Path| {
        ok(quicsim(&[
            "reproduce",
            "990",
            "--scenarios",
            s(&fixtures()),
            "--out",
            s(out),
        ]))
    };
    let o = reproduce(&d.join("out"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("is already complete"), "{stderr}");
    assert_eq!(files(&combo), merged);
    reproduce(&d.join("fresh"));
    assert_eq!(files(&d.join("fresh/sweeps/990/tiny@1-200kbps")), merged);
    // A name that is not a combination of the scenario.
    let o = quicsim(&[
        "sweep",
        s(&f),
        "--unstated",
        "nope",
        "--out",
        s(&d.join("x")),
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("expected one of 0-1gbps, 1-200kbps"), "{e}");
}
