//! Rules in the flat form the grounder works on: every body a conjunction of positive atoms,
//! negated atoms, `distinct`s and equalities, with ground subterms interned.
//!
//! Negation is pushed inward (De Morgan) and `or` expanded (§5.3 of the specification), so
//! `(not (or a b))` becomes `(not a) (not b)`, `(not (and a b))` two rules, and
//! `(not (distinct ?x ?y))` an equality. This is exact: safety guarantees every variable of a
//! negation is bound by a positive literal, and under a binding negation-as-failure of a
//! conjunction is the disjunction of the negations.

use gdl_check::program::{Literal, Program, Rule, Term};
use gdl_check::{RelId, Symbol};

use crate::terms::{TermId, TermStore};

/// A term of a flat rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pat {
    Var(u32),
    Ground(TermId),
    Fn(Symbol, Box<[Pat]>),
}

impl Pat {
    pub fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            Pat::Var(v) => f(*v),
            Pat::Ground(_) => {}
            Pat::Fn(_, args) => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }

    /// Whether every variable of the term is in `bound` (a bit per variable).
    pub fn bound_by(&self, bound: &[bool]) -> bool {
        match self {
            Pat::Var(v) => bound[*v as usize],
            Pat::Ground(_) => true,
            Pat::Fn(_, args) => args.iter().all(|a| a.bound_by(bound)),
        }
    }
}

/// A relation applied to terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PAtom {
    pub rel: RelId,
    pub args: Box<[Pat]>,
}

impl PAtom {
    pub fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        self.args.iter().for_each(|a| a.for_each_var(f));
    }
}

/// A literal of a flat body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Lit {
    Pos(PAtom),
    Neg(PAtom),
    Distinct(Pat, Pat),
    /// `(not (distinct a b))`.
    Same(Pat, Pat),
}

impl Lit {
    pub fn bound_by(&self, bound: &[bool]) -> bool {
        match self {
            Lit::Pos(a) | Lit::Neg(a) => a.args.iter().all(|p| p.bound_by(bound)),
            Lit::Distinct(a, b) | Lit::Same(a, b) => a.bound_by(bound) && b.bound_by(bound),
        }
    }
}

/// A rule without `or` or nested negation.
#[derive(Clone, Debug)]
pub(crate) struct FlatRule {
    pub head: PAtom,
    pub body: Vec<Lit>,
    /// Variables are numbered `0..vars`.
    pub vars: u32,
}

impl FlatRule {
    /// The variables of the head, each once, in the order they occur.
    pub fn head_vars(&self) -> Vec<u32> {
        let mut vars = Vec::new();
        self.head.for_each_var(&mut |v| {
            if !vars.contains(&v) {
                vars.push(v)
            }
        });
        vars
    }
}

/// Why a program cannot be put in flat form.
pub(crate) enum NormalError {
    /// Expanding `or` would make more than this many rules of one.
    TooManyBranches(usize),
    /// A fact with variables (`(leq ?x ?x)`) stands for infinitely many ground facts.
    VariableInFact(String),
    /// The rules, `or`s expanded, have more literals than this in all.
    TooLarge(usize),
    /// A rule body has more literals than this (join planning is quadratic in it).
    LongBody(usize),
}

impl std::fmt::Display for NormalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NormalError::TooManyBranches(n) => write!(f, "a rule has more than {n} `or` branches"),
            NormalError::VariableInFact(fact) => write!(
                f,
                "the fact `{fact}` has variables: it stands for infinitely many facts"
            ),
            NormalError::TooLarge(n) => write!(
                f,
                "the rules, their `or`s expanded, have more than {n} literals"
            ),
            NormalError::LongBody(n) => write!(f, "a rule has more than {n} literals"),
        }
    }
}

/// Literals the flat rules of a program may have in all, and one rule.
const LITERAL_LIMIT: usize = 4_000_000;
const BODY_LIMIT: usize = 256;

/// Flattens every rule of the program; ground terms are interned in `store`.
pub(crate) fn flatten(
    program: &Program,
    store: &mut TermStore,
    branch_limit: usize,
) -> Result<Vec<FlatRule>, NormalError> {
    flatten_with(program, store, branch_limit, None)
}

