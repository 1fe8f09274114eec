//! Browser sessions, sign-in throttling and the opaque URLs of clips. All of it lives
//! in the database, so that several servers can share one.

use super::accounts::User;
use super::{Store, col};
use crate::auth;
use crate::clock::now_micros;
use crate::domain::Role;
use crate::error::{Error, Result};

/// A session ends after this long without a request (12 hours).
pub const IDLE_MICROS: i64 = 12 * 3600 * 1_000_000;
/// ... and in any case this long after sign-in (7 days).
pub const ABSOLUTE_MICROS: i64 = 7 * 24 * 3600 * 1_000_000;
/// `last_seen_at` is written at most this often (one minute).
const TOUCH_MICROS: i64 = 60 * 1_000_000;

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
fn delay_micros(over: i64) -> i64 {
    let over = u32::try_from(over.clamp(0, 30)).unwrap_or(30);
    (5_000_000i64 << over).min(MAX_DELAY_MICROS)
}

fn retry_after_secs(micros: i64) -> u64 {
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

impl Store {
    /// Starts a session for `user`; returns the cookie's id (kept only by the browser).
    pub async fn create_session(&self, user: &User) -> Result<String> {
        let id = auth::random_id(32)?;
        let csrf = auth::random_id(32)?;
        let now = now_micros();
        let mut tx = self.begin_write().await?;
        // Old sessions of this account that have run out are cleared on the way.
        sqlx::query(
            "DELETE FROM sessions WHERE user_id = $1 AND (last_seen_at < $2 OR created_at < $3)",
        )
        .bind(user.id)
        .bind(now - IDLE_MICROS)
        .bind(now - ABSOLUTE_MICROS)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)",
        )
        .bind(auth::sha256_hex(id.as_bytes()))
        .bind(user.id)
        .bind(csrf)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The live session behind a cookie id, if any.
    pub async fn session(&self, cookie_id: &str) -> Result<Option<Session>> {
        let id_hash = auth::sha256_hex(cookie_id.as_bytes());
        let row = sqlx::query(
            "SELECT s.csrf_token, s.created_at, s.last_seen_at, u.id, u.name, u.role
             FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.id_hash = $1 AND u.disabled_at IS NULL",
        )
        .bind(&id_hash)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let now = now_micros();
        let created: i64 = col(&row, "created_at")?;
        let seen: i64 = col(&row, "last_seen_at")?;
        if seen < now - IDLE_MICROS || created < now - ABSOLUTE_MICROS {
            return Ok(None);
        }
        if now - seen > TOUCH_MICROS {
            sqlx::query("UPDATE sessions SET last_seen_at = $1 WHERE id_hash = $2")
                .bind(now)
                .bind(&id_hash)
                .execute(self.pool())
                .await?;
        }
        let role: String = col(&row, "role")?;
        Ok(Some(Session {
            user: User {
                id: col(&row, "id")?,
                name: col(&row, "name")?,
                role: Role::parse(&role).map_err(Error::Internal)?,
            },
            csrf_token: col(&row, "csrf_token")?,
            id_hash,
        }))
    }

    pub async fn end_session(&self, session: &Session) -> Result<()> {
        sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
            .bind(&session.id_hash)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Leaves a message for the next page this session shows.
    pub async fn set_flash(&self, session: &Session, message: &str) -> Result<()> {
        sqlx::query("UPDATE sessions SET flash = $1 WHERE id_hash = $2")
            .bind(message)
            .bind(&session.id_hash)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Takes (reads and clears) the session's message.
    pub async fn take_flash(&self, session: &Session) -> Result<Option<String>> {
        let flash: Option<String> =
            sqlx::query_scalar("SELECT flash FROM sessions WHERE id_hash = $1")
                .bind(&session.id_hash)
                .fetch_optional(self.pool())
                .await?
                .flatten();
        if flash.is_some() {
            sqlx::query("UPDATE sessions SET flash = NULL WHERE id_hash = $1")
                .bind(&session.id_hash)
                .execute(self.pool())
                .await?;
        }
        Ok(flash)
    }

    /// Counts one sign-in attempt under each key (an account name, a client address),
    /// atomically, before its password is checked: refused while a key waits out its
    /// delay; after a key's allowed failures in the window, each further attempt
    /// doubles the delay (from five seconds, at most [`MAX_DELAY_MICROS`]).
    pub async fn admit_login(&self, keys: &[(String, i64)]) -> Result<Admission> {
        let now = now_micros();
        let mut tx = self.begin_write().await?;
        let mut rows = Vec::with_capacity(keys.len());
        let mut wait_until = 0i64;
        for (key, allowed) in keys {
            let row: Option<(i64, i64, i64)> = sqlx::query_as(
                "SELECT failures, window_start, blocked_until FROM login_throttle WHERE key = $1",
            )
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
            let (failures, window_start, blocked_until) = match row {
                Some((f, w, b)) if w >= now - THROTTLE_WINDOW_MICROS => (f, w, b),
                Some((_, _, b)) => (0, now, b),
                None => (0, now, 0),
            };
            wait_until = wait_until.max(blocked_until);
            rows.push((key, *allowed, failures, window_start, blocked_until));
        }
        if wait_until > now {
            return Ok(Admission::Wait(retry_after_secs(wait_until - now)));
        }
        for (key, allowed, failures, window_start, blocked_until) in rows {
            let failures = failures + 1;
            let blocked_until = if failures >= allowed {
                now + delay_micros(failures - allowed)
            } else {
                blocked_until
            };
            sqlx::query(
                "INSERT INTO login_throttle (key, failures, window_start, blocked_until) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (key) DO UPDATE SET failures = $2, window_start = $3, blocked_until = $4",
            )
            .bind(key)
            .bind(failures)
            .bind(window_start)
            .bind(blocked_until)
            .execute(&mut *tx)
            .await?;
        }
        // Keep the table small: keys quiet for a day are forgotten.
        sqlx::query("DELETE FROM login_throttle WHERE window_start < $1 AND blocked_until < $2")
            .bind(now - 24 * 3600 * 1_000_000)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Admission::Admitted)
    }

    /// A sign-in succeeded: the account's name starts afresh, and the attempt counted
    /// against the address is taken back.
    pub async fn login_succeeded(&self, name_key: &str, addr_key: Option<&str>) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM login_throttle WHERE key = $1")
            .bind(name_key)
            .execute(&mut *tx)
            .await?;
        if let Some(k) = addr_key {
            sqlx::query(
                "UPDATE login_throttle SET failures = failures - 1 WHERE key = $1 AND failures > 0",
            )
            .bind(k)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The opaque token under which `user` fetches a clip version (made on first use).
    pub async fn media_grant(&self, user: &User, clip_version_id: i64) -> Result<String> {
        let existing: Option<String> = sqlx::query_scalar(
            "SELECT token FROM media_grants WHERE user_id = $1 AND clip_version_id = $2",
        )
        .bind(user.id)
        .bind(clip_version_id)
        .fetch_optional(self.pool())
        .await?;
        if let Some(t) = existing {
            return Ok(t);
        }
        let token = auth::random_id(24)?;
        sqlx::query(
            "INSERT INTO media_grants (token, user_id, clip_version_id, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (user_id, clip_version_id) DO NOTHING",
        )
        .bind(&token)
        .bind(user.id)
        .bind(clip_version_id)
        .bind(now_micros())
        .execute(self.pool())
        .await?;
        // Another request may have made one at the same moment: read back the winner.
        Ok(sqlx::query_scalar(
            "SELECT token FROM media_grants WHERE user_id = $1 AND clip_version_id = $2",
        )
        .bind(user.id)
        .bind(clip_version_id)
        .fetch_one(self.pool())
        .await?)
    }

    /// The clip behind an opaque token.
    pub async fn granted_media(&self, token: &str) -> Result<Option<GrantedMedia>> {
        let row = sqlx::query(
            "SELECT g.user_id, g.clip_version_id, v.media_sha256, v.media_type, v.media_size
             FROM media_grants g JOIN clip_versions v ON v.id = g.clip_version_id WHERE g.token = $1",
        )
        .bind(token)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| -> Result<GrantedMedia> {
            Ok(GrantedMedia {
                user_id: col(&r, "user_id")?,
                clip_version_id: col(&r, "clip_version_id")?,
                sha256: col(&r, "media_sha256")?,
                media_type: col(&r, "media_type")?,
                size: col(&r, "media_size")?,
            })
        })
        .transpose()
    }

    /// Whether `user` may see a clip version now: admins always; authors when it has a
    /// split (in either stage); validators when one of its items is in their queue.
    pub async fn may_see_clip(&self, user: &User, clip_version_id: i64) -> Result<bool> {
        let sql = match user.role {
            Role::Admin => return Ok(true),
            Role::Participant => return Ok(false),
            Role::Author => {
                "SELECT COUNT(*) FROM items WHERE clip_version_id = $1 AND $2 > 0
                 AND outcome IN ('split', 'split_accepted', 'split_rejected')"
            }
            Role::Validator => concat!(
                "SELECT COUNT(*) FROM items i
                 JOIN tasks t ON t.id = i.task_id
                 JOIN clips c ON c.current_version_id = i.clip_version_id
                 LEFT JOIN items p ON p.id = i.parent_item_id
                 WHERE i.clip_version_id = $1 AND ((i.calibration = 0 AND ",
                crate::pair_member!("$2"),
                " AND (i.stage = 1 OR p.outcome IN ('both_pass', 'split_accepted')))
                   OR (i.calibration = 1 AND EXISTS (SELECT 1 FROM pool_members m
                        WHERE m.campaign_id = i.campaign_id AND m.user_id = $2)))"
            ),
        };
        let n: i64 = sqlx::query_scalar(sql)
            .bind(clip_version_id)
            .bind(user.id)
            .fetch_one(self.pool())
            .await?;
        Ok(n > 0)
    }
}
