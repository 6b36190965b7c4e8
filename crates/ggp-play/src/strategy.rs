//! What a player decides with: the game as a state machine, and a strategy.

use std::time::{Duration, Instant};

use gdl_reason::{EngineChoice, RoleIndex, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use crate::mcts::{MctsConfig, MctsStrategy};
use crate::montecarlo::MonteCarloStrategy;

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

    /// What the last [`Strategy::select`] did (simulations, tree size, the chosen move's
    /// visits and value), for INFO and the player's log; `None` if the strategy does not say.
    fn report(&self) -> Option<MoveReport> {
        None
    }

    /// Totals over the match so far (moves chosen, simulations, time spent choosing), for
    /// `ggp arena`; `None` if the strategy does not keep them.
    fn stats(&self) -> Option<PlayerStats> {
        None
    }
}

/// What a strategy did for one move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MoveReport {
    /// Random playouts run for this move.
    pub simulations: u64,
    /// Tree searches: simulations of every kind, those that ended in a node whose goals were
    /// already known (terminal or proven) as well as rollouts.
    pub iterations: Option<u64>,
    /// Time spent choosing it.
    pub time: Duration,
    /// The search tree's nodes after the search (tree searches only).
    pub nodes: Option<u64>,
    /// Simulations through the chosen move.
    pub visits: Option<u64>,
    /// The chosen move's value for the player's role: its mean goal (0–100) in the
    /// simulations through it, or its proven goal.
    pub value: Option<f64>,
    /// Anything else worth saying (`proven`, `one legal move`, `puzzle line of 12 moves`, …).
    pub note: Option<String>,
}

impl MoveReport {
    /// The report on one line: `12345 simulations in 0.95 s (13000/s), 15000 iterations,
    /// 4567 nodes, move visits 2345, value 62.5`.
    pub fn describe(&self) -> String {
        let secs = self.time.as_secs_f64();
        let mut text = format!("{} simulations in {secs:.2} s", self.simulations);
        if secs > 0.0 && self.simulations > 0 {
            text.push_str(&format!(" ({:.0}/s)", self.simulations as f64 / secs));
        }
        if let Some(iterations) = self.iterations {
            text.push_str(&format!(", {iterations} iterations"));
        }
        if let Some(nodes) = self.nodes {
            text.push_str(&format!(", {nodes} nodes"));
        }
        if let Some(visits) = self.visits {
            text.push_str(&format!(", move visits {visits}"));
        }
        if let Some(value) = self.value {
            text.push_str(&format!(", value {value:.1}"));
        }
        if let Some(note) = &self.note {
            text.push_str(&format!(" ({note})"));
        }
        text
    }

    /// The report as INFO's `(key value)` pairs.
    pub fn info_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = vec![
            ("simulations".to_string(), self.simulations.to_string()),
            (
                "time".to_string(),
                format!("{:.3}", self.time.as_secs_f64()),
            ),
        ];
        if let Some(iterations) = self.iterations {
            pairs.push(("iterations".into(), iterations.to_string()));
        }
        if let Some(nodes) = self.nodes {
            pairs.push(("nodes".into(), nodes.to_string()));
        }
        if let Some(visits) = self.visits {
            pairs.push(("visits".into(), visits.to_string()));
        }
        if let Some(value) = self.value {
            pairs.push(("value".into(), format!("{value:.1}")));
        }
        pairs
    }
}

/// What a strategy did over a match: the moves it chose, the random playouts it ran for
/// them, and the time it spent choosing them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerStats {
    pub moves: u64,
    pub simulations: u64,
    pub thinking: Duration,
}

impl PlayerStats {
    /// Counts a move.
    pub fn add(&mut self, report: &MoveReport) {
        self.moves += 1;
        self.simulations += report.simulations;
        self.thinking += report.time;
    }

    /// Totals of two (matches, say).
    pub fn merge(&mut self, other: &PlayerStats) {
        self.moves += other.moves;
        self.simulations += other.simulations;
        self.thinking += other.thinking;
    }

    /// Simulations per second of thinking (`None` before any thinking).
    pub fn simulations_per_second(&self) -> Option<f64> {
        let secs = self.thinking.as_secs_f64();
        (secs > 0.0).then(|| self.simulations as f64 / secs)
    }
}

/// Makes a strategy for each new match.
pub type StrategyFactory = std::sync::Arc<dyn Fn() -> Box<dyn Strategy> + Send + Sync>;

/// A uniformly random legal move.
pub struct RandomStrategy {
    rng: SmallRng,
    stats: PlayerStats,
}

impl RandomStrategy {
    pub fn new(seed: u64) -> RandomStrategy {
        RandomStrategy {
            rng: SmallRng::seed_from_u64(seed),
            stats: PlayerStats::default(),
        }
    }
}

impl Strategy for RandomStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, String> {
        let began = Instant::now();
        let moves = game.legal_moves()?;
        let chosen = moves
            .choose(&mut self.rng)
            .copied()
            .ok_or_else(|| "no legal move".to_string());
        self.stats.add(&MoveReport {
            time: began.elapsed(),
            ..MoveReport::default()
        });
        chosen
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}

/// The first legal move in canonical text order: deterministic, as ggp-base's legal player.
#[derive(Default)]
pub struct LegalStrategy {
    stats: PlayerStats,
}

impl Strategy for LegalStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, String> {
        let began = Instant::now();
        let moves = game.legal_moves()?;
        let chosen = moves
            .iter()
            .copied()
            .min_by_key(|&m| game.machine.terms().text(game.machine.symbols(), m))
            .ok_or_else(|| "no legal move".to_string());
        self.stats.add(&MoveReport {
            time: began.elapsed(),
            ..MoveReport::default()
        });
        chosen
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}

/// The built-in strategies by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Random,
    Legal,
    /// Flat Monte Carlo ([`MonteCarloStrategy`]).
    MonteCarlo,
    /// Monte Carlo tree search ([`MctsStrategy`]).
    Mcts(MctsConfig),
}

impl StrategyKind {
    /// The names [`StrategyKind::parse`] knows.
    pub const NAMES: [&'static str; 4] = ["random", "legal", "montecarlo", "mcts"];

    /// A built-in strategy by name (any case), with its default settings.
    pub fn parse(name: &str) -> Option<StrategyKind> {
        match name.to_ascii_lowercase().as_str() {
            "random" => Some(StrategyKind::Random),
            "legal" => Some(StrategyKind::Legal),
            "montecarlo" => Some(StrategyKind::MonteCarlo),
            "mcts" => Some(StrategyKind::Mcts(MctsConfig::default())),
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
                Box::new(MonteCarloStrategy::new(seed())) as Box<dyn Strategy>
            }),
            StrategyKind::Mcts(config) => std::sync::Arc::new(move || {
                Box::new(MctsStrategy::new(config, seed())) as Box<dyn Strategy>
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
