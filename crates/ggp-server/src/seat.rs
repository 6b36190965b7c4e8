//! Who plays a seat of a match.

use std::fmt;

/// The name a human seat has in records, and what a request names one by: its kind's name.
pub const HUMAN: &str = SeatKind::Human.name();

/// Who plays a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeatKind {
    /// A registered player, at its URL.
    Player,
    /// A strategy built into the server (`random`, `mcts`, …).
    Builtin,
    /// A person, on the match page, with the seat's token.
    Human,
    /// GDL-II's `random` role, which the manager plays (it has no row in `seats`).
    Manager,
}

impl SeatKind {
    /// As stored and shown: `player`, `builtin`, `human`, `manager`.
    pub const fn name(self) -> &'static str {
        match self {
            SeatKind::Player => "player",
            SeatKind::Builtin => "builtin",
            SeatKind::Human => "human",
            SeatKind::Manager => "manager",
        }
    }

    /// Reads a kind as stored; `None` for a text of no known kind.
    pub fn parse(text: &str) -> Option<SeatKind> {
        [
            SeatKind::Player,
            SeatKind::Builtin,
            SeatKind::Human,
            SeatKind::Manager,
        ]
        .into_iter()
        .find(|kind| kind.name() == text)
    }
}

impl fmt::Display for SeatKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_as_they_are_stored_and_shown() {
        for kind in [
            SeatKind::Player,
            SeatKind::Builtin,
            SeatKind::Human,
            SeatKind::Manager,
        ] {
            assert_eq!(SeatKind::parse(kind.name()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.name())
            );
        }
        assert_eq!(SeatKind::parse("robot"), None);
    }
}
