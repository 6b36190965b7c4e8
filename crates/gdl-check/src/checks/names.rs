//! Names: the same name with different arities, as a relation and as a function, or with
//! different capitalisation.

use gdl_syntax::{Diagnostic, Name, Sentence, Span, Term};
use rustc_hash::FxHashMap;

use super::Context;
use super::walk::{Place, Visitor, walk};
use crate::codes;
use crate::program::Reserved;

#[derive(Default)]
struct Uses {
    /// (arity, first place) for each arity seen, in order of first use.
    relation: Vec<(usize, Span)>,
    function: Vec<(usize, Span)>,
    /// (spelling, first place) for each spelling seen.
    spellings: Vec<(String, Span)>,
}

#[derive(Default)]
struct NameVisitor {
    uses: FxHashMap<String, Uses>,
    order: Vec<String>,
    /// Spellings of variables in the current item.
    item: usize,
    variables: FxHashMap<String, Vec<(String, Span)>>,
    variable_clashes: Vec<(String, Span, String, Span)>,
}

impl NameVisitor {
    fn entry(&mut self, name: &Name<'_>) -> &mut Uses {
        let key = name.text.to_ascii_lowercase();
        if !self.uses.contains_key(&key) {
            self.order.push(key.clone());
        }
        let uses = self.uses.entry(key).or_default();
        if !uses.spellings.iter().any(|(s, _)| s == name.text) {
            uses.spellings.push((name.text.to_string(), name.span));
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

impl<'a> Visitor<'a> for NameVisitor {
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
                let key = name.text.to_ascii_lowercase();
                let spellings = self.variables.entry(key).or_default();
                if let Some((first, first_span)) = spellings.first()
                    && !spellings.iter().any(|(s, _)| s == name.text)
                {
                    self.variable_clashes.push((
                        first.clone(),
                        *first_span,
                        name.text.to_string(),
                        name.span,
                    ));
                }
                if !spellings.iter().any(|(s, _)| s == name.text) {
                    spellings.push((name.text.to_string(), name.span));
                }
            }
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

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let mut visitor = NameVisitor {
        item: usize::MAX,
        ..NameVisitor::default()
    };
    walk(cx.description, &mut visitor);
    for key in &visitor.order {
        let uses = &visitor.uses[key];
        let reserved = Reserved::of_name(key).is_some();
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
        if uses.spellings.len() > 1 {
            let (first, first_span) = &uses.spellings[0];
            for (spelling, span) in &uses.spellings[1..] {
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
