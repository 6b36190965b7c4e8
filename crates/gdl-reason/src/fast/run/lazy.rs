//! Lazy gates: the gates only `goal` and `sees` need, evaluated in index order when a goal or
//! a percept is asked for, and never propagated into.

use super::*;
use crate::fast::net::{Kind, Net};

/// The lazy gates of a network, as [`Runtime`] keeps them (its `lazy`, `lazy_start`,
/// `lazy_inputs` and `sees_lazy`), and which nodes they are.
pub(super) struct LazyGates {
    /// Whether each node is a lazy gate (a choice's two ANDs included: they have no entry).
    pub(super) is: Vec<bool>,
    /// The lazy gates in index order (`node << 2 | LAZY_OR, LAZY_AND or LAZY_CHOICE`), and
    /// their inputs (`inputs[start[i]..start[i + 1]]`).
    pub(super) entries: Vec<u32>,
    pub(super) start: Vec<u32>,
    pub(super) inputs: Vec<Ref>,
    /// The lazy gates `sees` needs (positions in `entries`, ascending).
    pub(super) sees: Vec<u32>,
}

impl LazyGates {
    /// What `legal`, `next` and `terminal` do not depend on (`eager`: what they do), nor a block
    /// (`block_of`), that is not dead: only `goal` and `sees` need it. `fanout`: how many gates
    /// read each node.
    pub(super) fn new(
        net: &Net,
        block_of: &[u32],
        dead: &[bool],
        eager: &[bool],
        fanout: &[u32],
    ) -> LazyGates {
        let n = net.kinds.len();
        let is: Vec<bool> = (0..n)
            .map(|k| {
                !dead[k]
                    && !eager[k]
                    && matches!(net.kinds[k], Kind::And | Kind::Or)
                    && !net.inputs[k].is_empty()
                    && block_of[k] == NONE
            })
            .collect();
        let (choices, absorbed) = choices(net, &is, fanout);
        let mut entries = Vec::new();
        let mut start = vec![0u32];
        let mut inputs = Vec::new();
        let mut position = vec![NONE; n];
        let mut choice = choices.iter().peekable();
        for (k, index) in position.iter_mut().enumerate() {
            if is[k] && !absorbed[k] {
                *index = entries.len() as u32;
                if let Some((_, refs)) = choice.next_if(|&&(at, _)| at as usize == k) {
                    entries.push(((k as u32) << 2) | LAZY_CHOICE);
                    inputs.extend_from_slice(refs);
                } else {
                    let kind = if net.kinds[k] == Kind::And {
                        LAZY_AND
                    } else {
                        LAZY_OR
                    };
                    entries.push(((k as u32) << 2) | kind);
                    inputs.extend_from_slice(&net.inputs[k]);
                }
                start.push(inputs.len() as u32);
            }
        }
        let sees = sees_cone(net, &position, entries.len());
        LazyGates {
            is,
            entries,
            start,
            inputs,
            sees,
        }
    }
}

/// Lazy choices: an OR of two lazy ANDs that nothing else reads, one with a literal and the
/// other with its negation, `(s ∧ x) ∨ (¬s ∧ y)`, is `s ? x : y`: one gate for three, and one
/// input read after `s` (reversi's goals count each colour's discs square by square, "one
/// more if the square holds one, else as many", thousands of such ORs evaluated at the end of
/// every playout). Not in games with `sees` rules (the lazy gates `sees` needs are found by
/// walking the gates as they are).
///
/// The choices in index order (each OR and its literal, then what it takes if that holds and
/// what it takes if not), and whether each node is an AND a choice absorbed.
fn choices(net: &Net, is_lazy: &[bool], fanout: &[u32]) -> (Vec<(u32, [Ref; 3])>, Vec<bool>) {
    let n = net.kinds.len();
    let mut choices: Vec<(u32, [Ref; 3])> = Vec::new();
    let mut absorbed = vec![false; n];
    if !net.sees.iter().all(|s| s.is_empty()) {
        return (choices, absorbed);
    }
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
            && is_lazy[a]
    };
    for (k, &lazy) in is_lazy.iter().enumerate() {
        if !lazy || net.kinds[k] != Kind::Or || net.inputs[k].len() != 2 {
            continue;
        }
        let (one, other) = (net.inputs[k][0], net.inputs[k][1]);
        if node_of(one) == node_of(other) || !only_read_here(one) || !only_read_here(other) {
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
    (choices, absorbed)
}

/// The lazy gates in the cone of `sees` (eager gates keep their values anyway), as positions
/// among the `count` lazy gates, ascending; `position`: each node's (`NONE`: not one).
fn sees_cone(net: &Net, position: &[u32], count: usize) -> Vec<u32> {
    let mut in_sees = vec![false; count];
    let mut stack: Vec<u32> = net
        .sees
        .iter()
        .flatten()
        .map(|&(_, r)| node_of(r))
        .collect();
    while let Some(k) = stack.pop() {
        let i = position[k as usize];
        if i != NONE && !std::mem::replace(&mut in_sees[i as usize], true) {
            stack.extend(net.inputs[k as usize].iter().map(|&r| node_of(r)));
        }
    }
    (0..count as u32).filter(|&i| in_sees[i as usize]).collect()
}
