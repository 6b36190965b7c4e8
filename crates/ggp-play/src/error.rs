//! Why a player could not read the rules, follow the match or choose a move: [`PlayError`].

use gdl_reason::{ReasonError, TermError};

/// Why a player could not go on: the rules cannot be played, what the manager sent does not
/// fit the game, or the reasoner failed.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The rules have an error that keeps them from being played: the first (its code, such
    /// as `E001`, and its message).
    #[error("{code}: {message}")]
    Rules { code: &'static str, message: String },
    /// The rules cannot be played, and no diagnostic says why.
    #[error("the rules cannot be played")]
    Unplayable,
    /// The reasoner could not answer a question about the game.
    #[error(transparent)]
    Reason(#[from] ReasonError),
    /// The reasoner could not compute the next state from the moves the manager sent.
    #[error("cannot apply the moves: {0}")]
    Apply(#[source] ReasonError),
    /// A move the manager sent (its text) is not a term.
    #[error("the move `{text}`: {error}")]
    Move {
        text: String,
        #[source]
        error: TermError,
    },
    /// A percept the manager sent (its text) is not a term.
    #[error("the percept `{text}`: {error}")]
    Percept {
        text: String,
        #[source]
        error: TermError,
    },
    /// As many moves as `moves` sent for a game of `roles` roles.
    #[error("{moves} moves for {roles} roles")]
    MoveCount { moves: usize, roles: usize },
    /// Percepts sent in a game that has none (a GDL game).
    #[error("percepts in a game without them")]
    NoPercepts,
    /// No state the player may be in explains the percepts it was sent.
    #[error("no state this player may be in explains its percepts")]
    Unexplained,
    /// The player's role has no legal move where it is asked for one.
    #[error("no legal move")]
    NoLegalMove,
    /// The states the player may be in could not be drawn by their weights.
    #[error(transparent)]
    Weights(rand::distr::weighted::Error),
    /// Every state the player may be in has weight zero.
    #[error("no possible state has a weight")]
    NoWeight,
    /// A thread of the tree search panicked.
    #[error("a search thread failed")]
    SearchThread,
}
