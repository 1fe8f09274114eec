//! The store itself, on whichever database the suite runs on (SQLite by default,
//! PostgreSQL under `TANDEM_TEST_POSTGRES`): the statements a verdict costs, the index
//! behind the next item, the queue counters kept by triggers, group commit, row locks,
//! and races between resolutions and between an import and verdicts.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tandem::domain::{Origin, Resolution, Stage, Verdict};
use tandem::store::count::measure;
use tandem::store::review::{ResolutionRequest, VerdictRequest};

const MC: &str = "MC_F_EGO_STA";

fn verdict(v: Verdict) -> VerdictRequest {
    VerdictRequest {
        verdict: v,
        reasons: if v == Verdict::Reject {
            vec!["generation_artifact".into()]
        } else {
            vec![]
        },
        note: String::new(),
        time_spent_ms: Some(1000),
        time_measure: None,
        version: tandem::domain::verdict::VersionRule::Newest,
    }
}

/// Every queue counter (the sum of its parts on PostgreSQL) equals a count of the
/// items it stands for.
async fn assert_counters_match(app: &TestApp) {
    use sqlx::Row;
    let rows = sqlx::query(
        "SELECT q.campaign_id, q.stage, q.user_id, q.total, q.done,
                (SELECT COUNT(*) FROM items i WHERE i.campaign_id = q.campaign_id AND i.stage = q.stage
                   AND (i.queue1 = q.user_id OR i.queue2 = q.user_id)) AS total_now,
                (SELECT COUNT(*) FROM items i WHERE i.campaign_id = q.campaign_id AND i.stage = q.stage
                   AND ((i.queue1 = q.user_id AND i.decided1 = 1) OR (i.queue2 = q.user_id AND i.decided2 = 1))) AS done_now
         FROM (SELECT campaign_id, stage, user_id,
                      CAST(SUM(total) AS BIGINT) AS total, CAST(SUM(done) AS BIGINT) AS done
               FROM queue_counts GROUP BY campaign_id, stage, user_id) q",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    for r in &rows {
        let (total, done): (i64, i64) = (r.get("total"), r.get("done"));
        let (total_now, done_now): (i64, i64) = (r.get("total_now"), r.get("done_now"));
        assert_eq!(
            (total, done),
            (total_now, done_now),
            "queue counter of user {} in stage {}",
            r.get::<i64, _>("user_id"),
            r.get::<i64, _>("stage")
        );
    }
    // On PostgreSQL each part counts the items whose id falls in it.
    if app.store.backend() == tandem::store::Backend::Postgres {
        let wrong = app
            .count(
                "SELECT COUNT(*) FROM queue_counts q WHERE NOT EXISTS (
                   SELECT 1 FROM items i WHERE i.campaign_id = q.campaign_id AND i.stage = q.stage
                     AND i.id % 8 = q.part AND (i.queue1 = q.user_id OR i.queue2 = q.user_id)
                   HAVING COUNT(*) = q.total AND COALESCE(SUM(CASE WHEN (i.queue1 = q.user_id AND i.decided1 = 1)
                                                    OR (i.queue2 = q.user_id AND i.decided2 = 1) THEN 1 ELSE 0 END), 0) = q.done)",
            )
            .await;
        assert_eq!(
            wrong, 0,
            "queue counter parts that do not match their items"
        );
    }
    // And no queue lacks its counter row.
    let missing = app
        .count(
            "SELECT COUNT(*) FROM items i WHERE i.queue1 IS NOT NULL AND NOT EXISTS
               (SELECT 1 FROM queue_counts q WHERE q.campaign_id = i.campaign_id AND q.stage = i.stage
                  AND q.user_id = i.queue1)",
        )
        .await;
    assert_eq!(missing, 0);
}

