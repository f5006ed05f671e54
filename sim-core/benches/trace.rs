//! Tracing cost: the same run with the [`NoopTracer`] (what `sim_core::run` uses), with the
//! qlog writer (both formats) streaming into `std::io::sink()`, and with a tracer that only
//! counts records (the cost of building the events, without serialisation).
//! Run: `cargo bench -p sim-core --bench trace`.
//!
//! Workloads: a QUIC bulk transfer over a lossy link (endpoints emit protocol events), and
//! a saturated CBR link (only the runner's drop events).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim_core::qlog::{QlogFormat, QlogWriter};
use sim_core::runner::run_traced;
use sim_core::trace::{NoopTracer, TraceRecord};
use sim_core::Config;
use std::hint::black_box;

const QUIC: &str = r#"
name = "bench-quic"
[topology]
kind = "two_hosts"
link = { rate = "50Mbps", delay = "20ms", loss = { model = "bernoulli", p = 0.005 } }
[[flows]]
kind = "quic_bulk"
bytes = "5MB"
"#;

const CBR: &str = r#"
name = "bench-cbr"
[topology]
kind = "two_hosts"
link = { rate = "100Mbps", delay = "10ms", queue = { packets = 100 } }
[[flows]]
kind = "cbr"
rate = "200Mbps"
size = "1222B"
count = 50000
"#;

fn config(text: &str) -> Option<Config> {
    match sim_core::scenario::parse_str(text) {
        Ok(s) => Some(s.base),
        Err(e) => {
            eprintln!("trace bench: scenario skipped ({e})");
            None
        }
    }
}

fn bench_one(c: &mut Criterion, group: &str, cfg: &Config) {
    let events = sim_core::run(cfg, 1).unwrap().events;
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("noop tracer", |b| {
        b.iter(|| black_box(run_traced(cfg, 1, &mut NoopTracer).unwrap().digest))
    });
    g.bench_function("counting tracer (events built, not written)", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let mut count = |_: &TraceRecord| n += 1;
            let d = run_traced(cfg, 1, &mut count).unwrap().digest;
            black_box((d, n))
        })
    });
    for (name, fmt) in [
        ("qlog draft -> io::sink", QlogFormat::Draft),
        ("qlog qvis -> io::sink", QlogFormat::Qvis),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut w = QlogWriter::new(fmt, "bench", Box::new(|_| Ok(std::io::sink())));
                let d = run_traced(cfg, 1, &mut w).unwrap().digest;
                black_box(d)
            })
        });
    }
    g.finish();
}

fn tracing(c: &mut Criterion) {
    if let Some(cfg) = config(QUIC) {
        bench_one(c, "trace_quic_bulk", &cfg);
    }
    if let Some(cfg) = config(CBR) {
        bench_one(c, "trace_saturated_cbr", &cfg);
    }
}

criterion_group!(benches, tracing);
criterion_main!(benches);
