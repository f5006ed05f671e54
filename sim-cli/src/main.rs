//! `quicsim`: the command line of the quicsim simulator.
//!
//! All file and terminal I/O lives here; sim-core stays pure.

mod files;
mod plot;
mod reproduce;
mod sensitivity;
mod serve;
mod sweep;

use clap::{Parser, Subcommand};
use files::AtomicFile;
use rayon::prelude::*;
use sim_core::breakdown::{FlowBreakdown, TimePart};
use sim_core::metrics::{EndpointMetrics, RunResult};
use sim_core::qlog::{self, QlogFormat, QlogWriter, TraceKey};
use sim_core::scenario::Scenario;
use sim_core::study::{Job, Overrides, Study};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// quicsim — a deterministic packet-level simulator of QUIC over impaired links.
#[derive(Parser, Debug)]
#[command(name = "quicsim", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario: every sweep point x every run, in parallel across runs.
    ///
    /// Run i (0-based) of a point uses seed `base + i` (wrapping), where base is `--seed` or
    /// the scenario's `seed`; `quicsim run FILE --seed S --runs 1` with a printed seed S
    /// reproduces that run exactly. Every sweep point uses the same seeds (common random
    /// numbers).
    Run {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Base seed (overrides the scenario's `seed`).
        #[arg(long, allow_negative_numbers = true)]
        seed: Option<u64>,
        /// Runs per sweep point (overrides the scenario's `runs`).
        #[arg(long, allow_negative_numbers = true)]
        runs: Option<u32>,
        /// Print the results as JSON instead of a human summary.
        #[arg(long)]
        json: bool,
        /// Write result.json, summary.csv and (with series on) one time-series CSV per run
        /// into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Record time series (same as `[output] series = true`).
        #[arg(long)]
        series: bool,
        /// Write qlog traces (JSON-SEQ, `.sqlog`) into this directory: one file per run,
        /// connection and vantage point, named
        /// `<scenario>-s<seed>-p<point>-f<flow>-c<conn>-<client|server>.sqlog`.
        #[arg(long, value_name = "DIR")]
        qlog: Option<PathBuf>,
        /// qlog shape: `draft` (the current IETF qlog drafts) or `qvis` (qlog 0.3, what
        /// qvis reads).
        #[arg(long, value_name = "FORMAT", default_value = "draft", value_parser = ["draft", "qvis"])]
        qlog_format: String,
        /// Also print "where the time went" per run and flow: the data sender's time split
        /// into handshake, slow start, blocked by flow control, blocked by cwnd, loss
        /// recovery and idle (docs/breakdown.md; QUIC, TCP and SCTP senders). With --json it is
        /// the document's extra `breakdown` key; the rest of the output is unchanged.
        #[arg(long, conflicts_with = "qlog")]
        breakdown: bool,
    },
    /// Serve the browser UI (built by `scripts/build-web`) on 127.0.0.1 and print its URL.
    Serve {
        /// TCP port (0: any free port).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// The built site.
        #[arg(long, default_value = "web-ui/dist")]
        dir: PathBuf,
    },
    /// Plot columns of a time-series CSV (from `run --series --out DIR`) to an SVG file.
    Plot {
        /// The CSV file.
        csv: PathBuf,
        /// Column(s) to draw; `name*factor` or `name/divisor` rescales (e.g.
        /// `flow0.ep1.cwnd/1250` for a window in packets). Repeat or comma-separate.
        #[arg(long, required = true, value_delimiter = ',')]
        y: Vec<String>,
        /// Column for the horizontal axis.
        #[arg(long, default_value = "time_s")]
        x: String,
        /// Title.
        #[arg(long, default_value = "")]
        title: String,
        /// Label of the vertical axis.
        #[arg(long, default_value = "")]
        ylabel: String,
        /// Output SVG file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Run a scenario's sweep (grid x runs) across all cores into a directory: each
    /// finished run is appended to DIR/runs.jsonl as it completes, so a killed sweep
    /// continues with `--resume`; at the end DIR holds summary.csv / summary.json (per
    /// point and metric: n, mean, std dev, 95 % CI, median, p10, p90). Output bytes do not
    /// depend on --jobs, interruptions or sharding.
    Sweep {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Worker threads (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Continue an interrupted sweep in --out.
        #[arg(long)]
        resume: bool,
        /// Run only shard K of N (0 <= K < N), balanced by estimated cost; combine the
        /// shards' directories with `quicsim merge`. See docs/cluster.md.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Base seed (overrides the scenario's `seed`).
        #[arg(long, allow_negative_numbers = true)]
        seed: Option<u64>,
        /// Runs per sweep point (overrides the scenario's `runs`).
        #[arg(long, allow_negative_numbers = true)]
        runs: Option<u32>,
        /// Run one combination of the `[[paper.unstated]]` parameters (its name as in
        /// `quicsim validate` and the sweep directories of `quicsim reproduce`,
        /// `<stem>@<COMBINATION>`), e.g. to run it in shards on a cluster; with the
        /// paper's --runs, the merged directory is the one `quicsim reproduce` resumes.
        #[arg(long, value_name = "COMBINATION")]
        unstated: Option<String>,
    },
    /// Combine the directories of all shards of one sweep into the directory an unsharded
    /// sweep writes (the same bytes). Refuses a missing, duplicated, unfinished or foreign
    /// shard.
    Merge {
        /// The shards' output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// Plot a metric of a finished sweep (its summary.json) against a sweep key: the mean
    /// per point with its 95 % confidence interval as an error bar, one line per value of
    /// `--series`. Sweep keys that are neither x nor series must be fixed with --where.
    PlotSweep {
        /// The sweep directory (`quicsim sweep --out DIR`).
        dir: PathBuf,
        /// Sweep key on the horizontal axis (e.g. `topology.link.loss`); values that are
        /// durations, rates or sizes are drawn in s, bit/s and bytes.
        #[arg(long)]
        x: String,
        /// Metric (a name from summary.csv, e.g. `flow0.ep0.completion_secs`), optionally
        /// `*factor` or `/divisor`.
        #[arg(long)]
        y: String,
        /// Sweep key whose values become separate lines.
        #[arg(long)]
        series: Option<String>,
        /// Keep only points with KEY=VALUE (value as written in the scenario). Repeatable.
        #[arg(long = "where", value_name = "KEY=VALUE")]
        filters: Vec<String>,
        /// Title.
        #[arg(long, default_value = "")]
        title: String,
        /// Label of the horizontal axis (default: the x key).
        #[arg(long, default_value = "")]
        xlabel: String,
        /// Label of the vertical axis, with its unit.
        #[arg(long, default_value = "")]
        ylabel: String,
        /// Output SVG file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Reproduce the seed papers: every scenario with a `[paper]` table (under
    /// --scenarios) run as a resumable sweep, then DIR/index.md and DIR/paper`ID`.md with
    /// our numbers beside the paper's, figures (DIR/figures) and a verdict per effect.
    Reproduce {
        /// `all`, or one paper: `000` (or `paper000`) .. `004`.
        #[arg(default_value = "all")]
        which: String,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Where the scenarios are.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// Runs per sweep point (overrides each scenario's `runs`; e.g. 1 for a smoke run).
        #[arg(long)]
        runs: Option<u32>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Check a scenario file and report its sweep size, without running it.
    Validate {
        /// Scenario file (TOML).
        file: PathBuf,
    },
}

/// Exit code for bad input (scenario or arguments).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for an I/O failure (a file that cannot be read or written).
const EXIT_IO: u8 = 1;

/// The I/O a plot needs, checked before drawing so that a failure exits 1 (I/O) and not 2
/// (bad input): every input file readable, the output file writable.
fn io_check(inputs: &[&Path], out: &Path) -> Result<(), (u8, String)> {
    for f in inputs {
        std::fs::File::open(f)
            .map_err(|e| (EXIT_IO, format!("{}: cannot read: {e}", f.display())))?;
    }
    // The figure is drawn into a temporary file beside `out` and renamed: that file must
    // be creatable (`out` itself is not touched before the figure is complete).
    let tmp = files::temp_path(out);
    std::fs::File::create(&tmp)
        .map(drop)
        .map_err(|e| (EXIT_IO, format!("{}: cannot write: {e}", out.display())))?;
    let _ = std::fs::remove_file(&tmp);
    Ok(())
}

/// Writes `text` to stdout: a failure (a full disk, `> /dev/full`) is an I/O failure
/// (exit 1) with a message, never a panic as `print!` would. (A closed pipe ends the
/// process quietly: SIGPIPE keeps its default action.)
pub(crate) fn stdout(text: &str) -> Result<(), (u8, String)> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| (EXIT_IO, format!("stdout: {e}")))
}

fn load(file: &Path) -> Result<Scenario, (u8, String)> {
    // An unreadable file is an I/O failure (exit 1, README "Exit codes"); a FIFO, a device,
    // a file over 16 MB or not UTF-8 is bad input (exit 2).
    let text = files::read_scenario(file)?;
    files::parse_scenario(file, &text)
}

/// The names of the combinations of a scenario's `[[paper.unstated]]` parameters (the
/// suffixes of `quicsim reproduce`'s sweep directories).
fn combination_names(s: &Scenario) -> Vec<String> {
    s.paper
        .as_ref()
        .map(|p| {
            p.combinations()
                .iter()
                .map(|c| p.combination_slug(c))
                .collect()
        })
        .unwrap_or_default()
}

/// `file`'s scenario under the combination of its unstated parameters named `name` (its
/// slug, as `quicsim validate` lists them).
fn combination(file: &Path, s: &Scenario, name: &str) -> Result<Scenario, (u8, String)> {
    let p = s.paper.as_ref().filter(|p| !p.unstated.is_empty());
    let Some(p) = p else {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "--unstated {name:?}: {} declares no [[paper.unstated]] parameters",
                file.display()
            ),
        ));
    };
    let Some(c) = p
        .combinations()
        .into_iter()
        .find(|c| p.combination_slug(c) == name)
    else {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "--unstated {name:?}: expected one of {}",
                combination_names(s).join(", ")
            ),
        ));
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| (EXIT_IO, format!("{}: cannot read: {e}", file.display())))?;
    sim_core::scenario::parse_str_overriding(&text, &p.overrides(&c)).map_err(|e| {
        (
            EXIT_BAD_INPUT,
            format!("{} (unstated {name}): {e}", file.display()),
        )
    })
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`quicsim run ... | head`) like other Unix tools,
    // instead of panicking on the failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Serve { port, dir } => serve::serve(&dir, port),
        Command::Plot {
            csv,
            y,
            x,
            title,
            ylabel,
            out,
        } => y
            .iter()
            .map(|c| plot::parse_curve(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| (EXIT_BAD_INPUT, e))
            .and_then(|curves| {
                files::refuse_input_as_output(&out, &[("input CSV", &csv)])?;
                io_check(&[&csv], &out)?;
                plot::plot(&csv, &x, &curves, &title, &ylabel, &out)
                    .map_err(|e| (EXIT_BAD_INPUT, e))
            }),
        Command::Sweep {
            file,
            out,
            jobs,
            resume,
            shard,
            seed,
            runs,
            unstated,
        } => sweep_cmd(
            &file,
            out,
            jobs,
            resume,
            shard,
            seed,
            runs,
            unstated.as_deref(),
        ),
        Command::Merge { dirs, out } => sweep::merge(&dirs, &out),
        Command::Reproduce {
            which,
            out,
            scenarios,
            runs,
            jobs,
        } => reproduce::reproduce(reproduce::ReproduceArgs {
            which,
            out,
            scenarios,
            runs,
            jobs,
        }),
        Command::PlotSweep {
            dir,
            x,
            y,
            series,
            filters,
            title,
            xlabel,
            ylabel,
            out,
        } => {
            // The sweep's own files are inputs too: a figure must not replace any of them.
            let own: Vec<(&str, PathBuf)> =
                ["summary.json", "summary.csv", "sweep.json", "runs.jsonl"]
                    .into_iter()
                    .map(|f| ("sweep file", dir.join(f)))
                    .collect();
            let own: Vec<(&str, &Path)> = own.iter().map(|(f, p)| (*f, p.as_path())).collect();
            files::refuse_input_as_output(&out, &own)
                .and_then(|()| io_check(&[&dir.join("summary.json")], &out))
                .and_then(|()| {
                    plot_sweep_cmd(
                        &dir,
                        &x,
                        &y,
                        series.as_deref(),
                        &filters,
                        &title,
                        &xlabel,
                        &ylabel,
                        &out,
                    )
                })
        }
        Command::Validate { file } => load(&file).and_then(|s| {
            stdout(&format!(
                "{}: ok — {} sweep point(s) x {} run(s)\n",
                file.display(),
                s.points.len(),
                s.base.runs
            ))?;
            let names = combination_names(&s);
            if !names.is_empty() {
                stdout(&format!(
                    "unstated parameters: {} combination(s): {}\n",
                    names.len(),
                    names.join(", ")
                ))?;
            }
            Ok(())
        }),
        Command::Run {
            file,
            seed,
            runs,
            json,
            out,
            series,
            qlog,
            qlog_format,
            breakdown,
        } => load(&file).and_then(|s| {
            let qlog = qlog.map(|dir| {
                let fmt = QlogFormat::parse(&qlog_format).expect("clap checked the value");
                (dir, fmt)
            });
            let opts = RunOpts {
                as_json: json,
                out,
                series,
                qlog,
                breakdown,
            };
            run_cmd(s, seed, runs, opts)
        }),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code)
        }
    }
}

