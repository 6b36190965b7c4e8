//! Byte offsets and protocol positions.
//!
//! The toolkit works in byte offsets into the text; the protocol speaks of lines and UTF-16
//! code units within a line. [`LineIndex`] converts between the two at the edge of the server,
//! and nowhere else. Lines end at LF, CRLF or a lone CR, as the protocol says.

use gdl_syntax::Span;
use lsp_types::{Position, Range};

/// Where the lines of a text start, and which of them are pure ASCII (where a byte is a UTF-16
/// code unit, so no counting is needed).
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<u32>,
    ascii: Vec<bool>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0u32];
        let mut ascii = Vec::new();
        let mut line_ascii = true;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'\n' | b'\r' => {
                    if b == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i as u32 + 1);
                    ascii.push(line_ascii);
                    line_ascii = true;
                }
                _ => line_ascii &= b < 0x80,
            }
            i += 1;
        }
        ascii.push(line_ascii);
        LineIndex {
            starts,
            ascii,
            len: text.len() as u32,
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line containing byte `offset`.
    pub fn line_of(&self, offset: u32) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte range of a line's content, without its terminator.
    fn content(&self, text: &str, line: usize) -> (usize, usize) {
        let start = self.starts[line] as usize;
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(self.len as usize, |&s| s as usize);
        let bytes = text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        (start, end)
    }

    /// The text of a line, without its terminator.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let (start, end) = self.content(text, line.min(self.starts.len() - 1));
        &text[start..end]
    }

    /// The protocol position of byte `offset` (clamped to the text, and back to a character
    /// boundary).
    pub fn position(&self, text: &str, offset: u32) -> Position {
        let mut offset = (offset.min(self.len)) as usize;
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset as u32);
        let (start, end) = self.content(text, line);
        // An offset inside a CRLF terminator counts as the end of the line.
        let offset = offset.min(end);
        let character = if self.ascii[line] {
            offset - start
        } else {
            text[start..offset].chars().map(char::len_utf16).sum()
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end),
        )
    }

    /// The byte offset of a protocol position. A line past the end means the end of the text; a
    /// character past the end of its line means the end of the line (as the protocol says); a
    /// position inside a surrogate pair means the start of that character.
    pub fn offset(&self, text: &str, position: Position) -> u32 {
        let line = position.line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let (start, end) = self.content(text, line);
        let wanted = position.character as usize;
        if self.ascii[line] {
            return (start + wanted.min(end - start)) as u32;
        }
        let mut units = 0;
        for (k, c) in text[start..end].char_indices() {
            units += c.len_utf16();
            if units > wanted {
                return (start + k) as u32;
            }
        }
        end as u32
    }

    /// The byte span of a protocol range (ends before starts are swapped).
    pub fn span(&self, text: &str, range: Range) -> Span {
        let a = self.offset(text, range.start);
        let b = self.offset(text, range.end);
        Span::new(a.min(b), a.max(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_and_every_line_ending() {
        // `é` is one UTF-16 unit and two bytes; `𝄞` is two units (a surrogate pair) and four.
        let text = "ab\r\n; é𝄞 x\ry\nz";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(index.position(text, x), Position::new(1, 6));
        assert_eq!(index.offset(text, Position::new(1, 6)), x);
        // Inside the surrogate pair: the start of the character.
        let clef = text.find('𝄞').unwrap() as u32;
        assert_eq!(index.offset(text, Position::new(1, 3)), clef);
        assert_eq!(index.offset(text, Position::new(1, 4)), clef);
        assert_eq!(index.offset(text, Position::new(1, 5)), clef + 4);
        // Past the end of a line: its end; past the last line: the end of the text.
        assert_eq!(index.offset(text, Position::new(0, 99)), 2);
        assert_eq!(index.offset(text, Position::new(9, 0)), text.len() as u32);
        assert_eq!(index.position(text, 3), Position::new(0, 2));
        let y = text.find('y').unwrap() as u32;
        assert_eq!(index.position(text, y), Position::new(2, 0));
        assert_eq!(index.position(text, text.len() as u32), Position::new(3, 1));
        // Inside a multi-byte character: back to its start.
        let e = text.find('é').unwrap() as u32;
        assert_eq!(index.position(text, e + 1), Position::new(1, 2));
    }

    #[test]
    fn positions_round_trip() {
        let text = "(p ä)\n; 日本\r\n(q 𝄞 ?x)";
        let index = LineIndex::new(text);
        for (offset, _) in text.char_indices() {
            let p = index.position(text, offset as u32);
            // A terminator is the end of its line.
            let expected = if text[offset..].starts_with('\n') && text[..offset].ends_with('\r') {
                offset - 1
            } else {
                offset
            };
            assert_eq!(index.offset(text, p) as usize, expected, "{offset}");
        }
    }
}
