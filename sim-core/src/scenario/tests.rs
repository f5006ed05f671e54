use super::*;
use crate::config::*;
use crate::time::{SimDuration, SimTime};
use crate::units::{Bytes, Rate};

/// A minimal valid document with `extra` appended.
fn doc(extra: &str) -> String {
    format!("[topology]\nkind = \"two_hosts\"\n{extra}")
}

fn ok(text: &str) -> Config {
    match parse_str(text) {
        Ok(s) => s.base,
        Err(e) => panic!("unexpected error: {e}\n--- document ---\n{text}"),
    }
}

fn err(text: &str) -> ConfigError {
    match parse_str(text) {
        Ok(_) => panic!("document should be rejected:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts the exact field and that `allowed` mentions `allowed_part`.
#[track_caller]
fn assert_err(text: &str, field: &str, allowed_part: &str) -> ConfigError {
    let e = err(text);
    assert_eq!(e.field, field, "wrong field in: {e}");
    assert!(
        e.allowed.contains(allowed_part),
        "`allowed` of {e} should mention {allowed_part:?}"
    );
    e
}

fn two_hosts(cfg: &Config) -> (&LinkConfig, &LinkConfig, &[Handover]) {
    match &cfg.topology {
        Topology::TwoHosts {
            forward,
            reverse,
            handovers,
        } => (forward, reverse, handovers),
        Topology::Dumbbell { .. } => panic!("expected two_hosts"),
    }
}

fn dumbbell(cfg: &Config) -> (&[PairLinks], &LinkConfig, &LinkConfig, &[Handover]) {
    match &cfg.topology {
        Topology::Dumbbell {
            pairs,
            bottleneck_forward,
            bottleneck_reverse,
            handovers,
        } => (pairs, bottleneck_forward, bottleneck_reverse, handovers),
        Topology::TwoHosts { .. } => panic!("expected dumbbell"),
    }
}

fn cbr(flow: &FlowConfig) -> (Direction, Rate, Bytes, SimTime, u64) {
    let AppConfig::Cbr {
        direction,
        rate,
        size,
        start,
        count,
    } = &flow.app
    else {
        panic!("expected a cbr flow")
    };
    (*direction, *rate, *size, *start, *count)
}

fn forward_loss(text: &str) -> LossModel {
    two_hosts(&ok(text)).0.loss.clone()
}

fn examples_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/examples")
}

fn examples() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(examples_dir())
        .expect("scenarios/examples exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Parses an example, reading the trace files it names relative to `scenarios/examples`.
pub(super) fn parse_example(text: &str) -> Result<Scenario, ConfigError> {
    let load = |name: &str| {
        std::fs::read_to_string(examples_dir().join(name)).map_err(|e| format!("{name}: {e}"))
    };
    parse_str_with_traces(text, &load)
}

#[track_caller]
fn assert_round_trip(cfg: &Config) {
    let text = to_toml(cfg).unwrap_or_else(|e| panic!("to_toml failed: {e}"));
    let back = parse_str(&text).unwrap_or_else(|e| panic!("re-parse failed: {e}\n{text}"));
    assert_eq!(&back.base, cfg, "round trip changed the config:\n{text}");
    assert_eq!(back.points.len(), 1);
}

// ---------------------------------------------------------------- defaults and resolution

#[test]
fn defaults_are_as_documented() {
    let c = ok(&doc(""));
    assert_eq!(c.name, "scenario");
    assert_eq!(c.description, "");
    assert_eq!(c.seed, 1);
    assert_eq!(c.runs, 1);
    assert_eq!(c.sim.time_limit, SimDuration::from_secs(600));
    assert_eq!(c.sim.max_events, 100_000_000);
    assert!(c.flows.is_empty(), "no flows is allowed: an empty network");
    assert!(!c.output.series);
    assert_eq!(c.output.sample_interval, SimDuration::from_millis(10));
    let (f, r, h) = two_hosts(&c);
    assert!(h.is_empty());
    for l in [f, r] {
        assert_eq!(l.rate, Rate(100_000_000));
        assert_eq!(l.delay, SimDuration::from_millis(10));
        assert_eq!(l.overhead, Bytes(28));
        // 1BDP = 100 Mbit/s x 20 ms / 8 = 250 000 B.
        assert_eq!(
            l.queue,
            QueueLimit {
                bytes: Some(250_000),
                packets: None
            }
        );
        assert_eq!(l.loss, LossModel::NONE);
        assert_eq!(l.loss_position, LossPosition::Ingress);
        assert_eq!(l.corruption, 0.0);
        assert_eq!(l.jitter, None);
        assert!(l.changes.is_empty());
    }
}

/// `Config::two_hosts` and `LinkConfig::new` (for configs built in code) give the
/// defaults the descriptors give a scenario (except the queue, unlimited in code).
#[test]
fn code_built_defaults_match_the_descriptors() {
    let parsed = ok(&doc(""));
    let (f, r, _) = two_hosts(&parsed);
    let built = Config::two_hosts(
        LinkConfig {
            queue: f.queue,
            ..LinkConfig::new(f.rate, f.delay)
        },
        LinkConfig {
            queue: r.queue,
            ..LinkConfig::new(r.rate, r.delay)
        },
        Vec::new(),
    );
    assert_eq!(built, parsed);
}

#[test]
fn cbr_defaults_and_count_from_default_duration() {
    let c = ok(&doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\n"));
    let f = &c.flows[0];
    assert_eq!(f.pair, 0);
    assert!(!f.background);
    let (dir, rate, size, start, count) = cbr(f);
    assert_eq!(dir, Direction::Up);
    assert_eq!(rate, Rate(1_000_000));
    assert_eq!(size, Bytes(1200));
    assert_eq!(start, SimTime::ZERO);
    // 10 s x 1 Mbit/s / (1228 B x 8) = 1017.9 -> 1018.
    assert_eq!(count, 1018);
}

#[test]
fn count_from_duration() {
    let count =
        |extra: &str| cbr(&ok(&doc(&format!("[[flows]]\nkind = \"cbr\"\n{extra}"))).flows[0]).4;
    // 1 s x 1 Mbit/s / (1028 B x 8) = 121.6 -> 122.
    assert_eq!(
        count("rate = \"1Mbps\"\nsize = \"1000B\"\nduration = \"1s\""),
        122
    );
    // Exact: 1228 B x 8 = 9824 bit; at 9824 bit/s, 3 s = 3 datagrams (not 4).
    assert_eq!(count("rate = 9824\nduration = \"3s\""), 3);
    // Any positive duration sends at least one datagram.
    assert_eq!(count("rate = \"1Mbps\"\nduration = \"1ns\""), 1);
    // count given directly.
    assert_eq!(count("rate = \"1Mbps\"\ncount = 7"), 7);
    assert_eq!(
        build::cbr_count(SimDuration::from_secs(1), Rate(9824), Bytes(1200)),
        Some(1)
    );
}

#[test]
fn bdp_two_hosts() {
    let c = ok(&doc(
        "forward = { rate = \"10Mbps\", delay = \"30ms\" }\nreverse = { rate = \"5Mbps\", delay = \"10ms\", queue = \"0.5BDP\" }\n",
    ));
    let (f, r, _) = two_hosts(&c);
    // RTT = 30 + 10 = 40 ms. Forward 10 Mbit/s x 40 ms / 8 = 50 000 B; reverse 0.5 x 25 000.
    assert_eq!(f.queue.bytes, Some(50_000));
    assert_eq!(r.queue.bytes, Some(12_500));
    // Floor: 12345 bit/s x 2 x 1.5 ms / 8 = 4.63 -> 4 B.
    let c = ok(&doc("link = { rate = 12345, delay = \"1.5ms\" }\n"));
    assert_eq!(two_hosts(&c).0.queue.bytes, Some(4));
}

#[test]
fn bdp_dumbbell() {
    let c = ok("[topology]\nkind = \"dumbbell\"\npairs = 2\n");
    let (pairs, bf, br, _) = dumbbell(&c);
    // RTT = 1 + 10 + 1 + 1 + 10 + 1 = 24 ms.
    assert_eq!(bf.rate, Rate(100_000_000));
    assert_eq!(bf.delay, SimDuration::from_millis(10));
    assert_eq!(bf.queue.bytes, Some(300_000));
    assert_eq!(br.queue.bytes, Some(300_000));
    for p in pairs {
        for l in [&p.client_up, &p.client_down, &p.server_up, &p.server_down] {
            assert_eq!(l.rate, Rate(1_000_000_000));
            assert_eq!(l.delay, SimDuration::from_millis(1));
            assert_eq!(l.queue.bytes, Some(3_000_000));
        }
    }
    // Pair 1 gets longer client links: its own RTT, while the bottleneck keeps pair 0's.
    let c = ok("[topology]\nkind = \"dumbbell\"\npairs = 2\nbottleneck_forward = { rate = \"10Mbps\" }\n\
        [[topology.pair]]\nindex = 1\nclient_up = { delay = \"20ms\" }\nclient_down = { delay = \"20ms\" }\n");
    let (pairs, bf, br, _) = dumbbell(&c);
    assert_eq!(bf.queue.bytes, Some(30_000)); // 10 Mbit/s x 24 ms / 8
    assert_eq!(br.queue.bytes, Some(300_000));
    // Pair 1: RTT = 20 + 10 + 1 + 1 + 10 + 20 = 62 ms at 1 Gbit/s.
    assert_eq!(pairs[1].client_up.queue.bytes, Some(7_750_000));
    assert_eq!(pairs[1].server_up.queue.bytes, Some(7_750_000));
    assert_eq!(pairs[0].client_up.queue.bytes, Some(3_000_000));
}

#[test]
fn link_layering_two_hosts() {
    let c = ok(&doc(
        "link = { rate = \"10Mbps\", delay = \"5ms\", loss = \"1%\" }\nforward = { delay = \"7ms\" }\nreverse = { loss = 0 }\n",
    ));
    let (f, r, _) = two_hosts(&c);
    assert_eq!(
        (f.rate, f.delay),
        (Rate(10_000_000), SimDuration::from_millis(7))
    );
    assert_eq!(
        f.loss,
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.01 })
    );
    assert_eq!(
        (r.rate, r.delay),
        (Rate(10_000_000), SimDuration::from_millis(5))
    );
    assert_eq!(
        r.loss,
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.0 })
    );
}

