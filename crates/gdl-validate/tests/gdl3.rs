//! Validation of the GDL-III games of `games/`: the search over classes of bisimilar
//! histories against the search over every history, and what it proves of Russian Cards.

use std::time::Duration;

use gdl_reason::knowledge::History;
use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, KnowledgeMachine, Machine, StateMachine, TermId};
use gdl_validate::{Options, Property, Report, Verdict, codes};

const CUPS: &str = include_str!("../../../games/cups.kif");
const MUDDY: &str = include_str!("../../../games/muddy_children.kif");
const GUESSING: &str = include_str!("../../../games/number_guessing.kif");
const CARDS: &str = include_str!("../../../games/russian_cards.kif");

fn options() -> Options {
    Options {
        time: Duration::from_secs(600),
        playouts: Some(0),
        ..Options::default()
    }
}

/// Validates on `Machine` as `ggp validate` builds it: over classes of histories.
fn by_classes(text: &str, options: &Options) -> Report {
    let mut machine = Machine::build(
        &gdl_check::check(text),
        EngineChoice::Fast,
        Limits::default(),
    )
    .unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(matches!(machine, Machine::Knowledge(..)));
    gdl_validate::validate(&mut machine, options)
}

/// Validates on the knowledge machine itself: every history a node.
fn by_histories(text: &str) -> Report {
    let mut machine = KnowledgeMachine::from_text(text).unwrap_or_else(|d| panic!("{d:#?}"));
    gdl_validate::validate(&mut machine, &options())
}

fn proved_well_formed(report: &Report) {
    assert!(report.exhaustive);
    assert!(report.well_formed(), "{:#?}", report.verdicts);
    for p in [
        Property::Terminates,
        Property::Playable,
        Property::Goals,
        Property::WeaklyWinnable,
    ] {
        assert_eq!(*report.verdict(p), Verdict::Proved, "{}", p.name());
    }
}

#[test]
fn classes_decide_what_every_history_decides() {
    // (game, classes, histories, terminal classes, terminal histories): the histories are those
    // the search over every history finds.
    for (text, classes, histories, terminal, terminal_histories) in [
        (CUPS, 37, 145, 15, 105),
        (MUDDY, 29, 29, 7, 7),
        (CARDS, 1_401, 1_401, 700, 700),
    ] {
        let quotient = by_classes(text, &options());
        let every = by_histories(text);
        proved_well_formed(&quotient);
        proved_well_formed(&every);
        assert_eq!(quotient.verdicts, every.verdicts);
        assert_eq!(quotient.depth, every.depth);
        assert_eq!(
            (
                quotient.states,
                quotient.histories,
                quotient.terminal_states
            ),
            (classes, Some(histories), terminal)
        );
        assert_eq!(
            (every.states, every.histories, every.terminal_states),
            (histories, None, terminal_histories)
        );
        let codes = |r: &Report| r.findings.iter().map(|f| f.code).collect::<Vec<_>>();
        assert_eq!(codes(&quotient), codes(&every));
    }
}

#[test]
fn number_guessing_is_proved_on_four_thousand_classes() {
    let report = by_classes(GUESSING, &options());
    proved_well_formed(&report);
    // Every history: 1 + 8 + 8·16 + 64·16 + 512·16 + 4,096·16 + 32,768·16 (each length's
    // questions go on, its guesses end the game; the sixth step ends every game).
    let every: u64 = 1 + 8 + 128 + 1_024 + 8_192 + 65_536 + 524_288;
    assert_eq!(report.histories, Some(every));
    // A class is the number, the numbers the answers leave (an interval holding it) and the
    // guess, if any: far fewer.
    assert_eq!(report.states, 4_009);
    assert_eq!(report.depth, 6);
}

#[test]
fn too_many_histories_of_one_length_is_a_budget_warning() {
    let report = by_classes(
        GUESSING,
        &Options {
            max_states: 100,
            ..options()
        },
    );
    let budget = report
        .findings
        .iter()
        .find(|f| f.code == codes::REASONER_BUDGET)
        .unwrap_or_else(|| panic!("{:#?}", report.findings));
    assert!(
        budget
            .message
            .contains("more than 100 histories of length 2 (the states kept, --max-states)"),
        "{}",
        budget.message
    );
    assert!(!report.exhaustive);
    assert!(matches!(
        report.verdict(Property::Terminates),
        Verdict::Undecided(_)
    ));
}

#[test]
fn russian_cards_is_winnable_for_alice_and_bob_and_for_eve() {
    // Weak winnability: some line gives each role 100. For alice and bob that is a deal and an
    // announcement after which each knows the other's hand and eve knows no card of theirs;
    // for eve, a line where they fail.
    let report = by_classes(CARDS, &options());
    proved_well_formed(&report);
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.code != codes::NEVER_WINS && f.code != codes::CANNOT_EVALUATE)
    );
}

/// Plays the joint moves (text, one per role) on the knowledge machine; the final history.
fn play(m: &mut KnowledgeMachine, joints: &[[&str; 4]]) -> History {
    let mut h = m.initial_state().unwrap();
    for joint in joints {
        let joint: Vec<TermId> = joint.iter().map(|t| m.intern(t).unwrap()).collect();
        h = m.next_state(&h, &joint).unwrap();
    }
    h
}

fn goals(m: &mut KnowledgeMachine, h: &History) -> [u8; 3] {
    [1, 2, 3].map(|role| m.goal(h, role).unwrap())
}

#[test]
fn the_sum_announcement_wins_on_every_deal_and_no_card_announcement_does() {
    // What winnability does not say, by enumeration: alice's strategy "announce the sum of my
    // cards modulo 7", with bob naming eve's card, wins on each of the 140 deals; announcing a
    // card loses on every deal whatever bob does.
    let mut m = KnowledgeMachine::from_text(CARDS).unwrap();
    let start = m.initial_state().unwrap();
    let deals = m.legal_moves(&start, 0).unwrap();
    assert_eq!(deals.len(), 140);
    let (mut sum_wins, mut card_lines) = (0, 0);
    for deal in deals {
        let text = m.terms().text(m.symbols(), deal);
        let cards: Vec<u32> = text
            .trim_matches(|c| c == '(' || c == ')')
            .split(' ')
            .skip(1)
            .map(|c| c.parse().unwrap())
            .collect();
        let sum = (cards[0] + cards[1] + cards[2]) % 7;
        let dealt = [text.as_str(), "noop", "noop", "noop"];
        let announce = format!("(announce_sum {sum})");
        let eve = format!("(announce_eve {})", cards[6]);
        let h = play(
            &mut m,
            &[
                dealt,
                ["noop", &announce, "noop", "noop"],
                ["noop", "noop", &eve, "noop"],
            ],
        );
        assert_eq!(goals(&mut m, &h), [100, 100, 0], "{text}");
        sum_wins += 1;
        for card in &cards[..3] {
            let announce = format!("(announce_card {card})");
            let after = play(&mut m, &[dealt, ["noop", &announce, "noop", "noop"]]);
            for reply in m.legal_moves(&after, 2).unwrap() {
                let reply = m.terms().text(m.symbols(), reply);
                let h = play(
                    &mut m,
                    &[
                        dealt,
                        ["noop", &announce, "noop", "noop"],
                        ["noop", "noop", &reply, "noop"],
                    ],
                );
                assert_eq!(goals(&mut m, &h), [0, 0, 100], "{text} {announce} {reply}");
                card_lines += 1;
            }
        }
    }
    assert_eq!(sum_wins, 140);
    assert!(card_lines >= 140 * 3);
}
