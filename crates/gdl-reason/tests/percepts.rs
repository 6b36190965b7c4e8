//! GDL-II percepts checked by hand on both engines: what each role sees after each joint move
//! of short matches of Monty Hall (`games/montyhall.kif`), Kriegspiel tic-tac-toe 4×4 (from
//! `../shared`) and blind breakthrough (`games/blindbreakthrough.kif`); the `random` role, and a
//! GDL game's percepts (none).

use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, Machine, MachineState, StateMachine, TermId};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

const MONTY: &str = include_str!("../../../games/montyhall.kif");
const BLIND: &str = include_str!("../../../games/blindbreakthrough.kif");
const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn machine(text: &str, choice: EngineChoice) -> Machine {
    let m = Machine::build(&gdl_check::check(text), choice, Limits::default())
        .unwrap_or_else(|d| panic!("{d:?}"));
    if choice == EngineChoice::Fast {
        assert_eq!(m.engine_name(), "fast", "{}", m.describe_engine());
    }
    m
}

fn texts(m: &Machine, terms: &[gdl_reason::TermId]) -> Vec<String> {
    let mut out: Vec<String> = terms
        .iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect();
    out.sort();
    out
}

/// A step: the contestant's move, the host's move, then what the contestant sees, what the
/// host sees, and the host's legal moves before the step.
type Step<'a> = (
    &'a str,
    &'a str,
    &'a [&'a str],
    &'a [&'a str],
    &'a [&'a str],
);

/// Plays `steps` and returns the contestant's final goal.
fn play(m: &mut Machine, steps: &[Step<'_>]) -> u8 {
    let mut state = m.initial_state().unwrap();
    for (k, (contestant, host, sees_contestant, sees_host, host_legal)) in steps.iter().enumerate()
    {
        let legal = m.legal_moves(&state, 1).unwrap();
        assert_eq!(
            texts(m, &legal),
            *host_legal,
            "step {k}: the host's legal moves"
        );
        let joint = [m.intern(contestant).unwrap(), m.intern(host).unwrap()];
        let seen = m.all_percepts(&state, &joint).unwrap();
        assert_eq!(texts(m, &seen[0]), *sees_contestant, "step {k}: contestant");
        assert_eq!(texts(m, &seen[1]), *sees_host, "step {k}: random");
        // One role at a time gives the same.
        assert_eq!(m.percepts(&state, &joint, 0).unwrap(), seen[0]);
        state = m.next_state(&state, &joint).unwrap();
    }
    assert!(m.is_terminal(&state).unwrap());
    m.goal(&state, 0).unwrap()
}

#[test]
fn monty_hall_percepts_checked_by_hand_on_both_engines() {
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = machine(MONTY, choice);
        assert_eq!(m.random_role(), Some(1));
        assert!(m.has_sees() && m.is_gdl2());
        let all_doors: &[&str] = &["(hide 1)", "(hide 2)", "(hide 3)"];
        // The car behind 2, the contestant picks 1; the host must open 3; switching wins.
        let goal = play(
            &mut m,
            &[
                (
                    "(choose 1)",
                    "(hide 2)",
                    &["(picked 1)"],
                    &["(picked 1)"],
                    all_doors,
                ),
                ("wait", "(open 3)", &["(opened 3)"], &[], &["(open 3)"]),
                ("switch", "wait", &["(car 2)"], &["switch"], &["wait"]),
            ],
        );
        assert_eq!(goal, 100, "{choice:?}");
        // The car behind the pick: the host may open either other door; staying wins.
        let goal = play(
            &mut m,
            &[
                (
                    "(choose 3)",
                    "(hide 3)",
                    &["(picked 3)"],
                    &["(picked 3)"],
                    all_doors,
                ),
                (
                    "wait",
                    "(open 1)",
                    &["(opened 1)"],
                    &[],
                    &["(open 1)", "(open 2)"],
                ),
                ("stay", "wait", &["(car 3)"], &["stay"], &["wait"]),
            ],
        );
        assert_eq!(goal, 100, "{choice:?}");
        // Switching away from the car loses.
        let goal = play(
            &mut m,
            &[
                (
                    "(choose 3)",
                    "(hide 3)",
                    &["(picked 3)"],
                    &["(picked 3)"],
                    all_doors,
                ),
                (
                    "wait",
                    "(open 2)",
                    &["(opened 2)"],
                    &[],
                    &["(open 1)", "(open 2)"],
                ),
                ("switch", "wait", &["(car 3)"], &["switch"], &["wait"]),
            ],
        );
        assert_eq!(goal, 0, "{choice:?}");
    }
}

