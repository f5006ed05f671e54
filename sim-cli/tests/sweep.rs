//! `quicsim sweep` / `quicsim merge` end to end, through the real binary: output bytes do
//! not depend on --jobs, on a kill and resume, or on sharding; damaged inputs are refused
//! with errors that name what is wrong.

mod common;

use common::TmpDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

/// A QUIC sweep: 2 loss rates x 2 delays, runs from the command line. Short runs, but each
/// point's runs differ (random loss), so results carry real spread.
const SCENARIO: &str = r#"
name = "sweep-test"
seed = 3
runs = 4
[topology]
kind = "two_hosts"
link = { rate = "20Mbps", delay = "10ms" }
[[flows]]
transport = "quic"
workload = { kind = "bulk", bytes = "200KB", streams = 2 }
[sweep]
"topology.link.loss" = [0.0, 0.02]
"topology.link.delay" = ["5ms", "20ms"]
"#;

fn tmp(name: &str) -> TmpDir {
    TmpDir::new("sweep", name)
}

fn scenario(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
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

fn err(o: Output) -> String {
    assert!(!o.status.success(), "expected a failure");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under a directory (recursively), by relative path.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn jobs_shards_and_merge_give_the_same_bytes() {
    let d = tmp("same");
    let f = scenario(&d, SCENARIO);
    let one = d.join("one");
    let two = d.join("two");
    ok(quicsim(&["sweep", s(&f), "--out", s(&one), "--jobs", "1"]));
    ok(quicsim(&["sweep", s(&f), "--out", s(&two), "--jobs", "2"]));
    let a = files(&one);
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["runs.jsonl", "summary.csv", "summary.json", "sweep.json"]
    );
    assert_eq!(a, files(&two), "--jobs 1 and --jobs 2 differ");
    // runs.jsonl in job order: point-major, one line per job.
    let runs = String::from_utf8(a[0].1.clone()).unwrap();
    let order: Vec<(u64, u64)> = runs
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["point"].as_u64().unwrap(), v["run"].as_u64().unwrap())
        })
        .collect();
    let want: Vec<(u64, u64)> = (0..4).flat_map(|p| (0..4).map(move |r| (p, r))).collect();
    assert_eq!(order, want);
    // Three shards as separate processes, merged: the same bytes.
    let shards: Vec<PathBuf> = (0..3).map(|k| d.join(format!("shard{k}"))).collect();
    let mut total = 0;
    for (k, dir) in shards.iter().enumerate() {
        ok(quicsim(&[
            "sweep",
            s(&f),
            "--out",
            s(dir),
            "--shard",
            &format!("{k}/3"),
        ]));
        let n = std::fs::read_to_string(dir.join("runs.jsonl"))
            .unwrap()
            .lines()
            .count();
        assert!(n > 0, "shard {k} got no job");
        total += n;
        assert!(!dir.join("summary.csv").exists());
    }
    assert_eq!(total, 16, "the shards partition the jobs");
    let merged = d.join("merged");
    let mut args = vec!["merge", "--out", s(&merged)];
    // In any order.
    args.extend(shards.iter().rev().map(|p| s(p)));
    ok(quicsim(&args));
    assert_eq!(
        files(&merged),
        a,
        "merged shards differ from the unsharded sweep"
    );
    // A second run of a finished sweep does nothing (and says so).
    let before = files(&one);
    let o = ok(quicsim(&["sweep", s(&f), "--out", s(&one)]));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already complete"));
    assert_eq!(files(&one), before);
}

