//! Reasoning about games: the [`StateMachine`] interface, ground [`terms`], and the reference
//! engine, exact on every real game.

pub mod machine;
pub mod reference;
pub mod terms;
pub mod trace;

pub use machine::{ReasonError, RoleIndex, StateMachine};
pub use reference::{ReferenceMachine, ReferenceState};
pub use terms::{TermId, TermStore};
