//! Frame fluents: next-state bits computed from the current state's and the moves'.

use super::NONE;
use super::move_sets::{InputsUnder, MOVE_SET_WORDS};
use crate::fast::net::{FALSE, Kind, Net, Ref, TRUE, is_negated, node_of};

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
pub(super) struct Frame {
    /// Whether each fluent is one, a bit each.
    pub(super) is: Vec<u64>,
    /// The words of the state that hold frame fluents, and for each of those words (`i`):
    /// the frame fluents' bits, those kept always, those with a "stays unless" rule.
    pub(super) words: Vec<u32>,
    pub(super) mask: Vec<u64>,
    pub(super) always: Vec<u64>,
    pub(super) unless: Vec<u64>,
    /// For each slot (an input under some frame fluent's rules; the last, `zero`, none), the
    /// words where it adds, keeps or kills a fluent: `entries[start[slot]..start[slot + 1]]`.
    /// A move changes little of the state (chess: the fluents of two squares, which sit
    /// together, the fluents being in the order of their text), and only those words are read.
    pub(super) entries: Vec<FrameEntry>,
    pub(super) start: Vec<u32>,
    /// For each slot, the fluents it adds, keeps or kills where conditions on the state hold
    /// (`(does r m) ∧ c`: connect four's disc lands in the lowest open cell of the column it is
    /// dropped in): `conds[cond_start[slot]..cond_start[slot + 1]]`. The conditions are nodes
    /// like any other, propagated before the frame fluents are computed.
    pub(super) conds: Vec<FrameCond>,
    pub(super) cond_start: Vec<u32>,
    pub(super) zero: u32,
    /// Whether the entries are more than [`FAR_BYTES`], too many to stay in the processor's
    /// first-level cache (see [`Frame::prefetch`]).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) far: bool,
    /// The slot of each node (`zero` for all but the inputs under frame rules).
    pub(super) slot: Vec<u32>,
}

/// Frame entries beyond this many bytes are [`Frame::far`]: twice a first-level data cache of
/// 32 KB (this decade's smallest), since the entries share it with the network's records
/// (breakthrough's are below it, and measured level either way: docs/benchmarks.md, "How the
/// speed came about", 52d8112).
const FAR_BYTES: usize = 64 * 1024;

/// Word `word` (of [`Frame`]'s `words`) of a slot's add, keep and kill bitsets.
#[derive(Clone, Copy, Default)]
pub(super) struct FrameEntry {
    pub(super) word: u32,
    pub(super) add: u64,
    pub(super) keep: u64,
    pub(super) kill: u64,
}

/// A fluent a slot adds, keeps or kills (`part`) where both `cond` hold: bit `bit` of word
/// `word` (of [`Frame`]'s `words`).
#[derive(Clone, Copy)]
pub(super) struct FrameCond {
    pub(super) word: u32,
    pub(super) bit: u8,
    pub(super) part: Part,
    pub(super) cond: [Ref; 2],
}

/// Which of a fluent's add, keep and kill sets a set of moves is part of, and so which of a
/// word's add, keep and kill bitsets it sets a bit of (in that order: `part as usize` indexes
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    Add,
    Keep,
    Kill,
}

impl Frame {
    /// No frame fluents: every node in the zero slot, which has no entries.
    pub(super) fn none(nodes: usize) -> Frame {
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

    /// The frame fluents of a network and their rows: `sets_of_moves` from
    /// [`super::move_sets::sets_of_moves`].
    pub(super) fn new(net: &Net, block_of: &[u32], sets_of_moves: &[bool]) -> Frame {
        let n = net.kinds.len();
        let mut reader = RuleReader {
            net,
            block_of,
            sets_of_moves,
            reads_moves: reads_moves(net),
            under: InputsUnder::new(n),
        };
        // The frame fluents, those kept always, those with a "stays unless" rule.
        let words = net.fluents.len().div_ceil(64);
        let mut is = vec![0u64; words];
        let mut always = vec![0u64; words];
        let mut unless = vec![0u64; words];
        let mut found = Vec::new();
        for f in 0..net.next.len() {
            let Some(fluent) = reader.of_fluent(f) else {
                continue;
            };
            is[f / 64] |= 1 << (f % 64);
            if fluent.kept {
                always[f / 64] |= 1 << (f % 64);
            }
            if fluent.unless {
                unless[f / 64] |= 1 << (f % 64);
            }
            found.push(fluent);
        }
        let frame_words: Vec<u32> = (0..words as u32).filter(|&w| is[w as usize] != 0).collect();
        let mut index_of = vec![NONE; words];
        for (i, &w) in frame_words.iter().enumerate() {
            index_of[w as usize] = i as u32;
        }
        let (mut slot, zero) = slots(n, &found);
        let (by_slot, conds_of) = rows(&found, &slot, &index_of, zero);
        let count: usize = by_slot.iter().map(Vec::len).sum();
        let conds: usize = conds_of.iter().map(Vec::len).sum();
        // Four words an entry, two a set under conditions: beyond the move sets' bound, the
        // gates stay.
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
    pub(super) fn member(&self, f: usize) -> bool {
        self.is.get(f / 64).is_some_and(|w| w >> (f % 64) & 1 == 1)
    }
}

/// A frame fluent's rules, as [`Frame::new`] finds them.
struct FluentRules {
    fluent: u32,
    /// Whether `(true f)` is one of its rules (it stays once it holds), and whether one says it
    /// stays unless a set of moves is made.
    kept: bool,
    unless: bool,
    /// The inputs of its add, keep and kill sets (indexed by [`Part`]).
    parts: [Vec<u32>; 3],
    /// Its sets under conditions.
    conditional: Vec<ConditionalSet>,
}

/// A set of moves under conditions in a frame fluent's rules: which of the fluent's add, keep
/// and kill sets it is part of, its inputs and its conditions.
struct ConditionalSet {
    part: Part,
    inputs: Vec<u32>,
    cond: [Ref; 2],
}

/// What [`Frame::new`] reads a fluent's rules with: the network, the block of each node, which
/// nodes are sets of moves and which depend on a move, and a walk to the inputs under a set.
struct RuleReader<'a> {
    net: &'a Net,
    block_of: &'a [u32],
    sets_of_moves: &'a [bool],
    reads_moves: Vec<bool>,
    under: InputsUnder,
}

impl RuleReader<'_> {
    /// Whether `r` is a set of moves (not negated).
    fn is_set(&self, r: Ref) -> bool {
        !is_negated(r) && self.sets_of_moves[node_of(r) as usize]
    }

