//! Ground terms, hash-consed: each distinct term is stored once and named by a [`TermId`], so
//! comparing terms is comparing integers, and a state is a sorted list of integers.

use std::hash::{BuildHasher, Hash, Hasher};

use gdl_check::{Symbol, Symbols};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// A ground term in a [`TermStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TermId(pub u32);

/// What a term is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term<'a> {
    /// An object constant, such as `b` or `100`.
    Const(Symbol),
    /// A function applied to arguments; `(f)` has no arguments and differs from `f`.
    Fn(Symbol, &'a [TermId]),
}

#[derive(Clone, Copy, Debug)]
struct Node {
    symbol: Symbol,
    /// `u32::MAX` for a constant.
    first_arg: u32,
    arg_count: u32,
    depth: u32,
}

const CONSTANT: u32 = u32::MAX;

/// Why a text is not a ground term ([`TermStore::parse`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TermError {
    /// The text does not read as S-expressions (the syntax diagnostic's message).
    #[error("{0}")]
    Syntax(String),
    #[error("expected a term, found nothing")]
    Nothing,
    /// More than one term (how many).
    #[error("expected one term, found {0}")]
    Several(usize),
    #[error("term nested more than {} levels deep", gdl_syntax::ast::MAX_DEPTH)]
    TooDeep,
    /// A variable (its text) where a ground term must be.
    #[error("`{0}` is a variable, not a ground term")]
    Variable(String),
    #[error("a comment is not a term")]
    Comment,
    #[error("`()` is not a term")]
    EmptyList,
    /// A list whose head (its text) is not an atom.
    #[error("`{0}` is not a function name")]
    NotAFunctionName(String),
}

/// The store of ground terms.
#[derive(Clone, Default)]
pub struct TermStore {
    nodes: Vec<Node>,
    args: Vec<TermId>,
    table: HashTable<TermId>,
    hasher: FxBuildHasher,
}

impl std::fmt::Debug for TermStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TermStore({} terms)", self.nodes.len())
    }
}

/// The arguments of a node (`None` for a constant) in the store's argument list.
fn node_args<'a>(args: &'a [TermId], node: &Node) -> Option<&'a [TermId]> {
    (node.first_arg != CONSTANT)
        .then(|| &args[node.first_arg as usize..(node.first_arg + node.arg_count) as usize])
}

/// The hash of a term from its parts (a constant has no argument list).
fn hash_term(hasher: &FxBuildHasher, symbol: Symbol, args: Option<&[TermId]>) -> u64 {
    let mut h = hasher.build_hasher();
    symbol.hash(&mut h);
    match args {
        None => u32::MAX.hash(&mut h),
        Some(args) => {
            args.len().hash(&mut h);
            for a in args {
                a.0.hash(&mut h);
            }
        }
    }
    h.finish()
}

impl TermStore {
    pub fn new() -> TermStore {
        TermStore::default()
    }

    fn hash_of(&self, symbol: Symbol, args: Option<&[TermId]>) -> u64 {
        hash_term(&self.hasher, symbol, args)
    }

    fn node_args(&self, node: &Node) -> Option<&[TermId]> {
        node_args(&self.args, node)
    }

    /// The term with these parts and hash, if it exists.
    fn find_hashed(&self, hash: u64, symbol: Symbol, args: Option<&[TermId]>) -> Option<TermId> {
        self.table
            .find(hash, |&id| {
                let node = &self.nodes[id.0 as usize];
                node.symbol == symbol && self.node_args(node) == args
            })
            .copied()
    }

    fn intern(&mut self, symbol: Symbol, args: Option<&[TermId]>) -> TermId {
        let hash = self.hash_of(symbol, args);
        if let Some(id) = self.find_hashed(hash, symbol, args) {
            return id;
        }
        let id = TermId(self.nodes.len() as u32);
        let node = match args {
            None => Node {
                symbol,
                first_arg: CONSTANT,
                arg_count: 0,
                depth: 0,
            },
            Some(args) => {
                let first_arg = self.args.len() as u32;
                let depth = 1 + args
                    .iter()
                    .map(|a| self.nodes[a.0 as usize].depth)
                    .max()
                    .unwrap_or(0);
                self.args.extend_from_slice(args);
                Node {
                    symbol,
                    first_arg,
                    arg_count: args.len() as u32,
                    depth,
                }
            }
        };
        self.nodes.push(node);
        let (nodes, args_store, hasher) = (&self.nodes, &self.args, &self.hasher);
        self.table.insert_unique(hash, id, |&other| {
            let node = &nodes[other.0 as usize];
            hash_term(hasher, node.symbol, node_args(args_store, node))
        });
        id
    }

    /// The constant `symbol`.
    pub fn constant(&mut self, symbol: Symbol) -> TermId {
        self.intern(symbol, None)
    }

    /// The function `symbol` applied to `args`.
    pub fn function(&mut self, symbol: Symbol, args: &[TermId]) -> TermId {
        self.intern(symbol, Some(args))
    }

    /// The term without creating it, if it exists.
    pub fn find(&self, symbol: Symbol, args: Option<&[TermId]>) -> Option<TermId> {
        self.find_hashed(self.hash_of(symbol, args), symbol, args)
    }

