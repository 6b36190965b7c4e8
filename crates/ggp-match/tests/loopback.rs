//! Matches over loopback HTTP: well-behaved players, players that misbehave in every way the
//! protocol allows a manager to meet, many matches at once, and the Appendix B exchange.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gdl_reason::StateMachine;
use ggp_match::{
    Database, Gdl2Form, MatchConfig, MatchError, MatchRecord, PlayerSpec, Store, run_match,
};
use ggp_play::{PlayerConfig, StrategyKind, serve};
use ggp_protocol::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod common;
use common::read_request;

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn config(id: &str, rules: &str) -> MatchConfig {
    MatchConfig {
        match_id: id.into(),
        game_name: "test".into(),
        rules: rules.into(),
        start_clock: Duration::from_secs(2),
        play_clock: Duration::from_secs(1),
        grace: Duration::from_millis(300),
        seed: 7,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    }
}

async fn play(config: MatchConfig, players: Vec<PlayerSpec>) -> MatchRecord {
    run_match(config, players, |_| {}, |_| async { Ok(()) })
        .await
        .unwrap()
        .record
}

/// Plays a match recorded in `store`.
async fn play_recorded(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
    store: &Store,
) -> MatchRecord {
    let mut writer = store.writer();
    let save = move |r: &MatchRecord| writer.save(r);
    run_match(config, players, |_| {}, save)
        .await
        .unwrap()
        .record
}

/// A fresh database file for one test.
fn temp_db(name: &str) -> ggp_match::DatabaseUrl {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("loopback");
    ggp_match::DatabaseUrl::sqlite(ggp_testdata::fresh_sqlite_file(&dir, name))
}

/// Starts a `ggp_play` player on a free port.
async fn real_player(kind: StrategyKind) -> String {
    real_player_with(kind, ggp_play::PlayerLimits::default()).await
}

/// Starts a `ggp_play` player with the given limits on a free port.
async fn real_player_with(kind: StrategyKind, limits: ggp_play::PlayerLimits) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = PlayerConfig {
        name: "test".into(),
        factory: kind.factory(3),
        margin: Duration::from_millis(200),
        log: false,
        limits,
    };
    tokio::spawn(serve(listener, config, std::future::pending()));
    format!("http://{addr}")
}

/// What a scripted player does with the `n`th request it receives.
#[derive(Clone, Debug)]
enum Act {
    Reply(String),
    /// Send these bytes as the whole response.
    Raw(String),
    /// Reply after a delay.
    Late(Duration, String),
    /// Read the request, then close without a reply.
    Close,
    /// Read the request and never answer.
    Hang,
    /// Reply with a body of this many bytes, announced by Content-Length.
    Huge(usize),
    /// Reply with a body of this many bytes and no Content-Length.
    HugeUnannounced(usize),
    /// Stop listening: the process is gone, connections are refused from now on.
    Die,
}

