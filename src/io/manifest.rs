//! The clip manifest (SPEC section 7): JSON Lines, one clip a line, paths relative to
//! the manifest's folder. The whole file is checked before anything is stored, and
//! every problem is reported with its line and field.

use super::limits::{self, Limits, Line};
use crate::domain::import::{CheckedManifest, ManifestClip, ManifestQuestion, Media};
use crate::domain::rules::{CheckedVerdict, check_verdict};
use crate::domain::taxonomy::Taxonomy;
use crate::domain::video::TimingRead;
use crate::domain::{Level, Stage, Verdict, check_identifier};
use crate::error::{Error, LineError, Rejected, Result};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Component, Path, PathBuf};

/// Problems listed at most for one file (a file of a million bad lines is refused
/// with the first ones).
pub const MAX_PROBLEMS: usize = 1000;

/// What a manifest's video is, or why it cannot be used (words that follow "video
/// `FILE` ...").
pub type Inspected = std::result::Result<(Media, TimingRead), String>;

/// Reads and checks a manifest against a taxonomy, within `limits` (a regular file, its
/// size, each line's length), each video hashed where it is. Problems in the file come
/// back as one [`Error::Rejected`] listing every line at fault.
pub fn check_manifest(
    path: &Path,
    taxonomy: &Taxonomy,
    limits: &Limits,
) -> Result<CheckedManifest> {
    check_manifest_with(path, taxonomy, limits, &|paths| {
        paths
            .iter()
            .map(|p| inspect_media(p).map(|m| (m, TimingRead::NotTried)))
            .collect()
    })
}