/// `quicsim plot-sweep`: argument checks, then [`plot::plot_sweep`].
#[allow(clippy::too_many_arguments)]
fn plot_sweep_cmd(
    dir: &Path,
    x: &str,
    y: &str,
    series: Option<&str>,
    filters: &[String],
    title: &str,
    xlabel: &str,
    ylabel: &str,
    out: &Path,
) -> Result<(), (u8, String)> {
    let curve = plot::parse_curve(y).map_err(|e| (EXIT_BAD_INPUT, e))?;
    let filters: Vec<(String, String)> = filters
        .iter()
        .map(|f| {
            f.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| (EXIT_BAD_INPUT, format!("--where {f:?}: expected KEY=VALUE")))
        })
        .collect::<Result<_, _>>()?;
    plot::plot_sweep(&plot::SweepPlot {
        dir,
        x,
        y: &curve,
        series,
        filters: &filters,
        title,
        xlabel,
        ylabel,
        out,
        series_name: None,
        paper: &[],
    })
    .map_err(|e| (EXIT_BAD_INPUT, e))
}

/// `quicsim sweep`: argument checks, then [`sweep::sweep`].
#[allow(clippy::too_many_arguments)]
fn sweep_cmd(
    file: &Path,
    out: PathBuf,
    jobs: Option<usize>,
    resume: bool,
    shard: Option<String>,
    seed: Option<u64>,
    runs: Option<u32>,
    unstated: Option<&str>,
) -> Result<(), (u8, String)> {
    let jobs = sweep::worker_threads(jobs)?;
    if runs == Some(0) {
        return Err((
            EXIT_BAD_INPUT,
            "--runs: 0 is not allowed: expected >= 1".into(),
        ));
    }
    let shard = shard
        .map(|s| sweep::Shard::parse(&s))
        .transpose()
        .map_err(|e| (EXIT_BAD_INPUT, e))?;
    let mut s = load(file)?;
    if let Some(name) = unstated {
        s = combination(file, &s, name)?;
    }
    let overrides = Overrides {
        seed,
        runs,
        series: false,
    };
    let study = Study::new(s, &overrides).map_err(|e| (EXIT_BAD_INPUT, e.to_string()))?;
    sweep::sweep(
        study,
        sweep::SweepArgs {
            out,
            jobs,
            resume,
            shard,
        },
    )
}

