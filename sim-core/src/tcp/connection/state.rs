//! The connection's state machine as declared enums: where the handshake is
//! ([`TcpState`], RFC 9293 §3.3.2) and whether the connection is closed ([`Close`]).

use crate::time::SimTime;
use crate::transport::stream::CloseKind;

/// Where the connection is in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// Client not started, or server waiting for a SYN (LISTEN).
    Idle,
    /// Client: SYN sent (SYN-SENT).
    SynSent,
    /// Server: SYN-ACK sent (SYN-RECEIVED).
    SynReceived,
    /// ESTABLISHED.
    Established,
}

/// Whether and how the connection closed (one FIN, no FIN handshake: `docs/tcp.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Close {
    /// Not closed.
    Open,
    /// Closed here at the given time; the FIN is still to send.
    FinOwed(SimTime),
    /// Closed (here with the FIN sent, or by the peer's FIN).
    Closed(CloseKind, SimTime),
}

impl Close {
    /// Closed, whichever way.
    pub(super) fn is_closed(self) -> bool {
        self != Close::Open
    }

    /// How and when it closed.
    pub(super) fn kind_and_time(self) -> Option<(CloseKind, SimTime)> {
        match self {
            Close::Open => None,
            Close::FinOwed(at) => Some((CloseKind::LocalClose, at)),
            Close::Closed(kind, at) => Some((kind, at)),
        }
    }
}
