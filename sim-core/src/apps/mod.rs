//! Traffic applications that run on hosts as [`crate::endpoint::Endpoint`]s.

pub mod cbr;
