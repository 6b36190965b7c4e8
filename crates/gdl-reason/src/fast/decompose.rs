//! Splitting rules so that their ground instances do not multiply out variables the head does
//! not need (bucket elimination).
//!
//! A variable that is not in the head is existential: `h(x) :- a(x, e), b(e), c(x)` holds when
//! some `e` makes `a(x, e), b(e)` true, so it is `h(x) :- aux(x), c(x)` with
//! `aux(x) :- a(x, e), b(e)`. The instances of the two rules number |a ⋈ b| + |aux ⋈ c| instead of
//! |a ⋈ b ⋈ c|. Eliminating an existential variable gathers the literals that mention it (its
//! bucket, closed so that every negation and `distinct` in it has its variables bound by the
//! bucket's positive literals) into an auxiliary relation over the variables the rest of the
//! rule still needs. Variables are eliminated greedily, the one with the smallest estimated
//! bucket join first, while the bucket is smaller than the whole body; of buckets estimated
//! the same, the one whose auxiliary relation is guessed smallest (see [`decompose`]). Sizes
//! are estimated from the distinct values of the whole arguments a bucket binds, or, finer,
//! of every bound subterm (`(cell ?x ?y ?p)` with `?x` bound): the finer estimates split some
//! games into fewer ground rules and others into more (quarto's network is 30 times larger
//! with them), so the grounder uses them only where the coarse ones fail.
//!
//! This is exact for any partition of the body: the auxiliary relation is the projection of
//! the bucket's conjunction on the variables it shares with the rest and the head.

use super::datalog::{Budget, Db, Relation, Stop, bound_paths, check_budget};
use super::normal::{FlatRule, Lit, PAtom, Pat};

/// Variables of a literal, each once.
fn vars_of(lit: &Lit) -> Vec<u32> {
    let mut out = Vec::new();
    let mut add = |v: u32| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    match lit {
        Lit::Pos(a) | Lit::Neg(a) => a.args.iter().for_each(|p| p.for_each_var(&mut add)),
        Lit::Distinct(a, b) | Lit::Same(a, b) => {
            a.for_each_var(&mut add);
            b.for_each_var(&mut add);
        }
    }
    out
}

