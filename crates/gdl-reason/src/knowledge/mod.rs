//! GDL-III's `knows`, reasoned exactly by the reference engine: a machine over histories.
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
use self::specs::{Knower, Spec};
use crate::machine::{ReasonError, Result, RoleIndex, StateMachine, check_joint};
use crate::reference::{Limits, ReferenceMachine, ReferenceState};
use crate::terms::{TermError, TermId, TermStore};
use rustc_hash::FxHashMap;

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

/// Histories of one length, with the components of the knowers (the roles the rules ask about)
/// and the groups one step longer made of their extensions.
struct Group {
    layer: Layer,
    components: Vec<u32>,
    children: FxHashMap<u32, usize>,
}

/// The reference engine over histories, for rules with `knows`.
pub struct KnowledgeMachine {
    inner: ReferenceMachine,
    specs: Vec<Spec>,
    /// The roles the rules ask about the knowledge of.
    knowers: Vec<usize>,
    /// The groups computed so far, the initial one first, each with its length.
    groups: Vec<(usize, Group)>,
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
        let roles = inner.roles().len();
        let knowers = (0..roles)
            .filter(|&r| {
                specs.iter().any(|s| match s.knower {
                    Knower::Role(k) => k == r,
                    Knower::Every | Knower::Common => true,
                    Knower::Nobody => false,
                })
            })
            .collect();
        Ok(KnowledgeMachine {
            inner,
            specs,
            knowers,
            groups: Vec::new(),
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

    /// For each length computed so far (from 0), the most histories a group of it holds: the
    /// cost of knowledge at that length.
    pub fn histories_per_length(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (length, group) in &self.groups {
            if out.len() <= *length {
                out.resize(length + 1, 0);
            }
            out[*length] = out[*length].max(group.layer.entries.len());
        }
        out
    }

    /// The `knows` atoms that hold after `history`, as terms (`(knows R P)`, `(knows P)`).
    pub fn knows_atoms(&mut self, history: &History) -> Result<Vec<TermId>> {
        let (g, i) = self.find(history)?;
        Ok(self.groups[g].1.layer.entries[i].knows.to_vec())
    }

    /// How many histories `role`, one the rules ask the knowledge of, cannot tell from
    /// `history` (itself included).
    pub fn class_size(&mut self, history: &History, role: RoleIndex) -> Result<usize> {
        crate::machine::role_term(self.inner.roles(), role)?;
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
            let s0 = self.inner.initial_state()?;
            let layer = Layer::initial(s0, self.inner.roles().len());
            self.push_group(0, layer)?;
        }
        Ok(())
    }

    /// Computes the knowledge of a new group; its index.
    fn push_group(&mut self, length: usize, mut layer: Layer) -> Result<usize> {
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
        let width = self.inner.roles().len().max(1);
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

    /// Sets the inner machine's `knows` tuples to those of `history`.
    fn at(&mut self, history: &History) -> Result<()> {
        let (g, i) = self.find(history)?;
        let knows = self.groups[g].1.layer.entries[i].knows.clone();
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
        self.initial_group()?;
        let state = self.groups[0].1.layer.entries[0].state.clone();
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
