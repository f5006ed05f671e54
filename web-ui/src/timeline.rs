//! The packet timeline for teaching: any flow and connection of a scenario's first run,
//! traced through the engine's trace events ([`sim_core::trace`]), as a list of steps a
//! student walks one at a time. Each step is one event (a packet or segment sent,
//! received or declared lost, a datagram the network dropped, a timer that expired, a
//! congestion-state change, a block or unblock, a connection-state change), with the rule
//! that fired in words and the RFC section it comes from, and the sender state of both
//! endpoints after it. The rules are the protocol's own: QUIC cites RFC 9000/9001/9002,
//! TCP RFC 9293 (segments), RFC 5681 (congestion control, fast retransmit), RFC 6675
//! (SACK loss recovery), RFC 6298 (the retransmission timer) and RFC 8985 (RACK-TLP), SCTP
//! RFC 9260 (DATA and SACK gap blocks, T3-rtx, fast retransmit). The state shown is the
//! protocol's too: QUIC's RFC 9002 state (PTO count), TCP's (recovery state, ssthresh, RTO
//! and its backoff), SCTP's (ssthresh, error count). A sent packet also knows when the
//! peer received it, or that the network dropped it: the sequence diagram draws it as an
//! arrow. Steps are marked (`handshake`, `loss`, `timeout`, `migration`) for the view's
//! jumps ([`next_mark`]).
//!
//! Tracing changes neither the run nor its digest; the timeline is built on demand (a
//! separate traced run of the same job), so ordinary runs stay untraced. Long runs are
//! cut after [`MAX_STEPS`] steps.

use serde::{Deserialize, Serialize};
use sim_core::scenario::ConfigError;
use sim_core::study::{Overrides, Study};
use sim_core::trace::{
    BlockedReason, ConnectionState, DatagramContent, LossTrigger, ProtocolPacket, RunInfo,
    SendTrigger, TcpEvent, TcpLossRule, TcpSegment, TcpTimer, TraceEvent, TraceRecord, TraceSource,
    Tracer, Vantage,
};
use sim_core::wire::quic::{Frame, PacketType};
use sim_core::wire::sctp::{Chunk, SctpPacket};
use sim_core::Simulation;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

/// Steps kept at most (the rest of a long run is cut).
pub const MAX_STEPS: usize = 4000;

/// One endpoint's loss-recovery and congestion state, in its protocol's terms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SenderState {
    /// Congestion state (`slow_start`, `congestion_avoidance`, `recovery`, ...; TCP: its
    /// loss-recovery state `recovery` or `loss` while one is under way).
    pub cc: String,
    /// Consecutive timeouts: QUIC's PTO count (RFC 9002 §6.2), TCP's RTO backoff
    /// (RFC 6298 §5.5), SCTP's association error count (RFC 9260 §8.1).
    pub pto_count: u32,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes, once finite.
    pub ssthresh: Option<u64>,
    /// Bytes in flight (TCP: RFC 6675 `pipe`; SCTP: the flight size).
    pub bytes_in_flight: u64,
    /// Smoothed RTT, ms (0 before the first sample).
    pub srtt_ms: f64,
    /// TCP and SCTP: the retransmission timeout with its backoff, ms (RFC 6298 §2, §5.5;
    /// RFC 9260 §6.3.1, §6.3.3).
    pub rto_ms: Option<f64>,
}

/// One step of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Simulated time, seconds.
    pub t_s: f64,
    /// `client`, `server` or `network`.
    pub side: String,
    /// `sent`, `received`, `lost`, `dropped`, `timer`, `congestion`, `blocked`,
    /// `unblocked`, `connection`, `migration`, `link`.
    pub kind: String,
    /// What the view can jump to: `handshake`, `loss`, `timeout` (a PTO, RTO, tail loss
    /// probe or T3-rtx), `migration`; empty for the rest.
    pub mark: String,
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

/// A flow and connection the timeline can show.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// Flow index (`flows[i]`).
    pub flow: u32,
    /// Connection index within the flow (0 unless the flow opens several).
    pub connection: u32,
    /// `quic`, `tcp`, `sctp` or the application kind (`cbr_source`, ...).
    pub protocol: String,
}

/// A traced first run of one flow and connection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The flow shown.
    pub flow: u32,
    /// The connection shown.
    pub connection: u32,
    /// Its protocol (`quic`, `tcp`, `sctp`, ...).
    pub protocol: String,
    /// Every flow and connection of the run (connections seen while tracing).
    pub choices: Vec<Choice>,
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

/// Which protocol's rules a step is explained by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Proto {
    #[default]
    Quic,
    Tcp,
    Sctp,
}

impl Proto {
    fn of(kind: &str) -> Self {
        match kind {
            "tcp" => Proto::Tcp,
            "sctp" => Proto::Sctp,
            _ => Proto::Quic,
        }
    }
}

/// SCTP's congestion-state changes in words (RFC 9260 §7.2).
fn sctp_cc_rule(old: Option<&str>, new: &str) -> String {
    let from = old.unwrap_or("start");
    let why = match (from, new) {
        ("start", "slow_start") => "an association starts in slow start, cwnd = min(4 MTU, max(2 MTU, 4380 bytes)) (RFC 9260 §7.2.1)",
        (_, "recovery") => "fast retransmit: ssthresh = max(cwnd/2, 4 MTU), cwnd = ssthresh, and Fast Recovery until the highest outstanding TSN is acknowledged (RFC 9260 §7.2.4)",
        ("recovery", _) => "the highest TSN outstanding when Fast Recovery began was acknowledged: Fast Recovery ends (RFC 9260 §7.2.4)",
        ("slow_start", "congestion_avoidance") => "cwnd exceeds ssthresh: congestion avoidance, cwnd grows by at most one MTU per round trip (RFC 9260 §7.2.2)",
        (_, "slow_start") => "cwnd fell to ssthresh or below (after a T3-rtx expiry cwnd is one MTU): slow start again (RFC 9260 §7.2.1, §7.2.3)",
        _ => "congestion controller state change (RFC 9260 §7.2)",
    };
    format!("congestion state {from} → {new}: {why}")
}

