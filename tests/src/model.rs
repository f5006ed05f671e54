//! The analytic models, as functions of protocol and link parameters only (derivations in
//! `docs/validation.md` and `docs/lifecycle.md`).
//!
//! The models are written from the protocol rules (RFC 9000 / 9002, RFC 9438) and the link
//! model, with the wire sizes of `sim_core::wire::quic`; no constant is fitted to
//! simulation output. Used by `tests/tests/quic_validation.rs` (the lossless 1-RTT
//! transfer, flow control and NewReno models), `tests/tests/lifecycle.rs` (the resumed
//! handshake, [`transfer_resumed`]) and `tests/tests/cubic_validation.rs` (the CUBIC
//! response function and fluid model).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use sim_core::quic::connection::PSK_SERVER_HELLO_EXTENSION;
use sim_core::wire::quic::{
    ack_frame_size, header_len_without_pn, packet_size, pn_len, stream_frame_size, varint_len,
    PacketType, AEAD_TAG_LEN,
};

/// `ceil((bytes + overhead)·8·10⁹ / rate)` ns, as the link serializes.
pub fn tx(rate_bps: u64, overhead: u64, bytes: u64) -> u64 {
    (((bytes + overhead) as u128 * 8 * 1_000_000_000).div_ceil(rate_bps as u128)) as u64
}

/// A FIFO link: serializer then propagation.
#[derive(Clone, Copy, Debug)]
struct Link {
    rate: u64,
    delay: u64,
    overhead: u64,
    free: u64,
}
impl Link {
    /// The client -> server link of `p`, idle.
    fn up(p: &Params) -> Link {
        Link {
            rate: p.up_rate,
            delay: p.up_delay,
            overhead: p.overhead,
            free: 0,
        }
    }
    /// The server -> client (data) link of `p`, idle.
    fn down(p: &Params) -> Link {
        Link {
            rate: p.down_rate,
            delay: p.down_delay,
            overhead: p.overhead,
            free: 0,
        }
    }
    /// Enqueue `bytes` at `t`; returns the arrival time at the far end.
    fn send(&mut self, t: u64, bytes: u64) -> u64 {
        let done = self.free.max(t) + tx(self.rate, self.overhead, bytes);
        self.free = done;
        done + self.delay
    }
}

/// Everything the transfer models depend on.
#[derive(Clone, Debug)]
pub struct Params {
    /// client -> server rate (bit/s) and one-way delay (ns).
    pub up_rate: u64,
    /// One-way delay client -> server (ns).
    pub up_delay: u64,
    /// server -> client (data direction) rate (bit/s).
    pub down_rate: u64,
    /// One-way delay server -> client (ns).
    pub down_delay: u64,
    /// Link overhead per datagram (28).
    pub overhead: u64,
    /// max_udp_payload (the CC unit).
    pub mds: u64,
    /// Connection ID length.
    pub cid_len: u64,
    /// Initial congestion window (bytes).
    pub cwnd0: u64,
    /// ClientHello, ServerHello, server Handshake flight, client Finished sizes.
    pub client_hello: u64,
    /// ServerHello size.
    pub server_hello: u64,
    /// EE + Cert + CV + Finished.
    pub server_handshake: u64,
    /// Client Finished.
    pub client_finished: u64,
    /// Request bytes (client -> server STREAM data).
    pub request: u64,
    /// Response bytes.
    pub bytes: u64,
    /// ACK after this many ack-eliciting packets.
    pub ack_threshold: u64,
    /// max_ack_delay (ns).
    pub max_ack_delay: u64,
    /// Static stream window `W` (bytes); `None` = never limiting.
    pub stream_window: Option<u64>,
    /// The receiver's window policy for the stream window (§2 static, §2b the others).
    pub policy: Policy,
    /// The receiver's smoothed RTT as the growing policies' 2-RTT rule sees it (ns); 0 =
    /// the base RTT of the data path, `2d + tx(MDS) + tx(ACK)`.
    pub srtt: u64,
}

