//! The property test of issue 16: `sim_core::testing::hunt` finds the planted bug of
//! `broken_aimd`, shrinks it to a scenario of a few keys, and the written file replays the
//! failure (same digest) through the library and through the example's runner binary.
//! The same property passes for the fixed controller and the built-in NewReno and CUBIC.

use sim_core::testing::{self, Bounds};

/// Lossy enough for losses in a row; small transfers keep the default suite fast.
fn bounds(controllers: &[&str]) -> Bounds {
    Bounds {
        max_loss: 0.2,
        max_bytes: 60_000,
        controllers: controllers.iter().map(|c| c.to_string()).collect(),
        ..Bounds::default()
    }
}

/// The property: every invariant of the kit holds.
fn property(cfg: &sim_core::Config, seed: u64) -> Result<(), String> {
    testing::run_checked(cfg, seed).map(|_| ())
}

#[test]
fn finds_and_shrinks_the_planted_bug_and_the_file_replays_it() {
    let registry = broken_aimd::registry();
    let failure = testing::hunt(&bounds(&[broken_aimd::NAME]), &registry, 64, property)
        .expect_err("the planted bug is found within 64 cases");
    assert!(
        failure
            .reason
            .contains("below the controller's minimum window"),
        "{failure}"
    );
    let text = failure.to_toml();
    // A few keys: the flow's transport, controller and workload, one link, the loss.
    let keys = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('[') && l.contains('='))
        .count();
    assert!(keys <= 10, "{keys} keys:\n{text}");

    eprintln!("{failure}");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("broken-aimd-shrunk.toml");
    failure.write(&path).unwrap();

    // Replay through the library: same failure, same digest as the hunt's run.
    let written = std::fs::read_to_string(&path).unwrap();
    let scenario = sim_core::scenario::parse_str_with(&written, &registry).unwrap();
    let cfg = &scenario.base;
    assert_eq!(cfg.seed, failure.seed);
    let again = testing::run_checked(cfg, cfg.seed).unwrap_err();
    assert_eq!(again, failure.reason);
    let digest = sim_core::run(cfg, cfg.seed).unwrap().digest;

    // Replay through the user's runner binary: the same digest.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_broken-aimd-run"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first = stdout.lines().next().unwrap_or_default();
    assert_eq!(first.split(' ').nth(1), Some(digest.as_str()), "{stdout}");

    // The CLI knows only the built-in controllers: it names the field and the choices.
    let e = sim_core::scenario::parse_str(&written).unwrap_err();
    assert_eq!(e.field, "flows[0].cc");
    assert_eq!(e.value, broken_aimd::NAME);
}

#[test]
fn the_fixed_controller_passes() {
    let registry = broken_aimd::registry();
    let outcome = testing::hunt(&bounds(&[broken_aimd::FIXED_NAME]), &registry, 24, property);
    assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
}

#[test]
fn builtin_controllers_pass_every_invariant() {
    let b = Bounds {
        transports: vec!["quic".into(), "tcp".into()],
        ..bounds(&["new_reno", "cubic"])
    };
    let outcome = testing::hunt(&b, &sim_core::Registry::builtin(), 24, property);
    assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
}

/// The same with more cases, bigger transfers, dumbbells and handovers (release:
/// `cargo test --release -p broken-aimd -- --ignored`).
#[test]
#[ignore]
fn builtin_controllers_pass_every_invariant_many_cases() {
    let b = Bounds {
        transports: vec!["quic".into(), "tcp".into(), "sctp".into()],
        max_bytes: 500_000,
        max_flows: 3,
        handovers: true,
        ..bounds(&["new_reno", "cubic"])
    };
    let outcome = testing::hunt(&b, &sim_core::Registry::builtin(), 400, property);
    assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
}
