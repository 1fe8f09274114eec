//! The paper bundle: every table (LaTeX, CSV, JSON), every figure (SVG, PDF, PNG),
//! one LaTeX document that puts them together, the records behind them and a README
//! naming each file and the exact scope. `files` is pure; `collect` reads what it needs
//! from the store, for `tandem export paper` and the Exports page alike.

use super::QcReport;
use super::format::{self, Format, TableId, pretty};
use super::render;
use super::study::{self, StudyReport};
use super::svg::{self, Figure};
use crate::domain::taxonomy::{Table, Tables, Taxonomy};
use crate::error::{Error, Result};
use serde_json::Value;
use std::fmt::Write;

/// One file of the bundle: its path inside the bundle, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    pub path: String,
    pub bytes: Vec<u8>,
    /// What it is, for the README.
    pub what: String,
}

/// Everything the bundle is made of.
pub struct Input<'a> {
    pub campaign: &'a str,
    pub taxonomy: &'a Taxonomy,
    pub qc: &'a QcReport,
    pub study: Option<&'a StudyReport>,
    /// `tandem stats --json` for the same scope.
    pub stats_json: &'a Value,
    pub decisions_csv: Vec<u8>,
    pub resolutions_csv: Vec<u8>,
    pub responses_csv: Option<Vec<u8>>,
    /// The human baseline's tables, once it has answers.
    pub baseline: Option<&'a super::baseline::BaselineReport>,
    /// Table 16: the campaign's groups.
    pub groups: &'a super::baseline::Groups,
    /// Every baseline answer, as `tandem baseline export` writes them.
    pub baseline_csv: Option<Vec<u8>>,
    /// How good the review is (`review_quality` of stats.json).
    pub quality: Option<&'a super::quality::ReviewQualityReply>,
    /// The blind key check's table, once there are blind answers.
    pub blind: Option<&'a super::blind::BlindKeyReply>,
    /// The validators' record on the known items, once one has a verdict.
    pub known: Option<&'a super::known::KnownItemsReply>,
    /// When it was computed, µs since the epoch.
    pub computed: i64,
}

fn file(path: impl Into<String>, bytes: impl Into<Vec<u8>>, what: impl Into<String>) -> BundleFile {
    BundleFile {
        path: path.into(),
        bytes: bytes.into(),
        what: what.into(),
    }
}

/// The README's title of table `t`: "Table 11, Stage 1: ..." where the protocol names
/// the table, its words alone where it does not.
fn table_title(tables: &Tables, t: TableId) -> String {
    let what = match t {
        TableId::T11 => "Stage 1: clips retained per task",
        TableId::T12 => "Stage 2: questions rejected per task and QA type",
        TableId::T13 => "agreement of the validator pairs in both stages",
        TableId::T14 => "blind study: mean rank per source and axis",
        TableId::T15 => "blind study: real-vs-fake judgments per source",
        TableId::T16 => "the annotator pool: the campaign's disjoint groups",
        TableId::Baseline => return "Human baseline: vanilla and circular accuracy".into(),
    };
    t.table().map_or_else(
        || what.to_string(),
        |table| tables.titled(table, ", ", what),
    )
}

/// The figure's caption in the LaTeX document, which ends "(Table 11)" where the figure
/// draws a table the protocol names.
fn figure_caption(tables: &Tables, name: &str) -> String {
    const KAPPA: &str = "Cohen's $\\kappa$ per pair, per task and pair, and pooled, with 95\\% Wald intervals truncated to $[-1, 1]$";
    const QUALITY: &str = "each rater's sensitivity and specificity (Dawid--Skene model anchored by known items, the authors as one more rater), posterior means with 95\\% credible intervals by Markov chain Monte Carlo, or the bounds the data allow where the model is not identified.";
    let (what, table) = match name {
        "t11-retained" => ("Stage 1: clips retained per task".to_string(), Some(Table::T11)),
        "t12-rejected" => (
            "Stage 2: questions rejected per task and QA type".to_string(),
            Some(Table::T12),
        ),
        "t13-kappa-stage1" => (format!("Stage 1: {KAPPA}"), Some(Table::T13)),
        "t13-kappa-stage2" => (format!("Stage 2: {KAPPA}"), Some(Table::T13)),
        "reasons-stage1" => ("Stage 1: reasons given with counted rejects.".to_string(), None),
        "reasons-stage2" => ("Stage 2: reasons given with counted rejects.".to_string(), None),
        "quality-stage1" => (format!("Stage 1: {QUALITY}"), None),
        "quality-stage2" => (format!("Stage 2: {QUALITY}"), None),
        "t14-ranks" => (
            "Blind study: mean rank per source and axis, $\\pm 1$ SD; lower is better".to_string(),
            Some(Table::T14),
        ),
        "t15-judged-fake" => (
            "Blind study: share of judgments fake per source".to_string(),
            Some(Table::T15),
        ),
        "baseline-accuracy" => (
            "Human baseline: vanilla and circular accuracy overall, per level and per task, with 95\\% intervals.".to_string(),
            None,
        ),
        "baseline-positions" => (
            "Human baseline: share of all answers at each displayed position against equal shares.".to_string(),
            None,
        ),
        _ => (String::new(), None),
    };
    match table {
        Some(table) => match tables.named(table) {
            Some(named) => format!("{what} ({named})."),
            None => format!("{what}."),
        },
        None => what,
    }
}

