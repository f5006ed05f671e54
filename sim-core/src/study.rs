//! Studies: a parsed [`Scenario`] as a list of jobs (sweep point x run), the seed rule, a
//! stable id per job, the order of results and the JSON document of a study's results.
//!
//! The command line (`quicsim run`), sweeps and the browser all use this module, so they
//! run the same jobs with the same seeds and print the same document.
//!
//! - **Jobs.** One job per sweep point and run: point-major, then run
//!   (`point 0 run 0, point 0 run 1, ..., point 1 run 0, ...`). Results are reported in this
//!   job order whatever order the jobs ran in (the CLI runs them in parallel).
//! - **Seeds.** Run `i` (0-based) of every point uses seed `base + i`, wrapping at 2^64
//!   ([`run_seed`]), where `base` is the scenario's `seed` or its override. Every point uses
//!   the same seeds: common random numbers, so points differ only by their parameters.
//!   [`Overrides`] replace the scenario's `seed` and `runs` (the CLI's `--seed` and
//!   `--runs`) and can switch series recording on; they are written into the resolved
//!   configs, as if the scenario had said so.
//! - **Job ids.** [`job_id`]: FNV-1a 64 ([`crate::hash`]) of the job's resolved point
//!   config, serialised canonically, and of its seed. See [`JobId`].
//! - **Paired comparisons.** A scenario with `transports = [...]` has one point per
//!   variant and grid point ([`Scenario::variants`]); they are ordinary points with the
//!   same seeds, and [`paired`] computes the per-run differences to the baseline.
//!
//! ```
//! use sim_core::study::{Overrides, Study};
//!
//! let scenario = sim_core::scenario::parse_str(r#"
//!     seed = 10
//!     runs = 2
//!     [topology]
//!     kind = "two_hosts"
//!     link = { rate = "10Mbps", delay = "10ms" }
//!     [[flows]]
//!     kind = "cbr"
//!     rate = "1Mbps"
//!     duration = "200ms"
//!     [sweep]
//!     "topology.link.delay" = ["10ms", "30ms"]
//! "#).unwrap();
//! let study = Study::new(scenario, &Overrides::default()).unwrap();
//! let seeds: Vec<(usize, u64)> = study.jobs().iter().map(|j| (j.point, j.seed)).collect();
//! assert_eq!(seeds, [(0, 10), (0, 11), (1, 10), (1, 11)]);
//! let results: Vec<_> = study
//!     .jobs()
//!     .iter()
//!     .map(|j| sim_core::run(study.config(j), j.seed).unwrap())
//!     .collect();
//! let json = serde_json::to_string_pretty(&study.results(&results)).unwrap();
//! assert!(json.starts_with("{\n  \"schema_version\": 1,"));
//! ```

pub mod paired;

use crate::config::Config;
use crate::hash::Fnv1a64;
use crate::metrics::{DropCounts, FlowReport, LinkReport, RunResult, RunStatus, SCHEMA_VERSION};
use crate::scenario::Scenario;
use crate::sim::Simulation;
use crate::time::SimTime;
use crate::validate::ConfigError;
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Values that replace the scenario's own when a study is made (the CLI's `--seed`,
/// `--runs` and `--series`). The default replaces nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Base seed instead of the scenario's `seed`.
    pub seed: Option<u64>,
    /// Runs per sweep point instead of the scenario's `runs` (at least 1).
    pub runs: Option<u32>,
    /// `true`: record time series (`output.series = true`) in every point.
    pub series: bool,
}

/// The stable id of a job: see [`job_id`]. Printed and serialised as 16 lowercase hex
/// digits (a string, so JavaScript reads it without rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl Serialize for JobId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One run of one sweep point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Job {
    /// Index of the sweep point in [`Scenario::points`].
    pub point: usize,
    /// Index of the run within the point (0-based).
    pub run: u32,
    /// The run's seed: [`run_seed`]`(base, run)`.
    pub seed: u64,
    /// The job's stable id: [`job_id`]`(point config, seed)`.
    pub id: JobId,
}

/// The seed of run `run` (0-based) of every point of a study with base seed `base`:
/// `base + run`, wrapping at 2^64. `quicsim run FILE --seed S --runs 1` with a printed seed
/// `S` reproduces that run.
pub const fn run_seed(base: u64, run: u32) -> u64 {
    base.wrapping_add(run as u64)
}

/// Domain tag hashed before the config, so job ids never equal other FNV-1a values of the
/// project (digests, stream keys); the version changes only with the id definition.
const JOB_ID_TAG: &[u8] = b"quicsim/job-id/v1\0";

