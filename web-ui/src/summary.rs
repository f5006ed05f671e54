//! The summary numbers the page shows for a finished run: per run its status, end time,
//! events and digest; per flow its loss ratio and, for transports, completion time and
//! goodput; over repeated runs the completion time's mean and 95 % CI
//! ([`sim_core::stats::Summary`]), per sweep point: runs of different points are different
//! configurations and are never pooled.

use serde::{Deserialize, Serialize};
use sim_core::stats::Summary;
use sim_core::RunResult;

/// One line of the per-run table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    /// The run's sweep point (a paired comparison's variant x grid point).
    #[serde(default)]
    pub point: usize,
    /// The run's index within its point.
    #[serde(default)]
    pub run: u32,
    /// The run's seed.
    pub seed: u64,
    /// Its status (`completed`, `time_limit`, ...).
    pub status: String,
    /// Simulated end time, seconds.
    pub end_s: f64,
    /// Events processed.
    pub events: u64,
    /// The run digest (what `quicsim run --json` prints).
    pub digest: String,
    /// Per flow: (flow, loss ratio, completion s, goodput bit/s) of the flow's client side.
    pub flows: Vec<FlowLine>,
    /// How the run ended, in plain words, with the limit that cut it and where to raise it
    /// ([`status_note`]).
    #[serde(default)]
    pub note: String,
}

/// One flow of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowLine {
    /// Flow index.
    pub flow: u32,
    /// Packets lost / sent on the network (`None` when not a number: nothing sent).
    pub loss_ratio: Option<f64>,
    /// Transport client: completion time, seconds.
    pub completion_s: Option<f64>,
    /// Transport client: goodput, bit/s.
    pub goodput_bps: Option<f64>,
    /// QUIC client with a handover: stream data received in the interval after its first
    /// path switch, bit/s (`MigrationMetrics::throughput_bps`).
    #[serde(default)]
    pub handover_bps: Option<f64>,
}

/// The status as the JSON writes it.
fn status_name(r: &RunResult) -> String {
    serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{:?}", r.status))
}

/// One sweep point: its index, its parameters as written and a label in plain words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointInfo {
    /// The point's index.
    pub index: usize,
    /// Its sweep parameters (key, value as written); empty without a sweep.
    pub params: Vec<(String, String)>,
    /// [`point_label`] of the parameters.
    pub label: String,
}

impl PointInfo {
    /// The points of `params` (one entry per point, as `Study::point_params`).
    pub fn all(params: &[Vec<(String, String)>]) -> Vec<PointInfo> {
        params
            .iter()
            .enumerate()
            .map(|(index, p)| PointInfo {
                index,
                params: p.clone(),
                label: point_label(p),
            })
            .collect()
    }
}