/// [`check_manifest`], each distinct video handed to `inspect` (all at once, so that it
/// can take them in parallel: `io::media::Intake` copies them into the media folder)
/// once every line is otherwise sound; a manifest whose lines are wrong is refused
/// without reading its videos.
pub fn check_manifest_with(
    path: &Path,
    taxonomy: &Taxonomy,
    limits: &Limits,
    inspect: &dyn Fn(&[PathBuf]) -> Vec<Inspected>,
) -> Result<CheckedManifest> {
    let max_line = limits.line_bytes;
    let file = limits::open_regular(
        path,
        "the manifest",
        limits.manifest_bytes,
        "TANDEM_MAX_MANIFEST_BYTES",
    )?;
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."));
    let root = dir.canonicalize().map_err(|e| {
        Error::io(
            format!("cannot resolve the manifest's folder {}", dir.display()),
            e,
        )
    })?;

    let mut reader = BufReader::new(file.take(limits.manifest_bytes));
    let mut hasher = Sha256::new();
    let mut problems = Vec::new();
    let mut clips = Vec::new();
    let mut seen_clips: HashMap<String, usize> = HashMap::new();
    let mut seen_questions: HashMap<String, usize> = HashMap::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        let read = limits::read_line(&mut reader, &mut buf, max_line, |b| hasher.update(b))
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        if read == Line::End {
            break;
        }
        line_no += 1;
        if read == Line::TooLong {
            problems.push(LineError::new(
                line_no,
                None,
                format!(
                    "the line is longer than the limit of {} (set TANDEM_MAX_LINE_BYTES to raise it)",
                    limits::human_bytes(max_line as u64)
                ),
            ));
            continue;
        }
        if problems.len() >= MAX_PROBLEMS {
            problems.push(LineError::new(
                line_no,
                None,
                format!("more problems follow; only the first {MAX_PROBLEMS} are listed"),
            ));
            break;
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim(),
            Err(_) => {
                problems.push(LineError::new(line_no, None, "the line is not UTF-8"));
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        let mut line_problems = Vec::new();
        if let Some(clip) = check_line(
            text,
            line_no,
            &root,
            taxonomy,
            &mut seen_clips,
            &mut seen_questions,
            &mut line_problems,
        ) && line_problems.is_empty()
        {
            clips.push(clip);
        }
        problems.extend(line_problems);
    }
    if problems.is_empty() {
        // Each distinct video once, in the manifest's order.
        let mut seen = std::collections::HashSet::new();
        let distinct: Vec<PathBuf> = clips
            .iter()
            .filter(|c| seen.insert(c.source_path.clone()))
            .map(|c| c.source_path.clone())
            .collect();
        let results = inspect(&distinct);
        let by_path: HashMap<&PathBuf, &Inspected> = distinct.iter().zip(&results).collect();
        clips.retain_mut(|c| match by_path.get(&c.source_path) {
            Some(Ok((media, timing))) => {
                c.media = media.clone();
                c.timing = *timing;
                true
            }
            Some(Err(m)) => {
                problems.push(LineError::new(
                    c.line,
                    Some("file"),
                    format!("video `{}` {m}", c.file),
                ));
                false
            }
            None => false,
        });
    }
    if clips.is_empty() && problems.is_empty() {
        problems.push(LineError::new(
            line_no.max(1),
            None,
            "the manifest holds no clips",
        ));
    }
    if !problems.is_empty() {
        return Err(Error::Rejected(Rejected {
            what: format!("manifest {}", path.display()),
            problems,
        }));
    }
    Ok(CheckedManifest {
        path: path.to_path_buf(),
        sha256: crate::auth::hex(&hasher.finalize()),
        clips,
    })
}

/// The protocol's declared fields of a clip line: shown as text, so each one a string, a
/// number or true/false; a required one given.
fn declared_fields(
    obj: &serde_json::Map<String, Value>,
    taxonomy: &Taxonomy,
    push: &mut impl FnMut(Option<&str>, String),
) {
    for f in &taxonomy.fields {
        match obj.get(&f.name) {
            None | Some(Value::Null) if f.required => push(
                Some(&f.name),
                format!(
                    "missing `{}` ({}), which the protocol requires",
                    f.name, f.label
                ),
            ),
            Some(Value::String(s)) if f.required && s.trim().is_empty() => {
                push(Some(&f.name), format!("`{}` is empty", f.name));
            }
            Some(Value::Array(_) | Value::Object(_)) => push(
                Some(&f.name),
                format!("`{}` must be a string, a number or true/false", f.name),
            ),
            _ => {}
        }
    }
}

fn check_line(
    text: &str,
    line: usize,
    root: &Path,
    taxonomy: &Taxonomy,
    seen_clips: &mut HashMap<String, usize>,
    seen_questions: &mut HashMap<String, usize>,
    problems: &mut Vec<LineError>,
) -> Option<ManifestClip> {
    let mut push = |field: Option<&str>, msg: String| {
        problems.push(LineError::new(line, field, msg));
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            push(None, format!("invalid JSON: {e}"));
            return None;
        }
    };
    if let Err((field, message)) = crate::domain::text::check_json(&value) {
        push(Some(&field), message);
        return None;
    }
    let Value::Object(obj) = value else {
        push(None, "a line must hold one JSON object".into());
        return None;
    };

    let clip_id = required_str(&obj, "clip_id", &mut push);
    if let Some(id) = &clip_id {
        if let Err(m) = check_identifier("clip_id", id) {
            push(Some("clip_id"), m);
        } else if let Some(first) = seen_clips.insert(id.clone(), line) {
            push(
                Some("clip_id"),
                format!("duplicate clip_id `{id}` (first on line {first})"),
            );
        }
    }
    let task = required_str(&obj, "task", &mut push);
    if let Some(t) = &task
        && taxonomy.task(t).is_none()
    {
        let codes: Vec<&str> = taxonomy.tasks.iter().map(|t| t.code.as_str()).collect();
        push(
            Some("task"),
            format!("unknown task `{t}` (the taxonomy has {})", codes.join(", ")),
        );
    }
    for key in ["theme", "generator"] {
        if let Some(v) = obj.get(key)
            && !v.is_string()
            && !v.is_null()
        {
            push(Some(key), format!("`{key}` must be a string"));
        }
    }
    for key in ["scene_graph", "scenario"] {
        if let Some(v) = obj.get(key)
            && !v.is_object()
            && !v.is_null()
        {
            push(Some(key), format!("`{key}` must be a JSON object"));
        }
    }
    declared_fields(&obj, taxonomy, &mut push);

    let file = required_str(&obj, "file", &mut push);
    let mut located = None;
    if let Some(f) = &file {
        // The video itself is read once every line is checked (`check_manifest_with`).
        match locate(root, f) {
            Ok(p) => located = Some(p),
            Err(m) => push(Some("file"), m),
        }
    }

    let (calibration, known) = clip_verdicts(&obj, taxonomy, &mut push);
    let mut questions = Vec::new();
    match obj.get("questions") {
        Some(Value::Array(items)) => {
            check_pairs(items, taxonomy, &mut push);
            for (i, q) in items.iter().enumerate() {
                if let Some(q) = check_question(
                    q,
                    i,
                    task.as_deref(),
                    taxonomy,
                    line,
                    seen_questions,
                    &mut push,
                ) {
                    if q.calibration.is_some() && calibration.is_none() && taxonomy.clip_review {
                        push(
                            Some(&format!("questions[{i}].calibration")),
                            "a question has a known verdict only on a calibration clip (give the clip its own `calibration` too)".into(),
                        );
                    }
                    if q.known.is_some() && (calibration.is_some() || q.calibration.is_some()) {
                        push(
                            Some(&format!("questions[{i}].known")),
                            "a question of a calibration clip is held out for calibration; a known item of the live queue is a question of a clip under review".into(),
                        );
                    }
                    questions.push(q);
                }
            }
            all_or_none_held_out(&questions, taxonomy, &mut push);
        }
        Some(_) => push(Some("questions"), "`questions` must be an array".into()),
        None => push(
            Some("questions"),
            "missing `questions` (use [] for a clip without questions)".into(),
        ),
    }

    let (clip_id, task, file, source_path) = (clip_id?, task?, file?, located?);
    if obj.get("calibration").is_some_and(|v| !v.is_null()) && calibration.is_none() {
        return None;
    }
    if obj.get("known").is_some_and(|v| !v.is_null()) && known.is_none() {
        return None;
    }
    let mut rest = obj;
    rest.remove("file");
    Some(ManifestClip {
        line,
        clip_id,
        task,
        file,
        source_path,
        media: Media {
            sha256: String::new(),
            size: 0,
            media_type: "",
        },
        fields: canonical_json(&Value::Object(rest)),
        questions,
        calibration,
        known,
        timing: TimingRead::NotTried,
        copy_of: None,
    })
}

