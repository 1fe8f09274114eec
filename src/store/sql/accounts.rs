// Accounts, the validator pool of each campaign, and API tokens. (Shared SQL: compiled
// once per backend, see store/mod.rs.)

use super::base::{user_by_name_in};
use crate::auth;
use crate::clock::now_micros;
use crate::domain::{Role, check_identifier};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::{Account, PoolEntry, PoolPlacement, User, UserRow};

async fn add_to_pool_in(c: &mut Conn, user: &User, placement: &PoolPlacement) -> Result<()> {
    if placement.index < 0 {
        return Err(Error::field("index", "a pool index is 0 or more"));
    }
    let campaign = super::base::ensure_campaign_in(c, &placement.campaign).await?;
    let holder: Option<String> = qs(
        "SELECT u.name FROM pool_members p JOIN users u ON u.id = p.user_id
         WHERE p.campaign_id = $1 AND (p.pool_index = $2 OR p.user_id = $3)",
    )
    .bind(campaign.id)
    .bind(placement.index)
    .bind(user.id)
    .fetch_optional(&mut *c)
    .await?;
    if let Some(holder) = holder {
        return Err(if holder == user.name {
            Error::Conflict(format!(
                "{} is already in the validator pool of campaign `{}`",
                user.name, campaign.name
            ))
        } else {
            Error::Conflict(format!(
                "pool index {} of campaign `{}` is already held by {holder}",
                placement.index, campaign.name
            ))
        });
    }
    // A new member's calibration gate is open only in a campaign without
    // calibration items.
    q("INSERT INTO pool_members (campaign_id, user_id, pool_index, cleared)
       VALUES ($1, $2, $3, CASE WHEN EXISTS (SELECT 1 FROM items i JOIN calibration_keys k ON k.item_id = i.id
                                           WHERE i.campaign_id = $1 AND i.calibration = 1 AND i.is_current = 1)
                                THEN 0 ELSE 1 END)")
    .bind(campaign.id)
    .bind(user.id)
    .bind(placement.index)
    .execute(&mut *c)
    .await?;
    super::gates::refresh_pairs_in(c, campaign.id).await
}

impl Backend {
    pub(crate) async fn add_user(
        &self,
        name: &str,
        role: Role,
        password_hash: &str,
        placement: Option<PoolPlacement>,
    ) -> Result<User> {
        check_identifier("user name", name).map_err(|m| Error::field("name", m))?;
        match (role, &placement) {
            (Role::Validator, None) => {
                return Err(Error::field(
                    "index",
                    "a validator needs a pool index (--index N): task t is reviewed by indexes t mod n and (t+1) mod n",
                ));
            }
            (r, Some(_)) if r != Role::Validator => {
                return Err(Error::field(
                    "index",
                    format!("only validators have a pool index, not a {r}"),
                ));
            }
            _ => {}
        }
        let (name, hash) = (name.to_string(), password_hash.to_string());
        // Placing a validator changes the campaign's pairs: a structural write.
        let lock = if placement.is_some() {
            Lock::Structure
        } else {
            Lock::Rows
        };
        self.write(lock, move |c| {
            let (name, hash, placement) = (name.clone(), hash.clone(), placement.clone());
            Box::pin(async move {
                if user_by_name_in(c, &name).await?.is_some() {
                    return Err(Error::Conflict(format!(
                        "a user named `{name}` already exists"
                    )));
                }
                let id: i64 = qs(
                    "INSERT INTO users (name, role, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
                )
                .bind(&name)
                .bind(role.as_str())
                .bind(&hash)
                .bind(now_micros())
                .fetch_one(&mut *c)
                .await?;
                let user = User { id, name, role };
                if let Some(p) = &placement {
                    add_to_pool_in(c, &user, p).await?;
                }
                Ok(user)
            })
        })
        .await
    }

    pub(crate) async fn add_to_pool(&self, name: &str, placement: PoolPlacement) -> Result<()> {
        let name = name.to_string();
        self.write(Lock::Structure, move |c| {
            let (name, placement) = (name.clone(), placement.clone());
            Box::pin(async move {
                let user = user_by_name_in(c, &name)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
                if user.role != Role::Validator {
                    return Err(Error::Invalid(format!(
                        "{name} is a {}; only validators join a pool",
                        user.role
                    )));
                }
                add_to_pool_in(c, &user, &placement).await
            })
        })
        .await
    }

    pub(crate) async fn user_by_name(&self, name: &str) -> Result<Option<User>> {
        user_by_name_in(&mut *self.read().await?, name).await
    }

    pub(crate) async fn credentials(&self, name: &str) -> Result<Option<(User, String, bool)>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            id: i64,
            name: String,
            role: String,
            password_hash: String,
            disabled_at: Option<i64>,
        }
        let row = qa::<Row>(
            "SELECT id, name, role, password_hash, disabled_at FROM users WHERE name = $1",
        )
        .bind(name)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.map(|r| {
            let user = User::try_from(UserRow {
                id: r.id,
                name: r.name,
                role: r.role,
            })?;
            Ok((user, r.password_hash, r.disabled_at.is_some()))
        })
        .transpose()
    }

    pub(crate) async fn accounts(&self) -> Result<Vec<Account>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            id: i64,
            name: String,
            role: String,
            disabled_at: Option<i64>,
        }
        qa::<Row>("SELECT id, name, role, disabled_at FROM users ORDER BY name")
            .fetch_all(&mut *self.read().await?)
            .await?
            .into_iter()
            .map(|r| {
                Ok(Account {
                    user: User::try_from(UserRow {
                        id: r.id,
                        name: r.name,
                        role: r.role,
                    })?,
                    disabled: r.disabled_at.is_some(),
                })
            })
            .collect()
    }

    pub(crate) async fn set_disabled(&self, name: &str, disabled: bool) -> Result<bool> {
        let name = name.to_string();
        self.write(Lock::Rows, move |c| {
            let name = name.clone();
            Box::pin(async move {
                let now = now_micros();
                #[derive(sqlx::FromRow)]
                struct Row {
                    id: i64,
                    role: String,
                    disabled_at: Option<i64>,
                }
                let row = qa::<Row>("SELECT id, role, disabled_at FROM users WHERE name = $1")
                    .bind(&name)
                    .fetch_optional(&mut *c)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
                if row.disabled_at.is_some() == disabled {
                    return Ok(false);
                }
                if !disabled {
                    q("UPDATE users SET disabled_at = NULL WHERE id = $1")
                        .bind(row.id)
                        .execute(&mut *c)
                        .await?;
                    return Ok(true);
                }
                if row.role == Role::Admin.as_str() {
                    let others: i64 = qs(
                        "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id <> $1",
                    )
                    .bind(row.id)
                    .fetch_one(&mut *c)
                    .await?;
                    if others == 0 {
                        return Err(Error::Conflict(format!(
                            "{name} is the last admin who can sign in; enable or create another admin first"
                        )));
                    }
                }
                q("UPDATE users SET disabled_at = $1 WHERE id = $2")
                    .bind(now)
                    .bind(row.id)
                    .execute(&mut *c)
                    .await?;
                q("DELETE FROM sessions WHERE user_id = $1")
                    .bind(row.id)
                    .execute(&mut *c)
                    .await?;
                q("UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL")
                    .bind(now)
                    .bind(row.id)
                    .execute(&mut *c)
                    .await?;
                Ok(true)
            })
        })
        .await
    }

    pub(crate) async fn users(&self) -> Result<Vec<User>> {
        qa::<UserRow>("SELECT id, name, role FROM users ORDER BY name")
            .fetch_all(&mut *self.read().await?)
            .await?
            .into_iter()
            .map(User::try_from)
            .collect()
    }

    pub(crate) async fn create_token(&self, name: &str, label: &str) -> Result<String> {
        let (token, digest) = auth::generate_token()?;
        let (name, label) = (name.to_string(), label.to_string());
        self.write(Lock::Rows, move |c| {
            let (name, label, digest) = (name.clone(), label.clone(), digest.clone());
            Box::pin(async move {
                #[derive(sqlx::FromRow)]
                struct Row {
                    id: i64,
                    disabled_at: Option<i64>,
                }
                let user = qa::<Row>("SELECT id, disabled_at FROM users WHERE name = $1")
                    .bind(&name)
                    .fetch_optional(&mut *c)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
                if user.disabled_at.is_some() {
                    return Err(Error::Conflict(format!(
                        "{name} is disabled; enable the account before issuing a token"
                    )));
                }
                q("INSERT INTO api_tokens (user_id, token_hash, label, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(user.id)
                    .bind(&digest)
                    .bind(&label)
                    .bind(now_micros())
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await?;
        Ok(token)
    }

    pub(crate) async fn revoke_tokens(&self, name: &str) -> Result<u64> {
        let name = name.to_string();
        self.write(Lock::Rows, move |c| {
            let name = name.clone();
            Box::pin(async move {
                let user = user_by_name_in(c, &name)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
                let done = q(
                    "UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
                )
                .bind(now_micros())
                .bind(user.id)
                .execute(&mut *c)
                .await?;
                Ok(done.rows_affected())
            })
        })
        .await
    }

    pub(crate) async fn user_by_token_digest(&self, digest: &str) -> Result<Option<User>> {
        qa::<UserRow>(
            "SELECT u.id, u.name, u.role FROM api_tokens t JOIN users u ON u.id = t.user_id
             WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL",
        )
        .bind(digest)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .map(User::try_from)
        .transpose()
    }

    pub(crate) async fn pool_entries(&self) -> Result<Vec<PoolEntry>> {
        Ok(qa::<PoolEntry>(
            "SELECT c.name AS campaign, u.name AS \"user\", p.pool_index AS \"index\"
             FROM pool_members p JOIN campaigns c ON c.id = p.campaign_id JOIN users u ON u.id = p.user_id
             ORDER BY c.name, p.pool_index",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
