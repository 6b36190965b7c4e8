//! The fast engine on every corpus game (GDL and GDL-II), each built once:
//!
//! - where the game has a conformance trace, the trace replays identically;
//! - random playouts run side by side with the reference engine, which must agree at every
//!   step on the state, every role's legal moves, terminality and the goal values (a question
//!   the reference engine cannot answer within its budgets ends the playout);
//! - bit-parallel playouts (more than one batch of lanes, so that lanes start again) are
//!   replayed one move at a time (a sample of them): on the fast engine, which must agree at
//!   every step on the number of legal moves, the move's legality, terminality and the goals
//!   (or fail with the same error); four of them on the reference engine as well;
//! - bit-parallel playouts from several starts at once (states some of those playouts
//!   reached), each lane from its own start, replayed in the same way from their start; each
//!   start's results must be its playouts', and, in one-role games, each start's best line its
//!   best playout's.
//!
//! Copies of a game (the same rules spelled the same way, in several collections) are built and
//! compared once; each copy's trace is replayed and each copy's verdict recorded.
//!
//! The games too large for a network run on the fast engine's join tier: their traces replay
//! and random playouts run side by side with the reference engine, as above. They are exactly
//! those recorded in `join_tier.txt`, with the network's reason; the games neither tier builds
//! (the reference engine plays them instead) are exactly those in `fast_outcomes.txt` (none
//! today). The budgets that decide it are deterministic (atoms, ground rules, tuples tried), so
//! the verdict is the same on any machine. The reference engine's own outcomes, the games it
//! refuses (with their codes, those the fast engine finds invalid) and the playouts it stops
//! (where, why), are exactly those in `corpus_outcomes.txt`: every other game builds and plays
//! on it without an error. Regenerate with `UPDATE_EXPECT=1 cargo test -p gdl-reason --test fast_corpus` and
//! review the diff. `GGP_FILTER=substring` runs a subset while debugging; `GGP_TIMES=1` (with
//! `-- --nocapture`) prints each game's time on standard error, phase by phase.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gdl_reason::ReasonError;
use gdl_reason::fast::joins::{JoinLimits, JoinMachine};
use gdl_reason::fast::{BuildError, FastLimits, LANES, LanePlayout};
use gdl_reason::reference::Limits;
use gdl_reason::trace::{StateInfo, describe};
use gdl_reason::{FastMachine, ReferenceMachine, StateMachine, TermId};
use ggp_testdata::{
    assert_recorded, corpus_files, group_by, parallel_map, relative, shared_or_skip,
};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use common::{check_trace, read_game, same_rules, trace_cases};

const PLAYOUTS: usize = 2;
const STEPS: usize = 150;

/// Maps a move of one machine to the other by its text.
fn translate<A: StateMachine, B: StateMachine>(from: &A, to: &mut B, t: TermId) -> TermId {
    let text = from.terms().text(from.symbols(), t);
    to.intern(&text).expect("a move of the game")
}

