//! The admin's pages: where the campaign stands, accounts and pairs, imports and
//! exports.

use super::{Chrome, FormFields, PageResult, render};
use crate::app::accounts::{Created, NewUser};
use crate::app::exports;
use crate::domain::Role;
use crate::domain::pairing::Pairing;
use crate::domain::records::AuditPaging;
use crate::error::{Error, LineError};
use crate::io;
use crate::store::catalog::{StageProgress, TaskProgress};
use crate::store::sessions::Session;
use crate::web::media::download;
use crate::web::routes::{ADMIN, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Multipart, Path, RawForm, State};
use axum::http::StatusCode;

/// One row of the overview: a task (or the total) in both stages.
pub struct OverviewRow {
    pub task: String,
    /// The pair in force: who new and unstarted items go to.
    pub pair: String,
    /// The pairs that have reviewed the task's clips, with how many each.
    pub reviewed_by: String,
    pub s1: StageProgress,
    pub s2: StageProgress,
    /// Stage 1 items rejected, waiting for a new version.
    pub new_version: i64,
    pub retained: i64,
    pub s2_reviewed: i64,
    pub s2_retained: i64,
    pub s2_rejected: i64,
    /// Stage 1 items not decided yet: not started, one verdict in, or with an author.
    pub in_review: i64,
    /// Whether the task has its target of retained clips.
    pub reached: bool,
}

fn row(task: String, pair: String, p: &TaskProgress, target: i64) -> OverviewRow {
    let retained = p.stage1.both_pass + p.stage1.split_accepted + p.stage1.by_sample;
    OverviewRow {
        task,
        pair,
        reviewed_by: String::new(),
        in_review: p.stage1.unstarted + p.stage1.half_decided + p.stage1.split,
        reached: retained >= target,
        new_version: p.stage1.both_reject + p.stage1.split_rejected,
        retained,
        s2_reviewed: p.stage2.items
            - p.stage2.unstarted
            - p.stage2.half_decided
            - p.stage2.by_sample,
        s2_retained: p.stage2.both_pass + p.stage2.split_accepted + p.stage2.by_sample,
        s2_rejected: p.stage2.both_reject + p.stage2.split_rejected,
        s1: p.stage1.clone(),
        s2: p.stage2.clone(),
    }
}

fn add(a: &mut StageProgress, b: &StageProgress) {
    a.items += b.items;
    a.unstarted += b.unstarted;
    a.half_decided += b.half_decided;
    a.both_pass += b.both_pass;
    a.both_reject += b.both_reject;
    a.split += b.split;
    a.split_accepted += b.split_accepted;
    a.split_rejected += b.split_rejected;
    a.not_open += b.not_open;
    a.held += b.held;
    a.by_sample += b.by_sample;
}

/// Which columns of the overview's tables have a count somewhere: the others are
/// all zeros and are left out.
#[derive(Default)]
pub struct Shown {
    pub unstarted1: bool,
    pub half1: bool,
    pub both_pass1: bool,
    pub both_reject1: bool,
    pub split1: bool,
    pub split_accepted1: bool,
    pub split_rejected1: bool,
    pub new_version: bool,
    pub not_open2: bool,
    pub unstarted2: bool,
    pub half2: bool,
    pub both_pass2: bool,
    pub both_reject2: bool,
    pub split2: bool,
    pub dropped2: bool,
    pub held1: bool,
    pub by_sample1: bool,
    pub held2: bool,
    pub by_sample2: bool,
}

impl Shown {
    fn of(total: &OverviewRow) -> Shown {
        let (a, b) = (&total.s1, &total.s2);
        Shown {
            unstarted1: a.unstarted > 0,
            half1: a.half_decided > 0,
            both_pass1: a.both_pass > 0,
            both_reject1: a.both_reject > 0,
            split1: a.split > 0,
            split_accepted1: a.split_accepted > 0,
            split_rejected1: a.split_rejected > 0,
            new_version: total.new_version > 0,
            not_open2: b.not_open > 0,
            unstarted2: b.unstarted > 0,
            half2: b.half_decided > 0,
            both_pass2: b.both_pass > 0,
            both_reject2: b.both_reject > 0,
            split2: b.split > 0,
            dropped2: total.s2_rejected > 0,
            held1: a.held > 0,
            by_sample1: a.by_sample > 0,
            held2: b.held > 0,
            by_sample2: b.by_sample > 0,
        }
    }
}

