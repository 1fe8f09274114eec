//! What a command, a page and the demo do alike, where files and the database meet:
//! an import (check the file and copy its videos first, then one short write), the
//! study's media, and the tables (facts from the store, built by `report`). The store
//! never touches a file; `report` never reaches the store; `cli`, `web` and `demo` call
//! these.
//!
//! What it holds, part by part:
//!
//! what the CLI, the pages, the API and the demo do alike, each use case once: a verdict
//! (`known::record_verdict`: recorded, then, for a new verdict on a known item, the
//! validator's recent catch rate looked at after the reply, and a pause written when due;
//! the known items' figures), an import (the manifest checked and its videos taken in
//! first, their timing included, then one short write), the study's media and display, the
//! videos' frame timing (`probe_timings`), the tables (facts from the store, built by
//! `report`), the paper bundle; `estimates` (the review-quality model's fits, for the
//! tables and the defect-probabilities export, kept for the last inputs they were fitted
//! to, compared whole: the fit is a pure function of them, seed included); `accounts`
//! (creating an account, placing a validator, with the confirmation that re-pairing needs),
//! `baseline` (the questions the human baseline may ask: the retained benchmark's, linked
//! pairs whole; answers brought in, written out, and its tables over the stored answers;
//! the set-up with its served copies without metadata; invitation links made and
//! exchanged), `exports` (every export as a `Download`: the CLI writes it, the web sends
//! it; the archives packed in a scratch folder removed on the blocking pool; an upload
//! streamed to a file within its limit, `save_upload`), `jobs` (the long operations the API
//! starts, an import, the retained zip, the paper bundle: a row in `jobs` stored first, the
//! work run by the server that took it (two at once, the rest queued) with a heartbeat
//! every 10 s, how it ended written to the row; an export's file written to
//! `MEDIA/jobs/ID.zip.partial`, synced, hashed and renamed (and, when the media live in a
//! bucket, uploaded as `PREFIX/jobs/ID.zip` and sent from there by any server); a job whose
//! heartbeat is 90 s old is marked failed by the next read; finished jobs forgotten after 7
//! days), `sampling` (each rule's plan from `stats::sampling`, a run, the lots with the
//! upper bound on each whole's defect rate), `media` (the installation's media store as the
//! database names it, read again every 2 s so that a migration reaches every server without
//! a restart; files made here put into it (`publish`); `choose`: a new installation's store
//! (`tandem init --media`); `migrate`: every stored file copied and checked, the location
//! switched only when all are there, what servers stored in the old place meanwhile copied
//! after; frame strips within a limit of ffmpeg runs, and the background jobs that draw the
//! missing strips and read the missing frame timings, started by `cli`, the demo and the
//! import page)

pub mod accounts;
pub mod baseline;
pub mod estimates;
pub mod exports;
pub mod jobs;
pub mod known;
pub mod media;
pub mod sampling;

use crate::config::Config;
use crate::domain::facts::Scope;
use crate::domain::study::{Display, MAX_FRAMES, MIN_FRAMES};
use crate::domain::video::TimingRead;
use crate::error::{Error, Result};
use crate::io;
use crate::report::QcReport;
use crate::report::study::StudyReport;
use crate::store::Store;
use crate::store::catalog::{Campaign, ImportSummary};
use crate::store::study::{Study, StudyImportSummary};
use std::collections::HashSet;
use std::path::Path;

