//! Workload `video`: paper 003's streaming with a seek. The client fetches the video in
//! segments, one request stream per segment and one request at a time (as DASH / HLS
//! players fetch over HTTP), into a playout buffer; the server answers each request with
//! the segment of the rendition the request names.
//!
//! - **Requests**: the next segment is requested when the previous one was read and the
//!   buffer ahead of playback is at most `buffer − segment` (so it never holds more than
//!   `buffer`); a player waiting to start or stalled requests at once.
//! - **Quality** (paper 003): chosen per request by the measured delay (an estimate of the
//!   one-way link delay the paper varies): below `fhd_delay` (100 ms) QHD, up to
//!   `hd_delay` (200 ms) FHD, above HD. The delay is the transport's smoothed RTT / 2
//!   (`delay_estimate = "smoothed_rtt"`) or the player's own measure (`"request"`): half
//!   the time from its latest request to that response's first byte, the first request
//!   (unmeasured) at HD. The request names the rendition: its length is `request_size` +
//!   the rendition's index (0 HD, 1 FHD, 2 QHD), which is how the server, which sees only
//!   byte counts, learns it.
//! - **Playback** starts once `startup` is buffered ahead (or the rest of the video) and
//!   advances in real time; when the buffer runs dry it stalls (a rebuffering) and resumes
//!   once `startup` is buffered again.
//! - **Seek** at `seek_at` (from the connection start) or `seek_after_playback` (from the
//!   start of playback), later by a uniform offset in `[0, seek_jitter)` drawn from the
//!   run's stream `flow<i>/video/seek`, to `seek_to`: playback jumps to the start of the
//!   segment holding `seek_to` (players seek to a key frame; segments start with one), the
//!   buffer is flushed, a request in flight is abandoned (its response still arrives and
//!   is discarded: the transports have no stream reset) and requests restart at the seek
//!   position. The loading delay is from the seek to playback resumed. A `seek_at` that
//!   comes before playback started restarts the startup at the seek position: that is a
//!   cold start, not a seek during playback, so the report flags it
//!   (`seek_before_playback`) and gives no loading delay.
//! - The client closes the connection when playback reaches the end (it is then done);
//!   the server is done when the connection closes.
//! - **Reconnections** (`reconnections` > 0): at an address change the connection cannot
//!   follow, the endpoint replaces it ([`AppEndpoint::reconnecting`]) and the player asks
//!   the new connection for the rest of the segment in flight (an HTTP `Range: bytes=N-`
//!   request, RFC 9110 §14.2, as ExoPlayer resumes an interrupted chunk load from the
//!   position it reached). The rest request names the rendition plus 3, and the server
//!   reads its size from the [`RestRequests`] it shares with the client (the simulator
//!   carries sizes, not contents).

use crate::config::workload::{DelayEstimate, VideoSpec, VIDEO_QUALITIES};
use crate::driver::TransportDriver;
use crate::metrics::workload::{SegmentReport, VideoReport, WorkloadMetrics};
use crate::packet::{Addr, FlowId};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use crate::transport::stream::{AppReader, Side, StreamEvent, StreamId, StreamTransport};
use crate::workloads::endpoint::{AppEndpoint, Workload};
use crate::workloads::reader::Reader;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The rest of an interrupted segment each replacement connection asks for first, by
/// connection number, shared by a video's client and server (the request's `Range`).
#[derive(Clone, Debug, Default)]
pub struct RestRequests(Rc<RefCell<BTreeMap<u64, u64>>>);

/// Request-size code of a rest request: rendition index + this.
const REST_CODE: u64 = 3;

/// The player's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the startup threshold before first playback.
    Startup,
    /// Playing.
    Playing,
    /// The buffer ran dry at this time (a rebuffering).
    Stalled(SimTime),
    /// Loading after a seek.
    Seeking,
    /// Playback reached the end.
    Ended,
}

/// One segment request (client).
#[derive(Clone, Debug)]
struct Segment {
    index: u64,
    quality: usize,
    delay: SimDuration,
    request: SimTime,
    complete: Option<SimTime>,
    abandoned: bool,
}

