//! The program a description means: interned relations, terms, rules.
//!
//! Lowering keeps the structure of rule bodies (`not`, `or`, `and`, `distinct`, nested as
//! written) and their places in the text; engines expand or flatten it as they prefer (see
//! [`Rule::branches`]). A relation is a name *and* an arity: `(zero 0 0)` and `(zero 0)` are two
//! relations, as `001` requires engines to treat them.

use gdl_syntax::ast;
use gdl_syntax::{Description, Item, Span};
use rustc_hash::FxHashMap;

use crate::symbols::{Symbol, Symbols};

/// Index of a relation in [`Program::relations`].
pub type RelId = u32;

/// A relation: a name with an arity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Relation {
    pub name: Symbol,
    pub arity: u32,
}

/// The relations GDL gives a meaning to (§6 of the specification, `base`/`input` from the
/// notes, `sees` from GDL-II). A name is distinguished only with its own arity: a two-argument
/// `next` is an ordinary relation (and a diagnostic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reserved {
    Role,
    Init,
    True,
    Does,
    Next,
    Legal,
    Goal,
    Terminal,
    Base,
    Input,
    Sees,
}

impl Reserved {
    pub const ALL: [Reserved; 11] = [
        Reserved::Role,
        Reserved::Init,
        Reserved::True,
        Reserved::Does,
        Reserved::Next,
        Reserved::Legal,
        Reserved::Goal,
        Reserved::Terminal,
        Reserved::Base,
        Reserved::Input,
        Reserved::Sees,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reserved::Role => "role",
            Reserved::Init => "init",
            Reserved::True => "true",
            Reserved::Does => "does",
            Reserved::Next => "next",
            Reserved::Legal => "legal",
            Reserved::Goal => "goal",
            Reserved::Terminal => "terminal",
            Reserved::Base => "base",
            Reserved::Input => "input",
            Reserved::Sees => "sees",
        }
    }

    pub fn arity(self) -> u32 {
        match self {
            Reserved::Terminal => 0,
            Reserved::Role | Reserved::Init | Reserved::True | Reserved::Next | Reserved::Base => 1,
            Reserved::Does
            | Reserved::Legal
            | Reserved::Goal
            | Reserved::Input
            | Reserved::Sees => 2,
        }
    }

    /// The reserved word spelled `name` (any case), whatever its arity.
    pub fn of_name(name: &str) -> Option<Reserved> {
        Reserved::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(name))
    }
}

/// A term of a rule: variables are numbered per rule (see [`Rule::vars`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Var(u32),
    Const(Symbol),
    /// A function applied to arguments; `(f)` is `Fn(f, [])`, distinct from `Const(f)`.
    Fn(Symbol, Box<[Term]>),
}

impl Term {
    pub fn is_ground(&self) -> bool {
        match self {
            Term::Var(_) => false,
            Term::Const(_) => true,
            Term::Fn(_, args) => args.iter().all(Term::is_ground),
        }
    }

    /// Calls `f` on every variable, left to right.
    pub fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            Term::Var(v) => f(*v),
            Term::Const(_) => {}
            Term::Fn(_, args) => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }
}

/// A relation applied to terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    pub rel: RelId,
    pub args: Box<[Term]>,
    pub span: Span,
}

impl Atom {
    pub fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        self.args.iter().for_each(|a| a.for_each_var(f));
    }
}

/// A body literal, nested as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Atom(Atom),
    Not(Box<Literal>, Span),
    Distinct(Term, Term, Span),
    Or(Vec<Literal>, Span),
    And(Vec<Literal>, Span),
}

impl Literal {
    pub fn span(&self) -> Span {
        match self {
            Literal::Atom(a) => a.span,
            Literal::Not(_, s)
            | Literal::Distinct(_, _, s)
            | Literal::Or(_, s)
            | Literal::And(_, s) => *s,
        }
    }

    /// Calls `f` on every atom inside, with whether it is under a `not`.
    pub fn for_each_atom<'a>(&'a self, negated: bool, f: &mut impl FnMut(&'a Atom, bool)) {
        match self {
            Literal::Atom(a) => f(a, negated),
            Literal::Not(inner, _) => inner.for_each_atom(true, f),
            Literal::Distinct(..) => {}
            Literal::Or(args, _) | Literal::And(args, _) => {
                args.iter().for_each(|l| l.for_each_atom(negated, f))
            }
        }
    }

    pub fn for_each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            Literal::Atom(a) => a.for_each_var(f),
            Literal::Not(inner, _) => inner.for_each_var(f),
            Literal::Distinct(a, b, _) => {
                a.for_each_var(f);
                b.for_each_var(f);
            }
            Literal::Or(args, _) | Literal::And(args, _) => {
                args.iter().for_each(|l| l.for_each_var(f))
            }
        }
    }
}

/// A variable of a rule: its case-folded name and every place it occurs, in text order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    pub name: Symbol,
    pub spans: Vec<Span>,
}

