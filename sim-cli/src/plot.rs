//! `quicsim plot`: line plots of time-series CSV files (as written by `quicsim run --series
//! --out DIR`) with plotters, and `plot-sweep`'s summaries with confidence intervals.
//!
//! Every figure is written as SVG, or as PNG when the output path ends in `.png` (the
//! bitmap backend draws text with DejaVu Sans, embedded: `assets/DejaVuSans.ttf`, Bitstream
//! Vera licence in `assets/DejaVuSans-LICENSE.txt`, so PNGs look the same on every machine).

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// The embedded font of PNG figures (and of text layout in SVG ones).
#[cfg(not(target_arch = "wasm32"))]
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Whether `out` is written as PNG (else SVG).
fn is_png(out: &Path) -> bool {
    out.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// Draws on an SVG or PNG backend of `size` by `out`'s extension, into a temporary file
/// renamed to `out` when the figure is complete ([`crate::files::draw_atomic`]).
fn with_backend(
    out: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&dyn Fn(&dyn std::fmt::Display) -> String, Area) -> Result<(), String>,
) -> Result<(), String> {
    crate::files::draw_atomic(out, |tmp| draw_on(out, tmp, size, draw))
}

/// [`with_backend`] drawing into `path` (messages name `out`).
fn draw_on(
    out: &Path,
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&dyn Fn(&dyn std::fmt::Display) -> String, Area) -> Result<(), String>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    // Text is laid out (both backends) and drawn (PNG) with the embedded font.
    #[cfg(not(target_arch = "wasm32"))]
    {
        static REGISTER: std::sync::Once = std::sync::Once::new();
        REGISTER.call_once(|| {
            // The embedded file is a valid font; a failure would show as a drawing error.
            let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
        });
    }
    if is_png(out) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&err, Area::Png(root))
        }
        #[cfg(target_arch = "wasm32")]
        {
            Err(err(
                &"PNG figures need the native build (the wasm build writes SVG only)",
            ))
        }
    } else {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw(&err, Area::Svg(root))
    }
}

/// A drawing area of either backend.
enum Area<'a> {
    Svg(DrawingArea<SVGBackend<'a>, Shift>),
    #[cfg(not(target_arch = "wasm32"))]
    Png(DrawingArea<BitMapBackend<'a>, Shift>),
}

/// Runs `$body` with `$root` bound to the area, whatever its backend.
#[cfg(not(target_arch = "wasm32"))]
macro_rules! on_area {
    ($area:expr, $root:ident => $body:expr) => {
        match $area {
            Area::Svg($root) => $body,
            Area::Png($root) => $body,
        }
    };
}

/// Runs `$body` with `$root` bound to the area (SVG only in the wasm build).
#[cfg(target_arch = "wasm32")]
macro_rules! on_area {
    ($area:expr, $root:ident => $body:expr) => {
        match $area {
            Area::Svg($root) => $body,
        }
    };
}

/// An axis tick as a person writes it: plotters places ticks at multiples of a step computed
/// in binary floating point (0.12000000000000001, 0.19999999999999998); round to nine
/// decimals and drop the trailing zeros ("0.12", "0.2", "15", "-3.5").
pub fn tick_label(x: f64) -> String {
    let s = format!("{x:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A category label for a sweep value: an inline table `{ policy = "history" }` is shown
/// by its first string value (`history`), anything else as written.
pub fn short_label(v: &str) -> String {
    if v.trim_start().starts_with('{') {
        if let Ok(t) = format!("v = {v}").parse::<toml::Table>() {
            if let Some(toml::Value::Table(inner)) = t.get("v") {
                if let Some(s) = inner.values().find_map(|x| x.as_str()) {
                    return s.to_string();
                }
            }
        }
    }
    v.to_string()
}

/// One line of [`plot_lines`].
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws `lines` (x, y) with axis labels to `out` (SVG, or PNG by extension).
pub fn plot_lines(
    lines: &[Line],
    title: &str,
    xlabel: &str,
    ylabel: &str,
    out: &Path,
) -> Result<(), String> {
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(a, b) in lines.iter().flat_map(|l| l.points.iter()) {
        x0 = x0.min(a);
        x1 = x1.max(a);
        y1 = y1.max(b);
    }
    if !x0.is_finite() || x1 <= x0 {
        return Err(format!("{}: nothing to plot", out.display()));
    }
    with_backend(out, (1000, 560), |err, area| {
        on_area!(area, root => {
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(80)
                .build_cartesian_2d(x0..x1, 0.0..(y1 * 1.05).max(1e-9))
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_desc(xlabel)
                .y_desc(ylabel)
                .draw()
                .map_err(|e| err(&e))?;
            for (k, l) in lines.iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(l.points.iter().copied(), color))
                    .map_err(|e| err(&e))?
                    .label(l.label.clone())
                    .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], color));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        })
    })
}

