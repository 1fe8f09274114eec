//! A campaign's whole life: calibration before review, regeneration after rejection,
//! targets, and the audit trail.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tandem::Error;

const MC: &str = "MC_F_EGO_STA";

/// Ten calibration clips (even ones known valid, odd ones known reject) and two clips
/// for the main queue.
async fn campaign_with_calibration(app: &TestApp) {
    let src = app.source();
    let mut lines = Vec::new();
    for i in 0..10 {
        let mut l = clip_line(&src, &format!("CAL_{i}"), MC, &[]);
        l["calibration"] = if i % 2 == 0 {
            json!({"verdict": "valid", "note": "clean"})
        } else {
            json!({"verdict": "reject", "reasons": ["generation_artifact"], "note": "the key morphs at 2 s"})
        };
        lines.push(l);
    }
    lines.push(clip_line(&src, "MAIN_0", MC, &["OE"]));
    lines.push(clip_line(&src, "MAIN_1", MC, &["OE"]));
    let m = write_manifest(&src, "m.jsonl", &lines);
    app.import(&m).await.unwrap();
}

/// Decides the ten calibration clips through the API, agreeing with `agree` of them.
async fn calibrate(app: &TestApp, token: &str, agree: usize) -> Value {
    let mut last = Value::Null;
    for i in 0..10 {
        let known_valid = i % 2 == 0;
        let say_valid = if i < agree { known_valid } else { !known_valid };
        let body = if say_valid {
            json!({"verdict": "valid"})
        } else {
            json!({"verdict": "reject", "reasons": ["prompt_drift"]})
        };
        let r = app
            .call(
                Method::POST,
                &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/CAL_{i}/verdict"),
                Some(token),
                Some(body),
            )
            .await;
        if r.status != StatusCode::OK {
            return r.body;
        }
        assert_eq!(r.body["agrees"], json!(i < agree), "{}", r.text);
        assert_eq!(
            r.body["known"]["verdict"],
            if known_valid { "valid" } else { "reject" }
        );
        last = r.body;
    }
    last
}