/// Plays both engines side by side; `Err` describes the first disagreement. A question the
/// reference engine cannot answer within its budget ends the playout (nothing to compare):
/// `Ok(Some(why))`, which `corpus_outcomes.txt` records.
fn side_by_side<M: StateMachine>(
    fast: &mut M,
    reference: &mut ReferenceMachine,
    rng: &mut impl Rng,
) -> Result<Option<String>, String> {
    let stopped = |step: usize, e: ReasonError| Ok(Some(format!("stopped at step {step}: {e}")));
    let mut f = fast.initial_state().map_err(|e| format!("fast: {e}"))?;
    let mut r = match reference.initial_state() {
        Ok(r) => r,
        Err(e) => return stopped(0, e),
    };
    for step in 0..STEPS {
        let expected = match describe(reference, &r) {
            Ok(expected) => expected,
            Err(e) => return stopped(step, e),
        };
        let got: StateInfo = describe(fast, &f).map_err(|e| format!("step {step}: fast: {e}"))?;
        if got != expected {
            return Err(format!(
                "step {step}: the engines disagree\n  reference: {expected:?}\n  fast:      {got:?}"
            ));
        }
        if expected.terminal || expected.legal.iter().any(Vec::is_empty) {
            return Ok(None);
        }
        let mut joint_r = Vec::new();
        let mut joint_f = Vec::new();
        for role in 0..reference.roles().len() {
            let legal = match reference.legal_moves(&r, role) {
                Ok(legal) => legal,
                Err(e) => return stopped(step, e),
            };
            let &m = legal.choose(rng).expect("a legal move");
            joint_f.push(translate(reference, fast, m));
            joint_r.push(m);
        }
        f = fast
            .next_state(&f, &joint_f)
            .map_err(|e| format!("step {step}: fast: {e}"))?;
        r = match reference.next_state(&r, &joint_r) {
            Ok(next) => next,
            Err(e) => return stopped(step, e),
        };
    }
    Ok(None)
}

