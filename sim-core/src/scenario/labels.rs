//! Human labels for scenario key paths and run metrics, for figures and reports: "packet
//! loss rate, server → client" instead of `topology.reverse.loss`, "download time (5th
//! connection)" instead of `flow0.ep0.connections.4.metrics.completion_secs`.
//!
//! A key path is resolved through the scenario format's descriptors ([`mod@schema`]): each
//! segment is looked up in the tables the previous one leads to, the leaf's descriptor
//! gives the noun (a short name for the common keys, [`NOUNS`], checked against the
//! descriptors by a test; otherwise the first clause of its help) and its unit kind the
//! unit, and the tables on the way give the place (`reverse` → "server → client", from
//! its help) and the flow. A metric name is read the same way against the run metrics'
//! documentation ([`METRICS`], the nouns of `metrics::transport`, `metrics::workload`
//! and `metrics::quic`). Anything not known reads as its own name with spaces, so a label
//! always exists.
//!
//! ```
//! use sim_core::scenario::labels::{key_label, metric_label};
//! assert_eq!(key_label("topology.reverse.loss").axis(), "packet loss rate, server → client");
//! assert_eq!(key_label("topology.link.delay").axis(), "one-way delay (s)");
//! assert_eq!(metric_label("flow0.ep0.completion_secs"), "download time");
//! ```

use super::schema::{self, Kind, Table, TABLES};

/// The label of a scenario key path: what it is and the unit its values are drawn in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// What the key is, with its place ("packet loss rate, server → client").
    pub text: String,
    /// The unit its values are read in on an axis (durations in seconds, rates in bit/s,
    /// sizes in bytes), if it has one.
    pub unit: Option<&'static str>,
}

impl Label {
    /// The label of an axis: the text and, in parentheses, the unit.
    pub fn axis(&self) -> String {
        match self.unit {
            Some(u) => format!("{} ({u})", self.text),
            None => self.text.clone(),
        }
    }
}

/// Short nouns of common keys, by table id and key, where the first clause of the
/// descriptor's help is not one (`loss` says "see Loss models").
pub const NOUNS: &[(&str, &str, &str)] = &[
    ("link", "rate", "link rate"),
    ("link", "delay", "one-way delay"),
    ("link", "loss", "packet loss rate"),
    ("link", "corruption", "corruption rate"),
    ("link", "queue", "queue limit"),
    ("link", "overhead", "per-packet overhead"),
    ("link", "loss_position", "loss position"),
    ("loss.bernoulli", "p", "packet loss rate"),
    (
        "loss.gilbert_elliott",
        "p",
        "Gilbert-Elliott p = P(Good → Bad)",
    ),
    (
        "loss.gilbert_elliott",
        "r",
        "Gilbert-Elliott r = P(Bad → Good)",
    ),
    (
        "loss.gilbert_elliott",
        "k",
        "Gilbert-Elliott k = P(delivered | Good)",
    ),
    (
        "loss.gilbert_elliott",
        "h",
        "Gilbert-Elliott h = P(delivered | Bad)",
    ),
    ("flow", "copies", "number of parallel flows"),
    ("flow.cbr", "rate", "sending rate"),
    ("flow.quic", "initial_window", "initial window policy"),
    ("flow.quic", "allowance", "receive-window allowance"),
    ("flow.quic", "cc", "congestion controller"),
    (
        "flow.quic.initial_window",
        "policy",
        "initial window policy",
    ),
    (
        "flow.quic.migration",
        "policy",
        "window policy after a migration",
    ),
    ("flow.transport", "quic", "QUIC settings"),
    ("flow.transport", "tcp", "TCP settings"),
    ("flow.transport", "sctp", "SCTP settings"),
    ("flow.transports", "transports", "transport"),
    ("workload.bulk", "bytes", "transfer size"),
    ("workload.sequence", "bytes", "transfer size"),
    (
        "workload.reconnects",
        "reconnections",
        "number of reconnections",
    ),
    ("workload.video", "reconnections", "number of reconnections"),
    ("topology.handovers", "repeat", "number of address changes"),
];

/// The keys whose value is a link table.
const LINK_PLACES: &[&str] = &[
    "link",
    "forward",
    "reverse",
    "bottleneck",
    "bottleneck_forward",
    "bottleneck_reverse",
    "access",
    "client_access",
    "server_access",
    "client_up",
    "client_down",
    "server_up",
    "server_down",
];