/// The bundle's tables, in its order: the QC's (without clip review no Table 11), the
/// study's when there is one, the groups, the human baseline's when it has answers.
pub fn tables(clip_review: bool, has_study: bool, has_baseline: bool) -> Vec<TableId> {
    let mut tables = if clip_review {
        vec![TableId::T11, TableId::T12, TableId::T13]
    } else {
        vec![TableId::T12, TableId::T13]
    };
    if has_study {
        tables.extend([TableId::T14, TableId::T15]);
    }
    tables.push(TableId::T16);
    if has_baseline {
        tables.push(TableId::Baseline);
    }
    tables
}

/// Every file of the bundle, README first.
pub fn files(input: &Input) -> Result<Vec<BundleFile>> {
    let names = &input.taxonomy.tables;
    let mut out: Vec<BundleFile> = Vec::new();
    let tables = tables(
        input.qc.clip_review,
        input.study.is_some(),
        input.baseline.is_some(),
    );
    for t in &tables {
        for f in [Format::Latex, Format::Csv, Format::Json] {
            let text = match (input.study, input.baseline) {
                (Some(r), _) if t.is_study() => super::study::render(r, names, *t, f)?,
                (_, Some(b)) if t.is_baseline() => super::baseline::render(b, f)?,
                _ if t.is_groups() => input.groups.render(names, f)?,
                _ => format::render(input.qc, input.taxonomy, *t, f)?,
            };
            let kind = match f {
                Format::Latex => "LaTeX, a complete table environment (booktabs)",
                Format::Csv => "CSV; numeric columns hold numbers or nothing",
                Format::Json => "JSON, as in stats.json",
            };
            out.push(file(
                format!("tables/{}.{}", t.name(), f.extension()),
                text,
                format!("{}: {kind}", table_title(names, *t)),
            ));
        }
    }
    let more_tables = more_tables(input, &mut out)?;
    out.push(file(
        "stats.json",
        pretty(input.stats_json)?,
        "every table as one JSON object, exactly as `tandem stats --json` prints it",
    ));

    let caption = input.qc.caption(input.computed);
    let mut figures: Vec<Figure> = svg::qc_figures(input.qc, input.taxonomy, &caption);
    if let Some(r) = input.study {
        figures.extend(study::figures(
            r,
            names,
            &r.caption(input.campaign, input.computed),
        ));
    }
    if let Some(b) = input.baseline {
        let caption = b.caption(input.campaign, input.computed);
        figures.extend(super::baseline::figures(b, &caption));
    }
    if let Some(q) = input.quality {
        figures.extend(super::quality::figures(q, input.qc, &caption));
    }
    for f in &figures {
        out.push(file(
            format!("figures/{}.svg", f.name),
            f.svg.clone(),
            format!("{} (SVG)", figure_caption(names, f.name).replace("$", "")),
        ));
        out.push(file(
            format!("figures/{}.pdf", f.name),
            render::pdf(&f.svg)?,
            "the same figure as a vector PDF, its font embedded",
        ));
        out.push(file(
            format!("figures/{}.png", f.name),
            render::png(&f.svg)?,
            format!("the same figure as PNG at {} dpi", render::PNG_DPI),
        ));
    }
    out.push(file(
        "paper.tex",
        document(names, &tables, &more_tables, &figures),
        "one LaTeX document with every table and figure (pdflatex paper.tex)",
    ));
    out.push(file(
        "records/decisions.csv",
        input.decisions_csv.clone(),
        "every decision, changes included (`final` marks the two verdicts that counted), as `tandem export decisions`",
    ));
    out.push(file(
        "records/resolutions.csv",
        input.resolutions_csv.clone(),
        "every author's resolution of a split, as `tandem export resolutions`",
    ));
    if let Some(r) = &input.responses_csv {
        out.push(file(
            "records/study-responses.csv",
            r.clone(),
            "every answer of the blind study, as `tandem export study-responses`: set_id, participant, clip_id, axis, value (the import format: `tandem study responses import` reads it back), then source and truth",
        ));
    }
    if let Some(b) = &input.baseline_csv {
        out.push(file(
            "records/baseline-answers.csv",
            b.clone(),
            "every answer of the human baseline, as `tandem baseline export`: participant, question_id, presentation, shown, chosen (the import format: `tandem baseline import` reads it back)",
        ));
    }
    let readme = readme(input, &out);
    out.insert(0, file("README.txt", readme, "this file"));
    // (README.txt names itself first.)
    Ok(out)
}

