//! The taxonomy of a campaign: tasks with their attributes, QA types with levels, and
//! the task x QA-type applicability matrix. It comes from a protocol file
//! (`domain::protocol`); VGenST-Bench's ships in `protocols/vgenst.toml`.

use super::pairing::Pairing;
use super::sampling::SamplingRule;
use super::{Level, Reason, Stage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod stored;
mod tables;

pub use tables::{Grouping, Table, Tables};

/// A task of the protocol. Stored with the campaign's taxonomy as JSON; a taxonomy
/// stored by an earlier version, with its tasks in the former form, reads back into
/// this one (`stored::StoredTask`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "stored::StoredTask")]
pub struct TaskDef {
    pub code: String,
    pub name: String,
    /// Its label in a table's cell ("MC"), when the protocol gives one; the code
    /// otherwise (`label`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub short: String,
    /// The task's attributes (name, value), in the order the protocol declares them;
    /// stored as an object in that order.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "stored::ordered_attributes"
    )]
    pub attributes: Vec<(String, String)>,
}

impl TaskDef {
    /// The value of attribute `name`, if the task has it.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every attribute by name, as stored with the task (the `tasks.attributes` column)
    /// and sent by the API.
    pub fn all_attributes(&self) -> BTreeMap<String, String> {
        self.attributes.iter().cloned().collect()
    }

    /// The attributes' values for a line of text, in the protocol's order.
    pub fn attribute_line(&self) -> String {
        self.attributes
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Its label in a table's cell: the short label the protocol gives, else the code.
    pub fn label(&self) -> &str {
        if self.short.is_empty() {
            &self.code
        } else {
            &self.short
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QaTypeDef {
    pub code: String,
    pub name: String,
    pub level: Level,
    /// Whether its questions come in linked pairs (GLIMPSE's yes/no questions, asked in
    /// both directions): each one names the `pair` it shares with its reverse.
    #[serde(default, skip_serializing_if = "is_no")]
    pub paired: bool,
}

/// A reason a validator may give with a reject, in one stage: its code (as stored),
/// its label (as shown), its digit key on the review page (1-9, one reason per key in
/// a stage), the question levels it applies to (all when empty; Stage 2 only) and
/// whether it needs a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasonDef {
    pub stage: Stage,
    pub code: String,
    pub label: String,
    pub key: u8,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<Level>,
    #[serde(default, skip_serializing_if = "is_no")]
    pub note: bool,
}

/// A manifest field of each clip that the protocol declares (a camera, the weather):
/// shown to the people who review the clip, under its label; with `required`, every
/// clip line of a manifest must give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDef {
    pub name: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "is_no")]
    pub required: bool,
}

/// The manifest keys Tandem reads itself: a protocol cannot declare them as fields.
pub const MANIFEST_KEYS: [&str; 10] = [
    "clip_id",
    "task",
    "file",
    "questions",
    "theme",
    "scene_graph",
    "scenario",
    "generator",
    "calibration",
    "known",
];

impl ReasonDef {
    /// Whether the reason may be given on an item of `level` (a clip has none).
    pub fn applies_to(&self, level: Option<&Level>) -> bool {
        self.levels.is_empty() || level.is_some_and(|l| self.levels.contains(l))
    }

