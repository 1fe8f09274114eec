//! Every export, made once: the CLI writes it to a file (or standard output), the
//! pages and the API send it as an attachment (`web::media::download`, the same
//! headers for both). The archives (the retained benchmark, the paper bundle) are
//! packed in a scratch folder under the data folder, opened, and the folder removed
//! on the blocking pool before the reply streams the open file.

use crate::config::Config;
use crate::domain::records::AuditFilter;
use crate::error::{Error, Result};
use crate::io;
use crate::store::Store;
use crate::store::catalog::Campaign;
use std::path::{Path, PathBuf};

const CSV: &str = "text/csv; charset=utf-8";
const JSONL: &str = "application/jsonl; charset=utf-8";
pub const ZIP: &str = "application/zip";

/// One export: its file name, type and content.
#[derive(Debug)]
pub struct Download {
    pub file_name: String,
    pub content_type: &'static str,
    pub body: DownloadBody,
}

#[derive(Debug)]
pub enum DownloadBody {
    Bytes(Vec<u8>),
    /// An open file of `len` bytes (its folder may be gone already).
    File {
        file: std::fs::File,
        len: u64,
    },
    /// A stored file of `len` bytes in the media store (a job's file in a bucket),
    /// streamed from there.
    Stored {
        media: io::objects::MediaStore,
        name: String,
        len: u64,
    },
}

impl Download {
    fn bytes(campaign: &Campaign, suffix: &str, content_type: &'static str, body: Vec<u8>) -> Self {
        Download {
            file_name: format!("{}-{suffix}", campaign.name),
            content_type,
            body: DownloadBody::Bytes(body),
        }
    }

    /// The content as bytes (the CLI writes them; an archive is read whole).
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        match self.body {
            DownloadBody::Bytes(b) => Ok(b),
            DownloadBody::File { mut file, .. } => {
                use std::io::Read;
                let mut out = Vec::new();
                file.read_to_end(&mut out)
                    .map_err(|e| Error::io("cannot read the archive", e))?;
                Ok(out)
            }
            // Only a job's file is stored so, and only the server sends one.
            DownloadBody::Stored { name, .. } => Err(Error::Invalid(format!(
                "{name} is in the media store's bucket: download it from the server (GET .../jobs/ID/file)"
            ))),
        }
    }
}

/// Every decision of the campaign as CSV, in the order they were recorded.
pub async fn decisions(store: &Store, campaign: &Campaign) -> Result<Download> {
    let records = store.decision_records(campaign).await?;
    let mut body = Vec::new();
    io::records::write_decisions(&mut body, &records)?;
    Ok(Download::bytes(campaign, "decisions.csv", CSV, body))
}

/// Every blind answer of the campaign (the blind key check) as CSV.
pub async fn blind_answers(store: &Store, campaign: &Campaign) -> Result<Download> {
    let records = store.blind_records(campaign).await?;
    let mut body = Vec::new();
    io::records::write_blind_answers(&mut body, &records)?;
    Ok(Download::bytes(campaign, "blind-answers.csv", CSV, body))
}

/// Every verdict on a known item of the live queue, beside its known verdict, as CSV
/// (kept apart from `decisions.csv`, which holds the benchmark's).
pub async fn known_verdicts(store: &Store, campaign: &Campaign) -> Result<Download> {
    let records = store.known_records(campaign).await?;
    let body = crate::report::known::verdicts_csv(&records)
        .to_csv()?
        .into_bytes();
    Ok(Download::bytes(campaign, "known-verdicts.csv", CSV, body))
}

/// Each decided item's probability of a defect under its stage's review-quality model,
/// anchored by the known items (empty where the data do not identify the model), as
/// CSV. CPU work: off the runtime.
pub async fn defect_probabilities(store: &Store, campaign: &Campaign) -> Result<Download> {
    let items = store.decided_items(campaign).await?;
    let known = store.known_records(campaign).await?;
    let rows = super::estimates::defect_probabilities(&campaign.taxonomy, items, known).await?;
    let body = crate::report::quality::defect_csv(&rows)
        .to_csv()?
        .into_bytes();
    Ok(Download::bytes(
        campaign,
        "defect-probabilities.csv",
        CSV,
        body,
    ))
}

