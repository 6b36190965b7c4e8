//! The GDL reading of an S-expression tree: sentences, rules, literals and terms.
//!
//! This layer knows the shape GDL gives to S-expressions (§5 of the specification: rules
//! `(<= head body…)`, literals `not`, `or`, `and`, `distinct`, terms built from constants,
//! variables and function applications) and reports forms that have no GDL reading. It knows
//! nothing of what the relations mean: that is the checker's business.
//!
//! Names keep the author's spelling; compare them with [`eq_ignore_case`].

use crate::cst::{NodeId, NodeKind, Tree};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// How deeply lists may nest inside one top-level form. Real games nest fewer than 30 levels.
pub const MAX_DEPTH: usize = 256;

pub mod codes {
    pub const EMPTY_LIST: &str = "S003";
    pub const LIST_AS_NAME: &str = "S005";
    pub const NUMBER_AS_RELATION: &str = "S006";
    pub const RULE_WITHOUT_HEAD: &str = "S007";
    pub const MISPLACED_RULE: &str = "S008";
    pub const LITERAL_AS_SENTENCE: &str = "S009";
    pub const KEYWORD_ARITY: &str = "S010";
    pub const VARIABLE_AS_SENTENCE: &str = "S011";
    pub const TOO_DEEP: &str = "S012";
    pub const EMPTY_VARIABLE: &str = "S013";
}

/// A name as written, with its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name<'a> {
    /// The spelling, without the `?` of a variable.
    pub text: &'a str,
    pub span: Span,
    /// A variable in the place of a relation or function name, as in `(?r ?x)`. GDL gives
    /// this no meaning, but some real games contain it by mistake; it is read so that tools
    /// can work on such files, and `ggp check` reports it.
    pub variable: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term<'a> {
    Variable(Name<'a>),
    Constant(Name<'a>),
    /// `(f a b)`; `(f)` is a function of no arguments, distinct from the constant `f`.
    Function {
        name: Name<'a>,
        args: Box<[Term<'a>]>,
        span: Span,
    },
}

impl Term<'_> {
    pub fn span(&self) -> Span {
        match self {
            Term::Variable(n) | Term::Constant(n) => n.span,
            Term::Function { span, .. } => *span,
        }
    }
}

/// An atomic sentence: a relation applied to terms. `p` and `(p)` are the same proposition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentence<'a> {
    pub name: Name<'a>,
    pub args: Box<[Term<'a>]>,
    /// Whether it was written in parentheses: `(p)` rather than `p`.
    pub parenthesized: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal<'a> {
    Atom(Sentence<'a>),
    Not {
        arg: Box<Literal<'a>>,
        span: Span,
    },
    Distinct {
        left: Term<'a>,
        right: Term<'a>,
        span: Span,
    },
    Or {
        args: Vec<Literal<'a>>,
        span: Span,
    },
    And {
        args: Vec<Literal<'a>>,
        span: Span,
    },
}

impl Literal<'_> {
    pub fn span(&self) -> Span {
        match self {
            Literal::Atom(s) => s.span,
            Literal::Not { span, .. }
            | Literal::Distinct { span, .. }
            | Literal::Or { span, .. }
            | Literal::And { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule<'a> {
    pub head: Sentence<'a>,
    pub body: Vec<Literal<'a>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    Fact(Sentence<'a>),
    /// Boxed: rules are few and large, facts many and small.
    Rule(Box<Rule<'a>>),
}

impl Item<'_> {
    pub fn span(&self) -> Span {
        match self {
            Item::Fact(s) => s.span,
            Item::Rule(r) => r.span,
        }
    }
}

/// The GDL items of a description. Top-level forms with errors are left out (their errors are
/// among the diagnostics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Description<'a> {
    pub items: Vec<Item<'a>>,
}

/// ASCII case-insensitive comparison: GDL names are case-insensitive.
pub fn eq_ignore_case(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The logical keywords that cannot be relation, function or constant names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    Rule,
    Not,
    Or,
    And,
    Distinct,
}

impl Keyword {
    pub fn of(text: &str) -> Option<Keyword> {
        if text == "<=" {
            return Some(Keyword::Rule);
        }
        if text.len() > 8 {
            return None;
        }
        [
            ("not", Keyword::Not),
            ("or", Keyword::Or),
            ("and", Keyword::And),
            ("distinct", Keyword::Distinct),
        ]
        .into_iter()
        .find(|(word, _)| text.eq_ignore_ascii_case(word))
        .map(|(_, k)| k)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Rule => "<=",
            Keyword::Not => "not",
            Keyword::Or => "or",
            Keyword::And => "and",
            Keyword::Distinct => "distinct",
        }
    }
}

/// Whether a name is a number (digits only). Numbers are fine as constants and even as function
/// names, but not as relation names.
pub fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Reads the GDL items of a tree. Problems are appended to `diagnostics`.
pub fn build<'a>(tree: &Tree, text: &'a str, diagnostics: &mut Vec<Diagnostic>) -> Description<'a> {
    let mut builder = Builder {
        tree,
        text,
        diagnostics,
        depth: 0,
    };
    // Sized once: a description of millions of facts should not pay for the doubling.
    let mut items = Vec::with_capacity(tree.top_items().count());
    for id in tree.top_items() {
        if let Some(item) = builder.item(id) {
            items.push(item);
        }
    }
    Description { items }
}

