//! Invitation links' writes: links made (with their participants' accounts), a link
//! exchanged for a session (the link's earlier sessions end: one browser at a time), a
//! link revoked, the settings participants' pages read.

use super::{accounts, base};
use crate::clock::now_micros;
use crate::domain::Part;
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, named, row, sql};
use crate::store::invitations::{Credential, LinkLine, PartSettings};
use crate::store::{Lock, Store};
use std::sync::Arc;

impl Store {
    /// What a part's participants read first, and whether links keep external ids.
    pub async fn part_settings(&self, campaign_id: i64, part: Part) -> Result<PartSettings> {
        read_tx!(self, |c| settings(c, campaign_id, part).await)
    }

    pub async fn set_part_settings(
        &self,
        campaign: &Campaign,
        part: Part,
        settings: &PartSettings,
    ) -> Result<()> {
        let campaign = campaign.id;
        write_tx!(self, Lock::Structure, (settings), |tx| {
            set_settings(tx, campaign, part, settings).await
        })
    }

    /// Makes participants with links (token digests and completion codes given); their
    /// names.
    pub async fn invite(
        &self,
        campaign: &Campaign,
        part: Part,
        links: &[(String, String)],
    ) -> Result<Vec<String>> {
        let (name, links) = (&campaign.name, Arc::new(links.to_vec()));
        write_tx!(self, Lock::Structure, (name, links), |tx| {
            invite(tx, name, part, links).await
        })
    }

    /// A campaign's links, without their tokens.
    pub async fn links(&self, campaign: &Campaign) -> Result<Vec<LinkLine>> {
        read_tx!(self, long, |c| links(c, campaign.id).await)
    }

    /// Whether a link (by its token's digest) would open, read without a write.
    pub async fn link_opens(&self, digest: &str) -> Result<bool> {
        read_tx!(self, |c| opens(c, digest).await)
    }

    /// Exchanges a link for a new session or API token (its earlier ones end); none for
    /// a link unknown or revoked.
    pub async fn join(
        &self,
        digest: &str,
        external_id: Option<&str>,
        credential: &Credential,
    ) -> Result<Option<(User, Part, Option<i64>)>> {
        let external = external_id.map(str::to_string);
        write_tx!(self, Lock::Rows, (digest, external, credential), |tx| {
            join(tx, digest, external.as_deref(), credential).await
        })
    }

    /// Revokes a participant's link (their account is disabled; answers stay).
    pub async fn revoke_link(&self, campaign: &Campaign, participant: &str) -> Result<bool> {
        let campaign = campaign.id;
        write_tx!(self, Lock::Structure, (participant), |tx| {
            revoke(tx, campaign, participant).await
        })
    }

    /// A participant's completion code in a part, when they came by a link.
    pub async fn completion_code(&self, user: &User, part: Part) -> Result<Option<String>> {
        read_tx!(self, |c| completion_code(c, user.id, part).await)
    }
}

/// The password hash of an account that only a link opens: no password verifies it.
pub(crate) const NO_PASSWORD: &str = "!invitation-only";

/// The settings of a campaign's part (the defaults when none are stored).
pub(crate) async fn settings(tx: &mut impl Tx, campaign: i64, part: Part) -> Result<PartSettings> {
    let row: Option<(String, i64)> = tx
        .fetch_opt(
            sql!(
                "SELECT consent, keep_external_id FROM part_settings
                 WHERE campaign_id = :campaign AND part = :part"
            ),
            named! { campaign, part: part.as_str() },
        )
        .await?;
    Ok(row
        .map(|(consent, keep)| PartSettings {
            consent,
            keep_external_id: keep != 0,
        })
        .unwrap_or_default())
}

pub(crate) async fn set_settings(
    tx: &mut impl Tx,
    campaign: i64,
    part: Part,
    s: &PartSettings,
) -> Result<()> {
    tx.exec(
        sql!(
            "INSERT INTO part_settings (campaign_id, part, consent, keep_external_id)
             VALUES (:campaign, :part, :consent, :keep)
             ON CONFLICT (campaign_id, part) DO UPDATE
             SET consent = excluded.consent, keep_external_id = excluded.keep_external_id"
        ),
        named! { campaign, part: part.as_str(), consent: s.consent.as_str(), keep: i64::from(s.keep_external_id) },
    )
    .await?;
    Ok(())
}

