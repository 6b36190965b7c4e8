//! The engine a program should use: the fast engine where it can compile the game (a network,
//! or, for a game too large to ground, its join tier), the reference engine where it cannot
//! (and the reason why).

use gdl_check::{Checked, Symbols};
use gdl_syntax::Diagnostic;
use rand::Rng;

use crate::fast::joins::{JoinLimits, JoinMachine, JoinState};
use crate::fast::{BuildError, FastLimits, FastMachine, FastState};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{LazyLock, Mutex};
use std::time::Instant;

use crate::knowledge::{History, KnowledgeLimits, KnowledgeMachine};
use crate::machine::{
    Batch, Playout, ReasonError, Result, RoleIndex, Rollouts, Rounds, StateMachine, Until,
    sequential_playouts_from,
};
use crate::reference::{Limits, ReferenceMachine, ReferenceState};
use crate::terms::{TermError, TermId, TermStore};

/// Which engine to build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// The fast engine, or the reference engine where the fast one cannot compile the game.
    #[default]
    Fast,
    /// The reference engine.
    Reference,
}

/// A machine of either engine: the fast engine's network, its join tier (for a game too large
/// for a network, with the reason), or the reference engine. A reference machine built because
/// the fast engine could not compile the game carries the reason.
pub enum Machine {
    Fast(Box<FastMachine>),
    Joins(Box<JoinMachine>, String),
    Reference(Box<ReferenceMachine>, Option<String>),
    /// A machine over histories, for GDL-III rules (with `knows`): the knowledge layer over the
    /// fast engine, or over the reference engine with the reason the fast one gave when it was
    /// asked for and cannot compile the rules.
    Knowledge(Box<KnowledgeMachine>, Option<String>),
}

/// A state of a [`Machine`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum MachineState {
    Fast(FastState),
    Joins(JoinState),
    Reference(ReferenceState),
    Knowledge(History),
}

impl Machine {
    /// Builds the chosen engine for a checked description. `limits` are the reference
    /// engine's budgets per question (it may be the fallback).
    pub fn build(
        checked: &Checked<'_>,
        choice: EngineChoice,
        limits: Limits,
    ) -> std::result::Result<Machine, Vec<Diagnostic>> {
        Machine::build_with(checked, choice, limits, FastLimits::default())
    }

