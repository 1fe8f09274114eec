//! The blind study in the browser: the participant's sets (and the same through the
//! API), the admin's view of the study, and the results dashboard (Tables 14 and 15).
//!
//! Participants' URLs name the study by its number and a set by its place in their own
//! order; clips are letters and random tokens. Nothing here puts a set id, clip id,
//! source, truth, file name or campaign name in front of a participant.

use super::{Chrome, FormFields, PageResult, render};
use crate::domain::study::{Display, RANK_AXES, SetAnswer, Truth};
use crate::domain::taxonomy::{Table, Tables};
use crate::error::Error;
use crate::report::study::{self as report, StudyReport};
use crate::store::sessions::Session;
use crate::store::study::{ShownSet, Study};
use crate::web::routes::{ADMIN, AUTHOR_OR_ADMIN, Kind::Page, PARTICIPANT, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;
use axum::response::Response;

/// One clip on a participant's page.
pub struct ClipView {
    pub label: String,
    pub video: Option<String>,
    pub strip: Option<String>,
}

/// One row of the answer form: a clip's ranks and label as chosen (or stored).
pub struct AnswerRow {
    pub slot: usize,
    pub label: String,
    /// (axis, the chosen rank on it; 0 = none), axes in the order of `RANK_AXES`.
    pub ranks: Vec<(usize, i64)>,
    /// "real", "fake" or "".
    pub truth: &'static str,
}

#[derive(Template)]
#[template(path = "study/set.html")]
struct SetPage {
    chrome: Chrome,
    study: i64,
    position: i64,
    total: i64,
    answered_sets: i64,
    percent: i64,
    clips: Vec<ClipView>,
    axes: Vec<(usize, &'static str)>,
    ranks: Vec<i64>,
    rows: Vec<AnswerRow>,
    answered: bool,
    errors: Vec<String>,
    next: Option<i64>,
    /// Frames in a strip (laid out 4 to a row), so the page can number them.
    frames: i64,
}

#[derive(Template)]
#[template(path = "study/start.html")]
struct StartPage {
    chrome: Chrome,
    consent: Vec<String>,
    code: Option<String>,
    study: i64,
    total: i64,
    answered: i64,
    percent: i64,
    n: usize,
    next: Option<i64>,
}

fn percent(done: i64, total: i64) -> i64 {
    super::review::percent(done, total)
}

fn clip_views(study: &Study, set: &ShownSet) -> Vec<ClipView> {
    set.clips
        .iter()
        .map(|c| {
            let (video, strip) = crate::web::media::study_clip_urls(study.display, &c.token);
            ClipView {
                label: c.label.clone(),
                video,
                strip,
            }
        })
        .collect()
}

fn rows_of(set: &ShownSet, answer: Option<&SetAnswer>) -> Vec<AnswerRow> {
    let answer = answer.or(set.answer.as_ref());
    set.clips
        .iter()
        .enumerate()
        .map(|(slot, c)| AnswerRow {
            slot,
            label: c.label.clone(),
            ranks: (0..RANK_AXES.len())
                .map(|a| {
                    let chosen = answer
                        .and_then(|x| x.ranks[a].get(slot).copied().flatten())
                        .unwrap_or(0);
                    (a, chosen)
                })
                .collect(),
            truth: answer
                .and_then(|x| x.labels.get(slot).copied().flatten())
                .map_or("", Truth::as_str),
        })
        .collect()
}

async fn set_page(
    state: &AppState,
    session: &Session,
    study: &Study,
    position: i64,
    typed: Option<&SetAnswer>,
    errors: Vec<String>,
) -> Result<Response, Error> {
    let set = state
        .store
        .study_set(study, &session.user, position)
        .await?;
    let here = format!("/study/{}/{position}", study.id);
    let chrome = Chrome::new(
        state,
        session,
        None,
        &format!("Set {position} of {}", set.total),
        &here,
    )
    .await?;
    let n = set.clips.len();
    let page = SetPage {
        chrome,
        study: study.id,
        position,
        total: set.total,
        answered_sets: set.answered_sets,
        percent: percent(set.answered_sets, set.total),
        clips: clip_views(study, &set),
        axes: RANK_AXES
            .iter()
            .enumerate()
            .map(|(i, a)| (i, a.title()))
            .collect(),
        ranks: (1..=n as i64).collect(),
        rows: rows_of(&set, typed),
        answered: set.answer.is_some(),
        errors: errors.clone(),
        next: set.next,
        frames: study.frames,
    };
    let mut resp = render(&page);
    if !errors.is_empty() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// `/study/{study}`: what the study asks, progress, and the way on.
pub async fn start(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<i64>,
) -> PageResult {
    let study = state.store.study_by_id(id).await?;
    let p = state.store.study_progress(&study, &session.user).await?;
    let consent = state
        .store
        .part_settings(study.campaign_id, crate::domain::Part::Study)
        .await?
        .consent;
    let code = if p.next.is_none() && p.total > 0 {
        state
            .store
            .completion_code(&session.user, crate::domain::Part::Study)
            .await?
    } else {
        None
    };
    let chrome = Chrome::new(&state, &session, None, "Study", &format!("/study/{id}")).await?;
    Ok(render(&StartPage {
        chrome,
        consent: super::participate::paragraphs(&consent),
        code,
        study: id,
        total: p.total,
        answered: p.answered,
        percent: percent(p.answered, p.total),
        n: study.sources.len(),
        next: p.next,
    }))
}

/// `/study/{study}/{position}`: one set.
pub async fn set(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((id, position)): Path<(i64, i64)>,
) -> PageResult {
    let study = state.store.study_by_id(id).await?;
    Ok(set_page(&state, &session, &study, position, None, Vec::new()).await?)
}

/// Reads the answer form: `r{axis}_{slot}` ranks and `rf_{slot}` labels.
fn answer_of(form: &FormFields, n: usize) -> SetAnswer {
    SetAnswer {
        ranks: std::array::from_fn(|a| {
            // A rank or label not given or not a number is missing: `check_ranking` names it.
            (0..n)
                .map(|slot| form.get(&format!("r{a}_{slot}")).parse::<i64>().ok())
                .collect()
        }),
        labels: (0..n)
            .map(|slot| Truth::parse(&form.get(&format!("rf_{slot}"))).ok())
            .collect(),
    }
}

pub async fn answer(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((id, position)): Path<(i64, i64)>,
    RawForm(body): RawForm,
) -> PageResult {
    let study = state.store.study_by_id(id).await?;
    let form = FormFields::parse(&body)?;
    let answer = answer_of(&form, study.sources.len());
    match state
        .store
        .answer_study_set(&study, &session.user, position, &answer)
        .await
    {
        Ok(p) => Ok(super::see_other(&match p.next {
            Some(n) => format!("/study/{id}/{n}"),
            None => format!("/study/{id}"),
        })),
        Err(Error::Invalid(m)) => Ok(set_page(
            &state,
            &session,
            &study,
            position,
            Some(&answer),
            m.lines().map(str::to_string).collect(),
        )
        .await?),
        Err(e) => Err(e.into()),
    }
}

// ---- Admins and authors -----------------------------------------------------------

pub struct ParticipantLine {
    pub name: String,
    pub answered: i64,
    pub total: i64,
    pub percent: i64,
    pub imported: bool,
}

#[derive(Template)]
#[template(path = "study/admin.html")]
struct AdminPage {
    chrome: Chrome,
    campaign: String,
    study: Option<i64>,
    sets: i64,
    clips: i64,
    sources: Vec<String>,
    display: &'static str,
    frames: i64,
    ffmpeg: bool,
    participants: Vec<ParticipantLine>,
    pager: Option<super::Pager>,
    /// The name prefix searched for.
    name: String,
}

/// The participant list's search (the start of a name) and its page.
#[derive(serde::Deserialize, Default)]
pub struct ParticipantsFilter {
    #[serde(default)]
    name: String,
    #[serde(flatten)]
    at: super::At,
}

pub async fn admin(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(filter): axum::extract::Query<ParticipantsFilter>,
) -> PageResult {
    use crate::domain::paging;
    let campaign = state.store.campaign(&c).await?;
    let prefix = paging::prefix("name", Some(&filter.name)).map_err(Error::from)?;
    let cursor = filter.at.cursor()?;
    let here = format!("/c/{c}/admin/study");
    let chrome = Chrome::new(&state, &session, Some(&c), "Study", &here).await?;
    let mut page = AdminPage {
        chrome,
        campaign: c,
        study: None,
        sets: 0,
        clips: 0,
        sources: Vec::new(),
        display: "video",
        frames: 8,
        ffmpeg: crate::io::video::ffmpeg_available(),
        participants: Vec::new(),
        pager: None,
        name: prefix.clone().unwrap_or_default(),
    };
    if let Some(study) = state.store.study(&campaign).await? {
        let (sets, clips) = state.store.study_size(&study).await?;
        page.study = Some(study.id);
        page.sets = sets;
        page.clips = clips;
        page.sources = study.sources.clone();
        page.display = study.display.as_str();
        page.frames = study.frames;
        let lines: Vec<ParticipantLine> = state
            .store
            .study_participants(&study)
            .await?
            .into_iter()
            .map(|p| ParticipantLine {
                percent: percent(p.answered, p.total),
                name: p.name,
                answered: p.answered,
                total: p.total,
                imported: p.imported,
            })
            .collect();
        let wanted = prefix.as_deref().unwrap_or("");
        let listed = paging::page_of(
            lines,
            |p| &p.name,
            |p| p.name.starts_with(wanted),
            cursor.as_ref(),
            paging::PAGE_ROWS,
        )
        .map_err(Error::from)?;
        page.pager = Some(super::Pager::new(
            &here,
            &[("name", wanted)],
            &listed,
            |p| paging::Cursor::token(false, &p.name),
        ));
        page.participants = listed.rows;
    }
    Ok(render(&page))
}

pub async fn set_display(
    State(state): State<AppState>,
    Extension(_session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let display = Display::parse(&form.get("display")).map_err(|m| Error::field("display", m))?;
    let frames: i64 = form
        .get("frames")
        .trim()
        .parse()
        .map_err(|_| Error::field("frames", "a whole number of frames"))?;
    let message = match crate::app::set_study_display(
        &state.store,
        &state.config,
        &campaign,
        display,
        frames,
    )
    .await
    {
        Ok(made) => match display {
            Display::Video => "Participants now see the videos.".to_string(),
            Display::Strip => {
                format!("Participants now see strips of {frames} frames ({made} drawn now).")
            }
        },
        Err(e @ (Error::Field { .. } | Error::Invalid(_))) => {
            format!("Not changed. {}", super::for_people(&e))
        }
        Err(e) => return Err(e.into()),
    };
    Ok(crate::web::flash::redirect(
        &format!("/c/{c}/admin/study"),
        &message,
    ))
}

pub struct RankRow {
    pub source: String,
    pub cells: Vec<String>,
    pub n: String,
}

pub struct JudgmentRow {
    pub source: String,
    pub truth: &'static str,
    pub judged_fake: String,
    pub counts: String,
    pub fleiss: String,
    pub alpha: String,
}

pub struct DetectionRow {
    pub participant: String,
    pub hit: String,
    pub false_alarm: String,
    pub d_prime: String,
}

#[derive(Template)]
#[template(path = "study/results.html")]
struct ResultsPage {
    chrome: Chrome,
    campaign: String,
    /// The headings of the two study tables, as the protocol names them.
    headings: [String; 2],
    has_study: bool,
    sets: usize,
    responses: usize,
    /// Complete set answers (participant x set), over everyone.
    complete_answers: usize,
    /// "part1: 1 of 3, part2: 3 of 3".
    complete_by_participant: String,
    n_participants: usize,
    notes: Vec<String>,
    participants: String,
    /// The same, in the order of the fake counts.
    participants_slash: String,
    /// Fewer than two participants: no agreement can be computed.
    too_few: bool,
    complete: bool,
    t14: Vec<RankRow>,
    tests: Vec<(String, String, String, String)>,
    t15: Vec<JudgmentRow>,
    pooled_fleiss: String,
    pooled_alpha: String,
    error_rate: String,
    detection: Vec<DetectionRow>,
    t14_svg: String,
    t15_svg: String,
}

fn fixed(x: Option<f64>, places: usize) -> String {
    x.map_or_else(|| "undefined".into(), |v| format!("{v:.places$}"))
}

fn share(x: Option<f64>) -> String {
    x.map_or_else(|| "undefined".into(), |v| format!("{:.1}%", v * 100.0))
}

fn interval(x: Option<(f64, f64)>) -> String {
    x.map_or_else(String::new, |(a, b)| {
        format!(" [{:.1}%, {:.1}%]", a * 100.0, b * 100.0)
    })
}

fn results_page(
    chrome: Chrome,
    campaign: String,
    tables: &Tables,
    r: Option<&StudyReport>,
) -> ResultsPage {
    let headings = [
        tables.heading(Table::T14, "mean rank ± std (1 = best)"),
        tables.heading(Table::T15, "real or generated?"),
    ];
    let Some(r) = r else {
        return ResultsPage {
            chrome,
            campaign,
            headings,
            has_study: false,
            sets: 0,
            responses: 0,
            complete_answers: 0,
            complete_by_participant: String::new(),
            n_participants: 0,
            notes: Vec::new(),
            participants: String::new(),
            participants_slash: String::new(),
            too_few: true,
            complete: false,
            t14: Vec::new(),
            tests: Vec::new(),
            t15: Vec::new(),
            pooled_fleiss: String::new(),
            pooled_alpha: String::new(),
            error_rate: String::new(),
            detection: Vec::new(),
            t14_svg: String::new(),
            t15_svg: String::new(),
        };
    };
    let caption = r.caption(&campaign, super::stats::now_seconds());
    ResultsPage {
        chrome,
        campaign,
        headings,
        has_study: true,
        sets: r.sets,
        responses: r.responses,
        complete_answers: r.complete_answers(),
        complete_by_participant: r
            .complete_sets
            .iter()
            .map(|(p, n)| format!("{p} {n} of {}", r.sets))
            .collect::<Vec<_>>()
            .join(", "),
        n_participants: r.participants.len(),
        notes: r.thin_data_notes(),
        participants: r.participants.join(", "),
        participants_slash: r.participants.join(" / "),
        too_few: r.participants.len() < 2,
        complete: r.complete,
        t14: r
            .sources
            .iter()
            .zip(&r.t14)
            .map(|(s, row)| RankRow {
                source: s.clone(),
                cells: row
                    .iter()
                    .map(|c| match (c.mean, c.std) {
                        (Some(m), Some(sd)) => format!("{m:.2} ± {sd:.2}"),
                        (Some(m), None) => format!("{m:.2}"),
                        _ => "undefined".into(),
                    })
                    .collect(),
                n: row.first().map_or(0, |c| c.n).to_string(),
            })
            .collect(),
        tests: RANK_AXES
            .iter()
            .zip(&r.tests)
            .map(|(a, t)| {
                (
                    a.title().to_string(),
                    t.n_blocks.to_string(),
                    fixed(t.kendall_w, 3),
                    t.friedman.as_ref().map_or("undefined".into(), |f| {
                        format!(
                            "χ² = {:.2} (df {}), p = {}",
                            f.chi2,
                            f.dof,
                            report::p_text(f.p_value)
                        )
                    }),
                )
            })
            .collect(),
        t15: r.t15.iter().map(|j| judgment_row(r, j)).collect(),
        pooled_fleiss: fixed(r.pooled.fleiss_kappa, 3),
        pooled_alpha: fixed(r.pooled.krippendorff_alpha, 3),
        error_rate: format!(
            "{}{}",
            share(r.human_error_rate),
            interval(r.human_error_rate_ci95)
        ),
        detection: r
            .detection
            .iter()
            .map(|d| DetectionRow {
                participant: d.participant.clone(),
                hit: format!(
                    "{} of {} = {}{}",
                    d.hits,
                    d.fakes,
                    share(d.hit_rate),
                    interval(d.hit_rate_ci95)
                ),
                false_alarm: format!(
                    "{} of {} = {}{}",
                    d.false_alarms,
                    d.reals,
                    share(d.false_alarm_rate),
                    interval(d.false_alarm_rate_ci95)
                ),
                d_prime: fixed(d.d_prime, 2),
            })
            .collect(),
        t14_svg: report::t14_ranks(r, tables, &caption),
        t15_svg: report::t15_bars(r, tables, &caption),
    }
}

/// One row of the study's judgment table: a source's share judged generated,
/// each participant's fake labels over the labels they gave, and agreement.
fn judgment_row(r: &StudyReport, j: &report::SourceJudgment) -> JudgmentRow {
    JudgmentRow {
        source: j.source.clone(),
        truth: j.truth.map_or("mixed", |t| match t {
            Truth::Real => "real",
            Truth::Fake => "generated",
        }),
        judged_fake: share(j.judged_fake),
        // Each participant's fake labels over the labels they gave.
        counts: r
            .participants
            .iter()
            .map(|p| match j.labels.get(p).copied().unwrap_or(0) {
                0 => "none labelled".to_string(),
                given => {
                    format!("{} of {given}", j.fake_counts.get(p).copied().unwrap_or(0))
                }
            })
            .collect::<Vec<_>>()
            .join(" / ")
            + &match j.items_unlabelled {
                0 => String::new(),
                n => format!(" ({n} of {} clips unlabelled)", j.items),
            },
        fleiss: fixed(j.agreement.fleiss_kappa, 3),
        alpha: fixed(j.agreement.krippendorff_alpha, 3),
    }
}

pub async fn results(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let r = crate::app::study_report(&state.store, &campaign).await?;
    let here = format!("/c/{c}/study/results");
    let chrome = Chrome::new(&state, &session, Some(&c), "Study results", &here).await?;
    let tables = &campaign.taxonomy.tables;
    Ok(render(&results_page(chrome, c, tables, r.as_ref())))
}

/// The blind study: the participants' sets, its set-up and its results.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new("GET", "/study/{study}", PARTICIPANT, Page, get(start)),
        Route::new(
            "GET",
            "/study/{study}/{position}",
            PARTICIPANT,
            Page,
            get(set),
        ),
        Route::new(
            "POST",
            "/study/{study}/{position}",
            PARTICIPANT,
            Page,
            post(answer),
        ),
        Route::new("GET", "/c/{campaign}/admin/study", ADMIN, Page, get(admin)),
        Route::new(
            "POST",
            "/c/{campaign}/admin/study/display",
            ADMIN,
            Page,
            post(set_display),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/study/results",
            AUTHOR_OR_ADMIN,
            Page,
            get(results),
        ),
    ]
}
