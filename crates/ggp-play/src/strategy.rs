//! What a player decides with: the game as a state machine, and a strategy.

use std::time::{Duration, Instant};

use gdl_reason::{EngineChoice, Playout, RoleIndex, StateMachine, TermId};
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
///
/// In a GDL-II game the player cannot know the state: `possible` holds the states consistent
/// with its own moves and its percepts so far (all of them while there are at most
/// [`MAX_STATES`], a uniform sample of them beyond), and `state` is one of them.
pub struct Game {
    pub machine: Machine,
    pub state: State,
    pub role: RoleIndex,
    /// GDL-II: the states the player may be in (`None` in a GDL game: the state is known).
    pub possible: Option<Vec<State>>,
    /// GDL-II: how likely each state of `possible` is (not normalised), supposing the other
    /// roles choose uniformly among their legal moves (as `random` does): the weight of a
    /// state is the sum over the ways it is reached of the weight they start from times the
    /// probability of the others' moves.
    pub weights: Vec<f64>,
    /// GDL-II: the move the player sent last (what it made, unless the manager replaced it).
    pub last_move: Option<TermId>,
    /// Draws the sample of states when there are too many.
    rng: SmallRng,
    /// GDL-II: what the player knew of each step so far: the move made for it (and whether
    /// the manager said so, or it is the move it sent) and its percepts (sorted ids).
    history: Vec<(Option<TermId>, bool, Vec<TermId>)>,
    initial: State,
}