/// The first clause of a descriptor's help, without markdown: up to the first `:`, `;`,
/// `.`, `,` or ` (` that ends a phrase.
fn first_clause(help: &str) -> String {
    // Links `[text](#anchor)` read as their text; code spans as their content.
    let mut plain = String::new();
    let mut rest = help;
    while let Some(i) = rest.find('[') {
        plain.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(j), Some(k)) if j < k => {
                plain.push_str(&after[..j]);
                rest = &after[k + 1..];
            }
            _ => {
                plain.push('[');
                rest = after;
            }
        }
    }
    plain.push_str(rest);
    let plain = plain.replace('`', "");
    let cut = [": ", "; ", ". ", ", ", " ("]
        .iter()
        .filter_map(|p| plain.find(p))
        .min()
        .unwrap_or(plain.len());
    plain[..cut].trim().trim_end_matches('.').to_string()
}

/// The noun of `field` of `table`.
fn noun(table: &Table, field: &schema::Field) -> String {
    if let Some((_, _, n)) = NOUNS
        .iter()
        .find(|(t, f, _)| *t == table.id && *f == field.name)
    {
        return n.to_string();
    }
    let c = first_clause(field.help);
    if c.is_empty() || c.chars().count() > 48 || c.starts_with("see ") {
        field.name.replace('_', " ")
    } else {
        c
    }
}

/// The tables a key leads to: those whose id is the key, starts with `key.` or ends with
/// `.key` (a plural key also by its singular: `flows` → `flow...`, `changes` → `change`);
/// a link place leads to the link table.
fn children(key: &str) -> Vec<&'static Table> {
    if LINK_PLACES.contains(&key) {
        return vec![&schema::LINK];
    }
    let singular = key.strip_suffix('s').unwrap_or(key);
    TABLES
        .iter()
        .copied()
        .filter(|t| {
            [key, singular].iter().any(|k| {
                t.id == *k || t.id.starts_with(&format!("{k}.")) || t.id.ends_with(&format!(".{k}"))
            })
        })
        .collect()
}

/// The unit an axis shows values of `kind` in.
fn unit(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Time => Some("s"),
        Kind::Rate => Some("bit/s"),
        Kind::Size => Some("bytes"),
        _ => None,
    }
}

/// The human label of a scenario key path as a `[sweep]` names it (`topology.reverse.loss`,
/// `flows.0.quic.initial_window`, `transports`). A path the descriptors do not know reads
/// as its last key with spaces.
pub fn key_label(path: &str) -> Label {
    let segs: Vec<&str> = path
        .split(['.', '[', ']'])
        .filter(|s| !s.is_empty())
        .collect();
    if path == super::paired::KEY {
        return Label {
            text: "transport".into(),
            unit: None,
        };
    }
    let mut candidates: Vec<&'static Table> = vec![&schema::TOP];
    let mut found: Option<(&'static Table, &'static schema::Field)> = None;
    let mut place: Option<String> = None;
    let mut flow: Option<usize> = None;
    let mut prev = "";
    for (n, seg) in segs.iter().enumerate() {
        if let Ok(i) = seg.parse::<usize>() {
            if prev == "flows" {
                flow = Some(i);
                if n + 1 == segs.len() {
                    return Label {
                        text: format!("flow {i}"),
                        unit: None,
                    };
                }
            }
            continue;
        }
        // `client = {..}` / `server = {..}` of a transport hold the transport's keys.
        if matches!(*seg, "client" | "server") && n + 1 < segs.len() {
            continue;
        }
        let in_candidates = candidates
            .iter()
            .find_map(|t| t.fields.iter().find(|f| f.name == *seg).map(|f| (*t, f)));
        let hit = in_candidates.or_else(|| {
            TABLES
                .iter()
                .find_map(|t| t.fields.iter().find(|f| f.name == *seg).map(|f| (*t, f)))
        });
        let Some((table, field)) = hit else {
            found = None;
            break;
        };
        if LINK_PLACES.contains(seg) && *seg != "link" && table.id.starts_with("topology") {
            place = Some(first_clause(field.help));
        }
        found = Some((table, field));
        candidates = children(seg);
        prev = seg;
    }
    let Some((table, field)) = found else {
        let last = segs.last().copied().unwrap_or(path);
        return Label {
            text: last.replace('_', " "),
            unit: None,
        };
    };
    let mut text = noun(table, field);
    if let Some(p) = place.filter(|p| !p.is_empty()) {
        text = format!("{text}, {p}");
    }
    if let Some(i) = flow.filter(|&i| i > 0) {
        text = format!("{text} (flow {i})");
    }
    Label {
        text,
        unit: unit(field.kind),
    }
}

