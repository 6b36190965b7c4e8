//! The fast engine on every corpus game (GDL and GDL-II), each built once:
//!
//! - where the game has a conformance trace, the trace replays identically;
//! - random playouts run side by side with the reference engine, which must agree at every
//!   step on the state, every role's legal moves, terminality and the goal values.
//!
//! The games the fast engine refuses (the reference engine plays them instead), with the
//! reason, are exactly those recorded in `fast_outcomes.txt`; the budgets that decide it are
//! deterministic (atoms, ground rules, tuples tried), so the verdict is the same on any
//! machine. Regenerate with `UPDATE_EXPECT=1 cargo test -p gdl-reason --test fast_corpus` and
//! review the diff. `GGP_FILTER=substring` runs a subset while debugging.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gdl_reason::fast::{BuildError, FastLimits};
use gdl_reason::reference::Limits;
use gdl_reason::trace::{StateInfo, describe};
use gdl_reason::{FastMachine, ReferenceMachine, StateMachine, TermId};
use ggp_testdata::{assert_recorded, corpus_files, parallel_map, relative, shared_or_skip};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use common::{check_trace, read_game, trace_cases};

const PLAYOUTS: usize = 2;
const STEPS: usize = 150;

/// Maps a move of one machine to the other by its text.
fn translate<A: StateMachine, B: StateMachine>(from: &A, to: &mut B, t: TermId) -> TermId {
    let text = from.terms().text(from.symbols(), t);
    to.intern(&text).expect("a move of the game")
}

/// Plays both engines side by side; `Err` describes the first disagreement. A question the
/// reference engine cannot answer within its budget ends the playout (nothing to compare).
fn side_by_side(
    fast: &mut FastMachine,
    reference: &mut ReferenceMachine,
    rng: &mut impl Rng,
) -> Result<(), String> {
    let mut f = fast.initial_state().map_err(|e| format!("fast: {e}"))?;
    let Ok(mut r) = reference.initial_state() else {
        return Ok(());
    };
    for step in 0..STEPS {
        let Ok(expected) = describe(reference, &r) else {
            return Ok(());
        };
        let got: StateInfo = describe(fast, &f).map_err(|e| format!("step {step}: fast: {e}"))?;
        if got != expected {
            return Err(format!(
                "step {step}: the engines disagree\n  reference: {expected:?}\n  fast:      {got:?}"
            ));
        }
        if expected.terminal || expected.legal.iter().any(Vec::is_empty) {
            return Ok(());
        }
        let mut joint_r = Vec::new();
        let mut joint_f = Vec::new();
        for role in 0..reference.roles().len() {
            let Ok(legal) = reference.legal_moves(&r, role) else {
                return Ok(());
            };
            let &m = legal.choose(rng).expect("a legal move");
            joint_f.push(translate(reference, fast, m));
            joint_r.push(m);
        }
        f = fast
            .next_state(&f, &joint_f)
            .map_err(|e| format!("step {step}: fast: {e}"))?;
        let Ok(next) = reference.next_state(&r, &joint_r) else {
            return Ok(());
        };
        r = next;
    }
    Ok(())
}

/// `Ok(None)` when the game agrees, `Ok(Some(reason))` when the fast engine refuses it, `Err`
/// on a disagreement.
fn compare(
    path: &Path,
    trace: Option<&(PathBuf, PathBuf, PathBuf)>,
) -> Result<Option<String>, String> {
    let text = read_game(path);
    let checked = gdl_check::check(&text);
    let mut fast = match FastMachine::with_limits(&checked, limits()) {
        Ok(m) => m,
        // The reference engine refuses these too (see `corpus_outcomes.txt`).
        Err(BuildError::Invalid(_)) => return Ok(None),
        Err(BuildError::Unsupported(reason)) => return Ok(Some(reason)),
    };
    if let Some((_, moves, expected)) = trace {
        check_trace(&mut fast, moves, expected).map_err(|e| format!("trace: {e}"))?;
    }
    let reference_limits = Limits {
        max_facts: 2_000_000,
        time: Some(Duration::from_secs(20)),
        ..Limits::default()
    };
    let mut reference = ReferenceMachine::with_limits(&checked, reference_limits)
        .map_err(|_| "the reference engine refuses a game the fast engine built")?;
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..PLAYOUTS {
        side_by_side(&mut fast, &mut reference, &mut rng)?;
    }
    Ok(None)
}

/// The default budgets, except time: a slow test machine must not change the verdicts.
fn limits() -> FastLimits {
    FastLimits {
        time: Duration::from_secs(3600),
        ..FastLimits::default()
    }
}

#[test]
fn the_fast_engine_replays_the_traces_and_agrees_with_the_reference_engine() {
    let Some(shared) = shared_or_skip("the_fast_engine_agrees_with_the_reference_engine") else {
        return;
    };
    let filter = std::env::var("GGP_FILTER").unwrap_or_default();
    let files: Vec<PathBuf> = corpus_files(&shared)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    let traces = trace_cases(&shared, "");
    let outcomes = parallel_map(&files, |path| {
        let name = relative(&shared, path).into_owned();
        let trace = traces.iter().find(|(game, _, _)| game == path);
        match catch_unwind(AssertUnwindSafe(|| compare(path, trace))) {
            Ok(Ok(None)) => (None, None),
            Ok(Ok(Some(reason))) => (Some(format!("{name}\t{reason}\n")), None),
            Ok(Err(disagreement)) => (None, Some(format!("{name}: {disagreement}"))),
            Err(_) => (None, Some(format!("{name}: PANIC"))),
        }
    });
    let failures: Vec<String> = outcomes.iter().filter_map(|o| o.1.clone()).collect();
    let refused: String = outcomes.iter().filter_map(|o| o.0.clone()).collect();
    eprintln!(
        "{} games, {} refused by the fast engine, {} failures",
        files.len(),
        refused.lines().count(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if filter.is_empty() {
        assert_eq!(files.len(), 944, "every corpus game");
        assert_recorded(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fast_outcomes.txt"),
            &refused,
        );
    }
}
