//! Controller names resolved through a [`Registry`] (issue 16).

use super::{parse_str, parse_str_with, to_toml};
use crate::cc::{self, CcAlgorithm, CcContext, CongestionController, ControllerFactory};
use crate::registry::Registry;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// NewReno under another name, counting the controllers it builds.
#[derive(Debug, Default)]
struct Counting(AtomicUsize);

impl ControllerFactory for Counting {
    fn build(&self, ctx: &CcContext) -> Box<dyn CongestionController> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::new(cc::NewReno::new(ctx.segment_size, ctx.initial_window))
    }
}

fn registry() -> (Registry, Arc<Counting>) {
    let f = Arc::new(Counting::default());
    let mut r = Registry::builtin();
    r.register("my_reno", f.clone()).unwrap();
    (r, f)
}

fn scenario(transport: &str, cc_keys: &str) -> String {
    format!(
        r#"
[topology]
kind = "two_hosts"
link = {{ rate = "10Mbps", delay = "5ms" }}
[[flows]]
transport = "{transport}"
{cc_keys}
workload = {{ kind = "bulk", bytes = "30kB" }}
"#
    )
}

#[test]
fn builtin_registry_rejects_an_unknown_name_listing_the_names() {
    let e = parse_str(&scenario("quic", "cc = \"my_reno\"")).unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    assert_eq!(e.value, "my_reno");
    // The built-in names, from the controller table.
    let builtin = cc::ControllerRegistry::builtin().allowed();
    assert!(
        builtin.starts_with("one of \"new_reno\", \"cubic\""),
        "{builtin}"
    );
    assert_eq!(e.allowed, builtin);
    // Not an identifier: the schema's own list, as before registries existed.
    let e = parse_str(&scenario("quic", "cc = \"My Reno\"")).unwrap_err();
    assert!(e.allowed.contains("\"new_reno\", \"cubic\""), "{e}");
    // A user's registry lists its names too.
    let (r, _) = registry();
    let e = parse_str_with(&scenario("tcp", "cc = \"bbr\""), &r).unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    assert_eq!(e.allowed, format!("{builtin}, \"my_reno\""));
}

#[test]
fn a_registered_controller_runs_over_quic_and_tcp() {
    for transport in ["quic", "tcp"] {
        let (r, f) = registry();
        let s = parse_str_with(&scenario(transport, "cc = \"my_reno\""), &r).unwrap();
        assert_eq!(f.0.load(Ordering::Relaxed), 0, "parsing builds nothing");
        let res = crate::run(&s.base, 3).unwrap();
        assert_eq!(res.status, crate::RunStatus::Completed, "{transport}");
        assert!(
            f.0.load(Ordering::Relaxed) >= 2,
            "{transport}: both sides built"
        );
        // Built-ins keep their behaviour when a registry is used: same digest.
        let a = parse_str(&scenario(transport, "cc = \"cubic\"")).unwrap();
        let b = parse_str_with(&scenario(transport, "cc = \"cubic\""), &r).unwrap();
        assert_eq!(
            crate::run(&a.base, 3).unwrap().digest,
            crate::run(&b.base, 3).unwrap().digest
        );
    }
}

#[test]
fn per_side_names_are_resolved_and_named_by_side() {
    let (r, _) = registry();
    let s = parse_str_with(
        &scenario("quic", "quic = { client = { cc = \"my_reno\" } }"),
        &r,
    )
    .unwrap();
    let q = s.base.flows[0].quic().unwrap();
    assert_eq!(q.client.cc.algorithm.scenario_name(), "my_reno");
    assert!(!q.client.cc.algorithm.is_unresolved());
    assert_eq!(q.server.cc.algorithm, CcAlgorithm::Cubic);
    let e = parse_str(&scenario(
        "quic",
        "quic = { server = { cc = \"my_reno\" } }",
    ))
    .unwrap_err();
    assert_eq!(e.field, "flows[0].quic.server.cc");
}

#[test]
fn to_toml_writes_the_name_and_the_registry_reads_it_back() {
    let (r, _) = registry();
    let s = parse_str_with(&scenario("quic", "cc = \"my_reno\""), &r).unwrap();
    let text = to_toml(&s.base).unwrap();
    assert!(text.contains("cc = \"my_reno\""), "{text}");
    let back = parse_str_with(&text, &r).unwrap();
    assert_eq!(back.base, s.base);
    let a = crate::run(&s.base, 9).unwrap();
    let b = crate::run(&back.base, 9).unwrap();
    assert_eq!(a.digest, b.digest);
}

#[test]
fn configs_built_in_code_are_validated_and_resolved() {
    let mut cfg = parse_str(&scenario("quic", "")).unwrap().base;
    if let crate::config::AppConfig::Transport(t) = &mut cfg.flows[0].app {
        if let crate::config::TransportConfig::Quic(q) = &mut t.transport {
            q.client.cc.algorithm = CcAlgorithm::Custom(cc::CustomCc::unresolved("my_reno"));
            q.server.cc.algorithm = q.client.cc.algorithm.clone();
        }
    }
    let e = cfg.validate().unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    assert!(
        e.allowed.starts_with("one of \"new_reno\", \"cubic\""),
        "{e}"
    );
    assert!(crate::run(&cfg, 1).is_err(), "run validates first");
    let e = cfg
        .clone()
        .resolve_controllers(&Registry::builtin())
        .unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    let (r, f) = registry();
    cfg.resolve_controllers(&r).unwrap();
    cfg.validate().unwrap();
    crate::run(&cfg, 1).unwrap();
    assert!(f.0.load(Ordering::Relaxed) >= 2);
}

