//! The human baseline's results for admins and authors: accuracy under
//! circular evaluation with its intervals, the position bias, the agreement, each
//! participant's figures, and the downloads.

use super::{Chrome, PageResult, render};
use crate::domain::baseline::letter;
use crate::domain::taxonomy::Table;
use crate::report::baseline::{self as report, BaselineReport, Groups};
use crate::stats::circular::{Accuracy, IntervalMethod, Proportion};
use crate::store::sessions::Session;
use crate::web::routes::{AUTHOR_OR_ADMIN, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};

/// One row of the accuracy table on the page.
pub struct AccuracyRow {
    pub group: &'static str,
    pub key: String,
    pub vanilla: String,
    pub vanilla_n: u64,
    pub circular: String,
    pub circular_n: u64,
    pub incomplete: u64,
}

/// The position bias of one scope on the page.
pub struct BiasRow {
    pub who: String,
    /// "A 26.0% (8) · B ...".
    pub shares: String,
    pub test: String,
}

#[derive(Template)]
#[template(path = "baseline/results.html")]
struct ResultsPage {
    chrome: Chrome,
    campaign: String,
    has_answers: bool,
    participants: usize,
    questions: usize,
    presentations: usize,
    left_out: usize,
    method: &'static str,
    rows: Vec<AccuracyRow>,
    participant_rows: Vec<AccuracyRow>,
    bias: Vec<BiasRow>,
    alpha: String,
    fleiss: String,
    agreement_items: usize,
    accuracy_svg: String,
    positions_svg: String,
    /// The campaign's groups (Table 16), under the heading the protocol gives it.
    groups: Groups,
    groups_heading: String,
}

fn pct(p: &Proportion) -> String {
    match (p.accuracy, p.interval) {
        (Some(a), Some((lo, hi))) => {
            format!("{:.1}% [{:.1}%, {:.1}%]", a * 100.0, lo * 100.0, hi * 100.0)
        }
        (Some(a), None) => format!("{:.1}%", a * 100.0),
        _ => "undefined".into(),
    }
}

fn row(group: &'static str, key: &str, a: &Accuracy) -> AccuracyRow {
    AccuracyRow {
        group,
        key: key.to_string(),
        vanilla: pct(&a.vanilla),
        vanilla_n: a.vanilla.n,
        circular: pct(&a.circular),
        circular_n: a.circular.n,
        incomplete: a.incomplete,
    }
}

fn bias_row(who: &str, b: &crate::stats::circular::PositionBias) -> BiasRow {
    BiasRow {
        who: who.to_string(),
        shares: b
            .shares
            .iter()
            .zip(&b.counts)
            .enumerate()
            .map(|(i, (s, n))| format!("{} {:.1}% ({n})", letter(i), s * 100.0))
            .collect::<Vec<_>>()
            .join(" · "),
        test: match (b.chi_square, b.p_value) {
            (Some(c), Some(p)) => format!("χ²({}) = {c:.2}, p = {p:.4}", b.df),
            _ => "undefined".into(),
        },
    }
}

fn page(
    chrome: Chrome,
    campaign: String,
    (groups, groups_heading): (Groups, String),
    r: Option<&BaselineReport>,
    computed: i64,
) -> ResultsPage {
    let Some(r) = r else {
        return ResultsPage {
            chrome,
            groups,
            groups_heading,
            campaign,
            has_answers: false,
            participants: 0,
            questions: 0,
            presentations: 0,
            left_out: 0,
            method: "",
            rows: vec![],
            participant_rows: vec![],
            bias: vec![],
            alpha: String::new(),
            fleiss: String::new(),
            agreement_items: 0,
            accuracy_svg: String::new(),
            positions_svg: String::new(),
        };
    };
    let mut rows = vec![row("Overall", "", &r.overall)];
    rows.extend(r.per_level.iter().map(|(k, a)| row("Level", k, a)));
    rows.extend(r.per_task.iter().map(|(k, a)| row("Task", k, a)));
    rows.extend(r.per_qa_type.iter().map(|(k, a)| row("QA type", k, a)));
    if let Some(lp) = &r.linked_pairs {
        rows.push(row("Linked pairs (jointly)", "", &lp.overall));
    }
    let participant_rows = r
        .per_participant
        .iter()
        .map(|(k, a)| row("Participant", k, a))
        .collect();
    let mut bias = vec![bias_row("all answers", &r.position_bias)];
    bias.extend(
        r.position_bias_per_participant
            .iter()
            .map(|(p, b)| bias_row(p, b)),
    );
    let caption = r.caption(&campaign, computed);
    ResultsPage {
        chrome,
        groups,
        groups_heading,
        participants: r.participants,
        questions: r.questions,
        presentations: r.presentations,
        left_out: r.left_out,
        method: match r.interval_method {
            IntervalMethod::ClopperPearson => "exact binomial (Clopper-Pearson)",
            IntervalMethod::Wilson => "Wilson score",
        },
        rows,
        participant_rows,
        bias,
        alpha: r
            .agreement
            .krippendorff_alpha
            .map_or_else(|| "undefined".into(), |a| format!("{a:.3}")),
        fleiss: r
            .agreement
            .fleiss_kappa
            .as_ref()
            .map_or_else(|| "undefined".into(), |k| format!("{:.3}", k.value)),
        agreement_items: r.agreement.items,
        accuracy_svg: report::accuracy_figure(r, &caption),
        positions_svg: report::position_figure(r, &caption),
        has_answers: true,
        campaign,
    }
}

pub async fn results(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let r = crate::app::baseline::report(&state.store, &campaign, IntervalMethod::ClopperPearson)
        .await?;
    let groups = crate::app::baseline::groups(&state.store, &campaign).await?;
    let heading = campaign
        .taxonomy
        .tables
        .heading(Table::T16, "the annotator pool");
    let here = format!("/c/{c}/baseline/results");
    let chrome = Chrome::new(&state, &session, Some(&c), "Human baseline", &here).await?;
    Ok(render(&page(
        chrome,
        c,
        (groups, heading),
        r.as_ref(),
        super::stats::now_seconds(),
    )))
}

/// The human baseline's results.
pub fn routes() -> Vec<Route> {
    use axum::routing::get;
    vec![Route::new(
        "GET",
        "/c/{campaign}/baseline/results",
        AUTHOR_OR_ADMIN,
        Page,
        get(results),
    )]
}
