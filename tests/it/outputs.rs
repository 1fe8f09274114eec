//! The paper's outputs as a reader gets them: every CSV table readable as numbers,
//! "not reviewed" never written as 0, undefined never written as a number.

use crate::helpers::*;
use reqwest::Method;
use serde_json::Value;
use tandem::report::format::{self, Col, TableId};

/// A campaign caught half-way: two tasks (whose pairs are the same two validators in
/// opposite orders), a few clips decided, most cells of Table 12 not reviewed, and a
/// study where one participant answered one set of two.
pub async fn half_way(app: &TestApp) -> Cast {
    let c = cast(app).await;
    let ids = app
        .import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 3, &["OE", "OA"])
        .await;
    // MC (val00 + val01): two both pass, one split; QC (val01 + val00): one both pass.
    for id in &ids[0..2] {
        assert_eq!(app.pass(&c.v0, 1, id).await.status, 201);
        assert_eq!(app.pass(&c.v1, 1, id).await.status, 201);
    }
    assert_eq!(app.pass(&c.v0, 1, &ids[2]).await.status, 201);
    assert_eq!(
        app.reject(&c.v1, 1, &ids[2], "prompt_drift").await.status,
        201
    );
    assert_eq!(app.pass(&c.v0, 1, &ids[3]).await.status, 201);
    assert_eq!(app.pass(&c.v1, 1, &ids[3]).await.status, 201);
    // Stage 2: one question reviewed, both pass (kappa undefined); OA never reviewed.
    let q = format!("{}_OE", ids[0]);
    assert_eq!(app.pass(&c.v0, 2, &q).await.status, 201);
    assert_eq!(app.pass(&c.v1, 2, &q).await.status, 201);
    // The study: part1 answers S00 of two sets.
    let sets = crate::study::write_sets(&app.source(), 2);
    crate::study::import_sets(app, &sets).await.unwrap();
    let mut csv = String::from("set_id,participant,clip_id,axis,value\n");
    for axis in ["photorealism", "temporal_coherence", "comprehensibility"] {
        for (k, src) in crate::study::SOURCES.iter().enumerate() {
            csv.push_str(&format!("S00,part1,{src}_00,{axis},{}\n", k + 1));
        }
    }
    for src in crate::study::SOURCES {
        let v = if src == "VGenST" { "fake" } else { "real" };
        csv.push_str(&format!("S00,part1,{src}_00,real_fake,{v}\n"));
    }
    let path = app.source().join("responses.csv");
    std::fs::write(&path, csv).unwrap();
    crate::study::import_responses(app, &path).await.unwrap();
    c
}

fn is_number(cell: &str) -> bool {
    cell.parse::<f64>().is_ok_and(f64::is_finite)
}

