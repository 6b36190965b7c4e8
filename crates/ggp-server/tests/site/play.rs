//! Matches played in the server: a person's seat, GDL-II's secrets and a seat's board of what
//! it knows, a match a server that went had finished.

use super::*;

on_both!(
    human,
    a_person_plays_a_seat_through_the_api,
    a_person_plays_a_seat_through_the_api_on_postgresql
);

on_both!(
    finished_before_gone,
    a_match_finished_by_a_server_that_went_before_recording_it_is_not_played_again,
    a_match_finished_by_a_server_that_went_is_not_played_again_on_postgresql
);

on_both!(
    gdl2,
    a_gdl2_match_shows_each_role_only_what_it_sees_while_it_is_played,
    a_gdl2_match_shows_each_role_only_what_it_sees_on_postgresql
);

async fn human(backend: Backend) {
    let s = site(backend, "human").await;
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "connect4", "players": ["human", "random"], "startclock": 1, "playclock": 60, "seed": 5}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let created = a.json();
    let id = created["id"].as_str().unwrap().to_string();
    let seat = &created["seats"][0];
    assert_eq!(seat["role"], "red");
    let token = seat["token"].as_str().unwrap().to_string();
    assert_eq!(
        seat["url"].as_str().unwrap(),
        format!("/matches/{id}?seat=0#seat=0&token={token}")
    );
    let response = s
        .app
        .clone()
        .oneshot(
            Request::get(format!("/api/matches/{id}/events"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut events = Events {
        stream: response.into_body().into_data_stream(),
        buffer: String::new(),
    };
    let moves = format!("/api/matches/{id}/moves");
    let mut steps = 0;
    let mut refused_once = false;
    loop {
        let (name, data) = events.next().await.expect("the stream goes on to its end");
        match name.as_str() {
            "step" => {
                steps += 1;
                assert_eq!(data["step"], steps);
            }
            "turn" => {
                let Some(mine) = data["seats"].as_array().unwrap().first() else {
                    continue;
                };
                let legal: Vec<&str> = mine["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap())
                    .collect();
                let step = mine["step"].as_u64().unwrap();
                // A seat with one legal move (its `noop` while the other drops) is never
                // asked: that move is made for the person at once.
                assert!(legal.len() > 1, "{mine}");
                // Every drop names a column of the board.
                assert!(
                    mine["targets"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|t| t["column"].is_string()),
                    "{mine}"
                );
                if !refused_once {
                    refused_once = true;
                    let a = s
                        .api("POST", &moves, Some("wrong"), json!({"move": legal[0]}))
                        .await;
                    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
                    let a = s
                        .api("POST", &moves, Some(&token), json!({"move": "(drop 99)"}))
                        .await;
                    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
                    assert!(a.json()["error"].as_str().unwrap().contains("(drop 1)"));
                    let a = s
                        .api(
                            "POST",
                            &moves,
                            Some(&token),
                            json!({"move": legal[0], "step": step + 1}),
                        )
                        .await;
                    assert_eq!(a.status, StatusCode::CONFLICT);
                }
                // Any case and spacing; the rules' spelling is what is played.
                let chosen = legal.last().unwrap().to_uppercase().replace(' ', "  ");
                let a = s
                    .api(
                        "POST",
                        &moves,
                        Some(&token),
                        json!({"move": chosen, "step": step}),
                    )
                    .await;
                assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
                assert_eq!(a.json()["move"], *legal.last().unwrap());
                // Not twice.
                let a = s
                    .api(
                        "POST",
                        &moves,
                        Some(&token),
                        json!({"move": legal[0], "step": step}),
                    )
                    .await;
                assert_eq!(a.status, StatusCode::CONFLICT);
            }
            "end" => {
                assert_eq!(data["status"], "finished");
                break;
            }
            _ => {}
        }
    }
    let record = s.finished(&id).await;
    assert_eq!(record["moves"].as_array().unwrap().len(), steps);
    assert_eq!(record["playerNamesFromHost"], json!(["human", "random"]));
    // Every move of the person stood: no error recorded for it.
    assert!(
        record["errors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row[0] == ""),
        "{}",
        record["errors"]
    );
    let a = s
        .api("POST", &moves, Some(&token), json!({"move": "noop"}))
        .await;
    assert_eq!(a.status, StatusCode::CONFLICT, "the match is over");
}

async fn gdl2(backend: Backend) {
    let s = site(backend, "gdl2").await;
    // Monty Hall's `random` role is the manager's: no seat for it, and one given is refused.
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "montyhall", "players": ["human", "random"], "startclock": 1, "playclock": 60}),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    let error = a.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("`random` is GDL-II's random role, which the manager plays: give 1 player, for contestant; 2 players were given"),
        "{error}"
    );
    // The form asks for no player for it.
    let (cookie, _) = s.login(ADMIN).await;
    let form = s
        .get_as("/matches/new?game=montyhall", Some(&cookie))
        .await
        .body;
    assert!(form.contains(r#"id="player0""#), "{form}");
    assert!(!form.contains(r#"id="player1""#), "{form}");
    assert!(form.contains("played by the manager"), "{form}");

    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "montyhall", "players": ["human"], "startclock": 1, "playclock": 60, "seed": 3}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let created = a.json();
    let id = created["id"].as_str().unwrap().to_string();
    let seat = &created["seats"][0];
    assert_eq!(seat["role"], "contestant");
    let token = seat["token"].as_str().unwrap().to_string();
    assert_eq!(
        seat["url"].as_str().unwrap(),
        format!("/matches/{id}?seat=0#seat=0&token={token}")
    );

    // The seat's stream: its role's view only.
    let events_path = format!("/api/matches/{id}/events?html=1");
    let (status, mut mine) = events_as(&s, &events_path, Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = events_as(&s, &format!("{events_path}&role=random"), Some(&token)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "another role's view");
    let (status, _) = events_as(&s, &format!("{events_path}&role=contestant"), None).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a role's view without its token"
    );
    let moves = format!("/api/matches/{id}/moves");
    let view = format!("/api/matches/{id}/views/contestant");
    let mut seen: Vec<Value> = Vec::new();
    let mut secret_checked = false;
    loop {
        let (name, data) = mine.next().await.expect("the stream goes on to its end");
        let text = data.to_string();
        match name.as_str() {
            "begin" => {
                assert_eq!(data["view"], "role");
                assert_eq!(data["gdl2"], true);
                assert!(data["state"].is_null(), "{data}");
                assert!(data.get("board").is_none(), "{data}");
            }
            "step" => {
                // Exactly the role's own move, error and percepts: no state, no joint move.
                let mut keys: Vec<&str> = data
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                keys.sort_unstable();
                assert_eq!(
                    keys,
                    ["error", "move", "percepts", "role", "row", "step", "time"],
                    "{data}"
                );
                assert!(
                    !text.contains("(phase") && !text.contains("(hide"),
                    "{text}"
                );
                seen.push(data);
            }
            "turn" => {
                for seat in data["seats"].as_array().unwrap() {
                    assert_eq!(seat["seat"], 0, "only its own turn: {data}");
                }
                let Some(turn) = data["seats"].as_array().unwrap().first() else {
                    continue;
                };
                let legal: Vec<String> = turn["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect();
                if !secret_checked {
                    secret_checked = true;
                    assert_eq!(legal, ["(choose 1)", "(choose 2)", "(choose 3)"]);
                    // While it is played: the record's states, moves and percepts are the
                    // admin's only; the progress is public.
                    let public = s.get(&format!("/api/matches/{id}")).await.json();
                    assert_eq!(public["status"], "live");
                    for field in ["states", "moves", "errors", "percepts"] {
                        assert!(public.get(field).is_none(), "{field}: {public}");
                    }
                    assert!(public["hidden"].is_string(), "{public}");
                    let with_seat = s
                        .api(
                            "GET",
                            &format!("/api/matches/{id}"),
                            Some(&token),
                            json!(null),
                        )
                        .await
                        .json();
                    assert!(with_seat.get("states").is_none(), "{with_seat}");
                    let admin = s
                        .api(
                            "GET",
                            &format!("/api/matches/{id}"),
                            Some(ADMIN),
                            json!(null),
                        )
                        .await
                        .json();
                    assert!(
                        admin["states"][0]
                            .as_str()
                            .unwrap()
                            .contains("(phase hide)")
                    );
                    for path in [
                        format!("/matches/{id}/export.json"),
                        format!("/matches/{id}/boards/0"),
                    ] {
                        assert_eq!(s.get(&path).await.status, StatusCode::FORBIDDEN, "{path}");
                    }
                    // Pages: nobody's but the admin's shows the state, a seat's never.
                    for page in [
                        s.get(&format!("/matches/{id}")).await.body,
                        s.get(&format!("/matches/{id}?seat=0")).await.body,
                        s.get_as(&format!("/matches/{id}?seat=0"), Some(&cookie))
                            .await
                            .body,
                    ] {
                        assert!(page.contains("secret until it ends"), "{page}");
                        assert!(!page.contains("hide"), "{page}");
                    }
                    let admin_page = s
                        .get_as(&format!("/matches/{id}"), Some(&cookie))
                        .await
                        .body;
                    assert!(admin_page.contains("hide"), "{admin_page}");
                    // The role's view: with its seat's token only.
                    assert_eq!(s.get(&view).await.status, StatusCode::UNAUTHORIZED);
                    let a = s
                        .api(
                            "GET",
                            &format!("/api/matches/{id}/views/random"),
                            Some(&token),
                            json!(null),
                        )
                        .await;
                    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
                    let v = s.api("GET", &view, Some(&token), json!(null)).await;
                    assert_eq!(v.status, StatusCode::OK, "{}", v.body);
                    let v = v.json();
                    assert_eq!(v["steps"], json!([]));
                    assert_eq!(v["turn"]["moves"], json!(legal));
                    let a = s
                        .api(
                            "POST",
                            &moves,
                            Some(&token),
                            json!({"move": "(choose 1)", "step": 0}),
                        )
                        .await;
                    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
                } else {
                    // Stay or switch: the person saw its pick and the door the host opened.
                    assert_eq!(legal, ["stay", "switch"]);
                    let v = s.api("GET", &view, Some(&token), json!(null)).await.json();
                    let steps = v["steps"].as_array().unwrap();
                    assert_eq!(steps.len(), 2, "{v}");
                    assert_eq!(steps[0]["move"], "(choose 1)");
                    assert_eq!(steps[0]["percepts"], json!(["(picked 1)"]));
                    assert_eq!(steps[1]["move"], "wait");
                    let opened = steps[1]["percepts"][0].as_str().unwrap();
                    assert!(["(opened 2)", "(opened 3)"].contains(&opened), "{v}");
                    assert!(!v.to_string().contains("(car"), "{v}");
                    let a = s
                        .api(
                            "POST",
                            &moves,
                            Some(&token),
                            json!({"move": "switch", "step": 2}),
                        )
                        .await;
                    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
                }
            }
            "end" => {
                assert_eq!(data["status"], "finished");
                break;
            }
            _ => {}
        }
    }
    assert_eq!(seen.len(), 3);
    // Over: everything is public, the percepts of every role at every step.
    let record = s.finished(&id).await;
    assert_eq!(
        record["playerNamesFromHost"],
        json!(["human", "(the manager)"])
    );
    let percepts = record["percepts"].as_array().unwrap();
    assert_eq!(percepts.len(), 3);
    for (k, step) in seen.iter().enumerate() {
        assert_eq!(step["percepts"], percepts[k][0], "step {}", k + 1);
        assert_eq!(step["move"], record["moves"][k][0]);
    }
    assert_eq!(percepts[0][1], json!(["(picked 1)"]));
    assert_eq!(percepts[2][1], json!(["switch"]));
    let car = percepts[2][0][0].as_str().unwrap();
    assert!(car.starts_with("(car "), "{record}");
    let random = s.get(&format!("/api/matches/{id}/views/random")).await;
    assert_eq!(random.status, StatusCode::OK, "{}", random.body);
    assert_eq!(random.json()["steps"][2]["percepts"], json!(["switch"]));
    assert_eq!(
        s.get(&format!("/matches/{id}/export.json")).await.status,
        StatusCode::OK
    );
    let page = s.get(&format!("/matches/{id}")).await.body;
    assert!(page.contains("the true state"), "{page}");
    assert!(page.contains(r#"id="view-0""#) && page.contains(r#"id="view-1""#));
    assert!(page.contains(car), "{page}");
    // A GDL match has no role views.
    let a = s
        .api("POST", "/api/matches", Some(ADMIN),
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1, "playclock": 1}))
        .await;
    let ttt = a.json()["id"].as_str().unwrap().to_string();
    s.finished(&ttt).await;
    let a = s.get(&format!("/api/matches/{ttt}/views/x")).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
}

/// A worker that recorded its tournament match's end but went (killed, its machine gone)
/// before recording that the scheduled match was played: whoever notices it is gone takes the
/// scheduled match as played with that match, and plays it no second time; the tournament
/// ends if that was its last.
async fn finished_before_gone(backend: Backend) {
    use ggp_server::{live, tournament};
    // This site plays no tournament match itself and beats its heart once an hour: the
    // worker here is one made up in the database, taken for gone only when told.
    let s = site_with(backend, "finished_before_gone", |c| Config {
        capacity: 0,
        heartbeat: Duration::from_secs(3600),
        ..c
    })
    .await;
    let made = s
        .api(
            "POST",
            "/api/tournaments",
            Some(ADMIN),
            json!({"games": ["lightsout"], "players": ["random"], "rounds": 1,
                   "startclock": 1, "playclock": 1, "seed": 3}),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let id = made.json()["id"].as_i64().unwrap();
    let db = &s.state.db;
    let elsewhere = tournament::Host {
        host: "another-machine".into(),
        boot: "another-boot".into(),
        pid: 1,
    };
    let worker = tournament::register(db, "worker", &elsewhere)
        .await
        .unwrap();
    let claim = tournament::claim(db, worker, None).await.unwrap().unwrap();
    assert_eq!(claim.tournament, id);
    assert!(tournament::claim(db, worker, None).await.unwrap().is_none());
    // Its match, played to the end; the row stays the worker's (this server's end of it
    // records nothing for a row that is not its own).
    s.state
        .scheduled_running
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let created = live::create(
        &s.state,
        live::MatchRequest {
            game: claim.key.clone(),
            version: Some(claim.version),
            players: claim.players.clone(),
            startclock: claim.start_clock,
            playclock: claim.play_clock,
            seed: Some(claim.seed),
            delay: 0,
            scheduled: Some(claim.row),
        },
    )
    .await
    .unwrap();
    assert_eq!(s.finished(&created.id).await["status"], "finished");
    let rows = tournament::scheduled_matches(db, id).await.unwrap();
    assert_eq!(rows[0].status, "claimed");
    assert_eq!(rows[0].server, Some(worker));

    // Its heart stops.
    db.write(move |conn| conn.execute("UPDATE servers SET heartbeat = 0 WHERE id = $1", [worker]))
        .await
        .unwrap();
    let reaped = tournament::reap(
        db,
        s.state.server_id(),
        &tournament::Host::this(),
        Duration::from_secs(3),
    )
    .await
    .unwrap();
    assert_eq!(reaped.servers, vec![worker]);
    assert_eq!((reaped.done, reaped.requeued), (1, 0), "{reaped:?}");
    assert!(reaped.aborted.is_empty(), "{reaped:?}");
    let t = s.get(&format!("/api/tournaments/{id}")).await.json();
    assert_eq!(t["status"], "finished", "{t}");
    let row = &t["matches"][0];
    assert_eq!(row["status"], "done", "{row}");
    assert_eq!(row["matchId"], created.id.as_str(), "{row}");
    assert_eq!(row["attempts"], 1, "{row}");
    assert_eq!(t["standings"][0]["played"], 1, "{t}");
}

/// A person seated in blind breakthrough (GDL-II) is sent, on its seat's stream, the board of
/// what its role knows and the cells its moves name: at the start everything (the initial
/// state is known), after the other's unseen move the cells it cannot be sure of shaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gdl2_seat_is_sent_the_board_of_what_it_knows() {
    let s = site(Backend::Sqlite, "known-board").await;
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "blindbreakthrough", "players": ["human", "random"],
                   "startclock": 1, "playclock": 60, "seed": 5}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let created = a.json();
    let id = created["id"].as_str().unwrap().to_string();
    let token = created["seats"][0]["token"].as_str().unwrap().to_string();
    let path = format!("/api/matches/{id}/events?html=1");
    let (status, mut mine) = events_as(&s, &path, Some(&token)).await;
    assert_eq!(status, StatusCode::OK);
    let mut moved = false;
    loop {
        let (name, data) = mine.next().await.expect("the stream goes on");
        let board = data["board"].as_str().unwrap_or("");
        match name.as_str() {
            "begin" => {
                assert!(board.contains("class=\"board square checker\""), "{data}");
                assert!(board.contains("c-black") && board.contains("c-white"));
                assert!(!board.contains("uncertain"), "the initial state is known");
            }
            "turn" if !moved => {
                let Some(turn) = data["seats"].as_array().unwrap().first() else {
                    continue;
                };
                let targets = turn["targets"].as_array().unwrap();
                assert_eq!(targets.len(), turn["moves"].as_array().unwrap().len());
                assert!(
                    targets
                        .iter()
                        .all(|t| t["cells"].as_array().unwrap().len() == 2)
                );
                let a = s
                    .api(
                        "POST",
                        &format!("/api/matches/{id}/moves"),
                        Some(&token),
                        json!({"move": "(move 1 2 1 3)", "step": 0}),
                    )
                    .await;
                assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
                moved = true;
            }
            "step" if data["step"] == 1 => {
                // White knows where its pawn went, and black has not moved yet.
                assert!(board.contains("title>(cell 1 3 white)"), "{board}");
                assert!(
                    board.contains("cell square changed"),
                    "from and to: {board}"
                );
                assert!(!board.contains("uncertain"), "{board}");
            }
            "step" if data["step"] == 2 => {
                // Black moved, unseen: some of its pawns may be elsewhere.
                assert!(board.contains("uncertain"), "{board}");
                assert!(!data.to_string().contains("\"state\""), "{data}");
                break;
            }
            _ => {}
        }
    }
    s.api(
        "POST",
        &format!("/api/matches/{id}/abort"),
        Some(ADMIN),
        json!(null),
    )
    .await;
}
