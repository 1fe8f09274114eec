//! Tables 11-13 computed from the database, for the paper-scale campaign (1,200 clips,
//! 9,800 questions, ~22,000 decisions) and for one 100 times larger (~1.1 million items,
//! ~2.2 million decisions).
//!
//! The paper-scale campaign is built by `tandem::demo::paper` through the real import
//! path. The large one is that campaign copied 99 more times inside the same tasks and
//! pairs (by SQL, with shifted ids), which is quicker to make than replaying 2.2
//! million verdicts and gives the queries the same shape at 100 times the rows.
//!
//! Run: `cargo bench --bench stats`. Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use std::sync::OnceLock;
use tandem::domain::facts::Scope;
use tandem::store::catalog::Campaign;
use tandem::{Config, Store};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    // The store reads through sqlx's `Any` in places; a filtered run may not reach
    // `replicate`, which installed the drivers before.
    sqlx::any::install_default_drivers();
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

struct Built {
    _dir: tempfile::TempDir,
    store: Store,
    campaign: Campaign,
}

async fn paper_scale() -> (tempfile::TempDir, Config, Store) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::new(&dir.path().join("data"), None).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let src = dir.path().join("src");
    let video = |t: usize, id: &str| {
        let mut v = b"\0\0\0\x18ftypisom\0\0\0\0isommp41".to_vec();
        v.extend_from_slice(format!("{t}/{id}").as_bytes());
        v
    };
    tandem::demo::paper::build(&store, &config, "default", &src, &video)
        .await
        .unwrap();
    (dir, config, store)
}

/// Copies every clip, version, question, item and decision `copies` more times, with
/// ids shifted by multiples of `STEP`, keys suffixed, and the same tasks and pairs.
async fn replicate(url: &str, copies: i64) {
    const STEP: i64 = 1_000_000;
    let statements = [
        "INSERT INTO clips (id, campaign_id, task_id, clip_key, current_version_id)
         SELECT id + k * $1, campaign_id, task_id, clip_key || '#' || k, current_version_id + k * $1
         FROM clips, copies",
        "INSERT INTO clip_versions (id, clip_id, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at)
         SELECT id + k * $1, clip_id + k * $1, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at
         FROM clip_versions, copies",
        "INSERT INTO questions (id, clip_version_id, position, question_key, qa_type, level, body, options, answer)
         SELECT id + k * $1, clip_version_id + k * $1, position, question_key || '#' || k, qa_type, level, body, options, answer
         FROM questions, copies",
        "INSERT INTO items (id, campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id, outcome,
                            rater1_id, rater2_id, verdict1, verdict2, final1_id, final2_id, completed_at, revision,
                            clip_version, qa_type, reasons1, reasons2, item_key, is_current, calibration, level,
                            sort_key, queue1, queue2, decided1, decided2)
         SELECT id + k * $1, campaign_id, task_id, stage, clip_version_id + k * $1, question_id + k * $1,
                parent_item_id + k * $1, outcome, rater1_id, rater2_id, verdict1, verdict2,
                final1_id + k * $1, final2_id + k * $1, completed_at, revision,
                clip_version, qa_type, reasons1, reasons2, item_key || '#' || k, is_current, calibration, level,
                sort_key || '#' || k, queue1, queue2, decided1, decided2
         FROM items, copies",
        "INSERT INTO decisions (id, item_id, validator_id, seq, verdict, reasons, note, time_spent_ms, decided_at, recorded_at, origin, campaign_id, stage)
         SELECT id + k * $1, item_id + k * $1, validator_id, seq, verdict, reasons, note, time_spent_ms, decided_at, recorded_at, origin, campaign_id, stage
         FROM decisions, copies",
    ];
    // The benchmark's own connection: this bulk copy is not something Tandem does.
    sqlx::any::install_default_drivers();
    let pool = sqlx::any::AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap();
    sqlx::query("CREATE TEMP TABLE copies (k BIGINT)")
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $1) INSERT INTO copies SELECT k FROM n")
        .bind(copies)
        .execute(&mut *tx)
        .await
        .unwrap();
    for sql in statements {
        sqlx::query(sql).bind(STEP).execute(&mut *tx).await.unwrap();
    }
    sqlx::query("DROP TABLE copies")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("ANALYZE").execute(&pool).await.unwrap();
}

