//! The raw TOML layer: tables read against their descriptors ([`Read`]), and typed
//! readers of single values that name the field on error.
//!
//! Each table's keys are checked against its descriptors one table at a time (an error
//! then names the full path), and each value is parsed by its kind and range-checked by
//! its descriptor once ([`read`]), with messages of our own.

use super::schema::{unknown_key, DefaultValue, Field, Kind, Table, PROBABILITY};
use crate::time::SimDuration;
use crate::units::{parse_bytes, parse_duration, parse_rate, Bytes, Rate};
use crate::validate::{check_field, join, ConfigError};
use serde::de::DeserializeOwned;
use toml::Value;

/// A table of the document read against its descriptors ([`super::schema`]): every key
/// of the table is declared by one of `schemas` (else the error names the key and lists the
/// declared ones, in serde's words), and each value is parsed, range-checked and given its
/// default by [`read`] through its descriptor.
pub(super) struct Read<'a> {
    schemas: &'a [&'static Table],
    table: &'a toml::Table,
    path: String,
}

impl<'a> Read<'a> {
    /// Opens `v`, written at `path`, as a table whose keys are those of `schemas` (the last
    /// names the table in errors).
    pub fn open(
        v: &'a Value,
        path: &str,
        schemas: &'a [&'static Table],
    ) -> Result<Read<'a>, ConfigError> {
        let what = schemas.last().map_or("a table", |t| t.what);
        let Value::Table(table) = v else {
            return Err(ConfigError::new(
                path,
                render(v),
                format!("a table ({what})"),
            ));
        };
        check_keys(table, path, schemas)?;
        Ok(Read {
            schemas,
            table,
            path: path.to_string(),
        })
    }

    fn field(&self, key: &str) -> &'static Field {
        match self.schemas.iter().find(|t| t.has(key)) {
            Some(t) => t.field(key),
            None => panic!("no descriptor for key {key}"),
        }
    }

    /// The full path of `key`.
    pub fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The value of `key` as written, if it is.
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        debug_assert!(
            self.schemas.iter().any(|t| t.has(key)),
            "undeclared key {key}"
        );
        self.table.get(key)
    }

    /// The canonical value of the scalar `key` (as written, or its default): `None` when
    /// it is unset and has no default; an error when it is required and missing.
    pub fn canonical(&self, key: &str) -> Result<Option<Value>, ConfigError> {
        let f = self.field(key);
        match self.table.get(key) {
            Some(v) => read(f, v, &self.at(key)).map(Some),
            None => default_of(f, &self.at(key)),
        }
    }

    /// `key` as a typed value (given, or its default).
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ConfigError> {
        match self.canonical(key)? {
            Some(v) => typed(v, &self.at(key)).map(Some),
            None => Ok(None),
        }
    }

    /// `key`, which is required or has a default.
    pub fn req<T: DeserializeOwned>(&self, key: &str) -> Result<T, ConfigError> {
        let f = self.field(key);
        self.get(key)?.ok_or_else(|| {
            ConfigError::new(self.at(key), MISSING, format!("{} (required)", f.allowed))
        })
    }

    /// The struct `T` from every scalar key of the schemas (given or defaulted), through
    /// `T`'s serde form, plus the entries of `extra`.
    pub fn deserialize<T: DeserializeOwned>(&self, extra: toml::Table) -> Result<T, ConfigError> {
        let mut t = toml::Table::new();
        for schema in self.schemas {
            for f in schema.fields {
                if is_scalar(f.kind) {
                    if let Some(v) = self.canonical(f.name)? {
                        t.insert(f.name.to_string(), v);
                    }
                }
            }
        }
        t.extend(extra);
        typed(Value::Table(t), &self.path)
    }
}