#[tokio::test]
async fn a_validator_below_the_threshold_cannot_reach_the_main_queue_by_any_route() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    campaign_with_calibration(&app).await;
    let web = app.login("val00").await;
    let refused = |who: &str, r: &Reply| {
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{who}: {}", r.text);
        // Pages say it as a sentence ("Calibration was not passed ..."), the API as is.
        assert!(
            r.text.to_lowercase().contains("calibration"),
            "{who}: {}",
            r.text
        );
    };
    let check_closed = |label: &'static str| {
        let app = &app;
        let c = &c;
        let web = &web;
        async move {
            refused(
                label,
                &app.get(&format!("/api/v1/campaigns/{CAMPAIGN}/queue/1"), &c.v0)
                    .await,
            );
            refused(
                label,
                &app.get(
                    &format!("/api/v1/campaigns/{CAMPAIGN}/queue/1/items"),
                    &c.v0,
                )
                .await,
            );
            refused(
                label,
                &app.get(
                    &format!("/api/v1/campaigns/{CAMPAIGN}/items/1/MAIN_0"),
                    &c.v0,
                )
                .await,
            );
            refused(label, &app.pass(&c.v0, 1, "MAIN_0").await);
            for path in [
                format!("/c/{CAMPAIGN}/review/1"),
                format!("/c/{CAMPAIGN}/review/1/MAIN_0"),
                "/".to_string(),
            ] {
                let mut r = app.page(Some(web), Method::GET, &path, None).await;
                if path == "/" {
                    r = app
                        .page(Some(web), Method::GET, &r.location().unwrap(), None)
                        .await;
                }
                assert_eq!(
                    r.location().as_deref(),
                    Some(format!("/c/{CAMPAIGN}/calibration").as_str()),
                    "{label} {path}"
                );
            }
            let r = app
                .page(
                    Some(web),
                    Method::POST,
                    &format!("/c/{CAMPAIGN}/review/1/MAIN_0"),
                    Some(&[("verdict", "valid")]),
                )
                .await;
            refused(label, &r);
        }
    };
    check_closed("before calibration").await;

    // Calibration items are not in the main queue, and main items not in calibration.
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(
        (r.body["state"].as_str(), r.body["total"].as_i64()),
        (Some("in_progress"), Some(10))
    );
    assert_eq!(r.body["next"], json!({"stage": 1, "item": "CAL_0"}));
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/MAIN_0"),
            &c.v0,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Seven of ten: below 80%. The round is over and the queue stays closed.
    let last = calibrate(&app, &c.v0, 7).await;
    assert_eq!(last["status"]["state"], "failed", "{last}");
    check_closed("after failing").await;
    let again = app
        .call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/CAL_0/verdict"),
            Some(&c.v0),
            Some(json!({"verdict": "reject", "reasons": ["other"], "note": "x"})),
        )
        .await;
    assert_eq!(
        again.status,
        StatusCode::CONFLICT,
        "calibration verdicts do not change"
    );

    // The admin sees the score and starts another round.
    let admin = app.login("admin1").await;
    let page = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/calibration"),
            None,
        )
        .await;
    assert!(
        page.text.contains("below the threshold") && page.text.contains("70%"),
        "{}",
        page.text
    );
    start_another_round(&app, &admin, "val00").await;
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(
        (
            r.body["state"].as_str(),
            r.body["round"].as_i64(),
            r.body["decided"].as_i64()
        ),
        (Some("in_progress"), Some(2), Some(0))
    );

    // Nine of ten: passed; the main queue opens.
    let last = calibrate(&app, &c.v0, 9).await;
    assert_eq!(last["status"]["state"], "passed", "{last}");
    assert_eq!(app.queue(&c.v0, 1).await["total"], 2, "only the main clips");
    assert_eq!(
        app.pass(&c.v0, 1, "MAIN_0").await.status,
        StatusCode::CREATED
    );
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);

    // Calibration verdicts are in no QC record: not in decisions, stats or exports.
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 1);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM calibration_decisions")
            .await,
        20
    );
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let report = tandem::app::qc_report(&app.store, &campaign, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        report.stage1.pending, 2,
        "the two main clips, not the ten calibration clips: {:?}",
        report.stage1
    );
    assert_eq!(report.t11[0].1.reviewed, 0);
    let csv = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/decisions"),
            &c.admin,
        )
        .await;
    assert!(!csv.text.contains("CAL_"), "{}", csv.text);
    app.pass(&c.v1, 1, "MAIN_0").await; // val01 has not calibrated
    let (retained, counts) = app.store.retained(&campaign).await.unwrap();
    assert!(retained.is_empty());
    assert_eq!(
        counts.clips, 2,
        "calibration clips are not in the benchmark's counts"
    );
}

#[tokio::test]
async fn calibration_is_shown_in_pages_with_the_known_verdict_after_each_item() {
    let app = spawn_app().await;
    cast(&app).await;
    campaign_with_calibration(&app).await;
    let web = app.login("val00").await;
    let status = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/calibration"),
            None,
        )
        .await;
    assert!(status.text.contains("0 of 10 decided"), "{}", status.text);
    let item = format!("/c/{CAMPAIGN}/calibration/1/CAL_1");
    let page = app.page(Some(&web), Method::GET, &item, None).await;
    assert!(
        page.text.contains("verdict-form") && !page.text.contains("the key morphs"),
        "the key is hidden before deciding"
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &item,
            Some(&[("verdict", "valid")]),
        )
        .await;
    assert_eq!(r.location().as_deref(), Some(item.as_str()));
    let after = app.page(Some(&web), Method::GET, &item, None).await;
    assert!(
        after.text.contains("The known verdict differs"),
        "{}",
        after.text
    );
    assert!(
        after.text.contains("the key morphs at 2 s") && after.text.contains("Generation artifact")
    );
}

/// A validator's calibration page.
async fn calibration_page(app: &TestApp, web: &Web) -> Reply {
    app.page(
        Some(web),
        Method::GET,
        &format!("/c/{CAMPAIGN}/calibration"),
        None,
    )
    .await
}

