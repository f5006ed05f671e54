//! The packet timeline for teaching: flow 0 of a scenario's first run, traced through the
//! engine's trace events ([`sim_core::trace`]), as a list of steps a student walks one at
//! a time. Each step is one event (a packet sent, received or declared lost, a datagram
//! the network dropped, a congestion-state change, a block or unblock, a connection-state
//! change), with the rule that fired in words and the RFC section it comes from, and the
//! RFC 9002 state of both endpoints after it (congestion state, PTO count, cwnd, bytes in
//! flight, srtt). A sent packet also knows when the peer received it, or that the network
//! dropped it: the sequence diagram draws it as an arrow.
//!
//! Tracing changes neither the run nor its digest; the timeline is built on demand (a
//! separate traced run of the same job), so ordinary runs stay untraced. Long runs are
//! cut after [`MAX_STEPS`] steps.

use serde::{Deserialize, Serialize};
use sim_core::scenario::ConfigError;
use sim_core::study::{Overrides, Study};
use sim_core::trace::{
    BlockedReason, ConnectionState, DatagramContent, LossTrigger, ProtocolPacket, SendTrigger,
    TraceEvent, TraceRecord, TraceSource, Tracer, Vantage,
};
use sim_core::wire::quic::{Frame, PacketType};
use sim_core::Simulation;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Steps kept at most (the rest of a long run is cut).
pub const MAX_STEPS: usize = 4000;

/// One endpoint's loss-recovery and congestion state (RFC 9002).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SenderState {
    /// Congestion state (`slow_start`, `congestion_avoidance`, `recovery`, ...).
    pub cc: String,
    /// Consecutive PTO expirations (RFC 9002 §6.2).
    pub pto_count: u32,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Bytes in flight.
    pub bytes_in_flight: u64,
    /// Smoothed RTT, ms (0 before the first sample).
    pub srtt_ms: f64,
}

/// One step of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Simulated time, seconds.
    pub t_s: f64,
    /// `client`, `server` or `network`.
    pub side: String,
    /// `sent`, `received`, `lost`, `dropped`, `congestion`, `blocked`, `unblocked`,
    /// `connection`, `migration`, `link`.
    pub kind: String,
    /// What happened, short (`1-RTT 41: STREAM, ACK`).
    pub label: String,
    /// The rule that fired, in words, with its source.
    pub rule: String,
    /// For a sent packet: when the peer received it.
    pub arrive_s: Option<f64>,
    /// For a sent packet: when the network dropped it.
    pub dropped_s: Option<f64>,
    /// State of the client and the server after the step.
    pub state: [SenderState; 2],
}

/// A traced first run of flow 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The steps, in time order.
    pub steps: Vec<Step>,
    /// Whether the run went on after [`MAX_STEPS`].
    pub truncated: bool,
}

fn side_index(v: Vantage) -> usize {
    match v {
        Vantage::Client => 0,
        Vantage::Server => 1,
    }
}

fn side_name(i: usize) -> &'static str {
    ["client", "server"][i]
}

fn ty_name(t: PacketType) -> &'static str {
    match t {
        PacketType::Initial => "Initial",
        PacketType::Handshake => "Handshake",
        PacketType::OneRtt => "1-RTT",
        PacketType::ZeroRtt => "0-RTT",
    }
}

