//! `ggp serve` through the binary and its HTTP API: games uploaded and refused, `ggp player`
//! processes registered and playing, a silent player, the live stream, the export, tokens,
//! and a server killed in the middle of a match.

mod common;

use common::*;
use serde_json::{Value, json};

fn game_path(name: &str) -> String {
    workspace().join("games").join(name).display().to_string()
}

#[test]
fn the_gamemaster_over_http() {
    let db = temp_db("serve-api.sqlite");
    let server = spawn_server(
        &db,
        &[
            "--games",
            &game_path(""),
            "--grace-ms",
            "300",
            "--ping-interval",
            "1",
        ],
    );
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());

    // Games: one kept, one refused with the diagnostics `ggp check --format json` gives.
    let rules = std::fs::read_to_string(game_path("lightsout.kif")).unwrap();
    let (status, kept) = api(
        "POST",
        &url("/api/games"),
        admin,
        Some(json!({"key": "puzzle", "rules": rules})),
    );
    assert_eq!(status, 201, "{kept}");
    assert_eq!(kept["roles"], json!(["player"]));
    let broken =
        "(role r)\n(init (p))\n(<= (legal r ?m)\n    (true (p)))\n(<= terminal (true (q)))\n";
    let path = temp_file("serve-broken.kif", broken);
    let (status, refused) = api(
        "POST",
        &url("/api/games"),
        admin,
        Some(json!({"key": "broken", "rules": broken})),
    );
    assert_eq!(status, 422, "{refused}");
    let out = ggp(&["check", "--format", "json", path.to_str().unwrap()]);
    let checked: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let diagnostics = refused["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), checked.len(), "{refused}");
    for (a, b) in diagnostics.iter().zip(&checked) {
        for field in [
            "code", "severity", "message", "line", "column", "start", "end",
        ] {
            assert_eq!(a[field], b[field], "{field}: {a} / {b}");
        }
    }
    let (status, _) = api("GET", &url("/api/games/broken"), None, None);
    assert_eq!(status, 404);

    // Two `ggp player` processes, registered.
    let (mut random, random_url) = spawn_player("random");
    let (mut legal, legal_url) = spawn_player("legal");
    let mut owner = String::new();
    for (name, player_url) in [("alpha", &random_url), ("beta", &legal_url)] {
        let (status, p) = api(
            "POST",
            &url("/api/players"),
            admin,
            Some(json!({"name": name, "url": player_url})),
        );
        assert_eq!(status, 201, "{p}");
        assert_eq!(p["token"].as_str().unwrap().len(), 64);
        owner = p["token"].as_str().unwrap().to_string();
    }
    // Asked INFO: both available, with the names they give.
    let players = wait_for(30, || {
        let (_, players) = api("GET", &url("/api/players"), None, None);
        players
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["status"] == "available")
            .then_some(players)
    });
    assert_eq!(players[0]["info_name"], "ggp-random");
    assert_eq!(players[1]["info_name"], "ggp-legal");

    // A match between them, watched from its start.
    let (status, created) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(
            json!({"game": "tictactoe", "players": ["alpha", "beta"], "startclock": 5, "playclock": 5}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let stream = events(&url(&format!("/api/matches/{id}/events")));
    let (status, record) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
    assert_eq!(status, 200);
    assert_eq!(record["status"], "finished");
    assert_eq!(record["playerNamesFromHost"], json!(["alpha", "beta"]));
    assert!(
        record["errors"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap())
            .all(|e| e == ""),
        "{record}"
    );
    // The stream delivered every step, as recorded, then the end.
    let steps: Vec<&Value> = stream
        .iter()
        .filter(|(n, _)| n == "step")
        .map(|(_, d)| d)
        .collect();
    let moves = record["moves"].as_array().unwrap();
    assert_eq!(steps.len(), moves.len());
    for (k, step) in steps.iter().enumerate() {
        assert_eq!(step["step"], k + 1);
        assert_eq!(step["moves"], moves[k]);
        assert_eq!(step["state"], record["states"][k + 1]);
    }
    assert_eq!(stream[0].0, "begin");
    assert_eq!(stream[0].1["state"], record["states"][0]);
    let (name, end) = stream.last().unwrap();
    assert_eq!(name, "end");
    assert_eq!(end["goals"], record["goalValues"]);
    // The export is `ggp matches export` of the same match.
    let (status, headers, exported) = http(
        "GET",
        &url(&format!("/matches/{id}/export.json")),
        None,
        None,
    );
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/json")
    );
    let out = ggp(&["matches", "export", &id, "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(exported, text(&out.stdout));

    // A match against a player that never answers PLAY: every move of its substituted.
    let (silent_url, _requests) = stalling_player(0);
    let (status, p) = api(
        "POST",
        &url("/api/players"),
        admin,
        Some(json!({"name": "silent", "url": silent_url})),
    );
    assert_eq!(status, 201, "{p}");
    let (status, created) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(
            json!({"game": "tictactoe", "players": ["alpha", "silent"], "startclock": 2, "playclock": 1}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let stream = events(&url(&format!("/api/matches/{id}/events")));
    assert_eq!(stream.last().unwrap().1["status"], "finished");
    let (_, record) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
    let moves = record["moves"].as_array().unwrap().len();
    let errors: Vec<&str> = record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[1].as_str().unwrap())
        .filter(|e| !e.is_empty())
        .collect();
    assert_eq!(errors.len(), moves, "{record}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("timeout: no reply within 1.3 s")),
        "{errors:?}"
    );
    let page = http("GET", &url(&format!("/matches/{id}")), None, None).2;
    assert!(page.contains("no reply within 1.3 s"));
    // Lists filter by player and game.
    let (_, silent) = api("GET", &url("/api/matches?player=silent"), None, None);
    assert_eq!(silent.as_array().unwrap().len(), 1);
    let (_, both) = api(
        "GET",
        &url("/api/matches?player=alpha&game=tictactoe&status=finished"),
        None,
        None,
    );
    assert_eq!(both.as_array().unwrap().len(), 2);
    let (_, player) = api("GET", &url("/api/players/alpha"), None, None);
    assert_eq!(player["matches"].as_array().unwrap().len(), 2);

    // Unauthenticated writes are refused.
    for (method, path, body) in [
        (
            "POST",
            "/api/games",
            json!({"key": "x", "rules": "(role r)"}),
        ),
        (
            "POST",
            "/api/players",
            json!({"name": "x", "url": "http://127.0.0.1:1"}),
        ),
        ("DELETE", "/api/players/beta", json!({})),
        (
            "POST",
            "/api/matches",
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1, "playclock": 1}),
        ),
        (
            "POST",
            &format!("/api/matches/{id}/moves"),
            json!({"move": "wait"}),
        ),
    ] {
        let (status, answer) = api(method, &url(path), None, Some(body));
        assert_eq!(status, 401, "{method} {path}: {answer}");
    }
    // The owner's token removes its player.
    let (status, _) = api("DELETE", &url("/api/players/beta"), Some(&owner), None);
    assert_eq!(status, 204);
    let (_, players) = api("GET", &url("/api/players"), None, None);
    assert_eq!(players.as_array().unwrap().len(), 2);
    let _ = random.kill();
    let _ = legal.kill();
}

#[test]
fn a_match_running_when_the_server_is_killed_is_aborted_with_its_steps() {
    let db = temp_db("serve-restart.sqlite");
    let mut server = spawn_server(&db, &["--games", &game_path("")]);
    let url = |server: &Served, path: &str| format!("{}{path}", server.url);
    let (status, created) = api(
        "POST",
        &url(&server, "/api/matches"),
        Some(ADMIN_TOKEN),
        Some(
            json!({"game": "tictactoe", "players": ["human", "random"], "startclock": 1, "playclock": 120}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let token = created["seats"][0]["token"].as_str().unwrap().to_string();
    let moves = url(&server, &format!("/api/matches/{id}/moves"));
    // Two steps: the person's mark, then its `wait` (its only legal move, made for it) while
    // o marks.
    wait_for(30, || {
        let (status, _) = api(
            "POST",
            &moves,
            Some(&token),
            Some(json!({"move": "(play 2 2)", "step": 0})),
        );
        (status == 202).then_some(())
    });
    wait_for(30, || {
        let (_, r) = api(
            "GET",
            &url(&server, &format!("/api/matches/{id}")),
            None,
            None,
        );
        (r["moves"].as_array().unwrap().len() == 2).then_some(())
    });
    // Killed while it waits for the person's third move.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    drop(server);

    let server = spawn_server(&db, &[]);
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .contains("1 match running when the server last stopped is recorded as aborted"),
        "{}",
        server.log.lock().unwrap()
    );
    let (_, record) = api(
        "GET",
        &url(&server, &format!("/api/matches/{id}")),
        None,
        None,
    );
    assert_eq!(record["status"], "aborted");
    assert_eq!(
        record["moves"],
        json!([["(play 2 2)", "wait"], ["wait", record["moves"][1][1]]])
    );
    let reason = record["abortReason"].as_str().unwrap();
    assert!(
        reason.starts_with("the server stopped while the match was running"),
        "{reason}"
    );
    let page = http("GET", &url(&server, &format!("/matches/{id}")), None, None).2;
    assert!(page.contains("Aborted"), "{page}");
    assert!(page.contains("the server stopped while the match was running"));
    assert!(page.contains("the 2 steps played are kept"));
    assert!(page.contains(r#"id="step-2""#));
    // `ggp matches` agrees.
    let out = ggp(&["matches", "list", "--db", db.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("aborted"));
}

#[test]
fn a_gdl2_match_is_played_with_the_manager_as_random_and_each_role_sees_only_its_view() {
    let db = temp_db("serve-gdl2.sqlite");
    let server = spawn_server(&db, &["--games", &game_path(""), "--grace-ms", "300"]);
    let url = |path: &str| format!("{}{path}", server.url);
    let admin = Some(server.token.as_str());

    // Monty Hall against a `ggp player`: the manager plays `random`, which has no seat.
    let (mut player, player_url) = spawn_player("random");
    let (status, p) = api(
        "POST",
        &url("/api/players"),
        admin,
        Some(json!({"name": "alpha", "url": player_url})),
    );
    assert_eq!(status, 201, "{p}");
    let (status, refused) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(
            json!({"game": "montyhall", "players": ["alpha", "random"], "startclock": 5, "playclock": 5}),
        ),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("GDL-II's random role, which the manager plays"),
        "{refused}"
    );
    let (status, created) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(
            json!({"game": "montyhall", "players": ["alpha"], "startclock": 5, "playclock": 5, "seed": 7}),
        ),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let stream = events(&url(&format!("/api/matches/{id}/events")));
    assert_eq!(stream.last().unwrap().1["status"], "finished");
    let (_, record) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
    assert_eq!(
        record["playerNamesFromHost"],
        json!(["alpha", "(the manager)"])
    );
    assert_eq!(record["gameRoleNames"], json!(["contestant", "random"]));
    let moves = record["moves"].as_array().unwrap();
    let percepts = record["percepts"].as_array().unwrap();
    assert_eq!(moves.len(), 3);
    assert_eq!(percepts.len(), 3);
    // Every role's percepts at every step: the contestant saw its pick, the door opened and
    // at the end the car; the host saw the pick and the last move.
    let pick = moves[0][0].as_str().unwrap().replace("choose", "picked");
    assert_eq!(percepts[0], json!([[pick], [pick]]));
    let opened = moves[1][1].as_str().unwrap().replace("open", "opened");
    assert_eq!(percepts[1], json!([[opened], []]));
    assert_eq!(percepts[2][1], json!([moves[2][0]]));
    assert!(percepts[2][0][0].as_str().unwrap().starts_with("(car "));
    assert!(
        record["errors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row[0] == ""),
        "the player's moves stood: {record}"
    );
    // A spectator watching while the match was played saw its progress only: no moves, no
    // percepts. Read again now that it is over, the stream has them all; each role's view is
    // public now; the export is `ggp matches export`'s, percepts included.
    let live_steps: Vec<&Value> = stream
        .iter()
        .filter(|(n, _)| n == "step")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(live_steps.len(), 3, "{stream:?}");
    for step in &live_steps {
        assert!(step.get("percepts").is_none(), "{step}");
        assert!(step.get("moves").is_none(), "{step}");
    }
    let replay = events(&url(&format!("/api/matches/{id}/events")));
    let steps: Vec<&Value> = replay
        .iter()
        .filter(|(n, _)| n == "step")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(steps.len(), 3, "{replay:?}");
    for (k, step) in steps.iter().enumerate() {
        assert_eq!(step["percepts"], percepts[k]);
        assert_eq!(step["moves"], moves[k]);
    }
    for (r, role) in ["contestant", "random"].iter().enumerate() {
        let (status, view) = api(
            "GET",
            &url(&format!("/api/matches/{id}/views/{role}")),
            None,
            None,
        );
        assert_eq!(status, 200, "{view}");
        for (k, step) in view["steps"].as_array().unwrap().iter().enumerate() {
            assert_eq!(step["percepts"], percepts[k][r]);
            assert_eq!(step["move"], moves[k][r]);
        }
    }
    let exported = http(
        "GET",
        &url(&format!("/matches/{id}/export.json")),
        None,
        None,
    )
    .2;
    let out = ggp(&["matches", "export", &id, "--db", db.to_str().unwrap()]);
    assert_eq!(exported, text(&out.stdout));
    assert!(exported.contains("\"percepts\""));

    // A person plays the contestant: its play page's data is its own view, nothing else.
    let (status, created) = api(
        "POST",
        &url("/api/matches"),
        admin,
        Some(json!({"game": "montyhall", "players": ["human"], "startclock": 1, "playclock": 120})),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let token = created["seats"][0]["token"].as_str().unwrap().to_string();
    // At once, recorded or not yet: the match is there, live.
    let (status, public) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
    assert_eq!(
        (status, &public["status"]),
        (200, &json!("live")),
        "{public}"
    );
    let view_url = url(&format!("/api/matches/{id}/views/contestant"));
    let turn = |step: u64| {
        wait_for(30, || {
            let (status, view) = api("GET", &view_url, Some(&token), None);
            assert_eq!(status, 200, "{view}");
            (view["turn"]["step"] == step).then_some(view)
        })
    };
    let view = turn(0);
    assert_eq!(
        view["turn"]["moves"],
        json!(["(choose 1)", "(choose 2)", "(choose 3)"])
    );
    let (status, _) = api("GET", &view_url, None, None);
    assert_eq!(
        status, 401,
        "a role's view of a match being played needs its token"
    );
    let (status, answer) = api(
        "POST",
        &url(&format!("/api/matches/{id}/moves")),
        Some(&token),
        Some(json!({"move": "(choose 2)", "step": 0})),
    );
    assert_eq!(status, 202, "{answer}");
    // The host opens a door; the person's `wait` is made for it.
    let view = turn(2);
    let (_, public) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
    assert_eq!(public["status"], "live");
    assert!(public.get("states").is_none() && public.get("percepts").is_none());
    assert_eq!(public["steps"], 2);
    let (_, truth) = api("GET", &url(&format!("/api/matches/{id}")), admin, None);
    let page = http("GET", &url(&format!("/matches/{id}?seat=0")), None, None).2;
    let car = truth["states"][2]
        .as_str()
        .unwrap()
        .split("(car ")
        .nth(1)
        .unwrap()
        .chars()
        .next()
        .unwrap();
    // The rules are public (they name `car` and `hide`); what is shown of the match is not.
    let without_rules = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("rules");
        v.to_string()
    };
    for shown in [without_rules(&view), without_rules(&public), page.clone()] {
        assert!(
            !shown.contains("(car") && !shown.contains("(hide"),
            "{shown}"
        );
    }
    assert!(page.contains("secret until it ends"), "{page}");
    let seen: Vec<&Value> = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["percepts"])
        .collect();
    assert_eq!(seen[0], &json!(["(picked 2)"]));
    let opened = seen[1][0].as_str().unwrap();
    assert!(opened.starts_with("(opened ") && !opened.contains('2') && !opened.contains(car));
    assert_eq!(view["turn"]["moves"], json!(["stay", "switch"]));
    let (status, answer) = api(
        "POST",
        &url(&format!("/api/matches/{id}/moves")),
        Some(&token),
        Some(json!({"move": "switch", "step": 2})),
    );
    assert_eq!(status, 202, "{answer}");
    let record = wait_for(30, || {
        let (_, r) = api("GET", &url(&format!("/api/matches/{id}")), None, None);
        (r["status"] == "finished").then_some(r)
    });
    let (_, view) = api("GET", &view_url, None, None);
    let percepts = record["percepts"].as_array().unwrap();
    for (k, step) in view["steps"].as_array().unwrap().iter().enumerate() {
        assert_eq!(step["percepts"], percepts[k][0], "step {}", k + 1);
    }
    // Switching from 2 to the door neither picked nor opened wins when the car is there.
    assert_eq!(view["goal"], if car == '2' { 0 } else { 100 }, "{record}");
    let _ = player.kill();
}
