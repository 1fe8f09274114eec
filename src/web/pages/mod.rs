//! Server-rendered pages: one askama struct per page, `templates/base.html` for the
//! frame, forms that POST and then redirect (303) with a one-shot message.

pub mod admin;
pub mod baseline;
pub mod calibration;
pub mod participants;
pub mod participate;
pub mod resolve;
pub mod review;
pub mod stats;
pub mod study;

use super::assets;
use super::routes::{Access, Kind, Route};
use crate::domain::{Role, Stage};
use crate::error::Error;
use crate::store::sessions::Session;
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::State;

/// What every page's frame shows: who is signed in, where they can go, the message left
/// by the last form, and the CSRF token for the page's forms.
pub struct Chrome {
    pub user: String,
    pub role: String,
    pub campaign: Option<String>,
    pub csrf: String,
    pub flash: Option<String>,
    /// The page the message links back to ("Change it"), if any.
    pub flash_link: Option<String>,
    pub css: String,
    pub js: String,
    /// (link, label, is the current page)
    pub nav: Vec<(String, String, bool)>,
    pub title: String,
}

impl Chrome {
    pub async fn new(
        state: &AppState,
        session: &Session,
        campaign: Option<&str>,
        title: &str,
        here: &str,
    ) -> Result<Chrome, Error> {
        let (flash, flash_link) = match super::flash::take_with_link() {
            Some((m, l)) => (Some(m), l),
            None => (None, None),
        };
        let mut nav = Vec::new();
        let mut role = session.user.headline();
        if let Some(c) = campaign {
            // A protocol without clip review has no Stage 1 to link to.
            // A campaign that is not there has no menu of its own (the page says why);
            // a database that does not answer is an error, not a menu without Stage 1.
            let found = match state.store.campaign(c).await {
                Ok(found) => Some(found),
                Err(Error::NotFound(_)) => None,
                Err(e) => return Err(e),
            };
            let clips = found.as_ref().is_none_or(|f| f.taxonomy.clip_review);
            let first = if clips { 1 } else { 2 };
            let acting = found.and_then(|f| session.user.role_in(f.id));
            if let Some(r) = acting {
                role = r.as_str().to_string();
            }
            let mut links: Vec<(String, String)> = match acting {
                Some(Role::Validator) => vec![
                    (format!("/c/{c}/calibration"), "Calibration".into()),
                    (format!("/c/{c}/review/1"), "Stage 1: clips".into()),
                    (format!("/c/{c}/review/2"), "Stage 2: questions".into()),
                ],
                Some(Role::Author) => vec![
                    (format!("/c/{c}/splits/1"), "Splits, Stage 1".into()),
                    (format!("/c/{c}/splits/2"), "Splits, Stage 2".into()),
                    (format!("/c/{c}/stats"), "Statistics".into()),
                    (format!("/c/{c}/study/results"), "Study".into()),
                    (format!("/c/{c}/baseline/results"), "Baseline".into()),
                ],
                Some(Role::Admin) => vec![
                    (format!("/c/{c}/admin"), "Overview".into()),
                    (format!("/c/{c}/splits/{first}"), "Splits".into()),
                    (format!("/c/{c}/stats"), "Statistics".into()),
                    (format!("/c/{c}/admin/pairs"), "Pairs".into()),
                    (format!("/c/{c}/admin/calibration"), "Calibration".into()),
                    (format!("/c/{c}/admin/audit"), "Audit".into()),
                    (format!("/c/{c}/admin/study"), "Study".into()),
                    (format!("/c/{c}/baseline/results"), "Baseline".into()),
                    (format!("/c/{c}/admin/participants"), "Participants".into()),
                    ("/admin/users".into(), "Accounts".into()),
                    ("/admin/campaigns".into(), "Campaigns".into()),
                    (format!("/c/{c}/admin/import"), "Import".into()),
                    (format!("/c/{c}/admin/exports"), "Exports".into()),
                ],
                Some(Role::Participant | Role::Baseline) | None => vec![],
            };
            if !clips {
                links.retain(|(href, _)| {
                    !href.ends_with("/review/1") && !href.ends_with("/splits/1")
                });
            }
            // The current page is the link with the longest path that leads to it.
            let best = links
                .iter()
                .filter(|(href, _)| here == href || here.starts_with(&format!("{href}/")))
                .map(|(href, _)| href.len())
                .max();
            nav = links
                .into_iter()
                .map(|(href, label)| {
                    let current = Some(href.len()) == best
                        && (here == href || here.starts_with(&format!("{href}/")));
                    (href, label, current)
                })
                .collect();
        } else if session.user.admin {
            nav.push((
                "/admin/users".into(),
                "Accounts".into(),
                here == "/admin/users",
            ));
            nav.push((
                "/admin/campaigns".into(),
                "Campaigns".into(),
                here == "/admin/campaigns",
            ));
        }
        Ok(Chrome {
            user: session.user.name.clone(),
            role,
            campaign: campaign.map(str::to_string),
            csrf: session.csrf_token.clone(),
            flash,
            flash_link,
            css: assets::url("app.css"),
            js: assets::url("app.js"),
            nav,
            title: title.to_string(),
        })
    }
}