/// A fact or a rule. A fact is a rule with an empty body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub head: Atom,
    pub body: Box<[Literal]>,
    pub vars: Box<[Var]>,
    pub span: Span,
    /// Written as a fact rather than as `(<= head …)`.
    pub fact: bool,
}

/// One disjunct of a rule body with its `or`s and `and`s expanded: a conjunction of literals
/// that are atoms, negations (kept whole) or `distinct`s.
pub type Branch<'a> = Vec<&'a Literal>;

impl Rule {
    /// The bodies of the rules without `or` that this rule stands for (§5.3: "after converting a
    /// rule with disjunction into a set of rules without disjunction"), or `None` when there
    /// would be more than `limit` of them.
    pub fn branches(&self, limit: usize) -> Option<Vec<Branch<'_>>> {
        let mut branches: Vec<Branch<'_>> = vec![Vec::new()];
        for literal in &self.body {
            branches = expand(literal, branches, limit)?;
        }
        Some(branches)
    }
}

fn expand<'a>(
    literal: &'a Literal,
    branches: Vec<Branch<'a>>,
    limit: usize,
) -> Option<Vec<Branch<'a>>> {
    match literal {
        Literal::Or(args, _) => {
            let mut out = Vec::new();
            for arg in args {
                out.extend(expand(arg, branches.clone(), limit)?);
                if out.len() > limit {
                    return None;
                }
            }
            Some(out)
        }
        Literal::And(args, _) => {
            let mut current = branches;
            for arg in args {
                current = expand(arg, current, limit)?;
            }
            Some(current)
        }
        _ => Some(
            branches
                .into_iter()
                .map(|mut b| {
                    b.push(literal);
                    b
                })
                .collect(),
        ),
    }
}

/// A lowered game description.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub symbols: Symbols,
    pub relations: Vec<Relation>,
    rel_index: FxHashMap<Relation, RelId>,
    /// Facts and rules in the order of the description.
    pub rules: Vec<Rule>,
}

impl Program {
    /// The id of a relation, if the program mentions it.
    pub fn relation(&self, name: &str, arity: u32) -> Option<RelId> {
        let name = self.symbols.get(name)?;
        self.rel_index.get(&Relation { name, arity }).copied()
    }

    /// The id of a distinguished relation (with its own arity), if the program mentions it.
    pub fn reserved(&self, reserved: Reserved) -> Option<RelId> {
        self.relation(reserved.name(), reserved.arity())
    }

    /// Which distinguished relation `rel` is, if any.
    pub fn reserved_of(&self, rel: RelId) -> Option<Reserved> {
        let relation = self.relations[rel as usize];
        Reserved::of_name(self.symbols.name(relation.name)).filter(|r| r.arity() == relation.arity)
    }

    /// `name/arity` of a relation, for messages.
    pub fn describe(&self, rel: RelId) -> String {
        let r = self.relations[rel as usize];
        format!("{}/{}", self.symbols.name(r.name), r.arity)
    }

    pub fn intern_relation(&mut self, name: Symbol, arity: u32) -> RelId {
        let relation = Relation { name, arity };
        if let Some(&id) = self.rel_index.get(&relation) {
            return id;
        }
        let id = self.relations.len() as RelId;
        self.relations.push(relation);
        self.rel_index.insert(relation, id);
        id
    }

    /// Writes a term of `rule` as canonical KIF (variables as `?name`).
    pub fn term_text(&self, rule: &Rule, term: &Term) -> String {
        let mut out = String::new();
        self.write_term(rule, term, &mut out);
        out
    }

    fn write_term(&self, rule: &Rule, term: &Term, out: &mut String) {
        match term {
            Term::Var(v) => {
                out.push('?');
                out.push_str(self.symbols.name(rule.vars[*v as usize].name));
            }
            Term::Const(c) => out.push_str(self.symbols.name(*c)),
            Term::Fn(f, args) => {
                out.push('(');
                out.push_str(self.symbols.name(*f));
                for a in args.iter() {
                    out.push(' ');
                    self.write_term(rule, a, out);
                }
                out.push(')');
            }
        }
    }

    /// Writes an atom of `rule` as canonical KIF.
    pub fn atom_text(&self, rule: &Rule, atom: &Atom) -> String {
        let relation = self.relations[atom.rel as usize];
        let name = self.symbols.name(relation.name);
        if atom.args.is_empty() {
            return name.to_string();
        }
        let mut out = format!("({name}");
        for a in &atom.args {
            out.push(' ');
            self.write_term(rule, a, &mut out);
        }
        out.push(')');
        out
    }
}

/// Lowers a description. Items that have no meaning as GDL (a variable in the place of a
/// relation or function name) are left out; the checks report them.
pub fn lower(description: &Description<'_>) -> Program {
    let mut program = Program::default();
    program.rules.reserve_exact(description.items.len());
    for item in &description.items {
        lower_item(&mut program, item);
    }
    program
}

