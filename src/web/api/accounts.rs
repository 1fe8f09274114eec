//! Accounts through the API: who is asking, the accounts (list, create, disable and
//! enable, roles in campaigns, API tokens), and the campaigns the caller works in.

use super::{ApiJson, UserPath};
use crate::app::accounts::{Created, NewUser};
use crate::domain::Role;
use crate::error::{Error, Result};
use crate::store::accounts::Account;
use crate::store::accounts::User;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Access, Route, STAFF};
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The signed-in account.
#[derive(Serialize, ToSchema)]
pub struct Me {
    pub id: i64,
    pub name: String,
    /// Admins act as admins in every campaign and hold no roles.
    pub admin: bool,
    pub roles: Vec<MyRole>,
}

/// A role the signed-in account holds in one campaign.
#[derive(Serialize, ToSchema)]
pub struct MyRole {
    /// The campaign's name; never given to a participant (it could hint at the source
    /// of the clips).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    pub role: crate::domain::Role,
}

/// The signed-in account: whether it is an admin (server-wide) and its role in each
/// campaign.
///
/// One role per campaign (validator, author or participant); an admin holds none and
/// reaches every campaign.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "accounts",
    operation_id = "me",
    responses((status = 200, description = "The account", body = Me))
)]
pub async fn me(Extension(user): Extension<User>) -> Json<Me> {
    let roles = user
        .roles
        .iter()
        .map(|r| MyRole {
            campaign: r.role.is_staff().then(|| r.campaign.clone()),
            role: r.role,
        })
        .collect();
    Json(Me {
        id: user.id,
        name: user.name,
        admin: user.admin,
        roles,
    })
}

/// Every account.
#[derive(Serialize, ToSchema)]
pub struct Users {
    pub users: Vec<Account>,
}

/// Every account, its role in each campaign and whether it is disabled.
#[utoipa::path(
    get,
    path = "/api/v1/users",
    tag = "accounts",
    operation_id = "list_users",
    responses((status = 200, description = "Every account, by name", body = Users))
)]
pub async fn users(State(state): State<AppState>) -> Result<Json<Users>> {
    let users = state.store.accounts().await?;
    Ok(Json(Users { users }))
}

/// An account's state after it was disabled or enabled.
#[derive(Serialize, ToSchema)]
pub struct UserState {
    pub user: String,
    pub disabled: bool,
    /// False when the account already was in this state.
    pub changed: bool,
}