/// TCP's congestion and loss-recovery state changes in words.
fn tcp_cc_rule(from: &str, new: &str) -> String {
    let why = match (from, new) {
        ("start", _) => "a connection starts in slow start with the initial window (RFC 5681 §3.1)",
        (_, "recovery") => "a loss found by ACKs: fast recovery reduces ssthresh and cwnd once, the window is shaped by Proportional Rate Reduction (RFC 6675 §5, RFC 6937)",
        (_, "loss") => "the retransmission timer expired: ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = one segment (the loss window), slow start again (RFC 5681 §3.1, RFC 6298 §5)",
        ("recovery" | "loss", _) => "the cumulative ACK passed the recovery point (the highest sequence sent when recovery began): recovery ends (RFC 6675 §5)",
        ("slow_start", "congestion_avoidance") => "cwnd reached ssthresh: slow start ends, congestion avoidance grows cwnd about one SMSS per round trip (RFC 5681 §3.1)",
        (_, "slow_start") => "cwnd is below ssthresh: slow start, cwnd grows by up to one SMSS per ACK (RFC 5681 §3.1)",
        _ => "congestion controller state change (RFC 5681 §3)",
    };
    format!("congestion state {from} → {new}: {why}")
}

/// A TCP segment in short: `SYN`, `data 0+1448`, `ACK 2896 SACK 4344-5792`.
fn tcp_label(g: &TcpSegment) -> String {
    let mut parts: Vec<String> = Vec::new();
    if g.syn {
        parts.push(if g.ack.is_some() { "SYN-ACK" } else { "SYN" }.into());
    }
    if g.fin {
        parts.push("FIN".into());
    }
    if g.len > 0 {
        parts.push(format!(
            "{}data {}+{}",
            if g.retransmission { "rtx " } else { "" },
            g.seq,
            g.len
        ));
    }
    if let Some(a) = g.ack.filter(|_| !g.syn) {
        parts.push(format!("ACK {a}"));
    }
    if !g.sack.is_empty() {
        let blocks: Vec<String> = g.sack.iter().map(|(a, b)| format!("{a}-{b}")).collect();
        parts.push(format!("SACK {}", blocks.join(",")));
    }
    parts.join(" ")
}

/// The words for the loss rule of a retransmitted segment.
fn tcp_rtx_rule(seq: u64, rule: Option<TcpLossRule>) -> String {
    match rule {
        Some(TcpLossRule::Timeout) => format!("retransmits the segment at {seq} after the retransmission timer expired, the earliest unacknowledged first (RFC 6298 §5.4), from a window of one segment (RFC 5681 §3.1)"),
        Some(TcpLossRule::SackIsLost) => format!("retransmits the segment at {seq}, which the SACK scoreboard declared lost; holes go out before new data (RFC 6675 §4 NextSeg, §5)"),
        Some(TcpLossRule::Rack) => format!("retransmits the segment at {seq}, which RACK declared lost (RFC 8985 §6.2); holes go out before new data (RFC 6675 §4 NextSeg)"),
        Some(TcpLossRule::DupAcks) => format!("fast retransmit of the segment at {seq} after three duplicate ACKs (RFC 5681 §3.2)"),
        Some(TcpLossRule::PartialAck) => format!("NewReno: a partial ACK in fast recovery retransmits the first unacknowledged segment, {seq} (RFC 6582 §3.2)"),
        Some(TcpLossRule::SynData) => format!("the SYN-ACK did not acknowledge the data sent with the SYN: it is sent again from {seq} (RFC 7413)"),
        None => format!("retransmits the segment at {seq} (RFC 6675 §5, RFC 6298 §5.4)"),
    }
}

fn tcp_loss_rule(rule: TcpLossRule) -> &'static str {
    match rule {
        TcpLossRule::SackIsLost => "declared lost by the SACK scoreboard: DupThresh (3) segments above it were SACKed, or more than (DupThresh − 1) × SMSS bytes (RFC 6675 §4 IsLost); loss recovery starts (RFC 6675 §5)",
        TcpLossRule::Rack => "declared lost by RACK: a segment sent after it was delivered, and it has been outstanding longer than the RACK round trip plus the reordering window (RFC 8985 §6.2)",
        TcpLossRule::DupAcks => "declared lost after three duplicate ACKs: fast retransmit (RFC 5681 §3.2)",
        TcpLossRule::PartialAck => "declared lost by a partial ACK during NewReno fast recovery (RFC 6582 §3.2)",
        TcpLossRule::Timeout => "declared lost because the retransmission timer expired: every segment not SACKed is retransmitted (RFC 6298 §5.4; RFC 6675 §5.1)",
        TcpLossRule::SynData => "the SYN-ACK did not acknowledge the SYN's data (TCP Fast Open, RFC 7413)",
    }
}

/// An SCTP packet in short: its chunks (`INIT`, `DATA 5-8`, `SACK 4 gaps 6-7`).
fn sctp_label(p: &SctpPacket) -> String {
    let mut parts: Vec<String> = Vec::new();
    let tsns: Vec<u64> = p
        .chunks
        .iter()
        .filter_map(|c| match c {
            Chunk::Data(d) => Some(d.tsn),
            _ => None,
        })
        .collect();
    for c in &p.chunks {
        match c {
            Chunk::Data(_) => {}
            Chunk::Sack(s) => {
                let mut t = format!("SACK {}", s.cum_tsn);
                if !s.gaps.is_empty() {
                    let g: Vec<String> = s.gaps.iter().map(|(a, b)| format!("{a}-{b}")).collect();
                    t.push_str(&format!(" gaps {}", g.join(",")));
                }
                parts.push(t);
            }
            other => parts.push(other.name().to_string()),
        }
    }
    if let (Some(a), Some(b)) = (tsns.first(), tsns.last()) {
        let d = if a == b {
            format!("DATA {a}")
        } else {
            format!("DATA {a}-{b}")
        };
        parts.push(d);
    }
    parts.join(", ")
}

fn sctp_has(p: &SctpPacket, f: fn(&Chunk) -> bool) -> bool {
    p.chunks.iter().any(f)
}

fn sctp_is_handshake(p: &SctpPacket) -> bool {
    sctp_has(p, |c| {
        matches!(
            c,
            Chunk::Init(_) | Chunk::InitAck { .. } | Chunk::CookieEcho { .. } | Chunk::CookieAck
        )
    })
}