#[test]
fn a_gdl_game_has_no_percepts_and_no_random_role() {
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = machine(TICTACTOE, choice);
        assert!(!m.has_sees() && !m.is_gdl2());
        assert_eq!(m.random_role(), None);
        let s = m.initial_state().unwrap();
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
        let joint = m.random_joint_move(&s, &mut rng).unwrap();
        assert_eq!(m.all_percepts(&s, &joint).unwrap(), [vec![], vec![]]);
    }
}

#[test]
fn percepts_of_a_move_that_is_never_legal_or_a_short_joint_move_are_bad_requests() {
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = machine(MONTY, choice);
        let s = m.initial_state().unwrap();
        let pick = m.intern("(choose 1)").unwrap();
        let err = m.percepts(&s, &[pick], 0).unwrap_err();
        assert!(err.to_string().contains("one per role"), "{err}");
        if choice == EngineChoice::Fast {
            let bogus = m.intern("(fly away)").unwrap();
            let err = m.percepts(&s, &[bogus, pick], 0).unwrap_err();
            assert!(err.to_string().contains("never a legal move"), "{err}");
        }
        // A role number that does not exist.
        let hide = m.intern("(hide 1)").unwrap();
        assert!(m.percepts(&s, &[pick, hide], 7).is_err());
    }
}

/// Makes the joint move `moves` (one per role, as text) in `state` and checks that role `r`
/// sees exactly `sees[r]` (sorted), asking for every role at once and for each alone.
fn step(
    m: &mut Machine,
    state: &MachineState,
    moves: &[&str],
    sees: &[&[&str]],
    k: usize,
) -> MachineState {
    let joint: Vec<TermId> = moves.iter().map(|t| m.intern(t).unwrap()).collect();
    for (r, &mv) in joint.iter().enumerate() {
        let legal = m.legal_moves(state, r).unwrap();
        assert!(legal.contains(&mv), "step {k}: {} is not legal", moves[r]);
    }
    let seen = m.all_percepts(state, &joint).unwrap();
    for (r, expected) in sees.iter().enumerate() {
        assert_eq!(texts(m, &seen[r]), *expected, "step {k}: role {r} sees");
        assert_eq!(m.percepts(state, &joint, r).unwrap(), seen[r], "step {k}");
    }
    assert!(
        !m.is_terminal(state).unwrap(),
        "step {k}: terminal before the move"
    );
    m.next_state(state, &joint).unwrap()
}

/// The legal moves of `role` in `state`, as text, sorted.
fn legal_texts(m: &mut Machine, state: &MachineState, role: usize) -> Vec<String> {
    let legal = m.legal_moves(state, role).unwrap();
    texts(m, &legal)
}

/// The cells of a 4×4 board that `role` may not mark in `state` (those not among its legal
/// `(mark m n)` moves), as `"m n"`.
fn barred(m: &mut Machine, state: &MachineState, role: usize) -> Vec<String> {
    let legal = legal_texts(m, state, role);
    let mut out = Vec::new();
    for a in 1..=4 {
        for b in 1..=4 {
            if !legal.contains(&format!("(mark {a} {b})")) {
                out.push(format!("{a} {b}"));
            }
        }
    }
    out
}

