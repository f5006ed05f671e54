//! The sender's loss recovery (RFC 9260 §6.3, §7.2): the chunks sent and not yet
//! cumulatively acknowledged, SACK processing (§6.2.1) with RTT measurement (§6.3.1),
//! fast retransmit on miss indications (§7.2.4, HTNA), T3-rtx expiry (§6.3.3) and the
//! congestion controller ([`Controller`]: RFC 9260's or a shared one).

use super::*;

/// A DATA chunk sent and not yet cumulatively acknowledged.
#[derive(Clone, Debug)]
pub(super) struct SentChunk {
    pub(super) chunk: DataChunk,
    /// Wire size (counted in the flight size and cwnd).
    pub(super) size: u64,
    /// Sent (last) at.
    pub(super) sent_at: SimTime,
    /// Sent more than once (Karn: no RTT sample).
    pub(super) retransmitted: bool,
    /// Acknowledged by a gap ack block.
    pub(super) gap_acked: bool,
    /// Counted in the flight size.
    pub(super) in_flight: bool,
    /// Miss indications (§7.2.4).
    pub(super) misses: u32,
    /// Fast-retransmitted once already.
    pub(super) fast_retransmitted: bool,
    /// Marked for retransmission (lost) and not yet resent.
    pub(super) marked: bool,
}

/// The congestion controller an association runs.
#[derive(Debug)]
pub(super) enum Controller {
    Rfc(SctpReno),
    Shared(Box<dyn CongestionController>),
}

impl Controller {
    pub(super) fn window(&self) -> u64 {
        match self {
            Controller::Rfc(c) => c.window(),
            Controller::Shared(c) => c.window(),
        }
    }
    pub(super) fn ssthresh(&self) -> Option<u64> {
        match self {
            Controller::Rfc(c) => Some(c.ssthresh()),
            Controller::Shared(c) => c.ssthresh(),
        }
    }
    pub(super) fn state_name(&self) -> &'static str {
        match self {
            Controller::Rfc(c) => c.state_name(),
            Controller::Shared(c) => c.state_name(),
        }
    }
}

/// The sender's outstanding data and its timers: the chunks sent and not yet
/// cumulatively acknowledged, those marked for retransmission, the flight size, the
/// RTT measurement in progress, T3-rtx and the RTO.
#[derive(Debug)]
pub(super) struct Recovery {
    pub(super) sent: TsnQueue<SentChunk>,
    /// TSNs marked for retransmission (lost, not yet resent), lowest first.
    pub(super) rtx: BTreeSet<u64>,
    /// One packet of marked chunks may go regardless of cwnd (§7.2.4 step 3).
    pub(super) fast_rtx_packet: bool,
    /// After a T3-rtx expiry: one packet of the earliest chunks goes (§6.3.3 E3), then
    /// nothing until a SACK acknowledges new data.
    pub(super) t3_hold: T3Hold,
    pub(super) flight: u64,
    /// User data bytes outstanding (sent, not acknowledged): rwnd accounting (§6.2.1).
    pub(super) outstanding_user: u64,
    pub(super) cum_ack: u64,
    pub(super) rto: SimDuration,
    pub(super) timed: Option<(u64, SimTime)>,
    pub(super) t3: Option<SimTime>,
    pub(super) error_count: u64,
    /// Reused by every SACK (no allocation per SACK): the newly acknowledged chunks'
    /// `(sent_at, size)` and the streams they belong to.
    pub(super) sack_acked: Vec<(SimTime, u64)>,
    pub(super) sack_touched: Vec<StreamId>,
}

impl Recovery {
    pub(super) fn new(rto: SimDuration) -> Self {
        Recovery {
            sent: TsnQueue::new(),
            rtx: BTreeSet::new(),
            fast_rtx_packet: false,
            t3_hold: T3Hold::Off,
            flight: 0,
            outstanding_user: 0,
            cum_ack: INITIAL_TSN - 1,
            timed: None,
            t3: None,
            error_count: 0,
            rto,
            sack_acked: Vec::new(),
            sack_touched: Vec::new(),
        }
    }
}

