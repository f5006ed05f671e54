//! `quicsim sweep` and `quicsim merge`: a study's jobs run across all cores, each finished
//! run appended to `runs.jsonl` as it completes (so a killed sweep resumes and loses
//! nothing), shards of a study for cluster schedulers, and per-point summaries.
//!
//! A sweep directory holds:
//! - `sweep.json`: the study it belongs to (scenario name, fingerprint, number of jobs,
//!   points and their parameters, the shard if any) and whether it is complete;
//! - `runs.jsonl`: one [`RunRecord`] per finished job; appended in completion order while
//!   the sweep runs, rewritten in job order when it completes;
//! - `summary.json`, `summary.csv` (unsharded or merged sweeps): per point and metric the
//!   number of runs, mean, standard deviation, Student-t 95 % CI, median, p10, p90, min, max.
//!
//! Jobs run in a pool longest expected cost first ([`run_prepared`]), which `quicsim
//! reproduce` shares among all its sweeps.
//!
//! Every byte of a complete directory depends only on the scenario and the overrides:
//! not on `--jobs`, on the order runs finished, on interruptions and resumes, or on
//! whether it was run in shards and merged.

use crate::files::{write_atomic, AtomicFile};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use sim_core::study::paired::{self, Paired, PairedLayout};
use sim_core::study::{self, JobId, PointSummary, RunRecord, Study};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Failure: exit code and message.
pub type Failure = (u8, String);

const EXIT_BAD_INPUT: u8 = 2;
const EXIT_IO: u8 = 1;

/// Which slice of a study's jobs a process runs: `--shard K/N`, 0-based `K < N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based shard index.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` (0 <= K < N, N >= 1), as Slurm's `$SLURM_ARRAY_TASK_ID/...` or
    /// Kubernetes' `$JOB_COMPLETION_INDEX/...` give it.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad =
            || format!("--shard: `{s}` is not K/N with 0 <= K < N (e.g. 0/4 is the first of four)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// `sweep.json`: what a sweep directory belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct SweepInfo {
    /// Always `"quicsim-sweep"`.
    format: String,
    quicsim_version: String,
    scenario: String,
    /// [`Study::fingerprint`].
    fingerprint: String,
    /// Jobs of the whole study.
    jobs: usize,
    runs_per_point: u32,
    /// Sweep parameters of every point.
    points: Vec<Vec<(String, String)>>,
    /// `None` for a whole study (also after a merge).
    shard: Option<Shard>,
    /// Jobs this directory holds when complete.
    shard_jobs: usize,
    complete: bool,
    /// A paired comparison's variants and compared flows (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paired: Option<PairedLayout>,
}

const FORMAT: &str = "quicsim-sweep";

/// Options of `quicsim sweep`.
pub struct SweepArgs {
    pub out: PathBuf,
    pub jobs: Option<usize>,
    pub resume: bool,
    pub shard: Option<Shard>,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| (EXIT_IO, format!("{}: {e}", path.display()))
}

fn read_info(dir: &Path) -> Result<Option<SweepInfo>, Failure> {
    let p = dir.join("sweep.json");
    match std::fs::read_to_string(&p) {
        Ok(t) => serde_json::from_str(&t).map(Some).map_err(|e| {
            (
                EXIT_BAD_INPUT,
                format!("{}: not a sweep file: {e}", p.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&p)(e)),
    }
}

/// The fingerprint of the study whose sweep `dir` holds, if it holds one.
pub fn fingerprint_of_dir(dir: &Path) -> Option<String> {
    read_info(dir).ok().flatten().map(|i| i.fingerprint)
}

fn write_info(dir: &Path, info: &SweepInfo) -> Result<(), Failure> {
    let mut t = serde_json::to_string_pretty(info).expect("JSON");
    t.push('\n');
    write_atomic(&dir.join("sweep.json"), t.as_bytes())
}

/// What to do with a last line of `runs.jsonl` cut short (the process was killed while
/// writing it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CutLine {
    /// The directory being written (a resumed sweep): drop the line (truncate the file to
    /// the records before it), so that its job runs again.
    Truncate,
    /// An input that is only read (merge's shards): refuse it, changing nothing.
    Refuse,
}

/// Reads `runs.jsonl`: every complete record. A last line cut short is handled as `cut`
/// says; any other unreadable line is an error naming it.
fn read_records(path: &Path, cut: CutLine) -> Result<Vec<RunRecord>, Failure> {
    let mut records = Vec::new();
    scan_records(path, cut, |r, _, _, _| {
        records.push(r);
        Ok(())
    })?;
    Ok(records)
}

/// [`read_records`] a record at a time: calls `each(record, line number, offset, length)`
/// with the 1-based line number, byte offset and length (newline included) of its line,
/// holding no record; an error from `each` stops the scan.
fn scan_records(
    path: &Path,
    cut: CutLine,
    mut each: impl FnMut(RunRecord, usize, u64, usize) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path)(e)),
    };
    let mut reader = BufReader::new(f);
    let mut good_len: u64 = 0;
    let mut line = String::new();
    let mut line_no = 0;
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let complete = line.ends_with('\n');
        match serde_json::from_str::<RunRecord>(line.trim_end()) {
            Ok(r) if complete => {
                each(r, line_no, good_len, n)?;
                good_len += n as u64;
            }
            _ => {
                // Only the last line may be cut short.
                let mut rest = String::new();
                reader.read_line(&mut rest).map_err(io_err(path))?;
                if !rest.is_empty() {
                    return Err((
                        EXIT_BAD_INPUT,
                        format!(
                            "{}: line {line_no} is not a run record (the file is damaged; \
                             remove that line to re-run its job)",
                            path.display()
                        ),
                    ));
                }
                if cut == CutLine::Refuse {
                    return Err((
                        EXIT_BAD_INPUT,
                        format!(
                            "{}: last line {line_no} is cut short (an interrupted write): the shard is unfinished or damaged; resume it with `quicsim sweep ... --resume` (merge reads its inputs only)",
                            path.display()
                        ),
                    ));
                }
                eprintln!(
                    "{}: last line {line_no} was cut short (interrupted write); its job runs again",
                    path.display()
                );
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io_err(path))?;
                f.set_len(good_len).map_err(io_err(path))?;
                break;
            }
        }
    }
    Ok(())
}

