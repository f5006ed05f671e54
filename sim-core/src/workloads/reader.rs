//! The application reader model ([`Reader`]): when the application consumes in-order
//! received bytes. Protocol-neutral and owned by the workload: it reads through
//! [`StreamTransport::read`] when the transport reports bytes readable and at its own
//! deadline ([`AppReader`], called synchronously by the transport; consumption is what
//! returns receive-window credit).
//!
//! Two behaviours:
//! - **immediate** (no read rate): everything readable is consumed when it becomes
//!   readable ([`Reader::is_immediate`]);
//! - **paced** at a read rate: the reader takes one chunk at a time (at most `chunk`
//!   bytes, round robin over the readable streams in ascending stream order, starting
//!   after the stream it read last) and finishes it `len / rate` later
//!   ([`Reader::deadline`]); then it consumes the chunk and starts the next one.

use crate::time::{SimDuration, SimTime};
use crate::transport::stream::{AppReader, StreamId, StreamTransport};
use crate::units::Rate;

/// A chunk being read: finishes at `until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    until: SimTime,
    id: StreamId,
    len: u64,
}

/// The application reader of one end of a connection.
#[derive(Clone, Debug)]
pub struct Reader {
    /// `None`: reads at once.
    rate: Option<Rate>,
    /// Most bytes one paced read takes.
    chunk: u64,
    /// The chunk being read (paced only).
    busy: Option<Chunk>,
    /// The stream read last (round-robin cursor).
    cursor: Option<StreamId>,
    /// [`AppReader::reads_at_once`] turned off (tests compare the transport's shortcut
    /// with the `Readable` call).
    no_shortcut: bool,
}

impl Reader {
    /// A reader consuming at `rate` (`None`: at once), at most `chunk` bytes per paced
    /// read.
    pub fn new(rate: Option<Rate>, chunk: u64) -> Self {
        Reader {
            rate,
            chunk,
            busy: None,
            cursor: None,
            no_shortcut: false,
        }
    }

    /// The same reader, always called through [`AppReader::on_readable`] (the transport's
    /// shortcut for [`AppReader::reads_at_once`] off: tests compare the two).
    #[cfg(test)]
    pub(crate) fn without_read_shortcut(mut self) -> Self {
        self.no_shortcut = true;
        self
    }

    /// A reader consuming everything readable at once.
    pub fn immediate() -> Self {
        Reader::new(None, 0)
    }

    /// No read rate: everything readable is consumed at once.
    pub fn is_immediate(&self) -> bool {
        self.rate.is_none()
    }

    /// A paced reader that is not reading a chunk now.
    pub fn is_idle(&self) -> bool {
        self.busy.is_none()
    }

    /// When the chunk being read is finished (`None`: no chunk).
    pub fn deadline(&self) -> Option<SimTime> {
        self.busy.map(|c| c.until)
    }

    /// Starts the next chunk, if any stream is readable: `readable` lists
    /// `(stream, readable bytes)` in ascending stream order (streams with nothing
    /// readable may be listed; they are skipped). Does nothing for an immediate reader.
    pub fn start<I>(&mut self, now: SimTime, readable: I)
    where
        I: Iterator<Item = (StreamId, u64)> + Clone,
    {
        let Some(rate) = self.rate else { return };
        let after = self.cursor;
        let pick = readable
            .clone()
            .find(|&(id, n)| n > 0 && after.is_none_or(|c| id > c))
            .or_else(|| readable.clone().find(|&(_, n)| n > 0));
        if let Some((id, n)) = pick {
            let len = n.min(self.chunk);
            let d = rate.tx_time(len).unwrap_or(SimDuration::ZERO);
            self.busy = Some(Chunk {
                until: now + d,
                id,
                len,
            });
            self.cursor = Some(id);
        }
    }

    /// The chunk whose deadline passed: `(stream, bytes)` for the owner to consume (then
    /// it calls [`Reader::start`] again). `None` when no chunk is being read.
    pub fn finish(&mut self) -> Option<(StreamId, u64)> {
        self.busy.take().map(|c| (c.id, c.len))
    }
}

/// Immediate: stream `id` is read to its end at once (an immediate reader leaves nothing
/// readable behind, so `id` is the only stream with readable bytes). Paced: an idle
/// reader starts its next chunk; at the deadline the chunk is consumed and the next one
/// starts.
impl AppReader for Reader {
    fn on_readable(&mut self, now: SimTime, t: &mut dyn StreamTransport, id: StreamId) {
        if self.is_immediate() {
            t.read(now, id, u64::MAX);
        } else if self.is_idle() {
            self.start_next(now, t);
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        Reader::deadline(self)
    }

    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport) {
        if let Some((id, len)) = self.finish() {
            t.read(now, id, len);
            self.start_next(now, t);
        }
    }

    /// Immediate: `on_readable` is that one read.
    fn reads_at_once(&self) -> bool {
        self.is_immediate() && !self.no_shortcut
    }
}

impl Reader {
    /// Starts the next chunk over `t`'s readable streams (round robin after the cursor).
    fn start_next(&mut self, now: SimTime, t: &dyn StreamTransport) {
        let pick = t
            .next_readable(self.cursor)
            .or_else(|| t.next_readable(None));
        self.start(now, pick.into_iter());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(us)
    }

    #[test]
    fn immediate_reader_never_schedules() {
        let mut r = Reader::new(None, 1200);
        assert!(r.is_immediate());
        r.start(at(0), [(0, 5000)].into_iter());
        assert_eq!(r.deadline(), None);
        assert_eq!(r.finish(), None);
    }

    /// 8 Mbit/s reads 1000 B per ms: chunks of at most 1000 B, each finished 1 ms
    /// (scaled by its length) after it started, round robin over the readable streams.
    #[test]
    fn paced_reads_consume_chunks_at_the_rate() {
        let mut r = Reader::new(Some(Rate(8_000_000)), 1000);
        assert!(!r.is_immediate() && r.is_idle());
        // streams 0 and 4 readable (2500 B and 400 B).
        let mut readable = vec![(0u64, 2500u64), (4, 400)];
        let mut now = at(0);
        let mut reads = Vec::new();
        r.start(now, readable.iter().copied());
        while let Some(until) = r.deadline() {
            now = until;
            let (id, len) = r.finish().expect("a chunk");
            reads.push((now, id, len));
            let e = readable.iter_mut().find(|e| e.0 == id).expect("stream");
            e.1 -= len;
            r.start(now, readable.iter().copied());
        }
        assert_eq!(
            reads,
            vec![
                (at(1000), 0, 1000),
                (at(1400), 4, 400),
                (at(2400), 0, 1000),
                (at(2900), 0, 500),
            ]
        );
        assert!(r.is_idle());
        assert_eq!(readable, vec![(0, 0), (4, 0)]);
    }

    #[test]
    fn round_robin_resumes_after_the_last_stream() {
        let mut r = Reader::new(Some(Rate(8_000_000)), 1000);
        r.start(at(0), [(0, 0), (4, 10), (8, 10)].into_iter());
        assert_eq!(r.finish(), Some((4, 10)));
        // stream 0 became readable; the cursor is at 4: 8 goes first, then 0 wraps.
        r.start(at(10), [(0, 10), (4, 0), (8, 10)].into_iter());
        assert_eq!(r.deadline(), Some(at(20)));
        assert_eq!(r.finish(), Some((8, 10)));
        r.start(at(20), [(0, 10), (4, 0), (8, 0)].into_iter());
        assert_eq!(r.finish(), Some((0, 10)));
    }
}
