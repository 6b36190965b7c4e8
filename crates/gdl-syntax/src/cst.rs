//! The lossless S-expression tree of a prefix KIF text.
//!
//! The tree keeps every atom, variable, list and comment with its byte range, so the exact
//! spelling the author wrote, comments included, can be recovered. Whitespace is implied by the
//! gaps between ranges. Nodes live in one arena; a list's children are a contiguous slice, and
//! children are always created before their parent, so a node's id is greater than the ids of
//! everything inside it. Building the tree uses an explicit stack: no input nests too deeply.

use crate::diagnostic::Diagnostic;
use crate::span::Span;

pub type NodeId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A constant: anything that is not a variable, a parenthesis, a comment or whitespace.
    Atom,
    /// `?name`; the span includes the `?`.
    Variable,
    /// `( ... )`.
    List,
    /// `; ...` up to, not including, the end of the line.
    Comment,
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub kind: NodeKind,
    /// For a list, from its `(` to its `)` inclusive; for an unclosed list, to the end of its
    /// last child.
    pub span: Span,
    /// Whether a list has its closing parenthesis.
    pub closed: bool,
    first_child: u32,
    child_count: u32,
}

/// The S-expression tree of one source text.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    child_ids: Vec<NodeId>,
    top_first: u32,
    top_count: u32,
}

impl Tree {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn kind(&self, id: NodeId) -> NodeKind {
        self.nodes[id as usize].kind
    }

    pub fn span(&self, id: NodeId) -> Span {
        self.nodes[id as usize].span
    }

    /// The children of a list (empty for other nodes), comments included.
    pub fn children(&self, id: NodeId) -> &[NodeId] {
        let node = &self.nodes[id as usize];
        &self.child_ids[node.first_child as usize..(node.first_child + node.child_count) as usize]
    }

    /// The top-level nodes, comments included.
    pub fn top_level(&self) -> &[NodeId] {
        &self.child_ids[self.top_first as usize..(self.top_first + self.top_count) as usize]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The children of a list that are not comments.
    pub fn items(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.children(id)
            .iter()
            .copied()
            .filter(|&c| self.kind(c) != NodeKind::Comment)
    }

    /// The top-level nodes that are not comments.
    pub fn top_items(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.top_level()
            .iter()
            .copied()
            .filter(|&c| self.kind(c) != NodeKind::Comment)
    }

    /// For every node, whether a comment lies inside it (computed in one pass, since children
    /// precede their parents in the arena).
    pub fn comment_inside(&self) -> Vec<bool> {
        let mut inside = vec![false; self.nodes.len()];
        for id in 0..self.nodes.len() {
            if self.nodes[id].kind == NodeKind::List {
                inside[id] = self
                    .children(id as NodeId)
                    .iter()
                    .any(|&c| self.kind(c) == NodeKind::Comment || inside[c as usize]);
            }
        }
        inside
    }

    fn push(&mut self, kind: NodeKind, span: Span) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            kind,
            span,
            closed: true,
            first_child: 0,
            child_count: 0,
        });
        id
    }
}

/// Codes of the diagnostics produced while building the tree.
pub mod codes {
    pub const UNCLOSED_PAREN: &str = "S001";
    pub const UNMATCHED_CLOSE: &str = "S002";
    pub const INVALID_UTF8: &str = "S004";
    pub const INVALID_UTF8_IN_COMMENT: &str = "S014";
}

/// How many unclosed parentheses get a diagnostic each (the outermost); the last one counts
/// the rest.
const MAX_UNCLOSED_REPORTED: usize = 10;

/// Unmatched `)` shown one by one at most; the rest are counted (a stream of `)` would
/// otherwise cost a span and a label each: about 90 times its size).
const MAX_STRAY_CLOSE_SHOWN: usize = 100;

/// Whether `b` ends an atom or a variable.
#[inline]
fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b';' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c
    )
}

/// Length in bytes of a non-ASCII whitespace character at the start of `rest`, if there is one.
/// U+FEFF (a byte-order mark out of place, or a zero-width no-break space) counts as
/// whitespace too.
fn unicode_space_len(rest: &str) -> Option<usize> {
    let c = rest.chars().next()?;
    (c.is_whitespace() || c == '\u{feff}').then(|| c.len_utf8())
}