/// Makes `links.len()` participants of the part, each with an account that only its
/// link opens (named `{part}-NNN`, the next numbers free) and its link: `links` gives
/// each one's token digest and completion code. Returns the names, in order.
pub(crate) async fn invite(
    tx: &mut impl Tx,
    campaign: &str,
    part: Part,
    links: &[(String, String)],
) -> Result<Vec<String>> {
    let c = base::existing_campaign(tx, campaign).await?;
    let mut names = Vec::with_capacity(links.len());
    let mut n: i64 = tx
        .scalar(
            sql!("SELECT COUNT(*) FROM invitations WHERE part = :part"),
            named! { part: part.as_str() },
        )
        .await?;
    let now = now_micros();
    for (digest, code) in links {
        let name = loop {
            n += 1;
            let name = format!("{}-{n:03}", part.as_str());
            if base::user_by_name(tx, &name).await?.is_none() {
                break name;
            }
        };
        let user =
            accounts::add_user(tx, &name, part.role(), NO_PASSWORD, Some(&c.name), None).await?;
        tx.exec(
            sql!(
                "INSERT INTO invitations (campaign_id, part, participant_id, token_hash, completion_code, created_at)
                 VALUES (:campaign, :part, :user, :digest, :code, :now)"
            ),
            named! { campaign: c.id, part: part.as_str(), user: user.id, digest: digest.as_str(), code: code.as_str(), now },
        )
        .await?;
        names.push(name);
    }
    Ok(names)
}

row! {
    struct LinkRow {
        participant: String,
        part: String,
        created_at: i64,
        first_used_at: Option<i64>,
        revoked_at: Option<i64>,
        has_external: i64,
        completion_code: String,
    }
}

/// A campaign's links, by participant.
pub(crate) async fn links(tx: &mut impl Tx, campaign: i64) -> Result<Vec<LinkLine>> {
    let rows: Vec<LinkRow> = tx
        .fetch(
            sql!(
                "SELECT u.name AS participant, i.part, i.created_at, i.first_used_at, i.revoked_at,
                        CASE WHEN i.external_id IS NULL THEN 0 ELSE 1 END AS has_external,
                        i.completion_code
                 FROM invitations i JOIN users u ON u.id = i.participant_id
                 WHERE i.campaign_id = :campaign ORDER BY i.part, u.name"
            ),
            named! { campaign },
        )
        .await?;
    rows.into_iter()
        .map(|r| {
            Ok(LinkLine {
                participant: r.participant,
                part: Part::parse(&r.part).map_err(Error::Internal)?,
                created_at: r.created_at,
                first_used_at: r.first_used_at,
                revoked_at: r.revoked_at,
                external_id: r.has_external != 0,
                completion_code: r.completion_code,
            })
        })
        .collect()
}

/// Whether a link (by its token's digest) would open: it exists, is not revoked, and its
/// account is not disabled. A read, so that made-up tokens never reach the writer.
pub(crate) async fn opens(tx: &mut impl Tx, digest: &str) -> Result<bool> {
    let n: i64 = tx
        .scalar(
            sql!(
                "SELECT COUNT(*) FROM invitations i JOIN users u ON u.id = i.participant_id
                 WHERE i.token_hash = :digest AND i.revoked_at IS NULL AND u.disabled_at IS NULL"
            ),
            named! { digest },
        )
        .await?;
    Ok(n > 0)
}

row! {
    struct JoinRow {
        id: i64,
        campaign_id: i64,
        part: String,
        participant_id: i64,
        external_id: Option<String>,
        revoked_at: Option<i64>,
    }
}

