//! Tournaments through the binary: a web front end and worker processes sharing one match
//! database play a round robin to its end, one worker killed with SIGKILL on the way; and
//! `ggp tournament` on the command line.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};

/// A test body run on a SQLite file and on a fresh PostgreSQL database (skipped, saying so,
/// without `GGP_TEST_POSTGRES`), through the same code.
macro_rules! on_both {
    ($body:ident, $sqlite:ident, $postgres:ident, $file:literal, $name:literal) => {
        #[test]
        fn $sqlite() {
            $body(temp_db($file).to_str().unwrap());
        }
        #[test]
        fn $postgres() {
            if let Some(db) = temp_postgres($name) {
                $body(&db);
            }
        }
    };
}

/// Starts `ggp serve --worker` on the database; returns it, its server id and its log.
fn spawn_worker(db: &str, capacity: &str) -> (Spawned, i64, Arc<Mutex<String>>) {
    let mut child = ggp_command(&[
        "serve",
        "--worker",
        "--db",
        db,
        "--capacity",
        capacity,
        "--dead-after",
        "3",
        "--admin-token",
        ADMIN_TOKEN,
    ])
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let log = Arc::new(Mutex::new(String::new()));
    let server = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("the worker ended: {}", log.lock().unwrap());
        }
        log.lock().unwrap().push_str(&line);
        if let Some(rest) = line.split("(server ").nth(1) {
            break rest.split(')').next().unwrap().parse::<i64>().unwrap();
        }
    };
    drain_into(stderr, log.clone());
    (Spawned(child), server, log)
}

