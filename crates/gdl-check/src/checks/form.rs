//! How sentences, terms and literals are written: variables where GDL forbids them, keywords
//! in terms, empty constructs, odd negations, `distinct`s that decide nothing.

use gdl_syntax::ast::{Keyword, eq_ignore_case};
use gdl_syntax::diagnostic::{Applicability, Edit, Fix};
use gdl_syntax::{Diagnostic, Item, Literal, Sentence, Term};

use super::ItemsContext;
use super::walk::{Place, Visitor, walk};
use crate::codes;
use crate::program::Reserved;

pub fn check(cx: &ItemsContext<'_, '_>, out: &mut Vec<Diagnostic>) {
    let mut visitor = FormVisitor {
        out,
        in_sees: false,
    };
    walk(cx.description, &mut visitor);
    for item in &cx.description.items {
        if let Item::Rule(rule) = item
            && rule.body.is_empty()
        {
            let head = rule.head.span.text(cx.text);
            let ground = !head.contains('?');
            out.push(
                Diagnostic::warning(
                    codes::EMPTY_BODY,
                    rule.span,
                    "rule with an empty body",
                )
                .with_label("`(<= head)` with nothing after the head")
                .with_help("if it always holds, write it as a fact; otherwise check the parentheses: the body may have ended up inside the head")
                .with_fix(Fix {
                    message: format!("write it as the fact `{head}`"),
                    applicability: if ground { Applicability::Safe } else { Applicability::Unsafe },
                    edits: vec![Edit {
                        span: rule.span,
                        replacement: head.to_string(),
                    }],
                }),
            );
        }
    }
}

struct FormVisitor<'x> {
    out: &'x mut Vec<Diagnostic>,
    in_sees: bool,
}

impl<'a> Visitor<'a> for FormVisitor<'_> {
    fn sentence(&mut self, sentence: &Sentence<'a>, place: Place, _item: usize) {
        self.in_sees = Reserved::of_name(sentence.name.text) == Some(Reserved::Sees);
        if sentence.name.variable {
            self.variable_as_name(sentence.name.text, sentence.name.span, "relation");
        }
        if sentence.parenthesized && sentence.args.is_empty() {
            let name = sentence.name.text;
            self.out.push(
                Diagnostic::warning(
                    codes::EMPTY_PARENTHESES,
                    sentence.span,
                    format!("`({name})` is a proposition written in parentheses"),
                )
                .with_label("no arguments")
                .with_help(
                    "some players reject zero-argument sentences; write it without parentheses",
                )
                .with_fix(Fix {
                    message: format!("write `{name}`"),
                    applicability: Applicability::Safe,
                    edits: vec![Edit {
                        span: sentence.span,
                        replacement: name.to_string(),
                    }],
                }),
            );
        }
        if place == Place::Fact {
            for term in &sentence.args {
                self.variables_in_fact(term);
            }
        }
    }

    fn term(&mut self, term: &Term<'a>, _depth: usize, _item: usize) {
        let name = match term {
            Term::Variable(_) => return,
            Term::Constant(name) => name,
            Term::Function { name, args, span } => {
                if name.variable {
                    self.variable_as_name(name.text, name.span, "function");
                    return;
                }
                if args.is_empty() {
                    self.out.push(
                        Diagnostic::warning(
                            codes::EMPTY_PARENTHESES,
                            *span,
                            format!("`({})` is a function with no arguments", name.text),
                        )
                        .with_label("no arguments")
                        .with_help(format!(
                            "`({0})` and the constant `{0}` are different terms; if the constant is meant, drop the parentheses",
                            name.text
                        ))
                        .with_fix(Fix {
                            message: format!("write the constant `{}`", name.text),
                            applicability: Applicability::Unsafe,
                            edits: vec![Edit {
                                span: *span,
                                replacement: name.text.to_string(),
                            }],
                        }),
                    );
                }
                if let Some(reserved) = Reserved::of_name(name.text)
                    && !matches!(reserved, Reserved::Base | Reserved::Input)
                {
                    self.out.push(
                        Diagnostic::warning(
                            codes::RESERVED_AS_FUNCTION,
                            name.span,
                            format!("the GDL relation `{}` is used as a function", reserved.name()),
                        )
                        .with_label("a function name here")
                        .with_help(if self.in_sees {
                            "a GDL-II percept may mirror a move like this, but GDL players such as ggp-base reject the game"
                        } else {
                            "some players (ggp-base) reject this; inside a term it is an ordinary function, not the relation"
                        }),
                    );
                }
                name
            }
        };
        if let Some(keyword) = Keyword::of(name.text) {
            self.out.push(
                Diagnostic::error(
                    codes::KEYWORD_AS_TERM,
                    name.span,
                    format!("the keyword `{}` is used inside a term", keyword.as_str()),
                )
                .with_label("a constant or function name belongs here")
                .with_help("`not`, `or`, `and` and `distinct` are logical operators; such a word inside a term usually means misplaced parentheses"),
            );
        }
    }

    fn literal(&mut self, literal: &Literal<'a>, _negated: bool, _item: usize) {
        match literal {
            Literal::Or { args, span } | Literal::And { args, span } if args.is_empty() => {
                let word = if matches!(literal, Literal::Or { .. }) {
                    "or"
                } else {
                    "and"
                };
                let meaning = if word == "or" { "false" } else { "true" };
                self.out.push(
                    Diagnostic::warning(
                        codes::EMPTY_CONNECTIVE,
                        *span,
                        format!("`({word})` with nothing inside"),
                    )
                    .with_label(format!("this is always {meaning}"))
                    .with_help(if word == "or" {
                        "an empty disjunction never holds, so the rule never applies"
                    } else {
                        "an empty conjunction always holds: remove it"
                    }),
                );
            }
            Literal::Not { arg, span } => match arg.as_ref() {
                Literal::Distinct { .. } => self.out.push(
                    Diagnostic::warning(
                        codes::NOT_DISTINCT,
                        *span,
                        "`(not (distinct …))` tests that two terms are the same",
                    )
                    .with_label("valid GDL, but rejected by some players (ggp-base)")
                    .with_help("use the same variable in both places, or a relation such as `(same ?x ?x)`"),
                ),
                Literal::Or { .. } | Literal::And { .. } | Literal::Not { .. } => {
                    let inner = match arg.as_ref() {
                        Literal::Or { .. } => "or",
                        Literal::And { .. } => "and",
                        _ => "not",
                    };
                    self.out.push(
                        Diagnostic::warning(
                            codes::NESTED_NEGATION,
                            *span,
                            format!("`not` around `{inner}`"),
                        )
                        .with_label("valid GDL, but rejected by some players")
                        .with_help(match inner {
                            "or" => "`(not (or a b))` is `(not a) (not b)`",
                            "not" => "a double negation is the literal itself",
                            _ => "define a relation for the conjunction and negate that",
                        }),
                    );
                }
                _ => {}
            },
            Literal::Distinct { left, right, span } => self.trivial_distinct(left, right, *span),
            _ => {}
        }
    }
}

