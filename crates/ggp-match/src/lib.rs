//! The Game Manager: runs a match between players (remote over HTTP, or built in), keeps the
//! clocks, substitutes a random legal move for an illegal, late or missing one, and records
//! everything in the ggp.org match format.

mod http;
mod manager;
mod record;

pub use http::{HttpError, post};
pub use manager::{MatchConfig, PlayerSpec, Progress, run_match};
pub use record::{MatchRecord, StepError};