const PALETTE: [&RGBColor; 6] = [&BLUE, &RED, &GREEN, &MAGENTA, &CYAN, &BLACK];

/// One column to draw, with the factor its values are multiplied by.
pub struct Curve {
    /// The spec as given (legend label).
    pub label: String,
    /// CSV column name.
    pub column: String,
    /// Multiplier (e.g. 1/1250 to show a window in packets).
    pub scale: f64,
}

/// Parses `name` or `name*factor` / `name/divisor`.
pub fn parse_curve(spec: &str) -> Result<Curve, String> {
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .map_err(|_| format!("--y {spec:?}: {s:?} is not a number"))
    };
    if let Some((c, f)) = spec.split_once('*') {
        return Ok(Curve {
            label: spec.into(),
            column: c.trim().into(),
            scale: num(f)?,
        });
    }
    if let Some((c, d)) = spec.split_once('/') {
        let d = num(d)?;
        if d == 0.0 {
            return Err(format!("--y {spec:?}: division by zero"));
        }
        return Ok(Curve {
            label: spec.into(),
            column: c.trim().into(),
            scale: 1.0 / d,
        });
    }
    Ok(Curve {
        label: spec.into(),
        column: spec.trim().into(),
        scale: 1.0,
    })
}

/// Reads the CSV, draws `curves` against column `x`, writes `out` (SVG).
pub fn plot(
    csv: &Path,
    x: &str,
    curves: &[Curve],
    title: &str,
    ylabel: &str,
    out: &Path,
) -> Result<(), String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| format!("{}: empty file", csv.display()))?
        .split(',')
        .collect();
    let col = |name: &str| {
        header.iter().position(|h| *h == name).ok_or_else(|| {
            format!(
                "{}: no column {name:?}; columns are: {}",
                csv.display(),
                header.join(", ")
            )
        })
    };
    let xi = col(x)?;
    let idx: Vec<usize> = curves
        .iter()
        .map(|c| col(&c.column))
        .collect::<Result<_, _>>()?;
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); curves.len()];
    for (n, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        let get = |i: usize| -> Result<f64, String> {
            cells
                .get(i)
                .ok_or_else(|| format!("{}: row {} is short", csv.display(), n + 2))?
                .parse::<f64>()
                .map_err(|_| format!("{}: row {}: not a number", csv.display(), n + 2))
        };
        let xv = get(xi)?;
        for (k, &i) in idx.iter().enumerate() {
            let v = get(i)? * curves[k].scale;
            if v.is_finite() {
                series[k].push((xv, v));
            }
        }
    }
    let lines: Vec<Line> = series
        .into_iter()
        .zip(curves)
        .map(|(points, c)| Line {
            label: c.label.clone(),
            points,
        })
        .collect();
    plot_lines(&lines, title, x, ylabel, out).map_err(|e| {
        if e.ends_with("nothing to plot") {
            format!("{}: nothing to plot", csv.display())
        } else {
            e
        }
    })
}

/// One point of a summary: its parameters and the summary of the plotted metric.
struct SummaryPoint {
    params: Vec<(String, String)>,
    mean: f64,
    ci: Option<(f64, f64)>,
}