/// Checks that a record read from line `line` of `path` is of a job of a sweep with
/// `points` points of `runs` runs each: a damaged or edited record is an error naming
/// its line, never an index out of bounds.
fn check_record_range(
    r: &RunRecord,
    path: &Path,
    line: usize,
    points: usize,
    runs: u32,
) -> Result<(), Failure> {
    if r.point >= points || r.run >= runs {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "{}: line {line}: point {} run {} is not a job of this sweep ({points} point(s) x {runs} run(s)): the file is damaged or was edited",
                path.display(),
                r.point,
                r.run
            ),
        ));
    }
    Ok(())
}

fn record_line(r: &RunRecord) -> String {
    let mut s = serde_json::to_string(r).expect("JSON");
    s.push('\n');
    s
}

/// Progress on stderr: an indicatif bar on a terminal, a plain line every 10 s otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    unfinished: u64,
    start: Instant,
    last_line: Instant,
    name: String,
}

impl Progress {
    fn new(name: &str, total: u64, done: u64, unfinished: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {pos}/{len} runs, {msg} elapsed {elapsed} ETA {eta}",
                )
                .expect("template")
                .progress_chars("=> "),
            );
            b.set_prefix(name.to_string());
            b.set_position(done);
            b.set_message(format!("{unfinished} unfinished,"));
            b
        });
        Progress {
            bar,
            total,
            done,
            unfinished,
            start: Instant::now(),
            last_line: Instant::now(),
            name: name.to_string(),
        }
    }

    fn tick(&mut self, finished_ok: bool) {
        self.done += 1;
        if !finished_ok {
            self.unfinished += 1;
        }
        match &self.bar {
            Some(b) => {
                b.set_position(self.done);
                b.set_message(format!("{} unfinished,", self.unfinished));
            }
            None => {
                if self.last_line.elapsed() >= Duration::from_secs(10) || self.done == self.total {
                    self.last_line = Instant::now();
                    self.line();
                }
            }
        }
    }

    fn line(&self) {
        let el = self.start.elapsed().as_secs_f64();
        eprintln!(
            "{}: {}/{} runs ({:.0} %), {} unfinished, elapsed {:.1} s",
            self.name,
            self.done,
            self.total,
            100.0 * self.done as f64 / self.total.max(1) as f64,
            self.unfinished,
            el
        );
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish();
        }
    }

    /// Runs `f` (which may write to stderr) with the bar hidden.
    fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

/// Most jobs (sweep points x runs) one sweep holds: its directory keeps every job's id
/// and place in memory (about 150 B per job), so 10^6 jobs stay near 150 MB. `quicsim
/// run` streams any number of runs.
pub const MAX_SWEEP_JOBS: u64 = 1_000_000;

/// Most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

/// Worker threads per core beyond which `--jobs` is lowered (runs are CPU-bound: more
/// threads only add memory and switching).
const THREADS_PER_CORE: usize = 4;

