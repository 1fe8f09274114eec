//! A protocol file as TOML gives it, before any check: each value with its place in the
//! text (`Spanned`), so that a problem names its line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub protocol: Spanned<RawHeader>,
    #[serde(default)]
    pub task: Vec<Spanned<RawTask>>,
    #[serde(default)]
    pub qa_type: Vec<Spanned<RawQaType>>,
    #[serde(default)]
    pub reason: Vec<Spanned<RawReason>>,
    #[serde(default)]
    pub sampling: Vec<Spanned<RawSampling>>,
    pub tables: Option<Spanned<RawTables>>,
    #[serde(default)]
    pub field: Vec<Spanned<RawField>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawField {
    pub name: Spanned<String>,
    pub label: Spanned<String>,
    #[serde(default)]
    pub required: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHeader {
    /// Required; optional here so that its absence is said with every other problem.
    pub name: Option<Spanned<String>>,
    /// Required, as `name`.
    pub version: Option<Spanned<i64>>,
    #[serde(default)]
    pub description: String,
    pub target_per_task: Option<Spanned<i64>>,
    #[serde(default = "yes")]
    pub export_variants: bool,
    #[serde(default)]
    pub clip_review: Option<Spanned<bool>>,
    pub pairing: Option<Spanned<String>>,
    pub levels: Option<Spanned<Vec<Spanned<String>>>>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTask {
    pub code: Spanned<String>,
    pub name: Spanned<String>,
    pub short: Option<Spanned<String>>,
    /// By name; each name's place in the text gives the protocol's order.
    #[serde(default)]
    pub attributes: BTreeMap<Spanned<String>, Spanned<String>>,
    pub qa_types: Spanned<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQaType {
    pub code: Spanned<String>,
    pub name: Spanned<String>,
    pub level: Spanned<String>,
    #[serde(default)]
    pub paired: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReason {
    pub stage: Spanned<i64>,
    pub code: Spanned<String>,
    pub label: Spanned<String>,
    pub key: Spanned<i64>,
    #[serde(default)]
    pub levels: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub note: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSampling {
    pub stage: Spanned<i64>,
    pub task: Option<Spanned<String>>,
    pub qa_type: Option<Spanned<String>>,
    pub aql: Option<Spanned<f64>>,
    pub rql: Option<Spanned<f64>>,
    pub alpha: Option<Spanned<f64>>,
    pub beta: Option<Spanned<f64>>,
    pub p: Option<Spanned<f64>>,
    pub n: Option<Spanned<i64>>,
    pub c: Option<Spanned<i64>>,
    pub confidence: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTables {
    pub t11: Option<Spanned<RawGrouping>>,
    pub names: Option<Spanned<RawNames>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGrouping {
    pub rows: Spanned<String>,
    #[serde(default)]
    pub columns: Vec<Spanned<String>>,
    pub row_title: Option<Spanned<String>>,
    pub column_title: Option<Spanned<String>>,
}

/// A name for each table the protocol names (`domain::taxonomy::Table`'s keys).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNames {
    pub t11: Option<Spanned<String>>,
    pub t12: Option<Spanned<String>>,
    pub t13: Option<Spanned<String>>,
    pub t14: Option<Spanned<String>>,
    pub t15: Option<Spanned<String>>,
    pub t16: Option<Spanned<String>>,
}
