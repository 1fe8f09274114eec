//! Media in S3-compatible object storage: imports upload before the database names a
//! video, clips are served from the bucket with the same ranges and validators as from
//! the disk, a bucket that stops answering is a 503 that ends when it answers again,
//! and `tandem media migrate` moves an installation's media both ways.

use crate::helpers::*;
use crate::media::get_with;
use crate::s3::*;
use reqwest::{Method, StatusCode};

const MC: &str = "MC_F_EGO_STA";

fn media_url(html: &str) -> String {
    let at = html.find("src=\"/media/").expect("a clip URL") + "src=\"".len();
    html[at..].split('"').next().expect("a URL").to_string()
}

/// A clip of `size` bytes (MP4 by its first bytes, the rest seeded noise) imported
/// through the same path as `tandem import`.
async fn import_big(app: &TestApp, id: &str, size: usize) -> tandem::Result<Vec<u8>> {
    let src = app.source();
    let line = clip_line(&src, id, MC, &[]);
    let mut bytes = fake_mp4(id);
    let mut x: u32 = 777;
    while bytes.len() < size {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push((x >> 16) as u8);
    }
    std::fs::write(src.join(format!("videos/{id}.mp4")), &bytes).unwrap();
    let m = write_manifest(&src, &format!("{id}.jsonl"), &[line]);
    app.import(&m).await.map(|_| bytes)
}

