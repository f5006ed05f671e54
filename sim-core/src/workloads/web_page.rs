//! Workload `web_page`: a page of objects with dependencies, each object fetched on its
//! own request stream (HTTP/3 over QUIC: one QUIC stream per request, RFC 9114 §4.1;
//! HTTP/2 over TCP: one multiplexed stream per request, RFC 9113 §8.1; SCTP: one stream
//! per object), as paper 003's page-load experiment (one html, then one css, one js and
//! five images).
//!
//! The client requests the objects **in list order**: object `i` is requested once every
//! object it depends on has been read completely and objects `0..i` have been requested
//! (as a browser discovers sub-resources in document order). Dependencies must name
//! earlier objects, so the `k`-th stream the client opens always carries object `k` and the
//! server answers it with that object's size. The page is loaded when every object was read
//! (the page load time is the client's completion); each object's completion time is
//! reported.

use crate::config::workload::WebPageSpec;
use crate::driver::TransportDriver;
use crate::metrics::workload::{ObjectReport, PageReport, WorkloadMetrics};
use crate::packet::{Addr, FlowId};
use crate::time::SimTime;
use crate::transport::stream::{AppReader, Side, StreamEvent, StreamId, StreamTransport};
use crate::workloads::endpoint::{AppEndpoint, Workload};
use crate::workloads::reader::Reader;

pub use crate::config::workload::{paper003_page, validate_page, WebObject};

/// What happened to one object, at this side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ObjectTimes {
    request: Option<SimTime>,
    first_byte: Option<SimTime>,
}

/// The `web_page` workload state of one connection (either side).
#[derive(Clone, Debug)]
pub struct WebPage {
    objects: Vec<WebObject>,
    requested: usize,
    times: Vec<ObjectTimes>,
    /// Client: when each object was read completely. Server: when each response was
    /// acknowledged.
    done: Vec<Option<SimTime>>,
    finished: usize,
    completed_at: Option<SimTime>,
    reader: Reader,
}

impl WebPage {
    /// A page of `objects` (checked with [`validate_page`]), each requested with its
    /// `request_size`; read at once.
    pub fn new(objects: Vec<WebObject>) -> Self {
        let n = objects.len();
        WebPage {
            objects,
            requested: 0,
            times: vec![ObjectTimes::default(); n],
            done: vec![None; n],
            finished: 0,
            completed_at: None,
            reader: Reader::immediate(),
        }
    }

    /// The objects.
    pub fn objects(&self) -> &[WebObject] {
        &self.objects
    }

    /// When object `i` completed (client: read; server: acknowledged).
    pub fn object_done(&self, i: usize) -> Option<SimTime> {
        self.done.get(i).copied().flatten()
    }

    /// When the whole page completed on this side.
    pub fn completed_at(&self) -> Option<SimTime> {
        self.completed_at
    }

    /// Requests every object that may be requested now, in list order.
    fn request<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T) {
        while self.requested < self.objects.len() {
            let o = &self.objects[self.requested];
            if o.after.iter().any(|&d| self.done[d].is_none()) {
                break;
            }
            let Some(id) = t.open_stream() else {
                break;
            };
            t.write(id, o.request_size, true);
            self.times[self.requested].request = Some(now);
            self.requested += 1;
        }
    }

    fn finish_one(&mut self, now: SimTime, index: usize) -> bool {
        if index >= self.done.len() || self.done[index].is_some() {
            return false;
        }
        self.done[index] = Some(now);
        self.finished += 1;
        if self.finished == self.objects.len() {
            self.completed_at = Some(now);
            return true;
        }
        false
    }

    /// Handles one event of `t`; returns `true` when the page just completed on this side.
    pub fn on_event<T: StreamTransport + ?Sized>(
        &mut self,
        now: SimTime,
        t: &mut T,
        ev: StreamEvent,
    ) -> bool {
        match (t.side(), ev) {
            (
                Side::Client,
                StreamEvent::Connected
                | StreamEvent::StreamsAvailable
                | StreamEvent::EarlyDataReady,
            ) => {
                self.request(now, t);
                false
            }
            (Side::Client, StreamEvent::ReadComplete(id)) => {
                let done = self.finish_one(now, t.stream_index(id) as usize);
                self.request(now, t);
                done
            }
            (Side::Server, StreamEvent::ReadComplete(id)) => {
                let k = t.stream_index(id) as usize;
                if let Some(o) = self.objects.get(k) {
                    t.write(id, o.size, true);
                    self.times[k] = ObjectTimes {
                        request: Some(now),
                        first_byte: Some(now),
                    };
                }
                false
            }
            (Side::Server, StreamEvent::SendComplete(id)) => {
                self.finish_one(now, t.stream_index(id) as usize)
            }
            _ => false,
        }
    }
}

/// The workload reads through its [`Reader`].
impl AppReader for WebPage {
    fn on_readable(&mut self, now: SimTime, t: &mut dyn StreamTransport, id: StreamId) {
        if t.side() == Side::Client {
            let k = t.stream_index(id) as usize;
            if let Some(o) = self.times.get_mut(k) {
                o.first_byte.get_or_insert(now);
            }
        }
        self.reader.on_readable(now, t, id);
    }

    fn deadline(&self) -> Option<SimTime> {
        self.reader.deadline()
    }

    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport) {
        self.reader.on_deadline(now, t);
    }
}

