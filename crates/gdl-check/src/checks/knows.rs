//! GDL-III's restrictions on `knows` (Thielscher, ECAI 2016 and IJCAI 2017; docs/gdl3.md):
//! the keyword is only used in rule bodies, in its two forms, about an atom (`E017`, `E018`);
//! no relation depends on itself through `knows` (`E019`); what is known is a proposition
//! about a history, never about the moves being made (`E020`); the initial state does not
//! depend on knowledge (`E005`). A proposition nothing defines (`W008`) and a role argument
//! that is not a role (`W016`) are warned about as elsewhere.
//!
//! Knowledge of P depends on P: a `knows` literal makes its rule's head depend on the
//! proposition's relation. The dependency graph (`graph.rs`) sees the atom `knows/2` instead,
//! one node for every `knows` literal; the checks here replace its edges by these.

use std::collections::VecDeque;

use gdl_syntax::{Diagnostic, Span};

use super::Context;
use crate::codes;
use crate::knows::{self, KnowsAtom, Proposition};
use crate::program::{Program, RelId, Reserved, Rule, Term};

/// A dependency through `knows`: the head of rule `rule` depends on `from`, the relation of a
/// proposition known in its body.
struct KnowsEdge {
    from: RelId,
    to: RelId,
    rule: usize,
    span: Span,
}

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    defined_or_misshapen(program, out);
    let roles = roles(program);
    let mut edges = Vec::new();
    for (index, rule) in program.rules.iter().enumerate() {
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                let Some(k) = KnowsAtom::of(program, atom) else {
                    return;
                };
                shape(program, roles.as_deref(), rule, k, atom.span, out);
                if let Some(from) = known_relation(program, k.proposition) {
                    edges.push(KnowsEdge {
                        from,
                        to: rule.head.rel,
                        rule: index,
                        span: atom.span,
                    });
                }
            });
        }
    }
    let adjacency = Adjacency::new(cx, &edges);
    recursion(program, &adjacency, &edges, out);
    moves(program, &adjacency, &edges, out);
    initial_state(cx, out);
}

/// `knows` as a fact, in a rule head, or with other than one or two arguments.
fn defined_or_misshapen(program: &Program, out: &mut Vec<Diagnostic>) {
    let is_keyword = |rel: RelId| knows::is_keyword(program, rel);
    for rule in &program.rules {
        if is_keyword(rule.head.rel) {
            out.push(
                Diagnostic::error(
                    codes::KNOWS_DEFINED,
                    rule.head.span,
                    "`knows` cannot be defined by the game",
                )
                .with_label(if rule.fact { "a fact" } else { "a rule head" })
                .with_help("in GDL-III `knows` is a keyword: what a role knows follows from its moves and percepts; name a relation of your own differently"),
            );
        }
        for literal in &rule.body {
            literal.for_each_atom(false, &mut |atom, _| {
                let arity = atom.args.len();
                if is_keyword(atom.rel) && !matches!(arity, 1 | 2) {
                    out.push(form_error(
                        atom.span,
                        format!("`knows` with {arity} argument{}", plural(arity)),
                        "GDL-III's two forms are `(knows R P)`, role R knows P, and `(knows P)`, P is common knowledge",
                    ));
                }
            });
        }
    }
}

fn form_error(span: Span, label: String, help: &str) -> Diagnostic {
    Diagnostic::error(
        codes::KNOWS_FORM,
        span,
        "`knows` is not applied to a role and an atom",
    )
    .with_label(label)
    .with_help(help)
}

