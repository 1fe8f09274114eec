//! Calibration pages: the validator's round (each held-out item, then its known verdict
//! and reasons), and the admin's view of everyone's calibration with the settings.

use super::review::{Player, QuestionLine, TaskLine, player, question_line, task_line};
use super::{
    Carried, Chrome, FormFields, PageResult, ReasonBox, for_people, pretty, reason_boxes, render,
    stage,
};
use crate::domain::rules::check_verdict;
use crate::domain::taxonomy::Taxonomy;
use crate::domain::video::Flaw;
use crate::domain::{Reason, Stage, Verdict};
use crate::error::Error;
use crate::store::calibration::{
    CalibrationFeedback, CalibrationKey, CalibrationRound, CalibrationScore, CalibrationState,
    RoundResult,
};
use crate::store::catalog::Settings;
use crate::store::review::{VerdictRequest, VersionRule};
use crate::store::sessions::Session;
use crate::web::routes::{ADMIN, Kind::Page, Route, VALIDATOR};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;

#[derive(Template)]
#[template(path = "calibration/status.html")]
struct StatusPage {
    chrome: Chrome,
    campaign: String,
    state: &'static str,
    round: i64,
    decided: i64,
    agreed: i64,
    required: i64,
    total: i64,
    pool: i64,
    threshold_pct: i64,
    percent: i64,
    next: Option<String>,
    /// Their rounds, the latest first.
    rounds: Vec<RoundView>,
    /// The known items of the live queue paused their review (which items is not said).
    paused: bool,
    /// The protocol's first stage: 1, or 2 when it reviews no clips.
    first_stage: i64,
}

/// A verdict of a round that differed from the known one, and why the known one holds.
pub struct MissedView {
    pub stage: i64,
    pub item_id: String,
    pub mine: String,
    pub known: String,
    pub why: String,
}

/// One round of one validator, in words.
pub struct RoundView {
    pub validator: String,
    pub round: i64,
    pub result: &'static str,
    pub started_by: String,
    pub decided: usize,
    pub agreed: usize,
    pub agreement: String,
    pub missed: Vec<MissedView>,
}

fn round_view(tax: &Taxonomy, r: &CalibrationRound) -> RoundView {
    let decided = r.decisions.len();
    let agreed = r.agreed();
    RoundView {
        validator: r.validator.clone(),
        round: r.round,
        result: match r.result {
            RoundResult::Passed => "passed",
            RoundResult::Failed => "below the threshold",
            RoundResult::Open => "in progress",
            RoundResult::Lifted => "pause lifted",
        },
        started_by: match (&r.reopened, &r.lifted_by) {
            (Some(_), Some(by)) => format!("the known items (lifted by {by})"),
            (Some(_), None) => "the known items".into(),
            _ => r.started_by.clone().unwrap_or_default(),
        },
        decided,
        agreed,
        agreement: if decided == 0 {
            "-".into()
        } else {
            format!("{:.0}%", agreed as f64 * 100.0 / decided as f64)
        },
        missed: r
            .missed()
            .map(|d| MissedView {
                stage: d.stage.number(),
                item_id: d.item_id.clone(),
                mine: describe(tax, d.stage, d.verdict, &d.reasons),
                known: describe(tax, d.stage, d.known.verdict, &d.known.reasons),
                why: d.known.note.clone(),
            })
            .collect(),
    }
}

fn state_word(s: CalibrationState) -> &'static str {
    match s {
        CalibrationState::NotRequired => "not_required",
        CalibrationState::InProgress => "in_progress",
        CalibrationState::Passed => "passed",
        CalibrationState::Failed => "failed",
    }
}

