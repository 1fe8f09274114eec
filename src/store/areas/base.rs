//! The lookups that every write shares, called downward only: users by name or id, a
//! campaign (made on first use, with its tasks and pairs), the known verdicts of
//! calibration items. Reads call them too, through the read connection's [`Tx`].

use super::gates;
use crate::clock::now_micros;
use crate::domain::check_identifier;
use crate::domain::rules::CheckedVerdict;
use crate::domain::taxonomy::Taxonomy;
use crate::error::{Error, Result};
use crate::store::accounts::{User, UserRow, one_user, user_columns, user_joins};
use crate::store::catalog::{Campaign, Settings};
use crate::store::db::{Tx, Value, named, row, sql};
use std::sync::Arc;

pub(crate) async fn user_by_name(tx: &mut impl Tx, name: &str) -> Result<Option<User>> {
    one_user(
        tx.fetch::<UserRow>(
            sql!(concat!(
                "SELECT ",
                user_columns!(),
                " FROM users u ",
                user_joins!(),
                " WHERE u.name = :name"
            )),
            named! { name },
        )
        .await?,
    )
}

pub(crate) async fn user_by_id(tx: &mut impl Tx, id: i64) -> Result<Option<User>> {
    one_user(
        tx.fetch::<UserRow>(
            sql!(concat!(
                "SELECT ",
                user_columns!(),
                " FROM users u ",
                user_joins!(),
                " WHERE u.id = :id"
            )),
            named! { id },
        )
        .await?,
    )
}

/// A user's name, or `user #id` for one that is not there.
pub(crate) async fn user_name(tx: &mut impl Tx, id: i64) -> Result<String> {
    Ok(user_by_id(tx, id)
        .await?
        .map_or_else(|| format!("user #{id}"), |u| u.name))
}

row! {
    struct CampaignRow {
        id: i64,
        name: String,
        taxonomy: String,
        target_per_task: i64,
        calibration_threshold: f64,
        calibration_min_items: i64,
        blind_key_check: i64,
        known_window: i64,
        known_rate: f64,
        revision: i64,
        protocol_version: i64,
    }
}

/// A stored taxonomy (a campaign's, or one version of its protocol), read back. One stored
/// before protocols carried reasons has VGenST-Bench's, which every campaign reviewed by
/// then.
pub(crate) fn stored_taxonomy(json: &str, campaign: &str) -> Result<Taxonomy> {
    let mut taxonomy: Taxonomy = serde_json::from_str(json).map_err(|e| {
        Error::Internal(format!(
            "stored taxonomy of `{campaign}` is unreadable: {e}"
        ))
    })?;
    if taxonomy.reasons.is_empty() {
        taxonomy.reasons = Taxonomy::vgenst().reasons;
    }
    Ok(taxonomy)
}

/// The taxonomy of version `version` of campaign `campaign_id`'s protocol.
pub(crate) async fn protocol_at(
    tx: &mut impl Tx,
    campaign_id: i64,
    version: i64,
) -> Result<Taxonomy> {
    let (json,): (String,) = tx
        .fetch_opt(
            sql!(
                "SELECT taxonomy FROM campaign_protocols
                 WHERE campaign_id = :campaign AND version = :version"
            ),
            named! { campaign: campaign_id, version },
        )
        .await?
        .ok_or_else(|| {
            Error::Internal(format!(
                "campaign #{campaign_id} has no stored protocol version {version}"
            ))
        })?;
    stored_taxonomy(
        &json,
        &format!("campaign #{campaign_id}, version {version}"),
    )
}

/// The protocol a write checks by: the version the campaign's row names now (`stored`,
/// read in the write's own statements), which is the caller's copy (`campaign`, up to a
/// second old) unless the protocol changed since; then that version is read.
pub(crate) async fn protocol_in_force<'a>(
    tx: &mut impl Tx,
    campaign: &'a Campaign,
    stored: i64,
) -> Result<std::borrow::Cow<'a, Taxonomy>> {
    if stored == campaign.protocol_version {
        return Ok(std::borrow::Cow::Borrowed(&campaign.taxonomy));
    }
    protocol_at(tx, campaign.id, stored)
        .await
        .map(std::borrow::Cow::Owned)
}

/// Keeps `taxonomy` as version `version` of the campaign's protocol.
pub(crate) async fn keep_protocol(
    tx: &mut impl Tx,
    campaign_id: i64,
    version: i64,
    json: &str,
) -> Result<()> {
    tx.exec(
        sql!(
            "INSERT INTO campaign_protocols (campaign_id, version, taxonomy, set_at)
             VALUES (:campaign, :version, :taxonomy, :now)"
        ),
        named! { campaign: campaign_id, version, taxonomy: json, now: now_micros() },
    )
    .await?;
    Ok(())
}

impl TryFrom<CampaignRow> for Campaign {
    type Error = Error;
    fn try_from(r: CampaignRow) -> Result<Campaign> {
        let taxonomy = stored_taxonomy(&r.taxonomy, &r.name)?;
        Ok(Campaign {
            id: r.id,
            name: r.name,
            taxonomy: Arc::new(taxonomy),
            settings: Settings {
                target_per_task: r.target_per_task,
                calibration_threshold: r.calibration_threshold,
                calibration_min_items: r.calibration_min_items,
                blind_key_check: r.blind_key_check == 1,
                known_window: r.known_window,
                known_rate: r.known_rate,
            },
            revision: r.revision,
            protocol_version: r.protocol_version,
        })
    }
}

