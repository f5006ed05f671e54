//! `quicsim reproduce [PAPER|all] --out DIR`: every scenario with a `[paper]` table run as
//! a sweep (resumable), then a report per paper: our numbers beside the paper's, the
//! figure, and a verdict per effect.
//!
//! Layout of DIR: `index.md` (one row per experiment), `paper<ID>.md` (one section per
//! scenario), `figures/<ID>-<scenario file stem>.{svg,png}` (the summary figure) and
//! `figures/<ID>-<stem>-trace<N>.{svg,png}` (the `[[paper.trace]]` time series of run 0 of
//! every point), `sweeps/<ID>/<stem>/` (the sweep directories; resumable, not meant to be
//! committed) and, for a scenario with `[[paper.unstated]]` parameters,
//! `sweeps/<ID>/<stem>@<combination>/` (one sweep per combination of their alternatives,
//! named by [`Paper::combination_slug`]; a combination whose jobs are the scenario's own
//! reuses `sweeps/<ID>/<stem>/`).
//!
//! Every sweep a reproduction needs is planned first, then the jobs of all of them run in
//! one pool of `--jobs` workers, longest expected cost first ([`sweep::run_prepared`]), so
//! no core idles at the tail of one sweep while another has jobs left; each directory is
//! written, resumed and finished exactly as `quicsim sweep` would on its own. The report
//! is then written from the finished directories.
//!
//! Experiments that no scenario covers yet are listed in `pending-reproductions.tsv` in the
//! scenarios directory (`paper<TAB>source<TAB>experiment<TAB>what it needs`, `#` comments):
//! each gets a section and an index row saying "not yet reproduced: needs ...", so the
//! report never skips an experiment silently.
//!
//! Verdict rules (per effect = a reported point against its baseline point, both from the
//! paper, relative change `(x - base) / base`, or the paper's `change` where it gave only
//! the relative change):
//! - the paper reports an effect (|relative change| >= 2 %): **reproduced** when ours has
//!   the same sign and a relative change within ±50 % of the paper's (ratio in [0.5, 1.5]);
//!   **direction only** when the sign agrees but the size does not; **not reproduced**
//!   otherwise;
//! - the paper reports no effect (|relative change| < 2 %): **reproduced** when ours is
//!   below 5 % in size, else **not reproduced**;
//! - the paper states only a direction (`direction = "lower" | "higher"`, a shape such as
//!   "TCP much worse above 5 %"): **reproduced (direction)** when ours has that sign and
//!   is at least 2 % in size, else **not reproduced**; an "or equal" direction
//!   (`"not_higher"`, `"not_lower"`: "less than or equal"): **reproduced (or equal)**
//!   unless ours goes the other way by 5 % or more ([`direction_verdict`]);
//! - a value with a `tolerance` (an absolute number, e.g. "the window reaches 512 KB at
//!   1.03 s"): **reproduced (within tolerance)** when ours is within that relative
//!   tolerance of the paper's ([`value_verdict`]); a `series` claim reads its number from
//!   the series of run 0 of its point ([`read_series`]);
//! - a `[[paper.ranking]]` (a claim without numbers, "QUIC < SCTP < TCP"): at every
//!   combination of the other sweep keys the ranking **holds** when our means over the
//!   ranked key's values rise strictly in the claimed order ([`ranking_holds`]); a gap
//!   claimed to widen along a key **grows** when the gap between the last and the first of
//!   the order is larger at the key's last value than at its first and no step shrinks it
//!   by more than half of that growth ([`gap_widens`]).
//!
//! Sensitivity (a scenario with `[[paper.unstated]]`): every claim — each effect, each
//! ranking and its widening gap — is judged again under each combination of the unstated
//! parameters' alternatives (the same seeds), and is *robust* when every combination gives
//! it the same class of verdict, else *depends on* the parameters whose alternatives alone
//! change it ([`crate::sensitivity`]); `paper<ID>.md` has the per-combination table and
//! `index.md` the experiment's summary in its *sensitivity* column (– for a scenario
//! without unstated parameters, whose report is otherwise what it was).
//!
//! Figures: axes labelled in words ([`sim_core::scenario::labels`], or the scenario's
//! `plot.x_label` / `y_label`), the paper's numbers on the same axes (values as squares,
//! relative changes applied to our baseline as triangles, directions as arrows).
//!
//! A reported number may be about another metric than `[paper] metric` (`metric`, e.g. the
//! loss ratio) and another per-point statistic than the mean (`statistic = "std_dev"`);
//! the effect is then computed on that metric's statistic of the same sweep points.

use crate::plot::{MarkKind, PaperMark};
use crate::sensitivity::{self, Class};
use crate::sweep::{self, Failure, SweepArgs};
use sim_core::scenario::labels;
use sim_core::scenario::paper::{Direction, Paper, PaperPlot, Reported, Statistic};
use sim_core::scenario::{parse_str_overriding, Scenario};
use sim_core::study::{Overrides, Study};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const EXIT_BAD_INPUT: u8 = 2;
const EXIT_IO: u8 = 1;

/// Options of `quicsim reproduce`.
pub struct ReproduceArgs {
    /// `all`, or a paper id (`000` or `paper000`).
    pub which: String,
    pub out: PathBuf,
    pub scenarios: PathBuf,
    pub runs: Option<u32>,
    pub jobs: Option<usize>,
}

/// One reproduction scenario.
struct Experiment {
    file: PathBuf,
    /// The scenario's text (a combination of unstated parameters is parsed from it).
    text: String,
    /// The file's stem, a plain file-name component ([`crate::files::plain_component`]).
    stem: String,
    scenario: Scenario,
    paper: Paper,
}

/// The `.toml` files under `dir`, recursively, in sorted order per directory. Symbolic
/// links are followed, but no directory is entered twice and no file listed twice (by
/// canonical path; the first path found is kept): a link loop (`loop -> .`) ends, and a
/// scenario reachable under two names runs once. An unreadable directory is an I/O
/// failure (exit 1).
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let mut seen_dirs = std::collections::BTreeSet::new();
    let mut seen_files = std::collections::BTreeSet::new();
    walk_toml(dir, out, &mut seen_dirs, &mut seen_files)
}

fn walk_toml(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen_dirs: &mut std::collections::BTreeSet<PathBuf>,
    seen_files: &mut std::collections::BTreeSet<PathBuf>,
) -> Result<(), Failure> {
    let io = |e: std::io::Error| (EXIT_IO, format!("{}: {e}", dir.display()));
    if !seen_dirs.insert(dir.canonicalize().map_err(io)?) {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(io)?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk_toml(&p, out, seen_dirs, seen_files)?;
        } else if p.extension().is_some_and(|x| x == "toml") {
            // A dangling link is kept: reading it reports the I/O failure.
            if seen_files.insert(p.canonicalize().unwrap_or_else(|_| p.clone())) {
                out.push(p);
            }
        }
    }
    Ok(())
}

fn normalise_id(which: &str) -> String {
    which.trim_start_matches("paper").to_string()
}

fn find(args: &ReproduceArgs) -> Result<Vec<Experiment>, Failure> {
    let mut files = Vec::new();
    toml_files(&args.scenarios, &mut files)?;
    let want = (args.which != "all").then(|| normalise_id(&args.which));
    let mut out = Vec::new();
    for f in files {
        let text = crate::files::read_scenario(&f)?;
        let scenario = crate::files::parse_scenario(&f, &text)?;
        let Some(paper) = scenario.paper.clone() else {
            continue;
        };
        if want.as_ref().is_some_and(|w| *w != paper.id) {
            continue;
        }
        // Both become file names under --out: checked before any path is built.
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::files::plain_component(&format!("{}: file name", f.display()), &stem)?;
        crate::files::safe_component(&format!("{}: paper.id", f.display()), &paper.id)?;
        out.push(Experiment {
            file: f,
            text,
            stem,
            scenario,
            paper,
        });
    }
    let pending = read_pending(&args.scenarios)?;
    if out.is_empty()
        && !pending
            .iter()
            .any(|p| want.as_ref().is_none_or(|w| *w == p.id))
    {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "{}: no scenario with a [paper] table{}",
                args.scenarios.display(),
                want.map(|w| format!(" for paper {w}")).unwrap_or_default()
            ),
        ));
    }
    Ok(out)
}

