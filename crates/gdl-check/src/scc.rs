//! Strongly connected components, by Tarjan's algorithm without recursion: the one place the
//! toolkit takes a graph apart into its cycles (the relations' dependencies here, ground atoms,
//! rules and gates in `gdl-reason`, explored states in `gdl-validate`). Graphs have millions of
//! nodes, so nothing recurses and the components are kept flat, not a vector each.

const UNSEEN: u32 = u32::MAX;

/// The components of a graph on nodes `0..n`, numbered in the order Tarjan's algorithm
/// finishes them: a component after every component it reaches (reverse topological order).
/// Made only by [`components`] (`start` is never empty).
#[derive(Clone, Debug)]
pub struct Components {
    /// Each node's component.
    of: Vec<u32>,
    /// Component `c`'s members are `members[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    /// The members, component by component, each in the order the algorithm pops them from
    /// its stack (the last found first).
    members: Vec<u32>,
}

impl Components {
    /// How many components there are.
    pub fn count(&self) -> usize {
        self.start.len() - 1
    }

    /// Each node's component.
    pub fn of(&self) -> &[u32] {
        &self.of
    }

    /// Node `v`'s component's place in [`Components::topological`].
    pub fn topological_index(&self, v: u32) -> u32 {
        (self.count() - 1) as u32 - self.of[v as usize]
    }

    /// Component `c`'s nodes, the last found first.
    pub fn members(&self, c: u32) -> &[u32] {
        &self.members[self.start[c as usize] as usize..self.start[c as usize + 1] as usize]
    }

    /// The components' nodes, each component after the components it reaches.
    pub fn finished(&self) -> impl DoubleEndedIterator<Item = &[u32]> + ExactSizeIterator {
        self.start
            .windows(2)
            .map(|w| &self.members[w[0] as usize..w[1] as usize])
    }

    /// The components' nodes, each component before the components it reaches (for edges from
    /// what is read to what reads it: an evaluation order).
    pub fn topological(&self) -> impl DoubleEndedIterator<Item = &[u32]> + ExactSizeIterator {
        self.finished().rev()
    }
}

/// The strongly connected components of the graph on nodes `0..n` whose node `v` has the
/// successors `successor(v, 0)`, `successor(v, 1)`, … up to the first `None`.
pub fn components(n: usize, successor: impl Fn(u32, usize) -> Option<u32>) -> Components {
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut of = vec![UNSEEN; n];
    let mut start = vec![0u32];
    let mut members = Vec::with_capacity(n);
    let mut next = 0u32;
    // (node, how many of its successors have been visited)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN {
            continue;
        }
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        calls.push((root, 0));
        while let Some(&mut (v, ref mut visited)) = calls.last_mut() {
            if let Some(w) = successor(v, *visited) {
                *visited += 1;
                if index[w as usize] == UNSEEN {
                    index[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    calls.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let c = start.len() as u32 - 1;
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    of[w as usize] = c;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                start.push(members.len() as u32);
            }
        }
    }
    Components { of, start, members }
}

/// The components of a graph given as a successor list per node.
pub fn components_of_lists(succ: &[Vec<u32>]) -> Components {
    components(succ.len(), |v, i| succ[v as usize].get(i).copied())
}

/// The components of a graph in compressed rows: node `v`'s successors are
/// `list[start[v]..start[v + 1]]` (`start` has a node more than the graph).
pub fn components_of_rows(start: &[u32], list: &[u32]) -> Components {
    components(start.len() - 1, |v, i| {
        let row = &list[start[v as usize] as usize..start[v as usize + 1] as usize];
        row.get(i).copied()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(nodes: &[u32]) -> Vec<u32> {
        let mut v = nodes.to_vec();
        v.sort_unstable();
        v
    }

    #[test]
    fn cycles_are_components_in_topological_order() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3, 4 alone, 3 -> 3
        let succ = vec![vec![1], vec![2], vec![1, 3], vec![3], vec![]];
        let c = components_of_lists(&succ);
        assert_eq!(c.count(), 4);
        let order: Vec<Vec<u32>> = c.topological().map(sorted).collect();
        let position = |v: u32| order.iter().position(|m| m.contains(&v)).unwrap();
        assert_eq!(order[position(1)], vec![1, 2]);
        assert!(position(0) < position(1));
        assert!(position(1) < position(3));
        assert_eq!(c.of()[1], c.of()[2]);
        assert_ne!(c.of()[0], c.of()[1]);
        for v in 0..5 {
            assert!(order[c.topological_index(v) as usize].contains(&v));
        }
        // The same graph in compressed rows.
        let rows = components_of_rows(&[0, 1, 2, 4, 5, 5], &[1, 2, 1, 3, 3]);
        assert_eq!(rows.of(), c.of());
        for (k, members) in c.finished().enumerate() {
            assert_eq!(members, c.members(k as u32));
            assert!(members.iter().all(|&v| c.of()[v as usize] == k as u32));
        }
    }

    #[test]
    fn a_long_path_does_not_recurse() {
        let n = 1_000_000u32;
        let c = components(n as usize, |v, i| (i == 0 && v + 1 < n).then_some(v + 1));
        assert_eq!(c.count(), n as usize);
        // The last node finishes first.
        assert_eq!(c.members(0), &[n - 1]);
        assert_eq!(c.topological().next(), Some(&[0][..]));
    }

    #[test]
    fn an_empty_graph_has_no_components() {
        let c = components(0, |_, _| None);
        assert_eq!(c.count(), 0);
        assert_eq!(c.finished().count(), 0);
    }
}
