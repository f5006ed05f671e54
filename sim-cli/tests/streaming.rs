//! Issue 15 item 2 through the real binary: `quicsim run` prints each run as it finishes
//! (in job order) and holds no finished run, so `--runs` at its documented maximum
//! (4 294 967 295) starts printing at once with flat memory, and the streamed text and JSON
//! are the bytes of the whole-study document.

mod common;

use common::TmpDir;
use sim_core::study::{Overrides, Study};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

/// Two hosts, a 2 ms CBR flow of two datagrams: a handful of events per run.
const TINY: &str = "name = \"tiny\"\nseed = 1\n[topology]\nkind = \"two_hosts\"\n\
link = { rate = \"10Mbps\", delay = \"1ms\" }\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\n\
size = \"100B\"\nduration = \"2ms\"\n";

/// The scenario file `s.toml` holding `text` in a fresh directory, and the directory's guard
/// (the directory is removed when the guard drops).
fn scenario(name: &str, text: &str) -> (TmpDir, PathBuf) {
    let d = TmpDir::new("stream", name);
    let p = d.join("s.toml");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

/// Peak resident set of a live process in KiB (`VmHWM` of /proc/PID/status).
#[cfg(target_os = "linux")]
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/PID/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Spawns `quicsim run FILE --runs 4294967295 [extra]`, reads `lines` lines of its output
/// and returns them with its peak RSS in KiB (0 where /proc is absent), then kills it.
/// Before streaming, the binary printed nothing until the end and aborted allocating the
/// job list (`memory allocation of 68719476720 bytes failed`).
fn first_lines_of_max_runs(file: &Path, extra: &[&str], lines: usize) -> (Vec<String>, u64) {
    let mut child = Command::new(BIN)
        .args(["run", file.to_str().unwrap(), "--runs", "4294967295"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut got = Vec::new();
    for _ in 0..lines {
        let mut l = String::new();
        if out.read_line(&mut l).unwrap() == 0 {
            break;
        }
        got.push(l);
    }
    #[cfg(target_os = "linux")]
    let rss = peak_rss_kib(child.id());
    #[cfg(not(target_os = "linux"))]
    let rss = 0;
    child.kill().unwrap();
    child.wait().unwrap();
    (got, rss)
}

/// Far above one window of results (a few MB) and far below a job list of 2^32 runs.
/// Runs the CLI command and asserts it succeeded (stderr shown if not).
fn cli_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The scenario's study and every job's result, run in job order in this process: what
/// the CLI printed before it streamed.
fn whole_study(text: &str) -> (Study, Vec<sim_core::metrics::RunResult>) {
    let sc = sim_core::scenario::parse_str(text).unwrap();
    let study = Study::new(sc, &Overrides::default()).unwrap();
    let results = study
        .jobs()
        .iter()
        .map(|j| sim_core::run(study.config(j), j.seed).unwrap())
        .collect();
    (study, results)
}

const RSS_BOUND_KIB: u64 = 200 * 1024;

#[test]
fn max_runs_streams_text_in_job_order_with_flat_memory() {
    let (_d, f) = scenario("text", TINY);
    // Each run prints 3 lines (run, flow, link): 600 lines are the first 200 runs, more
    // than one window of a 2-core machine (64 jobs per thread).
    let (lines, rss) = first_lines_of_max_runs(&f, &[], 1 + 600);
    assert_eq!(
        lines.len(),
        601,
        "output streamed before the end: {lines:?}"
    );
    assert_eq!(lines[0], "scenario tiny — 1 point(s) x 4294967295 run(s)\n");
    let seeds: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("  seed "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(seeds, (1..=200).collect::<Vec<u64>>(), "job order");
    assert!(rss < RSS_BOUND_KIB, "peak RSS {rss} KiB");
}

#[test]
fn max_runs_streams_the_json_runs_array_with_flat_memory() {
    let (_d, f) = scenario("json", TINY);
    let (lines, rss) = first_lines_of_max_runs(&f, &["--json"], 5000);
    assert_eq!(lines.len(), 5000, "output streamed before the end");
    assert_eq!(lines[0], "{\n");
    let runs_at = lines
        .iter()
        .position(|l| l == "  \"runs\": [\n")
        .expect("the runs array opened");
    let seeds = lines[runs_at..]
        .iter()
        .filter(|l| l.starts_with("      \"seed\": "))
        .count();
    assert!(seeds > 1, "runs streamed: {seeds}");
    assert!(rss < RSS_BOUND_KIB, "peak RSS {rss} KiB");
}

/// The streamed document (several windows, two sweep points) is byte for byte the
/// pretty-printed [`Study::results`] of every run, as `quicsim run --json` printed it
/// before streaming.
#[test]
fn streamed_json_is_the_whole_study_document() {
    let text = format!("runs = 150\n{TINY}[sweep]\n\"topology.link.delay\" = [\"1ms\", \"3ms\"]\n");
    let (_d, f) = scenario("doc", &text);
    let out = cli_ok(Command::new(BIN).args(["run", f.to_str().unwrap(), "--json"]));
    let (study, results) = whole_study(&text);
    assert_eq!(study.jobs().len(), 300);
    let want = serde_json::to_string_pretty(&study.results(&results)).unwrap() + "\n";
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
}

/// Two hosts, a 2 KB bulk transfer compared over TCP and QUIC (`docs/paired.md`): a paired
/// comparison of tiny runs.
const TINY_PAIRED: &str = "name = \"tinypair\"\nseed = 1\n[topology]\nkind = \"two_hosts\"\n\
link = { rate = \"10Mbps\", delay = \"1ms\" }\n[[flows]]\ntransports = [\"tcp\", \"quic\"]\n\
workload = { kind = \"bulk\", bytes = \"2KB\" }\n";

/// `--out DIR` streams too: before, the binary kept every result for the directory's files
/// and printed nothing until the end. The summary.csv rows are written as the runs finish.
#[test]
fn max_runs_with_out_dir_streams_with_flat_memory() {
    let (_d, f) = scenario("outdir", TINY);
    let dir = f.parent().unwrap().join("out");
    let (lines, rss) = first_lines_of_max_runs(&f, &["--out", dir.to_str().unwrap()], 1 + 600);
    assert_eq!(lines.len(), 601, "output streamed before the end");
    assert!(rss < RSS_BOUND_KIB, "peak RSS {rss} KiB");
    // The files are written to hidden temporary files, renamed when the run ends (never
    // here): what is in them so far is what streamed (issue 28 item 8).
    let temp = |name: &str| {
        assert!(!dir.join(name).exists(), "{name} in place before the end");
        let tmp = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let f = p.file_name().unwrap().to_str().unwrap();
                f.starts_with(&format!(".{name}.")) && f.contains(".tmp")
            })
            .unwrap_or_else(|| panic!("no temporary file of {name}"));
        std::fs::read_to_string(tmp).unwrap()
    };
    let csv = temp("summary.csv");
    let mut rows = csv.lines();
    assert!(
        rows.next().unwrap().starts_with("point,seed,status,"),
        "{csv}"
    );
    assert!(
        rows.next().is_some_and(|r| r.starts_with("0,1,completed,")),
        "rows written as the runs finish: {csv}"
    );
    let doc = temp("result.json");
    assert!(doc.contains("\"runs\": [\n    {"), "result.json streamed");
}

/// A paired comparison streams its runs and keeps only each run's compared values for the
/// differences printed at the end (here never reached): memory stays far below one result
/// per run.
#[test]
fn max_runs_of_a_paired_comparison_streams_with_bounded_memory() {
    let (_d, f) = scenario("paired", TINY_PAIRED);
    // Each run prints about 10 lines (run, flow, 3 per endpoint, links): read the first
    // ~200 runs of the baseline, more than one window of a 2-core machine.
    let (lines, rss) = first_lines_of_max_runs(&f, &[], 2000);
    assert_eq!(lines.len(), 2000, "output streamed before the end");
    assert_eq!(
        lines[0],
        "scenario tinypair — 2 point(s) x 4294967295 run(s)\n"
    );
    let seeds: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("  seed "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(seeds.len() > 150, "{} runs", seeds.len());
    assert_eq!(
        seeds,
        (1..=seeds.len() as u64).collect::<Vec<u64>>(),
        "job order"
    );
    assert!(rss < RSS_BOUND_KIB, "peak RSS {rss} KiB");
}

/// The streamed `--out` files and a streamed paired document (several windows, two grid
/// points x two variants) are byte for byte what the whole study gave before streaming:
/// result.json is the pretty-printed [`Study::results`] (paired differences included, no
/// trailing newline), summary.csv a row per run and flow, stdout the same document.
#[test]
fn streamed_out_files_and_paired_document_are_the_whole_study_documents() {
    let text =
        format!("runs = 140\n{TINY_PAIRED}[sweep]\n\"topology.link.delay\" = [\"1ms\", \"3ms\"]\n");
    let (_d, f) = scenario("pairdoc", &text);
    let dir = f.parent().unwrap().join("out");
    let out = cli_ok(
        Command::new(BIN)
            .args(["run", f.to_str().unwrap(), "--json", "--out"])
            .arg(&dir),
    );
    let (study, results) = whole_study(&text);
    assert_eq!(study.jobs().len(), 560);
    let doc = study.results(&results);
    assert!(doc.paired.is_some());
    let want = serde_json::to_string_pretty(&doc).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want.clone() + "\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("result.json")).unwrap(),
        want
    );
    let mut csv = String::from(
        "point,seed,status,end_time_s,events,digest,flow,packets_sent,packets_delivered,drops,loss_ratio\n",
    );
    for (j, r) in study.jobs().iter().zip(&results) {
        for fl in &r.flows {
            csv.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{}\n",
                j.point,
                r.seed,
                r.status.as_str(),
                r.end_time_secs,
                r.events,
                r.digest,
                fl.flow,
                fl.packets_sent,
                fl.packets_delivered,
                fl.drops.total(),
                fl.loss_ratio
            ));
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
        csv
    );
}
