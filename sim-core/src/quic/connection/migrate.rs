//! Connection migration (RFC 9000 §9), see [`crate::quic::migration`]: the client's switch
//! at a handover, the server following a client that migrated, path validation both ways
//! (§8.2), the window policy at validation (§9.4), and the fallback or close when
//! validation fails (§8.2.4, §9.3).

use super::*;
use crate::packet::Addr;
use crate::quic::migration::{Fallback, MigrationRecord, Outcome};
use crate::quic::path::AntiAmplification;
use crate::transport::migration::{WindowDecision, WindowInput};

/// Separates the client's PATH_CHALLENGE data from the server's.
pub(super) fn challenge_salt(role: Role) -> u64 {
    match role {
        Role::Client => 1,
        Role::Server => 2,
    }
}

impl Connection {
    /// The migration state (`None`: the config does not enable migration).
    pub fn migration(&self) -> Option<&crate::quic::migration::Migration> {
        self.migration.as_ref()
    }

    /// Server with migration on: the active path's peer address (`None` otherwise: the
    /// workload's remote address is used).
    pub fn peer_address(&self) -> Option<Addr> {
        match self.role {
            Role::Server => self.migration.as_ref().and_then(|m| m.peer),
            Role::Client => None,
        }
    }

    /// RFC 9000 §8.2.4: "A value of three times the larger of the current PTO or the PTO
    /// for the new path (using kInitialRtt, as defined in [QUIC-RECOVERY]) is
    /// RECOMMENDED". The new path's PTO with kInitialRtt (RFC 9002 §6.2.1, rttvar =
    /// kInitialRtt / 2): `kInitialRtt + max(4 · kInitialRtt / 2, kGranularity) +
    /// max_ack_delay`.
    pub fn path_validation_timeout(&self) -> SimDuration {
        let current = self.path.recovery.pto_duration(Space::ApplicationData);
        let k = self.cfg.initial_rtt;
        let granularity = SimDuration::from_millis(1); // RFC 9002 kGranularity
        let fresh = k
            .saturating_add(k.saturating_mul(2).max(granularity))
            .saturating_add(self.cfg.max_ack_delay);
        current.max(fresh).saturating_mul(3)
    }

    /// Both sides: the connection moves to a new path at `now`.
    fn begin_switch(&mut self, now: SimTime, port_only: bool) {
        let cwnd_before = self.path.recovery.cwnd();
        let rtt = self.path.recovery.rtt();
        let min_rtt_old = rtt.has_sample().then(|| rtt.min_rtt());
        let srtt_before = rtt.smoothed_rtt();
        let deadline = now.saturating_add(self.path_validation_timeout());
        self.path.recovery.on_path_change(now);
        self.path.validation.start(deadline);
        if let Some(m) = self.migration.as_mut() {
            // The path change retires the connection IDs used on the old path: issue a
            // replacement, so the peer holds a spare one for the next change (§5.1.1).
            m.cid_seq += 1;
            m.new_cid_pending = true;
            m.records.push(MigrationRecord {
                switched_at: now,
                port_only,
                cwnd_before,
                min_rtt_old,
                srtt_before,
                srtt_after: None,
                min_rtt_after: None,
                rtt_new: None,
                cwnd_after: None,
                validated_at: None,
                outcome: Outcome::Validating,
                window_bytes: 0,
                bytes_lost: 0,
                unvalidated_sent: 0,
                unvalidated_received: 0,
            });
        }
        self.trace_migration(now, None, "migration_started", port_only, None, None);
    }

    /// Client: its host's address changed (a handover). With migration on, a confirmed
    /// handshake (RFC 9000 §9: no migration before confirmation) and a spare connection
    /// ID from the server (§9.5: a new address needs a new connection ID), the connection
    /// migrates now and returns `true`; else it keeps its old address (`false`).
    pub fn on_local_address_change(&mut self, now: SimTime, port_only: bool) -> bool {
        if self.role != Role::Client
            || self.state.is_closed()
            || !self.state.is_handshake_confirmed()
        {
            return false;
        }
        let Some(m) = self.migration.as_mut() else {
            return false;
        };
        if m.peer_cids == 0 {
            return false;
        }
        m.peer_cids -= 1;
        // The first packet from the new address is non-probing (RFC 9000 §9.2): the old
        // address is gone, so the client migrates at once rather than probing first.
        m.ping_pending = true;
        self.begin_switch(now, port_only);
        true
    }

