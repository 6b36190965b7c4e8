//! Running a network: every gate keeps a counter of its inputs that hold, offset so that
//! bit 23 says whether the gate holds (it crosses `1 << 23` exactly when the output flips;
//! the flags sit above it, in the same word). Only changes propagate: sources that change are
//! marked dirty (those nothing is propagated from take their value when set); dirty nodes are
//! visited in index order, which is a topological order (a gate comes after its inputs), so
//! each is visited once, after all its inputs have settled. A node whose value differs from
//! the value it last propagated (kept in its flags) updates its successors' counters and
//! marks dirty those whose top bit flipped (but a guarded gate whose value cannot change, see
//! "Guarded gates"); a gate that flips and flips back within one batch
//! costs nothing further. Legal moves and the next state's bits (but frame fluents', below)
//! are kept up to date by triggers on the nodes that decide them. Nothing is allocated once
//! the network is built.
//!
//! **Guarded gates.** A proposition such as `(control white)` feeds thousands of AND gates
//! (every legal move of a chess player), yet when it flips only the few gates whose other
//! inputs all hold change value. An AND gate may take one input as its *guard*: the input
//! that flips more often than all the others together, in random playouts run when the
//! machine is built (or, without such a profile, its input with the most successors, if it
//! has at least [`GUARD_MIN`]). The counter counts the other inputs only, and the guard keeps
//! track of the gates it guards whose other inputs all hold (they are *armed*; see "Armed
//! lists"). When the guard flips, only its armed gates are visited. A guarded
//! gate's value is `armed ∧ guard` (the guard's propagated value), so a gate armed while its
//! guard is off, or disarmed while it is false, keeps its value and is not visited (hex: one
//! playout at a time a fifth faster).
//!
//! **Move sets.** An OR gate over inputs only (directly or through other such gates) holds
//! when some role's move is one of a set: breakthrough's frame axiom says a cell keeps its
//! piece if the move made, by either role, does not touch it. Through counters, every move
//! switched would update the OR gates of every cell it does not touch (about 60 each way as
//! the turn passes) for the few whose values change. Such a gate is set like a source
//! instead: each input has a bitset of the gates above it, the gates' values are the OR of
//! the bitsets of the inputs on, and when moves switch only the words under the inputs
//! switched are computed again; the gates whose bits changed are set and propagate as usual
//! (breakthrough, before frame fluents took its move sets' place: one playout at a time twice
//! as fast; callgrind: 12,300 → 5,500 instructions per step). Move sets stay where another
//! gate reads them (a cell that keeps the mark of the cell next to it unless a move touches
//! that one).
//!
//! **Frame fluents.** Where every next-state rule of a fluent, as the network has it, is a set
//! of moves (`S`, an OR over inputs only), `(true f)`, `(true f) ∧ S`, `(true f) ∧ ¬S`, or
//! `(true f) ∧ (S ∨ ¬S′ ∨ …)` as factoring leaves rules that share `(true f)`, with one `¬S` at
//! most (breakthrough's cells: a piece arrives where a move goes, stays if the move made does
//! not touch its cell; chess's: stays unless a move affects its square), its next-state bit
//! is computed when the moves are set, 64 fluents a word, from the current state's bits and
//! bitsets of the inputs on, kept per input only for the words where it has bits ([`Frame`]).
//! The gates of those rules that nothing else reads (with the move sets only they read) are
//! not laid out at all: breakthrough's next-state logic was 11 of its 17 visits a step (one
//! playout at a time 1.8 times as fast). A set of moves may also come with one or two
//! conditions on the state (nodes no move is under), in an add, a keep or a kill, `S ∧ c ∧ c′`
//! (connect four's disc lands where the cell is open and the one below it is not; tic-tac-toe's
//! mark where the cell is blank; chess's pawn taken en passant): each input lists those it is
//! part of, and the conditions' values, propagated like any gate's, are read when the bits
//! are computed (connectFour, one playout at a time: 1.4 times as fast).
//!
//! **Blocks.** Gates in a cycle (recursion within a state: paths, connected groups) are
//! evaluated together, by least fixpoint, when an input from outside the block changes:
//! counters cannot do it, since a cycle of true gates would keep itself true after its support
//! from outside is gone. Edges into a block mark its first node dirty; the block then counts,
//! for each member, its inputs from outside that hold, and sets members true from there along
//! the cycle's edges, as long as their thresholds are met.
//!
//! **Lazy goals and percepts.** Gates that only `goal` or `sees` need (a piece count, say) are
//! not propagated into: they are evaluated, in index order, when a goal or a percept is asked
//! for, which in a playout is once, at the end (percepts: never). An OR of two such ANDs on a
//! literal and its negation, `(s ∧ x) ∨ (¬s ∧ y)` (a count's "one more if this square holds a
//! disc, else as many"), is one gate, a choice `s ? x : y`.
//!
//! **Saved values.** A state playouts start from again and again can be saved ([`Saved`]:
//! counters, values, lists, bits) and loaded back by a copy, where copying costs less than
//! propagating what differs from where the last playout ended.
//!
//! **Checked once.** Propagation reads edges, nodes, dirty bits and triggers, and the lazy
//! gates' evaluation their inputs, without a bounds check per access: [`Runtime::new`] asserts
//! once what it relies on (every successor, trigger and lazy input range within its array,
//! every edge's target and lazy input a node, a dirty bit per node), and none of those arrays
//! changes afterwards.
//!
//! **Legal first.** The network orders what `legal` and `terminal` depend on before the rest
//! ([`Net::legal_cone`]). After a transition, or a state loaded, propagation stops there: the
//! rest (next-state logic, mostly) would be propagated with the moves of the step before and
//! again with the new ones; it stays dirty until the moves are set ([`Runtime::set_moves`]), or
//! a goal or a percept is asked for.
//!
//! **Armed lists.** A guard's armed gates are a bitset, a bit for each gate it guards: arming
//! or disarming a gate sets or clears its bit (its place is fixed when the network is laid
//! out), and a guard that flips marks the gates of the bits set. Hex and speedChess arm and
//! disarm dozens of gates a step; kept as lists of gates with each gate's place in its list,
//! every disarm moved the list's last gate into the hole (two more records written, one of them
//! anywhere in the network), and a saved state had to copy every place. Passive lists (below)
//! stay lists of that kind, of their own: a legal move is picked by its place in the list.
//!
//! **Passive legal gates.** A guarded gate that only says whether a move is legal (no
//! successors, no other use) is not visited when its guard flips at all: its guard keeps it in
//! a list of its own, and that list *is* part of the role's legal moves while the guard holds.
//! When `(control white)` flips, white's legal moves come and go without a visit each.

use rustc_hash::FxHashMap;

use super::csr;
use super::net::{FALSE, Kind, Net, Ref, TRUE, is_negated, node_of};

/// A node's counter is its word's low 24 bits; this bit of it says whether the gate holds.
const HOLDS: u32 = 1 << 23;
const COUNTER: u32 = (1 << 24) - 1;
/// A gate may have fewer inputs than this (its counter stays within its 24 bits).
pub(crate) const MAX_INPUTS: usize = HOLDS as usize;
/// An input that feeds at least this many AND gates guards them.
const GUARD_MIN: u32 = 24;
/// With a profile, an input that feeds fewer AND gates than this does not guard them.
const GUARD_MIN_PROFILED: u32 = 8;
/// Trigger flags: the output is the node's value negated; the trigger sets a next-state bit
/// (otherwise it is a legal move).
const TRIGGER_NEGATED: u32 = 1 << 31;
const TRIGGER_NEXT: u32 = 1 << 30;
const TRIGGER_ID: u32 = (1 << 30) - 1;
/// Node flags, the high 8 bits of its word.
const HAS_TRIGGERS: u32 = 1 << 24;
const GUARDED: u32 = 1 << 25;
const IS_GUARD: u32 = 1 << 26;
const PASSIVE: u32 = 1 << 27;
/// A member of a block (its value is set by the block), the block's first member (visiting it
/// evaluates the block), a node with edges into blocks.
const BLOCK: u32 = 1 << 28;
const BLOCK_FIRST: u32 = 1 << 29;
const HAS_BLOCKS: u32 = 1 << 30;
/// The value the node last propagated (the word's top bit).
const VALUE: u32 = 1 << 31;
const NONE: u32 = u32::MAX;

/// The kinds of lazy gates (the low bits of `Runtime::lazy`'s entries).
const LAZY_OR: u32 = 0;
const LAZY_AND: u32 = 1;
const LAZY_CHOICE: u32 = 2;

/// What propagation reads and writes of a node, together in 8 bytes (a cache line holds
/// eight: the large networks are bound by cache misses).
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Node {
    /// The counter in the low 24 bits ([`HOLDS`]: whether the gate holds; for a guarded gate,
    /// whether the inputs other than the guard all hold), the flags above it
    /// ([`HAS_TRIGGERS`], [`GUARDED`], [`IS_GUARD`], [`PASSIVE`], [`BLOCK`], [`BLOCK_FIRST`],
    /// [`HAS_BLOCKS`], [`VALUE`]). Counting up or down by one never carries into the flags:
    /// a gate has fewer than [`MAX_INPUTS`] inputs.
    word: u32,
    /// Successors: `edges[out_start..]` up to the next node's `out_start` (a last node, past
    /// the network's, ends the last range).
    out_start: u32,
}

/// A guard's list of the gates it guards: a bit for each in [`Runtime`]'s `armed`, bits
/// `start..start + size`, set while the gate is armed, and how many are.
#[derive(Clone, Copy, Default)]
struct List {
    start: u32,
    size: u32,
    len: u32,
}

/// A passive list within [`Runtime`]'s `passive_items`.
#[derive(Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

