//! Running a network: every gate keeps a counter of its inputs that hold, offset so that the
//! top bit says whether the gate holds (it crosses `0x8000_0000` exactly when the output
//! flips). Only changes propagate: sources that change are marked dirty; dirty nodes are
//! visited in index order, which is a topological order (a gate comes after its inputs), so
//! each is visited once, after all its inputs have settled. A node whose value differs from
//! the value it last propagated (kept in its flags) updates its successors' counters and
//! marks dirty those whose top bit flipped; a gate that flips and flips back within one batch
//! costs nothing further. Legal moves and the next state's bits are kept up to date by
//! triggers on the nodes that decide them. Nothing is allocated once the network is built.
//!
//! **Guarded gates.** A proposition such as `(control white)` feeds thousands of AND gates
//! (every legal move of a chess player), yet when it flips only the few gates whose other
//! inputs all hold change value. An AND gate whose input with the most successors has at
//! least [`GUARD_MIN`] of them takes that input as its *guard*: the counter counts the other
//! inputs only, and the guard keeps a list of the gates it guards whose other inputs all hold
//! (they are *armed*). When the guard flips, only its armed gates are visited. A guarded
//! gate's value is `armed ∧ guard` (the guard's propagated value).

use super::net::{FALSE, Kind, Net, Ref, is_negated, node_of};

const TOP: u32 = 0x8000_0000;
/// An input that feeds at least this many AND gates guards them.
const GUARD_MIN: u32 = 24;
/// Trigger flags: the output is the node's value negated; the trigger sets a next-state bit
/// (otherwise it is a legal move).
const TRIGGER_NEGATED: u32 = 1 << 31;
const TRIGGER_NEXT: u32 = 1 << 30;
const TRIGGER_ID: u32 = (1 << 30) - 1;
/// Node flags.
const HAS_TRIGGERS: u32 = 1;
const GUARDED: u32 = 2;
const IS_GUARD: u32 = 4;
/// The value the node last propagated.
const VALUE: u32 = 0x80;
const NONE: u32 = u32::MAX;

/// What propagation reads and writes of a node, together (one cache line holds four).
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Node {
    /// The counter (top bit: the value; for a guarded gate, whether the inputs other than the
    /// guard all hold).
    counter: u32,
    /// [`HAS_TRIGGERS`], [`GUARDED`], [`IS_GUARD`], [`VALUE`].
    flags: u32,
    /// Successors: `edges[out_start..out_end]`, each `target << 1 | negated`.
    out_start: u32,
    out_end: u32,
}

/// The network laid out flat, with its values.
#[derive(Clone)]
pub(crate) struct Runtime {
    nodes: Vec<Node>,
    edges: Vec<u32>,
    /// Triggers of node `k`: `triggers[trig_start[k]..trig_start[k + 1]]`.
    trig_start: Vec<u32>,
    triggers: Vec<u32>,
    /// For a guarded gate: its guard (a [`Ref`]).
    guard: Vec<u32>,
    /// For a guard: its armed gates (`gate << 1 | negated guard`) are
    /// `armed[armed_start[k]..armed_start[k] + armed_len[k]]`; for a guarded gate, its place
    /// in its guard's list (`NONE`: not armed).
    armed_start: Vec<u32>,
    armed_len: Vec<u32>,
    armed_pos: Vec<u32>,
    armed: Vec<u32>,
    /// The role of each move, and its input node (`NONE`: none).
    move_role: Vec<u32>,
    move_node: Vec<u32>,
    /// The base node of each fluent (`NONE`: nothing reads it).
    base_node: Vec<u32>,
    /// Each role's legal moves, in no order, and the position of each move in its list.
    legal: Vec<Vec<u32>>,
    legal_pos: Vec<u32>,
    /// The next state's fluents and the current state's, a bit each.
    next_bits: Vec<u64>,
    pub cur_bits: Vec<u64>,
    /// The input each role has on (`NONE`: none).
    on: Vec<u32>,
    /// Nodes whose value may differ from the value they propagated: a bit each, and a bit
    /// for each word of those that is not zero.
    dirty: Vec<u64>,
    summary: Vec<u64>,
    flips: Vec<u32>,
    /// Whether `legal`, `goal` or `terminal` depend on the moves: then inputs are switched
    /// off after each transition, so that those are answered with no moves.
    clear_inputs: bool,
}

