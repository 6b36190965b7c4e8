//! Move sets: OR gates over inputs only, evaluated from bitsets of the inputs under them.

use super::NONE;
use crate::fast::net::{Kind, Net, is_negated, node_of};

/// The move sets of a network (see [`Runtime`](super::Runtime)'s `set_node`): which gates are
/// OR gates over inputs only, and, for those read by anything else, the bitsets of the inputs
/// under them.
pub(super) struct MoveSets {
    /// Whether each node is such a gate (its incoming edges are not followed).
    pub(super) member: Vec<bool>,
    pub(super) node: Vec<u32>,
    pub(super) width: usize,
    pub(super) slot: Vec<u32>,
    pub(super) bits: Vec<u64>,
    pub(super) mask: Vec<u64>,
}

/// Move sets whose bitsets would take more words than this are left to the gates' counters.
pub(super) const MOVE_SET_WORDS: usize = 1 << 22;

impl MoveSets {
    /// `sets_of_moves` from [`sets_of_moves`]: the eager OR gates among them are the members
    /// (the inputs of an eager gate are eager).
    pub(super) fn new(
        net: &Net,
        eager: &[bool],
        sets_of_moves: &[bool],
        dead: &[bool],
    ) -> MoveSets {
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
        // of an input's bitset, each an OR over the roles' inputs), twice as many at least
        // (measured on breakthrough and chineseCheckers4: docs/benchmarks.md, "Move sets").
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

/// Whether each node is a set of moves: an input, or an OR gate outside blocks over such nodes
/// only (in index order: inputs come before the gates that read them). The move sets' gates
/// and the frame fluents' `S` are such sets.
pub(super) fn sets_of_moves(net: &Net, block_of: &[u32]) -> Vec<bool> {
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
pub(super) struct InputsUnder {
    seen: Vec<u32>,
    calls: u32,
    stack: Vec<u32>,
}

impl InputsUnder {
    pub(super) fn new(nodes: usize) -> InputsUnder {
        InputsUnder {
            seen: vec![0; nodes],
            calls: 0,
            stack: Vec::new(),
        }
    }

    /// Adds to `out` the inputs under node `k` (a set of moves: ORs over inputs).
    pub(super) fn collect(&mut self, net: &Net, k: u32, out: &mut Vec<u32>) {
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