/// The role and the proposition of one `knows` literal.
fn shape(
    program: &Program,
    roles: Option<&[&Term]>,
    rule: &Rule,
    k: KnowsAtom<'_>,
    span: Span,
    out: &mut Vec<Diagnostic>,
) {
    // The role of this `knows`, then those of the `knows` nested in its proposition.
    let mut role_of = k.role;
    let mut inner = k.proposition;
    loop {
        if let Some(r) = role_of {
            role(program, roles, rule, r, span, out);
        }
        let Proposition::Knows(next) = knows::proposition(program, inner) else {
            break;
        };
        role_of = match inner {
            Term::Fn(_, args) if args.len() == 2 => Some(&args[0]),
            _ => None,
        };
        inner = next;
    }
    let (proposition, what) = knows::innermost(program, k.proposition);
    let text = program.term_text(rule, proposition);
    match what {
        Proposition::NotAnAtom => out.push(form_error(
            span,
            format!("`{text}` is not an atom"),
            "what is known is an atom, `p` or `(p a b)`; name the proposition by a relation of its own",
        )),
        Proposition::Relation(_) | Proposition::Unmentioned { .. }
            if is_connective(program, proposition) =>
        {
            out.push(form_error(
                span,
                format!("`{text}` is a literal, not an atom"),
                "to know a negation, a disjunction or a conjunction, define a relation for it and know that",
            ));
        }
        Proposition::Unmentioned { name, arity } => out.push(
            Diagnostic::warning(
                codes::UNDEFINED_RELATION,
                span,
                format!("`{}/{arity}` is used but never defined", program.symbols.name(name)),
            )
            .with_label("no fact or rule defines it, so it is never known")
            .with_help("define it, or check the spelling and the number of arguments"),
        ),
        Proposition::Relation(_) | Proposition::Knows(_) => {}
    }
}

/// A role argument of `knows`: a compound term (E017), or a constant no `role` fact declares
/// (W016).
fn role(
    program: &Program,
    roles: Option<&[&Term]>,
    rule: &Rule,
    role: &Term,
    span: Span,
    out: &mut Vec<Diagnostic>,
) {
    let name = program.term_text(rule, role);
    match role {
        Term::Fn(..) => out.push(form_error(
            span,
            format!("the role `{name}` is a compound term"),
            "the first argument of `(knows R P)` is a role or a variable that stands for one",
        )),
        Term::Const(_) if roles.is_some_and(|roles| !roles.contains(&role)) => out.push(
            Diagnostic::warning(codes::NOT_A_ROLE, span, format!("`{name}` is not a role"))
                .with_label("this is never true: only roles know")
                .with_help(format!(
                    "declare the role with `(role {name})`, or check the spelling"
                )),
        ),
        _ => {}
    }
}

fn is_connective(program: &Program, term: &Term) -> bool {
    let name = match term {
        Term::Const(name) | Term::Fn(name, _) => program.symbols.name(*name),
        Term::Var(_) => return false,
    };
    gdl_syntax::ast::Keyword::of(name).is_some()
}

/// The roles, when they are all ground facts (otherwise `E004` speaks).
fn roles(program: &Program) -> Option<Vec<&Term>> {
    let role = program.reserved(Reserved::Role)?;
    let rules: Vec<&Rule> = program
        .rules
        .iter()
        .filter(|r| r.head.rel == role)
        .collect();
    let ground = |r: &&Rule| r.body.is_empty() && r.head.args[0].is_ground();
    (!rules.is_empty() && rules.iter().all(ground))
        .then(|| rules.iter().map(|r| &r.head.args[0]).collect())
}

/// The relation a proposition is about: its own, or, for a nested `(knows R Q)`, Q's.
fn known_relation(program: &Program, term: &Term) -> Option<RelId> {
    match knows::innermost(program, term) {
        (_, Proposition::Relation(rel)) => Some(rel),
        _ => None,
    }
}

/// Who depends on whom, with the edges out of `knows/1` and `knows/2` replaced by the edges
/// through each `knows` literal.
struct Adjacency {
    next: Vec<Vec<RelId>>,
}

impl Adjacency {
    fn new(cx: &Context<'_, '_>, edges: &[KnowsEdge]) -> Adjacency {
        let program = cx.program;
        let mut next = vec![Vec::new(); program.relations.len()];
        for e in &cx.graph.edges {
            if !knows::is_knows(program, e.from) {
                next[e.from as usize].push(e.to);
            }
        }
        for e in edges {
            next[e.from as usize].push(e.to);
        }
        Adjacency { next }
    }