/// The hasher state after the point config, shared by all jobs of a point.
fn point_hasher(config: &Config) -> Fnv1a64 {
    // `seed` and `runs` describe the study, not the run: the run's seed is hashed on its
    // own, and how many sibling runs a study has does not change a run.
    let mut c = config.clone();
    c.seed = 0;
    c.runs = 1;
    // Typed structs serialise their fields in declaration order (with or without
    // serde_json's `preserve_order`), maps are BTreeMaps, floats print via the shortest
    // round-trip form: the bytes are the same on every platform and in every process.
    let json = serde_json::to_vec(&c).expect("a Config serialises to JSON");
    let mut h = Fnv1a64::new();
    h.write(JOB_ID_TAG);
    h.write_u64(json.len() as u64);
    h.write(&json);
    h
}

/// The stable id of the run of `config` with `seed`.
///
/// FNV-1a 64 ([`crate::hash`]) of a fixed tag, the canonical serialisation of `config`
/// (compact serde_json of the typed [`Config`], with its study-level `seed` and `runs`
/// fields set to 0 and 1) and `seed` (8 bytes little-endian). So the id
/// - is the same for the same resolved config and seed, across runs, processes, platforms
///   and targets (native and wasm);
/// - changes when the seed or any resolved value of the config changes (a link, a flow, a
///   limit, the output settings, the name or description);
/// - does not depend on the study around the job: the config's own `seed` and `runs` are
///   left out (the run's seed is hashed instead), so run 0 of a study with 3 runs and of
///   one with 5 runs have the same id — they are the same simulation.
///
/// The id does not include the quicsim version: results stored under an id are only
/// comparable within one model version (see [`RunResult::quicsim_version`]).
pub fn job_id(config: &Config, seed: u64) -> JobId {
    let mut h = point_hasher(config);
    h.write_u64(seed);
    JobId(h.finish())
}

/// A scenario made into jobs; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Study {
    scenario: Scenario,
    /// Per point, the hasher state after its config ([`point_hasher`]): a job's id is
    /// this plus its seed, so [`Study::job`] computes any job without a list of them.
    hashers: Vec<Fnv1a64>,
    /// The list of every job, built on the first call of [`Study::jobs`] only (32 bytes
    /// per job: a study streaming huge `runs` never builds it).
    jobs: std::sync::OnceLock<Vec<Job>>,
}

impl Study {
    /// Applies `overrides` to `scenario` (its base and every point) and expands it into
    /// jobs: point-major, then run, run `i` with seed [`run_seed`]`(base, i)`.
    ///
    /// Fails only for `runs = Some(0)` (field `runs`).
    pub fn new(mut scenario: Scenario, overrides: &Overrides) -> Result<Study, ConfigError> {
        if overrides.runs == Some(0) {
            return Err(ConfigError::new("runs", "0", "an integer >= 1"));
        }
        let base_seed = overrides.seed.unwrap_or(scenario.base.seed);
        let runs = overrides.runs.unwrap_or(scenario.base.runs);
        let configs = std::iter::once(&mut scenario.base)
            .chain(scenario.points.iter_mut().map(|p| &mut p.config));
        for c in configs {
            c.seed = base_seed;
            c.runs = runs;
            if overrides.series {
                c.output.series = true;
            }
        }
        let hashers = scenario
            .points
            .iter()
            .map(|p| point_hasher(&p.config))
            .collect();
        Ok(Study {
            scenario,
            hashers,
            jobs: std::sync::OnceLock::new(),
        })
    }

    /// Job `run` (0-based, `< runs()`) of point `point` (`< scenario().points.len()`),
    /// computed without building [`Study::jobs`]: `jobs()[point * runs() + run]`.
    ///
    /// # Panics
    /// If `point` is out of range.
    pub fn job(&self, point: usize, run: u32) -> Job {
        let seed = run_seed(self.base_seed(), run);
        let mut h = self.hashers[point];
        h.write_u64(seed);
        Job {
            point,
            run,
            seed,
            id: JobId(h.finish()),
        }
    }

    /// The scenario with the overrides applied.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The jobs in job order (point-major, then run).
    ///
    /// Built on the first call (32 bytes per job); a caller streaming a huge study walks
    /// points and runs with [`Study::job`] instead.
    pub fn jobs(&self) -> &[Job] {
        self.jobs.get_or_init(|| {
            let runs = self.runs();
            let mut jobs = Vec::with_capacity(self.hashers.len() * runs as usize);
            for point in 0..self.hashers.len() {
                jobs.extend((0..runs).map(|run| self.job(point, run)));
            }
            jobs
        })
    }

    /// Runs per point.
    pub fn runs(&self) -> u32 {
        self.scenario.base.runs
    }

    /// The base seed (run 0's seed).
    pub fn base_seed(&self) -> u64 {
        self.scenario.base.seed
    }

    /// The resolved config a job runs.
    pub fn config(&self, job: &Job) -> &Config {
        &self.scenario.points[job.point].config
    }

