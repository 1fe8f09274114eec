// Accounts, the validator pool of each campaign, and API tokens. (Shared SQL: compiled
// once per backend, see store/mod.rs.)

use crate::store::write;
use crate::auth;
use crate::domain::{Role, check_identifier};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::{Account, PoolEntry, PoolPlacement, User, UserRow};

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
        self.write_tx(lock, move |tx| {
            let (name, hash, placement) = (name.clone(), hash.clone(), placement.clone());
            Box::pin(async move {
                write::accounts::add_user(tx, &name, role, &hash, placement.as_ref()).await
            })
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
        self.write_tx(Lock::Rows, move |tx| {
            let name = name.clone();
            Box::pin(async move { write::accounts::set_disabled(tx, &name, disabled).await })
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
