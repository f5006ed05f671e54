//! Initial congestion window policies: what window a server gives a new connection, from
//! what it saw of the same client before (paper 000, Jung & An 2019, "Access latency
//! reduction in QUIC based on communication history").
//!
//! A server that runs a sequence of connections (`workloads::sequence`) keeps one policy
//! in its store. It reports a congestion-window sample at each history event (a resumed
//! connection completed its handshake; a connection closed by idle timeout or
//! CONNECTION_CLOSE) with [`InitialWindowPolicy::on_sample`], and asks
//! [`InitialWindowPolicy::initial_window`] when it accepts a new connection. The policy
//! never touches a connection; it only answers with a window in bytes.
//!
//! One file per policy, registered in [`InitialWindowKind`] and [`build`]:
//! - [`default_window`]: the controller's initial window, whatever the history
//!   (`policy = "default"`, today's behaviour);
//! - [`history`]: max(default, average of the client's samples), capped
//!   (`policy = "history"`, paper 000 Algorithm 1).
//!
//! The scenario key is `initial_window = { policy = ..., ... }` on the QUIC transport
//! ([`InitialWindowConfig`]); only the server uses it.

use serde::{Deserialize, Serialize};

pub mod default_window;
pub mod history;

pub use default_window::DefaultWindow;
pub use history::History;

/// Which initial-window policy a server uses (`initial_window.policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum InitialWindowKind {
    /// The congestion controller's initial window ([`DefaultWindow`]). Default.
    #[default]
    Default,
    /// Paper 000: max(default, per-client average of past samples), capped ([`History`]).
    History,
}

impl InitialWindowKind {
    /// Every policy, the table of this extension point: [`InitialWindowKind::NAMES`] and the schema's
    /// choices derive from it.
    pub const ALL: [InitialWindowKind; 2] =
        [InitialWindowKind::Default, InitialWindowKind::History];

    /// The scenario names of every policy, computed from [`InitialWindowKind::ALL`]: the schema's choices.
    pub const NAMES: [&'static str; InitialWindowKind::ALL.len()] = {
        let mut out = [""; InitialWindowKind::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = InitialWindowKind::ALL[i].name();
            i += 1;
        }
        out
    };

    /// The name used in scenarios.
    pub const fn name(self) -> &'static str {
        match self {
            InitialWindowKind::Default => "default",
            InitialWindowKind::History => "history",
        }
    }
}

/// How the history policy averages a client's samples (`initial_window.average`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Average {
    /// Arithmetic mean of every sample (paper 000 §4: "the arithmetic mean"). Default.
    #[default]
    Mean,
    /// Exponential moving average with weight `alpha` for the newest sample (paper 000 §4:
    /// "or moving average"); the first sample initialises it.
    Ema,
}

/// Default `alpha` of the moving average: 1/8, the weight RFC 6298 §2.3 (and RFC 9002
/// §5.3) gives a new RTT sample in the smoothed RTT. Paper 000 gives no value.
pub const DEFAULT_ALPHA: f64 = 0.125;

/// Default cap in segments: 200, Google quiche's `kMaxResumptionCongestionWindow` (the
/// largest window `TcpCubicSenderBytes::AdjustNetworkParameters` sets when it resumes a
/// connection from cached network parameters, in `kDefaultTCPMSS` units), the same
/// mechanism (a window learnt from an earlier connection) in the stack paper 000 used.
pub const DEFAULT_CAP_PACKETS: u64 = 200;

/// The `initial_window` table of a QUIC flow. Only the keys the chosen policy uses may
/// be set (checked by [`InitialWindowConfig::validate`]); a parsed table fills the used
/// keys it leaves out with their defaults, so `resolved_config` shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, from = "RawInitialWindow")]
pub struct InitialWindowConfig {
    /// The policy. Default `default`.
    pub policy: InitialWindowKind,
    /// History: how samples are averaged. Default `mean`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average: Option<Average>,
    /// History with `average = "ema"`: weight of the newest sample, in (0, 1]. Default
    /// [`DEFAULT_ALPHA`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// History: the largest initial window it gives, in segments of the controller
    /// (`cc_segment_size`, else `max_udp_payload`). Default [`DEFAULT_CAP_PACKETS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_packets: Option<u64>,
    /// History: also give resumed (0-RTT) connections the history window. Default false:
    /// paper 000 Algorithm 1 sets it on an inchoate client hello, i.e. a full (1-RTT)
    /// handshake only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed: Option<bool>,
}

/// The table as written (every key optional); [`InitialWindowConfig`] fills the keys its
/// policy uses.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInitialWindow {
    #[serde(default)]
    policy: InitialWindowKind,
    average: Option<Average>,
    alpha: Option<f64>,
    cap_packets: Option<u64>,
    resumed: Option<bool>,
}

