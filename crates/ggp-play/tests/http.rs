//! The HTTP player over loopback, spoken to as a Game Manager would: raw HTTP/1.0 requests
//! with the headers of Appendix B.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ggp_play::{Game, PlayerConfig, Strategy, StrategyKind, serve};

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

/// Sends one request; returns the status code, the headers (lower-case names) and the body.
fn send(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.0\r\nAccept: text/delim\r\nSender: GAMEMASTER\r\nReceiver: GAMEPLAYER\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn post(addr: SocketAddr, body: &str) -> (u16, String) {
    let (status, _, body) = send(addr, "POST", "/", body);
    (status, body)
}

/// A running player; dropping it stops the server and its runtime.
struct Player {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _runtime: tokio::runtime::Runtime,
}

impl Drop for Player {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn start_player(config: PlayerConfig) -> Player {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    runtime.spawn(serve(listener, config, async move {
        let _ = rx.await;
    }));
    Player {
        addr,
        stop: Some(tx),
        _runtime: runtime,
    }
}

fn config(name: &str) -> PlayerConfig {
    PlayerConfig {
        name: name.into(),
        factory: StrategyKind::Legal.factory(1),
        margin: Duration::from_millis(500),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    }
}

#[test]
fn a_whole_match_of_tictactoe() {
    let player = start_player(config("legal-test"));
    let addr = player.addr;
    assert_eq!(
        post(addr, "(INFO)"),
        (200, "((name legal-test) (status available))".into())
    );
    let start = format!("(START m.1 x ({TICTACTOE}) 10 5)");
    assert_eq!(post(addr, &start), (200, "READY".into()));
    // The legal player takes the first legal move in canonical order.
    assert_eq!(post(addr, "(PLAY m.1 NIL)"), (200, "(play 1 1)".into()));
    assert_eq!(
        post(addr, "(PLAY m.1 ((PLAY 1 1) WAIT))"),
        (200, "wait".into())
    );
    assert_eq!(
        post(addr, "(play m.1 (wait (play 2 2)))"),
        (200, "(play 1 2)".into())
    );
    assert_eq!(
        post(addr, "(STOP m.1 ((play 1 2) wait))"),
        (200, "DONE".into())
    );
    // The match is over: the player no longer knows it, and says it is busy, as ggp-base's
    // players do (a manager reads that as the answer it is, not as a move).
    assert_eq!(post(addr, "(PLAY m.1 NIL)"), (200, "BUSY".into()));
}

#[test]
fn replies_have_the_protocol_headers_and_get_and_options_work() {
    let player = start_player(config("p"));
    let (status, head, body) = send(player.addr, "POST", "/", "(INFO)");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/acl"), "{head}");
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert_eq!(body, "((name p) (status available))");
    let (status, _, body) = send(player.addr, "GET", "/(INFO)", "");
    assert_eq!(
        (status, body.as_str()),
        (200, "((name p) (status available))")
    );
    let (status, _, body) = send(player.addr, "GET", "/?(PLAY%20unknown%20NIL)", "");
    assert_eq!((status, body.as_str()), (200, "BUSY"));
    let (status, head, _) = send(player.addr, "OPTIONS", "/", "");
    assert_eq!(status, 200);
    assert!(
        head.contains("access-control-allow-methods: post, get, options"),
        "{head}"
    );
}

#[test]
fn bad_requests_are_refused_with_a_reason() {
    let player = start_player(config("p"));
    let addr = player.addr;
    let (status, body) = post(addr, "(PLAY m.1");
    assert_eq!(status, 400);
    assert!(body.starts_with("cannot read the request:"), "{body}");
    let (status, body) = post(addr, "(START m r ((role x) (<= (legal x ?m))) 1 1)");
    assert_eq!(status, 400);
    assert!(body.contains("cannot play these rules"), "{body}");
    let start = format!("(START m y ({TICTACTOE}) 10 5)");
    let (status, body) = post(addr, &start);
    assert_eq!(status, 400);
    assert!(body.contains("`y` is not a role"), "{body}");
    let start = format!("(START m o ({TICTACTOE}) 10 5)");
    assert_eq!(post(addr, &start).0, 200);
    let (status, body) = post(addr, "(PLAY m (wait))");
    assert_eq!(status, 400);
    assert!(body.contains("1 moves for 2 roles"), "{body}");
    assert_eq!(post(addr, "(ABORT m)"), (200, "ABORTED".into()));
}

/// A strategy that thinks for a while.
struct Slow;

impl Strategy for Slow {
    fn select(
        &mut self,
        game: &mut Game,
        _deadline: Instant,
    ) -> Result<gdl_reason::TermId, ggp_play::PlayError> {
        std::thread::sleep(Duration::from_millis(1500));
        Ok(game.legal_moves()?[0])
    }
}

#[test]
fn info_is_answered_while_the_player_thinks() {
    let player = start_player(PlayerConfig {
        name: "slow".into(),
        factory: Arc::new(|| Box::new(Slow) as Box<dyn Strategy>),
        margin: Duration::from_millis(100),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    });
    let addr = player.addr;
    let start = format!("(START m x ({TICTACTOE}) 10 5)");
    assert_eq!(post(addr, &start).0, 200);
    let thinking = std::thread::spawn(move || post(addr, "(PLAY m NIL)"));
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    assert_eq!(post(addr, "(INFO)").0, 200);
    assert!(
        asked.elapsed() < Duration::from_millis(1000),
        "INFO waited for the move"
    );
    assert_eq!(thinking.join().unwrap().0, 200);
}

/// Sends raw bytes as a POST body; returns the status code.
fn post_bytes(addr: SocketAddr, body: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST / HTTP/1.0\r\nContent-type: text/acl\r\nContent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response);
    response.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// S-expressions shaped like requests, with any atoms: commands, ids, numbers of any size.
fn request_like() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let atom = prop_oneof![
        Just("START".to_string()),
        Just("PLAY".to_string()),
        Just("STOP".to_string()),
        Just("ABORT".to_string()),
        Just("INFO".to_string()),
        Just("PREVIEW".to_string()),
        Just("NIL".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-1".to_string()),
        Just("x".to_string()),
        Just("m1".to_string()),
        "[a-zA-Z0-9?._]{1,6}",
    ];
    let leaf = atom.prop_map(|a| a.to_string());
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop::collection::vec(inner, 0..7).prop_map(|items| format!("({})", items.join(" ")))
    })
}