#[tokio::test]
async fn a_verdict_costs_four_statements_and_one_that_opens_questions_five_or_three_on_postgresql()
{
    let app = spawn_app().await;
    cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE"]).await;
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let v0 = app.store.user_by_name("val00").await.unwrap().unwrap();
    let v1 = app.store.user_by_name("val01").await.unwrap().unwrap();
    let s = &app.store;
    let vote = |who, key: &str, v| {
        let (campaign, key) = (campaign.clone(), key.to_string());
        async move {
            let (r, n) = measure(s.record_verdict(
                &campaign,
                who,
                Stage::Clip,
                &key,
                &verdict(v),
                Origin::Api,
            ))
            .await;
            r.unwrap();
            n
        }
    };
    // Load the item with its facts, load its decisions, insert the decision, update
    // the item; PostgreSQL writes the decision and the item in one statement (a
    // data-modifying WITH), SQLite in two.
    let pg = app.store.backend() == tandem::store::Backend::Postgres;
    let write = if pg { 1 } else { 2 };
    assert_eq!(vote(&v0, &ids[0], Verdict::Valid).await, 2 + write);
    // The same request again: the two loads find it stored, and nothing is written.
    assert_eq!(vote(&v0, &ids[0], Verdict::Valid).await, 2);
    // The partner's verdict completes the clip: retained, so its questions open (one
    // more UPDATE on SQLite, part of the one write on PostgreSQL).
    assert_eq!(
        vote(&v1, &ids[0], Verdict::Valid).await,
        if pg { 3 } else { 5 }
    );
    assert_eq!(app.outcome(1, &ids[0]).await, "both_pass");
    let q = format!("{}_OE", ids[0]);
    let opened: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM items WHERE item_key = $1 AND queue1 IS NOT NULL AND queue2 IS NOT NULL",
    )
    .bind(&q)
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(
        opened, 1,
        "the retained clip's question entered the pair's queues"
    );
    assert_counters_match(&app).await;
    // A split completes in the same number.
    assert_eq!(vote(&v0, &ids[1], Verdict::Valid).await, 2 + write);
    assert_eq!(vote(&v1, &ids[1], Verdict::Reject).await, 2 + write);
    assert_eq!(app.outcome(1, &ids[1]).await, "split");
    // A question's verdict: the same.
    let (r, n) = measure(app.store.record_verdict(
        &campaign,
        &v0,
        Stage::Question,
        &q,
        &verdict(Verdict::Valid),
        Origin::Api,
    ))
    .await;
    r.unwrap();
    assert_eq!(n, 2 + write);
    // A resolution: load, insert, update.
    let author = app.store.user_by_name("author1").await.unwrap().unwrap();
    let (r, n) = measure(app.store.resolve_split(
        &campaign,
        &author,
        Stage::Clip,
        &ids[1],
        &ResolutionRequest {
            verdict: Resolution::Accept,
            note: "fine".into(),
        },
        Origin::Api,
    ))
    .await;
    assert!(r.unwrap());
    assert!(n <= 4, "a resolution took {n} statements");
    assert_counters_match(&app).await;
}

/// The statements of one request as the server's metrics counted them.
async fn statements_of(app: &TestApp, admin: &str, method: &str, route: &str) -> (f64, u64) {
    let r = app.get("/metrics", admin).await;
    assert_eq!(r.status, StatusCode::OK);
    let find = |name: &str| -> Option<f64> {
        let prefix = format!("{name}{{method=\"{method}\",route=\"{route}\"}} ");
        r.text
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.parse().ok())
    };
    (
        find("tandem_request_statements_sum").unwrap_or(0.0),
        find("tandem_request_statements_count").unwrap_or(0.0) as u64,
    )
}

#[tokio::test]
async fn a_browser_decision_save_and_next_page_stays_under_twelve_statements() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 3, &[]).await;
    let web = app.login("val00").await;
    let item = "/c/{campaign}/review/{stage}/{item}";
    // The first page view fills the caches (campaign, token); measure the next ones.
    let first = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            None,
        )
        .await;
    assert_eq!(first.status, StatusCode::OK);
    let (get0, n0) = statements_of(&app, &c.admin, "GET", item).await;
    let (post0, p0) = statements_of(&app, &c.admin, "POST", item).await;
    let saved = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            Some(&[("verdict", "valid"), ("rendered_at", "0")]),
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let next = app
        .page(Some(&web), Method::GET, &saved.location().unwrap(), None)
        .await;
    assert_eq!(next.status, StatusCode::OK);
    let (get1, n1) = statements_of(&app, &c.admin, "GET", item).await;
    let (post1, p1) = statements_of(&app, &c.admin, "POST", item).await;
    assert_eq!((n1 - n0, p1 - p0), (1, 1), "one page and one save measured");
    let save = post1 - post0;
    let page = get1 - get0;
    // Save: the session, the verdict (4), the next item (1). Page: the session, the
    // item (2), the queue's progress and next item (1).
    assert!(save <= 6.0, "the save took {save} statements");
    assert!(page <= 4.0, "the next page took {page} statements");
    assert!(
        save + page < 12.0,
        "a browser decision took {} statements",
        save + page
    );
}

