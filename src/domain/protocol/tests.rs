//! The protocol file's checks, section by section, the shipped protocols, and their taxonomies
//! as stored (now and by earlier versions) read back.

use super::*;
use crate::domain::pairing::Pairing;
use crate::domain::sampling::PlanSpec;
use crate::domain::taxonomy::Table;
use crate::domain::{Level, Stage};

fn problems(text: &str) -> Vec<String> {
    match parse(text) {
        Ok(p) => panic!("accepted: {p:?}"),
        Err(ps) => ps.iter().map(ToString::to_string).collect(),
    }
}

const SMALL: &str = r#"[protocol]
name = "small"
version = 2

[[task]]
code = "TRJ"
name = "Trajectory"
attributes = { source = "real", scale = "vista" }
qa_types = ["YN"]

[[qa_type]]
code = "YN"
name = "Yes/No"
level = "L1"

[[reason]]
stage = 1
code = "blurry"
label = "Blurry"
key = 1

[[reason]]
stage = 2
code = "wrong"
label = "Wrong answer"
key = 1

[[reason]]
stage = 2
code = "other"
label = "Other"
key = 2
note = true
"#;

/// SMALL's reasons, for a protocol written out in a test.
fn reasons_of_small() -> &'static str {
    &SMALL[SMALL.find("[[reason]]").unwrap_or(0)..]
}

#[test]
fn a_small_protocol_gives_its_taxonomy() {
    let p = parse(SMALL).unwrap();
    assert_eq!((p.name.as_str(), p.version), ("small", 2));
    let t = &p.taxonomy;
    assert_eq!(t.tasks.len(), 1);
    // The attributes in the file's order, not by name.
    assert_eq!(
        t.tasks[0].attributes,
        [
            ("source".to_string(), "real".to_string()),
            ("scale".to_string(), "vista".to_string())
        ]
    );
    assert_eq!(t.tasks[0].attribute_line(), "real, vista");
    assert_eq!(t.tasks[0].label(), "TRJ");
    assert!(t.applies("TRJ", "YN"));
    assert_eq!(t.qa_type("YN").map(|q| q.level.as_str()), Some("L1"));
}

#[test]
fn a_protocol_sets_its_target_and_whether_exports_carry_variants() {
    let p = parse(SMALL).unwrap();
    assert_eq!((p.target_per_task, p.taxonomy.variants), (None, true));
    let set = SMALL.replace(
        "version = 2\n",
        "version = 2\ntarget_per_task = 40\nexport_variants = false\n",
    );
    let p = parse(&set).unwrap();
    assert_eq!((p.target_per_task, p.taxonomy.variants), (Some(40), false));
    let bad = problems(&SMALL.replace("version = 2\n", "version = 2\ntarget_per_task = 0\n"));
    assert_eq!(
        bad,
        ["line 4, protocol.target_per_task: must be a whole number from 1 to 1000000, not 0"]
    );
}

#[test]
fn every_problem_is_named_with_its_line_and_field() {
    let text = r#"[protocol]
name = "broken"
version = 1

[[task]]
code = "A"
name = "first"
qa_types = ["X", "Q", "X"]

[[task]]
code = "A"
name = ""
qa_types = []

[[qa_type]]
code = "X"
name = "x"
level = "L4"

[[qa_type]]
code = "X"
name = "again"
level = "L1"
"#;
    assert_eq!(
        problems(&format!("{text}\n{}", reasons_of_small())),
        [
            "line 8, task[1].qa_types[2]: names QA type `Q`, which no [[qa_type]] declares",
            "line 8, task[1].qa_types[3]: names QA type `X` twice",
            "line 11, task[2].code: task `A` is declared twice",
            "line 12, task[2].name: is empty",
            "line 18, qa_type[1].level: unknown level `L4` (the protocol's levels are L1, L2, L3)",
            "line 21, qa_type[2].code: QA type `X` is declared twice",
        ]
    );
}

