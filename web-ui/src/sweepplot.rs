//! A sweep as a result (issue 29 item 11): a metric of one flow against a swept parameter,
//! the mean over each point's runs with its Student-t 95 % confidence interval, one line
//! per value of the other swept keys — the figure `quicsim plot-sweep` draws from a sweep
//! directory, here from the page's own runs.
//!
//! The horizontal axis is the first swept key whose values are all numbers (rates, times,
//! sizes, probabilities as the scenario writes them, read in their unit); the remaining
//! keys name the lines. With no numeric key (`initial_window` policies, say) the points sit
//! side by side, labelled by their values. Points are never pooled: a mean is over the runs
//! of one point.

use crate::summary::{PointInfo, RunLine};
use sim_core::scenario::schema::Kind;
use sim_core::stats::Summary;

/// The metrics a sweep plot can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// The flow's client completion time (s).
    Completion,
    /// Its goodput (Mbit/s).
    Goodput,
    /// Packets lost / sent (%).
    Loss,
    /// Throughput after its first handover (Mbit/s).
    Handover,
}

impl Metric {
    /// Every metric, in chooser order.
    pub const ALL: [Metric; 4] = [
        Metric::Completion,
        Metric::Goodput,
        Metric::Loss,
        Metric::Handover,
    ];

    /// The chooser's value.
    pub fn id(self) -> &'static str {
        match self {
            Metric::Completion => "completion",
            Metric::Goodput => "goodput",
            Metric::Loss => "loss",
            Metric::Handover => "handover",
        }
    }

    /// The metric of a chooser value.
    pub fn from_id(id: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.id() == id)
    }

    /// The axis title, with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            Metric::Completion => "completion time (s)",
            Metric::Goodput => "goodput (Mbit/s)",
            Metric::Loss => "packets lost (%)",
            Metric::Handover => "throughput after the handover (Mbit/s)",
        }
    }

    fn of(self, f: &crate::summary::FlowLine) -> Option<f64> {
        match self {
            Metric::Completion => f.completion_s,
            Metric::Goodput => f.goodput_bps.map(|b| b / 1e6),
            Metric::Loss => f.loss_ratio.map(|r| r * 100.0),
            Metric::Handover => f.handover_bps.map(|b| b / 1e6),
        }
        .filter(|v| v.is_finite())
    }
}

/// One point of a line: where it sits, its label, and the summary over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The sweep point.
    pub point: usize,
    /// Position on the horizontal axis (the numeric value, or the category's index).
    pub x: f64,
    /// The x key's value as the scenario writes it.
    pub x_text: String,
    /// Mean and CI over the point's runs.
    pub summary: Summary,
}

/// One line: the points sharing the values of the non-x keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Those values in words (`""`: one key swept, a single line).
    pub name: String,
    /// Its marks, by x.
    pub marks: Vec<Mark>,
}

/// What the sweep plot draws.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPlot {
    /// The metric.
    pub metric: Metric,
    /// The flow.
    pub flow: u32,
    /// The key on the horizontal axis (its last part in words) and whether it is numeric
    /// (else the marks sit at category indexes 0, 1, ...).
    pub x_key: String,
    /// Whether the x values are numbers.
    pub numeric: bool,
    /// Their unit (numeric x).
    pub unit: Unit,
    /// A logarithmic x axis fits (all positive, spanning more than 20x).
    pub log_x: bool,
    /// The category labels (non-numeric x), by index.
    pub categories: Vec<String>,
    /// The lines.
    pub lines: Vec<Line>,
}

/// The unit a swept key's values are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number.
    Plain,
    /// A rate (bit/s).
    Rate,
    /// A time (s).
    Time,
    /// A size (bytes).
    Size,
    /// A percentage written `"2%"` (a fraction).
    Percent,
}

/// A swept value as a number in its unit (rates in bit/s, times in s, sizes in bytes,
/// percentages as fractions) and the unit, if it is one.
pub fn number_unit(text: &str) -> Option<(f64, Unit)> {
    let t = text.trim().trim_matches('"');
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some((v, Unit::Plain));
    }
    for (kind, unit) in [
        (Kind::Rate, Unit::Rate),
        (Kind::Size, Unit::Size),
        (Kind::Probability, Unit::Percent),
    ] {
        if let Some(v) = crate::slider::numeric(kind, t) {
            return Some((v, unit));
        }
    }
    // Times in seconds (the slider reads nanoseconds).
    crate::slider::numeric(Kind::Time, t).map(|ns| (ns / 1e9, Unit::Time))
}

