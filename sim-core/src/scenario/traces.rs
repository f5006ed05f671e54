//! Trace-driven link rates (`rate = { trace = "file.trace" }`, [`crate::config::trace`]):
//! the pre-pass that reads each named trace through the caller's loader and writes its
//! opportunities into the document, and the reader of the `rate` table that results.
//!
//! sim-core does no file I/O: the loader (the CLI's reads the file relative to the scenario
//! file) returns a file's text or why it cannot. Without a loader ([`super::parse_str`], the
//! browser) a trace that is not written inline is refused with a message saying so.

use super::raw::render;
use crate::config::trace::{self, LinkTrace, TraceError, TRACE_LINE_ALLOWED};
use crate::validate::{join, ConfigError};
use toml::{Table, Value};

/// Reads a trace file named as the scenario names it: its text, or why it cannot be read.
pub type TraceLoader<'a> = dyn Fn(&str) -> Result<String, String> + 'a;

const KEYS: [&str; 3] = ["trace", "opportunities_ms", "digest"];

/// Whether a key (a table key, or a `[sweep]` key path) names a link's rate.
fn names_rate(key: &str) -> bool {
    key == "rate" || key.ends_with(".rate")
}

/// Writes the opportunities of every trace the document names (in a link's `rate`, or in
/// a `[sweep]` over a link's rate) into its table, read through `load`.
pub(super) fn inline(doc: &mut Table, load: &TraceLoader) -> Result<(), ConfigError> {
    for (k, v) in doc.iter_mut() {
        walk(v, k, k, load)?;
    }
    Ok(())
}

fn walk(v: &mut Value, key: &str, path: &str, load: &TraceLoader) -> Result<(), ConfigError> {
    match v {
        Value::Table(t) => {
            if names_rate(key) {
                if let (Some(Value::String(file)), false) =
                    (t.get("trace"), t.contains_key("opportunities_ms"))
                {
                    let file = file.clone();
                    let at = join(path, "trace");
                    let text = load(&file).map_err(|e| {
                        ConfigError::new(
                            &at,
                            format!("{file:?}"),
                            format!("a readable trace file ({e})"),
                        )
                    })?;
                    let ms = trace::parse_trace(&text).map_err(|e| line_error(&at, &file, e))?;
                    let lt = LinkTrace::new(&file, ms);
                    t.insert(
                        "opportunities_ms".into(),
                        Value::Array(
                            lt.opportunities_ms
                                .iter()
                                .map(|&m| Value::Integer(m as i64))
                                .collect(),
                        ),
                    );
                    t.insert("digest".into(), Value::String(lt.digest));
                    return Ok(());
                }
            }
            for (k, x) in t.iter_mut() {
                walk(x, k, &join(path, k), load)?;
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter_mut().enumerate() {
                walk(x, key, &format!("{path}[{i}]"), load)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A trace error at `at` naming the file and the line.
fn line_error(at: &str, file: &str, e: TraceError) -> ConfigError {
    let value = if e.line == 0 {
        format!("{file:?}")
    } else {
        format!("{file:?} line {}", e.line)
    };
    ConfigError::new(at, value, format!("{TRACE_LINE_ALLOWED}: {}", e.message))
}

/// Reads a link's `rate` written as a table: `{ trace = "file" }` once the pre-pass wrote
/// its `opportunities_ms` and `digest` (or a resolved config's inline trace).
pub(super) fn read_rate_table(v: &Value, path: &str) -> Result<LinkTrace, ConfigError> {
    let Value::Table(t) = v else {
        unreachable!("called on a table");
    };
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(ConfigError::new(
                join(path, k),
                render(&t[k]),
                "a key of a trace rate: `trace` (the Mahimahi trace file, relative to the scenario file)",
            ));
        }
    }
    let at = join(path, "trace");
    let file = match t.get("trace") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(ConfigError::new(
                at,
                render(other),
                "the name of a trace file (a string)",
            ))
        }
        None => {
            return Err(ConfigError::new(
                at,
                "(missing)",
                "the name of a trace file: `rate = { trace = \"file.trace\" }`",
            ))
        }
    };
    let Some(ms) = t.get("opportunities_ms") else {
        return Err(ConfigError::new(
            at,
            format!("{file:?}"),
            "a trace file that can be read here: `quicsim` reads trace files relative to the scenario file; a scenario loaded without access to files (the browser) cannot use one",
        ));
    };
    let ms_path = join(path, "opportunities_ms");
    let Value::Array(items) = ms else {
        return Err(ConfigError::new(
            ms_path,
            render(ms),
            "an array of integer millisecond timestamps",
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        match x {
            Value::Integer(n) if *n >= 0 => out.push(*n as u64),
            _ => {
                return Err(ConfigError::new(
                    format!("{ms_path}[{i}]"),
                    render(x),
                    "an integer number of milliseconds >= 0",
                ))
            }
        }
    }
    trace::check_opportunities(&out).map_err(|e| line_error(&at, &file, e))?;
    let lt = LinkTrace::new(&file, out);
    match t.get("digest") {
        None => {}
        Some(Value::String(d)) if *d == lt.digest => {}
        Some(other) => {
            return Err(ConfigError::new(
                join(path, "digest"),
                render(other),
                format!("the digest of the opportunities, {:?}", lt.digest),
            ))
        }
    }
    Ok(lt)
}