pub use super::reply::{PageError, PageResult, error_page, for_people, render, see_other};

/// Where a page of a long list starts, as a link gives it: `after` or `before` a row
/// (`domain::paging::Cursor`); neither is the first page.
#[derive(serde::Deserialize, Default)]
pub struct At {
    #[serde(default)]
    pub after: String,
    #[serde(default)]
    pub before: String,
    /// A page's number, from the pager's jump (lists that take it).
    #[serde(default)]
    pub page: String,
}

impl At {
    pub fn cursor(&self) -> Result<Option<crate::domain::paging::Cursor>, Error> {
        Ok(crate::domain::paging::Cursor::parse(
            Some(&self.after),
            Some(&self.before),
        )?)
    }

    /// The page number asked for, if any.
    pub fn page(&self) -> Result<Option<usize>, Error> {
        Ok(crate::domain::paging::page_number(&self.page)?)
    }

    /// The cursor of a list read whole (`domain::paging::page_of`): the page number's
    /// when one was asked for, else the link's.
    pub fn cursor_in<T>(
        &self,
        rows: &[T],
        key: impl Fn(&T) -> &str,
        keep: impl Fn(&T) -> bool,
    ) -> Result<Option<crate::domain::paging::Cursor>, Error> {
        use crate::domain::paging::{PAGE_ROWS, cursor_of_page};
        match self.page()? {
            Some(n) => Ok(cursor_of_page(rows, key, keep, n, PAGE_ROWS)),
            None => self.cursor(),
        }
    }
}

/// The links between the pages of a long list (`domain::paging`): the first page, the
/// one before and the one after, each keeping the list's filters.
pub struct Pager {
    /// "rows 251-500 of 3,680 · page 2 of 15", "250 item(s) of 1,600" where the
    /// page's place is not known, or "12 item(s)" on a list of one page.
    pub words: String,
    pub first: Option<String>,
    pub previous: Option<String>,
    pub next: Option<String>,
    pub last: Option<String>,
    /// The jump to a page by number (lists that take `page`): the list's path, its
    /// filters, this page's number and how many there are.
    pub jump: Option<Jump>,
    /// The jump, kept until the list says it takes `page` ([`Pager::jumps`]).
    could_jump: Option<Jump>,
}

pub struct Jump {
    pub path: String,
    pub kept: Vec<(String, String)>,
    pub page: usize,
    pub pages: usize,
}

impl Pager {
    /// For `page` of the list at `path` whose filters are `kept` (name, value; empty
    /// values are left out), with `token` giving a row's cursor text.
    pub fn new<T>(
        path: &str,
        kept: &[(&str, &str)],
        page: &crate::domain::paging::Page<T>,
        token: impl Fn(&T) -> String,
    ) -> Pager {
        Pager::of(
            ("item", crate::domain::paging::PAGE_ROWS),
            path,
            kept,
            page,
            token,
        )
    }

