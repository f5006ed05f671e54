//! Dumbbell routing and sharing, loss position, corruption and time series.

use sim_core::config::*;
use sim_core::metrics::RunStatus;
use sim_core::units::{Bytes, Rate};
use sim_core::{SimDuration, SimTime};

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

fn dumbbell(pairs: usize, bottleneck: LinkConfig, flows: Vec<FlowConfig>) -> Config {
    let access = LinkConfig::new(Rate(1_000_000_000), ms(1));
    let mut cfg = Config::two_hosts(access.clone(), access.clone(), flows);
    cfg.topology = Topology::Dumbbell {
        pairs: (0..pairs)
            .map(|_| PairLinks {
                client_up: access.clone(),
                client_down: access.clone(),
                server_up: access.clone(),
                server_down: access.clone(),
            })
            .collect(),
        bottleneck_forward: bottleneck.clone(),
        bottleneck_reverse: bottleneck,
        handovers: Vec::new(),
    };
    cfg
}

fn cbr(pair: usize, direction: Direction, rate: u64, count: u64, background: bool) -> FlowConfig {
    FlowConfig {
        pair,
        background,
        app: AppConfig::Cbr {
            direction,
            rate: Rate(rate),
            size: Bytes(1222),
            start: SimTime::ZERO,
            count,
        },
    }
}

#[test]
fn dumbbell_routes_each_pair_through_the_shared_bottleneck() {
    let mut bn = LinkConfig::new(Rate(10_000_000), ms(10));
    bn.queue.packets = Some(1000);
    let cfg = dumbbell(
        3,
        bn,
        vec![
            cbr(0, Direction::Up, 2_000_000, 100, false),
            cbr(1, Direction::Down, 2_000_000, 100, false),
            cbr(2, Direction::Up, 2_000_000, 100, false),
        ],
    );
    let r = sim_core::run(&cfg, 1).unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    let by_name = |n: &str| r.links.iter().find(|l| l.name == n).unwrap();
    assert_eq!(by_name("bottleneck_forward").packets_out, 200);
    assert_eq!(by_name("bottleneck_reverse").packets_out, 100);
    assert_eq!(by_name("pair1/server_up").packets_out, 100);
    assert_eq!(by_name("pair1/client_down").packets_out, 100);
    assert_eq!(by_name("pair0/client_down").packets_out, 0);
    for f in &r.flows {
        assert_eq!(f.packets_delivered, 100);
    }
    // One-way delay of an uncongested packet: 3 links of serialization + propagation.
    // 10_000 bits: 10 us at 1 Gbit/s (x2), 1 ms at 10 Mbit/s; delays 1 + 10 + 1 ms.
    if let sim_core::metrics::EndpointMetrics::CbrSink {
        delay_min_secs: Some(d),
        ..
    } = &r.flows[0].endpoints[1]
    {
        assert!((d - 0.01302).abs() < 1e-12, "{d}");
    } else {
        panic!()
    }
}

#[test]
fn background_flows_do_not_hold_completion() {
    let bn = LinkConfig::new(Rate(10_000_000), ms(10));
    let cfg = dumbbell(
        2,
        bn,
        vec![
            cbr(0, Direction::Up, 1_000_000, 10, false),
            cbr(1, Direction::Up, 1_000_000, 1_000_000, true),
        ],
    );
    let r = sim_core::run(&cfg, 1).unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    assert!(r.end_time < SimTime(ms(200).0));
}

#[test]
fn egress_loss_uses_link_time_and_ingress_loss_does_not() {
    let mut busy = Vec::new();
    for pos in [LossPosition::Ingress, LossPosition::Egress] {
        let mut l = LinkConfig::new(Rate(10_000_000), ms(1));
        l.loss = LossModel::Periodic(sim_core::config::loss::Periodic {
            every: 2,
            offset: 0,
        });
        l.loss_position = pos;
        let cfg = Config::two_hosts(
            l,
            LinkConfig::new(Rate(10_000_000), ms(1)),
            vec![FlowConfig::cbr_up(Rate(1_000_000), Bytes(1222), 100)],
        );
        let r = sim_core::run(&cfg, 1).unwrap();
        assert_eq!(r.drops.loss_periodic, 50);
        busy.push(r.links[0].busy_secs);
    }
    // 1 ms of serialization per packet: 50 packets at ingress, 100 at egress.
    assert!(
        (busy[0] - 0.050).abs() < 1e-9 && (busy[1] - 0.100).abs() < 1e-9,
        "{busy:?}"
    );
}

