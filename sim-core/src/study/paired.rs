//! Paired differences of a paired comparison (`transports = [...]`, `docs/paired.md`).
//!
//! Every variant of a grid point runs with the same seeds (run `i` of every point uses
//! [`run_seed`](super::run_seed)`(base, i)`), so each link's loss, corruption and jitter
//! draws are the same sequence by packet index in every variant (common random numbers).
//! Run `i` of variant `v` is therefore paired with run `i` of the baseline (variant 0):
//! the difference `x_v,i - x_0,i` removes the part of the run-to-run spread both share,
//! and the mean of the differences gets a Student-t 95 % confidence interval
//! ([`Summary`]) over the runs: the interval that, over repeated studies, covers the true
//! mean difference of the two transports under this scenario's random link 95 % of the
//! time (given roughly normal differences; with few runs it is wide).
//!
//! The compared metrics are found in the run results by name ([`observations`](super::observations)), so new
//! workloads' metrics take part without changes here: see [`is_compared`].

use super::{natural_cmp, RunRecord};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the differences of a paired study are computed from: the variants and the flows
/// whose metrics are compared. [`Study::paired_layout`](super::Study::paired_layout).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedLayout {
    /// The variants' names (transports) in order; the first is the baseline.
    pub variants: Vec<String>,
    /// Indices of the foreground (not `background`) flows, whose metrics are compared.
    pub flows: Vec<usize>,
}

/// Whether the observation `name` ([`observations`]) is a compared metric of a paired
/// study whose foreground flows are `flows`: a metric of the client endpoint (`ep0`) of a
/// foreground flow (`flowN.ep0.…`) that is its completion time (`completion_secs`), or a
/// time (`…_secs`) whose name speaks of a page or video load (`load`), an object
/// (`object`) or rebuffering (`rebuffer`), as the workloads report page load time,
/// per-object completion and video loading delay. Array elements count by their array's
/// name (`object_completion_secs.3`).
///
/// [`observations`]: super::observations
pub fn is_compared(name: &str, flows: &[usize]) -> bool {
    let Some(rest) = name.strip_prefix("flow") else {
        return false;
    };
    let Some((idx, rest)) = rest.split_once('.') else {
        return false;
    };
    let Ok(flow) = idx.parse::<usize>() else {
        return false;
    };
    if !flows.contains(&flow) {
        return false;
    }
    let Some(metric) = rest.strip_prefix("ep0.") else {
        return false;
    };
    // The last segment that is not an array index.
    let last = metric
        .rsplit('.')
        .find(|s| !s.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or("");
    last == "completion_secs"
        || (last.ends_with("_secs")
            && ["load", "object", "rebuffer"]
                .iter()
                .any(|w| last.contains(w)))
}

/// One run of a paired metric: the run's value in every variant and the differences to
/// the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedRun {
    /// Run index (the same in every variant).
    pub run: u32,
    /// The run's seed (the same in every variant).
    pub seed: u64,
    /// The value per variant, in variant order (`None`: the run did not report it, e.g.
    /// the transfer did not complete).
    pub values: Vec<Option<f64>>,
    /// Per non-baseline variant (in order): its value minus the baseline's, when both
    /// exist.
    pub differences: Vec<Option<f64>>,
}

/// The differences of one variant to the baseline for one metric, over the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedDifference {
    /// The variant (its value minus the baseline's).
    pub variant: String,
    /// Summary of the differences over the runs where both variants report the metric
    /// (`n`, mean, standard deviation, Student-t 95 % CI, ...); `None` when there is no
    /// such run.
    pub summary: Option<Summary>,
}

/// One compared metric of a grid point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedMetric {
    /// The metric's name ([`observations`](super::observations)).
    pub metric: String,
    /// Per variant (in order): the summary of its values over the runs that report it.
    pub values: Vec<Option<Summary>>,
    /// Per non-baseline variant: its differences to the baseline.
    pub differences: Vec<PairedDifference>,
    /// The runs, in run order (left out of sweep summaries, which stay bounded by the
    /// number of grid points).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<PairedRun>,
}

/// The paired comparison of one grid point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairedPoint {
    /// Index of the grid point ([`Scenario::grid_point`](crate::scenario::Scenario::grid_point)).
    pub grid_point: usize,
    /// The sweep parameters of the grid point (without the variant), key and value as
    /// written.
    pub params: Vec<(String, String)>,
    /// The study point of each variant, in variant order.
    pub points: Vec<usize>,
    /// The compared metrics, sorted by name (as [`observations`](super::observations)).
    pub metrics: Vec<PairedMetric>,
}

/// The paired comparison of a study: the variants and one entry per grid point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Paired {
    /// The baseline variant (the first listed transport).
    pub baseline: String,
    /// Every variant in order, the baseline first.
    pub variants: Vec<String>,
    /// Per grid point, in order.
    pub points: Vec<PairedPoint>,
}