    /// Server: datagram `d` came from `src`. The first one sets the peer address; a
    /// non-probing packet with the highest packet number so far from another address
    /// means the client migrated (RFC 9000 §9.3): the server sends there from now on,
    /// within 3x what it received there until the address is validated (§9.3.1, §8.1),
    /// and validates it (§8.2).
    pub fn on_peer_address(&mut self, now: SimTime, src: Addr, d: &QuicDatagram) {
        if self.role != Role::Server {
            return;
        }
        let confirmed = self.state.is_handshake_confirmed() && !self.state.is_closed();
        let largest = self.spaces[2].largest_recv;
        let validating = self.path.validation.is_validating();
        let amplification = self.path.amplification;
        let Some(m) = self.migration.as_mut() else {
            return;
        };
        let Some(peer) = m.peer else {
            m.peer = Some(src);
            return;
        };
        if peer == src || !confirmed {
            return;
        }
        // RFC 9000 §9.1: PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID and PADDING
        // are probing frames.
        let non_probing = d.packets.iter().any(|p| {
            p.ty == PacketType::OneRtt
                && largest.is_none_or(|l| p.pn > l)
                && p.frames.iter().any(|f| {
                    !matches!(
                        f,
                        Frame::PathChallenge(_)
                            | Frame::PathResponse(_)
                            | Frame::NewConnectionId { .. }
                            | Frame::Padding { .. }
                    )
                })
        });
        if !non_probing {
            return;
        }
        if !validating {
            // The last validated path, to revert to if the new one fails (§9.3).
            m.fallback = Some(Fallback {
                peer: Some(peer),
                amplification,
            });
        }
        m.peer = Some(src);
        let port_only = src.ip == peer.ip;
        self.path.amplification = AntiAmplification::new(false);
        self.begin_switch(now, port_only);
    }

    /// A PATH_RESPONSE echoed `data`. If it answers one of our challenges, the path is
    /// validated (RFC 9000 §8.2.3): a server lifts the anti-amplification limit, and the
    /// window policy sets the new path's congestion state (§9.4), with the challenge's
    /// round trip as `RTT_new`.
    pub(super) fn on_path_response(&mut self, now: SimTime, data: u64) {
        let Some(sent) = self.path.validation.on_response(data) else {
            return;
        };
        let rtt_new = now.saturating_since(sent);
        let (amp_sent, amp_received) = (
            self.path.amplification.sent(),
            self.path.amplification.received(),
        );
        if self.role == Role::Server {
            self.path.amplification.validate();
            self.update_amplification_state();
        }
        let initial_window = self.cfg.initial_cwnd();
        let Some(m) = self.migration.as_mut() else {
            return;
        };
        m.fallback = None;
        let Some(rec) = m.records.last() else {
            return;
        };
        let input = WindowInput {
            cwnd_old: rec.cwnd_before,
            min_rtt_old: rec.min_rtt_old,
            rtt_new,
            initial_window,
            port_only: rec.port_only,
        };
        let port_only = rec.port_only;
        if let WindowDecision::Restart { window } = m.policy.on_validated(&input) {
            let mut params = self.cfg.cc.clone();
            params.initial_cwnd_bytes = Some(window);
            // A new path's controller gets the next path's random stream.
            params.stream.path = m.records.len() as u32;
            let cc = crate::cc::build(&params, self.cfg.max_udp_payload);
            // A zero round trip (zero-delay links) still needs a positive initial RTT.
            let seed = rtt_new.max(SimDuration(1));
            self.path.recovery.restart_path_state(cc, seed);
        }
        let cwnd = self.path.recovery.cwnd();
        let rtt = self.path.recovery.rtt();
        let (srtt_after, min_rtt_after) =
            (rtt.smoothed_rtt(), rtt.has_sample().then(|| rtt.min_rtt()));
        if let Some(rec) = self.migration.as_mut().and_then(|m| m.current()) {
            rec.srtt_after = Some(srtt_after);
            rec.min_rtt_after = min_rtt_after;
            rec.rtt_new = Some(rtt_new);
            rec.cwnd_after = Some(cwnd);
            rec.validated_at = Some(now);
            rec.outcome = Outcome::Validated;
            if self.role == Role::Server {
                rec.unvalidated_sent = amp_sent;
                rec.unvalidated_received = amp_received;
            }
        }
        self.trace_migration(
            now,
            Some("migration_started"),
            "migration_complete",
            port_only,
            Some(rtt_new),
            Some(cwnd),
        );
        self.trace_cwnd_state(now, None);
        self.trace_metrics_update(now);
    }

