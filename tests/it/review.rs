//! The review loop through the JSON API: both stages, the intersection rule, splits
//! and their resolution, changes of verdict, independence.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tandem::domain::Role;

const MC: &str = "MC_F_EGO_STA";

#[tokio::test]
async fn both_stages_run_from_import_to_retained_items_with_a_split_resolved() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 3, &["OE", "OA", "CR"]).await;
    let (keep, split, drop) = (&ids[0], &ids[1], &ids[2]);

    // Stage 1: the pair reviews every clip.
    let q = app.queue(&c.v0, 1).await;
    assert_eq!(
        (q["done"].as_i64(), q["total"].as_i64()),
        (Some(0), Some(3))
    );
    assert_eq!(q["next"], json!(keep));
    assert_eq!(app.pass(&c.v0, 1, keep).await.status, StatusCode::CREATED);
    assert_eq!(app.outcome(1, keep).await, "pending");
    assert_eq!(app.pass(&c.v1, 1, keep).await.status, StatusCode::CREATED);
    assert_eq!(app.outcome(1, keep).await, "both_pass");

    app.pass(&c.v0, 1, split).await;
    app.reject(&c.v1, 1, split, "generation_artifact").await;
    assert_eq!(app.outcome(1, split).await, "split");

    app.reject(&c.v0, 1, drop, "prompt_drift").await;
    app.reject(&c.v1, 1, drop, "physical_implausibility").await;
    assert_eq!(app.outcome(1, drop).await, "both_reject");

    let q = app.queue(&c.v0, 1).await;
    assert_eq!(
        (q["done"].as_i64(), q["total"].as_i64()),
        (Some(3), Some(3))
    );
    assert!(q["next"].is_null());

    // Stage 2 is open only for the clip both passed; the split waits for the author.
    let q2 = app.queue(&c.v0, 2).await;
    assert_eq!(q2["total"].as_i64(), Some(3), "{q2}");
    let closed = format!("{split}_OE");
    let r = app.pass(&c.v0, 2, &closed).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

    // The author sees both verdicts with reasons and accepts the split.
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/splits/1"), &c.author)
        .await;
    assert_eq!(r.body["splits"].as_array().map(Vec::len), Some(1));
    let s = &r.body["splits"][0];
    assert_eq!(s["item_id"], json!(split));
    assert_eq!(s["rater1"]["validator"], "val00");
    assert_eq!(s["rater2"]["reasons"], json!(["generation_artifact"]));
    let r = app.resolve(&c.author, 1, split, "accept", "").await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a note is required"
    );
    let r = app
        .resolve(&c.author, 1, split, "accept", "flicker is within tolerance")
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(app.outcome(1, split).await, "split_accepted");
    let r = app
        .resolve(&c.author, 1, split, "reject", "changed my mind")
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "a resolution is final");
    let q2 = app.queue(&c.v1, 2).await;
    assert_eq!(q2["total"].as_i64(), Some(6), "{q2}");

    // Stage 2 on the kept clip: OE passes, OA splits and is rejected, CR both reject.
    for (v, t) in [(&c.v0, "OE"), (&c.v1, "OE")] {
        app.pass(v, 2, &format!("{keep}_{t}")).await;
    }
    app.pass(&c.v0, 2, &format!("{keep}_OA")).await;
    app.reject(&c.v1, 2, &format!("{keep}_OA"), "ambiguous_options")
        .await;
    app.resolve(
        &c.author,
        2,
        &format!("{keep}_OA"),
        "reject",
        "two options fit",
    )
    .await;
    let r = app
        .reject(&c.v0, 2, &format!("{keep}_CR"), "single_frame_solvable")
        .await;
    assert_eq!(
        r.status,
        StatusCode::CREATED,
        "L3 allows single_frame_solvable: {}",
        r.text
    );
    app.reject(&c.v1, 2, &format!("{keep}_CR"), "incorrect_answer")
        .await;
    // The accepted split's questions all pass.
    for t in ["OE", "OA", "CR"] {
        app.pass(&c.v0, 2, &format!("{split}_{t}")).await;
        app.pass(&c.v1, 2, &format!("{split}_{t}")).await;
    }
    assert_eq!(app.outcome(2, &format!("{keep}_OE")).await, "both_pass");
    assert_eq!(
        app.outcome(2, &format!("{keep}_OA")).await,
        "split_rejected"
    );
    assert_eq!(app.outcome(2, &format!("{keep}_CR")).await, "both_reject");

    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let (retained, counts) = app.store.retained(&campaign).await.unwrap();
    let got: Vec<(&str, Vec<&str>)> = retained
        .iter()
        .map(|c| {
            (
                c.clip_id.as_str(),
                c.questions.iter().map(|q| q.question_id.as_str()).collect(),
            )
        })
        .collect();
    let (kq, sq) = (
        vec![format!("{keep}_OE")],
        vec![
            format!("{split}_OE"),
            format!("{split}_OA"),
            format!("{split}_CR"),
        ],
    );
    assert_eq!(
        got,
        vec![
            (keep.as_str(), kq.iter().map(String::as_str).collect()),
            (split.as_str(), sq.iter().map(String::as_str).collect()),
        ]
    );
    assert_eq!((counts.clips_rejected, counts.questions_rejected), (1, 2));
}