    /// The layout of a paired comparison (`transports = [...]`): the variants and the
    /// foreground flows of the baseline; `None` if the scenario is not paired.
    pub fn paired_layout(&self) -> Option<paired::PairedLayout> {
        let s = &self.scenario;
        s.is_paired().then(|| paired::PairedLayout {
            variants: s.variants.clone(),
            flows: s
                .base
                .flows
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.background)
                .map(|(i, _)| i)
                .collect(),
        })
    }

    /// The paired differences of a paired study's `results` (in job order, as
    /// [`Study::results`]), with the per-run values; `None` if the scenario is not paired.
    ///
    /// # Panics
    /// If `results` does not have one result per job.
    pub fn paired(&self, results: &[RunResult]) -> Option<paired::Paired> {
        assert_eq!(results.len(), self.jobs().len(), "one result per job");
        let layout = self.paired_layout()?;
        let records: Vec<RunRecord> = self
            .jobs()
            .iter()
            .zip(results)
            .map(|(j, r)| RunRecord::new(j, r))
            .collect();
        Some(paired::compare(
            &layout,
            &self.point_params(),
            &records,
            true,
        ))
    }

    /// An empty [`paired::PairedCollector`] for this study (fed a run at a time, in any
    /// order; `finish(&self.point_params(), true)` gives what [`Study::paired`] returns for
    /// all runs); `None` if the scenario is not paired.
    pub fn paired_collector(&self) -> Option<paired::PairedCollector> {
        let layout = self.paired_layout()?;
        Some(paired::PairedCollector::new(
            layout,
            self.scenario.points.len(),
        ))
    }

    /// A steppable simulation of `job` ([`Simulation::new`] with its config and seed).
    pub fn simulation(&self, job: &Job) -> Result<Simulation<'static>, ConfigError> {
        Simulation::new(self.config(job), job.seed)
    }

    /// The results document of the study (what `quicsim run --json` prints), borrowing
    /// `results`, which must be in job order: `results[i]` is the result of `jobs()[i]`.
    ///
    /// # Panics
    /// If `results` does not have one result per job.
    pub fn results<'a>(&'a self, results: &'a [RunResult]) -> StudyResult<'a> {
        assert_eq!(results.len(), self.jobs().len(), "one result per job");
        let runs = self
            .jobs()
            .iter()
            .zip(results)
            .map(|(j, r)| Study::run_entry(j, r))
            .collect();
        StudyResult {
            paired: self.paired(results),
            runs,
            ..self.results_frame()
        }
    }

    /// The results document without its runs and paired differences: what
    /// [`Study::results`] returns with `runs` empty and `paired` `None`. A caller streaming
    /// a huge study writes this document's fields up to `runs`, then every
    /// [`Study::run_entry`] as its run finishes, holding no result of a finished run.
    pub fn results_frame(&self) -> StudyResult<'_> {
        let s = &self.scenario;
        // Without a sweep the single point is the base config, already printed once.
        let swept = s.points.iter().any(|p| !p.params.is_empty());
        let points = s
            .points
            .iter()
            .enumerate()
            .map(|(index, p)| StudyPoint {
                index,
                params: p
                    .params
                    .iter()
                    .map(|(key, value)| SweepParam { key, value })
                    .collect(),
                resolved_config: swept.then_some(&p.config),
            })
            .collect();
        StudyResult {
            schema_version: SCHEMA_VERSION,
            quicsim_version: env!("CARGO_PKG_VERSION"),
            scenario: &s.base.name,
            resolved_config: &s.base,
            points,
            runs: Vec::new(),
            paired: None,
        }
    }

    /// The entry of [`StudyResult::runs`] for `result`, the result of `job`.
    pub fn run_entry<'a>(job: &Job, result: &'a RunResult) -> StudyRun<'a> {
        let r = result;
        StudyRun {
            seed: r.seed,
            status: r.status,
            end_time_secs: r.end_time_secs,
            end_time: r.end_time,
            events: r.events,
            digest: &r.digest,
            drops: &r.drops,
            links: &r.links,
            flows: &r.flows,
            point: job.point,
        }
    }
}

/// The results document of a study: [`Study::results`]. Serialises (fields in this order)
/// to what `quicsim run --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct StudyResult<'a> {
    /// [`SCHEMA_VERSION`] of the run results.
    pub schema_version: u32,
    /// Version of sim-core that produced it.
    pub quicsim_version: &'static str,
    /// The scenario's name.
    pub scenario: &'a str,
    /// The base config (overrides applied), every default explicit.
    pub resolved_config: &'a Config,
    /// The sweep points in order.
    pub points: Vec<StudyPoint<'a>>,
    /// One entry per job, in job order.
    pub runs: Vec<StudyRun<'a>>,
    /// A paired comparison's differences ([`Study::paired`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<paired::Paired>,
}

/// One sweep point in a [`StudyResult`].
#[derive(Clone, Debug, Serialize)]
pub struct StudyPoint<'a> {
    /// Index of the point.
    pub index: usize,
    /// The point's sweep parameters in the order of `[sweep]` (empty without a sweep).
    pub params: Vec<SweepParam<'a>>,
    /// The point's resolved config; only in a swept study (without a sweep the one point is
    /// the base config, printed once as [`StudyResult::resolved_config`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_config: Option<&'a Config>,
}

