//! The reference engine: the semantics of §5 of the specification, evaluated bottom-up over
//! non-ground rules, clear rather than clever.
//!
//! - Relations are computed component by component in dependency order (stratified
//!   negation), recursive components by semi-naive iteration.
//! - A component whose relations depend on their own negation (Definition 8 forbids it, yet
//!   real games define `(goal robot 100)` from `(not (goal robot 0))`) is evaluated by the
//!   alternating fixpoint, which gives the one model of a locally stratified program and
//!   reports the atoms that have none.
//! - Relations that depend on neither `true` nor `does` are computed once (in full when the
//!   machine is built, where they are not too large, and kept sorted); those that depend
//!   on `true` for each state (with no moves: `does` is empty, as when the Game Manager asks
//!   for legal moves); those that depend on `does` again for each joint move.
//! - A fact with variables (`(leq ?a ?a)`) holds for every value: literals unify with it.

mod compile;
mod eval;

use std::sync::Arc;

use gdl_check::{Checked, RelId, Reserved, Symbols};
use gdl_syntax::Diagnostic;
use rand::Rng;
use rustc_hash::FxHashMap;

use self::compile::{Compiled, compile, tuple};
pub use self::eval::Limits;
use self::eval::{Ctx, Evaluator, Inputs, MOVES, STATE};
use crate::machine::{
    Batch, ReasonError, Result, RoleIndex, StateMachine, Until, check_joint, role_term,
};
use crate::terms::{TermError, TermId, TermStore};

/// A state: the fluents true in it, sorted by id.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ReferenceState(Arc<[TermId]>);

impl ReferenceState {
    pub fn fluents(&self) -> &[TermId] {
        &self.0
    }
}

pub struct ReferenceMachine {
    compiled: Compiled,
    eval: Evaluator,
    /// The fluents of the current state and the joint move, as `true` and `does` tuples.
    inputs: Inputs,
    roles: Vec<TermId>,
    reserved: [Option<RelId>; 11],
    /// The state the evaluator's inputs and state tables are for.
    current: Option<ReferenceState>,
    /// The `knows` tuples that hold (GDL-III), sorted: set by the knowledge machine for the
    /// history it asks about, empty otherwise.
    knows: Arc<[TermId]>,
}

/// How many tuples a static relation (with what it calls) may have to be computed in full when
/// the machine is built, and how long that may take for all of them
/// ([`Evaluator::index_static`]).
const STATIC_ANSWERS: usize = 500_000;
const STATIC_TIME: std::time::Duration = std::time::Duration::from_secs(1);

fn reserved_index(r: Reserved) -> usize {
    Reserved::ALL.iter().position(|&x| x == r).expect("listed")
}

impl ReferenceMachine {
    /// Builds the machine for a checked description, or returns the errors that leave it
    /// without an agreed meaning.
    pub fn new(checked: &Checked<'_>) -> std::result::Result<ReferenceMachine, Vec<Diagnostic>> {
        ReferenceMachine::with_limits(checked, Limits::default())
    }

    /// [`ReferenceMachine::new`] with budgets for every question.
    pub fn with_limits(
        checked: &Checked<'_>,
        limits: Limits,
    ) -> std::result::Result<ReferenceMachine, Vec<Diagnostic>> {
        let blocking: Vec<Diagnostic> = checked.blocking_errors().cloned().collect();
        if !blocking.is_empty() {
            return Err(blocking);
        }
        crate::gdl3::KnowsRefused::check(&checked.program).map_err(|e| vec![e.diagnostic()])?;
        ReferenceMachine::build_checked(checked, limits)
    }

    /// The machine for a description without blocking errors, `knows` or not: the knowledge
    /// machine gives the `knows` tuples of each history ([`ReferenceMachine::set_knowledge`]).
    pub(crate) fn build_checked(
        checked: &Checked<'_>,
        limits: Limits,
    ) -> std::result::Result<ReferenceMachine, Vec<Diagnostic>> {
        ReferenceMachine::build(checked, limits).map_err(|e| {
            vec![Diagnostic::error(
                "R001",
                gdl_syntax::Span::new(0, 0),
                e.to_string(),
            )]
        })
    }

