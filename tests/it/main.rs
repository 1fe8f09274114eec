//! Integration tests: the real server on a real socket with a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod helpers;

mod access;
mod browser;
mod cli;
mod concurrency;
mod demo;
mod imports;
mod life;
mod media;
mod migrations;
mod pages;
mod paper;
mod process;
mod review;
mod study;
