//! One running Tandem per test: a fresh data folder with a real SQLite file, the real
//! router on a real socket on port 0, and typed helpers to speak to it.

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tandem::domain::Role;
use tandem::{AppState, Config, Store};
use tempfile::TempDir;
use tokio::sync::oneshot;

pub const CAMPAIGN: &str = "default";

pub struct TestApp {
    pub base: String,
    pub client: Client,
    pub store: Store,
    /// A connection pool of the tests' own on the same database, for what the store
    /// does not offer (checking a stored row, trying to change one).
    pub db: sqlx::AnyPool,
    pub config: Config,
    pub dir: TempDir,
    _stop: oneshot::Sender<()>,
}

/// A reply: status and JSON body (or the raw text under "text").
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub text: String,
    pub headers: reqwest::header::HeaderMap,
}

impl Reply {
    pub fn location(&self) -> Option<String> {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

/// A signed-in browser, without the browser: its session cookie, its CSRF token, and
/// the one-shot message cookie a form leaves for the next page (kept as a browser would).
#[derive(Debug, Clone)]
pub struct Web {
    pub cookie: String,
    pub csrf: String,
    pub flash: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl Web {
    pub fn cookies(&self) -> String {
        match self.flash.lock().ok().and_then(|f| f.clone()) {
            Some(f) => format!("{}; {f}", self.cookie),
            None => self.cookie.clone(),
        }
    }

    /// Keeps or drops the message cookie as the reply says.
    pub fn remember(&self, reply: &Reply) {
        for c in reply
            .headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter(|c| c.starts_with("tandem_flash="))
        {
            let pair = c.split(';').next().unwrap_or_default().to_string();
            let gone = pair == "tandem_flash=" || c.contains("Max-Age=0");
            if let Ok(mut f) = self.flash.lock() {
                *f = if gone { None } else { Some(pair) };
            }
        }
    }
}

pub const PASSWORD: &str = "a long test password";

/// The value of the first `_csrf` field of a page.
pub fn csrf_of(html: &str) -> Option<String> {
    let at = html.find("name=\"_csrf\" value=\"")? + "name=\"_csrf\" value=\"".len();
    Some(html[at..].split('"').next()?.to_string())
}

/// The database of one test: a fresh SQLite file in its data folder, or, when
/// `TANDEM_TEST_POSTGRES` names a PostgreSQL server (a URL to its maintenance database,
/// as `.ci/run` sets it), a fresh database created on that server for this test.
pub async fn test_database_url() -> Option<String> {
    let admin = std::env::var("TANDEM_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())?;
    sqlx::any::install_default_drivers();
    let name = format!(
        "tandem_test_{}",
        tandem::auth::random_id(8).expect("random")
    );
    let mut c = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .expect("connect to TANDEM_TEST_POSTGRES");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .expect("create a test database");
    let (base, _) = admin.rsplit_once('/').expect("a URL ending in /DATABASE");
    let query = admin
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    Some(format!("{base}/{name}{query}"))
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// A test server whose configuration `tweak` changes first (`--secure-cookies`, ...).
pub async fn spawn_app_with(tweak: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config =
        Config::new(&dir.path().join("data"), test_database_url().await).expect("config");
    tweak(&mut config);
    let store = tandem::Store::open(&config.database_url)
        .await
        .expect("store");
    let db = sql_pool(&config.database_url).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = AppState::new(store.clone(), config.clone());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = tandem::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await;
    });
    TestApp {
        base: format!("http://{addr}"),
        client: Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client"),
        store,
        db,
        config,
        dir,
        _stop: stop,
    }
}

/// A real MP4 file, different for every `seed`: two 16x16 frames at 8 frames a second
/// (`tests/data/tiny.mp4`, made by `ffmpeg -f lavfi -i color=c=gray:s=16x16:r=8
/// -frames:v 2 -c:v libx264 -preset ultrafast -bf 0 -movflags +faststart -map_metadata -1
/// -fflags +bitexact -flags:v +bitexact`), then the seed in a `free` box at the end.
/// The import reads its timing from its own tables, as it does a real clip's, so a
/// campaign of a thousand clips asks ffprobe nothing.
pub fn fake_mp4(seed: &str) -> Vec<u8> {
    let mut v = include_bytes!("../data/tiny.mp4").to_vec();
    let size = u32::try_from(8 + seed.len()).expect("a short seed");
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(b"free");
    v.extend_from_slice(seed.as_bytes());
    v
}

/// Bytes that pass for an MP4 file by their first box alone, different for every
/// `seed`: no tool can read their frames.
pub fn broken_mp4(seed: &str) -> Vec<u8> {
    let mut v = b"\0\0\0\x18ftypisom\0\0\0\0isommp41".to_vec();
    v.extend_from_slice(seed.as_bytes());
    v
}

/// A manifest line for a clip with one question per QA type; writes its video.
pub fn clip_line(dir: &Path, clip_id: &str, task: &str, qa_types: &[&str]) -> Value {
    let file = format!("videos/{clip_id}.mp4");
    std::fs::create_dir_all(dir.join("videos")).expect("videos dir");
    std::fs::write(dir.join(&file), fake_mp4(clip_id)).expect("video");
    let questions: Vec<Value> = qa_types
        .iter()
        .map(|qa| {
            json!({
                "question_id": format!("{clip_id}_{qa}"),
                "qa_type": qa,
                "question": format!("Question {qa} about {clip_id}?"),
                "options": ["a brass key", "a red candle", "a glass orb", "a feather quill"],
                "answer": 2
            })
        })
        .collect();
    json!({
        "clip_id": clip_id, "task": task, "file": file,
        "theme": "Wizard's Enchantment Altar", "generator": "test/generator",
        "scene_graph": {"objects": ["key", "candle"]}, "scenario": {"event": "the candle is lit"},
        "questions": questions
    })
}

/// A zip in memory holding `files` (name, content).
pub fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    for (name, data) in files {
        w.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
    buf.into_inner()
}

pub fn write_manifest(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join(name);
    std::fs::write(&path, text).expect("manifest");
    path
}

impl TestApp {
    /// Creates the test campaign with the shipped protocol `name` (vgenst, glimpse,
    /// tumtraffic) and returns that protocol.
    pub async fn campaign_on(&self, name: &str) -> tandem::domain::protocol::Protocol {
        let text = tandem::domain::protocol::shipped(name).expect("a shipped protocol");
        let protocol = tandem::domain::protocol::parse(text).expect("a sound protocol");
        self.store
            .create_campaign(CAMPAIGN, &protocol)
            .await
            .expect("campaign");
        protocol
    }

    /// The paper bundle of the default campaign, as text by path.
    pub async fn bundle_text(&self) -> std::collections::BTreeMap<String, String> {
        let campaign = self.store.campaign(CAMPAIGN).await.expect("campaign");
        tandem::app::paper_bundle(&self.store, &campaign, 0)
            .await
            .expect("the paper bundle")
            .into_iter()
            .map(|f| {
                (
                    f.path.clone(),
                    String::from_utf8_lossy(&f.bytes).to_string(),
                )
            })
            .collect()
    }

    pub fn source(&self) -> PathBuf {
        let p = self.dir.path().join("source");
        std::fs::create_dir_all(&p).expect("source dir");
        p
    }

    /// Imports a manifest through the same path as `tandem import`.
    pub async fn import(
        &self,
        manifest: &Path,
    ) -> tandem::Result<tandem::store::catalog::ImportSummary> {
        tandem::app::import_manifest(&self.store, &self.config, CAMPAIGN, manifest).await
    }

    /// Imports `n` clips of each task given, each with the questions of `qa_types`.
    pub async fn import_clips(&self, tasks: &[&str], n: usize, qa_types: &[&str]) -> Vec<String> {
        let src = self.source();
        let mut lines = Vec::new();
        let mut ids = Vec::new();
        for task in tasks {
            for i in 0..n {
                let id = format!("{task}_{i:04}");
                lines.push(clip_line(&src, &id, task, qa_types));
                ids.push(id);
            }
        }
        let m = write_manifest(&src, "manifest.jsonl", &lines);
        self.import(&m).await.expect("import");
        ids
    }

    /// Creates an account (validators join the pool with `index`) and returns its token.
    pub async fn user(&self, name: &str, role: Role, index: Option<i64>) -> String {
        let hash = tandem::auth::hash_password(PASSWORD).expect("hash");
        let campaign = (role != Role::Admin).then(|| CAMPAIGN.to_string());
        self.store
            .add_user(name, role, &hash, campaign, index)
            .await
            .expect("user");
        self.store.create_token(name, "test").await.expect("token")
    }

    /// An account with `role` in `campaign` (a validator at pool `index`); its API token.
    pub async fn member(
        &self,
        name: &str,
        role: Role,
        campaign: &str,
        index: Option<i64>,
    ) -> String {
        let hash = tandem::auth::hash_password(PASSWORD).expect("hash");
        // Another campaign than the default is made first, with the default protocol (a
        // campaign that does not exist is an error).
        if self.store.campaign(campaign).await.is_err() {
            self.store
                .create_campaign(campaign, &tandem::domain::protocol::vgenst())
                .await
                .expect("campaign");
        }
        self.store
            .add_user(name, role, &hash, Some(campaign.to_string()), index)
            .await
            .expect("member");
        self.store.create_token(name, "test").await.expect("token")
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        Self::reply(req).await
    }

    /// Sends a request; a reply of a documented API route is checked against the
    /// OpenAPI document (`contract`).
    pub async fn reply(req: reqwest::RequestBuilder) -> Reply {
        let (client, req) = req.build_split();
        let req = req.expect("request");
        let (method, path) = (req.method().to_string(), req.url().path().to_string());
        let resp = client.execute(req).await.expect("request");
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let content_type = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        crate::contract::check(&method, &path, status.as_u16(), content_type, &text);
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            body,
            text,
            headers,
        }
    }

    /// A page request with the browser's cookie; a form gets the CSRF token added.
    pub async fn page(
        &self,
        web: Option<&Web>,
        method: Method,
        path: &str,
        form: Option<&[(&str, &str)]>,
    ) -> Reply {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(w) = web {
            req = req.header("Cookie", w.cookies());
        }
        if let Some(f) = form {
            let mut pairs: Vec<(&str, &str)> = f.to_vec();
            if let Some(w) = web
                && !pairs.iter().any(|(k, _)| *k == "_csrf")
            {
                pairs.push(("_csrf", &w.csrf));
            }
            req = req.form(&pairs);
        }
        let reply = Self::reply(req).await;
        if let Some(w) = web {
            w.remember(&reply);
        }
        reply
    }

    /// Signs in through the login page, as a browser would.
    /// Items of task `task` in the queue of `name` as its second rater.
    pub async fn queued_second_to(&self, name: &str, task: &str) -> i64 {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM items i JOIN users u ON u.id = i.queue2 JOIN tasks t ON t.id = i.task_id
             WHERE u.name = $1 AND t.code = $2",
        )
        .bind(name)
        .bind(task)
        .fetch_one(&self.db)
        .await
        .expect("count")
    }

    pub async fn login(&self, name: &str) -> Web {
        self.try_login(name, PASSWORD).await.expect("sign in")
    }

    pub async fn try_login(&self, name: &str, password: &str) -> Result<Web, Reply> {
        web_login(&self.client, &self.base, name, password).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.call(Method::GET, path, Some(token), None).await
    }

    pub async fn verdict(&self, token: &str, stage: u8, item: &str, body: Value) -> Reply {
        self.call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/items/{stage}/{item}/verdict"),
            Some(token),
            Some(body),
        )
        .await
    }

