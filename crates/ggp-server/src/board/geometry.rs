//! The board of a game: which relation, its columns and rows in the order they are drawn, and
//! its shape, found from the fluents that can hold and, where the rules are at hand, from what
//! the rules say of them ([`super::infer`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::infer::{self, Bottom, Skew};
use super::rules::Rules;
use crate::term::Term;

/// The most rows or columns a board is drawn with.
const MAX_SIDE: usize = 32;

/// Names that are the board when two relations tie.
const BOARD_NAMES: &[&str] = &["cell", "cellholds", "square", "board", "field", "pos"];

/// How cells are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A grid of squares.
    Square,
    /// A rhombus of hexagons, each row shifted half a cell from the one above.
    Hex(Skew),
}

/// The board of a game: which relation, its columns (left to right) and its rows (top to
/// bottom), as the rules spell them, which of the relation's first two arguments is the column,
/// the shape of its cells, and whether pieces fall (drawn plain, without a checkered pattern).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub relation: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// The argument (0 or 1) that is the column; the other is the row.
    pub column_arg: usize,
    pub shape: Shape,
    pub gravity: bool,
}

#[derive(Default)]
struct Candidate {
    name: String,
    /// The values of the first and the second argument.
    values: [BTreeSet<String>; 2],
    positions: HashSet<(String, String)>,
    spelled: HashMap<String, String>,
    broken: bool,
}

impl Geometry {
    /// The board among these fluents, if there is one, drawn as its coordinates suggest.
    pub fn detect<'a>(fluents: impl IntoIterator<Item = &'a Term>) -> Option<Geometry> {
        Geometry::detect_with(fluents, None)
    }

    /// The board among these fluents and those the rules declare (`base`, `init`), with what
    /// the rules (KIF text) say of it.
    pub fn detect_with<'a>(
        fluents: impl IntoIterator<Item = &'a Term>,
        rules: Option<&str>,
    ) -> Option<Geometry> {
        let rules = rules.map(Rules::read).unwrap_or_default();
        // The rules' `base` and `init` sentences, where they follow from facts: the board
        // before the game's fluents are known (and cells no state has named yet).
        let mut evaluator = rules.evaluator();
        let declared: Vec<Term> = ["base", "init"]
            .iter()
            .filter_map(|r| evaluator.evaluate(r, 1))
            .flatten()
            .filter_map(|mut t| t.pop())
            .collect();
        let mut all: Vec<&Term> = declared.iter().collect();
        for f in fluents {
            all.push(f);
        }
        let best = best_candidate(all)?;
        let relation = best.name.to_ascii_lowercase();
        let o = infer::orientation(&rules, &relation);
        let column_arg = match (&o.gravity, o.row_arg) {
            (Some(g), _) => g.column_arg,
            (None, Some(row)) => 1 - row,
            (None, None) => 0,
        };
        let row_arg = 1 - column_arg;
        let columns = axis(&rules, &best.values[column_arg]);
        let mut rows = axis(&rules, &best.values[row_arg]);
        let numbers = rows.iter().all(|r| r.parse::<i64>().is_ok());
        let top_down = match &o.gravity {
            Some(g) => match &g.bottom {
                Bottom::Value(v) => rows.last() == Some(v),
                Bottom::First => false,
                Bottom::Last => true,
            },
            // The row first, as in a matrix: row 1 at the top.
            None if o.row_arg == Some(0) => true,
            // Otherwise numbered rows go up, as on a chess board.
            None => !numbers,
        };
        if !top_down {
            rows.reverse();
        }
        let spell = |k: String| best.spelled.get(&k).cloned().unwrap_or(k);
        let mut g = Geometry {
            relation: best.name.clone(),
            columns: columns.into_iter().map(spell).collect(),
            rows: rows.into_iter().map(spell).collect(),
            column_arg,
            shape: Shape::Square,
            gravity: o.gravity.is_some(),
        };
        let place = |a: &str, b: &str| {
            let (x, y) = if column_arg == 0 { (a, b) } else { (b, a) };
            Some((g.row(y)? as i64, g.column(x)? as i64))
        };
        if let Some(skew) = infer::hex_skew(&rules, &relation, &place) {
            g.shape = Shape::Hex(skew);
        }
        Some(g)
    }

    pub(super) fn column(&self, x: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.eq_ignore_ascii_case(x))
    }

    pub(super) fn row(&self, y: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.eq_ignore_ascii_case(y))
    }

    /// The (row, column) of a pair of coordinates in the relation's order.
    pub(super) fn place(&self, a: &str, b: &str) -> Option<(usize, usize)> {
        let (x, y) = if self.column_arg == 0 { (a, b) } else { (b, a) };
        Some((self.row(y)?, self.column(x)?))
    }

    /// The (row, column) of a board fluent, if it is one and on the board.
    pub(super) fn cell_of(&self, fluent: &Term) -> Option<(usize, usize)> {
        if !self.is_board(fluent) {
            return None;
        }
        let args = fluent.args();
        self.place(args[0].atom()?, args[1].atom()?)
    }

    pub(super) fn is_board(&self, fluent: &Term) -> bool {
        fluent
            .head()
            .is_some_and(|h| h.eq_ignore_ascii_case(&self.relation))
            && fluent.args().len() >= 2
            && !matches!(fluent, Term::Atom(_))
    }
}

/// The relation with the most cells among those shaped like a board.
fn best_candidate<'a>(fluents: impl IntoIterator<Item = &'a Term>) -> Option<Candidate> {
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
                c.values[0].insert(xk.clone());
                c.values[1].insert(yk.clone());
                c.positions.insert((xk, yk));
            }
            _ => c.broken = true,
        }
    }
    candidates
        .into_values()
        .filter(|c| {
            !c.broken
                && c.positions.len() >= 4
                && c.values.iter().all(|v| (2..=MAX_SIDE).contains(&v.len()))
        })
        .max_by_key(|c| {
            (
                c.positions.len(),
                BOARD_NAMES.contains(&c.name.to_ascii_lowercase().as_str()),
            )
        })
}

/// An axis's values in increasing order, runs filled in: numbers (`1`…`8`) and single letters
/// (`a`…`h`) from the smallest to the largest seen; other values in the order a successor
/// relation of the rules chains them, or as text.
fn axis(rules: &Rules, values: &BTreeSet<String>) -> Vec<String> {
    let numbers: Option<Vec<i64>> = values.iter().map(|v| v.parse().ok()).collect();
    if let Some(mut numbers) = numbers {
        numbers.sort_unstable();
        let (lo, hi) = (numbers[0], numbers[numbers.len() - 1]);
        let out: Vec<i64> = if hi - lo < MAX_SIDE as i64 {
            (lo..=hi).collect()
        } else {
            numbers
        };
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
    infer::chain_order(rules, values).unwrap_or_else(|| values.iter().cloned().collect())
}
