//! GDL-III's `knows`, reasoned exactly by the knowledge machine over either engine: replays of
//! the games of `games/`, checked by hand against each game's reading, on both engines,
//! and the refusals (the fast engine's machine over states, which the facade builds the
//! knowledge machine instead of; the budget of histories).

use gdl_reason::fast::joins::{JoinLimits, JoinMachine};
use gdl_reason::fast::{BuildError, FastLimits};
use gdl_reason::knowledge::{KnowledgeLimits, MAX_HISTORIES};
use gdl_reason::reference::Limits;
use gdl_reason::{
    EngineChoice, FastMachine, History, KnowledgeMachine, Machine, ReasonError, ReferenceMachine,
    StateMachine,
};

const NUMBER_GUESSING: &str = include_str!("../../../games/number_guessing.kif");
const MUDDY_CHILDREN: &str = include_str!("../../../games/muddy_children.kif");
const CUPS: &str = include_str!("../../../games/cups.kif");
const RUSSIAN_CARDS: &str = include_str!("../../../games/russian_cards.kif");

/// The knowledge machine over the reference engine, and the one over the fast engine.
fn machines(text: &str) -> [KnowledgeMachine; 2] {
    let reference = match KnowledgeMachine::from_text(text) {
        Ok(m) => m,
        Err(d) => panic!("{d:#?}"),
    };
    let checked = gdl_check::check(text);
    let fast =
        match KnowledgeMachine::fast(&checked, FastLimits::default(), KnowledgeLimits::default()) {
            Ok(m) => m,
            Err(e) => panic!("the fast engine refused: {e}"),
        };
    assert!(fast.is_fast() && !reference.is_fast());
    [reference, fast]
}

/// The history after these joint moves (each a move per role, as text).
fn play(m: &mut KnowledgeMachine, joints: &[&[&str]]) -> History {
    let mut h = m.initial_state().unwrap();
    for joint in joints {
        let joint: Vec<_> = joint.iter().map(|t| m.intern(t).unwrap()).collect();
        for (role, mv) in joint.iter().enumerate() {
            let legal = m.legal_moves(&h, role).unwrap();
            assert!(legal.contains(mv), "an illegal move in {joints:?}");
        }
        h = m.next_state(&h, &joint).unwrap();
    }
    h
}

fn texts(m: &KnowledgeMachine, terms: &[gdl_reason::TermId]) -> Vec<String> {
    let mut out: Vec<String> = terms
        .iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect();
    out.sort();
    out
}

const GUESSER: usize = 1;

