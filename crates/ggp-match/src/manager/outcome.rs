//! What a match reports: its events as it goes on, and how it ended.

use std::time::Duration;

use ggp_play::PlayerStats;

use super::knowledge::Knowledge;
use crate::record::{MatchRecord, StepError};

/// Why a match did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// The rules cannot be played (they have errors that leave them without an agreed
    /// meaning, or a built-in player cannot read them). Nothing was recorded or sent.
    Rules(String),
    /// The players do not fit the game's roles. Nothing was recorded or sent.
    Players(String),
    /// The game itself failed while being played (no legal move for a role, no goal in a
    /// terminal state, a reasoning budget exceeded); the match is recorded as aborted.
    Game(String),
    /// The game did not end within [`MatchConfig::max_steps`] joint moves; the match is
    /// recorded as aborted.
    ///
    /// [`MatchConfig::max_steps`]: super::config::MatchConfig::max_steps
    TooLong(usize),
    /// The record could not be written; the match is aborted.
    Record(String),
    /// Stopped from outside (Ctrl-C, the reader of the output went away, an operator), for the
    /// reason given; the match is recorded as aborted.
    Stopped(String),
}

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchError::Rules(m)
            | MatchError::Players(m)
            | MatchError::Game(m)
            | MatchError::Record(m) => f.write_str(m),
            MatchError::TooLong(n) => write!(
                f,
                "the game did not end within {n} joint moves (the match's step limit)"
            ),
            MatchError::Stopped(reason) => write!(f, "the match was stopped: {reason}"),
        }
    }
}

impl std::error::Error for MatchError {}

/// What the manager reports as a match goes on.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// Every player answered START, or its clock ran out: the players that did not reply
    /// READY, with what happened (`timeout: …`, `busy: …`, `connection: …`, …), and the name
    /// of each role's player (a [`StepError`]'s `player` is a role's index: in a GDL-II game
    /// the `random` role, [`MANAGER_PLAYS_RANDOM`], has no player of the list given).
    ///
    /// [`MANAGER_PLAYS_RANDOM`]: super::config::MANAGER_PLAYS_RANDOM
    Started {
        errors: &'a [StepError],
        players: &'a [String],
    },
    /// A joint move was played.
    Step(&'a Progress),
}

/// What happened at a step, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// From 0.
    pub step: usize,
    pub moves: Vec<String>,
    pub errors: Vec<StepError>,
    pub terminal: bool,
    /// How long the players' replies to this step's PLAY took to arrive (all of them).
    pub waited: Duration,
    /// GDL-III: the `knows` atoms that hold after the step (the true history, which only the
    /// manager has); `None` in a game without `knows`. Not sent to any player: a player is
    /// told its percepts only, and knows what they tell it.
    pub knowledge: Option<Knowledge>,
}

/// Where the time of a match went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// From the call of [`run_match`](super::run_match) to its return.
    pub elapsed: Duration,
    /// Waiting for players: from sending START, each PLAY and STOP until the last reply came
    /// (or its deadline passed). Built-in players' thinking counts here too.
    pub waiting: Duration,
    /// Joint moves played.
    pub steps: usize,
}

impl Timing {
    /// The manager's own time: reading the rules, judging replies, computing states,
    /// recording; everything but waiting for players.
    pub fn own(&self) -> Duration {
        self.elapsed.saturating_sub(self.waiting)
    }
}

/// A match played to its end.
#[derive(Clone, Debug)]
pub struct Finished {
    pub record: MatchRecord,
    pub timing: Timing,
    /// The manager's reasoner: `fast engine`, or the reference engine and why.
    pub reasoner: String,
    /// What each built-in player did over the match (moves, simulations, thinking time), as
    /// its strategy reports it; `None` for remote players.
    pub player_stats: Vec<Option<PlayerStats>>,
}