/// Three workers and a web front end (which plays nothing) run a 60-match round robin; one
/// worker is killed with SIGKILL while it plays; its matches are recorded as aborted with
/// their steps and played again by the others; no scheduled match is played twice or lost;
/// the standings are those the match records give.
fn three_workers_and_a_front_end_play_a_round_robin(db: &str) {
    let server = spawn_server(
        std::path::Path::new(db),
        &["--games", "games", "--capacity", "0", "--dead-after", "3"],
    );
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());
    let mut workers: Vec<(Spawned, i64, Arc<Mutex<String>>)> =
        (0..3).map(|_| spawn_worker(db, "4")).collect();

    // Refusals name the problem.
    for (body, needle) in [
        (
            json!({"games": ["tictactoe"], "players": ["random", "Random"], "startclock": 1, "playclock": 1}),
            "given twice",
        ),
        (
            json!({"games": ["tictactoe"], "players": ["random", "nobody"], "startclock": 1, "playclock": 1}),
            "`nobody` is not a player",
        ),
        (
            json!({"games": ["tictactoe"], "players": ["random"], "startclock": 1, "playclock": 1}),
            "has 2 roles to seat, but the tournament has 1 player",
        ),
        (
            json!({"games": ["tictactoe"], "players": ["random", "legal"], "format": "swiss", "startclock": 1, "playclock": 1}),
            "`swiss` is not a tournament format",
        ),
        (
            json!({"games": ["tictactoe"], "players": ["random", "legal"], "rounds": 0, "startclock": 1, "playclock": 1}),
            "0 rounds",
        ),
    ] {
        let (status, refused) = api("POST", &url("/api/tournaments"), admin, Some(body));
        assert_eq!(status, 400, "{refused}");
        assert!(
            refused["error"].as_str().unwrap().contains(needle),
            "{refused}"
        );
    }
    let (status, _) = api(
        "POST",
        &url("/api/tournaments"),
        None,
        Some(
            json!({"games": ["tictactoe"], "players": ["random", "legal"], "startclock": 1, "playclock": 1}),
        ),
    );
    assert_eq!(status, 401);

    // 3 players on a two-role game: 6 matches a round; 10 rounds. `montecarlo` thinks for its
    // whole play clock, so that matches take a few seconds and a worker is killed mid-match.
    let (status, made) = api(
        "POST",
        &url("/api/tournaments"),
        admin,
        Some(json!({
            "name": "ten rounds",
            "games": ["tictactoe"],
            "players": ["random", "legal", "montecarlo"],
            "rounds": 10,
            "startclock": 1,
            "playclock": 1,
            "seed": 5,
        })),
    );
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    assert_eq!(made["progress"]["queued"], 60, "{made}");
    let tournament = |_: ()| api("GET", &url(&format!("/api/tournaments/{id}")), None, None).1;

    // Kill the worker that is playing a match once a few have finished.
    let (victim, claimed) = wait_for(120, || {
        let t = tournament(());
        if t["progress"]["done"].as_u64().unwrap() < 3 {
            return None;
        }
        let matches = t["matches"].as_array().unwrap();
        workers
            .iter()
            .position(|(_, server, _)| {
                matches.iter().any(|m| {
                    // A match of `montecarlo`'s, under way: seconds from its end.
                    m["status"] == "claimed"
                        && m["server"] == *server
                        && m["matchId"].is_string()
                        && m["matchStatus"] == "unfinished"
                        && m["players"]
                            .as_array()
                            .unwrap()
                            .contains(&json!("montecarlo"))
                })
            })
            .map(|k| {
                let claimed: Vec<(i64, String)> = matches
                    .iter()
                    .filter(|m| m["status"] == "claimed" && m["server"] == workers[k].1)
                    .filter_map(|m| Some((m["id"].as_i64()?, m["matchId"].as_str()?.to_string())))
                    .collect();
                (k, claimed)
            })
    });
    let (mut killed, killed_server, _) = workers.remove(victim);
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    assert!(!claimed.is_empty());

    // The tournament finishes on the two workers left.
    let done = wait_for(600, || {
        let t = tournament(());
        (t["status"] == "finished").then_some(t)
    });
    assert_eq!(done["progress"]["done"], 60, "{done}");
    assert_eq!(done["progress"]["failed"], 0, "{done}");

    // The killed worker's matches: recorded as aborted, with the steps they had; their
    // scheduled matches played again, by another server.
    let matches = done["matches"].as_array().unwrap();
    let mut aborted = 0;
    for (row, match_id) in &claimed {
        let (_, record) = api("GET", &url(&format!("/api/matches/{match_id}")), None, None);
        if record["status"] == "aborted" {
            aborted += 1;
            assert!(
                record["abortReason"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("server {killed_server}")),
                "{record}"
            );
            assert_eq!(
                record["states"].as_array().unwrap().len(),
                record["moves"].as_array().unwrap().len() + 1
            );
        } else {
            // Recorded but never started: failed, or finished just before the kill.
            assert!(
                record["status"] == "finished" || record.get("error").is_some(),
                "{record}"
            );
        }
        let again = matches.iter().find(|m| m["id"] == *row).unwrap();
        assert_eq!(again["status"], "done", "{again}");
        if record["status"] == "aborted" {
            assert!(again["attempts"].as_u64().unwrap() >= 2, "{again}");
            assert_ne!(again["matchId"].as_str().unwrap(), match_id, "{again}");
        } else if record["status"] == "finished" {
            // Finished before the kill, the row not yet marked: played, not played again.
            assert_eq!(again["matchId"].as_str().unwrap(), match_id, "{again}");
        }
    }
    assert!(
        aborted >= 1,
        "the killed worker's match under way was recorded as aborted"
    );
    let (_, server_list) = api("GET", &url("/api/matches?status=aborted"), None, None);
    assert_eq!(
        server_list.as_array().unwrap().len(),
        aborted,
        "{server_list}"
    );

    // Every scheduled match was played once to its end: one finished match per row, each
    // row's last match that one; the seatings of each round are the 6 of a round robin.
    let (_, all) = api("GET", &url("/api/matches?limit=1000"), None, None);
    let rows: Vec<&Value> = matches.iter().collect();
    assert_eq!(rows.len(), 60);
    let mut finished_per_row: HashMap<i64, usize> = HashMap::new();
    let by_id: HashMap<&str, &Value> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m))
        .collect();
    for row in &rows {
        let match_id = row["matchId"].as_str().unwrap();
        assert_eq!(row["matchStatus"], "finished", "{row}");
        assert!(by_id.contains_key(match_id), "{match_id}");
        *finished_per_row
            .entry(row["id"].as_i64().unwrap())
            .or_default() += 1;
    }
    assert!(finished_per_row.values().all(|&n| n == 1));
    let finished_ids: HashSet<&str> = rows
        .iter()
        .map(|r| r["matchId"].as_str().unwrap())
        .collect();
    assert_eq!(finished_ids.len(), 60, "no match played for two rows");
    for round in 1..=10 {
        let seatings: HashSet<Vec<String>> = rows
            .iter()
            .filter(|r| r["round"] == round)
            .map(|r| serde_json::from_value(r["players"].clone()).unwrap())
            .collect();
        assert_eq!(seatings.len(), 6, "round {round}");
    }

    // The standings are those the records give: per player, matches played and mean goal.
    let mut tally: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for match_id in &finished_ids {
        let (_, record) = api("GET", &url(&format!("/api/matches/{match_id}")), None, None);
        let goals = record["goalValues"].as_array().unwrap();
        for (k, name) in record["playerNamesFromHost"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let t = tally.entry(name.as_str().unwrap().to_string()).or_default();
            t.0 += 1;
            t.1 += goals[k].as_u64().unwrap();
        }
    }
    let standings = done["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    for s in standings {
        let (played, total) = tally[s["player"].as_str().unwrap()];
        assert_eq!(s["played"], played as u64, "{s}");
        assert!(
            (s["mean"].as_f64().unwrap() - total as f64 / played as f64).abs() < 1e-9,
            "{s}"
        );
    }
    let means: Vec<f64> = standings
        .iter()
        .map(|s| s["mean"].as_f64().unwrap())
        .collect();
    assert!(
        means.windows(2).all(|w| w[0] >= w[1]),
        "best first: {means:?}"
    );
    assert_eq!(
        standings
            .iter()
            .map(|s| s["played"].as_u64().unwrap())
            .sum::<u64>(),
        120
    );

    // The tournament's page and the leaderboard show them.
    let page = http("GET", &url(&format!("/tournaments/{id}")), None, None).2;
    assert!(
        page.contains("ten rounds") && page.contains("montecarlo"),
        "{page}"
    );
    let (_, board) = api("GET", &url("/api/leaderboard?game=tictactoe"), None, None);
    let rated: Vec<&str> = board["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["player"].as_str().unwrap())
        .collect();
    assert_eq!(rated.len(), 3, "{board}");
    // The leaderboard's page writes each rating as the JSON gives it, the way every page does:
    // the conservative μ − 3σ, then μ ± 3σ.
    let page = http("GET", &url("/leaderboard?game=tictactoe"), None, None).2;
    for e in board["ratings"].as_array().unwrap() {
        let (mu, sigma) = (
            e["rating"]["mu"].as_f64().unwrap(),
            e["rating"]["sigma"].as_f64().unwrap(),
        );
        let shown = format!(
            "<strong>{:.1}</strong><span class=\"muted\"> (μ {mu:.1} ± 3σ {:.1})</span>",
            mu - 3.0 * sigma,
            3.0 * sigma
        );
        assert!(page.contains(&shown), "{shown} not in {page}");
    }
    for (_, _, log) in &workers {
        assert!(!log.lock().unwrap().contains("panicked"));
    }
    drop(workers);
    drop(server);
}