/// An experiment no scenario reproduces yet: a line of `pending-reproductions.tsv`.
struct Pending {
    /// The paper id, a plain file-name component ([`crate::files::safe_component`]).
    id: String,
    source: String,
    experiment: String,
    needs: String,
}

const PENDING_FILE: &str = "pending-reproductions.tsv";

/// The line of the pending file that lists the papers' figures that are diagrams (no
/// measurement, nothing to reproduce): `# diagrams: 000 Figs. 2, 3; ...`.
const DIAGRAMS_LINE: &str = "# diagrams: ";

/// The diagram figures the pending file lists (its [`DIAGRAMS_LINE`]), if any.
fn read_diagrams(scenarios: &Path) -> Option<String> {
    let text = std::fs::read_to_string(scenarios.join(PENDING_FILE)).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(DIAGRAMS_LINE))
        .map(|d| d.trim().to_string())
}

fn read_pending(scenarios: &Path) -> Result<Vec<Pending>, Failure> {
    let path = scenarios.join(PENDING_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err((1, format!("{}: {e}", path.display()))),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
        let [id, source, experiment, needs] = cells[..] else {
            return Err((
                EXIT_BAD_INPUT,
                format!(
                    "{}:{}: expected 4 tab-separated cells (paper, source, experiment, what it needs), found {}",
                    path.display(),
                    i + 1,
                    cells.len()
                ),
            ));
        };
        let id = normalise_id(id);
        crate::files::safe_component(&format!("{}:{}: paper", path.display(), i + 1), &id)?;
        out.push(Pending {
            id,
            source: source.into(),
            experiment: experiment.into(),
            needs: needs.into(),
        });
    }
    Ok(out)
}

/// Our summary of the metric at one point.
#[derive(Clone, Debug)]
struct Ours {
    params: Vec<(String, String)>,
    mean: f64,
    ci: Option<(f64, f64)>,
    n: u64,
}

fn read_ours(
    dir: &Path,
    metric: &str,
    scale: f64,
    statistic: Statistic,
) -> Result<Vec<Option<Ours>>, Failure> {
    let p = dir.join("summary.json");
    let text = std::fs::read_to_string(&p).map_err(|e| (1, format!("{}: {e}", p.display())))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| (1, format!("{}: {e}", p.display())))?;
    let points = doc["points"].as_array().cloned().unwrap_or_default();
    Ok(points
        .iter()
        .map(|pt| {
            let params = pt["params"]
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
                .unwrap_or_default();
            let m = pt["metrics"]
                .as_array()?
                .iter()
                .find(|m| m[0] == metric)?
                .clone();
            let s = &m[1];
            Some(Ours {
                params,
                mean: s[statistic.field()].as_f64()? * scale,
                // The interval is the mean's; other statistics are shown without one.
                ci: s["ci95"]
                    .as_array()
                    .filter(|_| statistic == Statistic::Mean)
                    .and_then(|c| Some((c[0].as_f64()? * scale, c[1].as_f64()? * scale))),
                n: s["n"].as_u64().unwrap_or(0),
            })
        })
        .collect())
}

/// Our points that match a reported point (every key it names has its value).
fn matching<'a>(ours: &'a [Option<Ours>], point: &[(String, String)]) -> Vec<&'a Ours> {
    ours.iter()
        .flatten()
        .filter(|o| {
            point
                .iter()
                .all(|(k, v)| o.params.iter().any(|(ok, ov)| ok == k && ov == v))
        })
        .collect()
}

fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn fmt_point(p: &[(String, String)]) -> String {
    if p.is_empty() {
        return "(all)".into();
    }
    p.iter()
        .map(|(k, v)| format!("`{k}` = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The verdict on one effect (relative changes).
pub fn verdict(ours: f64, paper: f64) -> &'static str {
    if paper.abs() < 0.02 {
        if ours.abs() < 0.05 {
            "reproduced (no effect)"
        } else {
            "not reproduced"
        }
    } else if ours.signum() == paper.signum() && ours.abs() >= 0.02 {
        let r = ours / paper;
        if (0.5..=1.5).contains(&r) {
            "reproduced"
        } else {
            "direction only"
        }
    } else {
        "not reproduced"
    }
}

/// The verdict on an effect of which the paper states only the direction: a strict one
/// (`lower`, `higher`) needs our change to have its sign and be at least 2 % in size; an
/// "or equal" one (`not_higher`, `not_lower`) holds unless our change goes the other way by
/// 5 % or more (the tolerance of a reproduced non-effect).
pub fn direction_verdict(ours: f64, direction: Direction) -> &'static str {
    if direction.or_equal() {
        if ours * direction.sign() > -0.05 {
            "reproduced (or equal)"
        } else {
            "not reproduced"
        }
    } else if ours.signum() == direction.sign() && ours.abs() >= 0.02 {
        "reproduced (direction)"
    } else {
        "not reproduced"
    }
}

/// The relative change of `x` against `base`; `0` when both are 0 (no loss with either
/// policy is no change, not NaN).
pub fn relative_change(x: f64, base: f64) -> f64 {
    if x == 0.0 && base == 0.0 {
        0.0
    } else {
        (x - base) / base
    }
}

/// The verdict on an absolute value claimed with a tolerance: ours within `tolerance`
/// (relative) of the paper's.
pub fn value_verdict(ours: f64, paper: f64, tolerance: f64) -> &'static str {
    if (ours - paper).abs() <= tolerance * paper.abs() {
        "reproduced (within tolerance)"
    } else {
        "not reproduced"
    }
}