#[tokio::test]
async fn a_validator_never_sees_a_trace_of_the_partners_verdict() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE"]).await;
    let item = &ids[0];
    // val00 passes; the partner rejects with a reason and a note val00 never used.
    app.pass(&c.v0, 1, item).await;
    let secret_note = "partner-note-7f3a";
    app.verdict(
        &c.v1,
        1,
        item,
        json!({"verdict": "reject", "reasons": ["prompt_drift"], "note": secret_note}),
    )
    .await;
    assert_eq!(app.outcome(1, item).await, "split");

    let base = format!("/api/v1/campaigns/{CAMPAIGN}");
    let mut replies = Vec::new();
    for path in [
        "/api/v1/me".to_string(),
        "/api/v1/campaigns".to_string(),
        format!("{base}/queue/1"),
        format!("{base}/queue/1/items"),
        format!("{base}/queue/2"),
        format!("{base}/queue/2/items"),
        format!("{base}/items/1/{item}"),
        format!("{base}/items/1/{}", ids[1]),
        format!("{base}/items/2/{item}_OE"),
        format!("{base}/splits/1"),
        format!("{base}/splits/1/{item}"),
        format!("{base}/tasks"),
        format!("{base}/progress"),
        format!("{base}/export/decisions"),
    ] {
        replies.push(app.get(&path, &c.v0).await);
    }
    // Repeating or changing the verdict after the partner decided.
    replies.push(app.pass(&c.v0, 1, item).await);
    replies.push(app.reject(&c.v0, 1, item, "generation_artifact").await);
    for r in &replies {
        for trace in [
            "val01",
            secret_note,
            "prompt_drift",
            "split",
            "both_",
            "outcome",
            "rater",
        ] {
            assert!(
                !r.text.contains(trace),
                "`{trace}` appears in a reply to the validator: {}",
                r.text
            );
        }
    }
    // What the validator does see of the item: their own verdict, now locked.
    let r = app.get(&format!("{base}/items/1/{item}"), &c.v0).await;
    assert_eq!(r.body["my_decisions"][0]["verdict"], "valid");
    assert_eq!(r.body["locked"], true);
}

#[tokio::test]
async fn a_repeated_identical_request_records_one_decision() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    let body = json!({"verdict": "reject", "reasons": ["generation_artifact"], "note": "morphing", "time_spent_ms": 5200});
    let first = app.verdict(&c.v0, 1, &ids[0], body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let again = app.verdict(&c.v0, 1, &ids[0], body.clone()).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body["recorded"], false);
    // A double click: the same request twice at the same moment.
    let (a, b) = tokio::join!(
        app.verdict(&c.v1, 1, &ids[0], body.clone()),
        app.verdict(&c.v1, 1, &ids[0], body.clone())
    );
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::CREATED]);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
    assert_eq!(app.outcome(1, &ids[0]).await, "both_reject");
}

#[tokio::test]
async fn a_verdict_may_change_until_the_partner_decides_and_every_change_is_kept() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    let item = &ids[0];
    app.pass(&c.v0, 1, item).await;
    let r = app.reject(&c.v0, 1, item, "prompt_drift").await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["decision"]["change"], 2);
    app.pass(&c.v1, 1, item).await;
    // The last verdict before the pair completed counts: a split.
    assert_eq!(app.outcome(1, item).await, "split");
    let r = app.pass(&c.v0, 1, item).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 3);

    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/decisions"),
            &c.admin,
        )
        .await;
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(
        lines[0],
        "stage,item_id,validator,verdict,reasons,note,decided_at,time_spent_ms,clip_version,final,time_measure,protocol_version"
    );
    let finals: Vec<(&str, &str)> = lines[1..]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[3], f[9])
        })
        .collect();
    assert_eq!(
        finals,
        vec![("valid", "false"), ("reject", "true"), ("valid", "true")]
    );
}