/// Linked questions: a `pair` key names the two questions of one pair (the same
/// question asked in both directions), of one QA type; a QA type whose questions come
/// in pairs needs it on each.
fn check_pairs(items: &[Value], taxonomy: &Taxonomy, push: &mut impl FnMut(Option<&str>, String)) {
    let mut pairs: std::collections::BTreeMap<&str, Vec<(usize, Option<&str>)>> =
        Default::default();
    for (i, q) in items.iter().enumerate() {
        match q.get("pair") {
            None | Some(Value::Null) => {}
            Some(Value::String(key)) => match check_identifier("a pair key", key) {
                Ok(()) => pairs
                    .entry(key.as_str())
                    .or_default()
                    .push((i, q.get("qa_type").and_then(Value::as_str))),
                Err(m) => push(Some(&format!("questions[{i}].pair")), m),
            },
            Some(_) => push(
                Some(&format!("questions[{i}].pair")),
                "`pair` must be a string, the key the pair's two questions share".into(),
            ),
        }
    }
    // A QA type whose questions come in pairs: each names its pair.
    for (i, q) in items.iter().enumerate() {
        let qa = q.get("qa_type").and_then(Value::as_str);
        let unlinked = matches!(q.get("pair"), None | Some(Value::Null));
        if let Some(def) = qa
            .and_then(|c| taxonomy.qa_type(c))
            .filter(|d| d.paired && unlinked)
        {
            push(
                Some(&format!("questions[{i}].pair")),
                format!(
                    "QA type `{}` asks its questions in linked pairs (both directions): give this question the `pair` key it shares with its reverse",
                    def.code
                ),
            );
        }
    }
    for (key, members) in &pairs {
        let (first, qa) = members[0];
        if members.len() != 2 {
            push(
                Some(&format!("questions[{first}].pair")),
                format!(
                    "pair `{key}` links {} question(s) of this clip; a pair links exactly two (one question asked in both directions)",
                    members.len()
                ),
            );
        } else if members[1].1 != qa {
            push(
                Some(&format!("questions[{}].pair", members[1].0)),
                format!("the two questions of pair `{key}` have different QA types"),
            );
        }
    }
}

