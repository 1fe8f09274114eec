//! Storage. Handlers and commands never write SQL: they call the store in domain terms,
//! and everything that must happen together happens in one store method, in one write.
//!
//! Two backends behind one small interface (`Store` dispatches to either):
//! - `sqlite`: a read-only pool for reads, and one writer task that owns the write
//!   connection and commits the jobs waiting together (group commit: one fsync for a
//!   batch, every job in its own savepoint, nobody answered before the commit).
//! - `postgres`: a read pool and a write pool; writes run in parallel, a verdict
//!   locking only its item's row (and a shared advisory lock that only structural
//!   writes such as imports take exclusively), retried on a serialization failure.
//!
//! The SQL both share is written once in `store/sql/` and compiled for each backend
//! with its native sqlx driver (`include!` in `sqlite.rs` and `postgres.rs`), rows
//! read into `FromRow` structs (`rows`). What differs per backend is in the backend
//! file (connection settings, locks, the dump, the backup) and in small SQL macros.
//! The public types live in the area modules (`accounts`, `catalog`, `review`, ...).

/// Runs `$body` on a read connection of whichever backend serves, as a
/// [`db::Tx`]: `read_tx!(self, |c| some_read(c, campaign).await)`. The body is written
/// once and compiled for each backend's connection.
macro_rules! read_tx {
    ($store:expr, |$c:ident| $body:expr) => {
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                let mut conn = b.read().await?;
                let $c = &mut *conn;
                $body
            }
            $crate::store::Db::Postgres(b) => {
                let mut conn = b.read().await?;
                let $c = &mut *conn;
                $body
            }
        }
    };
}

/// Runs `$body` as one write of whichever backend serves, holding `$lock`:
/// `write_tx!(self, Lock::Item, (campaign, key), |tx| write_it(tx, campaign, key).await)`.
/// The values named in parentheses are owned copies the write keeps (the body sees each
/// as a reference): SQLite runs the write on its writer's thread, PostgreSQL may run it
/// again after a serialization failure. Everything else the body names must be `Copy`.
macro_rules! write_tx {
    ($store:expr, $lock:expr, ($($v:ident),* $(,)?), |$tx:ident| $body:expr) => {{
        $(let $v = $v.to_owned();)*
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                b.write_tx($lock, move |$tx| {
                    Box::pin(async move {
                        $(let $v = &$v;)*
                        $body
                    })
                })
                .await
            }
            $crate::store::Db::Postgres(b) => {
                b.write_tx($lock, move |$tx| {
                    $(let $v = ::std::clone::Clone::clone(&$v);)*
                    Box::pin(async move {
                        $(let $v = &$v;)*
                        $body
                    })
                })
                .await
            }
        }
    }};
}

pub mod accounts;
pub mod baseline;
pub mod calibration;
pub mod catalog;
pub mod count;
pub mod invitations;
pub mod jobs;
pub mod records;
pub mod review;
pub mod sampling;
pub mod sessions;
pub mod study;

mod cache;
pub(crate) mod db;
mod postgres;
mod sqlite;
mod stamp;
mod write;

pub use write::base::DEFAULT_CAMPAIGN;

/// The texts of the statements whose plans and compilation the tests and benches check
/// (they name a stage as a parameter, which SQLite's partial indexes could make it
/// compile again on every run).
pub mod statements {
    /// A validator's queue: `:campaign`, `:validator`, `:stage`.
    pub const QUEUE: &str = super::review::QUEUE;
    /// A verdict's load of its item, as SQLite runs it (named parameters).
    pub const FACTS_SQLITE: &str = super::write::review::FACTS.sqlite;
    /// A verdict's load of its item, as PostgreSQL runs it (its row locked).
    pub const FACTS_POSTGRES: &str = super::write::review::FACTS.postgres;
}

use crate::domain::facts::StudyData;
use crate::domain::import::{CheckedSets, ServedCopy};
use crate::domain::study::{Display, SetAnswer};
use crate::domain::{Part, Role};
use crate::error::{Error, LineError, Result};
use accounts::User;
use catalog::Campaign;
use std::path::Path;
use std::sync::Arc;
use study::{
    ParticipantProgress, ResponsesSummary, ShownSet, Study, StudyImportSummary, StudyMedia,
    StudyProgress,
};

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// What a write must exclude while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Nothing beyond the rows it writes (sessions, tokens, sign-in counts).
    Rows,
    /// A verdict, a resolution, a calibration verdict, a study answer: it reads the
    /// pairs, versions and gates that structural writes change, so it runs while no
    /// structural write does (many of these at once), and locks its own item's row.
    Item,
    /// An import, a change of pair or pool, a campaign's settings: alone.
    Structure,
    /// A large import: alone, and in a transaction of its own on SQLite (not in a
    /// savepoint of a batch, see `sqlite::Job::Alone`).
    Import,
}