/// The paired comparison of `records` (one per finished job, any order) of a paired study
/// with `layout`, whose point `g * V + v` is variant `v` of grid point `g` and
/// `params[p]` are point `p`'s parameters ([`Study::point_params`](super::Study::point_params),
/// the last one the variant's). `with_runs`: keep the per-run values (`quicsim run`);
/// sweeps leave them out. The same as feeding every record to a [`PairedCollector`].
///
/// # Panics
/// If `layout` has no variant, or a record's point is out of range.
pub fn compare(
    layout: &PairedLayout,
    params: &[Vec<(String, String)>],
    records: &[RunRecord],
    with_runs: bool,
) -> Paired {
    let mut c = PairedCollector::new(layout.clone(), params.len());
    for r in records {
        c.add(r.point, r.run, r.seed, &r.metrics);
    }
    c.finish(params, with_runs)
}

/// Per run of a grid point and compared metric: the run's seed and its value per variant.
type Runs = BTreeMap<u32, (u64, Vec<Option<f64>>)>;

/// The paired comparison built a run at a time (any order), holding only what the
/// differences need: per grid point, compared metric and run, one value per variant
/// (never a whole result). [`compare`] over all records gives the same [`Paired`]; a
/// caller streaming a study (`quicsim run`) feeds each result's
/// [`observations`](super::observations) as its run finishes and drops the result.
#[derive(Clone, Debug)]
pub struct PairedCollector {
    layout: PairedLayout,
    /// Per grid point: compared metric -> run -> (seed, value per variant).
    table: Vec<BTreeMap<String, Runs>>,
    /// Per grid point, the runs seen (run -> seed), so a metric absent from a whole run
    /// still shows.
    seeds: Vec<BTreeMap<u32, u64>>,
}

impl PairedCollector {
    /// An empty collector for a paired study with `layout` and `points` study points
    /// (grid points x variants).
    ///
    /// # Panics
    /// If `layout` has no variant.
    pub fn new(layout: PairedLayout, points: usize) -> PairedCollector {
        let nv = layout.variants.len();
        assert!(nv > 0, "a paired layout has variants");
        let grid = points / nv;
        PairedCollector {
            layout,
            table: vec![BTreeMap::new(); grid],
            seeds: vec![BTreeMap::new(); grid],
        }
    }

    /// Adds run `run` (seed `seed`) of study point `point`, whose observations are
    /// `metrics`; only the compared ones ([`is_compared`]) are kept.
    ///
    /// # Panics
    /// If `point` is out of range.
    pub fn add(&mut self, point: usize, run: u32, seed: u64, metrics: &[(String, f64)]) {
        let nv = self.layout.variants.len();
        let (g, v) = (point / nv, point % nv);
        self.seeds[g].insert(run, seed);
        for (name, x) in metrics {
            if !is_compared(name, &self.layout.flows) {
                continue;
            }
            let table = &mut self.table[g];
            if !table.contains_key(name.as_str()) {
                table.insert(name.clone(), Runs::new());
            }
            let runs = table.get_mut(name.as_str()).expect("inserted above");
            let slot = runs.entry(run).or_insert((seed, vec![None; nv]));
            slot.1[v] = Some(*x);
        }
    }

