//! Unidirectional links: drop-tail queue, serializer, propagation, impairments.
//!
//! A packet offered to a link goes through, in order:
//! 1. **ingress impairments** (when `loss_position = ingress`, the default, as netem):
//!    the loss stage and the corruption stage each judge the packet; a lost packet uses no
//!    link time;
//! 2. **the drop-tail queue**: if the serializer is busy (or the link is down) the packet
//!    waits. The limit counts only packets *waiting for the serializer*: not the one being
//!    serialized, nor those propagating. A packet that would exceed the packet or byte
//!    limit is dropped (`queue_overflow`);
//!    With `ecn` marking ([`crate::config::ecn`]), the queue first judges whether the
//!    packet gets a congestion signal (step threshold or RED on the backlog it finds): an
//!    ECN-capable packet is marked CE and goes on (RFC 3168 §5), any other is dropped
//!    (`aqm`); a marked packet is still subject to the limit;
//! 3. **the serializer** at `rate`: the wire size is datagram size + `overhead`.
//!    Departure times come from cumulative bits since the serializer last became busy, in
//!    `u128` integer arithmetic (`start + ceil(bits * 1e9 / rate)`), so back-to-back
//!    packets never accumulate rounding drift;
//! 4. **egress impairments** (when `loss_position = egress`, as on a radio): the packet
//!    used link time and may still be lost or corrupted;
//! 5. **propagation**: `delay` plus jitter (drawn for every serialized packet). Without reordering, arrival =
//!    max(computed, previous arrival), which also keeps FIFO order when a scheduled change
//!    lowers the delay.
//!
//! A corrupted packet travels normally and is discarded by the node at the far end
//! (counted as a `corruption` drop on this link).
//!
//! **Trace-driven links** (`rate = { trace = "..." }`, [`crate::config::trace`]) have no
//! rate on the serializer: a packet departs at a *delivery opportunity* of the trace, as
//! Mahimahi's `mm-link` spends them (mahimahi, `src/packet/link_queue.cc`,
//! `LinkQueue::rationalize`): each opportunity carries 1500 bytes; a packet larger than
//! what is left of the current opportunity takes its remaining bytes from the following
//! ones (it departs at the opportunity that carries its last byte); the bytes an
//! opportunity has left after a packet serve the next packet *already queued* at that
//! instant, and are lost otherwise (an opportunity of an empty queue is wasted). A packet
//! reaching an idle link at `t` can use only opportunities strictly after `t` (Mahimahi
//! spends the opportunities due at `now` before it enqueues the packet that arrives then).
//! The trace's time 0 is the start of the run, and it repeats after its last timestamp.
//!
//! Scheduled changes of rate apply from the next packet to start serialization (the packet
//! on the serializer finishes at the old rate). Rate 0 means the link is down: packets
//! wait in the queue (subject to its limit) until the rate becomes positive again.
//!
//! A link can be *flushed* (handover): every packet waiting, serializing or propagating is
//! dropped with reason `handover`, and events already scheduled for it are ignored (the
//! link's generation number changes).

#[cfg(test)]
mod ecn_tests;
pub mod impair;
#[cfg(test)]
mod trace_tests;

use crate::config::trace::{LinkTrace, OPPORTUNITY_BYTES};
use crate::config::{EcnMarking, LinkChange, LinkConfig, LossPosition, QueueLimit};
use crate::metrics::{DropReason, LinkReport};
use crate::packet::{Datagram, Ecn};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use crate::units::Rate;
use impair::{CorruptionStage, JitterStage, LossStage};
use std::collections::VecDeque;

/// Index of a link in the network.
pub type LinkId = usize;

/// What happened to a packet offered to a link.
#[derive(Debug)]
pub enum Offer {
    /// Dropped at ingress.
    Dropped(DropReason, Datagram),
    /// Waiting in the queue, or the serializer started on it.
    Accepted,
    /// Accepted and the serializer became busy: schedule a `TxDone` at this time.
    StartedTx(SimTime),
}

