//! What the rules say of a board beyond its cells: which coordinate is the row, whether pieces
//! fall (a move that names a column only), the order of coordinates (successor facts), and
//! whether neighbours are six (a hexagonal board). Read from the rules' text, never from the
//! game's name.
//!
//! The heuristics, in order:
//!
//! - **Row and column.** In a rule that mentions the board relation with a variable as a
//!   coordinate, a literal named like a row (`row`, `rank`, `nextrow`, `y`) or a column (`col`,
//!   `column`, `file`, `nextcol`, `x`) that takes the same variable names that coordinate:
//!   tic-tac-toe's `(<= (row ?m ?x) (true (cell ?m 1 ?x)) …)` makes the first argument the row,
//!   hex's `(<= (base (cell ?m ?n ?r)) (row ?m) (col ?n) …)` too. A variable named for what it
//!   is (`(square ?row ?col ?mark)`) counts a tenth as much. Without any vote, the first
//!   argument is the column and the second the row (`(cell a 1 wr)`, `(cell ?x ?y ?p)`).
//!   Where the row comes first, as in a matrix, row 1 is drawn at the top; where it comes
//!   second, as in `(x, y)`, numbered rows go up, as on a chess board.
//! - **Gravity.** A `next` rule that puts a piece on the board at a cell whose column is the
//!   only argument of a move (`(does ?p (drop ?x))`) is a game where pieces fall. Its bottom is
//!   a constant row there (`1`), or where the row follows another along a successor relation
//!   (`(succ ?y1 ?y2)`: pieces pile up from the first of the order), looked for in the rule or a
//!   relation or two down (`(lands ?c ?r)`, with `(lands ?c 1)`).
//! - **Order.** Coordinates that are neither numbers nor letters are ordered along a binary
//!   relation of facts that chains them (`(succ one two)`).
//! - **Hexagons.** A relation of four arguments that holds of two cells (evaluated from the
//!   facts) whose differences in row and column are exactly six directions, the four of a
//!   square grid and one diagonal both ways, is the adjacency of a hexagonal board.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::rules::{Rule, Rules, arity_of, is_var};
use crate::term::Term;

const ROW_NAMES: &[&str] = &["row", "rows", "rank", "nextrow", "next_row", "succrow", "y"];
const COLUMN_NAMES: &[&str] = &[
    "col",
    "cols",
    "column",
    "columns",
    "file",
    "nextcol",
    "next_col",
    "nextcolumn",
    "succcol",
    "x",
];

/// Where pieces land first, in a game where they fall.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bottom {
    /// This row.
    Value(String),
    /// The first row of the order (pieces pile up along it).
    First,
    /// The last row of the order.
    Last,
}

/// Pieces fall: the argument that is the column (the move's), and where the bottom is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gravity {
    pub column_arg: usize,
    pub bottom: Bottom,
}

/// Which way the rows of a hexagonal board are shifted: the neighbours of a cell in the next
/// row down are the same column and the one to the left (`Right`: each row is drawn half a
/// cell right of the one above) or to the right (`Left`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skew {
    Right,
    Left,
}

/// What the rules say of the board relation's first two arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Orientation {
    /// The argument (0 or 1) the rules name as the row, if they do.
    pub row_arg: Option<usize>,
    pub gravity: Option<Gravity>,
}

/// Every literal inside a term (itself, and within `true`, `next`, `not`, `or`, …).
fn literals<'a>(t: &'a Term, out: &mut Vec<&'a Term>) {
    if let Term::List(items) = t {
        out.push(t);
        for i in items.iter().skip(1) {
            literals(i, out);
        }
    }
}

