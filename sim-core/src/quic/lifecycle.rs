//! Connection sequences moved: the workload (client, server, the server's store and the
//! [`InitialWindowPolicy`](crate::workloads::sequence::InitialWindowPolicy) it drives) is
//! `crate::workloads::sequence`, written against the stream-transport interface; QUIC's
//! part is `quic/stream_transport.rs`. The spec types live in the config layer and are
//! re-exported here so `quic::lifecycle::{CloseMode, ConnectionSpec}` paths keep working.

pub use super::connection::SessionTicket;
pub use crate::config::workload::{CloseMode, ConnectionSpec};
