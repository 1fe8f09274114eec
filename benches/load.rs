//! Load through HTTP, measured by wrk (a load client that shares no code with the
//! server), with the machine's own references measured in the same run:
//!
//! - the raw durable commit rate of SQLite on the same disk (one-row INSERTs, WAL,
//!   `synchronous = FULL`, one connection), and a bare axum handler under wrk;
//! - decisions (`POST .../items/1/{clip}/verdict`, every request a new verdict of one of
//!   12 validators on 12 tasks, as many clips as the run can use) at 1, 8 and 32
//!   connections on SQLite;
//! - a validator's next item (`GET .../queue/2`) at the paper's scale (1,200 clips, 9,800
//!   questions, every clip retained) and at ten times it, at 1 and 32 connections, and the
//!   first page of the same queue (`GET .../queue/2/items`, 250 rows);
//! - the server's peak memory (VmHWM) after the load;
//! - resolutions, calibration verdicts and study answers at 32 connections on SQLite (each
//!   request a new one), against the decisions at 32;
//! - with `TANDEM_BENCH_POSTGRES` naming a PostgreSQL server's maintenance database, the
//!   decisions at 32 connections with one server and with two (wrk against each).
//!
//! Run: `cargo bench --bench load` (needs `wrk`: `apt install wrk`). It prints the rows
//! of BENCHMARKS.md. `TANDEM_BENCH_SECONDS` sets each wrk run's length (default 5);
//! `TANDEM_BENCH_ONLY` (comma-separated: sqlite, kinds, next, pg) runs only those parts
//! (`kinds` needs `sqlite`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures_util::StreamExt;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tandem::domain::taxonomy::Taxonomy;
use tandem::domain::{Origin, Role, Stage, Verdict};
use tandem::store::review::{VerdictRequest, VersionRule};
use tandem::{Config, Store};

const VALIDATORS: usize = 12;

fn seconds() -> u64 {
    std::env::var("TANDEM_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).unwrap();
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        kb / 1024.0
    }
}

fn serve(data: &Path, url: Option<&str>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
    cmd.arg("--data-dir")
        .arg(data)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
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
        .unwrap()
        .to_string();
    Server(child, base)
}

async fn fresh_postgres(admin: &str) -> String {
    sqlx::any::install_default_drivers();
    let name = format!("tandem_load_{}", tandem::auth::random_id(6).unwrap());
    let mut c = <sqlx::AnyConnection as sqlx::Connection>::connect(admin)
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let (base, _) = admin.rsplit_once('/').unwrap();
    format!("{base}/{name}")
}

