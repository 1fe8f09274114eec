//! The command line: `tandem`'s commands as clap reads them, and their dispatch. The
//! commands that need no store run at once (`demo`, which makes its own; `healthcheck`;
//! `protocol`; `sampling`'s figures); every other one, a [`StoreCommand`], opens the
//! store (running any pending migration), does one thing, and closes it. Each area of
//! commands is a file here, its subcommands and their flags beside their `run`. An error
//! is printed as one clear line.

mod baseline;
mod calibration;
mod campaign;
mod exports;
mod folder;
mod imports;
mod output;
mod protocol;
mod sampling;
mod serve;
mod stats;
mod study;
mod users;

use crate::config::Config;
use crate::error::Result;
use crate::store::Store;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "tandem",
    version,
    about = "Paired human quality control for generated-video benchmarks"
)]
pub struct Cli {
    /// Folder holding tandem.db and the imported videos [default: ./tandem-data, or
    /// ./tandem-demo for `demo`]
    #[arg(long, global = true, value_name = "DIR", env = "TANDEM_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Database URL; overrides the SQLite file in the data folder
    #[arg(long, global = true, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct CampaignArg {
    /// Campaign name
    #[arg(long, default_value = crate::store::DEFAULT_CAMPAIGN)]
    pub campaign: String,
}

// Every command: those that need no store here, the others in `StoreCommand`. Each
// command's `display_order` is its place in `tandem --help`'s list, one order across
// the two enums.
#[derive(Subcommand, Debug)]
pub enum Command {
    #[command(flatten)]
    Store(StoreCommand),
    /// Make a demo campaign with sample clips and accounts, then serve it
    #[command(display_order = 1)]
    Demo(serve::DemoArgs),
    /// Ask the server on this machine whether it is healthy (for container health
    /// checks): exits 0 when GET /healthz answers 200
    #[command(display_order = 5)]
    Healthcheck(serve::HealthcheckArgs),
    /// Sampled review: plan one and say what a reviewed sample shows of the whole (exact
    /// binomial figures; `plan`, `bound` and `zero` need no data folder), and run a
    /// campaign's (`run`, `status`)
    #[command(subcommand, display_order = 22)]
    Sampling(sampling::SamplingCommand),
    /// A benchmark's QC protocol file: check one, or print VGenST-Bench's as a start for
    /// a lab's own (needs no data folder)
    #[command(subcommand, display_order = 23)]
    Protocol(protocol::ProtocolCommand),
}

