//! The fast engine: the game grounded over what can ever hold, compiled into a propositional
//! network, and run by differential propagation over bit-vector states, or, for batches of
//! playouts, evaluated for [`LANES`] playouts at once.
//!
//! - `normal`: rules flattened (negation pushed inward, `or` expanded).
//! - `datalog`: bottom-up evaluation, used for the exact static relations, the relaxed
//!   reachability fixpoint and instantiation.
//! - `ground`: the ground program.
//! - `decompose`: rules split by eliminating existential variables.
//! - `net`: the network, simplified; cycles of gates (recursion within a state) as blocks.
//! - `run`: counters, propagation, legal moves and next-state bits kept by triggers, guarded
//!   gates, move sets (OR gates over moves only, as bitsets), blocks evaluated by least
//!   fixpoint, lazy goals.
//! - `lanes`: bit-parallel playouts ([`StateMachine::playouts`]): every node a word of
//!   [`LANES`] bits, a bit per playout, the network evaluated in node order with word operations.
//!
//! - `joins`: the second tier, for games too large to ground: the rules rewritten by magic
//!   sets and evaluated bottom-up state by state, only where demanded, by join plans over
//!   indexed relations.
//!
//! A game that cannot be grounded within the budgets (an infinite domain, too many ground
//! rules or tuples tried) or whose ground atoms depend on their own negation within a state is
//! refused with the reason; [`crate::Machine`] then builds the join tier, and falls back to the
//! reference engine where that cannot build the game either.

mod datalog;
mod decompose;
mod demand;
mod ground;
pub mod joins;
pub(crate) mod knows;
mod lanes;
mod net;
mod normal;
mod run;

use std::sync::Arc;
use std::time::{Duration, Instant};

use gdl_check::program::Term;
use gdl_check::{Checked, Reserved, Symbols};
use gdl_syntax::Diagnostic;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::FxHashMap;

use self::datalog::Budget;
use self::lanes::LaneRun;
pub use self::lanes::{LANES, LanePlayout};
use self::lanes::{LaneError, LaneErrorKind, Lanes};
use self::net::Ref;
use self::run::Runtime;
use crate::machine::{
    Batch, Fault, Playout, ReasonError, Result, RoleIndex, Rollouts, Rounds, StateMachine, Until,
};
use crate::terms::{TermError, TermId, TermStore};

/// Random playouts run when a machine is built to choose its guards (see [`run`]): at most
/// this many steps, and this long.
const PROFILE_STEPS: usize = 2000;
const PROFILE_TIME: Duration = Duration::from_millis(50);

/// Values grouped by key in compressed sparse rows: the values of key `k` are
/// `values[start[k]..start[k + 1]]`, in the order `pairs` gives them (`pairs` is read twice).
pub(crate) fn csr(
    keys: usize,
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; keys + 1];
    for (key, _) in pairs.clone() {
        start[key as usize + 1] += 1;
    }
    for k in 0..keys {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut values = vec![0u32; start[keys] as usize];
    for (key, value) in pairs {
        let slot = &mut fill[key as usize];
        values[*slot as usize] = value;
        *slot += 1;
    }
    (start, values)
}

/// Budgets of building a fast machine. Beyond them the game is refused (and played by the
/// reference engine instead).
#[derive(Clone, Copy, Debug)]
pub struct FastLimits {
    /// Ground atoms (static and reachable) the grounding may produce.
    pub max_atoms: usize,
    /// Ground rules with a dynamic head.
    pub max_rules: usize,
    /// How deeply a derived term may nest.
    pub max_depth: u32,
    /// Tuples the grounder may try while joining rule bodies: the main budget, and a
    /// deterministic one (the same game gets the same verdict on any machine).
    pub max_work: u64,
    /// Time for grounding and building the network: a guard against a slow machine.
    pub time: Duration,
    /// Where the first grounding runs long, whether the grounding of what is demanded starts
    /// beside it on a second core (see [`ground_game`]; the verdict is the same either way,
    /// only sooner where both fail). Off where the caller keeps every core busy already, as the
    /// fast engine's corpus test does: there the second core's work is other games'.
    pub ground_beside: bool,
}

impl Default for FastLimits {
    fn default() -> FastLimits {
        FastLimits {
            max_atoms: 2_000_000,
            max_rules: 4_000_000,
            max_depth: 64,
            max_work: 60_000_000,
            time: Duration::from_secs(30),
            ground_beside: true,
        }
    }
}