/// Rejects a key of `table` (at `path`) that none of `schemas` declares.
pub(super) fn check_keys(
    table: &toml::Table,
    path: &str,
    schemas: &[&'static Table],
) -> Result<(), ConfigError> {
    for (k, val) in table {
        if !schemas.iter().any(|t| t.has(k)) {
            let fields: Vec<&'static Field> = schemas.iter().flat_map(|t| t.fields).collect();
            let what = schemas.last().map_or("a table", |t| t.what);
            return Err(ConfigError::new(
                join(path, k),
                render(val),
                format!("a key of {what}: {}", unknown_key(&fields, k)),
            ));
        }
    }
    Ok(())
}

/// Whether a key of this kind is read by [`read`] (not by a table-specific parser).
pub(super) fn is_scalar(kind: Kind) -> bool {
    !matches!(kind, Kind::Table | Kind::Tables)
}

/// A canonical value (the `Config` serde form) as `T`.
pub(super) fn typed<T: DeserializeOwned>(v: Value, path: &str) -> Result<T, ConfigError> {
    let shown = render(&v);
    v.try_into::<T>()
        .map_err(|e| ConfigError::new(path, shown, format!("a valid value ({})", e.message())))
}

/// The default of `f` (at `path`), parsed as a scenario would write it.
pub(super) fn default_of(f: &Field, path: &str) -> Result<Option<Value>, ConfigError> {
    match f.default {
        DefaultValue::Value(text) => {
            let v = default_value(text);
            if is_scalar(f.kind) {
                read(f, &v, path).map(Some)
            } else {
                Ok(Some(v))
            }
        }
        DefaultValue::Required => Err(ConfigError::new(
            path,
            MISSING,
            format!("{} (required)", f.allowed),
        )),
        DefaultValue::Unset(_) => Ok(None),
    }
}

/// A descriptor's default text as a TOML value.
pub(super) fn default_value(text: &str) -> Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t.remove("v").unwrap_or(Value::Boolean(false)),
        Err(e) => panic!("descriptor default {text:?} is not TOML: {e}"),
    }
}

/// A scalar value of the key `f` written at `path`: parsed by its kind (unit errors name
/// what the kind allows), range-checked by its descriptor (the error shows the value as
/// written), and returned in its canonical (`Config` serde) form.
pub(super) fn read(f: &Field, v: &Value, path: &str) -> Result<Value, ConfigError> {
    let with_written = |mut e: ConfigError| {
        e.value = render(v);
        e
    };
    match f.kind {
        Kind::Rate => {
            let r = get_rate(v, path)?;
            check_field(f, r, path).map_err(with_written)?;
            Ok(Value::String(crate::units::format_rate(r)))
        }
        Kind::Time => {
            let d = get_duration(v, path)?;
            check_field(f, d, path).map_err(with_written)?;
            Ok(Value::String(crate::units::format_duration(d)))
        }
        Kind::Size => {
            let b = get_bytes(v, path)?;
            check_field(f, b, path).map_err(with_written)?;
            Ok(Value::String(crate::units::format_bytes(b)))
        }
        Kind::Probability => {
            let p = get_prob(v, path)?;
            check_field(f, p, path).map_err(with_written)?;
            Ok(Value::Float(p))
        }
        Kind::Integer => match v {
            Value::Integer(n) if *n >= 0 && f.contains((*n as u64).into()) => Ok(v.clone()),
            _ => Err(ConfigError::new(path, render(v), f.allowed)),
        },
        Kind::Number => {
            let x = match v {
                Value::Float(x) => *x,
                Value::Integer(n) => *n as f64,
                _ => return Err(ConfigError::new(path, render(v), f.allowed)),
            };
            check_field(f, x, path).map_err(with_written)?;
            Ok(Value::Float(x))
        }
        Kind::Bool => get_bool(v, path).map(Value::Boolean),
        Kind::String => get_string(v, path).map(Value::String),
        // A registry may add names to an open enum (`cc`): any valid name passes here and
        // is resolved against the registry once the config is built.
        Kind::Enum if f.open && v.as_str().is_some_and(crate::cc::registry::valid_name) => {
            Ok(v.clone())
        }
        Kind::Enum => get_choice(v, path, f.choices).map(|c| Value::String(c.to_string())),
        Kind::Table | Kind::Tables => Ok(v.clone()),
    }
}

/// What `value` shows of a TOML value: strings without quotes, everything else as inline
/// TOML, cut at 120 characters.
pub(super) fn render(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        let mut cut: String = s.chars().take(117).collect();
        cut.push_str("...");
        cut
    } else {
        s
    }
}

/// The value shown for a required key that is absent.
pub(super) const MISSING: &str = "(missing)";

/// Deserializes the table `v` (at `path`) into the raw struct `T`, which describes `what`.
/// Unknown keys are reported at `path.key`, with serde's list of the expected keys.
pub(super) fn from_value<T: DeserializeOwned>(
    v: &Value,
    path: &str,
    what: &str,
) -> Result<T, ConfigError> {
    let Value::Table(table) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            format!("a table ({what})"),
        ));
    };
    v.clone().try_into::<T>().map_err(|e| {
        let msg = e.message().to_string();
        if let Some(key) = msg
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(k, _)| k.to_string())
        {
            let value = table.get(&key).map(render).unwrap_or_default();
            ConfigError::new(join(path, &key), value, format!("a key of {what}: {msg}"))
        } else {
            ConfigError::new(path, render(v), format!("{what}: {msg}"))
        }
    })
}

/// The `expected` text of a unit parser.
fn unit_expected<T>(r: Result<T, crate::units::UnitError>) -> String {
    r.err().map(|e| e.expected).unwrap_or_default()
}

