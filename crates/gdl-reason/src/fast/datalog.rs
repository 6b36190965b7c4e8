//! A bottom-up Datalog engine over ground terms, the grounder's workhorse: relations are sets
//! of tuples of [`TermId`]s with hash indexes built on demand, and a rule is evaluated by
//! nested-loop joins in an order chosen from the relations' sizes. Terms may nest (function
//! symbols), so matching decomposes stored terms.

use std::hash::{BuildHasher, Hasher};

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::normal::{FlatRule, Lit, PAtom, Pat};
use crate::terms::{Term, TermId, TermStore};

/// The value of an unbound variable.
pub(crate) const UNBOUND: TermId = TermId(u32::MAX);

/// Index of a tuple in its relation.
pub(crate) type TupleId = u32;

fn hash_terms(terms: impl Iterator<Item = TermId>) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    for t in terms {
        h.write_u32(t.0);
    }
    h.finish()
}

/// A hash index of a relation on some argument positions.
struct Index {
    positions: Box<[usize]>,
    map: FxHashMap<u64, Vec<TupleId>>,
    /// Tuples `0..upto` are indexed.
    upto: u32,
}

/// A set of tuples.
#[derive(Default)]
pub(crate) struct Relation {
    pub arity: usize,
    data: Vec<TermId>,
    len: u32,
    set: HashTable<TupleId>,
    indexes: Vec<Index>,
    /// Distinct values at each position, with the length they were counted at.
    distinct: Vec<(u32, u32)>,
}

impl Relation {
    pub fn new(arity: usize) -> Relation {
        Relation {
            arity,
            distinct: vec![(0, 0); arity],
            ..Relation::default()
        }
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn tuple(&self, id: TupleId) -> &[TermId] {
        let start = id as usize * self.arity;
        &self.data[start..start + self.arity]
    }

    fn hash_of(tuple: &[TermId]) -> u64 {
        hash_terms(tuple.iter().copied())
    }

    /// The tuple's id, if it is in the relation.
    pub fn find(&self, tuple: &[TermId]) -> Option<TupleId> {
        let (data, arity) = (&self.data, self.arity);
        self.set
            .find(Self::hash_of(tuple), |&id| {
                &data[id as usize * arity..(id as usize + 1) * arity] == tuple
            })
            .copied()
    }

    /// Adds a tuple; returns whether it is new.
    pub fn insert(&mut self, tuple: &[TermId]) -> bool {
        debug_assert_eq!(tuple.len(), self.arity);
        if self.find(tuple).is_some() {
            return false;
        }
        let id = self.len;
        self.data.extend_from_slice(tuple);
        self.len += 1;
        let (data, arity) = (&self.data, self.arity);
        self.set.insert_unique(Self::hash_of(tuple), id, |&other| {
            Self::hash_of(&data[other as usize * arity..(other as usize + 1) * arity])
        });
        true
    }

    /// The slot of the index on `positions`, created if needed and brought up to date.
    fn index(&mut self, positions: &[usize]) -> usize {
        let slot = match self.indexes.iter().position(|i| &*i.positions == positions) {
            Some(slot) => slot,
            None => {
                self.indexes.push(Index {
                    positions: positions.into(),
                    map: FxHashMap::default(),
                    upto: 0,
                });
                self.indexes.len() - 1
            }
        };
        let index = &mut self.indexes[slot];
        for id in index.upto..self.len {
            let start = id as usize * self.arity;
            let tuple = &self.data[start..start + self.arity];
            let key = hash_terms(index.positions.iter().map(|&p| tuple[p]));
            index.map.entry(key).or_default().push(id);
        }
        index.upto = self.len;
        slot
    }

    /// Distinct values at a position (counted again when the relation has doubled).
    pub fn distinct_at(&mut self, position: usize) -> u32 {
        let (counted_at, count) = self.distinct[position];
        if self.len == 0 {
            return 1;
        }
        if counted_at == 0 || self.len >= counted_at * 2 {
            let mut seen = rustc_hash::FxHashSet::default();
            for id in 0..self.len {
                seen.insert(self.tuple(id)[position]);
            }
            self.distinct[position] = (self.len, seen.len() as u32);
            return seen.len() as u32;
        }
        count.max(1)
    }
}

/// The store of terms and relations.
pub(crate) struct Db {
    pub store: TermStore,
    pub rels: Vec<Relation>,
    /// Tuples tried by every enumeration so far (the work budget counts them).
    work: std::cell::Cell<u64>,
}

/// Why evaluation stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// More tuples than the budget allows.
    TooManyTuples(usize),
    /// A derived term nested deeper than the budget allows (the game's domain is likely
    /// infinite).
    TooDeep(u32),
    /// The time budget ran out.
    OutOfTime,
    /// The work budget (tuples tried while joining) ran out.
    TooMuchWork(u64),
    /// A rule has a negation or `distinct` with a variable that no positive literal binds
    /// (the checker reports these, E001; this keeps the engine from evaluating one).
    Unsafe,
}

