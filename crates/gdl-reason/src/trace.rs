//! Replaying a game: the JSON lines of `ggp replay` (the format of
//! `../shared/conformance/README.md`), reading joint moves, and random play.

use std::fmt;

use rand::Rng;
use serde_json::{Map, Value, json};

use crate::machine::{ReasonError, StateMachine};
use crate::terms::{TermError, TermId};

/// Why a replay stopped before the end of its moves.
#[derive(Debug)]
pub enum ReplayError {
    Reason {
        step: usize,
        error: ReasonError,
    },
    /// A move that is not legal for its role in the state it is made from.
    Illegal {
        step: usize,
        role: String,
        played: String,
        legal: Vec<String>,
    },
    /// A joint move for a terminal state.
    GameOver {
        step: usize,
    },
    /// A role has no legal move in a non-terminal state, so no joint move can be made.
    NoLegalMove {
        step: usize,
        role: String,
    },
    Output(std::io::Error),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Reason { step, error } => write!(f, "step {step}: {error}"),
            ReplayError::Illegal {
                step,
                role,
                played,
                legal,
            } => {
                write!(
                    f,
                    "step {step}: `{played}` is not a legal move for `{role}`; "
                )?;
                if legal.is_empty() {
                    write!(f, "it has no legal move")
                } else {
                    write!(f, "its legal moves are {}", legal.join(" "))
                }
            }
            ReplayError::GameOver { step } => {
                write!(
                    f,
                    "step {step}: the game is over (the state is terminal), but more moves follow"
                )
            }
            ReplayError::NoLegalMove { step, role } => {
                write!(
                    f,
                    "step {step}: `{role}` has no legal move in a non-terminal state"
                )
            }
            ReplayError::Output(e) => write!(f, "cannot write the trace: {e}"),
        }
    }
}

impl std::error::Error for ReplayError {}

fn texts<M: StateMachine>(machine: &M, terms: &[TermId]) -> Vec<String> {
    let mut out: Vec<String> = terms
        .iter()
        .map(|&t| machine.terms().text(machine.symbols(), t))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What is known about one state, in canonical text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateInfo {
    pub state: Vec<String>,
    pub terminal: bool,
    pub legal: Vec<Vec<String>>,
    pub goals: Vec<Vec<String>>,
}

pub fn describe<M: StateMachine>(
    machine: &mut M,
    state: &M::State,
) -> Result<StateInfo, ReasonError> {
    let fluents = machine.fluents(state);
    let terminal = machine.is_terminal(state)?;
    let mut legal = Vec::new();
    let mut goals = Vec::new();
    for role in 0..machine.roles().len() {
        let moves = machine.legal_moves(state, role)?;
        legal.push(texts(machine, &moves));
        let values = machine.goal_values(state, role)?;
        goals.push(texts(machine, &values));
    }
    Ok(StateInfo {
        state: texts(machine, &fluents),
        terminal,
        legal,
        goals,
    })
}

/// One visited state of a replay: what holds in it and the joint move taken from it (`None`
/// on the last line), in canonical text; in a GDL-II game, what each role sees when that
/// joint move is made (each role's percepts sorted, in role order; `None` on the last line and
/// in GDL games).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub info: StateInfo,
    pub moves: Option<Vec<String>>,
    pub sees: Option<Vec<Vec<String>>>,
}

/// The roles' names in canonical text, in role order.
pub fn role_names<M: StateMachine>(machine: &M) -> Vec<String> {
    machine
        .roles()
        .iter()
        .map(|&r| machine.terms().text(machine.symbols(), r))
        .collect()
}

