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

/// No tuple (the end of an index's list).
const NONE: TupleId = u32::MAX;

fn hash_terms(terms: impl Iterator<Item = TermId>) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    for t in terms {
        h.write_u32(t.0);
    }
    h.finish()
}

/// Where a subterm is in a tuple: the argument position, then the argument of each nested
/// function term on the way down.
pub(crate) type Path = Box<[u8]>;

/// The subterm of a tuple at `path`, if the tuple's terms have that shape.
fn subterm(store: &TermStore, tuple: &[TermId], path: &[u8]) -> Option<TermId> {
    let mut t = tuple[path[0] as usize];
    for &i in &path[1..] {
        match store.get(t) {
            Term::Fn(_, args) => t = *args.get(i as usize)?,
            _ => return None,
        }
    }
    Some(t)
}

/// The subpattern of an atom's arguments at `path`.
pub(crate) fn pat_at<'a>(args: &'a [Pat], path: &[u8]) -> &'a Pat {
    let mut p = &args[path[0] as usize];
    for &i in &path[1..] {
        match p {
            Pat::Fn(_, sub) => p = &sub[i as usize],
            _ => unreachable!("a path into a function term"),
        }
    }
    p
}

/// The largest subpatterns of an atom's arguments whose variables are all `bound`, as paths
/// (an argument such as `(cell ?x ?y ?p)` with `?x` and `?y` bound gives two).
pub(crate) fn bound_paths(args: &[Pat], bound: &impl Fn(u32) -> bool) -> Vec<Path> {
    fn walk(p: &Pat, path: &mut Vec<u8>, bound: &impl Fn(u32) -> bool, out: &mut Vec<Path>) {
        let mut all = true;
        p.for_each_var(&mut |v| all &= bound(v));
        if all {
            out.push(path.as_slice().into());
        } else if let Pat::Fn(_, sub) = p {
            // Deeper than this, or wider, a path is not worth its cost.
            if path.len() < 4 && sub.len() <= usize::from(u8::MAX) {
                for (i, q) in sub.iter().enumerate() {
                    path.push(i as u8);
                    walk(q, path, bound, out);
                    path.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut path = Vec::new();
    for (k, p) in args.iter().enumerate().take(usize::from(u8::MAX)) {
        path.push(k as u8);
        walk(p, &mut path, bound, &mut out);
        path.pop();
    }
    out
}

/// A hash index of a relation on some subterms of its tuples (tuples without such subterms
/// are left out: no pattern with them can match them).
struct Index {
    paths: Box<[Path]>,
    /// The first and last tuple with each key's hash; `next` links each tuple to the next
    /// with the same hash, in the order added (lists in one allocation, kept when cleared).
    map: FxHashMap<u64, (TupleId, TupleId)>,
    next: Vec<TupleId>,
    /// Tuples `0..upto` are indexed.
    upto: u32,
}

/// What a table of tuples keeps of a tuple's hash beside it: both halves folded into one.
fn short(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// The hash a table of tuples places an entry by, from what the entry keeps ([`short`]):
/// growing the table rehashes from what each entry holds, without reading its tuple (growing
/// tables, most of it hashing tuples again, was a large part of a grounding run to the atom
/// budget: docs/benchmarks.md, "The join tier"), at 4 bytes more an entry.
fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A set of tuples.
#[derive(Default)]
pub(crate) struct Relation {
    pub arity: usize,
    data: Vec<TermId>,
    len: u32,
    /// Each tuple with its short hash (see [`spread`]).
    set: HashTable<(u32, TupleId)>,
    indexes: Vec<Index>,
    /// Distinct values at each path, with the length they were counted at.
    distinct: FxHashMap<Path, (u32, u32)>,
}

impl Relation {
    pub fn new(arity: usize) -> Relation {
        Relation {
            arity,
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
        self.find_short(tuple, short(Self::hash_of(tuple)))
    }

    /// [`Relation::find`], given the tuple's short hash.
    fn find_short(&self, tuple: &[TermId], h: u32) -> Option<TupleId> {
        let (data, arity) = (&self.data, self.arity);
        self.set
            .find(spread(h), |&(kept, id)| {
                kept == h && &data[id as usize * arity..(id as usize + 1) * arity] == tuple
            })
            .map(|&(_, id)| id)
    }

    /// Adds a tuple; returns whether it is new.
    pub fn insert(&mut self, tuple: &[TermId]) -> bool {
        debug_assert_eq!(tuple.len(), self.arity);
        let h = short(Self::hash_of(tuple));
        if self.find_short(tuple, h).is_some() {
            return false;
        }
        let id = self.len;
        self.data.extend_from_slice(tuple);
        self.len += 1;
        self.set
            .insert_unique(spread(h), (h, id), |&(kept, _)| spread(kept));
        true
    }

    /// The slot of the index on `paths`, created if needed and brought up to date.
    fn index(&mut self, paths: &[Path], store: &TermStore) -> usize {
        let slot = match self.indexes.iter().position(|i| &*i.paths == paths) {
            Some(slot) => slot,
            None => {
                self.indexes.push(Index {
                    paths: paths.into(),
                    map: FxHashMap::default(),
                    next: Vec::new(),
                    upto: 0,
                });
                self.indexes.len() - 1
            }
        };
        self.update(slot, store);
        slot
    }

    /// Brings every index up to date with the tuples added since it was last used.
    pub fn refresh(&mut self, store: &TermStore) {
        for slot in 0..self.indexes.len() {
            self.update(slot, store);
        }
    }

    /// Empties the relation, keeping its indexes' definitions (so that plans that use them stay
    /// valid) and its allocations.
    pub fn clear(&mut self) {
        if self.len == 0 {
            // Nothing to forget (and clearing a table that once grew is not free).
            return;
        }
        self.data.clear();
        self.len = 0;
        self.set.clear();
        for index in &mut self.indexes {
            index.map.clear();
            index.next.clear();
            index.upto = 0;
        }
        self.distinct.clear();
    }

    fn update(&mut self, slot: usize, store: &TermStore) {
        let index = &mut self.indexes[slot];
        if index.upto == self.len {
            return;
        }
        let mut key: smallvec::SmallVec<[TermId; 8]> = smallvec::SmallVec::new();
        index.next.resize(self.len as usize, NONE);
        'tuples: for id in index.upto..self.len {
            let start = id as usize * self.arity;
            let tuple = &self.data[start..start + self.arity];
            key.clear();
            for path in index.paths.iter() {
                match subterm(store, tuple, path) {
                    Some(t) => key.push(t),
                    None => continue 'tuples,
                }
            }
            match index.map.entry(hash_terms(key.iter().copied())) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let (_, last) = e.get_mut();
                    index.next[*last as usize] = id;
                    *last = id;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((id, id));
                }
            }
        }
        index.upto = self.len;
    }

    /// Distinct values at a path (counted again when the relation has doubled).
    pub fn distinct_at(&mut self, path: &[u8], store: &TermStore) -> u32 {
        if self.len == 0 {
            return 1;
        }
        let (counted_at, count) = self.distinct.get(path).copied().unwrap_or((0, 0));
        if counted_at == 0 || self.len >= counted_at * 2 {
            let mut seen = rustc_hash::FxHashSet::default();
            for id in 0..self.len {
                if let Some(t) = subterm(store, self.tuple(id), path) {
                    seen.insert(t);
                }
            }
            let count = (seen.len() as u32).max(1);
            self.distinct.insert(path.into(), (self.len, count));
            return count;
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
    /// An enumeration's working vectors, kept for the next (the join tier enumerates hundreds
    /// of rules for every state).
    scratch: std::cell::Cell<Option<Box<Scratch>>>,
}

/// The vectors of one enumeration: variable values, the trail, matched tuples, an index key.
#[derive(Default)]
struct Scratch {
    env: Vec<TermId>,
    trail: Vec<u32>,
    matched: Vec<TupleId>,
    key: Vec<TermId>,
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
    /// The memory budget of the work (its account's, or the process's) ran out.
    OutOfMemory(ggp_memory::Exceeded),
    /// A rule has a negation or `distinct` with a variable that no positive literal binds
    /// (the checker reports these, E001; this keeps the engine from evaluating one).
    Unsafe,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::TooManyTuples(n) => write!(f, "more than {n} tuples"),
            Stop::TooDeep(n) => write!(f, "a derived term nests more than {n} levels deep"),
            Stop::OutOfTime => f.write_str("out of time"),
            Stop::TooMuchWork(n) => write!(f, "more than {n} tuples tried while joining"),
            Stop::OutOfMemory(e) => write!(f, "{e}"),
            Stop::Unsafe => f.write_str("a rule has a variable that no positive literal binds"),
        }
    }
}

/// Budgets of a grounding.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    pub max_tuples: usize,
    pub max_depth: u32,
    /// Tuples tried while joining, in all: a measure of work that, unlike time, gives the
    /// same verdict on every machine.
    pub max_work: u64,
    pub deadline: Option<std::time::Instant>,
    /// Set when the answer is no longer wanted (the grounding of everything, run beside this
    /// one, succeeded or failed for a reason demand cannot help): the grounding then stops as
    /// at its deadline.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Budget {
    /// Why the work must stop now, if it must: the time is up ([`Budget::out_of_time`]) or
    /// the memory it is charged to is ([`ggp_memory::check`]).
    pub fn exhausted(&self) -> Option<Stop> {
        if self.out_of_time() {
            return Some(Stop::OutOfTime);
        }
        ggp_memory::check().err().map(Stop::OutOfMemory)
    }

    /// Whether the time is up: the deadline passed, or the answer is no longer wanted.
    pub fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| std::time::Instant::now() > d)
            || self
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// One step of a join plan.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Match tuples of a positive literal: all of them, only those in the delta range, or
    /// those an index finds from the positions already bound.
    Pos {
        lit: usize,
        delta: bool,
        /// Subterms bound when this step runs (the index key).
        key: Box<[Path]>,
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
            scratch: std::cell::Cell::new(None),
        }
    }

    /// Starts counting the work budget again (for a new question).
    pub fn reset_work(&self) {
        self.work.set(0);
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
        self.plan_from(rule, delta.map(|d| (d, true)), neg)
    }

    /// A join order that matches the positive literal `first.0` first: its `delta` tuples if
    /// `first.1`, otherwise every tuple, looked up on its ground subterms if it has any.
    pub fn plan_from(
        &mut self,
        rule: &FlatRule,
        first: Option<(usize, bool)>,
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
                let key: Box<[Path]> = if delta {
                    Box::new([])
                } else {
                    bound_paths(&atom.args, &|v| bound[v as usize]).into()
                };
                let index = if key.is_empty() {
                    usize::MAX
                } else {
                    db.rels[atom.rel as usize].index(&key, &db.store)
                };
                steps.push(Step::Pos {
                    lit,
                    delta,
                    key,
                    index,
                });
                bind(atom, bound);
            };
        if let Some((d, delta)) = first {
            place_pos(self, d, delta, &mut bound, &mut steps);
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
                for path in bound_paths(&atom.args, &|v| bound[v as usize]) {
                    estimate /= rel.distinct_at(&path, &self.store) as f64;
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
        let mut scratch = self.scratch.take().unwrap_or_default();
        scratch.env.clear();
        scratch.env.resize(rule.vars as usize, UNBOUND);
        scratch.trail.clear();
        scratch.matched.clear();
        scratch.matched.resize(rule.body.len(), u32::MAX);
        let mut run = Run {
            db: self,
            rule,
            plan,
            delta,
            env: std::mem::take(&mut scratch.env),
            trail: std::mem::take(&mut scratch.trail),
            matched: std::mem::take(&mut scratch.matched),
            key: std::mem::take(&mut scratch.key),
            tries: 0,
            budget,
            stop: None,
        };
        run.step(0, neg, found);
        self.work.set(self.work.get() + run.tries);
        scratch.env = run.env;
        scratch.trail = run.trail;
        scratch.matched = run.matched;
        scratch.key = run.key;
        self.scratch.set(Some(scratch));
        match run.stop {
            Some(Stopped::Budget(stop)) => Err(stop),
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
    /// Out of time or memory.
    Budget(Stop),
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
            } else if let Some(stop) = self.budget.exhausted() {
                self.stop = Some(Stopped::Budget(stop));
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
                    for path in key.iter() {
                        match resolve(&self.db.store, pat_at(&atom.args, path), &self.env) {
                            Some(t) => self.key.push(t),
                            None => return,
                        }
                    }
                    let hash = hash_terms(self.key.iter().copied());
                    let index = &rel.indexes[*index];
                    let Some(&(mut id, _)) = index.map.get(&hash) else {
                        return;
                    };
                    while id != NONE {
                        self.try_tuple(atom, *lit, id, at + 1, neg, found);
                        id = index.next[id as usize];
                    }
                }
            }
        }
    }
}

