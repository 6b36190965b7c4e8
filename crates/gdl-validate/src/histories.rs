//! GDL-III: the validator's nodes are classes of histories, not states.
//!
//! In a game with `knows`, two histories that end in the same state can differ in what the
//! players know, and so in their legal moves, goals and future: the search must be over
//! histories. Every history is too many (number guessing has 599,177), and most are alike: what
//! a history's future depends on is its state and the epistemic model around it, the histories
//! of its length with, for each role the rules ask about (a knower), which of them it cannot
//! tell apart. [`HistoryClasses`] is a machine whose states are the classes of histories that
//! are *bisimilar* in that model: the same state, and for each knower, classes that reach the
//! same classes. Bisimilar histories satisfy the same `knows` atoms, have the same legal joint
//! moves, percepts and goals, and the same joint move takes them to bisimilar histories (the
//! model of the next length is the product of this one with the joint moves and what each role
//! observes of them), so searching the classes decides every property the search over
//! histories would, and any history of a class stands for it.
//!
//! The classes are computed a length at a time, when the search first asks for a history one
//! step longer: every joint move of every class that is not terminal, each knower's
//! observation of it (its class before, its own move and its sorted percepts, as the knowledge
//! machine does), then partition refinement from the states until no class splits. The moves
//! that lead to a class replay, on the knowledge machine, to a history bisimilar to the one
//! kept for it: the same state, legal moves and goals.

use std::time::Instant;

use gdl_check::Symbols;
use gdl_reason::terms::{TermError, TermStore};
use gdl_reason::{ReasonError, RoleIndex, StateMachine, TermId};
use rustc_hash::FxHashMap;

use crate::Subject;

/// A class of bisimilar histories: its length and its number among the classes of that length.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct HistoryClass {
    length: u32,
    index: u32,
}

/// One class: a history standing for it, each knower's class (numbered within the length),
/// how many histories it stands for, and where each joint move takes it (once the next length
/// is computed; none when terminal).
struct Class<S> {
    history: S,
    observed: Vec<u32>,
    histories: u64,
    next: FxHashMap<Vec<TermId>, u32>,
}

/// A history one step longer, before the classes are found.
struct Extended<S> {
    parent: u32,
    joint: Vec<TermId>,
    history: S,
    /// Each knower's observation: its class before, its move and its percepts, numbered.
    observed: Vec<u32>,
}

/// Interns values as numbers from 0 in the order they are first seen.
struct Numbers<K> {
    map: FxHashMap<K, u32>,
}

impl<K: std::hash::Hash + Eq> Numbers<K> {
    fn new() -> Numbers<K> {
        Numbers {
            map: FxHashMap::default(),
        }
    }

    fn of(&mut self, key: K) -> u32 {
        let next = self.map.len() as u32;
        *self.map.entry(key).or_insert(next)
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

/// A machine over classes of bisimilar histories (see the module's documentation), for a
/// machine whose states are histories.
pub struct HistoryClasses<'m, M: StateMachine> {
    m: &'m mut M,
    knowers: Vec<RoleIndex>,
    lengths: Vec<Vec<Class<M::State>>>,
    /// Histories one length may hold before its classes are found.
    max_histories: usize,
    deadline: Instant,
    /// Why the next length could not be computed, if it could not: asked again, it fails the
    /// same way at once rather than redoing the work.
    failed: Option<ReasonError>,
}

impl<'m, M: StateMachine> HistoryClasses<'m, M> {
    /// The classes of `machine`'s histories, `knowers` being the roles whose knowledge the
    /// rules ask; a length of more than `max_histories` histories, or one computed after
    /// `deadline`, is a budget error.
    pub fn new(
        machine: &'m mut M,
        knowers: Vec<RoleIndex>,
        max_histories: usize,
        deadline: Instant,
    ) -> HistoryClasses<'m, M> {
        HistoryClasses {
            m: machine,
            knowers,
            lengths: Vec::new(),
            max_histories,
            deadline,
            failed: None,
        }
    }

