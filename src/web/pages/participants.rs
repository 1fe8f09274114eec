//! The admin's participants page: the campaign's groups (Table 16), the baseline set up
//! for the browser, what each part's participants read first, and invitation links
//! (made, listed, revoked).

use super::{Chrome, FormFields, PageResult, render};
use crate::domain::Part;
use crate::domain::taxonomy::Table;
use crate::error::Error;
use crate::report::baseline::Groups;
use crate::store::baseline::{Baseline, PlaceProgress};
use crate::store::invitations::{LinkLine, NewLink, PartSettings};
use crate::store::sessions::Session;
use crate::web::routes::{ADMIN, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::HeaderMap;

/// A link on the page.
pub struct LinkView {
    pub participant: String,
    pub part: &'static str,
    pub created: String,
    pub first_used: String,
    pub revoked: bool,
    pub external_id: bool,
    pub code: String,
}

#[derive(Template)]
#[template(path = "admin/participants.html")]
struct ParticipantsPage {
    chrome: Chrome,
    campaign: String,
    groups: Groups,
    /// The groups' heading, as the protocol names Table 16.
    groups_heading: String,
    baseline: Option<Baseline>,
    places: Vec<PlaceProgress>,
    study: bool,
    settings: Vec<(&'static str, PartSettings)>,
    links: Vec<LinkView>,
    /// Links made just now: shown once.
    new_links: Vec<String>,
    errors: Vec<String>,
}

fn when(micros: Option<i64>) -> String {
    micros.map_or_else(String::new, |m| {
        crate::clock::to_rfc3339(m)
            .replace('T', " ")
            .chars()
            .take(16)
            .collect()
    })
}

fn link_view(l: LinkLine) -> LinkView {
    LinkView {
        participant: l.participant,
        part: l.part.as_str(),
        created: when(Some(l.created_at)),
        first_used: when(l.first_used_at),
        revoked: l.revoked_at.is_some(),
        external_id: l.external_id,
        code: l.completion_code,
    }
}

/// The address links start with: the scheme and the host the admin reached.
fn origin(state: &AppState, headers: &HeaderMap) -> String {
    // A Host header that is not text: the link is shown without a host.
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("");
    if host.is_empty() {
        return String::new();
    }
    let scheme = if state.config.secure_cookies {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}")
}

async fn show(
    state: &AppState,
    session: &Session,
    c: &str,
    new_links: Vec<String>,
    errors: Vec<String>,
) -> PageResult {
    let campaign = state.store.campaign(c).await?;
    let baseline = state.store.baseline(&campaign).await?;
    let places = match &baseline {
        Some(b) => state.store.baseline_places(b).await?,
        None => Vec::new(),
    };
    let mut settings = Vec::new();
    for part in Part::ALL {
        settings.push((
            part.as_str(),
            state.store.part_settings(campaign.id, part).await?,
        ));
    }
    let chrome = Chrome::new(
        state,
        session,
        Some(c),
        "Participants",
        &format!("/c/{c}/admin/participants"),
    )
    .await?;
    let mut resp = render(&ParticipantsPage {
        chrome,
        campaign: c.to_string(),
        groups: crate::app::baseline::groups(&state.store, &campaign).await?,
        groups_heading: campaign.taxonomy.tables.heading(Table::T16, "the groups"),
        study: state.store.study(&campaign).await?.is_some(),
        baseline,
        places,
        settings,
        links: state
            .store
            .links(&campaign)
            .await?
            .into_iter()
            .map(link_view)
            .collect(),
        new_links,
        errors: errors.clone(),
    });
    if !errors.is_empty() {
        *resp.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// The page again with what was wrong, for an error the admin can mend; else the error.
async fn refused(state: &AppState, session: &Session, c: &str, e: Error) -> PageResult {
    match e {
        Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_) => {
            show(state, session, c, Vec::new(), vec![super::for_people(&e)]).await
        }
        e => Err(e.into()),
    }
}

/// `/c/{campaign}/admin/participants`.
pub async fn page(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    show(&state, &session, &c, Vec::new(), Vec::new()).await
}

/// Sets the baseline up: k videos per task and a seed (random when empty).
pub async fn setup(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let per_task = form
        .get("per_task")
        .trim()
        .parse::<i64>()
        .map_err(|_| Error::field("per_task", "a whole number of videos per task"));
    let seed = match form.get("seed").trim() {
        "" => Ok(None),
        s => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| Error::field("seed", "a whole number, or empty for a random one")),
    };
    let result = match (per_task, seed) {
        (Ok(k), Ok(seed)) => {
            crate::app::baseline::setup(&state.store, &state.config, &campaign, k, seed).await
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    match result {
        Ok(s) => Ok(crate::web::flash::redirect(
            &format!("/c/{c}/admin/participants"),
            &format!("Set up: {s}."),
        )),
        Err(e) => refused(&state, &session, &c, e).await,
    }
}

/// Saves what a part's participants read first, and whether links keep external ids.
pub async fn settings(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let part = match Part::parse(&form.get("part")) {
        Ok(p) => p,
        Err(m) => return show(&state, &session, &c, Vec::new(), vec![m]).await,
    };
    let consent = match crate::domain::baseline::consent_text(&form.get("consent")) {
        Ok(text) => text,
        Err(m) => return show(&state, &session, &c, Vec::new(), vec![m]).await,
    };
    let s = PartSettings {
        consent,
        keep_external_id: form.get("keep_external_id") == "on",
    };
    state.store.set_part_settings(&campaign, part, &s).await?;
    Ok(crate::web::flash::redirect(
        &format!("/c/{c}/admin/participants"),
        &format!("Saved what the {part}'s participants read first."),
    ))
}

/// Makes participants with links; the links are shown on the page once.
pub async fn invite(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    headers: HeaderMap,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let part = Part::parse(&form.get("part"));
    let count = form
        .get("count")
        .trim()
        .parse::<usize>()
        .map_err(|_| Error::field("count", "a whole number of links"));
    let made = match (part, count) {
        (Ok(part), Ok(n)) => crate::app::baseline::invite(&state.store, &campaign, part, n).await,
        (Err(m), _) => Err(Error::field("part", m)),
        (_, Err(e)) => Err(e),
    };
    match made {
        Ok(links) => {
            let origin = origin(&state, &headers);
            let lines = links
                .into_iter()
                .map(|NewLink { participant, path }| format!("{participant},{origin}{path}"))
                .collect();
            show(&state, &session, &c, lines, Vec::new()).await
        }
        Err(e) => refused(&state, &session, &c, e).await,
    }
}

/// Revokes a participant's link.
pub async fn revoke(
    State(state): State<AppState>,
    Extension(_session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let who = form.get("participant");
    let message = if state.store.revoke_link(&campaign, &who).await? {
        format!("{who}'s link opens nothing from now on; their answers stay.")
    } else {
        format!("{who}'s link was revoked already.")
    };
    Ok(crate::web::flash::redirect(
        &format!("/c/{c}/admin/participants"),
        &message,
    ))
}

/// The participants of the study and the baseline: set-up and invitation links.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/admin/participants",
            ADMIN,
            Page,
            get(page),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/participants/baseline",
            ADMIN,
            Page,
            post(setup),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/participants/settings",
            ADMIN,
            Page,
            post(settings),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/participants/links",
            ADMIN,
            Page,
            post(invite),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/participants/revoke",
            ADMIN,
            Page,
            post(revoke),
        ),
    ]
}