/// The receive-window policies of paper 001 as the model applies them (written from the
/// rules in `docs/algorithms.md`, not from the simulator's code). `mss` and `max` are in
/// bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// Refill to `consumed + W` when `limit - consumed < W/2`.
    #[default]
    Static,
    /// Refill when `limit - consumed < W/2 + mss`.
    ImprovedStatic {
        /// The MSS.
        mss: u64,
    },
    /// Static trigger; a trigger less than 2 srtt after the previous update (the first
    /// consumption counting as one) first doubles `W`, up to `max`.
    Autotune {
        /// Upper bound.
        max: u64,
    },
    /// Same trigger; the factor is 16/8/4/2 for `W/max` below 25/50/75 % / above.
    FastAutotune {
        /// Upper bound.
        max: u64,
    },
}

/// What the transfer model predicts.
#[derive(Clone, Debug, Default)]
pub struct Prediction {
    /// When the client's final handshake datagram (Finished + request) reaches the
    /// server: the server starts sending data.
    pub data_start: u64,
    /// Arrival of the first data packet at the client.
    pub first_byte: u64,
    /// Arrival of the last data packet at the client: the completion time.
    pub completion: u64,
    /// Data packets sent.
    pub packets: u64,
    /// MAX_STREAM_DATA updates sent.
    pub updates: u64,
    /// The stream window after each update (growing policies: its growth path).
    pub windows: Vec<u64>,
    /// Over every update decision of a growing policy: the smallest distance between the
    /// time since the previous update and `2·srtt`, as a fraction of `2·srtt` (1 when
    /// there was none). A decision this close to the boundary would flip with a slightly
    /// different srtt estimate, so tests require a margin.
    pub min_margin: f64,
}

/// Size of a long-header packet carrying `frames` bytes of frames with packet number
/// `pn` (nothing acknowledged yet in the space).
fn long_packet(ty: PacketType, cid: u64, pn: u64, frames: u64) -> u64 {
    packet_size(
        header_len_without_pn(ty, cid, cid, 0),
        ty,
        pn_len(pn, None),
        frames,
    )
}

fn crypto_frame(offset: u64, len: u64) -> u64 {
    1 + varint_len(offset) + varint_len(len) + len
}

/// The server's first flight as datagrams of at most `mds` bytes: an Initial packet
/// (ACK of the client's Initial + ServerHello) and Handshake packets carrying the
/// Handshake flight, coalesced and filled greedily.
pub fn server_flight(p: &Params) -> Vec<u64> {
    let initial = long_packet(
        PacketType::Initial,
        p.cid_len,
        0,
        ack_frame_size(&[(0, 0)], 0) + crypto_frame(0, p.server_hello),
    );
    let mut dgrams = Vec::new();
    let mut cur = initial;
    let mut off = 0;
    let mut pn = 0;
    while off < p.server_handshake {
        let room = p.mds - cur;
        // Largest CRYPTO chunk that fits in a Handshake packet in `room` bytes.
        let empty = long_packet(PacketType::Handshake, p.cid_len, pn, crypto_frame(off, 0));
        if room <= empty + 8 {
            dgrams.push(cur);
            cur = 0;
            continue;
        }
        let mut len = (p.server_handshake - off).min(room - empty);
        while long_packet(PacketType::Handshake, p.cid_len, pn, crypto_frame(off, len)) > room {
            len -= 1;
        }
        cur += long_packet(PacketType::Handshake, p.cid_len, pn, crypto_frame(off, len));
        off += len;
        pn += 1;
    }
    if cur > 0 {
        dgrams.push(cur);
    }
    dgrams
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Data packet (index) arrives at the client.
    Arrive(u64),
    /// The client's delayed-ACK timer (generation).
    AckTimer(u64),
    /// An ACK of packets `..=idx`, in client packet number `pn`, reaches the server.
    Ack(u64, u64),
    /// A MAX_STREAM_DATA (new limit) reaches the server.
    Limit(u64),
    /// Resumed connection: the client's Initial + Handshake datagram (ACKs of the
    /// server's handshake packets, Finished) reaches the server.
    HsAck,
}

