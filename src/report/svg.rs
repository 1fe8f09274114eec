//! Plots drawn on the server as SVG: presentation attributes only (no inline styles or
//! scripts, so the pages' Content-Security-Policy holds), every text escaped. Each is a
//! figure that stands on its own out of the page: a title, axis labels, a legend, and a
//! caption line naming the campaign, the scope and when it was computed. The same SVG
//! is shown on the page and downloaded (as SVG, PDF or PNG: `render`).

use super::format::{grid, task_prefix};
use super::{Agreement, QcReport, StageSummary};
use crate::domain::Stage;
use crate::domain::taxonomy::{Table, Tables, Taxonomy};
use crate::stats::agreement::KAPPA_CI95_BOUNDED_NOTE;
use std::fmt::Write;

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A colour between white (0) and `to` (1), as `#rrggbb`.
pub(crate) fn shade(t: f64, to: (u8, u8, u8)) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(to.0), mix(to.1), mix(to.2))
}

pub(crate) const INK: &str = "#1d2430";
pub(crate) const MUTED: &str = "#5d6878";
pub(crate) const GRID: &str = "#e3e7ee";
const GREEN: (u8, u8, u8) = (31, 122, 77);
const RED: (u8, u8, u8) = (179, 54, 31);
/// Every figure is at least this wide, so that its caption line fits.
pub(crate) const MIN_WIDTH: u32 = 640;

/// What every figure says about itself under the plot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caption {
    pub campaign: String,
    /// The exact scope, in words ("Stage 1 over first versions; all tasks; all pairs").
    pub scope: String,
    /// When the figures were computed, RFC 3339.
    pub computed: String,
}

impl Caption {
    /// The caption in two lines: the campaign and time, then the scope.
    pub fn lines(&self) -> [String; 2] {
        [
            format!("Campaign {} · computed {}", self.campaign, self.computed),
            format!("Scope: {}", self.scope),
        ]
    }
}

pub(crate) fn open(w: u32, h: u32, label: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\" font-family=\"Roboto, system-ui, sans-serif\" font-size=\"12\" fill=\"{INK}\"><rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>",
        esc(label)
    )
}

/// Opens a figure with its title on top.
pub(crate) fn figure_open(w: u32, h: u32, title: &str) -> String {
    let mut s = open(w, h, title);
    let _ = write!(
        s,
        "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"700\">{}</text>",
        esc(title)
    );
    s
}

/// The height the footer (notes and caption) takes.
pub(crate) fn footer_height(notes: &[String]) -> u32 {
    16 * (notes.len() as u32 + 2) + 10
}

/// Closes a figure: its notes, then the caption line, at the bottom.
pub(crate) fn figure_close(mut s: String, h: u32, notes: &[String], caption: &Caption) -> String {
    let mut y = h - footer_height(notes) + 16;
    for n in notes {
        let _ = write!(
            s,
            "<text x=\"8\" y=\"{y}\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
            esc(n)
        );
        y += 16;
    }
    for line in caption.lines() {
        let _ = write!(
            s,
            "<text x=\"8\" y=\"{y}\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
            esc(&line)
        );
        y += 16;
    }
    s.push_str("</svg>");
    s
}

/// A legend entry: a swatch and its text; returns the x after it.
pub(crate) fn swatch(s: &mut String, x: u32, y: u32, fill: &str, stroke: &str, text: &str) -> u32 {
    let _ = write!(
        s,
        "<rect x=\"{x}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{fill}\" stroke=\"{stroke}\"/><text x=\"{}\" y=\"{y}\">{}</text>",
        y - 10,
        x + 19,
        esc(text)
    );
    x + 19 + (text.chars().count() as u32) * 6 + 14
}

/// A label turned a quarter to the left, for a y axis.
fn y_label(s: &mut String, x: u32, y: u32, text: &str) {
    let _ = write!(
        s,
        "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 {x} {y})\" fill=\"{MUTED}\">{}</text>",
        esc(text)
    );
}

/// A reason's human label ("Generation artifact"), or the name itself if unknown.
pub fn reason_label(tax: &Taxonomy, stage: i64, name: &str) -> String {
    let stage = if stage == 2 {
        Stage::Question
    } else {
        Stage::Clip
    };
    tax.reason_label(stage, name)
}