/// A manifest of `clips` clips per task (with every applicable question when
/// `questions`), all sharing one small video.
fn manifest(dir: &Path, clips: usize, questions: bool) -> PathBuf {
    let tax = Taxonomy::vgenst();
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    std::fs::write(
        dir.join("videos/clip.mp4"),
        b"\0\0\0\x18ftypisom\0\0\0\0isommp41load",
    )
    .unwrap();
    let mut text = String::new();
    for task in &tax.tasks {
        for i in 0..clips {
            let id = format!("{}_{i:05}", task.code);
            let qs: Vec<_> = if questions {
                tax.applicability[&task.code]
                    .iter()
                    .map(|qa| serde_json::json!({"question_id": format!("{id}_{qa}"), "qa_type": qa,
                        "question": "Which object appears in the video?",
                        "options": ["a brass key", "a red candle", "a glass orb", "a feather quill"],
                        "answer": 2}))
                    .collect()
            } else {
                Vec::new()
            };
            text.push_str(
                &serde_json::json!({"clip_id": id, "task": task.code, "file": "videos/clip.mp4",
                    "theme": "t", "scene_graph": {}, "scenario": {}, "questions": qs})
                .to_string(),
            );
            text.push('\n');
        }
    }
    let path = dir.join("manifest.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

struct Campaign {
    data: PathBuf,
    url: Option<String>,
    tokens: Vec<String>,
    admin: String,
    /// (validator, clip) for every verdict the campaign can take, interleaved so that
    /// consecutive requests go to different validators and clips.
    slots: Vec<(usize, String)>,
}

/// A campaign of 12 tasks x `clips` clips, 12 validators (task t is reviewed by t and
/// t+1 mod 12), each with an API token.
async fn campaign(dir: &Path, url: Option<String>, clips: usize, questions: bool) -> Campaign {
    let data = dir.join("data");
    let config = Config::new(&data, url.clone()).unwrap();
    let store = Store::open(&config.database_url).await.unwrap();
    let hash = tandem::auth::hash_password("a long load-test password").unwrap();
    let mut tokens = Vec::new();
    for v in 0..VALIDATORS {
        let name = format!("val{v:02}");
        let index = v as i64;
        store
            .add_user(
                &name,
                Role::Validator,
                &hash,
                Some("default".into()),
                Some(index),
            )
            .await
            .unwrap();
        tokens.push(store.create_token(&name, "load").await.unwrap());
    }
    store
        .add_user("admin", Role::Admin, &hash, None, None)
        .await
        .unwrap();
    let admin = store.create_token("admin", "load").await.unwrap();
    let m = manifest(&dir.join("src"), clips, questions);
    tandem::app::import_manifest(&store, &config, "default", &m)
        .await
        .unwrap();
    // As `tandem import` does: the videos' frame timing read now, not by the server
    // when it starts (one UPDATE of every clip version, which would run during the
    // first seconds of the measurement).
    if tandem::io::video::ffmpeg_available() {
        tandem::app::probe_timings(&store, &config).await.unwrap();
    }
    let tax = Taxonomy::vgenst();
    let mut slots = Vec::new();
    for i in 0..clips {
        for (t, task) in tax.tasks.iter().enumerate() {
            let id = format!("{}_{i:05}", task.code);
            slots.push((t, id.clone()));
            slots.push(((t + 1) % VALIDATORS, id));
        }
    }
    store.close().await;
    Campaign {
        data,
        url,
        tokens,
        admin,
        slots,
    }
}

/// Both validators pass every clip, in-process, so that every question is open.
async fn retain_every_clip(c: &Campaign) {
    let config = Config::new(&c.data, c.url.clone()).unwrap();
    let store = Store::open(&config.database_url).await.unwrap();
    let campaign = store.campaign("default").await.unwrap();
    let mut users = Vec::new();
    for v in 0..VALIDATORS {
        users.push(
            store
                .user_by_name(&format!("val{v:02}"))
                .await
                .unwrap()
                .unwrap(),
        );
    }
    let req = VerdictRequest {
        verdict: Verdict::Valid,
        reasons: vec![],
        note: String::new(),
        time_spent_ms: None,
        time_measure: None,
        version: VersionRule::Newest,
    };
    futures_util::stream::iter(c.slots.iter())
        .map(|(v, clip)| {
            let (store, campaign, user, req) = (&store, &campaign, &users[*v], &req);
            async move {
                store
                    .record_verdict(campaign, user, Stage::Clip, clip, req, Origin::Api)
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<()>>()
        .await;
    store.close().await;
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
struct Wrk {
    requests: u64,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    non_2xx: u64,
}

impl Wrk {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

const SCRIPT: &str = r#"
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
local lines = {}
local i = 0
function init(args)
  if args[1] ~= nil then
    for l in io.lines(args[1] .. "." .. id) do lines[#lines + 1] = l end
  end
end
function request()
  if #lines == 0 then
    return wrk.format("GET", wrk.path)
  end
  i = i + 1
  if i > #lines then
    -- Out of new verdicts: a request that fails (401, no token), so that the run
    -- shows it as non-2xx.
    return wrk.format("POST", "/api/v1/campaigns/default/items/1/out-of-verdicts/verdict")
  end
  local token, path, body = lines[i]:match("^(%S+) (%S+) ?(%S*)$")
  if body == nil or body == "" then body = '{"verdict":"valid"}' end
  return wrk.format("POST", path, {["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
"#;

/// Runs wrk for `secs` with `conns` connections on `url`; with `lines`, each request is
/// the next `TOKEN PATH [BODY]` line of its thread (a new write each; the body a
/// verdict when not given), else a plain GET (with `token` as bearer when given).
fn wrk(
    dir: &Path,
    url: &str,
    conns: usize,
    secs: u64,
    lines: Option<&[String]>,
    token: Option<&str>,
) -> std::process::Child {
    let threads = conns.min(2);
    let script = dir.join("load.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut cmd = Command::new("wrk");
    cmd.args([
        "-t",
        &threads.to_string(),
        "-c",
        &conns.to_string(),
        "-d",
        &format!("{secs}s"),
        "--latency",
        "-s",
    ])
    .arg(&script);
    if let Some(t) = token {
        cmd.args(["-H", &format!("Authorization: Bearer {t}")]);
    }
    cmd.arg(url);
    if let Some(lines) = lines {
        let base = dir.join("requests");
        for t in 0..threads {
            let mine: Vec<&str> = lines
                .iter()
                .skip(t)
                .step_by(threads)
                .map(String::as_str)
                .collect();
            std::fs::write(format!("{}.{t}", base.display()), mine.join("\n")).unwrap();
        }
        cmd.arg("--").arg(&base);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    cmd.spawn().expect("wrk (apt install wrk)")
}

fn wrk_result(child: std::process::Child) -> Wrk {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("wrk said: {text}"));
    let f: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    Wrk {
        requests: f[0] as u64,
        seconds: f[1] / 1e6,
        p50_ms: f[2] / 1000.0,
        p99_ms: f[3] / 1000.0,
        non_2xx: f[4] as u64,
    }
}

/// Verdicts a warm-up may use.
const WARM_UP_VERDICTS: usize = 20_000;

/// One second of verdicts at 32 connections before a server is measured, so that the
/// measurement sees it in its steady state (its pools' connections open, their
/// statements prepared), not starting.
fn warm_up(dir: &Path, server: &Server, c: &Campaign, used: &mut usize) {
    let sub = dir.join("warm-up");
    std::fs::create_dir_all(&sub).unwrap();
    let lines = take_lines(c, used, WARM_UP_VERDICTS);
    wrk_result(wrk(&sub, &server.1, 32, 1, Some(&lines), None));
}

/// Takes the next `n` verdict slots as wrk lines.
fn take_lines(c: &Campaign, used: &mut usize, n: usize) -> Vec<String> {
    let end = (*used + n).min(c.slots.len());
    let lines = c.slots[*used..end]
        .iter()
        .map(|(v, clip)| {
            format!(
                "{} /api/v1/campaigns/default/items/1/{clip}/verdict",
                c.tokens[*v]
            )
        })
        .collect();
    *used = end;
    lines
}

/// The raw durable commit rate of SQLite on this disk: one-row INSERTs, each its own
/// transaction, WAL and `synchronous = FULL`, for `secs` seconds.
async fn raw_sqlite_commits(dir: &Path, secs: u64) -> f64 {
    use sqlx::ConnectOptions;
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.join("raw.db"))
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Full);
    let mut c = opts.connect().await.unwrap();
    sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
        .execute(&mut c)
        .await
        .unwrap();
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < Duration::from_secs(secs) {
        sqlx::query("INSERT INTO t (v) VALUES ($1)")
            .bind(vec![7u8; 64])
            .execute(&mut c)
            .await
            .unwrap();
        n += 1;
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// A bare axum handler on its own runtime thread; returns its URL.
fn bare_axum() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let app = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}/", l.local_addr().unwrap()))
                .unwrap();
            axum::serve(l, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

/// The sum and count of a histogram in the server's `/metrics`.
async fn histogram(base: &str, admin: &str, name: &str) -> (f64, f64) {
    let text = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let value = |suffix: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}_{suffix} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    (value("sum"), value("count"))
}

fn row(what: &str, conns: usize, w: &Wrk, reference: Option<(f64, &str)>) {
    // A run with refused requests ran out of new writes (or failed): its rate is not the
    // writes' rate, and the ratio says so.
    let ratio = reference
        .map(|(r, name)| {
            let ratio = format!("{:.2}x {name}", w.rate() / r);
            if w.non_2xx > 0 {
                format!("{ratio} (not a measure: {} refused)", w.non_2xx)
            } else {
                ratio
            }
        })
        .unwrap_or_default();
    println!(
        "| {what} | {conns} | {:.0} | {:.2} ms | {:.2} ms | {} | {ratio} |",
        w.rate(),
        w.p50_ms,
        w.p99_ms,
        w.non_2xx
    );
}

/// The other writes that take the verdict's road (load, decide, apply) at 32
/// connections: resolutions of splits, calibration verdicts and study answers, each
/// request a new write of its kind; the decisions of the same run are the reference.
async fn other_writes(dir: &Path, url: Option<String>, secs: u64, label: &str, decisions: f64) {
    let per = 8_000 * secs as usize;
    let hash = tandem::auth::hash_password("a long load-test password").unwrap();

    // Resolutions: every clip split (one validator passes it, the other rejects it). A
    // resolution writes less than a verdict (no queue counters, no questions to open),
    // so it gets four times the splits: 8,000 a second ran out within the run.
    let clips = 4 * per / 12 + 1;
    let c = campaign(&dir.join("resolutions"), url.clone(), clips, false).await;
    {
        let config = Config::new(&c.data, c.url.clone()).unwrap();
        let store = Store::open(&config.database_url).await.unwrap();
        let campaign = store.campaign("default").await.unwrap();
        let mut users = Vec::new();
        for v in 0..VALIDATORS {
            users.push(
                store
                    .user_by_name(&format!("val{v:02}"))
                    .await
                    .unwrap()
                    .unwrap(),
            );
        }
        let valid = VerdictRequest {
            verdict: Verdict::Valid,
            reasons: vec![],
            note: String::new(),
            time_spent_ms: None,
            time_measure: None,
            version: VersionRule::Newest,
        };
        let reject = VerdictRequest {
            verdict: Verdict::Reject,
            reasons: vec!["generation_artifact".into()],
            ..valid.clone()
        };
        futures_util::stream::iter(c.slots.iter().enumerate())
            .map(|(i, (v, clip))| {
                let req = if i % 2 == 0 { &valid } else { &reject };
                let (store, campaign, user) = (&store, &campaign, &users[*v]);
                async move {
                    store
                        .record_verdict(campaign, user, Stage::Clip, clip, req, Origin::Api)
                        .await
                        .unwrap();
                }
            })
            .buffer_unordered(64)
            .collect::<Vec<()>>()
            .await;
        store
            .add_user("author", Role::Author, &hash, Some("default".into()), None)
            .await
            .unwrap();
        let token = store.create_token("author", "load").await.unwrap();
        store.close().await;
        let lines: Vec<String> = c
            .slots
            .iter()
            .step_by(2)
            .map(|(_, clip)| {
                format!(
                    "{token} /api/v1/campaigns/default/splits/1/{clip}/resolution {}",
                    r#"{"verdict":"accept","note":"seen"}"#
                )
            })
            .collect();
        measure_kind(
            dir,
            &c,
            &lines,
            secs,
            &format!("{label}: resolutions"),
            decisions,
        )
        .await;
    }

    // Calibration verdicts: 40 calibration clips, a round of all 40, each validator
    // deciding each once.
    let items = 40;
    let validators = 2 * per / items + 1;
    {
        let data = dir.join("calibration/data");
        let config = Config::new(&data, url.clone()).unwrap();
        let store = Store::open(&config.database_url).await.unwrap();
        store
            .add_user("admin", Role::Admin, &hash, None, None)
            .await
            .unwrap();
        let admin = store.create_token("admin", "load").await.unwrap();
        let src = dir.join("calibration/src");
        std::fs::create_dir_all(src.join("videos")).unwrap();
        std::fs::write(
            src.join("videos/clip.mp4"),
            b"\0\0\0\x18ftypisom\0\0\0\0isommp41load",
        )
        .unwrap();
        let mut text = String::new();
        for i in 0..items {
            text.push_str(
                &serde_json::json!({"clip_id": format!("CAL_{i:03}"), "task": "MC_F_EGO_STA",
                    "file": "videos/clip.mp4", "theme": "t", "scene_graph": {}, "scenario": {},
                    "questions": [], "calibration": {"verdict": "valid"}})
                .to_string(),
            );
            text.push('\n');
        }
        std::fs::write(src.join("manifest.jsonl"), text).unwrap();
        tandem::app::import_manifest(&store, &config, "default", &src.join("manifest.jsonl"))
            .await
            .unwrap();
        let campaign = store.campaign("default").await.unwrap();
        store
            .set_settings(
                &campaign,
                tandem::store::catalog::Settings {
                    calibration_min_items: items as i64,
                    ..campaign.settings
                },
            )
            .await
            .unwrap();
        let mut lines = Vec::new();
        let mut tokens = Vec::new();
        for v in 0..validators {
            let name = format!("cal{v:04}");
            let index = v as i64;
            store
                .add_user(
                    &name,
                    Role::Validator,
                    &hash,
                    Some("default".into()),
                    Some(index),
                )
                .await
                .unwrap();
            tokens.push(store.create_token(&name, "load").await.unwrap());
        }
        for i in 0..items {
            for t in &tokens {
                lines.push(format!(
                    "{t} /api/v1/campaigns/default/calibration/1/CAL_{i:03}/verdict"
                ));
            }
        }
        store.close().await;
        let c = Campaign {
            data,
            url: url.clone(),
            tokens: Vec::new(),
            admin,
            slots: Vec::new(),
        };
        measure_kind(
            dir,
            &c,
            &lines,
            secs,
            &format!("{label}: calibration verdicts"),
            decisions,
        )
        .await;
    }

    // Study answers: 200 sets of four clips, each participant's order drawn before.
    let sets = 200;
    let participants = per / sets + 1;
    {
        let data = dir.join("study/data");
        let config = Config::new(&data, url.clone()).unwrap();
        let store = Store::open(&config.database_url).await.unwrap();
        store
            .add_user("admin", Role::Admin, &hash, None, None)
            .await
            .unwrap();
        let admin = store.create_token("admin", "load").await.unwrap();
        let src = dir.join("study/src");
        std::fs::create_dir_all(src.join("vids")).unwrap();
        let sources = ["PerceptionTest", "EgoExoBench", "VSI-Bench", "VGenST"];
        for (k, s) in sources.iter().enumerate() {
            std::fs::write(src.join(format!("vids/{s}.webm")), tandem::demo::CLIPS[k]).unwrap();
        }
        let mut text = String::new();
        for s in 0..sets {
            let clips: Vec<serde_json::Value> = sources
                .iter()
                .map(|src| {
                    serde_json::json!({"clip_id": format!("{src}_{s:03}"), "source": src,
                        "truth": if *src == "VGenST" { "fake" } else { "real" },
                        "file": format!("vids/{src}.webm")})
                })
                .collect();
            text.push_str(
                &serde_json::json!({"set_id": format!("S{s:03}"), "clips": clips}).to_string(),
            );
            text.push('\n');
        }
        std::fs::write(src.join("sets.jsonl"), text).unwrap();
        let checked = tandem::io::study::check_sets(
            &src.join("sets.jsonl"),
            None,
            &tandem::io::limits::Limits::default(),
        )
        .unwrap();
        tandem::app::import_study(&store, &config, "default", &checked, None)
            .await
            .unwrap();
        let campaign = store.campaign("default").await.unwrap();
        let study = store.require_study(&campaign).await.unwrap();
        let answer = r#"{"photorealism":{"A":1,"B":2,"C":3,"D":4},"temporal_coherence":{"A":1,"B":2,"C":3,"D":4},"comprehensibility":{"A":1,"B":2,"C":3,"D":4},"real_fake":{"A":"real","B":"real","C":"real","D":"fake"}}"#;
        let mut tokens = Vec::new();
        for p in 0..participants {
            let name = format!("part{p:04}");
            let user = store
                .add_user(
                    &name,
                    Role::Participant,
                    &hash,
                    Some("default".into()),
                    None,
                )
                .await
                .unwrap();
            store.study_progress(&study, &user).await.unwrap();
            tokens.push(store.create_token(&name, "load").await.unwrap());
        }
        let mut lines = Vec::new();
        for position in 1..=sets {
            for t in &tokens {
                lines.push(format!(
                    "{t} /api/v1/studies/{}/sets/{position} {answer}",
                    study.id
                ));
            }
        }
        store.close().await;
        let c = Campaign {
            data,
            url: url.clone(),
            tokens: Vec::new(),
            admin,
            slots: Vec::new(),
        };
        measure_kind(
            dir,
            &c,
            &lines,
            secs,
            &format!("{label}: study answers"),
            decisions,
        )
        .await;
    }
}

/// Serves `c`, warms it up with a second of its own writes, then measures `lines` at 32
/// connections.
async fn measure_kind(
    dir: &Path,
    c: &Campaign,
    lines: &[String],
    secs: u64,
    what: &str,
    decisions: f64,
) {
    let server = serve(&c.data, c.url.as_deref());
    let warm = lines.len().min(lines.len() / 10);
    let sub = dir.join("warm-up");
    std::fs::create_dir_all(&sub).unwrap();
    wrk_result(wrk(&sub, &server.1, 32, 1, Some(&lines[..warm]), None));
    let w = wrk_result(wrk(dir, &server.1, 32, secs, Some(&lines[warm..]), None));
    row(what, 32, &w, Some((decisions, "decisions")));
}

fn main() {
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (apt install wrk): nothing measured");
        return;
    }
    let secs = seconds();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        println!(
            "| what | connections | per second | p50 | p99 | non-2xx | against the references |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");

        // References on this machine, now.
        let raw = raw_sqlite_commits(dir.path(), 3).await;
        let only = std::env::var("TANDEM_BENCH_ONLY").unwrap_or_default();
        let runs = |part: &str| only.is_empty() || only.split(',').any(|p| p == part);
        println!("| raw SQLite durable commits (1 connection) | 1 | {raw:.0} | | | | |");
        let bare = bare_axum();
        let b = wrk_result(wrk(dir.path(), &bare, 32, secs, None, None));
        row("bare axum handler", 32, &b, None);

        // Decisions on SQLite.
        if runs("sqlite") {
        // Verdicts a second assumed at most at 1, 8 and 32 connections: every request
        // of a run is a new verdict (a run that uses them all shows failed requests).
        let budget = [(1, 8_000), (8, 30_000), (32, 40_000)];
        let needed: usize =
            budget.iter().map(|(_, r)| r * secs as usize).sum::<usize>() + WARM_UP_VERDICTS;
        let clips = needed / (2 * 12) + 1;
        let c = campaign(&dir.path().join("sqlite"), None, clips, false).await;
        let server = serve(&c.data, None);
        let mut used = 0;
        warm_up(dir.path(), &server, &c, &mut used);
        let mut at32 = 0.0;
        for (conns, rate) in budget {
            let before = histogram(&server.1, &c.admin, "tandem_writer_batch_jobs").await;
            let commit_before = histogram(&server.1, &c.admin, "tandem_commit_seconds").await;
            let lines = take_lines(&c, &mut used, rate * secs as usize);
            let w = wrk_result(wrk(
                dir.path(),
                &server.1,
                conns,
                secs,
                Some(&lines),
                None,
            ));
            row(
                "SQLite: decisions",
                conns,
                &w,
                Some((raw, "raw commits")),
            );
            if conns == 32 {
                at32 = w.rate();
            }
            let after = histogram(&server.1, &c.admin, "tandem_writer_batch_jobs").await;
            let commit_after = histogram(&server.1, &c.admin, "tandem_commit_seconds").await;
            let batches = (after.1 - before.1).max(1.0);
            println!(
                "| SQLite: writer at {conns} connections | | {:.1} jobs a batch | {:.2} ms a COMMIT | | | {:.0} batches |",
                (after.0 - before.0) / batches,
                1000.0 * (commit_after.0 - commit_before.0) / (commit_after.1 - commit_before.1).max(1.0),
                batches
            );
        }
        println!(
            "| SQLite: server's peak memory after the decisions | | {:.1} MiB | | | | |",
            server.peak_rss_mib()
        );
        drop(server);
        if runs("kinds") {
            other_writes(&dir.path().join("kinds"), None, secs, "SQLite", at32).await;
        }
        }

        // The next item, Stage 2, at the paper's scale and at ten times it.
        for (label, clips) in [("paper scale", 100), ("10x paper scale", 1_000)] {
            if !runs("next") {
                break;
            }
            let c = campaign(&dir.path().join(label.replace(' ', "-")), None, clips, true).await;
            retain_every_clip(&c).await;
            let server = serve(&c.data, None);
            let url = format!("{}/api/v1/campaigns/default/queue/2", server.1);
            let mut next_rates = Vec::new();
            for conns in [1, 32] {
                let w = wrk_result(wrk(
                    dir.path(),
                    &url,
                    conns,
                    secs,
                    None,
                    Some(&c.tokens[1]),
                ));
                row(&format!("SQLite: next item, {label}"), conns, &w, None);
                next_rates.push(w.rate());
            }
            // The first page of the same validator's Stage 2 queue (250 of its rows,
            // counted under the filters): what the queue page reads.
            let page = format!("{}/api/v1/campaigns/default/queue/2/items", server.1);
            for (conns, next_rate) in [1, 32].into_iter().zip(next_rates) {
                let w = wrk_result(wrk(
                    dir.path(),
                    &page,
                    conns,
                    secs,
                    None,
                    Some(&c.tokens[1]),
                ));
                row(
                    &format!("SQLite: queue's first page (250 rows), {label}"),
                    conns,
                    &w,
                    Some((next_rate, "the next item")),
                );
            }
        }

        // PostgreSQL: one server, then two on one database.
        let Some(admin) = std::env::var("TANDEM_BENCH_POSTGRES")
            .ok()
            .filter(|u| !u.is_empty() && runs("pg"))
        else {
            eprintln!("note: TANDEM_BENCH_POSTGRES is not set: PostgreSQL is not measured");
            return;
        };
        let url = fresh_postgres(&admin).await;
        let clips = (20_000 * secs as usize + 2 * WARM_UP_VERDICTS) / (2 * 12) + 1;
        let c = campaign(&dir.path().join("pg"), Some(url.clone()), clips, false).await;
        let mut used = 0;
        let one = serve(&c.data, Some(&url));
        warm_up(dir.path(), &one, &c, &mut used);
        let lines = take_lines(&c, &mut used, 10_000 * secs as usize);
        let w = wrk_result(wrk(dir.path(), &one.1, 32, secs, Some(&lines), None));
        row("PostgreSQL, 1 server: decisions", 32, &w, None);
        let two = serve(&c.data, Some(&url));
        warm_up(dir.path(), &two, &c, &mut used);
        let mut runs = Vec::new();
        for (k, s) in [&one, &two].iter().enumerate() {
            let sub = dir.path().join(format!("pg{k}"));
            std::fs::create_dir_all(&sub).unwrap();
            let lines = take_lines(&c, &mut used, 5_000 * secs as usize);
            runs.push(wrk(&sub, &s.1, 16, secs, Some(&lines), None));
        }
        let results: Vec<Wrk> = runs.into_iter().map(wrk_result).collect();
        let both = Wrk {
            requests: results.iter().map(|r| r.requests).sum(),
            seconds: results.iter().map(|r| r.seconds).fold(0.0, f64::max),
            p50_ms: results.iter().map(|r| r.p50_ms).fold(0.0, f64::max),
            p99_ms: results.iter().map(|r| r.p99_ms).fold(0.0, f64::max),
            non_2xx: results.iter().map(|r| r.non_2xx).sum(),
        };
        row(
            "PostgreSQL, 2 servers: decisions",
            32,
            &both,
            Some((w.rate(), "one server")),
        );
        println!(
            "| PostgreSQL: peak memory of each server | | {:.1} / {:.1} MiB | | | | |",
            one.peak_rss_mib(),
            two.peak_rss_mib()
        );
    });
}
