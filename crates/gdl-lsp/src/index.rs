//! What a document's names are, and where: every occurrence of a relation, function, constant
//! and variable, the items (facts and rules), and the semantic class of every token.
//!
//! Built from the prefix reading of the text (for an infix document, from its conversion to
//! prefix, with every place mapped back into the infix text). Names are compared as GDL
//! compares them, without regard to ASCII letter case; a relation or a function is a name with
//! an arity, as the checker has it; a variable belongs to its item.

use std::collections::HashMap;

use gdl_check::Reserved;
use gdl_syntax::ast::{Keyword, is_number};
use gdl_syntax::cst::{NodeId, NodeKind, Tree};
use gdl_syntax::gdl3::Knows;
use gdl_syntax::{Item, Literal, Name, Sentence, Span, Term};

/// What a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    Relation,
    Function,
    Constant,
    Variable,
}

/// A name in its namespace: relations and functions with their arity, variables with their
/// item.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymbolKey {
    pub kind: SymbolKind,
    /// Lower case.
    pub name: Box<str>,
    pub arity: u32,
    /// The item a variable belongs to (`u32::MAX` for the other kinds).
    pub scope: u32,
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub key: SymbolKey,
    /// The spelling of its first occurrence (the author's).
    pub spelling: Box<str>,
    /// Indices into [`Index::occurrences`], in text order.
    pub occurrences: Vec<u32>,
}

impl Symbol {
    /// A relation GDL gives a meaning to, with its own arity.
    pub fn distinguished(&self) -> Option<Reserved> {
        (self.key.kind == SymbolKind::Relation)
            .then(|| Reserved::of_name(&self.key.name))
            .flatten()
            .filter(|r| r.arity() == self.key.arity)
    }

