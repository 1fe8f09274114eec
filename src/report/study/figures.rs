//! The study's figures: Table 14 as mean ranks with their spread, Table 15 as the
//! share judged fake per source.

use super::StudyReport;
use crate::domain::study::{RANK_AXES, Truth};
use crate::domain::taxonomy::{Table, Tables};
use crate::report::svg::{
    Caption, Figure, GRID, MIN_WIDTH, MUTED, esc, figure_close, figure_open, footer_height, swatch,
};
use std::fmt::Write;

/// Colours of the sources in Table 14's plot: none of them the red that marks
/// generated clips in Table 15's.
const SOURCE_COLOURS: [&str; 8] = [
    "#2b5fab", "#3f8f5a", "#6b4fa0", "#8a6100", "#1f8a8a", "#a04f7a", "#5d6878", "#9aa3b0",
];

/// Table 14 as points with error bars: per axis, each source's mean rank (a point) and
/// one sample standard deviation either side, on an axis from 1 (best, drawn "better")
/// to the number of sources (worst).
pub fn t14_ranks(r: &StudyReport, tables: &Tables, caption: &Caption) -> String {
    let k = r.sources.len().max(2);
    let (left, plot, right, row) = (200u32, 360u32, 120u32, 20u32);
    let top = 40u32;
    let group = 24 + row * r.sources.len() as u32;
    let axis_y = top + group * RANK_AXES.len() as u32;
    let legend_y = axis_y + 52;
    let legend_rows = r.sources.len().div_ceil(4).max(1) as u32;
    let notes = vec![format!(
        "Point: mean rank over every (set, participant); whiskers: ±1 sample SD (ddof 1), cut at 1 and {k}. Lower is better."
    )];
    let w = (left + plot + right).max(MIN_WIDTH);
    let h = legend_y + 18 * legend_rows + footer_height(&notes);
    let x_of = |v: f64| {
        f64::from(left) + (v.clamp(1.0, k as f64) - 1.0) / (k as f64 - 1.0) * f64::from(plot)
    };
    let title = tables.titled(
        Table::T14,
        " · ",
        "Blind study: mean rank per source and axis (1 = best)",
    );
    let mut s = figure_open(w, h, &title);
    for tick in 1..=k {
        let x = x_of(tick as f64);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{axis_y}\" stroke=\"{GRID}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{tick}</text>",
            axis_y + 16
        );
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{}\" font-weight=\"700\" fill=\"#1f7a4d\">better</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{MUTED}\">worse</text><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">mean rank (1 = best, {k} = worst)</text>",
        axis_y + 32,
        left + plot,
        axis_y + 32,
        f64::from(left) + f64::from(plot) / 2.0,
        axis_y + 32
    );
    for (a, axis) in RANK_AXES.iter().enumerate() {
        let gy = top + group * a as u32;
        let _ = write!(
            s,
            "<text x=\"8\" y=\"{}\" font-weight=\"700\">{}</text>",
            gy + 16,
            esc(axis.title())
        );
        for (i, row_cells) in r.t14.iter().enumerate() {
            let c = &row_cells[a];
            let y = gy + 24 + row * i as u32;
            let cy = f64::from(y) + 6.0;
            let colour = SOURCE_COLOURS[i % SOURCE_COLOURS.len()];
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                left - 10,
                y + 10,
                esc(&r.sources[i])
            );
            let Some(m) = c.mean else {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" fill=\"{MUTED}\">no ranks yet</text>",
                    left + 6,
                    y + 10
                );
                continue;
            };
            if let Some(sd) = c.std {
                let (x1, x2) = (x_of(m - sd), x_of(m + sd));
                let _ = write!(
                    s,
                    "<line x1=\"{x1:.1}\" y1=\"{cy:.1}\" x2=\"{x2:.1}\" y2=\"{cy:.1}\" stroke=\"{colour}\" stroke-width=\"1.5\"/><line x1=\"{x1:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/><line x1=\"{x2:.1}\" y1=\"{:.1}\" x2=\"{x2:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/>",
                    cy - 4.0,
                    cy + 4.0,
                    cy - 4.0,
                    cy + 4.0
                );
            }
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{colour}\"><title>{} {}: {m:.2}</title></circle>",
                x_of(m),
                esc(&r.sources[i]),
                axis.as_str()
            );
            let text = match c.std {
                Some(sd) => format!("{m:.2} ± {sd:.2} (n={})", c.n),
                None => format!("{m:.2} (n={})", c.n),
            };
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                left + plot + 10,
                y + 10,
                esc(&text)
            );
        }
    }
    // Legend: the sources' colours, and what a point and its whiskers are.
    let mut x = 8;
    let mut y = legend_y;
    for (i, src) in r.sources.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            x = 8;
            y += 18;
        }
        let colour = SOURCE_COLOURS[i % SOURCE_COLOURS.len()];
        x = swatch(&mut s, x, y, colour, colour, src);
    }
    figure_close(s, h, &notes, caption)
}