/// What a series claim reads from one run's series: the time the sum of `columns` first
/// reaches the value, or the sum at a time (`None`: never reached, or no sample yet).
pub fn read_series(
    series: &sim_core::metrics::Series,
    claim: &sim_core::scenario::paper::SeriesClaim,
) -> Result<Option<f64>, String> {
    use sim_core::scenario::paper::SeriesRead;
    let idx = claim
        .columns
        .iter()
        .map(|c| {
            series.columns.iter().position(|x| x == c).ok_or_else(|| {
                format!(
                    "no series column {c:?}; columns are: {}",
                    series.columns.join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sum = |row: &Vec<f64>| idx.iter().map(|&i| row[i]).sum::<f64>();
    Ok(match claim.read {
        SeriesRead::Reaches(v) => series.rows.iter().find(|r| sum(r) >= v).map(|r| r[0]),
        SeriesRead::At(t) => series.rows.iter().take_while(|r| r[0] <= t).last().map(sum),
    })
}

/// Sweep parameters with inline-table values shown by their first string value.
fn short_params(p: &[(String, String)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.clone(), crate::plot::short_label(v)))
        .collect()
}

/// Runs run 0 of every point of `e` with series on and draws `t`'s columns against time
/// to `dir/<stem>.svg` and `.png`.
fn trace_figure(
    e: &Experiment,
    t: &sim_core::scenario::paper::Trace,
    dir: &Path,
    stem: &str,
) -> Result<(), String> {
    let mut lines = Vec::new();
    for (params, series) in point_series(e)? {
        let point: Vec<String> = params
            .iter()
            .map(|(_, v)| crate::plot::short_label(v))
            .collect();
        for c in &t.columns {
            let i = series.columns.iter().position(|x| x == c).ok_or_else(|| {
                format!(
                    "no series column {c:?}; columns are: {}",
                    series.columns.join(", ")
                )
            })?;
            let points = series
                .rows
                .iter()
                .filter(|row| t.until.is_none_or(|u| row[0] <= u))
                .map(|row| (row[0], row[i] * t.scale))
                .filter(|(_, y)| y.is_finite())
                .collect();
            let label = match (point.is_empty(), t.columns.len()) {
                (true, _) => labels::metric_label(c),
                (false, 1) => point.join(", "),
                (false, _) => format!("{}: {}", point.join(", "), labels::metric_label(c)),
            };
            lines.push(crate::plot::Line { label, points });
        }
    }
    let ylabel = t.y_label.clone().unwrap_or_else(|| {
        let mut nouns: Vec<String> = Vec::new();
        for c in &t.columns {
            let n = labels::metric_noun(c);
            if !nouns.contains(&n) {
                nouns.push(n);
            }
        }
        if t.unit.is_empty() {
            nouns.join(", ")
        } else {
            format!("{} ({})", nouns.join(", "), t.unit)
        }
    });
    let title = format!("paper {}: {} ({})", e.paper.id, t.title, t.source);
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    for ext in ["svg", "png"] {
        crate::plot::plot_lines(
            &lines,
            &title,
            "time (s)",
            &ylabel,
            &dir.join(format!("{stem}.{ext}")),
        )?;
    }
    Ok(())
}

/// The baseline point of a reported point: its point with the baseline keys replaced.
fn base_point(p: &Paper, r: &Reported) -> Params {
    let mut out: Params = r
        .point
        .iter()
        .filter(|(k, _)| !p.baseline.iter().any(|(bk, _)| bk == k))
        .cloned()
        .collect();
    out.extend(p.baseline.iter().cloned());
    out
}

/// The paper's numbers on the figure's metric (its mean) as marks on the figure: its
/// values, its relative changes applied to our baseline, its directions at our means.
fn paper_marks(p: &Paper, plot: &PaperPlot, ours: &[Option<Ours>]) -> Vec<PaperMark> {
    let mut out = Vec::new();
    for r in &p.reported {
        if r.metric.is_some()
            || r.series.is_some()
            || r.over.is_some()
            || r.statistic != Statistic::Mean
        {
            continue;
        }
        let [o] = matching(ours, &r.point)[..] else {
            continue;
        };
        let Some(x) = param(o, &plot.x) else { continue };
        let base = || match matching(ours, &base_point(p, r))[..] {
            [b] => Some(b.mean),
            _ => None,
        };
        let (y, kind) = match (r.value, r.change, r.direction) {
            (Some(v), ..) => (v, MarkKind::Value),
            (None, Some(c), _) => match base() {
                Some(b) => (b * (1.0 + c), MarkKind::Change),
                None => continue,
            },
            (None, None, Some(Direction::Lower)) => (o.mean, MarkKind::Lower),
            (None, None, Some(Direction::Higher)) => (o.mean, MarkKind::Higher),
            _ => continue,
        };
        out.push(PaperMark {
            x: x.to_string(),
            series: plot
                .series
                .as_deref()
                .and_then(|s| param(o, s))
                .map(String::from),
            y,
            kind,
        });
    }
    out
}

/// One effect of a section: a reported point against its baseline point.
struct Effect {
    /// The point (and the metric or statistic when not the section's).
    label: String,
    /// The paper's relative change, or its direction.
    paper_cell: String,
    outcome: EffectOutcome,
}

/// What became of an effect.
#[derive(Clone, Copy)]
enum EffectOutcome {
    /// Ours, with its verdict.
    Judged {
        ours_rel: f64,
        verdict: &'static str,
    },
    /// No run of the point (or of its baseline) reached the metric.
    NoValue,
    /// The reported point matches several sweep points.
    NotOne,
}

/// The effects of `p` (every reported point that has a baseline to compare with) judged
/// on the sweep in `sweep_dir` (`ours`: its summary of `[paper] metric`).
fn effects(p: &Paper, sweep_dir: &Path, ours: &[Option<Ours>]) -> Result<Vec<Effect>, Failure> {
    let mut out = Vec::new();
    if p.baseline.is_empty() {
        return Ok(out);
    }
    for r in &p.reported {
        if r.series.is_some() || r.over.is_some() {
            continue; // read from a series or a ratio: judged under "Values"
        }
        if p.baseline.iter().all(|b| r.point.iter().any(|x| x == b)) {
            continue; // a baseline itself
        }
        let base_point = base_point(p, r);
        let same = |a: &[(String, String)], b: &[(String, String)]| {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        };
        let base_value = p
            .reported
            .iter()
            .find(|b| {
                same(&b.point, &base_point)
                    && b.series.is_none()
                    && b.over.is_none()
                    && b.metric == r.metric
                    && b.statistic == r.statistic
            })
            .and_then(|b| b.value);
        // The paper's effect: a relative change, or a direction only.
        let paper_rel = match (r.direction, r.change, r.value, base_value) {
            (Some(d), ..) => Err(d),
            (None, Some(c), _, _) => Ok(c),
            (None, None, Some(v), Some(b)) => Ok((v - b) / b),
            // An absolute number without a reported baseline: shown above only.
            _ => continue,
        };
        let paper_cell = match paper_rel {
            Ok(c) => format!("{:+.1} %", 100.0 * c),
            Err(d) => d.name().replace('_', " "),
        };
        // Another metric or statistic than the section's: named beside the point.
        let what = match (&r.metric, r.statistic) {
            (None, Statistic::Mean) => String::new(),
            (m, st) => format!(
                " ({} of `{}`)",
                match st {
                    Statistic::Mean => "mean",
                    Statistic::StdDev => "std dev",
                },
                m.as_deref().unwrap_or(&p.metric)
            ),
        };
        let label = format!("{}{what}", fmt_point(&short_params(&r.point)));
        let other;
        let ours_r: &[Option<Ours>] = if what.is_empty() {
            ours
        } else {
            other = read_ours(
                sweep_dir,
                r.metric.as_deref().unwrap_or(&p.metric),
                1.0,
                r.statistic,
            )?;
            &other
        };
        let (o_t, o_b) = (matching(ours_r, &r.point), matching(ours_r, &base_point));
        if o_t.is_empty() || o_b.is_empty() {
            out.push(Effect {
                label,
                paper_cell,
                outcome: EffectOutcome::NoValue,
            });
            continue;
        }
        if o_t.len() != 1 || o_b.len() != 1 {
            out.push(Effect {
                label,
                paper_cell,
                outcome: EffectOutcome::NotOne,
            });
            continue;
        }
        let ours_rel = relative_change(o_t[0].mean, o_b[0].mean);
        let v = match paper_rel {
            Ok(c) => verdict(ours_rel, c),
            Err(d) => direction_verdict(ours_rel, d),
        };
        out.push(Effect {
            label,
            paper_cell,
            outcome: EffectOutcome::Judged {
                ours_rel,
                verdict: v,
            },
        });
    }
    Ok(out)
}

/// Readies the sweep of `study` in `dir` to run (or resume) in the common pool: a sweep of
/// an older version of the scenario (or other --runs) there starts over; `None` when it is
/// complete. Each sweep directory of one `reproduce` is named once (`planned`): two
/// scenario files writing the same one are bad input.
fn plan_sweep(
    study: Study,
    dir: &Path,
    planned: &mut std::collections::BTreeSet<PathBuf>,
) -> Result<Option<sweep::Prepared>, Failure> {
    if !planned.insert(dir.to_path_buf()) {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "{}: two scenarios of this reproduction write this sweep directory (the same paper id and file name): rename one",
                dir.display()
            ),
        ));
    }
    if sweep::fingerprint_of_dir(dir).is_some_and(|f| f != study.fingerprint()) {
        eprintln!(
            "{}: the scenario changed; its sweep starts over",
            dir.display()
        );
        std::fs::remove_dir_all(dir).map_err(|err| (1, format!("{}: {err}", dir.display())))?;
    }
    sweep::prepare(
        study,
        &SweepArgs {
            out: dir.to_path_buf(),
            // Unused: the pool is `run_prepared`'s.
            jobs: None,
            resume: true,
            shard: None,
        },
    )
}

/// One claim judged under one combination of unstated parameters.
struct Claim {
    /// The claim (an effect's point, a ranking's order).
    label: String,
    /// Ours in a few words ("-9.1 %, reproduced", "holds at 3 of 5").
    cell: String,
    class: Class,
}

/// The claims of a section, in report order: its effects, then per ranking the order and
/// the widening gap.
fn claims(effects: &[Effect], rankings: &[RankingResult]) -> Vec<Claim> {
    let mut out = Vec::new();
    for e in effects {
        let (cell, class) = match e.outcome {
            EffectOutcome::Judged { ours_rel, verdict } => (
                if ours_rel.is_finite() {
                    format!("{:+.1} %, {verdict}", 100.0 * ours_rel)
                } else if ours_rel.is_nan() {
                    format!("0 at both points, {verdict}")
                } else {
                    format!("up from 0, {verdict}")
                },
                Class::of_verdict(verdict),
            ),
            EffectOutcome::NoValue | EffectOutcome::NotOne => ("no value".into(), Class::NoValue),
        };
        out.push(Claim {
            label: format!("{} (paper {})", e.label, e.paper_cell),
            cell,
            class,
        });
    }
    for r in rankings {
        out.push(Claim {
            label: format!("ranking {}", r.order),
            cell: format!("holds at {} of {}", r.held, r.judged),
            class: Class::of_ranking(r.held, r.judged),
        });
        if let Some((along, gap, grows)) = &r.widens {
            out.push(Claim {
                label: format!("gap {gap} grows along `{along}`"),
                cell: if *grows { "grows" } else { "does not grow" }.into(),
                class: if *grows {
                    Class::Reproduced
                } else {
                    Class::NotReproduced
                },
            });
        }
    }
    out
}

/// The claims of an experiment under every combination of its unstated parameters.
struct Sensitivity {
    /// The combinations, as [`Paper::combinations`].
    combinations: Vec<Vec<usize>>,
    /// Per combination: whether it is the scenario as written (its sweep is the
    /// experiment's own: the same jobs).
    as_written: Vec<bool>,
    /// Per combination, its claims (the same claims in the same order for each).
    claims: Vec<Vec<Claim>>,
}

/// Plans every combination of `e`'s unstated parameters as its own sweep (resumable, in
/// `sweeps/<ID>/<stem>@<combination slug>/`; a combination whose jobs are those of the
/// scenario as written, or of an earlier combination, reuses that sweep): the sweeps
/// still to run go to `todo`; returns each combination's sweep directory. `None` when the
/// scenario declares none.
fn plan_sensitivity(
    e: &Experiment,
    runs: Option<u32>,
    dir: &Path,
    fingerprint: &str,
    out: &Path,
    planned: &mut std::collections::BTreeSet<PathBuf>,
    todo: &mut Vec<sweep::Prepared>,
) -> Result<Option<Vec<PathBuf>>, Failure> {
    let p = &e.paper;
    let combinations = p.combinations();
    if combinations.is_empty() {
        return Ok(None);
    }
    let mut done: Vec<(String, PathBuf)> = vec![(fingerprint.to_string(), dir.to_path_buf())];
    let mut dirs = Vec::new();
    for c in &combinations {
        let label = p.combination_label(c);
        let scenario = parse_str_overriding(&e.text, &p.overrides(c)).map_err(|err| {
            (
                EXIT_BAD_INPUT,
                format!("{} (unstated: {label}): {err}", e.file.display()),
            )
        })?;
        let study = Study::new(
            scenario,
            &Overrides {
                runs,
                ..Overrides::default()
            },
        )
        .map_err(|err| {
            (
                EXIT_BAD_INPUT,
                format!("{} (unstated: {label}): {err}", e.file.display()),
            )
        })?;
        let f = study.fingerprint();
        let cdir = match done.iter().find(|(g, _)| *g == f) {
            Some((_, d)) => d.clone(),
            None => {
                let d = out.join("sweeps").join(&p.id).join(format!(
                    "{}@{}",
                    e.stem,
                    p.combination_slug(c)
                ));
                eprintln!("  unstated: {label}");
                todo.extend(plan_sweep(study, &d, planned)?);
                done.push((f, d.clone()));
                d
            }
        };
        dirs.push(cdir);
    }
    Ok(Some(dirs))
}

/// Judges the claims of `e` on the sweep of each combination of its unstated parameters
/// (`dirs`, from [`plan_sensitivity`]; `dir` is the experiment's own sweep).
fn sensitivity_judge(e: &Experiment, dirs: &[PathBuf], dir: &Path) -> Result<Sensitivity, Failure> {
    let p = &e.paper;
    let mut as_written = Vec::new();
    let mut all = Vec::new();
    for cdir in dirs {
        as_written.push(cdir == dir);
        let ours = read_ours(cdir, &p.metric, p.scale, Statistic::Mean)?;
        let effects = effects(p, cdir, &ours)?;
        let (_, rankings) = ranking_section(p, &ours, &mut String::new());
        all.push(claims(&effects, &rankings));
    }
    Ok(Sensitivity {
        combinations: p.combinations(),
        as_written,
        claims: all,
    })
}

/// The sensitivity part of a section (appended to `md`) and its index summary.
fn sensitivity_section(p: &Paper, s: &Sensitivity, md: &mut String) -> String {
    let names: Vec<String> = p.unstated.iter().map(|u| u.name.clone()).collect();
    let _ = writeln!(
        md,
        "\nSensitivity to what the paper leaves unstated: every claim judged again under each combination of these plausible values, with the same seeds (* the scenario as written):\n"
    );
    for u in &p.unstated {
        let alts: Vec<String> = match &u.key {
            Some(k) => vec![format!(
                "`{k}` = {}",
                u.alternatives
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            None => u
                .alternatives
                .iter()
                .map(|a| {
                    let set: Vec<String> = a
                        .set
                        .iter()
                        .map(|(k, v)| format!("`{k}` = {}", value_text(v)))
                        .collect();
                    format!("*{}* ({})", a.name, set.join(", "))
                })
                .collect(),
        };
        let _ = writeln!(
            md,
            "- **{}**: {}. Values: {}.",
            u.name,
            capitalise(&u.why),
            alts.join("; ")
        );
    }
    let headers: Vec<String> = s
        .combinations
        .iter()
        .zip(&s.as_written)
        .map(|(c, w)| format!("{}{}", p.combination_label(c), if *w { " *" } else { "" }))
        .collect();
    let _ = writeln!(md, "\n| claim | {} | verdict |", headers.join(" | "));
    let _ = writeln!(md, "|---|{}---|", "---|".repeat(headers.len()));
    let n_claims = s.claims.first().map_or(0, Vec::len);
    let mut judgements = Vec::new();
    for k in 0..n_claims {
        let classes: Vec<Class> = s.claims.iter().map(|c| c[k].class).collect();
        let j = sensitivity::judge(&s.combinations, &classes);
        let cells: Vec<&str> = s.claims.iter().map(|c| c[k].cell.as_str()).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            s.claims[0][k].label,
            cells.join(" | "),
            sensitivity::judgement_text(&j, &names)
        );
        judgements.push(j);
    }
    let summary = sensitivity::summary(&judgements, &names);
    let _ = writeln!(md, "\nUnder the unstated parameters: {summary}.");
    summary
}

/// A TOML value as a scenario writes it (strings without quotes).
fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Run 0 of every point of `e` with series on: each point's parameters (as written in
/// the sweep) and its series.
fn point_series(e: &Experiment) -> Result<Vec<(Params, sim_core::metrics::Series)>, String> {
    use rayon::prelude::*;
    let study = Study::new(
        e.scenario.clone(),
        &Overrides {
            runs: Some(1),
            series: true,
            ..Overrides::default()
        },
    )
    .map_err(|err| err.to_string())?;
    let params = study.point_params();
    let results: Vec<Result<sim_core::metrics::RunResult, String>> = study
        .jobs()
        .par_iter()
        .map(|j| sim_core::run(study.config(j), j.seed).map_err(|err| err.to_string()))
        .collect();
    study
        .jobs()
        .iter()
        .zip(results)
        .map(|(j, r)| {
            let series = r?.series.ok_or("the run recorded no series")?;
            Ok((params[j.point].clone(), series))
        })
        .collect()
}

/// The `[[paper.reported]]` values of `p` that carry a `tolerance` or read a `series`,
/// judged and appended to `md`; returns the verdicts of those with a tolerance.
fn values_section(
    e: &Experiment,
    sweep_dir: &Path,
    md: &mut String,
) -> Result<Vec<&'static str>, Failure> {
    use sim_core::scenario::paper::SeriesRead;
    let p = &e.paper;
    let claims: Vec<_> = p
        .reported
        .iter()
        .filter(|r| {
            r.value.is_some() && (r.tolerance.is_some() || r.series.is_some() || r.over.is_some())
        })
        .collect();
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    let series = if claims.iter().any(|r| r.series.is_some()) {
        Some(point_series(e))
    } else {
        None
    };
    let _ = writeln!(
        md,
        "
Values (a series claim reads run 0 of its point; a value with a tolerance is reproduced when ours is within it):
"
    );
    let _ = writeln!(md, "| point | what | ours | paper | verdict |");
    let _ = writeln!(md, "|---|---|---|---|---|");
    let mut verdicts = Vec::new();
    for r in claims {
        let paper = r.value.unwrap_or_default();
        let paper_cell = match r.tolerance {
            Some(tol) => format!("{} ± {} %", fmt_num(paper), fmt_num(100.0 * tol)),
            None => fmt_num(paper),
        };
        let point = fmt_point(&short_params(&r.point));
        let (what, ours): (String, Result<f64, String>) = match &r.series {
            Some(c) => {
                let cols = c
                    .columns
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(" + ");
                let what = match c.read {
                    SeriesRead::Reaches(v) => {
                        format!("time (s) {cols} first reaches {}", fmt_num(v))
                    }
                    SeriesRead::At(t) => format!("{cols} at {} s", fmt_num(t)),
                };
                let ours = match series.as_ref() {
                    Some(Ok(all)) => {
                        let hits: Vec<_> = all
                            .iter()
                            .filter(|(params, _)| {
                                r.point
                                    .iter()
                                    .all(|(k, v)| params.iter().any(|(pk, pv)| pk == k && pv == v))
                            })
                            .collect();
                        match hits[..] {
                            [(_, s)] => read_series(s, c).and_then(|v| {
                                v.ok_or_else(|| "not reached in the run".to_string())
                            }),
                            _ => Err("the point does not select one sweep point".into()),
                        }
                    }
                    Some(Err(err)) => Err(err.clone()),
                    None => Err("no series".into()),
                };
                (what, ours)
            }
            None => {
                let metric = r.metric.as_deref().unwrap_or(&p.metric);
                let scale = if r.metric.is_some() { 1.0 } else { p.scale };
                let one = |metric: &str, scale: f64| -> Result<Result<f64, String>, Failure> {
                    let all = read_ours(sweep_dir, metric, scale, r.statistic)?;
                    Ok(match matching(&all, &r.point)[..] {
                        [o] => Ok(o.mean),
                        [] => Err("no run of the point reached the metric".into()),
                        _ => Err("the point does not select one sweep point".into()),
                    })
                };
                let stat = r.statistic.field().replace('_', " ");
                match &r.over {
                    Some(den) => {
                        let what = format!("{stat} of `{metric}` / {stat} of `{den}`");
                        let (a, b) = (one(metric, 1.0)?, one(den, 1.0)?);
                        (what, a.and_then(|a| b.map(|b| a / b)))
                    }
                    None => {
                        let what = format!(
                            "{stat} of `{metric}`{}",
                            if r.metric.is_none() && !p.unit.is_empty() {
                                format!(" ({})", p.unit)
                            } else {
                                String::new()
                            }
                        );
                        (what, one(metric, scale)?)
                    }
                }
            }
        };
        match ours {
            Ok(x) => {
                let v = match r.tolerance {
                    Some(tol) => {
                        let v = value_verdict(x, paper, tol);
                        verdicts.push(v);
                        v
                    }
                    None => "– (shown only)",
                };
                let _ = writeln!(
                    md,
                    "| {point} | {what} | {} | {paper_cell} | {v} |",
                    fmt_num(x)
                );
            }
            Err(why) => {
                if r.tolerance.is_some() {
                    verdicts.push("not reproduced");
                }
                let _ = writeln!(
                    md,
                    "| {point} | {what} | – | {paper_cell} | no value: {why} |"
                );
            }
        }
    }
    Ok(verdicts)
}

/// One experiment's report section and its index row.
struct Section {
    markdown: String,
    index_row: String,
}

fn section(
    e: &Experiment,
    sweep_dir: &Path,
    out: &Path,
    runs: u32,
    sensitivity: Option<&Sensitivity>,
) -> Result<Section, Failure> {
    let p = &e.paper;
    let ours = read_ours(sweep_dir, &p.metric, p.scale, Statistic::Mean)?;
    let unit = if p.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", p.unit)
    };
    let mut md = String::new();
    let file = e.file.to_string_lossy().replace('\\', "/");
    let _ = writeln!(md, "## {} ({})\n", p.experiment, p.source);
    let _ = writeln!(md, "Scenario: `{file}`. {}\n", e.scenario.base.description);
    let _ = writeln!(
        md,
        "Metric: `{}`{}, mean over {} run(s) per point with its Student-t 95 % confidence interval.\n",
        p.metric,
        if p.scale != 1.0 {
            format!(" x {}", p.scale)
        } else {
            String::new()
        },
        runs
    );
    // Our numbers at every point, with the paper's where it reported one.
    let _ = writeln!(md, "| point | ours{unit} | 95 % CI | paper{unit} |");
    let _ = writeln!(md, "|---|---|---|---|");
    for o in ours.iter().flatten() {
        let paper_val = p
            .reported
            .iter()
            .filter(|r| {
                r.value.is_some()
                    && r.metric.is_none()
                    && r.series.is_none()
                    && r.over.is_none()
                    && r.statistic == Statistic::Mean
            })
            .find(|r| matching(std::slice::from_ref(&Some(o.clone())), &r.point).len() == 1)
            .and_then(|r| r.value)
            .map(fmt_num)
            .unwrap_or_else(|| "–".into());
        let ci =
            o.ci.map(|(a, b)| format!("[{}, {}]", fmt_num(a), fmt_num(b)))
                .unwrap_or_else(|| format!("(n = {})", o.n));
        let _ = writeln!(
            md,
            "| {} | {} | {ci} | {paper_val} |",
            fmt_point(&short_params(&o.params)),
            fmt_num(o.mean)
        );
    }
    // Effects against the baseline.
    let effects = effects(p, sweep_dir, &ours)?;
    let mut verdicts: Vec<&'static str> = Vec::new();
    if !p.baseline.is_empty() {
        let _ = writeln!(
            md,
            "\nEffects (relative change against the baseline {}):\n",
            fmt_point(&short_params(&p.baseline))
        );
        let _ = writeln!(md, "| point | ours | paper | verdict |");
        let _ = writeln!(md, "|---|---|---|---|");
        for x in &effects {
            let (label, paper_cell) = (&x.label, &x.paper_cell);
            match x.outcome {
                EffectOutcome::NoValue => {
                    let _ = writeln!(
                        md,
                        "| {label} | – | {paper_cell} | no value: no run of the point reached the metric (e.g. the transfer did not finish) |"
                    );
                }
                EffectOutcome::NotOne => {
                    let _ = writeln!(
                        md,
                        "| {label} | – | {paper_cell} | the point does not select one sweep point |"
                    );
                }
                EffectOutcome::Judged { ours_rel, verdict } => {
                    verdicts.push(verdict);
                    let _ = writeln!(
                        md,
                        "| {label} | {:+.1} % | {paper_cell} | {verdict} |",
                        100.0 * ours_rel
                    );
                }
            }
        }
    }
    let value_verdicts = values_section(e, sweep_dir, &mut md)?;
    let (ranking_summary, _) = ranking_section(p, &ours, &mut md);
    let sensitivity_summary = sensitivity.map(|s| sensitivity_section(p, s, &mut md));
    // The figure.
    if let Some(plot) = &p.plot {
        let figs = out.join("figures");
        std::fs::create_dir_all(&figs).map_err(|e| (1, format!("{}: {e}", figs.display())))?;
        let name = format!("{}-{}.svg", p.id, e.stem);
        let mut curve = crate::plot::parse_curve(&format!("{}*{}", p.metric, p.scale))
            .map_err(|e| (EXIT_BAD_INPUT, e))?;
        curve.label = "ours".into();
        let ylabel = plot.y_label.clone().unwrap_or_else(|| {
            format!(
                "{}{}",
                labels::metric_label(&p.metric),
                if unit.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", p.unit)
                }
            )
        });
        let xlabel = plot
            .x_label
            .clone()
            .unwrap_or_else(|| labels::key_label(&plot.x).axis());
        let series_name = plot.series.as_deref().map(|s| labels::key_label(s).text);
        let marks = paper_marks(p, plot, &ours);
        let draw = |file: &str| {
            crate::plot::plot_sweep(&crate::plot::SweepPlot {
                dir: sweep_dir,
                x: &plot.x,
                y: &curve,
                series: plot.series.as_deref(),
                filters: &[],
                title: &format!("paper {}: {}", p.id, p.experiment),
                xlabel: &xlabel,
                ylabel: &ylabel,
                out: &figs.join(file),
                series_name: series_name.as_deref(),
                paper: &marks,
            })
        };
        let png = name.replace(".svg", ".png");
        match draw(&name).and_then(|()| draw(&png)) {
            Ok(()) => {
                let _ = writeln!(
                    md,
                    "\n![{}](figures/{name})\n\n(mean per point with its 95 % CI as error bars; [PNG](figures/{png}))",
                    p.experiment
                );
            }
            Err(err) => {
                let _ = writeln!(md, "\nNo figure: {err}");
            }
        }
    }
    for (i, t) in p.trace.iter().enumerate() {
        let stem = format!("{}-{}-trace{i}", p.id, e.stem);
        match trace_figure(e, t, &out.join("figures"), &stem) {
            Ok(()) => {
                let _ = writeln!(
                    md,
                    "\n{} ({}), run 0 of every point:\n\n![{}](figures/{stem}.svg)\n\n([PNG](figures/{stem}.png))",
                    t.title, t.source, t.title
                );
            }
            Err(err) => {
                let _ = writeln!(md, "\nNo figure for {} ({}): {err}", t.title, t.source);
            }
        }
    }
    if !p.notes.is_empty() {
        let _ = writeln!(md, "\n{}", p.notes);
    }
    md.push('\n');
    let reproduced = verdicts
        .iter()
        .filter(|v| v.starts_with("reproduced"))
        .count();
    let direction = verdicts.iter().filter(|v| **v == "direction only").count();
    let values_summary = (!value_verdicts.is_empty()).then(|| {
        format!(
            "{} of {} values within tolerance",
            value_verdicts
                .iter()
                .filter(|v| v.starts_with("reproduced"))
                .count(),
            value_verdicts.len()
        )
    });
    let others: Vec<String> = values_summary.into_iter().chain(ranking_summary).collect();
    let summary = match (verdicts.is_empty(), others.is_empty()) {
        (true, false) => others.join("; "),
        (true, true) => "no effect to judge (absolute numbers only)".to_string(),
        (false, _) => format!(
            "{reproduced} of {} effects reproduced, {direction} in direction only{}",
            verdicts.len(),
            others.iter().map(|r| format!("; {r}")).collect::<String>()
        ),
    };
    let index_row = format!(
        "| {} | [{}](paper{}.md) | {} | {summary} | {} |",
        p.id,
        p.experiment,
        p.id,
        p.source,
        sensitivity_summary.as_deref().unwrap_or("–")
    );
    Ok(Section {
        markdown: md,
        index_row,
    })
}