/// Budgets of a grounding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    pub max_tuples: usize,
    pub max_depth: u32,
    /// Tuples tried while joining, in all: a measure of work that, unlike time, gives the
    /// same verdict on every machine.
    pub max_work: u64,
    pub deadline: Option<std::time::Instant>,
}

/// One step of a join plan.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Match tuples of a positive literal: all of them, only those in the delta range, or
    /// those an index finds from the positions already bound.
    Pos {
        lit: usize,
        delta: bool,
        /// Positions bound when this step runs (the index key).
        key: Box<[usize]>,
        index: usize,
    },
    /// Check a negative literal, a `distinct` or an equality (all its variables bound).
    Filter { lit: usize },
}

/// An evaluation order for a rule body.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub steps: Vec<Step>,
}

/// What the enumeration does with negative literals of a relation: check them against the
/// relation (it is complete), or leave them to the caller.
pub(crate) trait NegMode {
    fn check(&self, rel: u32) -> bool;
}

impl<F: Fn(u32) -> bool> NegMode for F {
    fn check(&self, rel: u32) -> bool {
        self(rel)
    }
}

impl Db {
    pub fn new(store: TermStore, arities: impl Iterator<Item = usize>) -> Db {
        Db {
            store,
            rels: arities.map(Relation::new).collect(),
            work: std::cell::Cell::new(0),
        }
    }

    /// A join order for `rule`: the `delta` literal first (if any), then repeatedly the
    /// positive literal expected to match fewest tuples given what is bound, each filter as
    /// soon as its variables are bound. Indexes the plan needs are built.
    pub fn plan(
        &mut self,
        rule: &FlatRule,
        delta: Option<usize>,
        neg: &impl NegMode,
    ) -> Result<Plan, Stop> {
        let mut bound = vec![false; rule.vars as usize];
        let mut placed = vec![false; rule.body.len()];
        let mut steps = Vec::with_capacity(rule.body.len());
        let bind = |atom: &PAtom, bound: &mut [bool]| {
            atom.for_each_var(&mut |v| bound[v as usize] = true);
        };
        let place_pos =
            |db: &mut Db, lit: usize, delta: bool, bound: &mut Vec<bool>, steps: &mut Vec<Step>| {
                let Lit::Pos(atom) = &rule.body[lit] else {
                    unreachable!("a positive literal")
                };
                let key: Box<[usize]> = if delta {
                    Box::new([])
                } else {
                    (0..atom.args.len())
                        .filter(|&p| atom.args[p].bound_by(bound))
                        .collect()
                };
                let index = if key.is_empty() {
                    usize::MAX
                } else {
                    db.rels[atom.rel as usize].index(&key)
                };
                steps.push(Step::Pos {
                    lit,
                    delta,
                    key,
                    index,
                });
                bind(atom, bound);
            };
        if let Some(d) = delta {
            place_pos(self, d, true, &mut bound, &mut steps);
            placed[d] = true;
        }
        loop {
            // Filters whose variables are bound.
            for (i, lit) in rule.body.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                let ready = match lit {
                    Lit::Pos(_) => false,
                    Lit::Neg(a) => !neg.check(a.rel) || lit.bound_by(&bound),
                    Lit::Distinct(..) | Lit::Same(..) => lit.bound_by(&bound),
                };
                if ready {
                    placed[i] = true;
                    if let Lit::Neg(a) = lit
                        && !neg.check(a.rel)
                    {
                        continue;
                    }
                    steps.push(Step::Filter { lit: i });
                }
            }
            // The most selective positive literal.
            let mut best: Option<(f64, usize)> = None;
            for (i, lit) in rule.body.iter().enumerate() {
                let Lit::Pos(atom) = lit else { continue };
                if placed[i] {
                    continue;
                }
                let rel = &mut self.rels[atom.rel as usize];
                let mut estimate = rel.len() as f64;
                for (p, arg) in atom.args.iter().enumerate() {
                    if arg.bound_by(&bound) {
                        estimate /= rel.distinct_at(p) as f64;
                    }
                }
                if best.is_none_or(|(e, _)| estimate < e) {
                    best = Some((estimate, i));
                }
            }
            let Some((_, i)) = best else { break };
            placed[i] = true;
            place_pos(self, i, false, &mut bound, &mut steps);
        }
        // A filter left is unsafe (a variable no positive literal binds).
        if placed.iter().any(|&p| !p) {
            return Err(Stop::Unsafe);
        }
        Ok(Plan { steps })
    }

    /// Calls `found` for every binding of the rule's variables that satisfies the body, with
    /// the tuple each positive literal matched (`u32::MAX` for other literals). A `delta` step
    /// matches the tuples `delta.0..delta.1` of its relation.
    ///
    /// `found` returns whether to go on; the enumeration also stops when the budget's time
    /// runs out.
    pub fn enumerate(
        &self,
        rule: &FlatRule,
        plan: &Plan,
        delta: (u32, u32),
        neg: &impl NegMode,
        budget: &Budget,
        found: &mut impl FnMut(&Db, &[TermId], &[TupleId]) -> bool,
    ) -> Result<(), Stop> {
        let mut run = Run {
            db: self,
            rule,
            plan,
            delta,
            env: vec![UNBOUND; rule.vars as usize],
            trail: Vec::new(),
            matched: vec![u32::MAX; rule.body.len()],
            key: Vec::new(),
            tries: 0,
            budget,
            stop: None,
        };
        run.step(0, neg, found);
        self.work.set(self.work.get() + run.tries);
        match run.stop {
            Some(Stopped::Time) => Err(Stop::OutOfTime),
            Some(Stopped::Work) => Err(Stop::TooMuchWork(budget.max_work)),
            Some(Stopped::Caller) | None => Ok(()),
        }
    }

    /// Whether the atom, its variables bound, is already a tuple of its relation.
    pub fn known(&self, atom: &PAtom, env: &[TermId]) -> bool {
        self.tuple_of(atom, env).is_some()
    }

    /// The tuple of an atom whose variables are bound, if it is in its relation.
    pub fn tuple_of(&self, atom: &PAtom, env: &[TermId]) -> Option<TupleId> {
        let mut tuple: smallvec::SmallVec<[TermId; 8]> = smallvec::SmallVec::new();
        for p in atom.args.iter() {
            tuple.push(resolve(&self.store, p, env)?);
        }
        self.rels[atom.rel as usize].find(&tuple)
    }

    /// The ground term of a pattern whose variables are bound, created if new.
    pub fn build(&mut self, pat: &Pat, env: &[TermId]) -> TermId {
        match pat {
            Pat::Var(v) => env[*v as usize],
            Pat::Ground(g) => *g,
            Pat::Fn(f, args) => {
                let ids: smallvec::SmallVec<[TermId; 8]> =
                    args.iter().map(|a| self.build(a, env)).collect();
                self.store.function(*f, &ids)
            }
        }
    }
}

