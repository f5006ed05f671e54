//! The association's state machine as declared enums: where the handshake and the
//! shutdown are ([`AssocState`], RFC 9260 §4) and the sender's hold after a T3-rtx
//! expiry ([`T3Hold`], §6.3.3 E3).

/// The association's state (RFC 9260 §4, the states the model has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssocState {
    /// Nothing sent or received yet (a server stays here until a valid COOKIE-ECHO: it
    /// answers INIT statelessly, §5.1.3).
    Closed,
    /// Client: INIT sent.
    CookieWait,
    /// Client: COOKIE-ECHO sent.
    CookieEchoed,
    /// Established: data flows both ways.
    Established,
    /// Closed after a SHUTDOWN exchange, an association failure or by the peer.
    Ended,
}

/// The sender after a T3-rtx expiry (RFC 9260 §6.3.3 E3): one packet of the earliest
/// chunks goes, then nothing until a SACK acknowledges new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum T3Hold {
    /// No expiry pending: the usual rules.
    Off,
    /// The one packet may go, whatever the window.
    OnePacket,
    /// The packet went: wait for a SACK of new data.
    Holding,
}