    /// The validation timer fired (RFC 9000 §8.2.4): validation is abandoned. A server
    /// reverts to the previous, validated peer address (§9.3); an endpoint with no other
    /// path (a client: its old address no longer exists) closes silently.
    pub(super) fn on_path_validation_timeout(&mut self, now: SimTime) {
        self.path.validation.stop();
        let port_only = self
            .migration
            .as_ref()
            .and_then(|m| m.records.last())
            .is_some_and(|r| r.port_only);
        let fallback = match self.role {
            Role::Server => self.migration.as_mut().and_then(|m| m.fallback.take()),
            Role::Client => None,
        };
        let (amp_sent, amp_received) = (
            self.path.amplification.sent(),
            self.path.amplification.received(),
        );
        if let Some(m) = self.migration.as_mut() {
            if let Some(f) = fallback {
                m.peer = f.peer;
            }
            if let Some(rec) = m.current() {
                rec.outcome = if fallback.is_some() {
                    Outcome::FellBack
                } else {
                    Outcome::Failed
                };
                if self.role == Role::Server {
                    rec.unvalidated_sent = amp_sent;
                    rec.unvalidated_received = amp_received;
                }
            }
        }
        self.trace_migration(
            now,
            Some("migration_started"),
            "migration_abandoned",
            port_only,
            None,
            None,
        );
        match fallback {
            Some(f) => {
                self.path.amplification = f.amplification;
                self.update_amplification_state();
            }
            None => {
                self.state.no_path(now);
                self.events
                    .push(ConnEvent::Closed(CloseReason::PathValidationFailed));
                self.trace_connection_state(now, ConnectionState::Closed);
            }
        }
    }

    /// Bookkeeping of the migration in progress, if any: stream bytes received at `now`
    /// (handover throughput).
    pub(super) fn migration_on_stream_bytes(&mut self, now: SimTime, new: u64) {
        let Some(m) = self.migration.as_mut() else {
            return;
        };
        let window = m.config.throughput_window;
        if let Some(rec) = m.current() {
            if now <= rec.switched_at.saturating_add(window) {
                rec.window_bytes += new;
            }
        }
    }

    /// Bookkeeping of a lost packet sent before the current path started: its stream
    /// bytes were lost to the handover.
    pub(super) fn migration_on_lost(&mut self, p: &SentPacket<SentInfo>) {
        let Some(start) = self.path.recovery.path_start() else {
            return;
        };
        if p.time_sent >= start {
            return;
        }
        let bytes: u64 = self
            .sent_frames
            .iter(p.info.frames)
            .map(|f| match f {
                Frame::Stream { len, .. } => *len,
                _ => 0,
            })
            .sum();
        if let Some(rec) = self.migration.as_mut().and_then(|m| m.current()) {
            rec.bytes_lost += bytes;
        }
    }

    /// A NEW_CONNECTION_ID with sequence number `seq` arrived: one more spare connection
    /// ID for a new path (RFC 9000 §9.5), counted once per sequence number.
    pub(super) fn on_new_connection_id(&mut self, seq: u64) {
        if let Some(m) = self.migration.as_mut() {
            if seq > m.peer_cid_seq {
                m.peer_cid_seq = seq;
                m.peer_cids += 1;
            }
        }
    }

    fn trace_migration(
        &mut self,
        now: SimTime,
        old: Option<&'static str>,
        new: &'static str,
        port_only: bool,
        rtt_new: Option<SimDuration>,
        cwnd: Option<u64>,
    ) {
        if self.trace.is_on() {
            self.trace.push(
                now,
                TraceEvent::MigrationStateUpdated {
                    old,
                    new,
                    port_only,
                    rtt_new,
                    cwnd,
                },
            );
        }
    }
}