struct Sim<'a> {
    p: &'a Params,
    up: Link,
    down: Link,
    q: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    // sender
    cwnd: u64,
    bif: u64,
    sizes: Vec<u64>,
    payload: Vec<u64>,
    offset: u64,
    limit: u64,
    largest_acked: Option<u64>,
    acked_upto: u64,
    /// Largest client packet number to acknowledge in the next data packet.
    ack_to_send: Option<u64>,
    // receiver
    consumed: u64,
    last_arrived: u64,
    unacked: u64,
    timer_gen: u64,
    rlimit: u64,
    /// The receiver's current stream window.
    rwin: u64,
    /// When the limit last grew, or the first consumption before that.
    rprev: Option<u64>,
    client_pn: u64,
    out: Prediction,
    /// Anti-amplification budget left (RFC 9000 §8.1); `None` once validated.
    amp_budget: Option<u64>,
    /// Resumed connection: bytes of the server's Initial + Handshake packets in flight
    /// (acknowledged by the client's handshake datagram).
    hs_in_flight: u64,
}

impl<'a> Sim<'a> {
    /// The data phase of a fresh 1-RTT connection: data starts at `data_start` with the
    /// initial window, nothing in flight, nothing to acknowledge.
    fn new(p: &'a Params, up: Link, down: Link, data_start: u64) -> Self {
        Sim {
            p,
            up,
            down,
            q: BinaryHeap::new(),
            seq: 0,
            cwnd: p.cwnd0,
            bif: 0,
            sizes: Vec::new(),
            payload: Vec::new(),
            offset: 0,
            limit: p.stream_window.unwrap_or(u64::MAX),
            largest_acked: None,
            acked_upto: 0,
            ack_to_send: None,
            consumed: 0,
            last_arrived: 0,
            unacked: 0,
            timer_gen: 0,
            rlimit: p.stream_window.unwrap_or(u64::MAX),
            rwin: p.stream_window.unwrap_or(u64::MAX),
            rprev: None,
            client_pn: 1,
            out: Prediction {
                data_start,
                min_margin: 1.0,
                ..Prediction::default()
            },
            amp_budget: None,
            hs_in_flight: 0,
        }
    }

    fn push(&mut self, t: u64, e: Ev) {
        self.seq += 1;
        self.q.push(Reverse((t, self.seq, e)));
    }

    fn hdr1(&self) -> u64 {
        header_len_without_pn(PacketType::OneRtt, self.p.cid_len, self.p.cid_len, 0)
    }

    /// The sender releases packets while `bytes_in_flight + MDS <= cwnd` (RFC 9002
    /// §7) and flow control allows.
    fn send_data(&mut self, now: u64) {
        let p = self.p;
        while self.offset < p.bytes && self.offset < self.limit && self.bif + p.mds <= self.cwnd {
            let pn = self.sizes.len() as u64;
            let pnl = pn_len(pn, self.largest_acked);
            // The anti-amplification limit caps the datagram (RFC 9000 §8.1).
            let room = self.amp_budget.map_or(p.mds, |b| b.min(p.mds));
            let hdr = self.hdr1();
            if room < hdr + pnl + AEAD_TAG_LEN + 8 {
                break;
            }
            let ack = self
                .ack_to_send
                .take()
                .map_or(0, |c| ack_frame_size(&[(0, c)], 0));
            let full = payload_for_room(p, self.offset, pnl + ack, room);
            let len = full
                .min(p.bytes - self.offset)
                .min(self.limit - self.offset);
            let size = if len == full {
                room
            } else {
                packet_size(
                    self.hdr1(),
                    PacketType::OneRtt,
                    pnl,
                    ack + stream_frame_size(0, self.offset, len),
                )
            };
            self.offset += len;
            self.bif += size;
            if let Some(b) = self.amp_budget.as_mut() {
                *b -= size;
            }
            self.sizes.push(size);
            self.payload.push(len);
            let arr = self.down.send(now, size);
            self.push(arr, Ev::Arrive(pn));
        }
    }

