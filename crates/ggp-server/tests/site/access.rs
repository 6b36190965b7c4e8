//! Who may do what, and what the site answers to requests from outside: tokens and sessions,
//! text from outside escaped in every page, nothing of the server's files or network named,
//! hostile requests answered, not obeyed.

use super::*;

on_both!(
    tokens,
    writes_need_a_token,
    writes_need_a_token_on_postgresql
);

on_both!(
    escaped,
    text_from_outside_is_escaped_in_every_page,
    text_from_outside_is_escaped_in_every_page_on_postgresql
);

on_both!(
    hostile,
    hostile_requests_are_answered_not_obeyed,
    hostile_requests_are_answered_not_obeyed_on_postgresql
);

async fn tokens(backend: Backend) {
    let s = site(backend, "tokens").await;
    let writes: &[(&str, &str, Value)] = &[
        (
            "POST",
            "/api/games",
            json!({"key": "g", "rules": TICTACTOE}),
        ),
        (
            "POST",
            "/api/players",
            json!({"name": "p", "url": "http://127.0.0.1:1"}),
        ),
        (
            "PATCH",
            "/api/players/p",
            json!({"url": "http://127.0.0.1:2"}),
        ),
        ("DELETE", "/api/players/p", json!({})),
        (
            "POST",
            "/api/matches",
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1, "playclock": 1}),
        ),
        ("POST", "/api/matches/x/moves", json!({"move": "wait"})),
        ("POST", "/api/matches/x/abort", json!({})),
    ];
    for (method, path, body) in writes {
        for token in [None, Some("not-a-token")] {
            let a = s.api(method, path, token, body.clone()).await;
            assert_eq!(
                a.status,
                StatusCode::UNAUTHORIZED,
                "{method} {path}: {}",
                a.body
            );
            assert!(a.json()["error"].is_string());
            if !path.contains("/moves") {
                assert!(a.headers.contains_key(header::WWW_AUTHENTICATE));
            }
        }
    }
    // Nothing was written.
    assert_eq!(s.get("/api/players").await.json(), json!([]));
    assert_eq!(s.get("/api/matches").await.json(), json!([]));

    // An owner's token edits its own player, and nothing else.
    let alice = s
        .api(
            "POST",
            "/api/players",
            Some(ADMIN),
            json!({"name": "alice", "url": "127.0.0.1:1"}),
        )
        .await;
    assert_eq!(alice.status, StatusCode::CREATED, "{}", alice.body);
    let alice_token = alice.json()["token"].as_str().unwrap().to_string();
    assert_eq!(alice.json()["url"], "http://127.0.0.1:1");
    let bob = s
        .api(
            "POST",
            "/api/players",
            Some(ADMIN),
            json!({"name": "bob", "url": "127.0.0.1:2"}),
        )
        .await;
    assert_eq!(bob.status, StatusCode::CREATED);
    let a = s
        .api(
            "PATCH",
            "/api/players/bob",
            Some(&alice_token),
            json!({"url": "127.0.0.1:3"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    let a = s
        .api("DELETE", "/api/players/bob", Some(&alice_token), json!({}))
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);
    for (method, path, body) in &writes[..1] {
        let a = s.api(method, path, Some(&alice_token), body.clone()).await;
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    }
    let a = s
        .api(
            "PATCH",
            "/api/players/alice",
            Some(&alice_token),
            json!({"url": "127.0.0.1:4"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["url"], "http://127.0.0.1:4");
    // Tokens are kept hashed: the database does not hold them.
    assert!(!everything_stored(&s).contains(&alice_token));
    let a = s
        .api(
            "DELETE",
            "/api/players/alice",
            Some(&alice_token),
            json!({}),
        )
        .await;
    assert_eq!(a.status, StatusCode::NO_CONTENT);
    // A removed player's token is worth nothing.
    let a = s
        .api(
            "PATCH",
            "/api/players/alice",
            Some(&alice_token),
            json!({"url": "127.0.0.1:5"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    // Names are unique (whatever the case), and built-in seats' names are taken.
    for name in ["BOB", "random", "human"] {
        let a = s
            .api(
                "POST",
                "/api/players",
                Some(ADMIN),
                json!({"name": name, "url": "127.0.0.1:9"}),
            )
            .await;
        assert_eq!(a.status, StatusCode::CONFLICT, "{name}: {}", a.body);
    }

    // Forms: a session, its CSRF token, and this site.
    let fields = [("name", "carol"), ("url", "127.0.0.1:7")];
    let a = s.form("/players", None, &fields).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    let (cookie, csrf) = s.login(ADMIN).await;
    assert_eq!(csrf.len(), 64);
    let a = s.form("/players", Some(&cookie), &fields).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "no CSRF token");
    let mut with_csrf = fields.to_vec();
    with_csrf.push(("csrf", &csrf));
    let foreign = s
        .send(
            Request::post("/players")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::HOST, "gm.test")
                .header(header::ORIGIN, "http://evil.test")
                .header(header::COOKIE, &cookie)
                .body(Body::from(format!(
                    "name=carol&url=127.0.0.1%3A7&csrf={csrf}"
                )))
                .unwrap(),
        )
        .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN, "another site");
    let a = s.form("/players", Some(&cookie), &with_csrf).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("shown only now"));
    assert_eq!(s.get("/api/players/carol").await.status, StatusCode::OK);
    // A bad login.
    let a = s.form("/login", None, &[("token", "guess")]).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    assert!(!a.headers.contains_key(header::SET_COOKIE));
}

/// Every page reachable from the start page, following links within the site.
async fn crawl(s: &Site, cookie: &str) -> Vec<(String, String)> {
    let mut seen = std::collections::BTreeSet::new();
    // Breadth first: the pages a link from the dashboard reaches are crawled before the cap,
    // however many pages of games, tags and matches lie deeper.
    let mut queue = std::collections::VecDeque::from(["/".to_string()]);
    let mut pages = Vec::new();
    while let Some(path) = queue.pop_front() {
        if !seen.insert(path.clone()) || seen.len() > 400 {
            continue;
        }
        let a = s.get_as(&path, Some(cookie)).await;
        assert!(a.status.is_success(), "{path}: {} {}", a.status, a.body);
        for part in a.body.split("href=\"").skip(1) {
            let link = part.split('"').next().unwrap().replace("&amp;", "&");
            let link = link.split('#').next().unwrap().to_string();
            if link.starts_with('/')
                && !link.starts_with("/static/")
                && !link.starts_with("/api/")
                && !link.ends_with(".json")
                && !link.contains("rules.kif")
            {
                queue.push_back(link);
            }
        }
        pages.push((path, a.body));
    }
    pages
}

async fn escaped(backend: Backend) {
    let s = site(backend, "escaped").await;
    let rules = "; <script>alert(\"game\")</script>
(role <b>x</b>)
(role o)
(init (count 0))
(<= (legal ?r <i>go</i>)
    (role ?r))
(<= (next (count 1))
    (true (count 0)))
(<= terminal
    (true (count 1)))
(goal <b>x</b> 100)
(goal o 0)
";
    let a = s
        .api(
            "POST",
            "/api/games",
            Some(ADMIN),
            json!({"key": "evil", "rules": rules}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    assert_eq!(a.json()["roles"][0], "<b>x</b>");
    let url = scripted("<script>alert(\"reply\")</script>").await;
    let name = "<script>alert(\"player\")</script>";
    let a = s
        .api(
            "POST",
            "/api/players",
            Some(ADMIN),
            json!({"name": name, "url": url}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "evil", "players": [name, "random"], "startclock": 1, "playclock": 1}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let id = a.json()["id"].as_str().unwrap().to_string();
    let record = s.finished(&id).await;
    assert_eq!(record["status"], "finished");
    assert_eq!(record["playerNamesFromHost"][0], name);
    assert!(
        record["errors"][0][0]
            .as_str()
            .unwrap()
            .contains("<script>alert(\"reply\")</script>"),
        "{record}"
    );
    let (cookie, _) = s.login(ADMIN).await;
    let pages = crawl(&s, &cookie).await;
    for required in [
        "/",
        "/players",
        "/games",
        "/matches",
        "/games/evil",
        "/matches/new",
        "/games/new",
    ] {
        assert!(
            pages.iter().any(|(p, _)| p == required),
            "{required} not reached"
        );
    }
    assert!(
        pages
            .iter()
            .any(|(p, _)| p.starts_with("/players/%3Cscript"))
    );
    assert!(pages.iter().any(|(p, _)| p.starts_with("/matches/evil.")));
    for (path, body) in &pages {
        for raw in ["<script>alert", "<b>x</b>"] {
            assert!(!body.contains(raw), "{path} shows `{raw}` unescaped");
        }
    }
    let shown = |needle: &str| pages.iter().filter(|(_, b)| b.contains(needle)).count();
    assert!(shown("&lt;script&gt;alert(&quot;player&quot;)&lt;/script&gt;") >= 4);
    assert!(shown("&lt;script&gt;alert(&quot;game&quot;)&lt;/script&gt;") >= 1);
    assert!(shown("&lt;script&gt;alert(&quot;reply&quot;)&lt;/script&gt;") >= 1);
    assert!(shown("&lt;b&gt;x&lt;/b&gt;") >= 3);
    // Pages allow only this site's scripts.
    let home = s.get("/").await;
    let policy = home.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert_eq!(home.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
}

/// What goes wrong is said without the server's files or what its network looks like: not
/// found names no database file; a registered player's failed INFO is shown as its status to
/// anyone, and how it failed to its owner and the admin only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_name_nothing_of_the_server_s_files_or_network() {
    let s = site(Backend::Sqlite, "secrets").await;
    let db = s.state.config.db.to_string();
    for path in [
        "/api/matches/nope",
        "/api/matches/nope/events",
        "/api/matches/nope/views/x",
        "/matches/nope",
        "/matches/nope/export.json",
        "/api/games/nope",
        "/api/players/nope",
        "/players/nope",
    ] {
        let a = s.get(path).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}: {}", a.body);
        assert!(
            !a.body.contains(&db) && !a.body.contains(".sqlite"),
            "{path}: {}",
            a.body
        );
    }
    // Nothing listens where this player is registered.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let registered = s
        .api(
            "POST",
            "/api/players",
            Some(ADMIN),
            json!({"name": "far", "url": url}),
        )
        .await;
    assert_eq!(
        registered.status,
        StatusCode::CREATED,
        "{}",
        registered.body
    );
    let owner = registered.json()["token"].as_str().unwrap().to_string();
    let mut status = Value::Null;
    for _ in 0..200 {
        status = s.get("/api/players/far").await.json()["status"].clone();
        if status != "unknown" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "unreachable");
    // New match offers it apart, saying what its seat will play.
    let (cookie, _) = s.login(ADMIN).await;
    let form = s
        .get_as("/matches/new?game=tictactoe", Some(&cookie))
        .await
        .body;
    let apart = form
        .split(r#"<optgroup label="Unreachable at the last INFO: a random legal move is played for each of theirs">"#)
        .nth(1)
        .and_then(|rest| rest.split("</optgroup>").next())
        .unwrap_or_else(|| panic!("no group of unreachable players: {form}"));
    assert!(
        apart.contains(r#"<option value="far">far (unreachable)</option>"#),
        "{apart}"
    );
    // A match it cannot play (its START unanswered, a random legal move played for each of
    // its moves) is not counted as won on its page, whatever its goal: it is counted failed.
    let created = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "tictactoe", "players": ["far", "random"], "startclock": 1, "playclock": 1}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let record = s.finished(created.json()["id"].as_str().unwrap()).await;
    assert_eq!(record["status"], "finished", "{record}");
    let page = s.get("/players/far").await.body;
    let row = page
        .split(r#"<a href="/games/tictactoe">tictactoe</a></td>"#)
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .unwrap_or_else(|| panic!("no tictactoe row: {page}"));
    let cells: Vec<&str> = row
        .split(r#"<td class="num">"#)
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap())
        .collect();
    // Matches, finished, mean goal, won, failed, rating.
    assert_eq!(
        (cells[0], cells[1], cells[3], cells[4], cells[5]),
        ("1", "1", "0", "1", "—"),
        "{row}"
    );
    let public = s.get("/api/players").await.json();
    assert!(public[0].get("detail").is_none(), "{public}");
    assert!(
        s.get("/api/players/far")
            .await
            .json()
            .get("detail")
            .is_none()
    );
    assert!(!s.get("/players/far").await.body.contains("Last answer"));
    for token in [ADMIN, owner.as_str()] {
        let seen = s
            .api("GET", "/api/players/far", Some(token), Value::Null)
            .await;
        let detail = seen.json()["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!detail.is_empty(), "{}", seen.body);
        let listed = s.api("GET", "/api/players", Some(token), Value::Null).await;
        assert_eq!(listed.json()[0]["detail"], detail.as_str());
    }
    let (cookie, _) = s.login(&owner).await;
    assert!(
        s.get_as("/players/far", Some(&cookie))
            .await
            .body
            .contains("Last answer")
    );
}

async fn hostile(backend: Backend) {
    let s = site(backend, "hostile").await;
    let create = |body: Value| s.api("POST", "/api/matches", Some(ADMIN), body);
    let cases: Vec<(Value, StatusCode)> = vec![
        (
            json!({"game": "tictactoe", "players": ["random"], "startclock": 1, "playclock": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "tictactoe", "players": ["random", "nobody"], "startclock": 1, "playclock": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "nothing", "players": ["random", "random"], "startclock": 1, "playclock": 1}),
            StatusCode::NOT_FOUND,
        ),
        (
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1e30, "playclock": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1, "playclock": 86401}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": -1, "playclock": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "tictactoe", "players": ["human", "random"], "startclock": 1, "playclock": 0}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "tictactoe", "players": ["random", "random"], "startclock": 1, "playclock": 1, "delay": 999999}),
            StatusCode::BAD_REQUEST,
        ),
        (
            json!({"game": "<script>", "players": [], "startclock": 1, "playclock": 1}),
            StatusCode::BAD_REQUEST,
        ),
        (json!({"game": "tictactoe"}), StatusCode::BAD_REQUEST),
        (json!([1, 2, 3]), StatusCode::BAD_REQUEST),
    ];
    for (body, status) in cases {
        let a = create(body.clone()).await;
        assert_eq!(a.status, status, "{body}: {}", a.body);
        assert!(a.json()["error"].is_string(), "{}", a.body);
    }
    // Not JSON, or not said to be.
    let a = s
        .send(
            Request::post("/api/games")
                .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(vec![0xff, 0xfe, b'{']))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let a = s
        .send(
            Request::post("/api/games")
                .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
                .body(Body::from("{}"))
                .unwrap(),
        )
        .await;
    assert!(a.status.is_client_error());
    // Too large: 413, whatever the endpoint.
    let huge = vec![b'a'; 3 << 20];
    for (path, kind) in [
        ("/api/games", "application/json"),
        ("/players", "application/x-www-form-urlencoded"),
        ("/games", "multipart/form-data; boundary=x"),
        ("/login", "application/x-www-form-urlencoded"),
    ] {
        let a = s
            .send(
                Request::post(path)
                    .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
                    .header(header::CONTENT_TYPE, kind)
                    .body(Body::from(huge.clone()))
                    .unwrap(),
            )
            .await;
        // The forms are refused before they are read without a session; the others say why.
        assert!(
            a.status == StatusCode::PAYLOAD_TOO_LARGE || a.status == StatusCode::UNAUTHORIZED,
            "{path}: {} {}",
            a.status,
            a.body
        );
    }
    // Paths and queries of every kind.
    for path in [
        "/static/../../etc/passwd",
        "/static/%2e%2e%2fCargo.toml",
        "/games/%00",
        "/games/tictactoe?version=99999999999999999999",
        "/games/tictactoe?version=-1",
        "/matches/%ff%fe",
        "/matches/x/boards/99999999999999999999999",
        "/matches?limit=-5&offset=abc",
        "/api/matches?status=%3Cscript%3E",
        "/api/matches/nothing/events",
        "/players/%E2%80%AE",
        "/api/nothing",
        "/nothing",
    ] {
        let a = s.get(path).await;
        assert!(
            a.status.is_client_error(),
            "{path}: {} {}",
            a.status,
            a.body
        );
        // What comes back into a page is escaped; JSON is JSON, and not to be sniffed.
        let kind = a.headers[header::CONTENT_TYPE].to_str().unwrap();
        if kind.starts_with("text/html") {
            assert!(!a.body.contains("<script>"), "{path}");
        } else {
            assert_eq!(kind, "application/json", "{path}");
            assert_eq!(a.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        }
    }
    // A list's bounds are answered, not bent: 1 to 1000 matches from an offset of 0 or more.
    for (query, expected) in [
        ("limit=0", "`limit` is from 1 to 1000, not `0`"),
        ("limit=-5", "`limit` is from 1 to 1000, not `-5`"),
        ("limit=1001", "`limit` is from 1 to 1000, not `1001`"),
        ("offset=-1", "`offset` is 0 or more, not `-1`"),
    ] {
        for path in [format!("/matches?{query}"), format!("/api/matches?{query}")] {
            let a = s.get(&path).await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{path}: {}", a.body);
            assert!(a.body.contains(expected), "{path}: {}", a.body);
        }
    }
    // An error page keeps the header of the session that asked: logged in, not "Log in".
    let (cookie, _) = s.login(ADMIN).await;
    for (path, status) in [
        ("/matches/nothing", StatusCode::NOT_FOUND),
        ("/matches?limit=0", StatusCode::BAD_REQUEST),
        ("/nothing", StatusCode::NOT_FOUND),
    ] {
        let a = s.get_as(path, Some(&cookie)).await;
        assert_eq!(a.status, status, "{path}: {}", a.body);
        assert!(
            a.body.contains("Log out") && !a.body.contains(r#"href="/login""#),
            "{path}: {}",
            a.body
        );
        let anonymous = s.get(path).await;
        assert!(anonymous.body.contains(r#"href="/login""#), "{path}");
    }
    for query in ["limit=1", "limit=1000", "offset=0"] {
        assert_eq!(
            s.get(&format!("/matches?{query}")).await.status,
            StatusCode::OK,
            "{query}"
        );
    }
    // A move for a match that does not exist, by the admin: not found, not "over".
    let a = s
        .api(
            "POST",
            "/api/matches/nothing/moves",
            Some(ADMIN),
            json!({"move": "noop", "seat": 0}),
        )
        .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND, "{}", a.body);
    assert_eq!(a.json()["error"], "there is no match `nothing`");
    // A method an address does not take: said.
    let a = s.api("PUT", "/api/games", Some(ADMIN), json!({})).await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        a.json()["error"],
        "`PUT` is not a method that `/api/games` takes"
    );
    // JSON nested far deeper than any request needs.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let a = s
        .send(
            Request::post("/api/matches")
                .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(deep))
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    // Still serving.
    assert_eq!(s.get("/").await.status, StatusCode::OK);
}

/// A request whose body never ends is answered in the time allowed, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_ends_is_answered_in_time() {
    let s = site_with(Backend::Sqlite, "slow", |mut c| {
        c.limits.request_timeout = Duration::from_millis(300);
        c
    })
    .await;
    let first = futures_util::stream::once(async {
        Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{\"key\": \"slow\", "))
    });
    let body = Body::from_stream(first.chain(futures_util::stream::pending()));
    let started = std::time::Instant::now();
    let a = s
        .send(
            Request::post("/api/games")
                .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(body)
                .unwrap(),
        )
        .await;
    assert_eq!(a.status, StatusCode::REQUEST_TIMEOUT, "{}", a.body);
    assert!(
        a.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("the answer took longer than 300 ms, the most this server takes"),
        "{}",
        a.body
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
