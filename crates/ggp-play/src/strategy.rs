//! How a player chooses its moves: the [`Strategy`] trait, what a strategy reports, and
//! [`NeedsState`], which plays a GDL-II game for a strategy that needs the true state.

use std::time::{Duration, Instant};

use gdl_reason::TermId;

use crate::error::PlayError;
use crate::game::Game;

/// How a player chooses its moves. Each match gets its own strategy value (see
/// [`StrategyFactory`]); its methods run on a blocking thread and should return by the deadline.
pub trait Strategy: Send {
    /// Called once the rules are read, with the start clock's deadline.
    fn start(&mut self, _game: &mut Game, _deadline: Instant) {}

    /// The move to make in `game.state`, before `deadline`.
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError>;

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
    /// The report on a move made without a search: the only legal one.
    pub fn forced(time: Duration) -> MoveReport {
        MoveReport {
            simulations: 0,
            iterations: Some(0),
            time,
            nodes: None,
            visits: None,
            value: None,
            note: Some("one legal move".into()),
        }
    }

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
/// them, the search's iterations, and the time it spent choosing them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayerStats {
    pub moves: u64,
    /// Random playouts (an MCTS player's rollouts).
    pub simulations: u64,
    /// A tree search's iterations, rollout or not (one that ends in a node whose goals are
    /// known runs none); a strategy without a tree counts its playouts.
    pub iterations: u64,
    pub thinking: Duration,
}

impl PlayerStats {
    /// Counts a move.
    pub fn add(&mut self, report: &MoveReport) {
        self.moves += 1;
        self.simulations += report.simulations;
        self.iterations += report.iterations.unwrap_or(report.simulations);
        self.thinking += report.time;
    }

    /// Totals of two (matches, say).
    pub fn merge(&mut self, other: &PlayerStats) {
        self.moves += other.moves;
        self.simulations += other.simulations;
        self.iterations += other.iterations;
        self.thinking += other.thinking;
    }

    /// Simulations per second of thinking (`None` before any thinking).
    pub fn simulations_per_second(&self) -> Option<f64> {
        let secs = self.thinking.as_secs_f64();
        (secs > 0.0).then(|| self.simulations as f64 / secs)
    }

    /// Iterations per second of thinking (`None` before any thinking).
    pub fn iterations_per_second(&self) -> Option<f64> {
        let secs = self.thinking.as_secs_f64();
        (secs > 0.0).then(|| self.iterations as f64 / secs)
    }
}

/// Makes a strategy for each new match.
pub type StrategyFactory = std::sync::Arc<dyn Fn() -> Box<dyn Strategy> + Send + Sync>;

/// A strategy that needs the true state (flat Monte Carlo, MCTS) plays a GDL-II game, where
/// the player only knows the states it may be in, through another that reasons over those
/// states (`hidden`: [`SampleStrategy`], [`crate::HyperPlayStrategy`]): searching one of them
/// as if it were the state would choose moves that may be illegal.
pub struct NeedsState {
    full: Box<dyn Strategy>,
    hidden: Box<dyn Strategy>,
    /// Whether the game is GDL-II (`hidden` plays it), known once the match starts.
    gdl2: bool,
}

impl NeedsState {
    pub fn new(full: Box<dyn Strategy>, hidden: Box<dyn Strategy>) -> NeedsState {
        NeedsState {
            full,
            hidden,
            gdl2: false,
        }
    }

    fn playing(&self) -> &dyn Strategy {
        if self.gdl2 {
            self.hidden.as_ref()
        } else {
            self.full.as_ref()
        }
    }
}

impl Strategy for NeedsState {
    fn start(&mut self, game: &mut Game, deadline: Instant) {
        self.gdl2 = game.possible.is_some();
        if self.gdl2 {
            self.hidden.start(game, deadline);
        } else {
            self.full.start(game, deadline);
        }
    }

    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        self.gdl2 = game.possible.is_some();
        if self.gdl2 {
            self.hidden.select(game, deadline)
        } else {
            self.full.select(game, deadline)
        }
    }

    fn stop(&mut self, game: &mut Game) {
        if self.gdl2 {
            self.hidden.stop(game);
        } else {
            self.full.stop(game);
        }
    }

    fn report(&self) -> Option<MoveReport> {
        self.playing().report()
    }

    fn stats(&self) -> Option<PlayerStats> {
        self.playing().stats()
    }
}

/// When a search that may last until `deadline` stops: 5 % of the time left before it (at
/// least 10 ms, at most 200 ms), to return the move in time.
pub(crate) fn stop_time(now: Instant, deadline: Instant) -> Instant {
    let left = deadline.saturating_duration_since(now);
    let margin = (left / 20)
        .clamp(Duration::from_millis(10), Duration::from_millis(200))
        .min(left);
    deadline - margin
}
