//! The explored part of a game's state graph, and what is computed on it: cycles (strongly
//! connected components, by `gdl_check::scc`) and the longest game. Everything is iterative:
//! graphs have millions of states.

use gdl_check::scc::Components;

/// A graph in compressed rows: the successors of node `v` are `edges[offsets[v]..offsets[v+1]]`
/// for the nodes that have rows; the others (not expanded) have no successors.
#[derive(Default)]
pub struct Graph {
    pub offsets: Vec<u32>,
    pub edges: Vec<u32>,
}

impl Graph {
    pub fn new() -> Graph {
        Graph {
            offsets: vec![0],
            edges: Vec::new(),
        }
    }

    /// Nodes with a row.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Ends the row of the next node: its successors are the edges pushed since the last row,
    /// kept once each, sorted.
    pub fn end_row(&mut self) {
        let start = *self.offsets.last().expect("a first offset") as usize;
        let row = &mut self.edges[start..];
        row.sort_unstable();
        let mut kept = 0;
        for i in 0..row.len() {
            if i == 0 || row[i] != row[kept - 1] {
                row[kept] = row[i];
                kept += 1;
            }
        }
        self.edges.truncate(start + kept);
        self.offsets.push(self.edges.len() as u32);
    }

    pub fn successors(&self, v: u32) -> &[u32] {
        let v = v as usize;
        if v + 1 < self.offsets.len() {
            &self.edges[self.offsets[v] as usize..self.offsets[v + 1] as usize]
        } else {
            &[]
        }
    }

    /// The strongly connected components of the graph on `nodes` nodes, numbered so that every
    /// component comes after every component it can reach (reverse topological order).
    pub fn components(&self, nodes: usize) -> Components {
        gdl_check::scc::components(nodes, |v, i| self.successors(v).get(i).copied())
    }

    /// The node with the smallest number that lies on a cycle, if any.
    pub fn first_on_cycle(&self, nodes: usize) -> Option<u32> {
        let components = self.components(nodes);
        let of = components.of();
        (0..nodes as u32).find(|&v| {
            components.members(of[v as usize]).len() > 1
                || self.successors(v).binary_search(&v).is_ok()
        })
    }

    /// A shortest cycle through `v`: the nodes after `v` along it, ending with `v`.
    pub fn shortest_cycle_through(&self, v: u32) -> Option<Vec<u32>> {
        let mut parent: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
        let mut queue = std::collections::VecDeque::from([v]);
        while let Some(u) = queue.pop_front() {
            for &w in self.successors(u) {
                if w == v {
                    let mut cycle = vec![v];
                    let mut x = u;
                    while x != v {
                        cycle.push(x);
                        x = parent[&x];
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(w) {
                    e.insert(u);
                    queue.push_back(w);
                }
            }
        }
        None
    }

    /// The number of edges on the longest path from `root`, in a graph without cycles.
    pub fn longest_path(&self, nodes: usize, root: u32) -> u64 {
        let components = self.components(nodes);
        debug_assert_eq!(components.count(), nodes, "a graph without cycles");
        // Components come after those they reach: compute in the order they finished.
        let mut longest = vec![0u64; nodes];
        for &v in components.finished().flatten() {
            longest[v as usize] = self
                .successors(v)
                .iter()
                .map(|&w| longest[w as usize] + 1)
                .max()
                .unwrap_or(0);
        }
        longest.get(root as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(rows: &[&[u32]]) -> Graph {
        let mut g = Graph::new();
        for row in rows {
            g.edges.extend_from_slice(row);
            g.end_row();
        }
        g
    }

    #[test]
    fn rows_are_sorted_and_kept_once() {
        let g = graph(&[&[2, 1, 2, 1], &[], &[0]]);
        assert_eq!(g.successors(0), [1, 2]);
        assert_eq!(g.successors(1), [] as [u32; 0]);
        assert_eq!(g.successors(2), [0]);
        assert_eq!(g.successors(7), [] as [u32; 0]);
    }

    #[test]
    fn components_come_after_those_they_reach() {
        // 0 → 1 → 2 → 1, 2 → 3
        let g = graph(&[&[1], &[2], &[1, 3], &[]]);
        let components = g.components(4);
        let comp = components.of();
        assert_eq!(components.count(), 3);
        assert_eq!(comp[1], comp[2]);
        assert!(comp[3] < comp[1] && comp[1] < comp[0]);
        assert_eq!(g.first_on_cycle(4), Some(1));
        assert_eq!(g.shortest_cycle_through(1), Some(vec![2, 1]));
    }

    #[test]
    fn a_self_loop_is_a_cycle_and_a_dag_has_none() {
        let g = graph(&[&[1], &[1]]);
        assert_eq!(g.first_on_cycle(2), Some(1));
        assert_eq!(g.shortest_cycle_through(1), Some(vec![1]));
        let dag = graph(&[&[1, 2], &[3], &[3], &[]]);
        assert_eq!(dag.first_on_cycle(4), None);
        assert_eq!(dag.shortest_cycle_through(0), None);
    }

    #[test]
    fn the_longest_path_of_a_dag() {
        // 0 → 1 → 2 → 3 and 0 → 3
        let g = graph(&[&[1, 3], &[2], &[3], &[]]);
        assert_eq!(g.longest_path(4, 0), 3);
        assert_eq!(graph(&[&[]]).longest_path(1, 0), 0);
    }

    #[test]
    fn deep_graphs_need_no_deep_stack() {
        let n = 1_000_000u32;
        let mut g = Graph::new();
        for v in 0..n {
            if v + 1 < n {
                g.edges.push(v + 1);
            }
            g.end_row();
        }
        assert_eq!(g.first_on_cycle(n as usize), None);
        assert_eq!(g.longest_path(n as usize, 0), u64::from(n - 1));
    }
}
