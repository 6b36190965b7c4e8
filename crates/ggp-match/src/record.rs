//! The record of a match, in the ggp.org match format.

use serde::{Deserialize, Serialize};

/// A problem with one player's reply at one step (the move was substituted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepError {
    /// Index of the player (its role's position).
    pub player: usize,
    /// What went wrong: `timeout`, `illegal`, `unparsable`, `connection`, `http`, `failed`.
    pub kind: String,
    /// Details: the raw reply of an illegal move, the connection error, …
    pub detail: String,
}

impl StepError {
    /// The text of the `errors` entry: `kind: detail`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.kind, self.detail)
    }
}

/// A match as ggp.org records it. `states` has one entry more than `moves`; `errors` and
/// `stateTimes` have one entry per state (the errors of the last state stay empty: no move was
/// made from it yet). Terms are written as the rules spell them (`(mark 1 2)`, `xPlayer`), with
/// single spaces. Three fields are this project's own: `startErrors` (what went wrong with each
/// player's START), `abortReason` (why an aborted match was aborted) and `moveTimes` (how long
/// each player took to answer each PLAY); a GDL-II match has a fourth, `percepts`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchRecord {
    pub match_id: String,
    /// A short name of the game (the file name of its rules), for people.
    pub game_name: String,
    pub random_token: String,
    /// Milliseconds since the Unix epoch.
    pub start_time: u64,
    /// The game description (no `gameMetaURL`: the rules travel with the record).
    pub rules: String,
    pub game_role_names: Vec<String>,
    pub player_names_from_host: Vec<String>,
    pub start_clock: u64,
    pub play_clock: u64,
    /// Each state as `((fluent) …)`.
    pub states: Vec<String>,
    /// Each joint move, role order.
    pub moves: Vec<Vec<String>>,
    /// Milliseconds since the epoch at which each state was reached.
    pub state_times: Vec<u64>,
    /// For each state, one entry per player: empty, or what went wrong with its move from it.
    pub errors: Vec<Vec<String>>,
    /// One entry per player: empty, or what went wrong with its START (`timeout: …`,
    /// `connection: …`, `busy: …`, `unexpected: <reply>`); play goes on either way.
    #[serde(default)]
    pub start_errors: Vec<String>,
    pub goal_values: Vec<u8>,
    pub is_completed: bool,
    pub is_aborted: bool,
    /// Why the match was aborted (the step limit, Ctrl-C, a game that failed, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// GDL-II games only (absent otherwise): for each joint move, one entry per role, what
    /// the role saw of it (its `sees` terms, sorted), as its player was told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percepts: Vec<Vec<Vec<String>>>,
    /// For each joint move, one entry per role: the milliseconds from PLAY to its player's
    /// reply (or to the error that stood for it: a timeout is the clock and its grace), `null`
    /// for GDL-II's `random` role. Empty for matches recorded before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub move_times: Vec<Vec<Option<u64>>>,
}

impl MatchRecord {
    /// The record as ggp.org match JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a record serialises")
    }

    /// `finished`, `aborted` or `unfinished` (still running, or its manager died).
    pub fn status(&self) -> &'static str {
        if self.is_completed {
            "finished"
        } else if self.is_aborted {
            "aborted"
        } else {
            "unfinished"
        }
    }
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn utc_date(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::utc_date as date;

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(date(0), "1970-01-01 00:00:00");
        assert_eq!(date(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(date(1_700_000_000_123), "2023-11-14 22:13:20");
    }
}
