//! What other programs see of `ggp`: the messages `ggp match` sends and the replies `ggp player`
//! gives, on the corpus games that broke ggp-base's players and server (upper case in role
//! names and moves, brackets inside comments, a last comment without a final newline, rules
//! commented out, non-ASCII comments, CRLF line ends). Each message is read by a strict,
//! case-sensitive reader written here, independent of the project's parser, as ggp-base reads
//! them: symbols compared with their case, no comments, ASCII.

mod common;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use common::{ggp, post, scripted_player, spawn_player, temp_file, text};

/// The games, with why each is here.
const GAMES: &[(&str, &str)] = &[
    ("ticTacToeLarge", "roles xPlayer and oPlayer"),
    (
        "bomberman2p",
        "the move dropBomb; a last comment without a newline",
    ),
    (
        "ttcc4_2player",
        "the move knightMove; rules commented out; CRLF",
    ),
    ("checkersTiny", "brackets inside comments"),
    ("maze", "a last comment without a newline"),
    ("cittaceot", "non-ASCII characters in comments"),
];

fn corpus_game(name: &str) -> Option<PathBuf> {
    let shared = ggp_testdata::shared_or_skip("interop")?;
    Some(shared.join(format!("corpus/games/base/{name}.kif")))
}

/// An S-expression as a strict reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sexp {
    Atom(String),
    List(Vec<Sexp>),
}

/// A strict reader: ASCII only, no comments, balanced parentheses, atoms compared with their
/// case. Returns the forms, or what is wrong.
fn strict_read(text: &str) -> Result<Vec<Sexp>, String> {
    if let Some(c) = text
        .chars()
        .find(|c| !c.is_ascii() || (c.is_ascii_control() && !c.is_ascii_whitespace()))
    {
        return Err(format!("a character a strict reader refuses: {c:?}"));
    }
    if text.contains(';') {
        return Err("a `;` (a comment) in a message".into());
    }
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    let mut atom = String::new();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sexp>>| {
        if !atom.is_empty() {
            stack
                .last_mut()
                .unwrap()
                .push(Sexp::Atom(std::mem::take(atom)));
        }
    };
    for c in text.chars() {
        match c {
            '(' => {
                flush(&mut atom, &mut stack);
                stack.push(Vec::new());
            }
            ')' => {
                flush(&mut atom, &mut stack);
                let list = stack.pop().unwrap();
                stack
                    .last_mut()
                    .ok_or("a `)` that closes nothing")?
                    .push(Sexp::List(list));
            }
            c if c.is_ascii_whitespace() => flush(&mut atom, &mut stack),
            c => atom.push(c),
        }
    }
    flush(&mut atom, &mut stack);
    match stack.len() {
        1 => Ok(stack.pop().unwrap()),
        n => Err(format!("{} unclosed parentheses", n - 1)),
    }
}

fn atoms(sexp: &Sexp, out: &mut HashSet<String>) {
    match sexp {
        Sexp::Atom(a) => {
            out.insert(a.clone());
        }
        Sexp::List(items) => items.iter().for_each(|i| atoms(i, out)),
    }
}

/// The file's tokens as a reader that drops `;` comments to the end of the line sees them: the
/// sentences as their author wrote them.
fn written_sentences(file: &str) -> Vec<Sexp> {
    let without_comments: String = file
        .split_inclusive(['\n', '\r'])
        .map(|line| match line.find(';') {
            Some(at) => format!("{} ", &line[..at]),
            None => line.to_string(),
        })
        .collect();
    strict_read(&without_comments.replace(|c: char| !c.is_ascii(), " "))
        .expect("the game reads without its comments")
}

