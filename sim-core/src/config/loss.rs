//! Loss models: one declared table of definitions (`DESIGN.md`, "Extension points are
//! declared tables").
//!
//! Each model is one file in `config/loss/` holding its parameters (a serde struct), its key
//! descriptors, its rules, its long-run loss rate and its per-packet judgement (the
//! [`LossModelDef`] trait), and one line in the `loss_models!` list below. From that list
//! come the [`LossModel`] enum (serde-tagged by `model`), every dispatch on it, the names
//! the scenario format accepts ([`LOSS_MODEL_NAMES`], the `model` key's choices), the key
//! tables of the docs and the browser ([`LOSS_TABLES`]) and the parsers
//! ([`LOSS_MODEL_DEFS`]). Nothing else names a model; `config::loss::tests` checks that each
//! serde tag is its definition's name.
//!
//! Add a model: write `config/loss/<name>.rs` (copy the shape of `periodic.rs`), add its
//! line to the list. Its drop reason is a [`DropReason`] (a new one is a row of
//! `metrics::DROP_REASONS`); its draws per packet are fixed (`impair.rs`'s rule).

use super::drop_reason::DropReason;
use crate::keys::{key, DefaultValue, Field, Kind, Table};
use crate::rng::RngStream;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A rule broken by a model's values: `(key, value, allowed)`, the key `""` naming the
/// model's table itself (a rule tying several keys together).
pub type FieldError = (&'static str, String, String);

/// One loss model: what a file of `config/loss/` implements.
pub trait LossModelDef: Clone + std::fmt::Debug + PartialEq + Serialize + Sized {
    /// The name a scenario writes (`model = "<NAME>"`), equal to the serde tag.
    const NAME: &'static str;
    /// Its keys (`model` first, [`model_key`]); the table's id is `loss.<NAME>`.
    const KEYS: Table;
    /// The drop reason of the packets it loses.
    const DROP: DropReason;
    /// Random values drawn per packet, whatever the outcome (`link::impair`'s rule: two
    /// protocols under one seed meet the same losses by packet index).
    const DRAWS: u64;
    /// Whether a scheduled change to another parameter set of the same model keeps the
    /// chain's state (as `tc qdisc change` keeps netem's Gilbert-Elliott state); otherwise
    /// the state restarts as for a new stage.
    const KEEPS_STATE_ON_CHANGE: bool = false;
    /// What the model remembers from one packet to the next.
    type State: Clone + Copy + std::fmt::Debug + PartialEq;
    /// The keys as read (after their descriptors' checks), before the model's own rules.
    type Raw: DeserializeOwned;

    /// The model from its keys, or the first broken rule.
    fn from_raw(raw: Self::Raw) -> Result<Self, FieldError>;
    /// A spelling of the model's own that replaces its keys (netem's `gemodel` string for
    /// Gilbert-Elliott): `Some` when `written` (the table as written, its keys checked
    /// against [`LossModelDef::KEYS`]) uses it. Errors name the key of that spelling; their
    /// value is the value as written.
    fn own_spelling(written: &toml::Table) -> Option<Result<Self, FieldError>> {
        let _ = written;
        None
    }
    /// The rules that tie its keys together (each key's own range is its descriptor's).
    fn check(&self) -> Result<(), FieldError> {
        Ok(())
    }
    /// Long-run fraction of packets lost, from the model's formula; `None` when the
    /// chain has no unique stationary distribution.
    fn stationary_loss(&self) -> Option<f64>;
    /// The state before the first packet.
    fn start(&self) -> Self::State;
    /// Judges one packet (drawing exactly [`LossModelDef::DRAWS`] values): `true` = lost.
    fn judge(&self, state: &mut Self::State, rng: &mut RngStream) -> bool;
    /// The state as traces and tests see it.
    fn memory(state: &Self::State) -> LossState;
    /// A valid instance (tests read and write every model through its table).
    fn example() -> Self;
}

/// The `model` key every loss table starts with.
pub const fn model_key() -> Field {
    key(
        "model",
        Kind::Enum,
        DefaultValue::Required,
        "the loss model",
    )
    .choices(LOSS_MODEL_NAMES)
}

/// The memory a loss stage carries from one packet to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossState {
    /// `none` and `bernoulli`: no memory.
    Memoryless,
    /// `periodic`: 0-based index of the next packet to be judged, counted from the moment
    /// the model was set.
    Periodic {
        /// Index of the next packet.
        next_index: u64,
    },
    /// `gilbert_elliott`: the state the next packet arrives in.
    GilbertElliott(GeState),
    /// `four_state`: the state entered by the last packet (state 1 before the first).
    FourState(FourStateId),
}