/// Why a fast machine was not built.
#[derive(Clone, Debug)]
pub enum BuildError {
    /// The description has errors that leave it without an agreed meaning.
    Invalid(Vec<Diagnostic>),
    /// The game has a meaning, but the fast engine cannot compile it (the reason).
    Unsupported(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Invalid(d) => write!(
                f,
                "invalid game description: {}",
                d.iter()
                    .map(|d| format!("{} {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            BuildError::Unsupported(m) => f.write_str(m),
        }
    }
}

/// Sizes of a built machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastStats {
    pub fluents: usize,
    pub moves: usize,
    pub atoms: usize,
    pub ground_rules: usize,
    pub nodes: usize,
    pub edges: usize,
    /// Time to ground the rules, to build the network (after grounding), and in all.
    pub ground: Duration,
    pub network: Duration,
    pub build: Duration,
}

/// A state: a bit per fluent.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FastState(Arc<[u64]>);

/// A goal value: the term and, when it is an integer from 0 to 100, the number.
#[derive(Clone, Copy, Debug)]
struct Goal {
    value: TermId,
    number: Option<u8>,
    holds: Ref,
}

/// (Cloned, a machine is independent of the original; its states and terms are the same.)
#[derive(Clone)]
pub struct FastMachine {
    rt: Runtime,
    store: TermStore,
    symbols: Symbols,
    roles: Vec<TermId>,
    fluents: Vec<TermId>,
    fluent_index: FxHashMap<TermId, u32>,
    /// Move number of each (role, move term).
    move_index: FxHashMap<(usize, TermId), u32>,
    move_term: Vec<TermId>,
    terminal: Ref,
    goals: Vec<Vec<Goal>>,
    /// Each role's percepts and when they hold (with the moves set).
    sees: Vec<Vec<(TermId, Ref)>>,
    has_sees: bool,
    init: FastState,
    /// `base` and `input` (static, as they should be), or why they cannot be answered (they
    /// depend on the state).
    base: std::result::Result<Option<Vec<TermId>>, String>,
    input: std::result::Result<Option<Vec<Vec<TermId>>>, String>,
    stats: FastStats,
    joint: Vec<u32>,
    /// The state playouts started from last, and one playouts start from again and again.
    starts: Starts,
    /// The network compiled for bit-parallel playouts (`None`: `legal`, `goal` or `terminal`
    /// depend on the moves, and playouts run one at a time).
    lanes: Option<Box<Lanes>>,
}

/// See [`FastMachine::start_playout`].
#[derive(Clone)]
struct Starts {
    last: Vec<u64>,
    /// The values of a state whose restoring is cheaper than loading it.
    saved: Option<run::Saved>,
    /// [`SAVED_BYTES_PER_CHANGE`] (tests save every state).
    bytes_per_change: u64,
}

impl Default for Starts {
    fn default() -> Starts {
        Starts {
            last: Vec::new(),
            saved: None,
            bytes_per_change: SAVED_BYTES_PER_CHANGE,
        }
    }
}

/// A node changed or a successor updated while loading a state costs about as much as copying
/// this many bytes of saved values (see [`FastMachine::start_playout`]). In a large network a
/// change is a cache miss or two, as long as a copy of a few hundred bytes: at this value the
/// starts of the large benchmark games (speedChess, hex) are copied, which pays, where at 100
/// bytes they were propagated (docs/benchmarks.md, "How the speed came about", 69bab11).
const SAVED_BYTES_PER_CHANGE: u64 = 300;

/// How long the grounding of everything that can hold runs alone before the grounding of only
/// what is demanded starts beside it (see [`ground_game`]): the games that ground at all
/// mostly do in a few milliseconds.
const DEMAND_AFTER: Duration = Duration::from_millis(250);

/// The stack of the thread the second grounding runs on: as deep as a main thread's (grounding
/// recurses as deeply as the rules nest, and the first grounding may run on a main thread).
const HELPER_STACK: usize = 8 << 20;

/// Each role's goals: the value, the number it is when it is one from 0 to 100, and the
/// network's output that says it holds.
fn goals_of(network: &net::Net, store: &TermStore, symbols: &Symbols) -> Vec<Vec<Goal>> {
    network
        .goals
        .iter()
        .map(|list| {
            list.iter()
                .map(|&(value, holds)| Goal {
                    value,
                    number: store
                        .is_constant(value)
                        .then(|| symbols.name(store.symbol(value)).parse::<u8>().ok())
                        .flatten()
                        .filter(|v| *v <= 100),
                    holds,
                })
                .collect()
        })
        .collect()
}

/// What `base` and `input` list, when they are static (they should be): the fluents, and
/// each role's moves; an error when one depends on the state.
type BaseInput = (
    std::result::Result<Option<Vec<TermId>>, String>,
    std::result::Result<Option<Vec<Vec<TermId>>>, String>,
);

fn static_base_input(
    program: &gdl_check::program::Program,
    g: &ground::Ground,
    roles: &[TermId],
) -> BaseInput {
    let static_rel = |r: Reserved| program.reserved(r).map(|r| (r, !g.dynamic[r as usize]));
    let base = match static_rel(Reserved::Base) {
        None => Ok(None),
        Some((r, true)) => {
            let rel = &g.db.rels[r as usize];
            let mut v: Vec<TermId> = (0..rel.len()).map(|t| rel.tuple(t)[0]).collect();
            v.sort_unstable();
            v.dedup();
            Ok(Some(v))
        }
        Some((_, false)) => Err("`base` depends on the state".to_string()),
    };
    let input = match static_rel(Reserved::Input) {
        None => Ok(None),
        Some((r, true)) => {
            let rel = &g.db.rels[r as usize];
            let mut per_role = vec![Vec::new(); roles.len()];
            for t in 0..rel.len() {
                let tuple = rel.tuple(t);
                if let Some(role) = roles.iter().position(|&x| x == tuple[0]) {
                    per_role[role].push(tuple[1]);
                }
            }
            for v in &mut per_role {
                v.sort_unstable();
                v.dedup();
            }
            Ok(Some(per_role))
        }
        Some((_, false)) => Err("`input` depends on the state".to_string()),
    };
    (base, input)
}

/// Grounds the game: everything that can hold first; where that is too much (a budget of size
/// or work), only what is demanded. Where the machine has a second core (and `beside` allows
/// it: [`FastLimits::ground_beside`]), the second grounding
/// starts on a thread of its own once the first has run for [`DEMAND_AFTER`] (at once if the
/// first fails sooner), and is stopped when the first succeeds, or fails for a reason demand
/// cannot help (or panics). The answer is the one the two give one after the other, sooner
/// where both run to their budgets (ruleDepthExponential: seconds each, before the join tier
/// plays it), unless the time guard decides: beside the first, the second has the time from
/// [`DEMAND_AFTER`] on instead of what the first left. The cost: both groundings' memory at
/// once, and the second core busy for nothing while a first grounding that succeeds runs past
/// [`DEMAND_AFTER`] (amazons: seconds).
fn ground_game(
    program: &gdl_check::program::Program,
    store: TermStore,
    limits: &ground::Limits,
    beside: bool,
) -> std::result::Result<ground::Ground, BuildError> {
    let beside = beside && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    ground_game_with(program, store, limits, beside.then_some(DEMAND_AFTER))
}

/// [`ground_game`], the second grounding started on a thread of its own `after` so long (or
/// not: one after the other).
fn ground_game_with(
    program: &gdl_check::program::Program,
    store: TermStore,
    limits: &ground::Limits,
    after: Option<Duration>,
) -> std::result::Result<ground::Ground, BuildError> {
    let demand = |cancel: Option<Arc<std::sync::atomic::AtomicBool>>| ground::Limits {
        demand: true,
        budget: Budget {
            cancel,
            ..limits.budget.clone()
        },
        ..limits.clone()
    };
    let refused = |e: &ground::GroundError, d: Option<&ground::GroundError>| match d {
        Some(d) => BuildError::Unsupported(format!(
            "cannot ground the game: {e}; computing derived relations only where demanded: {d}"
        )),
        None => BuildError::Unsupported(format!("cannot ground the game: {e}")),
    };
    // The first grounding's outcome (a panic caught, to stop the second before it is passed
    // on), and the second's where it ran beside the first.
    let (first, second) = match after {
        None => (Ok(ground::ground(program, store.clone(), limits)), None),
        Some(after) => {
            let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let second = demand(Some(cancel.clone()));
            // `true`: start now (the first grounding failed); `false`: not wanted.
            let (start, wait) = std::sync::mpsc::channel::<bool>();
            std::thread::scope(|scope| {
                let store_second = store.clone();
                // The helper's memory is charged where the first grounding's is.
                let account = ggp_memory::current();
                let helper = std::thread::Builder::new()
                    .name("ground-demand".into())
                    .stack_size(HELPER_STACK)
                    .spawn_scoped(scope, move || {
                        ggp_memory::run_in(account.as_ref(), || match wait.recv_timeout(after) {
                            Ok(true) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                                Some(ground::ground(program, store_second, &second))
                            }
                            Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                                None
                            }
                        })
                    });
                let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    ground::ground(program, store.clone(), limits)
                }));
                let wanted = matches!(&first, Ok(Err(e)) if e.demand_may_help());
                if !wanted {
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                // The helper may have ended already (it is then told nothing).
                let _ = start.send(wanted);
                let second = match helper.map(|h| h.join()) {
                    Ok(Ok(second)) => second,
                    Ok(Err(panic)) if wanted => std::panic::resume_unwind(panic),
                    // A grounding not wanted (which one after the other would not have run),
                    // or no thread: the second grounding runs below, if wanted.
                    Ok(Err(_)) | Err(_) => None,
                };
                (first, second)
            })
        }
    };
    match first.unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
        Ok(g) => Ok(g),
        Err(e) if e.demand_may_help() => second
            .unwrap_or_else(|| ground::ground(program, store, &demand(None)))
            .map_err(|d| refused(&e, Some(&d))),
        Err(e) => Err(refused(&e, None)),
    }
}

