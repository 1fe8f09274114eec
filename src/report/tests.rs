use super::*;
use serde_json::json;

fn oc(
    stage: i64,
    task: &str,
    r: (&str, &str),
    outcome: &str,
    v: (&str, &str),
    n: i64,
) -> OutcomeCount {
    OutcomeCount {
        stage,
        task: task.into(),
        rater1: r.0.into(),
        rater2: r.1.into(),
        qa_type: None,
        outcome: outcome.into(),
        verdict1: (!v.0.is_empty()).then(|| v.0.to_string()),
        verdict2: (!v.1.is_empty()).then(|| v.1.to_string()),
        reasons1: (v.0 == "reject").then(|| "prompt_drift".to_string()),
        reasons2: (v.1 == "reject").then(|| "generation_artifact;other".to_string()),
        n,
    }
}

/// A protocol without clip review has no Table 11 and no Stage 1 anywhere: not an
/// empty column, figure or line.
#[test]
fn without_clip_review_the_tables_and_figures_have_no_stage_1() {
    let glimpse = crate::domain::protocol::parse(
        crate::domain::protocol::shipped("glimpse").unwrap_or_default(),
    )
    .unwrap()
    .taxonomy;
    let mut agreed = oc(2, "TRAJ", ("a", "b"), "both_pass", ("valid", "valid"), 3);
    agreed.qa_type = Some("MC".into());
    let mut split = oc(2, "TRAJ", ("a", "b"), "split", ("valid", "reject"), 1);
    split.qa_type = Some("MC".into());
    let r = build(
        "g",
        &glimpse,
        &Scope::default(),
        &[agreed, split],
        &HashMap::new(),
    );
    assert!(!r.clip_review);
    assert_eq!(r.t11_json(), json!({}));
    let t13 = r.t13_json();
    assert_eq!(
        t13.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["stage2".to_string()])
    );
    assert_eq!(t13["stage2"]["items_reviewed"], 4);
    for f in [
        format::Format::Csv,
        format::Format::Latex,
        format::Format::Json,
    ] {
        let e = format::render(&r, &glimpse, format::TableId::T11, f).unwrap_err();
        assert!(e.to_string().contains("reviews no clips"), "{e}");
    }
    let latex = format::render(&r, &glimpse, format::TableId::T13, format::Format::Latex).unwrap();
    assert!(
        latex.contains("\\begin{tabular}{lr}\n\\toprule\n & QA QC \\\\"),
        "{latex}"
    );
    assert!(latex.contains("Items reviewed & 4 \\\\"), "{latex}");
    assert!(!latex.contains("Video QC"), "{latex}");
    let csv = format::render(&r, &glimpse, format::TableId::T13, format::Format::Csv).unwrap();
    assert!(csv.lines().skip(1).all(|l| l.starts_with("2,")), "{csv}");
    let names: Vec<&str> = svg::qc_figures(&r, &glimpse, &r.caption(0))
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(
        names,
        ["t13-kappa-stage2", "t12-rejected", "reasons-stage2"]
    );
    let summary = format::summary(&r);
    assert!(!summary.contains("Stage 1"), "{summary}");
    assert!(
        r.scope_text().ends_with("every question (no clip review)"),
        "{}",
        r.scope_text()
    );
    // With clip review, both stages as before.
    let v = build(
        "v",
        &Taxonomy::vgenst(),
        &Scope::default(),
        &[],
        &HashMap::new(),
    );
    assert_eq!(v.t13_json().as_object().map(|o| o.len()), Some(2));
    assert_eq!(
        svg::qc_figures(&v, &Taxonomy::vgenst(), &v.caption(0)).len(),
        6
    );
}

/// Items retained by sample have their own count: never reviewed items, never in
/// the agreement table or a validator's verdicts.
#[test]
fn items_retained_by_sample_are_counted_apart_from_the_reviewed() {
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            4,
        ),
        oc(1, "MC_F_EGO_STA", ("", ""), "by_sample", ("", ""), 16),
    ];
    let r = build(
        "c",
        &Taxonomy::vgenst(),
        &Scope::default(),
        &counts,
        &HashMap::new(),
    );
    assert_eq!(
        r.t11[0].1,
        T11Cell {
            reviewed: 4,
            retained: 4,
            by_sample: 16,
            waiting: 0,
        }
    );
    assert_eq!((r.stage1.items_reviewed, r.stage1.by_sample), (4, 16));
    assert_eq!(r.stage1.pooled.table, [[4, 0], [0, 0]]);
    assert!(r.validators.iter().all(|v| !v.validator.is_empty()));
    // VGenST reviews every item: no column of them in its JSON.
    assert!(!r.sampled);
    assert!(
        r.t11_json()["MC_F_EGO_STA"]
            .get("retained_by_sample")
            .is_none()
    );
}

