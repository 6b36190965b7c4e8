//! The propositional network of a ground program: a node per base proposition (`true` atom),
//! per input (`does` atom) and per AND/OR gate; negation is a flag on an edge.
//!
//! Built with constant folding (an atom no rule can derive is false, a gate with a false input
//! to an AND is false, …), one-input gates replaced by their input, equal gates shared (also
//! gates that are the same conjunction or disjunction of the same leaves, nested differently:
//! [`merge_equivalent`]), and everything that cannot affect `legal`, `next`, `goal`,
//! `terminal` or `sees` removed. Fluents are numbered in the order of their text (where the
//! rules read the state).
//!
//! Ground atoms that depend on each other positively within a state (paths, connected groups)
//! make cycles of gates. Such a strongly connected set of gates is a *block*: its nodes are
//! numbered together, and the runtime evaluates a block as a whole, by least fixpoint, when one
//! of its inputs from outside changes. A cycle through a negation has no such meaning (the
//! program is not stratified at ground level) and is refused.

use gdl_check::{RelId, Reserved, scc};
use rustc_hash::FxHashMap;

use super::csr;
use super::ground::Ground;
use crate::terms::TermId;

/// A node with a polarity: `node << 1 | negated`. Node 0 is the constant false, so
/// [`FALSE`] and [`TRUE`] are references too.
pub(crate) type Ref = u32;
pub(crate) const FALSE: Ref = 0;
pub(crate) const TRUE: Ref = 1;

pub(crate) fn node_of(r: Ref) -> u32 {
    r >> 1
}

pub(crate) fn is_negated(r: Ref) -> bool {
    r & 1 == 1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// Node 0.
    False,
    /// A base proposition: fluent number `n` is true in the current state.
    Base(u32),
    /// An input: move number `n` is being made.
    Input(u32),
    And,
    Or,
}

/// A network, before it is laid out for running.
pub(crate) struct Net {
    pub kinds: Vec<Kind>,
    pub inputs: Vec<Vec<Ref>>,
    /// The fluents, in the order of their text (of their first appearance in `init` or `next` in
    /// a game whose rules never read the state).
    pub fluents: Vec<TermId>,
    /// The base node of each fluent.
    pub base: Vec<Ref>,
    /// The moves: role index and move term, in the order of the `does` relation's atoms.
    pub moves: Vec<(usize, TermId)>,
    /// The input node of each move ([`FALSE`]: none, nothing depends on the move).
    pub input: Vec<Ref>,
    /// The number of each move of each role.
    pub move_index: FxHashMap<(usize, TermId), u32>,
    /// Each role's legal moves: move number and when it is legal.
    pub legal: Vec<Vec<(u32, Ref)>>,
    /// When each fluent holds in the next state.
    pub next: Vec<Ref>,
    /// The blocks: gates that depend on each other in a cycle, `start..start + len` in node
    /// order (after [`prune`]).
    pub blocks: Vec<(u32, u32)>,
    pub terminal: Ref,
    /// Each role's goal values and when they hold.
    pub goals: Vec<Vec<(TermId, Ref)>>,
    /// Each role's percepts (GDL-II `sees`) and when they hold, given the state and the moves.
    pub sees: Vec<Vec<(TermId, Ref)>>,
    /// The fluents of the initial state.
    pub init: Vec<u32>,
    /// Whether `legal`, `goal` or `terminal` depend on a move (the description breaks the
    /// specification's restriction on `does`, which the checker reports but does not refuse):
    /// then they must be answered with no move made.
    pub outputs_see_moves: bool,
    /// What `legal` and `terminal` depend on (and node 0) is nodes `0..legal_cone`; the nodes
    /// only `next`, `goal` and `sees` read come after (after [`prune`]).
    pub legal_cone: u32,
}