    pub async fn pass(&self, token: &str, stage: u8, item: &str) -> Reply {
        self.verdict(token, stage, item, json!({"verdict": "valid"}))
            .await
    }

    pub async fn reject(&self, token: &str, stage: u8, item: &str, reason: &str) -> Reply {
        self.verdict(
            token,
            stage,
            item,
            json!({"verdict": "reject", "reasons": [reason], "note": "seen"}),
        )
        .await
    }

    pub async fn resolve(
        &self,
        token: &str,
        stage: u8,
        item: &str,
        verdict: &str,
        note: &str,
    ) -> Reply {
        self.call(
            Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/splits/{stage}/{item}/resolution"),
            Some(token),
            Some(json!({"verdict": verdict, "note": note})),
        )
        .await
    }

    pub async fn queue(&self, token: &str, stage: u8) -> Value {
        let r = self
            .get(
                &format!("/api/v1/campaigns/{CAMPAIGN}/queue/{stage}"),
                token,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.body
    }

    /// The stored outcome of the newest version's item.
    pub async fn outcome(&self, stage: u8, key: &str) -> String {
        let sql = if stage == 1 {
            "SELECT i.outcome FROM items i JOIN clips c ON c.current_version_id = i.clip_version_id WHERE i.stage = 1 AND c.clip_key = $1"
        } else {
            "SELECT i.outcome FROM items i JOIN questions q ON q.id = i.question_id JOIN clips c ON c.current_version_id = q.clip_version_id WHERE q.question_key = $1"
        };
        sqlx::query_scalar(sql)
            .bind(key)
            .fetch_one(&self.db)
            .await
            .expect("outcome")
    }

    pub async fn count(&self, table_sql: &'static str) -> i64 {
        sqlx::query_scalar(table_sql)
            .fetch_one(&self.db)
            .await
            .expect("count")
    }

    pub async fn dump(&self) -> String {
        self.store.dump().await.expect("dump")
    }
}

/// The usual cast: two validators (val00 = index 0, val01 = index 1), an author, an
/// admin and a participant, with their tokens.
pub struct Cast {
    pub v0: String,
    pub v1: String,
    pub author: String,
    pub admin: String,
    pub participant: String,
}

pub async fn cast(app: &TestApp) -> Cast {
    Cast {
        v0: app.user("val00", Role::Validator, Some(0)).await,
        v1: app.user("val01", Role::Validator, Some(1)).await,
        author: app.user("author1", Role::Author, None).await,
        admin: app.user("admin1", Role::Admin, None).await,
        participant: app.user("part1", Role::Participant, None).await,
    }
}

/// Whether ffmpeg (and ffprobe) are here; under `TANDEM_REQUIRE_FFMPEG` (set by
/// `.ci/run`) their absence fails the test instead of skipping what needs them.
pub fn has_ffmpeg() -> bool {
    let here = tandem::io::video::ffmpeg_available();
    assert!(
        here || std::env::var_os("TANDEM_REQUIRE_FFMPEG").is_none(),
        "TANDEM_REQUIRE_FFMPEG is set but ffmpeg is not installed"
    );
    here
}

/// Whether pdflatex is here; under `TANDEM_REQUIRE_LATEX` (set by `.ci/run`) its
/// absence fails the test, elsewhere the LaTeX checks are skipped with a message.
pub fn pdflatex_available() -> bool {
    let found = std::process::Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("TANDEM_REQUIRE_LATEX").is_none(),
            "TANDEM_REQUIRE_LATEX is set but pdflatex is not installed"
        );
        eprintln!(
            "note: pdflatex is not installed: the LaTeX was checked as text only, not compiled (SKIPPED)"
        );
    }
    found
}