#[test]
fn the_pooled_table_sums_the_pairs_with_rater_1_as_the_first_member() {
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            90,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split_accepted",
            ("valid", "reject"),
            3,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split_rejected",
            ("reject", "valid"),
            2,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_reject",
            ("reject", "reject"),
            5,
        ),
        oc(
            1,
            "QC_F_EGO_DYN",
            ("b", "c"),
            "both_pass",
            ("valid", "valid"),
            95,
        ),
        oc(
            1,
            "QC_F_EGO_DYN",
            ("b", "c"),
            "split",
            ("reject", "valid"),
            1,
        ),
        oc(1, "QC_F_EGO_DYN", ("", ""), "pending", ("", ""), 4),
    ];
    let r = build(
        "c",
        &Taxonomy::vgenst(),
        &Scope::default(),
        &counts,
        &HashMap::new(),
    );
    let s = &r.stage1;
    assert_eq!(s.pooled.table, [[185, 3], [3, 5]]);
    assert_eq!(
        (s.items_reviewed, s.pending, s.split, s.split_pending),
        (196, 4, 6, 1)
    );
    assert_eq!(s.per_pair.len(), 2);
    assert_eq!(s.per_pair[1].agreement.table, [[95, 0], [1, 0]]);
    assert_eq!(
        r.t11[0].1,
        T11Cell {
            reviewed: 100,
            retained: 93,
            by_sample: 0,
            waiting: 0,
        }
    );
    assert_eq!(
        r.t11[1].1,
        T11Cell {
            reviewed: 96,
            retained: 95,
            by_sample: 0,
            waiting: 1,
        }
    );
    assert_eq!(r.t12.iter().map(|(_, row)| row.len()).sum::<usize>(), 98);
    // Reasons of the counted rejects: rater 1's and rater 2's.
    let reasons: Vec<(&str, i64)> = r.reasons.iter().map(|x| (x.reason.as_str(), x.n)).collect();
    assert!(reasons.contains(&("prompt_drift", 7)), "{reasons:?}");
    let a = r.validators.iter().find(|v| v.validator == "a").unwrap();
    assert_eq!((a.verdicts, a.valid), (100, 93));
}

#[test]
fn every_output_shows_the_bounded_interval_and_names_its_method() {
    // 7 both pass, 1 split, 2 both reject (the fewest items with figures): the
    // Wald interval passes 1.
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            7,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split_accepted",
            ("reject", "valid"),
            1,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_reject",
            ("reject", "reject"),
            2,
        ),
    ];
    let tax = Taxonomy::vgenst();
    let r = build("c", &tax, &Scope::default(), &counts, &HashMap::new());
    let j = r.t13_json();
    let s1 = &j["stage1"];
    let wald = s1["cohen_kappa_ci95"].as_array().unwrap();
    assert!(
        wald[1].as_f64().unwrap() > 1.0,
        "statsmodels' interval, unclipped"
    );
    let bounded = s1["cohen_kappa_ci95_bounded"].as_array().unwrap();
    assert_eq!(bounded[1], json!(1.0));
    assert_eq!(bounded[0], wald[0]);
    assert_eq!(s1["cohen_kappa_ci95_method"], "wald_truncated");
    assert_eq!(
        s1["per_pair"][0]["cohen_kappa_ci95_bounded"],
        s1["cohen_kappa_ci95_bounded"]
    );
    let latex = format::render(&r, &tax, format::TableId::T13, format::Format::Latex).unwrap();
    let lo = wald[0].as_f64().unwrap();
    assert!(
        latex.contains(&format!("[{lo:.2}, 1.00]")) && latex.contains("truncated to $[-1, 1]$"),
        "{latex}"
    );
    let csv = format::render(&r, &tax, format::TableId::T13, format::Format::Csv).unwrap();
    assert!(csv.contains("cohen_kappa_ci95_bounded_high") && csv.contains("wald_truncated"));
    let plot = svg::kappa_bars(
        &r.stage1,
        "x",
        &crate::domain::taxonomy::Tables::default(),
        &r.caption(0),
    );
    assert!(plot.contains("truncated to [-1, 1]"), "{plot}");
    assert!(format::summary(&r).contains("Wald truncated to [-1, 1]"));
}