#[tokio::test]
async fn every_csv_table_holds_only_numbers_or_empty_cells_in_its_numeric_columns() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let qc = tandem::app::qc_report(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    let study = tandem::app::study_report(&app.store, &campaign)
        .await
        .unwrap()
        .unwrap();
    let mut empty_cells = 0;
    for id in [
        TableId::T11,
        TableId::T12,
        TableId::T13,
        TableId::T14,
        TableId::T15,
    ] {
        let declared = if id.is_study() {
            study.csv_table(id).unwrap()
        } else {
            format::csv_table(&qc, &campaign.taxonomy, id).unwrap()
        };
        let numeric = declared.numeric();
        assert!(!numeric.is_empty(), "{id:?} declares its numeric columns");
        let r = app
            .page(
                Some(&web),
                Method::GET,
                &format!("/c/{CAMPAIGN}/stats/{}.csv", id.name()),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{id:?}");
        let mut reader = csv::Reader::from_reader(r.text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_string)
            .collect();
        let names: Vec<&str> = declared.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(header, names, "{id:?}: the download is the declared table");
        for (line, record) in reader.records().enumerate() {
            let record = record.unwrap();
            assert_eq!(record.len(), header.len(), "{id:?} row {line}");
            for (cell, (name, col)) in record.iter().zip(&declared.columns) {
                if *col == Col::Num {
                    assert!(
                        cell.is_empty() || is_number(cell),
                        "{id:?} row {line}: `{name}` holds text `{cell}`"
                    );
                    empty_cells += usize::from(cell.is_empty());
                }
            }
        }
        assert!(!r.text.contains("undefined"), "{id:?}:\n{}", r.text);
    }
    assert!(empty_cells > 0, "the undefined figures are empty cells");
}

#[tokio::test]
async fn not_reviewed_is_never_written_as_zero() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move {
            let r = app.page(Some(web), Method::GET, &path, None).await;
            assert_eq!(r.status, 200, "{path}");
            r.text
        }
    };
    // Table 12: MC x OE was reviewed (0 rejected), MC x OA was not.
    let json: Value =
        serde_json::from_str(&get(format!("/c/{CAMPAIGN}/stats/t12.json")).await).unwrap();
    assert_eq!(json["MC_F_EGO_STA"]["OE"]["reviewed"], 1);
    assert_eq!(json["MC_F_EGO_STA"]["OE"]["rejected"], 0);
    assert_eq!(json["MC_F_EGO_STA"]["OA"]["reviewed"], 0);
    let csv = get(format!("/c/{CAMPAIGN}/stats/t12.csv")).await;
    assert!(
        csv.contains("MC_F_EGO_STA,OE,L1,1,0,0\n") && csv.contains("MC_F_EGO_STA,OA,L1,0,0,\n"),
        "the rejected fraction of nothing reviewed is empty:\n{csv}"
    );
    let tex = get(format!("/c/{CAMPAIGN}/stats/t12.tex")).await;
    let mc = tex
        .lines()
        .find(|l| l.starts_with("MC\\_F\\_EGO\\_STA"))
        .unwrap();
    assert!(
        mc.starts_with("MC\\_F\\_EGO\\_STA & 0 & n/r & n/r"),
        "OE reviewed (0), OA and FL not: {mc}"
    );
    assert!(tex.contains("n/r: no question of the cell reviewed yet"));
    // Table 11: CI_F_EXO_STA has no clip at all.
    let t11 = get(format!("/c/{CAMPAIGN}/stats/t11.tex")).await;
    assert!(
        t11.contains("n/r (CI)")
            && t11.contains("2/3$^{*}$ (MC)")
            && t11.contains("a snapshot with 1 pending"),
        "MC's split waits for its author, and the caption says so: {t11}"
    );
    // The dashboard's plots.
    let page = get(format!("/c/{CAMPAIGN}/stats")).await;
    assert!(page.contains(">n/r</text>") && page.contains(">not reviewed</text>"));
    // Stage 2's kappa is undefined (every verdict valid): null, never 0 or 1.
    let all: Value =
        serde_json::from_str(&get(format!("/c/{CAMPAIGN}/stats/all.json")).await).unwrap();
    let s2 = &all["t13"]["stage2"];
    assert!(s2["cohen_kappa"].is_null() && s2["cohen_kappa_ci95_bounded"].is_null());
    // The study: part1 labelled one clip of each source's two.
    let vg = &all["t15"]["sources"]["VGenST"];
    assert_eq!(
        (vg["items"].as_i64(), vg["items_unlabelled"].as_i64()),
        (Some(2), Some(1))
    );
    assert_eq!(vg["labels"]["part1"], 1);
    assert_eq!(vg["fake_counts"]["part1"], 1);
    assert!(vg["fleiss_kappa"].is_null(), "one participant: undefined");
}