struct Builder<'t, 'a, 'd> {
    tree: &'t Tree,
    text: &'a str,
    diagnostics: &'d mut Vec<Diagnostic>,
    depth: usize,
}

impl<'a> Builder<'_, 'a, '_> {
    fn error(&mut self, code: &'static str, span: Span, message: String) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::error(code, span, message));
        self.diagnostics.last_mut().expect("just pushed")
    }

    fn text_of(&self, id: NodeId) -> &'a str {
        self.tree.span(id).text(self.text)
    }

    fn name(&self, id: NodeId) -> Name<'a> {
        let span = self.tree.span(id);
        let text = span.text(self.text);
        let text = if self.tree.kind(id) == NodeKind::Variable {
            &text[1..]
        } else {
            text
        };
        Name {
            text,
            span,
            variable: self.tree.kind(id) == NodeKind::Variable,
        }
    }

    /// The non-comment children of a closed list, or `None` (reported) if it cannot be read:
    /// unclosed (already reported), empty, or nested too deeply.
    fn list_items(&mut self, id: NodeId) -> Option<Vec<NodeId>> {
        let node = self.tree.node(id);
        if !node.closed {
            return None;
        }
        if self.depth >= MAX_DEPTH {
            self.error(
                codes::TOO_DEEP,
                Span::new(node.span.start, node.span.start + 1),
                format!("lists nest more than {MAX_DEPTH} levels deep"),
            )
            .label = Some("this list is too deep".into());
            return None;
        }
        let items: Vec<NodeId> = self.tree.items(id).collect();
        if items.is_empty() {
            self.error(codes::EMPTY_LIST, node.span, "empty list `()`".into())
                .help = Some("`()` has no meaning in GDL: remove it".into());
            return None;
        }
        Some(items)
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn item(&mut self, id: NodeId) -> Option<Item<'a>> {
        if self.tree.kind(id) == NodeKind::List {
            let node = *self.tree.node(id);
            if node.closed
                && let Some(head) = self.tree.items(id).next()
                && self.tree.kind(head) == NodeKind::Atom
                && Keyword::of(self.text_of(head)) == Some(Keyword::Rule)
            {
                return self.rule(id);
            }
        }
        self.sentence(id).map(Item::Fact)
    }

    fn rule(&mut self, id: NodeId) -> Option<Item<'a>> {
        let items = self.list_items(id)?;
        let span = self.tree.span(id);
        let Some(&head) = items.get(1) else {
            self.error(codes::RULE_WITHOUT_HEAD, span, "rule without a head".into())
                .help = Some("a rule is written `(<= head body…)`".into());
            return None;
        };
        self.nested(|b| {
            let head = b.sentence(head);
            let mut ok = head.is_some();
            let mut body = Vec::with_capacity(items.len() - 2);
            for &literal in &items[2..] {
                match b.literal(literal) {
                    Some(l) => body.push(l),
                    None => ok = false,
                }
            }
            ok.then(|| {
                Item::Rule(Box::new(Rule {
                    head: head.expect("checked"),
                    body,
                    span,
                }))
            })
        })
    }

    /// A relation applied to terms, where a sentence belongs (a fact, a rule head, a body atom).
    fn sentence(&mut self, id: NodeId) -> Option<Sentence<'a>> {
        let span = self.tree.span(id);
        match self.tree.kind(id) {
            NodeKind::Variable => {
                self.error(
                    codes::VARIABLE_AS_SENTENCE,
                    span,
                    format!("a variable, `{}`, cannot be a sentence", self.text_of(id)),
                )
                .label = Some("a relation name or `(relation args…)` belongs here".into());
                None
            }
            NodeKind::Atom => {
                let name = self.name(id);
                self.relation_name(name, span)?;
                Some(Sentence {
                    name,
                    args: Box::new([]),
                    parenthesized: false,
                    span,
                })
            }
            NodeKind::List => {
                let items = self.list_items(id)?;
                let head = items[0];
                let name = match self.tree.kind(head) {
                    NodeKind::Atom => {
                        let name = self.name(head);
                        self.relation_name(name, span)?;
                        name
                    }
                    NodeKind::Variable => self.name(head),
                    _ => {
                        self.list_as_name(head);
                        return None;
                    }
                };
                let args = self.nested(|b| b.terms(&items[1..]))?;
                Some(Sentence {
                    name,
                    args,
                    parenthesized: true,
                    span,
                })
            }
            NodeKind::Comment => unreachable!("comments are skipped"),
        }
    }

    /// Checks a name used as a relation; `form` is the whole sentence.
    fn relation_name(&mut self, name: Name<'a>, form: Span) -> Option<()> {
        match Keyword::of(name.text) {
            Some(Keyword::Rule) => {
                self.error(
                    codes::MISPLACED_RULE,
                    form,
                    "`<=` can only begin a top-level rule".into(),
                )
                .label = Some("a sentence belongs here".into());
                None
            }
            Some(keyword) => {
                self.error(
                    codes::LITERAL_AS_SENTENCE,
                    form,
                    format!("`{}` cannot be used as a sentence here", keyword.as_str()),
                )
                .label = Some(format!(
                    "`{}` is a literal, allowed only in a rule body",
                    keyword.as_str()
                ));
                None
            }
            None if is_number(name.text) => {
                self.error(
                    codes::NUMBER_AS_RELATION,
                    name.span,
                    format!("a number, `{}`, cannot be a relation name", name.text),
                )
                .label = Some("a relation name belongs here".into());
                None
            }
            None => Some(()),
        }
    }

    /// Reports a list in the name position of a list.
    fn list_as_name(&mut self, head: NodeId) {
        let span = self.tree.span(head);
        self.error(
            codes::LIST_AS_NAME,
            Span::new(span.start, span.start + 1),
            "a list cannot name a relation or function".into(),
        )
        .label = Some("a name belongs here, not `(`".into());
    }

    fn literal(&mut self, id: NodeId) -> Option<Literal<'a>> {
        let span = self.tree.span(id);
        match self.tree.kind(id) {
            NodeKind::Atom => {
                let text = self.text_of(id);
                match Keyword::of(text) {
                    Some(Keyword::Not | Keyword::Or | Keyword::And | Keyword::Distinct) => {
                        self.error(
                            codes::KEYWORD_ARITY,
                            span,
                            format!("`{text}` needs arguments: write `({text} …)`"),
                        );
                        None
                    }
                    _ => self.sentence(id).map(Literal::Atom),
                }
            }
            NodeKind::List => {
                let node = *self.tree.node(id);
                let keyword = self
                    .tree
                    .items(id)
                    .next()
                    .filter(|&h| self.tree.kind(h) == NodeKind::Atom)
                    .and_then(|h| Keyword::of(self.text_of(h)));
                match keyword {
                    None | Some(Keyword::Rule) if !node.closed => None,
                    None => self.sentence(id).map(Literal::Atom),
                    Some(Keyword::Rule) => {
                        self.error(
                            codes::MISPLACED_RULE,
                            span,
                            "a rule cannot be nested inside another rule".into(),
                        )
                        .label = Some("a literal belongs here".into());
                        None
                    }
                    Some(keyword) => {
                        let items = self.list_items(id)?;
                        let args = &items[1..];
                        self.nested(|b| b.keyword_literal(keyword, args, span, items[0]))
                    }
                }
            }
            NodeKind::Variable | NodeKind::Comment => self.sentence(id).map(Literal::Atom),
        }
    }

    fn keyword_literal(
        &mut self,
        keyword: Keyword,
        args: &[NodeId],
        span: Span,
        keyword_node: NodeId,
    ) -> Option<Literal<'a>> {
        let expected = match keyword {
            Keyword::Not => Some(1),
            Keyword::Distinct => Some(2),
            _ => None,
        };
        if let Some(n) = expected
            && args.len() != n
        {
            let word = self.text_of(keyword_node);
            self.error(
                codes::KEYWORD_ARITY,
                span,
                format!(
                    "`{word}` takes exactly {} argument{}, found {}",
                    n,
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            return None;
        }
        match keyword {
            Keyword::Not => {
                let arg = self.literal(args[0])?;
                Some(Literal::Not {
                    arg: Box::new(arg),
                    span,
                })
            }
            Keyword::Distinct => {
                let left = self.term(args[0]);
                let right = self.term(args[1]);
                Some(Literal::Distinct {
                    left: left?,
                    right: right?,
                    span,
                })
            }
            Keyword::Or | Keyword::And => {
                let mut ok = true;
                let mut literals = Vec::with_capacity(args.len());
                for &arg in args {
                    match self.literal(arg) {
                        Some(l) => literals.push(l),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                Some(if keyword == Keyword::Or {
                    Literal::Or {
                        args: literals,
                        span,
                    }
                } else {
                    Literal::And {
                        args: literals,
                        span,
                    }
                })
            }
            Keyword::Rule => unreachable!("handled by the caller"),
        }
    }

    fn terms(&mut self, ids: &[NodeId]) -> Option<Box<[Term<'a>]>> {
        let mut ok = true;
        let mut terms = Vec::with_capacity(ids.len());
        for &id in ids {
            match self.term(id) {
                Some(t) => terms.push(t),
                None => ok = false,
            }
        }
        ok.then(|| terms.into_boxed_slice())
    }

    fn term(&mut self, id: NodeId) -> Option<Term<'a>> {
        let span = self.tree.span(id);
        match self.tree.kind(id) {
            NodeKind::Variable => {
                let name = self.name(id);
                if name.text.is_empty() {
                    self.error(
                        codes::EMPTY_VARIABLE,
                        span,
                        "a variable needs a name after `?`".into(),
                    );
                    return None;
                }
                Some(Term::Variable(name))
            }
            NodeKind::Atom => {
                let name = self.name(id);
                self.term_name(name)?;
                Some(Term::Constant(name))
            }
            NodeKind::List => {
                let node = *self.tree.node(id);
                if !node.closed {
                    return None;
                }
                let items = self.list_items(id)?;
                let head = items[0];
                match self.tree.kind(head) {
                    NodeKind::Atom | NodeKind::Variable => {
                        let name = self.name(head);
                        if !name.variable && Keyword::of(name.text) == Some(Keyword::Rule) {
                            self.error(
                                codes::MISPLACED_RULE,
                                span,
                                "a rule cannot be nested inside a term".into(),
                            )
                            .label = Some("a term belongs here".into());
                            return None;
                        }
                        let args = self.nested(|b| b.terms(&items[1..]))?;
                        Some(Term::Function { name, args, span })
                    }
                    _ => {
                        self.list_as_name(head);
                        None
                    }
                }
            }
            NodeKind::Comment => unreachable!("comments are skipped"),
        }
    }

    /// Checks a name used as a constant or a function inside a term. The logical keywords are
    /// readable there (some real games use `distinct` as a function name by mistake); the
    /// checker reports them. Only `<=` has no reading.
    fn term_name(&mut self, name: Name<'a>) -> Option<()> {
        if Keyword::of(name.text) == Some(Keyword::Rule) {
            self.error(
                codes::MISPLACED_RULE,
                name.span,
                "`<=` cannot be used inside a term".into(),
            )
            .label = Some("a term belongs here".into());
            return None;
        }
        Some(())
    }
}
