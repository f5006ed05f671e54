//! Which time-series columns go on which chart. Columns are grouped by what they measure
//! (the part after the last `.`: `flow0.ep1.cwnd` is a `cwnd`), so a new endpoint, stream
//! or link appears on its chart with no change; a column no rule claims goes on "other".

use crate::runner::{PlotSeries, RunMeta};

/// One chart: its title, y-axis label with unit, the scale from the column's unit to the
/// axis unit, and the column indices it draws (never `time_s`).
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: &'static str,
    /// The y axis label, with its unit.
    pub y_label: &'static str,
    /// Multiplier from the column's unit to the axis unit (seconds -> ms: 1000).
    pub scale: f64,
    /// Columns drawn.
    pub columns: Vec<usize>,
}

impl Chart {
    /// Whether the y axis starts at 0 (amounts) or spans the data (the smoothed RTT: its
    /// initial value, 333 ms before the first sample (RFC 9002 §6.2.2), would flatten a
    /// 40 ms path's variation; see [`measured_from`]).
    pub fn zero_based(&self) -> bool {
        self.y_label != "srtt (ms)"
    }
}

/// (title, y label, scale, whether a column's measure belongs).
type Rule = (&'static str, &'static str, f64, fn(&str) -> bool);

const RULES: &[Rule] = &[
    ("Congestion window and bytes in flight", "bytes", 1.0, |m| {
        matches!(m, "cwnd" | "ssthresh" | "bytes_in_flight")
    }),
    ("Delivered bytes per flow and stream", "bytes", 1.0, |m| {
        m == "delivered_bytes" || (m.starts_with("stream") && m.ends_with("_read"))
    }),
    ("Smoothed RTT", "srtt (ms)", 1000.0, |m| {
        m == "srtt_s" || m == "bbr_min_rtt_s"
    }),
    // A model-based controller's estimate (BBR, `sim_core::cc::ModelEstimate::series`).
    ("BBR bandwidth estimate", "Mbit/s", 1e-6, |m| m == "bbr_bw_bps"),
    (
        "BBR state (0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT; v3: 4-7 ProbeBW Down, Cruise, Refill, Up)",
        "state",
        1.0,
        |m| m == "bbr_state",
    ),
    ("Queue length", "packets waiting", 1.0, |m| {
        m == "queue_packets"
    }),
    (
        "Receive windows (stream and connection)",
        "bytes",
        1.0,
        |m| m.ends_with("recv_window"),
    ),
    ("Queue bytes", "bytes waiting", 1.0, |m| m == "queue_bytes"),
];

/// The charts for `columns` (the series header; the first is `time_s`), empty ones left out.
pub fn charts(columns: &[String]) -> Vec<Chart> {
    let mut out: Vec<Chart> = RULES
        .iter()
        .map(|&(title, y_label, scale, _)| Chart {
            title,
            y_label,
            scale,
            columns: Vec::new(),
        })
        .collect();
    let mut other = Chart {
        title: "Other series",
        y_label: "value",
        scale: 1.0,
        columns: Vec::new(),
    };
    for (i, c) in columns.iter().enumerate().skip(1) {
        let measure = c.rsplit('.').next().unwrap_or(c);
        match RULES.iter().position(|r| (r.3)(measure)) {
            Some(k) => out[k].columns.push(i),
            None => other.columns.push(i),
        }
    }
    out.push(other);
    out.retain(|c| !c.columns.is_empty());
    out
}

/// The charts of `s` that have something to draw (a chart whose columns have no finite
/// sample but 0 is left out: "no data", e.g. the queues of a path that never queued), and
/// the titles of those left out.
pub fn charts_with_data(s: &PlotSeries) -> (Vec<Chart>, Vec<&'static str>) {
    let (full, empty): (Vec<Chart>, Vec<Chart>) = charts(&s.columns).into_iter().partition(|c| {
        c.columns.iter().any(|&k| {
            s.rows
                .iter()
                .any(|r| drawn(r[k], c.scale).is_some_and(|v| v != 0.0))
        })
    });
    (full, empty.into_iter().map(|c| c.title).collect())
}

