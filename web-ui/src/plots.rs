//! Draws the run's time series on the result view's canvases (plotters on canvas), one
//! chart per [`crate::charts::Chart`], axes labelled with units.

use crate::charts::{
    color, congestion_events, cwnd_pairs, drawn, measured_from, overlay_column, t_axis, y_range,
    Chart, CONGESTION_COLOR, EVENT_KINDS,
};
use crate::runner::PlotSeries as Series;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

/// Draws `chart`, chart `i` of [`crate::charts::charts_with_data`]`(series)`, into canvas `chart-<i>`;
/// with a pinned run `a`, its columns of the same name are overlaid dashed, the current
/// run's solid, at equal weight. Legends and the x axis title are HTML beside the canvas
/// (`crate::app`), never on the data.
pub fn draw_chart(i: usize, series: &Series, a: Option<&Series>, chart: &Chart) {
    // A drawing error leaves the canvas blank; the page goes on.
    let _ = draw(&format!("chart-{i}"), series, a, chart);
}

fn rgb((r, g, b): (u8, u8, u8)) -> RGBColor {
    RGBColor(r, g, b)
}

fn draw(
    id: &str,
    series: &Series,
    a: Option<&Series>,
    chart: &Chart,
) -> Result<(), Box<dyn std::error::Error>> {
    let backend = CanvasBackend::new(id).ok_or("no canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    // (series, its column, colour index, is A)
    let mut lines: Vec<(&Series, usize, usize, bool)> = Vec::new();
    for (k, &c) in chart.columns.iter().enumerate() {
        if let Some(a) = a {
            if let Some(ac) = overlay_column(&a.columns, &series.columns[c]) {
                lines.push((a, ac, k, true));
            }
        }
        lines.push((series, c, k, false));
    }
    let t_max = t_axis(&series.rows, a.map(|a| a.rows.as_slice()));
    let spans: Vec<(&[Vec<Option<f64>>], usize)> = lines
        .iter()
        .map(|&(s, c, _, _)| (s.rows.as_slice(), c))
        .collect();
    let (y_min, y_max) = y_range(chart, &spans);
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(22)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..t_max, y_min..y_max)?;
    ctx.configure_mesh()
        .y_desc(chart.y_label)
        .y_label_formatter(&|v| short(*v))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for &(s, c, k, is_a) in &lines {
        let style = rgb(color(k)).stroke_width(2);
        let from = measured_from(&s.rows, c, chart);
        let points: Vec<(f64, f64)> = s.rows[from..]
            .iter()
            .filter_map(|r| Some((r[0]?, drawn(r[c], chart.scale)?)))
            .collect();
        if is_a {
            ctx.draw_series(DashedLineSeries::new(points, 6, 4, style))?;
        } else {
            ctx.draw_series(LineSeries::new(points, style))?;
        }
    }
    // Congestion events of the current run on the cwnd chart (triangles).
    let marks: Vec<(f64, f64)> = cwnd_pairs(&series.columns)
        .into_iter()
        .filter(|(c, _)| chart.columns.contains(c))
        .flat_map(|(c, t)| congestion_events(&series.rows, c, t))
        .collect();
    let cc = rgb(CONGESTION_COLOR);
    ctx.draw_series(
        marks
            .iter()
            .map(|&(t, v)| TriangleMarker::new((t, v), 5, cc.filled())),
    )?;
    // The run's events on the time axis: a short tick per event at the bottom of the plot
    // area, one row per kind; one tick per canvas pixel column and kind (a run keeps up to
    // 20 000 events, drawn one by one on every chart they cost more than the lines).
    let h = (y_max - y_min) / 18.0;
    let px = |t: f64| (t / t_max * crate::charts::CANVAS_W) as i64;
    for (row, (kind, _, col)) in EVENT_KINDS.iter().enumerate() {
        let style = rgb(*col).stroke_width(1);
        let lo = y_min + h * row as f64 * 0.5;
        let mut last = None;
        ctx.draw_series(
            series
                .meta
                .events
                .iter()
                .filter(|e| e.kind == *kind && e.t <= t_max)
                .filter(|e| last.replace(px(e.t)) != Some(px(e.t)))
                .map(|e| PathElement::new(vec![(e.t, lo), (e.t, lo + h)], style)),
        )?;
    }
    root.present()?;
    Ok(())
}

