//! The QC tables as CSV (one header row, one record a row) and as LaTeX in the paper's
//! layout (booktabs). Undefined figures are never 0, 1 or NaN: an empty cell in CSV
//! (each CSV table declares its numeric columns, which hold numbers or nothing),
//! `undefined` in LaTeX, and a count of nothing reviewed is marked "not reviewed".

use super::{QcReport, StageSummary};
use crate::domain::taxonomy::{Grouping, Table, Tables, TaskDef, Taxonomy};
use crate::error::{Error, Result};
use crate::stats::agreement::KAPPA_CI95_BOUNDED_METHOD;

/// Which table: one of the QC report's and the study's (their names and keys are
/// `Table`'s), or the human baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableId {
    Paper(Table),
    /// The human baseline under circular evaluation.
    Baseline,
}

impl TableId {
    pub const T11: TableId = TableId::Paper(Table::T11);
    pub const T12: TableId = TableId::Paper(Table::T12);
    pub const T13: TableId = TableId::Paper(Table::T13);
    pub const T14: TableId = TableId::Paper(Table::T14);
    pub const T15: TableId = TableId::Paper(Table::T15);
    /// The annotator pool: the campaign's disjoint groups.
    pub const T16: TableId = TableId::Paper(Table::T16);

    pub fn parse(s: &str) -> std::result::Result<TableId, String> {
        let key = s.to_ascii_lowercase();
        match Table::from_key(&key) {
            Some(t) => Ok(TableId::Paper(t)),
            None if key == "baseline" => Ok(TableId::Baseline),
            None => Err(format!(
                "table must be T11, T12, T13, T14, T15, T16 or baseline, not `{s}`"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TableId::Paper(t) => t.key(),
            TableId::Baseline => "baseline",
        }
    }

    /// The table of the taxonomy's names (`Taxonomy::table_name`); none for the human
    /// baseline's.
    pub fn table(self) -> Option<Table> {
        match self {
            TableId::Paper(t) => Some(t),
            TableId::Baseline => None,
        }
    }

    /// Table 16 comes from the campaign's roles.
    pub fn is_groups(self) -> bool {
        self == TableId::T16
    }

    /// The human baseline's table comes from its answers.
    pub fn is_baseline(self) -> bool {
        self == TableId::Baseline
    }

    /// Tables 14 and 15 come from the blind study, the others from the QC.
    pub fn is_study(self) -> bool {
        matches!(self, TableId::T14 | TableId::T15)
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Latex,
    Json,
}

impl Format {
    pub fn parse(s: &str) -> std::result::Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "latex" | "tex" => Ok(Format::Latex),
            "json" => Ok(Format::Json),
            other => Err(format!("format must be csv, latex or json, not `{other}`")),
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Latex => "tex",
            Format::Json => "json",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            Format::Latex => "application/x-tex; charset=utf-8",
            Format::Json => "application/json",
        }
    }
}

/// One table in one format.
pub fn render(
    report: &QcReport,
    taxonomy: &Taxonomy,
    table: TableId,
    format: Format,
) -> Result<String> {
    match (table, format) {
        (TableId::T11, _) if !report.clip_review => Err(Error::Invalid(format!(
            "campaign `{}` reviews no clips (its protocol's clip_review = false), so t11 ({}) has nothing to show; its question review is in t12 ({}) and t13 ({})",
            report.campaign,
            taxonomy.table_name(Table::T11),
            taxonomy.table_name(Table::T12),
            taxonomy.table_name(Table::T13),
        ))),
        (TableId::T11, Format::Json) => pretty(&report.t11_json()),
        (TableId::T12, Format::Json) => pretty(&report.t12_json()),
        (TableId::T13, Format::Json) => pretty(&report.t13_json()),
        (TableId::T11 | TableId::T12 | TableId::T13, Format::Csv) => {
            csv_table(report, taxonomy, table)?.to_csv()
        }
        (TableId::T11, Format::Latex) => Ok(t11_latex(report, taxonomy)),
        (TableId::T12, Format::Latex) => Ok(t12_latex(report, taxonomy)),
        (TableId::T13, Format::Latex) => Ok(t13_latex(report, &taxonomy.tables)),
        (TableId::T14 | TableId::T15, _) => Err(Error::Internal(
            "t14 and t15 are drawn from the study report".into(),
        )),
        (TableId::T16, _) => Err(Error::Internal(
            "t16 is drawn from the campaign's roles".into(),
        )),
        (TableId::Baseline, _) => Err(Error::Internal(
            "the human baseline's table is drawn from its report".into(),
        )),
    }
}

pub(crate) fn pretty(v: &serde_json::Value) -> Result<String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| Error::fault("cannot write JSON", e))
}

