//! The workload's streams on the connection: HTTP/2 stream IDs (RFC 9113 §5.1.1), opening
//! within `max_concurrent_streams`, writes to the multiplexer, delivery of the received
//! records to TLS or the multiplexer's streams, and the events the workload reads.

use super::TcpConnection;
use crate::time::SimTime;
use crate::trace::{SenderProbe, TraceEvent};
use crate::transport::stream::{Side, StreamEvent, StreamId, StreamReadState};
use crate::wire::tcp::RecordKind;
use std::collections::{BTreeMap, BTreeSet};

/// The streams this side opened and when each stream completed.
#[derive(Debug, Default)]
pub(super) struct Streams {
    /// Index of the next stream this side opens.
    pub(super) next_local: u64,
    /// Streams this side opened and not yet released (read and acknowledged).
    pub(super) open_local: BTreeSet<StreamId>,
    /// When each stream was read up to its FIN.
    pub(super) read_done: BTreeMap<StreamId, SimTime>,
    /// When each stream's FIN was cumulatively acknowledged.
    pub(super) send_done: BTreeMap<StreamId, SimTime>,
    /// An open was refused at `max_concurrent_streams`: the next release is announced.
    pub(super) streams_blocked: bool,
}

impl TcpConnection {
    /// Whether events are pending.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Takes the pending events.
    pub fn take_events(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.events)
    }

    /// HTTP/2 stream ID of the `index`-th stream `side` opens (RFC 9113 §5.1.1: odd for
    /// the client; the server's pushed streams are even).
    pub fn stream_id_of(side: Side, index: u64) -> StreamId {
        match side {
            Side::Client => 2 * index + 1,
            Side::Server => 2 * index + 2,
        }
    }

    /// Opens a stream once connected and below `max_concurrent_streams`.
    pub fn open_stream(&mut self) -> Option<StreamId> {
        if self.connected_at.is_none() || self.close.is_closed() {
            return None;
        }
        if self.streams.open_local.len() as u64 >= self.cfg.max_concurrent_streams {
            self.streams.streams_blocked = true;
            return None;
        }
        let id = Self::stream_id_of(self.side, self.streams.next_local);
        self.streams.next_local += 1;
        self.streams.open_local.insert(id);
        Some(id)
    }

    /// Queues `len` bytes (and a FIN) on stream `id`.
    pub fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        if self.close.is_closed() {
            return;
        }
        self.send.mux.write(id, len, fin);
    }

    /// Hands every record now in order to TLS or the multiplexer.
    pub(super) fn deliver(&mut self, now: SimTime) {
        while let Some(r) = self.rx.next_record() {
            if r.offset != self.rx.delivered_end {
                self.stats.records_out_of_order += 1;
            }
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Delivered {
                    offset: r.offset,
                    len: r.len,
                })
            });
            self.rx.delivered_end = r.end();
            match r.kind {
                RecordKind::Tls(m) => self.on_tls(now, m),
                RecordKind::Data {
                    stream,
                    payload,
                    fin,
                } => {
                    if self.first_byte_at.is_none() && payload > 0 {
                        self.first_byte_at = Some(now);
                    }
                    self.stats.app_bytes_read += payload;
                    let d = self.rx.mux_recv.on_frame(stream, payload, fin);
                    let peer_opened = Self::initiator(stream) != self.side;
                    if d.new_stream && peer_opened {
                        self.events.push(StreamEvent::StreamOpened(stream));
                    }
                    if d.complete {
                        self.streams.read_done.insert(stream, now);
                        self.events.push(StreamEvent::ReadComplete(stream));
                        self.maybe_release(stream);
                    }
                }
            }
        }
    }

    pub(super) fn initiator(id: StreamId) -> Side {
        if id % 2 == 1 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// A locally opened stream is closed once read and acknowledged: it no longer counts
    /// against the concurrency limit.
    pub(super) fn maybe_release(&mut self, id: StreamId) {
        if self.streams.read_done.contains_key(&id)
            && self.streams.send_done.contains_key(&id)
            && self.streams.open_local.remove(&id)
            && self.streams.streams_blocked
        {
            self.streams.streams_blocked = false;
            self.events.push(StreamEvent::StreamsAvailable);
        }
    }

    /// When each stream was read up to its FIN.
    pub fn read_complete_times(&self) -> &BTreeMap<StreamId, SimTime> {
        &self.streams.read_done
    }

    /// When each stream's FIN was cumulatively acknowledged.
    pub fn send_complete_times(&self) -> &BTreeMap<StreamId, SimTime> {
        &self.streams.send_done
    }

    /// Read progress of stream `id`.
    pub fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        self.rx.mux_recv.get(id).map(|s| StreamReadState {
            read: s.read,
            window: self.rx.rcv_wnd,
            window_size: self.rx.rcv_wnd,
        })
    }
}