/// The tables beyond the protocol's own, each as the campaign has it: review quality,
/// the blind key check, the known items, the baseline's positions. Returns the names
/// of those `paper.tex` includes.
fn more_tables(input: &Input, out: &mut Vec<BundleFile>) -> Result<Vec<&'static str>> {
    let mut more_tables = Vec::new();
    if let Some(q) = input.quality {
        let what = "Review quality: each rater's sensitivity and specificity, and the residual defect rate of the retained items";
        out.push(file(
            "tables/review-quality.tex",
            super::quality::latex_table(q),
            format!("{what}: LaTeX, a complete table environment (booktabs)"),
        ));
        out.push(file(
            "tables/review-quality.csv",
            super::quality::csv_table(q).to_csv()?,
            format!("{what}: CSV; numeric columns hold numbers or nothing"),
        ));
        out.push(file(
            "tables/review-quality.json",
            serde_json::to_string_pretty(q)
                .map_err(|e| crate::error::Error::fault("cannot write JSON", e))?,
            format!("{what}: JSON, as `review_quality` in stats.json"),
        ));
        more_tables.push("review-quality");
    }
    if let Some(b) = input.blind {
        let what = "The blind key check: the share of validators' answers before the key that are the keyed answer, per QA type and level";
        out.push(file(
            "tables/blind-key-check.tex",
            super::blind::latex_table(b),
            format!("{what}: LaTeX, a complete table environment (booktabs)"),
        ));
        out.push(file(
            "tables/blind-key-check.csv",
            super::blind::csv_table(b).to_csv()?,
            format!("{what}: CSV; numeric columns hold numbers or nothing"),
        ));
        more_tables.push("blind-key-check");
    }
    if let Some(k) = input.known {
        let what = "Known items of the live queue: each validator's catch rate on known defects and pass rate on known sound items";
        out.push(file(
            "tables/known-items.tex",
            super::known::latex_table(k),
            format!("{what}: LaTeX, a complete table environment (booktabs)"),
        ));
        out.push(file(
            "tables/known-items.csv",
            super::known::rates_csv(k).to_csv()?,
            format!(
                "{what}, with the recent window's: CSV; numeric columns hold numbers or nothing"
            ),
        ));
        more_tables.push("known-items");
    }
    if let Some(b) = input.baseline {
        out.push(file(
            "tables/baseline-positions.csv",
            super::baseline::position_table(b).to_csv()?,
            "Human baseline: answers per displayed position, overall and per participant, with the chi-square test against equal shares (CSV)",
        ));
    }
    Ok(more_tables)
}

/// A document that compiles with pdflatex alone (booktabs, graphicx, geometry).
fn document(
    names: &Tables,
    tables: &[TableId],
    more_tables: &[&str],
    figures: &[Figure],
) -> String {
    let mut s = String::new();
    s.push_str("% Every table and figure of the paper bundle. Generated by Tandem.\n");
    s.push_str("\\documentclass{article}\n\\usepackage[margin=1.5cm]{geometry}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n");
    s.push_str("\\begin{document}\n");
    for t in tables {
        let _ = writeln!(s, "\\input{{tables/{}.tex}}", t.name());
    }
    for t in more_tables {
        let _ = writeln!(s, "\\input{{tables/{t}.tex}}");
    }
    s.push_str("\\clearpage\n");
    for f in figures {
        let _ = writeln!(
            s,
            "\\begin{{figure}}[p]\n\\centering\n\\includegraphics[width=\\linewidth,height=0.8\\textheight,keepaspectratio]{{figures/{}.pdf}}\n\\caption{{{}}}\n\\label{{fig:{}}}\n\\end{{figure}}",
            f.name,
            figure_caption(names, f.name),
            f.name
        );
    }
    s.push_str("\\end{document}\n");
    s
}