/// A guarded gate's list and its place: for a gate its guard visits, its guard's list
/// (`lists`) and its bit in `armed`; for a passive gate, its passive list (`passive`) and its
/// number among the passive gates.
#[derive(Clone, Copy, Default)]
struct Armed {
    list: u32,
    at: u32,
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
    /// Each guard's list (`guard_list`) of the gates it guards that are armed: a range of bits
    /// in `armed`, and the gate of each bit (`gate_at`). Arming or disarming a gate sets or
    /// clears its bit and counts; nothing moves.
    lists: Vec<List>,
    armed: Vec<u64>,
    gate_at: Vec<u32>,
    guard_list: Vec<u32>,
    /// Each guarded gate's list and its bit, or passive number (see [`Armed`]; fixed once laid
    /// out).
    armed_at: Vec<Armed>,
    /// Passive lists (a guard, the guard's polarity, a role), each of its passive gates that
    /// are armed: `passive_items[span.start..span.start + span.len]`, passive gate numbers in
    /// no order (a legal move is picked by its place in the list), and each passive gate's
    /// place (`NONE`: not armed) and move.
    passive: Vec<Span>,
    passive_items: Vec<u32>,
    passive_pos: Vec<u32>,
    passive_move: Vec<u32>,
    /// Each role's passive lists: the guard [`Ref`] and the list.
    role_passive: Vec<Vec<(Ref, u32)>>,
    /// The role of each move, and its input node (`NONE`: none).
    move_role: Vec<u32>,
    move_node: Vec<u32>,
    /// The base node of each fluent.
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
    /// While profiling: how often each node has changed value (empty otherwise).
    flips_seen: Vec<u32>,
    /// Blocks: for block `b`, its members are nodes `block_start[b]..block_start[b] +
    /// block_len[b]`; for
    /// each member (numbered from the block's first node), its threshold, its inputs from
    /// outside (`block_ext[block_ext_start[i]..block_ext_start[i + 1]]`) and its successors in
    /// the block (`block_succ[block_succ_start[i]..]`, member numbers), indexed by
    /// `member_base[b] + member`. The block of each member node. Blocks to mark when a node
    /// changes: `block_marks[mark_start[k]..mark_start[k + 1]]` (first nodes).
    block_start: Vec<u32>,
    block_len: Vec<u32>,
    member_base: Vec<u32>,
    block_threshold: Vec<u32>,
    block_ext_start: Vec<u32>,
    block_ext: Vec<Ref>,
    block_succ_start: Vec<u32>,
    block_succ: Vec<u32>,
    block_of: Vec<u32>,
    mark_start: Vec<u32>,
    block_marks: Vec<u32>,
    /// Move sets: OR gates over inputs only (directly or through other such gates: "some move
    /// not touching this cell", where a gate other than a frame fluent's reads it). Each such
    /// gate read by anything else has a
    /// bit; each input a bitset of the gates it is under (`set_bits[set_slot[node] * set_width
    /// ..]`, and a mask of its nonzero words, `set_mask[set_slot[node] * set_dirty.len()..]`).
    /// The gates' values (`set_value`) are the OR of the bitsets of the inputs on (their slots:
    /// `on_slot`), and a gate whose value changes is set like a source: its inputs have no
    /// edges to it.
    set_node: Vec<u32>,
    set_width: usize,
    set_slot: Vec<u32>,
    set_bits: Vec<u64>,
    set_mask: Vec<u64>,
    set_value: Vec<u64>,
    on_slot: Vec<u32>,
    /// The words of `set_value` to compute again, a bit each (the inputs switched since the
    /// last computation).
    set_dirty: Vec<u64>,
    /// Frame fluents (see [`Frame`]): their next-state bits computed from the current state's
    /// and bitsets of the inputs on, not propagated; the slot of each role's input on.
    frame: Frame,
    on_frame: Vec<u32>,
    /// The add, keep and kill bitsets of each word of frame fluents, gathered from the inputs
    /// on (all zero but while [`Runtime::settle_frame`] runs).
    frame_acc: Vec<[u64; 3]>,
    /// Scratch space of a block's evaluation: a count and a value per member, and a queue.
    block_count: Vec<u32>,
    block_value: Vec<bool>,
    block_queue: Vec<u32>,
    /// The lazy gates in index order (`node << 2 | LAZY_OR, LAZY_AND or LAZY_CHOICE`), their
    /// inputs (`lazy_inputs[lazy_start[i]..lazy_start[i + 1]]`; a choice's three: the literal
    /// chosen by, then what it takes if that holds and what it takes if not), and whether their
    /// values are those of the current state.
    lazy: Vec<u32>,
    lazy_start: Vec<u32>,
    lazy_inputs: Vec<Ref>,
    lazy_valid: bool,
    /// The lazy gates `sees` needs (positions in `lazy`, ascending), and whether their values
    /// are those of the current state and moves.
    sees_lazy: Vec<u32>,
    sees_valid: bool,
    /// What [`Runtime::load_tallied`] counts.
    tally: u64,
    /// Nodes below this are what `legal` and `terminal` depend on ([`Net::legal_cone`]).
    cone_end: usize,
    /// Whether nodes from `cone_end` on may be dirty (propagation stopped there).
    deferred: bool,
}

