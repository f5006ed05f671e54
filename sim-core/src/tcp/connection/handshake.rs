//! The handshakes of a TCP endpoint: the three-way handshake (RFC 9293 §3.5) with SYN
//! retransmission, TCP Fast Open (RFC 7413: the cookie, data on the SYN) and the TLS
//! handshake as records on the byte stream (TLS 1.3 / 1.2, RFC 8446 §2 / RFC 5246 §7.3,
//! with resumption and 0-RTT data, RFC 8446 §2.2-2.3). [`Handshake`] owns the state;
//! the methods here move the connection through [`TcpState`] up to
//! `connected_at` (application data may flow).

use super::scoreboard::SentSeg;
use super::{TcpConnection, TcpState};
use crate::config::tcp::{TcpConfig, TlsVersion};
use crate::time::{SimDuration, SimTime};
use crate::transport::stream::{Side, StreamEvent};
use crate::wire::tcp::{
    syn_options_len, Flags, RecordKind, Segment, SynOptions, TlsMessage, FAST_OPEN_COOKIE_LEN,
};

/// Handshake state: the SYN, Fast Open and TLS resumption.
#[derive(Debug)]
pub(super) struct Handshake {
    /// A SYN (client) or SYN-ACK (server) is owed.
    pub(super) syn_pending: bool,
    pub(super) syn_sent_at: Option<SimTime>,
    pub(super) syn_retransmitted: bool,

    // TCP Fast Open (RFC 7413) and TLS 1.3 resumption (RFC 8446 §2.2-2.3)
    /// Client: holds a Fast Open cookie for the server.
    pub(super) cookie: bool,
    /// Client: holds a session ticket.
    pub(super) session_ticket: bool,
    /// Client: the SYN-ACK carried a cookie (RFC 7413 §4.1.2).
    pub(super) cookie_received: bool,
    /// Client: a NewSessionTicket arrived (RFC 8446 §4.6.1).
    pub(super) ticket_received: bool,
    /// This connection resumes with a PSK and 0-RTT data (client: decided at start;
    /// server: the ClientHello offered it).
    pub(super) psk: bool,
    /// Client: the ClientHello is on the stream.
    pub(super) hello_sent: bool,
    /// Client: payload bytes its first SYN carried (RFC 7413 §4.2).
    pub(super) syn_data: u64,
    /// Server: the client's SYN asked for a cookie (an empty Fast Open option, §4.1.1).
    pub(super) cookie_requested: bool,
    /// Server: it accepted the data of a SYN with a cookie and may send before the
    /// handshake completes (RFC 7413 §4.2.2).
    pub(super) fast_open_accepted: bool,
}

impl Handshake {
    pub(super) fn new(side: Side, cfg: &TcpConfig) -> Self {
        Handshake {
            syn_pending: false,
            syn_sent_at: None,
            syn_retransmitted: false,
            // `resumed`: held from before the run (client only).
            cookie: side == Side::Client && cfg.resumed && cfg.fast_open,
            session_ticket: side == Side::Client && cfg.resumed && cfg.early_data,
            cookie_received: false,
            ticket_received: false,
            psk: false,
            hello_sent: false,
            syn_data: 0,
            cookie_requested: false,
            fast_open_accepted: false,
        }
    }
}

