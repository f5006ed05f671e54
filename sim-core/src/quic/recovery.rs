//! QUIC loss detection and congestion control glue: RFC 9002 §6–7 and Appendix A.
//!
//! [`Recovery`] is generic over `F`, whatever the connection wants to remember about each
//! packet (its frames); it never looks inside. It owns the path's [`RttEstimator`], the
//! congestion controller (a byte-based [`CongestionController`]), `bytes_in_flight`, and
//! the sent packets of the three packet number spaces (in `DenseMap`s, ordered by packet
//! number: deterministic order, no hashing).
//!
//! What it implements, with the RFC 9002 sections:
//! - A.5 `OnPacketSent`; A.7 `OnAckReceived` (largest acked, RTT sample rule, loss
//!   detection before processing the acknowledged packets, pto_count reset with the client
//!   exception);
//! - A.8 `SetLossDetectionTimer` / `GetPtoTimeAndSpace`: one multi-mode timer, the loss
//!   time taking precedence over the PTO, exponential backoff, max_ack_delay only for
//!   ApplicationData, no ApplicationData PTO before the handshake is confirmed, the client
//!   anti-deadlock timer (armed from "now" when nothing ack-eliciting is in flight and the
//!   server has not validated the client's address), no timer while a server is at its
//!   anti-amplification limit;
//! - A.9 `OnLossDetectionTimeout`: time-threshold losses, else a PTO probe request. A PTO
//!   never declares a packet lost by itself;
//! - A.10 `DetectAndRemoveLostPackets`: packet threshold and time threshold
//!   `max(9/8·max(srtt, latest_rtt), kGranularity)`;
//! - §7.6 persistent congestion (A.9 `OnPacketsLost`): two ack-eliciting packets of the
//!   same loss batch, sent after the first RTT sample, no packet sent between them
//!   acknowledged in any space, send times more than
//!   `(srtt + max(4·rttvar, g) + max_ack_delay)·3` apart;
//! - A.11 discarding a packet number space.
//!
//! It also counts spurious losses: packets declared lost are remembered (without their
//! `F`) for [`RecoveryConfig::lost_retention_ptos`] PTOs, and an acknowledgement of one of
//! them counts one spurious loss. (RFC 9002 does not undo the congestion response; neither
//! does this module.)
//!
//! Time: every method that does not take `now` re-arms the timer as of the latest `now`
//! passed to any method (only the client anti-deadlock timer depends on it).

use super::ecn::{EcnValidation, EcnVerdict};
use crate::cc::{self, CongestionController, RateSampler};
use crate::time::{SimDuration, SimTime};
use crate::transport::dense::DenseMap;
use crate::transport::ranges::RangeSet;
use crate::transport::rtt::{RttEstimator, DEFAULT_INITIAL_RTT};
use crate::wire::quic::EcnCounts;
use std::collections::VecDeque;

/// A packet number space (RFC 9000 §12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Space {
    /// Initial packets.
    Initial,
    /// Handshake packets.
    Handshake,
    /// 0-RTT and 1-RTT packets.
    ApplicationData,
}

impl Space {
    /// The three spaces in the RFC's iteration order.
    pub const ALL: [Space; 3] = [Space::Initial, Space::Handshake, Space::ApplicationData];

    fn idx(self) -> usize {
        match self {
            Space::Initial => 0,
            Space::Handshake => 1,
            Space::ApplicationData => 2,
        }
    }
}

/// A sent packet as loss recovery sees it (RFC 9002 A.1.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentPacket<F> {
    /// Packet number (unique and increasing within its space).
    pub pn: u64,
    /// When it was sent.
    pub time_sent: SimTime,
    /// Bytes counted towards bytes in flight and congestion control (the UDP payload, i.e.
    /// the QUIC packet including header and AEAD tag; for a coalesced datagram, the
    /// packet's share).
    pub size: u64,
    /// Contains an ack-eliciting frame.
    pub ack_eliciting: bool,
    /// Counts towards bytes in flight (ack-eliciting or PADDING, §2).
    pub in_flight: bool,
    /// The sender was not congestion-window-limited when it sent this (§7.8).
    pub app_limited: bool,
    /// Sent ECT(0) (RFC 9000 §13.4.2: counted against the peer's ECN counts).
    pub ect0: bool,
    /// The connection's own bookkeeping (frames to retransmit, ...).
    pub info: F,
}

/// Loss-recovery parameters. [`RecoveryConfig::default`] gives RFC 9002's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveryConfig {
    /// kInitialRtt (333 ms).
    pub initial_rtt: SimDuration,
    /// The peer's max_ack_delay transport parameter (RFC 9000 default 25 ms).
    pub max_ack_delay: SimDuration,
    /// kPacketThreshold (3).
    pub packet_threshold: u64,
    /// kTimeThreshold numerator (9).
    pub time_threshold_num: u64,
    /// kTimeThreshold denominator (8).
    pub time_threshold_den: u64,
    /// kGranularity (1 ms).
    pub granularity: SimDuration,
    /// kPersistentCongestionThreshold (3).
    pub persistent_congestion_threshold: u64,
    /// max_datagram_size in bytes (1200).
    pub max_datagram_size: u64,
    /// Initial congestion window in bytes (kInitialWindow for 1200 B: 12 000).
    pub initial_window: u64,
    /// Declared-lost packets are remembered this many (un-backed-off) PTOs to detect
    /// spurious losses (3).
    pub lost_retention_ptos: u64,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            initial_rtt: DEFAULT_INITIAL_RTT,
            max_ack_delay: SimDuration::from_millis(25),
            packet_threshold: 3,
            time_threshold_num: 9,
            time_threshold_den: 8,
            granularity: SimDuration::from_millis(1),
            persistent_congestion_threshold: 3,
            max_datagram_size: 1200,
            initial_window: cc::default_initial_window(1200),
            lost_retention_ptos: 3,
        }
    }
}

impl RecoveryConfig {
    /// RFC defaults for a given max_datagram_size (initial window per §7.2).
    pub fn with_max_datagram_size(max_datagram_size: u64) -> Self {
        RecoveryConfig {
            max_datagram_size,
            initial_window: cc::default_initial_window(max_datagram_size),
            ..RecoveryConfig::default()
        }
    }
}

/// What an acknowledgement did.
#[derive(Debug)]
pub struct AckOutcome<F> {
    /// Newly acknowledged packets, in packet-number order.
    pub acked: Vec<SentPacket<F>>,
    /// Packets declared lost, in packet-number order (including non-in-flight ones, e.g.
    /// ACK-only packets, which need no retransmission).
    pub lost: Vec<SentPacket<F>>,
    /// An RTT sample was taken.
    pub rtt_sample: bool,
    /// Persistent congestion was declared.
    pub persistent_congestion: bool,
    /// Previously declared-lost packets that this ACK acknowledged.
    pub spurious_losses: u64,
}

impl<F> Default for AckOutcome<F> {
    fn default() -> Self {
        AckOutcome {
            acked: Vec::new(),
            lost: Vec::new(),
            rtt_sample: false,
            persistent_congestion: false,
            spurious_losses: 0,
        }
    }
}

/// What a loss-detection timer expiry did.
#[derive(Debug)]
pub struct TimeoutOutcome<F> {
    /// Packets declared lost by the time threshold, in packet-number order.
    pub lost: Vec<SentPacket<F>>,
    /// The space of the `lost` packets (set when the loss timer, not the PTO, fired).
    pub lost_space: Option<Space>,
    /// PTO: send one or two ack-eliciting probe packets in this space (new data, else a
    /// retransmission, else PING; they may exceed the congestion window, §6.2.4).
    pub pto_probe: Option<Space>,
    /// The probe is the client's anti-deadlock packet (§6.2.2.1): a Handshake packet, or
    /// an Initial padded to at least 1200 bytes.
    pub anti_deadlock: bool,
    /// Persistent congestion was declared.
    pub persistent_congestion: bool,
}

impl<F> Default for TimeoutOutcome<F> {
    fn default() -> Self {
        TimeoutOutcome {
            lost: Vec::new(),
            lost_space: None,
            pto_probe: None,
            anti_deadlock: false,
            persistent_congestion: false,
        }
    }
}

/// Counters over the connection's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    /// In-flight packets declared lost.
    pub lost_packets: u64,
    /// Bytes of in-flight packets declared lost.
    pub lost_bytes: u64,
    /// Declared-lost packets later acknowledged.
    pub spurious_losses: u64,
    /// PTO expiries (including anti-deadlock ones).
    pub ptos: u64,
    /// Congestion events that started a new recovery period (B.6), i.e. window
    /// reductions; losses of packets sent before the current recovery started do not
    /// count.
    pub congestion_events: u64,
    /// Persistent congestion declarations.
    pub persistent_congestion: u64,
    /// Congestion events that came from an increase of the peer's ECN-CE count (RFC 9002
    /// §7.1) and started a new recovery period (counted in `congestion_events` too).
    pub ecn_congestion_events: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
}

#[derive(Debug)]
struct Entry<F> {
    pkt: SentPacket<F>,
    /// Send order across all spaces, for the "none acknowledged in between, in any space"
    /// condition of §7.6.2.
    seq: u64,
}

#[derive(Clone, Copy, Debug)]
struct LostRecord {
    seq: u64,
    declared_at: SimTime,
}

/// Declared-lost records of one space by packet number, ascending, in one contiguous
/// deque: loss declares packets in rising numbers (appended at the back) and retention
/// forgets the oldest first (popped at the front); lookups are binary searches and the
/// walk of [`acked_lost_records`] runs over adjacent entries instead of tree nodes.
#[derive(Debug, Default)]
struct LostRecords {
    v: VecDeque<(u64, LostRecord)>,
}

impl LostRecords {
    /// Index of the first record with a packet number at or above `pn`.
    fn lower_bound(&self, pn: u64) -> usize {
        self.v.partition_point(|&(k, _)| k < pn)
    }

    /// Records `pn` (replacing an earlier record of the same number, as a map would).
    fn insert(&mut self, pn: u64, rec: LostRecord) {
        if self.v.back().is_none_or(|&(k, _)| k < pn) {
            self.v.push_back((pn, rec));
            return;
        }
        let at = self.lower_bound(pn);
        if self.v.get(at).is_some_and(|&(k, _)| k == pn) {
            self.v[at].1 = rec;
        } else {
            self.v.insert(at, (pn, rec));
        }
    }

    /// Removes and returns the record of `pn`, if any.
    fn remove(&mut self, pn: u64) -> Option<LostRecord> {
        let at = self.lower_bound(pn);
        if self.v.get(at).is_some_and(|&(k, _)| k == pn) {
            self.v.remove(at).map(|(_, r)| r)
        } else {
            None
        }
    }

    fn first(&self) -> Option<(u64, LostRecord)> {
        self.v.front().copied()
    }

    fn last_key(&self) -> Option<u64> {
        self.v.back().map(|&(k, _)| k)
    }

    fn pop_first(&mut self) {
        self.v.pop_front();
    }

    fn clear(&mut self) {
        self.v.clear();
    }