    /// The client sends an ACK-only datagram (plus a MAX_STREAM_DATA if `update`).
    fn send_ack(&mut self, now: u64, update: Option<u64>) {
        let largest = self.last_arrived;
        let mut frames = ack_frame_size(&[(0, largest)], 0);
        if let Some(l) = update {
            frames += 1 + varint_len(0) + varint_len(l);
        }
        let size = packet_size(
            self.hdr1(),
            PacketType::OneRtt,
            pn_len(self.client_pn, None).min(2),
            frames,
        );
        self.client_pn += 1;
        self.unacked = 0;
        self.timer_gen += 1;
        let arr = self.up.send(now, size);
        self.push(arr, Ev::Ack(largest, self.client_pn - 1));
        if let Some(l) = update {
            self.push(arr, Ev::Limit(l));
        }
    }

    /// The receiver's policy after a consumption at `now` (§2, §2b): the new limit to
    /// advertise, if any.
    fn receiver_update(&mut self, now: u64) -> Option<u64> {
        let p = self.p;
        // The first consumption counts as the first update (Google quiche).
        self.rprev.get_or_insert(now);
        let w = self.rwin;
        let available = self.rlimit - self.consumed;
        let threshold = match p.policy {
            Policy::ImprovedStatic { mss } => w / 2 + mss,
            _ => w / 2,
        };
        if available >= threshold {
            return None;
        }
        let grown = match p.policy {
            Policy::Static | Policy::ImprovedStatic { .. } => None,
            Policy::Autotune { max } => Some((2 * w).min(max)),
            Policy::FastAutotune { max } => {
                // Occupancy B = 100·W/max (paper 001 Eq. 1).
                let b = 100.0 * w as f64 / max as f64;
                let f = if b >= 75.0 {
                    2
                } else if b >= 50.0 {
                    4
                } else if b >= 25.0 {
                    8
                } else {
                    16
                };
                Some((f * w).min(max))
            }
        };
        if let Some(g) = grown {
            let srtt = if p.srtt > 0 {
                p.srtt
            } else {
                p.up_delay
                    + p.down_delay
                    + tx(p.down_rate, p.overhead, p.mds)
                    + tx(p.up_rate, p.overhead, 40)
            };
            let since = now - self.rprev.expect("set above");
            let margin = (since as f64 - 2.0 * srtt as f64).abs() / (2.0 * srtt as f64);
            if g > w {
                self.out.min_margin = self.out.min_margin.min(margin);
            }
            if since < 2 * srtt {
                self.rwin = g;
            }
        }
        let w = self.rwin;
        if self.consumed + w <= self.rlimit {
            return None;
        }
        self.rlimit = self.consumed + w;
        self.rprev = Some(now);
        self.out.updates += 1;
        self.out.windows.push(w);
        Some(self.rlimit)
    }

    fn run(&mut self) {
        let p = self.p;
        while let Some(Reverse((now, _, ev))) = self.q.pop() {
            match ev {
                Ev::Arrive(i) => {
                    if i == 0 {
                        self.out.first_byte = now;
                        if self.hs_in_flight > 0 {
                            // Resumed: the client completes the handshake with this
                            // datagram and answers at once with Initial (ACK, padded
                            // to 1200 B, RFC 9000 §14.1) + Handshake (ACK, Finished).
                            let arr = self.up.send(now, 1200);
                            self.push(arr, Ev::HsAck);
                        }
                    }
                    self.last_arrived = i;
                    self.consumed += self.payload[i as usize];
                    if self.consumed == p.bytes {
                        self.out.completion = now;
                    }
                    let update = if p.stream_window.is_some() {
                        self.receiver_update(now)
                    } else {
                        None
                    };
                    self.unacked += 1;
                    if self.unacked >= p.ack_threshold || update.is_some() {
                        self.send_ack(now, update);
                    } else if self.unacked == 1 {
                        self.timer_gen += 1;
                        let g = self.timer_gen;
                        self.push(now + p.max_ack_delay, Ev::AckTimer(g));
                    }
                }
                Ev::AckTimer(g) => {
                    if g == self.timer_gen && self.unacked > 0 {
                        self.send_ack(now, None);
                    }
                }
                Ev::Ack(i, cpn) => {
                    // The server acknowledges the client's packets in its next data
                    // packet (an ACK frame may ride in any packet, RFC 9000 §13.2.1).
                    self.ack_to_send = Some(cpn);
                    let upto = i + 1;
                    if upto > self.acked_upto {
                        let acked: u64 = self.sizes[self.acked_upto as usize..upto as usize]
                            .iter()
                            .sum();
                        self.acked_upto = upto;
                        self.bif -= acked;
                        // Slow start, no loss (B.5): one byte per acknowledged byte.
                        self.cwnd += acked;
                        self.largest_acked = Some(i);
                    }
                    self.send_data(now);
                }
                Ev::Limit(l) => {
                    self.limit = self.limit.max(l);
                    self.send_data(now);
                }
                Ev::HsAck => {
                    // The handshake packets are acknowledged (slow start: the window
                    // grows by their bytes) and the Handshake packet validates the
                    // client's address (RFC 9000 §8.1).
                    self.bif -= self.hs_in_flight;
                    self.cwnd += self.hs_in_flight;
                    self.hs_in_flight = 0;
                    self.amp_budget = None;
                    self.send_data(now);
                }
            }
        }
        self.out.packets = self.sizes.len() as u64;
    }
}

