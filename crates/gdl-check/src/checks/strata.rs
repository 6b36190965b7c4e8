//! Stratified negation (Definition 8): no cycle of the dependency graph goes through a `not`.

use gdl_syntax::Diagnostic;

use super::Context;
use crate::codes;

pub fn check(cx: &Context<'_, '_>, out: &mut Vec<Diagnostic>) {
    let program = cx.program;
    for cycle in &cx.graph.negative_cycles {
        let edges: Vec<_> = cycle.iter().map(|&k| cx.graph.edges[k as usize]).collect();
        let first = edges[0];
        // Read from the relation: p ← q ← … ← not p.
        let path: Vec<String> = std::iter::once(program.describe(first.from))
            .chain(edges.iter().skip(1).rev().map(|e| program.describe(e.from)))
            .collect();
        let mut diagnostic = Diagnostic::error(
            codes::UNSTRATIFIED,
            first.span,
            format!(
                "`{}` depends on its own negation: {} ← not {}",
                program.describe(first.from),
                path.join(" ← "),
                program.describe(first.from)
            ),
        )
        .with_label(format!(
            "`{}` depends negatively on `{}` here",
            program.describe(first.to),
            program.describe(first.from)
        ))
        .with_help(if edges.len() == 1 {
            "Definition 8 forbids a relation to depend on its own negation, even when the instances differ (`goal` 100 defined from `not goal 0`, say); such a game can still be played when no instance depends on its own negation, but define the negated case with a relation of its own"
        } else {
            "a relation may not depend on its own negation, directly or through other relations (Definition 8); introduce relations so that no cycle goes through a `not`"
        });
        for e in &edges[1..] {
            diagnostic = diagnostic.with_related(
                e.span,
                format!(
                    "`{}` depends {}on `{}` here",
                    program.describe(e.to),
                    if e.negative { "negatively " } else { "" },
                    program.describe(e.from)
                ),
            );
        }
        out.push(diagnostic);
    }
}
