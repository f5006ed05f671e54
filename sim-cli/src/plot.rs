//! `quicsim plot`: line plots of time-series CSV files (as written by `quicsim run --series
//! --out DIR`) to SVG with plotters.

use plotters::prelude::*;
use std::path::Path;

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
    let all = series.iter().flatten();
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(a, b) in all {
        x0 = x0.min(a);
        x1 = x1.max(a);
        y1 = y1.max(b);
    }
    if !x0.is_finite() || x1 <= x0 {
        return Err(format!("{}: nothing to plot", csv.display()));
    }
    let root = SVGBackend::new(out, (1000, 500)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..(y1 * 1.05).max(1e-9))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x)
        .y_desc(ylabel)
        .draw()
        .map_err(|e| err(&e))?;
    let palette = [&BLUE, &RED, &GREEN, &MAGENTA, &CYAN, &BLACK];
    for (k, s) in series.into_iter().enumerate() {
        let color = palette[k % palette.len()];
        let label = curves[k].label.clone();
        chart
            .draw_series(LineSeries::new(s, color))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
