//! Tandem: paired human quality control for generated-video benchmarks.
//!
//! The library holds everything; `main.rs` only parses the command line. Tests call
//! [`web::app`] and [`serve`] with a real database and a real listening socket; the
//! names re-exported here are the ones they and the binary use.

pub mod app;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cores;
pub mod demo;
pub mod domain;
pub mod error;
pub mod io;
pub mod metrics;
pub mod report;
pub mod rng;
pub mod server;
pub mod stats;
pub mod store;
pub mod web;

pub use config::Config;
pub use error::{Error, Result};
pub use server::{serve, shutdown_signal};
pub use store::Store;
pub use web::AppState;