/// How long a video an import was taking in must have been left unwritten before
/// another import takes it for the remains of a stopped one.
const STALE_INCOMING: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Checks a manifest against the campaign's taxonomy, takes its videos into the media
/// folder (outside any transaction: copying gigabytes must not hold a lock; each file
/// read once, hashed and, for MP4 and QuickTime, its frame timing read from its own
/// tables on the way, several files at once; what the tables do not say asked of
/// ffprobe), makes the new ones durable in one batch, and stores the manifest, timings
/// included, in one short write. The videos this import added and nothing stored uses
/// are removed again, whatever happened.
pub async fn import_manifest(
    store: &Store,
    config: &Config,
    campaign: &str,
    manifest: &Path,
) -> Result<ImportSummary> {
    let taxonomy = match store.campaign(campaign).await {
        Ok(found) => found.taxonomy,
        // The default campaign is created by the import's write, with the default protocol.
        Err(Error::NotFound(_)) if campaign == crate::store::DEFAULT_CAMPAIGN => {
            std::sync::Arc::new(crate::domain::taxonomy::Taxonomy::vgenst())
        }
        Err(e) => return Err(e),
    };
    let media = media::media_store(store, config).await?;
    let local = matches!(media, io::objects::MediaStore::Local(_));
    let path = manifest.to_path_buf();
    let limits = config.limits.clone();
    let media_dir = config.media_dir.clone();
    let data_dir = config.data_dir.clone();
    let taking = std::time::Instant::now();
    let (checked, mut taken, added) = tokio::task::spawn_blocking(move || -> Result<_> {
        std::fs::create_dir_all(&media_dir)
            .map_err(|e| Error::io(format!("cannot create {}", media_dir.display()), e))?;
        let swept = io::media::sweep_incoming(&media_dir, STALE_INCOMING);
        if swept > 0 {
            tracing::info!(files = swept, "removed what stopped imports left");
        }
        let intake = io::media::Intake {
            media_dir: &media_dir,
            data_dir: &data_dir,
            limits: &limits,
            ffprobe: io::video::ffmpeg_available(),
        };
        let taken = std::sync::Mutex::new(Vec::new());
        let checked = io::manifest::check_manifest_with(&path, &taxonomy, &limits, &|paths| {
            let results = intake.take_in(paths);
            let mut inspected = Vec::with_capacity(results.len());
            let mut keep = taken
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for r in results {
                inspected.push(r.map(|t| {
                    let out = (t.media.clone(), t.timing);
                    keep.push(t);
                    out
                }));
            }
            inspected
        });
        let mut taken = taken
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match checked {
            // A local store: the new videos made durable and named here, in one batch.
            Ok(checked) if local => match io::media::settle(&media_dir, &mut taken) {
                Ok(added) => Ok((checked, Vec::new(), added)),
                Err(e) => {
                    io::media::discard(&mut taken);
                    Err(e)
                }
            },
            Ok(checked) => Ok((checked, taken, Vec::new())),
            Err(e) => {
                io::media::discard(&mut taken);
                Err(e)
            }
        }
    })
    .await
    .map_err(|e| Error::fault("checking the manifest failed", e))??;
    // A bucket: the new videos go up before the database names any of them.
    let added: Vec<String> = if local {
        added.into_iter().map(|(sha, _)| sha).collect()
    } else {
        upload_new(&media, io::media::staged(&mut taken)).await?
    };
    let taken_ms = taking.elapsed().as_millis();
    let writing = std::time::Instant::now();
    let result = store.import_manifest(campaign, &checked).await;
    tracing::info!(
        manifest = %manifest.display(),
        lines = checked.clips.len(),
        take_ms = taken_ms,
        write_ms = writing.elapsed().as_millis(),
        stored = result.is_ok(),
        "import written"
    );
    let keep: HashSet<String> = match &result {
        Ok((_, stored)) => stored.clone(),
        Err(_) => HashSet::new(),
    };
    for sha in added {
        if !keep.contains(&sha)
            && let Err(e) = media.remove(&sha).await
        {
            tracing::warn!(error = %e, %sha, "a video no record names could not be removed");
        }
    }
    result.map(|(mut summary, stored)| {
        // What was learnt of the new versions' videos, each video once.
        let mut seen = HashSet::new();
        for c in &checked.clips {
            if !stored.contains(&c.media.sha256) || !seen.insert(c.media.sha256.as_str()) {
                continue;
            }
            match c.timing {
                TimingRead::Read(_) => summary.videos_timed += 1,
                TimingRead::Unreadable => summary.videos_unreadable += 1,
                TimingRead::NotTried => summary.videos_untried += 1,
            }
        }
        summary
    })
}