/// Reads the orientation of `relation`'s first two arguments from the rules.
pub fn orientation(rules: &Rules, relation: &str) -> Orientation {
    let mut votes = [0i32; 2]; // > 0: row, < 0: column
    let mut falling: Vec<Gravity> = Vec::new();
    for rule in &rules.rules {
        let mut all = Vec::new();
        literals(&rule.head, &mut all);
        for b in &rule.body {
            literals(b, &mut all);
        }
        // The board's coordinate variables in this rule.
        let mut coordinate: HashMap<&str, usize> = HashMap::new();
        for l in &all {
            if l.head() == Some(relation) && l.args().len() >= 2 {
                for (p, arg) in l.args()[..2].iter().enumerate() {
                    if let Some(v) = arg.atom().filter(|_| is_var(arg)) {
                        coordinate.insert(v, p);
                        // A variable named for what it is (`?row`, `?col`) counts a little.
                        let name = v.trim_start_matches('?');
                        if ROW_NAMES.contains(&name) && name != "y" {
                            votes[p] += 1;
                        } else if COLUMN_NAMES.contains(&name) && name != "x" {
                            votes[p] -= 1;
                        }
                    }
                }
            }
        }
        if coordinate.is_empty() {
            continue;
        }
        for l in &all {
            let Some(name) = l.head() else { continue };
            let sign = if ROW_NAMES.contains(&name) {
                1
            } else if COLUMN_NAMES.contains(&name) {
                -1
            } else {
                continue;
            };
            for a in l.args() {
                if let Some(&p) = a.atom().and_then(|v| coordinate.get(v)) {
                    votes[p] += 10 * sign;
                }
            }
        }
        falling.extend(falls(rules, rule, relation));
    }
    let row_arg = match (votes[0] - votes[1]).signum() {
        1 => Some(0),
        -1 => Some(1),
        _ => None,
    };
    let gravity = falling.into_iter().min_by_key(|g| rank(&g.bottom));
    Orientation { row_arg, gravity }
}

/// A `next` rule that drops a piece in the column a move names.
fn falls(rules: &Rules, rule: &Rule, relation: &str) -> Option<Gravity> {
    let [cell] = rule.head.args() else {
        return None;
    };
    if rule.head.head() != Some("next") || cell.head() != Some(relation) || cell.args().len() < 2 {
        return None;
    }
    let mut all = Vec::new();
    for b in &rule.body {
        literals(b, &mut all);
    }
    let column = all.iter().find_map(|l| match (l.head(), l.args()) {
        (Some("does"), [_, mv]) if arity_of(mv) == 1 && is_var(&mv.args()[0]) => {
            mv.args()[0].atom()
        }
        _ => None,
    })?;
    let column_arg = (0..2).find(|&p| cell.args()[p].atom() == Some(column))?;
    let other = &cell.args()[1 - column_arg];
    let bottom = match other.atom() {
        Some(w) if is_var(other) => bottom_of(rules, &all, w, 0).unwrap_or(Bottom::First),
        Some(c) => Bottom::Value(c.to_string()),
        None => Bottom::First,
    };
    Some(Gravity { column_arg, bottom })
}

/// Where the row `w` of a falling piece starts, from the literals that bind it: a successor
/// relation of facts (`(succ ?y1 ?w)`: it piles up from the first), or, a level or two down, a
/// relation whose rules give it (`(lands ?c ?r)` with `(lands ?c 1)`).
fn bottom_of(rules: &Rules, body: &[&Term], w: &str, depth: usize) -> Option<Bottom> {
    for l in body {
        if let [a, b] = l.args()
            && is_var(a)
            && is_var(b)
            && a != b
            && l.head().is_some_and(|n| !rules.facts(n).is_empty())
        {
            if b.atom() == Some(w) {
                return Some(Bottom::First);
            }
            if a.atom() == Some(w) {
                return Some(Bottom::Last);
            }
        }
    }
    if depth >= 2 {
        return None;
    }
    let mut found = Vec::new();
    for l in body {
        let Some(name) = l.head() else { continue };
        if matches!(name, "does" | "true" | "not" | "distinct" | "or") {
            continue;
        }
        let Some(i) = l.args().iter().position(|a| a.atom() == Some(w)) else {
            continue;
        };
        for rule in rules.rules.iter().filter(|r| {
            r.head.head() == Some(name) && arity_of(&r.head) == l.args().len() && !r.body.is_empty()
        }) {
            let arg = &rule.head.args()[i];
            match arg.atom() {
                Some(v) if is_var(arg) => {
                    let mut inner = Vec::new();
                    for b in &rule.body {
                        literals(b, &mut inner);
                    }
                    found.extend(bottom_of(rules, &inner, v, depth + 1));
                }
                Some(c) => found.push(Bottom::Value(c.to_string())),
                None => {}
            }
        }
    }
    found.into_iter().min_by_key(rank)
}

