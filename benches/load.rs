//! Load through the HTTP API: decisions per second and latency (p50, p99) for 1, 8 and 32
//! concurrent validator clients, on SQLite (one server) and, when
//! `TANDEM_BENCH_POSTGRES` names a PostgreSQL server's maintenance database, on
//! PostgreSQL with one and with two servers.
//!
//! Each configuration gets a fresh database with 12 tasks x 300 clips and 24 validators
//! in 12 disjoint pairs; client c acts as validator c mod 24 (with 32 clients, 8
//! validators have two clients, each on its own half of the items) and sends `valid`
//! verdicts one after another through `POST .../verdict`, each acknowledged only after
//! its commit. With two servers, client c talks to server c mod 2.
//!
//! Run: `cargo bench --bench load` (SQLite only), or
//! `TANDEM_BENCH_POSTGRES=postgres://USER@HOST:PORT/postgres cargo bench --bench load`.
//! Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tandem::Config;
use tandem::domain::Role;
use tandem::store::accounts::PoolPlacement;

const TASKS: usize = 12;
const CLIPS_PER_TASK: usize = 300;
const VALIDATORS: usize = 24;

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(data: &std::path::Path, url: Option<&str>) -> Server {
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

/// A campaign ready for load: returns the data folder, the tokens of the validators and
/// each validator's clip ids.
async fn campaign(
    dir: &std::path::Path,
    url: Option<String>,
) -> (std::path::PathBuf, Vec<String>, Vec<Vec<String>>) {
    let data = dir.join("data");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("videos")).unwrap();
    let config = Config::new(&data, url).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
    let mut manifest = String::new();
    let mut by_task = vec![Vec::new(); TASKS];
    for (t, task) in tax.tasks.iter().enumerate().take(TASKS) {
        for k in 0..CLIPS_PER_TASK {
            let id = format!("{}_{k:04}", task.code);
            let file = format!("videos/{id}.mp4");
            let mut bytes = b"\0\0\0\x18ftypisom\0\0\0\0isommp41".to_vec();
            bytes.extend_from_slice(id.as_bytes());
            std::fs::write(src.join(&file), bytes).unwrap();
            manifest.push_str(
                &serde_json::json!({"clip_id": id, "task": task.code, "file": file, "questions": []})
                    .to_string(),
            );
            manifest.push('\n');
            by_task[t].push(id);
        }
    }
    std::fs::write(src.join("m.jsonl"), manifest).unwrap();
    tandem::app::import_manifest(&store, &config, "default", &src.join("m.jsonl"))
        .await
        .unwrap();
    let hash = tandem::auth::hash_password("a long load-test password").unwrap();
    let mut tokens = Vec::new();
    for v in 0..VALIDATORS {
        let name = format!("val{v:02}");
        let placement = PoolPlacement {
            campaign: "default".into(),
            index: v as i64,
        };
        store
            .add_user(&name, Role::Validator, &hash, Some(placement))
            .await
            .unwrap();
        tokens.push(store.create_token(&name, "load").await.unwrap());
    }
    let c = store.campaign("default").await.unwrap();
    let mut items = vec![Vec::new(); VALIDATORS];
    for (t, task) in tax.tasks.iter().enumerate().take(TASKS) {
        let (a, b) = (2 * t, 2 * t + 1);
        store
            .set_pair(
                &c,
                &task.code,
                Some((&format!("val{a:02}"), &format!("val{b:02}"))),
            )
            .await
            .unwrap();
        items[a] = by_task[t].clone();
        items[b] = by_task[t].clone();
    }
    store.close().await;
    (data, tokens, items)
}

struct Run {
    decisions: usize,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
}

async fn run(bases: &[String], tokens: &[String], items: &[Vec<String>], clients: usize) -> Run {
    let http = reqwest::Client::new();
    // Which clients share each validator, so that they split its items.
    let mut tasks = Vec::new();
    let started = Instant::now();
    for c in 0..clients {
        let v = c % VALIDATORS;
        let sharing: Vec<usize> = (0..clients).filter(|x| x % VALIDATORS == v).collect();
        let part = sharing.iter().position(|x| *x == c).unwrap();
        let mine: Vec<String> = items[v]
            .iter()
            .enumerate()
            .filter(|(i, _)| i % sharing.len() == part)
            .map(|(_, id)| id.clone())
            .collect();
        let base = bases[c % bases.len()].clone();
        let token = tokens[v].clone();
        let http = http.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(mine.len());
            for id in mine {
                let t = Instant::now();
                let r = http
                    .post(format!(
                        "{base}/api/v1/campaigns/default/items/1/{id}/verdict"
                    ))
                    .bearer_auth(&token)
                    .json(&serde_json::json!({"verdict": "valid"}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all: Vec<Duration> = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let seconds = started.elapsed().as_secs_f64();
    all.sort();
    let q = |p: f64| all[((all.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1000.0;
    Run {
        decisions: all.len(),
        seconds,
        p50_ms: q(0.5),
        p99_ms: q(0.99),
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let pg = std::env::var("TANDEM_BENCH_POSTGRES")
            .ok()
            .filter(|u| !u.is_empty());
        let mut configs: Vec<(&str, usize)> = vec![("SQLite", 1)];
        if pg.is_some() {
            configs.push(("PostgreSQL", 1));
            configs.push(("PostgreSQL", 2));
        } else {
            eprintln!(
                "note: TANDEM_BENCH_POSTGRES is not set: the PostgreSQL configurations are skipped"
            );
        }
        println!("| database | servers | clients | decisions | decisions/s | p50 | p99 |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (db, servers) in configs {
            for clients in [1, 8, 32] {
                let dir = tempfile::tempdir().unwrap();
                let url = match (db, &pg) {
                    ("PostgreSQL", Some(admin)) => Some(fresh_postgres(admin).await),
                    _ => None,
                };
                let (data, tokens, items) = campaign(dir.path(), url.clone()).await;
                let running: Vec<Server> =
                    (0..servers).map(|_| serve(&data, url.as_deref())).collect();
                let bases: Vec<String> = running.iter().map(|s| s.1.clone()).collect();
                let r = run(&bases, &tokens, &items, clients).await;
                println!(
                    "| {db} | {servers} | {clients} | {} | {:.0} | {:.1} ms | {:.1} ms |",
                    r.decisions,
                    r.decisions as f64 / r.seconds,
                    r.p50_ms,
                    r.p99_ms
                );
                drop(running);
            }
        }
    });
}
