//! Bad input of every kind, through the binary: huge numbers, closed pipes, unreachable players
//! and bad URLs, games that never end, bad ids, databases that cannot be written, output files
//! that cannot be created, and the smaller mistakes a new user runs into. Nothing panics, nothing
//! fails silently, nothing recorded is lost.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{
    FOREVER, closed_url, export, ggp, ggp_command, post, scripted_player, spawn_player,
    spawn_player_with_log, stalling_player, temp_db, temp_file, text,
};

const GAME: &str = "games/tictactoe.kif";

/// Asserts a usage error (exit status 2) whose message contains `expected`, without a panic.
fn refused(out: &Output, expected: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn no_panic(out: &Output) {
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}

#[test]
fn huge_numbers_on_the_command_line_are_refused_with_a_message() {
    let day = "more than a day (86400 s)";
    refused(
        &ggp(&["bench", GAME, "--seconds", "99999999999999999999"]),
        day,
    );
    refused(&ggp(&["bench", GAME, "--seconds", "1e300"]), day);
    refused(&ggp(&["bench", GAME, "--seconds=-1"]), "positive");
    refused(&ggp(&["bench", GAME, "--seconds", "NaN"]), "positive");
    refused(
        &ggp(&["bench", GAME, "--threads", "0"]),
        "must be at least 1",
    );
    refused(
        &ggp(&["bench", GAME, "--threads", "18446744073709551615"]),
        "the most supported",
    );
    refused(
        &ggp(&["replay", GAME, "--random", "5", "--state-timeout", "1e30"]),
        day,
    );
    let db = temp_db("huge-clocks.sqlite");
    for (option, value) in [
        ("--playclock", "18446744073709551615"),
        ("--startclock", "18446744073709551615"),
        ("--playclock", "9223372036854775807"),
        ("--playclock", "86401"),
        ("--grace-ms", "18446744073709551615"),
        ("--max-steps", "0"),
    ] {
        let out = ggp(&[
            "match",
            GAME,
            "--player",
            "random",
            "--player",
            "random",
            "--db",
            db.to_str().unwrap(),
            option,
            value,
        ]);
        refused(&out, option);
    }
    // Refused before anything was recorded.
    assert!(!db.exists(), "no database is created for a refused match");
}

#[test]
fn a_start_with_huge_clocks_is_refused_by_the_player_which_goes_on() {
    let (mut player, url) = spawn_player("random");
    let rules = std::fs::read_to_string(common::workspace().join(GAME)).unwrap();
    let rules = gdl_syntax::compact_text(&rules).unwrap();
    let (status, body) = post(
        &url,
        format!("(START m1 x ({rules}) 18446744073709551615 18446744073709551615)").as_bytes(),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("longer than a day"), "{body}");
    // The player is still there, and plays a sensible match.
    let (status, body) = post(&url, b"(INFO)");
    assert_eq!((status, body.contains("available")), (200, true), "{body}");
    let (status, body) = post(&url, format!("(START m2 x ({rules}) 30 10)").as_bytes());
    assert_eq!((status, body.as_str()), (200, "READY"));
    player.kill().unwrap();
    player.wait().unwrap();
}

#[test]
fn a_closed_output_aborts_the_match_cleanly() {
    let db = temp_db("closed-output.sqlite");
    let (url, requests) = stalling_player(1000);
    let mut child = ggp_command(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "closed-output",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // `| head -1`: one line, then the reader goes away.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("step   1:"), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(141), "{stderr}");
    assert!(stderr.contains("aborted"), "{stderr}");
    // The player was told.
    let told: Vec<String> = requests.try_iter().collect();
    assert!(
        told.iter().any(|r| r == "(ABORT closed-output)"),
        "{told:?}"
    );
    // And the record says what happened.
    let record = export(&db, "closed-output");
    assert_eq!(record["isAborted"], true);
    assert_eq!(record["isCompleted"], false);
    let reason = record["abortReason"].as_str().unwrap();
    assert!(reason.contains("standard output"), "{reason}");
}

#[test]
fn bench_and_reading_commands_stop_quietly_when_their_output_closes() {
    for args in [
        &["bench", "-", "--seconds", "1"][..],
        &["replay", "-", "--random", "9"][..],
        &["fmt", "-"][..],
        &["convert", "--to", "infix", "-"][..],
    ] {
        let mut child = ggp_command(args)
            .stdin(std::fs::File::open(common::workspace().join(GAME)).unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        no_panic(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn an_unreachable_player_is_reported_and_its_failed_start_recorded() {
    let url = closed_url();
    let db = temp_db("unreachable.sqlite");
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "unreachable",
        "--startclock",
        "1",
        "--playclock",
        "1",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("player 1 ({url}) does not answer")),
        "{stderr}"
    );
    assert!(stdout.contains("START: player 1"), "{stdout}");
    assert!(stderr.contains("warning:"), "{stderr}");
    let record = export(&db, "unreachable");
    let start = record["startErrors"][0].as_str().unwrap();
    assert!(start.starts_with("connection: "), "{start}");
    assert_eq!(record["startErrors"][1], "");
    // Every move of that player was substituted, and each says why.
    let moves = record["moves"].as_array().unwrap().len();
    let errors = record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row[0].as_str().unwrap().starts_with("connection: "))
        .count();
    assert_eq!(errors, moves);
    let shown = text(
        &ggp(&[
            "matches",
            "show",
            "unreachable",
            "--db",
            db.to_str().unwrap(),
        ])
        .stdout,
    );
    assert!(shown.contains("START"), "{shown}");
    // --strict: not started, nothing recorded.
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "strict",
        "--strict",
    ]);
    refused(&out, "not starting (--strict)");
    let listed = text(&ggp(&["matches", "list", "--db", db.to_str().unwrap()]).stdout);
    assert!(!listed.contains("strict"), "{listed}");
}

#[test]
fn bad_player_urls_are_refused_before_the_match() {
    for (url, expected) in [
        ("http://", "it has no host"),
        ("http://127.0.0.1:99999", "is not a port"),
        ("http://127.0.0.1:0", "is not a port"),
        ("https://127.0.0.1:9147", "plain HTTP"),
        ("http://no such host:1", "a space"),
        ("http://nosuchhost.invalid:9147", "cannot find the host"),
    ] {
        let out = ggp(&[
            "match", GAME, "--player", url, "--player", "random", "--no-db",
        ]);
        refused(&out, expected);
    }
}

#[test]
fn one_url_for_two_roles_is_refused_unless_asked_for() {
    let (url, _requests) = stalling_player(1000);
    // Another spelling of the same address.
    let same = url.replace("http://", "HTTP://") + "/";
    let out = ggp(&[
        "match", GAME, "--player", &url, "--player", &same, "--no-db",
    ]);
    refused(&out, "is given for players 1 and 2");
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        &same,
        "--no-db",
        "--allow-same-url",
        "--playclock",
        "1",
    ]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_game_that_never_ends_is_aborted_at_the_step_limit() {
    let game = temp_file("forever.kif", FOREVER);
    let db = temp_db("forever.sqlite");
    let out = ggp(&[
        "match",
        game.to_str().unwrap(),
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "forever",
        "--max-steps",
        "30",
    ]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("did not end within 30 joint moves"),
        "{}",
        text(&out.stderr)
    );
    let record = export(&db, "forever");
    assert_eq!(record["isAborted"], true);
    assert_eq!(record["moves"].as_array().unwrap().len(), 30);
    assert!(
        record["abortReason"]
            .as_str()
            .unwrap()
            .contains("did not end within 30")
    );
    // The default limit is documented in the help.
    let help = text(&ggp(&["match", "--help"]).stdout);
    assert!(
        help.contains("--max-steps") && help.contains("1000"),
        "{help}"
    );
}

#[test]
fn bench_says_when_playouts_are_cut() {
    let game = temp_file("forever-bench.kif", FOREVER);
    let out = ggp(&[
        "bench",
        game.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--max-moves",
        "50",
    ]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no playout reached a terminal state"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("cut:"), "{}", text(&out.stdout));
    // A game that ends only sometimes within the limit: a warning, and the figures.
    let sometimes = temp_file(
        "sometimes.kif",
        "(role a) (init (at 0))
         (<= (legal a stay) (true (at 0))) (<= (legal a leave) (true (at 0)))
         (<= (next (at 0)) (does a stay)) (<= (next (at 1)) (does a leave))
         (<= terminal (true (at 1))) (<= (goal a 100) (true (at 1))) (<= (goal a 0) (true (at 0)))",
    );
    let out = ggp(&[
        "bench",
        sometimes.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--max-moves",
        "3",
    ]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("were cut at 3 moves"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn match_ids_are_single_atoms() {
    for id in ["a b", "x)(y", "", "a\nb", "a;b", "?x", "é"] {
        let out = ggp(&[
            "match", GAME, "--player", "random", "--player", "random", "--no-db", "--id", id,
        ]);
        refused(&out, "--id");
    }
    // The default id is made of the file name, whatever it is.
    let odd = temp_file(
        "odd name (1).kif",
        &std::fs::read_to_string(common::workspace().join(GAME)).unwrap(),
    );
    let db = temp_db("odd-name.sqlite");
    let out = ggp(&[
        "match",
        odd.to_str().unwrap(),
        "--player",
        "random",
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&ggp(&["matches", "list", "--db", db.to_str().unwrap()]).stdout);
    assert!(listed.contains("ggp.odd_name__1_."), "{listed}");
}

#[test]
fn the_database_file_alone_holds_a_finished_match() {
    let db = temp_db("checkpointed.sqlite");
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        "random",
        "--player",
        "legal",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "copied",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Copy the database file alone (not its -wal), as a backup would.
    let copy = temp_db("copy-of-checkpointed.sqlite");
    std::fs::copy(&db, &copy).unwrap();
    let record = export(&copy, "copied");
    assert_eq!(record["isCompleted"], true);
    assert!(record["moves"].as_array().unwrap().len() >= 5);
}

/// Runs `ggp` as an unprivileged user who cannot write `dir` (as root, with `setpriv`; as
/// anyone else, after taking the write permission away). `None` when neither can be done here.
fn ggp_without_write_access(dir: &Path, args: &[&str]) -> Option<Output> {
    use std::os::unix::fs::PermissionsExt;
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| text(&o.stdout).trim() == "0");
    if is_root {
        // A copy of the binary the unprivileged user can run.
        let bin = dir.parent().unwrap().join("ggp-unprivileged");
        std::fs::copy(env!("CARGO_BIN_EXE_ggp"), &bin).ok()?;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).ok()?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).ok()?;
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(args)
            .output()
            .ok()?;
        // setpriv itself failed (not permitted in this sandbox): say so, do not guess.
        if text(&out.stderr).starts_with("setpriv:") {
            return None;
        }
        Some(out)
    } else {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).ok()?;
        let out = ggp_command(args).output().ok();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).ok()?;
        out
    }
}

#[test]
fn reading_commands_open_the_database_read_only() {
    // An empty file is not turned into a database.
    let empty = temp_db("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    refused(
        &ggp(&["matches", "list", "--db", empty.to_str().unwrap()]),
        "is an empty file, not a match database",
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    for suffix in ["-wal", "-shm"] {
        assert!(!PathBuf::from(format!("{}{suffix}", empty.display())).exists());
    }
    // A database in a directory the reader cannot write.
    let db = temp_db("readonly-source.sqlite");
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        "random",
        "--player",
        "legal",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "kept",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = db.parent().unwrap().join("readonly-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let inside = dir.join("matches.sqlite");
    std::fs::copy(&db, &inside).unwrap();
    let Some(out) =
        ggp_without_write_access(&dir, &["matches", "list", "--db", inside.to_str().unwrap()])
    else {
        eprintln!("skipped: cannot run ggp without write access to a directory here");
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("kept"), "{}", text(&out.stdout));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["matches.sqlite"], "nothing was written beside it");
}

#[test]
fn output_files_are_checked_before_any_work() {
    let (url, requests) = stalling_player(1000);
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        "random",
        "--no-db",
        "--json",
        "/nonexistent/x.json",
    ]);
    refused(&out, "/nonexistent");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        requests.recv_timeout(Duration::from_millis(200)).is_err(),
        "no player was contacted"
    );
    let out = ggp(&[
        "convert",
        "--to",
        "infix",
        GAME,
        "-o",
        "/nonexistent/x.infix",
    ]);
    refused(&out, "/nonexistent");
    let dir = temp_db("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        "random",
        "--player",
        "random",
        "--no-db",
        "--json",
        dir.to_str().unwrap(),
    ]);
    refused(&out, "it is a directory");
}

