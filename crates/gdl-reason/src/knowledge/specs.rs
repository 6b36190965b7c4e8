//! What knowledge the rules can ask about: every `knows` literal of a rule body, and every
//! `knows` nested in one, read as who knows (a role, every role, or all in common) and what
//! (the atoms of a relation, or a nested `knows` of one or two arguments).

use gdl_check::knows::{KnowsAtom, is_knows};
use gdl_check::program::Term;
use gdl_check::{Graph, Program, RelId};
use gdl_syntax::gdl3::KNOWS;

use crate::machine::StateMachine;
use crate::terms::TermId;

/// Who knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Knower {
    /// One role (by index).
    Role(usize),
    /// A variable: every role.
    Every,
    /// `(knows P)`: common knowledge of all roles.
    Common,
    /// A constant that is not a role (W016): it knows nothing.
    Nobody,
}

/// What is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Known {
    /// The atoms of a relation; `depends` when it depends on `knows` itself (then it is
    /// evaluated with the knowledge of lower strata).
    Relation { rel: RelId, depends: bool },
    /// A nested `knows`: the atoms of the spec of this index.
    Knows(usize),
    /// An atom of a relation nothing mentions, never true.
    Nothing,
}

/// One kind of `knows` atom the rules can ask about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    pub knower: Knower,
    pub known: Known,
}

impl Spec {
    /// Whether its atoms are computed once from the state (no `knows` below it).
    pub fn is_base(&self) -> bool {
        matches!(
            self.known,
            Known::Relation { depends: false, .. } | Known::Nothing
        )
    }
}

/// Every spec of the program, each once.
pub(crate) fn specs(
    program: &Program,
    graph: &Graph,
    machine: &mut impl StateMachine,
) -> Vec<Spec> {
    let knows_rels: Vec<RelId> = (0..program.relations.len() as RelId)
        .filter(|&r| is_knows(program, r))
        .collect();
    let on_knows = graph.dependents(&knows_rels);
    let mut out: Vec<Spec> = Vec::new();
    for rule in &program.rules {
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                if let Some(knows) = KnowsAtom::of(program, atom) {
                    let at = Site {
                        program,
                        on_knows: &on_knows,
                    };
                    at.add(machine, &mut out, knows.role, knows.proposition);
                }
            });
        }
    }
    out
}

struct Site<'a> {
    program: &'a Program,
    on_knows: &'a [bool],
}

impl Site<'_> {
    /// Adds the spec of `(knows role proposition)`, after those nested in it; its index.
    fn add(
        &self,
        machine: &mut impl StateMachine,
        out: &mut Vec<Spec>,
        role: Option<&Term>,
        proposition: &Term,
    ) -> usize {
        let known = match nested(self.program, proposition) {
            Some((r, p)) => Known::Knows(self.add(machine, out, r, p)),
            None => relation(self.program, self.on_knows, proposition),
        };
        let spec = Spec {
            knower: knower(self.program, machine, role),
            known,
        };
        match out.iter().position(|s| *s == spec) {
            Some(i) => i,
            None => {
                out.push(spec);
                out.len() - 1
            }
        }
    }
}

fn knower(program: &Program, machine: &mut impl StateMachine, role: Option<&Term>) -> Knower {
    match role {
        None => Knower::Common,
        Some(Term::Var(_)) => Knower::Every,
        Some(Term::Const(name)) => {
            let text = program.symbols.name(*name);
            let id: Option<TermId> = machine.intern(text).ok();
            match id.and_then(|id| machine.roles().iter().position(|&r| r == id)) {
                Some(i) => Knower::Role(i),
                None => Knower::Nobody,
            }
        }
        Some(_) => Knower::Nobody,
    }
}

/// The role and proposition of `proposition` when it is itself a `knows` atom.
fn nested<'p>(program: &Program, proposition: &'p Term) -> Option<(Option<&'p Term>, &'p Term)> {
    match proposition {
        Term::Fn(name, args) if program.symbols.name(*name) == KNOWS => match &args[..] {
            [p] => Some((None, p)),
            [r, p] => Some((Some(r), p)),
            _ => None,
        },
        _ => None,
    }
}

/// What a proposition that is not a `knows` atom is about.
fn relation(program: &Program, on_knows: &[bool], proposition: &Term) -> Known {
    match gdl_check::knows::proposition(program, proposition) {
        gdl_check::knows::Proposition::Relation(rel) => Known::Relation {
            rel,
            depends: on_knows[rel as usize],
        },
        _ => Known::Nothing,
    }
}
