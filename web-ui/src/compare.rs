//! A/B compare: the difference summary between a pinned configuration's results (A) and
//! the current ones (B). Per flow, each metric is averaged over the runs that have it:
//! completion time, goodput, loss ratio and the handover throughput (QUIC migration).

use crate::summary::{FlowLine, RunLine};

/// One row of the difference table.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    /// Flow index.
    pub flow: u32,
    /// What is compared.
    pub metric: &'static str,
    /// The unit the values are shown in.
    pub unit: &'static str,
    /// A's value (mean over its runs), in `unit`.
    pub a: Option<f64>,
    /// B's value.
    pub b: Option<f64>,
}

impl DiffRow {
    /// `b - a`, when both exist.
    pub fn delta(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }

    /// `(b - a) / a` as a percentage, when both exist and `a` is not 0.
    pub fn relative_pct(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a != 0.0).then(|| (b - a) / a * 100.0)
    }
}

/// (name, unit, scale from the line's unit, getter).
type Metric = (
    &'static str,
    &'static str,
    f64,
    fn(&FlowLine) -> Option<f64>,
);

const METRICS: &[Metric] = &[
    ("completion time", "s", 1.0, |f| f.completion_s),
    ("goodput", "Mbit/s", 1e-6, |f| f.goodput_bps),
    ("loss ratio", "%", 100.0, |f| f.loss_ratio),
    ("handover throughput", "Mbit/s", 1e-6, |f| f.handover_bps),
];

fn mean(lines: &[RunLine], flow: u32, get: fn(&FlowLine) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.flows.iter().filter(|f| f.flow == flow))
        .filter_map(get)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The rows comparing `a` with `b`: every flow either has, every metric either side
/// reports for it.
pub fn diff(a: &[RunLine], b: &[RunLine]) -> Vec<DiffRow> {
    let mut flows: Vec<u32> = a
        .iter()
        .chain(b)
        .flat_map(|l| l.flows.iter().map(|f| f.flow))
        .collect();
    flows.sort_unstable();
    flows.dedup();
    let mut out = Vec::new();
    for flow in flows {
        for &(metric, unit, scale, get) in METRICS {
            let (va, vb) = (mean(a, flow, get), mean(b, flow, get));
            if va.is_some() || vb.is_some() {
                out.push(DiffRow {
                    flow,
                    metric,
                    unit,
                    a: va.map(|v| v * scale),
                    b: vb.map(|v| v * scale),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Runner;

    fn lines_of(text: &str) -> Vec<RunLine> {
        let mut r = Runner::new(text).unwrap();
        while !r.step(100_000).unwrap() {}
        r.output().lines
    }

    #[test]
    fn a_slower_link_takes_longer_and_the_diff_says_so() {
        let a = lines_of(crate::gallery::SANDBOX);
        let b = lines_of(&crate::gallery::SANDBOX.replace("\"10Mbps\"", "\"5Mbps\""));
        let rows = diff(&a, &b);
        let c = rows
            .iter()
            .find(|r| r.flow == 0 && r.metric == "completion time")
            .unwrap();
        // Half the rate: the transfer's serialisation time doubles.
        assert!(c.delta().unwrap() > 0.5, "{c:?}");
        assert!(c.relative_pct().unwrap() > 50.0, "{c:?}");
        let g = rows.iter().find(|r| r.metric == "goodput").unwrap();
        assert!(g.a.unwrap() > g.b.unwrap());
        assert!(g.a.unwrap() <= 10.0, "goodput in Mbit/s: {g:?}");
        // No handover in the sandbox: no such row.
        assert!(rows.iter().all(|r| r.metric != "handover throughput"));
        // Identical runs: zero difference.
        assert!(diff(&a, &a).iter().all(|r| r.delta() == Some(0.0)));
    }
}
