//! Players: a [`Strategy`] chooses moves in a [`Game`]; [`serve`] runs strategies behind the
//! GGP protocol over HTTP, several matches at once.
//!
//! Built-in strategies: [`RandomStrategy`] (a uniformly random legal move),
//! [`LegalStrategy`] (the first legal move in canonical order, as ggp-base's legal player),
//! [`MonteCarloStrategy`] (flat Monte Carlo) and [`MctsStrategy`] (Monte Carlo tree search
//! with rollouts in batches, see [`mcts`]). A user's player implements [`Strategy`] and hands
//! a [`StrategyFactory`] to [`serve`].

pub mod mcts;
mod montecarlo;
mod server;
mod strategy;

pub use mcts::{MctsConfig, MctsStrategy};
pub use montecarlo::MonteCarloStrategy;
pub use server::{PlayerConfig, serve};
pub use strategy::{
    Game, LegalStrategy, Machine, MoveReport, PlayerStats, RandomStrategy, State, Strategy,
    StrategyFactory, StrategyKind, load,
};
