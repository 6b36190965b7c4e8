//! What a player decides with: the game as a state machine, and a strategy.

use std::time::Instant;

use gdl_reason::{EngineChoice, RoleIndex, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

/// The reasoner the players and the Game Manager play with: the fast engine, or the reference
/// engine for a game the fast one cannot compile. Together with [`load`], the one place that
/// names an engine.
pub type Machine = gdl_reason::Machine;

/// A state of a [`Machine`].
pub type State = <Machine as StateMachine>::State;

/// A match as a player sees it: the rules as a state machine, the current state, its role.
pub struct Game {
    pub machine: Machine,
    pub state: State,
    pub role: RoleIndex,
}

/// Reads rules into a state machine, or gives the first error that keeps them from being
/// played (`E001: unsafe rule: …`).
pub fn load(rules: &str) -> Result<Machine, String> {
    let checked = gdl_check::check(rules);
    Machine::build(&checked, EngineChoice::Fast, Default::default()).map_err(|d| {
        d.first()
            .map(|d| format!("{}: {}", d.code, d.message))
            .unwrap_or_default()
    })
}

impl Game {
    /// Plays the previous joint move (moves in role order, as text) from the current state.
    pub fn apply(&mut self, moves: &[String]) -> Result<(), String> {
        let roles = self.machine.roles().len();
        if moves.len() != roles {
            return Err(format!("{} moves for {roles} roles", moves.len()));
        }
        let mut joint = Vec::with_capacity(moves.len());
        for m in moves {
            joint.push(
                self.machine
                    .intern(m)
                    .map_err(|e| format!("the move `{m}`: {e}"))?,
            );
        }
        let state = self.state.clone();
        self.state = self
            .machine
            .next_state(&state, &joint)
            .map_err(|e| format!("cannot apply the moves: {e}"))?;
        Ok(())
    }

    /// The legal moves of the player's role in the current state.
    pub fn legal_moves(&mut self) -> Result<Vec<TermId>, String> {
        let state = self.state.clone();
        self.machine
            .legal_moves(&state, self.role)
            .map_err(|e| e.to_string())
    }

    /// A term as the rules spell it: what is sent to the Game Manager (see
    /// [`gdl_reason::TermStore::spelled`]).
    pub fn text(&self, term: TermId) -> String {
        self.machine.terms().spelled(self.machine.symbols(), term)
    }
}

/// How a player chooses its moves. Each match gets its own strategy value (see
/// [`StrategyFactory`]); its methods run on a blocking thread and should return by the deadline.
pub trait Strategy: Send {
    /// Called once the rules are read, with the start clock's deadline.
    fn start(&mut self, _game: &mut Game, _deadline: Instant) {}

    /// The move to make in `game.state`, before `deadline`.
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, String>;

    /// Called when the match ends normally (STOP), in its final state.
    fn stop(&mut self, _game: &mut Game) {}
}

/// Makes a strategy for each new match.
pub type StrategyFactory = std::sync::Arc<dyn Fn() -> Box<dyn Strategy> + Send + Sync>;

/// A uniformly random legal move.
pub struct RandomStrategy {
    rng: SmallRng,
}

impl RandomStrategy {
    pub fn new(seed: u64) -> RandomStrategy {
        RandomStrategy {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Strategy for RandomStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, String> {
        let moves = game.legal_moves()?;
        moves
            .choose(&mut self.rng)
            .copied()
            .ok_or_else(|| "no legal move".to_string())
    }
}

/// The first legal move in canonical text order: deterministic, as ggp-base's legal player.
pub struct LegalStrategy;

impl Strategy for LegalStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, String> {
        let moves = game.legal_moves()?;
        moves
            .iter()
            .copied()
            .min_by_key(|&m| game.machine.terms().text(game.machine.symbols(), m))
            .ok_or_else(|| "no legal move".to_string())
    }
}

/// The built-in strategies by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Random,
    Legal,
}

impl StrategyKind {
    /// The names [`StrategyKind::parse`] knows.
    pub const NAMES: [&'static str; 2] = ["random", "legal"];

    /// A built-in strategy by name (any case), with its default settings.
    pub fn parse(name: &str) -> Option<StrategyKind> {
        match name.to_ascii_lowercase().as_str() {
            "random" => Some(StrategyKind::Random),
            "legal" => Some(StrategyKind::Legal),
            _ => None,
        }
    }

    /// The strategy's name, as [`StrategyKind::parse`] reads it.
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Legal => "legal",
        }
    }

    /// A factory for this strategy; random players of successive matches get successive seeds.
    pub fn factory(self, seed: u64) -> StrategyFactory {
        match self {
            StrategyKind::Random => {
                let next = std::sync::atomic::AtomicU64::new(seed);
                std::sync::Arc::new(move || {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    Box::new(RandomStrategy::new(seed)) as Box<dyn Strategy>
                })
            }
            StrategyKind::Legal => {
                std::sync::Arc::new(|| Box::new(LegalStrategy) as Box<dyn Strategy>)
            }
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
