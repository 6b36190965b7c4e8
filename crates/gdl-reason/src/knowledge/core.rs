//! The knowledge layer over one engine: the groups of histories, length by length, and the
//! state machine's questions about a history, asked of the engine in the history's state with
//! its `knows` atoms ([`PerHistory`]).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::engine::{PerHistory, St};
use super::layer::Layer;
use super::specs::{Knower, Spec};
use super::{History, KnowledgeLimits, atoms};
use crate::machine::{ReasonError, Result, RoleIndex, StateMachine, check_joint};
use crate::terms::TermId;

/// Histories of one length, with the components of the knowers (the roles the rules ask about)
/// and the groups one step longer made of their extensions.
struct Group<S> {
    layer: Layer<S>,
    components: Vec<u32>,
    children: FxHashMap<u32, usize>,
}

/// The knowledge layer over the engine `E`.
pub(crate) struct Core<E: PerHistory> {
    pub(crate) inner: E,
    specs: Vec<Spec>,
    /// The roles the rules ask about the knowledge of.
    knowers: Vec<usize>,
    /// The groups computed so far, the initial one first, each with its length.
    groups: Vec<(usize, Group<St<E>>)>,
    limits: KnowledgeLimits,
}

fn mismatch() -> ReasonError {
    ReasonError::BadRequest("a history of the other engine's knowledge machine".into())
}

impl<E: PerHistory> Core<E> {
    pub(crate) fn new(inner: E, specs: Vec<Spec>, limits: KnowledgeLimits) -> Core<E> {
        let roles = inner.m_ref().roles().len();
        let knowers = (0..roles)
            .filter(|&r| {
                specs.iter().any(|s| match s.knower {
                    Knower::Role(k) => k == r,
                    Knower::Every | Knower::Common => true,
                    Knower::Nobody => false,
                })
            })
            .collect();
        Core {
            inner,
            specs,
            knowers,
            groups: Vec::new(),
            limits,
        }
    }

    pub(crate) fn histories_per_length(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (length, group) in &self.groups {
            if out.len() <= *length {
                out.resize(length + 1, 0);
            }
            out[*length] = out[*length].max(group.layer.entries.len());
        }
        out
    }

    pub(crate) fn knowers(&self) -> &[usize] {
        &self.knowers
    }

    pub(crate) fn knows_atoms(&mut self, history: &History) -> Result<Vec<TermId>> {
        let (g, i) = self.find(history)?;
        Ok(self.groups[g].1.layer.entries[i].knows.to_vec())
    }

    pub(crate) fn class_size(&mut self, history: &History, role: RoleIndex) -> Result<usize> {
        crate::machine::role_term(self.inner.m_ref().roles(), role)?;
        if !self.knowers.contains(&role) {
            return Err(ReasonError::BadRequest(format!(
                "the rules never ask what role number {role} knows: its classes are not kept"
            )));
        }
        let (g, i) = self.find(history)?;
        let layer = &self.groups[g].1.layer;
        let class = layer.entries[i].classes[role];
        Ok(layer
            .entries
            .iter()
            .filter(|e| e.classes[role] == class)
            .count())
    }

    /// The initial group, made when first needed.
    fn initial_group(&mut self) -> Result<()> {
        if self.groups.is_empty() {
            let s0 = self.inner.m().initial_state()?;
            let layer = Layer::initial(s0, self.inner.m_ref().roles().len());
            self.push_group(0, layer)?;
        }
        Ok(())
    }

    /// Computes the knowledge of a new group; its index.
    fn push_group(&mut self, length: usize, mut layer: Layer<St<E>>) -> Result<usize> {
        atoms::compute(&mut self.inner, &mut layer, &self.specs)?;
        let components = atoms::components(&layer, &self.knowers);
        self.groups.push((
            length,
            Group {
                layer,
                components,
                children: FxHashMap::default(),
            },
        ));
        Ok(self.groups.len() - 1)
    }

    /// The group and index of `history`, computing the groups along it.
    fn find(&mut self, history: &History) -> Result<(usize, usize)> {
        self.initial_group()?;
        let width = self.inner.m_ref().roles().len().max(1);
        let (mut g, mut i) = (0, 0);
        for length in 1..=history.moves.len() / width {
            let component = self.groups[g].1.components[i];
            let child = match self.groups[g].1.children.get(&component) {
                Some(&child) => child,
                None => {
                    let group = &self.groups[g].1;
                    let layer = group.layer.expand(
                        &mut self.inner,
                        |h| group.components[h] == component,
                        length,
                        self.limits.max_histories,
                    )?;
                    let child = self.push_group(length, layer)?;
                    self.groups[g].1.children.insert(component, child);
                    child
                }
            };
            let prefix = &history.moves[..length * width];
            let Some(&index) = self.groups[child].1.layer.index.get(prefix) else {
                return Err(ReasonError::BadRequest(
                    "this history is not one of legal joint moves from the initial state, \
                     or it goes on after a terminal state: knowledge is not defined after it"
                        .into(),
                ));
            };
            (g, i) = (child, index);
        }
        Ok((g, i))
    }

    /// The state in which to ask the engine about `history`: its state with its `knows` atoms.
    fn at(&mut self, history: &History) -> Result<St<E>> {
        let state = E::unwrap(&history.state).ok_or_else(mismatch)?.clone();
        let (g, i) = self.find(history)?;
        let knows = self.groups[g].1.layer.entries[i].knows.clone();
        self.inner.knowing(&state, &knows)
    }

    pub(crate) fn initial_state(&mut self) -> Result<History> {
        self.initial_group()?;
        let state = self.groups[0].1.layer.entries[0].state.clone();
        Ok(History {
            moves: Arc::new([]),
            state: E::wrap(state),
        })
    }

    pub(crate) fn fluents(&self, history: &History) -> Vec<TermId> {
        match E::unwrap(&history.state) {
            Some(state) => self.inner.m_ref().fluents(state),
            None => Vec::new(),
        }
    }

    pub(crate) fn legal_moves(
        &mut self,
        history: &History,
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        let at = self.at(history)?;
        self.inner.m().legal_moves(&at, role)
    }

    pub(crate) fn next_state(&mut self, history: &History, joint: &[TermId]) -> Result<History> {
        check_joint(self.inner.m_ref().roles(), joint)?;
        let at = self.at(history)?;
        let state = self.inner.m().next_state(&at, joint)?;
        let state = self.inner.bare(state);
        let moves = history.moves.iter().chain(joint).copied().collect();
        Ok(History {
            moves,
            state: E::wrap(state),
        })
    }

    pub(crate) fn is_terminal(&mut self, history: &History) -> Result<bool> {
        let at = self.at(history)?;
        self.inner.m().is_terminal(&at)
    }

    pub(crate) fn goal_values(
        &mut self,
        history: &History,
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        let at = self.at(history)?;
        self.inner.m().goal_values(&at, role)
    }

    pub(crate) fn percepts(
        &mut self,
        history: &History,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        let at = self.at(history)?;
        self.inner.m().percepts(&at, joint, role)
    }
}