/// A sweep parameter value as a number for an axis: plain numbers as they are, durations
/// in seconds, sizes in bytes, rates in bit/s; `None` if it is none of these.
fn axis_value(v: &str) -> Option<f64> {
    if let Ok(x) = v.parse::<f64>() {
        return Some(x);
    }
    if let Ok(d) = sim_core::units::parse_duration(v) {
        return Some(d.0 as f64 / 1e9);
    }
    if let Ok(r) = sim_core::units::parse_rate(v) {
        return Some(r.0 as f64);
    }
    sim_core::units::parse_bytes(v).ok().map(|b| b.0 as f64)
}

/// One drawn point: x, mean, 95 % CI.
type Marker = (f64, f64, Option<(f64, f64)>);

/// What `quicsim plot-sweep` draws.
pub struct SweepPlot<'a> {
    /// The sweep directory (with `summary.json`).
    pub dir: &'a Path,
    /// Sweep key on the horizontal axis.
    pub x: &'a str,
    /// Metric on the vertical axis, optionally `*factor` or `/divisor`.
    pub y: &'a Curve,
    /// Sweep key whose values become separate lines.
    pub series: Option<&'a str>,
    /// `KEY=VALUE` filters on the other sweep keys.
    pub filters: &'a [(String, String)],
    pub title: &'a str,
    pub xlabel: &'a str,
    pub ylabel: &'a str,
    pub out: &'a Path,
    /// How the legend names the series key (default: the key).
    pub series_name: Option<&'a str>,
    /// The paper's numbers, drawn on the same axes with their own markers.
    pub paper: &'a [PaperMark],
}

/// What a paper reported at one point, drawn beside our means.
#[derive(Clone, Debug, PartialEq)]
pub struct PaperMark {
    /// The point's value of the x key, as the sweep wrote it.
    pub x: String,
    /// Its value of the series key, if the figure has one.
    pub series: Option<String>,
    /// Where it is drawn (in the figure's unit): the paper's value, the paper's relative
    /// change applied to our baseline, or our mean (a direction).
    pub y: f64,
    pub kind: MarkKind,
}

/// How a [`PaperMark`] came from the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// The paper's number (a hollow square, "paper" in the legend).
    Value,
    /// The paper's relative change against its baseline, applied to our baseline's mean
    /// (a hollow triangle).
    Change,
    /// Only a direction against the baseline: an arrow and "paper: lower" / "higher"
    /// beside our mean.
    Lower,
    Higher,
}

