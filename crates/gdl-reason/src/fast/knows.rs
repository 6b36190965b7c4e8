//! GDL-III on the fast engine: the rules with `knows` rewritten so that a history's `knows`
//! atoms are fluents, which the knowledge layer (`crate::knowledge`) sets in the state it asks
//! about.
//!
//! - Every body literal `(knows R P)` becomes `(true (knows R P))`, and `(knows P)` becomes
//!   `(true (knows P))`.
//! - For every kind of `knows` atom the rules can ask about, a rule gives the fluents' domain
//!   to the grounder: `(<= (next (knows ?r (secret ?v))) (role ?r) (secret ?v))` for
//!   `(knows ?r (secret ?n))`; `(<= (next (knows alice (knows bob (p ?v)))) (true (knows bob
//!   (p ?v))))` for nested knowledge; no `role` literal for common knowledge or a constant
//!   role. These rules do not depend on `does`, so their outputs read in a next state are, for
//!   a relation, exactly its tuples in the state before: the candidates of the knowledge layer
//!   ([`FastKnowing::tuples`]). In a next state they are not knowledge: the layer clears them
//!   ([`FastKnowing::bare`]) and sets the atoms it computes.
//!
//! A game whose rules already have fluents named `knows` is refused (the rewrite would mix them
//! with its own); the reference engine's layer then reasons it.

use gdl_check::knows::{KnowsAtom, Proposition, is_knows};
use gdl_check::program::{Atom, Literal, Program, RelId, Rule, Term, Var};
use gdl_check::{Checked, Reserved, Symbol};
use gdl_syntax::Diagnostic;
use gdl_syntax::gdl3::KNOWS;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{BuildError, FastLimits, FastMachine, FastState};
use crate::machine::{ReasonError, Result, StateMachine};
use crate::terms::TermId;

/// The fast engine's machine for rules with `knows`, rewritten (see the module's notes).
pub(crate) struct FastKnowing {
    pub(crate) machine: FastMachine,
    /// The bits of the `knows` fluents.
    mask: Vec<u64>,
    /// For each relation (of the checked program) some rule asks the knowledge of: its
    /// `knows` fluents whose proposition is an atom of it, with that atom.
    by_rel: FxHashMap<RelId, Vec<(u32, TermId)>>,
    /// A move per role, to compute a next state's outputs that do not depend on the moves.
    any_joint: Option<Vec<TermId>>,
    /// The last state whose next state was computed for candidates, and that next state.
    last: Option<(FastState, FastState)>,
}

/// The relations the rewrite needs.
struct Names {
    knows: Symbol,
    true_rel: RelId,
    next_rel: RelId,
    role_rel: RelId,
}

/// Why the rewrite cannot be made: the rules have fluents named `knows`, or read every fluent
/// (`(true ?x)`, which would read the `knows` fluents as the game's).
fn collides(program: &Program) -> Option<String> {
    let knows = program.symbols.get(KNOWS)?;
    let fluent_rels: Vec<RelId> = [
        Reserved::True,
        Reserved::Next,
        Reserved::Init,
        Reserved::Base,
    ]
    .into_iter()
    .filter_map(|r| program.reserved(r))
    .collect();
    let named = |atom: &Atom| {
        fluent_rels.contains(&atom.rel)
            && atom.args.iter().any(|a| match a {
                Term::Const(s) | Term::Fn(s, _) => *s == knows,
                Term::Var(_) => false,
            })
    };
    for rule in &program.rules {
        let mut found = named(&rule.head).then_some(&rule.head);
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                if found.is_none() && named(atom) {
                    found = Some(atom);
                }
            });
        }
        if let Some(atom) = found {
            return Some(format!(
                "the rules have a fluent named `knows`, `{}`, which the fast engine's \
                 rewrite of `knows` into fluents needs for itself",
                program.atom_text(rule, atom)
            ));
        }
        let mut any_fluent = None;
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                if any_fluent.is_none()
                    && program.reserved(Reserved::True) == Some(atom.rel)
                    && matches!(&atom.args[..], [Term::Var(_)])
                {
                    any_fluent = Some(atom);
                }
            });
        }
        if let Some(atom) = any_fluent {
            return Some(format!(
                "the rules read every fluent at once, `{}`, which would read the fluents the \
                 fast engine's rewrite of `knows` adds too",
                program.atom_text(rule, atom)
            ));
        }
    }
    None
}

