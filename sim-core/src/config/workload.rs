//! Workloads: what the application does over a transport, as pure configuration data
//! holding no transport parameter ([`WorkloadConfig`]). Owned by the config layer so that
//! [`crate::config::AppConfig`] names no protocol module; the workloads that run them live
//! above (`workloads/bulk.rs`, `workloads/sequence.rs`).
//!
//! One declared table (`DESIGN.md`, "Extension points are declared tables"): each workload
//! is a spec type implementing [`WorkloadDef`] (its name, key tables, rules, streams,
//! connections, the transports that run it) and one line in the `workloads!` list below,
//! from which come [`WorkloadConfig`], its dispatch, the names the format accepts
//! ([`WORKLOAD_NAMES`]), the key tables of the docs and the browser ([`WORKLOAD_TABLES`])
//! and the rows the scenario reader reads them by ([`WORKLOAD_ROWS`]).
//!
//! A new workload written in terms of one that runs already (its [`WorkloadDef::lower`],
//! e.g. request/response exchanges as a page of dependent objects) is one file
//! `config/workload/<name>.rs` and one line `Name(name::Spec)` (after the `;`); one with a state machine
//! of its own also needs its runner (`workloads/<name>.rs`, and its arm in
//! `flows::workload_endpoints`, which the compiler asks for). The built-ins' key tables
//! live with the format's in `validate/schema.rs` and their definitions in
//! `validate/workloads.rs`.

use crate::keys::{key, DefaultValue, Kind, Table};
use crate::time::{SimDuration, SimTime};
use crate::units::Rate;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A broken rule of a workload: `(key, value, allowed)`, the key as the flow writes it
/// (`streams`, `workload.objects[2].after`).
pub type WorkloadError = (String, String, String);

/// One workload: what its spec type implements.
pub trait WorkloadDef:
    Clone + std::fmt::Debug + PartialEq + Serialize + DeserializeOwned + Sized
{
    /// Its name (`workload = { kind = "<NAME>" }`), equal to the serde tag.
    const NAME: &'static str;
    /// `workload = { kind = "<NAME>", ... }`: `kind` ([`kind_key`]) and its keys; id
    /// `workload.<NAME>`.
    const TABLE: Table;
    /// The same keys written flat in the flow (no `kind`).
    const FLAT: Table;
    /// The transports that run it (`None`: every transport, as a workload written once
    /// over `StreamTransport` does).
    const ONLY_ON: Option<&'static [&'static str]> = None;

    /// Its rules (each key's own range is its descriptor's).
    fn validate(&self) -> Result<(), WorkloadError>;
    /// Request streams it opens over all its connections, and the key that sets them
    /// (the scenario's total is bounded, issue 28 item 10).
    fn request_streams(&self) -> (u64, &'static str);
    /// Request streams one connection opens, with the key that sets them, when a key
    /// does (an SCTP association carries at most `sctp::MAX_CLIENT_STREAMS`).
    fn streams_per_connection(&self) -> Option<(&'static str, u64)> {
        None
    }
    /// Whether it opens more than one connection (QUIC's resumption and 0-RTT keys act
    /// only on the later ones).
    fn several_connections(&self) -> bool {
        false
    }
    /// The workload that runs it, when it is written in terms of one that runs already;
    /// `None` for a workload with a runner of its own.
    fn lower(&self) -> Option<WorkloadConfig> {
        None
    }
    /// A valid instance (tests read every workload through its table and run it over
    /// every transport that runs it).
    fn example() -> Self;
}

/// The `kind` key every workload table starts with.
pub const fn kind_key() -> crate::keys::Field {
    key("kind", Kind::Enum, DefaultValue::Required, "the workload").choices(WORKLOAD_NAMES)
}

/// How a workload is read: a row of [`WORKLOAD_ROWS`].
#[derive(Clone, Copy, Debug)]
pub struct WorkloadRow {
    /// Its name.
    pub name: &'static str,
    /// `workload = { kind = "<name>", ... }`.
    pub table: &'static Table,
    /// Its keys flat in a flow.
    pub flat: &'static Table,
    /// The transports that run it (`None`: all).
    pub only_on: Option<&'static [&'static str]>,
    /// The workload from its keys (checked by their descriptors, defaults filled in),
    /// through its serde form, then its rules.
    pub from_table: fn(toml::Value) -> Result<WorkloadConfig, WorkloadError>,
}

