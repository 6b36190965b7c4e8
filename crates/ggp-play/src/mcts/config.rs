//! How an MCTS player searches.

/// How an MCTS player searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MctsConfig {
    /// Threads searching (root-parallel; one with the reference engine).
    pub threads: usize,
    /// The most nodes the player's trees hold together (and at most
    /// [`MOVES_PER_NODE`](super::MOVES_PER_NODE) times as many moves).
    pub max_nodes: usize,
    /// Stop each search after this many simulations (for tests and experiments; the clock
    /// still applies).
    pub simulations: Option<u64>,
    /// Rollouts from each leaf: fixed, or tuned from timings (`None`).
    pub rollouts_per_leaf: Option<u32>,
}

impl Default for MctsConfig {
    fn default() -> MctsConfig {
        MctsConfig {
            threads: 1,
            max_nodes: 500_000,
            simulations: None,
            rollouts_per_leaf: None,
        }
    }
}
