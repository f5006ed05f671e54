//! QUIC (RFC 9000 / 9002) endpoints. Under construction: see issue 3.

pub mod wire;
