//! The summary numbers the page shows for a finished run: per run its status, end time,
//! events and digest; per flow its loss ratio and, for transports, completion time and
//! goodput; over repeated runs the completion time's mean and 95 % CI
//! ([`sim_core::stats::Summary`]).

use serde::{Deserialize, Serialize};
use sim_core::stats::Summary;
use sim_core::RunResult;

/// One line of the per-run table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLine {
    /// The run's seed.
    pub seed: u64,
    /// Its status (`completed`, `time_limit`, ...).
    pub status: String,
    /// Simulated end time, seconds.
    pub end_s: f64,
    /// Events processed.
    pub events: u64,
    /// The run digest (what `quicsim run --json` prints).
    pub digest: String,
    /// Per flow: (flow, loss ratio, completion s, goodput bit/s) of the flow's client side.
    pub flows: Vec<FlowLine>,
}

/// One flow of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowLine {
    /// Flow index.
    pub flow: u32,
    /// Packets lost / sent on the network (`None` when not a number: nothing sent).
    pub loss_ratio: Option<f64>,
    /// Transport client: completion time, seconds.
    pub completion_s: Option<f64>,
    /// Transport client: goodput, bit/s.
    pub goodput_bps: Option<f64>,
    /// QUIC client with a handover: stream data received in the interval after its first
    /// path switch, bit/s (`MigrationMetrics::throughput_bps`).
    #[serde(default)]
    pub handover_bps: Option<f64>,
}

/// The status as the JSON writes it.
fn status_name(r: &RunResult) -> String {
    serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{:?}", r.status))
}

/// The per-run lines.
pub fn lines(results: &[RunResult]) -> Vec<RunLine> {
    results
        .iter()
        .map(|r| RunLine {
            seed: r.seed,
            status: status_name(r),
            end_s: r.end_time_secs,
            events: r.events,
            digest: r.digest.clone(),
            flows: r
                .flows
                .iter()
                .map(|f| {
                    let client = f
                        .endpoints
                        .iter()
                        .filter_map(|e| e.transport())
                        .find(|t| t.role == "client");
                    FlowLine {
                        flow: f.flow,
                        loss_ratio: f.loss_ratio.is_finite().then_some(f.loss_ratio),
                        completion_s: client
                            .and_then(|t| t.completion_secs)
                            .filter(|v| v.is_finite()),
                        goodput_bps: client.and_then(|t| t.goodput_bps).filter(|v| v.is_finite()),
                        handover_bps: f
                            .endpoints
                            .iter()
                            .filter_map(|e| e.quic())
                            .find(|q| q.transport.role == "client")
                            .and_then(|q| q.quic.migrations.first())
                            .map(|m| m.throughput_bps)
                            .filter(|v| v.is_finite()),
                    }
                })
                .collect(),
        })
        .collect()
}

/// Per flow over the runs: the completion times' summary (flows with at least one).
pub fn completion_summaries(lines: &[RunLine]) -> Vec<(u32, Summary)> {
    let mut flows: Vec<u32> = lines
        .iter()
        .flat_map(|l| l.flows.iter().map(|f| f.flow))
        .collect();
    flows.sort_unstable();
    flows.dedup();
    flows
        .into_iter()
        .filter_map(|flow| {
            let v: Vec<f64> = lines
                .iter()
                .flat_map(|l| l.flows.iter().filter(|f| f.flow == flow))
                .filter_map(|f| f.completion_s)
                .collect();
            (!v.is_empty()).then(|| (flow, Summary::of(&v)))
        })
        .collect()
}

/// Bits per second with a unit: `12.3 Mbit/s`.
pub fn fmt_rate(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kbit/s")
    } else {
        (bps, "bit/s")
    };
    format!("{v:.3} {u}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_bulk_run() {
        let cfg = sim_core::scenario::parse_str(crate::gallery::SANDBOX)
            .unwrap()
            .base;
        let r = sim_core::run(&cfg, 1).unwrap();
        let l = lines(std::slice::from_ref(&r));
        assert_eq!(l[0].status, "completed");
        assert_eq!(l[0].digest, r.digest);
        let f = &l[0].flows[0];
        let c = f.completion_s.unwrap();
        // 1 MB over 10 Mbit/s takes at least 0.8 s of serialisation.
        assert!(c > 0.8, "{c}");
        let s = completion_summaries(&l);
        assert_eq!(s[0].1.n, 1);
        assert_eq!(fmt_rate(12_345_678.0), "12.346 Mbit/s");
    }
}
