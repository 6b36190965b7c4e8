//! The infix notation, and conversion between it and prefix KIF.
//!
//! The infix notation is the one of the GDL notes (`001`, table "Infix / Prefix"):
//!
//! | infix | prefix |
//! |---|---|
//! | `p(a, Y)` | `(p a ?y)` |
//! | `~p(X)` | `(not (p ?x))` |
//! | `q(Y) :- p(a, Y) & p(Y, c)` | `(<= (q ?y) (p a ?y) (p ?y c))` |
//! | `q(X) <= p(X)` | `(<= (q ?x) (p ?x))` |
//! | `(p(X) \| r(X))` | `(or (p ?x) (r ?x))` |
//! | `(p(X) & r(X))` inside a body | `(and (p ?x) (r ?x))` |
//! | `distinct(X, Y)` | `(distinct ?x ?y)` |
//! | `terminal`, `terminal()` | `terminal`, `(terminal)` |
//! | `% comment` | `; comment` |
//!
//! Names: a variable starts with an upper-case letter or `_`; a constant with a lower-case
//! letter, a digit, `+` or `-`; both continue with letters, digits, `_`, `+` and `-`. Any other
//! constant is quoted: `'<'(X, Y)`. Like prefix KIF, infix is case-insensitive apart from that
//! first letter. In a body, `,` may stand for `&`; `~` binds tighter than `&`, which binds
//! tighter than `|`. A sentence may end with `.`; a rule with an empty body is written
//! `head :- .`, and a rule with comments after its last literal ends with `.`.
//!
//! Converting prefix to infix upper-cases the first letter of variables (`?x` → `X`; a name
//! that does not start with a letter gets a leading `_`: `?_x` → `__x`, `?3x` → `_3x`),
//! lower-cases constants that start with an upper-case letter (`ROBOT` → `robot`) and quotes
//! the rest; converting back lower-cases the first letter of variables. So a round trip keeps
//! the game, and the text up to letter case.

use crate::ast::{Keyword, MAX_DEPTH};
use crate::cst::{NodeId, NodeKind, Tree};
use crate::diagnostic::Diagnostic;
use crate::format::is_rule;
use crate::layout::{Entry, entries, line_breaks, list_entries};
use crate::span::Span;

pub mod codes {
    pub const UNEXPECTED_CHARACTER: &str = "I001";
    pub const UNEXPECTED_TOKEN: &str = "I002";
    pub const UNTERMINATED_QUOTE: &str = "I003";
    pub const UNCLOSED_PAREN: &str = "I004";
    pub const BAD_QUOTED_NAME: &str = "I005";
    pub const NOT_WRITABLE: &str = "I006";
    pub const TOO_DEEP: &str = "I007";
}

// ---------------------------------------------------------------------------------------------
// Names

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-')
}

fn is_bare_constant(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && (bytes[0].is_ascii_lowercase()
            || bytes[0].is_ascii_digit()
            || matches!(bytes[0], b'+' | b'-'))
        && bytes.iter().all(|&b| is_name_char(b))
        && Keyword::of(text).is_none()
}

