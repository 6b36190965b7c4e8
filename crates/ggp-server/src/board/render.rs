//! Drawing a state: the board as SVG (a grid of squares, checkered unless pieces fall, or a
//! rhombus of hexagons), scaled to the width it is given, and the other fluents as a list.
//! Every cell is a `g.cell` with the coordinates as the rules spell them, in lower case
//! (`data-x`: the column, `data-y`: the row), for clicks and the moves' targets; cells whose
//! contents changed from the previous state are `changed`, cells a GDL-II role cannot be sure
//! of `uncertain`.

use std::collections::{BTreeSet, HashMap, HashSet};

use maud::{Markup, html};

use super::geometry::{Geometry, Shape};
use super::infer::Skew;
use super::pieces::{is_blank, pieces};
use crate::term::Term;

/// Other fluents listed open; more are folded.
const MAX_LISTED: usize = 16;

/// A square cell's pitch, and the margin for the coordinates.
const PITCH: f64 = 50.0;
const MARGIN: f64 = 22.0;
/// A hexagon's radius (centre to corner).
const HEX_R: f64 = 27.0;

/// What marks cells besides their contents.
#[derive(Default)]
struct Marks {
    changed: HashSet<(usize, usize)>,
    uncertain: HashSet<(usize, usize)>,
    /// What an uncertain cell may hold: the fluents, for its title, and their contents,
    /// drawn faintly.
    maybe: HashMap<(usize, usize), Vec<String>>,
    maybe_contents: HashMap<(usize, usize), Vec<String>>,
}

/// Draws a state: the board, if the game has one, and the other fluents as a list.
pub fn render(state: &[Term], geometry: Option<&Geometry>) -> Markup {
    draw(state, geometry, &Marks::default())
}

/// Draws a state with the cells that changed from `previous` marked (`changed`).
pub fn render_step(
    state: &[Term],
    previous: Option<&[Term]>,
    geometry: Option<&Geometry>,
) -> Markup {
    let marks = Marks {
        changed: changed(state, previous, geometry),
        ..Marks::default()
    };
    draw(state, geometry, &marks)
}

/// The cells whose contents differ from `previous`'s (none without it).
fn changed(
    state: &[Term],
    previous: Option<&[Term]>,
    geometry: Option<&Geometry>,
) -> HashSet<(usize, usize)> {
    let mut out = HashSet::new();
    if let (Some(g), Some(previous)) = (geometry, previous) {
        let (now, before) = (contents(state, g), contents(previous, g));
        let cells: BTreeSet<&(usize, usize)> = now.keys().chain(before.keys()).collect();
        for cell in cells {
            let visible = |m: &HashMap<(usize, usize), Vec<String>>| -> Vec<String> {
                let mut v: Vec<String> = m
                    .get(cell)
                    .map(|c| c.iter().filter(|c| !is_blank(c)).cloned().collect())
                    .unwrap_or_default();
                v.sort();
                v
            };
            if visible(&now) != visible(&before) {
                out.insert(*cell);
            }
        }
    }
    out
}

/// Draws what a GDL-II role knows: the fluents true in every state it may be in (`certain`),
/// and, shaded (`uncertain`), the cells where a fluent true in some of them (`possible`) is
/// not certain. Cells whose certain contents differ from the step before's
/// (`previous_certain`) are `changed`.
pub fn render_known(
    certain: &[Term],
    possible: &[Term],
    previous_certain: Option<&[Term]>,
    geometry: Option<&Geometry>,
) -> Markup {
    let mut marks = Marks {
        changed: changed(certain, previous_certain, geometry),
        ..Marks::default()
    };
    if let Some(g) = geometry {
        let sure: HashSet<String> = certain
            .iter()
            .map(|t| t.text().to_ascii_lowercase())
            .collect();
        for f in possible {
            if sure.contains(&f.text().to_ascii_lowercase()) {
                continue;
            }
            if let Some(cell) = g.cell_of(f) {
                marks.uncertain.insert(cell);
                marks.maybe.entry(cell).or_default().push(f.text());
                let content: Vec<String> = f.args()[2..].iter().map(Term::text).collect();
                marks
                    .maybe_contents
                    .entry(cell)
                    .or_default()
                    .push(content.join(" "));
            }
        }
    }
    draw(certain, geometry, &marks)
}