/// One JSON line: `{"state":[…],"terminal":…,"legal":{…},"goals":{…},"moves":[…]|null}`,
/// and in a GDL-II game, on each line with moves, `"sees":{role:[percept…],…}`.
pub fn json_line(roles: &[String], step: &Step) -> String {
    let per_role = |lists: &[Vec<String>]| {
        let mut map = Map::new();
        for (name, list) in roles.iter().zip(lists) {
            map.insert(name.clone(), json!(list));
        }
        Value::Object(map)
    };
    let info = &step.info;
    let mut line = Map::new();
    line.insert("state".into(), json!(info.state));
    line.insert("terminal".into(), json!(info.terminal));
    line.insert("legal".into(), per_role(&info.legal));
    line.insert("goals".into(), per_role(&info.goals));
    line.insert(
        "moves".into(),
        step.moves.as_ref().map_or(Value::Null, |m| json!(m)),
    );
    if let Some(sees) = &step.sees {
        line.insert("sees".into(), per_role(sees));
    }
    Value::Object(line).to_string()
}

/// The same as [`json_line`] for people: numbered, one fluent per line.
pub fn pretty(roles: &[String], number: usize, step: &Step) -> String {
    let info = &step.info;
    let mut out = format!(
        "state {number}{}\n",
        if info.terminal { " (terminal)" } else { "" }
    );
    for fluent in &info.state {
        out.push_str(&format!("  {fluent}\n"));
    }
    let list = |items: &[String]| {
        if items.is_empty() {
            "-".to_string()
        } else {
            items.join(" ")
        }
    };
    for (k, role) in roles.iter().enumerate() {
        out.push_str(&format!("  legal {role}: {}\n", list(&info.legal[k])));
    }
    for (k, role) in roles.iter().enumerate() {
        if !info.goals[k].is_empty() || info.terminal {
            out.push_str(&format!("  goal {role}: {}\n", list(&info.goals[k])));
        }
    }
    if let Some(moves) = &step.moves {
        let joint: Vec<String> = roles
            .iter()
            .zip(moves)
            .map(|(r, m)| format!("{r} {m}"))
            .collect();
        out.push_str(&format!("  moves: {}\n", joint.join(", ")));
    }
    if let Some(sees) = &step.sees {
        for (k, role) in roles.iter().enumerate() {
            out.push_str(&format!("  sees {role}: {}\n", list(&sees[k])));
        }
    }
    out
}

/// Why a moves file could not be read ([`parse_moves`]): the line (from 1) and what is wrong
/// with it.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct MovesError {
    pub line: usize,
    #[source]
    pub problem: MovesProblem,
}

/// What is wrong with a line of a moves file.
#[derive(Debug, thiserror::Error)]
pub enum MovesProblem {
    /// The line does not read as S-expressions (the syntax diagnostic's message).
    #[error("{0}")]
    Syntax(String),
    #[error("expected one list of moves, like `((mark 1 2) noop)`")]
    NotOneList,
    #[error("expected a list of moves, like `((mark 1 2) noop)`")]
    NotAList,
    /// As many moves as `moves`, for a game of `roles` roles.
    #[error(
        "{moves} move{} for {roles} role{}",
        if *moves == 1 { "" } else { "s" },
        if *roles == 1 { "" } else { "s" }
    )]
    Count { moves: usize, roles: usize },
    /// A move (its text) that is not a ground term.
    #[error("`{text}`: {error}")]
    Term {
        text: String,
        #[source]
        error: TermError,
    },
}

/// Reads a moves file: one joint move per line, a KIF list in role order (`((mark 1 2) noop)`);
/// blank lines and `;` comments are skipped. Errors name the line.
pub fn parse_moves<M: StateMachine>(
    machine: &mut M,
    text: &str,
) -> Result<Vec<Vec<TermId>>, MovesError> {
    let roles = machine.roles().len();
    let mut joints = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split(';').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let fail = |problem| MovesError {
            line: number + 1,
            problem,
        };
        let (tree, diagnostics) = gdl_syntax::cst::parse_tree(line);
        if let Some(d) = diagnostics.first() {
            return Err(fail(MovesProblem::Syntax(d.message.clone())));
        }
        let items: Vec<_> = tree.top_items().collect();
        let [list] = items.as_slice() else {
            return Err(fail(MovesProblem::NotOneList));
        };
        if tree.kind(*list) != gdl_syntax::cst::NodeKind::List {
            return Err(fail(MovesProblem::NotAList));
        }
        let moves: Vec<_> = tree.items(*list).collect();
        if moves.len() != roles {
            return Err(fail(MovesProblem::Count {
                moves: moves.len(),
                roles,
            }));
        }
        let mut joint = Vec::with_capacity(roles);
        for node in moves {
            let text = tree.span(node).text(line);
            joint.push(machine.intern(text).map_err(|error| {
                fail(MovesProblem::Term {
                    text: text.to_string(),
                    error,
                })
            })?);
        }
        joints.push(joint);
    }
    Ok(joints)
}