fn frame_name(f: &Frame) -> String {
    let s = format!("{f:?}");
    let head: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>();
    // CamelCase -> SCREAMING_SNAKE, as the RFC names frames.
    let mut out = String::new();
    for (i, c) in head.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The frames of a packet, deduplicated in order (`STREAM, ACK`).
fn frames_of(frames: &[Frame]) -> String {
    let mut names: Vec<String> = Vec::new();
    for f in frames {
        if matches!(f, Frame::Padding { .. }) {
            continue;
        }
        let n = frame_name(f);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.join(", ")
}

/// Why a packet was sent, in words: the trigger, else its most telling frame.
fn send_rule(
    p: &sim_core::wire::quic::QuicPacket,
    trigger: Option<SendTrigger>,
    pto: u32,
) -> String {
    let n = p.pn;
    match trigger {
        Some(SendTrigger::PtoProbe) => {
            return format!("packet {n} is a probe: the probe timeout expired (PTO count {pto}), one or two ack-eliciting packets are sent (RFC 9002 §6.2.4)")
        }
        Some(SendTrigger::RetransmitReordered) => {
            return format!("packet {n} carries data of a packet declared lost by the packet threshold; QUIC sends it in a new packet (RFC 9000 §13.3, RFC 9002 §6.1.1)")
        }
        Some(SendTrigger::RetransmitTimeout) => {
            return format!("packet {n} carries data of a packet declared lost by the time threshold (RFC 9000 §13.3, RFC 9002 §6.1.2)")
        }
        Some(SendTrigger::RetransmitCrypto) => {
            return format!("packet {n} retransmits handshake (CRYPTO) data (RFC 9002 §6.2.3)")
        }
        None => {}
    }
    let has = |pred: fn(&Frame) -> bool| p.frames.iter().any(pred);
    if has(|f| matches!(f, Frame::PathChallenge(_))) {
        format!("packet {n} carries PATH_CHALLENGE: the new path is validated before it is trusted (RFC 9000 §8.2.1)")
    } else if has(|f| matches!(f, Frame::PathResponse(_))) {
        format!("packet {n} carries PATH_RESPONSE echoing the challenge's data (RFC 9000 §8.2.2)")
    } else if has(|f| matches!(f, Frame::MaxData(_))) {
        format!("packet {n} carries MAX_DATA: the receiver raises the connection flow-control limit (RFC 9000 §4.1, §19.9)")
    } else if has(|f| matches!(f, Frame::MaxStreamData { .. })) {
        format!("packet {n} carries MAX_STREAM_DATA: the receiver raises a stream's flow-control limit (RFC 9000 §4.1, §19.10)")
    } else if has(|f| matches!(f, Frame::Crypto { .. })) {
        format!("packet {n} carries TLS handshake data in CRYPTO frames (RFC 9000 §7, RFC 9001 §4)")
    } else if has(|f| matches!(f, Frame::Stream { .. })) {
        format!("packet {n} carries new stream data; the congestion window allows it (RFC 9002 §7)")
    } else if has(|f| matches!(f, Frame::Ack { .. })) {
        format!("packet {n} acknowledges received packets (RFC 9000 §13.2)")
    } else {
        format!("packet {n} sent")
    }
}

fn loss_rule(pn: u64, trigger: LossTrigger, threshold: u64) -> String {
    match trigger {
        LossTrigger::ReorderingThreshold => format!(
            "packet {pn} declared lost: {threshold} later packets acknowledged (RFC 9002 §6.1.1)"
        ),
        LossTrigger::TimeThreshold => format!(
            "packet {pn} declared lost: sent more than 9/8 × max(smoothed RTT, latest RTT) before an acknowledged packet (RFC 9002 §6.1.2)"
        ),
        LossTrigger::PtoExpired => format!(
            "packet {pn} declared lost when the probe timeout expired (RFC 9002 §6.2.4)"
        ),
    }
}

fn cc_rule(old: Option<&str>, new: &str, trigger: Option<&str>) -> String {
    let from = old.unwrap_or("start");
    let why = match (from, new, trigger) {
        ("start", "slow_start", _) => "a connection starts in slow start with the initial window (RFC 9002 §7.2, §7.3.1)",
        (_, "recovery", _) => "a packet sent after the last reduction was lost: cwnd and ssthresh are reduced once per round trip and recovery starts (RFC 9002 §7.3.2)",
        ("recovery", _, _) => "a packet sent after recovery started was acknowledged: recovery ends (RFC 9002 §7.3.2)",
        ("slow_start", "congestion_avoidance", _) => "the congestion window reached ssthresh: slow start ends (RFC 9002 §7.3.1)",
        (_, "slow_start", Some("persistent_congestion")) => "persistent congestion: every packet over a period longer than the PTO threshold was lost, cwnd collapses to the minimum (RFC 9002 §7.6)",
        (_, "application_limited", _) => "the sender has less to send than the window allows: the window does not grow (RFC 9002 §7.8)",
        _ => "congestion controller state change (RFC 9002 §7)",
    };
    format!("congestion state {from} → {new}: {why}")
}

fn blocked_rule(blocked: bool, reason: BlockedReason, stream: Option<u64>) -> String {
    let what = match reason {
        BlockedReason::CongestionControl => {
            "the congestion window is full: bytes in flight ≥ cwnd (RFC 9002 §7)".to_string()
        }
        BlockedReason::Pacing => "pacing holds the next packet back (RFC 9002 §7.7)".to_string(),
        BlockedReason::AmplificationProtection => {
            "an unvalidated server may send at most 3× what it received (RFC 9000 §8.1)".to_string()
        }
        BlockedReason::ConnectionFlowControl => {
            "the peer's connection limit (MAX_DATA) is reached (RFC 9000 §4.1)".to_string()
        }
        BlockedReason::StreamFlowControl => format!(
            "the peer's limit for stream {} (MAX_STREAM_DATA) is reached (RFC 9000 §4.1)",
            stream.map(|s| s.to_string()).unwrap_or_default()
        ),
        BlockedReason::StreamId => {
            "no stream can be opened: MAX_STREAMS reached (RFC 9000 §4.6)".to_string()
        }
        BlockedReason::Application => "the application has nothing to send".to_string(),
    };
    if blocked {
        format!("sending blocked: {what}")
    } else {
        format!("sending unblocked (was: {what})")
    }
}

fn connection_rule(new: ConnectionState) -> &'static str {
    match new {
        ConnectionState::Attempted => "connection attempted: the first Initial packet (RFC 9000 §7)",
        ConnectionState::HandshakeStarted => "handshake started: Handshake packets exchanged (RFC 9001 §4)",
        ConnectionState::HandshakeComplete => "handshake complete: 1-RTT data may be sent (RFC 9001 §4.1.1)",
        ConnectionState::HandshakeConfirmed => "handshake confirmed: HANDSHAKE_DONE received or sent, Initial and Handshake keys discarded (RFC 9001 §4.1.2)",
        ConnectionState::Closed => "connection closed (idle timeout or CONNECTION_CLOSE, RFC 9000 §10)",
    }
}

/// Builds the steps from trace records.
#[derive(Default)]
struct Builder {
    tl: Timeline,
    state: [SenderState; 2],
    threshold: u64,
    /// (sending side, space, pn) -> index of its `sent` step.
    sent: BTreeMap<(usize, usize, u64), usize>,
    full: bool,
}

impl Builder {
    fn push(&mut self, t_s: f64, side: &str, kind: &str, label: String, rule: String) {
        if self.tl.steps.len() >= MAX_STEPS {
            self.tl.truncated = true;
            self.full = true;
            return;
        }
        self.tl.steps.push(Step {
            t_s,
            side: side.into(),
            kind: kind.into(),
            label,
            rule,
            arrive_s: None,
            dropped_s: None,
            state: self.state.clone(),
        });
    }

    fn record(&mut self, r: &TraceRecord) {
        if self.full {
            return;
        }
        let t = r.time.0 as f64 * 1e-9;
        match r.source {
            TraceSource::Network { flow } => {
                if flow.is_some_and(|f| f != 0) {
                    return;
                }
                match &r.event {
                    TraceEvent::LinkDrop {
                        link,
                        reason,
                        content,
                        ..
                    } => {
                        let reason = serde_json::to_value(reason)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        let link = link.clone().unwrap_or_else(|| "a node".into());
                        let mut label = format!("dropped on {link}");
                        if let DatagramContent::Quic(ps) = content {
                            let names: Vec<String> = ps
                                .iter()
                                .map(|p| format!("{} {}", ty_name(p.packet_type), p.packet_number))
                                .collect();
                            label = format!("{} dropped on {link}", names.join(" + "));
                            for p in ps {
                                for side in 0..2 {
                                    let key = (side, p.packet_type.space_index(), p.packet_number);
                                    if let Some(&i) = self.sent.get(&key) {
                                        if self.tl.steps[i].arrive_s.is_none()
                                            && self.tl.steps[i].dropped_s.is_none()
                                        {
                                            self.tl.steps[i].dropped_s = Some(t);
                                        }
                                    }
                                }
                            }
                        }
                        self.push(
                            t,
                            "network",
                            "dropped",
                            label,
                            format!("the network dropped the datagram ({reason}); the sender learns of it only through its loss detection (RFC 9002 §6)"),
                        );
                    }
                    TraceEvent::Handover { index, .. } => self.push(
                        t,
                        "network",
                        "link",
                        format!("handover {index}"),
                        "the client moved to new access links (handover): packets on the old path are lost".into(),
                    ),
                    TraceEvent::LinkChanged { link, .. } => self.push(
                        t,
                        "network",
                        "link",
                        format!("link {link} changed"),
                        "a scheduled link change took effect".into(),
                    ),
                    _ => {}
                }
            }
            TraceSource::Endpoint(id) => {
                if id.flow != 0 || id.connection != 0 {
                    return;
                }
                let s = side_index(id.vantage);
                let side = side_name(s);
                match &r.event {
                    TraceEvent::RecoveryParametersSet(p) => {
                        self.threshold = p.reordering_threshold;
                        if self.state[s].cwnd == 0 {
                            self.state[s].cwnd = p.initial_congestion_window;
                        }
                    }
                    TraceEvent::MetricsUpdated(m) => {
                        let st = &mut self.state[s];
                        if let Some(v) = m.congestion_window {
                            st.cwnd = v;
                        }
                        if let Some(v) = m.bytes_in_flight {
                            st.bytes_in_flight = v;
                        }
                        if let Some(v) = m.pto_count {
                            st.pto_count = v;
                        }
                        if let Some(v) = m.smoothed_rtt {
                            st.srtt_ms = v.0 as f64 * 1e-6;
                        }
                    }
                    TraceEvent::PacketSent {
                        packet: ProtocolPacket::Quic(p),
                        trigger,
                        ..
                    } => {
                        let label = format!("{} {}: {}", ty_name(p.ty), p.pn, frames_of(&p.frames));
                        let rule = send_rule(p, *trigger, self.state[s].pto_count);
                        let idx = self.tl.steps.len();
                        self.push(t, side, "sent", label, rule);
                        if !self.full {
                            self.sent.insert((s, p.ty.space_index(), p.pn), idx);
                        }
                    }
                    TraceEvent::PacketReceived {
                        packet: ProtocolPacket::Quic(p),
                        ..
                    } => {
                        if let Some(&i) = self.sent.get(&(1 - s, p.ty.space_index(), p.pn)) {
                            self.tl.steps[i].arrive_s = Some(t);
                        }
                        let label = format!("{} {} received: {}", ty_name(p.ty), p.pn, frames_of(&p.frames));
                        let rule = if p.frames.iter().any(|f| matches!(f, Frame::Ack { .. })) {
                            "an ACK arrives: newly acknowledged packets leave the bytes in flight, the RTT is sampled and the window grows (RFC 9002 §5.1, §7.3)".to_string()
                        } else {
                            format!("packet {} received; the receiver acknowledges ack-eliciting packets (RFC 9000 §13.2.1)", p.pn)
                        };
                        self.push(t, side, "received", label, rule);
                    }
                    TraceEvent::PacketLost { packet, trigger } => {
                        let pn = packet.number();
                        let label = match packet {
                            ProtocolPacket::Quic(p) => format!("{} {} lost", ty_name(p.ty), p.pn),
                            _ => format!("{pn} lost"),
                        };
                        self.push(t, side, "lost", label, loss_rule(pn, *trigger, self.threshold.max(1)));
                    }
                    TraceEvent::CongestionStateUpdated { old, new, trigger } => {
                        self.state[s].cc = new.to_string();
                        self.push(
                            t,
                            side,
                            "congestion",
                            format!("{} → {new}", old.unwrap_or("start")),
                            cc_rule(*old, new, *trigger),
                        );
                    }
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked,
                        reason,
                    } => {
                        if *reason == BlockedReason::Application {
                            return;
                        }
                        let kind = if *blocked { "blocked" } else { "unblocked" };
                        self.push(
                            t,
                            side,
                            kind,
                            format!("{kind}: {reason:?}"),
                            blocked_rule(*blocked, *reason, *stream),
                        );
                    }
                    TraceEvent::ConnectionStateUpdated { new, .. } => self.push(
                        t,
                        side,
                        "connection",
                        format!("{new:?}"),
                        connection_rule(*new).into(),
                    ),
                    TraceEvent::MigrationStateUpdated { new, .. } => self.push(
                        t,
                        side,
                        "migration",
                        new.to_string(),
                        "connection migration: the endpoint moves to a new path and validates it (RFC 9000 §9)".into(),
                    ),
                    _ => {}
                }
            }
        }
    }
}

