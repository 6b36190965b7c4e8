//! Demand: the relaxed program rewritten by magic sets, so that grounding computes only the
//! atoms of a derived relation that some rule can ask for.
//!
//! The relaxed fixpoint computes every atom that can hold. Some descriptions define relations
//! far larger than what the game ever asks of them (a relation over every pair of squares and
//! every square to ignore, asked only about the squares of the moves). Magic sets (Bancilhon,
//! Maier, Sagiv and Ullman, 1986) compute, for each way a relation is called, the arguments it
//! is called with (its *demand*), and the relation only where demanded. The grounder uses this
//! when grounding everything goes over its budgets (see `FastMachine::with_limits`); it is not
//! always cheaper, since demands are relations too.
//!
//! Relations computed in full are the static ones (exact, before anything else), `true`,
//! `does`, and the relations the network reads (`legal`, `next`, `goal`, `terminal`, `sees`,
//! and the other reserved words). Each other dynamic relation `r` is computed in parts, one
//! for each *adornment* (which argument positions are bound when it is called): the part
//! `r^α` has the rules of `r`, each with the literal `magic_r^α(bound arguments)` first, and
//! `magic_r^α` has, for every literal calling `r` with adornment `α` in a rule `h^β`, the rule
//! `magic_r^α(bound arguments) :- magic_h^β(…), literals before the call`. The literals before
//! a call (the sideways information passing) are taken in the order of [`rank`]; a negated
//! literal comes after every positive one, all its
//! variables bound (the relaxed program does not evaluate negation of dynamic relations, but
//! the atom must exist if it can hold, for the ground rule to refer to it).
//!
//! The atoms of `r` are the union of its parts. That is exact for grounding: an instance of a
//! rule of `h` whose head is an atom of `h` (demanded) and whose positive body atoms can hold
//! has every body atom demanded by the rules above, positive and negated, so each is an atom
//! if and only if it can hold (magic sets are complete for demanded atoms). When a part's rule
//! is split (`decompose`), its demand goes into every auxiliary relation, which is then
//! computed only where demanded too.

use gdl_check::RelId;
use rustc_hash::FxHashMap;

use super::normal::{FlatRule, Lit, PAtom, Pat};

/// A relation the rewriting adds.
pub(crate) struct NewRel {
    pub arity: usize,
    /// The relation this is a part of (`None`: a magic relation).
    pub part_of: Option<RelId>,
    /// A part for calls with no argument bound (demanded in full).
    pub unbound: bool,
}

/// The rewritten program: rules over the program's relations and the relations numbered
/// from `first_new` on, described by `new`.
pub(crate) struct Rewritten {
    pub rules: Vec<FlatRule>,
    pub new: Vec<NewRel>,
}

struct Rewriter<'a> {
    full: &'a [bool],
    /// Positive literals taken in the order written (as a top-down evaluation does), instead
    /// of by [`rank`].
    written: bool,
    first_new: u32,
    new: Vec<NewRel>,
    /// (relation, adornment) to (part, magic relation).
    parts: FxHashMap<(RelId, Vec<bool>), (RelId, RelId)>,
    work: Vec<(RelId, Vec<bool>)>,
    out: Vec<FlatRule>,
}

