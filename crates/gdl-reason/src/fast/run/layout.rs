//! Laying a network out for [`Runtime`]: a pipeline of passes, each computing from the network
//! (and what the passes before it found) part of what the runtime keeps.
//!
//! 1. Frame fluents ([`Frame::new`]), and the gates only their next-state rules read, which
//!    are dead: not laid out at all ([`dead_gates`]).
//! 2. Lazy gates: what only `goal` and `sees` need ([`LazyGates::new`]); move sets
//!    ([`MoveSets::new`]).
//! 3. Guards ([`guards`]), and among the gates they guard the passive legal gates
//!    ([`passive_legal`]); each guard's list of armed gates and the passive lists
//!    ([`armed_lists`]).
//! 4. The edges propagation follows ([`successors`]), the triggers that keep legal moves and
//!    next-state bits ([`triggers`]), the blocks ([`blocks`]).
//! 5. The runtime assembled, what its propagation relies on checked
//!    ([`Runtime::check_layout`]), and every gate evaluated with every source false.

use rustc_hash::FxHashMap;

use super::frame::Frame;
use super::lazy::LazyGates;
use super::move_sets::{MoveSets, sets_of_moves};
use super::*;
use crate::fast::csr;
use crate::fast::net::{FALSE, Kind, Net, is_negated};

impl Runtime {
    /// Lays out a network. `flips` (how often each node changed value in some random
    /// playouts, from [`Runtime::take_flips`]) chooses the guards; without it they are chosen by
    /// successors.
    pub fn new(net: &Net, flips: Option<&[u32]>) -> Runtime {
        let block_of = net.block_of();
        let sets_of_moves = sets_of_moves(net, &block_of);
        let frame = Frame::new(net, &block_of, &sets_of_moves);
        let dead = dead_gates(net, &frame);
        let eager = eager_gates(net, &frame);
        let mut fanout = fanout(net);
        let lazy = LazyGates::new(net, &block_of, &dead, &eager, &fanout);
        let sets = MoveSets::new(net, &eager, &sets_of_moves, &dead);
        let gates = Gates {
            net,
            block_of: &block_of,
            dead: &dead,
            lazy: &lazy.is,
            sets: &sets.member,
        };
        // Edges into move sets and dead gates are not followed.
        for (k, ins) in net.inputs.iter().enumerate() {
            if gates.sets[k] || gates.dead[k] {
                for &r in ins {
                    fanout[node_of(r) as usize] -= 1;
                }
            }
        }
        let mut flags = vec![0u32; net.kinds.len()];
        let mut guards = guards(gates, &fanout, flips, &mut flags);
        let passive = passive_legal(gates, &frame, &fanout, &mut guards, &mut flags);
        let lists = armed_lists(&flags, &guards, &passive);
        let successors = successors(gates, &guards.guard);
        let triggers = triggers(net, &frame, &mut flags);
        let blocks = blocks(gates, &mut flags);
        assemble(
            net,
            Parts {
                frame,
                block_of,
                dead,
                lazy,
                sets,
                guards,
                passive,
                lists,
                successors,
                triggers,
                blocks,
                flags,
            },
        )
    }
}

/// How the passes after the first ones see each node: the network, the block of each node
/// (`NONE`: none), and whether it is a dead gate (not laid out), a lazy gate (evaluated when
/// `goal` or `sees` asks) or a move set (set like a source).
#[derive(Clone, Copy)]
struct Gates<'a> {
    net: &'a Net,
    block_of: &'a [u32],
    dead: &'a [bool],
    lazy: &'a [bool],
    sets: &'a [bool],
}

/// What `legal`, `terminal` and the next state (but frame fluents', except the conditions of
/// their sets of moves) read.
fn deciding<'a>(net: &'a Net, frame: &'a Frame) -> impl Iterator<Item = u32> + 'a {
    let other_next = net
        .next
        .iter()
        .enumerate()
        .filter(|&(f, _)| !frame.member(f))
        .map(|(_, &r)| node_of(r));
    net.legal
        .iter()
        .flatten()
        .map(|&(_, r)| node_of(r))
        .chain(other_next)
        .chain(frame.conds.iter().flat_map(|c| c.cond.map(node_of)))
        .chain(std::iter::once(node_of(net.terminal)))
}