    /// Parses and checks `text`, then builds the machine.
    pub fn from_text(text: &str) -> std::result::Result<ReferenceMachine, Vec<Diagnostic>> {
        ReferenceMachine::new(&gdl_check::check(text))
    }

    fn build(checked: &Checked<'_>, limits: Limits) -> Result<ReferenceMachine> {
        let program = &checked.program;
        let mut store = TermStore::new();
        let compiled = compile(program, &checked.graph, &mut store)?;
        let mut reserved = [None; 11];
        for r in Reserved::ALL {
            reserved[reserved_index(r)] = program.reserved(r);
        }
        let mut eval = Evaluator::new(
            store,
            program.symbols.clone(),
            limits,
            compiled.members.len(),
        );
        eval.index_static(&compiled, STATIC_ANSWERS, STATIC_TIME);
        let mut machine = ReferenceMachine {
            compiled,
            eval,
            inputs: Inputs::default(),
            roles: Vec::new(),
            reserved,
            current: None,
            knows: Arc::new([]),
        };
        // Roles in the order of their facts, each once.
        if let Some(role) = machine.rel(Reserved::Role) {
            for rule in program
                .rules
                .iter()
                .filter(|r| r.head.rel == role && r.body.is_empty())
            {
                if let [term] = &rule.head.args[..]
                    && term.is_ground()
                {
                    let text = program.term_text(rule, term);
                    let id = machine
                        .intern(&text)
                        .map_err(|e| ReasonError::Invalid(e.to_string()))?;
                    if !machine.roles.contains(&id) {
                        machine.roles.push(id);
                    }
                }
            }
        }
        Ok(machine)
    }

    /// Sets the budgets for the following questions.
    pub fn set_limits(&mut self, limits: Limits) {
        self.eval.limits = limits;
    }

    /// Sets a deadline for every following question (`None`: none beyond each question's
    /// own time): a question still running then fails with a budget error.
    pub fn set_until(&mut self, until: Option<std::time::Instant>) {
        self.eval.until = until;
    }

    fn rel(&self, r: Reserved) -> Option<RelId> {
        self.reserved[reserved_index(r)]
    }

    /// Runs a question; after an error, every table is dropped (some may be half computed).
    fn ask<T>(&mut self, question: impl FnOnce(&mut ReferenceMachine) -> Result<T>) -> Result<T> {
        self.eval.start();
        let result = question(self);
        if result.is_err() {
            self.eval.reset();
            self.current = None;
        }
        result
    }

    /// Sets the `knows` tuples that hold (sorted), for the following questions: a history's
    /// knowledge, given by the knowledge machine.
    pub(crate) fn set_knowledge(&mut self, knows: Arc<[TermId]>) {
        if knows != self.knows {
            self.knows = knows;
            self.current = None;
        }
    }

    /// The terms, to build `knows` tuples in.
    pub(crate) fn store_mut(&mut self) -> &mut TermStore {
        &mut self.eval.store
    }

    /// Every tuple of `rel` in `state` (with the knowledge set), in id order.
    pub(crate) fn tuples(&mut self, state: &ReferenceState, rel: RelId) -> Result<Vec<TermId>> {
        self.ensure_state(state);
        let arity = self.compiled.arity[rel as usize];
        self.ask(|m| m.query(rel, &vec![None; arity]))
    }

    /// Makes the evaluator answer about `state` (with no moves).
    fn ensure_state(&mut self, state: &ReferenceState) {
        if self.current.as_ref() == Some(state) {
            return;
        }
        self.eval.clear_from(STATE);
        let mut inputs = Inputs::default();
        if let Some(true_rel) = self.rel(Reserved::True) {
            let name = self.compiled.names[true_rel as usize];
            let mut fluents: FxHashMap<_, Vec<TermId>> = FxHashMap::default();
            let mut by_argument: FxHashMap<_, Vec<TermId>> = FxHashMap::default();
            for &fluent in state.fluents() {
                let symbol = self.eval.store.symbol(fluent);
                let t = tuple(&mut self.eval.store, name, &[fluent]);
                fluents.entry(symbol).or_default().push(t);
                for (i, &arg) in self.eval.store.args(fluent).iter().enumerate() {
                    by_argument
                        .entry((symbol, i as u32, arg))
                        .or_default()
                        .push(t);
                }
            }
            inputs.by_argument = by_argument;
            inputs.fluents = fluents;
            inputs.state = state.fluents().iter().copied().collect();
        }
        for &t in self.knows.iter() {
            let arity = self.eval.store.args(t).len();
            if let Some(&rel) = self
                .compiled
                .knows_rels
                .iter()
                .find(|&&r| self.compiled.arity[r as usize] == arity)
            {
                inputs.knows.entry(rel).or_default().push(t);
            }
        }
        self.inputs = inputs;
        self.current = Some(state.clone());
    }

