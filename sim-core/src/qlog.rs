//! A streaming qlog writer: a [`Tracer`] that turns a run's events into qlog JSON-SEQ
//! (`.sqlog`) traces, one per connection and vantage point.
//!
//! Every record is serialised and written the moment it arrives, framed as RFC 7464 JSON
//! text sequences (an ASCII record separator `0x1E`, the JSON text, a line feed); nothing
//! is kept in memory but the open sinks. Sinks are any [`std::io::Write`]: files in the
//! CLI, `Vec<u8>` in tests and in wasm.
//!
//! Two shapes ([`QlogFormat`]):
//! - [`QlogFormat::Draft`] follows the current IETF drafts, recorded in every file header:
//!   [`MAIN_SCHEMA_DRAFT`] (file schema `urn:ietf:params:qlog:file:sequential`, media type
//!   `application/qlog+json-seq`, `TraceSeq` with `event_schemas`, monotonic reference time)
//!   and [`QUIC_EVENTS_DRAFT`] (event names `quic:packet_sent`, `quic:recovery_metrics_updated`,
//!   ..., event schema URI [`QUIC_EVENT_SCHEMA_URI`], which carries the draft number as
//!   that draft requires of implementations of a draft);
//! - [`QlogFormat::Qvis`] writes the qlog 0.3 shape that qvis reads: `qlog_version` `"0.3"`,
//!   `qlog_format` `"JSON-SEQ"`, categories `transport:` / `recovery:` / `connectivity:`,
//!   `raw.length` on packets, frame `length` fields, `common_fields.time_format`
//!   `"relative"` with `reference_time` 0.
//!
//! Times are milliseconds (float) since the start of the simulation, the trace's reference
//! time; simulated time is exact nanoseconds, so the values are exact to the nanosecond.
//!
//! Network events (link changes, handovers, drops) are written as `simulation:marker`
//! events into the traces they concern: drops into both traces of the packet's flow, link
//! changes and handovers into every trace.

use crate::time::{SimDuration, SimTime};
use crate::trace::{
    BlockedReason, ConnectionState, DatagramContent, EndpointInfo, Initiator, LossTrigger,
    ProtocolPacket, ProtocolParameters, RecoveryMetrics, RunInfo, SendTrigger, TraceEvent,
    TraceRecord, TraceSource, Tracer, Vantage,
};
use crate::wire::quic::{Frame, PacketType, QuicPacket};
use crate::wire::sctp::{Chunk, SctpPacket};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The qlog main schema draft the [`QlogFormat::Draft`] output follows.
pub const MAIN_SCHEMA_DRAFT: &str = "draft-ietf-quic-qlog-main-schema-14";
/// The QUIC event definitions draft the [`QlogFormat::Draft`] output follows.
pub const QUIC_EVENTS_DRAFT: &str = "draft-ietf-quic-qlog-quic-events-14";
/// Event schema URI of the QUIC events, with the draft number appended (the draft says
/// implementations of a draft must not use the final URI).
pub const QUIC_EVENT_SCHEMA_URI: &str = "urn:ietf:params:qlog:events:quic-14";
/// Event schema URI of the main schema's simulation events (`simulation:marker`, ...).
pub const SIMULATION_EVENT_SCHEMA_URI: &str = "urn:ietf:params:qlog:events:simulation";
/// Log file schema of a JSON-SEQ qlog file (QlogFileSeq).
pub const SEQUENTIAL_FILE_SCHEMA: &str = "urn:ietf:params:qlog:file:sequential";
/// Media type of a JSON-SEQ qlog file.
pub const JSON_SEQ_MEDIA_TYPE: &str = "application/qlog+json-seq";
/// `qlog_version` of the [`QlogFormat::Qvis`] output.
pub const QVIS_QLOG_VERSION: &str = "0.3";
/// The record separator that starts every JSON-SEQ record (RFC 7464).
pub const RS: u8 = 0x1e;

/// Which qlog shape to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QlogFormat {
    /// The current IETF drafts ([`MAIN_SCHEMA_DRAFT`], [`QUIC_EVENTS_DRAFT`]).
    Draft,
    /// The qlog 0.3 shape qvis reads.
    Qvis,
}

impl QlogFormat {
    /// Parses `"draft"` or `"qvis"`.
    pub fn parse(s: &str) -> Option<QlogFormat> {
        match s {
            "draft" => Some(QlogFormat::Draft),
            "qvis" => Some(QlogFormat::Qvis),
            _ => None,
        }
    }
}

/// One output trace: a connection of a flow, seen from one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TraceKey {
    /// Flow index.
    pub flow: u32,
    /// Connection index within the flow.
    pub connection: u32,
    /// Client or server side.
    pub vantage: Vantage,
}

