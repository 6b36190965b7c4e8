//! Bit-parallel playouts: [`LANES`] random playouts side by side, one bit of every node's
//! value each.
//!
//! A node's value is a word of `LANES` bits; a gate is evaluated for every lane at once with
//! word operations (an AND gate as the negated OR of its negated inputs, so that every gate is
//! one loop of `xor`s and `or`s without branches). A step evaluates the network in node order,
//! which is topological, in three parts: the gates `legal`, `terminal` and `next` need that do
//! not depend on the moves; the gates only `goal` needs, when some lane has reached a terminal
//! state; and the gates that depend on the moves, once every lane's moves are chosen.
//! Propagating only changes ([`super::run`]) visits fewer gates per step, but one at a time
//! and one playout at a time; here each gate costs a few word operations shared by `LANES`
//! playouts, which is cheaper for every game measured (see `docs/benchmarks.md`).
//!
//! Each lane's moves are drawn from its legal moves in two passes over the role's legal
//! gates (count, then take the one drawn): lane by lane, or, where the role has few legal
//! gates against the legal moves of all lanes, with bit-sliced counters (a word of lanes per
//! bit of every lane's count), a few word operations a gate for all lanes at once (the count
//! adds the gates four at a time through carry-save adders, so that a carry ripples through
//! the higher bits once every four gates). Both take the same moves from the same random
//! numbers.
//!
//! A lane that reaches a terminal state (or the step limit) starts again from the first state
//! at the next step, so all lanes stay busy. Blocks (gates in a positive cycle) are evaluated
//! by iterating them from false until nothing changes: their least fixpoint, lane by lane.

use rand::Rng;

use crate::machine::{Batch, MAX_LINE, Rollouts};
use crate::terms::TermId;

use super::net::{Kind, Net, Ref, node_of};

/// The cost of a gate in the bit-sliced passes, and of each of its counters' bits, counted in
/// legal moves of one lane in the lane-by-lane passes (from `perf annotate`: a word operation
/// on all lanes against some fifteen instructions a legal move; see `docs/benchmarks.md`).
const SLICED_GATE: u64 = 9;
const SLICED_PLANE: u64 = 1;

/// Words per value.
const W: usize = 8;
/// Playouts side by side.
pub const LANES: usize = 64 * W;

type V = [u64; W];
const ZERO: V = [0; W];
const NONE: u32 = u32::MAX;

/// What [`Lanes::run`] is asked for: playouts from `starts` (`count` of them, taken in turn),
/// how many and until when, each one's step limit, and where its results go.
pub struct LaneRun<'a, S> {
    pub starts: S,
    pub count: usize,
    pub limit: u64,
    pub deadline: Option<std::time::Instant>,
    pub max_steps: usize,
    pub record: Option<&'a mut Vec<LanePlayout>>,
    pub failed: &'a mut Option<LanePlayout>,
    pub per_start: Option<(&'a mut Rollouts, &'a [TermId])>,
}

/// `!0` for a negated reference, else 0.
#[inline(always)]
fn mask(r: u32) -> u64 {
    0u64.wrapping_sub(u64::from(r & 1))
}

#[inline(always)]
fn any(v: &V) -> bool {
    v.iter().any(|&w| w != 0)
}

#[inline(always)]
fn and(a: &V, b: &V) -> V {
    std::array::from_fn(|w| a[w] & b[w])
}

