//! The rows of a match as a database keeps them: what one write adds ([`Update`]) and a line of
//! a listing ([`MatchSummary`]).

use crate::record::MatchRecord;

/// One line of [`Database::list`](super::Database::list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchSummary {
    pub match_id: String,
    pub game_name: String,
    /// Milliseconds since the Unix epoch.
    pub start_time: u64,
    /// `finished`, `aborted` or `unfinished`.
    pub status: String,
    /// Joint moves recorded.
    pub steps: usize,
    pub roles: Vec<String>,
    pub players: Vec<String>,
    /// Empty unless finished.
    pub goal_values: Vec<u8>,
}

/// The fixed facts of a match, written once.
#[derive(Clone, Debug)]
pub(super) struct Header {
    pub(super) game_name: String,
    pub(super) rules: String,
    pub(super) random_token: String,
    pub(super) start_time: u64,
    pub(super) start_clock: u64,
    pub(super) play_clock: u64,
    pub(super) roles: Vec<String>,
    pub(super) players: Vec<String>,
    pub(super) initial_state: String,
    pub(super) initial_time: u64,
}

/// A step as stored: the joint move, its errors, the state it led to and when.
#[derive(Clone, Debug)]
pub(super) struct StepRow {
    pub(super) moves: Vec<String>,
    /// GDL-II only.
    pub(super) percepts: Option<Vec<Vec<String>>>,
    /// Each player's time to answer, where it was measured.
    pub(super) move_times: Option<Vec<Option<u64>>>,
    pub(super) errors: Vec<String>,
    pub(super) state: String,
    pub(super) time: u64,
}

/// What one write adds: the match itself the first time, the steps played since the last
/// write, and the match's status.
#[derive(Clone, Debug)]
pub struct Update {
    pub(super) match_id: String,
    pub(super) header: Option<Header>,
    /// The number of `steps[0]` (the first step is 1).
    pub(super) first_step: usize,
    pub(super) steps: Vec<StepRow>,
    pub(super) status: &'static str,
    pub(super) goal_values: Vec<u8>,
    pub(super) start_errors: Vec<String>,
    pub(super) abort_reason: Option<String>,
}

impl Update {
    /// What `record` adds to a database that has the first `written` steps of it (and the
    /// match itself unless `new`).
    pub fn since(record: &MatchRecord, new: bool, written: usize) -> Update {
        let header = new.then(|| Header {
            game_name: record.game_name.clone(),
            rules: record.rules.clone(),
            random_token: record.random_token.clone(),
            start_time: record.start_time,
            start_clock: record.start_clock,
            play_clock: record.play_clock,
            roles: record.game_role_names.clone(),
            players: record.player_names_from_host.clone(),
            initial_state: record.states.first().cloned().unwrap_or_default(),
            initial_time: record
                .state_times
                .first()
                .copied()
                .unwrap_or(record.start_time),
        });
        let steps = (written..record.moves.len())
            .map(|k| StepRow {
                moves: record.moves[k].clone(),
                percepts: record.percepts.get(k).cloned(),
                move_times: record.move_times.get(k).cloned(),
                errors: record.errors.get(k).cloned().unwrap_or_default(),
                state: record.states.get(k + 1).cloned().unwrap_or_default(),
                time: record.state_times.get(k + 1).copied().unwrap_or_default(),
            })
            .collect();
        Update {
            match_id: record.match_id.clone(),
            header,
            first_step: written + 1,
            steps,
            status: record.status(),
            goal_values: record.goal_values.clone(),
            start_errors: record.start_errors.clone(),
            abort_reason: record.abort_reason.clone(),
        }
    }

    /// Whether this write ends the match (finished or aborted).
    pub(super) fn ends(&self) -> bool {
        self.status != "unfinished"
    }
}