pub(crate) async fn campaign(tx: &mut impl Tx, name: &str) -> Result<Option<Campaign>> {
    tx.fetch_opt::<CampaignRow>(
        sql!(
            "SELECT id, name, taxonomy, target_per_task, calibration_threshold,
                    calibration_min_items, blind_key_check, known_window, known_rate, revision,
                    protocol_version
             FROM campaigns WHERE name = :name"
        ),
        named! { name },
    )
    .await?
    .map(Campaign::try_from)
    .transpose()
}

/// The one campaign that exists without being created: the commands and pages that name
/// no campaign use it, and its first write creates it with the default protocol
/// (VGenST-Bench's) unless it was created with another before.
pub const DEFAULT_CAMPAIGN: &str = "default";

/// A campaign that does not exist: named, with what creates one. Never a silent
/// fall-back to another protocol.
pub(crate) fn no_campaign(name: &str) -> Error {
    if name == DEFAULT_CAMPAIGN {
        return Error::NotFound(format!(
            "the campaign `{name}` has nothing yet: import a manifest into it first (`tandem import FILE`), or create it with `tandem campaign create {name} --protocol FILE`"
        ));
    }
    Error::NotFound(format!(
        "no campaign named `{name}`: create it first with `tandem campaign create {name} --protocol FILE` (or on the admin's Campaigns page)"
    ))
}

/// The campaign named `name`; an error naming it when there is none, except for
/// [`DEFAULT_CAMPAIGN`], which is created on its first use.
pub(crate) async fn existing_campaign(tx: &mut impl Tx, name: &str) -> Result<Campaign> {
    match campaign(tx, name).await? {
        Some(found) => Ok(found),
        None if name == DEFAULT_CAMPAIGN => {
            create_campaign(tx, DEFAULT_CAMPAIGN, Taxonomy::vgenst(), None).await
        }
        None => Err(no_campaign(name)),
    }
}

/// Creates the campaign `name` with the taxonomy of its protocol: its tasks in the
/// protocol's order, each with its attributes, and the pairs in force; `target` (the
/// protocol's retained clips per task) replaces the default target. A campaign of that
/// name is a conflict.
pub(crate) async fn create_campaign(
    tx: &mut impl Tx,
    name: &str,
    taxonomy: Taxonomy,
    target: Option<i64>,
) -> Result<Campaign> {
    check_identifier("campaign name", name).map_err(|m| Error::field("campaign", m))?;
    if campaign(tx, name).await?.is_some() {
        return Err(Error::Conflict(format!("a campaign named `{name}` exists")));
    }
    let json = serde_json::to_string(&taxonomy)
        .map_err(|e| Error::fault("taxonomy does not serialise", e))?;
    let id: i64 = tx
        .scalar(
            sql!(
                "INSERT INTO campaigns (name, taxonomy, created_at)
                 VALUES (:name, :taxonomy, :now) RETURNING id"
            ),
            named! { name, taxonomy: &json, now: now_micros() },
        )
        .await?;
    let mut settings = Settings::default();
    if let Some(target) = target {
        tx.exec(
            sql!("UPDATE campaigns SET target_per_task = :target WHERE id = :campaign"),
            named! { target, campaign: id },
        )
        .await?;
        settings.target_per_task = target;
    }
    keep_protocol(tx, id, 1, &json).await?;
    insert_tasks(tx, id, &taxonomy.tasks, 0).await?;
    gates::refresh_pairs(tx, id).await?;
    Ok(Campaign {
        id,
        name: name.to_string(),
        taxonomy: Arc::new(taxonomy),
        settings,
        revision: 0,
        protocol_version: 1,
    })
}

/// Inserts a campaign's `tasks`, the first at `first_position` (its place in the pairing
/// rule), each with its attributes as JSON.
pub(crate) async fn insert_tasks(
    tx: &mut impl Tx,
    campaign_id: i64,
    tasks: &[crate::domain::taxonomy::TaskDef],
    first_position: usize,
) -> Result<()> {
    if tasks.is_empty() {
        return Ok(());
    }
    let attributes: Vec<String> = tasks
        .iter()
        .map(|t| serde_json::json!(t.all_attributes()).to_string())
        .collect();
    let rows: Vec<Vec<Value<'_>>> = tasks
        .iter()
        .zip(&attributes)
        .enumerate()
        .map(|(i, (t, a))| {
            vec![
                campaign_id.into(),
                i64::try_from(first_position + i).unwrap_or(i64::MAX).into(),
                t.code.as_str().into(),
                t.name.as_str().into(),
                a.as_str().into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO tasks (campaign_id, position, code, name, attributes)",
        "id",
        &rows,
    )
    .await?;
    Ok(())
}

/// Stores the known verdicts of calibration items: (item, verdict) pairs.
pub(crate) async fn insert_keys(tx: &mut impl Tx, keys: &[(i64, &CheckedVerdict)]) -> Result<()> {
    let reasons: Vec<String> = keys
        .iter()
        .map(|(_, k)| crate::domain::Reason::join(&k.reasons))
        .collect();
    let rows: Vec<Vec<Value<'_>>> = keys
        .iter()
        .zip(&reasons)
        .map(|((item, k), r)| {
            let flaw = k.flaw.map(|f| f.columns());
            vec![
                (*item).into(),
                k.verdict.as_str().into(),
                r.as_str().into(),
                k.note.as_str().into(),
                flaw.map(|f| f.0).into(),
                flaw.map(|f| f.1).into(),
                flaw.map(|f| f.2).into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO calibration_keys (item_id, verdict, reasons, note, flaw_unit, flaw_from, flaw_to)",
        "item_id",
        &rows,
    )
    .await?;
    Ok(())
}
