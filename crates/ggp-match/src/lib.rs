//! The Game Manager: runs a match between players (remote over HTTP, or built in), keeps the
//! clocks, substitutes a random legal move for an illegal, late or missing one, and records
//! everything in the ggp.org match format, durably in a SQLite database ([`Store`]) if asked.
//! A seat is a remote player, a built-in strategy, or a [`SeatChannel`] fed from this process
//! (a person at a web page), all under the same clocks.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

mod http;
mod manager;
mod record;
mod seat;
pub mod sql;
mod store;

pub use http::{HttpError, MAX_REPLY, PlayerUrl, UrlError, UrlProblem, post};
pub use manager::{
    DEFAULT_MAX_STEPS, DID_RULE, Event, Finished, Gdl2Form, Knowledge, Known, MANAGER_PLAYS_RANDOM,
    MatchConfig, MatchError, PlayerSpec, PlayerSpecError, Progress, Timing, ping, run_match,
    run_match_until,
};
pub use record::{MatchRecord, StepError, utc_date};
pub use seat::{SeatChannel, SeatMessage, Turn};
pub use store::{
    BadDatabaseUrl, DEFAULT_BUSY_TIMEOUT, Database, DatabaseUrl, LEGACY_LAST, LEGACY_MOVED,
    MATCH_SCHEMA, MatchSummary, MatchWriter, SCHEMA_VERSION, Schema, Store, StoreError,
    StoreErrorKind, Update, abort as abort_unfinished,
};