/// A scenario name as the start of a file name, never a path: characters other than ASCII
/// letters, digits, `-`, `_` and `.` become `_` (so no `/` or `\\`), and a leading `.` too
/// (so no `..`, no hidden file).
pub fn safe_file_stem(scenario: &str) -> String {
    scenario
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || (c == '.' && i > 0) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file name the CLI uses for a trace:
/// `<scenario>-s<seed>-p<point>-f<flow>-c<conn>-<client|server>.sqlog`, the scenario name
/// through [`safe_file_stem`].
pub fn file_name(scenario: &str, seed: u64, point: usize, key: &TraceKey) -> String {
    let name = safe_file_stem(scenario);
    format!(
        "{name}-s{seed}-p{point}-f{}-c{}-{}.sqlog",
        key.flow,
        key.connection,
        key.vantage.as_str()
    )
}

/// Opens the sink for a trace.
pub type OpenSink<'a, W> = Box<dyn FnMut(&TraceKey) -> io::Result<W> + 'a>;

// ---------------------------------------------------------------------------------------
// An insertion-ordered JSON value. serde_json's `Map` sorts keys unless its
// `preserve_order` feature is on, and features unify across a workspace build (the CLI turns
// it on): with `J` the bytes of a trace do not depend on how the crate was built.

/// A JSON value whose objects keep their keys in the order written.
#[derive(Clone, Debug)]
enum J {
    Null,
    Bool(bool),
    U(u64),
    F(f64),
    /// A string literal (no allocation).
    Str(&'static str),
    S(String),
    A(Vec<J>),
    O(Vec<(&'static str, J)>),
    /// Already-serialised JSON text (from a `Serialize` type, written without a `Map`).
    Raw(String),
}

impl J {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            J::Null => out.extend_from_slice(b"null"),
            J::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            J::U(x) => {
                // Writing to a Vec cannot fail.
                let _ = write!(out, "{x}");
            }
            J::F(x) => serde_json::to_writer(&mut *out, x).expect("f64 serialises"),
            J::Str(s) => serde_json::to_writer(&mut *out, s).expect("str serialises"),
            J::S(s) => serde_json::to_writer(&mut *out, s.as_str()).expect("str serialises"),
            J::A(v) => {
                out.push(b'[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    x.write(out);
                }
                out.push(b']');
            }
            J::O(m) => {
                out.push(b'{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, k).expect("str serialises");
                    out.push(b':');
                    x.write(out);
                }
                out.push(b'}');
            }
            J::Raw(s) => out.extend_from_slice(s.as_bytes()),
        }
    }

    /// Appends a field to an object (no-op on other values).
    fn push(&mut self, k: &'static str, v: impl Into<J>) {
        if let J::O(m) = self {
            m.push((k, v.into()));
        }
    }

    /// Appends a field if `v` is `Some`.
    fn put<T: Into<J>>(&mut self, k: &'static str, v: Option<T>) {
        if let Some(v) = v {
            self.push(k, v);
        }
    }

    /// JSON text of a `Serialize` value, in its declared field order.
    fn raw<T: serde::Serialize>(v: &T) -> J {
        J::Raw(serde_json::to_string(v).expect("serialises"))
    }
}

/// The JSON text of `v` without surrounding quotes (for messages).
fn unquoted(v: &J) -> String {
    let mut b = Vec::new();
    v.write(&mut b);
    String::from_utf8_lossy(&b).trim_matches('"').to_string()
}

impl From<bool> for J {
    fn from(b: bool) -> J {
        J::Bool(b)
    }
}
impl From<u64> for J {
    fn from(x: u64) -> J {
        J::U(x)
    }
}
impl From<u32> for J {
    fn from(x: u32) -> J {
        J::U(x.into())
    }
}
impl From<f64> for J {
    fn from(x: f64) -> J {
        J::F(x)
    }
}
impl From<&'static str> for J {
    fn from(s: &'static str) -> J {
        J::Str(s)
    }
}
impl From<String> for J {
    fn from(s: String) -> J {
        J::S(s)
    }
}
impl From<&String> for J {
    fn from(s: &String) -> J {
        J::S(s.clone())
    }
}
impl<T: Into<J>> From<Option<T>> for J {
    fn from(v: Option<T>) -> J {
        v.map_or(J::Null, Into::into)
    }
}
impl From<Vec<J>> for J {
    fn from(v: Vec<J>) -> J {
        J::A(v)
    }
}

/// `j!({"k": v, ...})`, `j!([a, b])`, `j!(expr)`. Values are single token trees: nested
/// `{...}` / `[...]` literals, identifiers, literals, or a parenthesised expression.
macro_rules! j {
    ({ $($k:literal : $v:tt),* $(,)? }) => { J::O(vec![$(($k, j!($v))),*]) };
    ([ $($v:tt),* $(,)? ]) => { J::A(vec![$(j!($v)),*]) };
    ($e:expr) => { J::from($e) };
}

// ---------------------------------------------------------------------------------------

/// Per-trace state the serialisation needs.
#[derive(Clone, Copy, Debug)]
struct TraceState {
    /// ACK Delay exponents (RFC 9000 §18.2, default 3): ours for the frames we send, the
    /// peer's for the frames we receive.
    ack_exp_local: u64,
    ack_exp_remote: u64,
}

impl Default for TraceState {
    fn default() -> Self {
        TraceState {
            ack_exp_local: 3,
            ack_exp_remote: 3,
        }
    }
}

struct Output<W> {
    key: TraceKey,
    sink: W,
    state: TraceState,
}

/// A streaming qlog writer over [`Write`] sinks, one per (flow, connection, vantage).
///
/// Use it as the tracer of [`crate::runner::run_traced`]; then take the sinks back with
/// [`QlogWriter::into_outputs`]. Traces are opened (and their headers written) when the
/// run begins; each record is written when it arrives. An I/O error stops all writing; it
/// is reported by [`QlogWriter::error`] and [`QlogWriter::into_outputs`].
///
/// ```
/// use sim_core::qlog::{QlogFormat, QlogWriter};
/// let cfg = sim_core::scenario::parse_str(r#"
///     [topology]
///     kind = "two_hosts"
///     link = { rate = "10Mbps", delay = "10ms" }
///     [[flows]]
///     kind = "cbr"
///     rate = "1Mbps"
///     size = "1000B"
///     duration = "100ms"
/// "#).unwrap();
/// let mut w = QlogWriter::new(QlogFormat::Qvis, "example", Box::new(|_| Ok(Vec::new())));
/// sim_core::runner::run_traced(&cfg.base, 1, &mut w).unwrap();
/// for (key, bytes) in w.into_outputs().unwrap() {
///     assert_eq!(bytes[0], 0x1e); // a JSON-SEQ record
///     println!("{key:?}: {} bytes", bytes.len());
/// }
/// ```
pub struct QlogWriter<'a, W: Write> {
    format: QlogFormat,
    title: String,
    open: OpenSink<'a, W>,
    outputs: Vec<Output<W>>,
    index: BTreeMap<TraceKey, usize>,
    error: Option<io::Error>,
    buf: Vec<u8>,
    /// The run's description, kept to open traces of connections that start later.
    run: Option<RunInfo>,
}

