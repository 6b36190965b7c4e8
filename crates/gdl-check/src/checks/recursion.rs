//! The recursion restriction (Definition 15): in a rule for `p`, every argument of a body atom
//! `q(v1…vk)` with `q` in a cycle with `p` is ground, is an argument of the head, or is an
//! argument of a positive body atom whose relation is not in a cycle with `p`.

use gdl_syntax::Diagnostic;

use super::Context;
use crate::codes;
use crate::program::Literal;

/// More `or` branches than this and a rule is checked no further (no real game comes close).
const BRANCH_LIMIT: usize = 4096;

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    let graph = cx.graph;
    for rule in &program.rules {
        let head = rule.head.rel;
        if !graph.recursive[graph.component[head as usize] as usize] || rule.body.is_empty() {
            continue;
        }
        let Some(branches) = rule.branches(BRANCH_LIMIT) else {
            continue;
        };
        let mut reported = Vec::new();
        for branch in &branches {
            let positive: Vec<_> = branch
                .iter()
                .filter_map(|l| match l {
                    Literal::Atom(a) => Some(a),
                    _ => None,
                })
                .collect();
            for atom in &positive {
                if !graph.in_cycle(atom.rel, head) {
                    continue;
                }
                for arg in &atom.args {
                    let fine = arg.is_ground()
                        || rule.head.args.contains(arg)
                        || positive.iter().any(|other| {
                            !graph.in_cycle(other.rel, head) && other.args.contains(arg)
                        });
                    if fine || reported.contains(&(atom.span, arg)) {
                        continue;
                    }
                    reported.push((atom.span, arg));
                    let text = program.term_text(rule, arg);
                    out.push(
                        Diagnostic::error(
                            codes::RECURSION_RESTRICTION,
                            atom.span,
                            format!(
                                "recursion restriction: `{text}` in this recursive call to `{}` is not limited",
                                program.describe(atom.rel)
                            ),
                        )
                        .with_label(format!(
                            "`{}` is in a cycle with `{}`",
                            program.describe(atom.rel),
                            program.describe(head)
                        ))
                        .with_related(rule.head.span, "the head of the recursive rule")
                        .with_help(format!(
                            "each argument of a recursive call must be ground, an argument of the head, or an argument of a positive literal outside the cycle; otherwise `{text}` can grow without bound"
                        )),
                    );
                }
            }
        }
    }
}