    /// Sets the moves `does` holds (none for questions about a state).
    fn set_moves(&mut self, joint: Option<&[TermId]>) {
        self.eval.clear_from(MOVES);
        let mut does = Vec::new();
        if let (Some(joint), Some(does_rel)) = (joint, self.rel(Reserved::Does)) {
            let name = self.compiled.names[does_rel as usize];
            for (&role, &m) in self.roles.iter().zip(joint) {
                does.push(tuple(&mut self.eval.store, name, &[role, m]));
            }
        }
        self.inputs.does = does;
    }

    /// Every tuple of `rel` matching `args` (`None`: any value), in id order.
    fn query(&mut self, rel: RelId, args: &[Option<TermId>]) -> Result<Vec<TermId>> {
        let cx = Ctx {
            compiled: &self.compiled,
            inputs: &self.inputs,
        };
        self.eval.query(&cx, rel, args)
    }

    /// Argument `i` of every tuple of `rel` matching `args`, in the tuples' order.
    fn arguments(&mut self, rel: RelId, args: &[Option<TermId>], i: usize) -> Result<Vec<TermId>> {
        let tuples = self.query(rel, args)?;
        Ok(tuples.iter().map(|&t| self.eval.store.args(t)[i]).collect())
    }

    /// The state made of the first arguments of `rel`'s tuples (`init`, `next`).
    fn state_of(&mut self, rel: RelId) -> Result<ReferenceState> {
        let mut fluents = self.arguments(rel, &[None], 0)?;
        fluents.sort_unstable();
        fluents.dedup();
        Ok(ReferenceState(fluents.into()))
    }

    /// The second arguments of the `relation` tuples whose first argument is the role.
    fn of_role(&mut self, r: Reserved, role: RoleIndex) -> Result<Vec<TermId>> {
        let role_term = role_term(&self.roles, role)?;
        let Some(rel) = self.rel(r) else {
            return Ok(Vec::new());
        };
        self.arguments(rel, &[Some(role_term), None], 1)
    }
}

impl StateMachine for ReferenceMachine {
    type State = ReferenceState;

    fn roles(&self) -> &[TermId] {
        &self.roles
    }

    fn terms(&self) -> &TermStore {
        &self.eval.store
    }

    fn symbols(&self) -> &Symbols {
        &self.eval.symbols
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        let eval = &mut self.eval;
        eval.store.parse(&mut eval.symbols, text)
    }

    fn initial_state(&mut self) -> Result<ReferenceState> {
        let Some(init) = self.rel(Reserved::Init) else {
            return Ok(ReferenceState(Arc::new([])));
        };
        self.ask(|m| m.state_of(init))
    }

    fn fluents(&self, state: &ReferenceState) -> Vec<TermId> {
        state.fluents().to_vec()
    }

    fn legal_moves(&mut self, state: &ReferenceState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.ensure_state(state);
        self.ask(|m| m.of_role(Reserved::Legal, role))
    }

    fn next_state(&mut self, state: &ReferenceState, joint: &[TermId]) -> Result<ReferenceState> {
        check_joint(&self.roles, joint)?;
        self.ensure_state(state);
        let Some(next) = self.rel(Reserved::Next) else {
            return Ok(ReferenceState(Arc::new([])));
        };
        self.set_moves(Some(joint));
        let result = self.ask(|m| m.state_of(next));
        self.set_moves(None);
        result
    }

    fn has_sees(&self) -> bool {
        self.rel(Reserved::Sees).is_some()
    }

