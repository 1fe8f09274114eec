//! Records brought in: a file of decisions or of resolutions, applied row after row in
//! file order in one write, each row through the same road as a verdict or a
//! resolution made in the browser. All or nothing: every problem is listed with its
//! line and field, and a file with any stores nothing.

mod audit;
mod ops;

use super::base;
use super::review::{Target, record_verdict, resolve};
use crate::domain::records::{DecisionRow, ResolutionRow};
use crate::domain::{Origin, Role, Stage};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::Tx;
use crate::store::records::BulkSummary;
use crate::store::review::{Dedupe, Path, VerdictRequest, VersionRule};
use std::collections::HashMap;

/// Most problems listed for one refused file.
const MAX_PROBLEMS: usize = 200;

/// The rows of one file.
#[derive(Clone, Copy)]
pub(crate) enum Rows<'a> {
    Decisions(&'a [DecisionRow]),
    Resolutions(&'a [ResolutionRow]),
}

impl<'a> Rows<'a> {
    fn len(self) -> usize {
        match self {
            Rows::Decisions(r) => r.len(),
            Rows::Resolutions(r) => r.len(),
        }
    }

    /// Who acts in a file of this kind: their role and the column naming them.
    fn actor(self) -> (Role, &'static str) {
        match self {
            Rows::Decisions(_) => (Role::Validator, "validator"),
            Rows::Resolutions(_) => (Role::Author, "author"),
        }
    }

    /// Row `i`: its line, the person it names, its stage, item and version.
    fn row(self, i: usize) -> (usize, &'a str, Stage, &'a str, Option<i64>) {
        match self {
            Rows::Decisions(r) => (
                r[i].line,
                &r[i].validator,
                r[i].stage,
                &r[i].item_id,
                r[i].clip_version,
            ),
            Rows::Resolutions(r) => (r[i].line, &r[i].author, r[i].stage, &r[i].item_id, None),
        }
    }
}

/// The people a file names, each looked up once.
struct People {
    cache: HashMap<String, Option<User>>,
    role: Role,
    /// The campaign whose role they must hold.
    campaign: i64,
}

impl People {
    async fn get(
        &mut self,
        tx: &mut impl Tx,
        name: &str,
    ) -> Result<std::result::Result<User, String>> {
        if !self.cache.contains_key(name) {
            let u = base::user_by_name(tx, name).await?;
            self.cache.insert(name.to_string(), u);
        }
        Ok(match self.cache.get(name).cloned().flatten() {
            None => Err(format!("no user named `{name}`")),
            Some(u) if u.role_in(self.campaign) != Some(self.role) => Err(format!(
                "`{name}` is not {} of this campaign ({})",
                self.role.with_article(),
                u.role_in(self.campaign)
                    .map_or_else(|| "no role here".to_string(), |r| r.with_article())
            )),
            Some(u) => Ok(u),
        })
    }
}

/// Applies every row of a file in order, in the caller's write; `problems` carries what
/// was already wrong with the file. With any problem, the file is refused whole.
pub(crate) async fn import(
    tx: &mut impl Tx,
    campaign: &Campaign,
    rows: Rows<'_>,
    mut problems: Vec<LineError>,
    what: &str,
) -> Result<BulkSummary> {
    let (campaign_id, campaign_name) = (campaign.id, campaign.name.as_str());
    let (role, field) = rows.actor();
    let mut people = People {
        cache: HashMap::new(),
        role,
        campaign: campaign_id,
    };
    let mut summary = BulkSummary {
        rows: rows.len(),
        ..BulkSummary::default()
    };
    for i in 0..rows.len() {
        let (line, name, stage, key, version) = rows.row(i);
        let person = match people.get(tx, name).await? {
            Ok(u) => u,
            Err(m) => {
                problems.push(LineError::new(line, Some(field), m));
                continue;
            }
        };
        let stored = match rows {
            Rows::Decisions(r) => {
                let row = &r[i];
                let req = VerdictRequest {
                    verdict: row.verdict,
                    reasons: row.reasons.clone(),
                    note: row.note.clone(),
                    time_spent_ms: row.time_spent_ms,
                    time_measure: row.time_measure,
                    version: if row.clip_version.is_some() {
                        VersionRule::Named
                    } else {
                        VersionRule::Newest
                    },
                };
                let target = Target {
                    campaign_id,
                    campaign,
                    stage,
                    key,
                    version,
                    path: Path::Records,
                };
                record_verdict(
                    tx,
                    &target,
                    &person,
                    &req,
                    row.decided_at,
                    Origin::Import,
                    Dedupe::SameRecord,
                )
                .await
                .map(|r| r.recorded)
            }
            Rows::Resolutions(r) => {
                let row = &r[i];
                resolve(
                    tx,
                    campaign_id,
                    stage,
                    key,
                    &person,
                    row.verdict,
                    &row.note,
                    row.decided_at,
                    Origin::Import,
                )
                .await
            }
        };
        match stored {
            Ok(true) => summary.recorded += 1,
            Ok(false) => summary.repeated += 1,
            Err(Error::NotFound(_)) => problems.push(LineError::new(
                line,
                Some("item_id"),
                format!(
                    "no {} `{key}`{} in campaign `{campaign_name}`",
                    stage.item_noun(),
                    version
                        .map(|v| format!(" in version {v} of its clip"))
                        .unwrap_or_default()
                ),
            )),
            Err(e) => problems.push(row_problem(line, e, field)?),
        }
    }
    if !problems.is_empty() {
        return Err(refused(what, problems));
    }
    Ok(summary)
}

/// Maps a refusal of one row to the field it is about.
fn row_problem(line: usize, e: Error, actor_field: &str) -> Result<LineError> {
    Ok(match e {
        Error::Field { field, message } => LineError::new(line, Some(&field), message),
        Error::Forbidden(m) => LineError::new(line, Some(actor_field), m),
        Error::NotFound(m) | Error::Conflict(m) | Error::Invalid(m) => {
            LineError::new(line, Some("item_id"), m)
        }
        other => return Err(other),
    })
}

/// A file's refusal, its problems in line order (at most [`MAX_PROBLEMS`]).
pub(crate) fn refused(what: &str, mut problems: Vec<LineError>) -> Error {
    problems.sort_by_key(|p| p.line);
    let extra = problems.len().saturating_sub(MAX_PROBLEMS);
    problems.truncate(MAX_PROBLEMS);
    if extra > 0 {
        let line = problems.last().map_or(0, |p| p.line);
        problems.push(LineError::new(
            line,
            None,
            format!("... and {extra} more problem(s)"),
        ));
    }
    Error::Rejected(Rejected {
        what: what.to_string(),
        problems,
    })
}