/// The first row of column `col` that is drawn on a chart whose axis spans the data: for
/// a chart from 0 the first row; otherwise the first row whose value differs from the
/// column's first value (the smoothed RTT holds its initial value until the first RTT
/// sample, RFC 9002 §5.3), or the first row if it never changes.
pub fn measured_from(rows: &[Vec<Option<f64>>], col: usize, chart: &Chart) -> usize {
    if chart.zero_based() {
        return 0;
    }
    let first = rows.iter().find_map(|r| r[col]);
    rows.iter()
        .position(|r| r[col].is_some() && r[col] != first)
        .unwrap_or(0)
}

/// The y axis range of `chart` over `lines` (rows, column): from 0 to 5 % above the
/// largest sample, or for a chart that spans the data ([`Chart::zero_based`]) from a
/// little below the smallest to a little above the largest sample of the measured part
/// ([`measured_from`]).
pub fn y_range(chart: &Chart, lines: &[(&[Vec<Option<f64>>], usize)]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(rows, c) in lines {
        for r in &rows[measured_from(rows, c, chart)..] {
            if let Some(v) = drawn(r[c], chart.scale) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if chart.zero_based() {
        return (0.0, if hi > 0.0 { hi * 1.05 } else { 1.0 });
    }
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.02).max(1e-6);
    ((lo - pad).max(0.0), hi + pad)
}

/// The series' colours (RGB): none of them is an event colour ([`EVENT_KINDS`]).
pub const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (44, 160, 44),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (0, 0, 128),
    (0, 128, 128),
    (128, 128, 0),
    (60, 60, 60),
    (99, 160, 255),
];

/// Line `k`'s colour.
pub fn color(k: usize) -> (u8, u8, u8) {
    PALETTE[k % PALETTE.len()]
}

/// The congestion-event markers' colour.
pub const CONGESTION_COLOR: (u8, u8, u8) = (150, 0, 0);

/// The events marked on the time axis: (kind, legend words, colour).
pub const EVENT_KINDS: [(&str, &str, (u8, u8, u8)); 5] = [
    ("loss", "packet declared lost", (214, 39, 40)),
    ("pto", "probe timeout (PTO)", (255, 127, 14)),
    ("handover", "handover", (148, 103, 189)),
    ("migration", "migration", (23, 190, 207)),
    ("blocked", "flow-control blocked", (140, 86, 75)),
];

/// How many events of each [`EVENT_KINDS`] kind `meta` has (in that order).
pub fn event_counts(meta: &RunMeta) -> [usize; 5] {
    let mut n = [0; 5];
    for e in &meta.events {
        if let Some(k) = EVENT_KINDS.iter().position(|(kind, _, _)| *kind == e.kind) {
            n[k] += 1;
        }
    }
    n
}

/// One legend entry beside a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct LegendEntry {
    /// In words.
    pub label: String,
    /// CSS colour.
    pub color: String,
    /// `line` (solid), `dashed` (the pinned run A), `marker` (congestion events) or
    /// `tick` (events on the time axis).
    pub style: &'static str,
}

/// CSS `rgb(...)` of a colour.
pub fn css((r, g, b): (u8, u8, u8)) -> String {
    format!("rgb({r},{g},{b})")
}

/// Names the series' lines in words, from the flow, endpoint and link identity.
pub struct Labeller<'a> {
    meta: &'a RunMeta,
    /// More than one flow: endpoint and flow lines say which flow.
    flows: bool,
    /// The topology has handover links: the first path's links say "first path".
    handover: bool,
}