/// The lossless transfer model of `docs/validation.md` §1–2: handshake, then ACK-
/// clocked slow start (RFC 9002 B.5) with an ACK every `ack_threshold` packets or
/// after max_ack_delay (RFC 9000 §13.2), optionally a static stream window (§2).
pub fn transfer(p: &Params) -> Prediction {
    let mut up = Link::up(p);
    let mut down = Link::down(p);

    // ---- handshake (§1.1) ------------------------------------------------------
    let a1 = up.send(0, 1200); // client Initial, padded (RFC 9000 §14.1)
    let flight = server_flight(p);
    let mut client_sends = Vec::new();
    for (k, &g) in flight.iter().enumerate() {
        let arr = down.send(a1, g);
        let last = k + 1 == flight.len();
        let size = if k == 0 && !last {
            1200 // Initial ACK (+ Handshake ACK): carries an Initial, so padded
        } else if !last {
            long_packet(
                PacketType::Handshake,
                p.cid_len,
                0,
                ack_frame_size(&[(0, 0)], 0),
            )
        } else {
            // Handshake: ACK + Finished; 1-RTT: the request STREAM frame.
            let hs = long_packet(
                PacketType::Handshake,
                p.cid_len,
                1,
                ack_frame_size(&[(0, 2)], 0) + crypto_frame(0, p.client_finished),
            );
            let hdr = header_len_without_pn(PacketType::OneRtt, p.cid_len, p.cid_len, 0);
            let one = packet_size(
                hdr,
                PacketType::OneRtt,
                1,
                stream_frame_size(0, 0, p.request),
            );
            let s = hs + one;
            if k == 0 {
                s.max(1200)
            } else {
                s
            }
        };
        client_sends.push((arr, size));
    }
    let mut t3 = 0;
    for (arr, size) in client_sends {
        t3 = up.send(arr, size);
    }

    // ---- data (§1.2-1.3, §2) -------------------------------------------------------
    let mut sim = Sim::new(p, up, down, t3);
    sim.send_data(t3);
    sim.run();
    sim.out
}

/// STREAM payload that fits in a 1-RTT packet of `room` bytes at `offset` when the
/// packet number and other frames take `pnl` bytes. With `room` = MDS: the STREAM payload
/// that fits in a full 1-RTT packet.
fn payload_for_room(p: &Params, offset: u64, pnl: u64, room: u64) -> u64 {
    let hdr = header_len_without_pn(PacketType::OneRtt, p.cid_len, p.cid_len, 0);
    let room = room - hdr - pnl - AEAD_TAG_LEN;
    let mut len = room.saturating_sub(stream_frame_size(0, offset, 0));
    while len > 0 && stream_frame_size(0, offset, len) > room {
        len -= 1;
    }
    len
}

/// The resumption-specific inputs (`QuicConfig` defaults, `docs/lifecycle.md`).
#[derive(Clone, Debug)]
pub struct Resumption {
    /// Server Handshake flight on resumption (EncryptedExtensions + Finished).
    pub server_flight: u64,
    /// The client's Initials carry a valid address-validation token.
    pub token: bool,
}