/// The number of lanes whose bit is set.
#[inline(always)]
fn popcount(v: &V) -> u64 {
    v.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// The value of a node reference in every lane.
#[inline(always)]
fn value(vals: &[V], r: Ref) -> V {
    let v = vals[node_of(r) as usize];
    let m = mask(r);
    std::array::from_fn(|w| v[w] ^ m)
}

/// Adds one to (`down` false) or subtracts one from (`down` true) the bit-sliced counters
/// `planes` in the lanes of `lanes`: a ripple of carries or borrows, stopped where none is
/// left (the counters have room, see [`Lanes::counts`], and are not zero where they go down).
#[inline(always)]
fn step_counters(planes: &mut [V], lanes: &V, down: bool) {
    let flip = if down { !0 } else { 0 };
    let mut carry = *lanes;
    for p in planes {
        let mut more = 0;
        for w in 0..W {
            let c = (p[w] ^ flip) & carry[w];
            p[w] ^= carry[w];
            carry[w] = c;
            more |= c;
        }
        if more == 0 {
            return;
        }
    }
}

/// Adds to the bit-sliced counters `planes` (at least three) the lanes of each of `x`, with
/// carry-save adders: the four values go into the ones and twos planes with three full adders
/// a word, and only what carries into the fours ripples on ([`step_counters`] costs a ripple a
/// value, through as many planes as the lanes' counters carry).
#[inline(always)]
fn add_four(planes: &mut [V], x: &[V; 4]) {
    let [ones, twos, rest @ ..] = planes else {
        unreachable!("at least three planes")
    };
    let mut fours = ZERO;
    for w in 0..W {
        // ones + x0 + x1 = 2 a + o; o + x2 + x3 = 2 b + ones'; twos + a + b = 2 fours + twos'.
        let u = ones[w] ^ x[0][w];
        let a = (ones[w] & x[0][w]) | (u & x[1][w]);
        let o = u ^ x[1][w];
        let u = o ^ x[2][w];
        let b = (o & x[2][w]) | (u & x[3][w]);
        ones[w] = u ^ x[3][w];
        let u = twos[w] ^ a;
        fours[w] = (twos[w] & a) | (u & b);
        twos[w] = u ^ b;
    }
    if any(&fours) {
        step_counters(rest, &fours, false);
    }
}

/// Calls `f` with every lane whose bit is set.
#[inline(always)]
fn for_lanes(v: &V, mut f: impl FnMut(usize)) {
    for (w, &word) in v.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

/// A gate: `vals[dst] = OR(inputs) ^ mask(out)`.
#[derive(Clone, Copy)]
struct Gate {
    dst: u32,
    start: u32,
    end: u32,
    out: u32,
}

/// A run of gates evaluated once in order, or a block iterated to its fixpoint.
#[derive(Clone, Copy)]
enum Piece {
    Gates(u32, u32),
    Block(u32, u32),
}

/// Why a batch of playouts stopped: in lane `lane`, a role with no legal move in a
/// non-terminal state, or a bad goal in a terminal one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LaneError {
    pub lane: usize,
    pub role: usize,
    pub kind: LaneErrorKind,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LaneErrorKind {
    NoLegalMove,
    /// The role's goal number `goal` is the one that holds, and it is not an integer 0–100.
    BadGoal {
        goal: usize,
    },
    NoGoal,
    /// Several goals hold.
    ManyGoals {
        count: usize,
    },
}

/// One lane's playout, as recorded for tests: its start, each step's joint move (move numbers) and each
/// role's number of legal moves, and the goals at the end (`None`: cut at the step limit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LanePlayout {
    /// The start it played from (its index among the batch's starts).
    pub start: usize,
    pub moves: Vec<Vec<u32>>,
    pub legal_counts: Vec<Vec<u32>>,
    pub goals: Option<Vec<u8>>,
}

/// The network compiled for bit-parallel evaluation, with its values.
#[derive(Clone)]
pub(crate) struct Lanes {
    gates: Vec<Gate>,
    refs: Vec<Ref>,
    /// The gates `legal`, `terminal` and `next` need that do not depend on the moves; those
    /// only `goal` needs; those that depend on the moves.
    core: Vec<Piece>,
    goal_only: Vec<Piece>,
    moved: Vec<Piece>,
    /// The base node of each fluent, the input node of each move (`NONE`: none).
    base: Vec<u32>,
    input: Vec<u32>,
    legal: Vec<Vec<(u32, Ref)>>,
    next: Vec<Ref>,
    terminal: Ref,
    /// Each role's goals: when each holds and its number (`None`: not an integer 0–100).
    goals: Vec<Vec<(Ref, Option<u8>)>>,
    /// Every node's value (allocated when playouts first run: `LANES` bits a node).
    vals: Vec<V>,
    nodes: usize,
    next_vals: Vec<V>,
    /// Input nodes switched on in this step.
    touched: Vec<u32>,
    /// Bit-sliced counters, a word of lanes per bit (plane `b`: bit `b` of every lane's
    /// count): how many legal moves each lane's role has, then how many of them to pass over
    /// before the one drawn. `planes[role]` are enough for the role's legal moves.
    planes: Vec<u32>,
    counts: Vec<V>,
    remaining: Vec<V>,
    /// The bit-sliced passes' cost for each role, in the lane-by-lane passes' legal moves.
    sliced_cost: Vec<u64>,
    /// A role's legal moves in this step, lane by lane: lane and move.
    pairs: Vec<(u32, u32)>,
    /// Each lane's moves so far (`MAX_LINE` each), when best lines are kept (allocated then).
    trace: Vec<u32>,
}

/// Which nodes depend on a move (a block as a whole, from its inputs from outside).
fn moved_nodes(net: &Net, block_of: &[u32]) -> Vec<bool> {
    let n = net.kinds.len();
    let mut moved = vec![false; n];
    let mut k = 0;
    while k < n {
        if block_of[k] != NONE {
            let (start, len) = net.blocks[block_of[k] as usize];
            let range = start as usize..(start + len) as usize;
            let dep = range.clone().any(|m| {
                net.inputs[m]
                    .iter()
                    .any(|&r| !range.contains(&(node_of(r) as usize)) && moved[node_of(r) as usize])
            });
            for m in range.clone() {
                moved[m] = dep;
            }
            k = range.end;
            continue;
        }
        moved[k] = matches!(net.kinds[k], Kind::Input(_))
            || net.inputs[k].iter().any(|&r| moved[node_of(r) as usize]);
        k += 1;
    }
    moved
}

/// What the outputs `roots` need, in reverse node order (a block as a whole).
fn cone_of(net: &Net, block_of: &[u32], roots: &mut dyn Iterator<Item = Ref>) -> Vec<bool> {
    let n = net.kinds.len();
    let mut need = vec![false; n];
    for r in roots {
        need[node_of(r) as usize] = true;
    }
    let mut k = n;
    while k > 0 {
        k -= 1;
        if block_of[k] != NONE {
            let (start, len) = net.blocks[block_of[k] as usize];
            let range = start as usize..(start + len) as usize;
            if range.clone().any(|m| need[m]) {
                for m in range.clone() {
                    need[m] = true;
                    for &r in &net.inputs[m] {
                        need[node_of(r) as usize] = true;
                    }
                }
            }
            k = range.start;
            continue;
        }
        if need[k] {
            for &r in &net.inputs[k] {
                need[node_of(r) as usize] = true;
            }
        }
    }
    need
}

impl Lanes {
    /// Compiles a network; `None` when `legal`, `terminal` or `goal` depend on the moves (the
    /// description breaks the restriction on `does`; such games are played one at a time).
    /// (A game has at least one role: the checker refuses one without, so every step of a
    /// recorded playout has its moves.)
    pub fn new(net: &Net, goal_numbers: &[Vec<Option<u8>>]) -> Option<Lanes> {
        if net.outputs_see_moves {
            return None;
        }
        let n = net.kinds.len();
        let block_of = net.block_of();
        let moved = moved_nodes(net, &block_of);
        let cone = |roots: &mut dyn Iterator<Item = Ref>| cone_of(net, &block_of, roots);
        let core_need = cone(
            &mut net
                .legal
                .iter()
                .flatten()
                .map(|&(_, r)| r)
                .chain(net.next.iter().copied())
                .chain(std::iter::once(net.terminal)),
        );
        let goal_need = cone(&mut net.goals.iter().flatten().map(|&(_, r)| r));

        // Bits enough to count each role's legal moves.
        let planes: Vec<u32> = net
            .legal
            .iter()
            .map(|list| (usize::BITS - list.len().leading_zeros()).max(1))
            .collect();
        let most = planes.iter().copied().max().unwrap_or(1) as usize;
        let mut lanes = Lanes {
            gates: Vec::new(),
            refs: Vec::new(),
            core: Vec::new(),
            goal_only: Vec::new(),
            moved: Vec::new(),
            base: net.base.iter().map(|&r| node_of(r)).collect(),
            input: net
                .input
                .iter()
                .map(|&r| if node_of(r) == 0 { NONE } else { node_of(r) })
                .collect(),
            legal: net.legal.clone(),
            next: net.next.clone(),
            terminal: net.terminal,
            goals: net
                .goals
                .iter()
                .zip(goal_numbers)
                .map(|(list, numbers)| {
                    list.iter()
                        .zip(numbers)
                        .map(|(&(_, r), &number)| (r, number))
                        .collect()
                })
                .collect(),
            vals: Vec::new(),
            nodes: n,
            next_vals: vec![ZERO; net.next.len()],
            touched: Vec::new(),
            sliced_cost: net
                .legal
                .iter()
                .zip(&planes)
                .map(|(list, &p)| list.len() as u64 * (SLICED_GATE + SLICED_PLANE * u64::from(p)))
                .collect(),
            planes,
            counts: vec![ZERO; most],
            remaining: vec![ZERO; most],
            pairs: Vec::new(),
            trace: Vec::new(),
        };
        // The pieces of each part, in node order.
        let mut k = 0;
        while k < n {
            let (range, is_block) = match block_of[k] {
                NONE => (k..k + 1, false),
                b => {
                    let (start, len) = net.blocks[b as usize];
                    (start as usize..(start + len) as usize, true)
                }
            };
            k = range.end;
            let first = range.start;
            if !matches!(net.kinds[first], Kind::And | Kind::Or) {
                continue;
            }
            let part = if core_need[first] && moved[first] {
                &mut lanes.moved
            } else if core_need[first] {
                &mut lanes.core
            } else if goal_need[first] {
                &mut lanes.goal_only
            } else {
                continue;
            };
            let from = lanes.gates.len() as u32;
            for m in range {
                let is_and = net.kinds[m] == Kind::And;
                let start = lanes.refs.len() as u32;
                // AND(x, y, …) = not OR(not x, not y, …).
                lanes
                    .refs
                    .extend(net.inputs[m].iter().map(|&r| r ^ u32::from(is_and)));
                lanes.gates.push(Gate {
                    dst: m as u32,
                    start,
                    end: lanes.refs.len() as u32,
                    out: u32::from(is_and),
                });
            }
            let to = lanes.gates.len() as u32;
            match (part.last_mut(), is_block) {
                (Some(Piece::Gates(_, end)), false) if *end == from => *end = to,
                (_, false) => part.push(Piece::Gates(from, to)),
                (_, true) => part.push(Piece::Block(from, to)),
            }
        }
        Some(lanes)
    }

    /// Makes every step choose moves bit-sliced (`true`) or lane by lane (`false`).
    #[cfg(test)]
    pub fn choose_sliced(&mut self, sliced: bool) {
        let cost = if sliced { 0 } else { u64::MAX };
        self.sliced_cost.fill(cost);
    }

    /// Allocates the nodes' values (`LANES` bits each) if not done yet; false when there is
    /// not the memory (the caller then plays one playout at a time).
    pub fn allocate(&mut self) -> bool {
        if self.vals.len() == self.nodes {
            return true;
        }
        let mut vals = Vec::new();
        if vals.try_reserve_exact(self.nodes).is_err() {
            return false;
        }
        vals.resize(self.nodes, ZERO);
        self.vals = vals;
        true
    }

    #[inline(always)]
    fn get(&self, r: Ref) -> V {
        value(&self.vals, r)
    }

    #[inline(always)]
    fn eval(vals: &[V], refs: &[Ref], g: Gate) -> V {
        let mut acc = ZERO;
        for &r in &refs[g.start as usize..g.end as usize] {
            let v = vals[node_of(r) as usize];
            let m = mask(r);
            for w in 0..W {
                acc[w] |= v[w] ^ m;
            }
        }
        let m = mask(g.out);
        std::array::from_fn(|w| acc[w] ^ m)
    }

    /// Evaluates `pieces`, with AVX2 where the processor has it (a word operation on all
    /// lanes then takes half the instructions).
    fn run_pieces(vals: &mut [V], gates: &[Gate], refs: &[Ref], pieces: &[Piece]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2.
            unsafe { Self::run_pieces_avx2(vals, gates, refs, pieces) };
            return;
        }
        Self::run_pieces_portable(vals, gates, refs, pieces);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_pieces_avx2(vals: &mut [V], gates: &[Gate], refs: &[Ref], pieces: &[Piece]) {
        Self::run_pieces_portable(vals, gates, refs, pieces);
    }

    #[inline(always)]
    fn run_pieces_portable(vals: &mut [V], gates: &[Gate], refs: &[Ref], pieces: &[Piece]) {
        for &piece in pieces {
            match piece {
                Piece::Gates(from, to) => {
                    for &g in &gates[from as usize..to as usize] {
                        vals[g.dst as usize] = Self::eval(vals, refs, g);
                    }
                }
                Piece::Block(from, to) => {
                    let block = &gates[from as usize..to as usize];
                    for g in block {
                        vals[g.dst as usize] = ZERO;
                    }
                    loop {
                        let mut changed = false;
                        for &g in block {
                            let v = Self::eval(vals, refs, g);
                            if v != vals[g.dst as usize] {
                                vals[g.dst as usize] = v;
                                changed = true;
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// `limit` random playouts, or as many as run until `deadline`, `LANES` at a time (at the
    /// deadline, playouts still running are dropped): playout `j` (in the order they start)
    /// from `starts(j % count)` (fluent bits). Each finished or cut playout is recorded in
    /// `record` if given; each start's results go to `per_start` if given (with each start's
    /// best line, in move numbers translated by `move_terms`, when it keeps them).
    ///
    /// With AVX2 where the processor has it: choosing the moves is word operations on all
    /// lanes too (the bit-sliced counters), and takes about as long as evaluating the gates.
    pub fn run<'s>(
        &mut self,
        job: LaneRun<'_, impl Fn(usize) -> &'s [u64]>,
        rng: &mut impl Rng,
    ) -> Result<Batch, LaneError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2.
            return unsafe { self.run_avx2(job, rng) };
        }
        self.run_portable(job, rng)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2<'s>(
        &mut self,
        job: LaneRun<'_, impl Fn(usize) -> &'s [u64]>,
        rng: &mut impl Rng,
    ) -> Result<Batch, LaneError> {
        self.run_portable(job, rng)
    }

    #[inline(always)]
    fn run_portable<'s>(
        &mut self,
        job: LaneRun<'_, impl Fn(usize) -> &'s [u64]>,
        rng: &mut impl Rng,
    ) -> Result<Batch, LaneError> {
        let LaneRun {
            starts,
            count,
            limit,
            deadline,
            max_steps,
            mut record,
            failed,
            mut per_start,
        } = job;
        let roles = self.legal.len();
        let mut tally = Batch {
            goal_sums: vec![0; roles],
            ..Batch::default()
        };
        if count == 0 {
            return Ok(tally);
        }
        let lines = per_start.as_ref().is_some_and(|(out, _)| out.keeps_lines());
        if lines && self.trace.len() != LANES * MAX_LINE {
            self.trace = vec![0; LANES * MAX_LINE];
        }
        let mut started = 0u64;
        let mut steps = [0usize; LANES];
        let mut origin = [0u32; LANES];
        let mut count_legal = [0u32; LANES];
        let mut pick = [0u32; LANES];
        // Each role's legal moves in all lanes in the step before (at first: as many as could
        // be).
        let mut legal_before = vec![u64::MAX; roles];
        let mut lane_goals = vec![[0u8; LANES]; if record.is_some() || lines { roles } else { 0 }];
        let mut current: Vec<LanePlayout> = if record.is_some() {
            vec![LanePlayout::default(); LANES]
        } else {
            Vec::new()
        };

        debug_assert_eq!(self.vals.len(), self.nodes, "Lanes::allocate first");
        // Start the first lanes.
        for &node in self.base.iter().chain(self.input.iter()) {
            if node != NONE {
                self.vals[node as usize] = ZERO;
            }
        }
        let mut active = ZERO;
        for lane in 0..LANES.min(usize::try_from(limit).unwrap_or(usize::MAX)) {
            active[lane / 64] |= 1 << (lane % 64);
            origin[lane] = (started % count as u64) as u32;
            started += 1;
            self.start_lane(starts(origin[lane] as usize), lane);
            if let Some(p) = current.get_mut(lane) {
                p.start = origin[lane] as usize;
            }
        }
        loop {
            if let Some(t) = deadline
                && std::time::Instant::now() >= t
            {
                break;
            }
            if !any(&active) {
                break;
            }
            Self::run_pieces(&mut self.vals, &self.gates, &self.refs, &self.core);
            let terminal = and(&self.get(self.terminal), &active);
            if any(&terminal) {
                Self::run_pieces(&mut self.vals, &self.gates, &self.refs, &self.goal_only);
                let sink = per_start.as_mut().map(|(out, _)| (&mut **out, &origin));
                if let Err(e) = self.read_goals(&terminal, &mut tally, &mut lane_goals, sink) {
                    *failed = current.get_mut(e.lane).map(std::mem::take);
                    return Err(e);
                }
                let n = popcount(&terminal);
                tally.finished += n;
                for_lanes(&terminal, |lane| tally.finished_steps += steps[lane] as u64);
                if let Some((out, move_terms)) = per_start.as_mut() {
                    for_lanes(&terminal, |lane| {
                        let o = origin[lane] as usize;
                        out.finished[o] += 1;
                        let goal = lane_goals.first().map_or(0, |g| g[lane]);
                        if lines
                            && steps[lane] <= MAX_LINE
                            && out.best_goal[o].is_none_or(|best| goal > best)
                        {
                            out.best_goal[o] = Some(goal);
                            let trace = &self.trace[lane * MAX_LINE..lane * MAX_LINE + steps[lane]];
                            out.best_line[o].clear();
                            out.best_line[o].extend(trace.iter().map(|&m| move_terms[m as usize]));
                        }
                    });
                }
            }
            // Lanes at the step limit.
            let mut cut = ZERO;
            if max_steps < usize::MAX {
                for_lanes(
                    &and(&active, &std::array::from_fn(|w| !terminal[w])),
                    |lane| {
                        if steps[lane] >= max_steps {
                            cut[lane / 64] |= 1 << (lane % 64);
                        }
                    },
                );
                tally.cut += popcount(&cut);
                if let Some((out, _)) = per_start.as_mut() {
                    for_lanes(&cut, |lane| out.cut[origin[lane] as usize] += 1);
                }
            }
            let done: V = std::array::from_fn(|w| terminal[w] | cut[w]);
            let moving: V = std::array::from_fn(|w| active[w] & !done[w]);
            if let Some(record) = record.as_deref_mut() {
                for_lanes(&done, |lane| {
                    let mut p = std::mem::take(&mut current[lane]);
                    if terminal[lane / 64] >> (lane % 64) & 1 == 1 {
                        p.goals = Some(lane_goals.iter().map(|g| g[lane]).collect());
                    }
                    record.push(p);
                });
            }
            // Every moving lane's moves: a random one of each lane's legal moves, in two passes
            // over the role's legal gates, the first counting each lane's legal moves, the
            // second taking in each lane the one drawn. Lane by lane, a pass costs an operation
            // for each legal move of each lane; bit-sliced (counters a word of lanes per bit),
            // a few word operations for each gate, for all lanes at once: the cheaper, by the
            // role's legal moves in the step before, is taken.
            for (role, before) in legal_before.iter_mut().enumerate() {
                let sliced = self.sliced_cost[role] < *before;
                let planes = self.planes[role] as usize;
                count_legal[..].fill(0);
                self.pairs.clear();
                if sliced {
                    let counts = &mut self.counts[..planes];
                    counts.fill(ZERO);
                    // Four at a time (a role with four legal gates or more has three planes
                    // or more, as `add_four` needs; with fewer, all go one at a time below).
                    let mut four = [ZERO; 4];
                    let mut held = 0;
                    for &(_, r) in &self.legal[role] {
                        let v = and(&value(&self.vals, r), &moving);
                        if any(&v) {
                            four[held] = v;
                            held += 1;
                            if held == 4 {
                                add_four(counts, &four);
                                held = 0;
                            }
                        }
                    }
                    for v in &four[..held] {
                        step_counters(counts, v, false);
                    }
                    *before = 0;
                    for (b, plane) in counts.iter().enumerate() {
                        *before += popcount(plane) << b;
                        for_lanes(plane, |lane| count_legal[lane] += 1 << b);
                    }
                } else {
                    for &(m, r) in &self.legal[role] {
                        let v = and(&value(&self.vals, r), &moving);
                        for_lanes(&v, |lane| {
                            count_legal[lane] += 1;
                            self.pairs.push((lane as u32, m));
                        });
                    }
                    *before = self.pairs.len() as u64;
                }
                let mut stuck = None;
                for_lanes(&moving, |lane| {
                    if count_legal[lane] == 0 {
                        stuck = stuck.or(Some(lane));
                    } else if count_legal[lane] == 1 {
                        pick[lane] = 0;
                    } else {
                        pick[lane] = rng.random_range(0..count_legal[lane]);
                    }
                });
                if let Some(lane) = stuck {
                    *failed = current.get_mut(lane).map(|p| {
                        // Without the moves of this step's earlier roles.
                        let mut p = std::mem::take(p);
                        p.moves.truncate(steps[lane]);
                        p.legal_counts.truncate(steps[lane]);
                        p
                    });
                    return Err(LaneError {
                        lane,
                        role,
                        kind: LaneErrorKind::NoLegalMove,
                    });
                }
                // What is kept of the move taken in a lane.
                let keeps = lines || !current.is_empty();
                let mut keep = |lane: usize, m: u32| {
                    if lines && steps[lane] < MAX_LINE {
                        self.trace[lane * MAX_LINE + steps[lane]] = m;
                    }
                    if let Some(p) = current.get_mut(lane) {
                        if p.moves.len() <= steps[lane] {
                            p.moves.push(vec![0; roles]);
                            p.legal_counts.push(vec![0; roles]);
                        }
                        p.moves[steps[lane]][role] = m;
                        p.legal_counts[steps[lane]][role] = count_legal[lane];
                    }
                };
                if !sliced {
                    for &(lane, m) in &self.pairs {
                        let lane = lane as usize;
                        if pick[lane] == 0 {
                            let node = self.input[m as usize];
                            if node != NONE {
                                self.vals[node as usize][lane / 64] |= 1 << (lane % 64);
                                self.touched.push(node);
                            }
                            if keeps {
                                keep(lane, m);
                            }
                        }
                        pick[lane] = pick[lane].wrapping_sub(1);
                    }
                    continue;
                }
                let remaining = &mut self.remaining[..planes];
                remaining.fill(ZERO);
                for_lanes(&moving, |lane| {
                    let mut k = pick[lane];
                    while k != 0 {
                        remaining[k.trailing_zeros() as usize][lane / 64] |= 1 << (lane % 64);
                        k &= k - 1;
                    }
                });
                let mut pending = moving;
                for &(m, r) in &self.legal[role] {
                    let v = and(&value(&self.vals, r), &pending);
                    if !any(&v) {
                        continue;
                    }
                    // The lanes where no legal move is left to pass over take this one.
                    let mut left = ZERO;
                    for plane in remaining.iter() {
                        for w in 0..W {
                            left[w] |= plane[w];
                        }
                    }
                    let chosen: V = std::array::from_fn(|w| v[w] & !left[w]);
                    if any(&chosen) {
                        let node = self.input[m as usize];
                        if node != NONE {
                            let val = &mut self.vals[node as usize];
                            for w in 0..W {
                                val[w] |= chosen[w];
                            }
                            self.touched.push(node);
                        }
                        if keeps {
                            for_lanes(&chosen, |lane| keep(lane, m));
                        }
                        pending = std::array::from_fn(|w| pending[w] & !chosen[w]);
                        if !any(&pending) {
                            break;
                        }
                    }
                    let passed: V = std::array::from_fn(|w| v[w] & !chosen[w]);
                    if any(&passed) {
                        step_counters(remaining, &passed, true);
                    }
                }
            }
            Self::run_pieces(&mut self.vals, &self.gates, &self.refs, &self.moved);
            // The next states; lanes that are done start again while playouts are wanted,
            // each from the start of its next playout.
            for f in 0..self.next.len() {
                self.next_vals[f] = and(&self.get(self.next[f]), &moving);
            }
            for f in 0..self.base.len() {
                self.vals[self.base[f] as usize] = self.next_vals[f];
            }
            let mut restart = ZERO;
            for_lanes(&done, |lane| {
                if started < limit {
                    restart[lane / 64] |= 1 << (lane % 64);
                    origin[lane] = (started % count as u64) as u32;
                    started += 1;
                    self.start_lane(starts(origin[lane] as usize), lane);
                    if let Some(p) = current.get_mut(lane) {
                        p.start = origin[lane] as usize;
                    }
                }
            });
            for &node in &self.touched {
                self.vals[node as usize] = ZERO;
            }
            self.touched.clear();
            for_lanes(&moving, |lane| steps[lane] += 1);
            for_lanes(&restart, |lane| steps[lane] = 0);
            tally.steps += popcount(&moving);
            active = std::array::from_fn(|w| moving[w] | restart[w]);
        }
        if let Some((out, _)) = per_start {
            out.steps += tally.steps;
        }
        Ok(tally)
    }

    /// Sets the fluents of `state` in `lane` (whose bits are clear).
    fn start_lane(&mut self, state: &[u64], lane: usize) {
        let bit = 1u64 << (lane % 64);
        for (w, &word) in state.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let f = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(&node) = self.base.get(f) {
                    self.vals[node as usize][lane / 64] |= bit;
                }
            }
        }
    }

    /// Adds the goals of the lanes in `terminal` to the tally (and to `lane_goals`, when
    /// recording). Where some lane's goals are wrong, the error is the first such lane's.
    fn read_goals(
        &self,
        terminal: &V,
        tally: &mut Batch,
        lane_goals: &mut [[u8; LANES]],
        mut per_start: Option<(&mut Rollouts, &[u32; LANES])>,
    ) -> Result<(), LaneError> {
        let holds = |r: Ref, lane: usize| self.get(r)[lane / 64] >> (lane % 64) & 1 == 1;
        for (role, goals) in self.goals.iter().enumerate() {
            let mut seen = ZERO;
            let mut twice = ZERO;
            for &(r, _) in goals {
                let v = and(&self.get(r), terminal);
                for w in 0..W {
                    twice[w] |= seen[w] & v[w];
                    seen[w] |= v[w];
                }
            }
            let mut wrong: V = std::array::from_fn(|w| twice[w] | (terminal[w] & !seen[w]));
            for &(r, number) in goals {
                if number.is_none() {
                    let v = and(&self.get(r), terminal);
                    for w in 0..W {
                        wrong[w] |= v[w];
                    }
                }
            }
            if any(&wrong) {
                let mut lane = usize::MAX;
                for_lanes(&wrong, |l| lane = lane.min(l));
                let count = goals.iter().filter(|&&(r, _)| holds(r, lane)).count();
                let kind = match count {
                    0 => LaneErrorKind::NoGoal,
                    1 => LaneErrorKind::BadGoal {
                        goal: goals.iter().position(|&(r, _)| holds(r, lane)).unwrap_or(0),
                    },
                    count => LaneErrorKind::ManyGoals { count },
                };
                return Err(LaneError { lane, role, kind });
            }
            for &(r, number) in goals {
                let v = and(&self.get(r), terminal);
                if !any(&v) {
                    continue;
                }
                let number = number.unwrap_or(0);
                let lanes = popcount(&v);
                tally.goal_sums[role] += lanes * u64::from(number);
                if let Some(g) = lane_goals.get_mut(role) {
                    for_lanes(&v, |lane| g[lane] = number);
                }
                if let Some((out, origin)) = per_start.as_mut() {
                    let roles = self.goals.len();
                    for_lanes(&v, |lane| {
                        out.goal_sums[origin[lane] as usize * roles + role] += u64::from(number);
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// Each lane's count, read from bit-sliced counters.
    fn counts(planes: &[V]) -> Vec<u64> {
        (0..LANES)
            .map(|lane| {
                planes
                    .iter()
                    .enumerate()
                    .map(|(b, p)| (p[lane / 64] >> (lane % 64) & 1) << b)
                    .sum()
            })
            .collect()
    }

    #[test]
    fn four_at_a_time_counts_what_one_at_a_time_does() {
        let mut rng = SmallRng::seed_from_u64(7);
        for (planes, inputs, density) in [(3, 7, 0.5), (5, 31, 0.3), (8, 200, 0.1), (8, 255, 0.9)] {
            let xs: Vec<V> = (0..inputs)
                .map(|_| {
                    std::array::from_fn(|_| {
                        (0..64).fold(0, |w, b| w | u64::from(rng.random_bool(density)) << b)
                    })
                })
                .collect();
            let mut one = vec![ZERO; planes];
            for x in &xs {
                step_counters(&mut one, x, false);
            }
            let mut four = vec![ZERO; planes];
            for chunk in xs.chunks(4) {
                match <&[V; 4]>::try_from(chunk) {
                    Ok(x) => add_four(&mut four, x),
                    Err(_) => chunk
                        .iter()
                        .for_each(|x| step_counters(&mut four, x, false)),
                }
            }
            let expected: Vec<u64> = (0..LANES)
                .map(|lane| {
                    xs.iter()
                        .filter(|x| x[lane / 64] >> (lane % 64) & 1 == 1)
                        .count() as u64
                })
                .collect();
            assert_eq!(counts(&one), expected, "{inputs} inputs one at a time");
            assert_eq!(counts(&four), expected, "{inputs} inputs four at a time");
        }
    }
}