/// The `video` workload state of one connection (either side).
#[derive(Clone, Debug)]
pub struct Video {
    spec: VideoSpec,
    reader: Reader,
    start: SimTime,
    connected: bool,
    phase: Phase,
    /// Playback position at `at`.
    pos: SimDuration,
    at: SimTime,
    /// End of the contiguous buffered video (from `pos`).
    buffered: SimDuration,
    next_segment: u64,
    /// The request in flight: stream and its entry in `segments`.
    in_flight: Option<(StreamId, usize)>,
    /// The peer's stream limit refused the last request (retried at `StreamsAvailable`).
    stream_blocked: bool,
    segments: Vec<Segment>,
    seek_pending: bool,
    /// The seek's random offset (`seek_jitter`), drawn when the workload is built.
    seek_offset: SimDuration,
    /// When playback first started.
    playback_start: Option<SimTime>,
    seek_time: Option<SimTime>,
    /// The seek came before playback had started.
    seek_before_playback: bool,
    /// Client: the player's latest request-to-first-byte time (`delay_estimate =
    /// "request"`).
    request_rtt: Option<SimDuration>,
    /// Client: the in-flight request's first byte has been seen.
    first_byte_seen: bool,
    /// Client: the next segment request is the first after a seek (`seek_quality`).
    after_seek: bool,
    seek_loading_from: Option<SimTime>,
    seek_loading: Option<SimDuration>,
    startup_delay: Option<SimDuration>,
    rebuffer_count: u64,
    rebuffer_time: SimDuration,
    playback_end: Option<SimTime>,
    completed_at: Option<SimTime>,
    /// The ranges asked for after reconnections (shared with the peer).
    rest: RestRequests,
    /// This side's connection number (reconnections).
    conn_number: u64,
    /// Client: the segment (entry in `segments`) whose rest is to be requested on the new
    /// connection.
    resume: Option<usize>,
    /// Client: bytes of the segments read completely (read progress).
    completed_bytes: u64,
    /// Client: response bytes the request in flight asked for.
    in_flight_size: u64,
}

impl Video {
    /// A player (client) or segment server for `spec` (checked with
    /// [`VideoSpec::validate`]); reads at once.
    pub fn new(spec: VideoSpec) -> Self {
        let seek_pending = spec.seek_at.is_some() || spec.seek_after_playback.is_some();
        Video {
            spec,
            reader: Reader::immediate(),
            start: SimTime::ZERO,
            connected: false,
            phase: Phase::Startup,
            pos: SimDuration::ZERO,
            at: SimTime::ZERO,
            buffered: SimDuration::ZERO,
            next_segment: 0,
            in_flight: None,
            stream_blocked: false,
            segments: Vec::new(),
            seek_pending,
            seek_offset: SimDuration::ZERO,
            playback_start: None,
            seek_time: None,
            seek_before_playback: false,
            request_rtt: None,
            first_byte_seen: false,
            after_seek: false,
            seek_loading_from: None,
            seek_loading: None,
            startup_delay: None,
            rebuffer_count: 0,
            rebuffer_time: SimDuration::ZERO,
            playback_end: None,
            completed_at: None,
            rest: RestRequests::default(),
            conn_number: 0,
            resume: None,
            completed_bytes: 0,
            in_flight_size: 0,
        }
    }

    /// Draws the seek's offset, uniform in `[0, seek_jitter)`, from `rng` (one draw;
    /// none without `seek_jitter`).
    pub fn with_seek_rng(mut self, rng: &mut RngStream) -> Self {
        if let Some(j) = self.spec.seek_jitter {
            self.seek_offset = SimDuration(libm::floor(rng.uniform() * j.0 as f64) as u64);
        }
        self
    }

    /// The seek's random offset (zero without `seek_jitter`).
    pub fn seek_offset(&self) -> SimDuration {
        self.seek_offset
    }

    /// Shares `rest` with the peer (a reconnecting video's client and server).
    pub fn with_rest_requests(mut self, rest: RestRequests) -> Self {
        self.rest = rest;
        self
    }