/// The program with every `knows` literal read from the state and the rules giving the `knows`
/// fluents' domain (see the module's notes); an error when a name it needs is taken.
pub(crate) fn rewrite(program: &Program) -> std::result::Result<Program, String> {
    if let Some(why) = collides(program) {
        return Err(why);
    }
    let mut out = program.clone();
    let names = Names {
        knows: out.symbols.intern(KNOWS),
        true_rel: {
            let s = out.symbols.intern(Reserved::True.name());
            out.intern_relation(s, 1)
        },
        next_rel: {
            let s = out.symbols.intern(Reserved::Next.name());
            out.intern_relation(s, 1)
        },
        role_rel: {
            let s = out.symbols.intern(Reserved::Role.name());
            out.intern_relation(s, 1)
        },
    };
    let mut domain = Domain {
        program,
        names: &names,
        rules: Vec::new(),
        seen: FxHashSet::default(),
    };
    for rule in &mut out.rules {
        for literal in rule.body.iter() {
            literal.for_each_atom(false, &mut |atom, _| {
                if let Some(k) = KnowsAtom::of(program, atom) {
                    domain.add(k.role, k.proposition, atom);
                }
            });
        }
        let body: Vec<Literal> = rule
            .body
            .iter()
            .map(|l| read_from_state(program, &names, l))
            .collect();
        rule.body = body.into();
    }
    let rules = domain.rules;
    let var_names: Vec<Symbol> = (0..rules.iter().map(|(_, n)| *n).max().unwrap_or(0))
        .map(|i| out.symbols.intern(&format!("knows{i}")))
        .collect();
    for (mut rule, vars) in rules {
        rule.vars = (0..vars)
            .map(|i| Var {
                name: var_names[i as usize],
                spans: vec![rule.span],
            })
            .collect();
        out.rules.push(rule);
    }
    Ok(out)
}

/// `literal` with its `knows` atoms read from the state: `(true (knows …))`.
fn read_from_state(program: &Program, names: &Names, literal: &Literal) -> Literal {
    match literal {
        Literal::Atom(a) if is_knows(program, a.rel) => Literal::Atom(Atom {
            rel: names.true_rel,
            args: Box::new([Term::Fn(names.knows, a.args.clone())]),
            span: a.span,
        }),
        Literal::Atom(_) | Literal::Distinct(..) => literal.clone(),
        Literal::Not(inner, span) => {
            Literal::Not(Box::new(read_from_state(program, names, inner)), *span)
        }
        Literal::Or(args, span) => Literal::Or(
            args.iter()
                .map(|l| read_from_state(program, names, l))
                .collect(),
            *span,
        ),
        Literal::And(args, span) => Literal::And(
            args.iter()
                .map(|l| read_from_state(program, names, l))
                .collect(),
            *span,
        ),
    }
}

/// The rules giving the `knows` fluents' domain, each once (with its number of variables).
struct Domain<'a> {
    program: &'a Program,
    names: &'a Names,
    rules: Vec<(Rule, u32)>,
    seen: FxHashSet<Term>,
}

