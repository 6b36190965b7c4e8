//! One game per validation code (`codes/<CODE>.kif`, written for these tests), the report
//! `ggp validate` makes of it pinned in `codes/<CODE>.out` (diagnostics, moves files,
//! verdicts and figures), and every counterexample replayed to check that it reaches a state
//! that shows what its finding says. Regenerate the renderings with
//! `UPDATE_EXPECT=1 cargo test -p gdl-validate --test codes` and review the diff.

use std::path::Path;
use std::time::Duration;

use gdl_check::Symbols;
use gdl_reason::machine::Result as ReasonResult;
use gdl_reason::reference::Limits;
use gdl_reason::trace::{self, Moves, ReplayError, Step};
use gdl_reason::{
    EngineChoice, FastMachine, Machine, ReferenceMachine, RoleIndex, StateMachine, TermError,
    TermId, TermStore,
};
use gdl_syntax::SourceFile;
use gdl_validate::codes::{self, VALIDATE_CODES};
use gdl_validate::{CrossCheck, Finding, Options, Report, Subject, Verdict};
use rand::rngs::SmallRng;

/// The game written for a code.
fn case(code: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/codes/{code}.kif"));
    std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no test input for {code}"))
}

/// A budget that the cases never reach: the reports do not depend on the clock.
fn options() -> Options {
    Options {
        time: Duration::from_secs(600),
        max_states: 10_000,
        playouts: Some(20),
        ..Options::default()
    }
}

