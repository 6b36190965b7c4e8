//! Names: the same name with different arities, as a relation and as a function, or with
//! different capitalisation.

use std::borrow::Cow;
use std::hash::BuildHasher;

use gdl_syntax::{Diagnostic, Name, Sentence, Span, Term};
use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};
use smallvec::SmallVec;

use super::ItemsContext;
use super::walk::{Place, Visitor, walk};
use crate::codes;
use crate::program::Reserved;

/// A name in lower case, borrowed from the text unless it has upper-case letters.
fn folded(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// How a name is used. Most names have one arity and one spelling: those are kept inline, so
/// that a description of millions of facts costs no allocation per name.
#[derive(Default)]
struct Uses<'a> {
    /// (arity, first place) for each arity seen, in order of first use.
    relation: SmallVec<[(usize, Span); 1]>,
    function: SmallVec<[(usize, Span); 1]>,
    /// (spelling, first place) for each spelling seen.
    spellings: Spellings<'a>,
}

/// The spellings of a name, each with its first place.
type Spellings<'a> = SmallVec<[(&'a str, Span); 1]>;

#[derive(Default)]
struct NameVisitor<'a> {
    /// Every name (folded) with its uses, in order of first use.
    names: Vec<(Cow<'a, str>, Uses<'a>)>,
    /// Indices into `names`, by folded name.
    index: HashTable<u32>,
    hasher: FxBuildHasher,
    /// Spellings of variables in the current item.
    item: usize,
    variables: FxHashMap<Cow<'a, str>, Spellings<'a>>,
    variable_clashes: Vec<(&'a str, Span, &'a str, Span)>,
}

impl<'a> NameVisitor<'a> {
    fn entry(&mut self, name: &Name<'a>) -> &mut Uses<'a> {
        let key = folded(name.text);
        let hash = self.hasher.hash_one(&*key);
        let names = &self.names;
        let at = match self
            .index
            .find(hash, |&i| names[i as usize].0 == key)
            .copied()
        {
            Some(at) => at as usize,
            None => {
                let at = self.names.len();
                self.names.push((key, Uses::default()));
                let (names, hasher) = (&self.names, &self.hasher);
                self.index
                    .insert_unique(hash, at as u32, |&i| hasher.hash_one(&*names[i as usize].0));
                at
            }
        };
        let uses = &mut self.names[at].1;
        if !uses.spellings.iter().any(|(s, _)| *s == name.text) {
            uses.spellings.push((name.text, name.span));
        }
        uses
    }

    fn enter_item(&mut self, item: usize) {
        if item != self.item {
            self.item = item;
            self.variables.clear();
        }
    }
}

impl<'a> Visitor<'a> for NameVisitor<'a> {
    fn sentence(&mut self, sentence: &Sentence<'a>, _place: Place, item: usize) {
        self.enter_item(item);
        if sentence.name.variable {
            return;
        }
        let arity = sentence.args.len();
        let span = sentence.name.span;
        let uses = self.entry(&sentence.name);
        if !uses.relation.iter().any(|&(a, _)| a == arity) {
            uses.relation.push((arity, span));
        }
    }

    fn term(&mut self, term: &Term<'a>, _depth: usize, item: usize) {
        self.enter_item(item);
        match term {
            Term::Variable(name) => {
                let spellings = self.variables.entry(folded(name.text)).or_default();
                if let Some(&(first, first_span)) = spellings.first()
                    && !spellings.iter().any(|(s, _)| *s == name.text)
                {
                    self.variable_clashes
                        .push((first, first_span, name.text, name.span));
                }
                if !spellings.iter().any(|(s, _)| *s == name.text) {
                    spellings.push((name.text, name.span));
                }
            }
            // A constant only matters here for its spellings: one without letters (a number)
            // has one spelling, and a description of millions of numbers needs no entry for
            // each.
            Term::Constant(name) if !name.text.bytes().any(|b| b.is_ascii_alphabetic()) => {}
            Term::Constant(name) => {
                self.entry(name);
            }
            Term::Function { name, args, .. } => {
                if name.variable {
                    return;
                }
                let arity = args.len();
                let span = name.span;
                let uses = self.entry(name);
                if !uses.function.iter().any(|&(a, _)| a == arity) {
                    uses.function.push((arity, span));
                }
            }
        }
    }
}

pub fn check(cx: &ItemsContext<'_, '_>, out: &mut Vec<Diagnostic>) {
    let mut visitor = NameVisitor {
        item: usize::MAX,
        ..NameVisitor::default()
    };
    walk(cx.description, &mut visitor);
    for (key, uses) in &visitor.names {
        // GDL-III's `knows` has two forms, `(knows P)` and `(knows R P)`: two arities, one
        // keyword.
        let reserved = Reserved::of_name(key).is_some() || gdl_syntax::gdl3::is_knows(key);
        for (kind, arities) in [("relation", &uses.relation), ("function", &uses.function)] {
            if arities.len() > 1 && !(reserved && kind == "relation") {
                let (first_arity, first_span) = arities[0];
                for &(arity, span) in &arities[1..] {
                    out.push(
                        Diagnostic::warning(
                            codes::ARITY_CLASH,
                            span,
                            format!(
                                "the {kind} `{key}` is used with {arity} argument{} here and with {first_arity} elsewhere",
                                plural(arity)
                            ),
                        )
                        .with_label(format!("{arity} argument{}", plural(arity)))
                        .with_related(first_span, format!("{first_arity} argument{} here", plural(first_arity)))
                        .with_help("GDL treats these as two unrelated names; this is deprecated and often a mistake (`001`)"),
                    );
                }
            }
        }
        if !reserved
            && let (Some(&(_, relation_span)), Some(&(_, function_span))) =
                (uses.relation.first(), uses.function.first())
        {
            out.push(
                Diagnostic::warning(
                    codes::RELATION_AND_FUNCTION,
                    function_span,
                    format!("`{key}` is used both as a relation and as a function"),
                )
                .with_label("as a function here")
                .with_related(relation_span, "as a relation here")
                .with_help("this often means a missing `(true …)` around a fluent"),
            );
        }
        if let [(first, first_span), rest @ ..] = uses.spellings.as_slice() {
            for (spelling, span) in rest {
                out.push(case_warning("name", first, *first_span, spelling, *span));
            }
        }
    }
    for (first, first_span, spelling, span) in &visitor.variable_clashes {
        out.push(case_warning(
            "variable",
            &format!("?{first}"),
            *first_span,
            &format!("?{spelling}"),
            *span,
        ));
    }
}

fn case_warning(
    what: &str,
    first: &str,
    first_span: Span,
    spelling: &str,
    span: Span,
) -> Diagnostic {
    Diagnostic::warning(
        codes::INCONSISTENT_CASE,
        span,
        format!("the {what} `{spelling}` is also written `{first}`"),
    )
    .with_label(format!("`{spelling}` here"))
    .with_related(first_span, format!("`{first}` here"))
    .with_help("GDL is case-insensitive, so these are the same name, but case-sensitive players read them as two; use one spelling")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