#[tokio::test]
async fn a_pair_over_its_tasks_is_its_own_row_beside_the_rows_per_task_and_pair() {
    let app = spawn_app().await;
    half_way(&app).await;
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let all = tandem::app::stats_json(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    let s1 = &all["t13"]["stage1"];
    let per_pair = s1["per_pair"].as_array().unwrap();
    assert_eq!(per_pair.len(), 2, "one row per task and pair, as before");
    assert_eq!(per_pair[1]["task"], "QC_F_EGO_DYN");
    assert_eq!(
        (
            per_pair[1]["rater1"].as_str(),
            per_pair[1]["rater2"].as_str()
        ),
        (Some("val01"), Some("val00"))
    );
    let pairs = s1["per_rater_pair"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "the same two validators are one pair");
    assert_eq!(pairs[0]["items"], 4);
    assert_eq!(
        pairs[0]["tasks"],
        serde_json::json!(["MC_F_EGO_STA", "QC_F_EGO_DYN"])
    );
    // val00 as rater 1 throughout: 3 both pass, 1 val00 valid / val01 reject.
    assert_eq!(pairs[0]["table"], serde_json::json!([[3, 1], [0, 0]]));
}

#[tokio::test]
async fn every_figure_downloads_as_svg_pdf_and_png() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    for name in [
        "t11-retained",
        "t12-rejected",
        "t13-kappa-stage1",
        "t13-kappa-stage2",
        "reasons-stage1",
        "reasons-stage2",
        "t14-ranks",
        "t15-judged-fake",
        "quality-stage1",
        "quality-stage2",
    ] {
        let path = format!("/c/{CAMPAIGN}/stats/fig-{name}");
        let r = app
            .client
            .get(format!("{}{path}.svg", app.base))
            .header("Cookie", &web.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{name}");
        assert_eq!(r.headers()["content-type"], "image/svg+xml");
        let svg = r.text().await.unwrap();
        assert!(
            svg.contains(&format!("Campaign {CAMPAIGN} · computed ")) && svg.contains("Scope: "),
            "{name}: the caption names the campaign, the scope and the time"
        );
        for (ext, magic, kind) in [
            ("pdf", &b"%PDF-"[..], "application/pdf"),
            ("png", &b"\x89PNG"[..], "image/png"),
        ] {
            let r = app
                .client
                .get(format!("{}{path}.{ext}", app.base))
                .header("Cookie", &web.cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{name}.{ext}");
            assert_eq!(r.headers()["content-type"], kind);
            let bytes = r.bytes().await.unwrap();
            assert!(bytes.starts_with(magic), "{name}.{ext}");
        }
    }
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats/fig-nothing.svg"),
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    // An author may download them too; a validator may not.
    let author = app.login("author1").await;
    let r = app
        .page(
            Some(&author),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats/fig-t14-ranks.svg"),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    let v = app.login("val00").await;
    let r = app
        .page(
            Some(&v),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats/fig-t11-retained.png"),
            None,
        )
        .await;
    assert_eq!(r.status, 403);
    // The review-quality table downloads the same way, and is refused the same way.
    for ext in ["csv", "json", "tex"] {
        let path = format!("/c/{CAMPAIGN}/stats/review-quality.{ext}");
        let r = app.page(Some(&web), Method::GET, &path, None).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(
            app.page(Some(&v), Method::GET, &path, None).await.status,
            403
        );
    }
}

#[tokio::test]
async fn the_statistics_page_says_how_good_the_review_is_and_withholds_figures_from_few_verdicts() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let html = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats"),
            None,
        )
        .await
        .text;
    let section = html
        .split("<h2>How good the review is</h2>")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("the review-quality section");
    // Every rater of the JSON is a row; no known items, so every figure is a bound.
    let json = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats/review-quality.json"),
            None,
        )
        .await
        .body;
    let raters =
        json["validators"].as_array().unwrap().len() + json["author"].as_array().unwrap().len();
    assert!(raters >= 2, "{json}");
    let body = section
        .split("<table class=\"numbers quality\">")
        .nth(1)
        .and_then(|t| t.split("<tbody>").nth(1))
        .and_then(|t| t.split("</tbody>").next())
        .expect("the raters' table");
    assert_eq!(body.matches("<tr><th>").count(), raters, "{section}");
    // No known items: not identified. And half way through a twelve-clip campaign
    // every rater has fewer than ten counted verdicts and every stage fewer than ten
    // decided items: nothing is given but the counts (not even bounds).
    assert!(section.contains("not identified"), "{section}");
    assert!(
        !body.contains("(bounds)") && !body.contains("[0."),
        "{body}"
    );
    for r in json["validators"]
        .as_array()
        .unwrap()
        .iter()
        .chain(json["author"].as_array().unwrap())
    {
        let n = r["ratings"].as_u64().unwrap();
        assert!(n < 10, "{r}");
        assert!(
            body.contains(&format!("<td>too few ratings ({n})</td>")),
            "{n}: {body}"
        );
        assert_eq!(r["sensitivity"]["bounds"], serde_json::Value::Null);
        assert_eq!(r["sensitivity"]["withheld"]["minimum"], 10);
    }
    for st in json["stages"].as_array().unwrap() {
        assert!(
            section.contains(&format!(
                "residual defect rate of the retained items: <strong>too few items ({})</strong>",
                st["items"]
            )),
            "{section}"
        );
    }
    assert_eq!(
        section.matches("<svg").count(),
        2,
        "a forest plot per stage"
    );
    let csv = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats/review-quality.csv"),
            None,
        )
        .await
        .text;
    assert_eq!(
        csv.lines().count(),
        1 + 2 * raters + json["stages"].as_array().unwrap().len(),
        "{csv}"
    );
}

#[tokio::test]
async fn the_study_results_count_complete_sets_and_say_when_data_is_thin() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let html = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/study/results"),
            None,
        )
        .await
        .text;
    assert!(
        html.contains("1 complete set answer(s) from 1 participant(s) (part1 1 of 2), of 2 sets"),
        "{html}"
    );
    assert!(
        html.contains("1 of 1 (1 of 2 clips unlabelled)"),
        "fake labels over labels given"
    );
    assert!(html.contains("W is 1 by construction"), "one block");
    assert!(html.contains("One participant so far"));
}

