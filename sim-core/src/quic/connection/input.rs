//! The connection's input: datagrams (packets, frames, handshake progress,
//! acknowledgements and losses, stream data, reads by the workload's [`AppReader`]) and
//! timeouts (the [`TimerTable`] entries that expired, PTO probes).

use super::*;

impl Connection {
    /// A datagram of `size` UDP payload bytes arrived; `reader` is told at once of each
    /// STREAM frame that made bytes readable.
    pub fn handle_datagram(
        &mut self,
        now: SimTime,
        dgram: &QuicDatagram,
        size: u64,
        reader: &mut dyn AppReader,
    ) {
        self.handle_datagram_ecn(now, dgram, size, Ecn::NotEct, reader);
    }

    /// [`Connection::handle_datagram`] for a datagram whose IP header carried `ecn`
    /// (counted per packet processed, RFC 9000 §13.4.1).
    pub fn handle_datagram_ecn(
        &mut self,
        now: SimTime,
        dgram: &QuicDatagram,
        size: u64,
        ecn: Ecn,
        reader: &mut dyn AppReader,
    ) {
        if self.state.is_closed() {
            if self.state.on_datagram_while_closed() {
                // Closing (RFC 9000 §10.2.1): answer with CONNECTION_CLOSE.
                self.stats.datagrams_received += 1;
            }
            return;
        }
        if self.role == Role::Client && self.peer_server_hello.is_none() {
            if let Some(&h) = dgram.server_hello.as_deref() {
                self.peer_server_hello = Some(h);
                self.resumed = h.resumed;
            }
        }
        if self.role == Role::Server && self.peer_client_hello.is_none() {
            // Without `accept_client` (a lone connection): only the ClientHello length.
            if let Some(&h) = dgram.client_hello.as_deref() {
                self.peer_client_hello = Some(ClientHelloInfo {
                    ticket: None,
                    token: None,
                    early_data: false,
                    ..h
                });
            }
        }
        self.stats.datagrams_received += 1;
        self.last_activity = now;
        self.eliciting_sent_since_recv = false;
        if self.role == Role::Server {
            // RFC 9000 §8.1: all bytes received count, even of discarded packets.
            self.path.amplification.on_received(size);
        }
        if self.role == Role::Server && self.trace_state.is_none() {
            self.trace_connection_state(now, ConnectionState::Attempted);
        }
        for pkt in &dgram.packets {
            self.on_packet(now, pkt, ecn, reader);
        }
        self.update_amplification_state();
        self.trace_metrics_update(now);
    }

    pub(super) fn can_decrypt(&self, i: usize) -> bool {
        match i {
            0 => true,
            1 => self.state.has_handshake_keys(),
            _ => self.state.can_recv_1rtt(),
        }
    }

    pub(super) fn on_packet(
        &mut self,
        now: SimTime,
        pkt: &QuicPacket,
        ecn: Ecn,
        reader: &mut dyn AppReader,
    ) {
        let i = pkt.ty.space_index();
        if self.spaces[i].discarded {
            self.stats.undecryptable_dropped += 1;
            return;
        }
        let zero_rtt = pkt.ty == PacketType::ZeroRtt;
        if zero_rtt
            && (self.role == Role::Client
                || (self.state.has_handshake_keys() && !self.zero_rtt_recv))
        {
            // RFC 9001 §4.6.2: a server that rejected 0-RTT MUST NOT process 0-RTT packets.
            self.stats.zero_rtt_packets_rejected += 1;
            return;
        }
        let readable = (zero_rtt && self.zero_rtt_recv) || self.can_decrypt(i);
        if !readable {
            if self.undecryptable.len() < MAX_UNDECRYPTABLE {
                self.undecryptable.push((pkt.clone(), ecn));
            } else {
                self.stats.undecryptable_dropped += 1;
            }
            return;
        }
        let pn = pkt.pn;
        let eliciting = pkt.is_ack_eliciting();
        {
            let threshold = self.cfg.ack_eliciting_threshold;
            let max_ack_delay = self.cfg.max_ack_delay;
            let sp = &mut self.spaces[i];
            // A duplicate adds nothing to the set (and leaves it as it was).
            if sp.received.insert(pn, pn + 1) == 0 {
                self.stats.duplicate_packets += 1;
                return;
            }
            sp.ack_insert(pn);
            // RFC 9000 §13.4.1: count the codepoint of each packet processed (not of
            // duplicates).
            sp.count_ecn(ecn);
            let prev_largest = sp.largest_recv;
            if prev_largest.is_none_or(|l| pn > l) {
                sp.largest_recv = Some(pn);
                sp.largest_recv_time = now;
            }
            sp.new_since_ack = true;
            if eliciting {
                // RFC 9000 §13.2.1: immediately on out-of-order (a lower number than one
                // received, or missing packets before this one).
                let out_of_order = match prev_largest {
                    Some(l) => pn < l || pn > l + 1,
                    None => pn > 0,
                };
                sp.eliciting_since_ack += 1;
                // Initial and Handshake are not delayed (RFC 9000 §13.2.1); otherwise
                // every `threshold` ack-eliciting packets (§13.2.2) or max_ack_delay.
                // RFC 9000 §13.2.1: a CE-marked packet SHOULD be acknowledged at once.
                if i < 2 || out_of_order || ecn == Ecn::Ce || sp.eliciting_since_ack >= threshold {
                    sp.ack_immediate = true;
                } else if sp.ack_deadline.is_none() {
                    sp.ack_deadline = Some(now + max_ack_delay);
                }
            }
        }
        if self.trace.is_on() {
            let datagram_id = self.stats.datagrams_received.saturating_sub(1);
            let packet = ProtocolPacket::Quic(pkt.clone());
            self.trace.push(
                now,
                TraceEvent::PacketReceived {
                    packet,
                    datagram_id,
                },
            );
        }
        for f in &pkt.frames {
            self.on_frame(now, i, f, reader);
            if self.state.is_closed() {
                self.trace_connection_state(now, ConnectionState::Closed);
                return;
            }
        }
        if self.role == Role::Server && i == 1 && !self.path.amplification.is_validated() {
            // RFC 9000 §8.1: a Handshake packet from the client validates its address.
            self.path.amplification.validate();
        }
        if self.role == Role::Server && i == 1 && !self.spaces[0].discarded {
            // RFC 9001 §4.9.1: the server discards Initial keys when it first
            // successfully processes a Handshake packet.
            self.discard_space(0);
        }
    }