async fn clip_url(app: &TestApp, web: &Web, id: &str) -> String {
    let page = app
        .page(
            Some(web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/{id}"),
            None,
        )
        .await;
    media_url(&page.text)
}

/// Runs `tandem ARGS` on the installation in `data` (its database at `db`, else the
/// folder's SQLite file) with the `AWS_*` variables `vars`: whether it succeeded, what it
/// printed, what it said on standard error.
fn run_tandem(
    data: &std::path::Path,
    db: Option<&str>,
    vars: &[(String, String)],
    args: &[&str],
) -> (bool, String, String) {
    let out = tandem_command(data, db)
        .envs(vars.iter().cloned())
        .args(args)
        .output()
        .expect("run tandem");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Local files the media folder holds that Tandem names (videos, strips): none when
/// the media live in a bucket.
fn stored_locally(app: &TestApp) -> Vec<String> {
    std::fs::read_dir(&app.config.media_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| tandem::io::objects::is_stored_name(n))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clips_in_a_bucket_are_uploaded_whole_and_served_by_range_with_their_hash() {
    // Every request asks the bucket for the object (no open object reused), so that a
    // removed object is seen at once.
    let (app, s3) = spawn_app_on_s3_with("lab/v1", |c| {
        c.open_file_reuse = std::time::Duration::ZERO;
    })
    .await;
    cast(&app).await;
    // Larger than one part: it goes up in parts.
    let size = tandem::io::objects::PART_BYTES + 1_500_000;
    let id = format!("{MC}_0000");
    let whole = import_big(&app, &id, size).await.expect("import");
    let sha = tandem::auth::sha256_hex(&whole);
    assert_eq!(
        s3.objects("lab/v1"),
        vec![sha.clone()],
        "the video, by its hash"
    );
    assert!(
        stored_locally(&app).is_empty(),
        "nothing stored in the local folder: {:?}",
        stored_locally(&app)
    );
    let stored = std::fs::read(s3.root.join(BUCKET).join("lab/v1").join(&sha)).unwrap();
    assert!(stored == whole, "the object holds the file, byte for byte");

    let web = app.login("val00").await;
    let url = clip_url(&app, &web, &id).await;
    let (status, headers, body) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body == whole, "the whole file from the bucket");
    assert_eq!(headers["content-length"], size.to_string().as_str());
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert_eq!(etag, format!("\"{sha}\""));
    let date = headers["last-modified"].to_str().unwrap().to_string();

    for (name, value) in [
        ("If-None-Match", etag.as_str()),
        ("If-Modified-Since", &date),
    ] {
        let (status, _, body) = get_with(&app, &web, &url, &[(name, value)]).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED, "{name}");
        assert!(body.is_empty());
    }
    for current in [etag.as_str(), date.as_str()] {
        let (status, headers, body) = get_with(
            &app,
            &web,
            &url,
            &[("Range", "bytes=100-199"), ("If-Range", current)],
        )
        .await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT);
        assert_eq!(
            headers["content-range"],
            format!("bytes 100-199/{size}").as_str()
        );
        assert_eq!(body, whole[100..200].to_vec());
    }
    let (status, _, body) = get_with(
        &app,
        &web,
        &url,
        &[("Range", "bytes=0-9"), ("If-Range", "\"stale\"")],
    )
    .await;
    assert!(
        status == StatusCode::OK && body == whole,
        "a stale If-Range: the whole file"
    );
    // Small ranges go through the block cache: one across a block's end, asked twice
    // (the second from memory), and the file's last bytes (a short last block).
    let b = tandem::io::objects::BLOCK_BYTES as usize;
    for _ in 0..2 {
        let range = format!("bytes={}-{}", b - 500, b + 499);
        let (status, _, body) = get_with(&app, &web, &url, &[("Range", &range)]).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT);
        assert!(body[..] == whole[b - 500..b + 500], "{range}");
        let (status, _, body) = get_with(&app, &web, &url, &[("Range", "bytes=-1000")]).await;
        assert_eq!(status, StatusCode::PARTIAL_CONTENT);
        assert!(body[..] == whole[size - 1000..]);
    }
    // A large range streams; several ranges are one multipart reply.
    let (status, _, body) = get_with(&app, &web, &url, &[("Range", "bytes=1000-8999999")]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert!(body[..] == whole[1000..9_000_000]);
    let (status, headers, body) = get_with(&app, &web, &url, &[("Range", "bytes=0-99,-100")]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    let ct = headers["content-type"].to_str().unwrap();
    assert!(ct.starts_with("multipart/byteranges; boundary="), "{ct}");
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains(&format!(
        "Content-Range: bytes {}-{}/{size}",
        size - 100,
        size - 1
    )));
    assert_eq!(headers["content-length"], body.len().to_string().as_str());
    let (status, _, _) = get_with(&app, &web, &url, &[("Range", &format!("bytes={size}-"))]).await;
    assert_eq!(status, StatusCode::RANGE_NOT_SATISFIABLE);

    // The same video under another clip is not uploaded again.
    let src = app.source();
    let twin = format!("{MC}_0001");
    let line = clip_line(&src, &twin, MC, &[]);
    std::fs::write(src.join(format!("videos/{twin}.mp4")), &whole).unwrap();
    app.import(&write_manifest(&src, "twin.jsonl", &[line]))
        .await
        .expect("import");
    assert_eq!(s3.objects("lab/v1"), vec![sha.clone()]);

    // An object gone from the bucket is a 404 (and the log says which).
    std::fs::remove_file(s3.root.join(BUCKET).join("lab/v1").join(&sha)).unwrap();
    let (status, _, _) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_that_stops_answering_is_a_503_and_nothing_is_half_imported() {
    let (app, mut s3) = spawn_app_on_s3("m").await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    let web = app.login("val00").await;
    let (seen, url) = (
        clip_url(&app, &web, &ids[0]).await,
        clip_url(&app, &web, &ids[1]).await,
    );
    let (status, _, _) = get_with(&app, &web, &seen, &[]).await;
    assert_eq!(status, StatusCode::OK);

    assert_eq!(
        app.client
            .get(format!("{}/healthz", app.base))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    let ready = |app: &TestApp| {
        let (client, base) = (app.client.clone(), app.base.clone());
        async move {
            let r = client.get(format!("{base}/readyz")).send().await.unwrap();
            (r.status(), r.json::<serde_json::Value>().await.unwrap())
        }
    };
    let (status, body) = ready(&app).await;
    assert_eq!(
        (status, body["media"].as_str()),
        (StatusCode::OK, Some("answers"))
    );
    s3.stop();
    // The store's state is asked at most once a second: asked again once the server's
    // clock has moved a second on.
    app.store.clock().advance(std::time::Duration::from_secs(1));
    let (status, body) = ready(&app).await;
    assert_eq!(
        (status, body["media"].as_str()),
        (StatusCode::OK, Some("does not answer")),
        "ready (everything else answers), and the store's state said"
    );
    let before = app.dump().await;
    let asked = std::time::Instant::now();
    let (status, headers, body) = get_with(&app, &web, &url, &[("Range", "bytes=0-9")]).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert!(headers.contains_key("retry-after"));
    assert!(
        String::from_utf8_lossy(&body).contains("media store"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(30),
        "answered in time"
    );
    // A clip just read is still answered from the recently read blocks.
    let (status, _, body) = get_with(&app, &web, &seen, &[("Range", "bytes=0-9")]).await;
    assert_eq!(status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(body, fake_mp4(&ids[0])[..10].to_vec());
    // What does not need the bucket answers as before.
    let q = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/queue/1"), &c.v0)
        .await;
    assert_eq!(q.status, StatusCode::OK);
    // An import fails with words that say why, and stores nothing.
    let err = import_big(&app, &format!("{MC}_0007"), 2000)
        .await
        .expect_err("no bucket, no import");
    let words = err.to_string();
    assert!(
        words.contains("nothing was imported") && words.contains("media store"),
        "{words}"
    );
    assert!(app.dump().await == before, "nothing half-imported");
    assert!(stored_locally(&app).is_empty());

    // The bucket answers again: clips are served and the import runs, no restart.
    s3.restart().await;
    let (status, _, body) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, fake_mp4(&ids[1]));
    let bytes = import_big(&app, &format!("{MC}_0007"), 2000)
        .await
        .expect("import");
    assert!(s3.objects("m").contains(&tandem::auth::sha256_hex(&bytes)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_that_goes_down_in_the_middle_of_an_upload_leaves_nothing_and_the_import_runs_again()
 {
    let (app, mut s3) = spawn_app_on_s3("up").await;
    cast(&app).await;
    let before = app.dump().await;
    // Three parts; the S3 server goes down when the second arrives.
    let size = 2 * tandem::io::objects::PART_BYTES + 1_000_000;
    let id = format!("{MC}_0003");
    s3.stop_after_parts(1);
    let asked = std::time::Instant::now();
    let err = import_big(&app, &id, size)
        .await
        .expect_err("the bucket went down");
    assert!(s3.went_down(), "the server went down during the upload");
    let words = err.to_string();
    assert!(
        words.contains("nothing was imported") && words.contains("media store"),
        "{words}"
    );
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(60),
        "the import gave up in time: {:?}",
        asked.elapsed()
    );
    assert!(app.dump().await == before, "nothing half-imported");
    assert!(
        s3.objects("up").is_empty(),
        "no object: {:?}",
        s3.objects("up")
    );
    assert!(stored_locally(&app).is_empty());

    // The same import, run again once the bucket answers, stores the whole clip.
    s3.restart().await;
    let whole = import_big(&app, &id, size).await.expect("import");
    let sha = tandem::auth::sha256_hex(&whole);
    assert_eq!(s3.objects("up"), vec![sha.clone()]);
    let stored = std::fs::read(s3.root.join(BUCKET).join("up").join(&sha)).unwrap();
    assert!(stored == whole, "the object is the whole file");
    let web = app.login("val00").await;
    let url = clip_url(&app, &web, &id).await;
    let (status, _, body) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body == whole);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_migrate_moves_every_file_both_ways_and_servers_follow_without_a_restart() {
    let s3 = S3Server::start().await;
    let vars = s3.vars();
    // No open file reused: a clip served after the move comes from where the server
    // reads now, not from a file it opened before.
    let app = spawn_app_with(move |c| {
        c.aws = vars;
        c.open_file_reuse = std::time::Duration::ZERO;
    })
    .await;
    cast(&app).await;
    let ids = app.import_clips(&[MC], 3, &[]).await;
    let local = stored_locally(&app);
    assert_eq!(local.len(), 3);
    let web = app.login("val00").await;
    let url = clip_url(&app, &web, &ids[1]).await;
    let url_db = app.config.database_url.clone();
    let db = (!url_db.starts_with("sqlite:")).then_some(url_db.as_str());

    let vars = s3.vars();
    let data = app.dir.path().join("data");
    let run = |args: &[&str]| run_tandem(&data, db, &vars, args);
    // A file damaged on the disk stops the move before the switch.
    let victim = app.config.media_dir.join(&local[0]);
    let kept = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, b"damaged").unwrap();
    let (ok, _, err) = run(&["media", "migrate", "--to", &format!("s3://{BUCKET}/moved")]);
    assert!(!ok && err.contains("damaged"), "{err}");
    assert_eq!(
        app.store.media_location().await.unwrap(),
        "local",
        "not switched"
    );
    std::fs::write(&victim, &kept).unwrap();

    let (ok, out, err) = run(&["media", "migrate", "--to", &format!("s3://{BUCKET}/moved")]);
    assert!(ok, "{err}");
    assert!(
        out.contains("from local to s3://tandem-media/moved"),
        "{out}"
    );
    let mut want = local.clone();
    want.sort();
    assert_eq!(s3.objects("moved"), want, "every file in the bucket");
    assert_eq!(
        app.store.media_location().await.unwrap(),
        format!("s3://{BUCKET}/moved")
    );
    // The running server serves from the bucket now: the local files are gone.
    for f in &local {
        std::fs::remove_file(app.config.media_dir.join(f)).unwrap();
    }
    let (status, _, body) = get_with(&app, &web, &url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, fake_mp4(&ids[1]));
    let (ok, out, _) = run(&["media", "show"]);
    assert!(
        ok && out.contains("s3://tandem-media/moved") && out.contains("3 stored file(s)"),
        "{out}"
    );

    // And back: every file fetched, checked and in the folder again.
    let (ok, out, err) = run(&["media", "migrate", "--to", "local"]);
    assert!(ok, "{err}");
    assert!(out.contains("3 file(s) copied"), "{out}");
    let mut back = stored_locally(&app);
    back.sort();
    assert_eq!(back, want);
    assert_eq!(app.store.media_location().await.unwrap(), "local");
    let (ok, _, err) = run(&["media", "migrate", "--to", "local"]);
    assert!(!ok && err.contains("already"), "{err}");
    let (ok, _, err) = run(&["media", "migrate", "--to", "s3://No_Such"]);
    assert!(!ok && err.contains("media:"), "{err}");
}

/// Two servers that share nothing but the database (PostgreSQL under `.ci/run`'s
/// second pass, else one SQLite file) and the bucket, each with a data folder of its
/// own: each imports half the clips, and each serves the other's, whole and by range,
/// with the same validators; a strip one draws is stored once for both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_sharing_only_the_database_and_the_bucket_serve_each_others_clips() {
    let s3 = S3Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (data_a, data_b) = (dir.path().join("a"), dir.path().join("b"));
    let url = match test_database_url().await {
        Some(u) => u,
        None => tandem::config::sqlite_url(&dir.path().join("shared.db")),
    };
    let config = tandem::Config::new(&data_a, Some(url.clone())).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    for (i, name) in ["val00", "val01"].iter().enumerate() {
        store
            .add_user(
                name,
                tandem::domain::Role::Validator,
                &hash,
                Some(CAMPAIGN.into()),
                Some(i as i64),
            )
            .await
            .unwrap();
    }
    let token = store.create_token("val00", "test").await.unwrap();
    store
        .set_media_location(&format!("s3://{BUCKET}/shared"))
        .await
        .unwrap();
    store.close().await;

    // Half the clips imported by each server's machine (the CLI, its own data folder).
    let src = dir.path().join("src");
    let mut bytes = std::collections::HashMap::new();
    for (half, data) in [(0, &data_a), (1, &data_b)] {
        let mut lines = Vec::new();
        for k in 0..3 {
            let id = format!("{MC}_{half}{k}");
            lines.push(clip_line(&src, &id, MC, &[]));
            bytes.insert(id.clone(), fake_mp4(&id));
        }
        if half == 1 && has_ffmpeg() {
            // One real clip, for a strip.
            let id = format!("{MC}_demo");
            let mut line = clip_line(&src, &id, MC, &[]);
            std::fs::write(src.join("videos/demo.webm"), tandem::demo::CLIPS[0]).unwrap();
            line["file"] = "videos/demo.webm".into();
            lines.push(line);
            bytes.insert(id, tandem::demo::CLIPS[0].to_vec());
        }
        let m = write_manifest(&src, &format!("half{half}.jsonl"), &lines);
        let out = tandem_command(data, Some(&url))
            .envs(s3.vars())
            .args(["import", m.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        s3.objects("shared").len(),
        bytes.len(),
        "every video in the bucket once"
    );
    for data in [&data_a, &data_b] {
        let local: Vec<_> = std::fs::read_dir(data.join("media"))
            .map(|e| {
                e.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| tandem::io::objects::is_stored_name(n))
                    .collect()
            })
            .unwrap_or_default();
        assert!(local.is_empty(), "{local:?}");
    }

    let (a, b) = (
        start_server_with_env(&data_a, Some(&url), &[], &s3.vars()),
        start_server_with_env(&data_b, Some(&url), &[], &s3.vars()),
    );
    let client = reqwest::Client::new();
    for (id, want) in &bytes {
        // The URL one server gives is served by the other, with the same validators.
        let item: serde_json::Value = client
            .get(format!(
                "{}/api/v1/campaigns/{CAMPAIGN}/items/1/{id}",
                a.base
            ))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let media = item["clip"]["media_url"].as_str().unwrap().to_string();
        let mut tags = Vec::new();
        for server in [&a, &b] {
            let r = client
                .get(format!("{}{media}", server.base))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK, "{id} from {}", server.base);
            tags.push((
                r.headers()["etag"].to_str().unwrap().to_string(),
                r.headers()["last-modified"].to_str().unwrap().to_string(),
            ));
            assert!(r.bytes().await.unwrap()[..] == want[..], "{id}");
            let r = client
                .get(format!("{}{media}", server.base))
                .bearer_auth(&token)
                .header("Range", "bytes=2-9")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::PARTIAL_CONTENT);
            assert!(r.bytes().await.unwrap()[..] == want[2..10]);
        }
        assert_eq!(tags[0], tags[1], "{id}: the same ETag and date from both");
        if let Some(strip) = item["clip"]["strip_url"]
            .as_str()
            .filter(|_| id.ends_with("demo"))
        {
            for server in [&a, &b] {
                let r = client
                    .get(format!("{}{strip}", server.base))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), StatusCode::OK);
                assert_eq!(r.headers()["content-type"], "image/jpeg");
            }
            let strips = s3
                .objects("shared")
                .into_iter()
                .filter(|n| n.ends_with(".strip.jpg"))
                .count();
            assert_eq!(strips, 1, "one strip, stored once for both servers");
        }
    }
}