/// `quicsim run`: the jobs, seeds, order and JSON document come from [`Study`]; this does
/// the I/O, runs the jobs in parallel and prints.
fn run_cmd(
    s: Scenario,
    seed: Option<u64>,
    runs: Option<u32>,
    opts: RunOpts,
) -> Result<(), (u8, String)> {
    let RunOpts {
        as_json,
        out,
        series,
        qlog,
        breakdown,
    } = opts;
    if runs == Some(0) {
        return Err((
            EXIT_BAD_INPUT,
            "--runs: 0 is not allowed: expected >= 1".into(),
        ));
    }
    let overrides = Overrides { seed, runs, series };
    let study = Study::new(s, &overrides).map_err(|e| (EXIT_BAD_INPUT, e.to_string()))?;
    if let Some((dir, _)) = &qlog {
        std::fs::create_dir_all(dir).map_err(|e| (1, format!("{}: {e}", dir.display())))?;
    }
    let paired = study.scenario().is_paired();
    let run_job = |j: &Job| -> Result<Ran, (u8, String)> {
        let cfg = study.config(j);
        let bad = |e: sim_core::scenario::ConfigError| (EXIT_BAD_INPUT, e.to_string());
        let (result, split) = match &qlog {
            None if breakdown => {
                let (r, b) = sim_core::runner::run_with_breakdown(cfg, j.seed).map_err(bad)?;
                let b = b.into_iter().map(|f| (transport_of(&r, &f), f)).collect();
                (r, b)
            }
            None => (sim_core::run(cfg, j.seed).map_err(bad)?, Vec::new()),
            Some((dir, fmt)) => (run_with_qlog(cfg, j, dir, *fmt)?, Vec::new()),
        };
        // The paired differences need only the compared metrics of each run.
        let observed = paired.then(|| sim_core::study::observations(&result));
        Ok(Ran {
            result,
            split,
            observed,
        })
    };
    stream_runs(&study, as_json, breakdown, out.as_deref(), run_job)
}

