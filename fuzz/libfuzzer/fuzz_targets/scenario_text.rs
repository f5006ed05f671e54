//! libFuzzer over raw scenario text: every invariant of `quicsim_fuzz::check`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(v) = quicsim_fuzz::check(text, quicsim_fuzz::Budget::default()) {
            panic!("invariant violated: {v}\n{text}");
        }
    }
});
