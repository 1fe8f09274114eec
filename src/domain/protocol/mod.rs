//! A benchmark's QC protocol, read from a TOML file: its tasks (with free attributes),
//! its QA types and their levels, and which QA types apply to which task. VGenST-Bench's
//! ships as `protocols/vgenst.toml`, embedded, and is the default.
//!
//! ```toml
//! [protocol]
//! name = "GLIMPSE-like"
//! version = 1
//! target_per_task = 50                  # optional: retained clips wanted per task
//! export_variants = false               # optional: no V1/V2/V3 in the export
//! clip_review = false                   # optional: no Stage 1 (then no stage = 1 reasons)
//! pairing = "least_open_work"           # optional: or "task_pairs" (the default)
//! levels = ["L1", "L2", "L3"]            # optional: the QA levels (these by default)
//!
//! [[task]]
//! code = "TRJ"
//! name = "Trajectory Analysis"
//! short = "TR"                          # optional: its label in a table's cell (the code)
//! attributes = { source = "real" }      # free: any names, text values, shown in this order
//! qa_types = ["YN", "MC"]               # the QA types that apply to the task
//!
//! [[qa_type]]
//! code = "YN"
//! name = "Yes/No"
//! level = "L1"                          # one of the protocol's levels
//! paired = true                         # optional: its questions come in linked pairs
//!
//! [[reason]]                            # each stage has at least one
//! stage = 2                             # 1: clip review, 2: question review
//! code = "single_frame_solvable"        # as stored and sent by the API
//! label = "Single-frame solvable"       # as shown
//! key = 3                               # its digit on the review page, 1-9, one per stage
//! levels = ["L3"]                       # optional (Stage 2): the levels it applies to
//! note = false                          # optional: whether it needs a note
//!
//! [[sampling]]                          # optional: a stratum reviewed by sample
//! stage = 2                             # 1: a task's clips; 2: a task's questions
//! task = "TRJ"                          # optional: every task when left out
//! qa_type = "YN"                        # optional (Stage 2): every QA type when left out
//! aql = 0.02                            # the plan: the four risks ...
//! rql = 0.10
//! alpha = 0.05
//! beta = 0.10
//! # p = 0.05                            # ... or no defect shows the rate below p
//! # n = 50                              # ... or the lab's own n and c
//! # c = 1
//! confidence = 0.95                     # optional: of each lot's upper bound
//!
//! [[field]]                             # optional: a clip's manifest field to show
//! name = "camera"                       # its key in the manifest
//! label = "Camera"                      # as shown beside the clip
//! required = true                       # optional: every clip line must give it
//!
//! [tables]                              # optional: Table 11's layout, the tables' names
//! t11 = { rows = "source", row_title = "source of the video" }  # rows: an attribute of every task
//! names = { t11 = "Table 1" }           # the others keep their generic names
//! ```
//!
//! A file is checked whole: every problem comes back at once, each with its line and
//! field; nothing of a file with a problem is used. Two reviewers per item and the
//! intersection rule are Tandem's invariants, not settings of a protocol. A protocol
//! reviews clips, then their questions, or (`clip_review = false`) the questions alone;
//! a stratum is reviewed whole or by sample (`domain::sampling`: a rule applies to the
//! items imported while it is in force). `pairing` chooses each item's two reviewers
//! (`domain::pairing`): the task pairs of the pool (task t to pool indexes t and t+1,
//! mod n; the default, VGenST-Bench's), or per clip the two validators with the least
//! open work when it enters review.

mod change;
mod header;
mod raw;
mod reasons;
mod sampling;
mod tables;
mod tasks;
#[cfg(test)]
mod tests;

pub use change::{InUse, change_problems};

use super::taxonomy::Taxonomy;
use raw::RawFile;

/// The VGenST-Bench protocol, as shipped.
pub const VGENST: &str = include_str!("../../../protocols/vgenst.toml");

/// The protocols that ship with Tandem, by name: VGenST-Bench's and the examples'
/// (`examples/protocols/`), which `tandem demo --protocol NAME` runs on.
pub const SHIPPED: [(&str, &str); 3] = [
    ("vgenst", VGENST),
    (
        "glimpse",
        include_str!("../../../examples/protocols/glimpse.toml"),
    ),
    (
        "tumtraffic",
        include_str!("../../../examples/protocols/tumtraffic.toml"),
    ),
];