    pub(super) fn on_frame(
        &mut self,
        now: SimTime,
        i: usize,
        f: &Frame,
        reader: &mut dyn AppReader,
    ) {
        match *f {
            Frame::Padding { .. } | Frame::Ping => {}
            Frame::Ack {
                ref ranges,
                ack_delay_encoded,
                ref ecn,
            } => {
                // RFC 9000 §19.3: scaled by the PEER's ack_delay_exponent (default 3,
                // §18.2); its descriptor arrives with its first datagram.
                let exponent = self
                    .peer_transport_parameters()
                    .and_then(|p| p.ack_delay_exponent)
                    .unwrap_or(DEFAULT_ACK_DELAY_EXPONENT);
                let us = ack_delay_encoded << exponent;
                self.on_ack_frame(now, i, ranges, SimDuration::from_micros(us), ecn.as_deref());
            }
            Frame::Crypto { offset, len } => {
                self.spaces[i].crypto_recv.on_data(offset, len, false);
                self.check_handshake_progress(now, reader);
            }
            Frame::Stream {
                id,
                offset,
                len,
                fin,
            } => self.on_stream_frame(now, id, offset, len, fin, reader),
            Frame::MaxData(v) => {
                self.send_fc.raise(v);
            }
            Frame::MaxStreamData { id, max } => {
                if let Some(mut s) = self.streams.get_mut(&id) {
                    s.send_fc.raise(max);
                }
            }
            Frame::MaxStreams { bidi, max } => {
                if bidi && max > self.peer_max_streams {
                    self.peer_max_streams = max;
                    self.events.push(ConnEvent::StreamsAvailable);
                }
            }
            Frame::DataBlocked(_) | Frame::StreamDataBlocked { .. } => {}
            Frame::NewConnectionId { seq, .. } => self.on_new_connection_id(seq),
            Frame::PathResponse(x) => self.on_path_response(now, x),
            Frame::PathChallenge(x) => self.path.validation.responses_pending.push(x),
            Frame::ConnectionClose { .. } => {
                // Draining (RFC 9000 §10.2.2): send nothing more for three PTOs.
                let pto = self.path.recovery.pto_duration(Space::ApplicationData);
                let until = now.saturating_add(pto.saturating_mul(CLOSE_PERIOD_PTOS));
                self.state.close_peer(now, until);
                self.events.push(ConnEvent::Closed(CloseReason::PeerClose));
            }
            Frame::HandshakeDone => {
                if self.role == Role::Client && !self.state.is_handshake_confirmed() {
                    self.confirm_handshake(now);
                }
            }
        }
    }

