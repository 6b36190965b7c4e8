//! Every corpus game (GDL and GDL-II) validated under a small budget, on the reference engine
//! (exact on every game, and built at once): a hundred states kept, explored breadth first,
//! then two random playouts, four hundred next states at most in all. The outcomes — proved
//! well-formed, refuted (which properties, which codes), undecided, or refused as `ggp check`
//! refuses it — are recorded in `corpus_outcomes.txt`; regenerate with
//! `UPDATE_EXPECT=1 cargo test -p gdl-validate --test corpus` and review the diff. Every error
//! found is replayed: its moves must reach the state it is about. `GGP_TIMES=1` prints each
//! game's time on standard error.
//!
//! The budgets are deterministic (states, playouts, next states, facts); the times are guards
//! against hangs, far above what any game needs, so the outcomes do not depend on the machine.
//! `docs/corpus-validation.md` has the corpus validated with a larger budget.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gdl_reason::ReferenceMachine;
use gdl_reason::reference::Limits;
use gdl_reason::trace::{self, Moves, ReplayError};
use gdl_syntax::Severity;
use gdl_validate::{Options, Property, Verdict, codes};
use ggp_testdata::{assert_recorded, corpus_files, parallel_map_by, relative, shared_or_skip};
use rand::rngs::SmallRng;

fn limits() -> Limits {
    Limits {
        max_facts: 2_000_000,
        time: Some(Duration::from_secs(60)),
        ..Limits::default()
    }
}

fn options() -> Options {
    Options {
        time: Duration::from_secs(1200),
        max_states: 100,
        playouts: Some(2),
        max_playout_steps: 1000,
        max_transitions: Some(400),
        seed: 1,
    }
}

/// The game's outcome, in one line; panics on an inconsistent report.
fn validate(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let (text, _) = gdl_syntax::cst::decode(&bytes);
    let checked = gdl_check::check(&text);
    let mut machine = match ReferenceMachine::with_limits(&checked, limits()) {
        Ok(machine) => machine,
        Err(diagnostics) => {
            let mut codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
            codes.sort();
            codes.dedup();
            return format!("refused: {}", codes.join(","));
        }
    };
    let report = gdl_validate::validate(&mut machine, &options());
    // What is proved of every state needs every state.
    for p in [
        Property::Terminates,
        Property::Playable,
        Property::Goals,
        Property::BaseInput,
    ] {
        if *report.verdict(p) == Verdict::Proved {
            assert!(report.exhaustive, "{p:?} proved without every state");
        }
    }
    // What is refuted has a finding that says so (in a one-player game, V007 refutes both
    // kinds of winnability).
    for (p, v) in &report.verdicts {
        if *v == Verdict::Refuted {
            let weak_or_strong = |f: Option<Property>| {
                *p == Property::WeaklyWinnable && f == Some(Property::StronglyWinnable)
            };
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| f.property == Some(*p) || weak_or_strong(f.property)),
                "{p:?} refuted without a finding: {:#?}",
                report.findings
            );
        }
    }
    // Every error's moves are legal and reach the state it is about (in a terminal state
    // for goals, a non-terminal one for a role without moves, an error where the rules
    // cannot be evaluated).
    let roles = trace::role_names(&machine);
    for f in &report.findings {
        let info = codes::info(f.code).unwrap();
        if info.severity != Severity::Error || f.code == codes::CYCLE {
            continue;
        }
        let Some(file) = f.moves_file(&roles) else {
            continue;
        };
        let mut fresh = ReferenceMachine::with_limits(&checked, limits()).unwrap();
        let joints = trace::parse_moves(&mut fresh, &file).unwrap();
        let mut last = None;
        let outcome = trace::replay(&mut fresh, Moves::<SmallRng>::Given(&joints), |s| {
            last = Some(s.info);
            Ok(())
        });
        let what = format!("{} {}", f.code, f.message);
        match f.code {
            codes::CANNOT_EVALUATE => {
                assert!(
                    matches!(outcome, Err(ReplayError::Reason { .. })),
                    "{what}: {outcome:?}"
                )
            }
            codes::NO_LEGAL_MOVE => assert!(
                matches!(outcome, Ok(Some(ReplayError::NoLegalMove { .. }))),
                "{what}: {outcome:?}"
            ),
            codes::NO_GOAL | codes::SEVERAL_GOALS | codes::GOAL_NOT_A_NUMBER => {
                assert!(matches!(outcome, Ok(None)), "{what}: {outcome:?}");
                let last = last.expect("a state");
                let (role, _) = f.role.clone().unwrap();
                assert!(last.terminal, "{what}");
                assert_ne!(
                    last.goals[role].len() == 1,
                    f.code != codes::GOAL_NOT_A_NUMBER
                );
            }
            _ => assert!(
                matches!(outcome, Ok(None) | Ok(Some(_))),
                "{what}: {outcome:?}"
            ),
        }
    }
    let errors: Vec<&str> = {
        let mut c: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| codes::info(f.code).unwrap().severity != Severity::Info)
            .map(|f| f.code)
            .collect();
        c.sort();
        c.dedup();
        c
    };
    let refuted = report.named(|v| *v == Verdict::Refuted);
    if !refuted.is_empty() {
        format!("refuted: {} ({})", refuted.join(", "), errors.join(","))
    } else if !errors.is_empty() {
        format!("not evaluated: {}", errors.join(","))
    } else if report.well_formed() {
        format!("proved: {} states, depth {}", report.states, report.depth)
    } else {
        "undecided".into()
    }
}

/// A game's rules as clean S-expressions: the same for its copies (`None`: it does not parse).
fn rules(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).unwrap();
    gdl_syntax::compact_text(&gdl_syntax::cst::decode(&bytes).0).ok()
}

#[test]
fn every_corpus_game_is_validated_as_recorded() {
    let Some(shared) = shared_or_skip("every_corpus_game_is_validated_as_recorded") else {
        return;
    };
    let files: Vec<PathBuf> = corpus_files(&shared);
    // Copies of a game (the same rules spelled the same way, in several collections) are
    // validated once, the outcome recorded for each.
    let outcomes = parallel_map_by(&files, rules, |path| {
        let started = std::time::Instant::now();
        let outcome =
            catch_unwind(AssertUnwindSafe(|| validate(path))).unwrap_or_else(|_| "PANIC".into());
        if std::env::var_os("GGP_TIMES").is_some() {
            eprintln!(
                "{:.2}\t{}",
                started.elapsed().as_secs_f64(),
                relative(&shared, path)
            );
        }
        outcome
    });
    let found: String = files
        .iter()
        .zip(outcomes)
        .map(|(path, outcome)| format!("{}\t{outcome}\n", relative(&shared, path)))
        .collect();
    assert!(!found.contains("PANIC"), "{found}");
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_outcomes.txt");
    assert_recorded(&recorded, &found);
}