/// Reads `D` from its checked keys, then checks its rules.
fn from_table<D: WorkloadDef>(v: toml::Value) -> Result<WorkloadConfig, WorkloadError>
where
    WorkloadConfig: From<D>,
{
    let w: D = v
        .try_into()
        .map_err(|e: toml::de::Error| (String::new(), String::new(), e.message().to_string()))?;
    w.validate()?;
    Ok(WorkloadConfig::from(w))
}

/// Declares the workloads, one line each, in the order every list shows them: first
/// `Variant(Spec)` for the specs of this file, then, after a `;`, `Variant(module::Spec)`
/// for one in `config/workload/<module>.rs` (the line declares the module).
macro_rules! workloads {
    ($($variant:ident($ty:ident),)* ; $($fvariant:ident($module:ident::$fty:ident),)*) => {
        $(mod $module; pub use $module::$fty;)*
        workloads_table! { $($variant($ty),)* $($fvariant($module::$fty),)* }
    };
}

/// `workloads!`'s expansion over the normalised list.
macro_rules! workloads_table {
    ($($variant:ident($ty:ty),)*) => {

        /// What the application does over a transport flow (`workload = { kind = ...,
        /// ... }`), one variant per row of `workloads!`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum WorkloadConfig {
            $(
                #[doc = concat!("[`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        $(impl From<$ty> for WorkloadConfig {
            fn from(w: $ty) -> Self {
                WorkloadConfig::$variant(w)
            }
        })*

        /// Every workload's name, in list order (the `kind` choices).
        pub const WORKLOAD_NAMES: &[&str] = &[$(<$ty as WorkloadDef>::NAME),*];

        /// Every workload's table `workload.<name>`, in list order.
        pub const WORKLOAD_TABLES: &[&Table] = &[$(&<$ty as WorkloadDef>::TABLE),*];

        /// Every workload's row, in list order.
        pub const WORKLOAD_ROWS: &[WorkloadRow] = &[$(WorkloadRow {
            name: <$ty as WorkloadDef>::NAME,
            table: &<$ty as WorkloadDef>::TABLE,
            flat: &<$ty as WorkloadDef>::FLAT,
            only_on: <$ty as WorkloadDef>::ONLY_ON,
            from_table: from_table::<$ty>,
        }),*];

        /// One valid instance of every workload, in list order.
        pub fn examples() -> Vec<WorkloadConfig> {
            vec![$(WorkloadConfig::$variant(<$ty as WorkloadDef>::example())),*]
        }

        impl WorkloadConfig {
            /// The workload's name, its serde tag (`workload = { kind = "web_page" }`).
            pub fn kind(&self) -> &'static str {
                match self { $(WorkloadConfig::$variant(_) => <$ty as WorkloadDef>::NAME,)* }
            }
            /// Its rules ([`WorkloadDef::validate`]).
            pub fn validate(&self) -> Result<(), WorkloadError> {
                match self { $(WorkloadConfig::$variant(w) => <$ty as WorkloadDef>::validate(w),)* }
            }
            /// [`WorkloadDef::request_streams`].
            pub fn request_streams(&self) -> (u64, &'static str) {
                match self { $(WorkloadConfig::$variant(w) => <$ty as WorkloadDef>::request_streams(w),)* }
            }
            /// [`WorkloadDef::streams_per_connection`].
            pub fn streams_per_connection(&self) -> Option<(&'static str, u64)> {
                match self { $(WorkloadConfig::$variant(w) => <$ty as WorkloadDef>::streams_per_connection(w),)* }
            }
            /// [`WorkloadDef::several_connections`].
            pub fn several_connections(&self) -> bool {
                match self { $(WorkloadConfig::$variant(w) => <$ty as WorkloadDef>::several_connections(w),)* }
            }
            /// [`WorkloadDef::lower`].
            pub fn lower(&self) -> Option<WorkloadConfig> {
                match self { $(WorkloadConfig::$variant(w) => <$ty as WorkloadDef>::lower(w),)* }
            }
            /// Whether the transport `transport` runs it ([`WorkloadDef::ONLY_ON`]).
            pub fn runs_on(&self, transport: &str) -> bool {
                let only = match self {
                    $(WorkloadConfig::$variant(_) => <$ty as WorkloadDef>::ONLY_ON,)*
                };
                only.is_none_or(|t| t.contains(&transport))
            }
        }
    };
}