    pub(super) fn check_handshake_progress(&mut self, now: SimTime, reader: &mut dyn AppReader) {
        match self.role {
            Role::Client => {
                let (server_hello, server_flight) = self.server_flight_sizes();
                if !self.state.has_handshake_keys()
                    && self.spaces[0].crypto_recv.delivered >= server_hello
                {
                    self.state.advance(Handshake::KeysAvailable);
                    self.path.recovery.set_has_handshake_keys();
                    self.trace_connection_state(now, ConnectionState::HandshakeStarted);
                    self.process_undecryptable(now, reader);
                }
                if self.state.has_handshake_keys()
                    && !self.state.is_handshake_complete()
                    && self.spaces[1].crypto_recv.delivered >= server_flight
                {
                    // Complete: 1-RTT keys both ways (RFC 9001 §4.1.1).
                    self.state.advance(Handshake::Complete);
                    self.handshake_complete_at = Some(now);
                    let n = self.cfg.client_finished_size;
                    self.spaces[1].crypto_send.write(n, false);
                    if self.zero_rtt_send
                        && !self
                            .peer_server_hello
                            .is_some_and(|h| h.early_data_accepted)
                    {
                        // RFC 9001 §4.6.2: 0-RTT rejected; its packets leave recovery and
                        // their data goes again in 1-RTT packets.
                        let lost = self
                            .path
                            .recovery
                            .remove_all_packets(Space::ApplicationData);
                        for p in lost {
                            self.requeue_record_frames(2, p.info);
                        }
                    }
                    self.zero_rtt_send = false; // 1-RTT from now on (RFC 9001 §4.9.3)
                    self.apply_peer_transport_parameters(now);
                    self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                    self.events.push(ConnEvent::Connected);
                    self.process_undecryptable(now, reader);
                }
            }
            Role::Server => {
                if !self.state.has_handshake_keys()
                    && self.spaces[0].crypto_recv.delivered >= self.client_hello_size()
                {
                    // Handshake keys and 1-RTT send keys (RFC 9001 §4.1.4).
                    self.state.advance(Handshake::KeysAvailable);
                    self.zero_rtt_recv = self.early_data_accepted;
                    self.path.recovery.set_has_handshake_keys();
                    let (sh, flight) = self.server_flight_sizes();
                    self.spaces[0].crypto_send.write(sh, false);
                    self.spaces[1].crypto_send.write(flight, false);
                    self.apply_peer_transport_parameters(now);
                    self.trace_connection_state(now, ConnectionState::HandshakeStarted);
                    self.process_undecryptable(now, reader);
                }
                if self.state.has_handshake_keys()
                    && !self.state.is_handshake_complete()
                    && self.spaces[1].crypto_recv.delivered >= self.cfg.client_finished_size
                {
                    self.state.advance(Handshake::Complete);
                    self.handshake_complete_at = Some(now);
                    self.handshake_done_pending = true; // RFC 9000 §19.20
                    self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                    self.confirm_handshake(now); // RFC 9001 §4.1.2: server confirms at completion
                    self.events.push(ConnEvent::Connected);
                    self.process_undecryptable(now, reader);
                }
            }
        }
    }

    /// The peer's transport parameters (from its handshake descriptor, never our config)
    /// take effect: with the ClientHello (server) or EncryptedExtensions (client, at
    /// handshake completion).
    pub(super) fn apply_peer_transport_parameters(&mut self, now: SimTime) {
        let params = self
            .peer_transport_parameters()
            .expect("the peer's handshake descriptor arrived with its handshake");
        if self.trace.is_on() {
            self.trace.push(
                now,
                TraceEvent::ParametersSet {
                    initiator: Initiator::Remote,
                    params: ProtocolParameters::Quic(params),
                },
            );
        }
        // RFC 9000 §18.2: absent limits are 0; an absent max_ack_delay is 25 ms.
        self.send_fc.raise(params.initial_max_data.unwrap_or(0));
        self.peer_max_streams = self
            .peer_max_streams
            .max(params.initial_max_streams_bidi.unwrap_or(0));
        self.peer_window_local_streams = params.initial_max_stream_data_bidi_remote.unwrap_or(0);
        self.peer_window_remote_streams = params.initial_max_stream_data_bidi_local.unwrap_or(0);
        self.peer_idle_timeout = params.max_idle_timeout;
        let max_ack_delay = params.max_ack_delay.unwrap_or(DEFAULT_MAX_ACK_DELAY);
        self.path.recovery.set_peer_max_ack_delay(max_ack_delay);
    }

    pub(super) fn confirm_handshake(&mut self, now: SimTime) {
        self.state.advance(Handshake::Confirmed);
        self.trace_connection_state(now, ConnectionState::HandshakeConfirmed);
        self.handshake_confirmed_at = Some(now);
        self.path.recovery.set_handshake_confirmed();
        if self.role == Role::Client {
            self.path.recovery.set_peer_completed_address_validation();
        }
        if let Some(m) = self.migration.as_mut() {
            // A spare connection ID for the peer's next path (RFC 9000 §9.5).
            m.cid_seq = 1;
            m.new_cid_pending = true;
        }
        // RFC 9001 §4.9.2: discard Handshake keys once the handshake is confirmed.
        self.discard_space(1);
        if !self.spaces[0].discarded {
            self.discard_space(0);
        }
    }

    pub(super) fn discard_space(&mut self, i: usize) {
        if self.spaces[i].discarded {
            return;
        }
        let sp = &mut self.spaces[i];
        sp.discarded = true;
        sp.probes = 0;
        sp.ack_immediate = false;
        sp.ack_deadline = None;
        sp.new_since_ack = false;
        sp.crypto_send = SendBuf::default();
        // Their records are dropped: their frames leave the slab.
        for p in self.path.recovery.discard_space(space_of(i)) {
            self.sent_frames.release(p.info.frames);
            self.buf_pool.recycle(SentInfo {
                frames: SentFrames::default(),
                ..p.info
            });
        }
        self.undecryptable.retain(|(p, _)| p.ty.space_index() != i);
    }