impl From<RawInitialWindow> for InitialWindowConfig {
    fn from(r: RawInitialWindow) -> Self {
        let mut c = InitialWindowConfig {
            policy: r.policy,
            average: r.average,
            alpha: r.alpha,
            cap_packets: r.cap_packets,
            resumed: r.resumed,
        };
        if c.policy == InitialWindowKind::History {
            let avg = *c.average.get_or_insert(Average::Mean);
            if avg == Average::Ema {
                c.alpha.get_or_insert(DEFAULT_ALPHA);
            }
            c.cap_packets.get_or_insert(DEFAULT_CAP_PACKETS);
            c.resumed.get_or_insert(false);
        }
        c
    }
}

/// What `initial_window.alpha` allows.
pub const ALPHA_ALLOWED: &str = "a weight in (0, 1]";
/// What `initial_window.cap_packets` allows.
pub const CAP_ALLOWED: &str =
    "a number of segments >= 1 whose bytes are at least the default initial window";

impl InitialWindowConfig {
    /// Whether this is the default policy with nothing else set (what a flow without the
    /// key has; not serialised, so outputs without the key are unchanged).
    pub fn is_default(&self) -> bool {
        *self == InitialWindowConfig::default()
    }

    /// The averaging of the history policy.
    pub fn average(&self) -> Average {
        self.average.unwrap_or_default()
    }

