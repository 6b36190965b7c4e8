//! One version of a document, checked: its diagnostics (exactly those of `ggp check`, in
//! document byte offsets) and, built on first use, its [`Index`].
//!
//! A prefix document is checked as it is. An infix document is converted to prefix text; its
//! syntax errors are the converter's, and the checks run on the prefix text, every place
//! mapped back to the infix token it came from.

use std::sync::{Arc, OnceLock};

use gdl_syntax::infix::{self, Converted};
use gdl_syntax::{Diagnostic, Span};

use crate::document::{Document, Notation};
use crate::index::{Identity, Index, Places};
use crate::position::LineIndex;

pub struct Analysis {
    pub version: i32,
    pub notation: Notation,
    pub text: Arc<str>,
    pub lines: Arc<LineIndex>,
    /// Sorted by place; spans are byte offsets into `text`.
    pub diagnostics: Vec<Diagnostic>,
    /// For an infix document that converts: the prefix text and where its pieces came from.
    converted: Option<Converted>,
    index: OnceLock<Index>,
}

impl Analysis {
    pub fn new(document: &Document) -> Analysis {
        let text = document.text.clone();
        let (diagnostics, converted) = match document.notation {
            Notation::Prefix => (gdl_check::check(&text).diagnostics, None),
            Notation::Infix => match infix::infix_to_prefix_text(&text) {
                Err(errors) => (errors, None),
                Ok(converted) => {
                    let map = Origins(&converted);
                    let diagnostics = gdl_check::check(&converted.prefix)
                        .diagnostics
                        .into_iter()
                        .map(|mut d| {
                            d.span = map.cover(d.span);
                            d.message = infix_names(&d.message);
                            d.help = d.help.as_deref().map(infix_names);
                            for related in &mut d.related {
                                related.span = map.cover(related.span);
                                related.message = infix_names(&related.message);
                            }
                            // The fix's edits are prefix text.
                            d.fix = None;
                            d
                        })
                        .collect();
                    (diagnostics, Some(converted))
                }
            },
        };
        Analysis {
            version: document.version,
            notation: document.notation,
            text,
            lines: document.lines.clone(),
            diagnostics,
            converted,
            index: OnceLock::new(),
        }
    }

    /// Whether the text has syntax errors (then it is neither formatted nor converted).
    pub fn has_syntax_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| {
            d.is_error()
                && gdl_syntax::codes::SYNTAX_CODES
                    .iter()
                    .any(|c| c.code == d.code)
        })
    }

    /// The names of the document and their places.
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| match self.notation {
            Notation::Prefix => Index::build(&self.text, &Identity),
            Notation::Infix => match &self.converted {
                Some(converted) => {
                    let map = Origins(converted);
                    let mut index = Index::build(&converted.prefix, &map);
                    index.tokens.extend(infix_comments(&self.text));
                    index.tokens.sort_by_key(|t| t.span.start);
                    index
                }
                None => {
                    let mut index = Index::default();
                    index.tokens = infix_comments(&self.text).collect();
                    index
                }
            },
        })
    }

    pub fn range(&self, span: Span) -> lsp_types::Range {
        self.lines.range(&self.text, span)
    }

    pub fn offset(&self, position: lsp_types::Position) -> u32 {
        self.lines.offset(&self.text, position)
    }
}

/// A message about prefix text with its quoted variables spelled as infix spells them:
/// `` `?move` `` becomes `` `Move` ``.
fn infix_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("`?") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('`');
        match end.and_then(|end| infix::variable_to_infix(&after[..end]).map(|v| (end, v))) {
            Some((end, spelled)) => {
                out.push('`');
                out.push_str(&spelled);
                out.push('`');
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("`?");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Places in converted prefix text mapped back to the infix tokens they came from.
struct Origins<'c>(&'c Converted);

impl Places for Origins<'_> {
    fn name(&self, span: Span) -> Option<Span> {
        self.exact(span)
    }

    fn cover(&self, span: Span) -> Span {
        Origins::cover(self, span)
    }
}

impl Origins<'_> {
    /// The last piece written at or before prefix offset `at`.
    fn piece(&self, at: u32) -> Option<(usize, Span)> {
        let origins = &self.0.origins;
        let k = origins.partition_point(|&(offset, _)| offset <= at as usize);
        origins.get(k.checked_sub(1)?).copied()
    }

    /// The infix place of everything from the piece of `span.start` to that of its last byte.
    fn cover(&self, span: Span) -> Span {
        let Some((_, first)) = self.piece(span.start) else {
            return Span::new(0, 0);
        };
        let last = self
            .piece(span.end.saturating_sub(1).max(span.start))
            .map_or(first, |(_, s)| s);
        Span::new(first.start, last.end.max(first.start))
    }

    /// The infix token a prefix name was written for, if it was written for one: the piece
    /// that starts at `span.start` (after a separator, or after the `(` written for a call).
    fn exact(&self, span: Span) -> Option<Span> {
        let (offset, origin) = self.piece(span.start)?;
        let between = self.0.prefix.get(offset..span.start as usize)?;
        let between = between.trim_start();
        (between.is_empty() || between == "(").then_some(origin)
    }
}

/// The comments of an infix text (`%` to the end of the line, outside quoted names).
fn infix_comments(text: &str) -> impl Iterator<Item = crate::index::Token> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'\'' => {
                    i += 1;
                    while i < bytes.len() && !matches!(bytes[i], b'\'' | b'\n' | b'\r') {
                        if bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                b'%' => {
                    let start = i;
                    while i < bytes.len() && !matches!(bytes[i], b'\n' | b'\r') {
                        i += 1;
                    }
                    return Some(crate::index::Token {
                        span: Span::new(start as u32, i as u32),
                        class: crate::index::TokenClass::Comment,
                        modifiers: 0,
                    });
                }
                _ => i += 1,
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::TokenClass;

    #[test]
    fn infix_diagnostics_and_tokens_point_into_the_infix_text() {
        let text = "% a game\nrole(robot).\nlegal(robot, Move) :- true(step(1)).\n";
        let document = Document::new(text.into(), 1, Notation::Infix);
        let analysis = Analysis::new(&document);
        let unsafe_move = analysis
            .diagnostics
            .iter()
            .find(|d| d.code == "E001")
            .expect("Move is unsafe");
        assert_eq!(unsafe_move.span.text(text), "Move");
        let index = analysis.index();
        let tokens: Vec<(&str, TokenClass)> = index
            .tokens
            .iter()
            .map(|t| (t.span.text(text), t.class))
            .collect();
        assert!(tokens.contains(&("% a game", TokenClass::Comment)));
        assert!(tokens.contains(&("Move", TokenClass::Variable)));
        assert!(tokens.contains(&("legal", TokenClass::Relation)));
        assert!(tokens.contains(&("robot", TokenClass::Constant)));
        assert!(tokens.contains(&("step", TokenClass::Function)));
        assert!(tokens.contains(&("1", TokenClass::Number)));
    }

    #[test]
    fn infix_syntax_errors_are_the_converters() {
        let document = Document::new("p(a :- q.\n".into(), 1, Notation::Infix);
        let analysis = Analysis::new(&document);
        assert!(analysis.has_syntax_errors());
        assert!(analysis.diagnostics.iter().all(|d| d.code.starts_with('I')));
    }
}