/// The sweep parameters of a point of `summary.json`.
fn point_params(pt: &serde_json::Value) -> Vec<(String, String)> {
    pt["params"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|kv| {
                    (
                        kv[0].as_str().unwrap_or_default().to_string(),
                        kv[1].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Checks every `--where KEY=VALUE`: KEY is a sweep key and some point has VALUE for it;
/// otherwise the error says which key or value matched nothing, and what there is.
fn check_filters(
    path: &Path,
    points: &[serde_json::Value],
    filters: &[(String, String)],
) -> Result<(), String> {
    let params: Vec<Vec<(String, String)>> = points.iter().map(point_params).collect();
    let keys: Vec<&str> = params
        .first()
        .map(|p| p.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    for (k, v) in filters {
        if !keys.contains(&k.as_str()) {
            return Err(format!(
                "--where {k}={v}: {k:?} is not a sweep key of {}; keys are: {}",
                path.display(),
                keys.join(", ")
            ));
        }
        let mut values: Vec<&str> = Vec::new();
        for (pk, pv) in params.iter().flatten() {
            if pk == k && !values.contains(&pv.as_str()) {
                values.push(pv);
            }
        }
        if !values.contains(&v.as_str()) {
            return Err(format!(
                "--where {k}={v}: no point has {k} = {v}; its values are: {} (as written in the scenario)",
                values.join(", ")
            ));
        }
    }
    Ok(())
}

/// Draws the mean of a metric per sweep point against a sweep key, one line per value of
/// the series key, with the 95 % confidence interval of each mean as an error bar.
pub fn plot_sweep(p: &SweepPlot) -> Result<(), String> {
    let path = p.dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let points = doc["points"]
        .as_array()
        .ok_or_else(|| format!("{}: no points", path.display()))?;
    let mut rows: Vec<SummaryPoint> = Vec::new();
    let mut metric_seen = false;
    let mut kept = 0;
    check_filters(&path, points, p.filters)?;
    for pt in points {
        let params = point_params(pt);
        if p.filters
            .iter()
            .any(|(k, v)| params.iter().any(|(pk, pv)| pk == k && pv != v))
        {
            continue;
        }
        kept += 1;
        let Some(m) = pt["metrics"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m[0] == p.y.column.as_str()))
        else {
            continue;
        };
        metric_seen = true;
        let s = &m[1];
        let k = p.y.scale;
        rows.push(SummaryPoint {
            params,
            mean: s["mean"].as_f64().unwrap_or(f64::NAN) * k,
            ci: s["ci95"]
                .as_array()
                .and_then(|c| Some((c[0].as_f64()? * k, c[1].as_f64()? * k))),
        });
    }
    if kept == 0 {
        let shown: Vec<String> = p.filters.iter().map(|(k, v)| format!("{k}={v}")).collect();
        return Err(format!(
            "--where {}: no point has all of these values together",
            shown.join(" --where ")
        ));
    }
    if !metric_seen {
        let names: Vec<&str> = points
            .first()
            .and_then(|pt| pt["metrics"].as_array())
            .map(|ms| ms.iter().filter_map(|m| m[0].as_str()).collect())
            .unwrap_or_default();
        return Err(format!(
            "{}: no metric {:?}; metrics are: {}",
            path.display(),
            p.y.column,
            names.join(", ")
        ));
    }
    let keys: Vec<String> = rows
        .first()
        .map(|r| r.params.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    for want in std::iter::once(p.x).chain(p.series) {
        if !keys.iter().any(|k| k == want) {
            return Err(format!(
                "{}: {want:?} is not a sweep key; keys are: {}",
                path.display(),
                keys.join(", ")
            ));
        }
    }
    let value = |r: &SummaryPoint, key: &str| {
        r.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // Every other key must be fixed by the filters (or take one value).
    for k in &keys {
        if k == p.x || Some(k.as_str()) == p.series {
            continue;
        }
        let mut vals: Vec<String> = rows.iter().map(|r| value(r, k)).collect();
        vals.sort();
        vals.dedup();
        if vals.len() > 1 {
            return Err(format!(
                "sweep key {k:?} takes {} values ({}): draw it as --series or fix it with --where {k}=VALUE",
                vals.len(),
                vals.join(", ")
            ));
        }
    }
    // x positions: numeric when every value parses as a number, a duration, a rate or a
    // size; otherwise categories in sweep order.
    let mut xs: Vec<String> = Vec::new();
    for r in &rows {
        let v = value(r, p.x);
        if !xs.contains(&v) {
            xs.push(v);
        }
    }
    let numeric: Option<Vec<f64>> = xs.iter().map(|v| axis_value(v)).collect();
    let xpos = |v: &str| -> f64 {
        match &numeric {
            Some(n) => n[xs.iter().position(|x| x == v).unwrap_or(0)],
            None => xs.iter().position(|x| x == v).unwrap_or(0) as f64,
        }
    };
    let mut groups: Vec<(String, Vec<Marker>)> = Vec::new();
    for r in &rows {
        let g = p.series.map(|s| value(r, s)).unwrap_or_default();
        let entry = (xpos(&value(r, p.x)), r.mean, r.ci);
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, v)) => v.push(entry),
            None => groups.push((g, vec![entry])),
        }
    }
    for (_, v) in &mut groups {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for (_, v) in &groups {
        for &(x, m, ci) in v {
            x0 = x0.min(x);
            x1 = x1.max(x);
            let (lo, hi) = ci.unwrap_or((m, m));
            y0 = y0.min(lo.min(m));
            y1 = y1.max(hi.max(m));
        }
    }
    // The paper's marks whose x is one of ours (and series, when the figure has one).
    let series_names: Vec<String> = groups.iter().map(|(name, _)| name.clone()).collect();
    let marks: Vec<(f64, f64, usize, MarkKind)> = p
        .paper
        .iter()
        .filter(|m| xs.contains(&m.x) && m.y.is_finite())
        .filter_map(|m| {
            let k = match (&m.series, p.series) {
                (Some(s), Some(_)) => series_names.iter().position(|n| n == s)?,
                _ => 0,
            };
            Some((xpos(&m.x), m.y, k, m.kind))
        })
        .collect();
    for &(x, y, _, _) in &marks {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() || !y1.is_finite() {
        return Err(format!("{}: nothing to plot", path.display()));
    }
    let pad = ((x1 - x0) * 0.05).max(if numeric.is_some() { 1e-12 } else { 0.5 });
    let (x0, x1) = (x0 - pad, x1 + pad);
    let y0 = y0.min(0.0);
    let y1 = if y1 > y0 { y1 * 1.05 } else { y0 + 1.0 };
    // The legend goes in the corner with the fewest drawn points (means, CI ends, marks).
    let mut drawn: Vec<(f64, f64)> = Vec::new();
    for (_, v) in &groups {
        for &(x, m, ci) in v {
            drawn.push((x, m));
            if let Some((lo, hi)) = ci {
                drawn.extend([(x, lo), (x, hi)]);
            }
        }
    }
    drawn.extend(marks.iter().map(|&(x, y, _, _)| (x, y)));
    let legend_at = legend_corner(&drawn, (x0, x1), (y0, y1));
    let cats = xs.clone();
    let is_numeric = numeric.is_some();
    let fmt_x = move |x: &f64| {
        if is_numeric {
            tick_label(*x)
        } else {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < cats.len() {
                short_label(&cats[i as usize])
            } else {
                String::new()
            }
        }
    };
    with_backend(p.out, (1000, 560), |err, area| {
        on_area!(area, root => {
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(p.title, ("sans-serif", 20))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(80)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(&e))?;
            let mut mesh = chart.configure_mesh();
            mesh.x_desc(if p.xlabel.is_empty() { p.x } else { p.xlabel })
                .y_desc(p.ylabel)
                .x_label_formatter(&fmt_x);
            if !is_numeric {
                mesh.x_labels(xs.len() * 2 + 1);
            }
            mesh.draw().map_err(|e| err(&e))?;
            for (k, (name, v)) in groups.into_iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                let label = match p.series {
                    Some(s) => format!("{} = {}", p.series_name.unwrap_or(s), short_label(&name)),
                    None => p.y.label.clone(),
                };
                chart
                    .draw_series(LineSeries::new(v.iter().map(|&(x, m, _)| (x, m)), color))
                    .map_err(|e| err(&e))?
                    .label(label)
                    .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], color));
                chart
                    .draw_series(v.iter().filter_map(|&(x, m, ci)| {
                        ci.map(|(lo, hi)| ErrorBar::new_vertical(x, lo, m, hi, color.filled(), 8))
                    }))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(
                        v.iter()
                            .map(|&(x, m, _)| Circle::new((x, m), 3, color.filled())),
                    )
                    .map_err(|e| err(&e))?;
            }
            draw_marks(&mut chart, &marks, p, &series_names).map_err(|e| err(&e))?;
            chart
                .configure_series_labels()
                .position(legend_at)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))
        })
    })
}

