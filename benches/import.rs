//! A large import and the verdicts that arrive while it runs, in a real SQLite file:
//! 100,000 clips sharing one video (the import's write phase at its largest: 300,000
//! rows and their indexes), then 20,000 clips with 80,000 questions (500,000 rows), each
//! into a campaign that is being reviewed. One validator sends verdicts all along; the
//! longest any of them waited is the time the import held the writer.
//!
//! Printed beside them, measured on the same disk in the same run: the rate at which
//! SQLite inserts rows in one transaction into a table with one index (WAL,
//! `synchronous = FULL`), so that the ratio holds on a noisy machine.
//!
//! The second part imports distinct videos, the way a lab's benchmark arrives: 2,040
//! and 100,000 H.264 MP4 clips (one made with ffmpeg, made distinct by a `free` box of
//! their own at the end), each read once, hashed, copied and its frame timing read from
//! its own tables, several at once; beside them, the time of the road before (ffprobe on
//! each video, one after another), measured on a sample of them.
//!
//! Run: `cargo bench --bench import` (`TANDEM_BENCH_ONLY=writer` or `videos` runs one
//! part). Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tandem::domain::{Origin, Role, Stage, Verdict};
use tandem::store::review::{VerdictRequest, VersionRule};
use tandem::{Config, Store};

const CLIPS: usize = 100_000;
const CLIPS_WITH_QUESTIONS: usize = 20_000;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

fn write_manifests(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    std::fs::write(
        dir.join("videos/one.mp4"),
        b"\0\0\0\x18ftypisom\0\0\0\0isommp41shared",
    )
    .unwrap();
    let line = |id: &str, task: &str, questions: &str| {
        format!(
            "{{\"clip_id\":\"{id}\",\"task\":\"{task}\",\"file\":\"videos/one.mp4\",\"theme\":\"t\",\"scene_graph\":{{}},\"scenario\":{{}},\"questions\":[{questions}]}}\n"
        )
    };
    let first = dir.join("first.jsonl");
    std::fs::write(&first, line("FIRST", "MC_F_EGO_STA", "")).unwrap();
    let clips = dir.join("clips.jsonl");
    let mut text = String::with_capacity(CLIPS * 160);
    for i in 0..CLIPS {
        text.push_str(&line(&format!("BIG_{i:06}"), "MC_F_EGO_STA", ""));
    }
    std::fs::write(&clips, text).unwrap();
    let questions = dir.join("questions.jsonl");
    let mut text = String::with_capacity(CLIPS_WITH_QUESTIONS * 600);
    for i in 0..CLIPS_WITH_QUESTIONS {
        let qs: Vec<String> = ["OE", "OA", "TO", "CM"]
            .iter()
            .map(|qa| {
                format!(
                    "{{\"question_id\":\"Q{i:06}_{qa}\",\"qa_type\":\"{qa}\",\"question\":\"Which object appears?\",\"options\":[\"a\",\"b\",\"c\",\"d\"],\"answer\":0}}"
                )
            })
            .collect();
        text.push_str(&line(&format!("Q_{i:06}"), "RV_E_EGO_DYN", &qs.join(",")));
    }
    std::fs::write(&questions, text).unwrap();
    (first, clips, questions)
}

/// Rows a second into a table with one index, in one transaction, on the same disk.
fn raw_insert_rate(dir: &Path, rows: usize) -> f64 {
    let db = rusqlite::Connection::open(dir.join("raw.db")).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v TEXT NOT NULL);
         CREATE INDEX t_k ON t (k);",
    )
    .unwrap();
    let started = Instant::now();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    {
        let mut insert = db.prepare("INSERT INTO t (k, v) VALUES (?1, ?2)").unwrap();
        for i in 0..rows {
            insert
                .execute(rusqlite::params![
                    format!("BIG_{i:06}"),
                    "a value of some length"
                ])
                .unwrap();
        }
    }
    db.execute_batch("COMMIT").unwrap();
    rows as f64 / started.elapsed().as_secs_f64()
}

async fn run() {
    let only = std::env::var("TANDEM_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "writer" {
        writer().await;
    }
    if only.is_empty() || only == "videos" {
        videos().await;
    }
}

/// Writes `n` distinct MP4 files in `dir`: `base` with a `free` box of 16 bytes of its
/// own appended (a box every reader skips); returns their names.
fn distinct_videos(dir: &Path, base: &[u8], n: usize) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|i| {
            let name = format!("v{i:06}.mp4");
            let bytes = common::distinct(base, &format!("tandem-{i:09}"));
            std::fs::write(dir.join(&name), bytes).unwrap();
            name
        })
        .collect()
}

