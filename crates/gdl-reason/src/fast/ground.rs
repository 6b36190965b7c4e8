//! Grounding: the rules instantiated over the atoms that can ever hold.
//!
//! 1. Relations that depend on neither `true` nor `does` (static) are computed exactly,
//!    component by component in dependency order (negation over complete relations).
//! 2. The others (dynamic) are over-approximated by a relaxed fixpoint: `true` holds for what
//!    `init` or `next` can give, `does` for what `legal` can give, and negation of dynamic
//!    relations is ignored. Every atom true in a reachable state is in the result.
//!    With [`Limits::demand`], derived dynamic relations are computed only where some rule
//!    asks for them (magic sets, see `demand`): the way to ground a game whose derived
//!    relations are far larger than what its rules use.
//! 3. Every rule with a dynamic head is instantiated over those atoms, from its head's atoms:
//!    each binding that satisfies the static literals gives a ground rule whose body is the
//!    dynamic literals.

use gdl_check::program::Program;
use gdl_check::{RelId, Reserved};

use super::datalog::{Budget, Db, Stop, TupleId, fixpoint};
use super::decompose::decompose;
use super::normal::{FlatRule, Lit, PAtom, Pat, flatten};
use crate::terms::{TermId, TermStore};

/// A ground rule: `head` holds when every body literal does.
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub head: u32,
    /// Range in [`Ground::body`].
    pub body: (u32, u32),
}

/// A literal of a ground body: an atom, negated or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct GLit {
    pub atom: u32,
    pub negated: bool,
}

/// The ground program.
pub(crate) struct Ground {
    pub db: Db,
    /// Whether each relation is dynamic (depends on `true` or `does`).
    pub dynamic: Vec<bool>,
    /// The atoms of dynamic relation `r` are `atom_base[r]..atom_base[r] + len`.
    pub atom_base: Vec<u32>,
    /// The relation and tuple of each atom.
    pub atoms: Vec<(RelId, TupleId)>,
    pub instances: Vec<Instance>,
    pub body: Vec<GLit>,
}

/// Why a game cannot be grounded.
#[derive(Debug)]
pub(crate) enum GroundError {
    Budget(Stop),
    /// Rules that cannot be put in flat form (too many `or` branches, facts with variables).
    Form(String),
    /// A static relation depends on its own negation.
    SelfNegating(String),
    /// Too many ground rules.
    TooManyRules(usize),
}

impl std::fmt::Display for GroundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GroundError::Budget(Stop::TooManyTuples(n)) => {
                write!(f, "more than {n} atoms can hold")
            }
            GroundError::Budget(Stop::TooDeep(n)) => write!(
                f,
                "derived terms nest more than {n} levels deep (the domain looks infinite)"
            ),
            GroundError::Budget(Stop::OutOfTime) => write!(f, "grounding ran out of time"),
            GroundError::Budget(Stop::TooMuchWork(n)) => {
                write!(f, "grounding would try more than {n} tuples")
            }
            GroundError::Budget(Stop::OutOfMemory(e)) => write!(f, "grounding needs {e}"),
            GroundError::Budget(Stop::Unsafe) => {
                write!(f, "a rule has a variable that no positive literal binds")
            }
            GroundError::Form(m) => f.write_str(m),
            GroundError::SelfNegating(r) => write!(f, "`{r}` depends on its own negation"),
            GroundError::TooManyRules(n) => write!(f, "more than {n} ground rules"),
        }
    }
}

impl GroundError {
    /// Whether grounding only what is demanded may succeed where this stopped: a budget of
    /// size, memory or work (not time, which is spent, nor the form of the rules).
    pub fn demand_may_help(&self) -> bool {
        matches!(
            self,
            GroundError::Budget(
                Stop::TooManyTuples(_)
                    | Stop::TooMuchWork(_)
                    | Stop::TooDeep(_)
                    | Stop::OutOfMemory(_)
            ) | GroundError::TooManyRules(_)
        )
    }
}

impl From<Stop> for GroundError {
    fn from(s: Stop) -> GroundError {
        GroundError::Budget(s)
    }
}

#[derive(Clone)]
pub(crate) struct Limits {
    pub budget: Budget,
    pub max_rules: usize,
    pub branch_limit: usize,
    /// Derived relations computed only where demanded (see `demand`), and rules split by
    /// finer estimates (see `decompose`).
    pub demand: bool,
}