/// One finished job of `quicsim run`: its result, its time breakdown (with
/// `--breakdown`) and, in a paired comparison, its observations for the differences.
struct Ran {
    result: RunResult,
    split: Vec<(&'static str, FlowBreakdown)>,
    observed: Option<Vec<(String, f64)>>,
}

/// What `quicsim run` prints or writes besides the summary.
struct RunOpts {
    as_json: bool,
    out: Option<PathBuf>,
    series: bool,
    qlog: Option<(PathBuf, QlogFormat)>,
    breakdown: bool,
}

/// The transport of the endpoint whose split `f` is (`quic`, `tcp`, `sctp`): one bar per
/// transport in a paired comparison.
fn transport_of(r: &RunResult, f: &FlowBreakdown) -> &'static str {
    r.flows
        .get(f.flow as usize)
        .and_then(|fl| fl.endpoints.get(f.endpoint as usize))
        .map_or("-", |m| m.kind())
}

/// The splits of the jobs run so far: per job (job order), `(transport, split)` per flow.
type Splits = [(Job, Vec<(&'static str, FlowBreakdown)>)];

/// `--breakdown --json`: per job (job order) and flow, the parts in seconds.
fn breakdown_json(splits: &Splits) -> serde_json::Value {
    let mut rows = Vec::new();
    for (j, flows) in splits {
        for (transport, f) in flows {
            let mut parts = serde_json::Map::new();
            for (p, secs) in f.breakdown.secs() {
                parts.insert(p.as_str().to_string(), serde_json::json!(secs));
            }
            rows.push(serde_json::json!({
                "point": j.point,
                "seed": j.seed,
                "flow": f.flow,
                "transport": transport,
                "endpoint": f.endpoint,
                "total_secs": f.breakdown.total().as_secs_f64(),
                "parts_secs": parts,
            }));
        }
    }
    serde_json::Value::Array(rows)
}

/// `--breakdown`: one line per job and flow, seconds per part.
fn breakdown_table(splits: &Splits) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "where the time went — the data sender's time, seconds; the parts sum to its completion time (last byte acknowledged)\n",
    );
    let mut head = format!(
        "  {:>5} {:>20} {:>4} {:>9} {:>10}",
        "point", "seed", "flow", "transport", "total"
    );
    for p in TimePart::ALL {
        head.push_str(&format!(" {:>13}", p.as_str()));
    }
    let _ = writeln!(out, "{head}");
    let mut any = false;
    for (j, flows) in splits {
        for (transport, f) in flows {
            any = true;
            let mut line = format!(
                "  {:>5} {:>20} {:>4} {:>9} {:>10.6}",
                j.point,
                j.seed,
                f.flow,
                transport,
                f.breakdown.total().as_secs_f64()
            );
            for (_, secs) in f.breakdown.secs() {
                line.push_str(&format!(" {secs:>13.6}"));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "  (no flow reports it: CBR flows and reconnecting workloads have no single sender connection)"
        );
    }
    out
}

/// Jobs run in parallel per window, handed to the outputs in job order when the window is
/// done: the bounded reorder buffer of [`stream_runs`], in jobs per thread.
const STREAM_WINDOW_PER_THREAD: usize = 64;

/// `quicsim run`: runs the jobs point by point in windows of [`STREAM_WINDOW_PER_THREAD`]
/// jobs per thread and hands each window's runs, in job order, to every output as soon as
/// it is done — the text summary or the JSON document on stdout, `--out DIR`'s
/// result.json, summary.csv and series files, a paired comparison's collector — then drops
/// them. Memory is one window of results plus what the end needs: per run the compared
/// metrics of a paired comparison ([`sim_core::study::paired::PairedCollector`]) and, with
/// `--breakdown`, the parts of each flow that has them. The bytes are those of the whole
/// study's summary, [`Study::results`] document and files, written at the end before.
fn stream_runs<F>(
    study: &Study,
    as_json: bool,
    breakdown: bool,
    out: Option<&Path>,
    run_job: F,
) -> Result<(), (u8, String)>
where
    F: Fn(&Job) -> Result<Ran, (u8, String)> + Sync,
{
    let stdout_err = |e: std::io::Error| (EXIT_IO, format!("stdout: {e}"));
    let window = STREAM_WINDOW_PER_THREAD * rayon::current_num_threads().max(1);
    let runs = study.runs();
    let mut files = out.map(|dir| OutFiles::create(dir, study)).transpose()?;
    let mut json = match as_json {
        true => Some(JsonDoc::start(std::io::stdout(), study).map_err(stdout_err)?),
        false => {
            let mut w = String::new();
            print_header(&mut w, study);
            stdout(&w)?;
            None
        }
    };
    let mut collector = study.paired_collector();
    let mut splits: Vec<(Job, Vec<(&'static str, FlowBreakdown)>)> = Vec::new();
    let mut last_point = usize::MAX;
    for point in 0..study.scenario().points.len() {
        let mut start = 0u32;
        while start < runs {
            let end = start.saturating_add(window as u32).min(runs);
            let jobs: Vec<Job> = (start..end).map(|run| study.job(point, run)).collect();
            // Parallel across runs, never within one; collect() keeps the job order.
            let results: Vec<Result<Ran, (u8, String)>> = jobs.par_iter().map(&run_job).collect();
            for (j, r) in jobs.iter().zip(results) {
                let Ran {
                    result,
                    split,
                    observed,
                } = r?;
                match &mut json {
                    Some(js) => js.run(j, &result).map_err(stdout_err)?,
                    None => {
                        let mut w = String::new();
                        print_run(&mut w, study, j, &result, &mut last_point);
                        stdout(&w)?;
                    }
                }
                if let Some(f) = &mut files {
                    f.run(j, &result)?;
                }
                if let (Some(c), Some(obs)) = (&mut collector, &observed) {
                    c.add(j.point, j.run, j.seed, obs);
                }
                if !split.is_empty() {
                    splits.push((*j, split));
                }
            }
            std::io::stdout().flush().map_err(stdout_err)?;
            start = end;
        }
    }
    let paired = collector.map(|c| c.finish(&study.point_params(), true));
    if let Some(f) = files {
        f.finish(&doc_tail(study, paired.clone(), None))?;
    }
    match json {
        Some(js) => {
            let extra = breakdown.then(|| breakdown_json(&splits));
            js.finish(&doc_tail(study, paired, extra), true)
                .map_err(stdout_err)?;
        }
        None => {
            if let Some(p) = &paired {
                stdout(&paired_table(p))?;
            }
            if breakdown {
                stdout(&breakdown_table(&splits))?;
            }
        }
    }
    Ok(())
}

/// The results document's top-level `runs` field, empty, as the pretty printer writes it
/// (the only raw newline followed by two spaces and `"runs"`: JSON strings never hold a
/// raw newline, and only top-level fields are indented by two).
const EMPTY_RUNS: &str = "\n  \"runs\": []";

/// The pretty-printed results document of `study` without runs, cut inside its empty
/// `runs` array: (up to and including `[`, from after `]` to the end).
fn split_at_runs(doc: &str) -> (&str, &str) {
    let at = doc
        .find(EMPTY_RUNS)
        .expect("the results document has a runs array");
    let end = at + EMPTY_RUNS.len();
    (&doc[..end - 1], &doc[end..])
}

/// What follows the `runs` array in the results document: the fields after it — a paired
/// comparison's `paired`, then (with `--breakdown --json`) `breakdown`, which the whole
/// document gained as the last key of its JSON value — and the closing brace.
fn doc_tail(
    study: &Study,
    paired: Option<sim_core::study::paired::Paired>,
    breakdown: Option<serde_json::Value>,
) -> String {
    let mut frame = study.results_frame();
    frame.paired = paired;
    let doc = match breakdown {
        None => serde_json::to_string_pretty(&frame),
        Some(b) => {
            let mut v = serde_json::to_value(&frame).expect("JSON");
            v["breakdown"] = b;
            serde_json::to_string_pretty(&v)
        }
    }
    .expect("JSON");
    split_at_runs(&doc).1.to_string()
}

/// The pretty-printed results document written a run at a time: the bytes of
/// `serde_json::to_string_pretty` of the whole document, without holding the runs. The
/// frame (every field before `runs`) is written first; each run is pretty-printed alone and
/// indented by the two levels of the `runs` array; [`doc_tail`] closes it.
struct JsonDoc<W: std::io::Write> {
    w: W,
    first: bool,
}

impl<W: std::io::Write> JsonDoc<W> {
    /// Writes the document up to the `runs` array's `[`.
    fn start(mut w: W, study: &Study) -> std::io::Result<JsonDoc<W>> {
        let frame = serde_json::to_string_pretty(&study.results_frame()).expect("JSON");
        w.write_all(split_at_runs(&frame).0.as_bytes())?;
        Ok(JsonDoc { w, first: true })
    }

    fn run(&mut self, job: &Job, result: &RunResult) -> std::io::Result<()> {
        let entry = serde_json::to_string_pretty(&Study::run_entry(job, result)).expect("JSON");
        let mut out = String::with_capacity(entry.len() + entry.len() / 8 + 8);
        out.push_str(if self.first { "\n" } else { ",\n" });
        self.first = false;
        // Strings never hold a raw newline in JSON: every line break is the printer's.
        for (i, line) in entry.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
        self.w.write_all(out.as_bytes())
    }

    /// Closes the `runs` array (a study has at least one run, so it is never empty) and
    /// writes `tail` ([`doc_tail`]), plus a newline if `newline`.
    fn finish(mut self, tail: &str, newline: bool) -> std::io::Result<W> {
        self.w.write_all(b"\n  ]")?;
        self.w.write_all(tail.as_bytes())?;
        if newline {
            self.w.write_all(b"\n")?;
        }
        self.w.flush()?;
        Ok(self.w)
    }
}

/// `quicsim run --out DIR`, written as the runs finish: result.json (the results
/// document), summary.csv (a row per run and flow) and, with series on, one time-series CSV
/// per run.
///
/// Each file is written to a temporary file beside it and renamed when complete
/// ([`files::AtomicFile`]): a run that fails half-way leaves no half-written result.
struct OutFiles {
    dir: PathBuf,
    result: JsonDoc<AtomicFile>,
    csv: AtomicFile,
    /// The scenario name made a safe file-name stem, for the series files.
    stem: String,
}

impl OutFiles {
    fn create(dir: &Path, study: &Study) -> Result<OutFiles, (u8, String)> {
        let io = |e: std::io::Error| (EXIT_IO, format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let file = |name: &str| AtomicFile::create(&dir.join(name)).map_err(io);
        let result = JsonDoc::start(file("result.json")?, study).map_err(io)?;
        let mut csv = file("summary.csv")?;
        csv.write_all(
            b"point,seed,status,end_time_s,events,digest,flow,packets_sent,packets_delivered,drops,loss_ratio\n",
        )
        .map_err(io)?;
        Ok(OutFiles {
            dir: dir.to_path_buf(),
            result,
            csv,
            stem: sim_core::qlog::safe_file_stem(&study.scenario().base.name),
        })
    }

    fn run(&mut self, j: &Job, r: &RunResult) -> Result<(), (u8, String)> {
        let io = |e: std::io::Error| (EXIT_IO, format!("{}: {e}", self.dir.display()));
        self.result.run(j, r).map_err(io)?;
        for f in &r.flows {
            writeln!(
                self.csv,
                "{},{},{},{},{},{},{},{},{},{},{}",
                j.point,
                r.seed,
                r.status.as_str(),
                r.end_time_secs,
                r.events,
                r.digest,
                f.flow,
                f.packets_sent,
                f.packets_delivered,
                f.drops.total(),
                f.loss_ratio
            )
            .map_err(io)?;
        }
        if let Some(series) = &r.series {
            let mut t = series.columns.join(",");
            t.push('\n');
            for row in &series.rows {
                let cells: Vec<String> = row.iter().map(|x| x.to_string()).collect();
                t.push_str(&cells.join(","));
                t.push('\n');
            }
            let name = format!("series-{}-p{}-seed{}.csv", self.stem, j.point, r.seed);
            files::write_atomic(&self.dir.join(name), t.as_bytes())?;
        }
        Ok(())
    }

    /// Closes result.json with `tail` (no newline after the document, as before) and
    /// puts both files in place.
    fn finish(self, tail: &str) -> Result<(), (u8, String)> {
        let OutFiles {
            dir, result, csv, ..
        } = self;
        let io = |e: std::io::Error| (EXIT_IO, format!("{}: {e}", dir.display()));
        result
            .finish(tail, false)
            .map_err(io)?
            .commit()
            .map_err(io)?;
        csv.commit().map_err(io)
    }
}

/// The paired table of a paired comparison: per grid point and compared metric, each run's
/// value per variant and its differences to the baseline, then per variant the mean
/// difference and its Student-t 95 % confidence interval.
fn paired_table(p: &sim_core::study::paired::Paired) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let others = &p.variants[1..];
    let _ = writeln!(out,
        "paired comparison — baseline {}; differences = variant - {} per run (same seed), mean and Student-t 95 % CI over the runs",
        p.baseline, p.baseline
    );
    let cell = |x: Option<f64>| x.map(|x| format!("{x:.6}")).unwrap_or_else(|| "-".into());
    for pt in &p.points {
        if !pt.params.is_empty() {
            let ps: Vec<String> = pt
                .params
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            let _ = writeln!(out, "grid point {}: {}", pt.grid_point, ps.join(", "));
        }
        if pt.metrics.is_empty() {
            let _ = writeln!(
                out,
                "  (no compared metric: no foreground flow reported a completion time)"
            );
        }
        for m in &pt.metrics {
            let _ = writeln!(out, "  {}", m.metric);
            let mut head = format!("    {:<20}", "seed");
            for v in &p.variants {
                head.push_str(&format!(" {v:>14}"));
            }
            for v in others {
                head.push_str(&format!(" {:>14}", format!("{v}-{}", p.baseline)));
            }
            let _ = writeln!(out, "{head}");
            for r in &m.runs {
                let mut line = format!("    {:<20}", r.seed);
                for x in r.values.iter().chain(&r.differences) {
                    line.push_str(&format!(" {:>14}", cell(*x)));
                }
                let _ = writeln!(out, "{line}");
            }
            for d in &m.differences {
                match &d.summary {
                    None => {
                        let _ = writeln!(
                            out,
                            "    {} - {}: no run with both values",
                            d.variant, p.baseline
                        );
                    }
                    Some(s) => {
                        let ci = s
                            .ci95
                            .map(|(lo, hi)| format!("95 % CI [{lo:.6}, {hi:.6}]"))
                            .unwrap_or_else(|| "no CI with one run".into());
                        let _ = writeln!(
                            out,
                            "    {} - {}: mean {:.6}, {ci} (n = {})",
                            d.variant, p.baseline, s.mean, s.n
                        );
                    }
                }
            }
        }
    }
    out
}

/// One run streaming qlog traces into `dir` (one buffered file per connection and vantage
/// point; written as the run goes, never held in memory).
fn run_with_qlog(
    cfg: &sim_core::Config,
    j: &Job,
    dir: &Path,
    fmt: QlogFormat,
) -> Result<RunResult, (u8, String)> {
    let title = format!("{} point {} seed {}", cfg.name, j.point, j.seed);
    let path = |key: &TraceKey| dir.join(qlog::file_name(&cfg.name, j.seed, j.point, key));
    // Each trace goes to a temporary file, renamed when the run is done: a run that fails
    // leaves no partial trace.
    let open = |key: &TraceKey| {
        let path = path(key);
        AtomicFile::create(&path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    };
    let mut writer = QlogWriter::new(fmt, title, Box::new(open));
    let result = sim_core::runner::run_traced(cfg, j.seed, &mut writer)
        .map_err(|e| (EXIT_BAD_INPUT, e.to_string()))?;
    let io = |e: std::io::Error| (1, format!("qlog: {e}"));
    for (key, w) in writer.into_outputs().map_err(io)? {
        w.commit()
            .map_err(|e| (1, format!("qlog: {}: {e}", path(&key).display())))?;
    }
    Ok(result)
}

fn print_header(w: &mut String, study: &Study) {
    let s = study.scenario();
    let _ = writeln!(
        w,
        "scenario {} — {} point(s) x {} run(s)",
        s.base.name,
        s.points.len(),
        s.base.runs
    );
}

/// One run's lines of the text summary, preceded by its point's line when it is the first
/// run of a swept point (`last_point`: the point of the previous run printed).
fn print_run(w: &mut String, study: &Study, j: &Job, r: &RunResult, last_point: &mut usize) {
    let s = study.scenario();
    {
        if j.point != *last_point {
            *last_point = j.point;
            let p = &s.points[j.point];
            if !p.params.is_empty() {
                let ps: Vec<String> = p.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                let _ = writeln!(w, "point {}: {}", j.point, ps.join(", "));
            }
        }
        let _ = writeln!(
            w,
            "  seed {:<20} {:<12} end {:>10.6} s  events {:>10}  digest {}",
            r.seed,
            r.status.as_str(),
            r.end_time_secs,
            r.events,
            r.digest
        );
        for f in &r.flows {
            let _ = write!(
                w,
                "    flow {}: sent {} delivered {} dropped {} (loss {:.4} %)",
                f.flow,
                f.packets_sent,
                f.packets_delivered,
                f.drops.total(),
                f.loss_ratio * 100.0
            );
            let reasons: Vec<String> = f
                .drops
                .nonzero()
                .into_iter()
                .map(|(r, n)| format!("{r} {n}"))
                .collect();
            if !reasons.is_empty() {
                let _ = write!(w, " [{}]", reasons.join(", "));
            }
            if f.in_network > 0 {
                let _ = write!(w, " in network {}", f.in_network);
            }
            for e in &f.endpoints {
                if let (Some(t), Some(wl)) = (e.transport(), e.workload()) {
                    print_transport(w, e.kind(), t, wl);
                }
                print_protocol_extras(w, e);
                if let EndpointMetrics::CbrSink {
                    goodput_bps: Some(g),
                    delay_mean_secs: Some(d),
                    ..
                } = e
                {
                    let _ = write!(
                        w,
                        "  goodput {:.3} Mbit/s  mean delay {:.3} ms",
                        g / 1e6,
                        d * 1e3
                    );
                }
            }
            let _ = writeln!(w);
        }
        for l in &r.links {
            if l.drops.total() == 0 && l.loss_judged == 0 {
                continue;
            }
            let mut line = format!(
                "    link {}: in {} out {}",
                l.name, l.packets_in, l.packets_out
            );
            if l.loss_judged > 0 && l.drops.random_loss() > 0 {
                line.push_str(&format!(
                    ", random loss {:.4} % of {} judged, mean burst {:.3}",
                    100.0 * l.loss_rate,
                    l.loss_judged,
                    l.mean_loss_burst
                ));
                if let Some(m) = l.model_loss_rate {
                    line.push_str(&format!(" (model {:.4} %)", 100.0 * m));
                }
            }
            for (reason, n) in l.drops.nonzero() {
                line.push_str(&format!(", {reason} {n}"));
            }
            let _ = writeln!(w, "{line}");
        }
    }
}

/// One line of TCP- or SCTP-only metrics (nothing for the other endpoints).
fn print_protocol_extras(w: &mut String, e: &EndpointMetrics) {
    match e {
        EndpointMetrics::Tcp(m) => {
            let x = &m.tcp;
            let _ = write!(w,
                "\n        tcp: tls {} established {} fast recoveries {} max RTO backoff {} SYN retransmissions {}; sent header bytes {} pure ACKs {} (delayed-ACK timeouts {}) SACK blocks {}; RACK losses {} lost retransmissions {} TLPs {} (recoveries {}) spurious RTOs {} D-SACKs received {}",
                x.tls,
                x.tcp_established_secs
                    .map_or("-".to_string(), |v| format!("{v:.6} s")),
                x.fast_recoveries,
                x.max_rto_backoff,
                x.syn_retransmissions,
                x.header_bytes_sent,
                x.pure_acks_sent,
                x.delayed_ack_timeouts,
                x.sack_blocks_sent,
                x.rack_losses,
                x.lost_retransmissions,
                x.tlp_probes,
                x.tlp_recoveries,
                x.spurious_rtos,
                x.dsacks_received
            );
        }
        EndpointMetrics::Sctp(m) => {
            let x = &m.sctp;
            let _ = write!(w,
                "\n        sctp: DATA chunks sent {} retransmitted {} fast retransmits {} SACKs sent {} (gap blocks {}) duplicate TSNs {} handshake retransmissions {} RTO at end {:.3} s",
                x.data_chunks_sent,
                x.chunks_retransmitted,
                x.fast_retransmits,
                x.sacks_sent,
                x.gap_blocks_sent,
                x.duplicate_tsns,
                x.handshake_retransmits,
                x.rto_end_secs
            );
        }
        _ => {}
    }
}

/// The shared transport metrics of one endpoint (`kind`: its protocol) and its workload's
/// connection reports and history samples.
fn print_transport(
    w: &mut String,
    kind: &str,
    t: &sim_core::metrics::TransportMetrics,
    wl: &sim_core::metrics::WorkloadMetrics,
) {
    let secs = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.6} s"));
    let _ = write!(
        w,
        "\n      {kind} {}: handshake {} completion {} first byte {}",
        t.role,
        secs(t.handshake_secs),
        secs(t.completion_secs),
        secs(t.time_to_first_byte_secs)
    );
    if let Some(g) = t.goodput_bps {
        let _ = write!(w, " goodput {:.3} Mbit/s", g / 1e6);
    }
    let _ = write!(w,
        "\n        packets sent {} lost {} ({:.3} %) retransmitted {} spurious {} PTOs {} congestion events {}; blocked: cwnd {:.3} s, flow control {:.3} s; srtt {:.3} ms, cwnd at end {} B",
        t.packets_sent,
        t.packets_lost,
        100.0 * t.loss_ratio,
        t.packets_retransmitted,
        t.spurious_losses,
        t.pto_count,
        t.congestion_events,
        t.cwnd_blocked_secs,
        t.flow_control_blocked_secs,
        t.srtt_end_secs * 1e3,
        t.cwnd_end
    );
    // quic_connections: one line per connection (times relative to its start).
    for c in &wl.connections {
        let m = c.metrics.transport();
        let zero_rtt = match c.zero_rtt_accepted {
            Some(true) => "0-RTT accepted",
            Some(false) => "0-RTT rejected",
            None => "no 0-RTT",
        };
        let _ = write!(w,
            "\n        conn {} [{}] {:?} start {} close {} ({}): {}{}, {}; handshake {} first byte {} completion {}; packets sent {} lost {}, cwnd at end {} B",
            c.index,
            c.local,
            c.status,
            secs(c.start_secs),
            secs(c.close_secs),
            c.close_reason.as_deref().unwrap_or("open"),
            if c.resumed { "resumed" } else { "full handshake" },
            if c.token { ", token" } else { "" },
            zero_rtt,
            secs(m.handshake_secs),
            secs(m.time_to_first_byte_secs),
            secs(m.completion_secs),
            m.packets_sent,
            m.packets_lost,
            m.cwnd_end
        );
    }
    for h in &wl.history {
        let _ = write!(
            w,
            "\n        history {:?} conn {} at {:.6} s: cwnd {} B, srtt {:.3} ms",
            h.event,
            h.connection,
            h.time_secs,
            h.cwnd,
            h.srtt_secs * 1e3
        );
    }
    if let Some(iw) = &wl.initial_window {
        for g in &iw.connections {
            let _ = write!(w,
                "\n        initial window ({}) conn {} at {:.6} s from {}{}: default {} B, average {}, got {} B",
                iw.policy,
                g.connection,
                g.time_secs,
                g.client,
                if g.resumed { " (resumed)" } else { "" },
                g.default_cwnd,
                g.average.map_or("-".to_string(), |a| format!("{a} B")),
                g.initial_cwnd
            );
        }
        for e in &iw.store {
            let _ = write!(
                w,
                "\n        history store {}: {} samples, average {} B",
                e.client, e.samples, e.average
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use sim_core::study::paired::{compare, PairedLayout};
    use sim_core::study::RunRecord;

    #[test]
    fn paired_table_lists_runs_differences_and_intervals() {
        let layout = PairedLayout {
            variants: vec!["tcp".into(), "quic".into()],
            flows: vec![0],
        };
        let params = vec![
            vec![("transports".to_string(), "tcp".to_string())],
            vec![("transports".to_string(), "quic".to_string())],
        ];
        let m = "flow0.ep0.completion_secs";
        let rec = |point: usize, run: u32, x: f64| RunRecord {
            job: String::new(),
            point,
            run,
            seed: 7 + run as u64,
            status: sim_core::RunStatus::Completed,
            digest: String::new(),
            metrics: vec![(m.to_string(), x)],
        };
        let records = [
            rec(0, 0, 2.0),
            rec(0, 1, 3.0),
            rec(1, 0, 1.5),
            rec(1, 1, 2.0),
        ];
        let t = super::paired_table(&compare(&layout, &params, &records, true));
        assert!(t.contains("baseline tcp"), "{t}");
        assert!(t.contains(m), "{t}");
        assert!(t.contains("quic-tcp"), "{t}");
        // Seed 8: tcp 3, quic 2, difference -1.
        assert!(
            t.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["8", "3.000000", "2.000000", "-1.000000"]),
            "{t}"
        );
        // Mean of -0.5 and -1 with its interval.
        assert!(t.contains("quic - tcp: mean -0.750000, 95 % CI ["), "{t}");
        assert!(t.contains("(n = 2)"), "{t}");
    }
}
