//! The resource limits of `ggp serve` and `ggp player` (docs/limits.md), through the binary:
//! what a stranger who can open a connection can make them spend, and the answer each limit
//! gives.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// A small game whose legal moves explode: 100 facts `(d ?)`, a rule joining six of them
/// (10^12 tuples), legal moves made of all six.
fn exploding_game() -> String {
    let facts: String = (0..100).map(|i| format!("(d {i})\n")).collect();
    format!(
        "(role a) (role b)
{facts}(init (on))
(<= (big ?a ?b ?c ?e ?f ?g) (d ?a) (d ?b) (d ?c) (d ?e) (d ?f) (d ?g))
(<= (legal a (go ?a ?b ?c ?e ?f ?g)) (true (on)) (big ?a ?b ?c ?e ?f ?g))
(<= (legal b (go ?a)) (true (on)) (big ?a ?b ?c ?e ?f ?g))
(<= (next (on)) (true (on)))
(<= terminal (not (true (on))))
(goal a 50) (goal b 50)
"
    )
}

/// The peak resident memory of a process, from `/proc` (Linux), in bytes.
fn peak_memory(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

const GIB: u64 = 1 << 30;

#[test]
fn twenty_matches_of_an_exploding_game_stay_within_the_server_s_memory() {
    let db = temp_db("limits-explode.sqlite");
    let server = spawn_server(&db, &["--max-memory", "1GiB", "--match-memory", "64MiB"]);
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());
    let (status, kept) = api(
        "POST",
        &url("/api/games"),
        admin,
        Some(json!({"key": "explode", "rules": exploding_game()})),
    );
    assert_eq!(status, 201, "{kept}");
    // Twenty at once, before the game's trial has measured it: each match's first share
    // (three engines of 16 MiB, half as much again) is more than a match's budget of 64 MiB,
    // so it holds 64 MiB, and the matches' memory (three quarters of 1 GiB) lets in twelve at
    // most (fewer while the trial holds a budget too); the others are told why not.
    let asked: Vec<_> = (0..20)
        .map(|_| {
            let url = url("/api/matches");
            let token = server.token.clone();
            std::thread::spawn(move || {
                api(
                    "POST",
                    &url,
                    Some(&token),
                    Some(json!({"game": "explode", "players": ["random", "random"],
                                "startclock": 5, "playclock": 2})),
                )
            })
        })
        .collect();
    let answers: Vec<(u16, Value)> = asked.into_iter().map(|t| t.join().unwrap()).collect();
    let mut started = Vec::new();
    for (status, body) in &answers {
        match status {
            201 => started.push(body["id"].as_str().unwrap().to_string()),
            503 => assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .contains("the matches running hold the server's memory for matches"),
                "{body}"
            ),
            409 => assert!(
                body["error"].as_str().unwrap().contains("cannot be played"),
                "{body}"
            ),
            other => panic!("{other}: {body}"),
        }
    }
    assert!(started.len() <= 12, "{answers:?}");
    assert!(answers.iter().any(|(s, _)| *s == 503), "{answers:?}");
    // Each match that started ends, aborted with the budget it met (or, failing before its
    // first step, not started, saying why).
    for id in &started {
        let reason = wait_for(120, || {
            let (status, m) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
            match status {
                200 if m["status"] == "aborted" => Some(m["abortReason"].to_string()),
                200 if m["status"] == "live" => None,
                409 => Some(m["error"].to_string()),
                404 => None,
                _ => panic!("{status}: {m}"),
            }
        });
        assert!(
            reason.contains("memory") || reason.contains("budget exceeded"),
            "{reason}"
        );
    }
    // The trial marks the game unplayable: the next match is refused at once, saying why.
    let engine = wait_for(120, || {
        let (_, g) = api("GET", &url("/api/games/explode"), None, None);
        g["engine"].as_str().map(str::to_string)
    });
    assert!(engine.starts_with("unplayable: "), "{engine}");
    let (status, refused) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(json!({"game": "explode", "players": ["random", "random"],
                    "startclock": 5, "playclock": 2})),
    );
    assert_eq!(status, 409, "{refused}");
    let peak = peak_memory(server.child.id()).unwrap();
    assert!(peak < GIB, "peak resident memory {peak} bytes");
}