/// The ground term of a ground term of the program.
fn ground_term(store: &mut TermStore, term: &Term) -> Option<TermId> {
    match term {
        Term::Var(_) => None,
        Term::Const(c) => Some(store.constant(*c)),
        Term::Fn(f, args) => {
            let ids: Option<Vec<TermId>> = args.iter().map(|a| ground_term(store, a)).collect();
            Some(store.function(*f, &ids?))
        }
    }
}

/// The roles, in the order of their facts, each once.
fn roles_of(program: &gdl_check::program::Program, store: &mut TermStore) -> Vec<TermId> {
    let mut roles = Vec::new();
    if let Some(role) = program.reserved(Reserved::Role) {
        for rule in program
            .rules
            .iter()
            .filter(|r| r.head.rel == role && r.body.is_empty())
        {
            if let [term] = &rule.head.args[..]
                && let Some(id) = ground_term(store, term)
                && !roles.contains(&id)
            {
                roles.push(id);
            }
        }
    }
    roles
}

/// Refuses the game when the memory that building it is charged to is used up (see
/// [`ggp_memory::check`]): between the stages, whose own loops check it where they can.
fn memory_left(stage: &str) -> std::result::Result<(), BuildError> {
    ggp_memory::check().map_err(|e| BuildError::Unsupported(format!("{stage} needs {e}")))
}