workloads! {
    Bulk(BulkSpec),
    Sequence(SequenceSpec),
    WebPage(WebPageSpec),
    Video(VideoSpec),
    Reconnects(ReconnectsSpec),
    ;
}

/// The row of the workload `name`.
pub fn row(name: &str) -> Option<&'static WorkloadRow> {
    WORKLOAD_ROWS.iter().find(|r| r.name == name)
}

/// The article and name a text uses for the workload `name` ("a bulk workload", "an rpc
/// workload").
pub fn a_workload(name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name} workload")
}

/// The `bulk` workload: once the handshake completes, the client opens `streams`
/// bidirectional streams and sends a `request_size`-byte request on each; the server
/// answers each with its share of `bytes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BulkSpec {
    /// Total response bytes N, split evenly over the streams (the first `N mod S` streams
    /// get one byte more). Default 1,000,000.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub bytes: u64,
    /// Number of bidirectional streams the client opens (one request each). Default 1.
    pub streams: u64,
    /// Request size per stream, client to server. Default 100.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// Rate at which the client application reads the response data; unset = it reads
    /// everything as soon as it is in order. Data counts as consumed (for flow control
    /// and completion) when read. Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,
    /// iperf3-like time limit (`iperf3 -t`): the server answers every request without
    /// size limit (`bytes` unused) for this long from the first request it read, then
    /// closes the connection; the client is done when it learns of the close. Unset: the
    /// server sends `bytes` (today's behaviour). Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<SimDuration>,
}

impl Default for BulkSpec {
    fn default() -> Self {
        BulkSpec {
            bytes: 1_000_000,
            streams: 1,
            request_size: 100,
            read_rate: None,
            duration: None,
        }
    }
}

impl BulkSpec {
    /// `bytes` response bytes on one stream, the other keys at their defaults.
    pub fn bytes(bytes: u64) -> Self {
        BulkSpec {
            bytes,
            ..BulkSpec::default()
        }
    }

    /// Checks the values. The error is `(field, value, allowed)` as
    /// [`crate::config::quic::QuicConfig::validate`]'s.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        check_streams(self.streams)?;
        if let Some(r) = self.read_rate {
            if r.bps() == 0 {
                return Err((
                    "read_rate",
                    "0bps".into(),
                    "a rate > 0 (omit it for unlimited)".into(),
                ));
            }
        }
        if self.duration == Some(SimDuration::ZERO) {
            return Err((
                "duration",
                "0s".into(),
                "a time > 0 (omit it to send `bytes`)".into(),
            ));
        }
        Ok(())
    }
}

/// The `sequence` workload: the connections, in order, and the workload keys each
/// defaults to (written next to `connections`; every [`ConnectionSpec`] holds its
/// resolved values). Every connection reads at once (no `read_rate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequenceSpec {
    /// The connections' default response bytes. Default 1,000,000.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub bytes: u64,
    /// The connections' default number of request streams. Default 1.
    pub streams: u64,
    /// The connections' default request size per stream. Default 100.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// The connections, in order (at least one).
    pub connections: Vec<ConnectionSpec>,
}

impl SequenceSpec {
    /// A sequence of `connections` with the default workload keys.
    pub fn new(connections: Vec<ConnectionSpec>) -> Self {
        let d = BulkSpec::default();
        SequenceSpec {
            bytes: d.bytes,
            streams: d.streams,
            request_size: d.request_size,
            connections,
        }
    }

    /// A connection with `bytes` and this sequence's defaults: resume, explicit close,
    /// start right after the previous connection.
    pub fn connection(&self, bytes: u64) -> ConnectionSpec {
        ConnectionSpec {
            streams: self.streams,
            request_size: self.request_size,
            ..ConnectionSpec::new(bytes)
        }
    }
}

/// How a connection ends once its workload is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CloseMode {
    /// The client sends CONNECTION_CLOSE as soon as it has read every response (RFC 9000
    /// §10.2). Default.
    #[default]
    Explicit,
    /// The client stays silent and both ends close at the idle timeout (RFC 9000 §10.1).
    Idle,
}

