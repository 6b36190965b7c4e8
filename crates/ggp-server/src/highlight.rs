//! Rules for reading on a page: prefix KIF highlighted from its S-expression tree, infix from
//! its tokens, one `<span class="line">` per line (numbered by the stylesheet). Every piece of
//! the text goes through the template engine, so it is escaped.

use gdl_syntax::cst::{self, NodeKind};
use maud::{Markup, html};

/// The GDL words that get their own colour.
const KEYWORDS: &[&str] = &[
    "role", "init", "true", "next", "legal", "does", "goal", "terminal", "distinct", "not", "or",
    "base", "input", "<=",
];

/// Above this size rules are shown plain: highlighting multiplies the page's size.
pub const MAX_HIGHLIGHTED: usize = 256 * 1024;

/// Prefix KIF, highlighted.
pub fn prefix(text: &str) -> Markup {
    if text.len() > MAX_HIGHLIGHTED {
        return lines(text, Vec::new(), true);
    }
    let (tree, _) = cst::parse_tree(text);
    let count = tree.len();
    // Which nodes are the first item of their list: a relation's or a function's name.
    let mut first = vec![false; count];
    for id in 0..count as u32 {
        if tree.kind(id) == NodeKind::List
            && let Some(item) = tree.items(id).next()
        {
            first[item as usize] = true;
        }
    }
    let mut marks: Vec<(usize, usize, &'static str)> = Vec::with_capacity(count);
    for id in 0..count as u32 {
        let span = tree.span(id);
        let (start, end) = (span.start as usize, span.end as usize);
        if start >= end || end > text.len() {
            continue;
        }
        match tree.kind(id) {
            NodeKind::Comment => marks.push((start, end, "comment")),
            NodeKind::Variable => marks.push((start, end, "var")),
            NodeKind::Atom => {
                let word = &text[start..end];
                let class = if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word)) {
                    "kw"
                } else if word.bytes().all(|b| b.is_ascii_digit()) {
                    "num"
                } else if first[id as usize] {
                    "rel"
                } else {
                    "atom"
                };
                marks.push((start, end, class));
            }
            NodeKind::List => {
                marks.push((start, start + 1, "paren"));
                if tree.node(id).closed && end > start + 1 {
                    marks.push((end - 1, end, "paren"));
                }
            }
        }
    }
    marks.sort_unstable_by_key(|m| m.0);
    lines(text, marks, true)
}

/// Infix rules, highlighted by their tokens: `%` comments, variables (a capital first),
/// numbers, keywords and the operators `:-`, `&`, `|`, `~`.
pub fn infix(text: &str) -> Markup {
    if text.len() > MAX_HIGHLIGHTED {
        return lines(text, Vec::new(), false);
    }
    let bytes = text.as_bytes();
    let mut marks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
            marks.push((i, end, "comment"));
            i = end;
        } else if b == b'\'' {
            // A quoted name.
            let end = text[i + 1..]
                .find('\'')
                .map_or(text.len(), |n| i + 1 + n + 1);
            marks.push((i, end, "atom"));
            i = end;
        } else if b.is_ascii_alphanumeric() || b == b'_' {
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .map_or(text.len(), |n| i + n);
            let word = &text[i..end];
            let class = if b.is_ascii_uppercase() || b == b'_' {
                "var"
            } else if word.bytes().all(|b| b.is_ascii_digit()) {
                "num"
            } else if KEYWORDS.contains(&word) {
                "kw"
            } else {
                "atom"
            };
            marks.push((i, end, class));
            i = end;
        } else if text[i..].starts_with(":-") {
            marks.push((i, i + 2, "kw"));
            i += 2;
        } else if matches!(b, b'&' | b'|' | b'~') {
            marks.push((i, i + 1, "kw"));
            i += 1;
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    lines(text, marks, false)
}

/// A line's pieces and their classes (`None`: plain).
type Row<'a> = Vec<(&'a str, Option<&'static str>)>;

/// Plain text, cut at its line ends.
fn push_plain<'a>(rows: &mut Vec<Row<'a>>, piece: &'a str) {
    let mut parts = piece.split('\n');
    if let Some(first) = parts.next()
        && !first.is_empty()
    {
        rows.last_mut().expect("a line").push((first, None));
    }
    for part in parts {
        rows.push(Vec::new());
        if !part.is_empty() {
            rows.last_mut().expect("a line").push((part, None));
        }
    }
}

/// The text cut into lines, each piece in its class (and with an id, `L1`…, if `anchors`).
/// `marks` are sorted, do not overlap and do not cross line ends (tokens and comments never
/// do).
fn lines(text: &str, marks: Vec<(usize, usize, &'static str)>, anchors: bool) -> Markup {
    let mut rows: Vec<Row<'_>> = vec![Vec::new()];
    let mut at = 0;
    for (start, end, class) in marks {
        if start < at || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        push_plain(&mut rows, &text[at..start]);
        rows.last_mut()
            .expect("a line")
            .push((&text[start..end], Some(class)));
        at = end;
    }
    push_plain(&mut rows, &text[at..]);
    if rows.len() > 1 && rows.last().is_some_and(Vec::is_empty) {
        rows.pop();
    }
    html! {
        @for (n, row) in rows.iter().enumerate() {
            span.line id=[anchors.then(|| format!("L{}", n + 1))] {
                @for (piece, class) in row {
                    @match class {
                        Some(class) => span.(class) { (piece) },
                        None => (piece),
                    }
                }
                "\n"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_rules_are_highlighted_and_escaped() {
        let html = prefix(
            "; <script>alert(1)</script>\n(role x)\n(<= (legal x (mark ?m)) (true (cell ?m b)))\n",
        )
        .into_string();
        assert!(!html.contains("<script>"), "{html}");
        assert!(
            html.contains(
                r#"<span class="comment">; &lt;script&gt;alert(1)&lt;/script&gt;</span>"#
            ),
            "{html}"
        );
        assert!(html.contains(r#"<span class="kw">role</span>"#), "{html}");
        assert!(html.contains(r#"<span class="var">?m</span>"#), "{html}");
        assert!(html.contains(r#"<span class="rel">mark</span>"#), "{html}");
        assert_eq!(html.matches(r#"<span class="line" id="L"#).count(), 3);
    }

    #[test]
    fn broken_and_odd_texts_are_shown_whole() {
        for text in ["(((", ")))", "(a ; é\n b", "", "\u{1a}(x)", "((a)\n\n\n"] {
            let html = prefix(text).into_string();
            let plain: String = html
                .split('<')
                .map(|part| part.split_once('>').map_or(part, |(_, rest)| rest))
                .collect();
            assert_eq!(plain.trim_end(), text.trim_end(), "{html}");
        }
    }

    #[test]
    fn infix_rules_are_highlighted() {
        let html =
            infix("% a <b>comment</b>\nlegal(x, mark(M)) :- true(cell(M, b)) & ~p\n").into_string();
        assert!(html.contains(r#"<span class="comment">% a &lt;b&gt;comment&lt;/b&gt;</span>"#));
        assert!(html.contains(r#"<span class="var">M</span>"#));
        assert!(html.contains(r#"<span class="kw">:-</span>"#));
        assert!(html.contains(r#"<span class="kw">legal</span>"#));
    }
}
