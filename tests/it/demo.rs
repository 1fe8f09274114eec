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
