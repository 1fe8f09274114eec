//! A paper-scale reconstruction: a campaign whose decisions follow Tables 11-13 of
//! VGenST-Bench, and `tandem stats` giving those tables back.

use crate::helpers::fake_mp4;
use serde_json::Value;
use std::process::Command;
use tandem::demo::paper::{self, T11_RETAINED, T12_REJECTED};
use tandem::{Config, Store};

async fn paper_campaign() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = crate::helpers::test_database_url().await;
    std::fs::create_dir_all(&data).unwrap();
    if let Some(u) = &url {
        std::fs::write(data.join(DB_URL_FILE), u).unwrap();
    }
    let config = Config::new(&data, url).unwrap();
    let store: Store = tandem::Store::open(&config.database_url).await.unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let video = |t: usize, id: &str| fake_mp4(&format!("{t}/{id}"));
    paper::build(&store, &config, "default", &src, &video)
        .await
        .unwrap();
    store.close().await;
    (dir, data)
}

/// Where a test on PostgreSQL leaves its database's URL for the commands it runs.
const DB_URL_FILE: &str = "test-database-url";

fn db_url(data: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(data.join(DB_URL_FILE)).ok()
}

/// The command, on the test's database.
fn tandem_on(data: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    match db_url(data) {
        Some(u) => cmd.env("DATABASE_URL", u),
        None => cmd.env_remove("DATABASE_URL"),
    };
    cmd
}

