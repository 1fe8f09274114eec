//! The command line. Each command opens the store (running any pending migration),
//! does one thing, and prints one clear line on error.

use crate::app::accounts::{Created, NewUser};
use crate::config::Config;
use crate::domain::Role;
use crate::domain::facts::Scope;
use crate::domain::pairing::Pairing;
use crate::error::{Error, Result};
use crate::io;
use crate::report::format::{Format, TableId};
use crate::store::Store;
use crate::store::accounts::PoolPlacement;
use clap::{Args, Parser, Subcommand};
use std::io::{BufRead, Write};
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

/// How the server treats its clients.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Open connections at most (further clients wait to be accepted) [default: 4096,
    /// or fewer when the open-files limit is lower]
    #[arg(long, env = "TANDEM_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Open connections at most from one client address, so that one client cannot take
    /// them all (a trusted proxy's own connections are not capped) [default: a
    /// sixteenth of --max-connections, at least 8]
    #[arg(long, env = "TANDEM_MAX_CONNECTIONS_PER_CLIENT", value_name = "N")]
    pub max_connections_per_client: Option<usize>,
    /// Seconds a client has to send a request's head (also how long an idle
    /// connection stays open)
    #[arg(
        long,
        env = "TANDEM_HEADER_TIMEOUT",
        default_value_t = 60,
        value_name = "SECONDS"
    )]
    pub header_timeout: u64,
    /// Seconds a request body may send nothing before it is cut
    #[arg(
        long,
        env = "TANDEM_BODY_TIMEOUT",
        default_value_t = 30,
        value_name = "SECONDS"
    )]
    pub body_timeout: u64,
    /// Seconds the server keeps answering after a stop signal while /readyz answers
    /// 503, so that a load balancer stops sending first (0: close at once)
    #[arg(
        long,
        env = "TANDEM_DRAIN",
        default_value_t = 5,
        value_name = "SECONDS"
    )]
    pub drain: u64,
    /// Seconds the requests in flight get to finish on shutdown
    #[arg(
        long,
        env = "TANDEM_SHUTDOWN_GRACE",
        default_value_t = 10,
        value_name = "SECONDS"
    )]
    pub shutdown_grace: u64,
    /// A reverse proxy (address or network, e.g. 10.0.0.0/8) whose X-Forwarded-For
    /// names the client; repeat for several, or separate with commas. Without one, the
    /// client is the peer of the connection.
    #[arg(
        long = "trusted-proxy",
        env = "TANDEM_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_name = "NET"
    )]
    pub trusted_proxies: Vec<String>,
    /// A folder under which the admin's "import from a folder" may read manifests (and
    /// their videos, under the manifest's folder); repeat for several. Without one,
    /// importing from a folder on the server is off: an admin uploads a zip instead
    #[arg(long = "import-root", value_name = "DIR")]
    pub import_roots: Vec<PathBuf>,
}

impl ServerArgs {
    /// Applies these settings to a configuration.
    pub fn apply(&self, config: &mut Config) -> Result<()> {
        let secs = |n: u64, what: &str| {
            if n == 0 {
                Err(Error::Invalid(format!("{what} must be at least 1 second")))
            } else {
                Ok(std::time::Duration::from_secs(n))
            }
        };
        config.server.header_read_timeout = secs(self.header_timeout, "--header-timeout")?;
        config.server.body_idle_timeout = secs(self.body_timeout, "--body-timeout")?;
        config.server.shutdown_grace = std::time::Duration::from_secs(self.shutdown_grace);
        config.server.drain = std::time::Duration::from_secs(self.drain);
        if let Some(n) = self.max_connections {
            if n == 0 {
                return Err(Error::Invalid(
                    "--max-connections must be at least 1".into(),
                ));
            }
            config.server.max_connections = n;
        }
        if let Some(n) = self.max_connections_per_client {
            if n == 0 {
                return Err(Error::Invalid(
                    "--max-connections-per-client must be at least 1".into(),
                ));
            }
            config.server.max_connections_per_client = Some(n);
        }
        config.trusted_proxies = self
            .trusted_proxies
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                crate::config::IpNet::parse(p)
                    .map_err(|m| Error::Invalid(format!("--trusted-proxy: {m}")))
            })
            .collect::<Result<_>>()?;
        config.set_import_roots(&self.import_roots)?;
        Ok(())
    }
}

