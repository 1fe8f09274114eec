//! The shipped VGenST-Bench taxonomy, and taxonomies stored by earlier versions read
//! back.

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
fn a_tasks_attributes_keep_the_protocols_order() {
    let t = Taxonomy::vgenst();
    let (pos, rv) = t.task("RV_E_EGO_DYN").unwrap();
    assert_eq!(pos, 9);
    assert_eq!(
        rv.attributes,
        [
            ("scale".to_string(), "environmental".to_string()),
            ("perspective".to_string(), "egocentric".to_string()),
            ("dynamics".to_string(), "dynamic".to_string()),
        ]
    );
    assert_eq!(rv.attribute_line(), "environmental, egocentric, dynamic");
    assert_eq!(rv.attribute("perspective"), Some("egocentric"));
    assert_eq!((rv.label(), t.task_label("RV_E_EGO_DYN")), ("RV", "RV"));
    assert_eq!(t.task_label("NOPE"), "NOPE");
    // Stored in the tasks' column by name, as before.
    assert_eq!(
        serde_json::json!(rv.all_attributes()).to_string(),
        r#"{"dynamics":"dynamic","perspective":"egocentric","scale":"environmental"}"#
    );
}

/// VGenST-Bench's tasks as Tandem had them built in, from their codes
/// (TASK_SCALE_PERSPECTIVE_DYNAMICS).
fn former_tasks() -> Vec<TaskDef> {
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
    TASKS
        .iter()
        .map(|(code, name)| {
            let parts: Vec<&str> = code.split('_').collect();
            let scale = match parts[1] {
                "F" => "figural",
                "V" => "vista",
                _ => "environmental",
            };
            let perspective = if parts[2] == "EGO" {
                "egocentric"
            } else {
                "exocentric"
            };
            let dynamics = if parts[3] == "STA" {
                "static"
            } else {
                "dynamic"
            };
            TaskDef {
                code: (*code).to_string(),
                name: (*name).to_string(),
                short: parts[0].to_string(),
                attributes: [
                    ("scale", scale),
                    ("perspective", perspective),
                    ("dynamics", dynamics),
                ]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .to_vec(),
            }
        })
        .collect()
}

/// VGenST-Bench's QA types and matrix as Tandem had them built in.
fn former_qa_types() -> (Vec<QaTypeDef>, BTreeMap<String, Vec<String>>) {
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
    let qa_types = QA
        .iter()
        .map(|(code, name, level)| QaTypeDef {
            paired: false,
            code: (*code).to_string(),
            name: (*name).to_string(),
            level: Level::new(level),
        })
        .collect();
    let applicability = former_tasks()
        .into_iter()
        .zip(CELLS)
        .map(|(task, row)| {
            let codes = row
                .chars()
                .zip(QA.iter())
                .filter(|(c, _)| *c == 'o')
                .map(|(_, (qa, _, _))| (*qa).to_string())
                .collect();
            (task.code, codes)
        })
        .collect();
    (qa_types, applicability)
}

/// The taxonomy Tandem had built in before it came from a file: the protocol file must
/// give exactly this.
#[test]
fn the_shipped_file_gives_the_former_built_in_taxonomy() {
    let (qa_types, applicability) = former_qa_types();
    let former = Taxonomy {
        name: "VGenST-Bench".to_string(),
        tasks: former_tasks(),
        qa_types,
        applicability,
        variants: true,
        reasons: Taxonomy::vgenst().reasons,
        clip_review: true,
        sampling: Vec::new(),
        pairing: Pairing::TaskPairs,
        levels: Level::vgenst(),
        tables: Tables::former_vgenst(),
        fields: Vec::new(),
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
}

/// A taxonomy stored before protocols carried reasons reads back without them (the store
/// gives it VGenST-Bench's: `store::areas::base::stored_taxonomy`).
#[test]
fn a_taxonomy_stored_before_reasons_reads_back_without_them() {
    let json = serde_json::to_string(&Taxonomy::vgenst()).unwrap();
    assert!(!json.contains("variants"), "{json}");
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old.as_object_mut().unwrap().remove("reasons");
    let old: Taxonomy = serde_json::from_value(old).unwrap();
    assert!(old.reasons.is_empty());
    let back: Taxonomy = serde_json::from_str(&json).unwrap();
    assert_eq!(back, Taxonomy::vgenst());
}

#[test]
fn a_heading_carries_the_protocols_name_for_a_table_or_none() {
    let t = Taxonomy::vgenst();
    assert_eq!(
        t.tables.heading(Table::T13, "inter-annotator agreement"),
        "Table 13: inter-annotator agreement"
    );
    let none = Tables::default();
    assert_eq!(
        none.heading(Table::T13, "inter-annotator agreement"),
        "Inter-annotator agreement"
    );
    assert_eq!(none.heading(Table::T14, "ünits"), "Ünits");
    assert_eq!(none.heading(Table::T14, ""), "");
}

#[test]
fn tables_named_together_read_as_the_paper_or_as_their_names() {
    let paper = Tables::former_vgenst();
    assert_eq!(
        paper.names_together(&[Table::T14, Table::T15]),
        "Tables 14 and 15"
    );
    assert_eq!(
        paper.names_together(&[Table::T11, Table::T12, Table::T13]),
        "Tables 11, 12 and 13"
    );
    assert_eq!(paper.names_together(&[Table::T16]), "Table 16");
    let generic = Tables::default();
    assert_eq!(
        generic.names_together(&[Table::T14, Table::T15]),
        "Study ranks and Study real or fake"
    );
}
