//! The association's output (RFC 9260 §6.1, §6.10): what the next packet carries
//! (control chunks, a SACK, retransmissions first, then new DATA cut round robin from
//! the streams, bundled up to the MTU, at most Max.Burst packets per opportunity), and
//! the per-packet accounting and trace.

use super::*;

impl SctpAssociation {
    /// The next packet to send now, if any. With nothing owed
    /// (`SctpAssociation::owes_nothing`) the steps are skipped: debug builds run them
    /// there too and check that they send nothing and (sampled) leave the state as it was.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<SctpPacket> {
        if self.owes_nothing() {
            #[cfg(debug_assertions)]
            {
                // The state digest on one packet number in 16: its cost grows with the
                // chunks outstanding (every poll, it quadrupled the debug test of a bulk
                // transfer's allocations).
                let before = self
                    .next_packet_number
                    .is_multiple_of(16)
                    .then(|| self.debug_digest());
                let sent = self.poll_steps(now);
                debug_assert!(sent.is_none(), "nothing owed, yet {sent:?}");
                if let Some(before) = before {
                    debug_assert_eq!(before, self.debug_digest(), "nothing owed: state changed");
                }
            }
            return None;
        }
        self.poll_steps(now)
    }

    /// Whether the next packet would carry nothing: no control chunk
    /// ([`SctpAssociation::control_quiet`]), no SACK due now and none to ride on data (a
    /// pending one waits for data or its timer, §6.2), nothing marked for retransmission,
    /// and new data none queued or held back (the window full, Max.Burst spent (§6.1 D),
    /// or T3's hold).
    #[inline]
    fn owes_nothing(&self) -> bool {
        self.control_quiet()
            && !self.rx.sack_now
            && !(self.rx.sack_pending && self.has_data_to_send())
            && self.rec.rtx.is_empty()
            && (self.streams.sendable.is_empty()
                || self.rec.flight >= self.cc.window()
                || self.burst_left == 0
                || self.rec.t3_hold != T3Hold::Off)
    }

    /// Debug builds: a digest of the association's `Debug` text (every field but the
    /// configuration, the scratch vector, the time breakdown and the tests' delivery log;
    /// destructured, so a new field must be placed here), for the check of
    /// [`SctpAssociation::poll_transmit`]'s nothing-owed path.
    #[cfg(debug_assertions)]
    fn debug_digest(&self) -> u64 {
        let SctpAssociation {
            side,
            cfg: _,
            state,
            vtag,
            started_at,
            handshake_at,
            closed,
            events,
            stats,
            trace,
            trace_state,
            trace_cc_state,
            trace_metrics,
            trace_rto,
            hs,
            streams,
            rec,
            next_tsn,
            peer_rwnd,
            cc,
            rtt,
            burst_left,
            rx,
            next_packet_number,
            spare_chunks: _,
            breakdown: _,
            #[cfg(test)]
                delivery_log: _,
        } = self;
        crate::hash::fmt_digest(format_args!(
            "{side:?} {state:?} {vtag:?} {started_at:?} {handshake_at:?} {closed:?} \
             {events:?} {stats:?} {trace:?} {trace_state:?} {trace_cc_state:?} \
             {trace_metrics:?} {trace_rto:?} {hs:?} {streams:?} {rec:?} {next_tsn:?} \
             {peer_rwnd:?} {cc:?} {rtt:?} {burst_left:?} {rx:?} {next_packet_number:?}"
        ))
    }

    /// The steps of [`SctpAssociation::poll_transmit`]: the control chunks, a SACK,
    /// retransmissions, new data.
    #[inline(always)]
    fn poll_steps(&mut self, now: SimTime) -> Option<SctpPacket> {
        // The spare vector (issue 14: no allocation per packet); every path that sends
        // nothing puts it back.
        let mut chunks: Vec<Chunk> = std::mem::take(&mut self.spare_chunks);
        chunks.clear();
        let room = self.cfg.max_packet() - COMMON_HEADER;
        // The control chunks of the handshake and the shutdown.
        let (mut chunks, mut room) = match self.poll_control(now, chunks, room) {
            Ok(done) => return done,
            Err(go_on) => go_on,
        };
        // A SACK goes first when due, and rides along with anything else sent.
        let data_possible = self.has_data_to_send();
        if self.rx.sack_now || (self.rx.sack_pending && (data_possible || !chunks.is_empty())) {
            let sack = self.build_sack(room);
            room -= sack.wire_size();
            chunks.push(sack);
        }
        // Retransmissions first (§6.1 C, §7.2.4 step 3), then new data (§6.1 B).
        let (any_rtx, first_outstanding_resent, trigger) =
            self.push_retransmissions(now, &mut chunks, &mut room);
        self.push_new_data(now, &mut chunks, room);
        if chunks.is_empty() {
            self.spare_chunks = chunks;
            return None;
        }
        if any_rtx {
            self.stats.packets_retransmitted += 1;
        }
        // §6.3.2 R1: started if not running; §7.2.4 step 4: restarted when the first
        // outstanding DATA chunk is retransmitted.
        let has_data = chunks.iter().any(|c| matches!(c, Chunk::Data(_)));
        if (has_data && self.rec.t3.is_none()) || first_outstanding_resent {
            self.rec.t3 = Some(now + self.rec.rto);
        }
        let pkt = self.finish_packet_inline(now, chunks, trigger);
        self.probe_window(now);
        Some(pkt)
    }

    /// Marked chunks, earliest first, as the window (or §7.2.4 step 3's / §6.3.3 E3's one
    /// packet) and `room` allow. Returns whether any went, whether the first outstanding
    /// TSN did, and the send trigger.
    fn push_retransmissions(
        &mut self,
        now: SimTime,
        chunks: &mut Vec<Chunk>,
        room: &mut u64,
    ) -> (bool, bool, Option<SendTrigger>) {
        let mut trigger = None;
        let mut any_rtx = false;
        let mut first_outstanding_resent = false;
        let t3_packet = self.rec.t3_hold == T3Hold::OnePacket;
        let ignore_cwnd = (self.rec.fast_rtx_packet || t3_packet) && !self.rec.rtx.is_empty();
        if self.rec.t3_hold == T3Hold::Holding {
            // §6.3.3 E3: the one packet is out; wait for a SACK.
        } else if ignore_cwnd || self.rec.flight < self.cc.window() {
            let tsns: Vec<u64> = self.rec.rtx.iter().copied().collect();
            for tsn in tsns {
                let c = self.rec.sent.get(tsn).expect("marked chunk is outstanding");
                if c.size > *room || (!ignore_cwnd && self.rec.flight >= self.cc.window()) {
                    break;
                }
                *room -= c.size;
                // The first outstanding TSN is the one after the cumulative point.
                first_outstanding_resent |= tsn == self.rec.cum_ack + 1;
                let c = self.rec.sent.get_mut(tsn).expect("listed");
                c.marked = false;
                c.retransmitted = true;
                c.in_flight = true;
                c.misses = 0;
                c.sent_at = now;
                self.rec.flight += c.size;
                self.rec.rtx.remove(&tsn);
                self.stats.chunks_retransmitted += 1;
                self.stats.stream_bytes_retransmitted += c.chunk.len;
                // §6.3.1 C5 (Karn) and its implementation note: no measurement from a
                // TSN r once a TSN <= r was retransmitted after r was sent.
                if self.rec.timed.is_some_and(|(t, _)| tsn <= t) {
                    self.rec.timed = None;
                }
                let size = c.size;
                chunks.push(Chunk::Data(c.chunk));
                any_rtx = true;
                if let Controller::Shared(cc) = &mut self.cc {
                    cc.on_packet_sent(now, size, self.rec.flight);
                }
            }
            if any_rtx {
                self.rec.fast_rtx_packet = false;
                if t3_packet {
                    self.rec.t3_hold = T3Hold::Holding;
                }
                trigger = Some(if self.rec.t3_hold == T3Hold::Off {
                    SendTrigger::RetransmitReordered
                } else {
                    SendTrigger::RetransmitTimeout
                });
            }
        }
        (any_rtx, first_outstanding_resent, trigger)
    }

    /// New DATA while the window allows (§6.1 B), one burst of Max.Burst (§6.1 D).
    fn push_new_data(&mut self, now: SimTime, chunks: &mut Vec<Chunk>, mut room: u64) {
        if self.rec.rtx.is_empty() && self.burst_left > 0 && self.rec.t3_hold == T3Hold::Off {
            let mut new_data = false;
            while self.rec.flight < self.cc.window() {
                let Some(d) = self.next_new_chunk(room, now) else {
                    break;
                };
                room -= data_chunk_size(d.wire_len());
                chunks.push(Chunk::Data(d));
                new_data = true;
            }
            if new_data {
                self.burst_left -= 1;
            }
        }
    }

    /// Cuts the next new DATA chunk (round robin over the streams with queued messages)
    /// if it fits `room` and the peer's rwnd (§6.1 A), and records it as sent.
    #[inline(always)]
    pub(super) fn next_new_chunk(&mut self, room: u64, now: SimTime) -> Option<DataChunk> {
        // No chunk fits (the packet is full): answered before the stream lookup, and
        // without the call (one packet in two asks again once full).
        if DATA_HEADER + 1 > room {
            return None;
        }
        self.cut_new_chunk(room, now)
    }

    /// [`SctpAssociation::next_new_chunk`] past the test for a full packet.
    #[inline(never)]
    fn cut_new_chunk(&mut self, room: u64, now: SimTime) -> Option<DataChunk> {
        let pmdcs = self.cfg.pmdcs();
        let id = self.streams.next_sendable()?;
        let s = self.streams.send_streams.get_mut(&id).expect("found");
        let m = s.msgs.front_mut().expect("ready");
        let len = (m.len - m.cut).min(pmdcs);
        let wire_len = len.max(1);
        if DATA_HEADER + wire_len > room {
            return None;
        }
        // §6.1 A: within the peer's rwnd, or one chunk when nothing is outstanding (the
        // zero window probe).
        if len > self.peer_rwnd && !self.rec.sent.is_empty() {
            return None;
        }
        let d = DataChunk {
            tsn: self.next_tsn,
            stream: id,
            sid: s.sid,
            ssn: m.ssn,
            offset: m.start + m.cut,
            len,
            begin: m.cut == 0,
            end: m.cut + len == m.len,
            fin: m.fin,
        };
        m.cut += len;
        if m.cut == m.len {
            s.msgs.pop_front();
            if s.msgs.is_empty() {
                self.streams.sendable.remove(&id);
            }
        }
        self.streams.rr_cursor = Some(id);
        self.next_tsn += 1;
        let size = data_chunk_size(wire_len);
        self.rec.flight += size;
        self.rec.outstanding_user += len;
        self.peer_rwnd = self.peer_rwnd.saturating_sub(len);
        if self.rec.timed.is_none() {
            self.rec.timed = Some((d.tsn, now));
        }
        self.rec.sent.push(
            d.tsn,
            SentChunk {
                chunk: d,
                size,
                sent_at: now,
                retransmitted: false,
                gap_acked: false,
                in_flight: true,
                misses: 0,
                fast_retransmitted: false,
                marked: false,
            },
        );
        if let Controller::Shared(cc) = &mut self.cc {
            cc.on_packet_sent(now, size, self.rec.flight);
        }
        Some(d)
    }

    /// `pkt` was just put in a recycled box whose old content was `old`: keeps `old`'s
    /// chunk vector (emptied) for the next packet, so that steady state allocates none.
    /// Only capacity moves: `pkt` keeps its chunks.
    pub fn recycle_packet(&mut self, pkt: &mut SctpPacket, old: SctpPacket) {
        let mut chunks = old.chunks;
        chunks.clear();
        if self.spare_chunks.capacity() < chunks.capacity() {
            self.spare_chunks = chunks;
        }
        let _ = pkt;
    }

    /// The packet of `chunks`: numbered, counted, traced.
    #[inline(never)]
    pub(super) fn finish_packet(
        &mut self,
        now: SimTime,
        chunks: Vec<Chunk>,
        trigger: Option<SendTrigger>,
    ) -> SctpPacket {
        self.finish_packet_inline(now, chunks, trigger)
    }

    /// [`SctpAssociation::finish_packet`] inlined, for the data path (as a call its frame
    /// cost ~20 instructions per packet).
    #[inline(always)]
    fn finish_packet_inline(
        &mut self,
        now: SimTime,
        chunks: Vec<Chunk>,
        trigger: Option<SendTrigger>,
    ) -> SctpPacket {
        let pkt = SctpPacket {
            vtag: self.vtag,
            number: self.next_packet_number,
            chunks,
        };
        self.next_packet_number += 1;
        self.stats.packets_sent += 1;
        // `pkt.size()` and the DATA chunk count in one pass over the chunks.
        let (mut size, mut data_chunks) = (COMMON_HEADER, 0u64);
        for c in &pkt.chunks {
            size += c.wire_size();
            data_chunks += u64::from(matches!(c, Chunk::Data(_)));
        }
        self.stats.bytes_sent += size;
        self.stats.data_chunks_sent += data_chunks;
        self.trace.push_with(now, || TraceEvent::PacketSent {
            packet: ProtocolPacket::Sctp(pkt.clone()),
            datagram_id: pkt.number,
            trigger,
        });
        if self.trace.is_on() {
            let packet_size = pkt.size();
            for d in pkt.data() {
                let c = self
                    .rec
                    .sent
                    .get(d.tsn)
                    .expect("a sent chunk is outstanding");
                let p = SenderProbe::ChunkSent {
                    tsn: d.tsn,
                    stream: d.stream,
                    len: d.len,
                    size: c.size,
                    packet_size,
                    retransmission: c.retransmitted,
                };
                self.trace.push(now, TraceEvent::SenderProbe(p));
            }
        }
        pkt
    }

    /// The checkers' window probe: cwnd, the floor the controller keeps (RFC 9260 §7.2.3
    /// and §6.3.3: 1 MTU after a T3-rtx expiry; a shared controller's own minimum), the
    /// flight size and the path MTU.
    pub(super) fn probe_window(&mut self, now: SimTime) {
        if !self.trace.is_on() {
            return;
        }
        let minimum = match &self.cc {
            Controller::Rfc(_) => self.cfg.mtu,
            Controller::Shared(c) => c.minimum_window(),
        };
        let p = SenderProbe::Window {
            cwnd: self.cc.window(),
            minimum,
            bytes_in_flight: self.rec.flight,
            smss: self.cfg.mtu,
        };
        self.trace.push(now, TraceEvent::SenderProbe(p));
    }
}