#[tokio::test]
async fn reasons_must_fit_the_verdict_the_stage_and_the_level() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &["OA"]).await;
    let item = &ids[0];
    let cases = [
        (1, item.clone(), json!({"verdict": "reject"}), "reasons"),
        (
            1,
            item.clone(),
            json!({"verdict": "valid", "reasons": ["prompt_drift"]}),
            "reasons",
        ),
        (
            1,
            item.clone(),
            json!({"verdict": "reject", "reasons": ["other"]}),
            "note",
        ),
        (
            1,
            item.clone(),
            json!({"verdict": "reject", "reasons": ["incorrect_answer"]}),
            "reasons",
        ),
        (1, item.clone(), json!({"verdict": "maybe"}), "verdict"),
        (
            1,
            item.clone(),
            json!({"verdict": "valid", "time_spent_ms": -4}),
            "time_spent_ms",
        ),
    ];
    for (stage, it, body, field) in cases {
        let r = app.verdict(&c.v0, stage, &it, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.body["field"], field, "{body}: {}", r.text);
    }
    let r = app
        .verdict(&c.v0, 1, item, json!({"verdict": "valid", "colour": 3}))
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "unknown fields are refused"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 0);

    // Stage 2: single_frame_solvable is for L3 questions only (OA is L1).
    app.pass(&c.v0, 1, item).await;
    app.pass(&c.v1, 1, item).await;
    let q = format!("{item}_OA");
    let r = app.reject(&c.v0, 2, &q, "single_frame_solvable").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("L3"), "{}", r.text);
    let r = app.reject(&c.v0, 2, &q, "generation_artifact").await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "a Stage 1 reason in Stage 2"
    );
    let r = app
        .verdict(
            &c.v0,
            2,
            &q,
            json!({"verdict": "reject", "reasons": ["other"], "note": "typo in option 3"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn a_validator_sees_only_the_tasks_of_their_pairs() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    // A third validator: task 0 = (val00, val01), task 1 = (val01, val02), task 2 = (val02, val00).
    let v2 = app.user("val02", Role::Validator, Some(2)).await;
    let ids = app
        .import_clips(&[MC, "QC_F_EGO_DYN", "CI_F_EXO_STA"], 1, &[])
        .await;
    let q = app.queue(&v2, 1).await;
    assert_eq!(q["total"], 2);
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/items/1/{}", ids[0]),
            &v2,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app.pass(&v2, 1, &ids[0]).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(app.pass(&v2, 1, &ids[1]).await.status, StatusCode::CREATED);
    assert_eq!(
        app.pass(&c.v0, 1, &ids[1]).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.queue(&c.v1, 1).await["total"], 2);
}

#[tokio::test]
async fn an_admin_overrides_a_pair_and_started_items_keep_their_pair() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let v2 = app.user("val02", Role::Validator, Some(2)).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    // val00 starts the first clip under the default pair (val00, val01).
    app.pass(&c.v0, 1, &ids[0]).await;
    let path = format!("/api/v1/campaigns/{CAMPAIGN}/tasks/{MC}/pair");
    let r = app
        .call(
            Method::PUT,
            &path,
            Some(&c.admin),
            Some(json!({"rater1": "val02", "rater2": "val00"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        (r.body["rater1"].as_str(), r.body["overridden"].as_bool()),
        (Some("val02"), Some(true))
    );
    // The started clip stays with (val00, val01); the other goes to (val02, val00).
    assert_eq!(
        app.pass(&c.v1, 1, &ids[0]).await.status,
        StatusCode::CREATED
    );
    assert_eq!(
        app.pass(&c.v1, 1, &ids[1]).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.pass(&v2, 1, &ids[1]).await.status, StatusCode::CREATED);
    let r = app
        .call(
            Method::PUT,
            &path,
            Some(&c.admin),
            Some(json!({"rater1": "val02", "rater2": "nobody"})),
        )
        .await;
    // A well-formed name the pool does not hold: the pool refuses (409), by name.
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(
        r.text.contains("`nobody` is not a validator in the pool"),
        "{}",
        r.text
    );
    let r = app.call(Method::DELETE, &path, Some(&c.admin), None).await;
    assert_eq!(
        (r.status, r.body["rater1"].as_str()),
        (StatusCode::OK, Some("val00"))
    );
}

#[tokio::test]
async fn a_question_opens_only_when_its_clip_is_retained() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &["OE"]).await;
    let q = format!("{}_OE", ids[0]);
    assert_eq!(app.pass(&c.v0, 2, &q).await.status, StatusCode::NOT_FOUND);
    app.pass(&c.v0, 1, &ids[0]).await;
    assert_eq!(app.pass(&c.v0, 2, &q).await.status, StatusCode::NOT_FOUND);
    app.pass(&c.v1, 1, &ids[0]).await;
    assert_eq!(app.pass(&c.v0, 2, &q).await.status, StatusCode::CREATED);
}

#[tokio::test]
async fn stored_decisions_and_resolutions_cannot_be_changed_or_removed() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    app.pass(&c.v0, 1, &ids[0]).await;
    app.reject(&c.v1, 1, &ids[0], "prompt_drift").await;
    app.resolve(&c.author, 1, &ids[0], "accept", "fine").await;
    for sql in [
        "UPDATE decisions SET verdict = 'valid'",
        "DELETE FROM decisions",
        "UPDATE resolutions SET verdict = 'reject'",
        "DELETE FROM resolutions",
    ] {
        let r = sqlx::query(sql).execute(&app.db).await;
        assert!(r.is_err(), "`{sql}` was allowed");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
}

#[tokio::test]
async fn a_verdict_for_a_replaced_version_is_refused() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    let m = write_manifest(&src, "m.jsonl", &[clip_line(&src, "W_1", MC, &[])]);
    app.import(&m).await.unwrap();
    app.reject(&c.v0, 1, "W_1", "prompt_drift").await;
    app.reject(&c.v1, 1, "W_1", "prompt_drift").await;
    // val00 opens the page of version 1 ... and version 2 arrives meanwhile.
    let web = app.login("val00").await;
    std::fs::write(src.join("videos/W_1.mp4"), fake_mp4("W_1 v2")).unwrap();
    app.import(&m).await.unwrap();
    let r = app
        .verdict(&c.v0, 1, "W_1", json!({"verdict": "valid", "version": 1}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("new version"));
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/W_1"),
            Some(&[("verdict", "valid"), ("version", "1")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("reload to review it"), "{}", r.text);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
    let r = app
        .verdict(&c.v0, 1, "W_1", json!({"verdict": "valid", "version": 2}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// In a benchmark of generated clips the model's name can sway a verdict: a validator
/// never sees the clip's generator (pages, API replies, headers); the author and the
/// admin do.
#[tokio::test]
async fn a_validator_never_sees_the_clips_generator() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE"]).await;
    let item = &ids[0];
    app.pass(&c.v0, 1, item).await;
    app.reject(&c.v1, 1, item, "generation_artifact").await;
    app.pass(&c.v0, 1, &ids[1]).await;
    app.pass(&c.v1, 1, &ids[1]).await;
    let generator = "test/generator";
    let base = format!("/api/v1/campaigns/{CAMPAIGN}");
    let mut seen = Vec::new();
    for path in [
        format!("{base}/queue/1"),
        format!("{base}/queue/1/items"),
        format!("{base}/queue/2/items"),
        format!("{base}/items/1/{item}"),
        format!("{base}/items/1/{}", ids[1]),
        format!("{base}/items/2/{}_OE", ids[1]),
    ] {
        let r = app.get(&path, &c.v0).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        seen.push((path, r.text, r.headers));
    }
    let web = app.login("val00").await;
    for path in [
        format!("/c/{CAMPAIGN}/review/1"),
        format!("/c/{CAMPAIGN}/review/1/{item}"),
        format!("/c/{CAMPAIGN}/review/2/{}_OE", ids[1]),
    ] {
        let r = app.page(Some(&web), Method::GET, &path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        if path.matches('/').count() > 4 {
            assert!(r.text.contains("Wizard"), "{path}: the theme is shown");
        }
        seen.push((path, r.text, r.headers));
    }
    for (path, text, headers) in &seen {
        assert!(
            !text.contains(generator),
            "{path} names the generator: {text}"
        );
        for (name, value) in headers {
            assert!(
                !value.to_str().unwrap_or("").contains(generator),
                "{path}: header {name}"
            );
        }
    }
    // The item reply still has the rest of the clip, and no generator key at all.
    let r = app.get(&format!("{base}/items/1/{item}"), &c.v0).await;
    assert_eq!(r.body["clip"]["theme"], "Wizard's Enchantment Altar");
    assert!(r.body["clip"].get("generator").is_none(), "{}", r.body);
    // The author resolving the split sees it.
    let r = app.get(&format!("{base}/splits/1/{item}"), &c.author).await;
    assert_eq!(r.body["clip"]["generator"], generator, "{}", r.text);
}

/// The rows of one page of the queue API: (item id, decided), and the page's reply.
async fn queue_page(
    app: &TestApp,
    token: &str,
    query: &str,
) -> (Vec<(String, bool)>, serde_json::Value) {
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/queue/1/items?{query}"),
            token,
        )
        .await;
    assert_eq!(r.status, 200, "{query}: {}", r.text);
    let v: serde_json::Value = serde_json::from_str(&r.text).unwrap();
    let rows = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["item_id"].as_str().unwrap().to_string(),
                i["decided"].as_bool().unwrap(),
            )
        })
        .collect();
    (rows, v)
}

#[tokio::test]
async fn a_queue_pages_by_the_row_beside_it_and_skips_nothing_decided_meanwhile() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 7, &["OE"]).await;
    let (first, v) = queue_page(&app, &c.v0, "limit=3").await;
    let undecided = |i: usize| (ids[i].clone(), false);
    assert_eq!(first, vec![undecided(0), undecided(1), undecided(2)]);
    assert_eq!(
        (v["matching"].as_u64(), v["total"].as_u64()),
        (Some(7), Some(7))
    );
    assert!(v["previous"].is_null(), "{v}");
    let next = v["next"].as_str().unwrap().to_string();
    assert_eq!(next, format!("u:{}", ids[2]));
    // While the validator pages, a row already listed and a row not yet listed are
    // decided (here through the API, as another tab would).
    assert_eq!(app.pass(&c.v0, 1, &ids[1]).await.status, 201);
    assert_eq!(app.pass(&c.v0, 1, &ids[4]).await.status, 201);
    // An offset would now skip ids[3]; the row beside the page does not.
    let (second, v) = queue_page(&app, &c.v0, &format!("limit=3&after={next}")).await;
    assert_eq!(second, vec![undecided(3), undecided(5), undecided(6)]);
    assert_eq!(
        v["previous"].as_str(),
        Some(format!("u:{}", ids[3]).as_str())
    );
    let next = v["next"].as_str().unwrap().to_string();
    // The decided part: both rows decided meanwhile, once each, as decided.
    let (third, v) = queue_page(&app, &c.v0, &format!("limit=3&after={next}")).await;
    assert_eq!(third, vec![(ids[1].clone(), true), (ids[4].clone(), true)]);
    assert!(v["next"].is_null(), "the last page: {v}");
    // Back from the decided part: the undecided rows before it, in order.
    let back = v["previous"].as_str().unwrap().to_string();
    assert_eq!(back, format!("d:{}", ids[1]));
    let (before, _) = queue_page(&app, &c.v0, &format!("limit=3&before={back}")).await;
    assert_eq!(before, vec![undecided(3), undecided(5), undecided(6)]);
    // The last page, from the end.
    let (last, v) = queue_page(&app, &c.v0, "limit=3&before=end").await;
    assert_eq!(
        last,
        vec![undecided(6), (ids[1].clone(), true), (ids[4].clone(), true)]
    );
    assert!(v["next"].is_null() && v["previous"].is_string(), "{v}");
    // Every undecided row was listed once as undecided, none skipped.
    let mut listed: Vec<(String, bool)> = [first, second, third].concat();
    listed.sort();
    listed.dedup();
    for i in [0, 2, 3, 5, 6] {
        assert!(listed.contains(&undecided(i)), "{} was skipped", ids[i]);
    }
    // Filters hold across pages: the decided rows only, and an id prefix.
    let (decided, v) = queue_page(&app, &c.v0, "show=decided&limit=1").await;
    assert_eq!(decided, vec![(ids[1].clone(), true)]);
    assert_eq!(v["matching"].as_u64(), Some(2));
    let next = v["next"].as_str().unwrap().to_string();
    let (decided, _) = queue_page(&app, &c.v0, &format!("show=decided&limit=1&after={next}")).await;
    assert_eq!(decided, vec![(ids[4].clone(), true)]);
    let (one, v) = queue_page(&app, &c.v0, &format!("id={}", ids[6])).await;
    assert_eq!((one, v["matching"].as_u64()), (vec![undecided(6)], Some(1)));
    let prefix = &ids[0][..ids[0].len() - 1];
    let (some, _) = queue_page(&app, &c.v0, &format!("id={prefix}")).await;
    assert_eq!(some.len(), 7, "every id shares `{prefix}`");
    // Bad positions and sizes are named.
    for (query, field) in [
        ("after=zz", "after"),
        ("before=u:nope", "before"),
        ("after=u:a&before=u:b", "before"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("show=maybe", "show"),
        ("id=MC%20F", "id"),
    ] {
        let r = app
            .get(
                &format!("/api/v1/campaigns/{CAMPAIGN}/queue/1/items?{query}"),
                &c.v0,
            )
            .await;
        assert_eq!(r.status, 422, "{query}: {}", r.text);
        assert!(r.text.contains(field), "{query}: {}", r.text);
    }
}

#[tokio::test]
async fn with_the_blind_key_check_the_key_waits_for_the_validators_own_answer() {
    let app = spawn_app().await;
    let (c, ids) = blind_campaign(&app, 2).await;
    let (q0, q1) = (format!("{}_OE", ids[0]), format!("{}_OE", ids[1]));
    let item = |q: &str| format!("/api/v1/campaigns/{CAMPAIGN}/items/2/{q}");
    let blind = |q: &str, token: &str, answer: i64| {
        let (app, path, token) = (&app, format!("{}/blind-answer", item(q)), token.to_string());
        async move {
            app.call(
                Method::POST,
                &path,
                Some(&token),
                Some(json!({"answer": answer})),
            )
            .await
        }
    };
    // Before the answer: no key in the reply, and no verdict taken.
    let r = app.get(&item(&q0), &c.v0).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.body["question"].get("answer").is_none(), "{}", r.text);
    assert_eq!(r.body["blind"]["asked"], true);
    let r = app.pass(&c.v0, 2, &q0).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("from the video first"), "{}", r.text);
    // An option the question does not have is named; clips take no blind answer.
    let r = blind(&q0, &c.v0, 4).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.body["field"], "answer", "{}", r.text);
    let r = app
        .call(
            Method::POST,
            &format!(
                "/api/v1/campaigns/{CAMPAIGN}/items/1/{}/blind-answer",
                ids[0]
            ),
            Some(&c.v0),
            Some(json!({"answer": 0})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    // A time spent that is not a time is named.
    let answer_in = |body: Value| {
        let (app, path, token) = (&app, format!("{}/blind-answer", item(&q0)), c.v0.clone());
        async move {
            app.call(Method::POST, &path, Some(&token), Some(body))
                .await
        }
    };
    let r = answer_in(json!({"answer": 0, "time_spent_ms": -1})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.body["field"], "time_spent_ms", "{}", r.text);
    // The answer (A; the key is C) with the time it took, once: then the key, and the
    // verdict.
    let r = answer_in(json!({"answer": 0, "time_spent_ms": 4200})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"answer": 0, "key": 2, "agrees": false, "time_spent_ms": 4200})
    );
    let r = blind(&q0, &c.v0, 2).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let r = app.get(&item(&q0), &c.v0).await;
    assert_eq!(r.body["question"]["answer"], 2, "{}", r.text);
    assert_eq!(r.body["blind"]["asked"], false);
    assert_eq!(r.body["blind"]["answered"]["answer"], 0);
    assert_eq!(app.pass(&c.v0, 2, &q0).await.status, 201);
    // The partner, on the page: the answer form first, no key and no verdict form.
    let web = app.login("val01").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/2/{q0}"),
            None,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("id=\"blind-form\""), "{}", page.text);
    assert!(!page.text.contains("key-mark"), "{}", page.text);
    assert!(!page.text.contains("id=\"verdict-form\""), "{}", page.text);
    let none = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/2/{q0}/blind"),
            Some(&[]),
        )
        .await;
    assert_eq!(
        none.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        none.text
    );
    assert!(
        none.text.contains("choose your answer first")
            || none.text.contains("Choose your answer first")
    );
    // The page sends the time on the question (no more than since it was drawn) and
    // the video's position: the item comes back with the video there, and the
    // verdict's time counts on from the answer's.
    let drawn = (tandem::clock::now_micros() / 1000 - 60_000).to_string();
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/2/{q0}/blind"),
            Some(&[
                ("chosen", "D"),
                ("rendered_at", &drawn),
                ("spent_ms", "3000"),
                ("position", "1.25"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let back = r.location().unwrap();
    assert_eq!(back, format!("/c/{CAMPAIGN}/review/2/{q0}?at=1.250"));
    let page = app.page(Some(&web), Method::GET, &back, None).await;
    for field in [
        r#"name="position" value="1.250""#,
        r#"name="spent_before" value="3000""#,
    ] {
        assert!(page.text.contains(field), "{field}: {}", page.text);
    }
    assert!(
        page.text.contains(
            "Your answer without the key: <strong>D</strong>. The key: <strong>C</strong>"
        ),
        "{}",
        page.text
    );
    assert!(page.text.contains("key-mark") && page.text.contains("id=\"verdict-form\""));
    assert_eq!(app.pass(&c.v1, 2, &q0).await.status, 201);
    // Both answers are in the audit trail, beside the verdicts.
    let audit = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/audit?id={q0}"),
            &c.admin,
        )
        .await;
    let kinds: Vec<(&str, &str)> = audit.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["event"].as_str().unwrap(), e["who"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("blind_answer", "val00"),
            ("verdict", "val00"),
            ("blind_answer", "val01"),
            ("verdict", "val01"),
            ("outcome", "")
        ],
        "{}",
        audit.text
    );
    assert!(
        audit
            .text
            .contains("answered D before the key was shown; the key is C (they differ)")
    );
    let csv = app
        .call(
            Method::GET,
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/blind-answers"),
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(csv.status, StatusCode::OK, "{}", csv.text);
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(
        lines[0],
        "question_id,clip_id,qa_type,level,validator,answer,key,agrees,answered_at,outcome,time_spent_ms"
    );
    assert_eq!(lines.len(), 3, "{}", csv.text);
    assert!(
        lines[1].starts_with(&format!("{q0},{},OE,", ids[0]))
            && lines[1].contains(",val00,A,C,0,")
            && lines[1].ends_with(",both_pass,4200"),
        "{}",
        csv.text
    );
    assert!(
        lines[2].contains(",val01,D,C,0,") && lines[2].ends_with(",both_pass,3000"),
        "{}",
        csv.text
    );
    // A question both answered right is no doubt.
    assert_eq!(blind(&q1, &c.v0, 2).await.status, StatusCode::CREATED);
    assert_eq!(blind(&q1, &c.v1, 2).await.status, StatusCode::CREATED);
    // Both answered q0 otherwise than its key: its key is in doubt, for the authors.
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/keys-in-doubt"),
            &c.author,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let doubts = r.body["keys_in_doubt"].as_array().unwrap();
    assert_eq!(doubts.len(), 1, "{}", r.text);
    assert_eq!(doubts[0]["question_id"], q0.as_str());
    assert_eq!(doubts[0]["key"], "C");
    assert_eq!(doubts[0]["key_text"], "a glass orb");
    assert_eq!(doubts[0]["answers"][0]["text"], "a brass key");
    assert_eq!(doubts[0]["outcome"], "both_pass");
    let author = app.login("author1").await;
    let splits = app
        .page(
            Some(&author),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/2"),
            None,
        )
        .await;
    assert!(
        splits.text.contains("Keys in doubt (1)") && splits.text.contains(&q0),
        "{}",
        splits.text
    );
    // In words: the key, both answers, where it stands.
    for words in [
        "<td>C: a glass orb</td>",
        "A: a brass key (val00); D: a feather quill (val01)",
        "retained: both validators passed it",
    ] {
        assert!(splits.text.contains(words), "{words}: {}", splits.text);
    }
    // The figures: per QA type and level, with the share and its interval.
    let s = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), &c.admin)
        .await;
    let b = &s.body["blind_key_check"];
    assert_eq!(b["all"]["answers"], 4, "{}", s.text);
    assert_eq!(b["all"]["agree"], 2);
    assert_eq!(b["all"]["share"], 0.5);
    assert!(
        b["all"]["ci95"][0].as_f64().unwrap() < 0.5 && b["all"]["ci95"][1].as_f64().unwrap() > 0.5
    );
    assert_eq!(b["rows"][0]["qa_type"], "OE");
    assert!(
        b["measure"]
            .as_str()
            .unwrap()
            .contains("not the human baseline")
    );
    let admin = app.login("admin1").await;
    let stats = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/stats"),
            None,
        )
        .await;
    assert!(
        stats.text.contains("The blind key check") && stats.text.contains("0.500 ["),
        "{}",
        stats.text
    );
    // The paper bundle has the table, as LaTeX that compiles and as CSV.
    let bundle = app.bundle_text().await;
    let file = |name: &str| {
        bundle
            .get(name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in the bundle"))
    };
    let tex = file("tables/blind-key-check.tex");
    assert!(tex.contains("All & & 4 & 2 & 0.50 ["), "{tex}");
    assert!(file("paper.tex").contains("\\input{tables/blind-key-check.tex}"));
    assert!(file("tables/blind-key-check.csv").contains("\nall,all,4,2,0.5,"));
    if pdflatex_available() {
        latex_compiles(&tex);
    }
    // Turned off, the key shows at once again and verdicts need no answer.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/settings"),
            Some(&c.admin),
            Some(json!({"target_per_task": 100, "calibration_threshold": 0.8,
                        "calibration_min_items": 10})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app.get(&item(&q1), &c.v0).await;
    assert_eq!(r.body["question"]["answer"], 2, "{}", r.text);
    assert!(r.body.get("blind").is_none());
}

/// The queue's filters drive the review (on each database): the queue's next item, an
/// item's queue link and the next item after a save keep to the task or id filter, and
/// a save that ends the filtered list says so and goes back to it.
#[tokio::test]
async fn the_review_follows_the_queues_filter_and_says_when_it_is_done() {
    let app = spawn_app().await;
    let _c = cast(&app).await;
    let ids = app
        .import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 2, &["OE"])
        .await;
    let (t2a, t2b) = (&ids[2], &ids[3]);
    assert!(t2a.starts_with("QC_F_EGO_DYN") && t2b.starts_with("QC_F_EGO_DYN"));
    let web = app.login("val00").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move { app.page(Some(web), Method::GET, &path, None).await }
    };
    let list = format!("/c/{CAMPAIGN}/review/1");
    let kept = "?task=QC_F_EGO_DYN&show=undecided";
    // Unfiltered, the next clip is the first task's.
    let page = get(list.clone()).await;
    assert!(
        page.text.contains(&format!("href=\"{list}/{}\"", ids[0])),
        "{}",
        page.text
    );
    // Filtered, the next clip and every listed clip keep the filter.
    let page = get(format!("{list}{kept}")).await;
    let kept_html = kept.replace('&', "&#38;");
    for want in [
        format!("id=\"start\" href=\"{list}/{t2a}{kept_html}\""),
        format!("href=\"{list}/{t2b}{kept_html}\""),
    ] {
        assert!(page.text.contains(&want), "{want}: {}", page.text);
    }
    // An id prefix narrows the next clip too.
    let page = get(format!("{list}?id={}", ids[1])).await;
    assert!(
        page.text.contains(&format!(
            "id=\"start\" href=\"{list}/{}?id={}\"",
            ids[1], ids[1]
        )),
        "{}",
        page.text
    );
    // The item keeps it: its queue link and its form.
    let page = get(format!("{list}/{t2a}{kept}")).await;
    for want in [
        format!("href=\"{list}{kept_html}\" id=\"to-queue\""),
        format!("action=\"{list}/{t2a}{kept_html}\""),
    ] {
        assert!(page.text.contains(&want), "{want}: {}", page.text);
    }
    // A save opens the filter's next clip, not the queue's.
    let save = |item: &str| {
        let (app, web, path) = (&app, &web, format!("{list}/{item}{kept}"));
        async move {
            app.page(
                Some(web),
                Method::POST,
                &path,
                Some(&[("verdict", "valid")]),
            )
            .await
        }
    };
    let r = save(t2a).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.location().unwrap(), format!("{list}/{t2b}{kept}"));
    // The last one goes back to the filtered list, which says the filter is done.
    let r = save(t2b).await;
    assert_eq!(r.location().unwrap(), format!("{list}{kept}"));
    let page = get(format!("{list}{kept}")).await;
    assert!(
        page.text.contains("Nothing more waits under this filter."),
        "{}",
        page.text
    );
    assert!(page.text.contains("id=\"filter-done\""), "{}", page.text);
    // A filter that is not one is refused by name.
    let bad = get(format!("{list}/{t2a}?show=maybe")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
}

