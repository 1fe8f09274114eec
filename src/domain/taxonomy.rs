//! The taxonomy of a campaign: tasks with their attributes, QA types with levels, and
//! the task x QA-type applicability matrix. It comes from a protocol file
//! (`domain::protocol`); VGenST-Bench's ships in `protocols/vgenst.toml`.

use super::pairing::Pairing;
use super::sampling::SamplingRule;
use super::{Level, Reason, Stage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskDef {
    pub code: String,
    pub name: String,
    /// VGenST: figural, vista or environmental (Table 11's rows); empty when the
    /// protocol does not say.
    #[serde(default)]
    pub scale: String,
    /// VGenST: egocentric or exocentric; empty when the protocol does not say.
    #[serde(default)]
    pub perspective: String,
    /// VGenST: static or dynamic; empty when the protocol does not say.
    #[serde(default)]
    pub dynamics: String,
    /// The protocol's other attributes of the task (name -> value), shown beside it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
}

impl TaskDef {
    /// Every attribute, the three axes first (those the protocol gives), as stored
    /// with the task.
    pub fn all_attributes(&self) -> BTreeMap<String, String> {
        let mut all = self.attributes.clone();
        for (k, v) in [
            ("scale", &self.scale),
            ("perspective", &self.perspective),
            ("dynamics", &self.dynamics),
        ] {
            if !v.is_empty() {
                all.insert(k.to_string(), v.clone());
            }
        }
        all
    }

    /// The attributes' values for a line of text: the axes in their order, then the
    /// others by name.
    pub fn attribute_line(&self) -> String {
        [&self.scale, &self.perspective, &self.dynamics]
            .into_iter()
            .chain(self.attributes.values())
            .filter(|v| !v.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Taxonomy {
    pub name: String,
    /// In order: a task's position is its index t in the pairing rule.
    pub tasks: Vec<TaskDef>,
    pub qa_types: Vec<QaTypeDef>,
    /// Task code -> the QA type codes that apply to it.
    pub applicability: BTreeMap<String, Vec<String>>,
    /// Whether the retained benchmark's questions carry their V1/V2/V3 reformulations
    /// (VGenST-Bench's Appendix C.6); stored only when off.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub variants: bool,
    /// The reasons of both stages, each stage's in its protocol's order (the order they
    /// are stored and shown in). Empty only in a campaign stored before protocols
    /// carried reasons; the store reads VGenST-Bench's into it.
    #[serde(default)]
    pub reasons: Vec<ReasonDef>,
    /// Whether clips are reviewed (Stage 1) before their questions; off, a clip's
    /// questions enter question review as soon as it is imported (a benchmark of real
    /// videos has no clip quality to check). Stored only when off.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub clip_review: bool,
    /// The strata reviewed by sample (none overlapping); every other item is reviewed.
    /// Stored only when there are some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sampling: Vec<SamplingRule>,
    /// The QA levels, in order (a QA type's level and a reason's levels are among
    /// them); stored only when they are not VGenST-Bench's L1, L2 and L3.
    #[serde(default = "Level::vgenst", skip_serializing_if = "is_vgenst_levels")]
    pub levels: Vec<Level>,
    /// How an item's two reviewers are chosen (`domain::pairing`); stored only when it
    /// is not the task pairs.
    #[serde(default, skip_serializing_if = "Pairing::is_default")]
    pub pairing: Pairing,
}

fn is_vgenst_levels(levels: &[Level]) -> bool {
    levels == Level::vgenst().as_slice()
}

fn is_no(b: &bool) -> bool {
    !*b
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

impl Taxonomy {
    pub fn task(&self, code: &str) -> Option<(usize, &TaskDef)> {
        self.tasks.iter().enumerate().find(|(_, t)| t.code == code)
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
mod tests {
    use super::*;

    #[test]
    fn vgenst_has_twelve_tasks_twelve_qa_types_and_98_cells() {
        let t = Taxonomy::vgenst();
        assert_eq!(t.tasks.len(), 12);
        assert_eq!(t.qa_types.len(), 12);
        assert_eq!(t.cell_count(), 98);
    }

    #[test]
    fn vgenst_matrix_matches_the_paper_rows() {
        let t = Taxonomy::vgenst();
        assert!(t.applies("MC_F_EGO_STA", "OE"));
        assert!(!t.applies("MC_F_EGO_STA", "AR"));
        assert!(t.applies("MC_F_EGO_STA", "CR"));
        assert!(!t.applies("MC_F_EGO_STA", "PR"));
        assert_eq!(t.applicability["RV_E_EGO_DYN"].len(), 12);
        assert_eq!(
            t.applicability["BT_E_EXO_DYN"],
            vec!["OE", "OA", "IT", "AR", "TO", "CM", "PT", "CR"]
        );
        assert_eq!(
            t.applicability["LS_E_EXO_STA"],
            vec!["OE", "OA", "TO", "CM", "SL", "PT", "CR", "PR"]
        );
    }

    #[test]
    fn task_axes_come_from_the_code() {
        let t = Taxonomy::vgenst();
        let (pos, rv) = t.task("RV_E_EGO_DYN").unwrap();
        assert_eq!(pos, 9);
        assert_eq!(
            (
                rv.scale.as_str(),
                rv.perspective.as_str(),
                rv.dynamics.as_str()
            ),
            ("environmental", "egocentric", "dynamic")
        );
        assert_eq!(rv.attribute_line(), "environmental, egocentric, dynamic");
        assert!(rv.attributes.is_empty());
    }

    /// The taxonomy Tandem had built in before it came from a file: the protocol file
    /// must give exactly this, and its stored JSON must not change (campaigns created
    /// before keep reading theirs).
    #[test]
    fn the_shipped_file_gives_the_former_built_in_taxonomy() {
        const TASKS: [(&str, &str); 12] = [
            ("MC_F_EGO_STA", "Multi-Container Attribute Mapping"),
            ("QC_F_EGO_DYN", "Quantity Change Tracking"),
            ("CI_F_EXO_STA", "Container Intersection Inference"),
            ("CM_F_EXO_DYN", "Causal Mapping"),
            ("DE_V_EGO_STA", "Direction Estimation"),
            ("IO_V_EGO_DYN", "Interacted Object Identification"),
            ("HO_V_EXO_STA", "Height Ordering"),
            ("VI_V_EXO_DYN", "Visibility Identification"),
            ("DS_E_EGO_STA", "Directional Signage Grounding"),
            ("RV_E_EGO_DYN", "Relative Velocity Identification"),
            ("LS_E_EXO_STA", "Landmark Spatial Composition"),
            ("BT_E_EXO_DYN", "Behavioral Trigger Identification"),
        ];
        const QA: [(&str, &str, &str); 12] = [
            ("OE", "Object Existence", "L1"),
            ("OA", "Object Attribute Recognition", "L1"),
            ("FL", "2D Frame Localization", "L1"),
            ("IT", "Identity Tracking", "L2"),
            ("AR", "Action Recognition", "L2"),
            ("OC", "Object Counting", "L2"),
            ("TO", "Temporal Ordering", "L2"),
            ("CM", "Camera Motion Recognition", "L2"),
            ("SL", "Spatial Layout Understanding", "L2"),
            ("PT", "Perspective-Taking", "L3"),
            ("CR", "Counterfactual Reasoning", "L3"),
            ("PR", "Predictive Reasoning", "L3"),
        ];
        // Rows in task order, columns in QA order; 'o' applies (the paper's matrix).
        const CELLS: [&str; 12] = [
            "oooo.o.oo.o.",
            "oo.oooo.o.oo",
            "ooo..oooo.o.",
            "ooo.o.o.ooo.",
            "oo....ooooo.",
            "oooooo..o.o.",
            "ooo...ooo.o.",
            "ooooo...oo..",
            "ooo..o.oooo.",
            "oooooooooooo",
            "oo....oooooo",
            "oo.oo.oo.oo.",
        ];
        let tasks = TASKS
            .iter()
            .map(|(code, name)| {
                let parts: Vec<&str> = code.split('_').collect();
                TaskDef {
                    code: (*code).to_string(),
                    name: (*name).to_string(),
                    scale: match parts[1] {
                        "F" => "figural",
                        "V" => "vista",
                        _ => "environmental",
                    }
                    .to_string(),
                    perspective: if parts[2] == "EGO" {
                        "egocentric"
                    } else {
                        "exocentric"
                    }
                    .to_string(),
                    dynamics: if parts[3] == "STA" {
                        "static"
                    } else {
                        "dynamic"
                    }
                    .to_string(),
                    attributes: BTreeMap::new(),
                }
            })
            .collect();
        let qa_types = QA
            .iter()
            .map(|(code, name, level)| QaTypeDef {
                paired: false,
                code: (*code).to_string(),
                name: (*name).to_string(),
                level: Level::new(level),
            })
            .collect();
        let applicability = TASKS
            .iter()
            .zip(CELLS)
            .map(|((task, _), row)| {
                let codes = row
                    .chars()
                    .zip(QA.iter())
                    .filter(|(c, _)| *c == 'o')
                    .map(|(_, (qa, _, _))| (*qa).to_string())
                    .collect();
                ((*task).to_string(), codes)
            })
            .collect();
        let former = Taxonomy {
            name: "VGenST-Bench".to_string(),
            tasks,
            qa_types,
            applicability,
            variants: true,
            reasons: Taxonomy::vgenst().reasons,
            clip_review: true,
            sampling: Vec::new(),
            pairing: Pairing::TaskPairs,
            levels: Level::vgenst(),
        };
        assert_eq!(Taxonomy::vgenst(), former);
        // The reasons are the former built-in ones, in their order, under the same keys.
        let reasons: Vec<(i64, &str, u8)> = former
            .reasons
            .iter()
            .map(|r| (r.stage.number(), r.code.as_str(), r.key))
            .collect();
        assert_eq!(
            reasons,
            vec![
                (1, "physical_implausibility", 1),
                (1, "generation_artifact", 2),
                (1, "prompt_drift", 3),
                (1, "other", 4),
                (2, "incorrect_answer", 1),
                (2, "ambiguous_options", 2),
                (2, "single_frame_solvable", 3),
                (2, "language_prior_shortcut", 4),
                (2, "other", 5),
            ]
        );
        let rules: Vec<(&str, String, bool)> = former
            .reasons
            .iter()
            .filter(|r| !r.levels.is_empty() || r.note)
            .map(|r| (r.code.as_str(), r.level_words(), r.note))
            .collect();
        assert_eq!(
            rules,
            vec![
                ("other", "every level".to_string(), true),
                ("single_frame_solvable", "L3".to_string(), false),
                ("other", "every level".to_string(), true),
            ]
        );
        let json = serde_json::to_string(&Taxonomy::vgenst()).unwrap();
        assert!(
            !json.contains("attributes") && !json.contains("variants"),
            "{json}"
        );
        // A taxonomy stored before protocols carried reasons reads back without them
        // (the store gives it VGenST-Bench's: `store::write::base::stored_taxonomy`).
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("reasons");
        let old: Taxonomy = serde_json::from_value(old).unwrap();
        assert!(old.reasons.is_empty());
        let back: Taxonomy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, former);
    }
}