/// Kriegspiel tic-tac-toe 4×4 (`corpus/gdl2/uwa-hyperplayer/kriegTTT_4x4.kif`), worked out by
/// hand from its rules: both players mark at once, each without seeing the other's marks. A
/// mark on a blank cell succeeds unless both marked the same cell (`doublehit`); the player
/// sees `(yougotit m n)` if it succeeded and `(mark m n)` if not. A player may mark any cell
/// not its own that it has not tried in vain since its last success (`tried`).
#[test]
fn kriegspiel_tic_tac_toe_percepts_checked_by_hand_on_both_engines() {
    let Some(shared) = ggp_testdata::shared_or_skip(
        "kriegspiel_tic_tac_toe_percepts_checked_by_hand_on_both_engines",
    ) else {
        return;
    };
    let path = shared.join("corpus/gdl2/uwa-hyperplayer/kriegTTT_4x4.kif");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIP: {} is absent", path.display());
        return;
    };
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = machine(&text, choice);
        assert!(m.has_sees() && m.is_gdl2());
        assert_eq!(m.random_role(), None);
        let names: Vec<String> = m
            .roles()
            .iter()
            .map(|&r| m.terms().text(m.symbols(), r))
            .collect();
        assert_eq!(names, ["xplayer", "oplayer"]);
        let s = m.initial_state().unwrap();
        assert_eq!(barred(&mut m, &s, 0), Vec::<String>::new());
        // Both on blank cells: both succeed.
        let s = step(
            &mut m,
            &s,
            &["(mark 1 1)", "(mark 2 2)"],
            &[&["(yougotit 1 1)"], &["(yougotit 2 2)"]],
            1,
        );
        assert_eq!(barred(&mut m, &s, 0), ["1 1"], "{choice:?}");
        assert_eq!(barred(&mut m, &s, 1), ["2 2"], "{choice:?}");
        // x tries o's cell, which it cannot see: legal, but it fails, and x sees `mark`.
        let s = step(
            &mut m,
            &s,
            &["(mark 2 2)", "(mark 3 3)"],
            &[&["(mark 2 2)"], &["(yougotit 3 3)"]],
            2,
        );
        assert_eq!(barred(&mut m, &s, 0), ["1 1", "2 2"], "{choice:?}");
        assert_eq!(barred(&mut m, &s, 1), ["2 2", "3 3"], "{choice:?}");
        // Both mark the same blank cell: neither gets it, both see that they failed.
        let s = step(
            &mut m,
            &s,
            &["(mark 1 2)", "(mark 1 2)"],
            &[&["(mark 1 2)"], &["(mark 1 2)"]],
            3,
        );
        assert_eq!(barred(&mut m, &s, 0), ["1 1", "1 2", "2 2"], "{choice:?}");
        assert_eq!(barred(&mut m, &s, 1), ["1 2", "2 2", "3 3"], "{choice:?}");
        // x succeeds (its failures are forgotten); o tries x's cell and fails again (its
        // failures so far are kept).
        let s = step(
            &mut m,
            &s,
            &["(mark 2 1)", "(mark 1 1)"],
            &[&["(yougotit 2 1)"], &["(mark 1 1)"]],
            4,
        );
        assert_eq!(barred(&mut m, &s, 0), ["1 1", "2 1"], "{choice:?}");
        assert_eq!(
            barred(&mut m, &s, 1),
            ["1 1", "1 2", "2 2", "3 3"],
            "{choice:?}"
        );
        // x completes (1 1) (2 1) (3 1); o's (4 4) succeeds too, without a line.
        let s = step(
            &mut m,
            &s,
            &["(mark 3 1)", "(mark 4 4)"],
            &[&["(yougotit 3 1)"], &["(yougotit 4 4)"]],
            5,
        );
        assert!(m.is_terminal(&s).unwrap(), "{choice:?}");
        assert_eq!(m.goal(&s, 0).unwrap(), 100, "{choice:?}");
        assert_eq!(m.goal(&s, 1).unwrap(), 0, "{choice:?}");
    }
}