    /// How many histories the classes computed so far stand for, over every length.
    pub fn histories(&self) -> u64 {
        self.lengths.iter().flatten().map(|c| c.histories).sum()
    }

    fn class(&self, c: &HistoryClass) -> Result<&Class<M::State>, ReasonError> {
        self.lengths
            .get(c.length as usize)
            .and_then(|l| l.get(c.index as usize))
            .ok_or_else(|| ReasonError::BadRequest("not a class of histories computed".into()))
    }

    /// The history standing for a class.
    fn history(&self, c: &HistoryClass) -> Result<&M::State, ReasonError> {
        Ok(&self.class(c)?.history)
    }

    /// The histories one step longer than the classes of `length`, with what each knower
    /// observes of its last step.
    fn extend(&mut self, length: usize) -> Result<Vec<Extended<M::State>>, ReasonError> {
        let mut out = Vec::new();
        let mut observations = Numbers::new();
        for index in 0..self.lengths[length].len() {
            let history = self.lengths[length][index].history.clone();
            if self.m.is_terminal(&history)? {
                continue;
            }
            for joint in self.m.joint_moves(&history)? {
                if out.len() >= self.max_histories {
                    return Err(ReasonError::Budget(format!(
                        "more than {} histories of length {} (the states kept, --max-states)",
                        self.max_histories,
                        length + 1
                    )));
                }
                if Instant::now() > self.deadline {
                    return Err(ReasonError::Budget(format!(
                        "the time ran out computing the histories of length {}",
                        length + 1
                    )));
                }
                let next = self.m.next_state(&history, &joint)?;
                let mut observed = Vec::with_capacity(self.knowers.len());
                for (k, &role) in self.knowers.iter().enumerate() {
                    let mut seen = self.m.percepts(&history, &joint, role)?;
                    seen.sort_unstable();
                    seen.dedup();
                    let before = self.lengths[length][index].observed[k];
                    observed.push(observations.of((k, before, joint[role], seen)));
                }
                out.push(Extended {
                    parent: index as u32,
                    joint,
                    history: next,
                    observed,
                });
            }
        }
        Ok(out)
    }

    /// Computes the classes of length `length + 1`.
    fn grow(&mut self, length: usize) -> Result<(), ReasonError> {
        let extended = self.extend(length)?;
        let knowers = self.knowers.len();
        // The coarsest partition that keeps states apart and is stable: each history's block
        // and, for each knower, the blocks of the histories it cannot tell apart.
        let mut states = Numbers::new();
        let mut block: Vec<u32> = extended
            .iter()
            .map(|e| {
                let mut fluents = self.m.fluents(&e.history);
                fluents.sort_unstable();
                states.of(fluents)
            })
            .collect();
        let mut blocks = states.len();
        let reach = loop {
            let reach = reached(&extended, &block, knowers);
            let mut refined = Numbers::new();
            let next: Vec<u32> = extended
                .iter()
                .enumerate()
                .map(|(h, e)| {
                    let around: Vec<u32> = (0..knowers).map(|k| reach[k][&e.observed[k]]).collect();
                    refined.of((block[h], around))
                })
                .collect();
            block = next;
            if refined.len() == blocks {
                break reached(&extended, &block, knowers);
            }
            blocks = refined.len();
        };
        let mut classes: Vec<Class<M::State>> = Vec::with_capacity(blocks);
        for (h, e) in extended.into_iter().enumerate() {
            let b = block[h] as usize;
            let histories = self.lengths[length][e.parent as usize].histories;
            if b == classes.len() {
                classes.push(Class {
                    history: e.history,
                    observed: (0..knowers).map(|k| reach[k][&e.observed[k]]).collect(),
                    histories: 0,
                    next: FxHashMap::default(),
                });
            }
            classes[b].histories += histories;
            self.lengths[length][e.parent as usize]
                .next
                .insert(e.joint, b as u32);
        }
        self.lengths.push(classes);
        Ok(())
    }
}