enum Stopped {
    Time,
    Work,
    Caller,
}

/// The state of one enumeration.
struct Run<'a> {
    /// Tuples tried, and when to give up.
    tries: u64,
    budget: &'a Budget,
    stop: Option<Stopped>,
    db: &'a Db,
    rule: &'a FlatRule,
    plan: &'a Plan,
    delta: (u32, u32),
    env: Vec<TermId>,
    trail: Vec<u32>,
    matched: Vec<TupleId>,
    key: Vec<TermId>,
}

/// The existing term of a bound pattern, or `None` when no such term exists (so it is in no
/// relation).
fn resolve(store: &TermStore, pat: &Pat, env: &[TermId]) -> Option<TermId> {
    match pat {
        Pat::Var(v) => Some(env[*v as usize]),
        Pat::Ground(g) => Some(*g),
        Pat::Fn(f, args) => {
            let mut ids: smallvec::SmallVec<[TermId; 8]> = smallvec::SmallVec::new();
            for a in args.iter() {
                ids.push(resolve(store, a, env)?);
            }
            store.find(*f, Some(&ids))
        }
    }
}

/// Whether a bound pattern denotes the ground term `t`.
fn pat_is(store: &TermStore, pat: &Pat, env: &[TermId], t: TermId) -> bool {
    match pat {
        Pat::Var(v) => env[*v as usize] == t,
        Pat::Ground(g) => *g == t,
        Pat::Fn(f, args) => match store.get(t) {
            Term::Fn(g, targs) if g == *f && targs.len() == args.len() => args
                .iter()
                .zip(targs)
                .all(|(a, &ta)| pat_is(store, a, env, ta)),
            _ => false,
        },
    }
}

