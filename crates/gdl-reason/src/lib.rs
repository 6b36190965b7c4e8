//! Reasoning about games: the [`StateMachine`] interface, ground [`terms`], and the reference
//! engine, exact on every real game.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod engine;
pub mod fast;
pub mod gdl3;
pub mod knowledge;
pub mod machine;
pub mod reference;
pub mod terms;
pub mod trace;

pub use engine::{EngineChoice, Machine, MachineState};
pub use fast::{FastMachine, FastState};
pub use knowledge::{History, KnowledgeMachine};
pub use machine::{Batch, Playout, ReasonError, RoleIndex, Rollouts, Rounds, StateMachine, Until};
pub use reference::{ReferenceMachine, ReferenceState};
pub use terms::{TermError, TermId, TermStore};
