//! What knowledge the rules can ask about: every `knows` literal of a rule body, and every
//! `knows` nested in one, read as who knows (a role, every role, or all in common) and what
//! (the atoms of a relation, or a nested `knows` of one or two arguments).

use gdl_check::knows::{KnowsAtom, is_knows};
use gdl_check::program::Term;
use gdl_check::{Graph, Program, RelId};
use gdl_syntax::gdl3::KNOWS;

use crate::machine::StateMachine;
use crate::reference::ReferenceMachine;
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
    /// A nested `knows` with this many arguments (1 or 2).
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
pub(crate) fn specs(program: &Program, graph: &Graph, machine: &mut ReferenceMachine) -> Vec<Spec> {
    let knows_rels: Vec<RelId> = (0..program.relations.len() as RelId)
        .filter(|&r| is_knows(program, r))
        .collect();
    let on_knows = graph.dependents(&knows_rels);
    let mut out: Vec<Spec> = Vec::new();
    for rule in &program.rules {
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                let Some(knows) = KnowsAtom::of(program, atom) else {
                    return;
                };
                let mut role = knows.role;
                let mut proposition = knows.proposition;
                // Outermost first, then each nested `knows`.
                loop {
                    let knower = knower(program, machine, role);
                    let (known, inner) = known(program, &on_knows, proposition);
                    let spec = Spec { knower, known };
                    if !out.contains(&spec) {
                        out.push(spec);
                    }
                    let Some((r, p)) = inner else { break };
                    role = r;
                    proposition = p;
                }
            });
        }
    }
    out
}

fn knower(program: &Program, machine: &mut ReferenceMachine, role: Option<&Term>) -> Knower {
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

/// What `proposition` is about, and the role and proposition of the `knows` nested in it.
fn known<'p>(
    program: &Program,
    on_knows: &[bool],
    proposition: &'p Term,
) -> (Known, Option<(Option<&'p Term>, &'p Term)>) {
    if let Term::Fn(name, args) = proposition
        && program.symbols.name(*name) == KNOWS
    {
        match &args[..] {
            [p] => return (Known::Knows(1), Some((None, p))),
            [r, p] => return (Known::Knows(2), Some((Some(r), p))),
            _ => {}
        }
    }
    match gdl_check::knows::proposition(program, proposition) {
        gdl_check::knows::Proposition::Relation(rel) => (
            Known::Relation {
                rel,
                depends: on_knows[rel as usize],
            },
            None,
        ),
        _ => (Known::Nothing, None),
    }
}