/// A Stage 2 split whose key both validators doubted blind: the author's page shows each
/// blind answer in words and says the key is in doubt; the keys-in-doubt list links it.
#[tokio::test]
async fn an_author_sees_the_blind_answers_of_a_split_and_its_key_in_doubt() {
    let app = spawn_app().await;
    let (c, ids) = blind_campaign(&app, 1).await;
    let q = format!("{}_OE", ids[0]);
    for (token, answer) in [(&c.v0, 0), (&c.v1, 1)] {
        answer_blind(&app, token, &q, answer).await;
    }
    assert_eq!(app.pass(&c.v0, 2, &q).await.status, 201);
    assert_eq!(
        app.reject(&c.v1, 2, &q, "incorrect_answer").await.status,
        201
    );
    // The API's split carries each side's blind answer.
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/splits/2/{q}"),
            &c.author,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["rater1"]["blind_answer"], 0, "{}", r.text);
    assert_eq!(r.body["rater2"]["blind_answer"], 1, "{}", r.text);
    let author = app.login("author1").await;
    let page = app
        .page(
            Some(&author),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/2/{q}"),
            None,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    for words in [
        "id=\"key-in-doubt\"",
        "<strong>Answered blind:</strong> A: a brass key",
        "<strong>Answered blind:</strong> B: a red candle",
    ] {
        assert!(page.text.contains(words), "{words}: {}", page.text);
    }
    let list = app
        .page(
            Some(&author),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/2"),
            None,
        )
        .await;
    for words in [
        format!(
            "<a href=\"/c/{CAMPAIGN}/splits/2/{q}\">{q}</a></td><td>{}",
            ids[0]
        ),
        "split: waiting for an author".to_string(),
    ] {
        assert!(list.text.contains(&words), "{words}: {}", list.text);
    }
}

