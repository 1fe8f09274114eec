//! Accounts, the validator pool of each campaign, and API tokens.

use super::{base, gates};
use crate::auth;
use crate::clock::now_micros;
use crate::domain::{Role, check_identifier};
use crate::error::{Error, Result};
use crate::store::accounts::{
    Account, PoolEntry, PoolPlacement, User, UserRow, fold_users, one_user, user_columns,
    user_joins,
};
use crate::store::db::{FromRow, Row, Tx, named, row, sql};
use crate::store::{Lock, Store};

impl Store {
    /// Creates an account: an admin (no campaign), or a member with `role` in
    /// `campaign` (made if new, as an import makes it). A validator is placed in the
    /// campaign's pool at `index`; other roles take no index.
    pub async fn add_user(
        &self,
        name: &str,
        role: Role,
        password_hash: &str,
        campaign: Option<String>,
        index: Option<i64>,
    ) -> Result<User> {
        check_identifier("user name", name).map_err(|m| Error::field("name", m))?;
        // Placing a validator changes the campaign's pairs: a structural write.
        let lock = if index.is_some() {
            Lock::Structure
        } else {
            Lock::Rows
        };
        write_tx!(self, lock, (name, password_hash, campaign), |tx| {
            add_user(tx, name, role, password_hash, campaign.as_deref(), index).await
        })
    }

    /// Gives an account an author's or participant's role in a campaign, or takes its
    /// role there away (`None`; a validator's pool place is kept). Every server sees the
    /// change at its next request (the revocation stamp).
    pub async fn set_role(&self, name: &str, campaign: &str, role: Option<Role>) -> Result<()> {
        write_tx!(self, Lock::Rows, (name, campaign), |tx| {
            set_role(tx, name, campaign, role).await
        })
    }

    /// Puts an existing account in (another) campaign's validator pool: the validator's
    /// role there (every server sees it at its next request: the revocation stamp).
    pub async fn add_to_pool(&self, name: &str, placement: PoolPlacement) -> Result<()> {
        write_tx!(self, Lock::Structure, (name, placement), |tx| {
            add_to_pool(tx, name, placement).await
        })
    }

    pub async fn user_by_name(&self, name: &str) -> Result<Option<User>> {
        read_tx!(self, |c| base::user_by_name(c, name).await)
    }

    /// The account, its password hash and whether it is disabled, for signing in.
    pub async fn credentials(&self, name: &str) -> Result<Option<(User, String, bool)>> {
        struct Found {
            user: UserRow,
            password_hash: String,
            disabled_at: Option<i64>,
        }
        impl FromRow for Found {
            fn from_row(r: &impl Row) -> Result<Self> {
                Ok(Found {
                    user: UserRow::from_row(r)?,
                    password_hash: r.get("password_hash")?,
                    disabled_at: r.get("disabled_at")?,
                })
            }
        }
        const CREDENTIALS: &str = concat!(
            "SELECT ",
            user_columns!(),
            ", u.password_hash, u.disabled_at FROM users u ",
            user_joins!(),
            " WHERE u.name = :name"
        );
        let rows: Vec<Found> =
            read_tx!(self, |c| c.fetch(sql!(CREDENTIALS), named! { name }).await)?;
        let Some((hash, disabled)) = rows
            .first()
            .map(|r| (r.password_hash.clone(), r.disabled_at.is_some()))
        else {
            return Ok(None);
        };
        Ok(one_user(rows.into_iter().map(|r| r.user))?.map(|u| (u, hash, disabled)))
    }

    /// Every account with whether it is disabled, by name.
    pub async fn accounts(&self) -> Result<Vec<Account>> {
        struct Found {
            user: UserRow,
            disabled_at: Option<i64>,
        }
        impl FromRow for Found {
            fn from_row(r: &impl Row) -> Result<Self> {
                Ok(Found {
                    user: UserRow::from_row(r)?,
                    disabled_at: r.get("disabled_at")?,
                })
            }
        }
        const ACCOUNTS: &str = concat!(
            "SELECT ",
            user_columns!(),
            ", u.disabled_at FROM users u ",
            user_joins!(),
            " ORDER BY u.name, mc.name"
        );
        let rows: Vec<Found> = read_tx!(self, long, |c| c.fetch(sql!(ACCOUNTS), &[]).await)?;
        let disabled: std::collections::HashSet<i64> = rows
            .iter()
            .filter(|r| r.disabled_at.is_some())
            .map(|r| r.user.id)
            .collect();
        Ok(fold_users(rows.into_iter().map(|r| r.user))?
            .into_iter()
            .map(|user| Account {
                disabled: disabled.contains(&user.id),
                user,
            })
            .collect())
    }