/// The most states a GDL-II player keeps; beyond, a uniform sample of this many.
pub const MAX_STATES: usize = 256;
/// The most joint moves tried from one state when updating them (a uniform sample beyond).
const MAX_JOINTS: usize = 4096;
/// When no state kept explains a percept (the true one was not in the sample), states are
/// drawn again from the start, consistent with everything seen: this many at most, with at
/// most [`RESAMPLE_WORK`] percept evaluations, and [`RESAMPLE_TRIES`] joint moves tried at
/// each step of a walk.
const RESAMPLE_STATES: usize = 64;
const RESAMPLE_WORK: usize = 200_000;
const RESAMPLE_TRIES: usize = 64;

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
    /// The game at its initial state, for `role`; in a GDL-II game (`sees` or a `random` role)
    /// the player keeps the set of states it may be in.
    pub fn new(mut machine: Machine, role: RoleIndex) -> Result<Game, String> {
        let state = machine.initial_state().map_err(|e| e.to_string())?;
        let possible = machine.is_gdl2().then(|| vec![state.clone()]);
        Ok(Game {
            machine,
            initial: state.clone(),
            state,
            role,
            possible,
            weights: vec![1.0],
            last_move: None,
            rng: SmallRng::seed_from_u64(role as u64),
            history: Vec::new(),
        })
    }

    /// GDL-II: what the player saw of the last joint move (its percepts, as text) and, when
    /// the manager says it, the move made for it (otherwise the one it sent is assumed, and
    /// any of its legal moves if that explains nothing). Keeps the states, reached by a joint
    /// move with that own move from a state it may have been in, where the role would see
    /// exactly these percepts.
    pub fn perceive(&mut self, own: Option<&str>, percepts: &[String]) -> Result<(), String> {
        let Some(possible) = self.possible.take() else {
            return Err("percepts in a game without them".into());
        };
        let certain = own.is_some();
        let own = match own {
            Some(m) => Some(
                self.machine
                    .intern(m)
                    .map_err(|e| format!("the move `{m}`: {e}"))?,
            ),
            None => self.last_move,
        };
        let mut seen = Vec::with_capacity(percepts.len());
        for p in percepts {
            seen.push(
                self.machine
                    .intern(p)
                    .map_err(|e| format!("the percept `{p}`: {e}"))?,
            );
        }
        seen.sort_unstable();
        seen.dedup();
        self.history.push((own, certain, seen.clone()));
        let weights = std::mem::take(&mut self.weights);
        let mut next = self.successors(&possible, &weights, own, &seen)?;
        if next.is_empty() && own.is_some() && !certain {
            // The manager may have replaced the move this player sent.
            next = self.successors(&possible, &weights, None, &seen)?;
        }
        if next.is_empty() {
            // The states kept were a sample without the true one: draw others.
            next = self.resample()?.into_iter().map(|s| (s, 1.0)).collect();
        }
        if next.is_empty() {
            self.history.pop();
            self.possible = Some(possible);
            self.weights = weights;
            return Err("no state this player may be in explains its percepts".into());
        }
        if next.len() > MAX_STATES {
            // A sample, the likelier states more often; each then stands for as much.
            next = next
                .choose_multiple_weighted(&mut self.rng, MAX_STATES, |(_, w)| *w)
                .map_err(|e| e.to_string())?
                .map(|(s, _)| (s.clone(), 1.0))
                .collect();
        }
        self.state = next[0].0.clone();
        self.weights = next.iter().map(|(_, w)| *w).collect();
        self.possible = Some(next.into_iter().map(|(s, _)| s).collect());
        Ok(())
    }

    /// States consistent with the whole history, drawn by random walks from the initial state
    /// that backtrack where a percept does not fit (see [`RESAMPLE_STATES`]).
    fn resample(&mut self) -> Result<Vec<State>, String> {
        let mut work = RESAMPLE_WORK;
        let mut out = Vec::new();
        let mut found = std::collections::HashSet::new();
        let initial = self.initial.clone();
        for _ in 0..RESAMPLE_STATES {
            if work == 0 {
                break;
            }
            if let Some(state) = self.walk(&initial, 0, &mut work)?
                && found.insert(state.clone())
            {
                out.push(state);
            }
        }
        Ok(out)
    }

    /// A state at the end of the history reached from `state` at step `t`, if one is found.
    fn walk(&mut self, state: &State, t: usize, work: &mut usize) -> Result<Option<State>, String> {
        let Some((own, certain, seen)) = self.history.get(t).cloned() else {
            return Ok(Some(state.clone()));
        };
        let mut legal = self
            .machine
            .all_legal_moves(state)
            .map_err(|e| e.to_string())?;
        if legal.iter().any(Vec::is_empty) {
            return Ok(None);
        }
        if let (Some(m), true) = (own, certain) {
            if !legal[self.role].contains(&m) {
                return Ok(None);
            }
            legal[self.role] = vec![m];
        }
        for attempt in 0..RESAMPLE_TRIES {
            if *work == 0 {
                return Ok(None);
            }
            *work -= 1;
            let mut joint: Vec<TermId> = legal
                .iter()
                .map(|moves| *moves.choose(&mut self.rng).expect("a legal move"))
                .collect();
            // The move the player sent, first.
            if let (Some(m), 0) = (own, attempt)
                && legal[self.role].contains(&m)
            {
                joint[self.role] = m;
            }
            let got = self
                .machine
                .percepts(state, &joint, self.role)
                .map_err(|e| e.to_string())?;
            if got != seen {
                continue;
            }
            let next = self
                .machine
                .next_state(state, &joint)
                .map_err(|e| e.to_string())?;
            if let Some(end) = self.walk(&next, t + 1, work)? {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }

    /// The states reached from `from` by joint moves in which the player makes `own` (any of
    /// its legal moves when `None`) and sees exactly `seen` (sorted ids).
    fn successors(
        &mut self,
        from: &[State],
        weights: &[f64],
        own: Option<TermId>,
        seen: &[TermId],
    ) -> Result<Vec<(State, f64)>, String> {
        let mut out: Vec<(State, f64)> = Vec::new();
        let mut found: std::collections::HashMap<State, usize> = std::collections::HashMap::new();
        for (k, state) in from.iter().enumerate() {
            let weight = weights.get(k).copied().unwrap_or(1.0);
            let mut legal = self
                .machine
                .all_legal_moves(state)
                .map_err(|e| e.to_string())?;
            if let Some(m) = own {
                if !legal[self.role].contains(&m) {
                    continue;
                }
                legal[self.role] = vec![m];
            }
            let count = legal
                .iter()
                .try_fold(1usize, |n, moves| n.checked_mul(moves.len()));
            // The probability of each joint move tried: the others' moves uniform (the
            // player's own is given, or unknown and then each counts fully).
            let others: f64 = legal
                .iter()
                .enumerate()
                .filter(|&(r, _)| r != self.role)
                .map(|(_, moves)| moves.len().max(1) as f64)
                .product();
            let (joints, p): (Vec<Vec<TermId>>, f64) = match count {
                Some(n) if n <= MAX_JOINTS => {
                    ((0..n).map(|k| nth_joint(&legal, k)).collect(), 1.0 / others)
                }
                _ => (
                    (0..MAX_JOINTS)
                        .map(|_| {
                            legal
                                .iter()
                                .map(|moves| *moves.choose(&mut self.rng).expect("a legal move"))
                                .collect()
                        })
                        .collect(),
                    1.0 / MAX_JOINTS as f64,
                ),
            };
            for joint in joints {
                if joint.len() != legal.len() {
                    continue;
                }
                let got = self
                    .machine
                    .percepts(state, &joint, self.role)
                    .map_err(|e| e.to_string())?;
                if got == seen {
                    let next = self
                        .machine
                        .next_state(state, &joint)
                        .map_err(|e| e.to_string())?;
                    match found.get(&next) {
                        Some(&at) => out[at].1 += weight * p,
                        None => {
                            found.insert(next.clone(), out.len());
                            out.push((next, weight * p));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

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

    /// The legal moves of the player's role in the current state; in a GDL-II game, the moves
    /// legal in every state it may be in (so that no state it cannot see makes its move
    /// illegal), or, if there is none such, those of one of them.
    pub fn legal_moves(&mut self) -> Result<Vec<TermId>, String> {
        // Asked for a move, the player is not in a terminal state.
        self.is_over()?;
        let state = self.state.clone();
        let mut moves = self
            .machine
            .legal_moves(&state, self.role)
            .map_err(|e| e.to_string())?;
        if let Some(possible) = &self.possible {
            let mut common = moves.clone();
            for s in possible {
                let legal = self
                    .machine
                    .legal_moves(s, self.role)
                    .map_err(|e| e.to_string())?;
                common.retain(|m| legal.contains(m));
            }
            if !common.is_empty() {
                moves = common;
            }
        }
        Ok(moves)
    }

    /// Whether the game is over: the state is terminal (in a GDL-II game, every state the
    /// player may be in is; the terminal ones are dropped otherwise, since the manager still
    /// asks for moves only in a state that is not).
    pub fn is_over(&mut self) -> Result<bool, String> {
        let Some(mut possible) = self.possible.take() else {
            let state = self.state.clone();
            return self.machine.is_terminal(&state).map_err(|e| e.to_string());
        };
        let mut open = Vec::with_capacity(possible.len());
        let mut weights = Vec::with_capacity(possible.len());
        for (k, s) in possible.iter().enumerate() {
            if !self.machine.is_terminal(s).map_err(|e| e.to_string())? {
                open.push(s.clone());
                weights.push(self.weights.get(k).copied().unwrap_or(1.0));
            }
        }
        let over = open.is_empty();
        if !over {
            possible = open;
            self.weights = weights;
            self.state = possible[0].clone();
        }
        self.possible = Some(possible);
        Ok(over)
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

/// The `k`th joint move of the product of the roles' moves (`k` below the product's size).
fn nth_joint(legal: &[Vec<TermId>], mut k: usize) -> Vec<TermId> {
    let mut joint = Vec::with_capacity(legal.len());
    for moves in legal {
        if moves.is_empty() {
            return Vec::new();
        }
        joint.push(moves[k % moves.len()]);
        k /= moves.len();
    }
    joint
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

/// Flat Monte Carlo over the states the player may be in (the HyperPlay approach of GDL-II
/// players; in a GDL game, the one state): for each legal move, random playouts from states
/// drawn by their weight, the move made first, the others' moves random; the move with the best
/// weighted average goal, found by the deadline.
pub struct SampleStrategy {
    rng: SmallRng,
}

/// Playouts run for one move at most (the deadline usually ends them first).
const SAMPLE_PLAYOUTS: usize = 2000;
/// Steps of a playout at most.
const PLAYOUT_STEPS: usize = 500;

impl SampleStrategy {
    pub fn new(seed: u64) -> SampleStrategy {
        SampleStrategy {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Strategy for SampleStrategy {
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, String> {
        let moves = game.legal_moves()?;
        if moves.len() <= 1 {
            return moves.first().copied().ok_or_else(|| "no legal move".into());
        }
        let states = game
            .possible
            .clone()
            .unwrap_or_else(|| vec![game.state.clone()]);
        let weights: Vec<f64> = (0..states.len())
            .map(|k| game.weights.get(k).copied().unwrap_or(1.0))
            .collect();
        let pick =
            rand::distr::weighted::WeightedIndex::new(&weights).map_err(|e| e.to_string())?;
        let mut sums = vec![0.0f64; moves.len()];
        let mut counts = vec![0u32; moves.len()];
        'rounds: for _ in 0..SAMPLE_PLAYOUTS {
            for (i, &m) in moves.iter().enumerate() {
                if Instant::now() >= deadline {
                    break 'rounds;
                }
                let state = &states[rand::distr::Distribution::sample(&pick, &mut self.rng)];
                // A playout the rules cannot finish (a terminal state without one goal value,
                // a role without legal moves) counts for nothing.
                let Ok(mut joint) = game.machine.random_joint_move(state, &mut self.rng) else {
                    continue;
                };
                joint[game.role] = m;
                let Ok(next) = game.machine.next_state(state, &joint) else {
                    continue;
                };
                let playout = game
                    .machine
                    .random_playout(&next, PLAYOUT_STEPS, &mut self.rng);
                if let Ok(Playout {
                    goals: Some(goals), ..
                }) = playout
                {
                    sums[i] += f64::from(goals[game.role]);
                    counts[i] += 1;
                }
            }
        }
        let value = |i: usize| sums[i] / f64::from(counts[i].max(1));
        let best = (0..moves.len())
            .max_by(|&a, &b| value(a).total_cmp(&value(b)))
            .expect("moves");
        Ok(moves[best])
    }
}

/// A strategy that needs the true state (flat Monte Carlo, MCTS) plays a GDL-II game, where
/// the player only knows the states it may be in, through [`SampleStrategy`] over those states:
/// searching one of them as if it were the state would choose moves that may be illegal.
pub struct NeedsState {
    full: Box<dyn Strategy>,
    hidden: SampleStrategy,
}

impl NeedsState {
    pub fn new(full: Box<dyn Strategy>, seed: u64) -> NeedsState {
        NeedsState {
            full,
            hidden: SampleStrategy::new(seed),
        }
    }
}

impl Strategy for NeedsState {
    fn start(&mut self, game: &mut Game, deadline: Instant) {
        if game.possible.is_none() {
            self.full.start(game, deadline);
        }
    }

    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, String> {
        if game.possible.is_some() {
            self.hidden.select(game, deadline)
        } else {
            self.full.select(game, deadline)
        }
    }

    fn stop(&mut self, game: &mut Game) {
        if game.possible.is_none() {
            self.full.stop(game);
        }
    }

    fn report(&self) -> Option<MoveReport> {
        self.full.report()
    }

    fn stats(&self) -> Option<PlayerStats> {
        self.full.stats()
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
                    seed,
                )) as Box<dyn Strategy>
            }),
            StrategyKind::Mcts(config) => std::sync::Arc::new(move || {
                let seed = seed();
                Box::new(NeedsState::new(
                    Box::new(MctsStrategy::new(config, seed)),
                    seed,
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
    use super::*;

    const MONTY: &str = include_str!("../../../games/montyhall.kif");

    fn fluents(game: &Game, state: &State) -> Vec<String> {
        let mut out: Vec<String> = game
            .machine
            .fluents(state)
            .iter()
            .map(|&f| game.machine.terms().text(game.machine.symbols(), f))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_search_players_play_a_gdl2_game_from_what_the_player_may_know() {
        // MCTS and flat Monte Carlo need the state; in a GDL-II game they choose through the
        // sampling player, among the moves legal in every state the player may be in.
        for kind in [
            StrategyKind::MonteCarlo,
            StrategyKind::Mcts(MctsConfig::default()),
        ] {
            let mut game = Game::new(load(MONTY).unwrap(), 0).unwrap();
            let mut strategy = kind.factory(7)();
            let soon = || Instant::now() + Duration::from_millis(200);
            strategy.start(&mut game, soon());
            let choose = strategy.select(&mut game, soon()).unwrap();
            assert!(
                game.legal_moves().unwrap().contains(&choose),
                "{}",
                kind.name()
            );
            let door = game.text(choose);
            assert!(door.starts_with("(choose "), "{door}");
            game.last_move = Some(choose);
            game.perceive(None, &[format!("(picked {})", &door[8..9])])
                .unwrap();
            // The car may be behind any door: the search must not read it from one state.
            assert_eq!(game.possible.as_ref().map(Vec::len), Some(3));
            let wait = strategy.select(&mut game, soon()).unwrap();
            assert_eq!(game.text(wait), "wait");
        }
    }

    /// Where the car is in each state the player holds possible.
    fn cars_of(game: &Game) -> Vec<String> {
        let possible = game.possible.as_ref().unwrap();
        possible
            .iter()
            .map(|s| {
                fluents(game, s)
                    .into_iter()
                    .find(|f| f.starts_with("(car"))
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn a_gdl2_player_keeps_exactly_the_states_its_percepts_allow() {
        let mut game = Game::new(load(MONTY).unwrap(), 0).unwrap();
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(1));
        let choose = game.machine.intern("(choose 1)").unwrap();
        game.last_move = Some(choose);
        game.perceive(None, &["(picked 1)".into()]).unwrap();
        // The car may be behind any door.
        let cars = cars_of(&game);
        assert_eq!(cars.len(), 3, "{cars:?}");
        game.last_move = Some(game.machine.intern("wait").unwrap());
        game.perceive(None, &["(opened 3)".into()]).unwrap();
        // Door 3 was opened: the car is behind 1 or 2.
        let mut cars = cars_of(&game);
        cars.sort();
        assert_eq!(cars, ["(car 1)", "(car 2)"]);
        let mut moves: Vec<String> = game
            .legal_moves()
            .unwrap()
            .iter()
            .map(|&m| game.text(m))
            .collect();
        moves.sort();
        assert_eq!(moves, ["stay", "switch"]);
        // A percept no state explains is an error, and the states are kept.
        let err = game.perceive(None, &["(opened 9)".into()]).unwrap_err();
        assert!(err.contains("explains"), "{err}");
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(2));
        // A GDL game has no set of states.
        let tictactoe = Game::new(
            load(include_str!("../../../games/tictactoe.kif")).unwrap(),
            0,
        );
        assert!(tictactoe.unwrap().possible.is_none());
    }
}

#[cfg(test)]
mod sample_tests {
    use super::*;

    /// After picking door 1 and seeing door 3 opened, the car is behind door 2 two times in
    /// three: the weights say so, and the sampling strategy switches.
    #[test]
    fn the_sampling_player_switches_doors() {
        let mut game = Game::new(
            load(include_str!("../../../games/montyhall.kif")).unwrap(),
            0,
        )
        .unwrap();
        game.last_move = Some(game.machine.intern("(choose 1)").unwrap());
        game.perceive(None, &["(picked 1)".into()]).unwrap();
        game.last_move = Some(game.machine.intern("wait").unwrap());
        game.perceive(None, &["(opened 3)".into()]).unwrap();
        let possible = game.possible.clone().unwrap();
        let weight_of = |car: &str| -> f64 {
            possible
                .iter()
                .zip(&game.weights)
                .filter(|(s, _)| {
                    game.machine
                        .fluents(s)
                        .iter()
                        .any(|&f| game.machine.terms().text(game.machine.symbols(), f) == car)
                })
                .map(|(_, w)| *w)
                .sum()
        };
        let (one, two) = (weight_of("(car 1)"), weight_of("(car 2)"));
        assert!((two / one - 2.0).abs() < 1e-9, "{one} {two}");
        let mut strategy = SampleStrategy::new(5);
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let chosen = strategy.select(&mut game, deadline).unwrap();
        assert_eq!(game.text(chosen), "switch");
    }
}

#[cfg(test)]
mod name_tests {
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