/// A number for CSV: full precision, or an empty cell when it is undefined (so that
/// pandas, R and spreadsheets read the column as numbers, with the cell missing).
pub(crate) fn num(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// What a CSV column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// A number, or an empty cell when undefined or not applicable.
    Num,
    Text,
}

/// One CSV table: its columns, which of them are numeric, and its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTable {
    pub columns: Vec<(String, Col)>,
    pub rows: Vec<Vec<String>>,
}

impl CsvTable {
    pub fn new(columns: &[(&str, Col)]) -> CsvTable {
        CsvTable {
            columns: columns.iter().map(|(n, c)| (n.to_string(), *c)).collect(),
            rows: Vec::new(),
        }
    }

    /// The names of the numeric columns.
    pub fn numeric(&self) -> Vec<&str> {
        self.columns
            .iter()
            .filter(|(_, c)| *c == Col::Num)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// The table as CSV text: one header row, one record a row.
    pub fn to_csv(&self) -> Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let err = |e: csv::Error| Error::fault("cannot write CSV", e);
        w.write_record(self.columns.iter().map(|(n, _)| n.as_str()))
            .map_err(err)?;
        for r in &self.rows {
            if r.len() != self.columns.len() {
                return Err(Error::Internal(format!(
                    "a CSV row has {} cells for {} columns",
                    r.len(),
                    self.columns.len()
                )));
            }
            // Text cells (source, task, participant names) are written so that a
            // spreadsheet shows them as text; numbers are never touched.
            let cells = r
                .iter()
                .zip(&self.columns)
                .map(|(cell, (_, col))| match col {
                    Col::Num => cell.clone(),
                    Col::Text => crate::domain::text::spreadsheet_safe(cell).into_owned(),
                });
            w.write_record(cells).map_err(err)?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| Error::fault("cannot write CSV", e))?;
        String::from_utf8(bytes).map_err(|e| Error::fault("CSV is not UTF-8", e))
    }
}

/// One QC table (T11, T12, T13) as a [`CsvTable`].
/// A campaign with sampled review adds a last column, `retained_by_sample`, to each:
/// the items retained unreviewed (T13: on its pooled rows).
pub fn csv_table(report: &QcReport, tax: &Taxonomy, table: TableId) -> Result<CsvTable> {
    let (mut t, by_sample): (CsvTable, Vec<Option<i64>>) = match table {
        TableId::T11 => (
            t11_csv(report, tax),
            report.t11.iter().map(|(_, c)| Some(c.by_sample)).collect(),
        ),
        TableId::T12 => (
            t12_csv(report, tax),
            report
                .t12
                .iter()
                .flat_map(|(_, row)| row.iter().map(|(_, c)| Some(c.by_sample)))
                .collect(),
        ),
        TableId::T13 => {
            let t = t13_csv(report);
            let cells = t
                .rows
                .iter()
                .map(|row| match (row[0].as_str(), row[1].as_str()) {
                    ("1", "pooled") => Some(report.stage1.by_sample),
                    ("2", "pooled") => Some(report.stage2.by_sample),
                    _ => None,
                })
                .collect();
            (t, cells)
        }
        TableId::T14 | TableId::T15 | TableId::T16 | TableId::Baseline => {
            return Err(Error::Internal(
                "t14, t15, t16 and the baseline's table are drawn from the study, the roles and the baseline".into(),
            ));
        }
    };
    if report.sampled {
        t.columns.push(("retained_by_sample".into(), Col::Num));
        for (row, n) in t.rows.iter_mut().zip(by_sample) {
            row.push(n.map(|n| n.to_string()).unwrap_or_default());
        }
    }
    Ok(t)
}

