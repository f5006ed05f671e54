//! The connection's handshake and close state machine, declared in one place (the habit of
//! s2n-quic): one enum, [`ConnState`], whose variants are the lifecycle phases of RFC 9000
//! §10 and whose [`Handshake`] field records how far the handshake got (RFC 9001 §4.1).
//! Every transition is a method here; the connection only asks and calls them.
//!
//! ```text
//!            handshake: Initial -> KeysAvailable -> Complete -> Confirmed
//! Open(hs) --close()------------> Closing { reply_pending }  --3 PTO--> Closed
//!          --CONNECTION_CLOSE---> Draining                   --3 PTO--> Closed
//!          --idle timeout-------------------------------------------->  Closed
//! ```
//!
//! The handshake field keeps advancing in every variant: packets coalesced after a
//! CONNECTION_CLOSE in the same datagram are still processed (the model never changed
//! that), and the closing period chooses its packet number spaces by what keys exist.

use super::connection::Role;
use crate::time::SimTime;

/// Why a connection ended (RFC 9000 §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CloseReason {
    /// Idle timeout (§10.1): closed silently, state discarded at once.
    IdleTimeout,
    /// This endpoint sent CONNECTION_CLOSE (§10.2.1): closing period.
    LocalClose,
    /// The peer's CONNECTION_CLOSE arrived (§10.2.2): draining period.
    PeerClose,
    /// After a migration, validation of the new path failed and no other path exists
    /// (§8.2.4): closed silently, state discarded at once.
    PathValidationFailed,
}

/// When and why a connection closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseInfo {
    /// Why.
    pub reason: CloseReason,
    /// When the connection closed (idle timer fired, CONNECTION_CLOSE sent or received).
    pub at: SimTime,
    /// End of the closing or draining period (3 PTO, RFC 9000 §10.2); `at` for an idle
    /// timeout.
    pub until: SimTime,
}

/// How far the handshake got (RFC 9001 §4.1), in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Handshake {
    /// Only Initial keys.
    Initial,
    /// Handshake keys available (client: whole ServerHello; server: whole ClientHello,
    /// which also gives it 1-RTT send keys).
    KeysAvailable,
    /// The handshake completed (RFC 9001 §4.1.1): 1-RTT keys both ways.
    Complete,
    /// The handshake is confirmed (RFC 9001 §4.1.2).
    Confirmed,
}

/// The connection's lifecycle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// Handshaking or established.
    Open(Handshake),
    /// This endpoint sent CONNECTION_CLOSE (RFC 9000 §10.2.1); `reply_pending`: a
    /// CONNECTION_CLOSE datagram is owed (the first, or the answer to a datagram received).
    Closing {
        /// Handshake progress when it closed.
        hs: Handshake,
        /// When and why.
        info: CloseInfo,
        /// A CONNECTION_CLOSE datagram is owed.
        reply_pending: bool,
    },
    /// The peer sent CONNECTION_CLOSE (RFC 9000 §10.2.2): nothing more is sent.
    Draining {
        /// Handshake progress.
        hs: Handshake,
        /// When and why.
        info: CloseInfo,
    },
    /// Terminated: idle timeout (RFC 9000 §10.1) or end of the closing / draining period.
    Closed {
        /// Handshake progress.
        hs: Handshake,
        /// When and why.
        info: CloseInfo,
    },
}

impl Default for ConnState {
    fn default() -> Self {
        ConnState::Open(Handshake::Initial)
    }
}

impl ConnState {
    /// Handshake progress.
    pub fn handshake(&self) -> Handshake {
        match *self {
            ConnState::Open(hs)
            | ConnState::Closing { hs, .. }
            | ConnState::Draining { hs, .. }
            | ConnState::Closed { hs, .. } => hs,
        }
    }

    fn handshake_mut(&mut self) -> &mut Handshake {
        match self {
            ConnState::Open(hs)
            | ConnState::Closing { hs, .. }
            | ConnState::Draining { hs, .. }
            | ConnState::Closed { hs, .. } => hs,
        }
    }

    /// Handshake keys are (or were) available.
    pub fn has_handshake_keys(&self) -> bool {
        self.handshake() >= Handshake::KeysAvailable
    }

    /// The handshake completed.
    pub fn is_handshake_complete(&self) -> bool {
        self.handshake() >= Handshake::Complete
    }

    /// The handshake is confirmed.
    pub fn is_handshake_confirmed(&self) -> bool {
        self.handshake() >= Handshake::Confirmed
    }

    /// 1-RTT packets may be sent: the server has 1-RTT send keys with the ClientHello
    /// (RFC 9001 §4.1.4, 0.5-RTT data), the client at completion.
    pub fn can_send_1rtt(&self, role: Role) -> bool {
        match role {
            Role::Server => self.has_handshake_keys(),
            Role::Client => self.is_handshake_complete(),
        }
    }

    /// 1-RTT packets can be read (both sides: at completion).
    pub fn can_recv_1rtt(&self) -> bool {
        self.is_handshake_complete()
    }

    /// The handshake advanced to `to` (never goes back).
    pub fn advance(&mut self, to: Handshake) {
        let hs = self.handshake_mut();
        *hs = (*hs).max(to);
    }

    /// Closing, draining or terminated.
    pub fn is_closed(&self) -> bool {
        !matches!(self, ConnState::Open(_))
    }