/// The infix spelling of a prefix constant.
pub fn constant_to_infix(text: &str) -> String {
    if is_bare_constant(text) {
        return text.to_string();
    }
    let lower = text.to_ascii_lowercase();
    if text.as_bytes()[0].is_ascii_uppercase() && is_bare_constant(&lower) {
        return lower;
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        if c == '\'' || c == '\\' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('\'');
    quoted
}

/// The infix spelling of a prefix variable name (without its `?`), if it has one: `x` → `X`,
/// `3x` → `_3x`, `_x` → `__x`.
pub fn variable_to_infix(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(|&b| is_name_char(b)) {
        return None;
    }
    let mut out = String::with_capacity(name.len() + 1);
    if bytes[0].is_ascii_alphabetic() {
        out.push(bytes[0].to_ascii_uppercase() as char);
        out.push_str(&name[1..]);
    } else {
        out.push('_');
        out.push_str(name);
    }
    Some(out)
}

/// Swaps the comment markers `;` and `%` in the leading run of markers, keeping the rest of
/// the comment as written: `;;; a` ↔ `%%% a`. The swap is its own inverse, so comments survive
/// a round trip exactly, even `;%`.
fn swap_comment_markers(text: &str) -> String {
    let body = text.trim_end();
    let run = body.bytes().take_while(|&b| b == b';' || b == b'%').count();
    let mut out = String::with_capacity(body.len());
    out.extend(
        body[..run]
            .chars()
            .map(|c| if c == ';' { '%' } else { ';' }),
    );
    out.push_str(&body[run..]);
    out
}

fn comment_to_infix(text: &str) -> String {
    swap_comment_markers(text)
}

fn comment_to_prefix(text: &str) -> String {
    swap_comment_markers(text)
}

// ---------------------------------------------------------------------------------------------
// Prefix to infix

/// Writes a description that parsed without errors in infix notation. Fails only for a variable
/// whose name infix cannot spell (`?a<b`).
pub fn to_infix(tree: &Tree, text: &str) -> Result<String, Vec<Diagnostic>> {
    let mut printer = Printer {
        tree,
        text,
        comment_inside: tree.comment_inside(),
        out: String::with_capacity(text.len()),
        errors: Vec::new(),
    };
    let top = entries(tree, text, tree.top_level(), None);
    for (k, entry) in top.iter().enumerate() {
        if entry.trailing {
            printer.out.push(' ');
            printer.comment(entry.id);
            continue;
        }
        if k > 0 {
            printer.newline(0, entry.blank_before);
        }
        if entry.is_comment {
            printer.comment(entry.id);
        } else if is_rule(tree, text, entry.id) {
            printer.rule(entry.id);
        } else {
            printer.sentence(entry.id, 0);
        }
    }
    if !printer.out.is_empty() {
        printer.out.push('\n');
    }
    if printer.errors.is_empty() {
        Ok(printer.out)
    } else {
        Err(printer.errors)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    Term,
    Literal,
}

struct Printer<'t> {
    tree: &'t Tree,
    text: &'t str,
    comment_inside: Vec<bool>,
    out: String,
    errors: Vec<Diagnostic>,
}

impl Printer<'_> {
    fn newline(&mut self, indent: usize, blank: bool) {
        self.out.push('\n');
        if blank {
            self.out.push('\n');
        }
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn comment(&mut self, id: NodeId) {
        let converted = comment_to_infix(self.tree.span(id).text(self.text));
        self.out.push_str(&converted);
    }

    fn src(&self, id: NodeId) -> &str {
        self.tree.span(id).text(self.text)
    }

    fn head_keyword(&self, id: NodeId) -> Option<Keyword> {
        self.tree
            .items(id)
            .next()
            .filter(|&h| self.tree.kind(h) == NodeKind::Atom)
            .and_then(|h| Keyword::of(self.src(h)))
    }

    /// The first element of a list and the entries after it (comments before the first
    /// element are moved after it, as the formatter does).
    fn after_head(&self, id: NodeId) -> (NodeId, Vec<Entry>) {
        let mut all = list_entries(self.tree, self.text, id, 1);
        let head = all.remove(0);
        (head.id, all)
    }

    fn rule(&mut self, id: NodeId) {
        // `<=` and the head first; comments among them follow the head.
        let entries = list_entries(self.tree, self.text, id, 2);
        self.sentence(entries[1].id, 0);
        self.out.push_str(" :-");
        let body = &entries[2..];
        let last_literal = body.iter().rposition(|e| !e.is_comment);
        for (k, entry) in body.iter().enumerate() {
            if entry.is_comment {
                if entry.trailing {
                    self.out.push(' ');
                } else {
                    self.newline(4, entry.blank_before);
                }
                self.comment(entry.id);
                continue;
            }
            self.newline(4, entry.blank_before);
            self.literal(entry.id, 4);
            if Some(k) != last_literal {
                self.out.push_str(" &");
            }
        }
        match last_literal {
            None if body.is_empty() => self.out.push_str(" ."),
            Some(last) if last + 1 == body.len() => {}
            _ => {
                self.newline(4, false);
                self.out.push('.');
            }
        }
    }

    fn sentence(&mut self, id: NodeId, indent: usize) {
        match self.tree.kind(id) {
            NodeKind::List => self.application(id, indent, Arg::Term, None),
            _ => self.out.push_str(&constant_to_infix(self.src(id))),
        }
    }

    fn literal(&mut self, id: NodeId, indent: usize) {
        let keyword = match self.tree.kind(id) {
            NodeKind::List => self.head_keyword(id),
            _ => None,
        };
        let Some(keyword) = keyword else {
            return self.sentence(id, indent);
        };
        let args: Vec<NodeId> = self.tree.items(id).skip(1).collect();
        let plain = !self.comment_inside[id as usize];
        match keyword {
            Keyword::Not if plain => {
                self.out.push('~');
                self.literal(args[0], indent);
            }
            Keyword::Or | Keyword::And if plain && args.len() >= 2 => {
                let op = if keyword == Keyword::Or { " | " } else { " & " };
                self.out.push('(');
                for (k, &arg) in args.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(op);
                    }
                    self.literal(arg, indent);
                }
                self.out.push(')');
            }
            Keyword::Distinct => {
                self.application(id, indent, Arg::Term, Some(keyword));
            }
            _ => self.application(id, indent, Arg::Literal, Some(keyword)),
        }
    }

    fn term(&mut self, id: NodeId, indent: usize) {
        match self.tree.kind(id) {
            NodeKind::Variable => {
                let name = &self.src(id)[1..];
                match variable_to_infix(name) {
                    Some(v) => self.out.push_str(&v),
                    None => {
                        self.errors.push(
                            Diagnostic::error(
                                codes::NOT_WRITABLE,
                                self.tree.span(id),
                                format!("the variable `?{name}` cannot be written in infix"),
                            )
                            .with_help(
                                "infix variable names use only letters, digits, `_`, `+` and `-`; rename it",
                            ),
                        );
                        self.out.push('_');
                    }
                }
            }
            NodeKind::Atom => self.out.push_str(&constant_to_infix(self.src(id))),
            NodeKind::List => self.application(id, indent, Arg::Term, None),
            NodeKind::Comment => unreachable!("comments are handled by the caller"),
        }
    }

    /// `name(arg, …)`, with comments kept in place between the arguments.
    fn application(&mut self, id: NodeId, indent: usize, kind: Arg, keyword: Option<Keyword>) {
        let (head, entries) = self.after_head(id);
        match keyword {
            Some(k) => self.out.push_str(k.as_str()),
            None if self.tree.kind(head) == NodeKind::Variable => self.term(head, indent),
            None => self.out.push_str(&constant_to_infix(self.src(head))),
        }
        self.out.push('(');
        let inner = indent + 4;
        let nodes_left = |k: usize| entries[k + 1..].iter().any(|e| !e.is_comment);
        let mut separator_due = false;
        let mut fresh_line = false;
        for (k, entry) in entries.iter().enumerate() {
            if entry.is_comment {
                if separator_due && nodes_left(k) {
                    self.out.push(',');
                    separator_due = false;
                }
                if entry.trailing && !fresh_line {
                    self.out.push(' ');
                } else if !fresh_line {
                    self.newline(inner, entry.blank_before);
                } else if entry.blank_before {
                    // Already on a fresh line: turn it into a blank one.
                    self.out.truncate(self.out.len() - inner);
                    self.newline(inner, false);
                }
                self.comment(entry.id);
                self.newline(inner, false);
                fresh_line = true;
                continue;
            }
            if separator_due {
                self.out.push_str(", ");
            }
            let at = if fresh_line { inner } else { indent };
            match kind {
                Arg::Term => self.term(entry.id, at),
                Arg::Literal => self.literal(entry.id, at),
            }
            separator_due = true;
            fresh_line = false;
        }
        self.out.push(')');
    }
}