/// The guesser's joint moves after the random player chose `n`: `noop` first, then each
/// of `then` (the random player's `noop` beside).
fn guessing(n: u32, then: &[&'static str]) -> Vec<Vec<String>> {
    let mut joints = vec![vec![format!("(choose {n})"), "noop".to_string()]];
    for mv in then {
        joints.push(vec!["noop".to_string(), mv.to_string()]);
    }
    joints
}

fn play_owned(m: &mut KnowledgeMachine, joints: &[Vec<String>]) -> History {
    let borrowed: Vec<Vec<&str>> = joints
        .iter()
        .map(|j| j.iter().map(String::as_str).collect())
        .collect();
    let slices: Vec<&[&str]> = borrowed.iter().map(Vec::as_slice).collect();
    play(m, &slices)
}

#[test]
fn number_guessing_pays_for_knowing_the_number_not_for_guessing_it() {
    for mut m in machines(NUMBER_GUESSING) {
        // The worked example of docs/gdl3.md: 5 chosen; "< 5?" no, "< 7?" yes, "< 6?" yes leave
        // 5 alone, so the guess of 5 is known; the guesser's class shrinks 8, 4, 2, 1.
        let asks = ["(ask 5)", "(ask 7)", "(ask 6)"];
        for (k, size) in [(0, 8), (1, 4), (2, 2), (3, 1)] {
            let h = play_owned(&mut m, &guessing(5, &asks[..k]));
            assert_eq!(
                m.class_size(&h, GUESSER).unwrap(),
                size,
                "after {k} questions"
            );
            let atoms = m.knows_atoms(&h).unwrap();
            let known = texts(&m, &atoms);
            let knows_five = known.contains(&"(knows guesser (secret 5))".to_string());
            assert_eq!(knows_five, size == 1, "{known:?}");
        }
        let h = play_owned(
            &mut m,
            &guessing(5, &["(ask 5)", "(ask 7)", "(ask 6)", "(guess 5)"]),
        );
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 100]);
        // 1 chosen: "< 2?" yes leaves 1 alone.
        let h = play_owned(&mut m, &guessing(1, &["(ask 2)", "(guess 1)"]));
        assert_eq!(m.goals(&h).unwrap(), [100, 100]);
        // 8 chosen: "< 8?" no leaves 8 alone.
        let h = play_owned(&mut m, &guessing(8, &["(ask 8)", "(guess 8)"]));
        assert_eq!(m.goals(&h).unwrap(), [100, 100]);
        // Two candidates left (5 and 6) and the right guess: lucky, worth 0; so is the wrong one.
        for (n, guess) in [(5, "(guess 5)"), (6, "(guess 6)"), (5, "(guess 6)")] {
            let h = play_owned(&mut m, &guessing(n, &["(ask 5)", "(ask 7)", guess]));
            assert!(m.is_terminal(&h).unwrap());
            assert_eq!(m.goals(&h).unwrap(), [100, 0], "{n} chosen, {guess}");
        }
        // A guess with no question at all, right by luck: 0.
        let h = play_owned(&mut m, &guessing(3, &["(guess 3)"]));
        assert_eq!(m.goals(&h).unwrap(), [100, 0]);
        // The longest game: five questions, the last one idle, then the guess at the last step;
        // and five questions with no guess at all, which scores 0.
        let five = ["(ask 5)", "(ask 7)", "(ask 6)", "(ask 2)", "(guess 5)"];
        let h = play_owned(&mut m, &guessing(5, &five));
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 100]);
        let h = play_owned(
            &mut m,
            &guessing(5, &["(ask 5)", "(ask 7)", "(ask 6)", "(ask 2)", "(ask 3)"]),
        );
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 0]);
        // The largest group of histories of each length: 8 numbers, then the guesser's 16 moves
        // from each history of its class (8, 4, 2, 1 candidates).
        assert_eq!(m.histories_per_length(), [1, 8, 128, 64, 32, 16, 16]);
    }
}

/// The round (1 to 3) in which each child first says `know`, for a mud assignment, with every
/// child's goal at the end.
fn muddy_rounds(mut m: KnowledgeMachine, assignment: [&str; 3]) -> ([Option<usize>; 3], Vec<u8>) {
    let smear = format!(
        "(smear {} {} {})",
        assignment[0], assignment[1], assignment[2]
    );
    let mut h = play(&mut m, &[&[&smear, "noop", "noop", "noop"]]);
    let mut first = [None; 3];
    for round in 1..=3 {
        let mut joint = vec![m.intern("noop").unwrap()];
        for child in 1..=3 {
            // The answers are forced: `know` is legal exactly when the child knows.
            let legal = m.legal_moves(&h, child).unwrap();
            assert_eq!(legal.len(), 1, "round {round}: {:?}", texts(&m, &legal));
            if texts(&m, &legal) == ["(say know)"] && first[child - 1].is_none() {
                first[child - 1] = Some(round);
            }
            joint.push(legal[0]);
        }
        h = m.next_state(&h, &joint).unwrap();
    }
    assert!(m.is_terminal(&h).unwrap());
    // The largest group of each length: after the first answers, only the histories the
    // children can still confuse with this one (one when one child was muddy).
    let muddy = assignment.iter().filter(|&&a| a == "muddy").count();
    let expected: &[usize] = if muddy == 1 {
        &[1, 7, 7, 1, 1]
    } else {
        &[1, 7, 7, 4, 1]
    };
    assert_eq!(m.histories_per_length(), expected, "{assignment:?}");
    (first, m.goals(&h).unwrap())
}