#[test]
fn a_pair_over_its_tasks_sums_their_tables_with_the_same_rater_1() {
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            8,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split",
            ("valid", "reject"),
            2,
        ),
        oc(
            1,
            "QC_F_EGO_DYN",
            ("b", "c"),
            "both_pass",
            ("valid", "valid"),
            5,
        ),
        oc(
            1,
            "CI_F_EXO_STA",
            ("a", "b"),
            "both_reject",
            ("reject", "reject"),
            3,
        ),
        // The same two people the other way round: transposed before pooling.
        oc(
            1,
            "CM_F_EXO_DYN",
            ("b", "a"),
            "split",
            ("valid", "reject"),
            4,
        ),
    ];
    let r = build(
        "c",
        &Taxonomy::vgenst(),
        &Scope::default(),
        &counts,
        &HashMap::new(),
    );
    let s = &r.stage1;
    assert_eq!(s.per_pair.len(), 4, "one row per task and pair");
    assert_eq!(s.per_rater_pair.len(), 2, "one row per pair");
    let ab = &s.per_rater_pair[0];
    assert_eq!((ab.rater1.as_str(), ab.rater2.as_str()), ("a", "b"));
    assert_eq!(
        ab.tasks,
        vec!["MC_F_EGO_STA", "CI_F_EXO_STA", "CM_F_EXO_DYN"]
    );
    assert_eq!(ab.agreement.table, [[8, 2], [4, 3]]);
    assert_eq!(ab.items, 17);
    let j = r.t13_json();
    assert_eq!(
        j["stage1"]["per_rater_pair"][1]["tasks"],
        json!(["QC_F_EGO_DYN"])
    );
    assert_eq!(j["stage1"]["per_pair"].as_array().unwrap().len(), 4);
    assert_eq!(j["stage1"]["per_pair"][3]["task"], "CM_F_EXO_DYN");
}

#[test]
fn a_pair_is_retained_only_when_both_directions_are() {
    use crate::domain::Outcome::*;
    use crate::domain::facts::PairItem;
    let tax = crate::domain::protocol::parse(
        crate::domain::protocol::shipped("glimpse").unwrap_or_default(),
    )
    .map(|p| p.taxonomy)
    .unwrap_or_else(|e| panic!("{e:?}"));
    let it = |task: &str, version, pair: &str, outcome| PairItem {
        task: task.into(),
        version,
        pair: pair.into(),
        outcome,
    };
    let items = [
        it("TRAJ", 1, "P1", BothPass),
        it("TRAJ", 1, "P1", SplitAccepted),
        it("TRAJ", 1, "P2", BothPass),
        it("TRAJ", 1, "P2", BothReject),
        it("TRAJ", 1, "P3", BothPass),
        it("TRAJ", 1, "P3", Split),
        // The same key on another clip version is another pair.
        it("TRAJ", 2, "P1", Pending),
        it("TRAJ", 2, "P1", Pending),
        it("TEMP", 5, "P1", SplitRejected),
        it("TEMP", 5, "P1", BothPass),
    ];
    let rows = pair_rows(&tax, &items);
    let got: Vec<(&str, i64, i64, i64, i64)> = rows
        .iter()
        .map(|r| (r.task.as_str(), r.pairs, r.reviewed, r.retained, r.rejected))
        .collect();
    assert_eq!(got, [("TRAJ", 4, 2, 1, 1), ("TEMP", 1, 1, 0, 1)]);
    assert!(pair_rows(&tax, &[]).is_empty());
}

#[test]
fn undefined_kappa_is_null_in_json() {
    let counts = vec![oc(
        1,
        "MC_F_EGO_STA",
        ("a", "b"),
        "both_pass",
        ("valid", "valid"),
        10,
    )];
    let r = build(
        "c",
        &Taxonomy::vgenst(),
        &Scope::default(),
        &counts,
        &HashMap::new(),
    );
    let j = r.t13_json();
    assert!(j["stage1"]["cohen_kappa"].is_null());
    assert_eq!(j["stage1"]["raw_agreement"], json!(1.0));
    assert!(
        j["stage2"]["raw_agreement"].is_null(),
        "no items: undefined, not 0"
    );
}