/// Each cell's contents (the arguments after the coordinates, as text).
fn contents(state: &[Term], g: &Geometry) -> HashMap<(usize, usize), Vec<String>> {
    let mut cells: HashMap<(usize, usize), Vec<String>> = HashMap::new();
    for fluent in state {
        if let Some(cell) = g.cell_of(fluent) {
            let content: Vec<String> = fluent.args()[2..].iter().map(Term::text).collect();
            cells.entry(cell).or_default().push(content.join(" "));
        }
    }
    cells
}

fn draw(state: &[Term], geometry: Option<&Geometry>, marks: &Marks) -> Markup {
    let cells = geometry.map(|g| contents(state, g)).unwrap_or_default();
    let mut others: Vec<String> = state
        .iter()
        .filter(|f| geometry.is_none_or(|g| g.cell_of(f).is_none()))
        .map(Term::text)
        .collect();
    others.sort();
    html! {
        div.state {
            @if let Some(g) = geometry {
                @match g.shape {
                    Shape::Square => (square(g, &cells, marks)),
                    Shape::Hex(skew) => (hex(g, skew, &cells, marks)),
                }
            }
            @if !others.is_empty() && others.len() <= MAX_LISTED {
                ul.fluents {
                    @for f in &others { li { code { (f) } } }
                }
            } @else if !others.is_empty() {
                details.fluents {
                    summary { (others.len()) " other fluents" }
                    ul.fluents {
                        @for f in &others { li { code { (f) } } }
                    }
                }
            }
        }
    }
}

/// The classes of cell `(r, c)`.
fn classes(kind: &str, at: (usize, usize), dark: bool, marks: &Marks) -> String {
    let mut out = format!("cell {kind}");
    for (on, name) in [
        (dark, "dark"),
        (marks.changed.contains(&at), "changed"),
        (marks.uncertain.contains(&at), "uncertain"),
    ] {
        if on {
            out.push(' ');
            out.push_str(name);
        }
    }
    out
}

/// One cell: its group (at its centre), its title, its shape and its contents.
fn cell(
    g: &Geometry,
    (r, c): (usize, usize),
    (cx, cy): (f64, f64),
    class: String,
    shape: Markup,
    cells: &HashMap<(usize, usize), Vec<String>>,
    marks: &Marks,
) -> Markup {
    let (x, y) = (&g.columns[c], &g.rows[r]);
    let here = cells.get(&(r, c));
    html! {
        g class=(class) data-x=(x.to_ascii_lowercase()) data-y=(y.to_ascii_lowercase())
            transform=(format!("translate({cx:.1} {cy:.1})")) {
            title { (title(g, x, y, here, marks.maybe.get(&(r, c)))) }
            (shape)
            @if let Some(contents) = here { (pieces(contents)) }
            @else if let Some(maybe) = marks.maybe_contents.get(&(r, c)) {
                g.maybe { (pieces(maybe)) }
            }
        }
    }
}

