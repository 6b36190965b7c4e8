//! Turns a lowered program into rules ready for bottom-up evaluation: ground subterms interned,
//! `or`s expanded into separate rules, body literals ordered so that every negation and
//! `distinct` comes after the positive literals that bind its variables, and the phase of each
//! relation decided.

use gdl_check::program::{Literal, Program, Rule, Term};
use gdl_check::{Graph, RelId, Reserved, Symbol};

use super::eval::{Facts, MOVES, STATE, STATIC};
use crate::machine::{ReasonError, Result};
use crate::terms::{TermId, TermStore};

/// More `or` branches than this in one rule and the game is refused.
const BRANCH_LIMIT: usize = 4096;

/// A term of a compiled rule.
#[derive(Clone, Debug)]
pub(crate) enum CTerm {
    Var(u32),
    Ground(TermId),
    Fn(Symbol, Box<[CTerm]>),
}

impl CTerm {
    fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            CTerm::Var(v) => f(*v),
            CTerm::Ground(_) => {}
            CTerm::Fn(_, args) => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct CAtom {
    pub rel: RelId,
    /// The relation's name: a tuple of the relation is the term `(name args…)`, or the
    /// constant `name` when it has no arguments.
    pub name: Symbol,
    pub args: Box<[CTerm]>,
}

impl CAtom {
    fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        self.args.iter().for_each(|a| a.for_each_var(f));
    }
}

/// A literal of a compiled body.
#[derive(Clone, Debug)]
pub(crate) enum CLit {
    Pos(CAtom),
    /// `not` of a formula: true when no branch of it holds.
    Neg(Formula),
    Distinct(CTerm, CTerm),
}

/// A disjunction of conjunctions (a negated formula after expanding its `or`s).
#[derive(Clone, Debug)]
pub(crate) struct Formula {
    pub branches: Vec<Vec<CLit>>,
    /// Relations it mentions, for the alternating fixpoint.
    pub rels: Vec<RelId>,
}

impl CLit {
    fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            CLit::Pos(a) => a.for_each_var(f),
            CLit::Neg(formula) => formula
                .branches
                .iter()
                .flatten()
                .for_each(|l| l.for_each_var(f)),
            CLit::Distinct(a, b) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
        }
    }
}

/// A rule without `or`, its body in evaluation order.
#[derive(Clone, Debug)]
pub(crate) struct CRule {
    pub head: CAtom,
    pub body: Vec<CLit>,
    pub vars: usize,
}

/// A fact with variables, such as `(leq ?a ?a)`: it holds for every value of its variables.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    pub args: Box<[CTerm]>,
    pub vars: usize,
}

pub(crate) struct Compiled {
    pub rules: Vec<CRule>,
    /// Ground facts of each relation (as tuples).
    pub facts: Vec<Facts>,
    pub patterns: Vec<Vec<Pattern>>,
    /// The layer of each relation's tables, which says how long they are kept:
    /// [`STATIC`] (depends on neither `true` nor `does`), [`STATE`] (on `true` only), [`MOVES`]
    /// (on `does`: `legal`, `goal` and `terminal` ask with no moves, `next` with the joint move).
    pub layer: Vec<u8>,
    /// Rules by head relation.
    pub rules_of: Vec<Vec<usize>>,
    /// Name and arity of each relation.
    pub names: Vec<Symbol>,
    pub arity: Vec<usize>,
    /// The component of each relation, the members of each component, and whether it is
    /// recursive, or depends on its own negation.
    pub component: Vec<u32>,
    pub members: Vec<Vec<RelId>>,
    pub recursive: Vec<bool>,
    pub self_negating: Vec<bool>,
    pub true_rel: Option<RelId>,
    pub does_rel: Option<RelId>,
    /// GDL-III's `knows/1` and `knows/2`, if the rules use them: inputs like `true`, whose
    /// tuples the knowledge machine gives for each history (`crate::knowledge`).
    pub knows_rels: Vec<RelId>,
}

/// Interns the tuple term of a relation with ground arguments.
pub(crate) fn tuple(store: &mut TermStore, name: Symbol, args: &[TermId]) -> TermId {
    if args.is_empty() {
        store.constant(name)
    } else {
        store.function(name, args)
    }
}

struct Compiler<'p> {
    program: &'p Program,
    store: &'p mut TermStore,
}

