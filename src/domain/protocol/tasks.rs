//! The `[[qa_type]]` and `[[task]]` entries checked: codes declared once, names given,
//! a QA type's level among the protocol's, a task's QA types among those declared (its
//! row of the applicability matrix).

use super::Problems;
use super::header::unknown_level;
use super::raw::{RawQaType, RawTask};
use crate::domain::Level;
use crate::domain::check_identifier;
use crate::domain::taxonomy::{QaTypeDef, TaskDef};
use std::collections::{BTreeMap, HashSet};
use toml::Spanned;

/// The checked QA types, and the codes declared (those of the types with a problem too,
/// so that a task naming one is not reported twice).
pub(super) fn qa_types(
    raw: &[Spanned<RawQaType>],
    levels: &[Level],
    problems: &mut Problems,
) -> (Vec<QaTypeDef>, HashSet<String>) {
    let mut qa_types = Vec::new();
    let mut codes = HashSet::new();
    for (i, q) in raw.iter().enumerate() {
        let q = q.get_ref();
        let at = |f: &str| format!("qa_type[{}].{f}", i + 1);
        let code = q.code.get_ref();
        if let Err(m) = check_identifier("the code", code) {
            problems.push(q.code.span(), at("code"), m);
        } else if !codes.insert(code.clone()) {
            problems.push(
                q.code.span(),
                at("code"),
                format!("QA type `{code}` is declared twice"),
            );
        }
        if q.name.get_ref().trim().is_empty() {
            problems.push(q.name.span(), at("name"), "is empty");
        }
        match levels.iter().find(|l| l.as_str() == q.level.get_ref()) {
            Some(level) => qa_types.push(QaTypeDef {
                paired: q.paired,
                code: code.clone(),
                name: q.name.get_ref().trim().to_string(),
                level: level.clone(),
            }),
            None => problems.push(
                q.level.span(),
                at("level"),
                unknown_level(levels, q.level.get_ref()),
            ),
        }
    }
    (qa_types, codes)
}

/// The checked tasks, in order.
pub(super) struct Tasks {
    pub tasks: Vec<TaskDef>,
    /// Task code -> the QA types that apply to it.
    pub applicability: BTreeMap<String, Vec<String>>,
    /// The codes declared.
    pub codes: HashSet<String>,
}

pub(super) fn tasks(
    raw: &[Spanned<RawTask>],
    qa_codes: &HashSet<String>,
    problems: &mut Problems,
) -> Tasks {
    let mut out = Tasks {
        tasks: Vec::new(),
        applicability: BTreeMap::new(),
        codes: HashSet::new(),
    };
    for (i, t) in raw.iter().enumerate() {
        let t = t.get_ref();
        let at = |f: &str| format!("task[{}].{f}", i + 1);
        let code = t.code.get_ref();
        if let Err(m) = check_identifier("the code", code) {
            problems.push(t.code.span(), at("code"), m);
        } else if !out.codes.insert(code.clone()) {
            problems.push(
                t.code.span(),
                at("code"),
                format!("task `{code}` is declared twice"),
            );
        }
        if t.name.get_ref().trim().is_empty() {
            problems.push(t.name.span(), at("name"), "is empty");
        }
        let short = t.short.as_ref().map_or_else(String::new, |s| {
            let text = s.get_ref().trim();
            if text.is_empty() {
                problems.push(
                    s.span(),
                    at("short"),
                    "is empty (leave it out for the code)",
                );
            }
            text.to_string()
        });
        let attributes = attributes(t, &at, problems);
        let applies = applicable(t, qa_codes, &at, problems);
        out.applicability.insert(code.clone(), applies);
        out.tasks.push(TaskDef {
            code: code.clone(),
            name: t.name.get_ref().trim().to_string(),
            short,
            attributes,
        });
    }
    out
}

/// A task's attributes, in the order the file gives them: each name an identifier,
/// each value text.
fn attributes(
    t: &RawTask,
    at: &dyn Fn(&str) -> String,
    problems: &mut Problems,
) -> Vec<(String, String)> {
    let mut named: Vec<_> = t.attributes.iter().collect();
    named.sort_by_key(|(k, _)| k.span().start);
    let mut attributes = Vec::new();
    for (k, v) in named {
        let k = k.get_ref();
        if let Err(m) = check_identifier("an attribute's name", k) {
            problems.push(v.span(), at("attributes"), m);
        }
        if v.get_ref().trim().is_empty() {
            problems.push(v.span(), at(&format!("attributes.{k}")), "is empty");
        }
        attributes.push((k.clone(), v.get_ref().trim().to_string()));
    }
    attributes
}

/// A task's QA types: each declared, none twice.
fn applicable(
    t: &RawTask,
    qa_codes: &HashSet<String>,
    at: &dyn Fn(&str) -> String,
    problems: &mut Problems,
) -> Vec<String> {
    let mut applies: Vec<String> = Vec::new();
    for (j, q) in t.qa_types.get_ref().iter().enumerate() {
        let field = at(&format!("qa_types[{}]", j + 1));
        if !qa_codes.contains(q.get_ref()) {
            problems.push(
                q.span(),
                field,
                format!(
                    "names QA type `{}`, which no [[qa_type]] declares",
                    q.get_ref()
                ),
            );
        } else if applies.contains(q.get_ref()) {
            problems.push(
                q.span(),
                field,
                format!("names QA type `{}` twice", q.get_ref()),
            );
        } else {
            applies.push(q.get_ref().clone());
        }
    }
    applies
}
