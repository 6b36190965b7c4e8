//! One search tree and the search that grows it: selection by decoupled UCT with virtual loss,
//! expansion of one node per simulation, rollouts in batches from many leaves, backpropagation,
//! the solver, the memory budget, and, in games of one role, the best line found.

use std::time::{Duration, Instant};

use gdl_reason::{ReasonError, Rollouts, StateMachine, TermId};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::tree::{MULTI, NONE, Outcome, Tree};
use crate::game::{Machine, State};

/// The exploration constant of UCB1 (rewards are goals scaled to 0–1).
const EXPLORATION: f64 = 0.7;
/// A rollout longer than this is cut, and counts as a draw (50 for every role).
pub(crate) const MAX_STEPS: usize = 1000;
/// The goal a cut rollout counts as, for every role.
const CUT_GOAL: u64 = 50;
/// The tree may hold this many moves (all roles') per node of its budget.
pub const MOVES_PER_NODE: usize = 32;
/// The most rollouts run from one leaf in a batch.
const MAX_ROLLOUTS_PER_LEAF: u32 = 32;
/// The fewest leaves a batch may select, however young the tree (with the most rollouts
/// from each, they fill the fast engine's 512 lanes).
const MIN_LEAVES: usize = 16;

/// How a search is bounded, besides time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// The most nodes the tree may hold.
    pub max_nodes: usize,
    /// Stop after this many simulations (rollouts and evaluations of known nodes).
    pub simulations: Option<u64>,
    /// Rollouts from each leaf: fixed, or (`None`) tuned from the time a leaf and a rollout
    /// take, so that selection and expansion cost about as much as the rollouts.
    pub rollouts_per_leaf: Option<u32>,
}

/// A search's results for the player's role at the root.
#[derive(Clone, Debug, Default)]
pub(crate) struct RootMoves {
    /// Each move of the role: the move, simulations through it, the sum of its goals over
    /// them, and its proven goal (the child's, where only this role has a choice).
    pub moves: Vec<(TermId, u64, u64, Option<u8>)>,
    /// The root's proven goals, if solved.
    pub proven: Option<Vec<u8>>,
    /// In a game of one role: the best goal reached and the moves reaching it from the root.
    pub best_line: Option<(u8, Vec<TermId>)>,
}

/// What one search did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Effort {
    /// Rollouts run.
    pub rollouts: u64,
    /// Simulations: rollouts, and evaluations of nodes whose goals were known.
    pub simulations: u64,
    /// Errors met (in expansions or rollouts), each treated as a loss for every role.
    pub errors: u64,
}

/// A leaf of a batch: the node, its path (`path_nodes[path..path + depth + 1]`, and
/// `path_edges[path_edge..]`, `roles` per step), and its rollouts' start (`NONE`: none).
#[derive(Clone, Copy)]
struct Leaf {
    node: u32,
    nodes_at: u32,
    edges_at: u32,
    depth: u32,
    start: u32,
}

pub(crate) struct Searcher {
    pub tree: Tree,
    role: usize,
    rng: SmallRng,
    limits: Limits,
    path_nodes: Vec<u32>,
    path_edges: Vec<u32>,
    leaves: Vec<Leaf>,
    starts: Vec<State>,
    rollouts: Rollouts,
    joint: Vec<TermId>,
    /// Each role's move at a node being descended (indices among the role's moves).
    choice: Vec<usize>,
    /// The role that moves at random (GDL-II's `random`): its moves are drawn uniformly.
    chance: Option<usize>,
    /// The slowest expansion seen, and the mean time of an expansion and of a rollout (in
    /// seconds), for timing and for tuning the rollouts per leaf.
    slowest_expansion: Duration,
    leaf_time: f64,
    rollout_time: f64,
    rollouts_per_leaf: u32,
    /// In a game of one role: the best goal reached from the root and its moves.
    best: Option<(u8, Vec<TermId>)>,
    /// Why the last error happened (for the log).
    pub last_error: Option<String>,
}