fn ratio(n: i64, of: i64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// Table 11 as CSV: a row per task with its attributes (those of the protocol's Table 11
/// layout first, VGenST's scale, perspective and dynamics; then the others by name),
/// then its counts.
fn t11_csv(report: &QcReport, tax: &Taxonomy) -> CsvTable {
    use Col::{Num, Text};
    let mut attributes = grid(tax).declared;
    let others: std::collections::BTreeSet<&String> = tax
        .tasks
        .iter()
        .flat_map(|t| t.attributes.iter().map(|(k, _)| k))
        .filter(|k| !attributes.contains(k))
        .collect();
    attributes.extend(others.into_iter().cloned());
    let mut columns = vec![("task".to_string(), Text)];
    columns.extend(attributes.iter().map(|a| (a.clone(), Text)));
    columns.extend([
        ("reviewed".to_string(), Num),
        ("retained".to_string(), Num),
        ("retained_fraction".to_string(), Num),
        ("waiting_for_author".to_string(), Num),
    ]);
    let mut t = CsvTable {
        columns,
        rows: Vec::new(),
    };
    t.rows = report
        .t11
        .iter()
        .map(|(task, c)| {
            let all = tax
                .task(task)
                .map(|(_, d)| d.all_attributes())
                .unwrap_or_default();
            let mut row = vec![task.clone()];
            row.extend(
                attributes
                    .iter()
                    .map(|a| all.get(a).cloned().unwrap_or_default()),
            );
            row.extend([
                c.reviewed.to_string(),
                c.retained.to_string(),
                num(ratio(c.retained, c.reviewed)),
                c.waiting.to_string(),
            ]);
            row
        })
        .collect();
    t
}

fn t12_csv(report: &QcReport, tax: &Taxonomy) -> CsvTable {
    use Col::{Num, Text};
    let mut t = CsvTable::new(&[
        ("task", Text),
        ("qa_type", Text),
        ("level", Text),
        ("reviewed", Num),
        ("rejected", Num),
        ("rejected_fraction", Num),
    ]);
    for (task, row) in &report.t12 {
        for (qa, c) in row {
            let level = tax
                .qa_type(qa)
                .map(|d| d.level.as_str())
                .unwrap_or_default();
            t.rows.push(vec![
                task.clone(),
                qa.clone(),
                level.to_string(),
                c.reviewed.to_string(),
                c.rejected.to_string(),
                num(ratio(c.rejected, c.reviewed)),
            ]);
        }
    }
    t
}

/// The agreement cells of one T13 CSV row.
fn agreement_cells(a: &super::Agreement) -> Vec<String> {
    let ci = a.cohen_kappa_ci95;
    let bounded = a.cohen_kappa_ci95_bounded;
    vec![
        num(a.raw_agreement),
        num(a.cohen_kappa),
        num(ci.map(|c| c[0])),
        num(ci.map(|c| c[1])),
        num(bounded.map(|c| c[0])),
        num(bounded.map(|c| c[1])),
        KAPPA_CI95_BOUNDED_METHOD.into(),
        num(a.gwet_ac1),
        num(a.pabak),
        num(a.krippendorff_alpha),
        a.withheld
            .as_ref()
            .map_or_else(String::new, |w| w.reason.clone()),
    ]
}

fn t13_csv(report: &QcReport) -> CsvTable {
    use Col::{Num, Text};
    let mut t = CsvTable::new(&[
        ("stage", Num),
        ("scope", Text),
        ("task", Text),
        ("rater1", Text),
        ("rater2", Text),
        ("items_reviewed", Num),
        ("both_pass", Num),
        ("both_reject", Num),
        ("split", Num),
        ("split_accepted", Num),
        ("split_rejected", Num),
        ("split_pending", Num),
        ("pending", Num),
        ("raw_agreement", Num),
        ("cohen_kappa", Num),
        ("cohen_kappa_ci95_low", Num),
        ("cohen_kappa_ci95_high", Num),
        ("cohen_kappa_ci95_bounded_low", Num),
        ("cohen_kappa_ci95_bounded_high", Num),
        ("cohen_kappa_ci95_method", Text),
        ("gwet_ac1", Num),
        ("pabak", Num),
        ("krippendorff_alpha", Num),
        ("agreement_withheld", Text),
    ]);
    let table_counts = |t: [[i64; 2]; 2]| {
        vec![
            t[0][0].to_string(),
            t[1][1].to_string(),
            (t[0][1] + t[1][0]).to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]
    };
    let stages = [(1, &report.stage1), (2, &report.stage2)];
    for (stage, s) in stages
        .into_iter()
        .filter(|(n, _)| *n == 2 || report.clip_review)
    {
        let mut row = vec![
            stage.to_string(),
            "pooled".into(),
            String::new(),
            String::new(),
            String::new(),
            s.items_reviewed.to_string(),
            s.both_pass.to_string(),
            s.both_reject.to_string(),
            s.split.to_string(),
            s.split_accepted.to_string(),
            s.split_rejected.to_string(),
            s.split_pending.to_string(),
            s.pending.to_string(),
        ];
        row.extend(agreement_cells(&s.pooled));
        t.rows.push(row);
        for p in &s.per_rater_pair {
            let mut row = vec![
                stage.to_string(),
                "pair_over_tasks".into(),
                p.tasks.join(";"),
                p.rater1.clone(),
                p.rater2.clone(),
                p.items.to_string(),
            ];
            row.extend(table_counts(p.agreement.table));
            row.extend(agreement_cells(&p.agreement));
            t.rows.push(row);
        }
        for p in &s.per_pair {
            let mut row = vec![
                stage.to_string(),
                "task_and_pair".into(),
                p.task.clone(),
                p.rater1.clone(),
                p.rater2.clone(),
                p.items.to_string(),
            ];
            row.extend(table_counts(p.agreement.table));
            row.extend(agreement_cells(&p.agreement));
            t.rows.push(row);
        }
    }
    t
}

/// Escapes text for LaTeX.
pub fn tex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' | '}' | '$' | '&' | '#' | '%' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '^' => out.push_str("\\^{}"),
            '~' => out.push_str("\\~{}"),
            _ => out.push(c),
        }
    }
    out
}