/// A sweep point's parameters in plain words: each key by its last part (the full key is
/// in the tooltip and the CSV), an inline table's braces dropped:
/// `initial_window: policy = "history"`, `fast_open = true, early_data = false`.
pub fn point_label(params: &[(String, String)]) -> String {
    if params.is_empty() {
        return "no sweep".into();
    }
    params
        .iter()
        .map(|(k, v)| {
            let key = k.rsplit('.').next().unwrap_or(k);
            let v = v.trim();
            match v.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
                Some(inner) => format!("{key}: {}", inner.trim()),
                None => format!("{key} = {v}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The per-run lines of `results`, all of point 0, runs numbered in order (a study without
/// a sweep); [`lines_of_jobs`] for a sweep.
pub fn lines(results: &[RunResult]) -> Vec<RunLine> {
    let jobs: Vec<(usize, u32)> = (0..results.len()).map(|i| (0, i as u32)).collect();
    lines_of_jobs(&jobs, results)
}

/// The per-run lines of `results`, `jobs[i]` = (point, run) of `results[i]`.
pub fn lines_of_jobs(jobs: &[(usize, u32)], results: &[RunResult]) -> Vec<RunLine> {
    results
        .iter()
        .zip(jobs)
        .map(|(r, &(point, run))| RunLine {
            point,
            run,
            seed: r.seed,
            note: String::new(),
            status: status_name(r),
            end_s: r.end_time_secs,
            events: r.events,
            digest: r.digest.clone(),
            flows: r
                .flows
                .iter()
                .map(|f| {
                    let client = f
                        .endpoints
                        .iter()
                        .filter_map(|e| e.transport())
                        .find(|t| t.role == "client");
                    FlowLine {
                        flow: f.flow,
                        loss_ratio: f.loss_ratio.is_finite().then_some(f.loss_ratio),
                        completion_s: client
                            .and_then(|t| t.completion_secs)
                            .filter(|v| v.is_finite()),
                        goodput_bps: client.and_then(|t| t.goodput_bps).filter(|v| v.is_finite()),
                        handover_bps: f
                            .endpoints
                            .iter()
                            .filter_map(|e| e.quic())
                            .find(|q| q.transport.role == "client")
                            .and_then(|q| q.quic.migrations.first())
                            .map(|m| m.throughput_bps)
                            .filter(|v| v.is_finite()),
                    }
                })
                .collect(),
        })
        .collect()
}

/// Per sweep point and flow over the point's runs: the completion times' summary
/// (`(point, flow, summary)`, pairs with at least one completion), in point then flow
/// order. Runs of different points are never pooled.
pub fn completion_summaries(lines: &[RunLine]) -> Vec<(usize, u32, Summary)> {
    let mut keys: Vec<(usize, u32)> = lines
        .iter()
        .flat_map(|l| l.flows.iter().map(move |f| (l.point, f.flow)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(point, flow)| {
            let v = completions(lines, point, flow);
            (!v.is_empty()).then(|| (point, flow, Summary::of(&v)))
        })
        .collect()
}

/// The completion times of `flow` in the runs of `point`, in run order.
pub fn completions(lines: &[RunLine], point: usize, flow: u32) -> Vec<f64> {
    lines
        .iter()
        .filter(|l| l.point == point)
        .flat_map(|l| l.flows.iter().filter(|f| f.flow == flow))
        .filter_map(|f| f.completion_s)
        .collect()
}

/// How a run ended, in plain words: for a run cut short, the limit and its value as the
/// scenario's `[sim]` table spells it (`limits`: the run's), and where to raise it.
pub fn status_note(status: &str, end_s: f64, limits: &sim_core::config::SimLimits) -> String {
    match status {
        "completed" => format!("completed at {end_s:.4} s: every foreground flow finished"),
        "time_limit" => format!(
            "stopped at the time limit (sim.time_limit = {}) before every flow finished; raise it in [sim]",
            limits.time_limit
        ),
        "event_budget" => format!(
            "stopped at the event budget (sim.max_events = {}) at {end_s:.4} s before every flow finished; raise it in [sim]",
            limits.max_events
        ),
        "stalled" => format!(
            "stalled at {end_s:.4} s: nothing was left to happen but the work was unfinished (a link down for good, or every packet lost and the protocol gave up); a larger limit does not help"
        ),
        "stopped" => format!("stopped early at {end_s:.4} s (cut short before it ended)"),
        other => other.to_string(),
    }
}

/// Rate units, largest first: (bit/s per unit, name).
pub const RATE_UNITS: &[(f64, &str)] = &[
    (1e9, "Gbit/s"),
    (1e6, "Mbit/s"),
    (1e3, "kbit/s"),
    (1.0, "bit/s"),
];

/// `v` in the largest of `units` (largest first) it reaches, the last one below them all:
/// `(12.3, "Mbit/s")` for 12.3e6 in [`RATE_UNITS`].
pub fn in_unit(v: f64, units: &[(f64, &'static str)]) -> (f64, &'static str) {
    let (scale, name) = units
        .iter()
        .copied()
        .find(|(s, _)| v >= *s)
        .or(units.last().copied())
        .unwrap_or((1.0, ""));
    (v / scale, name)
}

/// Bits per second with a unit: `12.3 Mbit/s`.
pub fn fmt_rate(bps: f64) -> String {
    let (v, u) = in_unit(bps, RATE_UNITS);
    format!("{v:.3} {u}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_bulk_run() {
        let cfg = sim_core::scenario::parse_str(crate::gallery::SANDBOX)
            .unwrap()
            .base;
        let r = sim_core::run(&cfg, 1).unwrap();
        let l = lines(std::slice::from_ref(&r));
        assert_eq!(l[0].status, "completed");
        assert_eq!(l[0].digest, r.digest);
        let f = &l[0].flows[0];
        let c = f.completion_s.unwrap();
        // 1 MB over 10 Mbit/s takes at least 0.8 s of serialisation.
        assert!(c > 0.8, "{c}");
        let s = completion_summaries(&l);
        assert_eq!(s[0].2.n, 1);
        assert_eq!(fmt_rate(12_345_678.0), "12.346 Mbit/s");
    }

    /// A sweep's points get one summary each, over their own runs only (paper 000's
    /// default and history initial windows are the comparison, not one sample).
    #[test]
    fn summaries_are_per_point() {
        let text = r#"
            seed = 3
            runs = 3
            [topology]
            kind = "two_hosts"
            link = { rate = "10Mbps", delay = "20ms" }
            [[flows]]
            transport = "quic"
            workload = { kind = "bulk", bytes = "200KB" }
            [sweep]
            "topology.link.rate" = ["5Mbps", "20Mbps"]
        "#;
        let mut r = crate::runner::Runner::new(text).unwrap();
        while !r.step(100_000).unwrap() {}
        let out = r.output();
        assert_eq!(out.points.len(), 2);
        assert_eq!(out.points[1].label, "rate = 20Mbps");
        let points: Vec<(usize, u32)> = out.lines.iter().map(|l| (l.point, l.run)).collect();
        assert_eq!(points, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        let s = completion_summaries(&out.lines);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].0, s[0].2.n), (0, 3));
        assert_eq!((s[1].0, s[1].2.n), (1, 3));
        // The slow point takes longer: pooling them would have hidden it.
        assert!(s[0].2.mean > s[1].2.mean * 1.5, "{s:?}");
        assert_eq!(
            s[1].2,
            Summary::of(&completions(&out.lines, 1, 0)),
            "the point's own runs"
        );
        assert_eq!(
            point_label(&[(
                "flows.0.quic.initial_window".into(),
                "{ policy = \"history\" }".into()
            )]),
            "initial_window: policy = \"history\""
        );
    }

    /// A run cut short names the limit as `[sim]` spells it and says where to raise it.
    #[test]
    fn status_notes_name_the_limit() {
        let limits = sim_core::scenario::parse_str(crate::gallery::SANDBOX)
            .unwrap()
            .base
            .sim;
        let t = status_note("time_limit", 600.0, &limits);
        assert_eq!(
            t,
            "stopped at the time limit (sim.time_limit = 600s) before every flow finished; raise it in [sim]"
        );
        assert!(status_note("event_budget", 1.5, &limits)
            .contains("(sim.max_events = 100000000) at 1.5000 s"));
        assert!(status_note("stalled", 2.0, &limits).starts_with("stalled at 2.0000 s"));
        assert!(status_note("completed", 1.0, &limits).starts_with("completed at 1.0000 s"));
    }
}
