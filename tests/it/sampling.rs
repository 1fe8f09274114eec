//! Sampled review inside a campaign (TUMTraffic-VideoQA's selective quality evaluation):
//! held items, a lot drawn from a stored seed, its sample reviewed by a pair as any item
//! is, the lot settled by the plan's acceptance number, and the items not drawn retained
//! "by sample" (their own outcome, column and mark) or sent to full review.

use crate::helpers::*;
use reqwest::StatusCode;
use serde_json::Value;
use tandem::domain::protocol::Protocol;

/// TUMTraffic's protocol with its own `[[sampling]]` rules instead of the shipped ones.
async fn campaign_sampling(app: &TestApp, rules: &str) -> Protocol {
    let text = tandem::domain::protocol::shipped("tumtraffic").unwrap();
    let head = &text[..text.find("[[sampling]]").unwrap_or(text.len())];
    let protocol = tandem::domain::protocol::parse(&format!("{head}\n{rules}")).unwrap();
    app.store
        .create_campaign(CAMPAIGN, &protocol)
        .await
        .unwrap();
    protocol
}

async fn keys(app: &TestApp, sql: &'static str) -> Vec<String> {
    sqlx::query_scalar(sql).fetch_all(&app.db).await.unwrap()
}

async fn run(app: &TestApp) -> tandem::store::sampling::SamplingRun {
    tandem::app::sampling::run(&app.store, CAMPAIGN)
        .await
        .unwrap()
}

async fn status(app: &TestApp) -> tandem::app::sampling::SamplingStatus {
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    tandem::app::sampling::status(&app.store, &campaign)
        .await
        .unwrap()
}

/// Both validators pass each of `keys` in `stage`.
async fn both_pass(app: &TestApp, c: &Cast, stage: u8, keys: &[String]) {
    for key in keys {
        for token in [&c.v0, &c.v1] {
            let r = app.pass(token, stage, key).await;
            assert_eq!(r.status, StatusCode::CREATED, "{key}: {}", r.text);
        }
    }
}

/// Both validators' queue of `stage` holds `total` items.
async fn queues_hold(app: &TestApp, c: &Cast, stage: u8, total: i64) {
    for token in [&c.v0, &c.v1] {
        let q = app.queue(token, stage).await;
        assert_eq!(q["total"].as_i64(), Some(total), "{q}");
    }
}

