//! The association's handshake and shutdown (RFC 9260 §5.1, §9.2): the control chunks
//! owed (INIT, INIT-ACK, COOKIE-ECHO with its bundled DATA, COOKIE-ACK, SHUTDOWN and its
//! answers), the peer's INIT parameters and T1-init / T1-cookie. [`Handshake`] owns
//! them; the state they move through is [`AssocState`].

use super::*;

/// Handshake and shutdown state.
#[derive(Debug, Default)]
pub(super) struct Handshake {
    pub(super) peer: Option<InitParams>,
    pub(super) send_init: bool,
    pub(super) init_acks_to_send: u64,
    pub(super) send_cookie_echo: bool,
    pub(super) cookie_echo_resend: bool,
    pub(super) cookie_echo_tsns: Vec<u64>,
    pub(super) send_cookie_ack: bool,
    pub(super) peer_cookie: u64,
    pub(super) t1: Option<SimTime>,
    pub(super) init_retransmits: u64,
    pub(super) send_shutdown: bool,
    pub(super) send_shutdown_ack: bool,
    pub(super) send_shutdown_complete: bool,
}

impl SctpAssociation {
    /// Client: sends INIT (§5.1 A).
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        if self.side == Side::Client && self.state == AssocState::Closed {
            self.state = AssocState::CookieWait;
            self.hs.send_init = true;
            self.trace_connection_state(now, ConnectionState::Attempted);
        }
    }

    pub(super) fn init_params(&self) -> InitParams {
        InitParams {
            initiate_tag: self.vtag,
            a_rwnd: self.a_rwnd(),
            outbound_streams: self.cfg.outbound_streams,
            inbound_streams: self.cfg.inbound_streams,
            initial_tsn: INITIAL_TSN,
            other_params: self.cfg.init_params_size,
        }
    }

    pub(super) fn learn_peer(&mut self, p: InitParams) {
        self.hs.peer = Some(p);
        // §5.1.1: the outbound streams are at most the peer's MIS.
        self.streams.out_streams = self.cfg.outbound_streams.min(p.inbound_streams);
        self.peer_rwnd = p.a_rwnd;
        if let Controller::Rfc(c) = &mut self.cc {
            // §7.2.1: initial ssthresh = the peer's a_rwnd.
            *c = SctpReno::new(self.cfg.mtu, self.cfg.pmdcs(), c.window(), p.a_rwnd);
        }
    }
}
