//! GDL-III's `knows`, reasoned exactly over histories, by either engine.
//!
//! A state of the [`KnowledgeMachine`] is a history (the joint moves from the initial state, and
//! the state they lead to). The machine keeps, length by length, groups of histories of legal
//! joint moves from the initial state ([`layer`]), with each role's class (histories with the
//! same own moves and percepts at every step) and the `knows` atoms that hold after each
//! ([`atoms`]). The group of length 0 is the initial state; the group a history of length k + 1
//! belongs to is every extension of its prefix's component in the prefix's group, a component
//! joining the histories some role the rules ask about (a knower) cannot tell apart. A class's
//! prefixes are a class one step shorter, so every class of a knower, and every component of
//! them, lies inside one group: the knowledge computed within a group is that over every
//! history of the length, and a group holds only the histories that can matter.
//! A question about a history (legal moves, next state, percepts, goals, terminal) is the
//! engine's question about its state with its `knows` atoms ([`engine::PerHistory`]): the
//! reference engine gives them as the tuples of `knows/1` and `knows/2`, as the fluents are of
//! `true`; the fast engine sets them as fluents of its network, compiled from the rules
//! rewritten ([`crate::fast::knows`]). The layer ([`core`]) is the same over both.
//! docs/gdl3.md describes the design.

mod atoms;
mod core;
mod engine;
mod layer;
mod specs;

use std::sync::Arc;

use gdl_check::{Checked, Symbols};
use gdl_syntax::Diagnostic;

use self::core::Core;
use self::engine::PerHistory;
pub use self::layer::TooManyHistories;
use crate::fast::knows::FastKnowing;
use crate::fast::{BuildError, FastLimits, FastState};
use crate::machine::{Result, RoleIndex, StateMachine};
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
    state: HistoryState,
}

/// The state a history leads to, in the engine of its machine (without its `knows` atoms).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum HistoryState {
    Reference(ReferenceState),
    Fast(FastState),
}

impl History {
    /// The joint moves, one after the other.
    pub fn moves(&self) -> &[TermId] {
        &self.moves
    }
}

/// The engine that answers for each history.
enum Engine {
    Reference(Box<Core<ReferenceMachine>>),
    Fast(Box<Core<FastKnowing>>),
}

/// A machine over histories, for rules with `knows`: the knowledge layer over the reference
/// engine ([`KnowledgeMachine::new`]) or over the fast engine ([`KnowledgeMachine::fast`]).
pub struct KnowledgeMachine {
    engine: Engine,
}

macro_rules! core {
    ($self:expr, $c:ident => $e:expr) => {
        match &$self.engine {
            Engine::Reference($c) => $e,
            Engine::Fast($c) => $e,
        }
    };
    (mut $self:expr, $c:ident => $e:expr) => {
        match &mut $self.engine {
            Engine::Reference($c) => $e,
            Engine::Fast($c) => $e,
        }
    };
}

