//! The fast engine's second tier, for games too large to ground: the rules compiled to join
//! plans over indexed relations and evaluated bottom-up for each state, only where demanded.
//!
//! Grounding instantiates every rule over every atom that can hold in any reachable state;
//! some descriptions define relations far larger than what a state uses (chess asks whether a
//! line between two squares is clear when a third square is ignored: hundreds of thousands of
//! atoms, millions of ground rules). This tier grounds nothing ahead of time:
//!
//! 1. Static relations (those that depend on neither `true` nor `does`) are computed in full
//!    when the machine is built, exactly, component by component (negation over complete
//!    relations).
//! 2. The other rules are rewritten by magic sets (`demand`): the relations the questions read
//!    (`legal`, `next`, `terminal`, `goal`, `sees`) are computed in full, every other derived
//!    relation only for the arguments some rule calls it with. Unlike grounding's relaxed
//!    program, negation is evaluated, so the rewritten program must be stratified; where a
//!    negated call would depend on itself through its demand, that relation is computed in
//!    full instead, and the rewriting is done again.
//! 3. A question loads the state's fluents as `true` (and the joint move as `does`) and
//!    evaluates, semi-naively, the components the asked relation depends on, in dependency
//!    order; components already evaluated for the same state are not evaluated again (legal
//!    moves, terminal and goals share them). Each rule's join order is chosen once, from the
//!    sizes of its relations the first time it runs, and kept.
//!
//! Exact on every game it builds: magic sets compute every demanded atom of a stratified
//! program, and each negated call's demand holds before the negation is checked (its magic
//! rule has every positive literal before it). Budgets per question (tuples derived, tuples
//! tried while joining, term depth, time) turn a runaway question into an error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gdl_check::program::Program;
use gdl_check::{RelId, Reserved, Symbols};

use super::datalog::{Budget, Db, Kept, Plans, Relation, Stop, fixpoint};
use super::ground::{dynamic_relations, readers};
use super::normal::{FlatRule, Lit, flatten_with};
use crate::machine::{
    Batch, ReasonError, Result, RoleIndex, StateMachine, Until, check_joint, role_term,
};
use crate::terms::{TermError, TermId, TermStore};

/// Budgets of the join tier: building (the static relations), and each question.
#[derive(Clone, Copy, Debug)]
pub struct JoinLimits {
    /// Tuples the static relations may have, in all, and the relations of one component
    /// (computed in full when the machine is built; beyond that, where demanded, question by
    /// question).
    pub max_static: usize,
    pub max_static_component: usize,
    /// Tuples one question may derive.
    pub max_tuples: usize,
    /// Tuples one question may try while joining.
    pub max_work: u64,
    /// How deeply a derived term may nest.
    pub max_depth: u32,
    /// How long building may take.
    pub build_time: Duration,
    /// How long one question may take (`None`: no limit).
    pub time: Option<Duration>,
}

impl Default for JoinLimits {
    fn default() -> JoinLimits {
        JoinLimits {
            max_static: 4_000_000,
            max_static_component: 1_000_000,
            max_tuples: 4_000_000,
            max_work: 400_000_000,
            max_depth: 64,
            build_time: Duration::from_secs(10),
            time: None,
        }
    }
}

/// A state: its fluents, sorted.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct JoinState(Arc<[TermId]>);

impl JoinState {
    pub fn fluents(&self) -> &[TermId] {
        &self.0
    }
}

/// A component of the rewritten program: relations evaluated together.
struct Comp {
    members: Vec<u32>,
    /// Its rules: `JoinMachine::rules[rules]` (the rules are in the order of the components).
    rules: std::ops::Range<usize>,
}

/// The questions, each a relation computed in full.
#[derive(Clone, Copy)]
enum Ask {
    Legal = 0,
    Next = 1,
    Terminal = 2,
    Goal = 3,
    Sees = 4,
    /// `base` and `input`, static, asked like the others when too large to compute once.
    Base = 5,
    Input = 6,
}

const ASKS: usize = 7;

