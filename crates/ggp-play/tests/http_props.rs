//! Random GGP messages in random HTTP framing, sent to a live player (`ggp_play::serve`, what
//! `ggp player` runs): whatever arrives, nothing panics, and the player answers a well-formed
//! INFO right after.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ggp_play::{PlayerConfig, PlayerLimits, StrategyKind, serve};
use proptest::prelude::*;

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

/// Panics anywhere in the process (a handler's task included, which the runtime would
/// otherwise catch and hide).
static PANICS: AtomicUsize = AtomicUsize::new(0);

/// The player, started once for every case, and its runtime.
fn player() -> SocketAddr {
    static PLAYER: OnceLock<(SocketAddr, tokio::runtime::Runtime)> = OnceLock::new();
    PLAYER
        .get_or_init(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                PANICS.fetch_add(1, Ordering::SeqCst);
                previous(info);
            }));
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let listener = runtime
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .unwrap();
            let address = listener.local_addr().unwrap();
            let mut limits = PlayerLimits::with_memory(1 << 30);
            limits.max_request = 64 << 10;
            limits.body_timeout = Duration::from_secs(2);
            limits.http.header_timeout = Duration::from_secs(2);
            let config = PlayerConfig {
                name: "props".into(),
                factory: StrategyKind::Legal.factory(1),
                margin: Duration::from_millis(100),
                log: false,
                limits,
            };
            runtime.spawn(serve(listener, config, std::future::pending()));
            (address, runtime)
        })
        .0
}

/// Sends `bytes`, closes the sending side, and reads what comes back (at most a few
/// seconds).
fn exchange(address: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(Shutdown::Write);
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    reply
}

/// The player still answers a well-formed INFO: `Err` with what it said otherwise.
fn answers_info(address: SocketAddr) -> Result<(), String> {
    let reply = exchange(
        address,
        b"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: 6\r\n\r\n(INFO)",
    );
    let reply = String::from_utf8_lossy(&reply).into_owned();
    match reply.starts_with("HTTP/1.0 200") && reply.contains("(name props)") {
        true => Ok(()),
        false => Err(reply),
    }
}

/// GGP messages, well-formed and not.
fn message() -> impl Strategy<Value = String> {
    let id = prop_oneof![
        Just("m1".to_string()),
        Just("m2".to_string()),
        "[a-z0-9.]{1,8}",
        "\\PC{0,12}"
    ];
    let clock = prop_oneof![
        (0u64..4).prop_map(|c| c.to_string()),
        Just("86401".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-1".to_string()),
        "\\PC{0,6}",
    ];
    let a_move = prop_oneof![
        (1u8..4, 1u8..4).prop_map(|(x, y)| format!("(play {x} {y})")),
        Just("noop".to_string()),
        Just("((((".to_string()),
        "\\PC{0,10}",
    ];
    let moves = prop_oneof![
        Just("NIL".to_string()),
        prop::collection::vec(a_move, 0..3).prop_map(|ms| format!("({})", ms.join(" "))),
    ];
    prop_oneof![
        (
            id.clone(),
            prop::sample::select(vec!["x", "o", "z"]),
            clock.clone(),
            clock
        )
            .prop_map(|(id, role, s, p)| format!("(START {id} {role} ({TICTACTOE}) {s} {p})")),
        (id.clone(), moves.clone()).prop_map(|(id, m)| format!("(PLAY {id} {m})")),
        (id.clone(), moves).prop_map(|(id, m)| format!("(STOP {id} {m})")),
        id.prop_map(|id| format!("(ABORT {id})")),
        Just("(INFO)".to_string()),
        Just("(START m3 x ((role x) (<= (legal x ?m)) ) 1 1)".to_string()),
        "[()a-zA-Z0-9 ?]{0,40}",
        "\\PC{0,60}",
        (1usize..200).prop_map(|n| format!("{}(INFO{}", "(".repeat(n), ")".repeat(n / 2))),
    ]
}

/// A message as a manager sends it, or framed any way at all.
fn request() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => (message(), prop::sample::select(vec!["HTTP/1.0", "HTTP/1.1"])).prop_map(
            |(body, version)| {
                format!(
                    "POST / {version}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes()
            }
        ),
        2 => framed(),
    ]
}

/// A message framed as a request, correctly or not.
fn framed() -> impl Strategy<Value = Vec<u8>> {
    let method = prop::sample::select(vec!["POST", "GET", "OPTIONS", "PUT", "post", "P\0ST"]);
    let version = prop::sample::select(vec!["HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "HTTP/9", ""]);
    let length = prop_oneof![
        Just(None),
        Just(Some(LengthIs::Right)),
        (0usize..100).prop_map(|n| Some(LengthIs::Off(n))),
        Just(Some(LengthIs::Text("-5".to_string()))),
        Just(Some(LengthIs::Text("99999999999999999999999".to_string()))),
        Just(Some(LengthIs::Text("1e3".to_string()))),
        Just(Some(LengthIs::Twice)),
    ];
    let chunked = any::<bool>();
    let garbage = prop::collection::vec(any::<u8>(), 0..40);
    (
        method,
        version,
        length,
        chunked,
        message(),
        garbage,
        any::<bool>(),
    )
        .prop_map(
            |(method, version, length, chunked, body, garbage, as_path)| {
                let mut out = Vec::new();
                let path = if as_path && body.len() < 200 {
                    format!("/{}", body.replace(' ', "%20"))
                } else {
                    "/".to_string()
                };
                out.extend(format!("{method} {path} {version}\r\nHost: p\r\n").as_bytes());
                match length {
                    None => {}
                    Some(LengthIs::Right) => {
                        out.extend(format!("Content-Length: {}\r\n", body.len()).as_bytes())
                    }
                    Some(LengthIs::Off(n)) => {
                        out.extend(format!("Content-Length: {}\r\n", body.len() + n).as_bytes())
                    }
                    Some(LengthIs::Text(t)) => {
                        out.extend(format!("Content-Length: {t}\r\n").as_bytes())
                    }
                    Some(LengthIs::Twice) => out.extend(
                        format!("Content-Length: 1\r\nContent-Length: {}\r\n", body.len())
                            .as_bytes(),
                    ),
                }
                if chunked {
                    out.extend(b"Transfer-Encoding: chunked\r\n\r\n");
                    out.extend(format!("{:x}\r\n", body.len()).as_bytes());
                    out.extend(body.as_bytes());
                    out.extend(b"\r\n");
                    out.extend(&garbage);
                    out.extend(b"0\r\n\r\n");
                } else {
                    out.extend(b"\r\n");
                    out.extend(body.as_bytes());
                    out.extend(&garbage);
                }
                out
            },
        )
}

#[derive(Clone, Debug)]
enum LengthIs {
    Right,
    Off(usize),
    Text(String),
    Twice,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn whatever_arrives_the_player_answers_after(requests in prop::collection::vec(request(), 1..4)) {
        let address = player();
        for request in &requests {
            exchange(address, request);
        }
        prop_assert_eq!(answers_info(address), Ok(()));
        prop_assert_eq!(PANICS.load(Ordering::SeqCst), 0);
    }
}

/// Bytes that are not HTTP at all, and a request cut short: answered or closed, never held.
#[test]
fn bytes_that_are_not_requests_are_closed() {
    let address = player();
    for bytes in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"GET",
        b"\r\n\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n(INFO",
    ] {
        let started = std::time::Instant::now();
        exchange(address, bytes);
        assert!(started.elapsed() < Duration::from_secs(4), "{bytes:?}");
    }
    assert_eq!(answers_info(address), Ok(()));
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}