    /// Video buffered ahead of the playback position (at the last update).
    pub fn buffer_level(&self) -> SimDuration {
        self.buffered.saturating_sub(self.pos)
    }

    /// Playback position at the last update.
    pub fn position(&self) -> SimDuration {
        self.pos
    }

    /// Advances playback to `now`: a playing player consumes its buffer, stalls when it
    /// runs dry, ends at the end of the video.
    fn advance(&mut self, now: SimTime) {
        if self.phase == Phase::Playing {
            let elapsed = now.saturating_since(self.at);
            let level = self.buffer_level();
            if elapsed >= level {
                self.pos = self.buffered;
                let when = self.at + level;
                if self.pos >= self.spec.length {
                    self.phase = Phase::Ended;
                    self.playback_end = Some(when);
                } else {
                    self.phase = Phase::Stalled(when);
                    self.rebuffer_count += 1;
                }
            } else {
                self.pos += elapsed;
            }
        }
        self.at = now;
    }

    /// Requests the next segment if the buffer has room and nothing is in flight.
    fn maybe_request<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T) {
        if !self.connected || self.in_flight.is_some() || self.phase == Phase::Ended {
            return;
        }
        if let Some(k) = self.resume {
            // The rest of the segment the previous connection was fetching.
            let Some(id) = t.open_stream() else {
                self.stream_blocked = true;
                return;
            };
            self.stream_blocked = false;
            self.resume = None;
            let q = self.segments[k].quality;
            t.write(id, self.spec.request_size + REST_CODE + q as u64, true);
            self.in_flight = Some((id, k));
            // Its first byte is no fresh round-trip measure of the segment's request.
            self.first_byte_seen = true;
            let rest = self.rest.0.borrow().get(&self.conn_number).copied();
            self.in_flight_size = rest.unwrap_or_else(|| self.spec.segment_bytes(q));
            return;
        }
        if self.next_segment >= self.spec.segments() {
            return;
        }
        if self.buffer_level() + self.spec.segment > self.spec.buffer {
            return;
        }
        let (delay, quality) = match self.spec.delay_estimate {
            DelayEstimate::SmoothedRtt => {
                let d = SimDuration(t.smoothed_rtt().0 / 2);
                (d, self.spec.quality_for(d))
            }
            // Unmeasured: the lowest rendition.
            DelayEstimate::Request => match self.request_rtt {
                Some(r) => {
                    let d = SimDuration(r.0 / 2);
                    (d, self.spec.quality_for(d))
                }
                None => (SimDuration::ZERO, 0),
            },
        };
        // The first segment after a seek at the seek rendition, if one is set.
        let quality = match (self.after_seek, self.spec.seek_quality) {
            (true, Some(q)) => q.index(),
            _ => quality,
        };
        let Some(id) = t.open_stream() else {
            self.stream_blocked = true;
            return;
        };
        self.stream_blocked = false;
        self.after_seek = false;
        t.write(id, self.spec.request_size + quality as u64, true);
        self.segments.push(Segment {
            index: self.next_segment,
            quality,
            delay,
            request: now,
            complete: None,
            abandoned: false,
        });
        self.in_flight = Some((id, self.segments.len() - 1));
        self.in_flight_size = self.spec.segment_bytes(quality);
        self.first_byte_seen = false;
        self.next_segment += 1;
    }

    /// Playback starts or resumes if enough is buffered.
    fn maybe_play(&mut self, now: SimTime) {
        let waiting = matches!(
            self.phase,
            Phase::Startup | Phase::Stalled(_) | Phase::Seeking
        );
        if !waiting {
            return;
        }
        let enough = self.buffer_level() >= self.spec.startup || self.buffered >= self.spec.length;
        if !enough {
            return;
        }
        match self.phase {
            Phase::Startup => {
                self.startup_delay = Some(now.saturating_since(self.start));
                self.playback_start = Some(now);
            }
            Phase::Stalled(since) => self.rebuffer_time += now.saturating_since(since),
            _ => {}
        }
        if let Some(from) = self.seek_loading_from.take() {
            self.seek_loading = Some(now.saturating_since(from));
        }
        self.phase = Phase::Playing;
        self.at = now;
    }

    fn seek_due(&self) -> Option<SimTime> {
        if !self.seek_pending {
            return None;
        }
        let base = match (self.spec.seek_at, self.spec.seek_after_playback) {
            (Some(d), _) => self.start.saturating_add(d),
            // Not before playback started.
            (None, Some(d)) => self.playback_start?.saturating_add(d),
            (None, None) => return None,
        };
        Some(base.saturating_add(self.seek_offset))
    }

    /// The seek: flush, jump, restart the requests.
    fn seek<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T) {
        self.seek_pending = false;
        if self.phase == Phase::Ended {
            return;
        }
        if let Phase::Stalled(since) = self.phase {
            self.rebuffer_time += now.saturating_since(since);
        }
        let to = self.spec.seek_to.unwrap_or_default();
        let seg = self.spec.segment.0;
        self.pos = SimDuration(to.0 / seg * seg);
        self.buffered = self.pos;
        self.next_segment = to.0 / seg;
        if let Some((_, k)) = self.in_flight.take() {
            self.segments[k].abandoned = true;
        }
        if let Some(k) = self.resume.take() {
            // Its rest was not asked for yet: nothing more to discard.
            self.segments[k].abandoned = true;
        }
        if self.phase == Phase::Startup {
            // Playback never started: the startup restarts at the seek position. A cold
            // start, not a seek during playback: flagged, and no loading delay.
            self.seek_before_playback = true;
        } else {
            self.phase = Phase::Seeking;
            self.seek_loading_from = Some(now);
        }
        self.seek_time = Some(now);
        self.after_seek = true;
        self.at = now;
        self.maybe_request(now, t);
    }

    fn end<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T) {
        if self.phase == Phase::Ended && self.completed_at.is_none() {
            self.completed_at = Some(now);
            t.close(now);
        }
    }

    /// The client's report, times relative to `start`, an unfinished stall counted up to
    /// `now`.
    pub fn video_report(&self, start: SimTime, now: SimTime) -> VideoReport {
        let rel = |t: SimTime| t.saturating_since(start).as_secs_f64();
        let mut rebuffer = self.rebuffer_time;
        if let Phase::Stalled(since) = self.phase {
            rebuffer += now.saturating_since(since);
        }
        VideoReport {
            startup_delay_secs: self.startup_delay.map(|d| d.as_secs_f64()),
            seek_secs: self.seek_time.map(rel),
            seek_loading_delay_secs: self.seek_loading.map(|d| d.as_secs_f64()),
            seek_before_playback: u64::from(self.seek_before_playback),
            rebuffer_count: self.rebuffer_count,
            rebuffer_secs: rebuffer.as_secs_f64(),
            playback_end_secs: self.playback_end.map(rel),
            segments: self
                .segments
                .iter()
                .map(|s| SegmentReport {
                    index: s.index,
                    quality: VIDEO_QUALITIES[s.quality].to_string(),
                    bytes: self.spec.segment_bytes(s.quality),
                    delay_secs: s.delay.as_secs_f64(),
                    request_secs: rel(s.request),
                    complete_secs: s.complete.map(rel),
                    abandoned: s.abandoned,
                })
                .collect(),
        }
    }
}