/// For each knower, its observations numbered by the set of blocks of the histories that make
/// them (the classes, as sets of blocks, numbered again).
fn reached<S>(extended: &[Extended<S>], block: &[u32], knowers: usize) -> Vec<FxHashMap<u32, u32>> {
    (0..knowers)
        .map(|k| {
            let mut sets: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
            for (h, e) in extended.iter().enumerate() {
                sets.entry(e.observed[k]).or_default().push(block[h]);
            }
            let mut numbers = Numbers::new();
            sets.into_iter()
                .map(|(observed, mut blocks)| {
                    blocks.sort_unstable();
                    blocks.dedup();
                    (observed, numbers.of(blocks))
                })
                .collect()
        })
        .collect()
}

impl<M: StateMachine> StateMachine for HistoryClasses<'_, M> {
    type State = HistoryClass;

    fn roles(&self) -> &[TermId] {
        self.m.roles()
    }

    fn terms(&self) -> &TermStore {
        self.m.terms()
    }

    fn symbols(&self) -> &Symbols {
        self.m.symbols()
    }

    fn intern(&mut self, text: &str) -> Result<TermId, TermError> {
        self.m.intern(text)
    }

    fn initial_state(&mut self) -> Result<HistoryClass, ReasonError> {
        if self.lengths.is_empty() {
            let history = self.m.initial_state()?;
            self.lengths.push(vec![Class {
                history,
                observed: vec![0; self.knowers.len()],
                histories: 1,
                next: FxHashMap::default(),
            }]);
        }
        Ok(HistoryClass {
            length: 0,
            index: 0,
        })
    }

    fn fluents(&self, c: &HistoryClass) -> Vec<TermId> {
        self.history(c)
            .map(|h| self.m.fluents(h))
            .unwrap_or_default()
    }

    fn legal_moves(
        &mut self,
        c: &HistoryClass,
        role: RoleIndex,
    ) -> Result<Vec<TermId>, ReasonError> {
        let h = self.history(c)?.clone();
        self.m.legal_moves(&h, role)
    }

    fn next_state(
        &mut self,
        c: &HistoryClass,
        joint: &[TermId],
    ) -> Result<HistoryClass, ReasonError> {
        self.class(c)?;
        let length = c.length as usize;
        if self.lengths.len() == length + 1 {
            if let Some(e) = &self.failed {
                return Err(e.clone());
            }
            if let Err(e) = self.grow(length) {
                self.failed = Some(e.clone());
                return Err(e);
            }
        }
        match self.class(c)?.next.get(joint) {
            Some(&index) => Ok(HistoryClass {
                length: c.length + 1,
                index,
            }),
            None => Err(ReasonError::BadRequest(
                "not a legal joint move of a history that goes on".into(),
            )),
        }
    }

    fn is_terminal(&mut self, c: &HistoryClass) -> Result<bool, ReasonError> {
        let h = self.history(c)?.clone();
        self.m.is_terminal(&h)
    }

    fn goal_values(
        &mut self,
        c: &HistoryClass,
        role: RoleIndex,
    ) -> Result<Vec<TermId>, ReasonError> {
        let h = self.history(c)?.clone();
        self.m.goal_values(&h, role)
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>, ReasonError> {
        self.m.base_fluents()
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>, ReasonError> {
        self.m.input_moves(role)
    }

    fn has_sees(&self) -> bool {
        self.m.has_sees()
    }

    fn percepts(
        &mut self,
        c: &HistoryClass,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>, ReasonError> {
        let h = self.history(c)?.clone();
        self.m.percepts(&h, joint, role)
    }
}

impl<M: Subject> Subject for HistoryClasses<'_, M> {
    fn take_disagreement(&mut self) -> Option<String> {
        self.m.take_disagreement()
    }
}
