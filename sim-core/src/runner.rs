//! The event loop behind [`run`] and [`crate::sim::Simulation`]: it builds the network and
//! endpoints from a [`Config`], processes events and assembles the serialisable
//! [`RunResult`].
//!
//! A run ends with a status (see [`RunStatus`]):
//! - `completed`: every foreground flow is finished — all its endpoints report done and the
//!   network holds none of its packets;
//! - `time_limit`: the next event lies beyond `sim.time_limit` (the run stops at the limit);
//! - `event_budget`: `sim.max_events` units of work were done: live events and the
//!   datagrams an endpoint sends beyond the first in one call (a burst) count, so no input
//!   does unbounded work or keeps unbounded memory within the budget;
//! - `stalled`: nothing is left to happen but work is unfinished (e.g. a link went down for
//!   good with packets queued, or a protocol gave up);
//! - `stopped`: only from [`crate::sim::Simulation::finish`] called before any of the above
//!   (a paused or cancelled run); [`run`] never gives it.
//!
//! Series sampling (`output.series`) never changes a run: samples are not events, are
//! neither hashed nor counted against the budget (at most `sim.max_events` rows are kept,
//! then [`Series::truncated`] is set), and a run that ends `stalled` ends at its last
//! event, not at a later sample.
//!
//! The digest is FNV-1a 64 ([`crate::hash`]) over every processed event (time, kind and the
//! ids involved), every packet fate (delivery or drop with its reason) and the end (status
//! and time). Enums enter it by frozen codes, never by declaration position: the event
//! kinds of `Ev::code`, [`DropReason::code`] and [`RunStatus::code`].
//!
//! [`run_traced`] runs the same way and streams events to a [`Tracer`] ([`crate::trace`]):
//! the runner's own network events (link changes, handovers, drops) and the endpoints'
//! protocol events, drained after every call into an endpoint. Tracing adds no scheduler
//! event and no digest input: a traced run has the same result and digest.
//!
//! [`run`] and [`run_traced`] are the one-call entry points: they step the simulation to its
//! end through the same loop (`Sim::advance`) that [`crate::sim::Simulation`] steps in
//! chunks, so a stepped run and a one-call run are the same run, digest included.

use crate::breakdown::{FlowBreakdown, TimePart};
use crate::config::{AddressChange, Config, Topology};
use crate::endpoint::Endpoint;
use crate::engine::Scheduler;
use crate::hash::Fnv1a64;
use crate::link::{LinkId, Offer};
use crate::metrics::{
    DropCounts, DropReason, FlowReport, RunResult, RunStatus, Series, SCHEMA_VERSION,
};
use crate::network::{server_ip, Network, NodeKind};
use crate::packet::{Addr, Datagram, PayloadPool};
use crate::time::SimTime;
use crate::trace::{
    DatagramContent, EndpointId, EndpointInfo, NoopTracer, RunInfo, TraceEvent, TraceRecord,
    TraceSource, Tracer, Vantage,
};
use crate::validate::ConfigError;

/// Runs `config` with `seed` and returns its result.
///
/// The config is validated first ([`Config::validate`]); an invalid one gives the error
/// naming the field. The same config and seed always give the same result, bit for bit, on
/// every target. Same as [`run_traced`] with a [`NoopTracer`], and the same as stepping a
/// [`crate::sim::Simulation`] to its end.
pub fn run(config: &Config, seed: u64) -> Result<RunResult, ConfigError> {
    let mut sim = Sim::new(config, seed, Box::new(NoopTracer))?;
    sim.advance(u64::MAX, SimTime::MAX);
    Ok(sim.finish())
}

/// Runs `config` with `seed` like [`run`] (same result, digest and JSON) and also returns
/// "where the time went" per flow ([`crate::breakdown`]; flows whose transport does not
/// report it are left out).
pub fn run_with_breakdown(
    config: &Config,
    seed: u64,
) -> Result<(RunResult, Vec<FlowBreakdown>), ConfigError> {
    let mut sim = Sim::new(config, seed, Box::new(NoopTracer))?;
    sim.advance(u64::MAX, SimTime::MAX);
    let b = sim.breakdowns();
    Ok((sim.finish(), b))
}

/// Runs `config` with `seed` like [`run`], streaming the run's events to `tracer`.
///
/// When [`Tracer::enabled`] is `true` the tracer gets [`Tracer::begin`] with the run's
/// endpoints, then every [`TraceRecord`] in time order, then [`Tracer::finish`] with the
/// end time; endpoints have tracing switched on ([`Endpoint::set_tracing`]). When it is
/// `false` nothing is traced. Either way the result (digest included) is that of [`run`].
pub fn run_traced(
    config: &Config,
    seed: u64,
    tracer: &mut dyn Tracer,
) -> Result<RunResult, ConfigError> {
    let mut sim = Sim::new(config, seed, borrowed_tracer(tracer))?;
    sim.advance(u64::MAX, SimTime::MAX);
    Ok(sim.finish())
}

