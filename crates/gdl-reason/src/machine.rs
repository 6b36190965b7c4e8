//! The game state machine: the interface every reasoner implements and every player, manager
//! and validator uses.
//!
//! The core is ggp-base's: roles, the initial state, legal moves, the next state, terminality
//! and goals; everything else (joint moves, random moves, playouts) derives from it. Unlike
//! ggp-base, randomness is an explicit parameter, states are plain values, and failures are
//! `Result`s.

use std::fmt;
use std::hash::Hash;

use gdl_check::Symbols;
use rand::Rng;
use rand::seq::IndexedRandom;

use crate::terms::{TermError, TermId, TermStore};

/// Why a question about a game could not be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReasonError {
    /// The description has errors that leave it without an agreed meaning.
    Invalid(String),
    /// Evaluating the rules in a state went beyond a budget (facts, term depth, time).
    Budget(String),
    /// Some rule could not be evaluated in this state (an instance depends on its own
    /// negation, a literal cannot be made ground, …).
    Evaluation(String),
    /// A move or a role the question refers to does not fit the game.
    BadRequest(String),
}

impl fmt::Display for ReasonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReasonError::Invalid(m) => write!(f, "invalid game description: {m}"),
            ReasonError::Budget(m) => write!(f, "budget exceeded: {m}"),
            ReasonError::Evaluation(m) => write!(f, "cannot evaluate the rules: {m}"),
            ReasonError::BadRequest(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ReasonError {}

pub type Result<T> = std::result::Result<T, ReasonError>;

/// What can go wrong for a role in a playout, said the same way by every engine.
pub(crate) enum Fault<'a> {
    /// No legal move in a non-terminal state.
    NoLegalMove,
    /// In a terminal state: no goal value holds, several do, or the one that does (its text)
    /// is not an integer from 0 to 100.
    NoGoal,
    ManyGoals(usize),
    NotANumber(&'a str),
}

impl Fault<'_> {
    /// The error, for the role named `role`.
    pub(crate) fn error(&self, role: &str) -> ReasonError {
        ReasonError::Evaluation(match self {
            Fault::NoLegalMove => format!("`{role}` has no legal move in a non-terminal state"),
            Fault::NoGoal => format!("no goal value holds for `{role}`"),
            Fault::ManyGoals(n) => format!("{n} goal values hold for `{role}`"),
            Fault::NotANumber(value) => {
                format!("the goal value of `{role}`, `{value}`, is not an integer from 0 to 100")
            }
        })
    }
}

/// Index of a role in [`StateMachine::roles`].
pub type RoleIndex = usize;

/// The term of role number `role`, or the error every engine gives for a role that is not
/// there.
pub(crate) fn role_term(roles: &[TermId], role: RoleIndex) -> Result<TermId> {
    roles
        .get(role)
        .copied()
        .ok_or_else(|| ReasonError::BadRequest(format!("there is no role number {role}")))
}

/// A joint move has one move per role; otherwise the error every engine gives.
pub(crate) fn check_joint(roles: &[TermId], joint: &[TermId]) -> Result<()> {
    if joint.len() != roles.len() {
        return Err(ReasonError::BadRequest(format!(
            "a joint move needs {} moves, one per role; got {}",
            roles.len(),
            joint.len()
        )));
    }
    Ok(())
}

/// How a random playout ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Playout {
    /// Joint moves played.
    pub steps: usize,
    /// Every role's goal in the terminal state reached, or `None` when the playout was cut
    /// at its step limit.
    pub goals: Option<smallvec::SmallVec<[u8; 4]>>,
}

/// When a batch of playouts ([`StateMachine::playouts`]) ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// After this many playouts (finished or cut at the step limit).
    Playouts(u64),
    /// At this time: playouts still running then are dropped (their steps are counted).
    Deadline(std::time::Instant),
}

/// What a batch of random playouts did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Playouts that reached a terminal state.
    pub finished: u64,
    /// Playouts cut at the step limit.
    pub cut: u64,
    /// Joint moves played, in every playout (also those cut, or dropped at the deadline).
    pub steps: u64,
    /// Joint moves played in the finished playouts.
    pub finished_steps: u64,
    /// For each role, the sum of its goals over the finished playouts.
    pub goal_sums: Vec<u64>,
}

/// The longest playout whose moves [`StateMachine::playouts_from`] keeps as a start's best line.
pub const MAX_LINE: usize = 1024;