// ---------------------------------------------------------------------------------------------
// Infix to prefix

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Name,
    Quoted,
    Var,
    LParen,
    RParen,
    Comma,
    Amp,
    Pipe,
    Tilde,
    Neck,
    Dot,
    Eof,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Tok,
    span: Span,
    newline_before: bool,
    blank_before: bool,
}

#[derive(Clone, Debug)]
struct Comment {
    span: Span,
    trailing: bool,
    blank_before: bool,
}

fn describe(kind: Tok) -> &'static str {
    match kind {
        Tok::Name | Tok::Quoted => "a name",
        Tok::Var => "a variable",
        Tok::LParen => "`(`",
        Tok::RParen => "`)`",
        Tok::Comma => "`,`",
        Tok::Amp => "`&`",
        Tok::Pipe => "`|`",
        Tok::Tilde => "`~`",
        Tok::Neck => "`:-`",
        Tok::Dot => "`.`",
        Tok::Eof => "the end of the file",
    }
}

fn lex(text: &str, diagnostics: &mut Vec<Diagnostic>) -> (Vec<Token>, Vec<Comment>) {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut comments: Vec<Comment> = Vec::new();
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut prev_end: Option<usize> = None;
    let mut gap_start = i;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() || b == 0x0b {
            i += 1;
            continue;
        }
        let breaks = line_breaks(&text[gap_start..i]);
        let start = i;
        let kind = match b {
            b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
                comments.push(Comment {
                    span: Span::from_range(start..i),
                    trailing: prev_end.is_some() && breaks == 0,
                    blank_before: prev_end.is_some() && breaks >= 2,
                });
                prev_end = Some(i);
                gap_start = i;
                continue;
            }
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b',' => Some(Tok::Comma),
            b'&' => Some(Tok::Amp),
            b'|' => Some(Tok::Pipe),
            b'~' => Some(Tok::Tilde),
            b'.' => Some(Tok::Dot),
            b':' if bytes.get(i + 1) == Some(&b'-') => {
                i += 1;
                Some(Tok::Neck)
            }
            b'<' if bytes.get(i + 1) == Some(&b'=') => {
                i += 1;
                Some(Tok::Neck)
            }
            b'\'' => {
                i += 1;
                let mut closed = false;
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    if bytes[i] == b'\\' && i + 1 < bytes.len() {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == b'\'' {
                        closed = true;
                        break;
                    }
                    i += 1;
                }
                if closed {
                    Some(Tok::Quoted)
                } else {
                    diagnostics.push(
                        Diagnostic::error(
                            codes::UNTERMINATED_QUOTE,
                            Span::from_range(start..i),
                            "quoted name without its closing `'`",
                        )
                        .with_label("this name is never closed"),
                    );
                    None
                }
            }
            _ if is_name_char(b) => {
                while i + 1 < bytes.len() && is_name_char(bytes[i + 1]) {
                    i += 1;
                }
                Some(if b.is_ascii_uppercase() || b == b'_' {
                    Tok::Var
                } else {
                    Tok::Name
                })
            }
            _ => {
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                i += len - 1;
                diagnostics.push(
                    Diagnostic::error(
                        codes::UNEXPECTED_CHARACTER,
                        Span::from_range(start..i + 1),
                        format!(
                            "unexpected character `{}` in infix GDL",
                            &text[start..i + 1].escape_debug()
                        ),
                    )
                    .with_help("names with such characters are written in quotes: 'a<b'"),
                );
                None
            }
        };
        i += 1;
        if let Some(kind) = kind {
            tokens.push(Token {
                kind,
                span: Span::from_range(start..i),
                newline_before: prev_end.is_some() && breaks > 0,
                blank_before: prev_end.is_some() && breaks >= 2,
            });
        }
        prev_end = Some(i);
        gap_start = i;
    }
    tokens.push(Token {
        kind: Tok::Eof,
        span: Span::from_range(bytes.len()..bytes.len()),
        newline_before: true,
        blank_before: false,
    });
    (tokens, comments)
}