impl Compiler<'_> {
    fn term(&mut self, term: &Term) -> CTerm {
        match term {
            Term::Var(v) => CTerm::Var(*v),
            Term::Const(c) => CTerm::Ground(self.store.constant(*c)),
            Term::Fn(f, args) => {
                let args: Box<[CTerm]> = args.iter().map(|a| self.term(a)).collect();
                if args.iter().all(|a| matches!(a, CTerm::Ground(_))) {
                    let ids: Vec<TermId> = args
                        .iter()
                        .map(|a| match a {
                            CTerm::Ground(t) => *t,
                            _ => unreachable!(),
                        })
                        .collect();
                    CTerm::Ground(self.store.function(*f, &ids))
                } else {
                    CTerm::Fn(*f, args)
                }
            }
        }
    }

    fn atom(&mut self, atom: &gdl_check::program::Atom) -> CAtom {
        CAtom {
            rel: atom.rel,
            name: self.program.relations[atom.rel as usize].name,
            args: atom.args.iter().map(|a| self.term(a)).collect(),
        }
    }

    /// The conjunctions a list of literals stands for (`or` expanded, `and` flattened).
    fn branches(&mut self, literals: &[&Literal]) -> Result<Vec<Vec<CLit>>> {
        let mut branches: Vec<Vec<CLit>> = vec![Vec::new()];
        for literal in literals {
            branches = self.expand(literal, branches)?;
        }
        Ok(branches)
    }

    fn expand(&mut self, literal: &Literal, branches: Vec<Vec<CLit>>) -> Result<Vec<Vec<CLit>>> {
        match literal {
            Literal::Or(args, _) => {
                let mut out = Vec::new();
                for arg in args {
                    out.extend(self.expand(arg, branches.clone())?);
                    if out.len() > BRANCH_LIMIT {
                        return Err(ReasonError::Budget(format!(
                            "a rule expands into more than {BRANCH_LIMIT} rules without `or`"
                        )));
                    }
                }
                Ok(out)
            }
            Literal::And(args, _) => {
                let mut current = branches;
                for arg in args {
                    current = self.expand(arg, current)?;
                }
                Ok(current)
            }
            _ => {
                let compiled = self.literal(literal)?;
                Ok(branches
                    .into_iter()
                    .map(|mut b| {
                        b.push(compiled.clone());
                        b
                    })
                    .collect())
            }
        }
    }

    fn literal(&mut self, literal: &Literal) -> Result<CLit> {
        Ok(match literal {
            Literal::Atom(atom) => CLit::Pos(self.atom(atom)),
            Literal::Distinct(a, b, _) => CLit::Distinct(self.term(a), self.term(b)),
            Literal::Not(inner, _) => {
                let mut branches = self.branches(&[inner.as_ref()])?;
                for branch in &mut branches {
                    order(branch, &[]);
                }
                let mut rels = Vec::new();
                inner.for_each_atom(false, &mut |a, _| rels.push(a.rel));
                CLit::Neg(Formula { branches, rels })
            }
            Literal::Or(..) | Literal::And(..) => unreachable!("expanded by the caller"),
        })
    }
}

/// Orders a conjunction for evaluation from left to right: the positive literals in the order
/// the author wrote them (as Prolog would, and as authors write for it), except literals of
/// relations with facts with variables, which go after the others; every negation or
/// `distinct` as soon as the positive literals before it bind its variables. `patterned` lists
/// relations that have facts with variables.
fn order(body: &mut Vec<CLit>, patterned: &[bool]) {
    let mut bound: Vec<bool> = Vec::new();
    let (mut positives, mut filters): (Vec<CLit>, Vec<CLit>) = std::mem::take(body)
        .into_iter()
        .partition(|l| matches!(l, CLit::Pos(_)));
    let is_patterned = |l: &CLit| match l {
        CLit::Pos(atom) => patterned.get(atom.rel as usize).copied().unwrap_or(false),
        _ => false,
    };
    // A stable sort: plain literals first, each group in written order.
    positives.sort_by_key(is_patterned);
    let all_bound = |lit: &CLit, bound: &Vec<bool>| {
        let mut ok = true;
        lit.for_each_var(&mut |v| ok &= bound.get(v as usize).copied().unwrap_or(false));
        ok
    };
    let place_filters = |body: &mut Vec<CLit>, bound: &Vec<bool>, filters: &mut Vec<CLit>| {
        let mut k = 0;
        while k < filters.len() {
            if all_bound(&filters[k], bound) {
                body.push(filters.remove(k));
            } else {
                k += 1;
            }
        }
    };
    place_filters(body, &bound, &mut filters);
    for lit in positives {
        lit.for_each_var(&mut |v| {
            if bound.len() <= v as usize {
                bound.resize(v as usize + 1, false);
            }
            bound[v as usize] = true;
        });
        body.push(lit);
        place_filters(body, &bound, &mut filters);
    }
    // Filters with variables no positive literal binds (unsafe rules are refused before this).
    body.extend(filters);
}

