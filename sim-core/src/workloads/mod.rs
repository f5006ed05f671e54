//! Workloads, written once against the stream-transport interface
//! ([`crate::transport::stream::StreamTransport`] for what the application does,
//! [`crate::driver::TransportDriver`] for the engine-facing glue). Nothing here names a
//! protocol: the flow factory ([`crate::flows`]) picks the transport and the workload and
//! plugs one into the other.
//!
//! - [`bulk`]: requests on `streams` streams, the server answers each with its share of
//!   `bytes` ([`bulk::Bulk`], the per-connection state) and [`bulk::BulkEndpoint`], one
//!   connection running it as an [`crate::endpoint::Endpoint`];
//! - [`sequence`]: a sequence of connections between one client and one server (start
//!   times and gaps, resumption with session tickets, 0-RTT, idle or explicit close), each
//!   running `bulk`, and the server's store of tickets, tokens and history samples with the
//!   [`sequence::InitialWindowPolicy`] it drives (paper 000; `docs/lifecycle.md`);
//! - [`web_page`]: a page of objects with dependencies, one request stream per object,
//!   requested in list order as dependencies complete ([`web_page::WebPage`]; paper 003's
//!   page load), run by [`endpoint::AppEndpoint`] with its per-object times;
//! - [`video`]: segment requests into a playout buffer, quality by the measured delay, a
//!   seek ([`video::Video`]; paper 003's streaming);
//! - [`reconnects`]: one transfer over K + 1 connections (idle close or explicit close
//!   between parts, resumption), a connection sequence with its own report;
//! - [`endpoint`]: [`endpoint::Workload`], the interface of a single-connection workload
//!   with its own timer, and [`endpoint::AppEndpoint`], which runs one over any
//!   [`crate::driver::TransportDriver`];
//! - [`reader`]: the application reader ([`reader::Reader`]: at once, or paced at a read
//!   rate) a workload reads its streams with; the transport calls it synchronously
//!   ([`crate::transport::stream::AppReader`]).
//!
//! A new workload is a new file here (its state machine reacting to
//! [`crate::transport::stream::StreamEvent`]s, and an endpoint adapter if it needs more
//! than one connection) plus one arm in [`crate::flows`].

pub mod bulk;
pub mod endpoint;
pub mod reader;
pub mod reconnects;
#[cfg(test)]
pub(crate) mod script;
pub mod sequence;
pub mod video;
pub mod web_page;