#[test]
fn muddy_children_know_in_the_round_the_puzzle_says() {
    // k muddy children: the muddy ones know in round k, the clean ones in round k + 1.
    let all_know = vec![100, 100, 100, 100];
    let cases = [
        (["muddy", "clean", "clean"], [1, 2, 2]),
        (["clean", "muddy", "clean"], [2, 1, 2]),
        (["muddy", "muddy", "clean"], [2, 2, 3]),
        (["clean", "muddy", "muddy"], [3, 2, 2]),
        (["muddy", "muddy", "muddy"], [3, 3, 3]),
    ];
    for (assignment, rounds) in cases {
        for m in machines(MUDDY_CHILDREN) {
            let (first, goals) = muddy_rounds(m, assignment);
            assert_eq!(first, rounds.map(Some), "{assignment:?}");
            assert_eq!(goals, all_know, "{assignment:?}");
        }
    }
}

#[test]
fn a_claim_is_legal_in_cups_once_the_seeker_knows() {
    for mut m in machines(CUPS) {
        let seeker = 1;
        let claims = |m: &mut KnowledgeMachine, h: &History| -> Vec<String> {
            let legal = m.legal_moves(h, seeker).unwrap();
            texts(m, &legal)
                .into_iter()
                .filter(|t| t.starts_with("(claim"))
                .collect()
        };
        let hidden: &[&str] = &["(hide 2)", "wait"];
        let h = play(&mut m, &[hidden]);
        assert!(claims(&mut m, &h).is_empty(), "three candidates");
        // One wrong cup lifted: two candidates, no claim.
        let h = play(&mut m, &[hidden, &["noop", "(lift 1)"]]);
        assert!(claims(&mut m, &h).is_empty(), "two candidates");
        // Two wrong cups: the coin is under 2, and only that claim is legal.
        let h = play(
            &mut m,
            &[hidden, &["noop", "(lift 1)"], &["noop", "(lift 3)"]],
        );
        assert_eq!(claims(&mut m, &h), ["(claim 2)"]);
        // The right cup at once.
        let h = play(&mut m, &[hidden, &["noop", "(lift 2)"]]);
        assert_eq!(claims(&mut m, &h), ["(claim 2)"]);
        let h = play(
            &mut m,
            &[hidden, &["noop", "(lift 2)"], &["noop", "(claim 2)"]],
        );
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 100]);
        // Three steps of lifts without a claim: the game's longest histories.
        let lifts: &[&[&str]] = &[
            hidden,
            &["noop", "(lift 1)"],
            &["noop", "(lift 1)"],
            &["noop", "(lift 1)"],
        ];
        let h = play(&mut m, lifts);
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 0]);
        assert_eq!(m.histories_per_length(), [1, 3, 9, 6, 6]);
    }
}

#[test]
fn russian_cards_are_won_by_the_sum_and_lost_by_a_card() {
    let deal: &[&str] = &["(deal 0 1 2 3 4 5 6)", "noop", "noop", "noop"];
    let bob = 2;
    // Alice announces her sum modulo 7 (0 + 1 + 2 = 3): bob learns her hand, so eve's card,
    // and names it; eve learns no card of theirs.
    for mut m in machines(RUSSIAN_CARDS) {
        let h = play(
            &mut m,
            &[deal, &["noop", "(announce_sum 3)", "noop", "noop"]],
        );
        let legal = m.legal_moves(&h, bob).unwrap();
        assert_eq!(texts(&m, &legal), ["(announce_eve 6)", "pass"]);
        let h = play(
            &mut m,
            &[
                deal,
                &["noop", "(announce_sum 3)", "noop", "noop"],
                &["noop", "noop", "(announce_eve 6)", "noop"],
            ],
        );
        assert!(m.is_terminal(&h).unwrap());
        assert_eq!(m.goals(&h).unwrap(), [100, 100, 100, 0]);
        // Alice shows card 0: eve knows that alice holds it, and bob cannot tell eve's card.
        let h = play(
            &mut m,
            &[deal, &["noop", "(announce_card 0)", "noop", "noop"]],
        );
        let legal = m.legal_moves(&h, bob).unwrap();
        assert_eq!(texts(&m, &legal), ["pass"]);
        let h = play(
            &mut m,
            &[
                deal,
                &["noop", "(announce_card 0)", "noop", "noop"],
                &["noop", "noop", "pass", "noop"],
            ],
        );
        assert_eq!(m.goals(&h).unwrap(), [100, 0, 0, 100]);
        assert_eq!(m.histories_per_length(), [1, 140, 560, 60]);
    }
}