    pub fn build_with(
        checked: &Checked<'_>,
        choice: EngineChoice,
        limits: Limits,
        fast_limits: FastLimits,
    ) -> std::result::Result<Machine, Vec<Diagnostic>> {
        let gdl3 = gdl_check::knows::first_use(&checked.program).is_some();
        if gdl3 {
            return Machine::build_knowledge(checked, choice, limits, fast_limits);
        }
        let fallback = match choice {
            EngineChoice::Fast => {
                let network = match refusals::recall(checked.text, &fast_limits) {
                    // Refused before, for a reason that does not change (see `refusals`).
                    Some(reason) => reason,
                    None => match build_network(checked, fast_limits) {
                        Ok(m) => return Ok(Machine::Fast(Box::new(m))),
                        Err(BuildError::Invalid(diagnostics)) => return Err(diagnostics),
                        Err(BuildError::Unsupported(reason)) => reason,
                    },
                };
                // Too large for a network: the join tier, which grounds nothing ahead.
                let joins = JoinLimits {
                    time: limits.time,
                    ..JoinLimits::default()
                };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    JoinMachine::new(checked, joins)
                })) {
                    Ok(Ok(m)) => return Ok(Machine::Joins(Box::new(m), network)),
                    Ok(Err(BuildError::Invalid(diagnostics))) => return Err(diagnostics),
                    Ok(Err(BuildError::Unsupported(why))) => Some(both_reasons(&network, &why)),
                    Err(panic) => Some(both_reasons(
                        &network,
                        &format!("internal error: {}", panic_message(&*panic)),
                    )),
                }
            }
            EngineChoice::Reference => None,
        };
        let m = ReferenceMachine::with_limits(checked, limits)?;
        Ok(Machine::Reference(Box::new(m), fallback))
    }

    /// The knowledge machine for GDL-III rules: over the fast engine when it is chosen and can
    /// compile them, else over the reference engine (with the fast engine's reason).
    fn build_knowledge(
        checked: &Checked<'_>,
        choice: EngineChoice,
        limits: Limits,
        fast_limits: FastLimits,
    ) -> std::result::Result<Machine, Vec<Diagnostic>> {
        let knowledge = KnowledgeLimits::default();
        let fallback = match choice {
            EngineChoice::Fast => {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    KnowledgeMachine::fast(checked, fast_limits, knowledge)
                })) {
                    Ok(Ok(m)) => return Ok(Machine::Knowledge(Box::new(m), None)),
                    Ok(Err(BuildError::Invalid(diagnostics))) => return Err(diagnostics),
                    Ok(Err(BuildError::Unsupported(why))) => Some(why),
                    Err(panic) => Some(format!("internal error: {}", panic_message(&*panic))),
                }
            }
            EngineChoice::Reference => None,
        };
        let m = KnowledgeMachine::new(checked, limits, knowledge)?;
        Ok(Machine::Knowledge(Box::new(m), fallback))
    }

    /// Why the fast engine was asked for and not used (it cannot compile the game), if so.
    pub fn fallback(&self) -> Option<&str> {
        match self {
            Machine::Reference(_, reason) | Machine::Knowledge(_, reason) => reason.as_deref(),
            Machine::Fast(_) | Machine::Joins(..) => None,
        }
    }

    /// Why the game runs on the fast engine's join tier (it is too large for a network), if so.
    pub fn join_tier(&self) -> Option<&str> {
        match self {
            Machine::Joins(_, reason) => Some(reason),
            _ => None,
        }
    }

    /// Which engine runs, and why the fast one does not when it was asked for, in words:
    /// `fast engine`, or `reference engine (the fast engine cannot compile this game: …)`.
    pub fn describe_engine(&self) -> String {
        match self {
            Machine::Fast(_) => "fast engine".into(),
            Machine::Joins(_, reason) => {
                format!("fast engine, join plans (too large for a network: {reason})")
            }
            Machine::Reference(_, None) => "reference engine".into(),
            Machine::Reference(_, Some(reason)) => {
                format!("reference engine (the fast engine cannot compile this game: {reason})")
            }
            Machine::Knowledge(m, None) if m.is_fast() => {
                "fast engine, over histories (GDL-III)".into()
            }
            Machine::Knowledge(_, None) => "reference engine, over histories (GDL-III)".into(),
            Machine::Knowledge(_, Some(reason)) => format!(
                "reference engine, over histories (GDL-III; the fast engine cannot compile this game: {reason})"
            ),
        }
    }

    /// A copy that answers independently (another thread's, say) and shares this one's
    /// states and terms: a fast machine's network; `None` for the join tier and the reference
    /// engine, whose states refer to terms they intern as they go.
    pub fn try_clone(&self) -> Option<Machine> {
        match self {
            Machine::Fast(m) => Some(Machine::Fast(m.clone())),
            Machine::Joins(..) | Machine::Reference(..) | Machine::Knowledge(..) => None,
        }
    }

    /// Sets a deadline for every following question of the join tier and the reference
    /// engine (`None`: none), whose single question can take long (millions of legal moves):
    /// one still running then fails with a budget error. The network answers a question in
    /// one propagation; its batches of playouts take their deadline as they are asked.
    pub fn set_until(&mut self, until: Option<Instant>) {
        match self {
            Machine::Fast(_) => {}
            Machine::Joins(m, _) => m.set_until(until),
            Machine::Reference(m, _) => m.set_until(until),
            Machine::Knowledge(m, _) => m.set_until(until),
        }
    }

    /// The engine's name: `fast` (either tier, or the knowledge machine over the fast engine)
    /// or `reference`.
    pub fn engine_name(&self) -> &'static str {
        match self {
            Machine::Fast(_) | Machine::Joins(..) => "fast",
            Machine::Knowledge(m, _) if m.is_fast() => "fast",
            Machine::Reference(..) | Machine::Knowledge(..) => "reference",
        }
    }
}

/// [`sequential_playouts_from`] on an engine that plays one playout at a time, from `starts`
/// (each of which `of` must find to be that engine's state), `(per_start, max_steps,
/// deadline)` as [`StateMachine::playouts_from`] takes them.
fn one_at_a_time_from<M: StateMachine>(
    m: &mut M,
    starts: &[MachineState],
    of: impl Fn(&MachineState) -> Option<&M::State>,
    rounds: Rounds,
    rng: &mut impl Rng,
    out: &mut Rollouts,
) -> Result<()> {
    if !starts.iter().all(|s| of(s).is_some()) {
        return Err(mismatch());
    }
    sequential_playouts_from(
        m,
        starts.len(),
        |i| of(&starts[i]).expect("checked above"),
        rounds,
        rng,
        out,
    )
}

