//! Accounts, the validator pool of each campaign, and API tokens (the types; the SQL is
//! in `store/areas/accounts.rs`).

use crate::domain::Role;
use crate::error::{Error, Result};
use serde::Serialize;

/// A person's role in one campaign (validator, author or participant; one per person
/// and campaign).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CampaignRole {
    #[serde(skip)]
    pub campaign_id: i64,
    pub campaign: String,
    pub role: Role,
}

/// An account: an admin (server-wide: every campaign) or a member who holds one role in
/// each campaign they work on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub admin: bool,
    /// The campaigns this person works on, by campaign name, each with their role there
    /// (none for an admin).
    pub roles: Vec<CampaignRole>,
}

impl User {
    /// The role this person acts in within a campaign: `Admin` for an admin, else the
    /// role held there (none: the campaign is not theirs).
    pub fn role_in(&self, campaign_id: i64) -> Option<Role> {
        if self.admin {
            return Some(Role::Admin);
        }
        self.roles
            .iter()
            .find(|r| r.campaign_id == campaign_id)
            .map(|r| r.role)
    }

    /// Whether this person acts as `role` anywhere (an admin as `Admin` only).
    pub fn holds(&self, role: Role) -> bool {
        if self.admin {
            return role == Role::Admin;
        }
        self.roles.iter().any(|r| r.role == role)
    }

    /// The campaigns where this person acts as `role` (every campaign for an admin is
    /// not listed here: admins hold no campaign role).
    pub fn campaigns_as(&self, role: Role) -> impl Iterator<Item = &CampaignRole> {
        self.roles.iter().filter(move |r| r.role == role)
    }

    /// The account in one word for a page's header: `admin`, the one role it holds in
    /// every campaign it works on, or `member`.
    pub fn headline(&self) -> String {
        if self.admin {
            return "admin".into();
        }
        match self.roles.first() {
            Some(r) if self.roles.iter().all(|o| o.role == r.role) => r.role.as_str().into(),
            _ => "member".into(),
        }
    }

    /// The account in words: `admin`, or its roles (`validator in a, author in b`), or
    /// `no campaign yet`.
    pub fn describe(&self) -> String {
        if self.admin {
            return "admin".into();
        }
        if self.roles.is_empty() {
            return "no campaign yet".into();
        }
        self.roles
            .iter()
            .map(|r| format!("{} in {}", r.role, r.campaign))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The columns that read an account with its roles (`u` the user), one row per role; to
/// be joined with [`user_joins!`].
macro_rules! user_columns {
    () => {
        "u.id, u.name, u.is_admin, m.campaign_id AS role_campaign_id, mc.name AS role_campaign, m.role AS role_name"
    };
}
pub(crate) use user_columns;

/// The joins that go with [`user_columns!`].
macro_rules! user_joins {
    () => {
        "LEFT JOIN campaign_members m ON m.user_id = u.id LEFT JOIN campaigns mc ON mc.id = m.campaign_id"
    };
}
pub(crate) use user_joins;

crate::store::db::row! {
    /// An account as stored, with one of its roles (none: it holds none).
    #[derive(Debug, Clone)]
    pub(crate) struct UserRow {
        pub id: i64,
        pub name: String,
        pub is_admin: i64,
        pub role_campaign_id: Option<i64>,
        pub role_campaign: Option<String>,
        pub role_name: Option<String>,
    }
}

/// The accounts in rows read with [`user_columns!`], in the rows' order (the rows of one
/// account next to each other).
pub(crate) fn fold_users(rows: impl IntoIterator<Item = UserRow>) -> Result<Vec<User>> {
    let mut users: Vec<User> = Vec::new();
    for r in rows {
        let role = match (r.role_campaign_id, r.role_campaign, r.role_name) {
            (Some(campaign_id), Some(campaign), Some(role)) => Some(CampaignRole {
                campaign_id,
                campaign,
                role: Role::parse(&role).map_err(Error::Internal)?,
            }),
            _ => None,
        };
        match users.last_mut() {
            Some(u) if u.id == r.id => u.roles.extend(role),
            _ => users.push(User {
                id: r.id,
                name: r.name,
                admin: r.is_admin != 0,
                roles: role.into_iter().collect(),
            }),
        }
    }
    for u in &mut users {
        u.roles.sort_by(|a, b| a.campaign.cmp(&b.campaign));
    }
    Ok(users)
}

/// The one account in rows read with [`user_columns!`], if any.
pub(crate) fn one_user(rows: impl IntoIterator<Item = UserRow>) -> Result<Option<User>> {
    Ok(fold_users(rows)?.into_iter().next())
}

/// An account as the accounts page lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Account {
    #[serde(flatten)]
    pub user: User,
    pub disabled: bool,
}

/// What `add_user` needs to place a validator in a campaign's pool (and so give them the
/// validator's role there).
#[derive(Debug, Clone)]
pub struct PoolPlacement {
    pub campaign: String,
    pub index: i64,
}

crate::store::db::row! {
    /// A validator's place in a campaign's pool.
    #[derive(Debug, Clone, Serialize)]
    pub struct PoolEntry {
        pub campaign: String,
        pub user: String,
        pub index: i64,
    }
}
