//! Pairing per clip by least open work (a protocol's `pairing = "least_open_work"`): each
//! clip, when it enters review, goes to the two validators with the fewest items
//! waiting, rater 1 the lower pool index; the pair stays with its questions and new
//! versions; clips wait while the pool cannot make a pair; a disabled account takes no
//! new clips; task pairs cannot be set.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tandem::domain::Role;

const MC: &str = "MC_F_EGO_STA";

/// VGenST's protocol, paired per clip.
fn vgenst_per_clip() -> tandem::domain::protocol::Protocol {
    let text = tandem::domain::protocol::shipped("vgenst")
        .unwrap()
        .replacen(
            "[protocol]\n",
            "[protocol]\npairing = \"least_open_work\"\n",
            1,
        );
    tandem::domain::protocol::parse(&text).unwrap()
}

async fn campaign_least_open(app: &TestApp) {
    app.store
        .create_campaign(CAMPAIGN, &vgenst_per_clip())
        .await
        .unwrap();
}

/// `n` validators, val00 at pool index 0 and so on: their tokens.
async fn validators(app: &TestApp, n: i64) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(
            app.user(&format!("val0{i}"), Role::Validator, Some(i))
                .await,
        );
    }
    v
}

/// Each current item's pair in `stage`, by item key, as stored.
async fn pairs_in(app: &TestApp, stage: i64) -> Vec<(String, Option<String>, Option<String>)> {
    sqlx::query_as(
        "SELECT i.item_key, u1.name, u2.name FROM items i
         LEFT JOIN users u1 ON u1.id = i.rater1_id LEFT JOIN users u2 ON u2.id = i.rater2_id
         WHERE i.stage = $1 AND i.is_current = 1 ORDER BY i.item_key",
    )
    .bind(stage)
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// Each clip's Stage 1 pair, by clip key, as stored.
async fn pairs(app: &TestApp) -> Vec<(String, Option<String>, Option<String>)> {
    pairs_in(app, 1).await
}

fn pair(key: &str, a: &str, b: &str) -> (String, Option<String>, Option<String>) {
    (key.into(), Some(a.into()), Some(b.into()))
}

async fn total(app: &TestApp, token: &str, stage: u8) -> i64 {
    app.queue(token, stage).await["total"].as_i64().unwrap()
}

#[tokio::test]
async fn each_clip_goes_to_the_two_validators_with_the_least_open_work_and_keeps_them() {
    let app = spawn_app().await;
    campaign_least_open(&app).await;
    let admin = app.user("admin1", Role::Admin, None).await;
    let v = validators(&app, 4).await;
    let ids = app.import_clips(&[MC], 4, &["OE", "OA"]).await;
    // All four start with nothing: ties go to the lower indexes, so the clips alternate
    // between (val00, val01) and (val02, val03), rater 1 the lower index.
    assert_eq!(
        pairs(&app).await,
        [
            pair(&ids[0], "val00", "val01"),
            pair(&ids[1], "val02", "val03"),
            pair(&ids[2], "val00", "val01"),
            pair(&ids[3], "val02", "val03"),
        ]
    );
    for token in &v {
        assert_eq!(total(&app, token, 1).await, 2);
    }
    // Paired is not started: the overview counts the four as not started.
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let progress = app.store.progress(&campaign).await.unwrap();
    assert_eq!(progress[0].stage1.unstarted, 4, "{:?}", progress[0]);
    // A pair fixed at import is the item's pair: the other validators are refused.
    let r = app.pass(&v[2], 1, &ids[0]).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    // val00 and val01 pass clip 0: its two questions join their queues (the clip's
    // pair), so they now have 1 clip + 2 questions waiting, val02 and val03 2 clips.
    for token in &v[..2] {
        let r = app.pass(token, 1, &ids[0]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    for token in &v[..2] {
        assert_eq!(total(&app, token, 2).await, 2);
    }
    // The next clips: val02 and val03 (2 waiting) before val00 and val01 (3 waiting);
    // then all four are at 3, and the lower indexes come first again.
    let src = app.source();
    let lines: Vec<_> = ["MC_NEW_0", "MC_NEW_1", "MC_NEW_2"]
        .iter()
        .map(|id| clip_line(&src, id, MC, &["OE"]))
        .collect();
    app.import(&write_manifest(&src, "more.jsonl", &lines))
        .await
        .unwrap();
    let all = pairs(&app).await;
    let of = |key: &str| all.iter().find(|p| p.0 == key).cloned().unwrap();
    assert_eq!(of("MC_NEW_0"), pair("MC_NEW_0", "val02", "val03"));
    assert_eq!(of("MC_NEW_1"), pair("MC_NEW_1", "val00", "val01"));
    assert_eq!(of("MC_NEW_2"), pair("MC_NEW_2", "val02", "val03"));
    // Clip 1 rejected by its pair gets a new version: the same pair reviews it.
    for token in &v[2..] {
        let r = app
            .reject(token, 1, &ids[1], "physical_implausibility")
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let again = clip_line(&src, &ids[1], MC, &["OE", "OA"]);
    std::fs::write(
        src.join(format!("videos/{}.mp4", ids[1])),
        fake_mp4("regenerated"),
    )
    .unwrap();
    app.import(&write_manifest(&src, "v2.jsonl", &[again]))
        .await
        .unwrap();
    let all = pairs(&app).await;
    assert!(all.contains(&pair(&ids[1], "val02", "val03")), "{all:?}");
    // No task pairs to set, by the API or the command line's store call.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/campaigns/{CAMPAIGN}/tasks/{MC}/pair"),
            Some(&admin),
            Some(json!({"rater1": "val00", "rater2": "val01"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(
        r.text.contains("pairs per clip, by least open work"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn clips_wait_for_a_pair_until_two_validators_can_take_them() {
    let app = spawn_app().await;
    campaign_least_open(&app).await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    let ids = app.import_clips(&[MC], 3, &["OE"]).await;
    // One validator: no pair, no queue.
    assert_eq!(total(&app, &v0, 1).await, 0);
    assert!(pairs(&app).await.iter().all(|p| p.1.is_none()));
    // A second one: every waiting clip is paired at once.
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    assert_eq!(total(&app, &v0, 1).await, 3);
    assert_eq!(total(&app, &v1, 1).await, 3);
    // A disabled account takes no new clips: with val01 disabled, a third validator and
    // val00 take the next one.
    let v2 = app.user("val02", Role::Validator, Some(2)).await;
    assert!(app.store.set_disabled("val01", true).await.unwrap());
    let src = app.source();
    let line = clip_line(&src, "MC_LATE", MC, &["OE"]);
    app.import(&write_manifest(&src, "late.jsonl", &[line]))
        .await
        .unwrap();
    let all = pairs(&app).await;
    assert!(all.contains(&pair("MC_LATE", "val00", "val02")), "{all:?}");
    assert_eq!(total(&app, &v2, 1).await, 1);
    for id in &ids {
        assert!(all.contains(&pair(id, "val00", "val01")), "{all:?}");
    }
}

#[tokio::test]
async fn without_clip_review_a_clips_questions_share_one_pair_weighed_by_their_number() {
    let app = spawn_app().await;
    let protocol = app.campaign_on("glimpse").await;
    assert_eq!(
        protocol.taxonomy.pairing,
        tandem::domain::pairing::Pairing::LeastOpenWork
    );
    let tokens = validators(&app, 3).await;
    let src = app.source();
    // A clip of three multiple-choice questions, then two of one each.
    let mut g0 = clip_line(&src, "G0", "TRAJ", &["MC"]);
    let question = g0["questions"][0].clone();
    g0["questions"] = json!(
        (0..3)
            .map(|i| {
                let mut q = question.clone();
                q["question_id"] = json!(format!("G0_MC{i}"));
                q
            })
            .collect::<Vec<_>>()
    );
    let lines = vec![
        g0,
        clip_line(&src, "G1", "TRAJ", &["MC"]),
        clip_line(&src, "G2", "TRAJ", &["MC"]),
    ];
    app.import(&write_manifest(&src, "g.jsonl", &lines))
        .await
        .unwrap();
    let q = pairs_in(&app, 2).await;
    let by_clip = |clip: &str| -> Vec<(Option<String>, Option<String>)> {
        q.iter()
            .filter(|r| r.0.starts_with(&format!("{clip}_")))
            .map(|r| (r.1.clone(), r.2.clone()))
            .collect()
    };
    let some = |a: &str, b: &str| (Some(a.to_string()), Some(b.to_string()));
    // G0's three questions: val00 + val01 (3 each). G1: val02 has 0, then val00 (3)
    // against val01 (3): the lower index. G2: val02 (1), val01 (3) against val00 (4).
    assert_eq!(by_clip("G0"), vec![some("val00", "val01"); 3]);
    assert_eq!(by_clip("G1"), vec![some("val00", "val02")]);
    assert_eq!(by_clip("G2"), vec![some("val01", "val02")]);
    let totals: Vec<i64> = {
        let mut t = Vec::new();
        for token in &tokens {
            t.push(total(&app, token, 2).await);
        }
        t
    };
    assert_eq!(totals, [4, 4, 2]);
}

#[tokio::test]
async fn a_protocol_change_to_pairing_per_clip_pairs_the_unstarted_clips_and_back_keeps_them() {
    let app = spawn_app().await;
    let v = validators(&app, 4).await;
    // Task pairs: MC_F_EGO_STA is task 0, reviewed by val00 and val01.
    let ids = app.import_clips(&[MC], 4, &["OE"]).await;
    for token in &v[..2] {
        let r = app.pass(token, 1, &ids[0]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    assert_eq!(total(&app, &v[2], 1).await, 0);
    // Per clip: the started clip keeps its pair; the three others leave the task pair's
    // queues and are spread by the work then waiting (clip 0's question for val00 and
    // val01, nothing for val02 and val03).
    app.store
        .change_protocol(CAMPAIGN, &vgenst_per_clip().taxonomy)
        .await
        .unwrap();
    assert_eq!(
        pairs(&app).await,
        [
            pair(&ids[0], "val00", "val01"),
            pair(&ids[1], "val02", "val03"),
            pair(&ids[2], "val00", "val01"),
            pair(&ids[3], "val02", "val03"),
        ]
    );
    // Back to task pairs: the pairs fixed per clip stay.
    let vgenst = tandem::domain::protocol::parse(tandem::domain::protocol::VGENST).unwrap();
    app.store
        .change_protocol(CAMPAIGN, &vgenst.taxonomy)
        .await
        .unwrap();
    assert_eq!(total(&app, &v[2], 1).await, 2);
    assert_eq!(pairs(&app).await[3], pair(&ids[3], "val02", "val03"));
}

#[tokio::test]
async fn a_question_drawn_for_a_sample_joins_the_pair_its_clips_other_questions_have() {
    let app = spawn_app().await;
    // GLIMPSE (no clip review, paired per clip) with its multiple-choice questions of
    // TRAJ reviewed by sample: held at import, drawn by a run.
    let text = format!(
        "{}\n[[sampling]]\nstage = 2\ntask = \"TRAJ\"\nqa_type = \"MC\"\nn = 2\nc = 0\n",
        tandem::domain::protocol::shipped("glimpse").unwrap()
    );
    let protocol = tandem::domain::protocol::parse(&text).unwrap();
    app.store
        .create_campaign(CAMPAIGN, &protocol)
        .await
        .unwrap();
    let tokens = validators(&app, 3).await;
    let src = app.source();
    // G0: two multiple-choice questions (held) and a linked yes/no pair (reviewed).
    let mut g0 = clip_line(&src, "G0", "TRAJ", &["MC"]);
    let mc = g0["questions"][0].clone();
    let yn = json!({"qa_type": "YN", "options": ["yes", "no"], "pair": "G0_P"});
    let question = |id: &str, base: &serde_json::Value, extra: serde_json::Value| {
        let mut q = base.clone();
        q["question_id"] = json!(id);
        q["question"] = json!(format!("Question {id}?"));
        for (k, v) in extra.as_object().unwrap() {
            q[k] = v.clone();
        }
        q
    };
    g0["questions"] = json!([
        question("G0_MC0", &mc, json!({})),
        question("G0_MC1", &mc, json!({})),
        question("G0_YN", &mc, yn.clone()),
        question("G0_YNR", &mc, yn.clone()),
    ]);
    g0["questions"][2]["answer"] = json!(0);
    g0["questions"][3]["answer"] = json!(1);
    app.import(&write_manifest(&src, "g.jsonl", &[g0]))
        .await
        .unwrap();
    // The yes/no pair went to val00 + val01; val02 has nothing yet.
    assert_eq!(total(&app, &tokens[2], 2).await, 0);
    tandem::app::sampling::run(&app.store, CAMPAIGN)
        .await
        .unwrap();
    // Both drawn questions join G0's pair, though val02 has the least open work.
    let paired = pairs_in(&app, 2).await;
    for (key, a, b) in &paired {
        assert_eq!(
            (a.as_deref(), b.as_deref()),
            (Some("val00"), Some("val01")),
            "{key}: {paired:?}"
        );
    }
    assert_eq!(paired.len(), 4);
    assert_eq!(total(&app, &tokens[0], 2).await, 4);
    assert_eq!(total(&app, &tokens[2], 2).await, 0);
}
