//! The rules as the board reads them: sentences (facts and rules) in lower case, and the
//! relations that do not depend on the state evaluated from the facts, bottom up, within a
//! budget (an adjacency relation such as hex's `(adjacent ?j ?k ?m ?n)`, or laikLee hex's
//! `(neighbour ...)` spelled with `or`).

use std::collections::{HashMap, HashSet};

use crate::term::{Term, parse_state};

/// The most tuples of bindings one relation's evaluation may make; beyond, it is given up.
const BUDGET: usize = 50_000;

/// Relations whose meaning depends on the state or the moves.
const DYNAMIC: &[&str] = &["true", "does", "next", "legal", "goal", "terminal", "sees"];

/// A rule: its head and its body (a fact has none).
#[derive(Clone, Debug)]
pub struct Rule {
    pub head: Term,
    pub body: Vec<Term>,
}

/// The sentences of a game's rules.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

impl Rules {
    /// Reads KIF rules (comments dropped, names in lower case); what is not a sentence is
    /// skipped.
    pub fn read(text: &str) -> Rules {
        let mut clean = String::with_capacity(text.len() + 2);
        clean.push('(');
        for line in text.lines() {
            let line = line.split(';').next().unwrap_or("");
            clean.push_str(&line.to_ascii_lowercase());
            clean.push('\n');
        }
        clean.push(')');
        let rules = parse_state(&clean)
            .into_iter()
            .filter_map(|s| match &s {
                Term::List(items) if items.first().and_then(Term::atom) == Some("<=") => {
                    let head = items.get(1)?.clone();
                    Some(Rule {
                        head,
                        body: items[2..].to_vec(),
                    })
                }
                _ => Some(Rule {
                    head: s,
                    body: Vec::new(),
                }),
            })
            .collect();
        Rules { rules }
    }

    /// The facts of a relation (ground sentences with no body), as their arguments.
    pub fn facts(&self, name: &str) -> Vec<Vec<Term>> {
        self.rules
            .iter()
            .filter(|r| r.body.is_empty() && r.head.head() == Some(name) && ground(&r.head))
            .map(|r| r.head.args().to_vec())
            .collect()
    }

    /// Names of the relations defined with `arity` arguments.
    pub fn relations(&self, arity: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rules {
            if let (Some(name), Term::List(_)) = (r.head.head(), &r.head)
                && r.head.args().len() == arity
                && !out.iter().any(|o| o == name)
            {
                out.push(name.to_string());
            }
        }
        out
    }

    /// The tuples of a relation that does not depend on the state, evaluated from the facts
    /// (with `or`, `not` and `distinct`); `None` if it depends on the state, is recursive or
    /// exceeds the budget.
    pub fn evaluate(&self, name: &str, arity: usize) -> Option<Vec<Vec<Term>>> {
        let mut memo = HashMap::new();
        let mut busy = HashSet::new();
        self.eval(name, arity, &mut memo, &mut busy)
    }

    fn eval(
        &self,
        name: &str,
        arity: usize,
        memo: &mut HashMap<(String, usize), Option<Vec<Vec<Term>>>>,
        busy: &mut HashSet<(String, usize)>,
    ) -> Option<Vec<Vec<Term>>> {
        let key = (name.to_string(), arity);
        if let Some(done) = memo.get(&key) {
            return done.clone();
        }
        if DYNAMIC.contains(&name) || !busy.insert(key.clone()) {
            return None;
        }
        let mut out: Vec<Vec<Term>> = Vec::new();
        let mut seen: HashSet<Vec<Term>> = HashSet::new();
        let mut ok = true;
        for rule in &self.rules {
            if rule.head.head() != Some(name) || arity_of(&rule.head) != arity {
                continue;
            }
            for body in expand_or(&rule.body) {
                let Some(found) = self.solve(&body, memo, busy) else {
                    ok = false;
                    break;
                };
                for b in found {
                    let tuple: Vec<Term> = rule.head.args().iter().map(|a| subst(a, &b)).collect();
                    if tuple.iter().all(ground) && seen.insert(tuple.clone()) {
                        out.push(tuple);
                    }
                }
                if out.len() > BUDGET {
                    ok = false;
                }
            }
            if !ok {
                break;
            }
        }
        busy.remove(&key);
        let result = ok.then_some(out);
        memo.insert(key, result.clone());
        result
    }

