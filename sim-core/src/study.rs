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

use crate::config::Config;
use crate::hash::Fnv1a64;
use crate::metrics::{DropCounts, FlowReport, LinkReport, RunResult, RunStatus, SCHEMA_VERSION};
use crate::scenario::Scenario;
use crate::sim::Simulation;
use crate::time::SimTime;
use crate::validate::ConfigError;
use serde::{Serialize, Serializer};
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
    jobs: Vec<Job>,
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
        let mut jobs = Vec::with_capacity(scenario.points.len() * runs as usize);
        for (point, p) in scenario.points.iter().enumerate() {
            let hasher = point_hasher(&p.config);
            for run in 0..runs {
                let seed = run_seed(base_seed, run);
                let mut h = hasher;
                h.write_u64(seed);
                jobs.push(Job {
                    point,
                    run,
                    seed,
                    id: JobId(h.finish()),
                });
            }
        }
        Ok(Study { scenario, jobs })
    }

    /// The scenario with the overrides applied.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The jobs in job order (point-major, then run).
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
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
        assert_eq!(results.len(), self.jobs.len(), "one result per job");
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
        let runs = self
            .jobs
            .iter()
            .zip(results)
            .map(|(j, r)| StudyRun {
                seed: r.seed,
                status: r.status,
                end_time_secs: r.end_time_secs,
                end_time: r.end_time,
                events: r.events,
                digest: &r.digest,
                drops: &r.drops,
                links: &r.links,
                flows: &r.flows,
                point: j.point,
            })
            .collect();
        StudyResult {
            schema_version: SCHEMA_VERSION,
            quicsim_version: env!("CARGO_PKG_VERSION"),
            scenario: &s.base.name,
            resolved_config: &s.base,
            points,
            runs,
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
}
