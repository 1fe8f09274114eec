//! The blind study: importing sets and responses, the paper's Tables 14 and 15 from
//! raw responses, and the participant's session.

use crate::helpers::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tandem::domain::Role;

pub const SOURCES: [&str; 4] = ["PerceptionTest", "EgoExoBench", "VSI-Bench", "VGenST"];

/// A sets file of `n` sets, one clip per source (three real sources, one generated),
/// clip ids and file names that name their source. Each source has its own video.
pub fn write_sets(dir: &Path, n: usize) -> PathBuf {
    std::fs::create_dir_all(dir.join("vids")).unwrap();
    let mut text = String::new();
    for s in 0..n {
        let clips: Vec<Value> = SOURCES
            .iter()
            .enumerate()
            .map(|(k, src)| {
                let file = format!("vids/{src}_{s:02}.webm");
                std::fs::write(dir.join(&file), tandem::demo::CLIPS[k]).unwrap();
                json!({
                    "clip_id": format!("{src}_{s:02}"),
                    "source": src,
                    "truth": if *src == "VGenST" { "fake" } else { "real" },
                    "file": file,
                })
            })
            .collect();
        text.push_str(&json!({"set_id": format!("S{s:02}"), "clips": clips}).to_string());
        text.push('\n');
    }
    let path = dir.join("sets.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

pub async fn import_sets(app: &TestApp, path: &Path) -> tandem::Result<()> {
    let checked =
        tandem::io::study::check_sets(path, None, &tandem::io::limits::Limits::default())?;
    tandem::app::import_study(&app.store, &app.config, CAMPAIGN, &checked, None)
        .await
        .map(|_| ())
}

fn golden(name: &str) -> Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden/agreement.json"),
    )
    .unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no vector {name}"))
        .clone()
}

fn close(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_f64(), want.as_f64());
    match (g, w) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= 1e-9, "{what}: got {g}, want {w}"),
        _ => assert_eq!(got, want, "{what}"),
    }
}