    pub(super) fn process_undecryptable(&mut self, now: SimTime, reader: &mut dyn AppReader) {
        let pending = std::mem::take(&mut self.undecryptable);
        for (p, ecn) in &pending {
            self.on_packet(now, p, *ecn, reader);
        }
    }

    pub(super) fn on_ack_frame(
        &mut self,
        now: SimTime,
        i: usize,
        ranges: &[(u64, u64)],
        delay: SimDuration,
        ecn: Option<&EcnCounts>,
    ) {
        // Acknowledgements of packets never sent are a PROTOCOL_VIOLATION (RFC 9000
        // §13.1); the model never produces them.
        let mut out = self.path.recovery.on_ack_received_ecn(
            now,
            space_of(i),
            ranges,
            delay,
            Some((&mut self.ecn, ecn)),
        );
        for p in out.acked.drain(..) {
            let sp = &mut self.spaces[i];
            sp.largest_acked_by_peer = Some(sp.largest_acked_by_peer.map_or(p.pn, |l| l.max(p.pn)));
            self.on_packet_acked(now, i, p.info);
        }
        self.path.recovery.recycle_acked(out.acked);
        let largest = self.spaces[i].largest_acked_by_peer.unwrap_or(0);
        let threshold = self.cfg.packet_threshold;
        for p in out.lost {
            // RFC 9002 §6.1: which threshold fired (packet threshold takes precedence).
            let trigger = if largest >= p.pn.saturating_add(threshold) {
                LossTrigger::ReorderingThreshold
            } else {
                LossTrigger::TimeThreshold
            };
            self.on_packet_lost(now, i, p, trigger);
        }
        if out.persistent_congestion {
            self.trace_cwnd_state(now, Some("persistent_congestion"));
        }
    }

    pub(super) fn on_packet_acked(&mut self, now: SimTime, i: usize, info: SentInfo) {
        if let Some(ranges) = &info.ack_ranges {
            // RFC 9000 §13.2.4: stop acknowledging what the peer has seen acknowledged
            // (exactly the ranges that ACK carried, so a late packet below its Largest
            // Acknowledged is still reported).
            // The ranges come largest first (`packetizer::plan_ack`): once one lies wholly
            // below what is left to acknowledge, so do the rest, and removing them would
            // change nothing.
            let sp = &mut self.spaces[i];
            debug_assert!(ranges.windows(2).all(|w| w[1].1 < w[0].0));
            for &(lo, hi) in ranges {
                match sp.to_ack.first() {
                    Some((start, _)) if hi >= start => sp.ack_remove(lo, hi + 1),
                    _ => break,
                }
            }
        }
        // The record's frames, in order, each taken out of the slab (its slot freed).
        let mut list = info.frames;
        while let Some(f) = self.sent_frames.pop_front(&mut list) {
            match f {
                Frame::Stream {
                    id,
                    offset,
                    len,
                    fin,
                } if self.streams.on_send_acked(id, offset, len, fin, now) => {
                    // That acknowledgement completed the stream's send half.
                    self.events.push(ConnEvent::StreamSendComplete(id));
                    self.maybe_close_stream(id);
                }
                Frame::Crypto { offset, len } => {
                    self.spaces[i].crypto_send.on_ack(offset, len, false);
                }
                _ => {}
            }
        }
        self.buf_pool.recycle(SentInfo {
            frames: list,
            ..info
        });
    }

    pub(super) fn on_packet_lost(
        &mut self,
        now: SimTime,
        i: usize,
        p: SentPacket<SentInfo>,
        trigger: LossTrigger,
    ) {
        self.stats.packets_lost += 1;
        self.last_loss_trigger = trigger;
        if self.trace.is_on() {
            self.trace.push(
                now,
                TraceEvent::PacketLost {
                    packet: ProtocolPacket::Quic(QuicPacket {
                        ty: if p.info.zero_rtt {
                            PacketType::ZeroRtt
                        } else {
                            PacketType::of_space(i)
                        },
                        pn: p.pn,
                        size: p.size,
                        frames: self.sent_frames.iter(p.info.frames).cloned().collect(),
                    }),
                    trigger,
                },
            );
        }
        if p.ack_eliciting {
            self.stats.ack_eliciting_lost += 1;
        }
        if self.migration.is_some() {
            self.migration_on_lost(&p);
        }
        self.requeue_record_frames(i, p.info);
    }

    /// Queues the frames of a record leaving recovery unacknowledged (lost, or its space's
    /// packets removed) again, in order ([`Connection::requeue_frame`]), retiring them from
    /// the slab, and recycles the record's range buffer.
    pub(super) fn requeue_record_frames(&mut self, i: usize, info: SentInfo) {
        let mut list = info.frames;
        while let Some(f) = self.sent_frames.pop_front(&mut list) {
            self.requeue_frame(i, &f);
        }
        self.buf_pool.recycle(SentInfo {
            frames: list,
            ..info
        });
    }