    /// Whether node `k` is an OR gate outside blocks.
    fn is_or(&self, k: usize) -> bool {
        self.net.kinds[k] == Kind::Or && self.block_of[k] == NONE
    }

    /// Adds to `out` the inputs under `r`, a set of moves.
    fn inputs_under(&mut self, r: Ref, out: &mut Vec<u32>) {
        self.under.collect(self.net, node_of(r), out);
    }

    /// The rules of fluent `f`, if it is a frame fluent: each of its next-state rules (the
    /// inputs of its OR, or the one) is `(true f)`, a set, `(true f) ∧ …` as
    /// [`RuleReader::kept_while`] reads it, or a set under conditions.
    fn of_fluent(&mut self, f: usize) -> Option<FluentRules> {
        let net = self.net;
        let r = net.next[f];
        let k = node_of(r) as usize;
        if is_negated(r) || r == FALSE {
            return None;
        }
        let terms: &[Ref] = if self.is_or(k) {
            &net.inputs[k]
        } else {
            std::slice::from_ref(&net.next[f])
        };
        let base = net.base[f];
        let mut rules = FluentRules {
            fluent: f as u32,
            kept: false,
            unless: false,
            parts: [Vec::new(), Vec::new(), Vec::new()],
            conditional: Vec::new(),
        };
        for &t in terms {
            let tk = node_of(t) as usize;
            if t == base {
                rules.kept = true;
            } else if self.is_set(t) {
                self.inputs_under(t, &mut rules.parts[Part::Add as usize]);
            } else if !is_negated(t)
                && net.kinds[tk] == Kind::And
                && self.block_of[tk] == NONE
                && net.inputs[tk].len() == 2
                && net.inputs[tk].contains(&base)
            {
                let other = net.inputs[tk][usize::from(net.inputs[tk][0] == base)];
                self.kept_while(other, &mut rules)?;
            } else {
                let set = self.conditional(t, Part::Add)?;
                rules.conditional.push(set);
            }
        }
        Some(rules)
    }

    /// `(true f) ∧ other`: `other` is `S`, `¬S`, or `S ∨ ¬S′ ∨ …` (rules factored: the literal
    /// they share taken out), each set possibly under conditions; `None` if it is not.
    fn kept_while(&mut self, other: Ref, rules: &mut FluentRules) -> Option<()> {
        let net = self.net;
        let ok = node_of(other) as usize;
        let parts = if !self.is_set(other) && !is_negated(other) && self.is_or(ok) {
            &net.inputs[ok][..]
        } else {
            std::slice::from_ref(&other)
        };
        for &p in parts {
            if self.is_set(p) {
                self.inputs_under(p, &mut rules.parts[Part::Keep as usize]);
            } else if let Some(set) = self.conditional(p, Part::Keep) {
                rules.conditional.push(set);
            } else if is_negated(p) && !rules.unless {
                self.killed_by(p ^ 1, rules)?;
                rules.unless = true;
            } else {
                return None;
            }
        }
        Some(())
    }

