//! The search tree: nodes in one arena, addressed by index, with their moves, child tables and
//! proven values in flat arrays beside them. Nothing is freed node by node: the tree is
//! compacted (the nodes kept copied into fresh arrays) when the root moves on and when it
//! outgrows its budget.

use gdl_reason::TermId;

use crate::game::State;

pub(crate) const NONE: u32 = u32::MAX;

/// A node gets a table of its children by joint move when it has at most this many joint
/// moves per move of its roles (so the table, 4 bytes a joint move, is no larger than the
/// moves, 24 bytes each): always where one role chooses; in a simultaneous node of many moves,
/// the children are found in their list.
const SLOTS_PER_MOVE: usize = 6;

/// A role's move at a node, and what the simulations through it gave the role.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub mv: TermId,
    /// Simulations through the move, finished.
    pub n: u32,
    /// Simulations through the move, under way (each counts as a loss until it ends).
    pub vl: u32,
    /// Where this role alone chooses: whether the move's outcome is known (its child is
    /// terminal or proven), and the role's goal then.
    pub known: bool,
    pub goal: u8,
    /// The sum of the role's goals over the `n` simulations.
    pub w: u64,
}

/// What a node is when it is made.
pub(crate) enum Outcome {
    /// A terminal state and its goals.
    Terminal(Vec<u8>),
    /// Each role's legal moves.
    Moves(Vec<Vec<TermId>>),
    /// A state the rules could not answer about (an error): treated as terminal, every goal 0.
    Dead,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub state: State,
    pub parent: u32,
    pub first_child: u32,
    pub next_sibling: u32,
    /// The joint move from the parent that leads here (see [`Tree::joint_index`]).
    pub joint: u64,
    /// Simulations through the node, finished.
    pub visits: u32,
    /// Where the roles' moves start in `offsets` (`roles + 1` entries: role `r`'s moves are
    /// `edges[offsets[k + r]..offsets[k + r + 1]]`); `NONE` in a terminal node.
    pub offsets: u32,
    /// The table of children by joint move in `slots`, or `NONE`.
    pub slots: u32,
    /// Every role's goal, at `values[value..value + roles]`, when it is known: a terminal
    /// node's, or a node the solver proved. `NONE` otherwise.
    pub value: u32,
    /// The only role with more than one legal move (0 when none has), or `MULTI`.
    pub mover: u32,
}

/// Several roles have a choice (simultaneous moves), or chance does (the `random` role of a
/// GDL-II game, whose moves are not chosen to maximise anything: such a node is not solved).
pub(crate) const MULTI: u32 = u32::MAX;

pub(crate) struct Tree {
    pub roles: usize,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub offsets: Vec<u32>,
    pub slots: Vec<u32>,
    pub values: Vec<u8>,
    pub root: u32,
    /// The most moves (all roles') a node has had.
    pub largest: usize,
    /// The role that moves at random (GDL-II's `random`), or `NONE`.
    pub chance: u32,
}

