//! Monotonic in loss: for a transport and its controller, the median completion time of a
//! download over N seeds must not decrease as the random loss rate grows.
//!
//! The path: `two_hosts`, 100 Mbit/s, Bernoulli loss `p` on both directions (data and
//! acknowledgements), a drop-tail queue of 1 BDP on each link (the scenario default), the
//! `bulk` workload (one request, one response of `bytes`). Every cell (RTT × size × p) runs
//! the same seeds (common random numbers); a run that does not complete (time limit,
//! stall, event budget) counts as +infinity, is never dropped, and is listed.
//!
//! The check, for every pair of loss rates `p_i < p_j` of one (RTT, size): a violation is
//! a median at `p_j` below the median at `p_i` whose 95 % confidence intervals do not
//! overlap (upper bound at `p_j` < lower bound at `p_i`). The CI of a median is the
//! distribution-free one from order statistics: `[x_(k), x_(n+1-k)]` with the largest `k`
//! such that `P(Binomial(n, 1/2) <= k - 1) <= 2.5 %` (coverage >= 95 %), so the check is
//! deterministic and needs no resampling.
//!
//! The transports and the grids are data ([`TRANSPORTS`], [`QUICK`], [`FULL`]); there is
//! one `#[test]` per transport and grid, so one transport runs alone. QUIC (CUBIC) has the
//! quick grid only so far: its full grid has not been run yet (at 188 ms and 20 % loss its
//! 30 s idle timeout may end a run `stalled`, which this check counts as +infinity).
//!
//! ```text
//! cargo test -p quicsim-tests --test monotonic_loss -- --nocapture quick_sctp
//! cargo test -p quicsim-tests --release --test monotonic_loss -- --ignored --nocapture full_tcp
//! ```
//!
//! `--nocapture` prints the table of medians (with their CIs) per cell.

use sim_core::metrics::{EndpointMetrics, RunResult, RunStatus};
use statrs::distribution::{Binomial, DiscreteCDF};

/// One transport/controller under test: its name and the flow keys that select it.
struct Transport {
    name: &'static str,
    keys: &'static str,
}

/// Every transport the check covers (the `#[test]`s below pick one by name).
const TRANSPORTS: &[Transport] = &[
    Transport {
        name: "tcp-cubic",
        keys: "transport = \"tcp\"\ntcp = { cc = \"cubic\" }",
    },
    Transport {
        name: "tcp-new_reno",
        keys: "transport = \"tcp\"\ntcp = { cc = \"new_reno\" }",
    },
    Transport {
        name: "sctp",
        keys: "transport = \"sctp\"",
    },
    Transport {
        name: "quic-cubic",
        keys: "transport = \"quic\"\nquic = { cc = \"cubic\" }",
    },
];

/// A grid of cells: every RTT × size × loss rate, `seeds` runs each.
struct Grid {
    rtts_ms: &'static [u64],
    sizes: &'static [u64],
    /// Loss rates in percent, ascending.
    losses_pct: &'static [u64],
    seeds: u64,
}

/// The always-run grid (debug build): 1 MB at 20 ms, 12 seeds.
const QUICK: Grid = Grid {
    rtts_ms: &[20],
    sizes: &[1_000_000],
    losses_pct: &[0, 2, 10, 20],
    seeds: 12,
};

/// The full grid (release, `--ignored`).
const FULL: Grid = Grid {
    rtts_ms: &[20, 50, 188],
    sizes: &[1_000_000, 10_000_000],
    losses_pct: &[0, 1, 2, 5, 10, 15, 20],
    seeds: 50,
};

/// The first seed of every cell (seeds `BASE_SEED .. BASE_SEED + n`).
const BASE_SEED: u64 = 1;

/// Simulated-time limit of one run. Far above the slowest completion seen on the full
/// grid (SCTP, 10 MB, 188 ms, 20 %), so a run that reaches it is stuck, not slow; it then
/// counts as +infinity.
const TIME_LIMIT_S: u64 = 100_000;

fn scenario(t: &Transport, rtt_ms: u64, bytes: u64, loss_pct: u64) -> String {
    // Half the RTT each way, in µs so that odd RTTs stay exact.
    let one_way_us = rtt_ms * 500;
    let loss = if loss_pct == 0 {
        "\"none\"".to_string()
    } else {
        format!(
            "{{ model = \"bernoulli\", p = {} }}",
            loss_pct as f64 / 100.0
        )
    };
    format!(
        r#"
name = "monotonic-loss"
[sim]
time_limit = "{TIME_LIMIT_S}s"
max_events = 4000000000
[topology]
kind = "two_hosts"
link = {{ rate = "100Mbps", delay = "{one_way_us}us", queue = "1BDP", loss = {loss} }}
[[flows]]
{keys}
workload = {{ kind = "bulk", bytes = {bytes} }}
"#,
        keys = t.keys
    )
}

