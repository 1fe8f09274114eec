//! Taking records in: `import` (a clip manifest), `probe` (the videos' frame timing, for
//! clips imported before it was read at import), `decisions` and `resolutions` (CSV
//! files), and the reading of a CSV file that every import of one shares.

use super::CampaignArg;
use crate::config::Config;
use crate::error::Result;
use crate::io;
use crate::store::Store;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ManifestArgs {
    manifest: PathBuf,
    #[command(flatten)]
    campaign: CampaignArg,
}

impl ManifestArgs {
    /// `tandem import`: a clip manifest, all or nothing.
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        let manifest = self.manifest;
        let summary =
            crate::app::import_manifest(store, config, &self.campaign.campaign, &manifest).await?;
        println!("imported {}: {summary}", manifest.display());
        // The player steps frame by frame with each video's rate and count, read as
        // the videos were taken in (stored, so a running server need not).
        print_timing(
            summary.videos_timed,
            summary.videos_unreadable,
            summary.videos_untried,
        );
        Ok(())
    }
}

/// `tandem probe`: the frame timing of every stored video not read yet.
pub(super) async fn probe(config: &Config, store: &Store) -> Result<()> {
    let p = crate::app::probe_timings(store, config).await?;
    print_timing(p.timed, p.unreadable, p.untried);
    Ok(())
}

/// What was learnt of videos' frame timing, in words.
fn print_timing(timed: usize, unreadable: usize, untried: usize) {
    println!(
        "frame rate and count read for {timed} video(s); {unreadable} could not be read (the player steps by presented frames for those)"
    );
    if untried > 0 {
        println!(
            "note: ffprobe is not installed, so {untried} video(s) that are not MP4 were not read: the player steps by presented frames until `tandem probe` runs with ffmpeg installed"
        );
    }
}

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// Import a CSV file; rows apply in file order, all or nothing
    Import {
        file: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

/// `tandem decisions import`: validators' decisions, after which imported misses of
/// known defects may pause a queue as live ones do.
pub(super) async fn decisions(cmd: ImportCommand, config: &Config, store: &Store) -> Result<()> {
    let ImportCommand::Import { file, campaign } = cmd;
    let read = read_csv(config, &file, "decisions", io::records::read_decisions)?;
    let campaign = store.campaign(&campaign.campaign).await?;
    let Some((rows, problems, what)) = read else {
        nothing_to_import("decisions", &file);
        return Ok(());
    };
    let summary = store
        .import_decisions(&campaign, &rows, problems, &what)
        .await?;
    println!("imported {}: {summary}", file.display());
    // Imported verdicts on known items count toward a pause as live ones do.
    for (who, why) in crate::app::known::check_pauses(store, &campaign).await? {
        println!("paused {who}'s queue: {why}");
    }
    Ok(())
}

/// `tandem resolutions import`: authors' resolutions of splits.
pub(super) async fn resolutions(cmd: ImportCommand, config: &Config, store: &Store) -> Result<()> {
    let ImportCommand::Import { file, campaign } = cmd;
    let read = read_csv(config, &file, "resolutions", io::records::read_resolutions)?;
    let campaign = store.campaign(&campaign.campaign).await?;
    let Some((rows, problems, what)) = read else {
        nothing_to_import("resolutions", &file);
        return Ok(());
    };
    let summary = store
        .import_resolutions(&campaign, &rows, problems, &what)
        .await?;
    println!("imported {}: {summary}", file.display());
    Ok(())
}

/// Says that a file read as `None` by [`read_csv`] leaves nothing to do.
pub(super) fn nothing_to_import(kind: &str, path: &Path) {
    println!(
        "nothing to import: the {kind} file {} has a header and no rows",
        path.display()
    );
}

/// A CSV file's rows, its problems, and the words an import names it by.
pub(super) type CsvRead<R, P> = (Vec<R>, Vec<P>, String);

/// A CSV file of `kind` (decisions, answers, ...) read by `read`: a regular file within
/// the size limit, every line within the line limit. Gives its rows, the problems
/// found, and the words an import names it by ("decisions file PATH"); `None` when the
/// file is a header and no rows (what an export of nothing writes: see
/// [`nothing_to_import`]).
pub(super) fn read_csv<R, P>(
    config: &Config,
    path: &Path,
    kind: &str,
    read: impl FnOnce(io::limits::LineBounded<std::io::BufReader<std::fs::File>>) -> (Vec<R>, Vec<P>),
) -> Result<Option<CsvRead<R, P>>> {
    let limits = &config.limits;
    let f = io::limits::open_regular(
        path,
        &format!("the {kind} file"),
        limits.csv_bytes,
        "TANDEM_MAX_CSV_BYTES",
    )?;
    let (rows, problems) = read(io::limits::LineBounded::new(
        std::io::BufReader::new(f),
        limits.line_bytes,
    ));
    if rows.is_empty() && problems.is_empty() {
        return Ok(None);
    }
    Ok(Some((
        rows,
        problems,
        format!("{kind} file {}", path.display()),
    )))
}