/// The name of flow `flow`'s random stream for its seek offset (`seek_jitter`).
pub fn seek_stream_name(flow: FlowId) -> String {
    format!("flow{flow}/video/seek")
}

/// The client and server endpoints of a `video` flow over transport `T` (connections not
/// started), the seek's offset drawn from the run's (`seed`) stream
/// [`seek_stream_name`]. Every transport's arm in [`crate::flows`] is this call.
pub fn endpoints<T: TransportDriver>(
    client: T,
    server: T,
    spec: &VideoSpec,
    client_addr: Addr,
    server_addr: Addr,
    flow: FlowId,
    seed: u64,
) -> (AppEndpoint<T, Video>, AppEndpoint<T, Video>) {
    let rest = RestRequests::default();
    let mut rng = RngStream::derive(seed, &seek_stream_name(flow));
    (
        AppEndpoint::new(
            client,
            Video::new(spec.clone())
                .with_rest_requests(rest.clone())
                .with_seek_rng(&mut rng),
            client_addr,
            server_addr,
            flow,
        ),
        AppEndpoint::new(
            server,
            Video::new(spec.clone()).with_rest_requests(rest),
            server_addr,
            client_addr,
            flow,
        ),
    )
}

impl Workload for Video {
    fn on_start(&mut self, now: SimTime) {
        self.start = now;
        self.at = now;
    }

