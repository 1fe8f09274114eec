//! The facts behind the QC tables (the SQL is in `store/sql/stats.rs`; the facts are
//! `domain::facts`): a few rows per task, pair and outcome from one scan of the items
//! table, whatever the number of decisions, so that memory does not grow with the
//! campaign; and every validator's median time per stage from one statement.