impl Domain<'_> {
    /// Adds the rule of `(knows role proposition)`, and those of the `knows` nested in it.
    fn add(&mut self, role: Option<&Term>, proposition: &Term, at: &Atom) {
        if let Proposition::Knows(_) = gdl_check::knows::proposition(self.program, proposition)
            && let Term::Fn(_, args) = proposition
        {
            match &args[..] {
                [p] => self.add(None, p, at),
                [r, p] => self.add(Some(r), p, at),
                _ => {}
            }
        }
        let mut vars = 0;
        let mut body = Vec::new();
        let Some(pattern) = self.pattern(role, proposition, &mut vars, &mut body, at) else {
            return;
        };
        if !self.seen.insert(pattern.clone()) {
            return;
        }
        let head = Atom {
            rel: self.names.next_rel,
            args: Box::new([pattern]),
            span: at.span,
        };
        let rule = Rule {
            head,
            body: body.into(),
            vars: Box::new([]),
            span: at.span,
            fact: false,
        };
        self.rules.push((rule, vars));
    }

    /// The fluent `(knows role proposition)` with a fresh variable for every argument of the
    /// proposition's relation (and for a variable role), and the body literals that give its
    /// domain; `None` when it is never true (a proposition of no relation, a compound role).
    fn pattern(
        &self,
        role: Option<&Term>,
        proposition: &Term,
        vars: &mut u32,
        body: &mut Vec<Literal>,
        at: &Atom,
    ) -> Option<Term> {
        let knower = match role {
            None => None,
            Some(Term::Var(_)) => {
                let v = fresh(vars);
                body.push(Literal::Atom(Atom {
                    rel: self.names.role_rel,
                    args: Box::new([v.clone()]),
                    span: at.span,
                }));
                Some(v)
            }
            Some(c @ Term::Const(_)) => Some(c.clone()),
            Some(Term::Fn(..)) => return None,
        };
        let known = match gdl_check::knows::proposition(self.program, proposition) {
            Proposition::Knows(_) => {
                let Term::Fn(_, args) = proposition else {
                    return None;
                };
                let (r, p) = match &args[..] {
                    [p] => (None, p),
                    [r, p] => (Some(r), p),
                    _ => return None,
                };
                let inner = self.pattern(r, p, vars, &mut Vec::new(), at)?;
                body.push(Literal::Atom(Atom {
                    rel: self.names.true_rel,
                    args: Box::new([inner.clone()]),
                    span: at.span,
                }));
                inner
            }
            Proposition::Relation(rel) => {
                let relation = self.program.relations[rel as usize];
                let args: Vec<Term> = (0..relation.arity).map(|_| fresh(vars)).collect();
                body.push(Literal::Atom(Atom {
                    rel,
                    args: args.clone().into(),
                    span: at.span,
                }));
                match proposition {
                    Term::Const(name) => Term::Const(*name),
                    _ => Term::Fn(relation.name, args.into()),
                }
            }
            Proposition::Unmentioned { .. } | Proposition::NotAnAtom => return None,
        };
        let args: Box<[Term]> = knower.into_iter().chain([known]).collect();
        Some(Term::Fn(self.names.knows, args))
    }
}

/// A new variable of a rule that has `vars` so far.
fn fresh(vars: &mut u32) -> Term {
    *vars += 1;
    Term::Var(*vars - 1)
}

impl FastKnowing {
    /// The fast engine's machine for the rules of `checked`, which use `knows`, rewritten.
    pub(crate) fn new(
        checked: &Checked<'_>,
        limits: FastLimits,
    ) -> std::result::Result<FastKnowing, BuildError> {
        let blocking: Vec<Diagnostic> = checked.blocking_errors().cloned().collect();
        if !blocking.is_empty() {
            return Err(BuildError::Invalid(blocking));
        }
        let program = rewrite(&checked.program).map_err(BuildError::Unsupported)?;
        let machine = FastMachine::build_program(&program, limits)?;
        let knows = machine.symbols.get(KNOWS);
        let store = &machine.store;
        let mut mask = vec![0u64; machine.fluents.len().div_ceil(64)];
        let mut by_rel: FxHashMap<RelId, Vec<(u32, TermId)>> = FxHashMap::default();
        for (k, &f) in machine.fluents.iter().enumerate() {
            if store.is_constant(f) || Some(store.symbol(f)) != knows {
                continue;
            }
            let args = store.args(f);
            if !matches!(args.len(), 1 | 2) {
                continue;
            }
            mask[k / 64] |= 1 << (k % 64);
            let p = args[args.len() - 1];
            let arity = if store.is_constant(p) {
                0
            } else {
                store.args(p).len() as u32
            };
            let name = machine.symbols.name(store.symbol(p));
            if let Some(rel) = checked.program.relation(name, arity)
                && !is_knows(&checked.program, rel)
            {
                by_rel.entry(rel).or_default().push((k as u32, p));
            }
        }
        let any_joint = (0..machine.roles.len())
            .map(|role| {
                machine
                    .move_index
                    .iter()
                    .filter(|((r, _), _)| *r == role)
                    .min_by_key(|(_, id)| **id)
                    .map(|((_, m), _)| *m)
            })
            .collect();
        Ok(FastKnowing {
            machine,
            mask,
            by_rel,
            any_joint,
            last: None,
        })
    }