#[test]
fn unreadable_toml_and_unknown_fields_are_refused_with_their_line() {
    let bad = problems("[protocol]\nname = \"x\"\nversion = 1\n[[task]]\ncode = \"A\n");
    assert!(bad[0].starts_with("line 5"), "{bad:?}");
    let unknown = problems(&SMALL.replace("level = \"L1\"", "level = \"L1\"\ncolour = 3"));
    assert!(
        unknown[0].starts_with("line 15") && unknown[0].contains("colour"),
        "{unknown:?}"
    );
    let no_task = problems(&format!(
        "[protocol]\nname = \"x\"\nversion = 1\n\n{}",
        reasons_of_small()
    ));
    assert_eq!(
        no_task,
        ["line 1, task: the protocol declares no task ([[task]])"]
    );
    let version = problems(&SMALL.replace("version = 2", "version = 0"));
    assert_eq!(
        version,
        ["line 3, protocol.version: must be a whole number from 1, not 0"]
    );
}

#[test]
fn a_change_that_would_orphan_stored_records_is_refused() {
    let old = parse(SMALL).unwrap().taxonomy;
    let used = InUse {
        tasks: ["TRJ".to_string()].into(),
        cells: [("TRJ".to_string(), "YN".to_string())].into(),
        levels: [("YN".to_string(), Level::new("L1"))].into(),
        reasons: [(Stage::Question, "other".to_string())].into(),
    };
    // Renamed, an attribute changed, a task and a QA type added: allowed.
    let grown = SMALL.replace("name = \"Trajectory\"", "name = \"Trajectories\"")
        + "\n[[task]]\ncode = \"NEW\"\nname = \"new\"\nqa_types = [\"YN\", \"MC\"]\n\n[[qa_type]]\ncode = \"MC\"\nname = \"mc\"\nlevel = \"L3\"\n";
    let grown = parse(&grown).unwrap().taxonomy;
    assert_eq!(change_problems(&old, &grown, &used), Vec::<String>::new());
    // Moved behind a new first task, a cell dropped, a level changed.
    let moved = r#"[protocol]
name = "small"
version = 3

[[task]]
code = "FIRST"
name = "first"
qa_types = ["YN"]

[[task]]
code = "TRJ"
name = "Trajectory"
qa_types = ["MC"]

[[qa_type]]
code = "YN"
name = "Yes/No"
level = "L2"

[[qa_type]]
code = "MC"
name = "mc"
level = "L1"
"#;
    let moved = parse(&format!("{moved}\n{}", reasons_of_small()))
        .unwrap()
        .taxonomy;
    assert_eq!(
        change_problems(&old, &moved, &used),
        [
            "task `TRJ` (it has clips) moves from position 1 to 2: the existing tasks keep their order (a task's position is its place in the pairing rule); new tasks come after them",
            "task `TRJ` no longer has QA type `YN`, but questions of that cell are stored",
            "QA type `YN` changes level from L1 to L2, but its stored questions keep L1 (the reasons allowed on a question follow its level)",
        ]
    );
    // Nothing stored: only the order of the existing tasks is kept.
    assert_eq!(change_problems(&old, &moved, &InUse::default()).len(), 1);
    let gone = parse(&SMALL.replace("code = \"TRJ\"", "code = \"OTHER\"")).unwrap();
    assert_eq!(
        change_problems(&old, &gone.taxonomy, &used)[0],
        "task `TRJ` (it has clips) is removed: the existing tasks stay, in their order; new tasks come after them"
    );
}

#[test]
fn a_reason_in_use_stays_and_its_rules_may_change() {
    let old = parse(SMALL).unwrap().taxonomy;
    let used = InUse {
        reasons: [(Stage::Question, "other".to_string())].into(),
        ..InUse::default()
    };
    // Relabelled, another key, a note no longer required: allowed.
    let relabelled = SMALL
        .replace("label = \"Other\"", "label = \"Something else\"")
        .replace("key = 2\nnote = true", "key = 9");
    let relabelled = parse(&relabelled).unwrap().taxonomy;
    assert_eq!(
        change_problems(&old, &relabelled, &used),
        Vec::<String>::new()
    );
    // Removed from Stage 2 (kept in no stage): refused.
    let gone = SMALL.replace("code = \"other\"", "code = \"unclear\"");
    let gone = parse(&gone).unwrap().taxonomy;
    assert_eq!(
        change_problems(&old, &gone, &used),
        ["the Stage 2 reason `other` is removed, but stored verdicts give it"]
    );
}

