//! GDL-III's `knows`, reasoned exactly by the reference engine: a machine over histories.
//!
//! A state of the [`KnowledgeMachine`] is a history (the joint moves from the initial state, and
//! the state they lead to). The machine keeps, length by length, every history of legal joint
//! moves from the initial state ([`layer`]), with each role's class (histories with the same own
//! moves and percepts at every step) and the `knows` atoms that hold after each ([`atoms`]).
//! A question about a history (legal moves, next state, percepts, goals, terminal) is the
//! reference engine's question about its state, with its `knows` atoms given as the tuples of
//! `knows/1` and `knows/2`, as the fluents are of `true`. docs/gdl3.md describes the design.

mod atoms;
mod layer;
mod specs;

use std::sync::Arc;

use gdl_check::{Checked, Symbols};
use gdl_syntax::Diagnostic;

use self::layer::Layer;
pub use self::layer::TooManyHistories;
use self::specs::Spec;
use crate::machine::{ReasonError, Result, RoleIndex, StateMachine, check_joint};
use crate::reference::{Limits, ReferenceMachine, ReferenceState};
use crate::terms::{TermError, TermId, TermStore};

/// The knowledge machine's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnowledgeLimits {
    /// Histories of one length it may keep: beyond, questions fail with [`TooManyHistories`].
    pub max_histories: usize,
}

/// The default budget of histories per length.
pub const MAX_HISTORIES: usize = 100_000;

impl Default for KnowledgeLimits {
    fn default() -> KnowledgeLimits {
        KnowledgeLimits {
            max_histories: MAX_HISTORIES,
        }
    }
}

/// A history: the joint moves played from the initial state (one after the other, a move per
/// role each) and the state they lead to.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct History {
    moves: Arc<[TermId]>,
    state: ReferenceState,
}

impl History {
    /// The joint moves, one after the other.
    pub fn moves(&self) -> &[TermId] {
        &self.moves
    }

    pub fn state(&self) -> &ReferenceState {
        &self.state
    }
}

/// The reference engine over histories, for rules with `knows`.
pub struct KnowledgeMachine {
    inner: ReferenceMachine,
    specs: Vec<Spec>,
    /// The histories of each length computed so far, from 0.
    layers: Vec<Layer>,
    limits: KnowledgeLimits,
}

impl KnowledgeMachine {
    /// Builds the machine for a checked description (with `knows` or not), or returns the
    /// errors that leave it without an agreed meaning.
    pub fn new(
        checked: &Checked<'_>,
        limits: Limits,
        knowledge: KnowledgeLimits,
    ) -> std::result::Result<KnowledgeMachine, Vec<Diagnostic>> {
        let blocking: Vec<Diagnostic> = checked.blocking_errors().cloned().collect();
        if !blocking.is_empty() {
            return Err(blocking);
        }
        let mut inner = ReferenceMachine::build_checked(checked, limits)?;
        let specs = specs::specs(&checked.program, &checked.graph, &mut inner);
        Ok(KnowledgeMachine {
            inner,
            specs,
            layers: Vec::new(),
            limits: knowledge,
        })
    }

    /// Parses and checks `text`, then builds the machine with the default budgets.
    pub fn from_text(text: &str) -> std::result::Result<KnowledgeMachine, Vec<Diagnostic>> {
        KnowledgeMachine::new(
            &gdl_check::check(text),
            Limits::default(),
            KnowledgeLimits::default(),
        )
    }

    /// The reference engine's budgets for every question.
    pub fn set_limits(&mut self, limits: Limits) {
        self.inner.set_limits(limits);
    }

    /// A deadline for every following question (see [`ReferenceMachine::set_until`]).
    pub fn set_until(&mut self, until: Option<std::time::Instant>) {
        self.inner.set_until(until);
    }

    /// How many histories of each length were computed so far (from length 0).
    pub fn histories_per_length(&self) -> Vec<usize> {
        self.layers.iter().map(|l| l.entries.len()).collect()
    }

