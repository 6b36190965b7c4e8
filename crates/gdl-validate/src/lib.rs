//! Well-formedness of a game (§6 of the specification), decided on the states it can reach.
//!
//! [`validate`] explores the reachable state graph breadth first, every joint move of every
//! state, within a budget of time and states. When the whole graph fits, the properties are
//! proved or refuted exactly:
//!
//! - **terminates**: no cycle among the reachable non-terminal states (Definition 21); the
//!   longest game is measured;
//! - **playable**: every role has a legal move in every reachable non-terminal state
//!   (Definition 22);
//! - **goals**: every role has exactly one goal value, an integer from 0 to 100, in every
//!   reachable terminal state;
//! - **weakly-winnable**: every role gets 100 in some reachable terminal state (Definition 23);
//! - **strongly-winnable** (one-player games): a sequence of moves that wins, printed;
//! - **base-input**: `base` and `input`, when the game has them, list every reachable fluent
//!   and every legal move.
//!
//! When it does not fit, what was explored (every state within some number of moves of the
//! start) and random playouts with the rest of the budget look for violations; what they do
//! not find is *undecided*, never proved. A violation found is a fact whatever the budget, and
//! comes with the shortest sequence of joint moves found that reaches it (breadth first search
//! finds the shortest; a playout's is its own). A witness (a terminal state giving a role 100)
//! proves winnability whatever the budget, too.
//!
//! The explorer asks only the [`StateMachine`] interface; [`CrossCheck`] runs two engines side
//! by side and reports where they disagree.
//!
//! In a GDL-III game (with `knows`), the machine's states are histories, and the search's nodes
//! are classes of bisimilar histories ([`HistoryClasses`]): what is proved is proved of every
//! history.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod codes;
mod cross;
mod explore;
pub mod graph;
mod histories;
mod render;

use std::time::{Duration, Instant};

pub use cross::{CrossCheck, CrossError, PairState};
pub use explore::thousands;
pub use histories::{HistoryClass, HistoryClasses};
pub use render::Rendered;

use gdl_reason::{Machine, RoleIndex, StateMachine};

/// Validates the game `machine` plays within the budget of `options`: over its states, or, when
/// its states are histories (GDL-III, [`Subject::knowers`]), over classes of them.
pub fn validate<M: Subject>(machine: &mut M, options: &Options) -> Report {
    let started = Instant::now();
    match machine.knowers() {
        Some(knowers) => {
            let mut classes =
                HistoryClasses::new(machine, knowers, options.max_states, started + options.time);
            let mut report = explore::validate(&mut classes, options);
            report.histories = Some(classes.histories());
            report
        }
        None => explore::validate(machine, options),
    }
}

/// A machine the validator can run: any state machine; a pair of engines side by side also
/// says where they disagreed.
pub trait Subject: StateMachine {
    /// The first disagreement between engines since the last call, if any.
    fn take_disagreement(&mut self) -> Option<String> {
        None
    }

    /// When the machine's states are histories (GDL-III's knowledge machine): the roles whose
    /// knowledge the rules ask, so that the validator searches classes of histories that these
    /// roles' observations make alike ([`HistoryClasses`]); `None` for a machine over states.
    fn knowers(&mut self) -> Option<Vec<RoleIndex>> {
        None
    }
}

impl Subject for gdl_reason::Machine {
    fn knowers(&mut self) -> Option<Vec<RoleIndex>> {
        match self {
            Machine::Knowledge(m, _) => Some(m.knowers().to_vec()),
            _ => None,
        }
    }
}
impl Subject for gdl_reason::FastMachine {}
/// The knowledge machine as it is: every history a node of the search (`Machine` searches
/// classes of them).
impl Subject for gdl_reason::KnowledgeMachine {}
impl Subject for gdl_reason::ReferenceMachine {}

/// The budget of a validation.
#[derive(Clone, Debug)]
pub struct Options {
    /// Time for the exploration and the playouts (building the machine is not counted).
    /// Exploration may use half of it when the graph does not fit, the playouts the rest.
    pub time: Duration,
    /// States kept in the explored graph (about 130 bytes each for connect four or breakthrough:
    /// the state, its hash, its place in the table, the way to it, its successors).
    pub max_states: usize,
    /// Random playouts when the exploration does not finish: at most this many (`None`: until
    /// the time is up).
    pub playouts: Option<u64>,
    /// Seed of the random playouts: the same seed and budget give the same report.
    pub seed: u64,
    /// Joint moves a playout may make before it is cut (a cut playout decides nothing).
    pub max_playout_steps: usize,
    /// Next states computed, by the exploration (half of them at most) and the playouts
    /// together (`None`: no limit). A budget of work that, unlike time, does not depend on the
    /// machine.
    pub max_transitions: Option<u64>,
}

/// The default of [`Options::max_states`].
pub const DEFAULT_MAX_STATES: usize = 2_000_000;

/// The most states a graph can keep (states are numbered with 32 bits); a larger
/// [`Options::max_states`] counts as this.
pub const MAX_STATES: usize = u32::MAX as usize - 1;

impl Default for Options {
    fn default() -> Options {
        Options {
            time: Duration::from_secs(10),
            max_states: DEFAULT_MAX_STATES,
            playouts: None,
            seed: 1,
            max_playout_steps: 10_000,
            max_transitions: None,
        }
    }
}

/// A property of well-formed games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    Terminates,
    Playable,
    Goals,
    WeaklyWinnable,
    StronglyWinnable,
    BaseInput,
}