/// One sweep parameter of a [`StudyPoint`]: the key and the value as written.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SweepParam<'a> {
    /// The sweep key, e.g. `"topology.link.delay"`.
    pub key: &'a str,
    /// The value as written, e.g. `"10ms"`.
    pub value: &'a str,
}

/// One run in a [`StudyResult`]: the [`RunResult`] without what the document holds once
/// (`schema_version`, `quicsim_version`, `resolved_config`) or elsewhere (`series`, in the
/// CLI's CSV files), plus its point.
#[derive(Clone, Debug, Serialize)]
pub struct StudyRun<'a> {
    /// [`RunResult::seed`].
    pub seed: u64,
    /// [`RunResult::status`].
    pub status: RunStatus,
    /// [`RunResult::end_time_secs`].
    pub end_time_secs: f64,
    /// [`RunResult::end_time`].
    pub end_time: SimTime,
    /// [`RunResult::events`].
    pub events: u64,
    /// [`RunResult::digest`].
    pub digest: &'a str,
    /// [`RunResult::drops`].
    pub drops: &'a DropCounts,
    /// [`RunResult::links`].
    pub links: &'a [LinkReport],
    /// [`RunResult::flows`].
    pub flows: &'a [FlowReport],
    /// Index of the run's sweep point ([`Job::point`]).
    pub point: usize,
}

/// Domain tag of [`Study::fingerprint`].
const STUDY_TAG: &[u8] = b"quicsim/study/v1\0";

impl Study {
    /// A stable fingerprint of the whole study: FNV-1a 64 of a tag, the number of jobs and
    /// every job id in job order, as 16 hex digits. Two studies with the same fingerprint
    /// run the same simulations in the same order, so their stored results (a sweep
    /// directory, a shard) can be resumed or merged; anything that changes a point's
    /// resolved config, the seeds or the number of runs changes it.
    pub fn fingerprint(&self) -> String {
        let ids: Vec<JobId> = self.jobs().iter().map(|j| j.id).collect();
        fingerprint_of(&ids)
    }

    /// The sweep parameters of every point, in point order (key and value as written).
    pub fn point_params(&self) -> Vec<Vec<(String, String)>> {
        self.scenario
            .points
            .iter()
            .map(|p| p.params.clone())
            .collect()
    }

    /// The relative cost estimate of one run of `point` ([`estimated_cost`] of its config).
    pub fn point_cost(&self, point: usize) -> u64 {
        estimated_cost(&self.scenario.points[point].config)
    }

    /// The jobs of shard `k` of `n` (0-based `k < n`), as indices into [`Study::jobs`] in
    /// job order. The shards partition the jobs, and balance the [`estimated_cost`] of
    /// their jobs rather than their number: jobs are taken by decreasing cost (ties in job
    /// order) and each goes to the shard with the least cost so far (ties: the lowest
    /// shard), the longest-processing-time rule. Deterministic: every process computes the
    /// same partition.
    ///
    /// # Panics
    /// If `n == 0` or `k >= n`.
    pub fn shard(&self, k: usize, n: usize) -> Vec<usize> {
        assert!(n > 0 && k < n, "shard {k}/{n}: need 0 <= k < n");
        let costs: Vec<u64> = (0..self.scenario.points.len())
            .map(|p| self.point_cost(p))
            .collect();
        let mut order: Vec<usize> = (0..self.jobs().len()).collect();
        // Stable sort: equal costs keep job order.
        order.sort_by_key(|&i| std::cmp::Reverse(costs[self.jobs()[i].point]));
        let mut load = vec![0u64; n];
        let mut mine = Vec::new();
        for i in order {
            let s = (0..n).min_by_key(|&s| (load[s], s)).expect("n > 0");
            load[s] += costs[self.jobs()[i].point];
            if s == k {
                mine.push(i);
            }
        }
        mine.sort_unstable();
        mine
    }
}

/// The fingerprint of a study whose jobs, in job order, have the ids `ids`: see
/// [`Study::fingerprint`]. Lets a merge check that stored results cover exactly the jobs
/// of one study.
pub fn fingerprint_of(ids: &[JobId]) -> String {
    let mut h = Fnv1a64::new();
    h.write(STUDY_TAG);
    h.write_u64(ids.len() as u64);
    for id in ids {
        h.write_u64(id.0);
    }
    format!("{:016x}", h.finish())
}

