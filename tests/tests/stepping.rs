//! A steppable simulation is the same run as the one-call entry point: stepping in chunks of
//! any sizes, with `run_until` at any instants in between, gives the identical `RunResult`
//! (digest, metrics, JSON bytes) as `sim_core::run`, traced or not; finishing early gives
//! status `stopped`.

use proptest::prelude::*;
use sim_core::config::{Config, Topology};
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::sim::Simulation;
use sim_core::trace::TraceRecord;
use sim_core::{SimDuration, SimTime};

/// The base config of `scenarios/examples/<name>.toml`.
fn example(name: &str) -> Config {
    let path = format!(
        "{}/../scenarios/examples/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect(&path);
    sim_core::scenario::parse_str(&text).expect(&path).base
}

/// The examples the equivalence is checked on: CBR, a handover (two flows, new IP), a link
/// going down, QUIC bulk over a lossy link, a QUIC connection sequence, a dumbbell; plus a
/// series-recording run and runs that end by time limit and by event budget.
fn configs() -> Vec<(String, Config)> {
    let mut v: Vec<(String, Config)> = [
        "cbr-clean",
        "handover",
        "link-down",
        "quic-bulk-ge",
        "connection-lifecycle",
        "dumbbell-cbr",
    ]
    .iter()
    .map(|n| (n.to_string(), example(n)))
    .collect();
    let mut series = example("handover");
    series.output.series = true;
    v.push(("handover+series".into(), series));
    let mut limited = example("quic-bulk-ge");
    limited.sim.time_limit = SimDuration::from_millis(700);
    v.push(("quic-bulk-ge+time_limit".into(), limited));
    let mut budget = example("connection-lifecycle");
    budget.sim.max_events = sim_core::run(&budget, budget.seed).unwrap().events / 2;
    v.push(("connection-lifecycle+event_budget".into(), budget));
    // The forward link goes down for good with packets queued: the run stalls.
    let mut stalled = example("link-down");
    match &mut stalled.topology {
        Topology::TwoHosts { forward, .. } => {
            forward.changes.pop();
        }
        Topology::Dumbbell { .. } => unreachable!(),
    }
    v.push(("link-down+stalled".into(), stalled));
    v
}

fn json(r: &RunResult) -> String {
    serde_json::to_string(r).expect("RunResult serialises")
}

fn assert_same(name: &str, how: &str, got: &RunResult, want: &RunResult) {
    assert_eq!(got.digest, want.digest, "{name} ({how}): digest");
    assert_eq!(got.status, want.status, "{name} ({how}): status");
    assert_eq!(got.events, want.events, "{name} ({how}): events");
    assert_eq!(json(got), json(want), "{name} ({how}): JSON");
    assert_eq!(got, want, "{name} ({how}): RunResult");
}

/// Steps `sim` to its end with chunk sizes taken cyclically from `chunks` (0 = a
/// `run_until` to `t += dt` instead), checking the outcomes and progress on the way.
fn step_through(mut sim: Simulation<'_>, chunks: &[u64], dt: SimDuration) -> RunResult {
    let mut t = SimTime::ZERO;
    let mut last = sim.progress();
    for &n in chunks.iter().cycle() {
        let out = if n == 0 {
            t += dt;
            sim.run_until(t)
        } else {
            let out = sim.step(n);
            assert!(out.events <= n, "step({n}) processed {}", out.events);
            out
        };
        let p = sim.progress();
        assert_eq!(p.events, last.events + out.events);
        assert!(p.time >= last.time && p.delivered_bytes >= last.delivered_bytes);
        assert_eq!(p.status, out.status);
        if n == 0 && out.status.is_none() {
            assert!(p.time >= t, "run_until({t:?}) reached only {:?}", p.time);
        }
        last = p;
        if out.is_finished() {
            // Further steps do nothing.
            assert_eq!(sim.step(1000).events, 0);
            assert_eq!(sim.run_until(SimTime::MAX).events, 0);
            assert_eq!(sim.progress(), p);
            break;
        }
    }
    let r = sim.finish();
    // The final progress is what the result says.
    assert_eq!(
        (r.end_time, r.events, Some(r.status)),
        (last.time, last.events, last.status)
    );
    r
}

#[test]
fn stepping_in_chunks_equals_run() {
    let schedules: &[(&str, &[u64])] = &[
        ("chunks of 1", &[1]),
        ("chunks of 7", &[7]),
        ("chunks of 1000", &[1000]),
        ("mixed chunks", &[1, 7, 1000, 3, 250, 1, 64]),
        ("run_until only", &[0]),
        ("run_until and chunks", &[0, 13, 0, 1, 500]),
    ];
    for (name, cfg) in configs() {
        let want = sim_core::run(&cfg, cfg.seed).unwrap();
        let end = want.end_time.0.max(1);
        for (how, chunks) in schedules {
            // run_until steps: about 37 instants over the run, not aligned to anything.
            let dt = SimDuration(end / 37 + 12_345);
            let sim = Simulation::new(&cfg, cfg.seed).unwrap();
            let got = step_through(sim, chunks, dt);
            assert_same(&name, how, &got, &want);
        }
        // One step with an unbounded budget is `run`.
        let mut sim = Simulation::new(&cfg, cfg.seed).unwrap();
        let out = sim.step(u64::MAX);
        assert_eq!(out.status, Some(want.status));
        assert_eq!(out.events, want.events);
        assert_same(&name, "one step", &sim.finish(), &want);
    }
}

#[test]
fn stepping_covers_every_end_status() {
    let statuses: Vec<RunStatus> = configs()
        .iter()
        .map(|(_, c)| sim_core::run(c, c.seed).unwrap().status)
        .collect();
    for s in [
        RunStatus::Completed,
        RunStatus::Stalled,
        RunStatus::TimeLimit,
        RunStatus::EventBudget,
    ] {
        assert!(statuses.contains(&s), "no example ends {s:?}: {statuses:?}");
    }
}

#[test]
fn traced_stepping_equals_run_traced() {
    for name in ["handover", "connection-lifecycle"] {
        let cfg = example(name);
        let mut want_records: Vec<TraceRecord> = Vec::new();
        let mut tracer = |r: &TraceRecord| want_records.push(r.clone());
        let want = sim_core::runner::run_traced(&cfg, cfg.seed, &mut tracer).unwrap();
        assert_eq!(want, sim_core::run(&cfg, cfg.seed).unwrap());

        let mut got_records: Vec<TraceRecord> = Vec::new();
        let mut tracer = |r: &TraceRecord| got_records.push(r.clone());
        let sim = Simulation::new_traced(&cfg, cfg.seed, &mut tracer).unwrap();
        let got = step_through(sim, &[3, 0, 100], SimDuration::from_millis(77));
        assert_same(name, "traced", &got, &want);
        assert!(!want_records.is_empty());
        assert_eq!(got_records, want_records, "{name}: trace records");
    }
}

#[test]
fn finishing_early_is_stopped() {
    let cfg = example("quic-bulk-ge");
    let full = sim_core::run(&cfg, cfg.seed).unwrap();
    assert_eq!(full.status, RunStatus::Completed);

    // Nothing processed yet.
    let sim = Simulation::new(&cfg, cfg.seed).unwrap();
    assert_eq!(sim.progress().events, 0);
    assert_eq!(sim.progress().time, SimTime::ZERO);
    let r = sim.finish();
    assert_eq!(
        (r.status, r.events, r.end_time),
        (RunStatus::Stopped, 0, SimTime::ZERO)
    );

    // After some events: the result covers the run so far.
    let mut sim = Simulation::new(&cfg, cfg.seed).unwrap();
    let out = sim.step(1000);
    assert_eq!((out.events, out.status), (1000, None));
    let p = sim.progress();
    assert!(p.delivered_bytes > 0 && !p.is_finished());
    let r = sim.finish();
    assert_eq!(r.status, RunStatus::Stopped);
    assert_eq!((r.events, r.end_time), (1000, p.time));
    assert_ne!(r.digest, full.digest);
    let delivered: u64 = r.flows.iter().map(|f| f.packets_delivered).sum();
    let all: u64 = full.flows.iter().map(|f| f.packets_delivered).sum();
    assert!(delivered > 0 && delivered < all);

    // Paused at an instant: the run ends there.
    let t = SimTime::ZERO + SimDuration::from_millis(1500);
    let mut sim = Simulation::new(&cfg, cfg.seed).unwrap();
    assert!(!sim.run_until(t).is_finished());
    assert_eq!(sim.progress().time, t);
    let r = sim.finish();
    assert_eq!((r.status, r.end_time), (RunStatus::Stopped, t));
    assert!(r.events > 0 && r.events < full.events);
    // A stopped run is itself deterministic.
    let mut again = Simulation::new(&cfg, cfg.seed).unwrap();
    again.step(17);
    again.run_until(t);
    assert_eq!(again.finish(), r);

    // Finishing after the end is not early.
    let mut sim = Simulation::new(&cfg, cfg.seed).unwrap();
    while !sim.step(10_000).is_finished() {}
    assert_eq!(sim.finish(), full);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any chunk sizes, with `run_until` to arbitrary instants among them, give the run.
    #[test]
    fn any_chunking_equals_run(
        chunks in proptest::collection::vec(prop_oneof![3 => 1u64..2_000, 1 => Just(0u64)], 1..12),
        dt_us in 1u64..400_000,
        which in 0usize..3,
    ) {
        let name = ["quic-bulk-ge", "handover", "connection-lifecycle"][which];
        let mut cfg = example(name);
        // Shorter runs keep the cases fast; they still cover loss, handover and 0-RTT.
        cfg.sim.time_limit = SimDuration::from_secs(3);
        let want = sim_core::run(&cfg, cfg.seed).unwrap();
        let sim = Simulation::new(&cfg, cfg.seed).unwrap();
        let got = step_through(sim, &chunks, SimDuration(dt_us * 1_000));
        prop_assert_eq!(json(&got), json(&want));
        prop_assert_eq!(got, want);
    }
}

#[test]
fn series_sampling_never_changes_a_run() {
    // The browser always records series; `quicsim run` only with `--series`: their digests
    // must agree for every end status (a `stalled` run once ended at its last sample, not
    // its last event, and samples counted against the event budget).
    for (name, cfg) in configs() {
        let mut on = cfg.clone();
        on.output.series = true;
        let mut off = cfg;
        off.output.series = false;
        let mut a = sim_core::run(&on, on.seed).unwrap();
        sim_core::runner::check_run_invariants(&on, &a).unwrap();
        let b = sim_core::run(&off, off.seed).unwrap();
        let rows = a.series.take().expect("series recorded").rows.len();
        assert!(rows > 0, "{name}");
        assert!(b.series.is_none(), "{name}");
        // The resolved configuration says `series = true`: the one difference allowed.
        a.resolved_config = b.resolved_config.clone();
        assert_same(&name, "series on / off", &a, &b);
    }
}

#[test]
fn series_rows_stop_at_the_event_budget_without_ending_the_run() {
    let mut cfg = example("quic-bulk-ge");
    cfg.output.series = true;
    // Validation bounds the rows by the time limit (at most 1 000 000).
    cfg.sim.time_limit = SimDuration::from_secs(60);
    cfg.output.sample_interval = SimDuration::from_micros(60);
    let full = sim_core::run(&cfg, cfg.seed).unwrap();
    assert_eq!(full.status, RunStatus::Completed);
    let rows = full.series.as_ref().unwrap().rows.len() as u64;
    // A budget the run itself needs (its events and bursts) but below the rows sampled.
    let r = [11, 15, 20, 40]
        .iter()
        .map(|k| full.events * k / 10)
        .filter(|&b| b < rows)
        .find_map(|b| {
            cfg.sim.max_events = b;
            let r = sim_core::run(&cfg, cfg.seed).unwrap();
            (r.status == RunStatus::Completed).then_some(r)
        })
        .expect("a budget that completes below the rows sampled");
    assert_eq!(r.digest, full.digest);
    sim_core::runner::check_run_invariants(&cfg, &r).unwrap();
    let s = r.series.unwrap();
    assert!(s.truncated && s.rows.len() as u64 == cfg.sim.max_events);
}