/// What random playouts from several starting states did ([`StateMachine::playouts_from`]),
/// start by start. Meant to be reused from batch to batch: once its vectors are large enough,
/// a batch allocates nothing in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rollouts {
    roles: usize,
    /// Per start: playouts that reached a terminal state.
    pub finished: Vec<u32>,
    /// Per start: playouts cut at the step limit.
    pub cut: Vec<u32>,
    /// Per start and role, at `start * roles + role`: the sum of the role's goals over the
    /// start's finished playouts.
    pub goal_sums: Vec<u64>,
    /// Joint moves played, in every playout (also those cut, or dropped at the deadline).
    pub steps: u64,
    /// Asked by the caller: keep each start's best finished playout (in a game of one role;
    /// ignored otherwise), its goal in `best_goal` and its moves in `best_line`. A playout of
    /// more than [`MAX_LINE`] moves is not kept.
    pub keep_best: bool,
    /// Per start: the best goal of a kept playout (`None`: none finished).
    pub best_goal: Vec<Option<u8>>,
    /// Per start: the moves of the playout whose goal is `best_goal`.
    pub best_line: Vec<Vec<TermId>>,
}

impl Rollouts {
    /// Empties the results for `starts` starts of a game of `roles` roles (`keep_best` stays).
    pub fn reset(&mut self, starts: usize, roles: usize) {
        self.roles = roles;
        self.finished.clear();
        self.finished.resize(starts, 0);
        self.cut.clear();
        self.cut.resize(starts, 0);
        self.goal_sums.clear();
        self.goal_sums.resize(starts * roles, 0);
        self.steps = 0;
        self.best_goal.clear();
        self.best_goal.resize(starts, None);
        if self.best_line.len() < starts {
            self.best_line.resize_with(starts, Vec::new);
        }
        for line in &mut self.best_line[..starts] {
            line.clear();
        }
    }

    /// The number of starts of the last batch.
    pub fn starts(&self) -> usize {
        self.finished.len()
    }

    /// The roles of the game of the last batch.
    pub fn roles(&self) -> usize {
        self.roles
    }

    /// The goal sums of one start, role by role.
    pub fn goal_sums_of(&self, start: usize) -> &[u64] {
        &self.goal_sums[start * self.roles..(start + 1) * self.roles]
    }

    /// Whether best lines are kept in this batch (asked for, and a game of one role).
    pub(crate) fn keeps_lines(&self) -> bool {
        self.keep_best && self.roles == 1
    }

    /// Counts a finished playout of `start` with these goals, whose moves (a game of one role)
    /// are `line` when known.
    pub(crate) fn add_finished(&mut self, start: usize, goals: &[u8], line: Option<&[TermId]>) {
        self.finished[start] += 1;
        for (sum, &g) in self.goal_sums[start * self.roles..].iter_mut().zip(goals) {
            *sum += u64::from(g);
        }
        if let (true, Some(line), [goal]) = (self.keeps_lines(), line, goals)
            && line.len() <= MAX_LINE
            && self.best_goal[start].is_none_or(|best| *goal > best)
        {
            self.best_goal[start] = Some(*goal);
            self.best_line[start].clear();
            self.best_line[start].extend_from_slice(line);
        }
    }
}

/// A game as a state machine.
///
/// Terms (roles, moves, fluents, goal values) are [`TermId`]s of the machine's
/// [`StateMachine::terms`]. Queries take `&mut self` so that engines can keep scratch space and
/// caches; a machine serves one thread (clone it, or build one per thread).
pub trait StateMachine {
    /// A game state: cheap to clone, hashable, comparable.
    type State: Clone + Eq + Hash + fmt::Debug;

    /// The roles, in the order of the description's `role` facts (repeated facts once).
    fn roles(&self) -> &[TermId];

    /// The ground terms the machine speaks in.
    fn terms(&self) -> &TermStore;

    /// The names the terms are built from.
    fn symbols(&self) -> &Symbols;

    /// Interns a term (a move read from a player, say) so it can be compared with the game's.
    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError>;

    fn initial_state(&mut self) -> Result<Self::State>;

    /// The fluents true in a state, sorted by id.
    fn fluents(&self, state: &Self::State) -> Vec<TermId>;

    /// Every move for which `legal` holds for the role, in any order without repetition.
    fn legal_moves(&mut self, state: &Self::State, role: RoleIndex) -> Result<Vec<TermId>>;

    /// The state after every role makes its move (`joint[i]` for role `i`). The moves are not
    /// checked for legality: that is the caller's business.
    fn next_state(&mut self, state: &Self::State, joint: &[TermId]) -> Result<Self::State>;

    fn is_terminal(&mut self, state: &Self::State) -> Result<bool>;

    /// Every value for which `goal` holds for the role (usually one, in terminal states).
    fn goal_values(&mut self, state: &Self::State, role: RoleIndex) -> Result<Vec<TermId>>;

    /// The fluents `base` declares, sorted by id; `None` when the game has no `base` rules.
    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>>;

    /// The moves `input` declares for the role, sorted by id; `None` when the game has no
    /// `input` rules.
    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>>;

    /// Whether the description has `sees` rules (GDL-II percepts).
    fn has_sees(&self) -> bool;