impl<'a> Labeller<'a> {
    /// For `columns` of a run with `meta`.
    pub fn new(columns: &[String], meta: &'a RunMeta) -> Labeller<'a> {
        let mut flows: Vec<&str> = columns
            .iter()
            .filter_map(|c| c.split('.').next().filter(|f| flow_index(f).is_some()))
            .collect();
        flows.dedup();
        Labeller {
            meta,
            flows: flows.len() > 1 || meta.endpoints.iter().any(|e| e.1 > 0),
            handover: columns.iter().any(|c| c.starts_with("handover")),
        }
    }

    /// The label of column `name` (`flow0.ep1.cwnd`: "server cwnd").
    pub fn label(&self, name: &str) -> String {
        let Some((head, measure)) = name.rsplit_once('.') else {
            return name.to_string();
        };
        let mut parts = head.split('.');
        let first = parts.next().unwrap_or(head);
        if let Some(f) = flow_index(first) {
            let flow = if self.flows {
                format!("flow {f} ")
            } else {
                String::new()
            };
            return match parts.next() {
                Some(ep) => {
                    let slot: Option<u32> = ep.strip_prefix("ep").and_then(|n| n.parse().ok());
                    let role = slot
                        .and_then(|n| self.meta.endpoints.iter().find(|e| e.0 == n))
                        .map(|e| e.2.clone())
                        .unwrap_or_else(|| ep.to_string());
                    format!("{flow}{role} {}", measure_words(measure))
                }
                None => format!("{flow}{}", measure_words(measure))
                    .trim()
                    .to_string(),
            };
        }
        // A link's queue.
        let dir = |d: &str| match d {
            "forward" | "reverse" => format!("({d})"),
            "client_up" => "(client uplink)".into(),
            "client_down" => "(client downlink)".into(),
            "server_up" => "(server uplink)".into(),
            "server_down" => "(server downlink)".into(),
            d => format!("({d})"),
        };
        let q = if measure.starts_with("queue") {
            "queue"
        } else {
            measure
        };
        match head.split_once('/') {
            Some((h, d)) if h.starts_with("handover") => {
                let k: u32 = h["handover".len()..].parse().unwrap_or(0);
                format!("path after handover {} {q} {}", k + 1, dir(d))
            }
            Some((p, d)) if p.starts_with("pair") => {
                format!("pair {} access {q} {}", &p["pair".len()..], dir(d))
            }
            Some((p, d)) => format!("{p} {q} {}", dir(d)),
            None => match head {
                "forward" | "reverse" if self.handover => format!("first path {q} {}", dir(head)),
                "forward" | "reverse" => format!("bottleneck {q} {}", dir(head)),
                h => match h.strip_prefix("bottleneck_") {
                    Some(d) => format!("bottleneck {q} {}", dir(d)),
                    None => format!("link {h} {q}"),
                },
            },
        }
    }
}

/// `flow3` -> 3.
fn flow_index(s: &str) -> Option<u32> {
    s.strip_prefix("flow")?.parse().ok()
}

/// A measure in words: `bytes_in_flight` -> "bytes in flight", `stream4_read` -> "stream 4
/// read", `streams_sum_of_10000_read` -> "sum of 10000 streams read".
fn measure_words(m: &str) -> String {
    let what = |w: &str| match w {
        "recv_window" => "receive window".to_string(),
        w => w.replace('_', " "),
    };
    match m {
        "cwnd" => "cwnd".into(),
        "srtt_s" => "srtt".into(),
        "bbr_min_rtt_s" => "BBR min RTT estimate".into(),
        "bbr_bw_bps" => "BBR bandwidth estimate".into(),
        "bbr_state" => "BBR state".into(),
        "delivered_bytes" => "delivered".into(),
        m => {
            if let Some(rest) = m.strip_prefix("streams_sum_of_") {
                if let Some((n, w)) = rest.split_once('_') {
                    return format!("sum of {n} streams {}", what(w));
                }
            }
            if let Some(rest) = m.strip_prefix("stream") {
                if let Some((n, w)) = rest.split_once('_') {
                    if n.parse::<u64>().is_ok() {
                        return format!("stream {n} {}", what(w));
                    }
                }
            }
            what(m)
        }
    }
}

/// A sample as drawn: `None` for values that mean "unset" (an infinite ssthresh is
/// stored as a huge number), else the value in the axis unit.
pub fn drawn(v: Option<f64>, scale: f64) -> Option<f64> {
    v.filter(|v| v.is_finite() && v.abs() < 1e15)
        .map(|v| v * scale)
}

/// Canvas size and plot-area margins of every chart (pixels): what [`crate::plots`] draws
/// with and what the hover read-out maps the pointer through.
pub const CANVAS_W: f64 = 560.0;
/// Canvas height.
pub const CANVAS_H: f64 = 260.0;
/// Left edge of the plot area (margin + y label area).
pub const PLOT_LEFT: f64 = 6.0 + 64.0;
/// Right edge of the plot area (canvas width - margin).
pub const PLOT_RIGHT: f64 = CANVAS_W - 6.0;

/// The time axis' end: the last sample time of the series (and of the pinned one).
pub fn t_axis(rows: &[Vec<Option<f64>>], a_rows: Option<&[Vec<Option<f64>>]>) -> f64 {
    let end = |r: &[Vec<Option<f64>>]| r.last().and_then(|r| r[0]).unwrap_or(1.0);
    a_rows.map(end).unwrap_or(0.0).max(end(rows)).max(1e-9)
}

/// The row nearest to the pointer at canvas x `px` (`None` outside the plot area).
pub fn row_at(rows: &[Vec<Option<f64>>], t_max: f64, px: f64) -> Option<usize> {
    if !(PLOT_LEFT..=PLOT_RIGHT).contains(&px) || rows.is_empty() {
        return None;
    }
    let t = t_max * (px - PLOT_LEFT) / (PLOT_RIGHT - PLOT_LEFT);
    let i = rows.partition_point(|r| r[0].unwrap_or(0.0) < t);
    let best = [i.saturating_sub(1), i.min(rows.len() - 1)]
        .into_iter()
        .min_by(|&a, &b| {
            let d = |k: usize| (rows[k][0].unwrap_or(0.0) - t).abs();
            d(a).total_cmp(&d(b))
        })?;
    Some(best)
}

/// Congestion events of an endpoint read off its series: the samples where its ssthresh
/// changes to a new finite value, which RFC 9002 §7.3.2 (and RFC 9438 §4.6 for CUBIC)
/// does exactly once per congestion event (a loss or persistent congestion, not per lost
/// packet). Returned as (time s, cwnd after) for marking on the cwnd chart.
pub fn congestion_events(
    rows: &[Vec<Option<f64>>],
    cwnd: usize,
    ssthresh: usize,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut prev: Option<f64> = None;
    for r in rows {
        let s = drawn(r[ssthresh], 1.0);
        if let (Some(now), Some(t)) = (s, r[0]) {
            if prev != Some(now) {
                out.push((t, drawn(r[cwnd], 1.0).unwrap_or(now)));
            }
        }
        prev = s.or(prev);
    }
    out
}

/// The (cwnd, ssthresh) column pairs of every endpoint in `columns`.
pub fn cwnd_pairs(columns: &[String]) -> Vec<(usize, usize)> {
    columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let ep = c.strip_suffix(".cwnd")?;
            let s = columns
                .iter()
                .position(|x| *x == format!("{ep}.ssthresh"))?;
            Some((i, s))
        })
        .collect()
}