/// Refuses at once a game whose facts alone are more atoms than the budget allows: every
/// distinct fact is an atom, so grounding would only fail later, after building tables for
/// all of them (a description of millions of facts took gigabytes to be refused).
fn too_many_facts(program: &Program, max_atoms: usize) -> Result<(), GroundError> {
    let facts = program.rules.iter().filter(|r| r.body.is_empty());
    if facts.clone().count() <= max_atoms {
        return Ok(());
    }
    // Distinct facts, by a hash of each: a collision can only make the count smaller, so a
    // refusal is always right.
    let hasher = rustc_hash::FxBuildHasher;
    let distinct: rustc_hash::FxHashSet<u64> = facts
        .map(|r| {
            use std::hash::BuildHasher;
            hasher.hash_one((r.head.rel, &r.head.args))
        })
        .collect();
    if distinct.len() > max_atoms {
        return Err(GroundError::Budget(Stop::TooManyTuples(max_atoms)));
    }
    Ok(())
}

/// Whether each relation is dynamic: `true`, `does`, and every relation that depends on
/// them.
pub(crate) fn dynamic_relations(program: &Program, rules: &[FlatRule]) -> Vec<bool> {
    let mut dynamic = vec![false; program.relations.len()];
    for r in [Reserved::True, Reserved::Does]
        .into_iter()
        .filter_map(|r| program.reserved(r))
    {
        dynamic[r as usize] = true;
    }
    loop {
        let mut changed = false;
        for rule in rules {
            if !dynamic[rule.head.rel as usize]
                && rule
                    .body
                    .iter()
                    .any(|l| matches!(l, Lit::Pos(a) | Lit::Neg(a) if dynamic[a.rel as usize]))
            {
                dynamic[rule.head.rel as usize] = true;
                changed = true;
            }
        }
        if !changed {
            return dynamic;
        }
    }
}

/// For each of `n` relations, the relations whose rules read it (positively or not), sorted:
/// the successor lists of the dependency graph.
pub(crate) fn readers(rules: &[FlatRule], n: usize) -> Vec<Vec<u32>> {
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    for rule in rules {
        for lit in &rule.body {
            if let Lit::Pos(a) | Lit::Neg(a) = lit {
                succ[a.rel as usize].push(rule.head.rel);
            }
        }
    }
    for s in &mut succ {
        s.sort_unstable();
        s.dedup();
    }
    succ
}