/// A random player picking one of 60 numbers at each of three steps: 216,000 histories of
/// length 3.
fn many_histories() -> String {
    let numbers: String = (0..60).map(|n| format!("(number {n}) ")).collect();
    format!(
        "(role random) (role p) {numbers}
        (succ 0 1) (succ 1 2) (succ 2 3)
        (init (step 0))
        (<= (legal random (pick ?n)) (number ?n))
        (legal p noop)
        (<= (next (picked ?n)) (does random (pick ?n)))
        (<= (next (step ?t)) (true (step ?s)) (succ ?s ?t))
        (<= (last ?n) (true (picked ?n)))
        (<= terminal (true (step 3)))
        (<= (goal p 100) (knows p (last ?n)))
        (<= (goal p 0) (not (knows p (last 0))))
        (goal random 0)"
    )
}

#[test]
fn histories_beyond_the_budget_are_refused_naming_it() {
    assert_eq!(MAX_HISTORIES, 100_000);
    assert_eq!(KnowledgeLimits::default().max_histories, MAX_HISTORIES);
    let text = many_histories();
    let checked = gdl_check::check(&text);
    let limits = KnowledgeLimits {
        max_histories: 1_000,
    };
    let mut m = KnowledgeMachine::new(&checked, Limits::default(), limits).unwrap();
    let s0 = m.initial_state().unwrap();
    let pick = m.intern("(pick 7)").unwrap();
    let noop = m.intern("noop").unwrap();
    let h1 = m.next_state(&s0, &[pick, noop]).unwrap();
    assert_eq!(
        m.goals(&h1).unwrap(),
        [0, 0],
        "60 candidates: nothing known"
    );
    let h2 = m.next_state(&h1, &[pick, noop]).unwrap();
    let error = m.is_terminal(&h2).unwrap_err();
    let ReasonError::Budget(message) = &error else {
        panic!("{error:?}");
    };
    assert!(
        message.contains("more than 1000 histories of length 2"),
        "{message}"
    );
    assert!(
        message.contains("KnowledgeLimits::max_histories"),
        "{message}"
    );
    // Within a larger budget the same question is answered.
    let limits = KnowledgeLimits {
        max_histories: 4_000,
    };
    let mut m = KnowledgeMachine::new(&checked, Limits::default(), limits).unwrap();
    let s0 = m.initial_state().unwrap();
    let h1 = m.next_state(&s0, &[pick, noop]).unwrap();
    let h2 = m.next_state(&h1, &[pick, noop]).unwrap();
    assert!(!m.is_terminal(&h2).unwrap());
    // With the default budget: 3,600 histories of length 2, 216,000 of length 3, refused.
    let mut m = KnowledgeMachine::from_text(&text).unwrap();
    let s0 = m.initial_state().unwrap();
    let mut h = s0;
    for _ in 0..3 {
        h = m.next_state(&h, &[pick, noop]).unwrap();
    }
    let Err(ReasonError::Budget(message)) = m.goals(&h) else {
        panic!("216,000 histories within the budget");
    };
    assert!(
        message.contains("more than 100000 histories of length 3"),
        "{message}"
    );
    assert_eq!(m.histories_per_length(), [1, 60, 3600]);
}