impl Runtime {
    pub fn new(net: &Net, roles: usize, clear_inputs: bool) -> Runtime {
        let n = net.kinds.len();
        let mut fanout = vec![0u32; n];
        for ins in &net.inputs {
            for &r in ins {
                fanout[node_of(r) as usize] += 1;
            }
        }
        // Guards: for each AND gate, its input with the most successors, if it has enough.
        let mut guard = vec![NONE; n];
        let mut flags = vec![0u32; n];
        let mut guarded_by = vec![0u32; n];
        for (k, kind) in net.kinds.iter().enumerate() {
            if *kind != Kind::And || net.inputs[k].len() < 2 {
                continue;
            }
            let &best = net.inputs[k]
                .iter()
                .max_by_key(|&&r| fanout[node_of(r) as usize])
                .expect("inputs");
            if fanout[node_of(best) as usize] >= GUARD_MIN {
                guard[k] = best;
                flags[k] |= GUARDED;
                flags[node_of(best) as usize] |= IS_GUARD;
                guarded_by[node_of(best) as usize] += 1;
            }
        }
        let mut armed_start = vec![NONE; n];
        let mut total = 0u32;
        for k in 0..n {
            if flags[k] & IS_GUARD != 0 {
                armed_start[k] = total;
                total += guarded_by[k];
            }
        }
        // Successors, without the edges from guards to the gates they guard.
        let is_guard_edge = |k: usize, r: Ref| guard[k] == r;
        let mut out_start = vec![0u32; n + 1];
        for (k, ins) in net.inputs.iter().enumerate() {
            for &r in ins {
                if !is_guard_edge(k, r) {
                    out_start[node_of(r) as usize + 1] += 1;
                }
            }
        }
        for k in 0..n {
            out_start[k + 1] += out_start[k];
        }
        let mut fill = out_start.clone();
        let mut edges = vec![0u32; out_start[n] as usize];
        for (k, ins) in net.inputs.iter().enumerate() {
            for &r in ins {
                if !is_guard_edge(k, r) {
                    let slot = &mut fill[node_of(r) as usize];
                    edges[*slot as usize] = ((k as u32) << 1) | (r & 1);
                    *slot += 1;
                }
            }
        }
        // Triggers.
        let mut pending: Vec<(u32, u32)> = Vec::new();
        for list in &net.legal {
            for &(m, r) in list {
                let neg = if is_negated(r) { TRIGGER_NEGATED } else { 0 };
                pending.push((node_of(r), neg | m));
            }
        }
        for (f, &r) in net.next.iter().enumerate() {
            let neg = if is_negated(r) { TRIGGER_NEGATED } else { 0 };
            pending.push((node_of(r), neg | TRIGGER_NEXT | f as u32));
        }
        pending.sort_unstable();
        let mut trig_start = vec![0u32; n + 1];
        for &(node, _) in &pending {
            trig_start[node as usize + 1] += 1;
            flags[node as usize] |= HAS_TRIGGERS;
        }
        for k in 0..n {
            trig_start[k + 1] += trig_start[k];
        }
        let triggers = pending.iter().map(|&(_, t)| t).collect();

        let words = net.fluents.len().div_ceil(64);
        let nodes = (0..n)
            .map(|k| Node {
                counter: 0,
                flags: flags[k],
                out_start: out_start[k],
                out_end: out_start[k + 1],
            })
            .collect();
        let mut rt = Runtime {
            nodes,
            edges,
            trig_start,
            triggers,
            guard,
            armed_start,
            armed_len: vec![0; n],
            armed_pos: vec![NONE; n],
            armed: vec![0; total as usize],
            move_role: net.moves.iter().map(|&(r, _)| r as u32).collect(),
            move_node: net
                .input
                .iter()
                .map(|&r| if r == FALSE { NONE } else { node_of(r) })
                .collect(),
            base_node: net.base.iter().map(|&r| node_of(r)).collect(),
            legal: vec![Vec::new(); roles],
            legal_pos: vec![NONE; net.moves.len()],
            next_bits: vec![0; words],
            cur_bits: vec![0; words],
            on: vec![NONE; roles],
            dirty: vec![0; n.div_ceil(64)],
            summary: vec![0; n.div_ceil(64 * 64)],
            flips: Vec::new(),
            clear_inputs,
        };
        // Every source false: evaluate the gates in order (inputs come before their gates).
        for (k, kind) in net.kinds.iter().enumerate() {
            let ins = &net.inputs[k];
            let guarded = rt.nodes[k].flags & GUARDED != 0;
            let threshold = match kind {
                Kind::And => ins.len() as u32 - u32::from(guarded),
                Kind::Or => 1,
                Kind::False | Kind::Base(_) | Kind::Input(_) => continue,
            };
            let count = ins
                .iter()
                .filter(|&&r| !(guarded && rt.guard[k] == r) && rt.value(r))
                .count() as u32;
            rt.nodes[k].counter = TOP - threshold + count;
            let mut value = count >= threshold;
            if guarded {
                if value {
                    rt.arm(k as u32);
                }
                value &= rt.value(rt.guard[k]);
            }
            if value {
                rt.nodes[k].flags |= VALUE;
            }
        }
        for list in &net.legal {
            for &(m, r) in list {
                if rt.value(r) {
                    rt.add_legal(m);
                }
            }
        }
        for (f, &r) in net.next.iter().enumerate() {
            if rt.value(r) {
                rt.next_bits[f / 64] |= 1 << (f % 64);
            }
        }
        rt
    }