/// The admin starts another calibration round for `name` on the calibration page.
async fn start_another_round(app: &TestApp, admin: &Web, name: &str) {
    let r = app
        .page(
            Some(admin),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/calibration/reset"),
            Some(&[("name", name)]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
}

/// Decides the validator's calibration items as the status names them, each against its
/// known verdict (CAL_i is valid for even i), until the round ends; returns their ids.
async fn decide_round_wrongly(app: &TestApp, token: &str) -> Vec<String> {
    let mut decided = Vec::new();
    loop {
        let r = app
            .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), token)
            .await;
        let Some(next) = r.body["next"]["item"].as_str().map(str::to_string) else {
            return decided;
        };
        let i: usize = next.trim_start_matches("CAL_").parse().unwrap();
        let body = if i.is_multiple_of(2) {
            json!({"verdict": "reject", "reasons": ["prompt_drift"]})
        } else {
            json!({"verdict": "valid"})
        };
        let r = app
            .call(
                Method::POST,
                &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/{next}/verdict"),
                Some(token),
                Some(body),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["agrees"], json!(false));
        decided.push(next);
    }
}

#[tokio::test]
async fn each_calibration_round_draws_other_items_and_the_misses_are_shown_with_why() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    campaign_with_calibration(&app).await;
    let admin = app.login("admin1").await;
    // The settings form, with rounds of `n` items.
    let settings = |n: &'static str| {
        let (app, admin) = (&app, &admin);
        async move {
            app.page(
                Some(admin),
                Method::POST,
                &format!("/c/{CAMPAIGN}/admin/settings"),
                Some(&[
                    ("target_per_task", "100"),
                    ("calibration_threshold_pct", "80"),
                    ("calibration_min_items", n),
                ]),
            )
            .await
        }
    };
    let set_round_size = |n: &'static str| {
        let settings = &settings;
        async move {
            let r = settings(n).await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        }
    };
    set_round_size("4").await;
    // A number mistyped is refused, naming its field; nothing changes.
    let before = app.dump().await;
    let r = settings("four").await;
    assert!(
        r.text.contains(
            "The calibration round&#39;s size is a whole number, not \u{201c}four\u{201d}"
        ),
        "{}",
        r.text
    );
    assert_eq!(before, app.dump().await);
    let status = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(
        (status.body["total"].as_i64(), status.body["pool"].as_i64()),
        (Some(4), Some(10)),
        "{}",
        status.text
    );

    // Round 1: four of the ten, all decided against the known verdict.
    let first = decide_round_wrongly(&app, &c.v0).await;
    assert_eq!(first.len(), 4, "{first:?}");
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(r.body["state"], "failed", "{}", r.text);
    // An item of the pool outside the round is refused while a round is open (after
    // the reset below); here the round is over.
    let web = app.login("val00").await;
    let page = calibration_page(&app, &web).await;
    assert!(
        page.text
            .contains("Round 1: 4 verdicts differed from the known one"),
        "{}",
        page.text
    );
    // Each missed item's row says what was said, the known verdict and why.
    for id in &first {
        let row = page
            .text
            .split("<tr>")
            .find(|row| row.contains(&format!(">{id}</a>")))
            .unwrap_or_else(|| panic!("{id} is not listed: {}", page.text));
        let (said, known, why) = if id.trim_start_matches("CAL_").parse::<usize>().unwrap() % 2 == 0
        {
            ("reject (Prompt drift)", "valid", "clean")
        } else {
            (
                "valid",
                "reject (Generation artifact)",
                "the key morphs at 2 s",
            )
        };
        assert!(
            row.contains(&format!("<td>{said}</td><td>{known}</td><td>{why}</td>")),
            "{row}"
        );
    }

    // A larger round size set now leaves the finished round as it was (failed, its
    // four items); the next round draws six, none of which round 1 showed.
    set_round_size("6").await;
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(
        (r.body["state"].as_str(), r.body["total"].as_i64()),
        (Some("failed"), Some(4)),
        "{}",
        r.text
    );
    start_another_round(&app, &admin, "val00").await;
    // While round 2 is under way, round 1's known verdicts are not listed.
    let page = calibration_page(&app, &web).await;
    assert!(
        !page.text.contains("differed from the known one"),
        "{}",
        page.text
    );
    // A change of the round size under way does not change the round either.
    set_round_size("3").await;
    let outside = first[0].clone();
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/{outside}/verdict"),
            Some(&c.v0),
            Some(json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(
        r.text.contains("not in your calibration round 2"),
        "{}",
        r.text
    );
    let second = decide_round_wrongly(&app, &c.v0).await;
    assert_eq!(second.len(), 6, "{second:?}");
    for id in &second {
        assert!(
            !first.contains(id),
            "round 2 repeated {id}: {first:?} {second:?}"
        );
    }

    // The admin sees both rounds, each with the items that differed.
    let page = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/calibration"),
            None,
        )
        .await;
    let rounds = page.text.split("<h2>Every round</h2>").nth(1).unwrap_or("");
    let rows: Vec<&str> = rounds
        .split("<tr><th>val00</th>")
        .skip(1)
        .map(|row| row.split("</tr>").next().unwrap_or(""))
        .collect();
    assert_eq!(rows.len(), 2, "{}", page.text);
    assert!(
        rows[0].starts_with(
            "<td>1</td><td>-</td><td>4</td><td>0</td><td>0%</td><td>below the threshold</td>"
        ),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("<td>2</td><td>admin1</td><td>6</td><td>0</td>"),
        "{}",
        rows[1]
    );
    for id in first.iter() {
        assert!(rows[0].contains(id.as_str()), "{}", rows[0]);
    }
    for id in second.iter() {
        assert!(rows[1].contains(id.as_str()), "{}", rows[1]);
    }
}

