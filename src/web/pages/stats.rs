//! The QC dashboard: Tables 11-13 with their plots, the reasons, the validators and
//! the author queue, with every table to download as CSV, JSON and LaTeX.

use super::{Chrome, PageResult, render};
use crate::domain::facts::{Scope, Versions};
use crate::domain::taxonomy::Table;
use crate::error::Error;
use crate::report::format::{Format, TableId, thousands};
use crate::report::quality::ReviewQualityReply;
use crate::report::{QcReport, StageSummary, svg};
use crate::store::catalog::Campaign;
use crate::store::sessions::Session;
use crate::web::routes::{AUTHOR_OR_ADMIN, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;

pub use crate::web::scope::ScopeQuery;

/// One row of the HTML Table 13.
pub struct T13Row {
    pub label: &'static str,
    pub stage1: String,
    pub stage2: String,
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "undefined".into(), |v| format!("{:.1}%", v * 100.0))
}

fn count_pct(n: i64, of: i64) -> String {
    if of == 0 {
        thousands(n)
    } else {
        format!("{} ({:.1}%)", thousands(n), n as f64 * 100.0 / of as f64)
    }
}

fn t13_rows(a: &StageSummary, b: &StageSummary) -> Vec<T13Row> {
    let ci = |s: &StageSummary| match s.pooled.cohen_kappa_ci95_bounded {
        Some(c) => format!("{:.3} to {:.3}", c[0], c[1]),
        None => s.pooled.show(None, 3),
    };
    let show = |s: &StageSummary, f: fn(&crate::report::Agreement) -> Option<f64>| {
        s.pooled.show(f(&s.pooled), 3)
    };
    let row = |label, x: String, y: String| T13Row {
        label,
        stage1: x,
        stage2: y,
    };
    vec![
        row(
            "Items reviewed",
            thousands(a.items_reviewed),
            thousands(b.items_reviewed),
        ),
        row(
            "Both pass",
            count_pct(a.both_pass, a.items_reviewed),
            count_pct(b.both_pass, b.items_reviewed),
        ),
        row(
            "Both reject",
            count_pct(a.both_reject, a.items_reviewed),
            count_pct(b.both_reject, b.items_reviewed),
        ),
        row(
            "Split (author-resolved)",
            count_pct(a.split, a.items_reviewed),
            count_pct(b.split, b.items_reviewed),
        ),
        row(
            "… accepted",
            thousands(a.split_accepted),
            thousands(b.split_accepted),
        ),
        row(
            "… rejected",
            thousands(a.split_rejected),
            thousands(b.split_rejected),
        ),
        row(
            "… waiting for an author",
            thousands(a.split_pending),
            thousands(b.split_pending),
        ),
        row(
            "Raw agreement rate",
            pct(a.pooled.raw_agreement),
            pct(b.pooled.raw_agreement),
        ),
        row(
            "Cohen's κ (pooled)",
            show(a, |x| x.cohen_kappa),
            show(b, |x| x.cohen_kappa),
        ),
        row("κ 95% CI (Wald, truncated to [−1, 1])", ci(a), ci(b)),
        row(
            "Gwet's AC1",
            show(a, |x| x.gwet_ac1),
            show(b, |x| x.gwet_ac1),
        ),
        row("PABAK", show(a, |x| x.pabak), show(b, |x| x.pabak)),
        row(
            "Krippendorff's α",
            show(a, |x| x.krippendorff_alpha),
            show(b, |x| x.krippendorff_alpha),
        ),
        row(
            "Not yet decided by both (left out)",
            thousands(a.pending),
            thousands(b.pending),
        ),
    ]
}

pub struct ValidatorRow {
    pub name: String,
    pub stage: i64,
    pub verdicts: i64,
    pub pass_rate: String,
    pub median: String,
}

/// One rater's row of the review-quality table.
pub struct QualityRow {
    pub name: String,
    pub stage: i64,
    pub ratings: usize,
    pub known: String,
    pub sensitivity: String,
    pub specificity: String,
}

/// One stage's line under the review-quality table.
pub struct QualityStage {
    pub stage: i64,
    pub items: usize,
    pub retained: usize,
    pub residual: String,
    /// Why the figures are bounds, when they are.
    pub reason: Option<String>,
    /// Prevalence of defects per task, in words.
    pub prevalence: Vec<(String, String)>,
}

