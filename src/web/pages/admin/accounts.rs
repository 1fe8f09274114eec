//! Accounts: the list, a new account (with its pairs confirmed), roles in campaigns,
//! API tokens, disabling and enabling.

use crate::app::accounts::{Created, NewUser};
use crate::domain::Role;
use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, FormFields, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;

pub struct UserRow {
    pub name: String,
    pub admin: bool,
    /// (campaign, role there, with a validator's pool index)
    pub roles: Vec<(String, String)>,
    pub disabled: bool,
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    chrome: Chrome,
    users: Vec<UserRow>,
    campaigns: Vec<String>,
    error: Option<String>,
}

async fn users_page(state: &AppState, session: &Session, error: Option<String>) -> PageResult {
    let entries = state.store.pool_entries().await?;
    let users = state
        .store
        .accounts()
        .await?
        .into_iter()
        .map(|a| UserRow {
            roles: if a.user.admin {
                vec![("every campaign".into(), "admin".into())]
            } else {
                a.user
                    .roles
                    .iter()
                    .map(|r| {
                        let index = entries
                            .iter()
                            .find(|e| e.user == a.user.name && e.campaign == r.campaign)
                            .map(|e| format!(" #{}", e.index))
                            .unwrap_or_default();
                        (r.campaign.clone(), format!("{}{index}", r.role))
                    })
                    .collect()
            },
            admin: a.user.admin,
            name: a.user.name,
            disabled: a.disabled,
        })
        .collect::<Vec<_>>();
    let mut campaigns = state.store.campaign_names().await?;
    if campaigns.is_empty() {
        campaigns.push(crate::store::DEFAULT_CAMPAIGN.into());
    }
    let chrome = Chrome::new(
        state,
        session,
        campaigns.first().map(String::as_str),
        "Accounts",
        "/admin/users",
    )
    .await?;
    let mut resp = render(&UsersPage {
        chrome,
        users,
        campaigns,
        error: error.clone(),
    });
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

pub async fn users(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> PageResult {
    users_page(&state, &session, None).await
}

#[derive(Template)]
#[template(path = "admin/secret.html")]
struct SecretPage {
    chrome: Chrome,
    what: String,
    secret: String,
}

/// Shows a new password or token once; it is never stored in the clear, so the page is
/// drawn straight from the POST.
async fn secret_page(
    state: &AppState,
    session: &Session,
    what: String,
    secret: String,
) -> PageResult {
    let first = state.store.campaign_names().await?.into_iter().next();
    let chrome = Chrome::new(
        state,
        session,
        first.as_deref(),
        "Copy it now",
        "/admin/users",
    )
    .await?;
    Ok(render(&SecretPage {
        chrome,
        what,
        secret,
    }))
}

#[derive(Template)]
#[template(path = "admin/confirm_pairs.html")]
struct ConfirmPairsPage {
    chrome: Chrome,
    name: String,
    role: &'static str,
    campaign: String,
    index: i64,
    /// What the admin typed, sent again with the confirmation (empty: generate one).
    password: String,
    changes: Vec<crate::store::catalog::PairChange>,
    moving: i64,
    /// Where the confirmation goes (`/admin/users`: a new account; `/admin/pool`: an
    /// account placed in another campaign's pool), and its button's words.
    action: &'static str,
    button: String,
}

impl ConfirmPairsPage {
    fn pair(&self, p: &Option<(String, String)>) -> String {
        match p {
            Some((a, b)) => format!("{a} + {b}"),
            None => "no pair".into(),
        }
    }
}

/// A placement in a pool that waits for the admin's confirmation: the form's fields,
/// sent again with `confirm=yes`.
struct Placement {
    name: String,
    role: &'static str,
    campaign: String,
    index: i64,
    password: String,
    action: &'static str,
    button: String,
}

/// The page that shows the pairs a placement would change, and confirms it.
async fn confirm_pairs(
    state: &AppState,
    session: &Session,
    p: Placement,
    changes: Vec<crate::store::catalog::PairChange>,
) -> PageResult {
    let chrome = Chrome::new(
        state,
        session,
        Some(&p.campaign),
        "Confirm the new pairs",
        "/admin/users",
    )
    .await?;
    Ok(render(&ConfirmPairsPage {
        chrome,
        name: p.name,
        role: p.role,
        campaign: p.campaign,
        index: p.index,
        password: p.password,
        moving: changes.iter().map(|c| c.unstarted_moving).sum(),
        changes,
        action: p.action,
        button: p.button,
    }))
}

pub async fn create_user(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let role = match Role::parse(form.get("role").trim()) {
        Ok(r) => r,
        Err(m) => return users_page(&state, &session, Some(m)).await,
    };
    let index = form.get("index").trim().to_string();
    let index = if index.is_empty() {
        None
    } else {
        match index.parse::<i64>() {
            Ok(i) => Some(i),
            Err(_) => {
                return users_page(
                    &state,
                    &session,
                    Some(format!("pool index `{index}` is not a number")),
                )
                .await;
            }
        }
    };
    // An admin is server-wide: the form's campaign is for everyone else.
    let campaign = (role != Role::Admin).then(|| form.get("campaign").trim().to_string());
    // Placing a validator may give tasks new default pairs and move their unstarted
    // items: shown first, and done only once the admin confirms. A password is taken
    // as typed, spaces and all; none typed, one is generated and shown once.
    let typed = form.get("password");
    let new = NewUser {
        name: name.clone(),
        role,
        password: (!typed.is_empty()).then(|| typed.clone()),
        campaign: campaign.clone(),
        index,
        confirmed: form.get("confirm") == "yes",
    };
    match crate::app::accounts::create_user(&state.store, new).await {
        Ok(Created::NeedsConfirmation(changes)) => {
            let placement = Placement {
                button: format!("Create {name} and re-pair these tasks"),
                name,
                role: role.as_str(),
                campaign: campaign.unwrap_or_default(),
                index: index.unwrap_or_default(),
                password: typed,
                action: "/admin/users",
            };
            confirm_pairs(&state, &session, placement, changes).await
        }
        Ok(Created::User {
            user,
            generated_password: Some(password),
        }) => {
            secret_page(
                &state,
                &session,
                format!("The password of {} ({})", user.name, user.describe()),
                password,
            )
            .await
        }
        Ok(Created::User { user, .. }) => Ok(crate::web::flash::redirect(
            "/admin/users",
            &format!("Created {} ({}).", user.name, user.describe()),
        )),
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            users_page(&state, &session, Some(crate::web::pages::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /admin/pool`: places an existing account in a campaign's validator pool (a
/// validator of another campaign, say), once any re-pairing it causes is confirmed.
pub async fn place_in_pool(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let campaign = form.get("campaign").trim().to_string();
    let index_text = form.get("index").trim().to_string();
    let Ok(index) = index_text.parse::<i64>() else {
        let m = format!("pool index `{index_text}` is not a number");
        return users_page(&state, &session, Some(m)).await;
    };
    let placement = crate::store::accounts::PoolPlacement {
        campaign: campaign.clone(),
        index,
    };
    let confirmed = form.get("confirm") == "yes";
    match crate::app::accounts::place_in_pool(&state.store, &name, placement, confirmed).await {
        Ok(Some(changes)) => {
            let placement = Placement {
                button: format!("Place {name} and re-pair these tasks"),
                name,
                role: Role::Validator.as_str(),
                campaign,
                index,
                password: String::new(),
                action: "/admin/pool",
            };
            confirm_pairs(&state, &session, placement, changes).await
        }
        Ok(None) => Ok(crate::web::flash::redirect(
            "/admin/users",
            &format!("{name} is a validator of {campaign}, at pool index {index}."),
        )),
        Err(
            e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_) | Error::NotFound(_)),
        ) => users_page(&state, &session, Some(crate::web::pages::for_people(&e))).await,
        Err(e) => Err(e.into()),
    }
}

/// `POST /admin/roles`: gives an account an author's or participant's role in a
/// campaign, or takes its role there away.
pub async fn set_role(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let campaign = form.get("campaign").trim().to_string();
    let role = match form.get("role").trim() {
        "none" => None,
        r => match Role::parse(r) {
            Ok(r) => Some(r),
            Err(m) => return users_page(&state, &session, Some(m)).await,
        },
    };
    match state.store.set_role(&name, &campaign, role).await {
        Ok(()) => Ok(crate::web::flash::redirect(
            "/admin/users",
            &match role {
                Some(r) => format!("{name} is {} of {campaign}.", r.with_article()),
                None => format!("{name} holds no role in {campaign}."),
            },
        )),
        Err(
            e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_) | Error::NotFound(_)),
        ) => users_page(&state, &session, Some(crate::web::pages::for_people(&e))).await,
        Err(e) => Err(e.into()),
    }
}

pub async fn revoke_tokens(
    State(state): State<AppState>,
    Extension(_session): Extension<Session>,
    Path(name): Path<String>,
    _form: RawForm,
) -> PageResult {
    let n = state.store.revoke_tokens(&name).await?;
    Ok(crate::web::flash::redirect(
        "/admin/users",
        &format!("Revoked {n} API token(s) of {name}."),
    ))
}

/// Disables an account (sessions and tokens end at once) or enables it again.
pub async fn set_disabled(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((name, action)): Path<(String, String)>,
    _form: RawForm,
) -> PageResult {
    let disable = match action.as_str() {
        "disable" => true,
        "enable" => false,
        _ => return Err(Error::NotFound("no such action".into()).into()),
    };
    match state.store.set_disabled(&name, disable).await {
        Ok(_) => {
            let msg = if disable {
                format!("Disabled {name}: their sessions ended and their API tokens are revoked.")
            } else {
                format!("Enabled {name}: they can sign in again and need new API tokens.")
            };
            Ok(crate::web::flash::redirect("/admin/users", &msg))
        }
        Err(e @ (Error::Conflict(_) | Error::NotFound(_))) => {
            users_page(&state, &session, Some(crate::web::pages::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn create_token(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(name): Path<String>,
    _form: RawForm,
) -> PageResult {
    let token = state.store.create_token(&name, "admin page").await?;
    secret_page(&state, &session, format!("An API token for {name}"), token).await
}