#[tokio::test]
async fn a_campaign_without_calibration_items_opens_at_once() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    app.import_clips(&[MC], 1, &[]).await;
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(r.body["state"], "not_required");
    assert_eq!(app.queue(&c.v0, 1).await["total"], 1);
}

#[tokio::test]
async fn a_bad_known_verdict_in_a_manifest_is_refused_with_its_field() {
    let app = spawn_app().await;
    let src = app.source();
    let mut l = clip_line(&src, "CAL_X", MC, &["OA"]);
    l["calibration"] = json!({"verdict": "reject"});
    let mut q = clip_line(&src, "CAL_Y", MC, &["OA"]);
    q["calibration"] = json!({"verdict": "valid"});
    q["questions"][0]["calibration"] =
        json!({"verdict": "reject", "reasons": ["single_frame_solvable"]});
    let mut plain = clip_line(&src, "PLAIN", MC, &["OE"]);
    plain["questions"][0]["calibration"] = json!({"verdict": "valid"});
    let m = write_manifest(&src, "m.jsonl", &[l, q, plain]);
    match app.import(&m).await {
        Err(Error::Rejected(r)) => {
            let got: Vec<(usize, Option<&str>)> = r
                .problems
                .iter()
                .map(|p| (p.line, p.field.as_deref()))
                .collect();
            assert_eq!(
                got,
                vec![
                    (1, Some("calibration.reasons")),
                    (2, Some("questions[0].calibration.reasons")),
                    (3, Some("questions[0].calibration")),
                ],
                "{r}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_rejected_clip_is_listed_for_regeneration_and_its_history_shows_both_versions() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    let m = write_manifest(
        &src,
        "m.jsonl",
        &[
            clip_line(&src, "RG_1", MC, &[]),
            clip_line(&src, "RG_2", MC, &[]),
        ],
    );
    app.import(&m).await.unwrap();
    app.verdict(
        &c.v0,
        1,
        "RG_1",
        json!({"verdict": "reject", "reasons": ["generation_artifact"], "note": "hand melts"}),
    )
    .await;
    app.verdict(
        &c.v1,
        1,
        "RG_1",
        json!({"verdict": "reject", "reasons": ["prompt_drift", "generation_artifact"]}),
    )
    .await;
    app.pass(&c.v0, 1, "RG_2").await;
    app.reject(&c.v1, 1, "RG_2", "physical_implausibility")
        .await;
    app.resolve(&c.author, 1, "RG_2", "reject", "the ball floats")
        .await;

    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/regeneration"),
            &c.admin,
        )
        .await;
    let clips = r.body["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 2);
    assert_eq!(clips[0]["clip_id"], "RG_1");
    assert_eq!(
        clips[0]["reasons"],
        json!(["generation_artifact", "prompt_drift"])
    );
    assert_eq!(clips[0]["notes"], json!(["hand melts"]));
    assert_eq!(
        clips[0]["scene_graph"],
        json!({"objects": ["key", "candle"]})
    );
    assert_eq!(clips[1]["notes"], json!(["seen", "the ball floats"]));
    let web = app.login("admin1").await;
    let jsonl = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports/regeneration.jsonl"),
            None,
        )
        .await;
    assert_eq!(jsonl.text.lines().count(), 2);
    let overview = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin"),
            None,
        )
        .await;
    assert!(
        overview.text.contains("Needs a new version (2)"),
        "{}",
        overview.text
    );

    // A new version of RG_1: out of the list, back with the same pair, both versions in its history.
    std::fs::write(src.join("videos/RG_1.mp4"), fake_mp4("RG_1 v2")).unwrap();
    app.import(&m).await.unwrap();
    app.pass(&c.v0, 1, "RG_1").await;
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/regeneration"),
            &c.admin,
        )
        .await;
    assert_eq!(r.body["clips"].as_array().unwrap().len(), 1);
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/audit?clip=RG_1"),
            None,
        )
        .await;
    let events: Vec<(i64, String)> = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/audit?clip=RG_1"),
            &c.admin,
        )
        .await
        .body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["version"].as_i64().unwrap(),
                e["event"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let kinds: Vec<(i64, &str)> = events.iter().map(|(v, e)| (*v, e.as_str())).collect();
    assert_eq!(
        kinds,
        vec![
            (1, "import"),
            (1, "verdict"),
            (1, "verdict"),
            (1, "outcome"),
            (2, "new_version"),
            (2, "verdict")
        ]
    );
    assert!(
        page.text.contains("new_version") && page.text.contains("hand melts"),
        "{}",
        page.text
    );
    let csv = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports/audit.csv"),
            None,
        )
        .await;
    assert!(
        csv.text
            .starts_with("at,clip_id,version,stage,item_id,event,who,detail")
    );
    assert!(csv.text.contains("resolution"), "{}", csv.text);
}

