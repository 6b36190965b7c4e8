//! `ggp validate` end to end: verdicts, figures, exit codes, JSON lines, and counterexamples
//! that `ggp replay` plays to the offending state.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn ggp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggp"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("NO_COLOR", "1")
        .output()
        .expect("run ggp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("validate")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The JSON lines of a run: the findings and the summary.
fn json_lines(out: &Output) -> (Vec<Value>, Value) {
    let mut lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    assert!(summary.get("summary").is_some(), "{summary}");
    (lines, summary["summary"].clone())
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

fn assert_tictactoe_proved(game: &str, extra: &[&str]) -> Value {
    let mut args = vec!["validate", game, "--format", "json"];
    args.extend_from_slice(extra);
    let out = ggp(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (findings, summary) = json_lines(&out);
    assert_eq!(summary["states"], 5478, "{summary}");
    assert_eq!(summary["terminal_states"], 958);
    assert_eq!(summary["depth"], 9);
    assert_eq!(summary["exhaustive"], true);
    assert_eq!(
        names(&summary["proved"])[..4],
        ["terminates", "playable", "goals", "weakly-winnable"]
    );
    assert!(names(&summary["refuted"]).is_empty());
    assert!(names(&summary["undecided"]).is_empty());
    assert_eq!(names(&summary["not_applicable"])[0], "strongly-winnable");
    // Only information: goals hold before the end.
    assert!(
        findings
            .iter()
            .all(|f| f["severity"] == "info" && f["code"] == "V013"),
        "{findings:?}"
    );
    summary
}

#[test]
fn tictactoe_is_proved_well_formed_with_its_5478_states() {
    let summary = assert_tictactoe_proved("games/tictactoe.kif", &[]);
    assert_eq!(
        names(&summary["proved"]),
        [
            "terminates",
            "playable",
            "goals",
            "weakly-winnable",
            "base-input"
        ]
    );
    assert_eq!(summary["engine"], "fast");
    let out = ggp(&["validate", "games/tictactoe.kif"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "games/tictactoe.kif: proved well-formed: 5,478 reachable states, 958 terminal, \
             the longest game 9 moves"
        ),
        "{stdout}"
    );
}

#[test]
fn the_corpus_tictactoe_is_proved_well_formed_too() {
    let Some(shared) = ggp_testdata::shared_or_skip("the_corpus_tictactoe_is_proved_well_formed")
    else {
        return;
    };
    let game = shared.join("corpus/games/base/ticTacToe.kif");
    assert_tictactoe_proved(game.to_str().unwrap(), &[]);
}

#[test]
fn the_reference_engine_checked_against_the_fast_one_proves_the_same() {
    let summary = assert_tictactoe_proved("games/tictactoe.kif", &["--engine", "reference"]);
    assert_eq!(summary["engine"], "reference+fast");
}

const STUCK: &str = "crates/gdl-validate/tests/codes/V002.kif";

#[test]
fn a_violation_exits_1_with_moves_that_replay_to_the_offending_state() {
    let dir = temp_dir("stuck");
    let out = ggp(&[
        "validate",
        STUCK,
        "--format",
        "json",
        "--counterexamples",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (findings, summary) = json_lines(&out);
    assert_eq!(names(&summary["refuted"]), ["playable"]);
    let finding = findings.iter().find(|f| f["code"] == "V002").expect("V002");
    for field in [
        "severity",
        "message",
        "file",
        "start",
        "end",
        "line",
        "column",
        "end_line",
        "end_column",
        "label",
        "help",
        "related",
        "fix",
    ] {
        assert!(finding.get(field).is_some(), "{field} missing: {finding}");
    }
    assert_eq!(finding["line"], 3);
    let moves_file = dir.join("V002.V002-black.moves");
    let written = std::fs::read_to_string(&moves_file).expect("the moves file");
    assert_eq!(finding["counterexample"], written.as_str());
    let replay = ggp(&["replay", STUCK, "--moves", moves_file.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1));
    assert_eq!(text(&replay.stdout).lines().count(), 6);
    assert!(
        text(&replay.stderr).contains("step 5: `black` has no legal move in a non-terminal state"),
        "{}",
        text(&replay.stderr)
    );
}

#[test]
fn text_output_shows_the_diagnostic_the_moves_and_the_verdicts() {
    let out = ggp(&["validate", STUCK]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    for expected in [
        "error[V002]: `black` has no legal move in a reachable non-terminal state",
        "counterexample (5 joint moves; `ggp replay crates/gdl-validate/tests/codes/V002.kif --moves FILE` plays it):",
        "    (count noop)\n    (noop count)\n",
        "not well-formed (playable refuted): 7 reachable states, 1 terminal",
        "  refuted: playable\n",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in:\n{stdout}");
    }
}

#[test]
fn several_games_each_get_a_summary_and_the_worst_status() {
    let out = ggp(&["validate", "games/tictactoe.kif", STUCK, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let summaries: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("summary").cloned())
        .collect();
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[0]["file"], "games/tictactoe.kif");
    assert_eq!(summaries[1]["file"], STUCK);
}

#[test]
fn bad_usage_and_unreadable_files_exit_2() {
    for args in [
        &["validate", "no/such/game.kif"][..],
        &["validate", "games/tictactoe.kif", "--max-states", "0"],
        &["validate", "games/tictactoe.kif", "--seconds", "0"],
        &["validate", "games/tictactoe.kif", "--seconds", "nan"],
        &["validate"],
    ] {
        let out = ggp(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = ggp(&["validate", "no/such/game.kif"]);
    assert!(text(&out.stderr).contains("cannot read no/such/game.kif"));
}

#[test]
fn a_game_without_an_agreed_meaning_is_refused_with_its_diagnostics() {
    let dir = temp_dir("unsafe");
    let game = dir.join("unsafe.kif");
    std::fs::write(
        &game,
        "(role r) (<= (legal r ?m) (true (p ?x))) (<= terminal (true a)) (goal r 100)",
    )
    .unwrap();
    let out = ggp(&["validate", game.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("error[E001]"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("without an agreed meaning"));
}

#[test]
fn chess_has_no_goal_at_its_move_limit() {
    let Some(shared) = ggp_testdata::shared_or_skip("chess_has_no_goal_at_its_move_limit") else {
        return;
    };
    let game = shared.join("corpus/games/base/chess.kif");
    let game = game.to_str().unwrap();
    let dir = temp_dir("chess");
    // One state explored, then one random playout: it reaches the move limit.
    let out = ggp(&[
        "validate",
        game,
        "--format",
        "json",
        "--max-states",
        "1",
        "--playouts",
        "1",
        "--seconds",
        "600",
        "--counterexamples",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let (findings, summary) = json_lines(&out);
    assert_eq!(names(&summary["refuted"]), ["goals"]);
    let white = findings
        .iter()
        .find(|f| f["code"] == "V003" && f["message"].as_str().unwrap().contains("`white`"))
        .expect("no goal for white");
    let moves = white["counterexample"].as_str().unwrap();
    assert_eq!(moves.lines().filter(|l| !l.starts_with(';')).count(), 200);
    let replay = ggp(&[
        "replay",
        game,
        "--moves",
        dir.join("chess.V003-white.moves").to_str().unwrap(),
    ]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    let stdout = text(&replay.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["terminal"], true);
    assert!(
        last["state"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "(step 201)")
    );
    assert_eq!(last["goals"]["white"], serde_json::json!([]));
    assert_eq!(last["goals"]["black"], serde_json::json!([]));
}

#[test]
fn connect_four_and_breakthrough_show_no_violation_in_a_search() {
    let Some(shared) = ggp_testdata::shared_or_skip("connect_four_and_breakthrough") else {
        return;
    };
    for name in ["connectFour", "breakthrough"] {
        let game = shared.join(format!("corpus/games/base/{name}.kif"));
        let out = ggp(&[
            "validate",
            game.to_str().unwrap(),
            "--format",
            "json",
            "--max-states",
            "20000",
            "--playouts",
            "200",
            "--seconds",
            "600",
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let (_, summary) = json_lines(&out);
        assert_eq!(summary["exhaustive"], false);
        assert!(names(&summary["refuted"]).is_empty(), "{name}: {summary}");
        assert_eq!(summary["playouts"], 200);
        assert_eq!(names(&summary["proved"]), ["weakly-winnable"], "{name}");
        let why = summary["undecided_because"]["terminates"].as_str().unwrap();
        assert!(
            why.starts_with("no violation in 20,000 explored states"),
            "{why}"
        );
    }
}

#[test]
fn huge_numbers_are_refused_with_a_message() {
    for (args, expected) in [
        (&["--seconds", "1e300"][..], "more than a day"),
        (
            &["--max-states", "99999999999999999999"],
            "not a whole number",
        ),
        (&["--max-states", "4294967295"], "the most supported"),
        (&["--playouts", "-1"], "unexpected argument"),
    ] {
        let mut all = vec!["validate", "games/tictactoe.kif"];
        all.extend_from_slice(args);
        let out = ggp(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(expected),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn validation_stops_quietly_when_its_output_closes() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp"))
        .args(["validate", "games/tictactoe.kif", "games/tictactoe.kif"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("panicked"));
}

#[test]
fn with_format_json_the_notes_are_json_too() {
    let dir = temp_dir("fallback");
    let game = dir.join("fallback.kif");
    // A fact with variables: the network refuses it, the join tier plays it, and says so.
    std::fs::write(
        &game,
        "(role r) (same ?x ?x) (init (at a)) (<= (legal r (go ?y)) (true (at ?x)) (same ?x ?y))
         (<= (next (at ?y)) (does r (go ?y))) (<= terminal (true (at a)))
         (<= (goal r 100) (true (at a)))",
    )
    .unwrap();
    let out = ggp(&["validate", game.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let notes: Vec<Value> = text(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        notes.iter().any(|n| n["severity"] == "info"
            && n["message"]
                .as_str()
                .unwrap()
                .contains("runs it with join plans")),
        "{notes:?}"
    );
    let (_, summary) = json_lines(&out);
    assert_eq!(summary["engine"], "fast");
    assert_eq!(summary["states"], 1);
    assert_eq!(summary["exhaustive"], true);
}

#[test]
fn a_counterexample_directory_that_cannot_be_made_is_refused_before_any_work() {
    let dir = temp_dir("not-a-dir");
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let out = ggp(&[
        "validate",
        STUCK,
        "--counterexamples",
        file.join("sub").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("cannot create"));
}

#[test]
fn gdl3_games_are_proved_over_classes_of_histories() {
    let out = ggp(&[
        "validate",
        "games/cups.kif",
        "games/muddy_children.kif",
        "games/number_guessing.kif",
        "games/russian_cards.kif",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for line in [
        "games/cups.kif: proved well-formed: 37 reachable classes of histories \
         (standing for 145 histories), 15 terminal, the longest game 4 moves",
        "games/number_guessing.kif: proved well-formed: 4,009 reachable classes of \
         histories (standing for 599,177 histories), 3,576 terminal, the longest game 6 moves",
        "games/russian_cards.kif: proved well-formed: 1,401 reachable classes of \
         histories (standing for 1,401 histories), 700 terminal, the longest game 3 moves",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
    // `--engine reference`: the machine over histories alone (the fast engine does not reason
    // `knows`), with the same figures, in JSON.
    let out = ggp(&[
        "validate",
        "--engine",
        "reference",
        "--format",
        "json",
        "games/muddy_children.kif",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, summary) = json_lines(&out);
    assert_eq!(summary["states"], 29);
    assert_eq!(summary["histories"], 29);
    assert_eq!(summary["engine"], "reference");
    assert_eq!(
        names(&summary["proved"]),
        ["terminates", "playable", "goals", "weakly-winnable"]
    );
    // A game without `knows` has no history count.
    let out = ggp(&["validate", "--format", "json", "games/tictactoe.kif"]);
    let (_, summary) = json_lines(&out);
    assert_eq!(summary["histories"], Value::Null);
}