/// What one run gives: completion (s, +inf when unfinished), status, and the data
/// sender's loss accounting.
struct Run {
    seed: u64,
    secs: f64,
    status: RunStatus,
    /// Packets the random-loss stage dropped on the data path (server -> client).
    data_drops: u64,
    /// The data sender's window reductions and retransmission timeouts.
    reductions: u64,
    timeouts: u64,
}

fn run_one(cfg: &sim_core::config::Config, seed: u64) -> Run {
    let r: RunResult = sim_core::run(cfg, seed).expect("runs");
    let client = r.flows[0]
        .endpoints
        .iter()
        .filter_map(EndpointMetrics::transport)
        .find(|m| m.role == "client")
        .expect("client metrics");
    let server = r.flows[0]
        .endpoints
        .iter()
        .filter_map(EndpointMetrics::transport)
        .find(|m| m.role == "server")
        .expect("server metrics");
    let secs = match (r.status, client.completion_secs) {
        (RunStatus::Completed, Some(s)) => s,
        _ => f64::INFINITY,
    };
    let down = r
        .links
        .iter()
        .find(|l| l.name == "reverse")
        .expect("reverse link");
    Run {
        seed,
        secs,
        status: r.status,
        data_drops: down.drops.random_loss(),
        reductions: server.congestion_events,
        timeouts: server.pto_count,
    }
}

/// The order-statistic 95 % CI of the median of `sorted` (ascending; +inf allowed): the
/// values of ranks `k` and `n + 1 - k` (1-based), `k` the largest with
/// `P(Bin(n, 1/2) <= k - 1) <= 0.025`.
fn median_ci(sorted: &[f64]) -> (f64, f64, f64) {
    let n = sorted.len();
    assert!(n >= 6, "a 95 % CI of the median needs at least 6 samples");
    let b = Binomial::new(0.5, n as u64).expect("binomial");
    let mut k = 1;
    while k < n / 2 && b.cdf(k as u64) <= 0.025 {
        k += 1;
    }
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        let (a, c) = (sorted[n / 2 - 1], sorted[n / 2]);
        if a.is_infinite() || c.is_infinite() {
            c
        } else {
            (a + c) / 2.0
        }
    };
    (median, sorted[k - 1], sorted[n - k])
}

/// One cell's runs and statistics.
struct Cell {
    loss_pct: u64,
    runs: Vec<Run>,
    median: f64,
    lo: f64,
    hi: f64,
}

fn cell(t: &Transport, rtt_ms: u64, bytes: u64, loss_pct: u64, seeds: u64) -> Cell {
    let text = scenario(t, rtt_ms, bytes, loss_pct);
    let cfg = sim_core::scenario::parse_str(&text)
        .unwrap_or_else(|e| panic!("valid scenario: {e}\n{text}"))
        .base;
    let runs: Vec<Run> = (BASE_SEED..BASE_SEED + seeds)
        .map(|s| run_one(&cfg, s))
        .collect();
    let mut xs: Vec<f64> = runs.iter().map(|r| r.secs).collect();
    xs.sort_by(f64::total_cmp);
    let (median, lo, hi) = median_ci(&xs);
    Cell {
        loss_pct,
        runs,
        median,
        lo,
        hi,
    }
}

fn fmt_s(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "inf".into()
    }
}