/// A question both validators passed though both answered it blind otherwise than the
/// key: the author opens it from the keys-in-doubt list and withdraws it, with a reason
/// and a note; the retained benchmark leaves it out, the tables keep its review, the
/// audit trail records it, and a withdrawal is final.
#[tokio::test]
async fn an_author_withdraws_a_retained_question_whose_key_is_in_doubt() {
    let app = spawn_app().await;
    let (c, ids) = blind_campaign(&app, 2).await;
    let (q, other) = (format!("{}_OE", ids[0]), format!("{}_OE", ids[1]));
    for (token, answer) in [(&c.v0, 0), (&c.v1, 1)] {
        for question in [&q, &other] {
            answer_blind(&app, token, question, answer).await;
        }
        assert_eq!(app.pass(token, 2, &q).await.status, 201);
    }
    // The other question splits: it is not retained, so not withdrawn.
    assert_eq!(app.pass(&c.v0, 2, &other).await.status, 201);
    assert_eq!(
        app.reject(&c.v1, 2, &other, "incorrect_answer")
            .await
            .status,
        201
    );
    let author = app.login("author1").await;
    let list = app
        .page(
            Some(&author),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/2"),
            None,
        )
        .await;
    let link = format!("<a href=\"/c/{CAMPAIGN}/questions/{q}\">{q}</a>");
    assert!(list.text.contains(&link), "{}", list.text);
    let here = format!("/c/{CAMPAIGN}/questions/{q}");
    let page = app.page(Some(&author), Method::GET, &here, None).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    for words in [
        "id=\"withdraw-form\"",
        "retained: both validators passed it",
        "<strong>Answered blind:</strong> A: a brass key",
        "<option value=\"incorrect_answer\" selected>",
    ] {
        assert!(page.text.contains(words), "{words}: {}", page.text);
    }
    // An admin reads the page but has no form.
    let admin = app.login("admin1").await;
    let seen = app.page(Some(&admin), Method::GET, &here, None).await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.text);
    assert!(!seen.text.contains("withdraw-form"), "{}", seen.text);
    // Without a note nothing is stored and the page says why.
    let action = format!("{here}/withdrawal");
    let empty = app
        .page(
            Some(&author),
            Method::POST,
            &action,
            Some(&[("reason", "incorrect_answer"), ("note", " ")]),
        )
        .await;
    assert_eq!(
        empty.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        empty.text
    );
    assert!(
        empty.text.contains("A withdrawal needs a note saying why."),
        "{}",
        empty.text
    );
    let bad = app
        .page(
            Some(&author),
            Method::POST,
            &action,
            Some(&[("reason", "made_up"), ("note", "x")]),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    assert!(
        app.store
            .withdrawals(&campaign, None)
            .await
            .unwrap()
            .is_empty()
    );
    let done = app
        .page(
            Some(&author),
            Method::POST,
            &action,
            Some(&[
                ("reason", "incorrect_answer"),
                ("note", "the orb is green, not glass"),
            ]),
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
    let after = app.page(Some(&author), Method::GET, &here, None).await;
    assert!(
        after
            .text
            .contains("Withdrawn from the benchmark by author1")
            && !after.text.contains("withdraw-form"),
        "{}",
        after.text
    );
    // The API: the same withdrawal again adds nothing; another is refused; a split is
    // not retained.
    let withdraw = |question: String, note: &'static str| {
        let (app, token) = (&app, c.author.clone());
        async move {
            app.call(
                Method::POST,
                &format!("/api/v1/campaigns/{CAMPAIGN}/questions/{question}/withdrawal"),
                Some(&token),
                Some(json!({"reason": "incorrect_answer", "note": note})),
            )
            .await
        }
    };
    let again = withdraw(q.clone(), "the orb is green, not glass").await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    assert_eq!(again.body["recorded"], false);
    assert_eq!(again.body["withdrawal"]["author"], "author1");
    let other_note = withdraw(q.clone(), "another reading").await;
    assert_eq!(
        other_note.status,
        StatusCode::CONFLICT,
        "{}",
        other_note.text
    );
    let split = withdraw(other.clone(), "x").await;
    assert_eq!(split.status, StatusCode::CONFLICT, "{}", split.text);
    assert!(
        split.text.contains("resolve its split instead"),
        "{}",
        split.text
    );
    let listed = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/keys-in-doubt"),
            &c.author,
        )
        .await;
    assert_eq!(listed.body["withdrawals"][0]["question_id"], q.as_str());
    assert_eq!(listed.body["withdrawals"][0]["reason"], "incorrect_answer");
    // The benchmark leaves it out and counts it; its review stays in the tables.
    let (clips, counts) = app.store.retained(&campaign).await.unwrap();
    let kept: Vec<&str> = clips
        .iter()
        .flat_map(|c| c.questions.iter().map(|q| q.question_id.as_str()))
        .collect();
    assert!(!kept.contains(&q.as_str()), "{kept:?}");
    assert_eq!(
        (counts.questions_withdrawn, counts.questions_retained),
        (1, 0)
    );
    let stats = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), &c.admin)
        .await;
    assert_eq!(
        stats.body["t13"]["stage2"]["both_pass"], 1,
        "{}",
        stats.text
    );
    let audit = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/audit?id={q}"),
            &c.admin,
        )
        .await;
    let last = audit.body["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["event"], "withdrawal", "{}", audit.text);
    assert_eq!(last["who"], "author1");
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .contains("(incorrect_answer): the orb is green, not glass [via web]"),
        "{last}"
    );
    // The record is final in the database too.
    let changed = sqlx::query("UPDATE withdrawals SET note = 'changed'")
        .execute(&app.db)
        .await;
    assert!(changed.is_err());
}