    /// The paired comparison of the runs added; `params` and `with_runs` as for
    /// [`compare`].
    pub fn finish(self, params: &[Vec<(String, String)>], with_runs: bool) -> Paired {
        let layout = &self.layout;
        let nv = layout.variants.len();
        let points = self
            .table
            .iter()
            .zip(&self.seeds)
            .enumerate()
            .map(|(g, (table, seeds))| {
                let mut names: Vec<&str> = table.keys().map(String::as_str).collect();
                names.sort_by(|a, b| natural_cmp(a, b));
                let metrics = names
                    .into_iter()
                    .map(|name| {
                        let by_run = &table[name];
                        let runs: Vec<PairedRun> = seeds
                            .iter()
                            .map(|(&run, &seed)| {
                                let values = by_run
                                    .get(&run)
                                    .map(|(_, v)| v.clone())
                                    .unwrap_or_else(|| vec![None; nv]);
                                let differences =
                                    (1..nv).map(|v| Some(values[v]? - values[0]?)).collect();
                                PairedRun {
                                    run,
                                    seed,
                                    values,
                                    differences,
                                }
                            })
                            .collect();
                        let summary = |xs: Vec<f64>| (!xs.is_empty()).then(|| Summary::of(&xs));
                        let values = (0..nv)
                            .map(|v| summary(runs.iter().filter_map(|r| r.values[v]).collect()))
                            .collect();
                        let differences = (1..nv)
                            .map(|v| PairedDifference {
                                variant: layout.variants[v].clone(),
                                summary: summary(
                                    runs.iter().filter_map(|r| r.differences[v - 1]).collect(),
                                ),
                            })
                            .collect();
                        PairedMetric {
                            metric: name.to_string(),
                            values,
                            differences,
                            runs: if with_runs { runs } else { Vec::new() },
                        }
                    })
                    .collect();
                let mut gp = params.get(g * nv).cloned().unwrap_or_default();
                gp.pop();
                PairedPoint {
                    grid_point: g,
                    params: gp,
                    points: (0..nv).map(|v| g * nv + v).collect(),
                    metrics,
                }
            })
            .collect();
        Paired {
            baseline: layout.variants[0].clone(),
            variants: layout.variants.clone(),
            points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::RunStatus;

    #[test]
    fn compared_metrics_are_the_client_outcomes_of_foreground_flows() {
        let fg = [0, 2];
        for yes in [
            "flow0.ep0.completion_secs",
            "flow2.ep0.page_load_secs",
            "flow0.ep0.object_completion_secs.3",
            "flow0.ep0.seek_loading_delay_secs",
            "flow0.ep0.rebuffering_secs",
        ] {
            assert!(is_compared(yes, &fg), "{yes}");
        }
        for no in [
            "flow1.ep0.completion_secs", // background
            "flow0.ep1.completion_secs", // server
            "flow0.ep0.handshake_secs",
            "flow0.ep0.stream_completion_secs.0",
            "flow0.ep0.object_count",
            "flow0.packets_sent",
            "end_time_secs",
            "flowx.ep0.completion_secs",
        ] {
            assert!(!is_compared(no, &fg), "{no}");
        }
    }

    fn rec(point: usize, run: u32, metrics: &[(&str, f64)]) -> RunRecord {
        RunRecord {
            job: String::new(),
            point,
            run,
            seed: 10 + run as u64,
            status: RunStatus::Completed,
            digest: String::new(),
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn differences_pair_runs_by_index_and_summarise_them() {
        let layout = PairedLayout {
            variants: vec!["tcp".into(), "quic".into()],
            flows: vec![0],
        };
        let m = "flow0.ep0.completion_secs";
        let params = vec![
            vec![("transports".to_string(), "tcp".to_string())],
            vec![("transports".to_string(), "quic".to_string())],
        ];
        // Baseline 1, 2, 4; QUIC 0.5, 1.75, (missing). Finish order scrambled.
        let records = vec![
            rec(1, 1, &[(m, 1.75), ("flow0.ep0.handshake_secs", 0.1)]),
            rec(0, 2, &[(m, 4.0)]),
            rec(0, 0, &[(m, 1.0)]),
            rec(1, 0, &[(m, 0.5)]),
            rec(0, 1, &[(m, 2.0)]),
            rec(1, 2, &[]),
        ];
        let p = compare(&layout, &params, &records, true);
        assert_eq!((p.baseline.as_str(), p.points.len()), ("tcp", 1));
        let pt = &p.points[0];
        assert_eq!((pt.points.clone(), pt.params.len()), (vec![0, 1], 0));
        assert_eq!(pt.metrics.len(), 1, "handshake is not compared");
        let pm = &pt.metrics[0];
        assert_eq!(pm.metric, m);
        let diffs: Vec<Option<f64>> = pm.runs.iter().map(|r| r.differences[0]).collect();
        assert_eq!(diffs, [Some(-0.5), Some(-0.25), None]);
        assert_eq!(pm.runs[2].values, [Some(4.0), None]);
        assert_eq!(pm.runs[1].seed, 11);
        let s = pm.differences[0].summary.unwrap();
        assert_eq!((s.n, s.mean), (2, -0.375));
        assert_eq!(pm.values[0].unwrap().n, 3);
        // Without runs the summaries are the same.
        let q = compare(&layout, &params, &records, false);
        assert!(q.points[0].metrics[0].runs.is_empty());
        assert_eq!(q.points[0].metrics[0].differences, pm.differences);
    }

    #[test]
    fn grid_points_group_their_variants() {
        let layout = PairedLayout {
            variants: vec!["a".into(), "b".into(), "c".into()],
            flows: vec![0],
        };
        let m = "flow0.ep0.completion_secs";
        let mut params = Vec::new();
        for loss in ["0", "0.01"] {
            for v in ["a", "b", "c"] {
                params.push(vec![
                    ("topology.link.loss".to_string(), loss.to_string()),
                    ("transports".to_string(), v.to_string()),
                ]);
            }
        }
        let records: Vec<RunRecord> = (0..6).map(|p| rec(p, 0, &[(m, p as f64)])).collect();
        let pr = compare(&layout, &params, &records, true);
        assert_eq!(pr.points.len(), 2);
        let g1 = &pr.points[1];
        assert_eq!(g1.points, [3, 4, 5]);
        assert_eq!(
            g1.params,
            [("topology.link.loss".to_string(), "0.01".to_string())]
        );
        let d = &g1.metrics[0].differences;
        assert_eq!((d[0].variant.as_str(), d[1].variant.as_str()), ("b", "c"));
        assert_eq!(d[0].summary.unwrap().mean, 1.0);
        assert_eq!(d[1].summary.unwrap().mean, 2.0);
        assert_eq!(d[1].summary.unwrap().ci95, None, "one run: no interval");
    }
}
