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
