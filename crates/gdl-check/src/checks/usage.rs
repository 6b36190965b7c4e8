//! Relations used but never defined, and defined but never used.

use gdl_syntax::{Diagnostic, Span};

use super::Context;
use crate::codes;
use crate::program::Reserved;

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    let n = program.relations.len();
    let mut defined: Vec<Option<Span>> = vec![None; n];
    let mut used: Vec<Option<Span>> = vec![None; n];
    for rule in &program.rules {
        defined[rule.head.rel as usize].get_or_insert(rule.head.span);
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                used[atom.rel as usize].get_or_insert(atom.span);
            });
        }
    }
    for rel in 0..n {
        let reserved = program.reserved_of(rel as u32);
        match (defined[rel], used[rel]) {
            (None, Some(span)) if !matches!(reserved, Some(Reserved::True | Reserved::Does)) => {
                let name = program.describe(rel as u32);
                out.push(
                    Diagnostic::warning(
                        codes::UNDEFINED_RELATION,
                        span,
                        format!("`{name}` is used but never defined"),
                    )
                    .with_label("no fact or rule defines it, so this is always false")
                    .with_help("define it, or check the spelling and the number of arguments"),
                );
            }
            (Some(span), None) if reserved.is_none() => {
                let name = program.describe(rel as u32);
                out.push(
                    Diagnostic::warning(
                        codes::UNUSED_RELATION,
                        span,
                        format!("`{name}` is defined but never used"),
                    )
                    .with_label("no rule body mentions it")
                    .with_help("remove it, or check the spelling and the number of arguments where it should be used"),
                );
            }
            _ => {}
        }
    }
}
