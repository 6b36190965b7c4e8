//! GDL-III's `knows` in the lowered program. Lowering keeps `(knows R P)` as an atom of the
//! relation `knows/2` (and `(knows P)` of `knows/1`) whose last argument is the proposition P
//! written as a term; this module reads it back as the keyword: the role, the proposition and
//! the relation the proposition is about. The checks of `checks/knows.rs` and the engines'
//! refusal (`gdl-reason`) start here.

use gdl_syntax::Span;
use gdl_syntax::gdl3::KNOWS;

use crate::program::{Atom, Program, RelId, Term};
use crate::symbols::Symbol;

/// Whether `rel` is the keyword: `knows` with one or two arguments.
pub fn is_knows(program: &Program, rel: RelId) -> bool {
    matches!(program.relations[rel as usize].arity, 1 | 2) && is_keyword(program, rel)
}

/// Whether `rel` is named `knows`, with any number of arguments: the keyword, well formed or
/// not (`E017` and `E018` say what is wrong with it).
pub fn is_keyword(program: &Program, rel: RelId) -> bool {
    program.symbols.name(program.relations[rel as usize].name) == KNOWS
}

/// A `knows` atom taken apart.
#[derive(Clone, Copy, Debug)]
pub struct KnowsAtom<'p> {
    /// The role that knows; `None` for common knowledge, `(knows P)`.
    pub role: Option<&'p Term>,
    /// The proposition, as lowered (a term).
    pub proposition: &'p Term,
}

impl<'p> KnowsAtom<'p> {
    /// `atom` as the keyword, if it is one.
    pub fn of(program: &Program, atom: &'p Atom) -> Option<KnowsAtom<'p>> {
        if !is_knows(program, atom.rel) {
            return None;
        }
        match &*atom.args {
            [proposition] => Some(KnowsAtom {
                role: None,
                proposition,
            }),
            [role, proposition] => Some(KnowsAtom {
                role: Some(role),
                proposition,
            }),
            _ => None,
        }
    }
}

/// What a proposition is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proposition<'p> {
    /// An atom of a relation the program mentions elsewhere.
    Relation(RelId),
    /// Nested knowledge, `(knows R Q)` or `(knows Q)`: the inner proposition Q.
    Knows(&'p Term),
    /// An atom of a relation nothing else mentions: never true, so never known.
    Unmentioned { name: Symbol, arity: u32 },
    /// Not an atom: a variable or a number.
    NotAnAtom,
}

/// What the proposition `term` is an atom of.
pub fn proposition<'p>(program: &Program, term: &'p Term) -> Proposition<'p> {
    let (name, arity) = match term {
        Term::Var(_) => return Proposition::NotAnAtom,
        Term::Const(name) if gdl_syntax::ast::is_number(program.symbols.name(*name)) => {
            return Proposition::NotAnAtom;
        }
        Term::Const(name) => (*name, 0),
        Term::Fn(name, args) => {
            if program.symbols.name(*name) == KNOWS
                && let [.., inner] = &args[..]
                && args.len() <= 2
            {
                return Proposition::Knows(inner);
            }
            (*name, args.len() as u32)
        }
    };
    match program.relation(program.symbols.name(name), arity) {
        Some(rel) => Proposition::Relation(rel),
        None => Proposition::Unmentioned { name, arity },
    }
}

/// The innermost proposition of `term`, through nested `knows`: what is finally known.
pub fn innermost<'p>(program: &Program, term: &'p Term) -> (&'p Term, Proposition<'p>) {
    let mut term = term;
    // Nesting is bounded by the reader's depth limit.
    loop {
        match proposition(program, term) {
            Proposition::Knows(inner) => term = inner,
            other => return (term, other),
        }
    }
}

/// The first `knows` literal of the rules' bodies, if any: where a game is GDL-III.
pub fn first_use(program: &Program) -> Option<Span> {
    program.rules.iter().find_map(|rule| {
        let mut found = None;
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                if found.is_none() && is_knows(program, atom.rel) {
                    found = Some(atom.span);
                }
            });
        }
        found
    })
}