    fn on_event<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T, ev: StreamEvent) {
        match (t.side(), ev) {
            (Side::Client, StreamEvent::Connected | StreamEvent::EarlyDataReady) => {
                self.connected = true;
                self.advance(now);
                self.maybe_request(now, t);
            }
            (Side::Client, StreamEvent::StreamsAvailable) => {
                self.stream_blocked = false;
                self.advance(now);
                self.maybe_request(now, t);
            }
            (Side::Client, StreamEvent::ReadComplete(id)) => {
                let Some((_, k)) = self.in_flight.filter(|&(s, _)| s == id) else {
                    return; // an abandoned request's response
                };
                self.in_flight = None;
                self.advance(now);
                self.segments[k].complete = Some(now);
                self.completed_bytes += self.spec.segment_bytes(self.segments[k].quality);
                let seg = self.spec.segment;
                self.buffered = SimDuration((self.segments[k].index + 1) * seg.0);
                self.maybe_play(now);
                self.maybe_request(now, t);
            }
            (Side::Server, StreamEvent::ReadComplete(id)) => {
                let read = t.stream_read_state(id).map_or(0, |s| s.read);
                let code = read.saturating_sub(self.spec.request_size);
                let bytes = if code >= REST_CODE {
                    // A rest request: the range the client asked this connection for.
                    let q = (code - REST_CODE).min(2) as usize;
                    let rest = self.rest.0.borrow().get(&self.conn_number).copied();
                    rest.unwrap_or_else(|| self.spec.segment_bytes(q))
                } else {
                    self.spec.segment_bytes(code.min(2) as usize)
                };
                t.write(id, bytes, true);
            }
            (Side::Server, StreamEvent::Closed(_)) => {
                self.completed_at.get_or_insert(now);
            }
            _ => {}
        }
    }

    fn wake_at(&self) -> Option<SimTime> {
        let mut w = self.seek_due();
        if self.phase == Phase::Playing {
            let level = self.buffer_level();
            let times = [
                // Playback ends (everything buffered) or the next request is due.
                (self.buffered >= self.spec.length).then(|| self.at + level),
                (self.connected
                    && !self.stream_blocked
                    && self.in_flight.is_none()
                    && self.next_segment < self.spec.segments())
                .then(|| {
                    let room = self.spec.buffer - self.spec.segment;
                    self.at + level.saturating_sub(room)
                }),
            ];
            for t in times.into_iter().flatten() {
                w = Some(w.map_or(t, |x| x.min(t)));
            }
        }
        w
    }

    fn on_wake<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T) {
        if t.side() != Side::Client {
            // The server neither plays nor seeks.
            self.seek_pending = false;
            return;
        }
        self.advance(now);
        if self.seek_due().is_some_and(|s| s <= now) {
            self.seek(now, t);
        }
        self.maybe_request(now, t);
        self.end(now, t);
    }

    fn completed_at(&self) -> Option<SimTime> {
        self.completed_at
    }

    fn report(&self, start: SimTime, now: SimTime, m: &mut WorkloadMetrics) {
        if self.spec.segments() > 0 && (self.connected || !self.segments.is_empty()) {
            m.video = Some(self.video_report(start, now));
        }
    }

    /// The request in flight on `old` (or whose rest was still to be asked for) is asked
    /// for again on connection `k`: the bytes not yet read.
    fn on_reconnect<T: StreamTransport + ?Sized>(&mut self, _now: SimTime, k: u64, old: &T) {
        self.connected = false;
        self.stream_blocked = false;
        self.conn_number = k;
        let missing = match (self.in_flight.take(), self.resume) {
            (Some((id, seg)), _) => {
                let read = old.stream_read_state(id).map_or(0, |s| s.read);
                self.resume = Some(seg);
                Some(self.in_flight_size.saturating_sub(read))
            }
            (None, Some(seg)) => {
                let prev = self.rest.0.borrow().get(&(k - 1)).copied();
                prev.or(Some(self.spec.segment_bytes(self.segments[seg].quality)))
            }
            (None, None) => None,
        };
        if let Some(bytes) = missing {
            self.rest.0.borrow_mut().insert(k, bytes);
        }
    }

    fn on_accept(&mut self, k: u64) {
        self.conn_number = k;
    }

    /// The in-flight response's first bytes read: one application round trip since its
    /// request (the player's delay measure, `delay_estimate = "request"`).
    fn on_datagram<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &T) {
        if self.first_byte_seen || t.side() != Side::Client {
            return;
        }
        let Some((id, k)) = self.in_flight else {
            return;
        };
        if t.stream_read_state(id).is_some_and(|s| s.read > 0) {
            self.first_byte_seen = true;
            self.request_rtt = Some(now.saturating_since(self.segments[k].request));
        }
    }

    fn read_progress<T: StreamTransport + ?Sized>(&self, t: &T) -> u64 {
        let in_flight = self
            .in_flight
            .and_then(|(id, _)| t.stream_read_state(id))
            .map_or(0, |s| s.read);
        self.completed_bytes + in_flight
    }
}

