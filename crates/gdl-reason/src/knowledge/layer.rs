//! The histories of one length: every sequence of joint legal moves of that length from the
//! initial state (those that reached a terminal state earlier end there), each with its state,
//! each role's class (its observations: own moves and percepts, step by step) and the `knows`
//! atoms that hold after it.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::engine::{PerHistory, St};
use crate::machine::{ReasonError, Result, StateMachine};
use crate::terms::TermId;

/// One history, its state of type `S` (without its `knows` atoms: [`PerHistory::bare`]).
#[derive(Clone, Debug)]
pub(crate) struct Entry<S> {
    /// The joint moves, one after the other (roles × length terms).
    pub moves: Arc<[TermId]>,
    pub state: S,
    /// For each role, the number of its class: histories of this length with the same number
    /// for a role are those it cannot tell apart.
    pub classes: Vec<u32>,
    /// The `knows` tuples that hold after it, sorted.
    pub knows: Arc<[TermId]>,
}

/// A role's classes one step on: (class before, own move, percepts) → class after.
type Classes = FxHashMap<(u32, TermId, Vec<TermId>), u32>;

/// Histories of one length.
pub(crate) struct Layer<S> {
    pub entries: Vec<Entry<S>>,
    /// For each role, how many classes it has.
    pub class_counts: Vec<u32>,
    /// Entries by their moves.
    pub index: FxHashMap<Arc<[TermId]>, usize>,
}

/// The budget was exceeded: more histories of one length than allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyHistories {
    pub length: usize,
    pub budget: usize,
}

impl std::fmt::Display for TooManyHistories {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {} histories of length {} (the knowledge machine's budget, \
             KnowledgeLimits::max_histories): `knows` is reasoned exactly by enumerating them",
            self.budget, self.length
        )
    }
}

impl std::error::Error for TooManyHistories {}

impl From<TooManyHistories> for ReasonError {
    fn from(e: TooManyHistories) -> ReasonError {
        ReasonError::Budget(e.to_string())
    }
}

impl<S: Clone> Layer<S> {
    fn empty() -> Layer<S> {
        Layer {
            entries: Vec::new(),
            class_counts: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    /// The histories of length 0: the initial state alone (knowledge still to compute).
    pub fn initial(state: S, roles: usize) -> Layer<S> {
        let mut layer = Layer {
            class_counts: vec![1; roles],
            ..Layer::empty()
        };
        layer.push(Entry {
            moves: Arc::new([]),
            state,
            classes: vec![0; roles],
            knows: Arc::new([]),
        });
        layer
    }

    fn push(&mut self, entry: Entry<S>) {
        self.index.insert(entry.moves.clone(), self.entries.len());
        self.entries.push(entry);
    }

    /// The histories one step longer: each history of this layer (with its knowledge computed)
    /// that is `kept` and not terminal, by each joint legal move. More than `budget` is an error.
    pub fn expand<E>(
        &self,
        e: &mut E,
        kept: impl Fn(usize) -> bool,
        length: usize,
        budget: usize,
    ) -> Result<Layer<S>>
    where
        E: PerHistory,
        E::M: StateMachine<State = S>,
    {
        let roles = e.m_ref().roles().len();
        let sees = e.m_ref().has_sees();
        let mut next = Layer::empty();
        let mut classes: Vec<Classes> = vec![FxHashMap::default(); roles];
        for (_, entry) in self.entries.iter().enumerate().filter(|&(i, _)| kept(i)) {
            let at: St<E> = e.knowing(&entry.state, &entry.knows)?;
            if e.m().is_terminal(&at)? {
                continue;
            }
            for joint in e.m().joint_moves(&at)? {
                if next.entries.len() == budget {
                    return Err(TooManyHistories { length, budget }.into());
                }
                let state = e.m().next_state(&at, &joint)?;
                let state = e.bare(state);
                let mut of_roles = Vec::with_capacity(roles);
                for (r, by_key) in classes.iter_mut().enumerate() {
                    let seen = if sees {
                        e.m().percepts(&at, &joint, r)?
                    } else {
                        Vec::new()
                    };
                    let fresh = by_key.len() as u32;
                    of_roles.push(
                        *by_key
                            .entry((entry.classes[r], joint[r], seen))
                            .or_insert(fresh),
                    );
                }
                let moves: Arc<[TermId]> = entry.moves.iter().chain(&joint).copied().collect();
                next.push(Entry {
                    moves,
                    state,
                    classes: of_roles,
                    knows: Arc::new([]),
                });
            }
        }
        next.class_counts = classes.iter().map(|c| c.len() as u32).collect();
        Ok(next)
    }
}