/// Why an SCTP packet was sent, in words.
fn sctp_send_rule(p: &SctpPacket, trigger: Option<SendTrigger>) -> String {
    let n = p.number;
    if sctp_has(p, |c| matches!(c, Chunk::Init(_))) {
        return format!("packet {n}: INIT starts the four-way handshake: INIT, INIT ACK with a state cookie, COOKIE ECHO, COOKIE ACK (RFC 9260 §5.1)");
    }
    if sctp_has(p, |c| matches!(c, Chunk::InitAck { .. })) {
        return format!("packet {n}: INIT ACK answers the INIT with a state cookie; the server keeps no state until the cookie comes back (RFC 9260 §5.1)");
    }
    if sctp_has(p, |c| matches!(c, Chunk::CookieEcho { .. })) {
        return format!("packet {n}: COOKIE ECHO returns the state cookie; DATA may be bundled with it (RFC 9260 §5.1)");
    }
    if sctp_has(p, |c| matches!(c, Chunk::CookieAck)) {
        return format!("packet {n}: COOKIE ACK: the association is established (RFC 9260 §5.1)");
    }
    let data = sctp_has(p, |c| matches!(c, Chunk::Data(_)));
    match trigger {
        Some(SendTrigger::RetransmitReordered) if data => return format!("packet {n} fast-retransmits DATA reported missing by three SACKs, whatever cwnd allows for one packet (RFC 9260 §7.2.4)"),
        Some(SendTrigger::RetransmitTimeout) if data => return format!("packet {n} retransmits DATA after the T3-rtx timer expired: as many of the earliest outstanding chunks as fit one packet (RFC 9260 §6.3.3)"),
        Some(SendTrigger::RetransmitCrypto) => return format!("packet {n} repeats a handshake chunk after its timer expired (RFC 9260 §5.1)"),
        _ => {}
    }
    if data {
        return format!("packet {n} carries new DATA chunks: the flight size is below cwnd and the peer's receive window allows them (RFC 9260 §6.1)");
    }
    if sctp_has(p, |c| matches!(c, Chunk::Sack(s) if !s.gaps.is_empty())) {
        return format!("packet {n}: a SACK with gap ack blocks: the cumulative TSN ack is the last TSN received in sequence, each gap block a run of TSNs received above a hole; a receiver that sees a gap acknowledges at once (RFC 9260 §3.3.4, §6.2)");
    }
    if sctp_has(p, |c| matches!(c, Chunk::Sack(_))) {
        return format!("packet {n}: a SACK acknowledges received DATA by the cumulative TSN ack, at least every second packet or within the delayed-ack time (RFC 9260 §6.2)");
    }
    if sctp_has(p, |c| {
        matches!(
            c,
            Chunk::Shutdown { .. } | Chunk::ShutdownAck | Chunk::ShutdownComplete
        )
    }) {
        return format!("packet {n}: graceful shutdown of the association (RFC 9260 §9.2)");
    }
    format!("packet {n} sent")
}

/// Why an SCTP packet matters on arrival, in words.
fn sctp_receive_rule(p: &SctpPacket) -> String {
    if sctp_is_handshake(p) {
        return "a handshake chunk arrives (RFC 9260 §5.1)".into();
    }
    if sctp_has(p, |c| matches!(c, Chunk::Sack(s) if !s.gaps.is_empty())) {
        return "a SACK with gap ack blocks arrives: the gap-acked TSNs leave the flight size; every TSN still missing below the highest one acknowledged gets a miss indication, and the third makes it fast-retransmitted (RFC 9260 §6.2.1, §7.2.4)".into();
    }
    if sctp_has(p, |c| matches!(c, Chunk::Sack(_))) {
        return "a SACK arrives: the chunks up to its cumulative TSN ack leave the flight, the RTT is measured and cwnd grows (RFC 9260 §6.2.1, §6.3.1, §7.2.1-§7.2.2)".into();
    }
    if sctp_has(p, |c| matches!(c, Chunk::Data(_))) {
        return "DATA arrives: the receiver acknowledges with a SACK, at once when a TSN is missing (RFC 9260 §6.2)".into();
    }
    "packet received (RFC 9260 §6)".into()
}

/// A TCP segment as a drop or an arrival names it: (sending side, seq, len, ack, SYN,
/// FIN).
type TcpKey = (usize, u64, u64, Option<u64>, bool, bool);

/// Builds the steps from trace records.
#[derive(Default)]
struct Builder {
    tl: Timeline,
    /// The flow and connection shown.
    flow: u32,
    connection: u32,
    proto: Proto,
    /// Protocol (endpoint kind) of each flow, from the run's description.
    kinds: BTreeMap<u32, &'static str>,
    /// Flows and connections seen.
    seen: BTreeSet<(u32, u32)>,
    state: [SenderState; 2],
    threshold: u64,
    /// QUIC: (sending side, space, pn) -> index of its `sent` step; SCTP: space 0 and
    /// the packet number.
    sent: BTreeMap<(usize, usize, u64), usize>,
    /// TCP: sent segments not yet received or dropped, by (sending side, seq, len, ack,
    /// syn, fin), oldest first.
    tcp_sent: BTreeMap<TcpKey, VecDeque<usize>>,
    /// TCP: the rule of each side's last loss of a segment, by its sequence number.
    tcp_lost: [BTreeMap<u64, TcpLossRule>; 2],
    /// TCP: a tail loss probe is due on this side (the next data segment is it).
    tlp_due: [bool; 2],
    /// TCP: the last ACK number each side received.
    last_ack: [Option<u64>; 2],
    /// TCP: the congestion state shown last per side.
    tcp_cc: [String; 2],
    /// SCTP: a T3-rtx expiry step was pushed at this time for this side.
    t3_at: [Option<f64>; 2],
    /// [`MAX_STEPS`] reached: later records only list connections.
    full: bool,
}

impl Builder {
    fn push(&mut self, t_s: f64, side: &str, kind: &str, mark: &str, label: String, rule: String) {
        if self.tl.steps.len() >= MAX_STEPS {
            self.tl.truncated = true;
            self.full = true;
            return;
        }
        self.tl.steps.push(Step {
            t_s,
            side: side.into(),
            kind: kind.into(),
            mark: mark.into(),
            label,
            rule,
            arrive_s: None,
            dropped_s: None,
            state: self.state.clone(),
        });
    }

    /// Folds a loss into the previous step when it is the same side's loss at the same
    /// instant by the same rule (a timeout marks a whole window lost): `true` if folded.
    fn fold_loss(&mut self, t_s: f64, side: &str, rule: &str, what: &str) -> bool {
        if let Some(last) = self.tl.steps.last_mut() {
            if last.kind == "lost" && last.side == side && last.t_s == t_s && last.rule == rule {
                last.label = format!("{}, {what}", last.label.trim_end_matches(" lost"));
                last.label.push_str(" lost");
                last.state = self.state.clone();
                return true;
            }
        }
        false
    }

    fn begin(&mut self, info: &RunInfo) {
        for e in &info.endpoints {
            self.kinds.entry(e.id.flow).or_insert(e.kind);
            self.seen.insert((e.id.flow, 0));
        }
        self.proto = Proto::of(self.kinds.get(&self.flow).copied().unwrap_or("quic"));
    }

