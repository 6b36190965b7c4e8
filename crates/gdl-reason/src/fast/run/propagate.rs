//! Propagation: what [`Runtime`] does at each step, and what it takes for granted.
//!
//! The loops here read edges, nodes, dirty bits and triggers, the lazy gates' inputs and the
//! frame fluents' conditions without a bounds check per access (`get_unchecked`), each such
//! read under a `SAFETY:` comment saying why it is within its array. What they rely on is
//! asserted once, when the network is laid out ([`Runtime::check_layout`]): every node's
//! successors and triggers a range within `edges` and `triggers`, with an entry past the last
//! node's; every edge's target, lazy gate, lazy input and frame condition a node; a dirty bit
//! and a summary bit for every node; a next-state bit for every trigger's fluent. None of
//! those arrays changes afterwards: this module writes the values in them, never their
//! lengths or the ranges.

use super::*;

impl Runtime {
    /// Asserts what propagation takes for granted, without checking each access, of a layout
    /// of a network of `n` nodes (see the module documentation).
    pub(super) fn check_layout(&self, n: usize) {
        assert!(
            n <= (u32::MAX >> 2) as usize,
            "a network of {n} nodes: a lazy gate's entry holds a node number below 2^30"
        );
        assert!(
            self.nodes.len() == n + 1
                && self
                    .nodes
                    .windows(2)
                    .all(|w| w[0].out_start <= w[1].out_start)
                && self.nodes[n].out_start as usize <= self.edges.len()
                && self.edges.iter().all(|&e| ((e >> 1) as usize) < n)
                && self.dirty.len() * 64 >= n
                && self.summary.len() * 64 >= self.dirty.len()
                && self.trig_start.len() == n + 1
                && self.trig_start.windows(2).all(|w| w[0] <= w[1])
                && self.trig_start[n] as usize <= self.triggers.len()
                && self.triggers.iter().all(|&t| {
                    t & TRIGGER_NEXT == 0 || ((t & TRIGGER_ID) as usize) < self.next_bits.len() * 64
                }),
            "a network's successors lie outside it"
        );
        assert!(
            self.lazy_start.len() == self.lazy.len() + 1
                && self.lazy_start.windows(2).all(|w| w[0] <= w[1])
                && self.lazy_start[self.lazy.len()] as usize <= self.lazy_inputs.len()
                && self.lazy.iter().all(|&e| ((e >> 2) as usize) < n)
                && self.lazy.iter().enumerate().all(|(i, &e)| {
                    e & 3 != LAZY_CHOICE || self.lazy_start[i + 1] - self.lazy_start[i] == 3
                })
                && self.lazy_inputs.iter().all(|&r| (node_of(r) as usize) < n)
                && self
                    .sees_lazy
                    .iter()
                    .all(|&i| (i as usize) < self.lazy.len()),
            "a lazy gate's inputs lie outside the network"
        );
        assert!(
            self.frame_acc.len() == self.frame.words.len()
                && self.frame.conds.iter().all(|c| {
                    (c.word as usize) < self.frame_acc.len()
                        && c.bit < 64
                        && c.cond.iter().all(|&r| (node_of(r) as usize) < n)
                }),
            "a frame fluent's condition lies outside the network"
        );
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
        // by `Runtime::check_layout`), `lazy_start` has an entry past the last one, its ranges
        // lie within `lazy_inputs`, and every lazy gate and input is a node (checked by
        // `Runtime::check_layout`, and that a choice has three inputs; none of them changes
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

    pub(super) fn add_legal(&mut self, m: u32) {
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
    pub(super) fn arm(&mut self, gate: u32, flags: u32) {
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
        // `next_bits` (checked by `Runtime::check_layout`; none of them changes afterwards).
        let (start, end) = unsafe {
            (
                *self.trig_start.get_unchecked(node),
                *self.trig_start.get_unchecked(node + 1),
            )
        };
        for k in start..end {
            // SAFETY: `k` lies in `node`'s range of `triggers` (above).
            let t = unsafe { *self.triggers.get_unchecked(k as usize) };
            let on = (value ^ (t >> 31)) & 1;
            let id = t & TRIGGER_ID;
            if t & TRIGGER_NEXT != 0 {
                let (w, b) = (id as usize / 64, id % 64);
                // SAFETY: a next-state trigger's fluent has a bit in `next_bits` (above).
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
        // by `Runtime::check_layout`), and `dirty` and `summary` have a bit for every node.
        unsafe {
            *self.dirty.get_unchecked_mut(node / 64) |= 1 << (node % 64);
            *self.summary.get_unchecked_mut(node / 4096) |= 1 << ((node / 64) % 64);
        }
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
                // SAFETY: `w` is a word of `dirty` (above).
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
        // SAFETY: `node` is a node (above).
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
            // target is a node (checked by `Runtime::check_layout`; neither changes
            // afterwards).
            let e = unsafe { *self.edges.get_unchecked(i) };
            let target = (e >> 1) as usize;
            debug_assert!(target + 1 < self.nodes.len());
            // SAFETY: `target` is an edge's target, a node (above).
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
    pub(super) fn fixpoint(&mut self, b: usize) {
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
    pub(super) fn settle_frame(&mut self) {
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
                // (checked by `Runtime::check_layout`; neither changes afterwards).
                let value = |r: Ref| unsafe {
                    (self.nodes.get_unchecked(node_of(r) as usize).word >> 31) ^ (r & 1)
                };
                let holds = value(c.cond[0]) & value(c.cond[1]);
                // SAFETY: the condition's word is one of `frame_acc`'s (above).
                let a = unsafe { acc.get_unchecked_mut(c.word as usize) };
                a[c.part as usize] |= u64::from(holds) << c.bit;
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

impl Frame {
    /// Asks the processor to load the first entries of `slot` into its cache, where they are
    /// [`Frame::far`]: [`Runtime::settle_frame`] reads them after the moves' propagation, and
    /// they are anywhere in an array of hundreds of kilobytes (speedChess's), where a cache miss
    /// was a measurable part of a step (docs/benchmarks.md, "How the speed came about",
    /// 52d8112). Breakthrough's are near, and it is not asked.
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
}