/// Nouns of run metrics by their last name: (name, the client's noun, the server's noun).
/// From the documentation of the metric structs (`metrics::transport::TransportMetrics`,
/// `metrics::workload`, `metrics::quic`).
pub const METRICS: &[(&str, &str, &str)] = &[
    (
        "completion_secs",
        "download time",
        "time to the last byte acknowledged",
    ),
    ("handshake_secs", "handshake time", "handshake time"),
    (
        "time_to_first_byte_secs",
        "time to first byte",
        "time to first byte",
    ),
    ("goodput_bps", "goodput", "goodput"),
    (
        "loss_ratio",
        "loss ratio (declared lost / sent)",
        "loss ratio (declared lost / sent)",
    ),
    (
        "packets_lost",
        "packets declared lost",
        "packets declared lost",
    ),
    ("packets_sent", "packets sent", "packets sent"),
    (
        "pto_count",
        "retransmission timeouts",
        "retransmission timeouts",
    ),
    (
        "congestion_events",
        "congestion events",
        "congestion events",
    ),
    (
        "cwnd_blocked_secs",
        "time blocked by the congestion window",
        "time blocked by the congestion window",
    ),
    (
        "flow_control_blocked_secs",
        "time blocked by flow control",
        "time blocked by flow control",
    ),
    (
        "cwnd_end",
        "congestion window at the end",
        "congestion window at the end",
    ),
    (
        "srtt_end_secs",
        "smoothed RTT at the end",
        "smoothed RTT at the end",
    ),
    ("min_rtt_secs", "minimum RTT", "minimum RTT"),
    (
        "transfer_secs",
        "total transfer time",
        "total transfer time",
    ),
    ("page_load_secs", "page load time", "page load time"),
    (
        "startup_delay_secs",
        "video startup delay",
        "video startup delay",
    ),
    (
        "seek_loading_delay_secs",
        "loading delay after a seek",
        "loading delay after a seek",
    ),
    ("rebuffer_secs", "rebuffering time", "rebuffering time"),
    (
        "throughput_bps",
        "throughput after the handover",
        "throughput after the handover",
    ),
    ("cwnd", "congestion window", "congestion window"),
    ("bytes_in_flight", "bytes in flight", "bytes in flight"),
    ("delivered_bytes", "delivered bytes", "delivered bytes"),
    ("end_time_secs", "run time", "run time"),
];

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// What a metric is, without its flow or connection (`download time`, `bytes read on
/// stream 0`): the noun shared by the same metric of several flows.
pub fn metric_noun(name: &str) -> String {
    let segs: Vec<&str> = name.split('.').collect();
    let last = segs.last().copied().unwrap_or(name);
    let server = segs
        .iter()
        .find_map(|s| s.strip_prefix("ep").and_then(|n| n.parse::<usize>().ok()))
        .is_some_and(|ep| ep % 2 == 1);
    if let Some((_, client, srv)) = METRICS.iter().find(|(n, _, _)| *n == last) {
        return (if server { srv } else { client }).to_string();
    }
    // Series columns of a stream: `stream0_read`, `stream0_window`.
    if let Some(rest) = last.strip_prefix("stream") {
        if let Some((k, what)) = rest.split_once('_') {
            if k.parse::<usize>().is_ok() {
                match what {
                    "read" => return format!("bytes read on stream {k}"),
                    "window" => return format!("receive window of stream {k}"),
                    _ => {}
                }
            }
        }
    }
    let bare = ["_secs", "_bps", "_bytes"]
        .iter()
        .find_map(|s| last.strip_suffix(s))
        .unwrap_or(last);
    bare.replace('_', " ")
}

