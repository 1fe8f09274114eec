//! Plots drawn on the server as SVG: presentation attributes only (no inline styles or
//! scripts, so the pages' Content-Security-Policy holds), every text escaped.

use super::format::{column_label, grid, task_prefix};
use super::{QcReport, StageSummary};
use crate::domain::taxonomy::Taxonomy;
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
fn shade(t: f64, to: (u8, u8, u8)) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(to.0), mix(to.1), mix(to.2))
}

pub(crate) fn open(w: u32, h: u32, label: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\" font-family=\"system-ui, sans-serif\" font-size=\"12\">",
        esc(label)
    )
}

/// Table 11 as a grid: scale rows, perspective/dynamics columns, each cell shaded by
/// the share of its clips retained.
pub fn t11_grid(report: &QcReport, tax: &Taxonomy) -> String {
    let g = grid(tax);
    let (cw, ch, left, top) = (130u32, 56u32, 120u32, 28u32);
    let w = left + cw * g.columns.len() as u32 + 10;
    let h = top + ch * g.rows.len() as u32 + 10;
    let mut s = open(w, h, "Table 11: clips retained per task");
    for (c, col) in g.columns.iter().enumerate() {
        let x = left + cw * c as u32 + cw / 2;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"18\" text-anchor=\"middle\" font-weight=\"600\">{}</text>",
            esc(&column_label(col))
        );
    }
    for (r, scale) in g.rows.iter().enumerate() {
        let y = top + ch * r as u32;
        let _ = write!(
            s,
            "<text x=\"8\" y=\"{}\" font-weight=\"600\">{}</text>",
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
                shade((frac - 0.5) * 2.0, (31, 122, 77))
            } else {
                "#f0f0f0".into()
            };
            let _ = write!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#d9dee6\"/>",
                cw - 2,
                ch - 2
            );
            let ink = if frac > 0.8 { "#ffffff" } else { "#1d2430" };
            let label = tasks
                .iter()
                .map(|t| task_prefix(t))
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
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5d6878\">not reviewed</text>",
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
    s.push_str("</svg>");
    s
}