async fn stats(app: &TestApp, token: &str) -> Value {
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

#[tokio::test]
async fn an_accepted_lot_retains_its_undrawn_questions_by_sample_and_a_rejected_one_reviews_them_all()
 {
    let app = spawn_app().await;
    campaign_sampling(
        &app,
        "[[sampling]]\nstage = 2\ntask = \"VQA\"\nn = 4\nc = 0\n",
    )
    .await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["VQA"], 6, &["POS", "CNT"]).await;
    // Stage 1 reviews every clip; the clips' questions are held, in no queue.
    both_pass(&app, &c, 1, &ids).await;
    queues_hold(&app, &c, 2, 0).await;
    let s = status(&app).await;
    assert!(s.lots.is_empty());
    let held: Vec<(String, Option<String>, u64)> = s
        .held
        .iter()
        .map(|h| (h.task.clone(), h.qa_type.clone(), h.items))
        .collect();
    assert_eq!(
        held,
        vec![
            ("VQA".into(), Some("CNT".into()), 6),
            ("VQA".into(), Some("POS".into()), 6)
        ]
    );
    let held_one = format!("{}_POS", ids[0]);
    let r = app.pass(&c.v0, 2, &held_one).await;
    assert_eq!(
        r.status,
        StatusCode::NOT_FOUND,
        "a held item is in no queue: {}",
        r.text
    );

    // The draw: one lot of the task's 12 questions, 4 drawn into both validators' queues.
    let first = run(&app).await;
    assert!(first.settled.is_empty());
    assert_eq!(first.drawn.len(), 1);
    assert_eq!((first.drawn[0].size, first.drawn[0].drawn), (12, 4));
    queues_hold(&app, &c, 2, 4).await;
    let lot = &status(&app).await.lots[0];
    assert_eq!(
        (lot.state, lot.lot.n, lot.lot.c, lot.lot.size),
        ("reviewing", 4, 0, 12)
    );
    // The sample is the seed's: drawn again from the stored seed and the lot's members.
    let lot_members = app.store.lot_members(lot.lot.id).await.unwrap();
    assert_eq!(lot_members.members.len(), 12);
    assert_eq!(
        tandem::domain::sampling::draw(lot.lot.seed, &lot_members.members, 4),
        lot_members.drawn
    );
    let sample = keys(
        &app,
        "SELECT item_key FROM items WHERE drawn = 1 ORDER BY item_key",
    )
    .await;
    assert_eq!(sample.len(), 4);

    // Nothing to settle until every drawn item is decided.
    both_pass(&app, &c, 2, &sample[..3]).await;
    let early = run(&app).await;
    assert!(
        early.settled.is_empty() && early.drawn.is_empty(),
        "{early:?}"
    );
    // A split counts once its author resolves it.
    assert_eq!(
        app.pass(&c.v0, 2, &sample[3]).await.status,
        StatusCode::CREATED
    );
    let r = app.reject(&c.v1, 2, &sample[3], "incorrect_answer").await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(run(&app).await.settled.is_empty());
    let r = app
        .resolve(&c.author, 2, &sample[3], "accept", "the answer holds")
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let lot = &status(&app).await.lots[0].clone();
    assert_eq!(lot.state, "ready");
    // No defect in 4: the whole lot's defect rate is below 1 - 0.05^(1/4) at 95%.
    let bound = lot.upper_bound.unwrap();
    assert!((bound - (1.0 - 0.05f64.powf(0.25))).abs() < 1e-9, "{bound}");

    // Settled: accepted, and the 8 questions not drawn are retained by sample.
    let settled = run(&app).await;
    assert_eq!(settled.settled.len(), 1, "{settled:?}");
    let s = &settled.settled[0];
    assert_eq!((s.accepted, s.defects, s.undrawn), (true, 0, 8));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE outcome = 'by_sample'")
            .await,
        8
    );
    assert_eq!(status(&app).await.lots[0].state, "accepted");
    let by_sample = keys(
        &app,
        "SELECT item_key FROM items WHERE outcome = 'by_sample' ORDER BY item_key",
    )
    .await;
    let r = app.pass(&c.v0, 2, &by_sample[0]).await;
    assert_ne!(
        r.status,
        StatusCode::CREATED,
        "an item retained by sample takes no verdict"
    );

    // The tables: 4 reviewed, 8 retained by sample in their own column, the agreement
    // only over the 4 (3 both pass, 1 split).
    let body = stats(&app, &c.admin).await;
    let s2 = &body["t13"]["stage2"];
    assert_eq!(s2["items_reviewed"], 4, "{s2}");
    assert_eq!(s2["retained_by_sample"], 8, "{s2}");
    assert_eq!(s2["table"], serde_json::json!([[3, 1], [0, 0]]), "{s2}");
    let cells = &body["t12"]["VQA"];
    let reviewed: i64 = ["POS", "CNT"]
        .iter()
        .map(|q| cells[q]["reviewed"].as_i64().unwrap())
        .sum();
    let by: i64 = ["POS", "CNT"]
        .iter()
        .map(|q| cells[q]["retained_by_sample"].as_i64().unwrap())
        .sum();
    assert_eq!((reviewed, by), (4, 8), "{cells}");

    // The retained benchmark holds all 12, the 8 marked.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let (clips, counts) = app.store.retained(&campaign).await.unwrap();
    let questions: Vec<_> = clips.iter().flat_map(|c| &c.questions).collect();
    assert_eq!(questions.len(), 12);
    assert_eq!(questions.iter().filter(|q| q.by_sample).count(), 8);
    assert_eq!(
        (counts.questions_retained, counts.questions_by_sample),
        (12, 8)
    );

    // A second lot, from new clips: a defect above c = 0 rejects it, and its undrawn
    // questions go to full review by the pair.
    let src = app.source();
    let more: Vec<Value> = (0..3)
        .map(|i| clip_line(&src, &format!("VQB_{i}"), "VQA", &["POS", "CNT"]))
        .collect();
    app.import(&write_manifest(&src, "more.jsonl", &more))
        .await
        .unwrap();
    let new: Vec<String> = (0..3).map(|i| format!("VQB_{i}")).collect();
    both_pass(&app, &c, 1, &new).await;
    let second = run(&app).await;
    assert_eq!(second.drawn.len(), 1);
    assert_eq!((second.drawn[0].size, second.drawn[0].drawn), (6, 4));
    let lot2 = second.drawn[0].lot;
    let sample: Vec<String> = sqlx::query_scalar(
        "SELECT item_key FROM items WHERE lot_id = $1 AND drawn = 1 ORDER BY item_key",
    )
    .bind(lot2)
    .fetch_all(&app.db)
    .await
    .unwrap();
    for (i, q) in sample.iter().enumerate() {
        for token in [&c.v0, &c.v1] {
            let r = if i == 0 {
                app.reject(token, 2, q, "template_error").await
            } else {
                app.pass(token, 2, q).await
            };
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        }
    }
    let settled = run(&app).await;
    assert_eq!(settled.settled.len(), 1);
    let s = &settled.settled[0];
    assert_eq!((s.accepted, s.defects, s.undrawn), (false, 1, 2));
    queues_hold(&app, &c, 2, 10).await;
    let lots = status(&app).await.lots;
    assert_eq!(lots[1].state, "rejected");
    assert_eq!(lots[1].lot.defects, Some(1));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE outcome = 'by_sample'")
            .await,
        8,
        "a rejected lot retains nothing by sample"
    );
}