/// A clip's own known verdicts: as a calibration clip, or as a known item of the live
/// queue (not both; neither in a protocol that reviews no clips).
fn clip_verdicts(
    obj: &Map<String, Value>,
    taxonomy: &Taxonomy,
    push: &mut impl FnMut(Option<&str>, String),
) -> (Option<CheckedVerdict>, Option<CheckedVerdict>) {
    let calibration = match obj.get("calibration") {
        None | Some(Value::Null) => None,
        Some(_) if !taxonomy.clip_review => {
            push(
                Some("calibration"),
                "the protocol reviews no clips (clip_review = false): a calibration clip has no verdict of its own; give each of its questions its known verdict".into(),
            );
            None
        }
        Some(v) => match known_verdict(taxonomy, v, Stage::Clip, None) {
            Ok(k) => Some(k),
            Err((f, m)) => {
                push(Some(&format!("calibration{f}")), m);
                None
            }
        },
    };
    // A known item of the live queue: reviewed by its pair like any clip, its verdicts
    // scored against this one and never counted in the benchmark.
    let known = match obj.get("known") {
        None | Some(Value::Null) => None,
        Some(_) if !taxonomy.clip_review => {
            push(
                Some("known"),
                "the protocol reviews no clips (clip_review = false): a clip has no verdict of its own; give a question its known verdict".into(),
            );
            None
        }
        Some(_) if calibration.is_some() => {
            push(
                Some("known"),
                "a clip is a calibration clip or a known item of the live queue, not both".into(),
            );
            None
        }
        Some(v) => match known_verdict(taxonomy, v, Stage::Clip, None) {
            Ok(k) => Some(k),
            Err((f, m)) => {
                push(Some(&format!("known{f}")), m);
                None
            }
        },
    };
    (calibration, known)
}

/// Without clip review a clip is held out for calibration by its questions' known
/// verdicts: all of them, or none.
fn all_or_none_held_out(
    questions: &[ManifestQuestion],
    taxonomy: &Taxonomy,
    push: &mut impl FnMut(Option<&str>, String),
) {
    if !taxonomy.clip_review
        && questions.iter().any(|q| q.calibration.is_some())
        && let Some(i) = questions.iter().position(|q| q.calibration.is_none())
    {
        push(
            Some(&format!("questions[{i}].calibration")),
            "missing: a question of this clip has a known verdict, so the clip is a calibration clip and each of its questions needs one".into(),
        );
    }
}

fn required_str(
    obj: &Map<String, Value>,
    key: &str,
    push: &mut impl FnMut(Option<&str>, String),
) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::String(_)) => {
            push(Some(key), format!("`{key}` is empty"));
            None
        }
        Some(_) => {
            push(Some(key), format!("`{key}` must be a string"));
            None
        }
        None => {
            push(Some(key), format!("missing `{key}`"));
            None
        }
    }
}

