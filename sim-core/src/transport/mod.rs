//! The toolkit every transport shares: QUIC uses it now, TCP and SCTP baselines will use
//! it too. Nothing here names a protocol; each piece is a plain data structure or policy
//! driven by the transport that owns it.
//!
//! - [`rtt`]: the smoothed RTT estimator (RFC 9002 §5, the EWMA of RFC 6298 plus
//!   acknowledgement-delay handling) with the snapshot congestion controllers read;
//! - [`ranges`]: an ordered set of half-open `u64` ranges (reassembly, acknowledged
//!   ranges, received sequence or packet numbers);
//! - `dense`: an ordered map over dense `u64` keys (sent packets by number, send order);
//! - [`pacer`]: the token-bucket pacer (RFC 9002 §7.7);
//! - [`allowance`]: the receive-window update policies (one file per policy);
//! - [`initial_window`]: the initial congestion window policies of a server that
//!   remembers its clients (paper 000; one file per policy);
//! - [`migration`]: the congestion-window policies of a connection that moved to a new
//!   path (one file per policy);
//! - [`stream`]: the stream-transport interface workloads are written against
//!   ([`stream::StreamTransport`], [`stream::StreamEvent`], and [`stream::AppReader`], the
//!   workload's reading the transport calls).

pub mod allowance;
pub(crate) mod dense;
pub mod initial_window;
pub mod migration;
pub mod pacer;
pub mod ranges;
pub mod rtt;
pub mod stream;
