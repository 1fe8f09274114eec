//! The admin's pages: where the campaign stands, accounts and pairs, imports and
//! exports.

use super::{Chrome, FormFields, PageResult, render};
use crate::AppState;
use crate::domain::Role;
use crate::error::{Error, LineError};
use crate::store::accounts::PoolPlacement;
use crate::store::catalog::{StageProgress, TaskProgress};
use crate::store::sessions::Session;
use crate::{auth, io};
use askama::Template;
use axum::Extension;
use axum::body::Body;
use axum::extract::{Multipart, Path, RawForm, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::path::PathBuf;

/// One row of the overview: a task (or the total) in both stages.
pub struct OverviewRow {
    pub task: String,
    pub pair: String,
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
    let retained = p.stage1.both_pass + p.stage1.split_accepted;
    OverviewRow {
        task,
        pair,
        in_review: p.stage1.unstarted + p.stage1.half_decided + p.stage1.split,
        reached: retained >= target,
        new_version: p.stage1.both_reject + p.stage1.split_rejected,
        retained: p.stage1.both_pass + p.stage1.split_accepted,
        s2_reviewed: p.stage2.items - p.stage2.unstarted - p.stage2.half_decided,
        s2_retained: p.stage2.both_pass + p.stage2.split_accepted,
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
}

#[derive(Template)]
#[template(path = "admin/overview.html")]
struct OverviewPage {
    chrome: Chrome,
    campaign: String,
    exists: bool,
    rows: Vec<OverviewRow>,
    total: OverviewRow,
    splits_waiting: i64,
    target: i64,
    tasks_reached: usize,
    regeneration: Vec<crate::store::records::RegenerationItem>,
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
                exists: false,
                rows: vec![],
                total: row("Total".into(), String::new(), &empty, 0),
                splits_waiting: 0,
                target: 0,
                tasks_reached: 0,
                regeneration: vec![],
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
        rows.push(row(
            p.task.clone(),
            pair,
            p,
            campaign.settings.target_per_task,
        ));
    }
    let splits_waiting = total.stage1.split + total.stage2.split;
    let target = campaign.settings.target_per_task;
    let tasks = i64::try_from(rows.len()).unwrap_or(0);
    Ok(render(&OverviewPage {
        chrome,
        campaign: c,
        exists: true,
        tasks_reached: rows.iter().filter(|r| r.reached).count(),
        total: row("Total".into(), String::new(), &total, target * tasks),
        rows,
        splits_waiting,
        target,
        regeneration: state.store.regeneration_list(&campaign).await?,
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
    let here = format!("/c/{c}/admin/pairs");
    let chrome = Chrome::new(&state, &session, Some(&c), "Validator pairs", &here).await?;
    Ok(render(&PairsPage {
        chrome,
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
    Extension(session): Extension<Session>,
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
        Err(e @ (Error::Invalid(_) | Error::NotFound(_))) => format!("Not changed: {e}"),
        Err(e) => return Err(e.into()),
    };
    state.store.set_flash(&session, &message).await?;
    Ok(crate::web::see_other(&format!("/c/{c}/admin/pairs")))
}

pub struct UserRow {
    pub name: String,
    pub role: &'static str,
    pub pools: String,
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
        .users()
        .await?
        .into_iter()
        .map(|u| UserRow {
            pools: entries
                .iter()
                .filter(|e| e.user == u.name)
                .map(|e| format!("{} #{}", e.campaign, e.index))
                .collect::<Vec<_>>()
                .join(", "),
            name: u.name,
            role: u.role.as_str(),
        })
        .collect();
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
    let placement = if index.is_empty() {
        None
    } else {
        match index.parse::<i64>() {
            Ok(i) => Some(PoolPlacement {
                campaign: form.get("campaign").trim().to_string(),
                index: i,
            }),
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
    // A password is taken as typed, spaces and all.
    let typed = form.get("password");
    let (password, generated) = if typed.is_empty() {
        (auth::generate_password()?, true)
    } else {
        if let Err(e) = auth::check_password_strength(&typed) {
            return users_page(&state, &session, Some(super::for_people(&e))).await;
        }
        (typed, false)
    };
    let hash = crate::cli::hash_blocking(password.clone()).await?;
    match state.store.add_user(&name, role, &hash, placement).await {
        Ok(user) => {
            if generated {
                secret_page(
                    &state,
                    &session,
                    format!("The password of {} {}", user.role, user.name),
                    password,
                )
                .await
            } else {
                state
                    .store
                    .set_flash(&session, &format!("Created {} {}.", user.role, user.name))
                    .await?;
                Ok(crate::web::see_other("/admin/users"))
            }
        }
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            users_page(&state, &session, Some(super::for_people(&e))).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn revoke_tokens(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(name): Path<String>,
    _form: RawForm,
) -> PageResult {
    let n = state.store.revoke_tokens(&name).await?;
    state
        .store
        .set_flash(&session, &format!("Revoked {n} API token(s) of {name}."))
        .await?;
    Ok(crate::web::see_other("/admin/users"))
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
    csrf: String,
    folder: String,
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
        csrf: chrome.csrf.clone(),
        chrome,
        campaign: c.to_string(),
        folder,
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
    match crate::cli::import_manifest(&state.store, &state.config, c, manifest).await {
        Ok(summary) => {
            crate::web::media::warm_strips(state);
            state
                .store
                .set_flash(session, &format!("Imported: {summary}."))
                .await?;
            Ok(crate::web::see_other(&format!("/c/{c}/admin")))
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
    finish_import(&state, &session, &c, &PathBuf::from(&path), path.clone()).await
}

/// A folder under the data folder for one upload or export, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(state: &AppState, what: &str) -> Result<Scratch, Error> {
        let p = state
            .config
            .data_dir
            .join("tmp")
            .join(format!("{what}-{}", auth::random_id(8)?));
        std::fs::create_dir_all(&p).map_err(|e| Error::io("cannot create a scratch folder", e))?;
        Ok(Scratch(p))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Imports an uploaded zip holding a manifest and its videos.
pub async fn import_upload(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    mut multipart: Multipart,
) -> PageResult {
    use tokio::io::AsyncWriteExt;
    let scratch = Scratch::new(&state, "upload")?;
    let zip_path = scratch.0.join("upload.zip");
    let mut got = false;
    while let Some(mut f) = multipart
        .next_field()
        .await
        .map_err(|e| Error::Invalid(format!("the upload broke off: {e}")))?
    {
        if f.name() != Some("archive") {
            continue;
        }
        let mut out = tokio::fs::File::create(&zip_path)
            .await
            .map_err(|e| Error::io("cannot store the upload", e))?;
        while let Some(chunk) = f
            .chunk()
            .await
            .map_err(|e| Error::Invalid(format!("the upload broke off: {e}")))?
        {
            out.write_all(&chunk)
                .await
                .map_err(|e| Error::io("cannot store the upload", e))?;
        }
        out.flush()
            .await
            .map_err(|e| Error::io("cannot store the upload", e))?;
        got = true;
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
    let unpacked = scratch.0.join("files");
    let dest = unpacked.clone();
    let found = tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dest).map_err(|e| Error::io("cannot unpack", e))?;
        io::archive::unpack(&zip_path, &dest)?;
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
}

pub async fn exports(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let decisions = state.store.decision_records(&campaign).await?.len();
    let resolutions = state.store.resolution_records(&campaign).await?.len();
    let (_, counts) = state.store.retained(&campaign).await?;
    let here = format!("/c/{c}/admin/exports");
    let chrome = Chrome::new(&state, &session, Some(&c), "Exports", &here).await?;
    Ok(render(&ExportsPage {
        chrome,
        campaign: c,
        decisions,
        resolutions,
        retained: counts.clips_retained,
    }))
}

fn download(name: &str, content_type: &'static str, body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response()
}

pub async fn export_decisions(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let records = state.store.decision_records(&campaign).await?;
    let mut body = Vec::new();
    io::records::write_decisions(&mut body, &records)?;
    Ok(download(
        &format!("{c}-decisions.csv"),
        "text/csv; charset=utf-8",
        Body::from(body),
    ))
}

pub async fn export_resolutions(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let records = state.store.resolution_records(&campaign).await?;
    let mut body = Vec::new();
    io::records::write_resolutions(&mut body, &records)?;
    Ok(download(
        &format!("{c}-resolutions.csv"),
        "text/csv; charset=utf-8",
        Body::from(body),
    ))
}

/// The retained benchmark (as `tandem export retained` makes it) in one zip.
pub async fn export_retained(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let (clips, counts) = state.store.retained(&campaign).await?;
    let scratch = Scratch::new(&state, "export")?;
    let folder = scratch.0.join("retained");
    let zip_path = scratch.0.join("retained.zip");
    let media = state.config.media_dir.clone();
    let name = campaign.name.clone();
    let (f2, z2) = (folder.clone(), zip_path.clone());
    tokio::task::spawn_blocking(move || -> Result<(), Error> {
        io::export::write_retained(&f2, &name, &clips, &counts, &media)?;
        io::archive::pack(&f2, &format!("{name}-retained"), &z2)
    })
    .await
    .map_err(|e| Error::Internal(format!("export failed: {e}")))??;
    let file = tokio::fs::File::open(&zip_path)
        .await
        .map_err(|e| Error::io("cannot open the archive", e))?;
    let len = file
        .metadata()
        .await
        .map_err(|e| Error::io("cannot read the archive", e))?
        .len();
    // The open file outlives its folder: the scratch folder goes when this returns.
    let body = crate::web::media::file_body(file, 0, len);
    drop(scratch);
    Ok(download(
        &format!("{c}-retained.zip"),
        "application/zip",
        body,
    ))
}

#[derive(serde::Deserialize)]
pub struct AuditQuery {
    clip: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    chrome: Chrome,
    campaign: String,
    clip: String,
    events: Vec<crate::store::records::AuditEvent>,
}

impl AuditPage {
    fn time(&self, at: &i64) -> String {
        crate::clock::to_rfc3339(*at)
    }
}

/// Every event of one clip, in order.
pub async fn audit(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<AuditQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let clip = q.clip.unwrap_or_default().trim().to_string();
    let events = if clip.is_empty() {
        Vec::new()
    } else {
        state.store.audit(&campaign, Some(&clip)).await?
    };
    let here = format!("/c/{c}/admin/audit");
    let chrome = Chrome::new(&state, &session, Some(&c), "Audit trail", &here).await?;
    Ok(render(&AuditPage {
        chrome,
        campaign: c,
        clip,
        events,
    }))
}

pub async fn export_audit(State(state): State<AppState>, Path(c): Path<String>) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let events = state.store.audit(&campaign, None).await?;
    let mut body = Vec::new();
    io::records::write_audit(&mut body, &events)?;
    Ok(download(
        &format!("{c}-audit.csv"),
        "text/csv; charset=utf-8",
        Body::from(body),
    ))
}

pub async fn export_regeneration(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let items = state.store.regeneration_list(&campaign).await?;
    let mut body = Vec::new();
    io::records::write_regeneration(&mut body, &items)?;
    Ok(download(
        &format!("{c}-regeneration.jsonl"),
        "application/jsonl; charset=utf-8",
        Body::from(body),
    ))
}
