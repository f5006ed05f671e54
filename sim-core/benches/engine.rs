//! Engine benchmarks: the scheduler alone, and a saturated link (CBR at twice the link
//! rate into a drop-tail queue). Throughput is reported per event / per packet offered.
//! Run: `cargo bench -p sim-core --bench engine`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use sim_core::config::{Config, FlowConfig, LinkConfig};
use sim_core::engine::Scheduler;
use sim_core::units::{Bytes, Rate};
use sim_core::{SimDuration, SimTime};
use std::hint::black_box;

fn scheduler(c: &mut Criterion) {
    let n: u64 = 1_000_000;
    let mut g = c.benchmark_group("scheduler");
    g.throughput(Throughput::Elements(n));
    g.bench_function("schedule+pop 1M events, 1k pending", |b| {
        b.iter_batched(
            Scheduler::<u64>::new,
            |mut s| {
                // Keep ~1000 events pending, as a busy network does.
                for i in 0..1000u64 {
                    s.schedule(SimTime(i * 7919 % 10_000), i);
                }
                let mut x = 0u64;
                for i in 0..n {
                    let (t, v) = s.pop().unwrap();
                    x ^= v;
                    s.schedule(SimTime(t.0 + 1 + (i * 7919) % 10_000), i);
                }
                black_box(x)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn saturated_link(c: &mut Criterion) {
    let packets: u64 = 200_000;
    let mut link = LinkConfig::new(Rate(100_000_000), SimDuration::from_millis(10));
    link.queue.packets = Some(100);
    let cfg = Config::two_hosts(
        link.clone(),
        link,
        vec![FlowConfig::cbr_up(Rate(200_000_000), Bytes(1222), packets)],
    );
    let events = sim_core::run(&cfg, 1).unwrap().events;
    let mut g = c.benchmark_group("saturated_link");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function(
        format!("CBR 200 Mbit/s into 100 Mbit/s, {packets} packets ({events} events)"),
        |b| b.iter(|| black_box(sim_core::run(&cfg, 1).unwrap().digest)),
    );
    g.finish();
}

criterion_group!(benches, scheduler, saturated_link);
criterion_main!(benches);