/// Responses reconstructing the paper's study: the real/fake labels of the golden
/// vector `paper_blind_study_reconstruction` (per-evaluator fake counts as in Table 15)
/// and the ranks of `paper_ranking_study_synthetic`, for evaluators E1-E3 on 50 sets.
fn paper_responses(path: &Path) {
    let labels = golden("paper_blind_study_reconstruction");
    let ranks = golden("paper_ranking_study_synthetic");
    let mut csv = String::from("set_id,participant,clip_id,axis,value\n");
    // The j-th item of a source is its clip in set j.
    let mut seen = std::collections::HashMap::new();
    let groups = labels["input"]["groups"].as_array().unwrap();
    for (i, row) in labels["input"]["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let src = groups[i].as_str().unwrap();
        let j = seen.entry(src).or_insert(0usize);
        for (e, l) in row.as_array().unwrap().iter().enumerate() {
            csv.push_str(&format!(
                "S{j:02},E{},{src}_{j:02},real_fake,{}\n",
                e + 1,
                l.as_str().unwrap()
            ));
        }
        *j += 1;
    }
    let sources: Vec<&str> = ranks["input"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(sources, SOURCES);
    let block_labels = ranks["input"]["block_labels"].as_array().unwrap();
    for (axis_key, axis) in [
        ("axis1", "photorealism"),
        ("axis2", "temporal_coherence"),
        ("axis3", "comprehensibility"),
    ] {
        let blocks = ranks["input"]["axes"][axis_key]["blocks"]
            .as_array()
            .unwrap();
        for (b, block) in blocks.iter().enumerate() {
            let set = block_labels[b]["set"].as_u64().unwrap();
            let who = block_labels[b]["evaluator"].as_str().unwrap();
            for (k, r) in block.as_array().unwrap().iter().enumerate() {
                csv.push_str(&format!(
                    "S{set:02},{who},{}_{set:02},{axis},{}\n",
                    sources[k],
                    r.as_f64().unwrap() as i64
                ));
            }
        }
    }
    std::fs::write(path, csv).unwrap();
}

pub async fn import_responses(app: &TestApp, path: &Path) -> tandem::Result<()> {
    let campaign = app.store.campaign(CAMPAIGN).await?;
    let (rows, problems) = tandem::io::study::read_responses(std::fs::File::open(path).unwrap());
    app.store
        .import_responses(&campaign, &rows, problems, "responses")
        .await
        .map(|_| ())
}

#[tokio::test]
async fn responses_reconstructing_the_paper_give_back_tables_14_and_15() {
    let app = spawn_app().await;
    let src = app.source();
    import_sets(&app, &write_sets(&src, 50)).await.unwrap();
    for e in ["E1", "E2", "E3"] {
        app.user(e, Role::Participant, None).await;
    }
    // E2 opens the study before the responses come in; E1 only after.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let study = app.store.require_study(&campaign).await.unwrap();
    let e2 = app.store.user_by_name("E2").await.unwrap().unwrap();
    let before = app.store.study_progress(&study, &e2).await.unwrap();
    assert_eq!((before.answered, before.total), (0, 50));
    let responses = src.join("responses.csv");
    paper_responses(&responses);
    import_responses(&app, &responses).await.unwrap();
    // Responses brought in answer their sets, for an order drawn before or after.
    let e1 = app.store.user_by_name("E1").await.unwrap().unwrap();
    for who in [&e1, &e2] {
        let p = app.store.study_progress(&study, who).await.unwrap();
        assert_eq!(
            (p.answered, p.total, p.next),
            (50, 50, None),
            "{}",
            who.name
        );
    }

    // The responses export is in the import's format: reading it back adds nothing.
    let study = app.store.require_study(&campaign).await.unwrap();
    let data = app.store.study_data(&study).await.unwrap();
    let mut exported = Vec::new();
    tandem::io::study::write_responses(&mut exported, &data).unwrap();
    let (rows, problems) = tandem::io::study::read_responses(exported.as_slice());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(rows.len(), data.responses.len());
    let again = app
        .store
        .import_responses(&campaign, &rows, problems, "the export")
        .await
        .unwrap();
    assert_eq!((again.added, again.already_there), (0, rows.len()));
    let stats = tandem::app::stats_json(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    let t15 = &stats["t15"];
    // The paper's % judged fake and per-participant fake counts.
    for (src, pct, counts) in [
        ("PerceptionTest", 12.7, [8, 5, 6]),
        ("EgoExoBench", 18.0, [8, 9, 10]),
        ("VSI-Bench", 26.0, [12, 13, 14]),
        ("VGenST", 63.3, [32, 29, 34]),
    ] {
        let s = &t15["sources"][src];
        let got = s["judged_fake"].as_f64().unwrap() * 100.0;
        assert!((got - pct).abs() < 0.05, "{src}: {got}");
        assert_eq!(
            s["fake_counts"],
            json!({"E1": counts[0], "E2": counts[1], "E3": counts[2]}),
            "{src}"
        );
        assert_eq!(
            s["truth"],
            if src == "VGenST" { "fake" } else { "real" },
            "{src}"
        );
    }
    // Fleiss' kappa and Krippendorff's alpha as statsmodels and krippendorff give them.
    let want = &golden("paper_blind_study_reconstruction")["expected"];
    for src in SOURCES {
        let g = &want["by_group"][src];
        let s = &t15["sources"][src];
        close(&s["fleiss_kappa"], &g["fleiss"]["kappa"], src);
        close(
            &s["krippendorff_alpha"],
            &g["krippendorff_alpha_nominal"],
            src,
        );
    }
    close(
        &t15["pooled_fleiss_kappa"],
        &want["fleiss"]["kappa"],
        "pooled",
    );
    close(
        &t15["pooled_krippendorff_alpha"],
        &want["krippendorff_alpha_nominal"],
        "pooled alpha",
    );
    assert_eq!(t15["complete"], true);
    // Human error rate: fakes judged real plus reals judged fake, over 600 judgments.
    let wrong = (150 - (32 + 29 + 34)) + (8 + 5 + 6 + 8 + 9 + 10 + 12 + 13 + 14);
    close(
        &t15["human_error_rate"],
        &json!(wrong as f64 / 600.0),
        "error rate",
    );
    let ci = t15["human_error_rate_ci95"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    let rate = wrong as f64 / 600.0;
    assert!(lo < rate && rate < hi && hi - lo < 0.2, "{lo} {hi}");
    // Each participant's detection with exact intervals.
    let e1 = &t15["detection"][0];
    assert_eq!(
        (e1["participant"].clone(), e1["hits"].clone()),
        (json!("E1"), json!(32))
    );
    assert_eq!(e1["false_alarms"], 8 + 8 + 12);

    // Table 14: the ranks' means, stds, W and Friedman as scipy and pingouin give them.
    let want = &golden("paper_ranking_study_synthetic")["expected"];
    for (axis_key, axis) in [
        ("axis1", "photorealism"),
        ("axis2", "temporal_coherence"),
        ("axis3", "comprehensibility"),
    ] {
        for src in SOURCES {
            let g = &want[axis_key]["per_source"][src];
            let s = &stats["t14"][src][axis];
            close(&s["mean"], &g["mean"], &format!("{src} {axis} mean"));
            close(&s["std"], &g["std"], &format!("{src} {axis} std"));
            assert_eq!(s["n"], g["n"], "{src} {axis}");
        }
        let t = &stats["t14_tests"][axis];
        close(&t["kendall_w"], &want[axis_key]["kendall_w"], axis);
        close(
            &t["friedman"]["chi2"],
            &want[axis_key]["friedman"]["chi2"],
            axis,
        );
        let (p, wp) = (
            t["friedman"]["p_value"].as_f64().unwrap(),
            want[axis_key]["friedman"]["p_value"].as_f64().unwrap(),
        );
        assert!(
            (p - wp).abs() <= 1e-6 * wp.abs().max(1e-300),
            "{axis}: {p} vs {wp}"
        );
    }

    // The same responses again change nothing; the tables render in every format.
    let before = app.dump().await;
    import_responses(&app, &responses).await.unwrap();
    assert_eq!(before, app.dump().await);
    let report = tandem::app::study_report(&app.store, &campaign)
        .await
        .unwrap()
        .unwrap();
    use tandem::report::format::{Format, TableId};
    use tandem::report::study::render as render_study;
    let latex = render_study(
        &report,
        &campaign.taxonomy.tables,
        TableId::T15,
        Format::Latex,
    )
    .unwrap();
    assert!(
        latex.contains("VGenST & 50 & Fake & 63.3\\% & 32/29/34 & 0.66 & 0.66"),
        "{latex}"
    );
    let csv = render_study(
        &report,
        &campaign.taxonomy.tables,
        TableId::T14,
        Format::Csv,
    )
    .unwrap();
    assert!(csv.starts_with("source,axis,mean,std,n\n"), "{csv}");
    let t14 = render_study(
        &report,
        &campaign.taxonomy.tables,
        TableId::T14,
        Format::Latex,
    )
    .unwrap();
    assert!(t14.contains("VGenST & $2.96 \\pm 1.07$"), "{t14}");
    latex_compiles(&format!("{t14}{latex}"));
    // The admin finds a participant by the start of their name.
    app.user("admin1", Role::Admin, None).await;
    let web = app.login("admin1").await;
    let page = |q: &'static str| {
        let (app, web) = (&app, &web);
        async move {
            let r = app
                .page(
                    Some(web),
                    reqwest::Method::GET,
                    &format!("/c/{CAMPAIGN}/admin/study{q}"),
                    None,
                )
                .await;
            assert_eq!(r.status, 200, "{q}: {}", r.text);
            r.text
        }
    };
    let all = page("").await;
    assert!(all.contains("<th>E1") && all.contains("<th>E2"), "{all}");
    let one = page("?name=E2").await;
    assert!(one.contains("<th>E2") && !one.contains("<th>E1"), "{one}");
    assert!(one.contains("<span>1 item(s)</span>"), "{one}");
    let none = page("?name=Z").await;
    assert!(
        none.contains("No participant's name starts with <code>Z</code>."),
        "{none}"
    );
}

#[tokio::test]
async fn a_broken_sets_file_is_refused_whole_with_lines_and_fields() {
    let app = spawn_app().await;
    let src = app.source();
    let good = write_sets(&src, 3);
    let text = std::fs::read_to_string(&good).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Line 2: a clip with an unknown truth; line 3: a set without a VGenST clip and
    // with a missing file; line 4: a duplicate set id.
    lines[1]["clips"][0]["truth"] = json!("maybe");
    lines[2]["clips"].as_array_mut().unwrap().pop();
    lines[2]["clips"][1]["file"] = json!("vids/nowhere.webm");
    lines.push(lines[0].clone());
    lines[3]["clips"] = json!([]);
    let bad = write_manifest(&src, "bad.jsonl", &lines);
    let before = app.dump().await;
    let err = import_sets(&app, &bad).await.unwrap_err().to_string();
    assert!(err.contains("nothing was stored"), "{err}");
    assert!(
        err.contains("line 2, field `clips[0].truth`: unknown truth value `maybe` (real or fake)"),
        "{err}"
    );
    assert!(err.contains("line 3, field `clips[1].file`"), "{err}");
    assert!(
        err.contains("line 4, field `set_id`: duplicate set_id `S00` (first on line 1)"),
        "{err}"
    );
    assert_eq!(before, app.dump().await);

    // A set without one of the sources.
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[1]["clips"].as_array_mut().unwrap().pop();
    let bad = write_manifest(&src, "bad2.jsonl", &lines);
    let err = import_sets(&app, &bad).await.unwrap_err().to_string();
    assert!(
        err.contains("line 2, field `clips`: set `S01` has no clip from source `VGenST`"),
        "{err}"
    );
    // A duplicate clip id across sets.
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[2]["clips"][0]["clip_id"] = json!("PerceptionTest_00");
    let bad = write_manifest(&src, "bad3.jsonl", &lines);
    let err = import_sets(&app, &bad).await.unwrap_err().to_string();
    assert!(
        err.contains("duplicate clip_id `PerceptionTest_00`"),
        "{err}"
    );
    assert_eq!(before, app.dump().await);

    // The good file imports; again, it changes nothing.
    import_sets(&app, &good).await.unwrap();
    let once = app.dump().await;
    import_sets(&app, &good).await.unwrap();
    assert_eq!(once, app.dump().await);
}

#[tokio::test]
async fn broken_responses_are_refused_whole() {
    let app = spawn_app().await;
    let src = app.source();
    import_sets(&app, &write_sets(&src, 2)).await.unwrap();
    app.user("E1", Role::Participant, None).await;
    app.user("writer", Role::Author, None).await;
    let rank_rows = |set: &str, who: &str, ranks: [i64; 4]| -> String {
        SOURCES
            .iter()
            .zip(ranks)
            .map(|(s, r)| format!("{set},{who},{s}_{},photorealism,{r}\n", &set[1..]))
            .collect()
    };
    let cases: Vec<(String, &str)> = vec![
        (
            rank_rows("S00", "E1", [1, 2, 2, 4]),
            "rank 2 is given to EgoExoBench_00 and VSI-Bench_00",
        ),
        (
            rank_rows("S00", "E1", [1, 2, 3, 5]),
            "line 5, field `value`: rank 5 is outside 1-4",
        ),
        (
            rank_rows("S07", "E1", [1, 2, 3, 4]),
            "line 2, field `set_id`: no set `S07` in the study",
        ),
        (
            rank_rows("S00", "nobody", [1, 2, 3, 4]),
            "no participant named `nobody`",
        ),
        (
            rank_rows("S00", "writer", [1, 2, 3, 4]),
            "`writer` is not a participant of this campaign's study (the account is an author here)",
        ),
        (
            "S00,E1,VGenST_01,real_fake,fake\n".to_string(),
            "clip `VGenST_01` is not in set `S00`",
        ),
        (
            "S00,E1,VGenST_00,real_fake,maybe\n".to_string(),
            "`maybe` is not a real/fake label",
        ),
        (
            "S00,E1,VGenST_00,beauty,1\n".to_string(),
            "unknown axis `beauty`",
        ),
        (
            "S00,E1,VGenST_00,real_fake,fake\n".to_string(),
            "E1 labels only part of set `S00`",
        ),
    ];
    let before = app.dump().await;
    for (rows, want) in cases {
        let path = src.join("r.csv");
        std::fs::write(
            &path,
            format!("set_id,participant,clip_id,axis,value\n{rows}"),
        )
        .unwrap();
        let err = import_responses(&app, &path).await.unwrap_err().to_string();
        assert!(err.contains(want), "want `{want}` in: {err}");
        assert!(err.contains("nothing was stored"), "{err}");
        assert_eq!(before, app.dump().await);
    }
}

/// Everything a participant's browser received: bodies and header values.
#[derive(Default)]
struct Seen {
    texts: Vec<(String, String)>,
    bytes: Vec<(String, Vec<u8>)>,
}

impl Seen {
    fn headers(&mut self, what: &str, h: &reqwest::header::HeaderMap) {
        for (k, v) in h {
            self.texts.push((
                format!("{what} header {k}"),
                String::from_utf8_lossy(v.as_bytes()).to_string(),
            ));
        }
    }
}

/// URLs in `src="..."` and `href="..."` attributes of a page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"", "href=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].replace("&#x2f;", "/").replace("&#47;", "/"));
            }
        }
    }
    out
}

