//! Browser sessions and sign-in throttling: rows every server reads, so that any
//! server answers any request.

use crate::clock::now_micros;
use crate::error::Result;
use crate::store::db::{Tx, locked, named, sql};
use crate::store::sessions::{
    ABSOLUTE_MICROS, Admission, IDLE_MICROS, THROTTLE_WINDOW_MICROS, delay_micros, retry_after_secs,
};

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