impl Rewriter<'_> {
    fn relation(&mut self, arity: usize, part_of: Option<RelId>, unbound: bool) -> RelId {
        self.new.push(NewRel {
            arity,
            part_of,
            unbound,
        });
        self.first_new + self.new.len() as u32 - 1
    }

    /// The part and magic relation of `rel` called with adornment `adornment`.
    fn part(&mut self, rel: RelId, arity: usize, adornment: &[bool]) -> (RelId, RelId) {
        if let Some(&p) = self.parts.get(&(rel, adornment.to_vec())) {
            return p;
        }
        let bound = adornment.iter().filter(|&&b| b).count();
        let part = self.relation(arity, Some(rel), bound == 0);
        let magic = self.relation(bound, None, false);
        self.parts.insert((rel, adornment.to_vec()), (part, magic));
        self.work.push((rel, adornment.to_vec()));
        (part, magic)
    }

    /// Rewrites one rule: `head` is the head to give it and `magic` its demand literal (none
    /// for a relation computed in full); `bound` the variables the demand binds.
    fn rewrite(&mut self, rule: &FlatRule, head: PAtom, magic: Option<Lit>, mut bound: Vec<bool>) {
        let body = &rule.body;
        let mut renamed: Vec<Option<Lit>> = vec![None; body.len()];
        let mut placed = vec![false; body.len()];
        // The literals that hold before the next call (magic rules' bodies).
        let mut prefix: Vec<Lit> = magic.iter().cloned().collect();
        let is_filter = |lit: &Lit, full: &[bool]| match lit {
            Lit::Distinct(..) | Lit::Same(..) => true,
            // Negation is evaluated over static relations only; others are left out.
            Lit::Neg(a) => full[a.rel as usize],
            Lit::Pos(_) => false,
        };
        loop {
            for (i, lit) in body.iter().enumerate() {
                if !placed[i] && is_filter(lit, self.full) && lit.bound_by(&bound) {
                    placed[i] = true;
                    renamed[i] = Some(lit.clone());
                    prefix.push(lit.clone());
                }
            }
            // The next positive literal (see `rank`), the most bound first among equals.
            let mut best: Option<(u8, usize, usize)> = None;
            for (i, lit) in body.iter().enumerate() {
                let Lit::Pos(a) = lit else { continue };
                if placed[i] {
                    continue;
                }
                if self.written {
                    // The order the rules are written in: the first positive literal left.
                    best = Some((0, 0, i));
                    break;
                }
                let demanded = !self.full[a.rel as usize];
                let bound_args = a.args.iter().filter(|p| p.bound_by(&bound)).count();
                let key = (
                    rank(demanded, bound_args, a.args.len()),
                    usize::MAX - bound_args,
                );
                if best.is_none_or(|(r, b, _)| key < (r, usize::MAX - b)) {
                    best = Some((key.0, bound_args, i));
                }
            }
            let Some((_, _, i)) = best else { break };
            let demanded = matches!(&body[i], Lit::Pos(a) if !self.full[a.rel as usize]);
            placed[i] = true;
            let Lit::Pos(a) = &body[i] else {
                unreachable!("a positive literal")
            };
            let lit = if demanded {
                Lit::Pos(self.call(a, &bound, &prefix))
            } else {
                body[i].clone()
            };
            a.for_each_var(&mut |v| bound[v as usize] = true);
            renamed[i] = Some(lit.clone());
            prefix.push(lit);
        }
        // Negated calls of demanded relations, every variable bound.
        for (i, lit) in body.iter().enumerate() {
            if placed[i] {
                continue;
            }
            renamed[i] = Some(match lit {
                Lit::Neg(a) if !self.full[a.rel as usize] => {
                    Lit::Neg(self.call(a, &bound, &prefix))
                }
                // Negation of a relation computed in full but dynamic, or a filter whose
                // variables no positive literal binds (the plan reports it as unsafe).
                other => other.clone(),
            });
        }
        let mut new_body: Vec<Lit> = magic.into_iter().collect();
        new_body.extend(
            renamed
                .into_iter()
                .map(|l| l.expect("every literal placed")),
        );
        self.out.push(FlatRule {
            head,
            body: new_body,
            vars: rule.vars,
        });
    }

    /// A call of a demanded relation with the variables `bound`, after the literals `prefix`:
    /// the magic rule that demands it, and the call of the part.
    fn call(&mut self, a: &PAtom, bound: &[bool], prefix: &[Lit]) -> PAtom {
        let adornment: Vec<bool> = a.args.iter().map(|p| p.bound_by(bound)).collect();
        let (part, magic) = self.part(a.rel, a.args.len(), &adornment);
        let args: Box<[Pat]> = a
            .args
            .iter()
            .zip(&adornment)
            .filter(|(_, b)| **b)
            .map(|(p, _)| p.clone())
            .collect();
        self.out.push(FlatRule {
            head: PAtom { rel: magic, args },
            body: prefix.to_vec(),
            vars: bound.len() as u32,
        });
        PAtom {
            rel: part,
            args: a.args.clone(),
        }
    }
}

/// The order in which the positive literals of a body are taken, by whether the relation is
/// demanded and how many of its arguments are bound: literals computed in full whose
/// arguments are all bound (filters); demanded literals with a bound argument (so that their
/// demand is what is bound so far, not multiplied by literals that generate more bindings);
/// literals computed in full with a bound argument (joins), then with none (generators);
/// demanded literals with nothing bound (demanded in full) last.
fn rank(demanded: bool, bound: usize, arity: usize) -> u8 {
    match (demanded, bound) {
        (false, b) if b == arity => 0,
        (true, b) if b > 0 => 1,
        (false, b) if b > 0 => 2,
        (false, _) => 3,
        (true, _) => 4,
    }
}

/// Rewrites the relaxed program `rules`: relations `full` are computed in full, the others
/// where demanded. New relations are numbered from `first_new`.
pub(crate) fn rewrite(rules: &[FlatRule], full: &[bool], first_new: u32) -> Rewritten {
    rewrite_with(rules, full, first_new, false)
}

/// [`rewrite`], with the positive literals of each body taken in the order written when
/// `written` (the demand a top-down evaluation would make, for exact evaluation state by
/// state) instead of by [`rank`] (fewest demands for grounding).
pub(crate) fn rewrite_with(
    rules: &[FlatRule],
    full: &[bool],
    first_new: u32,
    written: bool,
) -> Rewritten {
    let mut rules_of: FxHashMap<RelId, Vec<usize>> = FxHashMap::default();
    for (k, rule) in rules.iter().enumerate() {
        rules_of.entry(rule.head.rel).or_default().push(k);
    }
    let mut w = Rewriter {
        full,
        written,
        first_new,
        new: Vec::new(),
        parts: FxHashMap::default(),
        work: Vec::new(),
        out: Vec::new(),
    };
    for rule in rules {
        if full[rule.head.rel as usize] {
            w.rewrite(
                rule,
                rule.head.clone(),
                None,
                vec![false; rule.vars as usize],
            );
        }
    }
    while let Some((rel, adornment)) = w.work.pop() {
        let (part, magic) = w.parts[&(rel, adornment.clone())];
        for &k in rules_of.get(&rel).map(Vec::as_slice).unwrap_or(&[]) {
            let rule = &rules[k];
            let mut bound = vec![false; rule.vars as usize];
            let mut args = Vec::new();
            for (p, &b) in rule.head.args.iter().zip(&adornment) {
                if b {
                    p.for_each_var(&mut |v| bound[v as usize] = true);
                    args.push(p.clone());
                }
            }
            let demand = Lit::Pos(PAtom {
                rel: magic,
                args: args.into(),
            });
            let head = PAtom {
                rel: part,
                args: rule.head.args.clone(),
            };
            w.rewrite(rule, head, Some(demand), bound);
        }
    }
    Rewritten {
        rules: w.out,
        new: w.new,
    }
}