/// A rough, deterministic estimate of the relative cost (simulated packets) of one run of
/// `config`, for balancing shards: per flow, its bytes to transfer / 1000 plus its datagram
/// count (every numeric or size-string field named `bytes` or `count` in the flow's
/// configuration, so new workloads are counted without changes here), times
/// `1 + 20 × p`, `p` the largest long-run loss rate of any link (losses cost
/// retransmissions and timeouts), plus a constant per run. Only its ratios matter.
pub fn estimated_cost(config: &Config) -> u64 {
    fn walk(v: &serde_json::Value, sum: &mut f64) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if k == "bytes" || k == "count" {
                        let n = match x {
                            serde_json::Value::Number(n) => n.as_f64().unwrap_or(0.0),
                            serde_json::Value::String(s) => crate::units::parse_bytes(s)
                                .map(|b| b.0 as f64)
                                .unwrap_or(0.0),
                            _ => 0.0,
                        };
                        *sum += if k == "bytes" { n / 1000.0 } else { n };
                    } else {
                        walk(x, sum);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, sum)),
            _ => {}
        }
    }
    let mut packets = 0.0;
    for f in &config.flows {
        if let Ok(v) = serde_json::to_value(f) {
            walk(&v, &mut packets);
        }
    }
    let mut loss: f64 = 0.0;
    let mut link = |l: &crate::config::LinkConfig| {
        loss = loss.max(l.loss.stationary_loss().unwrap_or(0.0) + l.corruption);
    };
    match &config.topology {
        crate::config::Topology::TwoHosts {
            forward,
            reverse,
            handovers,
        } => {
            link(forward);
            link(reverse);
            handovers.iter().for_each(|h| {
                link(&h.forward);
                link(&h.reverse)
            });
        }
        crate::config::Topology::Dumbbell {
            pairs,
            bottleneck_forward,
            bottleneck_reverse,
            handovers,
        } => {
            link(bottleneck_forward);
            link(bottleneck_reverse);
            for p in pairs {
                [&p.client_up, &p.client_down, &p.server_up, &p.server_down]
                    .into_iter()
                    .for_each(&mut link);
            }
            handovers.iter().for_each(|h| {
                link(&h.forward);
                link(&h.reverse)
            });
        }
    }
    100 + (packets * (1.0 + 20.0 * loss.min(1.0))) as u64
}

/// The numeric results of one run, flattened for summaries: every number of the run's
/// result (what `quicsim run --json` prints for a run) but its seed and point, named by
/// its path with `flows.N` written `flowN`, `endpoints.N` written `epN`, `links.N`
/// written `linkN` and other array elements `name.N` (`end_time_secs`, `events`,
/// `flow0.ep0.completion_secs`, `link1.drops.queue_overflow`, ...). Absent values (`null`)
/// and flags are left out; names are sorted (numeric segments by value), so the list is
/// the same on every platform. New metrics appear without changes here.
pub fn observations(result: &RunResult) -> Vec<(String, f64)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64)>) {
        match v {
            serde_json::Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    out.push((prefix.to_string(), x));
                }
            }
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let name = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&name, x, out);
                }
            }
            serde_json::Value::Array(a) => {
                let (base, short) = match prefix.rsplit_once('.') {
                    Some((head, last)) => (format!("{head}."), last),
                    None => (String::new(), prefix),
                };
                for (i, x) in a.iter().enumerate() {
                    let name = match short {
                        "flows" => format!("{base}flow{i}"),
                        "endpoints" => format!("{base}ep{i}"),
                        "links" => format!("{base}link{i}"),
                        _ => format!("{prefix}.{i}"),
                    };
                    walk(&name, x, out);
                }
            }
            _ => {}
        }
    }
    let mut v = serde_json::to_value(result).expect("a RunResult serialises");
    if let Some(m) = v.as_object_mut() {
        for k in [
            "resolved_config",
            "series",
            "seed",
            "point",
            "schema_version",
            "quicsim_version",
        ] {
            m.remove(k);
        }
    }
    let mut out = Vec::new();
    walk("", &v, &mut out);
    out.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    out
}

/// Orders dotted names segment by segment, digit runs by their value (`flow2` before
/// `flow10`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                let mut n: u64 = c.to_digit(10).unwrap_or(0) as u64;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    n = n.saturating_mul(10).saturating_add(d as u64);
                    chars.next();
                }
                out.push((std::mem::take(&mut text), n));
            } else {
                text.push(c);
            }
        }
        out.push((text, u64::MAX));
        out
    }
    key(a).cmp(&key(b))
}

/// One run's record in a sweep: what a sweep stores per finished job (a line of its
/// `runs.jsonl`) and summarises. Compact: no config, no series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The job's id ([`job_id`]), 16 hex digits.
    pub job: String,
    /// Sweep point index.
    pub point: usize,
    /// Run index within the point.
    pub run: u32,
    /// The run's seed.
    pub seed: u64,
    /// How the run ended.
    pub status: RunStatus,
    /// The run's digest.
    pub digest: String,
    /// [`observations`] of the run, in their order.
    pub metrics: Vec<(String, f64)>,
}

