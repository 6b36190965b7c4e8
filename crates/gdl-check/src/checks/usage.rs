//! Relations used but never defined, and defined but never used.

use gdl_syntax::{Diagnostic, Span};

use super::Context;
use crate::codes;
use crate::knows::{self, KnowsAtom, Proposition};
use crate::program::{Program, Reserved, Term};

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
                if let Some(k) = KnowsAtom::of(program, atom) {
                    use_proposition(program, k.proposition, atom.span, &mut used);
                }
            });
        }
    }
    for rel in 0..n {
        let reserved = program.reserved_of(rel as u32);
        // GDL-III's keyword is defined by the semantics, as `true` and `does` are.
        let keyword = matches!(reserved, Some(Reserved::True | Reserved::Does))
            || knows::is_keyword(program, rel as u32);
        match (defined[rel], used[rel]) {
            (None, Some(span)) if !keyword => {
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
            (Some(span), None) if reserved.is_none() && !keyword => {
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

/// Marks the relation a `knows` literal's proposition is about as used (through nested
/// `knows`), so that a relation only ever known is not "defined but never used".
fn use_proposition(program: &Program, term: &Term, span: Span, used: &mut [Option<Span>]) {
    if let (_, Proposition::Relation(rel)) = knows::innermost(program, term) {
        used[rel as usize].get_or_insert(span);
    }
}
