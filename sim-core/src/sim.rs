//! A steppable simulation: the same run as [`crate::run`], processed in chunks.
//!
//! [`Simulation::new`] validates a [`Config`] and builds the network exactly as
//! [`crate::run`] does; [`Simulation::step`] processes at most a given number of events,
//! [`Simulation::run_until`] every event up to an instant, [`Simulation::progress`] tells
//! how far the run is (cheaply, any time), and [`Simulation::finish`] ends it and gives the
//! [`RunResult`]. This is what a browser worker needs to show progress, pause and cancel.
//!
//! Stepping changes nothing: [`crate::run`] is this same simulation stepped to its end in
//! one call, through the same event loop, so a run stepped in chunks of any sizes, with any
//! [`Simulation::run_until`] instants in between, gives the identical [`RunResult`] —
//! digest, metrics and JSON (tested in `tests/tests/stepping.rs`).
//!
//! ```
//! use sim_core::sim::Simulation;
//!
//! let scenario = sim_core::scenario::parse_str(r#"
//!     [topology]
//!     kind = "two_hosts"
//!     link = { rate = "10Mbps", delay = "10ms" }
//!     [[flows]]
//!     kind = "cbr"
//!     rate = "1Mbps"
//!     size = "1000B"
//!     duration = "1s"
//! "#).unwrap();
//! let mut sim = Simulation::new(&scenario.base, 42).unwrap();
//! // A worker loop: a chunk of events, then report progress (and check for "cancel").
//! while !sim.step(100).is_finished() {
//!     let p = sim.progress();
//!     assert!(p.events > 0 && p.status.is_none());
//! }
//! let stepped = sim.finish();
//! assert_eq!(stepped.status, sim_core::RunStatus::Completed);
//! // The same run as the one-call entry point, bit for bit.
//! assert_eq!(stepped, sim_core::run(&scenario.base, 42).unwrap());
//! ```
//!
//! Finishing early: [`Simulation::finish`] on a simulation that could still go on gives
//! status [`RunStatus::Stopped`] (a status no complete run has, so existing outputs and
//! digests are unchanged), with the metrics of the run up to the time it reached.

use crate::breakdown::FlowBreakdown;
use crate::config::Config;
use crate::metrics::{RunResult, RunStatus};
use crate::runner::{borrowed_tracer, Sim};
use crate::time::SimTime;
use crate::trace::{NoopTracer, Tracer};
use crate::validate::ConfigError;
use serde::Serialize;

/// One run that can be advanced in steps; see the [module documentation](self).
///
/// `'t` is the lifetime of a borrowed tracer ([`Simulation::new_traced`]); an untraced
/// simulation ([`Simulation::new`]) or one that owns its tracer
/// ([`Simulation::with_tracer`] with a `'static` tracer) is a `Simulation<'static>` that a
/// worker can keep between messages. The simulation owns a copy of its config.
pub struct Simulation<'t> {
    sim: Sim<'t>,
}

/// What one call of [`Simulation::step`] or [`Simulation::run_until`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StepOutcome {
    /// Live events processed by this call (stale events and series samples do not count,
    /// as in [`RunResult::events`]).
    pub events: u64,
    /// How the run ended, once it has ended (then further steps do nothing); `None` while
    /// it can go on.
    pub status: Option<RunStatus>,
}

impl StepOutcome {
    /// `true` once the run has ended (`status` is set).
    pub fn is_finished(&self) -> bool {
        self.status.is_some()
    }
}

/// How far a run is: [`Simulation::progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Simulated time reached. While the run goes on: the time of the last processed event,
    /// or the instant of the last [`Simulation::run_until`] if that is later (every event
    /// up to it has been processed). Once it has ended: its end time (the time limit for
    /// `time_limit`, as in [`RunResult::end_time`]).
    pub time: SimTime,
    /// Live events processed so far (what [`RunResult::events`] will say).
    pub events: u64,
    /// Bytes delivered to endpoints so far, all flows together: the UDP payload sizes
    /// ([`crate::packet::Datagram::size`]) of the datagrams delivered, i.e. whole QUIC
    /// packets or CBR datagrams, not application bytes.
    pub delivered_bytes: u64,
    /// How the run ended, once it has ended; `None` while it can go on.
    pub status: Option<RunStatus>,
}