fn check_question(
    q: &Value,
    index: usize,
    task: Option<&str>,
    taxonomy: &Taxonomy,
    line: usize,
    seen: &mut HashMap<String, usize>,
    push: &mut impl FnMut(Option<&str>, String),
) -> Option<ManifestQuestion> {
    let at = |f: &str| format!("questions[{index}].{f}");
    let Value::Object(obj) = q else {
        push(
            Some(&format!("questions[{index}]")),
            "a question must be a JSON object".into(),
        );
        return None;
    };
    // Problems of this question: (field, message).
    let mut errs: Vec<(String, String)> = Vec::new();
    let get_str = |key: &str, errs: &mut Vec<(String, String)>| match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::String(_)) => {
            errs.push((at(key), format!("`{key}` is empty")));
            None
        }
        Some(_) => {
            errs.push((at(key), format!("`{key}` must be a string")));
            None
        }
        None => {
            errs.push((at(key), format!("missing `{key}`")));
            None
        }
    };
    let question_id = get_str("question_id", &mut errs);
    let qa_type = get_str("qa_type", &mut errs);
    let text = get_str("question", &mut errs);
    if let Some(id) = &question_id {
        if let Err(m) = check_identifier("question_id", id) {
            errs.push((at("question_id"), m));
        } else if let Some(first) = seen.insert(id.clone(), line) {
            errs.push((
                at("question_id"),
                format!("duplicate question_id `{id}` (first on line {first})"),
            ));
        }
    }
    let mut level = None;
    if let Some(code) = &qa_type {
        match taxonomy.qa_type(code) {
            None => {
                let codes: Vec<&str> = taxonomy.qa_types.iter().map(|q| q.code.as_str()).collect();
                errs.push((
                    at("qa_type"),
                    format!(
                        "unknown QA type `{code}` (the taxonomy has {})",
                        codes.join(", ")
                    ),
                ));
            }
            Some(def) => {
                level = Some(def.level.clone());
                if let Some(task) = task
                    && taxonomy.task(task).is_some()
                    && !taxonomy.applies(task, code)
                {
                    errs.push((
                        at("qa_type"),
                        format!(
                            "QA type `{code}` does not apply to task `{task}` (see the applicability matrix)"
                        ),
                    ));
                }
            }
        }
    }
    let options = check_options(obj.get("options"), &at("options"), &mut errs);
    let answer = check_answer(obj.get("answer"), options.len(), &at("answer"), &mut errs);
    let calibration = match (obj.get("calibration"), &level) {
        (None | Some(Value::Null), _) => None,
        (Some(v), level) => match known_verdict(taxonomy, v, Stage::Question, level.as_ref()) {
            Ok(k) => Some(k),
            Err((f, m)) => {
                errs.push((at(&format!("calibration{f}")), m));
                None
            }
        },
    };
    let known = match (obj.get("known"), &level) {
        (None | Some(Value::Null), _) => None,
        (Some(v), level) => match known_verdict(taxonomy, v, Stage::Question, level.as_ref()) {
            Ok(k) => Some(k),
            Err((f, m)) => {
                errs.push((at(&format!("known{f}")), m));
                None
            }
        },
    };
    if !errs.is_empty() {
        for (f, m) in errs {
            push(Some(&f), m);
        }
        return None;
    }
    Some(ManifestQuestion {
        question_id: question_id?,
        qa_type: qa_type?,
        level: level?,
        question: text?,
        options,
        answer: answer?,
        calibration,
        known,
    })
}