#[test]
fn link_layering_dumbbell() {
    let c = ok("[topology]\nkind = \"dumbbell\"\npairs = 3\n\
        access = { rate = \"100Mbps\", delay = \"2ms\" }\n\
        client_access = { delay = \"3ms\" }\n\
        server_access = { rate = \"200Mbps\" }\n\
        bottleneck = { rate = \"10Mbps\" }\n\
        bottleneck_reverse = { delay = \"20ms\" }\n\
        [[topology.pair]]\nindex = 2\nclient_up = { rate = \"5Mbps\" }\nserver_down = { delay = \"9ms\" }\n");
    let (pairs, bf, br, _) = dumbbell(&c);
    assert_eq!(
        (bf.rate, bf.delay),
        (Rate(10_000_000), SimDuration::from_millis(10))
    );
    assert_eq!(
        (br.rate, br.delay),
        (Rate(10_000_000), SimDuration::from_millis(20))
    );
    let p0 = &pairs[0];
    assert_eq!(
        (p0.client_up.rate, p0.client_up.delay),
        (Rate(100_000_000), SimDuration::from_millis(3))
    );
    assert_eq!(
        (p0.server_up.rate, p0.server_up.delay),
        (Rate(200_000_000), SimDuration::from_millis(2))
    );
    let p2 = &pairs[2];
    assert_eq!(
        (p2.client_up.rate, p2.client_up.delay),
        (Rate(5_000_000), SimDuration::from_millis(3))
    );
    assert_eq!(p2.client_down.rate, Rate(100_000_000));
    assert_eq!(
        (p2.server_down.rate, p2.server_down.delay),
        (Rate(200_000_000), SimDuration::from_millis(9))
    );
}

#[test]
fn loss_spellings() {
    assert_eq!(
        forward_loss(&doc("forward = { loss = 0.02 }")),
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.02 })
    );
    assert_eq!(
        forward_loss(&doc("forward = { loss = \"2%\" }")),
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.02 })
    );
    assert_eq!(
        forward_loss(&doc("forward = { loss = \"none\" }")),
        LossModel::NONE
    );
    assert_eq!(
        forward_loss(&doc("forward = { loss = { model = \"none\" } }")),
        LossModel::NONE
    );
    assert_eq!(
        forward_loss(&doc(
            "forward = { loss = { model = \"bernoulli\", p = \"0.1%\" } }"
        )),
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.001 })
    );
    assert_eq!(
        forward_loss(&doc(
            "forward = { loss = { model = \"periodic\", every = 10 } }"
        )),
        // Default offset: the every-th packet, index every - 1.
        LossModel::Periodic(crate::config::loss::Periodic {
            every: 10,
            offset: 9
        })
    );
    assert_eq!(
        forward_loss(&doc(
            "forward = { loss = { model = \"gilbert_elliott\", p = 0.05, r = 0.3 } }"
        )),
        LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 0.05,
            r: 0.3,
            k: 1.0,
            h: 0.0
        })
    );
    assert_eq!(
        forward_loss(&doc("forward = { loss = { model = \"four_state\", p13 = 0.01, p31 = 0.5, p32 = 0.1, p23 = 0.2, p14 = 0.001 } }")),
        LossModel::FourState(crate::config::loss::FourState { p13: 0.01, p31: 0.5, p32: 0.1, p23: 0.2, p14: 0.001 })
    );
}

#[test]
fn gemodel_conversion() {
    let ge = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
        p: 0.00125,
        r: 0.125,
        k: 0.955,
        h: 0.5,
    });
    assert_eq!(
        forward_loss(&doc(
            "forward = { loss = { model = \"gilbert_elliott\", gemodel = \"0.125 12.5 50 4.5\" } }"
        )),
        ge
    );
    assert_eq!(
        forward_loss(&doc("forward = { loss = { model = \"gilbert_elliott\", gemodel = \"0.125% 12.5% 50% 4.5%\" } }")),
        ge
    );
    // The canonical spelling gives the same model.
    assert_eq!(
        forward_loss(&doc("forward = { loss = { model = \"gilbert_elliott\", p = 0.00125, r = 0.125, h = 0.5, k = 0.955 } }")),
        ge
    );
    // Simple Gilbert: 1-h = 100 %, 1-k = 0 %.
    assert_eq!(
        forward_loss(&doc(
            "forward = { loss = { model = \"gilbert_elliott\", gemodel = \"5 30 100 0\" } }"
        )),
        LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 0.05,
            r: 0.3,
            k: 1.0,
            h: 0.0
        })
    );
}

#[test]
fn gemodel_errors() {
    let path = "topology.forward.loss.gemodel";
    for g in ["\"1 10 50\"", "\"1 10 50 101\"", "\"1 x 50 4\"", "5"] {
        assert_err(
            &doc(&format!(
                "forward = {{ loss = {{ model = \"gilbert_elliott\", gemodel = {g} }} }}"
            )),
            path,
            "\"p r 1-h 1-k\"",
        );
    }
    // p = r = 0 in the netem spelling is reported at gemodel.
    assert_err(
        &doc("forward = { loss = { model = \"gilbert_elliott\", gemodel = \"0 0 50 4\" } }"),
        path,
        "p + r > 0",
    );
}

#[test]
fn queue_forms() {
    let q = |s: &str| {
        two_hosts(&ok(&doc(&format!("link = {{ queue = {s} }}"))))
            .0
            .queue
    };
    assert_eq!(
        q("\"64KB\""),
        QueueLimit {
            bytes: Some(64_000),
            packets: None
        }
    );
    assert_eq!(
        q("100"),
        QueueLimit {
            bytes: None,
            packets: Some(100)
        }
    );
    assert_eq!(
        q("\"unlimited\""),
        QueueLimit {
            bytes: None,
            packets: None
        }
    );
    assert_eq!(
        q("{}"),
        QueueLimit {
            bytes: None,
            packets: None
        }
    );
    assert_eq!(
        q("{ bytes = \"1BDP\", packets = 100 }"),
        QueueLimit {
            bytes: Some(250_000),
            packets: Some(100)
        }
    );
    assert_eq!(
        q("{ bytes = 1500 }"),
        QueueLimit {
            bytes: Some(1500),
            packets: None
        }
    );
    assert_eq!(q("\"2BDP\"").bytes, Some(500_000));
}

#[test]
fn jitter_forms() {
    let j = |s: &str| {
        two_hosts(&ok(&doc(&format!("link = {{ jitter = {s} }}"))))
            .0
            .jitter
    };
    assert_eq!(
        j("\"5ms\""),
        Some(Jitter {
            distribution: JitterDistribution::Uniform,
            amount: SimDuration::from_millis(5),
            reorder: false
        })
    );
    assert_eq!(
        j("{ amount = \"2ms\", distribution = \"normal\", reorder = true }"),
        Some(Jitter {
            distribution: JitterDistribution::Normal,
            amount: SimDuration::from_millis(2),
            reorder: true
        })
    );
}

#[test]
fn changes_parse() {
    let c = ok(&doc(
        "[[topology.forward.changes]]\nat = \"1s\"\nrate = \"0bps\"\n[[topology.forward.changes]]\nat = \"1.5s\"\nrate = \"10Mbps\"\nloss = \"1%\"\ndelay = \"5ms\"\ncorruption = 0.001\n",
    ));
    let ch = &two_hosts(&c).0.changes;
    assert_eq!(ch.len(), 2);
    assert_eq!(ch[0].at, SimTime(1_000_000_000));
    assert_eq!(ch[0].rate, Some(Rate(0)));
    assert_eq!(ch[0].delay, None);
    assert_eq!(
        ch[1].loss,
        Some(LossModel::Bernoulli(crate::config::loss::Bernoulli {
            p: 0.01
        }))
    );
    assert_eq!(ch[1].corruption, Some(0.001));
    assert!(two_hosts(&c).1.changes.is_empty());
}