    /// Queues the frames of a lost (or probed) packet again, by frame type (RFC 9000
    /// §13.3): data ranges not yet acknowledged, flow-control limits at their current
    /// value, HANDSHAKE_DONE; never ACK, PADDING, PING or PATH_*.
    pub(super) fn requeue_frames(&mut self, i: usize, frames: &[Frame]) {
        for f in frames {
            self.requeue_frame(i, f);
        }
    }

    /// Queues one frame of a lost (or probed) packet again ([`Connection::requeue_frames`]).
    pub(super) fn requeue_frame(&mut self, i: usize, f: &Frame) {
        match *f {
            Frame::Stream {
                id,
                offset,
                len,
                fin,
            } => {
                if let Some(mut s) = self.streams.get_mut(&id) {
                    s.send.on_lost(offset, len, fin);
                }
            }
            Frame::Crypto { offset, len } if !self.spaces[i].discarded => {
                self.spaces[i].crypto_send.on_lost(offset, len, false);
            }
            Frame::MaxData(v) if v == self.recv_fc.limit => {
                self.recv_fc.update_pending = true;
            }
            Frame::MaxStreamData { id, max } => {
                if let Some(mut s) = self.streams.get_mut(&id) {
                    if max == s.recv_fc.limit && !s.recv.is_fully_received() {
                        s.recv_fc.update_pending = true;
                    }
                }
            }
            Frame::MaxStreams { max, .. } if max == self.local_max_streams => {
                self.max_streams_pending = true;
            }
            Frame::DataBlocked(v) => self.send_fc.on_blocked_lost(v, true),
            Frame::StreamDataBlocked { id, limit } => {
                if let Some(mut s) = self.streams.get_mut(&id) {
                    let waiting = s.send.unsent() > 0;
                    s.send_fc.on_blocked_lost(limit, waiting);
                }
            }
            Frame::HandshakeDone => self.handshake_done_pending = true,
            Frame::NewConnectionId { .. } => {
                if let Some(m) = self.migration.as_mut() {
                    m.new_cid_pending = true;
                }
            }
            _ => {}
        }
    }

    pub(super) fn on_stream_frame(
        &mut self,
        now: SimTime,
        id: u64,
        offset: u64,
        len: u64,
        fin: bool,
        reader: &mut dyn AppReader,
    ) {
        let srtt = self.path.recovery.rtt().smoothed_rtt();
        let at_once = reader.reads_at_once();
        if !self.streams.contains_key(&id) && !self.open_remote_streams(id) {
            return;
        }
        let mut s = self.streams.get_recv_mut(&id).expect("stream exists");
        if offset + len > s.recv_fc.limit {
            self.stats.flow_control_violations += 1; // FLOW_CONTROL_ERROR
        }
        let prev_high = s.recv.highest;
        let (new, delivered) = s.recv.on_data(offset, len, fin);
        self.stats.duplicate_stream_bytes += len - new;
        let grew = s.recv.highest - prev_high;
        s.recv_fc.received = s.recv.highest;
        if delivered > 0 && s.first_byte_at.is_none() {
            s.first_byte_at = Some(now);
        }
        // A reader that reads everything at once (`AppReader::reads_at_once`): its read
        // done here, the stream's part of `consume` (the connection's part follows in
        // the same order), so the stream is re-filed once and never in `readable`.
        let mut read = 0;
        let mut stream_window = 0;
        if delivered > 0 && at_once {
            read = s.recv.readable();
            stream_window = consume_stream(&mut s, now, srtt, read);
        }
        // Nothing changes the stream from here on but the reader's call.
        let completes = s.recv_complete_at.is_none() && s.recv.is_fully_read();
        drop(s);
        self.recv_fc.received += grew;
        if self.recv_fc.received > self.recv_fc.limit {
            self.stats.flow_control_violations += 1;
        }
        if self.migration.is_some() {
            self.migration_on_stream_bytes(now, new);
        }
        if read > 0 {
            self.consume_conn(now, srtt, stream_window, read);
        } else if delivered > 0 {
            // The `Readable` event, synchronously: the application reads now.
            reader.on_readable(now, self, id);
            self.check_read_complete(now, id);
            return;
        }
        if completes {
            self.complete_read(now, id);
        }
    }

    /// A STREAM frame for stream `id` that is not in the table: opens it (and every
    /// lower-numbered one of its type) if it is a remote bidirectional stream within our
    /// limit; `false` when the frame is to be ignored.
    #[cold]
    fn open_remote_streams(&mut self, id: u64) -> bool {
        let remote_bit = match self.role {
            Role::Client => 1,
            Role::Server => 0,
        };
        if id & 1 != remote_bit || id & 2 != 0 {
            return false; // not a remote bidirectional stream we know: ignore
        }
        let index = id / 4;
        if index >= self.local_max_streams {
            self.stats.stream_limit_violations += 1; // STREAM_LIMIT_ERROR
            return false;
        }
        // RFC 9000 §3.2: opening a stream opens all lower-numbered ones of its type
        // (those not open yet: remote streams open in order, only here).
        for k in self.remote_opened..=index {
            let sid = k * 4 + remote_bit;
            debug_assert!(!self.streams.contains_key(&sid));
            let fc = RecvFlow::with_params(self.cfg.stream_allowance());
            self.streams
                .insert(Stream::new(sid, self.peer_window_remote_streams, fc));
            self.events.push(ConnEvent::StreamOpened(sid));
        }
        self.remote_opened = self.remote_opened.max(index + 1);
        true
    }

