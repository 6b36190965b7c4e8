//! The GDL-II restrictions: `sees` only in rule heads (E016), what `sees` may depend on, the
//! role named by `sees`, `does`, `legal`, `goal` and `input` (W016, `random` a role only when
//! declared), and the GDL checks that cover `sees` rules as any other (E001 safety, E002
//! stratification, E008 through `sees`, E010 arity). Each diagnostic is asserted with its exact
//! span.

use gdl_syntax::Span;

/// A small GDL-II game: random hides a prize behind one of two doors, the player sees only
/// whether its guess was right. Correct: the checker reports nothing.
const GAME: &str = "(role player) (role random)
(door a) (door b)
(init (step 0))
(<= (legal random (hide ?d)) (door ?d) (true (step 0)))
(<= (legal player noop) (true (step 0)))
(<= (legal player (guess ?d)) (door ?d) (true (step 1)))
(<= (legal random noop) (true (step 1)))
(<= (next (prize ?d)) (does random (hide ?d)))
(<= (next (prize ?d)) (true (prize ?d)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (next won) (does player (guess ?d)) (true (prize ?d)))
(<= (sees player right) (does player (guess ?d)) (true (prize ?d)))
(<= (sees ?r (step ?n)) (role ?r) (true (step ?n)) (not (true won)))
(<= terminal (true (step 2)))
(<= (goal player 100) (true won))
(<= (goal player 0) (not (true won)))
(goal random 0)
";

/// The diagnostics of `text` as (code, the text they point at), in order.
fn found(text: &str) -> Vec<(&'static str, &str)> {
    gdl_check::check(text)
        .diagnostics
        .iter()
        .map(|d| (d.code, &text[d.span.start as usize..d.span.end as usize]))
        .collect()
}

/// The span of the `nth` occurrence (from 0) of `what` in `text`.
fn span_of(text: &str, what: &str, nth: usize) -> Span {
    let start = text.match_indices(what).nth(nth).expect("in the text").0;
    Span::new(start as u32, (start + what.len()) as u32)
}

fn with(extra: &str) -> String {
    format!("{GAME}{extra}\n")
}

#[test]
fn a_correct_gdl2_game_has_no_diagnostic() {
    assert_eq!(found(GAME), vec![]);
}

#[test]
fn sees_in_a_body_is_e016_at_the_atom() {
    let text = with("(<= (next (saw)) (sees player right))");
    let checked = gdl_check::check(&text);
    let e016: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code == "E016")
        .collect();
    assert_eq!(e016.len(), 1, "{:#?}", checked.diagnostics);
    assert_eq!(e016[0].span, span_of(&text, "(sees player right)", 1));
    // An error, but the engines still read `sees` there as a relation of the state and the joint
    // move (two corpus Mastermind games rely on it), so reasoning is not refused.
    assert!(checked.has_errors());
    assert!(!gdl_check::blocks_reasoning("E016"));
    assert!(checked.blocking_errors().next().is_none());
}

#[test]
fn sees_under_not_or_and_or_is_e016_each_time() {
    let text = with(
        "(<= (next (saw)) (true (step 1)) (or (not (sees player right)) (and (sees random right))))",
    );
    let e016: Vec<_> = found(&text)
        .into_iter()
        .filter(|(c, _)| *c == "E016")
        .collect();
    assert_eq!(
        e016,
        vec![
            ("E016", "(sees player right)"),
            ("E016", "(sees random right)")
        ]
    );
}

#[test]
fn sees_in_heads_may_depend_on_true_and_does() {
    // Like `next`: the percepts of a joint move in the current state. No E008, no E016.
    let codes: Vec<_> = found(GAME).into_iter().map(|(c, _)| c).collect();
    assert!(!codes.contains(&"E008") && !codes.contains(&"E016"));
}

#[test]
fn sees_with_another_arity_is_e010_and_not_e016() {
    // A three-argument `sees` is an ordinary relation (and E010), so in a body it is not E016.
    let text = with(
        "(<= (sees player right now) (true (step 1)))\n(<= (next (saw)) (sees player right now))",
    );
    let got = found(&text);
    assert_eq!(
        got.iter()
            .filter(|(c, _)| c.starts_with('E'))
            .collect::<Vec<_>>(),
        vec![&("E010", "(sees player right now)")]
    );
}