#[test]
fn handovers_sorted_inherit_and_resize() {
    let c = ok(&doc(
        "link = { rate = \"50Mbps\", delay = \"10ms\", loss = \"1%\" }\n\
         [[topology.forward.changes]]\nat = \"0.5s\"\ndelay = \"12ms\"\n\
         [[topology.handovers]]\nat = \"4s\"\naddress = \"none\"\nforward = { rate = \"3Mbps\" }\n\
         [[topology.handovers]]\nat = \"2s\"\nlink = { rate = \"10Mbps\", delay = \"40ms\" }\naddress = \"port\"\n",
    ));
    let (_, _, h) = two_hosts(&c);
    assert_eq!(h.len(), 2);
    // Sorted by time.
    assert_eq!(h[0].at, SimTime(2_000_000_000));
    assert_eq!(h[0].address, AddressChange::Port);
    assert_eq!(h[1].address, AddressChange::None);
    // Keys not given are inherited from the replaced link, except its changes.
    assert_eq!(
        h[0].forward.loss,
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.01 })
    );
    assert!(h[0].forward.changes.is_empty());
    assert_eq!(h[0].forward.rate, Rate(10_000_000));
    // The queue is sized for the new round trip: 10 Mbit/s x 80 ms / 8.
    assert_eq!(h[0].forward.queue.bytes, Some(100_000));
    // The second handover replaces the links of the first.
    assert_eq!(h[1].forward.rate, Rate(3_000_000));
    assert_eq!(h[1].forward.delay, SimDuration::from_millis(40));
    assert_eq!(h[1].reverse.rate, Rate(10_000_000));
    assert_eq!(h[1].forward.queue.bytes, Some(30_000));
}

#[test]
fn handover_dumbbell_rtt() {
    let c = ok("[topology]\nkind = \"dumbbell\"\npairs = 2\n\
        [[topology.handovers]]\nat = \"1s\"\npair = 1\nlink = { rate = \"10Mbps\", delay = \"20ms\" }\n");
    let (_, _, _, h) = dumbbell(&c);
    assert_eq!(h[0].pair, 1);
    // RTT = 20 + 10 + 1 + 1 + 10 + 20 = 62 ms at 10 Mbit/s.
    assert_eq!(h[0].forward.queue.bytes, Some(77_500));
    assert_eq!(h[0].reverse.queue.bytes, Some(77_500));
}

#[test]
fn top_level_and_output_keys() {
    let c = ok(&doc(
        "[sim]\ntime_limit = \"30s\"\nmax_events = 5\n[output]\nseries = true\nsample_interval = \"1ms\"\n",
    ));
    assert_eq!(c.sim.time_limit, SimDuration::from_secs(30));
    assert_eq!(c.sim.max_events, 5);
    assert!(c.output.series);
    assert_eq!(c.output.sample_interval, SimDuration::from_millis(1));
    let c = ok(&format!(
        "name = \"x\"\ndescription = \"d\"\nseed = 9\nruns = 3\n{}",
        doc("")
    ));
    assert_eq!(
        (c.name.as_str(), c.description.as_str(), c.seed, c.runs),
        ("x", "d", 9, 3)
    );
    let c = ok(&format!("seed = \"18446744073709551615\"\n{}", doc("")));
    assert_eq!(c.seed, u64::MAX);
}

// ---------------------------------------------------------------- one test per rule

#[test]
fn rule_toml_syntax_error_has_line_and_column() {
    let e = err("[topology]\nkind = \"two_hosts\"\nlink = { rate = \"10Mbps }\n");
    assert!(e.field.starts_with("line 3, column"), "{e}");
    assert!(e.field.contains("[topology]"), "{e}");
    assert!(e.allowed.starts_with("valid TOML"), "{e}");
    let e = err("[sim]\na = 1\na = 2\n");
    assert_eq!(e.field, "line 3, column 1 (in [sim])", "{e}");
    assert_eq!(e.value, "a = 2");
}

#[test]
fn rule_unknown_key() {
    let e = assert_err(
        &format!("colour = 1\n{}", doc("")),
        "colour",
        "unknown field `colour`",
    );
    assert!(
        e.allowed.contains("`topology`"),
        "the expected keys are listed: {e}"
    );
    let e = assert_err(
        &doc("link = { rat = \"1Mbps\" }"),
        "topology.link.rat",
        "unknown field `rat`",
    );
    assert!(e.allowed.contains("`rate`"));
    assert_eq!(e.value, "1Mbps");
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nsise = 3\n"),
        "flows[0].sise",
        "`size`",
    );
    assert_err(
        &doc("forward = { loss = { model = \"bernoulli\", p = 0.1, q = 2 } }"),
        "topology.forward.loss.q",
        "`p`",
    );
    assert_err(
        &doc("[[topology.forward.changes]]\nat = \"1s\"\nrat = \"1Mbps\"\n"),
        "topology.forward.changes[0].rat",
        "`rate`",
    );
    assert_err(&doc("[sim]\nlimit = \"1s\"\n"), "sim.limit", "`time_limit`");
    // A key of the other topology kind.
    assert_err(&doc("pairs = 2"), "topology.pairs", "`forward`");
    assert_err(
        &doc("forward = { queue = { bites = 5 } }"),
        "topology.forward.queue.bites",
        "`bytes`",
    );
}

#[test]
fn rule_wrong_unit() {
    assert_err(
        &doc("link = { rate = \"10MB\" }"),
        "topology.link.rate",
        "Mbps",
    );
    assert_err(
        &doc("link = { delay = \"10\" }"),
        "topology.link.delay",
        "ms",
    );
    assert_err(&doc("link = { delay = 1.5 }"), "topology.link.delay", "ms");
    assert_err(
        &doc("link = { overhead = \"28b\" }"),
        "topology.link.overhead",
        "KB",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nsize = \"1200\"\n"),
        "flows[0].size",
        "KB",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nstart = \"1 sec\"\n"),
        "flows[0].start",
        "ms",
    );
    assert_err(
        &doc("link = { queue = \"64 potatoes\" }"),
        "topology.link.queue",
        "BDP",
    );
    assert_err(
        &doc("link = { jitter = \"5\" }"),
        "topology.link.jitter",
        "5ms",
    );
}

#[test]
fn rule_probability_in_unit_interval() {
    let p = "[0, 1]";
    assert_err(&doc("link = { loss = 1.5 }"), "topology.link.loss", p);
    assert_err(&doc("link = { loss = \"150%\" }"), "topology.link.loss", p);
    assert_err(&doc("link = { loss = -0.1 }"), "topology.link.loss", p);
    assert_err(
        &doc("reverse = { corruption = 2 }"),
        "topology.reverse.corruption",
        p,
    );
    assert_err(
        &doc("forward = { loss = { model = \"bernoulli\", p = 1.01 } }"),
        "topology.forward.loss.p",
        p,
    );
    assert_err(
        &doc("forward = { loss = { model = \"gilbert_elliott\", p = 0.1, r = 0.2, k = 1.2 } }"),
        "topology.forward.loss.k",
        p,
    );
    assert_err(
        &doc("forward = { loss = { model = \"four_state\", p13 = 0.1, p31 = 0.1, p32 = 0.1, p23 = 1.5, p14 = 0.1 } }"),
        "topology.forward.loss.p23",
        p,
    );
    assert_err(
        &doc("[[topology.link.changes]]\nat = \"1s\"\ncorruption = 3\n"),
        "topology.link.changes[0].corruption",
        p,
    );
    assert_err(&doc("link = { loss = nan }"), "topology.link.loss", p);
    assert_err(
        &doc("link = { loss = \"two\" }"),
        "topology.link.loss",
        "\"2%\"",
    );
}

#[test]
fn rule_static_rate_positive() {
    let e = assert_err(
        &doc("link = { rate = \"0bps\" }"),
        "topology.link.rate",
        "> 0",
    );
    assert!(
        e.allowed.contains("changes"),
        "says where 0 is allowed: {e}"
    );
    assert_eq!(e.value, "0bps");
    assert_err(
        &doc("forward = { rate = 0 }"),
        "topology.forward.rate",
        "> 0",
    );
    assert_err(&doc("link = { rate = -5 }"), "topology.link.rate", "bps");
    assert_err(
        &doc("link = { rate = \"-5Mbps\" }"),
        "topology.link.rate",
        "bps",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"0bps\"\n"),
        "flows[0].rate",
        "> 0",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 1\nclient_access = { rate = \"0bps\" }\n",
        "topology.client_access.rate",
        "> 0",
    );
    // A handover's new link is checked too.
    assert_err(
        &doc("[[topology.handovers]]\nat = \"1s\"\nforward = { rate = \"0bps\" }\n"),
        "topology.handovers[0].forward.rate",
        "> 0",
    );
    // In changes, 0 is a link going down.
    ok(&doc(
        "[[topology.link.changes]]\nat = \"1s\"\nrate = \"0bps\"\n",
    ));
}

