//! Browser sessions, sign-in throttling and the clips behind media tokens (the types;
//! the SQL is in `store/areas/sessions.rs`). All of it lives in the database, so that
//! several servers can share one.

use super::accounts::User;

/// A session ends after this long without a request (12 hours).
pub const IDLE_MICROS: i64 = 12 * 3600 * 1_000_000;
/// ... and in any case this long after sign-in (7 days).
pub const ABSOLUTE_MICROS: i64 = 7 * 24 * 3600 * 1_000_000;
/// `last_seen_at` is written at most this often (one minute).
pub const TOUCH_MICROS: i64 = 60 * 1_000_000;
/// The window in which failed sign-ins are counted (15 minutes).
pub const THROTTLE_WINDOW_MICROS: i64 = 15 * 60 * 1_000_000;
/// The longest wait a key can be given (15 minutes).
pub const MAX_DELAY_MICROS: i64 = 15 * 60 * 1_000_000;

/// Whether a sign-in attempt may check its password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// Refused: try again in this many seconds.
    Wait(u64),
}

/// The wait after `over` failures beyond the allowed ones: 5 s, 10 s, 20 s, ...
pub fn delay_micros(over: i64) -> i64 {
    let over = u32::try_from(over.clamp(0, 30)).unwrap_or(30);
    (5_000_000i64 << over).min(MAX_DELAY_MICROS)
}

pub fn retry_after_secs(micros: i64) -> u64 {
    u64::try_from((micros + 999_999) / 1_000_000)
        .unwrap_or(1)
        .max(1)
}

/// A signed-in browser.
#[derive(Debug, Clone)]
pub struct Session {
    pub user: User,
    pub csrf_token: String,
    /// The SHA-256 of the cookie's id (the stored key).
    pub id_hash: String,
}

/// A clip file that someone may fetch through an opaque URL.
#[derive(Debug, Clone)]
pub struct GrantedMedia {
    pub user_id: i64,
    pub clip_version_id: i64,
    pub sha256: String,
    pub media_type: String,
    pub size: i64,
}