    /// `state` with the `knows` fluents of `knows` (atoms the layer computed) set, and no other.
    pub(crate) fn knowing(&self, state: &FastState, knows: &[TermId]) -> Result<FastState> {
        let mut bits: Vec<u64> = state
            .0
            .iter()
            .zip(&self.mask)
            .map(|(w, m)| w & !m)
            .collect();
        for &atom in knows {
            let Some(k) = self.machine.fluent_number(atom) else {
                return Err(ReasonError::Evaluation(format!(
                    "the `knows` atom `{}` holds but the fast engine's network has no fluent \
                     for it",
                    self.machine.store.text(&self.machine.symbols, atom)
                )));
            };
            bits[k as usize / 64] |= 1 << (k % 64);
        }
        Ok(FastState(bits.into()))
    }

    /// The symbol `knows`, if the machine has it.
    pub(crate) fn knows_symbol(&self) -> Option<Symbol> {
        self.machine.symbols.get(KNOWS)
    }

    pub(crate) fn store_mut(&mut self) -> &mut crate::terms::TermStore {
        &mut self.machine.store
    }

    /// `state` with no `knows` fluent.
    pub(crate) fn bare(&self, state: FastState) -> FastState {
        if state.0.iter().zip(&self.mask).all(|(w, m)| w & m == 0) {
            return state;
        }
        FastState(
            state
                .0
                .iter()
                .zip(&self.mask)
                .map(|(w, m)| w & !m)
                .collect(),
        )
    }

    /// The atoms of `rel` that hold in `state` (with its `knows` fluents as given), sorted:
    /// the propositions of the `knows` fluents of `rel` that hold in the next state (the rules
    /// the rewrite adds do not depend on the moves, so any joint move gives them).
    pub(crate) fn tuples(&mut self, state: &FastState, rel: RelId) -> Result<Vec<TermId>> {
        let Some(fluents) = self.by_rel.get(&rel) else {
            return Ok(Vec::new());
        };
        let next = match &self.last {
            Some((s, next)) if s == state => next.clone(),
            _ => {
                let Some(joint) = self.any_joint.clone() else {
                    return Err(ReasonError::Evaluation(
                        "a role has no move at all: the fast engine cannot read what holds \
                         from its network"
                            .into(),
                    ));
                };
                let next = self.machine.next_state(state, &joint)?;
                self.last = Some((state.clone(), next.clone()));
                next
            }
        };
        let mut out: Vec<TermId> = fluents
            .iter()
            .filter(|&&(k, _)| next.0[k as usize / 64] >> (k % 64) & 1 == 1)
            .map(|&(_, p)| p)
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineChoice, Machine};
    use crate::reference::Limits;

    /// A one-step game whose goal is knowing a fact, with `extra` rules.
    fn game(extra: &str) -> String {
        format!(
            "(role r) (init s0) (fact a)
             (<= (legal r go) (true s0))
             (<= (next s1) (does r go))
             (<= terminal (true s1))
             (<= k (knows r (fact ?x)))
             (<= (goal r 100) k)
             (<= (goal r 0) (not k))
             {extra}"
        )
    }

