//! `tandem demo` builds what its printed instructions promise.

use tandem::domain::Stage;

#[tokio::test]
async fn the_demo_campaign_holds_what_the_readme_says() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("demo");
    let (_config, store, accounts) = tandem::demo::build(&data, None).await.unwrap();
    let names: Vec<&str> = accounts.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "admin", "val00", "val01", "val02", "val03", "author", "part1"
        ]
    );
    let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();

    // One split waits for the author in Stage 1.
    let splits = store.splits(&campaign, Stage::Clip, false).await.unwrap();
    assert_eq!(splits.len(), 1);

    // val00 starts with the three calibration clips, and the review is closed until then.
    let val00 = store.user_by_name("val00").await.unwrap().unwrap();
    let status = store.calibration_status(&campaign, &val00).await.unwrap();
    assert_eq!((status.total, status.required, status.decided), (3, 3, 0));
    assert!(status.next.is_some());
    let closed = store.require_calibrated(&campaign, &val00).await;
    assert!(
        matches!(closed, Err(tandem::Error::Forbidden(_))),
        "{closed:?}"
    );

    // A study of three sets for part1.
    let study = store.require_study(&campaign).await.unwrap();
    assert_eq!(store.study_size(&study).await.unwrap(), (3, 12));
    let part1 = store.user_by_name("part1").await.unwrap().unwrap();
    let p = store.study_progress(&study, &part1).await.unwrap();
    assert_eq!((p.total, p.answered, p.next), (3, 0, Some(1)));

    // The human baseline, set up on the one clip whose questions are kept.
    assert!(store.baseline(&campaign).await.unwrap().is_some());
    let (asked, _) = tandem::app::baseline::questions(&store, &campaign)
        .await
        .unwrap();
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|q| q.question_id.contains("_D08")),
        "{asked:?}"
    );

    // A second run over the same folder starts afresh instead of failing.
    drop(store);
    let (_c, store, _) = tandem::demo::build(&data, None).await.unwrap();
    let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();
    assert_eq!(
        store
            .splits(&campaign, Stage::Clip, false)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// `tandem demo --protocol glimpse|tumtraffic`: the same demo on another protocol's
/// tasks and QA types (the twelve clips go to its tasks in turn), the campaign created
/// with that protocol, and the same split waiting for the author (of its first review
/// stage: GLIMPSE reviews no clips).
#[tokio::test]
async fn the_demo_runs_on_the_shipped_example_protocols() {
    for (name, tasks, per_clip) in [("glimpse", 11, 1), ("tumtraffic", 3, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("demo");
        let text = tandem::domain::protocol::shipped(name).unwrap();
        let protocol = tandem::domain::protocol::parse(text).unwrap();
        let (_config, store, _accounts) = tandem::demo::build_with(&data, None, Some(&protocol))
            .await
            .unwrap();
        let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();
        assert_eq!(*campaign.taxonomy, protocol.taxonomy, "{name}");
        assert_eq!(store.tasks(&campaign).await.unwrap().len(), tasks);
        let manifest =
            std::fs::read_to_string(data.join("sample-clips").join("manifest.jsonl")).unwrap();
        let clips: Vec<serde_json::Value> = manifest
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(clips.len(), 12, "{name}");
        for (i, clip) in clips.iter().enumerate() {
            let task = &protocol.taxonomy.tasks[i % tasks].code;
            assert_eq!(clip["task"], task.as_str(), "{name}: {clip}");
            let questions = clip["questions"].as_array().unwrap();
            assert!(!questions.is_empty(), "{name}: {clip}");
            for q in questions {
                let qa = q["qa_type"].as_str().unwrap();
                assert!(protocol.taxonomy.applies(task, qa), "{name}: {q}");
            }
        }
        assert_eq!(
            clips[0]["questions"].as_array().unwrap().len(),
            per_clip,
            "{name}: one question per level the task has"
        );
        // GLIMPSE reviews no clips: its split, and its calibration items, are questions.
        let stage = if protocol.taxonomy.clip_review {
            Stage::Clip
        } else {
            Stage::Question
        };
        let splits = store.splits(&campaign, stage, false).await.unwrap();
        assert_eq!(splits.len(), 1, "{name}");
        let other = if stage == Stage::Clip {
            Stage::Question
        } else {
            Stage::Clip
        };
        assert!(
            store
                .splits(&campaign, other, false)
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
        store.close().await;
    }
}
