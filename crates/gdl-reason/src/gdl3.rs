//! The refusal of GDL-III by the machines that do not reason about it: the fast engine's
//! network and its join tier, and the reference engine's machine over states
//! ([`crate::ReferenceMachine`]). A `knows` literal read as an ordinary relation would be always
//! false (nothing defines it): number guessing would score 0 for every guess, and a `legal`
//! rule with `knows` would leave a role without moves. They refuse rules that use the keyword,
//! with this error, before anything is built; the machine over histories
//! ([`crate::KnowledgeMachine`], over either engine) reasons them, and [`crate::Machine`] builds
//! it for them.

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
            .with_help("the knowledge machine reasons GDL-III over histories, over either engine (`KnowledgeMachine`); see docs/gdl3.md")
    }
}

impl fmt::Display for KnowsRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the rules use GDL-III's `knows`, which the fast engine's and the reference \
             engine's machines over states do not reason: the knowledge machine over \
             histories does",
        )
    }
}

impl std::error::Error for KnowsRefused {}
