//! What every transport endpoint reports, whatever its protocol: [`TransportMetrics`].
//!
//! The fields are those a QUIC, TCP or SCTP sender and receiver all have (handshake,
//! completion, bytes and packets, losses and retransmissions, timeouts, congestion events,
//! blocked time by reason, RTT and window at the end). Protocol-only extras live in the
//! protocol's payload of [`crate::metrics::EndpointMetrics`] (QUIC:
//! [`crate::metrics::quic::QuicExtras`]). Times are seconds from the connection start;
//! `None` when the event did not happen.

use serde::{Deserialize, Serialize};

/// Shared transport metrics of one endpoint (client or server) of one connection, or the
/// totals of a connection sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransportMetrics {
    /// `"client"` or `"server"`.
    pub role: String,
    /// Handshake completion (client: the server's flight was received and data keys are
    /// available; server: the client's handshake finished).
    pub handshake_secs: Option<f64>,
    /// Client: the last response byte was read by the application. Server: the last
    /// response byte was acknowledged.
    pub completion_secs: Option<f64>,
    /// Client: the first response byte was delivered in order.
    pub time_to_first_byte_secs: Option<f64>,
    /// Client: response bytes read × 8 / completion time.
    pub goodput_bps: Option<f64>,
    /// Stream (application) bytes read by this side's application.
    pub stream_bytes_read: u64,
    /// Payload bytes handed to the network (UDP payload for QUIC).
    pub bytes_sent: u64,
    /// Transport packets sent (QUIC: coalesced packets count separately).
    pub packets_sent: u64,
    /// Packets declared lost by the sender's loss detection.
    pub packets_lost: u64,
    /// Packets that carried retransmitted data.
    pub packets_retransmitted: u64,
    /// Stream (application) bytes sent again.
    pub stream_bytes_retransmitted: u64,
    /// Packets declared lost and acknowledged afterwards.
    pub spurious_losses: u64,
    /// Stream bytes received more than once (spurious or duplicate receptions).
    pub duplicate_stream_bytes: u64,
    /// Sender-declared loss ratio: packets declared lost / packets sent. (Link drops per
    /// flow are in the flow report: link drops / datagrams sent.)
    pub loss_ratio: f64,
    /// Retransmission-timer expirations (QUIC: PTO, RFC 9002 §6.2; TCP: RTO).
    pub pto_count: u64,
    /// Congestion events (window reductions).
    pub congestion_events: u64,
    /// Time the sender had stream data but a full congestion window.
    pub cwnd_blocked_secs: f64,
    /// Time the sender had stream data but no flow-control credit.
    pub flow_control_blocked_secs: f64,
    /// Bytes in flight at the end.
    pub bytes_in_flight_end: u64,
    /// Congestion window at the end, bytes.
    pub cwnd_end: u64,
    /// Slow-start threshold at the end, bytes (`None`: still infinite).
    pub ssthresh_end: Option<u64>,
    /// Smoothed RTT at the end.
    pub srtt_end_secs: f64,
    /// Minimum RTT seen.
    pub min_rtt_secs: f64,
    /// The connection closed before finishing (e.g. idle timeout).
    pub closed: bool,
}

/// What an endpoint with ECN on saw of it (QUIC RFC 9000 §13.4, TCP RFC 3168); present
/// only on an endpoint whose transport has `ecn = true`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcnReport {
    /// Packets (QUIC) or segments (TCP) sent ECN-capable (ECT(0)).
    pub ect_sent: u64,
    /// Packets or segments received marked CE.
    pub ce_received: u64,
    /// Congestion signals from the peer: QUIC ACK frames whose ECN-CE count increased,
    /// TCP ACKs with ECE.
    pub ce_signals: u64,
    /// Window reductions they caused (a new recovery period; at most one per round trip).
    pub congestion_events: u64,
    /// ECN was turned off: QUIC validation failed (RFC 9000 §13.4.2.2), or TCP's
    /// negotiation did not succeed (RFC 3168 §6.1.1).
    pub disabled: bool,
}