    /// The packet numbers recorded within `lo..=hi`, ascending.
    fn keys_in(&self, lo: u64, hi: u64) -> impl Iterator<Item = u64> + '_ {
        let from = self.lower_bound(lo);
        self.v
            .range(from..)
            .map(|&(k, _)| k)
            .take_while(move |&k| k <= hi)
    }
}

#[derive(Debug)]
struct SpaceState<F> {
    sent: DenseMap<Entry<F>>,
    lost: LostRecords,
    /// The inclusive ranges, disjoint and largest first, of an ACK already processed in
    /// this space (the last one searched for declared-lost records; empty: none): no
    /// record lies inside them (see [`newly_acked_lost_records`]).
    prev_ack: Vec<(u64, u64)>,
    largest_acked: Option<u64>,
    largest_sent: Option<u64>,
    time_of_last_ack_eliciting: Option<SimTime>,
    loss_time: Option<SimTime>,
    ack_eliciting_in_flight: u64,
    bytes_in_flight: u64,
    discarded: bool,
}

impl<F> SpaceState<F> {
    fn new() -> Self {
        SpaceState {
            sent: DenseMap::default(),
            lost: LostRecords::default(),
            prev_ack: Vec::new(),
            largest_acked: None,
            largest_sent: None,
            time_of_last_ack_eliciting: None,
            loss_time: None,
            ack_eliciting_in_flight: 0,
            bytes_in_flight: 0,
            discarded: false,
        }
    }
}

/// The keys of `lost` inside any of the inclusive `ranges` (either bound first, in any
/// order), ascending. Usually none, found without a search per range: when the ranges
/// are disjoint and listed largest first (as an ACK frame lists them), one ordered walk
/// over the records between the lowest and the highest range; otherwise a search per
/// range. The same keys either way.
fn acked_lost_records(lost: &LostRecords, ranges: &[(u64, u64)]) -> Vec<u64> {
    let norm = |&(a, b): &(u64, u64)| (a.min(b), a.max(b));
    let bottom = ranges.iter().map(|r| norm(r).0).min();
    let top = ranges.iter().map(|r| norm(r).1).max();
    let (Some(bottom), Some(top)) = (bottom, top) else {
        return Vec::new();
    };
    // Nothing recorded between the lowest and the highest acknowledged number (the
    // bounds of the map decide it without a range search).
    let outside =
        lost.first().is_none_or(|(f, _)| f > top) || lost.last_key().is_none_or(|l| l < bottom);
    if outside {
        return Vec::new();
    }
    let descending = ranges.windows(2).all(|w| norm(&w[1]).1 < norm(&w[0]).0);
    let mut hits = Vec::new();
    if descending {
        // Records ascending, ranges from the last (lowest) back.
        let mut k = ranges.len();
        for pn in lost.keys_in(bottom, top) {
            while k > 0 && norm(&ranges[k - 1]).1 < pn {
                k -= 1;
            }
            if k == 0 {
                break;
            }
            if norm(&ranges[k - 1]).0 <= pn {
                hits.push(pn);
            }
        }
    } else {
        for r in ranges {
            let (lo, hi) = norm(r);
            hits.extend(lost.keys_in(lo, hi));
        }
        hits.sort_unstable();
        hits.dedup();
    }
    hits
}

/// The declared-lost records an ACK covers (pushed onto `hits`, ascending), keyed on
/// what the ACK newly covers rather than on its whole span: `prev` holds the ranges of an
/// ACK processed before in the space (inclusive, disjoint, largest first), and only the
/// parts of `ranges` outside them are searched. Then `prev` becomes `ranges` when they
/// are disjoint and largest first (as an ACK frame lists them; otherwise the whole-span
/// search of [`acked_lost_records`] runs and `prev` is emptied). The usual next ACK
/// repeats the one before with its largest range grown: one slice comparison and one
/// search of the grown part.
///
/// Why no record is missed, whatever the order ACKs arrive in: no record lies inside
/// `prev`. When that ACK was processed, every record inside its ranges was found and
/// removed, and every packet inside them left the sent map. A record is only ever made
/// from a packet of the sent map (declared lost), and a packet only enters the sent map
/// with a number above every number sent before, so above every acknowledged one (an ACK
/// of an unsent number is refused before this search), or goes back in unchanged
/// ([`Recovery::on_path_change`]). So a record inside `ranges` lies in `ranges` minus
/// `prev`. Records dropped by retention are found by neither search.
/// Property test: `incremental_lost_search_matches_whole_span`.
fn newly_acked_lost_records(
    lost: &LostRecords,
    ranges: &[(u64, u64)],
    prev: &mut Vec<(u64, u64)>,
    hits: &mut Vec<u64>,
) {
    let (Some((first, _)), Some(last)) = (lost.first(), lost.last_key()) else {
        // No record: nothing to find, and `prev` stays valid (any processed ACK is).
        return;
    };
    // The usual next ACK of a frame sequence: `prev`'s ranges with the largest grown at
    // its top, maybe new ranges above it (new holes), maybe fewer at the bottom (pruned
    // by the peer): only the ranges above and the growth `(pb, b]` are new, the rest
    // lies in `prev`. A few comparisons and one slice comparison instead of the merge.
    if let Some(&(pa, pb)) = prev.first() {
        let n = ranges.len();
        // `ranges[k]` is `prev`'s largest range, grown; `ranges[..k]` lie above it.
        if let Some(k) = ranges.iter().take(4).position(|&(a, _)| a == pa) {
            let b = ranges[k].1;
            let above_ok = ranges[..=k]
                .windows(2)
                .all(|w| w[0].0 <= w[0].1 && w[1].1 < w[0].0);
            if b >= pb && n - k <= prev.len() && above_ok && ranges[k + 1..] == prev[1..n - k] {
                // Ascending: the growth, then the new ranges from the lowest.
                if b > pb && b >= first && pb < last {
                    hits.extend(lost.keys_in(pb + 1, b));
                }
                for &(x, y) in ranges[..k].iter().rev() {
                    if y >= first && x <= last {
                        hits.extend(lost.keys_in(x, y));
                    }
                }
                prev.clear();
                prev.extend_from_slice(ranges);
                return;
            }
        }
    }
    let norm = |&(a, b): &(u64, u64)| (a.min(b), a.max(b));
    let descending = ranges.windows(2).all(|w| norm(&w[1]).1 < norm(&w[0]).0);
    if !descending {
        prev.clear();
        hits.extend(acked_lost_records(lost, ranges));
        return;
    }
    // Merge the ACK's ranges, lowest first, with `prev`, lowest first (`prev[m - 1 - j]`
    // is its `j`-th lowest): each piece of a range outside `prev` is searched.
    let m = prev.len();
    let low = |j: usize| prev[m - 1 - j];
    let mut j = 0;
    for r in ranges.iter().rev() {
        let (a, b) = norm(r);
        if b < first || a > last {
            continue;
        }
        while j < m && low(j).1 < a {
            j += 1;
        }
        let mut x = a;
        loop {
            if j < m && low(j).0 <= x {
                // `x` lies in that `prev` range (which ends at or after `x`).
                if low(j).1 >= b {
                    break;
                }
                x = low(j).1 + 1;
                j += 1;
                continue;
            }
            // `[x, y]` is outside `prev`: up to the next `prev` range or the range's end.
            let y = if j < m && low(j).0 <= b {
                low(j).0 - 1
            } else {
                b
            };
            if y >= first && x <= last {
                hits.extend(lost.keys_in(x, y));
            }
            if y == b {
                break;
            }
            x = y + 1;
        }
    }
    prev.clear();
    prev.extend(ranges.iter().map(norm));
}

/// How many ranges of acknowledged send-order numbers [`Recovery::housekeeping`] lets
/// accumulate before pruning them (a memory bound only; pruning changes no answer).
const ACKED_SEQ_RANGES_KEPT: usize = 16;

/// RFC 9002 loss recovery for one connection (one path).
#[derive(Debug)]
pub struct Recovery<F> {
    config: RecoveryConfig,
    is_client: bool,
    rtt: RttEstimator,
    cc: Box<dyn CongestionController>,
    /// `cc.window()`, read again after every call that may change the controller (the
    /// window is asked for on every poll and per acknowledged packet).
    cwnd: u64,
    spaces: [SpaceState<F>; 3],
    bytes_in_flight: u64,
    pto_count: u32,
    handshake_confirmed: bool,
    peer_validated_address: bool,
    has_handshake_keys: bool,
    at_anti_amplification_limit: bool,
    timer: Option<SimTime>,
    last_now: SimTime,
    next_seq: u64,
    /// Send-order numbers of acknowledged packets, as ranges, kept from the oldest
    /// outstanding packet on (see [`Recovery::prune_acked_seqs`]). Acknowledgements come
    /// mostly in send order, so an insert usually grows the last range.
    acked_seqs: RangeSet,
    stats: RecoveryStats,
    /// When the current network path started (connection migration, RFC 9000 §9):
    /// packets sent before it feed neither the RTT estimator nor the controller of this
    /// path (§9.4). `None`: the connection never changed path.
    path_start: Option<SimTime>,
    /// Reused buffer of the send-order numbers of the packets one ACK acknowledges, beside
    /// [`AckOutcome::acked`] (empty between calls): no allocation per ACK.
    acked_seq_buf: Vec<u64>,
    /// Reused buffer of the declared-lost records one ACK covers (empty between calls).
    lost_hits: Vec<u64>,
    /// An emptied [`AckOutcome::acked`] handed back ([`Recovery::recycle_acked`]), for
    /// the next ACK's: no allocation per ACK.
    acked_buf: Vec<SentPacket<F>>,
    /// Reused buffer of the packet numbers one loss detection declares lost (empty
    /// between calls).
    lost_pns: Vec<u64>,
    /// Delivery-rate sampling ([`cc::rate_sample`]), keyed by send-order number, kept
    /// only when the controller asks for it ([`CongestionController::wants_rate_samples`]).
    rate: Option<RateSampler>,
}

impl<F> Recovery<F> {
    /// Recovery with the RFC 9002 Appendix B NewReno controller and `config`'s initial
    /// window.
    pub fn new(config: RecoveryConfig, is_client: bool) -> Self {
        let params = cc::CcParams {
            algorithm: cc::CcAlgorithm::NewReno,
            initial_cwnd_bytes: Some(config.initial_window),
            ..cc::CcParams::default()
        };
        let cc = cc::build(&params, config.max_datagram_size);
        Recovery::with_controller(config, is_client, cc)
    }

    /// Recovery with a caller-supplied controller (`config.initial_window` is then only
    /// reported, not used).
    pub fn with_controller(
        config: RecoveryConfig,
        is_client: bool,
        cc: Box<dyn CongestionController>,
    ) -> Self {
        assert!(
            config.time_threshold_den > 0,
            "time_threshold_den must be positive"
        );
        let rate = cc.wants_rate_samples().then(RateSampler::new);
        Recovery {
            rate,
            rtt: RttEstimator::new(config.initial_rtt),
            config,
            is_client,
            cwnd: cc.window(),
            cc,
            spaces: [SpaceState::new(), SpaceState::new(), SpaceState::new()],
            bytes_in_flight: 0,
            pto_count: 0,
            handshake_confirmed: false,
            peer_validated_address: false,
            has_handshake_keys: false,
            at_anti_amplification_limit: false,
            timer: None,
            last_now: SimTime::ZERO,
            next_seq: 0,
            acked_seqs: RangeSet::new(),
            stats: RecoveryStats::default(),
            path_start: None,
            acked_seq_buf: Vec::new(),
            lost_hits: Vec::new(),
            acked_buf: Vec::new(),
            lost_pns: Vec::new(),
        }
    }