    /// The connection's state is gone.
    pub fn is_terminated(&self) -> bool {
        matches!(self, ConnState::Closed { .. })
    }

    /// When and why it closed.
    pub fn close_info(&self) -> Option<CloseInfo> {
        match *self {
            ConnState::Open(_) => None,
            ConnState::Closing { info, .. }
            | ConnState::Draining { info, .. }
            | ConnState::Closed { info, .. } => Some(info),
        }
    }

    /// The end of the closing or draining period still to wait for.
    pub fn close_deadline(&self) -> Option<SimTime> {
        match *self {
            ConnState::Closing { info, .. } | ConnState::Draining { info, .. } => Some(info.until),
            _ => None,
        }
    }

    /// `close()` while open: enter the closing period, a CONNECTION_CLOSE owed
    /// (RFC 9000 §10.2.1). Returns false (nothing changes) if already closed.
    pub fn close_local(&mut self, now: SimTime, until: SimTime) -> bool {
        let ConnState::Open(hs) = *self else {
            return false;
        };
        *self = ConnState::Closing {
            hs,
            info: CloseInfo {
                reason: CloseReason::LocalClose,
                at: now,
                until,
            },
            reply_pending: true,
        };
        true
    }

    /// The peer's CONNECTION_CLOSE: enter (or restart) the draining period (RFC 9000
    /// §10.2.2).
    pub fn close_peer(&mut self, now: SimTime, until: SimTime) {
        let hs = self.handshake();
        *self = ConnState::Draining {
            hs,
            info: CloseInfo {
                reason: CloseReason::PeerClose,
                at: now,
                until,
            },
        };
    }

    /// The idle timer fired: closed silently and terminated at once (RFC 9000 §10.1).
    pub fn idle_timeout(&mut self, now: SimTime) {
        let hs = self.handshake();
        *self = ConnState::Closed {
            hs,
            info: CloseInfo {
                reason: CloseReason::IdleTimeout,
                at: now,
                until: now,
            },
        };
    }

    /// No validated path is left (RFC 9000 §8.2.4: the endpoint "can ... close the
    /// connection"): closed silently and terminated at once, like an idle timeout.
    pub fn no_path(&mut self, now: SimTime) {
        let hs = self.handshake();
        *self = ConnState::Closed {
            hs,
            info: CloseInfo {
                reason: CloseReason::PathValidationFailed,
                at: now,
                until: now,
            },
        };
    }

    /// A datagram arrived while closed: in the closing period it is answered with
    /// another CONNECTION_CLOSE (RFC 9000 §10.2.1). Returns whether it was (counted as)
    /// received.
    pub fn on_datagram_while_closed(&mut self) -> bool {
        match self {
            ConnState::Closing { reply_pending, .. } => {
                *reply_pending = true;
                true
            }
            _ => false,
        }
    }

    /// Takes the owed CONNECTION_CLOSE, if any.
    pub fn take_close_reply(&mut self) -> bool {
        match self {
            ConnState::Closing { reply_pending, .. } if *reply_pending => {
                *reply_pending = false;
                true
            }
            _ => false,
        }
    }

    /// Time passes while closed: the closing or draining period ends at `until`.
    pub fn on_timeout(&mut self, now: SimTime) {
        if let Some(until) = self.close_deadline() {
            if now >= until {
                let hs = self.handshake();
                let info = self.close_info().expect("closing or draining");
                *self = ConnState::Closed { hs, info };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    #[test]
    fn handshake_only_advances_and_survives_close() {
        let mut s = ConnState::default();
        assert!(!s.has_handshake_keys());
        s.advance(Handshake::Complete);
        s.advance(Handshake::KeysAvailable);
        assert!(s.is_handshake_complete() && !s.is_handshake_confirmed());
        assert!(s.can_send_1rtt(Role::Client) && s.can_recv_1rtt());
        let t = SimTime::ZERO + SimDuration::from_millis(1);
        assert!(s.close_local(t, t + SimDuration::from_millis(3)));
        assert!(!s.close_local(t, t));
        s.advance(Handshake::Confirmed);
        assert!(s.is_handshake_confirmed() && s.is_closed() && !s.is_terminated());
    }

    #[test]
    fn closing_replies_then_terminates() {
        let mut s = ConnState::Open(Handshake::Confirmed);
        let until = SimTime::ZERO + SimDuration::from_millis(30);
        s.close_local(SimTime::ZERO, until);
        assert!(s.take_close_reply() && !s.take_close_reply());
        assert!(s.on_datagram_while_closed() && s.take_close_reply());
        s.on_timeout(until);
        assert!(s.is_terminated() && !s.on_datagram_while_closed());
        assert_eq!(s.close_info().unwrap().reason, CloseReason::LocalClose);
    }

    #[test]
    fn draining_sends_nothing_and_idle_terminates_at_once() {
        let mut s = ConnState::default();
        s.close_peer(SimTime::ZERO, SimTime::ZERO + SimDuration::from_millis(5));
        assert!(!s.on_datagram_while_closed() && !s.take_close_reply());
        let mut i = ConnState::default();
        i.idle_timeout(SimTime::ZERO);
        assert!(i.is_terminated() && i.close_deadline().is_none());
    }
}