impl SctpAssociation {
    /// A SACK arrived (RFC 9260 §6.2.1 D): the chunks it acknowledges, the RTT, fast
    /// retransmit (§7.2.4), the window (§7.2), T3-rtx (§6.3.2) and the streams'
    /// completions, in that order.
    pub(super) fn receive_sack(&mut self, now: SimTime, s: &SackChunk) {
        // §6.2.1 D i: a SACK older than the cumulative point is dropped.
        if s.cum_tsn < self.rec.cum_ack || s.cum_tsn >= self.next_tsn {
            return;
        }
        let flight_before = self.rec.flight;
        let cum_advanced = s.cum_tsn > self.rec.cum_ack;
        let mut newly_acked = std::mem::take(&mut self.rec.sack_acked);
        newly_acked.clear();
        let mut touched = std::mem::take(&mut self.rec.sack_touched);
        touched.clear();
        let (bytes_acked, highest_newly_acked, rtt_sample) =
            self.sack_acknowledge(now, s, &mut newly_acked, &mut touched);
        if let Some(r) = rtt_sample {
            self.rtt.update(now, r, SimDuration::ZERO, None);
            self.rec.rto = self.computed_rto();
        }
        if bytes_acked > 0 {
            self.rec.error_count = 0;
            self.rec.t3_hold = T3Hold::Off;
        }
        self.sack_fast_retransmit(now, s, cum_advanced, highest_newly_acked);
        self.sack_window(
            now,
            s,
            &newly_acked,
            bytes_acked,
            cum_advanced,
            flight_before,
        );
        // §6.3.2 R2 / R3.
        if self.rec.sent.values().all(|c| c.gap_acked) {
            self.rec.t3 = None;
        } else if cum_advanced {
            self.rec.t3 = Some(now + self.rec.rto);
        }
        // Each stream once, in ascending order (as the set it replaces visited them).
        touched.sort_unstable();
        touched.dedup();
        for &id in &touched {
            self.check_send_complete(now, id);
        }
        self.rec.sack_acked = newly_acked;
        self.rec.sack_touched = touched;
    }

