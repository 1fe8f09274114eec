//! A taxonomy as stored with its campaign (`campaigns.taxonomy`,
//! `campaign_protocols.taxonomy`): the present form, and the one written by Tandem 0.1.0
//! and before (up to commit 1080c84), read into the present one.
//!
//! That former form gave every task three fields of its own, `scale`, `perspective` and
//! `dynamics` (VGenST-Bench's axes; empty when the protocol did not give them), and its
//! other attributes in an `attributes` object by name; a table's cell showed a task by
//! its code up to the first `_` ("MC" for MC_F_EGO_STA), and Table 11 was laid out by
//! those axes whenever a task had one. The present form keeps a task's attributes as an
//! object in the protocol's order, its label as `short`, and the tables' layout and
//! names in `tables`.

use super::{Level, QaTypeDef, ReasonDef, Tables, TaskDef, Taxonomy};
use crate::domain::pairing::Pairing;
use crate::domain::sampling::SamplingRule;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serializer};
use std::collections::BTreeMap;

/// The former typed axes, in the order the former form showed them.
const FORMER_AXES: [&str; 3] = ["scale", "perspective", "dynamics"];

#[derive(Deserialize)]
pub(super) struct StoredTask {
    code: String,
    name: String,
    #[serde(default)]
    short: String,
    #[serde(default, deserialize_with = "read_ordered")]
    attributes: Vec<(String, String)>,
    #[serde(default)]
    scale: Option<String>,
    #[serde(default)]
    perspective: Option<String>,
    #[serde(default)]
    dynamics: Option<String>,
}

impl StoredTask {
    /// Whether it was stored in the former form, and had one of the axes.
    fn former_axes(&self) -> bool {
        [&self.scale, &self.perspective, &self.dynamics]
            .iter()
            .any(|v| v.as_ref().is_some_and(|v| !v.is_empty()))
    }
}

impl From<StoredTask> for TaskDef {
    fn from(t: StoredTask) -> TaskDef {
        let axes = [t.scale, t.perspective, t.dynamics];
        let mut attributes: Vec<(String, String)> = FORMER_AXES
            .iter()
            .zip(axes)
            .filter_map(|(k, v)| v.filter(|v| !v.is_empty()).map(|v| (k.to_string(), v)))
            .collect();
        // The former form's cells showed a task with axes by its code's first part.
        let short = if t.short.is_empty() && !attributes.is_empty() {
            match t.code.split_once('_') {
                Some((prefix, _)) => prefix.to_string(),
                None => String::new(),
            }
        } else {
            t.short
        };
        // The former form's other attributes came by name, after the axes.
        attributes.extend(t.attributes);
        TaskDef {
            code: t.code,
            name: t.name,
            short,
            attributes,
        }
    }
}

/// A taxonomy as stored: `Taxonomy`'s fields with their defaults for what a taxonomy
/// stored before them lacks.
#[derive(Deserialize)]
pub(super) struct StoredTaxonomy {
    name: String,
    tasks: Vec<StoredTask>,
    qa_types: Vec<QaTypeDef>,
    applicability: BTreeMap<String, Vec<String>>,
    #[serde(default = "yes")]
    variants: bool,
    #[serde(default)]
    reasons: Vec<ReasonDef>,
    #[serde(default = "yes")]
    clip_review: bool,
    #[serde(default)]
    sampling: Vec<SamplingRule>,
    #[serde(default = "Level::vgenst")]
    levels: Vec<Level>,
    #[serde(default)]
    pairing: Pairing,
    tables: Option<Tables>,
    #[serde(default)]
    fields: Vec<super::FieldDef>,
}

fn yes() -> bool {
    true
}

impl From<StoredTaxonomy> for Taxonomy {
    fn from(t: StoredTaxonomy) -> Taxonomy {
        // Stored before protocols declared their tables: the former layout, by the axes
        // when a task has one of them (and then the paper's names).
        let tables = t.tables.unwrap_or_else(|| {
            if t.tasks.iter().any(StoredTask::former_axes) {
                Tables::former_vgenst()
            } else {
                Tables::default()
            }
        });
        Taxonomy {
            name: t.name,
            tasks: t.tasks.into_iter().map(TaskDef::from).collect(),
            qa_types: t.qa_types,
            applicability: t.applicability,
            variants: t.variants,
            reasons: t.reasons,
            clip_review: t.clip_review,
            sampling: t.sampling,
            levels: t.levels,
            pairing: t.pairing,
            tables,
            fields: t.fields,
        }
    }
}

/// Writes a task's attributes as a JSON object in their order.
pub(super) fn ordered_attributes<S: Serializer>(
    attributes: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(attributes.len()))?;
    for (k, v) in attributes {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// Reads a task's attributes from a JSON object, in the order written.
fn read_ordered<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    struct Ordered;
    impl<'de> Visitor<'de> for Ordered {
        type Value = Vec<(String, String)>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of attribute names to text values")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out: Vec<(String, String)> = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, String>()? {
                out.push((k, v));
            }
            Ok(out)
        }
    }
    d.deserialize_map(Ordered)
}