pub struct ReasonLine {
    pub stage: i64,
    pub task: String,
    pub reason: String,
    pub n: i64,
}

#[derive(Template)]
#[template(path = "stats.html")]
struct StatsPage {
    chrome: Chrome,
    campaign: String,
    query: String,
    tasks: Vec<String>,
    pairs: Vec<String>,
    task: String,
    pair: String,
    all_versions: bool,
    /// The headings of the three QC tables, as the protocol names them.
    headings: [String; 3],
    t13: Vec<T13Row>,
    /// Whether the campaign reviews clips: without, no Stage 1 column, Table 11 or
    /// Stage 1 figures.
    clip_review: bool,
    ci_note: &'static str,
    t11_svg: String,
    t12_svg: String,
    kappa1_svg: String,
    kappa2_svg: String,
    reasons1_svg: String,
    reasons2_svg: String,
    reasons: Vec<ReasonLine>,
    /// Linked pairs per task, when the campaign links questions.
    linked: Vec<crate::report::PairRow>,
    validators: Vec<ValidatorRow>,
    quality: Vec<QualityRow>,
    quality_stages: Vec<QualityStage>,
    quality1_svg: String,
    quality2_svg: String,
    quality_model: String,
    quality_minimum: usize,
    blind: Option<crate::report::blind::BlindKeyReply>,
    known: Option<crate::report::known::KnownItemsReply>,
    min_recent: usize,
    waiting1: i64,
    waiting2: i64,
}

async fn report_for(
    state: &AppState,
    c: &str,
    q: &ScopeQuery,
) -> Result<(Campaign, QcReport, ReviewQualityReply), Error> {
    let campaign = state.store.campaign(c).await?;
    let scope = q.scope()?;
    let (report, quality) =
        crate::app::qc_report_with_quality(&state.store, &campaign, &scope).await?;
    Ok((campaign, report, quality))
}

impl StatsPage {
    /// A fraction as a whole percentage: "80%".
    fn pct(&self, x: &f64) -> String {
        format!("{:.0}%", x * 100.0)
    }

    /// A blind-answer share with its interval: "0.750 [0.301, 0.954]".
    fn share(&self, r: &crate::report::blind::BlindKeyRow) -> String {
        match (r.share, r.ci95) {
            (Some(s), Some([a, b])) => format!("{s:.3} [{a:.3}, {b:.3}]"),
            (Some(s), None) => format!("{s:.3}"),
            _ => "no answers".into(),
        }
    }
}

fn quality_rows(q: &ReviewQualityReply) -> Vec<QualityRow> {
    q.stages
        .iter()
        .flat_map(|st| q.raters(st.stage))
        .map(|r| QualityRow {
            name: r.validator.clone(),
            stage: r.stage,
            ratings: r.ratings,
            known: format!("{} / {}", r.known_defects, r.known_sound),
            sensitivity: r.sensitivity.text(3),
            specificity: r.specificity.text(3),
        })
        .collect()
}

fn quality_stages(q: &ReviewQualityReply) -> Vec<QualityStage> {
    q.stages
        .iter()
        .map(|st| QualityStage {
            stage: st.stage,
            items: st.items,
            retained: st.retained,
            residual: st.residual_defect_rate.text(3),
            reason: st.reason.clone(),
            prevalence: st
                .prevalence
                .iter()
                .map(|(task, f)| (task.clone(), f.text(3)))
                .collect(),
        })
        .collect()
}