#[test]
fn broken_reasons_are_named_with_their_line_and_field() {
    // A key used twice in a stage, an unknown level, levels on a Stage 1 reason.
    let broken = SMALL
        .replace("key = 2\nnote = true", "key = 1\nlevels = [\"L4\"]")
        .replace(
            "code = \"blurry\"\nlabel = \"Blurry\"\nkey = 1",
            "code = \"blurry\"\nlabel = \"Blurry\"\nkey = 1\nlevels = [\"L1\"]",
        );
    let p = problems(&broken);
    assert!(
        p.iter()
            .any(|m| m.contains("reason[1].levels: a Stage 1 reason has no levels")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|m| m.contains("reason[3].key: key 1 is used twice in Stage 2")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|m| m.contains("reason[3].levels[1]: unknown level `L4`")),
        "{p:?}"
    );
    assert!(p.iter().all(|m| m.starts_with("line ")), "{p:?}");
    // The same code twice in a stage, a key out of 1-9, an empty label.
    let twice = SMALL
        .replace("code = \"wrong\"", "code = \"other\"")
        .replace("key = 2\nnote = true", "key = 10")
        .replace("label = \"Blurry\"", "label = \" \"");
    let p = problems(&twice);
    assert!(
        p.iter()
            .any(|m| m.contains("reason `other` is declared twice in Stage 2")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|m| m.contains("reason[3].key: must be a digit from 1 to 9, not 10")),
        "{p:?}"
    );
    assert!(
        p.iter().any(|m| m.contains("reason[1].label: is empty")),
        "{p:?}"
    );
    // A stage with no reasons.
    let none = &SMALL[..SMALL.find("[[reason]]\nstage = 2").unwrap_or(SMALL.len())];
    let p = problems(none);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("reason: Stage 2 (question review) has no reasons"),
        "{p:?}"
    );
}

#[test]
fn a_protocol_reviews_strata_by_sample_with_one_plan_each() {
    let with = format!(
        "{SMALL}\n[[sampling]]\nstage = 2\ntask = \"TRJ\"\nqa_type = \"YN\"\naql = 0.02\nrql = 0.1\nalpha = 0.05\nbeta = 0.1\n\n[[sampling]]\nstage = 1\np = 0.05\nconfidence = 0.9\n"
    );
    let t = parse(&with).unwrap().taxonomy;
    assert_eq!(t.sampling.len(), 2);
    assert_eq!(
        t.sampling[0].plan,
        PlanSpec::Risks {
            aql: 0.02,
            rql: 0.1,
            alpha: 0.05,
            beta: 0.1
        }
    );
    assert_eq!(t.sampling[0].confidence, 0.95, "the default confidence");
    assert_eq!(t.sampling[1].plan, PlanSpec::ZeroDefect { p: 0.05 });
    assert_eq!(
        (t.sampling[1].stage, t.sampling[1].task.as_deref()),
        (Stage::Clip, None)
    );
    // Stored with the taxonomy, and read back the same.
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(serde_json::from_str::<Taxonomy>(&json).unwrap(), t);
    // A protocol without sampling stores nothing more than before.
    let plain = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
    assert!(!plain.contains("sampling"), "{plain}");
}

#[test]
fn broken_sampling_rules_are_named_with_their_line_and_field() {
    let broken = format!(
        "{SMALL}\n[[sampling]]\nstage = 2\ntask = \"NOPE\"\nqa_type = \"XX\"\naql = 0.1\nrql = 0.05\nalpha = 0.05\n\n[[sampling]]\nstage = 3\nn = 5\nc = 5\n\n[[sampling]]\nstage = 2\np = 1.5\nn = 4\n\n[[sampling]]\nstage = 1\nqa_type = \"YN\"\n"
    );
    let p = problems(&broken);
    for want in [
        "sampling[1].task: names task `NOPE`, which no [[task]] declares",
        "sampling[1].qa_type: names QA type `XX`, which no [[qa_type]] declares",
        "sampling[1].beta: is missing: a plan by risks gives all four",
        "sampling[1].rql: must be greater than the aql (0.1), not 0.05",
        "sampling[2].stage: must be 1 (clip review) or 2 (question review), not 3",
        "sampling[2].c: must be at least 0 and less than n (5), not 5",
        "sampling[3].plan: gives more than one plan",
        "sampling[4].qa_type: a Stage 1 stratum is a task's clips",
        "sampling[4].plan: gives no plan",
    ] {
        assert!(p.iter().any(|m| m.contains(want)), "{want}: {p:?}");
    }
    assert!(p.iter().all(|m| m.starts_with("line ")), "{p:?}");
    // Two rules that could cover one item.
    let twice = format!(
        "{SMALL}\n[[sampling]]\nstage = 2\np = 0.05\n\n[[sampling]]\nstage = 2\ntask = \"TRJ\"\nn = 10\nc = 0\n"
    );
    let p = problems(&twice);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("sampling[2]: covers items that sampling[1] covers too (Stage 2, every task, every QA type)"),
        "{p:?}"
    );
    // Stage 1 sampling without clip review.
    let no_clips = format!("{SMALL}\n[[sampling]]\nstage = 1\np = 0.05\n")
        .replace("version = 2\n", "version = 2\nclip_review = false\n")
        .replace(
            "[[reason]]\nstage = 1\ncode = \"blurry\"\nlabel = \"Blurry\"\nkey = 1\n",
            "",
        );
    let p = problems(&no_clips);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("sampling[1].stage: samples Stage 1, but the protocol reviews no clips"),
        "{p:?}"
    );
}