fn stats(data: &std::path::Path, args: &[&str]) -> String {
    let out = tandem_on(data)
        .arg("--data-dir")
        .arg(data)
        .arg("stats")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn round(x: &Value, places: i32) -> f64 {
    let p = 10f64.powi(places);
    (x.as_f64().unwrap() * p).round() / p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_give_back_the_papers_tables_11_to_13() {
    let (_dir, data) = paper_campaign().await;
    let j: Value = serde_json::from_str(&stats(&data, &["--json"])).unwrap();

    // Table 11: clips retained out of 100 reviewed, per task.
    for (task, retained) in T11_RETAINED {
        assert_eq!(j["t11"][task]["reviewed"], 100, "{task}");
        assert_eq!(j["t11"][task]["retained"], retained, "{task}");
    }
    // Table 12: every cell of the matrix reviewed 100 times; the rejections as printed.
    let mut cells = 0;
    for (task, row) in j["t12"].as_object().unwrap() {
        for (qa, cell) in row.as_object().unwrap() {
            cells += 1;
            let want = T12_REJECTED
                .iter()
                .find(|(t, q, _)| t == task && q == qa)
                .map_or(0, |c| c.2);
            assert_eq!(cell["reviewed"], 100, "{task} {qa}");
            assert_eq!(cell["rejected"], want, "{task} {qa}");
        }
    }
    assert_eq!(cells, 98);
    // Table 13.
    let s1 = &j["t13"]["stage1"];
    let s2 = &j["t13"]["stage2"];
    let counts = |s: &Value| {
        [
            "items_reviewed",
            "both_pass",
            "both_reject",
            "split",
            "split_accepted",
            "split_rejected",
            "split_pending",
        ]
        .map(|k| s[k].as_i64().unwrap())
    };
    assert_eq!(counts(s1), [1200, 1045, 70, 85, 40, 45, 0]);
    assert_eq!(counts(s2), [9800, 9677, 80, 43, 30, 13, 0]);
    assert_eq!(round(&s1["raw_agreement"], 3), 0.929);
    assert_eq!(round(&s2["raw_agreement"], 3), 0.996);
    assert_eq!(round(&s1["cohen_kappa"], 2), 0.58);
    assert_eq!(round(&s2["cohen_kappa"], 2), 0.79);
    // The splits divide 43/42 and 22/21 between the raters.
    assert_eq!(s1["table"], serde_json::json!([[1045, 43], [42, 70]]));
    assert_eq!(s2["table"], serde_json::json!([[9677, 22], [21, 80]]));
    let ci = s1["cohen_kappa_ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() < 0.58 && ci[1].as_f64().unwrap() > 0.58);
    // Inside [-1, 1], the bounded interval is the Wald interval itself.
    assert_eq!(s1["cohen_kappa_ci95_bounded"], s1["cohen_kappa_ci95"]);
    assert_eq!(s1["cohen_kappa_ci95_method"], "wald_truncated");
    // How good the review is: without known items two raters an item (and the author on
    // the splits) do not identify the accuracies, so every figure is bounds, never a
    // number, and the reply says why.
    let q = &j["review_quality"];
    assert_eq!(q["stages"].as_array().map(Vec::len), Some(2), "{q}");
    for (stage, items, retained) in [(1, 1200, 1085), (2, 9800, 9707)] {
        let s = &q["stages"][stage - 1];
        assert_eq!(
            (
                s["stage"].as_i64(),
                s["items"].as_i64(),
                s["retained"].as_i64()
            ),
            (Some(stage as i64), Some(items), Some(retained)),
            "{s}"
        );
        assert_eq!(s["identified"], false);
        assert!(
            s["reason"].as_str().is_some_and(|r| r.contains("known")),
            "{s}"
        );
    }
    let residual = &q["residual_defect_rate"];
    assert!(residual["estimate"].is_null() && residual["ci95"].is_null());
    let b = residual["bounds"].as_array().unwrap();
    let (lo, hi) = (b[0].as_f64().unwrap(), b[1].as_f64().unwrap());
    assert!((0.0..=hi).contains(&lo) && hi <= 1.0, "{residual}");
    let v = q["validators"].as_array().unwrap();
    assert_eq!(
        v.iter().filter(|r| r["stage"] == 1).count(),
        12,
        "every validator of Stage 1"
    );
    for r in v {
        for k in ["sensitivity", "specificity"] {
            assert!(
                r[k]["estimate"].is_null() && r[k]["bounds"].is_array(),
                "{r}"
            );
            assert!(r[k]["method"].as_str().is_some_and(|m| !m.is_empty()));
        }
    }
    assert_eq!(q["author"][0]["validator"], "author");
    assert_eq!(
        q["author"][0]["ratings"], 85,
        "the author resolved 85 Stage 1 splits"
    );
    // One pair per task, 100 clips each.
    let pairs = s1["per_pair"].as_array().unwrap();
    assert_eq!(pairs.len(), 12);
    assert_eq!(
        (
            pairs[0]["rater1"].as_str(),
            pairs[0]["rater2"].as_str(),
            pairs[0]["items"].as_i64()
        ),
        (Some("val00"), Some("val01"), Some(100))
    );
    assert_eq!(
        (pairs[11]["rater1"].as_str(), pairs[11]["rater2"].as_str()),
        (Some("val11"), Some("val00"))
    );

    // All versions: the first reviews plus the 115 regenerated clips, which both passed.
    let all: Value = serde_json::from_str(&stats(&data, &["--json", "--versions", "all"])).unwrap();
    let a1 = &all["t13"]["stage1"];
    assert_eq!(counts(a1), [1315, 1160, 70, 85, 40, 45, 0]);
    assert_eq!(
        all["t13"]["stage2"], j["t13"]["stage2"],
        "Stage 2 does not depend on the versions"
    );
    assert_eq!(all["t11"]["LS_E_EXO_STA"]["retained"], 100);

    // Narrower scopes.
    let one: Value =
        serde_json::from_str(&stats(&data, &["--json", "--task", "LS_E_EXO_STA"])).unwrap();
    assert_eq!(one["t13"]["stage1"]["items_reviewed"], 100);
    assert_eq!(one["t11"].as_object().unwrap().len(), 1);
    let pair: Value =
        serde_json::from_str(&stats(&data, &["--json", "--pair", "val10,val11"])).unwrap();
    assert_eq!(pair["t13"]["stage1"]["items_reviewed"], 100);
    assert_eq!(pair["t13"]["stage1"]["per_pair"][0]["task"], "LS_E_EXO_STA");

    // The three tables in every format.
    let latex = stats(&data, &["--table", "T13", "--format", "latex"]);
    for needle in [
        "\\toprule",
        "\\midrule",
        "\\bottomrule",
        "Items reviewed & 1,200 & 9,800",
        "Both pass & 1,045 (87.1\\%) & 9,677 (98.7\\%)",
        "Raw agreement rate & 92.9\\% & 99.6\\%",
        "Cohen's $\\kappa$ & 0.58 & 0.79",
    ] {
        assert!(latex.contains(needle), "`{needle}` not in\n{latex}");
    }
    assert_eq!(latex.matches('{').count(), latex.matches('}').count());
    let t11 = stats(&data, &["--table", "t11", "--format", "latex"]);
    assert!(
        t11.contains("Environmental (E) & 91 (DS) & 86 (RV) & 78 (LS) & 90 (BT) \\\\"),
        "{t11}"
    );
    let t12 = stats(&data, &["--table", "T12", "--format", "latex"]);
    assert!(
        t12.contains("LS\\_E\\_EXO\\_STA & 0 & 12 & - & - & - & - & 0 & 0 & 6 & 3 & 10 & 0 \\\\"),
        "{t12}"
    );
    dashboard_and_api_agree(&data, &j, &latex).await;
    compiles_if_latex_is_installed(&data);
    the_paper_bundle_compiles_and_agrees_with_stats(&data, &j);

    // Every clip was retained in the end (the regenerated ones in their new version),
    // while the tables above still count the first reviews.
    let out = data.parent().unwrap().join("release");
    let done = tandem_on(&data)
        .arg("--data-dir")
        .arg(&data)
        .args(["export", "retained", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let text = String::from_utf8_lossy(&done.stdout);
    assert!(
        text.contains("exported 1200 clip(s) and 9707 question(s)"),
        "{text}"
    );

    for t in ["T11", "T12", "T13"] {
        let csv = stats(&data, &["--table", t, "--format", "csv"]);
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        let header = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert!(
            !rows.is_empty() && rows.iter().all(|row| row.len() == header.len()),
            "{t}"
        );
        let json: Value =
            serde_json::from_str(&stats(&data, &["--table", t, "--format", "json"])).unwrap();
        assert_eq!(json, j[t.to_lowercase()]);
    }
}

/// The dashboard, its downloads and the API give the same figures as the CLI.
async fn dashboard_and_api_agree(data: &std::path::Path, cli_json: &Value, cli_t13_latex: &str) {
    let config = Config::new(data, db_url(data)).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let admin = store.user_by_name("admin").await.unwrap().unwrap();
    let token = store.create_token("admin", "test").await.unwrap();
    let cookie = format!(
        "tandem_session={}",
        store.create_session(&admin).await.unwrap()
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = tandem::AppState::new(store, config);
    tokio::spawn(tandem::serve(listener, state, std::future::pending()));
    let http = reqwest::Client::new();

    let api: Value = http
        .get(format!("{base}/api/v1/campaigns/default/stats"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for k in ["t11", "t12", "t13"] {
        assert_eq!(api[k], cli_json[k], "{k}");
    }
    let page = http
        .get(format!("{base}/c/default/stats"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    for needle in [
        "Table 13",
        "<svg",
        "0.583",
        "92.9%",
        "/c/default/stats/t12.tex",
        "undefined (one category only)",
    ] {
        assert!(html.contains(needle), "`{needle}` not on the dashboard");
    }
    assert!(!html.contains("style=\""), "no inline styles under the CSP");
    let tex = http
        .get(format!("{base}/c/default/stats/t13.tex"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(tex, cli_t13_latex);
    let scoped = http
        .get(format!(
            "{base}/c/default/stats?task=LS_E_EXO_STA&versions=all"
        ))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        scoped.contains("100/122"),
        "LS over all versions: 100 retained of 78 + 22 regenerated reviews"
    );
}

/// The three LaTeX tables compile in a document with booktabs, when pdflatex is here.
fn compiles_if_latex_is_installed(data: &std::path::Path) {
    let tables: String = ["T11", "T12", "T13"]
        .iter()
        .map(|t| stats(data, &["--table", t, "--format", "latex"]))
        .collect();
    crate::helpers::latex_compiles(&tables);
}

/// `tandem export paper`: the bundle's numbers are `tandem stats --json`'s, every file
/// is named in its README, and its LaTeX document compiles to a PDF (when pdflatex is
/// here; required under `.ci/run`).
fn the_paper_bundle_compiles_and_agrees_with_stats(data: &std::path::Path, cli_json: &Value) {
    let out = data.parent().unwrap().join("paper");
    let done = tandem_on(data)
        .arg("--data-dir")
        .arg(data)
        .args(["export", "paper", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
    let stats: Value = serde_json::from_str(&read("stats.json")).unwrap();
    assert_eq!(&stats, cli_json, "stats.json is `tandem stats --json`");
    // Table 16: the paper-scale campaign's twelve validators and its author.
    assert_eq!(cli_json["t16"]["quality_control"], 12);
    assert_eq!(cli_json["t16"]["authors"], 1);
    for t in ["t11", "t12", "t13", "t16"] {
        let table: Value = serde_json::from_str(&read(&format!("tables/{t}.json"))).unwrap();
        assert_eq!(table, cli_json[t], "{t}");
        assert_eq!(
            read(&format!("tables/{t}.tex")),
            stats_of(data, t, "latex"),
            "{t}.tex"
        );
        assert_eq!(read(&format!("tables/{t}.csv")), stats_of(data, t, "csv"));
    }
    // Tables 11 and 12 in LaTeX say what a cell counts as the paper's captions do.
    assert!(read("tables/t11.tex").contains("videos retained (out of 100)"));
    assert!(read("tables/t12.tex").contains("base MCQs (out of 100) rejected"));
    // Table 13 in LaTeX has the alpha the page shows, from the same JSON.
    let t13 = read("tables/t13.tex");
    let alpha = |s: &str| {
        format!(
            "{:.2}",
            cli_json["t13"][s]["krippendorff_alpha"].as_f64().unwrap()
        )
    };
    assert!(
        t13.contains(&format!(
            "Krippendorff's $\\alpha$ & {} & {} \\\\",
            alpha("stage1"),
            alpha("stage2")
        )),
        "{t13}"
    );
    let readme = read("README.txt");
    assert!(
        readme
            .contains("Scope: Stage 1 over the first version of every clip; all tasks; all pairs")
    );
    // The study's absence in the paper's words, as before protocols named the tables.
    assert!(
        readme.contains("Study: none in this campaign (no Tables 14 and 15)."),
        "{readme}"
    );
    let mut n = 0;
    for entry in walk(&out) {
        let rel = entry
            .strip_prefix(&out)
            .unwrap()
            .to_string_lossy()
            .to_string();
        assert!(readme.contains(&rel), "README.txt does not name {rel}");
        n += 1;
    }
    // 5 tables (T11-T13, T16 the annotator pool, review quality) x 3 formats,
    // stats.json, 8 figures (6 of T11-T13 and the reasons, a review-quality plot per
    // stage) x 3 formats, paper.tex, 2 records, README.txt (no study and no baseline
    // answers in this campaign).
    assert_eq!(n, 5 * 3 + 1 + 8 * 3 + 1 + 2 + 1, "files in the bundle");
    if crate::helpers::pdflatex_available() {
        let pdf = crate::helpers::pdflatex(&out, "paper.tex");
        let bytes = std::fs::read(pdf).unwrap();
        assert!(bytes.starts_with(b"%PDF-") && bytes.len() > 10_000);
    }
}

fn stats_of(data: &std::path::Path, table: &str, format: &str) -> String {
    stats(data, &["--table", table, "--format", format])
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}