/// One connection of a `sequence` workload, resolved (every field set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionSpec {
    /// Absolute start time. When unset, the connection starts `gap` after the previous
    /// one ended (the first: `gap` after time zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<SimTime>,
    /// Idle gap after the previous connection ended at the client (CONNECTION_CLOSE sent
    /// or received, or idle timeout); used when `start` is unset (unset too: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<SimDuration>,
    /// Resume with the session ticket of an earlier connection, if the client has one
    /// (0-RTT when `zero_rtt` is on). Default `true`.
    pub resume: bool,
    /// Response bytes, split over the streams as in `bulk`.
    pub bytes: u64,
    /// Request streams.
    pub streams: u64,
    /// Request size per stream.
    pub request_size: u64,
    /// How the connection ends.
    pub close: CloseMode,
}

impl ConnectionSpec {
    /// A spec with `bytes` and the workload defaults of [`BulkSpec`] (one stream, 100-byte
    /// request): resume, explicit close, start right after the previous connection.
    pub fn new(bytes: u64) -> Self {
        let d = BulkSpec::default();
        ConnectionSpec {
            start: None,
            gap: None,
            resume: true,
            bytes,
            streams: d.streams,
            request_size: d.request_size,
            close: CloseMode::Explicit,
        }
    }
}

/// One object of a web page (`workload = { kind = "web_page", objects = [...] }`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebObject {
    /// A name for reports (`"index.html"`).
    pub name: String,
    /// Response size in bytes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub size: u64,
    /// Request size in bytes (resolved: the workload's `request_size` unless the object
    /// sets its own).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// Indices of earlier objects that must be read completely before this one is
    /// requested (empty: requested at once).
    #[serde(default)]
    pub after: Vec<usize>,
}

/// The `web_page` workload: the objects (resolved from `objects` or the `preset`), each
/// fetched on its own request stream in list order as its dependencies complete.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebPageSpec {
    /// The objects, in request order.
    pub objects: Vec<WebObject>,
}

/// The presets of `web_page` (`preset = "paper003"`).
pub const WEB_PAGE_PRESETS: &[&str] = &["paper003"];

/// Paper 003's page (one html, then one css, one js and five images requested in
/// parallel once the html is read), each object requested with `request_size` bytes. The
/// paper gives no sizes; these follow the HTTP Archive Web Almanac 2024, Page Weight
/// chapter (median desktop home page): html 18 KB (median HTML bytes), css 78 KB (the
/// median CSS bytes of a page, in one style sheet), js 26 KB (median JavaScript bytes
/// 613 KB over its median 24 requests), images 59 KB each (median image bytes 1054 KB
/// over 18 requests); 417 KB in all.
pub fn paper003_page(request_size: u64) -> Vec<WebObject> {
    let obj = |name: &str, size: u64, after: &[usize]| WebObject {
        name: name.into(),
        size,
        request_size,
        after: after.to_vec(),
    };
    let mut page = vec![
        obj("index.html", 18_000, &[]),
        obj("style.css", 78_000, &[0]),
        obj("app.js", 26_000, &[0]),
    ];
    for k in 1..=5 {
        page.push(obj(&format!("img{k}.jpg"), 59_000, &[0]));
    }
    page
}

/// Checks a page: at least one object, sizes > 0, dependencies on earlier objects only
/// (a dependency on the object itself or a later one would be a cycle or break the
/// request order). The error is `(field, value, allowed)` with the field relative to the
/// workload table (`objects[3].after`).
pub fn validate_page(objects: &[WebObject]) -> Result<(), (String, String, String)> {
    if objects.is_empty() {
        return Err(("objects".into(), "[]".into(), "at least one object".into()));
    }
    for (i, o) in objects.iter().enumerate() {
        if o.size == 0 {
            return Err((
                format!("objects[{i}].size"),
                "0".into(),
                "a size > 0".into(),
            ));
        }
        if let Some(&d) = o.after.iter().find(|&&d| d >= i) {
            let why = if d == i {
                "an object cannot depend on itself"
            } else if d >= objects.len() {
                "no such object"
            } else {
                "a dependency on a later object would be a cycle or break the list order"
            };
            return Err((
                format!("objects[{i}].after"),
                d.to_string(),
                format!("indices (or names) of earlier objects (< {i}): objects are requested in list order; {why}"),
            ));
        }
    }
    Ok(())
}

