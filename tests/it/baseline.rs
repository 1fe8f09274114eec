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
    // Table 16, the annotator pool: val00 and val01, b1 and b2 who answered; part1,
    // who never answered the study, beside the table; author1 apart.
    assert_eq!(
        json["t16"],
        serde_json::json!({"quality_control": 2, "study": 0, "baseline": 2, "total": 4, "authors": 1, "disjoint": true,
                           "study_invited": 1, "baseline_invited": 0})
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
        "group,n,task\nQuality control,2,Two-stage video and QA review (intersection rule)\nVideo quality study,0,Ordinal ranking and real-vs-fake judgment\nHuman baseline,2,Base MCQs under circular evaluation\nTotal,4,All groups mutually disjoint"
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

// ---- The baseline taken in the browser, through invitation links ----------------------

/// What must never reach a participant: the generator named in a clip's metadata.
pub const GENERATOR: &str = "SECRET-GENERATOR-9";

/// A clip ffmpeg can read, its id and a generator's name in its metadata.
fn tagged_clip(dir: &Path, id: &str) -> String {
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    let file = format!("videos/{id}.webm");
    let status = std::process::Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc=s=96x64:r=8:d=1",
        ])
        .arg("-metadata")
        .arg(format!("title={id}"))
        .arg("-metadata")
        .arg(format!("comment=made by {GENERATOR}"))
        .args(["-c:v", "libvpx-vp9", "-b:v", "100k"])
        .arg(dir.join(&file))
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg made no {file}");
    let bytes = std::fs::read(dir.join(&file)).unwrap();
    assert!(
        contains(&bytes, GENERATOR.as_bytes()),
        "the tag is in the file"
    );
    file
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Two tasks of three real clips, an OE and a CR question each (key: option C, texts
/// that name no id), every clip and question kept by both validators. Returns the clip
/// ids.
pub async fn campaign_with_real_clips(app: &TestApp) -> Vec<String> {
    let c = cast(app).await;
    let src = app.source();
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    for (t, task) in [MC, "QC_F_EGO_DYN"].iter().enumerate() {
        for i in 0..3 {
            let id = format!("{task}_{i:04}");
            let file = tagged_clip(&src, &id);
            let questions: Vec<Value> = ["OE", "CR"]
                .iter()
                .enumerate()
                .map(|(k, qa)| {
                    serde_json::json!({
                        "question_id": format!("{id}_{qa}"), "qa_type": qa,
                        "question": format!("Which thing is in clip number {}?", t * 6 + i * 2 + k + 1),
                        "options": ["a brass key", "a red candle", "a glass orb", "a feather quill"],
                        "answer": KEY
                    })
                })
                .collect();
            lines.push(serde_json::json!({
                "clip_id": id, "task": task, "file": file, "generator": GENERATOR,
                "theme": "an altar", "scene_graph": {}, "scenario": {}, "questions": questions
            }));
            ids.push(id);
        }
    }
    let m = write_manifest(&src, "real.jsonl", &lines);
    app.import(&m).await.unwrap();
    for id in &ids {
        for v in [&c.v0, &c.v1] {
            app.pass(v, 1, id).await;
        }
    }
    for id in &ids {
        for qa in ["OE", "CR"] {
            for v in [&c.v0, &c.v1] {
                app.pass(v, 2, &format!("{id}_{qa}")).await;
            }
        }
    }
    ids
}

/// The admin sets the baseline up (2 videos per task, seed 7), writes a consent text,
/// keeps external ids, and makes `n` links; returns the baseline's number and the links'
/// paths.
pub async fn baseline_with_links(app: &TestApp, admin: &str, n: usize) -> (i64, Vec<String>) {
    let r = app
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/baseline"),
            Some(admin),
            Some(serde_json::json!({"per_task": 2, "seed": 7})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    assert_eq!(
        (&r.body["questions"], &r.body["clips"], &r.body["tasks"]),
        (
            &serde_json::json!(12),
            &serde_json::json!(6),
            &serde_json::json!(2)
        )
    );
    assert_eq!(r.body["metadata_removed"], true);
    let r = app
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/parts/baseline"),
            Some(admin),
            Some(serde_json::json!({
                "consent": "We study how people answer questions about videos.\r\n\r\nYou may stop at any time.",
                "keep_external_id": true
            })),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/invitations"),
            Some(admin),
            Some(serde_json::json!({"part": "baseline", "count": n})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
    let links: Vec<String> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap().to_string())
        .collect();
    let b = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/baseline"), admin)
        .await;
    (b.body["baseline"].as_i64().unwrap(), links)
}

/// A browser that came by a link: its session cookie, from the 303 to the clean URL.
pub(crate) async fn join(app: &TestApp, link: &str) -> (Web, String) {
    let r = app.page(None, reqwest::Method::GET, link, None).await;
    assert_eq!(r.status, reqwest::StatusCode::SEE_OTHER, "{}", r.text);
    let to = r.location().unwrap();
    let token = link.trim_start_matches("/join/").split('?').next().unwrap();
    assert!(!to.contains(token), "the clean URL holds no token: {to}");
    assert_eq!(r.headers.get("referrer-policy").unwrap(), "no-referrer");
    let cookie = r
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_session="))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let mut web = Web {
        cookie,
        csrf: String::new(),
        flash: Default::default(),
    };
    let page = app.page(Some(&web), reqwest::Method::GET, &to, None).await;
    assert_eq!(page.status, reqwest::StatusCode::OK, "{}", page.text);
    web.csrf = csrf_of(&page.text).unwrap();
    (web, to)
}

/// The clip URL a question page shows.
pub(crate) fn video_of(html: &str) -> String {
    let at = html.find("src=\"/baseline/m/").expect("a clip") + 5;
    html[at..].split('"').next().unwrap().to_string()
}

#[tokio::test]
async fn a_participant_takes_the_baseline_by_link_and_sees_nothing_that_would_tell() {
    if !has_ffmpeg() {
        return;
    }
    let app = spawn_app().await;
    let ids = campaign_with_real_clips(&app).await;
    let admin = app.store.create_token("admin1", "t").await.unwrap();
    let (id, links) = baseline_with_links(&app, &admin, 3).await;

    // Participant 1 comes by link, carrying a recruitment platform's id.
    let (web, start) = join(&app, &format!("{}?pid=PLATFORM-4711", links[0])).await;
    assert_eq!(start, format!("/baseline/{id}"));
    let page = app
        .page(Some(&web), reqwest::Method::GET, &start, None)
        .await;
    assert!(
        page.text
            .contains("We study how people answer questions about videos.")
    );
    assert!(page.text.contains("I agree: begin"));
    let r = app
        .page(
            Some(&web),
            reqwest::Method::POST,
            &format!("{start}/begin"),
            Some(&[]),
        )
        .await;
    assert_eq!(
        r.location().as_deref(),
        Some(format!("/baseline/{id}/1").as_str())
    );

    // Their presentations, as stored: every question of 2 videos of each task, each in
    // its 4 rotations, never two rotations of one question in a row.
    let slots: Vec<(i64, String, i64, String, String)> = sqlx::query_as(
        "SELECT s.seq, s.question_key, s.presentation, s.shown, s.token FROM baseline_slots s
         JOIN users u ON u.id = s.participant_id WHERE u.name = 'baseline-001' ORDER BY s.seq",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(slots.len(), 2 * 2 * 2 * 4);
    assert!(slots.windows(2).all(|w| w[0].1 != w[1].1));
    let clips: std::collections::HashSet<&str> = slots
        .iter()
        .map(|s| s.1.rsplit_once('_').unwrap().0)
        .collect();
    assert_eq!(clips.len(), 4);

    // Nothing a participant receives names a clip, a question, the campaign, the
    // generator, a stored file, another participant or another presentation's clip.
    let hashes: Vec<String> = sqlx::query_scalar("SELECT media_sha256 FROM clip_versions")
        .fetch_all(&app.db)
        .await
        .unwrap();
    let served: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT media_sha256 FROM baseline_questions")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let mut forbidden: Vec<String> = ids.clone();
    forbidden.extend([
        "baseline-002".into(),
        "baseline-003".into(),
        GENERATOR.into(),
    ]);
    forbidden.extend(hashes);
    forbidden.extend(served);
    forbidden.push("videos/".into());
    forbidden.push(format!("c/{CAMPAIGN}"));
    let check = |what: &str, body: &[u8], own_token: Option<&str>| {
        for f in &forbidden {
            assert!(!contains(body, f.as_bytes()), "{what} holds `{f}`");
        }
        for s in &slots {
            if Some(s.4.as_str()) != own_token {
                assert!(
                    !contains(body, s.4.as_bytes()),
                    "{what} holds another presentation's clip"
                );
            }
        }
    };
    check("the start page", page.text.as_bytes(), None);

    // Answers by the pages: the key's shown position, but presentation 0 of the first
    // question wrong (position A, which is not the key's there).
    let mut seq = 1;
    let mut wrong = None;
    loop {
        let p = app
            .page(
                Some(&web),
                reqwest::Method::GET,
                &format!("/baseline/{id}/{seq}"),
                None,
            )
            .await;
        assert_eq!(p.status, reqwest::StatusCode::OK, "{}", p.text);
        let slot = &slots[seq as usize - 1];
        check(&format!("question {seq}"), p.text.as_bytes(), Some(&slot.4));
        assert!(!p.text.contains("data-key") && !p.text.contains("correct"));
        let video = video_of(&p.text);
        assert_eq!(video, format!("/baseline/m/{}", slot.4));
        let clip = app
            .page(Some(&web), reqwest::Method::GET, &video, None)
            .await;
        assert_eq!(clip.status, reqwest::StatusCode::OK);
        assert!(clip.headers.get("etag").is_none() && clip.headers.get("last-modified").is_none());
        let bytes = reqwest::Client::new()
            .get(format!("{}{video}", app.base))
            .header("Cookie", web.cookies())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        check(&format!("clip {seq}"), &bytes, Some(&slot.4));
        assert!(!contains(&bytes, b"title"), "the clip keeps no title tag");
        // The options in the order shown.
        let shown: Vec<usize> = slot.3.bytes().map(|b| usize::from(b - b'A')).collect();
        let at = shown.iter().position(|&o| o == KEY).unwrap();
        let chosen = if wrong.is_none() && slot.2 == 0 {
            wrong = Some(slot.1.clone());
            (at + 1) % 4
        } else {
            at
        };
        let letter = char::from(b'A' + chosen as u8).to_string();
        let r = app
            .page(
                Some(&web),
                reqwest::Method::POST,
                &format!("/baseline/{id}/{seq}"),
                Some(&[("chosen", letter.as_str())]),
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::SEE_OTHER, "{}", r.text);
        // Final: another answer is refused and says so.
        let again = app
            .page(
                Some(&web),
                reqwest::Method::POST,
                &format!("/baseline/{id}/{seq}"),
                Some(&[("chosen", if letter == "A" { "B" } else { "A" })]),
            )
            .await;
        assert_eq!(again.status, reqwest::StatusCode::UNPROCESSABLE_ENTITY);
        assert!(again.text.contains("answers are final"), "{}", again.text);
        match r.location().unwrap().rsplit_once('/') {
            Some((_, n)) if n != id.to_string() => seq = n.parse().unwrap(),
            _ => break,
        }
    }
    assert_eq!(seq as usize, slots.len());
    let end = app
        .page(Some(&web), reqwest::Method::GET, &start, None)
        .await;
    let code: String = sqlx::query_scalar(
        "SELECT i.completion_code FROM invitations i JOIN users u ON u.id = i.participant_id
         WHERE u.name = 'baseline-001'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert!(
        end.text
            .contains(&format!("<output id=\"completion-code\">{code}</output>")),
        "{}",
        end.text
    );
    check("the last page", end.text.as_bytes(), None);

    // The answers count: vanilla misses one question of the 8, circular the same one.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let report = tandem::app::baseline::report(
        &app.store,
        &campaign,
        tandem::stats::circular::IntervalMethod::Wilson,
    )
    .await
    .unwrap()
    .unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["overall"]["vanilla"]["correct"], 7, "{json}");
    assert_eq!(json["overall"]["vanilla"]["n"], 8);
    assert_eq!(json["overall"]["circular"]["correct"], 7);
    // The external id is kept (the setting is on) but never exported.
    let ext: Option<String> = sqlx::query_scalar(
        "SELECT i.external_id FROM invitations i JOIN users u ON u.id = i.participant_id
         WHERE u.name = 'baseline-001'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(ext.as_deref(), Some("PLATFORM-4711"));
    let export = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/baseline-answers"),
            &admin,
        )
        .await;
    assert!(export.text.contains("baseline-001,") && !export.text.contains("PLATFORM"));

    // Participant 2 through the API: a token for the link, the same rules.
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/v1/join",
            None,
            Some(serde_json::json!({"token": links[1].trim_start_matches("/join/")})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    assert_eq!(
        (r.body["part"].as_str(), r.body["baseline"].as_i64()),
        (Some("baseline"), Some(id))
    );
    let t2 = r.body["token"].as_str().unwrap().to_string();
    let list = app.get("/api/v1/baselines", &t2).await;
    assert_eq!(list.body["baselines"][0]["progress"]["begun"], false);
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/baselines/{id}/begin"),
            Some(&t2),
            None,
        )
        .await;
    assert_eq!(r.body["total"], 32, "{}", r.text);
    let q = app
        .get(&format!("/api/v1/baselines/{id}/questions/1"), &t2)
        .await;
    let mut keys: Vec<&str> = q
        .body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["chosen", "options", "progress", "question", "seq", "video"],
        "{}",
        q.text
    );
    check("a question by the API", q.text.as_bytes(), None);
    // The second participant's place gives other videos where it can (3 per task, 2 each).
    let theirs: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT s.question_key FROM baseline_slots s JOIN users u ON u.id = s.participant_id
         WHERE u.name = 'baseline-002'",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    let first: std::collections::HashSet<&str> = slots.iter().map(|s| s.1.as_str()).collect();
    assert!(theirs.iter().any(|q| !first.contains(q.as_str())));
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/baselines/{id}/questions/1"),
            Some(&t2),
            Some(serde_json::json!({"chosen": "B"})),
        )
        .await;
    assert_eq!(
        (r.status, &r.body["progress"]["answered"]),
        (reqwest::StatusCode::OK, &serde_json::json!(1))
    );

    // One link's work is not another's: participant 1's clip is not participant 2's.
    let not_theirs = app.get(&format!("/baseline/m/{}", slots[0].4), &t2).await;
    assert_eq!(not_theirs.status, reqwest::StatusCode::NOT_FOUND);

    // A link used again ends its earlier session: one browser at a time.
    let (web_again, _) = join(&app, &links[0]).await;
    let old = app
        .page(Some(&web), reqwest::Method::GET, &start, None)
        .await;
    assert!(
        old.location().is_some_and(|l| l.starts_with("/login")),
        "{}",
        old.status
    );
    let new = app
        .page(Some(&web_again), reqwest::Method::GET, &start, None)
        .await;
    assert_eq!(new.status, reqwest::StatusCode::OK);

    // Revoked, a link opens nothing and its token no longer works.
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/invitations/baseline-002/revoke"),
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.body["revoked"], true, "{}", r.text);
    let r = app.page(None, reqwest::Method::GET, &links[1], None).await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND);
    assert_eq!(
        app.get("/api/v1/baselines", &t2).await.status,
        reqwest::StatusCode::UNAUTHORIZED
    );
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/v1/join",
            None,
            Some(serde_json::json!({"token": links[1].trim_start_matches("/join/")})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND);
    // A token that is not a link's opens nothing either.
    let r = app
        .page(
            None,
            reqwest::Method::GET,
            "/join/00112233445566778899aabbccddeeff0011223344556677",
            None,
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND);
    // A baseline participant is not a study participant, nor staff.
    let r = app
        .page(
            Some(&web_again),
            reqwest::Method::GET,
            "/api/v1/campaigns",
            None,
        )
        .await;
    assert_ne!(r.status, reqwest::StatusCode::OK);
    let links_now = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/invitations"), &admin)
        .await;
    assert_eq!(links_now.body.as_array().unwrap().len(), 3);
    assert!(
        !links_now
            .text
            .contains(links[0].trim_start_matches("/join/"))
    );
    // Table 16 counts who answered, as Table 7 does; the links revoked or never used
    // are said beside it.
    let stats = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), &admin)
        .await;
    let answered = app
        .count("SELECT COUNT(DISTINCT participant_id) FROM baseline_answers")
        .await;
    let members = app
        .count("SELECT COUNT(*) FROM campaign_members WHERE role = 'baseline'")
        .await;
    assert!(answered >= 1 && members == 3, "{answered} {members}");
    let t16 = &stats.body["t16"];
    assert_eq!(t16["baseline"], answered, "{}", stats.text);
    assert_eq!(
        t16["baseline_invited"],
        members - answered,
        "{}",
        stats.text
    );
    assert_eq!(
        stats.body["baseline"]["participants"], answered,
        "Table 7 agrees"
    );
}