/// The lossless model of a resumed connection with 0-RTT accepted
/// (`docs/lifecycle.md` §Validation): the client's first datagram (Initial with the
/// ClientHello + 0-RTT request, padded to 1200 B) reaches the server at
/// `t₁ = tx(1200) + d`; the server answers at once with one datagram holding its
/// Initial (ACK + ServerHello), its Handshake flight and a first 1-RTT packet of
/// response (with the ACK of the 0-RTT packet), then data as the window allows —
/// the handshake packets count in bytes in flight until the client's Initial +
/// Handshake datagram acknowledges them. Without a token, the server sends at most
/// 3 × 1200 B until that datagram validates the client's address. From then on, the
/// ACK-clocked slow start of [`transfer`].
pub fn transfer_resumed(p: &Params, r: &Resumption) -> Prediction {
    let mut up = Link::up(p);
    let down = Link::down(p);
    let t1 = up.send(0, 1200);
    let init = long_packet(
        PacketType::Initial,
        p.cid_len,
        0,
        ack_frame_size(&[(0, 0)], 0) + crypto_frame(0, p.server_hello + PSK_SERVER_HELLO_EXTENSION),
    );
    let hs = long_packet(
        PacketType::Handshake,
        p.cid_len,
        0,
        crypto_frame(0, r.server_flight),
    );
    let mut sim = Sim::new(p, up, down, t1);
    sim.bif = init + hs;
    // The first 1-RTT packet acknowledges the 0-RTT request (packet 0).
    sim.ack_to_send = Some(0);
    sim.amp_budget = if r.token {
        None
    } else {
        Some(3 * 1200 - init - hs)
    };
    sim.hs_in_flight = init + hs;
    // The first datagram: Initial + Handshake + the first 1-RTT packet filling the
    // rest of the datagram (`room` = MDS minus the handshake packets).
    let room = p.mds - init - hs;
    let pnl = pn_len(0, None);
    let ack = ack_frame_size(&[(0, 0)], 0);
    let full = payload_for_room(p, 0, pnl + ack, room);
    let len = full.min(p.bytes);
    let hdr = header_len_without_pn(PacketType::OneRtt, p.cid_len, p.cid_len, 0);
    let mut size = if len == full {
        room
    } else {
        packet_size(
            hdr,
            PacketType::OneRtt,
            pnl,
            ack + stream_frame_size(0, 0, len),
        )
    };
    // A server pads a datagram carrying an ack-eliciting Initial (RFC 9000 §14.1).
    size = size.max(1200 - init - hs);
    sim.ack_to_send = None;
    sim.offset = len;
    sim.bif += size;
    if let Some(b) = sim.amp_budget.as_mut() {
        *b -= size;
    }
    sim.sizes.push(size);
    sim.payload.push(len);
    let arr = sim.down.send(t1, init + hs + size);
    sim.push(arr, Ev::Arrive(0));
    sim.send_data(t1);
    sim.run();
    sim.out
}

