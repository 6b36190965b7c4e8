//! The engine a program should use: the fast engine where it can compile the game, the
//! reference engine where it cannot (and the reason why).

use gdl_check::{Checked, Symbols};
use gdl_syntax::Diagnostic;
use rand::Rng;

use crate::fast::{BuildError, FastLimits, FastMachine, FastState};
use crate::machine::{Playout, ReasonError, Result, RoleIndex, StateMachine};
use crate::reference::{Limits, ReferenceMachine, ReferenceState};
use crate::terms::{TermId, TermStore};

/// Which engine to build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// The fast engine, or the reference engine where the fast one cannot compile the game.
    #[default]
    Fast,
    /// The reference engine.
    Reference,
}

/// A machine of either engine.
pub enum Machine {
    Fast(Box<FastMachine>),
    Reference(Box<ReferenceMachine>),
}

/// A state of a [`Machine`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum MachineState {
    Fast(FastState),
    Reference(ReferenceState),
}

/// A built machine, and why the fast engine was not used when it was asked for and not used.
pub struct Built {
    pub machine: Machine,
    pub fallback: Option<String>,
}

impl Machine {
    /// Builds the chosen engine for a checked description. `limits` are the reference
    /// engine's budgets per question (it may be the fallback).
    pub fn build(
        checked: &Checked<'_>,
        choice: EngineChoice,
        limits: Limits,
    ) -> std::result::Result<Built, Vec<Diagnostic>> {
        Machine::build_with(checked, choice, limits, FastLimits::default())
    }

    pub fn build_with(
        checked: &Checked<'_>,
        choice: EngineChoice,
        limits: Limits,
        fast_limits: FastLimits,
    ) -> std::result::Result<Built, Vec<Diagnostic>> {
        let fallback = match choice {
            EngineChoice::Fast => match FastMachine::with_limits(checked, fast_limits) {
                Ok(m) => {
                    return Ok(Built {
                        machine: Machine::Fast(Box::new(m)),
                        fallback: None,
                    });
                }
                Err(BuildError::Invalid(diagnostics)) => return Err(diagnostics),
                Err(BuildError::Unsupported(reason)) => Some(reason),
            },
            EngineChoice::Reference => None,
        };
        let m = ReferenceMachine::with_limits(checked, limits)?;
        Ok(Built {
            machine: Machine::Reference(Box::new(m)),
            fallback,
        })
    }

    /// The engine's name: `fast` or `reference`.
    pub fn engine_name(&self) -> &'static str {
        match self {
            Machine::Fast(_) => "fast",
            Machine::Reference(_) => "reference",
        }
    }
}

fn mismatch() -> ReasonError {
    ReasonError::BadRequest("a state of another engine".into())
}

macro_rules! both {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            Machine::Fast($m) => $e,
            Machine::Reference($m) => $e,
        }
    };
}

impl StateMachine for Machine {
    type State = MachineState;

    fn roles(&self) -> &[TermId] {
        both!(self, m => m.roles())
    }

    fn terms(&self) -> &TermStore {
        both!(self, m => m.terms())
    }

    fn symbols(&self) -> &Symbols {
        both!(self, m => m.symbols())
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, String> {
        both!(self, m => m.intern(text))
    }

    fn initial_state(&mut self) -> Result<MachineState> {
        Ok(match self {
            Machine::Fast(m) => MachineState::Fast(m.initial_state()?),
            Machine::Reference(m) => MachineState::Reference(m.initial_state()?),
        })
    }

    fn fluents(&self, state: &MachineState) -> Vec<TermId> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.fluents(s),
            (Machine::Reference(m), MachineState::Reference(s)) => m.fluents(s),
            _ => Vec::new(),
        }
    }

    fn legal_moves(&mut self, state: &MachineState, role: RoleIndex) -> Result<Vec<TermId>> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.legal_moves(s, role),
            (Machine::Reference(m), MachineState::Reference(s)) => m.legal_moves(s, role),
            _ => Err(mismatch()),
        }
    }

    fn next_state(&mut self, state: &MachineState, joint: &[TermId]) -> Result<MachineState> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => {
                Ok(MachineState::Fast(m.next_state(s, joint)?))
            }
            (Machine::Reference(m), MachineState::Reference(s)) => {
                Ok(MachineState::Reference(m.next_state(s, joint)?))
            }
            _ => Err(mismatch()),
        }
    }

    fn is_terminal(&mut self, state: &MachineState) -> Result<bool> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.is_terminal(s),
            (Machine::Reference(m), MachineState::Reference(s)) => m.is_terminal(s),
            _ => Err(mismatch()),
        }
    }

    fn goal_values(&mut self, state: &MachineState, role: RoleIndex) -> Result<Vec<TermId>> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.goal_values(s, role),
            (Machine::Reference(m), MachineState::Reference(s)) => m.goal_values(s, role),
            _ => Err(mismatch()),
        }
    }

    fn goal(&mut self, state: &MachineState, role: RoleIndex) -> Result<u8> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.goal(s, role),
            (Machine::Reference(m), MachineState::Reference(s)) => m.goal(s, role),
            _ => Err(mismatch()),
        }
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        both!(self, m => m.base_fluents())
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        both!(self, m => m.input_moves(role))
    }

    fn random_playout(
        &mut self,
        state: &MachineState,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Playout> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.random_playout(s, max_steps, rng),
            (Machine::Reference(m), MachineState::Reference(s)) => {
                m.random_playout(s, max_steps, rng)
            }
            _ => Err(mismatch()),
        }
    }
}