    /// The terms `role` sees when every role makes its move in `state` (`joint[i]` for role
    /// `i`): the second arguments of the `sees` atoms for the role, evaluated like `next`, in
    /// the current state with the joint move. Sorted by id, each once; empty in a game without
    /// `sees`. The moves are not checked for legality.
    fn percepts(
        &mut self,
        state: &Self::State,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>>;

    // ---- derived ------------------------------------------------------------------------

    /// The role named `random` (GDL-II's chance player, played by the game manager), if the
    /// game has one.
    fn random_role(&self) -> Option<RoleIndex> {
        self.roles().iter().position(|&r| {
            self.terms().is_constant(r)
                && self
                    .symbols()
                    .name(self.terms().symbol(r))
                    .eq_ignore_ascii_case("random")
        })
    }

    /// Whether the game is a GDL-II game: it has `sees` rules or a `random` role.
    fn is_gdl2(&self) -> bool {
        self.has_sees() || self.random_role().is_some()
    }

    /// Every role's percepts for the joint move (see [`StateMachine::percepts`]).
    fn all_percepts(&mut self, state: &Self::State, joint: &[TermId]) -> Result<Vec<Vec<TermId>>> {
        (0..self.roles().len())
            .map(|r| self.percepts(state, joint, r))
            .collect()
    }

    /// The role's goal as a number: the one value for which `goal` holds, an integer 0–100.
    fn goal(&mut self, state: &Self::State, role: RoleIndex) -> Result<u8> {
        let values = self.goal_values(state, role)?;
        let role_name = self.terms().spelled(self.symbols(), self.roles()[role]);
        match values.as_slice() {
            [one] => {
                let text = self.terms().spelled(self.symbols(), *one);
                text.parse::<u8>()
                    .ok()
                    .filter(|v| *v <= 100)
                    .ok_or_else(|| Fault::NotANumber(&text).error(&role_name))
            }
            [] => Err(Fault::NoGoal.error(&role_name)),
            many => Err(Fault::ManyGoals(many.len()).error(&role_name)),
        }
    }

    /// Every role's goal (see [`StateMachine::goal`]).
    fn goals(&mut self, state: &Self::State) -> Result<Vec<u8>> {
        (0..self.roles().len())
            .map(|r| self.goal(state, r))
            .collect()
    }

    /// Legal moves of every role.
    fn all_legal_moves(&mut self, state: &Self::State) -> Result<Vec<Vec<TermId>>> {
        (0..self.roles().len())
            .map(|r| self.legal_moves(state, r))
            .collect()
    }

    /// Every joint move (the product of the roles' legal moves).
    fn joint_moves(&mut self, state: &Self::State) -> Result<Vec<Vec<TermId>>> {
        let legal = self.all_legal_moves(state)?;
        let mut joints: Vec<Vec<TermId>> = vec![Vec::with_capacity(legal.len())];
        for moves in &legal {
            joints = joints
                .into_iter()
                .flat_map(|j| {
                    moves.iter().map(move |&m| {
                        let mut j = j.clone();
                        j.push(m);
                        j
                    })
                })
                .collect();
        }
        Ok(joints)
    }

    /// A uniformly random legal move for every role, from `rng`. Fails when a role has no legal
    /// move.
    fn random_joint_move(
        &mut self,
        state: &Self::State,
        rng: &mut impl Rng,
    ) -> Result<Vec<TermId>> {
        let mut joint = Vec::with_capacity(self.roles().len());
        for role in 0..self.roles().len() {
            let moves = self.legal_moves(state, role)?;
            let Some(&m) = moves.choose(rng) else {
                let name = self.terms().spelled(self.symbols(), self.roles()[role]);
                return Err(Fault::NoLegalMove.error(&name));
            };
            joint.push(m);
        }
        Ok(joint)
    }

    /// Plays uniformly random joint moves from `state` until a terminal state (at most
    /// `max_steps` of them) and reads every role's goal there. Engines override it with a loop
    /// that allocates nothing.
    fn random_playout(
        &mut self,
        state: &Self::State,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Playout> {
        let (end, steps) = self.playout(state, max_steps, rng)?;
        if !self.is_terminal(&end)? {
            return Ok(Playout { steps, goals: None });
        }
        let goals = (0..self.roles().len())
            .map(|r| self.goal(&end, r))
            .collect::<Result<_>>()?;
        Ok(Playout {
            steps,
            goals: Some(goals),
        })
    }

    /// Random playouts from `state` (each as [`StateMachine::random_playout`]) until `until`.
    /// Engines may run several at once (the fast engine runs 512 side by side, a bit each).
    fn playouts(
        &mut self,
        state: &Self::State,
        until: Until,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Batch> {
        sequential_playouts(self, state, until, max_steps, rng)
    }

    /// Random playouts from several states: `per_start` from each of `starts`, each as
    /// [`StateMachine::random_playout`], their results start by start in `out` (reset first).
    /// With a `deadline`, playouts still running then are dropped (their steps are counted),
    /// so a start may have fewer results, or none. Engines may run them side by side (the
    /// fast engine runs [`StateMachine::parallel_playouts`] at once, a lane each, every lane
    /// from its own start); the default plays them one at a time, a start after another, and
    /// checks the deadline at every step.
    fn playouts_from(
        &mut self,
        starts: &[Self::State],
        per_start: u32,
        max_steps: usize,
        deadline: Option<std::time::Instant>,
        rng: &mut impl Rng,
        out: &mut Rollouts,
    ) -> Result<()> {
        let rounds = Rounds {
            per_start,
            max_steps,
            deadline,
        };
        sequential_playouts_from(self, starts.len(), |i| &starts[i], rounds, rng, out)
    }

    /// How many playouts [`StateMachine::playouts_from`] runs at once (1: one at a time): a
    /// caller that can offer that many starts gets the most out of a batch.
    fn parallel_playouts(&self) -> usize {
        1
    }

    /// Plays random joint moves from `state` until a terminal state, at most `max_steps` of
    /// them; returns the last state and the number of steps.
    fn playout(
        &mut self,
        state: &Self::State,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<(Self::State, usize)> {
        let mut state = state.clone();
        for step in 0..max_steps {
            if self.is_terminal(&state)? {
                return Ok((state, step));
            }
            let joint = self.random_joint_move(&state, rng)?;
            state = self.next_state(&state, &joint)?;
        }
        Ok((state, max_steps))
    }
}

/// [`StateMachine::playouts`] one at a time.
pub fn sequential_playouts<M: StateMachine + ?Sized>(
    machine: &mut M,
    state: &M::State,
    until: Until,
    max_steps: usize,
    rng: &mut impl Rng,
) -> Result<Batch> {
    let mut batch = Batch {
        goal_sums: vec![0; machine.roles().len()],
        ..Batch::default()
    };
    loop {
        match until {
            Until::Playouts(n) if batch.finished + batch.cut >= n => break,
            Until::Deadline(t) if std::time::Instant::now() >= t => break,
            _ => {}
        }
        let playout = match machine.random_playout(state, max_steps, rng) {
            Ok(playout) => playout,
            // A question cut short by the batch's deadline: the playout is dropped there, as
            // those still running at the deadline are.
            Err(ReasonError::Budget(_)) if matches!(until, Until::Deadline(t) if std::time::Instant::now() >= t) =>
            {
                break;
            }
            Err(e) => return Err(e),
        };
        batch.steps += playout.steps as u64;
        match playout.goals {
            Some(goals) => {
                batch.finished += 1;
                batch.finished_steps += playout.steps as u64;
                for (sum, g) in batch.goal_sums.iter_mut().zip(goals) {
                    *sum += u64::from(g);
                }
            }
            None => batch.cut += 1,
        }
    }
    Ok(batch)
}

/// How many random playouts [`StateMachine::playouts_from`] runs from each start, how far each
/// goes at most, and until when.
#[derive(Clone, Copy, Debug)]
pub struct Rounds {
    pub per_start: u32,
    pub max_steps: usize,
    pub deadline: Option<std::time::Instant>,
}

/// [`StateMachine::playouts_from`] one playout at a time, the starts given by `start`: the
/// `per_start` rounds each visit every start in order. The deadline is checked before every
/// step.
pub fn sequential_playouts_from<'s, M: StateMachine + ?Sized>(
    machine: &mut M,
    starts: usize,
    start: impl Fn(usize) -> &'s M::State,
    rounds: Rounds,
    rng: &mut impl Rng,
    out: &mut Rollouts,
) -> Result<()>
where
    M::State: 's,
{
    let Rounds {
        per_start,
        max_steps,
        deadline,
    } = rounds;
    let roles = machine.roles().len();
    out.reset(starts, roles);
    let late = || deadline.is_some_and(|t| std::time::Instant::now() >= t);
    let mut line = Vec::new();
    for _ in 0..per_start {
        for i in 0..starts {
            let mut state = start(i).clone();
            line.clear();
            let mut steps = 0;
            loop {
                if late() {
                    out.steps += steps;
                    return Ok(());
                }
                if machine.is_terminal(&state)? {
                    let goals = machine.goals(&state)?;
                    out.add_finished(i, &goals, Some(&line));
                    break;
                }
                if steps as usize >= max_steps {
                    out.cut[i] += 1;
                    break;
                }
                let joint = machine.random_joint_move(&state, rng)?;
                if out.keeps_lines() && line.len() <= MAX_LINE {
                    line.push(joint[0]);
                }
                state = machine.next_state(&state, &joint)?;
                steps += 1;
            }
            out.steps += steps;
        }
    }
    Ok(())
}
