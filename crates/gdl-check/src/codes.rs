//! The registry of check codes: one entry per code, documented in `docs/codes/<CODE>.md`.
//!
//! `E` codes are violations of the GDL specification (and of GDL-III's restrictions on
//! `knows`, `E017`–`E020`); `W` codes are warnings about things the
//! specification allows but that are usually mistakes or that some players reject.

use gdl_syntax::Severity;

#[derive(Clone, Copy, Debug)]
pub struct CheckCode {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    /// Whether a description with this error has no agreed meaning, so that reasoning about it
    /// is refused. Errors that leave the meaning defined (a `next` with two arguments is an
    /// ordinary relation) do not block reasoning.
    pub blocks_reasoning: bool,
}

const fn error(
    code: &'static str,
    name: &'static str,
    blocks: bool,
    summary: &'static str,
) -> CheckCode {
    CheckCode {
        code,
        name,
        severity: Severity::Error,
        summary,
        blocks_reasoning: blocks,
    }
}

const fn warning(code: &'static str, name: &'static str, summary: &'static str) -> CheckCode {
    CheckCode {
        code,
        name,
        severity: Severity::Warning,
        summary,
        blocks_reasoning: false,
    }
}

pub const UNSAFE_VARIABLE: &str = "E001";
pub const UNSTRATIFIED: &str = "E002";
pub const RECURSION_RESTRICTION: &str = "E003";
pub const ROLE_NOT_GROUND_FACT: &str = "E004";
pub const INIT_DEPENDS_ON_GAME: &str = "E005";
pub const TRUE_DOES_DEFINED: &str = "E006";
pub const INIT_NEXT_IN_BODY: &str = "E007";
pub const DEPENDS_ON_DOES: &str = "E008";
pub const BASE_INPUT_DEPEND_ON_STATE: &str = "E009";
pub const RESERVED_ARITY: &str = "E010";
pub const GOAL_VALUE: &str = "E011";
pub const MISSING_DEFINITION: &str = "E012";
pub const VARIABLE_IN_FACT: &str = "E013";
pub const VARIABLE_AS_NAME: &str = "E014";
pub const KEYWORD_AS_TERM: &str = "E015";
pub const SEES_IN_BODY: &str = "E016";
pub const KNOWS_FORM: &str = "E017";
pub const KNOWS_DEFINED: &str = "E018";
pub const KNOWS_RECURSION: &str = "E019";
pub const KNOWS_OF_MOVES: &str = "E020";

pub const ARITY_CLASH: &str = "W001";
pub const RELATION_AND_FUNCTION: &str = "W002";
pub const EMPTY_BODY: &str = "W003";
pub const EMPTY_PARENTHESES: &str = "W004";
pub const EMPTY_CONNECTIVE: &str = "W005";
pub const NOT_DISTINCT: &str = "W006";
pub const NESTED_NEGATION: &str = "W007";
pub const UNDEFINED_RELATION: &str = "W008";
pub const UNUSED_RELATION: &str = "W009";
pub const SINGLETON_VARIABLE: &str = "W010";
pub const INCONSISTENT_CASE: &str = "W011";
pub const TRIVIAL_DISTINCT: &str = "W012";
pub const ROLE_WITHOUT_RULES: &str = "W013";
pub const INCOMPLETE_BASE_INPUT: &str = "W014";
pub const RESERVED_AS_FUNCTION: &str = "W015";
pub const NOT_A_ROLE: &str = "W016";