    /// Disables an account (its sessions end and its tokens are revoked at once; it
    /// keeps its place in every pool, so nothing is re-paired) or enables it again
    /// (it signs in anew and needs new tokens). Returns false when nothing changed.
    pub async fn set_disabled(&self, name: &str, disabled: bool) -> Result<bool> {
        write_tx!(self, Lock::Rows, (name), |tx| {
            set_disabled(tx, name, disabled).await
        })
    }

    pub async fn users(&self) -> Result<Vec<User>> {
        const USERS: &str = concat!(
            "SELECT ",
            user_columns!(),
            " FROM users u ",
            user_joins!(),
            " ORDER BY u.name, mc.name"
        );
        fold_users(read_tx!(self, long, |c| c
            .fetch::<UserRow>(sql!(USERS), &[])
            .await)?)
    }

    /// Issues an API token for a user; the token is returned once and only its digest kept.
    pub async fn create_token(&self, name: &str, label: &str) -> Result<String> {
        let (token, digest) = auth::generate_token()?;
        write_tx!(self, Lock::Rows, (name, label, digest), |tx| {
            create_token(tx, name, label, digest).await
        })?;
        Ok(token)
    }

    /// Revokes every API token of a user; returns how many were live.
    pub async fn revoke_tokens(&self, name: &str) -> Result<u64> {
        write_tx!(self, Lock::Rows, (name), |tx| revoke_tokens(tx, name).await)
    }

    /// The revocation stamp (migration 0023): one row read by its key.
    pub(crate) async fn revocation_stamp(&self) -> Result<i64> {
        read_tx!(self, |c| {
            c.scalar(sql!("SELECT stamp FROM revocation_stamp WHERE id = 1"), &[])
                .await
        })
    }

    /// The user behind a live API token's digest, if its account is not disabled.
    pub(crate) async fn user_by_token_digest(&self, digest: &str) -> Result<Option<User>> {
        const BY_TOKEN: &str = concat!(
            "SELECT ",
            user_columns!(),
            " FROM api_tokens t JOIN users u ON u.id = t.user_id ",
            user_joins!(),
            " WHERE t.token_hash = :digest AND t.revoked_at IS NULL AND u.disabled_at IS NULL"
        );
        one_user(read_tx!(self, |c| {
            c.fetch::<UserRow>(sql!(BY_TOKEN), named! { digest }).await
        })?)
    }

    /// Every pool membership, by campaign and index.
    pub async fn pool_entries(&self) -> Result<Vec<PoolEntry>> {
        read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT c.name AS campaign, u.name AS \"user\", p.pool_index AS \"index\"
                     FROM pool_members p JOIN campaigns c ON c.id = p.campaign_id
                     JOIN users u ON u.id = p.user_id
                     ORDER BY c.name, p.pool_index"
                ),
                &[],
            )
            .await
        })
    }
}

/// Creates an account (its name checked by the caller): an admin, or a member with a
/// role in one campaign (a validator placed in its pool).
pub(crate) async fn add_user(
    tx: &mut impl Tx,
    name: &str,
    role: Role,
    password_hash: &str,
    campaign: Option<&str>,
    index: Option<i64>,
) -> Result<User> {
    // What the account is checked before anything is written.
    match (role, campaign, index) {
        (Role::Admin, None, None) => {}
        (Role::Admin, Some(_), _) => {
            return Err(Error::field(
                "campaign",
                "an admin is server-wide and takes no campaign",
            ));
        }
        (Role::Validator, _, None) => {
            return Err(Error::field(
                "index",
                "a validator needs a pool index (--index N): task t is reviewed by indexes t mod n and (t+1) mod n",
            ));
        }
        (Role::Validator, Some(_), Some(_)) => {}
        (r, _, Some(_)) => {
            return Err(Error::field(
                "index",
                format!(
                    "only validators have a pool index, not {}",
                    r.with_article()
                ),
            ));
        }
        (r, None, _) => {
            return Err(Error::field(
                "campaign",
                format!("{} works in a campaign: name it", r.with_article()),
            ));
        }
        (_, Some(_), None) => {}
    }
    if base::user_by_name(tx, name).await?.is_some() {
        return Err(Error::Conflict(format!(
            "a user named `{name}` already exists"
        )));
    }
    let admin = role == Role::Admin;
    let id: i64 = tx
        .scalar(
            sql!(
                "INSERT INTO users (name, is_admin, password_hash, created_at)
                 VALUES (:name, :admin, :hash, :now) RETURNING id"
            ),
            named! { name, admin: i64::from(admin), hash: password_hash, now: now_micros() },
        )
        .await?;
    let user = User {
        id,
        name: name.to_string(),
        admin,
        roles: Vec::new(),
    };
    match (campaign, index) {
        (Some(campaign), Some(index)) => {
            let placement = PoolPlacement {
                campaign: campaign.to_string(),
                index,
            };
            add_to_pool_of(tx, &user, &placement).await?;
        }
        (Some(campaign), None) => {
            let campaign = base::existing_campaign(tx, campaign).await?;
            grant(tx, &user, campaign.id, role).await?;
        }
        _ => {}
    }
    Ok(base::user_by_id(tx, id).await?.unwrap_or(user))
}

