//! The HTTP/2-style multiplexer over the one TCP byte stream (RFC 9113): each stream's
//! bytes travel as DATA frames (9-byte frame header, RFC 9113 §4.1; at most
//! `frame_size` payload bytes, §6.5.2), one frame per TLS record, interleaved round robin
//! over the streams with data to send. Frames are cut lazily, when the TCP sender needs
//! more bytes, as an HTTP/2 server writes into its socket buffer on demand.
//!
//! The receiver sees a frame only when the byte stream is in order up to its end (a TLS
//! record is decrypted whole), so one lost segment holds back every frame behind it,
//! whatever its stream: head-of-line blocking.
//!
//! Not modelled: HEADERS frames (a request or response is DATA only), SETTINGS,
//! WINDOW_UPDATE (no per-stream flow control: the TCP receive window is the only limit),
//! priorities.

use crate::transport::stream::StreamId;
use crate::wire::tcp::{Record, RecordKind};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// HTTP/2 frame header (RFC 9113 §4.1): length 3, type 1, flags 1, stream 4.
pub const FRAME_HEADER_LEN: u64 = 9;

#[derive(Clone, Debug, Default)]
struct SendStream {
    /// Written, not yet framed.
    pending: u64,
    /// A FIN was written.
    fin: bool,
    /// The frame with END_STREAM was cut; its end offset in the byte stream.
    fin_end: Option<u64>,
    /// In the round-robin queue.
    queued: bool,
    /// SendComplete was reported.
    reported: bool,
}

/// The sending half: per-stream bytes waiting to be framed.
#[derive(Clone, Debug)]
pub struct MuxSend {
    streams: BTreeMap<StreamId, SendStream>,
    ready: VecDeque<StreamId>,
    /// The streams whose END_STREAM frame is cut and not yet reported, by the frame's end
    /// offset: [`MuxSend::completed`] takes those at or below `snd_una` instead of walking
    /// every stream per ACK (issue 15 item 3: cost per packet independent of finished
    /// streams).
    fin_pending: BTreeSet<(u64, StreamId)>,
    frame_size: u64,
    record_overhead: u64,
}

impl MuxSend {
    /// Frames of at most `frame_size` payload bytes, each adding the frame header and
    /// `record_overhead` (TLS) bytes.
    pub fn new(frame_size: u64, record_overhead: u64) -> Self {
        MuxSend {
            streams: BTreeMap::new(),
            ready: VecDeque::new(),
            fin_pending: BTreeSet::new(),
            frame_size,
            record_overhead,
        }
    }

    /// Bytes a frame of `payload` bytes takes on the stream.
    pub fn frame_len(&self, payload: u64) -> u64 {
        FRAME_HEADER_LEN + payload + self.record_overhead
    }

    /// Stream bytes `len` application bytes written with a FIN in one go take when framed
    /// alone: `ceil(len / frame_size)` frames (at least one).
    pub fn framed_len(&self, len: u64) -> u64 {
        let frames = len.div_ceil(self.frame_size).max(1);
        len + frames * (FRAME_HEADER_LEN + self.record_overhead)
    }