/// The network, built with a panic in its compiler turned into a refusal (a bug, but it must not
/// take a player or a match down), and a refusal before the deadline remembered.
fn build_network(
    checked: &Checked<'_>,
    fast_limits: FastLimits,
) -> std::result::Result<FastMachine, BuildError> {
    let started = Instant::now();
    let refusals = ggp_memory::refusals();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        FastMachine::with_limits(checked, fast_limits)
    })) {
        Ok(Err(BuildError::Unsupported(reason))) => {
            // Refused before the deadline: by a budget of size or work, or by the form of the
            // rules, which give the same verdict every time; not by memory, whose budget is
            // shared with whatever else the process holds (so not when any memory check
            // refused meanwhile, this build's or another's).
            if started.elapsed() < fast_limits.time && ggp_memory::refusals() == refusals {
                refusals::remember(checked.text, &fast_limits, &reason);
            }
            Err(BuildError::Unsupported(reason))
        }
        Ok(built) => built,
        Err(panic) => Err(BuildError::Unsupported(format!(
            "internal error: {}",
            panic_message(&*panic)
        ))),
    }
}

/// Why neither the network nor the join tier compiles the game: both reasons, or one when they
/// are the same.
fn both_reasons(network: &str, joins: &str) -> String {
    if network == joins {
        network.to_string()
    } else {
        format!("{network}; with join plans: {joins}")
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

fn mismatch() -> ReasonError {
    ReasonError::BadRequest("a state of another engine".into())
}

macro_rules! both {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            Machine::Fast($m) => $e,
            Machine::Joins($m, _) => $e,
            Machine::Reference($m, _) => $e,
            Machine::Knowledge($m, _) => $e,
        }
    };
}

impl StateMachine for Machine {
    type State = MachineState;

    fn roles(&self) -> &[TermId] {
        both!(self, m => m.roles())
    }

    fn terms(&self) -> &TermStore {
        both!(self, m => m.terms())
    }

    fn symbols(&self) -> &Symbols {
        both!(self, m => m.symbols())
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        both!(self, m => m.intern(text))
    }

    fn initial_state(&mut self) -> Result<MachineState> {
        Ok(match self {
            Machine::Fast(m) => MachineState::Fast(m.initial_state()?),
            Machine::Joins(m, _) => MachineState::Joins(m.initial_state()?),
            Machine::Reference(m, _) => MachineState::Reference(m.initial_state()?),
            Machine::Knowledge(m, _) => MachineState::Knowledge(m.initial_state()?),
        })
    }

