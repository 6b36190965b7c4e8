//! The restrictions on GDL's own relations (Definition 20, §6.8, the notes on `base` and
//! `input`, and GDL-II's `sees` and `random`): their arities, where they may appear, what they
//! may depend on, goal values, the roles they name, and whether the game defines what it must.

use gdl_syntax::{Diagnostic, Span};

use super::Context;
use crate::codes;
use crate::program::{Atom, Program, RelId, Reserved, Rule, Term};

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    arities(program, out);
    places(program, out);
    dependencies(cx, out);
    goal_values(program, out);
    missing(program, out);
    roles_without_rules(program, out);
    names_of_roles(program, out);
    base_input_coverage(program, out);
}

/// The first place each relation is used.
fn first_uses(program: &Program) -> Vec<Option<Span>> {
    let mut first = vec![None; program.relations.len()];
    for rule in &program.rules {
        first[rule.head.rel as usize].get_or_insert(rule.head.span);
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                first[atom.rel as usize].get_or_insert(atom.span);
            });
        }
    }
    first
}

fn arities(program: &Program, out: &mut Vec<Diagnostic>) {
    let first = first_uses(program);
    for (rel, relation) in program.relations.iter().enumerate() {
        let name = program.symbols.name(relation.name);
        let Some(reserved) = Reserved::of_name(name) else {
            continue;
        };
        if reserved.arity() == relation.arity {
            continue;
        }
        let Some(span) = first[rel] else { continue };
        let expected = reserved.arity();
        out.push(
            Diagnostic::error(
                codes::RESERVED_ARITY,
                span,
                format!(
                    "`{}` takes {expected} argument{}, not {}",
                    reserved.name(),
                    if expected == 1 { "" } else { "s" },
                    relation.arity
                ),
            )
            .with_label(format!(
                "`{name}` with {} argument{}",
                relation.arity,
                if relation.arity == 1 { "" } else { "s" }
            ))
            .with_help(format!(
                "with another arity `{}` is an ordinary relation, which is confusing; rename it",
                reserved.name()
            )),
        );
    }
}

fn places(program: &Program, out: &mut Vec<Diagnostic>) {
    for rule in &program.rules {
        match program.reserved_of(rule.head.rel) {
            Some(r @ (Reserved::True | Reserved::Does)) => out.push(
                Diagnostic::error(
                    codes::TRUE_DOES_DEFINED,
                    rule.head.span,
                    format!("`{}` cannot be defined by the game", r.name()),
                )
                .with_label(if rule.fact { "a fact" } else { "a rule head" })
                .with_help(if r == Reserved::True {
                    "the current state comes from `init` and `next`; use `init` for the initial state"
                } else {
                    "moves come from the players; use `legal` to say which moves are allowed"
                }),
            ),
            Some(Reserved::Role) if !rule.body.is_empty() || !rule.head.args.iter().all(Term::is_ground) => out.push(
                Diagnostic::error(
                    codes::ROLE_NOT_GROUND_FACT,
                    rule.span,
                    "`role` must be given by ground facts",
                )
                .with_label("roles cannot depend on anything")
                .with_help("write one fact `(role name)` per player"),
            ),
            _ => {}
        }
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                if program.reserved_of(atom.rel) == Some(Reserved::Sees) {
                    out.push(
                        Diagnostic::error(
                            codes::SEES_IN_BODY,
                            atom.span,
                            "`sees` cannot be used in a rule body",
                        )
                        .with_label("only rule heads and facts may mention it")
                        .with_help("`sees` says what a role perceives after a joint move, as `next` says what holds; to share conditions, define a relation of your own and use it here and in the `sees` rule"),
                    );
                }
                if let Some(r @ (Reserved::Init | Reserved::Next)) = program.reserved_of(atom.rel) {
                    out.push(
                        Diagnostic::error(
                            codes::INIT_NEXT_IN_BODY,
                            atom.span,
                            format!("`{}` cannot be used in a rule body", r.name()),
                        )
                        .with_label("only rule heads and facts may mention it")
                        .with_help(if r == Reserved::Next {
                            "to test the current state, use `(true …)`"
                        } else {
                            "to test the current state, use `(true …)`; `init` only defines the initial state"
                        }),
                    );
                }
            });
        }
    }
}