/// Table 11 as a grid: scale rows, perspective/dynamics columns, each cell shaded by
/// the share of its clips retained.
pub fn t11_grid(report: &QcReport, tax: &Taxonomy, caption: &Caption) -> String {
    let g = grid(tax);
    let (cw, ch, left, top) = (130u32, 56u32, 150u32, 66u32);
    let body_w = left + cw * g.columns.len() as u32 + 10;
    let w = body_w.max(MIN_WIDTH);
    let grid_bottom = top + ch * g.rows.len() as u32;
    let mut notes = vec![
        "Each cell: clips retained / clips reviewed (first versions), with the tasks' short codes; shade: the share retained."
            .to_string(),
    ];
    let waiting: i64 = report.t11.iter().map(|(_, c)| c.waiting).sum();
    if waiting > 0 {
        notes.push(format!(
            "A snapshot: {waiting} reviewed clip(s) split between their validators wait for an author and count as not retained."
        ));
    }
    let h = grid_bottom + 40 + footer_height(&notes);
    let title = tax.tables.titled(
        Table::T11,
        " · ",
        "Stage 1: clips retained per task (video quality control)",
    );
    let mut s = figure_open(w, h, &title);
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"40\" text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
        left + cw * g.columns.len() as u32 / 2,
        esc(&g.column_title)
    );
    y_label(&mut s, 16, top + ch * g.rows.len() as u32 / 2, &g.row_title);
    for (c, col) in g.columns.iter().enumerate() {
        let x = left + cw * c as u32 + cw / 2;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"600\">{}</text>",
            top - 8,
            esc(col)
        );
    }
    for (r, scale) in g.rows.iter().enumerate() {
        let y = top + ch * r as u32;
        let _ = write!(
            s,
            "<text x=\"30\" y=\"{}\" font-weight=\"600\">{}</text>",
            y + ch / 2 + 4,
            esc(scale)
        );
        for c in 0..g.columns.len() {
            let x = left + cw * c as u32;
            let tasks = &g.cells[r][c];
            let cells: Vec<_> = tasks
                .iter()
                .filter_map(|t| report.t11.iter().find(|(code, _)| code == t))
                .collect();
            let (rev, ret): (i64, i64) = cells
                .iter()
                .fold((0, 0), |a, (_, c)| (a.0 + c.reviewed, a.1 + c.retained));
            let frac = if rev > 0 {
                ret as f64 / rev as f64
            } else {
                f64::NAN
            };
            // Shaded over 50-100% retained, where QC results live.
            let fill = if rev > 0 {
                shade((frac - 0.5) * 2.0, GREEN)
            } else {
                "#f0f0f0".into()
            };
            let _ = write!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#d9dee6\"/>",
                cw - 2,
                ch - 2
            );
            let ink = if frac > 0.8 { "#ffffff" } else { INK };
            let label = tasks
                .iter()
                .map(|t| tax.task_label(t))
                .collect::<Vec<_>>()
                .join(", ");
            if rev > 0 {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"700\" fill=\"{ink}\">{ret}/{rev}</text>",
                    x + cw / 2,
                    y + 24,
                );
            } else {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">not reviewed</text>",
                    x + cw / 2,
                    y + 24,
                );
            }
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                x + cw / 2,
                y + 42,
                esc(&label)
            );
        }
    }
    // Legend: the shade scale and "not reviewed".
    let ly = grid_bottom + 26;
    let mut x = 8;
    let _ = write!(s, "<text x=\"{x}\" y=\"{ly}\">retained:</text>");
    x += 62;
    for (t, label) in [
        (0.0, "50% or less"),
        (0.5, "75%"),
        (0.8, "90%"),
        (1.0, "100%"),
    ] {
        x = swatch(&mut s, x, ly, &shade(t, GREEN), "#d9dee6", label);
    }
    swatch(&mut s, x, ly, "#f0f0f0", "#d9dee6", "not reviewed");
    figure_close(s, h, &notes, caption)
}

