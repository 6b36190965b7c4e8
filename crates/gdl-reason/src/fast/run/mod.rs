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
//! guard is off, or disarmed while it is false, keeps its value and is not visited.
//!
//! **Move sets.** An OR gate over inputs only (directly or through other such gates) holds
//! when some role's move is one of a set: breakthrough's frame axiom says a cell keeps its
//! piece if the move made, by either role, does not touch it. Through counters, every move
//! switched would update the OR gates of every cell it does not touch (about 60 each way as
//! the turn passes) for the few whose values change. Such a gate is set like a source
//! instead: each input has a bitset of the gates above it, the gates' values are the OR of
//! the bitsets of the inputs on, and when moves switch only the words under the inputs
//! switched are computed again; the gates whose bits changed are set and propagate as usual.
//! Move sets stay where another gate reads them (a cell that keeps the mark of the cell next
//! to it unless a move touches that one).
//!
//! **Frame fluents.** Where every next-state rule of a fluent, as the network has it, is a set
//! of moves (`S`, an OR over inputs only), `(true f)`, `(true f) ∧ S`, `(true f) ∧ ¬S`, or
//! `(true f) ∧ (S ∨ ¬S′ ∨ …)` as factoring leaves rules that share `(true f)`, with one `¬S` at
//! most (breakthrough's cells: a piece arrives where a move goes, stays if the move made does
//! not touch its cell; chess's: stays unless a move affects its square), its next-state bit
//! is computed when the moves are set, 64 fluents a word, from the current state's bits and
//! bitsets of the inputs on, kept per input only for the words where it has bits ([`Frame`]).
//! The gates of those rules that nothing else reads (with the move sets only they read) are
//! not laid out at all (in breakthrough, they were most of a step's visits). A set of moves
//! may also come with one or two conditions on the state (nodes no move is under), in an add,
//! a keep or a kill, `S ∧ c ∧ c′` (connect four's disc lands where the cell is open and the
//! one below it is not; tic-tac-toe's mark where the cell is blank; chess's pawn taken en
//! passant): each input lists those it is part of, and the conditions' values, propagated
//! like any gate's, are read when the bits are computed.
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
//! changes afterwards. Those reads and the assertions are in `propagate.rs`, together.
//!
//! **Legal first.** The network orders what `legal` and `terminal` depend on before the rest
//! ([`Net::legal_cone`](crate::fast::net::Net::legal_cone)). After a transition, or a state
//! loaded, propagation stops there: the rest (next-state logic, mostly) would be propagated
//! with the moves of the step before and again with the new ones; it stays dirty until the
//! moves are set ([`Runtime::set_moves`]), or a goal or a percept is asked for.
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
//!
//! **Where the code is.** This file holds the runtime's state and what it answers (values,
//! legal moves); `layout.rs` lays a network out, pass by pass; `propagate.rs` runs it, a step
//! at a time, and holds every read without a bounds check with what it relies on; `frame.rs`
//! finds the frame fluents, `move_sets.rs` the move sets, `lazy.rs` the lazy gates and
//! choices; `saved.rs` saves and restores a state's values. What each choice above measured
//! (instructions by callgrind, paired runs) is in docs/benchmarks.md, "How the speed came
//! about".

mod frame;
mod layout;
mod lazy;
mod move_sets;
mod propagate;
mod saved;

use self::frame::Frame;
pub(crate) use self::saved::Saved;
use super::net::{Ref, node_of};

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
    cur_bits: Vec<u64>,
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

    /// The current state, a bit per fluent.
    pub fn bits(&self) -> &[u64] {
        &self.cur_bits
    }

    /// Starts counting how often each node changes value.
    pub fn count_flips(&mut self) {
        self.flips_seen = vec![0; self.nodes.len()];
    }

    /// The counts since [`Runtime::count_flips`], and stops counting.
    pub fn take_flips(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.flips_seen)
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
}
