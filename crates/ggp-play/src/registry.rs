//! The built-in strategies by name, and the factories that make them.

use crate::basic::{LegalStrategy, RandomStrategy};
use crate::mcts::{HyperPlayStrategy, MctsConfig, MctsStrategy};
use crate::montecarlo::MonteCarloStrategy;
use crate::sample::SampleStrategy;
use crate::strategy::{NeedsState, Strategy, StrategyFactory};

/// The built-in strategies by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Random,
    Legal,
    /// Flat Monte Carlo ([`MonteCarloStrategy`]).
    MonteCarlo,
    /// Monte Carlo tree search ([`MctsStrategy`]).
    Mcts(MctsConfig),
    /// [`SampleStrategy`].
    Sample,
}

impl StrategyKind {
    /// The names [`StrategyKind::parse`] knows.
    pub const NAMES: [&'static str; 5] = ["random", "legal", "montecarlo", "mcts", "sample"];

    /// A built-in strategy by name (any case), with its default settings.
    pub fn parse(name: &str) -> Option<StrategyKind> {
        match name.to_ascii_lowercase().as_str() {
            "random" => Some(StrategyKind::Random),
            "legal" => Some(StrategyKind::Legal),
            "montecarlo" => Some(StrategyKind::MonteCarlo),
            "mcts" => Some(StrategyKind::Mcts(MctsConfig::default())),
            "sample" => Some(StrategyKind::Sample),
            _ => None,
        }
    }

    /// The strategy's name, as [`StrategyKind::parse`] reads it.
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Legal => "legal",
            StrategyKind::MonteCarlo => "montecarlo",
            StrategyKind::Mcts(_) => "mcts",
            StrategyKind::Sample => "sample",
        }
    }

    /// A factory for this strategy; the players of successive matches get successive seeds.
    pub fn factory(self, seed: u64) -> StrategyFactory {
        let next = std::sync::atomic::AtomicU64::new(seed);
        let seed = move || next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self {
            StrategyKind::Random => std::sync::Arc::new(move || {
                Box::new(RandomStrategy::new(seed())) as Box<dyn Strategy>
            }),
            StrategyKind::Legal => {
                std::sync::Arc::new(|| Box::new(LegalStrategy::default()) as Box<dyn Strategy>)
            }
            StrategyKind::MonteCarlo => std::sync::Arc::new(move || {
                let seed = seed();
                Box::new(NeedsState::new(
                    Box::new(MonteCarloStrategy::new(seed)),
                    Box::new(SampleStrategy::new(seed)),
                )) as Box<dyn Strategy>
            }),
            StrategyKind::Mcts(config) => std::sync::Arc::new(move || {
                let seed = seed();
                Box::new(NeedsState::new(
                    Box::new(MctsStrategy::new(config, seed)),
                    Box::new(HyperPlayStrategy::new(config, seed)),
                )) as Box<dyn Strategy>
            }),
            StrategyKind::Sample => std::sync::Arc::new(move || {
                Box::new(SampleStrategy::new(seed())) as Box<dyn Strategy>
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StrategyKind;

    #[test]
    fn every_built_in_strategy_is_named_and_read_back() {
        for name in StrategyKind::NAMES {
            let kind = StrategyKind::parse(name).unwrap();
            assert_eq!(kind.name(), name);
            assert_eq!(StrategyKind::parse(&name.to_ascii_uppercase()), Some(kind));
        }
        assert_eq!(StrategyKind::parse("human"), None);
    }
}