impl Tree {
    pub fn new(roles: usize) -> Tree {
        Tree {
            roles,
            nodes: Vec::new(),
            edges: Vec::new(),
            offsets: Vec::new(),
            slots: Vec::new(),
            values: Vec::new(),
            root: NONE,
            largest: 0,
            chance: NONE,
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.offsets.clear();
        self.slots.clear();
        self.values.clear();
        self.root = NONE;
    }

    /// Adds a node; a child (`parent` not `NONE`) is linked to its parent.
    pub fn add(&mut self, state: State, parent: u32, joint: u64, outcome: Outcome) -> u32 {
        let id = self.nodes.len() as u32;
        let mut node = Node {
            state,
            parent,
            first_child: NONE,
            next_sibling: NONE,
            joint,
            visits: 0,
            offsets: NONE,
            slots: NONE,
            value: NONE,
            mover: 0,
        };
        match outcome {
            Outcome::Terminal(goals) => node.value = self.push_value(&goals),
            Outcome::Dead => node.value = self.push_value(&vec![0; self.roles]),
            Outcome::Moves(moves) => {
                node.offsets = self.offsets.len() as u32;
                let mut product = 1usize;
                let mut movers = 0;
                for (r, list) in moves.iter().enumerate() {
                    self.offsets.push(self.edges.len() as u32);
                    self.edges.extend(list.iter().map(|&mv| Edge {
                        mv,
                        n: 0,
                        vl: 0,
                        known: false,
                        goal: 0,
                        w: 0,
                    }));
                    if list.len() > 1 {
                        movers += 1;
                        node.mover = r as u32;
                    }
                    product = product.saturating_mul(list.len());
                }
                self.offsets.push(self.edges.len() as u32);
                if movers > 1 || (movers == 1 && node.mover == self.chance) {
                    node.mover = MULTI;
                }
                let moves: usize = moves.iter().map(Vec::len).sum();
                self.largest = self.largest.max(moves);
                if product <= SLOTS_PER_MOVE * moves {
                    node.slots = self.slots.len() as u32;
                    self.slots.resize(self.slots.len() + product, NONE);
                }
            }
        }
        let known = node.value != NONE;
        self.nodes.push(node);
        if parent != NONE {
            self.link(parent, id);
            if known {
                self.mark_known(id);
            }
        }
        id
    }

    /// A node's goals have become known: where its parent's choice is one role's, that
    /// role's move to it is marked known, with the role's goal.
    fn mark_known(&mut self, node: u32) {
        let n = &self.nodes[node as usize];
        let (parent, joint, value) = (n.parent, n.joint, n.value);
        if parent == NONE || value == NONE {
            return;
        }
        let mover = self.nodes[parent as usize].mover;
        if mover == MULTI {
            return;
        }
        // With one role choosing, the joint move's index is that role's move's.
        let e = self.moves(parent, mover as usize).start + joint as usize;
        self.edges[e].known = true;
        self.edges[e].goal = self.values[value as usize + mover as usize];
    }

    fn push_value(&mut self, goals: &[u8]) -> u32 {
        let at = self.values.len() as u32;
        self.values.extend_from_slice(goals);
        at
    }

    fn link(&mut self, parent: u32, child: u32) {
        let joint = self.nodes[child as usize].joint;
        let (first, slots) = {
            let p = &self.nodes[parent as usize];
            (p.first_child, p.slots)
        };
        self.nodes[child as usize].next_sibling = first;
        self.nodes[parent as usize].first_child = child;
        if slots != NONE {
            self.slots[slots as usize + joint as usize] = child;
        }
    }

    /// Role `role`'s moves at `node` (a node that is not terminal), as indices into `edges`.
    pub fn moves(&self, node: u32, role: usize) -> std::ops::Range<usize> {
        let k = self.nodes[node as usize].offsets as usize + role;
        self.offsets[k] as usize..self.offsets[k + 1] as usize
    }

    /// A joint move's index at `node`, from each role's move (its index among the role's
    /// moves): the mixed-radix number of the indices (role 0 the lowest digit) while the
    /// product of the move counts fits in 64 bits, so that the index of a move by the only
    /// role with a choice is that move's; beyond that, a 64-bit hash of the indices (two joint
    /// moves of one node would share a child only if their hashes collided).
    pub fn joint_index(&self, node: u32, choice: &[usize]) -> u64 {
        let counts = (0..choice.len()).map(|r| self.moves(node, r).len() as u64);
        if counts.clone().try_fold(1u64, u64::checked_mul).is_some() {
            let mut index = 0;
            let mut stride = 1;
            for (&i, count) in choice.iter().zip(counts) {
                index += i as u64 * stride;
                stride *= count;
            }
            index
        } else {
            // Too many joint moves to number: a hash of the indices (FxHash's steps).
            choice.iter().fold(0u64, |h, &i| {
                (h.rotate_left(5) ^ i as u64).wrapping_mul(0x517c_c1b7_2722_0a95)
            })
        }
    }

    /// The child of `node` by joint move `joint`, or `NONE`.
    pub fn child(&self, node: u32, joint: u64) -> u32 {
        let n = &self.nodes[node as usize];
        if n.slots != NONE {
            return self.slots[n.slots as usize + joint as usize];
        }
        let mut c = n.first_child;
        while c != NONE && self.nodes[c as usize].joint != joint {
            c = self.nodes[c as usize].next_sibling;
        }
        c
    }

    /// A node's known goals (terminal or proven), if any.
    pub fn value(&self, node: u32) -> Option<&[u8]> {
        let v = self.nodes[node as usize].value;
        (v != NONE).then(|| &self.values[v as usize..v as usize + self.roles])
    }

    /// Marks a node proven with these goals.
    pub fn prove(&mut self, node: u32, goals: &[u8]) {
        let at = self.push_value(goals);
        self.nodes[node as usize].value = at;
        self.mark_known(node);
    }

    /// The children of a node.
    pub fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let mut c = self.nodes[node as usize].first_child;
        std::iter::from_fn(move || {
            (c != NONE).then(|| {
                let out = c;
                c = self.nodes[c as usize].next_sibling;
                out
            })
        })
    }

