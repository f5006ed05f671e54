//! cc stub