#[test]
fn sctp_takes_builtin_controllers_only() {
    let (r, _) = registry();
    let e = parse_str_with(&scenario("sctp", "cc = \"my_reno\""), &r).unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    assert!(e.allowed.contains("rfc9260"), "{e}");
}

#[test]
fn register_rejects_duplicates_and_bad_names() {
    let (mut r, f) = registry();
    assert!(r.register("cubic", f.clone()).is_err());
    assert!(r.register("my_reno", f.clone()).is_err());
    assert!(
        r.register("newreno", f.clone()).is_err(),
        "an alias of new_reno"
    );
    assert!(r.register("My", f.clone()).is_err());
    assert!(r.register("", f.clone()).is_err());
    assert!(r.register("x2_y", f).is_ok());
    // The built-ins (the controller table), then the registered names in order.
    let mut want = cc::CONTROLLER_NAMES.to_vec();
    want.extend(["my_reno", "x2_y"]);
    assert_eq!(r.names(), want);
}

/// The static policy under another name, counting the allowances it builds.
#[derive(Debug, Default)]
struct CountingAllowance(AtomicUsize);

impl crate::transport::allowance::AllowanceFactory for CountingAllowance {
    fn build(
        &self,
        params: &crate::transport::allowance::AllowanceParams,
    ) -> Box<dyn crate::transport::allowance::Allowance> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::new(crate::transport::allowance::StaticAllowance::new(
            params.initial_window,
        ))
    }
}

fn allowance_registry() -> (Registry, Arc<CountingAllowance>) {
    let f = Arc::new(CountingAllowance::default());
    let mut r = Registry::builtin();
    r.register_allowance("my_static", f.clone()).unwrap();
    (r, f)
}

#[test]
fn a_registered_allowance_runs_and_matches_the_builtin_it_copies() {
    let (r, f) = allowance_registry();
    let keys = |a: &str| format!("allowance = \"{a}\"\nstream_window = \"8kB\"");
    let s = parse_str_with(&scenario("quic", &keys("my_static")), &r).unwrap();
    assert_eq!(f.0.load(Ordering::Relaxed), 0, "parsing builds nothing");
    let user = crate::run(&s.base, 3).unwrap();
    assert_eq!(user.status, crate::RunStatus::Completed);
    // Streams and connections of both sides.
    assert!(f.0.load(Ordering::Relaxed) >= 4);
    // The same policy under its built-in name, through the same registry: the same run.
    let b = parse_str_with(&scenario("quic", &keys("static")), &r).unwrap();
    assert_eq!(crate::run(&b.base, 3).unwrap().digest, user.digest);
    // The name is written back and read again with the registry.
    let text = to_toml(&s.base).unwrap();
    assert!(text.contains("allowance = \"my_static\""), "{text}");
    assert_eq!(parse_str_with(&text, &r).unwrap().base, s.base);
}

#[test]
fn unknown_allowances_are_field_named_errors_listing_the_registered_names() {
    let e = parse_str(&scenario("quic", "allowance = \"my_static\"")).unwrap_err();
    assert_eq!(e.field, "flows[0].allowance");
    assert_eq!(e.value, "my_static");
    // The built-in policies, from their table (AllowanceKind::ALL).
    let builtin = crate::transport::allowance::AllowanceRegistry::builtin().allowed();
    assert!(
        builtin.starts_with("one of \"static\", \"improved_static\", "),
        "{builtin}"
    );
    assert_eq!(e.allowed, builtin);
    let (r, _) = allowance_registry();
    let e = parse_str_with(&scenario("quic", "connection_allowance = \"lazy\""), &r).unwrap_err();
    assert_eq!(e.field, "flows[0].connection_allowance");
    assert!(
        e.allowed.starts_with(&builtin) && e.allowed.ends_with(", \"my_static\""),
        "{e}"
    );
    let e = parse_str_with(
        &scenario("quic", "quic = { server = { allowance = \"lazy\" } }"),
        &r,
    )
    .unwrap_err();
    assert_eq!(e.field, "flows[0].quic.server.allowance");
    // Controllers and allowances are separate namespaces.
    let e = parse_str_with(&scenario("quic", "cc = \"my_static\""), &r).unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    // TCP and SCTP take no allowance: the key is an error naming the field.
    for transport in ["tcp", "sctp"] {
        let e = parse_str_with(&scenario(transport, "allowance = \"my_static\""), &r).unwrap_err();
        assert!(e.field.ends_with("allowance"), "{transport}: {e}");
    }
}

#[test]
fn allowances_in_configs_built_in_code_are_validated_and_resolved() {
    use crate::transport::allowance::{AllowancePolicy, CustomAllowance};
    let mut cfg = parse_str(&scenario("quic", "stream_window = \"8kB\""))
        .unwrap()
        .base;
    if let crate::config::AppConfig::Transport(t) = &mut cfg.flows[0].app {
        if let crate::config::TransportConfig::Quic(q) = &mut t.transport {
            q.client.allowance = AllowancePolicy::Custom(CustomAllowance::unresolved("my_static"));
            q.server.allowance = q.client.allowance.clone();
        }
    }
    let e = cfg.validate().unwrap_err();
    assert_eq!(e.field, "flows[0].allowance");
    assert!(crate::run(&cfg, 1).is_err(), "run validates first");
    let e = cfg
        .clone()
        .resolve_controllers(&Registry::builtin())
        .unwrap_err();
    assert_eq!(e.field, "flows[0].allowance");
    let (r, f) = allowance_registry();
    cfg.resolve_controllers(&r).unwrap();
    cfg.validate().unwrap();
    assert_eq!(
        crate::run(&cfg, 1).unwrap().status,
        crate::RunStatus::Completed
    );
    assert!(f.0.load(Ordering::Relaxed) >= 4);
}
