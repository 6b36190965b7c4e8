//! Players: a [`Strategy`] chooses moves in a [`Game`]; [`serve`] runs strategies behind the
//! GGP protocol over HTTP, several matches at once.
//!
//! Built-in strategies: [`RandomStrategy`] (a uniformly random legal move),
//! [`LegalStrategy`] (the first legal move in canonical order, as ggp-base's legal player),
//! [`MonteCarloStrategy`] (flat Monte Carlo), [`MctsStrategy`] (Monte Carlo tree search
//! with rollouts in batches, see [`mcts`]) and [`SampleStrategy`] (flat Monte Carlo over the
//! states the player may be in). In a GDL-II game a [`Game`] keeps the states consistent with
//! the player's moves and percepts; the strategies that need the state play it through
//! a strategy that does not ([`NeedsState`]): flat Monte Carlo through [`SampleStrategy`], MCTS
//! through [`HyperPlayStrategy`] (a tree search in each of a sample of the possible states). A user's player implements [`Strategy`] and hands a
//! [`StrategyFactory`] to [`serve`].

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

mod basic;
mod error;
mod game;
pub mod mcts;
mod montecarlo;
mod registry;
mod sample;
mod server;
mod strategy;

pub use basic::{LegalStrategy, RandomStrategy};
pub use error::PlayError;
pub use game::{Game, MAX_STATES, Machine, State, load};
pub use mcts::{HyperPlayStrategy, InfoSetStrategy, MctsConfig, MctsStrategy};
pub use montecarlo::MonteCarloStrategy;
pub use registry::StrategyKind;
pub use sample::SampleStrategy;
pub use server::{
    DEFAULT_IDLE_MARGIN, DEFAULT_MAX_REQUEST, DEFAULT_SESSION_MEMORY, DEFAULT_SESSIONS_PER_ADDRESS,
    PlayerConfig, PlayerLimits, serve,
};
pub use strategy::{MoveReport, NeedsState, PlayerStats, Strategy, StrategyFactory};
