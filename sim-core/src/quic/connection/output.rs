//! The connection's output: which packet number spaces may send, the datagram assembly
//! (coalescing, padding, registration with recovery, pacing and anti-amplification
//! accounting), packets built from the frame builders of
//! [`packetizer`](crate::quic::packetizer), control frames, the CONNECTION_CLOSE of the
//! closing period, and the blocked-time accounting.

use super::*;

/// The largest value a 2-byte QUIC varint holds (RFC 9000 §16).
const VARINT_2_MAX: u64 = (1 << 14) - 1;

impl Connection {
    // ----- output --------------------------------------------------------------------------

    pub(super) fn can_send_space(&self, i: usize) -> bool {
        if self.spaces[i].discarded {
            return false;
        }
        match i {
            0 => true,
            1 => self.state.has_handshake_keys(),
            _ => self.state.can_send_1rtt(self.role) || self.zero_rtt_send,
        }
    }

    pub(super) fn amplification_budget(&self) -> u64 {
        self.path.amplification.budget()
    }

    pub(super) fn update_amplification_state(&mut self) {
        if self.role == Role::Server {
            // At the limit when not even a minimal packet fits (RFC 9002 §6.2.2.1: no PTO
            // is armed then).
            let at_limit = self.path.amplification.at_limit();
            self.path.recovery.set_at_anti_amplification_limit(at_limit);
        }
    }

    /// The pacing gain in permille: `pacing_gain_slow_start` while the controller is in
    /// slow start, `pacing_gain` otherwise (Chromium: 2 and 1.25; RFC 9002 §7.7: one gain).
    pub(super) fn pacing_gain(&self) -> u64 {
        self.path.pacing_gain()
    }