/// The column of a pinned run's series (`a_columns`) drawn over the current run's column
/// `name`: the one with the same name (same flow, endpoint and measure).
pub fn overlay_column(a_columns: &[String], name: &str) -> Option<usize> {
    a_columns
        .iter()
        .skip(1)
        .position(|c| c == name)
        .map(|i| i + 1)
}

/// How many lines a chart draws: its columns, plus those the pinned run has too.
pub fn line_count(
    chart: &Chart,
    columns: &[String],
    a_columns: Option<&[String]>,
) -> (usize, usize) {
    let b = chart.columns.len();
    let a = a_columns.map_or(0, |ac| {
        chart
            .columns
            .iter()
            .filter(|&&c| overlay_column(ac, &columns[c]).is_some())
            .count()
    });
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_grouped_by_measure() {
        let cols: Vec<String> = [
            "time_s",
            "forward.queue_packets",
            "flow0.delivered_bytes",
            "flow0.ep1.cwnd",
            "flow0.ep1.srtt_s",
            "flow0.ep0.stream4_read",
            "flow0.ep0.stream4_recv_window",
            "flow0.ep0.something_new",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = charts(&cols);
        let by = |t: &str| {
            c.iter()
                .find(|x| x.title.starts_with(t))
                .unwrap()
                .columns
                .clone()
        };
        assert_eq!(by("Congestion"), vec![3]);
        assert_eq!(by("Delivered"), vec![2, 5]);
        assert_eq!(by("Smoothed"), vec![4]);
        assert_eq!(by("Queue length"), vec![1]);
        assert_eq!(by("Receive"), vec![6]);
        assert_eq!(by("Other"), vec![7]);
        assert_eq!(drawn(Some(0.02), 1000.0), Some(20.0));
        assert_eq!(drawn(Some(f64::MAX), 1.0), None);
        assert_eq!(drawn(None, 1.0), None);
        // A pinned run's columns pair with the current ones by name.
        let a_cols: Vec<String> = ["time_s", "flow0.ep1.cwnd", "flow0.delivered_bytes"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(overlay_column(&a_cols, "flow0.delivered_bytes"), Some(2));
        assert_eq!(overlay_column(&a_cols, "time_s"), None);
        let delivered = c.iter().find(|x| x.title.starts_with("Delivered")).unwrap();
        assert_eq!(line_count(delivered, &cols, Some(&a_cols)), (1, 2));
        assert_eq!(line_count(delivered, &cols, None), (0, 2));
    }

    #[test]
    fn a_bbr_senders_model_has_its_charts() {
        let cols: Vec<String> = [
            "time_s",
            "flow0.ep1.srtt_s",
            "flow0.ep1.bbr_bw_bps",
            "flow0.ep1.bbr_min_rtt_s",
            "flow0.ep1.bbr_state",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = charts(&cols);
        let by = |t: &str| c.iter().find(|x| x.title.starts_with(t)).unwrap();
        assert_eq!(by("Smoothed").columns, vec![1, 3]);
        assert_eq!(by("BBR bandwidth").columns, vec![2]);
        assert_eq!(by("BBR bandwidth").scale, 1e-6);
        assert_eq!(by("BBR state").columns, vec![4]);
        assert!(!c.iter().any(|x| x.title.starts_with("Other")));
        assert_eq!(measure_words("bbr_min_rtt_s"), "BBR min RTT estimate");
    }

    #[test]
    fn lines_are_named_by_role_flow_and_link() {
        let meta = RunMeta {
            endpoints: vec![(0, 0, "client".into()), (1, 0, "server".into())],
            ..RunMeta::default()
        };
        let cols: Vec<String> = ["time_s", "forward.queue_packets", "flow0.ep1.cwnd"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let l = Labeller::new(&cols, &meta);
        assert_eq!(l.label("flow0.ep1.cwnd"), "server cwnd");
        assert_eq!(l.label("flow0.ep0.srtt_s"), "client srtt");
        assert_eq!(l.label("flow0.ep0.stream4_read"), "client stream 4 read");
        assert_eq!(l.label("flow0.delivered_bytes"), "delivered");
        assert_eq!(
            l.label("forward.queue_packets"),
            "bottleneck queue (forward)"
        );
        assert_eq!(
            l.label("flow0.ep0.streams_sum_of_10000_read"),
            "client sum of 10000 streams read"
        );
        // Several flows, a dumbbell and a handover.
        let meta = RunMeta {
            endpoints: vec![(2, 1, "client".into()), (3, 1, "server".into())],
            ..RunMeta::default()
        };
        let cols: Vec<String> = ["time_s", "handover0/forward.queue_bytes", "flow1.ep3.cwnd"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let l = Labeller::new(&cols, &meta);
        assert_eq!(l.label("flow1.ep3.cwnd"), "flow 1 server cwnd");
        assert_eq!(l.label("forward.queue_bytes"), "first path queue (forward)");
        assert_eq!(
            l.label("handover0/forward.queue_bytes"),
            "path after handover 1 queue (forward)"
        );
        assert_eq!(
            l.label("bottleneck_reverse.queue_packets"),
            "bottleneck queue (reverse)"
        );
        assert_eq!(
            l.label("pair0/client_up.queue_packets"),
            "pair 0 access queue (client uplink)"
        );
    }

    #[test]
    fn the_srtt_axis_spans_the_measured_samples() {
        let rows: Vec<Vec<Option<f64>>> = [0.333, 0.333, 0.041, 0.045, 0.080]
            .iter()
            .enumerate()
            .map(|(i, v)| vec![Some(i as f64), Some(*v)])
            .collect();
        let c = Chart {
            title: "Smoothed RTT",
            y_label: "srtt (ms)",
            scale: 1000.0,
            columns: vec![1],
        };
        assert_eq!(measured_from(&rows, 1, &c), 2);
        let (lo, hi) = y_range(&c, &[(&rows, 1)]);
        assert!(lo > 30.0 && lo < 41.0, "{lo}");
        assert!(hi > 80.0 && hi < 100.0, "{hi}");
        let bytes = Chart {
            y_label: "bytes",
            ..c
        };
        assert_eq!(y_range(&bytes, &[(&rows, 1)]).0, 0.0);
    }

    #[test]
    fn hover_finds_the_nearest_sample() {
        let rows: Vec<Vec<Option<f64>>> = (0..=10).map(|i| vec![Some(i as f64 * 0.1)]).collect();
        let t_max = t_axis(&rows, None);
        assert_eq!(t_max, 1.0);
        assert_eq!(row_at(&rows, t_max, PLOT_LEFT), Some(0));
        assert_eq!(row_at(&rows, t_max, PLOT_RIGHT), Some(10));
        let mid = PLOT_LEFT + 0.52 * (PLOT_RIGHT - PLOT_LEFT);
        assert_eq!(row_at(&rows, t_max, mid), Some(5));
        assert_eq!(row_at(&rows, t_max, 2.0), None);
    }

    #[test]
    fn congestion_events_of_a_lossy_run_and_none_without_loss() {
        let series = |text: &str| {
            let mut r = crate::runner::Runner::new(text).unwrap();
            while !r.step(100_000).unwrap() {}
            r.output().series.unwrap()
        };
        // A queue that holds the whole transfer: no loss, no congestion event.
        let clean = crate::gallery::SANDBOX.replace(
            "delay = \"20ms\" }",
            "delay = \"20ms\", queue = { packets = 10000 } }",
        );
        let s = series(&clean);
        let pairs = cwnd_pairs(&s.columns);
        assert_eq!(pairs.len(), 2, "{:?}", s.columns);
        for &(c, t) in &pairs {
            assert!(congestion_events(&s.rows, c, t).is_empty());
        }
        // 3 % random loss on the data path: the sender has congestion events, fewer than
        // its lost packets (one reduction per round trip at most, RFC 9002 §7.3.2).
        let lossy = crate::gallery::SANDBOX.replace(
            "delay = \"20ms\" }",
            "delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.03 } }",
        );
        let s = series(&lossy);
        let n: usize = cwnd_pairs(&s.columns)
            .iter()
            .map(|&(c, t)| congestion_events(&s.rows, c, t).len())
            .sum();
        assert!(n >= 2, "{n}");
    }
}
