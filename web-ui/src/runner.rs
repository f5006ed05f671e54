//! A scenario run for the browser: every job of the scenario's [`Study`] (sweep points x
//! runs, the seeds `quicsim run` uses) stepped a slice of events at a time through
//! [`Simulation::step`], so a worker can report progress between slices and be stopped.
//! Time series are switched on (they change neither the events nor the digest).

use crate::summary::{lines_of_jobs, PointInfo, RunLine};
use serde::{Deserialize, Serialize};
use sim_core::breakdown::FlowBreakdown;
use sim_core::metrics::Series;
use sim_core::scenario::ConfigError;
use sim_core::sim::Simulation;
use sim_core::study::{Overrides, Study};
use sim_core::trace::{
    BlockedReason, RunInfo, SenderProbe, TraceEvent, TraceRecord, TraceSource, Tracer,
};
use sim_core::RunResult;
use std::cell::RefCell;
use std::rc::Rc;

/// How far a run is, for the progress bar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    /// Jobs finished.
    pub done: usize,
    /// Jobs in all.
    pub jobs: usize,
    /// Simulated time of the current job, seconds.
    pub time_s: f64,
    /// Events of the current job so far.
    pub events: u64,
    /// Fraction of the whole study, in [0, 1] (each job by simulated time over its limit).
    pub fraction: f64,
}

/// What a finished run hands to the page (through JSON, from the worker: no NaN in it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutput {
    /// The document `quicsim run FILE --json` prints for the same scenario (its
    /// `resolved_config` has `series` on).
    pub doc: serde_json::Value,
    /// Every run's summary line, in job order (point-major, then run).
    pub lines: Vec<RunLine>,
    /// The sweep points (one, with no parameters, without a sweep).
    #[serde(default)]
    pub points: Vec<PointInfo>,
    /// The first run's time series (the page asks the worker for another run's:
    /// [`Runner::series_of`]).
    pub series: Option<PlotSeries>,
    /// "Where the time went" in the first run of every sweep point (a paired comparison's
    /// variants are points), one bar per flow that reports it (`sim_core::breakdown`).
    #[serde(default)]
    pub breakdown: Vec<BreakdownBar>,
    /// The capacity of every trace-driven link over the first run ([`crate::capacity`]).
    #[serde(default)]
    pub capacity: Vec<crate::capacity::TraceCapacity>,
    /// The paired comparison of a multi-transport scenario (`transports = [...]`), as
    /// `sim_core::study::paired` computed it, laid out like `quicsim run`'s table.
    #[serde(default)]
    pub paired: Vec<PairedTable>,
}

/// One compared metric at one grid point of a paired comparison (`docs/paired.md`): each
/// run's value per variant and its differences to the baseline, then per variant the mean
/// difference and its Student-t 95 % CI — the numbers of `sim_core::study::paired`,
/// formatted as `quicsim run` prints them (nothing recomputed here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedTable {
    /// `grid point N: k = v, ...` (empty without a sweep).
    pub grid: String,
    /// The compared metric (e.g. `flow0.completion_secs`).
    pub metric: String,
    /// Column heads: `seed`, the variants, then `variant-baseline` per other variant.
    pub head: Vec<String>,
    /// One row per run, cells formatted (`-`: no value).
    pub rows: Vec<Vec<String>>,
    /// Per variant: `variant - baseline: mean m, 95 % CI [lo, hi] (n = k)`.
    pub differences: Vec<String>,
}

impl PairedTable {
    /// The tables of `p`, point by point, metric by metric.
    pub fn of(p: &sim_core::study::paired::Paired) -> Vec<PairedTable> {
        let cell = |x: Option<f64>| x.map(|x| format!("{x:.6}")).unwrap_or_else(|| "-".into());
        let mut out = Vec::new();
        for pt in &p.points {
            let grid = if pt.params.is_empty() {
                String::new()
            } else {
                let ps: Vec<String> = pt
                    .params
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect();
                format!("grid point {}: {}", pt.grid_point, ps.join(", "))
            };
            for m in &pt.metrics {
                let mut head = vec!["seed".to_string()];
                head.extend(p.variants.iter().cloned());
                head.extend(
                    p.variants[1..]
                        .iter()
                        .map(|v| format!("{v}-{}", p.baseline)),
                );
                let rows = m
                    .runs
                    .iter()
                    .map(|r| {
                        let mut row = vec![r.seed.to_string()];
                        row.extend(r.values.iter().chain(&r.differences).map(|x| cell(*x)));
                        row
                    })
                    .collect();
                let differences = m
                    .differences
                    .iter()
                    .map(|d| match &d.summary {
                        None => format!("{} - {}: no run with both values", d.variant, p.baseline),
                        Some(s) => {
                            let ci = s
                                .ci95
                                .map(|(lo, hi)| format!("95 % CI [{lo:.6}, {hi:.6}]"))
                                .unwrap_or_else(|| "no CI with one run".into());
                            format!(
                                "{} - {}: mean {:.6}, {ci} (n = {})",
                                d.variant, p.baseline, s.mean, s.n
                            )
                        }
                    })
                    .collect();
                out.push(PairedTable {
                    grid: grid.clone(),
                    metric: m.metric.clone(),
                    head,
                    rows,
                    differences,
                });
            }
        }
        out
    }
}

/// One flow's "where the time went" stacked bar.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BreakdownBar {
    /// The sweep point (a paired comparison's variant) of the run.
    #[serde(default)]
    pub point: usize,
    /// The sender's transport (`quic`, `tcp`, `sctp`).
    #[serde(default)]
    pub transport: String,
    /// The flow's index.
    pub flow: u32,
    /// The data sender's index within the flow's endpoints.
    pub endpoint: u32,
    /// The parts' sum, seconds.
    pub total_s: f64,
    /// The sender's completion time (`completion_secs`: last byte acknowledged), seconds;
    /// `None` if the transfer did not complete (then the parts cover the run so far).
    pub completion_s: Option<f64>,
    /// `(key, label, seconds)` per part, in display order (zero parts included).
    pub parts: Vec<(String, String, f64)>,
}

