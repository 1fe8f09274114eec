// Browser sessions, sign-in throttling, and who may see a clip. (Shared SQL: compiled
// once per backend, see store/mod.rs.)

use crate::auth;
use crate::clock::now_micros;
use crate::domain::Role;
use crate::error::Result;
use crate::store::Lock;
use crate::store::accounts::{User, UserRow};
use crate::store::sessions::{
    ABSOLUTE_MICROS, Admission, GrantedMedia, IDLE_MICROS, Session, THROTTLE_WINDOW_MICROS,
    TOUCH_MICROS, delay_micros, retry_after_secs,
};

impl Backend {
    pub(crate) async fn create_session(&self, user: &User) -> Result<String> {
        let id = auth::random_id(32)?;
        let csrf = auth::random_id(32)?;
        let id_hash = auth::sha256_hex(id.as_bytes());
        let user_id = user.id;
        self.write(Lock::Rows, move |c| {
            let (id_hash, csrf) = (id_hash.clone(), csrf.clone());
            Box::pin(async move {
                let now = now_micros();
                // Old sessions of this account that have run out are cleared on the way.
                q("DELETE FROM sessions WHERE user_id = $1 AND (last_seen_at < $2 OR created_at < $3)")
                    .bind(user_id)
                    .bind(now - IDLE_MICROS)
                    .bind(now - ABSOLUTE_MICROS)
                    .execute(&mut *c)
                    .await?;
                q("INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)")
                    .bind(&id_hash)
                    .bind(user_id)
                    .bind(&csrf)
                    .bind(now)
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await?;
        Ok(id)
    }

    pub(crate) async fn session(&self, cookie_id: &str) -> Result<Option<Session>> {
        let id_hash = auth::sha256_hex(cookie_id.as_bytes());
        #[derive(sqlx::FromRow)]
        struct Row {
            csrf_token: String,
            created_at: i64,
            last_seen_at: i64,
            #[sqlx(flatten)]
            user: UserRow,
        }
        let row = qa::<Row>(
            "SELECT s.csrf_token, s.created_at, s.last_seen_at, u.id, u.name, u.role
             FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.id_hash = $1 AND u.disabled_at IS NULL",
        )
        .bind(&id_hash)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let now = now_micros();
        if row.last_seen_at < now - IDLE_MICROS || row.created_at < now - ABSOLUTE_MICROS {
            return Ok(None);
        }
        if now - row.last_seen_at > TOUCH_MICROS {
            let key = id_hash.clone();
            self.write(Lock::Rows, move |c| {
                let key = key.clone();
                Box::pin(async move {
                    q("UPDATE sessions SET last_seen_at = $1 WHERE id_hash = $2")
                        .bind(now)
                        .bind(&key)
                        .execute(&mut *c)
                        .await?;
                    Ok(())
                })
            })
            .await?;
        }
        Ok(Some(Session {
            user: User::try_from(row.user)?,
            csrf_token: row.csrf_token,
            id_hash,
        }))
    }

    pub(crate) async fn end_session(&self, session: &Session) -> Result<()> {
        let key = session.id_hash.clone();
        self.write(Lock::Rows, move |c| {
            let key = key.clone();
            Box::pin(async move {
                q("DELETE FROM sessions WHERE id_hash = $1")
                    .bind(&key)
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await
    }

    pub(crate) async fn admit_login(&self, keys: &[(String, i64)]) -> Result<Admission> {
        let keys = keys.to_vec();
        self.write(Lock::Rows, move |c| {
            let keys = keys.clone();
            Box::pin(async move {
                let now = now_micros();
                let mut rows = Vec::with_capacity(keys.len());
                let mut wait_until = 0i64;
                for (key, allowed) in &keys {
                    // The row exists (and, on PostgreSQL, is locked) before it is read:
                    // parallel attempts on one key count one after another.
                    q("INSERT INTO login_throttle (key, failures, window_start, blocked_until)
                       VALUES ($1, 0, $2, 0) ON CONFLICT (key) DO NOTHING")
                    .bind(key)
                    .bind(now)
                    .execute(&mut *c)
                    .await?;
                    let (failures, window_start, blocked_until): (i64, i64, i64) = qa(concat!(
                        "SELECT t.failures, t.window_start, t.blocked_until FROM login_throttle t WHERE t.key = $1",
                        for_update!("t")
                    ))
                    .bind(key)
                    .fetch_one(&mut *c)
                    .await?;
                    let (failures, window_start) = if window_start >= now - THROTTLE_WINDOW_MICROS {
                        (failures, window_start)
                    } else {
                        (0, now)
                    };
                    wait_until = wait_until.max(blocked_until);
                    rows.push((key.clone(), *allowed, failures, window_start, blocked_until));
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
                    q("UPDATE login_throttle SET failures = $2, window_start = $3, blocked_until = $4 WHERE key = $1")
                        .bind(&key)
                        .bind(failures)
                        .bind(window_start)
                        .bind(blocked_until)
                        .execute(&mut *c)
                        .await?;
                }
                // Keep the table small: keys quiet for a day are forgotten.
                q("DELETE FROM login_throttle WHERE window_start < $1 AND blocked_until < $2")
                    .bind(now - 24 * 3600 * 1_000_000)
                    .bind(now)
                    .execute(&mut *c)
                    .await?;
                Ok(Admission::Admitted)
            })
        })
        .await
    }

    pub(crate) async fn login_succeeded(&self, name_key: &str, addr_key: Option<&str>) -> Result<()> {
        let (name_key, addr_key) = (name_key.to_string(), addr_key.map(str::to_string));
        self.write(Lock::Rows, move |c| {
            let (name_key, addr_key) = (name_key.clone(), addr_key.clone());
            Box::pin(async move {
                q("DELETE FROM login_throttle WHERE key = $1")
                    .bind(&name_key)
                    .execute(&mut *c)
                    .await?;
                if let Some(k) = &addr_key {
                    q("UPDATE login_throttle SET failures = failures - 1 WHERE key = $1 AND failures > 0")
                        .bind(k)
                        .execute(&mut *c)
                        .await?;
                }
                Ok(())
            })
        })
        .await
    }

    /// The file of a clip version.
    pub(crate) async fn media_of_version(&self, version: i64) -> Result<Option<GrantedMedia>> {
        let row: Option<(String, String, i64)> = qa(
            "SELECT media_sha256, media_type, media_size FROM clip_versions WHERE id = $1",
        )
        .bind(version)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        Ok(row.map(|(sha256, media_type, size)| GrantedMedia {
            user_id: 0,
            clip_version_id: version,
            sha256,
            media_type,
            size,
        }))
    }

    /// Authors: the clip has a split (in either stage). Validators: one of its items is
    /// in their queue, or it is a calibration clip of their pool.
    pub(crate) async fn may_see_clip(&self, user: &User, clip_version_id: i64) -> Result<bool> {
        let sql = match user.role {
            Role::Admin => return Ok(true),
            Role::Participant => return Ok(false),
            Role::Author => {
                "SELECT COUNT(*) FROM items WHERE clip_version_id = $1 AND $2 > 0
                 AND outcome IN ('split', 'split_accepted', 'split_rejected')"
            }
            Role::Validator => {
                "SELECT COUNT(*) FROM items i
                 WHERE i.clip_version_id = $1
                   AND (i.queue1 = $2 OR i.queue2 = $2
                        OR (i.calibration = 1 AND i.is_current = 1 AND EXISTS (
                            SELECT 1 FROM pool_members m WHERE m.campaign_id = i.campaign_id AND m.user_id = $2)))"
            }
        };
        let n: i64 = qs(sql)
            .bind(clip_version_id)
            .bind(user.id)
            .fetch_one(&mut *self.read().await?)
            .await?;
        Ok(n > 0)
    }
}
