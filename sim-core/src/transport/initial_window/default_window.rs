//! `policy = "default"`: every connection starts with the congestion controller's
//! initial window (`initial_cwnd_bytes` / `initial_cwnd_packets`, else RFC 9002 §7.2),
//! whatever happened before. Samples are still taken and reported by the server's store;
//! this policy ignores them.

use super::InitialWindowPolicy;

/// The default policy: keeps nothing, changes nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultWindow;

impl InitialWindowPolicy for DefaultWindow {
    fn on_sample(&mut self, _client: u32, _cwnd: u64) {}

    fn name(&self) -> &'static str {
        "default"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_changes_the_window() {
        let mut p = DefaultWindow;
        p.on_sample(1, 1_000_000);
        assert_eq!(p.initial_window(1, false, 14_720), None);
        assert_eq!(p.average(1), None);
        assert!(p.store().is_empty());
    }
}
