//! Scenario builders and measurement helpers shared by the validation tests
//! (`tests/tests/quic_validation.rs`, `lifecycle.rs`, `cubic_validation.rs`).

use sim_core::metrics::quic::QuicMetrics;
use sim_core::metrics::{EndpointMetrics, RunResult};

use crate::model::{self, Params};

/// One millisecond in ns.
pub const MS: u64 = 1_000_000;

/// The defaults of `sim_core::quic::QuicConfig` that the models need, over `two_hosts`
/// links of `rate` and one-way `delay_ms` in both directions. Written out rather than read
/// from `QuicConfig::default()`: `quic_validation.rs` checks them against the
/// implementation's defaults.
pub fn params(rate: u64, delay_ms: u64, bytes: u64) -> Params {
    Params {
        up_rate: rate,
        up_delay: delay_ms * MS,
        down_rate: rate,
        down_delay: delay_ms * MS,
        overhead: 28,
        mds: 1250,
        cid_len: 8,
        cwnd0: sim_core::cc::default_initial_window(1250),
        client_hello: 300,
        server_hello: 90,
        server_handshake: 3000,
        client_finished: 36,
        request: 100,
        bytes,
        ack_threshold: 2,
        max_ack_delay: 25 * MS,
        stream_window: None,
        policy: model::Policy::Static,
        srtt: 0,
    }
}

/// `max(1 %, 2 bottleneck packet times)`.
pub fn tolerance(p: &Params, model_ns: u64) -> u64 {
    (model_ns / 100).max(2 * model::tx(p.down_rate, p.overhead, p.mds))
}

/// The QUIC metrics of the endpoint with `role` (`"client"` or `"server"`) of flow `flow`.
pub fn quic_metrics(r: &RunResult, flow: usize, role: &str) -> QuicMetrics {
    r.flows[flow]
        .endpoints
        .iter()
        .find_map(|m| match m {
            EndpointMetrics::Quic(q) if q.transport.role == role => Some((**q).clone()),
            _ => None,
        })
        .expect("quic metrics")
}

/// The core lossless grid's default subset `(rate bit/s, RTT ms, bytes)` (the full grid is
/// `quic_validation.rs`'s `lossless_completion_full_grid`).
pub const LOSSLESS_GRID: &[(u64, u64, u64)] = &[
    (1_000_000, 20, 10_000),
    (1_000_000, 300, 100_000),
    (10_000_000, 2, 1_000_000),
    (10_000_000, 100, 100_000),
    (100_000_000, 20, 10_000),
    (100_000_000, 100, 1_000_000),
    (100_000_000, 300, 10_000_000),
    (1_000_000_000, 2, 10_000_000),
    (1_000_000_000, 50, 1_000_000),
];

/// Parses a scenario text (panicking with the text on an error) and runs its base
/// configuration with the scenario's seed.
pub fn run_scenario(text: &str) -> RunResult {
    let cfg = sim_core::scenario::parse_str(text)
        .unwrap_or_else(|e| panic!("valid scenario: {e}\n{text}"))
        .base;
    sim_core::run(&cfg, cfg.seed).expect("runs")
}

/// The workload report of flow 0's client (endpoint 0).
pub fn client_workload(r: &RunResult) -> sim_core::metrics::workload::WorkloadMetrics {
    r.flows[0].endpoints[0]
        .workload()
        .expect("workload")
        .clone()
}