enum Db {
    Sqlite(sqlite::Backend),
    Postgres(postgres::Backend),
}

struct Inner {
    db: Db,
    cache: cache::Caches,
    stamps: stamp::StampReads,
    metrics: Arc<crate::metrics::StoreMetrics>,
}

/// A cheap-to-clone handle on the database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// Dispatches a method to the backend in use.
macro_rules! on_backend {
    ($self:expr, $name:ident($($arg:expr),*)) => {
        match &$self.inner.db {
            Db::Sqlite(b) => b.$name($($arg),*).await,
            Db::Postgres(b) => b.$name($($arg),*).await,
        }
    };
}

/// Methods that the store only passes to its backend, with their documentation.
macro_rules! forward {
    ($($(#[doc = $doc:literal])* fn $name:ident(&self $(, $arg:ident: $t:ty)* $(,)?) -> $ret:ty;)*) => {
        impl Store {
            $(
                $(#[doc = $doc])*
                #[tracing::instrument(level = "debug", skip_all)]
                pub async fn $name(&self $(, $arg: $t)*) -> $ret {
                    on_backend!(self, $name($($arg),*))
                }
            )*
        }
    };
}

impl Store {
    /// The URL of the SQLite database file inside a data folder.
    pub fn sqlite_url(path: &Path) -> String {
        crate::config::sqlite_url(path)
    }

    /// Opens the database named by `url` and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store> {
        let metrics = Arc::new(crate::metrics::StoreMetrics::default());
        let db = if url.starts_with("sqlite:") {
            Db::Sqlite(sqlite::Backend::open(url, metrics.clone()).await?)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Db::Postgres(postgres::Backend::open(url, metrics.clone()).await?)
        } else {
            return Err(Error::Invalid(format!(
                "DATABASE_URL must start with sqlite:// or postgres:// (got `{}`)",
                url.split(':').next().unwrap_or_default()
            )));
        };
        let store = Store {
            inner: Arc::new(Inner {
                db,
                cache: cache::Caches::default(),
                stamps: stamp::StampReads::default(),
                metrics,
            }),
        };
        let key = store.media_key().await?;
        store.inner.cache.set_media_key(key);
        Ok(store)
    }

    /// What the database side measures (batches, commits, retries, pool waits).
    pub fn metrics(&self) -> &crate::metrics::StoreMetrics {
        &self.inner.metrics
    }

    pub fn backend(&self) -> Backend {
        match &self.inner.db {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// The study with this id (a copy at most a second old, as campaigns are; its
    /// sources never change, and a change of display forgets this server's copies).
    pub async fn study_by_id(&self, id: i64) -> Result<Study> {
        if let Some(s) = self.inner.cache.study(id) {
            return Ok(s);
        }
        let s: Study = on_backend!(self, study_by_id(id))?;
        self.inner.cache.put_study(&s);
        Ok(s)
    }

    /// Sets how a study's clips are shown (the strips must be drawn before).
    pub async fn set_study_display(
        &self,
        study: &Study,
        display: Display,
        frames: i64,
    ) -> Result<()> {
        let r: Result<()> = on_backend!(self, set_study_display(study, display, frames));
        self.inner.cache.forget_campaigns();
        r
    }

    /// The revocation stamp as a read begun after this call finds it: on SQLite read in
    /// place; on PostgreSQL shared between the requests that wait at the same moment
    /// (see `stamp`).
    async fn stamp(&self) -> Result<i64> {
        // SQLite: one row from the page cache on a connection of its own, in place.
        if let Db::Sqlite(b) = &self.inner.db {
            return b.revocation_stamp_now();
        }
        let (needed, start) = self.inner.stamps.want();
        if start {
            let store = self.clone();
            tokio::spawn(async move {
                loop {
                    let found: Result<i64> = store.revocation_stamp().await;
                    if !store.inner.stamps.finished(&found) {
                        break;
                    }
                }
            });
        }
        self.inner.stamps.wait(needed).await
    }

    /// The user an API token belongs to, if the token is known, not revoked and its
    /// account not disabled: from this server's copy only while no revocation (on any
    /// server, or by the CLI) has been committed since the copy was read.
    pub async fn user_by_token(&self, token: &str) -> Result<Option<User>> {
        let digest = crate::auth::token_digest(token);
        let stamp = self.stamp().await?;
        if let Some(u) = self.inner.cache.token(&digest, stamp) {
            return Ok(u);
        }
        let u: Option<User> = self.user_by_token_digest(&digest).await?;
        self.inner.cache.put_token(&digest, stamp, u.clone());
        Ok(u)
    }

    /// The file behind a participant's clip token (a copy never changes; kept in
    /// memory once read).
    pub async fn study_media(&self, token: &str) -> Result<Option<StudyMedia>> {
        if let Some(m) = self.inner.cache.study_media(token) {
            return Ok(Some(m));
        }
        let m: Option<StudyMedia> = on_backend!(self, study_media(token))?;
        if let Some(m) = &m {
            self.inner.cache.put_study_media(token, m);
        }
        Ok(m)
    }

    /// The studies `user` takes part in: those of the campaigns where they are a
    /// participant.
    pub async fn study_ids_for(&self, user: &User) -> Result<Vec<i64>> {
        let mut ids = Vec::new();
        for id in self.study_ids().await? {
            let study = self.study_by_id(id).await?;
            if user.role_in(study.campaign_id) == Some(Role::Participant) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// After an import: the planner's statistics, so that queues keep their indexes.
    pub(crate) async fn after_import(&self) {
        if let Err(e) = on_backend!(self, refresh_statistics()) {
            // The import is stored; only the planner's estimates wait for autovacuum.
            tracing::warn!(error = %e, "cannot refresh the planner's statistics after an import");
        }
    }

    /// The plan the database chooses for `sql` (its `$n` parameters bound to `binds`),
    /// one line per step.
    pub(crate) async fn explain(&self, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
        on_backend!(self, explain(sql, binds))
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<()> {
        on_backend!(self, ping())
    }

    pub async fn close(&self) {
        on_backend!(self, close())
    }

    /// A consistent copy of the database, taken while it serves (SQLite: `VACUUM
    /// INTO` one file; PostgreSQL: `pg_dump --format=custom`).
    pub async fn backup(&self, database_url: &str, out: &Path) -> Result<()> {
        if out.exists() {
            return Err(Error::field(
                "out",
                format!("{} exists; give a new file", out.display()),
            ));
        }
        on_backend!(self, backup(database_url, out))
    }

    /// How the writer has batched and committed, for the metrics.
    pub fn writer_stats(&self) -> Option<sqlite::WriterStats> {
        match &self.inner.db {
            Db::Sqlite(b) => Some(b.writer_stats()),
            Db::Postgres(_) => None,
        }
    }
}

/// Text stored with characters no field may hold (older versions stored NUL and other
/// control characters on SQLite): per table and column, how many values, and a few of
/// them, escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlText {
    pub table: String,
    pub column: String,
    pub rows: u64,
    pub examples: Vec<String>,
}

forward! {
    // Accounts.


    // The blind study.
    fn study(&self, campaign: &Campaign) -> Result<Option<Study>>;
    /// The campaign's study, or a clear error when it has none.
    fn require_study(&self, campaign: &Campaign) -> Result<Study>;
    /// Stores checked comparison sets, all or nothing, with the copies participants
    /// receive (prepared by `app::import_study`).
    fn import_study(&self, campaign_name: &str, sets: &CheckedSets, prepared: &[ServedCopy], display: Option<(Display, i64)>) -> Result<(StudyImportSummary, Study)>;
    /// The videos a study shows (their SHA-256), for drawing its strips.
    fn study_media_hashes(&self, study: &Study) -> Result<Vec<String>>;
    /// A participant's progress, drawing their order on their first visit.
    fn study_progress(&self, study: &Study, user: &User) -> Result<StudyProgress>;
    /// A participant's progress without drawing their order.
    fn study_overview(&self, study: &Study, user: &User) -> Result<StudyProgress>;
    /// The set at `position` of this participant's order, as they see it.
    fn study_set(&self, study: &Study, user: &User, position: i64) -> Result<ShownSet>;
    /// Records a participant's answer to the set at `position`, in one write; returns
    /// their progress after it (read in the same write).
    fn answer_study_set(&self, study: &Study, user: &User, position: i64, answer: &SetAnswer) -> Result<StudyProgress>;
    /// The file behind a participant's clip token.
    /// Sets and clips in the study.
    fn study_size(&self, study: &Study) -> Result<(i64, i64)>;
    /// Every participant with an order or answers, and how far they are.
    fn study_participants(&self, study: &Study) -> Result<Vec<ParticipantProgress>>;
    /// The raw material of Tables 14 and 15.
    fn study_data(&self, study: &Study) -> Result<StudyData>;
    /// Imports responses of an earlier study: all or nothing.
    fn import_responses(&self, campaign: &Campaign, rows: &[crate::domain::import::ResponseRow], problems: Vec<LineError>, what: &str) -> Result<ResponsesSummary>;
    /// Every study's id, oldest first: participants take part in all of them.
    fn study_ids(&self) -> Result<Vec<i64>>;

    // The human baseline.
    /// The baseline's participants of a campaign, by name.
    fn baseline_participants(&self, campaign: &Campaign) -> Result<Vec<String>>;
    /// How many people hold each role in a campaign, `(role, n)` by role.
    fn group_sizes(&self, campaign: &Campaign) -> Result<Vec<(String, i64)>>;
    /// Every question id of a campaign, any version and outcome.
    fn question_keys(&self, campaign: &Campaign) -> Result<Vec<String>>;
    /// Every answer of a campaign's baseline, by participant, question and presentation.
    fn baseline_answers(&self, campaign: &Campaign) -> Result<Vec<baseline::StoredAnswer>>;
    /// Brings in answers gathered elsewhere (checked against the retained questions
    /// first): all or nothing, final.
    fn import_baseline_answers(&self, campaign: &Campaign, rows: &[baseline::NewAnswer], what: &str) -> Result<baseline::AnswersSummary>;
    /// The campaign's baseline as taken in the browser, if it was set up.
    fn baseline(&self, campaign: &Campaign) -> Result<Option<baseline::Baseline>>;
    /// A baseline by its id (participants' URLs name it so).
    fn baseline_by_id(&self, id: i64) -> Result<baseline::Baseline>;
    /// Sets the baseline up (again, while nobody has begun): k, the seed, its questions.
    fn setup_baseline(&self, campaign: &Campaign, per_task: i64, seed: i64, questions: &[baseline::SetupQuestion]) -> Result<baseline::Baseline>;
    /// Draws a participant's presentations on their first visit; their progress.
    fn begin_baseline(&self, baseline: &baseline::Baseline, user: &User) -> Result<baseline::BaselineProgress>;
    /// A participant's progress, without drawing anything.
    fn baseline_progress(&self, baseline: &baseline::Baseline, user: &User) -> Result<baseline::BaselineProgress>;
    /// One presentation as its participant sees it.
    fn baseline_presentation(&self, baseline: &baseline::Baseline, user: &User, seq: i64) -> Result<baseline::ShownPresentation>;
    /// Records a participant's answer (final); their progress after it.
    fn answer_baseline(&self, baseline: &baseline::Baseline, user: &User, seq: i64, chosen: usize) -> Result<baseline::BaselineProgress>;
    /// The clip behind a participant's baseline token.
    fn baseline_media(&self, token: &str) -> Result<Option<baseline::BaselineMedia>>;
    /// Every participant who began, in the order they began.
    fn baseline_places(&self, baseline: &baseline::Baseline) -> Result<Vec<baseline::PlaceProgress>>;
    /// The served copies the baseline shows (their SHA-256).
    fn baseline_media_hashes(&self, baseline: &baseline::Baseline) -> Result<Vec<String>>;

    // Invitation links.
    /// What a part's participants read first, and whether links keep external ids.
    fn part_settings(&self, campaign_id: i64, part: Part) -> Result<invitations::PartSettings>;
    fn set_part_settings(&self, campaign: &Campaign, part: Part, settings: &invitations::PartSettings) -> Result<()>;
    /// Makes participants with links (token digests and completion codes given); their names.
    fn invite(&self, campaign: &Campaign, part: Part, links: &[(String, String)]) -> Result<Vec<String>>;
    /// A campaign's links, without their tokens.
    fn links(&self, campaign: &Campaign) -> Result<Vec<invitations::LinkLine>>;
    /// Whether a link (by its token's digest) would open, read without a write.
    fn link_opens(&self, digest: &str) -> Result<bool>;
    /// Exchanges a link for a new session or API token (its earlier ones end); none for
    /// a link unknown or revoked.
    fn join(&self, digest: &str, external_id: Option<&str>, credential: &invitations::Credential) -> Result<Option<(User, Part, Option<i64>)>>;
    /// Revokes a participant's link (their account is disabled; answers stay).
    fn revoke_link(&self, campaign: &Campaign, participant: &str) -> Result<bool>;
    /// A participant's completion code in a part, when they came by a link.
    fn completion_code(&self, user: &User, part: Part) -> Result<Option<String>>;
}