    fn fluents(&self, state: &MachineState) -> Vec<TermId> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.fluents(s),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.fluents(s),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.fluents(s),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.fluents(s),
            _ => Vec::new(),
        }
    }

    fn legal_moves(&mut self, state: &MachineState, role: RoleIndex) -> Result<Vec<TermId>> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.legal_moves(s, role),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.legal_moves(s, role),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.legal_moves(s, role),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.legal_moves(s, role),
            _ => Err(mismatch()),
        }
    }

    fn next_state(&mut self, state: &MachineState, joint: &[TermId]) -> Result<MachineState> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => {
                Ok(MachineState::Fast(m.next_state(s, joint)?))
            }
            (Machine::Joins(m, _), MachineState::Joins(s)) => {
                Ok(MachineState::Joins(m.next_state(s, joint)?))
            }
            (Machine::Reference(m, _), MachineState::Reference(s)) => {
                Ok(MachineState::Reference(m.next_state(s, joint)?))
            }
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => {
                Ok(MachineState::Knowledge(m.next_state(s, joint)?))
            }
            _ => Err(mismatch()),
        }
    }

    fn has_sees(&self) -> bool {
        both!(self, m => m.has_sees())
    }

    fn percepts(
        &mut self,
        state: &MachineState,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.percepts(s, joint, role),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.percepts(s, joint, role),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.percepts(s, joint, role),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.percepts(s, joint, role),
            _ => Err(mismatch()),
        }
    }

    fn is_terminal(&mut self, state: &MachineState) -> Result<bool> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.is_terminal(s),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.is_terminal(s),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.is_terminal(s),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.is_terminal(s),
            _ => Err(mismatch()),
        }
    }

    fn goal_values(&mut self, state: &MachineState, role: RoleIndex) -> Result<Vec<TermId>> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.goal_values(s, role),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.goal_values(s, role),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.goal_values(s, role),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.goal_values(s, role),
            _ => Err(mismatch()),
        }
    }

    fn goal(&mut self, state: &MachineState, role: RoleIndex) -> Result<u8> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.goal(s, role),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.goal(s, role),
            (Machine::Reference(m, _), MachineState::Reference(s)) => m.goal(s, role),
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => m.goal(s, role),
            _ => Err(mismatch()),
        }
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        both!(self, m => m.base_fluents())
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        both!(self, m => m.input_moves(role))
    }

    fn random_playout(
        &mut self,
        state: &MachineState,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Playout> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.random_playout(s, max_steps, rng),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.random_playout(s, max_steps, rng),
            (Machine::Reference(m, _), MachineState::Reference(s)) => {
                m.random_playout(s, max_steps, rng)
            }
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => {
                m.random_playout(s, max_steps, rng)
            }
            _ => Err(mismatch()),
        }
    }

    fn playouts(
        &mut self,
        state: &MachineState,
        until: Until,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Batch> {
        match (self, state) {
            (Machine::Fast(m), MachineState::Fast(s)) => m.playouts(s, until, max_steps, rng),
            (Machine::Joins(m, _), MachineState::Joins(s)) => m.playouts(s, until, max_steps, rng),
            (Machine::Reference(m, _), MachineState::Reference(s)) => {
                m.playouts(s, until, max_steps, rng)
            }
            (Machine::Knowledge(m, _), MachineState::Knowledge(s)) => {
                m.playouts(s, until, max_steps, rng)
            }
            _ => Err(mismatch()),
        }
    }

    fn playouts_from(
        &mut self,
        starts: &[MachineState],
        per_start: u32,
        max_steps: usize,
        deadline: Option<Instant>,
        rng: &mut impl Rng,
        out: &mut Rollouts,
    ) -> Result<()> {
        let rounds = Rounds {
            per_start,
            max_steps,
            deadline,
        };
        match self {
            Machine::Fast(m) => {
                if !starts.iter().all(|s| matches!(s, MachineState::Fast(_))) {
                    return Err(mismatch());
                }
                m.playouts_from_fn(
                    starts.len(),
                    |i| match &starts[i] {
                        MachineState::Fast(s) => s,
                        _ => unreachable!("checked above"),
                    },
                    rounds,
                    rng,
                    out,
                )
            }
            Machine::Joins(m, _) => one_at_a_time_from(
                &mut **m,
                starts,
                |s| match s {
                    MachineState::Joins(s) => Some(s),
                    _ => None,
                },
                rounds,
                rng,
                out,
            ),
            Machine::Reference(m, _) => one_at_a_time_from(
                &mut **m,
                starts,
                |s| match s {
                    MachineState::Reference(s) => Some(s),
                    _ => None,
                },
                rounds,
                rng,
                out,
            ),
            Machine::Knowledge(m, _) => one_at_a_time_from(
                &mut **m,
                starts,
                |s| match s {
                    MachineState::Knowledge(s) => Some(s),
                    _ => None,
                },
                rounds,
                rng,
                out,
            ),
        }
    }

    fn parallel_playouts(&self) -> usize {
        both!(self, m => m.parallel_playouts())
    }
}

/// The fast engine's refusals in this process, by rules text and budgets. A refusal that is not
/// for time is the same every time (the budgets are counts), and finding it again costs what
/// it cost the first time, seconds and hundreds of megabytes for the largest descriptions
/// (docs/benchmarks.md, "The join tier"); a match builds a machine for the referee and one for
/// each built-in player, and `ggp serve` one for every match. A collision of two texts' hashes
/// could only send a game the fast engine builds to the reference engine, which plays every
/// game exactly.
mod refusals {
    use super::*;

    /// Texts remembered at most; past that the memory starts again.
    const CAPACITY: usize = 256;

    type Key = (u64, usize, usize, u32, u64);

    static REFUSED: LazyLock<Mutex<HashMap<Key, String>>> = LazyLock::new(Mutex::default);

    fn key(text: &str, limits: &FastLimits) -> Key {
        // Every budget but time (a new one must be added here, or said why not).
        let FastLimits {
            max_atoms,
            max_rules,
            max_depth,
            max_work,
            time: _,
            // How the grounding is scheduled, not what it may spend: the verdict is the same.
            ground_beside: _,
        } = *limits;
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        (h.finish(), max_atoms, max_rules, max_depth, max_work)
    }

    pub(super) fn recall(text: &str, limits: &FastLimits) -> Option<String> {
        let refused = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
        refused.get(&key(text, limits)).cloned()
    }

