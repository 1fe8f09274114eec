//! The campaigns and their protocols, and creating one.

use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, FormFields, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{RawForm, State};
use axum::http::StatusCode;

/// A campaign as the campaigns page lists it.
pub struct CampaignRow {
    pub name: String,
    pub protocol: String,
    pub tasks: usize,
    pub qa_types: usize,
    pub cells: usize,
}

#[derive(Template)]
#[template(path = "admin/campaigns.html")]
struct CampaignsPage {
    chrome: Chrome,
    campaigns: Vec<CampaignRow>,
    /// The shipped protocols: (key, name).
    shipped: Vec<(String, String)>,
    /// What the form held, when it comes back with problems.
    name: String,
    chosen: String,
    text: String,
    problems: Vec<String>,
}

/// The shipped protocols by key, with their names (read from the embedded files).
fn shipped_protocols() -> Vec<(String, String)> {
    crate::domain::protocol::SHIPPED
        .iter()
        .filter_map(|(key, text)| {
            // Every shipped protocol parses (`domain::protocol`'s tests read each).
            crate::domain::protocol::parse(text)
                .ok()
                .map(|p| ((*key).to_string(), p.name))
        })
        .collect()
}

async fn campaigns_page(
    state: &AppState,
    session: &Session,
    form: (String, String, String),
    problems: Vec<String>,
) -> PageResult {
    let mut campaigns = Vec::new();
    for name in state.store.campaign_names().await? {
        let c = state.store.campaign(&name).await?;
        campaigns.push(CampaignRow {
            protocol: c.taxonomy.name.clone(),
            tasks: c.taxonomy.tasks.len(),
            qa_types: c.taxonomy.qa_types.len(),
            cells: c.taxonomy.cell_count(),
            name,
        });
    }
    let first = campaigns.first().map(|c| c.name.clone());
    let chrome = Chrome::new(
        state,
        session,
        first.as_deref(),
        "Campaigns",
        "/admin/campaigns",
    )
    .await?;
    let failed = !problems.is_empty();
    let (name, chosen, text) = form;
    let mut resp = render(&CampaignsPage {
        chrome,
        campaigns,
        shipped: shipped_protocols(),
        name,
        chosen,
        text,
        problems,
    });
    if failed {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// The campaigns and their protocols, and the form that creates one.
pub async fn campaigns(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> PageResult {
    campaigns_page(
        &state,
        &session,
        (String::new(), "vgenst".into(), String::new()),
        Vec::new(),
    )
    .await
}

/// Creates a campaign with a shipped protocol or one pasted as TOML; a protocol with
/// problems comes back with every one of them (line and field) and nothing created.
pub async fn create_campaign(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let chosen = form.get("protocol").trim().to_string();
    let text = form.get("text");
    let again = (name.clone(), chosen.clone(), text.clone());
    let source = if chosen == "own" {
        if text.trim().is_empty() {
            return campaigns_page(
                &state,
                &session,
                again,
                vec!["paste the protocol file (TOML) into the box, or choose a shipped one".into()],
            )
            .await;
        }
        text.clone()
    } else {
        match crate::domain::protocol::shipped(&chosen) {
            Some(t) => t.to_string(),
            None => {
                return campaigns_page(
                    &state,
                    &session,
                    again,
                    vec![format!("there is no shipped protocol `{chosen}`")],
                )
                .await;
            }
        }
    };
    let protocol = match crate::domain::protocol::parse(&source) {
        Ok(p) => p,
        Err(problems) => {
            let problems = problems.iter().map(ToString::to_string).collect();
            return campaigns_page(&state, &session, again, problems).await;
        }
    };
    if let Err(e) = crate::app::sampling::planned(&protocol.taxonomy.sampling) {
        return campaigns_page(&state, &session, again, vec![e.to_string()]).await;
    }
    match state.store.create_campaign(&name, &protocol).await {
        Ok(c) => Ok(crate::web::pages::see_other(&format!(
            "/c/{}/admin",
            c.name
        ))),
        Err(e @ (Error::Conflict(_) | Error::Field { .. })) => {
            campaigns_page(&state, &session, again, vec![e.to_string()]).await
        }
        Err(e) => Err(e.into()),
    }
}
