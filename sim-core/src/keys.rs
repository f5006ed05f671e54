//! The key descriptors of the scenario format: one [`Field`] per key (name, unit kind,
//! default as written, allowed range, one line of help), grouped in [`Table`]s, and the
//! const builders the tables are written with.
//!
//! A ground module (time and units only) so that every layer can declare the keys of what it
//! defines: `validate::schema` holds the format's tables, and the extension points below it
//! (a loss model in `config::loss`) declare their own next to their code.

use serde::Serialize;

/// What kind of value a key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A rate: `"100Mbps"` or an integer number of bit/s.
    Rate,
    /// A time: `"38ms"` or an integer number of nanoseconds.
    Time,
    /// A size: `"64KB"` or an integer number of bytes.
    Size,
    /// A probability in [0, 1]: a number or a percentage string `"2%"`.
    Probability,
    /// A TOML integer.
    Integer,
    /// A TOML number (float or integer).
    Number,
    /// `true` or `false`.
    Bool,
    /// One of the strings in the field's `choices`.
    Enum,
    /// Any string.
    String,
    /// A table (or one of the other spellings its help names).
    Table,
    /// An array of tables.
    Tables,
}

impl Kind {
    /// The kind's name in the generated docs and in `validate::schema::schema`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Rate => "rate",
            Kind::Time => "time",
            Kind::Size => "size",
            Kind::Probability => "probability",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Bool => "bool",
            Kind::Enum => "enum",
            Kind::String => "string",
            Kind::Table => "table",
            Kind::Tables => "array of tables",
        }
    }
}

/// A key's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum DefaultValue {
    /// This value, as a scenario writes it (TOML: `"600s"` with its quotes, `1`, `{}`).
    Value(&'static str),
    /// The key must be given.
    Required,
    /// No value; the text says what that means (`"none"`, `"unlimited"`,
    /// `"the flow's `bytes`"`), or is empty.
    Unset(&'static str),
}

/// One end of an allowed range, in the key's unit as a scenario writes it (`"0bps"`,
/// `"1000B"`, `"1"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// The bound, as written.
    pub value: &'static str,
    /// Whether the bound itself is allowed.
    pub inclusive: bool,
}

/// The descriptor of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The key.
    pub name: &'static str,
    /// Its unit kind.
    pub kind: Kind,
    /// For [`Kind::Enum`]: the allowed strings, the default first when there is one.
    pub choices: &'static [&'static str],
    /// For [`Kind::Enum`]: the choices are the built-in ones and a
    /// [`crate::registry::Registry`] may add names (`cc`); the scenario parser accepts any
    /// controller name here and resolves it against the registry afterwards.
    pub open: bool,
    /// Its default.
    pub default: DefaultValue,
    /// Smallest allowed value, if the kind alone does not bound it.
    pub min: Option<Bound>,
    /// Largest allowed value, if the kind alone does not bound it.
    pub max: Option<Bound>,
    /// What is allowed, as the noun phrase a validation error shows after "expected".
    pub allowed: &'static str,
    /// One line of help (markdown), the docs' description of the key.
    pub help: &'static str,
}

/// A table of the format: its keys in the order they are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Table {
    /// Stable identifier (`"link"`, `"flow.cbr"`), used by the doc markers.
    pub id: &'static str,
    /// Where it is written, e.g. `[topology]` with `kind = "two_hosts"`.
    pub path: &'static str,
    /// What it is, as error messages name it (`"a link table"`).
    pub what: &'static str,
    /// Its keys.
    pub fields: &'static [Field],
}

impl Table {
    /// The descriptor of `name`. Panics on a name the table does not declare (a bug in the
    /// caller, which names keys by literal).
    pub fn field(&self, name: &str) -> &'static Field {
        match self.fields.iter().find(|f| f.name == name) {
            Some(f) => f,
            None => panic!("table {} declares no key {name}", self.id),
        }
    }

    /// Whether the table declares `name`.
    pub fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|f| f.name == name)
    }

    /// serde's text for an unknown key, listing the declared keys:
    /// ``unknown field `x`, expected one of `a`, `b` ``.
    pub fn unknown_key(&self, key: &str) -> std::string::String {
        let fields: Vec<&Field> = self.fields.iter().collect();
        unknown_key(&fields, key)
    }
}

/// serde's text for an unknown key among `fields`.
pub(crate) fn unknown_key(fields: &[&Field], key: &str) -> std::string::String {
    let names: Vec<std::string::String> = fields.iter().map(|f| format!("`{}`", f.name)).collect();
    let expected = match names.len() {
        0 => "there are no fields".to_string(),
        1 => format!("expected {}", names[0]),
        2 => format!("expected {} or {}", names[0], names[1]),
        _ => format!("expected one of {}", names.join(", ")),
    };
    format!("unknown field `{key}`, {expected}")
}

// ---------------------------------------------------------------- builders

pub(crate) const fn key(
    name: &'static str,
    kind: Kind,
    default: DefaultValue,
    help: &'static str,
) -> Field {
    Field {
        name,
        kind,
        choices: &[],
        open: false,
        default,
        min: None,
        max: None,
        allowed: kind_allowed(kind),
        help,
    }
}

/// The `allowed` text of a key whose kind is its only rule.
const fn kind_allowed(kind: Kind) -> &'static str {
    match kind {
        Kind::Rate => "a rate such as \"100Mbps\"",
        Kind::Time => "a time such as \"10ms\"",
        Kind::Size => "a size such as \"64KB\"",
        Kind::Probability => PROBABILITY,
        Kind::Integer => "an integer",
        Kind::Number => "a number",
        Kind::Bool => "true or false",
        Kind::Enum => "one of the listed strings",
        Kind::String => "a string",
        Kind::Table => "a table",
        Kind::Tables => "an array of tables",
    }
}

impl Field {
    pub(crate) const fn choices(mut self, choices: &'static [&'static str]) -> Field {
        self.choices = choices;
        self
    }
    /// Choices a [`crate::registry::Registry`] extends ([`Field::open`]).
    pub(crate) const fn open(mut self) -> Field {
        self.open = true;
        self
    }
    pub(crate) const fn min(mut self, value: &'static str, inclusive: bool) -> Field {
        self.min = Some(Bound { value, inclusive });
        self
    }
    pub(crate) const fn max(mut self, value: &'static str, inclusive: bool) -> Field {
        self.max = Some(Bound { value, inclusive });
        self
    }
    pub(crate) const fn allowed(mut self, allowed: &'static str) -> Field {
        self.allowed = allowed;
        self
    }
    pub(crate) const fn help(mut self, help: &'static str) -> Field {
        self.help = help;
        self
    }
}

/// The `allowed` text of every probability.
pub(crate) const PROBABILITY: &str =
    "a probability in [0, 1]: a number such as 0.02 or a percentage string such as \"2%\"";