/// Uploads an import's new videos (SHA-256, staged file) to a bucket, a few at once,
/// each skipped when the bucket holds it already; returns those it added. When one
/// fails, the others are waited for, those added are removed, every staged file is
/// removed, and the error says which video failed: nothing is half-imported, and the
/// import can be run again.
async fn upload_new(
    media: &io::objects::MediaStore,
    staged: Vec<(String, std::path::PathBuf)>,
) -> Result<Vec<String>> {
    use futures_util::stream::StreamExt;
    let results: Vec<(String, Result<bool>)> = futures_util::stream::iter(staged)
        .map(|(sha, temp)| async move {
            // A size that cannot be read matches nothing held: the file is sent again.
            let size = tokio::fs::metadata(&temp).await.map(|m| m.len()).ok();
            let done = match media.size_of(&sha).await {
                Ok(Some(held)) if Some(held) == size => Ok(false),
                Ok(_) => media.put_file(&sha, &temp).await.map(|()| true),
                Err(e) => Err(e),
            };
            let _ = tokio::fs::remove_file(&temp).await;
            (sha, done)
        })
        .buffer_unordered(4)
        .collect()
        .await;
    let added: Vec<String> = results
        .iter()
        .filter(|(_, r)| matches!(r, Ok(true)))
        .map(|(sha, _)| sha.clone())
        .collect();
    if let Some((sha, Err(e))) = results.into_iter().find(|(_, r)| r.is_err()) {
        for a in &added {
            let _ = media.remove(a).await;
        }
        return Err(match e {
            Error::Unavailable(m) => Error::Unavailable(format!(
                "video {sha} could not be stored, so nothing was imported: {m}"
            )),
            e => e,
        });
    }
    Ok(added)
}

/// Refuses a display the server cannot draw.
fn check_display(display: Display, frames: i64) -> Result<()> {
    if !(MIN_FRAMES..=MAX_FRAMES).contains(&frames) {
        return Err(Error::field(
            "frames",
            format!("a strip has {MIN_FRAMES} to {MAX_FRAMES} frames, not {frames}"),
        ));
    }
    if display == Display::Strip && !io::video::ffmpeg_available() {
        return Err(Error::field(
            "display",
            "the strip display needs the ffmpeg and ffprobe programs, which are not installed on this server; install ffmpeg or use the video display",
        ));
    }
    Ok(())
}

/// Draws the strips a study's display needs; returns how many it drew.
async fn draw_study_strips(store: &Store, study: &Study, config: &Config) -> Result<usize> {
    let hashes = store.study_media_hashes(study).await?;
    let media = media::media_store(store, config).await?;
    // The participants' strip: K frames of 320 pixels, four to a row.
    let layout = io::video::StripLayout {
        k: u64::try_from(study.frames).unwrap_or(8),
        columns: 4,
        width: 320,
    };
    media::draw_strips(&media, &hashes, layout).await
}

/// Imports checked comparison sets, all or nothing: the copies participants receive
/// are made first (without metadata when ffmpeg is there), then the sets are stored
/// in one write, then the strips are drawn when the display needs them.
/// What `probe_timings` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probed {
    /// Videos whose frame rate and count are now stored.
    pub timed: usize,
    /// Videos that cannot be read (marked, so they are not asked again).
    pub unreadable: usize,
    /// Videos whose container has no reader here and no ffprobe to ask (asked again
    /// when ffprobe is installed).
    pub untried: usize,
}

