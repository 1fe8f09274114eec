//! A job's row, and a campaign's newest jobs.

use super::JobRecord;
use crate::error::Result;
use crate::store::Store;
use crate::store::db::{Tx, named, sql};

macro_rules! job_select {
    ($rest:literal) => {
        concat!(
            "SELECT id, campaign_id, kind, state, requested_by, created_at, started_at,
                 heartbeat_at, finished_at, summary, error, file_name, file_bytes, file_sha256
             FROM jobs ",
            $rest
        )
    };
}

impl Store {
    /// One job of a campaign.
    pub async fn job(&self, campaign: i64, id: &str) -> Result<Option<JobRecord>> {
        read_tx!(self, |c| job(c, campaign, id).await)
    }

    /// A campaign's newest jobs, at most `limit`.
    pub async fn jobs(&self, campaign: i64, limit: i64) -> Result<Vec<JobRecord>> {
        read_tx!(self, |c| jobs(c, campaign, limit).await)
    }
}

async fn job(c: &mut impl Tx, campaign: i64, id: &str) -> Result<Option<JobRecord>> {
    c.fetch_opt(
        sql!(job_select!("WHERE id = :id AND campaign_id = :campaign")),
        named! { id, campaign },
    )
    .await
}

async fn jobs(c: &mut impl Tx, campaign: i64, limit: i64) -> Result<Vec<JobRecord>> {
    c.fetch(
        sql!(job_select!(
            "WHERE campaign_id = :campaign ORDER BY created_at DESC, id LIMIT :limit"
        )),
        named! { campaign, limit },
    )
    .await
}
