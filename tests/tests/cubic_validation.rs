//! CUBIC (RFC 9438), pacing and HyStart++ (RFC 9406) validation (derivations and tables in
//! `docs/validation.md`, section "CUBIC, pacing, HyStart++").
//!
//! The models (`quicsim_tests::model`, `tests/src/model.rs`) are written from RFC 9438 §5
//! (the response function under deterministic loss) and §4.3 (the Reno-friendly AIMD
//! average), with the run's β, C and N; no constant is fitted to simulation output.
//! Tolerances are stated before the runs and never widened to make a test pass.
//!
//! Heavy grids are `#[ignore]`: run them with
//! `cargo test -p quicsim-tests --release --test cubic_validation -- --ignored --nocapture`.

use quicsim_tests::model;
use quicsim_tests::support::{quic_metrics, LOSSLESS_GRID};
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::trace::{TraceEvent, TraceRecord, TraceSource, Vantage};
use sim_core::Config;

// ---------------------------------------------------------------------------------------
// Helpers.

fn parse(toml: &str) -> Config {
    sim_core::scenario::parse_str(toml)
        .unwrap_or_else(|e| panic!("{e}\n{toml}"))
        .base
}

/// STREAM payload of a full 1-RTT packet of 1250 B (8-byte CIDs, 2-byte packet numbers,
/// 4-byte offsets, 2-byte lengths): 1250 − 9 − 2 − 16 − (1 + 1 + 4 + 2).
const FULL: u64 = 1215;
const MDS: u64 = 1250;

/// A `two_hosts` download over unlimited drop-tail queues at `rate` bit/s, one-way delay
/// `d_ms` each way, `loss` (a TOML loss table) on the data (reverse) direction only, and
/// the `quic_bulk` keys `extra`.
fn bulk_toml(rate: u64, d_ms: f64, loss: &str, bytes: u64, extra: &str) -> String {
    // A stream window that never limits, unless `extra` sets one.
    let window = if extra.contains("stream_window") {
        ""
    } else {
        "stream_window = 1099511627776"
    };
    format!(
        r#"
name = "cubic-validation"
[sim]
time_limit = "100000s"
max_events = 4000000000
[topology]
kind = "two_hosts"
forward = {{ rate = "{rate}bps", delay = "{d_ms}ms", queue = "unlimited" }}
reverse = {{ rate = "{rate}bps", delay = "{d_ms}ms", queue = "unlimited", loss = {loss} }}
[[flows]]
kind = "quic_bulk"
bytes = {bytes}
{window}
{extra}
"#
    )
}

/// One point of the response-function grid.
struct Point {
    p: f64,
    rtt_ms: u64,
    rate: u64,
    model: model::Model,
    /// Datagrams of MDS bytes per base RTT, steady state (cycles 60-140).
    measured: f64,
    /// The same over cycles 60-100 and 100-140 (steady-state check).
    halves: (f64, f64),
    /// Loss rate realised on the data link over the measured interval.
    realized_p: f64,
    /// The fluid model's fixed point ([`model::cubic_fluid`]) in the cubic region, NaN in
    /// the Reno-friendly region.
    fluid: f64,
}

/// Profile keys: `(label, quic_bulk keys, β, C, N, segment size)`.
type Profile = (&'static str, &'static str, f64, f64, u32, f64);

const RFC: Profile = (
    "rfc",
    "cc = \"cubic\"\nfast_convergence = false",
    0.7,
    0.4,
    1,
    1250.0,
);
const CHROMIUM: Profile = (
    "chromium",
    "profile = \"chromium\"\nfast_convergence = false",
    0.7,
    410.0 / 1024.0,
    2,
    1460.0,
);

/// Steady-state throughput of CUBIC under loss at rate `p` (periodic: one datagram in
/// every `1/p` on the data link; Bernoulli otherwise): three transfers sharing their
/// prefix (60, 100 and 140 loss cycles), differences between them. `halves` are the
/// first-to-second and second-to-third differences.
fn point(
    prof: Profile,
    p: f64,
    rtt_ms: u64,
    bernoulli: bool,
    seed: u64,
    from_below: bool,
) -> Point {
    point_cycles(prof, p, rtt_ms, bernoulli, seed, from_below, [60, 100, 140])
}