/// A term or an atomic sentence: `name`, `name(args)`, or a variable.
#[derive(Debug)]
enum Node {
    Var(usize),
    App {
        name: usize,
        /// The arguments with the closing `)`; `None` when written without parentheses.
        args: Option<(Vec<Node>, usize)>,
    },
}

/// A literal of a rule body.
#[derive(Debug)]
enum Expr {
    Atom(Node),
    Not(usize, Box<Expr>),
    /// A chain `a | b | c` or `a & b & c`, with its parentheses when it is parenthesized.
    Chain(Keyword, Vec<Expr>, Option<(usize, usize)>),
    /// `(e)` around something that is not a chain.
    Group(Box<Expr>),
    /// `not(…)`, `or(…)`, `and(…)`, `distinct(…)`: name token, arguments, `)`.
    Call(usize, Vec<Expr>, usize),
}

struct Item {
    head: Node,
    /// `None` for a fact; the body literals and the optional final `.` for a rule.
    body: Option<(usize, Vec<Expr>, Option<usize>)>,
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    diagnostics: Vec<Diagnostic>,
    /// Nesting of parentheses and `~` being parsed, limited to [`MAX_DEPTH`].
    depth: usize,
}

struct Failed;

type Parsed<T> = Result<T, Failed>;

impl<'a> Parser<'a> {
    fn peek(&self) -> Tok {
        self.tokens[self.pos].kind
    }

