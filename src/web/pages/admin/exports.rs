//! The exports page and the files it offers (`web::exports`).

use super::audit::AuditQuery;
use crate::domain::records::AuditFilter;
use crate::domain::taxonomy::Taxonomy;
use crate::report::bundle;
use crate::report::format::TableId;
use crate::store::sessions::Session;
use crate::web::exports::{ExportFile, ExportKind};
use crate::web::media::download;
use crate::web::pages::{Chrome, PageResult, error_page, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;

#[derive(Template)]
#[template(path = "admin/exports.html")]
struct ExportsPage {
    chrome: Chrome,
    campaign: String,
    decisions: usize,
    resolutions: usize,
    retained: usize,
    /// The tables of the paper bundle, by the names the protocol gives them.
    tables: String,
    /// Whether the protocol's export carries each question's reformulations.
    variants: bool,
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
    let has_study = state.store.study(&campaign).await?.is_some();
    let baseline_answers = state.store.baseline_answers(&campaign).await?.len();
    let tables = bundle_tables(&campaign.taxonomy, has_study, baseline_answers > 0);
    let here = format!("/c/{c}/admin/exports");
    let chrome = Chrome::new(&state, &session, Some(&c), "Exports", &here).await?;
    Ok(render(&ExportsPage {
        chrome,
        campaign: c,
        decisions,
        resolutions,
        retained: counts.clips_retained,
        variants: campaign.taxonomy.variants,
        tables,
        has_study,
        baseline_answers,
    }))
}

/// "Table 11, Table 12, Table 13 and the study's Table 14, Table 15": the tables of the
/// paper bundle (`report::bundle::tables`), named as the protocol names them.
fn bundle_tables(tax: &Taxonomy, has_study: bool, has_baseline: bool) -> String {
    let tables = bundle::tables(tax.clip_review, has_study, has_baseline);
    let names = |keep: fn(&TableId) -> bool| {
        tables
            .iter()
            .filter(|t| keep(t))
            .filter_map(|t| t.table())
            .map(|t| tax.table_name(t))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = names(|t| !t.is_study() && !t.is_groups());
    let study = names(|t| t.is_study());
    if !study.is_empty() {
        text += &format!(" and the study's {study}");
    }
    if tables.contains(&TableId::Baseline) {
        text += " and the human baseline's table";
    }
    text
}

/// A file of the exports page (`decisions.csv`, `retained.zip`, ...: `web::exports`);
/// the audit trail with the audit page's filters (all of it without). A file it does
/// not offer is no page.
pub async fn file(
    State(state): State<AppState>,
    Path((c, name)): Path<(String, String)>,
    uri: Uri,
) -> PageResult {
    let Some(file) = ExportFile::parse(&name) else {
        return Ok(error_page(StatusCode::NOT_FOUND, "There is no such page."));
    };
    let audit = match file {
        ExportFile::Record(ExportKind::Audit) => match Query::<AuditQuery>::try_from_uri(&uri) {
            Ok(Query(q)) => Some(q),
            Err(rejection) => return Ok(rejection.into_response()),
        },
        _ => None,
    };
    let campaign = state.store.campaign(&c).await?;
    let filter = match &audit {
        Some(q) => q.filter()?,
        None => AuditFilter::default(),
    };
    let now = crate::web::pages::stats::now_seconds();
    let made = file
        .make(&state.store, &state.config, &campaign, &filter, now)
        .await?;
    Ok(download(made))
}