#[test]
fn a_protocol_declares_its_own_levels_and_its_qa_types_and_reasons_use_them() {
    // VGenST's three by default, and then not stored.
    let t = parse(SMALL).unwrap().taxonomy;
    assert_eq!(t.levels, Level::vgenst());
    let json = serde_json::to_string(&t).unwrap();
    assert!(!json.contains("\"levels\":[\"L1\""), "{json}");
    // Its own: QA types and reasons name them; a reason bound to one is refused on
    // a question of another, in the protocol's words.
    let own = SMALL
        .replace(
            "version = 2\n",
            "version = 2\nlevels = [\"basic\", \"advanced\"]\n",
        )
        .replace("level = \"L1\"", "level = \"basic\"")
        .replace(
            "code = \"wrong\"\nlabel = \"Wrong answer\"\nkey = 1\n",
            "code = \"wrong\"\nlabel = \"Wrong answer\"\nkey = 1\nlevels = [\"advanced\"]\n",
        );
    let t = parse(&own).unwrap().taxonomy;
    assert_eq!(t.levels, [Level::new("basic"), Level::new("advanced")]);
    assert_eq!(t.qa_type("YN").map(|q| q.level.as_str()), Some("basic"));
    let json = serde_json::to_string(&t).unwrap();
    assert!(
        json.contains("\"levels\":[\"basic\",\"advanced\"]"),
        "{json}"
    );
    let back: Taxonomy = serde_json::from_str(&json).unwrap();
    assert_eq!(back, t);
    assert_eq!(t.parse_level("advanced"), Ok(Level::new("advanced")));
    assert_eq!(
        t.parse_level("L1"),
        Err("`L1` is not a level of the protocol (expected one of: basic, advanced)".into())
    );
    let basic = Level::new("basic");
    let refused = crate::domain::rules::check_verdict(
        &t,
        Stage::Question,
        Some(&basic),
        crate::domain::Verdict::Reject,
        &["wrong".to_string()],
        "",
    )
    .unwrap_err();
    assert_eq!(refused.field, "reasons");
    assert_eq!(
        refused.message,
        "`wrong` applies only to advanced questions; this question is basic"
    );
    // A level the protocol does not declare, an empty list, a level twice.
    let p = problems(&own.replace("level = \"basic\"", "level = \"L1\""));
    assert_eq!(
        p,
        [
            "line 15, qa_type[1].level: unknown level `L1` (the protocol's levels are basic, advanced)"
        ]
    );
    let p = problems(&own.replace("levels = [\"advanced\"]", "levels = [\"expert\"]"));
    assert!(
        p[0].ends_with("reason[2].levels[1]: unknown level `expert` (the protocol's levels are basic, advanced)"),
        "{p:?}"
    );
    let p = problems(&SMALL.replace("version = 2\n", "version = 2\nlevels = []\n"));
    assert!(
        p.iter()
            .any(|m| m.starts_with("line 4, protocol.levels: is empty")),
        "{p:?}"
    );
    let p = problems(&own.replace(
        "[\"basic\", \"advanced\"]",
        "[\"basic\", \"basic\", \"advanced\"]",
    ));
    assert_eq!(p, ["line 4, protocol.levels[2]: names level `basic` twice"]);
}

