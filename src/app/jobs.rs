//! Long operations as jobs: an import (a manifest and its videos), the retained
//! benchmark's zip, the paper bundle. Starting one stores its row and answers at once;
//! the server that started it runs it (a few at once, the rest queued) and keeps its
//! heartbeat fresh; the row holds its state, its summary or its error, so that any
//! server answers a poll; an export's file is written to the media store
//! (`MEDIA/jobs/ID.zip`, complete before the job says done). A job whose server stopped
//! is found by its old heartbeat and marked failed: an import stores in one write at
//! its end, so a stopped one stored nothing.

use crate::config::Config;
use crate::error::{Error, ErrorBody, Result};
use crate::io;
use crate::store::Store;
use crate::store::catalog::{Campaign, ImportSummary};
use crate::store::jobs::{JobEnd, JobFile, JobKind, JobRecord, JobState};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

/// How often a job's server says that it is still at it.
const BEAT: Duration = Duration::from_secs(10);
/// A job whose heartbeat is older than this has lost its server.
const STALE_MICROS: i64 = 90_000_000;
/// How long a finished job (and its file) is kept.
pub const KEEP_MICROS: i64 = 7 * 24 * 3600 * 1_000_000;
/// The newest jobs a campaign's list gives.
pub const LIST_LIMIT: i64 = 100;
/// Jobs one server runs at once (imports and archives read and write gigabytes).
static RUNNING: LazyLock<tokio::sync::Semaphore> = LazyLock::new(|| tokio::sync::Semaphore::new(2));
/// Jobs one server holds at once, queued or running: more are refused (429) until one
/// has ended, so that a flood of requests cannot pile up work without bound.
pub const MAX_HELD: usize = 16;
static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One job held by this server, until dropped.
struct Held;

impl Held {
    fn take() -> Result<Held> {
        use std::sync::atomic::Ordering;
        HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_HELD).then_some(n + 1)
        })
        .map(|_| Held)
        .map_err(|_| Error::TooMany {
            message: format!(
                "this server already holds {MAX_HELD} jobs, queued or running: start this one once one of them has ended"
            ),
            retry_after: 30,
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

const STOPPED: &str = "the server running this job stopped before it finished; nothing of it was stored: start it again";

/// A job as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Job {
    /// The job's id (poll `/api/v1/campaigns/{campaign}/jobs/{id}`)
    pub id: String,
    pub campaign: String,
    pub kind: JobKind,
    pub state: JobState,
    /// Who started it
    pub requested_by: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: i64,
    #[serde(serialize_with = "crate::clock::ser_opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub started_at: Option<i64>,
    #[serde(serialize_with = "crate::clock::ser_opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<i64>,
    /// What the import stored (an import, once done)
    pub import: Option<ImportSummary>,
    /// Why it failed (once failed): the API's error, with the field or the lines of a
    /// rejected manifest
    pub error: Option<ErrorBody>,
    /// The file an export made (once done)
    pub result: Option<JobResult>,
}

/// The file an export job made.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JobResult {
    pub file_name: String,
    pub content_type: String,
    /// Its length in bytes
    pub size: i64,
    /// Its SHA-256 (hex), to check the download
    pub sha256: String,
    /// Where to download it
    #[schema(format = "uri-reference")]
    pub url: String,
}

/// What a job does, with what it needs.
pub enum Work {
    /// An uploaded zip (`upload.zip` in its scratch folder, unpacked there).
    ImportZip(super::exports::Scratch),
    /// A manifest already on the server (under an import root, checked by the caller).
    ImportManifest(PathBuf),
    Retained,
    /// The paper bundle, its figures stamped with `computed` (microseconds).
    Paper {
        computed: i64,
    },
}

impl Work {
    fn kind(&self) -> JobKind {
        match self {
            Work::ImportZip(_) | Work::ImportManifest(_) => JobKind::Import,
            Work::Retained => JobKind::Retained,
            Work::Paper { .. } => JobKind::Paper,
        }
    }
}

