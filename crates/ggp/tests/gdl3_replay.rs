//! `ggp replay --knowledge` on the GDL-III games of `games/`: replays checked by hand
//! against each game's reading (the number of histories a role cannot tell apart, the `knows`
//! atoms that hold, and the goals they decide).

mod common;

use serde_json::Value;

use common::{ggp, temp_file, text};

/// Replays `game` with these joint moves (one per line) and `--knowledge`; the JSON lines.
fn replay(game: &str, name: &str, moves: &[&str]) -> Vec<Value> {
    let file = temp_file(name, &(moves.join("\n") + "\n"));
    let out = ggp(&[
        "replay",
        game,
        "--moves",
        file.to_str().unwrap(),
        "--knowledge",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A role's number of indistinguishable histories at every step.
fn histories(lines: &[Value], role: &str) -> Vec<u64> {
    lines
        .iter()
        .map(|l| l["knowledge"][role]["histories"].as_u64().unwrap())
        .collect()
}

fn knows(line: &Value, role: &str) -> Vec<String> {
    line["knowledge"][role]["knows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

fn goal(line: &Value, role: &str) -> String {
    line["goals"][role][0].as_str().unwrap().to_string()
}

const GUESSING: &str = "games/number_guessing.kif";

#[test]
fn bisection_determines_the_number_and_the_guess_wins() {
    // 5 is chosen; "less than 5?" no (5-8), "less than 7?" yes (5, 6), "less than 6?" yes (5).
    let lines = replay(
        GUESSING,
        "bisect.moves",
        &[
            "((choose 5) noop)",
            "(noop (ask 5))",
            "(noop (ask 7))",
            "(noop (ask 6))",
            "(noop (guess 5))",
        ],
    );
    assert_eq!(lines.len(), 6);
    // Before the choice only the initial history; then 8, 4, 2 and 1 numbers are possible.
    assert_eq!(histories(&lines, "guesser"), [1, 8, 4, 2, 1, 1]);
    for line in &lines[..4] {
        assert!(knows(line, "guesser").is_empty(), "{line}");
    }
    assert_eq!(knows(&lines[4], "guesser"), ["(knows guesser (secret 5))"]);
    // The random player's knowledge is never asked: no entry for it.
    assert!(lines[1]["knowledge"].get("random").is_none());
    assert_eq!(lines[1]["common_knowledge"], serde_json::json!([]));
    let last = &lines[5];
    assert_eq!(last["terminal"], true);
    assert_eq!(goal(last, "guesser"), "100");
}

#[test]
fn a_right_guess_with_two_candidates_left_scores_zero() {
    // After "less than 5?" no and "less than 7?" yes, 5 and 6 remain: guessing 5 is right, and
    // not known.
    let lines = replay(
        GUESSING,
        "lucky.moves",
        &[
            "((choose 5) noop)",
            "(noop (ask 5))",
            "(noop (ask 7))",
            "(noop (guess 5))",
        ],
    );
    assert_eq!(histories(&lines, "guesser"), [1, 8, 4, 2, 2]);
    let last = &lines[4];
    assert_eq!(last["terminal"], true);
    assert!(
        last["state"]
            .as_array()
            .unwrap()
            .contains(&"(guessed 5)".into())
    );
    assert!(knows(last, "guesser").is_empty());
    assert_eq!(goal(last, "guesser"), "0");
    // The same guess at once, with all eight numbers possible, scores 0 too.
    let lines = replay(
        GUESSING,
        "blind.moves",
        &["((choose 5) noop)", "(noop (guess 5))"],
    );
    assert_eq!(histories(&lines, "guesser"), [1, 8, 8]);
    assert_eq!(goal(&lines[2], "guesser"), "0");
}

/// The muddy children: for each assignment of mud (alice, bob, carol), the first step (state
/// number) at which each child knows whether it is muddy, worked out from the game's reading:
/// with k muddy children, a muddy child knows in round k, a clean one in round k + 1 (it hears
/// the muddy ones say they know). Round r is the state after r joint moves.
const MUD: [([&str; 3], [usize; 3]); 7] = [
    (["muddy", "clean", "clean"], [1, 2, 2]),
    (["clean", "muddy", "clean"], [2, 1, 2]),
    (["clean", "clean", "muddy"], [2, 2, 1]),
    (["muddy", "muddy", "clean"], [2, 2, 3]),
    (["muddy", "clean", "muddy"], [2, 3, 2]),
    (["clean", "muddy", "muddy"], [3, 2, 2]),
    (["muddy", "muddy", "muddy"], [3, 3, 3]),
];

#[test]
fn each_muddy_child_knows_at_the_round_the_reading_gives() {
    let children = ["alice", "bob", "carol"];
    for (mud, first) in MUD {
        // The answers are forced by the rules (`say know` is legal only for a child that
        // knows): a wrong expectation is an illegal move, and the replay fails.
        let mut moves = vec![format!(
            "((smear {} {} {}) noop noop noop)",
            mud[0], mud[1], mud[2]
        )];
        for round in 1..=3 {
            let say: Vec<&str> = first
                .iter()
                .map(|&k| if round >= k { "know" } else { "dont_know" })
                .collect();
            moves.push(format!(
                "(noop (say {}) (say {}) (say {}))",
                say[0], say[1], say[2]
            ));
        }
        let moves: Vec<&str> = moves.iter().map(String::as_str).collect();
        let lines = replay("games/muddy_children.kif", "mud.moves", &moves);
        assert_eq!(lines.len(), 5);
        for (c, child) in children.iter().enumerate() {
            let own = format!("(knows {child} (forehead {child} {}))", mud[c]);
            let knowing: Vec<bool> = lines
                .iter()
                .map(|l| knows(l, child).contains(&own))
                .collect();
            let expected: Vec<bool> = (0..5).map(|step| step >= first[c]).collect();
            assert_eq!(knowing, expected, "{child} in {mud:?}");
            // It never "knows" the opposite.
            let other = if mud[c] == "muddy" { "clean" } else { "muddy" };
            let wrong = format!("(knows {child} (forehead {child} {other}))");
            assert!(lines.iter().all(|l| !knows(l, child).contains(&wrong)));
            assert_eq!(goal(&lines[4], child), "100", "{child} in {mud:?}");
        }
    }
}

#[test]
fn a_muddy_child_seeing_two_clean_foreheads_has_one_history_left() {
    let lines = replay(
        "games/muddy_children.kif",
        "alone.moves",
        &[
            "((smear muddy clean clean) noop noop noop)",
            "(noop (say know) (say dont_know) (say dont_know))",
        ],
    );
    // After the smear alice sees two clean foreheads: at least one is muddy, so it is she.
    // bob sees alice muddy and carol clean: he may be either, 2 histories, until alice's
    // answer tells him.
    assert_eq!(histories(&lines, "alice"), [1, 1, 1]);
    assert_eq!(histories(&lines, "bob"), [1, 2, 1]);
    assert_eq!(histories(&lines, "carol"), [1, 2, 1]);
}

const CARDS: &str = "games/russian_cards.kif";

#[test]
fn the_modulo_seven_announcement_wins_for_alice_and_bob() {
    // alice 0 1 2 (sum 3), bob 3 4 5, eve 6. The hands with sum 3 are 012, 046, 136, 145 and
    // 235: bob, holding 3 4 5, can only pair it with 012; eve, holding 6, is left with 012,
    // 145 and 235, in which every card of 0-5 is alice's in one and bob's in another.
    let lines = replay(
        CARDS,
        "sum.moves",
        &[
            "((deal 0 1 2 3 4 5 6) noop noop noop)",
            "(noop (announce_sum 3) noop noop)",
            "(noop noop (announce_eve 6) noop)",
        ],
    );
    // alice: 4 ways to split the other cards; bob learns everything from the sum; eve: the
    // 20 hands of three of 0-5 for alice, then the 3 above.
    assert_eq!(histories(&lines, "alice"), [1, 4, 4, 1]);
    assert_eq!(histories(&lines, "bob"), [1, 4, 1, 1]);
    assert_eq!(histories(&lines, "eve"), [1, 20, 3, 3]);
    let last = &lines[3];
    assert_eq!(knows(last, "eve"), ["(knows eve (holds eve 6))"]);
    assert_eq!(knows(last, "alice").len(), 7, "alice knows every card");
    assert_eq!(knows(last, "bob").len(), 7, "bob knows every card");
    assert_eq!(
        ["alice", "bob", "eve"].map(|r| goal(last, r)),
        ["100", "100", "0"]
    );
}

#[test]
fn announcing_a_card_or_not_naming_eves_card_loses() {
    // A card: eve knows alice holds it at once; bob cannot name eve's card either.
    let lines = replay(
        CARDS,
        "card.moves",
        &[
            "((deal 0 1 2 3 4 5 6) noop noop noop)",
            "(noop (announce_card 0) noop noop)",
            "(noop noop pass noop)",
        ],
    );
    assert!(knows(&lines[2], "eve").contains(&"(knows eve (holds alice 0))".to_string()));
    assert_eq!(lines[2]["legal"]["bob"], serde_json::json!(["pass"]));
    assert_eq!(
        ["alice", "bob", "eve"].map(|r| goal(&lines[3], r)),
        ["0", "0", "100"]
    );
    // The sum, then bob passes: eve learns nothing, but alice does not learn bob's hand.
    let lines = replay(
        CARDS,
        "pass.moves",
        &[
            "((deal 0 1 2 3 4 5 6) noop noop noop)",
            "(noop (announce_sum 3) noop noop)",
            "(noop noop pass noop)",
        ],
    );
    assert_eq!(histories(&lines, "alice"), [1, 4, 4, 4]);
    assert_eq!(
        ["alice", "bob", "eve"].map(|r| goal(&lines[3], r)),
        ["0", "0", "100"]
    );
    // bob may not name eve's card when he does not know it.
    let file = temp_file(
        "card-eve.moves",
        "((deal 0 1 2 3 4 5 6) noop noop noop)\n(noop (announce_card 0) noop noop)\n\
         (noop noop (announce_eve 6) noop)\n",
    );
    let out = ggp(&[
        "replay",
        CARDS,
        "--moves",
        file.to_str().unwrap(),
        "--knowledge",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("step 2: `(announce_eve 6)` is not a legal move for `bob`"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_claim_in_cups_is_legal_once_the_seeker_knows() {
    let lines = replay(
        "games/cups.kif",
        "cups.moves",
        &[
            "((hide 2) wait)",
            "(noop (lift 1))",
            "(noop (lift 3))",
            "(noop (claim 2))",
        ],
    );
    assert_eq!(histories(&lines, "seeker"), [1, 3, 2, 1, 1]);
    let claims = |l: &Value| {
        l["legal"]["seeker"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m.as_str().unwrap().starts_with("(claim"))
            .count()
    };
    // No claim while two or three cups are possible (the terminal state's moves are not
    // played, whatever the rules say of them).
    assert_eq!(
        lines[..4].iter().map(claims).collect::<Vec<_>>(),
        [0, 0, 0, 1]
    );
    assert_eq!(
        knows(&lines[3], "seeker"),
        ["(knows seeker (coin_under 2))"]
    );
    assert_eq!(goal(&lines[4], "seeker"), "100");
}

#[test]
fn knowledge_of_a_game_without_knows_is_refused_and_pretty_output_says_it() {
    let out = ggp(&[
        "replay",
        "games/tictactoe.kif",
        "--random",
        "2",
        "--knowledge",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--knowledge: the rules have no `knows`"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let out = ggp(&[
        "replay",
        GUESSING,
        "--random",
        "2",
        "--seed",
        "3",
        "--knowledge",
        "--pretty",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("  guesser cannot tell 1 history apart; knows: -\n"));
    assert!(stdout.contains("  guesser cannot tell 8 histories apart; knows: -\n"));
}

/// Two roles: a picks a colour, which b sees; b may tell it only when b knows it.
const SHARED: &str = "(role a) (role b) (init (step 0)) (colour red) (colour blue)
(<= (legal a (pick ?c)) (true (step 0)) (colour ?c))
(<= (legal a noop) (true (step 1)))
(<= (legal b noop) (true (step 0)))
(<= (legal b (tell ?c)) (true (step 1)) (knows b (picked ?c)))
(<= (legal b wait) (true (step 1)))
(<= (next (c ?c)) (does a (pick ?c)))
(<= (next (c ?c)) (true (c ?c)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (sees b (saw ?c)) (does a (pick ?c)))
(<= (picked ?c) (true (c ?c)))
(<= shared (knows (picked ?_c)))
(<= terminal (true (step 2)))
(<= (goal ?r 100) (role ?r) shared)
(<= (goal ?r 0) (role ?r) (not shared))
";

#[test]
fn common_knowledge_is_printed_apart_from_each_roles() {
    let game = temp_file("shared.kif", SHARED);
    let lines = replay(
        game.to_str().unwrap(),
        "shared.moves",
        &["((pick red) noop)", "(noop (tell red))"],
    );
    // a knows its own pick and b saw it: common knowledge at once. Both roles are asked
    // about (common knowledge joins every role's classes); only b's own knowledge is asked.
    // a sees nothing of b's move: at the end b may have told or waited, 2 histories.
    assert_eq!(histories(&lines, "a"), [1, 1, 2]);
    assert_eq!(histories(&lines, "b"), [1, 1, 1]);
    assert!(knows(&lines[1], "a").is_empty());
    assert_eq!(knows(&lines[1], "b"), ["(knows b (picked red))"]);
    assert_eq!(lines[0]["common_knowledge"], serde_json::json!([]));
    for line in &lines[1..] {
        assert_eq!(
            line["common_knowledge"],
            serde_json::json!(["(knows (picked red))"])
        );
    }
    assert_eq!(goal(&lines[2], "a"), "100");
}