#[tokio::test]
async fn the_paper_bundle_downloads_as_one_zip_that_compiles() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let exports = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports"),
            None,
        )
        .await;
    assert!(exports.text.contains("/admin/exports/paper.zip"));
    assert!(exports.text.contains("/admin/exports/study-responses.csv"));
    assert!(exports.text.contains("V1/V2/V3 reformulations"));
    assert!(
        exports.text.contains(
            "(zip): Table 11, Table 12, Table 13 and the study&#39;s Table 14, Table 15 as LaTeX"
        ),
        "{}",
        exports.text
    );
    // A protocol whose export has no reformulations is not promised them.
    let plain = tandem::domain::protocol::shipped("vgenst")
        .unwrap()
        .replacen("[protocol]\n", "[protocol]\nexport_variants = false\n", 1);
    let plain = tandem::domain::protocol::parse(&plain).unwrap();
    app.store.create_campaign("plain", &plain).await.unwrap();
    let other = app
        .page(Some(&web), Method::GET, "/c/plain/admin/exports", None)
        .await;
    assert_eq!(other.status, reqwest::StatusCode::OK, "{}", other.text);
    assert!(!other.text.contains("V1/V2/V3"), "{}", other.text);
    let r = app
        .client
        .get(format!("{}/c/{CAMPAIGN}/admin/exports/paper.zip", app.base))
        .header("Cookie", &web.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/zip");
    let bytes = r.bytes().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    zip.extract(dir.path()).unwrap();
    let root = dir.path().join(format!("{CAMPAIGN}-paper"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    // All five tables, each a complete table environment with caption and label.
    for t in ["t11", "t12", "t13", "t14", "t15"] {
        let tex = read(&format!("tables/{t}.tex"));
        for needle in [
            "\\begin{table}",
            "\\caption{",
            "\\label{",
            "\\toprule",
            "\\end{table}",
        ] {
            assert!(tex.contains(needle), "{t}.tex lacks {needle}:\n{tex}");
        }
        read(&format!("tables/{t}.csv"));
        read(&format!("tables/{t}.json"));
    }
    assert!(read("tables/t13.tex").contains("Krippendorff's $\\alpha$"));
    let t15 = read("tables/t15.tex");
    assert!(
        t15.contains("VGenST & 2 & Fake & 100.0\\% & 1 & undefined & undefined \\\\"),
        "one participant: no agreement\n{t15}"
    );
    let quality = read("tables/review-quality.tex");
    assert!(quality.contains("\\label{tab:review-quality}") && quality.contains("\\toprule"));
    read("tables/review-quality.csv");
    read("tables/review-quality.json");
    assert!(read("paper.tex").contains("\\input{tables/review-quality.tex}"));
    for f in [
        "t14-ranks",
        "t15-judged-fake",
        "t11-retained",
        "quality-stage1",
        "quality-stage2",
    ] {
        for ext in ["svg", "pdf", "png"] {
            assert!(
                root.join(format!("figures/{f}.{ext}")).is_file(),
                "{f}.{ext}"
            );
        }
    }
    let readme = read("README.txt");
    assert!(readme.contains("records/study-responses.csv"), "{readme}");
    assert!(
        readme.contains("Study: blind study: 2 sets, 1 participant(s), 1 complete set answer(s)")
    );
    // The study's raw answers: 12 ranks and 4 labels of part1 on the first set.
    let responses = read("records/study-responses.csv");
    let mut lines = responses.lines();
    assert_eq!(
        lines.next(),
        Some("set_id,participant,clip_id,axis,value,source,truth")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 16, "{responses}");
    assert!(rows.contains(&"S00,part1,VGenST_00,real_fake,fake,VGenST,fake"));
    assert!(
        rows.contains(&"S00,part1,PerceptionTest_00,photorealism,1,PerceptionTest,real"),
        "{responses}"
    );
    let alone = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports/study-responses.csv"),
            None,
        )
        .await;
    assert_eq!(alone.text, responses);
    if pdflatex_available() {
        let pdf = pdflatex(&root, "paper.tex");
        assert!(std::fs::read(pdf).unwrap().starts_with(b"%PDF-"));
    }
}

#[tokio::test]
async fn the_overview_draws_progress_hides_empty_columns_and_names_reasons_in_words() {
    let app = spawn_app().await;
    half_way(&app).await;
    let web = app.login("admin1").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move {
            let r = app.page(Some(web), Method::GET, &path, None).await;
            assert_eq!(r.status, 200, "{path}");
            r.text
        }
    };
    let html = get(format!("/c/{CAMPAIGN}/admin")).await;
    assert!(html.contains("Stage 1: clips per task (newest versions), against the target"));
    assert!(
        html.contains("<title>MC_F_EGO_STA: retained 2</title>"),
        "a bar per task"
    );
    assert!(html.contains("<title>MC_F_EGO_STA: waiting for an author 1</title>"));
    // One split waits, none was resolved: the resolved columns are all zeros.
    assert!(html.contains("<th>Split waiting</th>"));
    assert!(!html.contains("<th>Split accepted</th>") && !html.contains("<th>Split rejected</th>"));
    assert!(!html.contains("<th>Both reject</th>"));
    assert!(!html.contains("style=\""), "no inline styles under the CSP");
    // Reasons in words on the admin's pages.
    let clip = "MC_F_EGO_STA_0002";
    let audit = get(format!("/c/{CAMPAIGN}/admin/audit?clip={clip}")).await;
    assert!(audit.contains("reject (Prompt drift)"), "{audit}");
    assert!(!audit.contains("prompt_drift"));
    let stats = get(format!("/c/{CAMPAIGN}/stats")).await;
    assert!(stats.contains("<td>Prompt drift</td>") && !stats.contains("prompt_drift"));
}