pub async fn dashboard(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    Query(q): Query<ScopeQuery>,
) -> PageResult {
    let (campaign, report, quality) = report_for(&state, &c, &q).await?;
    // Every pair of the campaign, for the scope menu (from the unscoped figures).
    let unscoped =
        q.task.as_deref().unwrap_or("").is_empty() && q.pair.as_deref().unwrap_or("").is_empty();
    let all = if unscoped {
        report.clone()
    } else {
        crate::app::qc_report(&state.store, &campaign, &Scope::default()).await?
    };
    let mut pairs: Vec<String> = all
        .stage1
        .per_pair
        .iter()
        .chain(all.stage2.per_pair.iter())
        .map(|p| format!("{},{}", p.rater1, p.rater2))
        .collect();
    pairs.sort();
    pairs.dedup();
    let here = format!("/c/{c}/stats");
    let chrome = Chrome::new(&state, &session, Some(&c), "Statistics", &here).await?;
    let tax = &campaign.taxonomy;
    let caption = report.caption(now_seconds());
    let (one, two) = (
        report.stage_caption(1, &caption),
        report.stage_caption(2, &caption),
    );
    let page = StatsPage {
        chrome,
        query: q.query(),
        tasks: tax.tasks.iter().map(|t| t.code.clone()).collect(),
        pairs,
        task: q.task.clone().unwrap_or_default(),
        pair: q.pair.clone().unwrap_or_default(),
        all_versions: report.versions == Versions::All,
        headings: [
            tax.tables
                .heading(Table::T11, "Stage 1, clips retained per task"),
            tax.tables.heading(
                Table::T12,
                "Stage 2, questions rejected per task and QA type",
            ),
            tax.tables.heading(Table::T13, "inter-annotator agreement"),
        ],
        t13: t13_rows(&report.stage1, &report.stage2),
        clip_review: report.clip_review,
        ci_note: crate::stats::agreement::KAPPA_CI95_BOUNDED_NOTE,
        t11_svg: svg::t11_grid(&report, tax, &one),
        t12_svg: svg::t12_heatmap(&report, tax, &two),
        kappa1_svg: svg::kappa_bars(&report.stage1, "Stage 1 (clips)", &tax.tables, &one),
        kappa2_svg: svg::kappa_bars(&report.stage2, "Stage 2 (questions)", &tax.tables, &two),
        reasons1_svg: svg::reason_bars(&report, tax, 1, &one),
        reasons2_svg: svg::reason_bars(&report, tax, 2, &two),
        reasons: report
            .reasons
            .iter()
            .map(|r| ReasonLine {
                stage: r.stage,
                task: r.task.clone(),
                reason: svg::reason_label(tax, r.stage, &r.reason),
                n: r.n,
            })
            .collect(),
        linked: report.pairs.clone(),
        validators: report
            .validators
            .iter()
            .map(|v| ValidatorRow {
                name: v.validator.clone(),
                stage: v.stage,
                verdicts: v.verdicts,
                pass_rate: if v.verdicts > 0 {
                    format!("{:.1}%", v.valid as f64 * 100.0 / v.verdicts as f64)
                } else {
                    "undefined".into()
                },
                median: v
                    .median_ms
                    .map_or("-".into(), |ms| format!("{:.1} s", ms / 1000.0)),
            })
            .collect(),
        quality: quality_rows(&quality),
        quality_stages: quality_stages(&quality),
        quality1_svg: if report.clip_review {
            crate::report::quality::forest(&quality, 1, &one)
        } else {
            String::new()
        },
        quality2_svg: crate::report::quality::forest(&quality, 2, &two),
        quality_model: quality.model.clone(),
        quality_minimum: crate::report::quality::MIN_QUALITY_COUNT,
        blind: crate::report::blind::build(&state.store.blind_records(&campaign).await?),
        known: crate::app::known::figures(&state.store, &campaign).await?,
        min_recent: crate::report::known::MIN_RECENT_DEFECTS,
        waiting1: report.stage1.split_pending,
        waiting2: report.stage2.split_pending,
        campaign: c,
    };
    Ok(render(&page))
}

/// Now, to the second: the time figures say they were computed.
pub fn now_seconds() -> i64 {
    crate::clock::now_micros() / 1_000_000 * 1_000_000
}