/// Whether means listed in a claimed order (smallest first) rise strictly: the ranking
/// holds.
pub fn ranking_holds(means: &[f64]) -> bool {
    means.len() >= 2 && means.windows(2).all(|w| w[0] < w[1])
}

/// Whether gaps listed along a sweep key (in sweep order) grow: the gap at its last value
/// exceeds the gap at its first, and no step shrinks it by more than half the overall
/// growth (noise between neighbouring points is tolerated, a reversal is not).
pub fn gap_widens(gaps: &[f64]) -> bool {
    let (Some(first), Some(last)) = (gaps.first(), gaps.last()) else {
        return false;
    };
    let growth = last - first;
    gaps.len() >= 2 && growth > 0.0 && gaps.windows(2).all(|w| w[1] - w[0] >= -0.5 * growth)
}

/// Sweep parameters, as (key, value) pairs.
type Params = Vec<(String, String)>;

/// The points of `ours` grouped by their parameters other than `without`, groups in the
/// order of their first point; each group's points by their `without` value.
fn groups<'a>(ours: &'a [Option<Ours>], without: &[&str]) -> Vec<(Params, Vec<&'a Ours>)> {
    let mut out: Vec<(Params, Vec<&Ours>)> = Vec::new();
    for o in ours.iter().flatten() {
        let key: Vec<(String, String)> = o
            .params
            .iter()
            .filter(|(k, _)| !without.contains(&k.as_str()))
            .cloned()
            .collect();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(o),
            None => out.push((key, vec![o])),
        }
    }
    out
}