pub async fn status(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let s = state
        .store
        .calibration_status(&campaign, &session.user)
        .await?;
    let mut rounds = state
        .store
        .calibration_rounds(&campaign, Some(&session.user))
        .await?;
    rounds.reverse();
    if s.state == CalibrationState::InProgress {
        // A round under way may show items of earlier rounds again: their known
        // verdicts wait until it is over.
        rounds.clear();
    }
    let here = format!("/c/{c}/calibration");
    let chrome = Chrome::new(&state, &session, Some(&c), "Calibration", &here).await?;
    Ok(render(&StatusPage {
        chrome,
        state: state_word(s.state),
        paused: s.paused.is_some(),
        round: s.round,
        decided: s.decided,
        agreed: s.agreed,
        required: s.required,
        total: s.total,
        pool: s.pool,
        threshold_pct: (s.threshold * 100.0).round() as i64,
        percent: super::review::percent(s.decided.min(s.total), s.total),
        rounds: rounds
            .iter()
            .map(|r| round_view(&campaign.taxonomy, r))
            .collect(),
        next: s
            .next
            .as_ref()
            .map(|n| format!("/c/{c}/calibration/{}/{}", n.stage.number(), n.item)),
        first_stage: if campaign.taxonomy.clip_review { 1 } else { 2 },
        campaign: c,
    }))
}

/// The known verdict next to the validator's, once decided.
pub struct FeedbackView {
    pub agrees: bool,
    pub mine: String,
    pub known: String,
    pub known_note: String,
    /// Where the known flaw is, when the manifest said.
    pub flaw: Option<FlawView>,
    pub next: Option<String>,
    pub state: &'static str,
    pub agreed: i64,
    pub decided: i64,
}