fn dependencies(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    use Reserved::*;
    let rules: [(Reserved, &[Reserved], &str, &str); 5] = [
        (
            Init,
            &[True, Does, Next, Legal, Goal, Terminal, Sees],
            codes::INIT_DEPENDS_ON_GAME,
            "the initial state cannot depend on the game's state, moves or outcome",
        ),
        (
            Legal,
            &[Does],
            codes::DEPENDS_ON_DOES,
            "legal moves cannot depend on the moves being made",
        ),
        (
            Goal,
            &[Does],
            codes::DEPENDS_ON_DOES,
            "goals depend on the state, not on the moves being made",
        ),
        (
            Terminal,
            &[Does],
            codes::DEPENDS_ON_DOES,
            "whether the game is over depends on the state, not on the moves being made",
        ),
        (
            Base,
            &[True, Does],
            codes::BASE_INPUT_DEPEND_ON_STATE,
            "`base` lists every possible fluent, whatever the state",
        ),
    ];
    let input_rule: (Reserved, &[Reserved], &str, &str) = (
        Input,
        &[True, Does],
        codes::BASE_INPUT_DEPEND_ON_STATE,
        "`input` lists every possible move, whatever the state",
    );
    let program = cx.program;
    for (target, sources, code, why) in rules.iter().chain(std::iter::once(&input_rule)) {
        let Some(target_rel) = program.reserved(*target) else {
            continue;
        };
        for source in *sources {
            let Some(source_rel) = program.reserved(*source) else {
                continue;
            };
            let Some(path) = cx.graph.path(source_rel, target_rel) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let edges: Vec<_> = path.iter().map(|&k| cx.graph.edges[k as usize]).collect();
            let chain: Vec<String> = std::iter::once(source.name().to_string())
                .chain(edges.iter().map(|e| program.describe(e.to)))
                .collect();
            let mut diagnostic = Diagnostic::error(
                code,
                edges[0].span,
                format!("`{}` depends on `{}`", target.name(), source.name()),
            )
            .with_label(if edges.len() == 1 {
                format!("`{}` used in a rule for `{}`", source.name(), target.name())
            } else {
                format!("through {}", chain.join(" → "))
            })
            .with_help(*why);
            for e in &edges[1..] {
                diagnostic = diagnostic.with_related(
                    e.span,
                    format!(
                        "`{}` uses `{}` here",
                        program.describe(e.to),
                        program.describe(e.from)
                    ),
                );
            }
            out.push(diagnostic);
        }
    }
}

fn goal_values(program: &Program, out: &mut Vec<Diagnostic>) {
    let Some(goal) = program.reserved(Reserved::Goal) else {
        return;
    };
    for rule in program.rules.iter().filter(|r| r.head.rel == goal) {
        let value = &rule.head.args[1];
        let text = match value {
            Term::Var(_) => continue,
            Term::Const(c) => {
                let name = program.symbols.name(*c);
                if name.bytes().all(|b| b.is_ascii_digit())
                    && name.parse::<u32>().is_ok_and(|v| v <= 100)
                {
                    continue;
                }
                name.to_string()
            }
            Term::Fn(..) => program.term_text(rule, value),
        };
        out.push(
            Diagnostic::error(
                codes::GOAL_VALUE,
                rule.head.span,
                format!("goal value `{text}` is not an integer from 0 to 100"),
            )
            .with_label("in this goal")
            .with_help("goal values are integers between 0 and 100 (§6.8)"),
        );
    }
}

fn missing(program: &Program, out: &mut Vec<Diagnostic>) {
    for reserved in [
        Reserved::Role,
        Reserved::Legal,
        Reserved::Goal,
        Reserved::Terminal,
    ] {
        let defined = program
            .reserved(reserved)
            .is_some_and(|rel| program.rules.iter().any(|r| r.head.rel == rel));
        if !defined {
            let what = match reserved {
                Reserved::Role => "no roles: the game needs at least one `(role name)` fact",
                Reserved::Legal => "no `legal` rule or fact: no one could ever move",
                Reserved::Goal => "no `goal` rule or fact: no one could ever score",
                _ => "no `terminal` rule or fact: the game could never end",
            };
            out.push(
                Diagnostic::error(
                    codes::MISSING_DEFINITION,
                    Span::new(0, 0),
                    format!("the game has {what}"),
                )
                .with_help(format!(
                    "every game defines `role`, `legal`, `goal` and `terminal`; `{}` is missing",
                    reserved.name()
                )),
            );
        }
    }
}

fn roles_without_rules(program: &Program, out: &mut Vec<Diagnostic>) {
    let Some(role) = program.reserved(Reserved::Role) else {
        return;
    };
    for reserved in [Reserved::Legal, Reserved::Goal] {
        let Some(rel) = program.reserved(reserved) else {
            continue;
        };
        let heads: Vec<&Term> = program
            .rules
            .iter()
            .filter(|r| r.head.rel == rel)
            .map(|r| &r.head.args[0])
            .collect();
        if heads.is_empty() {
            continue;
        }
        for rule in program
            .rules
            .iter()
            .filter(|r| r.head.rel == role && r.body.is_empty())
        {
            let Some(Term::Const(name)) = rule.head.args.first() else {
                continue;
            };
            let applies = heads
                .iter()
                .any(|t| matches!(t, Term::Var(_)) || matches!(t, Term::Const(c) if c == name));
            if !applies {
                let role_name = program.symbols.name(*name);
                out.push(
                    Diagnostic::warning(
                        codes::ROLE_WITHOUT_RULES,
                        rule.head.span,
                        format!(
                            "no `{}` rule applies to the role `{role_name}`",
                            reserved.name()
                        ),
                    )
                    .with_label(if reserved == Reserved::Legal {
                        "this role can never move"
                    } else {
                        "this role can never score"
                    })
                    .with_help(format!(
                        "add `{}` rules for `{role_name}`, or check its spelling",
                        reserved.name()
                    )),
                );
            }
        }
    }
}