impl<'a, W: Write> QlogWriter<'a, W> {
    /// A writer of `format` traces titled `title`; `open` creates the sink of each trace
    /// when the run begins.
    pub fn new(format: QlogFormat, title: impl Into<String>, open: OpenSink<'a, W>) -> Self {
        QlogWriter {
            format,
            title: title.into(),
            open,
            outputs: Vec::new(),
            index: BTreeMap::new(),
            error: None,
            buf: Vec::with_capacity(1024),
            run: None,
        }
    }

    /// The first I/O error, if any (writing stopped there).
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// The sinks with their trace keys, in key order; or the first I/O error.
    pub fn into_outputs(self) -> io::Result<Vec<(TraceKey, W)>> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.outputs.into_iter().map(|o| (o.key, o.sink)).collect()),
        }
    }

    fn fail(&mut self, e: io::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Serialises `v` as one JSON-SEQ record (RS, JSON text, LF) into `buf`.
    fn frame(buf: &mut Vec<u8>, v: &J) {
        buf.clear();
        buf.push(RS);
        v.write(buf);
        buf.push(b'\n');
    }

    fn write_to(&mut self, i: usize) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.outputs[i].sink.write_all(&self.buf) {
            self.fail(e);
        }
    }

    /// Opens the sink of trace `key` and writes its header and `simulation:scenario`
    /// event; `None` on an I/O error or before [`Tracer::begin`].
    fn open_trace(&mut self, key: TraceKey) -> Option<usize> {
        let info = self.run.take()?;
        // The trace's endpoints: those of its flow and side (any connection).
        let eps: Vec<&EndpointInfo> = info
            .endpoints
            .iter()
            .filter(|e| e.id.flow == key.flow && e.id.vantage == key.vantage)
            .collect();
        let header = self.header(&key, &eps, &info);
        let endpoints: Vec<J> = eps
            .iter()
            .map(|e| j!({"kind": (e.kind), "local": (&e.local), "remote": (e.remote.clone())}))
            .collect();
        let links: Vec<J> = info.links.iter().map(J::from).collect();
        let scenario = j!({
            "time": 0.0,
            "name": "simulation:scenario",
            "data": {
                "name": (&info.scenario),
                "details": {
                    "seed": (info.seed),
                    "flow": (key.flow),
                    "connection": (key.connection),
                    "endpoints": endpoints,
                    "links": links,
                },
            },
        });
        self.run = Some(info);
        let sink = match (self.open)(&key) {
            Ok(s) => s,
            Err(e) => {
                self.fail(e);
                return None;
            }
        };
        let i = self.outputs.len();
        self.index.insert(key, i);
        self.outputs.push(Output {
            key,
            sink,
            state: TraceState::default(),
        });
        Self::frame(&mut self.buf, &header);
        self.write_to(i);
        Self::frame(&mut self.buf, &scenario);
        self.write_to(i);
        Some(i)
    }

    fn header(&self, key: &TraceKey, eps: &[&EndpointInfo], info: &RunInfo) -> J {
        let local = eps.first().map(|e| e.local.clone()).unwrap_or_default();
        let remote = eps.iter().find_map(|e| e.remote.clone());
        let kinds: Vec<&str> = eps.iter().map(|e| e.kind).collect();
        let vantage = key.vantage.as_str();
        let vp_name = format!("quicsim {vantage} {local}");
        let title = format!(
            "{}: flow {} connection {} ({vantage})",
            self.title, key.flow, key.connection
        );
        let description = format!(
            "quicsim {} scenario {} seed {}; {} at {local}{}",
            env!("CARGO_PKG_VERSION"),
            info.scenario,
            info.seed,
            kinds.join("+"),
            remote
                .map(|r| format!(" talking to {r}"))
                .unwrap_or_default()
        );
        let endpoints: Vec<J> = eps.iter().map(|e| J::U(e.id.endpoint.into())).collect();
        let quicsim = j!({
            "version": (env!("CARGO_PKG_VERSION")),
            "scenario": (&info.scenario),
            "seed": (info.seed),
            "flow": (key.flow),
            "connection": (key.connection),
            "endpoints": endpoints,
            "qlog_main_schema": MAIN_SCHEMA_DRAFT,
            "qlog_quic_events": QUIC_EVENTS_DRAFT,
        });
        let vantage_point = j!({"name": vp_name, "type": vantage});
        match self.format {
            QlogFormat::Draft => j!({
                "file_schema": SEQUENTIAL_FILE_SCHEMA,
                "serialization_format": JSON_SEQ_MEDIA_TYPE,
                "title": (&title),
                "description": (&description),
                "trace": {
                    "title": title,
                    "description": description,
                    "common_fields": {
                        "group_id": (format!("flow{}-conn{}", key.flow, key.connection)),
                        "time_format": "relative_to_epoch",
                        "reference_time": {"clock_type": "monotonic", "epoch": "unknown"},
                    },
                    "vantage_point": vantage_point,
                    "event_schemas": [QUIC_EVENT_SCHEMA_URI, SIMULATION_EVENT_SCHEMA_URI],
                },
                "quicsim": quicsim,
            }),
            QlogFormat::Qvis => j!({
                "qlog_version": QVIS_QLOG_VERSION,
                "qlog_format": "JSON-SEQ",
                "title": (&title),
                "description": (&description),
                "trace": {
                    "title": title,
                    "description": description,
                    "vantage_point": vantage_point,
                    "common_fields": {
                        "protocol_type": ["QUIC"],
                        "time_format": "relative",
                        "reference_time": 0u64,
                    },
                    "configuration": {"time_offset": 0u64},
                },
                "quicsim": quicsim,
            }),
        }
    }
}

