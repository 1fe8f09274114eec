//! Browser sessions and sign-in throttling: rows every server reads, so that any
//! server answers any request.

use crate::auth;
use crate::clock::now_micros;
use crate::domain::Role;
use crate::error::{Error, Result};
use crate::store::accounts::{User, UserRow, one_user, user_columns, user_joins};
use crate::store::db::{FromRow, Row, Tx, locked, named, sql};
use crate::store::sessions::{
    ABSOLUTE_MICROS, Admission, GrantedMedia, IDLE_MICROS, Session, THROTTLE_WINDOW_MICROS,
    TOUCH_MICROS, delay_micros, retry_after_secs,
};
use crate::store::{Lock, Store};

impl Store {
    /// Starts a session for `user`; returns the cookie's id (kept only by the browser).
    pub async fn create_session(&self, user: &User) -> Result<String> {
        let id = auth::random_id(32)?;
        let csrf = auth::random_id(32)?;
        let id_hash = auth::sha256_hex(id.as_bytes());
        let user_id = user.id;
        write_tx!(self, Lock::Rows, (id_hash, csrf), |tx| {
            create(tx, user_id, id_hash, csrf).await
        })?;
        Ok(id)
    }

    /// The live session behind a cookie id, if any (its last use is stamped when older
    /// than `TOUCH_MICROS`).
    pub async fn session(&self, cookie_id: &str) -> Result<Option<Session>> {
        let id_hash = auth::sha256_hex(cookie_id.as_bytes());
        struct Found {
            csrf_token: String,
            created_at: i64,
            last_seen_at: i64,
            user: UserRow,
        }
        impl FromRow for Found {
            fn from_row(r: &impl Row) -> Result<Self> {
                Ok(Found {
                    csrf_token: r.get("csrf_token")?,
                    created_at: r.get("created_at")?,
                    last_seen_at: r.get("last_seen_at")?,
                    user: UserRow::from_row(r)?,
                })
            }
        }
        const SESSION: &str = concat!(
            "SELECT s.csrf_token, s.created_at, s.last_seen_at, ",
            user_columns!(),
            " FROM sessions s JOIN users u ON u.id = s.user_id ",
            user_joins!(),
            " WHERE s.id_hash = :id_hash AND u.disabled_at IS NULL"
        );
        let rows: Vec<Found> = read_tx!(self, |c| c
            .fetch(sql!(SESSION), named! { id_hash: &id_hash })
            .await)?;
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let (csrf_token, created_at, last_seen_at) = (
            first.csrf_token.clone(),
            first.created_at,
            first.last_seen_at,
        );
        let now = self.now();
        if last_seen_at < now - IDLE_MICROS || created_at < now - ABSOLUTE_MICROS {
            return Ok(None);
        }
        if now - last_seen_at > TOUCH_MICROS {
            let key = &id_hash;
            write_tx!(self, Lock::Rows, (key), |tx| touch(tx, key, now).await)?;
        }
        let Some(user) = one_user(rows.into_iter().map(|r| r.user))? else {
            return Ok(None);
        };
        Ok(Some(Session {
            user,
            csrf_token,
            id_hash,
        }))
    }

    /// Counts one sign-in attempt under each key, atomically, before its password is
    /// checked (see `sessions::Admission`).
    pub async fn admit_login(&self, keys: &[(String, i64)]) -> Result<Admission> {
        write_tx!(self, Lock::Rows, (keys), |tx| admit(tx, keys).await)
    }

    /// A sign-in succeeded: the keys in `cleared` (the account's name, the address and
    /// name, the browser) start afresh, and the attempt counted under `eased` (the
    /// address over all names) is taken back.
    pub async fn login_succeeded(&self, cleared: &[String], eased: Option<&str>) -> Result<()> {
        let eased = eased.map(str::to_string);
        write_tx!(self, Lock::Rows, (cleared, eased), |tx| {
            succeeded(tx, cleared, eased.as_deref()).await
        })
    }

    /// The account a remembered browser signed in as (the hash of its device cookie),
    /// if that account can sign in.
    pub async fn device_owner(&self, id_hash: &str) -> Result<Option<String>> {
        read_tx!(self, |c| {
            c.scalar_opt(
                sql!(
                    "SELECT u.name FROM trusted_devices d JOIN users u ON u.id = d.user_id
                     WHERE d.id_hash = :id_hash AND u.disabled_at IS NULL"
                ),
                named! { id_hash },
            )
            .await
        })
    }

    /// Remembers a browser `user` signed in from (the hash of its new device cookie).
    pub async fn trust_device(&self, user: &User, id_hash: &str) -> Result<()> {
        let user = user.id;
        write_tx!(self, Lock::Rows, (id_hash), |tx| {
            trust_device(tx, user, id_hash).await
        })
    }

