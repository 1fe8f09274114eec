// The human baseline: its participants, answers brought in, answers read back.
// (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::error::Result;
use crate::store::Lock;
use crate::domain::Part;
use crate::store::accounts::User;
use crate::store::baseline::{
    AnswersSummary, Baseline, BaselineMedia, BaselineProgress, NewAnswer, PlaceProgress,
    SetupQuestion, ShownPresentation, StoredAnswer,
};
use crate::store::catalog::Campaign;
use crate::store::invitations::{LinkLine, PartSettings};
use crate::store::write;
use crate::store::invitations::Credential;
use std::sync::Arc;

impl Backend {
    pub(crate) async fn baseline_participants(&self, campaign: &Campaign) -> Result<Vec<String>> {
        Ok(write::baseline::participants(&mut *self.read().await?, campaign.id)
            .await?
            .into_iter()
            .map(|(_, name)| name)
            .collect())
    }

    pub(crate) async fn group_sizes(&self, campaign: &Campaign) -> Result<Vec<(String, i64)>> {
        write::baseline::group_sizes(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn question_keys(&self, campaign: &Campaign) -> Result<Vec<String>> {
        write::baseline::question_keys(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn baseline_answers(&self, campaign: &Campaign) -> Result<Vec<StoredAnswer>> {
        write::baseline::answers(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn import_baseline_answers(
        &self,
        campaign: &Campaign,
        rows: &[NewAnswer],
        what: &str,
    ) -> Result<AnswersSummary> {
        let (campaign, rows, what) = (campaign.id, Arc::new(rows.to_vec()), what.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let (rows, what) = (rows.clone(), what.clone());
            Box::pin(async move { write::baseline::import_answers(tx, campaign, &rows, &what).await })
        })
        .await
    }

    pub(crate) async fn baseline(&self, campaign: &Campaign) -> Result<Option<Baseline>> {
        write::baseline::baseline_of(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn baseline_by_id(&self, id: i64) -> Result<Baseline> {
        write::baseline::baseline_by_id(&mut *self.read().await?, id).await
    }

    pub(crate) async fn setup_baseline(
        &self,
        campaign: &Campaign,
        per_task: i64,
        seed: i64,
        questions: &[SetupQuestion],
    ) -> Result<Baseline> {
        let (campaign, questions) = (campaign.id, Arc::new(questions.to_vec()));
        self.write_tx(Lock::Structure, move |tx| {
            let questions = questions.clone();
            Box::pin(async move {
                write::baseline::setup(tx, campaign, per_task, seed, &questions).await
            })
        })
        .await
    }

    pub(crate) async fn begin_baseline(
        &self,
        baseline: &Baseline,
        user: &User,
    ) -> Result<BaselineProgress> {
        let (baseline, user) = (baseline.clone(), user.clone());
        self.write_tx(Lock::Structure, move |tx| {
            let (baseline, user) = (baseline.clone(), user.clone());
            Box::pin(async move {
                write::baseline::begin(tx, &baseline, &user).await?;
                write::baseline::progress(tx, &baseline, &user).await
            })
        })
        .await
    }

    pub(crate) async fn baseline_progress(
        &self,
        baseline: &Baseline,
        user: &User,
    ) -> Result<BaselineProgress> {
        write::baseline::progress(&mut *self.read().await?, baseline, user).await
    }

    pub(crate) async fn baseline_presentation(
        &self,
        baseline: &Baseline,
        user: &User,
        seq: i64,
    ) -> Result<ShownPresentation> {
        write::baseline::presentation(&mut *self.read().await?, baseline, user, seq).await
    }

    pub(crate) async fn answer_baseline(
        &self,
        baseline: &Baseline,
        user: &User,
        seq: i64,
        chosen: usize,
    ) -> Result<BaselineProgress> {
        let (baseline, user) = (baseline.clone(), user.clone());
        self.write_tx(Lock::Item, move |tx| {
            let (baseline, user) = (baseline.clone(), user.clone());
            Box::pin(async move { write::baseline::answer(tx, &baseline, &user, seq, chosen).await })
        })
        .await
    }

    pub(crate) async fn baseline_media(&self, token: &str) -> Result<Option<BaselineMedia>> {
        write::baseline::media(&mut *self.read().await?, token).await
    }

    pub(crate) async fn baseline_places(&self, baseline: &Baseline) -> Result<Vec<PlaceProgress>> {
        write::baseline::places(&mut *self.read().await?, baseline).await
    }

    pub(crate) async fn baseline_media_hashes(&self, baseline: &Baseline) -> Result<Vec<String>> {
        write::baseline::media_hashes(&mut *self.read().await?, baseline).await
    }

    pub(crate) async fn part_settings(&self, campaign_id: i64, part: Part) -> Result<PartSettings> {
        write::invitations::settings(&mut *self.read().await?, campaign_id, part).await
    }

    pub(crate) async fn set_part_settings(
        &self,
        campaign: &Campaign,
        part: Part,
        settings: &PartSettings,
    ) -> Result<()> {
        let (campaign, settings) = (campaign.id, settings.clone());
        self.write_tx(Lock::Structure, move |tx| {
            let settings = settings.clone();
            Box::pin(async move { write::invitations::set_settings(tx, campaign, part, &settings).await })
        })
        .await
    }

    pub(crate) async fn invite(
        &self,
        campaign: &Campaign,
        part: Part,
        links: &[(String, String)],
    ) -> Result<Vec<String>> {
        let (campaign, links) = (campaign.name.clone(), Arc::new(links.to_vec()));
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign, links) = (campaign.clone(), links.clone());
            Box::pin(async move { write::invitations::invite(tx, &campaign, part, &links).await })
        })
        .await
    }

    pub(crate) async fn links(&self, campaign: &Campaign) -> Result<Vec<LinkLine>> {
        write::invitations::links(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn link_opens(&self, digest: &str) -> Result<bool> {
        write::invitations::opens(&mut *self.read().await?, digest).await
    }

    pub(crate) async fn join(
        &self,
        digest: &str,
        external_id: Option<&str>,
        credential: &Credential,
    ) -> Result<Option<(User, Part, Option<i64>)>> {
        let (digest, external, credential) = (
            digest.to_string(),
            external_id.map(str::to_string),
            credential.clone(),
        );
        self.write_tx(Lock::Rows, move |tx| {
            let (digest, external, credential) = (digest.clone(), external.clone(), credential.clone());
            Box::pin(async move {
                write::invitations::join(tx, &digest, external.as_deref(), &credential).await
            })
        })
        .await
    }

    pub(crate) async fn revoke_link(&self, campaign: &Campaign, participant: &str) -> Result<bool> {
        let (campaign, participant) = (campaign.id, participant.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let participant = participant.clone();
            Box::pin(async move { write::invitations::revoke(tx, campaign, &participant).await })
        })
        .await
    }

    pub(crate) async fn completion_code(&self, user: &User, part: Part) -> Result<Option<String>> {
        write::invitations::completion_code(&mut *self.read().await?, user.id, part).await
    }
}
