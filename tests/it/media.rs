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
    let token = app.store.media_grant(&u2, version).unwrap();
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
    let token = app.store.media_grant(&author, version).unwrap();
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
    if has_ffmpeg() {
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

/// Imports one clip whose file is `size` bytes (more than one read's worth when large),
/// and returns its id and bytes.
async fn big_clip(app: &TestApp, size: usize) -> (String, Vec<u8>) {
    let src = app.source();
    let id = format!("{MC}_0000");
    let line = clip_line(&src, &id, MC, &[]);
    let mut bytes = fake_mp4(&id);
    let mut x: u32 = 12345;
    while bytes.len() < size {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push((x >> 16) as u8);
    }
    std::fs::write(src.join(format!("videos/{id}.mp4")), &bytes).unwrap();
    let m = write_manifest(&src, "big.jsonl", &[line]);
    app.import(&m).await.expect("import");
    (id, bytes)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) async fn get_with(
    app: &TestApp,
    web: &Web,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = app
        .client
        .get(format!("{}{path}", app.base))
        .header("Cookie", &web.cookie);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    (
        resp.status(),
        resp.headers().clone(),
        resp.bytes().await.unwrap().to_vec(),
    )
}

/// The parts of a multipart/byteranges body: each part's Content-Range and bytes.
fn parts(content_type: &str, body: &[u8]) -> Vec<(String, Vec<u8>)> {
    let boundary = content_type
        .strip_prefix("multipart/byteranges; boundary=")
        .expect("a multipart reply");
    let delimiter = format!("--{boundary}");
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let at = rest
            .windows(delimiter.len())
            .position(|w| w == delimiter.as_bytes())
            .expect("a delimiter");
        rest = &rest[at + delimiter.len()..];
        if rest.starts_with(b"--") {
            assert_eq!(rest, b"--\r\n", "nothing after the closing delimiter");
            return out;
        }
        let head_end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8(rest[..head_end].to_vec()).unwrap();
        let range = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Range: bytes "))
            .expect("a Content-Range")
            .to_string();
        let (span, _) = range.split_once('/').unwrap();
        let (s, e) = span.split_once('-').unwrap();
        let len = e.parse::<usize>().unwrap() - s.parse::<usize>().unwrap() + 1;
        let data = rest[head_end + 4..head_end + 4 + len].to_vec();
        rest = &rest[head_end + 4 + len..];
        assert!(rest.starts_with(b"\r\n"), "a part ends with CRLF");
        out.push((range, data));
    }
}

