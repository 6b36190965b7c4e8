//! Top-down evaluation with tabling: a literal is answered by a *table*, the answers of its
//! relation for the arguments bound when it is called, computed once from the rules and kept
//! for as long as what it depends on stays the same (for ever, for the state, or for the joint
//! move). Only what a question needs is computed, as in the tabled Prolog of the independent
//! reference, so rules with large cross products (a chess board's every pair of squares) cost
//! only the pairs that are asked about.
//!
//! - A table of a non-recursive relation is computed when first called and is then complete.
//! - Tables of a recursive component are computed together: the first call into the component
//!   leads a fixpoint that re-evaluates every table of the component created since, until no
//!   table gains an answer (calls to a table being evaluated see its answers so far). Positive
//!   recursion only, so this is the least fixpoint restricted to the calls made.
//! - A component whose relations depend on their own negation (Definition 8 forbids it, yet
//!   real games define `(goal robot 100)` from `(not (goal robot 0))`) is computed whole by the
//!   alternating fixpoint, which gives the one model of a locally stratified program and
//!   reports the atoms that have none.
//! - A fact with variables (`(leq ?a ?a)`) holds for every value: literals unify with it.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gdl_check::{RelId, Symbol, Symbols};

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::compile::{CAtom, CLit, CTerm, Compiled, Pattern, tuple};
use crate::machine::{ReasonError, Result};
use crate::terms::{Term, TermId, TermStore};

/// Budgets for evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Answers one layer (the static relations, a state's, a joint move's) may hold.
    pub max_facts: usize,
    /// How deeply a derived term may nest.
    pub max_depth: u32,
    /// How long one question (legal moves, goals, terminal, next state) may take.
    pub time: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_facts: 20_000_000,
            max_depth: 128,
            time: None,
        }
    }
}

/// Layers of tables: what a relation depends on decides how long its tables are kept.
pub(crate) const STATIC: u8 = 0;
pub(crate) const STATE: u8 = 1;
pub(crate) const MOVES: u8 = 2;

/// Room for the arguments of most terms without a heap allocation.
type Args = SmallVec<[TermId; 8]>;

/// The argument values bound when a relation is called, with the evaluator's `unbound`
/// constant where an argument is not bound (or only partly). Not interned: a call's key was a
/// term of its own, and interning one for every call was a sixth of the reference engine's
/// time (docs/benchmarks.md, "The reference engine's tables").
pub(crate) type Key = Args;

/// Where a layer places the table of a relation called with a key.
fn key_hash(rel: RelId, key: &[TermId]) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    h.write_u32(rel);
    for t in key {
        h.write_u32(t.0);
    }
    h.finish()
}

type Bindings = Vec<Option<TermId>>;

/// The atoms of each relation of a component, sorted.
type Assumed = FxHashMap<RelId, Vec<TermId>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableRef {
    layer: u8,
    index: u32,
}

struct Table {
    rel: RelId,
    key: Key,
    /// Tuples (`(relation args…)` terms), in the order found.
    answers: Vec<TermId>,
    set: FxHashSet<TermId>,
    complete: bool,
    /// Being evaluated (a call to it returns the answers so far).
    active: bool,
    /// The fixpoint pass that last evaluated it.
    pass: u64,
}

#[derive(Default)]
struct Layer {
    /// Each table's index, placed by [`key_hash`].
    map: HashTable<u32>,
    tables: Vec<Table>,
    answers: usize,
}

impl Layer {
    fn clear(&mut self) {
        self.map.clear();
        self.tables.clear();
        self.answers = 0;
    }
}

/// The ground facts of a relation, indexed by every argument position.
#[derive(Default)]
pub(crate) struct Facts {
    tuples: Vec<TermId>,
    by_position: Vec<FxHashMap<TermId, Vec<u32>>>,
}

impl Facts {
    pub fn new(tuples: &[TermId], store: &TermStore) -> Facts {
        let mut unique: Vec<TermId> = Vec::with_capacity(tuples.len());
        let mut seen = FxHashSet::default();
        for &t in tuples {
            if seen.insert(t) {
                unique.push(t);
            }
        }
        let arity = unique.first().map_or(0, |&t| store.args(t).len());
        let mut by_position = vec![FxHashMap::<TermId, Vec<u32>>::default(); arity];
        for (at, &t) in unique.iter().enumerate() {
            for (position, &arg) in store.args(t).iter().enumerate() {
                by_position[position]
                    .entry(arg)
                    .or_default()
                    .push(at as u32);
            }
        }
        Facts {
            tuples: unique,
            by_position,
        }
    }