fn respond(body: &str) -> String {
    format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A player that reads each request and acts as `script` says; records the raw requests.
async fn scripted(
    script: impl Fn(&str, usize) -> Act + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let script = Arc::new(script);
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let request = read_request(stream).await;
            let Some((mut stream, raw, body)) = request else {
                continue;
            };
            log.lock().unwrap().push(raw);
            let act = script(&body, n);
            n += 1;
            if let Act::Die = act {
                // Dropping the listener (and this connection) refuses every later request.
                return;
            }
            tokio::spawn(async move {
                match act {
                    Act::Reply(body) => {
                        let _ = stream.write_all(respond(&body).as_bytes()).await;
                    }
                    Act::Raw(bytes) => {
                        let _ = stream.write_all(bytes.as_bytes()).await;
                    }
                    Act::Late(delay, body) => {
                        tokio::time::sleep(delay).await;
                        let _ = stream.write_all(respond(&body).as_bytes()).await;
                    }
                    Act::Close | Act::Die => drop(stream),
                    Act::Hang => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(stream);
                    }
                    Act::Huge(size) => {
                        let head = format!("HTTP/1.0 200 OK\r\nContent-Length: {size}\r\n\r\n");
                        let _ = stream.write_all(head.as_bytes()).await;
                        let _ = stream.write_all(&vec![b'x'; size]).await;
                    }
                    Act::HugeUnannounced(size) => {
                        let _ = stream.write_all(b"HTTP/1.0 200 OK\r\n\r\n").await;
                        let _ = stream.write_all(&vec![b'x'; size]).await;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

/// The checks every finished record passes.
fn well_formed(record: &MatchRecord) {
    assert!(record.is_completed && !record.is_aborted);
    assert_eq!(record.states.len(), record.moves.len() + 1);
    assert_eq!(record.errors.len(), record.states.len());
    assert_eq!(record.state_times.len(), record.states.len());
    assert_eq!(record.goal_values.len(), 2);
    assert!(record.errors.last().unwrap().iter().all(String::is_empty));
}

fn errors_of(record: &MatchRecord, player: usize) -> Vec<&str> {
    record
        .errors
        .iter()
        .map(|row| row[player].as_str())
        .filter(|e| !e.is_empty())
        .collect()
}

fn no_errors(record: &MatchRecord) {
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{:?}",
        record.errors
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_whole_match_between_two_http_players() {
    let x = real_player(StrategyKind::Random).await;
    let o = real_player(StrategyKind::Legal).await;
    let mut cfg = config("loopback.1", TICTACTOE);
    // Generous clocks: no reply of a good player may be late on a loaded machine.
    (cfg.start_clock, cfg.play_clock) = (Duration::from_secs(30), Duration::from_secs(30));
    let record = play(cfg, vec![PlayerSpec::Url(x), PlayerSpec::Url(o)]).await;
    well_formed(&record);
    no_errors(&record);
    assert!(matches!(
        record.goal_values.as_slice(),
        [100, 0] | [0, 100] | [50, 50]
    ));
    let json: serde_json::Value = serde_json::from_str(&record.to_json()).unwrap();
    for key in [
        "matchId",
        "randomToken",
        "startTime",
        "rules",
        "states",
        "moves",
        "stateTimes",
        "errors",
        "goalValues",
        "isCompleted",
        "isAborted",
        "startClock",
        "playClock",
        "playerNamesFromHost",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_seed_and_replies_give_the_same_match() {
    let players = || {
        vec![
            PlayerSpec::Builtin(StrategyKind::Random),
            PlayerSpec::Builtin(StrategyKind::Random),
        ]
    };
    let a = play(config("seeded", TICTACTOE), players()).await;
    let b = play(config("seeded", TICTACTOE), players()).await;
    assert_eq!(a.moves, b.moves);
    // The token identifies the match, not the seed: every match has its own.
    assert_ne!(a.random_token, b.random_token);
}

/// Three joint moves, x choosing between two at each: a match whose every move waits for
/// the clock (a player that never answers) ends in five seconds, not a tic-tac-toe's thirteen.
const THREE_STEPS: &str = "(role x) (role o) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3)
    (legal x left) (legal x right) (legal o noop)
    (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
    (<= terminal (true (step 3))) (goal x 50) (goal o 50)";

/// Plays `bad` as x against a built-in random player.
async fn against(bad: String, rules: &str) -> MatchRecord {
    let record = play(
        config("bad", rules),
        vec![
            PlayerSpec::Url(bad),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    well_formed(&record);
    record
}

fn ready_then(then: Act) -> impl Fn(&str, usize) -> Act + Send + Sync + 'static {
    move |body, _| {
        if body.starts_with("(START") {
            Act::Reply("READY".into())
        } else {
            then.clone()
        }
    }
}

/// Plays x with a scripted player that answers START, then acts as `act` says at every PLAY:
/// every one of its moves must have been replaced, each error as `expected` says.
async fn every_move_replaced(act: Act, expected: impl Fn(&str) -> bool) {
    let (url, _) = scripted(ready_then(act)).await;
    let record = against(url, THREE_STEPS).await;
    let errors = errors_of(&record, 0);
    // Every player is asked at every step.
    assert_eq!(errors.len(), record.moves.len(), "{errors:?}");
    assert!(errors.iter().all(|e| expected(e)), "{errors:?}");
    assert!(errors_of(&record, 1).is_empty());
}

/// Each player's time to answer each PLAY is recorded, measured apart though the replies are
/// read in the order of the roles: x answers after 400 ms, o (a second scripted player)
/// at once; the times are stored and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_player_s_time_to_answer_is_recorded() {
    let (slow, _) = scripted(ready_then(Act::Late(
        Duration::from_millis(400),
        "left".into(),
    )))
    .await;
    let (fast, _) = scripted(ready_then(Act::Reply("noop".into()))).await;
    let store = Store::open(&temp_db("times.sqlite")).unwrap();
    let record = play_recorded(
        config("times", THREE_STEPS),
        vec![PlayerSpec::Url(slow), PlayerSpec::Url(fast)],
        &store,
    )
    .await;
    assert_eq!(record.move_times.len(), 3, "{:?}", record.move_times);
    for times in &record.move_times {
        let [Some(x), Some(o)] = times[..] else {
            panic!("{times:?}");
        };
        // x waited 400 ms and answered within the clock and its grace (1.3 s); o's time is
        // its own, not the 400 ms of x's, read before it.
        assert!((400..1300).contains(&x), "{times:?}");
        assert!(o < 400, "measured apart from x's: {times:?}");
    }
    let db = Database::open_existing(store.url()).unwrap();
    assert_eq!(db.load("times").unwrap().move_times, record.move_times);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_never_answers() {
    every_move_replaced(Act::Hang, |e| e.starts_with("timeout:")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_answers_after_the_clock() {
    let late = Act::Late(Duration::from_millis(1600), "wait".into());
    every_move_replaced(late, |e| e.starts_with("timeout:")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_returns_garbage_or_an_illegal_move() {
    every_move_replaced(Act::Reply("((((".into()), |e| e == "unparsable: ((((").await;
    every_move_replaced(Act::Reply("(play 9 9)".into()), |e| {
        e == "illegal: (play 9 9)"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_closes_the_connection_or_sends_ten_megabytes() {
    every_move_replaced(Act::Close, |e| e.starts_with("connection:")).await;
    let ten_mb = 10 * 1024 * 1024;
    every_move_replaced(Act::Huge(ten_mb), |e| {
        e.starts_with("http: a reply of 10485760 bytes")
    })
    .await;
    every_move_replaced(Act::HugeUnannounced(ten_mb), |e| {
        e.starts_with("http: a reply larger than")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_dies_mid_match() {
    // Plays legally for its first two PLAYs (it is x: mark, then wait), then is gone.
    let (url, _) = scripted(|_, n| match n {
        0 => Act::Reply("READY".into()),
        1 => Act::Reply("(play 2 2)".into()),
        2 => Act::Reply("wait".into()),
        _ => Act::Die,
    })
    .await;
    let record = against(url, TICTACTOE).await;
    let errors = errors_of(&record, 0);
    assert_eq!(record.moves[0][0], "(play 2 2)");
    assert!(record.errors[0][0].is_empty() && record.errors[1][0].is_empty());
    assert_eq!(errors.len(), record.moves.len() - 2, "{errors:?}");
    // The first request after its death reached it and was dropped; the rest were refused.
    assert!(
        errors.iter().all(|e| e.starts_with("connection:")),
        "{errors:?}"
    );
    assert!(
        errors[1..].iter().all(|e| e.contains("refused")),
        "{errors:?}"
    );
}

/// A good match between two HTTP players runs beside matches against every kind of bad
/// player, all recorded in one database: it must not wait on any of them. The bad players'
/// play clock is 10 s; a good match held up by any of them would take at least that long.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_good_match_is_not_slowed_by_misbehaving_ones() {
    let store = Store::open(&temp_db("beside.sqlite")).unwrap();
    let clock = Duration::from_secs(10);
    let ten_mb = 10 * 1024 * 1024;
    let acts = [
        Act::Hang,
        Act::Late(Duration::from_secs(12), "wait".into()),
        Act::Reply("((((".into()),
        Act::Reply("(play 9 9)".into()),
        Act::Close,
        Act::Huge(ten_mb),
        Act::HugeUnannounced(ten_mb),
        Act::Die,
    ];
    let mut bad = Vec::new();
    let mut logs = Vec::new();
    for (k, act) in acts.into_iter().enumerate() {
        let (url, seen) = scripted(ready_then(act)).await;
        logs.push(seen);
        let mut cfg = config(&format!("bad.{k}"), TICTACTOE);
        (cfg.start_clock, cfg.play_clock) = (clock, clock);
        let store = store.clone();
        bad.push(tokio::spawn(async move {
            play_recorded(
                cfg,
                vec![
                    PlayerSpec::Url(url),
                    PlayerSpec::Builtin(StrategyKind::Random),
                ],
                &store,
            )
            .await
        }));
    }
    // Every bad player has been sent its first PLAY (START, then PLAY).
    let waiting = Instant::now();
    while logs.iter().any(|l| l.lock().unwrap().len() < 2) {
        assert!(waiting.elapsed() < clock, "the bad matches did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let x = real_player(StrategyKind::Random).await;
    let o = real_player(StrategyKind::Legal).await;
    let mut cfg = config("good", TICTACTOE);
    (cfg.start_clock, cfg.play_clock) = (clock, clock);
    let started = Instant::now();
    let good = play_recorded(cfg, vec![PlayerSpec::Url(x), PlayerSpec::Url(o)], &store).await;
    let took = started.elapsed();
    assert!(
        took < clock,
        "the good match took {took:?}, as long as a bad player's clock"
    );
    well_formed(&good);
    no_errors(&good);
    let hanging = &bad[0];
    assert!(!hanging.is_finished(), "the hanging player's match goes on");
    for b in &bad {
        b.abort();
    }
    let db = Database::open_existing(store.url()).unwrap();
    assert_eq!(db.load("good").unwrap(), good);
}

/// Each step's write completes before the next PLAY is sent, even when it is slow.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_step_is_recorded_before_the_next_play() {
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = events.clone();
    let (url, _) = scripted(move |body, _| {
        if body.starts_with("(START") {
            return Act::Reply("READY".into());
        }
        log.lock()
            .unwrap()
            .push(body.split_whitespace().next().unwrap().to_string());
        Act::Reply("wait".into())
    })
    .await;
    let log = events.clone();
    let save = move |r: &MatchRecord| {
        let (log, steps) = (log.clone(), r.moves.len());
        async move {
            // Every other write is slow.
            if steps % 2 == 1 {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            log.lock().unwrap().push(format!("recorded {steps}"));
            Ok(())
        }
    };
    let players = vec![
        PlayerSpec::Url(url),
        PlayerSpec::Builtin(StrategyKind::Legal),
    ];
    let mut cfg = config("ordered", TICTACTOE);
    cfg.play_clock = Duration::from_secs(10);
    let record = run_match(cfg, players, |_| {}, save).await.unwrap().record;
    let n = record.moves.len();
    // The record before START, then for each step k: PLAY, the record with k steps.
    let mut expected = vec!["recorded 0".to_string()];
    for k in 1..=n {
        expected.push("(PLAY".into());
        expected.push(format!("recorded {k}"));
    }
    expected.push("(STOP".into());
    assert_eq!(*events.lock().unwrap(), expected);
}

/// 100 matches at once between two HTTP players (built-in strategies behind `ggp_play::serve`),
/// all recorded in one database: every one completes, with no substitution.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_matches_all_complete() {
    let store = Store::open(&temp_db("hundred.sqlite")).unwrap();
    // All hundred come from this one address, and may all be under way at once: more than a
    // player plays for one address by default (64), so these players allow them.
    let limits = || ggp_play::PlayerLimits {
        max_sessions_per_address: 100,
        ..ggp_play::PlayerLimits::default()
    };
    let x = real_player_with(StrategyKind::Random, limits()).await;
    let o = real_player_with(StrategyKind::Legal, limits()).await;
    let matches: Vec<_> = (0..100)
        .map(|k| {
            let mut cfg = config(&format!("hundred.{k}"), TICTACTOE);
            // Generous clocks: a loaded machine must not turn into substitutions.
            (cfg.start_clock, cfg.play_clock) = (Duration::from_secs(60), Duration::from_secs(60));
            cfg.seed = k;
            let players = vec![PlayerSpec::Url(x.clone()), PlayerSpec::Url(o.clone())];
            let store = store.clone();
            tokio::spawn(async move { play_recorded(cfg, players, &store).await })
        })
        .collect();
    let mut records = Vec::new();
    for m in matches {
        let record = m.await.unwrap();
        well_formed(&record);
        no_errors(&record);
        records.push(record);
    }
    let db = Database::open_existing(store.url()).unwrap();
    let listed = db.list().unwrap();
    assert_eq!(listed.len(), 100);
    for summary in &listed {
        let k: usize = summary.match_id["hundred.".len()..].parse().unwrap();
        assert_eq!(summary.status, "finished");
        assert_eq!(summary.steps, records[k].moves.len());
        assert_eq!(summary.goal_values, records[k].goal_values);
    }
    assert_eq!(db.load("hundred.42").unwrap(), records[42]);
}

/// Appendix B of the specification: the maze game. The manager's requests, header by header
/// and body by body, are the ones the specification shows, up to letter case (GDL is
/// case-insensitive; the manager prints terms in canonical lower case) and line breaks; the
/// player's replies are the specification's, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_appendix_b_exchange() {
    // The START message of Appendix B, as printed there.
    const SPEC_START: &str = "(START MATCH.3316980891 ROBOT
((ROLE ROBOT) (INIT (CELL A)) (INIT (GOLD C)) (INIT (STEP 1))
(<= (NEXT (CELL ?Y)) (DOES ROBOT MOVE) (TRUE (CELL ?X))
(ADJACENT ?X ?Y)) (<= (NEXT (CELL ?X)) (DOES ROBOT GRAB)
(TRUE (CELL ?X))) (<= (NEXT (CELL ?X)) (DOES ROBOT DROP)
(TRUE (CELL ?X))) (<= (NEXT (GOLD ?X)) (DOES ROBOT MOVE)
(TRUE (GOLD ?X))) (<= (NEXT (GOLD I)) (DOES ROBOT GRAB)
(TRUE (CELL ?X)) (TRUE (GOLD ?X))) (<= (NEXT (GOLD I))
(DOES ROBOT GRAB) (TRUE (GOLD I)))
(<= (NEXT (GOLD ?Y)) (DOES ROBOT GRAB) (TRUE (CELL ?X))
(TRUE (GOLD ?Y)) (DISTINCT ?X ?Y)) (<= (NEXT (GOLD ?X))
(DOES ROBOT DROP) (TRUE (CELL ?X)) (TRUE (GOLD I)))
(<= (NEXT (GOLD ?X)) (DOES ROBOT DROP) (TRUE (GOLD ?X))
(DISTINCT ?X I)) (<= (NEXT (STEP ?Y)) (TRUE (STEP ?X))
(SUCC ?X ?Y)) (ADJACENT A B) (ADJACENT B C) (ADJACENT C D)
(ADJACENT D A) (SUCC 1 2) (SUCC 2 3) (SUCC 3 4) (SUCC 4 5)
(SUCC 5 6) (SUCC 6 7) (SUCC 7 8) (SUCC 8 9) (SUCC 9 10)
(<= (LEGAL ROBOT MOVE)) (<= (LEGAL ROBOT GRAB)
(TRUE (CELL ?X)) (TRUE (GOLD ?X))) (<= (LEGAL ROBOT DROP)
(TRUE (GOLD I))) (<= (GOAL ROBOT 100) (TRUE (GOLD A)))
(<= (GOAL ROBOT 0) (TRUE (GOLD ?X)) (DISTINCT ?X A))
(<= TERMINAL (TRUE (STEP 10))) (<= TERMINAL (TRUE (GOLD A))))
30 30)";
    // The rest of the exchange: each request of the manager, and the player's reply.
    let exchange = [
        ("(PLAY MATCH.3316980891 NIL)", "MOVE"),
        ("(PLAY MATCH.3316980891 (MOVE))", "MOVE"),
        ("(PLAY MATCH.3316980891 (MOVE))", "GRAB"),
        ("(PLAY MATCH.3316980891 (GRAB))", "MOVE"),
        ("(PLAY MATCH.3316980891 (MOVE))", "MOVE"),
        ("(PLAY MATCH.3316980891 (MOVE))", "DROP"),
        ("(STOP MATCH.3316980891 (DROP))", "DONE"),
    ];
    let Request::Start(start) = Request::parse(SPEC_START).unwrap() else {
        panic!("Appendix B's first message is a START");
    };
    let reply = |body: &str| {
        format!(
            "HTTP/1.0 200 OK\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let replies: Vec<String> = std::iter::once("READY")
        .chain(exchange.iter().map(|(_, r)| *r))
        .map(reply)
        .collect();
    let (url, seen) = scripted(move |_, n| Act::Raw(replies[n].clone())).await;
    let cfg = MatchConfig {
        match_id: start.match_id.clone(),
        game_name: "maze".into(),
        rules: start.rules.clone(),
        start_clock: Duration::from_secs(start.start_clock),
        play_clock: Duration::from_secs(start.play_clock),
        grace: Duration::from_secs(1),
        seed: 1,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    };
    let record = play(cfg, vec![PlayerSpec::Url(url)]).await;
    no_errors(&record);
    assert_eq!(record.goal_values, [100]);
    assert_eq!(record.moves.len(), 6);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1 + exchange.len(), "{seen:#?}");
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let expected = std::iter::once(SPEC_START).chain(exchange.iter().map(|(m, _)| *m));
    for (raw, spec) in seen.iter().zip(expected) {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        assert_eq!(words(body).to_uppercase(), words(spec), "{body}");
        // Appendix B's headers, in its order; the manager adds Host, which HTTP/1.1 requires.
        let lines: Vec<String> = head
            .lines()
            .filter(|l| !l.to_ascii_lowercase().starts_with("host:"))
            .map(str::to_ascii_lowercase)
            .collect();
        let length = body.len();
        assert_eq!(
            lines,
            [
                "post / http/1.0".to_string(),
                "accept: text/delim".into(),
                "sender: gamemaster".into(),
                "receiver: gameplayer".into(),
                "content-type: text/acl".into(),
                format!("content-length: {length}"),
            ],
            "{head}"
        );
        if !spec.starts_with("(START") {
            // The requests after START have the lengths Appendix B gives (27 and 30).
            assert_eq!(length, spec.len());
        }
    }
}

const MONTY: &str = include_str!("../../../games/montyhall.kif");

/// The bodies of the requests a scripted player received.
fn bodies(seen: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|raw| raw.split_once("\r\n\r\n").unwrap().1.to_string())
        .collect()
}

/// A Monty Hall contestant that picks door 1, waits and switches.
fn contestant() -> impl Fn(&str, usize) -> Act + Send + Sync + 'static {
    |body, n| {
        Act::Reply(
            match n {
                _ if body.starts_with("(START") => "READY",
                _ if body.starts_with("(STOP") => "DONE",
                1 => "(choose 1)",
                2 => "wait",
                _ => "switch",
            }
            .into(),
        )
    }
}

/// Where the car is and which door the host opened, from the record's joint moves.
fn car_and_opened(record: &MatchRecord) -> (String, String) {
    let arg = |m: &str| {
        m.trim_end_matches(')')
            .rsplit(' ')
            .next()
            .unwrap()
            .to_string()
    };
    (arg(&record.moves[0][1]), arg(&record.moves[1][1]))
}

/// A GDL-II match on Monty Hall with the GameController's messages: the manager plays
/// `random`, the contestant is told only its percepts, as the GameController tells them, and
/// the record (in the database too) keeps every role's percepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gdl2_match_sends_each_player_only_its_percepts_as_the_gamecontroller_does() {
    let path = temp_db("gdl2.sqlite");
    let store = Store::open(&path).unwrap();
    let mut cars = std::collections::BTreeSet::new();
    for seed in 0..6 {
        let (url, seen) = scripted(contestant()).await;
        let mut cfg = config(&format!("monty.{seed}"), MONTY);
        cfg.seed = seed;
        let record = play_recorded(cfg, vec![PlayerSpec::Url(url)], &store).await;
        no_errors(&record);
        assert_eq!(record.player_names_from_host[1], "(the manager)");
        assert_eq!(record.moves.len(), 3);
        let (car, opened) = car_and_opened(&record);
        cars.insert(car.clone());
        // The host opened neither the car's door nor the pick.
        assert!(opened != car && opened != "1", "{:?}", record.moves);
        assert_eq!(
            record.percepts,
            [
                vec![
                    vec!["(picked 1)".to_string()],
                    vec!["(picked 1)".to_string()]
                ],
                vec![vec![format!("(opened {opened})")], vec![]],
                vec![vec![format!("(car {car})")], vec!["switch".to_string()]],
            ]
        );
        // Switching wins unless the pick was the car.
        let won = if car == "1" { 0 } else { 100 };
        assert_eq!(record.goal_values, [won, 0]);
        let id = format!("monty.{seed}");
        assert_eq!(
            bodies(&seen)[1..],
            [
                format!("(PLAY {id} NIL)"),
                format!("(PLAY {id} ((picked 1) ))"),
                format!("(PLAY {id} ((opened {opened}) ))"),
                format!("(STOP {id} ((car {car}) ))"),
            ]
        );
        assert!(bodies(&seen)[0].starts_with(&format!(
            "(START {id} contestant ((role contestant) (role random)"
        )));
        // The database keeps the percepts.
        let db = Database::open_existing(&path).unwrap();
        assert_eq!(db.load(&id).unwrap().percepts, record.percepts);
    }
    assert!(cars.len() > 1, "the car is hidden at random: {cars:?}");
    // The same seed gives the same match.
    let (url, _) = scripted(contestant()).await;
    let mut cfg = config("monty.again", MONTY);
    cfg.seed = 3;
    let again = play(cfg, vec![PlayerSpec::Url(url)]).await;
    let first = Database::open_existing(&path)
        .unwrap()
        .load("monty.3")
        .unwrap();
    assert_eq!(again.moves, first.moves);
}

/// The Dresden server's GDL-II form: the turn, the player's own move (the substitute when its
/// reply was illegal) and its percepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gdl2_player_can_ask_for_the_turn_and_its_own_move() {
    let (url, seen) = scripted(|body, n| {
        Act::Reply(
            match n {
                _ if body.starts_with("(START") => "READY",
                _ if body.starts_with("(STOP") => "DONE",
                1 => "(choose 2)",
                2 => "(fly away)",
                _ => "stay",
            }
            .into(),
        )
    })
    .await;
    let record = play(
        config("turns", MONTY),
        vec![PlayerSpec::Gdl2(url, ggp_match::Gdl2Form::Turn)],
    )
    .await;
    assert_eq!(errors_of(&record, 0), ["illegal: (fly away)"]);
    let (car, opened) = car_and_opened(&record);
    assert_eq!(
        bodies(&seen)[1..],
        [
            "(PLAY turns 0 NIL NIL)".to_string(),
            "(PLAY turns 1 (choose 2) ((picked 2) ))".into(),
            format!("(PLAY turns 2 wait ((opened {opened}) ))"),
            format!("(STOP turns 3 stay ((car {car}) ))"),
        ]
    );
}

/// A GDL game played by a GDL-II player: it gets the GameController's `did` rule with the
/// rules and every role's move as `(did role move)`; the other player the joint moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gdl2_player_of_a_gdl_game_sees_every_move_as_did() {
    let (url, seen) = scripted(|body, _| {
        Act::Reply(
            if body.starts_with("(START") {
                "READY"
            } else {
                "nil"
            }
            .into(),
        )
    })
    .await;
    let (other, other_seen) = scripted(|body, _| {
        Act::Reply(
            if body.starts_with("(START") {
                "READY"
            } else {
                "nil"
            }
            .into(),
        )
    })
    .await;
    let players = vec![
        PlayerSpec::Gdl2(url, ggp_match::Gdl2Form::Percepts),
        PlayerSpec::Url(other),
    ];
    let record = play(config("did", TICTACTOE), players).await;
    assert!(record.percepts.is_empty(), "a GDL game records no percepts");
    let bodies = bodies(&seen);
    let other_bodies = self::bodies(&other_seen);
    assert!(
        bodies[0].ends_with(&format!("{}) 2 1)", ggp_match::DID_RULE)),
        "{}",
        bodies[0]
    );
    assert!(!other_bodies[0].contains("(did "));
    for (k, moves) in record.moves.iter().enumerate() {
        let did = format!("((did x {}) (did o {}) )", moves[0], moves[1]);
        let joint = format!("({} {})", moves[0], moves[1]);
        let verb = if k + 1 == record.moves.len() {
            "STOP"
        } else {
            "PLAY"
        };
        assert_eq!(bodies[k + 2], format!("({verb} did {did})"));
        assert_eq!(other_bodies[k + 2], format!("({verb} did {joint})"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_random_role_is_no_seat() {
    let run = |players| {
        run_match(
            config("refused", MONTY),
            players,
            |_| {},
            |_| async { Ok(()) },
        )
    };
    let two = vec![
        PlayerSpec::Url("http://127.0.0.1:9".into()),
        PlayerSpec::Url("http://127.0.0.1:9".into()),
    ];
    let Err(MatchError::Players(message)) = run(two).await else {
        panic!("two players for Monty Hall");
    };
    assert!(
        message.contains("`random` is played by the manager, so 1 player is needed"),
        "{message}"
    );
    assert!(matches!(
        PlayerSpec::parse("gdl2-turn:127.0.0.1:80"),
        Ok(PlayerSpec::Gdl2(url, ggp_match::Gdl2Form::Turn)) if url == "http://127.0.0.1:80"
    ));
    assert!(PlayerSpec::parse("gdl2:random").is_err());
}

/// GDL-II players that keep the states they may be in (`ggp_play::Game::perceive`), built in
/// and behind HTTP (random, legal, and MCTS's HyperPlay), on Monty Hall, blind breakthrough, and Kriegspiel tic-tac-toe and Mastermind
/// (from `../shared`): every move they send is legal, though they cannot see the state.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gdl2_players_never_send_an_illegal_move() {
    let mut games = vec![
        ("montyhall.kif".to_string(), MONTY.to_string(), 1),
        ("blindbreakthrough.kif".to_string(), BLIND.to_string(), 2),
    ];
    if let Some(shared) = ggp_testdata::shared_or_skip("gdl2_players_never_send_an_illegal_move") {
        let dir = shared.join("corpus/gdl2/uwa-hyperplayer");
        for game in ["kriegTTT_4x4", "montyhall", "mastermind2x3"] {
            let rules = std::fs::read_to_string(dir.join(format!("{game}.kif"))).unwrap();
            let seats = if game == "kriegTTT_4x4" { 2 } else { 1 };
            games.push((game.to_string(), rules, seats));
        }
    }
    for (name, rules, seats) in games {
        for seed in 0..8u64 {
            let mut players = Vec::new();
            // MCTS (HyperPlay here) with a small simulation budget, so the test is quick.
            let mcts = StrategyKind::Mcts(ggp_play::MctsConfig {
                simulations: Some(400),
                ..Default::default()
            });
            for k in 0..seats {
                let searching = (seed / 2 + k as u64).is_multiple_of(2);
                players.push(if (seed + k as u64).is_multiple_of(2) {
                    PlayerSpec::Builtin(match (k, searching) {
                        (0, false) => StrategyKind::Random,
                        (_, true) => mcts,
                        _ => StrategyKind::Legal,
                    })
                } else {
                    PlayerSpec::Url(
                        real_player(if searching {
                            mcts
                        } else {
                            StrategyKind::Random
                        })
                        .await,
                    )
                });
            }
            let mut cfg = config(&format!("ii.{seed}"), &rules);
            cfg.seed = seed;
            cfg.play_clock = Duration::from_secs(5);
            let record = play(cfg, players).await;
            assert!(record.is_completed, "{name}: {:?}", record.abort_reason);
            no_errors(&record);
        }
    }
}

/// GDL-II corpus games (from `../shared`): a match with a scripted player for every role but
/// `random`, each answering `nil` (so the manager substitutes every move): each player is told
/// exactly its own percepts of each step, as the record has them, and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gdl2_corpus_matches_tell_each_player_only_its_own_percepts() {
    let Some(shared) =
        ggp_testdata::shared_or_skip("gdl2_corpus_matches_tell_each_player_only_its_own_percepts")
    else {
        return;
    };
    let dir = shared.join("corpus/gdl2/uwa-hyperplayer");
    for game in ["montyhall", "kriegTTT_4x4", "mastermind"] {
        let rules = std::fs::read_to_string(dir.join(format!("{game}.kif"))).unwrap();
        let id = format!("corpus.{}", game.to_lowercase());
        let mut cfg = config(&id, &rules);
        cfg.play_clock = Duration::from_secs(2);
        let roles: Vec<&str> = match game {
            "montyhall" => vec!["candidate"],
            "kriegTTT_4x4" => vec!["xplayer", "oplayer"],
            _ => vec!["player"],
        };
        let mut players = Vec::new();
        let mut logs = Vec::new();
        for _ in &roles {
            let (url, seen) = scripted(|body, _| {
                Act::Reply(
                    if body.starts_with("(START") {
                        "READY"
                    } else {
                        "nil"
                    }
                    .into(),
                )
            })
            .await;
            players.push(PlayerSpec::Url(url));
            logs.push(seen);
        }
        let record = play(cfg, players).await;
        assert!(record.is_completed, "{game}: {:?}", record.abort_reason);
        assert_eq!(record.percepts.len(), record.moves.len(), "{game}");
        let random = record.game_role_names.iter().position(|r| r == "random");
        for (k, role) in roles.iter().enumerate() {
            let r = record
                .game_role_names
                .iter()
                .position(|n| n == role)
                .unwrap();
            assert_ne!(Some(r), random);
            let bodies = bodies(&logs[k]);
            assert!(bodies[0].starts_with(&format!("(START {id} {role} (")));
            assert_eq!(bodies[1], format!("(PLAY {id} NIL)"), "{game}");
            assert_eq!(bodies.len(), record.moves.len() + 2, "{game} {role}");
            for (step, percepts) in record.percepts.iter().enumerate() {
                let verb = if step + 1 == record.moves.len() {
                    "STOP"
                } else {
                    "PLAY"
                };
                let list: String = percepts[r].iter().map(|p| format!("{p} ")).collect();
                assert_eq!(
                    bodies[step + 2],
                    format!("({verb} {id} ({list}))"),
                    "{game} {role}"
                );
            }
        }
        // The manager's moves for `random` are never substituted: no errors in its column.
        if let Some(random) = random {
            assert!(
                record.errors.iter().all(|row| row[random].is_empty()),
                "{game}"
            );
        }
    }
}

const BLIND: &str = include_str!("../../../games/blindbreakthrough.kif");

/// Reads an HTTP response to the end of its body (its `Content-Length`, or the end of the
/// connection).
async fn read_response(stream: &mut TcpStream) -> Vec<u8> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return data;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap())
            });
            if length.is_some_and(|length| body.len() >= length) {
                return data;
            }
        }
    }
}

/// A real player (`ggp_play::serve`, what `ggp player` runs) behind a proxy that records
/// every request it receives: its URL (the proxy's) and the raw requests.
async fn recorded_player(kind: StrategyKind) -> (String, Arc<Mutex<Vec<String>>>) {
    let player = real_player(kind).await;
    let target = player.trim_start_matches("http://").to_string();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            let target = target.clone();
            tokio::spawn(async move {
                let Some((mut stream, raw, _)) = read_request(stream).await else {
                    return;
                };
                log.lock().unwrap().push(raw.clone());
                let mut upstream = TcpStream::connect(&target).await.unwrap();
                upstream.write_all(raw.as_bytes()).await.unwrap();
                let response = read_response(&mut upstream).await;
                let _ = stream.write_all(&response).await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

/// Blind breakthrough (`games/blindbreakthrough.kif`) between two real GDL-II players, one
/// asking for the GameController's form, the other for the turn and its own move: each is told
/// exactly its own percepts of every step, in its form, as the record keeps them (checked
/// against the messages captured at the player and against the rules); neither ever sends an
/// illegal move though neither sees the other's pawns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn blind_breakthrough_between_gdl2_players_each_told_only_its_own_percepts() {
    let mut machine = ggp_play::load(BLIND).unwrap();
    let (mut captures, mut failures) = (0, 0);
    for seed in 0..6u64 {
        let id = format!("blind.{seed}");
        let kinds = if seed % 2 == 0 {
            [StrategyKind::Random, StrategyKind::Legal]
        } else {
            [StrategyKind::Legal, StrategyKind::Random]
        };
        // The turn form for white when the seed is a multiple of 3, for black otherwise.
        let forms = if seed % 3 == 0 {
            [Gdl2Form::Turn, Gdl2Form::Percepts]
        } else {
            [Gdl2Form::Percepts, Gdl2Form::Turn]
        };
        let mut players = Vec::new();
        let mut logs = Vec::new();
        for (kind, form) in kinds.into_iter().zip(forms) {
            let (url, seen) = recorded_player(kind).await;
            players.push(if form == Gdl2Form::Percepts {
                PlayerSpec::Url(url)
            } else {
                PlayerSpec::Gdl2(url, form)
            });
            logs.push(seen);
        }
        let mut cfg = config(&id, BLIND);
        cfg.seed = seed;
        // Generous clocks: no reply of a good player may be late on a loaded machine.
        (cfg.start_clock, cfg.play_clock) = (Duration::from_secs(30), Duration::from_secs(10));
        let record = play(cfg, players).await;
        well_formed(&record);
        // No move was illegal (nor late): the players chose from what they could know.
        no_errors(&record);
        assert_eq!(record.game_role_names, ["white", "black"]);
        assert!(
            record.goal_values == [100, 0] || record.goal_values == [0, 100],
            "{:?}",
            record.goal_values
        );
        assert_eq!(record.percepts.len(), record.moves.len());
        // The percepts recorded are the rules' for the joint moves made.
        let mut state = machine.initial_state().unwrap();
        for (step, (moves, percepts)) in record.moves.iter().zip(&record.percepts).enumerate() {
            let joint: Vec<_> = moves.iter().map(|m| machine.intern(m).unwrap()).collect();
            let seen = machine.all_percepts(&state, &joint).unwrap();
            for role in 0..2 {
                let mut texts: Vec<String> = seen[role]
                    .iter()
                    .map(|&t| machine.terms().text(machine.symbols(), t))
                    .collect();
                texts.sort();
                assert_eq!(percepts[role], texts, "{id} step {step} role {role}");
            }
            // The player to move sees what became of its move; the other at most a lost pawn.
            let mover = step % 2;
            assert_eq!(moves[1 - mover], "noop", "{id} step {step}");
            assert_eq!(percepts[mover].len(), 1, "{id} step {step}");
            let outcome = &percepts[mover][0];
            let tail = moves[mover].trim_start_matches("(move");
            assert!(
                ["(moved", "(captured", "(blocked"]
                    .iter()
                    .any(|p| outcome == &format!("{p}{tail}")),
                "{id} step {step}: {outcome} for {}",
                moves[mover]
            );
            captures += usize::from(outcome.starts_with("(captured"));
            failures += usize::from(outcome.starts_with("(blocked"));
            let lost = outcome
                .strip_prefix("(captured")
                .map(|c| c.split(' ').skip(3).collect::<Vec<_>>().join(" "));
            match lost {
                Some(cell) => assert_eq!(percepts[1 - mover], [format!("(lost {cell}")]),
                None => assert!(percepts[1 - mover].is_empty(), "{id} step {step}"),
            }
            state = machine.next_state(&state, &joint).unwrap();
        }
        assert!(machine.is_terminal(&state).unwrap(), "{id}");
        // Each player was told exactly its own percepts, in its form, and nothing else.
        for (role, name) in ["white", "black"].iter().enumerate() {
            let bodies = bodies(&logs[role]);
            assert!(
                bodies[0].starts_with(&format!("(START {id} {name} ((role white) (role black)")),
                "{}",
                bodies[0]
            );
            assert_eq!(bodies.len(), record.moves.len() + 2, "{id} {name}");
            let turn = forms[role] == Gdl2Form::Turn;
            let first = if turn {
                format!("(PLAY {id} 0 NIL NIL)")
            } else {
                format!("(PLAY {id} NIL)")
            };
            assert_eq!(bodies[1], first);
            for (step, percepts) in record.percepts.iter().enumerate() {
                let verb = if step + 1 == record.moves.len() {
                    "STOP"
                } else {
                    "PLAY"
                };
                let list: String = percepts[role].iter().map(|p| format!("{p} ")).collect();
                let expected = if turn {
                    let own = &record.moves[step][role];
                    format!("({verb} {id} {} {own} ({list}))", step + 1)
                } else {
                    format!("({verb} {id} ({list}))")
                };
                assert_eq!(bodies[step + 2], expected, "{id} {name} step {step}");
            }
        }
    }
    // The matches met the game's hidden information: pawns taken, steps that failed.
    assert!(captures > 0 && failures > 0, "{captures} {failures}");
}