    /// The value of a node reference (the network is settled between calls).
    pub fn value(&self, r: Ref) -> bool {
        ((self.nodes[node_of(r) as usize].flags >> 7) ^ (r & 1)) == 1
    }

    pub fn legal(&self, role: usize) -> &[u32] {
        &self.legal[role]
    }

    fn add_legal(&mut self, m: u32) {
        let role = self.move_role[m as usize] as usize;
        if role >= self.legal.len() || self.legal_pos[m as usize] != NONE {
            return;
        }
        self.legal_pos[m as usize] = self.legal[role].len() as u32;
        self.legal[role].push(m);
    }

    fn remove_legal(&mut self, m: u32) {
        let role = self.move_role[m as usize] as usize;
        let pos = self.legal_pos[m as usize];
        if role >= self.legal.len() || pos == NONE {
            return;
        }
        let list = &mut self.legal[role];
        let last = list.pop().expect("the move is in the list");
        if last != m {
            list[pos as usize] = last;
            self.legal_pos[last as usize] = pos;
        }
        self.legal_pos[m as usize] = NONE;
    }

    /// Adds a guarded gate to its guard's armed list.
    fn arm(&mut self, gate: u32) {
        let g = self.guard[gate as usize];
        let guard = node_of(g) as usize;
        let len = self.armed_len[guard];
        self.armed[(self.armed_start[guard] + len) as usize] = (gate << 1) | (g & 1);
        self.armed_pos[gate as usize] = len;
        self.armed_len[guard] = len + 1;
    }

    /// Removes a guarded gate from its guard's armed list.
    fn disarm(&mut self, gate: u32) {
        let guard = node_of(self.guard[gate as usize]) as usize;
        let pos = self.armed_pos[gate as usize];
        let start = self.armed_start[guard];
        let last = self.armed_len[guard] - 1;
        let moved = self.armed[(start + last) as usize];
        self.armed[(start + pos) as usize] = moved;
        self.armed_pos[(moved >> 1) as usize] = pos;
        self.armed_len[guard] = last;
        self.armed_pos[gate as usize] = NONE;
    }

    #[inline]
    fn fire(&mut self, node: usize, value: u32) {
        let (start, end) = (self.trig_start[node], self.trig_start[node + 1]);
        for k in start..end {
            let t = self.triggers[k as usize];
            let on = (value ^ (t >> 31)) == 1;
            let id = t & TRIGGER_ID;
            if t & TRIGGER_NEXT != 0 {
                let (w, b) = (id as usize / 64, id % 64);
                if on {
                    self.next_bits[w] |= 1 << b;
                } else {
                    self.next_bits[w] &= !(1 << b);
                }
            } else if on {
                self.add_legal(id);
            } else {
                self.remove_legal(id);
            }
        }
    }

    #[inline]
    fn mark(&mut self, node: usize) {
        self.dirty[node / 64] |= 1 << (node % 64);
        self.summary[node / 4096] |= 1 << ((node / 64) % 64);
    }

