//! How the children of a list (or the top level) sit on lines: which comments trail the
//! element before them on the same line, and where the author left blank lines.
//!
//! The formatter and the infix printer both lay out text from this, so a comment keeps its
//! place through formatting and through conversion between notations.

use crate::cst::{NodeId, NodeKind, Tree};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: NodeId,
    pub is_comment: bool,
    /// A comment on the same line as the element (or the `(`) before it.
    pub trailing: bool,
    /// At least one blank line separates it from what comes before (never for the first
    /// element of a list or of the file).
    pub blank_before: bool,
}

/// Number of line breaks in `gap` (CRLF counts once).
pub fn line_breaks(gap: &str) -> usize {
    let bytes = gap.as_bytes();
    let mut count = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            count += 1;
        }
    }
    count
}

/// Lays out `ids`, the children of a list whose `(` ends at `after_open` (or the top-level
/// nodes, with `after_open = None`).
pub fn entries(tree: &Tree, text: &str, ids: &[NodeId], after_open: Option<u32>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(ids.len());
    let mut prev_end = after_open;
    for &id in ids {
        let span = tree.span(id);
        let is_comment = tree.kind(id) == NodeKind::Comment;
        let (trailing, blank_before) = match prev_end {
            None => (false, false),
            Some(end) => {
                let breaks = line_breaks(&text[end as usize..span.start as usize]);
                (is_comment && breaks == 0, breaks >= 2 && !out.is_empty())
            }
        };
        out.push(Entry {
            id,
            is_comment,
            trailing,
            blank_before,
        });
        prev_end = Some(span.end);
    }
    out
}

/// The entries of a list with its first `leading` non-comment elements moved before any
/// comment that precedes them: the name of a list (and, for a rule, `<=` and its head) come
/// first, and the comments the author put between the `(` and them follow them.
///
/// Infix has no place for a comment between `(` and the name (`f(…)` opens after the name), so
/// the formatter and the infix printer both put such comments right after the name; the
/// formatter's output and a round trip through infix then agree. A comment that now follows a
/// comment is moved to its own line.
pub fn list_entries(tree: &Tree, text: &str, list: NodeId, leading: usize) -> Vec<Entry> {
    let span = tree.span(list);
    let mut all = entries(tree, text, tree.children(list), Some(span.start + 1));
    let mut moved = 0;
    let mut k = 0;
    while k < all.len() && moved < leading {
        if !all[k].is_comment {
            let entry = all.remove(k);
            all.insert(
                moved,
                Entry {
                    trailing: false,
                    blank_before: false,
                    ..entry
                },
            );
            moved += 1;
        }
        k += 1;
    }
    for k in 1..all.len() {
        if all[k].is_comment && all[k - 1].is_comment {
            all[k].trailing = false;
        }
    }
    if let Some(first) = all.get_mut(moved) {
        first.blank_before = false;
    }
    all
}
