//! The `knows` atoms that hold after each history of a layer.
//!
//! For a spec (who knows what), the candidates after a history h are the atoms of what is known
//! that hold after h; `(knows R P)` holds after h for the candidates of h shared by every
//! history of h's class for R, `(knows P)` for those shared by every history of h's component
//! (the classes of all roles joined). Specs about relations below `knows` are computed once;
//! the others (nested `knows`, relations defined with `knows`) are computed again from the
//! atoms of the round before until nothing changes: the checker forbids recursion through
//! `knows` (E019), so the atoms of nesting depth d are right from round d on, and the first
//! round that repeats the one before is the fixpoint, right at every depth.

use std::sync::Arc;

use crate::machine::{ReasonError, Result, StateMachine};
use crate::reference::ReferenceMachine;
use crate::terms::TermId;

use super::layer::Layer;
use super::specs::{Knower, Known, Spec};

/// Computes `knows` for every history of `layer`.
pub(crate) fn compute(m: &mut ReferenceMachine, layer: &mut Layer, specs: &[Spec]) -> Result<()> {
    let knows_symbol = {
        let id = m
            .intern(gdl_syntax::gdl3::KNOWS)
            .map_err(|e| ReasonError::Invalid(e.to_string()))?;
        m.terms().symbol(id)
    };
    let n = layer.entries.len();
    let components = components(layer);
    // Atoms of the specs computed once, per history.
    let mut base: Vec<Vec<TermId>> = vec![Vec::new(); n];
    for e in &mut layer.entries {
        e.knows = Arc::new([]);
    }
    m.set_knowledge(Arc::new([]));
    let mut once = Vec::new();
    for spec in specs.iter().filter(|s| s.is_base()) {
        let candidates = candidates(m, layer, spec.known)?;
        once.extend(known(
            m,
            layer,
            &components,
            *spec,
            &candidates,
            knows_symbol,
        ));
    }
    for (h, atoms) in once.into_iter().flatten() {
        base[h].push(atoms);
    }
    let rest: Vec<&Spec> = specs.iter().filter(|s| !s.is_base()).collect();
    let mut previous = finish(base.clone());
    set(layer, &previous);
    if rest.is_empty() {
        return Ok(());
    }
    for _ in 0..=specs.len() + 1 {
        let mut atoms = base.clone();
        let mut found = Vec::new();
        for spec in &rest {
            let candidates = candidates(m, layer, spec.known)?;
            found.extend(known(
                m,
                layer,
                &components,
                **spec,
                &candidates,
                knows_symbol,
            ));
        }
        for (h, atom) in found.into_iter().flatten() {
            atoms[h].push(atom);
        }
        let atoms = finish(atoms);
        if atoms == previous {
            return Ok(());
        }
        set(layer, &atoms);
        previous = atoms;
    }
    Err(ReasonError::Evaluation(
        "the `knows` atoms of a history did not settle: recursion through `knows`".into(),
    ))
}

fn finish(atoms: Vec<Vec<TermId>>) -> Vec<Arc<[TermId]>> {
    atoms
        .into_iter()
        .map(|mut a| {
            a.sort_unstable();
            a.dedup();
            a.into()
        })
        .collect()
}

fn set(layer: &mut Layer, atoms: &[Arc<[TermId]>]) {
    for (e, a) in layer.entries.iter_mut().zip(atoms) {
        e.knows = a.clone();
    }
}

/// For each history, the atoms of `known` that hold after it (sorted), with the history's
/// `knows` atoms as they stand.
fn candidates(m: &mut ReferenceMachine, layer: &Layer, known: Known) -> Result<Vec<Vec<TermId>>> {
    let mut out = Vec::with_capacity(layer.entries.len());
    for e in &layer.entries {
        let mut atoms = match known {
            Known::Nothing => Vec::new(),
            Known::Relation { rel, .. } => {
                m.set_knowledge(e.knows.clone());
                m.tuples(&e.state, rel)?
            }
            Known::Knows(arity) => e
                .knows
                .iter()
                .copied()
                .filter(|&t| m.terms().args(t).len() == arity)
                .collect(),
        };
        atoms.sort_unstable();
        out.push(atoms);
    }
    Ok(out)
}

/// The `knows` atoms of `spec` after each history: (history, atom).
fn known(
    m: &mut ReferenceMachine,
    layer: &Layer,
    components: &[u32],
    spec: Spec,
    candidates: &[Vec<TermId>],
    knows_symbol: gdl_check::Symbol,
) -> Vec<Vec<(usize, TermId)>> {
    let roles: Vec<usize> = match spec.knower {
        Knower::Role(r) => vec![r],
        Knower::Every => (0..m.roles().len()).collect(),
        Knower::Common => vec![usize::MAX],
        Knower::Nobody => Vec::new(),
    };
    let mut out = Vec::new();
    for r in roles {
        let (group, groups): (Vec<u32>, usize) = if r == usize::MAX {
            let count = components.iter().max().map_or(0, |&c| c as usize + 1);
            (components.to_vec(), count)
        } else {
            let classes = layer.entries.iter().map(|e| e.classes[r]).collect();
            (classes, layer.class_counts[r] as usize)
        };
        let shared = intersections(&group, groups, candidates);
        let role = (r != usize::MAX).then(|| m.roles()[r]);
        let store = m.store_mut();
        let mut atoms = Vec::new();
        for (h, &g) in group.iter().enumerate() {
            for &p in &shared[g as usize] {
                let args: &[TermId] = match role {
                    Some(role) => &[role, p],
                    None => &[p],
                };
                atoms.push((h, store.function(knows_symbol, args)));
            }
        }
        out.push(atoms);
    }
    out
}

/// For each group, the candidates shared by all its histories.
fn intersections(group: &[u32], groups: usize, candidates: &[Vec<TermId>]) -> Vec<Vec<TermId>> {
    let mut shared: Vec<Option<Vec<TermId>>> = vec![None; groups];
    for (h, &g) in group.iter().enumerate() {
        match &mut shared[g as usize] {
            Some(s) => s.retain(|t| candidates[h].binary_search(t).is_ok()),
            none => *none = Some(candidates[h].clone()),
        }
    }
    shared.into_iter().map(Option::unwrap_or_default).collect()
}

/// The component of each history: histories joined when some role cannot tell them apart,
/// transitively (union-find), numbered from 0.
fn components(layer: &Layer) -> Vec<u32> {
    let n = layer.entries.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (r, &count) in layer.class_counts.iter().enumerate() {
        let mut first = vec![usize::MAX; count as usize];
        for (h, e) in layer.entries.iter().enumerate() {
            let c = e.classes[r] as usize;
            if first[c] == usize::MAX {
                first[c] = h;
            } else {
                let (a, b) = (root(&mut parent, first[c]), root(&mut parent, h));
                parent[a] = b;
            }
        }
    }
    let mut number = vec![u32::MAX; n];
    let mut next = 0;
    (0..n)
        .map(|h| {
            let r = root(&mut parent, h);
            if number[r] == u32::MAX {
                number[r] = next;
                next += 1;
            }
            number[r]
        })
        .collect()
}
