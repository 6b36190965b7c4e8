//! Until GDL-III is reasoned, every engine refuses rules with `knows`, naming the keyword,
//! rather than reading it as a relation nothing defines (always false). The same game without
//! its `knows` literal builds in each, so the refusal is the keyword's.

use gdl_reason::fast::BuildError;
use gdl_reason::fast::joins::{JoinLimits, JoinMachine};
use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, FastMachine, Machine, ReferenceMachine};

/// Number guessing reduced to its core: the goal needs the guesser to know the number.
const GAME: &str = "(role random) (role guesser)
(number 1) (number 2)
(init (step 0))
(<= (legal random (choose ?n)) (true (step 0)) (number ?n))
(<= (legal random noop) (true (step 1)))
(<= (legal guesser noop) (true (step 0)))
(<= (legal guesser (guess ?n)) (true (step 1)) (number ?n))
(<= (next (chosen ?n)) (does random (choose ?n)))
(<= (next (chosen ?n)) (true (chosen ?n)))
(<= (next (guessed ?n)) (does guesser (guess ?n)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (secret ?n) (true (chosen ?n)))
(<= won (true (guessed ?n)) (knows guesser (secret ?n)))
(<= terminal (true (step 2)))
(<= (goal guesser 100) won)
(<= (goal guesser 0) (not won))
(goal random 100)
";

/// The game with its knowledge goal replaced by a GDL-II one (a right guess wins).
fn without_knows() -> String {
    GAME.replace("(knows guesser (secret ?n))", "(secret ?n)")
}

fn says_why(message: &str) {
    assert!(message.contains("`knows`"), "{message}");
    assert!(
        message.contains("GDL-III knowledge is not reasoned yet"),
        "{message}"
    );
}

#[test]
fn the_reference_engine_refuses_knows() {
    let Err(diagnostics) = ReferenceMachine::from_text(GAME) else {
        panic!("the reference engine built a machine for GDL-III rules");
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert_eq!(d.code, gdl_reason::gdl3::KNOWS_NOT_REASONED);
    assert_eq!(
        &GAME[d.span.start as usize..d.span.end as usize],
        "(knows guesser (secret ?n))"
    );
    says_why(&d.message);
    assert!(ReferenceMachine::from_text(&without_knows()).is_ok());
}

#[test]
fn the_fast_engine_refuses_knows() {
    match FastMachine::from_text(GAME) {
        Err(BuildError::Unsupported(reason)) => says_why(&reason),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("the fast engine built a network for GDL-III rules"),
    }
    let checked = gdl_check::check(GAME);
    match JoinMachine::new(&checked, JoinLimits::default()) {
        Err(BuildError::Unsupported(reason)) => says_why(&reason),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("the join tier built a machine for GDL-III rules"),
    }
    assert!(FastMachine::from_text(&without_knows()).is_ok());
    let plain = without_knows();
    assert!(JoinMachine::new(&gdl_check::check(&plain), JoinLimits::default()).is_ok());
}

#[test]
fn a_machine_of_either_choice_refuses_with_the_reference_engines_diagnostic() {
    let checked = gdl_check::check(GAME);
    for choice in [EngineChoice::Fast, EngineChoice::Reference] {
        let Err(diagnostics) = Machine::build(&checked, choice, Limits::default()) else {
            panic!("{choice:?} built a machine for GDL-III rules");
        };
        assert_eq!(diagnostics[0].code, gdl_reason::gdl3::KNOWS_NOT_REASONED);
        says_why(&diagnostics[0].message);
    }
}