/// Table 15 as bars: the share of judgments "fake" per source, coloured by the truth.
pub fn t15_bars(r: &StudyReport, tables: &Tables, caption: &Caption) -> String {
    let (left, plot, row, top) = (170u32, 360u32, 26u32, 36u32);
    let n = r.t15.len().max(1) as u32;
    let axis_y = top + row * n;
    let legend_y = axis_y + 48;
    let notes = vec![
        "Share of the real/fake labels given on a source's clips that say fake (generated)."
            .to_string(),
    ];
    let w = (left + plot + 110).max(MIN_WIDTH);
    let h = legend_y + 8 + footer_height(&notes);
    let title = tables.titled(Table::T15, " · ", "Blind study: judged fake per source");
    let mut s = figure_open(w, h, &title);
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = f64::from(left) + tick * f64::from(plot);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{axis_y}\" stroke=\"{GRID}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{:.0}%</text>",
            axis_y + 16,
            tick * 100.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">judged fake (% of labels given)</text>",
        left + plot / 2,
        axis_y + 32
    );
    for (i, j) in r.t15.iter().enumerate() {
        let y = top + row * i as u32;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 8,
            y + 17,
            esc(&j.source)
        );
        let Some(f) = j.judged_fake else {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" fill=\"{MUTED}\">no labels yet</text>",
                left + 6,
                y + 17
            );
            continue;
        };
        let colour = match j.truth {
            Some(Truth::Fake) => "#b3361f",
            Some(Truth::Real) => "#2b5fab",
            None => MUTED,
        };
        let _ = write!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"{:.1}\" height=\"16\" fill=\"{colour}\"><title>{:.1}%</title></rect><text x=\"{:.1}\" y=\"{}\">{:.1}% of {}</text>",
            y + 5,
            (f * f64::from(plot)).max(1.0),
            f * 100.0,
            f64::from(left) + f * f64::from(plot) + 6.0,
            y + 17,
            f * 100.0,
            j.judgments
        );
    }
    let mut x = 8;
    x = swatch(
        &mut s,
        x,
        legend_y,
        "#b3361f",
        "#b3361f",
        "generated (truth: fake)",
    );
    x = swatch(
        &mut s,
        x,
        legend_y,
        "#2b5fab",
        "#2b5fab",
        "real (truth: real)",
    );
    swatch(&mut s, x, legend_y, MUTED, MUTED, "mixed truth");
    figure_close(s, h, &notes, caption)
}

/// The study's figures: Tables 14 and 15.
pub fn figures(r: &StudyReport, tables: &Tables, caption: &Caption) -> Vec<Figure> {
    vec![
        Figure {
            name: "t14-ranks",
            svg: t14_ranks(r, tables, caption),
        },
        Figure {
            name: "t15-judged-fake",
            svg: t15_bars(r, tables, caption),
        },
    ]
}
