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

use crate::time::SimTime;
use crate::transport::stream::{AppReader, Side, StreamEvent, StreamId, StreamTransport};
use crate::workloads::reader::Reader;
use serde::{Deserialize, Serialize};

/// One object of a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebObject {
    /// A name for reports (`"index.html"`).
    pub name: String,
    /// Response size in bytes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub size: u64,
    /// Indices of earlier objects that must be read completely before this one is
    /// requested (empty: requested at once).
    #[serde(default)]
    pub after: Vec<usize>,
}

/// Paper 003's page: one html, then one css, one js and five images requested in
/// parallel once the html is read. The paper gives no object sizes; these are typical
/// sizes of a small page (HTTP Archive medians are larger; see the scenario that uses it).
pub fn paper003_page() -> Vec<WebObject> {
    let obj = |name: &str, size: u64, after: &[usize]| WebObject {
        name: name.into(),
        size,
        after: after.to_vec(),
    };
    vec![
        obj("index.html", 30_000, &[]),
        obj("style.css", 20_000, &[0]),
        obj("app.js", 100_000, &[0]),
        obj("img1.jpg", 100_000, &[0]),
        obj("img2.jpg", 100_000, &[0]),
        obj("img3.jpg", 100_000, &[0]),
        obj("img4.jpg", 100_000, &[0]),
        obj("img5.jpg", 100_000, &[0]),
    ]
}

/// Checks a page: at least one object, sizes > 0, dependencies on earlier objects only.
/// The error is `(field, value, allowed)` with the field relative to the workload table
/// (`objects[3].after`).
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
            return Err((
                format!("objects[{i}].after"),
                d.to_string(),
                format!("indices of earlier objects (< {i}): objects are requested in list order"),
            ));
        }
    }
    Ok(())
}

/// The `web_page` workload state of one connection (either side).
#[derive(Clone, Debug)]
pub struct WebPage {
    objects: Vec<WebObject>,
    request_size: u64,
    requested: usize,
    /// Client: when each object was read completely. Server: when each response was
    /// acknowledged.
    done: Vec<Option<SimTime>>,
    finished: usize,
    completed_at: Option<SimTime>,
    reader: Reader,
}

impl WebPage {
    /// A page of `objects` (checked with [`validate_page`]), each requested with a
    /// `request_size`-byte request; read at once.
    pub fn new(objects: Vec<WebObject>, request_size: u64) -> Self {
        let n = objects.len();
        WebPage {
            objects,
            request_size,
            requested: 0,
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
    fn request<T: StreamTransport + ?Sized>(&mut self, t: &mut T) {
        while self.requested < self.objects.len() {
            let o = &self.objects[self.requested];
            if o.after.iter().any(|&d| self.done[d].is_none()) {
                break;
            }
            let Some(id) = t.open_stream() else {
                break;
            };
            t.write(id, self.request_size, true);
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
                self.request(t);
                false
            }
            (Side::Client, StreamEvent::ReadComplete(id)) => {
                let done = self.finish_one(now, t.stream_index(id) as usize);
                self.request(t);
                done
            }
            (Side::Server, StreamEvent::ReadComplete(id)) => {
                if let Some(o) = self.objects.get(t.stream_index(id) as usize) {
                    t.write(id, o.size, true);
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
        self.reader.on_readable(now, t, id);
    }

    fn deadline(&self) -> Option<SimTime> {
        self.reader.deadline()
    }

    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport) {
        self.reader.on_deadline(now, t);
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
            after: after.to_vec(),
        }
    }

    #[test]
    fn html_first_then_the_rest_in_parallel() {
        let mut page = WebPage::new(paper003_page(), 200);
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
        let mut p = WebPage::new(page, 1);
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
        let mut s = WebPage::new(paper003_page(), 200);
        let mut f = script(Side::Server, 0);
        s.on_event(t(5), &mut f, StreamEvent::ReadComplete(c(2)));
        s.on_event(t(5), &mut f, StreamEvent::ReadComplete(c(0)));
        assert_eq!(f.writes, [(c(2), 100_000, true), (c(0), 30_000, true)]);
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
