//! One campaign's life run through each backend, the same steps in the same order, and
//! everything it exports compared: imports (a new version too), calibration (a failed
//! round, a reset, a pass), verdicts in both stages (agreements, a split, a change
//! before the partner decides), a resolution, records brought in from files, and a
//! blind study answered. On SQLite always; under `TANDEM_TEST_POSTGRES` on PostgreSQL
//! as well, and the two runs' exports must be equal to the byte once times are set
//! aside (the moments things happened differ from run to run, nothing else may).

use crate::helpers::*;
use serde_json::json;
use std::path::Path;
use tandem::domain::study::{SetAnswer, Truth};
use tandem::domain::{Origin, Role, Stage, Verdict};
use tandem::store::Store;
use tandem::store::accounts::User;
use tandem::store::review::{ResolutionRequest, VerdictRequest, VersionRule};
use tandem::{Config, domain::Resolution};

const TASK: &str = "MC_F_EGO_STA";

fn valid() -> VerdictRequest {
    VerdictRequest {
        verdict: Verdict::Valid,
        reasons: vec![],
        note: String::new(),
        time_spent_ms: Some(4000),
        time_measure: None,
        version: VersionRule::Newest,
    }
}

fn reject(reason: &str) -> VerdictRequest {
    VerdictRequest {
        verdict: Verdict::Reject,
        reasons: vec![reason.into()],
        note: "seen".into(),
        time_spent_ms: Some(6000),
        ..valid()
    }
}

