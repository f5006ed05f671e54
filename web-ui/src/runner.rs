//! A scenario run for the browser: every job of the scenario's [`Study`] (sweep points x
//! runs, the seeds `quicsim run` uses) stepped a slice of events at a time through
//! [`Simulation::step`], so a worker can report progress between slices and be stopped.
//! Time series are switched on (they change neither the events nor the digest).

use crate::summary::{lines, RunLine};
use serde::{Deserialize, Serialize};
use sim_core::metrics::Series;
use sim_core::scenario::{parse_str, ConfigError};
use sim_core::sim::Simulation;
use sim_core::study::{Overrides, Study};
use sim_core::RunResult;

/// How far a run is, for the progress bar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    /// Jobs finished.
    pub done: usize,
    /// Jobs in all.
    pub jobs: usize,
    /// Simulated time of the current job, seconds.
    pub time_s: f64,
    /// Events of the current job so far.
    pub events: u64,
    /// Fraction of the whole study, in [0, 1] (each job by simulated time over its limit).
    pub fraction: f64,
}

/// What a finished run hands to the page (through JSON, from the worker: no NaN in it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    /// The document `quicsim run FILE --json` prints for the same scenario (its
    /// `resolved_config` has `series` on).
    pub doc: serde_json::Value,
    /// Every run's summary line, in job order (point-major, then run).
    pub lines: Vec<RunLine>,
    /// The first run's time series.
    pub series: Option<PlotSeries>,
}

/// A run's time series for plotting: non-finite samples are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlotSeries {
    /// Column names; the first is `time_s`.
    pub columns: Vec<String>,
    /// One row per sampling instant.
    pub rows: Vec<Vec<Option<f64>>>,
}

impl PlotSeries {
    /// The series of `s`, non-finite values as `None`.
    pub fn of(s: &Series) -> PlotSeries {
        PlotSeries {
            columns: s.columns.clone(),
            rows: s
                .rows
                .iter()
                .map(|r| r.iter().map(|v| v.is_finite().then_some(*v)).collect())
                .collect(),
        }
    }
}

/// A study being stepped.
pub struct Runner {
    study: Study,
    current: Option<Simulation<'static>>,
    results: Vec<RunResult>,
}

impl Runner {
    /// Parses and validates the scenario text: the error is the one `quicsim` prints.
    pub fn new(toml: &str) -> Result<Runner, ConfigError> {
        let scenario = parse_str(toml)?;
        let overrides = Overrides {
            seed: None,
            runs: None,
            series: true,
        };
        Ok(Runner {
            study: Study::new(scenario, &overrides)?,
            current: None,
            results: Vec::new(),
        })
    }

    /// Processes at most `budget` events; `true` once every job has finished.
    pub fn step(&mut self, budget: u64) -> Result<bool, ConfigError> {
        let mut left = budget;
        while left > 0 {
            let Some(job) = self.study.jobs().get(self.results.len()).cloned() else {
                return Ok(true);
            };
            if self.current.is_none() {
                self.current = Some(self.study.simulation(&job)?);
            }
            let sim = self.current.as_mut().expect("set above");
            let out = sim.step(left);
            left = left.saturating_sub(out.events.max(1));
            if out.is_finished() {
                let sim = self.current.take().expect("set above");
                self.results.push(sim.finish());
            }
        }
        Ok(self.results.len() == self.study.jobs().len())
    }

    /// Progress so far.
    pub fn progress(&self) -> RunProgress {
        let jobs = self.study.jobs().len();
        let done = self.results.len();
        let (time_s, events, part) = match (&self.current, self.study.jobs().get(done)) {
            (Some(sim), Some(job)) => {
                let p = sim.progress();
                let limit = self.study.config(job).sim.time_limit.0.max(1) as f64;
                (
                    p.time.0 as f64 * 1e-9,
                    p.events,
                    (p.time.0 as f64 / limit).min(1.0),
                )
            }
            _ => (0.0, 0, 0.0),
        };
        RunProgress {
            done,
            jobs,
            time_s,
            events,
            fraction: if jobs == 0 {
                1.0
            } else {
                (done as f64 + part) / jobs as f64
            },
        }
    }