/// Compiles `file` (a whole document) in `dir` with pdflatex, twice (for references);
/// returns the PDF's path.
pub fn pdflatex(dir: &Path, file: &str) -> PathBuf {
    for _ in 0..2 {
        let out = std::process::Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error", file])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pdflatex {file} failed:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    dir.join(file.replace(".tex", ".pdf"))
}

/// LaTeX tables compile in a document with booktabs (and geometry), when pdflatex is
/// installed; without it they were checked as text only, and this says so.
pub fn latex_compiles(tables: &str) {
    if !pdflatex_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let doc = format!(
        "\\documentclass{{article}}\n\\usepackage[margin=1.5cm]{{geometry}}\n\\usepackage{{booktabs}}\n\\begin{{document}}\n{tables}\\end{{document}}\n"
    );
    std::fs::write(dir.path().join("tables.tex"), doc).unwrap();
    pdflatex(dir.path(), "tables.tex");
}

/// A `tandem serve` child process on a free port; killed when dropped.
pub struct ServerProcess {
    pub child: std::process::Child,
    pub base: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The most memory the process has held so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> u64 {
        peak_rss_of(self.pid())
    }
}

/// VmHWM of a live process, in bytes.
pub fn peak_rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM");
    kb * 1024
}

/// The `tandem` binary with a data folder (and the test's database when it is
/// PostgreSQL).
pub fn tandem_command(data: &Path, url: Option<&str>) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    cmd.arg("--data-dir").arg(data);
    match url {
        Some(u) => cmd.env("DATABASE_URL", u),
        None => cmd.env_remove("DATABASE_URL"),
    };
    cmd
}