/// What is loaded in the relations: a state, with or without a joint move.
#[derive(Clone, PartialEq, Eq)]
struct Loaded {
    state: JoinState,
    joint: Option<Vec<TermId>>,
}

/// The join tier's machine.
pub struct JoinMachine {
    db: Db,
    symbols: Symbols,
    roles: Vec<TermId>,
    limits: JoinLimits,
    /// The rewritten rules of the dynamic relations.
    rules: Vec<FlatRule>,
    /// The variables of each rule's head, each once.
    head_vars: Vec<Vec<u32>>,
    comps: Vec<Comp>,
    /// For each question, the components its relation depends on, in evaluation order.
    needs: [Vec<u32>; ASKS],
    /// Whether each component is evaluated for what is loaded.
    done: Vec<bool>,
    /// Relations emptied when something else is loaded.
    dynamic: Vec<u32>,
    /// Relations computed in full though not asked about, to keep the rewritten program
    /// stratified.
    forced_full: Vec<String>,
    /// `does` and the relations that depend on it (emptied when another joint move is
    /// loaded), and whether each component has one of them.
    on_does: Vec<u32>,
    comp_on_does: Vec<bool>,
    /// The rules' join plans, chosen once.
    plans: Plans,
    /// Reserved relations.
    true_rel: Option<RelId>,
    does_rel: Option<RelId>,
    asks: [Option<RelId>; ASKS],
    initial: JoinState,
    loaded: Option<Loaded>,
    /// A deadline for every question, beside `limits.time`.
    until: Option<Instant>,
}

/// The relation of the program (of `n`) that a relation of the rewritten program is a part of;
/// itself for the program's relations and the magic ones.
fn original(rel: RelId, n: usize, new: &[super::demand::NewRel]) -> RelId {
    (rel as usize)
        .checked_sub(n)
        .and_then(|i| new[i].part_of)
        .unwrap_or(rel)
}

impl JoinMachine {
    /// Builds the join tier for a checked description.
    pub fn new(
        checked: &gdl_check::Checked<'_>,
        limits: JoinLimits,
    ) -> std::result::Result<JoinMachine, super::BuildError> {
        let blocking: Vec<gdl_syntax::Diagnostic> = checked.blocking_errors().cloned().collect();
        if !blocking.is_empty() {
            return Err(super::BuildError::Invalid(blocking));
        }
        crate::gdl3::KnowsRefused::check(&checked.program)
            .map_err(|e| super::BuildError::Unsupported(e.to_string()))?;
        JoinMachine::build(&checked.program, limits).map_err(super::BuildError::Unsupported)
    }

