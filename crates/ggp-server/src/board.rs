//! Drawing a state without knowing the game: where fluents have the shape of a board, a grid.
//!
//! A relation whose first two arguments are constants from small sets (`(cell 1 2 x)`,
//! `(cell a 3 wp)`, `(cellholds 4 5 black)`) is a board: its first argument is the column, its
//! second the row, the rest the cell's contents. Of several such relations, the one with the
//! most cells is drawn. Where the coordinates come from is [`Geometry::detect`]: every fluent
//! that can hold (the game's `base` facts or fluents seen in random playouts, kept with the
//! game) and the states at hand, with runs of numbers and letters filled in, so a cell that
//! is empty because no fluent names it is still drawn. The other fluents are listed.
//!
//! A move names a cell where two arguments in a row are a column and a row of the board
//! (`(mark 1 2)`, `(move e 2 e 4)`: two cells, from and to); a move with a single argument
//! that is a column (`(drop 3)`) names the whole column ([`targets`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use maud::{Markup, html};
use serde::Serialize;

use crate::term::Term;

/// The most rows or columns a board is drawn with.
const MAX_SIDE: usize = 32;

/// Other fluents listed open; more are folded.
const MAX_LISTED: usize = 16;

/// Names that are the board when two relations tie.
const BOARD_NAMES: &[&str] = &["cell", "cellholds", "square", "board", "field", "pos"];

/// Cell contents that mean "nothing here".
const BLANK: &[&str] = &["b", "blank", "empty", "none", "nil", "space", "-", "_"];

/// The board of a game: which relation, its columns (left to right) and its rows (top to
/// bottom), as the rules spell them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub relation: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
}

#[derive(Default)]
struct Candidate {
    name: String,
    xs: BTreeSet<String>,
    ys: BTreeSet<String>,
    positions: HashSet<(String, String)>,
    spelled: HashMap<String, String>,
    broken: bool,
}

impl Geometry {
    /// The board among these fluents, if there is one.
    pub fn detect<'a>(fluents: impl IntoIterator<Item = &'a Term>) -> Option<Geometry> {
        let mut candidates: BTreeMap<String, Candidate> = BTreeMap::new();
        for fluent in fluents {
            let (Some(name), args) = (fluent.head(), fluent.args()) else {
                continue;
            };
            if args.len() < 2 || matches!(fluent, Term::Atom(_)) {
                continue;
            }
            let key = name.to_ascii_lowercase();
            let c = candidates.entry(key).or_insert_with(|| Candidate {
                name: name.to_string(),
                ..Candidate::default()
            });
            match (args[0].atom(), args[1].atom()) {
                (Some(x), Some(y)) => {
                    let (xk, yk) = (x.to_ascii_lowercase(), y.to_ascii_lowercase());
                    c.spelled.entry(xk.clone()).or_insert_with(|| x.to_string());
                    c.spelled.entry(yk.clone()).or_insert_with(|| y.to_string());
                    c.xs.insert(xk.clone());
                    c.ys.insert(yk.clone());
                    c.positions.insert((xk, yk));
                }
                _ => c.broken = true,
            }
        }
        let best = candidates
            .into_values()
            .filter(|c| {
                !c.broken
                    && c.positions.len() >= 4
                    && c.xs.len() <= MAX_SIDE
                    && c.ys.len() <= MAX_SIDE
                    && c.xs.len() >= 2
                    && c.ys.len() >= 2
            })
            .max_by_key(|c| {
                (
                    c.positions.len(),
                    BOARD_NAMES.contains(&c.name.to_ascii_lowercase().as_str()),
                )
            })?;
        let spell = |k: String| best.spelled.get(&k).cloned().unwrap_or(k);
        let columns = axis(&best.xs, false).into_iter().map(spell).collect();
        let rows = axis(&best.ys, true).into_iter().map(spell).collect();
        Some(Geometry {
            relation: best.name.clone(),
            columns,
            rows,
        })
    }

    fn column(&self, x: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.eq_ignore_ascii_case(x))
    }

    fn row(&self, y: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.eq_ignore_ascii_case(y))
    }

    fn is_board(&self, fluent: &Term) -> bool {
        fluent
            .head()
            .is_some_and(|h| h.eq_ignore_ascii_case(&self.relation))
            && fluent.args().len() >= 2
            && !matches!(fluent, Term::Atom(_))
    }
}

