//! The rules as the board reads them: sentences (facts and rules) in lower case, and the
//! relations that do not depend on the state evaluated from the facts, bottom up, within a
//! budget (an adjacency relation such as hex's `(adjacent ?j ?k ?m ?n)`, or laikLee hex's
//! `(neighbour ...)` spelled with `or`).

use std::collections::{HashMap, HashSet};

use crate::term::{Term, parse_state};

/// The most tuples of bindings one relation's evaluation may make; beyond, it is given up.
const BUDGET: usize = 50_000;
/// The most matches of a literal against a tuple one [`Evaluator`] tries (its work): beyond,
/// what it has not evaluated yet is given up, so that a page never waits long for its board.
const WORK: usize = 200_000;

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
    dynamic: std::sync::OnceLock<HashSet<String>>,
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
        Rules {
            rules,
            dynamic: Default::default(),
        }
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

    /// The relations that depend on the state or the moves: those of [`DYNAMIC`] and those
    /// whose rules use one.
    fn dynamic(&self) -> &HashSet<String> {
        self.dynamic.get_or_init(|| {
            let mut out: HashSet<String> = DYNAMIC.iter().map(|d| d.to_string()).collect();
            loop {
                let before = out.len();
                for rule in &self.rules {
                    let Some(head) = rule.head.head() else {
                        continue;
                    };
                    if !out.contains(head) && rule.body.iter().any(|l| mentions(l, &out)) {
                        out.insert(head.to_string());
                    }
                }
                if out.len() == before {
                    return out;
                }
            }
        })
    }

    /// An evaluator of the relations of facts, with its own budget of work.
    pub fn evaluator(&self) -> Evaluator<'_> {
        Evaluator {
            rules: self,
            memo: HashMap::new(),
            busy: HashSet::new(),
            work: 0,
        }
    }
}

/// Evaluates relations that do not depend on the state from the facts, bottom up, remembering
/// what it evaluated, within a budget of work.
pub struct Evaluator<'r> {
    rules: &'r Rules,
    memo: HashMap<(String, usize), Option<Vec<Vec<Term>>>>,
    busy: HashSet<(String, usize)>,
    work: usize,
}

impl Evaluator<'_> {
    /// The tuples of a relation that does not depend on the state, evaluated from the facts
    /// (with `or`, `not` and `distinct`); `None` if it depends on the state, is recursive or
    /// exceeds the budget.
    pub fn evaluate(&mut self, name: &str, arity: usize) -> Option<Vec<Vec<Term>>> {
        let key = (name.to_string(), arity);
        if let Some(done) = self.memo.get(&key) {
            return done.clone();
        }
        if self.rules.dynamic().contains(name) || self.work > WORK || !self.busy.insert(key.clone())
        {
            return None;
        }
        let mut out: Vec<Vec<Term>> = Vec::new();
        let mut seen: HashSet<Vec<Term>> = HashSet::new();
        let mut ok = true;
        let rules = self.rules;
        for rule in &rules.rules {
            if rule.head.head() != Some(name) || arity_of(&rule.head) != arity {
                continue;
            }
            for body in expand_or(&rule.body) {
                let Some(found) = self.solve(&body) else {
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
        self.busy.remove(&key);
        let result = ok.then_some(out);
        self.memo.insert(key, result.clone());
        result
    }

    /// The bindings that satisfy a conjunction (positive literals first, then the tests).
    fn solve(&mut self, body: &[Term]) -> Option<Vec<HashMap<String, Term>>> {
        let mut bindings = vec![HashMap::new()];
        let is_test = |l: &Term| matches!(l.head(), Some("distinct" | "not"));
        for literal in body.iter().filter(|l| !is_test(l)) {
            let name = literal.head()?;
            let tuples = self.evaluate(name, arity_of(literal))?;
            let mut next = Vec::new();
            for b in &bindings {
                self.work += tuples.len();
                if self.work > WORK {
                    return None;
                }
                for t in &tuples {
                    // Checked first without copying the bindings: most tuples do not match.
                    if !literal
                        .args()
                        .iter()
                        .zip(t)
                        .all(|(p, v)| may_unify(p, v, b))
                    {
                        continue;
                    }
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
                if self.holds(test, &b)? {
                    kept.push(b);
                }
            }
            bindings = kept;
        }
        Some(bindings)
    }

    fn holds(&mut self, test: &Term, b: &HashMap<String, Term>) -> Option<bool> {
        match (test.head(), test.args()) {
            (Some("distinct"), [x, y]) => Some(subst(x, b) != subst(y, b)),
            (Some("not"), [inner]) => {
                let g = subst(inner, b);
                let tuples = self.evaluate(g.head()?, arity_of(&g))?;
                Some(!tuples.iter().any(|t| t.as_slice() == g.args()))
            }
            _ => None,
        }
    }
}

/// Whether a literal (or one within it: `not`, `or`) names one of these relations.
fn mentions(literal: &Term, relations: &HashSet<String>) -> bool {
    match literal.head() {
        Some("not" | "or" | "and") => literal.args().iter().any(|l| mentions(l, relations)),
        Some(name) => relations.contains(name),
        None => false,
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

/// Whether a pattern may match a value under bindings `b` (a variable bound in `b` must be
/// that value; one unbound may be anything).
fn may_unify(pattern: &Term, value: &Term, b: &HashMap<String, Term>) -> bool {
    match (pattern, value) {
        (Term::Atom(a), _) if a.starts_with('?') => b.get(a).is_none_or(|bound| bound == value),
        (Term::Atom(a), Term::Atom(v)) => a == v,
        (Term::List(ps), Term::List(vs)) => {
            ps.len() == vs.len() && ps.iter().zip(vs).all(|(p, v)| may_unify(p, v, b))
        }
        _ => false,
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
