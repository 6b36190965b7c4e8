//! A walk over the GDL items of a description, for the checks that look at how things are
//! written rather than at what they mean.

use gdl_syntax::ast::Keyword;
use gdl_syntax::gdl3::{self, Knows};
use gdl_syntax::{Description, Item, Literal, Sentence, Term};

/// Where a sentence stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A top-level fact.
    Fact,
    /// The head of a rule.
    Head,
    /// A literal of a rule body; `negated` when under a `not`.
    Body { negated: bool },
}

pub trait Visitor<'a> {
    fn sentence(&mut self, _sentence: &Sentence<'a>, _place: Place, _item: usize) {}
    /// A term; `depth` is 0 for an argument of a sentence or a `distinct`, 1 for an argument of
    /// a function at depth 0, and so on.
    fn term(&mut self, _term: &Term<'a>, _depth: usize, _item: usize) {}
    fn literal(&mut self, _literal: &Literal<'a>, _negated: bool, _item: usize) {}
}

pub fn walk<'a>(description: &Description<'a>, visitor: &mut impl Visitor<'a>) {
    for (index, item) in description.items.iter().enumerate() {
        match item {
            Item::Fact(sentence) => sentence_and_terms(sentence, Place::Fact, index, visitor),
            Item::Rule(rule) => {
                sentence_and_terms(&rule.head, Place::Head, index, visitor);
                for literal in &rule.body {
                    walk_literal(literal, false, index, visitor);
                }
            }
        }
    }
}

fn sentence_and_terms<'a>(
    sentence: &Sentence<'a>,
    place: Place,
    item: usize,
    visitor: &mut impl Visitor<'a>,
) {
    visitor.sentence(sentence, place, item);
    // GDL-III's `(knows R P)` holds a proposition where a term stands: its relation is a
    // relation, not a function, and its arguments are arguments of a sentence. (Outside a body
    // `knows` is an error, E018, but its proposition is read the same way.)
    if !sentence.name.variable
        && gdl3::is_knows(sentence.name.text)
        && Knows::of(sentence).is_none()
    {
        // `knows` with more than two arguments (E017): which is the proposition is unknown.
        return;
    }
    if let Some(knows) = Knows::of(sentence)
        && let Some(proposition) = knows.sentence()
    {
        if let Some(role) = knows.role {
            walk_term(role, 0, item, visitor);
        }
        // A literal in its place, `(knows r (not p))`, is E017; what is inside has no reading.
        if Keyword::of(proposition.name.text).is_some() {
            return;
        }
        return sentence_and_terms(&proposition, place, item, visitor);
    }
    for term in &sentence.args {
        walk_term(term, 0, item, visitor);
    }
}

fn walk_term<'a>(term: &Term<'a>, depth: usize, item: usize, visitor: &mut impl Visitor<'a>) {
    visitor.term(term, depth, item);
    if let Term::Function { args, .. } = term {
        for arg in args {
            walk_term(arg, depth + 1, item, visitor);
        }
    }
}

fn walk_literal<'a>(
    literal: &Literal<'a>,
    negated: bool,
    item: usize,
    visitor: &mut impl Visitor<'a>,
) {
    visitor.literal(literal, negated, item);
    match literal {
        Literal::Atom(sentence) => {
            sentence_and_terms(sentence, Place::Body { negated }, item, visitor)
        }
        Literal::Not { arg, .. } => walk_literal(arg, true, item, visitor),
        Literal::Distinct { left, right, .. } => {
            walk_term(left, 0, item, visitor);
            walk_term(right, 0, item, visitor);
        }
        Literal::Or { args, .. } | Literal::And { args, .. } => {
            for arg in args {
                walk_literal(arg, negated, item, visitor);
            }
        }
    }
}