#[test]
fn rule_ge_p_plus_r_positive() {
    assert_err(
        &doc("forward = { loss = { model = \"gilbert_elliott\", p = 0, r = 0 } }"),
        "topology.forward.loss",
        "p + r > 0",
    );
}

#[test]
fn rule_ge_gemodel_or_canonical_not_both() {
    let e = assert_err(
        &doc("forward = { loss = { model = \"gilbert_elliott\", p = 0.1, gemodel = \"1 10 50 4\" } }"),
        "topology.forward.loss.gemodel",
        "not both",
    );
    assert_eq!(e.value, "1 10 50 4");
}

#[test]
fn rule_ge_required_keys() {
    assert_err(
        &doc("forward = { loss = { model = \"gilbert_elliott\", p = 0.1 } }"),
        "topology.forward.loss.r",
        "required",
    );
}

#[test]
fn rule_periodic_every_and_offset() {
    assert_err(
        &doc("forward = { loss = { model = \"periodic\", every = 0 } }"),
        "topology.forward.loss.every",
        ">= 1",
    );
    assert_err(
        &doc("forward = { loss = { model = \"periodic\", every = 4, offset = 4 } }"),
        "topology.forward.loss.offset",
        "[0, 3]",
    );
    assert_err(
        &doc("forward = { loss = { model = \"periodic\", every = 4, offset = -1 } }"),
        "topology.forward.loss.offset",
        "[0, every - 1]",
    );
}

#[test]
fn rule_four_state_sums() {
    assert_err(
        &doc("forward = { loss = { model = \"four_state\", p13 = 0.6, p31 = 0.1, p32 = 0.1, p23 = 0.1, p14 = 0.5 } }"),
        "topology.forward.loss",
        "p13 + p14 <= 1",
    );
    assert_err(
        &doc("forward = { loss = { model = \"four_state\", p13 = 0.1, p31 = 0.7, p32 = 0.4, p23 = 0.1, p14 = 0.1 } }"),
        "topology.forward.loss",
        "p31 + p32 <= 1",
    );
}

#[test]
fn rule_loss_model_name() {
    assert_err(
        &doc("forward = { loss = { model = \"gilbert\" } }"),
        "topology.forward.loss.model",
        "\"gilbert_elliott\"",
    );
    assert_err(
        &doc("forward = { loss = { p = 0.1 } }"),
        "topology.forward.loss.model",
        "required",
    );
}

#[test]
fn rule_queue_bdp_zero() {
    let e = assert_err(
        &doc("link = { delay = \"0ms\" }"),
        "topology.forward.queue",
        "explicit queue size",
    );
    assert!(e.value.contains("1BDP"));
    assert_err(
        &doc("link = { delay = \"0ms\", queue = \"1BDP\" }"),
        "topology.link.queue",
        "explicit",
    );
    assert_err(
        &doc("link = { delay = \"0ms\", queue = { bytes = \"1BDP\" } }"),
        "topology.link.queue.bytes",
        "explicit",
    );
    // An explicit size on a zero-delay link is fine.
    ok(&doc("link = { delay = \"0ms\", queue = \"64KB\" }"));
    assert_err(
        &doc("link = { queue = \"0BDP\" }"),
        "topology.link.queue",
        "positive multiple",
    );
}

#[test]
fn rule_overhead_at_most_1000() {
    assert_err(
        &doc("link = { overhead = 1001 }"),
        "topology.link.overhead",
        "1000B",
    );
    ok(&doc("link = { overhead = \"1KB\" }"));
}

#[test]
fn rule_bad_pair_index() {
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npair = 1\n"),
        "flows[0].pair",
        "[0, 0]",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 2\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npair = 2\n",
        "flows[0].pair",
        "[0, 1]",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 2\n[[topology.pair]]\nindex = 2\n",
        "topology.pair[0].index",
        "[0, 1]",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 2\n[[topology.pair]]\nindex = 1\n[[topology.pair]]\nindex = 1\n",
        "topology.pair[1].index",
        "not used by another",
    );
}

#[test]
fn rule_dumbbell_pairs() {
    assert_err(
        "[topology]\nkind = \"dumbbell\"\n",
        "topology.pairs",
        "required",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 0\n",
        "topology.pairs",
        "[1, 10000]",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 10001\n",
        "topology.pairs",
        "[1, 10000]",
    );
}

#[test]
fn rule_topology_required_and_kind() {
    assert_err("name = \"x\"\n", "topology", "[topology]");
    assert_err(
        "[topology]\nkind = \"star\"\n",
        "topology.kind",
        "\"dumbbell\"",
    );
    assert_err("[topology]\n", "topology.kind", "required");
}

#[test]
fn rule_duration_and_count_exclusive() {
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nduration = \"1s\"\ncount = 10\n"),
        "flows[0].count",
        "not both",
    );
}

#[test]
fn rule_count_at_least_one() {
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 0\n"),
        "flows[0].count",
        ">= 1",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nduration = \"0s\"\n"),
        "flows[0].duration",
        "> 0",
    );
}

#[test]
fn rule_size_range() {
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nsize = \"0B\"\n"),
        "flows[0].size",
        "[1B, 65507B]",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nsize = 65508\n"),
        "flows[0].size",
        "[1B, 65507B]",
    );
    ok(&doc(
        "[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\nsize = 65507\n",
    ));
}

#[test]
fn rule_flow_kind_and_required_rate() {
    assert_err(
        &doc("[[flows]]\nkind = \"tcp\"\n"),
        "flows[0].kind",
        "\"cbr\"",
    );
    assert_err(
        &doc("[[flows]]\nrate = \"1Mbps\"\n"),
        "flows[0].kind",
        "required",
    );
    let e = assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\n"),
        "flows[0].rate",
        "required",
    );
    assert_eq!(e.value, "(missing)");
    assert_err(
        &doc("[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ndirection = \"sideways\"\n"),
        "flows[0].direction",
        "\"down\"",
    );
}

#[test]
fn rule_changes_in_time_order() {
    let e = assert_err(
        &doc("[[topology.forward.changes]]\nat = \"2s\"\nrate = \"1Mbps\"\n[[topology.forward.changes]]\nat = \"1s\"\nrate = \"2Mbps\"\n"),
        "topology.forward.changes[1].at",
        "time order",
    );
    assert_eq!(e.value, "1s");
    // Equal times are allowed (non-decreasing).
    ok(&doc("[[topology.forward.changes]]\nat = \"1s\"\nrate = \"1Mbps\"\n[[topology.forward.changes]]\nat = \"1s\"\ndelay = \"2ms\"\n"));
}

#[test]
fn rule_change_content() {
    assert_err(
        &doc("[[topology.forward.changes]]\nat = \"1s\"\n"),
        "topology.forward.changes[0]",
        "at least one of",
    );
    assert_err(
        &doc("[[topology.forward.changes]]\nrate = \"1Mbps\"\n"),
        "topology.forward.changes[0].at",
        "required",
    );
}

#[test]
fn rule_handover_pair_exists() {
    assert_err(
        &doc("[[topology.handovers]]\nat = \"1s\"\npair = 1\n"),
        "topology.handovers[0].pair",
        "[0, 0]",
    );
    assert_err(
        "[topology]\nkind = \"dumbbell\"\npairs = 2\n[[topology.handovers]]\nat = \"1s\"\npair = 5\n",
        "topology.handovers[0].pair",
        "[0, 1]",
    );
}

#[test]
fn rule_handover_unique_time_per_pair() {
    assert_err(
        &doc("[[topology.handovers]]\nat = \"1s\"\n[[topology.handovers]]\nat = \"2s\"\n[[topology.handovers]]\nat = \"1s\"\n"),
        "topology.handovers[2].at",
        "handover [0]",
    );
    // Same time, different pairs: fine.
    ok("[topology]\nkind = \"dumbbell\"\npairs = 2\n[[topology.handovers]]\nat = \"1s\"\n[[topology.handovers]]\nat = \"1s\"\npair = 1\n");
    assert_err(
        &doc("[[topology.handovers]]\nat = \"1s\"\naddress = \"mac\"\n"),
        "topology.handovers[0].address",
        "\"port\"",
    );
    assert_err(
        &doc("[[topology.handovers]]\npair = 0\n"),
        "topology.handovers[0].at",
        "required",
    );
}

