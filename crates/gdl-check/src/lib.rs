//! Static analysis of GDL: lowering to an interned [`Program`], its dependency [`Graph`] and
//! strata, and every check of the specification plus the warnings authors need.
//!
//! ```
//! let checked = gdl_check::check("(role robot) (<= (legal robot ?m) (true (p ?x)))");
//! assert!(checked.diagnostics.iter().any(|d| d.code == "E001"));
//! ```

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod checks;
pub mod codes;
pub mod graph;
pub mod knows;
pub mod program;
pub mod scc;
pub mod symbols;

pub use graph::Graph;
pub use program::{Program, RelId, Reserved};
pub use symbols::{Symbol, Symbols};

use gdl_syntax::{Diagnostic, Severity};

/// A description, lowered and checked. Neither the S-expression tree nor the GDL items are
/// kept: each is several times the size of the text for a large description, and they are
/// dropped as soon as the next stage is built (`gdl_syntax::parse` gives them to whoever
/// wants them).
pub struct Checked<'a> {
    pub text: &'a str,
    pub program: Program,
    pub graph: Graph,
    /// Syntax diagnostics, then (when there are no syntax errors) the checks', sorted by place.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked<'_> {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors that leave the description without an agreed meaning (syntax errors, unsafe
    /// rules, unstratified negation, …): reasoning about it is refused while there are any.
    pub fn blocking_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error && blocks_reasoning(d.code))
    }
}

/// Whether an error with this code leaves a description without an agreed meaning.
pub fn blocks_reasoning(code: &str) -> bool {
    codes::info(code).is_none_or(|c| c.blocks_reasoning)
}

/// Parses, lowers and checks a description. When the text has syntax errors only those are
/// reported: the checks would see an incomplete game and report consequences, not causes.
pub fn check(text: &str) -> Checked<'_> {
    let gdl_syntax::Parse {
        tree,
        description,
        mut diagnostics,
    } = gdl_syntax::parse(text);
    drop(tree);
    let syntax_errors = diagnostics.iter().any(Diagnostic::is_error);
    if !syntax_errors {
        let cx = checks::ItemsContext {
            text,
            description: &description,
        };
        checks::run_on_items(&cx, &mut diagnostics);
    }
    let program = program::lower_owned(description);
    let graph = Graph::build(&program);
    if !syntax_errors {
        let cx = checks::Context {
            text,
            program: &program,
            graph: &graph,
        };
        checks::run(&cx, &mut diagnostics);
    }
    diagnostics.sort_by(|a, b| a.span.cmp(&b.span).then_with(|| a.code.cmp(b.code)));
    Checked {
        text,
        program,
        graph,
        diagnostics,
    }
}
