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

    /// Whether [`SctpAssociation::poll_control`] would owe nothing and go on with no
    /// chunk: established and not closed, no shutdown or handshake chunk owed.
    #[inline]
    pub(super) fn control_quiet(&self) -> bool {
        self.state == AssocState::Established
            && !self.hs.send_shutdown
            && !self.hs.send_shutdown_ack
            && !self.hs.send_shutdown_complete
            && !self.is_closed()
            && !self.hs.send_init
            && self.hs.init_acks_to_send == 0
            && !self.hs.send_cookie_ack
    }

    /// The shutdown and handshake chunks owed (§9.2, §5.1): `Ok` with the packet (or
    /// nothing) when they decide it, `Err` with the chunks and room left to go on with
    /// (established: a COOKIE-ACK may lead the packet). A flag added here belongs in
    /// [`SctpAssociation::control_quiet`] too (debug builds check it).
    #[allow(clippy::type_complexity)]
    pub(super) fn poll_control(
        &mut self,
        now: SimTime,
        mut chunks: Vec<Chunk>,
        mut room: u64,
    ) -> Result<Option<SctpPacket>, (Vec<Chunk>, u64)> {
        // Shutdown chunks end the association's traffic.
        if self.hs.send_shutdown {
            self.hs.send_shutdown = false;
            chunks.push(Chunk::Shutdown {
                cum_tsn: self.rx.recv_cum,
            });
            return Ok(Some(self.finish_packet(now, chunks, None)));
        }
        if self.hs.send_shutdown_ack {
            self.hs.send_shutdown_ack = false;
            return Ok(Some(self.finish_packet(
                now,
                vec![Chunk::ShutdownAck],
                None,
            )));
        }
        if self.hs.send_shutdown_complete {
            self.hs.send_shutdown_complete = false;
            return Ok(Some(self.finish_packet(
                now,
                vec![Chunk::ShutdownComplete],
                None,
            )));
        }
        if self.is_closed() {
            self.spare_chunks = chunks;
            return Ok(None);
        }
        // Handshake.
        if self.hs.send_init {
            self.hs.send_init = false;
            self.hs.t1 = Some(now + self.rec.rto);
            let c = Chunk::Init(self.init_params());
            return Ok(Some(self.finish_packet(now, vec![c], None)));
        }
        if self.hs.init_acks_to_send > 0 {
            self.hs.init_acks_to_send -= 1;
            let c = Chunk::InitAck {
                params: self.init_params(),
                cookie: self.cfg.cookie_size,
            };
            return Ok(Some(self.finish_packet(now, vec![c], None)));
        }
        if self.state == AssocState::CookieEchoed {
            return Ok(self.poll_cookie_echo(now, chunks, room));
        }
        if self.hs.send_cookie_ack {
            self.hs.send_cookie_ack = false;
            chunks.push(Chunk::CookieAck);
            room -= 4;
        }
        if self.state != AssocState::Established {
            if chunks.is_empty() {
                self.spare_chunks = chunks;
                return Ok(None);
            }
            return Ok(Some(self.finish_packet(now, chunks, None)));
        }
        Err((chunks, room))
    }

    /// Client, COOKIE-ECHOED (§5.1 C-D): the COOKIE-ECHO with DATA bundled after it (the
    /// same chunks again on a T1-cookie retransmission), else nothing until COOKIE-ACK.
    fn poll_cookie_echo(
        &mut self,
        now: SimTime,
        mut chunks: Vec<Chunk>,
        mut room: u64,
    ) -> Option<SctpPacket> {
        let mut trigger = None;
        if !self.hs.send_cookie_echo {
            self.spare_chunks = chunks;
            return None; // §5.1: nothing else until COOKIE-ACK
        }
        self.hs.send_cookie_echo = false;
        self.hs.t1 = Some(now + self.rec.rto);
        let echo = Chunk::CookieEcho {
            cookie: self.hs.peer_cookie,
        };
        room -= echo.wire_size();
        chunks.push(echo);
        if self.hs.cookie_echo_resend {
            self.hs.cookie_echo_resend = false;
            for tsn in self.hs.cookie_echo_tsns.clone() {
                if let Some(c) = self.rec.sent.get_mut(tsn) {
                    c.retransmitted = true;
                    c.sent_at = now;
                    self.stats.chunks_retransmitted += 1;
                    self.stats.stream_bytes_retransmitted += c.chunk.len;
                    chunks.push(Chunk::Data(c.chunk));
                }
            }
            if self
                .rec
                .timed
                .is_some_and(|(t, _)| self.hs.cookie_echo_tsns.contains(&t))
            {
                self.rec.timed = None;
            }
            trigger = Some(SendTrigger::RetransmitCrypto);
        } else {
            // §5.1 D: DATA bundled after the COOKIE-ECHO, as the window allows.
            while self.rec.flight < self.cc.window() {
                let Some(d) = self.next_new_chunk(room, now) else {
                    break;
                };
                room -= data_chunk_size(d.wire_len());
                self.hs.cookie_echo_tsns.push(d.tsn);
                chunks.push(Chunk::Data(d));
            }
        }
        Some(self.finish_packet(now, chunks, trigger))
    }

    /// Server: an INIT (§5.1 B): answered statelessly with an INIT-ACK.
    pub(super) fn on_init(&mut self, p: InitParams) {
        // A late duplicate INIT after the handshake is ignored (the model has
        // no association restart, §5.2).
        if self.side == Side::Server && self.state == AssocState::Closed {
            self.learn_peer(p);
            self.hs.init_acks_to_send += 1;
        }
    }

    /// Client: the INIT-ACK (§5.1 C): the COOKIE-ECHO is owed.
    pub(super) fn on_init_ack(&mut self, now: SimTime, params: InitParams, cookie: u64) {
        if self.state == AssocState::CookieWait {
            self.learn_peer(params);
            self.hs.peer_cookie = cookie;
            self.state = AssocState::CookieEchoed;
            self.hs.send_cookie_echo = true;
            self.hs.t1 = None;
            self.hs.init_retransmits = 0;
            self.trace_connection_state(now, ConnectionState::HandshakeStarted);
            // Data may now be queued: it rides in the COOKIE-ECHO packet.
            self.events.push(StreamEvent::EarlyDataReady);
        }
    }

    /// Server: a COOKIE-ECHO (§5.1 D): established; a COOKIE-ACK is owed.
    pub(super) fn on_cookie_echo(&mut self, now: SimTime) {
        if self.side == Side::Server {
            self.hs.send_cookie_ack = true;
            if self.state == AssocState::Closed {
                self.state = AssocState::Established;
                self.handshake_at = Some(now);
                self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                self.events.push(StreamEvent::Connected);
            }
        }
    }

    /// Client: the COOKIE-ACK (§5.1 E): established.
    pub(super) fn on_cookie_ack(&mut self, now: SimTime) {
        if self.state == AssocState::CookieEchoed {
            self.state = AssocState::Established;
            self.handshake_at = Some(now);
            self.hs.t1 = None;
            self.hs.cookie_echo_tsns.clear();
            self.trace_connection_state(now, ConnectionState::HandshakeComplete);
            self.events.push(StreamEvent::Connected);
            // The DATA bundled with COOKIE-ECHO was covered by T1-cookie; T3
            // takes over (§6.3.2 R1).
            if self.rec.sent.values().any(|s| !s.gap_acked) {
                self.rec.t3 = Some(now + self.rec.rto);
            }
        }
    }
}
