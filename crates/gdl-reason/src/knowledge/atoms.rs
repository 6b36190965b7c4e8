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

use super::engine::{PerHistory, St};
use crate::machine::{ReasonError, Result, StateMachine};
use crate::terms::TermId;

use super::layer::Layer;
use super::specs::{Knower, Known, Spec};

/// For each spec, for each history, its atoms that hold.
type PerSpec = Vec<Vec<Vec<TermId>>>;

/// Computes `knows` for every history of `layer`.
pub(crate) fn compute<E: PerHistory>(
    m: &mut E,
    layer: &mut Layer<St<E>>,
    specs: &[Spec],
) -> Result<()> {
    let knows_symbol = {
        let id = m
            .m()
            .intern(gdl_syntax::gdl3::KNOWS)
            .map_err(|e| ReasonError::Invalid(e.to_string()))?;
        m.m_ref().terms().symbol(id)
    };
    let all: Vec<usize> = (0..layer.class_counts.len()).collect();
    let components = components(layer, &all);
    for e in &mut layer.entries {
        e.knows = Arc::new([]);
    }
    let mut atoms: PerSpec = vec![vec![Vec::new(); layer.entries.len()]; specs.len()];
    let round = |m: &mut E, layer: &Layer<St<E>>, atoms: &PerSpec, base: bool| {
        let mut next = atoms.clone();
        for (i, spec) in specs.iter().enumerate() {
            if spec.is_base() == base {
                let candidates = candidates(m, layer, spec.known, atoms)?;
                next[i] = known(m, layer, &components, *spec, &candidates, knows_symbol);
            }
        }
        Ok::<_, ReasonError>(next)
    };
    atoms = round(m, layer, &atoms, true)?;
    set(layer, &atoms);
    if specs.iter().all(Spec::is_base) {
        return Ok(());
    }
    for _ in 0..=specs.len() + 1 {
        let next = round(m, layer, &atoms, false)?;
        if next == atoms {
            return Ok(());
        }
        atoms = next;
        set(layer, &atoms);
    }
    Err(ReasonError::Evaluation(
        "the `knows` atoms of a history did not settle: recursion through `knows`".into(),
    ))
}

/// Gives each history the union of its atoms of every spec.
fn set<S>(layer: &mut Layer<S>, atoms: &PerSpec) {
    for (h, e) in layer.entries.iter_mut().enumerate() {
        let mut all: Vec<TermId> = atoms.iter().flat_map(|a| a[h].iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        e.knows = all.into();
    }
}

/// For each history, the atoms of `known` that hold after it (sorted), with the history's
/// `knows` atoms as they stand.
fn candidates<E: PerHistory>(
    m: &mut E,
    layer: &Layer<St<E>>,
    known: Known,
    atoms: &PerSpec,
) -> Result<Vec<Vec<TermId>>> {
    let mut out = Vec::with_capacity(layer.entries.len());
    for (h, e) in layer.entries.iter().enumerate() {
        let mut atoms = match known {
            Known::Nothing => Vec::new(),
            Known::Relation { rel, .. } => {
                let at = m.knowing(&e.state, &e.knows)?;
                m.tuples(&at, rel)?
            }
            Known::Knows(inner) => atoms[inner][h].clone(),
        };
        atoms.sort_unstable();
        out.push(atoms);
    }
    Ok(out)
}

/// The `knows` atoms of `spec` after each history, sorted.
fn known<E: PerHistory, S>(
    m: &mut E,
    layer: &Layer<S>,
    components: &[u32],
    spec: Spec,
    candidates: &[Vec<TermId>],
    knows_symbol: gdl_check::Symbol,
) -> Vec<Vec<TermId>> {
    let roles: Vec<usize> = match spec.knower {
        Knower::Role(r) => vec![r],
        Knower::Every => (0..m.m_ref().roles().len()).collect(),
        Knower::Common => vec![usize::MAX],
        Knower::Nobody => Vec::new(),
    };
    let mut out = vec![Vec::new(); layer.entries.len()];
    for r in roles {
        let (group, groups): (Vec<u32>, usize) = if r == usize::MAX {
            let count = components.iter().max().map_or(0, |&c| c as usize + 1);
            (components.to_vec(), count)
        } else {
            let classes = layer.entries.iter().map(|e| e.classes[r]).collect();
            (classes, layer.class_counts[r] as usize)
        };
        let shared = intersections(&group, groups, candidates);
        let role = (r != usize::MAX).then(|| m.m_ref().roles()[r]);
        let store = m.store_mut();
        for (h, &g) in group.iter().enumerate() {
            for &p in &shared[g as usize] {
                let args: &[TermId] = match role {
                    Some(role) => &[role, p],
                    None => &[p],
                };
                out[h].push(store.function(knows_symbol, args));
            }
        }
    }
    for atoms in &mut out {
        atoms.sort_unstable();
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

/// The component of each history: histories joined when one of `roles` cannot tell them apart,
/// transitively (union-find), numbered from 0.
pub(crate) fn components<S>(layer: &Layer<S>, roles: &[usize]) -> Vec<u32> {
    let n = layer.entries.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &r in roles {
        let mut first = vec![usize::MAX; layer.class_counts[r] as usize];
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