/// How a loss table of one model is read and written: a row of [`LOSS_MODEL_DEFS`].
#[derive(Clone, Copy, Debug)]
pub struct LossModelRow {
    /// The model's name.
    pub name: &'static str,
    /// Its key table.
    pub keys: &'static Table,
    /// The model from its table after the keys' descriptors were checked and the defaults
    /// filled in (the scenario reader does that), or the first broken rule (its own
    /// rules included).
    pub from_table: fn(toml::Value) -> Result<LossModel, FieldError>,
    /// [`LossModelDef::own_spelling`], with the model's rules checked.
    pub own_spelling: fn(&toml::Table) -> Option<Result<LossModel, FieldError>>,
}

/// Reads `D` from a checked table (with or without its `model` key): its [`LossModelDef::Raw`], then its rules.
fn from_table<D: LossModelDef>(v: toml::Value) -> Result<LossModel, FieldError>
where
    LossModel: From<D>,
{
    // The `model` key chose the row; the model's own keys follow.
    let mut v = v;
    if let toml::Value::Table(t) = &mut v {
        t.remove("model");
    }
    let raw: D::Raw = v
        .try_into()
        .map_err(|e: toml::de::Error| ("", String::new(), e.message().to_string()))?;
    let model = D::from_raw(raw)?;
    model.check()?;
    Ok(LossModel::from(model))
}

/// [`LossModelDef::own_spelling`] of `D` with its rules checked.
fn own_spelling<D: LossModelDef>(written: &toml::Table) -> Option<Result<LossModel, FieldError>>
where
    LossModel: From<D>,
{
    let model = D::own_spelling(written)?;
    Some(model.and_then(|m| {
        m.check()?;
        Ok(LossModel::from(m))
    }))
}

/// Declares the loss models: `Variant(module::Type)`, one line each, in the order the docs
/// and every list show them.
macro_rules! loss_models {
    ($($variant:ident($module:ident::$ty:ident),)*) => {
        $(mod $module; pub use $module::$ty;)*

        /// A link's loss model (`loss = { model = "...", ... }`), one variant per row of
        /// `loss_models!`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "model", rename_all = "snake_case")]
        pub enum LossModel {
            $(
                #[doc = concat!("`", stringify!($module), "`: [`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        $(impl From<$ty> for LossModel {
            fn from(m: $ty) -> Self {
                LossModel::$variant(m)
            }
        })*

        /// Every loss model's name, in the order of the list.
        pub const LOSS_MODEL_NAMES: &[&str] = &[$(<$ty as LossModelDef>::NAME),*];

        /// Every loss model's key table, in the order of the list.
        pub const LOSS_TABLES: &[&Table] = &[$(&<$ty as LossModelDef>::KEYS),*];

        /// Every loss model's row, in the order of the list.
        pub const LOSS_MODEL_DEFS: &[LossModelRow] = &[$(LossModelRow {
            name: <$ty as LossModelDef>::NAME,
            keys: &<$ty as LossModelDef>::KEYS,
            from_table: from_table::<$ty>,
            own_spelling: own_spelling::<$ty>,
        }),*];

        /// A loss stage's state under whichever model is in force.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum AnyLossState {
            $(
                #[doc = concat!("Under [`", stringify!($ty), "`].")]
                $variant(<$ty as LossModelDef>::State),
            )*
        }

        impl LossModel {
            /// The model's name (`model = "..."`).
            pub fn name(&self) -> &'static str {
                match self { $(LossModel::$variant(_) => <$ty as LossModelDef>::NAME,)* }
            }
            /// The model's key table.
            pub fn keys(&self) -> &'static Table {
                match self { $(LossModel::$variant(_) => &<$ty as LossModelDef>::KEYS,)* }
            }
            /// The drop reason of the packets it loses.
            pub fn drop_reason(&self) -> DropReason {
                match self { $(LossModel::$variant(_) => <$ty as LossModelDef>::DROP,)* }
            }
            /// Random values drawn per judged packet.
            pub fn draws_per_packet(&self) -> u64 {
                match self { $(LossModel::$variant(_) => <$ty as LossModelDef>::DRAWS,)* }
            }
            /// The rules tying its keys together ([`LossModelDef::check`]).
            pub fn check(&self) -> Result<(), FieldError> {
                match self { $(LossModel::$variant(m) => m.check(),)* }
            }
            /// Long-run fraction of packets this model loses ([`LossModelDef::stationary_loss`]).
            pub fn stationary_loss(&self) -> Option<f64> {
                match self { $(LossModel::$variant(m) => m.stationary_loss(),)* }
            }
            /// The state before the first packet.
            pub fn start(&self) -> AnyLossState {
                match self { $(LossModel::$variant(m) => AnyLossState::$variant(m.start()),)* }
            }
            /// The state a stage keeps when this model replaces the one whose state is
            /// `old` ([`LossModelDef::KEEPS_STATE_ON_CHANGE`]).
            pub fn state_after_change(&self, old: AnyLossState) -> AnyLossState {
                match (self, old) {
                    $((LossModel::$variant(_), AnyLossState::$variant(s))
                        if <$ty as LossModelDef>::KEEPS_STATE_ON_CHANGE =>
                    {
                        AnyLossState::$variant(s)
                    })*
                    _ => self.start(),
                }
            }
            /// Judges one packet in `state` (which must be this model's): `Some(reason)`
            /// if it is lost.
            pub fn judge(&self, state: &mut AnyLossState, rng: &mut RngStream) -> Option<DropReason> {
                match (self, state) {
                    $((LossModel::$variant(m), AnyLossState::$variant(s)) => {
                        m.judge(s, rng).then_some(<$ty as LossModelDef>::DROP)
                    })*
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("a loss stage's state follows its model"),
                }
            }
        }

        /// One valid instance of every model ([`LossModelDef::example`]), in list order.
        pub fn examples() -> Vec<LossModel> {
            vec![$(LossModel::$variant(<$ty as LossModelDef>::example())),*]
        }

        impl AnyLossState {
            /// The state as traces and tests see it.
            pub fn memory(&self) -> LossState {
                match self { $(AnyLossState::$variant(s) => <$ty as LossModelDef>::memory(s),)* }
            }
        }
    };
}