pub(crate) fn compile(program: &Program, graph: &Graph, store: &mut TermStore) -> Result<Compiled> {
    let n = program.relations.len();
    let mut compiler = Compiler { program, store };
    let mut facts = vec![Vec::new(); n];
    let mut patterns: Vec<Vec<Pattern>> = (0..n).map(|_| Vec::new()).collect();
    let mut rules = Vec::new();
    for rule in &program.rules {
        if rule.body.is_empty() {
            let head = compiler.atom(&rule.head);
            let ground: Option<Vec<TermId>> = head
                .args
                .iter()
                .map(|a| match a {
                    CTerm::Ground(t) => Some(*t),
                    _ => None,
                })
                .collect();
            match ground {
                Some(args) => {
                    facts[head.rel as usize].push(tuple(compiler.store, head.name, &args))
                }
                None => patterns[head.rel as usize].push(Pattern {
                    args: head.args,
                    vars: rule.vars.len(),
                }),
            }
            continue;
        }
        rules.extend(compile_rule(&mut compiler, rule)?);
    }
    let patterned: Vec<bool> = patterns.iter().map(|p| !p.is_empty()).collect();
    for rule in &mut rules {
        order(&mut rule.body, &patterned);
    }

    let input = |r: Reserved| program.reserved(r).into_iter().collect::<Vec<_>>();
    let knows_rels: Vec<RelId> = (0..n as RelId)
        .filter(|&r| gdl_check::knows::is_knows(program, r))
        .collect();
    // What a history's knowledge is changes with the state, as the fluents do.
    let mut state_inputs = input(Reserved::True);
    state_inputs.extend(&knows_rels);
    let on_true = graph.dependents(&state_inputs);
    let on_does = graph.dependents(&input(Reserved::Does));
    let layer = (0..n)
        .map(|r| match (on_true[r], on_does[r]) {
            (_, true) => MOVES,
            (true, false) => STATE,
            (false, false) => STATIC,
        })
        .collect();

    let mut rules_of = vec![Vec::new(); n];
    for (k, rule) in rules.iter().enumerate() {
        rules_of[rule.head.rel as usize].push(k);
    }
    let component = graph.component.clone();
    let self_negating = graph
        .components
        .iter()
        .enumerate()
        .map(|(c, members)| {
            members.iter().any(|&r| {
                rules_of[r as usize].iter().any(|&k| {
                    rules[k].body.iter().any(|l| match l {
                        CLit::Neg(f) => f.rels.iter().any(|&x| component[x as usize] == c as u32),
                        _ => false,
                    })
                })
            })
        })
        .collect();
    let facts = facts
        .iter()
        .map(|f| Facts::new(f, compiler.store))
        .collect();
    Ok(Compiled {
        rules,
        facts,
        patterns,
        layer,
        rules_of,
        names: program.relations.iter().map(|r| r.name).collect(),
        arity: program.relations.iter().map(|r| r.arity as usize).collect(),
        component,
        members: graph.components.clone(),
        recursive: graph.recursive.clone(),
        self_negating,
        true_rel: program.reserved(Reserved::True),
        does_rel: program.reserved(Reserved::Does),
        knows_rels,
    })
}

fn compile_rule(compiler: &mut Compiler<'_>, rule: &Rule) -> Result<Vec<CRule>> {
    let head = compiler.atom(&rule.head);
    let literals: Vec<&Literal> = rule.body.iter().collect();
    let branches = compiler.branches(&literals)?;
    Ok(branches
        .into_iter()
        .map(|body| CRule {
            head: head.clone(),
            body,
            vars: rule.vars.len(),
        })
        .collect())
}
