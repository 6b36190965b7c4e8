//! What the trial of a game version measured besides its engine (`games::analyse`): whether
//! the roles move in turn, GDL-II, GDL-III, the board's size, how long a random match lasts. Stored
//! with the version (JSON); the games' tags are made from it (`tags`).

use serde::{Deserialize, Serialize};

/// Whether the roles choose in turn or at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Turns {
    /// In every state the trial saw, at most one role had a choice (the others one move,
    /// `noop` say).
    InTurn,
    /// In some state, two roles or more had a choice: they move at once.
    Simultaneous,
}

/// What the trial of a version measured besides its engine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Traits {
    /// `None` for a game of one role, or one whose first state could not be played.
    pub turns: Option<Turns>,
    /// Whether the rules use `sees` or `random` (GDL-II).
    pub gdl2: bool,
    /// Whether the rules use `knows` (GDL-III); false in traits stored before it was measured
    /// (a version is tried once, and no game with `knows` was playable then).
    #[serde(default)]
    pub gdl3: bool,
    /// The board drawn for it: columns and rows.
    pub board: Option<(usize, usize)>,
    /// The mean number of steps of the random matches that ended (within the trial's time
    /// and 500 steps); `None` when none did.
    pub steps: Option<f64>,
}

impl Traits {
    /// Reads traits as they are stored (JSON); `None` for a text of another form.
    pub fn parse(text: &str) -> Option<Traits> {
        serde_json::from_str(text).ok()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("traits serialize")
    }
}
