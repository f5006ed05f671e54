//! libFuzzer, structure-aware: the input bytes seed `quicsim_fuzz::generate`, whose
//! scenario is checked by `quicsim_fuzz::check`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = quicsim_fuzz::generate(&mut quicsim_fuzz::Rng::from_bytes(data));
    if let Err(v) = quicsim_fuzz::check(&text, quicsim_fuzz::Budget::default()) {
        panic!("invariant violated: {v}\n{text}");
    }
});