impl WebPage {
    /// The page report, times relative to `start`.
    pub fn page_report(&self, start: SimTime) -> PageReport {
        let rel = |t: Option<SimTime>| t.map(|t| t.saturating_since(start).as_secs_f64());
        PageReport {
            page_load_secs: rel(self.completed_at),
            objects: self
                .objects
                .iter()
                .zip(&self.times)
                .zip(&self.done)
                .map(|((o, t), d)| ObjectReport {
                    name: o.name.clone(),
                    size: o.size,
                    request_secs: rel(t.request),
                    first_byte_secs: rel(t.first_byte),
                    complete_secs: rel(*d),
                })
                .collect(),
        }
    }
}

/// The client and server endpoints of a `web_page` flow over transport `T`: `client` and
/// `server` are the two connections (not started), `client_addr` / `server_addr` their
/// addresses, `flow` the flow. Every transport's arm in [`crate::flows`] is this call.
pub fn endpoints<T: TransportDriver>(
    client: T,
    server: T,
    spec: &WebPageSpec,
    client_addr: Addr,
    server_addr: Addr,
    flow: FlowId,
) -> (AppEndpoint<T, WebPage>, AppEndpoint<T, WebPage>) {
    let page = || WebPage::new(spec.objects.clone());
    (
        AppEndpoint::new(client, page(), client_addr, server_addr, flow),
        AppEndpoint::new(server, page(), server_addr, client_addr, flow),
    )
}

impl Workload for WebPage {
    fn on_event<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T, ev: StreamEvent) {
        WebPage::on_event(self, now, t, ev);
    }

    fn completed_at(&self) -> Option<SimTime> {
        self.completed_at
    }

    fn report(&self, start: SimTime, _now: SimTime, m: &mut WorkloadMetrics) {
        m.page = Some(self.page_report(start));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;
    use crate::workloads::script::script;

    fn t(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    /// The client's `k`-th stream (the scripted transport numbers them `2k`).
    fn c(k: u64) -> StreamId {
        2 * k
    }

    fn obj(size: u64, after: &[usize]) -> WebObject {
        WebObject {
            name: String::new(),
            size,
            request_size: 1,
            after: after.to_vec(),
        }
    }

    #[test]
    fn html_first_then_the_rest_in_parallel() {
        let mut page = WebPage::new(paper003_page(200));
        let mut f = script(Side::Client, 100);
        page.on_event(t(1), &mut f, StreamEvent::Connected);
        // Only the html: everything else depends on it.
        assert_eq!(f.writes, [(c(0), 200, true)]);
        assert!(!page.on_event(t(50), &mut f, StreamEvent::ReadComplete(c(0))));
        // The other seven at once, in list order.
        let opened: Vec<StreamId> = f.writes.iter().map(|w| w.0).collect();
        assert_eq!(opened, (0..8).map(c).collect::<Vec<_>>());
        for k in 1..7 {
            assert!(!page.on_event(t(60 + k), &mut f, StreamEvent::ReadComplete(c(k))));
        }
        assert!(page.completed_at().is_none());
        assert!(page.on_event(t(90), &mut f, StreamEvent::ReadComplete(c(7))));
        assert_eq!(page.completed_at(), Some(t(90)));
        assert_eq!(page.object_done(0), Some(t(50)));
        assert_eq!(page.object_done(3), Some(t(63)));
    }

    #[test]
    fn the_stream_limit_and_list_order_hold_requests_back() {
        // 2 depends on 1; 3 depends on nothing but comes after 2 in the list.
        let page = vec![obj(10, &[]), obj(10, &[]), obj(10, &[1]), obj(10, &[])];
        assert_eq!(validate_page(&page), Ok(()));
        let mut p = WebPage::new(page);
        let mut f = script(Side::Client, 1);
        p.on_event(t(0), &mut f, StreamEvent::Connected);
        assert_eq!(f.opened, 1, "the peer allows one stream");
        f.limit = 10;
        p.on_event(t(1), &mut f, StreamEvent::StreamsAvailable);
        assert_eq!(
            f.opened, 2,
            "object 2 waits for 1, and 3 waits for 2's request"
        );
        p.on_event(t(2), &mut f, StreamEvent::ReadComplete(c(1)));
        assert_eq!(f.opened, 4);
    }

    #[test]
    fn the_server_answers_each_stream_with_its_object() {
        let mut s = WebPage::new(paper003_page(200));
        let mut f = script(Side::Server, 0);
        s.on_event(t(5), &mut f, StreamEvent::ReadComplete(c(2)));
        s.on_event(t(5), &mut f, StreamEvent::ReadComplete(c(0)));
        assert_eq!(f.writes, [(c(2), 26_000, true), (c(0), 18_000, true)]);
        for k in 0..8 {
            let last = s.on_event(t(10 + k), &mut f, StreamEvent::SendComplete(c(k)));
            assert_eq!(last, k == 7);
        }
    }

    #[test]
    fn bad_pages_name_the_field() {
        assert_eq!(validate_page(&[]).unwrap_err().0, "objects");
        assert_eq!(
            validate_page(&[obj(0, &[])]).unwrap_err().0,
            "objects[0].size"
        );
        let e = validate_page(&[obj(1, &[]), obj(1, &[1])]).unwrap_err();
        assert_eq!((e.0.as_str(), e.1.as_str()), ("objects[1].after", "1"));
    }
}