/// Grounds a checked program.
pub(crate) fn ground(
    program: &Program,
    store: TermStore,
    limits: &Limits,
) -> Result<Ground, GroundError> {
    too_many_facts(program, limits.budget.max_tuples)?;
    let mut store = store;
    let rules = flatten(program, &mut store, limits.branch_limit)
        .map_err(|e| GroundError::Form(e.to_string()))?;
    let n = program.relations.len();
    let true_rel = program.reserved(Reserved::True);
    let does_rel = program.reserved(Reserved::Does);

    let mut dynamic = dynamic_relations(program, &rules);

    // The relaxed program: the rules, plus `true` from `init` and `next`, `does` from `legal`.
    let mut relaxed: Vec<FlatRule> = rules.clone();
    let x = Pat::Var(0);
    let y = Pat::Var(1);
    let copy = |from: Option<RelId>, to: Option<RelId>, arity: usize| -> Option<FlatRule> {
        let (from, to) = (from?, to?);
        let args: Box<[Pat]> = [x.clone(), y.clone()][..arity].into();
        Some(FlatRule {
            head: PAtom {
                rel: to,
                args: args.clone(),
            },
            body: vec![Lit::Pos(PAtom { rel: from, args })],
            vars: arity as u32,
        })
    };
    relaxed.extend(copy(program.reserved(Reserved::Init), true_rel, 1));
    relaxed.extend(copy(program.reserved(Reserved::Next), true_rel, 1));
    relaxed.extend(copy(program.reserved(Reserved::Legal), does_rel, 2));

    // With demand, derived dynamic relations are computed only where demanded (see
    // `demand`): all but `true`, `does` and the other reserved relations the network reads.
    // The relations it adds (parts and demands) are numbered from `first_new`.
    let mut db = Db::new(store, program.relations.iter().map(|r| r.arity as usize));
    let first_new = db.rels.len();
    let (relaxed, new_rels) = if limits.demand {
        let full: Vec<bool> = (0..n)
            .map(|r| !dynamic[r] || program.reserved_of(r as RelId).is_some())
            .collect();
        let rewritten = super::demand::rewrite(&relaxed, &full, first_new as u32);
        (rewritten.rules, rewritten.new)
    } else {
        (relaxed, Vec::new())
    };
    for rel in &new_rels {
        db.rels.push(super::datalog::Relation::new(rel.arity));
        dynamic.push(true);
    }
    let is_magic = |rel: u32| {
        (rel as usize)
            .checked_sub(first_new)
            .and_then(|i| new_rels.get(i))
            .is_some_and(|r| r.part_of.is_none())
    };
    let n = db.rels.len();

    // Components of the relaxed program's dependency graph, in evaluation order.
    let order = gdl_check::scc::components_of_lists(&readers(&relaxed, n));
    let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, rule) in relaxed.iter().enumerate() {
        rules_of[rule.head.rel as usize].push(k);
    }

    // Static relations computed (exact), and relations whose component is done.
    let mut complete = vec![false; n];
    let mut done = vec![false; n];
    // Auxiliary relations that only speed up the fixpoint.
    let mut helpers: Vec<usize> = Vec::new();
    let mut tuples = 0usize;
    for members in order.topological() {
        let is_static = members.iter().all(|&m| !dynamic[m as usize]);
        if is_static {
            // Exact: negation only over complete relations.
            for &m in members {
                for &k in &rules_of[m as usize] {
                    for lit in &relaxed[k].body {
                        if let Lit::Neg(a) = lit
                            && !complete[a.rel as usize]
                        {
                            return Err(GroundError::SelfNegating(program.describe(a.rel)));
                        }
                    }
                }
            }
        }
        // The component's rules, decomposed with the sizes of the relations below it.
        let first_helper = db.rels.len();
        let mut comp_rules: Vec<FlatRule> = Vec::new();
        for &m in members {
            for &k in &rules_of[m as usize] {
                let known = |r: u32| done.get(r as usize).copied().unwrap_or(false);
                let rule = &relaxed[k];
                let anchor = matches!(rule.body.first(), Some(Lit::Pos(a)) if is_magic(a.rel));
                comp_rules.extend(decompose(
                    &mut db,
                    rule,
                    &mut dynamic,
                    &known,
                    &limits.budget,
                    anchor,
                    limits.demand,
                )?);
            }
        }
        let mut all_members: Vec<u32> = members.to_vec();
        all_members.extend(first_helper as u32..db.rels.len() as u32);
        helpers.extend(first_helper..db.rels.len());
        complete.resize(db.rels.len(), false);
        done.resize(db.rels.len(), false);
        let neg = |rel: u32| complete[rel as usize] && !dynamic[rel as usize];
        fixpoint(
            &mut db,
            &comp_rules,
            &all_members,
            &neg,
            &limits.budget,
            &mut tuples,
            None,
        )?;
        for &m in &all_members {
            complete[m as usize] = !dynamic[m as usize];
            done[m as usize] = true;
        }
    }
    // The atoms of a relation computed in parts are the union of its parts.
    for (i, rel) in new_rels.iter().enumerate() {
        let (part, Some(of)) = (first_new + i, rel.part_of) else {
            continue;
        };
        for t in 0..db.rels[part].len() {
            let tuple: smallvec::SmallVec<[TermId; 8]> =
                db.rels[part].tuple(t).iter().copied().collect();
            db.rels[of as usize].insert(&tuple);
        }
    }
    // The helpers, parts and magic relations have done their work; their tuples are not
    // needed.
    for h in helpers
        .into_iter()
        .chain(first_new..first_new + new_rels.len())
    {
        dynamic[h] = false;
        db.rels[h] = super::datalog::Relation::new(db.rels[h].arity);
    }

    // Split the rules with dynamic heads, then instantiate them.
    let split = split_dynamic_rules(
        &mut db,
        &rules,
        &mut dynamic,
        limits,
        program.relations.len(),
    )?;
    let (instances, lits) = instantiate(&mut db, &split, &dynamic, limits)?;
    Ok(assemble(db, dynamic, instances, &lits))
}