    /// The file of a clip version.
    async fn media_of_version(&self, version: i64) -> Result<Option<GrantedMedia>> {
        let row: Option<(String, String, i64)> = read_tx!(self, |c| {
            c.fetch_opt(
                sql!(
                    "SELECT media_sha256, media_type, media_size FROM clip_versions
                     WHERE id = :version"
                ),
                named! { version },
            )
            .await
        })?;
        Ok(row.map(|(sha256, media_type, size)| GrantedMedia {
            user_id: 0,
            clip_version_id: version,
            sha256,
            media_type,
            size,
        }))
    }

    /// Read afresh: authors of the clip's campaign when the clip has a split (in either
    /// stage); validators when one of its items is in their queue, or it is a
    /// calibration clip of their pool.
    async fn clip_in_reach(&self, user: &User, clip_version_id: i64) -> Result<bool> {
        let user = user.id;
        let n: i64 = read_tx!(self, |c| {
            c.scalar(
                sql!(
                    "SELECT COUNT(*) FROM items i
                     WHERE i.clip_version_id = :clip_version_id
                       AND (i.queue1 = :user OR i.queue2 = :user
                            OR (i.calibration = 1 AND i.is_current = 1 AND EXISTS (
                                SELECT 1 FROM pool_members m
                                WHERE m.campaign_id = i.campaign_id AND m.user_id = :user))
                            OR (i.outcome IN ('split', 'split_accepted', 'split_rejected')
                                AND EXISTS (
                                SELECT 1 FROM campaign_members a
                                WHERE a.campaign_id = i.campaign_id AND a.user_id = :user
                                  AND a.role = 'author')))"
                ),
                named! { clip_version_id, user },
            )
            .await
        })?;
        Ok(n > 0)
    }

    /// The opaque token under which `user` fetches a clip version: the pair (user,
    /// version) encrypted under the server's key, the same every time, forged by no
    /// one, and made without touching the database.
    /// Refused (fail closed) when the server has no key.
    pub fn media_grant(&self, user: &User, clip_version_id: i64) -> Result<String> {
        self.inner
            .cache
            .media_token(user.id, clip_version_id)
            .ok_or_else(|| Error::Internal("no key for clip tokens was loaded".into()))
    }

    /// The clip behind an opaque token, if the token is one of this server's and
    /// names this version (whether the person may see it now is [`Store::may_see_clip`]).
    pub async fn granted_media(&self, token: &str) -> Result<Option<GrantedMedia>> {
        let Some((user_id, version)) = self.inner.cache.open_media_token(token) else {
            return Ok(None);
        };
        if let Some(m) = self.inner.cache.media(version) {
            return Ok(Some(GrantedMedia { user_id, ..m }));
        }
        let found = self.media_of_version(version).await?;
        if let Some(m) = &found {
            self.inner.cache.put_media(version, m);
        }
        Ok(found.map(|m| GrantedMedia { user_id, ..m }))
    }

    /// Whether `user` may see a clip version now: admins always; its campaign's authors
    /// when it has a split (in either stage); validators when one of its items is in their queue or it
    /// is a calibration clip of their pool (an answer at most two seconds old, and given
    /// to the person with the same roles: a role taken away is seen at once).
    pub async fn may_see_clip(&self, user: &User, clip_version_id: i64) -> Result<bool> {
        if user.admin {
            return Ok(true);
        }
        if !user.holds(Role::Validator) && !user.holds(Role::Author) {
            return Ok(false);
        }
        if let Some(ok) = self.inner.cache.may_see(user, clip_version_id) {
            return Ok(ok);
        }
        let ok = self.clip_in_reach(user, clip_version_id).await?;
        self.inner.cache.put_may_see(user, clip_version_id, ok);
        Ok(ok)
    }

    /// Ends a browser session (this server forgets its copy at once).
    pub async fn end_session(&self, session: &Session) -> Result<()> {
        self.inner.cache.forget_session(&session.id_hash);
        let key = &session.id_hash;
        write_tx!(self, Lock::Rows, (key), |tx| end(tx, key).await)
    }

    /// The live session behind a cookie id, for clip files (fetched many times a second
    /// while a clip plays): from this server's copy only while no revocation (a sign-out,
    /// a disable, a role change, on any server or by the CLI) has been committed since
    /// the copy was read.
    pub async fn session_for_media(&self, cookie_id: &str) -> Result<Option<Session>> {
        let key = crate::auth::sha256_hex(cookie_id.as_bytes());
        let stamp = self.stamp().await?;
        if let Some(s) = self.inner.cache.session(&key, stamp) {
            return Ok(s);
        }
        let s = self.session(cookie_id).await?;
        self.inner.cache.put_session(&key, stamp, s.clone());
        Ok(s)
    }
}

