//! Verdicts arriving at the same moment give exactly one outcome.

use crate::helpers::*;
use futures_util_free::join_all;
use reqwest::StatusCode;

/// `join_all` without another dependency: spawn every future, then await them in order.
mod futures_util_free {
    pub async fn join_all<F>(futs: Vec<F>) -> Vec<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.await.expect("task"));
        }
        out
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_pairs_of_opposite_verdicts_give_fifty_splits() {
    let app = std::sync::Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 50, &[]).await;
    let mut futs = Vec::new();
    for id in &ids {
        for (token, valid) in [(c.v0.clone(), true), (c.v1.clone(), false)] {
            let app = app.clone();
            let id = id.clone();
            futs.push(async move {
                if valid {
                    app.pass(&token, 1, &id).await.status
                } else {
                    app.reject(&token, 1, &id, "generation_artifact")
                        .await
                        .status
                }
            });
        }
    }
    let statuses = join_all(futs).await;
    assert!(
        statuses.iter().all(|s| *s == StatusCode::CREATED),
        "{statuses:?}"
    );
    for id in &ids {
        assert_eq!(app.outcome(1, id).await, "split", "{id}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 100);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE stage = 1 AND outcome = 'split' AND final1_id IS NOT NULL AND final2_id IS NOT NULL").await,
        50
    );
    let r = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/splits/1"), &c.author)
        .await;
    assert_eq!(r.body["splits"].as_array().map(Vec::len), Some(50));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_equal_verdicts_give_one_agreement_each() {
    let app = std::sync::Arc::new(spawn_app().await);
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 30, &[]).await;
    let mut futs = Vec::new();
    for id in &ids {
        for token in [c.v0.clone(), c.v1.clone()] {
            let app = app.clone();
            let id = id.clone();
            futs.push(async move { app.pass(&token, 1, &id).await.status });
        }
    }
    let statuses = join_all(futs).await;
    assert!(statuses.iter().all(|s| *s == StatusCode::CREATED));
    assert_eq!(
        app.count("SELECT COUNT(*) FROM items WHERE stage = 1 AND outcome = 'both_pass'")
            .await,
        30
    );
}
