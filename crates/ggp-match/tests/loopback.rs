//! Matches over loopback HTTP: well-behaved players, and players that misbehave in every way
//! the protocol allows a manager to meet.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ggp_match::{MatchConfig, MatchRecord, PlayerSpec, run_match};
use ggp_play::{PlayerConfig, StrategyKind, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn config(id: &str, rules: &str) -> MatchConfig {
    MatchConfig {
        match_id: id.into(),
        rules: rules.into(),
        start_clock: Duration::from_secs(2),
        play_clock: Duration::from_secs(1),
        grace: Duration::from_millis(300),
        seed: 7,
    }
}

async fn play(config: MatchConfig, players: Vec<PlayerSpec>) -> MatchRecord {
    run_match(config, players, |_| {}, |_| {}).await.unwrap()
}

/// Starts a `ggp_play` player on a free port.
async fn real_player(kind: StrategyKind) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = PlayerConfig {
        name: "test".into(),
        factory: kind.factory(3),
        margin: Duration::from_millis(200),
    };
    tokio::spawn(serve(listener, config, std::future::pending()));
    format!("http://{addr}")
}

/// What a scripted player does with the `n`th request it receives.
#[derive(Clone)]
enum Act {
    Reply(String),
    /// Reply after a delay.
    Late(Duration, String),
    /// Read the request, then close without a reply.
    Close,
    /// Read the request and never answer.
    Hang,
    /// Reply with a body of this many bytes.
    Huge(usize),
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
            tokio::spawn(async move {
                let respond = |body: &str| {
                    format!(
                        "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                };
                match act {
                    Act::Reply(body) => {
                        let _ = stream.write_all(respond(&body).as_bytes()).await;
                    }
                    Act::Late(delay, body) => {
                        tokio::time::sleep(delay).await;
                        let _ = stream.write_all(respond(&body).as_bytes()).await;
                    }
                    Act::Close => drop(stream),
                    Act::Hang => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(stream);
                    }
                    Act::Huge(size) => {
                        let head = format!("HTTP/1.0 200 OK\r\nContent-Length: {size}\r\n\r\n");
                        let _ = stream.write_all(head.as_bytes()).await;
                        let _ = stream.write_all(&vec![b'x'; size]).await;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

async fn read_request(mut stream: TcpStream) -> Option<(TcpStream, String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                let body = body.to_string();
                return Some((stream, text, body));
            }
        }
    }
}

/// The checks every finished record passes.
fn well_formed(record: &MatchRecord) {
    assert!(record.is_completed && !record.is_aborted);
    assert_eq!(record.states.len(), record.moves.len() + 1);
    assert_eq!(record.errors.len(), record.states.len());
    assert_eq!(record.state_times.len(), record.states.len());
    assert_eq!(record.goal_values.len(), 2);
}

fn errors_of(record: &MatchRecord, player: usize) -> Vec<&str> {
    record
        .errors
        .iter()
        .map(|row| row[player].as_str())
        .filter(|e| !e.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_whole_match_between_two_http_players() {
    let x = real_player(StrategyKind::Random).await;
    let o = real_player(StrategyKind::Legal).await;
    let record = play(
        config("loopback.1", TICTACTOE),
        vec![PlayerSpec::Url(x), PlayerSpec::Url(o)],
    )
    .await;
    well_formed(&record);
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{:?}",
        record.errors
    );
    assert!(matches!(
        record.goal_values.as_slice(),
        [100, 0] | [0, 100] | [50, 50]
    ));
    let json: serde_json::Value = serde_json::from_str(&record.to_json()).unwrap();
    for key in [
        "matchId",
        "randomToken",
        "startTime",
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
    let a = play(
        config("seeded", TICTACTOE),
        vec![
            PlayerSpec::Builtin(StrategyKind::Random),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    let b = play(
        config("seeded", TICTACTOE),
        vec![
            PlayerSpec::Builtin(StrategyKind::Random),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    assert_eq!(a.moves, b.moves);
    assert_eq!(a.random_token, b.random_token);
}

/// Runs a match of `bad` (as x) against a built-in random player, and a normal match beside it
/// that must not be slowed.
async fn against(bad: String) -> MatchRecord {
    let side = tokio::spawn(async {
        let started = Instant::now();
        let r = play(
            config("beside", TICTACTOE),
            vec![
                PlayerSpec::Builtin(StrategyKind::Random),
                PlayerSpec::Builtin(StrategyKind::Legal),
            ],
        )
        .await;
        (started.elapsed(), r)
    });
    let record = play(
        config("bad", TICTACTOE),
        vec![
            PlayerSpec::Url(bad),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    let (took, beside) = side.await.unwrap();
    well_formed(&beside);
    assert!(
        took < Duration::from_secs(2),
        "the match beside took {took:?}"
    );
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
    let record = against(url).await;
    let errors = errors_of(&record, 0);
    // Every player is asked at every step (x answers `wait` on o's turns).
    assert_eq!(errors.len(), record.moves.len(), "{errors:?}");
    assert!(errors.iter().all(|e| expected(e)), "{errors:?}");
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
    every_move_replaced(Act::Huge(10 * 1024 * 1024), |e| e.starts_with("http:")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_player_that_dies_mid_match() {
    // Plays legally for its first two PLAYs (it is x: mark, then wait), then is gone.
    let (url, _) = scripted(|_, n| match n {
        0 => Act::Reply("READY".into()),
        1 => Act::Reply("(play 2 2)".into()),
        2 => Act::Reply("wait".into()),
        _ => Act::Close,
    })
    .await;
    let record = against(url).await;
    let errors = errors_of(&record, 0);
    assert_eq!(record.moves[0][0], "(play 2 2)");
    assert!(record.errors[0][0].is_empty() && record.errors[1][0].is_empty());
    assert_eq!(errors.len(), record.moves.len() - 2, "{errors:?}");
}

/// Appendix B: the maze game, the manager's requests as the specification shows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_appendix_b_exchange() {
    let rules = "(ROLE ROBOT) (INIT (CELL A)) (INIT (GOLD C)) (INIT (STEP 1))
        (<= (NEXT (CELL ?Y)) (DOES ROBOT MOVE) (TRUE (CELL ?X)) (ADJACENT ?X ?Y))
        (<= (NEXT (CELL ?X)) (DOES ROBOT GRAB) (TRUE (CELL ?X)))
        (<= (NEXT (CELL ?X)) (DOES ROBOT DROP) (TRUE (CELL ?X)))
        (<= (NEXT (GOLD ?X)) (DOES ROBOT MOVE) (TRUE (GOLD ?X)))
        (<= (NEXT (GOLD I)) (DOES ROBOT GRAB) (TRUE (CELL ?X)) (TRUE (GOLD ?X)))
        (<= (NEXT (GOLD I)) (DOES ROBOT GRAB) (TRUE (GOLD I)))
        (<= (NEXT (GOLD ?Y)) (DOES ROBOT GRAB) (TRUE (CELL ?X)) (TRUE (GOLD ?Y)) (DISTINCT ?X ?Y))
        (<= (NEXT (GOLD ?X)) (DOES ROBOT DROP) (TRUE (CELL ?X)) (TRUE (GOLD I)))
        (<= (NEXT (GOLD ?X)) (DOES ROBOT DROP) (TRUE (GOLD ?X)) (DISTINCT ?X I))
        (<= (NEXT (STEP ?Y)) (TRUE (STEP ?X)) (SUCC ?X ?Y))
        (ADJACENT A B) (ADJACENT B C) (ADJACENT C D) (ADJACENT D A)
        (SUCC 1 2) (SUCC 2 3) (SUCC 3 4) (SUCC 4 5) (SUCC 5 6) (SUCC 6 7) (SUCC 7 8) (SUCC 8 9) (SUCC 9 10)
        (<= (LEGAL ROBOT MOVE)) (<= (LEGAL ROBOT GRAB) (TRUE (CELL ?X)) (TRUE (GOLD ?X)))
        (<= (LEGAL ROBOT DROP) (TRUE (GOLD I)))
        (<= (GOAL ROBOT 100) (TRUE (GOLD A))) (<= (GOAL ROBOT 0) (TRUE (GOLD ?X)) (DISTINCT ?X A))
        (<= TERMINAL (TRUE (STEP 10))) (<= TERMINAL (TRUE (GOLD A)))";
    // The player's replies of Appendix B: READY, then MOVE, MOVE, GRAB, MOVE, MOVE, DROP.
    let replies = [
        "READY", "MOVE", "MOVE", "GRAB", "MOVE", "MOVE", "DROP", "DONE",
    ];
    let (url, seen) =
        scripted(move |_, n| Act::Reply(replies.get(n).copied().unwrap_or("DONE").into())).await;
    let mut cfg = config("MATCH.3316980891", rules);
    cfg.start_clock = Duration::from_secs(30);
    cfg.play_clock = Duration::from_secs(30);
    let record = play(cfg, vec![PlayerSpec::Url(url)]).await;
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{:?}",
        record.errors
    );
    assert_eq!(record.goal_values, [100]);
    let seen = seen.lock().unwrap().clone();
    let bodies: Vec<&str> = seen
        .iter()
        .map(|r| r.split_once("\r\n\r\n").unwrap().1)
        .collect();
    // Terms are printed in canonical (lower-case) text; GDL is case-insensitive.
    assert!(
        bodies[0]
            .to_uppercase()
            .starts_with("(START MATCH.3316980891 ROBOT ((ROLE ROBOT) (INIT (CELL A))"),
        "{}",
        bodies[0]
    );
    assert!(bodies[0].ends_with(") 30 30)"));
    assert_eq!(bodies[1], "(PLAY MATCH.3316980891 NIL)");
    assert_eq!(bodies[2], "(PLAY MATCH.3316980891 (move))");
    assert_eq!(bodies[4], "(PLAY MATCH.3316980891 (grab))");
    assert_eq!(bodies.last().unwrap(), &"(STOP MATCH.3316980891 (drop))");
    let head = seen[1].split_once("\r\n\r\n").unwrap().0;
    assert!(head.starts_with("POST / HTTP/1.0\r\n"), "{head}");
    for header in [
        "Sender: GAMEMASTER",
        "Receiver: GAMEPLAYER",
        "Content-Type: text/acl",
        "Content-Length: 27",
    ] {
        assert!(head.contains(header), "{header} in {head}");
    }
}