/// The gates nothing reads but frame fluents' next-state rules (computed from bitsets
/// instead): they are not laid out at all.
fn dead_gates(net: &Net, frame: &Frame) -> Vec<bool> {
    let n = net.kinds.len();
    let live = net.cone(
        deciding(net, frame)
            .chain(net.goals.iter().flatten().map(|&(_, r)| node_of(r)))
            .chain(net.sees.iter().flatten().map(|&(_, r)| node_of(r))),
    );
    let dead: Vec<bool> = (0..n)
        .map(|k| !live[k] && matches!(net.kinds[k], Kind::And | Kind::Or))
        .collect();
    debug_assert!(
        (0..n).all(|k| dead[k] || net.inputs[k].iter().all(|&r| !dead[node_of(r) as usize])),
        "a live gate reads a dead one"
    );
    dead
}

/// What `legal`, `next` and `terminal` depend on: the gates outside it are lazy (only `goal`
/// and `sees` need them).
fn eager_gates(net: &Net, frame: &Frame) -> Vec<bool> {
    net.cone(
        deciding(net, frame)
            // A block reads its inputs' values when it is evaluated, so they must be
            // current: blocks (and all they depend on) are not lazy.
            .chain(
                net.blocks
                    .iter()
                    .flat_map(|&(start, len)| start..start + len),
            ),
    )
}

/// How many gates read each node.
fn fanout(net: &Net) -> Vec<u32> {
    let mut fanout = vec![0u32; net.kinds.len()];
    for ins in &net.inputs {
        for &r in ins {
            fanout[node_of(r) as usize] += 1;
        }
    }
    fanout
}

/// The guards: for each guarded gate its guard (a [`Ref`]; `NONE` for other nodes), and how
/// many gates each guard guards.
struct Guards {
    guard: Vec<u32>,
    guarded_by: Vec<u32>,
}

/// Chooses each AND gate's guard (see "Guarded gates" in [`super`]): with `flips`, the input
/// that flips more often than all the others together; without, the input with the most
/// successors (`fanout`: the edges propagation follows), if it has enough. Flags the gates
/// [`GUARDED`] and their guards [`IS_GUARD`].
fn guards(gates: Gates, fanout: &[u32], flips: Option<&[u32]>, flags: &mut [u32]) -> Guards {
    let net = gates.net;
    let n = net.kinds.len();
    let mut guard = vec![NONE; n];
    let mut guarded_by = vec![0u32; n];
    for (k, kind) in net.kinds.iter().enumerate() {
        if *kind != Kind::And
            || net.inputs[k].len() < 2
            || gates.lazy[k]
            || gates.block_of[k] != NONE
            || gates.dead[k]
        {
            continue;
        }
        let ins = &net.inputs[k];
        let chosen = match flips {
            // The input that flips more often than all the others together.
            Some(f) => {
                let flips_of = |r: Ref| u64::from(f[node_of(r) as usize]);
                let &best = ins.iter().max_by_key(|&&r| flips_of(r)).expect("inputs");
                let others: u64 = ins.iter().map(|&r| flips_of(r)).sum::<u64>() - flips_of(best);
                (flips_of(best) > others && fanout[node_of(best) as usize] >= GUARD_MIN_PROFILED)
                    .then_some(best)
            }
            // The input with the most successors, if it has enough.
            None => {
                let &best = ins
                    .iter()
                    .max_by_key(|&&r| fanout[node_of(r) as usize])
                    .expect("inputs");
                (fanout[node_of(best) as usize] >= GUARD_MIN).then_some(best)
            }
        };
        if let Some(best) = chosen {
            guard[k] = best;
            flags[k] |= GUARDED;
            flags[node_of(best) as usize] |= IS_GUARD;
            guarded_by[node_of(best) as usize] += 1;
        }
    }
    Guards { guard, guarded_by }
}