/// The rules with dynamic heads, split into parts (auxiliary relations first), each with
/// whether it is instantiated from its head's atoms: a rule of a relation of the program
/// is, with its head as the first literal of its body (instances of other heads are of no
/// use); the auxiliary relations of the split are enumerated in full. With demand, one of
/// their atoms may lack a negated atom that was never demanded, but only instances whose
/// head is an atom use an auxiliary atom, and those demand everything their bodies mention.
fn split_dynamic_rules(
    db: &mut Db,
    rules: &[FlatRule],
    dynamic: &mut Vec<bool>,
    limits: &Limits,
    program_rels: usize,
) -> Result<Vec<(FlatRule, bool)>, GroundError> {
    let mut split: Vec<(FlatRule, bool)> = Vec::new();
    for rule in rules {
        if !dynamic[rule.head.rel as usize] {
            continue;
        }
        for part in decompose(
            db,
            rule,
            dynamic,
            &|_| true,
            &limits.budget,
            false,
            limits.demand,
        )? {
            let from_head = (part.head.rel as usize) < program_rels;
            let part = if from_head {
                let mut body = vec![Lit::Pos(part.head.clone())];
                body.extend(part.body);
                FlatRule { body, ..part }
            } else {
                part
            };
            split.push((part, from_head));
        }
    }
    Ok(split)
}

/// A ground instance: its head's relation and tuple, and where its body's literals are.
type GroundInstance = (u32, u32, u32, u32);

/// A body literal of a ground instance: its relation, its tuple, whether it is negated.
type GroundLit = (u32, u32, bool);

/// Instantiates the split rules: the instances, and their body literals as (relation,
/// tuple, negated). Auxiliary relations get their tuples from their rules, which come
/// before the rules that use them.
fn instantiate(
    db: &mut Db,
    split: &[(FlatRule, bool)],
    dynamic: &[bool],
    limits: &Limits,
) -> Result<(Vec<GroundInstance>, Vec<GroundLit>), GroundError> {
    let mut instances: Vec<GroundInstance> = Vec::new();
    // Body literals as (relation, tuple, negated).
    let mut lits: Vec<GroundLit> = Vec::new();
    let static_neg = |rel: u32| !dynamic[rel as usize];
    let budget = &limits.budget;
    for (rule, from_head) in split {
        let from_head = *from_head;
        let skip = usize::from(from_head);
        // From the head: its atoms looked up on its ground subterms (a fact's one atom).
        let plan = db.plan_from(rule, from_head.then_some((0, false)), &static_neg)?;
        let head_rel = rule.head.rel;
        // Auxiliary heads seen for the first time: the instance and where the values of the
        // head's variables start in `head_values`.
        let head_vars = rule.head_vars();
        let mut heads: Vec<(usize, usize)> = Vec::new();
        let mut head_values: Vec<TermId> = Vec::new();
        db.enumerate(
            rule,
            &plan,
            (0, 0),
            &static_neg,
            budget,
            &mut |db, env, matched| {
                let head = if from_head {
                    matched[0]
                } else {
                    db.tuple_of(&rule.head, env).unwrap_or(u32::MAX)
                };
                let start = lits.len() as u32;
                for (i, lit) in rule.body.iter().enumerate().skip(skip) {
                    match lit {
                        Lit::Pos(a) if dynamic[a.rel as usize] => {
                            lits.push((a.rel, matched[i], false))
                        }
                        Lit::Neg(a) if dynamic[a.rel as usize] => {
                            if let Some(t) = db.tuple_of(a, env) {
                                lits.push((a.rel, t, true));
                            }
                        }
                        _ => {}
                    }
                }
                if head == u32::MAX {
                    heads.push((instances.len(), head_values.len()));
                    head_values.extend(head_vars.iter().map(|&v| env[v as usize]));
                }
                instances.push((head_rel, head, start, lits.len() as u32));
                instances.len() <= limits.max_rules && heads.len() <= limits.max_rules
            },
        )?;
        if instances.len() > limits.max_rules {
            return Err(GroundError::TooManyRules(limits.max_rules));
        }
        if !heads.is_empty() {
            let mut env = vec![super::datalog::UNBOUND; rule.vars as usize];
            for (k, at) in heads {
                for (j, &v) in head_vars.iter().enumerate() {
                    env[v as usize] = head_values[at + j];
                }
                let mut tuple: smallvec::SmallVec<[TermId; 8]> = smallvec::SmallVec::new();
                for p in rule.head.args.iter() {
                    tuple.push(db.build(p, &env));
                }
                let rel = &mut db.rels[head_rel as usize];
                rel.insert(&tuple);
                instances[k].1 = rel.find(&tuple).expect("just added");
            }
            if db.rels[head_rel as usize].len() as usize > budget.max_tuples {
                return Err(GroundError::Budget(Stop::TooManyTuples(budget.max_tuples)));
            }
        }
        super::datalog::check_budget(budget)?;
    }

    Ok((instances, lits))
}