/// A borrowed tracer in the box [`Sim`] keeps (every method forwarded, defaults included).
struct Borrowed<'t>(&'t mut dyn Tracer);

impl Tracer for Borrowed<'_> {
    fn enabled(&self) -> bool {
        self.0.enabled()
    }
    fn begin(&mut self, info: &RunInfo) {
        self.0.begin(info)
    }
    fn record(&mut self, record: &TraceRecord) {
        self.0.record(record)
    }
    fn finish(&mut self, end: SimTime) {
        self.0.finish(end)
    }
}

/// Boxes a borrowed tracer for [`Sim::new`] (no copy of the tracer; one small allocation).
pub(crate) fn borrowed_tracer<'t>(tracer: &'t mut dyn Tracer) -> Box<dyn Tracer + 't> {
    Box::new(Borrowed(tracer))
}

/// A scheduler event. Indexes (endpoint, link, change, handover) are kept in 32 bits so
/// that an event is 16 bytes and a heap entry 32: the heap moves entries on every push
/// and pop (a run cannot hold 2^32 endpoints, links or scheduled changes; [`ix`]).
#[derive(Debug)]
enum Ev {
    Start(u32),
    Timer(u32, u64),
    TxDone(u32, u32),
    Arrive(u32, u32),
    Change(u32, u32, u32),
    Handover(u32),
    Sample,
}

// The size the heap entries rely on (see `Ev`).
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

/// An index as an event stores it (see [`Ev`]).
#[inline]
fn ix(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2^32 endpoints, links, changes and handovers")
}

impl Ev {
    /// The event's digest input: its kind's code and two ids. The kind codes are frozen
    /// (hashed into every digest): never change or reuse one.
    fn code(&self) -> (u8, u64, u64) {
        match *self {
            Ev::Start(e) => (1, e as u64, 0),
            Ev::Timer(e, g) => (2, e as u64, g),
            Ev::TxDone(l, g) => (3, l as u64, g as u64),
            Ev::Arrive(l, g) => (4, l as u64, g as u64),
            Ev::Change(l, g, i) => (5, l as u64, ((g as u64) << 32) | i as u64),
            Ev::Handover(i) => (6, i as u64, 0),
            Ev::Sample => (7, 0, 0),
        }
    }
}

struct Slot {
    ep: Box<dyn Endpoint>,
    /// `ep.local_addr()`, kept: an endpoint's address changes only in
    /// `handle_local_address_change` (a handover), after which it is read again. Delivery
    /// compares it with every datagram's destination, per endpoint of the host.
    addr: Addr,
    /// The endpoint's trace kind ([`crate::flows::FlowEndpoint::kind`]).
    kind: &'static str,
    id: EndpointId,
    host: usize,
    flow: usize,
    start: SimTime,
    started: bool,
    /// The instant the endpoint last asked for (`poll_timeout`).
    armed: Option<SimTime>,
    /// The one live timer event of this endpoint: its time and generation. Events of other
    /// generations are stale.
    pending: Option<(SimTime, u64)>,
    gen: u64,
}

#[derive(Default)]
struct FlowAcct {
    background: bool,
    sent: u64,
    delivered: u64,
    drops: DropCounts,
    in_network: u64,
    endpoints: Vec<usize>,
    delivered_bytes: u64,
    /// [`Sim::flow_done`] as of the last refresh (see [`Sim::undone`]).
    done: bool,
    /// In [`Sim::dirty`]: its state may have changed since `done` was computed.
    dirty: bool,
}

/// The network and endpoints while the flows are built: what the flow builder sees.
struct Build<'c> {
    cfg: &'c Config,
    seed: u64,
    net: Network,
    eps: Vec<Slot>,
    flows: Vec<FlowAcct>,
}