/// Lowers a description, dropping each item once it is lowered: a large description is not
/// held twice.
pub fn lower_owned(description: Description<'_>) -> Program {
    let mut program = Program::default();
    program.rules.reserve_exact(description.items.len());
    for item in description.items {
        lower_item(&mut program, &item);
    }
    program
}

fn lower_item(program: &mut Program, item: &Item<'_>) {
    {
        let mut lowering = RuleLowering {
            program,
            vars: Vec::new(),
            ok: true,
        };
        let (head, body, span, fact) = match item {
            Item::Fact(sentence) => (lowering.atom(sentence), Vec::new(), sentence.span, true),
            Item::Rule(rule) => {
                let head = lowering.atom(&rule.head);
                let body = rule.body.iter().map(|l| lowering.literal(l)).collect();
                (head, body, rule.span, false)
            }
        };
        if lowering.ok {
            let vars = lowering.vars;
            program.rules.push(Rule {
                head,
                body: body.into_boxed_slice(),
                vars: vars.into_boxed_slice(),
                span,
                fact,
            });
        }
    }
}

struct RuleLowering<'p> {
    program: &'p mut Program,
    vars: Vec<Var>,
    ok: bool,
}

impl RuleLowering<'_> {
    fn symbol(&mut self, name: &ast::Name<'_>) -> Symbol {
        if name.variable {
            self.ok = false;
        }
        self.program.symbols.intern(name.text)
    }

    fn atom(&mut self, sentence: &ast::Sentence<'_>) -> Atom {
        let name = self.symbol(&sentence.name);
        let rel = self
            .program
            .intern_relation(name, sentence.args.len() as u32);
        let args = sentence.args.iter().map(|t| self.term(t)).collect();
        Atom {
            rel,
            args,
            span: sentence.span,
        }
    }

    fn term(&mut self, term: &ast::Term<'_>) -> Term {
        match term {
            ast::Term::Variable(name) => {
                let symbol = self.program.symbols.intern(name.text);
                let index = match self.vars.iter().position(|v| v.name == symbol) {
                    Some(index) => index,
                    None => {
                        self.vars.push(Var {
                            name: symbol,
                            spans: Vec::new(),
                        });
                        self.vars.len() - 1
                    }
                };
                self.vars[index].spans.push(name.span);
                Term::Var(index as u32)
            }
            ast::Term::Constant(name) => Term::Const(self.symbol(name)),
            ast::Term::Function { name, args, .. } => {
                let f = self.symbol(name);
                Term::Fn(f, args.iter().map(|a| self.term(a)).collect())
            }
        }
    }

    fn literal(&mut self, literal: &ast::Literal<'_>) -> Literal {
        match literal {
            ast::Literal::Atom(sentence) => Literal::Atom(self.atom(sentence)),
            ast::Literal::Not { arg, span } => Literal::Not(Box::new(self.literal(arg)), *span),
            ast::Literal::Distinct { left, right, span } => {
                Literal::Distinct(self.term(left), self.term(right), *span)
            }
            ast::Literal::Or { args, span } => {
                Literal::Or(args.iter().map(|l| self.literal(l)).collect(), *span)
            }
            ast::Literal::And { args, span } => {
                Literal::And(args.iter().map(|l| self.literal(l)).collect(), *span)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        let parsed = gdl_syntax::parse(text);
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        lower(&parsed.description)
    }

    #[test]
    fn relations_are_name_and_arity() {
        let p = program("(zero 0 0) (zero 0) (ZERO 1) terminal (terminal)");
        assert_eq!(p.relations.len(), 3);
        assert_eq!(p.relation("zero", 1), p.relation("Zero", 1));
        assert_ne!(p.relation("zero", 1), p.relation("zero", 2));
        assert_eq!(p.rules[3].head.rel, p.rules[4].head.rel);
        assert_eq!(p.reserved(Reserved::Terminal), p.relation("terminal", 0));
    }

    #[test]
    fn variables_are_numbered_per_rule_case_insensitively() {
        let p = program("(<= (p ?X ?y) (q ?x (f ?Y)))");
        let rule = &p.rules[0];
        assert_eq!(rule.vars.len(), 2);
        assert_eq!(rule.vars[0].spans.len(), 2);
        assert_eq!(p.atom_text(rule, &rule.head), "(p ?x ?y)");
    }

    #[test]
    fn or_expands_into_branches() {
        let p = program("(<= p (a) (or b (and c (or d e))) (not (or f g)))");
        let branches = p.rules[0].branches(100).unwrap();
        assert_eq!(branches.len(), 3);
        assert!(branches.iter().all(|b| b.len() >= 3));
        assert_eq!(p.rules[0].branches(2), None);
    }

    #[test]
    fn zero_argument_function_differs_from_constant() {
        let p = program("(p f) (p (f))");
        assert_ne!(p.rules[0].head.args[0], p.rules[1].head.args[0]);
    }

    #[test]
    fn variable_names_leave_the_item_out() {
        let p = program("(p a) (<= (q ?x) (?r ?x))");
        assert_eq!(p.rules.len(), 1);
    }
}