/// Raises the revocation stamp (see migration 0023): every write that takes access away
/// or changes what an account may do calls it in its own transaction, so that no server
/// trusts a copy of a session or a token's owner read before it.
pub(crate) async fn access_changed(tx: &mut impl Tx) -> Result<()> {
    let stamp: i64 = tx
        .scalar(
            sql!("UPDATE revocation_stamp SET stamp = stamp + 1 WHERE id = 1 RETURNING stamp"),
            named! {},
        )
        .await?;
    crate::store::stamp::raised(stamp);
    Ok(())
}

/// Records a person's role in a campaign: the one place a role is given, refused when
/// they hold another role there (one role per person and campaign).
async fn grant(tx: &mut impl Tx, user: &User, campaign_id: i64, role: Role) -> Result<()> {
    if user.admin {
        return Err(Error::Conflict(format!(
            "{} is an admin: admins are server-wide and hold no campaign role",
            user.name
        )));
    }
    if role == Role::Admin {
        return Err(Error::field(
            "role",
            "admin is not a campaign role (create an admin account instead)",
        ));
    }
    let held: Option<String> = tx
        .scalar_opt(
            sql!(
                "SELECT role FROM campaign_members WHERE campaign_id = :campaign AND user_id = :user"
            ),
            named! { campaign: campaign_id, user: user.id },
        )
        .await?;
    match held {
        Some(held) if held == role.as_str() => Ok(()),
        Some(held) => Err(Error::Conflict(format!(
            "{} is {} of this campaign; a person holds one role per campaign",
            user.name,
            Role::parse(&held).map_err(Error::Internal)?.with_article()
        ))),
        None => {
            tx.exec(
                sql!(
                    "INSERT INTO campaign_members (campaign_id, user_id, role)
                     VALUES (:campaign, :user, :role)"
                ),
                named! { campaign: campaign_id, user: user.id, role: role.as_str() },
            )
            .await?;
            Ok(())
        }
    }
}