    /// The levels it applies to, for a message ("L3", "L2 or L3").
    pub fn level_words(&self) -> String {
        let names: Vec<&str> = self.levels.iter().map(|l| l.as_str()).collect();
        match names.split_last() {
            None => "every level".into(),
            Some((last, [])) => (*last).into(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// Stored as JSON with its campaign; one stored by an earlier version reads back into
/// the present form (`stored::StoredTaxonomy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "stored::StoredTaxonomy")]
pub struct Taxonomy {
    pub name: String,
    /// In order: a task's position is its index t in the pairing rule.
    pub tasks: Vec<TaskDef>,
    pub qa_types: Vec<QaTypeDef>,
    /// Task code -> the QA type codes that apply to it.
    pub applicability: BTreeMap<String, Vec<String>>,
    /// Whether the retained benchmark's questions carry their V1/V2/V3 reformulations
    /// (VGenST-Bench's Appendix C.6); stored only when off.
    #[serde(skip_serializing_if = "is_yes")]
    pub variants: bool,
    /// The reasons of both stages, each stage's in its protocol's order (the order they
    /// are stored and shown in). Empty only in a campaign stored before protocols
    /// carried reasons; the store reads VGenST-Bench's into it.
    pub reasons: Vec<ReasonDef>,
    /// Whether clips are reviewed (Stage 1) before their questions; off, a clip's
    /// questions enter question review as soon as it is imported (a benchmark of real
    /// videos has no clip quality to check). Stored only when off.
    #[serde(skip_serializing_if = "is_yes")]
    pub clip_review: bool,
    /// The strata reviewed by sample (none overlapping); every other item is reviewed.
    /// Stored only when there are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sampling: Vec<SamplingRule>,
    /// The QA levels, in order (a QA type's level and a reason's levels are among
    /// them); stored only when they are not VGenST-Bench's L1, L2 and L3.
    #[serde(skip_serializing_if = "is_vgenst_levels")]
    pub levels: Vec<Level>,
    /// How an item's two reviewers are chosen (`domain::pairing`); stored only when it
    /// is not the task pairs.
    #[serde(skip_serializing_if = "Pairing::is_default")]
    pub pairing: Pairing,
    /// How Table 11 lays the tasks out and what the tables are called; stored only when
    /// the protocol says.
    #[serde(skip_serializing_if = "Tables::is_default")]
    pub tables: Tables,
    /// The clips' manifest fields the protocol declares, in its order; stored only when
    /// there are some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldDef>,
}

fn is_vgenst_levels(levels: &[Level]) -> bool {
    levels == Level::vgenst().as_slice()
}

fn is_no(b: &bool) -> bool {
    !*b
}

fn is_yes(b: &bool) -> bool {
    *b
}

impl Taxonomy {
    pub fn task(&self, code: &str) -> Option<(usize, &TaskDef)> {
        self.tasks.iter().enumerate().find(|(_, t)| t.code == code)
    }

    /// The label of task `code` in a table's cell (`TaskDef::label`); the code itself
    /// for a task the taxonomy does not have.
    pub fn task_label<'a>(&'a self, code: &'a str) -> &'a str {
        self.task(code).map_or(code, |(_, t)| t.label())
    }

    /// The name of `table` for a heading or a caption: the protocol's (`[tables] names`,
    /// VGenST-Bench's "Table 11"), else a generic one ("Clip review by task").
    pub fn table_name(&self, table: Table) -> &str {
        self.tables.name(table)
    }

    pub fn qa_type(&self, code: &str) -> Option<&QaTypeDef> {
        self.qa_types.iter().find(|q| q.code == code)
    }

    pub fn applies(&self, task: &str, qa_type: &str) -> bool {
        self.applicability
            .get(task)
            .is_some_and(|v| v.iter().any(|q| q == qa_type))
    }

    /// Number of cells of the applicability matrix.
    pub fn cell_count(&self) -> usize {
        self.applicability.values().map(Vec::len).sum()
    }

    /// The reasons of `stage`, in the protocol's order.
    pub fn reasons_of(&self, stage: Stage) -> impl Iterator<Item = &ReasonDef> {
        self.reasons.iter().filter(move |r| r.stage == stage)
    }

    /// The reason `code` of `stage`.
    pub fn reason(&self, stage: Stage, code: &str) -> Option<&ReasonDef> {
        self.reasons_of(stage).find(|r| r.code == code)
    }

    /// A reason's label, or its code when the protocol does not have it.
    pub fn reason_label(&self, stage: Stage, code: &str) -> String {
        self.reason(stage, code)
            .map_or_else(|| code.to_string(), |r| r.label.clone())
    }

    /// The declared level `code`.
    pub fn level(&self, code: &str) -> Option<&Level> {
        self.levels.iter().find(|l| l.as_str() == code)
    }

    /// A level from input (or a stored record): one the protocol declares, or the error
    /// naming them.
    pub fn parse_level(&self, s: &str) -> Result<Level, String> {
        self.level(s.trim()).cloned().ok_or_else(|| {
            let names: Vec<&str> = self.levels.iter().map(Level::as_str).collect();
            format!(
                "`{}` is not a level of the protocol (expected one of: {})",
                s.trim(),
                names.join(", ")
            )
        })
    }

    /// Reads one reason given for `stage`: one of the protocol's reasons of that stage.
    pub fn parse_reason(&self, stage: Stage, s: &str) -> Result<Reason, String> {
        let s = s.trim();
        match self.reason(stage, s) {
            Some(r) => Ok(Reason::new(&r.code)),
            None => {
                let names: Vec<&str> = self.reasons_of(stage).map(|r| r.code.as_str()).collect();
                Err(format!(
                    "`{s}` is not a Stage {stage} reason (expected one of: {})",
                    names.join(", ")
                ))
            }
        }
    }

    /// Checks reasons read back from a record of `stage`: each is one of the protocol's
    /// (a protocol change that would drop a reason in use is refused), so one that is not
    /// is an error, never a shorter record.
    pub fn check_stored(&self, stage: Stage, reasons: &[Reason]) -> Result<(), String> {
        match reasons
            .iter()
            .find(|r| self.reason(stage, r.as_str()).is_none())
        {
            None => Ok(()),
            Some(r) => Err(format!(
                "the stored reason `{r}` is not a Stage {stage} reason of protocol `{}`",
                self.name
            )),
        }
    }

    /// Puts reasons of `stage` in the protocol's order, without duplicates (reasons it
    /// does not have go last, by name).
    pub fn order_reasons(&self, stage: Stage, reasons: &mut Vec<Reason>) {
        let place = |r: &Reason| {
            self.reasons_of(stage)
                .position(|d| d.code == r.as_str())
                .unwrap_or(usize::MAX)
        };
        reasons.sort_by(|a, b| place(a).cmp(&place(b)).then_with(|| a.cmp(b)));
        reasons.dedup();
    }

    // `Taxonomy::vgenst()`, VGenST-Bench's, is read from its shipped protocol file
    // (`domain::protocol`).
}

#[cfg(test)]
mod tests;