/// Reads the frame rate and frame count of every stored video not read yet (MP4 and
/// QuickTime from their own tables, the others with ffprobe when it is there), several
/// at once, and stores them on their clip versions (the player steps frame by frame
/// with them).
pub async fn probe_timings(store: &Store, config: &Config) -> Result<Probed> {
    let hashes = store.media_without_timing().await?;
    if hashes.is_empty() {
        return Ok(Probed::default());
    }
    let store_media = media::media_store(store, config).await?;
    // In a bucket, each video is read from a fetched copy (a video that cannot be
    // fetched now is left for the next time, never marked unreadable).
    let (dir, hashes) = match &store_media {
        io::objects::MediaStore::Local(dir) => (dir.clone(), hashes),
        io::objects::MediaStore::Bucket(_) => {
            // Fetched into a folder of their own, removed once they are read.
            let folder = store_media
                .scratch()
                .join(format!(".timing-{}", crate::auth::random_id(6)?));
            tokio::fs::create_dir_all(&folder)
                .await
                .map_err(|e| Error::io(format!("cannot create {}", folder.display()), e))?;
            let mut fetched = Vec::with_capacity(hashes.len());
            for sha in hashes {
                match store_media.fetch_to(&sha, &folder.join(&sha)).await {
                    Ok(()) => fetched.push(sha),
                    Err(e) => {
                        tracing::warn!(error = %e, %sha, "cannot fetch a video to read its timing")
                    }
                }
            }
            (folder, fetched)
        }
    };
    let fetched_folder =
        matches!(store_media, io::objects::MediaStore::Bucket(_)).then(|| dir.clone());
    let ffprobe = io::video::ffmpeg_available();
    let read = tokio::task::spawn_blocking(move || io::media::read_timings(&dir, &hashes, ffprobe))
        .await
        .map_err(|e| Error::fault("the timing task failed", e));
    if let Some(f) = fetched_folder {
        let _ = tokio::fs::remove_dir_all(f).await;
    }
    let read = read?;
    let mut done = Probed::default();
    for (sha, timing) in read {
        match timing {
            TimingRead::Read(t) => {
                store.set_frame_timing(&sha, Some(t)).await?;
                done.timed += 1;
            }
            TimingRead::Unreadable => {
                store.set_frame_timing(&sha, None).await?;
                done.unreadable += 1;
            }
            TimingRead::NotTried => done.untried += 1,
        }
    }
    Ok(done)
}

pub async fn import_study(
    store: &Store,
    config: &Config,
    campaign: &str,
    sets: &crate::domain::import::CheckedSets,
    display: Option<(Display, i64)>,
) -> Result<StudyImportSummary> {
    if let Some((d, k)) = display {
        check_display(d, k)?;
    }
    let strip_metadata = io::video::ffmpeg_available();
    let (sets_c, dir) = (sets.clone(), config.media_dir.clone());
    let (prepared, added) = tokio::task::spawn_blocking(move || {
        io::media::prepare_study_media(&sets_c, &dir, strip_metadata)
    })
    .await
    .map_err(|e| Error::fault("preparing the videos failed", e))??;
    let store_media = media::media_store(store, config).await?;
    let added = media::publish(&store_media, added).await?;
    let result = match store.import_study(campaign, sets, &prepared, display).await {
        Ok((mut summary, study)) => {
            summary.metadata_removed = strip_metadata;
            if study.display == Display::Strip {
                draw_study_strips(store, &study, config).await?;
            }
            Ok(summary)
        }
        Err(e) => Err(e),
    };
    if result.is_err() {
        media::unpublish(&store_media, &added).await;
    }
    result
}

/// Sets how a study's clips are shown; for strips, draws them first (so the switch
/// happens only when every strip is there). Returns how many strips were drawn.
pub async fn set_study_display(
    store: &Store,
    config: &Config,
    campaign: &Campaign,
    display: Display,
    frames: i64,
) -> Result<usize> {
    check_display(display, frames)?;
    let mut study = store.require_study(campaign).await?;
    study.frames = frames;
    let made = if display == Display::Strip {
        draw_study_strips(store, &study, config).await?
    } else {
        0
    };
    store.set_study_display(&study, display, frames).await?;
    Ok(made)
}

