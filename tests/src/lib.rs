//! Shared helpers for the cross-crate tests.

pub mod model;
pub mod support;