impl FormVisitor<'_> {
    fn variable_as_name(&mut self, text: &str, span: gdl_syntax::Span, what: &str) {
        self.out.push(
            Diagnostic::error(
                codes::VARIABLE_AS_NAME,
                span,
                format!("a variable, `?{text}`, names a {what}"),
            )
            .with_label(format!("a {what} name belongs here"))
            .with_help("GDL has no variables over relation or function names; a name is probably missing or misspelt"),
        );
    }

    fn variables_in_fact(&mut self, term: &Term<'_>) {
        match term {
            Term::Variable(name) => self.out.push(
                Diagnostic::error(
                    codes::VARIABLE_IN_FACT,
                    name.span,
                    format!("the fact contains a variable, `?{}`", name.text),
                )
                .with_label("facts must be ground")
                .with_help("a fact with a variable holds for every ground term in its place; write a rule that binds the variable to the values meant, or one fact per value"),
            ),
            Term::Constant(_) => {}
            Term::Function { args, .. } => args.iter().for_each(|a| self.variables_in_fact(a)),
        }
    }

    fn trivial_distinct(&mut self, left: &Term<'_>, right: &Term<'_>, span: gdl_syntax::Span) {
        let same = same_term(left, right);
        let ground = is_ground(left) && is_ground(right);
        let verdict = if same {
            Some("always false: both sides are the same term")
        } else if ground {
            Some("always true: two different ground terms")
        } else {
            None
        };
        if let Some(verdict) = verdict {
            self.out.push(
                Diagnostic::warning(
                    codes::TRIVIAL_DISTINCT,
                    span,
                    format!("this `distinct` is {verdict}"),
                )
                .with_label("it decides nothing")
                .with_help(if same {
                    "the rule can never apply; check the variable names"
                } else {
                    "remove it, or check the constants"
                }),
            );
        }
    }
}

fn is_ground(term: &Term<'_>) -> bool {
    match term {
        Term::Variable(_) => false,
        Term::Constant(_) => true,
        Term::Function { name, args, .. } => !name.variable && args.iter().all(is_ground),
    }
}

fn same_term(a: &Term<'_>, b: &Term<'_>) -> bool {
    match (a, b) {
        (Term::Variable(x), Term::Variable(y)) | (Term::Constant(x), Term::Constant(y)) => {
            eq_ignore_case(x.text, y.text)
        }
        (
            Term::Function {
                name: f, args: xs, ..
            },
            Term::Function {
                name: g, args: ys, ..
            },
        ) => {
            eq_ignore_case(f.text, g.text)
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| same_term(x, y))
        }
        _ => false,
    }
}