/// The passive legal gates and their lists (see "Passive legal gates" in [`super`]).
struct PassiveLegal {
    /// Each passive gate's list and number (`NONE` for other nodes), and each number's move.
    slot: Vec<u32>,
    number: Vec<u32>,
    moves: Vec<u32>,
    /// How many passive gates each list has.
    size: Vec<u32>,
    /// Each role's passive lists: the guard [`Ref`] and the list.
    role_passive: Vec<Vec<(Ref, u32)>>,
}

/// The guarded gates with no successors that are read only as one role's legal move: each
/// goes into the passive list of its guard and role, is flagged [`PASSIVE`], and is no longer
/// one of the gates its guard visits.
fn passive_legal(
    gates: Gates,
    frame: &Frame,
    fanout: &[u32],
    guards: &mut Guards,
    flags: &mut [u32],
) -> PassiveLegal {
    let net = gates.net;
    let n = net.kinds.len();
    let roles = net.legal.len();
    let mut legal_of = vec![NONE; n];
    let mut uses = vec![0u32; n];
    for list in &net.legal {
        for &(m, r) in list {
            uses[node_of(r) as usize] += 1;
            if !is_negated(r) {
                legal_of[node_of(r) as usize] = m;
            }
        }
    }
    for &r in net
        .next
        .iter()
        .chain(std::iter::once(&net.terminal))
        .chain(net.goals.iter().flatten().map(|(_, r)| r))
        .chain(net.sees.iter().flatten().map(|(_, r)| r))
    {
        uses[node_of(r) as usize] += 1;
    }
    // A frame fluent's condition is read by its value (a passive gate's is never set).
    for c in &frame.conds {
        for r in c.cond {
            uses[node_of(r) as usize] += 1;
        }
    }
    let guard = &guards.guard;
    let mut slots: FxHashMap<(Ref, u32), u32> = FxHashMap::default();
    let mut passive_guard = Vec::new();
    let mut size: Vec<u32> = Vec::new();
    let mut role_slots = vec![Vec::new(); roles];
    let mut slot = vec![NONE; n];
    let mut number = vec![NONE; n];
    let mut moves = Vec::new();
    for k in 0..n {
        let m = legal_of[k];
        if flags[k] & GUARDED == 0 || m == NONE || uses[k] != 1 || fanout[k] != 0 {
            continue;
        }
        let role = net.moves[m as usize].0;
        if role >= roles {
            continue;
        }
        let s = *slots.entry((guard[k], role as u32)).or_insert_with(|| {
            passive_guard.push(guard[k]);
            size.push(0);
            role_slots[role].push(passive_guard.len() as u32 - 1);
            passive_guard.len() as u32 - 1
        });
        size[s as usize] += 1;
        slot[k] = s;
        number[k] = moves.len() as u32;
        moves.push(m);
        flags[k] |= PASSIVE;
        guards.guarded_by[node_of(guard[k]) as usize] -= 1;
    }
    let role_passive = role_slots
        .iter()
        .map(|slots| {
            slots
                .iter()
                .map(|&s| (passive_guard[s as usize], s))
                .collect()
        })
        .collect();
    PassiveLegal {
        slot,
        number,
        moves,
        size,
        role_passive,
    }
}

/// Each guard's list of armed gates and the passive lists, as [`Runtime`] keeps them (its
/// `lists`, `guard_list`, `gate_at`, `armed_at` and `passive`), with the bits of `armed` and
/// the places of `passive_items` they take.
struct ArmedLists {
    lists: Vec<List>,
    guard_list: Vec<u32>,
    bits: u32,
    gate_at: Vec<u32>,
    armed_at: Vec<Armed>,
    passive: Vec<Span>,
    passive_places: u32,
}

