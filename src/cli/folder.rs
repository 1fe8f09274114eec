//! The data folder and what it holds: `init`, `migrate`, `check`, `backup` and `media`
//! (where the videos live).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::io::objects::Location;
use crate::store::Store;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct InitArgs {
    #[arg(long, value_name = "LOCATION")]
    media: Option<String>,
}

impl InitArgs {
    /// `tandem init`: the store is open (so made); the media's place chosen, or said.
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        let location = match self.media {
            Some(to) => {
                let target = Location::parse(&to)?;
                crate::app::media::choose(store, config, &target).await?;
                target
            }
            None => crate::app::media::media_store(store, config)
                .await?
                .location(),
        };
        println!(
            "Tandem's data folder {} and its database are ready; media: {}",
            config.data_dir.display(),
            location.as_text()
        );
        Ok(())
    }
}

/// `tandem migrate`: opening the store ran any pending migration; says so.
pub(super) fn migrated() -> Result<()> {
    println!("database is up to date");
    Ok(())
}

/// `tandem check`: every column holding text with a control character, with examples;
/// an error when there is one.
pub(super) async fn check(store: &Store) -> Result<()> {
    let found = store.find_control_text().await?;
    if found.is_empty() {
        println!("no stored text holds a control character");
        return Ok(());
    }
    for f in &found {
        println!(
            "{}.{}: {} value(s) hold a control character, e.g. {}",
            f.table,
            f.column,
            f.rows,
            f.examples
                .iter()
                .map(|e| format!("\"{e}\""))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Err(Error::Invalid(format!(
        "{} column(s) hold text with control characters; they are kept as recorded, and new text with them is refused",
        found.len()
    )))
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    #[arg(long)]
    out: PathBuf,
}

impl BackupArgs {
    /// `tandem backup`: the database copied, and where the videos are to be copied from.
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        let out = self.out;
        store.backup(&config.database_url, &out).await?;
        println!("database copied to {}", out.display());
        match crate::app::media::media_store(store, config)
            .await?
            .location()
        {
            Location::Local => eprintln!(
                "note: the videos are the files under {}; copy that folder too (files there are written once and never changed)",
                config.media_dir.display()
            ),
            bucket => eprintln!(
                "note: the videos are in {}; back the bucket up with the storage's own versioning or replication",
                bucket.as_text()
            ),
        }
        Ok(())
    }
}

#[derive(Subcommand, Debug)]
pub enum MediaCommand {
    /// Say where the media live, how many files there are, and whether the store
    /// answers
    Show,
    /// Move every stored file to another media store (`s3://BUCKET/PREFIX`, with the
    /// endpoint and credentials in this process's AWS_* variables, or `local`), each
    /// checked, then switch every server to it; stopped midway, it resumes where it
    /// stopped. The old place's files are left for you to remove.
    Migrate {
        #[arg(long)]
        to: String,
    },
}

impl MediaCommand {
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        match self {
            MediaCommand::Show => {
                let media = crate::app::media::media_store(store, config).await?;
                println!("media: {}", media.location().as_text());
                media.check().await?;
                let files = media.list().await?;
                let bytes: u64 = files.iter().map(|(_, n)| n).sum();
                println!(
                    "{} stored file(s), {bytes} bytes; the store answers",
                    files.len()
                );
            }
            MediaCommand::Migrate { to } => {
                let target = Location::parse(&to)?;
                let progress = |done: usize, total: usize| {
                    if done.is_multiple_of(500) || done == total {
                        eprintln!("{done} of {total} file(s) checked");
                    }
                };
                let m = crate::app::media::migrate(store, config, &target, &progress).await?;
                println!(
                    "media moved from {} to {}: {} file(s) copied ({} bytes, {} of them added during the move), {} already there; every server uses {} now",
                    m.from, m.to, m.copied, m.bytes, m.late, m.present, m.to
                );
                eprintln!(
                    "note: the files in {} are left as they were; remove them when you no longer need them",
                    m.from
                );
            }
        }
        Ok(())
    }
}