/// Starts a session (the account's sessions that have run out are cleared on the way).
pub(crate) async fn create(tx: &mut impl Tx, user: i64, id_hash: &str, csrf: &str) -> Result<()> {
    let now = now_micros();
    tx.exec(
        sql!(
            "DELETE FROM sessions
             WHERE user_id = :user AND (last_seen_at < :idle OR created_at < :old)"
        ),
        named! { user, idle: now - IDLE_MICROS, old: now - ABSOLUTE_MICROS },
    )
    .await?;
    tx.exec(
        sql!(
            "INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at)
             VALUES (:id_hash, :user, :csrf, :now, :now)"
        ),
        named! { id_hash, user, csrf, now },
    )
    .await?;
    Ok(())
}

/// Marks a session as seen now.
pub(crate) async fn touch(tx: &mut impl Tx, id_hash: &str, now: i64) -> Result<()> {
    tx.exec(
        sql!("UPDATE sessions SET last_seen_at = :now WHERE id_hash = :id_hash"),
        named! { now, id_hash },
    )
    .await?;
    Ok(())
}

/// Ends a session: every server stops trusting its copy at once (the revocation stamp).
pub(crate) async fn end(tx: &mut impl Tx, id_hash: &str) -> Result<()> {
    super::accounts::access_changed(tx).await?;
    tx.exec(
        sql!("DELETE FROM sessions WHERE id_hash = :id_hash"),
        named! { id_hash },
    )
    .await?;
    Ok(())
}

/// Counts one sign-in attempt under each key, before its password is checked: either
/// every key admits it (and each counts one more failure until the sign-in succeeds),
/// or one of them is blocked and nothing is counted.
pub(crate) async fn admit(tx: &mut impl Tx, keys: &[(String, i64)]) -> Result<Admission> {
    let now = now_micros();
    let mut rows = Vec::with_capacity(keys.len());
    let mut wait_until = 0i64;
    for (key, allowed) in keys {
        // The row exists (and, on PostgreSQL, is locked) before it is read: parallel
        // attempts on one key count one after another.
        tx.exec(
            sql!(
                "INSERT INTO login_throttle (key, failures, window_start, blocked_until)
                 VALUES (:key, 0, :now, 0) ON CONFLICT (key) DO NOTHING"
            ),
            named! { key, now },
        )
        .await?;
        let (failures, window_start, blocked_until): (i64, i64, i64) = tx
            .fetch_one(
                locked!(
                    "SELECT t.failures, t.window_start, t.blocked_until FROM login_throttle t
                     WHERE t.key = :key",
                    "t"
                ),
                named! { key },
            )
            .await?;
        let (failures, window_start) = if window_start >= now - THROTTLE_WINDOW_MICROS {
            (failures, window_start)
        } else {
            (0, now)
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
        tx.exec(
            sql!(
                "UPDATE login_throttle
                 SET failures = :failures, window_start = :window_start, blocked_until = :blocked_until
                 WHERE key = :key"
            ),
            named! { key, failures, window_start, blocked_until },
        )
        .await?;
    }
    // Keep the table small: keys quiet for a day are forgotten.
    tx.exec(
        sql!("DELETE FROM login_throttle WHERE window_start < :day_ago AND blocked_until < :now"),
        named! { day_ago: now - 24 * 3600 * 1_000_000, now },
    )
    .await?;
    Ok(Admission::Admitted)
}

/// A sign-in succeeded: the account's name starts afresh, and the attempt counted
/// against the address is taken back.
pub(crate) async fn succeeded(
    tx: &mut impl Tx,
    cleared: &[String],
    eased: Option<&str>,
) -> Result<()> {
    for key in cleared {
        tx.exec(
            sql!("DELETE FROM login_throttle WHERE key = :key"),
            named! { key },
        )
        .await?;
    }
    if let Some(key) = eased {
        tx.exec(
            sql!(
                "UPDATE login_throttle SET failures = failures - 1 WHERE key = :key AND failures > 0"
            ),
            named! { key },
        )
        .await?;
    }
    Ok(())
}

/// Remembers a browser that `user` signed in from (its cookie's hash), keeping the
/// newest [`DEVICES_PER_USER`] of theirs.
pub(crate) async fn trust_device(tx: &mut impl Tx, user: i64, id_hash: &str) -> Result<()> {
    let now = now_micros();
    tx.exec(
        sql!(
            "INSERT INTO trusted_devices (id_hash, user_id, created_at) VALUES (:id_hash, :user, :now)
             ON CONFLICT (id_hash) DO NOTHING"
        ),
        named! { id_hash, user, now },
    )
    .await?;
    tx.exec(
        sql!(
            "DELETE FROM trusted_devices WHERE user_id = :user AND id_hash NOT IN (
                 SELECT id_hash FROM trusted_devices WHERE user_id = :user
                 ORDER BY created_at DESC, id_hash LIMIT :keep)"
        ),
        named! { user, keep: DEVICES_PER_USER },
    )
    .await?;
    Ok(())
}

/// The browsers one person is remembered on at most.
pub const DEVICES_PER_USER: i64 = 20;