/// Table 12 as a heat map of rejected questions; cells outside the matrix show "-".
pub fn t12_heatmap(report: &QcReport, tax: &Taxonomy) -> String {
    let (cw, ch, left, top) = (42u32, 24u32, 112u32, 40u32);
    let rows = &report.t12;
    let w = left + cw * tax.qa_types.len() as u32 + 10;
    let h = top + ch * rows.len() as u32 + 10;
    let max = rows
        .iter()
        .flat_map(|(_, r)| r.iter().map(|(_, c)| c.rejected))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut s = open(w, h, "Table 12: questions rejected per task and QA type");
    for (i, qa) in tax.qa_types.iter().enumerate() {
        let x = left + cw * i as u32 + cw / 2;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"14\" text-anchor=\"middle\" fill=\"#5d6878\">{}</text>",
            esc(qa.level.as_str())
        );
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"32\" text-anchor=\"middle\" font-weight=\"600\">{}</text>",
            esc(&qa.code)
        );
    }
    for (r, (task, row)) in rows.iter().enumerate() {
        let y = top + ch * r as u32;
        let _ = write!(s, "<text x=\"4\" y=\"{}\">{}</text>", y + 16, esc(task));
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
                        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5d6878\">n/r</text>",
                        x + cw / 2,
                        y + 16
                    );
                }
                Some((_, c)) => {
                    let fill = shade(c.rejected as f64 / max as f64, (179, 54, 31));
                    let ink = if c.rejected as f64 / max as f64 > 0.6 {
                        "#ffffff"
                    } else {
                        "#1d2430"
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
    s.push_str("</svg>");
    s
}

/// Cohen's kappa per pair (and pooled) as bars on [-1, 1] with their 95% CIs.
pub fn kappa_bars(stage: &StageSummary, title: &str) -> String {
    let (left, right, row, top) = (250u32, 60u32, 22u32, 30u32);
    let plot = 360u32;
    let n = (stage.per_rater_pair.len() + stage.per_pair.len()) as u32 + 1;
    let w = left + plot + right;
    let h = top + row * n + 44;
    let x_of = |k: f64| f64::from(left) + (k.clamp(-1.0, 1.0) + 1.0) / 2.0 * f64::from(plot);
    let mut s = open(w, h, title);
    let _ = write!(
        s,
        "<text x=\"4\" y=\"16\" font-weight=\"600\">{}</text>",
        esc(title)
    );
    for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] {
        let x = x_of(tick);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{}\"/>",
            top + row * n,
            if tick == 0.0 { "#5d6878" } else { "#e3e7ee" }
        );
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#5d6878\">{tick}</text>",
            top + row * n + 16
        );
    }
    // Each pair over all its tasks first, then each task and pair.
    let mut rows: Vec<(String, &super::Agreement, bool)> = stage
        .per_rater_pair
        .iter()
        .map(|p| {
            (
                format!(
                    "pair {}+{}, {} task(s) (n={})",
                    p.rater1,
                    p.rater2,
                    p.tasks.len(),
                    p.items
                ),
                &p.agreement,
                false,
            )
        })
        .collect();
    rows.extend(stage.per_pair.iter().map(|p| {
        (
            format!(
                "task {}, {}+{} (n={})",
                task_prefix(&p.task),
                p.rater1,
                p.rater2,
                p.items
            ),
            &p.agreement,
            false,
        )
    }));
    rows.push((
        format!("pooled (n={})", stage.items_reviewed),
        &stage.pooled,
        true,
    ));
    for (i, (label, a, pooled)) in rows.iter().enumerate() {
        let y = top + row * i as u32;
        let weight = if *pooled { "700" } else { "400" };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"{weight}\">{}</text>",
            left - 8,
            y + 15,
            esc(label)
        );
        match a.cohen_kappa {
            None => {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" fill=\"#8a6100\">undefined (one category only)</text>",
                    left + 4,
                    y + 15
                );
            }
            Some(k) => {
                let (x0, x1) = (x_of(0.0), x_of(k));
                let (a0, a1) = if x1 >= x0 { (x0, x1) } else { (x1, x0) };
                let fill = if *pooled { "#1d2430" } else { "#2b5fab" };
                let _ = write!(
                    s,
                    "<rect x=\"{a0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"12\" fill=\"{fill}\"><title>kappa {k:.3}</title></rect>",
                    y + 5,
                    (a1 - a0).max(1.0)
                );
                if let Some([lo, hi]) = a.cohen_kappa_ci95_bounded {
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
                }
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" fill=\"#1d2430\">{k:.2}</text>",
                    left + plot + 6,
                    y + 15
                );
            }
        }
    }
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\" fill=\"#5d6878\">Whiskers: {}.</text>",
        top + row * n + 36,
        esc(KAPPA_CI95_BOUNDED_NOTE)
    );
    s.push_str("</svg>");
    s
}

/// Totals of the reasons given with counted rejects in one stage, as horizontal bars.
pub fn reason_bars(report: &QcReport, stage: i64, title: &str) -> String {
    let mut totals: Vec<(String, i64)> = Vec::new();
    for r in report.reasons.iter().filter(|r| r.stage == stage) {
        match totals.iter_mut().find(|(k, _)| *k == r.reason) {
            Some((_, n)) => *n += r.n,
            None => totals.push((r.reason.clone(), r.n)),
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (left, plot, row, top) = (190u32, 300u32, 22u32, 28u32);
    let h = top + row * (totals.len().max(1) as u32) + 8;
    let max = totals.iter().map(|t| t.1).max().unwrap_or(1).max(1);
    let mut s = open(left + plot + 60, h, title);
    let _ = write!(
        s,
        "<text x=\"4\" y=\"16\" font-weight=\"600\">{}</text>",
        esc(title)
    );
    if totals.is_empty() {
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{}\" fill=\"#5d6878\">no rejects yet</text>",
            top + 14
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
            esc(reason)
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
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::build;
    use crate::store::stats::{OutcomeCount, Scope};
    use std::collections::HashMap;

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
            n: 3,
        }];
        let tax = Taxonomy::vgenst();
        let r = build("c", &tax, &Scope::default(), &counts, &HashMap::new());
        for svg in [
            t11_grid(&r, &tax),
            t12_heatmap(&r, &tax),
            kappa_bars(&r.stage1, "Stage 1"),
            reason_bars(&r, 1, "Reasons"),
        ] {
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
            assert!(!svg.contains("style=") && !svg.contains("<script"));
            assert!(!svg.contains("<b>"));
        }
        assert!(kappa_bars(&r.stage1, "x").contains("&lt;b&gt;a&lt;/b&gt;+b&amp;c"));
        assert!(
            kappa_bars(&r.stage1, "x").contains("undefined"),
            "kappa of one category"
        );
    }
}