/// An axis's values in order, runs filled in: numbers (`1`…`8`) and single letters (`a`…`h`)
/// from the smallest to the largest seen. Rows of numbers run from the largest at the top, as
/// on a chess board; everything else in increasing order.
fn axis(values: &BTreeSet<String>, rows: bool) -> Vec<String> {
    let numbers: Option<Vec<i64>> = values.iter().map(|v| v.parse().ok()).collect();
    if let Some(mut numbers) = numbers {
        numbers.sort_unstable();
        let (lo, hi) = (numbers[0], numbers[numbers.len() - 1]);
        let mut out: Vec<i64> = if hi - lo < MAX_SIDE as i64 {
            (lo..=hi).collect()
        } else {
            numbers
        };
        if rows {
            out.reverse();
        }
        return out.into_iter().map(|n| n.to_string()).collect();
    }
    let letters: Option<Vec<u8>> = values
        .iter()
        .map(|v| match v.as_bytes() {
            [c] if c.is_ascii_lowercase() => Some(*c),
            _ => None,
        })
        .collect();
    if let Some(letters) = letters {
        let (lo, hi) = (letters[0], letters[letters.len() - 1]);
        return (lo..=hi).map(|c| (c as char).to_string()).collect();
    }
    values.iter().cloned().collect()
}

