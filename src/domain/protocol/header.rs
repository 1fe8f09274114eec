//! The `[protocol]` section checked: the protocol's name and version, its target, its
//! stages, its pairing rule and its QA levels.

use super::raw::{RawFile, RawHeader};
use super::{MAX_ENTRIES, Problems};
use crate::domain::Level;
use crate::domain::pairing::Pairing;

/// The largest target per task a protocol may set.
const MAX_TARGET: i64 = 1_000_000;

/// What `[protocol]` says, checked (a value with a problem is replaced by a harmless one:
/// the problem is reported and the protocol not used).
pub(super) struct Header {
    pub name: String,
    pub version: u32,
    pub description: String,
    pub target_per_task: Option<i64>,
    pub variants: bool,
    pub clip_review: bool,
    pub pairing: Pairing,
}

/// Checks `[protocol]`, and that the file declares at least one task and not too many
/// tasks or QA types.
pub(super) fn header(raw: &RawFile, problems: &mut Problems) -> Header {
    let header = raw.protocol.get_ref();
    // A missing name or version is said at `[protocol]`, beside every other problem.
    let name = match &header.name {
        Some(name) => {
            let text = name.get_ref().trim().to_string();
            if text.is_empty() {
                problems.push(name.span(), "protocol.name", "is empty");
            }
            text
        }
        None => {
            problems.push(raw.protocol.span(), "protocol.name", "is missing");
            String::new()
        }
    };
    let version = match &header.version {
        Some(version) => match u32::try_from(*version.get_ref()) {
            Ok(v) if v >= 1 => v,
            _ => {
                problems.push(
                    version.span(),
                    "protocol.version",
                    format!("must be a whole number from 1, not {}", version.get_ref()),
                );
                0
            }
        },
        None => {
            problems.push(
                raw.protocol.span(),
                "protocol.version",
                "is missing: a whole number from 1",
            );
            0
        }
    };
    let target_per_task = header.target_per_task.as_ref().and_then(|t| {
        let n = *t.get_ref();
        if (1..=MAX_TARGET).contains(&n) {
            Some(n)
        } else {
            problems.push(
                t.span(),
                "protocol.target_per_task",
                format!("must be a whole number from 1 to {MAX_TARGET}, not {n}"),
            );
            None
        }
    });
    entry_counts(raw, problems);
    Header {
        name,
        version,
        description: header.description.trim().to_string(),
        target_per_task,
        variants: header.export_variants,
        clip_review: header.clip_review.as_ref().is_none_or(|c| *c.get_ref()),
        pairing: pairing(header, problems),
    }
}

/// At least one task; at most [`MAX_ENTRIES`] tasks and as many QA types.
fn entry_counts(raw: &RawFile, problems: &mut Problems) {
    if raw.task.is_empty() {
        problems.push(
            raw.protocol.span(),
            "task",
            "the protocol declares no task ([[task]])",
        );
    }
    if raw.task.len() > MAX_ENTRIES {
        problems.push(
            raw.task[MAX_ENTRIES].span(),
            "task",
            format!("more than {MAX_ENTRIES} tasks"),
        );
    }
    if raw.qa_type.len() > MAX_ENTRIES {
        problems.push(
            raw.qa_type[MAX_ENTRIES].span(),
            "qa_type",
            format!("more than {MAX_ENTRIES} QA types"),
        );
    }
}

fn pairing(header: &RawHeader, problems: &mut Problems) -> Pairing {
    match &header.pairing {
        None => Pairing::TaskPairs,
        Some(p) => Pairing::parse(p.get_ref()).unwrap_or_else(|| {
            problems.push(
                p.span(),
                "protocol.pairing",
                format!(
                    "must be `task_pairs` (task t to pool indexes t and t+1, mod n) or `least_open_work` (each clip to the two validators with the least open work), not `{}`",
                    p.get_ref()
                ),
            );
            Pairing::TaskPairs
        }),
    }
}

/// The protocol's QA levels, in order: `protocol.levels`, or VGenST-Bench's L1, L2 and
/// L3 when it is left out.
pub(super) fn levels(header: &RawHeader, problems: &mut Problems) -> Vec<Level> {
    let Some(ls) = &header.levels else {
        return Level::vgenst();
    };
    if ls.get_ref().is_empty() {
        problems.push(
            ls.span(),
            "protocol.levels",
            "is empty: a protocol has at least one level (leave it out for L1, L2 and L3)",
        );
    }
    let mut declared: Vec<Level> = Vec::new();
    for (j, l) in ls.get_ref().iter().enumerate() {
        let field = format!("protocol.levels[{}]", j + 1);
        if let Err(m) = crate::domain::check_identifier("a level", l.get_ref()) {
            problems.push(l.span(), field, m);
        } else if declared.iter().any(|d| d.as_str() == l.get_ref()) {
            problems.push(
                l.span(),
                field,
                format!("names level `{}` twice", l.get_ref()),
            );
        } else {
            declared.push(Level::new(l.get_ref()));
        }
    }
    declared
}

/// The message for a level `code` that `levels` does not hold.
pub(super) fn unknown_level(levels: &[Level], code: &str) -> String {
    let names: Vec<&str> = levels.iter().map(Level::as_str).collect();
    format!(
        "unknown level `{code}` (the protocol's levels are {})",
        names.join(", ")
    )
}