#[test]
fn rule_runs_limits_interval() {
    assert_err(&format!("runs = 0\n{}", doc("")), "runs", "[1, 4294967295]");
    assert_err(&format!("seed = -1\n{}", doc("")), "seed", ">= 0");
    assert_err(
        &doc("[sim]\ntime_limit = \"0s\"\n"),
        "sim.time_limit",
        "> 0",
    );
    assert_err(&doc("[sim]\nmax_events = 0\n"), "sim.max_events", ">= 1");
    assert_err(
        &doc("[output]\nsample_interval = \"0ms\"\n"),
        "output.sample_interval",
        "> 0",
    );
    assert_err(
        &doc("[output]\nseries = \"yes\"\n"),
        "output.series",
        "true or false",
    );
    assert_err(&format!("name = 3\n{}", doc("")), "name", "a string");
}

#[test]
fn rule_wrong_shapes() {
    assert_err(&doc("link = 5"), "topology.link", "a table");
    assert_err("topology = 5\n", "topology", "[topology]");
    assert_err(&doc("flows = 5"), "topology.flows", "unknown field `flows`");
    assert_err(
        &format!("flows = 5\n{}", doc("")),
        "flows",
        "array of tables",
    );
    assert_err(
        &doc("link = { changes = 5 }"),
        "topology.link.changes",
        "array of tables",
    );
    assert_err(
        &doc("[[topology.handovers]]\nat = \"1s\"\nlink = 3\n"),
        "topology.handovers[0].link",
        "a table",
    );
}

// ---------------------------------------------------------------- sweeps

const SWEEP_BASE: &str = "[topology]\nkind = \"two_hosts\"\nlink = { rate = \"10Mbps\", delay = \"10ms\" }\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\n";

#[test]
fn no_sweep_is_one_point_equal_to_base() {
    let s = parse_str(SWEEP_BASE).unwrap();
    assert_eq!(s.points.len(), 1);
    assert!(s.points[0].params.is_empty());
    assert_eq!(s.points[0].config, s.base);
}

#[test]
fn sweep_grid_in_written_order() {
    // "topology..." is written before "flows...", though it sorts after.
    let s = parse_str(&format!(
        "{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = [\"20ms\", \"50ms\"]\n\"flows.0.rate\" = [\"1Mbps\", \"2Mbps\", 3000000]\n"
    ))
    .unwrap();
    assert_eq!(s.points.len(), 6);
    let params: Vec<Vec<(String, String)>> = s.points.iter().map(|p| p.params.clone()).collect();
    let pair = |a: &str, b: &str| {
        vec![
            ("topology.link.delay".to_string(), a.to_string()),
            ("flows.0.rate".to_string(), b.to_string()),
        ]
    };
    assert_eq!(params[0], pair("20ms", "1Mbps"));
    assert_eq!(params[1], pair("20ms", "2Mbps"));
    assert_eq!(params[2], pair("20ms", "3000000"));
    assert_eq!(params[3], pair("50ms", "1Mbps"));
    let p4 = &s.points[4].config;
    assert_eq!(two_hosts(p4).0.delay, SimDuration::from_millis(50));
    assert_eq!(cbr(&p4.flows[0]).1, Rate(2_000_000));
    // Each point resolves its own queue: 10 Mbit/s x 100 ms / 8.
    assert_eq!(two_hosts(p4).0.queue.bytes, Some(125_000));
    // The base is the document without [sweep].
    assert_eq!(two_hosts(&s.base).0.delay, SimDuration::from_millis(10));
    // Bracket spelling of the index works too.
    let s = parse_str(&format!(
        "{SWEEP_BASE}[sweep]\n\"flows[0].size\" = [\"100B\"]\n"
    ))
    .unwrap();
    assert_eq!(cbr(&s.points[0].config.flows[0]).2, Bytes(100));
}

#[test]
fn sweep_values_of_any_type_and_absent_optional_keys() {
    let s = parse_str(&format!(
        "{SWEEP_BASE}[sweep]\n\"topology.forward.loss\" = [0.01, \"2%\", {{ model = \"periodic\", every = 10 }}]\n"
    ))
    .unwrap();
    assert_eq!(s.points.len(), 3);
    assert_eq!(
        two_hosts(&s.points[1].config).0.loss,
        LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.02 })
    );
    assert_eq!(
        two_hosts(&s.points[2].config).0.loss,
        LossModel::Periodic(crate::config::loss::Periodic {
            every: 10,
            offset: 9
        })
    );
    assert_eq!(
        s.points[2].params[0].1,
        "{ model = \"periodic\", every = 10 }"
    );
    assert_eq!(two_hosts(&s.base).0.loss, LossModel::NONE);
}

#[test]
fn rule_sweep_empty_array() {
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = []\n"),
        "sweep.\"topology.link.delay\"",
        "non-empty array",
    );
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = \"10ms\"\n"),
        "sweep.\"topology.link.delay\"",
        "non-empty array",
    );
}

#[test]
fn rule_sweep_key_must_exist() {
    let e = assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.rat\" = [\"1Mbps\"]\n"),
        "sweep.\"topology.link.rat\"",
        "exists",
    );
    assert!(e.allowed.contains("`rate`"), "lists the known keys: {e}");
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.lnk.rate\" = [\"1Mbps\"]\n"),
        "sweep.\"topology.lnk.rate\"",
        "exists",
    );
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"flows.3.rate\" = [\"1Mbps\"]\n"),
        "sweep.\"flows.3.rate\"",
        "index 3 does not exist",
    );
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.rate.x\" = [1]\n"),
        "sweep.\"topology.link.rate.x\"",
        "not a table",
    );
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.handovers.0.at\" = [\"1s\"]\n"),
        "sweep.\"topology.handovers.0.at\"",
        "does not exist",
    );
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"sweep.x\" = [1]\n"),
        "sweep.\"sweep.x\"",
        "cannot change [sweep]",
    );
}

#[test]
fn rule_sweep_value_invalid() {
    let e = assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.loss\" = [0.1, 2.0]\n"),
        "sweep.\"topology.link.loss\"[1] -> topology.link.loss",
        "[0, 1]",
    );
    assert_eq!(e.value, "2.0");
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = [\"1ms\"]\n\"flows.0.rate\" = [\"1Mbps\", \"0bps\"]\n"),
        "sweep.\"flows.0.rate\"[1] -> flows[0].rate",
        "> 0",
    );
    // An error that no single key explains names every key of the point.
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = [\"1ms\", \"0ms\"]\n\"flows.0.size\" = [\"100B\"]\n"),
        "sweep.\"topology.link.delay\"[1], sweep.\"flows.0.size\"[0] -> topology.forward.queue",
        "explicit",
    );
    assert_err(
        &format!(
            "{SWEEP_BASE}[sweep]\n\"topology.link\" = [{{ rate = \"1Mbps\" }}, {{ rat = 1 }}]\n"
        ),
        "sweep.\"topology.link\"[1] -> topology.link.rat",
        "unknown field",
    );
}

#[test]
fn rule_sweep_grid_size() {
    let vals: Vec<String> = (1..=400).map(|i| format!("\"{i}ms\"")).collect();
    let list = vals.join(", ");
    assert_err(
        &format!("{SWEEP_BASE}[sweep]\n\"topology.link.delay\" = [{list}]\n\"topology.forward.delay\" = [{list}]\n"),
        "sweep",
        "at most 100000 points",
    );
}

#[test]
fn base_must_be_valid_without_sweep() {
    // The sweep would supply a valid rate, but the document alone has none.
    assert_err(
        "[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\n[sweep]\n\"flows.0.rate\" = [\"1Mbps\"]\n",
        "flows[0].rate",
        "required",
    );
}

// ---------------------------------------------------------------- examples and round trip

#[test]
fn every_example_parses_and_round_trips() {
    let all = examples();
    assert!(
        all.len() >= 7,
        "examples: {:?}",
        all.iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    for (name, text) in &all {
        let s = parse_example(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        s.base.validate().unwrap();
        assert_round_trip(&s.base);
        for p in &s.points {
            assert_round_trip(&p.config);
        }
    }
}

#[test]
fn required_examples_exist_with_their_settings() {
    let all = examples();
    let get = |n: &str| {
        let text = &all
            .iter()
            .find(|e| e.0 == n)
            .unwrap_or_else(|| panic!("{n} missing"))
            .1;
        parse_str(text).unwrap()
    };
    let c = get("cbr-clean.toml").base;
    assert_eq!(two_hosts(&c).0.loss, LossModel::NONE);
    let c = get("ge-link.toml").base;
    assert_eq!(
        two_hosts(&c).0.loss,
        LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 0.00125,
            r: 0.125,
            k: 0.955,
            h: 0.5
        })
    );
    assert!(cbr(&c.flows[0]).4 >= 200_000);
    assert_eq!(get("ge-netem.toml").base.topology, {
        let mut t = c.topology.clone();
        if let Topology::TwoHosts { forward, .. } = &mut t {
            forward.loss_position = LossPosition::Egress;
        }
        t
    });
    assert!(matches!(
        two_hosts(&get("bernoulli-link.toml").base).0.loss,
        LossModel::Bernoulli(crate::config::loss::Bernoulli { .. })
    ));
    let c = get("dumbbell-cbr.toml").base;
    assert_eq!(dumbbell(&c).0.len(), 2);
    assert!(c.flows.iter().any(|f| f.background));
    let c = get("handover.toml").base;
    assert_eq!(two_hosts(&c).2[0].at, SimTime(2_000_000_000));
    let c = get("link-down.toml").base;
    assert!(two_hosts(&c)
        .0
        .changes
        .iter()
        .any(|ch| ch.rate == Some(Rate(0))));
    assert!(all
        .iter()
        .any(|(_, t)| parse_str(t).unwrap().points.len() > 1));
}