impl Progress {
    /// `true` once the run has ended (`status` is set).
    pub fn is_finished(&self) -> bool {
        self.status.is_some()
    }
}

impl Simulation<'static> {
    /// Validates `config` ([`Config::validate`]) and builds the network and endpoints for
    /// `seed`, exactly as [`crate::run`] does; no event is processed yet.
    pub fn new(config: &Config, seed: u64) -> Result<Self, ConfigError> {
        Ok(Simulation {
            sim: Sim::new(config, seed, Box::new(NoopTracer))?,
        })
    }
}

impl<'t> Simulation<'t> {
    /// Like [`Simulation::new`], streaming the run's events to a borrowed `tracer`, as
    /// [`crate::runner::run_traced`] does: [`Tracer::begin`] now, records as events are
    /// processed, [`Tracer::finish`] in [`Simulation::finish`] (not if the simulation is
    /// dropped unfinished). Tracing changes neither the result nor the digest.
    pub fn new_traced(
        config: &Config,
        seed: u64,
        tracer: &'t mut dyn Tracer,
    ) -> Result<Self, ConfigError> {
        Self::with_tracer(config, seed, borrowed_tracer(tracer))
    }

    /// Like [`Simulation::new_traced`], with a tracer the simulation owns (for a
    /// `Simulation<'static>` kept across calls; a tracer that should hand its records
    /// elsewhere shares that place, e.g. through an `Rc`).
    pub fn with_tracer(
        config: &Config,
        seed: u64,
        tracer: Box<dyn Tracer + 't>,
    ) -> Result<Self, ConfigError> {
        Ok(Simulation {
            sim: Sim::new(config, seed, tracer)?,
        })
    }

    /// Processes at most `max_events` live events (stale events and series samples are
    /// processed on the way without counting) and returns what it did. Stops early when the
    /// run ends; once ended, it does nothing. `step(0)` processes nothing.
    pub fn step(&mut self, max_events: u64) -> StepOutcome {
        let events = self.sim.advance(max_events, SimTime::MAX);
        StepOutcome {
            events,
            status: self.sim.status(),
        }
    }

    /// Processes every event at or before `t` (or until the run ends). Afterwards
    /// [`Progress::time`] is at least `t` unless the run ended earlier. The end conditions
    /// are checked before each event as in one unbroken run: when the next event lies
    /// beyond the time limit, the run ends with `time_limit` even if `t` is earlier.
    pub fn run_until(&mut self, t: SimTime) -> StepOutcome {
        let events = self.sim.advance(u64::MAX, t);
        StepOutcome {
            events,
            status: self.sim.status(),
        }
    }

    /// How far the run is. Cheap (a sum over flows), callable any time.
    pub fn progress(&self) -> Progress {
        Progress {
            time: self.sim.time(),
            events: self.sim.events(),
            delivered_bytes: self.sim.delivered_bytes(),
            status: self.sim.status(),
        }
    }

    /// "Where the time went" per flow ([`crate::breakdown`]): the data sender's time split
    /// by state, up to its completion (or up to [`Progress::time`] while it goes on). Call
    /// it before [`Simulation::finish`]; it changes nothing in the run or its result.
    pub fn breakdown(&self) -> Vec<FlowBreakdown> {
        self.sim.breakdowns()
    }

    /// How the run ended; `None` while it can go on.
    pub fn status(&self) -> Option<RunStatus> {
        self.sim.status()
    }

    /// Ends the simulation and returns its result. After the run ended this is the result
    /// [`crate::run`] gives for the same config and seed, bit for bit. Called earlier, the
    /// status is [`RunStatus::Stopped`], the end time is [`Progress::time`] and the metrics
    /// cover the run up to then (the digest also covers the `stopped` status).
    pub fn finish(self) -> RunResult {
        self.sim.finish()
    }
}
