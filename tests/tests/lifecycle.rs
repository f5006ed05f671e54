//! Connection lifecycle (`quic_connections`, `docs/lifecycle.md`): 0-RTT resumption
//! against an analytic model, lost 0-RTT data, idle timeout, explicit close, validation
//! rules, and properties over random connection sequences.
//!
//! The lossless 1-RTT transfer model is copied from `quic_validation.rs` (owned by the
//! QUIC validation work; derivation in `docs/validation.md` §1) and extended with the
//! resumed handshake ([`model::transfer_resumed`]). No constant is fitted to simulation
//! output; the tolerance is the core issue's `max(1 %, 2 bottleneck packet times)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The analytic models (see the module docs).
mod model {
    use super::*;
    use sim_core::quic::connection::PSK_SERVER_HELLO_EXTENSION;
    use sim_core::quic::wire::{
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
        client_pn: u64,
        out: Prediction,
        /// Anti-amplification budget left (RFC 9000 §8.1); `None` once validated.
        amp_budget: Option<u64>,
        /// Resumed connection: bytes of the server's Initial + Handshake packets in flight
        /// (acknowledged by the client's handshake datagram).
        hs_in_flight: u64,
    }

    impl Sim<'_> {
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
            while self.offset < p.bytes && self.offset < self.limit && self.bif + p.mds <= self.cwnd
            {
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

        fn run(&mut self) {
            let p = self.p;
            let w = p.stream_window.unwrap_or(u64::MAX);
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
                        // Static allowance: `limit - consumed < W/2` -> `consumed + W`.
                        let mut update = None;
                        if p.stream_window.is_some()
                            && self.rlimit - self.consumed < w / 2
                            && self.consumed + w > self.rlimit
                        {
                            self.rlimit = self.consumed + w;
                            update = Some(self.rlimit);
                            self.out.updates += 1;
                        }
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
        let mut up = Link {
            rate: p.up_rate,
            delay: p.up_delay,
            overhead: p.overhead,
            free: 0,
        };
        let mut down = Link {
            rate: p.down_rate,
            delay: p.down_delay,
            overhead: p.overhead,
            free: 0,
        };

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
        let mut sim = Sim {
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
            client_pn: 1,
            out: Prediction {
                data_start: t3,
                ..Prediction::default()
            },
            amp_budget: None,
            hs_in_flight: 0,
        };
        sim.send_data(t3);
        sim.run();
        sim.out
    }

    /// STREAM payload that fits in a 1-RTT packet of `room` bytes at `offset` when the
    /// packet number and other frames take `pnl` bytes.
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
        let mut up = Link {
            rate: p.up_rate,
            delay: p.up_delay,
            overhead: p.overhead,
            free: 0,
        };
        let down = Link {
            rate: p.down_rate,
            delay: p.down_delay,
            overhead: p.overhead,
            free: 0,
        };
        let t1 = up.send(0, 1200);
        let init = long_packet(
            PacketType::Initial,
            p.cid_len,
            0,
            ack_frame_size(&[(0, 0)], 0)
                + crypto_frame(0, p.server_hello + PSK_SERVER_HELLO_EXTENSION),
        );
        let hs = long_packet(
            PacketType::Handshake,
            p.cid_len,
            0,
            crypto_frame(0, r.server_flight),
        );
        let mut sim = Sim {
            p,
            up,
            down,
            q: BinaryHeap::new(),
            seq: 0,
            cwnd: p.cwnd0,
            bif: init + hs,
            sizes: Vec::new(),
            payload: Vec::new(),
            offset: 0,
            limit: p.stream_window.unwrap_or(u64::MAX),
            largest_acked: None,
            acked_upto: 0,
            // The first 1-RTT packet acknowledges the 0-RTT request (packet 0).
            ack_to_send: Some(0),
            consumed: 0,
            last_arrived: 0,
            unacked: 0,
            timer_gen: 0,
            rlimit: p.stream_window.unwrap_or(u64::MAX),
            client_pn: 1,
            out: Prediction {
                data_start: t1,
                ..Prediction::default()
            },
            amp_budget: if r.token {
                None
            } else {
                Some(3 * 1200 - init - hs)
            },
            hs_in_flight: init + hs,
        };
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
}

use model::{transfer, transfer_resumed, Params, Resumption};
use sim_core::config::{AppConfig, Config, FlowConfig, LinkChange, LinkConfig, LossModel};
use sim_core::metrics::{EndpointMetrics, RunResult, RunStatus};
use sim_core::quic::endpoint::QuicMetrics;
use sim_core::quic::lifecycle::{CloseMode, ConnectionReport, ConnectionSpec, ConnectionStatus};
use sim_core::quic::QuicConfig;
use sim_core::units::Rate;
use sim_core::{SimDuration, SimTime};

const MS: u64 = 1_000_000;

/// The defaults of `QuicConfig` the models need, over links of `rate` and one-way
/// `delay_ms` in both directions.
fn params(rate: u64, delay_ms: u64, bytes: u64) -> Params {
    let q = QuicConfig::default();
    Params {
        up_rate: rate,
        up_delay: delay_ms * MS,
        down_rate: rate,
        down_delay: delay_ms * MS,
        overhead: 28,
        mds: q.max_udp_payload,
        cid_len: q.cid_len,
        cwnd0: q.initial_cwnd(),
        client_hello: q.client_hello_size,
        server_hello: q.server_hello_size,
        server_handshake: q.server_handshake_size,
        client_finished: q.client_finished_size,
        request: q.request_size,
        bytes,
        ack_threshold: q.ack_eliciting_threshold,
        max_ack_delay: q.max_ack_delay.as_nanos(),
        stream_window: None,
    }
}

/// The `QuicConfig` the models assume: defaults, no pacing (the ACK-clocked model of
/// `docs/validation.md` §1 has none), windows that never limit.
fn model_quic(token: bool) -> QuicConfig {
    QuicConfig {
        pacing: false,
        stream_window: 1 << 40,
        address_token_size: if token { 64 } else { 0 },
        ..QuicConfig::default()
    }
}

fn link(rate: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(Rate(rate), SimDuration::from_millis(delay_ms))
}

fn spec(q: &QuicConfig, bytes: u64) -> ConnectionSpec {
    ConnectionSpec::new(q, bytes)
}

/// A `two_hosts` run of one `quic_connections` flow.
fn run_connections(
    q: QuicConfig,
    specs: Vec<ConnectionSpec>,
    forward: LinkConfig,
    reverse: LinkConfig,
    seed: u64,
) -> RunResult {
    let flow = FlowConfig {
        pair: 0,
        background: false,
        app: AppConfig::QuicConnections {
            quic: q,
            connections: specs,
        },
    };
    let mut cfg = Config::two_hosts(forward, reverse, vec![flow]);
    cfg.sim.time_limit = SimDuration::from_secs(10_000);
    cfg.sim.max_events = 200_000_000;
    sim_core::run(&cfg, seed).expect("valid config")
}

fn side(r: &RunResult, role: &str) -> QuicMetrics {
    r.flows[0]
        .endpoints
        .iter()
        .find_map(|m| match m {
            EndpointMetrics::Quic(q) if q.role == role => Some((**q).clone()),
            _ => None,
        })
        .expect("quic metrics")
}

fn ns(s: Option<f64>) -> u64 {
    (s.expect("time") * 1e9).round() as u64
}

/// `max(1 %, 2 bottleneck packet times)`.
fn tolerance(p: &Params, model_ns: u64) -> u64 {
    (model_ns / 100).max(2 * model::tx(p.down_rate, p.overhead, p.mds))
}

/// A warm-up connection (10 kB, closed explicitly) then the measured one, resumed with
/// the warm-up's ticket 100 ms after it closed. Returns the measured connection's
/// client report.
fn resumed_transfer(q: &QuicConfig, p: &Params) -> ConnectionReport {
    let warm = spec(q, 10_000);
    let mut target = spec(q, p.bytes);
    target.gap = Some(SimDuration::from_millis(100));
    let r = run_connections(
        q.clone(),
        vec![warm, target],
        link(p.up_rate, p.up_delay / MS),
        link(p.down_rate, p.down_delay / MS),
        1,
    );
    assert_eq!(r.status, RunStatus::Completed);
    let c = side(&r, "client").connections[1].clone();
    assert_eq!(c.status, ConnectionStatus::Completed);
    assert!(c.resumed && c.ticket, "{c:?}");
    c
}

const GRID: &[(u64, u64, u64)] = &[
    (10_000_000, 20, 10_000),
    (10_000_000, 100, 100_000),
    (100_000_000, 20, 10_000),
    (100_000_000, 40, 100_000),
    (100_000_000, 100, 1_000_000),
    (1_000_000_000, 50, 1_000_000),
    (20_000_000, 300, 2_000_000),
];

#[test]
fn resumed_completion_matches_the_resumption_model() {
    for token in [true, false] {
        for &(rate, rtt_ms, bytes) in GRID {
            let p = params(rate, rtt_ms / 2, bytes);
            let q = model_quic(token);
            let r = Resumption {
                server_flight: q.resumption_server_handshake_size,
                token,
            };
            let m = transfer_resumed(&p, &r);
            let c = resumed_transfer(&q, &p);
            assert_eq!(c.zero_rtt_accepted, Some(true));
            assert_eq!(c.token, token);
            let sim = ns(c.metrics.completion_secs);
            let fb = ns(c.metrics.time_to_first_byte_secs);
            let tol = tolerance(&p, m.completion);
            eprintln!(
                "token {token:5} {:>5} Mbit/s {:>4} ms {:>8} B: model {:>10.6} s sim {:>10.6} s diff {:>+8.3} ms (tol {:.3} ms); first byte model {:.6} sim {:.6}",
                rate / 1_000_000,
                rtt_ms,
                bytes,
                m.completion as f64 / 1e9,
                sim as f64 / 1e9,
                (sim as f64 - m.completion as f64) / 1e6,
                tol as f64 / 1e6,
                m.first_byte as f64 / 1e9,
                fb as f64 / 1e9,
            );
            assert!(
                sim.abs_diff(m.completion) <= tol,
                "token {token}, {rate} bit/s, {rtt_ms} ms, {bytes} B: sim {sim} vs model {}",
                m.completion
            );
            // First byte: 1 RTT plus serialization (the request rides in 0-RTT).
            assert!(
                fb.abs_diff(m.first_byte) <= tolerance(&p, m.first_byte),
                "{fb}"
            );
        }
    }
}

#[test]
fn resumption_saves_one_round_trip_over_the_one_rtt_model() {
    // The 1-RTT model minus one round trip: data starts when the 0-RTT request reaches
    // the server (t₁) instead of when the client's Finished + request does (t₃).
    for &(rate, rtt_ms, bytes) in GRID {
        let p = params(rate, rtt_ms / 2, bytes);
        // Both models assume the ClientHello fits in the client's first datagram.
        assert!(p.client_hello < 1_100);
        let one = transfer(&p);
        let t1 = model::tx(p.up_rate, p.overhead, 1200) + p.up_delay;
        let predicted = one.completion - (one.data_start - t1);
        let c = resumed_transfer(&model_quic(true), &p);
        let sim = ns(c.metrics.completion_secs);
        let tol = tolerance(&p, predicted);
        eprintln!(
            "{:>5} Mbit/s {:>4} ms {:>8} B: 1-RTT model {:.6} s, minus one round trip {:.6} s, resumed sim {:.6} s, diff {:+.3} ms (tol {:.3} ms)",
            rate / 1_000_000,
            rtt_ms,
            bytes,
            one.completion as f64 / 1e9,
            predicted as f64 / 1e9,
            sim as f64 / 1e9,
            (sim as f64 - predicted as f64) / 1e6,
            tol as f64 / 1e6
        );
        assert!(sim.abs_diff(predicted) <= tol, "{sim} vs {predicted}");
    }
}

// ---------------------------------------------------------------------------------------
// Lost and rejected 0-RTT data.

/// Warm-up at 0, then a resumed connection at 1 s whose request spans several 0-RTT
/// packets; the forward link drops the `offset`-th packet it judges after 1 s
/// (offset 0: the client's first datagram, Initial + 0-RTT).
fn lost_zero_rtt_run(offset: u64, reject: bool) -> (RunResult, ConnectionReport, ConnectionReport) {
    let q = QuicConfig {
        reject_zero_rtt: reject,
        ..QuicConfig::default()
    };
    let warm = spec(&q, 20_000);
    let mut target = spec(&q, 300_000);
    target.start = Some(SimTime(1_000_000_000));
    target.streams = 3;
    target.request_size = 1_500;
    let mut forward = link(20_000_000, 20);
    forward.changes = vec![LinkChange {
        at: SimTime(1_000_000_000),
        rate: None,
        delay: None,
        loss: Some(LossModel::Periodic {
            every: 1_000_000,
            offset,
        }),
        corruption: None,
    }];
    let r = run_connections(q, vec![warm, target], forward, link(20_000_000, 20), 3);
    assert_eq!(r.status, RunStatus::Completed);
    let c = side(&r, "client").connections[1].clone();
    let s = side(&r, "server").connections[1].clone();
    (r, c, s)
}

#[test]
fn lost_zero_rtt_data_is_delivered_exactly_once() {
    for offset in [0u64, 1, 2] {
        let (r, c, s) = lost_zero_rtt_run(offset, false);
        let fwd = r.links.iter().find(|l| l.name == "forward").unwrap();
        assert_eq!(fwd.drops.total(), 1, "offset {offset}");
        eprintln!(
            "offset {offset}: 0-RTT packets {} ({} stream bytes), retransmitted stream bytes {}, completion {:?}, server duplicate bytes {}",
            c.zero_rtt_packets,
            c.zero_rtt_stream_bytes,
            c.metrics.stream_bytes_retransmitted,
            c.metrics.completion_secs,
            s.metrics.duplicate_stream_bytes
        );
        assert_eq!(c.status, ConnectionStatus::Completed);
        assert_eq!(c.zero_rtt_accepted, Some(true));
        assert!(
            c.zero_rtt_packets >= 2,
            "the request spans several 0-RTT packets"
        );
        // Exactly once: the server read each request byte once, the client each
        // response byte once.
        assert_eq!(s.metrics.stream_bytes_read, 3 * 1_500);
        assert_eq!(c.metrics.stream_bytes_read, 300_000);
        assert_eq!(
            s.metrics.stream_completion_secs.len(),
            3,
            "three request streams"
        );
        assert!(c.metrics.stream_bytes_retransmitted > 0);
        if offset > 0 {
            // The Initial got through: the lost 0-RTT data is sent again in 1-RTT
            // packets (no 0-RTT packet carries it a second time).
            assert_eq!(c.zero_rtt_stream_bytes, 3 * 1_500);
        }
    }
}

#[test]
fn rejected_zero_rtt_is_resent_in_one_rtt() {
    let (_, c, s) = lost_zero_rtt_run(1_000_000 - 1, true);
    assert_eq!(c.status, ConnectionStatus::Completed);
    assert!(c.resumed, "the ticket is accepted, 0-RTT is not");
    assert_eq!(c.zero_rtt_accepted, Some(false));
    assert_eq!(s.zero_rtt_accepted, Some(false));
    assert!(s.zero_rtt_packets_rejected >= 2);
    assert!(c.metrics.stream_bytes_retransmitted >= 3 * 1_500);
    assert_eq!(s.metrics.stream_bytes_read, 3 * 1_500);
    assert_eq!(c.metrics.stream_bytes_read, 300_000);
    // No 0-RTT gain: the first byte comes after the handshake round trip.
    let accepted = lost_zero_rtt_run(1_000_000 - 1, false).1;
    let fb = c.metrics.time_to_first_byte_secs.unwrap();
    let fb0 = accepted.metrics.time_to_first_byte_secs.unwrap();
    eprintln!("first byte: 0-RTT rejected {fb:.6} s, accepted {fb0:.6} s");
    assert!(fb > fb0 + 0.039, "{fb} vs {fb0}");
}

// ---------------------------------------------------------------------------------------
// Idle timeout and close.

#[test]
fn idle_timeout_fires_at_the_negotiated_time_after_the_last_activity() {
    for idle_ms in [1_000u64, 1] {
        let q = QuicConfig {
            idle_timeout: SimDuration::from_millis(idle_ms),
            ..QuicConfig::default()
        };
        let mut a = spec(&q, 50_000);
        a.close = CloseMode::Idle;
        let mut b = spec(&q, 50_000);
        b.gap = Some(SimDuration::from_millis(300));
        let r = run_connections(q, vec![a, b], link(10_000_000, 25), link(10_000_000, 25), 1);
        assert_eq!(r.status, RunStatus::Completed);
        for role in ["client", "server"] {
            let m = side(&r, role);
            let c = &m.connections[0];
            assert_eq!(c.status, ConnectionStatus::Completed, "{role}");
            assert_eq!(c.close_reason.as_deref(), Some("idle_timeout"), "{role}");
            let waited = c.close_secs.unwrap() - c.last_activity_secs;
            eprintln!(
                "idle_timeout {idle_ms} ms, {role}: closed {waited:.9} s after the last activity (effective timeout {:.9} s)",
                c.idle_timeout_secs
            );
            // RFC 9000 §10.1: max(idle_timeout, 3 PTO), never earlier.
            assert!(c.idle_timeout_secs >= idle_ms as f64 / 1e3 - 1e-9);
            assert!((waited - c.idle_timeout_secs).abs() < 2e-9, "{role}");
            if idle_ms == 1 {
                // 3 PTO > 3 RTT = 150 ms here.
                assert!(c.idle_timeout_secs > 0.15, "{}", c.idle_timeout_secs);
            } else {
                assert!((c.idle_timeout_secs - 1.0).abs() < 1e-9);
            }
            // The second connection starts 300 ms after the client's idle close.
            if role == "client" {
                let next = m.connections[1].start_secs.unwrap();
                assert!((next - c.close_secs.unwrap() - 0.3).abs() < 1e-9);
                assert_eq!(
                    m.connections[1].close_reason.as_deref(),
                    Some("local_close")
                );
            }
        }
    }
}

#[test]
fn a_connection_with_traffic_never_times_out() {
    for loss in [0.0, 0.01] {
        // Idle timeout 1 ms: the effective 3 PTO is far below the transfer time (4 s).
        let q = QuicConfig {
            idle_timeout: SimDuration::from_millis(1),
            ..QuicConfig::default()
        };
        let mut down = link(2_000_000, 20);
        down.loss = if loss > 0.0 {
            LossModel::Bernoulli { p: loss }
        } else {
            LossModel::None
        };
        let r = run_connections(
            q.clone(),
            vec![spec(&q, 1_000_000), spec(&q, 200_000)],
            link(2_000_000, 20),
            down,
            5,
        );
        assert_eq!(r.status, RunStatus::Completed);
        let m = side(&r, "client");
        for c in &m.connections {
            assert_eq!(c.status, ConnectionStatus::Completed);
            assert_eq!(c.close_reason.as_deref(), Some("local_close"));
            assert!(c.metrics.completion_secs.unwrap() > 2.0 * c.idle_timeout_secs);
        }
        let s = side(&r, "server");
        assert!(s
            .connections
            .iter()
            .all(|c| c.close_reason.as_deref() == Some("peer_close")));
    }
}

#[test]
fn history_samples_at_resumption_and_close() {
    let q = QuicConfig::default();
    let mut a = spec(&q, 100_000);
    a.close = CloseMode::Idle;
    let b = spec(&q, 100_000);
    let mut c = spec(&q, 100_000);
    c.resume = false;
    let r = run_connections(
        q,
        vec![a, b, c],
        link(20_000_000, 20),
        link(20_000_000, 20),
        1,
    );
    let s = side(&r, "server");
    let events: Vec<(String, u64)> = s
        .history
        .iter()
        .map(|h| (format!("{:?}", h.event), h.connection))
        .collect();
    assert_eq!(
        events,
        vec![
            ("IdleClose".to_string(), 0),
            ("ResumptionComplete".to_string(), 1),
            ("ExplicitClose".to_string(), 1),
            ("ExplicitClose".to_string(), 2),
        ]
    );
    let m = side(&r, "client");
    assert!(!m.connections[0].resumed && m.connections[1].resumed);
    assert!(
        !m.connections[2].resumed && !m.connections[2].ticket,
        "resume = false"
    );
}

// ---------------------------------------------------------------------------------------
// Properties over random connection sequences.

use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Conn {
    resume: bool,
    gap_ms: u64,
    bytes: u64,
    streams: u64,
    idle: bool,
}

fn conn_strategy() -> impl Strategy<Value = Conn> {
    (
        any::<bool>(),
        0u64..400,
        0u64..150_000,
        1u64..4,
        any::<bool>(),
    )
        .prop_map(|(resume, gap_ms, bytes, streams, idle)| Conn {
            resume,
            gap_ms,
            bytes,
            streams,
            idle,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    /// Every connection ends with a status, and every byte of every connection (requests
    /// and responses) is delivered exactly once and in order (read by the application,
    /// which reads in order only).
    #[test]
    fn every_connection_ends_and_delivers_every_byte_once(
        conns in prop::collection::vec(conn_strategy(), 1..5),
        loss in prop_oneof![Just(0.0), 0.0f64..0.05],
        token in any::<bool>(),
        reject in any::<bool>(),
        seed in 0u64..1_000,
    ) {
        let q = QuicConfig {
            idle_timeout: SimDuration::from_secs(2),
            address_token_size: if token { 64 } else { 0 },
            reject_zero_rtt: reject,
            ..QuicConfig::default()
        };
        let specs: Vec<ConnectionSpec> = conns
            .iter()
            .map(|c| {
                let mut s = spec(&q, c.bytes);
                s.resume = c.resume;
                s.gap = Some(SimDuration::from_millis(c.gap_ms));
                s.streams = c.streams;
                s.close = if c.idle { CloseMode::Idle } else { CloseMode::Explicit };
                s
            })
            .collect();
        let mut fwd = link(20_000_000, 15);
        let mut rev = link(20_000_000, 15);
        fwd.loss = LossModel::Bernoulli { p: loss };
        rev.loss = LossModel::Bernoulli { p: loss };
        let r = run_connections(q.clone(), specs.clone(), fwd, rev, seed);
        prop_assert_eq!(r.status, RunStatus::Completed);
        let client = side(&r, "client");
        let server = side(&r, "server");
        prop_assert_eq!(client.connections.len(), specs.len());
        prop_assert_eq!(server.connections.len(), specs.len());
        let mut had_ticket = false;
        for (k, (c, s)) in client.connections.iter().zip(&server.connections).enumerate() {
            let sp = &specs[k];
            prop_assert_eq!(c.status, ConnectionStatus::Completed, "client {}", k);
            prop_assert!(c.close_reason.is_some(), "client {} has no close", k);
            prop_assert!(s.close_reason.is_some(), "server {} has no close", k);
            prop_assert!(
                matches!(s.status, ConnectionStatus::Completed | ConnectionStatus::Failed),
                "server {} {:?}", k, s.status
            );
            prop_assert_eq!(c.metrics.stream_bytes_read, sp.bytes, "client {}", k);
            prop_assert_eq!(s.metrics.stream_bytes_read, sp.streams * sp.request_size, "server {}", k);
            // Resumed exactly when asked and a ticket was available.
            prop_assert_eq!(c.ticket, sp.resume && had_ticket, "ticket {}", k);
            prop_assert_eq!(c.resumed, c.ticket, "resumed {}", k);
            if c.ticket {
                prop_assert_eq!(c.zero_rtt_accepted, Some(!reject));
                prop_assert_eq!(c.token, token);
            }
            had_ticket |= c.metrics.handshake_confirmed_secs.is_some();
        }
        // Packet conservation for the flow.
        let f = &r.flows[0];
        prop_assert_eq!(f.packets_sent, f.packets_delivered + f.drops.total() + f.in_network);
    }
}

// ---------------------------------------------------------------------------------------
// Scenario keys and validation rules (one test per rule).

fn parse(extra: &str) -> Result<Config, sim_core::validate::ConfigError> {
    let text = format!(
        "[topology]\nkind = \"two_hosts\"\n\n[[flows]]\nkind = \"quic_connections\"\n{extra}"
    );
    sim_core::scenario::parse_str(&text).map(|s| s.base)
}

fn err_field(extra: &str) -> String {
    parse(extra).expect_err("invalid").field
}

#[test]
fn scenario_keys_resolve_with_flow_defaults() {
    let cfg = parse(
        "bytes = \"50KB\"\nstreams = 2\nidle_timeout = \"3s\"\nreject_zero_rtt = true\n\
         [[flows.connections]]\n\
         [[flows.connections]]\ngap = \"1s\"\nbytes = 1000\nclose = \"idle\"\nresume = false\n\
         [[flows.connections]]\nstart = \"10s\"\nrequest_size = \"1KB\"\n",
    )
    .expect("valid");
    let AppConfig::QuicConnections { quic, connections } = &cfg.flows[0].app else {
        panic!("kind");
    };
    assert!(quic.reject_zero_rtt);
    assert_eq!(quic.idle_timeout, SimDuration::from_secs(3));
    assert_eq!(connections.len(), 3);
    assert_eq!((connections[0].bytes, connections[0].streams), (50_000, 2));
    assert_eq!(connections[1].gap, Some(SimDuration::from_secs(1)));
    assert_eq!(connections[1].close, CloseMode::Idle);
    assert!(!connections[1].resume && connections[0].resume);
    assert_eq!(connections[2].start, Some(SimTime(10_000_000_000)));
    assert_eq!(connections[2].request_size, 1_000);
    // Round trip through the resolved form.
    let text = sim_core::scenario::to_toml(&cfg).expect("toml");
    let back = sim_core::scenario::parse_str(&text).expect("parses").base;
    assert_eq!(back, cfg);
}

#[test]
fn rule_at_least_one_connection() {
    assert_eq!(err_field(""), "flows[0].connections");
}

#[test]
fn rule_streams_at_least_one() {
    assert_eq!(
        err_field("[[flows.connections]]\nstreams = 0\n"),
        "flows[0].connections[0].streams"
    );
}

#[test]
fn rule_start_or_gap_not_both() {
    assert_eq!(
        err_field("[[flows.connections]]\n[[flows.connections]]\nstart = \"1s\"\ngap = \"1s\"\n"),
        "flows[0].connections[1].gap"
    );
}

#[test]
fn rule_start_times_do_not_go_back() {
    assert_eq!(
        err_field("[[flows.connections]]\nstart = \"2s\"\n[[flows.connections]]\nstart = \"1s\"\n"),
        "flows[0].connections[1].start"
    );
}

#[test]
fn rule_unknown_connection_key() {
    assert_eq!(
        err_field("[[flows.connections]]\nbyts = 1\n"),
        "flows[0].connections[0].byts"
    );
}

#[test]
fn rule_close_mode() {
    assert_eq!(
        err_field("[[flows.connections]]\nclose = \"never\"\n"),
        "flows[0].connections[0].close"
    );
}

#[test]
fn rule_sizes_fit_toml_integers() {
    let q = QuicConfig::default();
    let mut s = spec(&q, u64::MAX);
    s.streams = 1;
    let flow = FlowConfig {
        pair: 0,
        background: false,
        app: AppConfig::QuicConnections {
            quic: q,
            connections: vec![s],
        },
    };
    let cfg = Config::two_hosts(link(1_000_000, 1), link(1_000_000, 1), vec![flow]);
    assert_eq!(
        cfg.validate().expect_err("too large").field,
        "flows[0].connections[0].bytes"
    );
}

#[test]
fn rule_resumption_sizes() {
    assert_eq!(
        err_field("resumption_client_hello_size = 0\n[[flows.connections]]\n"),
        "flows[0].resumption_client_hello_size"
    );
    assert_eq!(
        err_field("resumption_server_handshake_size = 0\n[[flows.connections]]\n"),
        "flows[0].resumption_server_handshake_size"
    );
}

#[test]
fn rule_address_token_size() {
    assert_eq!(
        err_field("address_token_size = 1000\n[[flows.connections]]\n"),
        "flows[0].address_token_size"
    );
}

#[test]
fn example_scenario_reports_every_connection() {
    let text = include_str!("../../scenarios/examples/connection-lifecycle.toml");
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, cfg.seed).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    let c = side(&r, "client");
    let reasons: Vec<Option<&str>> = c
        .connections
        .iter()
        .map(|c| c.close_reason.as_deref())
        .collect();
    assert_eq!(
        reasons,
        vec![
            Some("local_close"),
            Some("idle_timeout"),
            Some("local_close")
        ]
    );
    assert!(c
        .connections
        .iter()
        .all(|c| c.status == ConnectionStatus::Completed));
    assert!(!c.connections[0].resumed && c.connections[2].resumed);
    assert_eq!(c.connections[2].zero_rtt_accepted, Some(true));
}

#[test]
fn a_connection_on_a_new_network_uses_the_new_address() {
    // Handover to a slower network with a new IP address between connections 0 and 1:
    // connection 1 starts from the new address; its ticket still resumes the session
    // (0-RTT), but the address-validation token was issued to the old address, so the
    // server does not count the new one as validated (RFC 9000 §8.1.3).
    let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "50Mbps", delay = "10ms" }

[[topology.handovers]]
at = "1s"
address = "ip"
link = { rate = "10Mbps", delay = "30ms" }

[[flows]]
kind = "quic_connections"

[[flows.connections]]
bytes = "100KB"

[[flows.connections]]
start = "2s"
bytes = "100KB"
"#;
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, 1).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    let c = side(&r, "client");
    let s = side(&r, "server");
    assert_eq!(c.connections[0].local, "10.0.0.1:10000");
    assert_eq!(c.connections[1].local, "10.0.0.2:10000");
    assert!(c.connections[1].resumed);
    assert_eq!(c.connections[1].zero_rtt_accepted, Some(true));
    assert!(c.connections[1].token, "the client sends its token");
    assert!(
        !s.connections[1].token,
        "but it is not valid from the new address"
    );
    // The new path's RTT (60 ms + serialization) shows in the first byte.
    let fb = c.connections[1].metrics.time_to_first_byte_secs.unwrap();
    assert!(fb > 0.060 && fb < 0.070, "{fb}");
    assert!(c
        .connections
        .iter()
        .all(|c| c.status == ConnectionStatus::Completed));
}

