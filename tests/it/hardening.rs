//! Tandem tried as an attacker and as an operator would: a full disk, sign-in races and
//! floods, endless and explosive inputs, half-sent requests, control characters,
//! spreadsheet formulas, disabled accounts, side effects of listing, a read-only data
//! folder. Where memory or signals are measured, the server is a child process.

use crate::helpers::*;
use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;

/// A data folder with `n` clips of one task, two validators and a token for val00;
/// always on SQLite (the tests here measure a file, a process or its memory).
fn campaign_on_disk(dir: &Path, n: usize) -> (std::path::PathBuf, String) {
    let data = dir.join("data");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let lines: Vec<_> = (0..n)
        .map(|i| clip_line(&src, &format!("K{i:03}"), "MC_F_EGO_STA", &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem_ok(&data, None, &["import", m.to_str().unwrap()]);
    for (name, index) in [("val00", "0"), ("val01", "1")] {
        tandem_ok(
            &data,
            None,
            &["user", "add", name, "--role", "validator", "--index", index],
        );
    }
    let token = tandem_ok(&data, None, &["token", "create", "val00"]);
    (data, token)
}

async fn pass_at(client: &reqwest::Client, base: &str, token: &str, clip: &str) -> StatusCode {
    client
        .post(format!(
            "{base}/api/v1/campaigns/default/items/1/{clip}/verdict"
        ))
        .bearer_auth(token)
        .json(&json!({"verdict": "valid"}))
        .send()
        .await
        .unwrap()
        .status()
}

fn set_file_size_limit(pid: u32, limit: Option<u64>) {
    use rustix::process::{Pid, Resource, Rlimit, prlimit};
    let pid = Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    prlimit(
        Some(pid),
        Resource::Fsize,
        Rlimit {
            current: limit,
            maximum: None,
        },
    )
    .unwrap();
}

/// A full disk, made deterministic with a file-size limit on the server process (a
/// full PostgreSQL disk cannot be made here: this runs on SQLite).
#[tokio::test]
async fn writes_fail_while_the_disk_is_full_and_recover_by_themselves_once_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (data, token) = campaign_on_disk(dir.path(), 60);
    let server = start_server(&data, None, &[]);
    let client = http_client();
    let base = &server.base;
    for i in 0..5 {
        assert_eq!(
            pass_at(&client, base, &token, &format!("K{i:03}")).await,
            StatusCode::CREATED
        );
    }
    // From now on, no file of the server may grow: the next commit cannot be written.
    let size = |name: &str| std::fs::metadata(data.join(name)).map_or(0, |m| m.len());
    set_file_size_limit(server.pid(), Some(size("tandem.db-wal")));
    for i in 5..15 {
        // Refused as unavailable for now, in words that say what fails (never the
        // database's own, never "internal error").
        let r = client
            .post(format!(
                "{base}/api/v1/campaigns/default/items/1/K{i:03}/verdict"
            ))
            .bearer_auth(&token)
            .json(&json!({"verdict": "valid"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::SERVICE_UNAVAILABLE,
            "a write on a full disk fails as unavailable"
        );
        assert_eq!(r.headers()["retry-after"], "5");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"], "unavailable", "{body}");
        assert!(
            body["detail"].as_str().is_some_and(|d| d.contains("disk")),
            "{body}"
        );
    }
    // The health check probes a write at most once a second: asked until it says so.
    let health = health_until(&client, base, StatusCode::SERVICE_UNAVAILABLE).await;
    // Anyone may ask: the answer says what fails in its own words, never the
    // database's (those go to the log).
    assert_eq!(
        health.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"status": "failing", "problem": "the database cannot write"})
    );

    // Space again: every write succeeds, without a restart.
    set_file_size_limit(server.pid(), None);
    for i in 15..55 {
        assert_eq!(
            pass_at(&client, base, &token, &format!("K{i:03}")).await,
            StatusCode::CREATED,
            "K{i:03} after the disk has room again"
        );
    }
    health_until(&client, base, StatusCode::OK).await;
    drop(server);
    let csv = tandem_ok(&data, None, &["export", "decisions"]);
    assert_eq!(
        csv.lines().count(),
        1 + 5 + 40,
        "the acknowledged decisions, and none of the refused ones:\n{csv}"
    );
}

#[tokio::test]
async fn parallel_wrong_passwords_cannot_slip_past_the_limit_and_the_wait_grows_instead_of_locking()
{
    let app = spawn_app().await;
    cast(&app).await;
    let attempts = (0..40).map(|i| {
        let app = &app;
        async move {
            match app.try_login("val00", &format!("wrong password {i}")).await {
                Ok(_) => StatusCode::OK,
                Err(r) => r.status,
            }
        }
    });
    let statuses = join_all(attempts).await;
    let count = |s: StatusCode| statuses.iter().filter(|x| **x == s).count();
    assert_eq!(
        count(StatusCode::UNAUTHORIZED),
        tandem::web::session::MAX_FAILURES_PER_NAME as usize,
        "{statuses:?}"
    );
    assert_eq!(count(StatusCode::TOO_MANY_REQUESTS), 30, "{statuses:?}");
    // The right password too must wait now.
    let r = app.try_login("val00", PASSWORD).await.unwrap_err();
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&wait), "Retry-After {wait}");
    // ... but only that long: no fixed lock (the server's clock is moved past the wait).
    app.store.clock().advance(Duration::from_secs(wait));
    app.try_login("val00", PASSWORD)
        .await
        .expect("signed in after the wait");
    // Another name from the same address is not held up.
    app.try_login("val01", PASSWORD)
        .await
        .expect("val01 signs in");
}