    // ----- reads by the application ----------------------------------------------------------

    /// The application reads up to `max` readable bytes of stream `id` (RFC 9000 §2.2:
    /// in order); returns the bytes consumed.
    pub fn read(&mut self, now: SimTime, id: u64, max: u64) -> u64 {
        let n = self
            .streams
            .get(&id)
            .map_or(0, |s| s.recv.readable().min(max));
        if n > 0 {
            self.consume(now, id, n);
        }
        n
    }

    /// The lowest-numbered stream above `after` (any when `None`) with readable bytes,
    /// and how many.
    pub fn next_readable(&self, after: Option<u64>) -> Option<(u64, u64)> {
        self.streams.next_readable(after)
    }

    pub(super) fn consume(&mut self, now: SimTime, id: u64, n: u64) {
        let srtt = self.path.recovery.rtt().smoothed_rtt();
        let Some(mut s) = self.streams.get_recv_mut(&id) else {
            return;
        };
        let stream_window = consume_stream(&mut s, now, srtt, n);
        drop(s);
        self.consume_conn(now, srtt, stream_window, n);
        self.check_read_complete(now, id);
    }

    /// The connection's part of consuming `n` bytes of a stream (after
    /// [`consume_stream`]) whose window is now
    /// `stream_window`.
    #[inline]
    fn consume_conn(&mut self, now: SimTime, srtt: SimDuration, stream_window: u64, n: u64) {
        self.recv_fc.allowance.on_stream_window(stream_window);
        self.recv_fc.consumed += n;
        self.recv_fc.maybe_update(now, srtt);
        self.stats.stream_bytes_read += n;
    }

    pub(super) fn check_read_complete(&mut self, now: SimTime, id: u64) {
        // Looked at without `get_mut` first: a stream left unchanged needs no re-filing
        // (twice per received STREAM frame, completing once per stream).
        let completes = self
            .streams
            .get(&id)
            .is_some_and(|s| s.recv_complete_at.is_none() && s.recv.is_fully_read());
        if completes {
            self.complete_read(now, id);
        }
    }

    /// Stream `id` was read to its end: its receive half is complete.
    fn complete_read(&mut self, now: SimTime, id: u64) {
        let mut s = self
            .streams
            .get_recv_mut(&id)
            .expect("a stream read to its end");
        s.recv_complete_at = Some(now);
        s.recv_fc.update_pending = false;
        drop(s);
        self.events.push(ConnEvent::StreamReadComplete(id));
        self.maybe_close_stream(id);
    }

    /// A remote-initiated stream finished in both directions frees a stream credit:
    /// raise MAX_STREAMS (RFC 9000 §4.6).
    pub(super) fn maybe_close_stream(&mut self, id: u64) {
        let remote_bit = match self.role {
            Role::Client => 1,
            Role::Server => 0,
        };
        if id & 1 != remote_bit {
            return;
        }
        let s = &self.streams[&id];
        if s.recv_complete_at.is_some() && s.send_complete_at.is_some() {
            self.remote_closed += 1;
            self.local_max_streams = self.cfg.max_streams_bidi + self.remote_closed;
            self.max_streams_pending = true;
        }
    }

    // ----- timers --------------------------------------------------------------------------

    pub(super) fn idle_deadline(&self) -> SimTime {
        // RFC 9000 §10.1: at least three times the current PTO.
        let pto = self.path.recovery.pto_period(Space::Initial);
        let d = self.negotiated_idle_timeout().max(pto.saturating_mul(3));
        self.last_activity.saturating_add(d)
    }

    /// The connection's deadlines, read from their owners: the close state, the idle
    /// timer, the spaces' delayed ACKs, recovery's loss-detection timer, the workload's
    /// reader (`reader`, its deadline) and the pacer (only when it alone holds data back).
    /// The reference the per-call paths ([`Connection::poll_timeout`],
    /// [`Connection::handle_timeout`]) are checked against in builds with debug
    /// assertions; they read the same owners without building the table.
    pub(super) fn timers(&self, reader: Option<SimTime>) -> TimerTable {
        let mut t = TimerTable::default();
        if self.state.is_closed() {
            // The end of the closing or draining period.
            t.set(Timer::Close, self.state.close_deadline());
            return t;
        }
        t.set(Timer::Idle, Some(self.idle_deadline()));
        for (i, sp) in self.spaces.iter().enumerate() {
            if !sp.discarded {
                t.set(Timer::ack(i), sp.ack_deadline);
            }
        }
        t.set(
            Timer::LossDetection,
            self.path.recovery.loss_detection_timer(),
        );
        t.set(Timer::Reader, reader);
        t.set(Timer::Pacing, self.pacing_deadline());
        t.set(Timer::PathValidation, self.path.validation.deadline);
        t.set(Timer::PathChallenge, self.path.validation.retry_at);
        t
    }