    /// The moving average's weight.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(DEFAULT_ALPHA)
    }

    /// The cap in segments.
    pub fn cap_packets(&self) -> u64 {
        self.cap_packets.unwrap_or(DEFAULT_CAP_PACKETS)
    }

    /// Checks the table for a transport whose controller counts in `segment` bytes and
    /// whose default initial window is `default_window` bytes. The error is `(key, value,
    /// allowed)`, the key relative to the transport's table (`initial_window.alpha`).
    pub fn validate(
        &self,
        segment: u64,
        default_window: u64,
    ) -> Result<(), (&'static str, String, String)> {
        let unused = |field: &'static str, v: String, why: &str| {
            Err((
                field,
                v,
                format!("no `{}` {why}", &field["initial_window.".len()..]),
            ))
        };
        match self.policy {
            InitialWindowKind::Default => {
                let why = "with policy = \"default\" (it uses no other key)";
                if let Some(a) = self.average {
                    return unused(
                        "initial_window.average",
                        format!("{a:?}").to_lowercase(),
                        why,
                    );
                }
                if let Some(a) = self.alpha {
                    return unused("initial_window.alpha", a.to_string(), why);
                }
                if let Some(c) = self.cap_packets {
                    return unused("initial_window.cap_packets", c.to_string(), why);
                }
                if let Some(r) = self.resumed {
                    return unused("initial_window.resumed", r.to_string(), why);
                }
            }
            InitialWindowKind::History => {
                if let Some(a) = self.alpha {
                    if self.average() != Average::Ema {
                        return unused(
                            "initial_window.alpha",
                            a.to_string(),
                            "with average = \"mean\" (only the moving average, average = \"ema\", has a weight)",
                        );
                    }
                    if !(a > 0.0 && a <= 1.0) {
                        return Err(("initial_window.alpha", a.to_string(), ALPHA_ALLOWED.into()));
                    }
                }
                let cap = self.cap_packets();
                if cap == 0 || cap.saturating_mul(segment) < default_window {
                    return Err((
                        "initial_window.cap_packets",
                        cap.to_string(),
                        format!("{CAP_ALLOWED} ({default_window} B in {segment}-byte segments)"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One client's entry in a policy's store, for the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreEntry {
    /// The client key: its IP address (big-endian, as `packet::Addr::ip`).
    pub client: u32,
    /// Samples taken.
    pub samples: u64,
    /// The current average in bytes (rounded down).
    pub average: u64,
}

/// An initial-window policy (see the module doc).
pub trait InitialWindowPolicy: std::fmt::Debug {
    /// A congestion-window sample (`cwnd` bytes) of a connection from the client at IP
    /// `client` was taken.
    fn on_sample(&mut self, client: u32, cwnd: u64);

    /// The client's current average in bytes, if the policy keeps one for it.
    fn average(&self, _client: u32) -> Option<u64> {
        None
    }

    /// The initial congestion window (bytes) for a new connection from `client`
    /// (`resumed`: it presented a valid ticket) whose configured window is `default`, or
    /// `None` to keep `default`.
    fn initial_window(&self, _client: u32, _resumed: bool, _default: u64) -> Option<u64> {
        None
    }

    /// The store, by client (empty for a policy that keeps none).
    fn store(&self) -> Vec<StoreEntry> {
        Vec::new()
    }

    /// The policy's scenario name.
    fn name(&self) -> &'static str;
}

/// The policy `cfg` describes, for a controller counting in `segment`-byte segments.
pub fn build(cfg: &InitialWindowConfig, segment: u64) -> Box<dyn InitialWindowPolicy> {
    match cfg.policy {
        InitialWindowKind::Default => Box::new(DefaultWindow),
        InitialWindowKind::History => Box::new(History::new(
            cfg.average(),
            cfg.alpha(),
            cfg.cap_packets().saturating_mul(segment),
            cfg.resumed.unwrap_or(false),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<InitialWindowConfig, String> {
        let t: toml::Table = toml::from_str(&format!("v = {s}")).unwrap();
        t["v"].clone().try_into().map_err(|e| e.to_string())
    }

    #[test]
    fn parsed_history_fills_the_keys_it_uses() {
        let c = parse("{ policy = \"history\" }").unwrap();
        assert_eq!(c.average, Some(Average::Mean));
        assert_eq!(c.alpha, None, "mean has no weight");
        assert_eq!(c.cap_packets, Some(200));
        assert_eq!(c.resumed, Some(false));
        let e = parse("{ policy = \"history\", average = \"ema\" }").unwrap();
        assert_eq!(e.alpha, Some(0.125));
        assert_eq!(parse("{}").unwrap(), InitialWindowConfig::default());
        assert!(parse("{ policy = \"default\" }").unwrap().is_default());
        // Filling is idempotent: the resolved form parses back to itself.
        let back = parse(&format!(
            "{{ policy = \"history\", average = \"ema\", alpha = {}, cap_packets = 200, resumed = false }}",
            e.alpha.unwrap()
        ))
        .unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn unknown_keys_and_values_are_errors() {
        assert!(parse("{ policy = \"history\", beta = 1 }")
            .unwrap_err()
            .contains("beta"));
        assert!(parse("{ policy = \"cached\" }")
            .unwrap_err()
            .contains("cached"));
    }

    #[test]
    fn keys_the_policy_does_not_use_are_errors_naming_them() {
        let check = |s: &str| parse(s).unwrap().validate(1460, 46_720).map_err(|e| e.0);
        assert_eq!(
            check("{ policy = \"history\", alpha = 0.5 }"),
            Err("initial_window.alpha")
        );
        assert_eq!(
            check("{ policy = \"history\", average = \"mean\", alpha = 0.5 }"),
            Err("initial_window.alpha")
        );
        assert_eq!(check("{ alpha = 0.5 }"), Err("initial_window.alpha"));
        assert_eq!(
            check("{ average = \"ema\" }"),
            Err("initial_window.average")
        );
        assert_eq!(
            check("{ cap_packets = 10 }"),
            Err("initial_window.cap_packets")
        );
        assert_eq!(check("{ resumed = true }"), Err("initial_window.resumed"));
        assert_eq!(
            check("{ policy = \"history\", average = \"ema\", alpha = 0.5 }"),
            Ok(())
        );
    }

    /// The descriptors of `schema::INITIAL_WINDOW` are exactly the keys, choices and
    /// range texts of [`InitialWindowConfig`].
    #[test]
    fn descriptors_agree_with_the_config() {
        use crate::validate::schema::INITIAL_WINDOW;
        let full = parse("{ policy = \"history\", average = \"ema\" }").unwrap();
        let toml::Value::Table(t) = toml::Value::try_from(&full).unwrap() else {
            panic!("a table");
        };
        let keys: Vec<&str> = t.keys().map(String::as_str).collect();
        let described: Vec<&str> = INITIAL_WINDOW.fields.iter().map(|f| f.name).collect();
        assert_eq!(
            {
                let mut k = keys.clone();
                k.sort();
                k
            },
            {
                let mut d = described.clone();
                d.sort();
                d
            }
        );
        assert_eq!(
            INITIAL_WINDOW.field("policy").choices,
            &["default", "history"]
        );
        assert_eq!(INITIAL_WINDOW.field("average").choices, &["mean", "ema"]);
        assert_eq!(INITIAL_WINDOW.field("alpha").allowed, ALPHA_ALLOWED);
        assert_eq!(INITIAL_WINDOW.field("cap_packets").allowed, CAP_ALLOWED);
        for (name, v) in [("policy", "history"), ("average", "ema")] {
            assert!(parse(&format!("{{ {name} = \"{v}\" }}")).is_ok());
        }
    }

    #[test]
    fn ranges() {
        let check = |s: &str| {
            parse(s)
                .unwrap()
                .validate(1460, 46_720)
                .map_err(|e| (e.0, e.2))
        };
        for a in ["0.0", "-0.1", "1.5", "nan"] {
            let e = check(&format!(
                "{{ policy = \"history\", average = \"ema\", alpha = {a} }}"
            ));
            assert_eq!(
                e,
                Err(("initial_window.alpha", ALPHA_ALLOWED.to_string())),
                "{a}"
            );
        }
        assert_eq!(
            check("{ policy = \"history\", average = \"ema\", alpha = 1.0 }"),
            Ok(())
        );
        // 32 x 1460 = 46720 is the default window: 31 segments is below it.
        assert_eq!(check("{ policy = \"history\", cap_packets = 32 }"), Ok(()));
        for c in [0, 31] {
            let e = check(&format!("{{ policy = \"history\", cap_packets = {c} }}")).unwrap_err();
            assert_eq!(e.0, "initial_window.cap_packets");
            assert!(e.1.starts_with(CAP_ALLOWED));
        }
    }
}