/// Tables 11 to 13 with the reasons and the validators' figures, for a scope.
pub async fn qc_report(store: &Store, campaign: &Campaign, scope: &Scope) -> Result<QcReport> {
    Ok(qc_report_and_counts(store, campaign, scope).await?.0)
}

/// [`qc_report`] and the counted outcomes it was built from.
async fn qc_report_and_counts(
    store: &Store,
    campaign: &Campaign,
    scope: &Scope,
) -> Result<(QcReport, Vec<crate::domain::facts::OutcomeCount>)> {
    let outcomes = store.outcome_counts(campaign, scope).await?;
    let medians = store.median_times(campaign).await?;
    let medians = medians.into_iter().map(|(k, v)| (k, Some(v))).collect();
    let pairs = store.pair_items(campaign, scope).await?;
    let mut report = crate::report::build(
        &campaign.name,
        &campaign.taxonomy,
        scope,
        &outcomes,
        &medians,
    );
    report.pairs = crate::report::pair_rows(&campaign.taxonomy, &pairs);
    Ok((report, outcomes))
}

/// [`qc_report`] and the review-quality estimates over the same counted outcomes.
pub async fn qc_report_with_quality(
    store: &Store,
    campaign: &Campaign,
    scope: &Scope,
) -> Result<(QcReport, crate::report::quality::ReviewQualityReply)> {
    let (report, outcomes) = qc_report_and_counts(store, campaign, scope).await?;
    let mut known = store.known_records(campaign).await?;
    known.retain(|k| scope.holds_known(k));
    let quality = review_quality(campaign, outcomes, known).await?;
    Ok((report, quality))
}

/// The review-quality estimates over the counted outcomes (CPU work: off the runtime;
/// kept for equal inputs by `estimates`).
async fn review_quality(
    campaign: &Campaign,
    outcomes: Vec<crate::domain::facts::OutcomeCount>,
    known: Vec<crate::domain::records::KnownRecord>,
) -> Result<crate::report::quality::ReviewQualityReply> {
    let fitted = estimates::review_quality(&campaign.taxonomy, outcomes, known).await?;
    Ok((*fitted).clone())
}

/// Tables 14 and 15, when the campaign has a study.
pub async fn study_report(store: &Store, campaign: &Campaign) -> Result<Option<StudyReport>> {
    let Some(study) = store.study(campaign).await? else {
        return Ok(None);
    };
    let data = store.study_data(&study).await?;
    Ok(Some(
        tokio::task::spawn_blocking(move || crate::report::study::build(&data))
            .await
            .map_err(|e| Error::fault("the study tables failed", e))?,
    ))
}

/// Every table as one JSON object (`tandem stats --json`): the QC's `t11`, `t12`,
/// `t13` for the scope, and the study's `t14`, `t14_tests`, `t15` when there is one.
pub async fn stats_reply(
    store: &Store,
    campaign: &Campaign,
    scope: &Scope,
) -> Result<crate::report::StatsReply> {
    let (report, quality) = qc_report_with_quality(store, campaign, scope).await?;
    let blind = crate::report::blind::build(&store.blind_records(campaign).await?);
    let reply = report
        .reply()
        .with_review_quality(quality)
        .with_blind_key_check(blind)
        .with_known_items(known::figures(store, campaign).await?);
    let reply = match study_report(store, campaign).await? {
        Some(r) => reply.with_study(&r),
        None => reply,
    };
    let method = crate::stats::circular::IntervalMethod::ClopperPearson;
    Ok(reply
        .with_baseline(baseline::report(store, campaign, method).await?)
        .with_groups(baseline::groups(store, campaign).await?))
}

