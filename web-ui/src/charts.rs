//! Which time-series columns go on which chart. Columns are grouped by what they measure
//! (the part after the last `.`: `flow0.ep1.cwnd` is a `cwnd`), so a new endpoint, stream
//! or link appears on its chart with no change; a column no rule claims goes on "other".

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

/// (title, y label, scale, whether a column's measure belongs).
type Rule = (&'static str, &'static str, f64, fn(&str) -> bool);

const RULES: &[Rule] = &[
    ("Congestion window and bytes in flight", "bytes", 1.0, |m| {
        matches!(m, "cwnd" | "ssthresh" | "bytes_in_flight")
    }),
    ("Delivered bytes per flow and stream", "bytes", 1.0, |m| {
        m == "delivered_bytes" || (m.starts_with("stream") && m.ends_with("_read"))
    }),
    ("Smoothed RTT", "srtt (ms)", 1000.0, |m| m == "srtt_s"),
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