    fn advance(&mut self) -> usize {
        let at = self.pos;
        if self.tokens[at].kind != Tok::Eof {
            self.pos += 1;
        }
        at
    }

    fn token_text(&self, at: usize) -> &'a str {
        self.tokens[at].span.text(self.text)
    }

    fn fail<T>(&mut self, expected: &str) -> Parsed<T> {
        let token = self.tokens[self.pos];
        let found = if token.kind == Tok::Eof {
            describe(Tok::Eof).to_string()
        } else {
            format!("`{}`", token.span.text(self.text))
        };
        self.diagnostics.push(
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                token.span,
                format!("expected {expected}, found {found}"),
            )
            .with_label(format!("{expected} belongs here")),
        );
        Err(Failed)
    }

    fn close(&mut self, open: usize) -> Parsed<usize> {
        if self.peek() == Tok::RParen {
            return Ok(self.advance());
        }
        if self.peek() == Tok::Eof {
            let span = self.tokens[open].span;
            self.diagnostics.push(
                Diagnostic::error(codes::UNCLOSED_PAREN, span, "unclosed parenthesis")
                    .with_label("this `(` is never closed"),
            );
            return Err(Failed);
        }
        self.fail("`,` or `)`")
    }

    fn file(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while self.peek() != Tok::Eof {
            let start = self.pos;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Failed) => self.recover(start),
            }
        }
        items
    }

    /// Skips to what looks like the start of the next sentence: after a `.`, or a name at the
    /// start of a line outside parentheses.
    fn recover(&mut self, start: usize) {
        if self.pos == start {
            self.advance();
        }
        let mut depth = 0i32;
        while self.peek() != Tok::Eof {
            let token = self.tokens[self.pos];
            match token.kind {
                Tok::LParen => depth += 1,
                Tok::RParen => depth -= 1,
                Tok::Dot => {
                    self.advance();
                    return;
                }
                Tok::Name | Tok::Quoted if depth <= 0 && token.newline_before => return,
                _ => {}
            }
            self.advance();
        }
    }

    fn item(&mut self) -> Parsed<Item> {
        let head = match self.peek() {
            Tok::Name | Tok::Quoted => self.application()?,
            Tok::Var if self.tokens[self.pos + 1].kind == Tok::LParen => self.application()?,
            _ => return self.fail("a sentence"),
        };
        if self.peek() != Tok::Neck {
            if self.peek() == Tok::Dot {
                self.advance();
            }
            return Ok(Item { head, body: None });
        }
        let neck = self.advance();
        if self.peek() == Tok::Dot {
            let dot = self.advance();
            return Ok(Item {
                head,
                body: Some((neck, Vec::new(), Some(dot))),
            });
        }
        let body = match self.disjunction()? {
            Expr::Chain(Keyword::And, literals, None) => literals,
            other => vec![other],
        };
        let dot = (self.peek() == Tok::Dot).then(|| self.advance());
        Ok(Item {
            head,
            body: Some((neck, body, dot)),
        })
    }

    /// Runs `f` one level deeper, or fails when the text nests more than [`MAX_DEPTH`] levels.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Parsed<T>) -> Parsed<T> {
        if self.depth >= MAX_DEPTH {
            let span = self.tokens[self.pos].span;
            self.diagnostics.push(
                Diagnostic::error(
                    codes::TOO_DEEP,
                    span,
                    format!("expressions nest more than {MAX_DEPTH} levels deep"),
                )
                .with_label("this is too deep"),
            );
            return Err(Failed);
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn disjunction(&mut self) -> Parsed<Expr> {
        let first = self.conjunction(true)?;
        if self.peek() != Tok::Pipe {
            return Ok(first);
        }
        let mut args = vec![first];
        while self.peek() == Tok::Pipe {
            self.advance();
            args.push(self.conjunction(true)?);
        }
        Ok(Expr::Chain(Keyword::Or, args, None))
    }

    fn conjunction(&mut self, comma_is_and: bool) -> Parsed<Expr> {
        let first = self.unary()?;
        let is_and = |p: &Self| p.peek() == Tok::Amp || (comma_is_and && p.peek() == Tok::Comma);
        if !is_and(self) {
            return Ok(first);
        }
        let mut args = vec![first];
        while is_and(self) {
            self.advance();
            args.push(self.unary()?);
        }
        Ok(Expr::Chain(Keyword::And, args, None))
    }

    fn unary(&mut self) -> Parsed<Expr> {
        match self.peek() {
            Tok::Tilde => {
                let tilde = self.advance();
                let inner = self.nested(Self::unary)?;
                Ok(Expr::Not(tilde, Box::new(inner)))
            }
            Tok::LParen => {
                let open = self.advance();
                let inner = self.nested(Self::disjunction)?;
                let close = self.close(open)?;
                Ok(match inner {
                    Expr::Chain(keyword, args, None) => {
                        Expr::Chain(keyword, args, Some((open, close)))
                    }
                    other => Expr::Group(Box::new(other)),
                })
            }
            Tok::Name | Tok::Quoted => {
                let keyword =
                    if self.peek() == Tok::Name && self.tokens[self.pos + 1].kind == Tok::LParen {
                        Keyword::of(self.token_text(self.pos))
                    } else {
                        None
                    };
                match keyword {
                    Some(keyword) => self.nested(|p| p.call(keyword)),
                    None => Ok(Expr::Atom(self.application()?)),
                }
            }
            Tok::Var if self.tokens[self.pos + 1].kind == Tok::LParen => {
                Ok(Expr::Atom(self.application()?))
            }
            Tok::Var => self.fail("a literal (a variable cannot be a sentence)"),
            _ => self.fail("a literal"),
        }
    }

    /// `not(…)`, `or(…)`, `and(…)` with literal arguments, `distinct(…)` with terms.
    fn call(&mut self, keyword: Keyword) -> Parsed<Expr> {
        let name = self.advance();
        let open = self.advance();
        let mut args = Vec::new();
        if self.peek() != Tok::RParen {
            loop {
                args.push(if keyword == Keyword::Distinct {
                    Expr::Atom(self.term()?)
                } else {
                    let first = self.conjunction(false)?;
                    if self.peek() == Tok::Pipe {
                        let mut chain = vec![first];
                        while self.peek() == Tok::Pipe {
                            self.advance();
                            chain.push(self.conjunction(false)?);
                        }
                        Expr::Chain(Keyword::Or, chain, None)
                    } else {
                        first
                    }
                });
                if self.peek() != Tok::Comma {
                    break;
                }
                self.advance();
            }
        }
        let close = self.close(open)?;
        Ok(Expr::Call(name, args, close))
    }

    fn term(&mut self) -> Parsed<Node> {
        match self.peek() {
            Tok::Var if self.tokens[self.pos + 1].kind != Tok::LParen => {
                Ok(Node::Var(self.advance()))
            }
            Tok::Name | Tok::Quoted | Tok::Var => self.application(),
            _ => self.fail("a term"),
        }
    }

    fn application(&mut self) -> Parsed<Node> {
        let name = self.advance();
        if self.peek() != Tok::LParen {
            return Ok(Node::App { name, args: None });
        }
        let open = self.advance();
        let mut args = Vec::new();
        if self.peek() != Tok::RParen {
            loop {
                args.push(self.nested(Self::term)?);
                if self.peek() != Tok::Comma {
                    break;
                }
                self.advance();
            }
        }
        let close = self.close(open)?;
        Ok(Node::App {
            name,
            args: Some((args, close)),
        })
    }
}