    /// The pacing timer: when the pacer releases the next datagram, armed only while
    /// ack-eliciting data waits and the pacer alone holds it back. The cheap tests first:
    /// a bucket holding a datagram (or pacing off) has no release time, whatever the walk
    /// of the streams in `has_paced_work` would say; the release time's division last.
    fn pacing_deadline(&self) -> Option<SimTime> {
        if self.path.pacer.can_send() || !self.has_paced_work() {
            return None;
        }
        self.path.pacer_release_time()
    }

    /// The earliest deadline of [`Connection::timers`] (its `next()`), read from the
    /// owners without building the table.
    fn next_deadline(&self, reader: Option<SimTime>) -> Option<SimTime> {
        if self.state.is_closed() {
            return self.state.close_deadline();
        }
        // The idle timer is always armed, so the minimum is an instant.
        let mut next = self.idle_deadline();
        let mut arm = |at: Option<SimTime>| {
            if let Some(at) = at {
                next = next.min(at);
            }
        };
        for sp in &self.spaces {
            if !sp.discarded {
                arm(sp.ack_deadline);
            }
        }
        arm(self.path.recovery.loss_detection_timer());
        arm(reader);
        arm(self.path.validation.deadline);
        arm(self.path.validation.retry_at);
        arm(self.pacing_deadline());
        Some(next)
    }

    /// The earliest instant the connection needs [`Connection::handle_timeout`] (with
    /// `reader`'s deadline while the connection is open).
    pub fn poll_timeout(&self, reader: &dyn AppReader) -> Option<SimTime> {
        let at = reader.deadline();
        let next = self.next_deadline(at);
        debug_assert_eq!(
            next,
            self.timers(at).next(),
            "poll_timeout: not the table's"
        );
        next
    }

    /// Ack-eliciting data waits and only the pacer holds it back.
    pub(super) fn has_paced_work(&self) -> bool {
        self.path.pacer.is_enabled()
            && self.path.recovery.can_send(self.cfg.max_udp_payload)
            && (0..3).any(|i| self.can_send_space(i) && self.has_new_data(i))
    }

    /// Timers that are due fire (`reader`'s deadline after the delayed ACKs, before loss
    /// detection). Which ones are due is decided once, before any fires (as a snapshot of
    /// the table of `timers`; the pacing timer only makes the caller poll for a datagram,
    /// so it is not looked at here).
    pub fn handle_timeout(&mut self, now: SimTime, reader: &mut dyn AppReader) {
        if self.state.is_closed() {
            self.state.on_timeout(now);
            return;
        }
        let due = |at: Option<SimTime>| at.is_some_and(|t| t <= now);
        let reader_at = reader.deadline();
        let idle = due(Some(self.idle_deadline()));
        let ack = [0, 1, 2].map(|i| !self.spaces[i].discarded && due(self.spaces[i].ack_deadline));
        let reader_due = due(reader_at);
        let validation = due(self.path.validation.deadline);
        let challenge = due(self.path.validation.retry_at);
        let loss = due(self.path.recovery.loss_detection_timer());
        #[cfg(debug_assertions)]
        {
            let t = self.timers(reader_at);
            debug_assert_eq!(idle, t.expired(Timer::Idle, now));
            for (i, &a) in ack.iter().enumerate() {
                debug_assert_eq!(a, t.expired(Timer::ack(i), now));
            }
            debug_assert_eq!(reader_due, t.expired(Timer::Reader, now));
            debug_assert_eq!(validation, t.expired(Timer::PathValidation, now));
            debug_assert_eq!(challenge, t.expired(Timer::PathChallenge, now));
            debug_assert_eq!(loss, t.expired(Timer::LossDetection, now));
        }
        if idle {
            self.state.idle_timeout(now); // RFC 9000 §10.1: silently closed
            self.events
                .push(ConnEvent::Closed(CloseReason::IdleTimeout));
            self.trace_connection_state(now, ConnectionState::Closed);
            return;
        }
        for (sp, a) in self.spaces.iter_mut().zip(ack) {
            if a {
                sp.ack_immediate = true;
            }
        }
        if reader_due {
            reader.on_deadline(now, self);
        }
        if validation {
            self.on_path_validation_timeout(now);
            if self.state.is_closed() {
                return;
            }
        } else if challenge {
            self.path.validation.on_retry();
        }
        if loss {
            let out = self.path.recovery.on_loss_detection_timeout(now);
            for p in out.lost {
                let si = p.info.space;
                self.on_packet_lost(now, si, p, LossTrigger::TimeThreshold);
            }
            if let Some(space) = out.pto_probe {
                if self.path.validation.is_validating() {
                    // PATH_CHALLENGE is not retransmitted: a new one goes with the probe
                    // (RFC 9000 §13.3, §8.2.1).
                    self.path.validation.challenge_pending = true;
                }
                let i = Space::ALL.iter().position(|s| *s == space).unwrap_or(2);
                self.arm_probe(i);
            }
        }
        self.trace_metrics_update(now);
    }