impl BreakdownBar {
    /// The bar of `b` in `result`, a run of sweep point `point`.
    pub fn of(point: usize, b: &FlowBreakdown, result: &RunResult) -> BreakdownBar {
        let m = result
            .flows
            .get(b.flow as usize)
            .and_then(|f| f.endpoints.get(b.endpoint as usize));
        let completion_s = m
            .and_then(|m| m.transport())
            .and_then(|t| t.completion_secs);
        BreakdownBar {
            point,
            transport: m.map_or("", |m| m.kind()).to_string(),
            flow: b.flow,
            endpoint: b.endpoint,
            total_s: b.breakdown.total().as_secs_f64(),
            completion_s,
            parts: b
                .breakdown
                .secs()
                .into_iter()
                .map(|(p, secs)| (p.as_str().to_string(), p.label().to_string(), secs))
                .collect(),
        }
    }
}

/// A run's time series for plotting: non-finite samples are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlotSeries {
    /// Column names; the first is `time_s`.
    pub columns: Vec<String>,
    /// One row per sampling instant.
    pub rows: Vec<Vec<Option<f64>>>,
    /// Who is who and what happened when (the run's events for the time axis).
    #[serde(default)]
    pub meta: RunMeta,
}

/// What the plots need besides the samples: the endpoints' roles (to name the lines) and
/// the run's events, both read by a tracer that observes the run ([`EventTracer`]; tracing
/// changes neither the events nor the digest).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// `(endpoint slot, flow, role)`: the `N` of a `flowF.epN.*` column, its flow and
    /// `client` / `server` (`sender` / `receiver` for a constant-bit-rate pair).
    pub endpoints: Vec<(u32, u32, String)>,
    /// The run's events in time order (at most [`MAX_EVENTS`]).
    pub events: Vec<RunEvent>,
    /// Events left out beyond [`MAX_EVENTS`].
    pub events_dropped: u64,
}

/// At most this many events are kept per run.
pub const MAX_EVENTS: usize = 20_000;

/// One event marked on the time axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    /// Simulated time, seconds.
    pub t: f64,
    /// `loss` (a packet declared lost), `pto` (a probe timeout: QUIC PTO, RFC 9002 §6.2),
    /// `handover`, `migration` (RFC 9000 §9), `blocked` (flow control: the peer's
    /// connection or stream limit reached, RFC 9000 §4).
    pub kind: String,
    /// The flow concerned (`None`: the network, e.g. a handover).
    pub flow: Option<u32>,
    /// In words, e.g. "server: packet 41 declared lost".
    pub text: String,
}

/// Collects [`RunMeta`] from a run's trace records.
#[derive(Default)]
struct EventLog {
    meta: RunMeta,
    /// The last PTO count seen per endpoint and connection.
    pto: std::collections::HashMap<(u32, u32), u32>,
    /// TCP segments declared lost and not yet sent again, per endpoint (a timeout marks
    /// the whole window lost again: counted once, as the endpoint's metrics do; a
    /// retransmission the timeout marks lost again is counted, which the metrics do not).
    tcp_lost: std::collections::HashSet<(u32, u32, u64)>,
}

impl EventLog {
    fn push(&mut self, t: f64, kind: &str, flow: Option<u32>, text: String) {
        if self.meta.events.len() >= MAX_EVENTS {
            self.meta.events_dropped += 1;
            return;
        }
        self.meta.events.push(RunEvent {
            t,
            kind: kind.to_string(),
            flow,
            text,
        });
    }