/// A figure file: `fig-NAME.svg`, `.pdf` or `.png`, NAME one of the QC figures (for
/// the scope) or the study's.
async fn figure(
    state: &AppState,
    campaign: &Campaign,
    scope: &Scope,
    name: &str,
    ext: &str,
) -> Result<(Vec<u8>, &'static str), Error> {
    let computed = now_seconds();
    let mut figures = Vec::new();
    if name.starts_with("baseline") {
        let method = crate::stats::circular::IntervalMethod::ClopperPearson;
        if let Some(r) = crate::app::baseline::report(&state.store, campaign, method).await? {
            let caption = r.caption(&campaign.name, computed);
            figures = crate::report::baseline::figures(&r, &caption);
        }
    } else if name.starts_with("t14") || name.starts_with("t15") {
        if let Some(r) = crate::app::study_report(&state.store, campaign).await? {
            let caption = r.caption(&campaign.name, computed);
            figures = crate::report::study::figures(&r, &campaign.taxonomy.tables, &caption);
        }
    } else if name.starts_with("quality") {
        let (report, quality) =
            crate::app::qc_report_with_quality(&state.store, campaign, scope).await?;
        figures = crate::report::quality::figures(&quality, &report, &report.caption(computed));
    } else {
        let report = crate::app::qc_report(&state.store, campaign, scope).await?;
        figures = svg::qc_figures(&report, &campaign.taxonomy, &report.caption(computed));
    }
    let f = figures
        .into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| Error::NotFound(format!("no figure `{name}`")))?;
    let svg = f.svg;
    match ext {
        "svg" => Ok((svg.into_bytes(), "image/svg+xml")),
        "pdf" => Ok((
            tokio::task::spawn_blocking(move || crate::report::render::pdf(&svg))
                .await
                .map_err(|e| Error::fault("the PDF failed", e))??,
            "application/pdf",
        )),
        "png" => Ok((
            tokio::task::spawn_blocking(move || crate::report::render::png(&svg))
                .await
                .map_err(|e| Error::fault("the PNG failed", e))??,
            "image/png",
        )),
        other => Err(Error::NotFound(format!(
            "a figure is svg, pdf or png, not `{other}`"
        ))),
    }
}

/// `t11.csv`, `t13.tex`, `t12.json`, ... or `all.json`; figures as `fig-NAME.svg`
/// (or `.pdf`, `.png`).
pub async fn download(
    State(state): State<AppState>,
    Path((c, file)): Path<(String, String)>,
    Query(q): Query<ScopeQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let scope = q.scope()?;
    let (name, ext) = file
        .rsplit_once('.')
        .ok_or_else(|| Error::NotFound(format!("no download `{file}`")))?;
    if let Some(fig) = name.strip_prefix("fig-") {
        let (body, content_type) = figure(&state, &campaign, &scope, fig, ext).await?;
        return Ok((
            [
                (header::CONTENT_TYPE, content_type.to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{c}-{fig}.{ext}\""),
                ),
                (header::CACHE_CONTROL, "no-store".to_string()),
            ],
            body,
        )
            .into_response());
    }
    let format = Format::parse(ext).map_err(Error::NotFound)?;
    let body = if name == "baseline-positions" && format == Format::Csv {
        let method = crate::stats::circular::IntervalMethod::ClopperPearson;
        let report = crate::app::baseline::report(&state.store, &campaign, method)
            .await?
            .ok_or_else(|| Error::NotFound(format!("campaign `{c}` has no baseline answers")))?;
        crate::report::baseline::position_table(&report).to_csv()?
    } else if name == "review-quality" {
        let (_, quality) =
            crate::app::qc_report_with_quality(&state.store, &campaign, &scope).await?;
        match format {
            Format::Csv => crate::report::quality::csv_table(&quality).to_csv()?,
            Format::Latex => crate::report::quality::latex_table(&quality),
            Format::Json => serde_json::to_string_pretty(&quality)
                .map_err(|e| Error::fault("cannot write JSON", e))?,
        }
    } else if name == "all" && format == Format::Json {
        serde_json::to_string_pretty(
            &crate::app::stats_json(&state.store, &campaign, &scope).await?,
        )
        .map_err(|e| Error::fault("cannot write JSON", e))?
    } else {
        let table = TableId::parse(name).map_err(Error::NotFound)?;
        crate::app::table_text(&state.store, &campaign, &scope, table, format).await?
    };
    Ok((
        [
            (header::CONTENT_TYPE, format.content_type().to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{c}-{name}.{}\"", format.extension()),
            ),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response())
}

/// The QC dashboard and its downloads.
pub fn routes() -> Vec<Route> {
    use axum::routing::get;
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/stats",
            AUTHOR_OR_ADMIN,
            Page,
            get(dashboard),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/stats/{file}",
            AUTHOR_OR_ADMIN,
            Page,
            get(download),
        ),
    ]
}