/// A validator's blind answer to a question of their queue, recorded.
async fn answer_blind(app: &TestApp, token: &str, question: &str, answer: i64) {
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/items/2/{question}/blind-answer"),
            Some(token),
            Some(json!({"answer": answer})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// A campaign with the blind key check on and `n` clips of one task, each with an OE
/// question, passed by both validators: their questions wait in Stage 2.
async fn blind_campaign(app: &TestApp, n: usize) -> (Cast, Vec<String>) {
    let c = cast(app).await;
    let ids = app.import_clips(&[MC], n, &["OE"]).await;
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/settings"),
            Some(&c.admin),
            Some(json!({"target_per_task": 100, "calibration_threshold": 0.8,
                        "calibration_min_items": 10, "blind_key_check": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for id in &ids {
        assert_eq!(app.pass(&c.v0, 1, id).await.status, 201);
        assert_eq!(app.pass(&c.v1, 1, id).await.status, 201);
    }
    (c, ids)
}

/// A linked pair's item shows the other direction's key beside its own; under the blind
/// key check both stay hidden until the validator's own answer is in (the other
/// direction's key would tell this one's).
#[tokio::test]
async fn a_linked_pair_shows_both_keys_and_the_blind_check_hides_both() {
    let app = spawn_app().await;
    let protocol = app.campaign_on("glimpse").await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let admin = app.user("admin1", Role::Admin, None).await;
    let src = app.source();
    let manifest = tandem::demo::write_sample_manifest(&src, &protocol.taxonomy).unwrap();
    let clip = "TEMP_D01";
    let line: String = std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"clip_id\":\"{clip}\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&manifest, line).unwrap();
    app.import(&manifest).await.unwrap();
    let item = format!("/api/v1/campaigns/{CAMPAIGN}/items/2/{clip}_YN");
    let shown = app.get(&item, &v0).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
    let linked = &shown.body["question"]["linked"];
    assert_eq!(linked["question_id"], format!("{clip}_YNR"));
    assert_eq!(
        (linked["options"][1].clone(), linked["answer"].clone()),
        (json!("no"), json!(1))
    );
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/settings"),
            Some(&admin),
            Some(json!({"target_per_task": 100, "calibration_threshold": 0.8,
                        "calibration_min_items": 10, "blind_key_check": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let blind = app.get(&item, &v0).await;
    assert!(
        blind.body["question"].get("answer").is_none(),
        "{}",
        blind.text
    );
    assert!(
        blind.body["question"]["linked"].get("answer").is_none(),
        "{}",
        blind.text
    );
    answer_blind(&app, &v0, &format!("{clip}_YN"), 0).await;
    let after = app.get(&item, &v0).await;
    assert_eq!(
        after.body["question"]["linked"]["answer"], 1,
        "{}",
        after.text
    );
}