/// [`point`] with the three transfer lengths in loss cycles.
fn point_cycles(
    prof: Profile,
    p: f64,
    rtt_ms: u64,
    bernoulli: bool,
    seed: u64,
    from_below: bool,
    cycles: [u64; 3],
) -> Point {
    let (_, keys, beta, c, n, seg) = prof;
    let rtt_s = rtt_ms as f64 / 1e3;
    let m = model::response(p, rtt_s, beta, c, n, seg, MDS as f64);
    // Bottleneck at least 10x the predicted rate (no queue), whole Mbit/s.
    let predicted_bps = m.value() * (MDS * 8) as f64 / rtt_s;
    let rate = ((10.0 * predicted_bps / 1e6).ceil() as u64).max(10) * 1_000_000;
    let every = (1.0 / p).round() as u64;
    // Phase of the periodic pattern. `from_below = false`: the first loss is datagram
    // 1/p − 1, as in the NewReno harness: slow start ends far above the steady window.
    // `from_below = true`: the first loss after about W/2 datagrams, so that slow start
    // ends below it. CUBIC approaches its periodic-loss fixed point only algebraically
    // (where W_cubic flattens at W_max the cycle-to-cycle map has slope 1: a deviation δ
    // shrinks by about a·δ³ per cycle), so a finite run measures a value on the side it
    // started from: the two phases bracket the steady state.
    let offset = if from_below {
        ((m.value() / 2.0).round() as u64).clamp(1, every) - 1
    } else {
        every - 1
    };
    let loss = if bernoulli {
        format!("{{ model = \"bernoulli\", p = {p} }}")
    } else {
        format!("{{ model = \"periodic\", every = {every}, offset = {offset} }}")
    };
    let runs: Vec<(u64, u64, u64, u64)> = cycles
        .iter()
        .map(|&k| {
            let bytes = k * every * FULL;
            let cfg = parse(&bulk_toml(rate, rtt_ms as f64 / 2.0, &loss, bytes, keys));
            let r = sim_core::run(&cfg, seed).expect("valid");
            assert_eq!(r.status, RunStatus::Completed, "{:?}", r.status);
            let client = quic_metrics(&r, 0, "client");
            let down = r.links.iter().find(|l| l.name == "reverse").unwrap();
            let drops = down.drops.loss_periodic + down.drops.loss_bernoulli;
            let t = (client.transport.completion_secs.unwrap() * 1e9).round() as u64;
            (bytes, t, down.packets_in, drops)
        })
        .collect();
    let base_rtt = (rtt_ms * 1_000_000) as f64
        + model::tx(rate, 28, MDS) as f64
        + model::tx(rate, 28, 40) as f64;
    let thr = |a: &(u64, u64, u64, u64), b: &(u64, u64, u64, u64)| {
        let packets = (b.0 - a.0) as f64 / FULL as f64;
        packets / ((b.1 - a.1) as f64 / base_rtt)
    };
    let (a, b, cc) = (&runs[0], &runs[1], &runs[2]);
    Point {
        p,
        rtt_ms,
        rate,
        model: m,
        measured: thr(a, cc),
        halves: (thr(a, b), thr(b, cc)),
        realized_p: (cc.3 - a.3) as f64 / (cc.2 - a.2) as f64,
        fluid: if m.region() == "cubic" {
            model::cubic_fluid(p, rtt_s, beta, c, n, seg, MDS as f64)
        } else {
            f64::NAN
        },
    }
}

const PS: [f64; 3] = [1e-2, 1e-3, 1e-4];
const RTTS: [u64; 3] = [20, 100, 300];