/// Builds the S-expression tree of `text`. Never fails: problems become diagnostics.
///
/// A leading byte-order mark is skipped (offsets stay offsets into `text`).
pub fn parse_tree(text: &str) -> (Tree, Vec<Diagnostic>) {
    assert!(
        text.len() <= u32::MAX as usize,
        "sources larger than 4 GiB are refused by the callers"
    );
    let bytes = text.as_bytes();
    let mut tree = Tree::default();
    let mut diagnostics = Vec::new();
    // Open lists: the offset of their `(` and where their children start in `pending`.
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut pending: Vec<NodeId> = Vec::new();
    let mut stray_close: Vec<Span> = Vec::new();
    let mut stray_close_more = 0usize;
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => i += 1,
            b';' => {
                let start = i;
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
                let id = tree.push(NodeKind::Comment, Span::from_range(start..i));
                pending.push(id);
            }
            b'(' => {
                open.push((i as u32, pending.len()));
                i += 1;
            }
            b')' => {
                match open.pop() {
                    Some((start, first)) => {
                        let span = Span::new(start, i as u32 + 1);
                        close_list(&mut tree, &mut pending, first, span, true);
                    }
                    None if stray_close.len() < MAX_STRAY_CLOSE_SHOWN => {
                        stray_close.push(Span::from_range(i..i + 1));
                    }
                    None => stray_close_more += 1,
                }
                i += 1;
            }
            _ => {
                if b >= 0x80
                    && let Some(len) = unicode_space_len(&text[i..])
                {
                    i += len;
                    continue;
                }
                let start = i;
                i += 1;
                while i < bytes.len() && !is_delimiter(bytes[i]) {
                    if bytes[i] >= 0x80
                        && text.is_char_boundary(i)
                        && unicode_space_len(&text[i..]).is_some()
                    {
                        break;
                    }
                    i += 1;
                }
                let kind = if b == b'?' {
                    NodeKind::Variable
                } else {
                    NodeKind::Atom
                };
                let id = tree.push(kind, Span::from_range(start..i));
                pending.push(id);
            }
        }
    }
    // Lists still open at the end, outermost first.
    let unclosed = open.len();
    let mut reported = Vec::new();
    while let Some((start, first)) = open.pop() {
        let end = pending[first..]
            .last()
            .map_or(start + 1, |&last| tree.span(last).end);
        // A list inside it that starts a line was probably meant to be a new top-level form.
        let swallowed = pending[first..].iter().copied().find(|&child| {
            let at = tree.span(child).start as usize;
            tree.kind(child) == NodeKind::List
                && (at == 0 || matches!(bytes[at - 1], b'\n' | b'\r'))
        });
        close_list(&mut tree, &mut pending, first, Span::new(start, end), false);
        // Only the outermost few are worth a message each.
        if open.len() < MAX_UNCLOSED_REPORTED {
            reported.push((start, swallowed.map(|c| tree.span(c).start)));
        }
    }
    for (k, &(start, swallowed)) in reported.iter().rev().enumerate() {
        let mut diagnostic = Diagnostic::error(
            codes::UNCLOSED_PAREN,
            Span::new(start, start + 1),
            "unclosed parenthesis",
        )
        .with_label("this `(` is never closed")
        .with_help("add the missing `)`, or remove this `(`");
        if let Some(at) = swallowed {
            diagnostic = diagnostic.with_related(
                Span::new(at, at + 1),
                "this form starts a line: is a `)` missing before it?",
            );
        }
        if k + 1 == MAX_UNCLOSED_REPORTED && unclosed > MAX_UNCLOSED_REPORTED {
            diagnostic.help = Some(format!(
                "{} more `(` inside this one are never closed either",
                unclosed - MAX_UNCLOSED_REPORTED
            ));
        }
        diagnostics.push(diagnostic);
    }
    if let Some((&first, rest)) = stray_close.split_first() {
        let mut diagnostic = Diagnostic::error(
            codes::UNMATCHED_CLOSE,
            first,
            "unmatched closing parenthesis",
        )
        .with_label("this `)` closes nothing")
        .with_help("remove it, or add the `(` it was meant to close");
        for &span in rest {
            diagnostic = diagnostic.with_related(span, "this `)` closes nothing either");
        }
        if stray_close_more > 0 {
            diagnostic.help = Some(format!(
                "remove it, or add the `(` it was meant to close; {stray_close_more} more `)` after these close nothing either"
            ));
        }
        diagnostics.push(diagnostic);
    }
    tree.top_first = tree.child_ids.len() as u32;
    tree.top_count = pending.len() as u32;
    tree.child_ids.extend_from_slice(&pending);
    diagnostics.sort_by_key(|d| d.span);
    (tree, diagnostics)
}

fn close_list(tree: &mut Tree, pending: &mut Vec<NodeId>, first: usize, span: Span, closed: bool) {
    let first_child = tree.child_ids.len() as u32;
    let child_count = (pending.len() - first) as u32;
    tree.child_ids.extend(pending.drain(first..));
    let id = tree.push(NodeKind::List, span);
    let node = &mut tree.nodes[id as usize];
    node.closed = closed;
    node.first_child = first_child;
    node.child_count = child_count;
    pending.push(id);
}