    /// The chunks the SACK newly acknowledges, cumulatively (they leave the sent queue)
    /// or by gap blocks; their `(sent_at, size)` go to `newly_acked`, their streams to
    /// `touched`. Returns the bytes newly acknowledged, the highest TSN newly
    /// acknowledged and the RTT sample (§6.3.1).
    fn sack_acknowledge(
        &mut self,
        now: SimTime,
        s: &SackChunk,
        newly_acked: &mut Vec<(SimTime, u64)>,
        touched: &mut Vec<StreamId>,
    ) -> (u64, Option<u64>, Option<SimDuration>) {
        let mut bytes_acked = 0;
        let mut highest_newly_acked = None;
        let mut rtt_sample = None;
        // Cumulatively acknowledged chunks leave the sent map.
        while let Some((tsn, c)) = self.rec.sent.pop_upto(s.cum_tsn) {
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::ChunkAcked {
                    tsn,
                    cumulative: true,
                })
            });
            if !c.gap_acked {
                self.rec.outstanding_user -= c.chunk.len;
                self.newly_acked(now, &c, tsn, &mut bytes_acked, &mut rtt_sample);
                highest_newly_acked = Some(tsn);
                newly_acked.push((c.sent_at, c.size));
            }
            if c.in_flight {
                self.rec.flight -= c.size;
            }
            if c.marked {
                self.rec.rtx.remove(&tsn);
                self.stats.spurious_losses += 1;
            }
            self.streams.mark_acked(&c.chunk);
            touched.push(c.chunk.stream);
        }
        self.rec.cum_ack = s.cum_tsn;
        // Gap ack blocks.
        for &(gs, ge) in &s.gaps {
            for tsn in self.rec.sent.tsns_in(gs, ge.saturating_add(1)) {
                let c = self.rec.sent.get(tsn).expect("listed");
                if c.gap_acked {
                    continue;
                }
                let c = c.clone();
                self.trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::ChunkAcked {
                        tsn,
                        cumulative: false,
                    })
                });
                self.newly_acked(now, &c, tsn, &mut bytes_acked, &mut rtt_sample);
                highest_newly_acked = Some(highest_newly_acked.map_or(tsn, |h: u64| h.max(tsn)));
                newly_acked.push((c.sent_at, c.size));
                self.rec.outstanding_user -= c.chunk.len;
                let e = self.rec.sent.get_mut(tsn).expect("listed");
                e.gap_acked = true;
                if e.in_flight {
                    e.in_flight = false;
                    self.rec.flight -= e.size;
                }
                if e.marked {
                    e.marked = false;
                    self.rec.rtx.remove(&tsn);
                    self.stats.spurious_losses += 1;
                }
                self.streams.mark_acked(&c.chunk);
                touched.push(c.chunk.stream);
            }
        }
        (bytes_acked, highest_newly_acked, rtt_sample)
    }

    /// §7.2.4: miss indications, marking for fast retransmit, the window reduction.
    fn sack_fast_retransmit(
        &mut self,
        now: SimTime,
        s: &SackChunk,
        cum_advanced: bool,
        highest_newly_acked: Option<u64>,
    ) {
        // §7.2.4 miss indications (HTNA): TSNs missing below the highest newly acked one;
        // in Fast Recovery, when the cumulative point advanced, every missing TSN below
        // the highest TSN the SACK reports.
        let in_fr = matches!(&self.cc, Controller::Rfc(c) if c.in_fast_recovery());
        let highest_reported = s.gaps.last().map_or(s.cum_tsn, |g| g.1);
        let limit = if in_fr && cum_advanced {
            Some(highest_reported)
        } else {
            highest_newly_acked.filter(|&h| h > s.cum_tsn)
        };
        let mut newly_marked = Vec::new();
        if let Some(limit) = limit {
            for (tsn, c) in self.rec.sent.range_mut(0, limit) {
                if c.gap_acked || c.marked {
                    continue;
                }
                c.misses += 1;
                if c.misses >= MISS_THRESHOLD && !c.fast_retransmitted {
                    c.fast_retransmitted = true;
                    c.marked = true;
                    newly_marked.push(tsn);
                }
            }
        }
        if !newly_marked.is_empty() {
            let mut newest_sent = SimTime::ZERO;
            for &tsn in &newly_marked {
                let c = self.rec.sent.get_mut(tsn).expect("listed");
                if c.in_flight {
                    c.in_flight = false;
                    self.rec.flight -= c.size;
                }
                newest_sent = newest_sent.max(c.sent_at);
                self.rec.rtx.insert(tsn);
                self.stats.chunks_lost += 1;
                if self.rec.timed.is_some_and(|(t, _)| t == tsn) {
                    self.rec.timed = None;
                }
                let pkt = self.lost_packet(tsn);
                self.trace.push_with(now, || TraceEvent::PacketLost {
                    packet: pkt,
                    trigger: LossTrigger::ReorderingThreshold,
                });
                self.trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::ChunkLost { tsn })
                });
            }
            self.stats.fast_retransmits += 1;
            let highest_marked = *newly_marked.last().expect("not empty");
            let was_in_fr = match &self.cc {
                Controller::Rfc(c) => c.in_fast_recovery(),
                Controller::Shared(c) => c.recovering(),
            };
            let reduced = match &mut self.cc {
                // §7.2.4 step 2; a TSN above the exit point marked in Fast Recovery
                // reduces when it ends (`SctpReno::on_fast_retransmit`).
                Controller::Rfc(c) => c.on_fast_retransmit(self.next_tsn - 1, highest_marked),
                Controller::Shared(c) => {
                    let was = c.window();
                    c.on_congestion_event(now, newest_sent, self.rec.flight);
                    c.window() != was || c.recovering()
                }
            };
            if reduced {
                self.stats.congestion_events += 1;
                self.stats.fast_recoveries += 1;
            }
            // §7.2.4 step 3: "If not in Fast Recovery", one packet of the earliest marked
            // chunks goes regardless of cwnd; chunks marked in Fast Recovery go when cwnd
            // allows (step 5).
            if !was_in_fr {
                self.rec.fast_rtx_packet = true;
            }
        }
        if self.rec.rtx.is_empty() {
            self.rec.fast_rtx_packet = false;
        }
    }

    /// The peer's rwnd (§6.2.1) and the controller's view of the SACK (§7.2.1-7.2.2).
    fn sack_window(
        &mut self,
        now: SimTime,
        s: &SackChunk,
        newly_acked: &[(SimTime, u64)],
        bytes_acked: u64,
        cum_advanced: bool,
        flight_before: u64,
    ) {
        // §6.2.1: rwnd = a_rwnd - bytes still outstanding.
        self.peer_rwnd = s.a_rwnd.saturating_sub(self.rec.outstanding_user);
        let fully_utilized = flight_before >= self.cc.window();
        match &mut self.cc {
            Controller::Rfc(c) => {
                let reduced = c.on_sack(SackInput {
                    bytes_acked,
                    cum_advanced,
                    cum_tsn: s.cum_tsn,
                    flight_before,
                    flight_after: self.rec.flight,
                    highest_outstanding: self.next_tsn - 1,
                });
                if reduced {
                    // The next window's loss, due since it was marked in the Fast
                    // Recovery that just ended: a new one begins.
                    self.stats.congestion_events += 1;
                    self.stats.fast_recoveries += 1;
                }
            }
            Controller::Shared(c) => {
                let snap = self.rtt.snapshot();
                for &(sent_at, size) in newly_acked {
                    c.on_packet_acked(now, sent_at, size, !fully_utilized, &snap);
                }
            }
        }
    }

    /// Counts a newly acknowledged chunk; takes the RTT sample if it was the timed one
    /// and was never retransmitted (§6.3.1 C4, C5: Karn).
    pub(super) fn newly_acked(
        &mut self,
        now: SimTime,
        c: &SentChunk,
        tsn: u64,
        bytes: &mut u64,
        sample: &mut Option<SimDuration>,
    ) {
        *bytes += c.size;
        if let Some((t, at)) = self.rec.timed {
            if t == tsn {
                self.rec.timed = None;
                if !c.retransmitted {
                    *sample = Some(now.saturating_since(at));
                }
            }
        }
    }

    /// RFC 9260 §6.3.1 C2/C3: `RTO = SRTT + max(4 RTTVAR, G)`, clamped to
    /// `[RTO.Min, RTO.Max]`.
    pub(super) fn computed_rto(&self) -> SimDuration {
        self.rtt
            .pto_base(GRANULARITY)
            .max(self.cfg.rto_min)
            .min(self.cfg.rto_max)
    }

    /// §6.3.3: E1 window, E2 backoff, E3 everything outstanding marked for
    /// retransmission (sent as cwnd allows: one packet at 1 MTU).
    pub(super) fn on_t3_expiry(&mut self, now: SimTime) {
        self.stats.t3_expirations += 1;
        self.rec.error_count += 1;
        if self.rec.error_count > self.cfg.association_max_retrans {
            self.end(now, CloseKind::IdleTimeout);
            return;
        }
        match &mut self.cc {
            Controller::Rfc(c) => c.on_timeout(),
            Controller::Shared(c) => {
                c.on_congestion_event(now, now, 0);
                c.on_persistent_congestion(now);
            }
        }
        self.stats.congestion_events += 1;
        self.rec.rto = (self.rec.rto.saturating_mul(2)).min(self.cfg.rto_max);
        self.rec.timed = None;
        self.rec.t3_hold = T3Hold::OnePacket;
        let tsns: Vec<u64> = self
            .rec
            .sent
            .iter()
            .filter(|(_, c)| !c.gap_acked && !c.marked)
            .map(|(t, _)| t)
            .collect();
        for tsn in tsns {
            let c = self.rec.sent.get_mut(tsn).expect("listed");
            c.marked = true;
            c.misses = 0;
            if c.in_flight {
                c.in_flight = false;
                self.rec.flight -= c.size;
            }
            self.rec.rtx.insert(tsn);
            self.stats.chunks_lost += 1;
            let pkt = self.lost_packet(tsn);
            self.trace.push_with(now, || TraceEvent::PacketLost {
                packet: pkt,
                trigger: LossTrigger::PtoExpired,
            });
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::ChunkLost { tsn })
            });
        }
    }

    pub(super) fn lost_packet(&self, tsn: u64) -> ProtocolPacket {
        let c = self.rec.sent.get(tsn).expect("outstanding");
        ProtocolPacket::Sctp(SctpPacket {
            vtag: self.vtag,
            number: tsn,
            chunks: vec![Chunk::Data(c.chunk)],
        })
    }
}
