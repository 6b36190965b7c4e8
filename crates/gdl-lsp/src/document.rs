//! An open document: its text as the editor has it, kept up to date by incremental changes.

use std::sync::Arc;

use lsp_types::{TextDocumentContentChangeEvent, Url};

use crate::position::LineIndex;

/// The notation a document is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Notation {
    /// Prefix KIF (`.kif`, `.gdl`, `.gdl2`): what `ggp check` reads.
    Prefix,
    /// The infix notation of the GDL notes (`.infix`, `.hrf`; language id `gdl-infix`).
    Infix,
}

impl Notation {
    /// The notation of a document, from the language id the editor gives it and, failing a
    /// known one, from the file's extension.
    pub fn of(language_id: &str, uri: &Url) -> Notation {
        match language_id {
            "gdl-infix" | "infix-gdl" | "hrf" => Notation::Infix,
            "gdl" | "kif" | "gdl-prefix" => Notation::Prefix,
            _ => {
                let path = uri.path().to_ascii_lowercase();
                if path.ends_with(".infix") || path.ends_with(".hrf") {
                    Notation::Infix
                } else {
                    Notation::Prefix
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Document {
    pub text: Arc<str>,
    pub version: i32,
    pub notation: Notation,
    pub lines: Arc<LineIndex>,
}

impl Document {
    pub fn new(text: String, version: i32, notation: Notation) -> Document {
        let lines = Arc::new(LineIndex::new(&text));
        Document {
            text: text.into(),
            version,
            notation,
            lines,
        }
    }

    /// Applies the changes of one `didChange`, in order: each is relative to the text the
    /// previous one left. A change without a range replaces the whole text.
    pub fn apply(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        let mut text = String::from(&*self.text);
        let mut lines = LineIndex::clone(&self.lines);
        let count = changes.len();
        for (k, change) in changes.into_iter().enumerate() {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    let span = lines.span(&text, range);
                    text.replace_range(span.range(), &change.text);
                }
            }
            // The last change's index is built once, below.
            if k + 1 < count {
                lines = LineIndex::new(&text);
            }
        }
        self.lines = Arc::new(LineIndex::new(&text));
        self.text = text.into();
        self.version = version;
    }
}
