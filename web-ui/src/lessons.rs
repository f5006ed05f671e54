//! Guided lessons (issue 29 item 15): gallery entries with a short text beside the
//! scenario saying what it shows, what to change and what to look for. The scenarios are
//! the bundled ones (`scenarios/`): a lesson adds words, never a configuration.

/// One lesson.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lesson {
    /// Short id (`data-lesson`).
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// The gallery entry it loads (`examples/quic-bulk.toml`).
    pub entry: &'static str,
    /// What the scenario is and shows.
    pub intro: &'static str,
    /// What to change (panel keys or the TOML).
    pub change: &'static str,
    /// What to look for in the results.
    pub look: &'static str,
}

/// The lessons, in teaching order.
pub const LESSONS: &[Lesson] = &[
    Lesson {
        id: "slow-start",
        title: "Slow start and loss recovery",
        entry: "examples/quic-bulk.toml",
        intro: "A QUIC download of 10 MB over a 20 Mbit/s path with a 40 ms round trip and a drop-tail queue of one bandwidth-delay product, with CUBIC congestion control (RFC 9438, the default; slow start as in RFC 9002 §7.3.1).",
        change: "In the What if… strip: drag Packet loss to 1 %, make the Queue deeper (4 × BDP) or shallower (0.25 × BDP), or switch Congestion control to NewReno or BBRv1; the run follows the knob. Every other key is in the panel below.",
        look: "Congestion window chart: the server's cwnd doubles every round trip (slow start) until the queue overflows. The red ticks on the time axis are packets declared lost; a triangle marks the congestion event that sets ssthresh and cuts the window once per round trip of losses — to 0.7 of it with CUBIC (RFC 9438 §4.6), to half with NewReno (RFC 9002 §7.3.2); then the window grows again, along CUBIC's cubic curve or by about one packet per round trip with NewReno (congestion avoidance). The queue chart fills as the window passes the path's BDP, and the srtt chart rises with it.",
    },
    Lesson {
        id: "hol-blocking",
        title: "Head-of-line blocking: HTTP/2 over TCP vs HTTP/3 over QUIC",
        entry: "examples/page-load-h2-h3.toml",
        intro: "The same web page (one html, then a css, a js and five images in parallel) over HTTP/2 on TCP and HTTP/3 on QUIC, with the same loss decisions for both, swept over a packet error rate of 0 to 20 % on a 200 ms path.",
        change: "Choose the sweep point in the plot chooser; change the sweep values of topology.link.loss, or the delay.",
        look: "The paired table: without loss the two finish close together; as loss grows, TCP's single byte stream stalls every object behind a lost segment (head-of-line blocking) while QUIC's streams wait only for their own lost packets, so the difference grows with the loss rate. Compare the completion times per point, and the loss ticks on the time axis.",
    },
    Lesson {
        id: "flow-control",
        title: "Flow-control allowances (paper 001)",
        entry: "paper001/table1-small-buffer.toml",
        intro: "Four QUIC connections side by side, each with two streams and small receive windows (4 KB per stream, 8 KB per connection), under the four allowances of paper 001: static, improved_static, autotune and fast_autotune. No loss and no queueing: only flow control limits.",
        change: "Change a flow's allowance, its starting windows (stream_window, connection_window) or the autotuning bounds (max_stream_window, max_connection_window) in the panel, or the access delay.",
        look: "The brown ticks on the time axis: a sender blocked by its peer's stream or connection limit (RFC 9000 §4). The receive-window chart shows each window growing (autotune) or staying put (static); the breakdown bar shows the time blocked by flow control; static finishes last, the autotuning allowances first.",
    },
    Lesson {
        id: "migration",
        title: "Connection migration and the congestion window (paper 004)",
        entry: "paper004/handover-5g-campus.toml",
        intro: "A QUIC download handed over from a 5G path (30 ms round trip) to a campus path (2.5 ms) at 200 ms, swept over the window policy at the switch: reset to the initial window (RFC 9000 §9.4) or rtt_ratio (paper 004: keep a share of the old window set by the ratio of the round trips, at least the initial window).",
        change: "Switch the plotted sweep point between the two policies; change the handover time (topology.handovers at) or the paths' delays.",
        look: "The purple tick is the handover and the cyan ticks the migration (started, then complete when the new path is validated). Right after it the server's cwnd restarts from the initial window under reset but keeps a share of the old one under rtt_ratio; compare the throughput in the 100 ms after the switch and the completion times per point.",
    },
    Lesson {
        id: "bbr-phases",
        title: "BBR's phases: Startup, Drain, ProbeBW, ProbeRTT",
        entry: "examples/quic-bbr1.toml",
        intro: "A 30 MB QUIC download with BBRv1 (draft-cardwell-iccrg-bbr-congestion-control-00) over 10 Mbit/s, a 40 ms round trip and a deep 8-BDP drop-tail queue. BBR builds a model of the path — the bottleneck bandwidth (a max filter over 10 rounds) and the minimum RTT (a min filter over 10 s) — and paces at gain × bandwidth with at most 2 BDP in flight.",
        change: "Switch Congestion control to CUBIC in the What if… strip and compare the queue; make the Queue shallower (0.5 × BDP) or the One-way delay longer, and watch when Startup ends.",
        look: "The BBR state chart: Startup (0) doubles the rate each round until three rounds add less than 25 % bandwidth (§4.3.2), Drain (1) empties the queue Startup built, ProbeBW (2) cycles its pacing gain 1.25 / 0.75 / 1 ×6, and ProbeRTT (3) comes about every 10 s, cutting the window to 4 packets for 200 ms. The bandwidth estimate settles just under 10 Mbit/s (packet bytes less link overhead) and the min-RTT estimate at ~41 ms; the queue stays far below the 8 BDP CUBIC would fill.",
    },
    Lesson {
        id: "cubic-vs-bbr",
        title: "CUBIC vs BBR under 1 % random loss",
        entry: "examples/cubic-vs-bbr1-loss.toml",
        intro: "The same 10 MB download with CUBIC and with BBRv1 (a sweep over the controller, 3 seeds each), every packet lost with probability 1 % in both directions on a 10 Mbit/s, 40 ms path. Random loss is not congestion, but a loss-based controller cannot tell them apart.",
        change: "Drag Packet loss in the What if… strip from 0 % up to 5 %; choose which point (controller) the time plots show; try NewReno by editing the sweep values in the TOML.",
        look: "The sweep plot: completion time per controller with its 95 % CI — CUBIC needs about three times longer, as each loss cuts its window to 0.7 (RFC 9438 §4.6) and it grows back slowly, near the Mathis bound 1.2 MSS / (RTT √p); BBRv1 finishes in about 8.6 s, as its bandwidth estimate ignores random loss. The congestion window chart of the CUBIC point is a low sawtooth; that of BBR stays at its model's 2 BDP.",
    },
];

/// The lesson of gallery entry `entry`, if it has one.
pub fn of_entry(entry: &str) -> Option<&'static Lesson> {
    LESSONS.iter().find(|l| l.entry == entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lesson_loads_a_bundled_scenario() {
        for l in LESSONS {
            let e = crate::gallery::find(l.entry).unwrap_or_else(|| panic!("{}", l.entry));
            sim_core::scenario::parse_str(e.toml).unwrap();
            assert_eq!(of_entry(l.entry), Some(l));
        }
    }
}