/// Decodes a file's bytes as UTF-8. Each invalid sequence is replaced, byte for byte, by
/// U+001A (SUBSTITUTE), so offsets into the result are offsets into the file, and reported: as
/// an `S004` error where it would become part of the game, as an `S014` warning inside a comment
/// (a Latin-1 `é` in an old game's comment changes nothing: comments are never sent or read).
pub fn decode(bytes: &[u8]) -> (String, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut text = String::with_capacity(bytes.len());
    let mut rest = bytes;
    let mut offset = 0usize;
    // Whether `bytes[..scanned]` ends inside a comment (`;` up to the end of its line).
    let (mut scanned, mut in_comment) = (0usize, false);
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                break;
            }
            Err(error) => {
                let valid = error.valid_up_to();
                // SAFETY-free: the prefix was just validated.
                text.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                let bad = error.error_len().unwrap_or(rest.len() - valid);
                let start = offset + valid;
                for &b in &bytes[scanned..start] {
                    match b {
                        b';' => in_comment = true,
                        b'\n' | b'\r' => in_comment = false,
                        _ => {}
                    }
                }
                scanned = start;
                let code = if in_comment {
                    codes::INVALID_UTF8_IN_COMMENT
                } else {
                    codes::INVALID_UTF8
                };
                match diagnostics.last_mut() {
                    Some(Diagnostic { span, code: last, .. })
                        if span.end as usize == start && *last == code =>
                    {
                        span.end = (start + bad) as u32;
                    }
                    _ if in_comment => diagnostics.push(
                        Diagnostic::warning(
                            code,
                            Span::from_range(start..start + bad),
                            "a comment is not valid UTF-8",
                        )
                        .with_label("these bytes are not UTF-8")
                        .with_help(
                            "the comment is kept as it is, but editors and other tools may not show it; save the file as UTF-8",
                        ),
                    ),
                    _ => diagnostics.push(
                        Diagnostic::error(
                            code,
                            Span::from_range(start..start + bad),
                            "the file is not valid UTF-8",
                        )
                        .with_label("these bytes are not UTF-8")
                        .with_help("save the file as UTF-8 (GDL itself uses only ASCII)"),
                    ),
                }
                for _ in 0..bad {
                    text.push('\u{1a}');
                }
                offset = start + bad;
                rest = &rest[valid + bad..];
            }
        }
    }
    (text, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(tree: &Tree, text: &str, id: NodeId) -> String {
        let node = tree.node(id);
        match node.kind {
            NodeKind::List => {
                let inner: Vec<String> = tree
                    .children(id)
                    .iter()
                    .map(|&c| shape(tree, text, c))
                    .collect();
                format!("[{}]", inner.join(" "))
            }
            NodeKind::Comment => "#".to_string(),
            _ => node.span.text(text).to_string(),
        }
    }

    fn top(text: &str) -> (String, Vec<Diagnostic>) {
        let (tree, diags) = parse_tree(text);
        let parts: Vec<String> = tree
            .top_level()
            .iter()
            .map(|&c| shape(&tree, text, c))
            .collect();
        (parts.join(" "), diags)
    }

    #[test]
    fn a_stream_of_unmatched_closing_parentheses_is_counted_not_listed() {
        let text = ")".repeat(100_000);
        let (_, diagnostics) = parse_tree(&text);
        assert_eq!(diagnostics.len(), 1);
        let d = &diagnostics[0];
        assert_eq!(d.related.len(), MAX_STRAY_CLOSE_SHOWN - 1);
        assert_eq!(
            d.help.as_deref(),
            Some(
                "remove it, or add the `(` it was meant to close; 99900 more `)` after these close nothing either"
            )
        );
    }

    #[test]
    fn atoms_variables_lists_comments() {
        let (s, d) = top("\u{feff}(<= (p ?x) ; c\r\n\t(q ?x)) terminal ++ map+ <");
        assert!(d.is_empty());
        assert_eq!(s, "[<= [p ?x] # [q ?x]] terminal ++ map+ <");
    }

    #[test]
    fn semicolon_ends_an_atom_and_cr_ends_a_comment() {
        let (s, d) = top("abc;comment\rdef");
        assert!(d.is_empty());
        assert_eq!(s, "abc # def");
    }

    #[test]
    fn unclosed_and_stray_parens() {
        let (_, d) = top("0123(56789");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].code, d[0].span), ("S001", Span::new(4, 5)));
        let (_, d) = top("0123(5)7)9)");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].code, d[0].span), ("S002", Span::new(8, 9)));
        assert_eq!(d[0].related[0].span, Span::new(10, 11));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let text = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
        let (tree, d) = parse_tree(&text);
        assert!(d.is_empty());
        assert_eq!(tree.top_level().len(), 1);
        let inside = tree.comment_inside();
        assert!(!inside[tree.top_level()[0] as usize]);
    }

    #[test]
    fn decode_marks_invalid_bytes() {
        let (text, d) = decode(b"(a \xff\xfe b)");
        assert_eq!(text.len(), 8);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].span, Span::new(3, 5));
        let (tree, d) = parse_tree(&text);
        assert!(d.is_empty());
        assert_eq!(tree.top_level().len(), 1);
    }
}
