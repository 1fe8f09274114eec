//! The human baseline: answers gathered elsewhere brought in whole (or not at all),
//! written out again in the same format, and the baseline's table from them, in `tandem stats
//! --json` and in each format through the CLI; the groups kept apart.

use crate::helpers::*;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use tandem::domain::Role;

const MC: &str = "MC_F_EGO_STA";
/// The key of every question `clip_line` writes: option C of four.
const KEY: usize = 2;

/// Three clips with an OE and a CR question each; the first two kept whole by both
/// validators, the third rejected in Stage 1 (its questions are not retained).
async fn campaign_with_retained_questions(app: &TestApp) -> Vec<String> {
    let c = cast(app).await;
    let ids = app.import_clips(&[MC], 3, &["OE", "CR"]).await;
    for v in [&c.v0, &c.v1] {
        app.pass(v, 1, &ids[0]).await;
        app.pass(v, 1, &ids[1]).await;
        app.reject(v, 1, &ids[2], "prompt_drift").await;
    }
    for clip in &ids[..2] {
        for qa in ["OE", "CR"] {
            for v in [&c.v0, &c.v1] {
                assert_eq!(
                    app.pass(v, 2, &format!("{clip}_{qa}")).await.status,
                    reqwest::StatusCode::CREATED
                );
            }
        }
    }
    ids
}

/// Presentation `r` of a four-option question: the options rotated by `r`.
fn shown(r: usize) -> Vec<usize> {
    (0..4).map(|i| (i + r) % 4).collect()
}

fn letters(options: &[usize]) -> String {
    options
        .iter()
        .map(|&o| char::from(b'A' + o as u8))
        .collect()
}

/// One row: `right` picks the shown position of the key, else the one after it.
fn row(out: &mut String, who: &str, question: &str, r: usize, right: bool) {
    let s = shown(r);
    let at = s.iter().position(|&o| o == KEY).unwrap();
    let chosen = if right { at } else { (at + 1) % 4 };
    writeln!(
        out,
        "{who},{question},{r},{},{}",
        letters(&s),
        char::from(b'A' + chosen as u8)
    )
    .unwrap();
}

fn url(app: &TestApp) -> Option<&str> {
    let u = app.config.database_url.as_str();
    u.starts_with("postgres").then_some(u)
}

fn data(app: &TestApp) -> std::path::PathBuf {
    app.dir.path().join("data")
}

async fn import(
    app: &TestApp,
    path: &Path,
) -> tandem::Result<tandem::store::baseline::AnswersSummary> {
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let (rows, problems) = tandem::io::baseline::read_answers(std::fs::File::open(path).unwrap());
    tandem::app::baseline::import_answers(&app.store, &campaign, &rows, problems, "answers").await
}