#[tokio::test]
async fn the_next_item_is_found_through_an_index() {
    let app = spawn_app().await;
    cast(&app).await;
    // Enough items that a planner would rather scan than seek if it had no index.
    app.import_clips(&[MC, "QC_F_EGO_DYN"], 600, &["OE", "OA"])
        .await;
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let v0 = app.store.user_by_name("val00").await.unwrap().unwrap();
    for stage in [Stage::Clip, Stage::Question] {
        let plan = app
            .store
            .explain_next_item(&campaign, &v0, stage)
            .await
            .unwrap();
        let text = plan.join("\n");
        match app.store.backend() {
            tandem::store::Backend::Sqlite => {
                // Two seeks, each in the order of its index (no sort of items); only
                // the two rows they find are ordered at the end.
                assert!(
                    !plan.iter().any(|l| l.starts_with("SCAN items")),
                    "stage {stage}: {text}"
                );
                for index in ["items_queue1", "items_queue2"] {
                    assert!(
                        plan.iter()
                            .any(|l| l.starts_with("SEARCH items USING INDEX") && l.contains(index)),
                        "stage {stage}: {text}"
                    );
                }
            }
            tandem::store::Backend::Postgres => {
                assert!(
                    !plan.iter().any(|l| l.contains("Seq Scan on items")),
                    "stage {stage}: {text}"
                );
                for index in ["items_queue1", "items_queue2"] {
                    assert!(
                        plan.iter().any(|l| l.contains(index)),
                        "stage {stage}: {text}"
                    );
                }
            }
        }
    }
}