impl<W: Write> Tracer for QlogWriter<'_, W> {
    fn begin(&mut self, info: &RunInfo) {
        let mut keys: Vec<TraceKey> = info.endpoints.iter().map(|e| key_of(&e.id)).collect();
        keys.sort();
        keys.dedup();
        self.run = Some(info.clone());
        for key in keys {
            if self.open_trace(key).is_none() {
                return;
            }
        }
    }

    fn record(&mut self, rec: &TraceRecord) {
        if self.error.is_some() {
            return;
        }
        // Checker-only records (issue 16) and the timeline's TCP and RTO events have no
        // qlog form: skipped before a trace opens, so the files are what they were without
        // them.
        if let TraceEvent::SenderProbe(_) | TraceEvent::Tcp(_) | TraceEvent::RtoUpdated { .. } =
            rec.event
        {
            return;
        }
        let time = ms(rec.time.saturating_since(SimTime::ZERO));
        match rec.source {
            TraceSource::Endpoint(id) => {
                let key = TraceKey {
                    flow: id.flow,
                    connection: id.connection,
                    vantage: id.vantage,
                };
                let i = match self.index.get(&key) {
                    Some(&i) => i,
                    // A connection that started later: its trace opens now.
                    None => match self.open_trace(key) {
                        Some(i) => i,
                        None => return,
                    },
                };
                let fmt = self.format;
                let (name, data) = endpoint_event(fmt, &mut self.outputs[i].state, &rec.event);
                let v = j!({"time": time, "name": name, "data": data});
                Self::frame(&mut self.buf, &v);
                self.write_to(i);
            }
            TraceSource::Network { flow } => {
                let v = j!({
                    "time": time,
                    "name": "simulation:marker",
                    "data": (marker(&rec.event)),
                });
                Self::frame(&mut self.buf, &v);
                for i in 0..self.outputs.len() {
                    if flow.is_none_or(|f| self.outputs[i].key.flow == f) {
                        self.write_to(i);
                    }
                }
            }
        }
    }

    fn finish(&mut self, end: SimTime) {
        let v = j!({
            "time": (ms(end.saturating_since(SimTime::ZERO))),
            "name": "simulation:marker",
            "data": {"type": "run_end", "message": "end of the simulated run"},
        });
        Self::frame(&mut self.buf, &v);
        for i in 0..self.outputs.len() {
            self.write_to(i);
            if self.error.is_none() {
                if let Err(e) = self.outputs[i].sink.flush() {
                    self.fail(e);
                }
            }
        }
    }
}

fn key_of(id: &crate::trace::EndpointId) -> TraceKey {
    TraceKey {
        flow: id.flow,
        connection: id.connection,
        vantage: id.vantage,
    }
}

fn pick(fmt: QlogFormat, draft: &'static str, qvis: &'static str) -> &'static str {
    match fmt {
        QlogFormat::Draft => draft,
        QlogFormat::Qvis => qvis,
    }
}

fn initiator(i: Initiator) -> &'static str {
    match i {
        Initiator::Local => "local",
        Initiator::Remote => "remote",
    }
}