/// 1200 -> "1,200", as the paper writes counts.
pub fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "undefined".into(), |v| format!("{:.1}\\%", v * 100.0))
}

pub(crate) fn dec(x: Option<f64>) -> String {
    x.map_or_else(|| "undefined".into(), |v| format!("{v:.2}"))
}

fn title_case(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// The grid of Table 11: as the protocol's `[tables] t11` lays it out (VGenST-Bench's:
/// spatial scales as rows, perspective x dynamics as columns), or, without one, the
/// tasks grouped by the first attribute every task declares (its values as rows, one
/// column), or listed one task a row when they share none.
pub struct Grid {
    /// What the rows are ("spatial scale", an attribute's name, or "task").
    pub row_title: String,
    /// What the columns are ("perspective / scene dynamics"), or empty for one column.
    pub column_title: String,
    pub rows: Vec<String>,
    /// The columns' labels ("EGO_STA"; "tasks" for the one column).
    pub columns: Vec<String>,
    /// (row, column) -> the tasks there.
    pub cells: Vec<Vec<Vec<String>>>,
    /// The attributes the grid is laid out by when the protocol declares it (rows, then
    /// columns); none otherwise.
    pub declared: Vec<String>,
}

/// Lays a taxonomy's tasks out as Table 11 does.
pub fn grid(tax: &Taxonomy) -> Grid {
    match &tax.tables.t11 {
        Some(grouping) => declared_grid(tax, grouping),
        None => generic_grid(tax),
    }
}

/// The layout a protocol declares: a row per value of its `rows` attribute, a column per
/// combination of its `columns` attributes' values, each in the tasks' order.
fn declared_grid(tax: &Taxonomy, grouping: &Grouping) -> Grid {
    let value = |t: &TaskDef, name: &str| t.attribute(name).unwrap_or_default().to_string();
    let column_of =
        |t: &TaskDef| -> Vec<String> { grouping.columns.iter().map(|c| value(t, c)).collect() };
    let mut rows: Vec<String> = Vec::new();
    let mut columns: Vec<Vec<String>> = Vec::new();
    for t in &tax.tasks {
        let row = value(t, &grouping.rows);
        if !rows.contains(&row) {
            rows.push(row);
        }
        let column = column_of(t);
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    let mut cells = vec![vec![Vec::new(); columns.len()]; rows.len()];
    for t in &tax.tasks {
        let row = value(t, &grouping.rows);
        let r = rows.iter().position(|x| *x == row).unwrap_or(0);
        let column = column_of(t);
        let c = columns.iter().position(|x| *x == column).unwrap_or(0);
        cells[r][c].push(t.code.clone());
    }
    let columns = if grouping.columns.is_empty() {
        vec!["tasks".to_string()]
    } else {
        columns.iter().map(|c| column_label(c)).collect()
    };
    Grid {
        row_title: grouping.row_title.clone(),
        column_title: grouping.column_title.clone(),
        rows,
        columns,
        cells,
        declared: std::iter::once(grouping.rows.clone())
            .chain(grouping.columns.iter().cloned())
            .collect(),
    }
}

/// Without a declared layout: rows by the first attribute (in the first task's order)
/// that every task declares, one column; one task a row when there is none.
fn generic_grid(tax: &Taxonomy) -> Grid {
    let shared = tax.tasks.first().and_then(|first| {
        first
            .attributes
            .iter()
            .map(|(k, _)| k)
            .find(|k| tax.tasks.iter().all(|t| t.attribute(k).is_some()))
            .cloned()
    });
    let row_title = shared.clone().unwrap_or_else(|| "task".into());
    let row_of = |t: &TaskDef| match &shared {
        Some(name) => t.attribute(name).unwrap_or_default().to_string(),
        None => t.code.clone(),
    };
    let mut rows: Vec<String> = Vec::new();
    let mut cells: Vec<Vec<Vec<String>>> = Vec::new();
    for t in &tax.tasks {
        let row = row_of(t);
        match rows.iter().position(|r| *r == row) {
            Some(r) => cells[r][0].push(t.code.clone()),
            None => {
                rows.push(row);
                cells.push(vec![vec![t.code.clone()]]);
            }
        }
    }
    Grid {
        row_title,
        column_title: String::new(),
        rows,
        columns: vec!["tasks".into()],
        cells,
        declared: Vec::new(),
    }
}

/// A column's label from its attributes' values: each one's first three letters, upper
/// case, joined by `_` ("EGO_STA" for egocentric, static).
pub fn column_label(values: &[String]) -> String {
    let short = |s: &String| s.chars().take(3).collect::<String>().to_uppercase();
    values.iter().map(short).collect::<Vec<_>>().join("_")
}

/// The part of a task code before its first `_` ("MC" for MC_F_EGO_STA): the Table 13
/// figure's short name of a task (which has no taxonomy at hand).
pub fn task_prefix(code: &str) -> &str {
    code.split('_').next().unwrap_or(code)
}

fn t11_latex(report: &QcReport, tax: &Taxonomy) -> String {
    let g = grid(tax);
    let reviewed: Vec<i64> = report.t11.iter().map(|(_, c)| c.reviewed).collect();
    let uniform = reviewed
        .first()
        .copied()
        .filter(|n| *n > 0 && reviewed.iter().all(|x| x == n));
    let not_reviewed = reviewed.contains(&0);
    let waiting: i64 = report.t11.iter().map(|(_, c)| c.waiting).sum();
    let cell = |task: &str| -> Option<String> {
        let (_, c) = report.t11.iter().find(|(t, _)| t == task)?;
        // A cell holding a split that waits for its author is marked.
        let mark = if c.waiting > 0 { "$^{*}$" } else { "" };
        Some(match uniform {
            _ if c.reviewed == 0 => format!("n/r ({})", tex(tax.task_label(task))),
            Some(_) => format!("{}{mark} ({})", c.retained, tex(tax.task_label(task))),
            None => format!(
                "{}/{}{mark} ({})",
                c.retained,
                c.reviewed,
                tex(tax.task_label(task))
            ),
        })
    };
    let mut out = String::new();
    let title = tax
        .tables
        .titled(Table::T11, ": ", "Stage 1, video quality control");
    out.push_str(&format!("% {title}. Generated by Tandem.\n"));
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    out.push_str(&format!(
        "\\caption{{Stage 1 -- Video Quality Control. Cells report the number of videos retained{}.{}{}}}\n",
        uniform.map_or(" (of those reviewed)".to_string(), |n| format!(" (out of {})", thousands(n))),
        if not_reviewed { " n/r: no video of the task reviewed yet." } else { "" },
        if waiting > 0 {
            format!(
                " $^{{*}}$The cell counts videos whose two validators disagreed and whose author has not yet decided ({} in all) as not retained: the table is a snapshot with {} pending.",
                thousands(waiting),
                thousands(waiting)
            )
        } else {
            String::new()
        }
    ));
    out.push_str("\\label{tab:qc-stage1}\n");
    out.push_str(&format!(
        "\\begin{{tabular}}{{l{}}}\n\\toprule\n",
        "c".repeat(g.columns.len())
    ));
    out.push_str(&tex(&title_case(&g.row_title)));
    for c in &g.columns {
        // One column is headed as what it holds.
        let head = if g.column_title.is_empty() {
            "Tasks"
        } else {
            c
        };
        out.push_str(&format!(" & {}", tex(head)));
    }
    out.push_str(" \\\\\n\\midrule\n");
    for (r, scale) in g.rows.iter().enumerate() {
        if !g.declared.is_empty() {
            let initial = scale
                .chars()
                .next()
                .map(|c| c.to_ascii_uppercase())
                .unwrap_or('?');
            out.push_str(&format!("{} ({initial})", tex(&title_case(scale))));
        } else {
            out.push_str(&tex(scale));
        }
        for c in 0..g.columns.len() {
            let text: Vec<String> = g.cells[r][c].iter().filter_map(|t| cell(t)).collect();
            out.push_str(" & ");
            out.push_str(&if text.is_empty() {
                "-".to_string()
            } else {
                text.join(", ")
            });
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

fn t12_latex(report: &QcReport, tax: &Taxonomy) -> String {
    let mut out = String::new();
    let title = tax.tables.titled(
        Table::T12,
        ": ",
        "Stage 2, QA quality control reject matrix",
    );
    out.push_str(&format!("% {title}. Generated by Tandem.\n"));
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    let not_reviewed = report
        .t12
        .iter()
        .any(|(_, row)| row.iter().any(|(_, c)| c.reviewed == 0));
    // As the paper's caption: "(out of 100)" when every cell reviewed that many.
    let reviewed: Vec<i64> = report
        .t12
        .iter()
        .flat_map(|(_, row)| row.iter().map(|(_, c)| c.reviewed))
        .collect();
    let uniform = reviewed
        .first()
        .copied()
        .filter(|n| *n > 0 && reviewed.iter().all(|x| x == n));
    out.push_str(&format!("\\caption{{Stage 2 -- QA Quality Control: Reject Matrix. Each cell shows the number of base MCQs{} rejected during QA validation. Dashes (-) mark task--QA combinations outside the applicability matrix.{}}}\n",
        uniform.map_or(" (of those reviewed in the cell)".to_string(), |n| format!(" (out of {})", thousands(n))),
        if not_reviewed { " n/r: no question of the cell reviewed yet (not the same as 0 rejected)." } else { "" }));
    out.push_str("\\label{tab:qc-stage2}\n");
    let q = tax.qa_types.len();
    out.push_str(&format!(
        "\\begin{{tabular}}{{l{}}}\n\\toprule\n",
        "r".repeat(q)
    ));
    // The level header, grouped.
    let mut groups: Vec<(String, usize, usize)> = Vec::new();
    for (i, qa) in tax.qa_types.iter().enumerate() {
        let level = qa.level.as_str().to_string();
        match groups.last_mut() {
            Some((l, _, end)) if *l == level => *end = i,
            _ => groups.push((level, i, i)),
        }
    }
    for (level, start, end) in &groups {
        out.push_str(&format!(
            " & \\multicolumn{{{}}}{{c}}{{{}}}",
            end - start + 1,
            tex(level)
        ));
    }
    out.push_str(" \\\\\n");
    for (_, start, end) in &groups {
        out.push_str(&format!("\\cmidrule(lr){{{}-{}}}", start + 2, end + 2));
    }
    out.push('\n');
    out.push_str("Task");
    for qa in &tax.qa_types {
        out.push_str(&format!(" & {}", tex(&qa.code)));
    }
    out.push_str(" \\\\\n\\midrule\n");
    for (task, row) in &report.t12 {
        out.push_str(&tex(task));
        for qa in &tax.qa_types {
            match row.iter().find(|(code, _)| *code == qa.code) {
                Some((_, c)) if c.reviewed == 0 => out.push_str(" & n/r"),
                Some((_, c)) => out.push_str(&format!(" & {}", c.rejected)),
                None => out.push_str(" & -"),
            }
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

fn count_pct(n: i64, of: i64) -> String {
    if of == 0 {
        thousands(n)
    } else {
        format!("{} ({:.1}\\%)", thousands(n), n as f64 * 100.0 / of as f64)
    }
}

fn t13_latex(report: &QcReport, tables: &Tables) -> String {
    let (a, b): (&StageSummary, &StageSummary) = (&report.stage1, &report.stage2);
    let ci = |s: &StageSummary| match s.pooled.cohen_kappa_ci95_bounded {
        Some(c) => format!("[{:.2}, {:.2}]", c[0], c[1]),
        None => s.pooled.show(None, 2),
    };
    let show =
        |s: &StageSummary, f: fn(&super::Agreement) -> Option<f64>| s.pooled.show(f(&s.pooled), 2);
    let mut rows: Vec<(String, String, String)> = vec![
        (
            "Items reviewed".into(),
            thousands(a.items_reviewed),
            thousands(b.items_reviewed),
        ),
        (
            "Both pass".into(),
            count_pct(a.both_pass, a.items_reviewed),
            count_pct(b.both_pass, b.items_reviewed),
        ),
        (
            "Both reject".into(),
            count_pct(a.both_reject, a.items_reviewed),
            count_pct(b.both_reject, b.items_reviewed),
        ),
        (
            "Split (author-resolved)".into(),
            count_pct(a.split, a.items_reviewed),
            count_pct(b.split, b.items_reviewed),
        ),
        (
            "\\quad$\\hookrightarrow$ accepted".into(),
            thousands(a.split_accepted),
            thousands(b.split_accepted),
        ),
        (
            "\\quad$\\hookrightarrow$ rejected".into(),
            thousands(a.split_rejected),
            thousands(b.split_rejected),
        ),
    ];
    if a.split_pending + b.split_pending > 0 {
        rows.push((
            "\\quad$\\hookrightarrow$ waiting for an author".into(),
            thousands(a.split_pending),
            thousands(b.split_pending),
        ));
    }
    rows.extend([
        (
            "Raw agreement rate".into(),
            pct(a.pooled.raw_agreement),
            pct(b.pooled.raw_agreement),
        ),
        (
            "Cohen's $\\kappa$".into(),
            show(a, |x| x.cohen_kappa),
            show(b, |x| x.cohen_kappa),
        ),
        ("\\quad 95\\% CI".into(), ci(a), ci(b)),
        (
            "Gwet's AC1".into(),
            show(a, |x| x.gwet_ac1),
            show(b, |x| x.gwet_ac1),
        ),
        ("PABAK".into(), show(a, |x| x.pabak), show(b, |x| x.pabak)),
        (
            "Krippendorff's $\\alpha$".into(),
            show(a, |x| x.krippendorff_alpha),
            show(b, |x| x.krippendorff_alpha),
        ),
    ]);
    let mut out = String::new();
    let title = tables.titled(Table::T13, ": ", "inter-annotator agreement");
    out.push_str(&format!("% {title}. Generated by Tandem.\n"));
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    out.push_str("\\caption{Inter-Annotator Agreement Statistics. Cohen's $\\kappa$ is pooled over all validator pairs (one $2\\times2$ table, rater 1 being the first member of each pair); its 95\\% confidence interval is the Wald interval (Fleiss--Cohen--Everitt large-sample standard error) truncated to $[-1, 1]$.}\n");
    out.push_str("\\label{tab:qc-agreement}\n");
    // Without clip review, the question review's column alone.
    if report.clip_review {
        out.push_str("\\begin{tabular}{lrr}\n\\toprule\n & Video QC & QA QC \\\\\n\\midrule\n");
    } else {
        out.push_str("\\begin{tabular}{lr}\n\\toprule\n & QA QC \\\\\n\\midrule\n");
    }
    for (label, x, y) in rows {
        if report.clip_review {
            out.push_str(&format!("{label} & {x} & {y} \\\\\n"));
        } else {
            out.push_str(&format!("{label} & {y} \\\\\n"));
        }
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

/// A short plain-text summary for the terminal.
pub fn summary(report: &QcReport) -> String {
    let line = |name: &str, s: &StageSummary| {
        let a = &s.pooled;
        let f = |x: Option<f64>| a.show(x, 3);
        format!(
            "{name}: {} reviewed, {} both pass, {} both reject, {} split ({} accepted, {} rejected, {} waiting), {} pending\n  raw agreement {}, Cohen's kappa {} (95% CI {}), Gwet's AC1 {}, PABAK {}\n",
            s.items_reviewed,
            s.both_pass,
            s.both_reject,
            s.split,
            s.split_accepted,
            s.split_rejected,
            s.split_pending,
            s.pending,
            f(a.raw_agreement),
            f(a.cohen_kappa),
            a.cohen_kappa_ci95_bounded.map_or_else(
                || a.show(None, 3),
                |c| format!("{:.3} to {:.3}, Wald truncated to [-1, 1]", c[0], c[1])
            ),
            f(a.gwet_ac1),
            f(a.pabak),
        )
    };
    if !report.clip_review {
        return format!(
            "campaign `{}` (no clip review)\n{}(--json for every table, --table T12|T13 --format csv|latex|json for one)\n",
            report.campaign,
            line("Stage 2 (questions)", &report.stage2)
        );
    }
    format!(
        "campaign `{}` (Stage 1 over {} versions)\n{}{}(--json for every table, --table T11|T12|T13 --format csv|latex|json for one)\n",
        report.campaign,
        match report.versions {
            crate::domain::facts::Versions::First => "first",
            crate::domain::facts::Versions::All => "all",
        },
        line("Stage 1 (clips)", &report.stage1),
        line("Stage 2 (questions)", &report.stage2)
    )
}

#[cfg(test)]
mod tests;