/// What the end of a serialization produced.
#[derive(Debug)]
pub struct TxDone {
    /// The packet, dropped at egress, or `None` if it propagates (an arrival must be
    /// scheduled at `arrival`).
    pub dropped: Option<(DropReason, Datagram)>,
    /// When the packet reaches the far end (if it was not dropped).
    pub arrival: Option<SimTime>,
    /// If the serializer started on the next packet: when it will be done.
    pub next_tx_done: Option<SimTime>,
}

/// One unidirectional link.
pub struct Link {
    /// Stable name (also the prefix of its random streams).
    pub name: String,
    /// Node at the sending end.
    pub from: usize,
    /// Node at the receiving end.
    pub to: usize,
    rate: Rate,
    delay: SimDuration,
    overhead: u64,
    limit: QueueLimit,
    position: LossPosition,
    loss: LossStage,
    corruption: CorruptionStage,
    jitter: JitterStage,
    reorder: bool,
    changes: Vec<LinkChange>,
    next_change: usize,

    queue: VecDeque<Datagram>,
    queue_bytes: u64,
    serializing: Option<Datagram>,
    tx_started: SimTime,
    epoch_start: SimTime,
    epoch_bits: u128,
    epoch_valid: bool,
    /// `epoch_end()` as of the last `start_tx` (the epoch's fields change only there, and
    /// a rate change or a flush invalidates the epoch).
    epoch_end_at: SimTime,
    /// Propagating packets, ordered by arrival time (then by departure order).
    propagating: VecDeque<(SimTime, u64, Datagram)>,
    prop_seq: u64,
    last_arrival: SimTime,
    /// Bumped by [`Link::flush`]; events carry it so stale ones are ignored.
    pub generation: u32,
    /// Accounting.
    pub report: LinkReport,
    busy_ns: u128,
    loss_judged: u64,
    loss_in_burst: bool,
    trace: Option<TraceState>,
    ecn: Option<EcnState>,
}

/// A marking queue's state ([`crate::config::ecn`]).
struct EcnState {
    marking: EcnMarking,
    /// RED's draws: the link's own stream `link/<name>/ecn`, derived only on a link with
    /// marking (no other stream moves).
    rng: RngStream,
    /// RED: the averaged backlog, bytes.
    avg: f64,
    /// RED: packets since the last signal (Floyd & Jacobson's `count`; −1 while `avg` is
    /// below `min`).
    count: i64,
}