impl KnowledgeMachine {
    /// Builds the machine over the reference engine for a checked description (with `knows`
    /// or not), or returns the errors that leave it without an agreed meaning.
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
            engine: Engine::Reference(Box::new(Core::new(inner, specs, knowledge))),
        })
    }

    /// Builds the machine over the fast engine: its network compiled from the rules with each
    /// `knows` literal read from the state (see [`crate::fast::knows`]). `Unsupported` where the
    /// fast engine cannot compile them (with the reason); then [`KnowledgeMachine::new`].
    pub fn fast(
        checked: &Checked<'_>,
        limits: FastLimits,
        knowledge: KnowledgeLimits,
    ) -> std::result::Result<KnowledgeMachine, BuildError> {
        let mut inner = FastKnowing::new(checked, limits)?;
        let specs = specs::specs(&checked.program, &checked.graph, &mut inner.machine);
        Ok(KnowledgeMachine {
            engine: Engine::Fast(Box::new(Core::new(inner, specs, knowledge))),
        })
    }

    /// Parses and checks `text`, then builds the machine over the reference engine with the
    /// default budgets.
    pub fn from_text(text: &str) -> std::result::Result<KnowledgeMachine, Vec<Diagnostic>> {
        KnowledgeMachine::new(
            &gdl_check::check(text),
            Limits::default(),
            KnowledgeLimits::default(),
        )
    }

    /// Whether the fast engine answers for each history (else the reference engine).
    pub fn is_fast(&self) -> bool {
        matches!(self.engine, Engine::Fast(_))
    }

    /// The reference engine's budgets for every question (the fast engine has none per
    /// question).
    pub fn set_limits(&mut self, limits: Limits) {
        if let Engine::Reference(c) = &mut self.engine {
            c.inner.set_limits(limits);
        }
    }

    /// A deadline for every following question of the reference engine (see
    /// [`ReferenceMachine::set_until`]); the fast engine answers a question in one propagation.
    pub fn set_until(&mut self, until: Option<std::time::Instant>) {
        if let Engine::Reference(c) = &mut self.engine {
            c.inner.set_until(until);
        }
    }

    /// For each length computed so far (from 0), the most histories a group of it holds: the
    /// cost of knowledge at that length.
    pub fn histories_per_length(&self) -> Vec<usize> {
        core!(self, c => c.histories_per_length())
    }

    /// The roles whose knowledge the rules ask about (named in a `knows`, or every role when
    /// one has a variable role or is common knowledge), in order: the machine keeps their
    /// classes of histories ([`KnowledgeMachine::class_size`]) and no other role's.
    pub fn knowers(&self) -> &[RoleIndex] {
        core!(self, c => c.knowers())
    }

    /// The `knows` atoms that hold after `history`, as terms (`(knows R P)`, `(knows P)`).
    pub fn knows_atoms(&mut self, history: &History) -> Result<Vec<TermId>> {
        core!(mut self, c => c.knows_atoms(history))
    }

    /// How many histories `role`, one the rules ask the knowledge of, cannot tell from
    /// `history` (itself included).
    pub fn class_size(&mut self, history: &History, role: RoleIndex) -> Result<usize> {
        core!(mut self, c => c.class_size(history, role))
    }
}

impl StateMachine for KnowledgeMachine {
    type State = History;

    fn roles(&self) -> &[TermId] {
        core!(self, c => c.inner.m_ref().roles())
    }

    fn terms(&self) -> &TermStore {
        core!(self, c => c.inner.m_ref().terms())
    }

    fn symbols(&self) -> &Symbols {
        core!(self, c => c.inner.m_ref().symbols())
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        core!(mut self, c => c.inner.m().intern(text))
    }

    fn initial_state(&mut self) -> Result<History> {
        core!(mut self, c => c.initial_state())
    }

    fn fluents(&self, history: &History) -> Vec<TermId> {
        core!(self, c => c.fluents(history))
    }

    fn legal_moves(&mut self, history: &History, role: RoleIndex) -> Result<Vec<TermId>> {
        core!(mut self, c => c.legal_moves(history, role))
    }

    fn next_state(&mut self, history: &History, joint: &[TermId]) -> Result<History> {
        core!(mut self, c => c.next_state(history, joint))
    }

    fn is_terminal(&mut self, history: &History) -> Result<bool> {
        core!(mut self, c => c.is_terminal(history))
    }

    fn goal_values(&mut self, history: &History, role: RoleIndex) -> Result<Vec<TermId>> {
        core!(mut self, c => c.goal_values(history, role))
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        let mut all = core!(mut self, c => c.inner.m().base_fluents())?;
        if let (Some(fluents), Engine::Fast(c)) = (&mut all, &self.engine) {
            // Without the `knows` fluents of the rewrite.
            let knows = c.inner.knows_symbol();
            let store = c.inner.m_ref().terms();
            fluents.retain(|&f| store.is_constant(f) || Some(store.symbol(f)) != knows);
        }
        Ok(all)
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        core!(mut self, c => c.inner.m().input_moves(role))
    }

    fn has_sees(&self) -> bool {
        core!(self, c => c.inner.m_ref().has_sees())
    }

    fn percepts(
        &mut self,
        history: &History,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        core!(mut self, c => c.percepts(history, joint, role))
    }
}
