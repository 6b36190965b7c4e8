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
//! playouts, which is cheaper for every game measured (docs/benchmarks.md, "Bit-parallel
//! playouts: what they cost").
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
/// legal moves of one lane in the lane-by-lane passes: a word operation on all lanes against
/// the instructions a lane's legal move takes, as `perf annotate` counted them
/// (docs/benchmarks.md, "Bit-parallel playouts: what they cost").
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

/// Where the lanes are in [`Lanes::run`]: each lane's playout (its start, its steps, the move
/// being drawn), what is recorded of it, and the batch's tally.
struct Progress {
    roles: usize,
    /// Whether each start's best line is kept (the moves of each lane in `Lanes::trace`).
    lines: bool,
    /// Playouts started.
    started: u64,
    steps: [usize; LANES],
    origin: [u32; LANES],
    count_legal: [u32; LANES],
    pick: [u32; LANES],
    /// Each role's legal moves in all lanes in the step before (at first: as many as could
    /// be).
    legal_before: Vec<u64>,
    lane_goals: Vec<[u8; LANES]>,
    /// Each lane's playout, when they are recorded.
    current: Vec<LanePlayout>,
    tally: Batch,
}

impl Progress {
    fn new(roles: usize, lines: bool, recorded: bool) -> Progress {
        Progress {
            roles,
            lines,
            started: 0,
            steps: [0; LANES],
            origin: [0; LANES],
            count_legal: [0; LANES],
            pick: [0; LANES],
            legal_before: vec![u64::MAX; roles],
            lane_goals: vec![[0u8; LANES]; if recorded || lines { roles } else { 0 }],
            current: if recorded {
                vec![LanePlayout::default(); LANES]
            } else {
                Vec::new()
            },
            tally: Batch {
                goal_sums: vec![0; roles],
                ..Batch::default()
            },
        }
    }

    /// The moving lanes at the step limit, counted (per start too).
    #[inline(always)]
    fn cut(
        &mut self,
        active: &V,
        terminal: &V,
        max_steps: usize,
        per_start: &mut Option<(&mut Rollouts, &[TermId])>,
    ) -> V {
        let mut cut = ZERO;
        for_lanes(
            &and(active, &std::array::from_fn(|w| !terminal[w])),
            |lane| {
                if self.steps[lane] >= max_steps {
                    cut[lane / 64] |= 1 << (lane % 64);
                }
            },
        );
        self.tally.cut += popcount(&cut);
        if let Some((out, _)) = per_start.as_mut() {
            for_lanes(&cut, |lane| out.cut[self.origin[lane] as usize] += 1);
        }
        cut
    }

    /// Records the playouts of the lanes `done` (with their goals where `terminal`).
    fn record(&mut self, done: &V, terminal: &V, record: &mut Vec<LanePlayout>) {
        for_lanes(done, |lane| {
            let mut c = std::mem::take(&mut self.current[lane]);
            if terminal[lane / 64] >> (lane % 64) & 1 == 1 {
                c.goals = Some(self.lane_goals.iter().map(|g| g[lane]).collect());
            }
            record.push(c);
        });
    }

    /// Draws each moving lane's move among its `count_legal` (`pick`, from 0); the first lane
    /// with none, if any.
    #[inline(always)]
    fn draw(&mut self, moving: &V, rng: &mut impl Rng) -> Option<usize> {
        let mut stuck = None;
        for_lanes(moving, |lane| {
            if self.count_legal[lane] == 0 {
                stuck = stuck.or(Some(lane));
            } else if self.count_legal[lane] == 1 {
                self.pick[lane] = 0;
            } else {
                self.pick[lane] = rng.random_range(0..self.count_legal[lane]);
            }
        });
        stuck
    }

    /// Whether the moves taken are kept (in the best lines' trace, or the recorded playouts).
    #[inline(always)]
    fn keeps(&self) -> bool {
        self.lines || !self.current.is_empty()
    }

