//! What the knowledge layer needs of the engine that answers for one history: the state
//! machine's questions, asked in a state with given `knows` atoms, and the candidate atoms of a
//! relation in a state. The reference engine gives the atoms to its evaluator as inputs
//! ([`ReferenceMachine::set_knowledge`]); the fast engine sets them as fluents of a rewritten
//! network ([`FastKnowing`]).

use std::sync::Arc;

use gdl_check::RelId;

use super::HistoryState;
use crate::fast::FastMachine;
use crate::fast::FastState;
use crate::fast::knows::FastKnowing;
use crate::machine::{Result, StateMachine};
use crate::reference::{ReferenceMachine, ReferenceState};
use crate::terms::{TermId, TermStore};

/// The state of an engine's machine.
pub(crate) type St<E> = <<E as PerHistory>::M as StateMachine>::State;

/// An engine that answers for one history at a time.
pub(crate) trait PerHistory {
    /// The machine whose questions are asked.
    type M: StateMachine;

    fn m(&mut self) -> &mut Self::M;

    fn m_ref(&self) -> &Self::M;

    /// The state in which to ask about a history whose state is `state` and after which the
    /// `knows` atoms `knows` hold (sorted); its questions are then asked in it.
    fn knowing(&mut self, state: &St<Self>, knows: &Arc<[TermId]>) -> Result<St<Self>>;

    /// The atoms of relation `rel` (of the checked program) that hold in `state` (one that
    /// [`PerHistory::knowing`] gave).
    fn tuples(&mut self, state: &St<Self>, rel: RelId) -> Result<Vec<TermId>>;

    /// A state the machine's `next_state` gave, without what the engine keeps of `knows` in it.
    fn bare(&self, state: St<Self>) -> St<Self>;

    fn store_mut(&mut self) -> &mut TermStore;

    fn wrap(state: St<Self>) -> HistoryState;

    fn unwrap(state: &HistoryState) -> Option<&St<Self>>;
}

impl PerHistory for ReferenceMachine {
    type M = ReferenceMachine;

    fn m(&mut self) -> &mut ReferenceMachine {
        self
    }

    fn m_ref(&self) -> &ReferenceMachine {
        self
    }

    fn knowing(&mut self, state: &ReferenceState, knows: &Arc<[TermId]>) -> Result<ReferenceState> {
        self.set_knowledge(knows.clone());
        Ok(state.clone())
    }

    fn tuples(&mut self, state: &ReferenceState, rel: RelId) -> Result<Vec<TermId>> {
        ReferenceMachine::tuples(self, state, rel)
    }

    fn bare(&self, state: ReferenceState) -> ReferenceState {
        state
    }

    fn store_mut(&mut self) -> &mut TermStore {
        ReferenceMachine::store_mut(self)
    }

    fn wrap(state: ReferenceState) -> HistoryState {
        HistoryState::Reference(state)
    }

    fn unwrap(state: &HistoryState) -> Option<&ReferenceState> {
        match state {
            HistoryState::Reference(s) => Some(s),
            HistoryState::Fast(_) => None,
        }
    }
}

impl PerHistory for FastKnowing {
    type M = FastMachine;

    fn m(&mut self) -> &mut FastMachine {
        &mut self.machine
    }

    fn m_ref(&self) -> &FastMachine {
        &self.machine
    }

    fn knowing(&mut self, state: &FastState, knows: &Arc<[TermId]>) -> Result<FastState> {
        FastKnowing::knowing(self, state, knows)
    }

    fn tuples(&mut self, state: &FastState, rel: RelId) -> Result<Vec<TermId>> {
        FastKnowing::tuples(self, state, rel)
    }

    fn bare(&self, state: FastState) -> FastState {
        FastKnowing::bare(self, state)
    }

    fn store_mut(&mut self) -> &mut TermStore {
        FastKnowing::store_mut(self)
    }

    fn wrap(state: FastState) -> HistoryState {
        HistoryState::Fast(state)
    }

    fn unwrap(state: &HistoryState) -> Option<&FastState> {
        match state {
            HistoryState::Fast(s) => Some(s),
            HistoryState::Reference(_) => None,
        }
    }
}