/// The workload reads through its [`Reader`].
impl AppReader for Video {
    fn on_readable(&mut self, now: SimTime, t: &mut dyn StreamTransport, id: StreamId) {
        self.reader.on_readable(now, t, id);
    }

    fn deadline(&self) -> Option<SimTime> {
        self.reader.deadline()
    }

    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport) {
        self.reader.on_deadline(now, t);
    }

    fn reads_at_once(&self) -> bool {
        self.reader.reads_at_once()
    }
}

#[cfg(test)]
mod tests {
    //! `Video` against the scripted transport: requests, quality, playback, stalls, seek.

    use super::*;
    use crate::workloads::script::script;

    fn t(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn spec() -> VideoSpec {
        VideoSpec {
            length: SimDuration::from_secs(20),
            segment: SimDuration::from_secs(2),
            buffer: SimDuration::from_secs(6),
            startup: SimDuration::from_secs(2),
            ..VideoSpec::default()
        }
    }

    #[test]
    fn quality_thresholds_are_paper_003s() {
        let s = VideoSpec::default();
        let q = |ms| VIDEO_QUALITIES[s.quality_for(SimDuration::from_millis(ms))];
        assert_eq!(
            [q(0), q(99), q(100), q(200), q(201)],
            ["qhd", "qhd", "fhd", "fhd", "hd"]
        );
        // 8 Mbit/s x 4 s = 4 MB.
        assert_eq!(s.segment_bytes(1), 4_000_000);
    }

    #[test]
    fn playback_starts_stalls_and_resumes_by_the_buffer() {
        let mut v = Video::new(spec());
        let mut c = script(Side::Client, 100);
        c.srtt = SimDuration::from_millis(300); // 150 ms one way: FHD
        v.on_start(t(0));
        v.on_event(t(100), &mut c, StreamEvent::Connected);
        assert_eq!(
            c.writes,
            [(0, 101, true)],
            "one request at a time, naming FHD"
        );
        v.on_event(t(1000), &mut c, StreamEvent::ReadComplete(0));
        assert_eq!(
            v.startup_delay,
            Some(SimDuration::from_secs(1)),
            "2 s buffered = startup"
        );
        assert_eq!(c.writes.len(), 2, "room for more: the next request at once");
        // Segment 1 arrives at 2.5 s: playback (started at 1 s) ran dry at 3 s? No: at
        // 2.5 s it is at 1.5 s of 2 s buffered, so no stall; buffer 2.5 s.
        v.on_event(t(2500), &mut c, StreamEvent::ReadComplete(2));
        assert_eq!(v.rebuffer_count, 0);
        assert_eq!(v.buffer_level(), SimDuration::from_millis(2500));
        // Segment 2 arrives late, at 6 s: the buffer ran dry at 5 s.
        v.on_event(t(6000), &mut c, StreamEvent::ReadComplete(4));
        assert_eq!(v.rebuffer_count, 1);
        assert_eq!(
            v.rebuffer_time,
            SimDuration::from_secs(1),
            "stalled 5 s .. 6 s"
        );
        assert_eq!(v.phase, Phase::Playing, "2 s buffered again: resumed");
    }

    #[test]
    fn requests_wait_for_buffer_room() {
        let mut v = Video::new(spec());
        let mut c = script(Side::Client, 100);
        v.on_start(t(0));
        v.on_event(t(0), &mut c, StreamEvent::Connected);
        for k in 0..3 {
            v.on_event(t(10 * (k + 1)), &mut c, StreamEvent::ReadComplete(2 * k));
        }
        // 6 s buffered (the target): no fourth request until 2 s have played.
        assert_eq!(c.writes.len(), 3);
        let wake = v.wake_at().expect("the next request's time");
        assert_eq!(
            wake,
            t(30) + SimDuration::from_secs(2) - SimDuration::from_millis(20)
        );
        v.on_wake(wake, &mut c);
        assert_eq!(c.writes.len(), 4);
    }

    #[test]
    fn a_seek_flushes_and_restarts_at_the_segment_of_the_position() {
        let mut s = spec();
        s.seek_at = Some(SimDuration::from_secs(3));
        s.seek_to = Some(SimDuration::from_secs(13));
        let mut v = Video::new(s);
        let mut c = script(Side::Client, 100);
        v.on_start(t(0));
        v.on_event(t(0), &mut c, StreamEvent::Connected);
        v.on_event(t(500), &mut c, StreamEvent::ReadComplete(0));
        assert_eq!(v.wake_at(), Some(t(3000)), "the seek");
        v.on_wake(t(3000), &mut c);
        assert_eq!(v.position(), SimDuration::from_secs(12));
        assert_eq!(v.buffer_level(), SimDuration::ZERO);
        // Segment 1's request (stream 2) was abandoned; segment 6 requested on stream 4.
        assert_eq!(c.writes.last(), Some(&(4, 102, true)));
        v.on_event(t(3100), &mut c, StreamEvent::ReadComplete(2));
        assert_eq!(
            v.phase,
            Phase::Seeking,
            "an abandoned response is discarded"
        );
        v.on_event(t(3400), &mut c, StreamEvent::ReadComplete(4));
        assert_eq!(v.seek_loading, Some(SimDuration::from_millis(400)));
        let r = v.video_report(t(0), t(3400));
        assert!(r.segments[1].abandoned && !r.segments[2].abandoned);
        assert_eq!(r.segments[2].index, 6);
    }

    #[test]
    fn a_seek_before_playback_is_flagged_and_has_no_loading_delay() {
        // The seek at 0.5 s comes before the first segment arrived: a cold start.
        let mut s = spec();
        s.seek_at = Some(SimDuration::from_millis(500));
        s.seek_to = Some(SimDuration::from_secs(13));
        let mut v = Video::new(s);
        let mut c = script(Side::Client, 100);
        v.on_start(t(0));
        v.on_event(t(0), &mut c, StreamEvent::Connected);
        v.on_wake(t(500), &mut c);
        assert_eq!(v.position(), SimDuration::from_secs(12));
        v.on_event(t(900), &mut c, StreamEvent::ReadComplete(2));
        let r = v.video_report(t(0), t(900));
        assert_eq!(r.seek_before_playback, 1);
        assert_eq!(
            r.seek_loading_delay_secs, None,
            "no loading delay for a cold start"
        );
        assert_eq!(r.startup_delay_secs, Some(0.9));
        assert_eq!(r.seek_secs, Some(0.5));
    }

    #[test]
    fn seek_after_playback_waits_for_playback_and_adds_the_offset() {
        let mut s = spec();
        s.seek_after_playback = Some(SimDuration::from_secs(2));
        s.seek_jitter = Some(SimDuration::from_secs(2));
        s.seek_to = Some(SimDuration::from_secs(13));
        let mut rng = RngStream::derive(7, &seek_stream_name(0));
        let mut v = Video::new(s.clone()).with_seek_rng(&mut rng);
        let offset = v.seek_offset();
        assert!(offset < SimDuration::from_secs(2));
        let again = Video::new(s).with_seek_rng(&mut RngStream::derive(7, &seek_stream_name(0)));
        assert_eq!(
            again.seek_offset(),
            offset,
            "same seed and flow, same offset"
        );
        let mut c = script(Side::Client, 100);
        v.on_start(t(0));
        v.on_event(t(0), &mut c, StreamEvent::Connected);
        assert_eq!(v.wake_at(), None, "no seek before playback started");
        v.on_event(t(1500), &mut c, StreamEvent::ReadComplete(0));
        assert_eq!(v.phase, Phase::Playing);
        let due = t(1500) + SimDuration::from_secs(2) + offset;
        assert_eq!(v.seek_due(), Some(due));
        v.on_wake(due, &mut c);
        assert_eq!(v.phase, Phase::Seeking);
        let r = v.video_report(t(0), due);
        assert_eq!(r.seek_before_playback, 0);
    }

    #[test]
    fn the_first_segment_after_a_seek_is_at_the_seek_rendition() {
        let mut s = spec();
        s.seek_at = Some(SimDuration::from_secs(3));
        s.seek_to = Some(SimDuration::from_secs(13));
        s.seek_quality = Some(crate::config::workload::Rendition::Hd);
        let mut v = Video::new(s);
        let mut c = script(Side::Client, 100);
        c.srtt = SimDuration::from_millis(20); // QHD by the delay rule
        v.on_start(t(0));
        v.on_event(t(0), &mut c, StreamEvent::Connected);
        v.on_event(t(500), &mut c, StreamEvent::ReadComplete(0));
        assert_eq!(c.writes[0], (0, 102, true));
        v.on_wake(t(3000), &mut c);
        assert_eq!(c.writes.last(), Some(&(4, 100, true)), "after the seek: HD");
        v.on_event(t(3400), &mut c, StreamEvent::ReadComplete(4));
        assert_eq!(
            c.writes.last(),
            Some(&(6, 102, true)),
            "then the delay rule"
        );
    }

    #[test]
    fn the_players_own_delay_measure_starts_at_hd() {
        let mut s = spec();
        s.delay_estimate = DelayEstimate::Request;
        let mut v = Video::new(s);
        let mut c = script(Side::Client, 100);
        c.srtt = SimDuration::from_secs(1); // what a transport without a sample reports
        v.on_start(t(0));
        v.on_event(t(100), &mut c, StreamEvent::Connected);
        assert_eq!(c.writes, [(0, 100, true)], "unmeasured: HD");
        // First bytes read 60 ms after the request: 30 ms one way, QHD next.
        v.on_datagram(t(150), &c);
        c.read = vec![(0, 1200)];
        v.on_datagram(t(160), &c);
        c.read = vec![(0, 2400)];
        v.on_datagram(t(300), &c);
        assert_eq!(v.request_rtt, Some(SimDuration::from_millis(60)));
        v.on_event(t(900), &mut c, StreamEvent::ReadComplete(0));
        assert_eq!(c.writes[1], (2, 102, true), "measured 30 ms: QHD");
    }

    #[test]
    fn the_server_answers_the_rendition_the_request_names() {
        let mut v = Video::new(spec());
        let mut srv = script(Side::Server, 0);
        srv.read = vec![(0, 100), (2, 102)];
        v.on_event(t(0), &mut srv, StreamEvent::ReadComplete(0));
        v.on_event(t(0), &mut srv, StreamEvent::ReadComplete(2));
        let s = spec();
        assert_eq!(
            srv.writes,
            [(0, s.segment_bytes(0), true), (2, s.segment_bytes(2), true)]
        );
        assert_eq!(v.wake_at(), None);
        v.on_event(
            t(9),
            &mut srv,
            StreamEvent::Closed(crate::transport::stream::CloseKind::PeerClose),
        );
        assert_eq!(Workload::completed_at(&v), Some(t(9)));
    }
}