/// Variables that the positive literals among `lits` bind.
fn positively_bound(lits: &[&Lit]) -> Vec<u32> {
    let mut out = Vec::new();
    for lit in lits {
        if let Lit::Pos(_) = lit {
            for v in vars_of(lit) {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The size assumed for a relation not computed yet, and the selectivity of each of its bound
/// positions.
const UNKNOWN_SIZE: f64 = 1000.0;
const UNKNOWN_DISTINCT: f64 = 10.0;

/// What is assumed of an auxiliary relation that a decomposition has made and nothing has
/// computed yet: its size, and the distinct values of each of its arguments (variables).
struct Guess {
    size: f64,
    distinct: Vec<f64>,
}

/// The guess made for relation `rel`, if it is one of `guesses` (relation, guess).
fn guess_of(guesses: &[(u32, Guess)], rel: u32) -> Option<&Guess> {
    guesses.iter().find(|(r, _)| *r == rel).map(|(_, g)| g)
}

/// The size assumed for relation `rel`: its guess's, its own if `known`, or a default.
fn size_of(db: &Db, known: &impl Fn(u32) -> bool, guesses: &[(u32, Guess)], rel: u32) -> f64 {
    match guess_of(guesses, rel) {
        Some(g) => g.size,
        None if known(rel) => db.rels[rel as usize].len() as f64,
        None => UNKNOWN_SIZE,
    }
}

/// The distinct values assumed at `path` in relation `rel` (a guessed relation's arguments are
/// variables: its paths are whole arguments).
fn distinct_of(
    db: &mut Db,
    known: &impl Fn(u32) -> bool,
    guesses: &[(u32, Guess)],
    rel: u32,
    path: &[u8],
) -> f64 {
    match guess_of(guesses, rel) {
        Some(g) => g.distinct[usize::from(path[0])],
        None if known(rel) => f64::from(db.rels[rel as usize].distinct_at(path, &db.store)),
        None => UNKNOWN_DISTINCT,
    }
}

/// The estimated number of bindings a conjunction has: positive literals joined smallest
/// first, each bound position dividing by the distinct values found there. An auxiliary
/// relation of this decomposition that has a guess (`guesses`) counts as guessed; other
/// relations count as they are if `known`, with a default size if not (an auxiliary relation
/// made by this decomposition is not computed yet: it counts as empty where every relation is
/// `known`).
fn estimate(
    db: &mut Db,
    lits: &[&Lit],
    known: &impl Fn(u32) -> bool,
    guesses: &[(u32, Guess)],
    fine: bool,
) -> f64 {
    let mut bound: Vec<u32> = Vec::new();
    let mut size = 1.0f64;
    let mut left: Vec<&PAtom> = lits
        .iter()
        .filter_map(|l| match l {
            Lit::Pos(a) => Some(a),
            _ => None,
        })
        .collect();
    while !left.is_empty() {
        let mut best: Option<(f64, usize)> = None;
        for (k, atom) in left.iter().enumerate() {
            let mut s = size_of(db, known, guesses, atom.rel);
            // Bound subterms (`fine`), or whole arguments only (paths of length 1).
            let paths = bound_paths(&atom.args, &|v| bound.contains(&v));
            for path in paths.iter().filter(|p| fine || p.len() == 1) {
                s /= distinct_of(db, known, guesses, atom.rel, path);
            }
            if best.is_none_or(|(b, _)| s < b) {
                best = Some((s, k));
            }
        }
        let (s, k) = best.expect("a literal is left");
        size *= s.max(1.0 / 64.0);
        let atom = left.swap_remove(k);
        atom.args.iter().for_each(|p| {
            p.for_each_var(&mut |v| {
                if !bound.contains(&v) {
                    bound.push(v)
                }
            })
        });
    }
    size
}

/// Splits `rule` into rules over auxiliary relations and the rule itself, in evaluation order.
/// Auxiliary relations are added to `db`, and to `dynamic` (whether each relation depends on
/// the state). Sizes are estimated from the relations that are `known` (computed). Of buckets
/// whose joins are estimated the same (within [`TIE`]), the first whose auxiliary relation is
/// guessed smallest is eliminated ([`guess`], from the joins estimated again with the guesses
/// of the auxiliary relations made so far); the guesses decide nothing else.
///
/// With `anchor`, the rule's first literal (its demand, see `demand`) goes into every
/// auxiliary relation, so that each is computed only where demanded (when the literal's
/// variables are all the head's).
pub(crate) fn decompose(
    db: &mut Db,
    rule: &FlatRule,
    dynamic: &mut Vec<bool>,
    known: &impl Fn(u32) -> bool,
    budget: &Budget,
    anchor: bool,
    fine: bool,
) -> Result<Vec<FlatRule>, Stop> {
    let mut out = Vec::new();
    let mut body: Vec<Lit> = rule.body.clone();
    let mut guesses: Vec<(u32, Guess)> = Vec::new();
    let mut head_vars = Vec::new();
    rule.head.for_each_var(&mut |v| {
        if !head_vars.contains(&v) {
            head_vars.push(v)
        }
    });
    // An anchor whose variables are not all the head's is eliminated like any literal.
    let anchor = anchor
        && body
            .first()
            .is_some_and(|l| vars_of(l).iter().all(|v| head_vars.contains(v)));
    loop {
        check_budget(budget)?;
        if body.len() < 2 {
            break;
        }
        let lit_vars: Vec<Vec<u32>> = body.iter().map(vars_of).collect();
        let mut existential: Vec<u32> = lit_vars
            .iter()
            .flatten()
            .copied()
            .filter(|v| !head_vars.contains(v))
            .collect();
        existential.sort_unstable();
        existential.dedup();
        // The best bucket: the smallest estimated join. Of joins estimated the same (a rule
        // symmetric in its variables), the one whose auxiliary relation is guessed smallest:
        // hex's `transfer`, once the placement is eliminated, can eliminate the role, leaving
        // (group, cell), or the cell, leaving (group, role); the second network's gates watch
        // only the cells of each group, and it plays faster. The guesses only break ties: as
        // the primary estimate they changed the networks of many corpus games, most for the
        // smaller, but reversi's for the slower (docs/benchmarks.md, "How the speed came
        // about", b5cac1a).
        let mut candidates: Vec<(f64, Vec<usize>)> = Vec::new();
        for &v in &existential {
            let Some(mut bucket) = bucket_of(v, &body, &lit_vars) else {
                continue;
            };
            if anchor && bucket[0] != 0 {
                bucket.insert(0, 0);
            }
            if bucket.len() == body.len() {
                continue;
            }
            let lits: Vec<&Lit> = bucket.iter().map(|&k| &body[k]).collect();
            candidates.push((estimate(db, &lits, known, &[], fine), bucket));
        }
        let Some(least) = candidates.iter().map(|(e, _)| *e).reduce(f64::min) else {
            break;
        };
        let mut best: Option<(Guess, Vec<usize>, Vec<u32>)> = None;
        for (e, bucket) in candidates {
            if e > least * (1.0 + TIE) {
                continue;
            }
            let lits: Vec<&Lit> = bucket.iter().map(|&k| &body[k]).collect();
            let shared = shared_vars(&bucket, &lit_vars, &head_vars);
            let join = estimate(db, &lits, known, &guesses, fine);
            let aux = guess(db, &lits, known, &guesses, &shared, join);
            if best.as_ref().is_none_or(|(g, ..)| aux.size < g.size) {
                best = Some((aux, bucket, shared));
            }
        }
        let (aux_guess, bucket, shared) = best.expect("the least estimate is a candidate's");
        let members: Vec<Lit> = bucket.iter().map(|&k| body[k].clone()).collect();
        let is_dynamic = members.iter().any(|l| match l {
            Lit::Pos(a) | Lit::Neg(a) => dynamic[a.rel as usize],
            _ => false,
        });
        db.rels.push(Relation::new(shared.len()));
        dynamic.push(is_dynamic);
        let aux = (db.rels.len() - 1) as u32;
        guesses.push((aux, aux_guess));
        let atom = PAtom {
            rel: aux,
            args: shared.iter().map(|&v| Pat::Var(v)).collect(),
        };
        out.push(FlatRule {
            head: atom.clone(),
            body: members,
            vars: rule.vars,
        });
        let mut rest: Vec<Lit> = (0..body.len())
            .filter(|&k| !bucket.contains(&k) || (anchor && k == 0))
            .map(|k| body[k].clone())
            .collect();
        rest.push(Lit::Pos(atom));
        body = rest;
    }
    out.push(FlatRule {
        head: rule.head.clone(),
        body,
        vars: rule.vars,
    });
    Ok(out)
}

/// Estimates that differ by less than this fraction are the same.
const TIE: f64 = 1e-9;

/// The variables of the bucket's literals that the rest of the body or the head also has,
/// in ascending order: the auxiliary relation's arguments.
fn shared_vars(bucket: &[usize], lit_vars: &[Vec<u32>], head_vars: &[u32]) -> Vec<u32> {
    let outside: Vec<u32> = (0..lit_vars.len())
        .filter(|k| !bucket.contains(k))
        .flat_map(|k| lit_vars[k].iter().copied())
        .chain(head_vars.iter().copied())
        .collect();
    let mut shared: Vec<u32> = bucket
        .iter()
        .flat_map(|&k| lit_vars[k].iter().copied())
        .filter(|v| outside.contains(v))
        .collect();
    shared.sort_unstable();
    shared.dedup();
    shared
}

/// What to assume of the auxiliary relation over `shared` that the conjunction `lits`
/// (estimated at `join` bindings) projects to: each argument takes the fewest distinct values
/// a positive literal has where the variable stands (at most `join`), the relation has at most
/// the product of those and at most `join` tuples, and no argument more distinct values than
/// the relation has tuples; all at least 1.
fn guess(
    db: &mut Db,
    lits: &[&Lit],
    known: &impl Fn(u32) -> bool,
    guesses: &[(u32, Guess)],
    shared: &[u32],
    join: f64,
) -> Guess {
    let distinct: Vec<f64> = shared
        .iter()
        .map(|&v| {
            let mut fewest = f64::INFINITY;
            for lit in lits {
                let Lit::Pos(a) = lit else { continue };
                let Some(path) = path_to(&a.args, v) else {
                    continue;
                };
                fewest = fewest.min(distinct_of(db, known, guesses, a.rel, &path));
            }
            fewest.min(join).max(1.0)
        })
        .collect();
    let size = distinct.iter().product::<f64>().min(join).max(1.0);
    Guess {
        size,
        distinct: distinct.into_iter().map(|d| d.min(size)).collect(),
    }
}

/// Where variable `v` stands in `args` (the first place, at most four deep), as a path of
/// argument positions.
fn path_to(args: &[Pat], v: u32) -> Option<Vec<u8>> {
    /// Extends `path` to `v` within `sub`, the arguments at `path`.
    fn find_in(sub: &[Pat], v: u32, path: &mut Vec<u8>) -> bool {
        sub.iter()
            .enumerate()
            .take(usize::from(u8::MAX))
            .any(|(i, p)| {
                path.push(i as u8);
                let found = match p {
                    Pat::Var(x) => *x == v,
                    Pat::Ground(_) => false,
                    Pat::Fn(_, sub) => path.len() < 4 && find_in(sub, v, path),
                };
                if !found {
                    path.pop();
                }
                found
            })
    }
    let mut path = Vec::new();
    find_in(args, v, &mut path).then_some(path)
}

/// The literals that must go with eliminating `v`: those that mention it, plus, for every
/// variable that a negation or `distinct` among them needs and no positive literal among them
/// binds, a positive literal that binds it. `None` if that cannot be closed.
fn bucket_of(v: u32, body: &[Lit], lit_vars: &[Vec<u32>]) -> Option<Vec<usize>> {
    let mut bucket: Vec<usize> = (0..body.len())
        .filter(|&k| lit_vars[k].contains(&v))
        .collect();
    loop {
        let lits: Vec<&Lit> = bucket.iter().map(|&k| &body[k]).collect();
        let bound = positively_bound(&lits);
        let missing = bucket
            .iter()
            .flat_map(|&k| lit_vars[k].iter().copied())
            .find(|x| !bound.contains(x));
        let Some(x) = missing else {
            return Some(bucket);
        };
        // The smallest positive literal outside that binds `x`.
        let add = (0..body.len())
            .filter(|k| !bucket.contains(k))
            .filter(|&k| matches!(body[k], Lit::Pos(_)) && lit_vars[k].contains(&x))
            .min_by_key(|&k| lit_vars[k].len())?;
        bucket.push(add);
        bucket.sort_unstable();
    }
}