/// Runs a `tandem` command to completion; panics with its stderr on failure.
pub fn tandem_ok(data: &Path, url: Option<&str>, args: &[&str]) -> String {
    let out = tandem_command(data, url)
        .args(args)
        .output()
        .expect("run tandem");
    assert!(
        out.status.success(),
        "tandem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Starts `tandem serve` with `extra` arguments and waits until it listens.
pub fn start_server(data: &Path, url: Option<&str>, extra: &[&str]) -> ServerProcess {
    start_server_with_env(data, url, extra, &[])
}

/// As [`start_server`], with these variables in the server's environment (a bucket's
/// `AWS_*`).
pub fn start_server_with_env(
    data: &Path,
    url: Option<&str>,
    extra: &[&str],
    env: &[(String, String)],
) -> ServerProcess {
    start_server_with_stderr(data, url, extra, env, std::process::Stdio::null())
}

/// As [`start_server_with_env`], its log (standard error) going to `stderr`.
pub fn start_server_with_stderr(
    data: &Path,
    url: Option<&str>,
    extra: &[&str],
    env: &[(String, String)],
    stderr: std::process::Stdio,
) -> ServerProcess {
    use std::io::BufRead;
    let mut child = tandem_command(data, url)
        .envs(env.iter().cloned())
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start tandem serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let base = line
        .trim()
        .strip_prefix("Tandem is listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    ServerProcess { child, base }
}

/// Signs in through the login page of the server at `base`, as a browser would, and
/// follows the start page to a page that carries the CSRF token.
/// The sign-in page's own cookie (`tandem_prelogin=...`) and its form's CSRF token.
pub async fn login_form(client: &Client, base: &str) -> (String, String) {
    let page = TestApp::reply(client.get(format!("{base}/login"))).await;
    let pre = page
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_prelogin="))
        .and_then(|c| c.split(';').next())
        .expect("prelogin cookie")
        .to_string();
    let token = csrf_of(&page.text).expect("csrf on the login page");
    (pre, token)
}

pub async fn web_login(
    client: &Client,
    base: &str,
    name: &str,
    password: &str,
) -> Result<Web, Reply> {
    let (pre, token) = login_form(client, base).await;
    let req = client
        .post(format!("{base}/login"))
        .header("Cookie", &pre)
        .form(&[
            ("_csrf", token.as_str()),
            ("name", name),
            ("password", password),
            ("next", "/"),
        ]);
    let r = TestApp::reply(req).await;
    let Some(cookie) = r
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_session=") && !c.starts_with("tandem_session=;"))
        .and_then(|c| c.split(';').next())
        .map(str::to_string)
    else {
        return Err(r);
    };
    let mut web = Web {
        cookie,
        csrf: String::new(),
        flash: Default::default(),
    };
    let mut path = "/".to_string();
    for _ in 0..4 {
        let r = TestApp::reply(
            client
                .get(format!("{base}{path}"))
                .header("Cookie", &web.cookie),
        )
        .await;
        match r.location() {
            Some(next) => path = next,
            None => {
                web.csrf = csrf_of(&r.text).expect("csrf on the start page");
                return Ok(web);
            }
        }
    }
    panic!("too many redirects from /");
}

/// A client that follows no redirects (so that tests see the 303s).
pub fn http_client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// A pool of the tests' own on a database the store uses.
pub async fn sql_pool(url: &str) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::any::AnyPoolOptions::new()
        .max_connections(2)
        .connect(url)
        .await
        .expect("a pool of the tests' own")
}

/// What `probe` returns once it returns `Some`: asked every 20 ms for at most `within`
/// (a test waits for the event, not for a fixed time); a panic naming `what` otherwise.
pub async fn eventually<T, F, Fut>(what: &str, within: std::time::Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(start.elapsed() < within, "waited {within:?} for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