/// Runs `grid` for the transport named `name`, prints the table (in one piece: the tests
/// run in parallel), and panics listing every violation of monotonicity.
fn check(name: &str, grid: &Grid) {
    use std::fmt::Write;
    let mut out = String::new();
    let t = TRANSPORTS
        .iter()
        .find(|t| t.name == name)
        .expect("a transport of TRANSPORTS");
    let mut violations = Vec::new();
    let mut stalled = Vec::new();
    writeln!(
        out,
        "\n{name}: median completion (s) [95 % CI] over {} seeds; 100 Mbit/s, 1-BDP queue, \
         Bernoulli loss both ways; red/loss = data-sender window reductions per data-path drop",
        grid.seeds
    )
    .unwrap();
    for &rtt in grid.rtts_ms {
        for &bytes in grid.sizes {
            let cells: Vec<Cell> = grid
                .losses_pct
                .iter()
                .map(|&p| cell(t, rtt, bytes, p, grid.seeds))
                .collect();
            writeln!(out, "RTT {rtt} ms, {} kB:", bytes / 1000).unwrap();
            for c in &cells {
                let drops: u64 = c.runs.iter().map(|r| r.data_drops).sum();
                let reds: u64 = c.runs.iter().map(|r| r.reductions).sum();
                let rtos: u64 = c.runs.iter().map(|r| r.timeouts).sum();
                let unfinished = c.runs.iter().filter(|r| !r.secs.is_finite()).count();
                writeln!(
                    out,
                    "  p {:>2} %: {:>9} [{:>9}, {:>9}]  red/loss {:.3}  rto/run {:.2}  unfinished {}",
                    c.loss_pct,
                    fmt_s(c.median),
                    fmt_s(c.lo),
                    fmt_s(c.hi),
                    if drops > 0 {
                        reds as f64 / drops as f64
                    } else {
                        0.0
                    },
                    rtos as f64 / c.runs.len() as f64,
                    unfinished
                )
                .unwrap();
                for r in c.runs.iter().filter(|r| !r.secs.is_finite()) {
                    stalled.push(format!(
                        "{name} rtt {rtt} ms {bytes} B p {} % seed {}: {:?}",
                        c.loss_pct, r.seed, r.status
                    ));
                }
            }
            for (i, a) in cells.iter().enumerate() {
                for b in &cells[i + 1..] {
                    if b.hi < a.lo {
                        violations.push(format!(
                            "{name} rtt {rtt} ms {bytes} B: p {} % median {} [{}, {}] < p {} % median {} [{}, {}]",
                            b.loss_pct,
                            fmt_s(b.median),
                            fmt_s(b.lo),
                            fmt_s(b.hi),
                            a.loss_pct,
                            fmt_s(a.median),
                            fmt_s(a.lo),
                            fmt_s(a.hi),
                        ));
                    }
                }
            }
        }
    }
    if !stalled.is_empty() {
        writeln!(out, "unfinished runs (counted as +inf):").unwrap();
        for s in &stalled {
            writeln!(out, "  {s}").unwrap();
        }
    }
    println!("{out}");
    assert!(
        violations.is_empty(),
        "completion time decreases with loss:\n{}",
        violations.join("\n")
    );
}

/// The CI ranks: n = 12 gives ranks 3 and 10 (coverage 96.1 %), n = 50 ranks 18 and 33.
#[test]
fn median_ci_ranks() {
    let xs: Vec<f64> = (1..=12).map(f64::from).collect();
    assert_eq!(median_ci(&xs), (6.5, 3.0, 10.0));
    let xs: Vec<f64> = (1..=50).map(f64::from).collect();
    assert_eq!(median_ci(&xs), (25.5, 18.0, 33.0));
    let mut xs: Vec<f64> = (1..=11).map(f64::from).collect();
    xs.push(f64::INFINITY);
    assert_eq!(
        median_ci(&xs).2,
        10.0,
        "one unfinished run stays above the CI"
    );
}

#[test]
fn quick_tcp_cubic() {
    check("tcp-cubic", &QUICK);
}

#[test]
fn quick_tcp_new_reno() {
    check("tcp-new_reno", &QUICK);
}

#[test]
fn quick_sctp() {
    check("sctp", &QUICK);
}

#[test]
fn quick_quic_cubic() {
    check("quic-cubic", &QUICK);
}

#[test]
#[ignore = "full grid, >= 50 seeds: run in release"]
fn full_tcp_cubic() {
    check("tcp-cubic", &FULL);
}

#[test]
#[ignore = "full grid, >= 50 seeds: run in release"]
fn full_tcp_new_reno() {
    check("tcp-new_reno", &FULL);
}

#[test]
#[ignore = "full grid, >= 50 seeds: run in release"]
fn full_sctp() {
    check("sctp", &FULL);
}

/// Diagnostic (not a check): window reductions per data-path loss on a 2 ms RTT path with
/// 10 % loss both ways (10 MB, 20 seeds), per transport. A Reno-family sender reduces at
/// most once per round trip but again for a loss in a later window; at 10 % loss nearly
/// every round trip loses a packet.
#[test]
#[ignore = "diagnostic table"]
fn reductions_per_loss_2ms_10pct() {
    for t in TRANSPORTS {
        let text = scenario(t, 2, 10_000_000, 10);
        let cfg = sim_core::scenario::parse_str(&text).expect("valid").base;
        let runs: Vec<Run> = (BASE_SEED..BASE_SEED + 20)
            .map(|s| run_one(&cfg, s))
            .collect();
        let drops: u64 = runs.iter().map(|r| r.data_drops).sum();
        let reds: u64 = runs.iter().map(|r| r.reductions).sum();
        let rtos: u64 = runs.iter().map(|r| r.timeouts).sum();
        let mut xs: Vec<f64> = runs.iter().map(|r| r.secs).collect();
        xs.sort_by(f64::total_cmp);
        println!(
            "{:<13} data-path drops {drops:>6}  reductions {reds:>6} (of which RTO {rtos:>5})  \
             reductions/loss {:.3}  median completion {} s",
            t.name,
            reds as f64 / drops as f64,
            fmt_s(median_ci(&xs).0)
        );
    }
}
