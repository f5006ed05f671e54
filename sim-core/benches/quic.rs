//! QUIC benchmarks: simulated packets per wall-clock second for a 100 MB bulk download at
//! 100 Mbit/s with a 50 ms one-way delay (100 ms RTT), clean and with 1 % Bernoulli loss on
//! the data direction, with NewReno and with CUBIC. "Packets" = every datagram handed to the
//! network (data, ACKs, handshake), i.e. the sum of `packets_sent` over the flow.
//! Run: `cargo bench -p sim-core --bench quic`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim_core::cc::{CcAlgorithm, CcParams};
use sim_core::config::{BulkSpec, Config, FlowConfig, LinkConfig, LossModel};
use sim_core::quic::QuicConfig;
use sim_core::units::Rate;
use sim_core::SimDuration;
use std::hint::black_box;

fn bulk_config_cc(loss: f64, cc: CcAlgorithm) -> Config {
    let mut down = LinkConfig::new(Rate(100_000_000), SimDuration::from_millis(50));
    // Queue of one BDP (100 Mbit/s x 100 ms = 1.25 MB).
    down.queue.bytes = Some(1_250_000);
    if loss > 0.0 {
        down.loss = LossModel::Bernoulli(sim_core::config::loss::Bernoulli { p: loss });
    }
    let mut up = LinkConfig::new(Rate(100_000_000), SimDuration::from_millis(50));
    up.queue.bytes = Some(1_250_000);
    let bulk = BulkSpec {
        bytes: 100_000_000,
        streams: 1,
        ..BulkSpec::default()
    };
    let quic = QuicConfig {
        // Windows large enough that only congestion control limits the transfer.
        stream_window: 100_000_000,
        cc: CcParams {
            algorithm: cc,
            ..CcParams::default()
        },
        ..QuicConfig::default()
    };
    let mut cfg = Config::two_hosts(up, down, vec![FlowConfig::quic_bulk(quic, bulk)]);
    cfg.sim.time_limit = SimDuration::from_secs(3600);
    cfg
}

/// The 100 MB download, clean and with 1 % loss, with controller `cc`.
fn bulk_group(c: &mut Criterion, group: &str, cc: CcAlgorithm) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for (name, loss) in [("clean", 0.0), ("loss_1pct", 0.01)] {
        let cfg = bulk_config_cc(loss, cc.clone());
        let r = sim_core::run(&cfg, 1).unwrap();
        assert_eq!(r.status, sim_core::RunStatus::Completed, "{name}");
        let packets: u64 = r.flows.iter().map(|f| f.packets_sent).sum();
        g.throughput(Throughput::Elements(packets));
        g.bench_function(
            format!(
                "{name}: {packets} packets, {} events, {:.2} s simulated",
                r.events, r.end_time_secs
            ),
            |b| b.iter(|| black_box(sim_core::run(&cfg, 1).unwrap().digest)),
        );
    }
    g.finish();
}

fn bulk(c: &mut Criterion) {
    bulk_group(c, "quic_bulk_100MB_100Mbps_50ms", CcAlgorithm::NewReno);
}

/// The same downloads with CUBIC (RFC 9438, rfc profile defaults).
fn bulk_cubic(c: &mut Criterion) {
    bulk_group(c, "quic_bulk_cubic_100MB_100Mbps_50ms", CcAlgorithm::Cubic);
}

criterion_group!(benches, bulk, bulk_cubic);
criterion_main!(benches);