    /// The next datagram to send now, with its UDP payload size.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(QuicDatagram, u64)> {
        let mut out = QuicDatagram::default();
        self.poll_transmit_into(now, &mut out)
            .map(|size| (out, size))
    }

    /// [`Connection::poll_transmit`] building the datagram in `out` (empty on entry, left
    /// empty when nothing is sent): a caller with a datagram buffer of its own (a pooled
    /// box) saves moving the datagram into it. Returns the datagram's UDP payload size.
    pub fn poll_transmit_into(&mut self, now: SimTime, out: &mut QuicDatagram) -> Option<u64> {
        debug_assert!(out.packets.is_empty() && out.conn == 0);
        debug_assert!(out.client_hello.is_none() && out.server_hello.is_none());
        if self.state.is_closed() {
            let (d, size) = self.poll_close(now)?;
            *out = d;
            return Some(size);
        }
        let mds = self.cfg.max_udp_payload;
        let amp = self.amplification_budget();
        let budget = mds.min(amp);
        self.path.pacer_refill(now);
        let cc_ok = self.path.recovery.can_send(mds);
        let paced_ok = self.path.pacer.can_send();
        let send_ok = cc_ok && paced_ok;
        if self.spaces[0].discarded && self.spaces[1].discarded && self.migration.is_none() {
            // The steady state: only the application space can send, so a datagram is one
            // packet of it and needs no padding (RFC 9000 §14.1 pads Initial datagrams,
            // §8.2.1 path-validation ones). The general path below gives the same result
            // with its per-space loop, record buffer and padding scans.
            let built = if self.can_send_space(2) {
                self.build_packet(now, 2, budget, send_ok, true)
            } else {
                None
            };
            let Some((pkt, info)) = built else {
                self.nothing_sent(now, amp, mds, cc_ok);
                return None;
            };
            let size = pkt.size;
            let is_probe = pkt.is_ack_eliciting() && self.spaces[2].probes > 0;
            if is_probe {
                self.spaces[2].probes -= 1;
            }
            out.packets.push(pkt);
            let bif_before = self.path.recovery.bytes_in_flight();
            let cwnd = self.path.recovery.cwnd();
            let datagram_id = self.stats.datagrams_sent;
            let app_limited = !self.has_sendable_stream_data();
            self.stamp_datagram(out);
            let (in_flight, eliciting) = self.register_sent(
                now,
                &out.packets[0],
                info,
                is_probe,
                app_limited,
                datagram_id,
            );
            self.datagram_sent(now, size, in_flight, eliciting, is_probe, bif_before, cwnd);
            debug_assert_eq!(out.size(), size);
            return Some(size);
        }
        // The packets go straight into the datagram (one move each), their records into a
        // reused buffer (empty between calls): no allocation per poll.
        let mut infos = std::mem::take(&mut self.scratch_infos);
        debug_assert!(infos.is_empty());
        let mut size = 0u64;
        for i in 0..3 {
            if !self.can_send_space(i) {
                continue;
            }
            let remaining = budget - size;
            // An ack-eliciting Initial needs a datagram of at least 1200 bytes
            // (RFC 9000 §14.1); the server may not be able to afford it.
            let initial_ok =
                i != 0 || remaining >= MIN_INITIAL_DATAGRAM || self.role == Role::Client;
            if let Some((pkt, info)) = self.build_packet(now, i, remaining, send_ok, initial_ok) {
                size += pkt.size;
                let short = pkt.ty == PacketType::OneRtt;
                out.packets.push(pkt);
                infos.push(info);
                if short {
                    break; // a short-header packet must be last (RFC 9000 §12.2)
                }
            }
        }
        if out.packets.is_empty() {
            self.scratch_infos = infos;
            self.nothing_sent(now, amp, mds, cc_ok);
            return None;
        }
        // Padding (RFC 9000 §14.1): a client pads every datagram carrying an Initial
        // packet; a server every datagram carrying an ack-eliciting Initial packet.
        let has_initial = out.packets.iter().any(|p| p.ty == PacketType::Initial);
        let eliciting_initial = out
            .packets
            .iter()
            .any(|p| p.ty == PacketType::Initial && p.is_ack_eliciting());
        // RFC 9000 §8.2.1, §8.2.2: a datagram carrying PATH_CHALLENGE or PATH_RESPONSE
        // is expanded to 1200 bytes, unless the anti-amplification limit forbids it.
        let path_frames = self.migration.is_some()
            && out.packets.iter().any(|p| {
                p.frames
                    .iter()
                    .any(|f| matches!(f, Frame::PathChallenge(_) | Frame::PathResponse(_)))
            });
        let must_pad = path_frames
            || match self.role {
                Role::Client => has_initial,
                Role::Server => eliciting_initial,
            };
        if must_pad && size < MIN_INITIAL_DATAGRAM {
            // PADDING in the last packet. A long header's Length varint can grow by a byte
            // with the padding, so the size is recomputed, not just added.
            let want = (MIN_INITIAL_DATAGRAM - size).min(budget - size);
            let cid = self.cfg.cid_len;
            let last = out.packets.last_mut().expect("non-empty");
            let token = if last.ty == PacketType::Initial && self.role == Role::Client {
                self.initial_token_len
            } else {
                0
            };
            let hdr = header_len_without_pn(last.ty, cid, cid, token);
            let largest_acked = self.spaces[last.ty.space_index()].largest_acked_by_peer;
            let pnl = pn_len(last.pn, largest_acked);
            let frames_len: u64 = last.frames.iter().map(Frame::wire_size).sum();
            debug_assert_eq!(packet_size(hdr, last.ty, pnl, frames_len), last.size);
            let mut pad = want;
            while pad > 0 && packet_size(hdr, last.ty, pnl, frames_len + pad) > last.size + want {
                pad -= 1;
            }
            if pad > 0 {
                last.frames.push(Frame::Padding { len: pad });
                let new_size = packet_size(hdr, last.ty, pnl, frames_len + pad);
                size += new_size - last.size;
                last.size = new_size;
            }
        }
        // Register with loss recovery.
        let bif_before = self.path.recovery.bytes_in_flight();
        let cwnd = self.path.recovery.cwnd();
        let mut any_in_flight = false;
        let mut any_eliciting = false;
        let mut probe = false;
        // At most one packet per space.
        let mut probe_flags = [false; 3];
        for (pkt, flag) in out.packets.iter().zip(probe_flags.iter_mut()) {
            let i = pkt.ty.space_index();
            let is_probe = pkt.is_ack_eliciting() && self.spaces[i].probes > 0;
            if is_probe {
                self.spaces[i].probes -= 1;
                probe = true;
            }
            *flag = is_probe;
        }
        let datagram_id = self.stats.datagrams_sent;
        let app_limited = !self.has_sendable_stream_data();
        self.stamp_datagram(out);
        for (k, (info, is_probe)) in infos.drain(..).zip(probe_flags).enumerate() {
            let (in_flight, eliciting) = self.register_sent(
                now,
                &out.packets[k],
                info,
                is_probe,
                app_limited,
                datagram_id,
            );
            any_in_flight |= in_flight;
            any_eliciting |= eliciting;
        }
        self.scratch_infos = infos;
        self.datagram_sent(
            now,
            size,
            any_in_flight,
            any_eliciting,
            probe,
            bif_before,
            cwnd,
        );
        debug_assert_eq!(out.size(), size);
        Some(size)
    }

    /// The end of a poll that sends nothing: the block state, the amplification state and
    /// the breakdown part from the state the poll found (`cc_ok`: the window had room).
    fn nothing_sent(&mut self, now: SimTime, amp: u64, mds: u64, cc_ok: bool) {
        if self.role == Role::Server && amp < mds && self.has_unsent_anything() {
            self.stats.amplification_blocked_events += 1;
        }
        // The block state and the breakdown ask the same two stream questions: asked
        // once (nothing in between changes the streams or the flow control).
        let unsent = self.has_unsent_stream_data();
        let sendable = unsent && self.has_sendable_stream_data();
        self.update_block_state(now, cc_ok, unsent, sendable);
        self.update_amplification_state();
        let part = self.breakdown_part_with(unsent, sendable);
        self.breakdown.set(now, part);
    }

    /// Registers packet `pkt` of a datagram being sent (its record `info`) with loss
    /// recovery, the statistics, ECN and the trace; returns whether it counts in flight
    /// and whether it is ack-eliciting.
    fn register_sent(
        &mut self,
        now: SimTime,
        pkt: &QuicPacket,
        info: SentInfo,
        is_probe: bool,
        app_limited: bool,
        datagram_id: u64,
    ) -> (bool, bool) {
        let i = pkt.ty.space_index();
        if pkt.ty == PacketType::ZeroRtt {
            self.stats.zero_rtt_packets_sent += 1;
            for f in &pkt.frames {
                if let Frame::Stream { len, .. } = f {
                    self.stats.zero_rtt_stream_bytes += len;
                }
            }
        }
        if self.trace.is_on() {
            let trigger = if is_probe {
                Some(SendTrigger::PtoProbe)
            } else if info.retransmission && i < 2 {
                Some(SendTrigger::RetransmitCrypto)
            } else if info.retransmission {
                Some(match self.last_loss_trigger {
                    LossTrigger::ReorderingThreshold => SendTrigger::RetransmitReordered,
                    _ => SendTrigger::RetransmitTimeout,
                })
            } else {
                None
            };
            self.trace.push(
                now,
                TraceEvent::PacketSent {
                    packet: ProtocolPacket::Quic(pkt.clone()),
                    datagram_id,
                    trigger,
                },
            );
        }
        let eliciting = pkt.is_ack_eliciting();
        let padded = pkt
            .frames
            .iter()
            .any(|f| matches!(f, Frame::Padding { .. }));
        let in_flight = eliciting || padded; // RFC 9002 §2: PADDING counts in flight
        self.stats.packets_sent += 1;
        if info.retransmission {
            self.stats.packets_retransmitted += 1;
        }
        let sent = SentPacket {
            pn: pkt.pn,
            time_sent: now,
            size: pkt.size,
            ack_eliciting: eliciting,
            in_flight,
            app_limited,
            ect0: self.ecn.marking,
            info,
        };
        self.ecn.on_sent(i);
        self.path.recovery.on_packet_sent(now, space_of(i), sent);
        if self.role == Role::Client && i == 1 && !self.spaces[0].discarded {
            // RFC 9001 §4.9.1: the client discards Initial keys when it first sends a
            // Handshake packet.
            self.discard_space(0);
        }
        (in_flight, eliciting)
    }

    /// The end of a poll that sends a datagram of `size` bytes (`bif_before`, `cwnd`: the
    /// bytes in flight and the window before it; `probe`: it carries a PTO probe).
    #[allow(clippy::too_many_arguments)]
    fn datagram_sent(
        &mut self,
        now: SimTime,
        size: u64,
        any_in_flight: bool,
        any_eliciting: bool,
        probe: bool,
        bif_before: u64,
        cwnd: u64,
    ) {
        // Only ack-eliciting datagrams are congestion controlled: an ACK-only Initial that
        // a client must pad to 1200 B (RFC 9000 §14.1) is in flight (PADDING, RFC 9002 §2)
        // but is not held back by the window.
        if any_eliciting && !probe && bif_before + size > cwnd {
            self.stats.cwnd_violations += 1;
        }
        if any_in_flight {
            self.path.pacer.on_sent(size);
        }
        if any_eliciting && !self.eliciting_sent_since_recv {
            // RFC 9000 §10.1: the idle timer also restarts on the first ack-eliciting
            // packet sent since the last reception.
            self.eliciting_sent_since_recv = true;
            self.last_activity = now;
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size;
        self.path.amplification.on_sent(size);
        self.update_amplification_state();
        self.set_block_state(now, BlockState::None);
        self.trace_metrics_update(now);
    }

    /// The [`crate::breakdown`] part the sender is in now (the module's rules, in order);
    /// `unsent` is `has_unsent_stream_data()`, `sendable` is `unsent &&
    /// has_sendable_stream_data()`.
    fn breakdown_part_with(&self, unsent: bool, sendable: bool) -> TimePart {
        debug_assert_eq!(unsent, self.has_unsent_stream_data());
        debug_assert_eq!(sendable, unsent && self.has_sendable_stream_data());
        // Some stream has data to retransmit: the retransmission index holds exactly
        // those (re-filed after every change, `StreamTable`), no walk of the streams.
        let retx = self.streams.any_retx();
        debug_assert_eq!(retx, self.streams.values().any(|s| s.send.has_retx()));
        let r = &self.path.recovery;
        if self.handshake_complete_at.is_none() {
            TimePart::Handshake
        } else if r.cc().recovering() || r.pto_count() > 0 || retx {
            TimePart::LossRecovery
        } else if !unsent {
            if r.bytes_in_flight() == 0 {
                TimePart::Idle
            } else {
                self.window_phase() // the last flight on its way
            }
        } else if !sendable {
            TimePart::FlowControl
        } else if self.amplification_budget() < self.cfg.max_udp_payload {
            TimePart::Handshake
        } else {
            self.window_phase()
        }
    }

    /// Slow start or congestion avoidance (RFC 9002 §7.3.1, §7.3.3).
    fn window_phase(&self) -> TimePart {
        TimePart::window_phase(self.path.recovery.cc().in_slow_start())
    }

    /// Closes the [`crate::breakdown`] accounting at `now` (the transfer completed).
    pub fn freeze_breakdown(&mut self, now: SimTime) {
        self.breakdown.freeze(now);
    }

    /// "Where the time went" from the connection start up to `now` (or to the freeze).
    pub fn time_breakdown(&self, now: SimTime) -> TimeBreakdown {
        self.breakdown.at(now)
    }

    pub(super) fn has_unsent_anything(&self) -> bool {
        (0..3).any(|i| !self.spaces[i].discarded && self.spaces[i].crypto_send.has_new())
            || self.has_unsent_stream_data()
    }

    /// The block state from the window (`cc_ok`) and the streams: `unsent` is
    /// `has_unsent_stream_data()`, `sendable` is `unsent && has_sendable_stream_data()`
    /// (asked by the caller, which needs them too).
    fn update_block_state(&mut self, now: SimTime, cc_ok: bool, unsent: bool, sendable: bool) {
        let st = if !unsent {
            BlockState::None
        } else if sendable {
            if self.amplification_budget() < self.cfg.max_udp_payload {
                BlockState::Amplification
            } else if !cc_ok {
                BlockState::Cwnd
            } else {
                BlockState::None
            }
        } else {
            BlockState::FlowControl
        };
        self.set_block_state(now, st);
    }

    #[inline]
    pub(super) fn set_block_state(&mut self, now: SimTime, st: BlockState) {
        // Unchanged on almost every call (after every datagram sent).
        if st != self.block_state {
            self.change_block_state(now, st);
        }
    }

    fn change_block_state(&mut self, now: SimTime, st: BlockState) {
        if self.trace.is_on() {
            if let Some((stream, reason)) = self.blocked_reason(self.block_state) {
                self.trace.push(
                    now,
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked: false,
                        reason,
                    },
                );
            }
            if let Some((stream, reason)) = self.blocked_reason(st) {
                self.trace.push(
                    now,
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked: true,
                        reason,
                    },
                );
            }
        }
        let d = now.saturating_since(self.block_since);
        match self.block_state {
            BlockState::None => {}
            BlockState::Cwnd => self.stats.cwnd_blocked += d,
            BlockState::FlowControl => self.stats.flow_control_blocked += d,
            BlockState::Amplification => self.stats.amplification_blocked += d,
        }
        self.block_state = st;
        self.block_since = now;
    }

    /// Closes the time accounting at `now` (for end-of-run metrics).
    pub fn blocked_times(&self, now: SimTime) -> (SimDuration, SimDuration, SimDuration) {
        let d = now.saturating_since(self.block_since);
        let (mut c, mut f, mut a) = (
            self.stats.cwnd_blocked,
            self.stats.flow_control_blocked,
            self.stats.amplification_blocked,
        );
        match self.block_state {
            BlockState::None => {}
            BlockState::Cwnd => c += d,
            BlockState::FlowControl => f += d,
            BlockState::Amplification => a += d,
        }
        (c, f, a)
    }

    pub(super) fn build_packet(
        &mut self,
        now: SimTime,
        i: usize,
        remaining: u64,
        cc_ok: bool,
        initial_ok: bool,
    ) -> Option<(QuicPacket, SentInfo)> {
        let ty = if i == 2 && !self.state.can_send_1rtt(self.role) {
            PacketType::ZeroRtt // client before 1-RTT keys (RFC 9000 §17.2.3)
        } else {
            PacketType::of_space(i)
        };
        let cid = self.cfg.cid_len;
        let hdr = header_len_without_pn(ty, cid, cid, self.token_len(ty));
        let pn = self.spaces[i].next_pn;
        let pnl = pn_len(pn, self.spaces[i].largest_acked_by_peer);
        // Long headers carry a Length varint (RFC 9000 §17.2, §16): 2 bytes for a Length
        // up to 16383, 4 bytes above. Reserve 2 unless the room allows a Length that needs
        // 4; with 16384 or 16385 bytes available the 2-byte form capped at 16383 holds
        // more than the 4-byte form, so it is kept (every packet that fitted before is
        // built the same).
        let length_field = if ty == PacketType::OneRtt { 0 } else { 2 };
        let fixed = hdr + length_field + pnl + AEAD_TAG_LEN;
        if remaining < fixed + MIN_PN_PLUS_PAYLOAD {
            return None;
        }
        let mut room = remaining - fixed;
        if ty != PacketType::OneRtt && pnl + room + AEAD_TAG_LEN > VARINT_2_MAX {
            let capped = VARINT_2_MAX - pnl - AEAD_TAG_LEN;
            let four = remaining.saturating_sub(hdr + 4 + pnl + AEAD_TAG_LEN);
            room = capped.max(four);
        }
        // No ACK frames in 0-RTT packets (RFC 9000 §12.4).
        let ack_wanted = self.spaces[i].new_since_ack
            && !self.spaces[i].to_ack.is_empty()
            && ty != PacketType::ZeroRtt;
        let ack_due = self.spaces[i].ack_due(now);
        let probe = self.spaces[i].probes > 0;
        let may_elicit = (cc_ok || probe) && initial_ok;
        if !may_elicit && !ack_due {
            // Nothing ack-eliciting may go and no ACK is due: no packet (the check at the
            // end would refuse it; building its ACK frame first changes nothing).
            return None;
        }
        // Nothing ack-eliciting to write (asked only when the writers would run, as the
        // look runs their first step on the streams).
        let quiet = i == 2 && !probe && may_elicit && self.app_frames_quiet();
        if quiet && !ack_due {
            // No ACK due either: no packet, as the end of this function would find after
            // running the writers (a receiver's every empty poll came here with its
            // window open).
            return None;
        }
        // The frame list and the record are made once a packet may follow (a default
        // frame list is two placeholder frames to write and to drop).
        let mut frames = FrameVec::new();
        let mut info = SentInfo {
            space: i,
            zero_rtt: ty == PacketType::ZeroRtt,
            ..SentInfo::default()
        };
        let room_before = room;
        let mut ack_plan = None;
        if ack_wanted {
            let (ranges, exp) = (self.cfg.max_ack_ranges, self.cfg.ack_delay_exponent);
            if let Some(plan) = packetizer::plan_ack(&mut self.spaces[i], now, room, ranges, exp) {
                room -= plan.size;
                // Its ranges are written below, once the packet is sure to go.
                frames.push(Frame::Ack {
                    ranges: AckRanges::default(),
                    ack_delay_encoded: plan.ack_delay_encoded,
                    ecn: plan.ecn.map(Box::new),
                });
                ack_plan = Some(plan);
            }
        }
        let mut eliciting = false;
        if quiet {
            // An ACK-only packet (a receiver's every ACK): the writers would write nothing.
            #[cfg(debug_assertions)]
            self.debug_check_writers_quiet(now, pn);
        } else if may_elicit {
            if i == 2 {
                eliciting |= self.write_control_frames(now, &mut frames, &mut room);
            }
            if i < 2 {
                let cs = &mut self.spaces[i].crypto_send;
                eliciting |= packetizer::write_crypto_frames(cs, &mut frames, &mut room, &mut info);
            } else {
                let src = self.stream_source();
                eliciting |=
                    packetizer::write_stream_frames(src, &mut frames, &mut room, &mut info);
            }
            if probe && !eliciting && room >= 1 {
                frames.push(Frame::Ping);
                room -= 1;
                eliciting = true;
            }
        }
        if frames.is_empty() || (!eliciting && !ack_due) {
            // No packet: the ACK frame built above goes unsent, and the record's copy of
            // its ranges goes back to the pool (a server with the window open and no data
            // to send came here on every poll and dropped a new buffer each time).
            self.buf_pool.recycle(info);
            return None;
        }
        if let Some(plan) = ack_plan {
            // The ACK frame (first) gets its ranges; the packet's record shares them.
            let mut kept = self.buf_pool.ranges();
            packetizer::fill_ack(&self.spaces[i], &plan, kept.make_mut());
            info.ack_ranges = Some(kept.clone());
            if let Some(Frame::Ack { ranges, .. }) = frames.first_mut() {
                *ranges = kept;
            }
        }
        // Every frame took exactly its size from the room.
        let mut frames_len = room_before - room;
        debug_assert_eq!(frames_len, frames.iter().map(Frame::wire_size).sum::<u64>());
        if pnl + frames_len < MIN_PN_PLUS_PAYLOAD {
            // RFC 9001 §5.4.2: enough bytes for the header-protection sample.
            let pad = MIN_PN_PLUS_PAYLOAD - pnl - frames_len;
            frames.push(Frame::Padding { len: pad });
            frames_len += pad;
        }
        let size = packet_size(hdr, ty, pnl, frames_len);
        debug_assert!(size <= remaining, "packet {size} > room {remaining}");
        let sp = &mut self.spaces[i];
        sp.next_pn += 1;
        if info.ack_ranges.is_some() {
            sp.on_ack_sent();
        }
        // The record keeps its retransmittable frames in the slab (no buffer per record).
        for f in frames.iter().filter(|f| is_retransmittable(f)) {
            self.sent_frames.push(&mut info.frames, f.clone());
        }
        Some((
            QuicPacket {
                ty,
                pn,
                size,
                frames,
            },
            info,
        ))
    }

    /// What the STREAM frame writer works on ([`packetizer::write_stream_frames`]).
    fn stream_source(&mut self) -> StreamSource<'_> {
        StreamSource {
            streams: &mut self.streams,
            send_fc: &mut self.send_fc,
            scheduler: self.cfg.scheduler,
            rr_cursor: &mut self.rr_cursor,
            bytes_retransmitted: &mut self.stats.stream_bytes_retransmitted,
        }
    }

    /// Debug builds: the writers that a quiet application space skips
    /// ([`Connection::app_frames_quiet`]) write nothing and return `false`; on one packet
    /// number in 16 they also leave the state they touch unchanged (its `Debug` form
    /// compared; every time it would make debug runs with many streams slow).
    #[cfg(debug_assertions)]
    fn debug_check_writers_quiet(&mut self, now: SimTime, pn: u64) {
        // Hashed as it is formatted: no allocation (the allocation-per-packet test runs
        // debug builds).
        let digest = |c: &Self| {
            crate::hash::fmt_digest(format_args!(
                "{:?}",
                (
                    &c.streams,
                    &c.send_fc,
                    &c.recv_fc,
                    &c.stats,
                    c.rr_cursor,
                    c.handshake_done_pending,
                    c.max_streams_pending,
                    &c.path.validation,
                    &c.migration,
                )
            ))
        };
        let before = pn.is_multiple_of(16).then(|| digest(self));
        let mut frames = FrameVec::new();
        let mut room = u64::from(u16::MAX);
        let mut info = SentInfo::default();
        let mut wrote = self.write_control_frames(now, &mut frames, &mut room);
        let src = self.stream_source();
        wrote |= packetizer::write_stream_frames(src, &mut frames, &mut room, &mut info);
        assert!(
            !wrote && frames.is_empty(),
            "a quiet space wrote {frames:?}"
        );
        if let Some(before) = before {
            assert_eq!(
                before,
                digest(self),
                "a quiet space's writers changed the state"
            );
        }
    }

    /// Whether [`Connection::write_control_frames`] and the STREAM frame writer would
    /// write nothing and change nothing now. Runs the newly-blocked check first (the
    /// control frame writer's own first step on the streams; the frames it writes before
    /// that touch no stream, so the check gives the same result here, and the writer's
    /// own call then finds nothing left to check).
    fn app_frames_quiet(&mut self) -> bool {
        self.streams.check_blocked();
        // No stream in the control index (its loop also clears a fully received stream's
        // update flag) and no new data (so the connection cannot become blocked) or data
        // to retransmit (the STREAM writer's whole input); then the connection-level
        // control frames as `has_control_frames` asks for them.
        !self.streams.any_ctrl()
            && !self.streams.any_new()
            && !self.streams.any_retx()
            && !self.has_control_frames()
    }

    pub(super) fn write_control_frames(
        &mut self,
        now: SimTime,
        frames: &mut FrameVec,
        room: &mut u64,
    ) -> bool {
        let mut wrote = false;
        let push = packetizer::push_frame;
        if self.handshake_done_pending && push(Frame::HandshakeDone, frames, room) {
            self.handshake_done_pending = false;
            wrote = true;
        }
        while let Some(&x) = self.path.validation.responses_pending.first() {
            if !push(Frame::PathResponse(x), frames, room) {
                break;
            }
            self.path.validation.responses_pending.remove(0);
            wrote = true;
        }
        if self.path.validation.challenge_pending && *room >= Frame::PathChallenge(0).wire_size() {
            let salt = super::migrate::challenge_salt(self.role);
            let data = self.path.validation.next_challenge(now, salt);
            let pto = self.path.recovery.pto_period(Space::ApplicationData);
            self.path.validation.arm_retry(now, pto);
            push(Frame::PathChallenge(data), frames, room);
            wrote = true;
        }
        if let Some(m) = self.migration.as_mut() {
            if m.ping_pending && push(Frame::Ping, frames, room) {
                m.ping_pending = false;
                wrote = true;
            }
            let f = Frame::NewConnectionId {
                seq: m.cid_seq,
                retire_prior_to: 0,
                cid_len: self.cfg.cid_len,
            };
            if m.new_cid_pending && push(f, frames, room) {
                m.new_cid_pending = false;
                m.new_cid_sent = true;
                wrote = true;
            }
        }
        if self.recv_fc.update_pending && push(Frame::MaxData(self.recv_fc.limit), frames, room) {
            self.recv_fc.update_pending = false;
            self.stats.max_data_sent += 1;
            wrote = true;
        }
        if self.max_streams_pending
            && push(
                Frame::MaxStreams {
                    bidi: true,
                    max: self.local_max_streams,
                },
                frames,
                room,
            )
        {
            self.max_streams_pending = false;
            wrote = true;
        }
        // Blocked signals (RFC 9000 §4.1): once per limit. Only streams changed since the
        // last look can have become blocked (`StreamTable::check_blocked`).
        self.streams.check_blocked();
        let conn_credit = self.send_fc.credit();
        let conn_blocked = conn_credit == 0
            && self
                .streams
                .any_new_where(|s| s.send.unsent() > 0 && s.send_credit() > 0);
        if conn_blocked {
            self.send_fc.on_blocked();
        }
        if self.send_fc.blocked_pending()
            && push(Frame::DataBlocked(self.send_fc.limit()), frames, room)
        {
            self.send_fc.on_blocked_sent();
            self.stats.data_blocked_sent += 1;
            wrote = true;
        }
        let mut n_msd = 0;
        let mut n_sdb = 0;
        let mut ids = std::mem::take(&mut self.ctrl_scratch);
        self.streams.ctrl_ids(&mut ids);
        for &id in &ids {
            let mut s = self.streams.get_mut(&id).expect("indexed");
            if s.recv_fc.update_pending && !s.recv.is_fully_received() {
                let f = Frame::MaxStreamData {
                    id: s.id,
                    max: s.recv_fc.limit,
                };
                if push(f, frames, room) {
                    s.recv_fc.update_pending = false;
                    n_msd += 1;
                    wrote = true;
                }
            } else if s.recv.is_fully_received() {
                s.recv_fc.update_pending = false;
            }
            if s.send_fc.blocked_pending() {
                let f = Frame::StreamDataBlocked {
                    id: s.id,
                    limit: s.send_fc.limit(),
                };
                if push(f, frames, room) {
                    s.send_fc.on_blocked_sent();
                    n_sdb += 1;
                    wrote = true;
                }
            }
        }
        self.ctrl_scratch = ids;
        self.stats.max_stream_data_sent += n_msd;
        self.stats.stream_data_blocked_sent += n_sdb;
        wrote
    }

    /// The CONNECTION_CLOSE datagram owed in the closing period, if any.
    pub(super) fn poll_close(&mut self, now: SimTime) -> Option<(QuicDatagram, u64)> {
        if !self.state.take_close_reply() {
            return None;
        }
        // RFC 9000 §10.2.3: before confirmation the peer may lack the keys of our
        // highest space, so the frame goes in every space it may be able to read,
        // coalesced: a client in Handshake and (once it has 1-RTT keys) 1-RTT packets, a
        // server in Initial and Handshake packets. Once confirmed, 1-RTT only.
        let hs = self.state.has_handshake_keys() && !self.spaces[1].discarded;
        let spaces: Vec<usize> = if self.state.is_handshake_confirmed() {
            vec![2]
        } else {
            match self.role {
                Role::Client => {
                    let mut v = Vec::new();
                    if hs {
                        v.push(1);
                    }
                    if self.state.is_handshake_complete() {
                        v.push(2);
                    }
                    if v.is_empty() {
                        v.push(0);
                    }
                    v
                }
                Role::Server => {
                    let mut v = Vec::new();
                    if !self.spaces[0].discarded {
                        v.push(0);
                    }
                    if hs {
                        v.push(1);
                    }
                    v
                }
            }
        };
        let cid = self.cfg.cid_len;
        let mut packets = PacketVec::new();
        let mut size = 0;
        for &i in &spaces {
            let ty = PacketType::of_space(i);
            let hdr = header_len_without_pn(ty, cid, cid, self.token_len(ty));
            let pn = self.spaces[i].next_pn;
            let pnl = pn_len(pn, self.spaces[i].largest_acked_by_peer);
            let mut frames = FrameVec::new();
            if !self.spaces[i].to_ack.is_empty() {
                let (ranges, exp) = (self.cfg.max_ack_ranges, self.cfg.ack_delay_exponent);
                let (sp, pool) = (&mut self.spaces[i], &mut self.buf_pool);
                if let Some((f, _)) = packetizer::build_ack(sp, now, 1000, ranges, exp, pool) {
                    frames.push(f);
                }
            }
            frames.push(Frame::ConnectionClose {
                error_code: 0, // NO_ERROR (RFC 9000 §20.1)
                reason_len: 0,
            });
            let mut frames_len: u64 = frames.iter().map(Frame::wire_size).sum();
            if pnl + frames_len < MIN_PN_PLUS_PAYLOAD {
                let pad = MIN_PN_PLUS_PAYLOAD - pnl - frames_len;
                frames.push(Frame::Padding { len: pad });
                frames_len += pad;
            }
            let mut psize = packet_size(hdr, ty, pnl, frames_len);
            let last = i == *spaces.last().expect("non-empty");
            if last && self.role == Role::Client && spaces.contains(&0) {
                // RFC 9000 §14.1: a client pads datagrams carrying Initial packets.
                let target = MIN_INITIAL_DATAGRAM.saturating_sub(size);
                let mut pad = target.saturating_sub(psize);
                while pad > 0 && packet_size(hdr, ty, pnl, frames_len + pad) > target {
                    pad -= 1;
                }
                if pad > 0 {
                    frames.push(Frame::Padding { len: pad });
                    psize = packet_size(hdr, ty, pnl, frames_len + pad);
                }
            }
            self.spaces[i].next_pn += 1;
            self.stats.packets_sent += 1;
            size += psize;
            packets.push(QuicPacket {
                ty,
                pn,
                size: psize,
                frames,
            });
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size;
        self.stats.connection_close_sent += 1;
        let mut out = QuicDatagram {
            packets,
            ..QuicDatagram::default()
        };
        self.stamp_datagram(&mut out);
        Some((out, size))
    }
}
