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
