//! The `ggp` binary end to end: exit codes, output formats and error messages of its commands
//! on the project's own games.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ggp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggp"))
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("run ggp")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

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

/// A file under the target directory for one test.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
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
    let out = ggp(&["match", "games/tictactoe.kif", "--player", "random"]);
    assert_eq!(out.status.code(), Some(1));
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