#[tokio::test]
async fn every_number_of_the_overview_links_to_exactly_the_items_it_counts() {
    let app = spawn_app().await;
    half_way(&app).await;
    // One more state: a half-decided Stage 1 clip.
    let src = app.source();
    let extra: Vec<String> = (0..2).map(|i| format!("EXTRA_{i}")).collect();
    let lines: Vec<_> = extra
        .iter()
        .map(|id| clip_line(&src, id, "MC_F_EGO_STA", &[]))
        .collect();
    app.import(&write_manifest(&src, "extra.jsonl", &lines))
        .await
        .unwrap();
    let web = app.login("admin1").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move { app.page(Some(web), Method::GET, &path, None).await }
    };
    let token = app.store.create_token("val00", "t").await.unwrap();
    assert_eq!(app.pass(&token, 1, &extra[1]).await.status, 201);
    let html = get(format!("/c/{CAMPAIGN}/admin")).await.text;
    let mut links = 0;
    let mut rest = html.as_str();
    let mut seen_groups = std::collections::HashSet::new();
    while let Some(at) = rest.find("<a href=\"/c/default/admin/items?") {
        let tail = &rest[at + "<a href=\"".len()..];
        let href = tail
            .split('"')
            .next()
            .unwrap()
            .replace("&amp;", "&")
            .replace("&#38;", "&");
        let number: usize = tail
            .split('>')
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let page = get(href.clone()).await;
        assert_eq!(page.status, 200, "{href}");
        assert!(
            page.text
                .contains(&format!("<span>{number} item(s)</span>")),
            "{href} counts {number}: {}",
            page.text
        );
        assert_eq!(
            page.text.matches("/admin/audit?clip=").count(),
            number,
            "{href}: one row per item"
        );
        if let Some(task) = href
            .split("task=")
            .nth(1)
            .map(|t| t.split('&').next().unwrap())
        {
            assert_eq!(
                page.text.matches(&format!("<td>{task}</td>")).count(),
                number,
                "{href}: only that task's items"
            );
        }
        seen_groups.insert(href.split("show=").nth(1).unwrap().to_string());
        links += 1;
        rest = &tail[1..];
    }
    assert!(links >= 20, "every non-zero number is a link ({links})");
    for g in [
        "open",
        "retained",
        "in_review",
        "unstarted",
        "half_decided",
        "split",
        "reviewed",
    ] {
        assert!(seen_groups.contains(g), "{g} is linked: {seen_groups:?}");
    }
    // Zeros are not links, and the lists name the state and the pair.
    let list = get(format!(
        "/c/{CAMPAIGN}/admin/items?stage=1&task=MC_F_EGO_STA&show=split"
    ))
    .await;
    assert!(
        list.text.contains("split, waiting for an author"),
        "{}",
        list.text
    );
    assert!(list.text.contains("val00 + val01"), "{}", list.text);
    let list = get(format!("/c/{CAMPAIGN}/admin/items?stage=1&show=unstarted")).await;
    assert!(list.text.contains("not fixed yet"));
    // Clear refusals.
    let r = get(format!("/c/{CAMPAIGN}/admin/items?stage=1&show=everything")).await;
    assert_eq!(r.status, 422);
    assert!(r.text.contains("not one of: all, open"), "{}", r.text);
    let r = get(format!("/c/{CAMPAIGN}/admin/items?stage=3")).await;
    assert_eq!(r.status, 422);
    let r = get(format!("/c/{CAMPAIGN}/admin/items?task=NOPE")).await;
    assert_eq!(r.status, 404);
}
