//! The game as a player knows it: the rules as a state machine, the state (in a GDL-II game,
//! the states it may be in and how likely each is), its role.

use gdl_reason::{EngineChoice, RoleIndex, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use crate::error::PlayError;

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
pub fn load(rules: &str) -> Result<Machine, PlayError> {
    let checked = gdl_check::check(rules);
    Machine::build(&checked, EngineChoice::Fast, Default::default()).map_err(|d| {
        d.first()
            .map_or(PlayError::Unplayable, |d| PlayError::Rules {
                code: d.code,
                message: d.message.clone(),
            })
    })
}

impl Game {
    /// The game at its initial state, for `role`; in a GDL-II game (`sees` or a `random` role)
    /// the player keeps the set of states it may be in.
    pub fn new(mut machine: Machine, role: RoleIndex) -> Result<Game, PlayError> {
        let state = machine.initial_state()?;
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
    pub fn perceive(&mut self, own: Option<&str>, percepts: &[String]) -> Result<(), PlayError> {
        let Some(possible) = self.possible.take() else {
            return Err(PlayError::NoPercepts);
        };
        let certain = own.is_some();
        let own = match own {
            Some(m) => Some(self.machine.intern(m).map_err(|error| PlayError::Move {
                text: m.to_string(),
                error,
            })?),
            None => self.last_move,
        };
        let mut seen = Vec::with_capacity(percepts.len());
        for p in percepts {
            seen.push(self.machine.intern(p).map_err(|error| PlayError::Percept {
                text: p.clone(),
                error,
            })?);
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
            return Err(PlayError::Unexplained);
        }
        if next.len() > MAX_STATES {
            // A sample, the likelier states more often; each then stands for as much.
            next = next
                .choose_multiple_weighted(&mut self.rng, MAX_STATES, |(_, w)| *w)
                .map_err(PlayError::Weights)?
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
    fn resample(&mut self) -> Result<Vec<State>, PlayError> {
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
    fn walk(
        &mut self,
        state: &State,
        t: usize,
        work: &mut usize,
    ) -> Result<Option<State>, PlayError> {
        let Some((own, certain, seen)) = self.history.get(t).cloned() else {
            return Ok(Some(state.clone()));
        };
        let mut legal = self.machine.all_legal_moves(state)?;
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
            let got = self.machine.percepts(state, &joint, self.role)?;
            if got != seen {
                continue;
            }
            let next = self.machine.next_state(state, &joint)?;
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
    ) -> Result<Vec<(State, f64)>, PlayError> {
        let mut out: Vec<(State, f64)> = Vec::new();
        let mut found: std::collections::HashMap<State, usize> = std::collections::HashMap::new();
        for (k, state) in from.iter().enumerate() {
            let weight = weights.get(k).copied().unwrap_or(1.0);
            let mut legal = self.machine.all_legal_moves(state)?;
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
                let got = self.machine.percepts(state, &joint, self.role)?;
                if got == seen {
                    let next = self.machine.next_state(state, &joint)?;
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
    pub fn apply(&mut self, moves: &[String]) -> Result<(), PlayError> {
        let roles = self.machine.roles().len();
        if moves.len() != roles {
            return Err(PlayError::MoveCount {
                moves: moves.len(),
                roles,
            });
        }
        let mut joint = Vec::with_capacity(moves.len());
        for m in moves {
            joint.push(self.machine.intern(m).map_err(|error| PlayError::Move {
                text: m.clone(),
                error,
            })?);
        }
        let state = self.state.clone();
        self.state = self
            .machine
            .next_state(&state, &joint)
            .map_err(PlayError::Apply)?;
        Ok(())
    }

    /// The legal moves of the player's role in the current state; in a GDL-II game, the moves
    /// legal in every state it may be in (so that no state it cannot see makes its move
    /// illegal), or, if there is none such, those of one of them.
    pub fn legal_moves(&mut self) -> Result<Vec<TermId>, PlayError> {
        // Asked for a move, the player is not in a terminal state.
        self.is_over()?;
        let state = self.state.clone();
        let mut moves = self.machine.legal_moves(&state, self.role)?;
        if let Some(possible) = &self.possible {
            let mut common = moves.clone();
            for s in possible {
                let legal = self.machine.legal_moves(s, self.role)?;
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
    pub fn is_over(&mut self) -> Result<bool, PlayError> {
        let Some(mut possible) = self.possible.take() else {
            let state = self.state.clone();
            return Ok(self.machine.is_terminal(&state)?);
        };
        let mut open = Vec::with_capacity(possible.len());
        let mut weights = Vec::with_capacity(possible.len());
        for (k, s) in possible.iter().enumerate() {
            if !self.machine.is_terminal(s)? {
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

    /// Whether the rules are GDL-III (they use `knows`): the machine's states are histories
    /// and what the player knows decides goals or legal moves, so a search must value a move
    /// by what the player knows when making it ([`crate::InfoSetStrategy`]).
    pub fn is_epistemic(&self) -> bool {
        matches!(self.machine, gdl_reason::Machine::Knowledge(..))
    }

    /// The states the player may be in, each with its weight (not normalised): in a GDL-II
    /// game `possible` and `weights`, in a GDL game the one state, of weight 1.
    pub fn beliefs(&self) -> (Vec<State>, Vec<f64>) {
        let states = self
            .possible
            .clone()
            .unwrap_or_else(|| vec![self.state.clone()]);
        let weights = (0..states.len())
            .map(|k| self.weights.get(k).copied().unwrap_or(1.0))
            .collect();
        (states, weights)
    }

    /// A term as the rules spell it: what is sent to the Game Manager (see
    /// [`gdl_reason::TermStore::spelled`]).
    pub fn text(&self, term: TermId) -> String {
        self.machine.terms().spelled(self.machine.symbols(), term)
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::{MctsConfig, StrategyKind};

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
        assert!(matches!(err, PlayError::Unexplained), "{err}");
        assert!(err.to_string().contains("explains"), "{err}");
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(2));
        // A GDL game has no set of states.
        let tictactoe = Game::new(
            load(include_str!("../../../games/tictactoe.kif")).unwrap(),
            0,
        );
        assert!(tictactoe.unwrap().possible.is_none());
    }
}