/// Where the joint moves of a replay come from.
pub enum Moves<'a, R: Rng> {
    /// These joint moves, in order.
    Given(&'a [Vec<TermId>]),
    /// Up to this many uniformly random legal joint moves.
    Random(usize, &'a mut R),
}

/// Replays a game from its initial state, writing one JSON line per visited state. With
/// random moves, it stops at a terminal state or where a role has no legal move (returned as
/// `Ok(Some(…))` so the caller can say so).
pub fn replay<M: StateMachine, R: Rng>(
    machine: &mut M,
    moves: Moves<'_, R>,
    mut line: impl FnMut(Step) -> std::io::Result<()>,
) -> Result<Option<ReplayError>, ReplayError> {
    let mut state = machine
        .initial_state()
        .map_err(|error| ReplayError::Reason { step: 0, error })?;
    let (given, mut random) = match moves {
        Moves::Given(list) => (Some(list), None),
        Moves::Random(n, rng) => (None, Some((n, rng))),
    };
    let gdl2 = machine.is_gdl2();
    let mut step = 0;
    loop {
        let reason = |error| ReplayError::Reason { step, error };
        let info = describe(machine, &state).map_err(reason)?;
        let joint: Option<Vec<TermId>> = match (&given, &mut random) {
            (Some(list), _) => match list.get(step) {
                None => None,
                Some(_) if info.terminal => return Err(ReplayError::GameOver { step }),
                Some(joint) => {
                    // The legal moves were just described, in sorted canonical text.
                    for (role, &played) in joint.iter().enumerate() {
                        let played = machine.terms().text(machine.symbols(), played);
                        if info.legal[role].binary_search(&played).is_err() {
                            let role_term = machine.roles()[role];
                            return Err(ReplayError::Illegal {
                                step,
                                role: machine.terms().text(machine.symbols(), role_term),
                                played,
                                legal: info.legal[role].clone(),
                            });
                        }
                    }
                    Some(joint.clone())
                }
            },
            (None, Some((limit, rng))) => {
                let stuck = info.legal.iter().any(Vec::is_empty);
                if step >= *limit || info.terminal || stuck {
                    None
                } else {
                    Some(machine.random_joint_move(&state, *rng).map_err(reason)?)
                }
            }
            (None, None) => unreachable!("one source of moves"),
        };
        let moves = joint.as_ref().map(|j| {
            j.iter()
                .map(|&t| machine.terms().text(machine.symbols(), t))
                .collect()
        });
        let sees = match &joint {
            Some(joint) if gdl2 => Some(
                machine
                    .all_percepts(&state, joint)
                    .map_err(reason)?
                    .iter()
                    .map(|seen| texts(machine, seen))
                    .collect(),
            ),
            _ => None,
        };
        let stuck_role = info
            .legal
            .iter()
            .position(Vec::is_empty)
            .filter(|_| !info.terminal);
        line(Step { info, moves, sees }).map_err(ReplayError::Output)?;
        let Some(joint) = joint else {
            let stuck = stuck_role.map(|role| {
                let role_term = machine.roles()[role];
                ReplayError::NoLegalMove {
                    step,
                    role: machine.terms().text(machine.symbols(), role_term),
                }
            });
            return Ok(stuck);
        };
        state = machine.next_state(&state, &joint).map_err(reason)?;
        step += 1;
    }
}