// The commands that work on the data folder's store (see `Command` for the order).
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Run the web service
    #[command(display_order = 0)]
    Serve(serve::ServeArgs),
    /// Create or upgrade the database schema, then exit
    #[command(display_order = 2)]
    Migrate,
    /// Check the stored records for text no field may hold (NUL and other control
    /// characters, which versions before 0.2 stored on SQLite); exits 1 if any is found
    #[command(display_order = 3)]
    Check,
    /// A consistent copy of the database, taken while the server runs (SQLite: one
    /// file; PostgreSQL: pg_dump's custom format). The videos are the media folder.
    #[command(display_order = 4)]
    Backup(folder::BackupArgs),
    /// Read the frame rate and frame count of every stored video not read yet (ffprobe),
    /// for clips imported before this was done after each import
    #[command(display_order = 6)]
    Probe,
    /// Import a clip manifest (JSON Lines); all or nothing
    #[command(display_order = 7)]
    Import(imports::ManifestArgs),
    /// Manage accounts
    #[command(subcommand, display_order = 8)]
    User(users::UserCommand),
    /// Manage a campaign's validator pool
    #[command(subcommand, display_order = 9)]
    Pool(users::PoolCommand),
    /// Make the data folder and the database, and choose where the media will live
    /// (`--media s3://BUCKET/PREFIX`, with the endpoint and credentials in this
    /// process's AWS_* variables; `local` by default) before anything is imported
    #[command(display_order = 10)]
    Init(folder::InitArgs),
    /// Where the videos, strips and served copies live: the data folder or an
    /// S3-compatible bucket
    #[command(subcommand, display_order = 11)]
    Media(folder::MediaCommand),
    /// Issue API tokens
    #[command(subcommand, display_order = 12)]
    Token(users::TokenCommand),
    /// Show or override the validator pair of a task
    #[command(subcommand, display_order = 13)]
    Pair(users::PairCommand),
    /// Import validators' decisions (CSV)
    #[command(subcommand, display_order = 14)]
    Decisions(imports::ImportCommand),
    /// Import authors' resolutions of splits (CSV)
    #[command(subcommand, display_order = 15)]
    Resolutions(imports::ImportCommand),
    /// Export the retained benchmark or the records
    #[command(subcommand, display_order = 16)]
    Export(exports::ExportCommand),
    /// The QC tables (the paper's Tables 11-13) from the raw decisions
    #[command(display_order = 17)]
    Stats(stats::StatsArgs),
    /// Validators' calibration
    #[command(subcommand, display_order = 18)]
    Calibration(calibration::CalibrationCommand),
    /// Campaigns: create one with a protocol, grow its protocol, its targets and
    /// calibration rules
    #[command(subcommand, display_order = 19)]
    Campaign(campaign::CampaignCommand),
    /// The blind video-quality study: comparison sets, display, responses
    #[command(subcommand, display_order = 20)]
    Study(study::StudyCommand),
    /// The human baseline under circular evaluation: answers gathered elsewhere in and
    /// out (CSV: participant,question_id,presentation,shown,chosen), its tables
    #[command(subcommand, display_order = 21)]
    Baseline(baseline::BaselineCommand),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(matches!(
        cli.command,
        Command::Store(StoreCommand::Serve(_)) | Command::Demo(_)
    ));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(server: bool) {
    use tracing_subscriber::EnvFilter;
    let default = if server {
        "tandem=info,tower_http=info"
    } else {
        "tandem=warn"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LossyStderr);
    if std::env::var("TANDEM_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Standard error for the log, never failing: a line that cannot be written (a full disk,
/// a pipe whose reader left) is dropped and counted (`tandem_log_lines_dropped`).
/// tracing-subscriber reports a failed write with `eprintln!`, which panics when standard
/// error itself fails: a request's task dropped its connection, and on the database
/// writer's thread the panic ended the writer.
struct LossyStderr;

impl std::io::Write for LossyStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if std::io::stderr().lock().write_all(buf).is_err() {
            crate::metrics::LOG_LINES_DROPPED.inc();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// Runs one command: one that needs no store at once, any other in the data folder's
/// store.
pub async fn run(cli: Cli) -> Result<()> {
    let Cli {
        data_dir,
        database_url,
        command,
    } = cli;
    let data_dir = |default: &str| data_dir.unwrap_or_else(|| PathBuf::from(default));
    match command {
        Command::Demo(demo) => demo.run(&data_dir("tandem-demo"), database_url).await,
        Command::Healthcheck(check) => check.run().await,
        Command::Protocol(cmd) => cmd.run(),
        Command::Sampling(cmd) => cmd.run(&data_dir("tandem-data"), database_url).await,
        Command::Store(cmd) => {
            in_store(
                &data_dir("tandem-data"),
                database_url,
                async |config, store| cmd.run(config, store).await,
            )
            .await
        }
    }
}

/// Opens the store of `data_dir` (or of `database_url`), runs `work` on it, and closes
/// it.
async fn in_store(
    data_dir: &Path,
    database_url: Option<String>,
    work: impl AsyncFnOnce(&Config, &Store) -> Result<()>,
) -> Result<()> {
    let config = Config::new(data_dir, database_url)?;
    let store = Store::open(&config.database_url).await?;
    let result = work(&config, &store).await;
    store.close().await;
    result
}

impl StoreCommand {
    async fn run(self, config: &Config, store: &Store) -> Result<()> {
        match self {
            StoreCommand::Serve(args) => args.run(config, store).await,
            StoreCommand::Migrate => folder::migrated(),
            StoreCommand::Check => folder::check(store).await,
            StoreCommand::Backup(args) => args.run(config, store).await,
            StoreCommand::Probe => imports::probe(config, store).await,
            StoreCommand::Import(args) => args.run(config, store).await,
            StoreCommand::User(cmd) => cmd.run(store).await,
            StoreCommand::Pool(cmd) => cmd.run(store).await,
            StoreCommand::Init(args) => args.run(config, store).await,
            StoreCommand::Media(cmd) => cmd.run(config, store).await,
            StoreCommand::Token(cmd) => cmd.run(store).await,
            StoreCommand::Pair(cmd) => cmd.run(store).await,
            StoreCommand::Decisions(cmd) => imports::decisions(cmd, config, store).await,
            StoreCommand::Resolutions(cmd) => imports::resolutions(cmd, config, store).await,
            StoreCommand::Export(cmd) => cmd.run(config, store).await,
            StoreCommand::Stats(args) => args.run(store).await,
            StoreCommand::Calibration(cmd) => cmd.run(store).await,
            StoreCommand::Campaign(cmd) => cmd.run(config, store).await,
            StoreCommand::Study(cmd) => cmd.run(config, store).await,
            StoreCommand::Baseline(cmd) => cmd.run(config, store).await,
        }
    }
}
