//! GDL-II percepts checked by hand on `games/montyhall.kif`, on both engines: what each role
//! sees after each joint move of two matches, the `random` role, and a GDL game's (none).

use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, Machine, StateMachine};

const MONTY: &str = include_str!("../../../games/montyhall.kif");
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