impl FastMachine {
    /// Builds the machine for a checked description.
    pub fn new(checked: &Checked<'_>) -> std::result::Result<FastMachine, BuildError> {
        FastMachine::with_limits(checked, FastLimits::default())
    }

    /// Parses and checks `text`, then builds the machine.
    pub fn from_text(text: &str) -> std::result::Result<FastMachine, BuildError> {
        FastMachine::new(&gdl_check::check(text))
    }

    pub fn with_limits(
        checked: &Checked<'_>,
        limits: FastLimits,
    ) -> std::result::Result<FastMachine, BuildError> {
        let blocking: Vec<Diagnostic> = checked.blocking_errors().cloned().collect();
        if !blocking.is_empty() {
            return Err(BuildError::Invalid(blocking));
        }
        crate::gdl3::KnowsRefused::check(&checked.program)
            .map_err(|e| BuildError::Unsupported(e.to_string()))?;
        FastMachine::build_program(&checked.program, limits)
    }

    /// Builds the machine for a program without blocking errors (checked, or rewritten from
    /// one: [`knows`]).
    fn build_program(
        program: &gdl_check::program::Program,
        limits: FastLimits,
    ) -> std::result::Result<FastMachine, BuildError> {
        let started = Instant::now();
        let mut store = TermStore::new();
        let roles = roles_of(program, &mut store);
        let ground_limits = ground::Limits {
            budget: Budget {
                max_tuples: limits.max_atoms,
                max_depth: limits.max_depth,
                max_work: limits.max_work,
                deadline: Some(started + limits.time),
                cancel: None,
            },
            max_rules: limits.max_rules,
            branch_limit: 4096,
            demand: false,
        };
        let g = ground_game(program, store, &ground_limits, limits.ground_beside)?;
        let grounded = started.elapsed();
        memory_left("grounding the game")?;
        let network = net::build(&g, program, &roles)
            .map_err(|e| BuildError::Unsupported(format!("cannot build the network: {e}")))?;
        memory_left("building the network")?;

        if let Some(ins) = network
            .inputs
            .iter()
            .find(|ins| ins.len() >= run::MAX_INPUTS)
        {
            return Err(BuildError::Unsupported(format!(
                "a gate of the network has {} inputs, more than the runtime counts ({})",
                ins.len(),
                run::MAX_INPUTS - 1
            )));
        }
        let rt = Runtime::new(&network, None);
        let (base, input) = static_base_input(program, &g, &roles);
        let store = g.db.store;
        let symbols = program.symbols.clone();
        let goals = goals_of(&network, &store, &symbols);
        let goal_numbers: Vec<Vec<Option<u8>>> = goals
            .iter()
            .map(|list| list.iter().map(|g| g.number).collect())
            .collect();
        let lanes = Lanes::new(&network, &goal_numbers).map(Box::new);
        let words = network.fluents.len().div_ceil(64);
        let mut init = vec![0u64; words];
        for &f in &network.init {
            init[f as usize / 64] |= 1 << (f % 64);
        }
        let stats = FastStats {
            fluents: network.fluents.len(),
            moves: network.moves.len(),
            atoms: g.atoms.len(),
            ground_rules: g.instances.len(),
            nodes: network.kinds.len(),
            edges: network.inputs.iter().map(Vec::len).sum(),
            ground: grounded,
            network: started.elapsed() - grounded,
            build: started.elapsed(),
        };
        let fluent_index = network
            .fluents
            .iter()
            .enumerate()
            .map(|(k, &f)| (f, k as u32))
            .collect();
        let mut machine = FastMachine {
            rt,
            store,
            symbols,
            roles,
            fluents: network.fluents.clone(),
            fluent_index,
            move_index: network.move_index.clone(),
            move_term: network.moves.iter().map(|&(_, m)| m).collect(),
            terminal: network.terminal,
            goals,
            sees: network.sees.clone(),
            has_sees: program.reserved(Reserved::Sees).is_some(),
            init: FastState(init.into()),
            base,
            input,
            stats,
            joint: Vec::new(),
            starts: Starts::default(),
            lanes,
        };
        let init = machine.init.clone();
        machine.rt.load(&init.0);
        // Lay the network out again with the guards that random playouts show are worth it.
        machine.rt.count_flips();
        let profile_end = Instant::now() + PROFILE_TIME;
        let mut rng = SmallRng::seed_from_u64(0);
        let mut steps = 0;
        while steps < PROFILE_STEPS && Instant::now() < profile_end {
            match machine.random_playout(&init, PROFILE_STEPS, &mut rng) {
                Ok(p) => steps += p.steps.max(1),
                Err(_) => break,
            }
        }
        let flips = machine.rt.take_flips();
        if steps > 0 {
            machine.rt = Runtime::new(&network, Some(&flips));
            machine.rt.load(&init.0);
            // Values saved are the old layout's.
            machine.starts = Starts::default();
        }
        machine.stats.build = started.elapsed();
        Ok(machine)
    }

