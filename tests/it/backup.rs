//! `tandem backup` while the server runs, and a restore that gives back every record.

use crate::helpers::*;
use std::process::Command;
use tandem::Config;

#[tokio::test]
async fn a_backup_taken_while_serving_restores_to_the_same_records() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 3, &["OE"]).await;
    app.pass(&c.v0, 1, &ids[0]).await;
    app.reject(&c.v1, 1, &ids[0], "generation_artifact").await;
    app.pass(&c.v0, 1, &ids[1]).await;
    let before = app.dump().await;

    let out = app.dir.path().join("tandem.backup");
    let run = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .args(["backup", "--out"])
        .arg(&out)
        .env("DATABASE_URL", &app.config.database_url)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stderr).contains("copy that folder too"));
    // A second backup to the same file is refused rather than overwriting it.
    let again = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .args(["backup", "--out"])
        .arg(&out)
        .env("DATABASE_URL", &app.config.database_url)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists; give a new file"));

    // Restore into a new place, as docs/operations/backup.md says, and compare every row.
    let restored = app.dir.path().join("restored");
    std::fs::create_dir_all(&restored).unwrap();
    let url = if app.config.database_url.starts_with("sqlite:") {
        std::fs::copy(&out, restored.join("tandem.db")).unwrap();
        None
    } else {
        let url = test_database_url().await.unwrap();
        let r = Command::new("pg_restore")
            .args(["--no-owner", "--dbname"])
            .arg(&url)
            .arg(&out)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        Some(url)
    };
    let config = Config::new(&restored, url).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    assert_eq!(store.dump().await.unwrap(), before);
    // The restored database takes new work.
    let stats = tandem::app::qc_report(
        &store,
        &store.campaign(CAMPAIGN).await.unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(stats.stage1.split, 1);
}

/// `pg_dump` gets the database's password through its environment, never on its command
/// line (which every user of the machine reads in `ps`).
#[tokio::test]
async fn a_postgresql_backup_keeps_the_password_off_the_command_line() {
    let app = spawn_app().await;
    let Some(url) = app
        .config
        .database_url
        .strip_prefix("postgres://")
        .map(str::to_string)
    else {
        eprintln!("note: pg_dump is PostgreSQL's; nothing to check on SQLite (skipped here)");
        return;
    };
    // The test server trusts its clients, so a password in the URL is only carried.
    let (user, rest) = url.split_once('@').unwrap();
    let with_password = format!("postgres://{user}:s3cr%40t@{rest}");
    // A pg_dump that writes down what it was given.
    let bin = app.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = app.dir.path().join("seen");
    let script = bin.join("pg_dump");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"args: $*\" > {seen}\necho \"password: $PGPASSWORD\" >> {seen}\n",
            seen = seen.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = app.dir.path().join("tandem.backup");
    let run = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .args(["backup", "--out"])
        .arg(&out)
        .env("DATABASE_URL", &with_password)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen = std::fs::read_to_string(&seen).unwrap();
    let args = seen.lines().next().unwrap();
    assert!(
        !args.contains("s3cr"),
        "the password on pg_dump's command line: {args}"
    );
    assert!(args.contains(&format!("postgres://{user}@")), "{args}");
    assert!(seen.contains("password: s3cr@t"), "{seen}");
}
