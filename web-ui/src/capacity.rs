//! The capacity of trace-driven links over a run (issue 30 item 2): for every link whose
//! `rate` is a Mahimahi trace, the bytes its delivery opportunities offer per time bin, as
//! a rate — what the link could carry, beside what the flows did carry. The opportunities
//! are the resolved config's ([`sim_core::config::trace::LinkTrace`]), repeating after the
//! trace's last timestamp exactly as the link spends them.

use serde::{Deserialize, Serialize};
use sim_core::config::trace::{LinkTrace, OPPORTUNITY_BYTES};
use sim_core::config::Config;

/// One trace-driven link's capacity over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceCapacity {
    /// Where the link is in the config, in words (`server → client`, `bottleneck_forward`).
    pub link: String,
    /// The trace file as the scenario names it.
    pub file: String,
    /// The trace's mean rate, Mbit/s.
    pub mean_mbps: f64,
    /// Bin width, seconds.
    pub bin_s: f64,
    /// Capacity per bin, Mbit/s (bin `i` covers `[i, i + 1) × bin_s`).
    pub mbps: Vec<f64>,
}

/// The link's place in words.
fn words(path: &[String]) -> String {
    match path.last().map(String::as_str) {
        Some("forward") if path.len() == 1 => "client → server".into(),
        Some("reverse") if path.len() == 1 => "server → client".into(),
        _ => path.join("."),
    }
}

/// Every trace-driven link of `topology` (its JSON form, which names each link by its key)
/// with its path.
fn traces(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<(String, LinkTrace)>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(rate) = m
                .get("rate")
                .filter(|r| r.get("opportunities_ms").is_some())
            {
                if let Ok(t) = serde_json::from_value::<LinkTrace>(rate.clone()) {
                    out.push((words(path), t));
                }
            }
            for (k, x) in m {
                path.push(k.clone());
                traces(x, path, out);
                path.pop();
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                traces(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// The capacity of every trace-driven link of `config` over `[0, end_s)`: 100 ms bins, or
/// wider so a long run has at most 600.
pub fn of_config(config: &Config, end_s: f64) -> Vec<TraceCapacity> {
    let Ok(topology) = serde_json::to_value(&config.topology) else {
        return vec![];
    };
    let mut found = Vec::new();
    traces(&topology, &mut Vec::new(), &mut found);
    let end_ns = (end_s.max(0.1) * 1e9) as u64;
    let bin_ns = (end_ns / 600).max(100_000_000);
    let bins = end_ns.div_ceil(bin_ns) as usize;
    found
        .into_iter()
        .map(|(link, t)| {
            let mut count = vec![0u64; bins];
            let mut i = 0;
            loop {
                let at = t.opportunity_ns(i);
                if at >= end_ns {
                    break;
                }
                count[(at / bin_ns) as usize] += 1;
                i += 1;
            }
            let bin_s = bin_ns as f64 / 1e9;
            TraceCapacity {
                link,
                file: t.trace.clone(),
                mean_mbps: t.mean_rate().0 as f64 / 1e6,
                bin_s,
                mbps: count
                    .iter()
                    .map(|&c| (c * OPPORTUNITY_BYTES * 8) as f64 / bin_s / 1e6)
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bins_hold_exactly_the_trace_file_opportunities() {
        let e = crate::gallery::find("examples/quic-trace-4g.toml").unwrap();
        let cfg = crate::gallery::parse(e.toml).unwrap().base;
        let file = crate::gallery::trace_file("../traces/4g-varying.trace").unwrap();
        let ms = sim_core::config::trace::parse_trace(&file).unwrap();
        let period = *ms.last().unwrap();
        // Over two and a half periods: every line of the file, repeated.
        let end_ms = period * 5 / 2;
        let caps = of_config(&cfg, end_ms as f64 / 1e3);
        assert_eq!(caps.len(), 1, "{caps:?}");
        let c = &caps[0];
        assert_eq!(c.link, "server → client");
        assert_eq!(c.file, "../traces/4g-varying.trace");
        let expect = |until: u64| -> u64 {
            (0..3u64)
                .flat_map(|cycle| ms.iter().map(move |m| cycle * period + m))
                .filter(|&t| t < until)
                .count() as u64
        };
        let total: f64 = c.mbps.iter().map(|m| m * c.bin_s * 1e6 / 8.0).sum();
        let want = expect(end_ms) * OPPORTUNITY_BYTES;
        assert!(
            (total - want as f64).abs() < 1e-3 * want as f64,
            "{total} vs {want}"
        );
        // The first bin: the file's lines before its end (75 s / 600 = 125 ms bins).
        assert_eq!(c.bin_s, 0.125);
        let first = ms.iter().filter(|&&m| m < 125).count() as f64 * 1500.0 * 8.0 / 0.125 / 1e6;
        assert!((c.mbps[0] - first).abs() < 1e-9, "{} vs {first}", c.mbps[0]);
        // Over whole periods the bins average to the trace's mean rate.
        let whole = of_config(&cfg, (period * 2) as f64 / 1e3);
        let mean: f64 =
            whole[0].mbps.iter().sum::<f64>() * whole[0].bin_s / (period * 2) as f64 * 1e3;
        assert!(
            (mean - c.mean_mbps).abs() < 0.01 * c.mean_mbps,
            "{mean} vs {}",
            c.mean_mbps
        );
    }

    #[test]
    fn fixed_rate_links_have_no_capacity_plot() {
        let cfg = crate::gallery::parse(crate::gallery::SANDBOX).unwrap().base;
        assert!(of_config(&cfg, 10.0).is_empty());
    }
}