/// Whether two bound patterns denote the same term.
fn same(store: &TermStore, a: &Pat, b: &Pat, env: &[TermId]) -> bool {
    match (a, b) {
        (Pat::Var(v), other) | (other, Pat::Var(v)) => pat_is(store, other, env, env[*v as usize]),
        (Pat::Ground(g), other) | (other, Pat::Ground(g)) => pat_is(store, other, env, *g),
        (Pat::Fn(f, xs), Pat::Fn(g, ys)) => {
            f == g
                && xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys.iter())
                    .all(|(x, y)| same(store, x, y, env))
        }
    }
}

impl Run<'_> {
    /// Matches a pattern against a term, binding variables (recorded on the trail).
    fn unify(&mut self, pat: &Pat, t: TermId) -> bool {
        match pat {
            Pat::Var(v) => {
                let slot = &mut self.env[*v as usize];
                if *slot == UNBOUND {
                    *slot = t;
                    self.trail.push(*v);
                    true
                } else {
                    *slot == t
                }
            }
            Pat::Ground(g) => *g == t,
            Pat::Fn(f, args) => match self.db.store.get(t) {
                Term::Fn(g, targs) if g == *f && targs.len() == args.len() => {
                    args.iter().zip(targs).all(|(a, &ta)| self.unify(a, ta))
                }
                _ => false,
            },
        }
    }

    fn undo(&mut self, mark: usize) {
        for v in self.trail.drain(mark..) {
            self.env[v as usize] = UNBOUND;
        }
    }

    fn try_tuple(
        &mut self,
        atom: &PAtom,
        lit: usize,
        id: TupleId,
        next: usize,
        neg: &impl NegMode,
        found: &mut impl FnMut(&Db, &[TermId], &[TupleId]) -> bool,
    ) {
        self.tries += 1;
        if self.tries & 0xFFF == 0 {
            if self.db.work.get() + self.tries > self.budget.max_work {
                self.stop = Some(Stopped::Work);
            } else if let Some(d) = self.budget.deadline
                && std::time::Instant::now() > d
            {
                self.stop = Some(Stopped::Time);
            }
        }
        if self.stop.is_some() {
            return;
        }
        let mark = self.trail.len();
        let tuple = self.db.rels[atom.rel as usize].tuple(id);
        let ok = atom.args.iter().zip(tuple).all(|(p, &t)| self.unify(p, t));
        if ok {
            self.matched[lit] = id;
            self.step(next, neg, found);
        }
        self.undo(mark);
    }

    fn step(
        &mut self,
        at: usize,
        neg: &impl NegMode,
        found: &mut impl FnMut(&Db, &[TermId], &[TupleId]) -> bool,
    ) {
        let Some(step) = self.plan.steps.get(at) else {
            if !found(self.db, &self.env, &self.matched) {
                self.stop = Some(Stopped::Caller);
            }
            return;
        };
        match step {
            Step::Filter { lit } => {
                let store = &self.db.store;
                let env = &self.env;
                let ok = match &self.rule.body[*lit] {
                    Lit::Neg(atom) => self.db.tuple_of(atom, env).is_none(),
                    Lit::Distinct(a, b) => !same(store, a, b, env),
                    Lit::Same(a, b) => same(store, a, b, env),
                    Lit::Pos(_) => unreachable!("positive literals are matched"),
                };
                if ok {
                    self.step(at + 1, neg, found);
                }
            }
            Step::Pos {
                lit,
                delta,
                key,
                index,
            } => {
                let Lit::Pos(atom) = &self.rule.body[*lit] else {
                    unreachable!("a positive literal")
                };
                let rel = &self.db.rels[atom.rel as usize];
                if *delta {
                    for id in self.delta.0..self.delta.1 {
                        self.try_tuple(atom, *lit, id, at + 1, neg, found);
                    }
                } else if key.is_empty() {
                    for id in 0..rel.len() {
                        self.try_tuple(atom, *lit, id, at + 1, neg, found);
                    }
                } else {
                    self.key.clear();
                    for &p in key.iter() {
                        match resolve(&self.db.store, &atom.args[p], &self.env) {
                            Some(t) => self.key.push(t),
                            None => return,
                        }
                    }
                    let hash = hash_terms(self.key.iter().copied());
                    let Some(ids) = rel.indexes[*index].map.get(&hash) else {
                        return;
                    };
                    for &id in ids {
                        self.try_tuple(atom, *lit, id, at + 1, neg, found);
                    }
                }
            }
        }
    }
}