impl Searcher {
    pub fn new(roles: usize, role: usize, seed: u64, limits: Limits) -> Searcher {
        Searcher {
            tree: Tree::new(roles),
            role,
            rng: SmallRng::seed_from_u64(seed),
            limits,
            path_nodes: Vec::new(),
            path_edges: Vec::new(),
            leaves: Vec::new(),
            starts: Vec::new(),
            rollouts: {
                let mut r = Rollouts::default();
                r.keep_best = roles == 1;
                r
            },
            joint: Vec::new(),
            choice: Vec::new(),
            chance: None,
            slowest_expansion: Duration::ZERO,
            leaf_time: 0.0,
            rollout_time: 0.0,
            rollouts_per_leaf: limits.rollouts_per_leaf.unwrap_or(1).max(1),
            best: None,
            last_error: None,
        }
    }

    /// Makes `role` (GDL-II's `random`) a player of uniformly random moves: never a
    /// maximiser in selection nor in the solver. Before the first search.
    pub fn set_chance(&mut self, role: Option<usize>) {
        self.chance = role;
        self.tree.chance = role.map_or(NONE, |r| r as u32);
    }

    /// Makes the node of `state` the root: the root itself, a child or a grandchild of it (the
    /// subtree is kept, the rest freed), or a new tree.
    pub fn set_root(&mut self, machine: &mut Machine, state: &State) -> Result<(), ReasonError> {
        let t = &self.tree;
        // (A terminal or dead node cannot be the root of a search.)
        let is =
            |n: u32| t.nodes[n as usize].offsets != NONE && t.nodes[n as usize].state == *state;
        let mut found = NONE;
        if t.root != NONE {
            if is(t.root) {
                found = t.root;
            } else {
                'search: for c in t.children(t.root) {
                    if is(c) {
                        found = c;
                        break;
                    }
                    for g in t.children(c) {
                        if is(g) {
                            found = g;
                            break 'search;
                        }
                    }
                }
            }
        }
        if found == self.tree.root && found != NONE {
            return Ok(());
        }
        if found != NONE {
            // The best line still holds if it went this way.
            let moves = self.path_moves(found);
            self.best = self.best.take().and_then(|(goal, line)| {
                line.starts_with(&moves)
                    .then(|| (goal, line[moves.len()..].to_vec()))
            });
            self.tree.compact(found, 0, usize::MAX, usize::MAX);
            return Ok(());
        }
        self.tree.clear();
        self.best = None;
        let began = Instant::now();
        let outcome = outcome(machine, state)?;
        self.slowest_expansion = self.slowest_expansion.max(began.elapsed());
        self.tree.root = self.tree.add(state.clone(), NONE, 0, outcome);
        Ok(())
    }

    /// The moves of role 0 from the root to `node` (games of one role).
    fn path_moves(&self, node: u32) -> Vec<TermId> {
        let t = &self.tree;
        let mut moves = Vec::new();
        let mut n = node;
        while n != t.root && n != NONE {
            let p = t.nodes[n as usize].parent;
            if p == NONE {
                break;
            }
            // With one role, the joint move is the role's move number.
            let range = t.moves(p, 0);
            moves.push(t.edges[range.start + t.nodes[n as usize].joint as usize].mv);
            n = p;
        }
        moves.reverse();
        moves
    }

    /// Whether searching on could change anything: the root is not solved, and, in a game of
    /// one role, the best line does not already reach 100.
    pub fn open(&self) -> bool {
        self.tree.value(self.tree.root).is_none()
            && self.best.as_ref().is_none_or(|(goal, _)| *goal < 100)
    }

    /// Searches until `stop` (or the simulation limit, or nothing left to learn).
    pub fn search(&mut self, machine: &mut Machine, stop: Instant) -> Effort {
        let mut effort = Effort::default();
        let width = machine.parallel_playouts().max(1);
        while self.open() {
            if Instant::now() >= stop {
                break;
            }
            if let Some(limit) = self.limits.simulations
                && effort.simulations >= limit
            {
                break;
            }
            let mut per_leaf = if width > 1 { self.rollouts_per_leaf } else { 1 };
            let mut leaves = (width / per_leaf as usize).max(1);
            // A batch's leaves are all chosen on what the batches before it learnt: many
            // leaves from a young tree spread almost evenly (virtual loss keeps them apart),
            // and the search is nearly breadth-first. So at most the square root of the
            // root's visits (at least `MIN_LEAVES`), the lanes filled with more rollouts
            // from each (where they are tuned, not fixed).
            let young = (f64::from(self.tree.nodes[self.tree.root as usize].visits).sqrt()
                as usize)
                .max(MIN_LEAVES);
            if young < leaves {
                leaves = young;
                if self.limits.rollouts_per_leaf.is_none() {
                    per_leaf = ((width / leaves) as u32).clamp(per_leaf, MAX_ROLLOUTS_PER_LEAF);
                }
            }
            let budget = self.limits.max_nodes.max(8);
            let moves_budget = budget.saturating_mul(MOVES_PER_NODE);
            leaves = leaves
                .min(budget / 4)
                .min(moves_budget / (4 * self.tree.largest.max(1)))
                .max(1);
            if let Some(limit) = self.limits.simulations {
                let left = limit.saturating_sub(effort.simulations);
                leaves = leaves
                    .min(left.div_ceil(u64::from(per_leaf)) as usize)
                    .max(1);
            }
            if self.tree.len() + leaves > budget
                || self.tree.edges.len() + leaves * self.tree.largest > moves_budget
            {
                self.prune(budget / 2, moves_budget / 2);
            } else if self.tree.len() > MIN_PRUNED && memory_tight() {
                // The memory the search is charged to (a match's, a session's) is three
                // quarters used: the tree gives up its least visited half.
                self.prune(self.tree.len() / 2, self.tree.edges.len() / 2);
            }
            if !self.batch(machine, leaves, per_leaf, stop, &mut effort) {
                break;
            }
        }
        effort
    }

    /// Drops the least visited nodes, keeping at most `keep` nodes and `keep_moves` moves.
    fn prune(&mut self, keep: usize, keep_moves: usize) {
        let threshold = self.tree.visits_threshold(keep);
        self.tree
            .compact(self.tree.root, threshold, keep, keep_moves);
    }

    /// One batch: up to `count` leaves selected and expanded, `per_leaf` rollouts from each,
    /// run together, then backed up. False when it could not start (out of time).
    fn batch(
        &mut self,
        machine: &mut Machine,
        count: usize,
        per_leaf: u32,
        stop: Instant,
        effort: &mut Effort,
    ) -> bool {
        self.leaves.clear();
        self.starts.clear();
        self.path_nodes.clear();
        self.path_edges.clear();
        let began = Instant::now();
        let mut selected = 0;
        for _ in 0..count {
            if !self.open() {
                break;
            }
            let Some(leaf) = self.descend(machine, stop, effort) else {
                break;
            };
            selected += 1;
            if self.tree.value(leaf.node).is_some() {
                // Known goals: back them up now.
                let goals: Vec<u64> = self
                    .tree
                    .value(leaf.node)
                    .expect("known")
                    .iter()
                    .map(|&g| u64::from(g))
                    .collect();
                self.note_line(&leaf, goals[0] as u8, &[]);
                self.backup(&leaf, 1, &goals);
                effort.simulations += 1;
            } else {
                let mut leaf = leaf;
                leaf.start = self.starts.len() as u32;
                self.starts
                    .push(self.tree.nodes[leaf.node as usize].state.clone());
                self.leaves.push(leaf);
            }
        }
        if selected == 0 {
            return false;
        }
        let selecting = began.elapsed().as_secs_f64();
        if self.starts.is_empty() {
            return true;
        }
        let began = Instant::now();
        // A rollout step may take about as long as an expansion: leave room for one.
        let deadline = stop.checked_sub(self.slowest_expansion).unwrap_or(stop);
        let result = machine.playouts_from(
            &self.starts,
            per_leaf,
            MAX_STEPS,
            Some(deadline),
            &mut self.rng,
            &mut self.rollouts,
        );
        if let Err(e) = result {
            // Some rollout met an error: run the leaves one at a time to find whose (a leaf
            // alone is the one).
            effort.errors += 1;
            self.last_error = Some(e.to_string());
            if self.starts.len() == 1 {
                self.rollouts.reset(1, self.tree.roles);
                self.rollouts.finished[0] = 1;
            } else {
                self.rollouts_one_by_one(machine, per_leaf, deadline);
            }
        }
        let rolling = began.elapsed().as_secs_f64();
        let mut done = 0u64;
        let leaves = std::mem::take(&mut self.leaves);
        let roles = self.tree.roles;
        let mut sums = vec![0u64; roles];
        for leaf in &leaves {
            let i = leaf.start as usize;
            let finished = u64::from(self.rollouts.finished[i]);
            let cut = u64::from(self.rollouts.cut[i]);
            if finished + cut == 0 {
                self.undo(leaf);
                continue;
            }
            for (r, sum) in sums.iter_mut().enumerate() {
                *sum = self.rollouts.goal_sums_of(i)[r] + cut * CUT_GOAL;
            }
            if let Some(goal) = self.rollouts.best_goal[i] {
                let line = std::mem::take(&mut self.rollouts.best_line[i]);
                self.note_line(leaf, goal, &line);
                self.rollouts.best_line[i] = line;
            }
            self.backup(leaf, finished + cut, &sums);
            done += finished + cut;
        }
        self.leaves = leaves;
        effort.rollouts += done;
        effort.simulations += done;
        // Tune the rollouts per leaf: a leaf's selection and expansion against a rollout.
        if done > 0 && !self.leaves.is_empty() {
            let per_leaf_time = selecting / selected as f64;
            let per_rollout = rolling / done as f64;
            let smooth = |old: f64, new: f64| {
                if old == 0.0 {
                    new
                } else {
                    0.8 * old + 0.2 * new
                }
            };
            self.leaf_time = smooth(self.leaf_time, per_leaf_time);
            self.rollout_time = smooth(self.rollout_time, per_rollout);
            if self.limits.rollouts_per_leaf.is_none() && self.rollout_time > 0.0 {
                self.rollouts_per_leaf = ((self.leaf_time / self.rollout_time).ceil() as u32)
                    .clamp(1, MAX_ROLLOUTS_PER_LEAF);
            }
        }
        true
    }

    /// After a batch failed: each leaf's rollouts on their own; a leaf whose rollouts fail
    /// counts one simulation in which every role gets 0.
    fn rollouts_one_by_one(&mut self, machine: &mut Machine, per_leaf: u32, stop: Instant) {
        let roles = self.tree.roles;
        let n = self.starts.len();
        let mut all = Rollouts::default();
        all.keep_best = self.rollouts.keep_best;
        all.reset(n, roles);
        let mut one = all.clone();
        for i in 0..n {
            match machine.playouts_from(
                &self.starts[i..=i],
                per_leaf,
                MAX_STEPS,
                Some(stop),
                &mut self.rng,
                &mut one,
            ) {
                Ok(()) => {
                    all.finished[i] = one.finished[0];
                    all.cut[i] = one.cut[0];
                    all.goal_sums[i * roles..(i + 1) * roles].copy_from_slice(one.goal_sums_of(0));
                    all.best_goal[i] = one.best_goal[0];
                    all.best_line[i] = std::mem::take(&mut one.best_line[0]);
                }
                Err(_) => all.finished[i] = 1,
            }
        }
        self.rollouts = all;
    }

    /// Selects a path from the root by decoupled UCT (each role its own move, by its own
    /// goal), with virtual loss, and expands the first node not in the tree. `None` when out
    /// of time before an expansion (the path's virtual loss is taken back).
    fn descend(
        &mut self,
        machine: &mut Machine,
        stop: Instant,
        effort: &mut Effort,
    ) -> Option<Leaf> {
        let roles = self.tree.roles;
        let nodes_at = self.path_nodes.len() as u32;
        let edges_at = self.path_edges.len() as u32;
        let mut node = self.tree.root;
        let mut depth = 0u32;
        loop {
            self.path_nodes.push(node);
            if self.tree.value(node).is_some() {
                break;
            }
            // Each role's move.
            self.choice.clear();
            for r in 0..roles {
                let range = self.tree.moves(node, r);
                let i = self.choose(node, r);
                self.path_edges.push((range.start + i) as u32);
                self.tree.edges[range.start + i].vl += 1;
                self.choice.push(i);
            }
            let joint = self.tree.joint_index(node, &self.choice);
            depth += 1;
            let child = self.tree.child(node, joint);
            if child != NONE {
                node = child;
                continue;
            }
            // A new node: expand it, unless that might not end in time.
            if Instant::now() + self.slowest_expansion >= stop {
                let leaf = Leaf {
                    node,
                    nodes_at,
                    edges_at,
                    depth: depth - 1,
                    start: NONE,
                };
                // The last step's edges have virtual loss but no node: take it all back.
                self.undo_edges(edges_at as usize, self.path_edges.len());
                self.path_nodes.truncate(leaf.nodes_at as usize);
                self.path_edges.truncate(leaf.edges_at as usize);
                return None;
            }
            self.joint.clear();
            let first = self.path_edges.len() - roles;
            for k in first..self.path_edges.len() {
                let e = self.path_edges[k] as usize;
                self.joint.push(self.tree.edges[e].mv);
            }
            let began = Instant::now();
            let parent_state = self.tree.nodes[node as usize].state.clone();
            let made = machine
                .next_state(&parent_state, &self.joint)
                .and_then(|s| Ok((outcome(machine, &s)?, s)));
            self.slowest_expansion = self.slowest_expansion.max(began.elapsed());
            let child = match made {
                Ok((outcome, state)) => self.tree.add(state, node, joint, outcome),
                Err(e) => {
                    effort.errors += 1;
                    self.last_error = Some(e.to_string());
                    self.tree.add(parent_state, node, joint, Outcome::Dead)
                }
            };
            if self.tree.value(child).is_some() {
                self.solve(child);
            }
            self.path_nodes.push(child);
            node = child;
            break;
        }
        Some(Leaf {
            node,
            nodes_at,
            edges_at,
            depth,
            start: NONE,
        })
    }

    /// Role `role`'s move at `node` (an index among its moves), by UCB1 with virtual loss:
    /// a move never tried first (a random one of them), a move whose outcome is proven at
    /// its proven goal.
    fn choose(&mut self, node: u32, role: usize) -> usize {
        let t = &self.tree;
        let range = t.moves(node, role);
        if range.len() == 1 {
            return 0;
        }
        if self.chance == Some(role) {
            return self.rng.random_range(0..range.len());
        }
        // Known outcomes count where this role alone chooses.
        let solo = t.nodes[node as usize].mover == role as u32;
        let edges = &t.edges[range];
        let total: u64 = edges.iter().map(|e| u64::from(e.n + e.vl)).sum();
        let explore = EXPLORATION * (total.max(1) as f64).ln().sqrt();
        let mut best = 0;
        let mut best_score = f64::NEG_INFINITY;
        let mut untried = 0u32;
        for (i, e) in edges.iter().enumerate() {
            let visits = e.n + e.vl;
            let score = if solo && e.known {
                f64::from(e.goal) / 100.0
            } else if visits == 0 {
                // A random one of the untried moves (reservoir sampling).
                untried += 1;
                if untried == 1 || self.rng.random_range(0..untried) == 0 {
                    best = i;
                    best_score = f64::INFINITY;
                }
                continue;
            } else {
                let v = f64::from(visits);
                (e.w as f64 / 100.0 + explore * v.sqrt()) / v
            };
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        best
    }

    /// Backs up `count` simulations whose goals sum to `sums` (role by role) along a leaf's
    /// path, taking back its virtual loss.
    fn backup(&mut self, leaf: &Leaf, count: u64, sums: &[u64]) {
        let roles = self.tree.roles;
        let count32 = count.min(u64::from(u32::MAX)) as u32;
        for s in 0..=leaf.depth as usize {
            let node = self.path_nodes[leaf.nodes_at as usize + s];
            let n = &mut self.tree.nodes[node as usize];
            n.visits = n.visits.saturating_add(count32);
        }
        for k in 0..leaf.depth as usize * roles {
            let e = self.path_edges[leaf.edges_at as usize + k] as usize;
            let edge = &mut self.tree.edges[e];
            edge.vl -= 1;
            edge.n = edge.n.saturating_add(count32);
            edge.w += sums[k % roles];
        }
    }

    /// Takes back a leaf's virtual loss (its rollouts did not run).
    fn undo(&mut self, leaf: &Leaf) {
        let roles = self.tree.roles;
        let from = leaf.edges_at as usize;
        self.undo_edges(from, from + leaf.depth as usize * roles);
    }

    fn undo_edges(&mut self, from: usize, to: usize) {
        for k in from..to {
            let e = self.path_edges[k] as usize;
            self.tree.edges[e].vl -= 1;
        }
    }

    /// The solver: `node` has just become known; its parent is proven too when only one role
    /// has a choice there and this child gives that role 100, or every child is known (then
    /// the parent's goals are those of the child best for that role); and so on up.
    fn solve(&mut self, node: u32) {
        let mut n = node;
        loop {
            let t = &self.tree;
            let p = t.nodes[n as usize].parent;
            if p == NONE || t.value(p).is_some() {
                return;
            }
            let mover = t.nodes[p as usize].mover;
            if mover == MULTI {
                return;
            }
            let mover = mover as usize;
            let goals = t.value(n).expect("known");
            let proof = if goals[mover] == 100 {
                goals.to_vec()
            } else {
                // Every move known: the best for the mover (its child, if still in the tree).
                let range = t.moves(p, mover);
                let edges = &t.edges[range];
                if !edges.iter().all(|e| e.known) {
                    return;
                }
                let best = (0..edges.len())
                    .max_by_key(|&i| edges[i].goal)
                    .expect("a move");
                let c = t.child(p, best as u64);
                if c == NONE {
                    return;
                }
                match t.value(c) {
                    Some(v) => v.to_vec(),
                    None => return,
                }
            };
            self.tree.prove(p, &proof);
            n = p;
        }
    }

    /// In a game of one role: a leaf reached `goal` by the rollout `line` from it; keep the
    /// line from the root if it is the best yet.
    fn note_line(&mut self, leaf: &Leaf, goal: u8, line: &[TermId]) {
        if self.tree.roles != 1 || self.best.as_ref().is_some_and(|(b, _)| *b >= goal) {
            return;
        }
        let mut moves = Vec::with_capacity(leaf.depth as usize + line.len());
        for k in 0..leaf.depth as usize {
            let e = self.path_edges[leaf.edges_at as usize + k] as usize;
            moves.push(self.tree.edges[e].mv);
        }
        moves.extend_from_slice(line);
        self.best = Some((goal, moves));
    }

    /// The player's role's moves at the root, with what the search learnt of them.
    pub fn root_moves(&self) -> RootMoves {
        let t = &self.tree;
        let root = t.root;
        if root == NONE || t.nodes[root as usize].offsets == NONE {
            return RootMoves::default();
        }
        let solo = t.nodes[root as usize].mover == self.role as u32;
        let moves = t
            .moves(root, self.role)
            .map(|e| {
                let edge = &t.edges[e];
                let proven = (solo && edge.known).then_some(edge.goal);
                (edge.mv, u64::from(edge.n), edge.w, proven)
            })
            .collect();
        RootMoves {
            moves,
            proven: t.value(root).map(<[u8]>::to_vec),
            best_line: self.best.clone(),
        }
    }
}

/// What a state is: terminal with its goals, or every role's legal moves.
fn outcome(machine: &mut Machine, state: &State) -> gdl_reason::machine::Result<Outcome> {
    if machine.is_terminal(state)? {
        return Ok(Outcome::Terminal(machine.goals(state)?));
    }
    let moves = machine.all_legal_moves(state)?;
    if moves.iter().any(Vec::is_empty) {
        return Err(gdl_reason::ReasonError::Evaluation(
            "a role has no legal move in a non-terminal state".into(),
        ));
    }
    Ok(Outcome::Moves(moves))
}

/// A tree smaller than this is not pruned for memory (what fills the budget is not the tree).
const MIN_PRUNED: usize = 1024;

/// Whether the memory account the search is charged to is more than three quarters used.
fn memory_tight() -> bool {
    ggp_memory::current_usage().is_some_and(|(used, limit)| used > limit / 4 * 3)
}