    fn percepts(
        &mut self,
        state: &ReferenceState,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        check_joint(&self.roles, joint)?;
        self.ensure_state(state);
        role_term(&self.roles, role)?;
        if self.rel(Reserved::Sees).is_none() {
            return Ok(Vec::new());
        }
        self.set_moves(Some(joint));
        let result = self.ask(|m| {
            let mut seen = m.of_role(Reserved::Sees, role)?;
            seen.sort_unstable();
            seen.dedup();
            Ok(seen)
        });
        self.set_moves(None);
        result
    }

    fn is_terminal(&mut self, state: &ReferenceState) -> Result<bool> {
        self.ensure_state(state);
        let Some(terminal) = self.rel(Reserved::Terminal) else {
            return Ok(false);
        };
        self.ask(|m| Ok(!m.query(terminal, &[])?.is_empty()))
    }

    fn goal_values(&mut self, state: &ReferenceState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.ensure_state(state);
        self.ask(|m| m.of_role(Reserved::Goal, role))
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        let Some(base) = self.rel(Reserved::Base) else {
            return Ok(None);
        };
        self.ask(|m| Ok(Some(m.state_of(base)?.fluents().to_vec())))
    }

    /// One playout at a time; with a deadline, every question is cut short at it, so that a
    /// game whose single step takes long (millions of legal moves) still ends the batch on time.
    fn playouts(
        &mut self,
        state: &ReferenceState,
        until: Until,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Batch> {
        if let Until::Deadline(t) = until {
            self.eval.until = Some(t);
        }
        let batch = crate::machine::sequential_playouts(self, state, until, max_steps, rng);
        self.eval.until = None;
        batch
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        if self.rel(Reserved::Input).is_none() {
            return Ok(None);
        }
        self.ask(|m| {
            let mut moves = m.of_role(Reserved::Input, role)?;
            moves.sort_unstable();
            moves.dedup();
            Ok(Some(moves))
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    use super::*;

    const TICTACTOE: &str = include_str!("../../../../games/tictactoe.kif");

    fn text(m: &ReferenceMachine, terms: &[TermId]) -> Vec<String> {
        let mut out: Vec<String> = terms
            .iter()
            .map(|&t| m.terms().text(m.symbols(), t))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn tictactoe_plays_by_its_rules() {
        let mut m = ReferenceMachine::from_text(TICTACTOE).unwrap();
        assert_eq!(text(&m, m.roles()), ["o", "x"]);
        assert_eq!(
            m.terms().text(m.symbols(), m.roles()[0]),
            "x",
            "roles in description order"
        );
        let s0 = m.initial_state().unwrap();
        assert_eq!(s0.fluents().len(), 10);
        assert!(!m.is_terminal(&s0).unwrap());
        assert_eq!(m.legal_moves(&s0, 0).unwrap().len(), 9);
        let legal = m.legal_moves(&s0, 1).unwrap();
        assert_eq!(text(&m, &legal), ["wait"]);
        // x takes the top row while o plays elsewhere.
        let mut state = s0;
        for (x, o) in [("(play 1 1)", "(play 2 1)"), ("(play 1 2)", "(play 2 2)")] {
            let (x, wait, o) = (
                m.intern(x).unwrap(),
                m.intern("wait").unwrap(),
                m.intern(o).unwrap(),
            );
            state = m.next_state(&state, &[x, wait]).unwrap();
            state = m.next_state(&state, &[wait, o]).unwrap();
        }
        let x = m.intern("(play 1 3)").unwrap();
        let wait = m.intern("wait").unwrap();
        let end = m.next_state(&state, &[x, wait]).unwrap();
        assert!(m.is_terminal(&end).unwrap());
        assert_eq!(m.goals(&end).unwrap(), [100, 0]);
    }

    #[test]
    fn base_and_input_cover_every_fluent_and_move_of_random_games() {
        let mut m = ReferenceMachine::from_text(TICTACTOE).unwrap();
        let base = m.base_fluents().unwrap().expect("the game defines base");
        assert_eq!(base.len(), 3 * 3 * 3 + 2);
        let inputs: Vec<Vec<TermId>> = (0..2)
            .map(|r| m.input_moves(r).unwrap().expect("input"))
            .collect();
        assert!(inputs.iter().all(|i| i.len() == 10));
        let mut rng = SmallRng::seed_from_u64(5);
        for _ in 0..20 {
            let mut state = m.initial_state().unwrap();
            while !m.is_terminal(&state).unwrap() {
                assert!(
                    state
                        .fluents()
                        .iter()
                        .all(|f| base.binary_search(f).is_ok())
                );
                for (role, input) in inputs.iter().enumerate() {
                    let legal = m.legal_moves(&state, role).unwrap();
                    assert!(legal.iter().all(|mv| input.binary_search(mv).is_ok()));
                }
                let joint = m.random_joint_move(&state, &mut rng).unwrap();
                state = m.next_state(&state, &joint).unwrap();
            }
            let goals = m.goals(&state).unwrap();
            assert!(
                matches!(goals.as_slice(), [100, 0] | [0, 100] | [50, 50]),
                "{goals:?}"
            );
        }
    }

    #[test]
    fn a_game_without_base_or_input_says_so() {
        let mut m = ReferenceMachine::from_text(
            "(role r) (init p) (<= (legal r go) (true p)) (<= (next p) (true p)) (<= terminal (not (true p))) (<= (goal r 100) (true p))",
        )
        .unwrap();
        assert_eq!(m.base_fluents().unwrap(), None);
        assert_eq!(m.input_moves(0).unwrap(), None);
    }

    #[test]
    fn a_static_relation_is_computed_once_and_called_by_lookup() {
        // `pair` is computed when the machine is built, then every call with both arguments
        // bound is a lookup (no table). With a budget below its 6 tuples it is left to calls,
        // each with a table of its own, as before; the game plays the same either way.
        let game = "(role r) (init (at 1)) (init (count 0))
            (num 1) (num 2) (num 3) (succ 0 1) (succ 1 2) (succ 2 3)
            (<= (pair ?a ?b) (num ?a) (num ?b) (distinct ?a ?b))
            (<= (legal r (go ?b)) (true (at ?a)) (num ?b) (pair ?a ?b))
            (<= (next (at ?b)) (does r (go ?b)))
            (<= (next (count ?m)) (true (count ?n)) (succ ?n ?m))
            (<= terminal (true (count 3)))
            (<= (goal r 100) (true (at 1)))
            (<= (goal r 0) (not (true (at 1))))";
        let checked = gdl_check::check(game);
        let pair = checked.program.relation("pair", 2).expect("a relation");
        for budget in [STATIC_ANSWERS, 5] {
            let mut m = ReferenceMachine::new(&checked).unwrap();
            m.eval.index_static(&m.compiled, budget, STATIC_TIME);
            let indexed = budget > 6;
            assert_eq!(m.eval.static_state(pair), (indexed, 0));
            let mut state = m.initial_state().unwrap();
            let mut at = 1;
            while !m.is_terminal(&state).unwrap() {
                let legal = m.legal_moves(&state, 0).unwrap();
                let expected: Vec<String> = (1..=3)
                    .filter(|&b| b != at)
                    .map(|b| format!("(go {b})"))
                    .collect();
                assert_eq!(text(&m, &legal), expected);
                at = if at == 3 { 1 } else { at + 1 };
                let go = m.intern(&format!("(go {at})")).unwrap();
                state = m.next_state(&state, &[go]).unwrap();
            }
            assert_eq!(m.goals(&state).unwrap(), [100]);
            let (_, tables) = m.eval.static_state(pair);
            assert_eq!(tables == 0, indexed, "{tables} tables of pair");
        }
    }

    #[test]
    fn a_budget_error_leaves_the_machine_usable() {
        // `count` grows without end: the depth budget stops it, and the next question works.
        let game = "(role r) (init (n 0)) (<= (legal r go) (true (n ?x)))
            (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (big ?x)) (<= (goal r 0) (true (n ?x)))
            (<= (big (s ?x)) (true (n ?x)))";
        let mut m = ReferenceMachine::from_text(game).unwrap();
        m.set_limits(Limits {
            max_depth: 3,
            ..Limits::default()
        });
        let mut state = m.initial_state().unwrap();
        let go = m.intern("go").unwrap();
        let mut error = None;
        for _ in 0..6 {
            match m.next_state(&state, &[go]) {
                Ok(next) => state = next,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        assert!(matches!(error, Some(ReasonError::Budget(_))), "{error:?}");
        assert_eq!(m.legal_moves(&state, 0).unwrap(), [go]);
    }
}