/// Every line of `stderr` is a JSON object.
fn json_lines(stderr: &[u8]) -> Vec<serde_json::Value> {
    text(stderr)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

#[test]
fn format_json_prints_only_json_lines() {
    let bad = temp_file("json-bad.kif", "(role r)\n(init (p");
    let bad = bad.to_str().unwrap();
    for args in [
        &["fmt", bad, "--format", "json"][..],
        &["convert", "--to", "infix", bad, "--format", "json"][..],
        &["replay", bad, "--random", "1", "--format", "json"][..],
    ] {
        let out = ggp(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let lines = json_lines(&out.stderr);
        assert!(lines.iter().any(|l| l["code"] == "S001"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l["severity"] == "error" && l["code"].is_null()),
            "{lines:?}"
        );
    }
    // The note about the engine, and an error at a step, are JSON too.
    let refused_by_fast = temp_file(
        "json-fallback.kif",
        "(role r) (same ?x ?x) (init (at a)) (<= (legal r (go ?y)) (true (at ?x)) (same ?x ?y))
         (<= (next (at ?y)) (does r (go ?y))) (<= terminal (true (at b)))
         (<= (goal r 100) (true (at b)))",
    );
    let out = ggp(&[
        "replay",
        refused_by_fast.to_str().unwrap(),
        "--random",
        "3",
        "--format",
        "json",
    ]);
    let lines = json_lines(&out.stderr);
    assert!(
        lines
            .iter()
            .any(|l| l["severity"] == "info"
                && l["message"].as_str().unwrap().contains("fast engine")),
        "{lines:?}"
    );
    let stuck = temp_file(
        "json-stuck.kif",
        "(role r) (init (at 0)) (<= (legal r go) (true (at 0))) (<= (next (at 1)) (does r go))
         (<= terminal (true (at 2))) (<= (goal r 0) (true (at 1)))",
    );
    let out = ggp(&[
        "replay",
        stuck.to_str().unwrap(),
        "--random",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stderr);
    assert!(
        lines
            .iter()
            .any(|l| l["message"].as_str().unwrap().contains("has no legal move")),
        "{lines:?}"
    );
}

#[test]
fn diagnostics_are_capped_per_code_and_the_rest_counted() {
    // 100 KB of pseudo-random bytes.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let path = temp_file("random-bytes.kif", "");
    std::fs::write(&path, &bytes).unwrap();
    let out = ggp(&["check", path.to_str().unwrap()]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.len() < 1_000_000, "{} bytes", out.stdout.len());
    assert!(text(&out.stdout).contains("more S004 diagnostics not shown"));
    let out = ggp(&["check", path.to_str().unwrap(), "--format", "json"]);
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let s004 = lines.iter().filter(|l| l["code"] == "S004").count();
    assert_eq!(s004, 100);
    let omitted = lines
        .iter()
        .find(|l| l["omitted"]["code"] == "S004")
        .expect("a count of the S004 not shown");
    let all = ggp(&[
        "check",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--max-per-code",
        "0",
    ]);
    let all_s004 = text(&all.stdout)
        .lines()
        .filter(|l| l.contains("\"code\":\"S004\""))
        .count();
    assert_eq!(
        all_s004 as u64,
        100 + omitted["omitted"]["count"].as_u64().unwrap()
    );
}

#[test]
fn a_slow_question_does_not_keep_bench_past_its_time() {
    // Over two million legal moves: too many for the fast engine, seconds for the reference
    // engine to list, so a playout's first step alone outlasts the benchmark.
    let mut game = String::from("(role r) (init (s 0))\n");
    for i in 0..130 {
        game.push_str(&format!("(d {i})\n"));
    }
    game.push_str(
        "(<= (legal r (m ?a ?b ?c)) (d ?a) (d ?b) (d ?c))
         (<= (next (s 1)) (does r ?m)) (<= terminal (true (s 1)))
         (<= (goal r 100) (true (s 1))) (<= (goal r 0) (true (s 0)))",
    );
    let path = temp_file("many-moves.kif", &game);
    let out = ggp(&["bench", path.to_str().unwrap(), "--seconds", "0.5"]);
    no_panic(&out);
    let taken: u64 = text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("millisecondsTaken="))
        .expect("the gdl-perf lines")
        .parse()
        .unwrap();
    // The question is cut at the deadline (checked every few thousand evaluation steps), not
    // after listing every move.
    assert!(taken < 3_000, "the playouts took {taken} ms");
}

#[test]
fn fmt_write_goes_through_a_symbolic_link() {
    let target = temp_file("link-target.kif", "(role r)   (init (p))\n");
    let link = target.with_file_name("link.kif");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = ggp(&["fmt", "--write", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "(role r)\n(init (p))\n"
    );
}

#[test]
fn replay_reads_its_moves_from_standard_input() {
    let mut child = ggp_command(&["replay", GAME, "--moves", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"((play 1 1) wait)\n(wait (play 2 2))\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 3);
    refused(
        &ggp(&["replay", "-", "--moves", "-"]),
        "cannot both be read from standard input",
    );
}

#[test]
fn unknown_codes_are_refused_and_codes_read_in_any_case() {
    refused(
        &ggp(&["check", GAME, "--ignore", "X999,garbage"]),
        "`X999` is not a code",
    );
    let unused = temp_file("unused.kif", "(role r) (init (p)) (helper a)\n");
    let out = ggp(&["check", unused.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("W009"), "{}", text(&out.stdout));
    let out = ggp(&["check", unused.to_str().unwrap(), "--ignore", "w009"]);
    assert!(!text(&out.stdout).contains("W009"), "{}", text(&out.stdout));
}

#[test]
fn every_match_gets_its_own_random_token() {
    let db = temp_db("tokens.sqlite");
    let mut tokens = Vec::new();
    for id in ["token-1", "token-2"] {
        let out = ggp(&[
            "match",
            GAME,
            "--player",
            "random",
            "--player",
            "random",
            "--seed",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--id",
            id,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        tokens.push(export(&db, id)["randomToken"].as_str().unwrap().to_string());
    }
    assert_ne!(tokens[0], tokens[1]);
    // The seed still decides the game.
    assert_eq!(
        export(&db, "token-1")["moves"],
        export(&db, "token-2")["moves"]
    );
}

#[test]
fn the_player_logs_every_request() {
    let (mut player, url, log) = spawn_player_with_log("legal");
    let (status, _) = post(&url, b"(INFO)");
    assert_eq!(status, 200);
    let (status, _) = post(&url, b"(PLAY nobody NIL)");
    assert_eq!(status, 200);
    let (status, _) = post(&url, b"(START");
    assert_eq!(status, 400);
    player.kill().unwrap();
    player.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let log = log.lock().unwrap().clone();
    assert!(
        log.contains("INFO -> ((name ggp-legal) (status available))"),
        "{log}"
    );
    // A PLAY for a match the player does not know: busy, as ggp-base's players answer.
    assert!(log.contains("PLAY nobody NIL -> BUSY"), "{log}");
    assert!(log.contains("-> 400 cannot read the request"), "{log}");
}

#[test]
fn a_latin1_byte_means_the_same_to_check_and_to_match() {
    let rules = std::fs::read(common::workspace().join(GAME)).unwrap();
    // In a comment: a warning, and the game is played.
    let mut in_comment = b"; caf\xe9\n".to_vec();
    in_comment.extend_from_slice(&rules);
    let path = temp_file("latin1-comment.kif", "");
    std::fs::write(&path, &in_comment).unwrap();
    let out = ggp(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("warning[S014]"),
        "{}",
        text(&out.stdout)
    );
    let out = ggp(&[
        "match",
        path.to_str().unwrap(),
        "--player",
        "random",
        "--player",
        "random",
        "--no-db",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // In a name: an error for both.
    let mut in_name = rules.clone();
    in_name.extend_from_slice(b"(init (caf\xe9))\n");
    let path = temp_file("latin1-name.kif", "");
    std::fs::write(&path, &in_name).unwrap();
    let out = ggp(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("error[S004]"),
        "{}",
        text(&out.stdout)
    );
    let out = ggp(&[
        "match",
        path.to_str().unwrap(),
        "--player",
        "random",
        "--player",
        "random",
        "--no-db",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not valid UTF-8"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn shell_completions_and_manual_pages() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = ggp(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(text(&out.stdout).contains("ggp"), "{shell}");
    }
    refused(&ggp(&["completions", "tcsh"]), "invalid value");
    let out = ggp(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains(".TH ggp 1"),
        "{}",
        text(&out.stdout)
    );
    let dir = temp_db("man-pages");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = ggp(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join("ggp-match.1").exists());
}

#[test]
fn a_reply_for_a_player_nobody_started_is_not_read_as_a_move() {
    // A player that answers START with busy (it plays another match): recorded, and the match
    // is played on.
    let (url, _requests) = scripted_player(|body| {
        Some(
            if body.starts_with("(START") {
                "busy"
            } else {
                "noop"
            }
            .to_string(),
        )
    });
    let db = temp_db("busy.sqlite");
    let out = ggp(&[
        "match",
        GAME,
        "--player",
        &url,
        "--player",
        "random",
        "--db",
        db.to_str().unwrap(),
        "--id",
        "busy",
        "--playclock",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(export(&db, "busy")["startErrors"][0], "busy: busy");
}

/// The message of an input beyond the default limit.
fn beyond_the_limit(name: &str) -> String {
    format!(
        "cannot read {name}: it is larger than 16 MiB, the largest input ggp reads (--max-input-size)"
    )
}

/// The most resident memory a command that refuses a large input may reach.
const MAX_RESIDENT_KB: u64 = 100 * 1024;

/// How long a command that refuses a large input may run (it takes milliseconds; the guard
/// is for code that reads without end, which must fail the test rather than hang it).
const GUARD: Duration = Duration::from_secs(20);

/// The kernel's high-water mark of a process's resident memory (`VmHWM`), in kB, while the
/// process runs.
fn resident_peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// Runs `ggp args`, its standard input fed by `feed` (if given), and watches its peak resident
/// memory while it runs. It is killed, and the test fails, as soon as that passes
/// [`MAX_RESIDENT_KB`] or it runs longer than [`GUARD`]. Returns its exit status, its standard
/// error and its peak (as last seen, in kB).
fn run_watched(
    args: &[&str],
    feed: Option<fn(std::process::ChildStdin)>,
) -> (Option<i32>, String, u64) {
    let mut child = ggp_command(args)
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let (Some(feed), Some(stdin)) = (feed, child.stdin.take()) {
        std::thread::spawn(move || feed(stdin));
    }
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let started = std::time::Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kb) = resident_peak_kb(child.id()) {
            peak = peak.max(kb);
        }
        if peak > MAX_RESIDENT_KB || started.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "ggp {args:?} was still running after {:.1} s, {peak} kB resident at its peak: \
                 it reads its input without a limit",
                started.elapsed().as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    (status.code(), stderr.join().unwrap(), peak)
}

/// Writes `(role r)` lines to a command's standard input until it stops reading.
fn endless_roles(mut stdin: std::process::ChildStdin) {
    use std::io::Write;
    let chunk = "(role r)\n".repeat(7000);
    while stdin.write_all(chunk.as_bytes()).is_ok() {}
}

/// Asserts that `ggp args` (its standard input fed by `feed`) refuses `name` as larger than the
/// default limit, with exit status 2, without a panic, and in little memory.
fn refused_at_the_limit(args: &[&str], feed: Option<fn(std::process::ChildStdin)>, name: &str) {
    let (status, stderr, peak) = run_watched(args, feed);
    assert_eq!(status, Some(2), "ggp {args:?}: {stderr}");
    assert!(
        stderr.contains(&beyond_the_limit(name)),
        "ggp {args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(peak <= MAX_RESIDENT_KB, "ggp {args:?}: {peak} kB");
}

#[test]
fn reading_dev_zero_stops_at_the_limit_in_little_memory() {
    refused_at_the_limit(&["check", "/dev/zero"], None, "/dev/zero");
    refused_at_the_limit(&["bench", "/dev/zero"], None, "/dev/zero");
}

#[test]
fn an_endless_standard_input_is_refused_at_the_limit() {
    let stdin = "standard input";
    refused_at_the_limit(&["check", "-"], Some(endless_roles), stdin);
    refused_at_the_limit(
        &["replay", GAME, "--moves", "-"],
        Some(endless_roles),
        stdin,
    );
}

#[test]
fn every_command_that_reads_a_file_stops_at_the_limit() {
    let db = temp_db("beyond-the-limit.sqlite");
    let db = db.to_str().unwrap();
    let players = ["--player", "random", "--player", "random"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["fmt", "/dev/zero"],
        vec!["convert", "--to", "infix", "/dev/zero"],
        vec!["validate", "/dev/zero"],
        vec!["replay", "/dev/zero", "--random", "1"],
        vec!["replay", GAME, "--moves", "/dev/zero"],
        [&["match", "/dev/zero", "--no-db"][..], &players].concat(),
        [&["arena", "/dev/zero", "--no-db"][..], &players].concat(),
        [&["tournament", "/dev/zero", "--db", db][..], &players].concat(),
    ];
    for args in commands {
        refused_at_the_limit(&args, None, "/dev/zero");
    }
}

#[test]
fn a_file_at_the_limit_is_read_and_one_byte_more_is_not() {
    // A game padded with comments to exactly 16 MiB.
    let game = std::fs::read_to_string(common::workspace().join(GAME)).unwrap();
    let mut padded = game.clone();
    let line = format!(";{}\n", "x".repeat(62));
    while padded.len() + line.len() <= 16 << 20 {
        padded.push_str(&line);
    }
    padded.push_str(&"\n".repeat((16 << 20) - padded.len()));
    assert_eq!(padded.len(), 16 << 20);
    let at = temp_file("at-the-limit.kif", &padded);
    let out = ggp(&["check", at.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    padded.push('\n');
    let beyond = temp_file("beyond-the-limit.kif", &padded);
    let shown = beyond.to_str().unwrap();
    refused(&ggp(&["check", shown]), &beyond_the_limit(shown));
    let _ = std::fs::remove_file(at);
    let _ = std::fs::remove_file(beyond);

    // `--max-input-size`, before or after the command.
    let size = game.len();
    assert!(size > 2048, "the game is larger than 2 KiB");
    let out = ggp(&["--max-input-size", &size.to_string(), "check", GAME]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    refused(
        &ggp(&["check", GAME, "--max-input-size", "2KiB"]),
        &format!(
            "cannot read {GAME}: it is larger than 2 KiB, the largest input ggp reads (--max-input-size)"
        ),
    );
    refused(
        &ggp(&["check", GAME, "--max-input-size", &(size - 1).to_string()]),
        &format!("it is larger than {} bytes", size - 1),
    );
    refused(
        &ggp(&["check", GAME, "--max-input-size", "5GiB"]),
        "`5GiB` is more than 4294967295 bytes, the most accepted",
    );
}