#[test]
fn a_protocol_names_its_pairing_rule_and_a_wrong_one_is_refused_at_its_line() {
    assert_eq!(parse(SMALL).unwrap().taxonomy.pairing, Pairing::TaskPairs);
    let least = SMALL.replace(
        "version = 2\n",
        "version = 2\npairing = \"least_open_work\"\n",
    );
    let t = parse(&least).unwrap().taxonomy;
    assert_eq!(t.pairing, Pairing::LeastOpenWork);
    // Stored only when not the default, and read back.
    let json = serde_json::to_string(&t).unwrap();
    assert!(json.contains("\"pairing\":\"least_open_work\""), "{json}");
    let back: Taxonomy = serde_json::from_str(&json).unwrap();
    assert_eq!(back.pairing, Pairing::LeastOpenWork);
    let default = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
    assert!(!default.contains("pairing"), "{default}");
    let p = problems(&SMALL.replace("version = 2\n", "version = 2\npairing = \"round_robin\"\n"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("line 4, protocol.pairing: must be `task_pairs`")
            && p[0].ends_with("not `round_robin`"),
        "{p:?}"
    );
}

#[test]
fn a_protocol_may_turn_clip_review_off_and_then_has_no_clip_reasons() {
    assert!(parse(SMALL).unwrap().taxonomy.clip_review);
    // Off, without Stage 1 reasons: question review alone.
    let stage2 = &SMALL[SMALL.find("[[reason]]\nstage = 2").unwrap_or(0)..];
    let off = SMALL[..SMALL.find("[[reason]]").unwrap_or(0)]
        .replace("version = 2\n", "version = 2\nclip_review = false\n")
        + stage2;
    let t = parse(&off).unwrap().taxonomy;
    assert!(!t.clip_review);
    assert!(t.reasons_of(Stage::Clip).next().is_none());
    // Stored, the setting is kept; a taxonomy with clip review stores as before.
    let json = serde_json::to_string(&t).unwrap();
    assert!(json.contains("\"clip_review\":false"), "{json}");
    let back: Taxonomy = serde_json::from_str(&json).unwrap();
    assert!(!back.clip_review);
    let on = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
    assert!(!on.contains("clip_review"), "{on}");
    // Off with a Stage 1 reason: refused at the reason, with its line.
    let p = problems(&SMALL.replace("version = 2\n", "version = 2\nclip_review = false\n"));
    assert_eq!(
        p,
        [
            "line 18, reason[1].stage: a Stage 1 reason, but the protocol reviews no clips (protocol.clip_review = false)"
        ]
    );
    // On (the default) without Stage 1 reasons: refused as before.
    let p = problems(&(SMALL[..SMALL.find("[[reason]]").unwrap_or(0)].to_string() + stage2));
    assert!(
        p[0].contains("reason: Stage 1 (clip review) has no reasons"),
        "{p:?}"
    );
    // A campaign with clips keeps its stages; one without may change them.
    let on = parse(SMALL).unwrap().taxonomy;
    let used = InUse {
        tasks: ["TRJ".to_string()].into(),
        ..InUse::default()
    };
    let p = change_problems(&on, &t, &used);
    assert!(
        p.iter()
            .any(|m| m.contains("clip review is turned off, but clips are imported")),
        "{p:?}"
    );
    assert!(change_problems(&on, &t, &InUse::default()).is_empty());
}

#[test]
fn every_shipped_protocol_is_sound() {
    let sizes: Vec<(String, usize, usize, usize)> = SHIPPED
        .iter()
        .map(|(name, text)| {
            let p = parse(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let t = &p.taxonomy;
            (p.name, t.tasks.len(), t.qa_types.len(), t.cell_count())
        })
        .collect();
    assert_eq!(
        sizes,
        [
            ("VGenST-Bench".to_string(), 12, 12, 98),
            ("GLIMPSE-like".to_string(), 11, 2, 22),
            ("TUMTraffic-VideoQA-like".to_string(), 3, 7, 7),
        ]
    );
    assert_eq!(shipped("glimpse"), Some(SHIPPED[1].1));
    assert_eq!(shipped("nope"), None);
}

#[test]
fn the_shipped_vgenst_protocol_is_the_papers_taxonomy() {
    let p = vgenst();
    assert_eq!((p.name.as_str(), p.version), ("VGenST-Bench", 1));
    let t = &p.taxonomy;
    assert_eq!(
        (t.tasks.len(), t.qa_types.len(), t.cell_count()),
        (12, 12, 98)
    );
    assert!(
        t.tasks
            .iter()
            .all(|t| t.attributes.len() == 3 && t.code.starts_with(&format!("{}_", t.short))),
        "{:?}",
        t.tasks
    );
}

#[test]
fn tables_give_table_11_its_layout_and_the_tables_their_names() {
    let with = format!(
        "{SMALL}\n[tables]\nt11 = {{ rows = \"scale\", columns = [\"source\"] }}\nnames = {{ t11 = \"Table 1\", t13 = \" Agreement \" }}\n"
    );
    let t = parse(&with).unwrap().taxonomy;
    let g = t.tables.t11.clone().unwrap();
    assert_eq!(
        (g.rows.as_str(), g.columns.as_slice()),
        ("scale", ["source".to_string()].as_slice())
    );
    // The titles are the attributes' names when left out.
    assert_eq!(
        (g.row_title.as_str(), g.column_title.as_str()),
        ("scale", "source")
    );
    assert_eq!(t.table_name(Table::T11), "Table 1");
    assert_eq!(t.table_name(Table::T13), "Agreement");
    assert_eq!(t.table_name(Table::T12), Table::T12.generic_name());
    // Without the section: the generic layout and names.
    assert!(parse(SMALL).unwrap().taxonomy.tables.is_default());
}

#[test]
fn broken_tables_are_named_with_their_line_and_field() {
    let second = SMALL.replace(
        "[[qa_type]]",
        "[[task]]\ncode = \"TWO\"\nname = \"Two\"\nattributes = { source = \"fake\" }\nqa_types = [\"YN\"]\n\n[[qa_type]]",
    );
    let broken = format!(
        "{second}\n[tables]\nt11 = {{ rows = \"scale\", columns = [\"source\", \"source\"], row_title = \" \" }}\nnames = {{ t12 = \"\" }}\n"
    );
    let p = problems(&broken);
    let line = broken.lines().position(|l| l.starts_with("t11")).unwrap() + 1;
    assert_eq!(
        p,
        [
            format!(
                "line {line}, tables.t11.rows: task `TWO` has no attribute `scale` (the t11 layout groups every task by it)"
            ),
            format!("line {line}, tables.t11.columns[2]: attribute `source` is named twice"),
            format!(
                "line {line}, tables.t11.row_title: is empty (leave it out for the attributes' names)"
            ),
            format!(
                "line {}, tables.names.t12: is empty (leave it out for \"Question rejections by task and QA type\")",
                line + 1
            ),
        ]
    );
    let unknown = format!("{SMALL}\n[tables]\nnames = {{ t17 = \"Table 17\" }}\n");
    assert!(
        problems(&unknown)[0].contains("unknown field `t17`"),
        "{unknown}"
    );
}

/// What Tandem 0.1.0 stored for each shipped protocol, read back: the same taxonomy as
/// the shipped file gives today.
#[test]
fn a_taxonomy_stored_by_0_1_0_reads_into_the_present_form() {
    let stored = [
        (
            "vgenst",
            include_str!("../taxonomy/stored-0.1.0-vgenst.json"),
        ),
        (
            "glimpse",
            include_str!("../taxonomy/stored-0.1.0-glimpse.json"),
        ),
        (
            "tumtraffic",
            include_str!("../taxonomy/stored-0.1.0-tumtraffic.json"),
        ),
    ];
    for (name, json) in stored {
        assert!(json.contains("\"scale\":"), "{name}: the former form");
        let read: Taxonomy = serde_json::from_str(json).unwrap();
        let text = shipped(name).unwrap();
        let mut today = parse(text).unwrap().taxonomy;
        // The declared clip fields came after 0.1.0 (a stored taxonomy reads none), and
        // so did the peers' `export_variants = false` (a stored one keeps the variants
        // it was stored with: 0.1.0 wrote them for every protocol).
        today.fields.clear();
        today.variants = true;
        assert_eq!(read, today, "{name}");
        // Written again in the present form (no task field of its own for an axis),
        // it reads back the same.
        let again = serde_json::to_string(&read).unwrap();
        let value: serde_json::Value = serde_json::from_str(&again).unwrap();
        assert!(value["tasks"][0].get("scale").is_none(), "{again}");
        assert_eq!(serde_json::from_str::<Taxonomy>(&again).unwrap(), read);
    }
}

/// A task's attributes are stored as an object in the protocol's order, and read back in
/// that order; a taxonomy with tables stores them, one without stores nothing more.
#[test]
fn attributes_and_tables_are_stored_in_order_and_read_back() {
    let t = Taxonomy::vgenst();
    let json = serde_json::to_string(&t).unwrap();
    assert!(
        json.contains(
            r#""short":"MC","attributes":{"scale":"figural","perspective":"egocentric","dynamics":"static"}"#
        ),
        "{json}"
    );
    assert!(
        json.contains(r#""tables":{"t11":{"rows":"scale""#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Taxonomy>(&json).unwrap(), t);
    let mut order = t.clone();
    order.tasks[0].attributes.reverse();
    let json = serde_json::to_string(&order).unwrap();
    let back: Taxonomy = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.tasks[0].attribute_line(),
        "static, egocentric, figural"
    );
    let text = shipped("glimpse").unwrap();
    let glimpse = parse(text).unwrap().taxonomy;
    assert!(glimpse.tables.is_default());
    let json = serde_json::to_string(&glimpse).unwrap();
    assert!(!json.contains("tables"), "{json}");
}

#[test]
fn tables_have_the_protocols_names_or_generic_ones() {
    let t = Taxonomy::vgenst();
    let names: Vec<&str> = Table::ALL.iter().map(|x| t.table_name(*x)).collect();
    assert_eq!(
        names,
        [
            "Table 11", "Table 12", "Table 13", "Table 14", "Table 15", "Table 16"
        ]
    );
    let text = shipped("tumtraffic").unwrap();
    let other = parse(text).unwrap().taxonomy;
    assert_eq!(other.table_name(Table::T11), "Clip review by task");
    assert_eq!(other.table_name(Table::T16), "Annotator pool");
    assert_eq!(Table::from_key("t13"), Some(Table::T13));
}

/// A pasted protocol with two mistakes, one of them a missing `version`, is told both at
/// once (the TOML reader alone stops at the first missing field).
#[test]
fn a_missing_name_or_version_is_told_with_the_other_problems() {
    let text = SMALL
        .replace("version = 2\n", "")
        .replace("qa_types = [\"YN\"]", "qa_types = [\"YN\", \"MC\"]");
    let said = problems(&text);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].contains("protocol.version") && said[0].contains("is missing"),
        "{said:?}"
    );
    assert!(said[1].contains("MC"), "{said:?}");
    let said = problems(&SMALL.replace("name = \"small\"\n", ""));
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("protocol.name: is missing"), "{said:?}");
}