/// `legal`, `goal`, `sees`, `does` and `input` name a role first: a ground term there that no
/// `(role …)` fact declares makes the rule or the literal useless (GDL-II's `random` is a role
/// only when declared). Nothing is said when the roles are not all ground facts (E004, E012).
fn names_of_roles(program: &Program, out: &mut Vec<Diagnostic>) {
    let Some(role) = program.reserved(Reserved::Role) else {
        return;
    };
    let role_rules: Vec<&Rule> = program
        .rules
        .iter()
        .filter(|r| r.head.rel == role)
        .collect();
    if role_rules.is_empty()
        || role_rules
            .iter()
            .any(|r| !r.body.is_empty() || !r.head.args[0].is_ground())
    {
        return;
    }
    let roles: Vec<&Term> = role_rules.iter().map(|r| &r.head.args[0]).collect();
    let check = |rule: &Rule, atom: &Atom, in_body: bool, out: &mut Vec<Diagnostic>| {
        let Some(
            r @ (Reserved::Legal
            | Reserved::Goal
            | Reserved::Sees
            | Reserved::Does
            | Reserved::Input),
        ) = program.reserved_of(atom.rel)
        else {
            return;
        };
        let named = &atom.args[0];
        if !named.is_ground() || roles.contains(&named) {
            return;
        }
        let name = program.term_text(rule, named);
        let label = match (r, in_body) {
            (Reserved::Does, _) => "this is never true: only roles move".to_string(),
            (_, true) => format!("this is never true: `{}` is only given for roles", r.name()),
            (Reserved::Sees, false) => "no role ever receives this percept".to_string(),
            (_, false) => format!("this `{}` is never used: it is not about a role", r.name()),
        };
        let help = if name.eq_ignore_ascii_case("random") {
            "in GDL-II the random player is a role like the others: declare it with `(role random)`"
                .to_string()
        } else {
            format!("declare the role with `(role {name})`, or check the spelling")
        };
        out.push(
            Diagnostic::warning(
                codes::NOT_A_ROLE,
                atom.span,
                format!("`{name}` is not a role"),
            )
            .with_label(label)
            .with_help(help),
        );
    };
    for rule in &program.rules {
        check(rule, &rule.head, false, out);
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| check(rule, atom, true, out));
        }
    }
}

/// Whether two terms of different rules can be made equal (variables match anything; repeated
/// variables are not tracked, so this may say yes where a full unifier says no).
fn may_unify(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Var(_), _) | (_, Term::Var(_)) => true,
        (Term::Const(x), Term::Const(y)) => x == y,
        (Term::Fn(f, xs), Term::Fn(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| may_unify(x, y))
        }
        _ => false,
    }
}

fn base_input_coverage(program: &Program, out: &mut Vec<Diagnostic>) {
    // Some games write `base` and `input` in another dialect (Dresden's `(base name (val …))`):
    // when a name is also used with another arity, it is not this game's convention.
    let other_dialect = |reserved: Reserved| {
        program
            .relations
            .iter()
            .any(|r| r.arity != reserved.arity() && program.symbols.name(r.name) == reserved.name())
    };
    let rules_of = |rel: Option<RelId>| -> Vec<&Rule> {
        rel.map(|rel| program.rules.iter().filter(|r| r.head.rel == rel).collect())
            .unwrap_or_default()
    };
    let bases = rules_of(program.reserved(Reserved::Base));
    if !bases.is_empty() && !other_dialect(Reserved::Base) {
        for source in [Reserved::Init, Reserved::Next] {
            for rule in rules_of(program.reserved(source)) {
                let fluent = &rule.head.args[0];
                if !bases.iter().any(|b| may_unify(&b.head.args[0], fluent)) {
                    out.push(
                        Diagnostic::warning(
                            codes::INCOMPLETE_BASE_INPUT,
                            rule.head.span,
                            format!(
                                "the fluent `{}` is not covered by any `base` rule",
                                program.term_text(rule, fluent)
                            ),
                        )
                        .with_label(format!("made true by `{}`", source.name()))
                        .with_help("`base` should list every fluent that can ever be true; players that trust it will miss this one"),
                    );
                }
            }
        }
    }
    let inputs = rules_of(program.reserved(Reserved::Input));
    if !inputs.is_empty() && !other_dialect(Reserved::Input) {
        for rule in rules_of(program.reserved(Reserved::Legal)) {
            let covered = inputs.iter().any(|i| {
                may_unify(&i.head.args[0], &rule.head.args[0])
                    && may_unify(&i.head.args[1], &rule.head.args[1])
            });
            if !covered {
                out.push(
                    Diagnostic::warning(
                        codes::INCOMPLETE_BASE_INPUT,
                        rule.head.span,
                        format!(
                            "the move `{}` of `{}` is not covered by any `input` rule",
                            program.term_text(rule, &rule.head.args[1]),
                            program.term_text(rule, &rule.head.args[0])
                        ),
                    )
                    .with_label("a legal move")
                    .with_help("`input` should list every move a role can ever make; players that trust it will miss this one"),
                );
            }
        }
    }
}