impl Net {
    /// What the network is for: every node reference `legal`, `next`, `terminal`, `goal` and
    /// `sees` read.
    pub fn outputs(&self) -> impl Iterator<Item = Ref> + '_ {
        self.legal
            .iter()
            .flatten()
            .map(|&(_, r)| r)
            .chain(self.next.iter().copied())
            .chain(std::iter::once(self.terminal))
            .chain(self.goals.iter().flatten().map(|&(_, r)| r))
            .chain(self.sees.iter().flatten().map(|&(_, r)| r))
    }

    /// Replaces every reference `legal`, `next`, `terminal`, `goal` and `sees` read by `f` of it.
    fn map_outputs(&mut self, f: impl Fn(Ref) -> Ref) {
        for (_, r) in self.legal.iter_mut().flatten() {
            *r = f(*r);
        }
        for r in self.next.iter_mut() {
            *r = f(*r);
        }
        self.terminal = f(self.terminal);
        for (_, r) in self.goals.iter_mut().flatten() {
            *r = f(*r);
        }
        for (_, r) in self.sees.iter_mut().flatten() {
            *r = f(*r);
        }
    }

    /// Whether each node is one of `roots` or an input of one, directly or not.
    pub fn cone(&self, roots: impl IntoIterator<Item = u32>) -> Vec<bool> {
        let mut seen = vec![false; self.kinds.len()];
        let mut stack: Vec<u32> = roots.into_iter().collect();
        while let Some(k) = stack.pop() {
            if !std::mem::replace(&mut seen[k as usize], true) {
                stack.extend(self.inputs[k as usize].iter().map(|&r| node_of(r)));
            }
        }
        seen
    }

    /// The block of each node (`u32::MAX`: none).
    pub fn block_of(&self) -> Vec<u32> {
        let mut block_of = vec![u32::MAX; self.kinds.len()];
        for (b, &(start, len)) in self.blocks.iter().enumerate() {
            for k in start..start + len {
                block_of[k as usize] = b as u32;
            }
        }
        block_of
    }
}

/// Why a network cannot be built.
#[derive(Debug)]
pub(crate) enum NetError {
    /// Ground atoms depend on their own negation within a state.
    NegativeCycle(usize),
}

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetError::NegativeCycle(n) => write!(
                f,
                "{n} ground atoms depend on each other through a negation within a state"
            ),
        }
    }
}

struct Builder {
    kinds: Vec<Kind>,
    inputs: Vec<Vec<Ref>>,
    shared: FxHashMap<(bool, Vec<Ref>), Ref>,
}

impl Builder {
    fn node(&mut self, kind: Kind, inputs: Vec<Ref>) -> Ref {
        self.kinds.push(kind);
        self.inputs.push(inputs);
        ((self.kinds.len() - 1) as u32) << 1
    }

    /// The conjunction (`and`) or disjunction of `refs`, simplified and shared.
    fn gate(&mut self, and: bool, mut refs: Vec<Ref>) -> Ref {
        match simplify(and, &mut refs) {
            Some(r) => r,
            None => {
                if let Some(&r) = self.shared.get(&(and, refs.clone())) {
                    return r;
                }
                let kind = if and { Kind::And } else { Kind::Or };
                let r = self.node(kind, refs.clone());
                self.shared.insert((and, refs), r);
                r
            }
        }
    }
}

/// Simplifies the inputs of a conjunction (`and`) or disjunction: without the neutral constant,
/// sorted, each once. Returns what the gate is when that is not a gate of two inputs or more
/// (a constant: the absorbing one among them, or `x` and `¬x` together; the neutral constant
/// for no input; the input for one).
fn simplify(and: bool, refs: &mut Vec<Ref>) -> Option<Ref> {
    // For an AND, false absorbs and true is neutral; for an OR the reverse.
    let (absorbing, neutral) = if and { (FALSE, TRUE) } else { (TRUE, FALSE) };
    refs.retain(|&r| r != neutral);
    refs.sort_unstable();
    refs.dedup();
    if refs.contains(&absorbing) || refs.windows(2).any(|w| w[0] ^ 1 == w[1]) {
        return Some(absorbing);
    }
    match refs.len() {
        0 => Some(neutral),
        1 => Some(refs[0]),
        _ => None,
    }
}

/// The alternatives of an atom's OR, from its rules' conjunctions, with literals that several
/// conjunctions have in common taken out: `(a ∧ x) ∨ (a ∧ y) ∨ z = (a ∧ (x ∨ y)) ∨ z`, the
/// literal in the most conjunctions first, then again within and without. The frame axiom
/// `(next (cell ?m ?n b))` of tic-tac-toe, "the cell is blank and some move marks another
/// cell", becomes one AND over the cell and an OR of the moves instead of an AND per move
/// reading the cell: a move switched then updates a counter per cell, not a gate per cell that
/// flips and the OR above it again.
fn factored(b: &mut Builder, conjs: Vec<Vec<Ref>>) -> Vec<Ref> {
    // Each conjunction simplified as `gate` would: without `true`, sorted, deduplicated; those
    // that cannot hold dropped.
    let mut simple: Vec<Vec<Ref>> = Vec::with_capacity(conjs.len());
    for mut c in conjs {
        c.retain(|&r| r != TRUE);
        c.sort_unstable();
        c.dedup();
        if c.contains(&FALSE) || c.windows(2).any(|w| w[0] ^ 1 == w[1]) {
            continue;
        }
        simple.push(c);
    }
    let mut out = Vec::new();
    factor_into(b, simple, &mut out);
    out
}

