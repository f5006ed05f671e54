//! Cross-transport delivery properties (issue 11): over every transport (TCP + HTTP/2-style
//! multiplexing, SCTP, QUIC) and every stream workload (bulk, web_page, video,
//! reconnects), under random loss, reordering link jitter and handovers, a run never
//! panics and ends with a status, and the client application reads every response byte
//! exactly once: per stream / object / segment, what it read is exactly the response
//! size when the transfer completed, and never more than that when it did not.
//!
//! The accounting: each transport counts the bytes the application consumed
//! (`stream_bytes_read`, incremented by every `StreamTransport::read`, which consumes from
//! the in-order prefix of a stream — QUIC and SCTP per stream, TCP the one byte stream the
//! multiplexer parses in sequence order), and the workloads report per object and per
//! segment when it was read completely. The simulator carries byte counts, not contents,
//! so "in order" holds by construction of that interface (a read takes the next bytes of
//! the prefix); what can go wrong — and what these properties catch — is a byte delivered
//! twice (a retransmission or a reordered duplicate counted as new data: the sum exceeds
//! the size), a byte skipped (a stream or object completing with fewer bytes: the sum
//! falls short), or a reconnection that re-requests the wrong range (the sum over its
//! connections differs from the transfer).
//!
//! Reordering: the link's `jitter = { amount, reorder = true }` draws each packet's delay
//! independently, so a later packet may overtake an earlier one (docs/scenario-format.md,
//! Jitter). Handovers: `[[topology.handovers]]` with `address = "ip"` or `"port"`; a
//! transfer that cannot survive the change (TCP / SCTP / QUIC without migration, outside
//! `reconnects` with `on = "address_change"`) may fail, and then only the "never more"
//! half of the property applies.

use proptest::prelude::*;
use sim_core::metrics::{EndpointMetrics, RunResult, RunStatus};

#[derive(Clone, Debug)]
enum Work {
    Bulk { bytes: u64, streams: u64 },
    Page { sizes: Vec<u64> },
    Video { segments: u64 },
    Reconnects { bytes: u64, on: &'static str },
}

#[derive(Clone, Debug)]
struct Case {
    transport: &'static str,
    work: Work,
    loss: f64,
    jitter_ms: u64,
    handover: Option<(&'static str, u64)>,
    delay_ms: u64,
    seed: u64,
}

fn work() -> impl Strategy<Value = Work> {
    prop_oneof![
        (10_000u64..200_000, 1u64..4).prop_map(|(bytes, streams)| Work::Bulk { bytes, streams }),
        prop::collection::vec(1_000u64..60_000, 1..5).prop_map(|sizes| Work::Page { sizes }),
        (1u64..4).prop_map(|segments| Work::Video { segments }),
        (
            20_000u64..300_000,
            prop_oneof![Just("close"), Just("address_change")]
        )
            .prop_map(|(bytes, on)| Work::Reconnects { bytes, on }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just("tcp"), Just("sctp"), Just("quic")],
        work(),
        prop_oneof![Just(0.0), 0.0f64..0.05],
        prop_oneof![Just(0u64), 1u64..8],
        prop::option::of((prop_oneof![Just("ip"), Just("port")], 100u64..800)),
        5u64..40,
        0u64..1000,
    )
        .prop_map(
            |(transport, work, loss, jitter_ms, handover, delay_ms, seed)| {
                // An address-change reconnect needs a handover of its pair.
                let handover = match work {
                    Work::Reconnects {
                        on: "address_change",
                        ..
                    } => handover.or(Some(("ip", 300))),
                    _ => handover,
                };
                Case {
                    transport,
                    work,
                    loss,
                    jitter_ms,
                    handover,
                    delay_ms,
                    seed,
                }
            },
        )
}

impl Case {
    fn scenario(&self) -> String {
        let jitter = if self.jitter_ms > 0 {
            format!(
                ", jitter = {{ amount = \"{}ms\", reorder = true }}",
                self.jitter_ms
            )
        } else {
            String::new()
        };
        let link = format!(
            "{{ rate = \"20Mbps\", delay = \"{}ms\", loss = {}{jitter} }}",
            self.delay_ms, self.loss
        );
        let handover = match self.handover {
            Some((address, at)) => format!(
                "[[topology.handovers]]\nat = \"{at}ms\"\naddress = \"{address}\"\nlink = {link}\n"
            ),
            None => String::new(),
        };
        let workload = match &self.work {
            Work::Bulk { bytes, streams } => {
                format!("{{ kind = \"bulk\", bytes = {bytes}, streams = {streams} }}")
            }
            Work::Page { sizes } => {
                let objects: Vec<String> = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        // Every object after the first depends on the first (the html).
                        let after = if i == 0 { "[]" } else { "[0]" };
                        format!("{{ size = {s}, after = {after} }}")
                    })
                    .collect();
                format!(
                    "{{ kind = \"web_page\", objects = [{}] }}",
                    objects.join(", ")
                )
            }
            Work::Video { segments } => format!(
                "{{ kind = \"video\", length = \"{}s\", segment = \"1s\", buffer = \"3s\", startup = \"1s\", hd_rate = \"200kbps\", fhd_rate = \"300kbps\", qhd_rate = \"400kbps\" }}",
                segments
            ),
            Work::Reconnects { bytes, on } => format!(
                "{{ kind = \"reconnects\", bytes = {bytes}, on = \"{on}\", reconnections = 1 }}"
            ),
        };
        // QUIC follows a handover with migration (RFC 9000 §9) unless it reconnects.
        let quic = match (self.transport, self.handover, &self.work) {
            (
                "quic",
                Some(_),
                Work::Reconnects {
                    on: "address_change",
                    ..
                },
            ) => "",
            ("quic", Some(_), _) => "quic = { migration = { policy = \"reset\" } }\n",
            _ => "",
        };
        format!(
            "name = \"delivery\"\nseed = {}\n[sim]\ntime_limit = \"120s\"\n[topology]\nkind = \"two_hosts\"\nlink = {link}\n{handover}[[flows]]\ntransport = \"{}\"\n{quic}workload = {workload}\n",
            self.seed, self.transport
        )
    }

