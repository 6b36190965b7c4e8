pub mod bench;
pub mod check;
pub mod convert;
pub mod fmt;
pub mod matches;
pub mod player;
pub mod replay;

/// The reasoners a command can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The reference engine: tabled top-down evaluation of the rules, exact on every game.
    Reference,
}