fn square(g: &Geometry, cells: &HashMap<(usize, usize), Vec<String>>, marks: &Marks) -> Markup {
    let (w, h) = (
        MARGIN + PITCH * g.columns.len() as f64 + 4.0,
        MARGIN + PITCH * g.rows.len() as f64 + 4.0,
    );
    let pattern = if g.gravity { "plain" } else { "checker" };
    html! {
        svg class=(format!("board square {pattern}")) data-relation=(g.relation)
            viewBox=(format!("0 0 {w} {h}")) width=(w) height=(h) {
            @for (c, x) in g.columns.iter().enumerate() {
                text.coord x=(MARGIN + PITCH * (c as f64 + 0.5)) y="14" text-anchor="middle" { (x) }
            }
            @for (r, y) in g.rows.iter().enumerate() {
                text.coord x=(MARGIN / 2.0) y=(MARGIN + PITCH * (r as f64 + 0.5)) text-anchor="middle" dominant-baseline="central" { (y) }
                @for c in 0..g.columns.len() {
                    @let centre = (MARGIN + PITCH * (c as f64 + 0.5), MARGIN + PITCH * (r as f64 + 0.5));
                    @let dark = !g.gravity && (r + c) % 2 == 1;
                    (cell(g, (r, c), centre, classes("square", (r, c), dark, marks),
                        html! { rect x="-23" y="-23" width="46" height="46" rx="6" {} }, cells, marks))
                }
            }
        }
    }
}

fn hex(
    g: &Geometry,
    skew: Skew,
    cells: &HashMap<(usize, usize), Vec<String>>,
    marks: &Marks,
) -> Markup {
    let width = 3f64.sqrt() * HEX_R;
    let rows = g.rows.len();
    let shift = |r: usize| match skew {
        Skew::Right => r as f64 * width / 2.0,
        Skew::Left => (rows - 1 - r) as f64 * width / 2.0,
    };
    let centre = |r: usize, c: usize| {
        (
            MARGIN + width * (c as f64 + 0.5) + shift(r),
            MARGIN + HEX_R + 1.5 * HEX_R * r as f64,
        )
    };
    let w = MARGIN + width * g.columns.len() as f64 + width / 2.0 * (rows - 1) as f64 + 4.0;
    let h = MARGIN + 2.0 * HEX_R + 1.5 * HEX_R * (rows - 1) as f64 + 4.0;
    let corners: Vec<String> = (0..6)
        .map(|k| {
            let a = std::f64::consts::PI / 3.0 * k as f64 + std::f64::consts::PI / 6.0;
            format!(
                "{:.1},{:.1}",
                (HEX_R - 1.5) * a.cos(),
                (HEX_R - 1.5) * a.sin()
            )
        })
        .collect();
    let polygon = corners.join(" ");
    html! {
        svg class="board hex" data-relation=(g.relation)
            viewBox=(format!("0 0 {w:.1} {h:.1}")) width=(format!("{w:.0}")) height=(format!("{h:.0}")) {
            @for (c, x) in g.columns.iter().enumerate() {
                text.coord x=(format!("{:.1}", centre(0, c).0)) y="14" text-anchor="middle" { (x) }
            }
            @for (r, y) in g.rows.iter().enumerate() {
                text.coord x=(format!("{:.1}", centre(r, 0).0 - width / 2.0 - 8.0)) y=(format!("{:.1}", centre(r, 0).1))
                    text-anchor="middle" dominant-baseline="central" { (y) }
                @for c in 0..g.columns.len() {
                    (cell(g, (r, c), centre(r, c), classes("hex", (r, c), false, marks),
                        html! { polygon points=(polygon) {} }, cells, marks))
                }
            }
        }
    }
}

fn title(
    g: &Geometry,
    x: &str,
    y: &str,
    contents: Option<&Vec<String>>,
    maybe: Option<&Vec<String>>,
) -> String {
    let (a, b) = if g.column_arg == 0 { (x, y) } else { (y, x) };
    let relation = &g.relation;
    let mut out = match contents {
        None => format!("{a} {b}"),
        Some(contents) => contents
            .iter()
            .map(|c| {
                if c.is_empty() {
                    format!("({relation} {a} {b})")
                } else {
                    format!("({relation} {a} {b} {c})")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    };
    if let Some(maybe) = maybe {
        out.push_str(" — perhaps: ");
        out.push_str(&maybe.join(" "));
    }
    out
}
