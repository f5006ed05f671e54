//! The serde form of [`AppConfig`] (what `resolved_config` shows and `to_toml` writes): the
//! scenario spelling of a flow. CBR: `kind = "cbr"` and its keys. A transport flow:
//! `transport = "quic"` (`"tcp"`, `"sctp"`), the transport's table `quic = { ... }` (`tcp`, `sctp`) (both sides' keys when
//! the sides agree, else `quic = { client = { ... }, server = { ... } }`, each side in
//! full) and `workload = { kind = ..., ... }`.

use super::quic::QuicConfig;
use super::sctp::SctpConfig;
use super::tcp::TcpConfig;
use super::transport::{Sides, TransportConfig};
use super::workload::WorkloadConfig;
use super::{AppConfig, Direction, TransportFlow};
use crate::time::SimTime;
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

/// A flow's application: a flow kind without a transport, or a transport flow.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // a transient value of (de)serialisation
pub(super) enum AppRepr {
    Kind(KindRepr),
    Transport(TransportRepr),
}

/// Whether a flow's start is time 0 (not written: the output of scenarios without
/// `start` is what it was before the key existed).
fn is_zero(t: &SimTime) -> bool {
    *t == SimTime::ZERO
}

/// The flow kinds without a transport, tagged by `kind`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum KindRepr {
    Cbr {
        direction: Direction,
        rate: Rate,
        size: Bytes,
        start: SimTime,
        count: u64,
    },
}

/// A transport flow, tagged by `transport`: the transport's table named after it, and the
/// workload.
#[derive(Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // a transient value of (de)serialisation
pub(super) enum TransportRepr {
    Quic {
        quic: SidesRepr<QuicConfig>,
        workload: WorkloadConfig,
        #[serde(default, skip_serializing_if = "is_zero")]
        start: SimTime,
    },
    Tcp {
        tcp: SidesRepr<TcpConfig>,
        workload: WorkloadConfig,
        #[serde(default, skip_serializing_if = "is_zero")]
        start: SimTime,
    },
    Sctp {
        sctp: SidesRepr<SctpConfig>,
        workload: WorkloadConfig,
        #[serde(default, skip_serializing_if = "is_zero")]
        start: SimTime,
    },
}

/// A transport's per-side configs: one table when both sides agree, else
/// `{ client = { ... }, server = { ... } }`. `Differ` is tried first when reading: a
/// config with `#[serde(default)]` and no `deny_unknown_fields` (TCP, SCTP) would read
/// a `{ client, server }` table as `Same` with every default.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub(super) enum SidesRepr<T> {
    Differ { client: T, server: T },
    Same(T),
}

impl<T: Clone + PartialEq> From<Sides<T>> for SidesRepr<T> {
    fn from(s: Sides<T>) -> Self {
        if s.same() {
            SidesRepr::Same(s.client)
        } else {
            SidesRepr::Differ {
                client: s.client,
                server: s.server,
            }
        }
    }
}

impl<T: Clone> From<SidesRepr<T>> for Sides<T> {
    fn from(s: SidesRepr<T>) -> Self {
        match s {
            SidesRepr::Same(t) => Sides::both(t),
            SidesRepr::Differ { client, server } => Sides { client, server },
        }
    }
}

impl From<AppConfig> for AppRepr {
    fn from(a: AppConfig) -> Self {
        match a {
            AppConfig::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            } => AppRepr::Kind(KindRepr::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            }),
            AppConfig::Transport(TransportFlow {
                transport,
                workload,
                start,
            }) => AppRepr::Transport(match transport {
                TransportConfig::Quic(q) => TransportRepr::Quic {
                    quic: q.into(),
                    workload,
                    start,
                },
                TransportConfig::Tcp(t) => TransportRepr::Tcp {
                    tcp: t.into(),
                    workload,
                    start,
                },
                TransportConfig::Sctp(t) => TransportRepr::Sctp {
                    sctp: t.into(),
                    workload,
                    start,
                },
            }),
        }
    }
}

impl From<AppRepr> for AppConfig {
    fn from(r: AppRepr) -> Self {
        match r {
            AppRepr::Kind(KindRepr::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            }) => AppConfig::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            },
            AppRepr::Transport(TransportRepr::Quic {
                quic,
                workload,
                start,
            }) => AppConfig::Transport(TransportFlow {
                transport: TransportConfig::Quic(quic.into()),
                workload,
                start,
            }),
            AppRepr::Transport(TransportRepr::Tcp {
                tcp,
                workload,
                start,
            }) => AppConfig::Transport(TransportFlow {
                transport: TransportConfig::Tcp(tcp.into()),
                workload,
                start,
            }),
            AppRepr::Transport(TransportRepr::Sctp {
                sctp,
                workload,
                start,
            }) => AppConfig::Transport(TransportFlow {
                transport: TransportConfig::Sctp(sctp.into()),
                workload,
                start,
            }),
        }
    }
}
