//! The `ggp` binary end to end: exit codes, output formats and error messages of its commands
//! on the project's own games.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::{
    array_len, data_home, export, ggp, ggp_command, spawn_player, stalling_player, temp_db,
    temp_file, text,
};

/// `ggp replay` of the shipped tic-tac-toe with a moves file.
fn replay_moves(moves: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "replay",
        "games/tictactoe.kif",
        "--moves",
        moves.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ggp(&args)
}

#[test]
fn the_shipped_game_is_clean_and_formatted() {
    let out = ggp(&["check", "games/tictactoe.kif"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = ggp(&["fmt", "--check", "games/tictactoe.kif"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn random_replay_prints_one_json_line_per_state_and_is_seeded() {
    let out = ggp(&[
        "replay",
        "games/tictactoe.kif",
        "--random",
        "50",
        "--seed",
        "7",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.len() >= 6,
        "a tic-tac-toe game has at least five moves"
    );
    for line in &lines[..lines.len() - 1] {
        assert_eq!(line["terminal"], false);
        assert_eq!(line["moves"].as_array().unwrap().len(), 2);
        assert!(line["legal"]["x"].is_array() && line["legal"]["o"].is_array());
    }
    let last = lines.last().unwrap();
    assert_eq!(last["terminal"], true, "50 moves is more than a game lasts");
    assert!(last["moves"].is_null());
    let values: Vec<&str> = ["x", "o"]
        .iter()
        .map(|r| last["goals"][r][0].as_str().unwrap())
        .collect();
    assert!(
        matches!(
            values.as_slice(),
            ["100", "0"] | ["0", "100"] | ["50", "50"]
        ),
        "{values:?}"
    );
    let again = ggp(&[
        "replay",
        "games/tictactoe.kif",
        "--random",
        "50",
        "--seed",
        "7",
    ]);
    assert_eq!(
        again.stdout, out.stdout,
        "the same seed plays the same game"
    );
}

#[test]
fn replaying_a_moves_file_reproduces_the_random_game() {
    let random = text(
        &ggp(&[
            "replay",
            "games/tictactoe.kif",
            "--random",
            "3",
            "--seed",
            "2",
        ])
        .stdout,
    );
    let moves: String = random
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let m = v["moves"]
                .as_array()?
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect::<Vec<_>>();
            Some(format!("({})\n", m.join(" ")))
        })
        .collect();
    let file = temp_file("three.moves", &moves);
    let out = replay_moves(&file, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), random);
    let pretty = text(&replay_moves(&file, &["--pretty"]).stdout);
    assert!(pretty.starts_with("state 0\n  (mover x)\n"), "{pretty}");
    assert!(pretty.contains("  legal o: wait\n"), "{pretty}");
}

#[test]
fn a_gdl2_replay_prints_what_each_role_sees_on_every_line_but_the_last() {
    let out = ggp(&["check", "games/montyhall.kif"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = ggp(&["fmt", "--check", "games/montyhall.kif"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = temp_file(
        "monty.moves",
        "((choose 1) (hide 2))\n(wait (open 3))\n(switch wait)\n",
    );
    for engine in ["fast", "reference"] {
        let out = ggp(&[
            "replay",
            "games/montyhall.kif",
            "--moves",
            file.to_str().unwrap(),
            "--engine",
            engine,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let lines: Vec<serde_json::Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let sees: Vec<String> = lines.iter().map(|l| l["sees"].to_string()).collect();
        assert_eq!(
            sees,
            [
                r#"{"contestant":["(picked 1)"],"random":["(picked 1)"]}"#,
                r#"{"contestant":["(opened 3)"],"random":[]}"#,
                r#"{"contestant":["(car 2)"],"random":["switch"]}"#,
                "null",
            ],
            "{engine}"
        );
        assert!(lines[3].as_object().unwrap().get("sees").is_none());
        assert_eq!(lines[3]["goals"]["contestant"][0], "100");
    }
    let pretty = text(
        &ggp(&[
            "replay",
            "games/montyhall.kif",
            "--moves",
            file.to_str().unwrap(),
            "--pretty",
        ])
        .stdout,
    );
    assert!(
        pretty.contains("  sees contestant: (opened 3)\n  sees random: -\n"),
        "{pretty}"
    );
    // A GDL game's lines have no `sees`.
    let out = ggp(&["replay", "games/tictactoe.kif", "--random", "2"]);
    assert!(!text(&out.stdout).contains("sees"));
}

#[test]
fn an_illegal_move_names_the_step_the_role_and_the_legal_moves() {
    let file = temp_file("illegal.moves", "((play 1 1) wait)\n((play 1 1) wait)\n");
    let out = replay_moves(&file, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .contains("step 1: `(play 1 1)` is not a legal move for `x`; its legal moves are wait"),
        "{stderr}"
    );
    // The states before the error are printed.
    assert_eq!(text(&out.stdout).lines().count(), 1);
}

#[test]
fn a_malformed_moves_file_names_the_line() {
    let file = temp_file("malformed.moves", "((play 1 1) wait)\n((play 1 wait)\n");
    let out = replay_moves(&file, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("malformed.moves: line 2:"),
        "{}",
        text(&out.stderr)
    );
    let file = temp_file("short.moves", "((play 1 1))\n");
    let out = replay_moves(&file, &[]);
    assert!(
        text(&out.stderr).contains("line 1: 1 move for 2 roles"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_game_that_fails_the_checks_is_refused_with_its_diagnostics() {
    let game = temp_file(
        "unsafe.kif",
        "(role r)\n(init p)\n(<= (legal r (go ?x)) (true p))\n(<= (next p) (true p))\n(<= terminal (true q))\n(<= (goal r 100) (true p))\n",
    );
    let out = ggp(&["replay", game.to_str().unwrap(), "--random", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[E001]"), "{stderr}");
    assert!(stderr.contains("without an agreed meaning"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_role_without_legal_moves_stops_a_random_replay_with_an_error() {
    let game = temp_file(
        "stuck.kif",
        "(role r)\n(init (step 1))\n(<= (legal r go) (true (step 1)))\n(<= (next (step 2)) (true (step 1)))\n(<= terminal (true (step 3)))\n(<= (goal r 100) (true (step 3)))\n(<= (goal r 0) (not (true (step 3))))\n",
    );
    let out = ggp(&["replay", game.to_str().unwrap(), "--random", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("step 1: `r` has no legal move in a non-terminal state"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout).lines().count(), 2);
}

#[test]
fn missing_files_and_bad_options_are_usage_errors() {
    let out = ggp(&["replay", "no/such/game.kif", "--random", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read no/such/game.kif"));
    let out = ggp(&["replay", "games/tictactoe.kif"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--moves or --random is required"
    );
    let out = ggp(&["bench", "games/tictactoe.kif", "--seconds", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bench_prints_the_gdl_perf_lines() {
    let out = ggp(&["bench", "games/tictactoe.kif", "--seconds", "0.2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("version=ggp "));
    for (line, key) in
        lines[1..4]
            .iter()
            .zip(["millisecondsTaken=", "numStateChanges=", "numRollouts="])
    {
        let value = line
            .strip_prefix(key)
            .unwrap_or_else(|| panic!("{key} in {stdout}"));
        value.parse::<u64>().unwrap();
    }
    let rollouts: u64 = lines[3]["numRollouts=".len()..].parse().unwrap();
    assert!(rollouts > 0, "{stdout}");
    assert!(stdout.contains("playouts/s:"));
    assert!(stdout.contains("512 playouts side by side"), "{stdout}");
}

#[test]
fn bench_plays_whole_games_in_lanes_and_one_at_a_time() {
    for extra in [None, Some("--sequential")] {
        let mut args = vec!["bench", "games/tictactoe.kif", "--seconds", "0.2"];
        args.extend(extra);
        let out = ggp(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let value = |key: &str| -> f64 {
            let line = stdout.lines().find(|l| l.starts_with(key)).unwrap();
            line[key.len()..].trim().parse().unwrap()
        };
        // A tic-tac-toe game lasts 5 to 9 moves (the lanes still playing at the deadline add
        // their moves but not their playouts).
        let (changes, rollouts) = (value("numStateChanges="), value("numRollouts="));
        assert!(rollouts > 0.0, "{stdout}");
        assert!((5.0..=10.0).contains(&(changes / rollouts)), "{stdout}");
        let mode = if extra.is_some() {
            "one playout at a time"
        } else {
            "side by side"
        };
        assert!(stdout.contains(mode), "{stdout}");
    }
}

/// `ggp bench --percepts` on GDL-II games, on both engines: every role's percepts at every
/// step, counted exactly (Monty Hall's contestant sees one term at each of its 3 steps, the
/// host one at the first and the last); a GDL game is refused.
#[test]
fn bench_computes_every_roles_percepts_at_every_step() {
    for engine in ["fast", "reference"] {
        for game in ["games/montyhall.kif", "games/blindbreakthrough.kif"] {
            let out = ggp(&[
                "bench",
                game,
                "--percepts",
                "--seconds",
                "0.3",
                "--engine",
                engine,
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let stdout = text(&out.stdout);
            assert!(
                stdout.contains(&format!("engine:        {engine}")),
                "{stdout}"
            );
            assert!(
                stdout.contains("one playout at a time, every role's percepts at every step"),
                "{stdout}"
            );
            let value = |key: &str| -> u64 {
                let line = stdout.lines().find(|l| l.starts_with(key)).unwrap();
                line[key.len()..].trim().parse().unwrap()
            };
            // "percepts/s:    123.4 (N in all, …)": N.
            let in_all = |key: &str| -> u64 {
                let line = stdout.lines().find(|l| l.starts_with(key)).unwrap();
                let (_, count) = line.split_once('(').unwrap();
                count.split(' ').next().unwrap().parse().unwrap()
            };
            let (changes, rollouts) = (value("numStateChanges="), value("numRollouts="));
            let (percepts, terms) = (in_all("percepts/s:"), in_all("terms seen/s:"));
            assert!(rollouts > 0, "{stdout}");
            // Two roles: two percept computations per joint move.
            assert_eq!(percepts, 2 * changes, "{stdout}");
            if game.ends_with("montyhall.kif") {
                // 3 steps a game, 5 terms seen; the playout running at the deadline (at most
                // all its steps made, its end not yet seen) adds its own.
                assert!((0..=3).contains(&(changes - 3 * rollouts)), "{stdout}");
                assert!((0..=5).contains(&(terms - 5 * rollouts)), "{stdout}");
            } else {
                // The player to move sees one term of its move, the other at most one.
                assert!((changes..=2 * changes).contains(&terms), "{stdout}");
            }
        }
    }
    let out = ggp(&[
        "bench",
        "games/tictactoe.kif",
        "--percepts",
        "--seconds",
        "0.3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("`--percepts` measures GDL-II percepts, and this game has no `sees` rules"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).is_empty());
}

#[test]
fn the_player_command_serves_the_protocol() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp"))
        .args([
            "player",
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--strategy",
            "legal",
            "--name",
            "cli-test",
        ])
        .stderr(std::process::Stdio::piped())
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
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .write_all(b"POST / HTTP/1.0\r\nContent-Type: text/acl\r\nContent-Length: 6\r\n\r\n(INFO)")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        response.starts_with("HTTP/1.0 200") || response.starts_with("HTTP/1.1 200"),
        "{response}"
    );
    assert!(
        response.ends_with("((name cli-test) (status available))"),
        "{response}"
    );
}

#[test]
fn a_demo_match_between_built_in_players() {
    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/demo.json");
    std::fs::create_dir_all(json.parent().unwrap()).unwrap();
    let out = ggp(&[
        "match",
        "games/tictactoe.kif",
        "--player",
        "random",
        "--player",
        "legal",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("step   1: "), "{stdout}");
    assert!(stdout.contains("role         player"), "{stdout}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record["isCompleted"], true);
    assert_eq!(
        record["states"].as_array().unwrap().len(),
        record["moves"].as_array().unwrap().len() + 1
    );
    // Recorded in the default database, under the data directory.
    let id = record["matchId"].as_str().unwrap();
    let db = data_home().join("ggp/matches.sqlite");
    assert!(
        stdout.contains(&format!(
            "match {id} (finished) is recorded in {}",
            db.display()
        )),
        "{stdout}"
    );
    let out = ggp(&["matches", "export", id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let exported: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(exported, record, "the database and the JSON file agree");
    let out = ggp(&["match", "games/tictactoe.kif", "--player", "random"]);
    // Players that do not fit the game's roles are a usage error.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the game has 2 roles (x, o), but 1 player was given"),
        "{}",
        text(&out.stderr)
    );
    let out = ggp(&[
        "match",
        "games/tictactoe.kif",
        "--player",
        "bogus",
        "--player",
        "random",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// GDL-II end to end: `ggp player` processes (each message form) on Monty Hall; the manager
/// plays `random`, no move is substituted, and the exported record holds the percepts.
#[test]
fn a_gdl2_match_with_ggp_player_processes() {
    for (k, (strategy, prefix)) in [("sample", ""), ("random", "gdl2-turn:"), ("legal", "gdl2:")]
        .into_iter()
        .enumerate()
    {
        let (mut player, url, log) = common::spawn_player_with_log(strategy);
        let db = temp_db(&format!("gdl2-{k}.sqlite"));
        let id = format!("monty{k}");
        let out = ggp(&[
            "match",
            "games/montyhall.kif",
            "--player",
            &format!("{prefix}{url}"),
            "--db",
            db.to_str().unwrap(),
            "--id",
            &id,
            "--seed",
            &k.to_string(),
        ]);
        player.kill().unwrap();
        player.wait().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let record = export(&db, &id);
        assert_eq!(record["isCompleted"], true, "{record}");
        assert_eq!(
            record["playerNamesFromHost"],
            serde_json::json!([format!("{prefix}{url}"), "(the manager)"])
        );
        assert!(
            record["errors"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|row| row.as_array().unwrap())
                .all(|e| e == ""),
            "{record}"
        );
        let percepts = record["percepts"].as_array().unwrap();
        assert_eq!(percepts.len(), 3, "{record}");
        let chosen = record["moves"][0][0].as_str().unwrap();
        let door = chosen.trim_end_matches(')').rsplit(' ').next().unwrap();
        assert_eq!(
            percepts[0][0],
            serde_json::json!([format!("(picked {door})")])
        );
        // The player was told its percepts, never the host's moves.
        let log = log.lock().unwrap().clone();
        assert!(log.contains(&format!("(picked {door})")), "{log}");
        assert!(!log.contains("(hide "), "{log}");
    }
}

#[test]
fn a_match_between_two_ggp_player_processes() {
    let (mut x, x_url) = spawn_player("random");
    let (mut o, o_url) = spawn_player("legal");
    let db = temp_db("processes.sqlite");
    let out = ggp(&[
        "match",
        "games/tictactoe.kif",
        "--player",
        &x_url,
        "--player",
        &o_url,
        "--db",
        db.to_str().unwrap(),
        "--id",
        "processes",
    ]);
    for p in [&mut x, &mut o] {
        p.kill().unwrap();
        p.wait().unwrap();
    }
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record = export(&db, "processes");
    assert_eq!(record["isCompleted"], true);
    assert_eq!(record["isAborted"], false);
    assert_eq!(
        record["playerNamesFromHost"],
        serde_json::json!([x_url, o_url])
    );
    let moves = array_len(&record["moves"]);
    assert!(moves >= 5, "{record}");
    assert_eq!(array_len(&record["states"]), moves + 1);
    assert_eq!(array_len(&record["errors"]), moves + 1);
    assert_eq!(array_len(&record["stateTimes"]), moves + 1);
    let errors: Vec<&serde_json::Value> = record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .filter(|e| *e != "")
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let goals: Vec<u64> = record["goalValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_u64().unwrap())
        .collect();
    assert!(
        matches!(goals.as_slice(), [100, 0] | [0, 100] | [50, 50]),
        "{goals:?}"
    );
    for key in [
        "randomToken",
        "startTime",
        "rules",
        "startClock",
        "playClock",
    ] {
        assert!(record.get(key).is_some(), "{key}");
    }
    // Listed, and shown for people.
    let out = ggp(&["matches", "list", "--db", db.to_str().unwrap()]);
    let listing = text(&out.stdout);
    assert!(listing.starts_with("id "), "{listing}");
    let line = listing
        .lines()
        .find(|l| l.starts_with("processes "))
        .unwrap();
    assert!(
        line.contains("tictactoe") && line.contains("finished"),
        "{line}"
    );
    assert!(line.contains(&format!("  {moves}  ")), "{line}");
    let out = ggp(&["matches", "show", "processes", "--db", db.to_str().unwrap()]);
    let shown = text(&out.stdout);
    assert!(shown.contains("status   finished\n"), "{shown}");
    assert!(shown.contains(&format!("steps    {moves}\n")), "{shown}");
    assert!(shown.contains(&x_url) && shown.contains(&o_url), "{shown}");
}

/// Starts `ggp match` against a stalling player (x) and the built-in legal player (o), and
/// waits until the player has received its fourth PLAY: three steps have been played.
/// Returns the process and the bodies of the PLAY requests.
fn match_stalled_after_three_steps(
    db: &Path,
    id: &str,
) -> (
    std::process::Child,
    Vec<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let (url, requests) = stalling_player(3);
    let child = ggp_command(&[
        "match",
        "games/tictactoe.kif",
        "--player",
        &url,
        "--player",
        "legal",
        "--db",
        db.to_str().unwrap(),
        "--id",
        id,
        "--playclock",
        "300",
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let mut plays = Vec::new();
    while plays.len() < 4 {
        let body = requests
            .recv_timeout(Duration::from_secs(120))
            .expect("the match goes on");
        if body.starts_with("(PLAY") {
            plays.push(body);
        }
    }
    (child, plays, requests)
}

/// The joint moves PLAY requests carried (the first carries none).
fn moves_of(plays: &[String]) -> Vec<Vec<String>> {
    plays[1..]
        .iter()
        .map(|p| match ggp_protocol::Request::parse(p).unwrap() {
            ggp_protocol::Request::Play {
                moves: Some(moves), ..
            } => moves,
            other => panic!("{other:?}"),
        })
        .collect()
}

fn recorded_moves(record: &serde_json::Value) -> Vec<Vec<String>> {
    serde_json::from_value(record["moves"].clone()).unwrap()
}

#[test]
fn kill_9_mid_match_leaves_every_played_step_in_the_database() {
    let db = temp_db("killed.sqlite");
    let (mut child, plays, _requests) = match_stalled_after_three_steps(&db, "killed");
    // SIGKILL: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    let record = export(&db, "killed");
    assert_eq!(record["isCompleted"], false);
    assert_eq!(record["isAborted"], false);
    // Every step played (each announced to the player by the next PLAY) is there.
    assert_eq!(recorded_moves(&record), moves_of(&plays));
    assert_eq!(array_len(&record["states"]), 4);
    assert_eq!(array_len(&record["errors"]), 4);
    // x answered `wait` on its own turns: those moves were replaced, and recorded so.
    assert_eq!(record["errors"][0][0], "illegal: wait");
    let out = ggp(&["matches", "show", "killed", "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("status   unfinished\n"), "{shown}");
    assert!(shown.contains("steps    3\n"), "{shown}");
    assert!(shown.contains("    1  x: illegal: wait\n"), "{shown}");
    let out = ggp(&["matches", "list", "--db", db.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("unfinished"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn ctrl_c_sends_abort_and_records_the_match_as_aborted() {
    let db = temp_db("interrupted.sqlite");
    let (mut child, plays, requests) = match_stalled_after_three_steps(&db, "interrupted");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = child.wait().unwrap();
    // 130: interrupted (128 + SIGINT), not 1, which says the input has errors.
    assert_eq!(status.code(), Some(130));
    let abort = requests
        .recv_timeout(Duration::from_secs(60))
        .expect("an ABORT");
    assert_eq!(abort, "(ABORT interrupted)");
    let record = export(&db, "interrupted");
    assert_eq!(record["isAborted"], true);
    assert_eq!(record["isCompleted"], false);
    assert_eq!(record["abortReason"], "the match was stopped: Ctrl-C");
    assert_eq!(recorded_moves(&record), moves_of(&plays));
    let out = ggp(&[
        "matches",
        "show",
        "interrupted",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(
        text(&out.stdout).contains("status   aborted\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_databases_and_ids_are_clear_errors() {
    let game = "games/tictactoe.kif";
    let fails = |args: &[&str], expected: &str| {
        let out = ggp(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    };
    let missing = temp_db("missing.sqlite");
    let missing = missing.to_str().unwrap();
    fails(
        &["matches", "list", "--db", missing],
        "there is no match database at",
    );
    let garbage = temp_db("garbage.sqlite");
    std::fs::write(
        &garbage,
        "this is not a database, not even close ".repeat(200),
    )
    .unwrap();
    let garbage = garbage.to_str().unwrap();
    fails(
        &["matches", "list", "--db", garbage],
        "is not a match database",
    );
    fails(
        &[
            "match", game, "--player", "random", "--player", "random", "--db", garbage,
        ],
        "is not a match database",
    );
    let file = temp_db("plain-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("matches.sqlite");
    fails(
        &[
            "match",
            game,
            "--player",
            "random",
            "--player",
            "random",
            "--db",
            under_file.to_str().unwrap(),
        ],
        "cannot create the directory",
    );
    let db = temp_db("ids.sqlite");
    let db = db.to_str().unwrap();
    let out = ggp(&[
        "match", game, "--player", "random", "--player", "legal", "--db", db, "--id", "one",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    fails(&["matches", "show", "two", "--db", db], "no match `two` in");
    fails(
        &["matches", "export", "two", "--db", db],
        "no match `two` in",
    );
    // The same id again: refused before the match starts.
    let out = ggp(&[
        "match", game, "--player", "random", "--player", "legal", "--db", db, "--id", "one",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a match with the id `one` is already recorded"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}