    /// Every relation that depends on `from` (`from` included).
    fn reached(&self, from: RelId) -> Vec<bool> {
        let mut seen = vec![false; self.next.len()];
        let mut queue = VecDeque::from([from]);
        seen[from as usize] = true;
        while let Some(rel) = queue.pop_front() {
            for &to in &self.next[rel as usize] {
                if !seen[to as usize] {
                    seen[to as usize] = true;
                    queue.push_back(to);
                }
            }
        }
        seen
    }
}

/// `E019`: a relation whose knowledge depends on itself.
fn recursion(program: &Program, adj: &Adjacency, edges: &[KnowsEdge], out: &mut Vec<Diagnostic>) {
    for e in edges {
        // Knowledge of `next` in a `next` rule is E020's: reported once, for what it is.
        if is_of_transition(program, e.from) || !adj.reached(e.to)[e.from as usize] {
            continue;
        }
        let head = program.describe(e.to);
        let known = program.describe(e.from);
        out.push(
            Diagnostic::error(
                codes::KNOWS_RECURSION,
                e.span,
                format!("`{head}` depends on itself through `knows`"),
            )
            .with_label(if e.from == e.to {
                format!("a rule for `{head}` asks who knows `{head}`")
            } else {
                format!("`{known}`, known here, depends on `{head}`")
            })
            .with_related(
                program.rules[e.rule].head.span,
                format!("the rule for `{head}`"),
            )
            .with_help("knowledge of a proposition needs the proposition decided in every history first; GDL-III allows no recursion through `knows`"),
        );
    }
}

/// `E020`: knowledge of the moves being made, of the next state, of percepts or of `init`.
fn moves(program: &Program, adj: &Adjacency, edges: &[KnowsEdge], out: &mut Vec<Diagnostic>) {
    let on_does = program
        .reserved(Reserved::Does)
        .map(|does| adj.reached(does));
    for e in edges {
        let why = match program.reserved_of(e.from) {
            Some(r) if is_of_transition(program, e.from) => {
                format!("`{}` is not a proposition about the history", r.name())
            }
            _ if on_does.as_ref().is_some_and(|d| d[e.from as usize]) => {
                format!("`{}` depends on `does`", program.describe(e.from))
            }
            _ => continue,
        };
        out.push(
            Diagnostic::error(
                codes::KNOWS_OF_MOVES,
                e.span,
                "`knows` is applied to the moves being made or to the transition",
            )
            .with_label(why)
            .with_help("knowledge is of what holds after a history (the moves made so far and what they showed); to know about the current state use `(true …)`, and record a move in the next state to know it later"),
        );
    }
}

/// Whether `rel` is `does`, `next`, `sees` or `init`: the moves and the transition.
fn is_of_transition(program: &Program, rel: RelId) -> bool {
    matches!(
        program.reserved_of(rel),
        Some(Reserved::Does | Reserved::Next | Reserved::Sees | Reserved::Init)
    )
}

/// `E005`: the initial state comes before any history, so it cannot depend on knowledge.
fn initial_state(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    let Some(init) = program.reserved(Reserved::Init) else {
        return;
    };
    for arity in [1, 2] {
        let Some(keyword) = program.relation(gdl_syntax::gdl3::KNOWS, arity) else {
            continue;
        };
        let Some(path) = cx.graph.path(keyword, init) else {
            continue;
        };
        let Some(&first) = path.first() else { continue };
        out.push(
            Diagnostic::error(
                codes::INIT_DEPENDS_ON_GAME,
                cx.graph.edges[first as usize].span,
                "`init` depends on `knows`",
            )
            .with_label("knowledge used in a rule the initial state depends on")
            .with_help(
                "the initial state comes before any move: nothing is known about a history yet",
            ),
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
