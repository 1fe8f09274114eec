//! Who reviews which task: the pairs in force, and changing one.

use crate::domain::pairing::Pairing;
use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, FormFields, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};

pub struct PairRow {
    pub code: String,
    pub name: String,
    pub rater1: String,
    pub rater2: String,
    pub overridden: bool,
    pub problem: String,
}

#[derive(Template)]
#[template(path = "admin/pairs.html")]
struct PairsPage {
    chrome: Chrome,
    campaign: String,
    rows: Vec<PairRow>,
    pool: Vec<(i64, String)>,
    /// The protocol pairs per clip, by least open work: no task pairs to set.
    per_clip: bool,
    /// Per clip: each pool member (index, name) and the items waiting for them.
    work: Vec<(i64, String, String)>,
    /// Per clip: fewer than two members can take clips, so new ones wait.
    short: bool,
}

pub async fn pairs(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let tasks = state.store.tasks(&campaign).await?;
    let pool = state
        .store
        .pool_entries()
        .await?
        .into_iter()
        .filter(|e| e.campaign == c)
        .map(|e| (e.index, e.user))
        .collect();
    let per_clip = campaign.taxonomy.pairing == Pairing::LeastOpenWork;
    let members = if per_clip {
        state.store.open_work(&campaign).await?
    } else {
        Vec::new()
    };
    let short = members.iter().filter(|m| m.2.is_some()).count() < 2;
    let work = members
        .into_iter()
        .map(|(i, name, open)| {
            let words = match open {
                Some(n) => format!("{n} item(s) waiting"),
                None => "disabled: takes no new clips".into(),
            };
            (i, name, words)
        })
        .collect();
    let here = format!("/c/{c}/admin/pairs");
    let chrome = Chrome::new(&state, &session, Some(&c), "Validator pairs", &here).await?;
    Ok(render(&PairsPage {
        chrome,
        per_clip,
        work,
        short,
        campaign: c,
        rows: tasks
            .into_iter()
            .map(|t| PairRow {
                code: t.code,
                name: t.name,
                rater1: t.rater1.unwrap_or_default(),
                rater2: t.rater2.unwrap_or_default(),
                overridden: t.overridden,
                problem: t.pair_problem.unwrap_or_default(),
            })
            .collect(),
        pool,
    }))
}

pub async fn set_pair(
    State(state): State<AppState>,
    Extension(_session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let task = form.get("task").trim().to_string();
    let (r1, r2) = (
        form.get("rater1").trim().to_string(),
        form.get("rater2").trim().to_string(),
    );
    let change = if form.get("action").trim() == "clear" {
        None
    } else {
        Some((r1.as_str(), r2.as_str()))
    };
    let message = match state.store.set_pair(&campaign, &task, change).await {
        Ok(t) => match (t.rater1, t.rater2) {
            (Some(a), Some(b)) => {
                format!("{task} is now reviewed by {a} (rater 1) and {b} (rater 2).")
            }
            _ => format!("{task} has no pair."),
        },
        Err(e @ (Error::Invalid(_) | Error::NotFound(_) | Error::Conflict(_))) => {
            format!("Not changed. {}", crate::web::pages::for_people(&e))
        }
        Err(e) => return Err(e.into()),
    };
    Ok(crate::web::flash::redirect(
        &format!("/c/{c}/admin/pairs"),
        &message,
    ))
}
