//! Every write, once: each is a function generic over [`Tx`](super::db::Tx), the
//! transaction of whichever backend runs it (SQLite's writer through rusqlite, or a
//! PostgreSQL connection through sqlx). The backends' entry points (`store/sql/*.rs`)
//! hand these to their writer; the order of a write's steps, its SQL and its parameters
//! live here and nowhere else.
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