/// Gives an existing account an author's or participant's role in a campaign, or takes
/// its role there away (`None`). A validator's role is their place in the pool: it is
/// given by placing them (`add_to_pool`) and never taken away (their verdicts pair them
/// with a partner; disable the account instead).
pub(crate) async fn set_role(
    tx: &mut impl Tx,
    name: &str,
    campaign: &str,
    role: Option<Role>,
) -> Result<()> {
    if role == Some(Role::Admin) {
        return Err(Error::field(
            "role",
            "admin is not a campaign role (admins are server-wide: create an admin account)",
        ));
    }
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    let campaign = base::existing_campaign(tx, campaign).await?;
    access_changed(tx).await?;
    let held = user.role_in(campaign.id);
    if held == Some(Role::Validator) && role != Some(Role::Validator) {
        return Err(Error::Conflict(format!(
            "{name} is in the validator pool of campaign `{}`: a pool place is kept (disable the account instead)",
            campaign.name
        )));
    }
    if let Some(group @ (Role::Participant | Role::Baseline)) = held
        && role != held
    {
        let answers: i64 = match group {
            Role::Participant => {
                tx.scalar(
                    sql!(
                        "SELECT COUNT(*) FROM study_responses r JOIN studies s ON s.id = r.study_id
                         WHERE s.campaign_id = :campaign AND r.participant_id = :user"
                    ),
                    named! { campaign: campaign.id, user: user.id },
                )
                .await?
            }
            _ => {
                tx.scalar(
                    sql!(
                        "SELECT COUNT(*) FROM baseline_answers
                         WHERE campaign_id = :campaign AND participant_id = :user"
                    ),
                    named! { campaign: campaign.id, user: user.id },
                )
                .await?
            }
        };
        if answers > 0 {
            return Err(Error::Conflict(format!(
                "{name} is {} of campaign `{}` with {answers} answer(s) there: the role stays, so that their answers stay in the group they were given in",
                group.with_article(),
                campaign.name
            )));
        }
    }
    match role {
        Some(Role::Validator) if held != Some(Role::Validator) => Err(Error::field(
            "role",
            "a validator joins a campaign through its pool, with a pool index (tandem pool add)",
        )),
        Some(Role::Validator) => Ok(()),
        Some(r) => {
            if let Some(old) = held.filter(|h| *h != r && !user.admin) {
                tx.exec(
                    sql!(
                        "UPDATE campaign_members SET role = :role
                         WHERE campaign_id = :campaign AND user_id = :user AND role = :old"
                    ),
                    named! { role: r.as_str(), campaign: campaign.id, user: user.id, old: old.as_str() },
                )
                .await?;
                return Ok(());
            }
            grant(tx, &user, campaign.id, r).await
        }
        None if user.admin => Err(Error::Conflict(format!(
            "{name} is an admin: admins are server-wide and hold no campaign role"
        ))),
        None => {
            tx.exec(
                sql!(
                    "DELETE FROM campaign_members WHERE campaign_id = :campaign AND user_id = :user"
                ),
                named! { campaign: campaign.id, user: user.id },
            )
            .await?;
            Ok(())
        }
    }
}

/// Puts an existing account in (another) campaign's validator pool: the validator's role
/// in that campaign.
pub(crate) async fn add_to_pool(
    tx: &mut impl Tx,
    name: &str,
    placement: &PoolPlacement,
) -> Result<()> {
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    if user.admin {
        return Err(Error::Invalid(format!(
            "{name} is an admin; only validators join a pool"
        )));
    }
    add_to_pool_of(tx, &user, placement).await
}

async fn add_to_pool_of(tx: &mut impl Tx, user: &User, placement: &PoolPlacement) -> Result<()> {
    if placement.index < 0 {
        return Err(Error::field("index", "a pool index is 0 or more"));
    }
    access_changed(tx).await?;
    let campaign = base::existing_campaign(tx, &placement.campaign).await?;
    if let Some(held) = user.role_in(campaign.id).filter(|r| *r != Role::Validator) {
        return Err(Error::Conflict(format!(
            "{} is {} of campaign `{}`; a person holds one role per campaign",
            user.name,
            held.with_article(),
            campaign.name
        )));
    }
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
    grant(tx, user, campaign.id, Role::Validator).await?;
    gates::refresh_pairs(tx, campaign.id).await
}

row! {
    struct Disabling {
        id: i64,
        is_admin: i64,
        disabled_at: Option<i64>,
    }
}

/// Disables an account (its sessions end and its tokens are revoked in the same write)
/// or enables it; false when nothing changed. The last admin who can sign in stays.
pub(crate) async fn set_disabled(tx: &mut impl Tx, name: &str, disabled: bool) -> Result<bool> {
    let now = now_micros();
    let row: Disabling = tx
        .fetch_opt(
            sql!("SELECT id, is_admin, disabled_at FROM users WHERE name = :name"),
            named! { name },
        )
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    if row.disabled_at.is_some() == disabled {
        return Ok(false);
    }
    access_changed(tx).await?;
    if !disabled {
        tx.exec(
            sql!("UPDATE users SET disabled_at = NULL WHERE id = :user"),
            named! { user: row.id },
        )
        .await?;
        return Ok(true);
    }
    if row.is_admin != 0 {
        let others: i64 = tx
            .scalar(
                sql!(
                    "SELECT COUNT(*) FROM users
                     WHERE is_admin = 1 AND disabled_at IS NULL AND id <> :user"
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
    // Its browsers are forgotten too: enabled again, it signs in as a newcomer would.
    tx.exec(
        sql!("DELETE FROM trusted_devices WHERE user_id = :user"),
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
    access_changed(tx).await?;
    tx.exec(
        sql!(
            "UPDATE api_tokens SET revoked_at = :now WHERE user_id = :user AND revoked_at IS NULL"
        ),
        named! { now: now_micros(), user: user.id },
    )
    .await
}