/// The qlog name and data of an endpoint event, for a trace with state `st` (whose ACK
/// Delay exponents a `parameters_set` updates).
fn endpoint_event(fmt: QlogFormat, st: &mut TraceState, ev: &TraceEvent) -> (&'static str, J) {
    let qvis = fmt == QlogFormat::Qvis;
    match ev {
        TraceEvent::ParametersSet {
            initiator: who,
            params: ProtocolParameters::Quic(p),
        } => {
            if let Some(x) = p.ack_delay_exponent {
                match who {
                    Initiator::Local => st.ack_exp_local = x,
                    Initiator::Remote => st.ack_exp_remote = x,
                }
            }
            let mut m = J::O(Vec::new());
            m.push(if qvis { "owner" } else { "initiator" }, initiator(*who));
            m.put("max_idle_timeout", p.max_idle_timeout.map(ms_int));
            m.put("max_udp_payload_size", p.max_udp_payload_size);
            m.put("ack_delay_exponent", p.ack_delay_exponent);
            m.put("max_ack_delay", p.max_ack_delay.map(ms_int));
            m.put("active_connection_id_limit", p.active_connection_id_limit);
            m.put("initial_max_data", p.initial_max_data);
            m.put(
                "initial_max_stream_data_bidi_local",
                p.initial_max_stream_data_bidi_local,
            );
            m.put(
                "initial_max_stream_data_bidi_remote",
                p.initial_max_stream_data_bidi_remote,
            );
            m.put("initial_max_stream_data_uni", p.initial_max_stream_data_uni);
            m.put("initial_max_streams_bidi", p.initial_max_streams_bidi);
            m.put("initial_max_streams_uni", p.initial_max_streams_uni);
            m.put("disable_active_migration", p.disable_active_migration);
            (
                pick(fmt, "quic:parameters_set", "transport:parameters_set"),
                m,
            )
        }
        TraceEvent::RecoveryParametersSet(p) => (
            pick(
                fmt,
                "quic:recovery_parameters_set",
                "recovery:parameters_set",
            ),
            j!({
                "reordering_threshold": (p.reordering_threshold),
                "time_threshold": (p.time_threshold),
                "timer_granularity": (ms_int(p.timer_granularity)),
                "initial_rtt": (ms(p.initial_rtt)),
                "max_datagram_size": (p.max_datagram_size),
                "initial_congestion_window": (p.initial_congestion_window),
                "minimum_congestion_window": (p.minimum_congestion_window),
                "loss_reduction_factor": (p.loss_reduction_factor),
                "persistent_congestion_threshold": (p.persistent_congestion_threshold),
                "congestion_controller": (p.congestion_controller),
            }),
        ),
        TraceEvent::ConnectionStateUpdated { old, new } => {
            let mut m = J::O(Vec::new());
            m.put("old", old.map(conn_state));
            m.push("new", conn_state(*new));
            (
                pick(
                    fmt,
                    "quic:connection_state_updated",
                    "connectivity:connection_state_updated",
                ),
                m,
            )
        }
        TraceEvent::PacketSent {
            packet: ProtocolPacket::Quic(packet),
            datagram_id,
            trigger,
        } => {
            let mut m = packet_data(fmt, packet, st.ack_exp_local);
            if !qvis {
                m.push("datagram_id", *datagram_id);
            }
            m.put("trigger", trigger.map(send_trigger));
            (pick(fmt, "quic:packet_sent", "transport:packet_sent"), m)
        }
        TraceEvent::PacketReceived {
            packet: ProtocolPacket::Quic(packet),
            datagram_id,
        } => {
            let mut m = packet_data(fmt, packet, st.ack_exp_remote);
            if !qvis {
                m.push("datagram_id", *datagram_id);
            }
            (
                pick(fmt, "quic:packet_received", "transport:packet_received"),
                m,
            )
        }
        TraceEvent::PacketLost {
            packet: ProtocolPacket::Quic(p),
            trigger,
        } => {
            let mut m = J::O(Vec::new());
            m.push("header", header(p.ty, p.pn));
            if !p.frames.is_empty() {
                let fs: Vec<J> = p
                    .frames
                    .iter()
                    .map(|f| frame(fmt, f, st.ack_exp_local))
                    .collect();
                m.push("frames", fs);
            }
            m.push("trigger", loss_trigger(*trigger));
            // Extension: the lost packet's size (what it took out of bytes in flight).
            m.push("raw", j!({ "length": (p.size) }));
            (pick(fmt, "quic:packet_lost", "recovery:packet_lost"), m)
        }
        TraceEvent::MetricsUpdated(x) => (
            pick(
                fmt,
                "quic:recovery_metrics_updated",
                "recovery:metrics_updated",
            ),
            metrics(x),
        ),
        TraceEvent::CongestionStateUpdated { old, new, trigger } => {
            let mut m = J::O(Vec::new());
            m.put("old", *old);
            m.push("new", *new);
            m.put("trigger", *trigger);
            (
                pick(
                    fmt,
                    "quic:congestion_state_updated",
                    "recovery:congestion_state_updated",
                ),
                m,
            )
        }
        TraceEvent::DataBlockedUpdated {
            stream,
            blocked,
            reason,
        } => {
            let mut m = J::O(Vec::new());
            m.push("new", if *blocked { "blocked" } else { "unblocked" });
            m.put("stream_id", *stream);
            m.push("reason", blocked_reason(*reason));
            let name = match stream {
                None => pick(
                    fmt,
                    "quic:connection_data_blocked_updated",
                    "transport:connection_data_blocked_updated",
                ),
                Some(_) => pick(
                    fmt,
                    "quic:stream_data_blocked_updated",
                    "transport:stream_data_blocked_updated",
                ),
            };
            (name, m)
        }
        TraceEvent::MigrationStateUpdated {
            old,
            new,
            port_only,
            rtt_new,
            cwnd,
        } => {
            let mut m = J::O(Vec::new());
            m.put("old", *old);
            m.push("new", *new);
            // Extensions: what changed, and what validation measured and the policy set.
            m.push("address_change", if *port_only { "port" } else { "ip" });
            m.put("rtt_new", rtt_new.map(ms));
            m.put("congestion_window", *cwnd);
            (
                pick(
                    fmt,
                    "quic:migration_state_updated",
                    "connectivity:migration_state_updated",
                ),
                m,
            )
        }
        // SCTP: no qlog schema exists; a minimal trace in an `sctp:` namespace (the packet
        // number, size and chunks), the same in both shapes.
        TraceEvent::PacketSent {
            packet: ProtocolPacket::Sctp(p),
            trigger,
            ..
        } => {
            let mut m = sctp_packet(p);
            m.put("trigger", trigger.map(send_trigger));
            ("sctp:packet_sent", m)
        }
        TraceEvent::PacketReceived {
            packet: ProtocolPacket::Sctp(p),
            ..
        } => ("sctp:packet_received", sctp_packet(p)),
        TraceEvent::PacketLost {
            packet: ProtocolPacket::Sctp(p),
            trigger,
        } => {
            let mut m = sctp_packet(p);
            m.push("trigger", loss_trigger(*trigger));
            ("sctp:chunk_lost", m)
        }
        // Network events come from the runner; an endpoint emitting one gets a marker too.
        other => ("simulation:marker", marker(other)),
    }
}

