//! The messages of the General Game Playing protocol (§8 and Appendix B of the specification,
//! with ggp-base's ABORT, INFO and PREVIEW): the Game Manager's requests and the players'
//! replies, parsed liberally and printed as the specification shows them.
//!
//! Requests are S-expressions read case-insensitively: `(START <id> <role> (<rules>) <start>
//! <play>)`, `(PLAY <id> <moves>)`, `(STOP <id> <moves>)`, `(ABORT <id>)`, `(INFO)`, `(PREVIEW
//! (<rules>) <clock>)`, where `<moves>` is `NIL` or a list with a move per role. Terms (roles,
//! moves, the rules) are kept as the text the sender wrote; the reasoner reads them.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

mod message;

pub use message::{InfoReply, ProtocolError, Reply, Request, Start, Turn, move_candidates};

/// The longest clock, in seconds, that `ggp`'s Game Manager sends and its player accepts: a day.
/// The protocol itself sets no limit, but a longer clock is a mistake (a typo, an overflow), and
/// deadlines computed from it could not be represented.
pub const MAX_CLOCK_SECS: u64 = 24 * 60 * 60;

/// The longest match id, in bytes.
pub const MAX_MATCH_ID_LEN: usize = 200;

/// Why a text cannot be sent as a match id (see [`check_match_id`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatchIdError {
    #[error("a match id cannot be empty")]
    Empty,
    #[error("a match id has at most {MAX_MATCH_ID_LEN} characters; this one has {len}")]
    TooLong { len: usize },
    /// A character a match id cannot hold (a space, a parenthesis, a non-ASCII letter, …).
    #[error(
        "the match id `{}` contains {}: a match id is made of ASCII letters, digits and `. _ - + : @ /`",
        id.escape_debug(),
        describe(*found)
    )]
    Character { id: String, found: char },
}

/// A character as a message names it.
fn describe(c: char) -> String {
    match c {
        ' ' => "a space".to_string(),
        '\n' => "a line break".to_string(),
        c if c.is_control() => format!("the control character {:?}", c),
        c => format!("`{c}`"),
    }
}

/// Checks that `id` can be sent as a match id: one atom that every player's reader takes as one
/// symbol — ASCII letters, digits and `. _ - + : @ /`, at most [`MAX_MATCH_ID_LEN`] bytes, not
/// empty. (Spaces, parentheses, `;`, quotes or a newline would break the message around it; a
/// leading `?` would read as a variable.)
pub fn check_match_id(id: &str) -> Result<(), MatchIdError> {
    if id.is_empty() {
        return Err(MatchIdError::Empty);
    }
    if id.len() > MAX_MATCH_ID_LEN {
        return Err(MatchIdError::TooLong { len: id.len() });
    }
    if let Some(found) = id.chars().find(|&c| {
        !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | ':' | '@' | '/'))
    }) {
        return Err(MatchIdError::Character {
            id: id.to_string(),
            found,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_match_id;

    #[test]
    fn match_ids_are_single_atoms() {
        for ok in [
            "ggp.tictactoe.1795394394985",
            "Base.ticTacToe.1",
            "a",
            "x-1_2+3:4@5/6",
        ] {
            assert_eq!(check_match_id(ok), Ok(()), "{ok}");
        }
        for bad in [
            "", "a b", "x)(y", "a\nb", "a;b", "?x", "\"q\"", "é", "a\tb", "|a|",
        ] {
            assert!(check_match_id(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(check_match_id(&"a".repeat(201)).is_err());
        assert!(
            check_match_id("a b")
                .unwrap_err()
                .to_string()
                .contains("a space")
        );
    }
}
