//! Integration tests: the real server on a real socket with a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod api_access;
mod cli;
mod concurrency;
mod imports;
mod process;
mod review;