#[tokio::test]
async fn a_study_link_opens_the_study_only_and_ends_with_its_completion_code() {
    if !has_ffmpeg() {
        return;
    }
    let app = spawn_app().await;
    let c = cast(&app).await;
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 1))
        .await
        .unwrap();
    let r = app
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/parts/study"),
            Some(&c.admin),
            Some(serde_json::json!({"consent": "Rank the clips as you see them."})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/invitations"),
            Some(&c.admin),
            Some(serde_json::json!({"part": "study", "count": 1})),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
    let link = r.body[0]["path"].as_str().unwrap().to_string();
    assert_eq!(r.body[0]["participant"], "study-001");

    // By the API: the link's token for an API token; the one set answered.
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/v1/join",
            None,
            Some(serde_json::json!({"token": link.trim_start_matches("/join/"), "external_id": "P-9"})),
        )
        .await;
    assert_eq!(
        (
            r.body["part"].as_str(),
            r.body["study"].as_i64(),
            r.body["baseline"].as_i64()
        ),
        (Some("study"), Some(1), None),
        "{}",
        r.text
    );
    let token = r.body["token"].as_str().unwrap().to_string();
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/v1/studies/1/sets/1",
            Some(&token),
            Some(serde_json::json!({
                "photorealism": {"A": 1, "B": 2, "C": 3, "D": 4},
                "temporal_coherence": {"A": 1, "B": 2, "C": 3, "D": 4},
                "comprehensibility": {"A": 1, "B": 2, "C": 3, "D": 4},
                "real_fake": {"A": "real", "B": "fake", "C": "real", "D": "real"},
            })),
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    // Not kept: the setting is off.
    let ext: Option<String> = sqlx::query_scalar("SELECT external_id FROM invitations")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(ext, None);

    // In a browser: the link opens the study, which shows the consent and the code; the
    // baseline's pages are not the study participant's, nor are other links' tokens.
    let (web, start) = join(&app, &link).await;
    assert_eq!(start, "/study/1");
    let page = app
        .page(Some(&web), reqwest::Method::GET, &start, None)
        .await;
    let code: String = sqlx::query_scalar("SELECT completion_code FROM invitations")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(page.text.contains("Rank the clips as you see them."));
    assert!(
        page.text
            .contains(&format!("<output id=\"completion-code\">{code}</output>")),
        "{}",
        page.text
    );
    // The API token the link gave first has ended: one client at a time.
    assert_eq!(
        app.get("/api/v1/studies", &token).await.status,
        reqwest::StatusCode::UNAUTHORIZED
    );
    let r = app
        .page(Some(&web), reqwest::Method::GET, "/api/v1/baselines", None)
        .await;
    assert_ne!(r.status, reqwest::StatusCode::OK);
    let r = app
        .page(
            Some(&web),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/admin/participants"),
            None,
        )
        .await;
    assert_eq!(r.status, reqwest::StatusCode::FORBIDDEN);
}