/// The retained benchmark as a job on a server whose media live in a bucket: its videos
/// fetched from the bucket into the zip, the zip stored in the bucket (so any server can
/// send it), downloaded whole with the job's SHA-256, and removed with the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_job_reads_its_videos_from_the_bucket_and_stores_its_file_there() {
    let (app, s3) = spawn_app_on_s3("exp").await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    for id in &ids {
        app.pass(&c.v0, 1, id).await;
        app.pass(&c.v1, 1, id).await;
    }
    let started = app
        .call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/exports/retained"),
            Some(&c.admin),
            None,
        )
        .await;
    let job = crate::pipeline::ended(&app, &c.admin, &started).await;
    let at = started.location().unwrap();
    assert_eq!(job["state"], "done", "{job}");
    let id = job["id"].as_str().unwrap().to_string();
    assert!(
        s3.objects("exp/jobs").contains(&format!("{id}.zip")),
        "the job's file is in the bucket: {:?}",
        s3.objects("exp/jobs")
    );
    assert!(
        !app.config
            .media_dir
            .join("jobs")
            .join(format!("{id}.zip"))
            .exists()
    );
    let r = app
        .client
        .get(format!(
            "{}{}",
            app.base,
            job["result"]["url"].as_str().unwrap()
        ))
        .bearer_auth(&c.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let bytes = r.bytes().await.unwrap();
    assert_eq!(
        job["result"]["sha256"].as_str(),
        Some(tandem::auth::sha256_hex(&bytes).as_str())
    );
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    for clip in &ids {
        use std::io::Read;
        let mut video = Vec::new();
        let want = format!("videos/{clip}.mp4");
        let name = z
            .file_names()
            .map(|n| n.unwrap().to_string())
            .find(|n| n.ends_with(&want))
            .unwrap_or_else(|| panic!("no {want}"));
        z.by_name(&name).unwrap().read_to_end(&mut video).unwrap();
        assert_eq!(video, fake_mp4(clip), "{clip}: the video from the bucket");
    }
    let r = app.call(Method::DELETE, &at, Some(&c.admin), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert!(s3.objects("exp/jobs").is_empty(), "removed with the job");
}

/// The human baseline set up on a server whose media live in a bucket: the served
/// copies (without the generator's metadata) are made from fetched videos and stored in
/// the bucket, and a participant who came by a link is served them from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baselines_served_copies_are_made_from_and_stored_in_the_bucket() {
    if !has_ffmpeg() {
        return;
    }
    use crate::baseline::{GENERATOR, baseline_with_links, campaign_with_real_clips, contains};
    let (app, s3) = spawn_app_on_s3("base").await;
    campaign_with_real_clips(&app).await;
    let originals = s3.objects("base");
    assert_eq!(originals.len(), 6);
    let admin = app.user("admin2", tandem::domain::Role::Admin, None).await;
    let (id, links) = baseline_with_links(&app, &admin, 1).await;
    let all = s3.objects("base");
    let copies: Vec<&String> = all.iter().filter(|n| !originals.contains(n)).collect();
    // The six clips differ only in their metadata: without it they are one copy.
    assert_eq!(copies.len(), 1, "the served copy, in the bucket: {all:?}");
    assert!(
        stored_locally(&app).is_empty(),
        "no copy left here: {:?}",
        stored_locally(&app)
    );
    for c in &copies {
        let bytes = std::fs::read(s3.root.join(BUCKET).join("base").join(c)).unwrap();
        assert!(!contains(&bytes, GENERATOR.as_bytes()), "{c}: no generator");
    }
    let (web, start) = crate::baseline::join(&app, &links[0]).await;
    assert_eq!(start, format!("/baseline/{id}"));
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{start}/begin"),
            Some(&[]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let p = app
        .page(Some(&web), Method::GET, &format!("/baseline/{id}/1"), None)
        .await;
    let video = crate::baseline::video_of(&p.text);
    let clip = app
        .client
        .get(format!("{}{video}", app.base))
        .header("Cookie", web.cookies())
        .send()
        .await
        .unwrap();
    assert_eq!(clip.status(), StatusCode::OK);
    assert!(clip.headers().get("etag").is_none());
    let bytes = clip.bytes().await.unwrap();
    let held = copies
        .iter()
        .any(|c| std::fs::read(s3.root.join(BUCKET).join("base").join(c)).unwrap() == bytes);
    assert!(
        held,
        "the participant's clip is a served copy from the bucket"
    );
}

/// `tandem init --media` chooses the bucket before anything is imported; an
/// installation that holds files already is pointed to `media migrate`, and a bucket
/// that does not answer is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_chooses_the_media_store_of_a_new_installation() {
    let mut s3 = S3Server::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |args: &[&str], vars: &[(String, String)]| run_tandem(&data, None, vars, args);
    let vars = s3.vars();
    let bucket = format!("s3://{BUCKET}/fresh");
    let (ok, out, err) = run(&["init", "--media", &bucket], &vars);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("media: {bucket}")), "{out}");
    let (ok, out, err) = run(&["media", "show"], &vars);
    assert!(ok, "{err}");
    assert!(
        out.contains(&bucket) && out.contains("0 stored file(s)"),
        "{out}"
    );
    // Nothing stored yet: it can still be chosen again, either way.
    let (ok, out, err) = run(&["init", "--media", "local"], &vars);
    assert!(ok && out.contains("media: local"), "{out}{err}");
    let (ok, out, _) = run(&["init"], &vars);
    assert!(ok && out.contains("media: local"), "{out}");

    // Files stored: only a migration moves them.
    std::fs::create_dir_all(data.join("media")).unwrap();
    std::fs::write(data.join("media").join("ab".repeat(32)), b"a video").unwrap();
    let (ok, _, err) = run(&["init", "--media", &bucket], &vars);
    assert!(
        !ok && err.contains("1 file(s)") && err.contains("tandem media migrate --to"),
        "{err}"
    );
    std::fs::remove_file(data.join("media").join("ab".repeat(32))).unwrap();

    // A bucket that does not answer, and a location that is not one, are refused.
    let (ok, _, err) = run(&["init", "--media", "s3://No_Such"], &vars);
    assert!(!ok && err.contains("media"), "{err}");
    // Credentials the server refuses: the store is named, the secret is not printed.
    let wrong: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| match k.as_str() {
            "AWS_SECRET_ACCESS_KEY" => (k.clone(), "not-the-secret".to_string()),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    let (ok, _, err) = run(&["init", "--media", &bucket], &wrong);
    assert!(
        !ok && err.contains("refused the request") && !err.contains("not-the-secret"),
        "{err}"
    );
    s3.stop();
    let (ok, _, err) = run(&["init", "--media", &bucket], &vars);
    assert!(!ok && err.contains("media store"), "{err}");
    let (ok, out, _) = run(&["init"], &vars);
    assert!(ok && out.contains("media: local"), "unchanged: {out}");
}
