//! The QC engine on a paper-scale campaign (12 tasks x 100 clips, the 9,800 questions
//! of the applicability matrix) in a real SQLite file: importing it, recording a verdict
//! (a durable commit each), and finding a validator's next item: through the store (sqlx's
//! read pool) and, for the choice of read driver, the same statement through rusqlite on
//! the blocking pool (the hop a synchronous driver needs on an async server).
//!
//! Run: `cargo bench --bench engine`. Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use divan::Bencher;
use serde_json::json;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use tandem::domain::taxonomy::Taxonomy;
use tandem::domain::{Origin, Role, Stage, Verdict};
use tandem::store::accounts::User;
use tandem::store::catalog::Campaign;
use tandem::store::review::{VerdictRequest, VersionRule};
use tandem::{Config, Store};

fn main() {
    divan::main();
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

/// The clips' video: a real H.264 MP4, or without ffmpeg an MP4 header alone (its timing
/// is then not read).
fn base_mp4(dir: &Path) -> Vec<u8> {
    common::h264_mp4(dir).unwrap_or_else(|| {
        eprintln!("ffmpeg is not installed: the clips are MP4 headers alone");
        b"\0\0\0\x18ftypisom\0\0\0\0isommp41".to_vec()
    })
}

/// Writes a manifest of 100 clips per task with every applicable question.
fn paper_manifest(dir: &Path) -> std::path::PathBuf {
    let tax = Taxonomy::vgenst();
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    let base = base_mp4(dir);
    let mut text = String::new();
    for task in &tax.tasks {
        for i in 0..100 {
            let id = format!("{}_{i:04}", task.code);
            let file = format!("videos/{id}.mp4");
            // A real H.264 MP4 made distinct by a `free` box of its own at the end.
            std::fs::write(dir.join(&file), common::distinct(&base, &id)).unwrap();
            let questions: Vec<_> = tax.applicability[&task.code]
                .iter()
                .map(|qa| json!({"question_id": format!("{id}_{qa}"), "qa_type": qa,
                    "question": "Which object appears in the video?",
                    "options": ["a brass key", "a red candle", "a glass orb", "a feather quill"], "answer": 2}))
                .collect();
            text.push_str(
                &json!({"clip_id": id, "task": task.code, "file": file, "theme": "t",
                "scene_graph": {}, "scenario": {}, "questions": questions})
                .to_string(),
            );
            text.push('\n');
        }
    }
    let path = dir.join("manifest.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

struct Campaign1200 {
    dir: tempfile::TempDir,
    store: Store,
    campaign: Campaign,
    validator: User,
}

/// A paper-scale campaign with 12 validators, built once.
fn campaign() -> &'static Campaign1200 {
    static C: OnceLock<Campaign1200> = OnceLock::new();
    C.get_or_init(|| {
        runtime().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let config = Config::new(&dir.path().join("data"), None).unwrap();
            let store = tandem::Store::open(&config.database_url).await.unwrap();
            let manifest = paper_manifest(&dir.path().join("src"));
            tandem::app::import_manifest(&store, &config, "default", &manifest)
                .await
                .unwrap();
            let hash = tandem::auth::hash_password("benchmark password").unwrap();
            let mut validator = None;
            for i in 0..12 {
                let u = store
                    .add_user(
                        &format!("val{i:02}"),
                        Role::Validator,
                        &hash,
                        Some("default".into()),
                        Some(i),
                    )
                    .await
                    .unwrap();
                validator.get_or_insert(u);
            }
            let campaign = store.campaign("default").await.unwrap();
            Campaign1200 {
                dir,
                store,
                campaign,
                validator: validator.unwrap(),
            }
        })
    })
}

/// Importing 1,200 clips with 9,800 questions (checking; hashing, copying and reading the
/// frame timing of each video; storing).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn import_paper_scale_manifest(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            let dir = tempfile::tempdir().unwrap();
            let manifest = paper_manifest(&dir.path().join("src"));
            let config = Config::new(&dir.path().join("data"), None).unwrap();
            let store = runtime()
                .block_on(tandem::Store::open(&config.database_url))
                .unwrap();
            (dir, config, store, manifest)
        })
        .bench_local_values(|(dir, config, store, manifest)| {
            runtime().block_on(async {
                let s = tandem::app::import_manifest(&store, &config, "default", &manifest)
                    .await
                    .unwrap();
                assert_eq!(s.questions_new, 9800);
            });
            dir
        });
}

/// One verdict recorded through the store: the row lock, the checks, the insert and a
/// durable commit (WAL, synchronous = FULL). val00 alternates its verdict on the 100
/// clips of its first task, so every call stores a new decision.
#[divan::bench(sample_count = 50, sample_size = 20)]
fn record_verdict(bencher: Bencher) {
    let c = campaign();
    static N: AtomicUsize = AtomicUsize::new(0);
    bencher.bench(|| {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let reject = (n / 100).is_multiple_of(2);
        let req = VerdictRequest {
            verdict: if reject {
                Verdict::Reject
            } else {
                Verdict::Valid
            },
            reasons: if reject {
                vec!["generation_artifact".into()]
            } else {
                vec![]
            },
            note: String::new(),
            time_spent_ms: Some(4000),
            time_measure: None,
            version: VersionRule::Newest,
        };
        let key = format!("MC_F_EGO_STA_{:04}", n % 100);
        runtime().block_on(async {
            let r = c
                .store
                .record_verdict(
                    &c.campaign,
                    &c.validator,
                    Stage::Clip,
                    &key,
                    &req,
                    Origin::Api,
                )
                .await
                .unwrap();
            assert!(r.recorded);
        });
    });
}

/// A validator's queue: done/total and the next item, over a paper-scale campaign.
#[divan::bench(sample_count = 50, sample_size = 20)]
fn queue_next_item(bencher: Bencher) {
    let c = campaign();
    bencher.bench(|| {
        runtime()
            .block_on(c.store.queue(&c.campaign, &c.validator, Stage::Clip))
            .unwrap()
    });
}

/// The same statement as `queue_next_item`'s next item and counters (`QUEUE`), read
/// through rusqlite on tokio's blocking pool, as a rusqlite read pool would serve it.
#[divan::bench(sample_count = 50, sample_size = 20)]
fn queue_next_item_rusqlite_on_the_blocking_pool(bencher: Bencher) {
    let c = campaign();
    static DB: OnceLock<std::sync::Arc<std::sync::Mutex<rusqlite::Connection>>> = OnceLock::new();
    let db = DB
        .get_or_init(|| {
            let path = c.dir.path().join("data").join("tandem.db");
            let conn = rusqlite::Connection::open_with_flags(
                path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            std::sync::Arc::new(std::sync::Mutex::new(conn))
        })
        .clone();
    let (campaign, validator) = (c.campaign.id, c.validator.id);
    bencher.bench(|| {
        let db = db.clone();
        runtime().block_on(async move {
            tokio::task::spawn_blocking(move || {
                let conn = db.lock().unwrap();
                let mut st = conn
                    .prepare_cached(tandem::store::statements::QUEUE)
                    .unwrap();
                st.query_row(
                    &[
                        (":campaign", &campaign as &dyn rusqlite::ToSql),
                        (":validator", &validator),
                        (":stage", &1_i64),
                    ],
                    |r| {
                        Ok((
                            r.get::<_, Option<i64>>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, Option<String>>(3)?,
                        ))
                    },
                )
                .unwrap()
            })
            .await
            .unwrap()
        })
    });
}
