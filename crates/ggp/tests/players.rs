//! The search players end to end: `ggp player --strategy mcts` under `ggp match` on every kind
//! of game, answers within a 2 s play clock on the largest corpus games, and `ggp arena`.
//! Games other than the shipped tic-tac-toe come from the corpus (`../shared`); those tests
//! skip, saying so, without it.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn ggp_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ggp"));
    command
        .args(args)
        .current_dir(workspace())
        .env("XDG_DATA_HOME", tmp("data"));
    command
}

fn ggp(args: &[&str]) -> Output {
    ggp_command(args).output().expect("run ggp")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// This file's scratch folder.
fn tmp_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("players")
}

fn tmp(name: &str) -> PathBuf {
    let dir = tmp_dir();
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `ggp player --strategy mcts` on a free port; the process, its address and its log (the
/// rest of its standard error, read on a thread).
fn spawn_mcts() -> (Child, String, std::sync::mpsc::Receiver<String>) {
    let mut child = ggp_command(&[
        "player",
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--strategy",
        "mcts",
    ])
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let address = line
        .split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let (send, log) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    (child, address, log)
}

/// One GGP request over HTTP; the reply's body and how long it took.
fn request(address: &str, body: &str) -> (String, Duration) {
    let asked = Instant::now();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let took = asked.elapsed();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (body, took)
}

/// `ggp match` of `game` with the MCTS player at `url` in the first role and random players
/// in the others (a 1 s play clock); the record, as exported from the database.
fn match_against_random(
    game: &str,
    roles: usize,
    start_clock: &str,
    url: &str,
    id: &str,
) -> serde_json::Value {
    let db = ggp_testdata::fresh_sqlite_file(&tmp_dir(), &format!("{id}.sqlite"));
    let mut args = vec![
        "match",
        game,
        "--startclock",
        start_clock,
        "--playclock",
        "1",
        "--db",
        db.to_str().unwrap(),
        "--id",
        id,
        "--player",
        url,
    ];
    for _ in 1..roles {
        args.extend(["--player", "random"]);
    }
    let out = ggp(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{game}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = ggp(&["matches", "export", id, "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The errors recorded for role 0 (the MCTS player) in a record.
fn errors_of_first(record: &serde_json::Value) -> Vec<String> {
    record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[0].as_str().unwrap().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

#[test]
fn the_mcts_player_plays_every_kind_of_game_over_http() {
    let (mut player, address, log) = spawn_mcts();
    let url = format!("http://{address}");
    // Two roles in turn; on the fast engine.
    let mut games = vec![("games/tictactoe.kif".to_string(), 2, "1", "ttt")];
    if let Some(shared) = ggp_testdata::shared_or_skip("every kind of corpus game") {
        let base = shared.join("corpus/games/base");
        let path = |g: &str| base.join(g).to_string_lossy().into_owned();
        games.extend([
            // Simultaneous moves.
            (path("ticTacToeParallel.kif"), 2, "1", "parallel"),
            // Three roles.
            (path("tictactoe_3player.kif"), 3, "1", "three"),
            // One role: a small puzzle.
            (path("buttons.kif"), 1, "1", "puzzle"),
            // On the reference engine (the fast one refuses it at once: a fact with variables).
            (
                shared
                    .join("corpus/games/ric2b-ggp-base/graphColouring1.kif")
                    .to_string_lossy()
                    .into_owned(),
                1,
                "1",
                "reference",
            ),
        ]);
    }
    // The matches at once (the player plays any number): each a `ggp match` process.
    let runs: Vec<_> = games
        .iter()
        .map(|&(ref game, roles, start_clock, id)| {
            let (game, id, url) = (game.clone(), id.to_string(), url.clone());
            std::thread::spawn(move || {
                let record =
                    match_against_random(&game, roles, start_clock, &url, &format!("kinds-{id}"));
                (id, record)
            })
        })
        .collect();
    let records: Vec<(String, serde_json::Value)> =
        runs.into_iter().map(|r| r.join().unwrap()).collect();
    // INFO reports the last move's search.
    let (info, _) = request(&address, "(INFO)");
    player.kill().unwrap();
    player.wait().unwrap();
    let log: Vec<String> = log.try_iter().collect();
    for (id, record) in &records {
        assert_eq!(record["isCompleted"], true, "{id}: {record}");
        assert_eq!(errors_of_first(record), Vec::<String>::new(), "{id}");
        // Every move of the player is in its log, with what the search did.
        let mine = log
            .iter()
            .filter(|l| l.contains(&format!("kinds-{id}:")))
            .count();
        assert_eq!(
            mine,
            record["moves"].as_array().unwrap().len(),
            "{id}: {log:?}"
        );
    }
    // The small puzzle (a few hundred simulations solve it) is solved.
    if let Some((_, puzzle)) = records.iter().find(|(id, _)| id == "puzzle") {
        assert_eq!(puzzle["goalValues"], serde_json::json!([100]));
    }
    assert!(
        log.iter()
            .any(|l| l.contains("simulations in") && l.contains("nodes")),
        "{log:?}"
    );
    assert!(info.contains("(simulations "), "{info}");
}

#[test]
fn the_mcts_player_answers_within_a_two_second_clock_on_the_largest_games() {
    let Some(shared) = ggp_testdata::shared_or_skip("largest games within the clock") else {
        return;
    };
    let (mut player, address, _log) = spawn_mcts();
    let base = shared.join("corpus/games/base");
    // Chess (the reference engine plays it: the fast engine cannot ground it) and a game of
    // six roles.
    for (game, role) in [("chess.kif", "white"), ("chineseCheckers6.kif", "red")] {
        let rules = std::fs::read_to_string(base.join(game)).unwrap();
        let id = format!("clock-{game}");
        let (ready, _) = request(&address, &format!("(START {id} {role} ({rules}) 3 2)"));
        assert_eq!(ready.trim(), "READY", "{game}");
        let (reply, took) = request(&address, &format!("(PLAY {id} NIL)"));
        assert!(
            took < Duration::from_secs(2),
            "{game}: the move came after {took:?}"
        );
        assert!(reply.trim().starts_with('('), "{game}: {reply}");
        request(&address, &format!("(ABORT {id})"));
    }
    player.kill().unwrap();
    player.wait().unwrap();
}

#[test]
fn an_arena_rotates_seats_and_reports_every_player() {
    let json = tmp("arena.json");
    let db = ggp_testdata::fresh_sqlite_file(&tmp_dir(), "arena.sqlite");
    let out = ggp(&[
        "arena",
        "games/tictactoe.kif",
        "--player",
        "mcts",
        "--player",
        "random",
        "--matches",
        "2",
        "--startclock",
        "1",
        "--playclock",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("sims/s"), "{stdout}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(results["game"], "tictactoe");
    assert_eq!(results["matches"], 2);
    let players = results["players"].as_array().unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[0]["player"], "mcts");
    assert_eq!(players[1]["player"], "random");
    for p in players {
        let count: u64 = ["wins", "draws", "losses"]
            .iter()
            .map(|k| p[k].as_u64().unwrap())
            .sum();
        assert_eq!(count, 2, "{p}");
        assert!(p["ci95"].as_f64().is_some(), "{p}");
    }
    // Tic-tac-toe is solved in a second: MCTS never loses it.
    assert_eq!(players[0]["losses"], 0, "{results}");
    assert!(players[0]["mean"].as_f64().unwrap() >= 50.0, "{results}");
    assert!(players[0]["sims_per_sec"].as_f64().is_some(), "{results}");
    // Every rollout is an iteration of the search, and tic-tac-toe's tree soon holds the
    // game's ends: many iterations end in a known node without a rollout.
    let iterations = players[0]["iterations_per_sec"].as_f64().unwrap();
    assert!(
        iterations > players[0]["sims_per_sec"].as_f64().unwrap(),
        "{results}"
    );
    // The random player searches not at all.
    assert_eq!(
        players[1]["iterations_per_sec"].as_f64().unwrap_or(0.0),
        0.0,
        "{results}"
    );
    // Both matches are in the database, with the seats rotated.
    let out = ggp(&["matches", "list", "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list = text(&out.stdout);
    assert!(
        list.contains("mcts 100, random 0") || list.contains("mcts 50, random 50"),
        "{list}"
    );
    assert!(
        list.contains("random 0, mcts 100") || list.contains("random 50, mcts 50"),
        "{list}"
    );
    // A player too many is refused.
    let out = ggp(&[
        "arena",
        "games/tictactoe.kif",
        "--player",
        "mcts",
        "--player",
        "random",
        "--player",
        "legal",
        "--no-db",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("2 roles, but 3 players"),
        "{}",
        text(&out.stderr)
    );
}