    fn record(&mut self, r: &TraceRecord) {
        if let TraceSource::Endpoint(id) = r.source {
            self.seen.insert((id.flow, id.connection));
        }
        if self.full {
            return;
        }
        let t = r.time.0 as f64 * 1e-9;
        match r.source {
            TraceSource::Network { flow } => {
                if flow.is_some_and(|f| f != self.flow) {
                    return;
                }
                self.network(t, &r.event);
            }
            TraceSource::Endpoint(id) => {
                if id.flow != self.flow || id.connection != self.connection {
                    return;
                }
                let s = side_index(id.vantage);
                match &r.event {
                    TraceEvent::Tcp(e) => self.tcp(t, s, e),
                    TraceEvent::SenderProbe(_) => {}
                    e => self.endpoint(t, s, e),
                }
            }
        }
    }

    fn network(&mut self, t: f64, event: &TraceEvent) {
        match event {
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
                let mut ours = false;
                match content {
                    DatagramContent::Quic(ps) => {
                        let names: Vec<String> = ps
                            .iter()
                            .map(|p| format!("{} {}", ty_name(p.packet_type), p.packet_number))
                            .collect();
                        label = format!("{} dropped on {link}", names.join(" + "));
                        for p in ps {
                            for side in 0..2 {
                                let key = (side, p.packet_type.space_index(), p.packet_number);
                                ours |= self.mark_dropped(key, t);
                            }
                        }
                    }
                    DatagramContent::Sctp { number, chunks } => {
                        label =
                            format!("packet {number} ({}) dropped on {link}", chunks.join(", "));
                        for side in 0..2 {
                            ours |= self.mark_dropped((side, 0, *number), t);
                        }
                    }
                    DatagramContent::Tcp(g) => {
                        let seg = TcpSegment {
                            seq: g.seq,
                            len: g.len,
                            ack: g.ack,
                            syn: g.syn,
                            fin: g.fin,
                            window: 0,
                            sack: Vec::new(),
                            retransmission: false,
                        };
                        label = format!("{} dropped on {link}", tcp_label(&seg));
                        for side in 0..2 {
                            let key = (side, g.seq, g.len, g.ack, g.syn, g.fin);
                            if let Some(i) = self.tcp_sent.get_mut(&key).and_then(|q| q.pop_front())
                            {
                                self.tl.steps[i].dropped_s = Some(t);
                                ours = true;
                                break;
                            }
                        }
                    }
                    _ => {}
                }
                // A flow with several connections: only the drops of the one shown.
                if !ours && self.flow_connections() > 1 {
                    return;
                }
                let detection = match self.proto {
                    Proto::Quic => "(RFC 9002 §6)",
                    Proto::Tcp => "by duplicate ACKs, SACK, RACK or its retransmission timer (RFC 5681 §3.2, RFC 6675 §5, RFC 8985 §6, RFC 6298 §5)",
                    Proto::Sctp => "by the gap ack blocks of the SACKs or the T3-rtx timer (RFC 9260 §7.2.4, §6.3.3)",
                };
                self.push(
                    t,
                    "network",
                    "dropped",
                    "",
                    label,
                    format!("the network dropped the datagram ({reason}); the sender learns of it only through its loss detection {detection}"),
                );
            }
            TraceEvent::Handover { index, .. } => {
                let rule = match self.proto {
                    Proto::Quic => "the client moved to new access links (handover): packets on the old links are lost, and the connection migrates to the new path, which it validates first (RFC 9000 §9)",
                    _ => "the client moved to new access links (handover): packets on the old links are lost",
                };
                self.push(
                    t,
                    "network",
                    "link",
                    "migration",
                    format!("handover {index}"),
                    rule.into(),
                )
            }
            TraceEvent::LinkChanged { link, .. } => self.push(
                t,
                "network",
                "link",
                "",
                format!("link {link} changed"),
                "a scheduled link change took effect".into(),
            ),
            _ => {}
        }
    }

    fn flow_connections(&self) -> usize {
        self.seen
            .range((self.flow, 0)..=(self.flow, u32::MAX))
            .count()
    }

    /// Marks the sent step `key` dropped at `t` if it is still on its way.
    fn mark_dropped(&mut self, key: (usize, usize, u64), t: f64) -> bool {
        if let Some(&i) = self.sent.get(&key) {
            let st = &mut self.tl.steps[i];
            if st.arrive_s.is_none() && st.dropped_s.is_none() && st.t_s <= t {
                st.dropped_s = Some(t);
                return true;
            }
        }
        false
    }

    /// An event of QUIC, SCTP or any transport's common kind.
    fn endpoint(&mut self, t: f64, s: usize, event: &TraceEvent) {
        let side = side_name(s);
        let proto = self.proto;
        match event {
            TraceEvent::RecoveryParametersSet(p) => {
                self.threshold = p.reordering_threshold;
                if self.state[s].cwnd == 0 {
                    self.state[s].cwnd = p.initial_congestion_window;
                }
            }
            TraceEvent::RtoUpdated { rto } => {
                self.state[s].rto_ms = Some(rto.0 as f64 * 1e-6);
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
                if m.ssthresh.is_some() {
                    st.ssthresh = m.ssthresh;
                }
            }
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(p),
                trigger,
                ..
            } => {
                let label = format!("{} {}: {}", ty_name(p.ty), p.pn, frames_of(&p.frames));
                let rule = if p.ty == PacketType::ZeroRtt {
                    format!("packet {} is 0-RTT: a resumed connection sends application data in its first flight, protected with keys from the earlier session's ticket, before the handshake completes (RFC 9001 §4.6)", p.pn)
                } else {
                    send_rule(p, *trigger, self.state[s].pto_count)
                };
                let mark = quic_mark(p, *trigger);
                let idx = self.tl.steps.len();
                self.push(t, side, "sent", mark, label, rule);
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
                let rule = if p.ty == PacketType::ZeroRtt {
                    format!("0-RTT packet {} received: the server accepted the resumed session's early data and processes it before the handshake completes (RFC 9001 §4.6)", p.pn)
                } else if p.frames.iter().any(|f| matches!(f, Frame::Ack { .. })) {
                    "an ACK arrives: newly acknowledged packets leave the bytes in flight, the RTT is sampled and the window grows (RFC 9002 §5.1, §7.3)".to_string()
                } else {
                    format!("packet {} received; the receiver acknowledges ack-eliciting packets (RFC 9000 §13.2.1)", p.pn)
                };
                let mark = quic_mark(p, None);
                self.push(t, side, "received", mark, label, rule);
            }
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Sctp(p),
                trigger,
                ..
            } => {
                let mark = if sctp_is_handshake(p) {
                    "handshake"
                } else {
                    ""
                };
                let idx = self.tl.steps.len();
                self.push(t, side, "sent", mark, sctp_label(p), sctp_send_rule(p, *trigger));
                if !self.full {
                    self.sent.insert((s, 0, p.number), idx);
                }
            }
            TraceEvent::PacketReceived {
                packet: ProtocolPacket::Sctp(p),
                ..
            } => {
                if let Some(&i) = self.sent.get(&(1 - s, 0, p.number)) {
                    self.tl.steps[i].arrive_s = Some(t);
                }
                let mark = if sctp_is_handshake(p) {
                    "handshake"
                } else {
                    ""
                };
                self.push(
                    t,
                    side,
                    "received",
                    mark,
                    format!("{} received", sctp_label(p)),
                    sctp_receive_rule(p),
                );
            }
            TraceEvent::PacketLost {
                packet: ProtocolPacket::Sctp(p),
                trigger,
            } => {
                let tsn = p.number;
                if *trigger == LossTrigger::PtoExpired && self.t3_at[s] != Some(t) {
                    self.t3_at[s] = Some(t);
                    self.push(
                        t,
                        side,
                        "timer",
                        "timeout",
                        "T3-rtx expired".into(),
                        "the T3-rtx timer expired: no SACK acknowledged the earliest outstanding DATA within the RTO; ssthresh = max(cwnd/2, 4 MTU), cwnd = 1 MTU (RFC 9260 §7.2.3), the RTO doubles and every outstanding TSN is marked for retransmission (RFC 9260 §6.3.3)".into(),
                    );
                }
                let rule = match trigger {
                    LossTrigger::PtoExpired => "marked for retransmission by the T3-rtx expiry (RFC 9260 §6.3.3)".to_string(),
                    _ => "marked for fast retransmit: the third SACK reported it missing while later TSNs were gap-acked (RFC 9260 §7.2.4)".to_string(),
                };
                let what = format!("TSN {tsn}");
                if !self.fold_loss(t, side, &rule, &what) {
                    self.push(t, side, "lost", "loss", format!("{what} lost"), rule);
                }
            }
            TraceEvent::PacketLost { packet, trigger } => {
                let pn = packet.number();
                let label = match packet {
                    ProtocolPacket::Quic(p) => format!("{} {} lost", ty_name(p.ty), p.pn),
                    _ => format!("{pn} lost"),
                };
                self.push(t, side, "lost", "loss", label, loss_rule(pn, *trigger, self.threshold.max(1)));
            }
            TraceEvent::CongestionStateUpdated { old, new, trigger } => {
                self.state[s].cc = new.to_string();
                let rule = match proto {
                    Proto::Sctp => sctp_cc_rule(*old, new),
                    _ => cc_rule(*old, new, *trigger),
                };
                self.push(
                    t,
                    side,
                    "congestion",
                    "",
                    format!("{} → {new}", old.unwrap_or("start")),
                    rule,
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
                    "",
                    format!("{kind}: {reason:?}"),
                    blocked_rule(*blocked, *reason, *stream),
                );
            }
            TraceEvent::ConnectionStateUpdated { new, .. } => {
                let rule = match proto {
                    Proto::Sctp => sctp_connection_rule(*new).to_string(),
                    _ => connection_rule(*new).to_string(),
                };
                let mark = if matches!(new, ConnectionState::Closed) {
                    ""
                } else {
                    "handshake"
                };
                self.push(t, side, "connection", mark, format!("{new:?}"), rule)
            }
            TraceEvent::MigrationStateUpdated { new, .. } => self.push(
                t,
                side,
                "migration",
                "migration",
                new.to_string(),
                "connection migration: the endpoint moves to a new path and validates it (RFC 9000 §9)".into(),
            ),
            _ => {}
        }
    }

    /// A TCP event.
    fn tcp(&mut self, t: f64, s: usize, e: &TcpEvent) {
        let side = side_name(s);
        match e {
            TcpEvent::State(st) => {
                let now = &mut self.state[s];
                now.cwnd = st.cwnd;
                now.ssthresh = st.ssthresh;
                now.bytes_in_flight = st.pipe;
                now.srtt_ms = st.srtt.0 as f64 * 1e-6;
                now.rto_ms = Some(st.rto.0 as f64 * 1e-6);
                now.pto_count = st.backoff;
                let cc = if st.recovery == "open" {
                    st.cc
                } else {
                    st.recovery
                };
                now.cc = cc.to_string();
                if self.tcp_cc[s] != cc {
                    let from = if self.tcp_cc[s].is_empty() {
                        "start".to_string()
                    } else {
                        self.tcp_cc[s].clone()
                    };
                    self.tcp_cc[s] = cc.to_string();
                    // The first state of a side is the start: no step for it.
                    if from != "start" {
                        self.push(
                            t,
                            side,
                            "congestion",
                            "",
                            format!("{from} → {cc}"),
                            tcp_cc_rule(&from, cc),
                        );
                    }
                }
            }
            TcpEvent::SegmentSent(g) => {
                let mut mark = if g.syn { "handshake" } else { "" };
                let rule = if g.syn && g.ack.is_none() {
                    if g.len > 0 {
                        format!("the client opens the connection with a SYN carrying {} bytes of data and its Fast Open cookie, so data flows in the first round trip (RFC 7413; handshake RFC 9293 §3.5)", g.len)
                    } else {
                        "the client opens the connection: SYN, then SYN-ACK, then ACK, the three-way handshake (RFC 9293 §3.5)".to_string()
                    }
                } else if g.syn {
                    "the server answers the SYN with its SYN-ACK, acknowledging the client's initial sequence number (RFC 9293 §3.5)".to_string()
                } else if g.fin {
                    "FIN: this side has sent everything and closes its half of the connection (RFC 9293 §3.6)".to_string()
                } else if g.len > 0 && self.tlp_due[s] {
                    self.tlp_due[s] = false;
                    mark = "timeout";
                    format!("tail loss probe: one segment ({}) goes out whatever cwnd allows, so that an ACK (or its SACK blocks) reveals a tail loss without waiting for the RTO (RFC 8985 §7.3)", if g.retransmission { "the last segment again" } else { "new data" })
                } else if g.len > 0 && g.retransmission {
                    tcp_rtx_rule(g.seq, self.tcp_lost[s].get(&g.seq).copied())
                } else if g.len > 0 {
                    format!("new data at {}: the bytes in flight (pipe) are below cwnd and the peer's window allows it (RFC 5681 §3.1, RFC 6675 §5)", g.seq)
                } else if !g.sack.is_empty() {
                    "a duplicate ACK with SACK blocks: out-of-order data arrived, and the blocks tell the sender which bytes above the cumulative ACK are held, the most recent first (RFC 5681 §4.2, RFC 2018 §4)".to_string()
                } else {
                    "acknowledges received data: at least every second full-sized segment, else within the delayed-ACK time (RFC 5681 §4.2)".to_string()
                };
                let idx = self.tl.steps.len();
                let label = if mark == "timeout" {
                    format!("TLP probe: {}", tcp_label(g))
                } else {
                    tcp_label(g)
                };
                self.push(t, side, "sent", mark, label, rule);
                if !self.full {
                    self.tcp_sent
                        .entry((s, g.seq, g.len, g.ack, g.syn, g.fin))
                        .or_default()
                        .push_back(idx);
                }
            }
            TcpEvent::SegmentReceived(g) => {
                let key = (1 - s, g.seq, g.len, g.ack, g.syn, g.fin);
                if let Some(i) = self.tcp_sent.get_mut(&key).and_then(|q| q.pop_front()) {
                    self.tl.steps[i].arrive_s = Some(t);
                }
                let dup =
                    g.len == 0 && !g.syn && !g.fin && g.ack.is_some() && g.ack == self.last_ack[s];
                if g.ack.is_some() {
                    self.last_ack[s] = g.ack;
                }
                let mark = if g.syn { "handshake" } else { "" };
                let rule = if g.syn && g.ack.is_none() {
                    "a SYN arrives: the server answers with SYN-ACK (RFC 9293 §3.5)".to_string()
                } else if g.syn {
                    "the SYN-ACK arrives: the client is connected and acknowledges it (RFC 9293 §3.5)".to_string()
                } else if g.fin {
                    "a FIN arrives: the peer has sent everything (RFC 9293 §3.6)".to_string()
                } else if g.len > 0 {
                    "data arrives: the receiver acknowledges it, at once when it is out of order or fills a hole (RFC 5681 §4.2)".to_string()
                } else if !g.sack.is_empty() {
                    "an ACK with SACK blocks arrives: the sender marks the SACKed bytes on its scoreboard, and loss detection runs over the holes below them (RFC 6675 §5, RFC 8985 §6.2)".to_string()
                } else if dup {
                    "a duplicate ACK: the cumulative ACK did not advance, the receiver got a segment out of order (RFC 5681 §2, §3.2)".to_string()
                } else {
                    "an ACK arrives: acknowledged bytes leave the flight, the RTT is sampled (RFC 6298 §3) and cwnd grows in slow start or congestion avoidance (RFC 5681 §3.1)".to_string()
                };
                self.push(
                    t,
                    side,
                    "received",
                    mark,
                    format!("{} received", tcp_label(g)),
                    rule,
                );
            }
            TcpEvent::Lost { seq, len, rule } => {
                self.tcp_lost[s].insert(*seq, *rule);
                let words = tcp_loss_rule(*rule).to_string();
                let what = format!("{seq}+{len}");
                if !self.fold_loss(t, side, &words, &what) {
                    self.push(
                        t,
                        side,
                        "lost",
                        "loss",
                        format!("segment {what} lost"),
                        words,
                    );
                }
            }
            TcpEvent::TimerExpired(timer) => {
                let (label, rule) = match timer {
                    TcpTimer::Rto => (
                        match self.state[s].rto_ms {
                            Some(r) => format!("RTO expired ({r:.0} ms)"),
                            None => "RTO expired".to_string(),
                        },
                        "the retransmission timer expired: the earliest unacknowledged segment is retransmitted, the RTO doubles (back off) and the timer restarts (RFC 6298 §5.4-§5.6); ssthresh = max(FlightSize / 2, 2 SMSS) and cwnd = one segment (RFC 5681 §3.1)".to_string(),
                    ),
                    TcpTimer::Tlp => {
                        self.tlp_due[s] = true;
                        (
                            "TLP timer expired".to_string(),
                            "the tail loss probe timer (about two round trips without an ACK) expired: one probe segment goes out to trigger loss detection by ACKs instead of waiting for the RTO (RFC 8985 §7.2, §7.3)".to_string(),
                        )
                    }
                    TcpTimer::Reordering => (
                        "RACK reordering timer expired".to_string(),
                        "RACK's reordering timer expired: segments that have now waited longer than the RACK round trip plus the reordering window are declared lost (RFC 8985 §6.3)".to_string(),
                    ),
                };
                let mark = if *timer == TcpTimer::Reordering {
                    ""
                } else {
                    "timeout"
                };
                self.push(t, side, "timer", mark, label, rule);
            }
        }
    }
}

