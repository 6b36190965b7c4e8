//! Byte ranges into a source text and their line/column positions.

use std::fmt;
use std::ops::Range;

/// A half-open byte range `[start, end)` into a source text.
///
/// Offsets are `u32`: sources are limited to 4 GiB (callers reject larger files).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// A span from `usize` offsets; panics only if an offset exceeds `u32::MAX`, which the
    /// parsers rule out by refusing larger inputs.
    pub fn from_range(range: Range<usize>) -> Span {
        Span {
            start: u32::try_from(range.start).expect("source larger than 4 GiB"),
            end: u32::try_from(range.end).expect("source larger than 4 GiB"),
        }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The text this span covers.
    pub fn text(self, source: &str) -> &str {
        &source[self.range()]
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Line starts of a text, for turning byte offsets into 1-based lines and columns.
///
/// LF, CRLF and a lone CR each end a line. Columns count Unicode scalar values, so a tab or a
/// multi-byte character is one column.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0u32];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i as u32 + 1),
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i as u32 + 1);
                }
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// The 0-based line containing `offset`.
    pub fn line_of(&self, offset: u32) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> u32 {
        self.starts[line]
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 1-based line and column (in characters) of `offset`.
    pub fn line_col(&self, text: &str, offset: u32) -> (usize, usize) {
        let offset = offset.min(text.len() as u32);
        let line = self.line_of(offset);
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (line + 1, text[start..end].chars().count() + 1)
    }

    /// Byte range of 0-based `line` without its line terminator.
    pub fn line_range(&self, text: &str, line: usize) -> Range<usize> {
        let start = self.starts[line] as usize;
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(text.len(), |&s| s as usize);
        let bytes = text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_for_every_line_ending() {
        let text = "ab\ncd\r\nef\rg\u{e9}h";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.line_col(text, 0), (1, 1));
        assert_eq!(index.line_col(text, 4), (2, 2));
        assert_eq!(index.line_col(text, 7), (3, 1));
        assert_eq!(index.line_col(text, 10), (4, 1));
        // 'h' follows the two-byte 'é': column 3, byte 13.
        assert_eq!(index.line_col(text, 13), (4, 3));
        assert_eq!(&text[index.line_range(text, 1)], "cd");
        assert_eq!(&text[index.line_range(text, 3)], "g\u{e9}h");
    }
}
