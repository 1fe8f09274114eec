//! Accounts, the validator pool of each campaign, and API tokens.

use super::{Conn, Store, catalog, col, conn};
use crate::auth;
use crate::clock::now_micros;
use crate::domain::{Role, check_identifier};
use crate::error::{Error, Result};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub role: Role,
}

fn user_of(row: &sqlx::any::AnyRow) -> Result<User> {
    let role: String = col(row, "role")?;
    Ok(User {
        id: col(row, "id")?,
        name: col(row, "name")?,
        role: Role::parse(&role).map_err(Error::Internal)?,
    })
}

/// An account as the accounts page lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Account {
    #[serde(flatten)]
    pub user: User,
    pub disabled: bool,
}

/// What `add_user` needs to place a validator in a campaign's pool.
#[derive(Debug, Clone)]
pub struct PoolPlacement {
    pub campaign: String,
    pub index: i64,
}

pub(crate) async fn user_by_name_in(c: &mut Conn, name: &str) -> Result<Option<User>> {
    let row = sqlx::query("SELECT id, name, role FROM users WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut *c)
        .await?;
    row.as_ref().map(user_of).transpose()
}

pub(crate) async fn user_by_id_in(c: &mut Conn, id: i64) -> Result<Option<User>> {
    let row = sqlx::query("SELECT id, name, role FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?;
    row.as_ref().map(user_of).transpose()
}

async fn add_to_pool_in(c: &mut Conn, user: &User, placement: &PoolPlacement) -> Result<()> {
    if placement.index < 0 {
        return Err(Error::field("index", "a pool index is 0 or more"));
    }
    let campaign = catalog::ensure_campaign_in(c, &placement.campaign).await?;
    let taken = sqlx::query(
        "SELECT u.name FROM pool_members p JOIN users u ON u.id = p.user_id
         WHERE p.campaign_id = $1 AND (p.pool_index = $2 OR p.user_id = $3)",
    )
    .bind(campaign.id)
    .bind(placement.index)
    .bind(user.id)
    .fetch_optional(&mut *c)
    .await?;
    if let Some(row) = taken {
        let holder: String = col(&row, "name")?;
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
    sqlx::query("INSERT INTO pool_members (campaign_id, user_id, pool_index) VALUES ($1, $2, $3)")
        .bind(campaign.id)
        .bind(user.id)
        .bind(placement.index)
        .execute(&mut *c)
        .await?;
    catalog::refresh_pairs_in(c, campaign.id).await
}

impl Store {
    /// Creates an account. A validator must be placed in a campaign's pool with an
    /// index; other roles take no index.
    pub async fn add_user(
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
        let mut tx = self.begin_write().await?;
        if user_by_name_in(&mut tx, name).await?.is_some() {
            return Err(Error::Conflict(format!(
                "a user named `{name}` already exists"
            )));
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO users (name, role, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
        )
        .bind(name)
        .bind(role.as_str())
        .bind(password_hash)
        .bind(now_micros())
        .fetch_one(&mut *tx)
        .await?;
        let user = User {
            id,
            name: name.to_string(),
            role,
        };
        if let Some(p) = &placement {
            add_to_pool_in(&mut tx, &user, p).await?;
        }
        tx.commit().await?;
        Ok(user)
    }

    /// Puts an existing validator in (another) campaign's pool.
    pub async fn add_to_pool(&self, name: &str, placement: PoolPlacement) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let user = user_by_name_in(&mut tx, name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
        if user.role != Role::Validator {
            return Err(Error::Invalid(format!(
                "{name} is a {}; only validators join a pool",
                user.role
            )));
        }
        add_to_pool_in(&mut tx, &user, &placement).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn user_by_name(&self, name: &str) -> Result<Option<User>> {
        user_by_name_in(&mut *conn(self).await?, name).await
    }

    /// The account, its password hash and whether it is disabled, for signing in.
    pub async fn credentials(&self, name: &str) -> Result<Option<(User, String, bool)>> {
        let row = sqlx::query(
            "SELECT id, name, role, password_hash, disabled_at FROM users WHERE name = $1",
        )
        .bind(name)
        .fetch_optional(self.pool())
        .await?;
        match row {
            Some(r) => Ok(Some((
                user_of(&r)?,
                col(&r, "password_hash")?,
                col::<Option<i64>>(&r, "disabled_at")?.is_some(),
            ))),
            None => Ok(None),
        }
    }

    /// Every account with whether it is disabled, by name.
    pub async fn accounts(&self) -> Result<Vec<Account>> {
        let rows = sqlx::query("SELECT id, name, role, disabled_at FROM users ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Account {
                    user: user_of(r)?,
                    disabled: col::<Option<i64>>(r, "disabled_at")?.is_some(),
                })
            })
            .collect()
    }

    /// Disables an account (its sessions end and its tokens are revoked at once; it
    /// keeps its place in every pool, so nothing is re-paired) or enables it again
    /// (it signs in anew and needs new tokens). Returns false when nothing changed.
    pub async fn set_disabled(&self, name: &str, disabled: bool) -> Result<bool> {
        let now = now_micros();
        let mut tx = self.begin_write().await?;
        let row = sqlx::query("SELECT id, name, role, disabled_at FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
        let user = user_of(&row)?;
        let was = col::<Option<i64>>(&row, "disabled_at")?.is_some();
        if was == disabled {
            return Ok(false);
        }
        if disabled {
            if user.role == Role::Admin {
                let others: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id <> $1",
                )
                .bind(user.id)
                .fetch_one(&mut *tx)
                .await?;
                if others == 0 {
                    return Err(Error::Conflict(format!(
                        "{name} is the last admin who can sign in; enable or create another admin first"
                    )));
                }
            }
            sqlx::query("UPDATE users SET disabled_at = $1 WHERE id = $2")
                .bind(now)
                .bind(user.id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(user.id)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
            )
            .bind(now)
            .bind(user.id)
            .execute(&mut *tx)
            .await?;
        } else {
            sqlx::query("UPDATE users SET disabled_at = NULL WHERE id = $1")
                .bind(user.id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    pub async fn users(&self) -> Result<Vec<User>> {
        let rows = sqlx::query("SELECT id, name, role FROM users ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(user_of).collect()
    }

    /// Issues an API token for a user; the token is returned once and only its digest kept.
    pub async fn create_token(&self, name: &str, label: &str) -> Result<String> {
        let (token, digest) = auth::generate_token()?;
        let mut tx = self.begin_write().await?;
        let user = user_by_name_in(&mut tx, name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
        let disabled: Option<i64> =
            sqlx::query_scalar("SELECT disabled_at FROM users WHERE id = $1")
                .bind(user.id)
                .fetch_one(&mut *tx)
                .await?;
        if disabled.is_some() {
            return Err(Error::Conflict(format!(
                "{name} is disabled; enable the account before issuing a token"
            )));
        }
        sqlx::query(
            "INSERT INTO api_tokens (user_id, token_hash, label, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(user.id)
        .bind(&digest)
        .bind(label)
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(token)
    }

    /// Revokes every API token of a user; returns how many were live.
    pub async fn revoke_tokens(&self, name: &str) -> Result<u64> {
        let mut tx = self.begin_write().await?;
        let user = user_by_name_in(&mut tx, name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
        let done = sqlx::query(
            "UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
        )
        .bind(now_micros())
        .bind(user.id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }

    /// The user an API token belongs to, if the token is known and not revoked.
    pub async fn user_by_token(&self, token: &str) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT u.id, u.name, u.role FROM api_tokens t JOIN users u ON u.id = t.user_id
             WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL",
        )
        .bind(auth::token_digest(token))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(user_of).transpose()
    }
}

/// A validator's place in a campaign's pool.
#[derive(Debug, Clone, Serialize)]
pub struct PoolEntry {
    pub campaign: String,
    pub user: String,
    pub index: i64,
}

impl Store {
    /// Every pool membership, by campaign and index.
    pub async fn pool_entries(&self) -> Result<Vec<PoolEntry>> {
        let rows = sqlx::query(
            "SELECT c.name AS campaign, u.name AS user_name, p.pool_index
             FROM pool_members p JOIN campaigns c ON c.id = p.campaign_id JOIN users u ON u.id = p.user_id
             ORDER BY c.name, p.pool_index",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(PoolEntry {
                    campaign: col(r, "campaign")?,
                    user: col(r, "user_name")?,
                    index: col(r, "pool_index")?,
                })
            })
            .collect()
    }
}