    /// `¬K` in a rule that keeps the fluent: K a set, or sets and sets under conditions (chess:
    /// a piece stays unless a move leaves or takes its square, or takes it en passant, a pawn
    /// having just moved two squares past it); `None` if it is not.
    fn killed_by(&mut self, k: Ref, rules: &mut FluentRules) -> Option<()> {
        let net = self.net;
        let kk = node_of(k) as usize;
        let kills = if !self.is_set(k) && self.is_or(kk) {
            &net.inputs[kk][..]
        } else {
            std::slice::from_ref(&k)
        };
        for &q in kills {
            if self.is_set(q) {
                self.inputs_under(q, &mut rules.parts[Part::Kill as usize]);
            } else {
                let set = self.conditional(q, Part::Kill)?;
                rules.conditional.push(set);
            }
        }
        Some(())
    }

    /// `S ∧ c ∧ c′`, a set of moves and one or two conditions on the state (the conjunction
    /// nested any way: connect four's `(does p (drop x)) ∧ (cellOpen x y) ∧ ¬(cellOpen x y-1)`
    /// is `(cellOpen x y) ∧ ((does p (drop x)) ∧ ¬(cellOpen x y-1))`), as a `part` of the
    /// fluent's rules: the set's inputs and the conditions ([`TRUE`] for none).
    fn conditional(&mut self, t: Ref, part: Part) -> Option<ConditionalSet> {
        let net = self.net;
        let (mut set, mut conds) = (None, Vec::new());
        let mut stack = vec![t];
        while let Some(r) = stack.pop() {
            let k = node_of(r) as usize;
            if !self.reads_moves[k] {
                // More than two: not one of these (and the walk ends soon, however the gates
                // under it are shared).
                if conds.len() == 2 {
                    return None;
                }
                conds.push(r);
            } else if self.is_set(r) {
                if set.replace(r).is_some() {
                    return None;
                }
            } else if is_negated(r) || net.kinds[k] != Kind::And || self.block_of[k] != NONE {
                return None;
            } else {
                stack.extend_from_slice(&net.inputs[k]);
            }
        }
        let cond = match conds[..] {
            [c] => [c, TRUE],
            [c, d] => [c, d],
            _ => return None,
        };
        let mut inputs = Vec::new();
        self.inputs_under(set?, &mut inputs);
        Some(ConditionalSet { part, inputs, cond })
    }
}

/// Whether each node depends on a move (an input in its cone): a condition may not. In index
/// order, but for cycles (blocks), till nothing changes.
fn reads_moves(net: &Net) -> Vec<bool> {
    let n = net.kinds.len();
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
    reads_moves
}

/// A slot for each input under frame rules, numbered in the order the rules name them, then
/// the zero slot: each node's slot (`NONE` for the others, as yet), and the zero slot.
fn slots(n: usize, found: &[FluentRules]) -> (Vec<u32>, u32) {
    let mut slot = vec![NONE; n];
    let mut zero = 0;
    for &input in found.iter().flat_map(|rules| {
        rules
            .parts
            .iter()
            .flatten()
            .chain(rules.conditional.iter().flat_map(|set| &set.inputs))
    }) {
        if slot[input as usize] == NONE {
            slot[input as usize] = zero;
            zero += 1;
        }
    }
    (slot, zero)
}

/// Each slot's entries and sets under conditions (`index_of`: each word of the state's place
/// among the words of frame fluents). The fluents come in ascending order, so their words do
/// too: the bits of one word are gathered for every slot its fluents name (`bits`, with the
/// slots `touched`), then each of those slots gets one entry for the word. A slot's entries so
/// come word by word, and a pair of a fluent and an input costs an `or` into a dense table
/// rather than a look at the slot's list (amazons: 52 million pairs into 870 thousand entries).
fn rows(
    found: &[FluentRules],
    slot: &[u32],
    index_of: &[u32],
    zero: u32,
) -> (Vec<Vec<FrameEntry>>, Vec<Vec<FrameCond>>) {
    let mut by_slot: Vec<Vec<FrameEntry>> = vec![Vec::new(); zero as usize];
    let mut conds_of: Vec<Vec<FrameCond>> = vec![Vec::new(); zero as usize];
    let mut bits = vec![[0u64; 3]; zero as usize];
    let mut touched: Vec<u32> = Vec::new();
    for group in found.chunk_by(|a, b| a.fluent / 64 == b.fluent / 64) {
        let word = index_of[group[0].fluent as usize / 64];
        for rules in group {
            let f = rules.fluent;
            for set in &rules.conditional {
                for &input in &set.inputs {
                    conds_of[slot[input as usize] as usize].push(FrameCond {
                        word,
                        bit: (f % 64) as u8,
                        part: set.part,
                        cond: set.cond,
                    });
                }
            }
            for (part, inputs) in rules.parts.iter().enumerate() {
                for &input in inputs {
                    let s = slot[input as usize];
                    let b = &mut bits[s as usize];
                    if *b == [0; 3] {
                        touched.push(s);
                    }
                    b[part] |= 1 << (f % 64);
                }
            }
        }
        for s in touched.drain(..) {
            let [add, keep, kill] = std::mem::take(&mut bits[s as usize]);
            by_slot[s as usize].push(FrameEntry {
                word,
                add,
                keep,
                kill,
            });
        }
    }
    (by_slot, conds_of)
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