/// A constant row where pieces land says most; a successor relation says which end.
fn rank(g: &Bottom) -> u8 {
    match g {
        Bottom::Value(_) => 0,
        Bottom::First => 1,
        Bottom::Last => 2,
    }
}

/// The values in the order a binary relation of facts chains them (`(succ one two)`), if one
/// chains them all.
pub fn chain_order(rules: &Rules, values: &BTreeSet<String>) -> Option<Vec<String>> {
    let names: BTreeSet<String> = rules
        .rules
        .iter()
        .filter(|r| r.body.is_empty() && arity_of(&r.head) == 2)
        .filter_map(|r| r.head.head().map(str::to_string))
        .collect();
    for name in names {
        let mut next: HashMap<String, String> = HashMap::new();
        let mut has_before: HashSet<String> = HashSet::new();
        for f in rules.facts(&name) {
            let (Some(a), Some(b)) = (f[0].atom(), f[1].atom()) else {
                continue;
            };
            if next.insert(a.to_string(), b.to_string()).is_some() {
                next.clear();
                break;
            }
            has_before.insert(b.to_string());
        }
        let starts: Vec<&String> = next.keys().filter(|k| !has_before.contains(*k)).collect();
        let [start] = starts.as_slice() else { continue };
        let mut order = vec![(*start).clone()];
        while let Some(n) = next.get(order.last().expect("not empty")) {
            if order.len() > next.len() {
                break;
            }
            order.push(n.clone());
        }
        if values.iter().all(|v| order.contains(v)) {
            return Some(order.into_iter().filter(|v| values.contains(v)).collect());
        }
    }
    None
}

/// A cell's row and column from the board relation's first two arguments.
pub type Place<'a> = &'a dyn Fn(&str, &str) -> Option<(i64, i64)>;

/// The skew of a hexagonal board, if a relation of the rules holds of neighbouring cells in
/// six directions. `place` gives a cell's row and column on the board from the board
/// relation's first two arguments.
pub fn hex_skew(rules: &Rules, relation: &str, place: Place<'_>) -> Option<Skew> {
    let mut evaluator = rules.evaluator();
    for name in rules.relations(4) {
        if name == relation || name == "<=" {
            continue;
        }
        let Some(tuples) = evaluator.evaluate(&name, 4) else {
            continue;
        };
        let mut directions = BTreeSet::new();
        let mut mapped = 0;
        for t in &tuples {
            let at = |i: usize| place(t[i].atom()?, t[i + 1].atom()?);
            if let (Some((r1, c1)), Some((r2, c2))) = (at(0), at(2)) {
                mapped += 1;
                directions.insert((r2 - r1, c2 - c1));
            }
        }
        if mapped < 6 || mapped * 10 < tuples.len() * 9 || directions.len() != 6 {
            continue;
        }
        let square = [(0, 1), (0, -1), (1, 0), (-1, 0)];
        if !square.iter().all(|d| directions.contains(d)) {
            continue;
        }
        if directions.contains(&(1, -1)) && directions.contains(&(-1, 1)) {
            return Some(Skew::Right);
        }
        if directions.contains(&(1, 1)) && directions.contains(&(-1, -1)) {
            return Some(Skew::Left);
        }
    }
    None
}