    /// `new` for rows that are not items, on pages of their own size (`noun`: "event"
    /// says "12 event(s)").
    pub fn of<T>(
        (noun, limit): (&str, usize),
        path: &str,
        kept: &[(&str, &str)],
        page: &crate::domain::paging::Page<T>,
        token: impl Fn(&T) -> String,
    ) -> Pager {
        let link = |extra: Option<(&str, String)>| {
            let mut pairs: Vec<(&str, String)> = kept
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (*k, v.to_string()))
                .collect();
            pairs.extend(extra);
            match serde_urlencoded::to_string(&pairs) {
                Ok(q) if !q.is_empty() => format!("{path}?{q}"),
                _ => path.to_string(),
            }
        };
        let shown = page.rows.len();
        let count =
            |n: usize| crate::report::format::thousands(i64::try_from(n).unwrap_or(i64::MAX));
        let number = page.number(limit);
        let words = if !page.more_before && !page.more_after {
            format!("{} {noun}(s)", count(page.matching))
        } else if shown == 0 {
            format!("no {noun} here, of {}", count(page.matching))
        } else if let (Some(offset), Some((n, pages))) = (page.offset, number) {
            format!(
                "rows {}-{} of {} · page {n} of {pages}",
                count(offset + 1),
                count(offset + shown),
                count(page.matching)
            )
        } else {
            format!("{shown} {noun}(s) of {}", count(page.matching))
        };
        let jump = number
            .or((page.more_before || page.more_after).then(|| (0, page.matching.div_ceil(limit))))
            .filter(|(_, pages)| *pages > 1)
            .map(|(n, pages)| Jump {
                path: path.to_string(),
                kept: kept
                    .iter()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                page: n,
                pages,
            });
        Pager {
            words,
            jump: None,
            could_jump: jump,
            first: page.more_before.then(|| link(None)),
            previous: match (page.more_before, page.rows.first()) {
                (true, Some(r)) => Some(link(Some(("before", token(r))))),
                _ => None,
            },
            next: match (page.more_after, page.rows.last()) {
                (true, Some(r)) => Some(link(Some(("after", token(r))))),
                _ => None,
            },
            last: page.more_after.then(|| {
                link(Some((
                    "before",
                    crate::domain::paging::Cursor::END.to_string(),
                )))
            }),
        }
    }
}

impl Pager {
    /// Shows the jump to a page by number: for a list whose handler takes `page`.
    pub fn jumps(mut self) -> Pager {
        self.jump = self.could_jump.take();
        self
    }
}

pub fn stage(s: &str) -> Result<Stage, Error> {
    Stage::parse(s).map_err(|m| Error::NotFound(format!("no such stage: {m}")))
}

/// Where each role starts in a campaign (`first`: its first review stage).
fn start_of(role: Role, campaign: &str, first: u8) -> Option<String> {
    match role {
        Role::Validator => Some(format!("/c/{campaign}/review/{first}")),
        Role::Author => Some(format!("/c/{campaign}/splits/{first}")),
        Role::Admin => Some(format!("/c/{campaign}/admin")),
        Role::Participant | Role::Baseline => None,
    }
}

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage {
    chrome: Chrome,
    links: Vec<(String, String)>,
    admin: bool,
}

/// `/`: straight to the work when there is one place to work, else a list: each
/// campaign where the person works (with their role's start page), then each study they
/// take part in (by number only).
pub async fn home(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
) -> PageResult {
    let user = &session.user;
    let mut links = Vec::new();
    for c in state.store.campaign_names_for(user).await? {
        let Ok(campaign) = state.store.campaign(&c).await else {
            continue;
        };
        let first = if campaign.taxonomy.clip_review { 1 } else { 2 };
        if let Some(role) = user.role_in(campaign.id)
            && let Some(href) = start_of(role, &c, first)
        {
            let label = if user.admin {
                c
            } else {
                format!("{c} ({role})")
            };
            links.push((href, label));
        }
    }
    // A participant never sees a campaign's name: it could hint at the source of the
    // clips.
    for id in state.store.study_ids_for(user).await? {
        links.push((format!("/study/{id}"), format!("Study {id}")));
    }
    for r in user.roles.iter().filter(|r| r.role == Role::Baseline) {
        if let Ok(c) = state.store.campaign(&r.campaign).await
            && let Some(b) = state.store.baseline(&c).await?
        {
            links.push((format!("/baseline/{}", b.id), format!("Questions {}", b.id)));
        }
    }
    if let [(start, _)] = links.as_slice() {
        return Ok(see_other(start));
    }
    let chrome = Chrome::new(&state, &session, None, "Tandem", "/").await?;
    Ok(render(&HomePage {
        chrome,
        links,
        admin: user.admin,
    }))
}