    /// Keeps only `new_root` and, breadth first, those of its descendants whose visits are at
    /// least `min_visits`, at most `cap` nodes and `cap_moves` moves in all; everything else
    /// is freed. A node's visits are never fewer than a child's, so what is kept is a tree.
    pub fn compact(&mut self, new_root: u32, min_visits: u32, cap: usize, cap_moves: usize) {
        if new_root == NONE {
            self.clear();
            return;
        }
        // The nodes kept, breadth first (so a parent before its children).
        let mut order = vec![new_root];
        let mut new_id = vec![NONE; self.nodes.len()];
        new_id[new_root as usize] = 0;
        let mut moves = self.move_count(new_root);
        let mut k = 0;
        while k < order.len() {
            let mut c = self.nodes[order[k] as usize].first_child;
            k += 1;
            while c != NONE {
                let n = &self.nodes[c as usize];
                let more = self.move_count(c);
                if order.len() < cap && moves + more <= cap_moves && n.visits >= min_visits {
                    new_id[c as usize] = order.len() as u32;
                    order.push(c);
                    moves += more;
                }
                c = n.next_sibling;
            }
        }
        let old = std::mem::replace(self, Tree::new(self.roles));
        let out = self;
        out.largest = old.largest;
        out.chance = old.chance;
        out.nodes.reserve(order.len());
        let placeholder = old.nodes[new_root as usize].state.clone();
        let mut old_nodes = old.nodes;
        for &o in &order {
            let n = &mut old_nodes[o as usize];
            let state = std::mem::replace(&mut n.state, placeholder.clone());
            let is_root = o == new_root;
            let mut node = Node {
                state,
                parent: if is_root {
                    NONE
                } else {
                    new_id[n.parent as usize]
                },
                first_child: NONE,
                next_sibling: NONE,
                joint: if is_root { 0 } else { n.joint },
                visits: n.visits,
                offsets: NONE,
                slots: NONE,
                value: NONE,
                mover: n.mover,
            };
            if n.value != NONE {
                node.value = out.push_value(&old.values[n.value as usize..][..out.roles]);
            }
            if n.offsets != NONE {
                node.offsets = out.offsets.len() as u32;
                let base = out.edges.len() as u32;
                let at = n.offsets as usize;
                let first = old.offsets[at];
                for r in 0..=out.roles {
                    out.offsets.push(old.offsets[at + r] - first + base);
                }
                let end = old.offsets[at + out.roles];
                out.edges
                    .extend_from_slice(&old.edges[first as usize..end as usize]);
                if n.slots != NONE {
                    node.slots = out.slots.len() as u32;
                    let len: usize = (0..out.roles)
                        .map(|r| (old.offsets[at + r + 1] - old.offsets[at + r]) as usize)
                        .product();
                    out.slots.resize(out.slots.len() + len, NONE);
                }
            }
            let id = out.nodes.len() as u32;
            let parent = node.parent;
            out.nodes.push(node);
            if parent != NONE {
                out.link(parent, id);
            }
        }
        out.root = 0;
    }

    /// The moves (all roles') of a node.
    fn move_count(&self, node: u32) -> usize {
        let n = &self.nodes[node as usize];
        if n.offsets == NONE {
            return 0;
        }
        let at = n.offsets as usize;
        (self.offsets[at + self.roles] - self.offsets[at]) as usize
    }

    /// The least visits a node may have to be among the `keep` most visited (every node
    /// when there are no more than that).
    pub fn visits_threshold(&self, keep: usize) -> u32 {
        if self.nodes.len() <= keep || keep == 0 {
            return 0;
        }
        let mut visits: Vec<u32> = self.nodes.iter().map(|n| n.visits).collect();
        let k = visits.len() - keep;
        *visits.select_nth_unstable(k).1
    }
}

#[cfg(test)]
mod tests {
    use gdl_reason::StateMachine;

    use super::*;

    fn state() -> State {
        let mut m =
            crate::game::load("(role r) (init p) (legal r a) (<= terminal (true p)) (goal r 0)")
                .unwrap();
        m.initial_state().unwrap()
    }

    fn moves(counts: &[u32]) -> Outcome {
        Outcome::Moves(
            counts
                .iter()
                .map(|&c| (0..c).map(TermId).collect())
                .collect(),
        )
    }

    #[test]
    fn a_node_where_only_chance_chooses_is_not_one_roles_choice() {
        let mut t = Tree::new(2);
        t.chance = 1;
        // The random role alone has a choice: a chance node, never solved as a maximum.
        let dice = t.add(state(), NONE, 0, moves(&[1, 6]));
        assert_eq!(t.nodes[dice as usize].mover, MULTI);
        // The other role alone: its choice, as always.
        let mine = t.add(state(), NONE, 0, moves(&[3, 1]));
        assert_eq!(t.nodes[mine as usize].mover, 0);
        // Compaction keeps the chance role.
        t.root = dice;
        t.compact(dice, 0, usize::MAX, usize::MAX);
        assert_eq!(t.chance, 1);
        assert_eq!(t.nodes[t.root as usize].mover, MULTI);
    }