    pub(super) fn remember(text: &str, limits: &FastLimits, reason: &str) {
        let mut refused = REFUSED.lock().unwrap_or_else(|e| e.into_inner());
        if refused.len() >= CAPACITY {
            refused.clear();
        }
        refused.insert(key(text, limits), reason.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str) -> Machine {
        Machine::build(
            &gdl_check::check(text),
            EngineChoice::Fast,
            Limits::default(),
        )
        .unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn the_fast_engine_when_it_can_the_reference_engine_with_the_reason_when_not() {
        let fast = build(include_str!("../../../games/tictactoe.kif"));
        assert_eq!(fast.engine_name(), "fast");
        assert_eq!(fast.fallback(), None);
        // A fact with variables stands for infinitely many ground facts: the join tier plays
        // it where every call binds its variables, as here.
        let mut joins = build(
            "(role r) (same ?x ?x) (init (at a)) (<= (legal r (go ?y)) (true (at ?x)) (same ?x ?y))
             (<= (next (at ?y)) (does r (go ?y))) (<= terminal (true (at a)))
             (<= (goal r 100) (true (at a)))",
        );
        assert_eq!(joins.engine_name(), "fast");
        assert!(
            joins
                .join_tier()
                .expect("a reason")
                .contains("has variables")
        );
        let s0 = joins.initial_state().unwrap();
        assert!(joins.is_terminal(&s0).unwrap());
        assert_eq!(joins.goals(&s0).unwrap(), [100]);
        // Called with its variables free, neither tier can compute it.
        let mut refused = build(
            "(role r) (same ?x ?x) (init (at a)) (<= (legal r go) (same ?x ?x))
             (<= (next (at b)) (does r go)) (<= terminal (true (at b)))
             (<= (goal r 100) (true (at b))) (<= (goal r 0) (true (at a)))",
        );
        assert_eq!(refused.engine_name(), "reference");
        let reason = refused.fallback().expect("a reason").to_string();
        assert!(reason.contains("has variables"), "{reason}");
        assert!(
            reason.contains("with join plans: the fact `(same ?x ?x)` has variables and is called with one not bound"),
            "{reason}"
        );
        assert!(refused.describe_engine().contains(&reason));
        // The reference engine answers what does not call it, and says why it cannot answer
        // the rest.
        let s0 = refused.initial_state().unwrap();
        assert!(!refused.is_terminal(&s0).unwrap());
        let err = refused.legal_moves(&s0, 0).unwrap_err();
        assert!(err.to_string().contains("a fact with variables"), "{err}");
    }

    #[test]
    fn a_refusal_by_budget_is_remembered_and_one_for_time_is_not() {
        // Tic-tac-toe under budgets too small for it (and unlike any other test's).
        let text = include_str!("../../../games/tictactoe.kif");
        let checked = gdl_check::check(text);
        let tiny = FastLimits {
            max_atoms: 31,
            ..FastLimits::default()
        };
        assert_eq!(refusals::recall(text, &tiny), None);
        let first =
            Machine::build_with(&checked, EngineChoice::Fast, Limits::default(), tiny).unwrap();
        // Too large for a network under those budgets: the join tier plays it.
        let reason = first.join_tier().expect("refused").to_string();
        assert!(reason.contains("more than 31 atoms"), "{reason}");
        assert_eq!(first.engine_name(), "fast");
        assert_eq!(first.fallback(), None);
        assert_eq!(refusals::recall(text, &tiny).as_deref(), Some(&*reason));
        let again =
            Machine::build_with(&checked, EngineChoice::Fast, Limits::default(), tiny).unwrap();
        assert_eq!(again.join_tier(), Some(&*reason));
        // Other budgets are another question; the default ones build it.
        let fast = Machine::build_with(
            &checked,
            EngineChoice::Fast,
            Limits::default(),
            FastLimits::default(),
        )
        .unwrap();
        assert_eq!(fast.engine_name(), "fast");
        // Out of time: the next build may well succeed, so it is not remembered.
        let no_time = FastLimits {
            time: std::time::Duration::ZERO,
            ..FastLimits::default()
        };
        let late =
            Machine::build_with(&checked, EngineChoice::Fast, Limits::default(), no_time).unwrap();
        let reason = late.join_tier().expect("refused");
        assert!(reason.contains("out of time"), "{reason}");
        assert_eq!(refusals::recall(text, &no_time), None);
    }

    #[test]
    fn a_reason_both_tiers_give_is_said_once() {
        assert_eq!(both_reasons("too large", "too large"), "too large");
        assert_eq!(
            both_reasons("too large", "unbound"),
            "too large; with join plans: unbound"
        );
    }

    #[test]
    fn a_state_of_the_other_engine_is_a_bad_request() {
        let text = include_str!("../../../games/tictactoe.kif");
        let mut fast = build(text);
        let mut reference = Machine::build(
            &gdl_check::check(text),
            EngineChoice::Reference,
            Limits::default(),
        )
        .unwrap();
        let foreign = reference.initial_state().unwrap();
        assert!(matches!(
            fast.is_terminal(&foreign),
            Err(ReasonError::BadRequest(_))
        ));
    }
}