#[tokio::test]
async fn clips_revalidate_with_their_hash_honour_if_range_and_answer_several_ranges() {
    let app = spawn_app().await;
    cast(&app).await;
    let size = 1_500_000;
    let (id, whole) = big_clip(&app, size).await;
    let web = app.login("val00").await;
    let page = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{id}"),
            None,
        )
        .await;
    let url = media_url(&page.text);

    // The whole file streams (larger than one read), with its validators.
    let (status, headers, body) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body == whole, "the whole file, byte for byte");
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert_eq!(
        etag,
        format!("\"{}\"", sha256_hex(&whole)),
        "the stored SHA-256"
    );
    let date = headers["last-modified"].to_str().unwrap().to_string();
    assert_eq!(headers["content-length"], size.to_string().as_str());

    // Conditional requests.
    for (name, value) in [
        ("If-None-Match", etag.as_str()),
        ("If-None-Match", "\"other\", *"),
        ("If-Modified-Since", date.as_str()),
    ] {
        let (status, headers, body) = get_with(&app, &web, &url, &[(name, value)]).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED, "{name}: {value}");
        assert_eq!(headers["etag"], etag.as_str());
        assert!(body.is_empty());
    }
    let (status, _, body) = get_with(&app, &web, &url, &[("If-None-Match", "\"other\"")]).await;
    assert_eq!((status, body.len()), (StatusCode::OK, size));
    let (status, _, _) = get_with(
        &app,
        &web,
        &url,
        &[("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // If-Range: the range only for the same file.
    let range = ("Range", "bytes=100-199");
    for current in [etag.as_str(), date.as_str()] {
        let (status, headers, body) =
            get_with(&app, &web, &url, &[range, ("If-Range", current)]).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT, "If-Range {current}");
        assert_eq!(
            headers["content-range"],
            format!("bytes 100-199/{size}").as_str()
        );
        assert_eq!(body, whole[100..200].to_vec());
    }
    let stale = format!("\"{}\"", sha256_hex(b"an older version"));
    let (status, headers, body) = get_with(&app, &web, &url, &[range, ("If-Range", &stale)]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a stale If-Range gives the whole file"
    );
    assert!(headers.get("content-range").is_none());
    assert!(body == whole);

    // Several ranges: one multipart reply whose parts are the file's bytes, small
    // (read at once) and large (streamed).
    for spec in [
        "bytes=0-99,700000-700099,-100",
        "bytes=1000000-1399999,0-299999",
    ] {
        let (status, headers, body) = get_with(&app, &web, &url, &[("Range", spec)]).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT, "{spec}");
        assert_eq!(headers["content-length"], body.len().to_string().as_str());
        let got = parts(headers["content-type"].to_str().unwrap(), &body);
        let mut want: Vec<(usize, usize)> = spec["bytes=".len()..]
            .split(',')
            .map(|r| match r.split_once('-').unwrap() {
                ("", n) => (size - n.parse::<usize>().unwrap(), size - 1),
                (a, b) => (a.parse().unwrap(), b.parse().unwrap()),
            })
            .collect();
        want.sort();
        assert_eq!(got.len(), want.len(), "{spec}");
        for ((range, data), (s, e)) in got.iter().zip(&want) {
            assert_eq!(range, &format!("{s}-{e}/{size}"));
            assert!(data[..] == whole[*s..=*e], "{spec}: bytes {s}-{e}");
        }
    }
    // Overlapping ranges merge into one plain 206.
    let (status, headers, body) = get_with(&app, &web, &url, &[("Range", "bytes=0-9,5-19")]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(
        headers["content-range"],
        format!("bytes 0-19/{size}").as_str()
    );
    assert_eq!(body, whole[..20].to_vec());
    // Too many ranges: refused with the reason, not the whole file.
    let many: Vec<String> = (0..40)
        .map(|i| format!("{}-{}", i * 100, i * 100 + 9))
        .collect();
    let (status, headers, body) = get_with(
        &app,
        &web,
        &url,
        &[("Range", &format!("bytes={}", many.join(",")))],
    )
    .await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(headers["content-range"], format!("bytes */{size}").as_str());
    assert!(String::from_utf8_lossy(&body).contains("at most 16 ranges"));

    // HEAD: the headers, no body.
    let r = app
        .client
        .head(format!("{}{url}", app.base))
        .header("Cookie", &web.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-length"], size.to_string().as_str());
    assert_eq!(r.headers()["etag"], etag.as_str());
}

#[tokio::test]
async fn api_replies_name_the_clip_and_the_token_fetches_what_the_session_does() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/items/1/{}", ids[0]),
            &c.v0,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let url = r.body["clip"]["media_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with("/media/") && !url.contains(&ids[0]),
        "{url}"
    );
    assert_eq!(r.body["clip"]["strip_url"].as_str().is_some(), has_ffmpeg());
    let web = app.login("val00").await;
    let by_session = get_with(&app, &web, &url, &[]).await;
    let fetch = |token: Option<String>| {
        let req = app.client.get(format!("{}{url}", app.base));
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        async move {
            let resp = req.send().await.unwrap();
            (resp.status(), resp.bytes().await.unwrap().to_vec())
        }
    };
    let (status, body) = fetch(Some(c.v0.clone())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, fake_mp4(&ids[0]));
    assert_eq!((status, body), (by_session.0, by_session.2));
    // Someone else's token, a wrong one, none.
    assert_eq!(fetch(Some(c.v1.clone())).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        fetch(Some("tdm_nope".into())).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(fetch(None).await.0, StatusCode::UNAUTHORIZED);

    // A disabled account gets nothing, by token or by session, at once.
    let r = app
        .call(
            Method::POST,
            "/api/v1/users/val00/disable",
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(fetch(Some(c.v0.clone())).await.0, StatusCode::UNAUTHORIZED);
    let (status, _, _) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn study_clips_carry_no_hash_and_no_date_and_are_never_not_modified() {
    let app = spawn_app().await;
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 1))
        .await
        .unwrap();
    let c = cast(&app).await;
    let r = app.get("/api/v1/studies/1/sets/1", &c.participant).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let url = r.body["clips"][0]["video"].as_str().unwrap().to_string();
    for headers in [
        vec![],
        vec![("If-None-Match", "*")],
        vec![("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")],
        vec![("Range", "bytes=0-9")],
    ] {
        let mut req = app
            .client
            .get(format!("{}{url}", app.base))
            .bearer_auth(&c.participant);
        for (k, v) in &headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.unwrap();
        assert!(resp.status().is_success(), "{headers:?}: {}", resp.status());
        for h in [
            "etag",
            "last-modified",
            "date-modified",
            "content-disposition",
        ] {
            assert!(resp.headers().get(h).is_none(), "{headers:?}: {h}");
        }
    }
    // Another participant's token reaches nothing.
    let other = app.user("part2", Role::Participant, None).await;
    let resp = app
        .client
        .get(format!("{}{url}", app.base))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn frame_rates_are_read_once_stored_and_given_to_the_player() {
    let app = spawn_app().await;
    cast(&app).await;
    let src = app.source();
    let mut real = clip_line(&src, "REAL", MC, &[]);
    std::fs::write(src.join("videos/REAL.webm"), tandem::demo::CLIPS[0]).unwrap();
    real["file"] = json!("videos/REAL.webm");
    let fake = clip_line(&src, "FAKE", "QC_F_EGO_DYN", &[]);
    std::fs::write(src.join("videos/FAKE.mp4"), broken_mp4("FAKE")).unwrap();
    app.import(&write_manifest(&src, "m.jsonl", &[real, fake]))
        .await
        .unwrap();
    if !has_ffmpeg() {
        // Neither is an MP4 whose tables say: both wait for ffprobe.
        let p = tandem::app::probe_timings(&app.store, &app.config)
            .await
            .unwrap();
        assert_eq!((p.timed, p.unreadable, p.untried), (0, 0, 2), "{p:?}");
        eprintln!("ffmpeg is not installed: frame timing not checked");
        return;
    }
    let web = app.login("val00").await;
    let review = |id: &'static str| {
        let (app, web) = (&app, &web);
        async move {
            app.page(
                Some(web),
                Method::GET,
                &format!("/c/{CAMPAIGN}/review/1/{id}"),
                None,
            )
            .await
            .text
        }
    };
    // The import read both videos as it took them in: nothing is left to ask.
    let again = tandem::app::probe_timings(&app.store, &app.config)
        .await
        .unwrap();
    assert_eq!(
        (again.timed, again.unreadable, again.untried),
        (0, 0, 0),
        "each video is asked once"
    );
    // The page carries what ffprobe says about the file itself.
    let path = src.join("videos/REAL.webm");
    let t = tandem::io::video::probe_timing(&path).unwrap();
    assert!(t.constant && t.frames > 1, "{t:?}");
    let page = review("REAL").await;
    assert!(
        page.contains(&format!(
            "data-fps=\"{}\" data-frames=\"{}\"",
            t.fps, t.frames
        )),
        "{page}"
    );
    let web1 = app.login("val01").await;
    let fake = app
        .page(
            Some(&web1),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/FAKE"),
            None,
        )
        .await;
    assert_eq!(fake.status, StatusCode::OK);
    assert!(
        !fake.text.contains("data-fps"),
        "unreadable: steps by presented frames"
    );
}