/// The paper id of an index row (`| 000 | ...`), if `line` is one.
fn row_paper(line: &str) -> Option<&str> {
    let cell = line.strip_prefix("| ")?.split(" |").next()?;
    (!cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit())).then_some(cell)
}

/// The index of a run of paper `id` alone (`new`) merged into an existing index (`old`):
/// `old` with its rows of paper `id` replaced by `new`'s, at the place of the first of
/// them (or among the rows by paper order). `new`'s text before its rows is kept.
fn merge_index(old: &str, new: &str, id: &str) -> String {
    let head: Vec<&str> = new.lines().take_while(|l| row_paper(l).is_none()).collect();
    let ours: Vec<String> = new
        .lines()
        .filter(|l| row_paper(l).is_some())
        .map(String::from)
        .collect();
    // Rows of an index written before a column was added get "–" in it.
    let cells = |l: &str| l.matches(" |").count();
    let width = head
        .iter()
        .rev()
        .find(|l| l.starts_with("| "))
        .map_or(0, |l| cells(l));
    let others: Vec<String> = old
        .lines()
        .filter(|l| row_paper(l).is_some_and(|p| p != id))
        .map(|l| {
            let mut l = l.to_string();
            for _ in cells(&l)..width {
                l.push_str(" – |");
            }
            l
        })
        .collect();
    let mut rows: Vec<String> = Vec::new();
    let mut placed = false;
    for r in others {
        if !placed && row_paper(&r).is_some_and(|p| p > id) {
            rows.extend(ours.iter().cloned());
            placed = true;
        }
        rows.push(r);
    }
    if !placed {
        rows.extend(ours.iter().cloned());
    }
    let mut out = head.join("\n");
    out.push('\n');
    for r in rows {
        out.push_str(&r);
        out.push('\n');
    }
    out
}