/// A urlencoded form body, repeated fields kept (reasons are ticked boxes of one name).
pub struct FormFields(Vec<(String, String)>);

impl FormFields {
    /// Parses a form; a field holding a control character (NUL, ...) is refused by
    /// name before anything reads it.
    pub fn parse(body: &[u8]) -> Result<FormFields, Error> {
        let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
            .map_err(|e| Error::Invalid(format!("unreadable form: {e}")))?;
        for (k, v) in &fields {
            crate::domain::text::check(v).map_err(|m| Error::field(k, m))?;
        }
        Ok(FormFields(fields))
    }

    /// The first value of a field, as sent; empty when absent.
    pub fn get(&self, name: &str) -> String {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// The time spent on a decision: the time the item was open and visible, as the
    /// page's script measured it (`spent_ms`: a hidden tab does not count; it includes
    /// `spent_before`, what a refused save carried over), never more than the time since
    /// the page was first drawn (`rendered_at`, ms since the epoch, kept across a refused
    /// save); without the script, the time since it was first drawn. Within 0 and a day.
    /// What `time_spent_ms` measures: the visible time when the page's script sent it,
    /// else the time since the page was drawn.
    pub fn time_measure(&self) -> Option<crate::domain::TimeMeasure> {
        if self.get("spent_ms").parse::<i64>().is_ok() {
            Some(crate::domain::TimeMeasure::Visible)
        } else if self.get("rendered_at").parse::<i64>().is_ok() {
            Some(crate::domain::TimeMeasure::Open)
        } else {
            None
        }
    }

    pub fn time_spent_ms(&self) -> Option<i64> {
        let max = crate::domain::rules::MAX_TIME_SPENT_MS;
        // A time the page did not send, or not as a number, is none; one sent is clamped.
        let open = self
            .get("rendered_at")
            .parse::<i64>()
            .ok()
            .map(|t| (crate::clock::now_micros() / 1000 - t).clamp(0, max));
        let visible = self.get("spent_ms").parse::<i64>().ok();
        match (open, visible) {
            (Some(open), Some(v)) => Some(v.clamp(0, open)),
            (open, None) => open,
            (None, Some(v)) => Some(v.clamp(0, max)),
        }
    }

    /// What a refused save hands back to the page it draws again (as `rendered_at`,
    /// `spent_before` and `position`), so that nothing the person spent is lost: when the
    /// page was first drawn, the time spent so far and the video's position.
    pub fn carried(&self) -> Carried {
        Carried {
            rendered_at: self.get("rendered_at").parse::<i64>().ok(),
            spent_before: self.time_spent_ms().unwrap_or(0),
            position: position(&self.get("position")),
        }
    }

    /// Every value of a field.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// A video position in seconds as a page carries it (three decimals), or empty: a
/// position that is not a number is not carried to the next page.
pub fn position(sent: &str) -> String {
    sent.parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .map(|p| format!("{p:.3}"))
        .unwrap_or_default()
}

/// What a verdict form carries from one drawing of the page to the next (see
/// `FormFields::carried`).
#[derive(Debug, Clone, Default)]
pub struct Carried {
    pub rendered_at: Option<i64>,
    pub spent_before: i64,
    /// The video's position in seconds, or empty.
    pub position: String,
}

/// Reasons as a page shows them: value, label, key and whether it is ticked. Every
/// reason of a stage is shown, always under its protocol's key; one that does not apply
/// to the item's level (VGenST: single-frame solvable below L3) is shown disabled, with
/// the levels it is for.
pub struct ReasonBox {
    pub value: String,
    pub label: String,
    pub key: u8,
    pub checked: bool,
    pub disabled: bool,
    /// Whether it needs a note.
    pub note: bool,
    /// The levels it applies to, in words ("L3").
    pub only: String,
}

/// The reasons of a stage in the campaign's protocol as boxes, in its order, each under
/// its key, on every item.
pub fn reason_boxes(
    tax: &crate::domain::taxonomy::Taxonomy,
    stage: Stage,
    level: Option<&crate::domain::Level>,
    ticked: &[String],
) -> Vec<ReasonBox> {
    tax.reasons_of(stage)
        .map(|r| ReasonBox {
            value: r.code.clone(),
            label: r.label.clone(),
            key: r.key,
            checked: ticked.contains(&r.code),
            disabled: !r.applies_to(level),
            note: r.note,
            only: r.level_words(),
        })
        .collect()
}

/// One entry of a page's key legend: its keys (shown joined by `between`) and what
/// they do.
pub struct KeyHint {
    pub keys: Vec<String>,
    pub between: &'static str,
    pub what: String,
}

impl KeyHint {
    fn new(keys: &[&str], between: &'static str, what: &str) -> KeyHint {
        KeyHint {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            between,
            what: what.to_string(),
        }
    }
}

/// Which verdict page a key table is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPage {
    Review,
    Calibration,
}

/// The keys of a verdict page, as one table that its legend is drawn from: the fixed
/// keys and the digits of the protocol's reasons for the stage (`static/app.js` ticks the
/// box whose `data-key` is the digit pressed).
pub fn verdict_keys(reasons: &[ReasonBox], page: KeyPage) -> Vec<KeyHint> {
    let mut digits: Vec<u8> = reasons.iter().map(|r| r.key).collect();
    digits.sort_unstable();
    let run = digits.len() >= 3 && digits.windows(2).all(|w| w[1] == w[0] + 1);
    let reason_keys = if run {
        KeyHint {
            keys: vec![digits[0].to_string(), digits[digits.len() - 1].to_string()],
            between: "–",
            what: "reasons".into(),
        }
    } else {
        KeyHint {
            keys: digits.iter().map(u8::to_string).collect(),
            between: " ",
            what: "reasons".into(),
        }
    };
    let mut keys = vec![
        KeyHint::new(&["V"], " ", "valid"),
        KeyHint::new(&["R"], " ", "reject"),
        reason_keys,
        KeyHint::new(&["N"], " ", "note"),
        KeyHint::new(
            &["Enter"],
            " ",
            match page {
                KeyPage::Review => "save and go on",
                KeyPage::Calibration => "save",
            },
        ),
        KeyHint::new(&["Space"], " ", "play/pause"),
        KeyHint::new(&["←", "→"], " ", "one frame"),
        KeyHint::new(&["Shift+←", "Shift+→"], " ", "ten frames"),
        KeyHint::new(&["Home", "End"], " ", "first/last frame"),
    ];
    if page == KeyPage::Review {
        keys.push(KeyHint::new(&["[", "]"], " ", "speed"));
        keys.push(KeyHint::new(&["L"], " ", "loop"));
        keys.push(KeyHint::new(&["B", "F"], " ", "back/forward"));
        keys.push(KeyHint::new(&["Q"], " ", "queue"));
    }
    keys
}

/// JSON as a person reads it, for a `<pre>` (escaped by the template): one `key: value`
/// a line, nested keys indented, lists as `- item`, and a small object or a list of
/// plain values on one line. Empty for null, `{}` and `[]`.
pub fn pretty(v: &serde_json::Value) -> String {
    let mut out = String::new();
    readable(v, 0, &mut out);
    out.trim_end().to_string()
}

fn plain(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("-".into()),
        _ => None,
    }
}