/// Disable an account: its sessions end and its API tokens are revoked at once; a
/// validator keeps their pool index.
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/disable",
    tag = "accounts",
    operation_id = "disable_user",
    params(UserPath),
    responses(
        (status = 200, description = "The account is disabled", body = UserState),
        (status = 409, description = "The last admin who can sign in cannot be disabled"),
    )
)]
pub async fn disable_user(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<UserState>> {
    let changed = state.store.set_disabled(&p.name, true).await?;
    Ok(Json(UserState {
        user: p.name,
        disabled: true,
        changed,
    }))
}

/// Enable a disabled account again (it signs in anew and needs new API tokens).
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/enable",
    tag = "accounts",
    operation_id = "enable_user",
    params(UserPath),
    responses((status = 200, description = "The account is enabled", body = UserState))
)]
pub async fn enable_user(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<UserState>> {
    let changed = state.store.set_disabled(&p.name, false).await?;
    Ok(Json(UserState {
        user: p.name,
        disabled: false,
        changed,
    }))
}

/// Campaign names.
#[derive(Serialize, ToSchema)]
pub struct Campaigns {
    pub campaigns: Vec<String>,
}

/// The campaigns the caller works in: admins see every campaign, everyone else those
/// where they are a validator or an author (participants never see campaign names).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns",
    tag = "campaigns",
    operation_id = "list_campaigns",
    responses((status = 200, description = "Campaign names", body = Campaigns))
)]
pub async fn campaigns(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Json<Campaigns>> {
    let campaigns = state.store.campaign_names_for(&user).await?;
    Ok(Json(Campaigns { campaigns }))
}

/// A new account.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "val04", "role": "validator", "campaign": "default", "index": 4}))]
pub struct NewAccount {
    name: String,
    role: Role,
    /// The campaign a validator, author or participant works in (none for an admin).
    campaign: Option<String>,
    /// A validator's place in the campaign's pool.
    index: Option<i64>,
    /// The password (checked for strength); none: one is made and given once in the
    /// reply.
    #[schema(min_length = 12)]
    password: Option<String>,
    /// Placing a validator that gives tasks with items a new default pair is refused
    /// (409, the changes in words) unless this is true.
    #[serde(default)]
    confirm: bool,
}

/// A new account, with the password made for it (given once; only its hash is kept).
#[derive(Serialize, ToSchema)]
pub struct CreatedAccount {
    pub user: User,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// Create an account: an admin (server-wide), or a validator (placed in a campaign's
/// pool), author or participant of a campaign.
#[utoipa::path(
    post,
    path = "/api/v1/users",
    tag = "accounts",
    operation_id = "create_user",
    request_body = NewAccount,
    responses(
        (status = 201, description = "Created", body = CreatedAccount),
        (status = 409, description = "The name is taken, or the placement gives tasks new pairs and was not confirmed (`confirm`): the detail lists them"),
    )
)]
pub async fn create_user(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<NewAccount>,
) -> Result<(StatusCode, Json<CreatedAccount>)> {
    let new = NewUser {
        name: body.name.trim().to_string(),
        role: body.role,
        password: body.password,
        campaign: body.campaign.map(|c| c.trim().to_string()),
        index: body.index,
        confirmed: body.confirm,
    };
    match crate::app::accounts::create_user(&state.store, new).await? {
        Created::NeedsConfirmation(changes) => Err(Error::Conflict(format!(
            "placing this validator gives {} task(s) a new pair ({}); send again with \"confirm\": true",
            changes.len(),
            changes
                .iter()
                .map(|c| c.describe())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
        Created::User {
            user,
            generated_password,
        } => Ok((
            StatusCode::CREATED,
            Json(CreatedAccount {
                user,
                password: generated_password,
            }),
        )),
    }
}

/// An account's role in one campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct RolePath {
    /// The account's name
    name: String,
    /// The campaign's name
    campaign: String,
}

/// The role to hold in a campaign.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"role": "author"}))]
pub struct RoleBody {
    /// `author` or `participant`; null takes the role away (a validator keeps their pool
    /// place). A validator's role comes with a pool place (`POST /api/v1/users`).
    #[schema(value_type = Option<String>, pattern = "^(author|participant)$")]
    role: Option<Role>,
}

/// Give an account an author's or participant's role in a campaign, or take its role
/// there away; it holds at the account's next request, on every server.
#[utoipa::path(
    put,
    path = "/api/v1/users/{name}/roles/{campaign}",
    tag = "accounts",
    operation_id = "set_role",
    params(RolePath),
    request_body = RoleBody,
    responses(
        (status = 200, description = "The account with its roles", body = User),
        (status = 409, description = "The account holds another role there"),
    )
)]
pub async fn set_role(
    State(state): State<AppState>,
    Path(p): Path<RolePath>,
    ApiJson(body): ApiJson<RoleBody>,
) -> Result<Json<User>> {
    state
        .store
        .set_role(&p.name, &p.campaign, body.role)
        .await?;
    let user = state
        .store
        .user_by_name(&p.name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{}`", p.name)))?;
    Ok(Json(user))
}

/// A new API token's label.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"label": "generation pipeline"}))]
pub struct TokenBody {
    /// What the token is for (kept with it)
    #[serde(default)]
    label: String,
}

/// A new API token, given once (only its digest is kept).
#[derive(Serialize, ToSchema)]
pub struct NewToken {
    pub user: String,
    pub token: String,
}

/// Issue an API token for an account.
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/tokens",
    tag = "accounts",
    operation_id = "create_token",
    params(UserPath),
    request_body = TokenBody,
    responses(
        (status = 201, description = "The token", body = NewToken),
        (status = 409, description = "The account is disabled"),
    )
)]
pub async fn create_token(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
    ApiJson(body): ApiJson<TokenBody>,
) -> Result<(StatusCode, Json<NewToken>)> {
    let label = if body.label.trim().is_empty() {
        "api"
    } else {
        body.label.trim()
    };
    let token = state.store.create_token(&p.name, label).await?;
    Ok((
        StatusCode::CREATED,
        Json(NewToken {
            user: p.name,
            token,
        }),
    ))
}

/// How many tokens were revoked.
#[derive(Serialize, ToSchema)]
pub struct Revoked {
    pub user: String,
    pub revoked: u64,
}

/// Revoke every API token of an account, at once on every server.
#[utoipa::path(
    delete,
    path = "/api/v1/users/{name}/tokens",
    tag = "accounts",
    operation_id = "revoke_tokens",
    params(UserPath),
    responses((status = 200, description = "The tokens that were live are revoked", body = Revoked))
)]
pub async fn revoke_tokens(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<Revoked>> {
    let revoked = state.store.revoke_tokens(&p.name).await?;
    Ok(Json(Revoked {
        user: p.name,
        revoked,
    }))
}

/// Accounts, then the campaigns the caller works in.
pub fn routes() -> Vec<Route> {
    vec![
        api!(Access::SignedIn, me),
        api!(ADMIN, users),
        api!(ADMIN, disable_user),
        api!(ADMIN, enable_user),
        api!(ADMIN, create_user),
        api!(ADMIN, set_role),
        api!(ADMIN, create_token),
        api!(ADMIN, revoke_tokens),
        // Participants never learn campaign names (they could hint at the sources).
        api!(STAFF, campaigns),
    ]
}
