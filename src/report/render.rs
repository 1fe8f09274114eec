//! Figures from SVG to PNG (at print resolution) and to PDF (vector, the font
//! embedded), with the one font built into the binary, so that a figure renders the
//! same on every machine, whatever fonts it has. Pure: bytes in, bytes out.

use crate::error::{Error, Result};
use std::sync::{Arc, OnceLock};

/// Roboto Regular (Apache License 2.0, `fonts/LICENSE.txt`): Latin, Greek (kappa,
/// alpha), the minus and plus-minus signs.
pub const FONT: &[u8] = include_bytes!("../../fonts/Roboto-Regular.ttf");
/// Its family name, first in every figure's `font-family`.
pub const FONT_FAMILY: &str = "Roboto";

/// Pixels per inch of the PNG: print resolution for the figures' nominal size (the
/// SVG's pixels are CSS pixels, 96 to the inch).
pub const PNG_DPI: f32 = 300.0;

/// The fonts of every conversion: the built-in one only, never the machine's.
fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static DB: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        db.set_sans_serif_family(FONT_FAMILY);
        db.set_serif_family(FONT_FAMILY);
        db.set_monospace_family(FONT_FAMILY);
        Arc::new(db)
    })
    .clone()
}

fn tree(svg: &str) -> Result<resvg::usvg::Tree> {
    let options = resvg::usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        fontdb: fonts(),
        ..resvg::usvg::Options::default()
    };
    resvg::usvg::Tree::from_str(svg, &options)
        .map_err(|e| Error::fault("cannot read the figure's SVG", e))
}

/// The figure as a PNG at [`PNG_DPI`], on white.
pub fn png(svg: &str) -> Result<Vec<u8>> {
    let tree = tree(svg)?;
    let scale = PNG_DPI / 96.0;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| Error::Internal("the figure has no size".into()))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| Error::Internal("cannot allocate the figure's pixels".into()))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| Error::fault("cannot write the figure as PNG", e))
}

/// The figure as a one-page vector PDF of its own size, the font embedded.
pub fn pdf(svg: &str) -> Result<Vec<u8>> {
    let tree = tree(svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| Error::fault("cannot write the figure as PDF", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"40\" viewBox=\"0 0 120 40\" font-family=\"Roboto, sans-serif\"><text x=\"4\" y=\"24\">κ = 0.58 ± 0.04</text></svg>";

    #[test]
    fn a_figure_becomes_a_print_png_and_a_pdf_with_the_font_inside() {
        let p = png(SVG).unwrap();
        assert!(p.starts_with(b"\x89PNG"));
        // 120 x 40 CSS pixels at 300 dpi: 375 x 125.
        assert_eq!(&p[16..24], &[0, 0, 1, 119, 0, 0, 0, 125]);
        assert_eq!(png(SVG).unwrap(), p, "the same bytes every time");
        let d = pdf(SVG).unwrap();
        assert!(d.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&d);
        assert!(text.contains("Roboto"), "the font is embedded");
    }

    #[test]
    fn text_is_drawn_with_the_built_in_font_whatever_the_svg_asks_for() {
        let other = SVG.replace("Roboto, sans-serif", "Some Font Nobody Has");
        let p = png(&other).unwrap();
        // Ink was drawn: the text found a font.
        let img = resvg::tiny_skia::Pixmap::decode_png(&p).unwrap();
        assert!(img.pixels().iter().any(|px| px.red() < 128));
    }
}