    /// `name/arity` for relations and functions, the spelling otherwise.
    pub fn describe(&self) -> String {
        match self.key.kind {
            SymbolKind::Relation | SymbolKind::Function => {
                format!("{}/{}", self.spelling, self.key.arity)
            }
            SymbolKind::Constant => self.spelling.to_string(),
            SymbolKind::Variable => format!("?{}", self.spelling),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Occurrence {
    /// In the document (for a variable, with its `?`).
    pub span: Span,
    pub symbol: u32,
    pub item: u32,
    /// A relation in the head of its item; a function or constant inside a head; a variable in
    /// a positive body literal (where it is bound).
    pub defining: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct ItemInfo {
    pub span: Span,
    /// The relation of its head (none for a variable in its place).
    pub head: Option<u32>,
    pub rule: bool,
}

/// How places in the indexed prefix text become places in the document.
pub trait Places {
    /// The place of a name, or `None` when it has none of its own (a piece a conversion
    /// added).
    fn name(&self, span: Span) -> Option<Span>;
    /// The place of a whole form.
    fn cover(&self, span: Span) -> Span;
}

/// A prefix document: places are places.
pub struct Identity;

impl Places for Identity {
    fn name(&self, span: Span) -> Option<Span> {
        Some(span)
    }

    fn cover(&self, span: Span) -> Span {
        span
    }
}

/// The classes of semantic tokens, in the order of the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenClass {
    Keyword = 0,
    Relation = 1,
    Function = 2,
    Constant = 3,
    Variable = 4,
    Number = 5,
    Comment = 6,
}

/// Token modifiers, as bits in the order of the legend.
pub const MOD_DECLARATION: u32 = 1;
pub const MOD_DISTINGUISHED: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Span,
    pub class: TokenClass,
    pub modifiers: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Index {
    pub symbols: Vec<Symbol>,
    /// In text order.
    pub occurrences: Vec<Occurrence>,
    /// In text order.
    pub items: Vec<ItemInfo>,
    /// In text order, not overlapping.
    pub tokens: Vec<Token>,
    keys: HashMap<SymbolKey, u32>,
}

impl Index {
    /// Indexes a prefix text; `places` takes its places to the document's.
    pub fn build(text: &str, places: &dyn Places) -> Index {
        let parse = gdl_syntax::parse(text);
        let mut builder = Builder {
            index: Index::default(),
            places,
            tokens: HashMap::new(),
        };
        builder.cst_tokens(&parse.tree, text);
        for (k, item) in parse.description.items.iter().enumerate() {
            builder.item(k as u32, item);
        }
        let Builder {
            mut index, tokens, ..
        } = builder;
        index.occurrences.sort_by_key(|o| o.span.start);
        for (k, occurrence) in index.occurrences.iter().enumerate() {
            index.symbols[occurrence.symbol as usize]
                .occurrences
                .push(k as u32);
        }
        let mut tokens: Vec<Token> = tokens.into_values().collect();
        tokens.sort_by_key(|t| t.span.start);
        // Mapped places can coincide (an infix call and its name): keep the first of each.
        tokens.dedup_by(|b, a| b.span.start < a.span.end);
        index.tokens = tokens;
        index
    }

    pub fn symbol(&self, id: u32) -> &Symbol {
        &self.symbols[id as usize]
    }

    pub fn lookup(&self, key: &SymbolKey) -> Option<u32> {
        self.keys.get(key).copied()
    }

    /// The occurrence at byte `offset` (a cursor just after a name is on it).
    pub fn occurrence_at(&self, offset: u32) -> Option<&Occurrence> {
        let after = self.occurrences.partition_point(|o| o.span.start <= offset);
        self.occurrences[..after]
            .iter()
            .rev()
            .take(2)
            .find(|o| o.span.start <= offset && offset <= o.span.end)
    }

    /// The item whose text contains `offset` (items are in text order, numbered as the
    /// occurrences' `item`).
    pub fn item_at(&self, offset: u32) -> Option<u32> {
        let after = self.items.partition_point(|i| i.span.start <= offset);
        let k = after.checked_sub(1)?;
        (offset <= self.items[k].span.end).then_some(k as u32)
    }

    /// The symbols of a kind, in order of first occurrence.
    pub fn symbols_of(&self, kind: SymbolKind) -> impl Iterator<Item = (u32, &Symbol)> {
        self.symbols
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.key.kind == kind && !s.occurrences.is_empty())
            .map(|(k, s)| (k as u32, s))
    }

    /// The occurrences of a symbol.
    pub fn occurrences_of(&self, symbol: u32) -> impl Iterator<Item = &Occurrence> {
        self.symbols[symbol as usize]
            .occurrences
            .iter()
            .map(|&k| &self.occurrences[k as usize])
    }
}

struct Builder<'m> {
    index: Index,
    places: &'m dyn Places,
    tokens: HashMap<u32, Token>,
}

impl Builder<'_> {
    fn token(&mut self, span: Span, class: TokenClass, modifiers: u32) {
        if let Some(span) = self.places.name(span) {
            self.tokens.insert(
                span.start,
                Token {
                    span,
                    class,
                    modifiers,
                },
            );
        }
    }

    /// What the tree alone tells: comments, variables, numbers, and the keywords that open a
    /// list. The GDL reading refines the rest, where the form could be read.
    fn cst_tokens(&mut self, tree: &Tree, text: &str) {
        for id in 0..tree.len() as NodeId {
            let node = tree.node(id);
            match node.kind {
                NodeKind::Comment => self.token(node.span, TokenClass::Comment, 0),
                NodeKind::Variable => self.token(node.span, TokenClass::Variable, 0),
                NodeKind::Atom if is_number(node.span.text(text)) => {
                    self.token(node.span, TokenClass::Number, 0)
                }
                NodeKind::Atom => {}
                NodeKind::List => {
                    if let Some(first) = tree.items(id).next()
                        && tree.kind(first) == NodeKind::Atom
                        && Keyword::of(tree.span(first).text(text)).is_some()
                    {
                        self.token(tree.span(first), TokenClass::Keyword, 0);
                    }
                }
            }
        }
    }

    fn symbol(&mut self, kind: SymbolKind, name: &Name<'_>, arity: u32, scope: u32) -> u32 {
        let key = SymbolKey {
            kind,
            name: name.text.to_ascii_lowercase().into(),
            arity,
            scope: if kind == SymbolKind::Variable {
                scope
            } else {
                u32::MAX
            },
        };
        if let Some(&id) = self.index.keys.get(&key) {
            return id;
        }
        let id = self.index.symbols.len() as u32;
        self.index.symbols.push(Symbol {
            key: key.clone(),
            spelling: name.text.into(),
            occurrences: Vec::new(),
        });
        self.index.keys.insert(key, id);
        id
    }