#[tokio::test]
async fn answers_brought_in_give_table_16_and_go_out_in_the_same_format() {
    let app = spawn_app().await;
    let ids = campaign_with_retained_questions(&app).await;
    app.user("b1", Role::Baseline, None).await;
    app.user("b2", Role::Baseline, None).await;
    let q: Vec<String> = ids[..2]
        .iter()
        .flat_map(|c| [format!("{c}_OE"), format!("{c}_CR")])
        .collect();
    // b1 answers every presentation rightly. b2: q0 right; q1 wrong at presentation 1;
    // q2 without presentation 3 (incomplete); q3 wrong at presentation 0 (vanilla).
    let mut csv = String::from("participant,question_id,presentation,shown,chosen\n");
    for question in &q {
        for r in 0..4 {
            row(&mut csv, "b1", question, r, true);
        }
    }
    for r in 0..4 {
        row(&mut csv, "b2", &q[0], r, true);
        row(&mut csv, "b2", &q[1], r, r != 1);
        if r < 3 {
            row(&mut csv, "b2", &q[2], r, true);
        }
        row(&mut csv, "b2", &q[3], r, r != 0);
    }
    let path = app.source().join("answers.csv");
    std::fs::write(&path, &csv).unwrap();
    let summary = import(&app, &path).await.unwrap();
    assert_eq!(
        (summary.added, summary.participants, summary.already_there),
        (31, 2, 0)
    );

    // The figures: vanilla 7 of 8, circular 5 of 7 (b2's q2 incomplete).
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let json = tandem::app::stats_json(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    let b = &json["baseline"];
    let check = |p: &Value, correct: u64, n: u64| {
        assert_eq!(p["correct"].as_u64(), Some(correct), "{p}");
        assert_eq!(p["n"].as_u64(), Some(n), "{p}");
        let acc = p["accuracy"].as_f64().unwrap();
        assert_eq!(acc, correct as f64 / n as f64);
        let (lo, hi) = (
            p["interval"][0].as_f64().unwrap(),
            p["interval"][1].as_f64().unwrap(),
        );
        assert!(lo <= acc && acc <= hi, "{p}");
        assert_eq!(p["method"], "clopper-pearson");
    };
    check(&b["overall"]["vanilla"], 7, 8);
    check(&b["overall"]["circular"], 5, 7);
    assert_eq!(b["overall"]["incomplete"].as_u64(), Some(1));
    check(&b["per_participant"]["b1"]["circular"], 4, 4);
    check(&b["per_participant"]["b2"]["vanilla"], 3, 4);
    check(&b["per_participant"]["b2"]["circular"], 1, 3);
    check(&b["per_task"][MC]["circular"], 5, 7);
    // The CR questions: b1 2 of 2, b2 q1 wrong and q3 wrong.
    check(&b["per_qa_type"]["CR"]["circular"], 2, 4);
    assert_eq!(b["participants"].as_u64(), Some(2));
    assert_eq!(b["questions"].as_u64(), Some(4));
    assert_eq!(b["presentations"].as_u64(), Some(31));
    assert_eq!(b["left_out"].as_u64(), Some(0));
    // Table 16, the annotator pool: val00 and val01, part1, b1 and b2; author1 apart.
    assert_eq!(
        json["t16"],
        serde_json::json!({"quality_control": 2, "study": 1, "baseline": 2, "total": 5, "authors": 1, "disjoint": true})
    );
    // 31 answers over four positions: each shown position chosen as the key's or the
    // one after it; the test of equal shares is there.
    let counts: u64 = b["position_bias"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counts, 31);
    assert!(b["position_bias"]["p_value"].as_f64().is_some(), "{b}");

    // The export is the import's format; bringing it back adds nothing.
    let exported = tandem_ok(&data(&app), url(&app), &["baseline", "export"]);
    let (rows, problems) = tandem::io::baseline::read_answers(exported.as_bytes());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(rows.len(), 31);
    let back = app.source().join("back.csv");
    std::fs::write(&back, exported + "\n").unwrap();
    let again = import(&app, &back).await.unwrap();
    assert_eq!((again.added, again.already_there), (0, 31));

    // The tables in each format through the CLI.
    let table = tandem_ok(&data(&app), url(&app), &["baseline", "stats"]);
    assert!(
        table.starts_with("group,key,vanilla_correct,vanilla_n,vanilla_accuracy"),
        "{table}"
    );
    assert!(table.contains("\noverall,,7,8,0.875,"), "{table}");
    assert!(table.contains("\nparticipant,b2,3,4,0.75,"), "{table}");
    let wilson = tandem_ok(
        &data(&app),
        url(&app),
        &["baseline", "stats", "--interval", "wilson"],
    );
    assert!(
        wilson.contains(",wilson\n") || wilson.ends_with(",wilson"),
        "{wilson}"
    );
    let positions = tandem_ok(
        &data(&app),
        url(&app),
        &["baseline", "stats", "--table", "positions"],
    );
    assert!(
        positions.starts_with("scope,participant,answers_A,answers_B,answers_C,answers_D"),
        "{positions}"
    );
    let tex = tandem_ok(
        &data(&app),
        url(&app),
        &["baseline", "stats", "--format", "latex"],
    );
    assert!(
        tex.contains("Clopper-Pearson") && tex.contains("\\toprule"),
        "{tex}"
    );
    if pdflatex_available() {
        latex_compiles(&tex);
    }
    let by_stats = tandem_ok(
        &data(&app),
        url(&app),
        &["stats", "--table", "baseline", "--format", "csv"],
    );
    assert_eq!(by_stats, table);
    let t16 = tandem_ok(
        &data(&app),
        url(&app),
        &["stats", "--table", "T16", "--format", "csv"],
    );
    assert_eq!(
        t16,
        "group,n,task\nQuality control,2,Two-stage video and QA review (intersection rule)\nVideo quality study,1,Ordinal ranking and real-vs-fake judgment\nHuman baseline,2,Base MCQs under circular evaluation\nTotal,5,All groups mutually disjoint"
    );
    let t16_tex = tandem_ok(
        &data(&app),
        url(&app),
        &["stats", "--table", "T16", "--format", "latex"],
    );
    latex_compiles(&t16_tex);

    // The paper bundle holds the baseline's table, its figures and the answers; paper.tex compiles.
    let bundle = tandem::app::paper_bundle(&app.store, &campaign, 0)
        .await
        .unwrap();
    let names: Vec<&str> = bundle.iter().map(|f| f.path.as_str()).collect();
    for want in [
        "tables/baseline.tex",
        "tables/baseline.csv",
        "tables/baseline.json",
        "tables/baseline-positions.csv",
        "figures/baseline-accuracy.svg",
        "figures/baseline-accuracy.pdf",
        "figures/baseline-positions.png",
        "records/baseline-answers.csv",
        "tables/t16.tex",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let readme = String::from_utf8_lossy(&bundle[0].bytes).to_string();
    assert!(
        readme.contains("Human baseline: 2 participant(s), 4 question(s), 31 presentation(s)"),
        "{readme}"
    );
    if pdflatex_available() {
        let out = tempfile::tempdir().unwrap();
        tandem::report::bundle::write(&out.path().join("b"), &bundle).unwrap();
        pdflatex(&out.path().join("b"), "paper.tex");
    }

    // The results page and its downloads, for admins and authors.
    let admin = app.login("admin1").await;
    let page = app
        .page(
            Some(&admin),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/baseline/results"),
            None,
        )
        .await;
    assert_eq!(page.status, reqwest::StatusCode::OK);
    for want in [
        "Accuracy under circular evaluation",
        "Table 16: the annotator pool",
        "87.5% [",
        "71.4% [",
        "exact binomial (Clopper-Pearson)",
        "<svg",
        "b2",
    ] {
        assert!(page.text.contains(want), "{want}: {}", page.text);
    }
    for (path, want) in [
        ("baseline.csv", "group,key,"),
        ("baseline-positions.csv", "scope,participant,answers_A"),
        ("baseline.tex", "\\begin{tabular}"),
        ("fig-baseline-accuracy.svg", "<svg"),
        ("fig-baseline-positions.svg", "<svg"),
    ] {
        let r = app
            .page(
                Some(&admin),
                reqwest::Method::GET,
                &format!("/c/{CAMPAIGN}/stats/{path}"),
                None,
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::OK, "{path}");
        assert!(
            r.text.starts_with(want) || r.text.contains(want),
            "{path}: {}",
            r.text
        );
    }

    // The answers from the exports page and the API are the CLI's export.
    let cli_export = tandem_ok(&data(&app), url(&app), &["baseline", "export"]);
    let exports = app
        .page(
            Some(&admin),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports"),
            None,
        )
        .await;
    assert!(
        exports
            .text
            .contains("Every answer of the human baseline</a> (31 presentation(s)"),
        "{}",
        exports.text
    );
    let page_csv = app
        .page(
            Some(&admin),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports/baseline-answers.csv"),
            None,
        )
        .await;
    assert_eq!(page_csv.text.trim(), cli_export);
    let token = app.store.create_token("admin1", "baseline").await.unwrap();
    let api_csv = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/baseline-answers"),
            &token,
        )
        .await;
    assert_eq!(api_csv.status, reqwest::StatusCode::OK);
    assert_eq!(api_csv.text.trim(), cli_export);

    let status = tandem_ok(&data(&app), url(&app), &["baseline", "status"]);
    assert!(
        status.contains("b2\t15 presentation(s) of 4 question(s)"),
        "{status}"
    );

    // The groups stay apart: a baseline participant with answers keeps the role.
    let err = app
        .store
        .set_role("b2", CAMPAIGN, Some(Role::Participant))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("with 15 answer(s) there"), "{err}");
}