/// The roles as written, in order.
fn written_roles(sentences: &[Sexp]) -> Vec<String> {
    sentences
        .iter()
        .filter_map(|s| match s {
            Sexp::List(items) => match items.as_slice() {
                [Sexp::Atom(role), Sexp::Atom(name)] if role.eq_ignore_ascii_case("role") => {
                    Some(name.clone())
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// One form of a message, read strictly.
fn one(message: &str) -> Sexp {
    let forms = strict_read(message).unwrap_or_else(|e| panic!("{e}: {message}"));
    assert_eq!(forms.len(), 1, "{message}");
    forms.into_iter().next().unwrap()
}

#[test]
fn what_ggp_match_sends_is_clean_and_spelled_as_the_rules() {
    for &(name, why) in GAMES {
        let Some(path) = corpus_game(name) else {
            return;
        };
        let file = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let sentences = written_sentences(&file);
        let roles = written_roles(&sentences);
        let mut symbols = HashSet::new();
        sentences.iter().for_each(|s| atoms(s, &mut symbols));
        // A player per role that records what it is sent and answers READY, then nonsense (its
        // moves are replaced, and the manager sends on).
        let received = Arc::new(Mutex::new(Vec::<(usize, String)>::new()));
        let mut urls = Vec::new();
        for k in 0..roles.len() {
            let received = received.clone();
            let (url, _) = scripted_player(move |body| {
                received.lock().unwrap().push((k, body.to_string()));
                Some(
                    if body.starts_with("(START") {
                        "ready"
                    } else {
                        "nothing"
                    }
                    .to_string(),
                )
            });
            urls.push(url);
        }
        let mut args = vec![
            "match",
            path.to_str().unwrap(),
            "--no-db",
            "--max-steps",
            "4",
            "--startclock",
            "5",
            "--playclock",
            "2",
            "--id",
            "interop.1",
        ];
        for url in &urls {
            args.extend(["--player", url.as_str()]);
        }
        let out = ggp(&args);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: {}",
            text(&out.stderr)
        );
        let received = received.lock().unwrap().clone();
        let mut starts = 0;
        let mut plays = 0;
        for (k, message) in &received {
            let Sexp::List(items) = one(message) else {
                panic!("{name}: not a list: {message}")
            };
            let Sexp::Atom(command) = &items[0] else {
                panic!("{name}: {message}")
            };
            match command.as_str() {
                "START" => {
                    starts += 1;
                    let [
                        _,
                        Sexp::Atom(id),
                        Sexp::Atom(role),
                        Sexp::List(rules),
                        Sexp::Atom(_),
                        Sexp::Atom(_),
                    ] = items.as_slice()
                    else {
                        panic!("{name}: {message}")
                    };
                    assert_eq!(id, "interop.1");
                    assert_eq!(
                        role, &roles[*k],
                        "{name} ({why}): the role as the rules spell it"
                    );
                    // Exactly the author's sentences, comments gone, nothing commented out
                    // come back to life, nothing swallowed by a last comment.
                    assert_eq!(rules, &sentences, "{name} ({why}): the rules sent");
                }
                "PLAY" | "STOP" => {
                    plays += 1;
                    if let Sexp::List(moves) = &items[2] {
                        assert_eq!(moves.len(), roles.len(), "{name}: {message}");
                        let mut used = HashSet::new();
                        moves.iter().for_each(|m| atoms(m, &mut used));
                        for symbol in used {
                            assert!(
                                symbols.contains(&symbol),
                                "{name} ({why}): `{symbol}` in {message} is not spelled as in the rules"
                            );
                        }
                    }
                }
                "INFO" | "ABORT" => {}
                other => panic!("{name}: unexpected {other}"),
            }
        }
        assert_eq!(starts, roles.len(), "{name}: one START per player");
        assert!(plays >= roles.len() * 2, "{name}: {received:?}");
    }
}

#[test]
fn what_ggp_player_replies_is_spelled_as_the_rules() {
    for &(name, why) in GAMES {
        let Some(path) = corpus_game(name) else {
            return;
        };
        let file = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let sentences = written_sentences(&file);
        let roles = written_roles(&sentences);
        let mut symbols = HashSet::new();
        sentences.iter().for_each(|s| atoms(s, &mut symbols));
        // Each role played by a `ggp player`, behind a proxy that records its replies.
        let mut players = Vec::new();
        let replies = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
        let mut urls = Vec::new();
        for _ in &roles {
            let (child, real) = spawn_player("random");
            players.push(child);
            let replies = replies.clone();
            let (url, _) = scripted_player(move |body| {
                let (_, reply) = post(&real, body.as_bytes());
                replies
                    .lock()
                    .unwrap()
                    .push((body.to_string(), reply.clone()));
                Some(reply)
            });
            urls.push(url);
        }
        let db = common::temp_db(&format!("interop-{name}.sqlite"));
        let mut args = vec![
            "match",
            path.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--id",
            "interop.2",
            "--max-steps",
            "30",
            "--startclock",
            "30",
            "--playclock",
            "5",
        ];
        for url in &urls {
            args.extend(["--player", url.as_str()]);
        }
        let out = ggp(&args);
        for mut p in players {
            p.kill().unwrap();
            p.wait().unwrap();
        }
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: {}",
            text(&out.stderr)
        );
        let replies = replies.lock().unwrap().clone();
        let mut moves = 0;
        for (request, reply) in &replies {
            if request.starts_with("(PLAY") {
                moves += 1;
                let term = one(reply);
                let mut used = HashSet::new();
                atoms(&term, &mut used);
                for symbol in used {
                    assert!(
                        symbols.contains(&symbol),
                        "{name} ({why}): the reply `{reply}` spells `{symbol}` otherwise than the rules"
                    );
                }
            } else if request.starts_with("(START") {
                assert_eq!(reply, "READY", "{name}");
            }
        }
        assert!(moves >= roles.len(), "{name}: {replies:?}");
        // The manager took every reply as the legal move it is.
        let record = common::export(&db, "interop.2");
        for row in record["errors"].as_array().unwrap() {
            for e in row.as_array().unwrap() {
                assert_eq!(e, "", "{name}: {row}");
            }
        }
        for row in record["startErrors"].as_array().unwrap() {
            assert_eq!(row, "", "{name}");
        }
    }
}

#[test]
fn the_strict_reader_is_strict() {
    assert!(strict_read("(a (b c))").is_ok());
    assert!(strict_read("(a ; comment\n b)").is_err());
    assert!(strict_read("(a (b c)").is_err());
    assert!(strict_read("(a))").is_err());
    assert!(strict_read("(caf\u{e9})").is_err());
    assert_ne!(one("(Mark x)"), one("(mark x)"));
}

/// A GDL-II game written for this test: the names in mixed case (a role, moves, percepts and
/// fluents), `random` played by the manager, and comments with brackets in them (`(like this)`).
const DOORS: &str = "; Two doors (a car behind one); the host hides it, the Contestant guesses.
(role Contestant)
(role random)
(Door Left) (Door Right)
(init (Phase Hide))
(<= (legal random (HideCar ?d)) (true (Phase Hide)) (Door ?d))
(<= (legal Contestant (PickDoor ?d)) (true (Phase Hide)) (Door ?d))
(<= (legal random Wait) (true (Phase Guess)))
(<= (legal Contestant (Guess ?d)) (true (Phase Guess)) (Door ?d))
(<= (next (Car ?d)) (does random (HideCar ?d)))
(<= (next (Car ?d)) (true (Car ?d)))
(<= (next (Phase Guess)) (true (Phase Hide)))
(<= (next (Phase Over)) (true (Phase Guess)))
(<= (next Won) (does Contestant (Guess ?d)) (true (Car ?d)))
; What the Contestant sees (its own pick, and a Hint: not where the car is).
(<= (sees Contestant (Picked ?d)) (does Contestant (PickDoor ?d)))
(<= (sees Contestant (Hint ?d)) (does random (HideCar ?e)) (Door ?d) (distinct ?d ?e))
(<= terminal (true (Phase Over)))
(<= (goal Contestant 100) (true Won))
(<= (goal Contestant 0) (not (true Won)))
(goal random 0)
";

#[test]
fn what_a_gdl2_player_is_sent_is_clean_and_spelled_as_the_rules() {
    let path = temp_file("interop-doors.kif", DOORS);
    let sentences = written_sentences(DOORS);
    let mut symbols = HashSet::new();
    sentences.iter().for_each(|s| atoms(s, &mut symbols));
    for form in ["gdl2:", "gdl2-turn:"] {
        // The Contestant's player records what it is sent, answers READY, then moves as the
        // rules spell them (`(PickDoor Left)`, then `(Guess Right)`).
        let received = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = received.clone();
        let (url, _) = scripted_player(move |body| {
            let mut log = log.lock().unwrap();
            log.push(body.to_string());
            Some(
                match log.len() {
                    1 => "ready",
                    2 => "(PickDoor Left)",
                    _ => "(Guess Right)",
                }
                .to_string(),
            )
        });
        let player = format!("{form}{url}");
        let out = ggp(&[
            "match",
            path.to_str().unwrap(),
            "--no-db",
            "--startclock",
            "5",
            "--playclock",
            "2",
            "--id",
            "interop.2",
            "--player",
            &player,
        ]);
        assert_eq!(out.status.code(), Some(0), "{form}: {}", text(&out.stderr));
        let received = received.lock().unwrap().clone();
        let forms: Vec<Vec<Sexp>> = received
            .iter()
            .filter(|m| !m.starts_with("(INFO") && !m.starts_with("(info"))
            .map(|m| match one(m) {
                Sexp::List(items) => items,
                atom => panic!("{form}: not a list: {atom:?}"),
            })
            .collect();
        let [start, plays @ ..] = forms.as_slice() else {
            panic!("{form}: {received:?}")
        };
        let [_, Sexp::Atom(id), Sexp::Atom(role), Sexp::List(rules), ..] = start.as_slice() else {
            panic!("{form}: {}", received[0])
        };
        assert_eq!(
            (id.as_str(), role.as_str()),
            ("interop.2", "Contestant"),
            "{form}"
        );
        assert_eq!(
            rules, &sentences,
            "{form}: the rules sent, without comments"
        );
        // PLAY, PLAY, STOP: the first with nothing seen, then each with the percepts (and in the
        // turn form the turn and the player's own move), every symbol spelled as in the rules.
        let commands: Vec<&str> = plays
            .iter()
            .map(|items| match &items[0] {
                Sexp::Atom(c) => c.as_str(),
                other => panic!("{form}: {other:?}"),
            })
            .collect();
        assert_eq!(commands, ["PLAY", "PLAY", "STOP"], "{form}: {received:?}");
        let seen: Vec<&Sexp> = plays.iter().map(|items| items.last().unwrap()).collect();
        assert_eq!(seen[0], &Sexp::Atom("NIL".into()), "{form}: {received:?}");
        let mut used = HashSet::new();
        for items in plays {
            items[2..].iter().for_each(|s| atoms(s, &mut used));
        }
        used.remove("NIL");
        used.retain(|a| a.parse::<u64>().is_err());
        for symbol in &used {
            assert!(
                symbols.contains(symbol),
                "{form}: `{symbol}` is not spelled as in the rules: {received:?}"
            );
        }
        for percept in ["Picked", "Hint", "Left"] {
            assert!(
                used.contains(percept),
                "{form}: {percept} not seen: {received:?}"
            );
        }
    }
}

/// GDL-III, spelled in mixed case: the Contestant wins only by *knowing* where the car is when
/// it guesses (the Hint names the other door), so the referee must reason `(knows …)`.
const KNOWING_DOORS: &str = "; Two doors; the Contestant must know where the car is.
(role Contestant)
(role random)
(Door Left) (Door Right)
(init (Phase Hide))
(<= (legal random (HideCar ?d)) (true (Phase Hide)) (Door ?d))
(<= (legal Contestant (PickDoor ?d)) (true (Phase Hide)) (Door ?d))
(<= (legal random Wait) (true (Phase Guess)))
(<= (legal Contestant (Guess ?d)) (true (Phase Guess)) (Door ?d))
(<= (next (Car ?d)) (does random (HideCar ?d)))
(<= (next (Car ?d)) (true (Car ?d)))
(<= (next (Guessed ?d)) (does Contestant (Guess ?d)))
(<= (next (Phase Guess)) (true (Phase Hide)))
(<= (next (Phase Over)) (true (Phase Guess)))
; The Hint: the door the car is not behind.
(<= (sees Contestant (Hint ?d)) (does random (HideCar ?e)) (Door ?d) (distinct ?d ?e))
(<= (CarAt ?d) (true (Car ?d)))
(<= Won (true (Guessed ?d)) (knows Contestant (CarAt ?d)))
(<= terminal (true (Phase Over)))
(<= (goal Contestant 100) Won)
(<= (goal Contestant 0) (not Won))
(goal random 0)
";

#[test]
fn what_a_gdl3_player_is_sent_is_clean_and_spelled_as_the_rules() {
    let path = temp_file("interop-knowing-doors.kif", KNOWING_DOORS);
    let sentences = written_sentences(KNOWING_DOORS);
    let mut symbols = HashSet::new();
    sentences.iter().for_each(|s| atoms(s, &mut symbols));
    // The Contestant's player records what it is sent and guesses the door the Hint does not
    // name: it knows where the car is, and wins.
    let received = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = received.clone();
    let (url, _) = scripted_player(move |body| {
        log.lock().unwrap().push(body.to_string());
        let command = body.trim_start_matches('(').to_ascii_uppercase();
        Some(
            if command.starts_with("INFO") || command.starts_with("START") {
                "ready"
            } else if body.contains("(Hint Right)") {
                "(Guess Left)"
            } else if body.contains("(Hint Left)") {
                "(Guess Right)"
            } else {
                "(PickDoor Left)"
            }
            .to_string(),
        )
    });
    let player = format!("gdl2:{url}");
    let out = ggp(&[
        "match",
        path.to_str().unwrap(),
        "--no-db",
        "--startclock",
        "5",
        "--playclock",
        "2",
        "--id",
        "interop.3",
        "--player",
        &player,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let contestant = text(&out.stdout)
        .lines()
        .find(|l| l.starts_with("Contestant "))
        .map(str::to_string);
    let fields: Vec<&str> = contestant
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert!(
        fields.ends_with(&["0", "100"]),
        "the Contestant, without an error, knew and won: {}",
        text(&out.stdout)
    );
    let received = received.lock().unwrap().clone();
    let forms: Vec<Vec<Sexp>> = received
        .iter()
        .filter(|m| !m.starts_with("(INFO") && !m.starts_with("(info"))
        .map(|m| match one(m) {
            Sexp::List(items) => items,
            atom => panic!("not a list: {atom:?}"),
        })
        .collect();
    let [start, plays @ ..] = forms.as_slice() else {
        panic!("{received:?}")
    };
    let [_, _, Sexp::Atom(role), Sexp::List(rules), ..] = start.as_slice() else {
        panic!("{}", received[0])
    };
    assert_eq!(role, "Contestant");
    assert_eq!(rules, &sentences, "the rules sent, without comments");
    let mut used = HashSet::new();
    for items in plays {
        items[2..].iter().for_each(|s| atoms(s, &mut used));
    }
    used.remove("NIL");
    for symbol in &used {
        assert!(
            symbols.contains(symbol),
            "`{symbol}` is not spelled as in the rules: {received:?}"
        );
    }
    assert!(used.contains("Hint"), "{received:?}");
}