/// Round-level NewReno with whole-datagram windows (RFC 9002 B.5-B.6, byte counting,
/// all packets MDS): each round, the ACKs of the previous round's packets arrive in
/// order; each removes one MDS from bytes in flight, grows the window (slow start, or
/// `MDS²/cwnd` in congestion avoidance) unless its packet was sent before the current
/// recovery period, and releases packets while `bytes_in_flight + MDS <= cwnd`. Every
/// `n`-th packet sent is lost; the loss is detected at the ACK of the third later
/// packet of the same round, or at the end of the round (time threshold). Returns the
/// delivered packets per round in the steady state.
pub fn reno_rounds_goodput_packets_per_rtt(n: u64) -> f64 {
    const MDS: f64 = 1.0;
    let mut cwnd = 40.0 * MDS;
    let mut ssthresh: Option<f64> = None;
    let mut sent = 0u64;
    let mut next_loss = n - 1;
    // (post_recovery, lost) per packet of the previous round.
    let mut prev: Vec<(bool, bool)> = Vec::new();
    let (warmup, rounds) = (2_000u64, 40_000u64);
    let (mut delivered, mut counted) = (0u64, 0u64);
    for r in 0..warmup + rounds {
        let mut flight: Vec<(bool, bool)> = Vec::new();
        let mut bif = prev.len() as f64 * MDS;
        let detect_at = prev
            .iter()
            .position(|&(_, lost)| lost)
            .map(|i| (i + 3).min(prev.len() - 1));
        let mut send = |bif: &mut f64, cwnd: f64, flight: &mut Vec<(bool, bool)>| {
            while *bif + MDS <= cwnd + 1e-9 {
                let lost = sent == next_loss;
                if lost {
                    next_loss += n;
                }
                sent += 1;
                flight.push((true, lost));
                *bif += MDS;
                if r >= warmup && !lost {
                    delivered += 1;
                }
            }
        };
        for i in 0..prev.len() {
            if detect_at == Some(i) {
                // Congestion event (B.6): everything sent so far is pre-recovery.
                let s = (cwnd / 2.0).max(2.0 * MDS);
                ssthresh = Some(s);
                cwnd = s;
                for p in prev.iter_mut().chain(flight.iter_mut()) {
                    p.0 = false;
                }
            }
            bif -= MDS;
            let (post, lost) = prev[i];
            if post && !lost {
                if ssthresh.is_none_or(|s| cwnd < s) {
                    cwnd += MDS;
                } else {
                    cwnd += MDS * MDS / cwnd;
                }
            }
            send(&mut bif, cwnd, &mut flight);
        }
        if prev.is_empty() {
            send(&mut bif, cwnd, &mut flight);
        }
        prev = flight;
        if r >= warmup {
            counted += 1;
        }
    }
    delivered as f64 / counted as f64
}

/// Mathis et al.: packets per RTT `sqrt(3/(2p))`.
pub fn mathis_packets_per_rtt(p: f64) -> f64 {
    (1.5 / p).sqrt()
}

/// The discrete NewReno cycle of `docs/validation.md` §3: `(sqrt(1 + 24N) − 1)/4`
/// packets sent per RTT, `N = 1/p`, of which `(N − 1)/N` are delivered.
pub fn reno_discrete_goodput_packets_per_rtt(p: f64) -> f64 {
    let n = 1.0 / p;
    ((1.0 + 24.0 * n).sqrt() - 1.0) / 4.0 * (n - 1.0) / n
}

// ---------------------------------------------------------------------------------------
// CUBIC (RFC 9438): the analytic models, windows in segments of the controller's unit.

/// β_eff = (N − 1 + β)/N (Chromium's emulation of N connections; β for N = 1).
pub fn beta_eff(beta: f64, n: u32) -> f64 {
    let n = n as f64;
    (n - 1.0 + beta) / n
}

/// α of the Reno-friendly estimate: 3N²(1 − β_eff)/(1 + β_eff) (RFC 9438 §4.3 for
/// N = 1).
pub fn alpha(beta: f64, n: u32) -> f64 {
    let b = beta_eff(beta, n);
    let n = n as f64;
    3.0 * n * n * (1.0 - b) / (1.0 + b)
}

/// RFC 9438 §5.1 (Eq. 6-7; RFC 8312 §5.1): average window of CUBIC's cubic region
/// under one loss every 1/p segments, `(C(3+β)/(4(1−β)))^{1/4} · (RTT/p)^{3/4}`.
///
/// Derivation: the window grows from β·W_max back to W_max along W_cubic in
/// K = cbrt(W_max(1 − β)/C) seconds; the segments sent in that time,
/// ∫₀ᴷ W_cubic/RTT dt = K·W_max·(3 + β)/(4·RTT), equal 1/p. The average window is
/// (1/p)·RTT/K.
pub fn cubic_avg_window(p: f64, rtt_s: f64, c: f64, beta: f64) -> f64 {
    (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * (rtt_s / p).powf(0.75)
}

/// RFC 9438 §4.3 Eq. 3: average window of AIMD(α, β) under one loss every 1/p
/// segments, `sqrt(α(1+β)/(2(1−β)p))`.
pub fn aimd_avg_window(p: f64, alpha: f64, beta: f64) -> f64 {
    (alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * p)).sqrt()
}