/// Conjunctions of an OR beyond this many are factored only by what they all have in common
/// (finding the literal in the most of them again and again would be quadratic).
const FACTOR_GREEDY_MAX: usize = 1024;

/// [`factored`]'s work: pushes onto `out` the alternatives of the OR of `conjs` (each sorted).
fn factor_into(b: &mut Builder, mut conjs: Vec<Vec<Ref>>, out: &mut Vec<Ref>) {
    loop {
        if conjs.len() < 2 {
            out.extend(conjs.into_iter().map(|c| b.gate(true, c)));
            return;
        }
        // The literal in the most conjunctions (the lowest of those, for a stable network).
        let best = if conjs.len() > FACTOR_GREEDY_MAX {
            let (first, rest) = conjs.split_first().expect("two or more");
            first
                .iter()
                .copied()
                .find(|r| rest.iter().all(|c| c.binary_search(r).is_ok()))
        } else {
            let mut count: FxHashMap<Ref, u32> = FxHashMap::default();
            for c in &conjs {
                for &r in c {
                    *count.entry(r).or_insert(0) += 1;
                }
            }
            count
                .into_iter()
                .filter(|&(_, n)| n >= 2)
                .max_by_key(|&(r, n)| (n, std::cmp::Reverse(r)))
                .map(|(r, _)| r)
        };
        let Some(a) = best else {
            out.extend(conjs.into_iter().map(|c| b.gate(true, c)));
            return;
        };
        // Every literal the conjunctions with `a` have in common comes out with it.
        let (mut with, without): (Vec<Vec<Ref>>, Vec<Vec<Ref>>) =
            conjs.into_iter().partition(|c| c.binary_search(&a).is_ok());
        let (first, rest) = with.split_first().expect("two or more");
        let common: Vec<Ref> = first
            .iter()
            .copied()
            .filter(|r| rest.iter().all(|c| c.binary_search(r).is_ok()))
            .collect();
        for c in &mut with {
            c.retain(|r| common.binary_search(r).is_err());
        }
        let mut inner = Vec::new();
        factor_into(b, with, &mut inner);
        let either = b.gate(false, inner);
        let mut all = common;
        all.push(either);
        out.push(b.gate(true, all));
        conjs = without;
    }
}

/// The network's leaves: a base node per fluent and an input node per move.
struct Leaves {
    fluents: Vec<TermId>,
    base: Vec<Ref>,
    /// Each move's role (`usize::MAX` for a `does` of something that is not a role) and term.
    moves: Vec<(usize, TermId)>,
    input: Vec<Ref>,
}

/// Makes the leaves, and points the atoms of `true` and `does` at them.
fn leaves(
    g: &Ground,
    program: &gdl_check::Program,
    roles: &[TermId],
    b: &mut Builder,
    atom_ref: &mut [Ref],
) -> Leaves {
    let rel = |r: Reserved| program.reserved(r);
    let true_rel = rel(Reserved::True);
    let does_rel = rel(Reserved::Does);
    // The fluents: what `true` can hold (which includes what `init` and `next` give), or, in a
    // game whose rules never read the state, what `init` and `next` give.
    let mut fluents = Vec::new();
    let mut base = Vec::new();
    if let Some(t) = true_rel {
        // In the order of their text: the fluents of one cell (`(cell a 1 …)`) sit together,
        // which is where a move's frame changes fall (see `Frame`).
        let relation = &g.db.rels[t as usize];
        let mut order: Vec<u32> = (0..relation.len()).collect();
        order.sort_by_cached_key(|&id| g.db.store.text(&program.symbols, relation.tuple(id)[0]));
        for (f, &id) in order.iter().enumerate() {
            fluents.push(relation.tuple(id)[0]);
            let r = b.node(Kind::Base(f as u32), Vec::new());
            base.push(r);
            atom_ref[(g.atom_base[t as usize] + id) as usize] = r;
        }
    } else {
        for r in [rel(Reserved::Init), rel(Reserved::Next)]
            .into_iter()
            .flatten()
        {
            let relation = &g.db.rels[r as usize];
            for id in 0..relation.len() {
                let f = relation.tuple(id)[0];
                if !fluents.contains(&f) {
                    fluents.push(f);
                    base.push(b.node(Kind::Base(fluents.len() as u32 - 1), Vec::new()));
                }
            }
        }
    }
    let mut moves = Vec::new();
    let mut input = Vec::new();
    if let Some(d) = does_rel {
        let rel = &g.db.rels[d as usize];
        for id in 0..rel.len() {
            let tuple = rel.tuple(id);
            let r = b.node(Kind::Input(id), Vec::new());
            // A `does` of something that is not a role never happens: leave it false.
            if let Some(role) = roles.iter().position(|&x| x == tuple[0]) {
                moves.push((role, tuple[1]));
            } else {
                moves.push((usize::MAX, tuple[1]));
            }
            input.push(r);
            atom_ref[(g.atom_base[d as usize] + id) as usize] = r;
        }
    }
    Leaves {
        fluents,
        base,
        moves,
        input,
    }
}