fn readme(input: &Input, files: &[BundleFile]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Paper bundle of campaign {}", input.campaign);
    let _ = writeln!(
        s,
        "Computed {} from the raw decisions and responses.\n",
        crate::clock::to_rfc3339(input.computed)
    );
    let _ = writeln!(s, "Scope: {}.", input.qc.scope_text());
    let per_stage = |n: fn(&super::StageSummary) -> i64| {
        input
            .qc
            .stages()
            .iter()
            .map(|(key, st)| format!("Stage {} {}", &key[5..], n(st)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        s,
        "Items with fewer than two verdicts are left out of every figure and counted as pending: {}.",
        per_stage(|st| st.pending)
    );
    let _ = writeln!(
        s,
        "Splits still waiting for an author: {}.",
        per_stage(|st| st.split_pending)
    );
    match input.study {
        Some(r) => {
            let _ = writeln!(s, "Study: {}.", r.scope_text());
            for n in r.thin_data_notes() {
                let _ = writeln!(s, "  Note: {n}");
            }
        }
        None => {
            let _ = writeln!(
                s,
                "Study: none in this campaign (no {}).",
                input
                    .taxonomy
                    .tables
                    .names_together(&[Table::T14, Table::T15])
            );
        }
    }
    match input.baseline {
        Some(b) => {
            let _ = writeln!(
                s,
                "Human baseline: {} participant(s), {} question(s), {} presentation(s); intervals {}; {} answer(s) to questions no longer retained left out.",
                b.participants,
                b.questions,
                b.presentations,
                match b.interval_method {
                    crate::stats::circular::IntervalMethod::ClopperPearson => "Clopper-Pearson",
                    crate::stats::circular::IntervalMethod::Wilson => "Wilson",
                },
                b.left_out
            );
        }
        None => {
            let _ = writeln!(
                s,
                "Human baseline: no answers in this campaign (no baseline table)."
            );
        }
    }
    s.push_str(
        "\nConventions: undefined figures are null in JSON, empty cells in CSV and `undefined`\n\
         in LaTeX; `n/r` marks a cell nobody reviewed (not 0). Cohen's kappa's interval is the\n\
         Wald interval truncated to [-1, 1] (`cohen_kappa_ci95_bounded`); the JSON keeps\n\
         statsmodels' unclipped interval as `cohen_kappa_ci95`. `per_pair` rows are per task and\n\
         pair; `per_rater_pair` pools each pair's tasks. Compile paper.tex with pdflatex\n\
         (packages booktabs, graphicx, geometry).\n\nFiles:\n  README.txt\n      this file\n",
    );
    for f in files {
        let _ = writeln!(s, "  {}\n      {}", f.path, f.what);
    }
    s
}

/// Writes the bundle under `dir`, which must be new or empty.
pub fn write(dir: &std::path::Path, files: &[BundleFile]) -> Result<()> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?
            .next()
            .is_some()
    {
        return Err(Error::Invalid(format!(
            "{} is not empty: give a new or empty folder",
            dir.display()
        )));
    }
    for f in files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
        }
        std::fs::write(&path, &f.bytes)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIGURES: [&str; 12] = [
        "t11-retained",
        "t12-rejected",
        "t13-kappa-stage1",
        "t13-kappa-stage2",
        "reasons-stage1",
        "reasons-stage2",
        "quality-stage1",
        "quality-stage2",
        "t14-ranks",
        "t15-judged-fake",
        "baseline-accuracy",
        "baseline-positions",
    ];

    #[test]
    fn titles_and_captions_name_a_table_only_as_the_protocol_does() {
        let generic = Tables::default();
        let paper = Taxonomy::vgenst().tables;
        for t in tables(true, true, true) {
            let title = table_title(&generic, t);
            assert!(!title.contains("Table"), "{title}");
            assert!(title.starts_with(char::is_uppercase), "{title}");
        }
        for name in FIGURES {
            let caption = figure_caption(&generic, name);
            assert!(
                !caption.is_empty() && !caption.contains("Table"),
                "{caption}"
            );
        }
        // VGenST-Bench names its tables as the paper does, in the words the bundle
        // has always had.
        assert_eq!(
            table_title(&paper, TableId::T11),
            "Table 11, Stage 1: clips retained per task"
        );
        assert_eq!(
            table_title(&paper, TableId::Baseline),
            "Human baseline: vanilla and circular accuracy"
        );
        assert_eq!(
            figure_caption(&paper, "t12-rejected"),
            "Stage 2: questions rejected per task and QA type (Table 12)."
        );
        assert_eq!(
            figure_caption(&paper, "t14-ranks"),
            "Blind study: mean rank per source and axis, $\\pm 1$ SD; lower is better (Table 14)."
        );
        assert_eq!(
            figure_caption(&paper, "reasons-stage1"),
            "Stage 1: reasons given with counted rejects."
        );
    }
}