    pub fn stats(&self) -> FastStats {
        self.stats
    }

    /// A state of this machine: as many words as its fluents need, and no bit set beyond them.
    fn check_state(&self, state: &FastState) -> Result<()> {
        // Only the last word can have bits beyond the fluents.
        let spare = self.fluents.len() % 64;
        let beyond = spare != 0 && state.0.last().is_some_and(|&w| w >> spare != 0);
        if state.0.len() != self.rt.bits().len() || beyond {
            return Err(ReasonError::BadRequest(
                "a state of another game's machine".into(),
            ));
        }
        Ok(())
    }

    /// Makes `state` the network's current state to start a playout from. A state playouts
    /// start from twice in a row has its values saved, if copying them is cheaper than
    /// propagating what differs (the copy is at most [`SAVED_BYTES_PER_CHANGE`] bytes per node
    /// changed or successor updated by loading it); while they start from it, it is loaded by a
    /// copy (flat Monte Carlo's and the benchmark's playouts, where loading the start was a
    /// large part of a small game's playout: docs/benchmarks.md, "How the speed came about",
    /// saved starts).
    fn start_playout(&mut self, state: &FastState) -> Result<()> {
        self.check_state(state)?;
        let starts = &self.starts;
        if self.rt.bits()[..] == state.0[..]
            || starts
                .saved
                .as_ref()
                .is_some_and(|s| s.bits() == &state.0[..])
        {
            self.enter(state);
        } else if starts.last[..] != state.0[..] {
            self.rt.load(&state.0);
            self.starts.last.clear();
            self.starts.last.extend_from_slice(&state.0);
        } else {
            // Saved only where that pays (checked again at each start from it).
            let work = self.rt.load_tallied(&state.0);
            if self.rt.saved_bytes() as u64 <= work.saturating_mul(starts.bytes_per_change) {
                let saved = self.starts.saved.get_or_insert_with(run::Saved::default);
                self.rt.save(saved);
            }
        }
        Ok(())
    }

    /// Makes `state` the network's current state (by a copy if it is the state saved by
    /// [`FastMachine::start_playout`]).
    fn load(&mut self, state: &FastState) -> Result<()> {
        self.check_state(state)?;
        self.enter(state);
        Ok(())
    }

    /// [`FastMachine::load`] of a state checked.
    fn enter(&mut self, state: &FastState) {
        if self.rt.bits()[..] != state.0[..] {
            match &self.starts.saved {
                Some(saved) if saved.bits() == &state.0[..] => self.rt.restore(saved),
                _ => self.rt.load(&state.0),
            }
        }
    }

    fn role_check(&self, role: RoleIndex) -> Result<()> {
        crate::machine::role_term(&self.roles, role).map(drop)
    }