/// Semi-naive evaluation of `rules` (the rules of one component, whose head relations are
/// `members`) to their fixpoint. Negative literals are checked where `neg` says so.
pub(crate) fn fixpoint(
    db: &mut Db,
    rules: &[&FlatRule],
    members: &[u32],
    neg: &impl NegMode,
    budget: &Budget,
    tuples: &mut usize,
) -> Result<(), Stop> {
    let is_member = |rel: u32| members.contains(&rel);
    let recursive = rules.iter().any(|r| {
        r.body
            .iter()
            .any(|l| matches!(l, Lit::Pos(a) if is_member(a.rel)))
    });
    // Where each member's tuples of the last round begin.
    let mut delta_from: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
    let mut first = true;
    // The values of each rule's head variables, for the heads not yet known.
    let head_vars: Vec<Vec<u32>> = rules
        .iter()
        .map(|r| {
            let mut vars = Vec::new();
            r.head.for_each_var(&mut |v| {
                if !vars.contains(&v) {
                    vars.push(v)
                }
            });
            vars
        })
        .collect();
    loop {
        // The heads derived in this round that are not known yet, each once: the rule and
        // where its head variables' values start in `values`.
        let mut derived: Vec<(usize, usize)> = Vec::new();
        let mut values: Vec<TermId> = Vec::new();
        let mut seen: HashTable<u32> = HashTable::new();
        for (k, rule) in rules.iter().enumerate() {
            let width = head_vars[k].len();
            let mut heads = |db: &Db, env: &[TermId], _: &[TupleId]| {
                if db.known(&rule.head, env) {
                    return true;
                }
                let key = head_vars[k].iter().map(|&v| env[v as usize]);
                let hash = hash_terms(key.clone().chain(std::iter::once(TermId(k as u32))));
                let same = |&d: &u32| {
                    let (dk, at) = derived[d as usize];
                    dk == k && values[at..at + width].iter().copied().eq(key.clone())
                };
                if seen.find(hash, same).is_none() {
                    let at = values.len();
                    values.extend(key);
                    derived.push((k, at));
                    let d = (derived.len() - 1) as u32;
                    let (derived, values) = (&derived, &values);
                    seen.insert_unique(hash, d, |&d| {
                        let (dk, at) = derived[d as usize];
                        let width = head_vars[dk].len();
                        hash_terms(
                            values[at..at + width]
                                .iter()
                                .copied()
                                .chain(std::iter::once(TermId(dk as u32))),
                        )
                    });
                }
                // Derived heads count against the budget before they are added.
                *tuples + derived.len() <= budget.max_tuples
            };
            if first {
                check_time(budget)?;
                let plan = db.plan(rule, None, neg)?;
                db.enumerate(rule, &plan, (0, 0), neg, budget, &mut heads)?;
            } else {
                for (i, lit) in rule.body.iter().enumerate() {
                    let Lit::Pos(atom) = lit else { continue };
                    let Some(&range) = delta_from.get(&atom.rel) else {
                        continue;
                    };
                    if range.0 == range.1 {
                        continue;
                    }
                    check_time(budget)?;
                    let plan = db.plan(rule, Some(i), neg)?;
                    db.enumerate(rule, &plan, range, neg, budget, &mut heads)?;
                }
            }
            check_time(budget)?;
        }
        if *tuples + derived.len() > budget.max_tuples {
            return Err(Stop::TooManyTuples(budget.max_tuples));
        }
        first = false;
        let before: Vec<(u32, u32)> = members
            .iter()
            .map(|&m| (m, db.rels[m as usize].len()))
            .collect();
        let mut env: Vec<TermId> = Vec::new();
        for (k, at) in derived {
            let rule = rules[k];
            env.clear();
            env.resize(rule.vars as usize, UNBOUND);
            for (j, &v) in head_vars[k].iter().enumerate() {
                env[v as usize] = values[at + j];
            }
            let mut tuple: smallvec::SmallVec<[TermId; 8]> = smallvec::SmallVec::new();
            for p in rule.head.args.iter() {
                let t = db.build(p, &env);
                if db.store.depth(t) > budget.max_depth {
                    return Err(Stop::TooDeep(budget.max_depth));
                }
                tuple.push(t);
            }
            if db.rels[rule.head.rel as usize].insert(&tuple) {
                *tuples += 1;
                if *tuples > budget.max_tuples {
                    return Err(Stop::TooManyTuples(budget.max_tuples));
                }
            }
        }
        if !recursive {
            return Ok(());
        }
        let mut grew = false;
        delta_from.clear();
        for (m, len) in before {
            let now = db.rels[m as usize].len();
            grew |= now > len;
            delta_from.insert(m, (len, now));
        }
        if !grew {
            return Ok(());
        }
    }
}

pub(crate) fn check_time(budget: &Budget) -> Result<(), Stop> {
    match budget.deadline {
        Some(d) if std::time::Instant::now() > d => Err(Stop::OutOfTime),
        _ => Ok(()),
    }
}