fn describe(tax: &Taxonomy, stage: Stage, verdict: Verdict, reasons: &[Reason]) -> String {
    if reasons.is_empty() {
        verdict.as_str().to_string()
    } else {
        format!(
            "{} ({})",
            verdict.as_str(),
            reasons
                .iter()
                .map(|r| tax.reason_label(stage, r.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// A known flaw's place: in words, and (when it can be placed: a time span, or frames
/// of a clip whose rate is known) its start and end in seconds, for the scrub bar's
/// marker and the key that goes there.
pub struct FlawView {
    pub words: String,
    pub from: String,
    pub to: String,
    pub placed: bool,
}

fn flaw_view(
    flaw: crate::domain::video::Flaw,
    timing: Option<&crate::domain::video::FrameTiming>,
) -> FlawView {
    let span = flaw.seconds(timing.filter(|t| t.constant).map(|t| t.fps));
    FlawView {
        words: flaw.words(),
        from: span.map(|s| format!("{:.6}", s.0)).unwrap_or_default(),
        to: span.map(|s| format!("{:.6}", s.1)).unwrap_or_default(),
        placed: span.is_some(),
    }
}

fn feedback_view(
    tax: &Taxonomy,
    stage: Stage,
    c: &str,
    f: &CalibrationFeedback,
    timing: Option<&crate::domain::video::FrameTiming>,
) -> FeedbackView {
    FeedbackView {
        agrees: f.agrees,
        mine: describe(tax, stage, f.verdict, &f.reasons),
        known: describe(tax, stage, f.known.verdict, &f.known.reasons),
        known_note: f.known.note.clone(),
        flaw: f.known.flaw.map(|fl| flaw_view(fl, timing)),
        next: f
            .status
            .next
            .as_ref()
            .map(|n| format!("/c/{c}/calibration/{}/{}", n.stage.number(), n.item)),
        state: state_word(f.status.state),
        agreed: f.status.agreed,
        decided: f.status.decided,
    }
}

#[derive(Template)]
#[template(path = "calibration/item.html")]
struct ItemPage {
    chrome: Chrome,
    campaign: String,
    stage: i64,
    item_id: String,
    task: TaskLine,
    theme: String,
    /// The manifest fields the protocol declares: (label, value).
    details: Vec<(String, String)>,
    scene_graph: String,
    scenario: String,
    player: Player,
    question: Option<QuestionLine>,
    reasons: Vec<ReasonBox>,
    /// The key legend, drawn from the page's key table.
    keys: Vec<super::KeyHint>,
    verdict: String,
    note: String,
    error: Option<String>,
    feedback: Option<FeedbackView>,
    rendered_at: i64,
    carried: Carried,
}

async fn item_page(
    state: &AppState,
    session: &Session,
    c: &str,
    stage: Stage,
    key: &str,
    draft: Option<(String, Vec<String>, String, Carried)>,
    error: Option<String>,
) -> PageResult {
    let campaign = state.store.campaign(c).await?;
    let item = state
        .store
        .calibration_item(&campaign, &session.user, stage, key)
        .await?;
    let level = item
        .question
        .as_ref()
        .map(|q| {
            campaign
                .taxonomy
                .parse_level(&q.level)
                .map_err(|m| Error::fault(format!("question `{}`", q.question_id), m))
        })
        .transpose()?;
    let (verdict, ticked, note, carried) = draft.unwrap_or_default();
    let reasons = reason_boxes(&campaign.taxonomy, stage, level.as_ref(), &ticked);
    let here = format!("/c/{c}/calibration");
    let chrome = Chrome::new(
        state,
        session,
        Some(c),
        &format!("Calibration: {key}"),
        &here,
    )
    .await?;
    let player = player(state, session, &item.clip).await?;
    let feedback = item
        .feedback
        .as_ref()
        .map(|f| feedback_view(&campaign.taxonomy, stage, c, f, player.timing.as_ref()));
    let page = ItemPage {
        chrome,
        campaign: c.to_string(),
        stage: stage.number(),
        item_id: item.item_id.clone(),
        task: task_line(state, &campaign, &item.clip.task).await?,
        theme: item.clip.theme.clone().unwrap_or_default(),
        details: item.clip.declared(&campaign.taxonomy),
        scene_graph: pretty(&item.clip.scene_graph),
        scenario: pretty(&item.clip.scenario),
        player,
        question: item.question.as_ref().map(question_line),
        keys: super::verdict_keys(&reasons, super::KeyPage::Calibration),
        reasons,
        verdict,
        note,
        error: error.clone(),
        feedback,
        rendered_at: carried
            .rendered_at
            .unwrap_or_else(|| crate::clock::now_micros() / 1000),
        carried,
    };
    let mut resp = render(&page);
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

pub async fn item(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
) -> PageResult {
    item_page(&state, &session, &c, stage(&s)?, &key, None, None).await
}

pub async fn decide(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let form = FormFields::parse(&body)?;
    let (verdict, reasons, note) = (form.get("verdict"), form.all("reasons"), form.get("note"));
    let time_spent_ms = form.time_spent_ms();
    let result = match Verdict::parse(&verdict) {
        Err(_) => Err(Error::field("verdict", "choose valid (V) or reject (R)")),
        Ok(v) => {
            state
                .store
                .record_calibration(
                    &campaign,
                    &session.user,
                    stage,
                    &key,
                    &VerdictRequest {
                        verdict: v,
                        reasons: reasons.clone(),
                        note: note.clone(),
                        time_spent_ms,
                        time_measure: form.time_measure(),
                        version: VersionRule::Newest,
                    },
                )
                .await
        }
    };
    match result {
        // The same page now shows the known verdict next to the one given.
        Ok(_) => Ok(super::see_other(&format!(
            "/c/{c}/calibration/{}/{key}",
            stage.number()
        ))),
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            item_page(
                &state,
                &session,
                &c,
                stage,
                &key,
                Some((verdict, reasons, note, form.carried())),
                Some(for_people(&e)),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

pub struct ScoreRow {
    pub name: String,
    pub round: i64,
    pub decided: i64,
    pub agreed: i64,
    pub agreement: String,
    pub state: &'static str,
    pub failed: bool,
    /// Why the known items paused the validator's queue, while they do.
    pub paused: Option<String>,
}

pub struct KeyRow {
    pub stage: i64,
    pub item_id: String,
    pub known: String,
    pub note: String,
    /// Where the known flaw is, in words; empty when the key does not say.
    pub flaw: String,
}

#[derive(Template)]
#[template(path = "admin/calibration.html")]
struct AdminPage {
    chrome: Chrome,
    campaign: String,
    settings: Settings,
    threshold_pct: i64,
    /// The known clips' share in percent, as typed back ("5", "2.5").
    known_rate_pct: String,
    scores: Vec<ScoreRow>,
    rounds: Vec<RoundView>,
    keys: Vec<KeyRow>,
    /// How many calibration items there are, and the links to the other pages of them.
    key_count: usize,
    pager: super::Pager,
    /// The protocol's Stage 1 reasons, for a known verdict.
    clip_reasons: Vec<ReasonBox>,
    /// Items the author resolved (at most `RESOLVED_SHOWN`), with the copies made of
    /// their clips.
    resolved: Vec<ResolvedRow>,
    /// Whether there are more resolved items than shown.
    resolved_more: bool,
    copies: Vec<crate::store::calibration::KnownCopy>,
    error: Option<String>,
}

/// How many resolved items the calibration page lists.
const RESOLVED_SHOWN: usize = 200;

/// A resolved item as the admin's calibration page lists it.
struct ResolvedRow {
    clip_id: String,
    stage: i64,
    item_id: String,
    verdict: String,
    reviewers: String,
    copies: String,
}

fn score_row(s: &CalibrationScore) -> ScoreRow {
    let st = &s.status;
    ScoreRow {
        name: s.validator.clone(),
        round: st.round,
        decided: st.decided,
        agreed: st.agreed,
        agreement: st
            .agreement()
            .map_or("-".into(), |a| format!("{:.0}%", a * 100.0)),
        state: st.state_words(),
        failed: st.state == CalibrationState::Failed && st.paused.is_none(),
        paused: st.paused.clone(),
    }
}

fn key_row(tax: &Taxonomy, k: &CalibrationKey) -> KeyRow {
    KeyRow {
        stage: k.stage.number(),
        item_id: k.item_id.clone(),
        known: describe(tax, k.stage, k.known.verdict, &k.known.reasons),
        note: k.known.note.clone(),
        flaw: k.known.flaw.map(Flaw::words).unwrap_or_default(),
    }
}

async fn admin_page(
    state: &AppState,
    session: &Session,
    c: &str,
    error: Option<String>,
    at: &super::At,
) -> PageResult {
    use crate::domain::paging;
    let campaign = state.store.campaign(c).await?;
    let cursor = at.cursor()?;
    let scores = state.store.calibration_scores(&campaign).await?;
    let keys = state.store.calibration_keys(&campaign).await?;
    let key_count = keys.len();
    // Items are keyed by stage and id: a Stage 2 item's id is its question's.
    let keys = paging::page_of(
        keys,
        |k| &k.item_id,
        |_| true,
        cursor.as_ref(),
        paging::PAGE_ROWS,
    )
    .map_err(Error::from)?;
    let rounds = state.store.calibration_rounds(&campaign, None).await?;
    let copies = state.store.known_copies(&campaign).await?;
    let mut resolved = state
        .store
        .resolved_items(
            &campaign,
            i64::try_from(RESOLVED_SHOWN + 1).unwrap_or(i64::MAX),
        )
        .await?;
    let resolved_more = resolved.len() > RESOLVED_SHOWN;
    resolved.truncate(RESOLVED_SHOWN);
    let resolved = resolved
        .into_iter()
        .map(|r| ResolvedRow {
            copies: copies
                .iter()
                .filter(|k| k.source == r.clip_id)
                .map(|k| k.clip_id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            stage: r.stage.number(),
            verdict: r.verdict,
            reviewers: r.reviewers.join(" and "),
            item_id: r.item_id,
            clip_id: r.clip_id,
        })
        .collect();
    let here = format!("/c/{c}/admin/calibration");
    let pager = super::Pager::new(&here, &[], &keys, |k| {
        paging::Cursor::token(false, &k.item_id)
    });
    let chrome = Chrome::new(state, session, Some(c), "Calibration and targets", &here).await?;
    let mut resp = render(&AdminPage {
        chrome,
        campaign: c.to_string(),
        settings: campaign.settings,
        threshold_pct: (campaign.settings.calibration_threshold * 100.0).round() as i64,
        known_rate_pct: format!("{}", (campaign.settings.known_rate * 1e6).round() / 1e4),
        scores: scores.iter().map(score_row).collect(),
        rounds: rounds
            .iter()
            .map(|r| round_view(&campaign.taxonomy, r))
            .collect(),
        keys: keys
            .rows
            .iter()
            .map(|k| key_row(&campaign.taxonomy, k))
            .collect(),
        key_count,
        pager,
        clip_reasons: reason_boxes(&campaign.taxonomy, Stage::Clip, None, &[]),
        resolved,
        resolved_more,
        copies,
        error: error.clone(),
    });
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// The calibration page again (its first page of items), with why a form was refused.
async fn refused_on_admin_page(
    state: &AppState,
    session: &Session,
    c: &str,
    e: &Error,
) -> PageResult {
    admin_page(
        state,
        session,
        c,
        Some(for_people(e)),
        &super::At::default(),
    )
    .await
}

pub async fn admin(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(at): axum::extract::Query<super::At>,
) -> PageResult {
    admin_page(&state, &session, &c, None, &at).await
}

/// An admin's action on the validator the form names (`name`): its words shown on the
/// calibration page, or its refusal there.
async fn on_validator(
    state: &AppState,
    session: &Session,
    c: &str,
    body: &[u8],
    act: impl AsyncFnOnce(&crate::store::catalog::Campaign, &str, &str) -> Result<String, Error>,
) -> PageResult {
    let campaign = state.store.campaign(c).await?;
    let form = FormFields::parse(body)?;
    let name = form.get("name");
    let done = act(&campaign, &name, &session.user.name).await;
    answered(state, session, c, done).await
}

/// An admin's form on the calibration page answered: back to the page with its words,
/// or the page again with why it was refused (a field, a conflict, something unknown).
async fn answered(
    state: &AppState,
    session: &Session,
    c: &str,
    done: Result<String, Error>,
) -> PageResult {
    match done {
        Ok(words) => Ok(crate::web::flash::redirect(
            &format!("/c/{c}/admin/calibration"),
            &words,
        )),
        Err(e @ (Error::Field { .. } | Error::Conflict(_) | Error::NotFound(_))) => {
            refused_on_admin_page(state, session, c, &e).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn reset(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let store = &state.store;
    on_validator(&state, &session, &c, &body, async |campaign, name, by| {
        let draw = store.reset_calibration(campaign, name, by).await?;
        Ok(crate::domain::calibration::round_text(name, &draw))
    })
    .await
}

pub async fn lift(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let store = &state.store;
    on_validator(&state, &session, &c, &body, async |campaign, name, by| {
        let round = store.lift_pause(campaign, name, by).await?;
        Ok(format!(
            "{name}'s queue is open again (the pause's round {round} stays on record, lifted)."
        ))
    })
    .await
}

/// Copies a clip the author resolved as a known clip for the validators who did not
/// review it (`clip_id`, `as`).
pub async fn copy(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let (source, copy) = (form.get("clip_id"), form.get("as"));
    let done = state
        .store
        .copy_resolved(&campaign, source.trim(), copy.trim())
        .await
        .map(|made| format!("{}.", made.words()));
    answered(&state, &session, &c, done).await
}

pub async fn mark(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let clip = form.get("clip_id").trim().to_string();
    let result = match Verdict::parse(&form.get("verdict")) {
        Err(m) => Err(Error::field("verdict", m)),
        Ok(v) => match check_verdict(
            &campaign.taxonomy,
            Stage::Clip,
            None,
            v,
            &form.all("reasons"),
            &form.get("note"),
        ) {
            Err(e) => Err(e.into()),
            Ok(mut known) => match flaw_field(&form, v) {
                Err(e) => Err(e),
                Ok(flaw) => {
                    known.flaw = flaw;
                    state.store.mark_calibration(&campaign, &clip, &known).await
                }
            },
        },
    };
    let done = result.map(|()| format!("{clip} is now a calibration clip."));
    answered(&state, &session, &c, done).await
}

/// Where the flaw of a known `reject` is, from the form's `flaw_from`, `flaw_to` and
/// `flaw_unit` (`seconds` or `frames`): none when both ends are empty; checked as a
/// manifest's `flaw` is.
fn flaw_field(form: &FormFields, verdict: Verdict) -> Result<Option<Flaw>, Error> {
    let (from, to) = (form.get("flaw_from"), form.get("flaw_to"));
    let (from, to) = (from.trim(), to.trim());
    if from.is_empty() && to.is_empty() {
        return Ok(None);
    }
    if verdict != Verdict::Reject {
        return Err(Error::field(
            "flaw_from",
            "only a known reject has a flaw to point at: leave the flaw's place empty for a valid clip",
        ));
    }
    let number = |field: &'static str, text: &str| -> Result<f64, Error> {
        text.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                Error::field(
                    field,
                    format!(
                        "the flaw's place needs both ends as numbers, not \u{201c}{text}\u{201d}"
                    ),
                )
            })
    };
    let (a, b) = (number("flaw_from", from)?, number("flaw_to", to)?);
    let unit = match form.get("flaw_unit").trim() {
        "frames" => "frames",
        "seconds" | "" => "seconds",
        other => {
            return Err(Error::field(
                "flaw_unit",
                format!("\u{201c}{other}\u{201d} is not a unit: seconds or frames"),
            ));
        }
    };
    Flaw::parse(&serde_json::json!({ unit: [a, b] }))
        .map(Some)
        .map_err(|(_, m)| Error::field("flaw_from", m))
}

pub async fn settings(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    // A whole number typed in a field: left empty, none; anything else that is not
    // one is refused, naming the field, rather than taken as 0.
    let whole = |field: &'static str, what: &str| -> Result<Option<i64>, Error> {
        let typed = form.get(field);
        match typed.trim() {
            "" => Ok(None),
            t => t.parse::<i64>().map(Some).map_err(|_| {
                Error::field(
                    field,
                    format!("{what} is a whole number, not \u{201c}{t}\u{201d}."),
                )
            }),
        }
    };
    let numbers = (|| {
        Ok::<_, Error>((
            whole("target_per_task", "the target of retained clips per task")?,
            whole("calibration_min_items", "the calibration round's size")?,
            whole("known_window", "the number of recent known defects")?,
        ))
    })();
    let (target, min_items, window) = match numbers {
        Ok(n) => n,
        Err(e) => return refused_on_admin_page(&state, &session, &c, &e).await,
    };
    // Not a number: 0, which the store refuses in the field's own words below.
    let threshold = form
        .get("calibration_threshold_pct")
        .trim()
        .parse::<f64>()
        .ok()
        .map(|p| p / 100.0);
    let new = Settings {
        target_per_task: target.unwrap_or(0),
        calibration_threshold: threshold.unwrap_or(0.0),
        calibration_min_items: min_items.unwrap_or(0),
        blind_key_check: form.get("blind_key_check") == "on",
        // Left empty (or left out by an older page), the window stays as it is.
        known_window: window.unwrap_or(campaign.settings.known_window),
        // Typed in percent; left empty, as it is.
        known_rate: match form.get("known_rate_pct").trim() {
            "" => campaign.settings.known_rate,
            typed => typed.parse::<f64>().map_or(-1.0, |p| p / 100.0),
        },
    };
    match state.store.set_settings(&campaign, new).await {
        Ok(()) => Ok(crate::web::flash::redirect(
            &format!("/c/{c}/admin/calibration"),
            "Settings saved.",
        )),
        // The threshold is typed in percent; the store speaks of a fraction.
        Err(Error::Field { field, .. }) if field == "calibration_threshold" => {
            let typed = form.get("calibration_threshold_pct");
            let m = format!(
                "Agreement needed is a percentage above 0 and at most 100 (80 means 80%), not \u{201c}{}\u{201d}.",
                typed.trim()
            );
            admin_page(&state, &session, &c, Some(m), &super::At::default()).await
        }
        Err(e @ Error::Field { .. }) => refused_on_admin_page(&state, &session, &c, &e).await,
        Err(e) => Err(e.into()),
    }
}

/// Calibration for validators, and its administration.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/calibration",
            VALIDATOR,
            Page,
            get(status),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/calibration/{stage}/{item}",
            VALIDATOR,
            Page,
            get(item),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/calibration/{stage}/{item}",
            VALIDATOR,
            Page,
            post(decide),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/calibration",
            ADMIN,
            Page,
            get(admin),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/calibration/reset",
            ADMIN,
            Page,
            post(reset),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/calibration/lift",
            ADMIN,
            Page,
            post(lift),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/calibration/copy",
            ADMIN,
            Page,
            post(copy),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/calibration/mark",
            ADMIN,
            Page,
            post(mark),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/settings",
            ADMIN,
            Page,
            post(settings),
        ),
    ]
}