    /// Keeps move `m` of `role` taken in `lane`.
    #[inline(always)]
    fn keep(&mut self, trace: &mut [u32], role: usize, lane: usize, m: u32) {
        let step = self.steps[lane];
        if self.lines && step < MAX_LINE {
            trace[lane * MAX_LINE + step] = m;
        }
        if let Some(c) = self.current.get_mut(lane) {
            if c.moves.len() <= step {
                c.moves.push(vec![0; self.roles]);
                c.legal_counts.push(vec![0; self.roles]);
            }
            c.moves[step][role] = m;
            c.legal_counts[step][role] = self.count_legal[lane];
        }
    }
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
        let lines = per_start.as_ref().is_some_and(|(out, _)| out.keeps_lines());
        let mut p = Progress::new(roles, lines, record.is_some());
        if count == 0 {
            return Ok(p.tally);
        }
        if lines && self.trace.len() != LANES * MAX_LINE {
            self.trace = vec![0; LANES * MAX_LINE];
        }
        debug_assert_eq!(self.vals.len(), self.nodes, "Lanes::allocate first");
        let mut active = self.start_first_lanes(&starts, count, limit, &mut p);
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
                self.finish(&terminal, &mut p, &mut per_start, failed)?;
            }
            let cut = if max_steps < usize::MAX {
                p.cut(&active, &terminal, max_steps, &mut per_start)
            } else {
                ZERO
            };
            let done: V = std::array::from_fn(|w| terminal[w] | cut[w]);
            let moving: V = std::array::from_fn(|w| active[w] & !done[w]);
            if let Some(record) = record.as_deref_mut() {
                p.record(&done, &terminal, record);
            }
            for role in 0..roles {
                self.choose_moves(role, &moving, &mut p, rng, failed)?;
            }
            Self::run_pieces(&mut self.vals, &self.gates, &self.refs, &self.moved);
            active = self.advance(&done, &moving, &mut p, (&starts, count, limit));
        }
        if let Some((out, _)) = per_start {
            out.steps += p.tally.steps;
        }
        Ok(p.tally)
    }

    /// Clears the state and the moves, and starts the first playouts, one in each lane up to
    /// `limit`: the lanes active.
    #[inline(always)]
    fn start_first_lanes<'s>(
        &mut self,
        starts: &impl Fn(usize) -> &'s [u64],
        count: usize,
        limit: u64,
        p: &mut Progress,
    ) -> V {
        for &node in self.base.iter().chain(self.input.iter()) {
            if node != NONE {
                self.vals[node as usize] = ZERO;
            }
        }
        let mut active = ZERO;
        for lane in 0..LANES.min(usize::try_from(limit).unwrap_or(usize::MAX)) {
            active[lane / 64] |= 1 << (lane % 64);
            p.origin[lane] = (p.started % count as u64) as u32;
            p.started += 1;
            self.start_lane(starts(p.origin[lane] as usize), lane);
            if let Some(c) = p.current.get_mut(lane) {
                c.start = p.origin[lane] as usize;
            }
        }
        active
    }

    /// The lanes in `terminal` end their playouts: their goals read and tallied (per start
    /// too, with each start's best line when kept).
    #[inline(always)]
    fn finish(
        &mut self,
        terminal: &V,
        p: &mut Progress,
        per_start: &mut Option<(&mut Rollouts, &[TermId])>,
        failed: &mut Option<LanePlayout>,
    ) -> Result<(), LaneError> {
        Self::run_pieces(&mut self.vals, &self.gates, &self.refs, &self.goal_only);
        let sink = per_start.as_mut().map(|(out, _)| (&mut **out, &p.origin));
        if let Err(e) = self.read_goals(terminal, &mut p.tally, &mut p.lane_goals, sink) {
            *failed = p.current.get_mut(e.lane).map(std::mem::take);
            return Err(e);
        }
        p.tally.finished += popcount(terminal);
        for_lanes(terminal, |lane| {
            p.tally.finished_steps += p.steps[lane] as u64
        });
        let Some((out, move_terms)) = per_start.as_mut() else {
            return Ok(());
        };
        for_lanes(terminal, |lane| {
            let o = p.origin[lane] as usize;
            out.finished[o] += 1;
            let goal = p.lane_goals.first().map_or(0, |g| g[lane]);
            if p.lines
                && p.steps[lane] <= MAX_LINE
                && out.best_goal[o].is_none_or(|best| goal > best)
            {
                out.best_goal[o] = Some(goal);
                let trace = &self.trace[lane * MAX_LINE..lane * MAX_LINE + p.steps[lane]];
                out.best_line[o].clear();
                out.best_line[o].extend(trace.iter().map(|&m| move_terms[m as usize]));
            }
        });
        Ok(())
    }

    /// Every moving lane's move for `role`: a random one of each lane's legal moves, in two
    /// passes over the role's legal gates, the first counting each lane's legal moves, the
    /// second taking in each lane the one drawn. Lane by lane, a pass costs an operation for
    /// each legal move of each lane; bit-sliced (counters a word of lanes per bit), a few word
    /// operations for each gate, for all lanes at once: the cheaper, by the role's legal moves
    /// in the step before, is taken.
    #[inline(always)]
    fn choose_moves(
        &mut self,
        role: usize,
        moving: &V,
        p: &mut Progress,
        rng: &mut impl Rng,
        failed: &mut Option<LanePlayout>,
    ) -> Result<(), LaneError> {
        let sliced = self.sliced_cost[role] < p.legal_before[role];
        let planes = self.planes[role] as usize;
        p.count_legal[..].fill(0);
        self.pairs.clear();
        p.legal_before[role] = if sliced {
            self.count_sliced(role, moving, planes, &mut p.count_legal)
        } else {
            self.count_listed(role, moving, &mut p.count_legal)
        };
        if let Some(lane) = p.draw(moving, rng) {
            *failed = p.current.get_mut(lane).map(|c| {
                // Without the moves of this step's earlier roles.
                let mut c = std::mem::take(c);
                c.moves.truncate(p.steps[lane]);
                c.legal_counts.truncate(p.steps[lane]);
                c
            });
            return Err(LaneError {
                lane,
                role,
                kind: LaneErrorKind::NoLegalMove,
            });
        }
        if sliced {
            self.take_sliced(role, moving, planes, p);
        } else {
            self.take_listed(role, p);
        }
        Ok(())
    }

    /// Counts each moving lane's legal moves for `role` bit-sliced, in `planes` counters: the
    /// legal moves in all lanes.
    #[inline(always)]
    fn count_sliced(
        &mut self,
        role: usize,
        moving: &V,
        planes: usize,
        count_legal: &mut [u32; LANES],
    ) -> u64 {
        let counts = &mut self.counts[..planes];
        counts.fill(ZERO);
        // Four at a time (a role with four legal gates or more has three planes or more, as
        // `add_four` needs; with fewer, all go one at a time below).
        let mut four = [ZERO; 4];
        let mut held = 0;
        for &(_, r) in &self.legal[role] {
            let v = and(&value(&self.vals, r), moving);
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
        let mut legal = 0;
        for (b, plane) in counts.iter().enumerate() {
            legal += popcount(plane) << b;
            for_lanes(plane, |lane| count_legal[lane] += 1 << b);
        }
        legal
    }

    /// Counts each moving lane's legal moves for `role` lane by lane, each (lane, move) in
    /// `pairs`: the legal moves in all lanes.
    #[inline(always)]
    fn count_listed(&mut self, role: usize, moving: &V, count_legal: &mut [u32; LANES]) -> u64 {
        for &(m, r) in &self.legal[role] {
            let v = and(&value(&self.vals, r), moving);
            for_lanes(&v, |lane| {
                count_legal[lane] += 1;
                self.pairs.push((lane as u32, m));
            });
        }
        self.pairs.len() as u64
    }

    /// Sets in each lane the move of `role` drawn (the `pick`-th of its pairs).
    #[inline(always)]
    fn take_listed(&mut self, role: usize, p: &mut Progress) {
        let Lanes {
            pairs,
            input,
            vals,
            touched,
            trace,
            ..
        } = self;
        let keeps = p.keeps();
        for &(lane, m) in pairs.iter() {
            let lane = lane as usize;
            if p.pick[lane] == 0 {
                let node = input[m as usize];
                if node != NONE {
                    vals[node as usize][lane / 64] |= 1 << (lane % 64);
                    touched.push(node);
                }
                if keeps {
                    p.keep(trace, role, lane, m);
                }
            }
            p.pick[lane] = p.pick[lane].wrapping_sub(1);
        }
    }

    /// Sets in each lane the move of `role` drawn, bit-sliced: counters of the legal moves
    /// each lane has yet to pass over, a lane taking the legal move where it has none left.
    #[inline(always)]
    fn take_sliced(&mut self, role: usize, moving: &V, planes: usize, p: &mut Progress) {
        let Lanes {
            legal,
            input,
            vals,
            touched,
            trace,
            remaining,
            ..
        } = self;
        let remaining = &mut remaining[..planes];
        remaining.fill(ZERO);
        for_lanes(moving, |lane| {
            let mut k = p.pick[lane];
            while k != 0 {
                remaining[k.trailing_zeros() as usize][lane / 64] |= 1 << (lane % 64);
                k &= k - 1;
            }
        });
        let keeps = p.keeps();
        let mut pending = *moving;
        for &(m, r) in &legal[role] {
            let v = and(&value(vals, r), &pending);
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
                let node = input[m as usize];
                if node != NONE {
                    let val = &mut vals[node as usize];
                    for w in 0..W {
                        val[w] |= chosen[w];
                    }
                    touched.push(node);
                }
                if keeps {
                    for_lanes(&chosen, |lane| p.keep(trace, role, lane, m));
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

    /// The next states; lanes that are done start again while playouts are wanted, each from
    /// the start of its next playout (`starts`, their count and how many playouts in all).
    /// The lanes active after the step.
    #[inline(always)]
    fn advance<'s>(
        &mut self,
        done: &V,
        moving: &V,
        p: &mut Progress,
        (starts, count, limit): (&impl Fn(usize) -> &'s [u64], usize, u64),
    ) -> V {
        for f in 0..self.next.len() {
            self.next_vals[f] = and(&self.get(self.next[f]), moving);
        }
        for f in 0..self.base.len() {
            self.vals[self.base[f] as usize] = self.next_vals[f];
        }
        let mut restart = ZERO;
        for_lanes(done, |lane| {
            if p.started < limit {
                restart[lane / 64] |= 1 << (lane % 64);
                p.origin[lane] = (p.started % count as u64) as u32;
                p.started += 1;
                self.start_lane(starts(p.origin[lane] as usize), lane);
                if let Some(c) = p.current.get_mut(lane) {
                    c.start = p.origin[lane] as usize;
                }
            }
        });
        for &node in &self.touched {
            self.vals[node as usize] = ZERO;
        }
        self.touched.clear();
        for_lanes(moving, |lane| p.steps[lane] += 1);
        for_lanes(&restart, |lane| p.steps[lane] = 0);
        p.tally.steps += popcount(moving);
        std::array::from_fn(|w| moving[w] | restart[w])
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