    #[test]
    fn joint_moves_are_numbered_and_the_only_movers_move_is_its_index() {
        let mut t = Tree::new(3);
        let root = t.add(state(), NONE, 0, moves(&[1, 7, 1]));
        assert_eq!(t.nodes[root as usize].mover, 1);
        for i in 0..7 {
            assert_eq!(t.joint_index(root, &[0, i, 0]), i as u64);
        }
        let both = t.add(state(), NONE, 0, moves(&[3, 4, 2]));
        assert_eq!(t.nodes[both as usize].mover, MULTI);
        let mut seen: Vec<u64> = (0..3)
            .flat_map(|a| (0..4).flat_map(move |b| (0..2).map(move |c| [a, b, c])))
            .map(|c| t.joint_index(both, &c))
            .collect();
        seen.sort();
        assert_eq!(seen, (0..24).collect::<Vec<u64>>());
    }

    #[test]
    fn too_many_joint_moves_to_number_are_hashed_apart() {
        // Six roles with 1000 moves each: 10^18 joint moves fit; eight do not.
        let mut t = Tree::new(8);
        let node = t.add(state(), NONE, 0, moves(&[1000; 8]));
        let a = t.joint_index(node, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let b = t.joint_index(node, &[2, 1, 3, 4, 5, 6, 7, 8]);
        let c = t.joint_index(node, &[1, 2, 3, 4, 5, 6, 7, 9]);
        assert!(a != b && a != c && b != c);
        assert_eq!(a, t.joint_index(node, &[1, 2, 3, 4, 5, 6, 7, 8]));
    }

    #[test]
    fn children_by_table_and_by_list() {
        let mut t = Tree::new(2);
        // 2 × 3 joint moves: a table; 100 × 100: a list.
        for counts in [[2, 3], [100, 100]] {
            let root = t.add(state(), NONE, 0, moves(&counts));
            let a = t.add(state(), root, 5, Outcome::Terminal(vec![100, 0]));
            let b = t.add(state(), root, 1, moves(&[1, 1]));
            assert_eq!(t.child(root, 5), a);
            assert_eq!(t.child(root, 1), b);
            assert_eq!(t.child(root, 0), NONE);
            assert_eq!(t.value(a), Some(&[100, 0][..]));
            assert_eq!(t.value(b), None);
            let mut kids: Vec<u32> = t.children(root).collect();
            kids.sort();
            assert_eq!(kids, [a, b]);
        }
    }

    #[test]
    fn compacting_keeps_a_subtree_and_its_statistics() {
        let mut t = Tree::new(1);
        let root = t.add(state(), NONE, 0, moves(&[3]));
        let kids: Vec<u32> = (0..3)
            .map(|j| t.add(state(), root, j, moves(&[2])))
            .collect();
        let grandchild = t.add(state(), kids[1], 1, Outcome::Terminal(vec![100]));
        for (k, &v) in kids.iter().zip(&[5, 40, 1]) {
            t.nodes[*k as usize].visits = v;
        }
        t.nodes[grandchild as usize].visits = 30;
        t.nodes[root as usize].visits = 46;
        let e = t.moves(kids[1], 0).start + 1;
        t.edges[e].n = 30;
        // Known: the terminal grandchild marked its move.
        assert!(t.edges[e].known && t.edges[e].goal == 100);
        // The most visited child becomes the root; its subtree stays.
        t.compact(kids[1], 0, usize::MAX, usize::MAX);
        assert_eq!(t.len(), 2);
        assert_eq!(t.root, 0);
        assert_eq!(t.nodes[0].parent, NONE);
        assert_eq!(t.nodes[0].visits, 40);
        let g = t.child(0, 1);
        assert_eq!(t.nodes[g as usize].visits, 30);
        assert_eq!(t.value(g), Some(&[100][..]));
        let e = t.moves(0, 0).start + 1;
        assert_eq!((t.edges[e].n, t.edges[e].known), (30, true));
        assert_eq!(t.child(0, 0), NONE);
        // Pruning: the three most visited of a fresh tree.
        let mut t = Tree::new(1);
        t.root = t.add(state(), NONE, 0, moves(&[3]));
        let root = t.root;
        t.nodes[root as usize].visits = 10;
        for (j, v) in [(0, 1), (1, 6), (2, 3)] {
            let c = t.add(state(), root, j, moves(&[1]));
            t.nodes[c as usize].visits = v;
        }
        let threshold = t.visits_threshold(3);
        assert_eq!(threshold, 3);
        t.compact(t.root, threshold, 3, usize::MAX);
        assert_eq!(t.len(), 3);
        assert_eq!(t.child(0, 0), NONE);
        assert_ne!(t.child(0, 1), NONE);
        assert_ne!(t.child(0, 2), NONE);
    }
}