    fn occurrence(
        &mut self,
        kind: SymbolKind,
        name: &Name<'_>,
        arity: u32,
        item: u32,
        defining: bool,
    ) -> Option<u32> {
        let span = self.places.name(name.span)?;
        let symbol = self.symbol(kind, name, arity, item);
        self.index.occurrences.push(Occurrence {
            span,
            symbol,
            item,
            defining,
        });
        Some(symbol)
    }

    fn item(&mut self, k: u32, item: &Item<'_>) {
        let (head, rule) = match item {
            Item::Fact(sentence) => (sentence, false),
            Item::Rule(rule) => (&rule.head, true),
        };
        let head_symbol = self.sentence(k, head, true, false);
        if let Item::Rule(rule) = item {
            for literal in &rule.body {
                self.literal(k, literal, false);
            }
        }
        self.index.items.push(ItemInfo {
            span: self.places.cover(item.span()),
            head: head_symbol,
            rule,
        });
    }

    /// A sentence in a head (`head`) or in the body (`negated` when under a `not`). Returns the
    /// relation's symbol.
    fn sentence(
        &mut self,
        k: u32,
        sentence: &Sentence<'_>,
        head: bool,
        negated: bool,
    ) -> Option<u32> {
        let name = &sentence.name;
        if name.variable {
            self.occurrence(SymbolKind::Variable, name, 0, k, false);
            self.token(name.span, TokenClass::Variable, 0);
            for term in &sentence.args {
                self.term(k, term, head, !head && !negated);
            }
            return None;
        }
        if !head && let Some(knows) = Knows::of(sentence) {
            self.token(name.span, TokenClass::Keyword, 0);
            return self.knows(k, knows, negated);
        }
        let arity = sentence.args.len() as u32;
        let symbol = self.occurrence(SymbolKind::Relation, name, arity, k, head);
        let distinguished = Reserved::of_name(name.text).is_some_and(|r| r.arity() == arity);
        let mut modifiers = if head { MOD_DECLARATION } else { 0 };
        if distinguished {
            modifiers |= MOD_DISTINGUISHED;
        }
        self.token(name.span, TokenClass::Relation, modifiers);
        for term in &sentence.args {
            self.term(k, term, head, !head && !negated);
        }
        symbol
    }

    /// GDL-III's `(knows R P)` or `(knows P)` in a body: the keyword, the role as a term, and
    /// the proposition as the sentence it stands for (its name a relation, not a function).
    fn knows(&mut self, k: u32, knows: Knows<'_, '_>, negated: bool) -> Option<u32> {
        if let Some(role) = knows.role {
            self.term(k, role, false, !negated);
        }
        match knows.sentence() {
            Some(proposition) => {
                self.sentence(k, &proposition, false, negated);
            }
            None => self.term(k, knows.proposition, false, !negated),
        }
        None
    }

    fn literal(&mut self, k: u32, literal: &Literal<'_>, negated: bool) {
        match literal {
            Literal::Atom(sentence) => {
                self.sentence(k, sentence, false, negated);
            }
            Literal::Not { arg, .. } => self.literal(k, arg, true),
            Literal::Distinct { left, right, .. } => {
                self.term(k, left, false, false);
                self.term(k, right, false, false);
            }
            Literal::Or { args, .. } | Literal::And { args, .. } => {
                for arg in args {
                    self.literal(k, arg, negated);
                }
            }
        }
    }