/// A value that fits on one line, if it does.
fn one_line(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let line = match v {
        Value::Array(a) if !a.is_empty() => {
            a.iter().map(plain).collect::<Option<Vec<_>>>()?.join(", ")
        }
        Value::Object(m) if !m.is_empty() && m.len() <= 4 => m
            .iter()
            .map(|(k, x)| plain(x).map(|x| format!("{k}: {x}")))
            .collect::<Option<Vec<_>>>()?
            .join(", "),
        _ => plain(v)?,
    };
    (line.chars().count() <= 90 || plain(v).is_some()).then_some(line)
}

fn readable(v: &serde_json::Value, depth: usize, out: &mut String) {
    use serde_json::Value;
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match one_line(x) {
                    Some(line) => out.push_str(&format!("{pad}{k}: {line}\n")),
                    None if is_empty(x) => {}
                    None => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        readable(x, depth + 1, out);
                    }
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                match one_line(x) {
                    Some(line) => out.push_str(&format!("{pad}- {line}\n")),
                    None if is_empty(x) => {}
                    None => {
                        out.push_str(&format!("{pad}-\n"));
                        readable(x, depth + 1, out);
                    }
                }
            }
        }
        Value::Null => {}
        _ => {
            if let Some(line) = plain(v) {
                out.push_str(&format!("{pad}{line}\n"));
            }
        }
    }
}