#[test]
fn corrupted_packets_use_link_time_and_are_discarded() {
    let mut l = LinkConfig::new(Rate(10_000_000), ms(1));
    l.corruption = 0.25;
    let cfg = Config::two_hosts(
        l,
        LinkConfig::new(Rate(10_000_000), ms(1)),
        vec![FlowConfig::cbr_up(Rate(1_000_000), Bytes(1222), 4000)],
    );
    let r = sim_core::run(&cfg, 1).unwrap();
    let c = r.drops.corruption;
    // Binomial(4000, 0.25): sd = 27.4; 4 sigma.
    assert!((c as f64 - 1000.0).abs() < 4.0 * 27.4, "{c}");
    assert_eq!(r.links[0].corrupted, c);
    assert_eq!(r.links[0].packets_out, 4000);
    assert_eq!(r.flows[0].packets_delivered, 4000 - c);
}

#[test]
fn series_sample_queue_and_delivered_bytes() {
    let mut l = LinkConfig::new(Rate(10_000_000), ms(5));
    l.queue.packets = Some(30);
    let mut cfg = Config::two_hosts(
        l,
        LinkConfig::new(Rate(10_000_000), ms(5)),
        vec![FlowConfig::cbr_up(Rate(20_000_000), Bytes(1222), 200)],
    );
    cfg.output.series = true;
    cfg.output.sample_interval = ms(10);
    let r = sim_core::run(&cfg, 1).unwrap();
    let s = r.series.unwrap();
    assert_eq!(s.columns[0], "time_s");
    let qcol = s
        .columns
        .iter()
        .position(|c| c == "forward.queue_packets")
        .unwrap();
    let dcol = s
        .columns
        .iter()
        .position(|c| c == "flow0.delivered_bytes")
        .unwrap();
    assert!(s.rows.iter().any(|row| row[qcol] == 30.0));
    assert!(s.rows.iter().all(|row| row[qcol] <= 30.0));
    // Delivered bytes never decrease and sampling stops once the run is over.
    assert!(s.rows.windows(2).all(|w| w[1][dcol] >= w[0][dcol]));
    assert!(s.rows.last().unwrap()[0] <= r.end_time_secs + 0.010);
    assert_eq!(s.rows[1][0], 0.010);
}

/// Every series row has one value per column, across handovers (which add links at run
/// time): the columns of a handover's links exist from the start and read 0 (an empty
/// queue) until it fires, so a column keeps its meaning in every row.
#[test]
fn series_rows_keep_their_columns_across_handovers() {
    let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "5ms" }
[[topology.handovers]]
at = "150ms"
forward = { rate = "20Mbps", delay = "2ms" }
reverse = { rate = "20Mbps", delay = "2ms" }
[[flows]]
transport = "quic"
workload = { kind = "bulk", bytes = "500kB" }
[output]
series = true
sample_interval = "10ms"
"#;
    let cfg = sim_core::scenario::parse_str(text).unwrap().base;
    let r = sim_core::run(&cfg, 1).unwrap();
    let s = r.series.unwrap();
    assert!(s.rows.iter().all(|row| row.len() == s.columns.len()));
    let col = |name: &str| s.columns.iter().position(|c| c == name).unwrap();
    let (cwnd, delivered) = (col("flow0.ep1.cwnd"), col("flow0.delivered_bytes"));
    let fwd = col("handover0/forward.queue_packets");
    let before: Vec<_> = s.rows.iter().filter(|r| r[0] < 0.15).collect();
    let after: Vec<_> = s.rows.iter().filter(|r| r[0] > 0.15).collect();
    assert!(before.iter().all(|r| r[fwd] == 0.0));
    // The server's window stays a window (not some other column's value) and delivered
    // bytes keep growing after the handover.
    assert!(after.iter().all(|r| r[cwnd] > 0.0 && r[cwnd] < 1e8));
    assert!(after.last().unwrap()[delivered] > before.last().unwrap()[delivered]);
}