/// Every resolution of the campaign as CSV.
pub async fn resolutions(store: &Store, campaign: &Campaign) -> Result<Download> {
    let records = store.resolution_records(campaign).await?;
    let mut body = Vec::new();
    io::records::write_resolutions(&mut body, &records)?;
    Ok(Download::bytes(campaign, "resolutions.csv", CSV, body))
}

/// The audit trail as CSV, with a filter (all of it without).
pub async fn audit(store: &Store, campaign: &Campaign, filter: &AuditFilter) -> Result<Download> {
    let events = store.audit(campaign, filter).await?;
    let mut body = Vec::new();
    io::records::write_audit(&mut body, &events)?;
    Ok(Download::bytes(campaign, "audit.csv", CSV, body))
}

/// The clips to generate again, one JSON line each.
pub async fn regeneration(store: &Store, campaign: &Campaign) -> Result<Download> {
    let items = store.regeneration_list(campaign).await?;
    let mut body = Vec::new();
    io::records::write_regeneration(&mut body, &items)?;
    Ok(Download::bytes(campaign, "regeneration.jsonl", JSONL, body))
}

/// The blind study's answers as CSV.
pub async fn study_responses(store: &Store, campaign: &Campaign) -> Result<Download> {
    let study = store.require_study(campaign).await?;
    let data = store.study_data(&study).await?;
    let mut body = Vec::new();
    io::study::write_responses(&mut body, &data)?;
    Ok(Download::bytes(campaign, "study-responses.csv", CSV, body))
}

/// The human baseline's answers as CSV, in the format `tandem baseline import` reads.
pub async fn baseline_answers(store: &Store, campaign: &Campaign) -> Result<Download> {
    let rows = crate::app::baseline::answer_rows(store, campaign).await?;
    let mut body = Vec::new();
    io::baseline::write_answers(&mut body, &rows)?;
    Ok(Download::bytes(campaign, "baseline-answers.csv", CSV, body))
}

/// The retained benchmark (as `tandem export retained` writes it to a folder) in one zip.
pub async fn retained_zip(store: &Store, config: &Config, campaign: &Campaign) -> Result<Download> {
    let fill = retained_fill(store, config, campaign).await?;
    zip_of(
        config,
        "export",
        format!("{}-retained", campaign.name),
        fill,
    )
    .await
    .map(|z| z.named(retained_name(campaign)))
}

/// The retained benchmark's zip written to `out`; returns the name a download gives it.
pub async fn retained_to(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    out: PathBuf,
) -> Result<String> {
    let fill = retained_fill(store, config, campaign).await?;
    zip_to(
        config,
        "export",
        format!("{}-retained", campaign.name),
        fill,
        out,
    )
    .await?;
    Ok(retained_name(campaign))
}

fn retained_name(campaign: &Campaign) -> String {
    format!("{}-retained.zip", campaign.name)
}

/// A folder holding the videos of `clips` under their SHA-256: the media folder itself,
/// or, when the media live in a bucket, a folder of fetched copies (returned a second
/// time: the caller removes it when done).
async fn videos_here(
    store: &Store,
    config: &Config,
    clips: &[crate::domain::records::RetainedClip],
) -> Result<(std::path::PathBuf, Option<std::path::PathBuf>)> {
    let store_media = super::media::media_store(store, config).await?;
    match &store_media {
        io::objects::MediaStore::Local(dir) => Ok((dir.clone(), None)),
        io::objects::MediaStore::Bucket(_) => {
            let folder = config
                .media_dir
                .join(format!(".export-{}", crate::auth::random_id(8)?));
            tokio::fs::create_dir_all(&folder)
                .await
                .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
            let mut seen = std::collections::HashSet::new();
            for c in clips {
                if seen.insert(c.media_sha256.as_str())
                    && let Err(e) = store_media
                        .fetch_to(&c.media_sha256, &folder.join(&c.media_sha256))
                        .await
                {
                    let _ = tokio::fs::remove_dir_all(&folder).await;
                    return Err(e);
                }
            }
            Ok((folder.clone(), Some(folder)))
        }
    }
}