/// Checks `--jobs` (worker threads of `sweep` and `reproduce`): 1 to [`MAX_JOBS`], else bad
/// input (exit 2); above [`THREADS_PER_CORE`] threads per core it is lowered to that,
/// saying so on stderr (output bytes do not depend on it).
pub fn worker_threads(jobs: Option<usize>) -> Result<Option<usize>, Failure> {
    let Some(n) = jobs else { return Ok(None) };
    if n == 0 || n > MAX_JOBS {
        return Err((
            EXIT_BAD_INPUT,
            format!("--jobs: {n} is not allowed: expected 1 to {MAX_JOBS} worker threads"),
        ));
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let cap = cores.saturating_mul(THREADS_PER_CORE);
    if n > cap {
        eprintln!(
            "--jobs {n}: using {cap} worker threads ({THREADS_PER_CORE} per core on {cores} core(s))"
        );
        return Ok(Some(cap));
    }
    Ok(Some(n))
}

/// Checks the size of `study` as a sweep, and `shard`'s count against its jobs, before
/// anything is allocated per job.
fn check_size(study: &Study, shard: Option<Shard>) -> Result<(), Failure> {
    let points = study.scenario().points.len() as u64;
    let runs = study.runs();
    let jobs = points.saturating_mul(runs as u64);
    if jobs > MAX_SWEEP_JOBS {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "runs (or --runs): {points} point(s) x {runs} run(s) = {jobs} jobs: a sweep holds at most {MAX_SWEEP_JOBS} jobs; lower the runs, or use `quicsim run`, which streams any number"
            ),
        ));
    }
    if let Some(s) = shard {
        if s.count as u64 > jobs {
            return Err((
                EXIT_BAD_INPUT,
                format!(
                    "--shard {}/{}: {} shards for a study of {jobs} jobs: expected at most {jobs} shards (every shard runs at least one job)",
                    s.index, s.count, s.count
                ),
            ));
        }
    }
    Ok(())
}

/// `quicsim sweep FILE --out DIR [--jobs N] [--resume] [--shard K/N]`.
pub fn sweep(study: Study, args: SweepArgs) -> Result<(), Failure> {
    match prepare(study, &args)? {
        Some(p) => run_prepared(vec![p], args.jobs),
        None => Ok(()),
    }
}

/// A sweep directory ready to run: locked, its `sweep.json` written (not complete), its
/// finished runs read back, the jobs it still needs listed. [`run_prepared`] runs them.
pub struct Prepared {
    study: Study,
    dir: PathBuf,
    info: SweepInfo,
    /// Indices into [`Study::jobs`] still to run, in job order.
    todo: Vec<usize>,
    /// Runs already in `runs.jsonl`, and how many of them did not complete.
    done: u64,
    unfinished_before: u64,
    /// `runs.jsonl`, opened for appending.
    file: File,
    _lock: crate::files::DirLock,
}

/// Everything [`sweep`] does before running jobs: checks the study's size, locks `args.out`,
/// checks what it holds (another study, a shard, an unfinished sweep without `resume`: bad
/// input), writes `sweep.json` and reads the finished runs. `None` when the directory
/// already holds this sweep complete (nothing to do).
pub fn prepare(study: Study, args: &SweepArgs) -> Result<Option<Prepared>, Failure> {
    check_size(&study, args.shard)?;
    let dir = &args.out;
    let fingerprint = study.fingerprint();
    let name = study.scenario().base.name.clone();
    let mine: Vec<usize> = match args.shard {
        Some(s) => study.shard(s.index, s.count),
        None => (0..study.jobs().len()).collect(),
    };
    let info = SweepInfo {
        format: FORMAT.into(),
        quicsim_version: env!("CARGO_PKG_VERSION").into(),
        scenario: name.clone(),
        fingerprint: fingerprint.clone(),
        jobs: study.jobs().len(),
        runs_per_point: study.runs(),
        points: study.point_params(),
        shard: args.shard,
        shard_jobs: mine.len(),
        complete: false,
        paired: study.paired_layout(),
    };
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    // One writer per directory: a second sweep (or merge) into it exits at once.
    let lock = crate::files::DirLock::acquire(dir)?;
    match read_info(dir)? {
        None => {}
        Some(old) => {
            if old.fingerprint != fingerprint || old.shard != args.shard {
                return Err((
                    EXIT_BAD_INPUT,
                    format!(
                        "{}: holds a sweep of another study (scenario `{}`, fingerprint {}, shard {}); \
                         this one is `{name}`, fingerprint {fingerprint}, shard {}: choose another --out",
                        dir.display(),
                        old.scenario,
                        old.fingerprint,
                        shard_text(old.shard),
                        shard_text(args.shard)
                    ),
                ));
            }
            if old.complete {
                eprintln!(
                    "{}: sweep `{name}` is already complete ({} runs); nothing to do",
                    dir.display(),
                    old.shard_jobs
                );
                return Ok(None);
            }
            if !args.resume {
                return Err((
                    EXIT_BAD_INPUT,
                    format!(
                        "{}: holds an unfinished sweep of this study: add --resume to continue it",
                        dir.display()
                    ),
                ));
            }
        }
    }
    write_info(dir, &info)?;
    let runs_path = dir.join("runs.jsonl");
    let done = read_records(&runs_path, CutLine::Truncate)?;
    // Map job id -> index among this directory's jobs.
    let mut wanted: std::collections::BTreeMap<String, usize> = mine
        .iter()
        .map(|&i| (study.jobs()[i].id.to_string(), i))
        .collect();
    for (line, r) in done.iter().enumerate() {
        let Some(i) = wanted.remove(&r.job) else {
            return Err((
                EXIT_BAD_INPUT,
                format!(
                    "{}: job {} is not a job of this sweep, or appears twice",
                    runs_path.display(),
                    r.job
                ),
            ));
        };
        // The job's place in the study, as the record states it.
        let job = &study.jobs()[i];
        if (r.point, r.run) != (job.point, job.run) {
            return Err((
                EXIT_BAD_INPUT,
                format!(
                    "{}: line {}: job {} is point {} run {} of this sweep, the record says point {} run {}: the file is damaged or was edited",
                    runs_path.display(),
                    line + 1,
                    r.job,
                    job.point,
                    job.run,
                    r.point,
                    r.run
                ),
            ));
        }
    }
    let mut todo: Vec<usize> = wanted.into_values().collect();
    todo.sort_unstable();
    let unfinished_before = done
        .iter()
        .filter(|r| r.status != sim_core::metrics::RunStatus::Completed)
        .count() as u64;
    if !done.is_empty() {
        eprintln!(
            "{}: resuming: {} of {} runs already done",
            dir.display(),
            done.len(),
            mine.len()
        );
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&runs_path)
        .map_err(io_err(&runs_path))?;
    Ok(Some(Prepared {
        study,
        dir: dir.clone(),
        info,
        todo,
        done: done.len() as u64,
        unfinished_before,
        file,
        _lock: lock,
    }))
}

