//! BBRv1 sharing a bottleneck (issue 30's fairness tables): two long flows over a dumbbell
//! (10 Mbit/s, 40 ms base RTT, drop-tail queue of 0.5, 1 and 4 BDP), BBRv1 vs BBRv1,
//! BBRv1 vs CUBIC and CUBIC vs CUBIC, over QUIC and TCP; Jain's fairness index
//! J = (x1 + x2)² / (2 (x1² + x2²)) of their delivery rates from 10 s to 60 s.
//!
//! What is asserted is the literature's direction, not a number: in a shallow buffer
//! BBRv1 takes more than its half against CUBIC (its model ignores the losses that make
//! CUBIC back off; Hock, Bless, Zitterbart, "Experimental evaluation of BBR congestion
//! control", ICNP 2017; Cardwell et al. 2016 note that BBR does not yield to loss-based
//! flows in shallow buffers), and the flows together keep the link busy. The whole table
//! is printed (`cargo test --test bbr_fairness -- --nocapture`) and copied into
//! `docs/bbr.md`.

use sim_core::metrics::RunResult;

/// The dumbbell: 10 Mbit/s, 20 ms each way on the bottleneck, 1 ms access links, so the
/// base RTT is ~44 ms and a BDP ~55 000 bytes.
fn run(transport: &str, cc: [&str; 2], queue_bdp: &str) -> RunResult {
    let flow = |pair: usize, cc: &str| {
        match transport {
        "quic" => format!(
            "[[flows]]\ntransport = \"quic\"\npair = {pair}\nquic = {{ cc = \"{cc}\", stream_window = \"1GB\", connection_window = \"1GB\" }}\nworkload = {{ kind = \"bulk\", bytes = \"10GB\" }}\n"
        ),
        _ => format!(
            "[[flows]]\ntransport = \"tcp\"\npair = {pair}\nworkload = {{ kind = \"bulk\", bytes = \"10GB\" }}\n[flows.tcp]\ncc = \"{cc}\"\n"
        ),
    }
    };
    let text = format!(
        r#"
name = "bbr-fairness"
seed = 1
[sim]
time_limit = "60s"
[output]
series = true
sample_interval = "500ms"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = "{queue_bdp}BDP" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
{}{}"#,
        flow(0, cc[0]),
        flow(1, cc[1])
    );
    let config = sim_core::scenario::parse_str(&text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .base;
    sim_core::run(&config, 1).expect("runs")
}

/// Delivery rate (bit/s of payload) of flow `i` from 10 s to the end.
fn rate(r: &RunResult, i: usize) -> f64 {
    let s = r.series.as_ref().expect("series");
    let name = format!("flow{i}.delivered_bytes");
    let c = s
        .columns
        .iter()
        .position(|c| *c == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", s.columns));
    let a = s.rows.iter().find(|row| row[0] >= 10.0).expect("samples");
    let b = s.rows.last().expect("samples");
    (b[c] - a[c]) * 8.0 / (b[0] - a[0])
}

fn jain(x: f64, y: f64) -> f64 {
    (x + y).powi(2) / (2.0 * (x * x + y * y))
}

#[test]
#[ignore = "heavy (18 runs of 60 s): run in release (CI's --ignored pass)"]
fn bbr1_shares_of_a_bottleneck() {
    println!(
        "| transport | flows | queue | flow 1 Mbit/s | flow 2 Mbit/s | share of flow 1 | Jain |"
    );
    println!("|---|---|---|---|---|---|---|");
    for transport in ["quic", "tcp"] {
        for queue in ["0.5", "1", "4"] {
            for cc in [["bbr1", "bbr1"], ["bbr1", "cubic"], ["cubic", "cubic"]] {
                let r = run(transport, cc, queue);
                let (x, y) = (rate(&r, 0), rate(&r, 1));
                let share = x / (x + y);
                println!(
                    "| {transport} | {} vs {} | {queue} BDP | {:.2} | {:.2} | {:.2} | {:.3} |",
                    cc[0],
                    cc[1],
                    x / 1e6,
                    y / 1e6,
                    share,
                    jain(x, y)
                );
                // Together they keep the link busy (payload: headers take ~5 %).
                assert!(
                    x + y >= 0.85e7,
                    "{transport} {cc:?} {queue}: {} bit/s",
                    x + y
                );
                if cc == ["bbr1", "cubic"] && queue == "0.5" {
                    assert!(
                        share > 0.5,
                        "{transport}: BBRv1's share against CUBIC in a 0.5-BDP buffer {share}"
                    );
                }
            }
        }
    }
}

/// BBRv3 (draft-ietf-ccwg-bbr-06) on the same dumbbell: BBRv3 vs BBRv3 and BBRv3 vs CUBIC.
/// Asserted: only that the pair keeps the link busy (the draft states goals, not shares:
/// §5.3.3.8 sizes the probing time scale so that Reno/CUBIC flows can coexist). The table
/// goes into `docs/bbr.md`.
#[test]
#[ignore = "heavy (12 runs of 60 s): run in release (CI's --ignored pass)"]
fn bbr3_shares_of_a_bottleneck() {
    println!(
        "| transport | flows | queue | flow 1 Mbit/s | flow 2 Mbit/s | share of flow 1 | Jain |"
    );
    println!("|---|---|---|---|---|---|---|");
    for transport in ["quic", "tcp"] {
        for queue in ["0.5", "1", "4"] {
            for cc in [["bbr3", "bbr3"], ["bbr3", "cubic"]] {
                let r = run(transport, cc, queue);
                let (x, y) = (rate(&r, 0), rate(&r, 1));
                println!(
                    "| {transport} | {} vs {} | {queue} BDP | {:.2} | {:.2} | {:.2} | {:.3} |",
                    cc[0],
                    cc[1],
                    x / 1e6,
                    y / 1e6,
                    x / (x + y),
                    jain(x, y)
                );
                assert!(
                    x + y >= 0.85e7,
                    "{transport} {cc:?} {queue}: {} bit/s",
                    x + y
                );
            }
        }
    }
}