fn param<'a>(o: &'a Ours, key: &str) -> Option<&'a str> {
    o.params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What became of one `[[paper.ranking]]` claim.
struct RankingResult {
    /// The claimed order, values shown short (`quic < sctp < tcp`).
    order: String,
    /// Points where the ranking holds, points judged.
    held: usize,
    judged: usize,
    /// The widening claim, if made: the key and whether the gap grows along it.
    widens: Option<(String, String, bool)>,
}

/// The `[[paper.ranking]]` claims of `p` judged on `ours`, appended to `md`; returns the
/// index summary ("ranking holds at k of n points", and whether the gap widens) and each
/// claim's result.
fn ranking_section(
    p: &Paper,
    ours: &[Option<Ours>],
    md: &mut String,
) -> (Option<String>, Vec<RankingResult>) {
    let mut summaries = Vec::new();
    let mut results = Vec::new();
    for r in &p.ranking {
        let order = r
            .order
            .iter()
            .map(|v| crate::plot::short_label(v))
            .collect::<Vec<_>>();
        let _ = writeln!(
            md,
            "\nClaim: \"{}\" — means of `{}` ordered {} (smallest first) at every point:\n",
            r.claim,
            r.by,
            order.join(" < ")
        );
        let _ = writeln!(md, "| point | ours | ranking |");
        let _ = writeln!(md, "|---|---|---|");
        let mut held = 0;
        let mut judged = 0;
        // (point without `by`, gap last - first of the order), for the widening claim.
        let mut gaps: Vec<(Vec<(String, String)>, f64)> = Vec::new();
        for (point, members) in groups(ours, &[r.by.as_str()]) {
            let means: Option<Vec<f64>> = r
                .order
                .iter()
                .map(|v| {
                    members
                        .iter()
                        .find(|o| param(o, &r.by) == Some(v.as_str()))
                        .map(|o| o.mean)
                })
                .collect();
            let Some(means) = means else {
                let _ = writeln!(
                    md,
                    "| {} | – | a value of the order has no result |",
                    fmt_point(&short_params(&point))
                );
                continue;
            };
            judged += 1;
            let holds = ranking_holds(&means);
            held += usize::from(holds);
            let shown: Vec<String> = order
                .iter()
                .zip(&means)
                .map(|(v, m)| format!("{v} {}", fmt_num(*m)))
                .collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                fmt_point(&short_params(&point)),
                shown.join(", "),
                if holds { "holds" } else { "does not hold" }
            );
            gaps.push((point, means[means.len() - 1] - means[0]));
        }
        let mut summary = format!(
            "ranking {} holds at {held} of {judged} points",
            order.join(" < ")
        );
        let mut widens = None;
        if let Some(along) = &r.widens_along {
            let _ = writeln!(
                md,
                "\nGap {} − {} along `{along}` (claimed to grow):\n",
                order[order.len() - 1],
                order[0]
            );
            let mut all = true;
            let mut any = false;
            let as_ours: Vec<Option<Ours>> = gaps
                .iter()
                .map(|(point, gap)| {
                    Some(Ours {
                        params: point.clone(),
                        mean: *gap,
                        ci: None,
                        n: 0,
                    })
                })
                .collect();
            for (rest, line) in groups(&as_ours, &[along.as_str()]) {
                let values: Vec<f64> = line.iter().map(|o| o.mean).collect();
                let widens = gap_widens(&values);
                all &= widens;
                any = true;
                let shown: Vec<String> = line
                    .iter()
                    .map(|o| {
                        format!(
                            "{} {}",
                            crate::plot::short_label(param(o, along).unwrap_or("?")),
                            fmt_num(o.mean)
                        )
                    })
                    .collect();
                let _ = writeln!(
                    md,
                    "- {}{}: {}",
                    if rest.is_empty() {
                        String::new()
                    } else {
                        format!("{}: ", fmt_point(&short_params(&rest)))
                    },
                    shown.join(", "),
                    if widens { "grows" } else { "does not grow" }
                );
            }
            summary.push_str(if any && all {
                ", gap grows"
            } else {
                ", gap does not grow"
            });
            widens = Some((
                along.clone(),
                format!("{} − {}", order[order.len() - 1], order[0]),
                any && all,
            ));
        }
        summaries.push(summary);
        results.push(RankingResult {
            order: order.join(" < "),
            held,
            judged,
            widens,
        });
    }
    (
        (!summaries.is_empty()).then(|| summaries.join("; ")),
        results,
    )
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `quicsim reproduce`.
pub fn reproduce(mut args: ReproduceArgs) -> Result<(), Failure> {
    if args.runs == Some(0) {
        return Err((
            EXIT_BAD_INPUT,
            "--runs: 0 is not allowed: expected >= 1".into(),
        ));
    }
    args.jobs = sweep::worker_threads(args.jobs)?;
    let experiments = find(&args)?;
    std::fs::create_dir_all(&args.out).map_err(|e| (1, format!("{}: {e}", args.out.display())))?;
    // The report's files (index.md, paper<ID>.md, figures) have one writer; each sweep
    // directory is locked by its sweep as well.
    let _lock = crate::files::DirLock::acquire(&args.out)?;
    // Every sweep of every experiment (its own, and one per combination of unstated
    // parameters) is planned first, then all their jobs run in one pool, longest first
    // ([`sweep::run_prepared`]); the report is written from the finished directories.
    let mut planned = std::collections::BTreeSet::new();
    let mut todo = Vec::new();
    let mut plans = Vec::new();
    for e in &experiments {
        let runs = args.runs.or(e.paper.runs);
        let study = Study::new(
            e.scenario.clone(),
            &Overrides {
                runs,
                ..Overrides::default()
            },
        )
        .map_err(|err| (EXIT_BAD_INPUT, format!("{}: {err}", e.file.display())))?;
        let dir = args.out.join("sweeps").join(&e.paper.id).join(&e.stem);
        eprintln!(
            "paper {} — {}: {}",
            e.paper.id,
            e.paper.experiment,
            e.file.display()
        );
        let runs_per_point = study.runs();
        let fingerprint = study.fingerprint();
        todo.extend(plan_sweep(study, &dir, &mut planned)?);
        let combos = plan_sensitivity(
            e,
            runs,
            &dir,
            &fingerprint,
            &args.out,
            &mut planned,
            &mut todo,
        )?;
        plans.push((dir, runs_per_point, combos));
    }
    sweep::run_prepared(todo, args.jobs)?;
    let mut by_paper: std::collections::BTreeMap<String, Vec<Section>> = Default::default();
    for (e, (dir, runs_per_point, combos)) in experiments.iter().zip(&plans) {
        let sensitivity = combos
            .as_ref()
            .map(|dirs| sensitivity_judge(e, dirs, dir))
            .transpose()?;
        let s = section(e, dir, &args.out, *runs_per_point, sensitivity.as_ref())?;
        by_paper.entry(e.paper.id.clone()).or_default().push(s);
    }
    let want = (args.which != "all").then(|| normalise_id(&args.which));
    for p in read_pending(&args.scenarios)? {
        if want.as_ref().is_some_and(|w| *w != p.id) {
            continue;
        }
        let why = format!("not yet reproduced: needs {}", p.needs);
        by_paper.entry(p.id.clone()).or_default().push(Section {
            markdown: format!(
                "## {} ({})\n\n{}.\n\n",
                p.experiment,
                p.source,
                capitalise(&why)
            ),
            index_row: format!(
                "| {} | [{}](paper{}.md) | {} | {why} | – |",
                p.id, p.experiment, p.id, p.source
            ),
        });
    }
    let mut index = String::from(
        "# Reproductions\n\nGenerated by `quicsim reproduce all`: every scenario with a `[paper]` table, run as a sweep; per experiment our numbers beside the paper's. Verdicts: an effect (a reported point against its baseline) is *reproduced* when ours has the same direction and a relative size within ±50 % of the paper's, *direction only* when only the direction agrees; a reported non-effect (under 2 %) is reproduced when ours is under 5 %; a ranking the paper claims without numbers (\"QUIC < SCTP < TCP\") holds at a point when our means are in that order, and a gap claimed to grow with a parameter grows when it is larger at the parameter's last value than at its first with no step back of more than half that growth; where the paper states only a direction (its figures are missing, the text gives a shape), *reproduced (direction)* when ours has that sign and is at least 2 % in size, and where it says \"less than or equal\", *reproduced (or equal)* unless ours goes the other way by 5 % or more; an absolute value given with a tolerance (a time or a window read from a figure) is reproduced when ours is within that tolerance. Absolute numbers come from testbeds whose details are partly unknown: the notes of each experiment say where and why ours differ. Sensitivity: where a scenario declares testbed parameters the paper leaves unstated (`[[paper.unstated]]`), every claim is judged again under each combination of their plausible values, with the same seeds; the column says *reproduced (robust)* or *not reproduced (robust)* when every combination gives every claim that verdict, *robust* with the count when each claim keeps its own verdict, and *depends on* the parameters whose values change a claim's verdict otherwise (the paper's page has the table); – where none is declared.\n\n| paper | experiment | source | verdict | sensitivity |\n|---|---|---|---|---|\n",
    );
    if let Some(d) = read_diagrams(&args.scenarios) {
        // Before the table, so that `merge_index` keeps it with the head.
        let at = index.find("| paper |").unwrap_or(index.len());
        index.insert_str(
            at,
            &format!("Figures of the papers that are diagrams and report no measurement (nothing to reproduce): {d}.\n\n"),
        );
    }
    for (id, sections) in &by_paper {
        let mut md = format!("# Paper {id}\n\n");
        for s in sections {
            md.push_str(&s.markdown);
            index.push_str(&s.index_row);
            index.push('\n');
        }
        let path = args.out.join(format!("paper{id}.md"));
        crate::files::write_atomic(&path, md.as_bytes())?;
    }
    let path = args.out.join("index.md");
    // One paper regenerated: the other papers' rows of an existing index stay, in order.
    if let Some(w) = &want {
        if let Ok(old) = std::fs::read_to_string(&path) {
            index = merge_index(&old, &index, w);
        }
    }
    crate::files::write_atomic(&path, index.as_bytes())?;
    eprintln!("reproductions written to {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{
        direction_verdict, gap_widens, merge_index, ranking_holds, read_series, relative_change,
        value_verdict, verdict,
    };
    use sim_core::metrics::Series;
    use sim_core::scenario::paper::{Direction, SeriesClaim, SeriesRead};

    #[test]
    fn rankings_on_hand_made_numbers() {
        // QUIC < SCTP < TCP: the means in the claimed order must rise strictly.
        assert!(ranking_holds(&[10.0, 11.0, 14.0]));
        assert!(!ranking_holds(&[10.0, 12.0, 11.0]));
        assert!(!ranking_holds(&[10.0, 10.0, 11.0]), "a tie is not an order");
        assert!(!ranking_holds(&[10.0]), "one value ranks nothing");
        // Gaps along the link delay.
        assert!(gap_widens(&[1.0, 2.0, 4.0]));
        assert!(
            gap_widens(&[1.0, 2.2, 2.0, 4.0]),
            "a dip under half the growth is noise"
        );
        assert!(
            !gap_widens(&[1.0, 4.0, 1.5, 3.0]),
            "a large reversal is not growth"
        );
        assert!(!gap_widens(&[3.0, 2.0, 1.0]));
        assert!(!gap_widens(&[2.0, 2.0]));
        assert!(!gap_widens(&[2.0]));
    }

    #[test]
    fn direction_verdicts() {
        assert_eq!(
            direction_verdict(-0.30, Direction::Lower),
            "reproduced (direction)"
        );
        assert_eq!(direction_verdict(-0.01, Direction::Lower), "not reproduced");
        assert_eq!(direction_verdict(0.30, Direction::Lower), "not reproduced");
        assert_eq!(
            direction_verdict(0.05, Direction::Higher),
            "reproduced (direction)"
        );
    }

    #[test]
    fn or_equal_directions_hold_unless_ours_goes_the_other_way_by_5_percent() {
        // Paper 000 Fig. 13: the history window's standard deviation "less than or equal".
        for ours in [-0.40, -0.01, 0.0, 0.049] {
            assert_eq!(
                direction_verdict(ours, Direction::NotHigher),
                "reproduced (or equal)",
                "{ours}"
            );
        }
        assert_eq!(
            direction_verdict(0.05, Direction::NotHigher),
            "not reproduced"
        );
        assert_eq!(
            direction_verdict(0.40, Direction::NotHigher),
            "not reproduced"
        );
        assert_eq!(
            direction_verdict(0.40, Direction::NotLower),
            "reproduced (or equal)"
        );
        assert_eq!(
            direction_verdict(-0.05, Direction::NotLower),
            "not reproduced"
        );
        // A strict direction still needs 2 %.
        assert_eq!(direction_verdict(0.0, Direction::Lower), "not reproduced");
    }

    #[test]
    fn relative_changes_and_values_within_a_tolerance() {
        assert_eq!(
            relative_change(0.0, 0.0),
            0.0,
            "no loss either way: no change"
        );
        assert_eq!(relative_change(3.0, 2.0), 0.5);
        assert!(relative_change(1.0, 0.0).is_infinite());
        assert_eq!(
            value_verdict(0.6, 0.5, 0.25),
            "reproduced (within tolerance)"
        );
        assert_eq!(
            value_verdict(0.4, 0.5, 0.2),
            "reproduced (within tolerance)"
        );
        assert_eq!(value_verdict(0.3, 0.5, 0.25), "not reproduced");
        assert_eq!(
            value_verdict(16384.0, 16384.0, 0.0),
            "reproduced (within tolerance)"
        );
        assert_eq!(value_verdict(32768.0, 16384.0, 0.0), "not reproduced");
    }

    #[test]
    fn series_claims_read_the_summed_columns() {
        let s = Series {
            columns: vec!["time_s".into(), "a".into(), "b".into()],
            rows: vec![
                vec![0.0, 4.0, 4.0],
                vec![0.1, 8.0, 4.0],
                vec![0.2, 8.0, 8.0],
                vec![0.3, 16.0, 16.0],
            ],
            truncated: false,
        };
        let claim = |columns: &[&str], read| SeriesClaim {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            read,
        };
        let r = |c: &SeriesClaim| read_series(&s, c).unwrap();
        assert_eq!(r(&claim(&["a", "b"], SeriesRead::Reaches(12.0))), Some(0.1));
        assert_eq!(r(&claim(&["a", "b"], SeriesRead::Reaches(16.0))), Some(0.2));
        assert_eq!(r(&claim(&["a"], SeriesRead::Reaches(16.0))), Some(0.3));
        assert_eq!(
            r(&claim(&["a"], SeriesRead::Reaches(17.0))),
            None,
            "never reached"
        );
        assert_eq!(r(&claim(&["a", "b"], SeriesRead::At(0.25))), Some(16.0));
        assert_eq!(r(&claim(&["a", "b"], SeriesRead::At(0.3))), Some(32.0));
        assert_eq!(r(&claim(&["b"], SeriesRead::At(0.0))), Some(4.0));
        let e = read_series(&s, &claim(&["c"], SeriesRead::At(0.0))).unwrap_err();
        assert!(e.contains("no series column \"c\""), "{e}");
    }

    #[test]
    fn one_papers_index_rows_replace_its_old_rows_and_keep_the_others() {
        let old = "# R\n\ntext\n\n| paper | x |\n|---|---|\n| 000 | a |\n| 002 | old |\n| 002 | old2 |\n| 003 | c |\n";
        let new = "# R\n\ntext\n\n| paper | x |\n|---|---|\n| 002 | new |\n";
        assert_eq!(
            merge_index(old, new, "002"),
            "# R\n\ntext\n\n| paper | x |\n|---|---|\n| 000 | a |\n| 002 | new |\n| 003 | c |\n"
        );
        // A paper not in the old index goes among the rows by its id.
        let new1 = new.replace("| 002 | new |", "| 001 | n |");
        // Old rows without a column the new index has get "–" in it.
        let new2 = "# R\n\n| paper | x | y |\n|---|---|---|\n| 002 | new | z |\n";
        assert_eq!(
            merge_index(old, new2, "002"),
            "# R\n\n| paper | x | y |\n|---|---|---|\n| 000 | a | – |\n| 002 | new | z |\n| 003 | c | – |\n"
        );
        assert_eq!(
            merge_index(old, &new1, "001"),
            "# R\n\ntext\n\n| paper | x |\n|---|---|\n| 000 | a |\n| 001 | n |\n| 002 | old |\n| 002 | old2 |\n| 003 | c |\n"
        );
    }

    #[test]
    fn verdicts() {
        assert_eq!(verdict(-0.30, -0.31), "reproduced");
        assert_eq!(verdict(-0.10, -0.31), "direction only");
        assert_eq!(verdict(-0.50, -0.31), "direction only");
        assert_eq!(verdict(-0.40, -0.31), "reproduced");
        assert_eq!(verdict(0.10, -0.31), "not reproduced");
        assert_eq!(verdict(-0.01, -0.31), "not reproduced");
        assert_eq!(verdict(0.03, 0.0), "reproduced (no effect)");
        assert_eq!(verdict(0.08, 0.01), "not reproduced");
    }
}
