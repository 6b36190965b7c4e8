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
        let mut next = self.successors(&possible, own, &seen)?;
        if next.is_empty() && own.is_some() && !certain {
            // The manager may have replaced the move this player sent.
            next = self.successors(&possible, None, &seen)?;
        }
        if next.is_empty() {
            // The states kept were a sample without the true one: draw others.
            next = self.resample()?;
        }
        if next.is_empty() {
            self.history.pop();
            self.possible = Some(possible);
            return Err("no state this player may be in explains its percepts".into());
        }
        if next.len() > MAX_STATES {
            next = next
                .choose_multiple(&mut self.rng, MAX_STATES)
                .cloned()
                .collect();
        }
        self.state = next[0].clone();
        self.possible = Some(next);
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
        own: Option<TermId>,
        seen: &[TermId],
    ) -> Result<Vec<State>, String> {
        let mut out = Vec::new();
        let mut found = std::collections::HashSet::new();
        for state in from {
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
            let joints: Vec<Vec<TermId>> = match count {
                Some(n) if n <= MAX_JOINTS => (0..n).map(|k| nth_joint(&legal, k)).collect(),
                _ => (0..MAX_JOINTS)
                    .map(|_| {
                        legal
                            .iter()
                            .map(|moves| *moves.choose(&mut self.rng).expect("a legal move"))
                            .collect()
                    })
                    .collect(),
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
                    if found.insert(next.clone()) {
                        out.push(next);
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
        for s in &possible {
            if !self.machine.is_terminal(s).map_err(|e| e.to_string())? {
                open.push(s.clone());
            }
        }
        let over = open.is_empty();
        if !over {
            possible = open;
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
    fn a_gdl2_player_keeps_exactly_the_states_its_percepts_allow() {
        let mut game = Game::new(load(MONTY).unwrap(), 0).unwrap();
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(1));
        let choose = game.machine.intern("(choose 1)").unwrap();
        game.last_move = Some(choose);
        game.perceive(None, &["(picked 1)".into()]).unwrap();
        // The car may be behind any door.
        let cars: Vec<String> = game
            .possible
            .clone()
            .unwrap()
            .iter()
            .map(|s| {
                fluents(&game, s)
                    .into_iter()
                    .find(|f| f.starts_with("(car"))
                    .unwrap()
            })
            .collect();
        assert_eq!(cars.len(), 3, "{cars:?}");
        game.last_move = Some(game.machine.intern("wait").unwrap());
        game.perceive(None, &["(opened 3)".into()]).unwrap();
        // Door 3 was opened: the car is behind 1 or 2.
        let mut cars: Vec<String> = game
            .possible
            .clone()
            .unwrap()
            .iter()
            .map(|s| {
                fluents(&game, s)
                    .into_iter()
                    .find(|f| f.starts_with("(car"))
                    .unwrap()
            })
            .collect();
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
