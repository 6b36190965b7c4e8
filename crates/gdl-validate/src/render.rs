//! Findings as diagnostics: each placed on the rules it concerns (a role's `role` fact, the
//! `goal` rules that hold, `terminal`, `base`, `input`), with its moves file.

use gdl_check::program::{Rule, Term};
use gdl_check::{Checked, Program, Reserved};
use gdl_syntax::{Diagnostic, Severity, Span};

use crate::{Finding, Report, codes};

/// A finding as a diagnostic, with its counterexample.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub diagnostic: Diagnostic,
    /// The moves file ([`Finding::moves_file`]) when the finding is about a state.
    pub counterexample: Option<String>,
    /// A name for the moves file: the code, and the role when it concerns one (`V003-white`).
    pub name: String,
}

/// Whether a term of a rule can stand for the ground term `text`.
fn matches(program: &Program, rule: &Rule, term: &Term, text: &str) -> bool {
    matches!(term, Term::Var(_)) || program.term_text(rule, term).eq_ignore_ascii_case(text)
}

/// The rules whose head is the distinguished relation `which` and whose arguments can stand
/// for `args` (`None`: any).
fn rules<'p>(
    checked: &'p Checked<'_>,
    which: Reserved,
    args: &'p [Option<&'p str>],
) -> impl Iterator<Item = &'p Rule> + 'p {
    let program = &checked.program;
    program.rules.iter().filter(move |rule| {
        program.reserved_of(rule.head.rel) == Some(which)
            && rule
                .head
                .args
                .iter()
                .zip(args)
                .all(|(term, want)| want.is_none_or(|text| matches(program, rule, term, text)))
    })
}

fn first(checked: &Checked<'_>, which: Reserved, args: &[Option<&str>]) -> Option<Span> {
    rules(checked, which, args).next().map(|r| r.head.span)
}

/// Where to point for a finding: the primary place and its label, and related places.
fn place(
    checked: &Checked<'_>,
    f: &Finding,
) -> (Option<Span>, Option<String>, Vec<(Span, String)>) {
    let role = f.role.as_ref().map(|(_, name)| name.as_str());
    let role_fact = || role.and_then(|r| first(checked, Reserved::Role, &[Some(r)]));
    match f.code {
        codes::CYCLE => (
            first(checked, Reserved::Terminal, &[]),
            Some("never holds on the cycle".into()),
            Vec::new(),
        ),
        codes::NO_LEGAL_MOVE => (
            role_fact(),
            Some("has no legal move there".into()),
            Vec::new(),
        ),
        codes::NO_GOAL => (
            role_fact(),
            Some("has no goal value there".into()),
            Vec::new(),
        ),
        codes::SEVERAL_GOALS | codes::GOAL_NOT_A_NUMBER => {
            let mut spans: Vec<Span> = Vec::new();
            for value in &f.items {
                let args = [role, Some(value.as_str())];
                spans.extend(rules(checked, Reserved::Goal, &args).map(|r| r.head.span));
            }
            spans.sort();
            spans.dedup();
            let label = if f.code == codes::SEVERAL_GOALS {
                "holds"
            } else {
                "gives a value that is not an integer from 0 to 100"
            };
            let related = spans
                .iter()
                .skip(1)
                .take(4)
                .map(|&s| (s, "holds too".to_string()))
                .collect();
            (
                spans.first().copied().or_else(role_fact),
                Some(label.into()),
                related,
            )
        }
        codes::NEVER_WINS | codes::NO_SOLUTION => {
            (role_fact(), Some("never gets 100".into()), Vec::new())
        }
        codes::WINNING_SEQUENCE => (role_fact(), Some("wins".into()), Vec::new()),
        codes::FLUENT_NOT_IN_BASE => (
            first(checked, Reserved::Base, &[]),
            Some("`base` does not list them".into()),
            Vec::new(),
        ),
        codes::MOVE_NOT_IN_INPUT => (
            first(checked, Reserved::Input, &[]),
            Some("`input` does not list them".into()),
            Vec::new(),
        ),
        codes::GOALS_BEFORE_THE_END => (
            first(checked, Reserved::Goal, &[]),
            Some("may hold before the game ends".into()),
            Vec::new(),
        ),
        codes::PERCEPTS_NOT_CHECKED => (
            first(checked, Reserved::Sees, &[]),
            Some("not checked".into()),
            Vec::new(),
        ),
        _ => (None, None, Vec::new()),
    }
}