    pub fn get(&self, term: TermId) -> Term<'_> {
        let node = &self.nodes[term.0 as usize];
        match self.node_args(node) {
            None => Term::Const(node.symbol),
            Some(args) => Term::Fn(node.symbol, args),
        }
    }

    /// The constant or function symbol of a term.
    pub fn symbol(&self, term: TermId) -> Symbol {
        self.nodes[term.0 as usize].symbol
    }

    /// The arguments of a term (empty for a constant).
    pub fn args(&self, term: TermId) -> &[TermId] {
        self.node_args(&self.nodes[term.0 as usize]).unwrap_or(&[])
    }

    pub fn is_constant(&self, term: TermId) -> bool {
        self.nodes[term.0 as usize].first_arg == CONSTANT
    }

    /// Nesting depth: 0 for a constant, 1 for `(f a)`, …
    pub fn depth(&self, term: TermId) -> u32 {
        self.nodes[term.0 as usize].depth
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Canonical text: lower case, constants bare, `(f a b)` with single spaces, `(f)`.
    pub fn write(&self, symbols: &Symbols, term: TermId, out: &mut String) {
        self.write_with(symbols, term, out, Symbols::name);
    }

    /// The term in canonical text (see [`TermStore::write`]): what traces print and what
    /// comparisons that ignore letter case use.
    pub fn text(&self, symbols: &Symbols, term: TermId) -> String {
        let mut out = String::new();
        self.write(symbols, term, &mut out);
        out
    }

    /// The term as the rules spell it: the canonical layout with each name in the spelling it
    /// was first read with ([`Symbols::spelling`]). This is what is sent to other programs
    /// and recorded, since they compare symbols with their case.
    pub fn write_spelled(&self, symbols: &Symbols, term: TermId, out: &mut String) {
        self.write_with(symbols, term, out, Symbols::spelling);
    }

    /// The term as the rules spell it (see [`TermStore::write_spelled`]).
    pub fn spelled(&self, symbols: &Symbols, term: TermId) -> String {
        let mut out = String::new();
        self.write_spelled(symbols, term, &mut out);
        out
    }

    fn write_with(
        &self,
        symbols: &Symbols,
        term: TermId,
        out: &mut String,
        name: fn(&Symbols, gdl_check::Symbol) -> &str,
    ) {
        match self.get(term) {
            Term::Const(s) => out.push_str(name(symbols, s)),
            Term::Fn(f, args) => {
                out.push('(');
                out.push_str(name(symbols, f));
                for &a in args {
                    out.push(' ');
                    self.write_with(symbols, a, out, name);
                }
                out.push(')');
            }
        }
    }

    /// Reads a ground term written in KIF (`noop`, `(mark 1 2)`, any letter case), interning it.
    /// Returns the problem for anything else.
    pub fn parse(&mut self, symbols: &mut Symbols, text: &str) -> Result<TermId, TermError> {
        let (tree, diagnostics) = gdl_syntax::cst::parse_tree(text);
        if let Some(d) = diagnostics.first() {
            return Err(TermError::Syntax(d.message.clone()));
        }
        let items: Vec<_> = tree.top_items().collect();
        match items.as_slice() {
            [one] => self.intern_tree(symbols, &tree, text, *one),
            [] => Err(TermError::Nothing),
            _ => Err(TermError::Several(items.len())),
        }
    }

    /// Interns the ground term of a node of an S-expression tree.
    pub fn intern_tree(
        &mut self,
        symbols: &mut Symbols,
        tree: &gdl_syntax::cst::Tree,
        text: &str,
        node: gdl_syntax::cst::NodeId,
    ) -> Result<TermId, TermError> {
        self.intern_tree_at(symbols, tree, text, node, 0)
    }

    fn intern_tree_at(
        &mut self,
        symbols: &mut Symbols,
        tree: &gdl_syntax::cst::Tree,
        text: &str,
        node: gdl_syntax::cst::NodeId,
        depth: usize,
    ) -> Result<TermId, TermError> {
        use gdl_syntax::cst::NodeKind;
        if depth > gdl_syntax::ast::MAX_DEPTH {
            return Err(TermError::TooDeep);
        }
        let span = tree.span(node);
        match tree.kind(node) {
            NodeKind::Atom => Ok(self.constant(symbols.intern(span.text(text)))),
            NodeKind::Variable => Err(TermError::Variable(span.text(text).to_string())),
            NodeKind::Comment => Err(TermError::Comment),
            NodeKind::List => {
                let items: Vec<_> = tree.items(node).collect();
                let Some((&head, rest)) = items.split_first() else {
                    return Err(TermError::EmptyList);
                };
                if tree.kind(head) != NodeKind::Atom {
                    return Err(TermError::NotAFunctionName(
                        tree.span(head).text(text).to_string(),
                    ));
                }
                let f = symbols.intern(tree.span(head).text(text));
                let mut args = Vec::with_capacity(rest.len());
                for &arg in rest {
                    args.push(self.intern_tree_at(symbols, tree, text, arg, depth + 1)?);
                }
                Ok(self.function(f, &args))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_and_text() {
        let mut symbols = Symbols::new();
        let mut store = TermStore::new();
        let a = store.parse(&mut symbols, "(Cell 1 (F) b)").unwrap();
        let b = store.parse(&mut symbols, "(cell 1 (f) B)").unwrap();
        assert_eq!(a, b);
        assert_eq!(store.text(&symbols, a), "(cell 1 (f) b)");
        assert_eq!(store.spelled(&symbols, a), "(Cell 1 (F) b)");
        let f = store.parse(&mut symbols, "f").unwrap();
        let f0 = store.parse(&mut symbols, "(f)").unwrap();
        assert_ne!(f, f0);
        assert_eq!(store.depth(a), 2);
        assert!(store.parse(&mut symbols, "(mark ?x 1)").is_err());
        assert!(store.parse(&mut symbols, "(mark 1").is_err());
        assert!(store.parse(&mut symbols, "a b").is_err());
        let cell = symbols.get("cell").unwrap();
        assert_eq!(store.find(cell, Some(store.args(a))), Some(a));
    }
}