/// Draws a state: the board, if the game has one, and the other fluents as a list.
pub fn render(state: &[Term], geometry: Option<&Geometry>) -> Markup {
    let mut cells: HashMap<(usize, usize), Vec<String>> = HashMap::new();
    let mut others = Vec::new();
    for fluent in state {
        match geometry {
            Some(g) if g.is_board(fluent) => {
                let args = fluent.args();
                let place = match (args[0].atom(), args[1].atom()) {
                    (Some(x), Some(y)) => g.column(x).zip(g.row(y)),
                    _ => None,
                };
                match place {
                    Some((c, r)) => {
                        let content: Vec<String> = args[2..].iter().map(Term::text).collect();
                        cells.entry((r, c)).or_default().push(content.join(" "));
                    }
                    None => others.push(fluent.text()),
                }
            }
            _ => others.push(fluent.text()),
        }
    }
    others.sort();
    html! {
        div.state {
            @if let Some(g) = geometry {
                table.board data-relation=(g.relation) {
                    thead {
                        tr {
                            th {}
                            @for x in &g.columns { th scope="col" { (x) } }
                        }
                    }
                    tbody {
                        @for (r, y) in g.rows.iter().enumerate() {
                            tr {
                                th scope="row" { (y) }
                                @for (c, x) in g.columns.iter().enumerate() {
                                    @let here = cells.get(&(r, c));
                                    td.cell data-x=(x.to_ascii_lowercase())
                                        data-y=(y.to_ascii_lowercase())
                                        title=(cell_title(&g.relation, x, y, here)) {
                                        @if let Some(contents) = here {
                                            @for content in contents { (piece(content)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
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

fn cell_title(relation: &str, x: &str, y: &str, contents: Option<&Vec<String>>) -> String {
    match contents {
        None => format!("{x} {y}"),
        Some(contents) => contents
            .iter()
            .map(|c| {
                if c.is_empty() {
                    format!("({relation} {x} {y})")
                } else {
                    format!("({relation} {x} {y} {c})")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// A cell's contents: chess pieces as their signs, colours as discs, `x` and `o` as marks,
/// anything else as its text in a colour of its own.
fn piece(content: &str) -> Markup {
    let lower = content.to_ascii_lowercase();
    if content.is_empty() {
        return html! { span.piece.dot { "●" } };
    }
    if BLANK.contains(&lower.as_str()) {
        return html! {};
    }
    if let Some((sign, side)) = chess(&lower) {
        return html! { span.piece.chess.(side) { (sign) } };
    }
    if let Some(colour) = COLOURS.iter().find(|c| **c == lower) {
        return html! { span.piece.disc.(format!("c-{colour}")) {} };
    }
    if lower == "x" || lower == "o" {
        return html! { span.piece.mark.(format!("mark-{lower}")) { (lower.to_ascii_uppercase()) } };
    }
    let palette = lower
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 8;
    let shown: String = content.chars().take(6).collect();
    html! { span.piece.text.(format!("p{palette}")) { (shown) } }
}

const COLOURS: &[&str] = &[
    "red", "black", "white", "blue", "yellow", "green", "orange", "purple", "pink", "brown",
    "gray", "grey",
];

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

/// Where on the board a move is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    #[serde(rename = "move")]
    pub mv: String,
    /// The cells it names, in order (from and to for a piece that moves), as
    /// `[column, row]` in lower case, as the board's `data-x` and `data-y`.
    pub cells: Vec<[String; 2]>,
    /// The column it names, for a move whose only argument is a column (`(drop 3)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
}

/// The cells each move names; moves that name none are left out.
pub fn targets(moves: &[String], geometry: &Geometry) -> Vec<Target> {
    let mut out = Vec::new();
    for mv in moves {
        let Some(term) = crate::term::parse(mv) else {
            continue;
        };
        let args: Vec<Option<&str>> = term.args().iter().map(Term::atom).collect();
        let mut cells = Vec::new();
        let mut i = 0;
        while i + 1 < args.len() {
            if let (Some(x), Some(y)) = (args[i], args[i + 1])
                && let (Some(c), Some(r)) = (geometry.column(x), geometry.row(y))
            {
                cells.push([
                    geometry.columns[c].to_ascii_lowercase(),
                    geometry.rows[r].to_ascii_lowercase(),
                ]);
                i += 2;
            } else {
                i += 1;
            }
        }
        let column = match (cells.is_empty(), args.as_slice()) {
            (true, [Some(x)]) => geometry
                .column(x)
                .map(|c| geometry.columns[c].to_ascii_lowercase()),
            _ => None,
        };
        if !cells.is_empty() || column.is_some() {
            out.push(Target {
                mv: mv.clone(),
                cells,
                column,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::parse_state;

    fn geometry(text: &str) -> Option<Geometry> {
        Geometry::detect(&parse_state(text))
    }

    #[test]
    fn a_board_relation_is_found_and_its_runs_filled() {
        let g = geometry(
            "((cell 1 1 b) (cell 1 3 x) (cell 3 2 o) (cell 2 2 b) (control xplayer) (step 1))",
        )
        .unwrap();
        assert_eq!(g.relation, "cell");
        assert_eq!(g.columns, ["1", "2", "3"]);
        assert_eq!(g.rows, ["3", "2", "1"]);
        let chess =
            geometry("((cell a 1 wr) (cell h 8 br) (cell c 4 b) (cell d 4 b) (moved wk e 1))")
                .unwrap();
        assert_eq!(chess.columns.len(), 8);
        assert_eq!(chess.rows, ["8", "7", "6", "5", "4", "3", "2", "1"]);
    }

    #[test]
    fn the_relation_with_most_cells_wins_and_big_or_odd_ones_are_not_boards() {
        let g = geometry(
            "((cell a 1 red) (cell a 2 red) (cell b 1 blue) (cell b 2 blue) (cell c 3 red)
              (owner 1 red) (owner 2 blue) (link 1 a) (link 2 b))",
        )
        .unwrap();
        assert_eq!(g.relation, "cell");
        assert!(geometry("((control x) (step 1) (score x 10))").is_none());
        // A coordinate that is not a constant.
        assert!(geometry("((at (p 1) 1) (at 2 2) (at 3 3) (at 4 4))").is_none());
        // Forty values on one axis: not a board.
        let wide: String = (0..40).map(|k| format!("(seen {k} {})", k % 2)).collect();
        assert!(geometry(&format!("({wide})")).is_none());
    }

    #[test]
    fn moves_name_cells_or_columns() {
        let g = geometry("((cell a 1 wr) (cell h 8 br) (cell e 2 wp) (cell e 4 b))").unwrap();
        let t = targets(
            &[
                "(move wp e 2 e 4)".into(),
                "noop".into(),
                "(place c 3)".into(),
            ],
            &g,
        );
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].cells,
            [["e".to_string(), "2".to_string()], ["e".into(), "4".into()]]
        );
        assert_eq!(t[1].cells, [["c".to_string(), "3".to_string()]]);
        let c4 =
            geometry("((cell 1 1 red) (cell 8 6 black) (cell 2 1 red) (cell 3 1 red))").unwrap();
        let t = targets(&["(drop 3)".into(), "(drop 9)".into()], &c4);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].column.as_deref(), Some("3"));
        assert!(t[0].cells.is_empty());
    }

    #[test]
    fn contents_from_outside_are_escaped() {
        let state = parse_state(
            "((cell 1 1 <script>alert(1)</script>) (cell 1 2 x) (cell 2 1 o) (cell 2 2 b) (<img> 1))",
        );
        let g = Geometry::detect(&state).unwrap();
        let html = render(&state, Some(&g)).into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img>"), "{html}");
        assert!(html.contains("&lt;img&gt;"), "{html}");
    }
}
