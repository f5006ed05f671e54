//! A CLI-like runner that knows the user's controllers: `broken-aimd-run FILE.toml`
//! parses the scenario with [`broken_aimd::registry`] and prints `seed digest status` per
//! run. `quicsim run` knows only the built-in controllers; a user's binary like this one
//! replays a shrunk scenario natively, and built for `wasm32-wasip1` gives the same lines.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: broken-aimd-run SCENARIO.toml");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    match broken_aimd::run_scenario(&text) {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
