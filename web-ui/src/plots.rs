//! Draws the run's time series on the result view's canvases (plotters on canvas), one
//! chart per [`crate::charts::Chart`], axes labelled with units.

use crate::charts::{charts, drawn, overlay_column, Chart};
use crate::runner::PlotSeries as Series;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

/// Draws every chart of `series` into `chart-<i>` canvases; with a pinned run `a`, its
/// columns of the same name are overlaid (lighter, labelled `A:`), the current run's
/// labelled `B:`.
pub fn draw_all(series: &Series, a: Option<&Series>) {
    for (i, c) in charts(&series.columns).iter().enumerate() {
        // A drawing error leaves the canvas blank; the page goes on.
        let _ = draw(&format!("chart-{i}"), series, a, c);
    }
}

/// The last sample time of a series, seconds.
fn t_end(s: &Series) -> f64 {
    s.rows.last().and_then(|r| r[0]).unwrap_or(1.0)
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
    let t_max = a.map(t_end).unwrap_or(0.0).max(t_end(series)).max(1e-9);
    let mut y_max: f64 = 0.0;
    for &(s, c, _, _) in &lines {
        for row in &s.rows {
            if let Some(v) = drawn(row[c], chart.scale) {
                y_max = y_max.max(v);
            }
        }
    }
    let y_max = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, ("sans-serif", 15))
        .margin(6)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)?;
    ctx.configure_mesh()
        .x_desc("time (s)")
        .y_desc(chart.y_label)
        .y_label_formatter(&|v| short(*v))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for &(s, c, k, is_a) in &lines {
        let base = Palette99::pick(k).to_rgba();
        let (color, width, label) = match (a.is_some(), is_a) {
            (true, true) => (base.mix(0.35), 3, format!("A: {}", s.columns[c])),
            (true, false) => (base, 1, format!("B: {}", s.columns[c])),
            _ => (base, 1, s.columns[c].clone()),
        };
        let points = s
            .rows
            .iter()
            .filter_map(|r| Some((r[0]?, drawn(r[c], chart.scale)?)));
        ctx.draw_series(LineSeries::new(points, color.stroke_width(width)))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(width))
            });
    }
    ctx.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 11))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
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
