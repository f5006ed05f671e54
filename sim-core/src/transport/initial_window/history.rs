//! `policy = "history"`: paper 000 (Jung & An 2019, §4 and Algorithm 1).
//!
//! The server keeps, per client, an average of the congestion-window samples it took when
//! a resumed connection completed its handshake ("receive complete client hello") and
//! when a connection closed ("close a connection": idle timeout or CONNECTION_CLOSE). A
//! new connection with a full handshake ("receive inchoate client hello") starts at
//! `max(default, average)`; this model also caps that value (`cap`, see
//! [`super::DEFAULT_CAP_PACKETS`]), which the paper does not.
//!
//! - **Average.** `mean`: the arithmetic mean of every sample, `floor(sum / n)`.
//!   `ema`: `a_1 = x_1`, `a_k = a_{k-1} + alpha (x_k - a_{k-1})`, in `f64` (one multiply
//!   and two adds per sample: IEEE 754 gives the same bits on every target); the window
//!   is `floor(a_k)`. The paper names both and gives no weight; the default weight 1/8 is
//!   RFC 6298's.
//! - **Client key.** The client's IP address: all its connections (any port) share one
//!   entry. A client whose address changes (a handover to a new network) has no history
//!   at the new address and starts at the default; its old entry stays, unused. A
//!   port-only change (NAT rebinding) keeps the history.
//! - **Which connections.** Full handshakes, as Algorithm 1. `resumed = true` applies the
//!   window to resumed (0-RTT) connections too.
//! - **ssthresh** is not changed (it stays infinite): the connection is in slow start from
//!   the larger window, as in Algorithm 1, which sets only `cwnd_initial`, and as in Google
//!   quiche's bandwidth resumption (`AdjustNetworkParameters` sets only the window).

use super::{Average, InitialWindowPolicy, StoreEntry};
use std::collections::BTreeMap;

/// One client's running average.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Acc {
    /// Sum and count of the samples (arithmetic mean).
    Mean { sum: u128, n: u64 },
    /// The moving average and the count of samples.
    Ema { avg: f64, n: u64 },
}

impl Acc {
    fn average(&self) -> u64 {
        match *self {
            Acc::Mean { sum, n } => (sum / u128::from(n.max(1))) as u64,
            Acc::Ema { avg, .. } => avg as u64,
        }
    }

    fn samples(&self) -> u64 {
        match *self {
            Acc::Mean { n, .. } | Acc::Ema { n, .. } => n,
        }
    }
}

/// The history policy: per-client averages and the rule that turns them into a window.
#[derive(Clone, Debug)]
pub struct History {
    average: Average,
    alpha: f64,
    cap: u64,
    resumed: bool,
    clients: BTreeMap<u32, Acc>,
}

impl History {
    /// A policy averaging with `average` (weight `alpha` for `ema`), giving at most `cap`
    /// bytes, to full handshakes only or (`resumed`) to resumed connections too.
    pub fn new(average: Average, alpha: f64, cap: u64, resumed: bool) -> Self {
        History {
            average,
            alpha,
            cap,
            resumed,
            clients: BTreeMap::new(),
        }
    }
}

impl InitialWindowPolicy for History {
    fn on_sample(&mut self, client: u32, cwnd: u64) {
        let x = cwnd;
        match self.clients.get_mut(&client) {
            None => {
                let acc = match self.average {
                    Average::Mean => Acc::Mean {
                        sum: u128::from(x),
                        n: 1,
                    },
                    Average::Ema => Acc::Ema {
                        avg: x as f64,
                        n: 1,
                    },
                };
                self.clients.insert(client, acc);
            }
            Some(Acc::Mean { sum, n }) => {
                *sum += u128::from(x);
                *n += 1;
            }
            Some(Acc::Ema { avg, n }) => {
                *avg += self.alpha * (x as f64 - *avg);
                *n += 1;
            }
        }
    }

    fn average(&self, client: u32) -> Option<u64> {
        self.clients.get(&client).map(Acc::average)
    }

    fn initial_window(&self, client: u32, resumed: bool, default: u64) -> Option<u64> {
        if resumed && !self.resumed {
            return None;
        }
        // Algorithm 1: cwnd_initial = max(cwnd_default, cwnd_average); then the cap.
        let avg = self.average(client)?;
        (avg > default).then(|| avg.min(self.cap).max(default))
    }

    fn store(&self) -> Vec<StoreEntry> {
        self.clients
            .iter()
            .map(|(&client, a)| StoreEntry {
                client,
                samples: a.samples(),
                average: a.average(),
            })
            .collect()
    }

    fn name(&self) -> &'static str {
        "history"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: u64 = 14_720;

    #[test]
    fn paper_example_mean_of_the_two_events() {
        // Paper 000 §4, Figure 6 (1500-byte steps): a 0-RTT connection samples 4500 B,
        // a closed one 3000 B; the mean is 3750 B, above a 1500-byte default.
        let mut h = History::new(Average::Mean, 0.0, u64::MAX, false);
        h.on_sample(7, 4500);
        h.on_sample(7, 3000);
        assert_eq!(h.average(7), Some(3750));
        assert_eq!(h.initial_window(7, false, 1500), Some(3750));
    }

    #[test]
    fn max_of_default_and_average_then_the_cap() {
        let mut h = History::new(Average::Mean, 0.0, 40_000, false);
        assert_eq!(h.initial_window(1, false, D), None, "no history: default");
        h.on_sample(1, 10_000);
        assert_eq!(
            h.initial_window(1, false, D),
            None,
            "average below the default"
        );
        h.on_sample(1, 50_000); // mean 30000
        assert_eq!(h.initial_window(1, false, D), Some(30_000));
        h.on_sample(1, 200_000); // mean 86666
        assert_eq!(h.average(1), Some(86_666));
        assert_eq!(h.initial_window(1, false, D), Some(40_000), "capped");
        assert_eq!(h.initial_window(2, false, D), None, "another client");
        assert_eq!(
            h.initial_window(1, true, D),
            None,
            "resumed: full handshakes only"
        );
        let r = History {
            resumed: true,
            ..h.clone()
        };
        assert_eq!(r.initial_window(1, true, D), Some(40_000));
        assert_eq!(
            h.store(),
            vec![StoreEntry {
                client: 1,
                samples: 3,
                average: 86_666
            }]
        );
    }

    #[test]
    fn moving_average_by_hand() {
        let mut h = History::new(Average::Ema, 0.25, u64::MAX, false);
        for x in [20_000, 60_000, 40_000] {
            h.on_sample(9, x);
        }
        // 20000; 20000 + (60000 - 20000) / 4 = 30000; 30000 + (40000 - 30000) / 4 = 32500.
        assert_eq!(h.average(9), Some(32_500));
        let one = History::new(Average::Ema, 1.0, u64::MAX, false);
        let mut one = one;
        one.on_sample(9, 5);
        one.on_sample(9, 70_000);
        assert_eq!(one.average(9), Some(70_000), "alpha = 1: the last sample");
    }
}
