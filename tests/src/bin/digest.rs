//! `digest FILE...`: runs each scenario's first sweep point with its seed and prints
//! `file seed status digest`, one line per file. Built natively and for wasm32-wasip1 by
//! `scripts/wasm-digest-check`, which compares the two outputs byte for byte.

fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        match sim_core::scenario::parse_str(&text) {
            Ok(s) => {
                let cfg = &s.points[0].config;
                for i in 0..cfg.runs.min(3) {
                    let seed = cfg.seed.wrapping_add(i as u64);
                    match sim_core::run(cfg, seed) {
                        Ok(r) => println!("{path} {seed} {:?} {} {}", r.status, r.events, r.digest),
                        Err(e) => {
                            eprintln!("{path}: {e}");
                            failed = true;
                        }
                    }
                }
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(2);
    }
}