/// Each guard's list, then the passive lists; a bit in its guard's list for each gate that is
/// guarded and not passive, in index order.
fn armed_lists(flags: &[u32], guards: &Guards, passive: &PassiveLegal) -> ArmedLists {
    let n = flags.len();
    let mut lists = Vec::new();
    let mut guard_list = vec![NONE; n];
    let mut bits = 0u32;
    for k in 0..n {
        if flags[k] & IS_GUARD != 0 {
            guard_list[k] = lists.len() as u32;
            lists.push(List {
                start: bits,
                size: guards.guarded_by[k],
                len: 0,
            });
            bits += guards.guarded_by[k];
        }
    }
    let mut spans = Vec::new();
    let mut total = 0u32;
    for &size in &passive.size {
        spans.push(Span {
            start: total,
            len: 0,
        });
        total += size;
    }
    let mut gate_at = vec![NONE; bits as usize];
    let mut next_bit: Vec<u32> = lists.iter().map(|l| l.start).collect();
    let armed_at: Vec<Armed> = (0..n)
        .map(|k| {
            if passive.slot[k] != NONE {
                Armed {
                    list: passive.slot[k],
                    at: passive.number[k],
                }
            } else if flags[k] & GUARDED != 0 {
                let list = guard_list[node_of(guards.guard[k]) as usize];
                let bit = next_bit[list as usize];
                next_bit[list as usize] += 1;
                gate_at[bit as usize] = k as u32;
                Armed { list, at: bit }
            } else {
                Armed {
                    list: NONE,
                    at: NONE,
                }
            }
        })
        .collect();
    ArmedLists {
        lists,
        guard_list,
        bits,
        gate_at,
        armed_at,
        passive: spans,
        passive_places: total,
    }
}

/// Each node's successors, `edges[out_start[k]..out_start[k + 1]]` (a successor's node
/// shifted left by one, the edge's negation in the low bit).
struct Successors {
    out_start: Vec<u32>,
    edges: Vec<u32>,
}

/// Successors, without the edges that propagation does not follow: from guards to the gates
/// they guard, into lazy gates (evaluated on demand), into blocks (which are marked instead),
/// into move sets (set like sources) and dead gates.
fn successors(gates: Gates, guard: &[u32]) -> Successors {
    let net = gates.net;
    let skip_edge = |k: usize, r: Ref| {
        guard[k] == r
            || gates.lazy[k]
            || gates.block_of[k] != NONE
            || gates.sets[k]
            || gates.dead[k]
    };
    let (out_start, edges) = csr(
        net.kinds.len(),
        net.inputs.iter().enumerate().flat_map(|(k, ins)| {
            ins.iter()
                .filter(move |&&r| !skip_edge(k, r))
                .map(move |&r| (node_of(r), ((k as u32) << 1) | (r & 1)))
        }),
    );
    Successors { out_start, edges }
}

/// The triggers of each node, `list[start[k]..start[k + 1]]`.
struct Triggers {
    start: Vec<u32>,
    list: Vec<u32>,
}

/// A trigger for each legal move (but the passive gates') and each next-state bit (but frame
/// fluents'), on the node that decides it; the nodes with triggers flagged [`HAS_TRIGGERS`].
fn triggers(net: &Net, frame: &Frame, flags: &mut [u32]) -> Triggers {
    let mut pending: Vec<(u32, u32)> = Vec::new();
    for list in &net.legal {
        for &(m, r) in list {
            if flags[node_of(r) as usize] & PASSIVE != 0 {
                continue;
            }
            let neg = if is_negated(r) { TRIGGER_NEGATED } else { 0 };
            pending.push((node_of(r), neg | m));
        }
    }
    for (f, &r) in net.next.iter().enumerate() {
        if !frame.member(f) {
            let neg = if is_negated(r) { TRIGGER_NEGATED } else { 0 };
            pending.push((node_of(r), neg | TRIGGER_NEXT | f as u32));
        }
    }
    pending.sort_unstable();
    for &(node, _) in &pending {
        flags[node as usize] |= HAS_TRIGGERS;
    }
    let (start, list) = csr(net.kinds.len(), pending.iter().copied());
    Triggers { start, list }
}

/// The blocks, as [`Runtime`] keeps them (its `block_start`, `block_len`, `member_base`,
/// `block_threshold`, `block_ext_start`, `block_ext`, `block_succ_start`, `block_succ`,
/// `mark_start` and `block_marks`), and the members of the largest.
struct Blocks {
    start: Vec<u32>,
    len: Vec<u32>,
    member_base: Vec<u32>,
    threshold: Vec<u32>,
    ext_start: Vec<u32>,
    ext: Vec<Ref>,
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    mark_start: Vec<u32>,
    marks: Vec<u32>,
    largest: usize,
}