/// What a QUIC packet is marked for the jumps: the handshake (Initial, Handshake and
/// 0-RTT packets), a timeout (a PTO probe) or a migration (path validation).
fn quic_mark(p: &sim_core::wire::quic::QuicPacket, trigger: Option<SendTrigger>) -> &'static str {
    if trigger == Some(SendTrigger::PtoProbe) {
        return "timeout";
    }
    if matches!(
        p.ty,
        PacketType::Initial | PacketType::Handshake | PacketType::ZeroRtt
    ) {
        return "handshake";
    }
    if p.frames
        .iter()
        .any(|f| matches!(f, Frame::PathChallenge(_) | Frame::PathResponse(_)))
    {
        return "migration";
    }
    ""
}

fn sctp_connection_rule(new: ConnectionState) -> &'static str {
    match new {
        ConnectionState::Closed => "association closed (RFC 9260 §9)",
        ConnectionState::HandshakeComplete | ConnectionState::HandshakeConfirmed => {
            "association established: DATA may flow (RFC 9260 §5.1)"
        }
        _ => "association setup: the four-way handshake (RFC 9260 §5.1)",
    }
}

struct Shared(Rc<RefCell<Builder>>);

impl Tracer for Shared {
    fn begin(&mut self, info: &RunInfo) {
        self.0.borrow_mut().begin(info);
    }
    fn record(&mut self, record: &TraceRecord) {
        self.0.borrow_mut().record(record);
    }
}