/// The reference engine with a move hidden: an engine with a bug, to be caught.
struct Liar(ReferenceMachine, &'static str);

impl StateMachine for Liar {
    type State = <ReferenceMachine as StateMachine>::State;
    fn roles(&self) -> &[TermId] {
        self.0.roles()
    }
    fn terms(&self) -> &TermStore {
        self.0.terms()
    }
    fn symbols(&self) -> &Symbols {
        self.0.symbols()
    }
    fn intern(&mut self, text: &str) -> Result<TermId, TermError> {
        self.0.intern(text)
    }
    fn initial_state(&mut self) -> ReasonResult<Self::State> {
        self.0.initial_state()
    }
    fn fluents(&self, state: &Self::State) -> Vec<TermId> {
        self.0.fluents(state)
    }
    fn legal_moves(&mut self, state: &Self::State, role: RoleIndex) -> ReasonResult<Vec<TermId>> {
        let moves = self.0.legal_moves(state, role)?;
        Ok(moves
            .into_iter()
            .filter(|&m| self.0.terms().text(self.0.symbols(), m) != self.1)
            .collect())
    }
    fn next_state(&mut self, state: &Self::State, joint: &[TermId]) -> ReasonResult<Self::State> {
        self.0.next_state(state, joint)
    }
    fn has_sees(&self) -> bool {
        self.0.has_sees()
    }
    fn percepts(
        &mut self,
        state: &Self::State,
        joint: &[TermId],
        role: RoleIndex,
    ) -> ReasonResult<Vec<TermId>> {
        self.0.percepts(state, joint, role)
    }
    fn is_terminal(&mut self, state: &Self::State) -> ReasonResult<bool> {
        self.0.is_terminal(state)
    }
    fn goal_values(&mut self, state: &Self::State, role: RoleIndex) -> ReasonResult<Vec<TermId>> {
        self.0.goal_values(state, role)
    }
    fn base_fluents(&mut self) -> ReasonResult<Option<Vec<TermId>>> {
        self.0.base_fluents()
    }
    fn input_moves(&mut self, role: RoleIndex) -> ReasonResult<Option<Vec<TermId>>> {
        self.0.input_moves(role)
    }
}

impl Subject for Liar {}

/// How a case is validated: most with the engine `ggp validate` uses; V011 with an engine
/// that lies, checked against the fast engine; V012 with a small budget.
fn validate_case(code: &str, text: &str) -> Report {
    let checked = gdl_check::check(text);
    match code {
        codes::ENGINES_DISAGREE => {
            let liar = Liar(ReferenceMachine::new(&checked).unwrap(), "jump");
            let fast = FastMachine::new(&checked).unwrap_or_else(|_| panic!("fast"));
            let mut pair = CrossCheck::new(liar, fast, ("reference", "fast")).unwrap();
            gdl_validate::validate(&mut pair, &options())
        }
        _ => gdl_validate::validate(&mut machine(code, text), &options()),
    }
}

fn machine(code: &str, text: &str) -> Machine {
    let checked = gdl_check::check(text);
    match code {
        codes::REASONER_BUDGET => Machine::build(
            &checked,
            EngineChoice::Reference,
            Limits {
                max_facts: 40,
                ..Limits::default()
            },
        ),
        _ => Machine::build(&checked, EngineChoice::Fast, Limits::default()),
    }
    .unwrap_or_else(|d| panic!("{code}: {d:#?}"))
}

/// The verdicts and figures of a report, without times.
fn summary(report: &Report) -> String {
    let list = |which: fn(&Verdict) -> bool| {
        let names = report.named(which);
        if names.is_empty() {
            "-".to_string()
        } else {
            names.join(", ")
        }
    };
    let mut out = format!(
        "states {}, terminal {}, depth {}, exhaustive {}, complete depth {:?}, playouts {}\n",
        report.states,
        report.terminal_states,
        report.depth,
        report.exhaustive,
        report.complete_depth,
        report.playouts
    );
    out.push_str(&format!("proved: {}\n", list(|v| *v == Verdict::Proved)));
    out.push_str(&format!("refuted: {}\n", list(|v| *v == Verdict::Refuted)));
    for (p, v) in &report.verdicts {
        if let Verdict::Undecided(why) = v {
            out.push_str(&format!("undecided: {}: {why}\n", p.name()));
        }
    }
    out.push_str(&format!(
        "not applicable: {}\n",
        list(|v| *v == Verdict::NotApplicable)
    ));
    out
}

/// Replays a finding's moves and checks that the state reached shows what it says.
fn check_counterexample(code: &str, text: &str, finding: &Finding) {
    let Some(moves) = &finding.moves else {
        return;
    };
    let what = format!("{code}: {} ({moves:?})", finding.code);
    if finding.code == codes::ENGINES_DISAGREE {
        // Only the lying engine reaches it; it is about the initial state.
        assert!(moves.is_empty(), "{what}");
        return;
    }
    let mut m = machine(code, text);
    let file = finding.moves_file(&trace::role_names(&m)).unwrap();
    let joints = trace::parse_moves(&mut m, &file).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(joints.len(), moves.len(), "{what}");
    let mut steps: Vec<Step> = Vec::new();
    let outcome = trace::replay(&mut m, Moves::<SmallRng>::Given(&joints), |s| {
        steps.push(s);
        Ok(())
    });
    if matches!(
        finding.code,
        codes::CANNOT_EVALUATE | codes::REASONER_BUDGET
    ) {
        assert!(
            matches!(outcome, Err(ReplayError::Reason { step, .. }) if step == moves.len()),
            "{what}: {outcome:?}"
        );
        return;
    }
    assert!(
        matches!(
            outcome,
            Ok(None) | Ok(Some(ReplayError::NoLegalMove { .. }))
        ),
        "{what}: {outcome:?}"
    );
    let last = &steps.last().expect("a state").info;
    let role = finding.role.as_ref().map(|r| r.0);
    match finding.code {
        codes::CYCLE => {
            let from = finding.cycle_from.expect("where the cycle starts");
            assert!(from < moves.len(), "{what}");
            assert_eq!(steps[from].info.state, last.state, "{what}");
            assert!(steps.iter().all(|s| !s.info.terminal), "{what}");
        }
        codes::NO_LEGAL_MOVE => {
            assert!(
                !last.terminal && last.legal[role.unwrap()].is_empty(),
                "{what}"
            );
        }
        codes::NO_GOAL => assert!(last.terminal && last.goals[role.unwrap()].is_empty()),
        codes::SEVERAL_GOALS | codes::GOAL_NOT_A_NUMBER => {
            assert!(last.terminal, "{what}");
            assert_eq!(last.goals[role.unwrap()], finding.items, "{what}");
        }
        codes::NEVER_WINS | codes::NO_SOLUTION => {
            assert!(last.terminal, "{what}");
            assert_eq!(last.goals[role.unwrap()], finding.items, "{what}");
        }
        codes::WINNING_SEQUENCE => {
            assert!(
                last.terminal && last.goals[role.unwrap()] == ["100"],
                "{what}"
            );
        }
        codes::FLUENT_NOT_IN_BASE => {
            assert!(
                finding.items.iter().any(|f| last.state.contains(f)),
                "{what}"
            );
        }
        codes::MOVE_NOT_IN_INPUT => {
            let names = trace::role_names(&m);
            assert!(
                finding.items.iter().any(|item| {
                    names.iter().enumerate().any(|(r, name)| {
                        item.strip_prefix(&format!("{name} "))
                            .is_some_and(|mv| last.legal[r].iter().any(|l| l == mv))
                    })
                }),
                "{what}"
            );
        }
        codes::GOALS_BEFORE_THE_END => {
            assert!(!last.terminal && last.goals.iter().any(|g| !g.is_empty()));
        }
        other => panic!("{what}: no check for {other}"),
    }
}

#[test]
fn every_validation_code_has_a_case_and_renders_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codes");
    let mut mismatches = Vec::new();
    for info in VALIDATE_CODES {
        let text = case(info.code);
        let report = validate_case(info.code, &text);
        let checked = gdl_check::check(&text);
        let rendered = report.diagnostics(&checked);
        assert!(
            rendered
                .iter()
                .any(|r| r.diagnostic.code == info.code && r.diagnostic.severity == info.severity),
            "codes/{}.kif does not produce {}: {rendered:#?}",
            info.code,
            info.code
        );
        for f in &report.findings {
            check_counterexample(info.code, &text, f);
        }
        let file = SourceFile::new(format!("codes/{}.kif", info.code), text.clone());
        let mut out = String::new();
        for r in &rendered {
            out.push_str(&file.render(&r.diagnostic, false));
            out.push('\n');
            if let Some(moves) = &r.counterexample {
                out.push_str(&format!("moves file {}:\n{moves}", r.name));
            }
            out.push('\n');
        }
        out.push_str(&summary(&report));
        let expected_path = dir.join(format!("{}.out", info.code));
        if ggp_testdata::differs_from_recorded(&expected_path, &out).is_some() {
            mismatches.push(format!("{}:\n{out}", info.code));
        }
    }
    assert!(
        mismatches.is_empty(),
        "renderings differ (UPDATE_EXPECT=1 to accept):\n{}",
        mismatches.join("\n")
    );
}