/// Makes the gates of the rules, a component of the atoms' dependency graph at a time in
/// dependency order: an atom is the OR of its instances' ANDs (factored), and the members of
/// a cycle each get their OR node first so that they can refer to each other.
fn rule_gates(
    g: &Ground,
    program: &gdl_check::Program,
    b: &mut Builder,
    atom_ref: &mut [Ref],
) -> Result<(), NetError> {
    let true_rel = program.reserved(Reserved::True);
    let does_rel = program.reserved(Reserved::Does);
    let atom_count = g.atoms.len();
    // Instances by head (CSR), and the atom dependency graph.
    let (by_head_start, by_head) = csr(
        atom_count,
        g.instances
            .iter()
            .enumerate()
            .map(|(k, inst)| (inst.head, k as u32)),
    );
    let (succ_start, succ) = csr(
        atom_count,
        g.instances.iter().flat_map(|inst| {
            g.body[inst.body.0 as usize..inst.body.1 as usize]
                .iter()
                .map(|lit| (lit.atom, inst.head))
        }),
    );
    let order = scc::components_of_rows(&succ_start, &succ);
    drop((succ_start, succ));

    let mut in_comp = vec![false; atom_count];
    for comp in order.topological() {
        let cyclic = comp.len() > 1 || {
            let a = comp[0] as usize;
            by_head[by_head_start[a] as usize..by_head_start[a + 1] as usize]
                .iter()
                .any(|&k| {
                    let inst = &g.instances[k as usize];
                    g.body[inst.body.0 as usize..inst.body.1 as usize]
                        .iter()
                        .any(|l| l.atom as usize == a)
                })
        };
        if cyclic {
            // Every member first gets its OR node, so that members can refer to each other.
            for &a in comp {
                in_comp[a as usize] = true;
                atom_ref[a as usize] = b.node(Kind::Or, Vec::new());
            }
        }
        for &a in comp {
            let (r, _) = g.atoms[a as usize];
            if Some(r) == true_rel || Some(r) == does_rel {
                continue;
            }
            let mut conjs = Vec::new();
            for &k in
                &by_head[by_head_start[a as usize] as usize..by_head_start[a as usize + 1] as usize]
            {
                let inst = &g.instances[k as usize];
                let mut conj = Vec::new();
                for lit in &g.body[inst.body.0 as usize..inst.body.1 as usize] {
                    if lit.negated && in_comp[lit.atom as usize] {
                        return Err(NetError::NegativeCycle(comp.len()));
                    }
                    conj.push(atom_ref[lit.atom as usize] ^ u32::from(lit.negated));
                }
                conjs.push(conj);
            }
            let alternatives = if cyclic {
                conjs.into_iter().map(|c| b.gate(true, c)).collect()
            } else {
                factored(b, conjs)
            };
            if cyclic {
                // The member's OR, simplified by hand (it already has its node).
                let mut alternatives: Vec<Ref> = alternatives;
                alternatives.retain(|&r| r != FALSE);
                alternatives.sort_unstable();
                alternatives.dedup();
                if alternatives.contains(&TRUE) {
                    alternatives = vec![TRUE];
                }
                b.inputs[node_of(atom_ref[a as usize]) as usize] = alternatives;
            } else {
                atom_ref[a as usize] = b.gate(false, alternatives);
            }
        }
        if cyclic {
            for &a in comp {
                in_comp[a as usize] = false;
            }
        }
    }
    Ok(())
}