/// Writes prefix text in the order of the infix tokens, putting each comment back where it was
/// relative to them, and remembering which infix token each piece of output came from.
struct Emitter<'a> {
    text: &'a str,
    tokens: &'a [Token],
    comments: &'a [Comment],
    next_comment: usize,
    /// The last infix token whose line breaks have been reproduced.
    used_breaks: Option<usize>,
    after_comment: bool,
    out: String,
    /// (offset in `out`, infix span) for every piece written, in order.
    origins: Vec<(usize, Span)>,
    errors: Vec<Diagnostic>,
}

impl Emitter<'_> {
    fn flush_comments(&mut self, before: u32) {
        while let Some(comment) = self.comments.get(self.next_comment) {
            if comment.span.start >= before {
                break;
            }
            self.next_comment += 1;
            if comment.trailing && !self.after_comment && !self.out.is_empty() {
                self.out.push(' ');
            } else if !self.out.is_empty() {
                self.out.push('\n');
                if comment.blank_before {
                    self.out.push('\n');
                }
            }
            let converted = comment_to_prefix(comment.span.text(self.text));
            self.out.push_str(&converted);
            self.after_comment = true;
        }
    }

    /// Writes `piece` for infix token `at`.
    fn put(&mut self, piece: &str, at: Option<usize>) {
        let mut separate = !self.out.is_empty() && !self.out.ends_with('(') && piece != ")";
        let mut newlines = 0;
        if let Some(at) = at {
            let token = self.tokens[at];
            self.flush_comments(token.span.start);
            if self.used_breaks.is_none_or(|used| used < at) {
                self.used_breaks = Some(at);
                if token.newline_before {
                    newlines = if token.blank_before { 2 } else { 1 };
                }
            }
            self.origins.push((self.out.len(), token.span));
        }
        if self.after_comment {
            newlines = newlines.max(1);
            separate = true;
        }
        if separate || newlines > 0 {
            if newlines > 0 && !self.out.is_empty() {
                for _ in 0..newlines {
                    self.out.push('\n');
                }
            } else if separate {
                self.out.push(' ');
            }
        }
        self.after_comment = false;
        self.out.push_str(piece);
    }

    fn name(&mut self, at: usize) {
        let token = self.tokens[at];
        let raw = token.span.text(self.text);
        if token.kind == Tok::Var {
            self.variable(at);
        } else if token.kind == Tok::Quoted {
            let inner = &raw[1..raw.len() - 1];
            let mut name = String::with_capacity(inner.len());
            let mut escaped = false;
            for c in inner.chars() {
                if !escaped && c == '\\' {
                    escaped = true;
                    continue;
                }
                escaped = false;
                name.push(c);
            }
            let writable = !name.is_empty()
                && !name.starts_with('?')
                && !name
                    .chars()
                    .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | ';'));
            if !writable {
                self.errors.push(
                    Diagnostic::error(
                        codes::BAD_QUOTED_NAME,
                        token.span,
                        format!("the name {raw} cannot be written in prefix KIF"),
                    )
                    .with_help(
                        "prefix names cannot be empty, start with `?`, or contain spaces, `(`, `)` or `;`",
                    ),
                );
            }
            self.put(&name, Some(at));
        } else {
            self.put(raw, Some(at));
        }
    }

    fn node(&mut self, node: &Node) {
        match node {
            Node::Var(at) => self.variable(*at),
            Node::App { name, args: None } => self.name(*name),
            Node::App {
                name,
                args: Some((args, close)),
            } => {
                self.put("(", Some(*name));
                self.name(*name);
                for arg in args {
                    self.node(arg);
                }
                self.put(")", Some(*close));
            }
        }
    }

    fn variable(&mut self, at: usize) {
        let raw = self.tokens[at].span.text(self.text);
        // `Xy` is `?xy`; `_` opens names that do not start with a letter: `_3x` is `?3x`.
        let mut name = String::with_capacity(raw.len() + 1);
        name.push('?');
        let first = raw.as_bytes()[0];
        if first != b'_' {
            name.push(first.to_ascii_lowercase() as char);
        }
        name.push_str(&raw[1..]);
        self.put(&name, Some(at));
    }

    fn expr(&mut self, expr: &Expr) {
        match expr {
            Expr::Atom(node) => self.node(node),
            Expr::Not(tilde, inner) => {
                self.put("(", Some(*tilde));
                self.put("not", None);
                self.expr(inner);
                self.put(")", None);
            }
            Expr::Chain(keyword, args, parens) => {
                let open = parens
                    .map(|(o, _)| o)
                    .or_else(|| args.first().map(first_token));
                self.put("(", open);
                self.put(keyword.as_str(), None);
                for arg in args {
                    self.expr(arg);
                }
                self.put(")", parens.map(|(_, c)| c));
            }
            Expr::Group(inner) => self.expr(inner),
            Expr::Call(name, args, close) => {
                self.put("(", Some(*name));
                self.put(self.tokens[*name].span.text(self.text), None);
                for arg in args {
                    self.expr(arg);
                }
                self.put(")", Some(*close));
            }
        }
    }

    fn item(&mut self, item: &Item) {
        match &item.body {
            None => self.node(&item.head),
            Some((_, body, dot)) => {
                self.put("(", Some(first_node_token(&item.head)));
                self.put("<=", None);
                self.node(&item.head);
                for literal in body {
                    self.expr(literal);
                }
                self.put(")", *dot);
            }
        }
    }
}