pub(super) fn rate_expected() -> String {
    unit_expected(parse_rate(""))
}

pub(super) fn time_expected() -> String {
    unit_expected(parse_duration(""))
}

pub(super) fn size_expected() -> String {
    unit_expected(parse_bytes(""))
}

/// A rate: a string with a unit, or an integer number of bit/s.
pub(super) fn get_rate(v: &Value, path: &str) -> Result<Rate, ConfigError> {
    match v {
        Value::String(s) => parse_rate(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(Rate(*n as u64)),
        Value::Integer(_) => Err(ConfigError::new(
            path,
            render(v),
            crate::units::negative_error(&rate_expected()),
        )),
        _ => Err(ConfigError::new(path, render(v), rate_expected())),
    }
}

/// A duration: a string with a unit, or an integer number of nanoseconds.
pub(super) fn get_duration(v: &Value, path: &str) -> Result<SimDuration, ConfigError> {
    match v {
        Value::String(s) => parse_duration(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(SimDuration(*n as u64)),
        Value::Integer(_) => Err(ConfigError::new(
            path,
            render(v),
            crate::units::negative_error(&time_expected()),
        )),
        _ => Err(ConfigError::new(path, render(v), time_expected())),
    }
}

/// A size: a string with a unit, or an integer number of bytes.
pub(super) fn get_bytes(v: &Value, path: &str) -> Result<Bytes, ConfigError> {
    match v {
        Value::String(s) => parse_bytes(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(Bytes(*n as u64)),
        Value::Integer(_) => Err(ConfigError::new(
            path,
            render(v),
            crate::units::negative_error(&size_expected()),
        )),
        _ => Err(ConfigError::new(path, render(v), size_expected())),
    }
}

/// An integer in `[min, max]`; `allowed` describes the range.
pub(super) fn get_int(
    v: &Value,
    path: &str,
    min: i64,
    max: i64,
    allowed: &str,
) -> Result<i64, ConfigError> {
    match v {
        Value::Integer(n) if (min..=max).contains(n) => Ok(*n),
        _ => Err(ConfigError::new(path, render(v), allowed)),
    }
}

/// `true` or `false`.
pub(super) fn get_bool(v: &Value, path: &str) -> Result<bool, ConfigError> {
    v.as_bool()
        .ok_or_else(|| ConfigError::new(path, render(v), "true or false"))
}

/// Any string.
pub(super) fn get_string(v: &Value, path: &str) -> Result<String, ConfigError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| ConfigError::new(path, render(v), "a string"))
}

/// One of the strings `choices`.
pub(super) fn get_choice<'a>(
    v: &Value,
    path: &str,
    choices: &[&'a str],
) -> Result<&'a str, ConfigError> {
    let allowed = || {
        let list: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
        format!("one of {}", list.join(", "))
    };
    let s = v
        .as_str()
        .ok_or_else(|| ConfigError::new(path, render(v), allowed()))?;
    choices
        .iter()
        .find(|c| **c == s)
        .copied()
        .ok_or_else(|| ConfigError::new(path, s, allowed()))
}

pub(super) use crate::units::parse_decimal;

/// `"2.5%"` -> 0.025, correctly rounded (the decimal is scaled before the one conversion
/// to binary). `None` unless the string is a plain decimal followed by `%`.
pub(super) fn parse_percent(s: &str) -> Option<f64> {
    let num = s.trim().strip_suffix('%')?.trim_end();
    parse_decimal(num)?;
    format!("{num}e-2").parse().ok()
}

/// A probability as written: a number, or a percentage string. Its range is checked by
/// its descriptor ([`read`]).
pub(super) fn get_prob(v: &Value, path: &str) -> Result<f64, ConfigError> {
    let p = match v {
        Value::Float(f) => Some(*f),
        Value::Integer(n) => Some(*n as f64),
        Value::String(s) => parse_percent(s),
        _ => None,
    };
    p.ok_or_else(|| ConfigError::new(path, render(v), PROBABILITY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_correctly_rounded() {
        assert_eq!(parse_percent("2%"), Some(0.02));
        assert_eq!(parse_percent("0.1%"), Some(0.001));
        assert_eq!(parse_percent("12.5 %"), Some(0.125));
        assert_eq!(parse_percent("-1%"), None);
        assert_eq!(parse_percent("2"), None);
        assert_eq!(parse_percent("nan%"), None);
    }

    #[test]
    fn decimal() {
        assert_eq!(parse_decimal("12.5"), Some((125, 1)));
        assert_eq!(parse_decimal("0.05"), Some((5, 2)));
        assert_eq!(parse_decimal("1"), Some((1, 0)));
        assert_eq!(parse_decimal("."), None);
        assert_eq!(parse_decimal("1e3"), None);
    }
}