    /// A term in a head (`head`) or in a literal that binds its variables (`binding`).
    fn term(&mut self, k: u32, term: &Term<'_>, head: bool, binding: bool) {
        // Terms nest as deeply as the reader allows (`MAX_DEPTH`): recursion is bounded.
        match term {
            Term::Variable(name) => {
                self.occurrence(SymbolKind::Variable, name, 0, k, binding);
                self.token(name.span, TokenClass::Variable, 0);
            }
            Term::Constant(name) => {
                if is_number(name.text) {
                    self.token(name.span, TokenClass::Number, 0);
                } else {
                    self.occurrence(SymbolKind::Constant, name, 0, k, head);
                    let modifiers = if head { MOD_DECLARATION } else { 0 };
                    self.token(name.span, TokenClass::Constant, modifiers);
                }
            }
            Term::Function { name, args, .. } => {
                if name.variable {
                    self.occurrence(SymbolKind::Variable, name, 0, k, false);
                    self.token(name.span, TokenClass::Variable, 0);
                } else {
                    let arity = args.len() as u32;
                    self.occurrence(SymbolKind::Function, name, arity, k, head);
                    let modifiers = if head { MOD_DECLARATION } else { 0 };
                    self.token(name.span, TokenClass::Function, modifiers);
                }
                for arg in args {
                    self.term(k, arg, head, binding);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(text: &str) -> Vec<(&str, TokenClass, u32)> {
        let index = Index::build(text, &Identity);
        index
            .tokens
            .iter()
            .map(|t| (t.span.text(text), t.class, t.modifiers))
            .collect()
    }

    #[test]
    fn tokens_of_every_class() {
        let text = "; c\n(role x)\n(<= (legal ?r (mark 1)) (role ?r) (not (p ?r)))";
        use TokenClass::*;
        assert_eq!(
            classes(text),
            vec![
                ("; c", Comment, 0),
                ("role", Relation, MOD_DECLARATION | MOD_DISTINGUISHED),
                ("x", Constant, MOD_DECLARATION),
                ("<=", Keyword, 0),
                ("legal", Relation, MOD_DECLARATION | MOD_DISTINGUISHED),
                ("?r", Variable, 0),
                ("mark", Function, MOD_DECLARATION),
                ("1", Number, 0),
                ("role", Relation, MOD_DISTINGUISHED),
                ("?r", Variable, 0),
                ("not", Keyword, 0),
                ("p", Relation, 0),
                ("?r", Variable, 0),
            ]
        );
    }

    #[test]
    fn knows_is_a_keyword_and_its_proposition_a_relation() {
        use TokenClass::*;
        let text = "(<= won (knows ?r (secret ?n)) (not (knows (secret 3))))";
        assert_eq!(
            classes(text),
            vec![
                ("<=", Keyword, 0),
                ("won", Relation, MOD_DECLARATION),
                ("knows", Keyword, 0),
                ("?r", Variable, 0),
                ("secret", Relation, 0),
                ("?n", Variable, 0),
                ("not", Keyword, 0),
                ("knows", Keyword, 0),
                ("secret", Relation, 0),
                ("3", Number, 0),
            ]
        );
        let index = Index::build(text, &Identity);
        let secret = index
            .lookup(&SymbolKey {
                kind: SymbolKind::Relation,
                name: "secret".into(),
                arity: 1,
                scope: u32::MAX,
            })
            .expect("secret/1 is a relation");
        assert_eq!(index.occurrences_of(secret).count(), 2);
        let knows = SymbolKey {
            kind: SymbolKind::Relation,
            name: "knows".into(),
            arity: 2,
            scope: u32::MAX,
        };
        assert!(index.lookup(&knows).is_none(), "knows is no relation");
    }

    #[test]
    fn forms_with_errors_still_get_what_the_tree_tells() {
        use TokenClass::*;
        assert_eq!(
            classes("(<= (p ?x) ; open\n"),
            vec![
                ("<=", Keyword, 0),
                ("?x", Variable, 0),
                ("; open", Comment, 0)
            ]
        );
    }

    #[test]
    fn symbols_are_case_insensitive_and_variables_belong_to_their_rule() {
        let text = "(<= (P ?X) (q ?x)) (<= (p ?x) (Q ?x)) (p 1 2)";
        let index = Index::build(text, &Identity);
        let p1 = index
            .lookup(&SymbolKey {
                kind: SymbolKind::Relation,
                name: "p".into(),
                arity: 1,
                scope: u32::MAX,
            })
            .unwrap();
        assert_eq!(index.symbol(p1).spelling.as_ref(), "P");
        assert_eq!(index.occurrences_of(p1).count(), 2);
        assert!(index.occurrences_of(p1).all(|o| o.defining));
        let x0 = index.occurrence_at(7).unwrap();
        assert_eq!(index.symbol(x0.symbol).key.kind, SymbolKind::Variable);
        assert_eq!(index.occurrences_of(x0.symbol).count(), 2);
        assert_eq!(index.items.len(), 3);
        assert_eq!(index.item_at(20), Some(1));
    }
}