/// Join plans kept from one evaluation of the same rules to the next (the join tier evaluates
/// them in every state), by the rule's number and the positive literal read as a delta
/// (`usize::MAX` for the first round).
#[derive(Default)]
pub(crate) struct Plans(FxHashMap<(usize, usize), Plan>);

/// What [`fixpoint`] keeps between evaluations: the number of its first rule (its `rules` are
/// numbered from it), their head variables ([`FlatRule::head_vars`]), and the plans.
pub(crate) struct Kept<'a> {
    pub first: usize,
    pub head_vars: &'a [Vec<u32>],
    pub plans: &'a mut Plans,
}

/// The plan of `rules[k]` with the positive literal `delta` read as the delta (`None`: its
/// first round): the kept one, or one chosen now from the relations' sizes (kept, if plans
/// are).
fn plan_of<'p>(
    db: &mut Db,
    rule: &FlatRule,
    k: usize,
    delta: Option<usize>,
    neg: &impl NegMode,
    kept: &'p mut Option<Kept<'_>>,
    fresh: &'p mut Option<Plan>,
) -> Result<&'p Plan, Stop> {
    match kept {
        Some(kept) => {
            let key = (kept.first + k, delta.unwrap_or(usize::MAX));
            Ok(match kept.plans.0.entry(key) {
                std::collections::hash_map::Entry::Occupied(plan) => plan.into_mut(),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(db.plan(rule, delta, neg)?)
                }
            })
        }
        None => Ok(fresh.insert(db.plan(rule, delta, neg)?)),
    }
}

