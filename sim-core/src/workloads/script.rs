//! A scripted stream transport for the workloads' unit tests: the workloads need nothing
//! but the stream-transport interface, so they are tested against this instead of a
//! protocol.

use crate::time::{SimDuration, SimTime};
use crate::transport::stream::{Side, StreamEvent, StreamId, StreamReadState, StreamTransport};

/// Streams numbered 0, 1, 2, ... per side (`2k` client, `2k + 1` server, as HTTP/2
/// would with its own offset); a stream limit; writes recorded.
pub(crate) struct Script {
    /// The side the workload runs on.
    pub side: Side,
    /// The peer's stream limit.
    pub limit: u64,
    /// Streams opened so far.
    pub opened: u64,
    /// Every write: stream, length, FIN.
    pub writes: Vec<(StreamId, u64, bool)>,
    /// Bytes read per stream, as `stream_read_state` reports them.
    pub read: Vec<(StreamId, u64)>,
    /// The smoothed RTT reported.
    pub srtt: SimDuration,
}

impl StreamTransport for Script {
    fn side(&self) -> Side {
        self.side
    }
    fn take_events(&mut self) -> Vec<StreamEvent> {
        Vec::new()
    }
    fn open_stream(&mut self) -> Option<StreamId> {
        (self.opened < self.limit).then(|| {
            self.opened += 1;
            self.stream_id(self.side, self.opened - 1)
        })
    }
    fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        self.writes.push((id, len, fin));
    }
    fn stream_index(&self, id: StreamId) -> u64 {
        id / 2
    }
    fn stream_id(&self, side: Side, index: u64) -> StreamId {
        2 * index + u64::from(side == Side::Server)
    }
    fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        let &(_, read) = self.read.iter().find(|r| r.0 == id)?;
        Some(StreamReadState {
            read,
            ..StreamReadState::default()
        })
    }
    fn read(&mut self, _now: SimTime, _id: StreamId, _max: u64) -> u64 {
        0
    }
    fn next_readable(&self, _after: Option<StreamId>) -> Option<(StreamId, u64)> {
        None
    }
    fn close(&mut self, _now: SimTime) {}
    fn is_closed(&self) -> bool {
        false
    }
    fn is_terminated(&self) -> bool {
        false
    }
    fn is_handshake_confirmed(&self) -> bool {
        true
    }
    fn is_resumed(&self) -> bool {
        false
    }
    fn cwnd(&self) -> u64 {
        0
    }
    fn smoothed_rtt(&self) -> SimDuration {
        self.srtt
    }
}

/// A scripted transport on `side` whose peer allows `limit` streams.
pub(crate) fn script(side: Side, limit: u64) -> Script {
    Script {
        side,
        limit,
        opened: 0,
        writes: Vec::new(),
        read: Vec::new(),
        srtt: SimDuration::ZERO,
    }
}