    /// Builds the join tier for a program without blocking errors. `Err` says why it cannot.
    fn build(program: &Program, limits: JoinLimits) -> std::result::Result<JoinMachine, String> {
        let started = Instant::now();
        let mut store = TermStore::new();
        let roles = super::roles_of(program, &mut store);
        let mut open_facts: Vec<(RelId, String)> = Vec::new();
        let rules = flatten_with(program, &mut store, 4096, Some(&mut open_facts))
            .map_err(|e| e.to_string())?;
        let n = program.relations.len();
        let true_rel = program.reserved(Reserved::True);
        let does_rel = program.reserved(Reserved::Does);
        let mut dynamic = dynamic_relations(program, &rules);

        // 1. The static relations, exactly, component by component. A component over its
        //    budget (a relation of every pair of cells, say) is left to be computed like a
        //    dynamic relation, only where demanded, question by question; so is every
        //    component that reads it.
        let mut db = Db::new(store, program.relations.iter().map(|r| r.arity as usize));
        static_relations(
            program,
            &rules,
            &open_facts,
            &mut db,
            &mut dynamic,
            &limits,
            started,
        )?;

        // 2. The dynamic rules, rewritten by magic sets until the result is stratified.
        let dyn_rules: Vec<FlatRule> = rules
            .iter()
            .filter(|r| dynamic[r.head.rel as usize])
            .cloned()
            .collect();
        let mut full: Vec<bool> = (0..n)
            .map(|r| !dynamic[r] || program.reserved_of(r as RelId).is_some())
            .collect();
        let full_before = full.clone();
        let (rewritten, order) = stratified(program, &dyn_rules, &mut full)?;
        heads_bound(program, &rewritten, &open_facts)?;
        for rel in &rewritten.new {
            db.rels.push(Relation::new(rel.arity));
        }
        let total = db.rels.len();
        let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); total];
        for (k, rule) in rewritten.rules.iter().enumerate() {
            rules_of[rule.head.rel as usize].push(k);
        }
        // The rules in the order of their components, each component's together.
        let mut comps = Vec::new();
        let mut comp_index = vec![u32::MAX; total];
        let mut ordered: Vec<FlatRule> = Vec::with_capacity(rewritten.rules.len());
        for members in order {
            let start = ordered.len();
            for &m in &members {
                ordered.extend(
                    rules_of[m as usize]
                        .iter()
                        .map(|&k| rewritten.rules[k].clone()),
                );
            }
            if ordered.len() == start {
                continue;
            }
            for &m in &members {
                comp_index[m as usize] = comps.len() as u32;
            }
            comps.push(Comp {
                members,
                rules: start..ordered.len(),
            });
        }
        // The components each question needs.
        let asks = [
            program.reserved(Reserved::Legal),
            program.reserved(Reserved::Next),
            program.reserved(Reserved::Terminal),
            program.reserved(Reserved::Goal),
            program.reserved(Reserved::Sees),
            program.reserved(Reserved::Base),
            program.reserved(Reserved::Input),
        ];
        let needs = asks.map(|rel| {
            needed_components(rel, comps.len(), &comp_index, &rules_of, &rewritten.rules)
        });
        let mut depends_on_does = vec![false; total];
        {
            let succ = readers(&rewritten.rules, total);
            let mut stack: Vec<u32> = does_rel.into_iter().collect();
            while let Some(r) = stack.pop() {
                if std::mem::replace(&mut depends_on_does[r as usize], true) {
                    continue;
                }
                stack.extend(succ[r as usize].iter().copied());
            }
        }
        let on_does: Vec<u32> = (0..total as u32)
            .filter(|&r| depends_on_does[r as usize])
            .collect();
        let comp_on_does: Vec<bool> = comps
            .iter()
            .map(|c| c.members.iter().any(|&m| depends_on_does[m as usize]))
            .collect();
        let dynamic_rels: Vec<u32> = (0..total as u32)
            .filter(|&r| (r as usize) >= n || dynamic[r as usize])
            .collect();
        let head_vars = ordered.iter().map(FlatRule::head_vars).collect();
        let initial = {
            let mut fluents: Vec<TermId> = match program.reserved(Reserved::Init) {
                Some(init) => {
                    let rel = &db.rels[init as usize];
                    (0..rel.len()).map(|t| rel.tuple(t)[0]).collect()
                }
                None => Vec::new(),
            };
            fluents.sort_unstable();
            fluents.dedup();
            JoinState(fluents.into())
        };
        Ok(JoinMachine {
            db,
            symbols: program.symbols.clone(),
            roles,
            limits,
            rules: ordered,
            head_vars,
            done: vec![false; comps.len()],
            comps,
            needs,
            dynamic: dynamic_rels,
            forced_full: (0..n as RelId)
                .filter(|&r| full[r as usize] && !full_before[r as usize])
                .map(|r| program.describe(r))
                .collect(),
            on_does,
            comp_on_does,
            plans: Plans::default(),
            true_rel,
            does_rel,
            asks,
            initial,
            loaded: None,
            until: None,
        })
    }

    /// How many rules and components the rewritten program has.
    pub fn size(&self) -> (usize, usize) {
        (self.rules.len(), self.comps.len())
    }

    /// The relations computed in full, though not asked about, to keep the rewritten program
    /// stratified.
    pub fn forced_full(&self) -> &[String] {
        &self.forced_full
    }

    /// Sets a deadline for every question (questions running then fail with a budget error).
    pub fn set_until(&mut self, until: Option<Instant>) {
        self.until = until;
    }

    /// Loads a state, and a joint move or none, into `true` and `does`.
    ///
    /// What is computed for a state stays while only the joint move changes, except what
    /// depends on `does` (directly or through a demand); a question about the state alone may
    /// be answered with any joint move loaded (a part computed where more is demanded has only
    /// true atoms, and every atom the question demands).
    fn load(&mut self, state: &JoinState, joint: Option<&[TermId]>) {
        if let Some(l) = &self.loaded
            && l.state == *state
        {
            if joint.is_none() || l.joint.as_deref() == joint {
                return;
            }
            for &r in &self.on_does {
                self.db.rels[r as usize].clear();
            }
            for (c, done) in self.done.iter_mut().enumerate() {
                *done &= !self.comp_on_does[c];
            }
            self.load_joint(joint);
            if let Some(l) = &mut self.loaded {
                l.joint = joint.map(<[TermId]>::to_vec);
            }
            return;
        }
        for &r in &self.dynamic {
            self.db.rels[r as usize].clear();
        }
        self.done.iter_mut().for_each(|d| *d = false);
        if let Some(t) = self.true_rel {
            let rel = &mut self.db.rels[t as usize];
            for &f in state.fluents() {
                rel.insert(&[f]);
            }
            rel.refresh(&self.db.store);
        }
        self.load_joint(joint);
        self.loaded = Some(Loaded {
            state: state.clone(),
            joint: joint.map(<[TermId]>::to_vec),
        });
    }

    /// Puts a joint move in `does` (which is empty).
    fn load_joint(&mut self, joint: Option<&[TermId]>) {
        if let (Some(d), Some(joint)) = (self.does_rel, joint) {
            let rel = &mut self.db.rels[d as usize];
            for (&role, &m) in self.roles.iter().zip(joint) {
                rel.insert(&[role, m]);
            }
            rel.refresh(&self.db.store);
        }
    }

    /// Evaluates what the question needs; returns its relation.
    fn ask(&mut self, ask: Ask) -> Result<Option<RelId>> {
        let Some(rel) = self.asks[ask as usize] else {
            return Ok(None);
        };
        let started = Instant::now();
        let own = self.limits.time.and_then(|t| started.checked_add(t));
        let deadline = match (own, self.until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let budget = Budget {
            max_tuples: self.limits.max_tuples,
            max_depth: self.limits.max_depth,
            max_work: self.limits.max_work,
            deadline,
            cancel: None,
        };
        self.db.reset_work();
        let mut tuples = 0usize;
        for i in 0..self.needs[ask as usize].len() {
            let c = self.needs[ask as usize][i] as usize;
            if self.done[c] {
                continue;
            }
            if let Err(stop) = self.evaluate(c, &budget, &mut tuples) {
                // Half-computed relations: nothing loaded can be trusted.
                self.loaded = None;
                return Err(match stop {
                    Stop::Unsafe => ReasonError::Evaluation(stop.to_string()),
                    _ => ReasonError::Budget(stop.to_string()),
                });
            }
            self.done[c] = true;
        }
        Ok(Some(rel))
    }

    /// Evaluates a component semi-naively to its fixpoint, with the plans kept.
    fn evaluate(
        &mut self,
        c: usize,
        budget: &Budget,
        tuples: &mut usize,
    ) -> std::result::Result<(), Stop> {
        let comp = &self.comps[c];
        let range = comp.rules.clone();
        let kept = Kept {
            first: range.start,
            head_vars: &self.head_vars[range.clone()],
            plans: &mut self.plans,
        };
        fixpoint(
            &mut self.db,
            &self.rules[range],
            &comp.members,
            &|_: u32| true,
            budget,
            tuples,
            Some(kept),
        )
    }

    /// A static relation's tuples (`base`, `input`): computed when the machine was built, or,
    /// when too large for that, now (in any state: they depend on none).
    fn static_ask(&mut self, ask: Ask) -> Result<Option<RelId>> {
        if self.asks[ask as usize].is_some() && !self.needs[ask as usize].is_empty() {
            if self.loaded.is_none() {
                let initial = self.initial.clone();
                self.load(&initial, None);
            }
            return self.ask(ask);
        }
        Ok(self.asks[ask as usize])
    }

    fn tuples(&self, rel: RelId) -> impl Iterator<Item = &[TermId]> {
        let r = &self.db.rels[rel as usize];
        (0..r.len()).map(move |t| r.tuple(t))
    }

    /// Argument 1 of the tuples of `rel` whose argument 0 is the role, sorted.
    fn of_role(&self, rel: Option<RelId>, role: RoleIndex) -> Result<Vec<TermId>> {
        let r = role_term(&self.roles, role)?;
        let Some(rel) = rel else {
            return Ok(Vec::new());
        };
        let mut out: Vec<TermId> = self
            .tuples(rel)
            .filter(|t| t[0] == r)
            .map(|t| t[1])
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

impl StateMachine for JoinMachine {
    type State = JoinState;

    fn roles(&self) -> &[TermId] {
        &self.roles
    }

    fn terms(&self) -> &TermStore {
        &self.db.store
    }

    fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        self.db.store.parse(&mut self.symbols, text)
    }

    fn initial_state(&mut self) -> Result<JoinState> {
        Ok(self.initial.clone())
    }

    fn fluents(&self, state: &JoinState) -> Vec<TermId> {
        state.fluents().to_vec()
    }

    fn legal_moves(&mut self, state: &JoinState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.load(state, None);
        let rel = self.ask(Ask::Legal)?;
        self.of_role(rel, role)
    }

    fn next_state(&mut self, state: &JoinState, joint: &[TermId]) -> Result<JoinState> {
        check_joint(&self.roles, joint)?;
        self.load(state, Some(joint));
        let Some(rel) = self.ask(Ask::Next)? else {
            return Ok(JoinState(Arc::new([])));
        };
        let mut fluents: Vec<TermId> = self.tuples(rel).map(|t| t[0]).collect();
        fluents.sort_unstable();
        fluents.dedup();
        Ok(JoinState(fluents.into()))
    }

    fn is_terminal(&mut self, state: &JoinState) -> Result<bool> {
        self.load(state, None);
        Ok(match self.ask(Ask::Terminal)? {
            Some(rel) => self.db.rels[rel as usize].len() > 0,
            None => false,
        })
    }

    fn goal_values(&mut self, state: &JoinState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.load(state, None);
        let rel = self.ask(Ask::Goal)?;
        self.of_role(rel, role)
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        let Some(base) = self.static_ask(Ask::Base)? else {
            return Ok(None);
        };
        let mut out: Vec<TermId> = self.tuples(base).map(|t| t[0]).collect();
        out.sort_unstable();
        out.dedup();
        Ok(Some(out))
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        let Some(input) = self.static_ask(Ask::Input)? else {
            return Ok(None);
        };
        self.of_role(Some(input), role).map(Some)
    }

    fn has_sees(&self) -> bool {
        self.asks[Ask::Sees as usize].is_some()
    }

    /// One playout at a time; with a deadline, every question is cut short at it.
    fn playouts(
        &mut self,
        state: &JoinState,
        until: Until,
        max_steps: usize,
        rng: &mut impl rand::Rng,
    ) -> Result<Batch> {
        if let Until::Deadline(t) = until {
            self.until = Some(t);
        }
        let batch = crate::machine::sequential_playouts(self, state, until, max_steps, rng);
        self.until = None;
        batch
    }

    fn percepts(
        &mut self,
        state: &JoinState,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        check_joint(&self.roles, joint)?;
        self.load(state, Some(joint));
        let rel = self.ask(Ask::Sees)?;
        self.of_role(rel, role)
    }
}

/// The components (of `comps`) a question about `rel` needs: those of the relations its
/// rules read, transitively.
fn needed_components(
    rel: Option<RelId>,
    comps: usize,
    comp_index: &[u32],
    rules_of: &[Vec<usize>],
    rules: &[FlatRule],
) -> Vec<u32> {
    let mut seen = vec![false; comps];
    let mut stack: Vec<u32> = rel.into_iter().collect();
    let mut visited = vec![false; comp_index.len()];
    while let Some(r) = stack.pop() {
        if std::mem::replace(&mut visited[r as usize], true) {
            continue;
        }
        let c = comp_index[r as usize];
        if c != u32::MAX {
            seen[c as usize] = true;
        }
        for &k in &rules_of[r as usize] {
            for lit in &rules[k].body {
                if let Lit::Pos(a) | Lit::Neg(a) = lit {
                    stack.push(a.rel);
                }
            }
        }
    }
    (0..comps as u32)
        .filter(|&c| seen[c as usize])
        .collect::<Vec<u32>>()
}

/// The static relations, exactly, component by component (see [`JoinMachine::build`]'s
/// first step): a component over its budget, and every component that reads it, is left to
/// be computed where demanded, as a dynamic relation (`dynamic` says so from then on).
fn static_relations(
    program: &Program,
    rules: &[FlatRule],
    open_facts: &[(RelId, String)],
    db: &mut Db,
    dynamic: &mut [bool],
    limits: &JoinLimits,
    started: Instant,
) -> std::result::Result<(), String> {
    let n = program.relations.len();
    let static_rules: Vec<&FlatRule> = rules
        .iter()
        .filter(|r| !dynamic[r.head.rel as usize])
        .collect();
    let succ = readers(rules, n);
    let mut tuples = 0usize;
    let all = |_: u32| true;
    let mut lazy = vec![false; n];
    for members in gdl_check::scc::components_of_lists(&succ).topological() {
        if members.iter().any(|&m| dynamic[m as usize]) {
            continue;
        }
        let comp_rules: Vec<&FlatRule> = static_rules
            .iter()
            .copied()
            .filter(|r| members.contains(&r.head.rel))
            .collect();
        if comp_rules.is_empty() {
            continue;
        }
        for rule in &comp_rules {
            for lit in &rule.body {
                if let Lit::Neg(a) = lit
                    && members.contains(&a.rel)
                {
                    return Err(format!(
                        "`{}` depends on its own negation",
                        program.describe(a.rel)
                    ));
                }
            }
        }
        // A relation with a fact with variables has infinitely many tuples.
        let open = members
            .iter()
            .any(|&m| open_facts.iter().any(|&(r, _)| r == m));
        let reads_lazy = open
            || comp_rules.iter().any(|r| {
                r.body
                    .iter()
                    .any(|l| matches!(l, Lit::Pos(a) | Lit::Neg(a) if lazy[a.rel as usize]))
            });
        if !reads_lazy {
            let before = tuples;
            let budget = Budget {
                max_tuples: (before + limits.max_static_component).min(limits.max_static),
                max_depth: limits.max_depth,
                max_work: limits.max_work,
                deadline: Some(started + limits.build_time),
                cancel: None,
            };
            db.reset_work();
            match fixpoint(db, &comp_rules, members, &all, &budget, &mut tuples, None) {
                Ok(()) => continue,
                Err(Stop::TooManyTuples(_) | Stop::TooMuchWork(_)) => {
                    for &m in members {
                        db.rels[m as usize] = Relation::new(db.rels[m as usize].arity);
                    }
                    tuples = before;
                }
                Err(stop) => {
                    return Err(format!("computing the static relations: {stop}"));
                }
            }
        }
        for &m in members {
            lazy[m as usize] = true;
            dynamic[m as usize] = true;
        }
    }
    // What the machine reads once must be computed once.
    for r in [Reserved::Role, Reserved::Init] {
        if let Some(rel) = program.reserved(r)
            && lazy[rel as usize]
        {
            return Err(format!(
                "`{}` has more than {} tuples",
                program.describe(rel),
                limits.max_static_component
            ));
        }
    }
    Ok(())
}

/// The dynamic rules rewritten by magic sets, and their components in evaluation order:
/// rewritten again, with more relations computed in `full`, until the result is stratified.
fn stratified(
    program: &Program,
    dyn_rules: &[FlatRule],
    full: &mut [bool],
) -> std::result::Result<(super::demand::Rewritten, Vec<Vec<u32>>), String> {
    let n = program.relations.len();
    loop {
        let rewritten = super::demand::rewrite_with(dyn_rules, full, n as u32, true);
        let total = n + rewritten.new.len();
        let succ = readers(&rewritten.rules, total);
        let scc = gdl_check::scc::components_of_lists(&succ);
        let comp_of: Vec<u32> = (0..total as u32)
            .map(|v| scc.topological_index(v))
            .collect();
        let order: Vec<Vec<u32>> = scc.topological().map(<[u32]>::to_vec).collect();
        // A relation called with no argument bound is computed in full for that call
        // anyway: computed in full for every call, its demand does not join its callers'
        // (which can make a negation circular where the rules are stratified).
        let mut again = false;
        for rel in &rewritten.new {
            if let (Some(of), true) = (rel.part_of, rel.unbound) {
                again |= !std::mem::replace(&mut full[of as usize], true);
            }
        }
        if again {
            continue;
        }
        // A negated call within its own component: demands merged from several callers
        // made the cycle (the rules are stratified). Every relation of that component
        // computed in parts is computed in full instead, which removes its demands.
        let mut handled = vec![false; order.len()];
        for rule in &rewritten.rules {
            for lit in &rule.body {
                let Lit::Neg(a) = lit else { continue };
                let c = comp_of[a.rel as usize];
                if c != comp_of[rule.head.rel as usize]
                    || std::mem::replace(&mut handled[c as usize], true)
                {
                    continue;
                }
                // The negated relation computed in full first (its own demand goes); if
                // it is already, every part of the component.
                let original = original(a.rel, n, &rewritten.new);
                again = true;
                if (original as usize) < n && !full[original as usize] {
                    full[original as usize] = true;
                    continue;
                }
                let mut broken = false;
                for &m in &order[c as usize] {
                    if let Some(of) = (m as usize)
                        .checked_sub(n)
                        .and_then(|i| rewritten.new[i].part_of)
                    {
                        broken |= !std::mem::replace(&mut full[of as usize], true);
                    }
                }
                if !broken {
                    return Err(format!(
                        "`{}` depends on its own negation",
                        program.describe(original)
                    ));
                }
            }
        }
        if !again {
            return Ok((rewritten, order));
        }
    }
}

/// Every variable of a head bound by a positive literal (its demand, for a fact with
/// variables); otherwise such a fact is called with an argument unbound.
fn heads_bound(
    program: &Program,
    rewritten: &super::demand::Rewritten,
    open_facts: &[(RelId, String)],
) -> std::result::Result<(), String> {
    let n = program.relations.len();
    for rule in &rewritten.rules {
        let mut bound = vec![false; rule.vars as usize];
        for lit in &rule.body {
            if let Lit::Pos(a) = lit {
                a.for_each_var(&mut |v| bound[v as usize] = true);
            }
        }
        let mut safe = true;
        rule.head.for_each_var(&mut |v| safe &= bound[v as usize]);
        if !safe {
            let original = original(rule.head.rel, n, &rewritten.new);
            let fact = open_facts
                .iter()
                .find(|&&(r, _)| r == original)
                .map_or_else(|| program.describe(original), |(_, text)| text.clone());
            return Err(format!(
                "the fact `{fact}` has variables and is called with one not bound: it stands for infinitely many facts"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::ReferenceMachine;
    use crate::trace::describe;
    use rand::SeedableRng;
    use rand::seq::IndexedRandom;

    fn joins(text: &str) -> JoinMachine {
        JoinMachine::new(&gdl_check::check(text), JoinLimits::default())
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// Random playouts on both engines in lockstep: every state, legal move, terminal and goal
    /// the same; returns the number of steps compared.
    fn lockstep(text: &str, playouts: usize) -> usize {
        let mut j = joins(text);
        let mut r = ReferenceMachine::from_text(text).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut steps = 0;
        for _ in 0..playouts {
            let mut sj = j.initial_state().unwrap();
            let mut sr = r.initial_state().unwrap();
            for _ in 0..40 {
                let expected = describe(&mut r, &sr).unwrap();
                assert_eq!(describe(&mut j, &sj).unwrap(), expected);
                steps += 1;
                if expected.terminal || expected.legal.iter().any(Vec::is_empty) {
                    break;
                }
                let mut joint_j = Vec::new();
                let mut joint_r = Vec::new();
                for moves in &expected.legal {
                    let m = moves.choose(&mut rng).unwrap();
                    joint_j.push(j.intern(m).unwrap());
                    joint_r.push(r.intern(m).unwrap());
                }
                // The same state's questions asked again after a move (the state's relations
                // kept, those of the move computed for it).
                let next_j = j.next_state(&sj, &joint_j).unwrap();
                assert_eq!(describe(&mut j, &sj).unwrap(), expected);
                sj = next_j;
                sr = r.next_state(&sr, &joint_r).unwrap();
            }
        }
        steps
    }

    #[test]
    fn tic_tac_toe_plays_as_the_reference_engine_does() {
        assert!(lockstep(include_str!("../../../../games/tictactoe.kif"), 20) > 100);
    }

    /// `open` is recursive and negates `occupied`, whose demand comes from `open` itself: by
    /// magic sets that is a negation within a component (not stratified), so `occupied` is
    /// computed in full instead.
    const WALLS: &str = "
        (role r)
        (init (at 1)) (init (wall 4)) (init (step 0))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7)
        (<= (occupied ?x) (true (wall ?x)))
        (<= (open ?x ?y) (succ ?x ?y) (not (occupied ?y)))
        (<= (open ?x ?z) (open ?x ?y) (succ ?y ?z) (not (occupied ?z)))
        (<= (legal r (go ?y)) (true (at ?x)) (open ?x ?y))
        (<= (legal r (build ?y)) (true (at ?x)) (succ ?x ?y) (not (occupied ?y)))
        (<= (legal r (clear ?y)) (true (wall ?y)))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= (next (at ?x)) (true (at ?x)) (not (moved)))
        (<= moved (does r (go ?y)))
        (<= (next (wall ?y)) (does r (build ?y)))
        (<= (next (wall ?x)) (true (wall ?x)) (not (does r (clear ?x))))
        (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
        (<= terminal (true (at 7)))
        (<= terminal (true (step 7)))
        (<= (goal r 100) (true (at 7)))
        (<= (goal r 0) (not (true (at 7))))";

    #[test]
    fn a_negation_that_demand_would_make_circular_is_computed_in_full() {
        let j = joins(WALLS);
        // (`moved` has no arguments: any call of it is a call with none bound.)
        assert_eq!(j.forced_full, ["occupied/1", "moved/0"]);
        assert!(lockstep(WALLS, 30) > 60);
    }

    #[test]
    fn a_question_over_its_budget_is_an_error_and_the_machine_stays_usable() {
        let text = include_str!("../../../../games/tictactoe.kif");
        let mut j = JoinMachine::new(
            &gdl_check::check(text),
            JoinLimits {
                max_tuples: 3,
                ..JoinLimits::default()
            },
        )
        .unwrap();
        let s0 = j.initial_state().unwrap();
        let err = j.legal_moves(&s0, 0).unwrap_err();
        assert!(
            matches!(&err, ReasonError::Budget(m) if m.contains("more than 3 tuples")),
            "{err}"
        );
        // Within its budget again, the same question is answered.
        j.limits.max_tuples = 1000;
        assert_eq!(j.legal_moves(&s0, 0).unwrap().len(), 9);
    }
}
