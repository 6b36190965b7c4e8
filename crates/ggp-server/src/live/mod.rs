//! Matches running in the server: created from a request, run by the Game Manager
//! (`ggp_match::run_match_until`) on a task of their own, recorded step by step, watched
//! through a stream of events, and played by people through their seats' channels.
//!
//! A live match keeps a copy of its record (player names as registered) that grows with each
//! step; the record is written from that copy, and watchers are woken only once a step is
//! durable, so nobody sees a step that a crash could lose. Each watcher keeps its own place in
//! the record and is sent what it has not seen, so a slow watcher misses nothing and never
//! slows the match.
//!
//! [`model`] is the live match as domain state (low: the pages and the server's state use
//! it); `run` creates and runs matches, `stream` sends their events (above the pages, whose
//! rows it sends).

pub mod model;
mod run;
mod stream;

pub use model::{
    Asker, Clock, Created, Live, LiveMap, MAX_DELAY_MS, MatchRequest, SeatLink, Sight, sight,
};
pub use run::{all, create, get, seat_of, stop_all};
pub use stream::watch_match;
