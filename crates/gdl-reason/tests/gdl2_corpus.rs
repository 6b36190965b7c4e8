//! GDL-II on every game of `corpus/gdl2` that the checker accepts (no blocking error):
//!
//! - random playouts run on both engines side by side, which must agree at every step on the
//!   state, the legal moves, terminality, the goals, and every role's percepts (`sees`) for
//!   the joint move played;
//! - `trace::replay` with random moves runs to the end on each engine, and every line but the
//!   last carries each role's percepts.
//!
//! What happens to each game (the checker refuses it, the fast engine refuses it and why, or
//! both engines agree) is recorded in `gdl2_outcomes.txt`. Regenerate with
//! `UPDATE_EXPECT=1 cargo test -p gdl-reason --test gdl2_corpus` and review the diff.
//! `GGP_FILTER=substring` runs a subset while debugging.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gdl_reason::fast::{BuildError, FastLimits};
use gdl_reason::reference::Limits;
use gdl_reason::trace::{Moves, describe, replay};
use gdl_reason::{FastMachine, ReferenceMachine, StateMachine, TermId};
use ggp_testdata::{assert_recorded, kif_files, parallel_map, relative, shared_or_skip};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

const PLAYOUTS: usize = 20;
const STEPS: usize = 200;

/// A game's text, decoded as the command-line tools decode it.
fn read_game(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    gdl_syntax::cst::decode(&bytes).0
}

/// Every role's percepts in canonical text, each role's sorted.
fn percept_texts<M: StateMachine>(
    m: &mut M,
    state: &M::State,
    joint: &[TermId],
) -> Result<Vec<Vec<String>>, String> {
    let all = m.all_percepts(state, joint).map_err(|e| e.to_string())?;
    Ok(all
        .iter()
        .map(|seen| {
            let mut texts: Vec<String> = seen
                .iter()
                .map(|&t| m.terms().text(m.symbols(), t))
                .collect();
            texts.sort();
            texts
        })
        .collect())
}

/// One random playout on both engines; `Err` describes the first disagreement. A question
/// the reference engine cannot answer within its budget ends the playout. Returns the number
/// of steps compared and of percepts seen.
fn side_by_side(
    fast: &mut FastMachine,
    reference: &mut ReferenceMachine,
    rng: &mut StdRng,
) -> Result<(usize, usize), String> {
    let mut f = fast.initial_state().map_err(|e| format!("fast: {e}"))?;
    let Ok(mut r) = reference.initial_state() else {
        return Ok((0, 0));
    };
    let mut percepts = 0;
    for step in 0..STEPS {
        let Ok(expected) = describe(reference, &r) else {
            return Ok((step, percepts));
        };
        let got = describe(fast, &f).map_err(|e| format!("step {step}: fast: {e}"))?;
        if got != expected {
            return Err(format!(
                "step {step}: the engines disagree\n  reference: {expected:?}\n  fast:      {got:?}"
            ));
        }
        if expected.terminal || expected.legal.iter().any(Vec::is_empty) {
            return Ok((step, percepts));
        }
        let mut joint_r = Vec::new();
        let mut joint_f = Vec::new();
        for moves in &expected.legal {
            let text = moves.choose(rng).expect("a legal move");
            joint_r.push(reference.intern(text).expect("a move"));
            joint_f.push(fast.intern(text).expect("a move"));
        }
        let Ok(seen_r) = percept_texts(reference, &r, &joint_r) else {
            return Ok((step, percepts));
        };
        let seen_f =
            percept_texts(fast, &f, &joint_f).map_err(|e| format!("step {step}: fast: {e}"))?;
        if seen_r != seen_f {
            return Err(format!(
                "step {step}: the engines disagree on the percepts of {:?}\n  reference: {seen_r:?}\n  fast:      {seen_f:?}",
                expected.legal
            ));
        }
        percepts += seen_r.iter().map(Vec::len).sum::<usize>();
        f = fast
            .next_state(&f, &joint_f)
            .map_err(|e| format!("step {step}: fast: {e}"))?;
        let Ok(next) = reference.next_state(&r, &joint_r) else {
            return Ok((step, percepts));
        };
        r = next;
    }
    Ok((STEPS, percepts))
}