/// Writes the retained benchmark into the folder `out` (the CLI's export), its videos
/// from wherever the media live.
pub async fn retained_to_folder(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    out: &Path,
) -> Result<(
    io::export::ExportSummary,
    crate::domain::records::RetainedCounts,
)> {
    let (clips, counts) = store.retained(campaign).await?;
    let (media, fetched) = videos_here(store, config, &clips).await?;
    let (out, name, variants) = (
        out.to_path_buf(),
        campaign.name.clone(),
        campaign.taxonomy.variants,
    );
    let counts_c = counts.clone();
    let written = tokio::task::spawn_blocking(move || {
        io::export::write_retained(&out, &name, &clips, &counts_c, &media, variants)
    })
    .await
    .map_err(|e| Error::fault("the export task failed", e));
    if let Some(f) = fetched {
        let _ = tokio::fs::remove_dir_all(f).await;
    }
    Ok((written??, counts))
}

/// What fills the retained benchmark's folder (read from the store now).
async fn retained_fill(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
) -> Result<impl FnOnce(&Path) -> Result<()> + Send + 'static> {
    let (clips, counts) = store.retained(campaign).await?;
    let name = campaign.name.clone();
    let variants = campaign.taxonomy.variants;
    let (media, fetched) = videos_here(store, config, &clips).await?;
    Ok(move |folder: &Path| {
        let written =
            io::export::write_retained(folder, &name, &clips, &counts, &media, variants).map(drop);
        if let Some(f) = fetched {
            let _ = std::fs::remove_dir_all(f);
        }
        written
    })
}

/// Everything a paper needs (as `tandem export paper` writes it to a folder) in one zip.
pub async fn paper_zip(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    computed: i64,
) -> Result<Download> {
    let files = super::paper_bundle(store, campaign, computed).await?;
    let prefix = format!("{}-paper", campaign.name);
    zip_of(config, "paper", prefix, move |folder| {
        crate::report::bundle::write(folder, &files)
    })
    .await
    .map(|z| z.named(paper_name(campaign)))
}

/// The paper bundle's zip written to `out`; returns the name a download gives it.
pub async fn paper_to(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    computed: i64,
    out: PathBuf,
) -> Result<String> {
    let files = super::paper_bundle(store, campaign, computed).await?;
    let prefix = format!("{}-paper", campaign.name);
    zip_to(
        config,
        "paper",
        prefix,
        move |folder| crate::report::bundle::write(folder, &files),
        out,
    )
    .await?;
    Ok(paper_name(campaign))
}

fn paper_name(campaign: &Campaign) -> String {
    format!("{}-paper.zip", campaign.name)
}

impl Download {
    fn named(mut self, name: String) -> Download {
        self.file_name = name;
        self
    }
}

