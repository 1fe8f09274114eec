//! Accounts as the CLI and the admin's pages both make them: one function each, so that
//! a rule (a password's strength, a generated password shown once, the confirmation
//! that placing a validator asks when it re-pairs tasks) holds on both roads.

use crate::auth;
use crate::domain::Role;
use crate::error::Result;
use crate::store::Store;
use crate::store::accounts::{PoolPlacement, User};
use crate::store::catalog::{PairChange, needs_confirmation};

/// An account to create.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub name: String,
    pub role: Role,
    /// The password as typed (checked for strength); none: one is generated.
    pub password: Option<String>,
    /// The campaign a validator, author or participant works in (none for an admin).
    pub campaign: Option<String>,
    /// A validator's index in the campaign's pool.
    pub index: Option<i64>,
    /// Whether the re-pairing this placement causes was shown and confirmed.
    pub confirmed: bool,
}

/// What creating an account (or placing a validator) did.
#[derive(Debug)]
pub enum Created {
    /// Nothing yet: the placement gives tasks a new pair; ask, then call again with
    /// `confirmed`.
    NeedsConfirmation(Vec<PairChange>),
    /// The account, with the password made for it (shown once; only its hash is kept).
    User {
        user: User,
        generated_password: Option<String>,
    },
}

/// The tasks that would get a new pair if `name` joined the pool at `placement`, when
/// that needs a confirmation (none otherwise).
async fn unconfirmed_changes(
    store: &Store,
    name: &str,
    placement: &PoolPlacement,
) -> Result<Option<Vec<PairChange>>> {
    let changes = store
        .pool_change_preview(&placement.campaign, name, placement.index)
        .await?;
    Ok(needs_confirmation(&changes).then_some(changes))
}

/// Creates an account: the password checked (or generated), hashed with argon2id on the
/// hashing threads, and a validator placed in its pool once any re-pairing is confirmed.
pub async fn create_user(store: &Store, new: NewUser) -> Result<Created> {
    if let (Some(campaign), Some(index)) = (&new.campaign, new.index)
        && new.role == Role::Validator
        && !new.confirmed
        && let Some(changes) = unconfirmed_changes(
            store,
            &new.name,
            &PoolPlacement {
                campaign: campaign.clone(),
                index,
            },
        )
        .await?
    {
        return Ok(Created::NeedsConfirmation(changes));
    }
    let (password, generated) = match new.password {
        Some(typed) => {
            auth::check_password_strength(&typed)?;
            (typed, false)
        }
        None => (auth::generate_password()?, true),
    };
    let hash = auth::hash_password_limited(password.clone()).await?;
    let user = store
        .add_user(&new.name, new.role, &hash, new.campaign, new.index)
        .await?;
    Ok(Created::User {
        user,
        generated_password: generated.then_some(password),
    })
}

/// Places an existing validator in a campaign's pool, once any re-pairing is confirmed.
pub async fn place_in_pool(
    store: &Store,
    name: &str,
    placement: PoolPlacement,
    confirmed: bool,
) -> Result<Option<Vec<PairChange>>> {
    if !confirmed && let Some(changes) = unconfirmed_changes(store, name, &placement).await? {
        return Ok(Some(changes));
    }
    store.add_to_pool(name, placement).await?;
    Ok(None)
}
