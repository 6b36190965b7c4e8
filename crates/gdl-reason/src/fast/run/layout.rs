//! Laying a network out for [`Runtime`].

use rustc_hash::FxHashMap;

use super::frame::{Frame, KILL};
use super::move_sets::{MoveSets, sets_of_moves};
use super::*;
use crate::fast::csr;
use crate::fast::net::{FALSE, Kind, Net, is_negated};

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
}