/// One run in progress: the state of the event loop.
///
/// Owns its configuration (moved into [`RunResult::resolved_config`] at the end), so a
/// stepped simulation borrows nothing but an optional tracer.
pub(crate) struct Sim<'t> {
    cfg: Config,
    seed: u64,
    sched: Scheduler<Ev>,
    net: Network,
    eps: Vec<Slot>,
    flows: Vec<FlowAcct>,
    drops: DropCounts,
    digest: Fnv1a64,
    events: u64,
    /// Work besides live events counted against `sim.max_events`: the datagrams an
    /// endpoint sends beyond the first in one call.
    work: u64,
    series: Option<Series>,
    /// The series' sampling event is in the queue.
    sample_queued: bool,
    /// The time of the last event processed, series samples aside: the end time of a
    /// run that ends `stalled`, `completed` or `event_budget`.
    last_event: SimTime,
    /// Links with series columns: those at the start plus two per handover.
    series_links: usize,
    tracer: Box<dyn Tracer + 't>,
    /// `tracer.enabled()`, cached: every trace hook is behind this one branch.
    tracing: bool,
    /// How the run ended; `None` while it can go on.
    status: Option<RunStatus>,
    /// Every event at or before this instant has been processed (set by a bounded
    /// [`Sim::advance`]; the scheduler's clock only moves with processed events).
    reached: SimTime,
    /// Foreground flows whose cached `done` is `false`: the run is complete when none is
    /// left. A flow's doneness changes only when one of its endpoints is called or its
    /// count of packets in the network changes; those places mark it dirty, and
    /// [`Sim::all_done`] re-evaluates the dirty flows only, instead of every flow after
    /// every event (the same answer, without a scan of 1 000 flows per event).
    undone: usize,
    /// Flows marked dirty since the last [`Sim::all_done`].
    dirty: Vec<usize>,
    /// Emptied payload boxes: delivered and dropped datagrams' boxes, lent to the
    /// endpoints for their next datagrams (issue 14).
    pool: PayloadPool,
}

/// What [`Sim::process_next`] did with the front of the queue.
enum Popped {
    /// The queue was empty.
    Nothing,
    /// A stale event or a series sample: processed, not counted.
    Uncounted,
    /// A live event: counted, hashed and handled.
    Live,
}

impl<'t> Sim<'t> {
    /// Validates `cfg` and builds the network, the endpoints and the initial events.
    pub(crate) fn new(
        cfg: &Config,
        seed: u64,
        tracer: Box<dyn Tracer + 't>,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mut build = Build {
            cfg,
            seed,
            net: Network::build(&cfg.topology, seed),
            eps: Vec::new(),
            flows: Vec::new(),
        };
        build.build_flows();
        let Build {
            net, eps, flows, ..
        } = build;
        let tracing = tracer.enabled();
        let mut sim = Sim {
            cfg: cfg.clone(),
            seed,
            sched: Scheduler::new(),
            net,
            eps,
            flows,
            drops: DropCounts::default(),
            digest: Fnv1a64::new(),
            events: 0,
            work: 0,
            series: None,
            sample_queued: false,
            last_event: SimTime::ZERO,
            series_links: 0,
            tracer,
            tracing,
            status: None,
            reached: SimTime::ZERO,
            undone: 0,
            dirty: Vec::new(),
            pool: PayloadPool::default(),
        };
        for f in 0..sim.flows.len() {
            let done = sim.flow_done(f);
            sim.flows[f].done = done;
            sim.undone += !done as usize;
        }
        if sim.tracing {
            sim.begin_trace();
        }
        for (l, link) in sim.net.links.iter().enumerate() {
            for (i, c) in link.changes().iter().enumerate() {
                sim.sched
                    .schedule(c.at, Ev::Change(ix(l), link.generation, ix(i)));
            }
        }
        let handovers = match &cfg.topology {
            Topology::TwoHosts { handovers, .. } | Topology::Dumbbell { handovers, .. } => {
                handovers
            }
        };
        for (i, h) in handovers.iter().enumerate() {
            sim.sched.schedule(h.at, Ev::Handover(ix(i)));
        }
        for i in 0..sim.eps.len() {
            let at = sim.eps[i].start;
            sim.sched.schedule(at, Ev::Start(ix(i)));
        }
        if cfg.output.series {
            let mut columns = vec!["time_s".to_string()];
            for l in &sim.net.links {
                columns.push(format!("{}.queue_packets", l.name));
                columns.push(format!("{}.queue_bytes", l.name));
            }
            // The links each handover adds, named as `Network::handover` names them (k in
            // firing order: by time, then by index, as the scheduler orders them), so every
            // row has one value per column from the start (0 before the link exists).
            for k in 0..handovers.len() {
                for dir in ["forward", "reverse"] {
                    columns.push(format!("handover{k}/{dir}.queue_packets"));
                    columns.push(format!("handover{k}/{dir}.queue_bytes"));
                }
            }
            sim.series_links = sim.net.links.len() + 2 * handovers.len();
            for f in 0..sim.flows.len() {
                columns.push(format!("flow{f}.delivered_bytes"));
            }
            for (i, slot) in sim.eps.iter().enumerate() {
                for c in slot.ep.series_columns() {
                    columns.push(format!("flow{}.ep{i}.{c}", slot.flow));
                }
            }
            sim.series = Some(Series {
                columns,
                rows: Vec::new(),
                truncated: false,
            });
            sim.sched.schedule(SimTime::ZERO, Ev::Sample);
            sim.sample_queued = true;
        }
        if sim.all_done() {
            sim.status = Some(RunStatus::Completed);
        }
        Ok(sim)
    }
}

