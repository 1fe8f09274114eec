//! Clip files: byte ranges, opaque URLs, and refusals.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tandem::domain::Role;

const MC: &str = "MC_F_EGO_STA";

/// The clip URL on a review page.
fn media_url(html: &str) -> String {
    let at = html.find("src=\"/media/").unwrap() + "src=\"".len();
    html[at..].split('"').next().unwrap().to_string()
}

async fn get_range(
    app: &TestApp,
    web: Option<&Web>,
    path: &str,
    range: Option<&str>,
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = app.client.get(format!("{}{path}", app.base));
    if let Some(w) = web {
        req = req.header("Cookie", &w.cookie);
    }
    if let Some(r) = range {
        req = req.header("Range", r);
    }
    let resp = req.send().await.unwrap();
    (
        resp.status(),
        resp.headers().clone(),
        resp.bytes().await.unwrap().to_vec(),
    )
}

#[tokio::test]
async fn a_clip_is_served_whole_or_by_range_under_an_opaque_url() {
    let app = spawn_app().await;
    cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    let web = app.login("val00").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            None,
        )
        .await;
    let url = media_url(&page.text);
    assert!(
        !url.contains(&ids[0]) && !url.contains(".mp4"),
        "the URL names nothing: {url}"
    );
    let whole = fake_mp4(&ids[0]);

    let (status, headers, body) = get_range(&app, Some(&web), &url, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, whole);
    assert_eq!(headers["content-type"], "video/mp4");
    assert_eq!(headers["accept-ranges"], "bytes");

    let (status, headers, body) = get_range(&app, Some(&web), &url, Some("bytes=4-11")).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(body, whole[4..12].to_vec());
    assert_eq!(
        headers["content-range"],
        format!("bytes 4-11/{}", whole.len()).as_str()
    );
    let (status, _, body) = get_range(&app, Some(&web), &url, Some("bytes=-5")).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::PARTIAL_CONTENT,
            whole[whole.len() - 5..].to_vec()
        )
    );
    let (status, headers, _) = get_range(&app, Some(&web), &url, Some("bytes=9999-")).await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(
        headers["content-range"],
        format!("bytes */{}", whole.len()).as_str()
    );
}

#[tokio::test]
async fn clips_are_refused_to_strangers_and_paths_never_reach_the_disk() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let v2 = app.user("val02", Role::Validator, Some(2)).await;
    // Task 0 = (val00, val01); task 1 = (val01, val02).
    let ids = app.import_clips(&[MC, "QC_F_EGO_DYN"], 1, &[]).await;
    let web0 = app.login("val00").await;
    let web2 = app.login("val02").await;
    let page = app
        .page(
            Some(&web0),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            None,
        )
        .await;
    let url = media_url(&page.text);

    let (status, _, _) = get_range(&app, None, &url, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "anonymous");
    let (status, _, _) = get_range(&app, Some(&web2), &url, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "someone else's URL");
    let r = app
        .page(
            Some(&web2),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "another task's clip page");
    // A grant made while the clip was in val02's work stops working when it leaves it.
    let u2 = app.store.user_by_name("val02").await.unwrap().unwrap();
    let version: i64 =
        sqlx::query_scalar("SELECT current_version_id FROM clips WHERE clip_key = $1")
            .bind(&ids[0])
            .fetch_one(&app.db)
            .await
            .unwrap();
    let token = app.store.media_grant(&u2, version);
    let (status, _, _) = get_range(&app, Some(&web2), &format!("/media/{token}"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "not in val02's queue");
    let _ = (&c, &v2);

    for path in [
        "/media/..%2F..%2Fetc%2Fpasswd".to_string(),
        "/media/../../etc/passwd".to_string(),
        "/media/%2e%2e/tandem.db".to_string(),
        format!("/media/{}", "a".repeat(64)),
        "/media/videos%2FMC_F_EGO_STA_0000.mp4".to_string(),
    ] {
        let (status, _, body) = get_range(&app, Some(&web0), &path, None).await;
        assert!(
            status == StatusCode::NOT_FOUND || status == StatusCode::BAD_REQUEST,
            "{path}: {status}"
        );
        assert!(!String::from_utf8_lossy(&body).contains("root:"), "{path}");
    }
}

#[tokio::test]
async fn an_author_sees_the_clips_of_splits_only() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    app.pass(&c.v0, 1, &ids[0]).await;
    app.verdict(
        &c.v1,
        1,
        &ids[0],
        json!({"verdict": "reject", "reasons": ["prompt_drift"]}),
    )
    .await;
    let web = app.login("author1").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/1/{}", ids[0]),
            None,
        )
        .await;
    let (status, _, _) = get_range(&app, Some(&web), &media_url(&page.text), None).await;
    assert_eq!(status, StatusCode::OK);
    let author = app.store.user_by_name("author1").await.unwrap().unwrap();
    let version: i64 =
        sqlx::query_scalar("SELECT current_version_id FROM clips WHERE clip_key = $1")
            .bind(&ids[1])
            .fetch_one(&app.db)
            .await
            .unwrap();
    let token = app.store.media_grant(&author, version);
    let (status, _, _) = get_range(&app, Some(&web), &format!("/media/{token}"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_strip_of_eight_frames_is_drawn_when_ffmpeg_is_installed() {
    let app = spawn_app().await;
    cast(&app).await;
    let src = app.source();
    let m =
        tandem::demo::write_sample_manifest(&src, &tandem::domain::taxonomy::Taxonomy::vgenst())
            .unwrap();
    app.import(&m).await.unwrap();
    let web = app.login("val00").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/MC_F_EGO_STA_D00"),
            None,
        )
        .await;
    let url = media_url(&page.text);
    let (status, headers, body) = get_range(&app, Some(&web), &format!("{url}/strip"), None).await;
    if tandem::web::media::strips_possible() {
        assert!(page.text.contains("class=\"strip\""));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["content-type"], "image/jpeg");
        assert!(body.starts_with(&[0xFF, 0xD8]), "a JPEG");
    } else {
        eprintln!("ffmpeg is not installed: checking that no strip is offered");
        assert!(!page.text.contains("class=\"strip\""));
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}
