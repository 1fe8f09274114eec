//! Accounts, the validator pool of each campaign, and API tokens.

use super::{base, gates};
use crate::clock::now_micros;
use crate::domain::Role;
use crate::error::{Error, Result};
use crate::store::accounts::{PoolPlacement, User};
use crate::store::db::{Tx, named, row, sql};

/// Creates an account (its name checked by the caller), and places a validator in its
/// pool.
pub(crate) async fn add_user(
    tx: &mut impl Tx,
    name: &str,
    role: Role,
    password_hash: &str,
    placement: Option<&PoolPlacement>,
) -> Result<User> {
    if base::user_by_name(tx, name).await?.is_some() {
        return Err(Error::Conflict(format!(
            "a user named `{name}` already exists"
        )));
    }
    let id: i64 = tx
        .scalar(
            sql!(
                "INSERT INTO users (name, role, password_hash, created_at)
                 VALUES (:name, :role, :hash, :now) RETURNING id"
            ),
            named! { name, role: role.as_str(), hash: password_hash, now: now_micros() },
        )
        .await?;
    let user = User {
        id,
        name: name.to_string(),
        role,
    };
    if let Some(p) = placement {
        add_to_pool_of(tx, &user, p).await?;
    }
    Ok(user)
}

/// Puts an existing validator in (another) campaign's pool.
pub(crate) async fn add_to_pool(
    tx: &mut impl Tx,
    name: &str,
    placement: &PoolPlacement,
) -> Result<()> {
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    if user.role != Role::Validator {
        return Err(Error::Invalid(format!(
            "{name} is a {}; only validators join a pool",
            user.role
        )));
    }
    add_to_pool_of(tx, &user, placement).await
}

async fn add_to_pool_of(tx: &mut impl Tx, user: &User, placement: &PoolPlacement) -> Result<()> {
    if placement.index < 0 {
        return Err(Error::field("index", "a pool index is 0 or more"));
    }
    let campaign = base::ensure_campaign(tx, &placement.campaign).await?;
    let holder: Option<String> = tx
        .scalar_opt(
            sql!(
                "SELECT u.name FROM pool_members p JOIN users u ON u.id = p.user_id
                 WHERE p.campaign_id = :campaign AND (p.pool_index = :index OR p.user_id = :user)"
            ),
            named! { campaign: campaign.id, index: placement.index, user: user.id },
        )
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
    // A new member's calibration gate is open only in a campaign without calibration
    // items.
    tx.exec(
        sql!(
            "INSERT INTO pool_members (campaign_id, user_id, pool_index, cleared)
             VALUES (:campaign, :user, :index,
                     CASE WHEN EXISTS (SELECT 1 FROM items i JOIN calibration_keys k ON k.item_id = i.id
                                       WHERE i.campaign_id = :campaign AND i.calibration = 1
                                         AND i.is_current = 1)
                          THEN 0 ELSE 1 END)"
        ),
        named! { campaign: campaign.id, user: user.id, index: placement.index },
    )
    .await?;
    gates::refresh_pairs(tx, campaign.id).await
}

row! {
    struct Disabling {
        id: i64,
        role: String,
        disabled_at: Option<i64>,
    }
}

/// Disables an account (its sessions end and its tokens are revoked in the same write)
/// or enables it; false when nothing changed. The last admin who can sign in stays.
pub(crate) async fn set_disabled(tx: &mut impl Tx, name: &str, disabled: bool) -> Result<bool> {
    let now = now_micros();
    let row: Disabling = tx
        .fetch_opt(
            sql!("SELECT id, role, disabled_at FROM users WHERE name = :name"),
            named! { name },
        )
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    if row.disabled_at.is_some() == disabled {
        return Ok(false);
    }
    if !disabled {
        tx.exec(
            sql!("UPDATE users SET disabled_at = NULL WHERE id = :user"),
            named! { user: row.id },
        )
        .await?;
        return Ok(true);
    }
    if row.role == Role::Admin.as_str() {
        let others: i64 = tx
            .scalar(
                sql!(
                    "SELECT COUNT(*) FROM users
                     WHERE role = 'admin' AND disabled_at IS NULL AND id <> :user"
                ),
                named! { user: row.id },
            )
            .await?;
        if others == 0 {
            return Err(Error::Conflict(format!(
                "{name} is the last admin who can sign in; enable or create another admin first"
            )));
        }
    }
    tx.exec(
        sql!("UPDATE users SET disabled_at = :now WHERE id = :user"),
        named! { now, user: row.id },
    )
    .await?;
    tx.exec(
        sql!("DELETE FROM sessions WHERE user_id = :user"),
        named! { user: row.id },
    )
    .await?;
    tx.exec(
        sql!(
            "UPDATE api_tokens SET revoked_at = :now WHERE user_id = :user AND revoked_at IS NULL"
        ),
        named! { now, user: row.id },
    )
    .await?;
    Ok(true)
}

/// Stores a new API token's digest for an account that can sign in.
pub(crate) async fn create_token(
    tx: &mut impl Tx,
    name: &str,
    label: &str,
    digest: &str,
) -> Result<()> {
    let user: (i64, Option<i64>) = tx
        .fetch_opt(
            sql!("SELECT id, disabled_at FROM users WHERE name = :name"),
            named! { name },
        )
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    if user.1.is_some() {
        return Err(Error::Conflict(format!(
            "{name} is disabled; enable the account before issuing a token"
        )));
    }
    tx.exec(
        sql!(
            "INSERT INTO api_tokens (user_id, token_hash, label, created_at)
             VALUES (:user, :digest, :label, :now)"
        ),
        named! { user: user.0, digest, label, now: now_micros() },
    )
    .await?;
    Ok(())
}

/// Revokes every live API token of an account; returns how many.
pub(crate) async fn revoke_tokens(tx: &mut impl Tx, name: &str) -> Result<u64> {
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    tx.exec(
        sql!(
            "UPDATE api_tokens SET revoked_at = :now WHERE user_id = :user AND revoked_at IS NULL"
        ),
        named! { now: now_micros(), user: user.id },
    )
    .await
}