fn help(code: &str) -> Option<&'static str> {
    Some(match code {
        codes::CYCLE => {
            "every play must end (Definition 21): make `terminal` hold on the way, with a step counter for instance"
        }
        codes::NO_LEGAL_MOVE => {
            "every role needs a legal move in every non-terminal state (Definition 22): a `noop` when it is not its turn, or make the state terminal"
        }
        codes::NO_GOAL => {
            "every role needs exactly one goal value in every terminal state: add a `goal` rule for this case"
        }
        codes::SEVERAL_GOALS => {
            "every role needs exactly one goal value in every terminal state: make its `goal` rules exclusive"
        }
        codes::GOAL_NOT_A_NUMBER => "goal values are integers from 0 to 100",
        codes::NEVER_WINS => {
            "a well-formed game lets every role get 100 by some sequence of joint moves (Definition 23, weak winnability)"
        }
        codes::NO_SOLUTION => {
            "a one-player game must have a sequence of moves that gets 100 (Definition 23, strong winnability)"
        }
        codes::FLUENT_NOT_IN_BASE => {
            "`base` should list every fluent that can ever be true; players that trust it will miss these"
        }
        codes::MOVE_NOT_IN_INPUT => {
            "`input` should list every move a role can ever make; players that trust it will miss these"
        }
        codes::GOALS_BEFORE_THE_END => {
            "allowed: goal values count in terminal states; players may read them before as an estimate"
        }
        codes::PERCEPTS_NOT_CHECKED => {
            "well-formedness asks nothing of percepts, so they are not checked; the properties are checked with `random` explored as a player, every move of it (with `knows`, percepts decide what each role knows, and the search follows them)"
        }
        codes::REASONER_BUDGET => {
            "what lies beyond this state is undecided; `--max-facts` raises the reference engine's budget of facts, `--seconds` its time"
        }
        _ => return None,
    })
}

impl Report {
    /// The findings as diagnostics placed in the description, each with its moves file. A
    /// GDL-II description (with `sees` rules or a `random` role) also gets a note that its
    /// percepts are not checked.
    pub fn diagnostics(&self, checked: &Checked<'_>) -> Vec<Rendered> {
        let mut findings = self.findings.clone();
        let program = &checked.program;
        let gdl2 = program.reserved(Reserved::Sees).is_some()
            || self.roles.iter().any(|r| r.eq_ignore_ascii_case("random"));
        if gdl2 {
            findings.push(Finding {
                code: codes::PERCEPTS_NOT_CHECKED,
                property: None,
                role: None,
                message: "a GDL-II game: its percepts (`sees`) are not checked".into(),
                items: Vec::new(),
                states: 0,
                moves: None,
                cycle_from: None,
            });
        }
        findings
            .iter()
            .map(|f| {
                let info = codes::info(f.code).expect("a registered code");
                let (span, label, related) = place(checked, f);
                let mut d = Diagnostic::new(
                    f.code,
                    info.severity,
                    span.unwrap_or(Span::new(0, 0)),
                    f.message.clone(),
                );
                if let (Some(label), Some(_)) = (label, span) {
                    d = d.with_label(label);
                }
                for (s, m) in related {
                    d = d.with_related(s, m);
                }
                if let Some(h) = help(f.code) {
                    d = d.with_help(h);
                }
                let name = match &f.role {
                    Some((_, role)) => format!("{}-{role}", f.code),
                    None => f.code.to_string(),
                };
                Rendered {
                    diagnostic: d,
                    counterexample: f.moves_file(&self.roles),
                    name,
                }
            })
            .collect()
    }

    /// Whether a finding of this severity is among the diagnostics.
    pub fn has(&self, severity: Severity) -> bool {
        self.findings
            .iter()
            .any(|f| codes::info(f.code).is_some_and(|c| c.severity == severity))
    }
}
