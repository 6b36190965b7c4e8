//! Tournaments and the schedule they make.
//!
//! A tournament is a set of players (registered or built in), a set of game versions, clocks
//! and a format:
//! - `roundrobin`: each round plays every assignment of distinct players to a game's seated
//!   roles once (for 3 players on a two-role game: 6 matches per game and round);
//! - `random`: each round, for each game, the players shuffled and seated in groups (those
//!   left over sit the round out);
//! - `continuous` (Tiltyard's way): whenever enough of its players are idle, a match of a game
//!   drawn from its set among idle players drawn at random; until it is ended.
//!
//! The schedule lives in the database: a match to be played is a row of `scheduled`. Every
//! process that plays matches (`ggp serve`, `ggp serve --worker`, `ggp tournament`) is a row
//! of `servers` with a heartbeat; it claims queued rows in a transaction (SQLite: the
//! writer's immediate transaction, which other processes wait for), plays each as any served
//! match and marks the row done when the match ends. A registered player is never claimed for
//! two matches at once (its protocol does not say which match a message is for); built-in
//! players are. A server whose heartbeat stops (or, on the same machine, whose process is
//! gone) is reaped by any other: its running matches are recorded as aborted, with their
//! steps, and its claimed rows are queued again, to be played by another server.

mod claims;
mod create;
mod model;
mod results;
mod servers;
mod work;

pub use claims::{Claim, Ended, claim, ended};
pub use create::{create, round_robin_size, schedule};
pub use model::{
    Format, MAX_GAMES, MAX_PLAYERS, MAX_ROUNDS, MAX_SCHEDULE, Progress, ScheduledMatch, Tournament,
    TournamentGame, TournamentRequest, scheduled_matches, set_status, tournament, tournaments,
};
pub use results::{Played, played, rate, ratings, standings};
pub(crate) use servers::log;
pub use servers::{Host, Reaped, heartbeat, reap, register, unregister};
pub use work::{keep_alive, match_ended, work};

#[cfg(test)]
mod tests;