async fn fetch_all(app: &TestApp, web: &Web, html: &str, seen: &mut Seen) {
    for url in links(html) {
        // Files the page loads; the pages it links to are visited by the test itself.
        if !(url.starts_with("/static/") || url.starts_with("/study/m/")) {
            continue;
        }
        let r = app
            .client
            .get(format!("{}{url}", app.base))
            .header("Cookie", &web.cookie)
            .header("Range", "bytes=0-")
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{url}: {}", r.status());
        seen.headers(&url, r.headers());
        let body = r.bytes().await.unwrap().to_vec();
        seen.bytes.push((url.clone(), body));
    }
}

/// One set answered by reading the page's own letters: clip A best, and so on.
fn good_form(n: usize) -> Vec<(String, String)> {
    let mut f = Vec::new();
    for slot in 0..n {
        for a in 0..3 {
            f.push((format!("r{a}_{slot}"), (slot + 1).to_string()));
        }
        f.push((
            format!("rf_{slot}"),
            if slot == 0 { "fake" } else { "real" }.to_string(),
        ));
    }
    f
}

#[tokio::test]
async fn a_participants_whole_session_reveals_no_source_file_or_clip_id() {
    let app = spawn_app().await;
    let src = app.source();
    let sets = write_sets(&src, 3);
    // A clip that carries its source in its own metadata: the served copy must not.
    let strip_possible = has_ffmpeg();
    if strip_possible {
        let file = src.join("vids/VSI-Bench_00.webm");
        let tagged = src.join("vids/tagged.webm");
        let ok = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(&file)
            .args([
                "-c",
                "copy",
                "-metadata",
                "title=VSI-Bench_00 from VSI-Bench",
                "-metadata",
                "comment=real",
            ])
            .arg(&tagged)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        assert!(
            std::fs::read(&tagged)
                .unwrap()
                .windows(9)
                .any(|w| w == b"VSI-Bench")
        );
        std::fs::rename(&tagged, &file).unwrap();
    }
    import_sets(&app, &sets).await.unwrap();
    let c = cast(&app).await;
    app.user("part2", Role::Participant, None).await;

    let forbidden: Vec<String> = {
        let mut f: Vec<String> = SOURCES.iter().map(|s| s.to_string()).collect();
        f.extend(SOURCES.iter().map(|s| s.to_lowercase()));
        f.extend((0..3).flat_map(|i| SOURCES.iter().map(move |s| format!("{s}_{i:02}.webm"))));
        f.push("vids/".into());
        f.push(".webm".into());
        f
    };
    let set_ids = ["S00", "S01", "S02"];

    let mut seen = Seen::default();
    let web = app.login("part1").await;
    // The start page, then every set, following the links as a browser would.
    let home = app.page(Some(&web), reqwest::Method::GET, "/", None).await;
    assert_eq!(home.location().as_deref(), Some("/study/1"));
    seen.headers("/", &home.headers);
    let start = app
        .page(Some(&web), reqwest::Method::GET, "/study/1", None)
        .await;
    assert!(
        start
            .text
            .contains("either a real video or a generated one"),
        "{}",
        start.text
    );
    seen.texts.push(("/study/1".into(), start.text.clone()));
    seen.headers("/study/1", &start.headers);
    fetch_all(&app, &web, &start.text, &mut seen).await;

    let mut next = "/study/1/1".to_string();
    let mut answered = 0;
    while next != "/study/1" {
        let page = app
            .page(Some(&web), reqwest::Method::GET, &next, None)
            .await;
        assert_eq!(
            page.status,
            reqwest::StatusCode::OK,
            "{next}: {}",
            page.text
        );
        seen.texts.push((next.clone(), page.text.clone()));
        seen.headers(&next, &page.headers);
        fetch_all(&app, &web, &page.text, &mut seen).await;
        if answered == 0 {
            // A tie is refused with a clear message, and the choices stay.
            let mut tie = good_form(4);
            assert_eq!(tie[4].0, "r0_1");
            tie[4].1 = "1".into(); // like r0_0
            let form: Vec<(&str, &str)> =
                tie.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            let r = app
                .page(Some(&web), reqwest::Method::POST, &next, Some(&form))
                .await;
            assert_eq!(
                r.status,
                reqwest::StatusCode::UNPROCESSABLE_ENTITY,
                "{}",
                r.text
            );
            assert!(
                r.text
                    .contains("Photorealism: rank 1 is given to A and B; ties are not allowed"),
                "{}",
                r.text
            );
            seen.texts.push((format!("{next} tie"), r.text.clone()));
            seen.headers(&next, &r.headers);
        }
        let good = good_form(4);
        let form: Vec<(&str, &str)> = good.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let r = app
            .page(Some(&web), reqwest::Method::POST, &next, Some(&form))
            .await;
        assert_eq!(r.status, reqwest::StatusCode::SEE_OTHER, "{}", r.text);
        seen.headers(&next, &r.headers);
        answered += 1;
        next = r.location().unwrap();
        assert!(answered <= 3, "the study does not end");
    }
    assert_eq!(answered, 3);
    // An answered set shows the answer, final.
    let again = app
        .page(Some(&web), reqwest::Method::GET, "/study/1/2", None)
        .await;
    assert!(again.text.contains("answers are final"), "{}", again.text);
    seen.texts
        .push(("/study/1/2 again".into(), again.text.clone()));

    // The API, as the same participant.
    for path in ["/api/v1/studies", "/api/v1/studies/1/sets/1", "/api/v1/me"] {
        let r = app.get(path, &c.participant).await;
        assert_eq!(r.status, reqwest::StatusCode::OK, "{path}: {}", r.text);
        seen.texts.push((path.into(), r.text.clone()));
        seen.headers(path, &r.headers);
    }

    // The strip display: the frames come under the same opaque URLs.
    if strip_possible {
        let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
        tandem::app::set_study_display(
            &app.store,
            &app.config,
            &campaign,
            tandem::domain::study::Display::Strip,
            8,
        )
        .await
        .unwrap();
        let page = app
            .page(Some(&web), reqwest::Method::GET, "/study/1/1", None)
            .await;
        assert!(page.text.contains("/frames\""), "{}", page.text);
        seen.texts
            .push(("/study/1/1 strip".into(), page.text.clone()));
        fetch_all(&app, &web, &page.text, &mut seen).await;
        assert!(
            seen.bytes
                .iter()
                .any(|(u, b)| u.ends_with("/frames") && b.starts_with(&[0xFF, 0xD8]))
        );
    }

    // Nothing received names a source, a file or a clip; pages name no set id.
    for (what, text) in &seen.texts {
        for f in forbidden.iter().map(String::as_str).chain(set_ids) {
            assert!(!text.contains(f), "`{f}` appears in {what}: {text}");
        }
    }
    for (what, bytes) in &seen.bytes {
        for f in &forbidden {
            assert!(
                !bytes.windows(f.len()).any(|w| w == f.as_bytes()),
                "`{f}` appears in the bytes of {what}"
            );
        }
    }
    assert!(
        seen.bytes
            .iter()
            .filter(|(u, _)| u.starts_with("/study/m/"))
            .count()
            >= 12
    );

    // Another participant cannot fetch these clips, and sees none of these answers.
    let other = app.login("part2").await;
    let mine = links(
        &seen
            .texts
            .iter()
            .find(|(w, _)| w == "/study/1/1")
            .unwrap()
            .1,
    )
    .into_iter()
    .find(|u| u.starts_with("/study/m/"))
    .unwrap();
    let r = app
        .page(Some(&other), reqwest::Method::GET, &mine, None)
        .await;
    assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND);
    let theirs = app
        .page(Some(&other), reqwest::Method::GET, "/study/1/1", None)
        .await;
    assert!(!theirs.text.contains(" selected"), "{}", theirs.text);
    assert!(!theirs.text.contains("answers are final"));
}