/// An axis number in few characters: `1.2M`, `350k`, `12`.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The completion-time distribution over repeated runs into canvas `id`: one dot per run
/// (stacked where they fall in the same bin), the mean as a line and the 95 % CI of the
/// mean as a band (its legend is HTML below the canvas).
pub fn draw_distribution(
    id: &str,
    what: &str,
    values: &[f64],
    s: &sim_core::stats::Summary,
) -> Result<(), Box<dyn std::error::Error>> {
    let backend = CanvasBackend::new(id).ok_or("no canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let (lo, hi) = s.ci95.unwrap_or((s.mean, s.mean));
    let x0 = s.min.min(lo);
    let x1 = s.max.max(hi);
    let pad = ((x1 - x0) * 0.08).max(x1.abs() * 1e-3).max(1e-6);
    let (x0, x1) = (x0 - pad, x1 + pad);
    // Bins for stacking dots: 40 across the axis.
    let bin = |v: f64| (((v - x0) / (x1 - x0)) * 40.0) as i64;
    let mut counts = std::collections::BTreeMap::new();
    let dots: Vec<(f64, f64)> = values
        .iter()
        .map(|&v| {
            let c = counts.entry(bin(v)).or_insert(0u32);
            *c += 1;
            (v, *c as f64)
        })
        .collect();
    let y_max = dots.iter().map(|d| d.1).fold(1.0, f64::max) + 1.0;
    let mut ctx = ChartBuilder::on(&root)
        .caption(
            format!("Completion time over {} runs ({what})", values.len()),
            ("sans-serif", 15),
        )
        .margin(6)
        .x_label_area_size(32)
        .y_label_area_size(40)
        .build_cartesian_2d(x0..x1, 0.0..y_max)?;
    ctx.configure_mesh()
        .x_desc("completion time (s)")
        .y_desc("runs")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    ctx.draw_series(std::iter::once(Rectangle::new(
        [(lo, 0.0), (hi, y_max)],
        BLUE.mix(0.15).filled(),
    )))?;
    ctx.draw_series(LineSeries::new(
        vec![(s.mean, 0.0), (s.mean, y_max)],
        BLUE.stroke_width(2),
    ))?;
    ctx.draw_series(
        dots.iter()
            .map(|&(v, k)| Circle::new((v, k), 4, BLACK.filled())),
    )?;
    // The legend is HTML below the canvas (`#dist-legend`), never on the dots.
    root.present()?;
    Ok(())
}

/// The sweep plot ([`crate::sweepplot`]) into canvas `id`: per line its means joined, a
/// dot per point and the 95 % CI of each mean as an error bar (a point of one run has
/// none). A wide numeric span is drawn on a log axis; categories sit at 0, 1, ... with
/// their values as tick labels. The legend is HTML below the canvas.
pub fn draw_sweep(
    id: &str,
    p: &crate::sweepplot::SweepPlot,
) -> Result<(), Box<dyn std::error::Error>> {
    use crate::sweepplot::tick;
    let backend = CanvasBackend::new(id).ok_or("no canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    // Positions on the axis: log10 of the value on a log axis.
    let pos = |x: f64| if p.log_x { x.log10() } else { x };
    let xs: Vec<f64> = p
        .lines
        .iter()
        .flat_map(|l| l.marks.iter().map(|m| pos(m.x)))
        .collect();
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if !p.numeric {
        x0 = -0.5;
        x1 = p.categories.len() as f64 - 0.5;
    } else {
        let pad = ((x1 - x0) * 0.06).max(1e-9);
        x0 -= pad;
        x1 += pad;
    }
    let y_hi = p
        .lines
        .iter()
        .flat_map(|l| l.marks.iter())
        .map(|m| {
            m.summary
                .ci95
                .map_or(m.summary.mean, |c| c.1)
                .max(m.summary.mean)
        })
        .fold(0.0, f64::max);
    let y_hi = if y_hi > 0.0 { y_hi * 1.12 } else { 1.0 };
    let mut ctx = ChartBuilder::on(&root)
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, 0.0..y_hi)?;
    let cats = p.categories.clone();
    let (numeric, log_x, unit) = (p.numeric, p.log_x, p.unit);
    let x_fmt = move |v: &f64| {
        if !numeric {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 {
                return cats.get(i as usize).cloned().unwrap_or_default();
            }
            return String::new();
        }
        tick(unit, if log_x { 10f64.powf(*v) } else { *v })
    };
    let n_labels = if p.numeric {
        6
    } else {
        p.categories.len().max(1)
    };
    ctx.configure_mesh()
        .x_labels(n_labels)
        .x_label_formatter(&x_fmt)
        .y_desc(p.metric.axis())
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (k, line) in p.lines.iter().enumerate() {
        let c = rgb(color(k));
        let pts: Vec<(f64, f64)> = line
            .marks
            .iter()
            .map(|m| (pos(m.x), m.summary.mean))
            .collect();
        if p.numeric && pts.len() > 1 {
            ctx.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?;
        }
        // Error bars: a vertical stroke with caps, 5 px wide.
        let cap = (x1 - x0) * 0.008;
        for m in &line.marks {
            if let Some((lo, hi)) = m.summary.ci95 {
                let x = pos(m.x);
                ctx.draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    c.stroke_width(1),
                )))?;
                for y in [lo, hi] {
                    ctx.draw_series(std::iter::once(PathElement::new(
                        vec![(x - cap, y), (x + cap, y)],
                        c.stroke_width(1),
                    )))?;
                }
            }
        }
        ctx.draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 4, c.filled())))?;
    }
    root.present()?;
    Ok(())
}

/// A trace-driven link's capacity over the run ([`crate::capacity`]) into canvas `id`: a
/// step line per bin in Mbit/s, the trace's mean as a dashed line.
pub fn draw_capacity(
    id: &str,
    c: &crate::capacity::TraceCapacity,
) -> Result<(), Box<dyn std::error::Error>> {
    let backend = CanvasBackend::new(id).ok_or("no canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let t_end = c.mbps.len() as f64 * c.bin_s;
    let y_hi = c.mbps.iter().copied().fold(c.mean_mbps, f64::max) * 1.1;
    let mut ctx = ChartBuilder::on(&root)
        .caption(
            format!("Link capacity, {} (trace)", c.link),
            ("sans-serif", 15),
        )
        .margin(6)
        .x_label_area_size(26)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..t_end.max(1e-3), 0.0..y_hi.max(1e-3))?;
    ctx.configure_mesh()
        .y_desc("Mbit/s")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let mut steps = Vec::with_capacity(c.mbps.len() * 2);
    for (i, &m) in c.mbps.iter().enumerate() {
        steps.push((i as f64 * c.bin_s, m));
        steps.push(((i + 1) as f64 * c.bin_s, m));
    }
    let teal = RGBColor(0, 128, 128);
    ctx.draw_series(LineSeries::new(steps, teal.stroke_width(2)))?;
    ctx.draw_series(DashedLineSeries::new(
        vec![(0.0, c.mean_mbps), (t_end, c.mean_mbps)],
        6,
        4,
        BLACK.stroke_width(1),
    ))?;
    root.present()?;
    Ok(())
}