#[test]
fn round_trip_of_every_feature() {
    let text = "name = \"all\"\ndescription = \"multi\\nline \\\"quoted\\\"\"\nseed = \"18446744073709551615\"\nruns = 4\n\
        [sim]\ntime_limit = \"1.5s\"\nmax_events = 12345\n\
        [output]\nseries = true\nsample_interval = \"250us\"\n\
        [topology]\nkind = \"dumbbell\"\npairs = 3\n\
        bottleneck = { rate = \"12.5Mbps\", delay = \"7ms\", queue = { bytes = \"0.75BDP\", packets = 80 }, jitter = { amount = \"1ms\", distribution = \"normal\", reorder = true } }\n\
        bottleneck_reverse = { loss = { model = \"four_state\", p13 = 0.01, p31 = 0.5, p32 = 0.1, p23 = 0.2, p14 = 0.001 }, corruption = \"0.5%\", loss_position = \"egress\" }\n\
        access = { queue = \"unlimited\", overhead = \"48B\" }\n\
        client_access = { loss = { model = \"periodic\", every = 7, offset = 3 }, jitter = \"3us\" }\n\
        [[topology.pair]]\nindex = 2\nserver_up = { rate = 1234567, queue = 17, loss = { model = \"gilbert_elliott\", gemodel = \"1 10 50 4\" } }\n\
        [[topology.bottleneck_forward.changes]]\nat = \"100ms\"\nrate = \"0bps\"\n\
        [[topology.bottleneck_forward.changes]]\nat = \"200ms\"\nrate = \"5Mbps\"\nloss = { model = \"bernoulli\", p = 0.3 }\ndelay = \"1ns\"\ncorruption = 0.25\n\
        [[topology.handovers]]\nat = \"1s\"\npair = 2\naddress = \"port\"\nlink = { rate = \"2Mbps\" }\n\
        [[topology.handovers]]\nat = \"0.5s\"\npair = 0\naddress = \"none\"\n\
        [[flows]]\nkind = \"cbr\"\npair = 2\ndirection = \"down\"\nbackground = true\nrate = \"333kbps\"\nsize = \"1KiB\"\nstart = \"10ms\"\nduration = \"1s\"\n\
        [[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 3\n";
    let c = ok(text);
    assert_eq!(c.seed, u64::MAX);
    assert_round_trip(&c);
    // And a two_hosts variant with every link key.
    let c = ok(&doc(
        "link = { rate = \"1bps\", delay = \"1min\", overhead = 0, queue = { packets = 0 }, corruption = 1, jitter = 0 }\n\
         reverse = { loss = { model = \"gilbert_elliott\", p = 1e-9, r = 1, k = 0, h = 1 } }\n\
         [[topology.handovers]]\nat = \"1s\"\nreverse = { delay = \"3ms\" }\n",
    ));
    assert_round_trip(&c);
}

#[test]
fn round_trip_of_code_built_config() {
    // A Config built in code (with a queue limit that is not a BDP multiple).
    let mut c = ok(&doc(""));
    if let Topology::TwoHosts { forward, .. } = &mut c.topology {
        forward.queue = QueueLimit {
            bytes: Some(7),
            packets: Some(3),
        };
        forward.changes.push(LinkChange {
            at: SimTime(5),
            rate: None,
            delay: None,
            loss: Some(LossModel::NONE),
            corruption: None,
        });
    }
    c.validate().unwrap();
    assert_round_trip(&c);
}

// ---------------------------------------------------------------- robustness

/// Replaces every leaf of every example, in turn, with values of the wrong type or out of
/// range: parsing must return (Ok or Err), never panic.
#[test]
fn no_panic_on_mutated_examples() {
    fn leaves(v: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            toml::Value::Table(t) => {
                for (k, x) in t {
                    path.push(k.clone());
                    leaves(x, path, out);
                    path.pop();
                }
            }
            toml::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(i.to_string());
                    leaves(x, path, out);
                    path.pop();
                }
                out.push(path.clone());
            }
            _ => out.push(path.clone()),
        }
    }
    fn set(v: &mut toml::Value, path: &[String], new: toml::Value) {
        let Some((first, rest)) = path.split_first() else {
            *v = new;
            return;
        };
        match v {
            toml::Value::Table(t) => {
                if let Some(x) = t.get_mut(first) {
                    set(x, rest, new)
                }
            }
            toml::Value::Array(a) => {
                if let Some(x) = first.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                    set(x, rest, new)
                }
            }
            _ => {}
        }
    }
    let wrong: Vec<toml::Value> = [
        "-1",
        "0",
        "9223372036854775807",
        "1e300",
        "-0.5",
        "nan",
        "\"\"",
        "\"0\"",
        "\"0BDP\"",
        "\"99999999999999999999Gbps\"",
        "\"18446744073709551615s\"",
        "true",
        "[]",
        "{}",
        "[1, \"a\"]",
        "{ model = \"gilbert_elliott\", gemodel = \"100 100 100 100\" }",
    ]
    .iter()
    .map(|s| toml::from_str::<toml::Table>(&format!("x = {s}")).unwrap()["x"].clone())
    .collect();
    let mut tried = 0;
    for (_, text) in examples() {
        let root = toml::Value::Table(toml::from_str::<toml::Table>(&text).unwrap());
        let mut paths = Vec::new();
        leaves(&root, &mut Vec::new(), &mut paths);
        for p in &paths {
            for w in &wrong {
                let mut m = root.clone();
                set(&mut m, p, w.clone());
                let text = toml::to_string(&m).unwrap();
                let _ = parse_str(&text);
                tried += 1;
            }
        }
    }
    assert!(tried > 1000);
    // Huge values that must not overflow.
    let _ = parse_str(&doc(
        "link = { rate = \"18446744073709551615bps\", delay = \"18446744073709551615ns\" }",
    ));
    let _ = parse_str(&doc("[[flows]]\nkind = \"cbr\"\nrate = \"18446744073709551615bps\"\nsize = 1\nduration = \"18446744073709551615ns\"\n"));
}

#[test]
fn error_display() {
    let e = err(&doc("link = { rate = \"0bps\" }"));
    assert!(e
        .to_string()
        .starts_with("topology.link.rate: 0bps is not allowed: expected a rate > 0"));
}

// ---------------------------------------------------------------- QUIC flows

#[test]
fn chromium_profile_applies_to_quic_connections_as_to_quic_bulk() {
    use crate::cc::CcAlgorithm;
    use crate::quic::config::Profile;
    let c = ok(&doc(
        "[[flows]]\nkind = \"quic_connections\"\nprofile = \"chromium\"\n[[flows.connections]]\nbytes = \"10KB\"\n",
    ));
    assert!(c.flows[0].sequence().is_some(), "a quic_connections flow");
    let quic = &c.flows[0].quic().expect("a QUIC flow").client;
    assert_eq!(quic.profile, Profile::Chromium);
    assert_eq!(quic.cc.algorithm, crate::cc::CcAlgorithm::Cubic);
    assert_eq!(quic.initial_rtt, SimDuration::from_millis(100));
    assert_eq!(quic.cc.initial_cwnd_bytes, Some(46_720));
    assert_eq!(quic.cc.cc_segment_size, Some(1460));
    assert_eq!(quic.cc.emulated_connections, 2);
    assert_eq!(quic.cc.pacing_gain_slow_start, 2.0);
    assert_eq!(quic.cc.pacing_burst_packets, Some(10));
    // The same values as quic_bulk with the profile.
    let b = ok(&doc(
        "[[flows]]\nkind = \"quic_bulk\"\nprofile = \"chromium\"\n",
    ));
    assert!(b.flows[0].bulk().is_some(), "a quic_bulk flow");
    assert_eq!(c.flows[0].quic(), b.flows[0].quic());
    // Explicit keys still win.
    let c = ok(&doc(
        "[[flows]]\nkind = \"quic_connections\"\nprofile = \"chromium\"\ninitial_rtt = \"333ms\"\ncc = \"new_reno\"\n[[flows.connections]]\n",
    ));
    let connections = &c.flows[0]
        .sequence()
        .expect("a quic_connections flow")
        .connections;
    let quic = &c.flows[0].quic().expect("a QUIC flow").client;
    assert_eq!(quic.initial_rtt, SimDuration::from_millis(333));
    assert_eq!(quic.cc.algorithm, CcAlgorithm::NewReno);
    assert_eq!(quic.cc.emulated_connections, 2);
    assert_eq!(connections.len(), 1);
}