    // ----- accessors -------------------------------------------------------------------

    /// The configuration.
    pub fn config(&self) -> &RecoveryConfig {
        &self.config
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The congestion controller.
    pub fn cc(&self) -> &dyn CongestionController {
        self.cc.as_ref()
    }
    /// Bytes in flight over all spaces.
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }
    /// The congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        debug_assert_eq!(self.cwnd, self.cc.window(), "cached window stale");
        self.cwnd
    }
    /// Whether `bytes` more may be sent: `bytes_in_flight + bytes <= cwnd` (§7). PTO probes
    /// are exempt (§6.2.4); the caller decides when it sends one.
    pub fn can_send(&self, bytes: u64) -> bool {
        self.bytes_in_flight.saturating_add(bytes) <= self.cwnd()
    }
    /// Consecutive PTOs without an acknowledgement that reset the count.
    pub fn pto_count(&self) -> u32 {
        self.pto_count
    }
    /// Lifetime counters.
    pub fn stats(&self) -> &RecoveryStats {
        &self.stats
    }
    /// The largest acknowledged packet number in `space`.
    pub fn largest_acked(&self, space: Space) -> Option<u64> {
        self.spaces[space.idx()].largest_acked
    }
    /// Outstanding (neither acknowledged nor declared lost) packets of `space`, in
    /// packet-number order.
    pub fn outstanding(&self, space: Space) -> impl Iterator<Item = &SentPacket<F>> + '_ {
        self.spaces[space.idx()].sent.values().map(|e| &e.pkt)
    }
    /// Ack-eliciting in-flight packets outstanding in `space`.
    pub fn ack_eliciting_in_flight(&self, space: Space) -> u64 {
        self.spaces[space.idx()].ack_eliciting_in_flight
    }
    /// Whether the handshake is confirmed (as told by [`Recovery::set_handshake_confirmed`]).
    pub fn handshake_confirmed(&self) -> bool {
        self.handshake_confirmed
    }
    /// The loss-detection timer (A.8), `None` when not armed.
    pub fn loss_detection_timer(&self) -> Option<SimTime> {
        self.timer
    }

    /// The PTO period for `space` from the current RTT estimate, without backoff:
    /// `srtt + max(4·rttvar, kGranularity)`, plus `max_ack_delay` for ApplicationData. The
    /// idle timeout's floor of three PTOs (RFC 9000 §10.1) uses it: with the backoff, an
    /// endpoint whose peer is gone backs off and pushes its idle timeout out for ever.
    pub fn pto_period(&self, space: Space) -> SimDuration {
        let d = self.rtt.pto_base(self.config.granularity);
        if space == Space::ApplicationData {
            d.saturating_add(self.config.max_ack_delay)
        } else {
            d
        }
    }

    /// The current PTO period for `space` with backoff (A.8):
    /// `(srtt + max(4·rttvar, kGranularity))·2^pto_count`, plus `max_ack_delay·2^pto_count`
    /// for ApplicationData.
    pub fn pto_duration(&self, space: Space) -> SimDuration {
        let mut d = self.rtt.pto_base(self.config.granularity);
        if space == Space::ApplicationData {
            d = d.saturating_add(self.config.max_ack_delay);
        }
        backoff(d, self.pto_count)
    }

    /// The persistent-congestion duration (§7.6.1):
    /// `(srtt + max(4·rttvar, kGranularity) + max_ack_delay)·kPersistentCongestionThreshold`.
    pub fn persistent_congestion_duration(&self) -> SimDuration {
        self.rtt
            .pto_base(self.config.granularity)
            .saturating_add(self.config.max_ack_delay)
            .saturating_mul(self.config.persistent_congestion_threshold)
    }

    /// The time-threshold loss delay (§6.1.2): `max(9/8·max(srtt, latest_rtt),
    /// kGranularity)`, truncated to the nanosecond.
    pub fn loss_delay(&self) -> SimDuration {
        let base = self.rtt.latest_rtt().max(self.rtt.smoothed_rtt()).0;
        let (num, den) = (
            self.config.time_threshold_num,
            self.config.time_threshold_den,
        );
        // In 64 bits when the product fits (the same quotient), else in 128.
        let d = match base.checked_mul(num) {
            Some(p) => p / den,
            None => (base as u128 * num as u128 / den as u128).min(u64::MAX as u128) as u64,
        };
        SimDuration(d).max(self.config.granularity)
    }

    // ----- state changes from the connection --------------------------------------------

    /// The handshake is confirmed (RFC 9001 §4.1.2). Enables max_ack_delay clamping and
    /// the ApplicationData PTO; for a client it also means the server validated its
    /// address.
    pub fn set_handshake_confirmed(&mut self) {
        self.handshake_confirmed = true;
        self.set_loss_detection_timer(self.last_now);
    }

    /// The peer has validated our address (A.6). A server's peer always has (it need not
    /// call this); a client learns it from an acknowledged Handshake packet (detected
    /// here), handshake confirmation, or this call.
    pub fn set_peer_completed_address_validation(&mut self) {
        self.peer_validated_address = true;
        self.set_loss_detection_timer(self.last_now);
    }

    /// Handshake keys are available (the anti-deadlock probe is then a Handshake packet).
    /// Also implied by sending a Handshake packet or discarding the Initial space.
    pub fn set_has_handshake_keys(&mut self) {
        self.has_handshake_keys = true;
    }

    /// A server is (or no longer is) blocked by the anti-amplification limit; while it is,
    /// no timer is armed (§6.2.2.1).
    pub fn set_at_anti_amplification_limit(&mut self, at_limit: bool) {
        if at_limit == self.at_anti_amplification_limit && !self.is_client {
            // Unchanged (the server calls this after every datagram): re-arming would
            // give the timer it has. Every other input of A.8's SetLossDetectionTimer
            // re-arms the timer where it changes (sent in-flight packet, ACK, timeout,
            // discarded space, path change, confirmation, max_ack_delay), and a server
            // never takes the anti-deadlock branch, the one that depends on `now`
            // (`peer_completed_address_validation` is always true for it).
            #[cfg(debug_assertions)]
            {
                let kept = self.timer;
                self.set_loss_detection_timer(self.last_now);
                debug_assert_eq!(kept, self.timer, "the skipped re-arm would move the timer");
            }
            return;
        }
        self.at_anti_amplification_limit = at_limit;
        self.set_loss_detection_timer(self.last_now);
    }

    /// Updates the peer's max_ack_delay (from its transport parameters).
    pub fn set_peer_max_ack_delay(&mut self, max_ack_delay: SimDuration) {
        self.config.max_ack_delay = max_ack_delay;
        self.set_loss_detection_timer(self.last_now);
    }

    /// Whether the peer has validated our address (A.6 `PeerCompletedAddressValidation`).
    pub fn peer_completed_address_validation(&self) -> bool {
        !self.is_client || self.peer_validated_address || self.handshake_confirmed
    }

    // ----- A.5 ---------------------------------------------------------------------------

    /// A packet was sent (A.5 `OnPacketSent`). Packet numbers must increase within a space.
    pub fn on_packet_sent(&mut self, now: SimTime, space: Space, pkt: SentPacket<F>) {
        self.last_now = self.last_now.max(now);
        let s = &mut self.spaces[space.idx()];
        debug_assert!(!s.discarded, "packet sent in discarded space {space:?}");
        debug_assert!(
            s.largest_sent.is_none_or(|l| pkt.pn > l),
            "packet numbers must increase"
        );
        if s.discarded {
            return;
        }
        s.largest_sent = Some(s.largest_sent.map_or(pkt.pn, |l| l.max(pkt.pn)));
        if space == Space::Handshake {
            self.has_handshake_keys = true;
        }
        if pkt.in_flight {
            if pkt.ack_eliciting {
                s.time_of_last_ack_eliciting = Some(pkt.time_sent);
                s.ack_eliciting_in_flight += 1;
            }
            s.bytes_in_flight += pkt.size;
            self.bytes_in_flight += pkt.size;
        }
        let (in_flight, size, app_limited) = (pkt.in_flight, pkt.size, pkt.app_limited);
        let seq = self.next_seq;
        self.next_seq += 1;
        s.sent.insert(pkt.pn, Entry { pkt, seq });
        if in_flight {
            if let Some(r) = self.rate.as_mut() {
                r.on_packet_sent(seq, now, size, self.bytes_in_flight - size, app_limited);
            }
            self.cc.on_packet_sent(now, size, self.bytes_in_flight);
            self.cwnd = self.cc.window();
            self.set_loss_detection_timer(now);
        }
    }

    // ----- A.7 ---------------------------------------------------------------------------

    /// An ACK frame arrived in `space` (A.7 `OnAckReceived`). `ranges` are inclusive
    /// `(smallest, largest)` packet-number ranges, in any order (an ACK frame lists them
    /// largest first); `ack_delay` is the decoded ACK Delay.
    ///
    /// The ack delay of Initial-space ACKs is ignored (§5.3 allows it: Initial ACKs are
    /// not delayed), and is clamped to the peer's max_ack_delay once the handshake is
    /// confirmed.
    pub fn on_ack_received(
        &mut self,
        now: SimTime,
        space: Space,
        ranges: &[(u64, u64)],
        ack_delay: SimDuration,
    ) -> AckOutcome<F> {
        self.on_ack_received_ecn(now, space, ranges, ack_delay, None)
    }

    /// [`Recovery::on_ack_received`] with the sender's ECN state and the frame's ECN
    /// Counts (`None`: an ACK frame of type 0x02): A.7 `OnAckReceived` processes them
    /// (`ProcessECN`, B.7) after the RTT sample and before loss detection, when the frame
    /// increases the largest acknowledged (RFC 9000 §13.4.2.1) and newly acknowledges
    /// packets. An increase of the ECN-CE count goes to the controller
    /// ([`CongestionController::on_ecn_ce`]) with the send time of the largest
    /// acknowledged packet.
    pub fn on_ack_received_ecn(
        &mut self,
        now: SimTime,
        space: Space,
        ranges: &[(u64, u64)],
        ack_delay: SimDuration,
        ecn: Option<(&mut EcnValidation, Option<&EcnCounts>)>,
    ) -> AckOutcome<F> {
        self.last_now = self.last_now.max(now);
        let mut out = AckOutcome::default();
        let si = space.idx();
        if self.spaces[si].discarded || ranges.is_empty() {
            return out;
        }
        let Some(ack_largest) = ranges.iter().map(|&(lo, hi)| lo.max(hi)).max() else {
            return out;
        };
        // Acknowledging a packet never sent is a PROTOCOL_VIOLATION (RFC 9000 §13.1); the
        // connection should have caught it. Never let it move largest_acked.
        let Some(largest_sent) = self.spaces[si].largest_sent else {
            return out;
        };
        if ack_largest > largest_sent {
            debug_assert!(false, "ACK of unsent packet {ack_largest} in {space:?}");
            return out;
        }
        if space == Space::Handshake && self.is_client {
            // A.6: a Handshake ACK proves the server validated our address.
            self.peer_validated_address = true;
        }
        let largest_increased = self.spaces[si]
            .largest_acked
            .is_none_or(|l| ack_largest > l);
        {
            let s = &mut self.spaces[si];
            s.largest_acked = Some(s.largest_acked.map_or(ack_largest, |l| l.max(ack_largest)));
        }

        // Bytes in flight before this ACK (for the under-utilisation test of §7.8).
        let prior_in_flight = self.bytes_in_flight;

        // DetectAndRemoveAckedPackets, and spurious losses. The records leave the sent map
        // straight into the outcome's list (their send-order numbers beside them), in
        // ascending packet numbers: the ranges are visited lowest first.
        let mut acked = std::mem::take(&mut self.acked_buf);
        let mut seqs = std::mem::take(&mut self.acked_seq_buf);
        debug_assert!(acked.is_empty() && seqs.is_empty());
        {
            let s = &mut self.spaces[si];
            // Lowest range first: an ACK frame lists its ranges disjoint and largest first,
            // so the keys come out ascending; for any other order they are sorted after.
            let mut ordered = true;
            for &(a, b) in ranges.iter().rev() {
                // A range wholly below every packet still in the map (most ranges of a
                // frame repeat what earlier ACKs acknowledged) removes nothing.
                if s.sent.first_key().is_some_and(|f| a.max(b) >= f) {
                    s.sent.remove_range_with(a.min(b), a.max(b), |e| {
                        ordered &= acked.last().is_none_or(|l: &SentPacket<F>| l.pn < e.pkt.pn);
                        seqs.push(e.seq);
                        acked.push(e.pkt);
                    });
                }
            }
            if !ordered {
                let mut both: Vec<_> = acked.drain(..).zip(seqs.drain(..)).collect();
                both.sort_by_key(|(p, _)| p.pn);
                for (p, seq) in both {
                    acked.push(p);
                    seqs.push(seq);
                }
            }
            debug_assert!(acked.windows(2).all(|w| w[0].pn < w[1].pn));
            // Declared-lost records the ACK covers: spurious losses.
            let mut hits = std::mem::take(&mut self.lost_hits);
            newly_acked_lost_records(&s.lost, ranges, &mut s.prev_ack, &mut hits);
            for pn in hits.drain(..) {
                if let Some(rec) = s.lost.remove(pn) {
                    out.spurious_losses += 1;
                    self.acked_seqs.insert(rec.seq, rec.seq + 1);
                }
            }
            self.lost_hits = hits;
        }
        self.stats.spurious_losses += out.spurious_losses;
        if acked.is_empty() {
            // A.7: nothing newly acknowledged: no RTT sample, no loss detection.
            self.acked_buf = acked;
            self.acked_seq_buf = seqs;
            return out;
        }
        for &seq in &seqs {
            self.acked_seqs.insert(seq, seq + 1);
        }

        // RTT sample (§5.1): the largest acknowledged is newly acknowledged and at least
        // one newly acknowledged packet is ack-eliciting.
        let largest_new = acked.last();
        if let Some(p) = largest_new {
            if p.pn == ack_largest
                && acked.iter().any(|p| p.ack_eliciting)
                && self.on_current_path(p.time_sent)
            {
                let latest = now.saturating_since(p.time_sent);
                let delay = if space == Space::Initial {
                    SimDuration::ZERO
                } else {
                    ack_delay
                };
                let mad = self
                    .handshake_confirmed
                    .then_some(self.config.max_ack_delay);
                self.rtt.update(now, latest, delay, mad);
                self.stats.rtt_samples += 1;
                out.rtt_sample = true;
            }
        }

        // A.7: ECN information before loss detection (B.7 ProcessECN).
        if let Some((v, counts)) = ecn {
            if largest_increased {
                let newly_ect0 = acked.iter().filter(|p| p.ect0).count() as u64;
                if let EcnVerdict::Ce(ce) = v.on_ack(si, newly_ect0, counts) {
                    // B.7: the send time of the largest acknowledged packet (newly
                    // acknowledged, since the largest acknowledged increased).
                    let sent = acked.last().map_or(now, |p| p.time_sent);
                    let was = self.cc.in_recovery(sent);
                    self.cc.on_ecn_ce(now, sent, ce, self.bytes_in_flight);
                    self.cwnd = self.cc.window();
                    // Counted when the controller started a recovery period (BBRv1 does
                    // not react to CE).
                    if !was && self.cc.in_recovery(sent) {
                        self.stats.congestion_events += 1;
                        self.stats.ecn_congestion_events += 1;
                    }
                }
            }
        }

        // Loss detection must run before the acknowledged packets are processed (A.7).
        let lost = self.detect_and_remove_lost_packets(now, space);
        if !lost.is_empty() {
            out.persistent_congestion = self.on_packets_lost(now, space, &lost);
        }
        if !lost.is_empty() {
            out.lost = lost.into_iter().map(|e| e.pkt).collect();
        }

        // OnPacketsAcked (B.5). §7.8: no growth while the window is under-utilised: the
        // packet was sent app- or flow-control-limited, or the window was not full
        // before this ACK (`cwnd_limited`).
        let snap = self.rtt.snapshot();
        for (p, &seq) in acked.iter().zip(&seqs) {
            if p.in_flight {
                if let Some(r) = self.rate.as_mut() {
                    r.on_packet_acked(seq, now);
                }
                self.remove_from_flight(si, p, seq);
                let under_utilised = p.app_limited || !self.cwnd_limited(prior_in_flight);
                self.cc
                    .on_packet_acked(now, p.time_sent, p.size, under_utilised, &snap);
                self.cwnd = self.cc.window();
            }
        }
        if let Some(r) = self.rate.as_mut() {
            // One rate sample per ACK, after its losses and acknowledgements.
            let rs = r.generate(snap.min_rtt, self.bytes_in_flight);
            self.cc.on_rate_sample(now, &rs, &snap);
            self.cwnd = self.cc.window();
        }
        out.acked = acked;
        seqs.clear();
        self.acked_seq_buf = seqs;

        // A.7: reset the PTO backoff, except for a client whose address is not validated.
        if self.peer_completed_address_validation() {
            self.pto_count = 0;
        }
        self.set_loss_detection_timer(now);
        self.housekeeping(now);
        out
    }

    /// Hands back the emptied `acked` of an [`AckOutcome`], whose buffer the next ACK's
    /// outcome reuses (optional: only saves an allocation).
    pub fn recycle_acked(&mut self, mut acked: Vec<SentPacket<F>>) {
        acked.clear();
        if acked.capacity() > self.acked_buf.capacity() {
            self.acked_buf = acked;
        }
    }

    /// RFC 9002 §7.8: whether the window was fully used with `prior_in_flight` bytes in
    /// flight before an ACK. Per-packet app-limited marks only catch the packet after
    /// which the sender ran out of data; a sender held by flow control far below its
    /// window also sends earlier packets unmarked, and its window would grow without
    /// bound. The test is Google quiche's `TcpCubicSenderBytes::IsCwndLimited` (Linux's
    /// `tcp_is_cwnd_limited` is similar): the flight fills the window, or leaves at most
    /// 3 datagrams of it (quiche `kMaxBurstBytes`), or, in slow start, exceeds half of it
    /// (a paced or ACK-clocked slow start has not yet filled the doubled window: RFC 9002
    /// §7.8 says a pacing delay is not application limitation).
    fn cwnd_limited(&self, prior_in_flight: u64) -> bool {
        let cwnd = self.cwnd();
        prior_in_flight >= cwnd
            || cwnd - prior_in_flight <= 3 * self.config.max_datagram_size
            || (self.cc.in_slow_start() && prior_in_flight > cwnd / 2)
    }

    // ----- A.9 ---------------------------------------------------------------------------

    /// The loss-detection timer fired (A.9 `OnLossDetectionTimeout`). A call before the
    /// timer's deadline, or with no timer armed, does nothing.
    pub fn on_loss_detection_timeout(&mut self, now: SimTime) -> TimeoutOutcome<F> {
        self.last_now = self.last_now.max(now);
        let mut out = TimeoutOutcome::default();
        match self.timer {
            Some(t) if t <= now => {}
            _ => return out,
        }
        if let Some((_, space)) = self.earliest_loss_time() {
            // Time-threshold loss detection.
            // May find nothing if an RTT sample from another space has lengthened the
            // loss delay since loss_time was set; detection then re-arms a later loss_time.
            let lost = self.detect_and_remove_lost_packets(now, space);
            if !lost.is_empty() {
                out.persistent_congestion = self.on_packets_lost(now, space, &lost);
            }
            out.lost = lost.into_iter().map(|e| e.pkt).collect();
            out.lost_space = Some(space);
            self.set_loss_detection_timer(now);
            self.housekeeping(now);
            return out;
        }
        if self.anti_deadlock() {
            // Client anti-deadlock probe (§6.2.2.1).
            debug_assert!(!self.peer_completed_address_validation());
            out.anti_deadlock = true;
            out.pto_probe = Some(if self.has_handshake_keys {
                Space::Handshake
            } else {
                Space::Initial
            });
        } else {
            out.pto_probe = self.pto_time_and_space(now).map(|(_, s)| s);
        }
        self.pto_count = self.pto_count.saturating_add(1);
        self.stats.ptos += 1;
        self.set_loss_detection_timer(now);
        self.housekeeping(now);
        out
    }

    // ----- A.11 --------------------------------------------------------------------------

    /// Keys of `space` were discarded (A.11): its packets leave bytes in flight, its timers
    /// are reset, pto_count = 0. Returns the packets that were outstanding. ApplicationData
    /// is never discarded this way (the connection just closes).
    pub fn discard_space(&mut self, space: Space) -> Vec<SentPacket<F>> {
        let si = space.idx();
        let out = self.take_all_packets(si);
        let s = &mut self.spaces[si];
        debug_assert_eq!(s.bytes_in_flight, 0);
        debug_assert_eq!(s.ack_eliciting_in_flight, 0);
        s.discarded = true;
        if space == Space::Initial {
            self.has_handshake_keys = true;
        }
        self.pto_count = 0;
        self.set_loss_detection_timer(self.last_now);
        self.prune_acked_seqs();
        out
    }

    /// Takes every packet of space `si` out of recovery: out of bytes in flight, with the
    /// space's lost list, last ack-eliciting send time and loss timer cleared. The caller
    /// re-arms the loss detection timer.
    fn take_all_packets(&mut self, si: usize) -> Vec<SentPacket<F>> {
        let sent = std::mem::take(&mut self.spaces[si].sent);
        let mut out = Vec::with_capacity(sent.len());
        for e in sent.into_values() {
            if e.pkt.in_flight {
                self.remove_from_flight(si, &e.pkt, e.seq);
            }
            out.push(e.pkt);
        }
        let s = &mut self.spaces[si];
        s.lost.clear();
        s.time_of_last_ack_eliciting = None;
        s.loss_time = None;
        out
    }

    /// Removes every packet of `space` from recovery (and from bytes in flight) without
    /// discarding the space, and returns them. Used when the server rejects 0-RTT: the
    /// client's 0-RTT packets can no longer be acknowledged, so their recovery state goes
    /// (RFC 9001 §4.6.2, as RFC 9002 §6.4 does for discarded keys) and their data is sent
    /// again in 1-RTT packets.
    pub fn remove_all_packets(&mut self, space: Space) -> Vec<SentPacket<F>> {
        let out = self.take_all_packets(space.idx());
        self.set_loss_detection_timer(self.last_now);
        self.prune_acked_seqs();
        out
    }

    // ----- connection migration (RFC 9000 §9) ------------------------------------------

    /// The connection moved to a new network path at `now` (RFC 9000 §9.4: "packets sent
    /// on the old path MUST NOT contribute to congestion control or RTT estimation for
    /// the new path"). The packets still outstanding leave bytes in flight (they were
    /// sent on the old path, whose links are gone) but stay tracked: an acknowledgement
    /// still retires them, loss detection still declares them lost (their frames are
    /// then sent again), and neither gives an RTT sample or a congestion signal. The
    /// controller and estimator are not touched here: the window policy decides once the
    /// new path is validated ([`Recovery::restart_path_state`]).
    pub fn on_path_change(&mut self, now: SimTime) {
        self.last_now = self.last_now.max(now);
        for si in 0..self.spaces.len() {
            if self.spaces[si].discarded {
                continue;
            }
            let sent = std::mem::take(&mut self.spaces[si].sent);
            for mut e in sent.into_values() {
                if e.pkt.in_flight {
                    self.remove_from_flight(si, &e.pkt, e.seq);
                    e.pkt.in_flight = false;
                }
                let pn = e.pkt.pn;
                self.spaces[si].sent.insert(pn, e);
            }
            self.spaces[si].lost.clear();
        }
        self.path_start = Some(now);
        self.pto_count = 0;
        self.set_loss_detection_timer(now);
        self.prune_acked_seqs();
    }

    /// The new path's congestion state after validation: controller `cc` (fresh, with
    /// its initial window) and an RTT estimator whose initial RTT is `initial_rtt` (RFC
    /// 9002 §6.2.2: the PATH_CHALLENGE round trip "MAY" set the new path's initial RTT,
    /// but is not a sample). The PTO backoff restarts.
    pub fn restart_path_state(
        &mut self,
        cc: Box<dyn CongestionController>,
        initial_rtt: SimDuration,
    ) {
        self.rate = cc.wants_rate_samples().then(RateSampler::new);
        self.cwnd = cc.window();
        self.cc = cc;
        self.rtt = RttEstimator::new(initial_rtt);
        self.pto_count = 0;
        let now = self.last_now;
        self.set_loss_detection_timer(now);
    }

    /// When the current path started (`None`: the first path).
    pub fn path_start(&self) -> Option<SimTime> {
        self.path_start
    }

    /// A packet sent at `t` was sent on the current path.
    fn on_current_path(&self, t: SimTime) -> bool {
        self.path_start.is_none_or(|s| t >= s)
    }

    // ----- internals ---------------------------------------------------------------------

    fn remove_from_flight(&mut self, si: usize, p: &SentPacket<F>, seq: u64) {
        if let Some(r) = self.rate.as_mut() {
            r.forget(seq);
        }
        let s = &mut self.spaces[si];
        s.bytes_in_flight -= p.size;
        self.bytes_in_flight -= p.size;
        if p.ack_eliciting {
            s.ack_eliciting_in_flight -= 1;
        }
    }

    fn no_ack_eliciting_in_flight(&self) -> bool {
        self.spaces.iter().all(|s| s.ack_eliciting_in_flight == 0)
    }

    /// The client anti-deadlock PTO applies (§6.2.2.1): nothing ack-eliciting in flight,
    /// or only 0-RTT packets, which cannot arm a PTO before the handshake is confirmed
    /// (§6.2.1). A.8's pseudocode tests "no ack-eliciting packets in flight" over every
    /// space; with 0-RTT in flight and the Initial acknowledged it would arm nothing,
    /// while §6.2.2.1 requires the client to keep a PTO armed until its address is
    /// validated "even if there are no packets in flight" (else a server at its
    /// anti-amplification limit and a client waiting for the rest of the server's flight
    /// deadlock).
    fn anti_deadlock(&self) -> bool {
        self.no_ack_eliciting_in_flight()
            || (self.is_client
                && !self.handshake_confirmed
                && !self.peer_completed_address_validation()
                && self.spaces[0].ack_eliciting_in_flight == 0
                && self.spaces[1].ack_eliciting_in_flight == 0)
    }

    /// A.8 `GetLossTimeAndSpace`.
    fn earliest_loss_time(&self) -> Option<(SimTime, Space)> {
        let mut best: Option<(SimTime, Space)> = None;
        for sp in Space::ALL {
            if let Some(t) = self.spaces[sp.idx()].loss_time {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, sp));
                }
            }
        }
        best
    }

    /// A.8 `GetPtoTimeAndSpace`.
    fn pto_time_and_space(&self, now: SimTime) -> Option<(SimTime, Space)> {
        let mut duration = backoff(self.rtt.pto_base(self.config.granularity), self.pto_count);
        if self.anti_deadlock() {
            // Anti-deadlock PTO starts from the current time.
            let sp = if self.has_handshake_keys {
                Space::Handshake
            } else {
                Space::Initial
            };
            return Some((now.saturating_add(duration), sp));
        }
        let mut best: Option<(SimTime, Space)> = None;
        for sp in Space::ALL {
            let s = &self.spaces[sp.idx()];
            if s.ack_eliciting_in_flight == 0 {
                continue;
            }
            if sp == Space::ApplicationData {
                // Skip ApplicationData until the handshake is confirmed (§6.2.1).
                if !self.handshake_confirmed {
                    return best;
                }
                duration =
                    duration.saturating_add(backoff(self.config.max_ack_delay, self.pto_count));
            }
            let Some(last) = s.time_of_last_ack_eliciting else {
                continue;
            };
            let t = last.saturating_add(duration);
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, sp));
            }
        }
        best
    }

    /// A.8 `SetLossDetectionTimer`.
    fn set_loss_detection_timer(&mut self, now: SimTime) {
        if self.handshake_confirmed && self.spaces[0].discarded && self.spaces[1].discarded {
            // Only the application space is left (a discarded space has no loss time and
            // nothing in flight): A.8 read for that space alone, the same timer.
            let app = &self.spaces[2];
            self.timer = if let Some(t) = app.loss_time {
                Some(t)
            } else if self.at_anti_amplification_limit {
                None
            } else if app.ack_eliciting_in_flight == 0 {
                // Nothing in flight: no timer once the peer validated our address, else
                // the anti-deadlock PTO from now (§6.2.2.1).
                (!self.peer_completed_address_validation()).then(|| {
                    let base = self.rtt.pto_base(self.config.granularity);
                    now.saturating_add(backoff(base, self.pto_count))
                })
            } else {
                let base = backoff(self.rtt.pto_base(self.config.granularity), self.pto_count);
                let d = base.saturating_add(backoff(self.config.max_ack_delay, self.pto_count));
                app.time_of_last_ack_eliciting
                    .map(|last| last.saturating_add(d))
            };
            debug_assert_eq!(self.timer, self.loss_detection_timer_all_spaces(now));
            return;
        }
        self.timer = self.loss_detection_timer_all_spaces(now);
    }

    /// A.8 `SetLossDetectionTimer`'s timer over every space.
    fn loss_detection_timer_all_spaces(&self, now: SimTime) -> Option<SimTime> {
        if let Some((t, _)) = self.earliest_loss_time() {
            // Time-threshold loss detection takes precedence.
            return Some(t);
        }
        if self.at_anti_amplification_limit {
            // A server blocked by anti-amplification must not arm the PTO.
            return None;
        }
        if self.no_ack_eliciting_in_flight() && self.peer_completed_address_validation() {
            return None;
        }
        self.pto_time_and_space(now).map(|(t, _)| t)
    }

    /// A.10 `DetectAndRemoveLostPackets`. Returns the lost packets in pn order; records
    /// the in-flight ones for spurious-loss detection.
    fn detect_and_remove_lost_packets(&mut self, now: SimTime, space: Space) -> Vec<Entry<F>> {
        let s = &mut self.spaces[space.idx()];
        s.loss_time = None;
        let Some(largest_acked) = s.largest_acked else {
            return Vec::new();
        };
        // The walk below covers the outstanding packets up to the largest acknowledged,
        // which start at the first outstanding record: when that lies above, nothing is
        // lost and no loss time is set (the usual ACK of an in-order transfer).
        if s.sent.first_key().is_none_or(|f| f > largest_acked) {
            return Vec::new();
        }
        let loss_delay = self.loss_delay();
        let threshold = self.config.packet_threshold;
        let s = &mut self.spaces[space.idx()];
        let mut lost_pns = std::mem::take(&mut self.lost_pns);
        debug_assert!(lost_pns.is_empty());
        let mut loss_time: Option<SimTime> = None;
        for (pn, e) in s.sent.range(0, largest_acked) {
            let sent = e.pkt.time_sent;
            // Time threshold (`time_sent <= now - loss_delay`, written without
            // underflow) or packet threshold.
            if sent.saturating_add(loss_delay) <= now
                || largest_acked >= pn.saturating_add(threshold)
            {
                lost_pns.push(pn);
            } else {
                let t = sent.saturating_add(loss_delay);
                loss_time = Some(loss_time.map_or(t, |l: SimTime| l.min(t)));
            }
        }
        s.loss_time = loss_time;
        let mut lost = Vec::with_capacity(lost_pns.len());
        for pn in lost_pns.drain(..) {
            if let Some(e) = s.sent.remove(pn) {
                lost.push(e);
            }
        }
        self.lost_pns = lost_pns;
        lost
    }

    /// A.9 `OnPacketsLost` (B.7 congestion part, §7.6 persistent congestion). Returns
    /// whether persistent congestion was declared.
    fn on_packets_lost(&mut self, now: SimTime, space: Space, lost: &[Entry<F>]) -> bool {
        let si = space.idx();
        let mut newest_lost_sent: Option<SimTime> = None;
        for e in lost {
            let p = &e.pkt;
            if p.in_flight {
                if let Some(r) = self.rate.as_mut() {
                    r.on_packet_lost(e.seq);
                }
                self.remove_from_flight(si, p, e.seq);
                newest_lost_sent =
                    Some(newest_lost_sent.map_or(p.time_sent, |t| t.max(p.time_sent)));
                self.stats.lost_packets += 1;
                self.stats.lost_bytes += p.size;
                self.spaces[si].lost.insert(
                    p.pn,
                    LostRecord {
                        seq: e.seq,
                        declared_at: now,
                    },
                );
            }
        }
        if let Some(t) = newest_lost_sent {
            if !self.cc.in_recovery(t) {
                // A new recovery period starts (B.6): count it.
                self.stats.congestion_events += 1;
            }
            self.cc.on_congestion_event(now, t, self.bytes_in_flight);
            self.cwnd = self.cc.window();
        }
        // §7.6.2: only packets sent after the first RTT sample.
        let Some(first_sample) = self.rtt.first_sample_time() else {
            return false;
        };
        if self.in_persistent_congestion(lost, first_sample) {
            self.stats.persistent_congestion += 1;
            self.rtt.on_persistent_congestion();
            self.cc.on_persistent_congestion(now);
            self.cwnd = self.cc.window();
            return true;
        }
        false
    }

    /// §7.6.2: two ack-eliciting lost packets, sent after the first RTT sample, more than
    /// the persistent-congestion duration apart, no packet sent between them acknowledged
    /// (in any space: checked with the cross-space send order).
    fn in_persistent_congestion(&self, lost: &[Entry<F>], first_sample: SimTime) -> bool {
        let duration = self.persistent_congestion_duration();
        let mut run_start: Option<&Entry<F>> = None;
        let mut prev: Option<&Entry<F>> = None;
        for e in lost.iter().filter(|e| {
            e.pkt.ack_eliciting
                && e.pkt.time_sent > first_sample
                && self.on_current_path(e.pkt.time_sent)
        }) {
            match prev {
                Some(p) if e.seq <= p.seq + 1 || self.acked_seqs.covered(p.seq + 1, e.seq) == 0 => {
                }
                _ => run_start = Some(e),
            }
            prev = Some(e);
            if let Some(start) = run_start {
                if e.pkt.time_sent.saturating_since(start.pkt.time_sent) > duration {
                    return true;
                }
            }
        }
        false
    }

    /// Forget old declared-lost records and acknowledged send-order numbers that can no
    /// longer matter.
    fn housekeeping(&mut self, now: SimTime) {
        // The acknowledged send-order numbers are pruned for memory only (any bound at or
        // below the oldest outstanding packet gives the same answers, see
        // `prune_acked_seqs`): acknowledgements in send order keep them one range, so
        // only a set split by holes is pruned.
        if self.acked_seqs.len() > ACKED_SEQ_RANGES_KEPT {
            self.prune_acked_seqs();
        }
        if self.spaces.iter().all(|s| s.lost.v.is_empty()) {
            return;
        }
        let retention = self
            .rtt
            .pto_base(self.config.granularity)
            .saturating_add(self.config.max_ack_delay)
            .saturating_mul(self.config.lost_retention_ptos);
        for s in &mut self.spaces {
            // Declared-lost times are non-decreasing in pn within a space.
            while let Some((_, rec)) = s.lost.first() {
                if rec.declared_at.saturating_add(retention) <= now {
                    s.lost.pop_first();
                } else {
                    break;
                }
            }
        }
    }

    /// Forgets the acknowledged send-order numbers below the oldest outstanding packet.
    ///
    /// Persistent congestion (§7.6.2) asks only whether a packet sent between two lost
    /// ack-eliciting ones was acknowledged; both were outstanding (or not yet sent) at the
    /// last pruning, so the numbers it asks about lie above every packet outstanding then,
    /// and an acknowledged number below the oldest outstanding packet (of any kind: the
    /// first record of a sent map, the oldest of its space) is never asked about. That
    /// bound is at or below the oldest outstanding ack-eliciting packet, so the answers
    /// are those of pruning at that packet; it costs no per-packet bookkeeping.
    fn prune_acked_seqs(&mut self) {
        let oldest = self
            .spaces
            .iter()
            .filter_map(|s| s.sent.first_value().map(|e| e.seq))
            .min()
            .unwrap_or(self.next_seq);
        self.acked_seqs.remove(0, oldest);
    }
}

