//! GDL-III matches: the manager referees with the true history. It plays `random`, tells
//! each player only its percepts (as in GDL-II), records goals that depend on what a role
//! knows, and reports the `knows` atoms that hold after each step; the record replays.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gdl_reason::StateMachine;
use ggp_match::{Event, Knowledge, Known, MatchConfig, MatchRecord, PlayerSpec, run_match};
use ggp_play::StrategyKind;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

mod common;
use common::read_request;

const NUMBER_GUESSING: &str = include_str!("../../../games/number_guessing.kif");

const GAMES: [(&str, &str); 4] = [
    ("number_guessing", NUMBER_GUESSING),
    (
        "muddy_children",
        include_str!("../../../games/muddy_children.kif"),
    ),
    (
        "russian_cards",
        include_str!("../../../games/russian_cards.kif"),
    ),
    ("cups", include_str!("../../../games/cups.kif")),
];

fn config(id: &str, rules: &str, seed: u64) -> MatchConfig {
    MatchConfig {
        match_id: id.into(),
        game_name: "test".into(),
        rules: rules.into(),
        start_clock: Duration::from_secs(2),
        play_clock: Duration::from_secs(1),
        grace: Duration::from_millis(300),
        seed,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    }
}

/// Plays a match; its record and the knowledge reported after each step.
async fn play(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
) -> (MatchRecord, Vec<Option<Knowledge>>) {
    let reported = Arc::new(Mutex::new(Vec::new()));
    let log = reported.clone();
    let events = move |e: Event<'_>| {
        if let Event::Step(p) = e {
            log.lock().unwrap().push(p.knowledge.clone());
        }
    };
    let record = run_match(config, players, events, |_| async { Ok(()) })
        .await
        .unwrap()
        .record;
    let reported = reported.lock().unwrap().clone();
    (record, reported)
}

/// A player over loopback HTTP whose reply to each request is `script`'s (it keeps its own
/// state); the bodies it received.
async fn scripted(
    script: impl FnMut(&str) -> String + Send + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let script = Arc::new(Mutex::new(script));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let Some((mut stream, _, body)) = read_request(stream).await else {
                continue;
            };
            log.lock().unwrap().push(body.clone());
            let reply = (script.lock().unwrap())(&body);
            let response = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (format!("http://{addr}"), seen)
}

/// The words of a message, parentheses apart.
fn words(body: &str) -> Vec<String> {
    body.replace(['(', ')'], " ")
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect()
}

/// A guesser that bisects the numbers still possible (`lo..=hi`) with `questions` questions
/// at most, then guesses the lowest number still possible: from its percepts only.
fn guesser(questions: usize) -> impl FnMut(&str) -> String + Send + 'static {
    let (mut lo, mut hi, mut asked, mut pending) = (1u32, 8u32, 0usize, None::<u32>);
    let mut plays = 0;
    move |body| {
        let w = words(body);
        match w.first().map(String::as_str) {
            Some("start") => return "READY".into(),
            Some("stop" | "abort") => return "DONE".into(),
            _ => {}
        }
        // The answer to the last question: "is it less than m?"
        if let Some(m) = pending.take() {
            if w.iter().any(|x| x == "yes") {
                hi = m - 1;
            } else {
                assert!(w.iter().any(|x| x == "no"), "no answer in {body}");
                lo = m;
            }
        }
        plays += 1;
        if plays == 1 {
            // The first step: the random player chooses, the guesser waits.
            return "noop".into();
        }
        if asked < questions && lo < hi {
            let m = (lo + hi).div_ceil(2);
            asked += 1;
            pending = Some(m);
            format!("(ask {m})")
        } else {
            format!("(guess {lo})")
        }
    }
}

/// The number the random player chose, from the record.
fn secret(record: &MatchRecord) -> String {
    record.moves[0][0]
        .trim_start_matches("(choose ")
        .trim_end_matches(')')
        .to_string()
}

/// Replays a record's joint moves on a fresh machine: the states, the percepts and the goals
/// must be the recorded ones.
fn replays(rules: &str, record: &MatchRecord) {
    let mut machine = ggp_play::load(rules).unwrap();
    let mut state = machine.initial_state().unwrap();
    let text = |m: &ggp_play::Machine, t| m.terms().spelled(m.symbols(), t);
    for (k, joint) in record.moves.iter().enumerate() {
        let joint: Vec<_> = joint.iter().map(|m| machine.intern(m).unwrap()).collect();
        let percepts = machine.all_percepts(&state, &joint).unwrap();
        let percepts: Vec<Vec<String>> = percepts
            .iter()
            .map(|p| {
                let mut p: Vec<String> = p.iter().map(|&t| text(&machine, t)).collect();
                p.sort();
                p
            })
            .collect();
        assert_eq!(percepts, record.percepts[k], "the percepts of step {k}");
        state = machine.next_state(&state, &joint).unwrap();
        let mut fluents: Vec<String> = machine
            .fluents(&state)
            .iter()
            .map(|&f| text(&machine, f))
            .collect();
        fluents.sort();
        assert_eq!(
            format!("({})", fluents.join(" ")),
            record.states[k + 1],
            "the state after step {k}"
        );
    }
    assert!(machine.is_terminal(&state).unwrap());
    assert_eq!(machine.goals(&state).unwrap(), record.goal_values);
}