fn built(large: bool) -> &'static Built {
    static SMALL: OnceLock<Built> = OnceLock::new();
    static LARGE: OnceLock<Built> = OnceLock::new();
    let cell = if large { &LARGE } else { &SMALL };
    cell.get_or_init(|| {
        runtime().block_on(async {
            let (dir, config, store) = paper_scale().await;
            if large {
                replicate(&config.database_url, 99).await;
            }
            let db = sqlx::any::AnyPoolOptions::new()
                .max_connections(1)
                .connect(&config.database_url)
                .await
                .unwrap();
            let campaign = store.campaign("default").await.unwrap();
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM decisions")
                .fetch_one(&db)
                .await
                .unwrap();
            let items: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM items")
                .fetch_one(&db)
                .await
                .unwrap();
            eprintln!("campaign with {items} items and {n} decisions");
            Built {
                _dir: dir,
                store,
                campaign,
            }
        })
    })
}

/// Tables 11, 12 and 13: the one aggregation and the tables built from it.
fn tables(b: &Built) -> tandem::report::QcReport {
    runtime().block_on(async {
        let scope = Scope::default();
        let outcomes = b.store.outcome_counts(&b.campaign, &scope).await.unwrap();
        tandem::report::build(
            &b.campaign.name,
            &b.campaign.taxonomy,
            &scope,
            &outcomes,
            &std::collections::HashMap::new(),
        )
    })
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn t11_t13_paper_scale(bencher: Bencher) {
    let b = built(false);
    let r = tables(b);
    assert_eq!(r.stage2.items_reviewed, 9_800);
    bencher.bench(|| tables(b));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn t11_t13_100x(bencher: Bencher) {
    let b = built(true);
    let r = tables(b);
    assert_eq!(r.stage2.items_reviewed, 980_000);
    assert_eq!(r.stage1.items_reviewed, 120_000);
    bencher.bench(|| tables(b));
}

/// The whole dashboard report: the tables plus the reasons and each validator's
/// verdicts, pass rate and median time.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn full_report_paper_scale(bencher: Bencher) {
    let b = built(false);
    bencher.bench(|| {
        runtime()
            .block_on(tandem::app::qc_report(
                &b.store,
                &b.campaign,
                &Scope::default(),
            ))
            .unwrap()
    });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn full_report_100x(bencher: Bencher) {
    let b = built(true);
    bencher.bench(|| {
        runtime()
            .block_on(tandem::app::qc_report(
                &b.store,
                &b.campaign,
                &Scope::default(),
            ))
            .unwrap()
    });
}

/// The whole `stats --json` reply (the dashboard's figures), review-quality model
/// included: the first read fits it (printed once), the later ones find the fit kept
/// for their unchanged inputs (`app::estimates`).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn stats_reply_paper_scale(bencher: Bencher) {
    let b = built(false);
    let reply = || {
        runtime()
            .block_on(tandem::app::stats_reply(
                &b.store,
                &b.campaign,
                &Scope::default(),
            ))
            .unwrap()
    };
    let start = std::time::Instant::now();
    let first = reply();
    eprintln!(
        "stats_reply_paper_scale: the first read, fitting the model: {:.0} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    assert!(first.review_quality.is_some());
    bencher.bench(reply);
}

/// Each decided item's probability of a defect (the export): the first read fits the
/// model over the items (printed once), the later ones find it kept.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn defect_probabilities_paper_scale(bencher: Bencher) {
    let b = built(false);
    let export = || {
        runtime()
            .block_on(tandem::app::exports::defect_probabilities(
                &b.store,
                &b.campaign,
            ))
            .unwrap()
    };
    let start = std::time::Instant::now();
    export();
    eprintln!(
        "defect_probabilities_paper_scale: the first read, fitting the model: {:.0} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    bencher.bench(export);
}