/// SQLite compiles a prepared statement again whenever it binds a parameter that a
/// partial index's WHERE is compared with: the statements that name a stage as a
/// parameter (a verdict's load, the queues) must be compiled once, not on every run.
#[tokio::test]
async fn statements_naming_a_stage_are_compiled_once() {
    let app = spawn_app().await;
    if app.store.backend() != tandem::store::Backend::Sqlite {
        return;
    }
    cast(&app).await;
    app.import_clips(&[MC], 4, &["OE"]).await;
    let db = rusqlite::Connection::open(app.config.data_dir.join("tandem.db")).unwrap();
    // The statements themselves, as the store runs them, each with the parameter that
    // names the stage.
    for (sql, stage_param) in [
        (tandem::store::statements::FACTS_SQLITE, ":stage"),
        (tandem::store::statements::QUEUE, ":stage"),
    ] {
        let mut st = db.prepare(sql).unwrap();
        for stage in [1_i64, 2, 1, 2] {
            for i in 1..=st.parameter_count() {
                let name = st.parameter_name(i).unwrap().to_string();
                if name == stage_param {
                    st.raw_bind_parameter(i, stage).unwrap();
                } else if name == ":key" {
                    st.raw_bind_parameter(i, "x").unwrap();
                } else {
                    st.raw_bind_parameter(i, 1_i64).unwrap();
                }
            }
            let mut rows = st.raw_query();
            while rows.next().unwrap().is_some() {}
        }
        assert_eq!(
            st.get_status(rusqlite::StatementStatus::RePrepare),
            0,
            "compiled again: {sql}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_verdicts_at_once_are_committed_together() {
    let app = Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 64, &[]).await;
    let before = app.store.writer_stats();
    let mut tasks = Vec::new();
    for id in ids.iter().take(32) {
        let (app, token, id) = (app.clone(), c.v0.clone(), id.clone());
        tasks.push(tokio::spawn(async move {
            app.pass(&token, 1, &id).await.status
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), StatusCode::CREATED);
    }
    assert_eq!(
        app.count("SELECT COUNT(*) FROM decisions").await,
        32,
        "every acknowledged verdict is stored"
    );
    match (before, app.store.writer_stats()) {
        (Some(_), Some(after)) => {
            assert!(
                after.largest_batch > 1,
                "32 concurrent verdicts were committed one by one: {after:?}"
            );
        }
        // PostgreSQL commits each write in its own transaction, in parallel.
        _ => assert_eq!(app.store.backend(), tandem::store::Backend::Postgres),
    }
    assert_counters_match(&app).await;
}

#[tokio::test]
async fn on_postgresql_a_verdict_goes_through_while_another_items_row_is_locked() {
    let app = spawn_app().await;
    if app.store.backend() != tandem::store::Backend::Postgres {
        eprintln!("note: row locks are PostgreSQL's; SQLite has one writer (skipped here)");
        return;
    }
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    // Another transaction holds the first item's row.
    let mut holder = app.db.begin().await.unwrap();
    sqlx::query("SELECT id FROM items WHERE item_key = $1 AND stage = 1 FOR UPDATE")
        .bind(&ids[0])
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    // A verdict on the second item does not wait for it.
    let other = tokio::time::timeout(Duration::from_secs(10), app.pass(&c.v0, 1, &ids[1]))
        .await
        .expect("a verdict on another item waited for a lock it does not need");
    assert_eq!(other.status, StatusCode::CREATED);
    // A verdict on the held item waits until the holder ends, then is stored.
    let app = Arc::new(app);
    let waiting = {
        let (app, token, id) = (app.clone(), c.v0.clone(), ids[0].clone());
        tokio::spawn(async move { app.pass(&token, 1, &id).await.status })
    };
    // The verdict's transaction is seen waiting for the row's lock, not merely slow.
    let started = Instant::now();
    loop {
        let blocked: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity
             WHERE application_name = 'tandem' AND wait_event_type = 'Lock'",
        )
        .fetch_one(&app.db)
        .await
        .unwrap();
        if blocked > 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the verdict on the held row never waited for its lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!waiting.is_finished(), "the held row did not hold");
    holder.rollback().await.unwrap();
    assert_eq!(waiting.await.unwrap(), StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_authors_resolving_the_same_splits_at_once_leave_one_resolution_each() {
    let app = Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let author2 = app
        .user("author2", tandem::domain::Role::Author, None)
        .await;
    let ids = app.import_clips(&[MC], 20, &[]).await;
    for id in &ids {
        app.pass(&c.v0, 1, id).await;
        app.reject(&c.v1, 1, id, "generation_artifact").await;
    }
    let mut tasks = Vec::new();
    for id in &ids {
        for (token, v) in [(c.author.clone(), "accept"), (author2.clone(), "reject")] {
            let (app, id) = (app.clone(), id.clone());
            tasks.push(tokio::spawn(async move {
                app.resolve(&token, 1, &id, v, "seen").await.status
            }));
        }
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    let created = statuses
        .iter()
        .filter(|s| **s == StatusCode::CREATED)
        .count();
    let conflicts = statuses
        .iter()
        .filter(|s| **s == StatusCode::CONFLICT)
        .count();
    assert_eq!((created, conflicts), (20, 20), "{statuses:?}");
    assert_eq!(app.count("SELECT COUNT(*) FROM resolutions").await, 20);
    // Each item's outcome is its one resolution's.
    let agree = app
        .count(
            "SELECT COUNT(*) FROM items i JOIN resolutions r ON r.item_id = i.id
             WHERE (i.outcome = 'split_accepted' AND r.verdict = 'accept')
                OR (i.outcome = 'split_rejected' AND r.verdict = 'reject')",
        )
        .await;
    assert_eq!(agree, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_import_racing_verdicts_leaves_every_item_one_outcome_and_true_counters() {
    let app = Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 40, &[]).await;
    // Half are rejected by both, so that the import can bring new versions of them.
    for id in ids.iter().take(20) {
        app.reject(&c.v0, 1, id, "generation_artifact").await;
    }
    let src = app.source();
    let mut lines = Vec::new();
    for id in ids.iter().take(20) {
        let mut l = clip_line(&src, id, MC, &["OE"]);
        let file = format!("videos/{id}_v2.mp4");
        std::fs::write(src.join(&file), fake_mp4(&format!("{id} v2"))).unwrap();
        l["file"] = serde_json::json!(file);
        lines.push(l);
    }
    for i in 0..200 {
        lines.push(clip_line(&src, &format!("NEW_{i:03}"), MC, &["OE"]));
    }
    let manifest = write_manifest(&src, "second.jsonl", &lines);
    let import = {
        let app = app.clone();
        tokio::spawn(async move { app.import(&manifest).await })
    };
    // Meanwhile, the partner decides everything, and the first validator the rest.
    let mut tasks = Vec::new();
    for id in ids.iter() {
        let (app, token, id) = (app.clone(), c.v1.clone(), id.clone());
        tasks.push(tokio::spawn(async move {
            app.reject(&token, 1, &id, "generation_artifact")
                .await
                .status
        }));
    }
    for id in ids.iter().skip(20) {
        let (app, token, id) = (app.clone(), c.v0.clone(), id.clone());
        tasks.push(tokio::spawn(async move {
            app.pass(&token, 1, &id).await.status
        }));
    }
    for t in tasks {
        let s = t.await.unwrap();
        // A verdict for a version the import replaced meanwhile is refused, not lost.
        assert!(
            s == StatusCode::CREATED || s == StatusCode::CONFLICT || s == StatusCode::NOT_FOUND,
            "{s}"
        );
    }
    let summary = import.await.unwrap();
    // The import brings versions only of clips rejected by both; when it ran before
    // the partner's verdict, it is refused whole.
    if let Ok(s) = &summary {
        assert_eq!(s.clips_new, 200);
    }
    // Every complete item has one outcome from two counted decisions.
    let broken = app
        .count(
            "SELECT COUNT(*) FROM items WHERE outcome <> 'pending'
               AND (final1_id IS NULL OR final2_id IS NULL)",
        )
        .await;
    assert_eq!(broken, 0);
    let current = app
        .count(
            "SELECT COUNT(*) FROM (SELECT item_key FROM items WHERE stage = 1 AND is_current = 1
               GROUP BY campaign_id, item_key HAVING COUNT(*) > 1) t",
        )
        .await;
    assert_eq!(current, 0, "one current item per clip");
    assert_counters_match(&app).await;
}

#[tokio::test]
async fn a_verdict_sent_while_a_large_import_runs_is_answered_before_it_finishes() {
    let app = Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    // 100,000 clips sharing one video: the import spends its time checking and
    // hashing, which it does before it writes anything.
    let src = app.source();
    std::fs::create_dir_all(src.join("videos")).unwrap();
    std::fs::write(src.join("videos/one.mp4"), fake_mp4("shared")).unwrap();
    let mut text = String::with_capacity(100_000 * 160);
    for i in 0..100_000 {
        text.push_str(&format!(
            "{{\"clip_id\":\"BIG_{i:06}\",\"task\":\"{MC}\",\"file\":\"videos/one.mp4\",\"theme\":\"t\",\"generator\":\"g\",\"scene_graph\":{{}},\"scenario\":{{}},\"questions\":[]}}\n"
        ));
    }
    let manifest = src.join("big.jsonl");
    std::fs::write(&manifest, text).unwrap();
    let started = Instant::now();
    let import = {
        let app = app.clone();
        tokio::spawn(async move {
            let r = app.import(&manifest).await;
            (r, started.elapsed())
        })
    };
    // Nothing outside the import marks its checking; it takes seconds, so 200 ms puts
    // the verdict inside it (and if it did not, `answered < finished` holds anyway).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = app.pass(&c.v0, 1, &ids[0]).await;
    let answered = started.elapsed();
    assert_eq!(r.status, StatusCode::CREATED);
    let (summary, finished) = import.await.unwrap();
    assert_eq!(summary.unwrap().clips_new, 100_000);
    assert!(
        answered < finished,
        "the verdict ({answered:?}) waited for the import ({finished:?})"
    );
    assert_counters_match(&app).await;
}
