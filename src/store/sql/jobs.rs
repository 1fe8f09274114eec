// Jobs: long operations started through the API, their state in one row each. (Shared
// SQL: compiled once per backend, see store/mod.rs.)

use crate::error::Result;
use crate::store::Lock;
use crate::store::jobs::{JobEnd, JobKind, JobRecord};
use crate::store::write;

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

impl Backend {
    pub(crate) async fn create_job(
        &self,
        id: &str,
        campaign: i64,
        kind: JobKind,
        requested_by: &str,
    ) -> Result<()> {
        let (id, requested_by) = (id.to_string(), requested_by.to_string());
        self.write_tx(Lock::Rows, move |tx| {
            let (id, requested_by) = (id.clone(), requested_by.clone());
            Box::pin(async move {
                write::jobs::create(tx, &id, campaign, kind, &requested_by).await
            })
        })
        .await
    }

    pub(crate) async fn job_beat(&self, id: &str, starting: bool) -> Result<bool> {
        let id = id.to_string();
        self.write_tx(Lock::Rows, move |tx| {
            let id = id.clone();
            Box::pin(async move { write::jobs::beat(tx, &id, starting).await })
        })
        .await
    }

    pub(crate) async fn finish_job(&self, id: &str, end: &JobEnd) -> Result<bool> {
        let (id, end) = (id.to_string(), end.clone());
        self.write_tx(Lock::Rows, move |tx| {
            let (id, end) = (id.clone(), end.clone());
            Box::pin(async move { write::jobs::finish(tx, &id, &end).await })
        })
        .await
    }

    pub(crate) async fn fail_stale_jobs(&self, cutoff: i64, error: &str) -> Result<u64> {
        let error = error.to_string();
        self.write_tx(Lock::Rows, move |tx| {
            let error = error.clone();
            Box::pin(async move { write::jobs::fail_stale(tx, cutoff, &error).await })
        })
        .await
    }

    pub(crate) async fn delete_job(&self, campaign: i64, id: &str) -> Result<bool> {
        let id = id.to_string();
        self.write_tx(Lock::Rows, move |tx| {
            let id = id.clone();
            Box::pin(async move { write::jobs::delete(tx, campaign, &id).await })
        })
        .await
    }

    pub(crate) async fn forget_jobs_before(&self, cutoff: i64) -> Result<Vec<String>> {
        self.write_tx(Lock::Rows, move |tx| {
            Box::pin(async move { write::jobs::forget_before(tx, cutoff).await })
        })
        .await
    }

    pub(crate) async fn job(&self, campaign: i64, id: &str) -> Result<Option<JobRecord>> {
        Ok(qa::<JobRecord>(job_select!("WHERE id = $1 AND campaign_id = $2"))
        .bind(id)
        .bind(campaign)
        .fetch_optional(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn jobs(&self, campaign: i64, limit: i64) -> Result<Vec<JobRecord>> {
        Ok(qa::<JobRecord>(job_select!(
            "WHERE campaign_id = $1 ORDER BY created_at DESC, id LIMIT $2"
        ))
        .bind(campaign)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
