//! Every statement, once, by area: each is a function generic over
//! [`Tx`](super::db::Tx), the connection of whichever backend runs it (SQLite's
//! connections through rusqlite, PostgreSQL's through sqlx), and each area's
//! `Store` methods sit beside its statements (in the area's file, or in its `ops`
//! child when the area is large) and run them with `read_tx!` or `write_tx!`. The
//! order of a write's steps, its SQL and its parameters live here and nowhere else.
//!
//! Modules call downward only: `base` (lookups every write shares) and `gates` (what
//! structural writes recompute) at the bottom, the areas above them.

pub(crate) mod accounts;
pub(crate) mod base;
pub(crate) mod baseline;
pub(crate) mod calibration;
pub(crate) mod catalog;
pub(crate) mod gates;
pub(crate) mod invitations;
pub(crate) mod known;
pub(crate) mod misc;
pub(crate) mod records;
pub(crate) mod review;
pub(crate) mod sampling;
pub(crate) mod sessions;
pub(crate) mod stats;
pub(crate) mod study;
