//! `tandem serve` as a separate process: graceful shutdown, and decisions that survive
//! a kill -9.

use crate::helpers::{clip_line, write_manifest};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn tandem(data: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Starts `tandem serve` on a free port and returns the child and its base URL.
fn start(data: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(data)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base = line
        .trim()
        .strip_prefix("Tandem is listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    (child, base)
}

#[tokio::test]
async fn an_acknowledged_decision_survives_a_kill_9_and_sigterm_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let lines: Vec<_> = (0..20)
        .map(|i| clip_line(&src, &format!("K{i:02}"), "MC_F_EGO_STA", &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem(&data, &["import", m.to_str().unwrap()]);
    tandem(
        &data,
        &[
            "user",
            "add",
            "val00",
            "--role",
            "validator",
            "--index",
            "0",
        ],
    );
    tandem(
        &data,
        &[
            "user",
            "add",
            "val01",
            "--role",
            "validator",
            "--index",
            "1",
        ],
    );
    let token = tandem(&data, &["token", "create", "val00"]);

    let (mut child, base) = start(&data);
    let client = reqwest::Client::new();
    for i in 0..20 {
        let r = client
            .post(format!(
                "{base}/api/v1/campaigns/default/items/1/K{i:02}/verdict"
            ))
            .bearer_auth(&token)
            .json(&serde_json::json!({"verdict": "valid"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    child.kill().unwrap(); // SIGKILL: no chance to flush anything
    child.wait().unwrap();

    let csv = tandem(&data, &["export", "decisions"]);
    assert_eq!(
        csv.lines().count(),
        21,
        "every acknowledged decision is stored:\n{csv}"
    );

    let (mut child, base) = start(&data);
    let r = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "SIGTERM ends the server cleanly: {exit:?}");
}

/// Many clients send verdicts; the server is killed with SIGKILL in the middle; every
/// verdict that was answered 201 is in the database afterwards (SQLite with group
/// commit, or PostgreSQL under `TANDEM_TEST_POSTGRES`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_verdict_acknowledged_under_load_survives_a_kill_9() {
    use crate::helpers::{start_server, tandem_ok, test_database_url};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let url = test_database_url().await;
    let url = url.as_deref();
    const CLIPS: usize = 400;
    let lines: Vec<_> = (0..CLIPS)
        .map(|i| clip_line(&src, &format!("L{i:03}"), "MC_F_EGO_STA", &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem_ok(&data, url, &["import", m.to_str().unwrap()]);
    let mut tokens = Vec::new();
    for (i, name) in ["val00", "val01"].iter().enumerate() {
        tandem_ok(
            &data,
            url,
            &[
                "user",
                "add",
                name,
                "--role",
                "validator",
                "--index",
                &i.to_string(),
            ],
        );
        tokens.push(tandem_ok(&data, url, &["token", "create", name]));
    }
    let server = start_server(&data, url, &[]);
    let base = server.base.clone();
    let client = reqwest::Client::new();
    // 16 clients, each with its own share of the clips, as fast as they are answered.
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<(usize, usize)>();
    let mut clients = Vec::new();
    for k in 0..16usize {
        let (client, base, tokens, done) = (
            client.clone(),
            base.clone(),
            tokens.clone(),
            done_tx.clone(),
        );
        clients.push(tokio::spawn(async move {
            for i in (k..CLIPS).step_by(16) {
                for (v, token) in tokens.iter().enumerate() {
                    let r = client
                        .post(format!(
                            "{base}/api/v1/campaigns/default/items/1/L{i:03}/verdict"
                        ))
                        .bearer_auth(token)
                        .json(&serde_json::json!({"verdict": "valid"}))
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status() == 201 => {
                            let _ = done.send((v, i));
                        }
                        // The server is gone: this client stops.
                        _ => return,
                    }
                }
            }
        }));
    }
    drop(done_tx);
    // Kill it once a good number of verdicts are in, while the rest are in flight.
    let mut acknowledged = Vec::new();
    while let Some(d) = done_rx.recv().await {
        acknowledged.push(d);
        if acknowledged.len() == 200 {
            break;
        }
    }
    let mut server = server;
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    for c in clients {
        let _ = c.await;
    }
    while let Ok(d) = done_rx.try_recv() {
        acknowledged.push(d);
    }
    assert!(acknowledged.len() >= 200);
    assert!(
        acknowledged.len() < 2 * CLIPS,
        "the kill came after every verdict"
    );
    let csv = tandem_ok(&data, url, &["export", "decisions"]);
    let stored: std::collections::HashSet<(String, String)> = csv
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.get(2)?.to_string(), f.get(1)?.to_string()))
        })
        .collect();
    for (v, i) in &acknowledged {
        let key = (format!("val0{v}"), format!("L{i:03}"));
        assert!(
            stored.contains(&key),
            "{key:?} was acknowledged but is not stored ({} acknowledged, {} stored)",
            acknowledged.len(),
            stored.len()
        );
    }
}