impl Runtime {
    /// Lays out a network. `flips` (how often each node changed value in some random
    /// playouts, from [`Runtime::take_flips`]) chooses the guards; without it they are chosen by
    /// successors.
    pub fn new(net: &Net, flips: Option<&[u32]>) -> Runtime {
        let roles = net.legal.len();
        let clear_inputs = net.outputs_see_moves;
        let n = net.kinds.len();
        let mut fanout = vec![0u32; n];
        for ins in &net.inputs {
            for &r in ins {
                fanout[node_of(r) as usize] += 1;
            }
        }
        // Frame fluents, and the gates only their next-state rules read (dead: not laid out).
        let block_of = net.block_of();
        let sets_of_moves = sets_of_moves(net, &block_of);
        let frame = Frame::new(net, &block_of, &sets_of_moves);
        let other_next = || {
            net.next
                .iter()
                .enumerate()
                .filter(|&(f, _)| !frame.member(f))
                .map(|(_, &r)| node_of(r))
        };
        // What `legal`, `terminal` and the next state (but frame fluents', except the
        // conditions of their sets of moves) read.
        let deciding = || {
            net.legal
                .iter()
                .flatten()
                .map(|&(_, r)| node_of(r))
                .chain(other_next())
                .chain(frame.conds.iter().flat_map(|c| c.cond.map(node_of)))
                .chain(std::iter::once(node_of(net.terminal)))
        };
        let live = net.cone(
            deciding()
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
        // Lazy gates: what `legal`, `next` and `terminal` do not depend on (only `goal` does).
        let eager = net.cone(
            deciding()
                // A block reads its inputs' values when it is evaluated, so they must be
                // current: blocks (and all they depend on) are not lazy.
                .chain(
                    net.blocks
                        .iter()
                        .flat_map(|&(start, len)| start..start + len),
                ),
        );
        let is_lazy = |k: usize| {
            !dead[k]
                && !eager[k]
                && matches!(net.kinds[k], Kind::And | Kind::Or)
                && !net.inputs[k].is_empty()
                && block_of[k] == NONE
        };
        // Lazy choices: an OR of two lazy ANDs that nothing else reads, one with a literal and
        // the other with its negation, `(s ∧ x) ∨ (¬s ∧ y)`, is `s ? x : y`: one gate for
        // three, and one input read after `s` (reversi's goals count each colour's discs
        // square by square, "one more if the square holds one, else as many", thousands of
        // such ORs evaluated at the end of every playout). Not in games with `sees` rules
        // (the lazy gates `sees` needs are found by walking the gates as they are).
        let mut choices: Vec<(u32, [Ref; 3])> = Vec::new();
        let mut absorbed = vec![false; n];
        if net.sees.iter().all(|s| s.is_empty()) {
            let mut rooted = vec![false; n];
            for &(_, r) in net.goals.iter().flatten() {
                rooted[node_of(r) as usize] = true;
            }
            let only_read_here = |r: Ref| {
                let a = node_of(r) as usize;
                r & 1 == 0
                    && net.kinds[a] == Kind::And
                    && net.inputs[a].len() == 2
                    && fanout[a] == 1
                    && !rooted[a]
                    && is_lazy(a)
            };
            for k in 0..n {
                if !is_lazy(k) || net.kinds[k] != Kind::Or || net.inputs[k].len() != 2 {
                    continue;
                }
                let (one, other) = (net.inputs[k][0], net.inputs[k][1]);
                if node_of(one) == node_of(other) || !only_read_here(one) || !only_read_here(other)
                {
                    continue;
                }
                let (a, b) = (
                    &net.inputs[node_of(one) as usize],
                    &net.inputs[node_of(other) as usize],
                );
                // The literal of `a` whose negation is in `b`, and the other two inputs.
                let choice = (0..2).find_map(|i| {
                    (0..2)
                        .find(|&j| a[i] == b[j] ^ 1)
                        .map(|j| [a[i], a[1 - i], b[1 - j]])
                });
                if let Some(refs) = choice {
                    choices.push((k as u32, refs));
                    absorbed[node_of(one) as usize] = true;
                    absorbed[node_of(other) as usize] = true;
                }
            }
        }
        let mut lazy = Vec::new();
        let mut lazy_start = vec![0u32];
        let mut lazy_inputs = Vec::new();
        let mut lazy_index = vec![NONE; n];
        let mut choice = choices.iter().peekable();
        for (k, index) in lazy_index.iter_mut().enumerate() {
            if is_lazy(k) && !absorbed[k] {
                *index = lazy.len() as u32;
                if let Some((_, refs)) = choice.next_if(|&&(at, _)| at as usize == k) {
                    lazy.push(((k as u32) << 2) | LAZY_CHOICE);
                    lazy_inputs.extend_from_slice(refs);
                } else {
                    let kind = if net.kinds[k] == Kind::And {
                        LAZY_AND
                    } else {
                        LAZY_OR
                    };
                    lazy.push(((k as u32) << 2) | kind);
                    lazy_inputs.extend_from_slice(&net.inputs[k]);
                }
                lazy_start.push(lazy_inputs.len() as u32);
            }
        }
        // The lazy gates in the cone of `sees` (eager gates keep their values anyway).
        let mut in_sees = vec![false; lazy.len()];
        let mut stack: Vec<u32> = net
            .sees
            .iter()
            .flatten()
            .map(|&(_, r)| node_of(r))
            .collect();
        while let Some(k) = stack.pop() {
            let i = lazy_index[k as usize];
            if i != NONE && !std::mem::replace(&mut in_sees[i as usize], true) {
                stack.extend(net.inputs[k as usize].iter().map(|&r| node_of(r)));
            }
        }
        let sees_lazy: Vec<u32> = (0..lazy.len() as u32)
            .filter(|&i| in_sees[i as usize])
            .collect();
        let sets = MoveSets::new(net, &eager, &sets_of_moves, &dead);
        // Edges into move sets and dead gates are not followed.
        for (k, ins) in net.inputs.iter().enumerate() {
            if sets.member[k] || dead[k] {
                for &r in ins {
                    fanout[node_of(r) as usize] -= 1;
                }
            }
        }
        // Guards.
        let mut guard = vec![NONE; n];
        let mut flags = vec![0u32; n];
        let mut guarded_by = vec![0u32; n];
        for (k, kind) in net.kinds.iter().enumerate() {
            if *kind != Kind::And
                || net.inputs[k].len() < 2
                || is_lazy(k)
                || block_of[k] != NONE
                || dead[k]
            {
                continue;
            }
            let ins = &net.inputs[k];
            let chosen = match flips {
                // The input that flips more often than all the others together.
                Some(f) => {
                    let flips_of = |r: Ref| u64::from(f[node_of(r) as usize]);
                    let &best = ins.iter().max_by_key(|&&r| flips_of(r)).expect("inputs");
                    let others: u64 =
                        ins.iter().map(|&r| flips_of(r)).sum::<u64>() - flips_of(best);
                    (flips_of(best) > others
                        && fanout[node_of(best) as usize] >= GUARD_MIN_PROFILED)
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
        // Passive legal gates: guarded, no successors, and read only as one role's legal move.
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
        let mut passive_slots: FxHashMap<(Ref, u32), u32> = FxHashMap::default();
        let mut passive_guard = Vec::new();
        let mut passive_size: Vec<u32> = Vec::new();
        let mut role_slots = vec![Vec::new(); roles];
        let mut passive_slot = vec![NONE; n];
        let mut passive_number = vec![NONE; n];
        let mut passive_move = Vec::new();
        for k in 0..n {
            let m = legal_of[k];
            if flags[k] & GUARDED == 0 || m == NONE || uses[k] != 1 || fanout[k] != 0 {
                continue;
            }
            let role = net.moves[m as usize].0;
            if role >= roles {
                continue;
            }
            let slot = *passive_slots
                .entry((guard[k], role as u32))
                .or_insert_with(|| {
                    passive_guard.push(guard[k]);
                    passive_size.push(0);
                    role_slots[role].push(passive_guard.len() as u32 - 1);
                    passive_guard.len() as u32 - 1
                });
            passive_size[slot as usize] += 1;
            passive_slot[k] = slot;
            passive_number[k] = passive_move.len() as u32;
            passive_move.push(m);
            flags[k] |= PASSIVE;
            guarded_by[node_of(guard[k]) as usize] -= 1;
        }
        // Each guard's list, then the passive lists.
        let mut lists = Vec::new();
        let mut guard_list = vec![NONE; n];
        let mut bits = 0u32;
        for k in 0..n {
            if flags[k] & IS_GUARD != 0 {
                guard_list[k] = lists.len() as u32;
                lists.push(List {
                    start: bits,
                    size: guarded_by[k],
                    len: 0,
                });
                bits += guarded_by[k];
            }
        }
        let mut passive = Vec::new();
        let mut total = 0u32;
        for &size in &passive_size {
            passive.push(Span {
                start: total,
                len: 0,
            });
            total += size;
        }
        let mut gate_at = vec![NONE; bits as usize];
        let mut next_bit: Vec<u32> = lists.iter().map(|l| l.start).collect();
        let armed_at: Vec<Armed> = (0..n)
            .map(|k| {
                if passive_slot[k] != NONE {
                    Armed {
                        list: passive_slot[k],
                        at: passive_number[k],
                    }
                } else if flags[k] & GUARDED != 0 {
                    let list = guard_list[node_of(guard[k]) as usize];
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
        let role_passive: Vec<Vec<(Ref, u32)>> = role_slots
            .iter()
            .map(|slots| {
                slots
                    .iter()
                    .map(|&s| (passive_guard[s as usize], s))
                    .collect()
            })
            .collect();
        // Successors, without the edges that propagation does not follow: from guards to the
        // gates they guard, into lazy gates (evaluated on demand), into blocks (which are
        // marked instead).
        let skip_edge = |k: usize, r: Ref| {
            guard[k] == r || is_lazy(k) || block_of[k] != NONE || sets.member[k] || dead[k]
        };
        let (out_start, edges) = csr(
            n,
            net.inputs.iter().enumerate().flat_map(|(k, ins)| {
                ins.iter()
                    .filter(move |&&r| !skip_edge(k, r))
                    .map(move |&r| (node_of(r), ((k as u32) << 1) | (r & 1)))
            }),
        );
        // Triggers.
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
        let (trig_start, triggers) = csr(n, pending.iter().copied());

        // The blocks' members: thresholds, inputs from outside, successors inside; and the
        // blocks each node must mark.
        let mut block_start = Vec::with_capacity(net.blocks.len());
        let mut block_len = Vec::with_capacity(net.blocks.len());
        let mut member_base = Vec::with_capacity(net.blocks.len());
        let mut block_threshold = Vec::new();
        let mut block_ext_start = vec![0u32];
        let mut block_ext = Vec::new();
        let mut block_succ_lists: Vec<Vec<u32>> = Vec::new();
        let mut marks: Vec<(u32, u32)> = Vec::new();
        for &(start, len) in &net.blocks {
            block_start.push(start);
            block_len.push(len);
            member_base.push(block_threshold.len() as u32);
            let base = block_succ_lists.len();
            block_succ_lists.resize(base + len as usize, Vec::new());
            for k in start..start + len {
                let ins = &net.inputs[k as usize];
                block_threshold.push(match net.kinds[k as usize] {
                    Kind::And => ins.len() as u32,
                    _ => 1,
                });
                for &r in ins {
                    let from = node_of(r);
                    if block_of[from as usize] == block_of[k as usize] {
                        // Cycles are positive (the network refuses others).
                        block_succ_lists[base + (from - start) as usize].push(k - start);
                    } else {
                        block_ext.push(r);
                        marks.push((from, start));
                    }
                }
                block_ext_start.push(block_ext.len() as u32);
            }
        }
        let mut block_succ_start = vec![0u32];
        let mut block_succ = Vec::new();
        for list in &block_succ_lists {
            block_succ.extend_from_slice(list);
            block_succ_start.push(block_succ.len() as u32);
        }
        marks.sort_unstable();
        marks.dedup();
        for &(from, _) in &marks {
            flags[from as usize] |= HAS_BLOCKS;
        }
        let (mark_start, block_marks) = csr(n, marks.iter().copied());
        for &(start, len) in &net.blocks {
            flags[start as usize] |= BLOCK_FIRST;
            for k in start..start + len {
                flags[k as usize] |= BLOCK;
            }
        }
        let largest = net
            .blocks
            .iter()
            .map(|&(_, len)| len as usize)
            .max()
            .unwrap_or(0);

        let words = net.fluents.len().div_ceil(64);
        assert!(
            net.inputs.iter().all(|ins| ins.len() < MAX_INPUTS),
            "a gate with too many inputs for its counter"
        );
        let nodes = (0..=n)
            .map(|k| Node {
                word: flags.get(k).copied().unwrap_or(0),
                out_start: out_start[k],
            })
            .collect();
        let mut rt = Runtime {
            nodes,
            edges,
            trig_start,
            triggers,
            guard,
            lists,
            armed: vec![0; bits.div_ceil(64) as usize],
            gate_at,
            guard_list,
            armed_at,
            passive,
            passive_items: vec![0; total as usize],
            passive_pos: vec![NONE; passive_move.len()],
            passive_move,
            role_passive,
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
            flips_seen: Vec::new(),
            lazy,
            lazy_start,
            lazy_inputs,
            lazy_valid: false,
            sees_lazy,
            sees_valid: false,
            tally: 0,
            cone_end: net.legal_cone as usize,
            deferred: false,
            block_start,
            block_len,
            member_base,
            block_threshold,
            block_ext_start,
            block_ext,
            block_succ_start,
            block_succ,
            block_of,
            mark_start,
            block_marks,
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
            block_count: vec![0; largest],
            block_value: vec![false; largest],
            block_queue: Vec::with_capacity(largest),
        };
        // What propagation takes for granted, without checking each access.
        assert!(
            n <= (u32::MAX >> 2) as usize,
            "a network of {n} nodes: a lazy gate's entry holds a node number below 2^30"
        );
        assert!(
            rt.nodes.len() == n + 1
                && rt
                    .nodes
                    .windows(2)
                    .all(|w| w[0].out_start <= w[1].out_start)
                && rt.nodes[n].out_start as usize <= rt.edges.len()
                && rt.edges.iter().all(|&e| ((e >> 1) as usize) < n)
                && rt.dirty.len() * 64 >= n
                && rt.summary.len() * 64 >= rt.dirty.len()
                && rt.trig_start.len() == n + 1
                && rt.trig_start.windows(2).all(|w| w[0] <= w[1])
                && rt.trig_start[n] as usize <= rt.triggers.len()
                && rt.triggers.iter().all(|&t| {
                    t & TRIGGER_NEXT == 0 || ((t & TRIGGER_ID) as usize) < rt.next_bits.len() * 64
                }),
            "a network's successors lie outside it"
        );
        assert!(
            rt.lazy_start.len() == rt.lazy.len() + 1
                && rt.lazy_start.windows(2).all(|w| w[0] <= w[1])
                && rt.lazy_start[rt.lazy.len()] as usize <= rt.lazy_inputs.len()
                && rt.lazy.iter().all(|&e| ((e >> 2) as usize) < n)
                && rt.lazy.iter().enumerate().all(|(i, &e)| {
                    e & 3 != LAZY_CHOICE || rt.lazy_start[i + 1] - rt.lazy_start[i] == 3
                })
                && rt.lazy_inputs.iter().all(|&r| (node_of(r) as usize) < n)
                && rt.sees_lazy.iter().all(|&i| (i as usize) < rt.lazy.len()),
            "a lazy gate's inputs lie outside the network"
        );
        assert!(
            rt.frame_acc.len() == rt.frame.words.len()
                && rt.frame.conds.iter().all(|c| {
                    (c.word as usize) < rt.frame_acc.len()
                        && c.bit < 64
                        && c.part <= KILL
                        && c.cond.iter().all(|&r| (node_of(r) as usize) < n)
                }),
            "a frame fluent's condition lies outside the network"
        );
        // Every source false: evaluate the gates in order (inputs come before their gates, and
        // a block's members come together).
        for (k, kind) in net.kinds.iter().enumerate() {
            if rt.nodes[k].word & BLOCK != 0 {
                if rt.nodes[k].word & BLOCK_FIRST != 0 {
                    let b = rt.block_of[k] as usize;
                    rt.fixpoint(b);
                    let start = rt.block_start[b] as usize;
                    for i in 0..rt.block_len[b] as usize {
                        if rt.block_value[i] {
                            rt.nodes[start + i].word |= VALUE;
                        }
                    }
                }
                continue;
            }
            if sets.member[k] || dead[k] {
                // Every input is off: false (a move set's value is set like a source's); a dead
                // gate is never read.
                continue;
            }
            let ins = &net.inputs[k];
            let guarded = rt.nodes[k].word & GUARDED != 0;
            let threshold = match kind {
                Kind::And => ins.len() as u32 - u32::from(guarded),
                Kind::Or => 1,
                Kind::False | Kind::Base(_) | Kind::Input(_) => continue,
            };
            let count = ins
                .iter()
                .filter(|&&r| !(guarded && rt.guard[k] == r) && rt.value(r))
                .count() as u32;
            let word = &mut rt.nodes[k].word;
            *word = (*word & !COUNTER) | (HOLDS - threshold + count);
            let mut value = count >= threshold;
            if guarded {
                if value {
                    rt.arm(k as u32, rt.nodes[k].word);
                }
                value &= rt.value(rt.guard[k]);
            }
            if rt.nodes[k].word & PASSIVE != 0 {
                continue;
            }
            if value {
                rt.nodes[k].word |= VALUE;
            }
        }
        for list in &net.legal {
            for &(m, r) in list {
                if rt.nodes[node_of(r) as usize].word & PASSIVE == 0 && rt.value(r) {
                    rt.add_legal(m);
                }
            }
        }
        for (f, &r) in net.next.iter().enumerate() {
            if !rt.frame.member(f) && rt.value(r) {
                rt.next_bits[f / 64] |= 1 << (f % 64);
            }
        }
        rt.settle_frame();
        rt
    }

    /// Evaluates the lazy gates, if the state changed since they were.
    pub fn settle_lazy(&mut self) {
        self.finish();
        if self.lazy_valid {
            return;
        }
        for i in 0..self.lazy.len() {
            self.settle_one(i);
        }
        self.lazy_valid = true;
        self.sees_valid = true;
    }

    /// Evaluates the lazy gates `sees` needs (only those), if the state or the moves changed
    /// since they were.
    pub fn settle_sees(&mut self) {
        self.finish();
        if self.lazy_valid || self.sees_valid {
            return;
        }
        for k in 0..self.sees_lazy.len() {
            self.settle_one(self.sees_lazy[k] as usize);
        }
        self.sees_valid = true;
    }

    /// Evaluates lazy gate number `i` (its inputs are settled): an AND stops at its first input
    /// that does not hold, an OR at its first that does, a choice reads its literal and then
    /// one of its two other inputs. Goals such as reversi's piece counts
    /// are thousands of lazy gates evaluated at the end of every playout, so this loop reads
    /// without a bounds check per access.
    #[inline(always)]
    fn settle_one(&mut self, i: usize) {
        debug_assert!(i < self.lazy.len());
        // SAFETY: `i` is a lazy gate's number (its callers: `settle_lazy`, every number below
        // `lazy.len()`, and `settle_sees`, the numbers in `sees_lazy`, checked to be below it
        // by `Runtime::new`), `lazy_start` has an entry past the last one,
        // its ranges lie within `lazy_inputs`, and every lazy gate and input is a node
        // (checked by `Runtime::new`, and that a choice has three inputs; none of them changes
        // afterwards).
        unsafe {
            let entry = *self.lazy.get_unchecked(i);
            let start = *self.lazy_start.get_unchecked(i) as usize;
            let end = *self.lazy_start.get_unchecked(i + 1) as usize;
            let read = |k: usize| {
                let r = *self.lazy_inputs.get_unchecked(k);
                (self.nodes.get_unchecked(node_of(r) as usize).word >> 31) ^ (r & 1)
            };
            let value = if entry & 3 == LAZY_CHOICE {
                // The second input if the first holds, else the third.
                read(start + 2 - read(start) as usize)
            } else {
                // An AND looks for an input that does not hold (value 0), an OR for one that
                // does.
                let stop = (entry & 1) ^ 1;
                let mut value = entry & 1;
                for k in start..end {
                    if read(k) == stop {
                        value = stop;
                        break;
                    }
                }
                value
            };
            let word = &mut self.nodes.get_unchecked_mut((entry >> 2) as usize).word;
            *word = (*word & !VALUE) | (value << 31);
        }
    }

    /// How many lazy gates are choices (`s ? x : y`).
    #[cfg(test)]
    pub fn lazy_choices(&self) -> usize {
        self.lazy.iter().filter(|&&e| e & 3 == LAZY_CHOICE).count()
    }

    /// The value of a node reference (the network is settled between calls; lazy gates after
    /// [`Runtime::settle_lazy`]).
    pub fn value(&self, r: Ref) -> bool {
        debug_assert!(!self.deferred || (node_of(r) as usize) < self.cone_end);
        ((self.nodes[node_of(r) as usize].word >> 31) ^ (r & 1)) == 1
    }

    /// The passive gates armed in a passive list (their numbers).
    fn passive_armed(&self, list: u32) -> &[u32] {
        let Span { start, len } = self.passive[list as usize];
        &self.passive_items[start as usize..(start + len) as usize]
    }

    /// How many legal moves a role has.
    pub fn legal_count(&self, role: usize) -> usize {
        // Loops written out: this and `legal_nth` run for every role at every step.
        let mut count = self.legal[role].len();
        for &(g, list) in &self.role_passive[role] {
            if self.value(g) {
                count += self.passive[list as usize].len as usize;
            }
        }
        count
    }

    /// The role's `i`th legal move (`i < legal_count(role)`), in no particular order.
    pub fn legal_nth(&self, role: usize, mut i: usize) -> u32 {
        let listed = &self.legal[role];
        if let Some(&m) = listed.get(i) {
            return m;
        }
        i -= listed.len();
        for &(g, list) in &self.role_passive[role] {
            if self.value(g) {
                let Span { start, len } = self.passive[list as usize];
                if i < len as usize {
                    let p = self.passive_items[start as usize + i];
                    return self.passive_move[p as usize];
                }
                i -= len as usize;
            }
        }
        unreachable!("fewer legal moves than the index")
    }

    /// Every legal move of a role, in no particular order.
    pub fn legal_moves(&self, role: usize) -> impl Iterator<Item = u32> + '_ {
        self.legal[role].iter().copied().chain(
            self.role_passive[role]
                .iter()
                .filter(|&&(g, _)| self.value(g))
                .flat_map(|&(_, list)| self.passive_armed(list))
                .map(|&p| self.passive_move[p as usize]),
        )
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

    /// Adds a guarded gate (`flags`: its flags) to its list: its guard's armed gates, or its
    /// passive list.
    #[inline(always)]
    fn arm(&mut self, gate: u32, flags: u32) {
        let Armed { list, at } = self.armed_at[gate as usize];
        if flags & PASSIVE != 0 {
            let span = &mut self.passive[list as usize];
            let len = span.len;
            self.passive_items[(span.start + len) as usize] = at;
            span.len = len + 1;
            self.passive_pos[at as usize] = len;
        } else {
            let word = &mut self.armed[at as usize / 64];
            debug_assert!(*word & (1 << (at % 64)) == 0, "armed twice");
            *word |= 1 << (at % 64);
            self.lists[list as usize].len += 1;
        }
    }

    /// Removes a guarded gate from its list (in a passive list, the last gate takes its place).
    #[inline(always)]
    fn disarm(&mut self, gate: u32, flags: u32) {
        let Armed { list, at } = self.armed_at[gate as usize];
        if flags & PASSIVE != 0 {
            let span = &mut self.passive[list as usize];
            let last = span.len - 1;
            span.len = last;
            let start = span.start;
            let pos = self.passive_pos[at as usize];
            let moved = self.passive_items[(start + last) as usize];
            self.passive_items[(start + pos) as usize] = moved;
            self.passive_pos[moved as usize] = pos;
            self.passive_pos[at as usize] = NONE;
        } else {
            let word = &mut self.armed[at as usize / 64];
            debug_assert!(*word & (1 << (at % 64)) != 0, "disarmed unarmed");
            *word &= !(1 << (at % 64));
            self.lists[list as usize].len -= 1;
        }
    }

    #[inline(always)]
    fn fire(&mut self, node: usize, value: u32) {
        debug_assert!(node + 1 < self.trig_start.len());
        // SAFETY: `node` is a node's index, `trig_start` has an entry past every node's, its
        // ranges lie within `triggers`, and a next-state trigger's fluent has a bit in
        // `next_bits` (checked by `Runtime::new`; none of them changes afterwards).
        let (start, end) = unsafe {
            (
                *self.trig_start.get_unchecked(node),
                *self.trig_start.get_unchecked(node + 1),
            )
        };
        for k in start..end {
            let t = unsafe { *self.triggers.get_unchecked(k as usize) };
            let on = (value ^ (t >> 31)) & 1;
            let id = t & TRIGGER_ID;
            if t & TRIGGER_NEXT != 0 {
                let (w, b) = (id as usize / 64, id % 64);
                let word = unsafe { self.next_bits.get_unchecked_mut(w) };
                *word = (*word & !(1 << b)) | (u64::from(on) << b);
            } else if on == 1 {
                self.add_legal(id);
            } else {
                self.remove_legal(id);
            }
        }
    }

    #[inline]
    fn mark(&mut self, node: usize) {
        debug_assert!(node + 1 < self.nodes.len());
        // SAFETY: `node` is a node's index (`mark` is given nodes only: sources, successors
        // from `edges`, armed gates, blocks' first members, all below `nodes.len()`, checked
        // by `Runtime::new`), and `dirty` and `summary` have a bit for every node.
        unsafe {
            *self.dirty.get_unchecked_mut(node / 64) |= 1 << (node % 64);
            *self.summary.get_unchecked_mut(node / 4096) |= 1 << ((node / 64) % 64);
        }
    }

    /// Starts counting how often each node changes value.
    pub fn count_flips(&mut self) {
        self.flips_seen = vec![0; self.nodes.len()];
    }

    /// The counts since [`Runtime::count_flips`], and stops counting.
    pub fn take_flips(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.flips_seen)
    }

    /// Propagates the changes of the dirty nodes, in index order.
    fn run(&mut self) {
        // Nothing waits once this has run (and blocks read values behind the one visited).
        self.deferred = false;
        if self.flips_seen.is_empty() {
            self.propagate::<false, false, false>();
        } else {
            self.propagate::<true, false, false>();
        }
    }

    /// Propagates the changes of the dirty nodes that `legal` and `terminal` depend on; the
    /// others wait (for [`Runtime::set_moves`], or [`Runtime::finish`]).
    fn run_cone(&mut self) {
        if self.flips_seen.is_empty() {
            self.propagate::<false, false, true>();
        } else {
            self.propagate::<true, false, true>();
        }
        self.deferred = true;
    }

    /// Propagates what [`Runtime::run_cone`] left, if anything.
    fn finish(&mut self) {
        if self.deferred {
            self.run();
        }
    }

    /// `COUNT`: count each node's flips (a profile); `TALLY`: add to `tally` the nodes that
    /// changed value and the successors they updated; `CONE`: only the nodes below
    /// `cone_end` (the others stay dirty).
    fn propagate<const COUNT: bool, const TALLY: bool, const CONE: bool>(&mut self) {
        let mut sw = 0;
        while sw < self.summary.len() {
            let s = self.summary[sw];
            if s == 0 {
                sw += 1;
                continue;
            }
            let w = sw * 64 + s.trailing_zeros() as usize;
            debug_assert!(w < self.dirty.len());
            // The nodes of the word to visit: all, or those below `cone_end`.
            let mask = if !CONE || (w + 1) * 64 <= self.cone_end {
                u64::MAX
            } else if w * 64 >= self.cone_end {
                return;
            } else {
                (1 << (self.cone_end % 64)) - 1
            };
            // The word's dirty nodes, lowest first, those marked meanwhile included (a node
            // marks only nodes after it).
            loop {
                // SAFETY: bits are set in `summary` and `dirty` only by `mark`, for nodes:
                // `w` is a word of `dirty` and `node` a node.
                let all = unsafe { *self.dirty.get_unchecked(w) };
                let d = all & mask;
                if d == 0 {
                    if CONE && all != 0 {
                        // The word `cone_end` falls in: the rest waits.
                        return;
                    }
                    break;
                }
                unsafe { *self.dirty.get_unchecked_mut(w) = all & !(d & d.wrapping_neg()) };
                self.visit::<COUNT, TALLY>(w * 64 + d.trailing_zeros() as usize);
            }
            self.summary[sw] &= !(1 << (w % 64));
        }
    }

    /// Visits a dirty node: propagates its value if it changed.
    #[inline(always)]
    fn visit<const COUNT: bool, const TALLY: bool>(&mut self, node: usize) {
        debug_assert!(node + 1 < self.nodes.len());
        // SAFETY: `node` is a node, and a last node follows the network's.
        let (Node { word, out_start }, out_end) = unsafe {
            (
                *self.nodes.get_unchecked(node),
                self.nodes.get_unchecked(node + 1).out_start,
            )
        };
        let flags = word;
        if flags & BLOCK_FIRST != 0 {
            self.settle_block(self.block_of[node] as usize);
            return;
        }
        let mut value = (word >> 23) & 1;
        if flags & GUARDED != 0 {
            value &= self.guard_value(node);
        }
        if value == flags >> 31 {
            return;
        }
        if COUNT {
            self.flips_seen[node] = self.flips_seen[node].saturating_add(1);
        }
        if TALLY {
            self.tally += 1 + u64::from(out_end - out_start);
        }
        unsafe { self.nodes.get_unchecked_mut(node).word = word ^ VALUE };
        self.changed(node, flags, value, out_start, out_end);
    }

    /// The value guarded gate `gate`'s guard last propagated (1 if it holds).
    #[inline(always)]
    fn guard_value(&self, gate: usize) -> u32 {
        let g = self.guard[gate];
        (self.nodes[node_of(g) as usize].word >> 31) ^ (g & 1)
    }

    /// A node's value changed to `value` (its flags already say so): fire its triggers, mark its
    /// armed gates and the blocks it feeds, and update its successors' counters, marking those
    /// whose top bit flipped (a guarded gate: if its value can change).
    #[inline(always)]
    fn changed(&mut self, node: usize, flags: u32, value: u32, out_start: u32, out_end: u32) {
        if flags & (HAS_TRIGGERS | IS_GUARD | HAS_BLOCKS) != 0 {
            if flags & HAS_TRIGGERS != 0 {
                self.fire(node, value);
            }
            if flags & IS_GUARD != 0 {
                let List { start, size, len } = self.lists[self.guard_list[node] as usize];
                if len != 0 {
                    // The list's bits, `start..end` (not empty: a gate is armed).
                    let end = start + size;
                    for w in start / 64..end.div_ceil(64) {
                        let mut bits = self.armed[w as usize];
                        if w == start / 64 {
                            bits &= u64::MAX << (start % 64);
                        }
                        if w == (end - 1) / 64 && end % 64 != 0 {
                            bits &= (1 << (end % 64)) - 1;
                        }
                        while bits != 0 {
                            let gate = self.gate_at[(w * 64 + bits.trailing_zeros()) as usize];
                            bits &= bits - 1;
                            self.mark(gate as usize);
                        }
                    }
                }
            }
            if flags & HAS_BLOCKS != 0 {
                for k in self.mark_start[node]..self.mark_start[node + 1] {
                    let first = self.block_marks[k as usize] as usize;
                    self.mark(first);
                }
            }
        }
        debug_assert!(out_start <= out_end && out_end as usize <= self.edges.len());
        for i in out_start as usize..out_end as usize {
            // SAFETY: every node's successors' range lies within `edges`, and every edge's
            // target is a node (checked by `Runtime::new`; neither changes afterwards).
            let e = unsafe { *self.edges.get_unchecked(i) };
            let target = (e >> 1) as usize;
            debug_assert!(target + 1 < self.nodes.len());
            let t = unsafe { self.nodes.get_unchecked_mut(target) };
            let old = t.word;
            let new = if (value ^ e) & 1 != 0 {
                old + 1
            } else {
                old - 1
            };
            t.word = new;
            if (old ^ new) & HOLDS != 0 {
                let flags = new;
                if flags & GUARDED != 0 {
                    // Visited only if its value can change: armed while its guard's value as
                    // last propagated holds, or disarmed while it holds. (That value may yet
                    // change in this pass, or wait beyond the cone: the guard then flips, and
                    // marks the gates it has armed, this one included.) A passive gate is never
                    // visited (its value bit is never set).
                    let visit = if new & HOLDS != 0 {
                        self.arm(target as u32, flags);
                        flags & PASSIVE == 0 && self.guard_value(target) != 0
                    } else {
                        self.disarm(target as u32, flags);
                        flags & VALUE != 0
                    };
                    if visit {
                        self.mark(target);
                    }
                } else {
                    self.mark(target);
                }
            }
        }
    }

    /// The least fixpoint of block `b` from its members' inputs outside the block: each member's
    /// count of those that hold, then members set true along the block's edges while their
    /// thresholds are met. The values are left in `block_value`.
    fn fixpoint(&mut self, b: usize) {
        let len = self.block_len[b] as usize;
        let base = self.member_base[b] as usize;
        let mut queue = std::mem::take(&mut self.block_queue);
        queue.clear();
        for i in 0..len {
            let m = base + i;
            let ext = &self.block_ext
                [self.block_ext_start[m] as usize..self.block_ext_start[m + 1] as usize];
            let count = ext.iter().filter(|&&r| self.value(r)).count() as u32;
            self.block_count[i] = count;
            self.block_value[i] = false;
            if count >= self.block_threshold[m] {
                queue.push(i as u32);
            }
        }
        while let Some(i) = queue.pop() {
            let i = i as usize;
            if std::mem::replace(&mut self.block_value[i], true) {
                continue;
            }
            let m = base + i;
            for k in self.block_succ_start[m]..self.block_succ_start[m + 1] {
                let j = self.block_succ[k as usize] as usize;
                self.block_count[j] += 1;
                // Queued once, when its count reaches the threshold (counts only grow), so the
                // queue never holds more than the block's members.
                if !self.block_value[j] && self.block_count[j] == self.block_threshold[base + j] {
                    queue.push(j as u32);
                }
            }
        }
        self.block_queue = queue;
    }

    /// Evaluates block `b` again and propagates the members whose values changed.
    fn settle_block(&mut self, b: usize) {
        self.fixpoint(b);
        let start = self.block_start[b] as usize;
        let len = self.block_len[b] as usize;
        for i in 0..len {
            let node = start + i;
            let Node {
                word: flags,
                out_start,
            } = self.nodes[node];
            let out_end = self.nodes[node + 1].out_start;
            let value = u32::from(self.block_value[i]);
            if value != flags >> 31 {
                if let Some(f) = self.flips_seen.get_mut(node) {
                    *f = f.saturating_add(1);
                }
                self.nodes[node].word = flags ^ VALUE;
                self.changed(node, flags, value, out_start, out_end);
            }
        }
    }

    /// Sets a source node; the change propagates at the next [`Runtime::run`].
    ///
    /// A source that nothing is propagated from (no successors, triggers, guarded gates or
    /// blocks: an input whose only edges go into move sets, like every move of breakthrough)
    /// takes its value here, without a visit: a visit would only set its value.
    fn set(&mut self, node: u32, on: bool) {
        self.lazy_valid = false;
        self.sees_valid = false;
        let k = node as usize;
        let out_end = self.nodes[k + 1].out_start;
        let n = &mut self.nodes[k];
        let held = if on { HOLDS } else { 0 };
        if n.word & (HAS_TRIGGERS | IS_GUARD | HAS_BLOCKS) == 0 && n.out_start == out_end {
            n.word = (n.word & !(COUNTER | VALUE)) | held | if on { VALUE } else { 0 };
            return;
        }
        n.word = (n.word & !COUNTER) | held;
        self.mark(k);
    }

    /// Makes `bits` the current state, and says how much propagating it took: the nodes visited
    /// that changed value and the successors they updated (a source nothing is propagated from
    /// is not visited, and costs nothing here).
    pub fn load_tallied(&mut self, bits: &[u64]) -> u64 {
        self.tally = 0;
        self.set_sources(bits);
        self.deferred = false;
        if self.flips_seen.is_empty() {
            self.propagate::<false, true, false>();
        } else {
            self.propagate::<true, true, false>();
        }
        self.tally
    }

    /// Makes `bits` the current state (what the moves do is propagated when they are set).
    pub fn load(&mut self, bits: &[u64]) {
        self.set_sources(bits);
        self.run_cone();
    }

    /// Sets the base nodes to `bits`, to propagate.
    fn set_sources(&mut self, bits: &[u64]) {
        for (w, &word) in bits.iter().enumerate() {
            let mut diff = word ^ self.cur_bits[w];
            while diff != 0 {
                let b = diff.trailing_zeros();
                diff &= diff - 1;
                let f = w * 64 + b as usize;
                self.cur_bits[w] ^= 1 << b;
                self.set(self.base_node[f], self.cur_bits[w] >> b & 1 == 1);
            }
        }
    }

    /// Sets the moves being made: `moves[r]` for role `r` (a move number).
    pub fn set_moves(&mut self, moves: &[u32]) {
        for (role, &m) in moves.iter().enumerate() {
            self.switch(role, self.move_node[m as usize]);
        }
        if self.set_width != 0 {
            self.settle_sets();
        }
        self.run();
        self.settle_frame();
    }

    /// Computes the frame fluents' next-state bits from the current state's and the inputs on.
    fn settle_frame(&mut self) {
        let frame = &self.frame;
        if frame.words.is_empty() {
            // No frame fluents: nothing to do.
            return;
        }
        let acc = &mut self.frame_acc;
        for &slot in &self.on_frame {
            let slot = slot as usize;
            let (start, end) = (frame.start[slot] as usize, frame.start[slot + 1] as usize);
            for e in &frame.entries[start..end] {
                let a = &mut acc[e.word as usize];
                a[0] |= e.add;
                a[1] |= e.keep;
                a[2] |= e.kill;
            }
            let (start, end) = (
                frame.cond_start[slot] as usize,
                frame.cond_start[slot + 1] as usize,
            );
            for c in &frame.conds[start..end] {
                // The conditions' values, as propagated (`set_moves` has run).
                // SAFETY: a condition's nodes are nodes, and its word one of `frame_acc`'s
                // (checked by `Runtime::new`; neither changes afterwards).
                let value = |r: Ref| unsafe {
                    (self.nodes.get_unchecked(node_of(r) as usize).word >> 31) ^ (r & 1)
                };
                let holds = value(c.cond[0]) & value(c.cond[1]);
                let a = unsafe { acc.get_unchecked_mut(c.word as usize) };
                a[usize::from(c.part)] |= u64::from(holds) << c.bit;
            }
        }
        for (i, &w) in frame.words.iter().enumerate() {
            let [add, keep, kill] = std::mem::take(&mut acc[i]);
            let w = w as usize;
            let cur = self.cur_bits[w];
            self.next_bits[w] = (self.next_bits[w] & !frame.mask[i])
                | add
                | (cur & (frame.always[i] | keep | (frame.unless[i] & !kill)));
        }
    }

    /// Switches role `role`'s input to `node` (`NONE`: none); the move sets under the inputs
    /// switched are computed again by [`Runtime::settle_sets`].
    #[inline(always)]
    fn switch(&mut self, role: usize, node: u32) {
        let old = self.on[role];
        if old == node {
            return;
        }
        if old != NONE {
            self.set(old, false);
        }
        if node != NONE {
            self.set(node, true);
        }
        self.on[role] = node;
        if !self.frame.words.is_empty() {
            let slot = if node == NONE {
                self.frame.zero
            } else {
                self.frame.slot[node as usize]
            };
            self.on_frame[role] = slot;
            self.frame.prefetch(slot);
        }
        if self.set_width != 0 {
            self.switch_sets(role, old, node);
        }
    }

    /// The move sets' part of [`Runtime::switch`]: the words under either input are to be
    /// computed again.
    fn switch_sets(&mut self, role: usize, old: u32, node: u32) {
        let slot_of = |k: u32| {
            if k == NONE {
                NONE
            } else {
                self.set_slot[k as usize]
            }
        };
        let (was, now) = (slot_of(old), slot_of(node));
        let mw = self.set_dirty.len();
        for slot in [was, now] {
            if slot != NONE {
                let mask = &self.set_mask[slot as usize * mw..(slot as usize + 1) * mw];
                for (d, &m) in self.set_dirty.iter_mut().zip(mask) {
                    *d |= m;
                }
            }
        }
        self.on_slot[role] = now;
    }

    /// Computes again the words of the move sets' values that the inputs switched since the
    /// last call may have changed, and sets the gates whose values changed.
    fn settle_sets(&mut self) {
        for dw in 0..self.set_dirty.len() {
            let mut dirty = std::mem::take(&mut self.set_dirty[dw]);
            while dirty != 0 {
                let w = dw * 64 + dirty.trailing_zeros() as usize;
                dirty &= dirty - 1;
                let mut word = 0;
                for &slot in &self.on_slot {
                    if slot != NONE {
                        word |= self.set_bits[slot as usize * self.set_width + w];
                    }
                }
                let mut diff = word ^ self.set_value[w];
                self.set_value[w] = word;
                while diff != 0 {
                    let b = diff.trailing_zeros() as usize;
                    diff &= diff - 1;
                    self.set(self.set_node[w * 64 + b], word >> b & 1 == 1);
                }
            }
        }
    }

    /// How many fluents are frame fluents.
    #[cfg(test)]
    pub fn frame_fluents(&self) -> usize {
        self.frame.is.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// How many words of the state hold frame fluents.
    #[cfg(test)]
    pub fn frame_words(&self) -> usize {
        self.frame.words.len()
    }

    /// How many gates are evaluated as move sets.
    #[cfg(test)]
    pub fn move_sets(&self) -> usize {
        self.set_node.len()
    }

    /// Whether inputs are switched off after each transition.
    pub fn clears_inputs(&self) -> bool {
        self.clear_inputs
    }

    /// Switches every input off (as after a transition when `legal`, `goal` or `terminal`
    /// depend on the moves).
    pub fn clear_moves(&mut self) {
        for role in 0..self.on.len() {
            self.switch(role, NONE);
        }
        if self.set_width != 0 {
            self.settle_sets();
        }
        self.run_cone();
    }

    /// Moves to the next state, given the moves set with [`Runtime::set_moves`].
    pub fn advance(&mut self) {
        if !self.clear_inputs {
            // The fluents that change are set as they are found.
            for w in 0..self.cur_bits.len() {
                let next = self.next_bits[w];
                let mut diff = next ^ self.cur_bits[w];
                self.cur_bits[w] = next;
                while diff != 0 {
                    let b = diff.trailing_zeros();
                    diff &= diff - 1;
                    self.set(self.base_node[w * 64 + b as usize], next >> b & 1 == 1);
                }
            }
            self.run_cone();
            return;
        }
        // The inputs are cleared first, which changes the next state's bits: the fluents that
        // change are found before.
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
        self.clear_moves();
        for &f in &flips {
            let (w, b) = (f as usize / 64, f % 64);
            self.cur_bits[w] ^= 1 << b;
            self.set(self.base_node[f as usize], self.cur_bits[w] >> b & 1 == 1);
        }
        self.run_cone();
        self.flips = flips;
    }
}

/// A copy of everything a [`Runtime`] changes as it runs, for a state (settled, no move set):
/// loading that state again is a copy of these instead of a propagation of every difference.
#[derive(Clone, Default)]
pub(crate) struct Saved {
    /// The nodes: counters, flags and values (and, unchanged, where their successors start:
    /// the records are copied whole).
    nodes: Vec<Node>,
    lists: Vec<List>,
    armed: Vec<u64>,
    passive: Vec<Span>,
    passive_items: Vec<u32>,
    passive_pos: Vec<u32>,
    legal: Vec<Vec<u32>>,
    legal_pos: Vec<u32>,
    next_bits: Vec<u64>,
    cur_bits: Vec<u64>,
    set_value: Vec<u64>,
    on: Vec<u32>,
    on_slot: Vec<u32>,
    on_frame: Vec<u32>,
    lazy_valid: bool,
}

impl Saved {
    /// The state saved.
    pub fn bits(&self) -> &[u64] {
        &self.cur_bits
    }
}

/// Calls `$apply!` with the arrays of fixed length that [`Saved`] keeps (one list, so that
/// saving, restoring and their size cannot disagree).
macro_rules! saved_arrays {
    ($apply:ident) => {
        $apply!(
            nodes,
            lists,
            armed,
            passive,
            passive_items,
            passive_pos,
            legal_pos,
            next_bits,
            cur_bits,
            set_value,
            on,
            on_slot,
            on_frame
        )
    };
}

impl Runtime {
    /// The bytes [`Runtime::save`] copies, and [`Runtime::restore`] back.
    pub fn saved_bytes(&self) -> usize {
        macro_rules! bytes {
            ($($field:ident),*) => { 0 $(+ size_of_val(&self.$field[..]))* };
        }
        saved_arrays!(bytes)
            + self
                .legal
                .iter()
                .map(|l| size_of_val(&l[..]))
                .sum::<usize>()
    }

    /// Saves the values of the state loaded (settled, with the inputs as they are) into
    /// `saved` (its buffers reused).
    pub fn save(&self, saved: &mut Saved) {
        debug_assert!(self.dirty.iter().all(|&d| d == 0));
        debug_assert!(self.set_dirty.iter().all(|&d| d == 0));
        macro_rules! save {
            ($($field:ident),*) => { $(saved.$field.clone_from(&self.$field);)* };
        }
        saved_arrays!(save);
        saved.legal.clone_from(&self.legal);
        saved.lazy_valid = self.lazy_valid;
    }

    /// Makes the state `saved` (from [`Runtime::save`] on this runtime) the current one, with
    /// the inputs that were on then: as [`Runtime::load`] of its bits would.
    pub fn restore(&mut self, saved: &Saved) {
        if !self.flips_seen.is_empty() {
            // A profile counts the flips of loading it.
            let bits = saved.cur_bits.clone();
            self.load(&bits);
            return;
        }
        macro_rules! restore {
            ($($field:ident),*) => { $(self.$field.copy_from_slice(&saved.$field);)* };
        }
        saved_arrays!(restore);
        if std::mem::replace(&mut self.deferred, false) {
            // What waited is the old state's, and the saved one is settled.
            self.dirty.fill(0);
            self.summary.fill(0);
        }
        for (list, from) in self.legal.iter_mut().zip(&saved.legal) {
            list.clone_from(from);
        }
        self.lazy_valid = saved.lazy_valid;
        self.sees_valid = false;
    }
}

/// The move sets of a network (see [`Runtime`]'s `set_node`): which gates are OR gates over
/// inputs only, and, for those read by anything else, the bitsets of the inputs under them.
struct MoveSets {
    /// Whether each node is such a gate (its incoming edges are not followed).
    member: Vec<bool>,
    node: Vec<u32>,
    width: usize,
    slot: Vec<u32>,
    bits: Vec<u64>,
    mask: Vec<u64>,
}

/// Move sets whose bitsets would take more words than this are left to the gates' counters.
const MOVE_SET_WORDS: usize = 1 << 22;

impl MoveSets {
    /// `sets_of_moves` from [`sets_of_moves`]: the eager OR gates among them are the members
    /// (the inputs of an eager gate are eager).
    fn new(net: &Net, eager: &[bool], sets_of_moves: &[bool], dead: &[bool]) -> MoveSets {
        let n = net.kinds.len();
        let member: Vec<bool> = (0..n)
            .map(|k| net.kinds[k] == Kind::Or && eager[k] && sets_of_moves[k])
            .collect();
        // Those whose values are read: by a gate that is not one (nor dead), or as an output
        // that is not dead (a frame fluent's next-state gate is, unless something else reads
        // it).
        let mut read = vec![false; n];
        for (k, ins) in net.inputs.iter().enumerate() {
            if !member[k] && !dead[k] {
                for &r in ins {
                    read[node_of(r) as usize] = true;
                }
            }
        }
        for r in net.outputs() {
            if !dead[node_of(r) as usize] {
                read[node_of(r) as usize] = true;
            }
        }
        let node: Vec<u32> = (0..n as u32)
            .filter(|&k| member[k as usize] && read[k as usize])
            .collect();
        let width = node.len().div_ceil(64);
        let inputs = net
            .kinds
            .iter()
            .filter(|k| matches!(k, Kind::Input(_)))
            .count();
        let none = MoveSets {
            member: vec![false; n],
            node: Vec::new(),
            width: 0,
            slot: vec![NONE; n],
            bits: Vec::new(),
            mask: Vec::new(),
        };
        if node.is_empty() || width.saturating_mul(inputs) > MOVE_SET_WORDS {
            return none;
        }
        // Each read gate's inputs, through the gates under it.
        let mut slot = vec![NONE; n];
        let mut owners: Vec<u32> = Vec::new();
        let mut bits: Vec<u64> = Vec::new();
        let mut under = InputsUnder::new(n);
        let mut inputs = Vec::new();
        for (j, &g) in node.iter().enumerate() {
            inputs.clear();
            under.collect(net, g, &mut inputs);
            for &i in &inputs {
                if slot[i as usize] == NONE {
                    slot[i as usize] = owners.len() as u32;
                    owners.push(i);
                    bits.resize(bits.len() + width, 0);
                }
                bits[slot[i as usize] as usize * width + j / 64] |= 1 << (j % 64);
            }
        }
        let mask_width = width.div_ceil(64);
        let mut mask = vec![0u64; owners.len() * mask_width];
        for s in 0..owners.len() {
            for w in 0..width {
                if bits[s * width + w] != 0 {
                    mask[s * mask_width + w / 64] |= 1 << (w % 64);
                }
            }
        }
        // Worth it where an input switched would update many gates' counters (edges into the
        // sets, per input under one) for the words computed again instead (the nonzero words
        // of an input's bitset, each an OR over the roles' inputs): by callgrind, breakthrough
        // (before frame fluents) 19 updates against 5 words (twice as fast), chineseCheckers4 1
        // against 4 (3 % more instructions per step).
        let edges: usize = (0..n)
            .filter(|&k| member[k])
            .map(|k| net.inputs[k].len())
            .sum();
        let words = mask.iter().map(|m| m.count_ones()).sum::<u32>() as usize;
        let roles = net.legal.len().max(1);
        if edges < 2 * words * roles {
            return none;
        }
        MoveSets {
            member,
            node,
            width,
            slot,
            bits,
            mask,
        }
    }
}

/// Frame fluents: those whose next-state rules, as the network has them, are each of one of
/// these forms, with `S` a set of moves (an input, or an OR over inputs only, directly or
/// through other such ORs):
///
/// - `S` (the move adds the fluent: a piece moved onto its cell),
/// - `(true f)` (it stays once it holds: a king that has moved),
/// - `(true f) ∧ S` (it stays if a move of the set is made: breakthrough's "some move not
///   touching this cell"),
/// - `(true f) ∧ ¬S` (it stays unless a move of the set is made: chess's "not affected"),
/// - `(true f) ∧ (S ∨ ¬S′ ∨ …)` (rules of the forms above that share `(true f)`, which the
///   network's factoring takes out),
///
/// with one `¬S` at most among them all (two would make `¬(S ∧ S′)`, not a set's negation).
///
/// The fluent's next-state bit is then `add ∨ (true ∧ (always ∨ keep ∨ (unless ∧ ¬kill)))`,
/// where `add`, `keep` and `kill` are the ORs of the bitsets of the inputs on: word by word,
/// 64 fluents at once, when the moves are set, instead of the gates of those
/// rules (and the move sets only they read) propagating each move switched. Breakthrough's
/// cells, most of chess's.
#[derive(Clone)]
struct Frame {
    /// Whether each fluent is one, a bit each.
    is: Vec<u64>,
    /// The words of the state that hold frame fluents, and for each of those words (`i`):
    /// the frame fluents' bits, those kept always, those with a "stays unless" rule.
    words: Vec<u32>,
    mask: Vec<u64>,
    always: Vec<u64>,
    unless: Vec<u64>,
    /// For each slot (an input under some frame fluent's rules; the last, `zero`, none), the
    /// words where it adds, keeps or kills a fluent: `entries[start[slot]..start[slot + 1]]`.
    /// A move changes little of the state (chess: the fluents of two squares, which sit
    /// together, the fluents being in the order of their text: 1.8 words of 12 on average), and
    /// only those words are read.
    entries: Vec<FrameEntry>,
    start: Vec<u32>,
    /// For each slot, the fluents it adds, keeps or kills where conditions on the state hold
    /// (`(does r m) ∧ c`: connect four's disc lands in the lowest open cell of the column it is
    /// dropped in): `conds[cond_start[slot]..cond_start[slot + 1]]`. The conditions are nodes
    /// like any other, propagated before the frame fluents are computed.
    conds: Vec<FrameCond>,
    cond_start: Vec<u32>,
    zero: u32,
    /// Whether the entries are more than [`FAR_BYTES`], too many to stay in the processor's
    /// first-level cache (see [`Frame::prefetch`]).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    far: bool,
    /// The slot of each node (`zero` for all but the inputs under frame rules).
    slot: Vec<u32>,
}

/// Frame entries beyond this many bytes are [`Frame::far`]: twice a first-level data cache of
/// 32 KB (this decade's smallest), since the entries share it with the network's records
/// (breakthrough's 20 KB, not prefetched, measured level either way).
const FAR_BYTES: usize = 64 * 1024;

/// Word `word` (of [`Frame`]'s `words`) of a slot's add, keep and kill bitsets.
#[derive(Clone, Copy, Default)]
struct FrameEntry {
    word: u32,
    add: u64,
    keep: u64,
    kill: u64,
}

/// A fluent a slot adds, keeps or kills (`part`: [`ADD`], [`KEEP`] or [`KILL`]) where both
/// `cond` hold: bit `bit` of word `word` (of [`Frame`]'s `words`).
#[derive(Clone, Copy)]
struct FrameCond {
    word: u32,
    bit: u8,
    part: u8,
    cond: [Ref; 2],
}

/// A set of moves under conditions in a frame fluent's rules, as [`Frame::new`] finds it: which
/// of the fluent's add, keep and kill sets it is part of, its inputs and its conditions.
type SetIf = (u8, Vec<u32>, [Ref; 2]);

/// Which of a word's add, keep and kill bitsets a [`FrameCond`] sets a bit of.
const ADD: u8 = 0;
const KEEP: u8 = 1;
const KILL: u8 = 2;

impl Frame {
    /// Asks the processor to load the first entries of `slot` into its cache, where they are
    /// [`Frame::far`]: [`Runtime::settle_frame`] reads them after the moves' propagation, and
    /// they are anywhere in an array of hundreds of kilobytes (speedChess: 388 KB, and a
    /// cache miss there was a twentieth of a step; paired one playout at a time, 1.024 and
    /// 1.025 as fast). Breakthrough's are near (20 KB), and it is not asked.
    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
        #[cfg(target_arch = "x86_64")]
        if self.far
            && let Some(&start) = self.start.get(slot as usize)
            && let Some(e) = self.entries.get(start as usize..)
        {
            // SAFETY: a prefetch reads nothing the program sees and cannot fault (its address
            // is only a hint: here into `entries`, or past it).
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                let p = e.as_ptr().cast::<i8>();
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            }
        }
    }

    /// No frame fluents: every node in the zero slot, which has no entries.
    fn none(nodes: usize) -> Frame {
        Frame {
            is: Vec::new(),
            words: Vec::new(),
            mask: Vec::new(),
            always: Vec::new(),
            unless: Vec::new(),
            entries: Vec::new(),
            start: vec![0, 0],
            conds: Vec::new(),
            cond_start: vec![0, 0],
            zero: 0,
            far: false,
            slot: vec![0; nodes],
        }
    }

    fn new(net: &Net, block_of: &[u32], sets_of_moves: &[bool]) -> Frame {
        let n = net.kinds.len();
        let is_set = |r: Ref| !is_negated(r) && sets_of_moves[node_of(r) as usize];
        let mut under = InputsUnder::new(n);
        let mut inputs_under = |r: Ref, out: &mut Vec<u32>| under.collect(net, node_of(r), out);
        // The frame fluents, those kept always, those with a "stays unless" rule.
        let words = net.fluents.len().div_ceil(64);
        let mut is = vec![0u64; words];
        let mut always = vec![0u64; words];
        let mut unless = vec![0u64; words];
        // Whether each node depends on a move (an input in its cone): a condition may not. In
        // index order, but for cycles (blocks), till nothing changes.
        let mut reads_moves = vec![false; n];
        let mut changed = true;
        while changed {
            changed = false;
            for k in 0..n {
                if !reads_moves[k]
                    && (matches!(net.kinds[k], Kind::Input(_))
                        || net.inputs[k]
                            .iter()
                            .any(|&r| reads_moves[node_of(r) as usize]))
                {
                    reads_moves[k] = true;
                    changed = true;
                }
            }
        }
        // `S ∧ c ∧ c′`, a set of moves and one or two conditions on the state (the conjunction
        // nested any way: connect four's `(does p (drop x)) ∧ (cellOpen x y) ∧ ¬(cellOpen x
        // y-1)` is `(cellOpen x y) ∧ ((does p (drop x)) ∧ ¬(cellOpen x y-1))`): the set and
        // the conditions ([`TRUE`] for none).
        let conditional = |t: Ref| {
            let (mut set, mut conds) = (None, Vec::new());
            let mut stack = vec![t];
            while let Some(r) = stack.pop() {
                let k = node_of(r) as usize;
                if !reads_moves[k] {
                    // More than two: not one of these (and the walk ends soon, however the
                    // gates under it are shared).
                    if conds.len() == 2 {
                        return None;
                    }
                    conds.push(r);
                } else if is_set(r) {
                    if set.replace(r).is_some() {
                        return None;
                    }
                } else if is_negated(r) || net.kinds[k] != Kind::And || block_of[k] != NONE {
                    return None;
                } else {
                    stack.extend_from_slice(&net.inputs[k]);
                }
            }
            match conds[..] {
                [c] => Some((set?, [c, TRUE])),
                [c, d] => Some((set?, [c, d])),
                _ => None,
            }
        };
        // Each frame fluent, the inputs of its add, keep and kill sets, and its sets under
        // conditions (which of the three each is, its inputs and its conditions).
        let mut found: Vec<(u32, [Vec<u32>; 3], Vec<SetIf>)> = Vec::new();
        'fluents: for (f, &r) in net.next.iter().enumerate() {
            let k = node_of(r) as usize;
            if is_negated(r) || r == FALSE {
                continue;
            }
            let terms: &[Ref] = if net.kinds[k] == Kind::Or && block_of[k] == NONE {
                &net.inputs[k]
            } else {
                std::slice::from_ref(&net.next[f])
            };
            let base = net.base[f];
            let (mut add, mut keep, mut kill) = (Vec::new(), Vec::new(), Vec::new());
            let mut parts_if = Vec::new();
            let (mut kept, mut unless_seen) = (false, false);
            for &t in terms {
                let tk = node_of(t) as usize;
                if t == base {
                    kept = true;
                } else if is_set(t) {
                    inputs_under(t, &mut add);
                } else if !is_negated(t)
                    && net.kinds[tk] == Kind::And
                    && block_of[tk] == NONE
                    && net.inputs[tk].len() == 2
                    && net.inputs[tk].contains(&base)
                {
                    // `(true f) ∧ S`, `(true f) ∧ ¬S`, or `(true f) ∧ (S ∨ ¬S′ ∨ …)` (rules
                    // factored: the literal they share taken out).
                    let other = &net.inputs[tk][usize::from(net.inputs[tk][0] == base)];
                    let ok = node_of(*other) as usize;
                    let parts = if !is_set(*other)
                        && !is_negated(*other)
                        && net.kinds[ok] == Kind::Or
                        && block_of[ok] == NONE
                    {
                        &net.inputs[ok][..]
                    } else {
                        std::slice::from_ref(other)
                    };
                    for &p in parts {
                        if is_set(p) {
                            inputs_under(p, &mut keep);
                        } else if let Some((set, cond)) = conditional(p) {
                            let mut inputs = Vec::new();
                            inputs_under(set, &mut inputs);
                            parts_if.push((KEEP, inputs, cond));
                        } else if is_negated(p) && !unless_seen {
                            // `¬K`: K a set, or sets and sets under conditions (chess: a piece
                            // stays unless a move leaves or takes its square, or takes it en
                            // passant, a pawn having just moved two squares past it).
                            let k = p ^ 1;
                            let kk = node_of(k) as usize;
                            let kills = if !is_set(k)
                                && net.kinds[kk] == Kind::Or
                                && block_of[kk] == NONE
                            {
                                &net.inputs[kk][..]
                            } else {
                                std::slice::from_ref(&k)
                            };
                            for &q in kills {
                                if is_set(q) {
                                    inputs_under(q, &mut kill);
                                } else if let Some((set, cond)) = conditional(q) {
                                    let mut inputs = Vec::new();
                                    inputs_under(set, &mut inputs);
                                    parts_if.push((KILL, inputs, cond));
                                } else {
                                    continue 'fluents;
                                }
                            }
                            unless_seen = true;
                        } else {
                            continue 'fluents;
                        }
                    }
                } else if let Some((set, cond)) = conditional(t) {
                    let mut inputs = Vec::new();
                    inputs_under(set, &mut inputs);
                    parts_if.push((ADD, inputs, cond));
                } else {
                    continue 'fluents;
                }
            }
            is[f / 64] |= 1 << (f % 64);
            if kept {
                always[f / 64] |= 1 << (f % 64);
            }
            if unless_seen {
                unless[f / 64] |= 1 << (f % 64);
            }
            found.push((f as u32, [add, keep, kill], parts_if));
        }
        let frame_words: Vec<u32> = (0..words as u32).filter(|&w| is[w as usize] != 0).collect();
        let mut index_of = vec![NONE; words];
        for (i, &w) in frame_words.iter().enumerate() {
            index_of[w as usize] = i as u32;
        }
        // A slot for each input under frame rules, then the zero slot.
        let mut slot = vec![NONE; n];
        let mut zero = 0;
        for &input in found.iter().flat_map(|(_, parts, parts_if)| {
            parts
                .iter()
                .flatten()
                .chain(parts_if.iter().flat_map(|(_, inputs, _)| inputs))
        }) {
            if slot[input as usize] == NONE {
                slot[input as usize] = zero;
                zero += 1;
            }
        }
        // Each slot's entries, word by word: the fluents come in ascending order, so a slot's
        // words do too, and a bit goes into the slot's last entry or a new one.
        let mut by_slot: Vec<Vec<FrameEntry>> = vec![Vec::new(); zero as usize];
        let mut conds_of: Vec<Vec<FrameCond>> = vec![Vec::new(); zero as usize];
        for (f, parts, parts_if) in &found {
            let word = index_of[*f as usize / 64];
            for (part, inputs, cond) in parts_if {
                for &input in inputs {
                    conds_of[slot[input as usize] as usize].push(FrameCond {
                        word,
                        bit: (f % 64) as u8,
                        part: *part,
                        cond: *cond,
                    });
                }
            }
            for (part, inputs) in parts.iter().enumerate() {
                for &input in inputs {
                    let list = &mut by_slot[slot[input as usize] as usize];
                    if list.last().is_none_or(|e| e.word != word) {
                        list.push(FrameEntry {
                            word,
                            ..FrameEntry::default()
                        });
                    }
                    let e = list.last_mut().expect("an entry for the word");
                    let bits = [&mut e.add, &mut e.keep, &mut e.kill];
                    *bits[part] |= 1 << (f % 64);
                }
            }
        }
        let count: usize = by_slot.iter().map(Vec::len).sum();
        let conds: usize = conds_of.iter().map(Vec::len).sum();
        // Four words an entry (speedChess: 6,824 inputs, 12,135 entries), two a set under
        // conditions: beyond the move sets' bound, the gates stay.
        if count
            .saturating_mul(4)
            .saturating_add(conds.saturating_mul(2))
            > MOVE_SET_WORDS
        {
            return Frame::none(n);
        }
        let (entries, start) = slot_rows(by_slot, count);
        let (conds, cond_start) = slot_rows(conds_of, conds);
        for s in &mut slot {
            if *s == NONE {
                *s = zero;
            }
        }
        Frame {
            mask: frame_words.iter().map(|&w| is[w as usize]).collect(),
            always: frame_words.iter().map(|&w| always[w as usize]).collect(),
            unless: frame_words.iter().map(|&w| unless[w as usize]).collect(),
            is,
            words: frame_words,
            far: std::mem::size_of_val(&entries[..]) > FAR_BYTES,
            entries,
            start,
            conds,
            cond_start,
            zero,
            slot,
        }
    }

    /// Whether fluent `f` is a frame fluent.
    fn member(&self, f: usize) -> bool {
        self.is.get(f / 64).is_some_and(|w| w >> (f % 64) & 1 == 1)
    }
}

/// Each slot's list laid out flat, `total` items in all: the items, and where each slot's
/// begin (the zero slot's, after the others, has none; an entry past it ends it).
fn slot_rows<T>(lists: Vec<Vec<T>>, total: usize) -> (Vec<T>, Vec<u32>) {
    let mut items = Vec::with_capacity(total);
    let mut start = Vec::with_capacity(lists.len() + 2);
    for list in lists {
        start.push(items.len() as u32);
        items.extend(list);
    }
    start.push(items.len() as u32);
    start.push(items.len() as u32);
    (items, start)
}

/// Whether each node is a set of moves: an input, or an OR gate outside blocks over such nodes
/// only (in index order: inputs come before the gates that read them). The move sets' gates
/// and the frame fluents' `S` are such sets.
fn sets_of_moves(net: &Net, block_of: &[u32]) -> Vec<bool> {
    let n = net.kinds.len();
    let mut set = vec![false; n];
    for k in 0..n {
        set[k] = match net.kinds[k] {
            Kind::Input(_) => true,
            Kind::Or => {
                block_of[k] == NONE
                    && !net.inputs[k].is_empty()
                    && net.inputs[k]
                        .iter()
                        .all(|&r| !is_negated(r) && set[node_of(r) as usize])
            }
            _ => false,
        };
    }
    set
}

/// The inputs under a set of moves, each once a call (`seen`: the number of the call that met
/// each node last).
struct InputsUnder {
    seen: Vec<u32>,
    calls: u32,
    stack: Vec<u32>,
}

impl InputsUnder {
    fn new(nodes: usize) -> InputsUnder {
        InputsUnder {
            seen: vec![0; nodes],
            calls: 0,
            stack: Vec::new(),
        }
    }

    /// Adds to `out` the inputs under node `k` (a set of moves: ORs over inputs).
    fn collect(&mut self, net: &Net, k: u32, out: &mut Vec<u32>) {
        self.calls += 1;
        self.stack.push(k);
        while let Some(k) = self.stack.pop() {
            if std::mem::replace(&mut self.seen[k as usize], self.calls) == self.calls {
                continue;
            }
            if matches!(net.kinds[k as usize], Kind::Input(_)) {
                out.push(k);
            } else {
                self.stack
                    .extend(net.inputs[k as usize].iter().map(|&r| node_of(r)));
            }
        }
    }
}
