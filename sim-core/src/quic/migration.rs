//! Connection migration state (RFC 9000 §9): what a connection with `migration` in its
//! config remembers — the window policy, the peer address of the active path (server),
//! the spare connection IDs (§9.5), the old path to fall back to while the new one is
//! validated (server, §9.3) and one record per migration for the metrics.
//!
//! The mechanism (client and server) is in `quic/connection/migrate.rs`:
//! - **client**, at a handover that changed its address ([`crate::driver::TransportDriver::
//!   handle_local_address_change`]): the old address is gone (the network removed the old
//!   access links), so it migrates at once (§9.2): its next datagram, from the new address,
//!   carries a PATH_CHALLENGE, a PING (a non-probing frame, so the server follows) and
//!   PADDING to 1200 bytes (§8.2.1); packets sent on the old path leave bytes in flight
//!   ([`crate::quic::recovery::Recovery::on_path_change`]);
//! - **server**, on a non-probing packet from a new peer address (§9.3): it sends to the new
//!   address from now on, under the 3x anti-amplification limit until the new address is
//!   validated (§9.3.1, §8.1), and validates it with its own PATH_CHALLENGE (§8.2.1); its
//!   round trip is the new path's RTT (`RTT_new` of paper 004);
//! - each side, once its own PATH_CHALLENGE is answered (§8.2.3), asks its window policy
//!   ([`crate::transport::migration`]) for the new path's congestion state (§9.4);
//! - validation abandoned (§8.2.4, after `3 × max(PTO, PTO with kInitialRtt)`): a server
//!   falls back to the previous address (the last validated one, §9.3.2 (revert)); a client,
//!   whose old address no longer exists, has no path left and closes silently with reason
//!   `path_validation_failed` (§8.2.4: "If no paths are available, an endpoint can wait for
//!   a new path to become available or close the connection").

use super::path::AntiAmplification;
use crate::packet::Addr;
use crate::time::{SimDuration, SimTime};
use crate::transport::migration::{self, MigrationConfig, WindowPolicy};

/// How a migration ended (or not yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The new path is being validated.
    Validating,
    /// The new path was validated; the window policy applied.
    Validated,
    /// Validation failed; the server went back to the previous peer address.
    FellBack,
    /// Validation failed with no other path: the connection closed.
    Failed,
}

impl Outcome {
    /// The name in the metrics.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Validating => "validating",
            Outcome::Validated => "validated",
            Outcome::FellBack => "fallback",
            Outcome::Failed => "failed",
        }
    }
}

/// One migration as this endpoint saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationRecord {
    /// When this endpoint switched paths (client: the handover; server: the first
    /// non-probing packet from the new address).
    pub switched_at: SimTime,
    /// Only the port changed (NAT rebinding), not the IP address.
    pub port_only: bool,
    /// The congestion window just before the switch.
    pub cwnd_before: u64,
    /// The minimum RTT of the old path (`None`: no sample).
    pub min_rtt_old: Option<SimDuration>,
    /// The smoothed RTT just before the switch.
    pub srtt_before: SimDuration,
    /// The smoothed RTT just after the window policy applied.
    pub srtt_after: Option<SimDuration>,
    /// The minimum RTT just after the window policy applied (`None`: no sample, as after
    /// a reset of the estimator).
    pub min_rtt_after: Option<SimDuration>,
    /// The PATH_CHALLENGE → PATH_RESPONSE round trip on the new path.
    pub rtt_new: Option<SimDuration>,
    /// The congestion window just after the window policy applied (at validation).
    pub cwnd_after: Option<u64>,
    /// When this endpoint's own validation of the new path succeeded.
    pub validated_at: Option<SimTime>,
    /// How it ended.
    pub outcome: Outcome,
    /// Stream bytes received in `[switched_at, switched_at + throughput_window]`.
    pub window_bytes: u64,
    /// Stream bytes of packets sent before the switch and declared lost after it (data
    /// the handover destroyed, sent again).
    pub bytes_lost: u64,
    /// Server: bytes sent to the new address before it was validated.
    pub unvalidated_sent: u64,
    /// Server: bytes received from the new address before it was validated.
    pub unvalidated_received: u64,
}

/// What a server restores when validation of a new peer address fails (RFC 9000 §9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// The previous (validated) peer address.
    pub peer: Option<Addr>,
    /// Its anti-amplification state.
    pub amplification: AntiAmplification,
}

/// The migration state of a connection whose config enables migration.
#[derive(Debug)]
pub struct Migration {
    /// The scenario's `migration` table.
    pub config: MigrationConfig,
    /// The window policy.
    pub policy: Box<dyn WindowPolicy>,
    /// Server: the peer address of the active path (learnt from the first datagram).
    pub peer: Option<Addr>,
    /// A NEW_CONNECTION_ID frame is owed (sent once the handshake is confirmed, so the
    /// peer holds a spare connection ID for a new path, RFC 9000 §9.5).
    pub new_cid_pending: bool,
    /// Whether a NEW_CONNECTION_ID was sent (at least once).
    pub new_cid_sent: bool,
    /// Sequence number of the connection ID this side issues next (or re-sends if lost):
    /// 1 at confirmation, one more at each migration, replacing the ID the peer stopped
    /// using (so a later handover again finds a spare one, RFC 9000 §5.1.1).
    pub cid_seq: u64,
    /// Spare connection IDs the peer issued and this side has not used yet.
    pub peer_cids: u64,
    /// The highest NEW_CONNECTION_ID sequence number received (0: the handshake's ID).
    pub peer_cid_seq: u64,
    /// Client: a PING is owed with the first PATH_CHALLENGE, so the first packet from the
    /// new address is non-probing (the client has migrated, §9.2).
    pub ping_pending: bool,
    /// Server: the previous path while the new one is validated.
    pub fallback: Option<Fallback>,
    /// Every migration, oldest first.
    pub records: Vec<MigrationRecord>,
}

impl Migration {
    /// The state for `config`.
    pub fn new(config: MigrationConfig) -> Self {
        Migration {
            config,
            policy: migration::build(config.policy),
            peer: None,
            new_cid_pending: false,
            new_cid_sent: false,
            cid_seq: 0,
            peer_cids: 0,
            peer_cid_seq: 0,
            ping_pending: false,
            fallback: None,
            records: Vec::new(),
        }
    }

    /// The record of the migration in progress or last done.
    pub fn current(&mut self) -> Option<&mut MigrationRecord> {
        self.records.last_mut()
    }
}
