//! The static checks. Each module checks one family of properties and pushes diagnostics whose
//! codes are registered in [`crate::codes`].

mod form;
mod names;
mod recursion;
mod reserved;
mod safety;
mod strata;
mod usage;
pub mod walk;

use gdl_syntax::{Description, Diagnostic};

use crate::graph::Graph;
use crate::program::Program;

/// Everything a check may look at.
pub struct Context<'c, 'a> {
    pub text: &'a str,
    pub description: &'c Description<'a>,
    pub program: &'c Program,
    pub graph: &'c Graph,
}

/// Runs every check.
pub fn run(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    form::check(cx, out);
    names::check(cx, out);
    safety::check(cx, out);
    strata::check(cx, out);
    recursion::check(cx, out);
    reserved::check(cx, out);
    usage::check(cx, out);
}