/// Where a finished export's file is.
pub fn result_path(config: &Config, id: &str) -> PathBuf {
    config.media_dir.join("jobs").join(format!("{id}.zip"))
}

/// Stores a new job and starts it; answers with it, queued or running.
pub async fn start(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    requested_by: &str,
    work: Work,
) -> Result<Job> {
    let held = Held::take()?;
    forget_old(store, config).await;
    if matches!(work, Work::Retained | Work::Paper { .. }) {
        // An export writes its file to the media folder: refused (503) while that disk
        // lacks its margin, and the oldest results make room within the budget first.
        let jobs = result_path(config, "x");
        let dir = jobs.parent().unwrap_or(&config.media_dir);
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        crate::io::limits::require_space(dir, 0, &config.limits, "an export")?;
        keep_within_budget(store, config, None).await;
    }
    let id = crate::auth::random_id(16)?;
    store
        .create_job(&id, campaign.id, work.kind(), requested_by)
        .await?;
    tracing::info!(job = %id, kind = %work.kind(), campaign = %campaign.name, by = requested_by, "job started");
    let (s, c, camp, job_id) = (store.clone(), config.clone(), campaign.clone(), id.clone());
    tokio::spawn(async move {
        run(s, c, camp, job_id, work).await;
        drop(held);
    });
    job(store, campaign, &id).await
}

/// Runs a job to its end: the heartbeat beside it, the work in a task of its own (so
/// that a panic ends the job as failed instead of leaving it running).
async fn run(store: Store, config: Config, campaign: Campaign, id: String, work: Work) {
    let beat = {
        let (store, id) = (store.clone(), id.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(BEAT).await;
                if let Ok(false) = store.job_beat(&id, false).await {
                    break;
                }
            }
        })
    };
    let end = match RUNNING.acquire().await {
        Ok(_permit) => match store.job_beat(&id, true).await {
            Ok(true) => {
                let (s, c, camp, job_id) =
                    (store.clone(), config.clone(), campaign.clone(), id.clone());
                match tokio::spawn(async move { work_on(&s, &c, &camp, &job_id, work).await }).await
                {
                    Ok(end) => end,
                    Err(e) => Err(Error::fault("the job stopped", e)),
                }
            }
            // Marked failed meanwhile (its heartbeat was late): nothing to do.
            Ok(false) => {
                beat.abort();
                return;
            }
            Err(e) => Err(e),
        },
        Err(_) => Err(Error::Internal("the server is stopping".into())),
    };
    beat.abort();
    let end = match end {
        Ok(end) => end,
        Err(e) => {
            let body = {
                let _span = tracing::info_span!("job", job = %id).entered();
                e.body()
            };
            tracing::info!(job = %id, error = %e, "job failed");
            match serde_json::to_string(&body) {
                Ok(error) => JobEnd::Failed { error },
                Err(e) => JobEnd::Failed {
                    error: format!(
                        r#"{{"error":"internal","detail":"the error could not be written: {e}"}}"#
                    ),
                },
            }
        }
    };
    if let JobEnd::Done { .. } = &end {
        tracing::info!(job = %id, "job done");
    }
    let made_file = matches!(&end, JobEnd::Done { file: Some(_), .. });
    match store.finish_job(&id, &end).await {
        Ok(true) if made_file => keep_within_budget(&store, &config, Some(&id)).await,
        Ok(true) => {}
        Ok(false) => tracing::warn!(job = %id, "the job had been marked failed meanwhile"),
        Err(e) => tracing::error!(job = %id, error = %e, "cannot store how the job ended"),
    }
}

/// The work itself.
async fn work_on(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    id: &str,
    work: Work,
) -> Result<JobEnd> {
    match work {
        Work::ImportZip(scratch) => {
            let found = unpack(config, scratch.path()).await;
            let summary = match found {
                Ok(manifest) => import(store, config, campaign, &manifest).await,
                Err(e) => Err(e),
            };
            scratch.remove().await;
            summary
        }
        Work::ImportManifest(manifest) => import(store, config, campaign, &manifest).await,
        Work::Retained => {
            export(store, config, id, |out| {
                super::exports::retained_to(store, config, campaign, out)
            })
            .await
        }
        Work::Paper { computed } => {
            export(store, config, id, |out| {
                super::exports::paper_to(store, config, campaign, computed, out)
            })
            .await
        }
    }
}