/// The overview's two charts: per task, Stage 1 against the target and Stage 2.
fn progress_charts(rows: &[OverviewRow], target: i64) -> (String, String) {
    use crate::report::svg::{Series, stacked_bars};
    let s1 = [
        Series {
            name: "retained",
            colour: "#1f7a4d",
        },
        Series {
            name: "waiting for an author",
            colour: "#d49a00",
        },
        Series {
            name: "one verdict in",
            colour: "#7aa2d6",
        },
        Series {
            name: "not started",
            colour: "#c9ced8",
        },
        Series {
            name: "rejected, waiting for a new version",
            colour: "#b3361f",
        },
    ];
    let s2 = [
        Series {
            name: "retained",
            colour: "#1f7a4d",
        },
        Series {
            name: "waiting for an author",
            colour: "#d49a00",
        },
        Series {
            name: "one verdict in",
            colour: "#7aa2d6",
        },
        Series {
            name: "not started",
            colour: "#c9ced8",
        },
        Series {
            name: "dropped (rejected)",
            colour: "#b3361f",
        },
    ];
    let r1: Vec<(String, Vec<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r.task.clone(),
                vec![
                    r.retained,
                    r.s1.split,
                    r.s1.half_decided,
                    r.s1.unstarted,
                    r.new_version,
                ],
            )
        })
        .collect();
    let r2: Vec<(String, Vec<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r.task.clone(),
                vec![
                    r.s2_retained,
                    r.s2.split,
                    r.s2.half_decided,
                    r.s2.unstarted,
                    r.s2_rejected,
                ],
            )
        })
        .collect();
    (
        stacked_bars(
            "Stage 1: clips per task (newest versions), against the target",
            &s1,
            &r1,
            Some(target),
        ),
        stacked_bars(
            "Stage 2: the open questions of retained clips, per task",
            &s2,
            &r2,
            None,
        ),
    )
}

#[derive(Template)]
#[template(path = "admin/overview.html")]
struct OverviewPage {
    chrome: Chrome,
    campaign: String,
    /// The name of the campaign's protocol (empty before the campaign exists).
    protocol: String,
    exists: bool,
    rows: Vec<OverviewRow>,
    total: OverviewRow,
    shown: Shown,
    chart1: String,
    chart2: String,
    splits_waiting: i64,
    target: i64,
    tasks_reached: usize,
    regeneration: Vec<crate::domain::records::RegenerationItem>,
    /// Whether the protocol reviews clips: without, no Stage 1 to show.
    clip_review: bool,
    /// Whether the protocol reviews some stratum by sample.
    sampled: bool,
}

pub async fn overview(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let here = format!("/c/{c}/admin");
    let chrome = Chrome::new(&state, &session, Some(&c), &format!("Campaign {c}"), &here).await?;
    let campaign = match state.store.campaign(&c).await {
        Ok(campaign) => campaign,
        Err(Error::NotFound(_)) => {
            let empty = TaskProgress {
                task: String::new(),
                stage1: StageProgress::default(),
                stage2: StageProgress::default(),
            };
            return Ok(render(&OverviewPage {
                chrome,
                campaign: c,
                protocol: String::new(),
                exists: false,
                rows: vec![],
                total: row("Total".into(), String::new(), &empty, 0),
                shown: Shown::default(),
                chart1: String::new(),
                chart2: String::new(),
                splits_waiting: 0,
                target: 0,
                tasks_reached: 0,
                regeneration: vec![],
                clip_review: true,
                sampled: false,
            }));
        }
        Err(e) => return Err(e.into()),
    };
    let progress = state.store.progress(&campaign).await?;
    let tasks = state.store.tasks(&campaign).await?;
    let mut total = TaskProgress {
        task: "Total".into(),
        stage1: StageProgress::default(),
        stage2: StageProgress::default(),
    };
    let reviewing = state.store.reviewing_pairs(&campaign).await?;
    let mut rows = Vec::new();
    for p in &progress {
        add(&mut total.stage1, &p.stage1);
        add(&mut total.stage2, &p.stage2);
        let pair = tasks
            .iter()
            .find(|t| t.code == p.task)
            .map(|t| match (&t.rater1, &t.rater2) {
                (Some(a), Some(b)) => format!("{a} + {b}"),
                _ => "no pair".to_string(),
            })
            .unwrap_or_default();
        let mut r = row(p.task.clone(), pair, p, campaign.settings.target_per_task);
        r.reviewed_by = reviewing
            .iter()
            .filter(|(t, ..)| *t == p.task)
            .map(|(_, a, b, n)| format!("{a} + {b} ({n})"))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(r);
    }
    let splits_waiting = total.stage1.split + total.stage2.split;
    let target = campaign.settings.target_per_task;
    let tasks = i64::try_from(rows.len()).unwrap_or(0);
    let total = row("Total".into(), String::new(), &total, target * tasks);
    let (chart1, chart2) = progress_charts(&rows, target);
    let mut regeneration = state.store.regeneration_list(&campaign).await?;
    for g in &mut regeneration {
        g.reasons = g
            .reasons
            .iter()
            .map(|r| crate::report::svg::reason_label(&campaign.taxonomy, 1, r))
            .collect();
    }
    Ok(render(&OverviewPage {
        chrome,
        protocol: campaign.taxonomy.name.clone(),
        campaign: c,
        exists: true,
        tasks_reached: rows.iter().filter(|r| r.reached).count(),
        shown: Shown::of(&total),
        total,
        chart1,
        chart2,
        rows,
        splits_waiting,
        target,
        regeneration,
        clip_review: campaign.taxonomy.clip_review,
        sampled: !campaign.taxonomy.sampling.is_empty(),
    }))
}

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
            format!("Not changed. {}", super::for_people(&e))
        }
        Err(e) => return Err(e.into()),
    };
    Ok(crate::web::flash::redirect(
        &format!("/c/{c}/admin/pairs"),
        &message,
    ))
}