#[tokio::test]
async fn two_hundred_parallel_sign_ins_keep_the_servers_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    // Behind a trusted proxy, every attempt comes from its own address: none is
    // turned away by the address limit, so every one reaches the password check.
    let server = start_server(&data, None, &["--trusted-proxy", "127.0.0.1"]);
    let client = http_client();
    let base = server.base.clone();
    let page = TestApp::reply(client.get(format!("{base}/login"))).await;
    let pre = page.headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let csrf = csrf_of(&page.text).unwrap();
    let before = server.peak_rss();
    let attempts = (0..200).map(|i| {
        let (client, base, pre, csrf) = (client.clone(), base.clone(), pre.clone(), csrf.clone());
        async move {
            client
                .post(format!("{base}/login"))
                .header("Cookie", pre)
                .header("X-Forwarded-For", format!("10.1.{}.{}", i / 200, i % 200))
                .form(&[
                    ("_csrf", csrf.as_str()),
                    ("name", &format!("nobody{i}")),
                    ("password", "not the password at all"),
                ])
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    let statuses = join_all(attempts).await;
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::UNAUTHORIZED || *s == StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    let peak = server.peak_rss();
    assert!(
        peak < 400 * MIB,
        "peak memory {} MiB (before: {} MiB)",
        peak / MIB,
        before / MIB
    );
}

/// Adds an account to a child server's data folder with the CLI (`role` and its flags),
/// its password the tests' own.
fn add_account(data: &Path, name: &str, role: &[&str]) {
    let out = tandem_command(data, None)
        .args(["user", "add", name, "--password-stdin"])
        .args(role)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(PASSWORD.as_bytes())?;
            c.wait()
        })
        .unwrap();
    assert!(out.success());
}

/// Signs in an admin of a child server, through its pages.
async fn admin_web(data: &Path, base: &str) -> Web {
    add_account(data, "admin1", &["--role", "admin"]);
    web_login(&http_client(), base, "admin1", PASSWORD)
        .await
        .unwrap()
}