    /// The transfer must survive: no handover, or an address-change reconnect. (QUIC
    /// migration may not save a connection: one whose address changes before its
    /// handshake is confirmed must not migrate, RFC 9000 §9, and fails at its idle
    /// timeout; TCP and SCTP connections cannot follow at all.)
    fn must_complete(&self) -> bool {
        match (self.handover, &self.work) {
            (None, _) => true,
            (Some(_), Work::Reconnects { on, .. }) => *on == "address_change",
            (Some(_), _) => false,
        }
    }
}

fn read(m: &EndpointMetrics) -> u64 {
    m.transport()
        .expect("a transport endpoint")
        .stream_bytes_read
}

/// The delivery properties of one run.
fn check(c: &Case, r: &RunResult) -> Result<(), TestCaseError> {
    let client = &r.flows[0].endpoints[0];
    let server = &r.flows[0].endpoints[1];
    let w = client.workload().expect("client workload");
    let completed = client.transport().unwrap().completion_secs.is_some()
        || w.reconnects
            .as_ref()
            .is_some_and(|rep| rep.transfer_secs.is_some());
    if c.must_complete() {
        prop_assert!(completed, "client did not complete\n{}", c.scenario());
        if c.transport != "quic" {
            // The client read everything; the server's end may not learn it. Known model
            // limits, not delivery errors: TCP's close is one FIN and SCTP's one SHUTDOWN,
            // neither retransmitted (docs/tcp.md, docs/sctp.md), and an SCTP server
            // ignores the Cumulative TSN Ack of the SHUTDOWN (RFC 9260 §9.2 says to check
            // it; found by this property, not fixed here): when the last ACK / SACK is
            // lost the server's last data stays unacknowledged, and the run ends
            // `stalled` or at the time limit. Likewise a TCP server whose client's last
            // ACKs were on the old links at a handover retransmits to the old address
            // until the time limit (no R2 give-up, RFC 9293 §3.8.3).
            prop_assert!(
                matches!(
                    r.status,
                    RunStatus::Completed | RunStatus::Stalled | RunStatus::TimeLimit
                ),
                "{:?}\n{}",
                r.status,
                c.scenario()
            );
            if c.handover.is_none() && c.loss == 0.0 {
                prop_assert_eq!(r.status, RunStatus::Completed, "{}", c.scenario());
            }
        } else {
            prop_assert_eq!(r.status, RunStatus::Completed, "{}", c.scenario());
        }
    }
    let got = read(client);
    match &c.work {
        Work::Bulk { bytes, .. } => {
            prop_assert!(got <= *bytes, "read {got} > {bytes}");
            if completed {
                prop_assert_eq!(got, *bytes);
            }
        }
        Work::Page { sizes } => {
            let Some(page) = w.page.as_ref() else {
                // No report: the page never started (e.g. a handover in the handshake).
                prop_assert!(!completed && got == 0, "no page report, read {got}");
                return Ok(());
            };
            let total: u64 = sizes.iter().sum();
            prop_assert!(got <= total, "read {got} > {total}");
            let done: u64 = page
                .objects
                .iter()
                .filter(|o| o.complete_secs.is_some())
                .map(|o| o.size)
                .sum();
            // Objects read completely account for at most what was read.
            prop_assert!(done <= got, "complete objects {done} > read {got}");
            if completed {
                prop_assert_eq!(got, total);
                prop_assert!(page.objects.iter().all(|o| o.complete_secs.is_some()));
            }
        }
        Work::Video { .. } => {
            let Some(v) = w.video.as_ref() else {
                // No report: playback never started (e.g. a handover in the handshake).
                prop_assert!(!completed && got == 0, "no video report, read {got}");
                return Ok(());
            };
            let requested: u64 = v.segments.iter().map(|s| s.bytes).sum();
            let done: u64 = v
                .segments
                .iter()
                .filter(|s| s.complete_secs.is_some())
                .map(|s| s.bytes)
                .sum();
            // Every byte read belongs to a requested segment, and a segment read
            // completely was read once: the sum lies between them.
            prop_assert!(
                done <= got && got <= requested,
                "segments done {done}, read {got}, requested {requested}"
            );
            if completed {
                prop_assert_eq!(got, requested);
            }
        }
        Work::Reconnects { bytes, .. } => {
            // Over every connection of the transfer.
            let over: u64 = w
                .connections
                .iter()
                .map(|k| k.metrics.transport().stream_bytes_read)
                .sum();
            prop_assert_eq!(over, got, "connection sum vs endpoint total");
            prop_assert!(got <= *bytes, "read {got} > {bytes}");
            if completed {
                prop_assert_eq!(got, *bytes, "{}", c.scenario());
            }
        }
    }
    // The server read each request once: never more than the requests written.
    let requests: u64 = match &c.work {
        Work::Page { sizes } => 100 * sizes.len() as u64,
        _ => u64::MAX,
    };
    prop_assert!(read(server) <= requests);
    Ok(())
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let text = c.scenario();
    let cfg = sim_core::scenario::parse_str(&text)
        .unwrap_or_else(|e| panic!("valid scenario: {e}\n{text}"))
        .base;
    // No panic; a status.
    let r = sim_core::run(&cfg, cfg.seed).expect("runs");
    check(c, &r)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn every_byte_is_read_exactly_once(c in case()) {
        run_case(&c)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// The same property on many more cases (release: `cargo test --release -p
    /// quicsim-tests --test delivery -- --ignored`).
    #[test]
    #[ignore]
    fn every_byte_is_read_exactly_once_many_cases(c in case()) {
        run_case(&c)?;
    }
}

/// The property can fail: a reconnect that re-requested the whole transfer instead of the
/// missing range would read more than `bytes`, and the check says so.
#[test]
fn the_check_catches_a_byte_read_twice() {
    let c = Case {
        transport: "tcp",
        work: Work::Reconnects {
            bytes: 300_000,
            on: "address_change",
        },
        loss: 0.0,
        jitter_ms: 0,
        handover: Some(("ip", 150)),
        delay_ms: 10,
        seed: 1,
    };
    let text = c.scenario();
    let cfg = sim_core::scenario::parse_str(&text).unwrap().base;
    let r = sim_core::run(&cfg, cfg.seed).unwrap();
    assert!(check(&c, &r).is_ok());
    // The same run judged against a smaller transfer (as if bytes were delivered twice).
    let smaller = Case {
        work: Work::Reconnects {
            bytes: 299_999,
            on: "address_change",
        },
        ..c.clone()
    };
    assert!(check(&smaller, &r).is_err());
}
