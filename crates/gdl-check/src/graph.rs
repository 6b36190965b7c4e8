//! The dependency graph of a program (Definition 7 of the specification), its strongly connected
//! components in evaluation order, and the strata of stratified negation (Definition 8).

use std::collections::VecDeque;

use gdl_syntax::Span;

use crate::program::{Program, RelId};

/// An edge from a relation used in a body to the relation of the rule's head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: RelId,
    pub to: RelId,
    /// The body atom is under a `not`.
    pub negative: bool,
    /// Index of the rule in [`Program::rules`].
    pub rule: usize,
    /// The body atom.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub edges: Vec<Edge>,
    /// Edges leaving each relation (indices into `edges`).
    pub outgoing: Vec<Vec<u32>>,
    /// Edges entering each relation.
    pub incoming: Vec<Vec<u32>>,
    /// The component of each relation.
    pub component: Vec<u32>,
    /// Components in evaluation order: every relation comes after the relations it depends on.
    pub components: Vec<Vec<RelId>>,
    /// Whether a component is recursive (more than one relation, or a relation that depends on
    /// itself).
    pub recursive: Vec<bool>,
    /// The stratum of each relation: the number of negations on the longest chain of
    /// dependencies below it. Meaningful when [`Graph::negative_cycles`] is empty.
    pub stratum: Vec<u32>,
    /// For each component that contains a negative edge, one cycle through it (edge indices,
    /// in order, starting with the negative edge).
    pub negative_cycles: Vec<Vec<u32>>,
}

impl Graph {
    pub fn build(program: &Program) -> Graph {
        let n = program.relations.len();
        let mut edges = Vec::new();
        for (index, rule) in program.rules.iter().enumerate() {
            for literal in &rule.body {
                literal.for_each_atom(false, &mut |atom, negative| {
                    edges.push(Edge {
                        from: atom.rel,
                        to: rule.head.rel,
                        negative,
                        rule: index,
                        span: atom.span,
                    });
                });
            }
        }
        let mut outgoing = vec![Vec::new(); n];
        let mut incoming = vec![Vec::new(); n];
        for (k, e) in edges.iter().enumerate() {
            outgoing[e.from as usize].push(k as u32);
            incoming[e.to as usize].push(k as u32);
        }
        // Components before the relations that depend on them: an evaluation order.
        let scc = crate::scc::components(n, |v, i| {
            outgoing[v as usize].get(i).map(|&k| edges[k as usize].to)
        });
        let components: Vec<Vec<RelId>> = scc
            .topological()
            .map(|members| members.iter().rev().copied().collect())
            .collect();
        let count = components.len();
        let mut component = vec![0u32; n];
        for (position, members) in components.iter().enumerate() {
            for &rel in members {
                component[rel as usize] = position as u32;
            }
        }
        let mut recursive = vec![false; count];
        for e in &edges {
            if component[e.from as usize] == component[e.to as usize] {
                recursive[component[e.to as usize] as usize] = true;
            }
        }
        let mut stratum = vec![0u32; n];
        let mut component_stratum = vec![0u32; count];
        let mut negative_cycles = Vec::new();
        for (c, members) in components.iter().enumerate() {
            let mut s = 0;
            let mut cycle_found = false;
            for &rel in members {
                for &k in &incoming[rel as usize] {
                    let e = &edges[k as usize];
                    let from_c = component[e.from as usize] as usize;
                    if from_c == c {
                        if e.negative && !cycle_found {
                            cycle_found = true;
                            negative_cycles.push(cycle_through(k, &edges, &outgoing, &component));
                        }
                    } else {
                        s = s.max(component_stratum[from_c] + u32::from(e.negative));
                    }
                }
            }
            component_stratum[c] = s;
            for &rel in members {
                stratum[rel as usize] = s;
            }
        }
        Graph {
            edges,
            outgoing,
            incoming,
            component,
            components,
            recursive,
            stratum,
            negative_cycles,
        }
    }

    /// Whether `a` and `b` are in one cycle (the same recursive component).
    pub fn in_cycle(&self, a: RelId, b: RelId) -> bool {
        let c = self.component[a as usize];
        c == self.component[b as usize] && self.recursive[c as usize]
    }

    /// A shortest chain of edges by which `to` depends on `from` (edge indices), if any.
    pub fn path(&self, from: RelId, to: RelId) -> Option<Vec<u32>> {
        if from == to {
            return Some(Vec::new());
        }
        let mut via: Vec<Option<u32>> = vec![None; self.outgoing.len()];
        let mut seen = vec![false; self.outgoing.len()];
        let mut queue = VecDeque::from([from]);
        seen[from as usize] = true;
        while let Some(rel) = queue.pop_front() {
            for &k in &self.outgoing[rel as usize] {
                let next = self.edges[k as usize].to;
                if seen[next as usize] {
                    continue;
                }
                seen[next as usize] = true;
                via[next as usize] = Some(k);
                if next == to {
                    let mut path = Vec::new();
                    let mut at = to;
                    while let Some(k) = via[at as usize] {
                        path.push(k);
                        at = self.edges[k as usize].from;
                        if at == from {
                            break;
                        }
                    }
                    path.reverse();
                    return Some(path);
                }
                queue.push_back(next);
            }
        }
        None
    }