/// The ground program: the atoms of the dynamic relations numbered, and the instances of
/// dynamic relations with their bodies as atoms.
fn assemble(
    db: Db,
    dynamic: Vec<bool>,
    instances: Vec<GroundInstance>,
    lits: &[GroundLit],
) -> Ground {
    // Atoms of the dynamic relations.
    let n = db.rels.len();
    let mut atom_base = vec![u32::MAX; n];
    let mut atoms = Vec::new();
    for r in 0..n {
        if dynamic[r] {
            atom_base[r] = atoms.len() as u32;
            for t in 0..db.rels[r].len() {
                atoms.push((r as RelId, t));
            }
        }
    }
    // Instances of static auxiliary relations are not needed: their tuples are exact.
    let mut body: Vec<GLit> = Vec::with_capacity(lits.len());
    let mut out = Vec::with_capacity(instances.len());
    for (rel, tuple, start, end) in instances {
        if !dynamic[rel as usize] {
            continue;
        }
        let from = body.len() as u32;
        for &(r, t, negated) in &lits[start as usize..end as usize] {
            body.push(GLit {
                atom: atom_base[r as usize] + t,
                negated,
            });
        }
        out.push(Instance {
            head: atom_base[rel as usize] + tuple,
            body: (from, body.len() as u32),
        });
    }
    Ground {
        db,
        dynamic,
        atom_base,
        atoms,
        instances: out,
        body,
    }
}

/// The ground atoms of a relation as terms `(name args…)`, for messages and tests.
#[cfg(test)]
pub(crate) fn atom_texts(g: &Ground, program: &Program, rel: RelId) -> Vec<String> {
    let r = &g.db.rels[rel as usize];
    let name = program.symbols.name(program.relations[rel as usize].name);
    let mut out: Vec<String> = (0..r.len())
        .map(|t| {
            let mut s = format!("({name}");
            for &a in r.tuple(t) {
                s.push(' ');
                g.db.store.write(&program.symbols, a, &mut s);
            }
            s.push(')');
            s
        })
        .collect();
    out.sort();
    out
}