impl Build<'_> {
    fn add_endpoint(
        &mut self,
        flow: usize,
        host: usize,
        start: SimTime,
        kind: &'static str,
        ep: Box<dyn Endpoint>,
    ) {
        let idx = self.eps.len();
        let vantage = if host == self.net.pairs[self.cfg.flows[flow].pair].client {
            Vantage::Client
        } else {
            Vantage::Server
        };
        let id = EndpointId {
            flow: flow as u32,
            endpoint: idx as u32,
            vantage,
            connection: 0,
        };
        self.eps.push(Slot {
            addr: ep.local_addr(),
            ep,
            kind,
            id,
            host,
            flow,
            start,
            started: false,
            armed: None,
            pending: None,
            gen: 0,
        });
        self.net.nodes[host].endpoints.push(idx);
        self.flows[flow].endpoints.push(idx);
    }

    fn build_flows(&mut self) {
        for (fi, f) in self.cfg.flows.iter().enumerate() {
            self.flows.push(FlowAcct {
                background: f.background,
                ..Default::default()
            });
            let pair = self.net.pairs[f.pair].clone();
            let port = 10_000 + fi as u16;
            let caddr = Addr::new(self.net.nodes[pair.client].ip, port);
            let saddr = Addr::new(server_ip(f.pair), port);
            for e in crate::flows::build(f, fi as u32, caddr, saddr, self.seed) {
                let host = match e.side {
                    Vantage::Client => pair.client,
                    Vantage::Server => pair.server,
                };
                self.add_endpoint(fi, host, e.start, e.kind, e.endpoint);
            }
        }
    }
}