/// Table 12 as a heat map of rejected questions; cells outside the matrix show "-",
/// cells of the matrix nobody reviewed yet "n/r".
pub fn t12_heatmap(report: &QcReport, tax: &Taxonomy, caption: &Caption) -> String {
    let (cw, ch, left, top) = (42u32, 24u32, 136u32, 78u32);
    let rows = &report.t12;
    let w = (left + cw * tax.qa_types.len() as u32 + 10).max(MIN_WIDTH);
    let grid_bottom = top + ch * rows.len() as u32;
    let notes = vec!["Each cell: base questions rejected in Stage 2 (both rejected, or the author rejected the split).".to_string()];
    let h = grid_bottom + 40 + footer_height(&notes);
    let max = rows
        .iter()
        .flat_map(|(_, r)| r.iter().map(|(_, c)| c.rejected))
        .max()
        .unwrap_or(0)
        .max(1);
    let title = tax.tables.titled(
        Table::T12,
        " · ",
        "Stage 2: questions rejected per task and QA type",
    );
    let mut s = figure_open(w, h, &title);
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"38\" text-anchor=\"middle\" fill=\"{MUTED}\">QA type (level)</text>",
        left + cw * tax.qa_types.len() as u32 / 2
    );
    y_label(&mut s, 12, top + ch * rows.len() as u32 / 2, "task");
    for (i, qa) in tax.qa_types.iter().enumerate() {
        let x = left + cw * i as u32 + cw / 2;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
            top - 22,
            esc(qa.level.as_str())
        );
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"600\">{}</text>",
            top - 6,
            esc(&qa.code)
        );
    }
    for (r, (task, row)) in rows.iter().enumerate() {
        let y = top + ch * r as u32;
        let _ = write!(s, "<text x=\"24\" y=\"{}\">{}</text>", y + 16, esc(task));
        for (i, qa) in tax.qa_types.iter().enumerate() {
            let x = left + cw * i as u32;
            match row.iter().find(|(c, _)| *c == qa.code) {
                None => {
                    let _ = write!(
                        s,
                        "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"#eceef2\"/>",
                        cw - 2,
                        ch - 2
                    );
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#9aa3b0\">-</text>",
                        x + cw / 2,
                        y + 16
                    );
                }
                Some((_, c)) if c.reviewed == 0 => {
                    let _ = write!(
                        s,
                        "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" stroke=\"#9aa3b0\" stroke-dasharray=\"3 2\"><title>{} x {}: not reviewed</title></rect>",
                        cw - 2,
                        ch - 2,
                        esc(task),
                        esc(&qa.code),
                    );
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">n/r</text>",
                        x + cw / 2,
                        y + 16
                    );
                }
                Some((_, c)) => {
                    let fill = shade(c.rejected as f64 / max as f64, RED);
                    let ink = if c.rejected as f64 / max as f64 > 0.6 {
                        "#ffffff"
                    } else {
                        INK
                    };
                    let _ = write!(
                        s,
                        "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#d9dee6\"><title>{} x {}: {} of {} rejected</title></rect>",
                        cw - 2,
                        ch - 2,
                        esc(task),
                        esc(&qa.code),
                        c.rejected,
                        c.reviewed
                    );
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                        x + cw / 2,
                        y + 16,
                        c.rejected
                    );
                }
            }
        }
    }
    let ly = grid_bottom + 26;
    let mut x = 8;
    let _ = write!(s, "<text x=\"{x}\" y=\"{ly}\">rejected:</text>");
    x += 64;
    x = swatch(&mut s, x, ly, "#ffffff", "#d9dee6", "0");
    if max >= 4 {
        let mid = max / 2;
        x = swatch(
            &mut s,
            x,
            ly,
            &shade(mid as f64 / max as f64, RED),
            "#d9dee6",
            &mid.to_string(),
        );
    }
    x = swatch(&mut s, x, ly, &shade(1.0, RED), "#d9dee6", &max.to_string());
    x = swatch(&mut s, x, ly, "#ffffff", "#9aa3b0", "n/r: not reviewed");
    swatch(
        &mut s,
        x,
        ly,
        "#eceef2",
        "#eceef2",
        "-: outside the applicability matrix",
    );
    figure_close(s, h, &notes, caption)
}