    fn record(&mut self, r: &TraceRecord) {
        let t = r.time.0 as f64 * 1e-9;
        match (&r.source, &r.event) {
            (TraceSource::Network { .. }, TraceEvent::Handover { index, pair, .. }) => self.push(
                t,
                "handover",
                None,
                format!("handover {index} of pair {pair}"),
            ),
            (TraceSource::Endpoint(id), e) => {
                let who = id.vantage.as_str();
                let flow = Some(id.flow);
                match e {
                    TraceEvent::PacketLost { .. } => {
                        self.push(t, "loss", flow, format!("{who}: a packet declared lost"))
                    }
                    TraceEvent::SenderProbe(SenderProbe::Lost { seq, .. })
                        if self.tcp_lost.insert((id.endpoint, id.connection, *seq)) =>
                    {
                        self.push(
                            t,
                            "loss",
                            flow,
                            format!("{who}: segment {seq} declared lost"),
                        )
                    }
                    TraceEvent::SenderProbe(SenderProbe::Sent { seq, .. }) => {
                        self.tcp_lost.remove(&(id.endpoint, id.connection, *seq));
                    }
                    TraceEvent::MetricsUpdated(m) => {
                        if let Some(n) = m.pto_count {
                            let prev = self.pto.insert((id.endpoint, id.connection), n);
                            if n > prev.unwrap_or(0) {
                                self.push(t, "pto", flow, format!("{who}: probe timeout {n}"))
                            }
                        }
                    }
                    TraceEvent::MigrationStateUpdated { new, .. } => {
                        self.push(t, "migration", flow, format!("{who}: {new}"))
                    }
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked: true,
                        reason:
                            reason @ (BlockedReason::ConnectionFlowControl
                            | BlockedReason::StreamFlowControl),
                    } => {
                        let what = match (reason, stream) {
                            (BlockedReason::StreamFlowControl, Some(s)) => format!("stream {s}"),
                            _ => "connection".to_string(),
                        };
                        self.push(
                            t,
                            "blocked",
                            flow,
                            format!("{who}: {what} blocked by flow control"),
                        )
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// The tracer the page runs every job with: fills a shared [`EventLog`].
struct EventTracer(Rc<RefCell<EventLog>>);

impl Tracer for EventTracer {
    fn begin(&mut self, info: &RunInfo) {
        let mut log = self.0.borrow_mut();
        log.meta.endpoints = info
            .endpoints
            .iter()
            .map(|e| {
                let role = match e.kind {
                    "cbr_source" => "sender",
                    "cbr_sink" => "receiver",
                    _ => e.id.vantage.as_str(),
                };
                (e.id.endpoint, e.id.flow, role.to_string())
            })
            .collect();
    }
    fn record(&mut self, record: &TraceRecord) {
        self.0.borrow_mut().record(record);
    }
}

/// Per-stream lines the plots draw per endpoint and measure: a run with more streams gets
/// the first `STREAM_LINES` and one line of the sum over all of them ([`PlotSeries::plotted`]).
pub const STREAM_LINES: usize = 8;

/// Above this many streams in all flows, or this many runs, the page asks before running
/// ([`size_warning`]).
pub const HUGE_STREAMS: u64 = 1000;
/// See [`HUGE_STREAMS`].
pub const HUGE_JOBS: usize = 500;

/// The per-stream part of a column name: `flow0.ep0.stream12_read` is
/// (`flow0.ep0`, 12, `read`).
fn stream_column(name: &str) -> Option<(&str, u64, &str)> {
    let (prefix, measure) = name.rsplit_once('.')?;
    let rest = measure.strip_prefix("stream")?;
    let (id, what) = rest.split_once('_')?;
    Some((prefix, id.parse().ok()?, what))
}

/// The name of the column summing all `n` streams' `what` of `prefix`:
/// `flow0.ep0.streams_sum_of_10000_read` (charted with the per-stream columns).
pub fn stream_sum_column(prefix: &str, n: usize, what: &str) -> String {
    format!("{prefix}.streams_sum_of_{n}_{what}")
}

impl PlotSeries {
    /// The series of `s` as the page plots it: every column, except that per-stream
    /// columns (`flowF.epE.streamN_<what>`) beyond the first [`STREAM_LINES`] streams of an
    /// endpoint are replaced by one column of their sum over all its streams
    /// ([`stream_sum_column`]). A run of 10 000 streams has 30 000 per-stream columns: drawn
    /// one line each they froze the page for a minute; the full series are
    /// `quicsim run --series`'s. Non-finite values are `None`.
    pub fn plotted(s: &Series) -> PlotSeries {
        // Per (endpoint prefix, measure): the columns of its streams, in column order.
        let mut groups: Vec<((&str, &str), Vec<usize>)> = Vec::new();
        for (i, c) in s.columns.iter().enumerate().skip(1) {
            if let Some((prefix, _, what)) = stream_column(c) {
                match groups.iter_mut().find(|(k, _)| *k == (prefix, what)) {
                    Some((_, v)) => v.push(i),
                    None => groups.push(((prefix, what), vec![i])),
                }
            }
        }
        if groups.iter().all(|(_, v)| v.len() <= STREAM_LINES) {
            return PlotSeries::of(s);
        }
        // What each output column is: a source column, or the sum of a group.
        enum Col<'a> {
            One(usize),
            Sum(&'a [usize]),
        }
        let mut dropped = vec![false; s.columns.len()];
        let mut after: Vec<(usize, usize)> = Vec::new(); // (last kept column, group)
        for (g, (_, v)) in groups.iter().enumerate() {
            if v.len() > STREAM_LINES {
                v[STREAM_LINES..].iter().for_each(|&i| dropped[i] = true);
                after.push((v[STREAM_LINES - 1], g));
            }
        }
        let mut cols: Vec<Col> = Vec::new();
        let mut names = Vec::new();
        for (i, c) in s.columns.iter().enumerate() {
            if dropped[i] {
                continue;
            }
            cols.push(Col::One(i));
            names.push(c.clone());
            for &(_, g) in after.iter().filter(|(last, _)| *last == i) {
                let ((prefix, what), v) = &groups[g];
                cols.push(Col::Sum(v));
                names.push(stream_sum_column(prefix, v.len(), what));
            }
        }
        let rows = s
            .rows
            .iter()
            .map(|r| {
                cols.iter()
                    .map(|c| match c {
                        Col::One(i) => Some(r[*i]).filter(|v| v.is_finite()),
                        Col::Sum(v) => {
                            let finite = v.iter().map(|&i| r[i]).filter(|x| x.is_finite());
                            let (n, sum) = finite.fold((0, 0.0), |(n, s), x| (n + 1, s + x));
                            (n > 0).then_some(sum)
                        }
                    })
                    .collect()
            })
            .collect();
        PlotSeries {
            columns: names,
            rows,
            meta: RunMeta::default(),
        }
    }

    /// The series of `s`, non-finite values as `None`.
    pub fn of(s: &Series) -> PlotSeries {
        PlotSeries {
            columns: s.columns.clone(),
            rows: s
                .rows
                .iter()
                .map(|r| r.iter().map(|v| v.is_finite().then_some(*v)).collect())
                .collect(),
            meta: RunMeta::default(),
        }
    }
}

/// Time buckets a plotted series keeps the extremes of ([`PlotSeries::thinned`]): about
/// twice the plot area's width in canvas pixels ([`crate::charts::CANVAS_W`]), so every
/// pixel column still gets its first, last, lowest and highest sample of every line.
pub const PLOT_BUCKETS: usize = 1024;

impl PlotSeries {
    /// The rows a line chart of `buckets` time buckets cannot tell from all of them (M4
    /// decimation, Jugel et al., "M4: A Visualization-Oriented Time Series Data
    /// Aggregation", VLDB 2014): the time axis cut into `buckets` equal buckets, and of
    /// each bucket the first and last row and, per column, the rows of its first, last,
    /// lowest and highest sample. A line through the kept rows covers the same pixels as
    /// one through all of them once a bucket is at most a pixel wide. A series of at most
    /// `4 * buckets` rows is returned as it is. A 205 s run sampled every 2 ms (104 000
    /// rows of 41 columns, paper 000's Bad dumbbell) kept the page busy for half a second
    /// decoding and drawing lines of 100 000 points into 500 pixels; the full series are
    /// `quicsim run --series`'s.
    pub fn thinned(self, buckets: usize) -> PlotSeries {
        let n = self.rows.len();
        let buckets = buckets.max(1);
        if n <= 4 * buckets {
            return self;
        }
        let t = |r: usize| self.rows[r].first().copied().flatten();
        let (Some(t0), Some(t1)) = ((0..n).find_map(t), (0..n).rev().find_map(t)) else {
            return self;
        };
        if t1 <= t0 {
            return self;
        }
        let span = t1 - t0;
        let bucket =
            |r: usize| t(r).map(|x| (((x - t0) / span * buckets as f64) as usize).min(buckets - 1));
        let cols = self.columns.len();
        let mut keep = vec![false; n];
        let mut start = 0;
        while start < n {
            let b = bucket(start);
            let mut end = start + 1;
            while end < n && bucket(end) == b {
                end += 1;
            }
            keep[start] = true;
            keep[end - 1] = true;
            for c in 1..cols {
                // (row, value) of the first, last, lowest and highest sample.
                let mut ext: Option<[(usize, f64); 4]> = None;
                for (r, row) in self.rows.iter().enumerate().take(end).skip(start) {
                    let Some(v) = row.get(c).copied().flatten() else {
                        continue;
                    };
                    match ext.as_mut() {
                        None => ext = Some([(r, v); 4]),
                        Some(e) => {
                            e[1] = (r, v);
                            if v < e[2].1 {
                                e[2] = (r, v);
                            }
                            if v > e[3].1 {
                                e[3] = (r, v);
                            }
                        }
                    }
                }
                for (r, _) in ext.into_iter().flatten() {
                    keep[r] = true;
                }
            }
            start = end;
        }
        let PlotSeries {
            columns,
            rows,
            meta,
        } = self;
        PlotSeries {
            columns,
            rows: rows
                .into_iter()
                .zip(keep)
                .filter_map(|(r, k)| k.then_some(r))
                .collect(),
            meta,
        }
    }

    /// The rows flattened row-major, a missing sample as NaN: what the worker transfers
    /// to the page as a `Float64Array` (no JSON text to write and parse).
    pub fn flat(&self) -> Vec<f64> {
        self.rows
            .iter()
            .flat_map(|r| r.iter().map(|v| v.unwrap_or(f64::NAN)))
            .collect()
    }

    /// The inverse of [`PlotSeries::flat`]: `values` cut into rows of `columns.len()`
    /// (the meta travels as JSON).
    pub fn from_flat(columns: Vec<String>, values: &[f64], meta: RunMeta) -> PlotSeries {
        let n = columns.len().max(1);
        PlotSeries {
            rows: values
                .chunks(n)
                .map(|r| r.iter().map(|v| v.is_finite().then_some(*v)).collect())
                .collect(),
            columns,
            meta,
        }
    }
}

/// Events per slice of [`Runner::smoke`] (the worker's slice size).
const SMOKE_SLICE: u64 = 20_000;

/// A study being stepped.
pub struct Runner {
    study: Study,
    current: Option<(Simulation<'static>, Rc<RefCell<EventLog>>)>,
    results: Vec<RunResult>,
    /// The first job's [`RunMeta`].
    meta0: RunMeta,
    /// "Where the time went" of the first job (of every point's first job in a paired
    /// comparison), taken just before it finished: `(point, result index, splits)`.
    breakdown: Vec<(usize, usize, Vec<FlowBreakdown>)>,
}

impl Runner {
    /// Parses and validates the scenario text: the error is the one `quicsim` prints.
    pub fn new(toml: &str) -> Result<Runner, ConfigError> {
        let scenario = crate::gallery::parse(toml)?;
        let overrides = Overrides {
            seed: None,
            runs: None,
            series: true,
        };
        Ok(Runner {
            study: Study::new(scenario, &overrides)?,
            current: None,
            results: Vec::new(),
            meta0: RunMeta::default(),
            breakdown: Vec::new(),
        })
    }

    /// Processes at most `budget` events; `true` once every job has finished.
    pub fn step(&mut self, budget: u64) -> Result<bool, ConfigError> {
        let mut left = budget;
        while left > 0 {
            let Some(job) = self.study.jobs().get(self.results.len()).cloned() else {
                return Ok(true);
            };
            if self.current.is_none() {
                // The first job (the one plotted first) is traced for the event marks:
                // tracing changes no event and no digest, but costs time (~70 % on a bulk
                // transfer), so the others are traced again only when plotted
                // ([`Runner::series_of`]).
                let log = Rc::new(RefCell::new(EventLog::default()));
                let sim = if self.results.is_empty() {
                    let tracer = Box::new(EventTracer(Rc::clone(&log)));
                    Simulation::with_tracer(self.study.config(&job), job.seed, tracer)?
                } else {
                    self.study.simulation(&job)?
                };
                self.current = Some((sim, log));
            }
            let (sim, _) = self.current.as_mut().expect("set above");
            let out = sim.step(left);
            left = left.saturating_sub(out.events.max(1));
            if out.is_finished() {
                let (sim, log) = self.current.take().expect("set above");
                if self.results.is_empty() || job.run == 0 {
                    self.breakdown
                        .push((job.point, self.results.len(), sim.breakdown()));
                }
                if self.results.is_empty() {
                    self.meta0 = std::mem::take(&mut log.borrow_mut().meta);
                }
                self.results.push(sim.finish());
            }
        }
        Ok(self.results.len() == self.study.jobs().len())
    }

    /// A smoke run of `toml` through the page's stepping code: one run per sweep point,
    /// each stepped in the worker's slices until it ends or `max_events` live events were
    /// processed (then finished early, status `stopped`). The per-run summary lines, or the
    /// error the page would show.
    pub fn smoke(toml: &str, max_events: u64) -> Result<Vec<RunLine>, ConfigError> {
        let scenario = crate::gallery::parse(toml)?;
        let overrides = Overrides {
            seed: None,
            runs: Some(1),
            series: true,
        };
        let study = Study::new(scenario, &overrides)?;
        let mut results = Vec::new();
        for job in study.jobs() {
            let mut sim = study.simulation(job)?;
            while !sim.step(SMOKE_SLICE).is_finished() && sim.progress().events < max_events {}
            results.push(sim.finish());
        }
        let jobs: Vec<(usize, u32)> = study.jobs().iter().map(|j| (j.point, j.run)).collect();
        Ok(lines_of_jobs(&jobs, &results))
    }

    /// Progress so far.
    pub fn progress(&self) -> RunProgress {
        let jobs = self.study.jobs().len();
        let done = self.results.len();
        let (time_s, events, part) = match (&self.current, self.study.jobs().get(done)) {
            (Some((sim, _)), Some(job)) => {
                let p = sim.progress();
                let limit = self.study.config(job).sim.time_limit.0.max(1) as f64;
                (
                    p.time.0 as f64 * 1e-9,
                    p.events,
                    (p.time.0 as f64 / limit).min(1.0),
                )
            }
            _ => (0.0, 0, 0.0),
        };
        RunProgress {
            done,
            jobs,
            time_s,
            events,
            fraction: if jobs == 0 {
                1.0
            } else {
                (done as f64 + part) / jobs as f64
            },
        }
    }

    /// The time series of finished job `job` (an index into the jobs, point-major), for
    /// the page's point and run chooser.
    pub fn series_of(&self, job: usize) -> Option<PlotSeries> {
        let mut s = self
            .results
            .get(job)
            .and_then(|r| r.series.as_ref())
            .map(|s| PlotSeries::plotted(s).thinned(PLOT_BUCKETS))?;
        s.meta = if job == 0 {
            self.meta0.clone()
        } else {
            self.meta_of(job).unwrap_or_default()
        };
        Some(s)
    }

    /// The [`RunMeta`] of job `job`, by running it again traced (the same run: the same
    /// config and seed; tracing changes nothing).
    fn meta_of(&self, job: usize) -> Option<RunMeta> {
        let job = self.study.jobs().get(job)?;
        let log = Rc::new(RefCell::new(EventLog::default()));
        let tracer = Box::new(EventTracer(Rc::clone(&log)));
        let mut sim = Simulation::with_tracer(self.study.config(job), job.seed, tracer).ok()?;
        while !sim.step(1_000_000).is_finished() {}
        drop(sim);
        let meta = std::mem::take(&mut log.borrow_mut().meta);
        Some(meta)
    }

    /// Every finished run's result, in job order.
    pub fn results(&self) -> &[RunResult] {
        &self.results
    }

    /// The results (call once [`Runner::step`] said `true`).
    pub fn output(&self) -> RunOutput {
        let study_result = self.study.results(&self.results);
        let paired = study_result
            .paired
            .as_ref()
            .map(PairedTable::of)
            .unwrap_or_default();
        let doc = serde_json::to_value(&study_result).expect("JSON");
        let jobs: Vec<(usize, u32)> = self.study.jobs().iter().map(|j| (j.point, j.run)).collect();
        let mut lines = lines_of_jobs(&jobs, &self.results);
        for (l, j) in lines.iter_mut().zip(self.study.jobs()) {
            l.note = crate::summary::status_note(&l.status, l.end_s, &self.study.config(j).sim);
        }
        RunOutput {
            doc,
            lines,
            points: PointInfo::all(&self.study.point_params()),
            series: self.series_of(0),
            breakdown: self
                .breakdown
                .iter()
                .filter_map(|(point, i, bs)| Some((point, self.results.get(*i)?, bs)))
                .flat_map(|(&point, r, bs)| bs.iter().map(move |b| BreakdownBar::of(point, b, r)))
                .collect(),
            paired,
            capacity: match (self.study.jobs().first(), self.results.first()) {
                (Some(j), Some(r)) => {
                    crate::capacity::of_config(self.study.config(j), r.end_time.as_secs_f64())
                }
                _ => Vec::new(),
            },
        }
    }
}

/// Why a scenario is too big to run without asking (`None`: it is not): more than
/// [`HUGE_STREAMS`] request streams in all its flows (the time series record 3 columns per
/// stream: a 10 000-stream run takes minutes and hundreds of MB in the tab), or more than
/// [`HUGE_JOBS`] runs. A scenario that does not parse is not huge (its error is shown).
pub fn size_warning(toml: &str) -> Option<String> {
    fn streams(v: &serde_json::Value) -> u64 {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .map(|(k, x)| match (k.as_str(), x.as_u64()) {
                    ("streams", Some(n)) => n,
                    _ => streams(x),
                })
                .sum(),
            serde_json::Value::Array(a) => a.iter().map(streams).sum(),
            _ => 0,
        }
    }
    let scenario = crate::gallery::parse(toml).ok()?;
    let jobs = scenario.points.len() * scenario.base.runs as usize;
    let n: u64 = scenario
        .points
        .iter()
        .map(|p| {
            p.config
                .flows
                .iter()
                .filter_map(|f| serde_json::to_value(f).ok())
                .map(|v| streams(&v))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    if n > HUGE_STREAMS {
        Some(format!(
            "This scenario has {n} request streams: recording their time series (3 columns per stream, one row per sample interval) makes the run slow and large (it may take minutes and hundreds of MB in this tab). The plots will draw the first {STREAM_LINES} streams of each endpoint and the sum over all of them. Press Run to run it anyway."
        ))
    } else if jobs > HUGE_JOBS {
        Some(format!(
            "This scenario has {jobs} runs ({} sweep point(s) x {} run(s)): it may take a long time in this tab (quicsim run uses every core). Press Run to run it anyway.",
            scenario.points.len(),
            scenario.base.runs
        ))
    } else {
        None
    }
}

/// The qlog traces (qvis format, JSON-SEQ) of flow 0 in the first run of `toml`, as
/// (file name as the CLI names it, text): what `quicsim run --qlog` writes for them.
pub fn qlog_files(toml: &str) -> Result<Vec<(String, String)>, ConfigError> {
    use sim_core::qlog::{file_name, QlogFormat, QlogWriter};
    let scenario = crate::gallery::parse(toml)?;
    let study = Study::new(
        scenario,
        &Overrides {
            seed: None,
            runs: None,
            series: false,
        },
    )?;
    let Some(job) = study.jobs().first().cloned() else {
        return Ok(Vec::new());
    };
    let cfg = study.config(&job);
    let name = cfg.name.clone();
    // The title the CLI gives it.
    let title = format!("{name} point {} seed {}", job.point, job.seed);
    let mut w: QlogWriter<'_, Vec<u8>> =
        QlogWriter::new(QlogFormat::Qvis, title, Box::new(|_| Ok(Vec::new())));
    sim_core::runner::run_traced(cfg, job.seed, &mut w)?;
    let outputs = w
        .into_outputs()
        .map_err(|e| ConfigError::new("qlog", "", e.to_string()))?;
    Ok(outputs
        .into_iter()
        .filter(|(k, _)| k.flow == 0)
        .map(|(k, bytes)| {
            (
                file_name(&name, job.seed, job.point, &k),
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stepped in small slices, the runner gives every job the result `sim_core::run`
    /// gives for the same config and seed (digest included), series on or off.
    #[test]
    fn stepped_runs_equal_one_call_runs() {
        let text = crate::gallery::SANDBOX.replace("seed = 1", "seed = 5\nruns = 2");
        let mut r = Runner::new(&text).unwrap();
        let mut slices = 0;
        while !r.step(500).unwrap() {
            let p = r.progress();
            assert!(p.fraction >= 0.0 && p.fraction <= 1.0);
            slices += 1;
        }
        assert!(slices > 2);
        let out = r.output();
        assert_eq!(out.lines.len(), 2);
        let base = sim_core::scenario::parse_str(&text).unwrap().base;
        for (i, res) in r.results().iter().enumerate() {
            let plain = sim_core::run(&base, 5 + i as u64).unwrap();
            assert_eq!(res.digest, plain.digest);
            assert_eq!(res.events, plain.events);
            assert!(res.series.is_some());
        }
        assert_eq!(out.doc["runs"][0]["digest"], out.lines[0].digest.as_str());
        // What the worker sends survives JSON (NaN samples included).
        let json = serde_json::to_string(&out).unwrap();
        let back: RunOutput = serde_json::from_str(&json).unwrap();
        assert_eq!(back.lines, out.lines);
        assert_eq!(
            back.series.unwrap().columns.len(),
            out.series.unwrap().columns.len()
        );
    }

    /// Every job's events, traced during the run (job 0) or again when plotted, count
    /// the losses its metrics count.
    #[test]
    fn event_marks_count_the_losses_of_every_run() {
        let text = crate::gallery::SANDBOX
            .replace(
                "delay = \"20ms\" }",
                "delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.05 } }",
            )
            .replace("seed = 1", "seed = 1\nruns = 2");
        for transport in ["quic", "tcp", "sctp"] {
            let text = text.replace(
                "transport = \"quic\"",
                &format!("transport = \"{transport}\""),
            );
            let mut r = Runner::new(&text).unwrap();
            while !r.step(20_000).unwrap() {}
            for job in 0..2 {
                let doc = serde_json::to_value(&r.results()[job]).unwrap();
                let lost: u64 = doc["flows"][0]["endpoints"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["packets_lost"].as_u64().unwrap())
                    .sum();
                let meta = r.series_of(job).unwrap().meta;
                let n = meta.events.iter().filter(|e| e.kind == "loss").count();
                assert!(lost > 0, "{transport}");
                if transport == "tcp" {
                    // A retransmitted segment still marked lost is marked lost again by a
                    // retransmission timeout (Linux `tcp_timeout_mark_lost`) and not
                    // counted again by the metrics: the probes cannot tell it from a lost
                    // retransmission (RACK), which is counted.
                    assert!(
                        n as u64 >= lost && n as u64 <= lost + lost / 10 + 2,
                        "{n} {lost}"
                    );
                } else {
                    assert_eq!(n as u64, lost, "{transport} job {job}");
                }
                assert_eq!(meta.endpoints.len(), 2);
            }
        }
    }

    /// The flat form the worker transfers gives back the same series.
    #[test]
    fn the_flat_series_round_trips() {
        let mut r = Runner::new(crate::gallery::SANDBOX).unwrap();
        while !r.step(5000).unwrap() {}
        let s = r.output().series.expect("series on");
        let flat = s.flat();
        assert_eq!(flat.len(), s.rows.len() * s.columns.len());
        assert_eq!(
            PlotSeries::from_flat(s.columns.clone(), &flat, s.meta.clone()),
            s
        );
        let gap = PlotSeries {
            columns: vec!["time_s".into(), "x".into()],
            rows: vec![vec![Some(0.0), None], vec![Some(1.0), Some(2.5)]],
            meta: RunMeta::default(),
        };
        assert_eq!(
            PlotSeries::from_flat(gap.columns.clone(), &gap.flat(), RunMeta::default()),
            gap
        );
    }

    /// The sandbox (a QUIC bulk flow) gets a bar whose parts sum to the sender's
    /// completion time, the same split `sim_core::runner::run_with_breakdown` gives.
    #[test]
    fn the_first_run_has_a_breakdown_bar_summing_to_the_completion_time() {
        let mut r = Runner::new(crate::gallery::SANDBOX).unwrap();
        while !r.step(2000).unwrap() {}
        let out = r.output();
        assert_eq!(out.breakdown.len(), 1);
        let bar = &out.breakdown[0];
        let sum: f64 = bar.parts.iter().map(|p| p.2).sum();
        let completion = bar.completion_s.expect("completed");
        assert!((sum - completion).abs() < 1e-6, "{sum} vs {completion}");
        assert!((bar.total_s - completion).abs() < 1e-9);
        assert_eq!(bar.parts.len(), 6);
        assert_eq!(bar.parts[0].0, "handshake");
        let base = sim_core::scenario::parse_str(crate::gallery::SANDBOX)
            .unwrap()
            .base;
        let (_, b) = sim_core::runner::run_with_breakdown(&base, 1).unwrap();
        assert_eq!(b[0].breakdown.total().as_secs_f64(), bar.total_s);
    }

    /// A paired comparison gets one bar per transport (the first run of each variant),
    /// each summing to its sender's completion time.
    #[test]
    fn a_paired_scenario_has_one_breakdown_bar_per_transport() {
        let text = r#"
            runs = 2
            [topology]
            kind = "two_hosts"
            link = { rate = "20Mbps", delay = "20ms" }
            [[flows]]
            transports = ["tcp", "sctp", "quic"]
            workload = { kind = "bulk", bytes = "200KB" }
        "#;
        let mut r = Runner::new(text).unwrap();
        while !r.step(5000).unwrap() {}
        let out = r.output();
        let seen: Vec<(usize, &str)> = out
            .breakdown
            .iter()
            .map(|b| (b.point, b.transport.as_str()))
            .collect();
        assert_eq!(seen, [(0, "tcp"), (1, "sctp"), (2, "quic")]);
        for b in &out.breakdown {
            let completion = b.completion_s.expect("completed");
            assert!((b.total_s - completion).abs() < 1e-9, "{b:?}");
        }
    }

    /// A sweep gets one bar per point (its first run), each its own point's: the
    /// longer path's point takes longer.
    #[test]
    fn a_sweep_has_one_breakdown_bar_per_point() {
        let text = r#"
            runs = 2
            [topology]
            kind = "two_hosts"
            link = { rate = "20Mbps", delay = "20ms" }
            [[flows]]
            transport = "quic"
            workload = { kind = "bulk", bytes = "200KB" }
            [sweep]
            "topology.link.delay" = ["10ms", "80ms"]
        "#;
        let mut r = Runner::new(text).unwrap();
        while !r.step(5000).unwrap() {}
        let out = r.output();
        let points: Vec<usize> = out.breakdown.iter().map(|b| b.point).collect();
        assert_eq!(points, [0, 1]);
        assert!(
            out.breakdown[1].total_s > 2.0 * out.breakdown[0].total_s,
            "{:?}",
            out.breakdown
        );
    }

    /// A multi-transport scenario gets the paired table with the numbers the CLI's
    /// document has (`paired` in the `quicsim run --json` output).
    #[test]
    fn a_paired_scenario_has_the_paired_table() {
        let e = crate::gallery::find("examples/page-load-h2-h3.toml").expect("in the gallery");
        let text = e.toml.replace("runs = 3", "runs = 2");
        let mut r = Runner::new(&text).unwrap();
        while !r.step(20_000).unwrap() {}
        let out = r.output();
        assert!(!out.paired.is_empty());
        let t = &out.paired[0];
        assert_eq!(t.head[..3], ["seed", "tcp", "quic"]);
        assert_eq!(t.head[3], "quic-tcp");
        assert_eq!(t.rows.len(), 2);
        let doc_metric = &out.doc["paired"]["points"][0]["metrics"][0];
        assert_eq!(doc_metric["metric"], t.metric.as_str());
        let mean = doc_metric["differences"][0]["summary"]["mean"]
            .as_f64()
            .unwrap();
        assert!(
            t.differences[0].contains(&format!("mean {mean:.6}")),
            "{:?}",
            t.differences
        );
        assert!(t.differences[0].contains("95 % CI"));
    }

    /// Thinning keeps, per time bucket and column, the first, last, lowest and highest
    /// sample (so a line through the kept rows draws the same pixels), keeps rows in
    /// order and whole, cuts a long series to a fraction, and leaves a short one alone.
    #[test]
    fn a_long_series_is_thinned_to_each_buckets_extremes() {
        let n = 20_000;
        let rows: Vec<Vec<Option<f64>>> = (0..n)
            .map(|i| {
                let t = i as f64 * 0.002;
                // A saw, a one-row spike, a column with a gap, a constant.
                let saw = (i % 97) as f64;
                let spike = if i == 12_345 { 1e6 } else { 1.0 };
                let gap = (!(5_000..6_000).contains(&i)).then_some(((i % 37) as f64 - 18.0) * t);
                vec![Some(t), Some(saw), Some(spike), gap, Some(3.0)]
            })
            .collect();
        let s = PlotSeries {
            columns: ["time_s", "a", "b", "c", "d"].map(String::from).to_vec(),
            rows,
            meta: RunMeta::default(),
        };
        let buckets = 100;
        let th = s.clone().thinned(buckets);
        assert!(th.rows.len() < n / 10, "{} rows kept", th.rows.len());
        // Whole rows, in order: a subsequence of the original.
        let mut it = s.rows.iter();
        assert!(th.rows.iter().all(|r| it.any(|o| o == r)));
        let t_end = (n - 1) as f64 * 0.002;
        let b = |r: &Vec<Option<f64>>| {
            ((r[0].unwrap() / t_end * buckets as f64) as usize).min(buckets - 1)
        };
        for k in 0..buckets {
            for c in 1..5 {
                let vals = |rows: &[Vec<Option<f64>>]| -> Vec<f64> {
                    rows.iter()
                        .filter(|r| b(r) == k)
                        .filter_map(|r| r[c])
                        .collect()
                };
                let (all, kept) = (vals(&s.rows), vals(&th.rows));
                let ext = |v: &[f64]| {
                    (
                        v.first().copied(),
                        v.last().copied(),
                        v.iter().copied().reduce(f64::min),
                        v.iter().copied().reduce(f64::max),
                    )
                };
                assert_eq!(ext(&all), ext(&kept), "bucket {k} column {c}");
            }
        }
        assert!(
            th.rows.iter().any(|r| r[2] == Some(1e6)),
            "the spike is kept"
        );
        let short = PlotSeries {
            rows: s.rows[..400].to_vec(),
            ..s.clone()
        };
        assert_eq!(short.clone().thinned(buckets), short);
    }

    /// Many streams: the first STREAM_LINES per endpoint and measure, plus their sum;
    /// few streams: every column as it is. A huge scenario is warned about.
    #[test]
    fn many_stream_columns_are_thinned_to_the_first_ones_and_their_sum() {
        let mut columns = vec!["time_s".to_string(), "flow0.delivered_bytes".to_string()];
        for k in 0..20 {
            columns.push(format!("flow0.ep0.stream{}_read", 4 * k));
            columns.push(format!("flow0.ep0.stream{}_window", 4 * k));
        }
        columns.push("flow0.ep1.cwnd".into());
        let rows: Vec<Vec<f64>> = (0..3)
            .map(|r| {
                (0..columns.len())
                    .map(|i| {
                        if i == 0 {
                            r as f64
                        } else {
                            (r * 100 + i) as f64
                        }
                    })
                    .collect()
            })
            .collect();
        let s = Series {
            columns: columns.clone(),
            rows,
            truncated: false,
        };
        let p = PlotSeries::plotted(&s);
        let reads: Vec<&String> = p.columns.iter().filter(|c| c.ends_with("_read")).collect();
        assert_eq!(reads.len(), STREAM_LINES + 1, "{:?}", p.columns);
        assert_eq!(reads[0], "flow0.ep0.stream0_read");
        assert_eq!(reads[STREAM_LINES], "flow0.ep0.streams_sum_of_20_read");
        assert_eq!(p.columns.last().unwrap(), "flow0.ep1.cwnd");
        assert_eq!(p.columns.len(), 2 + 2 * (STREAM_LINES + 1) + 1);
        let sum_col = p
            .columns
            .iter()
            .position(|c| c == reads[STREAM_LINES])
            .unwrap();
        let want: f64 = (0..20).map(|k| (100 + 2 + 2 * k) as f64).sum();
        assert_eq!(p.rows[1][sum_col], Some(want));
        // Still charted: the sum with the delivered bytes, the windows on "other".
        let charts = crate::charts::charts(&p.columns);
        assert!(charts
            .iter()
            .any(|c| c.title.starts_with("Delivered") && c.columns.contains(&sum_col)));
        // Few streams: untouched.
        let few = Series {
            columns: columns[..6].to_vec(),
            rows: s.rows.iter().map(|r| r[..6].to_vec()).collect(),
            truncated: false,
        };
        assert_eq!(PlotSeries::plotted(&few), PlotSeries::of(&few));
        // The warning: 10 000 streams, not the sandbox.
        assert_eq!(size_warning(crate::gallery::SANDBOX), None);
        let huge = crate::gallery::SANDBOX
            .replace("bytes = \"1MB\" }", "bytes = \"1MB\", streams = 10000 }");
        assert!(size_warning(&huge)
            .unwrap()
            .contains("10000 request streams"));
        let runs = crate::gallery::SANDBOX.replace("seed = 1", "seed = 1\nruns = 600");
        assert!(size_warning(&runs).unwrap().contains("600 runs"));
    }

    #[test]
    fn qlog_of_the_sandbox_has_client_and_server_traces() {
        let files = qlog_files(crate::gallery::SANDBOX).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[0].0.ends_with("-client.sqlog"), "{}", files[0].0);
        assert!(files[1].0.ends_with("-server.sqlog"));
        // JSON-SEQ: every record starts with the RS byte and parses.
        for rec in files[0].1.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
            serde_json::from_str::<serde_json::Value>(rec.trim()).unwrap();
        }
        assert!(files[0].1.contains("packet_sent"));
    }

    /// Every gallery scenario (and the sandbox) parses, builds its jobs and runs through
    /// the page's runner code to a status, with no error (issue 13: every scenario in the
    /// gallery runs in the page). Smoke mode: one run per sweep point, at most 200 000
    /// events each.
    #[test]
    fn every_gallery_scenario_runs_to_a_status() {
        let mut texts: Vec<(String, String)> = crate::gallery::entries()
            .into_iter()
            .map(|e| (e.id(), e.toml.to_string()))
            .collect();
        texts.push(("sandbox".into(), crate::gallery::SANDBOX.to_string()));
        assert!(texts.len() > 20);
        for (id, text) in &texts {
            let lines = Runner::smoke(text, 200_000).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert!(!lines.is_empty(), "{id}: no run");
            for l in &lines {
                assert!(
                    [
                        "completed",
                        "time_limit",
                        "event_budget",
                        "stalled",
                        "stopped"
                    ]
                    .contains(&l.status.as_str()),
                    "{id}: status {:?}",
                    l.status
                );
                assert_eq!(l.digest.len(), 16, "{id}");
            }
        }
    }

    #[test]
    fn a_bad_value_is_the_cli_error() {
        let text = crate::gallery::SANDBOX.replace("\"10Mbps\"", "\"ten\"");
        let err = Runner::new(&text).err().unwrap();
        assert_eq!(
            err.to_string(),
            sim_core::scenario::parse_str(&text)
                .unwrap_err()
                .to_string()
        );
        assert!(err.field.contains("rate"));
    }
}