/// A question's options: at least two non-empty strings, no two the same.
fn check_options(
    value: Option<&Value>,
    field: &str,
    errs: &mut Vec<(String, String)>,
) -> Vec<String> {
    let mut options = Vec::new();
    match value {
        Some(Value::Array(list)) => {
            if list.len() < 2 {
                errs.push((
                    field.to_string(),
                    "a question needs at least 2 options".into(),
                ));
            }
            let mut seen_opts: HashMap<String, usize> = HashMap::new();
            for (i, o) in list.iter().enumerate() {
                match o {
                    Value::String(s) if !s.trim().is_empty() => {
                        if let Some(first) = seen_opts.insert(s.trim().to_lowercase(), i) {
                            errs.push((
                                field.to_string(),
                                format!("options {first} and {i} are the same (`{}`)", s.trim()),
                            ));
                        }
                        options.push(s.trim().to_string());
                    }
                    _ => errs.push((
                        field.to_string(),
                        format!("option {i} must be a non-empty string"),
                    )),
                }
            }
        }
        Some(_) => errs.push((
            field.to_string(),
            "`options` must be an array of strings".into(),
        )),
        None => errs.push((field.to_string(), "missing `options`".into())),
    }
    options
}

/// A question's answer: the 0-based index of one of its `n_options` options.
fn check_answer(
    value: Option<&Value>,
    n_options: usize,
    field: &str,
    errs: &mut Vec<(String, String)>,
) -> Option<usize> {
    match value {
        // A number beyond usize is past every option: reported as not an option below.
        Some(Value::Number(n)) => match n.as_u64().and_then(|a| usize::try_from(a).ok()) {
            Some(a) if a < n_options => Some(a),
            Some(a) => {
                errs.push((
                    field.to_string(),
                    format!(
                        "answer index {a} is outside the {} options (indexes start at 0)",
                        n_options
                    ),
                ));
                None
            }
            None => {
                errs.push((
                    field.to_string(),
                    format!("answer must be a whole number from 0, not {n}"),
                ));
                None
            }
        },
        Some(_) => {
            errs.push((
                field.to_string(),
                "answer must be the 0-based index of the correct option".into(),
            ));
            None
        }
        None => {
            errs.push((field.to_string(), "missing `answer`".into()));
            None
        }
    }
}

/// A known verdict: `{"verdict": "valid"|"reject", "reasons": [...], "note": "..."}`,
/// held to the same rules as a validator's. Errors name the sub-field (`.verdict`, ...).
fn known_verdict(
    taxonomy: &Taxonomy,
    v: &Value,
    stage: Stage,
    level: Option<&Level>,
) -> Result<CheckedVerdict, (String, String)> {
    let Value::Object(o) = v else {
        return Err((
            String::new(),
            "must be an object with a known `verdict`".into(),
        ));
    };
    let verdict = match o.get("verdict") {
        Some(Value::String(s)) => Verdict::parse(s).map_err(|m| (".verdict".to_string(), m))?,
        _ => {
            return Err((
                ".verdict".into(),
                "missing the known `verdict` (valid or reject)".into(),
            ));
        }
    };
    let reasons: Vec<String> = match o.get("reasons") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or((
                ".reasons".to_string(),
                "reasons must be strings".to_string(),
            ))?,
        Some(_) => return Err((".reasons".into(), "`reasons` must be an array".into())),
    };
    let note = match o.get("note") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err((".note".into(), "`note` must be a string".into())),
    };
    let mut known = check_verdict(taxonomy, stage, level, verdict, &reasons, &note)
        .map_err(|e| (format!(".{}", e.field), e.message))?;
    match o.get("flaw") {
        None | Some(Value::Null) => {}
        Some(f) => {
            if verdict != Verdict::Reject {
                return Err((
                    ".flaw".into(),
                    "only a known `reject` has a flaw to point at".into(),
                ));
            }
            known.flaw = Some(
                crate::domain::video::Flaw::parse(f)
                    .map_err(|(at, m)| (format!(".flaw{at}"), m))?,
            );
        }
    }
    Ok(known)
}