#[test]
fn the_fast_network_refuses_knows_and_the_facade_reasons_it_on_histories() {
    let says_why = |message: &str| {
        assert!(message.contains("`knows`"), "{message}");
        assert!(message.contains("the fast engine"), "{message}");
    };
    match FastMachine::from_text(NUMBER_GUESSING) {
        Err(BuildError::Unsupported(reason)) => says_why(&reason),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("the fast engine built a network for GDL-III rules"),
    }
    let checked = gdl_check::check(NUMBER_GUESSING);
    match JoinMachine::new(&checked, JoinLimits::default()) {
        Err(BuildError::Unsupported(reason)) => says_why(&reason),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("the join tier built a machine for GDL-III rules"),
    }
    // The plain reference machine answers about states, not histories: it refuses too.
    let Err(diagnostics) = ReferenceMachine::from_text(NUMBER_GUESSING) else {
        panic!("a machine over states built for GDL-III rules");
    };
    assert_eq!(diagnostics[0].code, gdl_reason::gdl3::KNOWS_NOT_REASONED);
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let mut m = match Machine::build(&checked, choice, Limits::default()) {
            Ok(m) => m,
            Err(d) => panic!("{choice:?}: {d:#?}"),
        };
        assert!(matches!(m, Machine::Knowledge(..)), "{choice:?}");
        // The knowledge layer over the engine chosen: the fast engine compiles the rules
        // rewritten (`knows` read from the state).
        let (name, describe) = match choice {
            EngineChoice::Fast => ("fast", "fast engine, over histories (GDL-III)"),
            EngineChoice::Reference => ("reference", "reference engine, over histories (GDL-III)"),
        };
        assert_eq!(m.engine_name(), name);
        assert_eq!(m.describe_engine(), describe);
        assert_eq!(m.fallback(), None);
        // The lucky guess through the facade.
        let mut h = m.initial_state().unwrap();
        for joint in [
            ["(choose 5)", "noop"],
            ["noop", "(ask 5)"],
            ["noop", "(ask 7)"],
            ["noop", "(guess 5)"],
        ] {
            let joint: Vec<_> = joint.iter().map(|t| m.intern(t).unwrap()).collect();
            h = m.next_state(&h, &joint).unwrap();
        }
        assert_eq!(m.goals(&h).unwrap(), [100, 0]);
    }
}

/// A coin of 1 or 2 that `a` sees and `b` does not, with nested and common knowledge.
const COIN: &str = "(role random) (role a) (role b)
    (side 1) (side 2)
    (init start)
    (<= (legal random (pick ?s)) (true start) (side ?s))
    (<= (legal random noop) (not (true start)))
    (<= (legal a noop) (role a))
    (<= (legal b noop) (role b))
    (<= (next (hidden ?s)) (does random (pick ?s)))
    (<= (next (hidden ?s)) (true (hidden ?s)))
    (<= (sees a (shown ?s)) (does random (pick ?s)))
    (<= (coin ?s) (true (hidden ?s)))
    (<= a_knows_coin (knows a (coin ?s)))
    (<= b_knows_that (knows b a_knows_coin))
    (<= b_knows_a_knows_1 (knows b (knows a (coin 1))))
    (<= common_that (knows a_knows_coin))
    (<= common_1 (knows (coin 1)))
    (<= terminal (true (hidden ?s)))
    (<= (goal a 100) b_knows_that common_that)
    (<= (goal a 0) (not b_knows_that))
    (<= (goal a 0) (not common_that))
    (<= (goal b 100) b_knows_a_knows_1)
    (<= (goal b 50) (not b_knows_a_knows_1) common_1)
    (<= (goal b 0) (not b_knows_a_knows_1) (not common_1))
    (goal random 0)";

#[test]
fn nested_and_common_knowledge_are_reasoned_over_the_classes() {
    for mut m in machines(COIN) {
        let h = play(&mut m, &[&["(pick 1)", "noop", "noop"]]);
        let atoms = m.knows_atoms(&h).unwrap();
        let known = texts(&m, &atoms);
        // a saw the coin; b cannot tell 1 from 2, yet knows that a knows it, and that is common
        // knowledge; that the coin is 1 is neither known to b nor common.
        for atom in [
            "(knows a (coin 1))",
            "(knows b a_knows_coin)",
            "(knows a_knows_coin)",
        ] {
            assert!(known.contains(&atom.to_string()), "{atom}: {known:?}");
        }
        for atom in [
            "(knows b (coin 1))",
            "(knows b (knows a (coin 1)))",
            "(knows (coin 1))",
        ] {
            assert!(!known.contains(&atom.to_string()), "{atom}: {known:?}");
        }
        assert_eq!(m.class_size(&h, 1).unwrap(), 1);
        assert_eq!(m.class_size(&h, 2).unwrap(), 2);
        assert_eq!(m.goals(&h).unwrap(), [0, 100, 0]);
    }
}