/// A swept value as a number in its unit ([`number_unit`]).
pub fn number(text: &str) -> Option<f64> {
    number_unit(text).map(|(v, _)| v)
}

/// A tick label of the x axis: the value in its unit.
pub fn tick(unit: Unit, v: f64) -> String {
    let g = |v: f64| {
        let s = format!("{:.3}", v);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let scaled = |units: &[(f64, &'static str)]| {
        let (x, u) = crate::summary::in_unit(v, units);
        format!("{} {u}", g(x))
    };
    match unit {
        Unit::Plain => g(v),
        Unit::Percent => format!("{} %", g(v * 100.0)),
        Unit::Rate => scaled(crate::summary::RATE_UNITS),
        Unit::Time => scaled(&[(1.0, "s"), (1e-3, "ms"), (1e-6, "µs")]),
        Unit::Size => scaled(&[(1e6, "MB"), (1e3, "KB"), (1.0, "B")]),
    }
}

/// The metrics with a value in some run of `flow`.
pub fn metrics_with_data(lines: &[RunLine], flow: u32) -> Vec<Metric> {
    Metric::ALL
        .into_iter()
        .filter(|m| {
            lines
                .iter()
                .flat_map(|l| l.flows.iter().filter(|f| f.flow == flow))
                .any(|f| m.of(f).is_some())
        })
        .collect()
}

/// The plot of `metric` for `flow` over the sweep `points`; `None` without a sweep (one
/// point) or with no value of the metric.
pub fn plot(
    points: &[PointInfo],
    lines: &[RunLine],
    metric: Metric,
    flow: u32,
) -> Option<SweepPlot> {
    if points.len() < 2 {
        return None;
    }
    let keys: Vec<String> = points[0].params.iter().map(|(k, _)| k.clone()).collect();
    let value = |p: &PointInfo, k: &str| {
        p.params
            .iter()
            .find(|(pk, _)| pk == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // The x key: the first whose values are numbers and differ, else the first that differs.
    let varies = |k: &str| points.iter().any(|p| value(p, k) != value(&points[0], k));
    let x_key = keys
        .iter()
        .find(|k| varies(k) && points.iter().all(|p| number(&value(p, k)).is_some()))
        .or_else(|| keys.iter().find(|k| varies(k)))
        .cloned()?;
    let numeric = points.iter().all(|p| number(&value(p, &x_key)).is_some());
    let mut categories: Vec<String> = Vec::new();
    if !numeric {
        for p in points {
            let v = value(p, &x_key);
            if !categories.contains(&v) {
                categories.push(v);
            }
        }
    }
    let short = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let mut out: Vec<Line> = Vec::new();
    for p in points {
        let vals: Vec<f64> = lines
            .iter()
            .filter(|l| l.point == p.index)
            .flat_map(|l| l.flows.iter().filter(|f| f.flow == flow))
            .filter_map(|f| metric.of(f))
            .collect();
        if vals.is_empty() {
            continue;
        }
        let xt = value(p, &x_key);
        let x = if numeric {
            number(&xt).unwrap_or(0.0)
        } else {
            categories.iter().position(|c| *c == xt).unwrap_or(0) as f64
        };
        let name = keys
            .iter()
            .filter(|k| **k != x_key && varies(k))
            .map(|k| format!("{} = {}", short(k), value(p, k).trim_matches('"')))
            .collect::<Vec<_>>()
            .join(", ");
        let mark = Mark {
            point: p.index,
            x,
            x_text: xt,
            summary: Summary::of(&vals),
        };
        match out.iter_mut().find(|l| l.name == name) {
            Some(l) => l.marks.push(mark),
            None => out.push(Line {
                name,
                marks: vec![mark],
            }),
        }
    }
    if out.is_empty() {
        return None;
    }
    for l in &mut out {
        l.marks.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let xs: Vec<f64> = out
        .iter()
        .flat_map(|l| l.marks.iter().map(|m| m.x))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let unit = points
        .iter()
        .find_map(|p| number_unit(&value(p, &x_key)))
        .map_or(Unit::Plain, |(_, u)| u);
    Some(SweepPlot {
        metric,
        flow,
        x_key: short(&x_key),
        numeric,
        unit,
        log_x: numeric && lo > 0.0 && hi / lo > 20.0,
        categories: categories
            .iter()
            .map(|c| c.trim_matches('"').to_string())
            .collect(),
        lines: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::FlowLine;

    fn line(point: usize, run: u32, c: f64) -> RunLine {
        RunLine {
            point,
            run,
            seed: run as u64,
            status: "completed".into(),
            end_s: c,
            events: 1,
            digest: String::new(),
            flows: vec![FlowLine {
                flow: 0,
                loss_ratio: Some(0.01),
                completion_s: Some(c),
                goodput_bps: Some(8e6 / c),
                handover_bps: None,
            }],
            note: String::new(),
        }
    }

    fn points(params: &[&[(&str, &str)]]) -> Vec<PointInfo> {
        PointInfo::all(
            &params
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect()
                })
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn two_keys_give_a_line_per_value_of_the_second_with_a_mean_per_point() {
        // loss x delay, 2 runs each; point = loss index * 2 + delay index.
        let pts = points(&[
            &[
                ("topology.link.loss", "0.0"),
                ("topology.link.delay", "\"10ms\""),
            ],
            &[
                ("topology.link.loss", "0.0"),
                ("topology.link.delay", "\"50ms\""),
            ],
            &[
                ("topology.link.loss", "0.02"),
                ("topology.link.delay", "\"10ms\""),
            ],
            &[
                ("topology.link.loss", "0.02"),
                ("topology.link.delay", "\"50ms\""),
            ],
        ]);
        let mut lines = Vec::new();
        for p in 0..4 {
            lines.push(line(p, 0, 1.0 + p as f64));
            lines.push(line(p, 1, 3.0 + p as f64));
        }
        let plot = plot(&pts, &lines, Metric::Completion, 0).unwrap();
        assert_eq!(plot.x_key, "loss");
        assert!(plot.numeric);
        assert_eq!(plot.lines.len(), 2);
        assert_eq!(plot.lines[0].name, "delay = 10ms");
        assert_eq!(plot.lines[1].name, "delay = 50ms");
        let m = &plot.lines[1].marks[1];
        assert_eq!((m.point, m.x), (3, 0.02));
        // Mean of 4 and 6; never pooled with another point.
        assert_eq!(m.summary.mean, 5.0);
        assert_eq!(m.summary.n, 2);
        let (lo, hi) = m.summary.ci95.unwrap();
        assert!(lo < 5.0 && hi > 5.0);
    }

    #[test]
    fn policies_sit_side_by_side_as_categories() {
        let pts = points(&[
            &[("flows.0.quic.initial_window", "{ policy = \"default\" }")],
            &[("flows.0.quic.initial_window", "{ policy = \"history\" }")],
        ]);
        let lines = vec![line(0, 0, 2.0), line(1, 0, 1.0)];
        let plot = plot(&pts, &lines, Metric::Goodput, 0).unwrap();
        assert!(!plot.numeric);
        assert_eq!(plot.lines.len(), 1);
        assert_eq!(plot.categories.len(), 2);
        assert_eq!(plot.lines[0].marks[1].x, 1.0);
        assert_eq!(plot.lines[0].marks[1].summary.mean, 8.0);
    }

    #[test]
    fn units_are_read_and_a_wide_span_is_logarithmic() {
        assert_eq!(number("\"10Mbps\""), Some(1e7));
        assert_eq!(number("\"50ms\""), Some(0.05));
        assert_eq!(number("\"2%\""), Some(0.02));
        assert_eq!(number("\"64KB\""), Some(64e3));
        assert_eq!(number("history"), None);
        assert_eq!(tick(Unit::Rate, 1e7), "10 Mbit/s");
        assert_eq!(tick(Unit::Time, 0.05), "50 ms");
        assert_eq!(tick(Unit::Percent, 0.025), "2.5 %");
        let pts = points(&[
            &[("topology.link.rate", "\"1Mbps\"")],
            &[("topology.link.rate", "\"100Mbps\"")],
        ]);
        let lines = vec![line(0, 0, 2.0), line(1, 0, 1.0)];
        assert!(plot(&pts, &lines, Metric::Completion, 0).unwrap().log_x);
        // One point: no sweep plot.
        assert!(plot(&pts[..1], &lines, Metric::Completion, 0).is_none());
    }

    #[test]
    fn only_metrics_with_values_are_offered() {
        let lines = vec![line(0, 0, 2.0)];
        let m = metrics_with_data(&lines, 0);
        assert_eq!(m, vec![Metric::Completion, Metric::Goodput, Metric::Loss]);
    }
}
