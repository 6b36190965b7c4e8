//! Where on the board a move is made: two arguments in a row that are a cell of the board, in
//! the board relation's order (`(mark 1 2)`, `(move e 2 e 4)`: two cells, from and to), or a
//! single argument that is a column (`(drop 3)`: the whole column).

use serde::Serialize;

use super::geometry::Geometry;
use crate::term::Term;

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
            if let (Some(a), Some(b)) = (args[i], args[i + 1])
                && let Some((r, c)) = geometry.place(a, b)
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
