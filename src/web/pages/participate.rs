//! Participants' own pages: the human baseline taken question by question (the study's
//! pages are in `study.rs`; a link is exchanged for a session in `web::session`).
//!
//! A participant's URLs name the baseline by its number and a presentation by its
//! place in their own order; the clip is a random token. Nothing here puts a question
//! id, clip id, source, key, campaign name or another rotation's order in front of them.

use super::{Chrome, FormFields, PageResult, render};
use crate::domain::Part;
use crate::domain::baseline::{letter, letter_index};
use crate::error::Error;
use crate::store::baseline::{Baseline, BaselineProgress};
use crate::store::sessions::Session;
use crate::web::routes::{BASELINE, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;

#[derive(Template)]
#[template(path = "baseline/start.html")]
struct StartPage {
    chrome: Chrome,
    baseline: i64,
    consent: Vec<String>,
    progress: BaselineProgress,
    percent: i64,
    code: Option<String>,
}

/// A part's consent text as paragraphs.
pub fn paragraphs(text: &str) -> Vec<String> {
    text.split("\n\n")
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `/baseline/{baseline}`: what it asks, the consent text, progress, the way on, and at
/// the end the completion code.
pub async fn start(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<i64>,
) -> PageResult {
    let baseline = state.store.baseline_by_id(id).await?;
    let progress = state
        .store
        .baseline_progress(&baseline, &session.user)
        .await?;
    let consent = state
        .store
        .part_settings(baseline.campaign_id, Part::Baseline)
        .await?
        .consent;
    let code =
        crate::app::baseline::completion_code(&state.store, &session.user, &progress).await?;
    let chrome = Chrome::new(
        &state,
        &session,
        None,
        "Questions about videos",
        &format!("/baseline/{id}"),
    )
    .await?;
    Ok(render(&StartPage {
        chrome,
        baseline: id,
        consent: paragraphs(&consent),
        percent: super::review::percent(progress.answered, progress.total),
        progress,
        code,
    }))
}

/// `POST /baseline/{baseline}/begin`: draws the participant's questions (once) and opens
/// the first one not answered.
pub async fn begin(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<i64>,
    _form: RawForm,
) -> PageResult {
    let baseline = state.store.baseline_by_id(id).await?;
    let p = state.store.begin_baseline(&baseline, &session.user).await?;
    Ok(super::see_other(&next_url(&baseline, &p)))
}

fn next_url(baseline: &Baseline, p: &BaselineProgress) -> String {
    match p.next {
        Some(n) => format!("/baseline/{}/{n}", baseline.id),
        None => format!("/baseline/{}", baseline.id),
    }
}

/// One option on the page.
pub struct OptionView {
    pub letter: char,
    pub text: String,
    pub chosen: bool,
}

#[derive(Template)]
#[template(path = "baseline/item.html")]
struct ItemPage {
    chrome: Chrome,
    baseline: i64,
    seq: i64,
    progress: BaselineProgress,
    percent: i64,
    text: String,
    video: String,
    options: Vec<OptionView>,
    answered: bool,
    errors: Vec<String>,
}

async fn item_page(
    state: &AppState,
    session: &Session,
    baseline: &Baseline,
    seq: i64,
    errors: Vec<String>,
) -> PageResult {
    let p = state
        .store
        .baseline_presentation(baseline, &session.user, seq)
        .await?;
    let chrome = Chrome::new(
        state,
        session,
        None,
        &format!("Question {seq} of {}", p.progress.total),
        &format!("/baseline/{}/{seq}", baseline.id),
    )
    .await?;
    let page = ItemPage {
        chrome,
        baseline: baseline.id,
        seq,
        percent: super::review::percent(p.progress.answered, p.progress.total),
        progress: p.progress,
        text: p.text,
        video: format!("/baseline/m/{}", p.token),
        options: p
            .options
            .into_iter()
            .enumerate()
            .map(|(i, text)| OptionView {
                letter: letter(i),
                text,
                chosen: p.chosen == Some(i),
            })
            .collect(),
        answered: p.chosen.is_some(),
        errors: errors.clone(),
    };
    let mut resp = render(&page);
    if !errors.is_empty() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// `/baseline/{baseline}/{seq}`: one presentation.
pub async fn item(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((id, seq)): Path<(i64, i64)>,
) -> PageResult {
    let baseline = state.store.baseline_by_id(id).await?;
    item_page(&state, &session, &baseline, seq, Vec::new()).await
}

/// `POST /baseline/{baseline}/{seq}`: the answer (`chosen`: the letter of the shown
/// option), final; then the next question not answered.
pub async fn answer(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((id, seq)): Path<(i64, i64)>,
    RawForm(body): RawForm,
) -> PageResult {
    let baseline = state.store.baseline_by_id(id).await?;
    let form = FormFields::parse(&body)?;
    let raw = form.get("chosen");
    let mut chars = raw.chars();
    let chosen = match (chars.next().and_then(letter_index), chars.next()) {
        (Some(i), None) => i,
        _ => {
            return item_page(
                &state,
                &session,
                &baseline,
                seq,
                vec!["Choose one of the answers first (type its letter).".into()],
            )
            .await;
        }
    };
    match state
        .store
        .answer_baseline(&baseline, &session.user, seq, chosen)
        .await
    {
        Ok(p) => Ok(super::see_other(&next_url(&baseline, &p))),
        Err(Error::Invalid(m) | Error::Conflict(m)) => {
            item_page(&state, &session, &baseline, seq, vec![m]).await
        }
        Err(Error::Field { message, .. }) => {
            item_page(&state, &session, &baseline, seq, vec![message]).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The human baseline, taken question by question.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new("GET", "/baseline/{baseline}", BASELINE, Page, get(start)),
        Route::new(
            "POST",
            "/baseline/{baseline}/begin",
            BASELINE,
            Page,
            post(begin),
        ),
        Route::new(
            "GET",
            "/baseline/{baseline}/{seq}",
            BASELINE,
            Page,
            get(item),
        ),
        Route::new(
            "POST",
            "/baseline/{baseline}/{seq}",
            BASELINE,
            Page,
            post(answer),
        ),
    ]
}