#[tokio::test]
async fn endless_lines_devices_and_zip_bombs_are_refused_within_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // 200 MB of zeros in a zip of about 200 KB.
    let bomb = dir.path().join("bomb.zip");
    {
        use zip::write::SimpleFileOptions;
        let mut w = zip::ZipWriter::new(std::fs::File::create(&bomb).unwrap());
        w.start_file("manifest.jsonl", SimpleFileOptions::default())
            .unwrap();
        let zeros = vec![0u8; MIB as usize];
        for _ in 0..200 {
            w.write_all(&zeros).unwrap();
        }
        w.finish().unwrap();
    }
    let (data, _) = campaign_on_disk(dir.path(), 1);
    // The test's folder and /dev are import roots: a device under a root is still
    // refused as one.
    let root = dir.path().display().to_string();
    let server = start_server(
        &data,
        None,
        &["--import-root", &root, "--import-root", "/dev"],
    );
    let base = server.base.clone();
    let web = admin_web(&data, &base).await;
    let client = http_client();
    let folder = |manifest: String| {
        client
            .post(format!("{base}/c/default/admin/import/folder"))
            .header("Cookie", &web.cookie)
            .form(&[("_csrf", web.csrf.as_str()), ("manifest", &manifest)])
            .send()
    };

    // A device that never ends.
    let r = folder("/dev/zero".into()).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().await.unwrap().contains("not a regular file"));
    // A file outside the roots is not read: the answer does not say whether it exists
    // or how many lines it has.
    for outside in ["/etc/shadow", "/etc/no-such-file"] {
        let r = folder(outside.into()).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let text = r.text().await.unwrap();
        assert!(
            text.contains("under an import root") && !text.contains("problem"),
            "{outside}: {text}"
        );
    }

    // One line of 300 MB without an end (a sparse file: no disk used).
    let endless = dir.path().join("endless.jsonl");
    std::fs::File::create(&endless)
        .unwrap()
        .set_len(300 * MIB)
        .unwrap();
    let r = folder(endless.display().to_string()).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = r.text().await.unwrap();
    assert!(text.contains("TANDEM_MAX_LINE_BYTES"), "{text}");

    let bytes = std::fs::read(&bomb).unwrap();
    assert!(bytes.len() < 2 * MIB as usize);
    let form = reqwest::multipart::Form::new()
        .text("_csrf", web.csrf.clone())
        .part(
            "archive",
            reqwest::multipart::Part::bytes(bytes).file_name("bomb.zip"),
        );
    let r = client
        .post(format!("{base}/c/default/admin/import/upload"))
        .header("Cookie", &web.cookie)
        .multipart(form)
        .send()
        .await
        .unwrap_or_else(|e| panic!("upload: {e:?}"));
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = r.text().await.unwrap();
    assert!(text.contains("TANDEM_MAX_ZIP_RATIO"), "{text}");
    let tmp_left: usize = std::fs::read_dir(data.join("tmp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(tmp_left, 0, "nothing of the upload is left on disk");

    let peak = server.peak_rss();
    assert!(peak < 200 * MIB, "peak memory {} MiB", peak / MIB);
}

#[tokio::test]
async fn a_half_sent_request_is_closed_and_shutdown_keeps_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    let mut server = start_server(
        &data,
        None,
        &[
            "--header-timeout",
            "1",
            "--shutdown-grace",
            "2",
            "--drain",
            "2",
        ],
    );
    let addr = server.base.trim_start_matches("http://").to_string();
    let half_sent = || {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: tandem\r\nX-Slow: ")
            .unwrap();
        s
    };
    let mut s = half_sent();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap_or(0);
    let answer = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(
        n == 0 || answer.starts_with("HTTP/1.1 408"),
        "the half-sent request is closed: {answer:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "closed after {:?}",
        start.elapsed()
    );

    // With a half-sent request open, SIGTERM still ends the server.
    let _open = half_sent();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    // For the drain period the server still answers, and /readyz says it is going, so
    // that a load balancer stops sending before the listener closes.
    let client = http_client();
    let ready = loop {
        let r = client
            .get(format!("{}/readyz", server.base))
            .send()
            .await
            .unwrap();
        if r.status() == StatusCode::SERVICE_UNAVAILABLE || start.elapsed() > Duration::from_secs(1)
        {
            break r.status();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(ready, StatusCode::SERVICE_UNAVAILABLE);
    let health = client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        health.status(),
        StatusCode::OK,
        "still answering while draining"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let exit = loop {
        if let Some(e) = server.child.try_wait().unwrap() {
            break e;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "SIGTERM did not end the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit:?}");
}

#[tokio::test]
async fn accepted_connections_have_tcp_nodelay() {
    let dir = tempfile::tempdir().unwrap();
    let config = tandem::Config::new(&dir.path().join("data"), test_database_url().await).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tap_seen = seen.clone();
    let tap: tandem::server::AcceptTap = std::sync::Arc::new(move |s: &tokio::net::TcpStream| {
        tap_seen.lock().unwrap().push(s.nodelay().unwrap());
    });
    tokio::spawn(tandem::server::serve_with(
        listener,
        tandem::AppState::new(store, config),
        std::future::pending(),
        Some(tap),
    ));
    let r = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(*seen.lock().unwrap(), vec![true]);
}

#[tokio::test]
async fn text_with_nul_or_control_characters_is_refused_by_field_everywhere() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 2, &["OE"]).await;
    let before = app.dump().await;

    // The API.
    let r = app
        .verdict(
            &c.v0,
            1,
            &ids[0],
            json!({"verdict": "reject", "reasons": ["other"], "note": "see\u{0}here"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.body["field"], "note");
    // A note that would show in another order than it is stored (U+202E).
    let r = app
        .verdict(
            &c.v0,
            1,
            &ids[0],
            json!({"verdict": "reject", "reasons": ["other"], "note": "fine \u{202e}gnp.exe"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.body["field"], "note");
    assert!(r.text.contains("U+202E"), "{}", r.text);
    let r = app
        .verdict(&c.v0, 1, &ids[0], json!({"verdict": "valid\u{7}"}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.body["field"], "verdict");

    // A form.
    let web = app.login("val00").await;
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            Some(&[
                ("verdict", "reject"),
                ("reasons", "other"),
                ("note", "a\u{0}b"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);

    // Signing in, before any account is looked up.
    let r = app.try_login("val\u{0}00", PASSWORD).await.unwrap_err();
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    // A manifest line.
    let src = app.source();
    let mut line = clip_line(&src, "NUL_CLIP", "MC_F_EGO_STA", &[]);
    line["theme"] = json!("altar\u{0}");
    let mut bidi = clip_line(&src, "BIDI_CLIP", "MC_F_EGO_STA", &["OE"]);
    bidi["questions"][0]["question"] = json!("Which \u{2067}way\u{2069} does it turn?");
    let m = write_manifest(&src, "nul.jsonl", &[line, bidi]);
    let e = app.import(&m).await.unwrap_err();
    assert!(e.to_string().contains("line 1, field `theme`"), "{e}");
    assert!(
        e.to_string()
            .contains("line 2, field `questions[0].question`")
            && e.to_string().contains("U+2067"),
        "{e}"
    );
    // Sign-in throttling, and the sign-in's session and remembered browser, are all
    // that was written.
    let strip = |d: String| {
        d.split("== ")
            .filter(|t| {
                !t.starts_with("login_throttle")
                    && !t.starts_with("sessions")
                    && !t.starts_with("trusted_devices")
            })
            .collect::<Vec<_>>()
            .join("== ")
    };
    assert_eq!(strip(app.dump().await), strip(before), "nothing was stored");
}

#[tokio::test]
async fn notes_that_look_like_formulas_are_exported_as_text_and_import_back_unchanged() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 1, &[]).await;
    let formula = "=cmd|' /C calc'!A0";
    let r = app
        .verdict(
            &c.v0,
            1,
            &ids[0],
            json!({"verdict": "reject", "reasons": ["other"], "note": formula, "time_spent_ms": 1200}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/export/decisions"),
            &c.admin,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut reader = csv::Reader::from_reader(r.text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let row = reader.records().next().unwrap().unwrap();
    assert_eq!(&row[col("note")], "'=cmd|' /C calc'!A0", "shown as text");
    assert_eq!(
        &row[col("time_spent_ms")],
        "1200",
        "numbers are never touched"
    );
    // Importing the export again finds every decision already stored.
    let (rows, problems) = tandem::io::records::read_decisions(r.text.as_bytes());
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(rows[0].note, formula);
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let summary = app
        .store
        .import_decisions(&campaign, &rows, problems, "the export")
        .await
        .unwrap();
    assert_eq!(summary.recorded, 0, "{summary}");
}

#[tokio::test]
async fn a_disabled_account_loses_its_session_and_tokens_at_once_and_keeps_its_place() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let web = app.login("val00").await;
    let pairs_before = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/tasks"), &c.admin)
        .await
        .body;
    let r = app
        .call(
            Method::POST,
            "/api/v1/users/val00/disable",
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    let r = app.get("/api/v1/me", &c.v0).await;
    assert_eq!(
        r.status,
        StatusCode::UNAUTHORIZED,
        "the token stopped working"
    );
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1"),
            None,
        )
        .await;
    assert!(
        r.location().is_some_and(|l| l.starts_with("/login")),
        "the session ended: {} {:?}",
        r.status,
        r.location()
    );
    let r = app.try_login("val00", PASSWORD).await.unwrap_err();
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.text.contains("disabled"));
    let pairs_after = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/tasks"), &c.admin)
        .await
        .body;
    assert_eq!(pairs_before, pairs_after, "nothing was re-paired");
    let users = app.get("/api/v1/users", &c.admin).await.body;
    let me = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "val00")
        .unwrap()
        .clone();
    assert_eq!(me["disabled"], true);

    // The last admin cannot be disabled; a disabled account gets no token.
    let r = app
        .call(
            Method::POST,
            "/api/v1/users/admin1/disable",
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(app.store.create_token("val00", "x").await.is_err());

    // Enabled again: signing in works; the old token stays revoked.
    let r = app
        .call(
            Method::POST,
            "/api/v1/users/val00/enable",
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    app.try_login("val00", PASSWORD)
        .await
        .expect("signs in again");
    assert_eq!(
        app.get("/api/v1/me", &c.v0).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn listing_studies_changes_nothing_and_participants_see_no_campaign_names() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 2))
        .await
        .unwrap();
    let before = app.dump().await;
    let r = app.get("/api/v1/studies", &c.participant).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["studies"][0]["answered"], 0);
    assert_eq!(r.body["studies"][0]["total"], 2);
    assert_eq!(app.dump().await, before, "listing drew no order");
    let r = app.get("/api/v1/campaigns", &c.participant).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(!r.text.contains(CAMPAIGN));
    // Their account says their role, not where they hold it.
    let r = app.get("/api/v1/me", &c.participant).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["roles"], json!([{"role": "participant"}]));
    assert!(!r.text.contains(CAMPAIGN), "{}", r.text);
}

#[test]
fn a_read_only_data_folder_is_refused_at_start_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    let mut perms = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(&ro, perms).unwrap();
    // Root writes anywhere it may: then take a folder no one can write to.
    let folder = if std::fs::File::create(ro.join("probe")).is_ok() {
        std::path::PathBuf::from("/sys")
    } else {
        ro
    };
    let start = Instant::now();
    let out = tandem_command(&folder, None)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not writable"), "{err}");
    assert!(err.contains("--data-dir"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn stored_text_with_control_characters_is_found_by_the_check_command() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    assert!(tandem_ok(&data, None, &["check"]).contains("no stored text"));
    // As an earlier version could store it on SQLite.
    let url = tandem::Store::sqlite_url(&data.join("tandem.db"));
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    sqlx::query("UPDATE tasks SET name = 'spatial' || char(0) || 'scale' WHERE position = 0")
        .execute(&mut conn)
        .await
        .unwrap();
    let out = tandem_command(&data, None).arg("check").output().unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tasks.name: 1 value"), "{text}");
}

#[tokio::test]
async fn under_secure_cookies_every_cookie_the_server_sets_is_secure() {
    let app = spawn_app_with(|c| c.secure_cookies = true).await;
    cast(&app).await;
    let web = app.login("admin1").await;
    // A form that leaves a message for the next page (a one-shot cookie).
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users",
            Some(&[
                ("name", "newcomer"),
                ("role", "author"),
                ("campaign", "default"),
                ("password", "a long enough password"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let cookies: Vec<String> = r
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    assert!(
        cookies.iter().any(|c| c.starts_with("tandem_flash=")),
        "{cookies:?}"
    );
    for c in &cookies {
        assert!(c.contains("; Secure"), "a cookie without Secure: {c}");
    }
}

#[tokio::test]
async fn a_stored_reason_that_is_not_a_reason_is_an_error_not_a_shorter_record() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 1, &[]).await;
    assert_eq!(
        app.reject(&c.v0, 1, &ids[0], "generation_artifact")
            .await
            .status,
        StatusCode::CREATED
    );
    // A change of that decision as an older or foreign writer might have stored it.
    sqlx::query(
        "INSERT INTO decisions (item_id, validator_id, seq, verdict, reasons, note, time_spent_ms,
                                decided_at, recorded_at, origin, campaign_id, stage, time_measure)
         SELECT item_id, validator_id, 2, verdict, 'generation_artifact;made_up', note, NULL,
                decided_at + 1, recorded_at + 1, origin, campaign_id, stage, NULL
         FROM decisions WHERE seq = 1",
    )
    .execute(&app.db)
    .await
    .unwrap();
    let r = app
        .call(
            Method::GET,
            &format!("/api/v1/campaigns/{CAMPAIGN}/items/1/{}", ids[0]),
            Some(&c.v0),
            None,
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "the record was shown without the reason it cannot read: {}",
        r.text
    );
}

/// Asks `/healthz` until it answers `status` (it probes a write at most once a second),
/// for at most ten seconds.
async fn health_until(
    client: &reqwest::Client,
    base: &str,
    status: StatusCode,
) -> reqwest::Response {
    let started = Instant::now();
    loop {
        let r = client.get(format!("{base}/healthz")).send().await.unwrap();
        if r.status() == status {
            return r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "/healthz never answered {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One browser holds one session: signing in as another person (or again) ends the
/// session whose cookie the browser still sent, on the server, not only in the browser.
#[tokio::test]
async fn signing_in_as_another_person_ends_the_browsers_earlier_session() {
    let app = spawn_app().await;
    cast(&app).await;
    let first = app.login("val00").await;
    let home = app.page(Some(&first), Method::GET, "/", None).await;
    assert_eq!(home.status, StatusCode::SEE_OTHER);
    assert_ne!(home.location().as_deref(), Some("/login?next=%2F"));
    // The same browser signs in as val01: its requests still carry val00's cookie.
    let (status, _) = sign_in_with(
        &app.client,
        &app.base,
        "val01",
        PASSWORD,
        Some(&first.cookies()),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // val00's session is over on the server: its cookie, replayed, signs in no one.
    let replay = app.page(Some(&first), Method::GET, "/", None).await;
    assert_eq!(replay.status, StatusCode::SEE_OTHER);
    assert!(
        replay
            .location()
            .is_some_and(|l| l.starts_with("/login?next=")),
        "{:?}",
        replay.location()
    );
    let sessions = app.count("SELECT COUNT(*) FROM sessions").await;
    assert_eq!(sessions, 1, "only val01's session is left");
}

/// One client address cannot take every connection: past its cap its new connections
/// are closed at once, its open ones go on, and another address is served as usual.
#[tokio::test]
async fn one_address_holding_its_cap_of_connections_starves_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    let cap = 10;
    let server = start_server(
        &data,
        None,
        &["--max-connections-per-client", &cap.to_string()],
    );
    let base = server.base.clone();
    admin_web(&data, &base).await;
    let addr = base.trim_start_matches("http://").to_string();
    // Three times the cap, each trickling a request head it never finishes.
    let mut held = Vec::new();
    let mut closed = 0;
    for _ in 0..3 * cap {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: tandem\r\nX-Slow: ")
            .unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut buf = [0u8; 16];
        match s.read(&mut buf) {
            Ok(0) => closed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
            Ok(_) => panic!("an unfinished request was answered"),
            Err(_) => held.push(s), // still open, waiting for the rest of its head
        }
    }
    assert!(held.len() <= cap, "{} held", held.len());
    assert!(closed >= 2 * cap, "{closed} closed at once");
    // Another address signs in and is answered while they are held.
    let other = client_from_another_address(Duration::from_secs(10));
    let health = other.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    web_login(&other, &base, "admin1", PASSWORD).await.unwrap();
    // The connections the address holds still work: one finishes its request.
    let mut s = held.pop().unwrap();
    s.write_all(b"1\r\n\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = [0u8; 12];
    s.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
}

/// Signs in as `name` from `client` presenting `cookies` (a device cookie, say): the
/// status and the device cookie the server set, if any.
async fn sign_in_with(
    client: &reqwest::Client,
    base: &str,
    name: &str,
    password: &str,
    cookies: Option<&str>,
) -> (StatusCode, Option<String>) {
    let (pre, token) = login_form(client, base).await;
    let cookie = match cookies {
        Some(c) => format!("{pre}; {c}"),
        None => pre,
    };
    let r = TestApp::reply(
        client
            .post(format!("{base}/login"))
            .header("Cookie", cookie)
            .form(&[
                ("_csrf", token.as_str()),
                ("name", name),
                ("password", password),
                ("next", "/"),
            ]),
    )
    .await;
    let device = r
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_device="))
        .and_then(|c| c.split(';').next())
        .map(str::to_string);
    (r.status, device)
}

/// An attacker cannot lock a person out: failures from elsewhere hold the account for
/// browsers it never signed in from, but the browser the person signed in from before
/// (its device cookie) is throttled on its own; and failures on one name from an
/// address do not hold the other names from that address.
#[tokio::test]
async fn an_attacker_cannot_lock_a_person_out_of_their_own_browser() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    let server = start_server(&data, None, &[]);
    let base = server.base.clone();
    admin_web(&data, &base).await;
    let client = http_client();
    // The person's own browser signs in once: the server remembers it.
    let (status, device) = sign_in_with(&client, &base, "admin1", PASSWORD, None).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let device = device.expect("a device cookie");
    // An attacker at another address tries ten wrong passwords.
    let attacker = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 3]))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for i in 0..tandem::web::session::MAX_FAILURES_PER_NAME {
        let (status, _) = sign_in_with(
            &attacker,
            &base,
            "admin1",
            &format!("guess number {i}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // The account is held for browsers it never signed in from, the right password too.
    let (status, _) = sign_in_with(&client, &base, "admin1", PASSWORD, None).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The person's browser is not: it signs in, and keeps its cookie.
    let (status, again) = sign_in_with(&client, &base, "admin1", PASSWORD, Some(&device)).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(again, None, "the same browser keeps its cookie");
    // A device cookie counts only for its own account, and a forged one for nothing.
    let (status, _) = sign_in_with(&client, &base, "val00", "wrong", Some(&device)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = sign_in_with(
        &client,
        &base,
        "admin1",
        PASSWORD,
        Some("tandem_device=forged-value"),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The attacker's address is held on admin1 only: another name signs in from it.
    add_account(&data, "lead", &["--role", "author"]);
    let (status, _) = sign_in_with(&attacker, &base, "lead", PASSWORD, None).await;
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "other names from that address"
    );
}

/// The API's errors come in its one JSON shape even when axum answers before a handler
/// runs: a query that does not parse (400), a method the route does not take (405, with
/// `Allow`); pages keep their own answers.
#[tokio::test]
async fn every_api_error_is_the_json_error_even_before_a_handler_runs() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let r = app
        .get(
            &format!("/api/v1/campaigns/{CAMPAIGN}/splits/1?all=maybe"),
            &c.admin,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.body["error"], "bad_request");
    assert!(
        r.body["detail"].as_str().unwrap().contains("all"),
        "the detail names what did not parse: {}",
        r.text
    );
    let r = app
        .call(Method::DELETE, "/api/v1/me", Some(&c.admin), None)
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{}", r.text);
    assert_eq!(r.body["error"], "method_not_allowed");
    assert!(
        r.body["detail"].as_str().unwrap().contains("DELETE"),
        "{}",
        r.text
    );
    assert_eq!(r.headers["allow"], "GET,HEAD");
    // Every kind the API answers is in the document's error schema.
    let doc = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await
        .body;
    let kinds = &doc["components"]["schemas"]["ErrorKind"]["enum"];
    for kind in [
        "bad_request",
        "method_not_allowed",
        "unavailable",
        "too_many_requests",
    ] {
        assert!(
            kinds.as_array().unwrap().iter().any(|k| k == kind),
            "{kind} in {kinds}"
        );
    }
}

/// A log that cannot be written (standard error on a full device, or a pipe whose reader
/// left) costs its lines and nothing else: every sign-in and verdict answers as before,
/// the writer keeps writing, and `/metrics` counts the lines dropped. tracing-subscriber
/// reported a failed write with `eprintln!`, whose panic dropped each request that logged
/// and, on the writer's thread, stopped every write until a restart.
#[tokio::test]
async fn a_log_that_cannot_be_written_stops_nothing() {
    for (kind, n) in [("a full device", 6), ("a closed pipe", 6)] {
        let dir = tempfile::tempdir().unwrap();
        let (data, token) = campaign_on_disk(dir.path(), n);
        add_account(&data, "admin1", &["--role", "admin"]);
        let admin = tandem_ok(&data, None, &["token", "create", "admin1"]);
        let stderr = match kind {
            "a full device" => std::process::Stdio::from(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            ),
            _ => std::process::Stdio::piped(),
        };
        let env = [("RUST_LOG".to_string(), "trace".to_string())];
        let mut server = start_server_with_stderr(&data, None, &[], &env, stderr);
        // The pipe's reader leaves.
        drop(server.child.stderr.take());
        let base = server.base.clone();
        let client = http_client();
        for _ in 0..3 {
            web_login(&client, &base, "admin1", PASSWORD)
                .await
                .unwrap_or_else(|r| panic!("{kind}: a sign-in failed: {}", r.status));
        }
        for i in 0..n {
            let clip = format!("K{i:03}");
            assert_eq!(
                pass_at(&client, &base, &token, &clip).await,
                StatusCode::CREATED,
                "{kind}: the verdict on {clip}"
            );
        }
        let metrics = client
            .get(format!("{base}/metrics"))
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let dropped: u64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix("tandem_log_lines_dropped_total "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{kind}: no count of dropped lines in {metrics}"));
        assert!(dropped > 0, "{kind}: no log line was dropped");
        let csv = tandem_ok(&data, None, &["export", "decisions"]);
        assert_eq!(csv.lines().count(), n + 1, "{kind}: {csv}");
    }
}

/// `/healthz` says a disk is full by its free space, not only by a write probe: the probe
/// rewrites one row in pages SQLite already holds and passed on a full disk while every
/// verdict failed. With less free space than `TANDEM_HEALTH_MIN_FREE_BYTES` (here more
/// than any disk has), both checks answer 503 in their own words.
#[tokio::test]
async fn health_answers_503_when_the_databases_disk_has_less_room_than_its_floor() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    let env = [(
        "TANDEM_HEALTH_MIN_FREE_BYTES".to_string(),
        (1u64 << 62).to_string(),
    )];
    let server = start_server_with_env(&data, None, &[], &env);
    let client = http_client();
    for path in ["healthz", "readyz"] {
        let r = client
            .get(format!("{}/{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(
            body["problem"], "the database's disk is full",
            "{path}: {body}"
        );
    }
    let roomy = start_server(&data, None, &[]);
    let r = client
        .get(format!("{}/healthz", roomy.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

/// An API body larger than the limit is 413 (too large), not 422; one just under it is
/// read (and refused for what it says); and a body that is not an object is refused,
/// where serde read a struct from an array of its fields (`[]` made a token).
#[tokio::test]
async fn an_api_body_too_large_is_413_and_one_that_is_no_object_is_refused() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let url = format!("{}/api/v1/users/val00/tokens", app.base);
    let padded = |len: usize| {
        let mut body = String::from("{\"label\":5,\"pad\":\"");
        body.push_str(&"x".repeat(len - body.len() - 2));
        body.push_str("\"}");
        assert_eq!(body.len(), len);
        body
    };
    for (len, status) in [
        (
            tandem::web::API_BODY_LIMIT + 1,
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            tandem::web::API_BODY_LIMIT,
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ] {
        let r = TestApp::reply(
            app.client
                .post(&url)
                .bearer_auth(&c.admin)
                .header("content-type", "application/json")
                .body(padded(len)),
        )
        .await;
        assert_eq!(r.status, status, "a body of {len} bytes: {}", r.text);
    }
    let tokens = app.count("SELECT COUNT(*) FROM api_tokens").await;
    for body in [json!([]), json!(["a name"]), json!("a name"), json!(7)] {
        let r = app
            .call(
                Method::POST,
                "/api/v1/users/val00/tokens",
                Some(&c.admin),
                Some(body.clone()),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert!(r.text.contains("must be an object"), "{body}: {}", r.text);
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM api_tokens").await, tokens);
}

/// Silent connections from many addresses, each address under its cap, together more
/// than every place the server has: a client from another address is answered at once
/// (while every place is taken, each new connection has the oldest silent one closed),
/// and a connection that sends no byte is closed after the time for a request's head.
/// Before, they held every place for as long as they stayed open (`/healthz` waited 90 s).
#[tokio::test]
async fn silent_connections_from_many_addresses_starve_no_one() {
    use tokio::io::AsyncReadExt as _;
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = campaign_on_disk(dir.path(), 1);
    let (server, mut silent) = crowded(&data, &["--header-timeout", "10"], &[]).await;
    let base = server.base.clone();
    let opened = Instant::now();
    let other = client_from_another_address(Duration::from_secs(30));
    let asked = Instant::now();
    let health = other.get(format!("{base}/healthz")).send().await.unwrap();
    let waited = asked.elapsed();
    assert_eq!(health.status(), StatusCode::OK);
    assert!(
        // Without the cut it waits for the first silent connection's time (5 s, as
        // connections without a head are many).
        waited < Duration::from_secs(3),
        "/healthz waited {waited:?} behind the silent connections"
    );
    web_login(&other, &base, "admin1", PASSWORD).await.unwrap();
    // Every silent connection is closed: the oldest to make room, the rest after the
    // time for a head.
    for (i, s) in silent.iter_mut().enumerate() {
        let mut buf = [0u8; 1];
        let end = tokio::time::timeout(Duration::from_secs(15), s.read(&mut buf)).await;
        assert!(
            matches!(end, Ok(Ok(0)) | Ok(Err(_))),
            "silent connection {i} still open {:?} after it was opened: {end:?}",
            opened.elapsed()
        );
    }
    assert!(opened.elapsed() < Duration::from_secs(15));
}

/// A client at 127.0.0.2, beside a flood from other addresses: no redirects followed.
fn client_from_another_address(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .unwrap()
}

/// A server of `data` with 64 places, 10 for each client address (and `extra`), an
/// admin, and 120 connections to it from twelve other addresses (127.0.1.10-21, ten
/// each), each having sent `first`: more than every place, each address under its cap.
async fn crowded(
    data: &Path,
    extra: &[&str],
    first: &[u8],
) -> (ServerProcess, Vec<tokio::net::TcpStream>) {
    use tokio::io::AsyncWriteExt as _;
    let mut args = vec![
        "--max-connections",
        "64",
        "--max-connections-per-client",
        "10",
    ];
    args.extend_from_slice(extra);
    let server = start_server(data, None, &args);
    admin_web(data, &server.base).await;
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let mut crowd = Vec::new();
    for a in 0..12u8 {
        for _ in 0..10 {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind(std::net::SocketAddr::from(([127, 0, 1, 10 + a], 0)))
                .unwrap();
            let mut s = s.connect(addr).await.unwrap();
            s.write_all(first).await.unwrap();
            crowd.push(s);
        }
    }
    (server, crowd)
}

/// A request head for val00's verdict on K000 whose body of `len` bytes is still to come.
fn verdict_head(token: &str, len: usize) -> String {
    format!(
        "POST /api/v1/campaigns/default/items/1/K000/verdict HTTP/1.1\r\nHost: tandem\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {len}\r\n\r\n"
    )
}

/// Slow bodies from many addresses, each address under its cap, together holding every
/// place the server has: a client from another address is answered at once (the
/// heaviest address's oldest waiting connection is closed for it), and a new connection
/// from an address that holds as many as any is closed. Before, `/healthz` waited until
/// a slow body's time ran out (99 s in the attack campaign).
#[tokio::test]
async fn slow_bodies_from_many_addresses_starve_no_one() {
    use tokio::io::AsyncReadExt as _;
    let dir = tempfile::tempdir().unwrap();
    let (data, token) = campaign_on_disk(dir.path(), 1);
    // Each a whole head, then one body byte of a thousand.
    let first = verdict_head(&token, 1000) + "{";
    let (server, mut slow) = crowded(&data, &["--body-timeout", "120"], first.as_bytes()).await;
    let base = server.base.clone();
    // Every place is taken by a body in progress.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let other = client_from_another_address(Duration::from_secs(30));
    for _ in 0..3 {
        let asked = Instant::now();
        let health = other.get(format!("{base}/healthz")).send().await.unwrap();
        let waited = asked.elapsed();
        assert_eq!(health.status(), StatusCode::OK);
        // Without the fair share it waits until a slow body's time runs out (120 s).
        assert!(
            waited < Duration::from_secs(2),
            "/healthz waited {waited:?} behind the slow bodies"
        );
    }
    web_login(&other, &base, "admin1", PASSWORD).await.unwrap();
    // Of the slow connections, those closed to make room (or refused) read their end;
    // the others still hold their place: the flood keeps no more than its share.
    let mut closed = 0;
    for s in slow.iter_mut() {
        let mut buf = [0u8; 64];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(20), s.read(&mut buf)).await
        {
            closed += 1;
        }
    }
    assert!(
        closed >= 56,
        "only {closed} of 120 slow connections were closed"
    );
}

/// A body trickled a byte a second is cut when its grace is over (no gap is long,
/// the rate is too low), with an answer that says why; one sent at a steady rate above
/// the least rate is read whole however long it takes. Before, only a gap of the body
/// time-out cut a body, so a trickle held its connection until the request's limit.
#[tokio::test]
async fn a_body_below_the_least_rate_is_cut_after_its_grace() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let (data, token) = campaign_on_disk(dir.path(), 1);
    let server = start_server(
        &data,
        None,
        &["--body-timeout", "3", "--body-min-rate", "500"],
    );
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    // The trickle: a byte a second of 100.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(verdict_head(&token, 100).as_bytes())
        .await
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let trickle = async {
        loop {
            if s.write_all(b" ").await.is_err() {
                break;
            }
            let mut buf = [0u8; 4096];
            match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), trickle)
        .await
        .expect("the trickled body was never cut");
    let took = started.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(8),
        "cut after {took:?}"
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("slower than 500 bytes a second"),
        "{answer}"
    );
    // A steady 1,000 bytes a second for 4 s: past the grace, never below the rate.
    let body = format!(
        "{{\"verdict\":\"valid\",\"note\":\"{}\"}}",
        "x".repeat(3900)
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(verdict_head(&token, body.len()).as_bytes())
        .await
        .unwrap();
    for part in body.as_bytes().chunks(100) {
        s.write_all(part).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        while !answer.contains("\r\n\r\n") {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {answer}");
            answer.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
}
