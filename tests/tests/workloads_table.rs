//! Every workload of the table (`config::workload`'s `workloads!` list) runs to completion
//! over every transport that runs it: its example, written as a scenario writes it, on a
//! clean 10 Mbit/s, 10 ms link. A workload that neither has a runner (`flows`) nor lowers
//! to one fails here.

use sim_core::config::workload::examples;
use sim_core::metrics::RunStatus;
use sim_core::scenario::{parse_str, schema};

#[test]
fn every_workload_runs_over_every_transport_that_runs_it() {
    let mut ran = 0;
    for w in examples() {
        for t in schema::TRANSPORTS.iter().filter(|t| w.runs_on(t)) {
            let text = format!(
                "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ntransport = \"{t}\"\nworkload = {}\n",
                toml::Value::try_from(&w).unwrap()
            );
            let s = parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let r = sim_core::run(&s.base, 1).unwrap();
            assert_eq!(r.status, RunStatus::Completed, "{} over {t}", w.kind());
            ran += 1;
        }
    }
    // Each workload at least once.
    assert!(ran >= examples().len());
}