/// The `video` workload (paper 003's streaming): the client fetches `length` of video in
/// segments of `segment` on one request stream each, one request at a time, keeping up
/// to `buffer` of video ahead of playback; playback starts (and resumes after a stall or
/// a seek) once `startup` is buffered. Each segment's quality is chosen by the measured
/// delay (smoothed RTT / 2, an estimate of the one-way link delay paper 003 varies):
/// below `fhd_delay` QHD, up to `hd_delay` FHD, above HD.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoSpec {
    /// Length of the video (a whole number of segments).
    pub length: SimDuration,
    /// Segment duration.
    pub segment: SimDuration,
    /// Buffer target: no request while this much video is buffered ahead of playback.
    pub buffer: SimDuration,
    /// Startup threshold: video buffered ahead before playback starts or resumes.
    pub startup: SimDuration,
    /// Request size per segment (the request also names the rendition).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// Bitrate of the HD rendition (720p).
    pub hd_rate: Rate,
    /// Bitrate of the FHD rendition (1080p).
    pub fhd_rate: Rate,
    /// Bitrate of the QHD rendition (1440p).
    pub qhd_rate: Rate,
    /// Delay below which QHD is chosen (paper 003: 100 ms).
    pub fhd_delay: SimDuration,
    /// Delay above which HD is chosen (paper 003: 200 ms).
    pub hd_delay: SimDuration,
    /// A seek: at this time (from the connection start) playback jumps to `seek_to`. A
    /// seek that comes before playback started is no seek during playback: the run
    /// reports `seek_before_playback` and no loading delay ([`VideoSpec::seek_after_playback`]
    /// cannot fall there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_at: Option<SimDuration>,
    /// A seek this long after playback first started (instead of `seek_at`): the viewer
    /// seeks while watching, whatever the startup took on the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_after_playback: Option<SimDuration>,
    /// The seek comes later by a uniform random offset in `[0, seek_jitter)`, drawn from
    /// the run's stream `flow<i>/video/seek` ([`crate::rng::RngStream`]), so that results
    /// do not hinge on where the seek falls against the segment downloads. Unset: no
    /// offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_jitter: Option<SimDuration>,
    /// Where a seek jumps to (a position in the video).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_to: Option<SimDuration>,
    /// How the player measures the delay it picks the quality by ([`DelayEstimate`]).
    /// Default `smoothed_rtt`.
    #[serde(default, skip_serializing_if = "DelayEstimate::is_default")]
    pub delay_estimate: DelayEstimate,
    /// The rendition of the first segment requested after a seek (paper 003: the player
    /// asks for HD after a seek); the segments after it follow the delay rule again.
    /// Unset: the delay rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_quality: Option<Rendition>,
    /// The most address changes of the client at which the player reconnects (paper 003's
    /// reconnections during a video): the connection that cannot follow is abandoned and
    /// a new one from the new address asks for the rest of the segment in flight. 0 (the
    /// default): the connection keeps its old address unless its transport migrates it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnections: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A rendition of a `video` (`seek_quality`), lowest first as [`VIDEO_QUALITIES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rendition {
    /// HD (720p).
    Hd,
    /// FHD (1080p).
    Fhd,
    /// QHD (1440p).
    Qhd,
}

impl Rendition {
    /// The index in [`VIDEO_QUALITIES`] (0 HD, 1 FHD, 2 QHD).
    pub fn index(self) -> usize {
        match self {
            Rendition::Hd => 0,
            Rendition::Fhd => 1,
            Rendition::Qhd => 2,
        }
    }
}

/// How a `video` player measures the delay it chooses each segment's quality by
/// (`delay_estimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelayEstimate {
    /// The transport's smoothed RTT / 2 at the request (before any RTT sample: the
    /// transport's initial value). Default.
    #[default]
    SmoothedRtt,
    /// The player's own measure, as a player sees it through its HTTP requests: half
    /// the time from its latest segment request to that response's first byte (one
    /// application round trip, whatever the transport). The first request, with no
    /// measure yet, asks for the lowest rendition (HD), as dash.js does with no
    /// throughput history (its default initial bitrate, 1 Mbit/s, is below every
    /// rendition, so it takes the lowest).
    Request,
}

