//! Jobs: their rows, from queued to done or failed.

use super::{JobEnd, JobKind};
use crate::clock::now_micros;
use crate::error::Result;
use crate::store::db::{Tx, named, sql};
use crate::store::{Lock, Store};

impl Store {
    /// Stores a new job, queued.
    pub async fn create_job(
        &self,
        id: &str,
        campaign: i64,
        kind: JobKind,
        requested_by: &str,
    ) -> Result<()> {
        write_tx!(self, Lock::Rows, (id, requested_by), |tx| {
            create(tx, id, campaign, kind, requested_by).await
        })
    }

    /// A job starts (`starting`) or, running, is alive: false when it has ended already
    /// (marked failed as stale).
    pub async fn job_beat(&self, id: &str, starting: bool) -> Result<bool> {
        write_tx!(self, Lock::Rows, (id), |tx| beat(tx, id, starting).await)
    }

    /// How a job ended: false when it had ended already.
    pub async fn finish_job(&self, id: &str, end: &JobEnd) -> Result<bool> {
        write_tx!(self, Lock::Rows, (id, end), |tx| finish(tx, id, end).await)
    }

    /// Marks failed every unfinished job whose heartbeat is older than `cutoff`.
    pub async fn fail_stale_jobs(&self, cutoff: i64, error: &str) -> Result<u64> {
        write_tx!(self, Lock::Rows, (error), |tx| {
            fail_stale(tx, cutoff, error).await
        })
    }

    /// Forgets one finished job of a campaign; false when there is none.
    pub async fn delete_job(&self, campaign: i64, id: &str) -> Result<bool> {
        write_tx!(self, Lock::Rows, (id), |tx| delete(tx, campaign, id).await)
    }

    /// Forgets the oldest finished jobs with a file until the files left hold at most
    /// `budget` bytes (`keep`, the one just made, is kept whatever its size); returns
    /// their ids.
    pub async fn forget_job_files_over(
        &self,
        budget: i64,
        keep: Option<&str>,
    ) -> Result<Vec<String>> {
        let keep = keep.unwrap_or("");
        write_tx!(self, Lock::Rows, (keep), |tx| {
            forget_over(tx, budget, Some(keep.as_str()).filter(|k| !k.is_empty())).await
        })
    }

    /// Forgets every job finished before `cutoff`; returns their ids.
    pub async fn forget_jobs_before(&self, cutoff: i64) -> Result<Vec<String>> {
        write_tx!(self, Lock::Rows, (), |tx| forget_before(tx, cutoff).await)
    }
}

/// A new job, queued.
async fn create(
    tx: &mut impl Tx,
    id: &str,
    campaign: i64,
    kind: JobKind,
    requested_by: &str,
) -> Result<()> {
    let now = now_micros();
    tx.exec(
        sql!(
            "INSERT INTO jobs (id, campaign_id, kind, state, requested_by, created_at, heartbeat_at)
             VALUES (:id, :campaign, :kind, 'queued', :requested_by, :now, :now)"
        ),
        named! { id, campaign, kind: kind.as_str(), requested_by, now },
    )
    .await?;
    Ok(())
}

/// The job has started (or, still running, is alive): its heartbeat now. False when it
/// is no longer unfinished (marked failed as stale meanwhile).
async fn beat(tx: &mut impl Tx, id: &str, starting: bool) -> Result<bool> {
    let now = now_micros();
    let changed = if starting {
        tx.exec(
            sql!(
                "UPDATE jobs SET state = 'running', started_at = :now, heartbeat_at = :now
                 WHERE id = :id AND state = 'queued'"
            ),
            named! { id, now },
        )
        .await?
    } else {
        tx.exec(
            sql!(
                "UPDATE jobs SET heartbeat_at = :now
                 WHERE id = :id AND state IN ('queued', 'running')"
            ),
            named! { id, now },
        )
        .await?
    };
    Ok(changed == 1)
}

