//! The exports page and the files it offers.

use super::audit::AuditQuery;
use crate::app::exports;
use crate::store::sessions::Session;
use crate::web::media::download;
use crate::web::pages::{Chrome, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};

#[derive(Template)]
#[template(path = "admin/exports.html")]
struct ExportsPage {
    chrome: Chrome,
    campaign: String,
    decisions: usize,
    resolutions: usize,
    retained: usize,
    has_study: bool,
    /// Presentations the human baseline's participants answered.
    baseline_answers: usize,
}

pub async fn exports(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let (decisions, resolutions) = state.store.record_counts(&campaign).await?;
    let (_, counts) = state.store.retained(&campaign).await?;
    let here = format!("/c/{c}/admin/exports");
    let chrome = Chrome::new(&state, &session, Some(&c), "Exports", &here).await?;
    Ok(render(&ExportsPage {
        chrome,
        campaign: c,
        decisions,
        resolutions,
        retained: counts.clips_retained,
        has_study: state.store.study(&campaign).await?.is_some(),
        baseline_answers: state.store.baseline_answers(&campaign).await?.len(),
    }))
}

pub async fn export_baseline_answers(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::baseline_answers(&state.store, &campaign).await?,
    ))
}

pub async fn export_decisions(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(exports::decisions(&state.store, &campaign).await?))
}

pub async fn export_resolutions(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::resolutions(&state.store, &campaign).await?,
    ))
}

/// The retained benchmark (as `tandem export retained` makes it) in one zip.
pub async fn export_retained(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::retained_zip(&state.store, &state.config, &campaign).await?,
    ))
}

/// Everything a paper needs (as `tandem export paper` makes it) in one zip.
pub async fn export_paper(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let now = crate::web::pages::stats::now_seconds();
    Ok(download(
        exports::paper_zip(&state.store, &state.config, &campaign, now).await?,
    ))
}

/// Every blind answer (the blind key check) as CSV.
pub async fn export_blind_answers(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::blind_answers(&state.store, &campaign).await?,
    ))
}

/// Every verdict on a known item, beside its known verdict, as CSV.
pub async fn export_known_verdicts(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::known_verdicts(&state.store, &campaign).await?,
    ))
}

/// Each decided item's probability of a defect, as CSV.
pub async fn export_defect_probabilities(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::defect_probabilities(&state.store, &campaign).await?,
    ))
}

/// The blind study's answers as CSV.
pub async fn export_study_responses(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::study_responses(&state.store, &campaign).await?,
    ))
}

/// The audit trail as CSV, with the page's filters (all of it without).
pub async fn export_audit(
    State(state): State<AppState>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<AuditQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::audit(&state.store, &campaign, &q.filter()?).await?,
    ))
}

pub async fn export_regeneration(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    Ok(download(
        exports::regeneration(&state.store, &campaign).await?,
    ))
}