/// The environment variable naming a file to which [`run_prepared`] appends one line per
/// job it runs: sweep directory, job id, point, run, estimated cost
/// ([`Study::point_cost`]) and the CPU time of the job's thread in seconds, tab-separated.
/// For the scheduling model in `docs/performance.md` (`scripts/pool-model`); never part
/// of a sweep's files, whose bytes do not depend on it.
pub const JOB_TIMES_ENV: &str = "QUICSIM_JOB_TIMES";

/// CPU time of the calling thread, in seconds (`CLOCK_THREAD_CPUTIME_ID`, POSIX
/// `clock_gettime`); `None` where it is not available.
fn thread_cpu_secs() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec we own.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        (rc == 0).then_some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// One finished job, sent from a worker to the writer: its sweep, the record (or the
/// failure) and the thread CPU time it took when timing is on.
type Finished = (usize, usize, Result<RunRecord, Failure>, Option<f64>);

/// Runs the jobs still to do of every sweep in `sweeps` in one pool of `jobs` worker
/// threads (default: one per core), longest first: all jobs are ordered by decreasing
/// [`Study::point_cost`] (the estimate `--shard` balances; ties in sweep order, then job
/// order) and each worker takes the next job of that list when it is free, the
/// longest-processing-time rule of list scheduling (Graham 1969, "Bounds on
/// multiprocessing timing anomalies", SIAM J. Appl. Math. 17(2)). So no core idles at the
/// end of one sweep while another has jobs left. Each record is appended to its sweep's
/// `runs.jsonl` as it arrives, and a sweep is finished ([`finalize`]: rewritten in job
/// order, summarised, marked complete, unlocked) as soon as its last job is in: an
/// interruption leaves the finished sweeps complete and the others resumable. The bytes
/// of every directory are those of [`sweep`] run on it alone.
///
/// The first failure stops the workers taking new jobs and is returned; the records
/// written before it stay (the sweeps resume).
pub fn run_prepared(sweeps: Vec<Prepared>, jobs: Option<usize>) -> Result<(), Failure> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    // The studies, read by the workers, apart from what the writer changes and drops.
    let mut studies = Vec::new();
    let mut open: Vec<Option<Open>> = Vec::new();
    for p in sweeps {
        if p.todo.is_empty() {
            // Every record in (killed before finishing): finished now.
            drop(p.file);
            finalize(&p.dir, p.info)?;
            continue;
        }
        studies.push(p.study);
        open.push(Some(Open {
            dir: p.dir,
            info: p.info,
            todo: p.todo,
            done: p.done,
            unfinished_before: p.unfinished_before,
            file: p.file,
            _lock: p._lock,
        }));
    }
    if open.is_empty() {
        return Ok(());
    }
    let live = || open.iter().flatten();
    let name = match open.len() {
        1 => live().map(|o| o.info.scenario.clone()).collect(),
        n => format!("{n} sweeps"),
    };
    let total: u64 = live().map(|o| o.info.shard_jobs as u64).sum();
    let done: u64 = live().map(|o| o.done).sum();
    let unfinished: u64 = live().map(|o| o.unfinished_before).sum();
    let mut progress = Progress::new(&name, total, done, unfinished);
    // (cost, sweep, job), longest first; the stable sort keeps sweep and job order on ties.
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    for (s, (study, o)) in studies.iter().zip(live()).enumerate() {
        let costs: Vec<u64> = (0..study.scenario().points.len())
            .map(|pt| study.point_cost(pt))
            .collect();
        order.extend(o.todo.iter().map(|&i| (costs[study.jobs()[i].point], s, i)));
    }
    order.sort_by_key(|&(c, _, _)| std::cmp::Reverse(c));
    let mut left: Vec<usize> = live().map(|o| o.todo.len()).collect();
    let mut times = match std::env::var_os(JOB_TIMES_ENV) {
        Some(path) => {
            let path = PathBuf::from(path);
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(io_err(&path))?;
            Some((path, f))
        }
        None => None,
    };
    let timed = times.is_some();
    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(n) = jobs {
            b = b.num_threads(n);
        }
        b.build()
            .map_err(|e| (EXIT_IO, format!("cannot start worker threads: {e}")))?
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Finished>();
    let (order, next, stop, studies) = (&order, &next, &stop, &studies);
    let outcome: Result<(), Failure> = std::thread::scope(|scope| {
        scope.spawn(move || {
            pool.scope(|ps| {
                for _ in 0..pool.current_num_threads() {
                    let tx = tx.clone();
                    ps.spawn(move |_| {
                        while !stop.load(Ordering::Relaxed) {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&(_, s, i)) = order.get(k) else {
                                break;
                            };
                            let study = &studies[s];
                            let job = &study.jobs()[i];
                            let t0 = if timed { thread_cpu_secs() } else { None };
                            let r = sim_core::run(study.config(job), job.seed)
                                .map(|res| RunRecord::new(job, &res))
                                .map_err(|e| (EXIT_BAD_INPUT, e.to_string()));
                            let cpu = t0.and_then(|t0| Some(thread_cpu_secs()? - t0));
                            // The receiver only stops listening after an error.
                            if tx.send((s, i, r, cpu)).is_err() {
                                break;
                            }
                        }
                    });
                }
                drop(tx);
            })
        });
        let fail = |e: Failure| {
            stop.store(true, Ordering::Relaxed);
            e
        };
        for (s, i, r, cpu) in rx {
            let rec = r.map_err(fail)?;
            let o = open[s].as_mut().expect("a sweep with jobs left");
            let runs_path = o.dir.join("runs.jsonl");
            o.file
                .write_all(record_line(&rec).as_bytes())
                .and_then(|_| o.file.flush())
                .map_err(io_err(&runs_path))
                .map_err(fail)?;
            if let (Some((path, f)), Some(cpu)) = (&mut times, cpu) {
                let job = &studies[s].jobs()[i];
                writeln!(
                    f,
                    "{}\t{}\t{}\t{}\t{}\t{cpu:.6}",
                    o.dir.display(),
                    job.id,
                    job.point,
                    job.run,
                    studies[s].point_cost(job.point)
                )
                .map_err(io_err(path))
                .map_err(fail)?;
            }
            progress.tick(rec.status == sim_core::metrics::RunStatus::Completed);
            left[s] -= 1;
            if left[s] == 0 {
                let o = open[s].take().expect("a sweep with jobs left");
                drop(o.file);
                progress
                    .suspend(|| finalize(&o.dir, o.info))
                    .map_err(fail)?;
            }
        }
        Ok(())
    });
    progress.finish();
    outcome
}

