//! The registry of validation codes: one entry per code, documented in `docs/codes/<CODE>.md`.
//!
//! `V` codes are about the states a game can reach, found by `ggp validate`: errors are
//! violations of the well-formedness conditions of §6 of the specification (or of `base` and
//! `input`), or states the rules cannot be evaluated in; infos say what was found that is
//! allowed, or what was not checked.

use gdl_syntax::Severity;

#[derive(Clone, Copy, Debug)]
pub struct ValidateCode {
    pub code: &'static str,
    /// A short kebab-case name.
    pub name: &'static str,
    pub severity: Severity,
    /// What it reports, in a few words.
    pub summary: &'static str,
}

pub const CYCLE: &str = "V001";
pub const NO_LEGAL_MOVE: &str = "V002";
pub const NO_GOAL: &str = "V003";
pub const SEVERAL_GOALS: &str = "V004";
pub const GOAL_NOT_A_NUMBER: &str = "V005";
pub const NEVER_WINS: &str = "V006";
pub const NO_SOLUTION: &str = "V007";
pub const FLUENT_NOT_IN_BASE: &str = "V008";
pub const MOVE_NOT_IN_INPUT: &str = "V009";
pub const CANNOT_EVALUATE: &str = "V010";
pub const ENGINES_DISAGREE: &str = "V011";
pub const REASONER_BUDGET: &str = "V012";
pub const GOALS_BEFORE_THE_END: &str = "V013";
pub const WINNING_SEQUENCE: &str = "V014";
pub const PERCEPTS_NOT_CHECKED: &str = "V015";

const fn code(
    code: &'static str,
    name: &'static str,
    severity: Severity,
    summary: &'static str,
) -> ValidateCode {
    ValidateCode {
        code,
        name,
        severity,
        summary,
    }
}

/// Every code `ggp validate` can report.
pub const VALIDATE_CODES: &[ValidateCode] = &[
    code(
        CYCLE,
        "cycle",
        Severity::Error,
        "a reachable cycle of non-terminal states: the game need not end",
    ),
    code(
        NO_LEGAL_MOVE,
        "no-legal-move",
        Severity::Error,
        "a role with no legal move in a reachable non-terminal state",
    ),
    code(
        NO_GOAL,
        "no-goal",
        Severity::Error,
        "a role with no goal value in a reachable terminal state",
    ),
    code(
        SEVERAL_GOALS,
        "several-goals",
        Severity::Error,
        "a role with more than one goal value in a reachable terminal state",
    ),
    code(
        GOAL_NOT_A_NUMBER,
        "goal-not-a-number",
        Severity::Error,
        "a goal value that is not an integer from 0 to 100 in a reachable terminal state",
    ),
    code(
        NEVER_WINS,
        "never-wins",
        Severity::Error,
        "a role that no reachable terminal state gives 100 (not weakly winnable)",
    ),
    code(
        NO_SOLUTION,
        "no-solution",
        Severity::Error,
        "a one-player game that no sequence of moves wins (not strongly winnable)",
    ),
    code(
        FLUENT_NOT_IN_BASE,
        "fluent-not-in-base",
        Severity::Error,
        "a fluent true in a reachable state that `base` does not list",
    ),
    code(
        MOVE_NOT_IN_INPUT,
        "move-not-in-input",
        Severity::Error,
        "a move legal in a reachable state that `input` does not list",
    ),
    code(
        CANNOT_EVALUATE,
        "cannot-evaluate",
        Severity::Error,
        "a reachable state in which the rules cannot be evaluated",
    ),
    code(
        ENGINES_DISAGREE,
        "engines-disagree",
        Severity::Error,
        "the fast and the reference engines answer differently in a reachable state",
    ),
    code(
        REASONER_BUDGET,
        "reasoner-budget",
        Severity::Warning,
        "a reachable state the reasoner could not evaluate within its budget",
    ),
    code(
        GOALS_BEFORE_THE_END,
        "goals-before-the-end",
        Severity::Info,
        "goal values defined in reachable non-terminal states (allowed)",
    ),
    code(
        WINNING_SEQUENCE,
        "winning-sequence",
        Severity::Info,
        "the shortest winning sequence of a one-player game",
    ),
    code(
        PERCEPTS_NOT_CHECKED,
        "percepts-not-checked",
        Severity::Info,
        "a GDL-II game whose percepts (`sees`) are not checked",
    ),
];

/// The registry entry of a code.
pub fn info(code: &str) -> Option<&'static ValidateCode> {
    VALIDATE_CODES.iter().find(|c| c.code == code)
}