fn first_node_token(node: &Node) -> usize {
    match node {
        Node::Var(at) | Node::App { name: at, .. } => *at,
    }
}

fn first_token(expr: &Expr) -> usize {
    match expr {
        Expr::Atom(node) => first_node_token(node),
        Expr::Not(at, _) | Expr::Call(at, _, _) => *at,
        Expr::Chain(_, args, parens) => parens.map_or_else(|| first_token(&args[0]), |(o, _)| o),
        Expr::Group(inner) => first_token(inner),
    }
}

/// Prefix text converted from infix, with where each piece of it came from.
pub struct Converted {
    pub prefix: String,
    /// (offset in `prefix`, span in the infix text), in order of offset.
    pub origins: Vec<(usize, Span)>,
}

/// Converts infix text to prefix KIF text (not yet formatted). On failure, the diagnostics
/// point into the infix text.
pub fn infix_to_prefix_text(text: &str) -> Result<Converted, Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let (tokens, comments) = lex(text, &mut diagnostics);
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        diagnostics,
        depth: 0,
    };
    let items = parser.file();
    if !parser.diagnostics.is_empty() {
        parser.diagnostics.sort_by_key(|d| d.span);
        return Err(parser.diagnostics);
    }
    let mut emitter = Emitter {
        text,
        tokens: &parser.tokens,
        comments: &comments,
        next_comment: 0,
        used_breaks: None,
        after_comment: false,
        out: String::with_capacity(text.len() + text.len() / 4),
        origins: Vec::new(),
        errors: Vec::new(),
    };
    for item in &items {
        emitter.item(item);
    }
    emitter.flush_comments(u32::MAX);
    if !emitter.out.is_empty() {
        emitter.out.push('\n');
    }
    if !emitter.errors.is_empty() {
        return Err(emitter.errors);
    }
    Ok(Converted {
        prefix: emitter.out,
        origins: emitter.origins,
    })
}

/// Converts infix text to formatted prefix KIF. Problems the prefix reading finds (a number as
/// a relation name, a keyword inside a term, …) are reported at their place in the infix text.
pub fn infix_to_prefix(text: &str) -> Result<String, Vec<Diagnostic>> {
    let Converted { prefix, origins } = infix_to_prefix_text(text)?;
    let parsed = crate::parse(&prefix);
    let errors: Vec<Diagnostic> = parsed
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .map(|mut d| {
            let at = origins.partition_point(|&(offset, _)| offset <= d.span.start as usize);
            d.span = origins
                .get(at.saturating_sub(1))
                .map_or(Span::new(0, 0), |&(_, span)| span);
            d.related.clear();
            d.fix = None;
            d
        })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(crate::format::format(&parsed.tree, &prefix))
}