/// Fills a scratch folder with `fill`, packs it as a zip whose entries start with
/// `prefix`, opens the zip and removes the folder: all on the blocking pool.
async fn zip_of(
    config: &Config,
    what: &str,
    prefix: String,
    fill: impl FnOnce(&Path) -> Result<()> + Send + 'static,
) -> Result<Download> {
    let scratch = Scratch::new(config, what)?;
    let dir = scratch.path().to_path_buf();
    let made = tokio::task::spawn_blocking(move || -> Result<(std::fs::File, u64)> {
        let zip_path = dir.join("archive.zip");
        fill_and_pack(&dir, fill, &prefix, &zip_path)?;
        let file =
            std::fs::File::open(&zip_path).map_err(|e| Error::io("cannot open the archive", e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io("cannot read the archive", e))?
            .len();
        Ok((file, len))
    })
    .await
    .map_err(|e| Error::fault("the export failed", e))?;
    // The open file outlives its folder.
    scratch.remove().await;
    let (file, len) = made?;
    Ok(Download {
        file_name: String::new(),
        content_type: ZIP,
        body: DownloadBody::File { file, len },
    })
}

/// As [`zip_of`], the zip written to `out` (whose folder exists) instead of opened.
async fn zip_to(
    config: &Config,
    what: &str,
    prefix: String,
    fill: impl FnOnce(&Path) -> Result<()> + Send + 'static,
    out: PathBuf,
) -> Result<()> {
    let scratch = Scratch::new(config, what)?;
    let dir = scratch.path().to_path_buf();
    let made = tokio::task::spawn_blocking(move || fill_and_pack(&dir, fill, &prefix, &out))
        .await
        .map_err(|e| Error::fault("the export failed", e));
    scratch.remove().await;
    made?
}

/// Fills `dir/content` and packs it into `zip_path`.
fn fill_and_pack(
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<()>,
    prefix: &str,
    zip_path: &Path,
) -> Result<()> {
    let folder = dir.join("content");
    fill(&folder)?;
    io::archive::pack(&folder, prefix, zip_path)
}

/// Streams an upload's chunks into the file at `path`: refused once it passes the
/// upload limit, and stopped (checked every 32 MiB) before it eats the room the database
/// needs. Returns its length.
pub async fn save_upload<S, B, E>(config: &Config, chunks: S, path: &Path) -> Result<u64>
where
    S: futures_util::Stream<Item = std::result::Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let limits = &config.limits;
    io::limits::require_space(&config.data_dir, 0, limits, "an upload")?;
    let mut out = tokio::fs::File::create(path)
        .await
        .map_err(|e| Error::io("cannot store the upload", e))?;
    let mut chunks = std::pin::pin!(chunks);
    let (mut written, mut checked_at) = (0u64, 0u64);
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| Error::Invalid(format!("the upload broke off: {e}")))?;
        let chunk = chunk.as_ref();
        written += chunk.len() as u64;
        if written > limits.upload_bytes {
            return Err(Error::TooLarge(format!(
                "the upload is larger than the limit of {} (set TANDEM_MAX_UPLOAD_BYTES to raise it)",
                io::limits::human_bytes(limits.upload_bytes)
            )));
        }
        if written - checked_at > 32 * 1024 * 1024 {
            checked_at = written;
            io::limits::require_space(&config.data_dir, 0, limits, "the upload")?;
        }
        out.write_all(chunk)
            .await
            .map_err(|e| Error::io("cannot store the upload", e))?;
    }
    out.flush()
        .await
        .map_err(|e| Error::io("cannot store the upload", e))?;
    Ok(written)
}

/// A folder of the moment under `DATA_DIR/tmp`, removed by [`Scratch::remove`] on the
/// blocking pool (a large unpacked upload takes a while to delete), or, if it is
/// dropped without, by a blocking-pool task of its own: never on an async thread.
pub struct Scratch(Option<PathBuf>);

impl Scratch {
    pub fn new(config: &Config, what: &str) -> Result<Scratch> {
        let p = config
            .data_dir
            .join("tmp")
            .join(format!("{what}-{}", crate::auth::random_id(8)?));
        std::fs::create_dir_all(&p).map_err(|e| Error::io("cannot create a scratch folder", e))?;
        Ok(Scratch(Some(p)))
    }

    pub fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    /// Removes the folder and waits until it is gone.
    pub async fn remove(mut self) {
        if let Some(p) = self.0.take() {
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(p)).await;
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let Some(p) = self.0.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(move || std::fs::remove_dir_all(p));
            }
            Err(_) => {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch folder dropped on an async thread is removed by the blocking pool, not
    /// by the thread that dropped it (a large unpacked upload takes a while to delete).
    #[test]
    fn a_dropped_scratch_folder_is_removed_on_the_blocking_pool() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let config = Config::new(dir.path(), None).unwrap();
        let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
        let path = rt.block_on(async {
            let scratch = Scratch::new(&config, "upload").unwrap();
            std::fs::write(scratch.path().join("big"), b"...").unwrap();
            let path = scratch.path().to_path_buf();
            // The pool's one thread is busy until the gate opens.
            let g = gate.clone();
            let (busy_tx, busy_rx) = std::sync::mpsc::channel();
            tokio::task::spawn_blocking(move || {
                let _ = busy_tx.send(());
                g.wait();
            });
            let _ = busy_rx.recv();
            drop(scratch);
            assert!(path.exists(), "the async thread removed the folder itself");
            path
        });
        gate.wait();
        for _ in 0..500 {
            if !path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!path.exists(), "the blocking pool removed the folder");
        drop(rt);
    }
}