/// Starts `ggp player` with `args` (after `player`) and `global` options before it, on a free
/// port under a limit of 1,024 open files; its URL and process id.
fn spawn_limited_player(global: &[&str], args: &[&str]) -> (Spawned, String, u32) {
    let mut all: Vec<&str> = global.to_vec();
    all.extend(["player", "--port", "0", "--strategy", "random"]);
    all.extend(args);
    let mut child = limited(&all)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let address = common::listening_address(&mut stderr);
    drain_into(stderr, Default::default());
    (Spawned(child), format!("http://{address}"), pid)
}

/// `ggp ARGS` under `ulimit -n 1024` (the shell execs it: the process id is ggp's).
fn limited(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 1024 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ggp"))
        .args(args)
        .current_dir(workspace())
        .env("XDG_DATA_HOME", data_home());
    command
}

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

#[test]
fn a_player_refuses_what_it_cannot_hold_and_serves_within_its_memory() {
    let (player, url, pid) =
        spawn_limited_player(&["--max-memory", "512MiB"], &["--session-memory", "128MiB"]);
    // Three 50 MB STARTs at once: refused by size, none read past the limit.
    let huge = format!(
        "(START big a ((role a) {} ) 10 5)",
        "(junk 0123456789) ".repeat(50_000_000 / 18)
    );
    let sent: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            let huge = huge.clone();
            std::thread::spawn(move || post_large(&url, huge.into_bytes()))
        })
        .collect();
    for t in sent {
        let (status, body) = t.join().unwrap();
        assert_eq!(status, 413, "{body}");
        assert!(body.contains("larger than 4 MiB"), "{body}");
    }
    // The sessions share three quarters of 512 MiB (384 MiB), each up to 128 MiB. Three
    // games whose legal moves explode: each move fails within its session's budget, or when
    // the sessions' memory is taken, saying which.
    let rules = exploding_game();
    for k in 0..3 {
        let (status, body) = post(&url, format!("(START m{k} a ({rules}) 10 5)").as_bytes());
        assert_eq!((status, body.as_str()), (200, "READY"));
    }
    let moves: Vec<_> = (0..3)
        .map(|k| {
            let url = url.clone();
            std::thread::spawn(move || post(&url, format!("(PLAY m{k} NIL)").as_bytes()))
        })
        .collect();
    for m in moves {
        let (status, body) = m.join().unwrap();
        assert_eq!(status, 500, "{body}");
        assert!(
            body.contains("MiB of memory, the budget of the session of match m")
                || body.contains("the 384 MiB shared with the others at work is taken"),
            "{body}"
        );
    }
    // A fourth START while they are kept: a share is left for it, and its match is played.
    let (status, body) = post(&url, format!("(START m3 x ({TICTACTOE}) 10 5)").as_bytes());
    assert_eq!((status, body.as_str()), (200, "READY"));
    let (status, body) = post(&url, b"(PLAY m3 NIL)");
    assert_eq!(status, 200, "{body}");
    let peak = peak_memory(pid).unwrap();
    assert!(peak < 512 << 20, "peak resident memory {peak} bytes");
    drop(player);
}

/// POSTs a body larger than the receiver reads: the body is written on a thread of its own
/// (its write fails once the receiver has answered and closed) while the answer is read.
fn post_large(url: &str, body: Vec<u8>) -> (u16, String) {
    let address = url.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sent = std::thread::spawn(move || {
        let head = format!(
            "POST / HTTP/1.1\r\nHost: {address}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let _ = writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&body));
    });
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    // Until the answer is complete (its length is in its head), the end, or a reset after it.
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&reply);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| {
                    l.strip_prefix("content-length:")
                        .map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse::<usize>().ok());
            if length.is_some_and(|n| body.len() >= n) {
                break;
            }
        }
    }
    drop(stream);
    let _ = sent.join();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

