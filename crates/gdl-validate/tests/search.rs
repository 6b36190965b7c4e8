//! Validation when the states do not all fit: what the playouts find beyond the exploration,
//! what stays undecided, and the budget.

use std::time::{Duration, Instant};

use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, Machine};
use gdl_validate::{Options, Property, Report, Verdict, codes};

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn machine(text: &str) -> Machine {
    Machine::build(
        &gdl_check::check(text),
        EngineChoice::Fast,
        Limits::default(),
    )
    .unwrap_or_else(|d| panic!("{d:#?}"))
}

fn validate(text: &str, max_states: usize, playouts: u64) -> Report {
    gdl_validate::validate(
        &mut machine(text),
        &Options {
            time: Duration::from_secs(600),
            max_states,
            playouts: Some(playouts),
            ..Options::default()
        },
    )
}

/// A one-player counter from 0 to `end`, with `extra` rules.
fn counter(end: u32, extra: &str) -> String {
    let mut text = String::from("(role robot)\n(init (count 0))\n");
    for i in 0..end {
        text.push_str(&format!("(succ {i} {})\n", i + 1));
    }
    text.push_str(&format!(
        "(<= (next (count ?m)) (does robot go) (true (count ?n)) (succ ?n ?m))
         (<= terminal (true (count {end})))
         (<= (goal robot 100) (true (count {end})))
         {extra}"
    ));
    text
}

#[test]
fn a_violation_beyond_the_exploration_is_found_by_a_playout() {
    let text = counter(
        300,
        "(<= (legal robot go) (true (count ?n)) (distinct ?n 250))",
    );
    let report = validate(&text, 50, 3);
    assert!(!report.exhaustive);
    assert_eq!(report.states, 50);
    assert_eq!(report.complete_depth, Some(49));
    assert_eq!(report.verdict(Property::Playable), &Verdict::Refuted);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == codes::NO_LEGAL_MOVE)
        .expect("the stuck state");
    assert_eq!(f.moves.as_ref().map(Vec::len), Some(250));
    let Verdict::Undecided(why) = report.verdict(Property::Terminates) else {
        panic!("{:?}", report.verdict(Property::Terminates));
    };
    assert_eq!(
        why,
        "no violation in 50 explored states (every state within 49 moves of the start) \
         nor in 3 random playouts of up to 250 moves"
    );
}

#[test]
fn a_cycle_beyond_the_exploration_is_found_by_a_playout() {
    // At 100 the robot can only go back and forth between 100 and 101.
    let text = counter(
        102,
        "(<= (legal robot go) (true (count ?n)) (distinct ?n 100) (distinct ?n 101))
         (<= (legal robot back) (true (count 101)))
         (<= (legal robot forth) (true (count 100)))
         (<= (next (count 101)) (does robot forth))
         (<= (next (count 100)) (does robot back))",
    );
    let report = validate(&text, 10, 1);
    assert_eq!(report.verdict(Property::Terminates), &Verdict::Refuted);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == codes::CYCLE)
        .expect("the cycle");
    assert_eq!(f.moves.as_ref().map(Vec::len), Some(102));
    assert_eq!(f.cycle_from, Some(100));
    // With room for every state, the exploration finds the same cycle.
    let report = validate(&text, 1000, 0);
    assert!(report.exhaustive);
    let f = report.findings.iter().find(|f| f.code == codes::CYCLE);
    assert_eq!(f.and_then(|f| f.cycle_from), Some(100));
}

#[test]
fn what_is_not_found_is_undecided_never_proved() {
    let report = validate(TICTACTOE, 100, 20);
    assert!(!report.exhaustive);
    for p in [Property::Terminates, Property::Playable, Property::Goals] {
        assert!(
            matches!(report.verdict(p), Verdict::Undecided(why) if why.starts_with("no violation in 100 explored states")),
            "{p:?}: {:?}",
            report.verdict(p)
        );
    }
    assert!(!report.has_errors());
    assert!(!report.well_formed());
}

#[test]
fn a_proof_needs_every_reachable_state() {
    let all = validate(TICTACTOE, 5478, 0);
    assert!(all.exhaustive && all.well_formed());
    assert_eq!((all.states, all.terminal_states, all.depth), (5478, 958, 9));
    let one_short = validate(TICTACTOE, 5477, 0);
    assert!(!one_short.exhaustive && !one_short.well_formed());
    assert_eq!(one_short.states, 5477);
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let a = validate(TICTACTOE, 200, 50);
    let b = validate(TICTACTOE, 200, 50);
    assert_eq!(a.findings, b.findings);
    assert_eq!(a.verdicts, b.verdicts);
    assert_eq!(
        (a.playouts, a.longest_playout, a.states),
        (b.playouts, b.longest_playout, b.states)
    );
}

#[test]
fn the_time_budget_ends_the_search() {
    // Four counters from 0 to 30, one raised a move: 31^4 states, more than a fraction of a
    // second explores.
    let mut text = String::from("(role robot)\n");
    for i in 0..30 {
        text.push_str(&format!("(succ {i} {})\n", i + 1));
    }
    for c in ["a", "b", "c", "d"] {
        text.push_str(&format!(
            "(counter {c}) (init (at {c} 0))
             (<= (next (at {c} ?m)) (does robot (raise {c})) (true (at {c} ?n)) (succ ?n ?m))
             (<= (next (at {c} ?n)) (true (at {c} ?n)) (not (does robot (raise {c}))))\n"
        ));
    }
    text.push_str(
        "(<= (legal robot (raise ?c)) (counter ?c) (true (at ?c ?n)) (succ ?n ?m))
         (<= open (true (at ?c ?n)) (succ ?n ?m))
         (<= terminal (not open))
         (goal robot 100)",
    );
    let started = Instant::now();
    let report = gdl_validate::validate(
        &mut machine(&text),
        &Options {
            time: Duration::from_millis(300),
            ..Options::default()
        },
    );
    // Generous: the machine may be loaded; the point is that the search stops.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(!report.exhaustive);
    assert!(report.states > 1);
    assert!(matches!(
        report.verdict(Property::Terminates),
        Verdict::Undecided(_)
    ));
}
