// Accounts, the validator pool of each campaign, and API tokens. (Shared SQL: compiled
// once per backend, see store/mod.rs.)

use crate::store::write;
use crate::auth;
use crate::domain::{Role, check_identifier};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::{
    Account, PoolEntry, PoolPlacement, User, UserRow, fold_users, one_user, user_columns, user_joins,
};

impl Backend {
    pub(crate) async fn add_user(
        &self,
        name: &str,
        role: Role,
        password_hash: &str,
        campaign: Option<String>,
        index: Option<i64>,
    ) -> Result<User> {
        check_identifier("user name", name).map_err(|m| Error::field("name", m))?;
        let (name, hash) = (name.to_string(), password_hash.to_string());
        // Placing a validator changes the campaign's pairs: a structural write.
        let lock = if index.is_some() {
            Lock::Structure
        } else {
            Lock::Rows
        };
        self.write_tx(lock, move |tx| {
            let (name, hash, campaign) = (name.clone(), hash.clone(), campaign.clone());
            Box::pin(async move {
                write::accounts::add_user(tx, &name, role, &hash, campaign.as_deref(), index).await
            })
        })
        .await
    }

    pub(crate) async fn set_role(&self, name: &str, campaign: &str, role: Option<Role>) -> Result<()> {
        let (name, campaign) = (name.to_string(), campaign.to_string());
        self.write_tx(Lock::Rows, move |tx| {
            let (name, campaign) = (name.clone(), campaign.clone());
            Box::pin(async move { write::accounts::set_role(tx, &name, &campaign, role).await })
        })
        .await
    }

    pub(crate) async fn add_to_pool(&self, name: &str, placement: PoolPlacement) -> Result<()> {
        let name = name.to_string();
        self.write_tx(Lock::Structure, move |tx| {
            let (name, placement) = (name.clone(), placement.clone());
            Box::pin(async move { write::accounts::add_to_pool(tx, &name, &placement).await })
        })
        .await
    }

    pub(crate) async fn user_by_name(&self, name: &str) -> Result<Option<User>> {
        write::base::user_by_name(&mut *self.read().await?, name).await
    }

    pub(crate) async fn credentials(&self, name: &str) -> Result<Option<(User, String, bool)>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            #[sqlx(flatten)]
            user: UserRow,
            password_hash: String,
            disabled_at: Option<i64>,
        }
        let rows = qa::<Row>(concat!(
            "SELECT ",
            user_columns!(),
            ", u.password_hash, u.disabled_at FROM users u ",
            user_joins!(),
            " WHERE u.name = $1"
        ))
        .bind(name)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let Some((hash, disabled)) = rows.first().map(|r| (r.password_hash.clone(), r.disabled_at.is_some())) else {
            return Ok(None);
        };
        Ok(one_user(rows.into_iter().map(|r| r.user))?.map(|u| (u, hash, disabled)))
    }

    pub(crate) async fn accounts(&self) -> Result<Vec<Account>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            #[sqlx(flatten)]
            user: UserRow,
            disabled_at: Option<i64>,
        }
        let rows = qa::<Row>(concat!(
            "SELECT ",
            user_columns!(),
            ", u.disabled_at FROM users u ",
            user_joins!(),
            " ORDER BY u.name, mc.name"
        ))
        .fetch_all(&mut *self.read().await?)
        .await?;
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

    pub(crate) async fn set_disabled(&self, name: &str, disabled: bool) -> Result<bool> {
        let name = name.to_string();
        self.write_tx(Lock::Rows, move |tx| {
            let name = name.clone();
            Box::pin(async move { write::accounts::set_disabled(tx, &name, disabled).await })
        })
        .await
    }

    pub(crate) async fn users(&self) -> Result<Vec<User>> {
        fold_users(
            qa::<UserRow>(concat!(
                "SELECT ",
                user_columns!(),
                " FROM users u ",
                user_joins!(),
                " ORDER BY u.name, mc.name"
            ))
            .fetch_all(&mut *self.read().await?)
            .await?,
        )
    }

    pub(crate) async fn create_token(&self, name: &str, label: &str) -> Result<String> {
        let (token, digest) = auth::generate_token()?;
        let (name, label) = (name.to_string(), label.to_string());
        self.write_tx(Lock::Rows, move |tx| {
            let (name, label, digest) = (name.clone(), label.clone(), digest.clone());
            Box::pin(async move { write::accounts::create_token(tx, &name, &label, &digest).await })
        })
        .await?;
        Ok(token)
    }

    pub(crate) async fn revoke_tokens(&self, name: &str) -> Result<u64> {
        let name = name.to_string();
        self.write_tx(Lock::Rows, move |tx| {
            let name = name.clone();
            Box::pin(async move { write::accounts::revoke_tokens(tx, &name).await })
        })
        .await
    }

    /// The revocation stamp (migration 0023): one row read by its key.
    pub(crate) async fn revocation_stamp(&self) -> Result<i64> {
        Ok(qs::<i64>("SELECT stamp FROM revocation_stamp WHERE id = 1")
            .fetch_one(&mut *self.read().await?)
            .await?)
    }

    pub(crate) async fn user_by_token_digest(&self, digest: &str) -> Result<Option<User>> {
        one_user(
            qa::<UserRow>(concat!(
                "SELECT ",
                user_columns!(),
                " FROM api_tokens t JOIN users u ON u.id = t.user_id ",
                user_joins!(),
                " WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL"
            ))
            .bind(digest)
            .fetch_all(&mut *self.read().await?)
            .await?,
        )
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