#[tokio::test]
async fn clips_retained_by_sample_open_their_questions_to_the_tasks_pair() {
    let app = spawn_app().await;
    campaign_sampling(
        &app,
        "[[sampling]]\nstage = 1\ntask = \"ROC\"\nn = 2\nc = 0\n",
    )
    .await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["ROC"], 5, &["CAP"]).await;
    queues_hold(&app, &c, 1, 0).await;
    let run1 = run(&app).await;
    assert_eq!((run1.drawn[0].size, run1.drawn[0].drawn), (5, 2));
    let sample = keys(
        &app,
        "SELECT item_key FROM items WHERE drawn = 1 ORDER BY item_key",
    )
    .await;
    // A clip a lot took stays in the QC: it cannot become a calibration clip.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let known = tandem::domain::rules::CheckedVerdict {
        verdict: tandem::domain::Verdict::Valid,
        reasons: Vec::new(),
        note: String::new(),
        flaw: None,
    };
    let err = app
        .store
        .mark_calibration(&campaign, &ids[0], &known)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is in a lot of the sampled review"), "{err}");
    both_pass(&app, &c, 1, &sample).await;
    let run2 = run(&app).await;
    assert_eq!(run2.settled[0].undrawn, 3);
    assert!(run2.settled[0].accepted);
    // Every clip's question is now open: 2 of reviewed clips, 3 of clips retained by
    // sample; the stage summary counts the 3 clips apart from the 2 reviewed.
    queues_hold(&app, &c, 2, 5).await;
    let unreviewed: Vec<&String> = ids.iter().filter(|i| !sample.contains(i)).collect();
    let q = format!("{}_CAP", unreviewed[0]);
    both_pass(&app, &c, 2, std::slice::from_ref(&q)).await;
    assert_eq!(app.outcome(2, &q).await, "both_pass");
    let body = stats(&app, &c.admin).await;
    assert_eq!(body["t13"]["stage1"]["items_reviewed"], 2, "{body}");
    assert_eq!(body["t13"]["stage1"]["retained_by_sample"], 3, "{body}");
    assert_eq!(body["t11"]["ROC"]["retained_by_sample"], 3, "{body}");
    assert_eq!(body["t11"]["ROC"]["reviewed"], 2, "{body}");
    // A run with nothing held or ready changes nothing.
    let idle = run(&app).await;
    assert!(idle.settled.is_empty() && idle.drawn.is_empty() && idle.released == 0);
}

#[tokio::test]
async fn a_campaign_that_reviews_every_item_has_no_sampling_to_run() {
    let app = spawn_app().await;
    let _ = cast(&app).await;
    app.import_clips(&["MC_F_EGO_STA"], 1, &["OA"]).await;
    let err = tandem::app::sampling::run(&app.store, CAMPAIGN)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no [[sampling]] rule"), "{err}");
    // And its tables carry no sampling column.
    let body = stats(
        &app,
        &app.user("admin9", tandem::domain::Role::Admin, None).await,
    )
    .await;
    assert!(
        body["t13"]["stage1"].get("retained_by_sample").is_none(),
        "{body}"
    );
}
