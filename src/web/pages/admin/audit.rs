//! The audit trail: the latest events of the campaign, or those of a clip, a person or
//! a time window.

use crate::domain::Role;
use crate::domain::records::AuditPaging;
use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};

#[derive(serde::Deserialize, Default)]
pub struct AuditQuery {
    #[serde(default)]
    clip: String,
    /// A prefix of a clip's or an item's id.
    #[serde(default)]
    id: String,
    #[serde(default)]
    validator: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(flatten)]
    at: crate::web::pages::At,
}

impl AuditQuery {
    pub(super) fn filter(&self) -> Result<crate::domain::records::AuditFilter, Error> {
        crate::domain::records::AuditFilter::parse(
            Some(&self.clip),
            Some(&self.validator),
            Some(&self.from),
            Some(&self.to),
        )
        .and_then(|mut f| {
            f.prefix = crate::domain::paging::prefix("id", Some(&self.id))?;
            Ok(f)
        })
        .map_err(Error::from)
    }

    /// The filters (name, value), kept across pages and in the CSV link.
    fn kept(&self) -> [(&str, &str); 5] {
        [
            ("clip", self.clip.trim()),
            ("id", self.id.trim()),
            ("validator", self.validator.trim()),
            ("from", self.from.trim()),
            ("to", self.to.trim()),
        ]
    }

    /// The same filters as a query string, for the CSV link.
    fn query_string(&self) -> String {
        let pairs: Vec<(&str, &str)> = self
            .kept()
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    }
}

/// Events on one page of the audit trail (the CSV has them all).
const AUDIT_PAGE_EVENTS: usize = 200;

#[derive(Template)]
#[template(path = "admin/audit.html")]
struct AuditPage {
    chrome: Chrome,
    campaign: String,
    q: AuditQuery,
    /// Whether a filter was given (else: the latest events of the campaign).
    filtered: bool,
    /// Why the filter was refused, if it was.
    problem: Option<String>,
    events: Vec<crate::domain::records::AuditEvent>,
    pager: crate::web::pages::Pager,
    people: Vec<String>,
    csv: String,
    taxonomy: std::sync::Arc<crate::domain::taxonomy::Taxonomy>,
}

impl AuditPage {
    fn time(&self, at: &i64) -> String {
        crate::clock::to_rfc3339(*at)
    }

    /// The event's detail with its reasons in words ("reject (Generation artifact): ...").
    fn detail(&self, e: &crate::domain::records::AuditEvent) -> String {
        reasons_in_words(&self.taxonomy, e.stage.unwrap_or(1), &e.detail)
    }
}

/// "reject (generation_artifact;other): note" -> "reject (Generation artifact, Other): note".
fn reasons_in_words(
    taxonomy: &crate::domain::taxonomy::Taxonomy,
    stage: i64,
    detail: &str,
) -> String {
    let Some(rest) = detail.strip_prefix("reject (") else {
        return detail.to_string();
    };
    let Some((list, after)) = rest.split_once(')') else {
        return detail.to_string();
    };
    let words: Vec<String> = list
        .split([';', ','])
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| crate::report::svg::reason_label(taxonomy, stage, r))
        .collect();
    format!("reject ({}){after}", words.join(", "))
}

/// The audit trail: the latest events of the campaign, or those of a clip, a person
/// or a time window.
pub async fn audit(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<AuditQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let (page, filtered, problem) = match q.filter().and_then(|filter| {
        let paging = AuditPaging::parse(
            filter.is_empty(),
            Some(&q.at.after),
            Some(&q.at.before),
            AUDIT_PAGE_EVENTS,
        )?;
        Ok((filter, paging))
    }) {
        Ok((filter, paging)) => {
            let page = state.store.audit_page(&campaign, &filter, &paging).await?;
            (page, !filter.is_empty(), None)
        }
        Err(e) => (
            crate::domain::paging::Page {
                rows: Vec::new(),
                matching: 0,
                more_before: false,
                more_after: false,
                offset: Some(0),
            },
            true,
            Some(crate::web::pages::for_people(&e)),
        ),
    };
    let here = format!("/c/{c}/admin/audit");
    let pager = crate::web::pages::Pager::of(
        ("event", AUDIT_PAGE_EVENTS),
        &here,
        &q.kept(),
        &page,
        |e: &crate::domain::records::AuditEvent| e.position.token(),
    );
    let events = page.rows;
    let people = state
        .store
        .users()
        .await?
        .into_iter()
        .filter(|u| {
            u.roles
                .iter()
                .any(|r| r.campaign == c && matches!(r.role, Role::Validator | Role::Author))
        })
        .map(|u| u.name)
        .collect();
    let chrome = Chrome::new(&state, &session, Some(&c), "Audit trail", &here).await?;
    let csv = format!("/c/{c}/admin/exports/audit.csv?{}", q.query_string());
    Ok(render(&AuditPage {
        chrome,
        campaign: c,
        q,
        filtered,
        problem,
        events,
        pager,
        people,
        csv,
        taxonomy: campaign.taxonomy.clone(),
    }))
}