/// Events the run goes on for after the timeline is full, to list the connections that
/// start later (the chooser); a longer run is cut there.
const EXTRA_EVENTS: u64 = 2_000_000;

/// The timeline of flow 0, connection 0 in the first run of the scenario `toml` (the
/// CLI's error for an invalid one).
pub fn build(toml: &str) -> Result<Timeline, ConfigError> {
    build_for(toml, 0, 0)
}

/// The timeline of flow `flow`, connection `connection` in the first run of the scenario
/// `toml` (the CLI's error for an invalid one). A flow or connection that does not exist
/// has no steps; [`Timeline::choices`] lists those that do.
pub fn build_for(toml: &str, flow: u32, connection: u32) -> Result<Timeline, ConfigError> {
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
    let shared = Rc::new(RefCell::new(Builder {
        flow,
        connection,
        ..Builder::default()
    }));
    let mut sim = Simulation::with_tracer(
        study.config(job),
        job.seed,
        Box::new(Shared(Rc::clone(&shared))),
    )?;
    let mut extra = 0u64;
    loop {
        let out = sim.step(5_000);
        if out.is_finished() {
            break;
        }
        if shared.borrow().full {
            extra += 5_000;
            if extra >= EXTRA_EVENTS {
                break;
            }
        }
    }
    drop(sim);
    let b = shared.borrow();
    let mut tl = b.tl.clone();
    tl.flow = flow;
    tl.connection = connection;
    tl.protocol = b.kinds.get(&flow).copied().unwrap_or("").to_string();
    tl.choices = b
        .seen
        .iter()
        .map(|&(f, c)| Choice {
            flow: f,
            connection: c,
            protocol: b.kinds.get(&f).copied().unwrap_or("").to_string(),
        })
        .collect();
    Ok(tl)
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

/// The next step after `from` marked `mark` (`handshake`, `loss`, `timeout`,
/// `migration`), wrapping around to the first one (`None`: no step has it).
pub fn next_mark(tl: &Timeline, from: usize, mark: &str) -> Option<usize> {
    let has = |(_, s): &(usize, &Step)| s.mark == mark;
    let mut it = tl.steps.iter().enumerate();
    it.clone()
        .skip(from + 1)
        .find(has)
        .or_else(|| it.find(has))
        .map(|(i, _)| i)
}

/// Which labels of the sequence diagram to draw, so that no two overprint: label `i`
/// spans `[x0, x1]` horizontally (its estimated width) with its baseline at `y`
/// (`boxes[i] = [x0, x1, y]`); it is drawn only if no label already drawn overlaps it
/// horizontally within `line` (one text line) vertically. The current step `cur` (an
/// index into `boxes`) always gets its label and is placed first; then earlier ones come
/// before later ones.
pub fn label_visible(boxes: &[[f64; 3]], line: f64, cur: Option<usize>) -> Vec<bool> {
    let n = boxes.len();
    let mut show = vec![false; n];
    let mut drawn: Vec<[f64; 3]> = Vec::new();
    let order = cur
        .filter(|&c| c < n)
        .into_iter()
        .chain((0..n).filter(|&i| Some(i) != cur));
    for i in order {
        let [a0, a1, ay] = boxes[i];
        let free = drawn
            .iter()
            .all(|&[b0, b1, by]| a1 <= b0 || b1 <= a0 || (ay - by).abs() >= line);
        if free {
            show[i] = true;
            drawn.push(boxes[i]);
        }
    }
    show
}

/// `label` cut to `max` characters, with an ellipsis when cut.
pub fn ellipsize(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
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

    fn two_hosts(transport: &str, link: &str, bytes: &str) -> String {
        format!(
            "name = \"t\"\nseed = 1\n[topology]\nkind = \"two_hosts\"\nlink = {{ {link} }}\n\
             [[flows]]\ntransport = \"{transport}\"\nworkload = {{ kind = \"bulk\", bytes = \"{bytes}\" }}\n"
        )
    }

    fn find(tl: &Timeline, f: impl Fn(&Step) -> bool) -> Option<&Step> {
        tl.steps.iter().find(|s| f(s))
    }

    #[test]
    fn a_lossy_tcp_transfer_has_segments_sack_and_loss_rules() {
        let text = two_hosts(
            "tcp",
            "rate = \"10Mbps\", delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.03 }",
            "300KB",
        );
        let tl = build(&text).unwrap();
        assert_eq!(tl.protocol, "tcp");
        assert!(tl.steps.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        // The three-way handshake, cited from RFC 9293, marked for the jump.
        let syn = find(&tl, |s| s.kind == "sent").unwrap();
        assert_eq!(syn.label, "SYN");
        assert_eq!(syn.mark, "handshake");
        assert!(syn.rule.contains("RFC 9293 §3.5"), "{}", syn.rule);
        assert!(syn.arrive_s.is_some() || syn.dropped_s.is_some());
        // A loss names its rule: SACK (RFC 6675) or RACK (RFC 8985), never RFC 9002.
        let lost = find(&tl, |s| s.kind == "lost").expect("a loss");
        assert_eq!(lost.mark, "loss");
        assert!(
            lost.rule.contains("RFC 6675 §4") || lost.rule.contains("RFC 8985 §6.2"),
            "{}",
            lost.rule
        );
        assert!(tl.steps.iter().all(|s| !s.rule.contains("RFC 9002")));
        // The receiver reports the holes in SACK blocks.
        let sack = find(&tl, |s| s.kind == "sent" && s.label.contains("SACK ")).unwrap();
        assert!(sack.rule.contains("RFC 2018 §4"), "{}", sack.rule);
        // A retransmission says why.
        let rtx = find(&tl, |s| s.kind == "sent" && s.label.contains("rtx ")).unwrap();
        assert!(rtx.rule.contains("RFC"), "{}", rtx.rule);
        // The sender's state is TCP's: an RTO and ssthresh once reduced.
        let after = &tl.steps[next_of(&tl, 0, "lost").unwrap()..];
        assert!(after.iter().any(|s| s.state[1].ssthresh.is_some()));
        assert!(tl
            .steps
            .iter()
            .any(|s| s.state[1].rto_ms.is_some_and(|r| r > 0.0)));
        assert!(tl
            .steps
            .iter()
            .any(|s| s.kind == "congestion" && s.rule.contains("RFC 6675 §5")));
        // Drops are marked on their arrows.
        assert!(tl.steps.iter().any(|s| s.dropped_s.is_some()));
        assert!(tl
            .steps
            .iter()
            .all(|s| !(s.dropped_s.is_some() && s.arrive_s.is_some())));
    }

    #[test]
    fn a_tcp_outage_has_an_rto_citing_rfc_6298() {
        // Heavy loss: some window is lost whole and only the retransmission timer helps.
        let text = two_hosts(
            "tcp",
            "rate = \"10Mbps\", delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.25 }",
            "100KB",
        );
        let tl = build(&text).unwrap();
        let i = next_mark(&tl, 0, "timeout").expect("a timeout");
        let rto = tl
            .steps
            .iter()
            .find(|s| s.kind == "timer" && s.label.starts_with("RTO"))
            .expect("an RTO");
        assert_eq!(rto.mark, "timeout");
        assert!(rto.rule.contains("RFC 6298 §5.4"), "{}", rto.rule);
        assert!(tl.steps[i].mark == "timeout");
        assert!(tl
            .steps
            .iter()
            .any(|s| s.kind == "lost" && s.rule.contains("RFC 6298 §5.4")));
    }

    #[test]
    fn a_lossy_sctp_transfer_has_gap_blocks_and_rfc_9260_rules() {
        let text = two_hosts(
            "sctp",
            "rate = \"10Mbps\", delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.05 }",
            "300KB",
        );
        let tl = build(&text).unwrap();
        assert_eq!(tl.protocol, "sctp");
        let init = find(&tl, |s| s.kind == "sent").unwrap();
        assert!(init.label.contains("INIT"), "{}", init.label);
        assert!(init.rule.contains("RFC 9260 §5.1"), "{}", init.rule);
        assert_eq!(init.mark, "handshake");
        let gaps =
            find(&tl, |s| s.kind == "sent" && s.label.contains(" gaps ")).expect("gap blocks");
        assert!(gaps.rule.contains("RFC 9260 §3.3.4"), "{}", gaps.rule);
        let lost = find(&tl, |s| s.kind == "lost").expect("a loss");
        assert!(
            lost.rule.contains("RFC 9260 §7.2.4") || lost.rule.contains("RFC 9260 §6.3.3"),
            "{}",
            lost.rule
        );
        assert!(tl.steps.iter().all(|s| !s.rule.contains("RFC 9002")));
        assert!(tl
            .steps
            .iter()
            .any(|s| s.kind == "sent" && s.label.contains("DATA") && s.arrive_s.is_some()));
        assert!(tl.steps.iter().any(|s| s.dropped_s.is_some()));
    }

    #[test]
    fn an_sctp_blackout_expires_t3_rtx() {
        let text = two_hosts(
            "sctp",
            "rate = \"10Mbps\", delay = \"20ms\", loss = { model = \"bernoulli\", p = 0.25 }",
            "100KB",
        );
        let tl = build(&text).unwrap();
        let t3 = find(&tl, |s| s.kind == "timer").expect("a T3-rtx expiry");
        assert_eq!(t3.label, "T3-rtx expired");
        assert_eq!(t3.mark, "timeout");
        assert!(t3.rule.contains("RFC 9260 §6.3.3"), "{}", t3.rule);
        // SCTP's own state: its RTO, doubled by the expiry (RFC 9260 §6.3.3).
        let i = tl.steps.iter().position(|s| s.kind == "timer").unwrap();
        let rto = |s: &Step| s.state[1].rto_ms.expect("an RTO");
        let later = tl.steps[i..]
            .iter()
            .find(|s| rto(s) != rto(&tl.steps[i]))
            .unwrap();
        assert!(
            rto(later) >= 2.0 * rto(&tl.steps[i]) - 1.0,
            "{} {}",
            rto(later),
            rto(&tl.steps[i])
        );
    }

    #[test]
    fn every_connection_can_be_chosen_and_a_resumed_one_sends_0rtt() {
        let text = include_str!("../../scenarios/examples/connection-lifecycle.toml");
        let tl = build(text).unwrap();
        let conns: Vec<u32> = tl
            .choices
            .iter()
            .filter(|c| c.flow == 0)
            .map(|c| c.connection)
            .collect();
        assert_eq!(conns, vec![0, 1, 2], "{:?}", tl.choices);
        assert!(tl.choices.iter().all(|c| c.protocol == "quic"));
        let last = build_for(text, 0, 2).unwrap();
        assert_eq!(last.connection, 2);
        assert!(last.steps[0].t_s > tl.steps[0].t_s, "a later connection");
        let zero = find(&last, |s| s.kind == "sent" && s.label.starts_with("0-RTT"))
            .expect("0-RTT in the resumed connection");
        assert!(zero.rule.contains("RFC 9001 §4.6"), "{}", zero.rule);
        assert_eq!(zero.mark, "handshake");
        // A flow that does not exist has no steps.
        assert!(build_for(text, 7, 0).unwrap().steps.is_empty());
    }

    #[test]
    fn a_resumed_tcp_connection_sends_data_in_its_syn() {
        // TCP Fast Open with TLS 1.3 early data (the example without its sweep, whose
        // first point has neither): a reconnection's SYN carries data.
        let text = include_str!("../../scenarios/examples/tcp-tfo-0rtt.toml");
        let text = text[..text.find("[sweep]").unwrap()].replace(
            "fast_open = false, early_data = false",
            "fast_open = true, early_data = true",
        );
        let first = build(&text).unwrap();
        let conns: Vec<u32> = first.choices.iter().map(|c| c.connection).collect();
        assert_eq!(conns, vec![0, 1, 2, 3], "{:?}", first.choices);
        let syn = find(&first, |s| s.kind == "sent").unwrap();
        assert_eq!(syn.label, "SYN");
        let again = build_for(&text, 0, 1).unwrap();
        let syn = find(&again, |s| s.kind == "sent").unwrap();
        assert!(syn.label.starts_with("SYN data 0+"), "{}", syn.label);
        assert!(syn.rule.contains("RFC 7413"), "{}", syn.rule);
        assert_eq!(syn.mark, "handshake");
    }

    #[test]
    fn jumps_wrap_around_and_labels_never_overprint() {
        let tl = build(crate::gallery::SANDBOX).unwrap();
        let h = next_mark(&tl, 0, "handshake").unwrap();
        assert_eq!(tl.steps[h].mark, "handshake");
        // From the last step, the next handshake step is the first one.
        let first = tl.steps.iter().position(|s| s.mark == "handshake").unwrap();
        assert_eq!(next_mark(&tl, tl.steps.len() - 1, "handshake"), Some(first));
        assert_eq!(next_mark(&tl, 0, "nothing"), None);
        // Labels: dense ones yield; the current one always shows; apart horizontally
        // they may share a height.
        let boxes = [
            [0.0, 50.0, 10.0],
            [0.0, 50.0, 12.0],
            [0.0, 50.0, 14.0],
            [0.0, 50.0, 30.0],
            [60.0, 90.0, 31.0],
            [40.0, 70.0, 50.0],
        ];
        let v = label_visible(&boxes, 11.0, Some(1));
        assert_eq!(v, vec![false, true, false, true, true, true]);
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                let (a, b) = (boxes[i], boxes[j]);
                if v[i] && v[j] && !(a[1] <= b[0] || b[1] <= a[0]) {
                    assert!((a[2] - b[2]).abs() >= 11.0);
                }
            }
        }
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abc", 4), "abc");
    }
}
