//! The text layer of the GDL toolkit: the prefix KIF parser with precise diagnostics, the
//! GDL reading of its S-expressions, the canonical formatter, and the infix notation.
//!
//! Parsing never fails: [`parse`] returns the tree, the GDL items it could read and a list of
//! diagnostics. Bad input is data.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod ast;
pub mod codes;
pub mod cst;
pub mod diagnostic;
pub mod format;
pub mod gdl3;
pub mod infix;
pub mod layout;
pub mod span;

pub use ast::{Description, Item, Literal, Name, Rule, Sentence, Term};
pub use diagnostic::{Diagnostic, Severity, SourceFile};
pub use span::Span;

/// The result of parsing a prefix KIF text.
#[derive(Clone, Debug)]
pub struct Parse<'a> {
    /// The lossless S-expression tree (comments included).
    pub tree: cst::Tree,
    /// The GDL items read from it; forms with errors are left out.
    pub description: Description<'a>,
    /// Errors and warnings, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parse<'_> {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses a prefix KIF text.
pub fn parse(text: &str) -> Parse<'_> {
    let (tree, mut diagnostics) = cst::parse_tree(text);
    let description = ast::build(&tree, text, &mut diagnostics);
    diagnostics.sort_by_key(|d| d.span);
    Parse {
        tree,
        description,
        diagnostics,
    }
}

/// Largest source the parsers accept (offsets are 32-bit).
pub const MAX_SOURCE_LEN: usize = u32::MAX as usize;

/// Formats a prefix KIF text, or returns its errors (a text with errors is never reformatted).
pub fn format_text(text: &str) -> Result<String, Vec<Diagnostic>> {
    let parse = parse(text);
    if parse.has_errors() {
        return Err(parse
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect());
    }
    Ok(format::format(&parse.tree, text))
}

/// A prefix KIF text as clean S-expressions on one line (comments removed; see
/// [`format::compact`]), or its errors.
pub fn compact_text(text: &str) -> Result<String, Vec<Diagnostic>> {
    let parse = parse(text);
    if parse.has_errors() {
        return Err(parse
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect());
    }
    Ok(format::compact(&parse.tree, text))
}

/// Converts a prefix KIF text to infix, or returns its errors.
pub fn prefix_to_infix(text: &str) -> Result<String, Vec<Diagnostic>> {
    let parse = parse(text);
    if parse.has_errors() {
        return Err(parse
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect());
    }
    infix::to_infix(&parse.tree, text)
}