/// Cohen's kappa per pair (its tasks pooled), per task and pair, and pooled, as bars
/// on [-1, 1] with their 95% intervals (truncated to [-1, 1]).
pub fn kappa_bars(
    stage: &StageSummary,
    stage_name: &str,
    tables: &Tables,
    caption: &Caption,
) -> String {
    let (left, plot, right, row) = (260u32, 360u32, 200u32, 22u32);
    let title = tables.titled(
        Table::T13,
        " · ",
        &format!("{stage_name}: Cohen's κ per pair, per task and pair, and pooled"),
    );
    enum Line<'a> {
        Heading(&'static str),
        Row(String, &'a Agreement, bool),
    }
    let mut lines: Vec<Line> = vec![Line::Heading("Per pair (all its tasks pooled)")];
    lines.extend(stage.per_rater_pair.iter().map(|p| {
        Line::Row(
            format!(
                "{} + {}, {} task(s), n={}",
                p.rater1,
                p.rater2,
                p.tasks.len(),
                p.items
            ),
            &p.agreement,
            false,
        )
    }));
    lines.push(Line::Heading("Per task and pair"));
    lines.extend(stage.per_pair.iter().map(|p| {
        Line::Row(
            format!(
                "{} · {} + {}, n={}",
                task_prefix(&p.task),
                p.rater1,
                p.rater2,
                p.items
            ),
            &p.agreement,
            false,
        )
    }));
    lines.push(Line::Heading("All pairs pooled (the paper's figure)"));
    lines.push(Line::Row(
        format!("pooled, n={}", stage.items_reviewed),
        &stage.pooled,
        true,
    ));
    let top = 36u32;
    let n = lines.len() as u32;
    let axis_y = top + row * n + 4;
    let notes = vec![
        format!("Bar: Cohen's κ; whiskers: {KAPPA_CI95_BOUNDED_NOTE}."),
        "n: items both validators decided; rater 1 is each pair's first member.".to_string(),
    ];
    let legend_y = axis_y + 50;
    let w = (left + plot + right).max(MIN_WIDTH);
    let h = legend_y + 8 + footer_height(&notes);
    let x_of = |k: f64| f64::from(left) + (k.clamp(-1.0, 1.0) + 1.0) / 2.0 * f64::from(plot);
    let mut s = figure_open(w, h, &title);
    for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] {
        let x = x_of(tick);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{axis_y}\" stroke=\"{}\"/>",
            if tick == 0.0 { MUTED } else { GRID }
        );
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
            axis_y + 16,
            format!("{tick}").replace('-', "−")
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">Cohen's κ</text>",
        x_of(0.0),
        axis_y + 32
    );
    for (i, line) in lines.iter().enumerate() {
        let y = top + row * i as u32;
        match line {
            Line::Heading(text) => {
                let _ = write!(
                    s,
                    "<text x=\"8\" y=\"{}\" font-weight=\"700\" fill=\"{MUTED}\">{}</text>",
                    y + 15,
                    esc(text)
                );
            }
            Line::Row(label, a, pooled) => {
                let weight = if *pooled { "700" } else { "400" };
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"{weight}\">{}</text>",
                    left - 8,
                    y + 15,
                    esc(label)
                );
                match a.cohen_kappa {
                    None if a.items() == 0 => {
                        let _ = write!(
                            s,
                            "<text x=\"{}\" y=\"{}\" fill=\"{MUTED}\">not reviewed</text>",
                            left + plot + 8,
                            y + 15
                        );
                    }
                    None => {
                        let why = match &a.withheld {
                            Some(w) => format!("too few items ({})", w.items),
                            None => "undefined (one category only)".into(),
                        };
                        let _ = write!(
                            s,
                            "<text x=\"{}\" y=\"{}\" fill=\"#8a6100\">{why}</text>",
                            left + plot + 8,
                            y + 15
                        );
                    }
                    Some(k) => {
                        let ci = a.cohen_kappa_ci95_bounded;
                        kappa_bar(&mut s, &x_of, (y, left + plot + 8), k, ci, *pooled);
                    }
                }
            }
        }
    }
    // Legend.
    let mut x = 8;
    x = swatch(&mut s, x, legend_y, "#2b5fab", "#2b5fab", "κ of a pair");
    x = swatch(&mut s, x, legend_y, INK, INK, "κ pooled over all pairs");
    let _ = write!(
        s,
        "<line x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/><text x=\"{}\" y=\"{legend_y}\">95% CI (Wald, truncated to [−1, 1])</text>",
        legend_y - 4,
        x + 16,
        legend_y - 4,
        x + 22
    );
    figure_close(s, h, &notes, caption)
}