/// The human label of a run metric or series column (`flow0.ep0.completion_secs` →
/// "download time", `flow0.ep1.connections.4.metrics.loss_ratio` → "loss ratio (declared
/// lost / sent) (server, 5th connection)"): its noun ([`metric_noun`]) and where it was
/// measured, the side only where the noun does not say it, the flow when not flow 0.
pub fn metric_label(name: &str) -> String {
    let noun = metric_noun(name);
    let segs: Vec<&str> = name.split('.').collect();
    let mut at: Vec<String> = Vec::new();
    let last = segs.last().copied().unwrap_or(name);
    let sided = METRICS
        .iter()
        .find(|(n, _, _)| *n == last)
        .is_some_and(|(_, c, s)| c == s);
    for (i, s) in segs.iter().enumerate() {
        if let Some(f) = s.strip_prefix("flow").and_then(|n| n.parse::<usize>().ok()) {
            if f > 0 {
                at.push(format!("flow {f}"));
            }
        } else if let Some(ep) = s.strip_prefix("ep").and_then(|n| n.parse::<usize>().ok()) {
            if sided && ep % 2 == 1 {
                at.push("server".into());
            }
        } else if *s == "connections" {
            if let Some(k) = segs.get(i + 1).and_then(|k| k.parse::<usize>().ok()) {
                at.push(format!("{} connection", ordinal(k + 1)));
            }
        } else if *s == "migrations" {
            if let Some(k) = segs.get(i + 1).and_then(|k| k.parse::<usize>().ok()) {
                if k > 0 {
                    at.push(format!("{} migration", ordinal(k + 1)));
                }
            }
        }
    }
    if at.is_empty() {
        noun
    } else {
        format!("{noun} ({})", at.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_noun_names_a_key_of_the_format() {
        for (t, f, _) in NOUNS {
            let table = schema::table(t).unwrap_or_else(|| panic!("no table {t}"));
            assert!(
                table.fields.iter().any(|x| x.name == *f),
                "table {t} has no key {f}"
            );
        }
    }

    #[test]
    fn keys_of_the_paper_scenarios_read_as_words() {
        let cases = [
            ("topology.reverse.loss", "packet loss rate, server → client"),
            ("topology.forward.loss", "packet loss rate, client → server"),
            ("topology.link.loss", "packet loss rate"),
            ("topology.link.delay", "one-way delay (s)"),
            ("topology.link.rate", "link rate (bit/s)"),
            (
                "topology.reverse.corruption",
                "corruption rate, server → client",
            ),
            (
                "topology.reverse.loss.k",
                "Gilbert-Elliott k = P(delivered | Good), server → client",
            ),
            (
                "topology.bottleneck_forward.delay",
                "one-way delay, R1 → R2 (s)",
            ),
            ("topology.handovers.0.repeat", "number of address changes"),
            ("flows.0.quic.initial_window", "initial window policy"),
            (
                "flows.0.quic.initial_window.policy",
                "initial window policy",
            ),
            (
                "flows.0.quic.migration.policy",
                "window policy after a migration",
            ),
            ("flows.0.allowance", "receive-window allowance"),
            ("flows.0.workload.bytes", "transfer size (bytes)"),
            ("flows.0.workload.reconnections", "number of reconnections"),
            ("flows.1.copies", "number of parallel flows (flow 1)"),
            ("flows.1.rate", "sending rate (flow 1) (bit/s)"),
            ("flows.0.quic", "QUIC settings"),
            ("flows[0].quic.client.cc", "congestion controller"),
            ("flows.0", "flow 0"),
            ("transports", "transport"),
            // Unknown keys read as themselves.
            ("nothing.here_at_all", "here at all"),
        ];
        for (path, want) in cases {
            assert_eq!(key_label(path).axis(), want, "{path}");
        }
    }

    #[test]
    fn metrics_read_as_words() {
        let cases = [
            ("flow0.ep0.completion_secs", "download time"),
            (
                "flow0.ep0.connections.4.metrics.completion_secs",
                "download time (5th connection)",
            ),
            (
                "flow0.ep1.connections.4.metrics.loss_ratio",
                "loss ratio (declared lost / sent) (server, 5th connection)",
            ),
            ("flow0.ep0.goodput_bps", "goodput"),
            ("flow0.ep0.page.page_load_secs", "page load time"),
            (
                "flow0.ep0.video.seek_loading_delay_secs",
                "loading delay after a seek",
            ),
            (
                "flow0.ep0.migrations.0.throughput_bps",
                "throughput after the handover",
            ),
            ("flow0.ep1.cwnd", "congestion window (server)"),
            ("flow1.ep2.stream0_read", "bytes read on stream 0 (flow 1)"),
            ("flow0.ep0.stream0_window", "receive window of stream 0"),
            ("flow0.ep0.some_new_secs", "some new"),
        ];
        for (name, want) in cases {
            assert_eq!(metric_label(name), want, "{name}");
        }
        assert_eq!(
            metric_noun("flow3.ep6.stream0_read"),
            "bytes read on stream 0"
        );
        assert_eq!(
            (ordinal(1), ordinal(2), ordinal(3), ordinal(11), ordinal(22)),
            (
                "1st".into(),
                "2nd".into(),
                "3rd".into(),
                "11th".into(),
                "22nd".into()
            )
        );
    }
}