impl Property {
    pub const ALL: [Property; 6] = [
        Property::Terminates,
        Property::Playable,
        Property::Goals,
        Property::WeaklyWinnable,
        Property::StronglyWinnable,
        Property::BaseInput,
    ];

    /// The name used in reports: `terminates`, `playable`, `goals`, `weakly-winnable`,
    /// `strongly-winnable`, `base-input`.
    pub fn name(self) -> &'static str {
        match self {
            Property::Terminates => "terminates",
            Property::Playable => "playable",
            Property::Goals => "goals",
            Property::WeaklyWinnable => "weakly-winnable",
            Property::StronglyWinnable => "strongly-winnable",
            Property::BaseInput => "base-input",
        }
    }
}

/// What became of a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Proved,
    /// A finding of the report is a violation.
    Refuted,
    /// Neither: why (what was searched without finding a violation).
    Undecided(String),
    /// The property does not apply (strong winnability of a game with several roles, `base`
    /// and `input` in a game without them).
    NotApplicable,
}

/// One thing found: a violation (with the moves that reach it), a witness, or a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Its code (`codes::VALIDATE_CODES`).
    pub code: &'static str,
    /// The property it refutes (or, for a winning sequence, proves).
    pub property: Option<Property>,
    /// The role it concerns, by number and name.
    pub role: Option<(usize, String)>,
    /// One sentence.
    pub message: String,
    /// What it is about, in canonical text: goal values, fluents, moves (`role move`).
    pub items: Vec<String>,
    /// In how many explored states it was seen (0 when not counted).
    pub states: u64,
    /// The joint moves, in role order and canonical text, that lead from the initial state to
    /// the state it is about.
    pub moves: Option<Vec<Vec<String>>>,
    /// For a cycle: the number of moves after which the state that the last move returns to
    /// was first reached.
    pub cycle_from: Option<usize>,
}

/// What a validation found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The roles' names, in order.
    pub roles: Vec<String>,
    /// Distinct states found (by exploration).
    pub states: u64,
    /// States explored: looked at (terminal, legal moves, goals) and, unless terminal, every
    /// joint move tried.
    pub explored: u64,
    /// Terminal states among them.
    pub terminal_states: u64,
    /// The longest game when termination is proved, otherwise the deepest state reached (by
    /// the exploration or a playout).
    pub depth: u64,
    /// Every reachable state was explored: what is not refuted is proved.
    pub exhaustive: bool,
    /// Every state within this many moves of the start was explored (`None`: not even the
    /// initial state could be).
    pub complete_depth: Option<u64>,
    /// Random playouts run after the exploration, the longest one's moves, and how many were
    /// cut at the step limit.
    pub playouts: u64,
    pub longest_playout: u64,
    pub cut_playouts: u64,
    /// In a GDL-III game, where the nodes are classes of bisimilar histories: how many
    /// histories the classes computed stand for (`None` in other games).
    pub histories: Option<u64>,
    /// Time spent exploring and playing.
    pub elapsed: Duration,
    /// Every property's verdict, in [`Property::ALL`] order.
    pub verdicts: Vec<(Property, Verdict)>,
    pub findings: Vec<Finding>,
}

impl Report {
    /// The verdict on a property.
    pub fn verdict(&self, property: Property) -> &Verdict {
        &self
            .verdicts
            .iter()
            .find(|(p, _)| *p == property)
            .expect("every property has a verdict")
            .1
    }

    /// The names of the properties with a verdict like `which`.
    pub fn named(&self, which: fn(&Verdict) -> bool) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|(_, v)| which(v))
            .map(|(p, _)| p.name())
            .collect()
    }

    /// Whether a property is refuted (or a state cannot be evaluated): an error.
    pub fn has_errors(&self) -> bool {
        self.findings
            .iter()
            .any(|f| codes::info(f.code).is_some_and(|c| c.severity == gdl_syntax::Severity::Error))
    }

    /// Whether the game was proved well-formed: terminates, playable, goals defined and weakly
    /// winnable (with `base` and `input` and strong winnability when they apply).
    pub fn well_formed(&self) -> bool {
        self.verdicts
            .iter()
            .all(|(_, v)| matches!(v, Verdict::Proved | Verdict::NotApplicable))
    }
}

impl Finding {
    /// The moves file that `ggp replay GAME --moves FILE` plays to the state this finding is
    /// about: comments saying what it shows, then one joint move per line in role order.
    pub fn moves_file(&self, roles: &[String]) -> Option<String> {
        let moves = self.moves.as_ref()?;
        let mut out = format!("; {} {}\n", self.code, self.message);
        out.push_str(&format!("; roles: {}\n", roles.join(" ")));
        let n = moves.len();
        match self.cycle_from {
            Some(k) => out.push_str(&format!(
                "; the last move returns to the state reached after {}, a cycle of {} move{}\n",
                if k == 0 {
                    "no move (the initial state)".to_string()
                } else {
                    format!("move {k}")
                },
                n - k,
                if n - k == 1 { "" } else { "s" }
            )),
            None if n == 0 => out.push_str("; the initial state itself\n"),
            None => out.push_str(&format!(
                "; {n} joint move{} to the state\n",
                if n == 1 { "" } else { "s" }
            )),
        }
        for joint in moves {
            out.push('(');
            out.push_str(&joint.join(" "));
            out.push_str(")\n");
        }
        Some(out)
    }
}