/// Every export of a campaign, times set aside.
async fn exports(store: &Store, config: &Config) -> Vec<(&'static str, String)> {
    let campaign = store.campaign(CAMPAIGN).await.unwrap();
    let text =
        |d: tandem::app::exports::Download| String::from_utf8(d.into_bytes().unwrap()).unwrap();
    let mut out = vec![
        (
            "decisions.csv",
            text(
                tandem::app::exports::decisions(store, &campaign)
                    .await
                    .unwrap(),
            ),
        ),
        (
            "resolutions.csv",
            text(
                tandem::app::exports::resolutions(store, &campaign)
                    .await
                    .unwrap(),
            ),
        ),
        (
            "regeneration.jsonl",
            text(
                tandem::app::exports::regeneration(store, &campaign)
                    .await
                    .unwrap(),
            ),
        ),
        (
            "audit.csv",
            text(
                tandem::app::exports::audit(store, &campaign, &Default::default())
                    .await
                    .unwrap(),
            ),
        ),
        (
            "study-responses.csv",
            text(
                tandem::app::exports::study_responses(store, &campaign)
                    .await
                    .unwrap(),
            ),
        ),
        (
            "stats.json",
            serde_json::to_string_pretty(
                &tandem::app::stats_json(store, &campaign, &Default::default())
                    .await
                    .unwrap(),
            )
            .unwrap(),
        ),
        (
            "progress.json",
            serde_json::to_string_pretty(&store.progress(&campaign).await.unwrap()).unwrap(),
        ),
        (
            "calibration.json",
            serde_json::to_string_pretty(&store.calibration_rounds(&campaign, None).await.unwrap())
                .unwrap(),
        ),
    ];
    // The retained benchmark, file by file.
    let (clips, counts) = store.retained(&campaign).await.unwrap();
    let folder = config.data_dir.join("retained-export");
    tandem::io::export::write_retained(&folder, CAMPAIGN, &clips, &counts, &config.media_dir, true)
        .unwrap();
    let mut files: Vec<_> = walk(&folder);
    files.sort();
    let mut retained = String::new();
    for f in files {
        let rel = f.strip_prefix(&folder).unwrap().display().to_string();
        let bytes = std::fs::read(&f).unwrap();
        let body = String::from_utf8(bytes.clone()).unwrap_or_else(|_| {
            format!(
                "{} bytes, sha256 {}",
                bytes.len(),
                tandem::auth::sha256_hex(&bytes)
            )
        });
        retained.push_str(&format!("== {rel}\n{body}\n"));
    }
    out.push(("retained", retained));
    out.into_iter()
        .map(|(k, v)| (k, without_times(&v)))
        .collect()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The text with every RFC 3339 time (`2026-12-01T17:45:09.123456Z`) replaced.
fn without_times(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let digits = |from: usize, n: usize| {
        b.get(from..from + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    while i < b.len() {
        let stamp = digits(i, 4)
            && b.get(i + 4) == Some(&b'-')
            && digits(i + 5, 2)
            && b.get(i + 7) == Some(&b'-')
            && digits(i + 8, 2)
            && b.get(i + 10) == Some(&b'T');
        if stamp {
            let mut j = i + 11;
            while j < b.len() && (b[j].is_ascii_digit() || matches!(b[j], b':' | b'.')) {
                j += 1;
            }
            if b.get(j) == Some(&b'Z') {
                j += 1;
            } else if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 6;
            }
            out.push_str("<time>");
            i = j.min(b.len());
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

async fn user(store: &Store, name: &str, role: Role, index: Option<i64>) -> User {
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    let campaign = (role != Role::Admin).then(|| CAMPAIGN.to_string());
    store
        .add_user(name, role, &hash, campaign, index)
        .await
        .unwrap()
}

/// The campaign's life, on the database at `url` (SQLite in `data` when none), its
/// files in `src`.
async fn live(data: &Path, url: Option<String>, src: &Path) -> Vec<(&'static str, String)> {
    let config = Config::new(data, url).unwrap();
    let store = Store::open(&config.database_url).await.unwrap();
    let import = |m: std::path::PathBuf| {
        let (store, config) = (store.clone(), config.clone());
        async move {
            tandem::app::import_manifest(&store, &config, CAMPAIGN, &m)
                .await
                .unwrap()
        }
    };
    // Clips with questions, two calibration clips.
    let mut lines: Vec<_> = (0..6)
        .map(|i| clip_line(src, &format!("C{i}"), TASK, &["OE", "OA"]))
        .collect();
    for (i, verdict) in [(0, "valid"), (1, "reject")] {
        let mut cal = clip_line(src, &format!("CAL{i}"), TASK, &[]);
        cal["calibration"] = if verdict == "valid" {
            json!({"verdict": "valid"})
        } else {
            json!({"verdict": "reject", "reasons": ["generation_artifact"]})
        };
        lines.push(cal);
    }
    import(write_manifest(src, "first.jsonl", &lines)).await;
    let v0 = user(&store, "val00", Role::Validator, Some(0)).await;
    let v1 = user(&store, "val01", Role::Validator, Some(1)).await;
    let author = user(&store, "author1", Role::Author, None).await;
    let campaign = store.campaign(CAMPAIGN).await.unwrap();

    // Calibration: val00 agrees twice; val01 misses one, is reset, then agrees.
    let cal = |who: &User, key: &str, req: VerdictRequest| {
        let (store, campaign, who, key) = (
            store.clone(),
            campaign.clone(),
            who.clone(),
            key.to_string(),
        );
        async move {
            store
                .record_calibration(&campaign, &who, Stage::Clip, &key, &req)
                .await
                .unwrap()
        }
    };
    cal(&v0, "CAL0", valid()).await;
    cal(&v0, "CAL1", reject("generation_artifact")).await;
    cal(&v1, "CAL0", reject("generation_artifact")).await;
    cal(&v1, "CAL1", reject("generation_artifact")).await;
    store
        .reset_calibration(&campaign, "val01", "admin")
        .await
        .unwrap();
    cal(&v1, "CAL0", valid()).await;
    cal(&v1, "CAL1", reject("generation_artifact")).await;

    // Stage 1: C0-C2 both pass; C3 both reject; C4 split (then accepted); C5 val00
    // changes its verdict before val01 decides.
    let verdict = |who: &User, stage: Stage, key: &str, req: VerdictRequest| {
        let (store, campaign, who, key) = (
            store.clone(),
            campaign.clone(),
            who.clone(),
            key.to_string(),
        );
        async move {
            store
                .record_verdict(&campaign, &who, stage, &key, &req, Origin::Api)
                .await
                .unwrap()
        }
    };
    for c in ["C0", "C1", "C2"] {
        verdict(&v0, Stage::Clip, c, valid()).await;
        verdict(&v1, Stage::Clip, c, valid()).await;
    }
    verdict(&v0, Stage::Clip, "C3", reject("physical_implausibility")).await;
    verdict(&v1, Stage::Clip, "C3", reject("generation_artifact")).await;
    verdict(&v0, Stage::Clip, "C4", valid()).await;
    verdict(&v1, Stage::Clip, "C4", reject("generation_artifact")).await;
    verdict(&v0, Stage::Clip, "C5", reject("generation_artifact")).await;
    verdict(&v0, Stage::Clip, "C5", valid()).await;
    verdict(&v1, Stage::Clip, "C5", valid()).await;
    store
        .resolve_split(
            &campaign,
            &author,
            Stage::Clip,
            "C4",
            &ResolutionRequest {
                verdict: Resolution::Accept,
                note: "the artifact is a reflection".into(),
            },
            Origin::Api,
        )
        .await
        .unwrap();

    // Stage 2 on the retained clips' questions.
    verdict(&v0, Stage::Question, "C0_OE", valid()).await;
    verdict(&v1, Stage::Question, "C0_OE", valid()).await;
    verdict(&v0, Stage::Question, "C0_OA", reject("incorrect_answer")).await;
    verdict(&v1, Stage::Question, "C0_OA", valid()).await;
    verdict(&v0, Stage::Question, "C1_OE", reject("ambiguous_options")).await;
    verdict(&v1, Stage::Question, "C1_OE", reject("incorrect_answer")).await;
    verdict(&v0, Stage::Question, "C4_OE", valid()).await;

    // A new version of the rejected clip goes back to its pair.
    let mut again = clip_line(src, "C3", TASK, &["OE", "OA"]);
    std::fs::write(src.join("videos/C3-v2.mp4"), fake_mp4("C3 second version")).unwrap();
    again["file"] = json!("videos/C3-v2.mp4");
    import(write_manifest(src, "second.jsonl", &[again])).await;
    verdict(&v0, Stage::Clip, "C3", valid()).await;

    // Records brought in from files: a verdict and a resolution.
    let (rows, problems) = tandem::io::records::read_decisions(
        "stage,item_id,validator,verdict,reasons,note,decided_at,time_spent_ms\n\
         2,C1_OA,val00,valid,,,2026-11-30T10:00:00Z,3000\n\
         2,C1_OA,val01,reject,incorrect_answer,off by one,2026-11-30T10:01:00Z,5000\n"
            .as_bytes(),
    );
    store
        .import_decisions(&campaign, &rows, problems, "decisions")
        .await
        .unwrap();
    let (rows, problems) = tandem::io::records::read_resolutions(
        "stage,item_id,author,verdict,note,decided_at\n2,C1_OA,author1,reject,the answer is wrong,2026-11-30T11:00:00Z\n"
            .as_bytes(),
    );
    store
        .import_resolutions(&campaign, &rows, problems, "resolutions")
        .await
        .unwrap();

    // The blind study: two sets, a participant answers both.
    let sets = crate::study::write_sets(&src.join("study"), 2);
    let checked =
        tandem::io::study::check_sets(&sets, None, &tandem::io::limits::Limits::default()).unwrap();
    tandem::app::import_study(&store, &config, CAMPAIGN, &checked, None)
        .await
        .unwrap();
    let part = user(&store, "part1", Role::Participant, None).await;
    let study = store.require_study(&campaign).await.unwrap();
    for position in 1..=2 {
        let shown = store.study_set(&study, &part, position).await.unwrap();
        // Each participant's order is drawn at random: the answer follows the clips
        // themselves (ranked by their served copy's hash), not where they were shown.
        let mut shas = Vec::new();
        for c in &shown.clips {
            shas.push(store.study_media(&c.token).await.unwrap().unwrap().sha256);
        }
        let mut sorted = shas.clone();
        sorted.sort();
        let place = |sha: &String| sorted.iter().position(|s| s == sha).unwrap();
        let ranks: Vec<Option<i64>> = shas.iter().map(|s| Some(place(s) as i64 + 1)).collect();
        let answer = SetAnswer {
            ranks: [ranks.clone(), ranks.clone(), ranks],
            labels: shas
                .iter()
                .map(|s| {
                    Some(if place(s) == 0 {
                        Truth::Fake
                    } else {
                        Truth::Real
                    })
                })
                .collect(),
        };
        store
            .answer_study_set(&study, &part, position, &answer)
            .await
            .unwrap();
    }
    let out = exports(&store, &config).await;
    store.close().await;
    out
}

#[tokio::test]
async fn the_same_life_gives_the_same_records_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("source");
    std::fs::create_dir_all(&src).unwrap();
    let sqlite = live(&dir.path().join("sqlite"), None, &src).await;
    // What the steps must have left, on any backend.
    let find = |name: &str| {
        sqlite
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let decisions = find("decisions.csv");
    assert_eq!(decisions.lines().count(), 1 + 23, "{decisions}");
    assert!(find("resolutions.csv").contains("the artifact is a reflection"));
    assert!(find("audit.csv").contains("new_version"));
    assert!(find("stats.json").contains("\"t15\""));
    let Some(url) = test_database_url().await else {
        eprintln!(
            "note: the PostgreSQL half of the conformance suite was SKIPPED (set TANDEM_TEST_POSTGRES, as .ci/run does)"
        );
        return;
    };
    let postgres = live(&dir.path().join("postgres"), Some(url), &src).await;
    for ((name, a), (_, b)) in sqlite.iter().zip(&postgres) {
        if *name == "study-responses.csv" {
            // Listed in each participant's own random order of sets and clips.
            let lines = |t: &str| {
                let mut l: Vec<String> = t.lines().map(str::to_string).collect();
                l[1..].sort();
                l
            };
            assert_eq!(
                lines(a),
                lines(b),
                "{name} differs between SQLite and PostgreSQL"
            );
        } else {
            assert_eq!(a, b, "{name} differs between SQLite and PostgreSQL");
        }
    }
}