    /// Every finished run's result, in job order.
    pub fn results(&self) -> &[RunResult] {
        &self.results
    }

    /// The results (call once [`Runner::step`] said `true`).
    pub fn output(&self) -> RunOutput {
        let doc = serde_json::to_value(self.study.results(&self.results)).expect("JSON");
        RunOutput {
            doc,
            lines: lines(&self.results),
            series: self
                .results
                .first()
                .and_then(|r| r.series.as_ref())
                .map(PlotSeries::of),
        }
    }
}

/// The qlog traces (qvis format, JSON-SEQ) of flow 0 in the first run of `toml`, as
/// (file name as the CLI names it, text): what `quicsim run --qlog` writes for them.
pub fn qlog_files(toml: &str) -> Result<Vec<(String, String)>, ConfigError> {
    use sim_core::qlog::{file_name, QlogFormat, QlogWriter};
    let scenario = parse_str(toml)?;
    let study = Study::new(
        scenario,
        &Overrides {
            seed: None,
            runs: None,
            series: false,
        },
    )?;
    let Some(job) = study.jobs().first().cloned() else {
        return Ok(Vec::new());
    };
    let cfg = study.config(&job);
    let name = cfg.name.clone();
    // The title the CLI gives it.
    let title = format!("{name} point {} seed {}", job.point, job.seed);
    let mut w: QlogWriter<'_, Vec<u8>> =
        QlogWriter::new(QlogFormat::Qvis, title, Box::new(|_| Ok(Vec::new())));
    sim_core::runner::run_traced(cfg, job.seed, &mut w)?;
    let outputs = w
        .into_outputs()
        .map_err(|e| ConfigError::new("qlog", "", e.to_string()))?;
    Ok(outputs
        .into_iter()
        .filter(|(k, _)| k.flow == 0)
        .map(|(k, bytes)| {
            (
                file_name(&name, job.seed, job.point, &k),
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stepped in small slices, the runner gives every job the result `sim_core::run`
    /// gives for the same config and seed (digest included), series on or off.
    #[test]
    fn stepped_runs_equal_one_call_runs() {
        let text = crate::gallery::SANDBOX.replace("seed = 1", "seed = 5\nruns = 2");
        let mut r = Runner::new(&text).unwrap();
        let mut slices = 0;
        while !r.step(500).unwrap() {
            let p = r.progress();
            assert!(p.fraction >= 0.0 && p.fraction <= 1.0);
            slices += 1;
        }
        assert!(slices > 2);
        let out = r.output();
        assert_eq!(out.lines.len(), 2);
        let base = parse_str(&text).unwrap().base;
        for (i, res) in r.results().iter().enumerate() {
            let plain = sim_core::run(&base, 5 + i as u64).unwrap();
            assert_eq!(res.digest, plain.digest);
            assert_eq!(res.events, plain.events);
            assert!(res.series.is_some());
        }
        assert_eq!(out.doc["runs"][0]["digest"], out.lines[0].digest.as_str());
        // What the worker sends survives JSON (NaN samples included).
        let json = serde_json::to_string(&out).unwrap();
        let back: RunOutput = serde_json::from_str(&json).unwrap();
        assert_eq!(back.lines, out.lines);
        assert_eq!(
            back.series.unwrap().columns.len(),
            out.series.unwrap().columns.len()
        );
    }

    #[test]
    fn qlog_of_the_sandbox_has_client_and_server_traces() {
        let files = qlog_files(crate::gallery::SANDBOX).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[0].0.ends_with("-client.sqlog"), "{}", files[0].0);
        assert!(files[1].0.ends_with("-server.sqlog"));
        // JSON-SEQ: every record starts with the RS byte and parses.
        for rec in files[0].1.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
            serde_json::from_str::<serde_json::Value>(rec.trim()).unwrap();
        }
        assert!(files[0].1.contains("packet_sent"));
    }

    #[test]
    fn a_bad_value_is_the_cli_error() {
        let text = crate::gallery::SANDBOX.replace("\"10Mbps\"", "\"ten\"");
        let err = Runner::new(&text).err().unwrap();
        assert_eq!(err.to_string(), parse_str(&text).unwrap_err().to_string());
        assert!(err.field.contains("rate"));
    }
}
