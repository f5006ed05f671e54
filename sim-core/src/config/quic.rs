//! The QUIC flow parameters ([`QuicConfig`]) as the config layer sees them.
//!
//! TRANSITION (issue 9): `QuicConfig` is pure data, but its file `quic/config.rs` is being
//! edited on another branch right now, so it is not moved here yet. Until the lead moves
//! `quic/config.rs` to this file (a pure file move at merge time), this module re-exports
//! it, and this re-export is the config layer's only import from `quic/`
//! (`tests/tests/layers.rs` allows exactly this line and no other). Everything in the
//! config layer names the QUIC parameters through this module, never through `crate::quic`.

pub use crate::quic::config::*;
