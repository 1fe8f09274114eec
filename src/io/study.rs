//! The study's files (SPEC section 7): comparison sets as JSON Lines, and responses as
//! CSV. Each file is checked whole; every problem comes back with its line and field.

use crate::domain::check_identifier;
use crate::domain::import::{CheckedSets, ResponseRow, ResponseValue, SetClip, StudySet};
use crate::domain::study::{Axis, MAX_SOURCES, MIN_SOURCES, Truth};
use crate::error::{Error, LineError, Rejected, Result};
use crate::io::manifest::{inspect_media, locate};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Reads and checks a sets file (a regular file within the manifest size limit). The
/// declared sources are `sources` when given, else every source the file names, in
/// the order they first appear; each set must hold exactly one clip of each.
pub fn check_sets(
    path: &Path,
    sources: Option<&[String]>,
    limits: &super::limits::Limits,
) -> Result<CheckedSets> {
    let what = format!("study sets file {}", path.display());
    let file = super::limits::open_regular(
        path,
        "the study sets file",
        limits.manifest_bytes,
        "TANDEM_MAX_MANIFEST_BYTES",
    )?;
    let mut bytes = Vec::new();
    file.take(limits.manifest_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    if bytes.len() as u64 > limits.manifest_bytes {
        return Err(Error::Invalid(format!(
            "{what} is larger than the limit of {} (set TANDEM_MAX_MANIFEST_BYTES to raise it)",
            super::limits::human_bytes(limits.manifest_bytes)
        )));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let root = dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot resolve the folder {}", dir.display()), e))?;

    let mut problems = Vec::new();
    let mut raw: Vec<(usize, String, Vec<SetClip>)> = Vec::new();
    let mut seen_sets: HashMap<String, usize> = HashMap::new();
    let mut seen_clips: HashMap<String, usize> = HashMap::new();
    let mut found_sources: Vec<String> = Vec::new();
    for (i, text) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = i + 1;
        let Ok(text) = std::str::from_utf8(text) else {
            problems.push(LineError::new(line, None, "the line is not UTF-8"));
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if text.len() > limits.line_bytes {
            problems.push(LineError::new(
                line,
                None,
                format!(
                    "the line is longer than the limit of {} (set TANDEM_MAX_LINE_BYTES to raise it)",
                    super::limits::human_bytes(limits.line_bytes as u64)
                ),
            ));
            continue;
        }
        let mut push =
            |field: Option<&str>, m: String| problems.push(LineError::new(line, field, m));
        let parsed = serde_json::from_str::<Value>(text);
        if let Ok(v) = &parsed
            && let Err((field, message)) = crate::domain::text::check_json(v)
        {
            push(Some(&field), message);
            continue;
        }
        let obj = match parsed {
            Ok(Value::Object(o)) => o,
            Ok(_) => {
                push(None, "a line must hold one JSON object".into());
                continue;
            }
            Err(e) => {
                push(None, format!("invalid JSON: {e}"));
                continue;
            }
        };
        let set_id = match obj.get("set_id").and_then(Value::as_str) {
            Some(s) => s.to_string(),
            None => {
                push(Some("set_id"), "missing or not a string".into());
                continue;
            }
        };
        if let Err(m) = check_identifier("set_id", &set_id) {
            push(Some("set_id"), m);
        } else if let Some(first) = seen_sets.insert(set_id.clone(), line) {
            push(
                Some("set_id"),
                format!("duplicate set_id `{set_id}` (first on line {first})"),
            );
        }
        let Some(list) = obj.get("clips").and_then(Value::as_array) else {
            push(Some("clips"), "missing or not a list of clips".into());
            continue;
        };
        let mut clips = Vec::new();
        for (k, c) in list.iter().enumerate() {
            if let Some(clip) = check_clip(c, k, &root, line, &mut seen_clips, &mut push) {
                if !found_sources.contains(&clip.source) {
                    found_sources.push(clip.source.clone());
                }
                clips.push(clip);
            }
        }
        if clips.len() == list.len() {
            raw.push((line, set_id, clips));
        }
    }
    let declared: Vec<String> = match sources {
        Some(s) => s.to_vec(),
        None => found_sources,
    };
    if problems.is_empty() && !(MIN_SOURCES..=MAX_SOURCES).contains(&declared.len()) {
        problems.push(LineError::new(
            1,
            Some("clips"),
            format!(
                "a study compares {MIN_SOURCES} to {MAX_SOURCES} sources; this one names {} ({})",
                declared.len(),
                declared.join(", ")
            ),
        ));
    }
    let sets = order_sets(raw, &declared, &mut problems);
    if sets.is_empty() && problems.is_empty() {
        problems.push(LineError::new(1, None, "the file holds no sets"));
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(Error::Rejected(Rejected { what, problems }));
    }
    Ok(CheckedSets {
        path: path.to_path_buf(),
        sources: declared,
        sets,
    })
}

/// One clip of a set: its id (unique in the file), source, truth and video.
fn check_clip(
    c: &Value,
    k: usize,
    root: &Path,
    line: usize,
    seen_clips: &mut HashMap<String, usize>,
    push: &mut impl FnMut(Option<&str>, String),
) -> Option<SetClip> {
    let field = |name: &str| format!("clips[{k}].{name}");
    let Some(c) = c.as_object() else {
        push(Some(&format!("clips[{k}]")), "not a JSON object".into());
        return None;
    };
    let get = |name: &str| c.get(name).and_then(Value::as_str).map(str::trim);
    let mut ok = true;
    let clip_id = get("clip_id").unwrap_or_default().to_string();
    if let Err(m) = check_identifier("clip_id", &clip_id) {
        push(Some(&field("clip_id")), m);
        ok = false;
    } else if let Some(first) = seen_clips.insert(clip_id.clone(), line) {
        push(
            Some(&field("clip_id")),
            format!("duplicate clip_id `{clip_id}` (first on line {first})"),
        );
        ok = false;
    }
    let source = get("source").unwrap_or_default().to_string();
    if source.is_empty() || source.len() > 100 {
        push(
            Some(&field("source")),
            "missing, empty or longer than 100 characters".into(),
        );
        ok = false;
    }
    let truth = match get("truth").map(Truth::parse) {
        Some(Ok(t)) => Some(t),
        Some(Err(m)) => {
            push(Some(&field("truth")), m);
            None
        }
        None => {
            push(
                Some(&field("truth")),
                "missing or not a string (real or fake)".into(),
            );
            None
        }
    };
    let file = get("file").unwrap_or_default().to_string();
    let located = if file.is_empty() {
        push(Some(&field("file")), "missing or empty".into());
        None
    } else {
        match locate(root, &file) {
            Ok(p) => match inspect_media(&p) {
                Ok(m) => Some((p, m)),
                Err(m) => {
                    push(Some(&field("file")), format!("video `{file}` {m}"));
                    None
                }
            },
            Err(m) => {
                push(Some(&field("file")), m);
                None
            }
        }
    };
    let (true, Some(truth), Some((path, media))) = (ok, truth, located) else {
        return None;
    };
    Some(SetClip {
        clip_id,
        source,
        truth,
        file,
        path,
        media,
    })
}

/// Each set's clips in the order of the study's sources: exactly one clip of each
/// source, and none of another.
fn order_sets(
    raw: Vec<(usize, String, Vec<SetClip>)>,
    declared: &[String],
    problems: &mut Vec<LineError>,
) -> Vec<StudySet> {
    let mut sets = Vec::new();
    for (line, set_id, clips) in raw {
        let mut ordered = Vec::new();
        let mut bad = false;
        for s in declared {
            let of: Vec<&SetClip> = clips.iter().filter(|c| &c.source == s).collect();
            match of.len() {
                1 => ordered.push(of[0].clone()),
                0 => {
                    problems.push(LineError::new(
                        line,
                        Some("clips"),
                        format!("set `{set_id}` has no clip from source `{s}`; each set holds exactly one clip of each source"),
                    ));
                    bad = true;
                }
                n => {
                    problems.push(LineError::new(
                        line,
                        Some("clips"),
                        format!("set `{set_id}` has {n} clips from source `{s}`; each set holds exactly one clip of each source"),
                    ));
                    bad = true;
                }
            }
        }
        for c in &clips {
            if !declared.contains(&c.source) {
                problems.push(LineError::new(
                    line,
                    Some("clips"),
                    format!(
                        "clip `{}` is from source `{}`, which is not one of the study's sources ({})",
                        c.clip_id,
                        c.source,
                        declared.join(", ")
                    ),
                ));
                bad = true;
            }
        }
        if !bad {
            sets.push(StudySet {
                line,
                set_id,
                clips: ordered,
            });
        }
    }
    sets
}

pub const RESPONSE_COLUMNS: [&str; 5] = ["set_id", "participant", "clip_id", "axis", "value"];

/// Reads a responses file. Rows that parse are returned with the problems of the rest;
/// ranks are checked against the number of sources by the store.
pub fn read_responses(input: impl Read) -> (Vec<ResponseRow>, Vec<LineError>) {
    let mut problems = Vec::new();
    let Some(table) = crate::io::records::read_table(input, &RESPONSE_COLUMNS, &mut problems)
    else {
        return (Vec::new(), problems);
    };
    let mut rows = Vec::new();
    for (line, rec) in &table.records {
        let line = *line;
        let cell = |name| table.cell(rec, name).to_string();
        let mut bad = false;
        for name in ["set_id", "participant", "clip_id"] {
            if cell(name).is_empty() {
                problems.push(LineError::new(line, Some(name), "empty"));
                bad = true;
            }
        }
        let axis = match Axis::parse(&cell("axis")) {
            Ok(a) => Some(a),
            Err(m) => {
                problems.push(LineError::new(line, Some("axis"), m));
                None
            }
        };
        let raw = cell("value");
        let value = match axis {
            Some(Axis::RealFake) => match Truth::parse(&raw) {
                Ok(t) => Some(ResponseValue::Label(t)),
                Err(_) => {
                    problems.push(LineError::new(
                        line,
                        Some("value"),
                        format!("`{raw}` is not a real/fake label (real or fake)"),
                    ));
                    None
                }
            },
            Some(_) => match raw.parse::<i64>() {
                Ok(r) if r >= 1 => Some(ResponseValue::Rank(r)),
                _ => {
                    problems.push(LineError::new(
                        line,
                        Some("value"),
                        format!("`{raw}` is not a rank (a whole number from 1, 1 = best)"),
                    ));
                    None
                }
            },
            None => None,
        };
        if let (false, Some(axis), Some(value)) = (bad, axis, value) {
            rows.push(ResponseRow {
                line,
                set_id: cell("set_id"),
                participant: cell("participant"),
                clip_id: cell("clip_id"),
                axis,
                value,
            });
        }
    }
    (rows, problems)
}

/// Writes the study's raw responses as CSV, one answer a row, in the order stored, in
/// the import's format (`set_id,participant,clip_id,axis,value`, so that the file can be
/// imported again into a study with the same sets) followed by `source` and `truth`
/// (ignored on import). `axis` and `value` are as in the responses import (a rank 1 =
/// best, or `real` / `fake`).
pub fn write_responses(
    out: impl std::io::Write,
    data: &crate::domain::facts::StudyData,
) -> Result<()> {
    use crate::domain::text::spreadsheet_safe;
    let csv_error = |e: csv::Error| Error::fault("cannot write CSV", e);
    let clips: HashMap<i64, &crate::domain::facts::StudyClipFact> =
        data.clips.iter().map(|c| (c.id, c)).collect();
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<&str> = RESPONSE_COLUMNS.to_vec();
    header.extend(["source", "truth"]);
    w.write_record(&header).map_err(csv_error)?;
    for r in &data.responses {
        let clip = clips.get(&r.clip_id).ok_or_else(|| {
            Error::Internal(format!("a response names clip {} of no set", r.clip_id))
        })?;
        w.write_record([
            clip.set_key.clone(),
            spreadsheet_safe(&r.participant).into_owned(),
            clip.clip_key.clone(),
            r.axis.as_str().to_string(),
            r.value.clone(),
            spreadsheet_safe(&clip.source).into_owned(),
            clip.truth.as_str().to_string(),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}
