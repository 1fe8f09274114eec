//! The taxonomy of a campaign: tasks with their three axes, QA types with levels,
//! and the task x QA-type applicability matrix. VGenST-Bench's is built in.

use super::Level;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskDef {
    pub code: String,
    pub name: String,
    /// figural, vista or environmental
    pub scale: String,
    /// egocentric or exocentric
    pub perspective: String,
    /// static or dynamic
    pub dynamics: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QaTypeDef {
    pub code: String,
    pub name: String,
    pub level: Level,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taxonomy {
    pub name: String,
    /// In order: a task's position is its index t in the pairing rule.
    pub tasks: Vec<TaskDef>,
    pub qa_types: Vec<QaTypeDef>,
    /// Task code -> the QA type codes that apply to it.
    pub applicability: BTreeMap<String, Vec<String>>,
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

    /// The built-in taxonomy of VGenST-Bench (SPEC section 10).
    pub fn vgenst() -> Taxonomy {
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
        const QA: [(&str, &str, Level); 12] = [
            ("OE", "Object Existence", Level::L1),
            ("OA", "Object Attribute Recognition", Level::L1),
            ("FL", "2D Frame Localization", Level::L1),
            ("IT", "Identity Tracking", Level::L2),
            ("AR", "Action Recognition", Level::L2),
            ("OC", "Object Counting", Level::L2),
            ("TO", "Temporal Ordering", Level::L2),
            ("CM", "Camera Motion Recognition", Level::L2),
            ("SL", "Spatial Layout Understanding", Level::L2),
            ("PT", "Perspective-Taking", Level::L3),
            ("CR", "Counterfactual Reasoning", Level::L3),
            ("PR", "Predictive Reasoning", Level::L3),
        ];
        // Rows in task order, columns in QA order; 'o' applies.
        const CELLS: [&str; 12] = [
            "oooo.o.oo.o.", // MC_F_EGO_STA
            "oo.oooo.o.oo", // QC_F_EGO_DYN
            "ooo..oooo.o.", // CI_F_EXO_STA
            "ooo.o.o.ooo.", // CM_F_EXO_DYN
            "oo....ooooo.", // DE_V_EGO_STA
            "oooooo..o.o.", // IO_V_EGO_DYN
            "ooo...ooo.o.", // HO_V_EXO_STA
            "ooooo...oo..", // VI_V_EXO_DYN
            "ooo..o.oooo.", // DS_E_EGO_STA
            "oooooooooooo", // RV_E_EGO_DYN
            "oo....oooooo", // LS_E_EXO_STA
            "oo.oo.oo.oo.", // BT_E_EXO_DYN
        ];
        let tasks: Vec<TaskDef> = TASKS
            .iter()
            .map(|(code, name)| {
                let mut parts = code.split('_').skip(1);
                let scale = match parts.next() {
                    Some("F") => "figural",
                    Some("V") => "vista",
                    _ => "environmental",
                };
                let perspective = match parts.next() {
                    Some("EGO") => "egocentric",
                    _ => "exocentric",
                };
                let dynamics = match parts.next() {
                    Some("STA") => "static",
                    _ => "dynamic",
                };
                TaskDef {
                    code: (*code).to_string(),
                    name: (*name).to_string(),
                    scale: scale.to_string(),
                    perspective: perspective.to_string(),
                    dynamics: dynamics.to_string(),
                }
            })
            .collect();
        let qa_types: Vec<QaTypeDef> = QA
            .iter()
            .map(|(code, name, level)| QaTypeDef {
                code: (*code).to_string(),
                name: (*name).to_string(),
                level: *level,
            })
            .collect();
        let applicability = TASKS
            .iter()
            .zip(CELLS.iter())
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
        Taxonomy {
            name: "VGenST-Bench".to_string(),
            tasks,
            qa_types,
            applicability,
        }
    }
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
    }
}