/// `profile = "quic-go"` sets every key of `QUIC_GO_PROFILE` (quic-go v0.19.3), explicit
/// keys win, and a window above the profile's bound needs its own bound.
#[test]
fn quic_go_profile_resolves_to_its_listed_values() {
    use crate::cc::{CcAlgorithm, HyStartFlavor};
    use crate::quic::config::Profile;
    use crate::transport::allowance::AllowanceKind;
    let c = ok(&doc(
        "[[flows]]\ntransport = \"quic\"\nquic = { profile = \"quic-go\" }\nworkload = { kind = \"bulk\" }\n",
    ));
    let q = &c.flows[0].quic().expect("a QUIC flow").server;
    assert_eq!(q.profile, Profile::QuicGo);
    assert_eq!(q.max_udp_payload, 1252);
    assert_eq!(q.cid_len, 4);
    assert_eq!(q.initial_rtt, SimDuration::from_millis(100));
    assert_eq!(q.initial_cwnd(), 32 * 1252);
    assert_eq!(q.cc_segment(), 1252);
    assert_eq!(q.cc.algorithm, CcAlgorithm::Cubic);
    assert_eq!((q.cc.cubic_beta, q.cc.cubic_c), (0.7, 0.400390625));
    assert!(q.cc.fast_convergence && q.cc.hystart);
    assert_eq!(q.cc.hystart_flavor, HyStartFlavor::HybridSlowStart);
    assert_eq!(q.cc.emulated_connections, 1);
    assert_eq!(
        (q.cc.pacing_gain_slow_start, q.cc.pacing_gain),
        (1.25, 1.25)
    );
    assert_eq!(q.pacing_burst_bytes(), 10 * 1252);
    assert_eq!(q.ack_eliciting_threshold, 2);
    assert_eq!(q.max_ack_delay, SimDuration::from_millis(25));
    assert_eq!(q.max_ack_ranges, 500);
    assert_eq!(
        (q.stream_window, q.connection_window),
        (512 << 10, 768 << 10)
    );
    assert_eq!(q.allowance, AllowanceKind::Autotune);
    assert_eq!(q.max_stream_window, Some(6 << 20));
    assert_eq!(q.max_connection_window, Some(15 << 20));
    // Every listed key is set, and `for_profile` gives the same configuration.
    assert_eq!(
        *q,
        crate::quic::QuicConfig::for_profile(Profile::QuicGo),
        "the resolved table"
    );
    // An explicit key wins; a larger window needs its bound.
    let c = ok(&doc(
        "[[flows]]\ntransport = \"quic\"\nquic = { profile = \"quic-go\", initial_rtt = \"333ms\", stream_window = \"16MiB\", max_stream_window = \"16MiB\" }\nworkload = { kind = \"bulk\" }\n",
    ));
    let q = &c.flows[0].quic().expect("a QUIC flow").client;
    assert_eq!(q.initial_rtt, SimDuration::from_millis(333));
    assert_eq!(q.max_stream_window, Some(16 << 20));
    assert_err(
        &doc("[[flows]]\ntransport = \"quic\"\nquic = { profile = \"quic-go\", stream_window = \"16MiB\" }\nworkload = { kind = \"bulk\" }\n"),
        "flows[0].max_stream_window",
        "a bound in [stream_window",
    );
    // The hybrid slow start runs with the RFC 9438 CUBIC only.
    assert_err(
        &doc("[[flows]]\ntransport = \"quic\"\nquic = { profile = \"quic-go\", cc = \"new_reno\" }\nworkload = { kind = \"bulk\" }\n"),
        "flows[0].hystart_flavor",
        "rfc9406",
    );
}

/// The workload keys are the workload's: `read_rate` (how the bulk client reads) is not a
/// key of a connection sequence, whose connections read at once, nor of the QUIC table.
#[test]
fn workload_keys_belong_to_their_workload() {
    let c = ok(&doc(
        "[[flows]]\nkind = \"quic_bulk\"\nread_rate = \"5Mbps\"\nstreams = 2\n",
    ));
    let bulk = c.flows[0].bulk().expect("bulk");
    assert_eq!((bulk.read_rate, bulk.streams), (Some(Rate(5_000_000)), 2));
    assert_err(
        &doc("[[flows]]\nkind = \"quic_connections\"\nread_rate = \"5Mbps\"\n[[flows.connections]]\n"),
        "flows[0].read_rate",
        "unknown field `read_rate`",
    );
    assert_err(
        &doc("[[flows]]\ntransport = \"quic\"\nquic = { read_rate = \"5Mbps\" }\nworkload = { kind = \"bulk\" }\n"),
        "flows[0].quic.read_rate",
        "a QUIC key",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"quic_bulk\"\nread_rate = \"0bps\"\n"),
        "flows[0].read_rate",
        "a rate > 0",
    );
}

mod quic_descriptors {
    use crate::quic::QuicConfig;
    use crate::time::SimDuration;
    use crate::units::{format_duration, format_rate, Rate};
    use crate::validate::schema::{Bound, DefaultValue, Kind, Num, QUIC};

    /// The QUIC descriptors agree with [`QuicConfig`]: the same keys, the same defaults,
    /// and the same range rules (the value just outside each bound is rejected by
    /// `QuicConfig::validate` with the descriptor's `allowed` text).
    #[test]
    fn quic_descriptors_agree_with_quic_config() {
        let defaults = QuicConfig::default();
        let toml::Value::Table(serialised) = toml::Value::try_from(&defaults).unwrap() else {
            panic!("a table");
        };
        for k in serialised.keys() {
            assert!(QUIC.has(k), "QuicConfig key {k} has no descriptor");
        }
        let with = |name: &str, v: toml::Value| -> Result<QuicConfig, String> {
            let mut t = toml::Table::new();
            t.insert(name.into(), v);
            toml::Value::Table(t)
                .try_into::<QuicConfig>()
                .map_err(|e| e.to_string())
        };
        for f in QUIC.fields {
            if let DefaultValue::Value(d) = f.default {
                let v: toml::Table = toml::from_str(&format!("v = {d}")).unwrap();
                let c = with(f.name, v["v"].clone()).unwrap();
                assert_eq!(c, defaults, "default of {}", f.name);
            }
            let outside = |b: &Bound, below: bool| -> toml::Value {
                let n = f.bound(b);
                match (f.kind, n) {
                    (Kind::Number, Num::F(x)) => toml::Value::Float(match (below, b.inclusive) {
                        (true, true) => x - 0.5,
                        (false, true) => x + 0.5,
                        _ => x,
                    }),
                    (_, Num::U(u)) => {
                        let u = match (below, b.inclusive) {
                            (true, true) => u - 1,
                            (false, true) => u + 1,
                            _ => u,
                        };
                        match f.kind {
                            Kind::Rate => toml::Value::String(format_rate(Rate(u))),
                            Kind::Time => toml::Value::String(format_duration(SimDuration(u))),
                            _ => toml::Value::Integer(u as i64),
                        }
                    }
                    _ => unreachable!(),
                }
            };
            for (b, below) in [(f.min, true), (f.max, false)] {
                let Some(b) = b else { continue };
                if below && b.inclusive && f.bound(&b) == Num::U(0) {
                    continue;
                }
                let c = with(f.name, outside(&b, below)).unwrap();
                let e = c.validate().expect_err(f.name);
                assert_eq!(e.2, f.allowed, "allowed text of {}", f.name);
            }
        }
    }
}

/// The default congestion controller of a QUIC flow (`rfc` profile) is CUBIC (RFC 9438),
/// as in quinn, s2n-quic, quiche, msquic and Linux; NewReno stays selectable.
#[test]
fn quic_default_controller_is_cubic_and_new_reno_stays_selectable() {
    let c = ok(&doc(
        "[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\" }\n",
    ));
    let quic = &c.flows[0].quic().expect("a QUIC flow");
    assert_eq!(quic.client.cc.algorithm, crate::cc::CcAlgorithm::Cubic);
    assert_eq!(quic.server.cc.algorithm, crate::cc::CcAlgorithm::Cubic);
    assert!(!quic.server.cc.hystart, "HyStart++ stays off by default");
    let c = ok(&doc(
        "[[flows]]\ntransport = \"quic\"\ncc = \"new_reno\"\nworkload = { kind = \"bulk\" }\n",
    ));
    let quic = &c.flows[0].quic().expect("a QUIC flow");
    assert_eq!(quic.server.cc.algorithm, crate::cc::CcAlgorithm::NewReno);
}

