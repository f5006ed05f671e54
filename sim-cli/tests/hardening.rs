//! Issue 28 (an adversarial tester's findings against the command line), through the real
//! binary: no write outside the directory the user named, no panic, no hang, a clear
//! error with exit 2 for bad input and 1 for I/O failures (README "Exit codes"). One test
//! per item; docs/adversarial.md lists them.

mod common;

use common::TmpDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_quicsim");

fn tmp(name: &str) -> TmpDir {
    TmpDir::new("i28", name)
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

/// Every file under a directory (recursively), by relative path, with its bytes.
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

/// Item 6: two `sweep --resume` on one `--out` both ran, interleaving records, and left
/// the directory unusable. The directory is locked while a sweep (or merge) writes it: a
/// second process exits 1 at once and changes nothing; the first finishes as if alone.
#[cfg(unix)]
#[test]
fn item06_a_second_writer_of_a_sweep_directory_exits_without_touching_it() {
    use std::os::unix::io::AsRawFd;
    let d = tmp("lock");
    // About 70 ms per run in a debug build: a few seconds at --jobs 1.
    let f = d.join("s.toml");
    std::fs::write(
        &f,
        "runs = 60\n[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\nrate = \"10Mbps\"\ncount = 200000\n",
    )
    .unwrap();
    // A lock held by another process (here: this test) refuses the sweep.
    let out = d.join("held");
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::File::create(out.join(".quicsim.lock")).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    // Shards of a small sweep, to merge into the locked directory.
    let small = d.join("small.toml");
    std::fs::write(&small, format!("runs = 2\n{CBR}")).unwrap();
    let shards: Vec<PathBuf> = (0..2).map(|k| d.join(format!("shard{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let sh = format!("{k}/2");
        code(
            quicsim(&["sweep", s(&small), "--out", s(dir), "--shard", &sh]),
            0,
        );
    }
    for cmd in [
        vec!["sweep", s(&f), "--out", s(&out), "--resume"],
        vec!["merge", s(&shards[0]), s(&shards[1]), "--out", s(&out)],
    ] {
        let e = code(quicsim(&cmd), 1);
        assert!(e.contains("another quicsim process is writing"), "{e}");
    }
    assert_eq!(names(&out), [".quicsim.lock"]);
    drop(lock);
    // Two real processes on one directory.
    let out = d.join("two");
    let mut first = Command::new(BIN)
        .args(["sweep", s(&f), "--out", s(&out), "--jobs", "1", "--resume"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while std::fs::read_to_string(out.join("runs.jsonl"))
        .map(|t| t.is_empty())
        .unwrap_or(true)
    {
        assert!(t0.elapsed().as_secs() < 60, "the first sweep never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = quicsim(&["sweep", s(&f), "--out", s(&out), "--resume"]);
    let e = code(o, 1);
    assert!(e.contains("another quicsim process is writing"), "{e}");
    assert!(first.wait().unwrap().success());
    // The first sweep's directory is what a sweep alone writes.
    let alone = d.join("alone");
    let o = quicsim(&["sweep", s(&f), "--out", s(&alone), "--jobs", "2"]);
    code(o, 0);
    assert_eq!(files(&out), files(&alone));
    assert!(!out.join(".quicsim.lock").exists());
}

/// A 2-point sweep of 2 runs each, cut into two shards in `d/shard0`, `d/shard1`.
fn two_shards(d: &Path) -> (PathBuf, Vec<PathBuf>) {
    std::fs::create_dir_all(d).unwrap();
    let f = d.join("two.toml");
    std::fs::write(
        &f,
        format!("runs = 2\n{CBR}[sweep]\n\"flows.0.count\" = [5, 6]\n"),
    )
    .unwrap();
    let shards: Vec<PathBuf> = (0..2).map(|k| d.join(format!("shard{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let sh = format!("{k}/2");
        code(
            quicsim(&["sweep", s(&f), "--out", s(dir), "--shard", &sh]),
            0,
        );
    }
    (f, shards)
}

/// Replaces `"point":N` in the last record of `dir/runs.jsonl` by `"point":7`.
fn forge_last_point(dir: &Path) {
    let p = dir.join("runs.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let last = lines.last_mut().unwrap();
    let at = last.find("\"point\":").unwrap() + "\"point\":".len();
    let end = at + last[at..].find(',').unwrap();
    last.replace_range(at..end, "7");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
}

/// Item 7: a `runs.jsonl` record with an out-of-range `point` panicked (index out of
/// bounds) in `merge` and in every later `--resume`; `merge` truncated an input shard whose
/// last line was cut before refusing it. Clear errors (exit 2) naming the file and line;
/// merge's inputs are never written.
#[test]
fn item07_damaged_records_are_errors_and_merge_inputs_stay_untouched() {
    let d = tmp("records");
    let (f, shards) = two_shards(&d);
    // An out-of-range point in a shard: merge.
    forge_last_point(&shards[1]);
    let e = code(
        quicsim(&[
            "merge",
            s(&shards[0]),
            s(&shards[1]),
            "--out",
            s(&d.join("all")),
        ]),
        2,
    );
    assert!(e.contains("runs.jsonl: line 2: point 7 run"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // The same in an unfinished sweep: --resume.
    let out = d.join("resume");
    code(quicsim(&["sweep", s(&f), "--out", s(&out)]), 0);
    forge_last_point(&out);
    let info = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    std::fs::write(
        out.join("sweep.json"),
        info.replace("\"complete\": true", "\"complete\": false"),
    )
    .unwrap();
    for _ in 0..2 {
        let e = code(quicsim(&["sweep", s(&f), "--out", s(&out), "--resume"]), 2);
        assert!(e.contains("runs.jsonl: line 4:"), "{e}");
        assert!(e.contains("the record says point 7"), "{e}");
    }
    // A shard whose last line was cut: refused, and left as it was.
    let (_, shards) = two_shards(&d.join("cut"));
    let p = shards[0].join("runs.jsonl");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&p, &bytes).unwrap();
    let info = std::fs::read(shards[0].join("sweep.json")).unwrap();
    let e = code(
        quicsim(&[
            "merge",
            s(&shards[0]),
            s(&shards[1]),
            "--out",
            s(&d.join("all2")),
        ]),
        2,
    );
    assert!(e.contains("cut short"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), bytes, "merge changed its input");
    assert_eq!(std::fs::read(shards[0].join("sweep.json")).unwrap(), info);
    // A shard index its sweep.json cannot hold.
    let (_, shards) = two_shards(&d.join("index"));
    let sj = shards[1].join("sweep.json");
    let text = std::fs::read_to_string(&sj).unwrap();
    std::fs::write(&sj, text.replace("\"index\": 1", "\"index\": 5")).unwrap();
    let e = code(
        quicsim(&[
            "merge",
            s(&shards[0]),
            s(&shards[1]),
            "--out",
            s(&d.join("all3")),
        ]),
        2,
    );
    assert!(e.contains("names shard 5/2"), "{e}");
}

const QUIC: &str = "[topology]\nkind = \"two_hosts\"\nlink = { rate = \"20Mbps\", delay = \"10ms\" }\n[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\", bytes = \"50KB\" }\n";

/// Item 8: a 240-character `name` validated, then `--out` / `--qlog` failed at the end with
/// "File name too long", leaving a half-written result.json. `name` is bounded at
/// validation, and result files are written to a temporary file and renamed when complete.
#[test]
fn item08_long_names_are_refused_and_results_are_written_atomically() {
    let d = tmp("names");
    let f = d.join("long.toml");
    std::fs::write(&f, format!("name = {:?}\n{QUIC}", "n".repeat(240))).unwrap();
    let out = d.join("out");
    for cmd in [
        vec!["validate", s(&f)],
        vec!["run", s(&f), "--out", s(&out), "--qlog", s(&out)],
    ] {
        let e = code(quicsim(&cmd), 2);
        assert!(
            e.contains("name: ") && e.contains("at most 100 characters"),
            "{e}"
        );
    }
    assert!(!out.exists());
    // The longest name: every file name still fits.
    std::fs::write(&f, format!("name = {:?}\n{QUIC}", "n".repeat(100))).unwrap();
    code(
        quicsim(&[
            "run",
            s(&f),
            "--out",
            s(&out),
            "--qlog",
            s(&out),
            "--series",
        ]),
        0,
    );
    let got = names(&out);
    assert!(got.contains(&"result.json".to_string()), "{got:?}");
    assert!(got.iter().any(|n| n.ends_with("-client.sqlog")), "{got:?}");
    assert!(got.iter().all(|n| !n.starts_with('.')), "{got:?}");
    // A run that fails after its files were opened (here: a qlog trace cannot be put in
    // place) leaves neither result.json nor summary.csv nor temporary files.
    std::fs::write(&f, format!("name = \"q\"\n{QUIC}")).unwrap();
    let (out, qlog) = (d.join("out2"), d.join("qlog2"));
    std::fs::create_dir_all(qlog.join("q-s1-p0-f0-c0-client.sqlog")).unwrap();
    let e = code(
        quicsim(&["run", s(&f), "--out", s(&out), "--qlog", s(&qlog)]),
        1,
    );
    assert!(e.contains("q-s1-p0-f0-c0-client.sqlog"), "{e}");
    assert_eq!(names(&out), Vec::<String>::new(), "a failed run left files");
    assert_eq!(names(&qlog), ["q-s1-p0-f0-c0-client.sqlog"]);
}

/// Item 9: `plot X.csv --out X.csv` and `plot-sweep DIR --out DIR/summary.json` overwrote
/// their input. Refused (exit 2, naming --out), the input unchanged.
#[test]
fn item09_plots_never_overwrite_their_input() {
    let d = tmp("plot-input");
    let f = d.join("s.toml");
    std::fs::write(&f, CBR).unwrap();
    let out = d.join("out");
    code(quicsim(&["run", s(&f), "--series", "--out", s(&out)]), 0);
    let csv = out.join(
        names(&out)
            .into_iter()
            .find(|n| n.starts_with("series-"))
            .unwrap(),
    );
    let before = std::fs::read(&csv).unwrap();
    // The same file, also through another spelling of its path.
    let other = out.join("..").join("out").join(csv.file_name().unwrap());
    for o in [&csv, &other] {
        let e = code(
            quicsim(&["plot", s(&csv), "--y", "time_s", "--out", s(o)]),
            2,
        );
        assert!(e.contains("--out"), "{e}");
        assert_eq!(std::fs::read(&csv).unwrap(), before);
    }
    let (_, shards) = two_shards(&d.join("sweep"));
    let all = d.join("all");
    code(
        quicsim(&["merge", s(&shards[0]), s(&shards[1]), "--out", s(&all)]),
        0,
    );
    for file in ["summary.json", "sweep.json", "runs.jsonl", "summary.csv"] {
        let p = all.join(file);
        let before = std::fs::read(&p).unwrap();
        let e = code(
            quicsim(&[
                "plot-sweep",
                s(&all),
                "--x",
                "flows.0.count",
                "--y",
                "end_time_secs",
                "--out",
                s(&p),
            ]),
            2,
        );
        assert!(e.contains("--out"), "{file}: {e}");
        assert_eq!(std::fs::read(&p).unwrap(), before, "{file}");
    }
}

/// Item 12: `sweep --jobs 100000` spawned threads without a cap; `--shard
/// 0/18446744073709551615` panicked (capacity overflow); `sweep --runs 4294967295` (the
/// documented maximum of `runs`) aborted allocating 824 GB. Now: --jobs 1 to 1024, lowered
/// (and said so) above 4 threads per core; at most as many shards as jobs; a sweep of at
/// most 10^6 jobs (`run` streams more), each a clear error (exit 2) before any work.
#[test]
fn item12_thread_shard_and_sweep_sizes_are_bounded() {
    let d = tmp("sizes");
    let f = d.join("s.toml");
    std::fs::write(&f, format!("runs = 2\n{CBR}")).unwrap();
    let out = d.join("out");
    let sweep = |extra: &[&str]| {
        let mut a = vec!["sweep", s(&f), "--out", s(&out)];
        a.extend_from_slice(extra);
        quicsim(&a)
    };
    for (extra, msg) in [
        (&["--jobs", "100000"][..], "--jobs: 100000 is not allowed"),
        (&["--jobs", "0"][..], "--jobs: 0 is not allowed"),
        (
            &["--shard", "0/18446744073709551615"][..],
            "--shard 0/18446744073709551615",
        ),
        (&["--shard", "0/3"][..], "expected at most 2 shards"),
        (&["--runs", "4294967295"][..], "at most 1000000 jobs"),
    ] {
        let e = code(sweep(extra), 2);
        assert!(e.contains(msg), "{extra:?}: {e}");
        assert!(!e.contains("panicked"), "{extra:?}: {e}");
        assert!(!out.exists(), "{extra:?}");
    }
    // More threads than 4 per core: lowered, and said so.
    let e = code(sweep(&["--jobs", "1000"]), 0);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cores * 4 < 1000 {
        assert!(e.contains("--jobs 1000: using"), "{e}");
    }
    // reproduce checks --jobs the same way.
    let e = code(
        quicsim(&["reproduce", "--out", s(&d.join("r")), "--jobs", "0"]),
        2,
    );
    assert!(e.contains("--jobs: 0 is not allowed"), "{e}");
}

/// Runs `args`, killing it if it has not ended within `secs` (then panics: a hang).
fn quicsim_within(args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Item 13: `run /dev/zero` read 2 GB before failing; a FIFO as a scenario (or under
/// `reproduce --scenarios`) blocked forever; a symlink loop under `reproduce --scenarios`
/// ran one scenario 41 times. Scenario files are regular files of at most 16 MB, refused
/// (exit 2) before anything is read otherwise; directories are walked once each.
#[cfg(unix)]
#[test]
fn item13_scenario_files_are_bounded_regular_files_walked_once() {
    let d = tmp("files");
    let e = code(quicsim_within(&["run", "/dev/zero"], 10), 2);
    assert!(e.contains("not a regular file (a device)"), "{e}");
    let big = d.join("big.toml");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(17 * 1024 * 1024)
        .unwrap();
    let e = code(quicsim_within(&["validate", s(&big)], 10), 2);
    assert!(e.contains("larger than 16 MB"), "{e}");
    let e = code(quicsim_within(&["validate", s(&d)], 10), 2);
    assert!(e.contains("not a regular file (a directory)"), "{e}");
    // A FIFO, alone and among the scenarios of reproduce.
    let sc = d.join("scenarios");
    std::fs::create_dir_all(&sc).unwrap();
    let fifo = sc.join("fifo.toml");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let e = code(quicsim_within(&["run", s(&fifo)], 10), 2);
    assert!(e.contains("not a regular file (a FIFO)"), "{e}");
    let out = d.join("out");
    let reproduce = |sc: &Path| {
        quicsim_within(
            &[
                "reproduce",
                "all",
                "--scenarios",
                s(sc),
                "--out",
                s(&out),
                "--runs",
                "1",
            ],
            60,
        )
    };
    let e = code(reproduce(&sc), 2);
    assert!(e.contains("fifo.toml: not a regular file"), "{e}");
    std::fs::remove_file(&fifo).unwrap();
    // A link loop and a second name of the same scenario: it runs once.
    std::fs::write(sc.join("s.toml"), format!("{CBR}{}", paper("000"))).unwrap();
    std::os::unix::fs::symlink(".", sc.join("loop")).unwrap();
    std::os::unix::fs::symlink("s.toml", sc.join("t.toml")).unwrap();
    let e = code(reproduce(&sc), 0);
    assert_eq!(e.matches("paper 000 — e:").count(), 1, "{e}");
}

/// Item 18: exit codes and messages. Invalid UTF-8 in a scenario exited 1 (it is bad
/// input: 2); `reproduce --scenarios missing/` exited 2 (an I/O failure: 1). (`reproduce
/// --jobs 0`, accepted before: item 12's test.)
#[test]
fn item18_exit_codes_and_messages_say_what_happened() {
    let d = tmp("codes");
    let f = d.join("latin1.toml");
    std::fs::write(
        &f,
        b"name = \"caf\xe9\"\n[topology]\nkind = \"two_hosts\"\n",
    )
    .unwrap();
    for cmd in ["validate", "run"] {
        let e = code(quicsim(&[cmd, s(&f)]), 2);
        assert!(
            e.contains("not UTF-8 text (line 1: invalid byte at offset 11)"),
            "{e}"
        );
    }
    let e = code(
        quicsim(&[
            "reproduce",
            "--scenarios",
            s(&d.join("missing")),
            "--out",
            s(&d.join("out")),
        ]),
        1,
    );
    assert!(e.contains("missing"), "{e}");
}

/// Item 14: a full stdout (`> /dev/full`) panicked in `run` (text), `validate`, `run
/// --breakdown` and `serve`. Exit 1 with a message, as `run --json` already did.
#[cfg(target_os = "linux")]
#[test]
fn item14_a_full_stdout_is_an_io_error_not_a_panic() {
    let d = tmp("full");
    let f = d.join("s.toml");
    std::fs::write(&f, QUIC).unwrap();
    let site = d.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<html></html>").unwrap();
    for args in [
        vec!["run", s(&f)],
        vec!["run", s(&f), "--breakdown"],
        vec!["run", s(&f), "--json"],
        vec!["validate", s(&f)],
        vec!["serve", "--port", "0", "--dir", s(&site)],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if t0.elapsed().as_secs() > 30 {
                let _ = child.kill();
                panic!("{args:?}: still running");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        let e = code(o, 1);
        assert!(
            e.contains("stdout: No space left on device"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

/// Item 18, continued: `plot-sweep --where` with a value no point has said "no metric";
/// a scenario of background flows only "completed" at 0 s with 0 events.
#[test]
fn item18_where_filters_and_background_only_scenarios_say_what_happened() {
    let d = tmp("where");
    let (_, shards) = two_shards(&d.join("sweep"));
    let all = d.join("all");
    code(
        quicsim(&["merge", s(&shards[0]), s(&shards[1]), "--out", s(&all)]),
        0,
    );
    let plot = |filter: &str| {
        quicsim(&[
            "plot-sweep",
            s(&all),
            "--x",
            "flows.0.count",
            "--y",
            "end_time_secs",
            "--where",
            filter,
            "--out",
            s(&d.join("p.svg")),
        ])
    };
    let e = code(plot("flows.0.count=7"), 2);
    assert!(
        e.contains("--where flows.0.count=7: no point has flows.0.count = 7; its values are: 5, 6"),
        "{e}"
    );
    let e = code(plot("flows.0.rate=1Mbps"), 2);
    assert!(e.contains("\"flows.0.rate\" is not a sweep key"), "{e}");
    assert!(!d.join("p.svg").exists());
    code(plot("flows.0.count=5"), 0);
    // Background flows only.
    let f = d.join("bg.toml");
    std::fs::write(&f, format!("{CBR}background = true\n")).unwrap();
    for cmd in ["validate", "run"] {
        let e = code(quicsim(&[cmd, s(&f)]), 2);
        assert!(
            e.contains("flows: 1 flow(s), all with background = true"),
            "{e}"
        );
    }
}

const TWO_HOSTS: &str = "[topology]\nkind = \"two_hosts\"\n";

/// Item 15: a TCP or SCTP `reconnects` flow with the default `on = "idle"` always ended
/// `stalled` (neither transport has an idle timeout: the second connection never
/// started); it is refused naming `workload.on` and the values that work there. SCTP
/// with `on = "close"` reported every server connection `failed`: the client's SHUTDOWN
/// carries the cumulative TSN ack of the last data, which the server did not process
/// (RFC 9260 §9.2), so its streams never completed.
#[test]
fn item15_reconnects_without_an_idle_timeout_are_refused_and_sctp_closes_complete() {
    let d = tmp("reconnects");
    for t in ["tcp", "sctp"] {
        for on in ["", ", on = \"idle\""] {
            let f = d.join(format!("{t}-idle.toml"));
            std::fs::write(
                &f,
                format!("{TWO_HOSTS}[[flows]]\ntransport = \"{t}\"\nworkload = {{ kind = \"reconnects\", bytes = \"100KB\"{on} }}\n"),
            )
            .unwrap();
            for cmd in ["validate", "run"] {
                let e = code(quicsim(&[cmd, s(&f)]), 2);
                assert!(e.contains("flows[0].workload.on: idle"), "{t}{on}: {e}");
                assert!(
                    e.contains("\"close\" or \"address_change\"") && e.contains("idle timeout"),
                    "{t}{on}: {e}"
                );
            }
        }
        let f = d.join(format!("{t}-close.toml"));
        std::fs::write(
            &f,
            format!("{TWO_HOSTS}[[flows]]\ntransport = \"{t}\"\nworkload = {{ kind = \"reconnects\", bytes = \"100KB\", reconnections = 2, on = \"close\" }}\n"),
        )
        .unwrap();
        let o = quicsim(&["run", s(&f)]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        code(o, 0);
        assert!(out.contains(" completed "), "{t}: {out}");
        assert!(!out.contains("Failed"), "{t}: {out}");
        // Three connections on each side, each completed.
        assert_eq!(out.matches("] Completed start").count(), 6, "{t}: {out}");
    }
    // QUIC keeps `on = "idle"` (both ends close at the idle timeout).
    let f = d.join("quic-idle.toml");
    std::fs::write(
        &f,
        format!("{TWO_HOSTS}[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"reconnects\", bytes = \"100KB\" }}\n"),
    )
    .unwrap();
    code(quicsim(&["validate", s(&f)]), 0);
}

/// Item 16: `zero_rtt = true` (its default) on a one-connection flow was accepted and
/// ignored; only values away from the default were refused. A resumption or 0-RTT key
/// written on a bulk, web_page or non-reconnecting video flow is refused, named where it
/// was written, whatever its value; the resolved form (`to_toml`, resolved_config) leaves
/// the defaults out there, so it still reads back.
#[test]
fn item16_sequence_only_quic_keys_written_on_one_connection_flows_are_refused() {
    let d = tmp("zero-rtt");
    let f = d.join("s.toml");
    let cases = [
        ("kind = \"quic_bulk\"\nzero_rtt = true\n", "flows[0].zero_rtt: true"),
        (
            "transport = \"quic\"\nquic = { zero_rtt = true }\nworkload = { kind = \"bulk\" }\n",
            "flows[0].quic.zero_rtt: true",
        ),
        (
            "transport = \"quic\"\nzero_rtt = true\nworkload = { kind = \"bulk\" }\n",
            "flows[0].zero_rtt: true",
        ),
        (
            "transport = \"quic\"\nquic = { server = { reject_zero_rtt = false } }\nworkload = { kind = \"bulk\" }\n",
            "flows[0].quic.server.reject_zero_rtt: false",
        ),
        (
            "transport = \"quic\"\nquic = { client = { resumption_client_hello_size = 400 } }\nworkload = { kind = \"web_page\" }\n",
            "flows[0].quic.client.resumption_client_hello_size: 400",
        ),
        (
            "transport = \"quic\"\nquic = { zero_rtt = true }\nworkload = { kind = \"video\" }\n",
            "flows[0].quic.zero_rtt: true",
        ),
    ];
    for (flow, want) in cases {
        std::fs::write(&f, format!("{TWO_HOSTS}[[flows]]\n{flow}")).unwrap();
        let e = code(quicsim(&["validate", s(&f)]), 2);
        assert!(e.contains(want), "{flow}: {e}");
        assert!(e.contains("sequence"), "{flow}: {e}");
    }
    // Where later connections resume, the keys are fine.
    for flow in [
        "transport = \"quic\"\nquic = { zero_rtt = true }\nworkload = { kind = \"reconnects\" }\n",
        "kind = \"quic_connections\"\nzero_rtt = true\n[[flows.connections]]\n[[flows.connections]]\ngap = \"1s\"\n",
    ] {
        std::fs::write(&f, format!("{TWO_HOSTS}[[flows]]\n{flow}")).unwrap();
        code(quicsim(&["validate", s(&f)]), 0);
    }
}

/// Item 17: QUIC time keys refused integer nanoseconds, which the format allows (TCP's
/// took them), with an error naming `flows[0]` and "a quic_bulk flow" for `transport =
/// "quic"`; `initial_cwnd_packets = 0` was reported as `initial_cwnd_bytes`.
#[test]
fn item17_quic_keys_read_like_tcp_keys_and_errors_name_the_key() {
    let d = tmp("quic-keys");
    let f = d.join("s.toml");
    let run = |flow: &str| {
        std::fs::write(&f, format!("{TWO_HOSTS}[[flows]]\n{flow}")).unwrap();
        quicsim(&["run", s(&f), "--json"])
    };
    let json = |o: Output| -> serde_json::Value {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // Integer nanoseconds equal the same time with a unit, flat, in `quic` or per side.
    let a = json(run(
        "transport = \"quic\"\nquic = { idle_timeout = 5000000000, max_ack_delay = 10000000 }\nworkload = { kind = \"bulk\", bytes = \"50KB\" }\n",
    ));
    let b = json(run(
        "transport = \"quic\"\nquic = { idle_timeout = \"5s\", max_ack_delay = \"10ms\" }\nworkload = { kind = \"bulk\", bytes = \"50KB\" }\n",
    ));
    assert_eq!(a["runs"][0]["digest"], b["runs"][0]["digest"]);
    assert_eq!(a["resolved_config"], b["resolved_config"]);
    let c = json(run(
        "transport = \"quic\"\ninitial_rtt = 50000000\nworkload = { kind = \"bulk\", bytes = \"50KB\" }\n[flows.quic.client]\nmax_ack_delay = 10000000\n",
    ));
    assert_eq!(c["runs"][0]["status"], "completed");
    // Errors name the key where it was written, not the flow.
    for (flow, want) in [
        (
            "transport = \"quic\"\nquic = { initial_rtt = \"abc\" }\nworkload = { kind = \"bulk\" }\n",
            "flows[0].quic.initial_rtt: abc",
        ),
        (
            "transport = \"quic\"\nquic = { client = { initial_rtt = true } }\nworkload = { kind = \"bulk\" }\n",
            "flows[0].quic.client.initial_rtt: true",
        ),
        (
            "kind = \"quic_bulk\"\nidle_timeout = -5\n",
            "flows[0].idle_timeout: -5",
        ),
        (
            "transport = \"quic\"\ninitial_cwnd_packets = 0\nworkload = { kind = \"bulk\" }\n",
            "flows[0].initial_cwnd_packets: 0",
        ),
        (
            "transport = \"quic\"\nquic = { initial_cwnd_packets = 1 }\nworkload = { kind = \"bulk\" }\n",
            "flows[0].quic.initial_cwnd_packets: 1",
        ),
    ] {
        let e = code(run(flow), 2);
        assert!(e.contains(want), "{flow}: {e}");
        assert!(!e.contains("quic_bulk flow"), "{flow}: {e}");
    }
}

/// Item 10: a 150-byte scenario (`copies = 1000`, `streams = 100000`) allocated 4 GB and
/// aborted; 200 flows x `copies = 1000` likewise. The totals are bounded when the file is
/// read, before anything is built: at most 10 000 flows and 1 000 000 request streams
/// (over every flow, copy and connection), the error naming the entry's key.
#[test]
fn item10_flows_and_streams_are_bounded_in_all() {
    let d = tmp("totals");
    let f = d.join("s.toml");
    let many = "[[flows]]\nkind = \"quic_bulk\"\ncopies = 1000\n".repeat(200);
    let reconnects = "[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"reconnects\", streams = 100000, reconnections = 1000 }\n";
    let sequence = format!(
        "[[flows]]\nkind = \"quic_connections\"\nstreams = 100000\n{}",
        "[[flows.connections]]\n".repeat(11)
    );
    for (flows, want) in [
        (
            "[[flows]]\nkind = \"quic_bulk\"\ncopies = 1000\nstreams = 100000\n",
            "flows[0].copies: 1000",
        ),
        (many.as_str(), "flows[10].copies: 1000"),
        (reconnects, "flows[0].workload.reconnections"),
        (sequence.as_str(), "flows[0].connections: 1100000"),
    ] {
        std::fs::write(&f, format!("{TWO_HOSTS}{flows}")).unwrap();
        for cmd in ["validate", "run"] {
            let e = code(quicsim_within(&[cmd, s(&f)], 30), 2);
            assert!(e.contains(want), "{want}: {e}");
            assert!(e.contains("at most"), "{e}");
        }
    }
    // At the bounds: accepted.
    std::fs::write(
        &f,
        format!(
            "{TWO_HOSTS}[[flows]]\nkind = \"quic_bulk\"\ncopies = 10\nstreams = 100000\n{}",
            "[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 1\ncopies = 1000\n".repeat(9)
        ),
    )
    .unwrap();
    code(quicsim(&["validate", s(&f)]), 0);
}

/// Item 11: the cost of an event grew with the number of connections of a sequence
/// (every endpoint polled every connection it ever had, closed ones included, on every
/// event: 5 000 connections took 20 s). A connection whose state is gone, with no timer,
/// no pending event and nothing to send, is no longer polled: 5 000 connections run in
/// about a second in release (a 60 s guard here fails only work that is not bounded).
#[test]
fn item11_closed_connections_of_a_sequence_cost_nothing_per_event() {
    let d = tmp("sequence-cost");
    let f = d.join("s.toml");
    std::fs::write(
        &f,
        format!(
            "{TWO_HOSTS}[[flows]]\nkind = \"quic_connections\"\nbytes = \"1KB\"\n{}",
            "[[flows.connections]]\n".repeat(5000)
        ),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let o = quicsim(&["run", s(&f), "--json"]);
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["status"], "completed");
}

/// A `quicsim serve` of `dir` on a free port, killed when dropped.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Server {
    fn start(dir: &Path) -> Server {
        use std::io::BufRead;
        let mut child = Command::new(BIN)
            .args(["serve", "--port", "0", "--dir", s(dir)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim_end()
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        Server { child, port }
    }

    fn connect(&self) -> std::net::TcpStream {
        let c = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        c
    }

    /// Sends `head` (with `Host` added unless `host` is false) and reads the answer:
    /// (status line, headers lower-cased, body).
    fn request(&self, head: &str) -> (String, String, Vec<u8>) {
        use std::io::{Read, Write};
        let mut c = self.connect();
        c.write_all(head.as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = c.read_to_end(&mut raw);
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(&raw)));
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let (status, headers) = head.split_once("\r\n").unwrap_or((&head, ""));
        (
            status.to_string(),
            headers.to_ascii_lowercase(),
            raw[split + 4..].to_vec(),
        )
    }

    fn get(&self, path: &str) -> (String, String, Vec<u8>) {
        self.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        ))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A site: index.html, a 5 MB wasm file, a dotfile, a hidden directory, a symlink out of
/// the directory and one inside it; the secret it must not serve.
fn site(d: &Path) -> PathBuf {
    let site = d.join("site");
    std::fs::create_dir_all(site.join(".git")).unwrap();
    std::fs::write(site.join("index.html"), "<html>hello</html>").unwrap();
    let wasm: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(site.join("app_bg.wasm"), wasm).unwrap();
    std::fs::write(site.join(".env"), "SECRET=1").unwrap();
    std::fs::write(site.join(".git").join("config"), "SECRET=2").unwrap();
    std::fs::write(d.join("outside.txt"), "SECRET=3").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.join("outside.txt"), site.join("out.txt")).unwrap();
        std::os::unix::fs::symlink(d, site.join("up")).unwrap();
        std::os::unix::fs::symlink(site.join("index.html"), site.join("alias.html")).unwrap();
    }
    site
}

/// Item 2: `serve` followed symlinks out of `--dir` (a link to /etc/shadow inside the
/// folder was served) and served dotfiles. Paths are percent-decoded, refused with any
/// part starting with a dot, canonicalised and served only under the canonical root.
#[cfg(unix)]
#[test]
fn item02_serve_stays_under_its_directory_and_hides_dotfiles() {
    let d = tmp("serve-paths");
    let srv = Server::start(&site(&d));
    let (status, _, body) = srv.get("/");
    assert!(status.contains("200"), "{status}");
    assert_eq!(body, b"<html>hello</html>");
    assert!(srv.get("/alias.html").0.contains("200"));
    // A link out and back in names a file under the root: served.
    assert!(srv.get("/up/site/index.html").0.contains("200"));
    for path in [
        "/out.txt",
        "/up/outside.txt",
        "/.env",
        "/%2eenv",
        "/.git/config",
        "/.git/",
        "/../outside.txt",
        "/%2e%2e/outside.txt",
        "/%2e%2e%2foutside.txt",
        "/..%5coutside.txt",
        "/nothing.html",
    ] {
        let (status, _, body) = srv.get(path);
        assert!(status.contains("404"), "{path}: {status}");
        assert!(!String::from_utf8_lossy(&body).contains("SECRET"), "{path}");
    }
}

/// Item 3: `serve` aborted under 30 concurrent 100 MB request lines (the whole line was
/// read into memory), and one client that never read a 5 MB response stalled every
/// other request (one connection at a time). Heads are read up to 8 KB (431 past it);
/// each connection has its own thread and timeouts.
#[test]
fn item03_serve_bounds_request_heads_and_serves_around_a_stalled_client() {
    use std::io::Write;
    let d = tmp("serve-bounds");
    let srv = Server::start(&site(&d));
    // 30 clients sending long request lines at once: each is cut at 8 KB.
    let floods: Vec<_> = (0..30)
        .map(|_| {
            let mut c = srv.connect();
            std::thread::spawn(move || {
                let chunk = vec![b'a'; 64 * 1024];
                let _ = c.write_all(b"GET /");
                for _ in 0..(100 * 16) {
                    if c.write_all(&chunk).is_err() {
                        break; // the server answered 431 and closed
                    }
                }
            })
        })
        .collect();
    for f in floods {
        f.join().unwrap();
    }
    let (status, _, _) = srv.request(&format!(
        "GET /{} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        "a".repeat(9000),
        srv.port
    ));
    assert!(status.contains("431"), "{status}");
    // A client that asks for 5 MB and never reads.
    let mut stalled = srv.connect();
    write!(
        stalled,
        "GET /app_bg.wasm HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        srv.port
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = std::time::Instant::now();
    for _ in 0..5 {
        assert!(srv.get("/").0.contains("200"));
    }
    assert!(t0.elapsed().as_secs() < 5, "{:?}", t0.elapsed());
    // Still serving, not crashed.
    assert!(srv.get("/app_bg.wasm").2.len() == 5_000_000);
    drop(stalled);
}

/// Item 4: `serve` answered every method with the file, ignored `Host`, sent no
/// `nosniff` or CSP, and sent the wasm uncompressed. GET and HEAD only (405 with
/// `Allow`), a `Host` of this server only (421: DNS rebinding), `nosniff` and a CSP on
/// every answer, gzip when accepted.
#[test]
fn item04_serve_answers_get_and_head_for_its_own_host_with_safe_headers() {
    use std::io::Read;
    let d = tmp("serve-headers");
    let srv = Server::start(&site(&d));
    let p = srv.port;
    for m in ["POST", "PUT", "DELETE", "OPTIONS", "TRACE"] {
        let (status, headers, body) = srv.request(&format!(
            "{m} /index.html HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(status.contains("405"), "{m}: {status}");
        assert!(headers.contains("allow: get, head"), "{m}: {headers}");
        assert!(!String::from_utf8_lossy(&body).contains("hello"));
    }
    for host in ["evil.example", "evil.example:80", "127.0.0.1:1"] {
        let (status, _, body) =
            srv.request(&format!("GET /index.html HTTP/1.1\r\nHost: {host}\r\n\r\n"));
        assert!(status.contains("421"), "{host}: {status}");
        assert!(!String::from_utf8_lossy(&body).contains("hello"));
    }
    let (status, _, _) = srv.request("GET /index.html HTTP/1.1\r\n\r\n");
    assert!(status.contains("400"), "no Host: {status}");
    let (status, headers, body) = srv.request(&format!(
        "HEAD /index.html HTTP/1.1\r\nHost: localhost:{p}\r\n\r\n"
    ));
    assert!(status.contains("200"), "{status}");
    assert!(headers.contains("content-length: 18"), "{headers}");
    assert!(body.is_empty());
    let (_, headers, body) = srv.get("/index.html");
    assert!(
        headers.contains("x-content-type-options: nosniff"),
        "{headers}"
    );
    assert!(
        headers.contains("content-security-policy: default-src 'self'"),
        "{headers}"
    );
    assert!(!headers.contains("content-encoding"), "{headers}");
    assert_eq!(body, b"<html>hello</html>");
    let (status, headers, body) = srv.request(&format!(
        "GET /app_bg.wasm HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nAccept-Encoding: br, gzip\r\n\r\n"
    ));
    assert!(status.contains("200"), "{status}");
    assert!(headers.contains("content-encoding: gzip"), "{headers}");
    assert!(
        headers.contains("content-type: application/wasm"),
        "{headers}"
    );
    assert!(body.len() < 1_000_000, "{} bytes", body.len());
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, std::fs::read(d.join("site/app_bg.wasm")).unwrap());
    let (_, headers, _) = srv.request(&format!(
        "GET /app_bg.wasm HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nAccept-Encoding: gzip;q=0\r\n\r\n"
    ));
    assert!(!headers.contains("content-encoding"), "{headers}");
}

/// The value of header `name` (lower-cased) in lower-cased `headers`.
fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers
        .split("\r\n")
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
}

/// Issue 29 item 14 (page load): the wasm was fetched again on every load. `serve`
/// sends the precompressed sibling `scripts/build-web` writes (`.br` before `.gz`, when
/// accepted and not older than the file, never through a symlink out of the root; gzip
/// made on the fly otherwise), an `ETag` per version and encoding with `If-None-Match`
/// answered 304, and caches content-hashed names for a year (`immutable`), every other
/// file `no-cache`.
#[cfg(unix)]
#[test]
fn issue29_item14_serve_precompressed_siblings_etags_and_cache_lifetimes() {
    use std::io::Read;
    let d = tmp("serve-cache");
    let site = site(&d);
    let hashed = "web-ui-0123456789abcdef_bg.wasm";
    let wasm = std::fs::read(site.join("app_bg.wasm")).unwrap();
    std::fs::write(site.join(hashed), &wasm).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &wasm).unwrap();
    std::fs::write(site.join(format!("{hashed}.gz")), gz.finish().unwrap()).unwrap();
    // Not real brotli: the server sends the sibling's bytes as they are.
    std::fs::write(site.join(format!("{hashed}.br")), b"BROTLI").unwrap();
    // A sibling that links out of the root is not served.
    std::fs::write(d.join("outside.gz"), b"SECRET=4").unwrap();
    std::os::unix::fs::symlink(d.join("outside.gz"), site.join("index.html.gz")).unwrap();
    let srv = Server::start(&site);
    let p = srv.port;
    let get = |path: &str, extra: &str| {
        srv.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n{extra}\r\n"
        ))
    };
    // br preferred when accepted; gzip otherwise; identity when nothing is accepted.
    let (status, h, body) = get(
        &format!("/{hashed}"),
        "Accept-Encoding: gzip, deflate, br, zstd\r\n",
    );
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&h, "content-encoding"), Some("br"), "{h}");
    assert_eq!(body, b"BROTLI");
    assert_eq!(header(&h, "content-type"), Some("application/wasm"));
    assert_eq!(header(&h, "vary"), Some("accept-encoding"));
    assert_eq!(
        header(&h, "cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let tag_br = header(&h, "etag").unwrap().to_string();
    let (_, h, body) = get(&format!("/{hashed}"), "Accept-Encoding: gzip\r\n");
    assert_eq!(header(&h, "content-encoding"), Some("gzip"), "{h}");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, wasm);
    let tag_gz = header(&h, "etag").unwrap().to_string();
    let (_, h, body) = get(&format!("/{hashed}"), "");
    assert_eq!(header(&h, "content-encoding"), None, "{h}");
    assert_eq!(body, wasm);
    let tag = header(&h, "etag").unwrap().to_string();
    assert!(
        tag != tag_gz && tag_gz != tag_br && tag.starts_with('"'),
        "{tag} {tag_gz} {tag_br}"
    );
    // A matching validator: 304 without a body, with the validator and the lifetime.
    let (status, h, body) = get(
        &format!("/{hashed}"),
        &format!("Accept-Encoding: gzip\r\nIf-None-Match: \"x\", {tag_gz}\r\n"),
    );
    assert!(status.contains("304"), "{status}");
    assert!(body.is_empty());
    assert_eq!(header(&h, "etag"), Some(tag_gz.as_str()));
    assert!(header(&h, "cache-control").unwrap().contains("immutable"));
    // Another encoding's validator does not match this one.
    let (status, _, body) = get(
        &format!("/{hashed}"),
        &format!("Accept-Encoding: gzip\r\nIf-None-Match: {tag_br}\r\n"),
    );
    assert!(status.contains("200"), "{status}");
    assert!(!body.is_empty());
    // A page without a hash in its name: no-cache, revalidated with its validator.
    let (status, h, body) = get("/index.html", "Accept-Encoding: gzip\r\n");
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&h, "cache-control"), Some("no-cache"));
    assert_eq!(header(&h, "content-type"), Some("text/html; charset=utf-8"));
    let mut page = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_end(&mut page)
        .unwrap();
    assert_eq!(page, b"<html>hello</html>"); // gzip made here, not the linked sibling
    let tag = header(&h, "etag").unwrap().to_string();
    let (status, _, body) = get(
        "/index.html",
        &format!("Accept-Encoding: gzip\r\nIf-None-Match: W/{tag}\r\n"),
    );
    assert!(status.contains("304"), "{status}");
    assert!(body.is_empty());
    // A changed file: a new validator, and a sibling older than the file is not sent.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(site.join(hashed), b"changed").unwrap();
    let (status, h, body) = get(
        &format!("/{hashed}"),
        &format!("Accept-Encoding: br\r\nIf-None-Match: {tag_br}\r\n"),
    );
    assert!(status.contains("200"), "{status}");
    assert_eq!(header(&h, "content-encoding"), None, "{h}");
    assert_eq!(body, b"changed");
}

/// Found while checking item 11: an SCTP flow with more request streams than the
/// client's half of the association's stream numbers (32 768) was accepted and ended
/// `stalled` after a minute of simulated time. Refused, naming the key.
#[test]
fn sctp_streams_beyond_the_clients_stream_numbers_are_refused() {
    let d = tmp("sctp-streams");
    let f = d.join("s.toml");
    for (workload, want) in [
        (
            "{ kind = \"bulk\", streams = 32769 }",
            "flows[0].workload.streams: 32769",
        ),
        (
            "{ kind = \"reconnects\", streams = 40000, on = \"close\" }",
            "flows[0].workload.streams: 40000",
        ),
    ] {
        std::fs::write(
            &f,
            format!("{TWO_HOSTS}[[flows]]\ntransport = \"sctp\"\nworkload = {workload}\n"),
        )
        .unwrap();
        let e = code(quicsim(&["validate", s(&f)]), 2);
        assert!(e.contains(want) && e.contains("at most 32768"), "{e}");
    }
    std::fs::write(
        &f,
        format!("{TWO_HOSTS}[[flows]]\ntransport = \"sctp\"\nworkload = {{ kind = \"bulk\", streams = 32768 }}\n"),
    )
    .unwrap();
    code(quicsim(&["validate", s(&f)]), 0);
}
