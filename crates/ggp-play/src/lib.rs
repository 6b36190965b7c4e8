//! Players: a [`Strategy`] chooses moves in a [`Game`]; [`serve`] runs strategies behind the
//! GGP protocol over HTTP, several matches at once.
//!
//! Built-in strategies: [`RandomStrategy`] (a uniformly random legal move) and
//! [`LegalStrategy`] (the first legal move in canonical order, as ggp-base's legal player),
//! and [`SampleStrategy`] (flat Monte Carlo over the states the player may be in). In a GDL-II
//! game a [`Game`] keeps the states consistent with the player's moves and percepts.
//! A user's player implements [`Strategy`] and hands a [`StrategyFactory`] to [`serve`].

mod server;
mod strategy;

pub use server::{PlayerConfig, serve};
pub use strategy::{
    Game, LegalStrategy, MAX_STATES, Machine, RandomStrategy, SampleStrategy, State, Strategy,
    StrategyFactory, StrategyKind, load,
};