/// One bar of [`kappa_bars`] at row `y`: kappa `k` from 0, its interval as whiskers, and
/// the figures as text at `text_x`.
fn kappa_bar(
    s: &mut String,
    x_of: &impl Fn(f64) -> f64,
    (y, text_x): (u32, u32),
    k: f64,
    ci: Option<[f64; 2]>,
    pooled: bool,
) {
    let (x0, x1) = (x_of(0.0), x_of(k));
    let (a0, a1) = if x1 >= x0 { (x0, x1) } else { (x1, x0) };
    let fill = if pooled { INK } else { "#2b5fab" };
    let _ = write!(
        s,
        "<rect x=\"{a0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"12\" fill=\"{fill}\"><title>kappa {k:.3}</title></rect>",
        y + 5,
        (a1 - a0).max(1.0)
    );
    let mut value = format!("{k:.2}");
    if let Some([lo, hi]) = ci {
        let (l, r) = (x_of(lo), x_of(hi));
        let cy = y + 11;
        let _ = write!(
            s,
            "<line x1=\"{l:.1}\" y1=\"{cy}\" x2=\"{r:.1}\" y2=\"{cy}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/>"
        );
        for e in [l, r] {
            let _ = write!(
                s,
                "<line x1=\"{e:.1}\" y1=\"{}\" x2=\"{e:.1}\" y2=\"{}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/>",
                cy - 5,
                cy + 5
            );
        }
        value = format!("{k:.2} [{lo:.2}, {hi:.2}]");
    }
    let _ = write!(
        s,
        "<text x=\"{text_x}\" y=\"{}\">{}</text>",
        y + 15,
        esc(&value.replace('-', "−"))
    );
}

/// Totals of the reasons given with counted rejects in one stage, as horizontal bars.
pub fn reason_bars(report: &QcReport, tax: &Taxonomy, stage: i64, caption: &Caption) -> String {
    let mut totals: Vec<(String, i64)> = Vec::new();
    for r in report.reasons.iter().filter(|r| r.stage == stage) {
        match totals.iter_mut().find(|(k, _)| *k == r.reason) {
            Some((_, n)) => *n += r.n,
            None => totals.push((r.reason.clone(), r.n)),
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (left, plot, row, top) = (200u32, 320u32, 22u32, 34u32);
    let rows = totals.len().max(1) as u32;
    let axis_y = top + row * rows + 4;
    let notes = vec![
        "One count per validator's counted reject and reason given (a reject may give several reasons)."
            .to_string(),
    ];
    let legend_y = axis_y + 40;
    let w = (left + plot + 80).max(MIN_WIDTH);
    let h = legend_y + 8 + footer_height(&notes);
    let max = totals.iter().map(|t| t.1).max().unwrap_or(1).max(1);
    let title = format!(
        "Stage {stage} ({}): reasons given with counted rejects",
        if stage == 1 { "clips" } else { "questions" }
    );
    let mut s = figure_open(w, h, &title);
    if totals.is_empty() {
        let _ = write!(
            s,
            "<text x=\"{left}\" y=\"{}\" fill=\"{MUTED}\">no rejects yet</text>",
            top + 15
        );
    }
    for (i, (reason, n)) in totals.iter().enumerate() {
        let y = top + row * i as u32;
        let wbar = (*n as f64 / max as f64 * f64::from(plot)).max(1.0);
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 8,
            y + 15,
            esc(&reason_label(tax, stage, reason))
        );
        let _ = write!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"{wbar:.1}\" height=\"14\" fill=\"#b3361f\"/>",
            y + 3
        );
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\">{n}</text>",
            f64::from(left) + wbar + 6.0,
            y + 15
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\" stroke=\"{MUTED}\"/><text x=\"{left}\" y=\"{}\" fill=\"{MUTED}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{MUTED}\">{max}</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">counted rejects giving the reason</text>",
        left + plot,
        axis_y + 14,
        left + plot,
        axis_y + 14,
        left + plot / 2,
        axis_y + 28
    );
    swatch(
        &mut s,
        8,
        legend_y,
        "#b3361f",
        "#b3361f",
        "rejects giving the reason",
    );
    figure_close(s, h, &notes, caption)
}