/// [`stats_reply`] as JSON, as `tandem stats --json` prints it.
pub async fn stats_json(
    store: &Store,
    campaign: &Campaign,
    scope: &Scope,
) -> Result<serde_json::Value> {
    let reply = stats_reply(store, campaign, scope).await?;
    serde_json::to_value(reply).map_err(|e| Error::fault("the figures as JSON", e))
}

/// One table in a format: the annotator pool's, the baseline's, the study's or a QC one,
/// as `tandem stats --table` prints it and the statistics page sends it.
pub async fn table_text(
    store: &Store,
    campaign: &Campaign,
    scope: &Scope,
    table: crate::report::format::TableId,
    format: crate::report::format::Format,
) -> Result<String> {
    if table.is_groups() {
        baseline::groups(store, campaign)
            .await?
            .render(&campaign.taxonomy.tables, format)
    } else if table.is_baseline() {
        let method = crate::stats::circular::IntervalMethod::ClopperPearson;
        let report = baseline::report(store, campaign, method)
            .await?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "campaign `{}` has no baseline answers, so there is no baseline table",
                    campaign.name
                ))
            })?;
        crate::report::baseline::render(&report, format)
    } else if table.is_study() {
        let report = study_report(store, campaign).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no study, so there is no {}",
                campaign.name,
                table.name().to_uppercase()
            ))
        })?;
        crate::report::study::render(&report, &campaign.taxonomy.tables, table, format)
    } else {
        let report = qc_report(store, campaign, scope).await?;
        crate::report::format::render(&report, &campaign.taxonomy, table, format)
    }
}

/// The paper bundle of the whole campaign (Stage 1 over first versions, every task and
/// pair): reads what it needs from the store, then `report::bundle` makes the files.
pub async fn paper_bundle(
    store: &Store,
    campaign: &Campaign,
    computed: i64,
) -> Result<Vec<crate::report::bundle::BundleFile>> {
    let scope = Scope::default();
    let qc = qc_report(store, campaign, &scope).await?;
    // The figures once: stats.json, and the baseline's tables and Table 16 from them.
    let reply = stats_reply(store, campaign, &scope).await?;
    let stats_json =
        serde_json::to_value(&reply).map_err(|e| Error::fault("the figures as JSON", e))?;
    let study_report = study_report(store, campaign).await?;
    let responses_csv = match store.study(campaign).await? {
        Some(st) => {
            let data = store.study_data(&st).await?;
            let mut out = Vec::new();
            io::study::write_responses(&mut out, &data)?;
            Some(out)
        }
        None => None,
    };
    let (baseline_report, groups, quality, blind, known) = (
        reply.baseline,
        reply.t16,
        reply.review_quality,
        reply.blind_key_check,
        reply.known_items,
    );
    let baseline_csv = match &baseline_report {
        Some(_) => {
            let mut out = Vec::new();
            io::baseline::write_answers(&mut out, &baseline::answer_rows(store, campaign).await?)?;
            Some(out)
        }
        None => None,
    };
    let mut decisions_csv = Vec::new();
    io::records::write_decisions(&mut decisions_csv, &store.decision_records(campaign).await?)?;
    let mut resolutions_csv = Vec::new();
    io::records::write_resolutions(
        &mut resolutions_csv,
        &store.resolution_records(campaign).await?,
    )?;
    let name = campaign.name.clone();
    let taxonomy = campaign.taxonomy.clone();
    tokio::task::spawn_blocking(move || {
        crate::report::bundle::files(&crate::report::bundle::Input {
            campaign: &name,
            taxonomy: &taxonomy,
            qc: &qc,
            study: study_report.as_ref(),
            stats_json: &stats_json,
            decisions_csv,
            resolutions_csv,
            responses_csv,
            baseline: baseline_report.as_ref(),
            groups: &groups,
            baseline_csv,
            quality: quality.as_ref(),
            blind: blind.as_ref(),
            known: known.as_ref(),
            computed,
        })
    })
    .await
    .map_err(|e| Error::fault("the paper bundle failed", e))?
}