    /// Every relation that `rel` depends on, directly or not (including itself).
    pub fn dependencies(&self, rel: RelId) -> Vec<bool> {
        self.closure(&[rel], &self.incoming, |e| e.from)
    }

    /// Every relation that depends on one of `sources`, directly or not (the sources included).
    pub fn dependents(&self, sources: &[RelId]) -> Vec<bool> {
        self.closure(sources, &self.outgoing, |e| e.to)
    }

    /// The relations reached from `starts` along `adjacent` edges, each edge leading to `end`.
    fn closure(
        &self,
        starts: &[RelId],
        adjacent: &[Vec<u32>],
        end: impl Fn(&Edge) -> RelId,
    ) -> Vec<bool> {
        let mut seen = vec![false; self.outgoing.len()];
        let mut stack = starts.to_vec();
        for &s in starts {
            seen[s as usize] = true;
        }
        while let Some(r) = stack.pop() {
            for &k in &adjacent[r as usize] {
                let next = end(&self.edges[k as usize]);
                if !seen[next as usize] {
                    seen[next as usize] = true;
                    stack.push(next);
                }
            }
        }
        seen
    }
}

/// A cycle that starts with edge `first` and returns to its source within its component.
fn cycle_through(first: u32, edges: &[Edge], outgoing: &[Vec<u32>], component: &[u32]) -> Vec<u32> {
    let start = edges[first as usize];
    let c = component[start.from as usize];
    let mut via: Vec<Option<u32>> = vec![None; outgoing.len()];
    let mut seen = vec![false; outgoing.len()];
    let mut queue = VecDeque::from([start.to]);
    seen[start.to as usize] = true;
    let mut tail = Vec::new();
    if start.to != start.from {
        'search: while let Some(rel) = queue.pop_front() {
            for &k in &outgoing[rel as usize] {
                let next = edges[k as usize].to;
                if component[next as usize] != c || seen[next as usize] {
                    continue;
                }
                seen[next as usize] = true;
                via[next as usize] = Some(k);
                if next == start.from {
                    break 'search;
                }
                queue.push_back(next);
            }
        }
        let mut at = start.from;
        while at != start.to {
            let k = via[at as usize].expect("a path exists within a component");
            tail.push(k);
            at = edges[k as usize].from;
        }
        tail.reverse();
    }
    let mut cycle = vec![first];
    cycle.extend(tail);
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::lower;

    fn graph(text: &str) -> (Program, Graph) {
        let parsed = gdl_syntax::parse(text);
        let program = lower(&parsed.description);
        let graph = Graph::build(&program);
        (program, graph)
    }

    #[test]
    fn evaluation_order_and_strata() {
        let (p, g) = graph(
            "(<= (reach ?x ?y) (edge ?x ?y)) (<= (reach ?x ?z) (reach ?x ?y) (edge ?y ?z))
             (<= (cut ?x) (node ?x) (not (reach a ?x))) (<= (top ?x) (cut ?x))",
        );
        let rel = |n: &str, a| p.relation(n, a).unwrap() as usize;
        assert!(g.negative_cycles.is_empty());
        assert!(g.component[rel("edge", 2)] < g.component[rel("reach", 2)]);
        assert!(g.component[rel("reach", 2)] < g.component[rel("cut", 1)]);
        assert!(g.recursive[g.component[rel("reach", 2)] as usize]);
        assert!(!g.recursive[g.component[rel("cut", 1)] as usize]);
        assert_eq!(g.stratum[rel("reach", 2)], 0);
        assert_eq!(g.stratum[rel("cut", 1)], 1);
        assert_eq!(g.stratum[rel("top", 1)], 1);
        assert!(g.in_cycle(rel("reach", 2) as u32, rel("reach", 2) as u32));
    }

    #[test]
    fn negative_cycle_is_found_with_its_path() {
        let (p, g) = graph("(<= (p ?x) (q ?x)) (<= (q ?x) (r ?x) (not (p ?x)))");
        assert_eq!(g.negative_cycles.len(), 1);
        let cycle = &g.negative_cycles[0];
        assert_eq!(cycle.len(), 2);
        let first = g.edges[cycle[0] as usize];
        assert!(first.negative);
        assert_eq!(p.describe(first.from), "p/1");
        assert_eq!(p.describe(first.to), "q/1");
        assert_eq!(g.edges[cycle[1] as usize].to, first.from);
    }

    #[test]
    fn self_negation() {
        let (_, g) = graph("(<= (p ?x) (q ?x) (not (p ?x)))");
        assert_eq!(g.negative_cycles.len(), 1);
        assert_eq!(g.negative_cycles[0].len(), 1);
    }
}
