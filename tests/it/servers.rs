//! Two `tandem serve` processes on one database (PostgreSQL under `.ci/run`, else one
//! SQLite file), the two validators of each pair signed in to different servers,
//! sending opposite and equal verdicts on the same items at the same moment.

use crate::helpers::{PASSWORD, clip_line, test_database_url, write_manifest};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use tandem::Config;
use tandem::domain::Role;

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, url: Option<&str>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    cmd.arg("--data-dir")
        .arg(data)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match url {
        Some(u) => cmd.env("DATABASE_URL", u),
        None => cmd.env_remove("DATABASE_URL"),
    };
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("Tandem is listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    Server { child, base }
}

/// What item `i` gets from (rater 1, rater 2), and the outcome that must follow.
fn pattern(i: usize) -> (bool, bool, &'static str) {
    match i % 4 {
        0 => (true, true, "both_pass"),
        1 => (false, false, "both_reject"),
        2 => (true, false, "split"),
        _ => (false, true, "split"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_give_every_item_exactly_one_outcome() {
    const TASKS: usize = 12;
    const PER_TASK: usize = 167; // 2,004 items
    const IN_FLIGHT: usize = 8; // items at once, two clients each: 16 concurrent clients
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    let url = test_database_url().await;
    let config = Config::new(&data, url.clone()).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
    let mut lines = Vec::new();
    let mut items = Vec::new();
    for (t, task) in tax.tasks.iter().enumerate().take(TASKS) {
        for k in 0..PER_TASK {
            let id = format!("{}_{k:04}", task.code);
            lines.push(clip_line(&src, &id, &task.code, &[]));
            items.push((t, id));
        }
    }
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem::app::import_manifest(&store, &config, "default", &m)
        .await
        .unwrap();
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    let mut tokens = HashMap::new();
    for v in 0..TASKS {
        let name = format!("val{v:02}");
        store
            .add_user(
                &name,
                Role::Validator,
                &hash,
                Some("default".into()),
                Some(v as i64),
            )
            .await
            .unwrap();
        tokens.insert(v, store.create_token(&name, "test").await.unwrap());
    }
    store
        .add_user("lead", Role::Author, &hash, Some("default".into()), None)
        .await
        .unwrap();
    let author = store.create_token("lead", "test").await.unwrap();
    store.close().await;

    let a = serve(&data, url.as_deref());
    let b = serve(&data, url.as_deref());
    // The container health check asks a server on its own address.
    let health = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["healthcheck", "--bind"])
        .arg(a.base.trim_start_matches("http://"))
        .output()
        .unwrap();
    assert!(health.status.success(), "{health:?}");
    let dead = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["healthcheck", "--bind", "127.0.0.1:1"])
        .output()
        .unwrap();
    assert!(!dead.status.success());
    let client = reqwest::Client::new();
    // Task t is reviewed by (t, t+1 mod 12); rater 1 of even tasks uses server A, of odd
    // tasks server B, and rater 2 the other one.
    let jobs = items.iter().enumerate().map(|(i, (t, id))| {
        let (v1, v2, _) = pattern(i);
        let (s1, s2) = if t % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let send = |server: &Server, who: usize, valid: bool| {
            let body = if valid {
                serde_json::json!({"verdict": "valid"})
            } else {
                serde_json::json!({"verdict": "reject", "reasons": ["generation_artifact"]})
            };
            client
                .post(format!(
                    "{}/api/v1/campaigns/default/items/1/{id}/verdict",
                    server.base
                ))
                .bearer_auth(&tokens[&who])
                .json(&body)
                .send()
        };
        let r1 = send(s1, *t, v1);
        let r2 = send(s2, (*t + 1) % TASKS, v2);
        async move {
            let (r1, r2) = tokio::join!(r1, r2);
            (r1.unwrap().status().as_u16(), r2.unwrap().status().as_u16())
        }
    });
    let statuses: Vec<(u16, u16)> = futures_util::stream::iter(jobs)
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    assert!(
        statuses.iter().all(|s| *s == (201, 201)),
        "every verdict is acknowledged: {:?}",
        statuses.iter().find(|s| **s != (201, 201))
    );

    // Afterwards: exactly one outcome per item, as the two verdicts say; every
    // acknowledged decision stored once; the author's queue holds exactly the splits.
    // A browser session and its CSRF tokens work on either server: sign in on A with
    // the form B served, then post a form to B with the page A drew.
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = no_redirect
        .get(format!("{}/login", b.base))
        .send()
        .await
        .unwrap();
    let pre = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_prelogin="))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let csrf = crate::helpers::csrf_of(&page.text().await.unwrap()).unwrap();
    let signed = no_redirect
        .post(format!("{}/login", a.base))
        .header("Cookie", &pre)
        .form(&[
            ("_csrf", csrf.as_str()),
            ("name", "lead"),
            ("password", PASSWORD),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap();
    let session = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_session=") && !c.starts_with("tandem_session=;"))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("signed in on A with B's form: {}", signed.status()))
        .to_string();
    let on_a = no_redirect
        .get(format!("{}/c/default/splits/1", a.base))
        .header("Cookie", &session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let form_token = crate::helpers::csrf_of(&on_a).unwrap();
    let out = no_redirect
        .post(format!("{}/logout", b.base))
        .header("Cookie", &session)
        .form(&[("_csrf", form_token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303, "B takes the form A drew");
    let after = no_redirect
        .get(format!("{}/c/default/splits/1", a.base))
        .header("Cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 303, "signed out on B is signed out on A");

    let db = crate::helpers::sql_pool(&config.database_url).await;
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT c.clip_key, i.outcome, (SELECT COUNT(*) FROM decisions d WHERE d.item_id = i.id) AS n
         FROM items i JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
         WHERE i.stage = 1",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(rows.len(), items.len());
    let got: HashMap<String, (String, i64)> =
        rows.into_iter().map(|(k, o, n)| (k, (o, n))).collect();
    for (i, (_, id)) in items.iter().enumerate() {
        let (outcome, n) = &got[id];
        assert_eq!(outcome, pattern(i).2, "{id}");
        assert_eq!(*n, 2, "{id} has both decisions, once each");
    }
    let splits = client
        .get(format!("{}/api/v1/campaigns/default/splits/1", a.base))
        .bearer_auth(&author)
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let expected = (0..items.len())
        .filter(|i| pattern(*i).2 == "split")
        .count();
    assert_eq!(
        splits["splits"].as_array().map(Vec::len),
        Some(expected),
        "{splits}"
    );
    store.close().await;
}

async fn status_of(req: reqwest::RequestBuilder) -> u16 {
    req.send().await.unwrap().status().as_u16()
}

/// A disable, a token revocation or a role taken away by the CLI (another process), and
/// a sign-out on one server, hold on both servers at the very next request, however
/// recently each server read the account (on PostgreSQL under `.ci/run`, else one
/// SQLite file with the CLI as a second process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_anywhere_holds_on_every_server_at_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    let url = test_database_url().await;
    let config = Config::new(&data, url.clone()).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let task = tandem::domain::taxonomy::Taxonomy::vgenst().tasks[0]
        .code
        .clone();
    let lines: Vec<serde_json::Value> = (0..2)
        .map(|k| clip_line(&src, &format!("clip{k}"), &task, &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem::app::import_manifest(&store, &config, "default", &m)
        .await
        .unwrap();
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    for (name, role, index) in [
        ("val00", Role::Validator, Some(0)),
        ("val01", Role::Validator, Some(1)),
        ("lead", Role::Author, None),
    ] {
        store
            .add_user(name, role, &hash, Some("default".into()), index)
            .await
            .unwrap();
    }
    let t0 = store.create_token("val00", "test").await.unwrap();
    let t1 = store.create_token("val01", "test").await.unwrap();
    let lead = store.create_token("lead", "test").await.unwrap();
    store.close().await;
    let (a, b) = (serve(&data, url.as_deref()), serve(&data, url.as_deref()));
    let servers = [&a, &b];
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let me = |s: &Server, token: &str| {
        client
            .get(format!("{}/api/v1/me", s.base))
            .bearer_auth(token)
    };
    let clip_of = |token: String| {
        let client = client.clone();
        let base = a.base.clone();
        async move {
            let item: serde_json::Value = client
                .get(format!("{base}/api/v1/campaigns/default/items/1/clip0"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            item["clip"]["media_url"]
                .as_str()
                .unwrap_or_else(|| panic!("a clip URL: {item}"))
                .to_string()
        }
    };
    let (clip0, clip1) = (clip_of(t0.clone()).await, clip_of(t1.clone()).await);
    let splits = |s: &Server| {
        client
            .get(format!("{}/api/v1/campaigns/default/splits/1", s.base))
            .bearer_auth(&lead)
    };
    // val01 also works in a browser signed in on A; its clip plays from B.
    let web = crate::helpers::web_login(&client, &a.base, "val01", PASSWORD)
        .await
        .unwrap_or_else(|r| panic!("val01 signs in: {}", r.status));
    let clip_in_browser = |s: &Server| {
        client
            .get(format!("{}{clip1}", s.base))
            .header("Cookie", web.cookies())
            .header("Range", "bytes=0-0")
    };
    // Each server holds a fresh copy of every account it was just asked about.
    for s in servers {
        for _ in 0..3 {
            assert_eq!(status_of(me(s, &t0)).await, 200);
            assert_eq!(status_of(me(s, &t1)).await, 200);
            assert_eq!(status_of(splits(s)).await, 200);
            let clip = client
                .get(format!("{}{clip0}", s.base))
                .bearer_auth(&t0)
                .header("Range", "bytes=0-0");
            assert_eq!(status_of(clip).await, 206);
            assert_eq!(status_of(clip_in_browser(s)).await, 206);
        }
    }

    crate::helpers::tandem_ok(&data, url.as_deref(), &["user", "disable", "val00"]);
    for s in servers {
        assert_eq!(status_of(me(s, &t0)).await, 401, "{}: disabled", s.base);
        let clip = client
            .get(format!("{}{clip0}", s.base))
            .bearer_auth(&t0)
            .header("Range", "bytes=0-0");
        assert_eq!(status_of(clip).await, 401, "{}: no clip either", s.base);
    }

    crate::helpers::tandem_ok(&data, url.as_deref(), &["token", "revoke", "val01"]);
    for s in servers {
        assert_eq!(
            status_of(me(s, &t1)).await,
            401,
            "{}: token revoked",
            s.base
        );
        assert_eq!(
            status_of(clip_in_browser(s)).await,
            206,
            "{}: the browser's session is not a token",
            s.base
        );
    }

    crate::helpers::tandem_ok(
        &data,
        url.as_deref(),
        &[
            "user",
            "role",
            "lead",
            "--campaign",
            "default",
            "--role",
            "none",
        ],
    );
    for s in servers {
        assert_eq!(
            status_of(splits(s)).await,
            403,
            "{}: no longer an author",
            s.base
        );
    }

    let out = client
        .post(format!("{}/logout", a.base))
        .header("Cookie", web.cookies())
        .form(&[("_csrf", web.csrf.as_str())]);
    assert_eq!(status_of(out).await, 303);
    for s in servers {
        assert_eq!(
            status_of(clip_in_browser(s)).await,
            401,
            "{}: signed out on A",
            s.base
        );
    }
}

/// A metric of a server (the first line that starts with `name` and a space), as an admin
/// reads it.
async fn metric(client: &reqwest::Client, base: &str, admin: &str, name: &str) -> Option<f64> {
    let text = client
        .get(format!("{base}/metrics"))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.parse::<f64>().ok())
}

/// The statements the requests to `GET /api/v1/me` have cost so far on a server: their
/// sum and count, from its metrics.
async fn me_statements(client: &reqwest::Client, base: &str, admin: &str) -> (f64, f64) {
    let route = "{method=\"GET\",route=\"/api/v1/me\"}";
    let (sum, count) = (
        format!("tandem_request_statements_sum{route}"),
        format!("tandem_request_statements_count{route}"),
    );
    (
        metric(client, base, admin, &sum).await.unwrap_or(0.0),
        metric(client, base, admin, &count).await.unwrap_or(0.0),
    )
}

/// On PostgreSQL a server that listens for the revocation stamp answers a token it holds
/// a copy for without a statement; and a revocation holds at the next request on a server
/// whose listening connection was just cut, and on one that was frozen while it was made:
/// the revoking write waits until every listener has taken the new stamp in, or until a
/// silent one's lease has run out (then it no longer trusts its figure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_server_reads_no_stamp_and_a_cut_or_frozen_listener_still_sees_revocations() {
    let app = crate::helpers::spawn_app().await;
    if app.store.backend() != tandem::store::Backend::Postgres {
        eprintln!("skipped: the stamp's listener is PostgreSQL's (set TANDEM_TEST_POSTGRES)");
        return;
    }
    let admin = app.user("admin", Role::Admin, None).await;
    let client = reqwest::Client::new();
    let me = |base: &str, token: &str| client.get(format!("{base}/api/v1/me")).bearer_auth(token);
    let url = app.config.database_url.clone();
    let other = serve(&app.config.data_dir, Some(&url));
    let mut tokens = Vec::new();
    for k in 0..4 {
        tokens.push(
            app.user(&format!("val{k:02}"), Role::Validator, Some(k))
                .await,
        );
    }
    let lease_waits = || async {
        metric(&client, &app.base, &admin, "tandem_stamp_lease_waits_total")
            .await
            .expect("the lease waits in the metrics")
    };

    // Listening: once the listener has begun (its first second), a known token costs no
    // statement on either server.
    let mut quiet = false;
    for _ in 0..100 {
        for base in [&app.base, &other.base] {
            assert_eq!(status_of(me(base, &tokens[0])).await, 200);
        }
        let before = me_statements(&client, &app.base, &admin).await;
        for _ in 0..20 {
            assert_eq!(status_of(me(&app.base, &tokens[0])).await, 200);
        }
        let after = me_statements(&client, &app.base, &admin).await;
        if after.1 - before.1 == 20.0 && after.0 == before.0 {
            quiet = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(quiet, "a listening server still reads for each request");
    // Both listening and well: a revocation here is answered by both, no lease waited out.
    assert_eq!(status_of(me(&other.base, &tokens[3])).await, 200);
    let waits = lease_waits().await;
    app.store.revoke_tokens("val03").await.unwrap();
    assert_eq!(lease_waits().await, waits, "both listeners answered");
    for base in [&app.base, &other.base] {
        assert_eq!(
            status_of(me(base, &tokens[3])).await,
            401,
            "{base}: revoked"
        );
    }

    // Cut: this server's listening connection is ended, and the revocation made at once
    // from the other side (the CLI) holds here at the next request.
    let listening = || async {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM stamp_listeners \
                 WHERE lease_until > (extract(epoch FROM clock_timestamp()) * 1e6)::bigint",
        )
        .fetch_all(&app.db)
        .await
        .unwrap();
        ids
    };
    let before = listening().await;
    let cut: Vec<i32> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid)::int FROM pg_stat_activity \
         WHERE application_name = 'tandem-stamp' AND datname = current_database()",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(cut.len(), 2, "one listener per server");
    crate::helpers::tandem_ok(
        &app.config.data_dir,
        Some(&url),
        &["token", "revoke", "val00"],
    );
    for base in [&app.base, &other.base] {
        assert_eq!(
            status_of(me(base, &tokens[0])).await,
            401,
            "{base}: revoked"
        );
        assert_eq!(
            status_of(me(base, &tokens[1])).await,
            200,
            "{base}: not revoked"
        );
    }

    // Frozen: the other server is stopped while a revocation is made here; the write
    // waits out its lease (about two seconds), and the server, woken, refuses the token.
    let pid = other.child.id().to_string();
    // Both listening again, each on a new connection with a row of its own.
    let mut again = false;
    for _ in 0..200 {
        let now = listening().await;
        if now.iter().filter(|id| !before.contains(id)).count() == 2 {
            again = true;
            break;
        }
        assert_eq!(status_of(me(&other.base, &tokens[2])).await, 200);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(again, "the listeners did not come back");
    assert_eq!(status_of(me(&other.base, &tokens[1])).await, 200);
    let stop = Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    assert!(stop.success());
    let waits = lease_waits().await;
    app.store.revoke_tokens("val01").await.unwrap();
    let cont = Command::new("kill").args(["-CONT", &pid]).status().unwrap();
    assert!(cont.success());
    assert_eq!(
        lease_waits().await,
        waits + 1.0,
        "the revocation waited out the frozen server's lease"
    );
    assert_eq!(
        status_of(me(&other.base, &tokens[1])).await,
        401,
        "woken: revoked"
    );
    assert_eq!(
        status_of(me(&app.base, &tokens[1])).await,
        401,
        "here: revoked"
    );
    assert_eq!(status_of(me(&other.base, &tokens[2])).await, 200);
}