impl DelayEstimate {
    /// The scenario spelling.
    pub fn name(self) -> &'static str {
        match self {
            DelayEstimate::SmoothedRtt => "smoothed_rtt",
            DelayEstimate::Request => "request",
        }
    }

    fn is_default(&self) -> bool {
        *self == DelayEstimate::default()
    }
}

/// The renditions of [`VideoSpec`], lowest first.
pub const VIDEO_QUALITIES: [&str; 3] = ["hd", "fhd", "qhd"];

impl Default for VideoSpec {
    /// Defaults, each cited: 4 s segments (DASH-IF IOP v4.3 §3.2.7 example; dash.js and
    /// Shaka packagers' common choice), buffer target 12 s (dash.js
    /// `streaming.buffer.stableBufferTime`), startup 2.5 s (ExoPlayer `DefaultLoadControl`
    /// `DEFAULT_BUFFER_FOR_PLAYBACK_MS`), bitrates 5 / 8 / 16 Mbit/s (YouTube's
    /// recommended upload bitrates, SDR 24-30 fps: 720p 5, 1080p 8, 1440p 16 Mbps),
    /// thresholds 100 / 200 ms (paper 003), a 60 s video, 100-byte requests.
    fn default() -> Self {
        VideoSpec {
            length: SimDuration::from_secs(60),
            segment: SimDuration::from_secs(4),
            buffer: SimDuration::from_secs(12),
            startup: SimDuration::from_millis(2500),
            request_size: 100,
            hd_rate: Rate(5_000_000),
            fhd_rate: Rate(8_000_000),
            qhd_rate: Rate(16_000_000),
            fhd_delay: SimDuration::from_millis(100),
            hd_delay: SimDuration::from_millis(200),
            seek_at: None,
            seek_after_playback: None,
            seek_jitter: None,
            seek_to: None,
            delay_estimate: DelayEstimate::SmoothedRtt,
            seek_quality: None,
            reconnections: 0,
        }
    }
}

impl VideoSpec {
    /// The renditions' bitrates, HD first.
    pub fn bitrates(&self) -> [Rate; 3] {
        [self.hd_rate, self.fhd_rate, self.qhd_rate]
    }

    /// Number of segments.
    pub fn segments(&self) -> u64 {
        self.length.0 / self.segment.0.max(1)
    }

    /// Bytes of one segment of rendition `q` (0 HD, 1 FHD, 2 QHD): bitrate x segment
    /// duration / 8, rounded up.
    pub fn segment_bytes(&self, q: usize) -> u64 {
        let bits = self.bitrates()[q].0 as u128 * self.segment.0 as u128;
        bits.div_ceil(8_000_000_000) as u64
    }

    /// The rendition for a measured delay (paper 003: < 100 ms QHD, 100-200 ms FHD,
    /// > 200 ms HD).
    pub fn quality_for(&self, delay: SimDuration) -> usize {
        if delay < self.fhd_delay {
            2
        } else if delay <= self.hd_delay {
            1
        } else {
            0
        }
    }

