//! Every corpus game (GDL and GDL-II) is built and played at random for up to 100 joint moves
//! without a panic or a hang. Games the engine refuses, and playouts that stop on an error,
//! are exactly those recorded in `corpus_outcomes.txt`, with the reason; regenerate with
//! `UPDATE_EXPECT=1 cargo test -p gdl-reason --test corpus` and review the diff.
//!
//! The budgets are deterministic (facts per layer, term depth); the time limit per question is
//! a guard against hangs, far above what any game needs.

#[allow(dead_code, reason = "the traces' helpers are for the other tests")]
mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gdl_reason::ReferenceMachine;
use gdl_reason::reference::Limits;
use gdl_reason::trace::{Moves, replay};
use ggp_testdata::{assert_recorded, corpus_files, parallel_map_by, relative, shared_or_skip};
use rand::SeedableRng;
use rand::rngs::StdRng;

use common::{read_game, same_rules};

const STEPS: usize = 100;

/// `None` when the game plays, else the reason it stopped.
fn play(path: &Path) -> Option<String> {
    let text = read_game(path);
    let checked = gdl_check::check(&text);
    let limits = Limits {
        max_facts: 2_000_000,
        time: Some(Duration::from_secs(60)),
        ..Limits::default()
    };
    let mut machine = match ReferenceMachine::with_limits(&checked, limits) {
        Ok(machine) => machine,
        Err(diagnostics) => {
            let mut codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
            codes.sort();
            codes.dedup();
            return Some(format!("refused: {}", codes.join(",")));
        }
    };
    let mut rng = StdRng::seed_from_u64(1);
    match replay(&mut machine, Moves::Random(STEPS, &mut rng), |_| Ok(())) {
        Ok(None) => None,
        Ok(Some(stop)) => Some(format!("stopped: {stop}")),
        Err(error) => Some(format!("error: {error}")),
    }
}

#[test]
fn every_corpus_game_plays_or_is_refused_as_recorded() {
    let Some(shared) = shared_or_skip("every_corpus_game_plays_or_is_refused_as_recorded") else {
        return;
    };
    let files: Vec<PathBuf> = corpus_files(&shared);
    // Copies of a game (the same rules spelled the same way, in several collections) are
    // played once, the outcome recorded for each.
    let outcomes = parallel_map_by(&files, same_rules, |path| {
        catch_unwind(AssertUnwindSafe(|| play(path))).unwrap_or_else(|_| Some("PANIC".into()))
    });
    let found: String = files
        .iter()
        .zip(outcomes)
        .filter_map(|(path, o)| o.map(|reason| format!("{}\t{reason}\n", relative(&shared, path))))
        .collect();
    assert!(!found.contains("\tPANIC"), "panics:\n{found}");
    assert_recorded(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_outcomes.txt"),
        &found,
    );
    assert_eq!(files.len(), 944, "every corpus game");
}