impl Sim<'_> {
    /// Switches tracing on in every endpoint and tells the tracer what the run looks like.
    fn begin_trace(&mut self) {
        let mut endpoints = Vec::with_capacity(self.eps.len());
        for (i, slot) in self.eps.iter_mut().enumerate() {
            slot.ep.set_tracing(true);
            let flow = &self.flows[slot.flow];
            let kind = slot.kind;
            let peer = flow.endpoints.iter().copied().find(|&o| o != i);
            endpoints.push((slot.id, kind, slot.ep.local_addr(), peer));
        }
        let endpoints = endpoints
            .into_iter()
            .map(|(id, kind, local, peer)| EndpointInfo {
                id,
                kind,
                local: local.to_string(),
                remote: peer.map(|p| self.eps[p].ep.local_addr().to_string()),
            })
            .collect();
        let info = RunInfo {
            scenario: self.cfg.name.clone(),
            seed: self.seed,
            endpoints,
            links: self.net.links.iter().map(|l| l.name.clone()).collect(),
        };
        self.tracer.begin(&info);
    }

    /// Passes endpoint `e`'s buffered trace events to the tracer (only when tracing).
    fn drain_trace(&mut self, e: usize) {
        if !self.tracing {
            return;
        }
        let id = self.eps[e].id;
        let tracer = &mut *self.tracer;
        let mut sink = |connection, time, event| {
            tracer.record(&TraceRecord {
                time,
                source: TraceSource::Endpoint(EndpointId { connection, ..id }),
                event,
            })
        };
        self.eps[e].ep.drain_trace_tagged(&mut sink);
    }

    /// A network event for the tracer (only when tracing).
    fn trace_net(&mut self, flow: Option<u32>, event: TraceEvent) {
        let time = self.sched.now();
        self.tracer.record(&TraceRecord {
            time,
            source: TraceSource::Network { flow },
            event,
        });
    }

    fn hash_event(&mut self, t: SimTime, ev: &Ev) {
        let (k, a, b) = ev.code();
        self.digest.write_u64(t.0);
        self.digest.write_u8(k);
        self.digest.write_u64(a);
        self.digest.write_u64(b);
    }

    /// Accounts a dropped datagram; `link` is where it happened (`None`: at a node).
    fn drop_packet(&mut self, d: Datagram, reason: DropReason, link: Option<LinkId>) {
        if self.tracing {
            let event = TraceEvent::LinkDrop {
                link: link.map(|l| self.net.links[l].name.clone()),
                reason,
                size: d.size,
                content: DatagramContent::of(&d),
            };
            self.trace_net(Some(d.flow), event);
        }
        self.drops.add(reason, 1);
        self.touch(d.flow as usize);
        let f = &mut self.flows[d.flow as usize];
        f.drops.add(reason, 1);
        f.in_network -= 1;
        self.digest.write(&[0xd0, reason.code()]);
        self.digest.write_u64(d.flow as u64);
        self.pool.recycle(d.payload);
    }

    /// Offers a packet to a link and schedules what follows.
    fn offer(&mut self, now: SimTime, link: LinkId, d: Datagram) {
        match self.net.links[link].offer(now, d) {
            Offer::Dropped(reason, d) => self.drop_packet(d, reason, Some(link)),
            Offer::Accepted => {}
            Offer::StartedTx(at) => {
                let g = self.net.links[link].generation;
                self.sched.schedule(at, Ev::TxDone(ix(link), g));
            }
        }
    }

    /// A packet is at `node`: deliver it to an endpoint or forward it.
    fn at_node(&mut self, now: SimTime, node: usize, d: Datagram) {
        if self.net.nodes[node].kind == NodeKind::Host {
            if d.dst.ip != self.net.nodes[node].ip {
                return self.drop_packet(d, DropReason::NoRoute, None);
            }
            let target = self.net.nodes[node]
                .endpoints
                .iter()
                .copied()
                .find(|&e| self.eps[e].addr == d.dst);
            debug_assert!(self.net.nodes[node]
                .endpoints
                .iter()
                .all(|&e| self.eps[e].addr == self.eps[e].ep.local_addr()));
            match target {
                Some(e) => {
                    self.touch(d.flow as usize);
                    let f = &mut self.flows[d.flow as usize];
                    f.delivered += 1;
                    f.delivered_bytes += d.size as u64;
                    f.in_network -= 1;
                    self.digest.write_u8(0xde);
                    self.digest.write_u64(d.flow as u64);
                    self.eps[e]
                        .ep
                        .handle_datagram_pooled(now, d, &mut self.pool);
                    self.service(now, e);
                }
                None => self.drop_packet(d, DropReason::NoEndpoint, None),
            }
        } else {
            match self.net.route(node, d.dst.ip) {
                Some(l) => self.offer(now, l, d),
                None => self.drop_packet(d, DropReason::NoRoute, None),
            }
        }
    }

    /// After input to endpoint `e`: send what it has, re-arm its timer.
    fn service(&mut self, now: SimTime, e: usize) {
        // Every call into an endpoint is followed by this: its flow may have changed.
        self.touch(self.eps[e].flow);
        self.drain_trace(e);
        let mut burst = 0u64;
        loop {
            // Each datagram after the first of this call is a unit of work; once the
            // budget is spent the endpoint keeps the rest (the run then ends
            // `event_budget`).
            if burst > 0 && self.budget_spent() {
                break;
            }
            let next = self.eps[e].ep.poll_transmit_pooled(now, &mut self.pool);
            // Events of this call (also of the last, empty one) before anything it causes.
            self.drain_trace(e);
            let Some(mut d) = next else { break };
            if burst > 0 {
                self.work += 1;
            }
            burst += 1;
            d.sent_at = now;
            d.corrupted = false;
            self.touch(d.flow as usize);
            let f = &mut self.flows[d.flow as usize];
            f.sent += 1;
            f.in_network += 1;
            let host = self.eps[e].host;
            match self.net.route(host, d.dst.ip) {
                Some(l) => self.offer(now, l, d),
                None => self.drop_packet(d, DropReason::NoRoute, None),
            }
        }
        // Re-arm. A scheduler entry is pushed only when the new instant is earlier than the
        // live one: a later instant reuses the live event, which on firing finds the
        // deadline not yet due and moves itself (see `timer_due`). Endpoints re-arm on
        // almost every packet, mostly to later instants, so this keeps the heap small.
        let want = self.eps[e].ep.poll_timeout();
        let slot = &mut self.eps[e];
        slot.armed = want;
        if let Some(t) = want {
            let t = t.max(now);
            if slot.pending.is_none_or(|(p, _)| p > t) {
                slot.gen += 1;
                slot.pending = Some((t, slot.gen));
                self.sched.schedule(t, Ev::Timer(ix(e), slot.gen));
            }
        }
    }

    /// A timer event of endpoint `e` with generation `g` fired at `now`: is the endpoint's
    /// deadline due? Stale generations and cancelled deadlines are not; a deadline that
    /// moved later is rescheduled (without counting as an event).
    fn timer_due(&mut self, now: SimTime, e: usize, g: u64) -> bool {
        let slot = &mut self.eps[e];
        if slot.pending != Some((now, g)) {
            return false;
        }
        slot.pending = None;
        match slot.armed {
            Some(t) if t <= now => true,
            Some(t) => {
                slot.gen += 1;
                slot.pending = Some((t, slot.gen));
                self.sched.schedule(t, Ev::Timer(ix(e), slot.gen));
                false
            }
            None => false,
        }
    }

    /// Whether flow `f` is finished (background flows always are): no packet of it in the
    /// network, every endpoint started and done.
    fn flow_done(&self, f: usize) -> bool {
        let f = &self.flows[f];
        f.background
            || (f.in_network == 0
                && f.endpoints
                    .iter()
                    .all(|&e| self.eps[e].started && self.eps[e].ep.is_done()))
    }

    /// Notes that flow `f`'s doneness may have changed (an endpoint of it was called, or
    /// its packets in the network changed).
    #[inline]
    fn touch(&mut self, f: usize) {
        let acct = &mut self.flows[f];
        if !acct.dirty {
            acct.dirty = true;
            self.dirty.push(f);
        }
    }

    /// Whether every flow is finished ([`Sim::flow_done`] of every flow): re-evaluates the
    /// flows touched since the last call and keeps the count of unfinished ones.
    fn all_done(&mut self) -> bool {
        // More flows were unfinished at their last look than have been touched since: at
        // least one of those not touched is still unfinished. The touched ones stay
        // marked and are looked at when the answer can be yes (their doneness then is
        // what counts, not the one in between).
        if self.undone > self.dirty.len() {
            return false;
        }
        for i in 0..self.dirty.len() {
            let f = self.dirty[i];
            let done = self.flow_done(f);
            let acct = &mut self.flows[f];
            acct.dirty = false;
            if done != acct.done {
                acct.done = done;
                if done {
                    self.undone -= 1;
                } else {
                    self.undone += 1;
                }
            }
        }
        self.dirty.clear();
        self.undone == 0
    }

    /// Whether `sim.max_events` units of work (live events and `work`) were done.
    fn budget_spent(&self) -> bool {
        self.events.saturating_add(self.work) >= self.cfg.sim.max_events
    }

    fn sample(&mut self, now: SimTime) {
        let Some(series) = self.series.as_mut() else {
            return;
        };
        let mut row = vec![now.as_secs_f64()];
        for l in &self.net.links {
            row.push(l.queue_packets() as f64);
            row.push(l.queue_bytes() as f64);
        }
        // Links of handovers still to come: an empty queue.
        for _ in self.net.links.len()..self.series_links {
            row.push(0.0);
            row.push(0.0);
        }
        for f in &self.flows {
            row.push(f.delivered_bytes as f64);
        }
        for slot in &self.eps {
            slot.ep.series_values(&mut row);
        }
        series.rows.push(row);
    }

    /// Processes events until `max_live` live events were processed, the next event lies
    /// after `until`, or the run ends (then [`Sim::status`] is set); returns the number of
    /// live events processed. The one event loop: [`run`] calls it once without bounds,
    /// [`crate::sim::Simulation`] with bounds, as often as it likes.
    ///
    /// The end checks read the state without changing it, and are made before every event
    /// exactly as an unbounded loop makes them, so stopping between any two events and
    /// going on later changes nothing: the same events run in the same order.
    pub(crate) fn advance(&mut self, max_live: u64, until: SimTime) -> u64 {
        let limit = SimTime::ZERO.saturating_add(self.cfg.sim.time_limit);
        let mut done = 0;
        while self.status.is_none() {
            // A queue that holds only the series' sampling event is empty for the run.
            let only_sample = self.sample_queued && self.sched.len() == 1;
            let Some(next) = self.sched.peek_time().filter(|_| !only_sample) else {
                self.status = Some(RunStatus::Stalled);
                break;
            };
            if next > limit {
                self.status = Some(RunStatus::TimeLimit);
                break;
            }
            if self.budget_spent() {
                self.status = Some(RunStatus::EventBudget);
                break;
            }
            if done >= max_live {
                break;
            }
            if next > until {
                self.reached = self.reached.max(until);
                break;
            }
            match self.process_next() {
                Popped::Nothing => self.status = Some(RunStatus::Stalled),
                Popped::Uncounted => {}
                Popped::Live => {
                    done += 1;
                    if self.all_done() {
                        self.status = Some(RunStatus::Completed);
                    }
                }
            }
        }
        done
    }

    /// Pops the front of the queue and processes it: the per-event code of the loop.
    fn process_next(&mut self) -> Popped {
        let Some((now, ev)) = self.sched.pop() else {
            return Popped::Nothing;
        };
        if !matches!(ev, Ev::Sample) {
            self.last_event = now;
        }
        // Stale timers and stale link events are skipped without counting.
        let live = match ev {
            Ev::Timer(e, g) => self.timer_due(now, e as usize, g),
            Ev::TxDone(l, g) | Ev::Arrive(l, g) | Ev::Change(l, g, _) => {
                self.net.links[l as usize].generation == g
            }
            _ => true,
        };
        if !live {
            return Popped::Uncounted;
        }
        if matches!(ev, Ev::Sample) {
            self.sample(now);
            self.sample_queued = false;
            // Keep sampling while something else can still happen, up to `max_events`
            // rows (the memory bound the event budget gives the run itself).
            let rows = self.series.as_ref().map_or(0, |s| s.rows.len() as u64);
            if rows >= self.cfg.sim.max_events {
                if let Some(s) = self.series.as_mut() {
                    s.truncated = true;
                }
            } else if !self.sched.is_empty() {
                let dt = self.cfg.output.sample_interval;
                self.sched.schedule(now + dt, Ev::Sample);
                self.sample_queued = true;
            }
            return Popped::Uncounted;
        }
        self.events += 1;
        self.hash_event(now, &ev);
        self.handle(now, ev);
        Popped::Live
    }

    /// How the run ended; `None` while it can go on.
    pub(crate) fn status(&self) -> Option<RunStatus> {
        self.status
    }

    /// Live events processed so far.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// "Where the time went" per flow ([`crate::breakdown`]): the data sender's split, for
    /// every flow whose endpoints report one. The sender is the endpoint with the most
    /// time with data waiting (every part but handshake and idle); a tie goes to the later
    /// endpoint (the server).
    pub(crate) fn breakdowns(&self) -> Vec<FlowBreakdown> {
        let now = self.time();
        let mut out = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let mut best: Option<(u64, FlowBreakdown)> = None;
            for (k, &e) in f.endpoints.iter().enumerate() {
                if !self.eps[e].started {
                    continue;
                }
                let Some(b) = self.eps[e].ep.time_breakdown(now) else {
                    continue;
                };
                let busy = b.total().as_nanos()
                    - b.get(TimePart::Handshake).as_nanos()
                    - b.get(TimePart::Idle).as_nanos();
                if best.as_ref().is_none_or(|(x, _)| busy >= *x) {
                    let fb = FlowBreakdown {
                        flow: i as u32,
                        endpoint: k as u32,
                        breakdown: b,
                    };
                    best = Some((busy, fb));
                }
            }
            out.extend(best.map(|(_, b)| b));
        }
        out
    }

    /// Bytes (datagram sizes) delivered to endpoints so far, all flows together.
    pub(crate) fn delivered_bytes(&self) -> u64 {
        self.flows.iter().map(|f| f.delivered_bytes).sum()
    }

    /// The simulated time the run has reached: its end time once it ended (see
    /// [`Sim::end_time`]); before that the later of the last processed event's time and the
    /// bound of the last bounded [`Sim::advance`] that stopped at its bound.
    pub(crate) fn time(&self) -> SimTime {
        self.end_time(self.status.unwrap_or(RunStatus::Stopped))
    }

    /// The end time reported for a run that ends with `status`: the time limit for
    /// `time_limit`; the time reached for `stopped`; else the last event's time.
    fn end_time(&self, status: RunStatus) -> SimTime {
        match status {
            RunStatus::TimeLimit => SimTime::ZERO.saturating_add(self.cfg.sim.time_limit),
            RunStatus::Stopped => self.last_event.max(self.reached),
            _ => self.last_event,
        }
    }

    fn handle(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::Start(e) => {
                let e = e as usize;
                self.eps[e].started = true;
                self.eps[e].ep.start(now);
                self.service(now, e);
            }
            Ev::Timer(e, _) => {
                let e = e as usize;
                self.eps[e].armed = None;
                self.eps[e].ep.handle_timeout(now);
                self.service(now, e);
            }
            Ev::TxDone(lx, g) => {
                let l = lx as usize;
                let done = self.net.links[l].tx_done(now);
                if let Some((reason, d)) = done.dropped {
                    self.drop_packet(d, reason, Some(l));
                }
                if let Some(at) = done.arrival {
                    // A link's arrivals come in the order it sends them (unless it
                    // reorders): one scheduler lane per link.
                    self.sched.schedule_in_lane(l, at, Ev::Arrive(lx, g));
                }
                if let Some(at) = done.next_tx_done {
                    self.sched.schedule(at, Ev::TxDone(lx, g));
                }
            }
            Ev::Arrive(l, _) => {
                let l = l as usize;
                let d = self.net.links[l].arrive();
                if d.corrupted {
                    self.net.links[l]
                        .report
                        .drops
                        .add(DropReason::Corruption, 1);
                    return self.drop_packet(d, DropReason::Corruption, Some(l));
                }
                let to = self.net.links[l].to;
                self.at_node(now, to, d);
            }
            Ev::Change(lx, g, i) => {
                let (l, i) = (lx as usize, i as usize);
                if self.tracing {
                    let link = &self.net.links[l];
                    let event = TraceEvent::LinkChanged {
                        link: link.name.clone(),
                        change: link.changes()[i].clone(),
                    };
                    self.trace_net(None, event);
                }
                if let Some(at) = self.net.links[l].apply_change(now, i) {
                    self.sched.schedule(at, Ev::TxDone(lx, g));
                }
            }
            Ev::Handover(i) => self.handover(now, i as usize),
            Ev::Sample => {}
        }
    }

    fn handover(&mut self, now: SimTime, i: usize) {
        let h = match &self.cfg.topology {
            Topology::TwoHosts { handovers, .. } | Topology::Dumbbell { handovers, .. } => {
                handovers[i].clone()
            }
        };
        let mut effect = self.net.handover(&h);
        if self.tracing {
            let n = self.net.links.len();
            let event = TraceEvent::Handover {
                index: i as u32,
                pair: h.pair as u32,
                address: h.address,
                new_links: [
                    self.net.links[n - 2].name.clone(),
                    self.net.links[n - 1].name.clone(),
                ],
                flushed: effect.flushed.len() as u64,
            };
            self.trace_net(None, event);
        }
        for d in std::mem::take(&mut effect.flushed) {
            self.drop_packet(d, DropReason::Handover, None);
        }
        // Scheduled changes of the new links.
        let n = self.net.links.len();
        for l in n - 2..n {
            let g = self.net.links[l].generation;
            let times: Vec<SimTime> = self.net.links[l].changes().iter().map(|c| c.at).collect();
            for (ci, at) in times.into_iter().enumerate() {
                self.sched.schedule(at, Ev::Change(ix(l), g, ix(ci)));
            }
        }
        if effect.address != AddressChange::None {
            let eps = self.net.nodes[effect.client].endpoints.clone();
            for e in eps {
                let old = self.eps[e].ep.local_addr();
                let new = match effect.address {
                    AddressChange::Ip => Addr::new(effect.new_ip, old.port),
                    // NAT rebinding: the port seen by the network changes.
                    _ => Addr::new(old.ip, old.port.wrapping_add(1000)),
                };
                self.eps[e].ep.handle_local_address_change(now, new);
                self.eps[e].addr = self.eps[e].ep.local_addr();
                self.service(now, e);
            }
        }
    }

    /// Ends the run and assembles its result. A run that has not ended gets status
    /// `stopped` and ends at the time it reached.
    pub(crate) fn finish(mut self) -> RunResult {
        let status = self.status.unwrap_or(RunStatus::Stopped);
        let end = self.end_time(status);
        self.digest.write(&[0xff, status.code()]);
        self.digest.write_u64(end.0);
        if self.tracing {
            self.tracer.finish(end);
        }
        let links = self
            .net
            .links
            .iter_mut()
            .map(|l| l.finish_report())
            .collect();
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowReport {
                flow: i as u32,
                packets_sent: f.sent,
                packets_delivered: f.delivered,
                drops: f.drops,
                in_network: f.in_network,
                loss_ratio: if f.sent > 0 {
                    f.drops.total() as f64 / f.sent as f64
                } else {
                    0.0
                },
                endpoints: f
                    .endpoints
                    .iter()
                    .map(|&e| self.eps[e].ep.metrics(end))
                    .collect(),
            })
            .collect();
        RunResult {
            schema_version: SCHEMA_VERSION,
            quicsim_version: env!("CARGO_PKG_VERSION").to_string(),
            seed: self.seed,
            status,
            end_time_secs: end.as_secs_f64(),
            end_time: end,
            events: self.events,
            digest: format!("{:016x}", self.digest.finish()),
            drops: self.drops,
            links,
            flows,
            series: self.series,
            resolved_config: self.cfg,
        }
    }
}

