//! What a match is asked to be: its rules, clocks and limits, and who plays each role.

use std::time::Duration;

use ggp_play::StrategyKind;

use crate::http::{PlayerUrl, UrlError};
use crate::seat::SeatChannel;

/// Who plays a role.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    /// A player at this URL (`http://127.0.0.1:9147`). It is told the joint moves in a GDL
    /// game, and its percepts in the GameController's form ([`Gdl2Form::Percepts`]) in a GDL-II
    /// game.
    Url(String),
    /// A player at this URL that speaks GDL-II in the given form, in any game: in a GDL game it
    /// is sent the GameController's rule `(<= (sees ?p (did ?q ?m)) (role ?p) (does ?q ?m))`
    /// with the rules, and sees every role's move as `(did role move)`.
    Gdl2(String, Gdl2Form),
    /// A built-in strategy, run in this process under the same clocks.
    Builtin(StrategyKind),
    /// A seat whose moves come from a channel (a person at a web page): asked for each move
    /// with its legal moves, under the same clocks (see [`SeatChannel`]).
    Channel(SeatChannel),
}

/// How a GDL-II player is told what it sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gdl2Form {
    /// The GameController's: `(PLAY id NIL)`, then `(PLAY id (percept … ))`, `(STOP id (percept
    /// … ))` (`gdl2:URL`).
    Percepts,
    /// With the turn and the player's own move, as the Dresden server's GDL-II protocol has it:
    /// `(PLAY id 0 NIL NIL)`, then `(PLAY id turn move (percept … ))` (`gdl2-turn:URL`).
    Turn,
}

/// The rule the GameController adds to a GDL game's rules for a GDL-II player, so that it sees
/// every role's move.
pub const DID_RULE: &str = "(<= (sees ?p (did ?q ?m)) (role ?p) (does ?q ?m))";

/// Why a text names no player ([`PlayerSpec::parse`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayerSpecError {
    /// `gdl2:` or `gdl2-turn:` (the prefix) followed by something other than a URL.
    #[error("`{text}`: `{prefix}` is followed by the URL of an HTTP player")]
    Gdl2NotUrl { text: String, prefix: &'static str },
    /// Looks like a URL (it has a `:`) but is not a player's.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// Neither a built-in strategy's name nor a URL (the text).
    #[error(
        "`{text}` is not a player: use {names} or an http:// URL",
        names = StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
    )]
    Unknown { text: String },
}

impl PlayerSpec {
    /// A built-in strategy's name (`random`, `legal`, `montecarlo`, `mcts`, `sample`: see
    /// [`StrategyKind::parse`]), an `http://` URL (a bare `host:port` gets `http://`), checked
    /// ([`PlayerUrl::parse`]) and kept as written, or a URL after `gdl2:` or `gdl2-turn:` for a
    /// GDL-II player ([`Gdl2Form`]).
    pub fn parse(text: &str) -> Result<PlayerSpec, PlayerSpecError> {
        let lower = text.to_ascii_lowercase();
        for (prefix, form) in [
            ("gdl2-turn:", Gdl2Form::Turn),
            ("gdl2:", Gdl2Form::Percepts),
        ] {
            if lower.starts_with(prefix) {
                let rest = &text[prefix.len()..];
                return match PlayerSpec::parse(rest)? {
                    PlayerSpec::Url(url) => Ok(PlayerSpec::Gdl2(url, form)),
                    _ => Err(PlayerSpecError::Gdl2NotUrl {
                        text: text.to_string(),
                        prefix,
                    }),
                };
            }
        }
        if let Some(kind) = StrategyKind::parse(text) {
            return Ok(PlayerSpec::Builtin(kind));
        }
        match text {
            _ if text.contains(':') => {
                PlayerUrl::parse(text)?;
                Ok(PlayerSpec::Url(if text.contains("://") {
                    text.to_string()
                } else {
                    format!("http://{text}")
                }))
            }
            _ => Err(PlayerSpecError::Unknown {
                text: text.to_string(),
            }),
        }
    }

    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Url(url) => url.clone(),
            PlayerSpec::Gdl2(url, Gdl2Form::Percepts) => format!("gdl2:{url}"),
            PlayerSpec::Gdl2(url, Gdl2Form::Turn) => format!("gdl2-turn:{url}"),
            PlayerSpec::Builtin(kind) => kind.name().into(),
            PlayerSpec::Channel(seat) => seat.name().into(),
        }
    }

    /// The URL of a remote player.
    pub fn url(&self) -> Option<&str> {
        match self {
            PlayerSpec::Url(url) | PlayerSpec::Gdl2(url, _) => Some(url),
            PlayerSpec::Builtin(_) | PlayerSpec::Channel(_) => None,
        }
    }
}

/// The name recorded for the `random` role of a GDL-II game, which the manager plays.
pub const MANAGER_PLAYS_RANDOM: &str = "(the manager)";

/// A match to run.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub match_id: String,
    /// A short name of the game for people (the rules' file name, say).
    pub game_name: String,
    pub rules: String,
    pub start_clock: Duration,
    pub play_clock: Duration,
    /// Added to each clock for the network before a reply is late.
    pub grace: Duration,
    /// Seeds the substituted moves and the built-in players: the same seed and the same
    /// replies give the same match.
    pub seed: u64,
    /// The longest match, in joint moves: a game still running after this many is aborted
    /// ([`MatchError::TooLong`]), so that a game that never ends does not run for ever.
    ///
    /// [`MatchError::TooLong`]: super::outcome::MatchError::TooLong
    pub max_steps: usize,
    /// The memory account of the match: the manager's reasoning and the built-in players'
    /// (reading the rules, every move) are charged to it, and their engines stop with an
    /// error naming it when it is used up. `None`: the process's budget only.
    pub memory: Option<ggp_memory::Account>,
}

/// The number of joint moves after which `ggp match` aborts a game that has not ended.
pub const DEFAULT_MAX_STEPS: usize = 1000;