/// Builds the network of a ground program.
pub(crate) fn build(
    g: &Ground,
    program: &gdl_check::Program,
    roles: &[TermId],
) -> Result<Net, NetError> {
    let rel = |r: Reserved| program.reserved(r);
    let atom_count = g.atoms.len();

    let mut b = Builder {
        kinds: vec![Kind::False],
        inputs: vec![Vec::new()],
        shared: FxHashMap::default(),
    };
    let mut atom_ref = vec![FALSE; atom_count];

    let Leaves {
        fluents,
        base,
        mut moves,
        mut input,
    } = leaves(g, program, roles, &mut b, &mut atom_ref);
    rule_gates(g, program, &mut b, &mut atom_ref)?;

    // Outputs. A static relation's tuples always hold.
    let refs_of = |r: RelId| -> Vec<(&[TermId], Ref)> {
        let relation = &g.db.rels[r as usize];
        (0..relation.len())
            .map(|t| {
                let at = if g.dynamic[r as usize] {
                    atom_ref[(g.atom_base[r as usize] + t) as usize]
                } else {
                    TRUE
                };
                (relation.tuple(t), at)
            })
            .collect()
    };
    let role_of = |t: TermId| roles.iter().position(|&x| x == t);
    let mut move_index: FxHashMap<(usize, TermId), u32> = moves
        .iter()
        .enumerate()
        .map(|(k, &m)| (m, k as u32))
        .collect();
    let mut legal = vec![Vec::new(); roles.len()];
    if let Some(l) = rel(Reserved::Legal) {
        for (tuple, r) in refs_of(l) {
            if let Some(role) = role_of(tuple[0])
                && r != FALSE
            {
                // A game whose rules never mention `does` has no input nodes.
                let m = *move_index.entry((role, tuple[1])).or_insert_with(|| {
                    moves.push((role, tuple[1]));
                    input.push(FALSE);
                    (moves.len() - 1) as u32
                });
                legal[role].push((m, r));
            }
        }
    }
    let fluent_index: FxHashMap<TermId, u32> = fluents
        .iter()
        .enumerate()
        .map(|(k, &f)| (f, k as u32))
        .collect();
    let mut next = vec![FALSE; fluents.len()];
    if let Some(n) = rel(Reserved::Next) {
        for (tuple, r) in refs_of(n) {
            let f = fluent_index[&tuple[0]];
            next[f as usize] = r;
        }
    }
    let terminal = match rel(Reserved::Terminal) {
        Some(t) => refs_of(t).first().map_or(FALSE, |&(_, r)| r),
        None => FALSE,
    };
    let mut goals = vec![Vec::new(); roles.len()];
    if let Some(gr) = rel(Reserved::Goal) {
        for (tuple, r) in refs_of(gr) {
            if let Some(role) = role_of(tuple[0])
                && r != FALSE
            {
                goals[role].push((tuple[1], r));
            }
        }
    }
    let mut sees = vec![Vec::new(); roles.len()];
    if let Some(s) = rel(Reserved::Sees) {
        for (tuple, r) in refs_of(s) {
            if let Some(role) = role_of(tuple[0])
                && r != FALSE
            {
                sees[role].push((tuple[1], r));
            }
        }
    }
    let mut init = Vec::new();
    if let Some(i) = rel(Reserved::Init) {
        for (tuple, _) in refs_of(i) {
            init.push(fluent_index[&tuple[0]]);
        }
    }
    init.sort_unstable();
    init.dedup();

    let mut net = Net {
        kinds: b.kinds,
        inputs: b.inputs,
        fluents,
        base,
        moves,
        input,
        move_index,
        legal,
        next,
        blocks: Vec::new(),
        terminal,
        goals,
        sees,
        init,
        outputs_see_moves: false,
        legal_cone: 0,
    };
    net.outputs_see_moves = outputs_see_moves(&net);
    prune(&mut net);
    if merge_equivalent(&mut net) > 0 {
        prune(&mut net);
    }
    Ok(net)
}

/// A gate is compared with the others by its leaves (below) only if it has at most this many.
const LEAVES_MAX: usize = 64;