/// The shipped protocol named `name`, if there is one.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The most tasks, and the most QA types, a protocol may declare.
pub const MAX_ENTRIES: usize = 1000;

/// The largest sample a fixed plan may ask for.
pub const MAX_SAMPLE: i64 = 1_000_000;

/// A checked protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    pub name: String,
    pub version: u32,
    pub description: String,
    /// Retained clips wanted per task, for a campaign created with it (the admin may
    /// change it later); none: Tandem's default, 100.
    pub target_per_task: Option<i64>,
    pub taxonomy: Taxonomy,
}

/// One problem of a protocol file: where (line, from 1; the field's path, such as
/// `task[3].qa_types[1]`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolProblem {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ProtocolProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "line {}, {}: {}", self.line, self.field, self.message)
        }
    }
}

/// The problems found in a file's text so far, each placed at the line of its span.
struct Problems<'t> {
    text: &'t str,
    found: Vec<ProtocolProblem>,
}

impl Problems<'_> {
    fn push(
        &mut self,
        span: std::ops::Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.found.push(ProtocolProblem {
            line: line_of(self.text, span.start),
            field: field.into(),
            message: message.into(),
        });
    }

    fn count(&self) -> usize {
        self.found.len()
    }
}

/// The line (from 1) of a byte offset in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Reads and checks a protocol file's text, section by section (each names what the
/// ones after it may use: the levels, then the QA types, then the tasks).
pub fn parse(text: &str) -> Result<Protocol, Vec<ProtocolProblem>> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        vec![ProtocolProblem {
            line,
            field: String::new(),
            message: e.message().trim().to_string(),
        }]
    })?;
    let mut problems = Problems {
        text,
        found: Vec::new(),
    };
    let header = header::header(&raw, &mut problems);
    let levels = header::levels(raw.protocol.get_ref(), &mut problems);
    let (qa_types, qa_codes) = tasks::qa_types(&raw.qa_type, &levels, &mut problems);
    let tasks = tasks::tasks(&raw.task, &qa_codes, &mut problems);
    let reasons = reasons::reasons(&raw, header.clip_review, &levels, &mut problems);
    let declared = sampling::Declared {
        clip_review: header.clip_review,
        tasks: &tasks.codes,
        qa_types: &qa_codes,
        applicability: &tasks.applicability,
    };
    let sampling = sampling::rules(&raw.sampling, &declared, &mut problems);
    let tables = tables::tables(raw.tables.as_ref(), &tasks.tasks, &mut problems);
    let fields = tables::fields(&raw.field, &mut problems);
    let mut problems = problems.found;
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(problems);
    }
    Ok(Protocol {
        name: header.name.clone(),
        version: header.version,
        description: header.description,
        target_per_task: header.target_per_task,
        taxonomy: Taxonomy {
            name: header.name,
            tasks: tasks.tasks,
            qa_types,
            applicability: tasks.applicability,
            variants: header.variants,
            reasons,
            clip_review: header.clip_review,
            sampling,
            pairing: header.pairing,
            levels,
            tables,
            fields,
        },
    })
}

/// The shipped VGenST-Bench protocol.
pub fn vgenst() -> Protocol {
    match parse(VGENST) {
        Ok(p) => p,
        // The shipped file is checked by the tests: it cannot fail here.
        Err(problems) => unreachable!("protocols/vgenst.toml: {problems:?}"),
    }
}

impl Taxonomy {
    /// The taxonomy of VGenST-Bench (SPEC section 10), from the shipped protocol file,
    /// read once.
    pub fn vgenst() -> Taxonomy {
        Taxonomy::vgenst_ref().clone()
    }

    /// The same, borrowed for the life of the program.
    pub fn vgenst_ref() -> &'static Taxonomy {
        static READ: std::sync::OnceLock<Taxonomy> = std::sync::OnceLock::new();
        READ.get_or_init(|| vgenst().taxonomy)
    }
}