/// Resolves a manifest path inside `root`, refusing anything that leaves it
/// (absolute paths, `..` that climbs out, symbolic links that point outside).
pub fn locate(root: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    let p = Path::new(rel);
    if p.is_absolute() || rel.starts_with('\\') {
        return Err(format!(
            "`{rel}` is an absolute path; paths are relative to the manifest's folder"
        ));
    }
    let mut depth = 0i32;
    for c in p.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return Err(format!("`{rel}` is not a plain relative path")),
        }
        if depth < 0 {
            return Err(format!("`{rel}` leaves the manifest's folder"));
        }
    }
    let joined = root.join(p);
    let real = joined
        .canonicalize()
        .map_err(|e| format!("video `{rel}` cannot be opened: {}", describe_io(&e)))?;
    if !real.starts_with(root) {
        return Err(format!(
            "`{rel}` leaves the manifest's folder (through a symbolic link)"
        ));
    }
    Ok(real)
}

pub(crate) fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Opens a video, recognises its container and hashes it.
pub fn inspect_media(path: &Path) -> std::result::Result<Media, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot be read: {}", describe_io(&e)))?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() == 0 {
        return Err("is empty".into());
    }
    let mut f = File::open(path).map_err(|e| format!("cannot be read: {}", describe_io(&e)))?;
    let mut head = [0u8; 64];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(format!("cannot be read: {}", describe_io(&e))),
        }
    }
    let media_type = sniff_video(&head[..got]).ok_or(
        "is not a recognised video (MP4, QuickTime, WebM, Matroska, Ogg or AVI)".to_string(),
    )?;
    let mut hasher = Sha256::new();
    hasher.update(&head[..got]);
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = got as u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                size += n as u64;
            }
            Err(e) => return Err(format!("cannot be read: {}", describe_io(&e))),
        }
    }
    Ok(Media {
        sha256: crate::auth::hex(&hasher.finalize()),
        size,
        media_type,
    })
}

/// The media type of a video from its first bytes, if it is one Tandem serves (one of
/// `domain::import::MEDIA_TYPES`, which a stored clip's copy is read back as).
pub fn sniff_video(head: &[u8]) -> Option<&'static str> {
    sniffed(head).and_then(crate::domain::import::media_type)
}

fn sniffed(head: &[u8]) -> Option<&'static str> {
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return Some(if &head[8..12] == b"qt  " {
            "video/quicktime"
        } else {
            "video/mp4"
        });
    }
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        let is_webm = head.windows(4).any(|w| w == b"webm");
        return Some(if is_webm {
            "video/webm"
        } else {
            "video/x-matroska"
        });
    }
    if head.starts_with(b"OggS") {
        return Some("video/ogg");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"AVI " {
        return Some("video/x-msvideo");
    }
    None
}

/// The file extension for a media type Tandem stores.
pub fn extension_for(media_type: &str) -> &'static str {
    match media_type {
        "video/quicktime" => "mov",
        "video/webm" => "webm",
        "video/x-matroska" => "mkv",
        "video/ogg" => "ogv",
        "video/x-msvideo" => "avi",
        _ => "mp4",
    }
}

/// JSON with object keys sorted at every depth, so that equal content gives equal text.
pub fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_common_containers() {
        assert_eq!(
            sniff_video(b"\0\0\0\x18ftypisom\0\0\0\0"),
            Some("video/mp4")
        );
        assert_eq!(
            sniff_video(b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01webm"),
            Some("video/webm")
        );
        assert_eq!(sniff_video(b"hello world, not a video"), None);
    }

    #[test]
    fn paths_that_leave_the_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert!(locate(&root, "../x.mp4").unwrap_err().contains("leaves"));
        assert!(
            locate(&root, "a/../../x.mp4")
                .unwrap_err()
                .contains("leaves")
        );
        assert!(
            locate(&root, "/etc/passwd")
                .unwrap_err()
                .contains("absolute")
        );
        assert!(
            locate(&root, "missing.mp4")
                .unwrap_err()
                .contains("does not exist")
        );
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":[{"f":1,"e":0}]}}"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"c":[{"e":0,"f":1}],"d":2},"b":1}"#
        );
    }
}