/// [`flatten`]; with `open_facts`, a fact with variables is kept (a rule with an empty body)
/// and listed there with its text, instead of refused: the join tier computes such a relation
/// only where it is called with its variables bound.
pub(crate) fn flatten_with(
    program: &Program,
    store: &mut TermStore,
    branch_limit: usize,
    mut open_facts: Option<&mut Vec<(RelId, String)>>,
) -> Result<Vec<FlatRule>, NormalError> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for rule in &program.rules {
        let head = PAtom {
            rel: rule.head.rel,
            args: rule.head.args.iter().map(|t| pat(t, store)).collect(),
        };
        if rule.body.is_empty() && !rule.head.args.iter().all(Term::is_ground) {
            let text = program.atom_text(rule, &rule.head);
            match open_facts.as_deref_mut() {
                Some(list) => list.push((rule.head.rel, text)),
                None => return Err(NormalError::VariableInFact(text)),
            }
        }
        let mut bodies: Vec<Vec<Lit>> = vec![Vec::new()];
        for literal in &rule.body {
            let alternatives = dnf(literal, false, store, branch_limit)?;
            bodies = product(bodies, &alternatives, branch_limit)?;
        }
        if bodies.iter().any(|b| b.len() > BODY_LIMIT) {
            return Err(NormalError::LongBody(BODY_LIMIT));
        }
        total += bodies.iter().map(Vec::len).sum::<usize>();
        if total > LITERAL_LIMIT {
            return Err(NormalError::TooLarge(LITERAL_LIMIT));
        }
        for body in bodies {
            out.push(FlatRule {
                head: head.clone(),
                body,
                vars: var_count(rule),
            });
        }
    }
    Ok(out)
}

fn var_count(rule: &Rule) -> u32 {
    rule.vars.len() as u32
}

fn pat(term: &Term, store: &mut TermStore) -> Pat {
    match term {
        Term::Var(v) => Pat::Var(*v),
        Term::Const(c) => Pat::Ground(store.constant(*c)),
        Term::Fn(f, args) => {
            let args: Box<[Pat]> = args.iter().map(|a| pat(a, store)).collect();
            if args.iter().all(|a| matches!(a, Pat::Ground(_))) {
                let ids: Vec<TermId> = args
                    .iter()
                    .map(|a| match a {
                        Pat::Ground(id) => *id,
                        _ => unreachable!("all ground"),
                    })
                    .collect();
                Pat::Ground(store.function(*f, &ids))
            } else {
                Pat::Fn(*f, args)
            }
        }
    }
}

/// Every conjunction of `a` with one of `b`.
fn product(a: Vec<Vec<Lit>>, b: &[Vec<Lit>], limit: usize) -> Result<Vec<Vec<Lit>>, NormalError> {
    if a.len().saturating_mul(b.len()) > limit {
        return Err(NormalError::TooManyBranches(limit));
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in &a {
        for y in b {
            let mut c = x.clone();
            c.extend(y.iter().cloned());
            out.push(c);
        }
    }
    Ok(out)
}

/// The literal (negated when `negated`) as a disjunction of conjunctions of flat literals.
fn dnf(
    literal: &Literal,
    negated: bool,
    store: &mut TermStore,
    limit: usize,
) -> Result<Vec<Vec<Lit>>, NormalError> {
    Ok(match literal {
        Literal::Atom(atom) => {
            let a = PAtom {
                rel: atom.rel,
                args: atom.args.iter().map(|t| pat(t, store)).collect(),
            };
            vec![vec![if negated { Lit::Neg(a) } else { Lit::Pos(a) }]]
        }
        Literal::Distinct(x, y, _) => {
            let (x, y) = (pat(x, store), pat(y, store));
            vec![vec![if negated {
                Lit::Same(x, y)
            } else {
                Lit::Distinct(x, y)
            }]]
        }
        Literal::Not(inner, _) => dnf(inner, !negated, store, limit)?,
        // A conjunction, or the negation of a disjunction: every part holds.
        Literal::And(args, _) if !negated => conjunction(args, false, store, limit)?,
        Literal::Or(args, _) if negated => conjunction(args, true, store, limit)?,
        // A disjunction, or the negation of a conjunction: one part holds.
        Literal::Or(args, _) | Literal::And(args, _) => {
            let mut out = Vec::new();
            for arg in args {
                out.extend(dnf(arg, negated, store, limit)?);
                if out.len() > limit {
                    return Err(NormalError::TooManyBranches(limit));
                }
            }
            out
        }
    })
}

fn conjunction(
    args: &[Literal],
    negated: bool,
    store: &mut TermStore,
    limit: usize,
) -> Result<Vec<Vec<Lit>>, NormalError> {
    let mut out: Vec<Vec<Lit>> = vec![Vec::new()];
    for arg in args {
        let alternatives = dnf(arg, negated, store, limit)?;
        out = product(out, &alternatives, limit)?;
    }
    Ok(out)
}