    /// Propagates the changes of the dirty nodes, in index order.
    fn run(&mut self) {
        let mut sw = 0;
        while sw < self.summary.len() {
            let s = self.summary[sw];
            if s == 0 {
                sw += 1;
                continue;
            }
            let w = sw * 64 + s.trailing_zeros() as usize;
            let d = self.dirty[w];
            if d == 0 {
                self.summary[sw] = s & (s - 1);
                continue;
            }
            self.dirty[w] = d & (d - 1);
            let node = w * 64 + d.trailing_zeros() as usize;
            let Node {
                counter,
                flags,
                out_start,
                out_end,
            } = self.nodes[node];
            let mut value = counter >> 31;
            if flags & GUARDED != 0 {
                let g = self.guard[node];
                value &= (self.nodes[node_of(g) as usize].flags >> 7) ^ (g & 1);
            }
            if value == (flags >> 7) & 1 {
                continue;
            }
            self.nodes[node].flags = flags ^ VALUE;
            if flags & HAS_TRIGGERS != 0 {
                self.fire(node, value);
            }
            if flags & IS_GUARD != 0 {
                let start = self.armed_start[node] as usize;
                let len = self.armed_len[node] as usize;
                for k in start..start + len {
                    let gate = (self.armed[k] >> 1) as usize;
                    self.mark(gate);
                }
            }
            for i in out_start as usize..out_end as usize {
                let e = self.edges[i];
                let target = (e >> 1) as usize;
                let t = &mut self.nodes[target];
                let old = t.counter;
                let new = if (value ^ e) & 1 != 0 {
                    old + 1
                } else {
                    old - 1
                };
                t.counter = new;
                if (old ^ new) & TOP != 0 {
                    if t.flags & GUARDED != 0 {
                        if new & TOP != 0 {
                            self.arm(target as u32);
                        } else {
                            self.disarm(target as u32);
                        }
                    }
                    self.mark(target);
                }
            }
        }
    }

    /// Sets a source node; the change propagates at the next [`Runtime::run`].
    fn set(&mut self, node: u32, on: bool) {
        self.nodes[node as usize].counter = if on { TOP } else { 0 };
        self.mark(node as usize);
    }

    /// Makes `bits` the current state.
    pub fn load(&mut self, bits: &[u64]) {
        for (w, &word) in bits.iter().enumerate() {
            let mut diff = word ^ self.cur_bits[w];
            while diff != 0 {
                let b = diff.trailing_zeros();
                diff &= diff - 1;
                let f = w * 64 + b as usize;
                let node = self.base_node[f];
                self.cur_bits[w] ^= 1 << b;
                if node != NONE {
                    self.set(node, self.cur_bits[w] >> b & 1 == 1);
                }
            }
        }
        self.run();
    }

    /// Sets the moves being made: `moves[r]` for role `r` (a move number).
    pub fn set_moves(&mut self, moves: &[u32]) {
        for (role, &m) in moves.iter().enumerate() {
            let node = self.move_node[m as usize];
            let old = self.on[role];
            if old != node {
                if old != NONE {
                    self.set(old, false);
                }
                if node != NONE {
                    self.set(node, true);
                }
                self.on[role] = node;
            }
        }
        self.run();
    }

    fn clear_moves(&mut self) {
        for role in 0..self.on.len() {
            let old = self.on[role];
            if old != NONE {
                self.set(old, false);
                self.on[role] = NONE;
            }
        }
        self.run();
    }

    /// Moves to the next state, given the moves set with [`Runtime::set_moves`].
    pub fn advance(&mut self) {
        let mut flips = std::mem::take(&mut self.flips);
        flips.clear();
        for w in 0..self.cur_bits.len() {
            let mut diff = self.next_bits[w] ^ self.cur_bits[w];
            while diff != 0 {
                let b = diff.trailing_zeros();
                diff &= diff - 1;
                flips.push((w * 64) as u32 + b);
            }
        }
        if self.clear_inputs {
            self.clear_moves();
        }
        for &f in &flips {
            let (w, b) = (f as usize / 64, f % 64);
            self.cur_bits[w] ^= 1 << b;
            let node = self.base_node[f as usize];
            if node != NONE {
                self.set(node, self.cur_bits[w] >> b & 1 == 1);
            }
        }
        self.run();
        self.flips = flips;
    }
}
