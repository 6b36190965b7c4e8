//! An open document: its text as the editor has it, kept up to date by incremental changes.

use std::sync::Arc;

use lsp_types::{TextDocumentContentChangeEvent, Url};

use crate::position::LineIndex;

/// The largest document the server keeps, in bytes of UTF-8: 64 MiB, as large as the largest
/// message it reads ([`crate::transport::MAX_MESSAGE_LEN`]). Incremental changes could
/// otherwise grow a document without end; one that would grow beyond this is dropped and not
/// checked (the server says so in a diagnostic) until it is opened again smaller.
pub const MAX_DOCUMENT_LEN: usize = 64 << 20;

/// A document that would be larger than [`MAX_DOCUMENT_LEN`]: the size it would have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge(pub usize);

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the document would be {} bytes, larger than {MAX_DOCUMENT_LEN}, the largest this server keeps",
            self.0
        )
    }
}

impl std::error::Error for TooLarge {}

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
    /// previous one left. A change without a range replaces the whole text. When a change
    /// would make the text larger than [`MAX_DOCUMENT_LEN`], nothing is applied (the document
    /// is as it was) and the size it would have had is returned.
    pub fn apply(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<(), TooLarge> {
        self.apply_within(version, changes, MAX_DOCUMENT_LEN)
    }

    fn apply_within(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        max_len: usize,
    ) -> Result<(), TooLarge> {
        let mut text = String::from(&*self.text);
        let mut lines = LineIndex::clone(&self.lines);
        let count = changes.len();
        for (k, change) in changes.into_iter().enumerate() {
            match change.range {
                None => {
                    if change.text.len() > max_len {
                        return Err(TooLarge(change.text.len()));
                    }
                    text = change.text;
                }
                Some(range) => {
                    let span = lines.span(&text, range);
                    let len = text.len() - span.range().len() + change.text.len();
                    if len > max_len {
                        return Err(TooLarge(len));
                    }
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn insert(line: u32, character: u32, text: &str) -> TextDocumentContentChangeEvent {
        let at = Position::new(line, character);
        TextDocumentContentChangeEvent {
            range: Some(Range::new(at, at)),
            range_length: None,
            text: text.into(),
        }
    }

    fn replace_all(text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn a_document_grows_up_to_its_limit_and_no_further() {
        let mut document = Document::new("(role r)\n".into(), 1, Notation::Prefix);
        // Nine bytes, to exactly 18.
        assert_eq!(
            document.apply_within(2, vec![insert(1, 0, "(init p)\n")], 18),
            Ok(())
        );
        assert_eq!(document.text.len(), 18);
        // One byte more is refused, and the document is as it was, version included.
        assert_eq!(
            document.apply_within(3, vec![insert(0, 0, ";")], 18),
            Err(TooLarge(19))
        );
        assert_eq!(&*document.text, "(role r)\n(init p)\n");
        assert_eq!(document.version, 2);
        // Changes that shrink it first, then grow it, are measured one after the other.
        let shrink = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(1, 0), Position::new(2, 0))),
            range_length: None,
            text: String::new(),
        };
        assert_eq!(
            document.apply_within(4, vec![shrink, insert(0, 0, ";;;;;;;;;")], 18),
            Ok(())
        );
        assert_eq!(&*document.text, ";;;;;;;;;(role r)\n");
        // A whole new text is measured too; a change later in the same notification as well.
        assert_eq!(
            document.apply_within(5, vec![replace_all(&"x".repeat(19))], 18),
            Err(TooLarge(19))
        );
        assert_eq!(
            document.apply_within(5, vec![replace_all("a"), insert(0, 1, &"b".repeat(20))], 18),
            Err(TooLarge(21))
        );
        assert_eq!(document.version, 4);
        assert_eq!(document.apply(6, vec![replace_all("(role r)")]), Ok(()));
        assert!(TooLarge(70_000_000).to_string().contains("67108864"));
    }
}
