//! `rate = { trace = "..." }`: reading, errors by file and line, the resolved form, and a
//! run over a trace (deterministic).

use super::*;
use crate::config::trace::digest;
use crate::config::{LinkConfig, Topology};
use crate::units::Rate;
use std::collections::BTreeMap;

const DOC: &str = "[topology]\nkind = \"two_hosts\"\nlink = { delay = \"10ms\" }\n";

/// Parses `extra` after a two_hosts topology, trace files served from `files`.
fn with_files(extra: &str, files: &[(&str, &str)]) -> Result<Scenario, ConfigError> {
    let files: BTreeMap<String, String> = files
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let load = |name: &str| {
        files
            .get(name)
            .cloned()
            .ok_or_else(|| format!("{name}: no such file"))
    };
    parse_str_with_traces(&format!("{DOC}{extra}"), &load)
}

fn forward(s: &Scenario) -> &LinkConfig {
    match &s.base.topology {
        Topology::TwoHosts { forward, .. } => forward,
        _ => panic!("two_hosts"),
    }
}

#[test]
fn a_trace_is_read_and_carried_whole() {
    let s = with_files(
        "forward = { rate = { trace = \"a.trace\" } }\n",
        &[("a.trace", "1\n2\n2\n10\n")],
    )
    .unwrap();
    let f = forward(&s);
    let t = f.trace.as_ref().expect("a trace");
    assert_eq!(t.trace, "a.trace");
    assert_eq!(t.opportunities_ms, vec![1, 2, 2, 10]);
    assert_eq!(t.digest, digest(&[1, 2, 2, 10]));
    // The mean rate, 4 × 12 000 bit per 10 ms, sizes the default 1BDP queue (20 ms RTT).
    assert_eq!(f.rate, Rate(4_800_000));
    assert_eq!(f.queue.bytes, Some(4_800_000 * 20 / 1000 / 8));
    // The resolved form carries the trace: it parses again without the file.
    let text = to_toml(&s.base).unwrap();
    assert!(text.contains("opportunities_ms"), "{text}");
    assert_eq!(parse_str(&text).unwrap().base, s.base);
    s.base.validate().unwrap();
    // Reading the same trace twice gives the same digest; another trace another one.
    let again = with_files(
        "forward = { rate = { trace = \"b.trace\" } }\n",
        &[("b.trace", "1\n2\n2\n10\n")],
    )
    .unwrap();
    assert_eq!(forward(&again).trace.as_ref().unwrap().digest, t.digest);
    let other = with_files(
        "forward = { rate = { trace = \"a.trace\" } }\n",
        &[("a.trace", "1\n2\n3\n10\n")],
    )
    .unwrap();
    assert_ne!(forward(&other).trace.as_ref().unwrap().digest, t.digest);
}

#[test]
fn trace_errors_name_the_file_and_the_line() {
    let e = |trace: &str| {
        with_files(
            "forward = { rate = { trace = \"a.trace\" } }\n",
            &[("a.trace", trace)],
        )
        .unwrap_err()
        .to_string()
    };
    let m = e("1\n2\nfast\n");
    assert!(
        m.starts_with("topology.forward.rate.trace: \"a.trace\" line 3 is not allowed"),
        "{m}"
    );
    assert!(m.contains("\"fast\" is not an integer"), "{m}");
    let m = e("1\n5\n4\n");
    assert!(
        m.contains("\"a.trace\" line 3") && m.contains("non-decreasing"),
        "{m}"
    );
    let m = e("");
    assert!(
        m.contains("\"a.trace\" is not allowed") && m.contains("empty trace"),
        "{m}"
    );
    let m = e("0\n");
    assert!(
        m.contains("line 1") && m.contains("last timestamp is 0"),
        "{m}"
    );
    let m = e("2.5\n");
    assert!(m.contains("line 1"), "{m}");
    // A missing file.
    let m = with_files("forward = { rate = { trace = \"nope.trace\" } }\n", &[])
        .unwrap_err()
        .to_string();
    assert!(
        m.starts_with("topology.forward.rate.trace: \"nope.trace\" is not allowed: expected a readable trace file (nope.trace: no such file)"),
        "{m}"
    );
    // Without a loader (the browser): refused, saying why.
    let m = parse_str(&format!(
        "{DOC}forward = {{ rate = {{ trace = \"a.trace\" }} }}\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(m.contains("cannot use one"), "{m}");
    // Keys of a trace table, and a rate change on a trace link.
    let m = with_files(
        "forward = { rate = { trace = \"a.trace\", speed = 1 } }\n",
        &[("a.trace", "1\n")],
    )
    .unwrap_err();
    assert_eq!(m.field, "topology.forward.rate.speed");
    let m = with_files(
        "forward = { rate = { trace = \"a.trace\" }, changes = [{ at = \"1s\", rate = \"1Mbps\" }] }\n",
        &[("a.trace", "1\n")],
    )
    .unwrap_err();
    assert_eq!(m.field, "topology.forward.changes[0].rate", "{m}");
    // A wrong digest in an inline trace.
    let m = parse_str(&format!(
        "{DOC}forward = {{ rate = {{ trace = \"a\", opportunities_ms = [1, 2], digest = \"fnv1a64:0000000000000000\" }} }}\n"
    ))
    .unwrap_err();
    assert_eq!(m.field, "topology.forward.rate.digest", "{m}");
}

#[test]
fn a_trace_in_every_place_a_link_is_written() {
    let files = [("t", "1\n3\n")];
    // Both directions of two_hosts.
    let s = with_files(
        "forward = { rate = { trace = \"t\" } }\nreverse = { rate = { trace = \"t\" } }\n",
        &files,
    )
    .unwrap();
    match &s.base.topology {
        Topology::TwoHosts {
            forward, reverse, ..
        } => {
            assert!(forward.trace.is_some() && reverse.trace.is_some());
        }
        _ => unreachable!(),
    }
    // A dumbbell's bottleneck and access links, a handover's links.
    let dumbbell = "[topology]\nkind = \"dumbbell\"\npairs = 1\nbottleneck = { rate = { trace = \"t\" }, delay = \"5ms\" }\naccess = { rate = { trace = \"t\" } }\n[[topology.handovers]]\nat = \"1s\"\nlink = { rate = { trace = \"t\" } }\n";
    let load = |_: &str| Ok("1\n3\n".to_string());
    let s = parse_str_with_traces(dumbbell, &load).unwrap();
    let Topology::Dumbbell {
        pairs,
        bottleneck_forward,
        handovers,
        ..
    } = &s.base.topology
    else {
        panic!("dumbbell")
    };
    assert!(bottleneck_forward.trace.is_some());
    assert!(pairs[0].client_up.trace.is_some() && pairs[0].server_down.trace.is_some());
    assert!(handovers[0].forward.trace.is_some() && handovers[0].reverse.trace.is_some());
    // A sweep over traces.
    let s = with_files(
        "[sweep]\n\"topology.forward.rate\" = [{ trace = \"t\" }, \"5Mbps\"]\n",
        &files,
    )
    .unwrap();
    assert!(s.points[0].config.topology != s.points[1].config.topology);
}

#[test]
fn the_trace_example_runs_deterministically() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/examples/quic-trace-4g.toml"),
    )
    .unwrap();
    let s = super::tests::parse_example(&text).unwrap();
    let cfg = s.base;
    let a = crate::run(&cfg, cfg.seed).unwrap();
    let b = crate::run(&cfg, cfg.seed).unwrap();
    assert_eq!(a.status, crate::RunStatus::Completed);
    assert_eq!(a.digest, b.digest);
    assert_eq!(a.flows, b.flows);
}
