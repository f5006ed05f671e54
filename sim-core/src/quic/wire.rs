//! stub
/// stub
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QuicDatagram {}
