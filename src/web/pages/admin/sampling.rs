//! The campaign's sampled review: its rules, lots and held items, and running it.

use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};

#[derive(Template)]
#[template(path = "admin/sampling.html")]
struct SamplingPage {
    chrome: Chrome,
    campaign: String,
    status: crate::app::sampling::SamplingStatus,
    problem: Option<String>,
}

/// Percent with two decimals, for the sampling page.
fn percent(x: &f64) -> String {
    format!("{:.2}%", x * 100.0)
}

impl SamplingPage {
    fn bound(&self, l: &crate::app::sampling::LotReport) -> String {
        l.upper_bound
            .map(|u| format!("≤ {} ({}%)", percent(&u), l.confidence * 100.0))
            .unwrap_or_default()
    }
}

async fn sampling_page(
    state: &AppState,
    session: &Session,
    c: &str,
    problem: Option<String>,
) -> PageResult {
    let campaign = state.store.campaign(c).await?;
    let status = crate::app::sampling::status(&state.store, &campaign).await?;
    let here = format!("/c/{c}/admin/sampling");
    let chrome = Chrome::new(state, session, Some(c), "Sampled review", &here).await?;
    Ok(render(&SamplingPage {
        chrome,
        campaign: c.to_string(),
        status,
        problem,
    }))
}

/// The campaign's sampled review: its rules, its lots and the items held, with the
/// button that runs it.
pub async fn sampling(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    sampling_page(&state, &session, &c, None).await
}

/// Runs the campaign's sampled review (settle, release, draw) and says what it did.
pub async fn sampling_run(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    match crate::app::sampling::run(&state.store, &c).await {
        Ok(run) => Ok(crate::web::flash::redirect(
            &format!("/c/{c}/admin/sampling"),
            crate::app::sampling::run_words(&run).trim_end(),
        )),
        Err(e @ (Error::Conflict(_) | Error::Invalid(_))) => {
            sampling_page(
                &state,
                &session,
                &c,
                Some(crate::web::pages::for_people(&e)),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}
