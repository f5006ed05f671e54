//! Issue 28 (an adversarial tester's findings against the command line), through the real
//! binary: no write outside the directory the user named, no panic, no hang, a clear
//! error with exit 2 for bad input and 1 for I/O failures (README "Exit codes"). One test
//! per item; docs/adversarial.md lists them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quicsim-i28-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn quicsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit code and returns stderr.
fn code(o: Output, want: i32) -> String {
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(want), "stderr: {e}");
    e
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

const CBR: &str =
    "[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\n";

fn paper(id: &str) -> String {
    format!(
        "[paper]\nid = {id:?}\nexperiment = \"e\"\nsource = \"T1\"\nmetric = \"flow0.ep1.goodput_bps\"\n"
    )
}

/// Item 1: `[paper] id` was joined to `--out` unchecked: `../../..scratch/x` or an
/// absolute path created and overwrote files anywhere. The id is validated (field
/// `paper.id`) and the scenario refused before anything is written.
#[test]
fn item01_paper_ids_cannot_write_outside_the_output_directory() {
    let d = tmp("paper-id");
    let abs = d.join("abs");
    for id in ["../../..scratch/x", s(&abs), "a/b", ".."] {
        let sc = d.join("scenarios");
        let _ = std::fs::remove_dir_all(&sc);
        std::fs::create_dir_all(&sc).unwrap();
        std::fs::write(sc.join("s.toml"), format!("{CBR}{}", paper(id))).unwrap();
        for cmd in [
            vec!["validate", s(&sc.join("s.toml"))],
            vec![
                "reproduce",
                "all",
                "--scenarios",
                s(&sc),
                "--out",
                s(&d.join("out")),
                "--runs",
                "1",
            ],
        ] {
            let e = code(quicsim(&cmd), 2);
            assert!(e.contains("paper.id"), "{id}: {e}");
        }
        assert_eq!(names(&d), ["scenarios"], "{id}: written outside --out");
    }
    // A pending experiment's paper id names a file too.
    let sc = d.join("scenarios");
    std::fs::write(sc.join("s.toml"), format!("{CBR}{}", paper("000"))).unwrap();
    std::fs::write(
        sc.join("pending-reproductions.tsv"),
        "../../x\tFig. 1\tan experiment\tsomething\n",
    )
    .unwrap();
    let e = code(
        quicsim(&[
            "reproduce",
            "all",
            "--scenarios",
            s(&sc),
            "--out",
            s(&d.join("out")),
            "--runs",
            "1",
        ]),
        2,
    );
    assert!(e.contains("pending-reproductions.tsv:1: paper"), "{e}");
    assert!(!d.join("x.md").exists() && !d.join("paperx.md").exists());
}

/// Item 5: two sweep points of the same resolved configuration (or one key in two
/// spellings, or a swept `paper.id`) made `sweep` fail forever ("N records for M jobs")
/// while `validate` and `run` accepted the file. Refused at validation, naming the key.
#[test]
fn item05_duplicate_sweep_points_are_refused_at_validation() {
    let d = tmp("dup-points");
    let cases = [
        ("\"flows.0.count\" = [5, 5]", "sweep.\"flows.0.count\"[1]"),
        (
            "\"topology.link.loss\" = [0.01, \"1%\"]",
            "sweep.\"topology.link.loss\"[1]",
        ),
        (
            "\"topology.link.delay\" = [\"1s\", \"1000ms\"]",
            "sweep.\"topology.link.delay\"[1]",
        ),
        (
            "\"flows.0.count\" = [5, 6]\n\"flows[0].count\" = [7, 8]",
            "sweep.\"flows[0].count\"",
        ),
        ("\"paper.id\" = [\"a\", \"b\"]", "sweep.\"paper.id\""),
    ];
    for (i, (sweep, field)) in cases.iter().enumerate() {
        let f = d.join(format!("s{i}.toml"));
        std::fs::write(&f, format!("{CBR}[sweep]\n{sweep}\n")).unwrap();
        let out = d.join(format!("out{i}"));
        for cmd in [
            vec!["validate", s(&f)],
            vec!["run", s(&f)],
            vec!["sweep", s(&f), "--out", s(&out)],
        ] {
            let e = code(quicsim(&cmd), 2);
            assert!(e.contains(field), "{sweep}: {cmd:?}: {e}");
        }
        assert!(
            !out.exists(),
            "{sweep}: a refused sweep wrote {}",
            out.display()
        );
    }
}