/// A sweep of [`run_prepared`] with jobs left: what the writer needs of its [`Prepared`].
struct Open {
    dir: PathBuf,
    info: SweepInfo,
    todo: Vec<usize>,
    done: u64,
    unfinished_before: u64,
    file: File,
    _lock: crate::files::DirLock,
}

fn shard_text(s: Option<Shard>) -> String {
    s.map_or("none".into(), |s| format!("{}/{}", s.index, s.count))
}

/// Rewrites `runs.jsonl` in job order and (for a whole study) writes the summaries; marks
/// the directory complete.
fn finalize(dir: &Path, mut info: SweepInfo) -> Result<(), Failure> {
    use std::io::{Read, Seek, SeekFrom};
    let runs_path = dir.join("runs.jsonl");
    // Streamed: an index of the lines (24 bytes per record), then the records read back
    // one at a time in job order, rewritten and summarised as they come (one f64 per run
    // and metric while its point is open); a paired comparison keeps one value per run,
    // variant and compared metric (its collector), never whole records.
    let mut index: Vec<(usize, u32, u64, usize)> = Vec::new();
    let (points, runs) = (info.points.len(), info.runs_per_point);
    scan_records(&runs_path, CutLine::Truncate, |r, line, offset, len| {
        check_record_range(&r, &runs_path, line, points, runs)?;
        index.push((r.point, r.run, offset, len));
        Ok(())
    })?;
    let count = index.len();
    if count != info.shard_jobs {
        return Err((
            EXIT_IO,
            format!(
                "{}: {} records for {} jobs",
                runs_path.display(),
                count,
                info.shard_jobs
            ),
        ));
    }
    index.sort_by_key(|&(point, run, _, _)| (point, run));
    let summarise = info.shard.is_none();
    let mut acc = summarise.then(|| Summaries::new(&info.points));
    let mut pairs = match (&info.paired, summarise) {
        (Some(layout), true) => Some(paired::PairedCollector::new(
            layout.clone(),
            info.points.len(),
        )),
        _ => None,
    };
    {
        let mut src = File::open(&runs_path).map_err(io_err(&runs_path))?;
        let mut out = AtomicFile::create(&runs_path).map_err(io_err(&runs_path))?;
        let mut line = Vec::new();
        for &(_, _, offset, len) in &index {
            line.resize(len, 0);
            src.seek(SeekFrom::Start(offset))
                .and_then(|_| src.read_exact(&mut line))
                .map_err(io_err(&runs_path))?;
            let rec: RunRecord = serde_json::from_slice(line.trim_ascii_end()).map_err(|e| {
                (
                    EXIT_IO,
                    format!("{}: changed while finishing: {e}", runs_path.display()),
                )
            })?;
            out.write_all(record_line(&rec).as_bytes())
                .map_err(io_err(&runs_path))?;
            if let Some(a) = &mut acc {
                a.add(&rec);
            }
            if let Some(c) = &mut pairs {
                c.add(rec.point, rec.run, rec.seed, &rec.metrics);
            }
        }
        drop(src);
        out.commit().map_err(io_err(&runs_path))?;
    }
    drop(index);
    if let Some(a) = acc {
        let pair = pairs.map(|c| c.finish(&info.points, false));
        write_summaries(dir, &info, a.finish(), pair.as_ref())?;
    }
    info.complete = true;
    write_info(dir, &info)?;
    match info.shard {
        None => eprintln!(
            "{}: sweep `{}` complete: {} runs; summary.csv and summary.json written",
            dir.display(),
            info.scenario,
            count
        ),
        Some(s) => eprintln!(
            "{}: shard {}/{} of `{}` complete: {} runs; combine the shards with `quicsim merge`",
            dir.display(),
            s.index,
            s.count,
            info.scenario,
            count
        ),
    }
    Ok(())
}