/// A random replay: it ends (at a terminal state or the step limit), and every line with
/// moves has every role's percepts, the last line none.
fn replays<M: StateMachine>(m: &mut M, engine: &str) -> Result<(), String> {
    let roles = m.roles().len();
    let mut rng = StdRng::seed_from_u64(11);
    let mut lines = Vec::new();
    let outcome = replay(m, Moves::Random(STEPS, &mut rng), |step| {
        lines.push(step);
        Ok(())
    });
    match outcome {
        Ok(None) => {}
        Ok(Some(stop)) => return Err(format!("{engine}: the replay stopped: {stop}")),
        // The reference engine's budgets may cut a long game short.
        Err(e) if engine == "reference" && e.to_string().contains("budget") => return Ok(()),
        Err(e) => return Err(format!("{engine}: {e}")),
    }
    let Some((last, before)) = lines.split_last() else {
        return Err(format!("{engine}: no line"));
    };
    if last.sees.is_some() || last.moves.is_some() {
        return Err(format!("{engine}: the last line has moves or percepts"));
    }
    if let Some(k) = before
        .iter()
        .position(|s| s.sees.as_ref().is_none_or(|seen| seen.len() != roles))
    {
        return Err(format!("{engine}: line {k} has no percepts for every role"));
    }
    Ok(())
}

/// What became of a game.
enum Outcome {
    /// The checker refuses it (its blocking codes).
    Refused(String),
    /// The fast engine cannot compile it (the reason); the reference engine replays it.
    FastRefuses(String),
    /// Both engines agree: steps compared and percepts seen.
    Agree(usize, usize),
}

/// What became of a game; `Err` on a disagreement.
fn compare(path: &Path) -> Result<Outcome, String> {
    let text = read_game(path);
    let checked = gdl_check::check(&text);
    let mut codes: Vec<&str> = checked.blocking_errors().map(|d| d.code).collect();
    codes.sort_unstable();
    codes.dedup();
    if !codes.is_empty() {
        return Ok(Outcome::Refused(codes.join(" ")));
    }
    let reference_limits = Limits {
        max_facts: 2_000_000,
        time: Some(Duration::from_secs(20)),
        ..Limits::default()
    };
    let mut reference = ReferenceMachine::with_limits(&checked, reference_limits)
        .map_err(|e| format!("the reference engine refuses the game: {e:?}"))?;
    if !reference.is_gdl2() {
        return Err("not recognised as a GDL-II game".into());
    }
    replays(&mut reference, "reference")?;
    let limits = FastLimits {
        time: Duration::from_secs(3600),
        ..FastLimits::default()
    };
    let mut fast = match FastMachine::with_limits(&checked, limits) {
        Ok(m) => m,
        Err(BuildError::Invalid(d)) => return Err(format!("the fast engine says invalid: {d:?}")),
        Err(BuildError::Unsupported(reason)) => return Ok(Outcome::FastRefuses(reason)),
    };
    replays(&mut fast, "fast")?;
    let mut rng = StdRng::seed_from_u64(7);
    let (mut steps, mut percepts) = (0, 0);
    for _ in 0..PLAYOUTS {
        let (s, p) = side_by_side(&mut fast, &mut reference, &mut rng)?;
        steps += s;
        percepts += p;
    }
    Ok(Outcome::Agree(steps, percepts))
}

#[test]
fn both_engines_agree_on_every_percept_of_the_gdl2_corpus() {
    let Some(shared) = shared_or_skip("both_engines_agree_on_every_percept_of_the_gdl2_corpus")
    else {
        return;
    };
    let filter = std::env::var("GGP_FILTER").unwrap_or_default();
    let files: Vec<PathBuf> = kif_files(&shared.join("corpus/gdl2"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    let outcomes = parallel_map(&files, |path| {
        let name = relative(&shared, path).into_owned();
        match catch_unwind(AssertUnwindSafe(|| compare(path))) {
            Ok(Ok(Outcome::Refused(codes))) => {
                Ok(format!("{name}\tthe checker refuses it: {codes}\n"))
            }
            Ok(Ok(Outcome::FastRefuses(reason))) => {
                Ok(format!("{name}\tthe fast engine refuses it: {reason}\n"))
            }
            Ok(Ok(Outcome::Agree(steps, percepts))) => {
                eprintln!("{name}: {steps} steps, {percepts} percepts compared");
                Ok(format!("{name}\tboth engines agree\n"))
            }
            Ok(Err(disagreement)) => Err(format!("{name}: {disagreement}")),
            Err(_) => Err(format!("{name}: PANIC")),
        }
    });
    let failures: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    if filter.is_empty() {
        assert_eq!(files.len(), 29, "every GDL-II corpus game");
        let found: String = outcomes
            .iter()
            .filter_map(|o| o.as_ref().ok())
            .cloned()
            .collect();
        assert_recorded(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gdl2_outcomes.txt"),
            &found,
        );
    }
}