    /// The bindings that satisfy a conjunction (positive literals first, then the tests).
    fn solve(
        &self,
        body: &[Term],
        memo: &mut HashMap<(String, usize), Option<Vec<Vec<Term>>>>,
        busy: &mut HashSet<(String, usize)>,
    ) -> Option<Vec<HashMap<String, Term>>> {
        let mut bindings = vec![HashMap::new()];
        let is_test = |l: &Term| matches!(l.head(), Some("distinct" | "not"));
        for literal in body.iter().filter(|l| !is_test(l)) {
            let name = literal.head()?;
            let tuples = self.eval(name, arity_of(literal), memo, busy)?;
            let mut next = Vec::new();
            for b in &bindings {
                for t in &tuples {
                    let mut b2 = b.clone();
                    if literal
                        .args()
                        .iter()
                        .zip(t)
                        .all(|(p, v)| unify(p, v, &mut b2))
                    {
                        next.push(b2);
                    }
                }
                if next.len() > BUDGET {
                    return None;
                }
            }
            bindings = next;
        }
        for test in body.iter().filter(|l| is_test(l)) {
            let mut kept = Vec::new();
            for b in bindings {
                if self.holds(test, &b, memo, busy)? {
                    kept.push(b);
                }
            }
            bindings = kept;
        }
        Some(bindings)
    }

    fn holds(
        &self,
        test: &Term,
        b: &HashMap<String, Term>,
        memo: &mut HashMap<(String, usize), Option<Vec<Vec<Term>>>>,
        busy: &mut HashSet<(String, usize)>,
    ) -> Option<bool> {
        match (test.head(), test.args()) {
            (Some("distinct"), [x, y]) => Some(subst(x, b) != subst(y, b)),
            (Some("not"), [inner]) => {
                let g = subst(inner, b);
                let tuples = self.eval(g.head()?, arity_of(&g), memo, busy)?;
                Some(!tuples.iter().any(|t| t.as_slice() == g.args()))
            }
            _ => None,
        }
    }
}

/// A relation's number of arguments (an atom has none).
pub fn arity_of(t: &Term) -> usize {
    match t {
        Term::List(_) => t.args().len(),
        Term::Atom(_) => 0,
    }
}

/// Whether a term is a variable.
pub fn is_var(t: &Term) -> bool {
    t.atom().is_some_and(|a| a.starts_with('?'))
}

fn ground(t: &Term) -> bool {
    match t {
        Term::Atom(a) => !a.starts_with('?'),
        Term::List(items) => items.iter().all(ground),
    }
}

fn subst(t: &Term, b: &HashMap<String, Term>) -> Term {
    match t {
        Term::Atom(a) if a.starts_with('?') => b.get(a).cloned().unwrap_or_else(|| t.clone()),
        Term::Atom(_) => t.clone(),
        Term::List(items) => Term::List(items.iter().map(|i| subst(i, b)).collect()),
    }
}

fn unify(pattern: &Term, value: &Term, b: &mut HashMap<String, Term>) -> bool {
    match (pattern, value) {
        (Term::Atom(a), _) if a.starts_with('?') => match b.get(a) {
            Some(bound) => bound == value,
            None => {
                b.insert(a.clone(), value.clone());
                true
            }
        },
        (Term::Atom(a), Term::Atom(v)) => a == v,
        (Term::List(ps), Term::List(vs)) => {
            ps.len() == vs.len() && ps.iter().zip(vs).all(|(p, v)| unify(p, v, b))
        }
        _ => false,
    }
}

/// A body with `(or a b)` literals as the bodies it stands for (at most 64).
pub fn expand_or(body: &[Term]) -> Vec<Vec<Term>> {
    let mut out: Vec<Vec<Term>> = vec![Vec::new()];
    for literal in body {
        match (literal.head(), literal) {
            (Some("or"), Term::List(_)) => {
                let mut next = Vec::new();
                for prefix in &out {
                    for alternative in literal.args() {
                        let mut b = prefix.clone();
                        b.push(alternative.clone());
                        next.push(b);
                    }
                }
                next.truncate(64);
                out = next;
            }
            _ => {
                for b in &mut out {
                    b.push(literal.clone());
                }
            }
        }
    }
    out
}
