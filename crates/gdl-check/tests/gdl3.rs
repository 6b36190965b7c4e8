//! GDL-III's keyword `knows`: its restrictions (E017 form, E018 only in bodies, E019 no
//! recursion through it, E020 no knowledge of the moves being made, E005 `init` not depending
//! on it), the warnings that apply to it (W016 its role, W008 its proposition, E001 safety of a
//! negated `knows`), the warnings a valid use must not get (W001, W002, W008, W009, W015), and
//! the GDL-III games of `games/`, which the checker accepts without a diagnostic. Each diagnostic
//! is asserted with the text it points at.

use std::path::Path;

/// A small GDL-III game: random hides a prize behind one of two doors, the player opens one
/// and wins only if it then knows where the prize is. Correct: the checker reports nothing.
const GAME: &str = "(role player) (role random)
(door a) (door b)
(init (step 0))
(<= (legal random (hide ?d)) (door ?d) (true (step 0)))
(<= (legal player noop) (true (step 0)))
(<= (legal player (open ?d)) (door ?d) (true (step 1)))
(<= (legal random noop) (true (step 1)))
(<= (next (prize ?d)) (does random (hide ?d)))
(<= (next (prize ?d)) (true (prize ?d)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (sees player found) (does player (open ?d)) (true (prize ?d)))
(<= (prize_at ?d) (true (prize ?d)))
(<= sure (knows player (prize_at ?_d)))
(<= terminal (true (step 2)))
(<= (goal player 100) sure)
(<= (goal player 0) (not sure))
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

/// The diagnostics of the game with `rules` added.
fn with(rules: &str) -> Vec<(&'static str, String)> {
    let text = format!("{GAME}{rules}\n");
    found(&text)
        .into_iter()
        .map(|(code, at)| (code, at.to_string()))
        .collect()
}

fn one(code: &'static str, at: &str) -> Vec<(&'static str, String)> {
    vec![(code, at.to_string())]
}

#[test]
fn a_valid_gdl3_game_gets_no_diagnostic() {
    assert_eq!(found(GAME), vec![]);
}

#[test]
fn both_forms_nested_knowledge_and_knowing_true_are_accepted() {
    let rules = "(<= (next (step 2)) (knows (prize_at a)))
(<= (next (step 2)) (knows random (knows player (prize_at ?d))) (door ?d))
(<= (next (step 2)) (knows ?r (true (prize a))) (role ?r))
(<= (next (step 2)) (not (knows player (prize_at ?d))) (door ?d))";
    assert_eq!(with(rules), vec![]);
}

#[test]
fn nested_knowledge_is_read_through_to_what_is_finally_known() {
    // The only `knows/2` is inside `knows/1`: no W008 for it, and `only_known` is used.
    let rules = "(<= (only_known ?d) (true (prize ?d)))
(<= (next (step 2)) (knows (knows player (only_known a))))";
    assert_eq!(with(rules), vec![]);
    let inner_not_a_role = "(<= (next (step 2)) (knows player (knows nobody (prize_at a))))";
    assert_eq!(
        with(inner_not_a_role),
        one("W016", "(knows player (knows nobody (prize_at a)))")
    );
    let inner_variable = "(<= (next (step 2)) (door ?p) (knows (knows player ?p)))";
    assert_eq!(
        with(inner_variable),
        one("E017", "(knows (knows player ?p))")
    );
    let inner_recursion = "(<= (aware ?d) (door ?d) (knows player (knows random (aware ?d))))
(<= (next (step 2)) (aware a))";
    assert_eq!(
        with(inner_recursion),
        one("E019", "(knows player (knows random (aware ?d)))")
    );
}

#[test]
fn the_proposition_must_be_an_atom() {
    let variable = "(<= (next (step 2)) (door ?p) (knows player ?p))";
    assert_eq!(with(variable), one("E017", "(knows player ?p)"));
    let number = "(<= (next (step 2)) (knows player 7))";
    assert_eq!(with(number), one("E017", "(knows player 7)"));
    let negation = "(<= (next (step 2)) (knows player (not (prize_at a))))";
    assert_eq!(
        with(negation),
        one("E017", "(knows player (not (prize_at a)))")
    );
    let compound_role = "(<= (next (step 2)) (knows (team player) (prize_at a)))";
    assert_eq!(
        with(compound_role),
        one("E017", "(knows (team player) (prize_at a))")
    );
    let three = "(<= (next (step 2)) (knows player (prize_at a) (prize_at b)))";
    assert_eq!(
        with(three),
        one("E017", "(knows player (prize_at a) (prize_at b))")
    );
}

#[test]
fn knows_is_not_defined_by_the_game() {
    assert_eq!(
        with("(knows player (prize_at a))"),
        one("E018", "(knows player (prize_at a))")
    );
    assert_eq!(
        with("(<= (knows player (prize_at ?d)) (door ?d))"),
        one("E018", "(knows player (prize_at ?d))")
    );
}

#[test]
fn no_recursion_through_knows() {
    let direct = "(<= (known ?d) (door ?d) (knows player (known ?d)))
(<= (next (step 2)) (known a))";
    assert_eq!(with(direct), one("E019", "(knows player (known ?d))"));
    let through_another = "(<= (seen ?d) (prize_at ?d) (aware ?d))
(<= (aware ?d) (door ?d) (not (knows player (seen ?d))))
(<= (next (step 2)) (aware a))";
    assert_eq!(
        with(through_another),
        one("E019", "(knows player (seen ?d))")
    );
}

#[test]
fn no_knowledge_of_the_moves_being_made() {
    let does = "(<= (next (step 2)) (knows player (does random (hide a))))";
    assert_eq!(
        with(does),
        one("E020", "(knows player (does random (hide a)))")
    );
    let next = "(<= (next (step 2)) (knows player (next (prize a))))";
    assert_eq!(with(next), one("E020", "(knows player (next (prize a)))"));
    let derived = "(<= (hiding ?d) (does random (hide ?d)))
(<= (next (step 2)) (knows (hiding a)))";
    assert_eq!(with(derived), one("E020", "(knows (hiding a))"));
    // Knowledge in a `legal` rule is of the history, not of the moves: no E008.
    let legal = "(<= (legal player (claim ?d)) (knows player (prize_at ?d)))";
    assert_eq!(with(legal), vec![]);
}

#[test]
fn init_does_not_depend_on_knowledge() {
    let rules = "(<= (init (prize a)) (knows player (prize_at b)))";
    assert_eq!(with(rules), one("E005", "(knows player (prize_at b))"));
}

#[test]
fn the_role_and_the_proposition_are_checked_as_elsewhere() {
    let not_a_role = "(<= (next (step 2)) (knows nobody (prize_at a)))";
    assert_eq!(with(not_a_role), one("W016", "(knows nobody (prize_at a))"));
    let undefined = "(<= (next (step 2)) (knows player (prise_at a)))";
    assert_eq!(with(undefined), one("W008", "(knows player (prise_at a))"));
    let unsafe_negation = "(<= (next (missing ?d)) (not (knows player (prize_at ?d))))";
    assert_eq!(with(unsafe_negation), one("E001", "?d"));
}

#[test]
fn a_game_with_a_relation_of_its_own_named_knows_is_told_why() {
    // A description written before GDL-III, with `knows` as an ordinary relation: reading it
    // as GDL-III refuses it, and says what to do.
    let text = "(role r) (init (cell a))
(<= (legal r (go ?x)) (true (cell ?x)))
(<= (next (cell ?x)) (does r (go ?x)))
(<= (knows ?x) (true (cell ?x)))
(<= terminal (knows b))
(goal r 100)";
    let checked = gdl_check::check(text);
    let codes: Vec<&str> = checked.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E018", "W008"]);
    assert!(checked.blocking_errors().count() == 1);
}

#[test]
fn the_games_written_here_are_accepted_without_a_diagnostic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games");
    let mut games = 0;
    for path in ggp_testdata::kif_files(&dir) {
        let text = std::fs::read_to_string(&path).expect("readable");
        if !text.contains("(knows ") {
            continue;
        }
        let checked = gdl_check::check(&text);
        assert!(
            checked.diagnostics.is_empty(),
            "{}: {:#?}",
            path.display(),
            checked.diagnostics
        );
        assert!(
            gdl_check::knows::first_use(&checked.program).is_some(),
            "{} uses no `knows`",
            path.display()
        );
        games += 1;
    }
    assert_eq!(
        games, 4,
        "number guessing, muddy children, Russian cards, cups"
    );
}