/// Small limits for tests of grounding and of what is built on it.
#[cfg(test)]
pub(crate) fn test_limits(demand: bool) -> Limits {
    Limits {
        budget: Budget {
            max_tuples: 10_000,
            max_depth: 16,
            max_work: 1_000_000,
            deadline: None,
            cancel: None,
        },
        max_rules: 10_000,
        branch_limit: 64,
        demand,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grounded_with(text: &str, demand: bool) -> Result<(Ground, Program), GroundError> {
        let checked = gdl_check::check(text);
        assert!(checked.blocking_errors().next().is_none());
        let g = ground(&checked.program, TermStore::new(), &test_limits(demand))?;
        Ok((g, checked.program))
    }

    fn grounded(text: &str) -> (Ground, Program) {
        grounded_with(text, false).unwrap()
    }

    #[test]
    fn the_relaxed_fixpoint_finds_what_can_hold_and_no_more() {
        for demand in [false, true] {
            the_relaxed_fixpoint_finds(demand);
        }
    }

    fn the_relaxed_fixpoint_finds(demand: bool) {
        // A counter from 0 to 3 that `go` advances; `stop` is never legal, so never done.
        let (g, p) = grounded_with(
            "(role r) (init (n 0)) (succ 0 1) (succ 1 2) (succ 2 3)
             (<= (legal r go) (true (n ?x)) (succ ?x ?y))
             (<= (legal r stop) (true (n ?x)) (succ ?x ?y) (succ ?y ?x))
             (<= (next (n ?y)) (does r go) (true (n ?x)) (succ ?x ?y))
             (<= (next (stopped)) (does r stop))
             (<= terminal (true (n 3))) (<= (goal r 100) (true (n 3)))",
            demand,
        )
        .unwrap();
        let rel = |name: &str, arity| p.relation(name, arity).unwrap();
        assert_eq!(
            atom_texts(&g, &p, rel("true", 1)),
            [
                "(true (n 0))",
                "(true (n 1))",
                "(true (n 2))",
                "(true (n 3))"
            ]
        );
        assert_eq!(atom_texts(&g, &p, rel("does", 2)), ["(does r go)"]);
        assert!(g.dynamic[rel("legal", 2) as usize]);
        assert!(!g.dynamic[rel("succ", 2) as usize]);
        // `next` from `go` in each of the three states that have a successor.
        let next = rel("next", 1) as usize;
        let from_next = g
            .instances
            .iter()
            .filter(|i| g.atoms[i.head as usize].0 as usize == next)
            .count();
        assert_eq!(from_next, 3);
    }

    #[test]
    fn static_relations_are_exact_with_negation() {
        let (g, p) = grounded(
            "(role r) (num 1) (num 2) (num 3) (small 1)
             (<= (big ?x) (num ?x) (not (small ?x)))
             (<= (legal r (pick ?x)) (big ?x) (true on))
             (init on) (<= (next on) (true on)) (<= terminal (true off)) (<= (goal r 0) (true on))",
        );
        let big = p.relation("big", 1).unwrap();
        assert!(!g.dynamic[big as usize]);
        assert_eq!(atom_texts(&g, &p, big), ["(big 2)", "(big 3)"]);
        assert_eq!(
            atom_texts(&g, &p, p.relation("legal", 2).unwrap()),
            ["(legal r (pick 2))", "(legal r (pick 3))"]
        );
    }

    #[test]
    fn an_infinite_domain_stops_at_the_depth_budget() {
        let checked = gdl_check::check(
            "(role r) (init (n 0)) (<= (legal r go) (true (n ?x)))
             (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (true (n (s (s 0)))))
             (<= (goal r 0) (true (n ?x)))",
        );
        let error = ground(&checked.program, TermStore::new(), &test_limits(false))
            .err()
            .expect("refused");
        assert!(
            matches!(error, GroundError::Budget(Stop::TooDeep(16))),
            "{error}"
        );
    }

    /// A game whose relation `line` can hold for 30^3 triples, of which the rules ask only for
    /// those with three equal numbers, each when it is the state's.
    const DEMANDED: &str = "(role r) (init (at 0))
         (<= (legal r (go ?x)) (true (at ?x)) (line ?x ?x ?x))
         (<= (line ?a ?b ?c) (true (at ?a)) (num ?a) (num ?b) (num ?c))
         (<= (next (at ?y)) (does r (go ?x)) (succ ?x ?y))
         (<= terminal (true (at 29))) (<= (goal r 100) (true (at 29)))
         (num 0) (num 1) (num 2) (num 3) (num 4) (num 5) (num 6) (num 7) (num 8) (num 9)
         (num 10) (num 11) (num 12) (num 13) (num 14) (num 15) (num 16) (num 17) (num 18)
         (num 19) (num 20) (num 21) (num 22) (num 23) (num 24) (num 25) (num 26) (num 27)
         (num 28) (num 29)
         (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7)
         (succ 7 8) (succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12) (succ 12 13)
         (succ 13 14) (succ 14 15) (succ 15 16) (succ 16 17) (succ 17 18) (succ 18 19)
         (succ 19 20) (succ 20 21) (succ 21 22) (succ 22 23) (succ 23 24) (succ 24 25)
         (succ 25 26) (succ 26 27) (succ 27 28) (succ 28 29)";

    #[test]
    fn demand_computes_a_derived_relation_only_where_the_rules_ask_for_it() {
        // Everything that can hold: 30 states × 30 × 30 atoms of `line`, over the budget.
        let error = grounded_with(DEMANDED, false)
            .err()
            .expect("over the budget");
        assert!(error.demand_may_help(), "{error}");
        let (g, p) = grounded_with(DEMANDED, true).unwrap();
        let line = atom_texts(&g, &p, p.relation("line", 3).unwrap());
        let expected: Vec<String> = (0..30).map(|x| format!("(line {x} {x} {x})")).collect();
        let mut sorted = line.clone();
        sorted.sort();
        let mut want = expected.clone();
        want.sort();
        assert_eq!(sorted, want);
        // The parts and demands added on the way are not atoms.
        assert!(
            g.atoms
                .iter()
                .all(|&(rel, _)| (rel as usize) < p.relations.len())
        );
    }

    #[test]
    fn a_negated_call_is_demanded_with_every_variable_bound() {
        // `blocked` is only ever asked for negated, for the squares next to the state's.
        let text = "(role r) (init (at 0)) (num 0) (num 1) (num 2) (succ 0 1) (succ 1 2)
             (<= (blocked ?x ?y) (true (wall ?x)) (num ?y))
             (<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y) (not (blocked ?y ?y)))
             (<= (next (at ?y)) (does r (go ?y)))
             (<= (next (wall ?x)) (true (at ?x)))
             (<= terminal (true (at 2))) (<= (goal r 100) (true (at 2)))";
        let (g, p) = grounded_with(text, true).unwrap();
        let blocked = p.relation("blocked", 2).unwrap();
        assert_eq!(
            atom_texts(&g, &p, blocked),
            ["(blocked 1 1)", "(blocked 2 2)"]
        );
        // Everything that can hold: 3 walls × 3 numbers.
        let (g, p) = grounded_with(text, false).unwrap();
        assert_eq!(atom_texts(&g, &p, blocked).len(), 9);
    }

    /// A small hex `transfer`: group `?k` takes in a stone placed next to one of its cells by
    /// the group's owner, `body` the rule's body.
    fn transfer_game(body: &str) -> String {
        format!(
            "(role red) (role blue) (init (control red))
             (cell 1) (cell 2) (cell 3) (cell 4) (group a) (group b) (group c)
             (adj 1 2) (adj 2 1) (adj 2 3) (adj 3 2) (adj 3 4) (adj 4 3)
             (<= (legal ?r (place ?x)) (role ?r) (cell ?x))
             (<= (next (owner ?k ?r)) (group ?k) (true (control ?r)))
             (<= (next (conn ?k ?m)) (group ?k) (does ?r (place ?m)))
             (<= (transfer ?k) {body})
             (<= (next (merged ?k)) (transfer ?k))
             (<= terminal (true (merged a))) (<= (goal ?r 0) (role ?r))"
        )
    }

    #[test]
    fn a_rule_is_split_where_the_auxiliary_relation_is_smallest() {
        // Once the placement (`?x`) is eliminated, leaving (role, cell), the role or the cell
        // can go next. Their joins are estimated the same (the auxiliary relation just made is
        // not computed yet); eliminating the cell leaves (group, role), 6 atoms, where the
        // role would leave (group, cell), 12, and a network whose gates watch every cell of
        // every group for every placement (hex's, slower: docs/benchmarks.md, "How the speed
        // came about", b5cac1a).
        // Whichever variable comes first (the tie went to the first before), the cell goes.
        for body in [
            "(does ?r (place ?x)) (true (owner ?k ?r)) (true (conn ?k ?m)) (adj ?x ?m)",
            "(true (conn ?k ?m)) (adj ?x ?m) (does ?r (place ?x)) (true (owner ?k ?r))",
        ] {
            let (g, p) = grounded(&transfer_game(body));
            let mut aux: Vec<(usize, u32)> = (p.relations.len()..g.db.rels.len())
                .filter(|&r| g.dynamic[r])
                .map(|r| (g.db.rels[r].arity, g.db.rels[r].len()))
                .collect();
            aux.sort_unstable();
            // The cells placed on (by either role, for `conn`); for `transfer`, (role, cell)
            // next to a placement, then (group, role).
            assert_eq!(aux, [(1, 4), (2, 6), (2, 8)], "{body}");
        }
    }

    #[test]
    fn facts_of_a_dynamic_relation_are_instantiated_by_lookup() {
        // 5,000 facts of `f`, dynamic through its one rule: each fact's instance is found by
        // looking its atom up, not by trying all 5,000 (25 million tries, over the budget).
        let mut text = String::from(
            "(role r) (init (on 0)) (<= (f ?x) (true (on ?x)))
             (<= (legal r (go ?x)) (f ?x)) (<= (next (on ?x)) (does r (go ?x)))
             (<= terminal (true (on 1))) (<= (goal r 100) (true (on 1)))",
        );
        for k in 0..5000 {
            text.push_str(&format!(" (f {k})"));
        }
        let checked = gdl_check::check(&text);
        let limits = Limits {
            budget: Budget {
                max_tuples: 100_000,
                max_work: 1_000_000,
                ..test_limits(false).budget
            },
            max_rules: 100_000,
            ..test_limits(false)
        };
        let g = ground(&checked.program, TermStore::new(), &limits).unwrap();
        let f = checked.program.relation("f", 1).unwrap();
        assert_eq!(atom_texts(&g, &checked.program, f).len(), 5000);
    }
}