    /// Sets the moves of a joint move (checked: one per role, each a move the role can ever
    /// make) on the loaded state.
    fn set_joint(&mut self, joint: &[TermId]) -> Result<()> {
        crate::machine::check_joint(&self.roles, joint)?;
        let mut ids = std::mem::take(&mut self.joint);
        ids.clear();
        for (role, &m) in joint.iter().enumerate() {
            match self.move_index.get(&(role, m)) {
                Some(&id) => ids.push(id),
                None => {
                    self.joint = ids;
                    return Err(ReasonError::BadRequest(format!(
                        "`{}` is never a legal move for `{}`",
                        self.store.spelled(&self.symbols, m),
                        self.store.spelled(&self.symbols, self.roles[role])
                    )));
                }
            }
        }
        self.rt.set_moves(&ids);
        self.joint = ids;
        Ok(())
    }

    /// The goal of a role in the loaded state, as the trait's `goal` defines it.
    fn loaded_goal(&mut self, role: RoleIndex) -> Result<u8> {
        self.rt.settle_lazy();
        let mut found: Option<&Goal> = None;
        let mut count = 0;
        for g in &self.goals[role] {
            if self.rt.value(g.holds) {
                count += 1;
                found = Some(g);
            }
        }
        // The role's name is spelled only for an error (not once a playout).
        let role_name = || self.store.spelled(&self.symbols, self.roles[role]);
        match (count, found) {
            (1, Some(g)) => g.number.ok_or_else(|| {
                Fault::NotANumber(&self.store.spelled(&self.symbols, g.value)).error(&role_name())
            }),
            (0, _) => Err(Fault::NoGoal.error(&role_name())),
            (n, _) => Err(Fault::ManyGoals(n).error(&role_name())),
        }
    }
}

impl StateMachine for FastMachine {
    type State = FastState;

    fn roles(&self) -> &[TermId] {
        &self.roles
    }

    fn terms(&self) -> &TermStore {
        &self.store
    }

    fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        self.store.parse(&mut self.symbols, text)
    }

    fn initial_state(&mut self) -> Result<FastState> {
        Ok(self.init.clone())
    }

    fn fluents(&self, state: &FastState) -> Vec<TermId> {
        let mut out = Vec::new();
        for (w, &word) in state.0.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // (A state of another machine may have bits this one has no fluent for.)
                out.extend(self.fluents.get(w * 64 + b));
            }
        }
        out.sort_unstable();
        out
    }

    fn legal_moves(&mut self, state: &FastState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.role_check(role)?;
        self.load(state)?;
        Ok(self
            .rt
            .legal_moves(role)
            .map(|m| self.move_term[m as usize])
            .collect())
    }

    fn next_state(&mut self, state: &FastState, joint: &[TermId]) -> Result<FastState> {
        self.load(state)?;
        self.set_joint(joint)?;
        self.rt.advance();
        Ok(FastState(self.rt.bits().into()))
    }

    fn has_sees(&self) -> bool {
        self.has_sees
    }

    fn percepts(
        &mut self,
        state: &FastState,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        self.role_check(role)?;
        self.load(state)?;
        self.set_joint(joint)?;
        self.rt.settle_sees();
        let mut seen: Vec<TermId> = self.sees[role]
            .iter()
            .filter(|&&(_, holds)| self.rt.value(holds))
            .map(|&(term, _)| term)
            .collect();
        if self.rt.clears_inputs() {
            // `legal`, `goal` or `terminal` depend on the moves: they are asked with none.
            self.rt.clear_moves();
        }
        seen.sort_unstable();
        seen.dedup();
        Ok(seen)
    }

    fn is_terminal(&mut self, state: &FastState) -> Result<bool> {
        self.load(state)?;
        Ok(self.rt.value(self.terminal))
    }

    fn goal_values(&mut self, state: &FastState, role: RoleIndex) -> Result<Vec<TermId>> {
        self.role_check(role)?;
        self.load(state)?;
        self.rt.settle_lazy();
        Ok(self.goals[role]
            .iter()
            .filter(|g| self.rt.value(g.holds))
            .map(|g| g.value)
            .collect())
    }

    fn goal(&mut self, state: &FastState, role: RoleIndex) -> Result<u8> {
        self.role_check(role)?;
        self.load(state)?;
        self.loaded_goal(role)
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        self.base.clone().map_err(ReasonError::Evaluation)
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        self.role_check(role)?;
        match &self.input {
            Ok(input) => Ok(input.as_ref().map(|i| i[role].clone())),
            Err(e) => Err(ReasonError::Evaluation(e.clone())),
        }
    }

    fn random_playout(
        &mut self,
        state: &FastState,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Playout> {
        self.start_playout(state)?;
        let roles = self.roles.len();
        let mut ids = std::mem::take(&mut self.joint);
        ids.resize(roles, 0);
        let mut steps = 0;
        let result = loop {
            if self.rt.value(self.terminal) {
                let mut goals = smallvec::SmallVec::new();
                for role in 0..roles {
                    match self.loaded_goal(role) {
                        Ok(g) => goals.push(g),
                        Err(e) => {
                            self.joint = ids;
                            return Err(e);
                        }
                    }
                }
                break Ok(Playout {
                    steps,
                    goals: Some(goals),
                });
            }
            if steps == max_steps {
                break Ok(Playout { steps, goals: None });
            }
            let mut stuck = None;
            for (role, id) in ids.iter_mut().enumerate() {
                let count = self.rt.legal_count(role);
                if count == 0 {
                    stuck = Some(role);
                    break;
                }
                // A role with one legal move (waiting for its turn, mostly) draws nothing.
                let pick = if count == 1 {
                    0
                } else {
                    rng.random_range(0..count)
                };
                *id = self.rt.legal_nth(role, pick);
            }
            if let Some(role) = stuck {
                break Err(
                    Fault::NoLegalMove.error(&self.store.spelled(&self.symbols, self.roles[role]))
                );
            }
            self.rt.set_moves(&ids);
            self.rt.advance();
            steps += 1;
        };
        self.joint = ids;
        result
    }

    /// [`LANES`] playouts at a time, bit-parallel, where the game allows (see
    /// [`FastMachine::lane_playouts`]).
    fn playouts(
        &mut self,
        state: &FastState,
        until: Until,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Batch> {
        self.check_state(state)?;
        if !self.lanes.as_mut().is_some_and(|l| l.allocate()) {
            return crate::machine::sequential_playouts(self, state, until, max_steps, rng);
        }
        let (limit, deadline) = match until {
            Until::Playouts(n) => (n, None),
            Until::Deadline(t) => (u64::MAX, Some(t)),
        };
        self.run_lanes(
            LaneJob {
                starts: |_| state,
                count: 1,
                limit,
                deadline,
                max_steps,
                record: None,
                failed: &mut None,
                per_start: None,
            },
            rng,
        )
    }

    /// [`LANES`] playouts at a time, bit-parallel, each lane from its own start, where the
    /// game allows; one at a time otherwise.
    fn playouts_from(
        &mut self,
        starts: &[FastState],
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
        self.playouts_from_fn(starts.len(), |i| &starts[i], rounds, rng, out)
    }

    fn parallel_playouts(&self) -> usize {
        if self.lanes.is_some() { LANES } else { 1 }
    }
}

/// A batch of bit-parallel playouts for [`FastMachine::run_lanes`]: a [`LaneRun`] over the
/// machine's states, its results start by start in a [`Rollouts`].
struct LaneJob<'a, S> {
    starts: S,
    count: usize,
    limit: u64,
    deadline: Option<Instant>,
    max_steps: usize,
    record: Option<&'a mut Vec<LanePlayout>>,
    failed: &'a mut Option<LanePlayout>,
    per_start: Option<&'a mut Rollouts>,
}