    /// Queues `len` bytes (and a FIN) on stream `id`.
    pub fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        let s = self.streams.entry(id).or_default();
        if s.fin {
            return; // nothing after a FIN
        }
        s.pending += len;
        s.fin |= fin;
        if !s.queued && (s.pending > 0 || s.fin) {
            s.queued = true;
            self.ready.push_back(id);
        }
    }

    /// Whether some stream has bytes (or a FIN) to frame.
    pub fn has_pending(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Cuts the next frame, placed at `offset` of the byte stream: the first stream of the
    /// round-robin queue gives up to `frame_size` bytes and goes to the back if it has
    /// more.
    pub fn next_frame(&mut self, offset: u64) -> Option<Record> {
        let id = self.ready.pop_front()?;
        let s = self.streams.get_mut(&id).expect("queued stream exists");
        let payload = s.pending.min(self.frame_size);
        s.pending -= payload;
        let fin = s.fin && s.pending == 0;
        let len = FRAME_HEADER_LEN + payload + self.record_overhead;
        if fin {
            s.fin_end = Some(offset + len);
            self.fin_pending.insert((offset + len, id));
        }
        if s.pending > 0 {
            self.ready.push_back(id);
        } else {
            s.queued = false;
        }
        Some(Record {
            offset,
            len,
            kind: RecordKind::Data {
                stream: id,
                payload,
                fin,
            },
        })
    }

    /// Whether [`MuxSend::completed`] has anything to return at `snd_una`.
    #[inline]
    pub fn completion_due(&self, snd_una: u64) -> bool {
        self.fin_pending
            .first()
            .is_some_and(|&(end, _)| end <= snd_una)
    }

    /// The streams whose END_STREAM frame is now cumulatively acknowledged (`snd_una`),
    /// each reported once, in stream order.
    pub fn completed(&mut self, snd_una: u64) -> Vec<StreamId> {
        let mut out = Vec::new();
        while let Some(&(end, id)) = self.fin_pending.first() {
            if end > snd_una {
                break;
            }
            self.fin_pending.pop_first();
            let s = self.streams.get_mut(&id).expect("a framed stream exists");
            if !s.reported {
                s.reported = true;
                out.push(id);
            }
        }
        // In stream order, as a walk over every stream gave them.
        out.sort_unstable();
        out
    }
}

/// Read progress of one stream at the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvStream {
    /// Application bytes delivered (read at once).
    pub read: u64,
    /// END_STREAM seen.
    pub fin: bool,
}

/// The receiving half: per-stream read progress.
#[derive(Clone, Debug, Default)]
pub struct MuxRecv {
    streams: BTreeMap<StreamId, RecvStream>,
}

/// What one delivered frame meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The first frame of this stream.
    pub new_stream: bool,
    /// The frame carried END_STREAM.
    pub complete: bool,
}

impl MuxRecv {
    /// A DATA frame of `stream` with `payload` bytes was delivered in order.
    pub fn on_frame(&mut self, stream: StreamId, payload: u64, fin: bool) -> Delivered {
        let new_stream = !self.streams.contains_key(&stream);
        let s = self.streams.entry(stream).or_default();
        s.read += payload;
        let complete = fin && !s.fin;
        s.fin |= fin;
        Delivered {
            new_stream,
            complete,
        }
    }

    /// Progress of `stream`, if any frame of it arrived.
    pub fn get(&self, stream: StreamId) -> Option<RecvStream> {
        self.streams.get(&stream).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_interleave_round_robin_and_fin_ends_a_stream() {
        let mut m = MuxSend::new(16_384, 22);
        m.write(1, 20_000, true);
        m.write(3, 100, true);
        let a = m.next_frame(0).unwrap();
        assert_eq!(a.len, 9 + 16_384 + 22);
        let b = m.next_frame(a.end()).unwrap();
        assert_eq!(
            b.kind,
            RecordKind::Data {
                stream: 3,
                payload: 100,
                fin: true
            }
        );
        let c = m.next_frame(b.end()).unwrap();
        assert_eq!(
            c.kind,
            RecordKind::Data {
                stream: 1,
                payload: 20_000 - 16_384,
                fin: true
            }
        );
        assert!(m.next_frame(c.end()).is_none());
        assert_eq!(m.framed_len(20_000), 20_000 + 2 * 31);
        assert_eq!(m.completed(b.end()), vec![3]);
        assert_eq!(m.completed(c.end()), vec![1]);
        assert!(m.completed(c.end()).is_empty(), "reported once");
        // A bare FIN is one empty frame.
        m.write(5, 0, true);
        assert_eq!(m.next_frame(c.end()).unwrap().len, 31);
    }
}