/// Merges gates that compute the same function of the same *leaves*: an AND's leaves are its
/// inputs, with each input that is itself an AND (not negated, not in a block) replaced by its
/// leaves, and likewise for an OR. Gates built from the rules one by one can be the same
/// conjunction nested differently: chess's `openStretch` of the squares from `a` to `d` going
/// east is `¬occupied a ∧ (¬occupied b ∧ (¬occupied c ∧ ¬occupied d))`, the same stretch going
/// west the other way round; merged, a square that empties or fills changes half as many
/// gates. Every reference to a gate is made a reference to the first (lowest) gate with its
/// leaves, which comes before it, so the order stays topological and no cycle is made; gates
/// in blocks are left as they are. A gate whose inputs, so replaced, come to less (one input
/// twice, or `x` and `¬x`) is simplified as the builder would, and replaced by what it comes
/// to if that is not a gate. Returns how many gates were merged or simplified away (no longer
/// referenced: [`prune`] removes them). Runs on a pruned network, whose order is topological.
fn merge_equivalent(net: &mut Net) -> usize {
    let n = net.kinds.len();
    let block_of = net.block_of();
    let mut rep: Vec<Ref> = (0..n as u32).map(|k| k << 1).collect();
    // Each first gate's leaves, `flat[span.0..span.1]`, sorted (`(0, 0)`, none, for other
    // nodes: a gate has two leaves or more).
    let mut span = vec![(0u32, 0u32); n];
    let mut flat: Vec<Ref> = Vec::new();
    // The first gates, by the hash of their kind and leaves.
    let mut first: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    let hasher = rustc_hash::FxBuildHasher;
    let hash_of = |and: bool, leaves: &[Ref]| {
        use std::hash::BuildHasher;
        hasher.hash_one((and, leaves))
    };
    let mut leaves: Vec<Ref> = Vec::new();
    let mut merged = 0;
    for k in 0..n {
        for r in net.inputs[k].iter_mut() {
            *r = rep[node_of(*r) as usize] ^ (*r & 1);
        }
        let and = match net.kinds[k] {
            Kind::And => true,
            Kind::Or => false,
            _ => continue,
        };
        if block_of[k] != u32::MAX {
            continue;
        }
        if let Some(r) = simplify(and, &mut net.inputs[k]) {
            // Every input comes before the gate: so does what it comes to.
            rep[k] = r;
            merged += 1;
            continue;
        }
        leaves.clear();
        for &r in &net.inputs[k] {
            let i = node_of(r) as usize;
            if !is_negated(r) && span[i].1 > span[i].0 && net.kinds[i] == net.kinds[k] {
                leaves.extend_from_slice(&flat[span[i].0 as usize..span[i].1 as usize]);
            } else {
                leaves.push(r);
            }
            if leaves.len() > LEAVES_MAX {
                break;
            }
        }
        if leaves.len() > LEAVES_MAX {
            continue;
        }
        leaves.sort_unstable();
        leaves.dedup();
        let h = hash_of(and, &leaves);
        let found = first.find(h, |&g| {
            let g = g as usize;
            net.kinds[g] == net.kinds[k] && flat[span[g].0 as usize..span[g].1 as usize] == leaves
        });
        if let Some(&g) = found {
            rep[k] = g << 1;
            merged += 1;
        } else {
            let start = flat.len() as u32;
            flat.extend_from_slice(&leaves);
            span[k] = (start, flat.len() as u32);
            first.insert_unique(h, k as u32, |&g| {
                let g = g as usize;
                hash_of(
                    net.kinds[g] == Kind::And,
                    &flat[span[g].0 as usize..span[g].1 as usize],
                )
            });
        }
    }
    if merged > 0 {
        net.map_outputs(|r| rep[node_of(r) as usize] ^ (r & 1));
    }
    merged
}

/// Whether `legal`, `goal` or `terminal` depend on an input.
fn outputs_see_moves(net: &Net) -> bool {
    let cone = net.cone(
        net.legal
            .iter()
            .flatten()
            .map(|&(_, r)| node_of(r))
            .chain(std::iter::once(node_of(net.terminal)))
            .chain(net.goals.iter().flatten().map(|&(_, r)| node_of(r))),
    );
    net.kinds
        .iter()
        .zip(&cone)
        .any(|(kind, &seen)| seen && matches!(kind, Kind::Input(_)))
}