/// The blocks' members: thresholds, inputs from outside, successors inside; and the blocks
/// each node must mark. Flags the nodes that mark blocks [`HAS_BLOCKS`], the members
/// [`BLOCK`], and each block's first member [`BLOCK_FIRST`].
fn blocks(gates: Gates, flags: &mut [u32]) -> Blocks {
    let (net, block_of) = (gates.net, gates.block_of);
    let mut start = Vec::with_capacity(net.blocks.len());
    let mut len = Vec::with_capacity(net.blocks.len());
    let mut member_base = Vec::with_capacity(net.blocks.len());
    let mut threshold = Vec::new();
    let mut ext_start = vec![0u32];
    let mut ext = Vec::new();
    let mut succ_lists: Vec<Vec<u32>> = Vec::new();
    let mut marks: Vec<(u32, u32)> = Vec::new();
    for &(first, size) in &net.blocks {
        start.push(first);
        len.push(size);
        member_base.push(threshold.len() as u32);
        let base = succ_lists.len();
        succ_lists.resize(base + size as usize, Vec::new());
        for k in first..first + size {
            let ins = &net.inputs[k as usize];
            threshold.push(match net.kinds[k as usize] {
                Kind::And => ins.len() as u32,
                _ => 1,
            });
            for &r in ins {
                let from = node_of(r);
                if block_of[from as usize] == block_of[k as usize] {
                    // Cycles are positive (the network refuses others).
                    succ_lists[base + (from - first) as usize].push(k - first);
                } else {
                    ext.push(r);
                    marks.push((from, first));
                }
            }
            ext_start.push(ext.len() as u32);
        }
    }
    let mut succ_start = vec![0u32];
    let mut succ = Vec::new();
    for list in &succ_lists {
        succ.extend_from_slice(list);
        succ_start.push(succ.len() as u32);
    }
    marks.sort_unstable();
    marks.dedup();
    for &(from, _) in &marks {
        flags[from as usize] |= HAS_BLOCKS;
    }
    let (mark_start, marks) = csr(net.kinds.len(), marks.iter().copied());
    for &(first, size) in &net.blocks {
        flags[first as usize] |= BLOCK_FIRST;
        for k in first..first + size {
            flags[k as usize] |= BLOCK;
        }
    }
    let largest = net
        .blocks
        .iter()
        .map(|&(_, size)| size as usize)
        .max()
        .unwrap_or(0);
    Blocks {
        start,
        len,
        member_base,
        threshold,
        ext_start,
        ext,
        succ_start,
        succ,
        mark_start,
        marks,
        largest,
    }
}

/// What the passes computed, for [`assemble`].
struct Parts {
    frame: Frame,
    block_of: Vec<u32>,
    dead: Vec<bool>,
    lazy: LazyGates,
    sets: MoveSets,
    guards: Guards,
    passive: PassiveLegal,
    lists: ArmedLists,
    successors: Successors,
    triggers: Triggers,
    blocks: Blocks,
    flags: Vec<u32>,
}