    /// The facts that may match `key`: those with its first bound argument, or all.
    fn candidates(&self, key: &[TermId], unbound: TermId) -> Candidates<'_> {
        for (position, v) in key.iter().enumerate() {
            if *v != unbound {
                let list = self
                    .by_position
                    .get(position)
                    .and_then(|index| index.get(v))
                    .map_or(&[][..], Vec::as_slice);
                return Candidates::Indexed(&self.tuples, list);
            }
        }
        Candidates::All(&self.tuples)
    }
}

/// The tuples of a static relation computed in full (sorted, [`Evaluator::index_static`]) that
/// may match `key` (of a relation named `name`) when it has every argument bound (the one
/// tuple, if it exists) or none (all); `None` otherwise (a table for the key holds exactly
/// those that match, which beats any one argument's index).
fn static_candidates<'a>(
    tuples: &'a [TermId],
    name: Symbol,
    key: &[TermId],
    unbound: TermId,
    store: &TermStore,
) -> Option<Candidates<'a>> {
    if key.iter().all(|&v| v == unbound) {
        return Some(Candidates::All(tuples));
    }
    if key.contains(&unbound) {
        return None;
    }
    let found = store
        .find(name, Some(key))
        .and_then(|t| tuples.binary_search(&t).ok());
    Some(Candidates::All(found.map_or(&[], |i| &tuples[i..=i])))
}

enum Candidates<'a> {
    All(&'a [TermId]),
    Indexed(&'a [TermId], &'a [u32]),
}

impl Candidates<'_> {
    fn len(&self) -> usize {
        match self {
            Candidates::All(all) => all.len(),
            Candidates::Indexed(_, list) => list.len(),
        }
    }

    fn get(&self, i: usize) -> TermId {
        match self {
            Candidates::All(all) => all[i],
            Candidates::Indexed(all, list) => all[list[i] as usize],
        }
    }
}

/// What the rules are evaluated against: the fluents of the state and the joint move.
#[derive(Clone, Default)]
pub(crate) struct Inputs {
    /// The `true` tuples, by the function symbol (or constant) of their fluent.
    pub fluents: FxHashMap<Symbol, Vec<TermId>>,
    /// The fluents themselves.
    pub state: FxHashSet<TermId>,
    /// The `true` tuples by (function symbol, argument position, value) of their fluent.
    pub by_argument: FxHashMap<(Symbol, u32, TermId), Vec<TermId>>,
    /// The `does` tuples.
    pub does: Vec<TermId>,
    /// The `knows` tuples that hold, by relation (`knows/1`, `knows/2`): given by the
    /// knowledge machine for the history asked about (`crate::knowledge`), none otherwise.
    pub knows: FxHashMap<RelId, Vec<TermId>>,
}

/// What one question reads and does not change: the compiled rules and the inputs (the
/// state's fluents, the joint move). Dereferences to the rules.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub compiled: &'a Compiled,
    pub inputs: &'a Inputs,
}

impl std::ops::Deref for Ctx<'_> {
    type Target = Compiled;

    fn deref(&self) -> &Compiled {
        self.compiled
    }
}

/// Everything an evaluation reads and writes, apart from the compiled rules and the inputs.
pub(crate) struct Evaluator {
    pub store: TermStore,
    /// The names the store's terms are built from (the game's, and any read since).
    pub symbols: Symbols,
    pub limits: Limits,
    /// A deadline for every question, beside the time allowed each one (a batch of playouts
    /// that must end at a given time: a question still running then is cut short).
    pub until: Option<Instant>,
    deadline: Option<Instant>,
    steps: u64,
    layers: [Layer; 3],
    /// The tables of a recursive component whose fixpoint is under way.
    fixpoints: Vec<Option<Vec<TableRef>>>,
    /// Answers inserted so far (to see when a fixpoint is reached).
    inserted: u64,
    /// The current fixpoint pass, and whether an evaluation in it read answers of a table that
    /// was not complete.
    pass: u64,
    partial: bool,
    /// During an alternating fixpoint: the component, and the atoms of its relations assumed
    /// true inside negations.
    assumed: Option<(u32, Arc<Assumed>)>,
    /// The constant that marks an argument not bound in a [`Key`] (`?`, which no GDL constant
    /// can be).
    unbound: TermId,
    /// Each relation's tuples, sorted, where it is static, has rules and was computed in full
    /// ([`Evaluator::index_static`]).
    static_tuples: Vec<Option<Arc<[TermId]>>>,
}

