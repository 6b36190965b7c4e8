//! Drawing a state without knowing the game: where fluents have the shape of a board, a board
//! that looks like the game's, inferred from its fluents and its rules, never from its name.
//!
//! A relation whose first two arguments are constants from small sets (`(cell 1 2 x)`,
//! `(cell a 3 wp)`, `(cellholds 4 5 black)`) is a board: two of its arguments are the
//! coordinates, the rest the cell's contents. Of several such relations, the one with the most
//! cells is drawn. Where the coordinates come from is [`Geometry::detect_with`]: every fluent
//! that can hold (the game's `base` facts or fluents seen in random playouts, kept with the
//! game) and the states at hand, with runs of numbers and letters filled in, so a cell that is
//! empty because no fluent names it is still drawn; and the rules, for which argument is the
//! row, whether pieces fall and whether cells have six neighbours ([`infer`]). The other
//! fluents are listed.
//!
//! - `rules`: the rules' sentences, and relations of facts evaluated bottom up;
//! - `infer`: orientation, gravity, order and hexagons, from the rules;
//! - `geometry`: the board relation, its axes and shape;
//! - `pieces`: a cell's contents as SVG;
//! - `render`: a state (a step, with the cells that changed; a GDL-II role's knowledge) as SVG;
//! - `targets`: the cells a move names, for a person's clicks;
//! - `known`: what a GDL-II role knows of the state.

mod geometry;
mod infer;
mod known;
mod pieces;
mod render;
mod rules;
mod targets;

pub use geometry::{Geometry, Shape};
pub use infer::Skew;
pub use known::{Knowledge, Known};
pub use render::{render, render_known, render_step};
pub use targets::{Target, targets};

#[cfg(test)]
mod tests;