/// Recorded bit-parallel playouts ([`FastMachine::lane_playouts`]).
#[derive(Clone, Debug)]
pub struct LaneRecord {
    pub playouts: Vec<LanePlayout>,
    /// The batch's totals, as [`StateMachine::playouts`] gives them (`None` when it failed).
    pub batch: Option<Batch>,
    /// The playout that failed, up to the failure, and why.
    pub failed: Option<(LanePlayout, ReasonError)>,
}

impl FastMachine {
    /// Whether [`StateMachine::playouts`] runs [`LANES`] playouts side by side (it does unless
    /// `legal`, `goal` or `terminal` depend on the moves).
    pub fn has_lanes(&self) -> bool {
        self.lanes.is_some()
    }

    /// `count` bit-parallel playouts from `state`, each recorded (joint moves, legal move
    /// counts, goals): for tests that check them against one-at-a-time play. When a playout
    /// fails (no legal move, a bad goal), the batch stops there: the record has the playouts
    /// finished until then and the failed one, with the error. `None` when the game has no
    /// lanes ([`FastMachine::has_lanes`]) or there is not the memory for them.
    pub fn lane_playouts(
        &mut self,
        state: &FastState,
        count: u64,
        max_steps: usize,
        rng: &mut impl Rng,
    ) -> Result<Option<LaneRecord>> {
        if !self.lanes.as_mut().is_some_and(|l| l.allocate()) {
            return Ok(None);
        }
        self.check_state(state)?;
        let mut playouts = Vec::new();
        let mut failed = None;
        let result = self.run_lanes(
            LaneJob {
                starts: |_| state,
                count: 1,
                limit: count,
                deadline: None,
                max_steps,
                record: Some(&mut playouts),
                failed: &mut failed,
                per_start: None,
            },
            rng,
        );
        let (batch, failed) = match result {
            Ok(batch) => (Some(batch), None),
            Err(e) => (None, Some((failed.unwrap_or_default(), e))),
        };
        Ok(Some(LaneRecord {
            playouts,
            batch,
            failed,
        }))
    }