#[tokio::test]
async fn the_api_answers_a_set_and_refuses_ties_and_changes() {
    let app = spawn_app().await;
    import_sets(&app, &write_sets(&app.source(), 2))
        .await
        .unwrap();
    let c = cast(&app).await;
    let r = app.get("/api/v1/studies", &c.participant).await;
    assert_eq!(r.body["studies"][0]["next"], 1, "{}", r.text);
    let set = app.get("/api/v1/studies/1/sets/1", &c.participant).await;
    assert_eq!(set.body["clips"].as_array().unwrap().len(), 4);
    let answer = |p: [i64; 4]| {
        json!({
            "photorealism": {"A": p[0], "B": p[1], "C": p[2], "D": p[3]},
            "temporal_coherence": {"A": 1, "B": 2, "C": 3, "D": 4},
            "comprehensibility": {"A": 4, "B": 3, "C": 2, "D": 1},
            "real_fake": {"A": "real", "B": "fake", "C": "real", "D": "real"},
        })
    };
    let post = |body: Value| {
        app.call(
            reqwest::Method::POST,
            "/api/v1/studies/1/sets/1",
            Some(&c.participant),
            Some(body),
        )
    };
    let r = post(answer([1, 1, 3, 4])).await;
    assert_eq!(
        r.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        r.text
    );
    assert!(r.text.contains("rank 1 is given to A and B"), "{}", r.text);
    let r = post(answer([2, 1, 3, 4])).await;
    assert_eq!(r.status, reqwest::StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["next"], 2);
    // The same answer again (a retry) records nothing more; another one is refused.
    let before = app.dump().await;
    assert_eq!(
        post(answer([2, 1, 3, 4])).await.status,
        reqwest::StatusCode::OK
    );
    assert_eq!(before, app.dump().await);
    let r = post(answer([3, 1, 2, 4])).await;
    assert_eq!(r.status, reqwest::StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("answers are final"));
    let set = app.get("/api/v1/studies/1/sets/1", &c.participant).await;
    assert_eq!(set.body["answer"]["photorealism"]["A"], 2, "{}", set.text);
    // The admin sees the participant's progress; the tables count the answer.
    let s = app.get("/api/v1/campaigns/default/study", &c.admin).await;
    assert_eq!(s.body["participants"][0]["answered"], 1, "{}", s.text);
    let stats = app.get("/api/v1/campaigns/default/stats", &c.admin).await;
    let n: i64 = SOURCES
        .iter()
        .map(|s| stats.body["t14"][s]["photorealism"]["n"].as_i64().unwrap())
        .sum();
    assert_eq!(n, 4, "{}", stats.text);
    assert_eq!(stats.body["t15"]["complete"], false);
}

/// An admin sets the study's display through the API; a refused value names its field
/// and changes nothing.
#[tokio::test]
async fn an_admin_sets_the_display_through_the_api() {
    use reqwest::{Method, StatusCode};
    let app = spawn_app().await;
    let c = cast(&app).await;
    import_sets(&app, &write_sets(&app.source(), 2))
        .await
        .unwrap();
    let url = format!("/api/v1/campaigns/{CAMPAIGN}/study/display");
    for (body, field) in [
        (json!({"display": "strip", "frames": 1}), "frames"),
        (json!({"display": "sideways"}), "display"),
    ] {
        let r = app
            .call(Method::PUT, &url, Some(&c.admin), Some(body))
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(r.body["field"], field, "{}", r.text);
    }
    let r = app
        .call(
            Method::PUT,
            &url,
            Some(&c.admin),
            Some(json!({"display": "video"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["display"], "video");
    assert_eq!(r.body["sets"], 2);
    let r = app
        .call(
            Method::PUT,
            &url,
            Some(&c.participant),
            Some(json!({"display": "video"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}