#[test]
fn summary_statistics_follow_the_run_records() {
    let d = tmp("stats");
    let f = scenario(&d, SCENARIO);
    let out = d.join("out");
    ok(quicsim(&["sweep", s(&f), "--out", s(&out)]));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    // Point 2 (loss 0.02, delay 5 ms): the client's completion time over its 4 runs.
    let metric = "flow0.ep0.completion_secs";
    let xs: Vec<f64> = runs
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["point"] == 2)
        .map(|v| {
            v["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m[0] == metric)
                .unwrap()[1]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(xs.len(), 4);
    let p = &summary["points"][2];
    assert_eq!(p["params"][0][1], "0.02");
    let m = p["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == metric)
        .unwrap();
    let st = &m[1];
    let mean = xs.iter().sum::<f64>() / 4.0;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
    // t(0.975, 3) from a table.
    let half = 3.182446305284263 * sd / 2.0;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(close(st["mean"].as_f64().unwrap(), mean));
    assert!(close(st["std_dev"].as_f64().unwrap(), sd));
    assert!(sd > 0.0, "random loss must spread the runs");
    assert!(close(st["ci95"][0].as_f64().unwrap(), mean - half));
    assert!(close(st["ci95"][1].as_f64().unwrap(), mean + half));
    assert_eq!(st["n"], 4);
    let mut sorted = xs.clone();
    sorted.sort_by(f64::total_cmp);
    assert!(close(
        st["median"].as_f64().unwrap(),
        (sorted[1] + sorted[2]) / 2.0
    ));
    // The CSV row carries the same numbers.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let row = csv
        .lines()
        .find(|l| l.starts_with("2,") && l.contains(metric))
        .unwrap();
    let cells: Vec<&str> = row.split(',').collect();
    assert_eq!(&cells[..5], ["2", "0.02", "5ms", metric, "4"]);
    assert_eq!(
        cells[5].parse::<f64>().unwrap(),
        st["mean"].as_f64().unwrap()
    );
}

#[test]
fn a_killed_sweep_resumes_to_the_same_bytes() {
    let d = tmp("kill");
    // Enough work that the kill lands part-way: 40 runs of a 2 MB lossy transfer.
    let text = SCENARIO
        .replace("runs = 4", "runs = 10")
        .replace("200KB", "2MB");
    let f = scenario(&d, &text);
    let full = d.join("full");
    ok(quicsim(&["sweep", s(&f), "--out", s(&full), "--jobs", "2"]));
    let part = d.join("part");
    let mut child = Command::new(BIN)
        .args(["sweep", s(&f), "--out", s(&part), "--jobs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = part.join("runs.jsonl");
    let t0 = Instant::now();
    loop {
        let n = std::fs::read_to_string(&runs)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 3 || t0.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let done = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert!(
        !status.success() && done < 40,
        "the kill must land before the end (got {done} runs)"
    );
    assert!(!part.join("summary.csv").exists());
    // Without --resume: refused, naming the flag.
    assert!(err(quicsim(&["sweep", s(&f), "--out", s(&part)])).contains("--resume"));
    ok(quicsim(&["sweep", s(&f), "--out", s(&part), "--resume"]));
    assert_eq!(files(&part), files(&full));
}

#[test]
fn a_cut_last_line_is_detected_and_its_job_runs_again() {
    let d = tmp("cut");
    let f = scenario(&d, SCENARIO);
    let full = d.join("full");
    ok(quicsim(&["sweep", s(&f), "--out", s(&full)]));
    // Make `cut` look like a sweep killed while writing its 6th record.
    let cut = d.join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    let info = std::fs::read_to_string(full.join("sweep.json"))
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    std::fs::write(cut.join("sweep.json"), info).unwrap();
    let runs = std::fs::read_to_string(full.join("runs.jsonl")).unwrap();
    let lines: Vec<&str> = runs.lines().collect();
    let mut partial: String = lines[..5].iter().map(|l| format!("{l}\n")).collect();
    partial.push_str(&lines[5][..lines[5].len() / 2]);
    std::fs::write(cut.join("runs.jsonl"), partial).unwrap();
    let o = ok(quicsim(&["sweep", s(&f), "--out", s(&cut), "--resume"]));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(msg.contains("cut short"), "{msg}");
    assert!(msg.contains("5 of 16 runs already done"), "{msg}");
    assert_eq!(files(&cut), files(&full));
    // A damaged line that is not the last is an error naming the line.
    let bad = d.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy(cut.join("sweep.json"), bad.join("sweep.json")).unwrap();
    let info = std::fs::read_to_string(bad.join("sweep.json"))
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    std::fs::write(bad.join("sweep.json"), info).unwrap();
    let mut damaged: Vec<String> = lines[..4].iter().map(|l| l.to_string()).collect();
    damaged[1] = "{not json".into();
    std::fs::write(bad.join("runs.jsonl"), damaged.join("\n") + "\n").unwrap();
    let e = err(quicsim(&["sweep", s(&f), "--out", s(&bad), "--resume"]));
    assert!(e.contains("line 2"), "{e}");
}

#[test]
fn merge_refuses_missing_duplicated_and_foreign_shards() {
    let d = tmp("refuse");
    let f = scenario(&d, SCENARIO);
    let g = d.join("other.toml");
    std::fs::write(&g, SCENARIO.replace("seed = 3", "seed = 4")).unwrap();
    let sh = |file: &Path, k: usize, name: &str| {
        let dir = d.join(name);
        ok(quicsim(&[
            "sweep",
            s(file),
            "--out",
            s(&dir),
            "--shard",
            &format!("{k}/2"),
        ]));
        dir
    };
    let a0 = sh(&f, 0, "a0");
    let a1 = sh(&f, 1, "a1");
    let b1 = sh(&g, 1, "b1");
    let out = d.join("out");
    let e = err(quicsim(&["merge", "--out", s(&out), s(&a0)]));
    assert!(e.contains("missing shard(s) 1/2"), "{e}");
    let e = err(quicsim(&[
        "merge",
        "--out",
        s(&out),
        s(&a0),
        s(&a0),
        s(&a1),
    ]));
    assert!(e.contains("shard 0/2 given twice"), "{e}");
    let e = err(quicsim(&["merge", "--out", s(&out), s(&a0), s(&b1)]));
    assert!(e.contains("shard of another study"), "{e}");
    assert!(e.contains(s(&b1)), "{e}");
    // Bad --shard values name the flag and the rule.
    for bad in ["2/2", "x/2", "0/0", "1"] {
        let e = err(quicsim(&["sweep", s(&f), "--out", s(&out), "--shard", bad]));
        assert!(
            e.contains("--shard") && e.contains("0 <= K < N"),
            "{bad}: {e}"
        );
    }
    // A sweep directory of another study is not overwritten.
    let e = err(quicsim(&[
        "sweep",
        s(&g),
        "--out",
        s(&a0),
        "--shard",
        "0/2",
    ]));
    assert!(e.contains("another study"), "{e}");
    ok(quicsim(&["merge", "--out", s(&out), s(&a1), s(&a0)]));
}

#[test]
fn plot_sweep_draws_means_with_confidence_intervals() {
    let d = tmp("plot");
    let f = scenario(&d, SCENARIO);
    let out = d.join("out");
    ok(quicsim(&["sweep", s(&f), "--out", s(&out)]));
    let svg = d.join("p.svg");
    ok(quicsim(&[
        "plot-sweep",
        s(&out),
        "--x",
        "topology.link.loss",
        "--y",
        "flow0.ep0.completion_secs*1000",
        "--series",
        "topology.link.delay",
        "--title",
        "completion vs loss",
        "--ylabel",
        "completion (ms)",
        "--out",
        s(&svg),
    ]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"));
    for want in [
        "completion vs loss",
        "completion (ms)",
        "topology.link.delay = 5ms",
        "topology.link.delay = 20ms",
    ] {
        assert!(text.contains(want), "{want} missing");
    }
    // A key that varies but is neither x nor series must be fixed.
    let e = err(quicsim(&[
        "plot-sweep",
        s(&out),
        "--x",
        "topology.link.loss",
        "--y",
        "events",
        "--out",
        s(&svg),
    ]));
    assert!(e.contains("--where topology.link.delay=VALUE"), "{e}");
    ok(quicsim(&[
        "plot-sweep",
        s(&out),
        "--x",
        "topology.link.loss",
        "--y",
        "events",
        "--where",
        "topology.link.delay=5ms",
        "--out",
        s(&svg),
    ]));
    // Unknown names are listed.
    let e = err(quicsim(&[
        "plot-sweep",
        s(&out),
        "--x",
        "nope",
        "--y",
        "events",
        "--out",
        s(&svg),
    ]));
    assert!(
        e.contains("not a sweep key") && e.contains("topology.link.loss"),
        "{e}"
    );
    let e = err(quicsim(&[
        "plot-sweep",
        s(&out),
        "--x",
        "topology.link.loss",
        "--y",
        "nope",
        "--out",
        s(&svg),
    ]));
    assert!(
        e.contains("no metric") && e.contains("end_time_secs"),
        "{e}"
    );
}

const TOY_PAPER: &str = r#"
[paper]
id = "999"
experiment = "toy: loss slows the transfer"
source = "Fig. 1"
metric = "flow0.ep0.completion_secs"
unit = "ms"
scale = 1000
baseline = { "topology.link.loss" = 0.0 }
plot = { x = "topology.link.delay", series = "topology.link.loss" }
notes = "Toy notes."
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "5ms" }
value = 100
[[paper.reported]]
point = { "topology.link.loss" = 0.02, "topology.link.delay" = "5ms" }
value = 180
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "20ms" }
value = 200
[[paper.reported]]
point = { "topology.link.loss" = 0.02, "topology.link.delay" = "20ms" }
value = 201
"#;

#[test]
fn reproduce_writes_our_numbers_beside_the_papers_and_is_idempotent() {
    let d = tmp("reproduce");
    let sc = d.join("scenarios").join("paper999");
    std::fs::create_dir_all(&sc).unwrap();
    std::fs::write(sc.join("toy.toml"), format!("{SCENARIO}{TOY_PAPER}")).unwrap();
    // A scenario without [paper] is not a reproduction.
    std::fs::write(sc.join("plain.toml"), SCENARIO).unwrap();
    let out = d.join("out");
    let run = || {
        ok(quicsim(&[
            "reproduce",
            "all",
            "--scenarios",
            s(&d.join("scenarios")),
            "--out",
            s(&out),
        ]))
    };
    run();
    let md = std::fs::read_to_string(out.join("paper999.md")).unwrap();
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(
        md.contains("## toy: loss slows the transfer (Fig. 1)"),
        "{md}"
    );
    assert!(md.contains("toy.toml") && !md.contains("plain.toml"));
    assert!(md.contains("Toy notes."));
    assert!(md.contains("![toy: loss slows the transfer](figures/999-toy.svg)"));
    assert!(out.join("figures/999-toy.svg").exists());
    // Two effects judged: loss at 5 ms (paper +80 %) and at 20 ms (paper: no effect).
    assert!(md.contains("| +80.0 % |"), "{md}");
    assert!(index.contains("| 999 | [toy: loss slows the transfer](paper999.md) | Fig. 1 |"));
    assert!(index.contains("of 2 effects reproduced"), "{index}");
    // Our value at the baseline point is the sweep summary's mean x 1000.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("sweeps/999/toy/summary.json")).unwrap())
            .unwrap();
    let m = summary["points"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "flow0.ep0.completion_secs")
        .unwrap()[1]["mean"]
        .as_f64()
        .unwrap();
    assert!(md.contains(&format!("| {:.0} |", m * 1000.0)), "{md}");
    // Running again changes nothing.
    let before = (files(&out), md.clone());
    run();
    assert_eq!(
        (
            files(&out),
            std::fs::read_to_string(out.join("paper999.md")).unwrap()
        ),
        before
    );
    // Selecting another paper finds nothing: a clear error.
    let e = err(quicsim(&[
        "reproduce",
        "004",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    assert!(
        e.contains("no scenario with a [paper] table for paper 004"),
        "{e}"
    );
}

/// Every reproduction scenario of the repository has its section in the committed report
/// (`docs/reproductions/`, written by `quicsim reproduce all --out docs/reproductions`).
#[test]
fn every_paper_scenario_has_a_section_in_the_committed_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stack = vec![root.join("scenarios")];
    let mut checked = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let sc = sim_core_scenario(&text, &p);
            let Some(id) = sc else { continue };
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let report = root.join(format!("docs/reproductions/paper{id}.md"));
            let md = std::fs::read_to_string(&report)
                .unwrap_or_else(|_| panic!("{rel}: no {}", report.display()));
            assert!(
                md.contains(&format!("Scenario: `{rel}`")),
                "{rel}: no section in {}: run `quicsim reproduce all --out docs/reproductions`",
                report.display()
            );
            checked += 1;
        }
    }
    eprintln!("{checked} reproduction scenarios have their section");
    // The figures that are diagrams are named in the index too (the pending file's
    // `# diagrams:` line), so it accounts for every figure of every paper.
    let pending =
        std::fs::read_to_string(root.join("scenarios/pending-reproductions.tsv")).unwrap();
    let diagrams = pending
        .lines()
        .find_map(|l| l.strip_prefix("# diagrams: "))
        .expect("a # diagrams: line");
    let index = std::fs::read_to_string(root.join("docs/reproductions/index.md")).unwrap();
    assert!(
        index.contains(&format!(
            "report no measurement (nothing to reproduce): {}.",
            diagrams.trim()
        )),
        "index.md does not list the diagrams: run `quicsim reproduce all --out docs/reproductions`"
    );
}

/// The paper id of a scenario file, if it has a `[paper]` table (read with the CLI's own
/// validator, so a broken file fails here too).
fn sim_core_scenario(text: &str, path: &Path) -> Option<String> {
    let o = quicsim(&["validate", s(path)]);
    assert!(
        o.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: toml::Value = toml::from_str(text).unwrap();
    v.get("paper")
        .and_then(|p| p.get("id"))
        .and_then(|i| i.as_str())
        .map(str::to_string)
}

/// Values judged within a tolerance (a run metric, a ratio of two metrics, a series read
/// of run 0: the time a column first reaches a value, the column at a time) and the "or
/// equal" directions: each gets its verdict in the report, and the index counts the
/// values apart from the effects.
#[test]
fn reproduce_judges_values_series_ratios_and_or_equal_directions() {
    let d = tmp("reproduce-values");
    let sc = d.join("scenarios").join("paper996");
    std::fs::create_dir_all(&sc).unwrap();
    let paper = r#"
[output]
sample_interval = "5ms"
[paper]
id = "996"
experiment = "toy: values"
source = "Fig. 1"
metric = "flow0.ep0.completion_secs"
unit = "s"
runs = 2
baseline = { "topology.link.loss" = 0.0 }
# Loss makes the transfer slower: "not higher" fails, "not lower" holds.
[[paper.reported]]
point = { "topology.link.loss" = 0.02, "topology.link.delay" = "5ms" }
direction = "not_higher"
[[paper.reported]]
point = { "topology.link.loss" = 0.02, "topology.link.delay" = "20ms" }
direction = "not_lower"
# Any positive time is within 1000 x of 1 s; none is within 0 % of 1e9 s.
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "5ms" }
value = 1
tolerance = 1000
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "20ms" }
value = 1e9
tolerance = 0
# A metric over itself is exactly 1.
[[paper.reported]]
point = { "topology.link.loss" = 0.02, "topology.link.delay" = "20ms" }
over = "flow0.ep0.completion_secs"
value = 1
tolerance = 0
# Stream 0 carries half of the 200 KB: read in full by the end of run 0, and its first
# byte read at some time within 1000 x of 1 s.
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "5ms" }
series = ["flow0.ep0.stream0_read"]
at = 100
value = 100000
tolerance = 0
[[paper.reported]]
point = { "topology.link.loss" = 0.0, "topology.link.delay" = "5ms" }
series = ["flow0.ep0.stream0_read", "flow0.ep0.stream4_read"]
reaches = 1
value = 1
tolerance = 1000
"#;
    std::fs::write(sc.join("toy.toml"), format!("{SCENARIO}{paper}")).unwrap();
    let out = d.join("out");
    ok(quicsim(&[
        "reproduce",
        "996",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    let md = std::fs::read_to_string(out.join("paper996.md")).unwrap();
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(
        md.contains("| not higher | not reproduced |")
            && md.contains("| not lower | reproduced (or equal) |"),
        "{md}"
    );
    let values: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("Values"))
        .filter(|l| l.starts_with("| `"))
        .collect();
    assert_eq!(values.len(), 5, "{md}");
    for (line, verdict) in values.iter().zip([
        "reproduced (within tolerance)",
        "not reproduced",
        "reproduced (within tolerance)",
        "reproduced (within tolerance)",
        "reproduced (within tolerance)",
    ]) {
        assert!(line.ends_with(&format!("| {verdict} |")), "{line}");
    }
    assert!(values[2].contains("/ mean of `flow0.ep0.completion_secs`"));
    assert!(values[3].contains("`flow0.ep0.stream0_read` at 100 s | 100000 |"));
    assert!(values[4].contains("first reaches 1.00 |"), "{}", values[4]);
    assert!(
        index.contains(
            "1 of 2 effects reproduced, 0 in direction only; 4 of 5 values within tolerance"
        ),
        "{index}"
    );
}

/// A reproduction with a relative `change`, a `[[paper.trace]]`, `[paper] runs` and a
/// pending experiment: the report judges the change, draws the trace in SVG and PNG,
/// runs the paper's count of runs, and lists the pending experiment with what it needs.
#[test]
fn reproduce_judges_changes_draws_traces_and_lists_pending_experiments() {
    let d = tmp("reproduce-trace");
    let sc = d.join("scenarios").join("paper998");
    std::fs::create_dir_all(&sc).unwrap();
    let paper = r#"
[output]
sample_interval = "10ms"
[paper]
id = "998"
experiment = "toy: loss slows the transfer"
source = "Fig. 2"
metric = "flow0.ep0.completion_secs"
unit = "s"
runs = 2
baseline = { "topology.link.loss" = 0.0 }
plot = { x = "topology.link.delay", series = "topology.link.loss" }
[[paper.reported]]
point = { "topology.link.loss" = 2e-2, "topology.link.delay" = "5ms" }
change = 0.5
[[paper.trace]]
source = "Fig. 3"
title = "toy window"
columns = ["flow0.ep1.cwnd"]
scale = 0.001
unit = "KB"
"#;
    std::fs::write(sc.join("toy.toml"), format!("{SCENARIO}{paper}")).unwrap();
    std::fs::write(
        d.join("scenarios").join("pending-reproductions.tsv"),
        "# comment\n998\tFig. 4\ttoy: TCP against QUIC\tTCP in scenarios\n997\tFig. 1\tother paper\tnothing\n",
    )
    .unwrap();
    let out = d.join("out");
    ok(quicsim(&[
        "reproduce",
        "998",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    let md = std::fs::read_to_string(out.join("paper998.md")).unwrap();
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    // The paper's count of runs, not the scenario's 4.
    assert!(md.contains("mean over 2 run(s) per point"), "{md}");
    let sweep: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("sweeps/998/toy/sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep["runs_per_point"], 2);
    // The change is judged against our baseline point (the 2e-2 written in the point
    // matched the sweep's 0.02).
    assert!(md.contains("| +50.0 % |"), "{md}");
    assert!(index.contains("of 1 effects reproduced"), "{index}");
    // The trace and the summary figure, both formats; PNG files start with the PNG magic.
    for f in [
        "998-toy.svg",
        "998-toy.png",
        "998-toy-trace0.svg",
        "998-toy-trace0.png",
    ] {
        let bytes = std::fs::read(out.join("figures").join(f)).unwrap();
        assert!(bytes.len() > 1000, "{f}: {} bytes", bytes.len());
        if f.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{f}");
        }
    }
    assert!(
        md.contains("![toy window](figures/998-toy-trace0.svg)"),
        "{md}"
    );
    // One line per sweep point in the trace, labelled by its sweep values.
    let svg = std::fs::read_to_string(out.join("figures/998-toy-trace0.svg")).unwrap();
    for label in ["0.0, 5ms", "0.0, 20ms", "0.02, 5ms", "0.02, 20ms"] {
        assert!(
            svg.contains(&format!("\n{label}\n</text>")),
            "{label}: {svg}"
        );
    }
    // The pending experiment of this paper, not the other paper's.
    assert!(
        md.contains(
            "## toy: TCP against QUIC (Fig. 4)\n\nNot yet reproduced: needs TCP in scenarios."
        ),
        "{md}"
    );
    assert!(index.contains("| 998 | [toy: TCP against QUIC](paper998.md) | Fig. 4 | not yet reproduced: needs TCP in scenarios |"));
    assert!(!index.contains("other paper") && !out.join("paper997.md").exists());
    // A bad pending file is an error naming its line.
    std::fs::write(
        d.join("scenarios").join("pending-reproductions.tsv"),
        "998\tonly two\n",
    )
    .unwrap();
    let e = err(quicsim(&[
        "reproduce",
        "998",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    assert!(e.contains("pending-reproductions.tsv:1: expected 4"), "{e}");
}

/// A paired reproduction (`transports` as a `[paper]` key) with a direction claim and a
/// claim about the standard deviation of another metric: the report computes the std-dev
/// effect from the runs' values exactly as by hand (sample std dev, n - 1), and judges a
/// direction by its sign.
#[test]
fn reproduce_judges_directions_and_std_devs_of_paired_points() {
    let d = tmp("reproduce-paired");
    let sc = d.join("scenarios").join("paper996");
    std::fs::create_dir_all(&sc).unwrap();
    let text = r#"
name = "paired-toy"
seed = 5
runs = 4
[topology]
kind = "two_hosts"
link = { rate = "20Mbps", delay = "5ms", loss = 0.02 }
[[flows]]
transports = ["tcp", "quic"]
workload = { kind = "bulk", bytes = "200KB" }
[paper]
id = "996"
experiment = "toy: QUIC vs TCP"
source = "Fig. 5"
metric = "flow0.ep0.completion_secs"
unit = "s"
baseline = { transports = "tcp" }
[[paper.reported]]
point = { transports = "quic" }
direction = "lower"
[[paper.reported]]
point = { transports = "quic" }
metric = "flow0.ep1.packets_sent"
statistic = "std_dev"
direction = "higher"
"#;
    std::fs::write(sc.join("toy.toml"), text).unwrap();
    let out = d.join("out");
    ok(quicsim(&[
        "reproduce",
        "996",
        "--scenarios",
        s(&d.join("scenarios")),
        "--out",
        s(&out),
    ]));
    let md = std::fs::read_to_string(out.join("paper996.md")).unwrap();
    // The runs' values per point (0 = tcp, 1 = quic), from the results file.
    let runs = std::fs::read_to_string(out.join("sweeps/996/toy/runs.jsonl")).unwrap();
    let values = |metric: &str, point: u64| -> Vec<f64> {
        runs.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["point"] == point)
            .map(|v| {
                v["metrics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m[0] == metric)
                    .unwrap()[1]
                    .as_f64()
                    .unwrap()
            })
            .collect()
    };
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let sd = |x: &[f64]| {
        let m = mean(x);
        (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
    };
    let verdict = |rel: f64, sign: f64| {
        if rel.signum() == sign && rel.abs() >= 0.02 {
            "reproduced (direction)"
        } else {
            "not reproduced"
        }
    };
    let m = "flow0.ep0.completion_secs";
    let (t, q) = (values(m, 0), values(m, 1));
    assert_eq!((t.len(), q.len()), (4, 4));
    let rel = (mean(&q) - mean(&t)) / mean(&t);
    let row = format!(
        "| `transports` = quic | {:+.1} % | lower | {} |",
        100.0 * rel,
        verdict(rel, -1.0)
    );
    assert!(md.contains(&row), "{row}\n{md}");
    let m = "flow0.ep1.packets_sent";
    let (t, q) = (values(m, 0), values(m, 1));
    assert!(sd(&t) > 0.0, "the toy's runs must differ");
    let rel = (sd(&q) - sd(&t)) / sd(&t);
    let row = format!(
        "| `transports` = quic (std dev of `flow0.ep1.packets_sent`) | {:+.1} % | higher | {} |",
        100.0 * rel,
        verdict(rel, 1.0)
    );
    assert!(md.contains(&row), "{row}\n{md}");
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains("of 2 effects reproduced"), "{index}");
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// `quicsim reproduce` runs the jobs of all its sweeps in one pool (longest first), but
/// each sweep directory stays its own: one complete beforehand is reused as is, one cut
/// short resumes, a missing one runs, and a killed reproduce resumes; every time the
/// sweeps and the report are the bytes of an uninterrupted run.
#[test]
fn reproduce_in_one_pool_resumes_each_sweep_to_the_same_bytes() {
    let d = tmp("pool");
    let sc = d.join("scenarios");
    std::fs::create_dir_all(sc.join("paper999")).unwrap();
    std::fs::create_dir_all(sc.join("paper990")).unwrap();
    std::fs::write(
        sc.join("paper999/toy.toml"),
        format!("{SCENARIO}{TOY_PAPER}"),
    )
    .unwrap();
    // A longer one, so that a kill lands part-way: 40 runs of a 2 MB lossy transfer.
    let long = SCENARIO
        .replace("runs = 4", "runs = 10")
        .replace("200KB", "2MB");
    std::fs::write(sc.join("paper999/long.toml"), format!("{long}{TOY_PAPER}")).unwrap();
    // A scenario with an unstated parameter: a second sweep for its other combination.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sensitivity/paper990/tiny.toml"),
        sc.join("paper990/tiny.toml"),
    )
    .unwrap();
    let reproduce = |out: &Path, jobs: &str| {
        quicsim(&[
            "reproduce",
            "all",
            "--scenarios",
            s(&sc),
            "--out",
            s(out),
            "--jobs",
            jobs,
        ])
    };
    let full = d.join("full");
    ok(reproduce(&full, "2"));
    let want = files(&full);
    let sweeps: Vec<String> = want
        .iter()
        .filter(|(p, _)| p.ends_with("sweep.json"))
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(sweeps.len(), 4, "{sweeps:?}");

    // One worker takes the jobs of all sweeps longest estimated cost first (the job-times
    // log lists them in the order they ran), and the log changes no output byte.
    let timed = d.join("timed");
    let log = d.join("times.tsv");
    let o = Command::new(BIN)
        .args([
            "reproduce",
            "all",
            "--scenarios",
            s(&sc),
            "--out",
            s(&timed),
            "--jobs",
            "1",
        ])
        .env("QUICSIM_JOB_TIMES", &log)
        .output()
        .unwrap();
    ok(o);
    assert_eq!(files(&timed), want);
    let log = std::fs::read_to_string(&log).unwrap();
    let rows: Vec<Vec<&str>> = log.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 16 + 40 + 2 * 4, "{log}");
    let costs: Vec<u64> = rows.iter().map(|r| r[4].parse().unwrap()).collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{log}");
    // Every job of `long` (2 MB transfers) before any of `toy` (200 KB).
    let first_toy = rows.iter().position(|r| r[0].ends_with("999/toy")).unwrap();
    assert!(rows[..first_toy].iter().all(|r| r[0].ends_with("999/long")));
    assert!(rows.iter().all(|r| r[5].parse::<f64>().unwrap() >= 0.0));

    // Part done: `toy` complete, `long` cut in its 6th record, the combination of `tiny`
    // and the report missing.
    let part = d.join("part");
    copy_tree(&full, &part);
    let long_dir = part.join("sweeps/999/long");
    let info = std::fs::read_to_string(long_dir.join("sweep.json"))
        .unwrap()
        .replace("\"complete\": true", "\"complete\": false");
    std::fs::write(long_dir.join("sweep.json"), info).unwrap();
    let runs = std::fs::read_to_string(long_dir.join("runs.jsonl")).unwrap();
    let lines: Vec<&str> = runs.lines().collect();
    let mut partial: String = lines[..5].iter().map(|l| format!("{l}\n")).collect();
    partial.push_str(&lines[5][..lines[5].len() / 2]);
    std::fs::write(long_dir.join("runs.jsonl"), partial).unwrap();
    for f in ["summary.csv", "summary.json"] {
        std::fs::remove_file(long_dir.join(f)).unwrap();
    }
    std::fs::remove_dir_all(part.join("sweeps/990/tiny@1-200kbps")).unwrap();
    std::fs::remove_dir_all(part.join("figures")).unwrap();
    for f in ["index.md", "paper999.md", "paper990.md"] {
        std::fs::remove_file(part.join(f)).unwrap();
    }
    let o = ok(reproduce(&part, "2"));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(
        msg.contains("sweep `sweep-test` is already complete"),
        "{msg}"
    );
    assert!(msg.contains("cut short"), "{msg}");
    assert!(msg.contains("5 of 40 runs already done"), "{msg}");
    assert_eq!(files(&part), want);

    // Killed while its pool runs (one worker: the longest jobs, `long`'s, come first).
    let killed = d.join("killed");
    let mut child = Command::new(BIN)
        .args([
            "reproduce",
            "all",
            "--scenarios",
            s(&sc),
            "--out",
            s(&killed),
            "--jobs",
            "1",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = killed.join("sweeps/999/long/runs.jsonl");
    let t0 = Instant::now();
    loop {
        let n = std::fs::read_to_string(&runs)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 3 || t0.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success() && !killed.join("index.md").exists(),
        "the kill must land before the end"
    );
    ok(reproduce(&killed, "1"));
    assert_eq!(files(&killed), want);
}