/// Every code the checks can report.
pub const CHECK_CODES: &[CheckCode] = &[
    error(
        UNSAFE_VARIABLE,
        "unsafe-variable",
        true,
        "a variable of the head, of a negation or of a `distinct` that no positive literal binds",
    ),
    error(
        UNSTRATIFIED,
        "unstratified-negation",
        false,
        "a relation that depends on its own negation",
    ),
    error(
        RECURSION_RESTRICTION,
        "recursion-restriction",
        true,
        "a recursive rule that could build ever larger terms (Definition 15)",
    ),
    error(
        ROLE_NOT_GROUND_FACT,
        "role-not-ground-fact",
        true,
        "`role` defined by a rule or with variables",
    ),
    error(
        INIT_DEPENDS_ON_GAME,
        "init-depends-on-game",
        true,
        "`init` depending on `true`, `does`, `next`, `legal`, `goal`, `terminal` or `sees`",
    ),
    error(
        TRUE_DOES_DEFINED,
        "true-does-defined",
        true,
        "`true` or `does` in a rule head or as a fact",
    ),
    error(
        INIT_NEXT_IN_BODY,
        "init-next-in-body",
        true,
        "`init` or `next` in a rule body",
    ),
    error(
        DEPENDS_ON_DOES,
        "depends-on-does",
        false,
        "`legal`, `goal` or `terminal` depending on `does`",
    ),
    error(
        BASE_INPUT_DEPEND_ON_STATE,
        "base-input-depend-on-state",
        false,
        "`base` or `input` depending on `true` or `does`",
    ),
    error(
        RESERVED_ARITY,
        "reserved-arity",
        false,
        "a GDL relation used with the wrong number of arguments",
    ),
    error(
        GOAL_VALUE,
        "goal-value",
        false,
        "a goal value that is not an integer from 0 to 100",
    ),
    error(
        MISSING_DEFINITION,
        "missing-definition",
        true,
        "no `role`, or no `legal`, `goal` or `terminal` rule",
    ),
    error(
        VARIABLE_IN_FACT,
        "variable-in-fact",
        false,
        "a variable in a top-level fact",
    ),
    error(
        VARIABLE_AS_NAME,
        "variable-as-name",
        true,
        "a variable in the place of a relation or function name",
    ),
    error(
        KEYWORD_AS_TERM,
        "keyword-as-term",
        false,
        "`not`, `or`, `and` or `distinct` used as a constant or function inside a term",
    ),
    error(
        SEES_IN_BODY,
        "sees-in-body",
        false,
        "the GDL-II `sees` in a rule body",
    ),
    error(
        KNOWS_FORM,
        "knows-form",
        true,
        "GDL-III's `knows` not applied to a role and an atom, or to an atom alone",
    ),
    error(
        KNOWS_DEFINED,
        "knows-defined",
        true,
        "GDL-III's `knows` in a rule head or as a fact",
    ),
    error(
        KNOWS_RECURSION,
        "knows-recursion",
        true,
        "a relation that depends on itself through `knows`",
    ),
    error(
        KNOWS_OF_MOVES,
        "knows-of-moves",
        true,
        "`knows` applied to `does`, `next`, `sees`, `init` or a relation that depends on `does`",
    ),
    warning(
        ARITY_CLASH,
        "arity-clash",
        "the same relation or function name used with different numbers of arguments",
    ),
    warning(
        RELATION_AND_FUNCTION,
        "relation-and-function",
        "a name used both as a relation and as a function",
    ),
    warning(EMPTY_BODY, "empty-body", "a rule `(<= head)` with no body"),
    warning(
        EMPTY_PARENTHESES,
        "empty-parentheses",
        "a sentence `(p)` or a term `(f)` with no arguments",
    ),
    warning(
        EMPTY_CONNECTIVE,
        "empty-connective",
        "`(or)` or `(and)` with nothing inside",
    ),
    warning(NOT_DISTINCT, "not-distinct", "`(not (distinct …))`"),
    warning(
        NESTED_NEGATION,
        "nested-negation",
        "`not` around `or`, `and` or another `not`",
    ),
    warning(
        UNDEFINED_RELATION,
        "undefined-relation",
        "a relation used in a body but defined nowhere",
    ),
    warning(
        UNUSED_RELATION,
        "unused-relation",
        "a relation defined but used nowhere",
    ),
    warning(
        SINGLETON_VARIABLE,
        "singleton-variable",
        "a variable that occurs only once in its rule",
    ),
    warning(
        INCONSISTENT_CASE,
        "inconsistent-case",
        "the same name written with different capitalisation",
    ),
    warning(
        TRIVIAL_DISTINCT,
        "trivial-distinct",
        "a `distinct` that is always true or always false",
    ),
    warning(
        ROLE_WITHOUT_RULES,
        "role-without-rules",
        "a role that no `legal` or no `goal` rule can apply to",
    ),
    warning(
        INCOMPLETE_BASE_INPUT,
        "incomplete-base-input",
        "`base` or `input` that misses a fluent or a move the game can produce",
    ),
    warning(
        RESERVED_AS_FUNCTION,
        "reserved-as-function",
        "a GDL relation name used as a function inside a term",
    ),
    warning(
        NOT_A_ROLE,
        "not-a-role",
        "a constant that is not a role where `legal`, `goal`, `sees`, `does` or `input` names a role",
    ),
];

/// The registry entry of a code.
pub fn info(code: &str) -> Option<&'static CheckCode> {
    CHECK_CODES.iter().find(|c| c.code == code)
}