fn is_empty(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => m.is_empty(),
        serde_json::Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Every page: the start page, then each area's.
pub fn routes() -> Vec<Route> {
    [
        vec![Route::new(
            "GET",
            "/",
            Access::SignedIn,
            Kind::Page,
            axum::routing::get(home),
        )],
        review::routes(),
        resolve::routes(),
        calibration::routes(),
        stats::routes(),
        study::routes(),
        participate::routes(),
        participants::routes(),
        baseline::routes(),
        admin::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_from_an_import_reads_as_lines_of_keys_and_values() {
        let v = serde_json::json!({
            "objects": [{"id": "square", "colour": "red"}, {"id": "bar", "colour": "grey"}],
            "event": "the square moves across the frame",
            "timeline": [{"t": 0, "what": "still", "where": {"x": 1, "y": 2}}],
            "empty": {},
            "tags": ["indoor", "night"]
        });
        assert_eq!(
            pretty(&v),
            "event: the square moves across the frame\n\
             objects:\n  - colour: red, id: square\n  - colour: grey, id: bar\n\
             tags: indoor, night\n\
             timeline:\n  -\n    t: 0\n    what: still\n    where: x: 1, y: 2"
        );
        assert_eq!(pretty(&serde_json::json!({})), "");
        assert_eq!(pretty(&serde_json::Value::Null), "");
    }

    #[test]
    fn every_reason_keeps_its_key_and_single_frame_is_disabled_below_l3() {
        use crate::domain::Level;
        for level in [Level::new("L1"), Level::new("L2"), Level::new("L3")] {
            let tax = crate::domain::taxonomy::Taxonomy::vgenst();
            let boxes = reason_boxes(&tax, Stage::Question, Some(&level), &[]);
            let keys: Vec<(u8, &str, bool)> = boxes
                .iter()
                .map(|b| (b.key, b.value.as_str(), b.disabled))
                .collect();
            let below = level != Level::new("L3");
            assert_eq!(
                keys,
                vec![
                    (1, "incorrect_answer", false),
                    (2, "ambiguous_options", false),
                    (3, "single_frame_solvable", below),
                    (4, "language_prior_shortcut", false),
                    (5, "other", false),
                ]
            );
        }
        let tax = crate::domain::taxonomy::Taxonomy::vgenst();
        let s1 = reason_boxes(&tax, Stage::Clip, None, &["other".to_string()]);
        assert_eq!(s1.len(), 4);
        assert!(s1[3].checked && !s1.iter().any(|b| b.disabled));
        assert!(s1[3].note && !s1[0].note);
    }

    #[test]
    fn the_key_legend_is_drawn_from_the_protocols_reason_keys() {
        let tax = crate::domain::taxonomy::Taxonomy::vgenst();
        let line = |boxes: &[ReasonBox], page| {
            verdict_keys(boxes, page)
                .iter()
                .map(|k| format!("{} {}", k.keys.join(k.between), k.what))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let s2 = reason_boxes(&tax, Stage::Question, None, &[]);
        assert_eq!(
            line(&s2, KeyPage::Review),
            "V valid · R reject · 1–5 reasons · N note · Enter save and go on · Space play/pause · ← → one frame · Shift+← Shift+→ ten frames · Home End first/last frame · [ ] speed · L loop · B F back/forward · Q queue"
        );
        // A protocol whose keys leave gaps shows each of them.
        let mut gaps = reason_boxes(&tax, Stage::Clip, None, &[]);
        gaps[2].key = 7;
        gaps.truncate(3);
        assert!(
            line(&gaps, KeyPage::Calibration)
                .starts_with("V valid · R reject · 1 2 7 reasons · N note · Enter save ·")
        );
    }
}