/// Removes the gates no output depends on, renumbering the nodes in a topological order
/// (sources are kept: they are the state and the moves).
fn prune(net: &mut Net) {
    let n = net.kinds.len();
    let mut live = vec![false; n];
    live[0] = true;
    let mut stack: Vec<u32> = Vec::new();
    let mark = |r: Ref, live: &mut Vec<bool>, stack: &mut Vec<u32>| {
        let node = node_of(r) as usize;
        if !live[node] {
            live[node] = true;
            stack.push(node as u32);
        }
    };
    for (k, kind) in net.kinds.iter().enumerate() {
        if matches!(kind, Kind::Base(_) | Kind::Input(_)) {
            live[k] = true;
        }
    }
    for r in net.outputs().collect::<Vec<_>>() {
        mark(r, &mut live, &mut stack);
    }
    while let Some(node) = stack.pop() {
        for &r in &net.inputs[node as usize] {
            mark(r, &mut live, &mut stack);
        }
    }
    // Live nodes in a topological order of their strongly connected components, level by level
    // (Kahn's algorithm with a queue over the components): nodes at the same distance from the
    // sources sit together, which the runtime's caches like (faster on hex, the other games
    // level: docs/benchmarks.md, "How the speed came about", 19ea7e1), and a cycle's nodes sit
    // together as a block.
    let (succ_start, succ_list) = csr(
        n,
        (0..n)
            .filter(|&k| live[k])
            .flat_map(|k| net.inputs[k].iter().map(move |&r| (node_of(r), k as u32))),
    );
    let succ =
        |k: u32| &succ_list[succ_start[k as usize] as usize..succ_start[k as usize + 1] as usize];
    let scc = scc::components_of_rows(&succ_start, &succ_list);
    let comps: Vec<&[u32]> = scc.topological().filter(|c| live[c[0] as usize]).collect();
    let mut comp_of = vec![u32::MAX; n];
    for (c, members) in comps.iter().enumerate() {
        for &m in *members {
            comp_of[m as usize] = c as u32;
        }
    }
    let mut pending: Vec<u32> = vec![0; comps.len()];
    for k in 0..n {
        if live[k] {
            for &r in &net.inputs[k] {
                if comp_of[node_of(r) as usize] != comp_of[k] {
                    pending[comp_of[k] as usize] += 1;
                }
            }
        }
    }
    // What `legal` and `terminal` depend on comes first: after a transition, the runtime
    // propagates only that far until the moves are chosen and set (the rest, next-state logic
    // mostly, would be propagated with the last step's moves, and again with the new ones).
    // The cone is closed under inputs, so ordering it first keeps the order topological, and a
    // cycle's nodes are all in it or all out of it.
    let mut in_cone = net.cone(
        net.legal
            .iter()
            .flatten()
            .map(|&(_, r)| node_of(r))
            .chain(std::iter::once(node_of(net.terminal))),
    );
    in_cone[0] = true;
    // Every component that depends on no other: the sources (node 0, the constant, first, so it
    // stays node 0) and cycles with no support from outside. Two queues: the cone's components,
    // then the others.
    let mut ready: [std::collections::VecDeque<u32>; 2] = Default::default();
    let queue_of = |c: usize| usize::from(!in_cone[comps[c][0] as usize]);
    let mut queued = vec![false; comps.len()];
    for k in 0..n {
        if live[k] {
            let c = comp_of[k] as usize;
            if pending[c] == 0 && !std::mem::replace(&mut queued[c], true) {
                ready[queue_of(c)].push_back(c as u32);
            }
        }
    }
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut blocks = Vec::new();
    let mut legal_cone = None;
    loop {
        let c = match ready[0].pop_front() {
            Some(c) => c,
            None => {
                legal_cone.get_or_insert(order.len() as u32);
                match ready[1].pop_front() {
                    Some(c) => c,
                    None => break,
                }
            }
        };
        let members = comps[c as usize];
        if members.len() > 1 || succ(members[0]).contains(&members[0]) {
            blocks.push((order.len() as u32, members.len() as u32));
        }
        let mut sorted = members.to_vec();
        sorted.sort_unstable();
        for &k in &sorted {
            order.push(k);
            for &u in succ(k) {
                let cu = comp_of[u as usize];
                if cu != c {
                    pending[cu as usize] -= 1;
                    if pending[cu as usize] == 0 {
                        ready[queue_of(cu as usize)].push_back(cu);
                    }
                }
            }
        }
    }
    debug_assert_eq!(order.len(), live.iter().filter(|&&l| l).count());
    debug_assert!(
        order
            .iter()
            .enumerate()
            .all(|(i, &k)| in_cone[k as usize] == (i < legal_cone.unwrap_or(0) as usize))
    );
    net.blocks = blocks;
    net.legal_cone = legal_cone.unwrap_or(order.len() as u32);
    let mut new_id = vec![u32::MAX; n];
    let mut kinds = Vec::new();
    let mut inputs = Vec::new();
    for &k in &order {
        let k = k as usize;
        new_id[k] = kinds.len() as u32;
        kinds.push(net.kinds[k]);
        inputs.push(std::mem::take(&mut net.inputs[k]));
    }
    let map = |r: Ref| (new_id[node_of(r) as usize] << 1) | (r & 1);
    for ins in &mut inputs {
        for r in ins.iter_mut() {
            *r = map(*r);
        }
    }
    net.kinds = kinds;
    net.inputs = inputs;
    for r in net.base.iter_mut().chain(net.input.iter_mut()) {
        *r = map(*r);
    }
    net.map_outputs(map);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast::ground::{ground, test_limits};
    use crate::terms::TermStore;

    fn net_of(text: &str) -> Net {
        let checked = gdl_check::check(text);
        assert!(checked.blocking_errors().next().is_none());
        let program = &checked.program;
        let mut store = TermStore::new();
        let roles = crate::fast::roles_of(program, &mut store);
        let g = ground(program, store, &test_limits(false)).unwrap();
        build(&g, program, &roles).unwrap()
    }

    /// Open stretches of a line of six cells, going right and going left, as chess writes its
    /// lines: the stretch from `i` to `k` going right nests its conjunction from `i`, the same
    /// stretch going left from `k`. Legal moves read each stretch in both directions; nothing
    /// else is a conjunction.
    const STRETCHES: &str = "
        (role p)
        (cell 1) (cell 2) (cell 3) (cell 4) (cell 5) (cell 6)
        (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
        (dir right) (dir left)
        (init (occ 2)) (init (occ 5)) (init (step 1))
        (<= (open ?i ?i ?d) (cell ?i) (dir ?d) (not (true (occ ?i))))
        (<= (open ?i ?k right) (succ ?i ?j) (not (true (occ ?i))) (open ?j ?k right))
        (<= (open ?k ?i left) (succ ?j ?k) (not (true (occ ?k))) (open ?j ?i left))
        (<= (legal p (fill ?i ?k)) (open ?i ?k right) (distinct ?i ?k))
        (<= (legal p (clear ?k ?i)) (open ?k ?i left) (distinct ?i ?k))
        (legal p wait)
        (<= (next (occ ?k)) (does p (fill ?i ?k)))
        (<= (next (occ ?i)) (does p (clear ?k ?i)))
        (<= (next (occ ?i)) (true (occ ?i)))
        (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))
        (<= terminal (true (step 5)))
        (<= (goal p 100) (true (occ 1)))
        (<= (goal p 0) (not (true (occ 1))))";

    #[test]
    fn conjunctions_nested_differently_are_one_gate() {
        let net = net_of(STRETCHES);
        let ands = net.kinds.iter().filter(|k| **k == Kind::And).count();
        // A stretch of two cells or more, C(6, 2) = 15, one gate each whichever way it goes
        // (25 unmerged: those of two cells were already one gate, their inputs sorted).
        assert_eq!(ands, 15);
        // Each gate has a `fill` and a `clear` reading it.
        for list in &net.legal {
            let gates: Vec<Ref> = list.iter().map(|&(_, r)| r).collect();
            for &r in &gates {
                if net.kinds[node_of(r) as usize] == Kind::And {
                    assert_eq!(gates.iter().filter(|&&s| s == r).count(), 2);
                }
            }
        }
        crate::fast::tests::agrees_with_reference(STRETCHES, 40);
    }

    #[test]
    fn a_gate_whose_inputs_merge_into_one_is_that_input() {
        // `p` and `rr` are both `a ∧ b ∧ c`, nested differently; `terminal` is their OR, which
        // after the merge reads one gate twice: it is that gate.
        let text = "
            (role r) (f a) (f b) (f c) (init (on a))
            (<= (legal r (toggle ?x)) (f ?x))
            (<= (next (on ?x)) (does r (toggle ?x)) (not (true (on ?x))))
            (<= (next (on ?x)) (true (on ?x)) (not (does r (toggle ?x))))
            (<= q (true (on b)) (true (on c)))
            (<= p (true (on a)) q)
            (<= s (true (on a)) (true (on b)))
            (<= rr s (true (on c)))
            (<= terminal p)
            (<= terminal rr)
            (<= (goal r 100) (true (on a)))
            (<= (goal r 0) (not (true (on a))))";
        let net = net_of(text);
        let t = net.terminal;
        assert!(!is_negated(t) && net.kinds[node_of(t) as usize] == Kind::And);
        for ins in &net.inputs {
            let mut sorted = ins.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                ins.len(),
                "a gate reads an input twice: {ins:?}"
            );
        }
        crate::fast::tests::agrees_with_reference(text, 40);
    }
}