#[derive(Args, Debug, Clone)]
pub struct CampaignArg {
    /// Campaign name
    #[arg(long, default_value = "default")]
    pub campaign: String,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the web service
    Serve {
        /// Address to listen on
        #[arg(long, default_value = "127.0.0.1:8080", env = "TANDEM_BIND")]
        bind: String,
        /// Mark session cookies Secure (when users reach Tandem over HTTPS)
        #[arg(long, env = "TANDEM_SECURE_COOKIES")]
        secure_cookies: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Make a demo campaign with sample clips and accounts, then serve it
    Demo {
        /// Address to listen on
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: String,
        /// Instead of the small demo, a campaign whose decisions follow the paper's
        /// Tables 11-13 (1,200 clips, 9,800 questions)
        #[arg(long)]
        paper_scale: bool,
        /// The small demo on another protocol: a shipped one (vgenst, glimpse,
        /// tumtraffic) or a protocol file
        #[arg(long, conflicts_with = "paper_scale")]
        protocol: Option<String>,
    },
    /// Create or upgrade the database schema, then exit
    Migrate,
    /// Check the stored records for text no field may hold (NUL and other control
    /// characters, which versions before 0.2 stored on SQLite); exits 1 if any is found
    Check,
    /// A consistent copy of the database, taken while the server runs (SQLite: one
    /// file; PostgreSQL: pg_dump's custom format). The videos are the media folder.
    Backup {
        #[arg(long)]
        out: PathBuf,
    },
    /// Ask the server on this machine whether it is healthy (for container health
    /// checks): exits 0 when GET /healthz answers 200
    Healthcheck {
        /// The address the server listens on (0.0.0.0 is asked on 127.0.0.1)
        #[arg(long, default_value = "127.0.0.1:8080", env = "TANDEM_BIND")]
        bind: String,
    },
    /// Read the frame rate and frame count of every stored video not read yet (ffprobe),
    /// for clips imported before this was done after each import
    Probe,
    /// Import a clip manifest (JSON Lines); all or nothing
    Import {
        manifest: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Manage accounts
    #[command(subcommand)]
    User(UserCommand),
    /// Manage a campaign's validator pool
    #[command(subcommand)]
    Pool(PoolCommand),
    /// Make the data folder and the database, and choose where the media will live
    /// (`--media s3://BUCKET/PREFIX`, with the endpoint and credentials in this
    /// process's AWS_* variables; `local` by default) before anything is imported
    Init {
        #[arg(long, value_name = "LOCATION")]
        media: Option<String>,
    },
    /// Where the videos, strips and served copies live: the data folder or an
    /// S3-compatible bucket
    #[command(subcommand)]
    Media(MediaCommand),
    /// Issue API tokens
    #[command(subcommand)]
    Token(TokenCommand),
    /// Show or override the validator pair of a task
    #[command(subcommand)]
    Pair(PairCommand),
    /// Import validators' decisions (CSV)
    #[command(subcommand)]
    Decisions(ImportCommand),
    /// Import authors' resolutions of splits (CSV)
    #[command(subcommand)]
    Resolutions(ImportCommand),
    /// Export the retained benchmark or the records
    #[command(subcommand)]
    Export(ExportCommand),
    /// The QC tables (the paper's Tables 11-13) from the raw decisions
    Stats(StatsArgs),
    /// Validators' calibration
    #[command(subcommand)]
    Calibration(CalibrationCommand),
    /// Campaigns: create one with a protocol, grow its protocol, its targets and
    /// calibration rules
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// The blind video-quality study: comparison sets, display, responses
    #[command(subcommand)]
    Study(StudyCommand),
    /// The human baseline under circular evaluation: answers gathered elsewhere in and
    /// out (CSV: participant,question_id,presentation,shown,chosen), its tables
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Sampled review: plan one and say what a reviewed sample shows of the whole (exact
    /// binomial figures; `plan`, `bound` and `zero` need no data folder), and run a
    /// campaign's (`run`, `status`)
    #[command(subcommand)]
    Sampling(SamplingCommand),
    /// A benchmark's QC protocol file: check one, or print VGenST-Bench's as a start for
    /// a lab's own (needs no data folder)
    #[command(subcommand)]
    Protocol(ProtocolCommand),
}

#[derive(Subcommand, Debug)]
pub enum ProtocolCommand {
    /// Read and check a protocol file: every problem, each with its line and field
    Check {
        file: PathBuf,
        /// Print the protocol read (its tasks, QA types and cells) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the shipped VGenST-Bench protocol file
    Vgenst,
}

#[derive(Subcommand, Debug)]
pub enum SamplingCommand {
    /// The single sampling plan: review n items, accept the whole when at most c are
    /// defective; the smallest n (then c) whose risks are at most alpha and beta
    Plan {
        /// The acceptable quality level: a defect rate the whole may have and still be
        /// accepted with probability at least 1 - alpha (0.01 is 1%)
        #[arg(long)]
        aql: f64,
        /// The rejectable quality level: a defect rate at which the whole is accepted
        /// with probability at most beta
        #[arg(long)]
        rql: f64,
        /// The producer's risk: rejecting a whole at the AQL
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// The consumer's risk: accepting a whole at the RQL
        #[arg(long, default_value_t = 0.10)]
        beta: f64,
        /// Print JSON: {"n", "c", "accept_at_aql", "accept_at_rql", ...}
        #[arg(long)]
        json: bool,
    },
    /// The exact one-sided (Clopper-Pearson) upper bound on the whole's defect rate
    /// after DEFECTS defects among N items drawn at random
    Bound {
        #[arg(long)]
        defects: u64,
        #[arg(long)]
        n: u64,
        #[arg(long, default_value_t = 0.95)]
        confidence: f64,
        /// Print JSON: {"defects", "n", "confidence", "upper"}
        #[arg(long)]
        json: bool,
    },
    /// Run a campaign's sampled review: settle every lot whose sample is reviewed
    /// (accepted: its other items are retained by sample; rejected: they go to full
    /// review), then draw every stratum's held items as a new lot and queue its sample
    Run {
        #[command(flatten)]
        campaign: CampaignArg,
        /// Print JSON: {"settled": [...], "drawn": [...], "released"}
        #[arg(long)]
        json: bool,
    },
    /// A campaign's lots: size, sample, acceptance number, defects, decision and the
    /// upper bound on each whole's defect rate; the items held for the next draw
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
        /// Print JSON: {"rules", "lots", "held"}
        #[arg(long)]
        json: bool,
    },
    /// The smallest sample that, with no defect found, shows a defect rate below P
    Zero {
        #[arg(long)]
        p: f64,
        #[arg(long, default_value_t = 0.95)]
        confidence: f64,
        /// Print JSON: {"p", "confidence", "n"}
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Import comparison sets (JSON Lines); all or nothing
    Import {
        sets: PathBuf,
        /// The sources every set holds one clip of, in table order, comma-separated
        /// [default: those the file names, in order of appearance]
        #[arg(long, value_delimiter = ',')]
        sources: Option<Vec<String>>,
        /// How participants see the clips: video, or strip (K frames; needs ffmpeg)
        #[arg(long)]
        display: Option<String>,
        /// K, the frames of a strip
        #[arg(long, default_value_t = 8)]
        frames: i64,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Show clips as video or as a strip of K frames (drawn now, with ffmpeg)
    Display {
        /// video or strip
        mode: String,
        /// K, the frames of a strip
        #[arg(long, default_value_t = 8)]
        frames: i64,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The study's sets, display and each participant's progress
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Responses of an earlier study (CSV: set_id,participant,clip_id,axis,value)
    #[command(subcommand)]
    Responses(ImportCommand),
}

#[derive(Subcommand, Debug)]
pub enum BaselineCommand {
    /// Import answers (CSV: participant,question_id,presentation,shown,chosen; one row
    /// per presentation), checked whole against the retained questions and the
    /// baseline's participants; all or nothing, and final
    Import {
        file: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Export every answer in the import's format
    Export {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Each baseline participant and the presentations they answered
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Set the baseline up for the browser: the retained questions now, k videos of each
    /// task per participant drawn from a seed (again only while nobody has begun)
    Setup {
        /// k, the videos of each task each participant answers about
        #[arg(long, default_value_t = 10)]
        per_task: i64,
        /// The seed of the draw [default: a random one, printed]
        #[arg(long)]
        seed: Option<i64>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Make participants of the study or the baseline, each with an invitation link
    /// (printed once as `participant,link`: only the token's digest is kept)
    Invite {
        /// How many
        #[arg(long, default_value_t = 1)]
        count: usize,
        /// baseline or study
        #[arg(long, default_value = "baseline")]
        part: String,
        /// The server's address, put before each link's path (e.g. https://qc.example.org)
        #[arg(long, default_value = "")]
        base_url: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every link of the campaign: participant, part, first use, revoked, completion code
    Links {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Revoke a participant's link: it opens nothing, their sessions end, answers stay
    Revoke {
        participant: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// What a part's participants read before they begin, and whether links keep an
    /// external participant id
    Consent {
        /// baseline or study
        #[arg(long, default_value = "baseline")]
        part: String,
        /// A text file with the consent text (at most 4000 characters)
        #[arg(long)]
        file: Option<PathBuf>,
        /// Keep an external participant id given with a link (`?pid=`)
        #[arg(long)]
        keep_external_id: bool,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The baseline's tables: accuracy (vanilla and circular, overall, per
    /// level, task, QA type and participant, linked pairs) or the position bias
    Stats {
        /// accuracy or positions
        #[arg(long, default_value = "accuracy")]
        table: String,
        /// csv, latex or json (json holds every table)
        #[arg(long, default_value = "csv")]
        format: String,
        /// The accuracies' 95% interval: clopper-pearson (exact binomial) or wilson
        #[arg(long, default_value = "clopper-pearson")]
        interval: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

#[derive(Subcommand, Debug)]
pub enum CalibrationCommand {
    /// Each validator's calibration round, agreement and state
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Start another round for a validator who did not pass
    Reset {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Open again the queue of a validator the known items paused (their recent catch
    /// rate on known defects was surely below the threshold), without the round the
    /// pause opened
    Lift {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Make a clip the author resolved a known item for the validators who did not
    /// review it: its video and questions copied under a new id (`--as`), the author's
    /// verdicts the known ones, served to a pair that reviewed none of it
    Copy {
        /// The clip with an item the author resolved
        clip: String,
        /// The copy's clip id, new to the campaign (its questions' ids follow it)
        #[arg(long = "as")]
        copy: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The known copies of resolved clips: each with its source, known items and pair
    Copies {
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

#[derive(Subcommand, Debug)]
pub enum CampaignCommand {
    /// Create a campaign that reviews by a protocol file's tasks, QA types and levels
    /// (VGenST-Bench's without --protocol). A campaign an import creates has VGenST's.
    Create {
        /// The campaign's name
        name: String,
        /// The protocol file (TOML; `tandem protocol vgenst` prints the shipped one)
        #[arg(long)]
        protocol: Option<PathBuf>,
    },
    /// Give the campaign another protocol file: new names and attributes, tasks added
    /// after the existing ones, new QA types and cells. Refused, with every reason, when
    /// a stored clip or question would lose its task, its cell or its level
    Protocol {
        file: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Show the settings, or change those given
    Settings {
        /// Retained clips wanted per task
        #[arg(long)]
        target: Option<i64>,
        /// Agreement with the known verdicts needed in calibration (0.8 is 80%)
        #[arg(long)]
        calibration_threshold: Option<f64>,
        /// ... over a round of this many calibration items (drawn anew each round)
        #[arg(long)]
        calibration_min: Option<i64>,
        /// The blind key check: validators answer each question from the video before
        /// its key is shown (on or off)
        #[arg(long, value_parser = ["on", "off"])]
        blind_key_check: Option<String>,
        /// How many of a validator's latest known defects the recent catch rate looks
        /// at (the known items of the live queue; 20 by default)
        #[arg(long)]
        known_window: Option<i64>,
        /// The share of known clips served beside each task's real clips (0.05: 5%; 0:
        /// every known clip)
        #[arg(long)]
        known_rate: Option<f64>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Print every table as one JSON object (keys t11, t12, t13, reasons, validators,
    /// t14, t14_tests and t15 when the campaign has a study, baseline when it has
    /// baseline answers)
    #[arg(long, conflicts_with = "table")]
    pub json: bool,
    /// Print one table: T11, T12, T13, the study's T14 or T15, Table 16 (the annotator pool: the campaign's groups), or the human baseline's (`baseline`)
    #[arg(long)]
    pub table: Option<String>,
    /// Format of --table: csv, latex or json
    #[arg(long, default_value = "json")]
    pub format: String,
    #[command(flatten)]
    pub campaign: CampaignArg,
    /// Only this task (its code)
    #[arg(long)]
    pub task: Option<String>,
    /// Only this pair, as RATER1,RATER2
    #[arg(long)]
    pub pair: Option<String>,
    /// Stage 1 over the first version of every clip (first) or every version (all)
    #[arg(long, default_value = "first")]
    pub versions: String,
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create an account; prints a generated password unless --password-stdin is given
    Add {
        name: String,
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// Pool index of a validator (task t is reviewed by t mod n and (t+1) mod n)
        #[arg(long)]
        index: Option<i64>,
        /// The campaign a validator, author or participant (study or baseline) works in (a validator joins
        /// its pool); made if new, as an import makes it; admins are server-wide and
        /// take none [default: default]
        #[arg(long)]
        campaign: Option<String>,
        /// Read the password from the first line of standard input
        #[arg(long)]
        password_stdin: bool,
        /// Confirm that tasks get new default pairs (and their unstarted items move);
        /// without it, such a change is only shown
        #[arg(long)]
        yes: bool,
    },
    /// List accounts, each with its role in each campaign
    List,
    /// Give an account an author's, study participant's or baseline participant's role
    /// in a campaign (a person holds one role per campaign, so the groups stay apart), or
    /// take its role there away (`--role none`); validators join a campaign through its
    /// pool (`tandem pool add`) and keep their place; a participant with answers keeps
    /// their role
    Role {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
        /// author, participant (the blind study), baseline (the human baseline), or none
        #[arg(long)]
        role: String,
    },
    /// Disable an account: its sessions end and its API tokens are revoked at once;
    /// a validator keeps their pool index (nothing is re-paired)
    Disable { name: String },
    /// Enable a disabled account again (it signs in anew and needs new API tokens)
    Enable { name: String },
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

#[derive(Subcommand, Debug)]
pub enum PoolCommand {
    /// Put an existing account in a campaign's validator pool: its role there
    Add {
        name: String,
        #[arg(long)]
        index: i64,
        #[command(flatten)]
        campaign: CampaignArg,
        /// Confirm that tasks get new default pairs (and their unstarted items move);
        /// without it, such a change is only shown
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create an API token for a user and print it (it is shown only once)
    Create {
        name: String,
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// Revoke every API token of a user
    Revoke { name: String },
}

#[derive(Subcommand, Debug)]
pub enum PairCommand {
    /// List the tasks with their pairs
    List {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Override a task's pair: RATER1 is rater 1 in the statistics
    Set {
        task: String,
        rater1: String,
        rater2: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Go back to the default pair from the pool
    Clear {
        task: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
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

#[derive(Subcommand, Debug)]
pub enum ExportCommand {
    /// The retained clips and questions with their variants, videos and a README
    Retained {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every decision, including changes, as CSV
    Decisions {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every resolution as CSV
    Resolutions {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The clips rejected in Stage 1 that need a new version, as JSON Lines
    Regeneration {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Everything a paper needs in one folder: Tables 11-15 as LaTeX, CSV and JSON,
    /// every figure as SVG, PDF and PNG, a LaTeX document with them all, the records
    /// behind them and a README
    Paper {
        /// A new or empty folder
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The blind study's answers as CSV in the import format (set_id,participant,clip_id,axis,value), with each clip's source and truth
    StudyResponses {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every event of every clip (or of one), in order, as CSV
    Audit {
        /// Only this clip
        #[arg(long)]
        clip: Option<String>,
        /// Only clips or items whose id starts with this
        #[arg(long)]
        id: Option<String>,
        /// Only what this person did (verdicts, resolutions, calibration verdicts)
        #[arg(long)]
        validator: Option<String>,
        /// Only from this day (YYYY-MM-DD, UTC) or time (RFC 3339) on
        #[arg(long)]
        from: Option<String>,
        /// Only up to this day (inclusive) or time
        #[arg(long)]
        to: Option<String>,
        /// Only the latest N events, newest first
        #[arg(long)]
        latest: Option<usize>,
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

/// The new pairs that placing `name` at pool `index` gives: printed when `--yes`
/// confirms them, else the refusal that asks for it (nothing is changed then).
fn confirm_pairs(
    campaign: &str,
    name: &str,
    index: i64,
    changes: &[crate::store::catalog::PairChange],
    yes: bool,
) -> Result<()> {
    let list: Vec<String> = changes
        .iter()
        .map(|c| format!("  {}", c.describe()))
        .collect();
    if yes {
        eprintln!("new pairs in campaign `{campaign}`:\n{}", list.join("\n"));
        return Ok(());
    }
    Err(Error::Conflict(format!(
        "placing {name} at pool index {index} gives {} task(s) of campaign `{campaign}` a new pair:\n{}\nnothing was changed; run again with --yes to confirm",
        changes.len(),
        list.join("\n")
    )))
}

fn parse_role(s: &str) -> std::result::Result<Role, String> {
    Role::parse(s)
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(matches!(
        cli.command,
        Command::Serve { .. } | Command::Demo { .. }
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
        .with_writer(std::io::stderr);
    if std::env::var("TANDEM_LOG_FORMAT").as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Runs one command.
pub async fn run(cli: Cli) -> Result<()> {
    let data_dir = cli.data_dir.clone().unwrap_or_else(|| {
        PathBuf::from(if matches!(cli.command, Command::Demo { .. }) {
            "tandem-demo"
        } else {
            "tandem-data"
        })
    });
    if let Command::Healthcheck { bind } = &cli.command {
        return healthcheck(bind).await;
    }
    if let Command::Sampling(cmd) = &cli.command
        && !matches!(
            cmd,
            SamplingCommand::Run { .. } | SamplingCommand::Status { .. }
        )
    {
        return sampling(cmd);
    }
    if let Command::Protocol(cmd) = &cli.command {
        return protocol_command(cmd);
    }
    if let Command::Demo {
        bind,
        paper_scale,
        protocol,
    } = &cli.command
    {
        let protocol = match protocol.as_deref() {
            None => None,
            Some(name) => Some(match crate::domain::protocol::shipped(name) {
                Some(text) => crate::domain::protocol::parse(text).map_err(|problems| {
                    Error::Internal(format!("the shipped protocol `{name}`: {problems:?}"))
                })?,
                None if !std::path::Path::new(name).exists() => {
                    return Err(Error::Invalid(format!(
                        "--protocol `{name}` is neither a shipped protocol (vgenst, glimpse, tumtraffic) nor a file"
                    )));
                }
                None => crate::io::protocol::read(
                    std::path::Path::new(name),
                    &crate::config::Limits::from_env()?,
                )?,
            }),
        };
        return crate::demo::run(
            &data_dir,
            cli.database_url.clone(),
            bind,
            *paper_scale,
            protocol,
        )
        .await;
    }
    let config = Config::new(&data_dir, cli.database_url.clone())?;
    let store = crate::store::Store::open(&config.database_url).await?;
    let result = command(cli.command, &config, &store).await;
    store.close().await;
    result
}

async fn command(command: Command, config: &Config, store: &Store) -> Result<()> {
    match command {
        Command::Sampling(SamplingCommand::Run { campaign, json }) => {
            let run = crate::app::sampling::run(store, &campaign.campaign).await?;
            if json {
                println!("{}", serde_json::to_string(&run).map_err(internal_json)?);
            } else {
                print!("{}", crate::app::sampling::run_words(&run));
            }
            Ok(())
        }
        Command::Sampling(SamplingCommand::Status { campaign, json }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let status = crate::app::sampling::status(store, &campaign).await?;
            if json {
                println!("{}", serde_json::to_string(&status).map_err(internal_json)?);
            } else {
                print!("{}", crate::app::sampling::status_words(&status));
            }
            Ok(())
        }
        Command::Demo { .. }
        | Command::Healthcheck { .. }
        | Command::Sampling(_)
        | Command::Protocol(_) => Err(Error::Internal("dispatched earlier".into())),
        Command::Backup { out } => {
            store.backup(&config.database_url, &out).await?;
            println!("database copied to {}", out.display());
            match crate::app::media::media_store(store, config)
                .await?
                .location()
            {
                crate::io::objects::Location::Local => eprintln!(
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
        Command::Init { media } => {
            let location = match media {
                Some(to) => {
                    let target = crate::io::objects::Location::parse(&to)?;
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
        Command::Media(MediaCommand::Show) => {
            let media = crate::app::media::media_store(store, config).await?;
            println!("media: {}", media.location().as_text());
            media.check().await?;
            let files = media.list().await?;
            let bytes: u64 = files.iter().map(|(_, n)| n).sum();
            println!(
                "{} stored file(s), {bytes} bytes; the store answers",
                files.len()
            );
            Ok(())
        }
        Command::Media(MediaCommand::Migrate { to }) => {
            let target = crate::io::objects::Location::parse(&to)?;
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
            Ok(())
        }
        Command::Probe => {
            let p = crate::app::probe_timings(store, config).await?;
            print_timing(p.timed, p.unreadable, p.untried);
            Ok(())
        }
        Command::Migrate => {
            println!("database is up to date");
            Ok(())
        }
        Command::Check => {
            let found = crate::store::find_control_text(store).await?;
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
        Command::Serve {
            bind,
            secure_cookies,
            server,
        } => {
            let mut config = config.clone();
            config.secure_cookies = secure_cookies;
            server.apply(&mut config)?;
            serve(&config, store, &bind).await
        }
        Command::Import { manifest, campaign } => {
            let summary =
                crate::app::import_manifest(store, config, &campaign.campaign, &manifest).await?;
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
        Command::User(UserCommand::Add {
            name,
            role,
            index,
            campaign,
            password_stdin,
            yes,
        }) => {
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .map_err(|e| Error::io("cannot read the password from standard input", e))?;
                Some(line.trim_end_matches(['\r', '\n']).to_string())
            } else {
                None
            };
            let campaign = match (role, campaign) {
                (Role::Admin, None) => None,
                (Role::Admin, Some(_)) => {
                    return Err(Error::field(
                        "campaign",
                        "an admin is server-wide and takes no --campaign",
                    ));
                }
                (_, c) => Some(c.unwrap_or_else(|| "default".into())),
            };
            let mut new = NewUser {
                name: name.clone(),
                role,
                password,
                campaign: campaign.clone(),
                index,
                confirmed: false,
            };
            let created = match crate::app::accounts::create_user(store, new.clone()).await? {
                Created::NeedsConfirmation(changes) => {
                    confirm_pairs(
                        campaign.as_deref().unwrap_or_default(),
                        &name,
                        index.unwrap_or(0),
                        &changes,
                        yes,
                    )?;
                    new.confirmed = true;
                    crate::app::accounts::create_user(store, new).await?
                }
                done => done,
            };
            if let Created::User {
                user,
                generated_password,
            } = created
            {
                match generated_password {
                    Some(password) => {
                        println!(
                            "created {} ({}) with password: {password}",
                            user.name,
                            user.describe()
                        );
                        println!("(shown once; it is stored only as an argon2id hash)");
                    }
                    None => println!("created {} ({})", user.name, user.describe()),
                }
            }
            Ok(())
        }
        Command::User(UserCommand::List) => {
            for a in store.accounts().await? {
                println!(
                    "{}\t{}{}",
                    a.user.name,
                    a.user.describe(),
                    if a.disabled { "\tdisabled" } else { "" }
                );
            }
            Ok(())
        }
        Command::User(UserCommand::Role {
            name,
            campaign,
            role,
        }) => {
            let role = match role.trim() {
                "none" => None,
                r => Some(parse_role(r).map_err(|m| Error::field("role", m))?),
            };
            store.set_role(&name, &campaign.campaign, role).await?;
            match role {
                Some(r) => println!(
                    "{name} is {} of campaign `{}`",
                    r.with_article(),
                    campaign.campaign
                ),
                None => println!("{name} holds no role in campaign `{}`", campaign.campaign),
            }
            Ok(())
        }
        Command::User(UserCommand::Disable { name }) => {
            if store.set_disabled(&name, true).await? {
                println!(
                    "{name} is disabled: their sessions ended and their API tokens are revoked"
                );
            } else {
                println!("{name} was already disabled");
            }
            Ok(())
        }
        Command::User(UserCommand::Enable { name }) => {
            if store.set_disabled(&name, false).await? {
                println!("{name} is enabled: they sign in again, and need new API tokens");
            } else {
                println!("{name} was not disabled");
            }
            Ok(())
        }
        Command::Pool(PoolCommand::Add {
            name,
            index,
            campaign,
            yes,
        }) => {
            let placement = PoolPlacement {
                campaign: campaign.campaign.clone(),
                index,
            };
            if let Some(changes) =
                crate::app::accounts::place_in_pool(store, &name, placement.clone(), false).await?
            {
                confirm_pairs(&campaign.campaign, &name, index, &changes, yes)?;
                crate::app::accounts::place_in_pool(store, &name, placement, true).await?;
            }
            println!(
                "{name} joined the pool of campaign `{}` with index {index}",
                campaign.campaign
            );
            Ok(())
        }
        Command::Token(TokenCommand::Create { name, label }) => {
            let token = store.create_token(&name, &label).await?;
            println!("{token}");
            eprintln!("(API token for {name}; shown once, stored only as a SHA-256 digest)");
            Ok(())
        }
        Command::Token(TokenCommand::Revoke { name }) => {
            let n = store.revoke_tokens(&name).await?;
            println!("revoked {n} API token(s) of {name}");
            Ok(())
        }
        Command::Pair(cmd) => pair(store, cmd).await,
        Command::Stats(args) => stats(store, args).await,
        Command::Export(ExportCommand::Paper { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let now = crate::clock::now_micros() / 1_000_000 * 1_000_000;
            let files = crate::app::paper_bundle(store, &campaign, now).await?;
            crate::report::bundle::write(&out, &files)?;
            println!("wrote {} file(s) to {}", files.len(), out.display());
            Ok(())
        }
        Command::Export(ExportCommand::StudyResponses { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            write_download(
                out.as_deref(),
                crate::app::exports::study_responses(store, &campaign).await?,
            )
        }
        Command::Export(ExportCommand::Regeneration { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            write_download(
                out.as_deref(),
                crate::app::exports::regeneration(store, &campaign).await?,
            )
        }
        Command::Export(ExportCommand::Audit {
            clip,
            id,
            validator,
            from,
            to,
            latest,
            out,
            campaign,
        }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let mut filter = crate::domain::records::AuditFilter::parse(
                clip.as_deref(),
                validator.as_deref(),
                from.as_deref(),
                to.as_deref(),
            )?;
            filter.prefix = crate::domain::paging::prefix("id", id.as_deref())?;
            filter.limit = latest;
            if let Some(name) = &filter.who
                && store.user_by_name(name).await?.is_none()
            {
                return Err(Error::field("validator", format!("no account `{name}`")));
            }
            if let Some(c) = &clip {
                let mut probe = filter.clone();
                probe.limit = Some(1);
                if store.audit(&campaign, &probe).await?.is_empty() {
                    return Err(Error::NotFound(format!(
                        "no clip `{c}` in campaign `{}`",
                        campaign.name
                    )));
                }
            }
            write_download(
                out.as_deref(),
                crate::app::exports::audit(store, &campaign, &filter).await?,
            )
        }
        Command::Calibration(CalibrationCommand::Status { campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            for s in store.calibration_scores(&campaign).await? {
                let st = &s.status;
                println!(
                    "{}\tround {}\t{} of {} decided\t{} agreed\t{}{}",
                    s.validator,
                    st.round,
                    st.decided,
                    st.total,
                    st.agreed,
                    st.state_words(),
                    st.paused
                        .as_deref()
                        .map(|why| format!("\tpaused by the known items: {why}"))
                        .unwrap_or_default()
                );
            }
            Ok(())
        }
        Command::Calibration(CalibrationCommand::Reset { name, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let draw = store.reset_calibration(&campaign, &name, "cli").await?;
            println!("{}", crate::domain::calibration::round_text(&name, &draw));
            Ok(())
        }
        Command::Calibration(CalibrationCommand::Lift { name, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let round = store.lift_pause(&campaign, &name, "cli").await?;
            println!(
                "{name}'s queue is open again; the pause's calibration round {round} stays on record, lifted"
            );
            Ok(())
        }
        Command::Calibration(CalibrationCommand::Copy {
            clip,
            copy,
            campaign,
        }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let made = store.copy_resolved(&campaign, &clip, &copy).await?;
            println!("{}", made.words());
            Ok(())
        }
        Command::Calibration(CalibrationCommand::Copies { campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            for k in store.known_copies(&campaign).await? {
                println!(
                    "{}\tcopy of {}\tknown: {}\tserved to {}",
                    k.clip_id,
                    k.source,
                    k.known_items.join(", "),
                    k.validators.join(" and ")
                );
            }
            Ok(())
        }
        Command::Campaign(CampaignCommand::Create { name, protocol }) => {
            let protocol = match &protocol {
                Some(path) => crate::io::protocol::read(path, &config.limits)?,
                None => crate::domain::protocol::vgenst(),
            };
            crate::app::sampling::planned(&protocol.taxonomy.sampling)?;
            let campaign = store.create_campaign(&name, &protocol).await?;
            println!(
                "campaign `{}` created with protocol `{}` (version {}): {}",
                campaign.name,
                protocol.name,
                protocol.version,
                sizes(&campaign.taxonomy, None)
            );
            Ok(())
        }
        Command::Campaign(CampaignCommand::Protocol { file, campaign }) => {
            let protocol = crate::io::protocol::read(&file, &config.limits)?;
            crate::app::sampling::planned(&protocol.taxonomy.sampling)?;
            let before = store.campaign(&campaign.campaign).await?;
            let after = store
                .change_protocol(&campaign.campaign, &protocol.taxonomy)
                .await?;
            let new = (after.taxonomy.tasks.len()).saturating_sub(before.taxonomy.tasks.len());
            println!(
                "campaign `{}` now reviews by protocol `{}` (version {}): {}",
                after.name,
                protocol.name,
                protocol.version,
                sizes(&after.taxonomy, Some(new))
            );
            if after.protocol_version == before.protocol_version {
                println!(
                    "nothing changed: it is the protocol in force (the campaign's version {})",
                    after.protocol_version
                );
            } else {
                println!(
                    "the campaign's protocol is now version {} (it was {}): each decision records the version it was made under",
                    after.protocol_version, before.protocol_version
                );
            }
            Ok(())
        }
        Command::Campaign(CampaignCommand::Settings {
            target,
            calibration_threshold,
            calibration_min,
            blind_key_check,
            known_window,
            known_rate,
            campaign,
        }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let mut s = campaign.settings;
            if let Some(t) = target {
                s.target_per_task = t;
            }
            if let Some(t) = calibration_threshold {
                s.calibration_threshold = t;
            }
            if let Some(m) = calibration_min {
                s.calibration_min_items = m;
            }
            if let Some(b) = blind_key_check {
                s.blind_key_check = b == "on";
            }
            if let Some(w) = known_window {
                s.known_window = w;
            }
            if let Some(r) = known_rate {
                s.known_rate = r;
            }
            if s != campaign.settings {
                store.set_settings(&campaign, s).await?;
            }
            println!(
                "campaign `{}`: target {} retained clips per task; calibration needs {:.0}% agreement in rounds of {} items; the blind key check is {}; known clips are served at {}; the recent catch rate on known items looks at the last {} known defects",
                campaign.name,
                s.target_per_task,
                s.calibration_threshold * 100.0,
                s.calibration_min_items,
                if s.blind_key_check { "on" } else { "off" },
                if s.known_rate > 0.0 {
                    format!(
                        "{}% of each task's real clips",
                        (s.known_rate * 1e6).round() / 1e4
                    )
                } else {
                    "every one imported".into()
                },
                s.known_window
            );
            Ok(())
        }
        Command::Study(cmd) => study(store, config, cmd).await,
        Command::Baseline(cmd) => baseline(store, config, cmd).await,
        Command::Decisions(ImportCommand::Import { file, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let f = open_csv(config, &file, "the decisions file")?;
            let (rows, problems) = io::records::read_decisions(f);
            let what = format!("decisions file {}", file.display());
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
        Command::Resolutions(ImportCommand::Import { file, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let f = open_csv(config, &file, "the resolutions file")?;
            let (rows, problems) = io::records::read_resolutions(f);
            let what = format!("resolutions file {}", file.display());
            let summary = store
                .import_resolutions(&campaign, &rows, problems, &what)
                .await?;
            println!("imported {}: {summary}", file.display());
            Ok(())
        }
        Command::Export(ExportCommand::Retained { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let (summary, counts) =
                crate::app::exports::retained_to_folder(store, config, &campaign, &out).await?;
            println!(
                "exported {} clip(s) and {} question(s) (V1 {}, V2 {}, V3 {}) to {}",
                summary.clips,
                summary.questions,
                summary.v1,
                summary.v2,
                summary.v3,
                out.display()
            );
            if counts.clips_open + counts.questions_open > 0 {
                eprintln!(
                    "note: review is not finished ({} clip(s) and {} question(s) still open); they are not in the export",
                    counts.clips_open, counts.questions_open
                );
            }
            Ok(())
        }
        Command::Export(ExportCommand::Decisions { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            write_download(
                out.as_deref(),
                crate::app::exports::decisions(store, &campaign).await?,
            )
        }
        Command::Export(ExportCommand::Resolutions { out, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            write_download(
                out.as_deref(),
                crate::app::exports::resolutions(store, &campaign).await?,
            )
        }
    }
}

/// `tandem sampling`: the planner and the bounds of `stats::sampling`, in words or JSON.
/// A taxonomy's size in words: "11 tasks, 2 QA types, 22 task x QA-type cells" (with
/// how many tasks are new, for a protocol change).
fn sizes(t: &crate::domain::taxonomy::Taxonomy, new: Option<usize>) -> String {
    format!(
        "{} tasks{}, {} QA types, {} task x QA-type cells",
        t.tasks.len(),
        new.map(|n| format!(" ({n} new)")).unwrap_or_default(),
        t.qa_types.len(),
        t.cell_count()
    )
}

/// `tandem protocol`: reads a file (bounded by `TANDEM_MAX_MANIFEST_BYTES`) or prints
/// the shipped one; no data folder, no database.
fn protocol_command(cmd: &ProtocolCommand) -> Result<()> {
    match cmd {
        ProtocolCommand::Vgenst => {
            print!("{}", crate::domain::protocol::VGENST);
            Ok(())
        }
        ProtocolCommand::Check { file, json } => {
            let limits = crate::config::Limits::from_env()?;
            let p = crate::io::protocol::read(file, &limits)?;
            let t = &p.taxonomy;
            // A sampling rule's plan is found here too: one that cannot be is refused.
            let plans = crate::app::sampling::planned(&t.sampling)?;
            if *json {
                let sampling: Vec<serde_json::Value> = plans
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "stratum": r.rule.describe(), "n": r.n, "c": r.c,
                        })
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({
                        "name": p.name, "version": p.version, "description": p.description,
                        "taxonomy": t, "cells": t.cell_count(), "sampling": sampling,
                    })
                );
            } else {
                println!(
                    "{}: protocol `{}` (version {}) is sound: {}",
                    file.display(),
                    p.name,
                    p.version,
                    sizes(t, None)
                );
                println!("  pairing: {}", t.pairing.words());
                for r in &plans {
                    println!(
                        "  reviewed by sample: {}: {} of each lot, accepted with at most {} defect(s)",
                        r.rule.describe(),
                        r.n,
                        r.c
                    );
                }
            }
            Ok(())
        }
    }
}

fn internal_json(e: serde_json::Error) -> Error {
    Error::Internal(format!("JSON: {e}"))
}

fn sampling(cmd: &SamplingCommand) -> Result<()> {
    use crate::stats::sampling;
    let invalid = |e: sampling::SamplingError| Error::Invalid(e.to_string());
    let out = |json: bool, value: serde_json::Value, words: String| {
        if json {
            println!("{value}");
        } else {
            println!("{words}");
        }
    };
    match *cmd {
        SamplingCommand::Plan {
            aql,
            rql,
            alpha,
            beta,
            json,
        } => {
            let p = sampling::plan(aql, rql, alpha, beta).map_err(invalid)?;
            out(
                json,
                serde_json::json!({
                    "aql": aql, "rql": rql, "alpha": alpha, "beta": beta,
                    "n": p.n, "c": p.c,
                    "accept_at_aql": p.accept_at_aql, "accept_at_rql": p.accept_at_rql,
                }),
                format!(
                    "review {n} items drawn at random; accept the whole when at most {c} of them are defective\n\
                     a whole with {aql_pct}% defects is accepted with probability {a:.4} (at least {min_a:.4})\n\
                     a whole with {rql_pct}% defects is accepted with probability {r:.4} (at most {beta})",
                    n = p.n,
                    c = p.c,
                    aql_pct = aql * 100.0,
                    rql_pct = rql * 100.0,
                    a = p.accept_at_aql,
                    min_a = 1.0 - alpha,
                    r = p.accept_at_rql,
                ),
            );
        }
        SamplingCommand::Bound {
            defects,
            n,
            confidence,
            json,
        } => {
            let upper = sampling::upper_bound(defects, n, confidence).map_err(invalid)?;
            out(
                json,
                serde_json::json!({
                    "defects": defects, "n": n, "confidence": confidence, "upper": upper,
                }),
                format!(
                    "{defects} defect(s) in {n} items: the whole's defect rate is at most {:.4}% with {}% confidence",
                    upper * 100.0,
                    confidence * 100.0
                ),
            );
        }
        SamplingCommand::Zero {
            p,
            confidence,
            json,
        } => {
            let n = sampling::zero_defect_n(p, confidence).map_err(invalid)?;
            out(
                json,
                serde_json::json!({ "p": p, "confidence": confidence, "n": n }),
                format!(
                    "review {n} items drawn at random: if none is defective, the whole's defect rate is below {}% with {}% confidence",
                    p * 100.0,
                    confidence * 100.0
                ),
            );
        }
        SamplingCommand::Run { .. } | SamplingCommand::Status { .. } => {
            return Err(Error::Internal(
                "a campaign's sampling needs the store".into(),
            ));
        }
    }
    Ok(())
}

/// `tandem healthcheck`: one plain HTTP/1.0 request to the local server's /healthz.
async fn healthcheck(bind: &str) -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = bind
        .replacen("0.0.0.0", "127.0.0.1", 1)
        .replacen("[::]", "[::1]", 1);
    let ask = async {
        let mut s = tokio::net::TcpStream::connect(&addr).await?;
        s.write_all(format!("GET /healthz HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
            .await?;
        let mut head = vec![0u8; 64];
        let n = s.read(&mut head).await?;
        head.truncate(n);
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&head).to_string())
    };
    let head = tokio::time::timeout(std::time::Duration::from_secs(5), ask)
        .await
        .map_err(|_| Error::Invalid(format!("{addr} did not answer within 5 s")))?
        .map_err(|e| Error::io(format!("cannot reach {addr}"), e))?;
    match head.split_whitespace().nth(1) {
        Some("200") => {
            println!("healthy");
            Ok(())
        }
        other => Err(Error::Invalid(format!(
            "{addr}/healthz answered {}",
            other.unwrap_or("nothing")
        ))),
    }
}

async fn stats(store: &Store, args: StatsArgs) -> Result<()> {
    let campaign = store.campaign(&args.campaign.campaign).await?;
    let scope =
        Scope::parse(args.task, args.pair.as_deref(), &args.versions).map_err(Error::from)?;
    let text = if args.json {
        serde_json::to_string_pretty(&crate::app::stats_json(store, &campaign, &scope).await?)
            .map_err(|e| Error::Internal(format!("cannot write JSON: {e}")))?
            + "\n"
    } else if let Some(t) = args.table {
        let table = TableId::parse(&t).map_err(|m| Error::field("table", m))?;
        let format = Format::parse(&args.format).map_err(|m| Error::field("format", m))?;
        if table.is_groups() {
            crate::app::baseline::groups(store, &campaign)
                .await?
                .render(format)?
        } else if table.is_baseline() {
            let method = crate::stats::circular::IntervalMethod::ClopperPearson;
            let report = crate::app::baseline::report(store, &campaign, method)
                .await?
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "campaign `{}` has no baseline answers, so there is no baseline table",
                        campaign.name
                    ))
                })?;
            crate::report::baseline::render(&report, format)?
        } else if table.is_study() {
            let report = crate::app::study_report(store, &campaign)
                .await?
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "campaign `{}` has no study, so there is no {}",
                        campaign.name,
                        table.name().to_uppercase()
                    ))
                })?;
            crate::report::study::render(&report, table, format)?
        } else {
            let report = crate::app::qc_report(store, &campaign, &scope).await?;
            crate::report::format::render(&report, &campaign.taxonomy, table, format)?
        }
    } else {
        crate::report::format::summary(&crate::app::qc_report(store, &campaign, &scope).await?)
    };
    print!("{text}");
    Ok(())
}

async fn study(store: &Store, config: &Config, cmd: StudyCommand) -> Result<()> {
    use crate::domain::study::Display;
    match cmd {
        StudyCommand::Import {
            sets,
            sources,
            display,
            frames,
            campaign,
        } => {
            let display = display
                .map(|d| Display::parse(&d).map_err(|m| Error::field("display", m)))
                .transpose()?
                .map(|d| (d, frames));
            let path = sets.clone();
            let limits = config.limits.clone();
            let checked = tokio::task::spawn_blocking(move || {
                io::study::check_sets(&path, sources.as_deref(), &limits)
            })
            .await
            .map_err(|e| Error::Internal(format!("checking the sets failed: {e}")))??;
            let summary =
                crate::app::import_study(store, config, &campaign.campaign, &checked, display)
                    .await?;
            println!("imported {}: {summary}", sets.display());
            if !summary.metadata_removed {
                eprintln!(
                    "note: ffmpeg is not installed, so the clips are served as they are, with any metadata (title, comments) they carry; install ffmpeg and import again to remove it"
                );
            }
            Ok(())
        }
        StudyCommand::Display {
            mode,
            frames,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let mode = Display::parse(&mode).map_err(|m| Error::field("display", m))?;
            let made =
                crate::app::set_study_display(store, config, &campaign, mode, frames).await?;
            match mode {
                Display::Video => println!("participants now see the videos"),
                Display::Strip => {
                    println!("participants now see strips of {frames} frames ({made} drawn now)")
                }
            }
            Ok(())
        }
        StudyCommand::Status { campaign } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let study = store.require_study(&campaign).await?;
            let (sets, clips) = store.study_size(&study).await?;
            println!(
                "{sets} set(s), {clips} clip(s); sources {}; display {}{}",
                study.sources.join(", "),
                study.display.as_str(),
                if study.display == Display::Strip {
                    format!(" of {} frames", study.frames)
                } else {
                    String::new()
                }
            );
            for p in store.study_participants(&study).await? {
                println!(
                    "{}\t{} of {} set(s) answered{}",
                    p.name,
                    p.answered,
                    p.total,
                    if p.imported { " (imported)" } else { "" }
                );
            }
            Ok(())
        }
        StudyCommand::Responses(ImportCommand::Import { file, campaign }) => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let f = open_csv(config, &file, "the responses file")?;
            let (rows, problems) = io::study::read_responses(f);
            let what = format!("responses file {}", file.display());
            let summary = store
                .import_responses(&campaign, &rows, problems, &what)
                .await?;
            println!("imported {}: {summary}", file.display());
            Ok(())
        }
    }
}

async fn baseline(store: &Store, config: &Config, cmd: BaselineCommand) -> Result<()> {
    use crate::stats::circular::IntervalMethod;
    match cmd {
        BaselineCommand::Import { file, campaign } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let f = open_csv(config, &file, "the answers file")?;
            let (rows, problems) = io::baseline::read_answers(f);
            let what = format!("answers file {}", file.display());
            let summary =
                crate::app::baseline::import_answers(store, &campaign, &rows, problems, &what)
                    .await?;
            println!("imported {}: {summary}", file.display());
            Ok(())
        }
        BaselineCommand::Export { out, campaign } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let rows = crate::app::baseline::answer_rows(store, &campaign).await?;
            write_out(out.as_deref(), |w| io::baseline::write_answers(w, &rows))
        }
        BaselineCommand::Status { campaign } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let answers = store.baseline_answers(&campaign).await?;
            let participants = store.baseline_participants(&campaign).await?;
            println!(
                "{} baseline participant(s), {} presentation(s) answered",
                participants.len(),
                answers.len()
            );
            for p in participants {
                let mine: Vec<_> = answers.iter().filter(|a| a.participant == p).collect();
                let questions: std::collections::HashSet<&str> =
                    mine.iter().map(|a| a.question_key.as_str()).collect();
                println!(
                    "{p}\t{} presentation(s) of {} question(s)",
                    mine.len(),
                    questions.len()
                );
            }
            Ok(())
        }
        BaselineCommand::Setup {
            per_task,
            seed,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let s = crate::app::baseline::setup(store, config, &campaign, per_task, seed).await?;
            println!("{s}");
            if !s.metadata_removed {
                println!(
                    "ffmpeg is not installed: the clips are served as they are, metadata included"
                );
            }
            Ok(())
        }
        BaselineCommand::Invite {
            count,
            part,
            base_url,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let part = crate::domain::Part::parse(&part).map_err(|m| Error::field("part", m))?;
            let links = crate::app::baseline::invite(store, &campaign, part, count).await?;
            println!("participant,link");
            for l in links {
                println!(
                    "{},{}{}",
                    l.participant,
                    base_url.trim_end_matches('/'),
                    l.path
                );
            }
            Ok(())
        }
        BaselineCommand::Links { campaign } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            println!("participant\tpart\tfirst used\tstate\tcompletion code");
            for l in store.links(&campaign).await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    l.participant,
                    l.part,
                    l.first_used_at
                        .map_or_else(|| "never".into(), crate::clock::to_rfc3339),
                    if l.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "open"
                    },
                    l.completion_code
                );
            }
            Ok(())
        }
        BaselineCommand::Revoke {
            participant,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            if store.revoke_link(&campaign, &participant).await? {
                println!("revoked {participant}'s link; their answers stay");
            } else {
                println!("{participant}'s link was revoked already");
            }
            Ok(())
        }
        BaselineCommand::Consent {
            part,
            file,
            keep_external_id,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let part = crate::domain::Part::parse(&part).map_err(|m| Error::field("part", m))?;
            let consent = match file {
                Some(f) => io::baseline::read_consent(&f)?,
                None => String::new(),
            };
            let s = crate::store::invitations::PartSettings {
                consent,
                keep_external_id,
            };
            store.set_part_settings(&campaign, part, &s).await?;
            println!(
                "the {part}'s participants read {} character(s) first; external ids are {}",
                s.consent.chars().count(),
                if keep_external_id { "kept" } else { "not kept" }
            );
            Ok(())
        }
        BaselineCommand::Stats {
            table,
            format,
            interval,
            campaign,
        } => {
            let campaign = store.campaign(&campaign.campaign).await?;
            let method = match interval.as_str() {
                "clopper-pearson" => IntervalMethod::ClopperPearson,
                "wilson" => IntervalMethod::Wilson,
                other => {
                    return Err(Error::field(
                        "interval",
                        format!("must be clopper-pearson or wilson, not `{other}`"),
                    ));
                }
            };
            let format = Format::parse(&format).map_err(|m| Error::field("format", m))?;
            let report = crate::app::baseline::report(store, &campaign, method)
                .await?
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "campaign `{}` has no baseline answers yet (tandem baseline import FILE)",
                        campaign.name
                    ))
                })?;
            use crate::report::baseline as b;
            let text = match (table.as_str(), format) {
                (_, Format::Json) => {
                    serde_json::to_string_pretty(&report)
                        .map_err(|e| Error::Internal(format!("cannot write JSON: {e}")))?
                        + "\n"
                }
                ("accuracy", Format::Csv) => b::accuracy_table(&report).to_csv()?,
                ("accuracy", Format::Latex) => b::latex(&report),
                ("positions", Format::Csv) => b::position_table(&report).to_csv()?,
                ("positions", Format::Latex) => {
                    return Err(Error::field(
                        "format",
                        "the position bias is a CSV table (or JSON); its test is in the accuracy table's LaTeX caption",
                    ));
                }
                (other, _) => {
                    return Err(Error::field(
                        "table",
                        format!("must be accuracy or positions, not `{other}`"),
                    ));
                }
            };
            print!("{text}");
            Ok(())
        }
    }
}

async fn pair(store: &Store, cmd: PairCommand) -> Result<()> {
    let (campaign, change) = match &cmd {
        PairCommand::List { campaign } => (campaign, None),
        PairCommand::Set {
            task,
            rater1,
            rater2,
            campaign,
        } => (
            campaign,
            Some((task, Some((rater1.as_str(), rater2.as_str())))),
        ),
        PairCommand::Clear { task, campaign } => (campaign, Some((task, None))),
    };
    let campaign = store.campaign(&campaign.campaign).await?;
    if let Some((task, pair)) = change {
        store.set_pair(&campaign, task, pair).await?;
    }
    if campaign.taxonomy.pairing == Pairing::LeastOpenWork {
        // No task pairs: the pool and the work that decides each new clip's pair.
        println!(
            "campaign `{}` pairs per clip, by least open work: each clip, when it enters review, goes to the two validators with the fewest items waiting",
            campaign.name
        );
        for (index, name, open) in store.open_work(&campaign).await? {
            match open {
                Some(n) => println!("#{index:<3} {name:<14} {n} item(s) waiting"),
                None => println!("#{index:<3} {name:<14} disabled: takes no new clips"),
            }
        }
        return Ok(());
    }
    for t in store.tasks(&campaign).await? {
        let pair = match (&t.rater1, &t.rater2) {
            (Some(a), Some(b)) => format!(
                "{a}, {b}{}",
                if t.overridden {
                    " (set by an admin)"
                } else {
                    ""
                }
            ),
            _ => format!("no pair: {}", t.pair_problem.unwrap_or_default()),
        };
        println!("{:>2} {:<14} {pair}", t.position, t.code);
    }
    Ok(())
}

/// A CSV file to import: a regular file within the size limit, read with every line
/// within the line limit.
fn open_csv(
    config: &Config,
    path: &Path,
    what: &str,
) -> Result<io::limits::LineBounded<std::io::BufReader<std::fs::File>>> {
    let limits = &config.limits;
    let f = io::limits::open_regular(path, what, limits.csv_bytes, "TANDEM_MAX_CSV_BYTES")?;
    Ok(io::limits::LineBounded::new(
        std::io::BufReader::new(f),
        limits.line_bytes,
    ))
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

/// Writes an export (`app::exports`) to `out`, or to standard output.
fn write_download(out: Option<&Path>, d: crate::app::exports::Download) -> Result<()> {
    let bytes = d.into_bytes()?;
    write_out(out, |w| {
        w.write_all(&bytes)
            .map_err(|e| Error::io("cannot write the export", e))
    })
}

fn write_out(out: Option<&Path>, f: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    match out {
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?;
            f(&mut file)?;
            file.sync_all()
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            f(&mut lock)
        }
    }
}

async fn serve(config: &Config, store: &Store, bind: &str) -> Result<()> {
    let (listener, addr) = crate::server::listen(bind).await?;
    tracing::info!(%addr, data_dir = %config.data_dir.display(), "Tandem is listening");
    println!("Tandem is listening on http://{addr}");
    crate::app::media::warm_up(store, config);
    crate::app::known::catch_up(store);
    crate::server::serve_until_stopped(listener, config.clone(), store.clone()).await
}