/// The invariants every finished run of `cfg` keeps, whatever its input: a status other
/// than `stopped`, the event budget kept (live events, the units `sim.max_events` counts;
/// at most as many series rows), no time beyond `sim.time_limit`, and packets conserved per
/// flow (sent = delivered + dropped + still in the network). The fuzzer and
/// `sim_core::testing` both check them; an error says which one broke.
pub fn check_run_invariants(cfg: &Config, r: &RunResult) -> Result<(), String> {
    if r.status == RunStatus::Stopped {
        return Err("the run ended `stopped`".into());
    }
    let samples = r.series.as_ref().map_or(0, |s| s.rows.len() as u64);
    if r.events > cfg.sim.max_events || samples > cfg.sim.max_events {
        return Err(format!(
            "{} events or {samples} series rows > max_events {}",
            r.events, cfg.sim.max_events
        ));
    }
    if r.end_time.0 > cfg.sim.time_limit.0 {
        return Err(format!("ended at {:?} after the time limit", r.end_time));
    }
    for f in &r.flows {
        let out = f.packets_delivered + f.drops.total() + f.in_network;
        if f.packets_sent != out {
            return Err(format!(
                "flow {}: sent {} != delivered {} + dropped {} + in network {}",
                f.flow,
                f.packets_sent,
                f.packets_delivered,
                f.drops.total(),
                f.in_network
            ));
        }
    }
    Ok(())
}