impl RunRecord {
    /// The record of `job`'s `result`.
    pub fn new(job: &Job, result: &RunResult) -> RunRecord {
        RunRecord {
            job: job.id.to_string(),
            point: job.point,
            run: job.run,
            seed: job.seed,
            status: result.status,
            digest: result.digest.clone(),
            metrics: observations(result),
        }
    }
}

/// The summary of one sweep point over its runs: [`summarize`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointSummary {
    /// Index of the point.
    pub index: usize,
    /// The point's sweep parameters (key, value as written).
    pub params: Vec<(String, String)>,
    /// Runs summarised.
    pub runs: usize,
    /// Runs by status (`completed`, `time_limit`, ...), only statuses that occurred, in
    /// the order of [`RunStatus`].
    pub statuses: Vec<(RunStatus, usize)>,
    /// Per metric (sorted as [`observations`]): the summary over the runs that have it.
    pub metrics: Vec<(String, crate::stats::Summary)>,
}

/// Summaries per sweep point of `records` (any order: each point's runs are put in run
/// order first, so the result does not depend on the order the runs finished in).
/// `params[i]` are the sweep parameters of point `i` ([`Study::point_params`]).
///
/// # Panics
/// If a record's point is out of range.
pub fn summarize(params: &[Vec<(String, String)>], records: &[RunRecord]) -> Vec<PointSummary> {
    let mut by_point: Vec<Vec<&RunRecord>> = vec![Vec::new(); params.len()];
    for r in records {
        by_point[r.point].push(r);
    }
    by_point
        .into_iter()
        .enumerate()
        .map(|(index, mut rs)| {
            rs.sort_by_key(|r| r.run);
            let mut statuses: Vec<(RunStatus, usize)> = Vec::new();
            for r in &rs {
                match statuses.iter_mut().find(|(s, _)| *s == r.status) {
                    Some((_, n)) => *n += 1,
                    None => statuses.push((r.status, 1)),
                }
            }
            statuses.sort_by_key(|(s, _)| s.code());
            let mut values: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
            for r in &rs {
                for (k, v) in &r.metrics {
                    values.entry(k.as_str()).or_default().push(*v);
                }
            }
            let mut metrics: Vec<(String, crate::stats::Summary)> = values
                .into_iter()
                .map(|(k, v)| (k.to_string(), crate::stats::Summary::of(&v)))
                .collect();
            metrics.sort_by(|a, b| natural_cmp(&a.0, &b.0));
            PointSummary {
                index,
                params: params[index].clone(),
                runs: rs.len(),
                statuses,
                metrics,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    const SWEPT: &str = r#"
        name = "study-test"
        seed = 100
        runs = 3
        [topology]
        kind = "two_hosts"
        link = { rate = "10Mbps", delay = "10ms" }
        [[flows]]
        kind = "cbr"
        rate = "1Mbps"
        duration = "100ms"
        [sweep]
        "topology.link.delay" = ["10ms", "20ms"]
        "topology.link.loss" = [0.0, 0.01, 0.02]
    "#;

    const PLAIN: &str = r#"
        name = "study-plain"
        seed = 7
        [topology]
        kind = "two_hosts"
        link = { rate = "10Mbps", delay = "10ms" }
        [[flows]]
        kind = "cbr"
        rate = "1Mbps"
        duration = "100ms"
    "#;

    fn study(text: &str, o: Overrides) -> Study {
        Study::new(parse_str(text).unwrap(), &o).unwrap()
    }

    #[test]
    fn jobs_are_point_major_with_common_seeds() {
        let s = study(SWEPT, Overrides::default());
        assert_eq!(s.scenario().points.len(), 6);
        assert_eq!((s.runs(), s.base_seed()), (3, 100));
        let got: Vec<(usize, u32, u64)> =
            s.jobs().iter().map(|j| (j.point, j.run, j.seed)).collect();
        let want: Vec<(usize, u32, u64)> = (0..6)
            .flat_map(|p| (0..3).map(move |r| (p, r, 100 + r as u64)))
            .collect();
        assert_eq!(got, want);
        for j in s.jobs() {
            assert_eq!(s.config(j), &s.scenario().points[j.point].config);
            assert_eq!(j.id, job_id(s.config(j), j.seed));
        }
        // Every job is a different simulation, so every id differs.
        let mut ids: Vec<JobId> = s.jobs().iter().map(|j| j.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 18);
        // Without a sweep: one point, `runs` jobs.
        let p = study(PLAIN, Overrides::default());
        let got: Vec<(usize, u32, u64)> =
            p.jobs().iter().map(|j| (j.point, j.run, j.seed)).collect();
        assert_eq!(got, [(0, 0, 7)]);
    }

    #[test]
    fn seeds_wrap_and_overrides_apply_everywhere() {
        assert_eq!(run_seed(u64::MAX, 0), u64::MAX);
        assert_eq!(run_seed(u64::MAX, 1), 0);
        assert_eq!(run_seed(5, 3), 8);
        let o = Overrides {
            seed: Some(u64::MAX - 1),
            runs: Some(4),
            series: true,
        };
        let s = study(SWEPT, o);
        assert_eq!(s.jobs().len(), 6 * 4);
        let seeds: Vec<u64> = s.jobs()[..4].iter().map(|j| j.seed).collect();
        assert_eq!(seeds, [u64::MAX - 1, u64::MAX, 0, 1]);
        let sc = s.scenario();
        for c in std::iter::once(&sc.base).chain(sc.points.iter().map(|p| &p.config)) {
            assert_eq!((c.seed, c.runs, c.output.series), (u64::MAX - 1, 4, true));
        }
        // Only what is given is replaced.
        let s = study(
            SWEPT,
            Overrides {
                runs: Some(1),
                ..Overrides::default()
            },
        );
        assert_eq!(s.jobs().len(), 6);
        assert!(s.jobs().iter().all(|j| j.seed == 100 && j.run == 0));
        assert!(!s.scenario().base.output.series);
        let e = Study::new(
            parse_str(SWEPT).unwrap(),
            &Overrides {
                runs: Some(0),
                ..Overrides::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.field, "runs");
    }

    #[test]
    fn job_ids_are_stable_and_follow_every_resolved_value() {
        let cfg = parse_str(PLAIN).unwrap().base;
        // Golden value: the id definition (tag, canonical JSON, seed) must not change by
        // accident. A deliberate change of `Config`'s serialisation changes it too: then
        // update this value and say so, because stored results keyed by id go stale.
        // (Checked independently: FNV-1a over the tag, the length, Python's compact JSON of
        // `quicsim run --json`'s resolved_config with seed 0 and runs 1, and the seed.)
        assert_eq!(job_id(&cfg, 7).to_string(), "016248440bd05f90");
        // Same config (parsed again) and seed: same id.
        let again = parse_str(PLAIN).unwrap().base;
        assert_eq!(job_id(&again, 7), job_id(&cfg, 7));
        assert_eq!(
            study(PLAIN, Overrides::default()).jobs()[0].id,
            job_id(&cfg, 7)
        );
        // Another seed: another id.
        assert_ne!(job_id(&cfg, 8), job_id(&cfg, 7));
        // Any resolved value changed: another id.
        let base = job_id(&cfg, 7);
        type Change = fn(&mut Config);
        let variants: [(&str, Change); 7] = [
            ("name", |c| c.name.push('x')),
            ("description", |c| c.description.push('x')),
            ("time limit", |c| c.sim.time_limit.0 += 1),
            ("max events", |c| c.sim.max_events -= 1),
            ("series", |c| c.output.series = true),
            ("flow", |c| c.flows[0].background = true),
            ("link", |c| match &mut c.topology {
                crate::config::Topology::TwoHosts { forward, .. } => forward.delay.0 += 1,
                _ => unreachable!(),
            }),
        ];
        for (what, change) in variants {
            let mut c = cfg.clone();
            change(&mut c);
            assert_ne!(job_id(&c, 7), base, "{what}");
        }
        // The study-level fields are not part of a run: the seed is hashed on its own.
        let mut c = cfg.clone();
        c.seed = 12345;
        c.runs = 9;
        assert_eq!(job_id(&c, 7), base);
        // So a job keeps its id when the study grows.
        let small = study(
            SWEPT,
            Overrides {
                runs: Some(2),
                ..Overrides::default()
            },
        );
        let big = study(
            SWEPT,
            Overrides {
                runs: Some(5),
                ..Overrides::default()
            },
        );
        let small_ids: Vec<JobId> = small.jobs().iter().map(|j| j.id).collect();
        let big_ids: Vec<JobId> = big
            .jobs()
            .iter()
            .filter(|j| j.run < 2)
            .map(|j| j.id)
            .collect();
        assert_eq!(small_ids, big_ids);
        assert_eq!(serde_json::to_string(&base).unwrap(), format!("\"{base}\""));
    }

    #[test]
    fn results_document_has_the_run_result_fields() {
        let s = study(
            SWEPT,
            Overrides {
                runs: Some(1),
                ..Overrides::default()
            },
        );
        let results: Vec<RunResult> = s
            .jobs()
            .iter()
            .map(|j| crate::run(s.config(j), j.seed).unwrap())
            .collect();
        let doc = serde_json::to_value(s.results(&results)).unwrap();
        let run = doc["runs"][5].as_object().unwrap();
        let full = serde_json::to_value(&results[5]).unwrap();
        let mut want: Vec<&String> = full
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| {
                ![
                    "resolved_config",
                    "series",
                    "schema_version",
                    "quicsim_version",
                ]
                .contains(&k.as_str())
            })
            .collect();
        let point = "point".to_string();
        want.push(&point);
        want.sort();
        let mut got: Vec<&String> = run.keys().collect();
        got.sort();
        assert_eq!(
            got, want,
            "StudyRun must carry every RunResult field the CLI printed"
        );
        for (k, v) in run {
            if k != "point" {
                assert_eq!(v, &full[k], "{k}");
            }
        }
        assert_eq!(run["point"], 5);
        assert_eq!(doc["points"][2]["params"][1]["key"], "topology.link.loss");
        assert!(doc["points"][2]["resolved_config"].is_object());
        assert_eq!(doc["resolved_config"]["name"], "study-test");
        // Without a sweep the point has no resolved_config of its own.
        let p = study(PLAIN, Overrides::default());
        let r = vec![crate::run(p.config(&p.jobs()[0]), 7).unwrap()];
        let doc = serde_json::to_value(p.results(&r)).unwrap();
        assert!(doc["points"][0].get("resolved_config").is_none());
        assert_eq!(doc["points"][0]["params"].as_array().unwrap().len(), 0);
    }

    #[test]
    fn shards_partition_the_jobs_and_balance_cost() {
        // Loss raises the estimated cost: the 2 % points cost more than the lossless ones.
        let s = study(SWEPT, Overrides::default());
        assert!(
            s.point_cost(2) > s.point_cost(0),
            "{} {}",
            s.point_cost(2),
            s.point_cost(0)
        );
        for n in [1, 2, 3, 5, 18, 25] {
            let mut all: Vec<usize> = (0..n).flat_map(|k| s.shard(k, n)).collect();
            all.sort_unstable();
            assert_eq!(all, (0..18).collect::<Vec<_>>(), "{n} shards partition");
            let loads: Vec<u64> = (0..n)
                .map(|k| {
                    s.shard(k, n)
                        .iter()
                        .map(|&i| s.point_cost(s.jobs()[i].point))
                        .sum()
                })
                .collect();
            let max_job = (0..6).map(|p| s.point_cost(p)).max().unwrap();
            let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            // Longest-processing-time rule: the spread is at most one job's cost.
            assert!(hi - lo <= max_job, "{n}: {loads:?}");
        }
        // The same call gives the same slice.
        assert_eq!(s.shard(1, 3), s.shard(1, 3));
    }

    #[test]
    fn fingerprint_follows_the_jobs() {
        let a = study(SWEPT, Overrides::default());
        let ids: Vec<JobId> = a.jobs().iter().map(|j| j.id).collect();
        assert_eq!(a.fingerprint(), fingerprint_of(&ids));
        assert_eq!(
            a.fingerprint(),
            study(SWEPT, Overrides::default()).fingerprint()
        );
        let more = Overrides {
            runs: Some(4),
            ..Overrides::default()
        };
        assert_ne!(a.fingerprint(), study(SWEPT, more).fingerprint());
        let seed = Overrides {
            seed: Some(1),
            ..Overrides::default()
        };
        assert_ne!(a.fingerprint(), study(SWEPT, seed).fingerprint());
        let mut swapped = ids.clone();
        swapped.swap(0, 1);
        assert_ne!(fingerprint_of(&swapped), a.fingerprint());
    }

    #[test]
    fn observations_name_every_number_and_summaries_ignore_finish_order() {
        let s = study(SWEPT, Overrides::default());
        let recs: Vec<RunRecord> = s
            .jobs()
            .iter()
            .map(|j| RunRecord::new(j, &crate::run(s.config(j), j.seed).unwrap()))
            .collect();
        let names: Vec<&str> = recs[0].metrics.iter().map(|(k, _)| k.as_str()).collect();
        for want in [
            "end_time_secs",
            "events",
            "flow0.packets_sent",
            "link0.packets_in",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        assert!(!names
            .iter()
            .any(|n| n.contains("seed") || n.contains("resolved_config")));
        let mut sorted = names.clone();
        sorted.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, sorted);
        assert_eq!(natural_cmp("flow2.x", "flow10.x"), std::cmp::Ordering::Less);
        // Summaries: point 4 (loss 0.02) over its three runs, by hand.
        let params = s.point_params();
        let sum = summarize(&params, &recs);
        assert_eq!(sum.len(), 6);
        let p = &sum[4];
        assert_eq!((p.runs, p.params.clone()), (3, params[4].clone()));
        let (_, st) = p
            .metrics
            .iter()
            .find(|(k, _)| k == "flow0.packets_delivered")
            .unwrap();
        let xs: Vec<f64> = recs[12..15]
            .iter()
            .map(|r| {
                r.metrics
                    .iter()
                    .find(|(k, _)| k == "flow0.packets_delivered")
                    .unwrap()
                    .1
            })
            .collect();
        assert_eq!(st.mean, (xs[0] + xs[1] + xs[2]) / 3.0);
        // Finish order does not matter.
        let mut rev = recs.clone();
        rev.reverse();
        assert_eq!(summarize(&params, &rev), sum);
    }
}
