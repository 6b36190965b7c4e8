//! The engines' refusal of GDL-III until they reason about it. A `knows` literal read as an
//! ordinary relation would be always false (nothing defines it): number guessing would score 0
//! for every guess, and a `legal` rule with `knows` would leave a role without moves. Every
//! engine (the reference engine, the fast engine's network and its join tier) therefore
//! refuses rules that use the keyword, with this error, before anything is built.
//! docs/gdl3.md describes the plan for reasoning about knowledge.

use std::fmt;

use gdl_check::Program;
use gdl_syntax::{Diagnostic, Span};

/// The code of the refusal, documented in `docs/codes/R002.md`.
pub const KNOWS_NOT_REASONED: &str = "R002";

/// Rules that use GDL-III's `knows`, refused: where the first `knows` literal is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnowsRefused {
    pub span: Span,
}

impl KnowsRefused {
    /// `Err` when the program uses `knows` in a rule body.
    pub fn check(program: &Program) -> Result<(), KnowsRefused> {
        match gdl_check::knows::first_use(program) {
            Some(span) => Err(KnowsRefused { span }),
            None => Ok(()),
        }
    }

    /// The refusal as a diagnostic at the first `knows` literal.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(KNOWS_NOT_REASONED, self.span, self.to_string())
            .with_label("GDL-III's `knows`")
            .with_help("`ggp check` reads and checks GDL-III; see docs/gdl3.md for what reasoning about knowledge will need")
    }
}

impl fmt::Display for KnowsRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the rules use GDL-III's `knows`: GDL-III knowledge is not reasoned yet, \
             so no engine can play, replay or explore this game",
        )
    }
}

impl std::error::Error for KnowsRefused {}