struct Shared(Rc<RefCell<Builder>>);

impl Tracer for Shared {
    fn record(&mut self, record: &TraceRecord) {
        self.0.borrow_mut().record(record);
    }
}

/// The timeline of flow 0 in the first run of the scenario `toml` (the CLI's error for
/// an invalid one).
pub fn build(toml: &str) -> Result<Timeline, ConfigError> {
    let scenario = crate::gallery::parse(toml)?;
    let study = Study::new(
        scenario,
        &Overrides {
            seed: None,
            runs: None,
            series: false,
        },
    )?;
    let Some(job) = study.jobs().first() else {
        return Ok(Timeline::default());
    };
    let shared = Rc::new(RefCell::new(Builder::default()));
    let mut sim = Simulation::with_tracer(
        study.config(job),
        job.seed,
        Box::new(Shared(Rc::clone(&shared))),
    )?;
    loop {
        let out = sim.step(5_000);
        if out.is_finished() || shared.borrow().full {
            break;
        }
    }
    drop(sim);
    let b = shared.borrow();
    Ok(b.tl.clone())
}

/// The next step after `from` of `kind` (`None`: none).
pub fn next_of(tl: &Timeline, from: usize, kind: &str) -> Option<usize> {
    tl.steps
        .iter()
        .enumerate()
        .skip(from + 1)
        .find(|(_, s)| s.kind == kind)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_transfer_has_a_handshake_and_paired_arrows() {
        let tl = build(crate::gallery::SANDBOX).unwrap();
        assert!(!tl.steps.is_empty());
        // Time order.
        assert!(tl.steps.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        // The client's first packet is an Initial with CRYPTO data.
        let first = tl.steps.iter().find(|s| s.kind == "sent").unwrap();
        assert_eq!(first.side, "client");
        assert!(first.label.starts_with("Initial 0"), "{}", first.label);
        assert!(first.rule.contains("CRYPTO"), "{}", first.rule);
        // It arrives one propagation delay (20 ms) plus serialisation later.
        let a = first.arrive_s.unwrap() - first.t_s;
        assert!((0.020..0.025).contains(&a), "{a}");
        assert!(tl
            .steps
            .iter()
            .any(|s| s.kind == "connection" && s.rule.contains("RFC 9001 §4.1.1")));
    }

    #[test]
    fn a_loss_names_its_rule() {
        // Random loss on the link: some packet is declared lost, by a named rule.
        let text = crate::gallery::SANDBOX.replace(
            "delay = \"20ms\" }",
            "delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.03 } }",
        );
        let tl = build(&text).unwrap();
        let i = next_of(&tl, 0, "lost").expect("a loss");
        let s = &tl.steps[i];
        assert!(s.rule.contains("declared lost"), "{}", s.rule);
        assert!(s.rule.contains("RFC 9002 §6."), "{}", s.rule);
        // Every drop of a sent packet is marked on its arrow, and never also arrives.
        assert!(tl.steps.iter().any(|s| s.dropped_s.is_some()));
        assert!(tl
            .steps
            .iter()
            .all(|s| !(s.dropped_s.is_some() && s.arrive_s.is_some())));
        assert!(tl.steps.iter().any(|s| s.kind == "dropped"));
    }
}