/// How the job ended; false when it had ended already (marked failed as stale).
async fn finish(tx: &mut impl Tx, id: &str, end: &JobEnd) -> Result<bool> {
    let now = now_micros();
    let changed = match end {
        JobEnd::Done { summary, file } => {
            tx.exec(
                sql!(
                    "UPDATE jobs SET state = 'done', finished_at = :now, heartbeat_at = :now,
                         summary = :summary, file_name = :file_name, file_bytes = :file_bytes,
                         file_sha256 = :file_sha256
                     WHERE id = :id AND state IN ('queued', 'running')"
                ),
                named! {
                    id, now,
                    summary: summary.as_deref(),
                    file_name: file.as_ref().map(|f| f.name.as_str()),
                    file_bytes: file.as_ref().map(|f| f.bytes),
                    file_sha256: file.as_ref().map(|f| f.sha256.as_str()),
                },
            )
            .await?
        }
        JobEnd::Failed { error } => {
            tx.exec(
                sql!(
                    "UPDATE jobs SET state = 'failed', finished_at = :now, heartbeat_at = :now,
                         error = :error
                     WHERE id = :id AND state IN ('queued', 'running')"
                ),
                named! { id, now, error: error.as_str() },
            )
            .await?
        }
    };
    Ok(changed == 1)
}

/// Marks failed every unfinished job whose heartbeat is older than `cutoff` (its server
/// stopped); returns how many.
async fn fail_stale(tx: &mut impl Tx, cutoff: i64, error: &str) -> Result<u64> {
    let now = now_micros();
    tx.exec(
        sql!(
            "UPDATE jobs SET state = 'failed', finished_at = :now, error = :error
             WHERE state IN ('queued', 'running') AND heartbeat_at < :cutoff"
        ),
        named! { now, error, cutoff },
    )
    .await
}

/// Forgets a finished job; returns whether there was one.
async fn delete(tx: &mut impl Tx, campaign: i64, id: &str) -> Result<bool> {
    let n = tx
        .exec(
            sql!(
                "DELETE FROM jobs WHERE id = :id AND campaign_id = :campaign
                 AND state IN ('done', 'failed')"
            ),
            named! { id, campaign },
        )
        .await?;
    Ok(n == 1)
}

/// Forgets every job that finished before `cutoff`; returns their ids (their files go).
async fn forget_before(tx: &mut impl Tx, cutoff: i64) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = tx
        .fetch(
            sql!(
                "DELETE FROM jobs WHERE state IN ('done', 'failed') AND finished_at < :cutoff
                 RETURNING id"
            ),
            named! { cutoff },
        )
        .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// Forgets, from the oldest, the jobs whose files do not fit in `budget` bytes beside
/// the newer ones (`keep` counts first and stays); returns their ids (their files go).
async fn forget_over(tx: &mut impl Tx, budget: i64, keep: Option<&str>) -> Result<Vec<String>> {
    let rows: Vec<(String, i64)> = tx
        .fetch(
            sql!(
                "SELECT id, file_bytes FROM jobs
                 WHERE state = 'done' AND file_bytes IS NOT NULL
                 ORDER BY finished_at DESC, id DESC"
            ),
            named! {},
        )
        .await?;
    let mut held: i64 = rows
        .iter()
        .filter(|r| Some(r.0.as_str()) == keep)
        .map(|r| r.1)
        .sum();
    let mut gone = Vec::new();
    let mut full = false;
    for (id, bytes) in rows {
        if Some(id.as_str()) == keep {
            continue;
        }
        // Once one does not fit, it and every older one go.
        full = full || held.saturating_add(bytes) > budget;
        if !full {
            held += bytes;
            continue;
        }
        tx.exec(
            sql!("DELETE FROM jobs WHERE id = :id AND state = 'done'"),
            named! { id: id.as_str() },
        )
        .await?;
        gone.push(id);
    }
    Ok(gone)
}