    fn rule_texts(program: &Program) -> Vec<String> {
        program
            .rules
            .iter()
            .map(|rule| {
                let body: Vec<String> = rule
                    .body
                    .iter()
                    .map(|l| match l {
                        Literal::Atom(a) => program.atom_text(rule, a),
                        _ => "…".into(),
                    })
                    .collect();
                format!(
                    "{} <= {}",
                    program.atom_text(rule, &rule.head),
                    body.join(" ")
                )
            })
            .collect()
    }

    #[test]
    fn the_rewrite_reads_knows_from_the_state_and_gives_its_domain() {
        let text = game("(<= both (knows (fact a)) (knows r (knows r (fact ?y))))");
        let checked = gdl_check::check(&text);
        let program = rewrite(&checked.program).unwrap();
        assert_eq!(gdl_check::knows::first_use(&program), None);
        let rules = rule_texts(&program);
        for expected in [
            "k <= (true (knows r (fact ?x)))",
            "both <= (true (knows (fact a))) (true (knows r (knows r (fact ?y))))",
            // One domain rule per kind of atom, each once, nested ones first.
            "(next (knows r (fact ?knows0))) <= (fact ?knows0)",
            "(next (knows (fact ?knows0))) <= (fact ?knows0)",
            "(next (knows r (knows r (fact ?knows0)))) <= (true (knows r (fact ?knows0)))",
        ] {
            assert_eq!(
                rules.iter().filter(|r| **r == expected).count(),
                1,
                "{expected} in {rules:#?}"
            );
        }
        assert_eq!(rules.len(), checked.program.rules.len() + 3);
        // A variable role ranges over the roles.
        let text = game("(<= anyone (knows ?who (fact a)))");
        let checked = gdl_check::check(&text);
        let rules = rule_texts(&rewrite(&checked.program).unwrap());
        assert!(
            rules.contains(
                &"(next (knows ?knows0 (fact ?knows1))) <= (role ?knows0) (fact ?knows1)".into()
            ),
            "{rules:#?}"
        );
    }

    #[test]
    fn the_network_reasons_knows_and_machine_says_so() {
        let text = game("");
        let checked = gdl_check::check(&text);
        let mut m = Machine::build(&checked, EngineChoice::Fast, Limits::default()).unwrap();
        assert_eq!(m.describe_engine(), "fast engine, over histories (GDL-III)");
        let s0 = m.initial_state().unwrap();
        let go = m.intern("go").unwrap();
        let s1 = m.next_state(&s0, &[go]).unwrap();
        // The fact is known; the candidates the rewrite adds are no fluents of the game.
        assert_eq!(m.goals(&s1).unwrap(), [100]);
        let fluents: Vec<String> = m
            .fluents(&s1)
            .iter()
            .map(|&f| m.terms().text(m.symbols(), f))
            .collect();
        assert_eq!(fluents, ["s1"]);
    }

    #[test]
    fn a_fluent_named_knows_is_refused_and_the_reference_engine_reasons_it() {
        let text = game("(init (knows r a))");
        let checked = gdl_check::check(&text);
        let Err(why) = rewrite(&checked.program) else {
            panic!("a rewrite that mixes the game's fluents with its own");
        };
        assert!(why.contains("`(init (knows r a))`"), "{why}");
        let mut m = Machine::build(&checked, EngineChoice::Fast, Limits::default()).unwrap();
        assert_eq!(m.engine_name(), "reference");
        assert_eq!(m.fallback(), Some(&*why));
        assert!(m.describe_engine().contains(&why));
        // A frame for every fluent would keep the `knows` fluents as the game's.
        let frame = game("(<= (next ?f) (true ?f) (not (true s0)))");
        let Err(why) = rewrite(&gdl_check::check(&frame).program) else {
            panic!("a rewrite under a rule that reads every fluent");
        };
        assert!(why.contains("`(true ?f)`"), "{why}");
        let s0 = m.initial_state().unwrap();
        let go = m.intern("go").unwrap();
        let s1 = m.next_state(&s0, &[go]).unwrap();
        assert_eq!(m.goals(&s1).unwrap(), [100]);
    }
}