/// How a recorded lane playout ended.
#[derive(Clone, Copy)]
enum End<'a> {
    /// Finished (goals) or cut at the step limit.
    Normal(&'a Option<Vec<u8>>),
    /// Failed with this error: a role without legal moves, or bad goals.
    Failed(&'a ReasonError),
}

/// Replays a recorded bit-parallel playout one move at a time on `machine` (whose moves are
/// `moves`, mapped from the fast engine's move numbers); `Err` describes the first
/// disagreement. A question `machine` cannot answer ends the replay when `lenient` (the
/// reference engine's budgets).
fn replay_lane<M: StateMachine>(
    machine: &mut M,
    prefix: &[Vec<u32>],
    p: &LanePlayout,
    end: End<'_>,
    moves: impl Fn(&mut M, u32) -> TermId,
    lenient: bool,
) -> Result<(), String> {
    macro_rules! ask {
        ($e:expr, $what:expr) => {
            match $e {
                Ok(v) => v,
                Err(_) if lenient => return Ok(()),
                Err(e) => return Err(format!("{}: {e}", $what)),
            }
        };
    }
    let mut state = ask!(machine.initial_state(), "initial state");
    // The lane's start: the state after `prefix`.
    for joint in prefix {
        let terms: Vec<TermId> = joint.iter().map(|&m| moves(machine, m)).collect();
        state = ask!(machine.next_state(&state, &terms), "next (start)");
    }
    for (step, joint) in p.moves.iter().enumerate() {
        if ask!(machine.is_terminal(&state), "terminal") {
            return Err(format!("step {step}: the lane moved in a terminal state"));
        }
        let mut terms = Vec::new();
        for (role, &m) in joint.iter().enumerate() {
            let legal = ask!(machine.legal_moves(&state, role), "legal");
            if legal.len() as u32 != p.legal_counts[step][role] {
                return Err(format!(
                    "step {step}: role {role} has {} legal moves, the lane counted {}",
                    legal.len(),
                    p.legal_counts[step][role]
                ));
            }
            let t = moves(machine, m);
            if !legal.contains(&t) {
                return Err(format!("step {step}: the lane played an illegal move"));
            }
            terms.push(t);
        }
        state = ask!(machine.next_state(&state, &terms), "next");
    }
    let terminal = ask!(machine.is_terminal(&state), "terminal");
    match end {
        End::Normal(Some(goals)) => {
            if !terminal {
                return Err("the lane ended in a state that is not terminal".into());
            }
            let expected = ask!(machine.goals(&state), "goals");
            if &expected != goals {
                return Err(format!("goals {goals:?}, expected {expected:?}"));
            }
        }
        End::Normal(None) if terminal => return Err("the lane was cut in a terminal state".into()),
        End::Normal(None) if p.moves.len() != STEPS => {
            return Err(format!("the lane was cut after {} steps", p.moves.len()));
        }
        End::Normal(None) => {}
        End::Failed(error) => {
            // The error one-at-a-time play meets in the same state.
            let expected = if terminal {
                machine.goals(&state).err()
            } else {
                machine
                    .random_joint_move(&state, &mut StdRng::seed_from_u64(0))
                    .err()
            };
            if expected.as_ref() != Some(error) {
                return Err(format!(
                    "the lane failed with `{error}`, expected {expected:?}"
                ));
            }
        }
    }
    Ok(())
}

/// Bit-parallel playouts, replayed on the fast engine one move at a time (every eighth, the
/// last to finish and a failed one), the first two and the last two on the reference engine
/// too; the batch's totals must be those of the playouts recorded.
fn check_lanes(
    fast: &mut FastMachine,
    reference: &mut ReferenceMachine,
    rng: &mut impl Rng,
) -> Result<Vec<LanePlayout>, String> {
    let count = LANES as u64 + 16;
    let s0 = fast.initial_state().map_err(|e| e.to_string())?;
    let Some(record) = fast
        .lane_playouts(&s0, count, STEPS, rng)
        .map_err(|e| format!("lanes: {e}"))?
    else {
        return Ok(Vec::new());
    };
    if let Some(batch) = &record.batch {
        // The totals a batch reports are those of the playouts it played.
        let finished: Vec<&LanePlayout> = record
            .playouts
            .iter()
            .filter(|p| p.goals.is_some())
            .collect();
        let mut goal_sums = vec![0u64; fast.roles().len()];
        for p in &finished {
            for (sum, &g) in goal_sums.iter_mut().zip(p.goals.as_ref().unwrap()) {
                *sum += u64::from(g);
            }
        }
        let expected = (
            finished.len() as u64,
            count - finished.len() as u64,
            record
                .playouts
                .iter()
                .map(|p| p.moves.len() as u64)
                .sum::<u64>(),
            finished.iter().map(|p| p.moves.len() as u64).sum::<u64>(),
            goal_sums,
        );
        let got = (
            batch.finished,
            batch.cut,
            batch.steps,
            batch.finished_steps,
            batch.goal_sums.clone(),
        );
        if record.playouts.len() as u64 != count || got != expected {
            return Err(format!(
                "{} lane playouts recorded, not {count}, or totals {got:?}, expected {expected:?}",
                record.playouts.len()
            ));
        }
    }
    let fast_moves: Vec<TermId> = (0..fast.stats().moves as u32)
        .map(|m| fast.move_term(m))
        .collect();
    let texts: Vec<String> = fast_moves
        .iter()
        .map(|&t| fast.terms().text(fast.symbols(), t))
        .collect();
    let all = record
        .playouts
        .iter()
        .map(|p| (p, End::Normal(&p.goals)))
        .chain(record.failed.iter().map(|(p, e)| (p, End::Failed(e))));
    let last = record.playouts.len().saturating_sub(16);
    for (k, (p, end)) in all.enumerate() {
        // Every eighth playout, the last ones to finish (among them those of lanes that
        // started again) and the failed one.
        let failed = matches!(end, End::Failed(_));
        if k % 8 != 0 && k < last && !failed {
            continue;
        }
        // The first two and the last two (lanes that started again).
        let on_reference = k < 9 || k + 2 >= record.playouts.len() || failed;
        replay_lane(fast, &[], p, end, |_, m| fast_moves[m as usize], false)
            .map_err(|e| format!("lane playout {k}, on the fast engine: {e}"))?;
        if on_reference {
            replay_lane(
                reference,
                &[],
                p,
                end,
                |r, m| r.intern(&texts[m as usize]).expect("a move of the game"),
                true,
            )
            .map_err(|e| format!("lane playout {k}, on the reference engine: {e}"))?;
        }
    }
    Ok(record.playouts)
}

/// Bit-parallel playouts from several starts, each lane from its own (states reached by the
/// first moves of some of `earlier`'s playouts), replayed one move at a time from their start
/// as [`check_lanes`] does; each start's results must be those of its playouts, and in a game
/// of one role each start's best line must be its best playout's, and replay to its goal.
fn check_lanes_from_starts(
    fast: &mut FastMachine,
    reference: &mut ReferenceMachine,
    earlier: &[LanePlayout],
    rng: &mut impl Rng,
) -> Result<(), String> {
    let fast_moves: Vec<TermId> = (0..fast.stats().moves as u32)
        .map(|m| fast.move_term(m))
        .collect();
    let texts: Vec<String> = fast_moves
        .iter()
        .map(|&t| fast.terms().text(fast.symbols(), t))
        .collect();
    // The first state, and states 1 and 5 moves in, where playouts went that far.
    let mut prefixes: Vec<Vec<Vec<u32>>> = vec![Vec::new()];
    for (k, &len) in [1usize, 5].iter().enumerate() {
        if let Some(p) = earlier.iter().skip(k).find(|p| p.moves.len() > len) {
            prefixes.push(p.moves[..len].to_vec());
        }
    }
    let mut starts = Vec::new();
    for prefix in &prefixes {
        let mut s = fast.initial_state().map_err(|e| e.to_string())?;
        for joint in prefix {
            let terms: Vec<TermId> = joint.iter().map(|&m| fast_moves[m as usize]).collect();
            s = fast
                .next_state(&s, &terms)
                .map_err(|e| format!("a start: {e}"))?;
        }
        starts.push(s);
    }
    // More playouts than lanes, so that lanes start again, from other starts.
    let per_start = (LANES / starts.len() + 3) as u32;
    let one_role = fast.roles().len() == 1;
    let Some((record, out)) = fast
        .lane_playouts_from(&starts, per_start, STEPS, one_role, rng)
        .map_err(|e| format!("lanes from starts: {e}"))?
    else {
        return Ok(());
    };
    if let Some(out) = &out {
        // Each start's results are those of the playouts recorded from it.
        for (i, _) in starts.iter().enumerate() {
            let mine: Vec<&LanePlayout> = record.playouts.iter().filter(|p| p.start == i).collect();
            let finished: Vec<&LanePlayout> =
                mine.iter().copied().filter(|p| p.goals.is_some()).collect();
            let mut sums = vec![0u64; fast.roles().len()];
            for p in &finished {
                for (sum, &g) in sums.iter_mut().zip(p.goals.as_ref().unwrap()) {
                    *sum += u64::from(g);
                }
            }
            let expected = (mine.len() as u32, finished.len() as u32, sums);
            let got = (
                out.finished[i] + out.cut[i],
                out.finished[i],
                out.goal_sums_of(i).to_vec(),
            );
            if got != expected || mine.len() as u32 != per_start {
                return Err(format!(
                    "start {i}: {} playouts recorded, not {per_start}, or results {got:?}, expected {expected:?}",
                    mine.len()
                ));
            }
            if one_role {
                let best = finished
                    .iter()
                    .filter(|p| p.moves.len() <= gdl_reason::machine::MAX_LINE)
                    .filter_map(|p| p.goals.as_ref().map(|g| g[0]))
                    .max();
                if out.best_goal[i] != best {
                    return Err(format!(
                        "start {i}: best goal {:?}, expected {best:?}",
                        out.best_goal[i]
                    ));
                }
                if let Some(best) = best {
                    // The best line plays from the start to a terminal state with that goal.
                    let mut s = starts[i].clone();
                    for &m in &out.best_line[i] {
                        s = fast
                            .next_state(&s, &[m])
                            .map_err(|e| format!("best line: {e}"))?;
                    }
                    let terminal = fast.is_terminal(&s).map_err(|e| e.to_string())?;
                    let goals = fast.goals(&s).map_err(|e| e.to_string())?;
                    if !terminal || goals != [best] {
                        return Err(format!(
                            "start {i}: the best line ends in terminal {terminal}, goals {goals:?}, not {best}"
                        ));
                    }
                }
            }
        }
    }
    let all = record
        .playouts
        .iter()
        .map(|p| (p, End::Normal(&p.goals)))
        .chain(record.failed.iter().map(|(p, e)| (p, End::Failed(e))));
    let last = record.playouts.len().saturating_sub(16);
    for (k, (p, end)) in all.enumerate() {
        // Every sixteenth, the last ones to finish (lanes that started again) and the
        // failed one; the last and the failed one on the reference engine too.
        let failed = matches!(end, End::Failed(_));
        if k % 16 != 0 && k < last && !failed {
            continue;
        }
        let prefix = &prefixes[p.start];
        replay_lane(fast, prefix, p, end, |_, m| fast_moves[m as usize], false).map_err(|e| {
            format!(
                "lane playout {k} from start {}, on the fast engine: {e}",
                p.start
            )
        })?;
        if k + 1 == record.playouts.len() || failed {
            replay_lane(
                reference,
                prefix,
                p,
                end,
                |r, m| r.intern(&texts[m as usize]).expect("a move of the game"),
                true,
            )
            .map_err(|e| {
                format!(
                    "lane playout {k} from start {}, on the reference engine: {e}",
                    p.start
                )
            })?;
        }
    }
    Ok(())
}

#[test]
fn copies_are_the_same_rules_spelled_the_same_way() {
    let dir = std::env::temp_dir().join(format!("ggp-copies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> = [
        "; a game\n(role x)  (<= (legal x (mark ?c))\n    (cell ?c)) ; the move\n",
        "(role X) (<= (legal X (mark ?c)) (cell ?c))",
        // CR line ends: a comment ends at `\r` too.
        "; c\r(role x)\r(<= (legal x (mark ?c)) (cell ?c))\r",
        "(role x) (<= (legal x (mark ?c)) (cell ?c)",
    ]
    .iter()
    .enumerate()
    .map(|(k, text)| {
        let path = dir.join(format!("{k}.kif"));
        std::fs::write(&path, text).unwrap();
        path
    })
    .collect();
    let groups = group_by(&files, same_rules);
    std::fs::remove_dir_all(&dir).unwrap();
    // The first and third together; `X` is another spelling; the last does not parse.
    let expected = vec![
        vec![files[0].clone(), files[2].clone()],
        vec![files[1].clone()],
        vec![files[3].clone()],
    ];
    assert_eq!(groups, expected);
}

/// Where the fast engine runs a game it does not build a network for.
enum Tier {
    /// The join tier, with the network's refusal.
    Joins(String),
    /// Neither: the network's refusal and the join tier's.
    Refused(String),
}

/// What a game's comparison found where the engines agree: the tier the fast engine runs it on
/// where not a network's, and why the reference engine refused it or stopped a playout.
#[derive(Default)]
struct Outcome {
    tier: Option<Tier>,
    reference: Option<String>,
}

/// The game's [`Outcome`]; `Err` on a disagreement. `traces` are those of the game's copies
/// (grouped by [`same_rules`]), each replayed; the rest is done once.
fn compare(
    shared: &Path,
    path: &Path,
    traces: &[&(PathBuf, PathBuf, PathBuf)],
) -> Result<Outcome, String> {
    let mut phases = Phases::start();
    let text = read_game(path);
    let checked = gdl_check::check(&text);
    let built = FastMachine::with_limits(&checked, limits());
    phases.lap("fast build");
    let mut fast = match built {
        Ok(m) => m,
        Err(BuildError::Invalid(_)) => return reference_refuses(&checked),
        Err(BuildError::Unsupported(reason)) => {
            return joins(shared, path, traces, &checked, reason, phases);
        }
    };
    for (game, moves, expected) in traces {
        check_trace(&mut fast, moves, expected)
            .map_err(|e| format!("trace of {}: {e}", relative(shared, game)))?;
    }
    phases.lap("traces");
    let mut reference = ReferenceMachine::with_limits(&checked, reference_limits())
        .map_err(|_| "the reference engine refuses a game the fast engine built")?;
    phases.lap("reference build");
    let mut rng = StdRng::seed_from_u64(7);
    let mut stopped = None;
    for _ in 0..PLAYOUTS {
        let stop = side_by_side(&mut fast, &mut reference, &mut rng)?;
        stopped = stopped.or(stop);
    }
    phases.lap("side by side");
    let playouts = check_lanes(&mut fast, &mut reference, &mut rng)?;
    phases.lap("lanes");
    if !playouts.is_empty() {
        check_lanes_from_starts(&mut fast, &mut reference, &playouts, &mut rng)?;
    }
    phases.lap("lanes from starts");
    phases.print(shared, path, "agrees");
    Ok(Outcome {
        tier: None,
        reference: stopped,
    })
}

/// A game with blocking errors, which the fast engine refuses: the reference engine must
/// refuse it too, its codes recorded.
fn reference_refuses(checked: &gdl_check::Checked<'_>) -> Result<Outcome, String> {
    match ReferenceMachine::with_limits(checked, reference_limits()) {
        Ok(_) => Err("the reference engine builds a game the fast engine finds invalid".into()),
        Err(diagnostics) => {
            let mut codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
            codes.sort_unstable();
            codes.dedup();
            Ok(Outcome {
                tier: None,
                reference: Some(format!("refused: {}", codes.join(","))),
            })
        }
    }
}

/// The reference engine's budgets beside the fast engine. What stops a playout is recorded
/// (`corpus_outcomes.txt`), so only the deterministic budget (facts) may decide it: the time
/// allowed each question is a guard against a hang, far above what any game needs, so that a
/// slow machine does not change the outcomes.
fn reference_limits() -> Limits {
    Limits {
        max_facts: 2_000_000,
        time: Some(Duration::from_secs(60)),
        ..Limits::default()
    }
}

/// A game the network refuses, on the join tier: the traces replayed, and random playouts side
/// by side with the reference engine, as for a network.
fn joins(
    shared: &Path,
    path: &Path,
    traces: &[&(PathBuf, PathBuf, PathBuf)],
    checked: &gdl_check::Checked<'_>,
    network: String,
    mut phases: Phases,
) -> Result<Outcome, String> {
    let built = JoinMachine::new(checked, JoinLimits::default());
    phases.lap("joins build");
    let mut joins = match built {
        Ok(m) => m,
        Err(BuildError::Invalid(_)) => return Err("the join tier finds blocking errors".into()),
        Err(BuildError::Unsupported(why)) => {
            phases.print(shared, path, "refused");
            return Ok(Outcome {
                tier: Some(Tier::Refused(format!("{network}; with join plans: {why}"))),
                reference: None,
            });
        }
    };
    for (game, moves, expected) in traces {
        check_trace(&mut joins, moves, expected)
            .map_err(|e| format!("join tier: trace of {}: {e}", relative(shared, game)))?;
    }
    phases.lap("traces");
    let mut reference = ReferenceMachine::with_limits(checked, reference_limits())
        .map_err(|_| "the reference engine refuses a game the join tier built")?;
    let mut rng = StdRng::seed_from_u64(7);
    let mut stopped = None;
    for _ in 0..PLAYOUTS {
        let stop = side_by_side(&mut joins, &mut reference, &mut rng)
            .map_err(|e| format!("join tier: {e}"))?;
        stopped = stopped.or(stop);
    }
    phases.lap("side by side");
    phases.print(shared, path, "join tier");
    Ok(Outcome {
        tier: Some(Tier::Joins(network)),
        reference: stopped,
    })
}

/// Each phase of a game's comparison and its time, printed with `GGP_TIMES`.
struct Phases {
    spent: Vec<(&'static str, Duration)>,
    since: std::time::Instant,
}

impl Phases {
    fn start() -> Phases {
        Phases {
            spent: Vec::new(),
            since: std::time::Instant::now(),
        }
    }

    /// The phase that just ended.
    fn lap(&mut self, phase: &'static str) {
        self.spent.push((phase, self.since.elapsed()));
        self.since = std::time::Instant::now();
    }

    /// With `GGP_TIMES`, the game's time in all, then its verdict and each phase's time.
    fn print(&self, shared: &Path, path: &Path, verdict: &str) {
        if std::env::var_os("GGP_TIMES").is_none() {
            return;
        }
        let total: Duration = self.spent.iter().map(|&(_, spent)| spent).sum();
        let each: Vec<String> = self
            .spent
            .iter()
            .map(|(phase, spent)| format!("{phase} {:.2}", spent.as_secs_f64()))
            .collect();
        eprintln!(
            "{:.2}\t{}\t{verdict}: {}",
            total.as_secs_f64(),
            relative(shared, path),
            each.join(", ")
        );
    }
}

/// The default budgets, except time: a slow test machine must not change the verdicts. The
/// games keep every core busy, so no grounding runs beside another on a core of its own.
fn limits() -> FastLimits {
    FastLimits {
        time: Duration::from_secs(3600),
        ground_beside: false,
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
    // Copies of a game are built and compared once, each copy's trace replayed, and the verdict
    // recorded for each.
    let groups = group_by(&files, same_rules);
    let outcomes = parallel_map(&groups, |copies| {
        let name = relative(&shared, &copies[0]).into_owned();
        let mine: Vec<_> = traces
            .iter()
            .filter(|(game, _, _)| copies.contains(game))
            .collect();
        match catch_unwind(AssertUnwindSafe(|| compare(&shared, &copies[0], &mine))) {
            Ok(Ok(outcome)) => (outcome, None),
            Ok(Err(disagreement)) => (Outcome::default(), Some(format!("{name}: {disagreement}"))),
            Err(_) => (Outcome::default(), Some(format!("{name}: PANIC"))),
        }
    });
    let failures: Vec<String> = outcomes.iter().filter_map(|o| o.1.clone()).collect();
    // Each copy's line, for the games on the join tier, those refused, and those the reference
    // engine refused or stopped.
    let shared_dir = shared.as_path();
    let listing = |line: &dyn Fn(&Outcome) -> Option<&String>| -> String {
        let mut lines: Vec<String> = groups
            .iter()
            .zip(&outcomes)
            .filter_map(|(copies, o)| Some((copies, line(&o.0)?)))
            .flat_map(|(copies, reason)| {
                copies
                    .iter()
                    .map(move |path| format!("{}\t{reason}\n", relative(shared_dir, path)))
            })
            .collect();
        lines.sort();
        lines.concat()
    };
    let on_joins = listing(&|o| match &o.tier {
        Some(Tier::Joins(reason)) => Some(reason),
        _ => None,
    });
    let refused = listing(&|o| match &o.tier {
        Some(Tier::Refused(reason)) => Some(reason),
        _ => None,
    });
    let reference = listing(&|o| o.reference.as_ref());
    eprintln!(
        "{} games ({} different), {} on the join tier, {} refused by the fast engine, {} failures",
        files.len(),
        groups.len(),
        on_joins.lines().count(),
        refused.lines().count(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if filter.is_empty() {
        assert_eq!(files.len(), 944, "every corpus game");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        assert_recorded(&dir.join("join_tier.txt"), &on_joins);
        assert_recorded(&dir.join("fast_outcomes.txt"), &refused);
        assert_recorded(&dir.join("corpus_outcomes.txt"), &reference);
    }
}
