//! Accounts, the validator pool of each campaign, and API tokens (the types; the SQL is
//! in `store/sql/accounts.rs`).

use crate::domain::Role;
use crate::error::{Error, Result};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub role: Role,
}

crate::store::db::row! {
    /// An account as stored.
    #[derive(Debug, Clone, sqlx::FromRow)]
    pub(crate) struct UserRow {
        pub id: i64,
        pub name: String,
        pub role: String,
    }
}

impl TryFrom<UserRow> for User {
    type Error = Error;
    fn try_from(r: UserRow) -> Result<User> {
        Ok(User {
            id: r.id,
            name: r.name,
            role: Role::parse(&r.role).map_err(Error::Internal)?,
        })
    }
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

/// A validator's place in a campaign's pool.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct PoolEntry {
    pub campaign: String,
    pub user: String,
    pub index: i64,
}