/// Blind breakthrough (`games/blindbreakthrough.kif`), worked out by hand from its rules: the
/// mover sees whether its move went, took a pawn or failed; the player who lost a pawn sees
/// where; a straight step into a hidden pawn is legal but fails, and may not be tried again
/// before the player's next success.
#[test]
fn blind_breakthrough_percepts_checked_by_hand_on_both_engines() {
    const NONE: &[&str] = &[];
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = machine(BLIND, choice);
        assert!(m.has_sees() && m.is_gdl2());
        assert_eq!(m.random_role(), None);
        let legal = legal_texts;
        let s = m.initial_state().unwrap();
        let s = step(
            &mut m,
            &s,
            &["(move 2 2 2 3)", "noop"],
            &[&["(moved 2 2 2 3)"], NONE],
            1,
        );
        // Black may try to step onto white's unseen pawn at (2, 3): it fails.
        assert!(legal(&mut m, &s, 1).contains(&"(move 2 4 2 3)".to_string()));
        let s = step(
            &mut m,
            &s,
            &["noop", "(move 2 4 2 3)"],
            &[NONE, &["(blocked 2 4 2 3)"]],
            2,
        );
        // White takes on (3, 4); black sees where it lost a pawn.
        let s = step(
            &mut m,
            &s,
            &["(move 2 3 3 4)", "noop"],
            &[&["(captured 2 3 3 4)"], &["(lost 3 4)"]],
            3,
        );
        // Black may not try the failed step again, though (2, 3) is empty now; it retakes.
        let black = legal(&mut m, &s, 1);
        assert!(!black.contains(&"(move 2 4 2 3)".to_string()), "{black:?}");
        assert!(black.contains(&"(move 2 4 1 3)".to_string()), "{black:?}");
        assert!(black.contains(&"(move 2 4 3 3)".to_string()), "{black:?}");
        let s = step(
            &mut m,
            &s,
            &["noop", "(move 4 5 3 4)"],
            &[&["(lost 3 4)"], &["(captured 4 5 3 4)"]],
            4,
        );
        // White may not step onto its own pawns.
        let white = legal(&mut m, &s, 0);
        assert!(!white.contains(&"(move 1 1 1 2)".to_string()), "{white:?}");
        assert!(white.contains(&"(move 2 1 2 2)".to_string()), "{white:?}");
        let s = step(
            &mut m,
            &s,
            &["(move 3 2 3 3)", "noop"],
            &[&["(moved 3 2 3 3)"], NONE],
            5,
        );
        // Black's success cleared its failure: the step to (2, 3) may be tried, and goes.
        let s = step(
            &mut m,
            &s,
            &["noop", "(move 2 4 2 3)"],
            &[NONE, &["(moved 2 4 2 3)"]],
            6,
        );
        let s = step(
            &mut m,
            &s,
            &["(move 3 3 2 4)", "noop"],
            &[&["(moved 3 3 2 4)"], NONE],
            7,
        );
        let s = step(
            &mut m,
            &s,
            &["noop", "(move 2 3 1 2)"],
            &[&["(lost 1 2)"], &["(captured 2 3 1 2)"]],
            8,
        );
        // White takes on black's home row and wins.
        let s = step(
            &mut m,
            &s,
            &["(move 2 4 1 5)", "noop"],
            &[&["(captured 2 4 1 5)"], &["(lost 1 5)"]],
            9,
        );
        assert!(m.is_terminal(&s).unwrap(), "{choice:?}");
        assert_eq!(m.goal(&s, 0).unwrap(), 100, "{choice:?}");
        assert_eq!(m.goal(&s, 1).unwrap(), 0, "{choice:?}");
    }
}

/// Blind breakthrough on both engines side by side over random playouts: the same legal
/// moves, terminality, goals and percepts of every role at every step; and the player to move
/// always sees exactly one thing of its move (it went, took or failed), the other at most where
/// it lost a pawn.
#[test]
fn both_engines_agree_on_blind_breakthrough() {
    let mut fast = machine(BLIND, EngineChoice::Fast);
    let mut reference = machine(BLIND, EngineChoice::Reference);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let (mut steps, mut failed) = (0, 0);
    for _ in 0..30 {
        let mut f = fast.initial_state().unwrap();
        let mut r = reference.initial_state().unwrap();
        loop {
            let terminal = reference.is_terminal(&r).unwrap();
            assert_eq!(fast.is_terminal(&f).unwrap(), terminal);
            if terminal {
                assert_eq!(fast.goals(&f).unwrap(), reference.goals(&r).unwrap());
                break;
            }
            let mut joint_f = Vec::new();
            let mut joint_r = Vec::new();
            for role in 0..2 {
                let legal = legal_texts(&mut reference, &r, role);
                assert_eq!(legal_texts(&mut fast, &f, role), legal);
                let mv = legal.choose(&mut rng).unwrap();
                joint_f.push(fast.intern(mv).unwrap());
                joint_r.push(reference.intern(mv).unwrap());
            }
            let seen_r = reference.all_percepts(&r, &joint_r).unwrap();
            let seen_f = fast.all_percepts(&f, &joint_f).unwrap();
            let mover = usize::from(texts(&reference, &joint_r[..1]) == ["noop"]);
            for role in 0..2 {
                let seen = texts(&reference, &seen_r[role]);
                assert_eq!(texts(&fast, &seen_f[role]), seen);
                if role == mover {
                    assert_eq!(seen.len(), 1, "{seen:?}");
                    failed += usize::from(seen[0].starts_with("(blocked"));
                } else {
                    assert!(seen.iter().all(|p| p.starts_with("(lost")), "{seen:?}");
                    assert!(seen.len() <= 1, "{seen:?}");
                }
            }
            f = fast.next_state(&f, &joint_f).unwrap();
            r = reference.next_state(&r, &joint_r).unwrap();
            steps += 1;
            assert!(steps < 30 * 200, "a playout does not end");
        }
    }
    assert!(failed > 0, "no step failed in {steps} steps");
}
