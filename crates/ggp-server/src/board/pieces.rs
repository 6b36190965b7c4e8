//! A cell's contents as SVG, drawn around the cell's centre: chess pieces as their signs,
//! colours as discs, `x` and `o` as marks, anything else as its text on a colour of its own.

use maud::{Markup, html};

/// Cell contents that mean "nothing here".
const BLANK: &[&str] = &["b", "blank", "empty", "none", "nil", "space", "-", "_"];

const COLOURS: &[&str] = &[
    "red", "black", "white", "blue", "yellow", "green", "orange", "purple", "pink", "brown",
    "gray", "grey",
];

/// Whether contents mean an empty cell.
pub fn is_blank(content: &str) -> bool {
    BLANK.contains(&content.to_ascii_lowercase().as_str())
}

/// The contents of a cell (each the text after the coordinates, `""` for none), side by side.
pub fn pieces(contents: &[String]) -> Markup {
    let shown: Vec<&String> = contents.iter().filter(|c| !is_blank(c)).collect();
    let n = shown.len();
    html! {
        @for (k, content) in shown.iter().enumerate() {
            @if n == 1 {
                (piece(content))
            } @else {
                @let scale = 1.0 / n as f64;
                @let dx = (k as f64 + 0.5 - n as f64 / 2.0) * 46.0 * scale;
                g transform=(format!("translate({dx:.1} 0) scale({scale:.3})")) { (piece(content)) }
            }
        }
    }
}

fn piece(content: &str) -> Markup {
    let lower = content.to_ascii_lowercase();
    if content.is_empty() {
        return html! { circle.piece.dot r="6" {} };
    }
    if let Some((sign, side)) = chess(&lower) {
        return html! {
            text.piece.chess.(side) text-anchor="middle" dominant-baseline="central" font-size="36" { (sign) }
        };
    }
    if let Some(colour) = COLOURS.iter().find(|c| **c == lower) {
        return html! { circle.piece.disc.(format!("c-{colour}")) r="17" {} };
    }
    if lower == "x" || lower == "o" {
        return html! {
            text.piece.mark.(format!("mark-{lower}")) text-anchor="middle" dominant-baseline="central" font-size="30" {
                (lower.to_ascii_uppercase())
            }
        };
    }
    let palette = lower
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 8;
    let shown: String = content.chars().take(6).collect();
    html! {
        g.piece.text {
            rect.(format!("p{palette}")) x="-21" y="-10" width="42" height="20" rx="5" {}
            text text-anchor="middle" dominant-baseline="central" font-size="12" textLength=[(shown.chars().count() > 4).then_some("38")] lengthAdjust="spacingAndGlyphs" { (shown) }
        }
    }
}

/// `wk` … `bp` as chess signs (the solid shapes, coloured by side).
fn chess(content: &str) -> Option<(&'static str, &'static str)> {
    let bytes = content.as_bytes();
    if bytes.len() != 2 {
        return None;
    }
    let side = match bytes[0] {
        b'w' => "white",
        b'b' => "black",
        _ => return None,
    };
    let sign = match bytes[1] {
        b'k' => "♚",
        b'q' => "♛",
        b'r' => "♜",
        b'b' => "♝",
        b'n' => "♞",
        b'p' => "♟",
        _ => return None,
    };
    Some((sign, side))
}