/// A paired comparison's `transports` is a sweep key to its `[paper]` table: a reported
/// point, the plot's series and a ranking may name it (with or without a `[sweep]`); a
/// transport that is not compared is refused, naming the field.
#[test]
fn a_paired_scenarios_paper_table_may_name_its_transports() {
    let flows = |transport: &str| {
        format!("name = \"p\"\n[topology]\nkind = \"two_hosts\"\n[[flows]]\n{transport}\nworkload = {{ kind = \"bulk\", bytes = 1000 }}\n")
    };
    let paired = flows("transports = [\"tcp\", \"quic\"]");
    let paper = |plot: &str, order: &str, widens: &str| {
        format!("[paper]\nid = \"003\"\nexperiment = \"x\"\nsource = \"Fig. 5\"\nmetric = \"flow0.ep0.completion_secs\"\n{plot}baseline = {{ \"transports\" = \"tcp\" }}\n[[paper.reported]]\npoint = {{ \"transports\" = \"quic\" }}\nchange = -0.5\n[[paper.ranking]]\nclaim = \"QUIC < TCP\"\nby = \"transports\"\norder = {order}\n{widens}")
    };
    let order = "[\"quic\", \"tcp\"]";
    let s = parse_str(&format!("{paired}{}", paper("", order, ""))).unwrap();
    let p = s.paper.expect("a [paper] table");
    assert_eq!(p.baseline, [("transports".to_string(), "tcp".to_string())]);
    assert_eq!(p.ranking[0].order, ["quic", "tcp"]);
    let sweep = "[sweep]\n\"topology.link.delay\" = [\"10ms\", \"20ms\"]\n";
    let s = parse_str(&format!(
        "{paired}{sweep}{}",
        paper(
            "plot = { x = \"topology.link.delay\", series = \"transports\" }\n",
            order,
            "widens_along = \"topology.link.delay\"\n"
        )
    ))
    .unwrap();
    let p = s.paper.expect("a [paper] table");
    assert_eq!(p.plot.unwrap().series.as_deref(), Some("transports"));
    assert_eq!(
        p.ranking[0].widens_along.as_deref(),
        Some("topology.link.delay")
    );
    let e = parse_str(&format!(
        "{paired}{}",
        paper("", "[\"quic\", \"sctp\"]", "")
    ))
    .unwrap_err();
    assert_eq!(e.field, "paper.ranking[0].order[1]");
    // A scenario that compares nothing has no such key.
    let e = parse_str(&format!(
        "{}{}",
        flows("transport = \"quic\""),
        paper("", order, "")
    ))
    .unwrap_err();
    assert_eq!(e.field, "paper.baseline.\"transports\"");
}

/// Issue 15 item 3: the maximum of `streams` is one a run finishes (every stream's state
/// is kept for the metrics): above 100 000 is an error at the field, in every spelling.
#[test]
fn streams_above_the_maximum_are_rejected() {
    let bulk = |n: u64| {
        doc(&format!(
            "[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"bulk\", bytes = 1000, streams = {n} }}\n"
        ))
    };
    assert_eq!(ok(&bulk(100_000)).flows.len(), 1);
    for n in [100_001, 1_000_000, 4_294_967_295] {
        assert_err(&bulk(n), "flows[0].workload.streams", "[1, 100000]");
    }
    assert_err(
        &doc("[[flows]]\nkind = \"quic_bulk\"\nstreams = 1000000\n"),
        "flows[0].streams",
        "[1, 100000]",
    );
    assert_err(
        &doc("[[flows]]\nkind = \"quic_connections\"\nstreams = 100001\n[[flows.connections]]\n"),
        "flows[0].streams",
        "[1, 100000]",
    );
}

/// `copies = N` expands one `[[flows]]` entry into N identical flows in place (same pair,
/// same keys); flows after it are numbered after the copies; `copies = 1` is the entry
/// itself; out-of-range values name the field; and it sweeps like any integer key.
#[test]
fn copies_expand_a_flow_in_place() {
    let base = |copies: &str| {
        format!(
            "[topology]\nkind = \"dumbbell\"\npairs = 2\n\
             [[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\n\
             [[flows]]\ntransport = \"tcp\"\npair = 1\nbackground = true\n{copies}\
             workload = {{ kind = \"bulk\", bytes = \"10kB\" }}\n\
             [[flows]]\nkind = \"cbr\"\nrate = \"2Mbps\"\ncount = 7\npair = 1\n"
        )
    };
    let one = ok(&base(""));
    assert_eq!(one.flows.len(), 3);
    assert_eq!(ok(&base("copies = 1\n")), one, "copies = 1 is the default");
    let four = ok(&base("copies = 4\n"));
    assert_eq!(four.flows.len(), 6);
    assert_eq!(four.flows[0], one.flows[0]);
    for f in &four.flows[1..5] {
        assert_eq!(f, &one.flows[1], "every copy is the written flow");
        assert_eq!(f.pair, 1);
    }
    assert_eq!(
        four.flows[5], one.flows[2],
        "the next entry follows the copies"
    );
    // The resolved form writes the copies out and reads back to the same config.
    let back = ok(&to_toml(&four).expect("to_toml"));
    assert_eq!(back.flows, four.flows);
    for bad in [
        "copies = 0\n",
        "copies = 1001\n",
        "copies = -1\n",
        "copies = \"2\"\n",
    ] {
        assert_err(&base(bad), "flows[1].copies", "[1, 1000]");
    }
    // A CBR flow's own `count` (datagrams) is unaffected by `copies`.
    let cbr = ok(&doc(
        "[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\ncopies = 2\n",
    ));
    assert_eq!(cbr.flows.len(), 2);
    // Swept: one point per value, each with its number of flows.
    let s = parse_str(&format!(
        "{}[sweep]\n\"flows.1.copies\" = [1, 2, 8]\n",
        base("")
    ))
    .expect("sweep");
    let n: Vec<usize> = s.points.iter().map(|p| p.config.flows.len()).collect();
    assert_eq!(n, [3, 4, 10]);
}

/// Issue 28 item 8: `name` is bounded (the CLI builds file names from it).
#[test]
fn name_of_at_most_100_characters() {
    let long = "n".repeat(240);
    assert_err(
        &format!("name = {long:?}\n{}", doc("")),
        "name",
        "at most 100 characters",
    );
    let name = "n".repeat(100);
    assert_eq!(ok(&format!("name = {name:?}\n{}", doc(""))).name, name);
}

/// `[[paper.unstated]]`: every alternative must make a valid scenario on its own (errors
/// name the alternative and the inner field), and `parse_str_overriding` writes a
/// combination's keys before the sweep is expanded, keeping the seeds.
#[test]
fn unstated_alternatives_are_validated_and_override_the_document() {
    let text = |alts: &str| {
        format!("name = \"u\"\nseed = 3\n[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"5ms\" }}\nreverse = {{ loss = \"1%\" }}\n[[flows]]\ntransport = \"quic\"\nworkload = {{ kind = \"bulk\", bytes = 1000 }}\n[sweep]\n\"topology.link.delay\" = [\"5ms\", \"10ms\"]\n[paper]\nid = \"000\"\nexperiment = \"x\"\nsource = \"T\"\nmetric = \"flow0.ep0.completion_secs\"\n[[paper.unstated]]\nname = \"loss placement\"\nwhy = \"w\"\nalternatives = [{alts}]\n")
    };
    let good = text("{ name = \"data\", set = { \"topology.reverse.loss\" = \"1%\" } }, { name = \"ack\", set = { \"topology.reverse.loss\" = \"none\", \"topology.forward.loss\" = \"1%\" } }");
    let s = parse_str(&good).unwrap();
    let p = s.paper.clone().unwrap();
    assert_eq!(p.combinations(), [vec![0], vec![1]]);
    let ack = parse_str_overriding(&good, &p.overrides(&[1])).unwrap();
    assert_eq!(ack.points.len(), 2);
    for (a, b) in ack.points.iter().zip(&s.points) {
        assert_eq!(a.params, b.params);
        assert_eq!(a.config.seed, b.config.seed);
        assert_ne!(a.config.topology, b.config.topology);
    }
    // The alternative that is the scenario as written gives the same configs.
    let data = parse_str_overriding(&good, &p.overrides(&[0])).unwrap();
    assert_eq!(data.points, s.points);
    // A bad value or an unknown key in an alternative names it.
    let e = parse_str(&text("{ name = \"data\", set = { \"topology.reverse.loss\" = 2.0 } }, { name = \"ack\", set = { \"topology.forward.loss\" = \"1%\" } }")).unwrap_err();
    assert!(
        e.field
            .starts_with("paper.unstated[0].alternatives[0] -> topology.reverse.loss"),
        "{e}"
    );
    let e = parse_str(&text("{ name = \"data\", set = { \"topology.reverse.loss\" = 0.1 } }, { name = \"ack\", set = { \"topology.forwards.loss\" = \"1%\" } }")).unwrap_err();
    assert!(
        e.field
            .starts_with("paper.unstated[0].alternatives[1] -> topology"),
        "{e}"
    );
    let e =
        parse_str_overriding(&good, &[("a..b".to_string(), toml::Value::Integer(1))]).unwrap_err();
    assert_eq!(e.field, "override \"a..b\"");
}