/// A duration in milliseconds (float; exact for any realistic simulated time).
fn ms(d: SimDuration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// A duration in whole milliseconds (transport parameters are integers).
fn ms_int(d: SimDuration) -> u64 {
    d.as_nanos() / 1_000_000
}

fn conn_state(s: ConnectionState) -> &'static str {
    match s {
        ConnectionState::Attempted => "attempted",
        ConnectionState::HandshakeStarted => "handshake_started",
        ConnectionState::HandshakeComplete => "handshake_complete",
        ConnectionState::HandshakeConfirmed => "handshake_confirmed",
        ConnectionState::Closed => "closed",
    }
}

fn packet_type(t: PacketType) -> &'static str {
    match t {
        PacketType::Initial => "initial",
        PacketType::Handshake => "handshake",
        PacketType::OneRtt => "1RTT",
        PacketType::ZeroRtt => "0RTT",
    }
}

fn header(t: PacketType, pn: u64) -> J {
    j!({"packet_type": (packet_type(t)), "packet_number": pn})
}

/// `header`, `frames` and `raw` of a sent or received packet. `raw.length` is the packet
/// size (header + packet number + frames + AEAD tag), `raw.payload_length` the frames
/// (the AEAD tag counts as a trailer, quic-events §1.2).
fn packet_data(fmt: QlogFormat, p: &QuicPacket, ack_exp: u64) -> J {
    let payload: u64 = p.frames.iter().map(Frame::wire_size).sum();
    let frames: Vec<J> = p.frames.iter().map(|f| frame(fmt, f, ack_exp)).collect();
    j!({
        "header": (header(p.ty, p.pn)),
        "frames": frames,
        "raw": {"length": (p.size), "payload_length": payload},
    })
}

/// RFC 9000 §20.1 transport error names (qlog TransportError).
fn transport_error(code: u64) -> Option<&'static str> {
    Some(match code {
        0x0 => "no_error",
        0x1 => "internal_error",
        0x2 => "connection_refused",
        0x3 => "flow_control_error",
        0x4 => "stream_limit_error",
        0x5 => "stream_state_error",
        0x6 => "final_size_error",
        0x7 => "frame_encoding_error",
        0x8 => "transport_parameter_error",
        0x9 => "connection_id_limit_error",
        0xa => "protocol_violation",
        0xb => "invalid_token",
        0xc => "application_error",
        0xd => "crypto_buffer_exceeded",
        0xe => "key_update_error",
        0xf => "aead_limit_reached",
        0x10 => "no_viable_path",
        _ => return None,
    })
}