#[test]
fn legal_through_sees_is_e008_as_well_as_e016() {
    // `legal` may not depend on `does`; through `sees`, whose rules use `does`, it does.
    let text = with("(<= (legal player wait) (sees player right))");
    let got = found(&text);
    assert!(got.contains(&("E016", "(sees player right)")), "{got:?}");
    assert!(
        got.iter().any(|(c, _)| *c == "E008"),
        "no E008 through sees: {got:?}"
    );
}

#[test]
fn init_depending_on_sees_is_e005() {
    // Thielscher's GDL-II restrictions: `init` does not depend on `sees` (nor on `true`, `does`,
    // `next`, `legal`, `goal`, `terminal`).
    let text = with("(<= (init (step 9)) (sees player right))");
    let got = found(&text);
    assert!(got.contains(&("E016", "(sees player right)")), "{got:?}");
    assert!(got.contains(&("E005", "(sees player right)")), "{got:?}");
}

#[test]
fn an_unsafe_sees_rule_is_e001() {
    let text = with("(<= (sees ?r (prize ?d)) (true (step 2)))");
    let got = found(&text);
    let e001: Vec<_> = got.iter().filter(|(c, _)| *c == "E001").collect();
    assert_eq!(e001, vec![&("E001", "?r"), &("E001", "?d")], "{got:?}");
}

#[test]
fn a_sees_rule_in_a_negative_cycle_is_e002() {
    // Stratification (Definition 8) counts `sees` rules as any other: `hidden` depends on its
    // own negation through a `sees` rule body.
    let text = with(
        "(<= (sees player hint) (true (step 1)) (not (hidden)))\n(<= (hidden) (true (step 1)) (not (shown)))\n(<= (shown) (hidden))",
    );
    let got = found(&text);
    assert!(got.iter().any(|(c, _)| *c == "E002"), "{got:?}");
    // `sees` under a `not` in its own rule: E016, and the cycle through the negation is E002.
    let text = with("(<= (sees player hint) (true (step 1)) (not (sees player hint)))");
    let got = found(&text);
    assert!(got.contains(&("E016", "(sees player hint)")), "{got:?}");
    assert!(got.contains(&("E002", "(sees player hint)")), "{got:?}");
    // A stratified negation in a `sees` rule (the game's `(not (true won))`) is fine.
    assert!(!found(GAME).iter().any(|(c, _)| *c == "E002"));
}

#[test]
fn percepts_for_a_name_that_is_not_a_role_are_w016() {
    let text = with("(<= (sees plyer right) (does player (guess a)))");
    let checked = gdl_check::check(&text);
    let w016: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code == "W016")
        .collect();
    assert_eq!(w016.len(), 1, "{:#?}", checked.diagnostics);
    assert_eq!(w016[0].span, span_of(&text, "(sees plyer right)", 0));
    assert_eq!(w016[0].message, "`plyer` is not a role");
    assert!(!checked.has_errors());
}

#[test]
fn random_without_its_role_fact_is_w016_everywhere_it_is_named() {
    let text = GAME.replace("(role random)", "");
    let got: Vec<_> = found(&text)
        .into_iter()
        .filter(|(c, _)| *c == "W016")
        .collect();
    assert_eq!(
        got,
        vec![
            ("W016", "(legal random (hide ?d))"),
            ("W016", "(legal random noop)"),
            ("W016", "(does random (hide ?d))"),
            ("W016", "(goal random 0)"),
        ]
    );
    let checked = gdl_check::check(&text);
    let help = checked.diagnostics[0].help.as_deref().unwrap_or_default();
    assert!(help.contains("(role random)"), "{help}");
}

#[test]
fn variables_and_declared_roles_in_the_role_place_are_not_w016() {
    // `(sees ?r …)` with `(role ?r)`, `(does random …)` with `(role random)`: nothing to say.
    assert!(!found(GAME).iter().any(|(c, _)| *c == "W016"));
    // Names are read case-insensitively: `RANDOM` is the role `random`.
    let text = GAME.replace("(goal random 0)", "(goal RANDOM 0)");
    assert!(!found(&text).iter().any(|(c, _)| *c == "W016"));
}

#[test]
fn no_w016_when_roles_are_not_ground_facts() {
    // Roles from a rule are E004; guessing which names are roles would only add noise.
    let text = GAME.replace("(role random)", "(<= (role random) (door a))");
    let got = found(&text);
    assert!(got.iter().any(|(c, _)| *c == "E004"));
    assert!(!got.iter().any(|(c, _)| *c == "W016"), "{got:?}");
}
