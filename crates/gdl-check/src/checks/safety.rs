//! Safety (Definitions 6 and 18): every variable of the head, of a negation or of a `distinct`
//! must occur in a positive literal of the body, in every rule the `or`s expand into. Also
//! variables that occur only once.

use gdl_syntax::diagnostic::{Applicability, Edit, Fix};
use gdl_syntax::{Diagnostic, Span};

use super::Context;
use crate::codes;
use crate::program::{Literal, Rule};

/// Variables as a bit set over a rule's variable indices.
#[derive(Clone, PartialEq, Eq)]
struct Vars(Vec<u64>);

impl Vars {
    fn empty(n: usize) -> Vars {
        Vars(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, v: u32) {
        self.0[v as usize / 64] |= 1 << (v % 64);
    }
    fn contains(&self, v: u32) -> bool {
        self.0[v as usize / 64] & (1 << (v % 64)) != 0
    }
    fn union(&mut self, other: &Vars) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a |= b);
    }
    fn intersect(&mut self, other: &Vars) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= b);
    }
}

/// The variables a literal binds positively in every way it can hold.
fn bound(literal: &Literal, n: usize) -> Vars {
    let mut vars = Vars::empty(n);
    match literal {
        Literal::Atom(atom) => atom.for_each_var(&mut |v| vars.insert(v)),
        Literal::Not(..) | Literal::Distinct(..) => {}
        Literal::And(args, _) => args.iter().for_each(|a| vars.union(&bound(a, n))),
        Literal::Or(args, _) => {
            let mut iter = args.iter();
            if let Some(first) = iter.next() {
                vars = bound(first, n);
                iter.for_each(|a| vars.intersect(&bound(a, n)));
            }
        }
    }
    vars
}

struct Unsafe {
    var: u32,
    /// The literal (or head) where it needs binding.
    within: Span,
    place: &'static str,
}

/// Collects variables that `literal` needs bound but that `context` does not bind.
fn check_literal(literal: &Literal, context: &Vars, n: usize, found: &mut Vec<Unsafe>) {
    let require = |l: &Literal, place: &'static str, found: &mut Vec<Unsafe>| {
        l.for_each_var(&mut |v| {
            if !context.contains(v) && !found.iter().any(|u| u.var == v) {
                found.push(Unsafe {
                    var: v,
                    within: l.span(),
                    place,
                });
            }
        });
    };
    match literal {
        Literal::Atom(_) => {}
        Literal::Not(..) => require(literal, "a negation", found),
        Literal::Distinct(..) => require(literal, "a `distinct`", found),
        Literal::And(args, _) => {
            let mut inner = context.clone();
            args.iter().for_each(|a| inner.union(&bound(a, n)));
            args.iter().for_each(|a| check_literal(a, &inner, n, found));
        }
        Literal::Or(args, _) => {
            for a in args {
                let mut inner = context.clone();
                inner.union(&bound(a, n));
                check_literal(a, &inner, n, found);
            }
        }
    }
}

fn unsafe_variables(rule: &Rule) -> Vec<Unsafe> {
    let n = rule.vars.len();
    let mut context = Vars::empty(n);
    rule.body.iter().for_each(|l| context.union(&bound(l, n)));
    let mut found = Vec::new();
    rule.head.for_each_var(&mut |v| {
        if !context.contains(v) && !found.iter().any(|u: &Unsafe| u.var == v) {
            found.push(Unsafe {
                var: v,
                within: rule.head.span,
                place: "the head",
            });
        }
    });
    for literal in &rule.body {
        check_literal(literal, &context, n, &mut found);
    }
    found
}

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    for rule in &cx.program.rules {
        if rule.fact {
            continue; // variables in facts are E013
        }
        let unsafe_vars = unsafe_variables(rule);
        for u in &unsafe_vars {
            let var = &rule.vars[u.var as usize];
            let name = cx.program.symbols.name(var.name);
            let at = var
                .spans
                .iter()
                .copied()
                .find(|s| s.start >= u.within.start && s.end <= u.within.end)
                .unwrap_or(u.within);
            out.push(
                Diagnostic::error(
                    codes::UNSAFE_VARIABLE,
                    at,
                    format!("unsafe rule: `?{name}` in {} is not bound by a positive literal", u.place),
                )
                .with_label(format!("`?{name}` appears only here or in other negative places"))
                .with_related(rule.span, "in this rule")
                .with_help(format!(
                    "every variable of the head, of a `not` or of a `distinct` must also appear in a positive literal of the body (in every branch of an `or`); add one that binds `?{name}`"
                )),
            );
        }
        for (index, var) in rule.vars.iter().enumerate() {
            let name = cx.program.symbols.name(var.name);
            if var.spans.len() != 1
                || name.starts_with('_')
                || unsafe_vars.iter().any(|u| u.var as usize == index)
            {
                continue;
            }
            let span = var.spans[0];
            let written = span.text(cx.text);
            // `?_x` must not already name another variable of the rule: renaming would merge
            // the two and change the rule.
            let taken = |candidate: &str| {
                rule.vars.iter().any(|v| {
                    cx.program
                        .symbols
                        .name(v.name)
                        .eq_ignore_ascii_case(candidate)
                })
            };
            let mut renamed = format!("_{}", &written[1..]);
            let mut suffix = 2;
            while taken(&renamed) {
                renamed = format!("_{}{suffix}", &written[1..]);
                suffix += 1;
            }
            out.push(
                Diagnostic::warning(
                    codes::SINGLETON_VARIABLE,
                    span,
                    format!("the variable `{written}` occurs only once in its rule"),
                )
                .with_label("used nowhere else")
                .with_help("if any value will do, name it `?_…` to say so; otherwise it may be a misspelling")
                .with_fix(Fix {
                    message: format!("rename it `?{renamed}`"),
                    applicability: Applicability::Safe,
                    edits: vec![Edit {
                        span,
                        replacement: format!("?{renamed}"),
                    }],
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check;

    fn singleton_fixes(text: &str) -> Vec<String> {
        check(text)
            .diagnostics
            .iter()
            .filter(|d| d.code == crate::codes::SINGLETON_VARIABLE)
            .flat_map(|d| {
                d.fix
                    .iter()
                    .flat_map(|f| f.edits.iter().map(|e| e.replacement.clone()))
            })
            .collect()
    }

    #[test]
    fn singleton_rename_is_underscored() {
        assert_eq!(singleton_fixes("(<= (p ?x) (q ?x ?y))"), ["?_y"]);
    }

    #[test]
    fn singleton_rename_does_not_merge_with_an_existing_variable() {
        // `?_y` is taken (twice, so not itself a singleton): renaming `?y` to it would join the
        // two variables and change the rule.
        assert_eq!(singleton_fixes("(<= (p ?_y) (q ?_y ?y))"), ["?_y2"]);
        assert_eq!(
            singleton_fixes("(<= (p ?_Y ?_y2) (q ?_y ?_y2 ?y))"),
            ["?_y3"]
        );
    }
}
