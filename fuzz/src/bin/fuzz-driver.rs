//! The stable-toolchain fuzz driver: `fuzz-driver [--iterations N] [--seed S]
//! [--max-events B] [--input FILE] [--print SEED]`. Input `i` is generated from seed `S + i` by
//! `quicsim_fuzz::generate` and checked by `quicsim_fuzz::check` (see its invariants); a
//! panic or a violated invariant prints the input (and its seed) and exits 1, so any
//! failure is reproduced with `--seed <its seed> --iterations 1`. `--input FILE` checks one
//! scenario file instead. A check taking more than 60 s of wall clock is reported as a
//! failure to bound work (a guard in the harness, not a timing assertion on the model).

use quicsim_fuzz::{check, generate, Budget, Outcome, Rng};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const GUARD: Duration = Duration::from_secs(60);

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn num(args: &[String], name: &str, default: u64) -> u64 {
    arg(args, name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} {v}: expected a non-negative integer"))
    })
}

fn fail(what: &str, seed: Option<u64>, text: &str) -> ExitCode {
    eprintln!("fuzz-driver: {what}");
    if let Some(seed) = seed {
        eprintln!("reproduce with: fuzz-driver --seed {seed} --iterations 1");
    }
    eprintln!("--- input ---\n{text}\n--- end ---");
    ExitCode::from(1)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let budget = Budget {
        max_events: num(&args, "--max-events", Budget::default().max_events),
        ..Budget::default()
    };
    if let Some(file) = arg(&args, "--input") {
        let text = std::fs::read_to_string(&file).expect("readable input");
        return match catch_unwind(AssertUnwindSafe(|| check(&text, budget))) {
            Ok(Ok(o)) => {
                println!("{o:?}");
                ExitCode::SUCCESS
            }
            Ok(Err(v)) => fail(&v, None, &text),
            Err(_) => fail("panic", None, &text),
        };
    }
    if let Some(seed) = arg(&args, "--print") {
        let seed: u64 = seed.parse().expect("--print SEED: an integer");
        println!("{}", generate(&mut Rng::new(seed)));
        return ExitCode::SUCCESS;
    }
    if let Some(seed) = arg(&args, "--print") {
        let seed: u64 = seed.parse().expect("--print SEED: an integer");
        println!("{}", generate(&mut Rng::new(seed)));
        return ExitCode::SUCCESS;
    }
    let n = num(&args, "--iterations", 1000);
    let seed0 = num(&args, "--seed", 1);
    let start = Instant::now();
    let (mut rejected, mut ran) = (0u64, 0u64);
    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    let mut slowest = (Duration::ZERO, 0u64);
    for i in 0..n {
        let seed = seed0.wrapping_add(i);
        let text = generate(&mut Rng::new(seed));
        let t0 = Instant::now();
        let res = catch_unwind(AssertUnwindSafe(|| check(&text, budget)));
        let took = t0.elapsed();
        if took > slowest.0 {
            slowest = (took, seed);
        }
        match res {
            Ok(Ok(Outcome::Rejected(_))) => rejected += 1,
            Ok(Ok(Outcome::Ran(s))) => {
                ran += 1;
                for st in s {
                    *statuses.entry(st.to_string()).or_default() += 1;
                }
            }
            Ok(Err(v)) => return fail(&v, Some(seed), &text),
            Err(_) => return fail("panic", Some(seed), &text),
        }
        if took > GUARD {
            return fail(
                &format!("one input took {took:?} (> {GUARD:?})"),
                Some(seed),
                &text,
            );
        }
    }
    println!(
        "fuzz-driver: {n} inputs from seed {seed0} in {:.1} s: {rejected} rejected with a field-named error, {ran} ran ({statuses:?}); 0 panics, 0 invariant violations; slowest {:.3} s (seed {})",
        start.elapsed().as_secs_f64(),
        slowest.0.as_secs_f64(),
        slowest.1
    );
    ExitCode::SUCCESS
}