fn header() {
    eprintln!("| profile | p | RTT (ms) | bottleneck (Mbit/s) | cubic (pkt/RTT) | Reno-friendly | model max | region | measured | / model | cycles 60-100 | cycles 100-140 | from below | / model | from below, 100-140 | fluid model | measured / fluid | from below / fluid |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
}

fn row(label: &str, r: &Point, below: Option<&Point>) {
    let (b, bm, bh) = below.map_or(("-".into(), "-".into(), "-".into()), |b| {
        (
            format!("{:.2}", b.measured),
            format!("{:.3}", b.measured / b.model.value()),
            format!("{:.2}", b.halves.1),
        )
    });
    eprintln!(
        "| {label} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {} | {:.2} | {:.3} | {:.2} | {:.2} | {b} | {bm} | {bh} | {:.2} | {:.3} | {:.3} |",
        r.p,
        r.rtt_ms,
        r.rate / 1_000_000,
        r.model.cubic,
        r.model.reno,
        r.model.value(),
        r.model.region(),
        r.measured,
        r.measured / r.model.value(),
        r.halves.0,
        r.halves.1,
        r.fluid,
        r.measured / r.fluid,
        below.map_or(f64::NAN, |b| b.measured / r.fluid),
    );
}

/// The brief's check, measured with periodic loss from datagram 1/p − 1 (the transfer's
/// natural phase): within 10 % of max(cubic, Reno-friendly) where the window is large
/// (p ≤ 1e-3). At p = 1e-2 (windows of 10-14 datagrams) the simulator is 17-20 % below:
/// whole-datagram windows (−14 %, the same as NewReno's integer-window effect, measured
/// by `cubic_small_windows_ack_every_packet`) and delayed ACKs at the end of ACK-clocked
/// bursts; those points are reported, not asserted (docs/validation.md). With `bracket`,
/// cubic-region points are also run from below (reported, not asserted).
///
/// CAUTION: in the cubic region, cycles 60-140 are still the approach from above, not
/// the converged state: `cubic_fixed_point_long_runs` finds 0.893 of the model at
/// 1e-3 / 300 ms after 1000 cycles from both sides (docs/validation.md §5.2). The
/// assertion here holds for what it measures and is kept as a regression guard; it is
/// not evidence that the converged cubic region is within 10 %.
fn check_periodic(prof: Profile, grid: &[(f64, u64)], bracket: bool) {
    header();
    let mut failures = Vec::new();
    let mut worst: f64 = 0.0;
    for &(p, rtt) in grid {
        let r = point(prof, p, rtt, false, 1, false);
        let below =
            (bracket && r.model.region() == "cubic").then(|| point(prof, p, rtt, false, 1, true));
        row(prof.0, &r, below.as_ref());
        let err = r.measured / r.model.value() - 1.0;
        worst = if err.abs() > worst.abs() { err } else { worst };
        if p <= 1e-3 && err.abs() > 0.10 {
            failures.push((p, rtt, r.measured, r.model.value()));
        }
    }
    eprintln!("worst measured/model - 1 = {:+.1} %", 100.0 * worst);
    assert!(failures.is_empty(), "outside 10 %: {failures:?}");
}

// ---------------------------------------------------------------------------------------
// Model self-checks (fast).

#[test]
fn response_function_matches_rfc_9438_table() {
    // RFC 9438 §5.1 Figure 5 (C = 0.4, β = 0.7, windows in segments): RTT 0.1 s,
    // p = 1e-4: CUBIC 187, AIMD(1.0, 0.5)-equivalent Reno-friendly 120 (the RFC's Reno
    // column is sqrt(1.5/p) = 122; the table rounds); RTT 0.01 s, p = 1e-6: 1054 vs 1200.
    let m = model::response(1e-4, 0.1, 0.7, 0.4, 1, 1.0, 1.0);
    assert!((m.cubic - 187.0).abs() < 1.0, "{m:?}");
    assert!((m.reno - 122.47).abs() < 0.01, "{m:?}");
    assert_eq!(m.region(), "cubic");
    let m = model::response(1e-6, 0.01, 0.7, 0.4, 1, 1.0, 1.0);
    assert!((m.cubic - 1054.0).abs() < 2.0, "{m:?}");
    assert_eq!(m.region(), "Reno-friendly");
    // N = 2 (Chromium): β_eff 0.85, α = 3·4·0.15/1.85; the Reno-friendly average is that
    // of N Reno flows, N·sqrt(3/(2p)).
    let m = model::response(1e-3, 0.02, 0.7, 0.4, 2, 1.0, 1.0);
    assert!(
        (m.reno - 2.0 * (1.5f64 / 1e-3).sqrt()).abs() < 1e-9,
        "{m:?}"
    );
    assert!((model::jain(&[1.0, 1.0]) - 1.0).abs() < 1e-12);
    assert!((model::jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
}

// ---------------------------------------------------------------------------------------
// Response function under periodic loss.

/// Representative points (normal suite): one in each region, short enough for debug
/// builds.
#[test]
fn cubic_periodic_loss_small() {
    check_periodic(RFC, &[(1e-3, 300)], false);
}

#[test]
#[ignore = "heavy: run in release (CI)"]
fn cubic_periodic_loss_grid_rfc() {
    let grid: Vec<(f64, u64)> = PS
        .iter()
        .flat_map(|&p| RTTS.iter().map(move |&r| (p, r)))
        .collect();
    check_periodic(RFC, &grid, true);
}

#[test]
#[ignore = "heavy: run in release (CI)"]
fn cubic_periodic_loss_grid_chromium() {
    check_periodic(
        CHROMIUM,
        &[(1e-2, 100), (1e-3, 20), (1e-3, 300), (1e-4, 100)],
        true,
    );
}

#[test]
#[ignore = "heavy: run in release; reports the bias, asserts nothing about it"]
fn cubic_bernoulli_loss_bias_report() {
    eprintln!("| profile | p | RTT (ms) | model (pkt/RTT) | region | periodic | Bernoulli (mean of 3 seeds) | Bernoulli / model | realised p | model at realised p | Bernoulli / model at realised p |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for prof in [RFC] {
        for p in PS {
            for rtt in RTTS {
                let per = point(prof, p, rtt, false, 1, false);
                let pts: Vec<Point> = (1..=3)
                    .map(|s| point(prof, p, rtt, true, s, false))
                    .collect();
                let meas = pts.iter().map(|r| r.measured).sum::<f64>() / 3.0;
                let rp = pts.iter().map(|r| r.realized_p).sum::<f64>() / 3.0;
                let (_, _, beta, c, n, seg) = prof;
                let at_rp = model::response(rp, rtt as f64 / 1e3, beta, c, n, seg, MDS as f64);
                eprintln!(
                    "| {} | {p} | {rtt} | {:.2} | {} | {:.2} | {:.2} | {:.3} | {:.6} | {:.2} | {:.3} |",
                    prof.0,
                    per.model.value(),
                    per.model.region(),
                    per.measured,
                    meas,
                    meas / per.model.value(),
                    rp,
                    at_rp.value(),
                    meas / at_rp.value(),
                );
                ratios.push(meas / per.model.value());
            }
        }
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    eprintln!("Bernoulli / periodic-loss model: mean {mean:.3}, range [{lo:.3}, {hi:.3}]");
}

// ---------------------------------------------------------------------------------------
// Fairness: two CUBIC flows on one dumbbell bottleneck.

fn fairness(seconds: u64) -> (f64, Vec<f64>, Vec<f64>) {
    let cfg = parse(&format!(
        r#"
name = "cubic-fairness"
[sim]
time_limit = "{seconds}s"
[output]
series = true
sample_interval = "1s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "20Mbps", delay = "20ms", queue = "1BDP" }}
access = {{ rate = "1Gbps", delay = "5ms" }}
[[flows]]
kind = "quic_bulk"
pair = 0
cc = "cubic"
bytes = "100GB"
stream_window = "1GB"
[[flows]]
kind = "quic_bulk"
pair = 1
cc = "cubic"
bytes = "100GB"
stream_window = "1GB"
"#
    ));
    let r = sim_core::run(&cfg, 1).expect("valid");
    let s = r.series.expect("series");
    let col = |name: &str| s.columns.iter().position(|c| c == name).expect(name);
    let (c0, c1) = (col("flow0.delivered_bytes"), col("flow1.delivered_bytes"));
    // Per 10-second window throughput of each flow, and the index over the second half.
    let mut windows = Vec::new();
    let mut rows = Vec::new();
    for w in s.rows.chunks(10) {
        rows.push(w.to_vec());
    }
    let mut prev = (0.0, 0.0);
    for w in &rows {
        let last = w.last().unwrap();
        let d = (last[c0] - prev.0, last[c1] - prev.1);
        prev = (last[c0], last[c1]);
        windows.push(model::jain(&[d.0, d.1]));
    }
    let half = s.rows.len() / 2;
    let (a, b) = (&s.rows[half], s.rows.last().unwrap());
    let x = vec![b[c0] - a[c0], b[c1] - a[c1]];
    (model::jain(&x), x, windows)
}

#[test]
#[ignore = "heavy: run in release (CI)"]
fn two_cubic_flows_converge_to_a_fair_share() {
    let (j, x, windows) = fairness(300);
    eprintln!(
        "Jain index over 150-300 s: {j:.4} (flow bytes {:.0} / {:.0}); per-10 s windows: {:?}",
        x[0],
        x[1],
        windows
            .iter()
            .map(|v| format!("{v:.3}"))
            .collect::<Vec<_>>()
    );
    assert!(j >= 0.9, "Jain index {j}");
}

// ---------------------------------------------------------------------------------------
// Pacing: bursts at the bottleneck.

/// The server's datagrams as handed to its access link: `(time ns, size)`.
fn server_datagrams(cfg: &Config) -> (Vec<(u64, u64)>, RunResult) {
    let mut sent: Vec<(u64, u64, u64)> = Vec::new(); // (time, datagram id, size)
    let mut tracer = |rec: &TraceRecord| {
        if let (
            TraceSource::Endpoint(id),
            TraceEvent::PacketSent {
                packet,
                datagram_id,
                ..
            },
        ) = (&rec.source, &rec.event)
        {
            if id.vantage == Vantage::Server {
                sent.push((rec.time.0, *datagram_id, packet.size()));
            }
        }
    };
    let r = sim_core::runner::run_traced(cfg, 1, &mut tracer).expect("valid");
    // Coalesced packets share a datagram id.
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last_id = None;
    for (t, id, size) in sent {
        if last_id == Some(id) {
            out.last_mut().unwrap().1 += size;
        } else {
            out.push((t, size));
            last_id = Some(id);
        }
    }
    (out, r)
}

/// Burst statistics of a sequence of datagrams entering a link of `rate` bit/s with
/// 28 B of overhead: `(largest same-instant burst in bytes, largest busy period in bytes,
/// bursts above allowance)`. A busy period is a maximal run of datagrams each of which
/// arrives before the previous one has left the serializer (the queue never drains).
fn bursts(dgrams: &[(u64, u64)], rate: u64, allowance: u64) -> (u64, u64, u64) {
    let (mut same, mut max_same, mut over) = (0u64, 0u64, 0u64);
    let (mut busy, mut max_busy) = (0u64, 0u64);
    let mut free = 0u64;
    let mut last_t = None;
    for &(t, size) in dgrams {
        if last_t == Some(t) {
            same += size;
        } else {
            if same > allowance {
                over += 1;
            }
            same = size;
        }
        last_t = Some(t);
        max_same = max_same.max(same);
        if t < free {
            busy += size;
        } else {
            busy = size;
        }
        max_busy = max_busy.max(busy);
        free = free.max(t) + model::tx(rate, 28, size);
    }
    if same > allowance {
        over += 1;
    }
    (max_same, max_busy, over)
}

/// `(allowance, datagrams, largest same-instant burst, largest busy period, same-instant
/// bursts above the allowance)` of a 20 MB download at 1 Gbit/s, 50 ms RTT: fast enough
/// that the paced rate (at most 1.25-2 × cwnd/srtt) stays below the link rate, so every
/// queue at the bottleneck comes from a burst, not from the rate.
fn burst_case(loss: &str, extra: &str) -> (u64, u64, u64, u64, u64) {
    let rate = 1_000_000_000;
    let cfg = parse(&bulk_toml(rate, 25.0, loss, 20_000_000, extra));
    let q = cfg.flows[0].quic().expect("a QUIC flow").server.clone();
    let allowance = q.pacing_burst_bytes();
    let (d, r) = server_datagrams(&cfg);
    assert_eq!(r.status, RunStatus::Completed);
    let (same, busy, over) = bursts(&d, rate, allowance);
    (allowance, d.len() as u64, same, busy, over)
}

/// With pacing on, no burst handed to the bottleneck exceeds the allowance (the bucket
/// depth: the initial window, or `pacing_burst_packets`); counted over every datagram of
/// the server. Busy periods can exceed it slightly: the bucket refills while a burst is
/// being serialized (a token bucket allows `depth + rate × time`), reported. Without
/// pacing, a flow-control-limited sender releases half its window at once whenever a
/// MAX_STREAM_DATA arrives: the check that the metric sees bursts at all.
#[test]
fn pacing_bounds_bursts_at_the_bottleneck() {
    eprintln!("| configuration | allowance (B) | datagrams | largest same-instant burst (B) | largest busy period (B) | same-instant bursts above the allowance |");
    eprintln!("|---|---|---|---|---|---|");
    let periodic = "{ model = \"periodic\", every = 1000, offset = 999 }";
    let fc = "stream_window = 125000";
    for (label, loss, extra, paced) in [
        (
            "CUBIC rfc, periodic loss 1e-3, paced",
            periodic,
            "cc = \"cubic\"".to_string(),
            true,
        ),
        (
            "chromium, periodic loss 1e-3, paced",
            periodic,
            "profile = \"chromium\"".into(),
            true,
        ),
        (
            "CUBIC rfc, periodic loss 1e-3, unpaced",
            periodic,
            "cc = \"cubic\"\npacing = false".into(),
            false,
        ),
        (
            "CUBIC rfc, stream window 125 kB, paced",
            "\"none\"",
            format!("cc = \"cubic\"\n{fc}"),
            true,
        ),
        (
            "CUBIC rfc, stream window 125 kB, unpaced",
            "\"none\"",
            format!("cc = \"cubic\"\n{fc}\npacing = false"),
            false,
        ),
    ] {
        let (allowance, n, same, busy, over) = burst_case(loss, &extra);
        eprintln!("| {label} | {allowance} | {n} | {same} | {busy} | {over} |");
        if paced {
            assert_eq!(over, 0, "{label}: {over} bursts above {allowance} B");
        } else if label.contains("window") {
            assert!(
                same > allowance,
                "{label}: unpaced bursts should exceed the allowance"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// HyStart++: leave slow start on the delay increase, before the first loss.

/// `(time slow start ended, cwnd then, time of the first drop, congestion events)` of
/// a 20 MB download through a 10-BDP drop-tail queue.
fn hystart_case(hystart: bool, extra: &str) -> (Option<f64>, u64, Option<f64>, u64) {
    let cfg = parse(&format!(
        r#"
name = "hystart"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "50ms", queue = "10BDP" }}
[[flows]]
kind = "quic_bulk"
bytes = "20MB"
stream_window = "100MB"
hystart = {hystart}
{extra}
"#
    ));
    let mut exit: Option<(f64, u64)> = None;
    let mut first_drop: Option<f64> = None;
    let mut cwnd = 0u64;
    let mut tracer = |rec: &TraceRecord| {
        let t = rec.time.0 as f64 / 1e9;
        match (&rec.source, &rec.event) {
            (TraceSource::Endpoint(id), TraceEvent::MetricsUpdated(m))
                if id.vantage == Vantage::Server =>
            {
                if let Some(c) = m.congestion_window {
                    cwnd = c;
                }
            }
            (TraceSource::Endpoint(id), TraceEvent::CongestionStateUpdated { new, .. })
                if id.vantage == Vantage::Server && exit.is_none() && *new != "slow_start" =>
            {
                exit = Some((t, cwnd));
            }
            (TraceSource::Network { .. }, TraceEvent::LinkDrop { .. }) => {
                first_drop.get_or_insert(t);
            }
            _ => {}
        }
    };
    let r = sim_core::runner::run_traced(&cfg, 1, &mut tracer).expect("valid");
    assert_eq!(r.status, RunStatus::Completed);
    let server = quic_metrics(&r, 0, "server");
    (
        exit.map(|e| e.0),
        exit.map_or(0, |e| e.1),
        first_drop,
        server.transport.congestion_events,
    )
}

#[test]
fn hystart_leaves_slow_start_before_the_first_loss() {
    eprintln!("| configuration | slow start ended (s) | cwnd then (B) | first drop (s) | congestion events |");
    eprintln!("|---|---|---|---|---|");
    for (label, hs, extra) in [
        ("CUBIC + HyStart++", true, "cc = \"cubic\""),
        ("NewReno + HyStart++", true, ""),
        ("CUBIC, no HyStart++", false, "cc = \"cubic\""),
    ] {
        let (exit, cwnd, drop, events) = hystart_case(hs, extra);
        let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
        eprintln!(
            "| {label} | {} | {cwnd} | {} | {events} |",
            f(exit),
            f(drop)
        );
        let exit = exit.expect("slow start ended");
        if hs {
            let drop = drop.unwrap_or(f64::INFINITY);
            assert!(
                exit < drop,
                "{label}: exit {exit} after the first drop {drop}"
            );
        } else {
            // Without HyStart++, slow start ends with the first loss (the window is reduced
            // when the loss is detected, about one RTT after the drop).
            assert!(exit >= drop.expect("a drop"), "{label}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Profiles resolve into explicit values.

#[test]
fn chromium_profile_resolves_into_explicit_values_and_keys_override_it() {
    let cfg = parse(&bulk_toml(
        10_000_000,
        10.0,
        "\"none\"",
        1000,
        "profile = \"chromium\"\ninitial_rtt = \"200ms\"",
    ));
    let q = cfg.flows[0].quic().expect("a QUIC flow").server.clone();
    assert_eq!(q.profile, sim_core::quic::config::Profile::Chromium);
    assert_eq!(q.cc.algorithm, sim_core::cc::CcAlgorithm::Cubic);
    assert_eq!(q.initial_cwnd(), 32 * 1460);
    assert_eq!(q.cc_segment(), 1460);
    assert_eq!(q.cc.emulated_connections, 2);
    assert_eq!(q.cc.pacing_gain_slow_start, 2.0);
    assert_eq!(q.cc.pacing_gain, 1.25);
    assert_eq!(q.max_udp_payload, 1250);
    assert_eq!(q.pacing_burst_bytes(), 10 * 1250);
    // The explicit key wins over the profile's 100 ms.
    assert_eq!(q.initial_rtt, sim_core::SimDuration::from_millis(200));
    // The rfc profile is the default: nothing changes.
    let d = sim_core::quic::QuicConfig::for_profile(sim_core::quic::config::Profile::Rfc);
    assert_eq!(d, sim_core::quic::QuicConfig::default());
    // The resolved form reads back to the same configuration.
    let text = sim_core::scenario::to_toml(&cfg).unwrap();
    let back = sim_core::scenario::parse_str(&text).unwrap().base;
    assert_eq!(back, cfg);
}

// ---------------------------------------------------------------------------------------
// Lossless transfers with pacing and HyStart++ on: the difference from the ACK-clocked
// runs (which `quic_validation.rs` checks against the lossless model within
// max(1 %, 2τ)).

fn lossless_completion(rate: u64, rtt_ms: u64, bytes: u64, extra: &str) -> f64 {
    let cfg = parse(&bulk_toml(
        rate,
        rtt_ms as f64 / 2.0,
        "\"none\"",
        bytes,
        extra,
    ));
    let r = sim_core::run(&cfg, 1).expect("valid");
    assert_eq!(r.status, RunStatus::Completed);
    quic_metrics(&r, 0, "client")
        .transport
        .completion_secs
        .unwrap()
}

/// The core lossless grid's default subset, with pacing and HyStart++ switched on one at
/// a time, against the unpaced runs without HyStart++. Neither is part of the lossless
/// model; the differences are reported and explained in docs/validation.md:
/// - HyStart++ enters CSS on a 4-16 ms rise of the round's minimum RTT. ACK-clocked slow
///   start sends two datagrams per acknowledged one, at twice the bottleneck rate, so once
///   a round's burst outlasts the gap before the next round (window above about half the
///   BDP) the queue does not drain between rounds, the round minimum rises, and CSS
///   (growth / 4) starts before the link is full. Transfers that end in slow start with a
///   window above BDP/2 take longer.
/// - Pacing at gain g sends at most g·cwnd per smoothed RTT, ACK-clocked slow start
///   2·cwnd per RTT: with g = 1.25 (RFC 9002 §7.7's example) slow start lags; with g = 2
///   (Chromium) it keeps up.
///
/// Asserted: each ratio within the bound observed on the first run, rounded up to the
/// next per cent (a regression guard, not a model): HyStart++ 1.03, pacing 1.25 1.05,
/// pacing 2/1.25 1.03.
#[test]
#[ignore = "heavy: run in release (CI)"]
fn lossless_with_pacing_and_hystart() {
    eprintln!("| rate (Mbit/s) | RTT (ms) | size | unpaced (s) | HyStart++ (s) | paced 1.25 (s) | / unpaced | paced 2/1.25 (s) | / unpaced | paced + HyStart++ (s) |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|");
    let mut worst = [0.0f64; 4];
    for &(rate, rtt, bytes) in LOSSLESS_GRID {
        let base = lossless_completion(rate, rtt, bytes, "pacing = false");
        let hs = lossless_completion(rate, rtt, bytes, "pacing = false\nhystart = true");
        let p125 = lossless_completion(rate, rtt, bytes, "");
        let p2 = lossless_completion(rate, rtt, bytes, "pacing_gain_slow_start = 2.0");
        let both = lossless_completion(rate, rtt, bytes, "hystart = true");
        eprintln!(
            "| {} | {rtt} | {bytes} | {base:.6} | {hs:.6} | {p125:.6} | {:.3} | {p2:.6} | {:.3} | {both:.6} |",
            rate / 1_000_000,
            p125 / base,
            p2 / base
        );
        worst[0] = worst[0].max(hs / base);
        worst[1] = worst[1].max(p125 / base);
        worst[2] = worst[2].max(p2 / base);
        worst[3] = worst[3].max(both / base);
    }
    eprintln!(
        "worst / unpaced: HyStart++ {:.3}, paced 1.25 {:.3}, paced 2/1.25 {:.3}, both {:.3}",
        worst[0], worst[1], worst[2], worst[3]
    );
    assert!(
        worst[0] <= 1.03 && worst[1] <= 1.05 && worst[2] <= 1.03,
        "{worst:?}"
    );
}

/// Diagnostic for the small-window points (p = 1e-2, W ≈ 12-14 datagrams): the same runs
/// with a receiver that acknowledges every packet, which removes the delayed ACK held at
/// the end of odd-length ACK-clocked bursts (docs/validation.md §3, "Delayed ACKs at the
/// end of bursts"). Reported, not asserted.
#[test]
#[ignore = "heavy: run in release; diagnostic report"]
fn cubic_small_windows_ack_every_packet() {
    const RFC_ACK1: Profile = (
        "rfc, ACK every packet",
        "cc = \"cubic\"\nfast_convergence = false\nack_eliciting_threshold = 1",
        0.7,
        0.4,
        1,
        1250.0,
    );
    header();
    for rtt in RTTS {
        let r = point(RFC_ACK1, 1e-2, rtt, false, 1, false);
        row(RFC_ACK1.0, &r, None);
    }
}

/// The points of [`cubic_fixed_point_long_runs`].
const LONG_POINTS: &[(f64, u64)] = &[(1e-3, 300)];

/// A cubic-region point of the RFC grid run 7× longer (cycles 400-1000), from above and
/// from below, to narrow the bracket of docs/validation.md §5.1 (algebraic convergence).
/// Reported. (Adding `(1e-4, 100)` to [`LONG_POINTS`] gives the second row of §5.2's
/// long-run table in about 90 s more.)
#[test]
#[ignore = "heavy: run in release; diagnostic report"]
fn cubic_fixed_point_long_runs() {
    header();
    for &(p, rtt) in LONG_POINTS {
        let above = point_cycles(RFC, p, rtt, false, 1, false, [400, 700, 1000]);
        let below = point_cycles(RFC, p, rtt, false, 1, true, [400, 700, 1000]);
        row("rfc, cycles 400-1000", &above, Some(&below));
        let (_, _, beta, c, n, seg) = RFC;
        let fluid = model::cubic_fluid(p, rtt as f64 / 1e3, beta, c, n, seg, MDS as f64);
        eprintln!(
            "fluid model {fluid:.2}: from above / fluid {:.3}, from below / fluid {:.3}",
            above.measured / fluid,
            below.measured / fluid
        );
    }
}

#[test]
fn fluid_model_reduces_to_the_response_function_and_falls_below_it() {
    // Sanity of the numerics: the fixed point lies below the closed form by the cost of
    // the recovery round and the per-ACK lag, more where RTT/K is larger.
    let f1 = model::cubic_fluid(1e-3, 0.3, 0.7, 0.4, 1, 1.0, 1.0);
    let m1 = model::response(1e-3, 0.3, 0.7, 0.4, 1, 1.0, 1.0).cubic;
    let f2 = model::cubic_fluid(1e-4, 0.1, 0.7, 0.4, 1, 1.0, 1.0);
    let m2 = model::response(1e-4, 0.1, 0.7, 0.4, 1, 1.0, 1.0).cubic;
    assert!(f1 < m1 && f2 < m2, "{f1} {m1} {f2} {m2}");
    assert!(f1 / m1 < f2 / m2);
    assert!(f1 / m1 > 0.85 && f2 / m2 > 0.95, "{} {}", f1 / m1, f2 / m2);
}
