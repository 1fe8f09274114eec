//! Imports are checked whole and are all-or-nothing: every broken manifest or CSV is
//! refused with its line and field, and the database is left exactly as it was.

use crate::helpers::*;
use serde_json::{Value, json};
use tandem::Error;
use tandem::store::catalog::Campaign;

const MC: &str = "MC_F_EGO_STA";

fn media_files(app: &TestApp) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(&app.config.media_dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Imports `lines` and expects a refusal naming `line` and `field`, with nothing stored.
async fn refused(
    app: &TestApp,
    name: &str,
    lines: &[Value],
    line: usize,
    field: Option<&str>,
    says: &str,
) {
    let before = app.dump().await;
    let media_before = media_files(app);
    let m = write_manifest(&app.source(), name, lines);
    match app.import(&m).await {
        Err(Error::Rejected(r)) => {
            assert!(
                r.problems.iter().any(|p| p.line == line
                    && p.field.as_deref() == field
                    && p.message.contains(says)),
                "{name}: expected line {line} field {field:?} saying `{says}`, got {r}"
            );
        }
        other => panic!("{name}: expected a refusal, got {other:?}"),
    }
    assert_eq!(app.dump().await, before, "{name} changed the database");
    assert_eq!(media_files(app), media_before, "{name} left media behind");
}

#[tokio::test]
async fn each_kind_of_broken_manifest_is_refused_with_its_line_and_field() {
    let app = spawn_app().await;
    let src = app.source();
    // One clip already in, so that "unchanged" is a real database to compare.
    app.import_clips(&[MC], 1, &["OE"]).await;
    let good = clip_line(&src, "GOOD_1", MC, &["OE", "OA"]);

    let mut bad = clip_line(&src, "BAD_TASK", MC, &[]);
    bad["task"] = json!("XX_F_EGO_STA");
    refused(
        &app,
        "task.jsonl",
        &[good.clone(), bad],
        2,
        Some("task"),
        "unknown task",
    )
    .await;

    let bad = clip_line(&src, "BAD_QA", MC, &["ZZ"]);
    refused(
        &app,
        "qa.jsonl",
        &[good.clone(), bad],
        2,
        Some("questions[0].qa_type"),
        "unknown QA type",
    )
    .await;

    let bad = clip_line(&src, "BAD_CELL", MC, &["OE", "AR"]);
    refused(
        &app,
        "cell.jsonl",
        &[good.clone(), bad],
        2,
        Some("questions[1].qa_type"),
        "does not apply",
    )
    .await;

    let mut bad = clip_line(&src, "BAD_ANSWER", MC, &["OE"]);
    bad["questions"][0]["answer"] = json!(4);
    refused(
        &app,
        "answer.jsonl",
        &[good.clone(), bad],
        2,
        Some("questions[0].answer"),
        "outside the 4 options",
    )
    .await;

    let mut bad = clip_line(&src, "BAD_OPTIONS", MC, &["OE"]);
    bad["questions"][0]["options"] = json!(["a key", "a candle", "A Key"]);
    refused(
        &app,
        "options.jsonl",
        &[good.clone(), bad],
        2,
        Some("questions[0].options"),
        "are the same",
    )
    .await;

    let dup = clip_line(&src, "GOOD_1", MC, &[]);
    refused(
        &app,
        "dupclip.jsonl",
        &[good.clone(), dup],
        2,
        Some("clip_id"),
        "duplicate clip_id",
    )
    .await;

    let mut dupq = clip_line(&src, "DUP_Q", MC, &["OE"]);
    dupq["questions"][0]["question_id"] = json!("GOOD_1_OE");
    refused(
        &app,
        "dupq.jsonl",
        &[good.clone(), dupq],
        2,
        Some("questions[0].question_id"),
        "duplicate question_id",
    )
    .await;

    let mut missing = clip_line(&src, "MISSING", MC, &[]);
    missing["file"] = json!("videos/nowhere.mp4");
    refused(
        &app,
        "missing.jsonl",
        &[good.clone(), missing],
        2,
        Some("file"),
        "does not exist",
    )
    .await;

    std::fs::write(src.join("videos/notes.mp4"), b"just some text, not a video").unwrap();
    let mut text = clip_line(&src, "TEXT", MC, &[]);
    text["file"] = json!("videos/notes.mp4");
    refused(
        &app,
        "text.jsonl",
        &[good.clone(), text],
        2,
        Some("file"),
        "not a recognised video",
    )
    .await;

    std::fs::write(src.join("videos/empty.mp4"), b"").unwrap();
    let mut empty = clip_line(&src, "EMPTY", MC, &[]);
    empty["file"] = json!("videos/empty.mp4");
    refused(
        &app,
        "empty.jsonl",
        &[good.clone(), empty],
        2,
        Some("file"),
        "is empty",
    )
    .await;

    std::fs::create_dir_all(src.join("videos/adir.mp4")).unwrap();
    let mut folder = clip_line(&src, "FOLDER", MC, &[]);
    folder["file"] = json!("videos/adir.mp4");
    refused(
        &app,
        "folder.jsonl",
        &[good.clone(), folder],
        2,
        Some("file"),
        "not a regular file",
    )
    .await;

    let outside = app.dir.path().join("outside.mp4");
    std::fs::write(&outside, fake_mp4("outside")).unwrap();
    let mut up = clip_line(&src, "UP", MC, &[]);
    up["file"] = json!("../outside.mp4");
    refused(
        &app,
        "up.jsonl",
        &[good.clone(), up],
        2,
        Some("file"),
        "leaves the manifest's folder",
    )
    .await;
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, src.join("videos/link.mp4")).unwrap();
        let mut link = clip_line(&src, "LINK", MC, &[]);
        link["file"] = json!("videos/link.mp4");
        refused(
            &app,
            "link.jsonl",
            &[good.clone(), link],
            2,
            Some("file"),
            "symbolic link",
        )
        .await;
    }
    let mut abs = clip_line(&src, "ABS", MC, &[]);
    abs["file"] = json!(outside.display().to_string());
    refused(
        &app,
        "abs.jsonl",
        &[good.clone(), abs],
        2,
        Some("file"),
        "absolute",
    )
    .await;

    // Bad JSON on line 3, after a good line and a blank line.
    let before = app.dump().await;
    let path = src.join("json.jsonl");
    std::fs::write(&path, format!("{good}\n\n{{\"clip_id\": \"X\",\n")).unwrap();
    match app.import(&path).await {
        Err(Error::Rejected(r)) => {
            assert_eq!(r.problems[0].line, 3, "{r}");
            assert!(r.problems[0].message.contains("invalid JSON"), "{r}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(app.dump().await, before);

    // Several problems are all reported at once.
    let mut a = clip_line(&src, "MULTI_A", MC, &["OE"]);
    a["questions"][0]["answer"] = json!(9);
    let mut b = clip_line(&src, "MULTI_B", MC, &[]);
    b["task"] = json!("NOPE");
    let m = write_manifest(&src, "multi.jsonl", &[a, good.clone(), b]);
    match app.import(&m).await {
        Err(Error::Rejected(r)) => {
            let lines: Vec<usize> = r.problems.iter().map(|p| p.line).collect();
            assert_eq!(lines, vec![1, 3], "{r}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn reimporting_the_same_manifest_changes_nothing_and_a_new_file_is_a_new_version() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    let lines = vec![
        clip_line(&src, "V_1", MC, &["OE"]),
        clip_line(&src, "V_2", MC, &["OE"]),
    ];
    let m = write_manifest(&src, "m.jsonl", &lines);
    let s = app.import(&m).await.unwrap();
    assert_eq!((s.clips_new, s.questions_new), (2, 2));
    app.reject(&c.v0, 1, "V_1", "generation_artifact").await;
    app.reject(&c.v1, 1, "V_1", "generation_artifact").await;

    let before = app.dump().await;
    let s = app.import(&m).await.unwrap();
    assert_eq!((s.clips_new, s.versions_new, s.unchanged), (0, 0, 2));
    assert_eq!(
        app.dump().await,
        before,
        "re-importing changed the database"
    );

    // The same video with other fields is refused; a new video is a new version.
    let mut changed = lines[1].clone();
    changed["theme"] = json!("Another theme");
    let m2 = write_manifest(&src, "changed.jsonl", &[changed]);
    assert!(matches!(app.import(&m2).await, Err(Error::Rejected(_))));
    assert_eq!(app.dump().await, before);

    std::fs::write(src.join("videos/V_1.mp4"), fake_mp4("V_1 regenerated")).unwrap();
    let s = app.import(&m).await.unwrap();
    assert_eq!((s.clips_new, s.versions_new, s.unchanged), (0, 1, 1));
    assert_eq!(app.outcome(1, "V_1").await, "pending");
    assert_eq!(
        app.count("SELECT COUNT(*) FROM clip_versions v JOIN clips c ON c.id = v.clip_id WHERE c.clip_key = 'V_1'").await,
        2
    );
    // The first version's decisions and outcome are kept.
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE stage = 1 AND outcome = 'both_reject'")
            .await,
        1
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
    // The new version goes back to the same pair.
    assert_eq!(
        app.pass(&c.v0, 1, "V_1").await.status,
        reqwest::StatusCode::CREATED
    );
}

#[tokio::test]
async fn a_question_id_of_another_clip_is_refused() {
    let app = spawn_app().await;
    app.import_clips(&[MC], 1, &["OE"]).await;
    let src = app.source();
    let mut other = clip_line(&src, "OTHER", MC, &["OE"]);
    other["questions"][0]["question_id"] = json!(format!("{MC}_0000_OE"));
    refused(
        &app,
        "taken.jsonl",
        &[other],
        1,
        Some("questions[0].question_id"),
        "already belongs",
    )
    .await;
}

async fn campaign(app: &TestApp) -> Campaign {
    app.store.campaign(CAMPAIGN).await.unwrap()
}

async fn import_csv_decisions(
    app: &TestApp,
    csv: &str,
) -> tandem::Result<tandem::store::records::BulkSummary> {
    let (rows, problems) = tandem::io::records::read_decisions(csv.as_bytes());
    app.store
        .import_decisions(&campaign(app).await, &rows, problems, "decisions.csv")
        .await
}

async fn import_csv_resolutions(
    app: &TestApp,
    csv: &str,
) -> tandem::Result<tandem::store::records::BulkSummary> {
    let (rows, problems) = tandem::io::records::read_resolutions(csv.as_bytes());
    app.store
        .import_resolutions(&campaign(app).await, &rows, problems, "resolutions.csv")
        .await
}

const HEAD: &str = "stage,item_id,validator,verdict,reasons,note,decided_at\n";

#[tokio::test]
async fn a_decisions_file_applies_in_order_and_is_refused_whole_on_any_bad_row() {
    let app = spawn_app().await;
    cast(&app).await;
    app.user("val02", tandem::domain::Role::Validator, Some(2))
        .await;
    app.import_clips(&[MC], 2, &["OE"]).await;
    let t = "2026-03-01T10:00:00Z";
    let good = format!(
        "1,{MC}_0000,val00,valid,,,{t}\n1,{MC}_0000,val01,valid,,,{t}\n2,{MC}_0000_OE,val00,valid,,,{t}\n"
    );
    let cases = [
        (
            format!("1,NOPE_1,val00,valid,,,{t}\n"),
            "item_id",
            "no clip",
        ),
        (
            format!("1,{MC}_0001,val02,valid,,,{t}\n"),
            "validator",
            "not in the pair",
        ),
        (
            format!("1,{MC}_0001,ghost,valid,,,{t}\n"),
            "validator",
            "no user",
        ),
        (
            format!("1,{MC}_0001,author1,valid,,,{t}\n"),
            "validator",
            "not a validator",
        ),
        (
            format!("2,{MC}_0001_OE,val00,valid,,,{t}\n"),
            "item_id",
            "not been retained",
        ),
        (
            format!("1,{MC}_0001,val00,fine,,,{t}\n"),
            "verdict",
            "valid",
        ),
        (
            format!("1,{MC}_0001,val00,reject,blurry,,{t}\n"),
            "reasons",
            "not a Stage 1 reason",
        ),
        (
            format!("1,{MC}_0001,val00,reject,,,{t}\n"),
            "reasons",
            "at least one reason",
        ),
        (
            format!("1,{MC}_0001,val00,valid,,,01/03/2026\n"),
            "decided_at",
            "RFC 3339",
        ),
        (
            format!("3,{MC}_0001,val00,valid,,,{t}\n"),
            "stage",
            "1 or 2",
        ),
    ];
    for (row, field, says) in cases {
        let before = app.dump().await;
        let csv = format!("{HEAD}{good}{row}");
        match import_csv_decisions(&app, &csv).await {
            Err(Error::Rejected(r)) => {
                assert!(
                    r.problems.iter().any(|p| p.line == 5
                        && p.field.as_deref() == Some(field)
                        && p.message.contains(says)),
                    "row `{row}`: expected line 5 field {field} saying `{says}`, got {r}"
                );
            }
            other => panic!("row `{row}`: expected a refusal, got {other:?}"),
        }
        assert_eq!(app.dump().await, before, "row `{row}` changed the database");
    }
    // The good rows alone apply, Stage 1 before Stage 2 of the same clip; twice is once.
    let s = import_csv_decisions(&app, &format!("{HEAD}{good}"))
        .await
        .unwrap();
    assert_eq!((s.recorded, s.repeated), (3, 0));
    let s = import_csv_decisions(&app, &format!("{HEAD}{good}"))
        .await
        .unwrap();
    assert_eq!((s.recorded, s.repeated), (0, 3));
    assert_eq!(app.outcome(1, &format!("{MC}_0000")).await, "both_pass");
}

#[tokio::test]
async fn a_resolutions_file_is_checked_whole() {
    let app = spawn_app().await;
    cast(&app).await;
    app.import_clips(&[MC], 2, &[]).await;
    let t = "2026-03-01T10:00:00Z";
    import_csv_decisions(
        &app,
        &format!("{HEAD}1,{MC}_0000,val00,valid,,,{t}\n1,{MC}_0000,val01,reject,prompt_drift,,{t}\n1,{MC}_0001,val00,valid,,,{t}\n1,{MC}_0001,val01,valid,,,{t}\n"),
    )
    .await
    .unwrap();
    let head = "stage,item_id,author,verdict,note,decided_at\n";
    let good = format!("1,{MC}_0000,author1,accept,fine on a second look,{t}\n");
    for (row, field) in [
        (format!("1,{MC}_0001,author1,accept,why,{t}\n"), "item_id"),
        (format!("1,{MC}_0000,val00,accept,why,{t}\n"), "author"),
        (format!("1,{MC}_0000,author1,maybe,why,{t}\n"), "verdict"),
        (format!("1,{MC}_0000,author1,reject,,{t}\n"), "note"),
    ] {
        let before = app.dump().await;
        match import_csv_resolutions(&app, &format!("{head}{good}{row}")).await {
            Err(Error::Rejected(r)) => assert!(
                r.problems
                    .iter()
                    .any(|p| p.line == 3 && p.field.as_deref() == Some(field)),
                "row `{row}`: {r}"
            ),
            other => panic!("row `{row}`: expected a refusal, got {other:?}"),
        }
        assert_eq!(app.dump().await, before);
    }
    let s = import_csv_resolutions(&app, &format!("{head}{good}"))
        .await
        .unwrap();
    assert_eq!(s.recorded, 1);
    assert_eq!(
        app.outcome(1, &format!("{MC}_0000")).await,
        "split_accepted"
    );
}

#[tokio::test]
async fn a_new_video_is_refused_unless_the_clip_was_rejected_in_stage_1() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    let lines: Vec<Value> = ["P_1", "R_1", "S_1"]
        .iter()
        .map(|id| clip_line(&src, id, MC, &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    app.import(&m).await.unwrap();
    app.pass(&c.v0, 1, "R_1").await;
    app.pass(&c.v1, 1, "R_1").await;
    app.pass(&c.v0, 1, "S_1").await;
    app.reject(&c.v1, 1, "S_1", "prompt_drift").await;
    for id in ["P_1", "R_1", "S_1"] {
        std::fs::write(
            src.join(format!("videos/{id}.mp4")),
            fake_mp4(&format!("{id} again")),
        )
        .unwrap();
    }
    let before = app.dump().await;
    match app.import(&m).await {
        Err(Error::Rejected(r)) => {
            let got: Vec<(usize, Option<&str>)> = r
                .problems
                .iter()
                .map(|p| (p.line, p.field.as_deref()))
                .collect();
            assert_eq!(
                got,
                vec![(1, Some("file")), (2, Some("file")), (3, Some("file"))],
                "{r}"
            );
            assert!(
                r.problems[0].message.contains("still in Stage 1 review"),
                "{r}"
            );
            assert!(r.problems[1].message.contains("retained"), "{r}");
            assert!(
                r.problems[2].message.contains("waiting for an author"),
                "{r}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(app.dump().await, before);
}

#[tokio::test]
async fn a_new_version_goes_back_to_the_same_pair_and_an_old_manifest_makes_none() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    // With two validators task QC (position 1) is reviewed by (val01, val00).
    let qc = "QC_F_EGO_DYN";
    let src = app.source();
    let first = write_manifest(&src, "v1.jsonl", &[clip_line(&src, "G_1", qc, &["OE"])]);
    app.import(&first).await.unwrap();
    let v1_video = std::fs::read(src.join("videos/G_1.mp4")).unwrap();
    app.reject(&c.v1, 1, "G_1", "generation_artifact").await;
    app.reject(&c.v0, 1, "G_1", "generation_artifact").await;
    // A third validator joins: QC's default pair becomes (val01, val02).
    let v2 = app
        .user("val02", tandem::domain::Role::Validator, Some(2))
        .await;
    std::fs::write(src.join("videos/G_1.mp4"), fake_mp4("G_1 regenerated")).unwrap();
    let second = write_manifest(&src, "v2.jsonl", &[clip_line(&src, "G_1", qc, &["OE"])]);
    std::fs::write(src.join("videos/G_1.mp4"), fake_mp4("G_1 regenerated")).unwrap();
    let s = app.import(&second).await.unwrap();
    assert_eq!(s.versions_new, 1);
    // The new version carries its pair but no verdict: the overview says "not started".
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let progress = app.store.progress(&campaign).await.unwrap();
    let qc_row = progress.iter().find(|p| p.task == qc).unwrap();
    assert_eq!(
        (qc_row.stage1.unstarted, qc_row.stage1.half_decided),
        (1, 0),
        "{qc_row:?}"
    );
    assert_eq!(
        app.pass(&v2, 1, "G_1").await.status,
        reqwest::StatusCode::NOT_FOUND,
        "not val02's"
    );
    assert_eq!(
        app.pass(&c.v0, 1, "G_1").await.status,
        reqwest::StatusCode::CREATED,
        "the same pair"
    );
    assert_eq!(
        app.pass(&c.v1, 1, "G_1").await.status,
        reqwest::StatusCode::CREATED
    );
    // Its questions go to the same pair too.
    assert_eq!(
        app.pass(&v2, 2, "G_1_OE").await.status,
        reqwest::StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.pass(&c.v0, 2, "G_1_OE").await.status,
        reqwest::StatusCode::CREATED
    );

    // Importing the first manifest again, with its first video, changes nothing.
    std::fs::write(src.join("videos/G_1.mp4"), &v1_video).unwrap();
    let before = app.dump().await;
    let s = app.import(&first).await.unwrap();
    assert_eq!((s.versions_new, s.unchanged), (0, 1));
    assert_eq!(app.dump().await, before);
}

#[tokio::test]
async fn exported_decisions_of_several_versions_import_again_as_repeats() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    let m = write_manifest(&src, "m.jsonl", &[clip_line(&src, "H_1", MC, &[])]);
    app.import(&m).await.unwrap();
    app.reject(&c.v0, 1, "H_1", "prompt_drift").await;
    app.reject(&c.v1, 1, "H_1", "prompt_drift").await;
    std::fs::write(src.join("videos/H_1.mp4"), fake_mp4("H_1 v2")).unwrap();
    app.import(&m).await.unwrap();
    app.pass(&c.v0, 1, "H_1").await;
    let campaign = campaign(&app).await;
    let mut csv = Vec::new();
    tandem::io::records::write_decisions(
        &mut csv,
        &app.store.decision_records(&campaign).await.unwrap(),
    )
    .unwrap();
    let text = String::from_utf8(csv).unwrap();
    assert!(
        text.contains(",1,true") && text.contains(",2,false"),
        "{text}"
    );
    let s = import_csv_decisions(&app, &text).await.unwrap();
    assert_eq!((s.recorded, s.repeated), (0, 3));
}

#[tokio::test]
async fn each_decision_says_what_its_time_measures_and_the_export_carries_it() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 4, &[]).await;
    // The browser with its script (visible time), without it (time since drawn), the API.
    let web = app.login("val00").await;
    for (id, form) in [
        (
            &ids[0],
            vec![
                ("verdict", "valid"),
                ("rendered_at", "0"),
                ("spent_ms", "4200"),
            ],
        ),
        (&ids[1], vec![("verdict", "valid"), ("rendered_at", "0")]),
    ] {
        let r = app
            .page(
                Some(&web),
                reqwest::Method::POST,
                &format!("/c/{CAMPAIGN}/review/1/{id}"),
                Some(&form),
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::SEE_OTHER, "{}", r.text);
    }
    let r = app
        .verdict(
            &c.v0,
            1,
            &ids[2],
            json!({"verdict": "valid", "time_spent_ms": 3000}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED);
    app.pass(&c.v0, 1, &ids[3]).await; // no time: no measure
    // A file says what its times measure; a wrong word is refused with line and field.
    let t = "2026-03-01T10:00:00Z";
    let err = import_csv_decisions(
        &app,
        &format!(
            "stage,item_id,validator,verdict,reasons,note,decided_at,time_spent_ms,time_measure\n1,{},val01,valid,,,{t},900,seconds\n",
            ids[0]
        ),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("line 2") && text.contains("time_measure"),
        "{text}"
    );
    import_csv_decisions(
        &app,
        &format!(
            "stage,item_id,validator,verdict,reasons,note,decided_at,time_spent_ms,time_measure\n1,{},val01,valid,,,{t},900,client\n",
            ids[0]
        ),
    )
    .await
    .unwrap();
    let records = app
        .store
        .decision_records(&campaign(&app).await)
        .await
        .unwrap();
    let measures: Vec<(String, Option<i64>, Option<String>)> = records
        .iter()
        .map(|r| (r.item_id.clone(), r.time_spent_ms, r.time_measure.clone()))
        .collect();
    assert_eq!(
        measures[0],
        (ids[0].clone(), Some(4200), Some("visible".into()))
    );
    assert_eq!(measures[1].2.as_deref(), Some("open"));
    assert_eq!(
        measures[2],
        (ids[2].clone(), Some(3000), Some("client".into()))
    );
    assert_eq!(measures[3], (ids[3].clone(), None, None));
    assert_eq!(
        measures[4],
        (ids[0].clone(), Some(900), Some("client".into()))
    );
    // The export names it in its last column, and importing the export adds nothing.
    let mut csv = Vec::new();
    tandem::io::records::write_decisions(&mut csv, &records).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",final,time_measure,protocol_version"),
        "{csv}"
    );
    assert!(csv.lines().nth(1).unwrap().ends_with(",visible,1"), "{csv}");
    let again = import_csv_decisions(&app, &csv).await.unwrap();
    assert_eq!(again.recorded, 0, "{again:?}");
}

/// A campaign's protocol changes only in ways its stored records keep their meaning
/// under: a cell with questions cannot go (refused, nothing changed); a renamed task and
/// a task added after the others are taken, the new one paired and importable; a
/// manifest checked against the protocol before a change that drops its cell is checked
/// again in its write and refused.
#[tokio::test]
async fn a_protocol_change_keeps_what_is_stored_and_adds_what_is_new() {
    let app = spawn_app().await;
    let protocol = app.campaign_on("glimpse").await;
    let glimpse = protocol.taxonomy;
    let c = cast(&app).await;
    let ids = app.import_clips(&["TRAJ"], 1, &["MC"]).await;

    let mut dropped = glimpse.clone();
    dropped
        .applicability
        .insert("TRAJ".into(), vec!["YN".into()]);
    let err = app
        .store
        .change_protocol(CAMPAIGN, &dropped)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err:?}");
    let err = err.to_string();
    assert!(
        err.contains(
            "task `TRAJ` no longer has QA type `MC`, but questions of that cell are stored"
        ),
        "{err}"
    );
    assert_eq!(
        *app.store.campaign(CAMPAIGN).await.unwrap().taxonomy,
        glimpse
    );

    let mut grown = glimpse.clone();
    grown.tasks[0].name = "Trajectories".into();
    grown.tasks.push(tandem::domain::taxonomy::TaskDef {
        code: "NEWCAT".into(),
        name: "A new category".into(),
        short: String::new(),
        attributes: vec![("domain".to_string(), "new".to_string())],
    });
    grown
        .applicability
        .insert("NEWCAT".into(), vec!["YN".into(), "MC".into()]);
    let after = app.store.change_protocol(CAMPAIGN, &grown).await.unwrap();
    assert_eq!(*after.taxonomy, grown);
    let tasks = app.store.tasks(&after).await.unwrap();
    assert_eq!(tasks[0].name, "Trajectories");
    let new = tasks.iter().find(|t| t.code == "NEWCAT").unwrap();
    assert_eq!(new.position, 11);
    assert_eq!(new.attributes["domain"], "new");
    // GLIMPSE pairs per clip: the new task has no pair of its own, and its first clip's
    // question goes to a pair of the pool at import.
    assert!(new.rater1.is_none() && new.rater2.is_none(), "{new:?}");
    assert!(
        new.pair_problem
            .as_deref()
            .is_some_and(|p| p.contains("least open work")),
        "{new:?}"
    );
    let src = app.source();
    let m = write_manifest(
        &src,
        "new.jsonl",
        &[clip_line(&src, "N1", "NEWCAT", &["MC"])],
    );
    app.import(&m).await.unwrap();
    let paired: (Option<i64>, Option<i64>) =
        sqlx::query_as("SELECT rater1_id, queue1 FROM items WHERE item_key = 'N1_MC'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(paired.0.is_some() && paired.0 == paired.1, "{paired:?}");
    // The question imported before the change is reviewed as before.
    let r = app
        .verdict(
            &c.v0,
            2,
            &format!("{}_MC", ids[0]),
            json!({"verdict": "valid"}),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{:?}", r.body);

    // A cell that stored questions use cannot go, whichever task it is.
    let mut shrunk = grown.clone();
    shrunk
        .applicability
        .insert("NEWCAT".into(), vec!["YN".into()]);
    let err = app
        .store
        .change_protocol(CAMPAIGN, &shrunk)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("task `NEWCAT` no longer has QA type `MC`"),
        "{err}"
    );
    // A manifest checked against the protocol before a change that drops its cell (one
    // nobody uses yet: TEMP's MC), written after it: checked again in its write, refused.
    let mut other = grown.clone();
    other.applicability.insert("TEMP".into(), vec!["YN".into()]);
    app.store.change_protocol(CAMPAIGN, &other).await.unwrap();
    let late_temp = write_manifest(
        &src,
        "late2.jsonl",
        &[clip_line(&src, "T1", "TEMP", &["MC"])],
    );
    let checked_temp = tandem::io::manifest::check_manifest(
        &late_temp,
        &grown,
        &tandem::config::Limits::default(),
    )
    .unwrap();
    let err = app
        .store
        .import_manifest(CAMPAIGN, &checked_temp)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("questions[0].qa_type")
            && err.contains("it changed since the manifest was checked"),
        "{err}"
    );
}

/// Each decision records the version of its campaign's protocol it was checked under. A
/// server whose copy of the campaign predates a change made through another (a copy
/// lives up to a second) checks a verdict by the version in force, which the verdict's
/// own write reads: a reason the change added is taken at once, and recorded with the
/// new version.
#[tokio::test]
async fn a_decision_records_the_protocol_version_it_was_checked_under() {
    use tandem::domain::Stage;
    use tandem::domain::taxonomy::ReasonDef;
    let app = spawn_app().await;
    let protocol = app.campaign_on("tumtraffic").await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["VQA"], 1, &["POS"]).await;
    // Version 1: TUMTraffic's clip reasons, not VGenST's.
    let r = app.reject(&c.v0, 1, &ids[0], "generation_artifact").await;
    assert_eq!(
        r.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{:?}",
        r.body
    );
    let r = app.reject(&c.v0, 1, &ids[0], "wrong_metadata").await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{:?}", r.body);

    // This server holds a copy of the campaign; another one adds a clip reason.
    assert_eq!(
        app.store.campaign(CAMPAIGN).await.unwrap().protocol_version,
        1
    );
    let other = tandem::Store::open(&app.config.database_url).await.unwrap();
    let mut v2 = protocol.taxonomy.clone();
    v2.reasons.insert(
        2,
        ReasonDef {
            stage: Stage::Clip,
            code: "watermark".into(),
            label: "A watermark is visible".into(),
            key: 4,
            levels: vec![],
            note: false,
        },
    );
    let after = other.change_protocol(CAMPAIGN, &v2).await.unwrap();
    assert_eq!(after.protocol_version, 2);
    // The same protocol again is no change and no new version.
    let same = other.change_protocol(CAMPAIGN, &v2).await.unwrap();
    assert_eq!(same.protocol_version, 2);
    // This server's copy is still version 1, yet its next verdict is checked by
    // version 2 and says so.
    let copy = app.store.campaign(CAMPAIGN).await.unwrap();
    assert!(copy.taxonomy.reason(Stage::Clip, "watermark").is_none());
    let r = app.reject(&c.v1, 1, &ids[0], "watermark").await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{:?}", r.body);

    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let records = app.store.decision_records(&campaign).await.unwrap();
    let versions: Vec<(String, i64)> = records
        .iter()
        .map(|d| (d.reasons.clone(), d.protocol_version))
        .collect();
    assert_eq!(
        versions,
        [
            ("wrong_metadata".to_string(), 1),
            ("watermark".to_string(), 2)
        ]
    );
    // Every version is kept, with its taxonomy.
    assert_eq!(
        app.count("SELECT COUNT(*) FROM campaign_protocols").await,
        2
    );
    // The API gives the protocol in force, with its version (this server's copy of the
    // campaign is a second old at most: its clock is moved a second on).
    app.store.clock().advance(std::time::Duration::from_secs(1));
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/protocol"), &c.v0)
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.body["version"], 2, "{:?}", r.body);
    assert_eq!(r.body["levels"], json!(["L1", "L2", "L3"]), "{:?}", r.body);
    assert_eq!(r.body["pairing"], "task_pairs", "{:?}", r.body);
    let clip_reasons: Vec<&str> = r.body["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["stage"] == 1)
        .map(|x| x["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        clip_reasons,
        ["wrong_metadata", "poor_video", "watermark", "other"]
    );
}

/// A protocol with its own levels: its QA types carry them, a reason bound to one is
/// refused on a question of another (in the protocol's words), and the API names them.
#[tokio::test]
async fn a_protocol_with_its_own_levels_reviews_by_them() {
    let app = spawn_app().await;
    let text = tandem::domain::protocol::shipped("glimpse")
        .unwrap()
        .replacen(
            "clip_review = false\n",
            "clip_review = false\nlevels = [\"perception\", \"reasoning\"]\n",
            1,
        )
        .replacen("level = \"L3\"", "level = \"reasoning\"", 1)
        .replacen("level = \"L3\"", "level = \"perception\"", 1)
        .replacen("paired = true ", "", 1)
        .replacen(
            "code = \"single_frame_solvable\"\nlabel = \"Answerable from a single frame\"\nkey = 3\n",
            "code = \"single_frame_solvable\"\nlabel = \"Answerable from a single frame\"\nkey = 3\nlevels = [\"reasoning\"]\n",
            1,
        );
    let protocol = tandem::domain::protocol::parse(&text).unwrap();
    app.store
        .create_campaign(CAMPAIGN, &protocol)
        .await
        .unwrap();
    let c = cast(&app).await;
    app.import_clips(&["TRAJ"], 1, &["MC", "YN"]).await;
    let stored: Vec<(String, String)> =
        sqlx::query_as("SELECT question_key, level FROM questions ORDER BY question_key")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(
        stored,
        [
            ("TRAJ_0000_MC".to_string(), "reasoning".to_string()),
            ("TRAJ_0000_YN".to_string(), "perception".to_string())
        ]
    );
    let r = app
        .reject(&c.v0, 2, "TRAJ_0000_YN", "single_frame_solvable")
        .await;
    assert_eq!(
        r.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("`single_frame_solvable` applies only to reasoning questions; this question is perception"),
        "{}",
        r.text
    );
    let r = app
        .reject(&c.v0, 2, "TRAJ_0000_MC", "single_frame_solvable")
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/protocol"), &c.v0)
        .await;
    assert_eq!(
        r.body["levels"],
        json!(["perception", "reasoning"]),
        "{:?}",
        r.body
    );
    let reason = r.body["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "single_frame_solvable")
        .cloned()
        .unwrap();
    assert_eq!(reason["levels"], json!(["reasoning"]), "{reason}");
}

/// A protocol without clip review opens question review at once: no Stage 1 item, the
/// questions in the task pair's queues as they are imported, the intersection rule and
/// the author's resolution as in any Stage 2, every clip standing in the retained
/// export with its retained questions; a clip keeps its video, and the campaign keeps
/// its stages once it has clips.
#[tokio::test]
async fn a_protocol_without_clip_review_opens_question_review_at_once() {
    let app = spawn_app().await;
    // GLIMPSE's protocol, as its paper ran it: real videos, so no clip review.
    let protocol = app.campaign_on("glimpse").await;
    assert!(!protocol.taxonomy.clip_review);
    let c = cast(&app).await;
    let ids = app.import_clips(&["TRAJ"], 2, &["MC"]).await;
    let (keep, drop) = (format!("{}_MC", ids[0]), format!("{}_MC", ids[1]));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE stage = 1")
            .await,
        0
    );

    // Nothing to review in Stage 1; both questions are in each validator's Stage 2 queue.
    let q1 = app.queue(&c.v0, 1).await;
    assert_eq!(q1["total"].as_i64(), Some(0), "{q1}");
    for token in [&c.v0, &c.v1] {
        let q2 = app.queue(token, 2).await;
        assert_eq!(q2["total"].as_i64(), Some(2), "{q2}");
        assert_eq!(q2["next"], json!(keep), "{q2}");
    }
    let r = app.pass(&c.v0, 1, &ids[0]).await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND, "{}", r.text);

    // The intersection rule, and the author for a split.
    assert_eq!(
        app.pass(&c.v0, 2, &keep).await.status,
        reqwest::StatusCode::CREATED
    );
    assert_eq!(
        app.pass(&c.v1, 2, &keep).await.status,
        reqwest::StatusCode::CREATED
    );
    assert_eq!(app.outcome(2, &keep).await, "both_pass");
    assert_eq!(
        app.pass(&c.v0, 2, &drop).await.status,
        reqwest::StatusCode::CREATED
    );
    let r = app.reject(&c.v1, 2, &drop, "not_answerable").await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
    assert_eq!(app.outcome(2, &drop).await, "split");
    let r = app
        .resolve(
            &c.author,
            2,
            &drop,
            "reject",
            "the answer is not in the video",
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
    assert_eq!(app.outcome(2, &drop).await, "split_rejected");

    // Every clip stands; its retained questions make the benchmark.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let (clips, counts) = app.store.retained(&campaign).await.unwrap();
    let kept: Vec<(&str, Vec<&str>)> = clips
        .iter()
        .map(|c| {
            (
                c.clip_id.as_str(),
                c.questions.iter().map(|q| q.question_id.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        kept,
        [
            (ids[0].as_str(), vec![keep.as_str()]),
            (ids[1].as_str(), vec![])
        ]
    );
    assert_eq!(
        (
            counts.clips,
            counts.clips_retained,
            counts.clips_rejected,
            counts.clips_open
        ),
        (2, 2, 0, 0)
    );
    assert_eq!(
        (
            counts.questions,
            counts.questions_retained,
            counts.questions_rejected
        ),
        (2, 1, 1)
    );
    // The tables: Stage 2 as reviewed, Stage 1 empty.
    let report = tandem::app::qc_report(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    assert_eq!(report.stage1.items_reviewed, 0);
    assert_eq!(
        (
            report.stage2.items_reviewed,
            report.stage2.both_pass,
            report.stage2.split_rejected
        ),
        (2, 1, 1)
    );
    // No Stage 1 anywhere the tables are shown: the API's JSON, the statistics page, a
    // Table 11 download (refused with why) and the paper bundle.
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), &c.admin)
        .await;
    assert_eq!(r.body["t11"], json!({}), "{:?}", r.body);
    assert!(r.body["t13"].get("stage1").is_none(), "{:?}", r.body["t13"]);
    assert_eq!(r.body["t13"]["stage2"]["items_reviewed"], 2);
    let web = app.login("admin1").await;
    let page = app
        .page(Some(&web), reqwest::Method::GET, "/c/default/stats", None)
        .await;
    assert_eq!(page.status, reqwest::StatusCode::OK);
    // A protocol that names no tables gets headings without VGenST-Bench's numbers.
    assert!(
        page.text.contains("<h2>Inter-annotator agreement</h2>"),
        "{}",
        page.text
    );
    for absent in [
        "Table 11: Stage 1",
        "Stage 1, clips retained",
        "Video QC",
        "fig-t13-kappa-stage1",
        "fig-reasons-stage1",
    ] {
        assert!(!page.text.contains(absent), "{absent} on the page");
    }
    assert!(page.text.contains("QA QC (Stage 2)"));
    // The groups (VGenST-Bench's Table 16) are headed the same way on the participants'
    // and the baseline's pages.
    for (path, heading) in [
        ("/c/default/admin/participants", "<h2>The groups</h2>"),
        ("/c/default/baseline/results", "<h2>The annotator pool</h2>"),
    ] {
        let page = app.page(Some(&web), reqwest::Method::GET, path, None).await;
        assert_eq!(page.status, reqwest::StatusCode::OK, "{path}");
        assert!(page.text.contains(heading), "{path}: {}", page.text);
        assert!(!page.text.contains("Table 16"), "{path}: {}", page.text);
    }
    let t11 = app
        .page(
            Some(&web),
            reqwest::Method::GET,
            "/c/default/stats/t11.csv",
            None,
        )
        .await;
    assert!(t11.status.is_client_error(), "{}", t11.status);
    assert!(t11.text.contains("reviews no clips"), "{}", t11.text);
    let bundle = tandem::app::paper_bundle(&app.store, &campaign, 0)
        .await
        .unwrap();
    let names: Vec<&str> = bundle.iter().map(|f| f.path.as_str()).collect();
    assert!(names.contains(&"tables/t13.tex"), "{names:?}");
    // A protocol that names no tables gets no paper's table numbers in any file.
    for f in &bundle {
        let text = String::from_utf8_lossy(&f.bytes);
        for n in 11..=16 {
            assert!(!text.contains(&format!("Table {n}")), "{}: {text}", f.path);
        }
    }
    assert!(
        !names
            .iter()
            .any(|n| n.contains("t11") || n.contains("stage1")),
        "{names:?}"
    );

    // A clip keeps its video: a new one is refused, naming the line and field.
    let src = app.source();
    let mut line = clip_line(&src, &ids[0], "TRAJ", &["MC"]);
    std::fs::write(src.join("videos/new.mp4"), fake_mp4("another video")).unwrap();
    line["file"] = json!("videos/new.mp4");
    let m = write_manifest(&src, "again.jsonl", &[line]);
    let err = app.import(&m).await.unwrap_err().to_string();
    assert!(err.contains("line 1") && err.contains("file"), "{err}");
    assert!(err.contains("reviews no clips"), "{err}");

    // The campaign keeps its stages now that it has clips.
    let mut with = protocol.taxonomy.clone();
    with.clip_review = true;
    let err = app
        .store
        .change_protocol(CAMPAIGN, &with)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("clip review is turned on"), "{err}");

    // The pages start at Stage 2 and link no Stage 1.
    for (who, start) in [("val00", "review/2"), ("author1", "splits/2")] {
        let web = app.login(who).await;
        let r = app.page(Some(&web), reqwest::Method::GET, "/", None).await;
        assert_eq!(
            r.location().as_deref(),
            Some(format!("/c/{CAMPAIGN}/{start}").as_str())
        );
        let page = app
            .page(
                Some(&web),
                reqwest::Method::GET,
                &format!("/c/{CAMPAIGN}/{start}"),
                None,
            )
            .await;
        assert_eq!(page.status, reqwest::StatusCode::OK);
        assert!(
            !page.text.contains("/review/1\"") && !page.text.contains("/splits/1\""),
            "{}",
            page.text
        );
        assert!(!page.text.contains("Stage 1"), "{}", page.text);
    }
    let web = app.login("admin1").await;
    let overview = app
        .page(
            Some(&web),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/admin"),
            None,
        )
        .await;
    assert!(
        overview.text.contains("The protocol reviews no clips")
            && !overview.text.contains("Stage 1")
            && overview
                .text
                .contains(&format!("href=\"/c/{CAMPAIGN}/splits/2\">Splits<")),
        "{}",
        overview.text
    );
}

/// Without clip review a calibration clip is one whose questions carry known verdicts
/// (each of them); a known verdict on the clip itself is refused, as is a calibration
/// clip with a question lacking one; nothing of a refused manifest is written.
#[tokio::test]
async fn without_clip_review_a_calibration_clip_is_known_by_its_questions() {
    let app = spawn_app().await;
    assert!(!app.campaign_on("glimpse").await.taxonomy.clip_review);
    let src = app.source();
    let mut on_clip = clip_line(&src, "CAL_A", "TRAJ", &["MC"]);
    on_clip["calibration"] = json!({"verdict": "valid"});
    let mut partial = clip_line(&src, "CAL_B", "TEMP", &["MC", "MC2"]);
    partial["questions"][1]["question_id"] = json!("CAL_B_MC2");
    partial["questions"][1]["qa_type"] = json!("MC");
    partial["questions"][0]["calibration"] = json!({"verdict": "valid"});
    let m = write_manifest(&src, "bad.jsonl", &[on_clip, partial]);
    let err = app.import(&m).await.unwrap_err().to_string();
    assert!(err.contains("line 1, field `calibration`"), "{err}");
    assert!(
        err.contains("line 2, field `questions[1].calibration`"),
        "{err}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM clips").await, 0);

    let mut cal = clip_line(&src, "CAL_C", "TRAJ", &["MC"]);
    cal["questions"][0]["calibration"] =
        json!({"verdict": "reject", "reasons": ["not_answerable"]});
    let m = write_manifest(&src, "cal.jsonl", &[cal]);
    app.import(&m).await.unwrap();
    assert_eq!(
        app.count(
            "SELECT COUNT(*) FROM items WHERE calibration = 1 AND stage = 2 AND queue1 IS NULL"
        )
        .await,
        1
    );
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE stage = 1")
            .await,
        0
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM calibration_keys").await, 1);
}

/// A protocol's declared clip fields: a required one missing refuses the line by name;
/// given, the review and split pages show each declared field under its label, and
/// nothing the protocol does not declare (nor the generator, to a validator).
#[tokio::test]
async fn the_clip_fields_a_protocol_declares_are_checked_at_import_and_shown_to_reviewers() {
    let app = spawn_app().await;
    let text = tandem::domain::protocol::shipped("tumtraffic")
        .unwrap()
        .replacen("required = false", "required = true", 1);
    let protocol = tandem::domain::protocol::parse(&text).unwrap();
    assert!(protocol.taxonomy.fields[0].required);
    app.store
        .create_campaign(CAMPAIGN, &protocol)
        .await
        .unwrap();
    cast(&app).await;
    let src = app.source();
    let mut line = clip_line(&src, "VQA_0001", "VQA", &["POS"]);
    refused(
        &app,
        "no camera",
        &[line.clone()],
        1,
        Some("camera"),
        "missing `camera` (Camera), which the protocol requires",
    )
    .await;
    line["camera"] = json!(["s110"]);
    refused(
        &app,
        "a list",
        &[line.clone()],
        1,
        Some("camera"),
        "must be a string, a number or true/false",
    )
    .await;
    line["camera"] = json!("s110_camera_basler_south1");
    line["weather"] = json!("rain");
    line["secret"] = json!("not for reviewers");
    app.import(&write_manifest(&src, "m.jsonl", &[line]))
        .await
        .unwrap();
    let val = app.login("val00").await;
    let page = app
        .page(
            Some(&val),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/VQA_0001"),
            None,
        )
        .await;
    assert_eq!(page.status, reqwest::StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains(
            "<dl class=\"details\" id=\"clip-fields\"><div><dt>Camera</dt><dd>s110_camera_basler_south1</dd></div><div><dt>Weather</dt><dd>rain</dd></div></dl>"
        ),
        "{}",
        page.text
    );
    for hidden in ["not for reviewers", "test/generator", "Time of day"] {
        assert!(!page.text.contains(hidden), "{hidden}: {}", page.text);
    }
}
