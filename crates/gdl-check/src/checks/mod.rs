//! The static checks. Each module checks one family of properties and pushes diagnostics whose
//! codes are registered in [`crate::codes`].

mod form;
mod knows;
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

/// What the checks of the written form look at: the GDL items as read.
pub struct ItemsContext<'c, 'a> {
    pub text: &'a str,
    pub description: &'c Description<'a>,
}

/// What the checks of the meaning look at: the lowered program and its dependency graph.
pub struct Context<'c, 'a> {
    pub text: &'a str,
    pub program: &'c Program,
    pub graph: &'c Graph,
}

/// Runs the checks of the written form (names, shapes). They run before lowering, so that the
/// items can be dropped as they are lowered: a large description is not held twice.
pub fn run_on_items(cx: &ItemsContext<'_, '_>, out: &mut Vec<Diagnostic>) {
    form::check(cx, out);
    names::check(cx, out);
}

/// Runs the checks of the meaning.
pub fn run(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    safety::check(cx, out);
    strata::check(cx, out);
    recursion::check(cx, out);
    reserved::check(cx, out);
    knows::check(cx, out);
    usage::check(cx, out);
}