#[tokio::test]
async fn broken_answers_are_refused_whole_with_line_and_field() {
    let app = spawn_app().await;
    let ids = campaign_with_retained_questions(&app).await;
    app.user("b1", Role::Baseline, None).await;
    app.user("part2", Role::Participant, None).await;
    let (q, dropped) = (format!("{}_OE", ids[0]), format!("{}_OE", ids[2]));
    let mut first = String::from("participant,question_id,presentation,shown,chosen\n");
    row(&mut first, "b1", &q, 0, true);
    let path = app.source().join("a.csv");
    std::fs::write(&path, &first).unwrap();
    import(&app, &path).await.unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            format!("val00,{q},1,BCDA,A\n"),
            "line 2, field `participant`: `val00` is not a participant of this campaign's baseline",
        ),
        (
            format!("part2,{q},1,BCDA,A\n"),
            "`part2` is not a participant of this campaign's baseline",
        ),
        (
            format!("b1,{dropped},0,ABCD,C\n"),
            "field `question_id`: `MC_F_EGO_STA_0002_OE` is not retained",
        ),
        (
            "b1,nothing,0,ABCD,C\n".to_string(),
            "`nothing` is no question of this campaign",
        ),
        (
            format!("b1,{q},1,BCDB,A\n"),
            "field `shown`: `BCDB` is not the options' letters",
        ),
        (
            format!("b1,{q},1,BCA,A\n"),
            "field `shown`: shows 3 options; question `MC_F_EGO_STA_0000_OE` has 4",
        ),
        (
            format!("b1,{q},1,BCDA,E\n"),
            "field `chosen`: `E` is not the letter of a shown position",
        ),
        (
            format!("b1,{q},4,ABCD,A\n"),
            "field `presentation`: 4 is not a rotation",
        ),
        (
            format!("b1,{q},2,CDAB,A\nb1,{q},2,CDAB,A\n"),
            "line 3, field `presentation`: presentation 2 of `MC_F_EGO_STA_0000_OE` by `b1` is already on line 2",
        ),
        (format!("b1,{q},0,ABCD,A\n"), "answers are final"),
    ];
    let before = app.dump().await;
    for (rows, want) in cases {
        // A good row first: nothing of a refused file is stored.
        let mut text = String::from("participant,question_id,presentation,shown,chosen\n");
        let good = format!("b1,{}_CR,3,DABC,D\n", ids[1]);
        text.push_str(&rows);
        text.push_str(&good);
        std::fs::write(&path, &text).unwrap();
        let err = import(&app, &path).await.unwrap_err().to_string();
        assert!(err.contains(want), "want `{want}` in: {err}");
        assert!(err.contains("nothing was stored"), "{err}");
        assert_eq!(before, app.dump().await);
    }
}