/// Unpacks `dir/upload.zip` into `dir/files` and finds its manifest.
async fn unpack(config: &Config, dir: &Path) -> Result<PathBuf> {
    let zip = dir.join("upload.zip");
    let dest = dir.join("files");
    let limits = config.limits.clone();
    let data_dir = config.data_dir.clone();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dest).map_err(|e| Error::io("cannot unpack", e))?;
        io::archive::unpack(&zip, &dest, &limits, &data_dir)?;
        io::archive::find_manifest(&dest)
    })
    .await
    .map_err(|e| Error::fault("unpacking failed", e))?
}

async fn import(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    manifest: &Path,
) -> Result<JobEnd> {
    let summary = super::import_manifest(store, config, &campaign.name, manifest).await?;
    super::media::warm_up(store, config);
    let summary = serde_json::to_string(&summary)
        .map_err(|e| Error::fault("cannot write the import's summary", e))?;
    Ok(JobEnd::Done {
        summary: Some(summary),
        file: None,
    })
}

/// The stored name of a job's file in a bucket (every server can send it).
fn result_name(id: &str) -> String {
    format!("jobs/{id}.zip")
}

/// Writes an export to `ID.zip.partial` in the media folder's job folder, makes it
/// durable, hashes it, and gives it its name: the file exists only complete. When the
/// media live in a bucket, the file goes up there (complete or not at all), so that any
/// server can send it.
async fn export<F, Fut>(store: &Store, config: &Config, id: &str, make: F) -> Result<JobEnd>
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<String>>,
{
    let done = result_path(config, id);
    let partial = done.with_extension("zip.partial");
    if let Some(dir) = done.parent() {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    let made = make(partial.clone()).await;
    let name = match made {
        Ok(name) => name,
        Err(e) => {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(e);
        }
    };
    let (p, d) = (partial.clone(), done.clone());
    let sealed = tokio::task::spawn_blocking(move || -> Result<(u64, String)> {
        let (bytes, sha256) = hash_file(&p)?;
        std::fs::File::open(&p)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io("cannot make the archive durable", e))?;
        std::fs::rename(&p, &d).map_err(|e| Error::io("cannot store the archive", e))?;
        // The rename is durable only once the folder is: a failure here is the job's.
        if let Some(dir) = d.parent()
            && let Err(e) = std::fs::File::open(dir).and_then(|f| f.sync_all())
        {
            let _ = std::fs::remove_file(&d);
            return Err(Error::io("cannot make the archive's folder durable", e));
        }
        Ok((bytes, sha256))
    })
    .await
    .map_err(|e| Error::fault("storing the archive failed", e))
    .and_then(|r| r);
    let (bytes, sha256) = match sealed {
        Ok(x) => x,
        Err(e) => {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(e);
        }
    };
    let media = super::media::media_store(store, config).await;
    if let Ok(media @ crate::io::objects::MediaStore::Bucket(_)) = &media {
        let sent = media.put_file(&result_name(id), &done).await;
        let _ = tokio::fs::remove_file(&done).await;
        sent?;
    }
    Ok(JobEnd::Done {
        summary: None,
        file: Some(JobFile {
            name,
            bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
            sha256,
        }),
    })
}

/// A file's length and SHA-256 (hex), read once.
fn hash_file(path: &Path) -> Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("cannot read the archive", e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| Error::io("cannot read the archive", e))?;
        if n == 0 {
            break;
        }
        len += n as u64;
        h.update(&buf[..n]);
    }
    Ok((len, crate::auth::hex(&h.finalize())))
}

