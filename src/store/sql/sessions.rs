// Browser sessions, sign-in throttling, and who may see a clip. (Shared SQL: compiled
// once per backend, see store/mod.rs.)

use crate::auth;
use crate::clock::now_micros;
use crate::error::Result;
use crate::store::Lock;
use crate::store::write;
use crate::store::accounts::{User, UserRow, one_user, user_columns, user_joins};
use crate::store::sessions::{
    ABSOLUTE_MICROS, Admission, GrantedMedia, IDLE_MICROS, Session,
    TOUCH_MICROS,
};

impl Backend {
    pub(crate) async fn create_session(&self, user: &User) -> Result<String> {
        let id = auth::random_id(32)?;
        let csrf = auth::random_id(32)?;
        let id_hash = auth::sha256_hex(id.as_bytes());
        let user_id = user.id;
        self.write_tx(Lock::Rows, move |tx| {
            let (id_hash, csrf) = (id_hash.clone(), csrf.clone());
            Box::pin(async move { write::sessions::create(tx, user_id, &id_hash, &csrf).await })
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
        let rows = qa::<Row>(concat!(
            "SELECT s.csrf_token, s.created_at, s.last_seen_at, ",
            user_columns!(),
            " FROM sessions s JOIN users u ON u.id = s.user_id ",
            user_joins!(),
            " WHERE s.id_hash = $1 AND u.disabled_at IS NULL"
        ))
        .bind(&id_hash)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let (csrf_token, created_at, last_seen_at) =
            (first.csrf_token.clone(), first.created_at, first.last_seen_at);
        let now = now_micros();
        if last_seen_at < now - IDLE_MICROS || created_at < now - ABSOLUTE_MICROS {
            return Ok(None);
        }
        if now - last_seen_at > TOUCH_MICROS {
            let key = id_hash.clone();
            self.write_tx(Lock::Rows, move |tx| {
                let key = key.clone();
                Box::pin(async move { write::sessions::touch(tx, &key, now).await })
            })
            .await?;
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

    pub(crate) async fn end_session(&self, session: &Session) -> Result<()> {
        let key = session.id_hash.clone();
        self.write_tx(Lock::Rows, move |tx| {
            let key = key.clone();
            Box::pin(async move { write::sessions::end(tx, &key).await })
        })
        .await
    }

    pub(crate) async fn admit_login(&self, keys: &[(String, i64)]) -> Result<Admission> {
        let keys = keys.to_vec();
        self.write_tx(Lock::Rows, move |tx| {
            let keys = keys.clone();
            Box::pin(async move { write::sessions::admit(tx, &keys).await })
        })
        .await
    }

    pub(crate) async fn login_succeeded(&self, cleared: &[String], eased: Option<&str>) -> Result<()> {
        let (cleared, eased) = (cleared.to_vec(), eased.map(str::to_string));
        self.write_tx(Lock::Rows, move |tx| {
            let (cleared, eased) = (cleared.clone(), eased.clone());
            Box::pin(async move {
                write::sessions::succeeded(tx, &cleared, eased.as_deref()).await
            })
        })
        .await
    }

    /// The name of the account a remembered browser (its cookie's hash) signed in as.
    pub(crate) async fn device_owner(&self, id_hash: &str) -> Result<Option<String>> {
        Ok(qs(
            "SELECT u.name FROM trusted_devices d JOIN users u ON u.id = d.user_id
             WHERE d.id_hash = $1 AND u.disabled_at IS NULL",
        )
        .bind(id_hash)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn trust_device(&self, user: &User, id_hash: &str) -> Result<()> {
        let (user, id_hash) = (user.id, id_hash.to_string());
        self.write_tx(Lock::Rows, move |tx| {
            let id_hash = id_hash.clone();
            Box::pin(async move { write::sessions::trust_device(tx, user, &id_hash).await })
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

    /// Authors of the clip's campaign: the clip has a split (in either stage). Validators:
    /// one of its items is in their queue, or it is a calibration clip of their pool.
    pub(crate) async fn may_see_clip(&self, user: &User, clip_version_id: i64) -> Result<bool> {
        if user.admin {
            return Ok(true);
        }
        let n: i64 = qs(
            "SELECT COUNT(*) FROM items i
             WHERE i.clip_version_id = $1
               AND (i.queue1 = $2 OR i.queue2 = $2
                    OR (i.calibration = 1 AND i.is_current = 1 AND EXISTS (
                        SELECT 1 FROM pool_members m WHERE m.campaign_id = i.campaign_id AND m.user_id = $2))
                    OR (i.outcome IN ('split', 'split_accepted', 'split_rejected') AND EXISTS (
                        SELECT 1 FROM campaign_members a
                        WHERE a.campaign_id = i.campaign_id AND a.user_id = $2 AND a.role = 'author')))",
        )
        .bind(clip_version_id)
        .bind(user.id)
        .fetch_one(&mut *self.read().await?)
        .await?;
        Ok(n > 0)
    }
}