    /// The `knows` atoms that hold after `history`, as terms (`(knows R P)`, `(knows P)`).
    pub fn knows_atoms(&mut self, history: &History) -> Result<Vec<TermId>> {
        let (k, i) = self.find(history)?;
        Ok(self.layers[k].entries[i].knows.to_vec())
    }

    /// How many histories `role` cannot tell from `history` (itself included).
    pub fn class_size(&mut self, history: &History, role: RoleIndex) -> Result<usize> {
        crate::machine::role_term(self.inner.roles(), role)?;
        let (k, i) = self.find(history)?;
        let layer = &self.layers[k];
        let class = layer.entries[i].classes[role];
        Ok(layer
            .entries
            .iter()
            .filter(|e| e.classes[role] == class)
            .count())
    }

    fn length(&self, history: &History) -> usize {
        history.moves.len() / self.inner.roles().len().max(1)
    }

    /// Computes the layers up to `length`.
    fn ensure_layers(&mut self, length: usize) -> Result<()> {
        if self.layers.is_empty() {
            let s0 = self.inner.initial_state()?;
            let mut layer = Layer::initial(s0, self.inner.roles().len());
            atoms::compute(&mut self.inner, &mut layer, &self.specs)?;
            self.layers.push(layer);
        }
        while self.layers.len() <= length {
            let k = self.layers.len();
            let mut layer =
                self.layers[k - 1].expand(&mut self.inner, k, self.limits.max_histories)?;
            atoms::compute(&mut self.inner, &mut layer, &self.specs)?;
            self.layers.push(layer);
        }
        Ok(())
    }

    /// The layer and index of `history`.
    fn find(&mut self, history: &History) -> Result<(usize, usize)> {
        let k = self.length(history);
        self.ensure_layers(k)?;
        match self.layers[k].index.get(&history.moves) {
            Some(&i) => Ok((k, i)),
            None => Err(ReasonError::BadRequest(
                "this history is not one of legal joint moves from the initial state, \
                 or it goes on after a terminal state: knowledge is not defined after it"
                    .into(),
            )),
        }
    }

    /// Sets the inner machine's `knows` tuples to those of `history`.
    fn at(&mut self, history: &History) -> Result<()> {
        let (k, i) = self.find(history)?;
        let knows = self.layers[k].entries[i].knows.clone();
        self.inner.set_knowledge(knows);
        Ok(())
    }
}

impl StateMachine for KnowledgeMachine {
    type State = History;

    fn roles(&self) -> &[TermId] {
        self.inner.roles()
    }

    fn terms(&self) -> &TermStore {
        self.inner.terms()
    }

    fn symbols(&self) -> &Symbols {
        self.inner.symbols()
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        self.inner.intern(text)
    }

    fn initial_state(&mut self) -> Result<History> {
        self.ensure_layers(0)?;
        let state = self.layers[0].entries[0].state.clone();
        Ok(History {
            moves: Arc::new([]),
            state,
        })
    }

    fn fluents(&self, history: &History) -> Vec<TermId> {
        history.state.fluents().to_vec()
    }

    fn legal_moves(&mut self, history: &History, role: RoleIndex) -> Result<Vec<TermId>> {
        self.at(history)?;
        self.inner.legal_moves(&history.state, role)
    }

    fn next_state(&mut self, history: &History, joint: &[TermId]) -> Result<History> {
        check_joint(self.inner.roles(), joint)?;
        self.at(history)?;
        let state = self.inner.next_state(&history.state, joint)?;
        let moves = history.moves.iter().chain(joint).copied().collect();
        Ok(History { moves, state })
    }

    fn is_terminal(&mut self, history: &History) -> Result<bool> {
        self.at(history)?;
        self.inner.is_terminal(&history.state)
    }

    fn goal_values(&mut self, history: &History, role: RoleIndex) -> Result<Vec<TermId>> {
        self.at(history)?;
        self.inner.goal_values(&history.state, role)
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        self.inner.base_fluents()
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        self.inner.input_moves(role)
    }

    fn has_sees(&self) -> bool {
        self.inner.has_sees()
    }

    fn percepts(
        &mut self,
        history: &History,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        self.at(history)?;
        self.inner.percepts(&history.state, joint, role)
    }
}