#[test]
fn any_request_gets_an_answer_and_the_player_goes_on() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let player = start_player(config("fuzzed"));
    let addr = player.addr;
    // Deterministic, so that a failure here fails the same way again.
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 300,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let bytes = prop::collection::vec(any::<u8>(), 0..300);
    runner
        .run(&bytes, |body| {
            let status = post_bytes(addr, &body);
            prop_assert!(status == 200 || status == 400, "{status}");
            Ok(())
        })
        .unwrap();
    // A match under way, so that PLAY, STOP and ABORT for `m1` reach one (until one of them
    // ends it).
    assert_eq!(
        post(addr, &format!("(START m1 x ({TICTACTOE}) 10 5)")),
        (200, "READY".into())
    );
    runner
        .run(&request_like(), |request| {
            let status = post_bytes(addr, request.as_bytes());
            prop_assert!(status == 200 || status == 400, "{status} for {request}");
            Ok(())
        })
        .unwrap();
    assert_eq!(
        post(addr, "(INFO)"),
        (200, "((name fuzzed) (status available))".into())
    );
}

#[test]
fn a_second_play_while_a_move_is_chosen_is_refused_not_queued() {
    let player = start_player(PlayerConfig {
        name: "slow".into(),
        factory: Arc::new(|| Box::new(Slow) as Box<dyn Strategy>),
        margin: Duration::from_millis(100),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    });
    let addr = player.addr;
    assert_eq!(
        post(addr, &format!("(START m x ({TICTACTOE}) 10 5)")).0,
        200
    );
    let thinking = std::thread::spawn(move || post(addr, "(PLAY m NIL)"));
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    for _ in 0..20 {
        let (status, body) = post(addr, "(PLAY m NIL)");
        assert_eq!(status, 409, "{body}");
        assert_eq!(
            body,
            "match m: a move is being chosen already, for an earlier PLAY"
        );
    }
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(thinking.join().unwrap(), (200, "(play 1 1)".into()));
    // Once answered, the next PLAY is taken.
    assert_eq!(post(addr, "(PLAY m ((play 1 1) wait))").0, 200);
}

fn limited(change: impl FnOnce(&mut ggp_play::PlayerLimits)) -> PlayerConfig {
    let mut limits = ggp_play::PlayerLimits::with_memory(256 << 20);
    change(&mut limits);
    PlayerConfig {
        limits,
        ..config("limited")
    }
}

#[test]
fn a_session_whose_manager_vanished_is_dropped() {
    // No margin beyond the clocks: a match of clocks 0 is forgotten within the second.
    let player = start_player(limited(|l| l.idle_margin = Duration::from_millis(500)));
    let addr = player.addr;
    assert_eq!(
        post(addr, &format!("(START gone x ({TICTACTOE}) 0 0)")).0,
        200
    );
    let (status, body) = post(addr, "(PLAY gone NIL)");
    assert_eq!((status, body.as_str()), (200, "(play 1 1)"));
    std::thread::sleep(Duration::from_millis(2500));
    // The match it forgot is unknown now: a PLAY for it is answered `BUSY`.
    assert_eq!(post(addr, "(PLAY gone NIL)"), (200, "BUSY".into()));
    // One whose manager keeps talking stays.
    assert_eq!(
        post(addr, &format!("(START kept x ({TICTACTOE}) 0 1)")).0,
        200
    );
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(post(addr, "(PLAY kept NIL)").0, 200);
    }
}

#[test]
fn starts_are_refused_for_their_clocks_first_then_for_room() {
    // Room for one session (its first share of 16 MiB of 24 MiB), two per address.
    let player = start_player(limited(|l| {
        l.memory = ggp_memory::Pool::new(24 << 20);
        l.session_memory = 24 << 20;
        l.max_sessions_per_address = 2;
    }));
    let addr = player.addr;
    assert_eq!(
        post(addr, &format!("(START a x ({TICTACTOE}) 10 5)")).0,
        200
    );
    // The clocks are read before the memory is looked at.
    let (status, body) = post(addr, &format!("(START b x ({TICTACTOE}) 86401 5)"));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("longer than a day"), "{body}");
    let (status, head, body) = send(
        addr,
        "POST",
        "/",
        &format!("(START b x ({TICTACTOE}) 10 5)"),
    );
    assert_eq!(status, 503, "{body}");
    assert!(head.contains("retry-after: 5"), "{head}");
    assert!(
        body.starts_with("cannot start match b: the player's memory is taken"),
        "{body}"
    );
    // Another share: a second session of this address, then no third.
    let player = start_player(limited(|l| l.max_sessions_per_address = 2));
    let addr = player.addr;
    for id in ["a", "b"] {
        assert_eq!(
            post(addr, &format!("(START {id} x ({TICTACTOE}) 10 5)")).0,
            200
        );
    }
    let (status, body) = post(addr, &format!("(START c x ({TICTACTOE}) 10 5)"));
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body,
        "cannot start match c: this address plays 2 matches with the player already, the most it may"
    );
}
