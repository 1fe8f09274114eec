//! Integration tests: the real server on a real socket with a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod access;
mod backup;
mod browser;
mod cli;
mod concurrency;
mod demo;
mod hardening;
mod imports;
mod life;
mod media;
mod migrations;
mod outputs;
mod pages;
mod paper;
mod process;
mod review;
mod servers;
mod store;
mod study;

/// Says which database the integration tests ran on, past the test harness's output
/// capture, so that a run without PostgreSQL never passes for a run with it.
#[test]
fn the_database_under_these_tests_is_said() {
    use std::io::Write;
    let message = match std::env::var("TANDEM_TEST_POSTGRES") {
        Ok(u) if !u.is_empty() => {
            "note: the integration tests ran on PostgreSQL (TANDEM_TEST_POSTGRES)\n"
        }
        _ => {
            "note: the integration tests ran on SQLite; the PostgreSQL run was SKIPPED (set TANDEM_TEST_POSTGRES=postgres://USER@HOST:PORT/postgres, as .ci/run does)\n"
        }
    };
    let _ = std::io::stderr().write_all(message.as_bytes());
}