loss_models! {
    None(none::NoLoss),
    Bernoulli(bernoulli::Bernoulli),
    Periodic(periodic::Periodic),
    GilbertElliott(gilbert_elliott::GilbertElliott),
    FourState(four_state::FourState),
}

pub use four_state::FourStateId;
pub use gilbert_elliott::GeState;

/// Shorthands for the built-in models (scripts and tests).
impl LossModel {
    /// No loss.
    pub const NONE: LossModel = LossModel::None(NoLoss {});

    /// [`Bernoulli`] loss with probability `p`.
    pub fn bernoulli(p: f64) -> Self {
        LossModel::Bernoulli(Bernoulli { p })
    }

    /// [`Periodic`] loss of packets `offset`, `offset + every`, ...
    pub fn periodic(every: u64, offset: u64) -> Self {
        LossModel::Periodic(Periodic { every, offset })
    }

    /// [`GilbertElliott`] loss.
    pub fn gilbert_elliott(p: f64, r: f64, k: f64, h: f64) -> Self {
        LossModel::GilbertElliott(GilbertElliott { p, r, k, h })
    }
}

/// The row of the model `name`.
pub fn def(name: &str) -> Option<&'static LossModelRow> {
    LOSS_MODEL_DEFS.iter().find(|d| d.name == name)
}

/// `(key, value, allowed)` unless `v` fits a TOML integer (a scenario could not write it
/// back otherwise).
pub(crate) fn check_toml_int(v: u64, field: &'static str) -> Result<(), FieldError> {
    if v <= i64::MAX as u64 {
        Ok(())
    } else {
        Err((
            field,
            v.to_string(),
            "an integer <= 9223372036854775807 (the largest TOML integer)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant's serde tag is its definition's name, and its key table's id is
    /// `loss.<name>` (the docs markers and the browser find it by that id).
    #[test]
    fn serde_tags_and_table_ids_are_the_definitions_names() {
        for row in LOSS_MODEL_DEFS {
            assert_eq!(row.keys.id, format!("loss.{}", row.name));
            assert_eq!(
                row.keys.fields[0].name, "model",
                "{}: model first",
                row.name
            );
        }
        let names: Vec<&str> = examples().iter().map(LossModel::name).collect();
        assert_eq!(names, LOSS_MODEL_NAMES);
        for m in examples() {
            assert_eq!(m.check(), Ok(()), "{m:?}");
            let v = toml::Value::try_from(&m).unwrap();
            assert_eq!(v.get("model").and_then(|t| t.as_str()), Some(m.name()));
            assert_eq!((def(m.name()).unwrap().from_table)(v), Ok(m));
        }
    }
}
