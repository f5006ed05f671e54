//! Issue 15 items 7 and 8 through the real binary: file names derived from a scenario's
//! name are never paths, I/O failures exit 1 and bad input 2 (README "Exit codes"), and
//! the status has one spelling in every output.

mod common;

use common::TmpDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

fn tmp(name: &str) -> TmpDir {
    TmpDir::new("cli", name)
}

fn quicsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const CBR: &str =
    "[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\n";

/// Item 7: a scenario name with `/` or `..` used to make `--series --out` fail (the series
/// file name was a path); every derived file lands in the output directory.
#[test]
fn scenario_names_with_slashes_or_dots_stay_inside_the_output_directory() {
    for name in ["../a/b", "..", "x/../../y", "/abs", "a\\\\b"] {
        let dir = tmp("names");
        let f = write(&dir, &format!("name = \"{name}\"\n{CBR}"));
        let out = dir.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let o = quicsim(&[
            "run",
            s(&f),
            "--series",
            "--out",
            s(&out),
            "--qlog",
            s(&out),
        ]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut files: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        assert!(
            files.iter().any(|f| f.starts_with("series-")),
            "{name}: {files:?}"
        );
        assert!(
            files.iter().all(|f| !f.starts_with('.')),
            "{name}: {files:?}"
        );
        // Nothing outside `out` but the scenario file.
        let mut around: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        around.sort();
        assert_eq!(around, ["out", "s.toml"], "{name}");
    }
}

/// Item 8: a missing input file and an unwritable output are I/O failures (exit 1); a bad
/// scenario is bad input (exit 2).
#[test]
fn io_failures_exit_1_and_bad_input_exits_2() {
    let dir = tmp("codes");
    let missing = dir.join("missing.toml");
    for cmd in ["run", "validate"] {
        let o = quicsim(&[cmd, s(&missing)]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let bad = write(&dir, "[topology]\nkind = \"three_hosts\"\n");
    assert_eq!(quicsim(&["validate", s(&bad)]).status.code(), Some(2));
    // A plot of a readable CSV to a path in a directory that does not exist.
    let f = write(&dir, CBR);
    let out = dir.join("out");
    assert!(quicsim(&["run", s(&f), "--series", "--out", s(&out)])
        .status
        .success());
    let csv = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("series-")
        })
        .unwrap();
    let svg = dir.join("no/such/dir/plot.svg");
    let o = quicsim(&["plot", s(&csv), "--y", "time_s", "--out", s(&svg)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = quicsim(&[
        "plot",
        s(&missing),
        "--y",
        "time_s",
        "--out",
        s(&dir.join("p.svg")),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // `--seed -1` is a bad value of --seed, not an unknown argument.
    let o = quicsim(&["run", s(&f), "--seed", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--seed") && err.contains("-1"), "{err}");
    assert!(!err.contains("unexpected argument"), "{err}");
}

/// Item 8: the status is spelled as in the JSON (`time_limit`) in the text output and in
/// summary.csv (it was `timelimit` and `TimeLimit`).
#[test]
fn the_status_has_one_spelling_in_every_output() {
    let dir = tmp("status");
    let f = write(
        &dir,
        &format!("[sim]\ntime_limit = \"1ms\"\n{CBR}start = \"1s\"\n"),
    );
    let o = quicsim(&["run", s(&f), "--json"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"status\": \"time_limit\""));
    let o = quicsim(&["run", s(&f)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(" time_limit "), "{text}");
    let out = dir.join("out");
    assert!(quicsim(&["run", s(&f), "--out", s(&out)]).status.success());
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.contains(",time_limit,"), "{csv}");
    assert!(!csv.contains("TimeLimit"), "{csv}");
}

/// Issue 30 item 2: a link's trace file is read relative to the scenario file; a missing
/// file, a bad line and a directory are bad input (exit 2) naming the key, the file and
/// the line; the resolved config carries the trace.
#[test]
fn trace_files_are_read_next_to_the_scenario() {
    let dir = tmp("traces");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/ok.trace"), "1\n2\n2\n10\n").unwrap();
    std::fs::write(dir.join("t/bad.trace"), "1\n2\n1\n").unwrap();
    let scenario = |trace: &str| {
        format!("[topology]\nkind = \"two_hosts\"\nreverse = {{ rate = {{ trace = \"{trace}\" }} }}\n[[flows]]\nkind = \"cbr\"\ndirection = \"down\"\nrate = \"1Mbps\"\ncount = 5\n")
    };
    let f = write(&dir, &scenario("t/ok.trace"));
    // From another working directory: the path is the scenario file's, not the cwd's.
    let o = Command::new(BIN)
        .args(["run", s(&f), "--json"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let compact: String = out.split_whitespace().collect();
    assert!(compact.contains("\"opportunities_ms\":[1,2,2,10]"), "{out}");
    assert!(compact.contains("\"digest\":\"fnv1a64:"), "{out}");
    for (trace, want) in [
        ("t/bad.trace", "topology.reverse.rate.trace: \"t/bad.trace\" line 3 is not allowed"),
        ("t/none.trace", "topology.reverse.rate.trace: \"t/none.trace\" is not allowed: expected a readable trace file"),
        ("t", "not a regular file"),
    ] {
        let f = write(&dir, &scenario(trace));
        let o = quicsim(&["run", s(&f)]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(want), "{trace}: {e}");
    }
}