/// The reference engine finds the same things in the same number of moves (the moves may
/// differ: the engines number terms differently, so breadth-first search tries joint moves
/// in another order).
#[test]
fn the_reference_engine_finds_the_same() {
    for info in VALIDATE_CODES {
        if matches!(info.code, codes::ENGINES_DISAGREE | codes::REASONER_BUDGET) {
            continue;
        }
        let text = case(info.code);
        let checked = gdl_check::check(&text);
        let fast = gdl_validate::validate(&mut machine(info.code, &text), &options());
        let mut reference = ReferenceMachine::new(&checked).unwrap();
        let slow = gdl_validate::validate(&mut reference, &options());
        let gist = |r: &Report| {
            let findings: Vec<_> = r
                .findings
                .iter()
                .map(|f| {
                    (
                        f.code,
                        f.role.clone(),
                        f.moves.as_ref().map(Vec::len),
                        f.items.clone(),
                    )
                })
                .collect();
            (
                findings,
                r.verdicts.clone(),
                r.states,
                r.terminal_states,
                r.depth,
            )
        };
        assert_eq!(gist(&fast), gist(&slow), "{}", info.code);
    }
}

/// Cross-checking the engines on every case finds nothing to report but the case's own
/// findings.
#[test]
fn the_engines_agree_on_every_case() {
    for info in VALIDATE_CODES {
        if matches!(info.code, codes::ENGINES_DISAGREE | codes::REASONER_BUDGET) {
            continue;
        }
        let text = case(info.code);
        let checked = gdl_check::check(&text);
        let Ok(fast) = FastMachine::new(&checked) else {
            continue;
        };
        let reference = ReferenceMachine::new(&checked).unwrap();
        let mut pair = CrossCheck::new(reference, fast, ("reference", "fast")).unwrap();
        let report = gdl_validate::validate(&mut pair, &options());
        assert!(
            report
                .findings
                .iter()
                .all(|f| f.code != codes::ENGINES_DISAGREE),
            "{}: {:#?}",
            info.code,
            report.findings
        );
    }
}

/// Every validation code has its page in `docs/codes/`, titled with its code and name, and
/// listed in the index.
#[test]
fn every_validation_code_has_a_documentation_page() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/codes");
    let index = std::fs::read_to_string(docs.join("README.md")).expect("docs/codes/README.md");
    let mut missing = Vec::new();
    for c in VALIDATE_CODES {
        let page = std::fs::read_to_string(docs.join(format!("{}.md", c.code))).unwrap_or_default();
        let title = format!("# {} {}\n", c.code, c.name);
        if !page.starts_with(&title) || !index.contains(&format!("{}.md", c.code)) {
            missing.push(c.code);
        }
    }
    assert!(
        missing.is_empty(),
        "codes without a page titled `# CODE name` listed in the index: {missing:?}"
    );
}
