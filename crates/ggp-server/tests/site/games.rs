//! Games: checked and kept in versions, one key a game across the `--games` directories,
//! found by the tags the server computes.

use super::*;

on_both!(
    games,
    games_are_checked_and_kept_in_versions,
    games_are_checked_and_kept_in_versions_on_postgresql
);

async fn games(backend: Backend) {
    let s = site(backend, "games").await;
    let listed = s.get("/api/games").await.json();
    let keys: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    for key in [
        "breakthrough6",
        "connect4",
        "lightcycles",
        "lightsout",
        "tictactoe",
        "tictactoe3",
    ] {
        assert!(keys.contains(&key), "{keys:?}");
    }
    let post = |key: &str, rules: &str| {
        s.api(
            "POST",
            "/api/games",
            Some(ADMIN),
            json!({"key": key, "rules": rules}),
        )
    };
    let a = post("mine", TICTACTOE).await;
    assert_eq!(a.status, StatusCode::CREATED);
    assert_eq!(a.json()["version"], 1);
    assert_eq!(a.json()["warnings"][0]["code"], "W010");
    let a = post("mine", TICTACTOE).await;
    assert_eq!(a.status, StatusCode::OK, "the same rules again add nothing");
    assert_eq!(a.json()["new"], false);
    let a = post("mine", &format!("{TICTACTOE}\n; changed\n")).await;
    assert_eq!(a.json()["version"], 2);
    // Errors that leave the rules without a meaning: refused, with every diagnostic.
    let a = post(
        "broken",
        "(role r)\n(<= (legal r ?m)\n    (true (p)))\n(init (p))\n",
    )
    .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    let diagnostics = a.json()["diagnostics"].as_array().unwrap().clone();
    let d = diagnostics.iter().find(|d| d["code"] == "E001").unwrap();
    assert_eq!(d["line"], 2);
    assert_eq!(d["severity"], "error");
    assert!(
        a.json()["error"]
            .as_str()
            .unwrap()
            .contains("without an agreed meaning")
    );
    assert_eq!(
        s.get("/api/games/broken").await.status,
        StatusCode::NOT_FOUND
    );
    let a = post("syntax", "(role r\n").await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(a.json()["diagnostics"][0]["code"], "S001");
    let a = post("roleless", "(init (p))\n(<= terminal (true (p)))\n").await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);
    let a = post("../x", TICTACTOE).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let big = format!("{TICTACTOE}\n;{}\n", "x".repeat(1 << 20));
    let a = post("big", &big).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);

    // The game's page: roles, rules highlighted, the versions, the infix view.
    let page = s.get("/games/mine").await;
    assert!(page.body.contains("version 2"));
    assert!(page.body.contains(r#"<span class="kw">role</span>"#));
    assert!(page.body.contains(r#"id="infix""#));
    let old = s.get("/games/mine?version=1").await;
    assert!(old.body.contains("older version"));
    let raw = s.get("/games/mine/rules.kif?version=2").await;
    assert_eq!(raw.body, format!("{TICTACTOE}\n; changed\n"));
    // Analysed in the background: the engine that plays it.
    let mut engine = Value::Null;
    for _ in 0..400 {
        engine = s.get("/api/games/mine").await.json()["engine"].clone();
        if !engine.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(engine, "fast");

    // The upload form refuses with the errors shown at their lines.
    let (cookie, csrf) = s.login(ADMIN).await;
    let boundary = "XyZ";
    let part = |name: &str, value: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        )
    };
    let body = format!(
        "{}{}{}--{boundary}--\r\n",
        part("csrf", &csrf),
        part("key", "formed"),
        part("rules", "(role r)\n(<= (legal r ?m)\n    (true (p)))\n")
    );
    let a = s
        .send(
            Request::post("/games")
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .header(header::COOKIE, &cookie)
                .body(Body::from(body))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(a.body.contains("error[E001]"), "{}", a.body);
    assert!(a.body.contains("formed.kif:2:"), "{}", a.body);
    // A file: its name is the key.
    let body = format!(
        "{}--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"uploaded.kif\"\r\nContent-Type: text/plain\r\n\r\n{TICTACTOE}\r\n--{boundary}--\r\n",
        part("csrf", &csrf)
    );
    let a = s
        .send(
            Request::post("/games")
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .header(header::COOKIE, &cookie)
                .body(Body::from(body))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    assert_eq!(
        a.headers[header::LOCATION],
        "/games/uploaded?version=1&added=1"
    );
    // A form past the body limit (2 MiB), its rules in a file: 413, saying the limits, though
    // the limit is passed inside a part.
    let padding = "; padding\n".repeat(300_000);
    let body = format!(
        "{}--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.kif\"\r\nContent-Type: text/plain\r\n\r\n{TICTACTOE}{padding}\r\n--{boundary}--\r\n",
        part("csrf", &csrf)
    );
    let a = s
        .send(
            Request::post("/games")
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .header(header::COOKIE, &cookie)
                .body(Body::from(body))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.body);
    assert!(
        a.body.contains("the form is larger than 2097152 bytes"),
        "{}",
        a.body
    );
}

/// Two `--games` directories with a file of the same name: the key is the first's; the second
/// is refused, saying whose key it is, and a second start adds no version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_one_game_across_the_games_directories() {
    let other = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site-other-games");
    std::fs::create_dir_all(&other).unwrap();
    let theirs = other.join("tictactoe.kif");
    std::fs::write(
        &theirs,
        format!("; another tic-tac-toe\n{TICTACTOE}\n(foo)"),
    )
    .unwrap();
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../games");
    let db = database(Backend::Sqlite, "two-game-dirs");
    for start in 0..2 {
        let config = Config {
            games: vec![ours.clone(), other.clone()],
            ..Config::new(db.clone(), ADMIN.into())
        };
        let (state, startup) = Gamemaster::start(config).await.unwrap();
        let second = startup.imported[1].1.as_ref().unwrap();
        assert_eq!(
            (second.added, second.unchanged),
            (0, 0),
            "start {start}: {second:?}"
        );
        let [(file, why)] = &second.refused[..] else {
            panic!("start {start}: {second:?}");
        };
        assert_eq!(file, &theirs);
        let first = ours.join("tictactoe.kif");
        assert_eq!(
            why,
            &format!(
                "its key `tictactoe` is that of {}, read before it: a key names one game (rename one of them)",
                first.display()
            )
        );
        let s = Site {
            app: router(state.clone()),
            state,
        };
        let game = s.get("/api/games/tictactoe").await.json();
        assert_eq!(game["versions"].as_array().unwrap().len(), 1, "{game}");
        s.state
            .shut_down("the test ends", Duration::from_secs(5))
            .await;
    }
}

/// The keys of the games a games' page lists, in order.
fn listed(page: &str) -> Vec<String> {
    let rows = page.split(r#"id="game-rows""#).nth(1).unwrap_or("");
    rows.split(r#"<td><a href="/games/"#)
        .skip(1)
        .map(|row| row.split('"').next().unwrap().to_string())
        .collect()
}

/// Each game's tags, as the API gives them, once every version is analysed.
async fn tags_once_analysed(s: &Site) -> Vec<(String, Vec<String>)> {
    for _ in 0..600 {
        let games = s.get("/api/games").await.json();
        let games = games.as_array().unwrap();
        if games.iter().all(|g| !g["latest"]["traits"].is_null()) {
            return games
                .iter()
                .map(|g| {
                    let tags = g["tags"].as_array().unwrap();
                    let tags = tags.iter().map(|t| t.as_str().unwrap().to_string());
                    (g["key"].as_str().unwrap().to_string(), tags.collect())
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the games were not analysed within 30 s");
}

/// The tags the server finds (roles, turns, GDL-II, board, engine, length, featured), a search
/// by them and by words, on the page and through the API; the first `--games` directory's games
/// are featured and listed first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_are_found_by_the_tags_the_server_finds() {
    let other = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site-tagged-games");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("aaa-solo.kif"),
        "(role r) (init (p)) (<= (legal r go) (true (p))) (<= (next (q)) (does r go))
         (<= terminal (true (q))) (<= (goal r 100) (true (q))) (<= (goal r 0) (true (p)))",
    )
    .unwrap();
    let s = site_with(Backend::Sqlite, "tags", |c| Config {
        games: vec![c.games[0].clone(), other.clone()],
        ..c
    })
    .await;
    let games = tags_once_analysed(&s).await;
    let tags_of = |key: &str| {
        let (_, tags) = games.iter().find(|(k, _)| k == key).unwrap();
        tags.clone()
    };
    // The project's games first, the other directory's after them, though its key sorts first.
    assert_eq!(games.last().unwrap().0, "aaa-solo", "{games:?}");
    assert!(tags_of("tictactoe").contains(&"featured".into()));
    assert!(!tags_of("aaa-solo").contains(&"featured".into()));
    for (key, expected) in [
        (
            "tictactoe",
            &["2-roles", "in-turn", "board-3x3", "fast", "short"][..],
        ),
        ("lightcycles", &["2-roles", "simultaneous"]),
        ("lightsout", &["1-role"]),
        ("montyhall", &["gdl-ii"]),
        ("blindbreakthrough", &["gdl-ii", "in-turn"]),
        ("aaa-solo", &["1-role", "fast", "short"]),
    ] {
        let tags = tags_of(key);
        for t in expected {
            assert!(tags.contains(&t.to_string()), "{key}: {tags:?}");
        }
    }
    assert!(!tags_of("tictactoe").contains(&"simultaneous".into()));
    assert!(!tags_of("tictactoe").contains(&"gdl-ii".into()));
    assert!(!tags_of("lightsout").contains(&"in-turn".into()));

    // A search by tags finds exactly the games that have them all, on the page and in the API.
    let with = |tags: &[&str]| -> Vec<String> {
        let mut keys: Vec<String> = games
            .iter()
            .filter(|(_, t)| tags.iter().all(|x| t.contains(&x.to_string())))
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    };
    for search in ["gdl-ii", "simultaneous", "in-turn,fast", "1-role,short"] {
        let expected = with(&search.split(',').collect::<Vec<_>>());
        assert!(!expected.is_empty(), "{search}");
        let page = s.get(&format!("/games?tags={search}")).await;
        assert_eq!(page.status, StatusCode::OK);
        let mut found = listed(&page.body);
        found.sort();
        assert_eq!(found, expected, "{search}");
        let api = s.get(&format!("/api/games?tags={search}")).await.json();
        let mut found: Vec<String> = api
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["key"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        assert_eq!(found, expected, "{search}");
    }
    // A tag of the search is shown on, as a link that takes it away.
    let page = s.get("/games?tags=gdl-ii").await.body;
    assert!(
        page.contains(r#"<a class="tag on" href="/games" title="GDL-II"#),
        "{page}"
    );
    // Words: in a key, a role or a tag.
    assert_eq!(
        listed(&s.get("/games?q=light").await.body),
        ["lightcycles", "lightsout"]
    );
    assert_eq!(
        listed(&s.get("/games?q=Simultaneous").await.body),
        with(&["simultaneous"])
    );
    // An unknown tag is a bad request that names it.
    let bad = s.get("/games?tags=fast,quick").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("`quick` is not a tag"), "{}", bad.body);
    let bad = s.get("/api/games?tags=board-8").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    // The dashboard lists the featured games first and offers tags to find games by.
    let home = s.get("/").await.body;
    let first = home
        .split(r#"<li class="featured"><a href="/games/"#)
        .nth(1)
        .unwrap();
    assert!(home.find("aaa-solo").unwrap() > home.find(first).unwrap());
    assert!(
        home.contains(r#"href="/games?tags=simultaneous""#),
        "{home}"
    );
    s.state
        .shut_down("the test ends", Duration::from_secs(5))
        .await;
}