#[tokio::test]
async fn the_overview_says_when_a_task_reached_its_target() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC, "QC_F_EGO_DYN"], 2, &[]).await;
    let web = app.login("admin1").await;
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/settings"),
            Some(&[
                ("target_per_task", "2"),
                ("calibration_threshold_pct", "80"),
                ("calibration_min_items", "10"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    for id in &ids[..2] {
        app.pass(&c.v0, 1, id).await;
        app.pass(&c.v1, 1, id).await;
    }
    let overview = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin"),
            None,
        )
        .await;
    assert!(
        overview.text.contains("1 of 12 tasks have reached it"),
        "{}",
        overview.text
    );
    // The retained count (a link to those clips) against the target.
    assert!(
        overview.text.contains("show=retained\">2</a> / 2 ✓"),
        "{}",
        overview.text
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/settings"),
            Some(&[
                ("target_per_task", "0"),
                ("calibration_threshold_pct", "80"),
                ("calibration_min_items", "10"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("The target is at least 1 clip per task."));
    assert!(
        !r.text.contains("target_per_task:"),
        "no field id in the message"
    );
    // The agreement is typed in percent, and the refusal speaks percent.
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/settings"),
            Some(&[
                ("target_per_task", "2"),
                ("calibration_threshold_pct", "180"),
                ("calibration_min_items", "10"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text.contains(
            "Agreement needed is a percentage above 0 and at most 100 (80 means 80%), not \u{201c}180\u{201d}."
        ),
        "{}",
        r.text
    );
    assert!(!r.text.contains("fraction"));
}

#[tokio::test]
async fn the_audit_trail_is_searched_by_clip_person_and_day_on_the_page_the_api_and_the_csv() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 3, &[]).await;
    for id in &ids {
        app.pass(&c.v0, 1, id).await;
    }
    app.reject(&c.v1, 1, &ids[0], "prompt_drift").await;
    let api = |q: String| {
        let app = &app;
        let admin = c.admin.clone();
        async move {
            app.get(&format!("/api/v1/campaigns/{CAMPAIGN}/audit?{q}"), &admin)
                .await
        }
    };
    let events = |r: &crate::helpers::Reply| -> Vec<(String, String, String)> {
        r.body["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["clip_id"].as_str().unwrap().to_string(),
                    e["event"].as_str().unwrap().to_string(),
                    e["who"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // By person: exactly their verdicts.
    let r = api("validator=val00".into()).await;
    let e = events(&r);
    assert_eq!(e.len(), 3, "{}", r.text);
    assert!(
        e.iter()
            .all(|(_, ev, who)| ev == "verdict" && who == "val00")
    );
    let r = api(format!("validator=val01&clip={}", ids[0])).await;
    assert_eq!(events(&r).len(), 1);
    // By day: today has everything (3 imports, 4 verdicts, 1 outcome), yesterday nothing.
    let today = tandem::clock::to_rfc3339(tandem::clock::now_micros())[..10].to_string();
    let r = api(format!("from={today}&to={today}")).await;
    assert_eq!(events(&r).len(), 3 + 4 + 1, "{}", r.text);
    let r = api("to=2020-01-01".into()).await;
    assert!(events(&r).is_empty());
    // The latest N, newest first.
    let r = api("latest=2".into()).await;
    let all = r.body["events"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0]["at"].as_str().unwrap() >= all[1]["at"].as_str().unwrap());
    assert_eq!(
        (all[0]["event"].as_str(), all[0]["who"].as_str()),
        (Some("outcome"), Some("")),
        "the split is the newest event: {}",
        r.text
    );
    // A date that is not one is a 422 naming the field.
    let r = api("from=yesterday".into()).await;
    assert_eq!(r.status, reqwest::StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.body["field"], "from", "{}", r.text);

    // The page: the latest events without a filter, with links to each clip.
    let web = app.login("admin1").await;
    let page = |q: String| {
        let (app, web) = (&app, &web);
        async move {
            app.page(
                Some(web),
                Method::GET,
                &format!("/c/{CAMPAIGN}/admin/audit{q}"),
                None,
            )
            .await
        }
    };
    let p = page(String::new()).await;
    assert_eq!(p.status, reqwest::StatusCode::OK);
    assert!(p.text.contains("events, newest first"), "{}", p.text);
    for id in &ids {
        assert!(p.text.contains(&format!("audit?clip={id}\"")), "{id}");
    }
    let p = page("?validator=val01".into()).await;
    assert_eq!(p.text.matches("<td>val01</td>").count(), 1, "{}", p.text);
    assert_eq!(p.text.matches("<td>val00</td>").count(), 0);
    assert!(p.text.contains("reject (Prompt drift)"));
    let p = page("?from=30.11.2026".into()).await;
    assert!(p.text.contains("YYYY-MM-DD"), "{}", p.text);
    // The page's CSV link carries its filters.
    let p = page(format!("?clip={}&validator=val00", ids[1])).await;
    let at = p
        .text
        .find("/admin/exports/audit.csv?")
        .expect("a CSV link");
    let href = p.text[..at].rsplit('"').next().unwrap().to_string()
        + p.text[at..].split('"').next().unwrap();
    let href = href.replace("&#38;", "&").replace("&amp;", "&");
    assert_eq!(
        href,
        format!(
            "/c/{CAMPAIGN}/admin/exports/audit.csv?clip={}&validator=val00",
            ids[1]
        )
    );
    let csv = app.page(Some(&web), Method::GET, &href, None).await;
    let rows: Vec<&str> = csv.text.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{}", csv.text);
    assert!(rows[0].contains(&ids[1]) && rows[0].contains(",val00,"));
}

/// An admin runs calibration through the API as through the pages: another round for a
/// validator who failed, and the campaign's rules.
#[tokio::test]
async fn an_admin_starts_a_round_and_sets_the_rules_through_the_api() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    campaign_with_calibration(&app).await;
    let rounds = format!("/api/v1/campaigns/{CAMPAIGN}/calibration-scores/val00/rounds");
    // Not while the round is open.
    let r = app.call(Method::POST, &rounds, Some(&c.admin), None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let last = calibrate(&app, &c.v0, 5).await;
    assert_eq!(last["status"]["state"], "failed", "{last}");
    let r = app.call(Method::POST, &rounds, Some(&c.admin), None).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // The pool is the round (ten items): round 2 repeats all ten, and says how many
    // more items a round of unseen ones needs.
    assert_eq!(
        r.body,
        json!({"validator": "val00", "round": 2, "items": 10, "repeated": 10,
               "more_items_needed": 10})
    );
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/calibration"), &c.v0)
        .await;
    assert_eq!(
        (r.body["state"].as_str(), r.body["round"].as_i64()),
        (Some("in_progress"), Some(2))
    );
    // The rules: refused whole with the field at fault, then set.
    let settings = format!("/api/v1/campaigns/{CAMPAIGN}/settings");
    let bad =
        json!({"target_per_task": 50, "calibration_threshold": 1.5, "calibration_min_items": 4});
    let r = app
        .call(Method::PUT, &settings, Some(&c.admin), Some(bad))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.body["field"], "calibration_threshold", "{}", r.text);
    let good =
        json!({"target_per_task": 50, "calibration_threshold": 0.9, "calibration_min_items": 4});
    let r = app
        .call(Method::PUT, &settings, Some(&c.admin), Some(good.clone()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration-scores"),
            &c.admin,
        )
        .await;
    // Left out, the blind key check is off, the known items' window is 20 and every
    // known clip is served (rate 0).
    let mut in_force = good.clone();
    in_force["blind_key_check"] = json!(false);
    in_force["known_window"] = json!(20);
    in_force["known_rate"] = json!(0.0);
    assert_eq!(r.body["settings"], in_force, "{}", r.text);
    // Only admins.
    let r = app
        .call(Method::PUT, &settings, Some(&c.author), Some(good))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
}

#[tokio::test]
async fn a_calibration_miss_says_where_the_flaw_is_and_a_bad_place_is_named() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let src = app.source();
    // Places that are wrong, each named with its line and field; nothing is stored.
    let mut bad = Vec::new();
    for (i, flaw) in [
        json!({"frames": [7, 5]}),
        json!({"seconds": [1, "2"]}),
        json!({"minutes": [1, 2]}),
    ]
    .into_iter()
    .enumerate()
    {
        let mut l = clip_line(&src, &format!("BAD_{i}"), MC, &[]);
        l["calibration"] =
            json!({"verdict": "reject", "reasons": ["generation_artifact"], "flaw": flaw});
        bad.push(l);
    }
    let mut valid = clip_line(&src, "BAD_3", MC, &[]);
    valid["calibration"] = json!({"verdict": "valid", "flaw": {"frames": [1, 2]}});
    bad.push(valid);
    let err = app
        .import(&write_manifest(&src, "bad.jsonl", &bad))
        .await
        .unwrap_err()
        .to_string();
    for at in [
        "line 1, field `calibration.flaw.frames`",
        "line 2, field `calibration.flaw.seconds`",
        "line 3, field `calibration.flaw.minutes`",
        "line 4, field `calibration.flaw`",
    ] {
        assert!(err.contains(at), "{at}: {err}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM calibration_keys").await, 0);
    // A time span and a frame range.
    let mut lines = Vec::new();
    for (id, flaw) in [
        ("CAL_S", json!({"seconds": [2.0, 2.5]})),
        ("CAL_F", json!({"frames": [5, 7]})),
    ] {
        let mut l = clip_line(&src, id, MC, &[]);
        l["calibration"] = json!({"verdict": "reject", "reasons": ["generation_artifact"],
            "note": "the key morphs", "flaw": flaw});
        lines.push(l);
    }
    // CAL_F's video has no frames a tool can read: its rate is not known.
    std::fs::write(src.join("videos/CAL_F.mp4"), broken_mp4("CAL_F")).unwrap();
    lines.push(clip_line(&src, "MAIN_0", MC, &["OE"]));
    lines.push(clip_line(&src, "MARK_0", MC, &[]));
    app.import(&write_manifest(&src, "m.jsonl", &lines))
        .await
        .unwrap();
    // The admin makes an imported clip a calibration clip, with the flaw's place; a
    // place that is not one, or one on a valid clip, is refused and named.
    let admin = app.login("admin1").await;
    let mark = |fields: Vec<(&'static str, &'static str)>| {
        let (app, admin) = (&app, &admin);
        async move {
            let mut form = vec![("clip_id", "MARK_0"), ("note", "the cup melts")];
            form.extend(fields);
            app.page(
                Some(admin),
                Method::POST,
                &format!("/c/{CAMPAIGN}/admin/calibration/mark"),
                Some(&form),
            )
            .await
        }
    };
    for (fields, says) in [
        (
            vec![
                ("verdict", "reject"),
                ("reasons", "generation_artifact"),
                ("flaw_from", "1"),
                ("flaw_to", "x"),
            ],
            "not \u{201c}x\u{201d}",
        ),
        (
            vec![
                ("verdict", "reject"),
                ("reasons", "generation_artifact"),
                ("flaw_from", "3"),
                ("flaw_to", "1"),
            ],
            "span ends before it starts",
        ),
        (
            vec![("verdict", "valid"), ("flaw_from", "1"), ("flaw_to", "2")],
            "a known reject has a flaw to point at",
        ),
    ] {
        let r = mark(fields).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains(says), "{says}: {}", r.text);
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM calibration_keys").await, 2);
    let r = mark(vec![
        ("verdict", "reject"),
        ("reasons", "generation_artifact"),
        ("flaw_from", "1"),
        ("flaw_to", "1.5"),
        ("flaw_unit", "seconds"),
    ])
    .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let listed = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/calibration"),
            None,
        )
        .await;
    assert!(
        listed.text.contains("<td>MARK_0</td>")
            && listed.text.contains("<td>1.000 s to 1.500 s</td>"),
        "{}",
        listed.text
    );
    let path = |id: &str| format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/{id}/verdict");
    let r = app
        .call(
            Method::POST,
            &path("MARK_0"),
            Some(&c.v1),
            Some(json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["known"]["flaw"], json!({"seconds": [1.0, 1.5]}));
    let r = app
        .call(
            Method::POST,
            &path("CAL_S"),
            Some(&c.v0),
            Some(json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["known"]["flaw"], json!({"seconds": [2.0, 2.5]}));
    let web = app.login("val00").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/calibration/1/CAL_S"),
            None,
        )
        .await;
    assert!(
        page.text.contains(
            "<p id=\"flaw\" data-from=\"2.000000\" data-to=\"2.500000\"><strong>Where:</strong> 2.000 s to 2.500 s, marked on the bar"
        ),
        "{}",
        page.text
    );
    let r = app
        .call(
            Method::POST,
            &path("CAL_F"),
            Some(&c.v0),
            Some(json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(
        r.body["known"]["flaw"],
        json!({"frames": [5, 7]}),
        "{}",
        r.text
    );
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/calibration/1/CAL_F"),
            None,
        )
        .await;
    assert!(
        page.text.contains("<p id=\"flaw\"><strong>Where:</strong> frames 5 to 7 <span class=\"muted\">(the clip's frame rate is not known"),
        "{}",
        page.text
    );
    // Before the verdict, nothing says where: the place comes with the known verdict.
    let item = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/CAL_S"),
            &c.v1,
        )
        .await;
    assert_eq!(item.status, StatusCode::OK, "{}", item.text);
    assert!(!item.text.contains("flaw"), "{}", item.text);
}

/// A protocol that reviews no clips (GLIMPSE) starts its review at Stage 2: the
/// calibration page leads there, not to an empty Stage 1.
#[tokio::test]
async fn without_clip_review_the_calibration_page_leads_to_stage_2() {
    let app = spawn_app().await;
    app.campaign_on("glimpse").await;
    app.user("val00", tandem::domain::Role::Validator, Some(0))
        .await;
    app.user("val01", tandem::domain::Role::Validator, Some(1))
        .await;
    let web = app.login("val00").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/calibration"),
            None,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains(&format!(
            "no calibration set: <a href=\"/c/{CAMPAIGN}/review/2\">"
        )),
        "{}",
        page.text
    );
}