#[derive(Serialize)]
struct SummaryDoc<'a> {
    format: &'a str,
    quicsim_version: &'a str,
    scenario: &'a str,
    fingerprint: &'a str,
    runs_per_point: u32,
    points: &'a [PointSummary],
    /// A paired comparison's differences per grid point (no per-run values).
    #[serde(skip_serializing_if = "Option::is_none")]
    paired: Option<&'a Paired>,
}

fn fmt_f(x: f64) -> String {
    format!("{x}")
}

/// Per-point summaries built a record at a time, records in job order (point-major, then
/// run): what [`study::summarize`] computes from every record, holding per point being
/// read its status counts and one f64 per run and metric (8 bytes per value).
struct Summaries<'a> {
    params: &'a [Vec<(String, String)>],
    done: Vec<PointSummary>,
    /// The point being read: index, runs, status counts, values per metric in run order.
    open: Option<OpenPoint>,
}

struct OpenPoint {
    index: usize,
    runs: usize,
    statuses: Vec<(sim_core::metrics::RunStatus, usize)>,
    values: std::collections::BTreeMap<String, Vec<f64>>,
}

impl<'a> Summaries<'a> {
    fn new(params: &'a [Vec<(String, String)>]) -> Summaries<'a> {
        Summaries {
            params,
            done: Vec::with_capacity(params.len()),
            open: None,
        }
    }

    /// Adds the next record in job order.
    fn add(&mut self, r: &RunRecord) {
        if self.open.as_ref().is_some_and(|p| p.index != r.point) {
            self.close();
        }
        // Points without a record (none in a complete sweep) summarise no run.
        while self.done.len() < r.point {
            self.done
                .push(Self::summary(self.params, empty(self.done.len())));
        }
        let p = self.open.get_or_insert_with(|| empty(r.point));
        p.runs += 1;
        match p.statuses.iter_mut().find(|(s, _)| *s == r.status) {
            Some((_, n)) => *n += 1,
            None => p.statuses.push((r.status, 1)),
        }
        for (k, v) in &r.metrics {
            match p.values.get_mut(k) {
                Some(vs) => vs.push(*v),
                None => {
                    p.values.insert(k.clone(), vec![*v]);
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(p) = self.open.take() {
            self.done.push(Self::summary(self.params, p));
        }
    }

    fn summary(params: &[Vec<(String, String)>], p: OpenPoint) -> PointSummary {
        let mut statuses = p.statuses;
        statuses.sort_by_key(|(s, _)| s.code());
        let mut metrics: Vec<(String, sim_core::stats::Summary)> = p
            .values
            .into_iter()
            .map(|(k, v)| (k, sim_core::stats::Summary::of(&v)))
            .collect();
        metrics.sort_by(|a, b| study::natural_cmp(&a.0, &b.0));
        PointSummary {
            index: p.index,
            params: params[p.index].clone(),
            runs: p.runs,
            statuses,
            metrics,
        }
    }

    fn finish(mut self) -> Vec<PointSummary> {
        self.close();
        while self.done.len() < self.params.len() {
            self.done
                .push(Self::summary(self.params, empty(self.done.len())));
        }
        self.done
    }
}

fn empty(index: usize) -> OpenPoint {
    OpenPoint {
        index,
        runs: 0,
        statuses: Vec::new(),
        values: Default::default(),
    }
}

fn write_summaries(
    dir: &Path,
    info: &SweepInfo,
    points: Vec<PointSummary>,
    pair: Option<&Paired>,
) -> Result<(), Failure> {
    let doc = SummaryDoc {
        format: "quicsim-sweep-summary",
        quicsim_version: &info.quicsim_version,
        scenario: &info.scenario,
        fingerprint: &info.fingerprint,
        runs_per_point: info.runs_per_point,
        points: &points,
        paired: pair,
    };
    let mut json = serde_json::to_string_pretty(&doc).expect("JSON");
    json.push('\n');
    write_atomic(&dir.join("summary.json"), json.as_bytes())?;
    // Long format: one row per point and metric, the sweep parameters as columns.
    let keys: Vec<String> = info
        .points
        .first()
        .map(|p| p.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut csv = String::from("point");
    for k in &keys {
        csv.push(',');
        csv.push_str(&csv_cell(k));
    }
    csv.push_str(",metric,n,mean,std_dev,ci95_low,ci95_high,median,p10,p90,min,max\n");
    for p in &points {
        let params: String = p
            .params
            .iter()
            .map(|(_, v)| format!(",{}", csv_cell(v)))
            .collect();
        for (m, s) in &p.metrics {
            let opt = |x: Option<f64>| x.map(fmt_f).unwrap_or_default();
            csv.push_str(&format!(
                "{}{params},{},{},{},{},{},{},{},{},{},{},{}\n",
                p.index,
                csv_cell(m),
                s.n,
                fmt_f(s.mean),
                opt(s.std_dev),
                opt(s.ci95.map(|c| c.0)),
                opt(s.ci95.map(|c| c.1)),
                fmt_f(s.median),
                fmt_f(s.p10),
                fmt_f(s.p90),
                fmt_f(s.min),
                fmt_f(s.max)
            ));
        }
        // A paired comparison: at each variant's point, its differences to the baseline
        // (metric `diff_vs_<baseline>.<metric>`, same columns).
        let Some(pr) = pair else { continue };
        let nv = pr.variants.len();
        let (g, v) = (p.index / nv, p.index % nv);
        if v == 0 {
            continue;
        }
        for m in &pr.points[g].metrics {
            let Some(s) = &m.differences[v - 1].summary else {
                continue;
            };
            let opt = |x: Option<f64>| x.map(fmt_f).unwrap_or_default();
            csv.push_str(&format!(
                "{}{params},{},{},{},{},{},{},{},{},{},{},{}\n",
                p.index,
                csv_cell(&format!("diff_vs_{}.{}", pr.baseline, m.metric)),
                s.n,
                fmt_f(s.mean),
                opt(s.std_dev),
                opt(s.ci95.map(|c| c.0)),
                opt(s.ci95.map(|c| c.1)),
                fmt_f(s.median),
                fmt_f(s.p10),
                fmt_f(s.p90),
                fmt_f(s.min),
                fmt_f(s.max)
            ));
        }
    }
    write_atomic(&dir.join("summary.csv"), csv.as_bytes())
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `quicsim merge DIR... --out OUT`: the shards of one sweep into the directory an
/// unsharded sweep of it writes, byte for byte.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(), Failure> {
    let bad = |msg: String| Err((EXIT_BAD_INPUT, msg));
    let mut shards: Vec<(PathBuf, SweepInfo)> = Vec::new();
    for d in dirs {
        match read_info(d)? {
            None => {
                return bad(format!(
                    "{}: not a sweep directory (no sweep.json)",
                    d.display()
                ))
            }
            Some(i) => shards.push((d.clone(), i)),
        }
    }
    let Some((first_dir, first)) = shards.first().cloned() else {
        return bad("merge: no shard directories given".into());
    };
    let Some(count) = first.shard.map(|s| s.count) else {
        return bad(format!(
            "{}: is a whole sweep, not a shard (nothing to merge)",
            first_dir.display()
        ));
    };
    // sweep.json is read back: a shard index or count a sweep cannot have written is an
    // error, not an index out of bounds or a huge allocation.
    for (d, i) in &shards {
        if let Some(s) = i.shard {
            if s.count == 0 || s.index >= s.count || s.count > i.jobs.max(1) {
                return bad(format!(
                    "{}: sweep.json names shard {}/{} of a study of {} jobs: the file is damaged or was edited",
                    d.display(),
                    s.index,
                    s.count,
                    i.jobs
                ));
            }
        }
    }
    let mut seen: Vec<Option<PathBuf>> = vec![None; count];
    for (d, i) in &shards {
        if i.fingerprint != first.fingerprint || i.scenario != first.scenario {
            return bad(format!(
                "{}: shard of another study (scenario `{}`, fingerprint {}); {} is of `{}`, fingerprint {}",
                d.display(),
                i.scenario,
                i.fingerprint,
                first_dir.display(),
                first.scenario,
                first.fingerprint
            ));
        }
        let Some(s) = i.shard else {
            return bad(format!("{}: is a whole sweep, not a shard", d.display()));
        };
        if s.count != count {
            return bad(format!(
                "{}: shard {}/{} of a split into {} shards, {} is of a split into {count}",
                d.display(),
                s.index,
                s.count,
                s.count,
                first_dir.display()
            ));
        }
        if let Some(other) = &seen[s.index] {
            return bad(format!(
                "{}: shard {}/{count} given twice (also {})",
                d.display(),
                s.index,
                other.display()
            ));
        }
        if !i.complete {
            return bad(format!(
                "{}: shard {}/{count} is not complete: resume it with `quicsim sweep ... --shard {}/{count} --resume`",
                d.display(),
                s.index,
                s.index
            ));
        }
        seen[s.index] = Some(d.clone());
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_none())
        .map(|(k, _)| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return bad(format!("merge: missing shard(s) {}", missing.join(", ")));
    }
    let mut records = Vec::new();
    for (d, i) in &shards {
        // The shards are inputs: read, never repaired.
        let path = d.join("runs.jsonl");
        let mut rs = Vec::new();
        scan_records(&path, CutLine::Refuse, |r, line, _, _| {
            check_record_range(&r, &path, line, first.points.len(), first.runs_per_point)?;
            rs.push(r);
            Ok(())
        })?;
        if rs.len() != i.shard_jobs {
            return bad(format!(
                "{}: {} run records, the shard has {} jobs",
                d.display(),
                rs.len(),
                i.shard_jobs
            ));
        }
        records.extend(rs);
    }
    records.sort_by_key(|r| (r.point, r.run));
    let ids: Result<Vec<JobId>, _> = records
        .iter()
        .map(|r| u64::from_str_radix(&r.job, 16).map(JobId))
        .collect();
    let ids = ids.map_err(|_| {
        (
            EXIT_BAD_INPUT,
            "merge: a run record has a bad job id".to_string(),
        )
    })?;
    if records.len() != first.jobs || study::fingerprint_of(&ids) != first.fingerprint {
        return bad(format!(
            "merge: the shards' {} runs are not the {} jobs of study {} (a shard was altered?)",
            records.len(),
            first.jobs,
            first.fingerprint
        ));
    }
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let _lock = crate::files::DirLock::acquire(out)?;
    if let Some(existing) = read_info(out)? {
        if existing.fingerprint != first.fingerprint || existing.shard.is_some() {
            return bad(format!(
                "{}: already holds another sweep: choose another --out",
                out.display()
            ));
        }
    }
    let text: String = records.iter().map(record_line).collect();
    write_atomic(&out.join("runs.jsonl"), text.as_bytes())?;
    let info = SweepInfo {
        shard: None,
        shard_jobs: first.jobs,
        complete: false,
        ..first
    };
    finalize(out, info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::metrics::RunStatus;

    /// The streamed summaries equal [`study::summarize`] of every record, including a
    /// point without records and metrics that only some runs have.
    #[test]
    fn streamed_summaries_equal_summarize() {
        let params: Vec<Vec<(String, String)>> = (0..4)
            .map(|i| vec![("k".to_string(), i.to_string())])
            .collect();
        let mut records = Vec::new();
        for point in [0usize, 1, 3] {
            for run in 0..9u32 {
                let x = (point * 31 + run as usize * 7) as f64 / 3.0;
                let mut metrics = vec![("a".to_string(), x), ("flow10.b".to_string(), -x)];
                if run % 3 == 0 {
                    metrics.push(("flow2.c".to_string(), x * x));
                }
                records.push(RunRecord {
                    job: format!("{point}-{run}"),
                    point,
                    run,
                    seed: run as u64,
                    status: if run % 4 == 1 {
                        RunStatus::TimeLimit
                    } else {
                        RunStatus::Completed
                    },
                    digest: String::new(),
                    metrics,
                });
            }
        }
        let want = study::summarize(&params, &records);
        let mut acc = Summaries::new(&params);
        for r in &records {
            acc.add(r);
        }
        assert_eq!(acc.finish(), want);
        assert_eq!(want[2].runs, 0);
    }
}