impl EcnState {
    /// Whether the packet offered now, finding `backlog` bytes waiting at `rate_bps`, gets
    /// the congestion signal.
    fn signal(&mut self, backlog: u64, rate_bps: u64) -> bool {
        match self.marking {
            // Step: at or above the threshold (RFC 9332 §5.2's step, RFC 8257 §3.1's K).
            EcnMarking::Step { threshold } => backlog >= threshold.bytes(rate_bps),
            EcnMarking::Red {
                min,
                max,
                max_p,
                weight,
            } => {
                // Floyd & Jacobson 1993, §4 (the idle-time correction of avg is left out:
                // avg is sampled at arrivals only).
                self.avg = (1.0 - weight) * self.avg + weight * backlog as f64;
                let (lo, hi) = (min.bytes(rate_bps) as f64, max.bytes(rate_bps) as f64);
                if self.avg < lo {
                    self.count = -1;
                    return false;
                }
                if self.avg >= hi || hi <= lo {
                    self.count = 0;
                    return true;
                }
                self.count += 1;
                let pb = max_p * (self.avg - lo) / (hi - lo);
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
                if self.rng.uniform() < pa {
                    self.count = 0;
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// Where a trace-driven link is in its trace.
struct TraceState {
    trace: LinkTrace,
    /// Index (across cycles) of the next unused opportunity.
    next: u64,
    /// Bytes left in the last opportunity used, and its time.
    left: u64,
    left_at: SimTime,
}

impl TraceState {
    /// When a packet of `bytes` wire bytes that the serializer takes at `now` departs;
    /// `queued`: it was waiting in the queue when the previous packet departed at `now`
    /// (it may use that opportunity's leftover bytes), else it just reached an idle link.
    fn depart(&mut self, now: SimTime, bytes: u64, queued: bool) -> SimTime {
        let mut need = bytes.max(1);
        if queued {
            // The queue's next packet: the rest of the opportunity the previous packet
            // departed at, then the next opportunities (others due at `now` included).
            if self.left > 0 && self.left_at == now {
                let take = need.min(self.left);
                need -= take;
                self.left -= take;
                if need == 0 {
                    return now;
                }
            }
        } else {
            // Opportunities due up to `now` went by unused (Mahimahi burns them before it
            // enqueues a packet arriving at `now`).
            self.left = 0;
            self.next = self.next.max(self.trace.first_after(now.0));
        }
        loop {
            let at = SimTime(self.trace.opportunity_ns(self.next));
            self.next = self.next.saturating_add(1);
            let take = need.min(OPPORTUNITY_BYTES);
            need -= take;
            if need == 0 {
                self.left = OPPORTUNITY_BYTES - take;
                self.left_at = at;
                return at;
            }
        }
    }
}

impl Link {
    /// Builds a link; its random streams are derived from `seed` and `name`.
    pub fn new(name: &str, from: usize, to: usize, cfg: &LinkConfig, seed: u64) -> Self {
        let mut changes = cfg.changes.clone();
        changes.sort_by_key(|c| c.at);
        Link {
            name: name.to_string(),
            from,
            to,
            rate: cfg.rate,
            delay: cfg.delay,
            overhead: cfg.overhead.0,
            limit: cfg.queue,
            position: cfg.loss_position,
            loss: LossStage::new(
                &cfg.loss,
                RngStream::derive(seed, &format!("link/{name}/loss")),
            ),
            corruption: CorruptionStage::new(
                cfg.corruption,
                RngStream::derive(seed, &format!("link/{name}/corruption")),
            ),
            jitter: JitterStage::new(
                cfg.jitter,
                RngStream::derive(seed, &format!("link/{name}/jitter")),
            ),
            reorder: cfg.jitter.map(|j| j.reorder).unwrap_or(false),
            changes,
            next_change: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            serializing: None,
            tx_started: SimTime::ZERO,
            epoch_start: SimTime::ZERO,
            epoch_bits: 0,
            epoch_valid: false,
            epoch_end_at: SimTime::ZERO,
            propagating: VecDeque::new(),
            prop_seq: 0,
            last_arrival: SimTime::ZERO,
            generation: 0,
            report: LinkReport {
                name: name.to_string(),
                model_loss_rate: cfg.loss.stationary_loss(),
                ecn_marked: cfg.ecn.map(|_| 0),
                ..Default::default()
            },
            busy_ns: 0,
            loss_judged: 0,
            loss_in_burst: false,
            trace: cfg.trace.clone().map(|trace| TraceState {
                trace,
                next: 0,
                left: 0,
                left_at: SimTime::ZERO,
            }),
            ecn: cfg.ecn.map(|marking| EcnState {
                marking,
                rng: RngStream::derive(seed, &format!("link/{name}/ecn")),
                avg: 0.0,
                count: -1,
            }),
        }
    }

    /// Scheduled changes of this link (sorted by time).
    pub fn changes(&self) -> &[LinkChange] {
        &self.changes
    }

    /// Current rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Current propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// Packets waiting for the serializer.
    pub fn queue_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Bytes (size + overhead) waiting for the serializer.
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }

    /// Packets anywhere on the link (waiting, serializing, propagating).
    pub fn packets_on_link(&self) -> u64 {
        self.queue.len() as u64 + self.serializing.is_some() as u64 + self.propagating.len() as u64
    }

    fn wire_bytes(&self, d: &Datagram) -> u64 {
        d.size as u64 + self.overhead
    }

    /// Runs the loss and corruption stages on one packet (always both: fixed draws per
    /// packet). Returns the drop reason, or marks the packet corrupted.
    fn impair(&mut self, d: &mut Datagram) -> Option<DropReason> {
        let lost = self.loss.judge();
        let corrupt = self.corruption.judge();
        self.loss_judged += 1;
        match lost {
            Some(_) => {
                if !self.loss_in_burst {
                    self.report.loss_bursts += 1;
                }
                self.loss_in_burst = true;
            }
            None => self.loss_in_burst = false,
        }
        if lost.is_some() {
            return lost;
        }
        if corrupt && !d.corrupted {
            d.corrupted = true;
            self.report.corrupted += 1;
        }
        None
    }

    /// Offers a packet to the link at `now`.
    pub fn offer(&mut self, now: SimTime, mut d: Datagram) -> Offer {
        let wire = self.wire_bytes(&d);
        self.report.packets_in += 1;
        self.report.bytes_in += wire;
        if self.position == LossPosition::Ingress {
            if let Some(reason) = self.impair(&mut d) {
                self.report.drops.add(reason, 1);
                return Offer::Dropped(reason, d);
            }
        }
        if let Some(e) = &mut self.ecn {
            // RFC 3168 §5: where the AQM would drop, an ECN-capable packet is marked CE
            // instead (one already CE stays CE); others are dropped.
            if e.signal(self.queue_bytes, self.rate.0) {
                if d.ecn.is_capable() {
                    if d.ecn != Ecn::Ce {
                        d.ecn = Ecn::Ce;
                        if let Some(n) = &mut self.report.ecn_marked {
                            *n += 1;
                        }
                    }
                } else {
                    self.report.drops.add(DropReason::Aqm, 1);
                    return Offer::Dropped(DropReason::Aqm, d);
                }
            }
        }
        let idle = self.serializing.is_none() && self.rate.0 > 0 && self.queue.is_empty();
        if idle {
            let done = self.start_tx(now, d, false);
            return Offer::StartedTx(done);
        }
        let over_packets = self
            .limit
            .packets
            .is_some_and(|p| self.queue.len() as u64 + 1 > p);
        let over_bytes = self
            .limit
            .bytes
            .is_some_and(|b| self.queue_bytes + wire > b);
        if over_packets || over_bytes {
            self.report.drops.add(DropReason::QueueOverflow, 1);
            return Offer::Dropped(DropReason::QueueOverflow, d);
        }
        self.queue_bytes += wire;
        self.queue.push_back(d);
        self.report.max_queue_packets = self.report.max_queue_packets.max(self.queue.len() as u64);
        self.report.max_queue_bytes = self.report.max_queue_bytes.max(self.queue_bytes);
        Offer::Accepted
    }

    /// Puts `d` on the serializer at `now`; `queued`: it comes from the queue (see
    /// [`TraceState::depart`]). Returns when it is done.
    fn start_tx(&mut self, now: SimTime, d: Datagram, queued: bool) -> SimTime {
        let wire = self.wire_bytes(&d);
        if let Some(t) = &mut self.trace {
            let done = t.depart(now, wire, queued);
            self.serializing = Some(d);
            self.tx_started = now;
            return done;
        }
        let bits = wire as u128 * 8;
        // A new epoch whenever the serializer was idle (or the rate changed): departures
        // inside an epoch come from cumulative bits, so they never drift.
        let continuing = self.epoch_valid && self.serializing.is_none() && self.epoch_end_at == now;
        debug_assert!(!self.epoch_valid || self.epoch_end_at == self.epoch_end());
        if !continuing {
            self.epoch_start = now;
            self.epoch_bits = 0;
            self.epoch_valid = true;
        }
        self.epoch_bits += bits;
        let done = self.epoch_end();
        self.epoch_end_at = done;
        self.serializing = Some(d);
        self.tx_started = now;
        done
    }

    fn epoch_end(&self) -> SimTime {
        // The same quotient in 64 bits while bits * 1e9 fits (an epoch under ~2.3 GB),
        // without the 128-bit division routine.
        let ns = match u64::try_from(self.epoch_bits)
            .ok()
            .and_then(|b| b.checked_mul(1_000_000_000))
        {
            Some(x) => x.div_ceil(self.rate.0) as u128,
            None => (self.epoch_bits * 1_000_000_000).div_ceil(self.rate.0 as u128),
        };
        SimTime(self.epoch_start.0 + ns as u64)
    }

    /// The serializer finished the current packet at `now`.
    pub fn tx_done(&mut self, now: SimTime) -> TxDone {
        let mut d = self
            .serializing
            .take()
            .expect("tx_done without a packet on the serializer");
        self.busy_ns += (now.0 - self.tx_started.0) as u128;
        let mut dropped = None;
        let mut arrival = None;
        let egress_loss = if self.position == LossPosition::Egress {
            self.impair(&mut d)
        } else {
            None
        };
        // Jitter is drawn for every serialized packet, lost at egress or not, so its draws
        // line up by serialized-packet index across runs (common random numbers).
        let delay = self.jitter.sample(self.delay);
        if let Some(reason) = egress_loss {
            self.report.drops.add(reason, 1);
            dropped = Some((reason, d));
        } else {
            let mut at = now + delay;
            if !self.reorder {
                at = at.max(self.last_arrival);
            }
            self.last_arrival = self.last_arrival.max(at);
            let seq = self.prop_seq;
            self.prop_seq += 1;
            // Keep `propagating` sorted by (arrival, seq). Without reordering `at` is at or
            // after every queued arrival and `seq` is the largest, so this is a push: check
            // the back first (the same position the search would find) before searching.
            if self
                .propagating
                .back()
                .is_none_or(|(t, s, _)| (*t, *s) <= (at, seq))
            {
                self.propagating.push_back((at, seq, d));
            } else {
                let pos = self
                    .propagating
                    .partition_point(|(t, s, _)| (*t, *s) <= (at, seq));
                self.propagating.insert(pos, (at, seq, d));
            }
            arrival = Some(at);
        }
        let next_tx_done = self.try_start(now);
        TxDone {
            dropped,
            arrival,
            next_tx_done,
        }
    }

    /// Starts the serializer on the head of the queue if it is idle and the link is up.
    fn try_start(&mut self, now: SimTime) -> Option<SimTime> {
        if self.serializing.is_some() || self.rate.0 == 0 {
            return None;
        }
        let d = self.queue.pop_front()?;
        self.queue_bytes -= self.wire_bytes(&d);
        Some(self.start_tx(now, d, true))
    }

    /// The earliest propagating packet reached the far end. Corrupted packets are returned
    /// too (the caller discards them and counts the drop).
    pub fn arrive(&mut self) -> Datagram {
        let (_, _, d) = self
            .propagating
            .pop_front()
            .expect("arrival without a propagating packet");
        self.report.packets_out += 1;
        d
    }

    /// Applies the next scheduled change (its time has come). Returns a `TxDone` time if
    /// the serializer started because the link came back up.
    pub fn apply_change(&mut self, now: SimTime, idx: usize) -> Option<SimTime> {
        let c = self.changes[idx].clone();
        self.next_change = idx + 1;
        if let Some(r) = c.rate {
            if r != self.rate {
                self.rate = r;
                self.epoch_valid = false;
            }
        }
        if let Some(d) = c.delay {
            self.delay = d;
        }
        if let Some(l) = &c.loss {
            self.loss.set_model(l);
        }
        if let Some(p) = c.corruption {
            self.corruption.set_p(p);
        }
        self.try_start(now)
    }

    /// Drops everything on the link (handover). Returns the dropped packets.
    pub fn flush(&mut self) -> Vec<Datagram> {
        let mut out: Vec<Datagram> = self.queue.drain(..).collect();
        self.queue_bytes = 0;
        if let Some(d) = self.serializing.take() {
            out.push(d);
        }
        out.extend(self.propagating.drain(..).map(|(_, _, d)| d));
        self.report
            .drops
            .add(DropReason::Handover, out.len() as u64);
        self.generation += 1;
        self.epoch_valid = false;
        if let Some(t) = &mut self.trace {
            t.left = 0;
        }
        out
    }

    /// Finalises the report at the end of a run.
    pub fn finish_report(&mut self) -> LinkReport {
        let mut r = self.report.clone();
        r.busy_secs = self.busy_ns as f64 / 1e9;
        r.loss_judged = self.loss_judged;
        let lost = r.drops.random_loss();
        r.loss_rate = if r.loss_judged > 0 {
            lost as f64 / r.loss_judged as f64
        } else {
            0.0
        };
        r.mean_loss_burst = if r.loss_bursts > 0 {
            lost as f64 / r.loss_bursts as f64
        } else {
            0.0
        };
        r
    }
}