/// Every history of the game by brute force through the machine's own answers (legal moves,
/// next states, percepts), each with every role's observations (own moves and percepts).
fn every_history(m: &mut KnowledgeMachine) -> Vec<(History, Vec<Vec<String>>)> {
    let roles = m.roles().len();
    let mut out = Vec::new();
    let s0 = m.initial_state().unwrap();
    let mut stack = vec![(s0, vec![Vec::new(); roles])];
    while let Some((h, seen)) = stack.pop() {
        if !m.is_terminal(&h).unwrap() {
            for joint in m.joint_moves(&h).unwrap() {
                let mut next_seen = seen.clone();
                for (r, observed) in next_seen.iter_mut().enumerate() {
                    let percepts = m.percepts(&h, &joint, r).unwrap();
                    let own = m.terms().text(m.symbols(), joint[r]);
                    observed.push(format!("{own} {:?}", texts(m, &percepts)));
                }
                stack.push((m.next_state(&h, &joint).unwrap(), next_seen));
            }
        }
        out.push((h, seen));
    }
    out
}

/// For each history and knower, the machine's `(knows R (rel …))` atoms equal the
/// propositions that hold (`holds` of the fluents' texts) after every history of the same
/// length with the same observations of R: knowledge by its definition, over the whole tree.
/// Returns the number of histories, and of (history, knower) pairs where something is known.
fn agrees_with_brute_force(
    text: &str,
    knowers: &[usize],
    rel: &str,
    holds: impl Fn(&[String]) -> Vec<String>,
) -> (usize, usize) {
    let mut counts = Vec::new();
    for mut m in machines(text) {
        counts.push(brute_force_on(&mut m, knowers, rel, &holds));
    }
    assert_eq!(counts[0], counts[1], "the two engines");
    counts[0]
}

fn brute_force_on(
    m: &mut KnowledgeMachine,
    knowers: &[usize],
    rel: &str,
    holds: &impl Fn(&[String]) -> Vec<String>,
) -> (usize, usize) {
    let all = every_history(m);
    let mut knowing = 0;
    for (h, seen) in &all {
        let atoms = m.knows_atoms(h).unwrap();
        let known = texts(m, &atoms);
        for &r in knowers {
            let role = m.terms().text(m.symbols(), m.roles()[r]);
            let mut expected: Option<Vec<String>> = None;
            for (other, other_seen) in &all {
                if other.moves().len() == h.moves().len() && other_seen[r] == seen[r] {
                    let here = holds(&texts(m, &m.fluents(other)));
                    expected = Some(match expected {
                        None => here,
                        Some(e) => e.into_iter().filter(|p| here.contains(p)).collect(),
                    });
                }
            }
            let mut expected: Vec<String> = expected
                .unwrap()
                .iter()
                .map(|p| format!("(knows {role} {p})"))
                .collect();
            expected.sort();
            let prefix = format!("(knows {role} ({rel} ");
            let got: Vec<String> = known
                .iter()
                .filter(|a| a.starts_with(&prefix))
                .cloned()
                .collect();
            assert_eq!(got, expected, "{role} after {:?}", h.moves());
            knowing += usize::from(!got.is_empty());
        }
    }
    (all.len(), knowing)
}

#[test]
fn knowledge_within_groups_is_knowledge_over_every_history() {
    // Cups: the seeker knows `(coin_under c)` exactly when every history it cannot tell apart
    // has the coin there.
    let cups = agrees_with_brute_force(CUPS, &[1], "coin_under", |fluents| {
        fluents
            .iter()
            .filter_map(|f| f.strip_prefix("(coin "))
            .map(|c| format!("(coin_under {c}"))
            .collect()
    });
    assert_eq!(cups.0, 1 + 3 + 9 + 30 + 102);
    assert!(cups.1 > 0);
    // Muddy children: each child's knowledge of the foreheads.
    let muddy = agrees_with_brute_force(MUDDY_CHILDREN, &[1, 2, 3], "forehead", |fluents| {
        fluents
            .iter()
            .filter_map(|f| f.strip_prefix("(mud "))
            .map(|rest| format!("(forehead {rest}"))
            .collect()
    });
    assert_eq!(muddy.0, 1 + 4 * 7);
    assert!(muddy.1 > 0);
}
