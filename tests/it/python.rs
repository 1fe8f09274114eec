//! The API as a lab's script meets it: the served OpenAPI document passes an OpenAPI
//! validator, a Python client generated from it (openapi-python-client) runs every
//! role's main operations with every reply typed (`examples/python/check_client.py`),
//! and the regeneration loop example runs as docs/reference/http-api.md says ("A
//! generated client").
//!
//! The Python with the generator and the validator is `TANDEM_PYTHON` (a venv's python,
//! made by `.ci/run` from `examples/python/requirements.txt`); without it the test is
//! skipped with a message, unless `TANDEM_REQUIRE_PYTHON` is set (as `.ci/run` does).

use crate::helpers::*;
use std::path::{Path, PathBuf};
use tokio::process::Command;

fn python() -> Option<PathBuf> {
    let found = std::env::var_os("TANDEM_PYTHON")
        .map(PathBuf::from)
        .filter(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("TANDEM_REQUIRE_PYTHON").is_none(),
            "TANDEM_REQUIRE_PYTHON is set but TANDEM_PYTHON names no Python"
        );
        eprintln!(
            "skipped: set TANDEM_PYTHON to a Python with examples/python/requirements.txt installed"
        );
    }
    found
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python")
}

/// Runs `python args` with `PYTHONPATH` (the test's server answers meanwhile: this
/// runtime has one thread); panics with its output when it fails.
async fn run(python: &Path, pythonpath: &str, args: &[&str]) -> String {
    let out = Command::new(python)
        .args(args)
        .env("PYTHONPATH", pythonpath)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output()
        .await
        .expect("run python");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "python {args:?} failed:\n{text}");
    text
}

#[tokio::test]
async fn a_client_generated_from_the_document_runs_every_role_with_typed_replies() {
    let Some(python) = python() else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    let work = app.dir.path().join("python");
    std::fs::create_dir_all(&work).unwrap();

    // The served document passes an OpenAPI validator.
    let doc = app
        .client
        .get(format!("{}/api/v1/openapi.json", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let doc_path = work.join("openapi.json");
    std::fs::write(&doc_path, &doc).unwrap();
    let said = run(
        &python,
        "",
        &["-m", "openapi_spec_validator", doc_path.to_str().unwrap()],
    )
    .await;
    assert!(said.contains("OK"), "{said}");

    // A client generated from it, as docs/reference/http-api.md says.
    let client = work.join("client");
    let config = examples().join("client-config.yaml");
    let said = run(
        &python,
        "",
        &[
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            doc_path.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--output-path",
            client.to_str().unwrap(),
        ],
    )
    .await;
    assert!(
        !said.contains("WARNING"),
        "the generator left parts of the API out:\n{said}"
    );
    let pythonpath = format!("{}:{}", client.display(), examples().display());

    // Every role's main operations through it.
    let setup = serde_json::json!({
        "base": app.base,
        "campaign": CAMPAIGN,
        "admin": c.admin,
        "validators": [c.v0, c.v1],
        "author": c.author,
        "work": work,
    });
    let setup_path = work.join("setup.json");
    std::fs::write(&setup_path, setup.to_string()).unwrap();
    let check = examples().join("check_client.py");
    let said = run(
        &python,
        &pythonpath,
        &[check.to_str().unwrap(), setup_path.to_str().unwrap()],
    )
    .await;
    assert!(said.contains("every reply typed"), "{said}");
    assert_eq!(
        app.count("SELECT COUNT(*) FROM clip_versions").await,
        5,
        "three clips, two of them with a new version"
    );

    // The example as its README runs it: nothing waits for a new version now.
    let example = examples().join("regeneration_loop.py");
    let said = run(
        &python,
        &pythonpath,
        &[
            example.to_str().unwrap(),
            "--base",
            &app.base,
            "--token",
            &c.admin,
            "--manifest",
            work.join("manifest.jsonl").to_str().unwrap(),
        ],
    )
    .await;
    assert!(said.contains("nothing to regenerate"), "{said}");
}

/// The served document and the server agree (issue: 18 schema-valid requests refused,
/// an array accepted where an object was due): schemathesis, a property-based fuzzer,
/// runs every check from the document on every operation (schema-valid requests
/// accepted, schema-violating ones refused, no 5xx, every reply, status and content
/// type as documented), as each role of the demo campaign, from a fixed seed and with a
/// bounded number of cases (`tests/contract/schemathesis.toml` says where a rule spans
/// fields and the document cannot say it). Needs schemathesis in `TANDEM_PYTHON`
/// (`tests/contract/requirements.txt`, installed by `.ci/run`).
#[tokio::test]
async fn the_server_accepts_what_its_document_accepts_and_refuses_what_it_refuses() {
    use std::io::BufRead as _;
    let Some(python) = python() else { return };
    let has = std::process::Command::new(&python)
        .args(["-c", "import schemathesis"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        assert!(
            std::env::var_os("TANDEM_REQUIRE_PYTHON").is_none(),
            "TANDEM_REQUIRE_PYTHON is set but schemathesis is not installed in TANDEM_PYTHON"
        );
        eprintln!("skipped: install tests/contract/requirements.txt in TANDEM_PYTHON");
        return;
    }
    // The demo campaign, served by its own process (on the test's database).
    let dir = tempfile::tempdir().unwrap();
    let url = test_database_url().await;
    let mut demo = tandem_command(&dir.path().join("demo"), url.as_deref())
        .args(["demo", "--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = demo.stdout.take().unwrap();
    let demo = ServerProcess {
        child: demo,
        base: String::new(),
    };
    let (mut base, mut tokens) = (String::new(), std::collections::BTreeMap::new());
    let mut lines = std::io::BufReader::new(out).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(b) = line.strip_prefix("serving at:") {
            base = b.trim().to_string();
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [name, _, "password", _, "token", token] = words[..] {
            tokens.insert(name.to_string(), token.to_string());
        }
        if line.starts_with("Open http") {
            break;
        }
    }
    // The rest of what the demo says is read (a closed pipe would end it).
    std::thread::spawn(move || lines.for_each(drop));
    assert!(!base.is_empty() && tokens.len() >= 4, "{base} {tokens:?}");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/schemathesis.toml");
    let doc = format!("{base}/api/v1/openapi.json");
    // Each role over its own part of the API (an admin over all of it).
    for (who, tags) in [
        ("val00", "review,calibration"),
        ("author", "authors"),
        ("part1", "study,baseline"),
        ("admin", ""),
    ] {
        let auth = format!("Authorization: Bearer {}", tokens[who]);
        let mut args = vec![
            "-m",
            "schemathesis.cli",
            "--no-color",
            "--config-file",
            config.to_str().unwrap(),
            "run",
            &doc,
            "-H",
            &auth,
            "--seed",
            "1",
        ];
        for tag in tags.split(',').filter(|t| !t.is_empty()) {
            args.extend(["--include-tag", tag]);
        }
        let said = Command::new(&python)
            .args(&args)
            .current_dir(dir.path())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .kill_on_drop(true)
            .output()
            .await
            .expect("run schemathesis");
        let text = String::from_utf8_lossy(&said.stdout);
        assert!(
            said.status.success(),
            "as {who}: the document and the server disagree:\n{text}{}",
            String::from_utf8_lossy(&said.stderr)
        );
        let summary = text
            .lines()
            .rev()
            .find(|l| l.contains(" in "))
            .unwrap_or("");
        eprintln!("as {who}: {summary}");
    }
    drop(demo);
}