#[test]
fn a_protocol_declares_the_clip_fields_to_show_and_each_bad_one_is_named() {
    let text = format!(
        "{SMALL}\n[[field]]\nname = \"camera\"\nlabel = \"Camera\"\nrequired = true\n\n\
         [[field]]\nname = \"weather\"\nlabel = \"Weather\"\n"
    );
    let p = parse(&text).unwrap();
    let fields: Vec<(&str, &str, bool)> = p
        .taxonomy
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.label.as_str(), f.required))
        .collect();
    assert_eq!(
        fields,
        [("camera", "Camera", true), ("weather", "Weather", false)]
    );
    // Stored and read back, as a campaign keeps it; a taxonomy without fields stores none.
    let stored = serde_json::to_string(&p.taxonomy).unwrap();
    assert_eq!(
        serde_json::from_str::<Taxonomy>(&stored).unwrap(),
        p.taxonomy
    );
    assert!(
        !serde_json::to_string(&Taxonomy::vgenst())
            .unwrap()
            .contains("\"fields\"")
    );
    let bad = format!(
        "{SMALL}\n[[field]]\nname = \"theme\"\nlabel = \"Theme\"\n\n\
         [[field]]\nname = \"a b\"\nlabel = \"Spaced\"\n\n\
         [[field]]\nname = \"camera\"\nlabel = \" \"\n\n\
         [[field]]\nname = \"weather\"\nlabel = \"Weather\"\n\n\
         [[field]]\nname = \"weather\"\nlabel = \"Weather again\"\n"
    );
    let found = problems(&bad);
    assert_eq!(found.len(), 4, "{found:?}");
    for (i, words) in [
        "field[1].name: `theme` is a manifest key Tandem reads itself",
        "field[2].name: a field's name `a b` contains ` `",
        "field[3].label: a field needs a label",
        "field[5].name: field `weather` is declared twice",
    ]
    .iter()
    .enumerate()
    {
        assert!(found[i].contains(words), "{words}: {found:?}");
    }
}