/// `d·2^k`, saturating.
fn backoff(d: SimDuration, k: u32) -> SimDuration {
    match 1u64.checked_shl(k) {
        Some(m) if k < 64 => d.saturating_mul(m),
        _ => SimDuration::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::ZERO + ms(x)
    }
    fn pkt(pn: u64, t: SimTime, size: u64) -> SentPacket<u64> {
        SentPacket {
            pn,
            time_sent: t,
            size,
            ack_eliciting: true,
            in_flight: true,
            app_limited: false,
            ect0: false,
            info: pn,
        }
    }
    fn pns(v: &[SentPacket<u64>]) -> Vec<u64> {
        v.iter().map(|p| p.pn).collect()
    }
    fn server() -> Recovery<u64> {
        Recovery::new(RecoveryConfig::default(), false)
    }
    fn client() -> Recovery<u64> {
        Recovery::new(RecoveryConfig::default(), true)
    }

    /// RFC 9000 §9.4: packets sent on the old path leave bytes in flight at the switch;
    /// neither their acknowledgement (no RTT sample) nor their loss (no congestion event)
    /// feeds the new path, but their loss is still detected (their data is re-sent).
    #[test]
    fn packets_of_the_old_path_feed_neither_rtt_nor_congestion_control() {
        let d = Space::ApplicationData;
        let mut r = server();
        r.set_handshake_confirmed();
        r.on_packet_sent(at(0), d, pkt(0, at(0), 1000));
        assert!(r.on_ack_received(at(100), d, &[(0, 0)], ms(0)).rtt_sample);
        for pn in 1..=5 {
            r.on_packet_sent(at(100), d, pkt(pn, at(100), 1000));
        }
        assert_eq!(r.bytes_in_flight(), 5000);
        let cwnd = r.cwnd();
        r.on_path_change(at(150));
        assert_eq!(r.bytes_in_flight(), 0);
        assert_eq!(r.path_start(), Some(at(150)));
        for pn in 6..=9 {
            r.on_packet_sent(at(150), d, pkt(pn, at(150), 1000));
        }
        assert_eq!(r.bytes_in_flight(), 4000);
        // An ACK whose largest packet was sent on the old path: no RTT sample.
        let o = r.on_ack_received(at(160), d, &[(1, 1)], ms(0));
        assert!(!o.rtt_sample);
        assert_eq!(r.rtt().latest_rtt(), ms(100));
        // New-path packets acknowledged: a sample; the old 2..=5 are lost by the packet
        // threshold, without a congestion event.
        let o = r.on_ack_received(at(170), d, &[(6, 9)], ms(0));
        assert!(o.rtt_sample);
        assert_eq!(r.rtt().latest_rtt(), ms(20));
        assert_eq!(pns(&o.lost), vec![2, 3, 4, 5]);
        assert_eq!(r.stats().congestion_events, 0);
        assert!(r.cwnd() >= cwnd);
        assert_eq!(r.bytes_in_flight(), 0);
        // The window policy's restart: a fresh controller and an estimator seeded with the
        // validation round trip (not a sample, RFC 9002 §6.2.2).
        let params = cc::CcParams {
            algorithm: cc::CcAlgorithm::NewReno,
            initial_cwnd_bytes: Some(30_000),
            ..cc::CcParams::default()
        };
        r.restart_path_state(cc::build(&params, 1200), ms(3));
        assert_eq!(r.cwnd(), 30_000);
        assert_eq!(r.rtt().smoothed_rtt(), ms(3));
        assert!(!r.rtt().has_sample());
    }

    #[test]
    fn first_pto_without_rtt_sample_is_999ms() {
        let mut r = client();
        r.on_packet_sent(at(0), Space::Initial, pkt(0, at(0), 1200));
        assert_eq!(r.pto_duration(Space::Initial), ms(999));
        assert_eq!(r.loss_detection_timer(), Some(at(999)));
        let out = r.on_loss_detection_timeout(at(999));
        assert_eq!(out.pto_probe, Some(Space::Initial));
        assert!(out.lost.is_empty(), "a PTO never declares loss");
        assert!(!out.anti_deadlock);
        assert_eq!(r.pto_count(), 1);
        // Backoff: 2·999 from the last ack-eliciting packet (still at 0).
        assert_eq!(r.loss_detection_timer(), Some(at(1998)));
    }

    #[test]
    fn pto_backoff_doubles_and_resets_on_ack() {
        let mut r = server();
        r.set_handshake_confirmed();
        // RTT sample 100 ms: srtt 100, rttvar 50 -> base 300; AppData + 25 = 325.
        r.on_packet_sent(at(0), Space::ApplicationData, pkt(0, at(0), 1000));
        let o = r.on_ack_received(at(100), Space::ApplicationData, &[(0, 0)], ms(0));
        assert!(o.rtt_sample);
        r.on_packet_sent(at(100), Space::ApplicationData, pkt(1, at(100), 1000));
        assert_eq!(r.pto_duration(Space::ApplicationData), ms(325));
        assert_eq!(r.loss_detection_timer(), Some(at(425)));
        let mut expect = 425;
        for k in 1..=4u64 {
            let o = r.on_loss_detection_timeout(at(expect));
            assert_eq!(o.pto_probe, Some(Space::ApplicationData));
            assert!(o.lost.is_empty());
            assert_eq!(r.pto_count() as u64, k);
            // Timer from the last ack-eliciting packet (100 ms) with 2^k backoff.
            expect = 100 + 325 * (1 << k);
            assert_eq!(r.loss_detection_timer(), Some(at(expect)));
        }
        // Nothing declared lost by the PTOs, bytes still in flight.
        assert_eq!(r.bytes_in_flight(), 1000);
        let o = r.on_ack_received(at(2000), Space::ApplicationData, &[(1, 1)], ms(0));
        assert_eq!(pns(&o.acked), vec![1]);
        assert_eq!(r.pto_count(), 0);
        assert_eq!(r.loss_detection_timer(), None);
    }

    #[test]
    fn appdata_pto_not_armed_before_confirmation() {
        let mut r = server();
        r.on_packet_sent(at(0), Space::ApplicationData, pkt(0, at(0), 1000));
        assert_eq!(r.loss_detection_timer(), None);
        r.set_handshake_confirmed();
        // 333 + 666 + 25 = 1024 ms.
        assert_eq!(r.loss_detection_timer(), Some(at(1024)));
    }

    #[test]
    fn earliest_space_wins_and_amplification_limit_disarms() {
        let mut r = server();
        r.on_packet_sent(at(0), Space::Initial, pkt(0, at(0), 1200));
        r.on_packet_sent(at(5), Space::Handshake, pkt(0, at(5), 1200));
        assert_eq!(r.loss_detection_timer(), Some(at(999)));
        r.set_at_anti_amplification_limit(true);
        assert_eq!(r.loss_detection_timer(), None);
        r.set_at_anti_amplification_limit(false);
        assert_eq!(r.loss_detection_timer(), Some(at(999)));
        let d = r.discard_space(Space::Initial);
        assert_eq!(pns(&d), vec![0]);
        assert_eq!(r.bytes_in_flight(), 1200);
        assert_eq!(r.loss_detection_timer(), Some(at(1004)));
    }

    #[test]
    fn client_anti_deadlock_and_pto_count_exception() {
        let mut r = client();
        r.on_packet_sent(at(0), Space::Initial, pkt(0, at(0), 1200));
        // Server's Initial ACK at 100 ms: sample 100 ms, nothing in flight, but the
        // server has not validated us: arm from now, pto_count not reset.
        let first = r.on_loss_detection_timeout(at(999));
        assert_eq!(first.pto_probe, Some(Space::Initial));
        r.on_packet_sent(at(999), Space::Initial, pkt(1, at(999), 1200));
        let o = r.on_ack_received(at(1100), Space::Initial, &[(0, 1)], ms(0));
        assert_eq!(pns(&o.acked), vec![0, 1]);
        assert_eq!(r.bytes_in_flight(), 0);
        assert_eq!(r.pto_count(), 1, "client keeps the backoff until validated");
        // sample = 1100 - 999 = 101 ms; srtt 101, rttvar 50.5 -> base 303; ·2 = 606.
        assert_eq!(r.rtt().smoothed_rtt(), ms(101));
        assert_eq!(r.loss_detection_timer(), Some(at(1100 + 606)));
        let o = r.on_loss_detection_timeout(at(1706));
        assert!(o.anti_deadlock);
        assert_eq!(o.pto_probe, Some(Space::Initial));
        r.set_has_handshake_keys();
        let o2 = r.on_loss_detection_timeout(at(1706 + 1212));
        assert_eq!(o2.pto_probe, Some(Space::Handshake));
        assert!(o2.anti_deadlock);
        // A Handshake ACK validates the address: the timer is cancelled when idle.
        r.on_packet_sent(at(3000), Space::Handshake, pkt(0, at(3000), 100));
        r.on_ack_received(at(3101), Space::Handshake, &[(0, 0)], ms(0));
        assert_eq!(r.pto_count(), 0);
        assert_eq!(r.loss_detection_timer(), None);
    }

    #[test]
    fn packet_threshold_then_time_threshold_with_exact_timers() {
        let mut r = server();
        r.set_handshake_confirmed();
        for pn in 0..6 {
            r.on_packet_sent(at(pn), Space::ApplicationData, pkt(pn, at(pn), 1000));
        }
        assert_eq!(r.bytes_in_flight(), 6000);
        // Ack of pn 4 (sent at 4 ms) at 100 ms: first sample 96 ms, loss_delay =
        // 9/8·96 = 108 ms. Packet threshold (4 >= pn + 3): pn 0, 1. pn 2 and 3 are not
        // old enough (2 + 108 = 110 > 100): loss_time = 110 ms.
        let o = r.on_ack_received(at(100), Space::ApplicationData, &[(4, 4)], ms(0));
        assert!(o.rtt_sample);
        assert_eq!(pns(&o.acked), vec![4]);
        assert_eq!(pns(&o.lost), vec![0, 1]);
        assert_eq!(r.loss_delay(), ms(108));
        assert_eq!(r.loss_detection_timer(), Some(at(110)));
        assert_eq!(r.bytes_in_flight(), 3000);
        // Congestion event at 100 ms (newest lost sent at 1 ms): 12 000 -> 6 000. The ACK
        // of pn 4 (sent before the recovery start) does not grow the window.
        assert_eq!(r.cwnd(), 6_000);
        // Firing early does nothing.
        let o = r.on_loss_detection_timeout(SimTime(at(110).0 - 1));
        assert!(o.lost.is_empty() && o.pto_probe.is_none());
        // At 110 ms: pn 2 lost (2 + 108 <= 110); pn 3 pending until 111 ms.
        let o = r.on_loss_detection_timeout(at(110));
        assert_eq!(pns(&o.lost), vec![2]);
        assert_eq!(o.pto_probe, None);
        assert_eq!(r.loss_detection_timer(), Some(at(111)));
        let o = r.on_loss_detection_timeout(at(111));
        assert_eq!(pns(&o.lost), vec![3]);
        // Still one recovery period: pn 2 and 3 were sent before 100 ms.
        assert_eq!(r.cwnd(), 6_000);
        assert_eq!(r.stats().congestion_events, 1);
        assert_eq!(r.stats().lost_packets, 4);
        assert_eq!(r.pto_count(), 0);
        // pn 5 (above largest acked) remains: now the PTO, from its send time (5 ms):
        // srtt 96, rttvar 48 -> 96 + 192 + 25 = 313 ms.
        assert_eq!(r.bytes_in_flight(), 1000);
        assert_eq!(r.loss_detection_timer(), Some(at(5 + 313)));
    }

    #[test]
    fn time_threshold_uses_max_of_latest_and_smoothed_and_granularity() {
        let mut r = server();
        r.set_handshake_confirmed();
        // Samples: 100 ms then 20 ms: srtt = (700 + 20)/8 = 90, latest 20 -> 9/8·90.
        r.on_packet_sent(at(0), Space::ApplicationData, pkt(0, at(0), 1000));
        r.on_ack_received(at(100), Space::ApplicationData, &[(0, 0)], ms(0));
        r.on_packet_sent(at(100), Space::ApplicationData, pkt(1, at(100), 1000));
        r.on_ack_received(at(120), Space::ApplicationData, &[(1, 1)], ms(0));
        assert_eq!(r.loss_delay(), SimDuration::from_micros(101_250));
        // Tiny RTTs: the granularity floor (1 ms).
        let mut r = server();
        r.on_packet_sent(at(0), Space::Initial, pkt(0, at(0), 1200));
        r.on_ack_received(SimTime(100_000), Space::Initial, &[(0, 0)], ms(0));
        assert_eq!(r.loss_delay(), ms(1));
    }

    /// Acknowledged send-order numbers split by holes are pruned: the set stays bounded
    /// (packets acknowledged one in two, the others lost).
    #[test]
    fn acked_send_order_numbers_stay_bounded() {
        let mut r = server();
        r.set_handshake_confirmed();
        for pn in 0..400 {
            r.on_packet_sent(at(pn), Space::ApplicationData, pkt(pn, at(pn), 1000));
            if pn % 2 == 0 {
                r.on_ack_received(at(pn), Space::ApplicationData, &[(pn, pn)], ms(0));
            }
            let outstanding = r.spaces[2].sent.first_key().unwrap_or(pn + 1);
            assert!(
                r.acked_seqs.len() <= ACKED_SEQ_RANGES_KEPT + 1,
                "{} ranges at pn {pn}, oldest outstanding {outstanding}",
                r.acked_seqs.len()
            );
        }
        assert!(r.stats().lost_packets > 150);
    }

    /// The acknowledged packets come out in packet-number order whatever order the ranges
    /// are given in (ascending, overlapping, either bound first), as for a frame's order.
    #[test]
    fn acked_in_packet_number_order_for_any_range_order() {
        let frame: &[(u64, u64)] = &[(8, 9), (5, 6), (1, 2)];
        let others: [&[(u64, u64)]; 3] = [
            &[(1, 2), (5, 6), (8, 9)],
            &[(2, 1), (9, 8), (6, 5)],
            &[(5, 6), (1, 2), (8, 9), (2, 5), (9, 9)],
        ];
        let ack = |ranges: &[(u64, u64)]| {
            let mut r = server();
            r.set_handshake_confirmed();
            for pn in 0..10 {
                r.on_packet_sent(at(pn), Space::ApplicationData, pkt(pn, at(pn), 1000));
            }
            let o = r.on_ack_received(at(30), Space::ApplicationData, ranges, ms(0));
            (pns(&o.acked), r.bytes_in_flight())
        };
        // 0, 3 and 4 are lost (packet threshold), 7 stays in flight.
        assert_eq!(ack(frame), (vec![1, 2, 5, 6, 8, 9], 1000));
        assert_eq!(ack(others[0]), ack(frame));
        assert_eq!(ack(others[1]), ack(frame));
        assert_eq!(ack(others[2]), (vec![1, 2, 3, 4, 5, 6, 8, 9], 1000));
    }

    #[test]
    fn spurious_loss_counted() {
        let mut r = server();
        r.set_handshake_confirmed();
        for pn in 0..5 {
            r.on_packet_sent(at(pn), Space::ApplicationData, pkt(pn, at(pn), 1000));
        }
        let o = r.on_ack_received(at(100), Space::ApplicationData, &[(3, 4)], ms(0));
        // Packet threshold: 4 >= pn + 3 for pn 0, 1; pn 2: 2 + 9/8·96 > 100, pending.
        assert_eq!(pns(&o.lost), vec![0, 1]);
        // The late ACK of everything (reordering): two spurious losses, pn 2 acked.
        let o = r.on_ack_received(at(101), Space::ApplicationData, &[(0, 4)], ms(0));
        assert_eq!(o.spurious_losses, 2);
        assert_eq!(pns(&o.acked), vec![2]);
        assert_eq!(r.stats().spurious_losses, 2);
        assert_eq!(r.bytes_in_flight(), 0);
    }

    /// Runs RFC 9002 §7.6.3's table, shifted by 1 s so that the handshake can provide the
    /// first RTT sample (at 0.2 s) before the table starts. Just before the ACK of #9 the
    /// RTT state is set so that after that ACK's own sample (0.2 s)
    /// `smoothed_rtt + max(4·rttvar, g) + max_ack_delay = 0.2 + 4·0.45 + 0 = 2` s, as the
    /// example assumes. `first_sample` overrides the time of the first RTT sample;
    /// `cross_ack` acknowledges a Handshake packet sent at t = 4.5.
    fn rfc_7_6_3(
        first_sample: Option<SimTime>,
        cross_ack: bool,
    ) -> (Recovery<u64>, AckOutcome<u64>) {
        let cfg = RecoveryConfig {
            max_ack_delay: SimDuration::ZERO,
            ..RecoveryConfig::default()
        };
        let mut r: Recovery<u64> = Recovery::new(cfg, false);
        let t = |x_ms: u64| SimTime::ZERO + ms(1000 + x_ms);
        r.on_packet_sent(SimTime(0), Space::Handshake, pkt(0, SimTime(0), 1000));
        r.on_ack_received(at(200), Space::Handshake, &[(0, 0)], ms(0));
        r.set_handshake_confirmed();
        r.on_packet_sent(t(0), Space::ApplicationData, pkt(1, t(0), 1000));
        r.on_packet_sent(t(1000), Space::ApplicationData, pkt(2, t(1000), 1000));
        r.on_ack_received(t(1200), Space::ApplicationData, &[(1, 1)], ms(0));
        for pn in 3..=7 {
            let ts = t((pn - 1) * 1000);
            r.on_packet_sent(ts, Space::ApplicationData, pkt(pn, ts, 1000));
            if pn == 5 && cross_ack {
                r.on_packet_sent(t(4500), Space::Handshake, pkt(1, t(4500), 1000));
                r.on_ack_received(t(4900), Space::Handshake, &[(1, 1)], ms(0));
            }
        }
        r.on_packet_sent(t(8000), Space::ApplicationData, pkt(8, t(8000), 1000));
        r.on_packet_sent(t(12000), Space::ApplicationData, pkt(9, t(12000), 1000));
        let fs = first_sample.or(r.rtt.first_sample_time());
        r.rtt.force_state(ms(200), ms(600), ms(200), ms(200), fs);
        let o = r.on_ack_received(t(12200), Space::ApplicationData, &[(9, 9)], ms(0));
        assert_eq!(r.rtt().smoothed_rtt(), ms(200));
        assert_eq!(r.rtt().rttvar(), ms(450));
        (r, o)
    }

    #[test]
    fn persistent_congestion_rfc_example() {
        let (r, o) = rfc_7_6_3(None, false);
        assert_eq!(
            pns(&o.lost),
            vec![2, 3, 4, 5, 6, 7, 8],
            "packets 2 through 8"
        );
        // Period 8 - 1 = 7 s > duration 2·3 = 6 s, nothing acknowledged in between.
        assert_eq!(
            r.persistent_congestion_duration(),
            SimDuration::from_secs(6)
        );
        assert!(o.persistent_congestion);
        // kMinimumWindow, then the ACK of #9 (processed after the losses, A.7) grows it
        // in slow start: 2400 + 1000.
        assert_eq!(r.cwnd(), 3_400);
        assert_eq!(r.stats().persistent_congestion, 1);
        // After persistent congestion min_rtt is the latest sample.
        assert_eq!(r.rtt().min_rtt(), ms(200));
    }

    #[test]
    fn persistent_congestion_needs_no_ack_in_between_in_any_space() {
        // A Handshake packet sent at 4.5 and acknowledged splits the run into #2..#5 and
        // #6..#8 (3 s and 3 s): no persistent congestion, an ordinary halving.
        let (r, o) = rfc_7_6_3(None, true);
        assert_eq!(pns(&o.lost), vec![2, 3, 4, 5, 6, 7, 8]);
        assert!(!o.persistent_congestion);
        // The ACKs of #1 and of the Handshake packet came with at most 5000 B in flight
        // of a 12 000 B slow-start window (not above half of it): under-utilised, no
        // growth (§7.8). The losses halve 12 000; #9 was sent before the recovery began.
        assert_eq!(r.cwnd(), 6_000);
    }

    #[test]
    fn persistent_congestion_only_after_first_rtt_sample() {
        // If the first RTT sample had been taken only at t = 1.2 (the ACK of #1), packet
        // #2 (sent at t = 1) cannot start the period: 8 - 2 = 6 s is not > 6 s.
        let first = SimTime::ZERO + ms(2200);
        let (_, o) = rfc_7_6_3(Some(first), false);
        assert_eq!(pns(&o.lost), vec![2, 3, 4, 5, 6, 7, 8]);
        assert!(!o.persistent_congestion);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The declared-lost records an ACK covers are exactly those inside one of its
        /// ranges, whether the ranges come largest first (as in an ACK frame: the walk)
        /// or in any order (a search per range).
        #[test]
        fn acked_lost_records_are_those_in_a_range(
            keys in proptest::collection::btree_set(0u64..200, 0..40),
            raw in proptest::collection::vec((0u64..200, 0u64..15), 0..8),
            descending in any::<bool>(),
        ) {
            let mut lost = LostRecords::default();
            for &k in keys.iter().rev() {
                // Out of order on purpose: the middle inserts too.
                lost.insert(k, LostRecord { seq: k, declared_at: SimTime::ZERO });
            }
            let mut ranges: Vec<(u64, u64)> = if descending {
                // Disjoint, largest first, bounds in either order.
                let mut v: Vec<(u64, u64)> = Vec::new();
                let mut next = 1_000u64;
                let mut starts: Vec<u64> = raw.iter().map(|r| r.0).collect();
                starts.sort_unstable_by(|a, b| b.cmp(a));
                for (k, s) in starts.into_iter().enumerate() {
                    let hi = s.min(next.saturating_sub(2));
                    let lo = hi.saturating_sub(raw[k].1);
                    if next >= 2 && hi + 2 <= next {
                        v.push(if k % 2 == 0 { (lo, hi) } else { (hi, lo) });
                        next = lo;
                    }
                }
                v
            } else {
                raw.iter().map(|&(a, w)| (a, a + w)).collect()
            };
            if !descending {
                ranges.reverse();
            }
            let want: Vec<u64> = keys
                .iter()
                .copied()
                .filter(|&k| ranges.iter().any(|&(a, b)| a.min(b) <= k && k <= a.max(b)))
                .collect();
            prop_assert_eq!(acked_lost_records(&lost, &ranges), want);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The incremental search finds at every ACK exactly the records the whole-span
        /// search finds, over a run of ACKs in any order (reordered, repeated, stale, with
        /// ranges in frame order or not) interleaved with packets declared lost (only
        /// packets no processed ACK covered, as in recovery) and records dropped by
        /// retention.
        #[test]
        fn incremental_lost_search_matches_whole_span(
            ops in proptest::collection::vec(
                (0u8..6, proptest::collection::vec((0u64..120, 0u64..6), 1..6), any::<bool>()),
                1..60,
            ),
        ) {
            let mut lost = LostRecords::default();
            let mut prev = Vec::new();
            // The last ACK drawn in frame order, normalised (what the next frame repeats).
            let mut last_frame: Vec<(u64, u64)> = Vec::new();
            // Packet numbers some processed ACK covered (never declared lost after).
            let mut acked = std::collections::BTreeSet::new();
            let mut hits = Vec::new();
            for (op, raw, frame_order) in ops {
                match op {
                    0 => {
                        // Declare lost the numbers of `raw` no processed ACK covered.
                        for &(pn, _) in &raw {
                            if !acked.contains(&pn) {
                                lost.insert(pn, LostRecord { seq: pn, declared_at: SimTime::ZERO });
                            }
                        }
                    }
                    1 => lost.pop_first(),
                    _ => {
                        // Disjoint ranges, largest first (an ACK frame), or as drawn.
                        let mut ranges: Vec<(u64, u64)> = Vec::new();
                        if op >= 4 && !last_frame.is_empty() {
                            // The next frame of a sequence: the last one with its largest
                            // range grown, maybe new ranges above, maybe fewer at the
                            // bottom (or, drawn so, a bottom range more).
                            ranges = last_frame.clone();
                            let (g, w) = raw[0];
                            ranges[0].1 += g % 4;
                            let mut top = ranges[0].1;
                            for &(gap, len) in raw.iter().skip(1).take(usize::from(frame_order) * 2) {
                                let lo = top + 2 + gap % 3;
                                ranges.insert(0, (lo, lo + len));
                                top = lo + len;
                            }
                            match w % 3 {
                                0 if ranges.len() > 1 => { ranges.pop(); }
                                1 => {
                                    let bottom = ranges[ranges.len() - 1].0;
                                    if bottom >= 3 {
                                        ranges.push((bottom - 3, bottom - 2));
                                    }
                                }
                                _ => {}
                            }
                        } else if frame_order {
                            let mut sorted = raw.clone();
                            sorted.sort_unstable_by(|a, b| b.cmp(a));
                            let mut below = u64::MAX;
                            for (k, &(hi, w)) in sorted.iter().enumerate() {
                                if hi.saturating_add(1) < below {
                                    let lo = hi.saturating_sub(w);
                                    ranges.push(if k % 2 == 0 { (lo, hi) } else { (hi, lo) });
                                    below = lo;
                                }
                            }
                        } else {
                            ranges = raw.iter().map(|&(a, w)| (a, a + w)).collect();
                        }
                        if ranges.windows(2).all(|w| w[0].0 <= w[0].1 && w[1].1 < w[0].0)
                            && ranges.last().is_some_and(|r| r.0 <= r.1)
                        {
                            last_frame = ranges.clone();
                        }
                        let want = acked_lost_records(&lost, &ranges);
                        hits.clear();
                        newly_acked_lost_records(&lost, &ranges, &mut prev, &mut hits);
                        prop_assert_eq!(&hits, &want);
                        for &pn in &hits {
                            lost.remove(pn);
                        }
                        for &(a, b) in &ranges {
                            acked.extend(a.min(b)..=a.max(b));
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::default())]
        #[test]
        fn bytes_in_flight_is_sum_of_outstanding(ops in proptest::collection::vec((0u8..4, 0u64..40, 1u64..1500), 1..200)) {
            let mut r: Recovery<u64> = Recovery::new(RecoveryConfig::default(), true);
            // Time in ns; PTO backoff can push timers far away, which the test skips.
            let mut now = 0u64;
            let mut next = [0u64; 3];
            // Packet numbers returned as acked, lost or discarded, per space.
            let mut done: [BTreeSet<u64>; 3] = Default::default();
            for (op, x, size) in ops {
                now += x * 1_000_000;
                let t = SimTime(now);
                let sp = Space::ALL[(x % 3) as usize];
                match op {
                    0 | 1 => {
                        if r.spaces[sp.idx()].discarded { continue; }
                        let pn = next[sp.idx()];
                        next[sp.idx()] += 1;
                        let mut p = pkt(pn, t, size);
                        p.ack_eliciting = size % 5 != 0;
                        p.in_flight = p.ack_eliciting || size % 7 == 0;
                        r.on_packet_sent(t, sp, p);
                    }
                    2 => {
                        if next[sp.idx()] == 0 { continue; }
                        let hi = size % next[sp.idx()];
                        let lo = hi.saturating_sub(x % 4);
                        let mut ranges = vec![(lo, hi)];
                        if lo > 2 { ranges.push((0, lo - 2)); }
                        let o = r.on_ack_received(t, sp, &ranges, ms(x % 30));
                        for p in o.acked.iter().chain(o.lost.iter()) {
                            prop_assert!(done[sp.idx()].insert(p.pn), "pn {} returned twice", p.pn);
                        }
                    }
                    _ => {
                        if x % 11 == 0 && sp != Space::ApplicationData {
                            for p in r.discard_space(sp) {
                                prop_assert!(done[sp.idx()].insert(p.pn));
                            }
                        } else if let Some(tt) = r.loss_detection_timer().filter(|tt| tt.0 < 1 << 50) {
                            let tt = tt.max(t);
                            now = tt.as_nanos();
                            let o = r.on_loss_detection_timeout(tt);
                            if let Some(ls) = o.lost_space {
                                for p in &o.lost {
                                    prop_assert!(done[ls.idx()].insert(p.pn));
                                }
                            } else {
                                prop_assert!(o.lost.is_empty());
                            }
                        } else {
                            r.set_handshake_confirmed();
                        }
                    }
                }
                let mut sum = 0;
                for s in &r.spaces {
                    let ss: u64 = s.sent.values().filter(|e| e.pkt.in_flight).map(|e| e.pkt.size).sum();
                    let ae = s.sent.values().filter(|e| e.pkt.in_flight && e.pkt.ack_eliciting).count() as u64;
                    prop_assert_eq!(ss, s.bytes_in_flight);
                    prop_assert_eq!(ae, s.ack_eliciting_in_flight);
                    sum += ss;
                }
                prop_assert_eq!(sum, r.bytes_in_flight());
                prop_assert!(r.cwnd() >= 2400);
                // Conservation: every sent packet is outstanding or was returned once.
                for sp in Space::ALL {
                    let i = sp.idx();
                    let outstanding: BTreeSet<u64> = r.spaces[i].sent.keys().collect();
                    prop_assert!(outstanding.is_disjoint(&done[i]));
                    prop_assert_eq!(outstanding.len() + done[i].len(), next[i] as usize);
                }
            }
        }
    }
}