/// Semi-naive evaluation of `rules` (the rules of one component, whose head relations are
/// `members`) to their fixpoint. Negative literals are checked where `neg` says so.
///
/// Without `kept`, each round plans each rule from the relations' sizes then. With it, a plan
/// is chosen the first time its rule runs and kept; a rule is not run (nor planned) while a
/// relation it reads positively is empty, so that its plan is chosen from sizes that mean
/// something; and the members' indexes are brought up to date after each round (the kept
/// plans look them up).
pub(crate) fn fixpoint<R: std::borrow::Borrow<FlatRule>>(
    db: &mut Db,
    rules: &[R],
    members: &[u32],
    neg: &impl NegMode,
    budget: &Budget,
    tuples: &mut usize,
    mut kept: Option<Kept<'_>>,
) -> Result<(), Stop> {
    let is_member = |rel: u32| members.contains(&rel);
    let recursive = rules.iter().any(|r| {
        r.borrow()
            .body
            .iter()
            .any(|l| matches!(l, Lit::Pos(a) if is_member(a.rel)))
    });
    // Where each member's tuples of the last round begin.
    let mut delta_from: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
    let mut first = true;
    // The variables of each rule's head.
    let local: Vec<Vec<u32>> = match &kept {
        Some(_) => Vec::new(),
        None => rules.iter().map(|r| r.borrow().head_vars()).collect(),
    };
    let head_vars: &[Vec<u32>] = match &kept {
        Some(k) => k.head_vars,
        None => &local,
    };
    let mut fresh = None;
    // With kept plans (the same rules evaluated in every state, each round small), a head
    // derived twice in a round is found when it is added, and the clock is read once a round
    // (and by the enumerations, every few thousand tuples): a table of the round's heads and a
    // clock read for every rule cost more than they save there.
    let (dedup, clock_per_rule) = (kept.is_none(), kept.is_none());
    loop {
        // The heads derived in this round that are not known yet, each once: the rule and
        // where its head variables' values start in `values`.
        let mut derived: Vec<(usize, usize)> = Vec::new();
        let mut values: Vec<TermId> = Vec::new();
        // Each with its short hash (see [`spread`]).
        let mut seen: HashTable<(u32, u32)> = HashTable::new();
        for (k, rule) in rules.iter().enumerate() {
            let rule = rule.borrow();
            if kept.is_some()
                && rule
                    .body
                    .iter()
                    .any(|l| matches!(l, Lit::Pos(a) if db.rels[a.rel as usize].len() == 0))
            {
                continue;
            }
            let width = head_vars[k].len();
            let mut heads = |db: &Db, env: &[TermId], _: &[TupleId]| {
                if db.known(&rule.head, env) {
                    return true;
                }
                let key = head_vars[k].iter().map(|&v| env[v as usize]);
                if !dedup {
                    derived.push((k, values.len()));
                    values.extend(key);
                    return *tuples + derived.len() <= budget.max_tuples;
                }
                let h = short(hash_terms(
                    key.clone().chain(std::iter::once(TermId(k as u32))),
                ));
                let same = |&(kept, d): &(u32, u32)| {
                    let (dk, at) = derived[d as usize];
                    kept == h && dk == k && values[at..at + width].iter().copied().eq(key.clone())
                };
                if seen.find(spread(h), same).is_none() {
                    let at = values.len();
                    values.extend(key);
                    derived.push((k, at));
                    let d = (derived.len() - 1) as u32;
                    seen.insert_unique(spread(h), (h, d), |&(kept, _)| spread(kept));
                }
                // Derived heads count against the budget before they are added.
                *tuples + derived.len() <= budget.max_tuples
            };
            if first {
                if clock_per_rule {
                    check_budget(budget)?;
                }
                let plan = plan_of(db, rule, k, None, neg, &mut kept, &mut fresh)?;
                db.enumerate(rule, plan, (0, 0), neg, budget, &mut heads)?;
            } else {
                for (i, lit) in rule.body.iter().enumerate() {
                    let Lit::Pos(atom) = lit else { continue };
                    let Some(&range) = delta_from.get(&atom.rel) else {
                        continue;
                    };
                    if range.0 == range.1 {
                        continue;
                    }
                    if clock_per_rule {
                        check_budget(budget)?;
                    }
                    let plan = plan_of(db, rule, k, Some(i), neg, &mut kept, &mut fresh)?;
                    db.enumerate(rule, plan, range, neg, budget, &mut heads)?;
                }
            }
            if clock_per_rule {
                check_budget(budget)?;
            }
        }
        check_budget(budget)?;
        if *tuples + derived.len() > budget.max_tuples {
            return Err(Stop::TooManyTuples(budget.max_tuples));
        }
        first = false;
        let before: Vec<(u32, u32)> = members
            .iter()
            .map(|&m| (m, db.rels[m as usize].len()))
            .collect();
        let mut env: Vec<TermId> = Vec::new();
        for (n, &(k, at)) in derived.iter().enumerate() {
            // Millions of heads take seconds to add: the deadline is checked here too.
            if n % 4096 == 4095 {
                check_budget(budget)?;
            }
            let rule = rules[k].borrow();
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
        if kept.is_some() {
            for &m in members {
                let store = &db.store;
                db.rels[m as usize].refresh(store);
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

/// Stops the work when its time or its memory is up ([`Budget::exhausted`]).
pub(crate) fn check_budget(budget: &Budget) -> Result<(), Stop> {
    match budget.exhausted() {
        Some(stop) => Err(stop),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gdl_check::Symbols;

    #[test]
    fn a_partly_bound_function_term_is_indexed_on_its_bound_subterms() {
        let mut symbols = Symbols::new();
        let cell = symbols.intern("cell");
        for n in ["1", "2", "x", "o"] {
            symbols.intern(n);
        }
        let k = |store: &mut TermStore, n: &str| store.constant(symbols.get(n).expect("interned"));
        let mut db = Db::new(TermStore::new(), [1].into_iter());
        let mut cells = Vec::new();
        for (a, b, p) in [
            ("1", "1", "x"),
            ("1", "2", "o"),
            ("2", "1", "o"),
            ("2", "2", "x"),
        ] {
            let ids = [
                k(&mut db.store, a),
                k(&mut db.store, b),
                k(&mut db.store, p),
            ];
            let t = db.store.function(cell, &ids);
            db.rels[0].insert(&[t]);
            cells.push(ids);
        }
        // `(t (cell 1 ?y ?p))`: the path to `1` is bound, and `?y`, `?p` are not.
        let one = k(&mut db.store, "1");
        let args = [Pat::Fn(
            cell,
            [Pat::Ground(one), Pat::Var(0), Pat::Var(1)].into(),
        )];
        let paths = bound_paths(&args, &|_| false);
        assert_eq!(paths, vec![Box::from([0u8, 0])]);
        // With `?y` bound as well, two paths.
        assert_eq!(bound_paths(&args, &|v| v == 0).len(), 2);
        let rule = FlatRule {
            head: PAtom {
                rel: 0,
                args: args.clone().into(),
            },
            body: vec![Lit::Pos(PAtom {
                rel: 0,
                args: args.into(),
            })],
            vars: 2,
        };
        let plan = db.plan(&rule, None, &|_| true).unwrap();
        let budget = Budget {
            max_tuples: 100,
            max_depth: 8,
            max_work: 100,
            deadline: None,
            cancel: None,
        };
        let mut found = Vec::new();
        db.enumerate(
            &rule,
            &plan,
            (0, 0),
            &|_| true,
            &budget,
            &mut |_, env, _| {
                found.push((env[0], env[1]));
                true
            },
        )
        .unwrap();
        assert_eq!(
            found,
            [(cells[0][1], cells[0][2]), (cells[1][1], cells[1][2])]
        );
        // The index found the two cells in row 1 without trying the others.
        assert_eq!(db.work.get(), 2);
    }
}