/// One series of a stacked bar chart: its name and colour.
pub struct Series {
    pub name: &'static str,
    pub colour: &'static str,
}

/// Horizontal stacked bars, one row per label, for the admin's overview: each row's
/// counts in the order of `series`, an optional target drawn as a tick on every row,
/// and a legend naming only the series that have a count somewhere.
pub fn stacked_bars(
    title: &str,
    series: &[Series],
    rows: &[(String, Vec<i64>)],
    target: Option<i64>,
) -> String {
    let (left, plot, right, row, top) = (130u32, 520u32, 110u32, 20u32, 30u32);
    let max = rows
        .iter()
        .map(|(_, v)| v.iter().sum::<i64>())
        .chain(target)
        .max()
        .unwrap_or(1)
        .max(1);
    let used: Vec<usize> = (0..series.len())
        .filter(|&i| rows.iter().any(|(_, v)| v.get(i).copied().unwrap_or(0) > 0))
        .collect();
    let legend_y = top + row * rows.len() as u32 + 22;
    let w = left + plot + right;
    let h = legend_y + 14;
    let x_of = |n: i64| f64::from(left) + n as f64 / max as f64 * f64::from(plot);
    let mut s = open(w, h, title);
    let _ = write!(
        s,
        "<text x=\"8\" y=\"18\" font-weight=\"700\">{}</text>",
        esc(title)
    );
    for (r, (label, values)) in rows.iter().enumerate() {
        let y = top + row * r as u32;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{}\" width=\"{plot}\" height=\"14\" fill=\"#f3f4f7\"/>",
            left - 8,
            y + 13,
            esc(label),
            y + 2
        );
        let mut at = 0i64;
        for (i, n) in values.iter().enumerate() {
            if *n <= 0 {
                continue;
            }
            let Some(sr) = series.get(i) else { continue };
            let (x0, x1) = (x_of(at), x_of(at + n));
            let _ = write!(
                s,
                "<rect x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"14\" fill=\"{}\"><title>{}: {} {n}</title></rect>",
                y + 2,
                (x1 - x0).max(1.0),
                sr.colour,
                esc(label),
                sr.name
            );
            at += n;
        }
        if let Some(t) = target {
            let x = x_of(t);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"2\"/>",
                y,
                y + 18
            );
        }
        let first = values.first().copied().unwrap_or(0);
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"{MUTED}\">{}</text>",
            left + plot + 8,
            y + 13,
            esc(&match target {
                Some(t) => format!("{first} / {t}"),
                None => format!("{first} of {}", values.iter().sum::<i64>()),
            })
        );
    }
    let mut x = 8;
    for &i in &used {
        x = swatch(
            &mut s,
            x,
            legend_y,
            series[i].colour,
            series[i].colour,
            series[i].name,
        );
    }
    if target.is_some() {
        let _ = write!(
            s,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{legend_y}\">target</text>",
            legend_y - 12,
            legend_y + 2,
            x + 6
        );
    }
    s.push_str("</svg>");
    s
}

/// One figure, ready to show or to download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    /// The file name without extension (`t13-kappa-stage1`).
    pub name: &'static str,
    pub svg: String,
}