/// One frame. Draft: lengths in `raw` (quic-events: the Length field of STREAM and CRYPTO
/// frames goes in `raw.length`; PADDING counts its bytes in `raw.payload_length`; other
/// frames give their encoded size). Qvis (qlog 0.3, quic-events-01/02): `length` fields on
/// the frame itself — the data length for STREAM and CRYPTO, the encoded size otherwise.
fn frame(fmt: QlogFormat, f: &Frame, ack_exp: u64) -> J {
    let qvis = fmt == QlogFormat::Qvis;
    let size = f.wire_size();
    match f {
        Frame::Padding { len } => {
            if qvis {
                j!({"frame_type": "padding", "length": (*len), "payload_length": (*len)})
            } else {
                j!({"frame_type": "padding", "raw": {"length": (*len), "payload_length": (*len)}})
            }
        }
        Frame::Ping => {
            if qvis {
                j!({"frame_type": "ping", "length": size})
            } else {
                j!({"frame_type": "ping", "raw": {"length": size}})
            }
        }
        Frame::Ack {
            ranges,
            ack_delay_encoded,
            ecn,
        } => {
            // ACK Delay field (µs >> exponent, RFC 9000 §19.3) back to ms.
            let us = ack_delay_encoded
                .checked_shl(ack_exp as u32)
                .unwrap_or(u64::MAX);
            let acked: Vec<J> = ranges
                .iter()
                .map(|&(lo, hi)| if lo == hi { j!([lo]) } else { j!([lo, hi]) })
                .collect();
            let mut m = j!({
                "frame_type": "ack",
                "ack_delay": (us as f64 / 1000.0),
                "acked_ranges": acked,
            });
            if let Some(c) = ecn.as_deref() {
                // qlog QUIC events AckFrame: `ect1`, `ect0`, `ce` (the ECN counts of an
                // ACK of type 0x03, RFC 9000 §19.3.2).
                m.push("ect1", c.ect1);
                m.push("ect0", c.ect0);
                m.push("ce", c.ce);
            }
            if qvis {
                m.push("length", size);
            } else {
                m.push("raw", j!({ "length": size }));
            }
            m
        }
        Frame::Crypto { offset, len } => {
            if qvis {
                j!({"frame_type": "crypto", "offset": (*offset), "length": (*len)})
            } else {
                j!({"frame_type": "crypto", "offset": (*offset), "raw": {"length": (*len)}})
            }
        }
        Frame::Stream {
            id,
            offset,
            len,
            fin,
        } => {
            if qvis {
                j!({
                    "frame_type": "stream", "stream_id": (*id), "offset": (*offset),
                    "length": (*len), "fin": (*fin),
                })
            } else {
                j!({
                    "frame_type": "stream", "stream_id": (*id), "offset": (*offset),
                    "fin": (*fin), "raw": {"length": (*len)},
                })
            }
        }
        Frame::MaxData(v) => j!({"frame_type": "max_data", "maximum": (*v)}),
        Frame::MaxStreamData { id, max } => {
            j!({"frame_type": "max_stream_data", "stream_id": (*id), "maximum": (*max)})
        }
        Frame::MaxStreams { bidi, max } => j!({
            "frame_type": "max_streams",
            "stream_type": (if *bidi { "bidirectional" } else { "unidirectional" }),
            "maximum": (*max),
        }),
        Frame::DataBlocked(v) => j!({"frame_type": "data_blocked", "limit": (*v)}),
        Frame::StreamDataBlocked { id, limit } => {
            j!({"frame_type": "stream_data_blocked", "stream_id": (*id), "limit": (*limit)})
        }
        Frame::NewConnectionId {
            seq,
            retire_prior_to,
            cid_len,
        } => j!({
            "frame_type": "new_connection_id",
            "sequence_number": (*seq),
            "retire_prior_to": (*retire_prior_to),
            "connection_id_length": (*cid_len),
            // The model carries no connection ID bytes: zeros of the right length.
            "connection_id": ("00".repeat(*cid_len as usize)),
        }),
        Frame::PathChallenge(x) => {
            j!({"frame_type": "path_challenge", "data": (format!("{x:016x}"))})
        }
        Frame::PathResponse(x) => {
            j!({"frame_type": "path_response", "data": (format!("{x:016x}"))})
        }
        Frame::ConnectionClose {
            error_code,
            reason_len,
        } => {
            let name = transport_error(*error_code);
            if qvis {
                let code = name.map_or(J::U(*error_code), J::from);
                j!({
                    "frame_type": "connection_close",
                    "error_space": "transport",
                    "error_code": code,
                    "raw_error_code": (*error_code),
                    "reason": "",
                })
            } else {
                let mut m = j!({
                    "frame_type": "connection_close",
                    "error_space": "transport",
                    "error": (name.unwrap_or("unknown")),
                });
                if name.is_none() {
                    m.push("error_code", *error_code);
                }
                m.push("raw", j!({"length": size, "payload_length": (*reason_len)}));
                m
            }
        }
        Frame::HandshakeDone => j!({"frame_type": "handshake_done"}),
    }
}

/// An SCTP packet: its number (the TSN for a lost chunk), size and chunks (`DATA` with
/// TSN, stream and length; `SACK` with the cumulative TSN and gap blocks).
fn sctp_packet(p: &SctpPacket) -> J {
    let chunks: Vec<J> = p
        .chunks
        .iter()
        .map(|c| {
            let mut m = J::O(Vec::new());
            m.push("chunk_type", c.name());
            match c {
                Chunk::Data(d) => {
                    m.push("tsn", d.tsn);
                    m.push("stream", d.sid);
                    m.push("length", d.len);
                }
                Chunk::Sack(k) => {
                    m.push("cumulative_tsn", k.cum_tsn);
                    m.push("a_rwnd", k.a_rwnd);
                    let gaps: Vec<J> = k.gaps.iter().map(|g| j!([(g.0), (g.1)])).collect();
                    m.push("gap_blocks", gaps);
                    m.push("duplicate_tsns", k.dups.len() as u64);
                }
                _ => {}
            }
            m
        })
        .collect();
    j!({"packet_number": (p.number), "length": (p.size()), "chunks": chunks})
}

fn send_trigger(t: SendTrigger) -> &'static str {
    match t {
        SendTrigger::PtoProbe => "pto_probe",
        SendTrigger::RetransmitReordered => "retransmit_reordered",
        SendTrigger::RetransmitTimeout => "retransmit_timeout",
        SendTrigger::RetransmitCrypto => "retransmit_crypto",
    }
}

fn loss_trigger(t: LossTrigger) -> &'static str {
    match t {
        LossTrigger::ReorderingThreshold => "reordering_threshold",
        LossTrigger::TimeThreshold => "time_threshold",
        LossTrigger::PtoExpired => "pto_expired",
    }
}

fn blocked_reason(r: BlockedReason) -> &'static str {
    match r {
        BlockedReason::CongestionControl => "congestion_control",
        BlockedReason::Pacing => "pacing",
        BlockedReason::AmplificationProtection => "amplification_protection",
        BlockedReason::ConnectionFlowControl => "connection_flow_control",
        BlockedReason::StreamFlowControl => "stream_flow_control",
        BlockedReason::StreamId => "stream_id",
        BlockedReason::Application => "application",
    }
}