impl Evaluator {
    pub fn new(
        store: TermStore,
        mut symbols: Symbols,
        limits: Limits,
        components: usize,
    ) -> Evaluator {
        let mut store = store;
        let unbound = store.constant(symbols.intern("?"));
        Evaluator {
            unbound,
            store,
            symbols,
            limits,
            until: None,
            deadline: None,
            steps: 0,
            layers: Default::default(),
            fixpoints: vec![None; components],
            inserted: 0,
            pass: 0,
            partial: false,
            assumed: None,
            static_tuples: Vec::new(),
        }
    }

    /// Whether `rel`'s tuples were computed in full ([`Evaluator::index_static`]), and how
    /// many tables of it are kept.
    #[cfg(test)]
    pub fn static_state(&self, rel: RelId) -> (bool, usize) {
        let indexed = self
            .static_tuples
            .get(rel as usize)
            .is_some_and(Option::is_some);
        let tables = self
            .layers
            .iter()
            .flat_map(|l| &l.tables)
            .filter(|t| t.rel == rel)
            .count();
        (indexed, tables)
    }

    /// Computes every tuple of each static relation that has rules, once, and keeps them
    /// sorted, so that a call with every argument bound is a lookup instead of a table of its
    /// own.
    /// A rule that joins a static relation with the state calls it with other arguments in
    /// every state (quad's `square`, with all eight bound, once for every four marked cells),
    /// and each such call used to make a table that was kept for the rest of the game. Within
    /// `max_answers` tuples for each relation (with what it calls) and `time` in all: a relation
    /// over either (one with infinitely many tuples, say) is computed by call, as before.
    pub fn index_static(&mut self, compiled: &Compiled, max_answers: usize, time: Duration) {
        let inputs = Inputs::default();
        let cx = Ctx {
            compiled,
            inputs: &inputs,
        };
        let saved = self.limits;
        let until = Instant::now() + time;
        self.reset();
        self.static_tuples = vec![None; compiled.names.len()];
        for rel in 0..compiled.names.len() {
            if compiled.layer[rel] != STATIC
                || compiled.rules_of[rel].is_empty()
                || compiled.arity[rel] == 0
            {
                continue;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.limits.max_facts = max_answers.min(saved.max_facts);
            self.limits.time = Some(left);
            self.start();
            let rel = rel as RelId;
            let key = self.open_key(&cx, rel);
            if let Ok(r) = self.call(&cx, rel, &key) {
                let mut tuples = self.table(r).answers.clone();
                tuples.sort_unstable();
                self.static_tuples[rel as usize] = Some(tuples.into());
            }
            // The tables are dropped (half computed after an error), so that the next relation
            // has the whole budget, and questions theirs: what was computed in full is kept
            // above.
            self.reset();
        }
        self.limits = saved;
        self.deadline = None;
    }

    /// Starts a question: the time budget runs from now (and ends at `until` at the latest).
    pub fn start(&mut self) {
        let own = self.limits.time.and_then(|t| Instant::now().checked_add(t));
        self.deadline = match (own, self.until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Forgets the tables of a layer and those above it.
    pub fn clear_from(&mut self, layer: u8) {
        for l in layer..3 {
            self.layers[l as usize].clear();
        }
    }

    /// After an error: tables may be half computed, so all are dropped.
    pub fn reset(&mut self) {
        self.clear_from(STATIC);
        self.fixpoints.iter_mut().for_each(|f| *f = None);
        self.assumed = None;
    }

    fn table(&self, r: TableRef) -> &Table {
        &self.layers[r.layer as usize].tables[r.index as usize]
    }

    fn table_mut(&mut self, r: TableRef) -> &mut Table {
        &mut self.layers[r.layer as usize].tables[r.index as usize]
    }

    fn tick(&mut self) -> Result<()> {
        self.steps += 1;
        if self.steps.is_multiple_of(4096) {
            if let Some(deadline) = self.deadline
                && Instant::now() > deadline
            {
                return Err(ReasonError::Budget(
                    "the time allowed for this question ran out".into(),
                ));
            }
            ggp_memory::check()
                .map_err(|e| ReasonError::Budget(format!("the question needs {e}")))?;
        }
        Ok(())
    }

    fn insert(&mut self, r: TableRef, tuple: TermId) -> Result<()> {
        let table = self.table_mut(r);
        if table.set.insert(tuple) {
            table.answers.push(tuple);
            self.inserted += 1;
            let layer = &mut self.layers[r.layer as usize];
            layer.answers += 1;
            if layer.answers > self.limits.max_facts {
                return Err(ReasonError::Budget(format!(
                    "more than {} facts derived",
                    self.limits.max_facts
                )));
            }
        }
        Ok(())
    }

    /// Every tuple of `rel` matching `args` (`None`: any value), through tables, facts and
    /// facts with variables alike.
    pub fn query(
        &mut self,
        cx: &Ctx<'_>,
        rel: RelId,
        args: &[Option<TermId>],
    ) -> Result<Vec<TermId>> {
        let mut vars = 0;
        let atom = CAtom {
            rel,
            name: cx.names[rel as usize],
            args: args
                .iter()
                .map(|a| match a {
                    Some(t) => CTerm::Ground(*t),
                    None => {
                        vars += 1;
                        CTerm::Var(vars - 1)
                    }
                })
                .collect(),
        };
        let mut bind = vec![None; vars as usize];
        let mut trail = Vec::new();
        let mut out = Vec::new();
        let body = [CLit::Pos(atom)];
        self.solve(
            cx,
            Goal::body(&body),
            &mut bind,
            &mut trail,
            &mut |this, bind| {
                let CLit::Pos(atom) = &body[0] else {
                    unreachable!()
                };
                let t = build_atom(atom, bind, &mut this.store)
                    .expect("every variable occurs in the atom");
                out.push(t);
                Ok(true)
            },
        )?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The table answering `rel` called with `key`, computed if need be.
    fn call(&mut self, cx: &Ctx<'_>, rel: RelId, key: &[TermId]) -> Result<TableRef> {
        let comp = cx.component[rel as usize];
        let open;
        let key = if cx.self_negating[comp as usize] {
            open = self.open_key(cx, rel);
            &open
        } else {
            key
        };
        let layer = cx.layer[rel as usize];
        let (r, new) = self.table_for(rel, key, layer);
        let table = self.table(r);
        if table.complete {
            return Ok(r);
        }
        if table.active {
            // A call back into a table being evaluated sees its answers so far.
            self.partial = true;
            return Ok(r);
        }
        if self.fixpoints[comp as usize].is_some() {
            // Inside the component's fixpoint: a new table is evaluated at once (so that long
            // chains need few rounds); an old one keeps its answers until the next round.
            if new {
                self.fixpoints[comp as usize]
                    .as_mut()
                    .expect("under way")
                    .push(r);
                self.evaluate(cx, r)?;
                self.table_mut(r).pass = self.pass;
            } else {
                self.partial = true;
            }
            return Ok(r);
        }
        if cx.self_negating[comp as usize] {
            self.alternating_fixpoint(cx, comp)?;
        } else if cx.recursive[comp as usize] {
            self.fixpoint(cx, comp, vec![r])?;
        } else {
            self.evaluate(cx, r)?;
            self.table_mut(r).complete = true;
        }
        Ok(r)
    }

    /// The key with no argument bound.
    fn open_key(&self, cx: &Ctx<'_>, rel: RelId) -> Key {
        smallvec::smallvec![self.unbound; cx.arity[rel as usize]]
    }

    fn table_for(&mut self, rel: RelId, key: &[TermId], layer: u8) -> (TableRef, bool) {
        let Layer { map, tables, .. } = &mut self.layers[layer as usize];
        let hash = key_hash(rel, key);
        if let Some(&index) = map.find(hash, |&i| {
            let t = &tables[i as usize];
            t.rel == rel && *t.key == *key
        }) {
            return (TableRef { layer, index }, false);
        }
        let index = tables.len() as u32;
        tables.push(Table {
            rel,
            key: key.into(),
            answers: Vec::new(),
            set: FxHashSet::default(),
            complete: false,
            active: false,
            pass: 0,
        });
        map.insert_unique(hash, index, |&i| {
            let t = &tables[i as usize];
            key_hash(t.rel, &t.key)
        });
        self.inserted += 1;
        (TableRef { layer, index }, true)
    }

    /// Re-evaluates the component's tables until none changes, then marks them complete.
    ///
    /// A pass evaluates each table once (a table created during the pass was evaluated when it
    /// was created). When no evaluation read a table that was still incomplete, every answer is
    /// final after one pass; otherwise passes repeat until one adds nothing.
    fn fixpoint(&mut self, cx: &Ctx<'_>, comp: u32, tables: Vec<TableRef>) -> Result<()> {
        self.fixpoints[comp as usize] = Some(tables);
        let outer = self.partial;
        loop {
            let before = self.inserted;
            self.partial = false;
            self.pass += 1;
            let pass = self.pass;
            let mut i = 0;
            while let Some(&r) = self.fixpoints[comp as usize]
                .as_ref()
                .expect("under way")
                .get(i)
            {
                if self.table(r).pass != pass {
                    self.evaluate(cx, r)?;
                    self.table_mut(r).pass = pass;
                }
                i += 1;
            }
            if !self.partial || self.inserted == before {
                break;
            }
        }
        self.partial = outer;
        let tables = self.fixpoints[comp as usize].take().expect("under way");
        for r in tables {
            self.table_mut(r).complete = true;
        }
        Ok(())
    }

    /// The alternating fixpoint of a component whose relations depend on their own negation:
    /// under-estimates and over-estimates of the true atoms, each computed assuming the other
    /// for the negations, until they meet.
    fn alternating_fixpoint(&mut self, cx: &Ctx<'_>, comp: u32) -> Result<()> {
        let members = &cx.members[comp as usize];
        let tables: Vec<TableRef> = members
            .iter()
            .map(|&rel| {
                let key = self.open_key(cx, rel);
                self.table_for(rel, &key, cx.layer[rel as usize]).0
            })
            .collect();
        let saved = self.assumed.take();
        let mut under: Arc<Assumed> = Arc::default();
        let result = loop {
            let over = match self.least_fixpoint_assuming(cx, comp, &tables, under.clone()) {
                Ok(over) => over,
                Err(e) => break Err(e),
            };
            let new_under = match self.least_fixpoint_assuming(cx, comp, &tables, over.clone()) {
                Ok(new_under) => new_under,
                Err(e) => break Err(e),
            };
            let same = |a: &Assumed, b: &Assumed| {
                members.iter().all(|r| {
                    let empty = Vec::new();
                    a.get(r).unwrap_or(&empty) == b.get(r).unwrap_or(&empty)
                })
            };
            if same(&new_under, &under) {
                let undefined = members.iter().find_map(|r| {
                    let known = new_under.get(r).map(Vec::as_slice).unwrap_or(&[]);
                    over.get(r)?
                        .iter()
                        .find(|t| known.binary_search(t).is_err())
                        .copied()
                });
                break match undefined {
                    Some(atom) => Err(ReasonError::Evaluation(format!(
                        "`{}` depends on its own negation in this state, so it has no truth value",
                        self.store.spelled(&self.symbols, atom)
                    ))),
                    None => Ok(()),
                };
            }
            under = new_under;
        };
        self.assumed = saved;
        for r in tables {
            self.table_mut(r).complete = result.is_ok();
        }
        result
    }

    /// The least fixpoint of the component's tables, reading its relations inside negations
    /// from `assumed`; returns the answers of each relation, sorted.
    fn least_fixpoint_assuming(
        &mut self,
        cx: &Ctx<'_>,
        comp: u32,
        tables: &[TableRef],
        assumed: Arc<Assumed>,
    ) -> Result<Arc<Assumed>> {
        for &r in tables {
            let layer = &mut self.layers[r.layer as usize];
            let table = &mut layer.tables[r.index as usize];
            let dropped = table.answers.len();
            table.answers.clear();
            table.set.clear();
            table.complete = false;
            layer.answers -= dropped;
        }
        self.assumed = Some((comp, assumed));
        self.fixpoint(cx, comp, tables.to_vec())?;
        let mut out = Assumed::default();
        for &r in tables {
            let table = self.table(r);
            let mut answers = table.answers.clone();
            answers.sort_unstable();
            out.entry(table.rel).or_default().extend(answers);
        }
        Ok(Arc::new(out))
    }

    /// Evaluates the rules of a table's relation for its key, adding the answers found.
    fn evaluate(&mut self, cx: &Ctx<'_>, r: TableRef) -> Result<()> {
        stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, || {
            let (rel, key) = {
                let table = self.table_mut(r);
                table.active = true;
                (table.rel, table.key.clone())
            };
            let result = self.evaluate_rules(cx, r, rel, &key);
            if let Some(table) = self.layers[r.layer as usize]
                .tables
                .get_mut(r.index as usize)
            {
                table.active = false;
            }
            result
        })
    }

    fn evaluate_rules(
        &mut self,
        cx: &Ctx<'_>,
        r: TableRef,
        rel: RelId,
        key: &[TermId],
    ) -> Result<()> {
        let facts = &cx.facts[rel as usize];
        let unbound = self.unbound;
        let candidates = facts.candidates(key, unbound);
        for i in 0..candidates.len() {
            let t = candidates.get(i);
            let args = self.store.args(t);
            if key.iter().zip(args).all(|(k, a)| *k == unbound || k == a) {
                self.insert(r, t)?;
            }
        }
        for &k in &cx.rules_of[rel as usize] {
            let rule = &cx.rules[k];
            let mut bind: Bindings = vec![None; rule.vars];
            let mut trail = Vec::new();
            let matched = rule.head.args.iter().zip(key).all(|(arg, &value)| {
                value == unbound || match_term(arg, value, &mut bind, &mut trail, &self.store)
            });
            if !matched {
                continue;
            }
            let head = &rule.head;
            self.solve(
                cx,
                Goal::body(&rule.body),
                &mut bind,
                &mut trail,
                &mut |this, bind| {
                    let Some(t) = build_atom(head, bind, &mut this.store) else {
                        return Err(ReasonError::Evaluation(
                            "a variable of a rule's head is bound by no positive literal".into(),
                        ));
                    };
                    if this.store.depth(t) > this.limits.max_depth + 1 {
                        return Err(ReasonError::Budget(format!(
                            "a derived term nests more than {} levels deep",
                            this.limits.max_depth
                        )));
                    }
                    this.insert(r, t)?;
                    Ok(true)
                },
            )?;
        }
        Ok(())
    }

    /// Solves `goal`, calling `on_solution` for each solution; returns `Ok(false)` when
    /// `on_solution` asked to stop.
    fn solve(
        &mut self,
        cx: &Ctx<'_>,
        goal: Goal<'_>,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        on_solution: &mut OnSolution<'_>,
    ) -> Result<bool> {
        let Goal { body, at, negated } = goal;
        let Some(literal) = body.get(at) else {
            return on_solution(self, bind);
        };
        self.tick()?;
        match literal {
            CLit::Pos(atom) => {
                self.positive(cx, atom, negated, bind, trail, &mut |this, bind, trail| {
                    this.solve(cx, goal.next(), bind, trail, on_solution)
                })
            }
            CLit::Neg(formula) => {
                let mut holds = false;
                for branch in &formula.branches {
                    let mark = trail.len();
                    let exhausted =
                        self.solve(cx, Goal::negated(branch), bind, trail, &mut |_, _| {
                            Ok(false)
                        })?;
                    undo(bind, trail, mark);
                    if !exhausted {
                        holds = true;
                        break;
                    }
                }
                if holds {
                    Ok(true)
                } else {
                    self.solve(cx, goal.next(), bind, trail, on_solution)
                }
            }
            CLit::Distinct(a, b) => {
                let (Some(x), Some(y)) = (
                    build(a, bind, &mut self.store),
                    build(b, bind, &mut self.store),
                ) else {
                    return Err(ReasonError::Evaluation(
                        "a `distinct` has a variable that no positive literal binds".into(),
                    ));
                };
                if x == y {
                    Ok(true)
                } else {
                    self.solve(cx, goal.next(), bind, trail, on_solution)
                }
            }
        }
    }

    /// Every way a positive atom matches a tuple of its relation (or a fact with variables).
    fn positive(
        &mut self,
        cx: &Ctx<'_>,
        atom: &CAtom,
        negated: bool,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        next: &mut Next<'_>,
    ) -> Result<bool> {
        let rel = atom.rel;
        // Where the tuples come from.
        let assumed = match &self.assumed {
            Some((comp, lists)) if negated && cx.component[rel as usize] == *comp => {
                Some(lists.clone())
            }
            _ => None,
        };
        if Some(rel) == cx.true_rel {
            let inputs = cx.inputs;
            if let Some(arg) = atom.args.first()
                && let Some(fluent) = find(arg, bind, &self.store)
            {
                // A ground fluent: true or not, nothing to bind.
                let holds = fluent.is_some_and(|f| inputs.state.contains(&f));
                return if holds {
                    next(self, bind, trail)
                } else {
                    Ok(true)
                };
            }
            let list: &[TermId] = match atom.args.first() {
                Some(CTerm::Fn(f, args)) => {
                    // The fluents with the first bound argument, if any.
                    let bound = args
                        .iter()
                        .enumerate()
                        .find_map(|(i, a)| Some((i, find(a, bind, &self.store)?)));
                    match bound {
                        Some((_, None)) => &[],
                        Some((i, Some(value))) => inputs
                            .by_argument
                            .get(&(*f, i as u32, value))
                            .map_or(&[], Vec::as_slice),
                        None => inputs.fluents.get(f).map_or(&[], Vec::as_slice),
                    }
                }
                Some(CTerm::Ground(_)) => unreachable!("a ground fluent is looked up above"),
                Some(CTerm::Var(_)) => return self.each_of_all(atom, inputs, bind, trail, next),
                None => &[],
            };
            return self.each(atom, list, bind, trail, next);
        }
        if Some(rel) == cx.does_rel {
            return self.each(atom, &cx.inputs.does, bind, trail, next);
        }
        if cx.knows_rels.contains(&rel) {
            let list = cx.inputs.knows.get(&rel).map_or(&[][..], Vec::as_slice);
            return self.each(atom, list, bind, trail, next);
        }
        if let Some(lists) = assumed {
            let list = lists.get(&rel).map_or(&[][..], Vec::as_slice);
            if !self.each(atom, list, bind, trail, next)? {
                return Ok(false);
            }
            return self.patterns(cx, atom, bind, trail, next);
        }
        // The key: each argument whose variables are all bound, interned (a rule may derive a
        // term that does not exist yet).
        let mut key = Args::new();
        for arg in atom.args.iter() {
            let value = build(arg, bind, &mut self.store).unwrap_or(self.unbound);
            key.push(value);
        }
        let all = self.static_tuples.get(rel as usize).and_then(Clone::clone);
        if let Some(candidates) = all
            .as_deref()
            .and_then(|all| static_candidates(all, atom.name, &key, self.unbound, &self.store))
        {
            for i in 0..candidates.len() {
                if !self.one(atom, candidates.get(i), bind, trail, next)? {
                    return Ok(false);
                }
            }
        } else if cx.rules_of[rel as usize].is_empty() {
            let candidates = cx.facts[rel as usize].candidates(&key, self.unbound);
            for i in 0..candidates.len() {
                if !self.one(atom, candidates.get(i), bind, trail, next)? {
                    return Ok(false);
                }
            }
        } else {
            let r = self.call(cx, rel, &key)?;
            let mut i = 0;
            while let Some(&t) = self.table(r).answers.get(i) {
                if !self.one(atom, t, bind, trail, next)? {
                    return Ok(false);
                }
                i += 1;
            }
        }
        self.patterns(cx, atom, bind, trail, next)
    }

    fn each(
        &mut self,
        atom: &CAtom,
        list: &[TermId],
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        next: &mut Next<'_>,
    ) -> Result<bool> {
        for &t in list {
            if !self.one(atom, t, bind, trail, next)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn each_of_all(
        &mut self,
        atom: &CAtom,
        inputs: &Inputs,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        next: &mut Next<'_>,
    ) -> Result<bool> {
        for list in inputs.fluents.values() {
            if !self.each(atom, list, bind, trail, next)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Matches the atom against one tuple and goes on if it fits.
    fn one(
        &mut self,
        atom: &CAtom,
        tuple: TermId,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        next: &mut Next<'_>,
    ) -> Result<bool> {
        let mark = trail.len();
        let matched = {
            let values = self.store.args(tuple);
            values.len() == atom.args.len()
                && atom
                    .args
                    .iter()
                    .zip(values)
                    .all(|(a, &v)| match_term(a, v, bind, trail, &self.store))
        };
        let go_on = if matched {
            next(self, bind, trail)?
        } else {
            true
        };
        undo(bind, trail, mark);
        Ok(go_on)
    }

    /// The facts with variables of the atom's relation.
    fn patterns(
        &mut self,
        cx: &Ctx<'_>,
        atom: &CAtom,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
        next: &mut Next<'_>,
    ) -> Result<bool> {
        for pattern in &cx.patterns[atom.rel as usize] {
            let mark = trail.len();
            let matched = self.unify_pattern(pattern, atom, bind, trail)?;
            let go_on = if matched {
                next(self, bind, trail)?
            } else {
                true
            };
            undo(bind, trail, mark);
            if !go_on {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Unifies an atom with a fact that has variables, binding the atom's variables to ground
    /// terms. Fails with an error when the result would not be ground.
    fn unify_pattern(
        &mut self,
        pattern: &Pattern,
        atom: &CAtom,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
    ) -> Result<bool> {
        let mut pattern_bind: Bindings = vec![None; pattern.vars];
        let mut pattern_trail = Vec::new();
        let mut pending: Vec<usize> = (0..atom.args.len()).collect();
        loop {
            let mut progress = false;
            let mut deferred = Vec::new();
            for &i in &pending {
                match self.unify_step(
                    &pattern.args[i],
                    &atom.args[i],
                    &mut pattern_bind,
                    &mut pattern_trail,
                    bind,
                    trail,
                ) {
                    Some(true) => progress = true,
                    Some(false) => return Ok(false),
                    None => deferred.push(i),
                }
            }
            if deferred.is_empty() {
                return Ok(true);
            }
            if !progress {
                return Err(ReasonError::Evaluation(
                    "a fact with variables matches a literal whose variables are not bound, so the result would not be ground".into(),
                ));
            }
            pending = deferred;
        }
    }

    /// One step of unifying a pattern term with an atom's term: `Some(result)` when decided,
    /// `None` when both sides still have unbound variables.
    fn unify_step(
        &mut self,
        p: &CTerm,
        l: &CTerm,
        pattern_bind: &mut Bindings,
        pattern_trail: &mut Vec<u32>,
        bind: &mut Bindings,
        trail: &mut Vec<u32>,
    ) -> Option<bool> {
        let pv = build(p, pattern_bind, &mut self.store);
        let lv = build(l, bind, &mut self.store);
        match (pv, lv) {
            (Some(a), Some(b)) => Some(a == b),
            (Some(a), None) => Some(match_term(l, a, bind, trail, &self.store)),
            (None, Some(b)) => Some(match_term(p, b, pattern_bind, pattern_trail, &self.store)),
            (None, None) => match (p, l) {
                (CTerm::Fn(f, pargs), CTerm::Fn(g, largs)) => {
                    if f != g || pargs.len() != largs.len() {
                        return Some(false);
                    }
                    let mut undecided = false;
                    for (pa, la) in pargs.iter().zip(largs.iter()) {
                        match self.unify_step(pa, la, pattern_bind, pattern_trail, bind, trail) {
                            Some(false) => return Some(false),
                            Some(true) => {}
                            None => undecided = true,
                        }
                    }
                    if undecided { None } else { Some(true) }
                }
                _ => None,
            },
        }
    }
}

/// A callback for each solution; returns whether to look for more.
/// What is left to solve of a rule's body: `body[at..]`, and whether under a negation (where
/// the first solution is enough).
#[derive(Clone, Copy)]
struct Goal<'b> {
    body: &'b [CLit],
    at: usize,
    negated: bool,
}

impl<'b> Goal<'b> {
    fn body(body: &'b [CLit]) -> Goal<'b> {
        Goal {
            body,
            at: 0,
            negated: false,
        }
    }

    fn negated(body: &'b [CLit]) -> Goal<'b> {
        Goal {
            body,
            at: 0,
            negated: true,
        }
    }

    /// The goal after its first literal.
    fn next(self) -> Goal<'b> {
        Goal {
            at: self.at + 1,
            ..self
        }
    }
}

type OnSolution<'c> = dyn FnMut(&mut Evaluator, &Bindings) -> Result<bool> + 'c;
type Next<'c> = dyn FnMut(&mut Evaluator, &mut Bindings, &mut Vec<u32>) -> Result<bool> + 'c;

fn undo(bind: &mut Bindings, trail: &mut Vec<u32>, mark: usize) {
    for v in trail.drain(mark..) {
        bind[v as usize] = None;
    }
}

fn match_term(
    ct: &CTerm,
    value: TermId,
    bind: &mut Bindings,
    trail: &mut Vec<u32>,
    store: &TermStore,
) -> bool {
    match ct {
        CTerm::Var(v) => match bind[*v as usize] {
            Some(b) => b == value,
            None => {
                bind[*v as usize] = Some(value);
                trail.push(*v);
                true
            }
        },
        CTerm::Ground(g) => *g == value,
        CTerm::Fn(f, args) => match store.get(value) {
            Term::Fn(g, values) if g == *f && values.len() == args.len() => args
                .iter()
                .zip(values)
                .all(|(a, &v)| match_term(a, v, bind, trail, store)),
            _ => false,
        },
    }
}

/// The term `ct` under `bind` without interning it: `None` if a variable is unbound,
/// `Some(None)` if the term does not exist.
fn find(ct: &CTerm, bind: &Bindings, store: &TermStore) -> Option<Option<TermId>> {
    match ct {
        CTerm::Var(v) => bind[*v as usize].map(Some),
        CTerm::Ground(g) => Some(Some(*g)),
        CTerm::Fn(f, args) => {
            let mut ids = Args::new();
            let mut exists = true;
            for a in args.iter() {
                match find(a, bind, store)? {
                    Some(id) => ids.push(id),
                    None => exists = false,
                }
            }
            Some(if exists {
                store.find(*f, Some(&ids))
            } else {
                None
            })
        }
    }
}

/// Interns the term `ct` under `bind`; `None` if a variable is unbound.
fn build(ct: &CTerm, bind: &Bindings, store: &mut TermStore) -> Option<TermId> {
    match ct {
        CTerm::Var(v) => bind[*v as usize],
        CTerm::Ground(g) => Some(*g),
        CTerm::Fn(f, args) => {
            let mut ids = Args::new();
            for a in args.iter() {
                ids.push(build(a, bind, store)?);
            }
            Some(store.function(*f, &ids))
        }
    }
}

/// Interns the tuple of `atom` under `bind`.
fn build_atom(atom: &CAtom, bind: &Bindings, store: &mut TermStore) -> Option<TermId> {
    let mut ids = Args::new();
    for a in atom.args.iter() {
        ids.push(build(a, bind, store)?);
    }
    Some(tuple(store, atom.name, &ids))
}
