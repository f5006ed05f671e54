//! The built-in workloads' definitions ([`WorkloadDef`]): their key tables are the format's
//! (`validate/schema.rs`, where the legacy flow kinds share them), so their rows live here,
//! one impl per workload; the list that declares them is `config::workload`'s `workloads!`.

use super::schema;
use crate::config::workload::{
    check_streams, validate_page, BulkSpec, ConnectionSpec, ReconnectsSpec, SequenceSpec,
    VideoSpec, WebPageSpec, WorkloadDef, WorkloadError,
};
use crate::keys::Table;

/// `(field, value, allowed)` with a static field, as the specs' own checks return it.
fn owned((field, value, allowed): (&'static str, String, String)) -> WorkloadError {
    (field.to_string(), value, allowed)
}

impl WorkloadDef for BulkSpec {
    const NAME: &'static str = "bulk";
    const TABLE: Table = schema::WORKLOAD_BULK;
    const FLAT: Table = schema::QUIC_BULK;

    fn validate(&self) -> Result<(), WorkloadError> {
        BulkSpec::validate(self).map_err(owned)
    }
    fn request_streams(&self) -> (u64, &'static str) {
        (self.streams, "streams")
    }
    fn streams_per_connection(&self) -> Option<(&'static str, u64)> {
        Some(("streams", self.streams))
    }
    fn example() -> Self {
        BulkSpec::default()
    }
}

impl WorkloadDef for SequenceSpec {
    const NAME: &'static str = "sequence";
    const TABLE: Table = schema::WORKLOAD_SEQUENCE;
    const FLAT: Table = schema::QUIC_CONNECTIONS;
    // Resumes with QUIC session tickets (`docs/lifecycle.md`).
    const ONLY_ON: Option<&'static [&'static str]> = Some(&["quic"]);

    fn validate(&self) -> Result<(), WorkloadError> {
        // Its connections' keys and order are checked with the format's rules
        // (`validate::check_flow`).
        check_streams(self.streams).map_err(owned)
    }
    fn request_streams(&self) -> (u64, &'static str) {
        (
            self.connections
                .iter()
                .map(|c| c.streams)
                .fold(0u64, u64::saturating_add),
            "connections",
        )
    }
    fn several_connections(&self) -> bool {
        true
    }
    fn example() -> Self {
        SequenceSpec::new(vec![
            ConnectionSpec::new(10_000),
            ConnectionSpec::new(10_000),
        ])
    }
}

impl WorkloadDef for WebPageSpec {
    const NAME: &'static str = "web_page";
    const TABLE: Table = schema::WORKLOAD_WEB_PAGE;
    const FLAT: Table = schema::FLAT_WEB_PAGE;

    fn validate(&self) -> Result<(), WorkloadError> {
        validate_page(&self.objects)
    }
    fn request_streams(&self) -> (u64, &'static str) {
        (self.objects.len() as u64, "workload.objects")
    }
    fn streams_per_connection(&self) -> Option<(&'static str, u64)> {
        Some(("objects", self.objects.len() as u64))
    }
    fn example() -> Self {
        WebPageSpec {
            objects: crate::config::workload::paper003_page(100),
        }
    }
}

impl WorkloadDef for VideoSpec {
    const NAME: &'static str = "video";
    const TABLE: Table = schema::WORKLOAD_VIDEO;
    const FLAT: Table = schema::FLAT_VIDEO;

    fn validate(&self) -> Result<(), WorkloadError> {
        VideoSpec::validate(self).map_err(owned)
    }
    fn request_streams(&self) -> (u64, &'static str) {
        (
            self.segments().saturating_add(self.reconnections),
            "workload.length",
        )
    }
    fn several_connections(&self) -> bool {
        // A video that reconnects has later connections, which resume.
        self.reconnections > 0
    }
    fn example() -> Self {
        VideoSpec::default()
    }
}

impl WorkloadDef for ReconnectsSpec {
    const NAME: &'static str = "reconnects";
    const TABLE: Table = schema::WORKLOAD_RECONNECTS;
    const FLAT: Table = schema::FLAT_RECONNECTS;

    fn validate(&self) -> Result<(), WorkloadError> {
        ReconnectsSpec::validate(self).map_err(owned)
    }
    fn request_streams(&self) -> (u64, &'static str) {
        (
            self.streams
                .saturating_mul(self.reconnections.saturating_add(1)),
            "workload.reconnections",
        )
    }
    fn streams_per_connection(&self) -> Option<(&'static str, u64)> {
        Some(("streams", self.streams))
    }
    fn several_connections(&self) -> bool {
        true
    }
    fn example() -> Self {
        ReconnectsSpec {
            bytes: 100_000,
            reconnections: 2,
            on: crate::config::workload::ReconnectOn::Close,
            streams: 1,
            request_size: 100,
        }
    }
}
