//! The canonical prefix layout.
//!
//! - One top-level form per line; a blank line where the author left one or more (also between
//!   the literals of a rule and before comments, but not between the arguments of a term).
//! - A rule with a body: `(<= head` on the first line, then one body literal per line, indented
//!   four spaces, the closing parenthesis on the last literal (as in the specification's
//!   examples).
//! - Everything else on one line, with single spaces: `(cell 1 1 b)`.
//! - Comments stay where they were: a comment that followed something on the same line still
//!   does; a comment on its own line stays on its own line. A form with a comment inside it is
//!   broken over lines so that the comment keeps its place.
//! - The author's spelling (letter case) is kept; lines end with LF; the file ends with one.
//!
//! The output of [`format`] formats to itself.

use crate::ast::{Keyword, MAX_DEPTH};
use crate::cst::{NodeId, NodeKind, Tree};
use crate::layout::{Entry, entries, list_entries};

/// Formats a tree that parsed without errors (the caller checks; a tree with errors is refused
/// by the command line rather than mangled).
pub fn format(tree: &Tree, text: &str) -> String {
    let mut formatter = Formatter {
        tree,
        text,
        comment_inside: tree.comment_inside(),
        out: String::with_capacity(text.len() + text.len() / 8),
    };
    let top = entries(tree, text, tree.top_level(), None);
    for (k, entry) in top.iter().enumerate() {
        if entry.trailing {
            formatter.out.push(' ');
            formatter.comment(entry.id);
            continue;
        }
        if k > 0 {
            formatter.out.push('\n');
            if entry.blank_before {
                formatter.out.push('\n');
            }
        }
        formatter.node(entry.id, 0, 0);
    }
    if !formatter.out.is_empty() {
        formatter.out.push('\n');
    }
    formatter.out
}

/// The text as clean S-expressions on one line, for other programs: comments removed, forms and
/// their elements separated by single spaces, names spelled as written. This is what a Game
/// Manager sends in START: ggp-base's players, among others, do not read `;` comments, and a
/// comment can hide parentheses (or, on the last line of a file without a final newline, the
/// rest of the message). Built with an explicit stack, so no nesting is too deep.
pub fn compact(tree: &Tree, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Nodes still to write, as (node, whether a space goes before it); `None` closes a list.
    let mut stack: Vec<Option<(NodeId, bool)>> = Vec::new();
    let push_items = |stack: &mut Vec<Option<(NodeId, bool)>>, items: &[NodeId]| {
        let mut first = true;
        let mut entries: Vec<Option<(NodeId, bool)>> = Vec::new();
        for &item in items {
            if tree.kind(item) == NodeKind::Comment {
                continue;
            }
            entries.push(Some((item, !first)));
            first = false;
        }
        stack.extend(entries.into_iter().rev());
    };
    push_items(&mut stack, tree.top_level());
    while let Some(entry) = stack.pop() {
        let Some((id, space)) = entry else {
            out.push(')');
            continue;
        };
        if space {
            out.push(' ');
        }
        match tree.kind(id) {
            NodeKind::List => {
                out.push('(');
                stack.push(None);
                push_items(&mut stack, tree.children(id));
            }
            _ => out.push_str(tree.span(id).text(text)),
        }
    }
    out
}

/// Whether a list is a rule: its first element is `<=`.
pub fn is_rule(tree: &Tree, text: &str, id: NodeId) -> bool {
    tree.kind(id) == NodeKind::List
        && tree.items(id).next().is_some_and(|head| {
            tree.kind(head) == NodeKind::Atom
                && Keyword::of(tree.span(head).text(text)) == Some(Keyword::Rule)
        })
}

struct Formatter<'t> {
    tree: &'t Tree,
    text: &'t str,
    comment_inside: Vec<bool>,
    out: String,
}

impl Formatter<'_> {
    fn newline(&mut self, indent: usize, blank: bool) {
        self.out.push('\n');
        if blank {
            self.out.push('\n');
        }
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn comment(&mut self, id: NodeId) {
        let text = self.tree.span(id).text(self.text).trim_end();
        self.out.push_str(text);
    }

    /// Writes a node that starts at the current position, on a line indented `indent`.
    fn node(&mut self, id: NodeId, indent: usize, depth: usize) {
        match self.tree.kind(id) {
            NodeKind::Atom | NodeKind::Variable => {
                self.out.push_str(self.tree.span(id).text(self.text));
            }
            NodeKind::Comment => self.comment(id),
            NodeKind::List => {
                let rule = is_rule(self.tree, self.text, id);
                let with_body = rule && self.tree.items(id).nth(2).is_some();
                // Deeper lists cannot come from a tree without errors; stay flat regardless.
                if (self.comment_inside[id as usize] || with_body) && depth < MAX_DEPTH {
                    self.broken(id, indent, if rule { 2 } else { 1 }, depth);
                } else {
                    self.flat(id);
                }
            }
        }
    }

    fn flat(&mut self, id: NodeId) {
        self.out.push('(');
        for (k, &child) in self.tree.children(id).iter().enumerate() {
            if k > 0 {
                self.out.push(' ');
            }
            match self.tree.kind(child) {
                NodeKind::List => self.flat(child),
                _ => self.out.push_str(self.tree.span(child).text(self.text)),
            }
        }
        self.out.push(')');
    }

    /// Writes a list over several lines: its first `inline` elements on the line of its `(`,
    /// the rest one per line, indented by four more spaces.
    fn broken(&mut self, id: NodeId, indent: usize, inline: usize, depth: usize) {
        let children = list_entries(self.tree, self.text, id, inline);
        let inner = indent + 4;
        self.out.push('(');
        let mut inlined = 0;
        let mut first_line = true;
        let mut last_was_comment = false;
        for &Entry {
            id: child,
            is_comment,
            trailing,
            blank_before,
        } in &children
        {
            if is_comment {
                if trailing {
                    self.out.push(' ');
                } else {
                    self.newline(inner, blank_before);
                }
                self.comment(child);
                first_line = false;
                last_was_comment = true;
                continue;
            }
            last_was_comment = false;
            if first_line && inlined < inline {
                if inlined > 0 {
                    self.out.push(' ');
                }
                inlined += 1;
                self.node(child, indent, depth + 1);
            } else {
                first_line = false;
                // Blank lines are kept between the literals of a rule, not inside terms.
                self.newline(inner, blank_before && inline == 2);
                self.node(child, inner, depth + 1);
            }
        }
        if last_was_comment {
            self.newline(indent, false);
        }
        self.out.push(')');
    }
}

#[cfg(test)]
mod tests {
    use crate::compact_text;

    #[test]
    fn compact_drops_comments_and_keeps_spelling() {
        let text = "; a game (with brackets in comments\r\n(role xPlayer) ; )) more\r\n\
                    (<= (legal xPlayer (dropBomb ?x))\n    ; (legal xPlayer noop)\n    (true (at ?x)))\n\
                    ; é, a last comment without a newline )";
        assert_eq!(
            compact_text(text).unwrap(),
            "(role xPlayer) (<= (legal xPlayer (dropBomb ?x)) (true (at ?x)))"
        );
        assert_eq!(compact_text("").unwrap(), "");
        assert_eq!(compact_text("; only a comment").unwrap(), "");
        assert_eq!(compact_text("(f) (g (h))").unwrap(), "(f) (g (h))");
        assert!(compact_text("(role r").is_err());
    }
}