pub struct UserRow {
    pub name: String,
    pub admin: bool,
    /// (campaign, role there, with a validator's pool index)
    pub roles: Vec<(String, String)>,
    pub disabled: bool,
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    chrome: Chrome,
    users: Vec<UserRow>,
    campaigns: Vec<String>,
    error: Option<String>,
}

async fn users_page(state: &AppState, session: &Session, error: Option<String>) -> PageResult {
    let entries = state.store.pool_entries().await?;
    let users = state
        .store
        .accounts()
        .await?
        .into_iter()
        .map(|a| UserRow {
            roles: if a.user.admin {
                vec![("every campaign".into(), "admin".into())]
            } else {
                a.user
                    .roles
                    .iter()
                    .map(|r| {
                        let index = entries
                            .iter()
                            .find(|e| e.user == a.user.name && e.campaign == r.campaign)
                            .map(|e| format!(" #{}", e.index))
                            .unwrap_or_default();
                        (r.campaign.clone(), format!("{}{index}", r.role))
                    })
                    .collect()
            },
            admin: a.user.admin,
            name: a.user.name,
            disabled: a.disabled,
        })
        .collect::<Vec<_>>();
    let mut campaigns = state.store.campaign_names().await?;
    if campaigns.is_empty() {
        campaigns.push("default".into());
    }
    let chrome = Chrome::new(
        state,
        session,
        campaigns.first().map(String::as_str),
        "Accounts",
        "/admin/users",
    )
    .await?;
    let mut resp = render(&UsersPage {
        chrome,
        users,
        campaigns,
        error: error.clone(),
    });
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

pub async fn users(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> PageResult {
    users_page(&state, &session, None).await
}

#[derive(Template)]
#[template(path = "admin/secret.html")]
struct SecretPage {
    chrome: Chrome,
    what: String,
    secret: String,
}

/// Shows a new password or token once; it is never stored in the clear, so the page is
/// drawn straight from the POST.
async fn secret_page(
    state: &AppState,
    session: &Session,
    what: String,
    secret: String,
) -> PageResult {
    let first = state.store.campaign_names().await?.into_iter().next();
    let chrome = Chrome::new(
        state,
        session,
        first.as_deref(),
        "Copy it now",
        "/admin/users",
    )
    .await?;
    Ok(render(&SecretPage {
        chrome,
        what,
        secret,
    }))
}

#[derive(Template)]
#[template(path = "admin/confirm_pairs.html")]
struct ConfirmPairsPage {
    chrome: Chrome,
    name: String,
    role: &'static str,
    campaign: String,
    index: i64,
    /// What the admin typed, sent again with the confirmation (empty: generate one).
    password: String,
    changes: Vec<crate::store::catalog::PairChange>,
    moving: i64,
}

impl ConfirmPairsPage {
    fn pair(&self, p: &Option<(String, String)>) -> String {
        match p {
            Some((a, b)) => format!("{a} + {b}"),
            None => "no pair".into(),
        }
    }
}

pub async fn create_user(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let role = match Role::parse(form.get("role").trim()) {
        Ok(r) => r,
        Err(m) => return users_page(&state, &session, Some(m)).await,
    };
    let index = form.get("index").trim().to_string();
    let index = if index.is_empty() {
        None
    } else {
        match index.parse::<i64>() {
            Ok(i) => Some(i),
            Err(_) => {
                return users_page(
                    &state,
                    &session,
                    Some(format!("pool index `{index}` is not a number")),
                )
                .await;
            }
        }
    };
    // An admin is server-wide: the form's campaign is for everyone else.
    let campaign = (role != Role::Admin).then(|| form.get("campaign").trim().to_string());
    // Placing a validator may give tasks new default pairs and move their unstarted
    // items: shown first, and done only once the admin confirms. A password is taken
    // as typed, spaces and all; none typed, one is generated and shown once.
    let typed = form.get("password");
    let new = NewUser {
        name: name.clone(),
        role,
        password: (!typed.is_empty()).then(|| typed.clone()),
        campaign: campaign.clone(),
        index,
        confirmed: form.get("confirm") == "yes",
    };
    match crate::app::accounts::create_user(&state.store, new).await {
        Ok(Created::NeedsConfirmation(changes)) => {
            let campaign = (campaign.unwrap_or_default(), index.unwrap_or_default());
            let chrome = Chrome::new(
                &state,
                &session,
                Some(&campaign.0),
                "Confirm the new pairs",
                "/admin/users",
            )
            .await?;
            Ok(render(&ConfirmPairsPage {
                chrome,
                name,
                role: role.as_str(),
                campaign: campaign.0,
                index: campaign.1,
                password: typed,
                moving: changes.iter().map(|c| c.unstarted_moving).sum(),
                changes,
            }))
        }
        Ok(Created::User {
            user,
            generated_password: Some(password),
        }) => {
            secret_page(
                &state,
                &session,
                format!("The password of {} ({})", user.name, user.describe()),
                password,
            )
            .await
        }
        Ok(Created::User { user, .. }) => Ok(crate::web::flash::redirect(
            "/admin/users",
            &format!("Created {} ({}).", user.name, user.describe()),
        )),
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            users_page(&state, &session, Some(super::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /admin/roles`: gives an account an author's or participant's role in a
/// campaign, or takes its role there away.
pub async fn set_role(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let campaign = form.get("campaign").trim().to_string();
    let role = match form.get("role").trim() {
        "none" => None,
        r => match Role::parse(r) {
            Ok(r) => Some(r),
            Err(m) => return users_page(&state, &session, Some(m)).await,
        },
    };
    match state.store.set_role(&name, &campaign, role).await {
        Ok(()) => Ok(crate::web::flash::redirect(
            "/admin/users",
            &match role {
                Some(r) => format!("{name} is {} of {campaign}.", r.with_article()),
                None => format!("{name} holds no role in {campaign}."),
            },
        )),
        Err(
            e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_) | Error::NotFound(_)),
        ) => users_page(&state, &session, Some(super::for_people(&e))).await,
        Err(e) => Err(e.into()),
    }
}

pub async fn revoke_tokens(
    State(state): State<AppState>,
    Extension(_session): Extension<Session>,
    Path(name): Path<String>,
    _form: RawForm,
) -> PageResult {
    let n = state.store.revoke_tokens(&name).await?;
    Ok(crate::web::flash::redirect(
        "/admin/users",
        &format!("Revoked {n} API token(s) of {name}."),
    ))
}

/// Disables an account (sessions and tokens end at once) or enables it again.
pub async fn set_disabled(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((name, action)): Path<(String, String)>,
    _form: RawForm,
) -> PageResult {
    let disable = match action.as_str() {
        "disable" => true,
        "enable" => false,
        _ => return Err(Error::NotFound("no such action".into()).into()),
    };
    match state.store.set_disabled(&name, disable).await {
        Ok(_) => {
            let msg = if disable {
                format!("Disabled {name}: their sessions ended and their API tokens are revoked.")
            } else {
                format!("Enabled {name}: they can sign in again and need new API tokens.")
            };
            Ok(crate::web::flash::redirect("/admin/users", &msg))
        }
        Err(e @ (Error::Conflict(_) | Error::NotFound(_))) => {
            users_page(&state, &session, Some(super::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn create_token(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(name): Path<String>,
    _form: RawForm,
) -> PageResult {
    let token = state.store.create_token(&name, "admin page").await?;
    secret_page(&state, &session, format!("An API token for {name}"), token).await
}

#[derive(Template)]
#[template(path = "admin/import.html")]
struct ImportPage {
    chrome: Chrome,
    campaign: String,
    folder: String,
    /// The folders "import from a folder" reads under (none: it is off).
    roots: Vec<String>,
    error: Option<String>,
    problems: Vec<LineError>,
}

async fn import_page_with(
    state: &AppState,
    session: &Session,
    c: &str,
    folder: String,
    failure: Option<Error>,
) -> PageResult {
    let here = format!("/c/{c}/admin/import");
    let chrome = Chrome::new(state, session, Some(c), "Import clips", &here).await?;
    // Said without the server's paths: the upload's scratch folder means nothing to the
    // admin, and a folder on the server is theirs to know already (it is in the form).
    let (error, problems) = match &failure {
        Some(Error::Rejected(r)) => (
            Some(format!(
                "The manifest was refused: {} problem{}; nothing was imported.",
                r.problems.len(),
                if r.problems.len() == 1 { "" } else { "s" }
            )),
            r.problems.clone(),
        ),
        Some(Error::Io { source, .. }) => (
            Some(format!(
                "The manifest or a video could not be read ({}); nothing was imported.",
                io_kind(source)
            )),
            vec![],
        ),
        Some(e) => (Some(super::for_people(e)), vec![]),
        None => (None, vec![]),
    };
    let mut resp = render(&ImportPage {
        chrome,
        campaign: c.to_string(),
        folder,
        roots: state
            .config
            .import_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        error,
        problems,
    });
    if failure.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// What went wrong with a file, in words, without its path.
fn io_kind(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file",
        std::io::ErrorKind::PermissionDenied => "the server may not read it",
        std::io::ErrorKind::IsADirectory => "a folder, not a file",
        _ => "a read error",
    }
}

pub async fn import_page(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    import_page_with(&state, &session, &c, String::new(), None).await
}

async fn finish_import(
    state: &AppState,
    session: &Session,
    c: &str,
    manifest: &std::path::Path,
    folder: String,
) -> PageResult {
    match crate::app::import_manifest(&state.store, &state.config, c, manifest).await {
        Ok(summary) => {
            crate::app::media::warm_up(&state.store, &state.config);
            Ok(crate::web::flash::redirect(
                &format!("/c/{c}/admin"),
                &format!("Imported: {summary}."),
            ))
        }
        Err(
            e @ (Error::Rejected(_) | Error::Invalid(_) | Error::Io { .. } | Error::Field { .. }),
        ) => import_page_with(state, session, c, folder, Some(e)).await,
        Err(e) => Err(e.into()),
    }
}

/// Imports a manifest that is already on the server.
pub async fn import_folder(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let path = form.get("manifest").trim().to_string();
    if path.is_empty() {
        return import_page_with(
            &state,
            &session,
            &c,
            path,
            Some(Error::Invalid(
                "give the path of a manifest on the server".into(),
            )),
        )
        .await;
    }
    // Only files under the import roots are read, and a refusal says nothing about
    // whether a file elsewhere exists.
    let Some(manifest) = state.config.manifest_under_import_root(&path).await else {
        let message = if state.config.import_roots.is_empty() {
            "importing from a folder on the server is off: start the server with --import-root DIR, or upload a zip".to_string()
        } else {
            format!(
                "give the absolute path of a manifest file under an import root ({}); nothing else on the server is read",
                state
                    .config
                    .import_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return import_page_with(&state, &session, &c, path, Some(Error::Invalid(message))).await;
    };
    finish_import(&state, &session, &c, &manifest, path.clone()).await
}

/// Imports an uploaded zip holding a manifest and its videos.
pub async fn import_upload(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    multipart: Multipart,
) -> PageResult {
    // Refuse early when the disk cannot hold even a small upload.
    if let Err(e) =
        io::limits::require_space(&state.config.data_dir, 0, &state.config.limits, "an upload")
    {
        return import_page_with(&state, &session, &c, String::new(), Some(e)).await;
    }
    // The upload and what it unpacks to are gone before the answer leaves, removed on
    // the blocking pool (a dropped request removes them in the background).
    let scratch = exports::Scratch::new(&state.config, "upload")?;
    let answer = upload_into(&state, &session, &c, multipart, scratch.path()).await;
    scratch.remove().await;
    answer
}

/// Stores an upload in `dir`, unpacks it there and imports the manifest it holds.
async fn upload_into(
    state: &AppState,
    session: &Session,
    c: &str,
    mut multipart: Multipart,
    dir: &std::path::Path,
) -> PageResult {
    let (state, session, c) = (state.clone(), session.clone(), c.to_string());
    let limits = state.config.limits.clone();
    let data_dir = state.config.data_dir.clone();
    let zip_path = dir.join("upload.zip");
    let mut got = false;
    while let Some(f) = multipart
        .next_field()
        .await
        .map_err(|e| Error::Invalid(format!("the upload broke off: {e}")))?
    {
        if f.name() != Some("archive") {
            continue;
        }
        match exports::save_upload(&state.config, f, &zip_path).await {
            Ok(_) => got = true,
            Err(e @ (Error::TooLarge(_) | Error::Unavailable(_))) => {
                return import_page_with(&state, &session, &c, String::new(), Some(e)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if !got {
        return import_page_with(
            &state,
            &session,
            &c,
            String::new(),
            Some(Error::Invalid("choose a zip file to upload".into())),
        )
        .await;
    }
    let unpacked = dir.join("files");
    let dest = unpacked.clone();
    let found = tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dest).map_err(|e| Error::io("cannot unpack", e))?;
        io::archive::unpack(&zip_path, &dest, &limits, &data_dir)?;
        io::archive::find_manifest(&dest)
    })
    .await
    .map_err(|e| Error::Internal(format!("unpacking failed: {e}")))?;
    match found {
        Ok(manifest) => finish_import(&state, &session, &c, &manifest, String::new()).await,
        Err(e) => import_page_with(&state, &session, &c, String::new(), Some(e)).await,
    }
}

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
    let now = super::stats::now_seconds();
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

#[derive(serde::Deserialize, Default)]
pub struct AuditQuery {
    #[serde(default)]
    clip: String,
    /// A prefix of a clip's or an item's id.
    #[serde(default)]
    id: String,
    #[serde(default)]
    validator: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(flatten)]
    at: super::At,
}

impl AuditQuery {
    fn filter(&self) -> Result<crate::domain::records::AuditFilter, Error> {
        crate::domain::records::AuditFilter::parse(
            Some(&self.clip),
            Some(&self.validator),
            Some(&self.from),
            Some(&self.to),
        )
        .and_then(|mut f| {
            f.prefix = crate::domain::paging::prefix("id", Some(&self.id))?;
            Ok(f)
        })
        .map_err(Error::from)
    }

    /// The filters (name, value), kept across pages and in the CSV link.
    fn kept(&self) -> [(&str, &str); 5] {
        [
            ("clip", self.clip.trim()),
            ("id", self.id.trim()),
            ("validator", self.validator.trim()),
            ("from", self.from.trim()),
            ("to", self.to.trim()),
        ]
    }

    /// The same filters as a query string, for the CSV link.
    fn query_string(&self) -> String {
        let pairs: Vec<(&str, &str)> = self
            .kept()
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }
}

/// Events on one page of the audit trail (the CSV has them all).
const AUDIT_PAGE_EVENTS: usize = 200;

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    chrome: Chrome,
    campaign: String,
    q: AuditQuery,
    /// Whether a filter was given (else: the latest events of the campaign).
    filtered: bool,
    /// Why the filter was refused, if it was.
    problem: Option<String>,
    events: Vec<crate::domain::records::AuditEvent>,
    pager: super::Pager,
    people: Vec<String>,
    csv: String,
    taxonomy: std::sync::Arc<crate::domain::taxonomy::Taxonomy>,
}

impl AuditPage {
    fn time(&self, at: &i64) -> String {
        crate::clock::to_rfc3339(*at)
    }

    /// The event's detail with its reasons in words ("reject (Generation artifact): ...").
    fn detail(&self, e: &crate::domain::records::AuditEvent) -> String {
        reasons_in_words(&self.taxonomy, e.stage.unwrap_or(1), &e.detail)
    }
}

/// "reject (generation_artifact;other): note" -> "reject (Generation artifact, Other): note".
fn reasons_in_words(
    taxonomy: &crate::domain::taxonomy::Taxonomy,
    stage: i64,
    detail: &str,
) -> String {
    let Some(rest) = detail.strip_prefix("reject (") else {
        return detail.to_string();
    };
    let Some((list, after)) = rest.split_once(')') else {
        return detail.to_string();
    };
    let words: Vec<String> = list
        .split([';', ','])
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| crate::report::svg::reason_label(taxonomy, stage, r))
        .collect();
    format!("reject ({}){after}", words.join(", "))
}

/// The audit trail: the latest events of the campaign, or those of a clip, a person
/// or a time window.
pub async fn audit(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<AuditQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let (page, filtered, problem) = match q.filter().and_then(|filter| {
        let paging = AuditPaging::parse(
            filter.is_empty(),
            Some(&q.at.after),
            Some(&q.at.before),
            AUDIT_PAGE_EVENTS,
        )?;
        Ok((filter, paging))
    }) {
        Ok((filter, paging)) => {
            let page = state.store.audit_page(&campaign, &filter, &paging).await?;
            (page, !filter.is_empty(), None)
        }
        Err(e) => (
            crate::domain::paging::Page {
                rows: Vec::new(),
                matching: 0,
                more_before: false,
                more_after: false,
            },
            true,
            Some(super::for_people(&e)),
        ),
    };
    let here = format!("/c/{c}/admin/audit");
    let pager = super::Pager::of(
        "event",
        &here,
        &q.kept(),
        &page,
        |e: &crate::domain::records::AuditEvent| e.position.token(),
    );
    let events = page.rows;
    let people = state
        .store
        .users()
        .await?
        .into_iter()
        .filter(|u| {
            u.roles
                .iter()
                .any(|r| r.campaign == c && matches!(r.role, Role::Validator | Role::Author))
        })
        .map(|u| u.name)
        .collect();
    let chrome = Chrome::new(&state, &session, Some(&c), "Audit trail", &here).await?;
    let csv = format!("/c/{c}/admin/exports/audit.csv?{}", q.query_string());
    Ok(render(&AuditPage {
        chrome,
        campaign: c,
        q,
        filtered,
        problem,
        events,
        pager,
        people,
        csv,
        taxonomy: campaign.taxonomy.clone(),
    }))
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

/// The item list's filters (stage, task, group, an id prefix) and its page (`after`
/// or `before` a row's cursor, `domain::paging`).
#[derive(serde::Deserialize, Default)]
pub struct ItemsQuery {
    #[serde(default)]
    stage: String,
    #[serde(default)]
    task: String,
    #[serde(default)]
    show: String,
    /// A prefix of the item's id or its clip's.
    #[serde(default)]
    id: String,
    #[serde(flatten)]
    at: super::At,
}

#[derive(Template)]
#[template(path = "admin/items.html")]
struct ItemsPage {
    chrome: Chrome,
    campaign: String,
    heading: String,
    items: Vec<crate::store::catalog::ClassifiedItem>,
    pager: super::Pager,
    /// The form's values: (stage, task, show, id).
    stage: i64,
    task: String,
    show: String,
    id: String,
    /// The tasks of the campaign, for the form.
    tasks: Vec<String>,
    /// The groups: (name as in links, words).
    groups: Vec<(&'static str, &'static str)>,
}

/// The items behind one number of the overview: a stage, a task (or all) and a group
/// (`show`: open, not_open, unstarted, half_decided, both_pass, both_reject, split,
/// split_accepted, split_rejected, retained, rejected, in_review, reviewed).
pub async fn items(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<ItemsQuery>,
) -> PageResult {
    use crate::store::catalog::ItemGroup;
    let campaign = state.store.campaign(&c).await?;
    let stage = match q.stage.trim() {
        "" | "1" => crate::domain::Stage::Clip,
        "2" => crate::domain::Stage::Question,
        other => {
            return Err(
                Error::field("stage", format!("`{other}` is not a stage: use 1 or 2")).into(),
            );
        }
    };
    let show = match q.show.trim() {
        "" => "open",
        s => s,
    };
    let group = ItemGroup::parse(show).ok_or_else(|| {
        Error::field(
            "show",
            format!("`{show}` is not one of: {}", ItemGroup::NAMES.join(", ")),
        )
    })?;
    let task = q.task.trim();
    let tasks: Vec<String> = state
        .store
        .tasks(&campaign)
        .await?
        .into_iter()
        .map(|t| t.code)
        .collect();
    if !task.is_empty() && !tasks.iter().any(|t| t == task) {
        return Err(Error::NotFound(format!("no task `{task}` in campaign `{c}`")).into());
    }
    let task = (!task.is_empty()).then_some(task);
    let query = crate::store::catalog::ItemListQuery {
        task: task.map(str::to_string),
        group,
        prefix: crate::domain::paging::prefix("id", Some(&q.id)).map_err(Error::from)?,
        cursor: q.at.cursor()?,
        limit: crate::domain::paging::PAGE_ROWS,
    };
    let page = state.store.items_in_group(&campaign, stage, &query).await?;
    let path = format!("/c/{c}/admin/items");
    let stage_text = stage.number().to_string();
    let pager = super::Pager::new(
        &path,
        &[
            ("stage", stage_text.as_str()),
            ("task", task.unwrap_or("")),
            ("show", show),
            ("id", query.prefix.as_deref().unwrap_or("")),
        ],
        &page,
        |i| crate::domain::paging::Cursor::token(false, &i.item_id),
    );
    let heading = format!(
        "Stage {}: {} {}{}",
        stage.number(),
        if stage == crate::domain::Stage::Clip {
            "clips"
        } else {
            "questions"
        },
        group.words(),
        task.map(|t| format!(", task {t}"))
            .unwrap_or_else(|| ", every task".into())
    );
    let here = format!("/c/{c}/admin");
    let chrome = Chrome::new(&state, &session, Some(&c), &heading, &here).await?;
    Ok(render(&ItemsPage {
        chrome,
        campaign: c,
        heading,
        items: page.rows,
        pager,
        stage: stage.number(),
        task: task.unwrap_or("").to_string(),
        show: show.to_string(),
        id: query.prefix.clone().unwrap_or_default(),
        tasks,
        groups: ItemGroup::NAMES
            .iter()
            .filter_map(|n| match ItemGroup::parse(n) {
                Some(ItemGroup::All) => Some((*n, "every item")),
                Some(g) => Some((*n, g.words())),
                None => None,
            })
            .collect(),
    }))
}

/// A campaign as the campaigns page lists it.
pub struct CampaignRow {
    pub name: String,
    pub protocol: String,
    pub tasks: usize,
    pub qa_types: usize,
    pub cells: usize,
}

#[derive(Template)]
#[template(path = "admin/campaigns.html")]
struct CampaignsPage {
    chrome: Chrome,
    campaigns: Vec<CampaignRow>,
    /// The shipped protocols: (key, name).
    shipped: Vec<(String, String)>,
    /// What the form held, when it comes back with problems.
    name: String,
    chosen: String,
    text: String,
    problems: Vec<String>,
}

/// The shipped protocols by key, with their names (read from the embedded files).
fn shipped_protocols() -> Vec<(String, String)> {
    crate::domain::protocol::SHIPPED
        .iter()
        .filter_map(|(key, text)| {
            crate::domain::protocol::parse(text)
                .ok()
                .map(|p| ((*key).to_string(), p.name))
        })
        .collect()
}

async fn campaigns_page(
    state: &AppState,
    session: &Session,
    form: (String, String, String),
    problems: Vec<String>,
) -> PageResult {
    let mut campaigns = Vec::new();
    for name in state.store.campaign_names().await? {
        let c = state.store.campaign(&name).await?;
        campaigns.push(CampaignRow {
            protocol: c.taxonomy.name.clone(),
            tasks: c.taxonomy.tasks.len(),
            qa_types: c.taxonomy.qa_types.len(),
            cells: c.taxonomy.cell_count(),
            name,
        });
    }
    let first = campaigns.first().map(|c| c.name.clone());
    let chrome = Chrome::new(
        state,
        session,
        first.as_deref(),
        "Campaigns",
        "/admin/campaigns",
    )
    .await?;
    let failed = !problems.is_empty();
    let (name, chosen, text) = form;
    let mut resp = render(&CampaignsPage {
        chrome,
        campaigns,
        shipped: shipped_protocols(),
        name,
        chosen,
        text,
        problems,
    });
    if failed {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// The campaigns and their protocols, and the form that creates one.
pub async fn campaigns(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> PageResult {
    campaigns_page(
        &state,
        &session,
        (String::new(), "vgenst".into(), String::new()),
        Vec::new(),
    )
    .await
}

/// Creates a campaign with a shipped protocol or one pasted as TOML; a protocol with
/// problems comes back with every one of them (line and field) and nothing created.
pub async fn create_campaign(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let name = form.get("name").trim().to_string();
    let chosen = form.get("protocol").trim().to_string();
    let text = form.get("text");
    let again = (name.clone(), chosen.clone(), text.clone());
    let source = if chosen == "own" {
        if text.trim().is_empty() {
            return campaigns_page(
                &state,
                &session,
                again,
                vec!["paste the protocol file (TOML) into the box, or choose a shipped one".into()],
            )
            .await;
        }
        text.clone()
    } else {
        match crate::domain::protocol::shipped(&chosen) {
            Some(t) => t.to_string(),
            None => {
                return campaigns_page(
                    &state,
                    &session,
                    again,
                    vec![format!("there is no shipped protocol `{chosen}`")],
                )
                .await;
            }
        }
    };
    let protocol = match crate::domain::protocol::parse(&source) {
        Ok(p) => p,
        Err(problems) => {
            let problems = problems.iter().map(ToString::to_string).collect();
            return campaigns_page(&state, &session, again, problems).await;
        }
    };
    if let Err(e) = crate::app::sampling::planned(&protocol.taxonomy.sampling) {
        return campaigns_page(&state, &session, again, vec![e.to_string()]).await;
    }
    match state.store.create_campaign(&name, &protocol).await {
        Ok(c) => Ok(super::see_other(&format!("/c/{}/admin", c.name))),
        Err(e @ (Error::Conflict(_) | Error::Field { .. })) => {
            campaigns_page(&state, &session, again, vec![e.to_string()]).await
        }
        Err(e) => Err(e.into()),
    }
}

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
            sampling_page(&state, &session, &c, Some(super::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The admin's pages: the campaign's overview, sampled review, audit trail and items,
/// pairs, accounts, campaigns, imports and exports.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/admin/sampling",
            ADMIN,
            Page,
            get(sampling),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/sampling/run",
            ADMIN,
            Page,
            post(sampling_run),
        ),
        Route::new("GET", "/c/{campaign}/admin/audit", ADMIN, Page, get(audit)),
        Route::new("GET", "/c/{campaign}/admin/items", ADMIN, Page, get(items)),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/audit.csv",
            ADMIN,
            Page,
            get(export_audit),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/regeneration.jsonl",
            ADMIN,
            Page,
            get(export_regeneration),
        ),
        Route::new("GET", "/c/{campaign}/admin", ADMIN, Page, get(overview)),
        Route::new("GET", "/c/{campaign}/admin/pairs", ADMIN, Page, get(pairs)),
        Route::new(
            "POST",
            "/c/{campaign}/admin/pairs",
            ADMIN,
            Page,
            post(set_pair),
        ),
        Route::new("GET", "/admin/users", ADMIN, Page, get(users)),
        Route::new("GET", "/admin/campaigns", ADMIN, Page, get(campaigns)),
        Route::new(
            "POST",
            "/admin/campaigns",
            ADMIN,
            Page,
            post(create_campaign),
        ),
        Route::new("POST", "/admin/users", ADMIN, Page, post(create_user)),
        Route::new("POST", "/admin/roles", ADMIN, Page, post(set_role)),
        Route::new(
            "POST",
            "/admin/users/{name}/token",
            ADMIN,
            Page,
            post(create_token),
        ),
        Route::new(
            "POST",
            "/admin/users/{name}/revoke-tokens",
            ADMIN,
            Page,
            post(revoke_tokens),
        ),
        Route::new(
            "POST",
            "/admin/users/{name}/{action}",
            ADMIN,
            Page,
            post(set_disabled),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/import",
            ADMIN,
            Page,
            get(import_page),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/import/upload",
            ADMIN,
            Page,
            // The upload's size limit (TANDEM_MAX_UPLOAD_BYTES) and the free space
            // are enforced by the handler while it streams the body to disk.
            post(import_upload).layer(axum::extract::DefaultBodyLimit::disable()),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/import/folder",
            ADMIN,
            Page,
            post(import_folder),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports",
            ADMIN,
            Page,
            get(exports),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/decisions.csv",
            ADMIN,
            Page,
            get(export_decisions),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/resolutions.csv",
            ADMIN,
            Page,
            get(export_resolutions),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/retained.zip",
            ADMIN,
            Page,
            get(export_retained),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/paper.zip",
            ADMIN,
            Page,
            get(export_paper),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/study-responses.csv",
            ADMIN,
            Page,
            get(export_study_responses),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/blind-answers.csv",
            ADMIN,
            Page,
            get(export_blind_answers),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/known-verdicts.csv",
            ADMIN,
            Page,
            get(export_known_verdicts),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/defect-probabilities.csv",
            ADMIN,
            Page,
            get(export_defect_probabilities),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/baseline-answers.csv",
            ADMIN,
            Page,
            get(export_baseline_answers),
        ),
    ]
}