/// The QC figures: Tables 11-13 and the reasons, in the dashboard's order.
/// Without clip review, the Stage 1 figures (and Table 11's) are left out.
pub fn qc_figures(report: &QcReport, tax: &Taxonomy, caption: &Caption) -> Vec<Figure> {
    // Each figure's caption names its own stage's scope.
    let (one, two) = (
        report.stage_caption(1, caption),
        report.stage_caption(2, caption),
    );
    let figures = vec![
        Figure {
            name: "t13-kappa-stage1",
            svg: kappa_bars(&report.stage1, "Stage 1 (clips)", &tax.tables, &one),
        },
        Figure {
            name: "t13-kappa-stage2",
            svg: kappa_bars(&report.stage2, "Stage 2 (questions)", &tax.tables, &two),
        },
        Figure {
            name: "t11-retained",
            svg: t11_grid(report, tax, &one),
        },
        Figure {
            name: "t12-rejected",
            svg: t12_heatmap(report, tax, &two),
        },
        Figure {
            name: "reasons-stage1",
            svg: reason_bars(report, tax, 1, &one),
        },
        Figure {
            name: "reasons-stage2",
            svg: reason_bars(report, tax, 2, &two),
        },
    ];
    figures
        .into_iter()
        .filter(|f| report.clip_review || !is_clip_review_figure(f.name))
        .collect()
}

/// Whether a QC figure shows the clip review (Stage 1): none without it.
pub fn is_clip_review_figure(name: &str) -> bool {
    matches!(name, "t13-kappa-stage1" | "t11-retained" | "reasons-stage1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::{OutcomeCount, Scope};
    use crate::report::build;
    use std::collections::HashMap;

    fn caption() -> Caption {
        Caption {
            campaign: "c".into(),
            scope: "Stage 1 over first versions".into(),
            computed: "2026-12-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn plots_escape_text_and_use_no_inline_style_or_script() {
        let counts = vec![OutcomeCount {
            stage: 1,
            task: "MC_F_EGO_STA".into(),
            rater1: "<b>a</b>".into(),
            rater2: "b&c".into(),
            qa_type: None,
            outcome: "both_pass".into(),
            verdict1: Some("valid".into()),
            verdict2: Some("valid".into()),
            reasons1: Some(String::new()),
            reasons2: Some(String::new()),
            // At the minimum count, so that kappa is undefined rather than withheld.
            n: crate::report::MIN_AGREEMENT_ITEMS,
        }];
        let tax = Taxonomy::vgenst();
        let r = build("c", &tax, &Scope::default(), &counts, &HashMap::new());
        let cap = caption();
        for f in qc_figures(&r, &tax, &cap) {
            let svg = &f.svg;
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
            assert!(!svg.contains("style=") && !svg.contains("<script"));
            assert!(!svg.contains("<b>"));
            // Every figure stands alone: a title, and the caption line.
            assert!(svg.contains("font-weight=\"700\""), "{}", f.name);
            assert!(
                svg.contains("Campaign c · computed 2026-12-01T00:00:00Z")
                    && svg.contains("Scope: Stage "),
                "{}",
                f.name
            );
        }
        assert!(
            kappa_bars(&r.stage1, "x", &Tables::default(), &cap)
                .contains("&lt;b&gt;a&lt;/b&gt; + b&amp;c")
        );
        assert!(
            kappa_bars(&r.stage1, "x", &Tables::default(), &cap)
                .contains("undefined (one category only)"),
            "kappa of one category"
        );
    }

    #[test]
    fn every_figure_renders_to_png_and_pdf() {
        let tax = Taxonomy::vgenst();
        let r = build("c", &tax, &Scope::default(), &[], &HashMap::new());
        for f in qc_figures(&r, &tax, &caption()) {
            assert!(crate::report::render::png(&f.svg).is_ok(), "{}", f.name);
            assert!(crate::report::render::pdf(&f.svg).is_ok(), "{}", f.name);
        }
    }

    #[test]
    fn reasons_are_named_in_words() {
        assert_eq!(
            reason_label(&Taxonomy::vgenst(), 1, "generation_artifact"),
            "Generation artifact"
        );
        assert_eq!(reason_label(&Taxonomy::vgenst(), 2, "other"), "Other");
        assert_eq!(
            reason_label(&Taxonomy::vgenst(), 2, "something_new"),
            "something_new"
        );
    }
}