/// The corner of the plot area (x and y ranges) holding the fewest of `points`: the
/// legend's place (a corner is the outer 45 % of the width and 35 % of the height; ties
/// go to the upper right, then upper left, lower right, lower left).
fn legend_corner(points: &[(f64, f64)], xr: (f64, f64), yr: (f64, f64)) -> SeriesLabelPosition {
    let nx = |x: f64| (x - xr.0) / (xr.1 - xr.0);
    let ny = |y: f64| (y - yr.0) / (yr.1 - yr.0);
    let count = |right: bool, upper: bool| {
        points
            .iter()
            .filter(|&&(x, y)| {
                let (a, b) = (nx(x), ny(y));
                (if right { a > 0.55 } else { a < 0.45 })
                    && (if upper { b > 0.65 } else { b < 0.35 })
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ]
    .into_iter()
    .min_by_key(|&(_, r, u)| count(r, u))
    .map_or(SeriesLabelPosition::UpperRight, |(p, _, _)| p)
}

/// Draws the paper's marks (x, y, series index, kind) with one legend entry per kind and
/// series: hollow squares for its numbers ("paper"), hollow triangles for its relative
/// changes applied to our baseline, an arrow and a word for a direction.
fn draw_marks<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    marks: &[(f64, f64, usize, MarkKind)],
    p: &SweepPlot,
    series_names: &[String],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mut kinds: Vec<(MarkKind, usize)> = marks.iter().map(|m| (m.3, m.2)).collect();
    kinds.dedup();
    let mut seen: Vec<(MarkKind, usize)> = Vec::new();
    for key in kinds {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let (kind, k) = key;
        let color = if p.series.is_some() {
            PALETTE[k % PALETTE.len()]
        } else {
            &BLACK
        };
        let style = ShapeStyle::from(color).stroke_width(2);
        let of = |which: &str| match p.series {
            Some(s) if !series_names.is_empty() => format!(
                "{which}, {} = {}",
                p.series_name.unwrap_or(s),
                short_label(&series_names[k])
            ),
            _ => which.to_string(),
        };
        let here = marks.iter().filter(|m| (m.3, m.2) == key);
        match kind {
            MarkKind::Value => {
                chart
                    .draw_series(here.map(|&(x, y, _, _)| {
                        EmptyElement::at((x, y)) + Rectangle::new([(-6, -6), (6, 6)], style)
                    }))?
                    .label(of("paper"))
                    .legend(move |(a, b)| {
                        EmptyElement::at((a + 10, b)) + Rectangle::new([(-5, -5), (5, 5)], style)
                    });
            }
            MarkKind::Change => {
                chart
                    .draw_series(here.map(|&(x, y, _, _)| {
                        EmptyElement::at((x, y)) + TriangleMarker::new((0, 0), 8, style)
                    }))?
                    .label(of("paper (change applied to our baseline)"))
                    .legend(move |(a, b)| {
                        EmptyElement::at((a + 10, b)) + TriangleMarker::new((0, 0), 7, style)
                    });
            }
            MarkKind::Lower | MarkKind::Higher => {
                let (arrow, word) = if kind == MarkKind::Lower {
                    ("↓", "lower")
                } else {
                    ("↑", "higher")
                };
                let font = ("sans-serif", 16).into_font().color(color);
                let text = format!("{arrow} paper: {word}");
                // Right of the point, or left of it in the right quarter of the plot (so
                // the words stay inside the figure).
                let (xa, xb) = (chart.x_range().start, chart.x_range().end);
                chart
                    .draw_series(here.map(|&(x, y, _, _)| {
                        let (dx, h) = if (x - xa) / (xb - xa) > 0.75 {
                            (-10, HPos::Right)
                        } else {
                            (10, HPos::Left)
                        };
                        EmptyElement::at((x, y))
                            + Text::new(
                                text.clone(),
                                (dx, -8),
                                font.clone().pos(Pos::new(h, VPos::Center)),
                            )
                    }))?
                    .label(of(&format!("paper: {word} than its baseline ({arrow})")))
                    .legend(move |(a, b)| {
                        EmptyElement::at((a, b))
                            + Text::new(arrow, (4, -8), ("sans-serif", 16).into_font().color(color))
                    });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tick_tests {
    use super::tick_label;

    #[test]
    fn tick_labels_carry_no_binary_noise() {
        assert_eq!(tick_label(0.12000000000000001), "0.12");
        assert_eq!(tick_label(0.19999999999999998), "0.2");
        assert_eq!(tick_label(15.0), "15");
        assert_eq!(tick_label(-3.5), "-3.5");
        assert_eq!(tick_label(-0.0), "0");
        assert_eq!(tick_label(1e-10), "0");
        assert_eq!(tick_label(2500000.0), "2500000");
    }
}