/// Forgets the jobs finished more than [`KEEP_MICROS`] ago and removes their files
/// (best effort: a failure is logged, and tried again at the next start).
async fn forget_old(store: &Store, config: &Config) {
    let cutoff = store.now() - KEEP_MICROS;
    match store.forget_jobs_before(cutoff).await {
        Ok(ids) => {
            for id in ids {
                remove_result(store, config, &id).await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot forget old jobs"),
    }
}

/// Forgets the oldest finished exports until their files fit in the budget
/// (`TANDEM_MAX_JOB_FILES_BYTES`), `keep` (the one just made) kept; best effort.
async fn keep_within_budget(store: &Store, config: &Config, keep: Option<&str>) {
    let budget = i64::try_from(config.limits.job_files_bytes).unwrap_or(i64::MAX);
    match store.forget_job_files_over(budget, keep).await {
        Ok(ids) => {
            for id in ids {
                tracing::info!(job = %id, budget, "an old export's file removed to keep the job files within their budget");
                remove_result(store, config, &id).await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot keep the job files within their budget"),
    }
}

/// Removes a job's file, if it has one (in the bucket too, when the media live there).
pub async fn remove_result(store: &Store, config: &Config, id: &str) {
    if let Ok(media @ crate::io::objects::MediaStore::Bucket(_)) =
        &super::media::media_store(store, config).await
        && let Err(e) = media.remove(&result_name(id)).await
    {
        tracing::warn!(job = id, error = %e, "cannot remove the job's file from the bucket");
    }
    let path = result_path(config, id);
    match tokio::fs::remove_file(&path).await {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(job = id, error = %e, "cannot remove the job's file"),
    }
}

/// Marks failed the jobs among `rows` whose server stopped; true when it marked any.
async fn settle_stale(store: &Store, rows: &[JobRecord]) -> Result<bool> {
    let cutoff = store.now() - STALE_MICROS;
    let stale = rows.iter().any(|r| {
        JobState::parse(&r.state).is_some_and(JobState::unfinished) && r.heartbeat_at < cutoff
    });
    if !stale {
        return Ok(false);
    }
    let body = ErrorBody {
        error: crate::error::ErrorKind::Internal,
        detail: STOPPED.to_string(),
        field: None,
        problems: None,
    };
    let error =
        serde_json::to_string(&body).map_err(|e| Error::fault("cannot write the error", e))?;
    store.fail_stale_jobs(cutoff, &error).await?;
    Ok(true)
}

/// One job of a campaign.
pub async fn job(store: &Store, campaign: &Campaign, id: &str) -> Result<Job> {
    let not_found = || Error::NotFound(format!("no job `{id}` in campaign `{}`", campaign.name));
    let mut row = store.job(campaign.id, id).await?.ok_or_else(not_found)?;
    if settle_stale(store, std::slice::from_ref(&row)).await? {
        row = store.job(campaign.id, id).await?.ok_or_else(not_found)?;
    }
    view(campaign, row)
}

/// A campaign's newest jobs, newest first.
pub async fn jobs(store: &Store, campaign: &Campaign) -> Result<Vec<Job>> {
    let mut rows = store.jobs(campaign.id, LIST_LIMIT).await?;
    if settle_stale(store, &rows).await? {
        rows = store.jobs(campaign.id, LIST_LIMIT).await?;
    }
    rows.into_iter().map(|r| view(campaign, r)).collect()
}

/// A job's row as the API shows it.
fn view(campaign: &Campaign, r: JobRecord) -> Result<Job> {
    let unreadable =
        |what: &str| Error::Internal(format!("job `{}`: its {what} is unreadable", r.id));
    let kind = JobKind::parse(&r.kind).ok_or_else(|| unreadable("kind"))?;
    let state = JobState::parse(&r.state).ok_or_else(|| unreadable("state"))?;
    let import = match &r.summary {
        Some(s) => Some(serde_json::from_str(s).map_err(|_| unreadable("summary"))?),
        None => None,
    };
    let error = match &r.error {
        Some(s) => Some(serde_json::from_str(s).map_err(|_| unreadable("error"))?),
        None => None,
    };
    let result = match (state, r.file_name, r.file_bytes, r.file_sha256) {
        (JobState::Done, Some(file_name), Some(bytes), Some(sha256)) => Some(JobResult {
            file_name,
            content_type: super::exports::ZIP.to_string(),
            size: bytes,
            sha256,
            url: format!("/api/v1/campaigns/{}/jobs/{}/result", campaign.name, r.id),
        }),
        _ => None,
    };
    Ok(Job {
        id: r.id,
        campaign: campaign.name.clone(),
        kind,
        state,
        requested_by: r.requested_by,
        created_at: r.created_at,
        started_at: r.started_at,
        finished_at: r.finished_at,
        import,
        error,
        result,
    })
}

/// A finished export's file, opened, with its length and name.
pub async fn result_file(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    id: &str,
) -> Result<super::exports::Download> {
    let j = job(store, campaign, id).await?;
    let Some(result) = j.result else {
        return Err(Error::Conflict(match j.state {
            JobState::Queued | JobState::Running => format!(
                "job `{id}` is {}: its file is there once it is done",
                j.state.as_str()
            ),
            JobState::Failed => format!("job `{id}` failed: it made no file"),
            JobState::Done => format!("job `{id}` makes no file"),
        }));
    };
    let media = super::media::media_store(store, config).await?;
    if let crate::io::objects::MediaStore::Bucket(_) = &media {
        let name = result_name(&j.id);
        let len = match media.meta(&name).await {
            Ok(m) => m.size,
            Err(Error::NotFound(_)) => {
                return Err(Error::NotFound(format!(
                    "job `{id}`'s file is no longer in the media store"
                )));
            }
            Err(e) => return Err(e),
        };
        return Ok(super::exports::Download {
            file_name: result.file_name,
            content_type: super::exports::ZIP,
            body: super::exports::DownloadBody::Stored { media, name, len },
        });
    }
    let path = result_path(config, &j.id);
    let opened = tokio::task::spawn_blocking(move || -> std::io::Result<(std::fs::File, u64)> {
        let file = std::fs::File::open(&path)?;
        let len = file.metadata()?.len();
        Ok((file, len))
    })
    .await
    .map_err(|e| Error::fault("opening the job's file failed", e))?;
    let (file, len) = match opened {
        Ok(x) => x,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NotFound(format!(
                "job `{id}`'s file is no longer in the media store"
            )));
        }
        Err(e) => return Err(Error::io("cannot open the job's file", e)),
    };
    Ok(super::exports::Download {
        file_name: result.file_name,
        content_type: super::exports::ZIP,
        body: super::exports::DownloadBody::File { file, len },
    })
}

/// Forgets a finished job and removes its file.
pub async fn delete(store: &Store, config: &Config, campaign: &Campaign, id: &str) -> Result<()> {
    let j = job(store, campaign, id).await?;
    if j.state.unfinished() {
        return Err(Error::Conflict(format!(
            "job `{id}` is {}: it can be removed once it has ended",
            j.state.as_str()
        )));
    }
    if !store.delete_job(campaign.id, id).await? {
        return Err(Error::NotFound(format!(
            "no job `{id}` in campaign `{}`",
            campaign.name
        )));
    }
    remove_result(store, config, id).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server holds at most `MAX_HELD` jobs: the next is refused with a time to retry
    /// until one ends. (No other unit test starts a job.)
    #[test]
    fn a_server_holds_a_bounded_number_of_jobs() {
        let held: Vec<Held> = (0..MAX_HELD).map(|_| Held::take().unwrap()).collect();
        match Held::take() {
            Err(Error::TooMany { retry_after, .. }) => assert_eq!(retry_after, 30),
            Err(e) => panic!("refused otherwise: {e}"),
            Ok(_) => panic!("a job beyond the bound was taken"),
        }
        drop(held);
        assert!(Held::take().is_ok());
    }
}