    /// Checks the values. The error is `(field, value, allowed)`.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        let fmt = crate::units::format_duration;
        if self.segment == SimDuration::ZERO {
            return Err(("segment", "0s".into(), "a time > 0".into()));
        }
        if self.length == SimDuration::ZERO || !self.length.0.is_multiple_of(self.segment.0) {
            return Err((
                "length",
                fmt(self.length),
                format!("a whole number (>= 1) of segments of {}", fmt(self.segment)),
            ));
        }
        if self.buffer < self.segment {
            return Err((
                "buffer",
                fmt(self.buffer),
                format!("at least one segment ({})", fmt(self.segment)),
            ));
        }
        if self.startup == SimDuration::ZERO || self.startup > self.buffer {
            return Err((
                "startup",
                fmt(self.startup),
                format!("a time > 0 and <= buffer ({})", fmt(self.buffer)),
            ));
        }
        for (name, r) in [
            ("hd_rate", self.hd_rate),
            ("fhd_rate", self.fhd_rate),
            ("qhd_rate", self.qhd_rate),
        ] {
            if r.0 == 0 {
                return Err((name, "0bps".into(), "a rate > 0".into()));
            }
        }
        if self.fhd_delay > self.hd_delay {
            return Err((
                "fhd_delay",
                fmt(self.fhd_delay),
                format!("a time <= hd_delay ({})", fmt(self.hd_delay)),
            ));
        }
        if let (Some(_), Some(a)) = (self.seek_at, self.seek_after_playback) {
            return Err((
                "seek_after_playback",
                fmt(a),
                "no value with seek_at (one seek: at a time from the start, or after playback started)".into(),
            ));
        }
        let seek = self.seek_at.is_some() || self.seek_after_playback.is_some();
        if let (false, Some(q)) = (seek, self.seek_quality) {
            return Err((
                "seek_quality",
                VIDEO_QUALITIES[q.index()].into(),
                "only with seek_at or seek_after_playback".into(),
            ));
        }
        if let Some(j) = self.seek_jitter {
            if !seek {
                return Err((
                    "seek_jitter",
                    fmt(j),
                    "only with seek_at or seek_after_playback".into(),
                ));
            }
        }
        match (seek, self.seek_to) {
            (true, None) => Err((
                "seek_to",
                "(missing)".into(),
                "a position in the video, required with seek_at or seek_after_playback".into(),
            )),
            (false, Some(t)) => Err((
                "seek_to",
                fmt(t),
                "only with seek_at or seek_after_playback".into(),
            )),
            (true, Some(t)) if t >= self.length => Err((
                "seek_to",
                fmt(t),
                format!(
                    "a position before the end of the video ({})",
                    fmt(self.length)
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// How the connection of a `reconnects` part ends before the next one starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReconnectOn {
    /// The connection goes idle and both ends close at the idle timeout (RFC 9000
    /// §10.1; a TCP / SCTP keep-alive timeout). Default.
    #[default]
    Idle,
    /// The client closes the connection as soon as it has read its part.
    Close,
    /// The client's address changes (a handover of its pair with `address = "ip"` or
    /// `"port"`) while the transfer runs: a connection that cannot follow it (TCP, SCTP,
    /// QUIC without `migration`) is abandoned and a new one from the new address fetches
    /// the rest (QUIC resumes the session, 0-RTT with `zero_rtt`); a QUIC connection with
    /// `migration` migrates instead. At most `reconnections` address changes reconnect.
    AddressChange,
}

/// The `reconnects` workload: `bytes` over `reconnections + 1` connections one after
/// another, each carrying its share (the first `bytes mod parts` one byte more) as a
/// `bulk` transfer on `streams` streams, resuming the previous session when the
/// transport can.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconnectsSpec {
    /// Total response bytes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub bytes: u64,
    /// Reconnections K (the transfer has K + 1 parts). With
    /// [`ReconnectOn::AddressChange`]: the most address changes that reconnect.
    pub reconnections: u64,
    /// How each connection ends before the next.
    pub on: ReconnectOn,
    /// Request streams per connection.
    pub streams: u64,
    /// Request size per stream.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
}

/// Most reconnections a transfer may have (each is a connection the run simulates).
pub const MAX_RECONNECTIONS: u64 = 1000;

/// The most request streams a connection of `bulk`, `sequence` or `reconnects` may open
/// (issue 15 item 3): every stream's state and completion time are kept for the run's
/// metrics (about 1.7 KB per stream for both ends), so 100 000 streams need ~170 MB; the
/// per-packet work does not depend on it (`quic::streams::StreamTable`).
pub const MAX_STREAMS: u64 = 100_000;

/// `streams` within [1, [`MAX_STREAMS`]].
pub fn check_streams(streams: u64) -> Result<(), (&'static str, String, String)> {
    if streams == 0 || streams > MAX_STREAMS {
        return Err((
            "streams",
            streams.to_string(),
            format!("a number of streams in [1, {MAX_STREAMS}]"),
        ));
    }
    Ok(())
}

impl ReconnectsSpec {
    /// Checks the values. The error is `(field, value, allowed)`.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        check_streams(self.streams)?;
        if self.reconnections > MAX_RECONNECTIONS {
            return Err((
                "reconnections",
                self.reconnections.to_string(),
                format!("an integer in [0, {MAX_RECONNECTIONS}]"),
            ));
        }
        Ok(())
    }
}