on_both!(
    three_workers_and_a_front_end_play_a_round_robin,
    three_workers_and_a_front_end_play_a_round_robin_on_sqlite,
    three_workers_and_a_front_end_play_a_round_robin_on_postgresql,
    "tournament-workers.sqlite",
    "workers"
);

on_both!(
    ggp_tournament_plays_a_round_robin,
    ggp_tournament_plays_a_round_robin_and_prints_the_standings,
    ggp_tournament_plays_a_round_robin_on_postgresql,
    "tournament-cli.sqlite",
    "cli"
);

fn ggp_tournament_plays_a_round_robin(db: &str) {
    let tag = if db.starts_with("postgres") {
        "postgres"
    } else {
        "sqlite"
    };
    let json_path = temp_file(&format!("tournament-cli-{tag}.json"), "");
    let out = ggp(&[
        "tournament",
        "games/tictactoe.kif",
        "--player",
        "random",
        "--player",
        "legal",
        "--player",
        "sample",
        "--rounds",
        "1",
        "--startclock",
        "1",
        "--playclock",
        "1",
        "--seed",
        "3",
        "--parallel",
        "3",
        "--db",
        db,
        "--json",
        json_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(result["matches"], 6, "{result}");
    let standings = result["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    for s in standings {
        assert_eq!(s["played"], 4, "{s}");
        assert!(printed.contains(s["player"].as_str().unwrap()), "{printed}");
        assert!(s["rating"].is_f64(), "{s}");
    }
    // Recorded in the database like any match.
    let listed = ggp(&["matches", "list", "--db", db]);
    assert_eq!(
        text(&listed.stdout).matches(" finished ").count(),
        6,
        "{}",
        text(&listed.stdout)
    );

    // Refusals: an unknown player, a game with errors.
    let out = ggp(&[
        "tournament",
        "games/tictactoe.kif",
        "--player",
        "random",
        "--player",
        "nobody",
        "--db",
        db,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("`nobody` is not a player"),
        "{}",
        text(&out.stderr)
    );
    let broken = temp_file(
        &format!("broken-game-{tag}.kif"),
        "(role a) (<= (legal a x) (true ?y))",
    );
    let out = ggp(&[
        "tournament",
        broken.to_str().unwrap(),
        "--player",
        "random",
        "--db",
        db,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("broken-game-{tag}.kif")),
        "{}",
        text(&out.stderr)
    );
}

/// Pausing, resuming and ending a tournament through the API, on a server that plays nothing
/// (`--capacity 0`), so that the schedule stays as made: each action only from the states it
/// applies to; ending fails the unplayed matches, saying why.
fn a_tournament_is_paused_resumed_and_ended(db: &str) {
    let server = spawn_server(
        std::path::Path::new(db),
        &["--games", "games", "--capacity", "0"],
    );
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());
    let (status, made) = api(
        "POST",
        &url("/api/tournaments"),
        admin,
        Some(
            json!({"games": ["tictactoe"], "players": ["random", "legal"], "rounds": 2,
                    "startclock": 1, "playclock": 1}),
        ),
    );
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let action = |what: &str, token: Option<&str>| {
        api(
            "POST",
            &url(&format!("/api/tournaments/{id}/{what}")),
            token,
            None,
        )
    };
    assert_eq!(action("pause", None).0, 401);
    let (status, paused) = action("pause", admin);
    assert_eq!(
        (status, paused["status"].as_str()),
        (200, Some("paused")),
        "{paused}"
    );
    let (status, again) = action("pause", admin);
    assert_eq!(status, 409, "{again}");
    assert!(
        again["error"].as_str().unwrap().contains("is paused"),
        "{again}"
    );
    let (status, resumed) = action("resume", admin);
    assert_eq!(
        (status, resumed["status"].as_str()),
        (200, Some("running")),
        "{resumed}"
    );
    let (status, unknown) = action("explode", admin);
    assert_eq!(status, 404, "{unknown}");
    let (status, ended) = action("end", admin);
    assert_eq!(
        (status, ended["status"].as_str()),
        (200, Some("finished")),
        "{ended}"
    );
    assert_eq!(ended["progress"]["failed"], 4, "{ended}");
    assert_eq!(ended["progress"]["queued"], 0, "{ended}");
    let (_, full) = api("GET", &url(&format!("/api/tournaments/{id}")), None, None);
    for m in full["matches"].as_array().unwrap() {
        assert_eq!(m["status"], "failed", "{m}");
        assert_eq!(m["failure"], "the tournament was ended first", "{m}");
    }
    assert_eq!(action("resume", admin).0, 409);
    assert_eq!(
        api("POST", &url("/api/tournaments/999/pause"), admin, None).0,
        404
    );
}

on_both!(
    a_tournament_is_paused_resumed_and_ended,
    a_tournament_is_paused_resumed_and_ended_on_sqlite,
    a_tournament_is_paused_resumed_and_ended_on_postgresql,
    "tournament-states.sqlite",
    "states"
);

/// A continuous tournament (Tiltyard's way) on two servers sharing the database: matches keep
/// being made while its players are idle, until it is ended.
fn a_continuous_tournament_runs_until_ended(db: &str) {
    let server = spawn_server(
        std::path::Path::new(db),
        &["--games", "games", "--capacity", "2"],
    );
    let (_worker, _, log) = spawn_worker(db, "2");
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());
    let (status, made) = api(
        "POST",
        &url("/api/tournaments"),
        admin,
        Some(json!({"format": "continuous", "games": ["tictactoe"],
                    "players": ["random", "legal", "sample"], "startclock": 1, "playclock": 1})),
    );
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_i64().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let (_, t) = api("GET", &url(&format!("/api/tournaments/{id}")), None, None);
        if t["progress"]["done"].as_u64().unwrap() >= 12 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{t}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (status, ended) = api(
        "POST",
        &url(&format!("/api/tournaments/{id}/end")),
        admin,
        None,
    );
    assert_eq!(status, 200, "{ended}");
    // What was being played ends as played; nothing new starts.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let (_, t) = api("GET", &url(&format!("/api/tournaments/{id}")), None, None);
    assert_eq!(t["status"], "finished", "{t}");
    assert_eq!(t["progress"]["queued"], 0, "{t}");
    assert_eq!(t["progress"]["playing"], 0, "{t}");
    let matches = t["matches"].as_array().unwrap();
    for m in matches {
        let players: Vec<&str> = m["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(players.len(), 2, "{m}");
        assert_ne!(players[0], players[1], "{m}");
        assert!(
            m["status"] == "done" || m["failure"] == "the tournament was ended first",
            "{m}"
        );
    }
    // Rounds are numbered one after the other: no two servers made the same match.
    let mut rounds: Vec<u64> = matches
        .iter()
        .map(|m| m["round"].as_u64().unwrap())
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    assert_eq!(rounds.len(), matches.len(), "{t}");
    assert!(
        !log.lock().unwrap().contains("failed"),
        "{}",
        log.lock().unwrap()
    );
}

on_both!(
    a_continuous_tournament_runs_until_ended,
    a_continuous_tournament_runs_until_ended_on_sqlite,
    a_continuous_tournament_runs_until_ended_on_postgresql,
    "tournament-continuous.sqlite",
    "continuous"
);