/// RTTs in ms, windows and bytes in bytes, pacing rate in bit/s. A model-based
/// controller's estimates are extension fields (qlog allows them; the draft's
/// `metrics_updated` has none for a bandwidth model): `bbr_bandwidth` (bit/s) and
/// `bbr_min_rtt` (ms), only for such a controller.
fn metrics(x: &RecoveryMetrics) -> J {
    let mut m = J::O(Vec::new());
    m.put("min_rtt", x.min_rtt.map(ms));
    m.put("smoothed_rtt", x.smoothed_rtt.map(ms));
    m.put("latest_rtt", x.latest_rtt.map(ms));
    m.put("rtt_variance", x.rtt_variance.map(ms));
    m.put("pto_count", x.pto_count);
    m.put("congestion_window", x.congestion_window);
    m.put("bytes_in_flight", x.bytes_in_flight);
    m.put("ssthresh", x.ssthresh);
    m.put("packets_in_flight", x.packets_in_flight);
    m.put("pacing_rate", x.pacing_rate);
    m.put("bbr_bandwidth", x.model_bandwidth);
    m.put("bbr_min_rtt", x.model_min_rtt.map(ms));
    m
}

/// `simulation:marker` data (`type`, `message`, then details as extension fields) of a
/// network event.
fn marker(ev: &TraceEvent) -> J {
    let mut m = J::O(Vec::new());
    match ev {
        TraceEvent::LinkChanged { link, change } => {
            let mut what = Vec::new();
            if let Some(r) = change.rate {
                what.push(format!("rate {}", unquoted(&J::raw(&r))));
            }
            if let Some(d) = change.delay {
                what.push(format!("delay {}", unquoted(&J::raw(&d))));
            }
            if change.loss.is_some() {
                what.push("loss model".to_string());
            }
            if let Some(c) = change.corruption {
                what.push(format!("corruption {c}"));
            }
            m.push("type", "link_changed");
            m.push("message", format!("link {link}: {}", what.join(", ")));
            m.push("link", link);
            m.push("change", J::raw(change));
        }
        TraceEvent::Handover {
            index,
            pair,
            address,
            new_links,
            flushed,
        } => {
            let address = J::raw(address);
            m.push("type", "handover");
            m.push(
                "message",
                format!(
                    "handover {index} of pair {pair} to {} / {} (address change {}, {flushed} packets flushed)",
                    new_links[0],
                    new_links[1],
                    unquoted(&address)
                ),
            );
            m.push("index", *index);
            m.push("pair", *pair);
            m.push("address_change", address);
            m.push("new_links", j!([(&new_links[0]), (&new_links[1])]));
            m.push("flushed", *flushed);
        }
        TraceEvent::LinkDrop {
            link,
            reason,
            size,
            content,
        } => {
            let reason = serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "unknown".to_string());
            let at = link
                .as_ref()
                .map_or_else(|| "at a node".to_string(), |l| format!("on link {l}"));
            let what = match content {
                DatagramContent::Quic(ps) => {
                    let pns: Vec<String> = ps
                        .iter()
                        .map(|p| format!("{} {}", packet_type(p.packet_type), p.packet_number))
                        .collect();
                    format!("QUIC packet(s) {}", pns.join(", "))
                }
                DatagramContent::Tcp(t) => format!("TCP segment seq {} len {}", t.seq, t.len),
                DatagramContent::Sctp { number, chunks } => {
                    format!("SCTP packet {number} [{}]", chunks.join(", "))
                }
                DatagramContent::Cbr { seq } => format!("CBR datagram {seq}"),
                DatagramContent::Other => "datagram".to_string(),
            };
            m.push("type", "link_drop");
            m.push(
                "message",
                format!("{what} ({size} bytes) dropped {at}: {reason}"),
            );
            m.put("link", link.as_ref());
            m.push("reason", reason);
            m.push("size", *size);
            match content {
                DatagramContent::Quic(ps) => {
                    let v: Vec<J> = ps
                        .iter()
                        .map(|p| {
                            j!({
                                "header": (header(p.packet_type, p.packet_number)),
                                "raw": {"length": (p.size)},
                            })
                        })
                        .collect();
                    m.push("packets", v);
                }
                DatagramContent::Tcp(t) => {
                    m.push("tcp_seq", t.seq);
                    m.push("tcp_len", t.len);
                }
                DatagramContent::Sctp { number, chunks } => {
                    m.push("sctp_packet", *number);
                    let v: Vec<J> = chunks.iter().map(|c| J::from(*c)).collect();
                    m.push("chunks", v);
                }
                DatagramContent::Cbr { seq } => m.push("cbr_seq", *seq),
                DatagramContent::Other => {}
            }
        }
        TraceEvent::Marker { kind, message } => {
            m.push("type", *kind);
            m.push("message", message);
        }
        other => {
            m.push("type", other.kind());
            m.push("message", format!("{other:?}"));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        let key = TraceKey {
            flow: 2,
            connection: 1,
            vantage: Vantage::Server,
        };
        assert_eq!(
            file_name("my scen/ario", 7, 3, &key),
            "my_scen_ario-s7-p3-f2-c1-server.sqlog"
        );
    }

    #[test]
    fn ordered_json_with_escapes() {
        let v = j!({
            "z": 1u64,
            "a": [true, (J::Null), 0.5],
            "s": (String::from("q\"uote\n")),
            "o": {"k": "v"},
        });
        let mut b = Vec::new();
        v.write(&mut b);
        let text = String::from_utf8(b).unwrap();
        assert_eq!(
            text,
            r#"{"z":1,"a":[true,null,0.5],"s":"q\"uote\n","o":{"k":"v"}}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["s"], "q\"uote\n");
    }

    #[test]
    fn formats_parse() {
        assert_eq!(QlogFormat::parse("draft"), Some(QlogFormat::Draft));
        assert_eq!(QlogFormat::parse("qvis"), Some(QlogFormat::Qvis));
        assert_eq!(QlogFormat::parse("json"), None);
    }
}