    /// A PTO fired for space `i`: the next `pto_probes` ack-eliciting packets of that
    /// space may ignore the congestion window (RFC 9002 §6.2.4). With no new data to
    /// send, the oldest outstanding packet's data is queued again; with nothing at all,
    /// the probe is a PING.
    pub(super) fn arm_probe(&mut self, i: usize) {
        if self.spaces[i].discarded {
            return;
        }
        self.spaces[i].probes = self.cfg.pto_probes;
        // RFC 9002 §6.2.4: "in addition to sending data in the packet number space for
        // which the timer expired, the sender SHOULD send ack-eliciting packets from other
        // packet number spaces with in-flight data, coalescing packets if possible". The
        // model extends this to handshake spaces holding lost CRYPTO data waiting for the
        // congestion window (else a lost ServerHello can wait forever behind Handshake
        // packets the client cannot decrypt, hence never acknowledges).
        for j in 0..2 {
            if j != i
                && !self.spaces[j].discarded
                && self.can_send_space(j)
                && (self.path.recovery.ack_eliciting_in_flight(space_of(j)) > 0
                    || self.spaces[j].crypto_send.has_retx())
            {
                self.spaces[j].probes = self.spaces[j].probes.max(1);
                if !self.has_new_data(j) {
                    self.requeue_oldest_outstanding(j);
                }
            }
        }
        // Model extension of the same SHOULD: a resuming client probing a handshake space
        // also probes its 0-RTT data in flight (else a lost first flight leaves the
        // request waiting for the application-data PTO, armed only after confirmation).
        if i < 2
            && self.zero_rtt_send
            && self
                .path
                .recovery
                .ack_eliciting_in_flight(Space::ApplicationData)
                > 0
        {
            self.spaces[2].probes = self.spaces[2].probes.max(1);
            if !self.has_new_data(2) {
                self.requeue_oldest_outstanding(2);
            }
        }
        if self.has_new_data(i) {
            return;
        }
        self.requeue_oldest_outstanding(i);
    }

    /// Queues the data of the oldest outstanding ack-eliciting packet of space `i` again
    /// (a probe's "retransmission", RFC 9002 §6.2.4), without declaring it lost.
    pub(super) fn requeue_oldest_outstanding(&mut self, i: usize) {
        let frames: Vec<Frame> = self
            .path
            .recovery
            .outstanding(space_of(i))
            .find(|p| {
                p.ack_eliciting && self.sent_frames.iter(p.info.frames).any(is_retransmittable)
            })
            .map(|p| self.sent_frames.iter(p.info.frames).cloned().collect())
            .unwrap_or_default();
        self.requeue_frames(i, &frames);
    }

    pub(super) fn has_new_data(&self, i: usize) -> bool {
        let sp = &self.spaces[i];
        if sp.crypto_send.has_new() || sp.crypto_send.has_retx() {
            return true;
        }
        i == 2 && (self.has_control_frames() || self.has_sendable_stream_data())
    }

    pub(super) fn has_control_frames(&self) -> bool {
        self.handshake_done_pending
            || self.recv_fc.update_pending
            || self.max_streams_pending
            || self.send_fc.blocked_pending()
            || !self.path.validation.responses_pending.is_empty()
            || self.path.validation.challenge_pending
            || self
                .migration
                .as_ref()
                .is_some_and(|m| m.new_cid_pending || m.ping_pending)
            || self.streams.any_ctrl_where(|s| {
                s.send_fc.blocked_pending()
                    || (s.recv_fc.update_pending && !s.recv.is_fully_received())
            })
    }

    /// Stream data that flow control lets us send now (retransmissions always can).
    pub(super) fn has_sendable_stream_data(&self) -> bool {
        let conn_credit = self.send_fc.credit();
        self.streams.any_retx()
            || self
                .streams
                .any_new_where(|s| s.send.unsent() == 0 || (s.send_credit() > 0 && conn_credit > 0))
    }

    pub(super) fn has_unsent_stream_data(&self) -> bool {
        self.streams.any_retx() || self.streams.any_new()
    }
}

/// The stream's part of consuming `n` of its readable bytes: the read offset, its flow
/// control (a MAX_STREAM_DATA update while more may come); returns the stream's receive
/// window for the connection's part ([`Connection::consume_conn`]).
#[inline]
fn consume_stream(s: &mut Stream, now: SimTime, srtt: SimDuration, n: u64) -> u64 {
    s.recv.consumed += n;
    s.recv_fc.consumed = s.recv.consumed;
    if !s.recv.is_fully_received() {
        s.recv_fc.maybe_update(now, srtt);
    }
    s.recv_fc.allowance.window()
}