/// Opens `n` connections to `address` and sends nothing on them.
fn idle_connections(address: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect(address).ok())
        .collect()
}

/// The time a GET of `path` takes to be answered 200 on a new connection.
fn answered_in(address: &str, path: &str) -> Duration {
    let asked = Instant::now();
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.starts_with("HTTP/1.") && reply[8..].starts_with(" 200"),
        "{reply}"
    );
    asked.elapsed()
}

/// Whether this test process may open `n` more descriptors (the clients of the tests below).
fn may_open(n: usize) -> bool {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|s| s.parse::<usize>().ok());
    let ok = soft.is_none_or(|s| s > n + 256);
    if !ok {
        eprintln!(
            "skipped: this test process may open {soft:?} files, fewer than {n} clients need"
        );
    }
    ok
}

#[test]
fn idle_connections_do_not_keep_a_request_out_of_either_server() {
    if !may_open(1100) {
        return;
    }
    let (_player, url, _) = spawn_limited_player(&[], &[]);
    let address = url.trim_start_matches("http://").to_string();
    let idle = idle_connections(&address, 1100);
    assert!(idle.len() >= 1000, "only {} connections opened", idle.len());
    let took = answered_in(&address, "/(INFO)");
    assert!(took < Duration::from_secs(1), "INFO took {took:?}");
    drop(idle);

    let db = temp_db("limits-idle.sqlite");
    let mut child = limited(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
        "--admin-token",
        ADMIN_TOKEN,
    ])
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let address = {
        use std::io::BufRead;
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let address = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "ggp serve ended");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split('/').next().unwrap().to_string();
            }
        };
        drain_into(stderr, Default::default());
        address
    };
    let _server = Spawned(child);
    let idle = idle_connections(&address, 1100);
    assert!(idle.len() >= 1000, "only {} connections opened", idle.len());
    let took = answered_in(&address, "/api/games");
    assert!(took < Duration::from_secs(1), "/api/games took {took:?}");
    drop(idle);
}

#[test]
fn wrong_tokens_slow_their_sender_down() {
    let db = temp_db("limits-throttle.sqlite");
    let server = spawn_server(&db, &[]);
    let url = format!("{}/api/games", server.url);
    let guess = |token: &str| {
        api(
            "POST",
            &url,
            Some(token),
            Some(json!({"key": "g", "rules": TICTACTOE})),
        )
    };
    for k in 0..5 {
        assert_eq!(guess(&format!("wrong-guess-{k}")).0, 401);
    }
    // Made to wait, whatever the token, even the right one; told how long.
    for token in ["wrong-guess-5", ADMIN_TOKEN] {
        let (status, headers, body) = http(
            "POST",
            &url,
            Some(token),
            Some(&json!({"key": "g", "rules": TICTACTOE}).to_string()),
        );
        assert_eq!(status, 429, "{body}");
        assert!(
            body.contains("too many wrong tokens from this address"),
            "{body}"
        );
        assert!(
            headers.iter().any(|(k, v)| k == "retry-after" && v == "1"),
            "{headers:?}"
        );
    }
    // What needs no token is served meanwhile.
    assert_eq!(api("GET", &url, None, None).0, 200);
    // After the wait, the right token works.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(guess(ADMIN_TOKEN).0, 201);
}

#[test]
fn the_server_s_own_rounds_cannot_be_made_constant() {
    for (flag, value) in [("--ping-interval", "0.0000001"), ("--dead-after", "0.001")] {
        let out = ggp(&["serve", flag, value, "--admin-token", ADMIN_TOKEN]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            text(&out.stderr).contains("less than 1 s, the least accepted"),
            "{}",
            text(&out.stderr)
        );
    }
}
