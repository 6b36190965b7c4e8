//! The registry of syntax diagnostic codes: one entry per code, documented in `docs/codes/`.

use crate::diagnostic::Severity;

#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: &'static str,
    /// A short kebab-case name.
    pub name: &'static str,
    pub severity: Severity,
    /// What it reports, in a few words.
    pub summary: &'static str,
}

const fn error(code: &'static str, name: &'static str, summary: &'static str) -> CodeInfo {
    CodeInfo {
        code,
        name,
        severity: Severity::Error,
        summary,
    }
}

/// Every code the parsers (prefix and infix) can report.
pub const SYNTAX_CODES: &[CodeInfo] = &[
    error("S001", "unclosed-paren", "a `(` that is never closed"),
    error("S002", "unmatched-close-paren", "a `)` that closes nothing"),
    error("S003", "empty-list", "`()`"),
    error("S004", "invalid-utf8", "bytes that are not UTF-8"),
    error(
        "S005",
        "list-as-name",
        "a list where a relation or function name belongs",
    ),
    error(
        "S006",
        "number-as-relation",
        "a number used as a relation name",
    ),
    error("S007", "rule-without-head", "`(<=)` with no head"),
    error(
        "S008",
        "misplaced-rule",
        "`<=` anywhere but at the start of a top-level rule",
    ),
    error(
        "S009",
        "literal-as-sentence",
        "a `not`/`or`/`and`/`distinct` literal where a fact or a rule head belongs",
    ),
    error(
        "S010",
        "keyword-arity",
        "`not` without exactly one argument, `distinct` without exactly two",
    ),
    error(
        "S011",
        "variable-as-sentence",
        "a variable where a sentence belongs",
    ),
    error("S012", "too-deep", "lists nested more than 256 levels deep"),
    error("S013", "empty-variable", "`?` with no name"),
    CodeInfo {
        code: "S014",
        name: "invalid-utf8-in-comment",
        severity: Severity::Warning,
        summary: "bytes that are not UTF-8 inside a comment",
    },
    error(
        "I001",
        "infix-unexpected-character",
        "a character infix GDL does not use",
    ),
    error(
        "I002",
        "infix-unexpected-token",
        "a token where the infix grammar expects another",
    ),
    error(
        "I003",
        "infix-unterminated-quote",
        "a quoted name without its closing quote",
    ),
    error(
        "I004",
        "infix-unclosed-paren",
        "a `(` that is never closed, in infix",
    ),
    error(
        "I005",
        "infix-bad-quoted-name",
        "a quoted name that prefix KIF cannot spell",
    ),
    error(
        "I006",
        "infix-not-writable",
        "a prefix variable name that infix cannot spell",
    ),
    error(
        "I007",
        "infix-too-deep",
        "infix expressions nested more than 256 levels deep",
    ),
];