    /// [`StateMachine::playouts_from`] with the starts given by `start` (so that a caller
    /// holding the states in another form need not gather them).
    pub fn playouts_from_fn<'s>(
        &mut self,
        count: usize,
        start: impl Fn(usize) -> &'s FastState,
        rounds: Rounds,
        rng: &mut impl Rng,
        out: &mut Rollouts,
    ) -> Result<()> {
        for i in 0..count {
            self.check_state(start(i))?;
        }
        if !self.lanes.as_mut().is_some_and(|l| l.allocate()) {
            return crate::machine::sequential_playouts_from(self, count, start, rounds, rng, out);
        }
        out.reset(count, self.roles.len());
        let Rounds {
            per_start,
            max_steps,
            deadline,
        } = rounds;
        let limit = count as u64 * u64::from(per_start);
        self.run_lanes(
            LaneJob {
                starts: start,
                count,
                limit,
                deadline,
                max_steps,
                record: None,
                failed: &mut None,
                per_start: Some(out),
            },
            rng,
        )
        .map(drop)
    }

    /// `per_start` bit-parallel playouts from each of `starts`, each recorded (its start,
    /// joint moves, legal move counts, goals), and the results start by start, as
    /// [`StateMachine::playouts_from`] gives them (`None` when it failed): for tests that
    /// check them against one-at-a-time play. `None` when the game has no lanes.
    pub fn lane_playouts_from(
        &mut self,
        starts: &[FastState],
        per_start: u32,
        max_steps: usize,
        keep_best: bool,
        rng: &mut impl Rng,
    ) -> Result<Option<(LaneRecord, Option<Rollouts>)>> {
        for s in starts {
            self.check_state(s)?;
        }
        if !self.lanes.as_mut().is_some_and(|l| l.allocate()) {
            return Ok(None);
        }
        let mut out = Rollouts::default();
        out.keep_best = keep_best;
        out.reset(starts.len(), self.roles.len());
        let mut playouts = Vec::new();
        let mut failed = None;
        let result = self.run_lanes(
            LaneJob {
                starts: |i| &starts[i],
                count: starts.len(),
                limit: starts.len() as u64 * u64::from(per_start),
                deadline: None,
                max_steps,
                record: Some(&mut playouts),
                failed: &mut failed,
                per_start: Some(&mut out),
            },
            rng,
        );
        let (batch, failed, out) = match result {
            Ok(batch) => (Some(batch), None, Some(out)),
            Err(e) => (None, Some((failed.unwrap_or_default(), e)), None),
        };
        Ok(Some((
            LaneRecord {
                playouts,
                batch,
                failed,
            },
            out,
        )))
    }

    /// The move numbered `m` (as in [`LanePlayout::moves`]).
    pub fn move_term(&self, m: u32) -> TermId {
        self.move_term[m as usize]
    }

    /// Runs `job` on the lanes, their errors told in the game's words.
    fn run_lanes<'s>(
        &mut self,
        job: LaneJob<'_, impl Fn(usize) -> &'s FastState>,
        rng: &mut impl Rng,
    ) -> Result<Batch> {
        let LaneJob {
            starts,
            count,
            limit,
            deadline,
            max_steps,
            record,
            failed,
            per_start,
        } = job;
        let lanes = self.lanes.as_mut().expect("lanes");
        lanes
            .run(
                LaneRun {
                    starts: |i| &starts(i).0[..],
                    count,
                    limit,
                    deadline,
                    max_steps,
                    record,
                    failed,
                    per_start: per_start.map(|out| (out, &self.move_term[..])),
                },
                rng,
            )
            .map_err(|LaneError { role, kind, .. }| {
                let name = self.store.spelled(&self.symbols, self.roles[role]);
                let value;
                match kind {
                    LaneErrorKind::NoLegalMove => Fault::NoLegalMove,
                    LaneErrorKind::BadGoal { goal } => {
                        value = self
                            .store
                            .spelled(&self.symbols, self.goals[role][goal].value);
                        Fault::NotANumber(&value)
                    }
                    LaneErrorKind::NoGoal => Fault::NoGoal,
                    LaneErrorKind::ManyGoals { count } => Fault::ManyGoals(count),
                }
                .error(&name)
            })
    }

    /// The current state (after [`StateMachine::random_playout`], the state it ended in).
    pub fn current_state(&self) -> FastState {
        FastState(self.rt.bits().into())
    }

    /// The fluent number of a fluent term, if the game can ever make it true.
    pub fn fluent_number(&self, fluent: TermId) -> Option<u32> {
        self.fluent_index.get(&fluent).copied()
    }
}

#[cfg(test)]
mod tests;
