//! Shared helpers for the cross-crate tests.

pub mod model;
pub mod pair;
pub mod support;