/// The runtime of the passes' results, checked, with its values for every source false.
fn assemble(net: &Net, parts: Parts) -> Runtime {
    let Parts {
        frame,
        block_of,
        dead,
        lazy,
        sets,
        guards,
        passive,
        lists,
        successors,
        triggers,
        blocks,
        flags,
    } = parts;
    let n = net.kinds.len();
    let roles = net.legal.len();
    let words = net.fluents.len().div_ceil(64);
    assert!(
        net.inputs.iter().all(|ins| ins.len() < MAX_INPUTS),
        "a gate with too many inputs for its counter"
    );
    let nodes = (0..=n)
        .map(|k| Node {
            word: flags.get(k).copied().unwrap_or(0),
            out_start: successors.out_start[k],
        })
        .collect();
    let mut rt = Runtime {
        nodes,
        edges: successors.edges,
        trig_start: triggers.start,
        triggers: triggers.list,
        guard: guards.guard,
        lists: lists.lists,
        armed: vec![0; lists.bits.div_ceil(64) as usize],
        gate_at: lists.gate_at,
        guard_list: lists.guard_list,
        armed_at: lists.armed_at,
        passive: lists.passive,
        passive_items: vec![0; lists.passive_places as usize],
        passive_pos: vec![NONE; passive.moves.len()],
        passive_move: passive.moves,
        role_passive: passive.role_passive,
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
        clear_inputs: net.outputs_see_moves,
        flips_seen: Vec::new(),
        lazy: lazy.entries,
        lazy_start: lazy.start,
        lazy_inputs: lazy.inputs,
        lazy_valid: false,
        sees_lazy: lazy.sees,
        sees_valid: false,
        tally: 0,
        cone_end: net.legal_cone as usize,
        deferred: false,
        block_start: blocks.start,
        block_len: blocks.len,
        member_base: blocks.member_base,
        block_threshold: blocks.threshold,
        block_ext_start: blocks.ext_start,
        block_ext: blocks.ext,
        block_succ_start: blocks.succ_start,
        block_succ: blocks.succ,
        block_of,
        mark_start: blocks.mark_start,
        block_marks: blocks.marks,
        set_width: sets.width,
        set_value: vec![0; sets.width],
        set_dirty: vec![0; sets.width.div_ceil(64)],
        set_node: sets.node,
        set_slot: sets.slot,
        set_bits: sets.bits,
        set_mask: sets.mask,
        on_slot: vec![NONE; roles],
        on_frame: vec![frame.zero; roles],
        frame_acc: vec![[0; 3]; frame.words.len()],
        frame,
        block_count: vec![0; blocks.largest],
        block_value: vec![false; blocks.largest],
        block_queue: Vec::with_capacity(blocks.largest),
    };
    rt.check_layout(n);
    rt.settle_from_scratch(net, &sets.member, &dead);
    rt
}

impl Runtime {
    /// Every source false: evaluates the gates in order (inputs come before their gates, and a
    /// block's members come together), but move sets (`in_sets`) and dead gates (`dead`),
    /// then the legal moves and next-state bits they give.
    fn settle_from_scratch(&mut self, net: &Net, in_sets: &[bool], dead: &[bool]) {
        for (k, kind) in net.kinds.iter().enumerate() {
            if self.nodes[k].word & BLOCK != 0 {
                if self.nodes[k].word & BLOCK_FIRST != 0 {
                    let b = self.block_of[k] as usize;
                    self.fixpoint(b);
                    let start = self.block_start[b] as usize;
                    for i in 0..self.block_len[b] as usize {
                        if self.block_value[i] {
                            self.nodes[start + i].word |= VALUE;
                        }
                    }
                }
                continue;
            }
            if in_sets[k] || dead[k] {
                // Every input is off: false (a move set's value is set like a source's); a dead
                // gate is never read.
                continue;
            }
            let ins = &net.inputs[k];
            let guarded = self.nodes[k].word & GUARDED != 0;
            let threshold = match kind {
                Kind::And => ins.len() as u32 - u32::from(guarded),
                Kind::Or => 1,
                Kind::False | Kind::Base(_) | Kind::Input(_) => continue,
            };
            let count = ins
                .iter()
                .filter(|&&r| !(guarded && self.guard[k] == r) && self.value(r))
                .count() as u32;
            let word = &mut self.nodes[k].word;
            *word = (*word & !COUNTER) | (HOLDS - threshold + count);
            let mut value = count >= threshold;
            if guarded {
                if value {
                    self.arm(k as u32, self.nodes[k].word);
                }
                value &= self.value(self.guard[k]);
            }
            if self.nodes[k].word & PASSIVE != 0 {
                continue;
            }
            if value {
                self.nodes[k].word |= VALUE;
            }
        }
        for list in &net.legal {
            for &(m, r) in list {
                if self.nodes[node_of(r) as usize].word & PASSIVE == 0 && self.value(r) {
                    self.add_legal(m);
                }
            }
        }
        for (f, &r) in net.next.iter().enumerate() {
            if !self.frame.member(f) && self.value(r) {
                self.next_bits[f / 64] |= 1 << (f % 64);
            }
        }
        self.settle_frame();
    }
}