/// What the guesser knows of the secret after each step, as reported.
fn known_secrets(reported: &[Option<Knowledge>]) -> Vec<Vec<String>> {
    reported
        .iter()
        .map(|k| {
            let k = k.as_ref().expect("number guessing has `knows`");
            k.of_role(1)
                .map(|known| match known {
                    Known::Role { what, .. } | Known::Common(what) => what.clone(),
                })
                .collect()
        })
        .collect()
}

/// Three questions determine the number: the guess after them scores 100. The guesser is told
/// only its answers, and the manager reports that it knows the secret after the third.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guesser_that_knows_the_number_wins() {
    for seed in [1, 4] {
        let (url, seen) = scripted(guesser(3)).await;
        let id = format!("ng.bisect.{seed}");
        let (record, reported) = play(
            config(&id, NUMBER_GUESSING, seed),
            vec![PlayerSpec::Url(url)],
        )
        .await;
        assert!(record.is_completed, "{:?}", record.abort_reason);
        assert!(record.errors.iter().flatten().all(String::is_empty));
        let n = secret(&record);
        assert_eq!(record.moves.len(), 5);
        assert_eq!(record.moves[4][1], format!("(guess {n})"));
        assert_eq!(record.goal_values, [100, 100]);
        // The guesser was told its answers, as the record has them, and nothing else: not the
        // random player's move.
        let bodies = seen.lock().unwrap().clone();
        assert_eq!(bodies.len(), 7, "START, five PLAY, STOP");
        for (k, body) in bodies.iter().enumerate().skip(2) {
            let percepts = &record.percepts[k - 2][1];
            let said: Vec<String> = words(body)
                .into_iter()
                .filter(|w| w == "yes" || w == "no")
                .collect();
            assert_eq!(&said, percepts, "{body}");
            assert!(!body.contains("choose"), "{body}");
        }
        // An answer to each question.
        assert!(record.percepts[1..4].iter().all(|p| p[1].len() == 1));
        let secrets = known_secrets(&reported);
        let knows = vec![format!("(secret {n})")];
        assert_eq!(secrets, [vec![], vec![], vec![], knows.clone(), knows]);
        replays(NUMBER_GUESSING, &record);
    }
}

/// Two questions leave two numbers: a guess of the right one scores 0 all the same, since the
/// guesser does not know it (and so does a wrong one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lucky_guess_scores_nothing() {
    let mut lucky = 0;
    for seed in 0..8 {
        let (url, _) = scripted(guesser(2)).await;
        let id = format!("ng.lucky.{seed}");
        let (record, reported) = play(
            config(&id, NUMBER_GUESSING, seed),
            vec![PlayerSpec::Url(url)],
        )
        .await;
        assert!(record.is_completed, "{:?}", record.abort_reason);
        assert_eq!(record.moves.len(), 4);
        if record.moves[3][1] == format!("(guess {})", secret(&record)) {
            lucky += 1;
        }
        assert_eq!(
            record.goal_values,
            [100, 0],
            "seed {seed}: {:?}",
            record.moves
        );
        assert!(known_secrets(&reported).iter().all(Vec::is_empty));
        replays(NUMBER_GUESSING, &record);
    }
    // Half the numbers are the lower of their pair.
    assert!(lucky > 0, "no guess was right: the test shows nothing");
}

/// A match of each GDL-III game with built-in players: it ends, every goal is recorded, the
/// manager's `random` moves and percepts are in the record, knowledge is reported at every
/// step, and the record replays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_gdl3_game_plays_to_the_end_with_built_in_players() {
    for (name, rules) in GAMES {
        let roles = rules.matches("\n(role ").count() + usize::from(rules.starts_with("(role "));
        let players = (1..roles)
            .map(|_| PlayerSpec::Builtin(StrategyKind::Random))
            .collect();
        let (record, reported) = play(config(name, rules, 3), players).await;
        assert!(record.is_completed, "{name}: {:?}", record.abort_reason);
        assert_eq!(record.goal_values.len(), roles, "{name}");
        assert_eq!(record.player_names_from_host[0], "(the manager)", "{name}");
        assert_eq!(record.percepts.len(), record.moves.len(), "{name}");
        assert_eq!(reported.len(), record.moves.len(), "{name}");
        assert!(reported.iter().all(Option::is_some), "{name}");
        replays(rules, &record);
    }
}