impl TcpConnection {
    /// Starts: a client sends its SYN; a server listens.
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        self.last_activity = now;
        if self.side == Side::Client && self.state == TcpState::Idle {
            self.state = TcpState::SynSent;
            self.hs.syn_pending = true;
            // RFC 8446 §2.3: a ticket lets the client send early data behind its
            // ClientHello.
            self.hs.psk = self.cfg.early_data && self.hs.session_ticket;
            if self.cfg.fast_open && self.hs.cookie {
                // RFC 7413 §4.2: with a cookie the SYN carries data: the ClientHello (and
                // the 0-RTT requests behind it), or the requests without TLS.
                match self.cfg.tls {
                    TlsVersion::None => self.connect(now),
                    _ => self.send_client_hello(now),
                }
            }
        }
    }

    /// Client: puts the ClientHello on the stream (the resumption ClientHello with a
    /// ticket; then 0-RTT data may follow at once, RFC 8446 §2.3).
    pub(super) fn send_client_hello(&mut self, now: SimTime) {
        if self.hs.hello_sent {
            return;
        }
        self.hs.hello_sent = true;
        if self.hs.psk {
            self.send.push_record(
                RecordKind::Tls(TlsMessage::ClientHelloPsk),
                self.cfg.resumption_client_hello_size,
            );
            self.connect(now);
        } else {
            self.send.push_record(
                RecordKind::Tls(TlsMessage::ClientHello),
                self.cfg.client_hello_size,
            );
        }
    }

    pub(super) fn syn_options(&self) -> SynOptions {
        SynOptions {
            mss: self.cfg.mss,
            // RFC 7323 §2.3: the smallest shift that covers the receive window.
            window_scale: self.cfg.window_scale.then(|| {
                let mut s = 0u8;
                while (65_535u64 << s) < self.cfg.max_recv_window() && s < 14 {
                    s += 1;
                }
                s
            }),
            sack_permitted: self.cfg.sack,
            timestamps: self.cfg.timestamps,
            fast_open: match self.side {
                // RFC 7413 §4.1.1: the cookie, or an empty option requesting one.
                Side::Client => self.cfg.fast_open.then_some(if self.hs.cookie {
                    FAST_OPEN_COOKIE_LEN
                } else {
                    0
                }),
                // §4.1.2: the SYN-ACK answers a request with a cookie.
                Side::Server => {
                    (self.cfg.fast_open && self.hs.cookie_requested).then_some(FAST_OPEN_COOKIE_LEN)
                }
            },
        }
    }

    pub(super) fn syn_segment(&mut self, now: SimTime) -> Segment {
        if self.hs.syn_sent_at.is_none() {
            self.hs.syn_sent_at = Some(now);
        }
        if self.rtx_timer.deadline.is_none() {
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        let server = self.side == Side::Server;
        let options = self.syn_options();
        let mut len = 0;
        if !server && !self.hs.syn_retransmitted && self.hs.cookie && self.cfg.fast_open {
            // RFC 7413 §4.2: the first SYN carries data, as much as fits in one segment
            // beside its options (RFC 6691 §2). A retransmitted SYN carries none (as
            // Linux): the data then goes after the handshake.
            let room = self.cfg.mss.saturating_sub(syn_options_len(&options));
            self.fill_stream(room);
            len = self.send.stream_end.min(room);
            if len > 0 {
                self.hs.syn_data = len;
                self.snd_nxt = len;
                if let Some(r) = self.rate.as_mut() {
                    let app_limited = self.send.stream_end == len && !self.send.mux.has_pending();
                    r.on_packet_sent(0, now, len, self.sb.pipe, app_limited);
                }
                self.sb.push(SentSeg {
                    seq: 0,
                    len,
                    sent: now,
                    // The SYN's RTT sample is taken at establishment (Karn, RFC 6298 §3).
                    retransmitted: true,
                    sacked: false,
                    lost: false,
                    rexmit_in_flight: false,
                    app_limited: self.send.stream_end == len && !self.send.mux.has_pending(),
                });
                self.cc.on_packet_sent(now, len, self.sb.pipe);
            }
        }
        let mut records = Vec::new();
        if len > 0 {
            self.send.records_in(0, len, &mut records);
        }
        let ack = if server {
            // The SYN-ACK acknowledges accepted SYN data (RFC 7413 §4.2.2).
            self.rx.ack_sent();
            self.rx.rcv_nxt
        } else {
            0
        };
        Segment {
            conn: 0,
            flags: Flags {
                syn: true,
                ack: server,
                fin: false,
                // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR; an ECN-setup SYN-ACK
                // has ECE only.
                ece: if server {
                    self.ecn.negotiated
                } else {
                    self.cfg.ecn
                },
                cwr: !server && self.cfg.ecn,
            },
            seq: 0,
            len,
            ack,
            // RFC 7323 §2.2: the window of a SYN is never scaled.
            window: self.cfg.recv_window.min(65_535),
            sack: Vec::new(),
            syn_options: Some(options),
            timestamps: false,
            ts_val: self.ts_now,
            ts_ecr: self.rx.ts_recent,
            records,
            retransmission: self.hs.syn_retransmitted,
        }
    }

    pub(super) fn on_syn(&mut self, now: SimTime, seg: &Segment) {
        match (self.side, seg.flags.ack) {
            (Side::Server, false) => match self.state {
                TcpState::Idle => {
                    // RFC 3168 §6.1.1: an ECN-setup SYN to a host willing to use ECN.
                    self.ecn.negotiated = self.cfg.ecn && seg.flags.ece && seg.flags.cwr;
                    self.state = TcpState::SynReceived;
                    self.hs.syn_pending = true;
                    let fo = seg.syn_options.and_then(|o| o.fast_open);
                    self.hs.cookie_requested = fo == Some(0);
                    if self.cfg.fast_open && fo.is_some_and(|c| c > 0) && seg.len > 0 {
                        // RFC 7413 §4.2.2: a valid cookie (the model's cookies always
                        // are): the data is delivered now, the server may answer at once.
                        self.hs.fast_open_accepted = true;
                        self.peer_right_edge = seg.window;
                        if self.cfg.tls == TlsVersion::None {
                            self.connect(now);
                        }
                        self.on_data(now, seg);
                    }
                }
                TcpState::SynReceived => {
                    // The client retransmitted its SYN: our SYN-ACK was lost (or is
                    // late); answer again.
                    self.hs.syn_pending = true;
                    self.hs.syn_retransmitted = true;
                    self.stats.syn_retransmissions += 1;
                }
                _ => self.rx.ack_now = true,
            },
            (Side::Client, true) => {
                if self.state == TcpState::SynSent {
                    // RFC 3168 §6.1.1: an ECN-setup SYN-ACK (ECE without CWR).
                    self.ecn.negotiated = self.cfg.ecn && seg.flags.ece && !seg.flags.cwr;
                    self.peer_right_edge = seg.window;
                    if seg
                        .syn_options
                        .and_then(|o| o.fast_open)
                        .is_some_and(|c| c > 0)
                    {
                        self.hs.cookie_received = true;
                    }
                    self.establish(now);
                    if self.hs.syn_data > 0 {
                        self.on_ack(now, seg);
                        if self.snd_una < self.snd_nxt {
                            // RFC 7413 §4.2.1: the SYN-ACK did not acknowledge the SYN's
                            // data (lost with a retransmitted SYN, or refused): send it
                            // again now.
                            for i in 0..self.sb.segs.len() {
                                self.mark_lost(i, crate::trace::TcpLossRule::SynData);
                            }
                            self.rec.force_retransmit = true;
                        }
                    }
                }
                // RFC 9293 §3.5: acknowledge the SYN-ACK (again if it was repeated).
                self.rx.ack_now = true;
            }
            _ => {}
        }
    }

    pub(super) fn establish(&mut self, now: SimTime) {
        self.state = TcpState::Established;
        self.established_at = Some(now);
        self.rtx_timer.deadline = None;
        // RFC 6298 §3 (Karn): a retransmitted SYN gives no sample.
        if let (Some(t), false) = (self.hs.syn_sent_at, self.hs.syn_retransmitted) {
            self.rtt
                .update(now, now.saturating_since(t), SimDuration::ZERO, None);
        }
        self.rtx_timer.backoff = 0;
        if self.snd_nxt > self.snd_una {
            // Fast Open data sent before the handshake completed is still outstanding.
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        match (self.cfg.tls, self.side) {
            (TlsVersion::None, _) => self.connect(now),
            (_, Side::Client) => self.send_client_hello(now),
            (_, Side::Server) => {}
        }
    }

    pub(super) fn connect(&mut self, now: SimTime) {
        if self.connected_at.is_none() {
            self.connected_at = Some(now);
            self.events.push(StreamEvent::Connected);
        }
    }

    /// The TLS handshake, message by message (RFC 8446 §2, RFC 5246 §7.3).
    pub(super) fn on_tls(&mut self, now: SimTime, m: TlsMessage) {
        let tls = self.cfg.tls;
        match (self.side, m) {
            (Side::Server, TlsMessage::ClientHello) => {
                self.send.push_record(
                    RecordKind::Tls(TlsMessage::ServerFlight),
                    self.cfg.server_flight_size,
                );
            }
            (Side::Server, TlsMessage::ClientHelloPsk) => {
                // RFC 8446 §2.2-2.3: the abbreviated flight; the early data behind the
                // ClientHello is read at once and the server may answer right after its
                // Finished (0.5-RTT data).
                self.hs.psk = true;
                self.send.push_record(
                    RecordKind::Tls(TlsMessage::ResumedServerFlight),
                    self.cfg.resumption_server_flight_size,
                );
                self.connect(now);
            }
            (Side::Client, TlsMessage::ResumedServerFlight) => {
                // RFC 8446 §4.5: EndOfEarlyData (a 4-byte handshake header) before the
                // Finished.
                self.send.push_record(
                    RecordKind::Tls(TlsMessage::ClientFinished),
                    self.cfg.client_finished_size + 4,
                );
            }
            (Side::Client, TlsMessage::NewSessionTicket) => self.hs.ticket_received = true,
            (Side::Client, TlsMessage::ServerFlight) => {
                self.send.push_record(
                    RecordKind::Tls(TlsMessage::ClientFinished),
                    self.cfg.client_finished_size,
                );
                if tls == TlsVersion::Tls13 {
                    self.connect(now);
                }
            }
            (Side::Server, TlsMessage::ClientFinished) => {
                if tls == TlsVersion::Tls12 {
                    self.send.push_record(
                        RecordKind::Tls(TlsMessage::ServerFinished),
                        self.cfg.server_finished_size,
                    );
                }
                if tls == TlsVersion::Tls13 && self.cfg.early_data {
                    // RFC 8446 §4.6.1: a ticket for the next connection, after the
                    // client's Finished.
                    self.send.push_record(
                        RecordKind::Tls(TlsMessage::NewSessionTicket),
                        self.cfg.new_session_ticket_size,
                    );
                }
                self.connect(now);
            }
            (Side::Client, TlsMessage::ServerFinished) => self.connect(now),
            _ => {}
        }
    }
}