/// The response function: `max(cubic, Reno-friendly)` average window in datagrams of
/// `mds` bytes per RTT, for a loss every 1/p datagrams, a controller counting in
/// `seg`-byte segments with constants β, C and N. In segments the loss rate is
/// `p·seg/mds` (a cycle of 1/p datagrams is `mds/(p·seg)` segments).
pub fn response(p: f64, rtt_s: f64, beta: f64, c: f64, n: u32, seg: f64, mds: f64) -> Model {
    let b = beta_eff(beta, n);
    let ps = p * seg / mds;
    let cubic = cubic_avg_window(ps, rtt_s, c, b) * seg / mds;
    let reno = aimd_avg_window(ps, alpha(beta, n), b) * seg / mds;
    Model { cubic, reno }
}

/// Both branches of the response function, in datagrams per RTT.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// The cubic-region average window.
    pub cubic: f64,
    /// The Reno-friendly average window.
    pub reno: f64,
}

impl Model {
    /// `max(cubic, reno)`.
    pub fn value(&self) -> f64 {
        self.cubic.max(self.reno)
    }
    /// Which region the model is in.
    pub fn region(&self) -> &'static str {
        if self.cubic >= self.reno {
            "cubic"
        } else {
            "Reno-friendly"
        }
    }
}

/// One loss cycle of the cubic-region fluid model (windows in segments, times in s),
/// from the detection of a loss at window `w` (= W_max, fast convergence off) to the
/// next detection, with the three protocol rules RFC 9438's response function leaves
/// out (derivation in docs/validation.md §5.2):
/// 1. the recovery round: for one RTT after the reduction the window stays at β·W
///    (ACKs of packets sent before the recovery began do not grow it, RFC 9002 B.5),
///    and the CUBIC epoch (t = 0) starts after it;
/// 2. per-ACK convergence to the target: `cwnd += (target − cwnd)/cwnd` per segment
///    acknowledged, i.e. `dcwnd/dt = (target − cwnd)/RTT`, with
///    `target = clamp(W_cubic(t + RTT), cwnd, 1.5·cwnd)` (RFC 9438 §4.2);
/// 3. detection one RTT after the lost segment is sent (the window grows meanwhile).
///
/// `n` segments are sent from one lost segment to the next. Returns the window at the
/// next detection and the cycle's average window (segments per RTT). Euler steps of
/// RTT/400.
pub fn cubic_fluid_cycle(w: f64, n: f64, rtt: f64, c: f64, beta: f64) -> (f64, f64) {
    let dt = rtt / 400.0;
    let w_max = w;
    let mut cw = beta * w;
    let k = ((w_max - cw) / c).cbrt();
    // Segments after the lost one: those of its last RTT before detection (~w), then
    // the recovery round.
    let mut sent = w + cw;
    let mut segs = cw;
    let mut t = 0.0;
    let step = |t: f64, cw: f64| {
        let d = t + rtt - k;
        let target = (c * d * d * d + w_max).clamp(cw, 1.5 * cw);
        cw + (target - cw) / rtt * dt
    };
    while sent < n {
        cw = step(t, cw);
        sent += cw / rtt * dt;
        segs += cw / rtt * dt;
        t += dt;
    }
    let mut t2 = 0.0;
    while t2 < rtt {
        cw = step(t, cw);
        segs += cw / rtt * dt;
        t += dt;
        t2 += dt;
    }
    (cw, segs * rtt / (rtt + t))
}

/// The fixed point of [`cubic_fluid_cycle`] (bisection on `next(W) − W`), as datagrams
/// per RTT with the same conversions as [`response`]. Without rules 1-3 the same
/// computation gives RFC 9438's closed form exactly.
pub fn cubic_fluid(p: f64, rtt_s: f64, beta: f64, c: f64, n: u32, seg: f64, mds: f64) -> f64 {
    let b = beta_eff(beta, n);
    let segs = mds / (p * seg);
    let (mut lo, mut hi) = (1.0, 50.0 * segs.sqrt() + 10.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if cubic_fluid_cycle(mid, segs, rtt_s, c, b).0 > mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    cubic_fluid_cycle(lo, segs, rtt_s, c, b).1 * seg / mds
}

/// Jain's fairness index `(Σx)²/(n·Σx²)`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}