#[test]
fn below_the_minimum_count_chance_corrected_figures_are_withheld_with_the_reason() {
    // 1 both pass, 1 split, 1 both reject: a kappa over 3 items, all noise.
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            1,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split",
            ("reject", "valid"),
            1,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_reject",
            ("reject", "reject"),
            1,
        ),
        oc(
            2,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            9,
        ),
        oc(
            2,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_reject",
            ("reject", "reject"),
            1,
        ),
    ];
    let tax = Taxonomy::vgenst();
    let r = build("c", &tax, &Scope::default(), &counts, &HashMap::new());
    let j = r.t13_json();
    let s1 = &j["stage1"];
    for key in [
        "cohen_kappa",
        "cohen_kappa_ci95",
        "cohen_kappa_ci95_bounded",
        "gwet_ac1",
        "pabak",
        "krippendorff_alpha",
    ] {
        assert!(s1[key].is_null(), "{key}: {}", s1[key]);
        assert!(s1["per_pair"][0][key].is_null(), "{key}");
    }
    assert_eq!(s1["withheld"]["items"], json!(3));
    assert_eq!(s1["withheld"]["minimum"], json!(MIN_AGREEMENT_ITEMS));
    assert!(
        s1["withheld"]["reason"]
            .as_str()
            .unwrap()
            .contains("too few items (3)")
    );
    // The raw agreement is a plain share and stays.
    assert!((s1["raw_agreement"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    // Ten items: the figures are given and nothing is withheld.
    let s2 = &j["stage2"];
    assert!(
        s2["withheld"].is_null() && s2["cohen_kappa"].as_f64().is_some(),
        "{s2}"
    );
    let latex = format::render(&r, &tax, format::TableId::T13, format::Format::Latex).unwrap();
    assert!(
        latex.contains("Cohen's $\\kappa$ & too few items (3) & 1.00"),
        "{latex}"
    );
    assert!(
        !latex.contains("0.00 [0.00, 0.00]") && !latex.contains("[0.00, 0.00]"),
        "{latex}"
    );
    let csv = format::render(&r, &tax, format::TableId::T13, format::Format::Csv).unwrap();
    assert!(
        csv.contains("agreement_withheld") && csv.contains("too few items (3)"),
        "{csv}"
    );
    let plot = svg::kappa_bars(
        &r.stage1,
        "x",
        &crate::domain::taxonomy::Tables::default(),
        &r.caption(0),
    );
    assert!(plot.contains("too few items (3)"), "{plot}");
    assert!(format::summary(&r).contains("Cohen's kappa too few items (3)"));
    // An empty table is not "too few": it is not reviewed.
    assert_eq!(Agreement::of([[0, 0], [0, 0]]).withheld, None);
}

#[test]
fn each_stages_figure_names_its_own_scope_and_table_11_marks_a_split_waiting() {
    let counts = vec![
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "both_pass",
            ("valid", "valid"),
            4,
        ),
        oc(
            1,
            "MC_F_EGO_STA",
            ("a", "b"),
            "split",
            ("reject", "valid"),
            1,
        ),
    ];
    let tax = Taxonomy::vgenst();
    let r = build("c", &tax, &Scope::default(), &counts, &HashMap::new());
    for f in svg::qc_figures(&r, &tax, &r.caption(0)) {
        let stage1 = svg::is_clip_review_figure(f.name);
        assert_eq!(f.svg.contains("Stage 1 over"), stage1, "{}", f.name);
        assert_eq!(f.svg.contains("Stage 2 over"), !stage1, "{}", f.name);
    }
    assert_eq!(r.t11[0].1.waiting, 1);
    assert_eq!(r.t11_json()["MC_F_EGO_STA"]["waiting_for_author"], json!(1));
    let latex = format::render(&r, &tax, format::TableId::T11, format::Format::Latex).unwrap();
    assert!(latex.contains("4/5$^{*}$ (MC)"), "{latex}");
    assert!(latex.contains("a snapshot with 1 pending"), "{latex}");
    let grid = svg::t11_grid(&r, &tax, &r.stage_caption(1, &r.caption(0)));
    assert!(grid.contains("A snapshot: 1 reviewed clip(s)"), "{grid}");
}