/// Imports of distinct videos, their frame timing included.
async fn videos() {
    if !tandem::io::video::ffmpeg_available() {
        eprintln!("ffmpeg is not installed: the import of distinct videos is not measured");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = common::h264_mp4(dir.path()).expect("ffmpeg made no clip");
    println!(
        "| import of distinct H.264 MP4 clips ({} KB each), timing included | clips | took | a clip | ffprobe on each, one after another | the road before, for these clips |",
        base.len() / 1024
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let mut ffprobe_each: Option<f64> = None;
    for n in [2_040, 100_000] {
        let src = dir.path().join(format!("src{n}"));
        let names = distinct_videos(&src.join("videos"), &base, n);
        let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
        let mut text = String::with_capacity(n * 150);
        for (i, name) in names.iter().enumerate() {
            let task = &tax.tasks[i % tax.tasks.len()].code;
            text.push_str(&format!(
                "{{\"clip_id\":\"D_{i:06}\",\"task\":\"{task}\",\"file\":\"videos/{name}\",\"questions\":[]}}\n"
            ));
        }
        let manifest = src.join("manifest.jsonl");
        std::fs::write(&manifest, text).unwrap();
        // The road before: ffprobe, one video after another (measured on 200 of them).
        let each = *ffprobe_each.get_or_insert_with(|| {
            let sample: Vec<PathBuf> = names
                .iter()
                .take(200)
                .map(|n| src.join("videos").join(n))
                .collect();
            let started = Instant::now();
            for v in &sample {
                tandem::io::video::probe_read(v).unwrap();
            }
            started.elapsed().as_secs_f64() / sample.len() as f64
        });
        let data = dir.path().join(format!("data{n}"));
        let config = Config::new(&data, None).unwrap();
        let store = Store::open(&config.database_url).await.unwrap();
        let started = Instant::now();
        let summary = tandem::app::import_manifest(&store, &config, "default", &manifest)
            .await
            .unwrap();
        let took = started.elapsed().as_secs_f64();
        assert_eq!((summary.clips_new, summary.videos_timed), (n, n));
        println!(
            "| {n} clips | {n} | {took:.2} s | {:.2} ms | {:.1} ms a clip | {:.0} s (estimated from 200) |",
            1000.0 * took / n as f64,
            1000.0 * each,
            each * n as f64
        );
        store.close().await;
        let _ = std::fs::remove_dir_all(&data);
        let _ = std::fs::remove_dir_all(&src);
    }
}

async fn writer() {
    let dir = tempfile::tempdir().unwrap();
    let (first, clips, questions) = write_manifests(&dir.path().join("src"));
    let raw = raw_insert_rate(dir.path(), 300_000);
    let config = Config::new(&dir.path().join("data"), None).unwrap();
    let store = Store::open(&config.database_url).await.unwrap();
    let hash = tandem::auth::hash_password("benchmark password").unwrap();
    let mut validator = None;
    for i in 0..4 {
        let index = Some(i);
        let u = store
            .add_user(
                &format!("val{i:02}"),
                Role::Validator,
                &hash,
                Some("default".into()),
                index,
            )
            .await
            .unwrap();
        validator.get_or_insert(u);
    }
    let validator = validator.unwrap();
    tandem::app::import_manifest(&store, &config, "default", &first)
        .await
        .unwrap();
    let campaign = store.campaign("default").await.unwrap();

    println!("| what | rows | took | rows a second | longest verdict wait | verdicts during |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| raw SQLite inserts, one transaction, one index | 300000 | {:.2} s | {raw:.0} | | |",
        300_000.0 / raw
    );
    for (what, manifest, rows) in [
        ("100,000 clips", &clips, CLIPS * 3),
        (
            "20,000 clips with 80,000 questions",
            &questions,
            CLIPS_WITH_QUESTIONS * 3 + CLIPS_WITH_QUESTIONS * 4 * 2,
        ),
    ] {
        let running = Arc::new(AtomicBool::new(true));
        let sender = {
            let (store, campaign, validator, running) = (
                store.clone(),
                campaign.clone(),
                validator.clone(),
                running.clone(),
            );
            tokio::spawn(async move {
                let (mut longest, mut sent, mut n) = (Duration::ZERO, 0u64, 0u64);
                while running.load(Ordering::Relaxed) {
                    n += 1;
                    let req = VerdictRequest {
                        verdict: if n % 2 == 0 {
                            Verdict::Valid
                        } else {
                            Verdict::Reject
                        },
                        reasons: if n % 2 == 0 {
                            vec![]
                        } else {
                            vec!["generation_artifact".into()]
                        },
                        note: String::new(),
                        time_spent_ms: Some(4000),
                        time_measure: None,
                        version: VersionRule::Newest,
                    };
                    let asked = Instant::now();
                    store
                        .record_verdict(
                            &campaign,
                            &validator,
                            Stage::Clip,
                            "FIRST",
                            &req,
                            Origin::Api,
                        )
                        .await
                        .unwrap();
                    longest = longest.max(asked.elapsed());
                    sent += 1;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                (longest, sent)
            })
        };
        let started = Instant::now();
        tandem::app::import_manifest(&store, &config, "default", manifest)
            .await
            .unwrap();
        let took = started.elapsed();
        running.store(false, Ordering::Relaxed);
        let (longest, sent) = sender.await.unwrap();
        println!(
            "| import of {what} (check, copy, write) | {rows} | {:.2} s | | {:.0} ms ({:.2}x the raw rate's time for its rows) | {sent} |",
            took.as_secs_f64(),
            longest.as_secs_f64() * 1000.0,
            longest.as_secs_f64() / (rows as f64 / raw),
        );
    }
}
