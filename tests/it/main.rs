//! Integration tests: the real server on a real socket with a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod access;
mod backup;
mod baseline;
mod browser;
mod bucket;
mod cli;
mod concurrency;
mod conformance;
mod contract;
mod demo;
mod hardening;
mod imports;
mod known;
mod life;
mod media;
mod members;
mod migrations;
mod outage;
mod outputs;
mod pages;
mod pairing;
mod paper;
mod pipeline;
mod process;
mod python;
mod review;
mod s3;
mod sampling;
mod servers;
mod store;
mod study;

/// The database under these tests is the one asked for (`TANDEM_TEST_POSTGRES`, as
/// `.ci/run` sets it for its second run, else SQLite), and the run says which, past the
/// test harness's output capture, so that a run on SQLite never passes for one on
/// PostgreSQL.
#[tokio::test]
async fn the_database_under_these_tests_is_the_one_asked_for() {
    use std::io::Write;
    let asked = std::env::var("TANDEM_TEST_POSTGRES").is_ok_and(|u| !u.is_empty());
    let app = helpers::spawn_app().await;
    let want = if asked {
        tandem::store::Backend::Postgres
    } else {
        tandem::store::Backend::Sqlite
    };
    assert_eq!(app.store.backend(), want);
    let message = if asked {
        "note: the integration tests ran on PostgreSQL (TANDEM_TEST_POSTGRES)\n"
    } else {
        "note: the integration tests ran on SQLite; the PostgreSQL run was SKIPPED (set TANDEM_TEST_POSTGRES=postgres://USER@HOST:PORT/postgres, as .ci/run does)\n"
    };
    let _ = std::io::stderr().write_all(message.as_bytes());
}