#[test]
fn several_clients_against_their_servers_on_the_dumbbell() {
    // One quic_connections flow per pair: each pair has its own server host, store and
    // tickets; the pairs share the bottleneck and are otherwise independent.
    let text = r#"
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { rate = "30Mbps", delay = "10ms" }

[[flows]]
kind = "quic_connections"
pair = 0
[[flows.connections]]
bytes = "200KB"
[[flows.connections]]
gap = "200ms"
bytes = "200KB"

[[flows]]
kind = "quic_connections"
pair = 1
[[flows.connections]]
bytes = "300KB"
[[flows.connections]]
bytes = "100KB"
resume = false

[[flows]]
kind = "quic_connections"
pair = 2
address_token_size = 0
[[flows.connections]]
start = "100ms"
bytes = "50KB"
[[flows.connections]]
gap = "1s"
bytes = "50KB"
"#;
    let cfg = sim_core::scenario::parse_str(text).expect("valid").base;
    let r = sim_core::run(&cfg, 9).expect("runs");
    assert_eq!(r.status, RunStatus::Completed);
    for (f, expect_resumed) in [(0, true), (1, false), (2, true)] {
        let client = r.flows[f]
            .endpoints
            .iter()
            .find_map(|m| match m {
                EndpointMetrics::Quic(q) if q.role == "client" => Some(q.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(client.connections.len(), 2);
        assert!(client
            .connections
            .iter()
            .all(|c| c.status == ConnectionStatus::Completed));
        assert_eq!(client.connections[1].resumed, expect_resumed, "flow {f}");
        assert_eq!(client.connections[1].token, f == 0, "flow {f}");
    }
}

#[test]
fn resumption_without_zero_rtt_saves_only_the_certificate() {
    // zero_rtt = false: the abbreviated handshake (no certificate) but the request waits
    // for 1-RTT keys, so the first byte comes at 2 RTT as with a full handshake.
    let run = |zero_rtt: bool| {
        let q = QuicConfig {
            zero_rtt,
            ..model_quic(true)
        };
        let mut second = spec(&q, 100_000);
        second.gap = Some(SimDuration::from_millis(50));
        let r = run_connections(
            q.clone(),
            vec![spec(&q, 10_000), second],
            link(20_000_000, 20),
            link(20_000_000, 20),
            1,
        );
        side(&r, "client").connections[1].clone()
    };
    let (no0, with0) = (run(false), run(true));
    assert!(no0.resumed && no0.zero_rtt_accepted.is_none() && no0.zero_rtt_packets == 0);
    let fb = no0.metrics.time_to_first_byte_secs.unwrap();
    let fb0 = with0.metrics.time_to_first_byte_secs.unwrap();
    eprintln!("first byte: resumed without 0-RTT {fb:.6} s, with 0-RTT {fb0:.6} s");
    assert!(fb > 0.080 && fb < 0.085, "{fb}");
    assert!(fb0 > 0.040 && fb0 < 0.043, "{fb0}");
}