/// Exchanges a link (by its token's digest) for a new session or API token: its
/// participant's other sessions and tokens end in the same write (a link is one browser
/// or client at a time), the first visit is noted, and an external participant id is
/// kept when the part's setting allows it and none is stored. `None` for a link that
/// does not exist or was revoked, or whose account is disabled.
pub(crate) async fn join(
    tx: &mut impl Tx,
    digest: &str,
    external_id: Option<&str>,
    credential: &Credential,
) -> Result<Option<(User, Part, Option<i64>)>> {
    let Some(link) = tx
        .fetch_opt::<JoinRow>(
            sql!(
                "SELECT i.id, i.campaign_id, i.part, i.participant_id, i.external_id, i.revoked_at
                 FROM invitations i JOIN users u ON u.id = i.participant_id
                 WHERE i.token_hash = :digest AND u.disabled_at IS NULL"
            ),
            named! { digest },
        )
        .await?
    else {
        return Ok(None);
    };
    if link.revoked_at.is_some() {
        return Ok(None);
    }
    let part = Part::parse(&link.part).map_err(Error::Internal)?;
    let keep = settings(tx, link.campaign_id, part).await?.keep_external_id;
    let external = external_id.filter(|_| keep && link.external_id.is_none());
    tx.exec(
        sql!(
            "UPDATE invitations
             SET first_used_at = COALESCE(first_used_at, :now),
                 external_id = COALESCE(external_id, :external)
             WHERE id = :id"
        ),
        named! { now: now_micros(), external, id: link.id },
    )
    .await?;
    accounts::access_changed(tx).await?;
    tx.exec(
        sql!("DELETE FROM sessions WHERE user_id = :user"),
        named! { user: link.participant_id },
    )
    .await?;
    let now = now_micros();
    tx.exec(
        sql!(
            "UPDATE api_tokens SET revoked_at = :now WHERE user_id = :user AND revoked_at IS NULL"
        ),
        named! { now, user: link.participant_id },
    )
    .await?;
    match credential {
        Credential::Session { hash, csrf } => {
            super::sessions::create(tx, link.participant_id, hash, csrf).await?;
        }
        Credential::Token { digest } => {
            tx.exec(
                sql!(
                    "INSERT INTO api_tokens (user_id, token_hash, label, created_at)
                     VALUES (:user, :digest, 'invitation', :now)"
                ),
                named! { user: link.participant_id, digest: digest.as_str(), now },
            )
            .await?;
        }
    }
    let user = base::user_by_id(tx, link.participant_id)
        .await?
        .ok_or_else(|| Error::Internal("a link's participant is gone".into()))?;
    let target = match part {
        Part::Study => super::study::study_of(tx, link.campaign_id)
            .await?
            .map(|s| s.id),
        Part::Baseline => super::baseline::baseline_of(tx, link.campaign_id)
            .await?
            .map(|b| b.id),
    };
    Ok(Some((user, part, target)))
}

/// Revokes a participant's link: it opens nothing from now on, and the sessions it
/// made end (the account is disabled; its answers stay). False when it was revoked.
pub(crate) async fn revoke(tx: &mut impl Tx, campaign: i64, participant: &str) -> Result<bool> {
    let id: Option<i64> = tx
        .scalar_opt(
            sql!(
                "SELECT i.id FROM invitations i JOIN users u ON u.id = i.participant_id
                 WHERE i.campaign_id = :campaign AND u.name = :participant"
            ),
            named! { campaign, participant },
        )
        .await?;
    let Some(id) = id else {
        return Err(Error::NotFound(format!(
            "`{participant}` has no link in this campaign"
        )));
    };
    let n = tx
        .exec(
            sql!("UPDATE invitations SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL"),
            named! { now: now_micros(), id },
        )
        .await?;
    accounts::set_disabled(tx, participant, true).await?;
    Ok(n > 0)
}

/// A participant's completion code in a part, when they came by a link.
pub(crate) async fn completion_code(
    tx: &mut impl Tx,
    user: i64,
    part: Part,
) -> Result<Option<String>> {
    tx.scalar_opt(
        sql!(
            "SELECT completion_code FROM invitations
             WHERE participant_id = :user AND part = :part AND revoked_at IS NULL"
        ),
        named! { user, part: part.as_str() },
    )
    .await
}
