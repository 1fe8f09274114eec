//! What to answer a request for a file, decided from its conditional and range headers
//! alone ([`plan`], [`parse_ranges`]): pure functions, tested without a file or a server.

use axum::http::{HeaderMap, header};
use std::time::{SystemTime, UNIX_EPOCH};

/// At most this many ranges (after overlapping and adjacent ones are merged) in one
/// request; more are refused with 416 and a reason, not answered with the whole file.
pub const MAX_RANGES: usize = 16;

/// At most this many ranges a request may name before they are merged (a bound on the
/// work one header costs; far above what any client sends): more are refused as too
/// many ranges.
pub const MAX_NAMED_RANGES: usize = 4096;

/// What a reply says about the file's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// A strong `ETag` (the quoted text) and the file's `Last-Modified`.
    Tagged(String),
    /// A strong `ETag` made of this prefix, the file's size and its date (files drawn
    /// here, such as strips), and `Last-Modified`.
    Stamped(String),
    /// Neither: the reply must not identify the file (study clips).
    Blind,
}

/// The conditional and range headers of a request, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditions {
    pub range: Option<String>,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<String>,
    pub if_range: Option<String>,
}

impl Conditions {
    pub fn from_headers(headers: &HeaderMap) -> Conditions {
        let text = |name: header::HeaderName| {
            // Several fields of one name are one comma-separated list.
            // A conditional header that is not text is ignored, as RFC 9110 allows for an invalid one.
            let all: Vec<&str> = headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            (!all.is_empty()).then(|| all.join(", "))
        };
        Conditions {
            range: text(header::RANGE),
            if_none_match: text(header::IF_NONE_MATCH),
            if_modified_since: text(header::IF_MODIFIED_SINCE),
            if_range: text(header::IF_RANGE),
        }
    }
}

/// A file's validators: its strong entity tag (quoted) and its date to the second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validators {
    pub etag: String,
    pub modified: SystemTime,
}

/// How to answer a request for a file of some size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// 304: the client's copy is current.
    NotModified,
    /// 200 with the whole file.
    Whole,
    /// 206 with these inclusive byte ranges (one: a plain 206; several: multipart).
    Ranges(Vec<(u64, u64)>),
    /// 416: no range can be satisfied.
    Unsatisfiable,
    /// 416: more ranges than [`MAX_RANGES`].
    TooManyRanges,
}

/// Whether an entity tag in a list matches ours: `*`, or the same opaque tag
/// (`weak` allows either side to be weak, as If-None-Match does).
fn tag_in_list(list: &str, ours: &str, weak: bool) -> bool {
    list.split(',').map(str::trim).any(|t| {
        if t == "*" {
            return true;
        }
        let bare = |s: &str| s.strip_prefix("W/").unwrap_or(s).to_string();
        if weak {
            bare(t) == bare(ours)
        } else {
            !t.starts_with("W/") && !ours.starts_with("W/") && t == ours
        }
    })
}

/// The seconds of a time since the epoch (HTTP dates have no finer grain).
pub(super) fn seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Decides the answer, following RFC 9110 section 13.2.2: If-None-Match (or, without
/// it, If-Modified-Since) may answer 304; a Range applies only if If-Range, when sent,
/// names the current file (a strong tag or its exact date); ranges that overlap or
/// touch are merged, and past [`MAX_RANGES`] refused.
pub fn plan(c: &Conditions, size: u64, v: Option<&Validators>) -> Plan {
    if let Some(v) = v {
        if let Some(inm) = &c.if_none_match {
            if tag_in_list(inm, &v.etag, true) {
                return Plan::NotModified;
            }
        } else if let Some(ims) = c.if_modified_since.as_deref()
            && let Ok(since) = httpdate::parse_http_date(ims.trim())
            && seconds(v.modified) <= seconds(since)
        {
            return Plan::NotModified;
        }
    }
    let Some(range) = &c.range else {
        return Plan::Whole;
    };
    if let Some(ir) = &c.if_range {
        let ir = ir.trim();
        let current = match v {
            None => false,
            Some(v) if ir.starts_with('"') || ir.starts_with("W/") => {
                tag_in_list(ir, &v.etag, false) && !ir.contains(',')
            }
            Some(v) => httpdate::parse_http_date(ir)
                .map(|d| seconds(d) == seconds(v.modified))
                .unwrap_or(false),
        };
        if !current {
            return Plan::Whole;
        }
    }
    match parse_ranges(range, size) {
        Ok(None) => Plan::Whole,
        Ok(Some(r)) if r.len() > MAX_RANGES => Plan::TooManyRanges,
        Ok(Some(r)) => Plan::Ranges(r),
        Err(Unsatisfiable) => Plan::Unsatisfiable,
    }
}

/// A `Range` header that no byte of the file satisfies (answered with 416).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsatisfiable;

/// The byte ranges of a file of `size` bytes named by a `Range` header, sorted, with
/// overlapping and adjacent ranges merged: `Ok(None)` for another unit than bytes
/// (the whole file), `Err(Unsatisfiable)` when a range is malformed or none can be
/// satisfied. Ranges past the end are dropped when another one is satisfiable.
pub fn parse_ranges(header: &str, size: u64) -> Result<Option<Vec<(u64, u64)>>, Unsatisfiable> {
    let Some(specs) = header.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut count = 0usize;
    for spec in specs.split(',') {
        let spec = spec.trim();
        if spec.is_empty() {
            continue;
        }
        count += 1;
        if count > MAX_NAMED_RANGES {
            return Ok(Some(vec![(0, 0); MAX_RANGES + 1]));
        }
        let (a, b) = spec.split_once('-').ok_or(Unsatisfiable)?;
        let (a, b) = (a.trim(), b.trim());
        let number = |s: &str| -> Result<u64, Unsatisfiable> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Unsatisfiable);
            }
            s.parse().map_err(|_| Unsatisfiable)
        };
        let (start, end) = if a.is_empty() {
            let n = number(b)?;
            if n == 0 || size == 0 {
                continue;
            }
            (size.saturating_sub(n), size - 1)
        } else {
            let start = number(a)?;
            let end = if b.is_empty() { u64::MAX } else { number(b)? };
            if end < start {
                return Err(Unsatisfiable);
            }
            if start >= size {
                continue;
            }
            (start, end.min(size - 1))
        };
        out.push((start, end));
    }
    if out.is_empty() {
        return Err(Unsatisfiable);
    }
    out.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(out.len());
    for (s, e) in out {
        match merged.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    Ok(Some(merged))
}
