//! The Gamemaster in process, through its router: who may write, what is escaped, how games
//! are checked and kept, hostile requests, and a person's seat played through the API.

use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use futures_util::StreamExt;
use ggp_match::DatabaseUrl;
use ggp_server::{AppState, Config, Gamemaster, router};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const ADMIN: &str = "admin-token-for-the-tests";
const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

struct Site {
    app: Router,
    state: AppState,
}

fn temp_db(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("site");
    ggp_testdata::fresh_sqlite_file(&dir, name)
}

/// Which database a test's site keeps its data in.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh, empty database: a SQLite file, or a PostgreSQL database made in the cluster
/// `GGP_TEST_POSTGRES` names (`scripts/pg_test_cluster.sh`).
fn database(backend: Backend, name: &str) -> DatabaseUrl {
    match backend {
        Backend::Sqlite => DatabaseUrl::sqlite(temp_db(&format!("{name}.sqlite"))),
        Backend::Postgres => ggp_testdata::fresh_postgres(&format!("site_{name}"))
            .unwrap()
            .parse()
            .unwrap(),
    }
}

/// Runs a test on SQLite and on PostgreSQL (skipped, saying so, without `GGP_TEST_POSTGRES`).
macro_rules! on_both {
    ($test:ident, $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $test(Backend::Sqlite).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            if std::env::var("GGP_TEST_POSTGRES").is_ok() {
                $test(Backend::Postgres).await;
            } else {
                eprintln!("skipped on PostgreSQL: GGP_TEST_POSTGRES is not set");
            }
        }
    };
}

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
    games,
    games_are_checked_and_kept_in_versions,
    games_are_checked_and_kept_in_versions_on_postgresql
);
on_both!(
    hostile,
    hostile_requests_are_answered_not_obeyed,
    hostile_requests_are_answered_not_obeyed_on_postgresql
);
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

/// All the database holds, as text: the SQLite file's bytes, or every row of every table of the
/// PostgreSQL database.
fn everything_stored(s: &Site) -> String {
    let url = s.state.db.url().clone();
    if let Some(path) = url.as_path() {
        return String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    }
    ggp_match::sql::outside_runtime(|| {
        let db = ggp_match::Database::open_existing(&url).unwrap();
        let conn = db.connection();
        let tables: Vec<String> = conn
            .query(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = 'public'",
                (),
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0).unwrap())
            .collect();
        assert!(tables.len() >= 10, "{tables:?}");
        let mut all = String::new();
        for t in tables {
            for row in conn
                .query(&format!("SELECT x::text FROM {t} x"), ())
                .unwrap()
            {
                all.push_str(&row.get::<_, String>(0).unwrap());
                all.push('\n');
            }
        }
        all
    })
}

async fn site(backend: Backend, name: &str) -> Site {
    site_with(backend, name, |c| c).await
}

/// A site whose configuration `change` alters first.
async fn site_with(backend: Backend, name: &str, change: impl FnOnce(Config) -> Config) -> Site {
    let config = change(Config {
        games: vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../games")],
        ping_interval: Duration::from_secs(3600),
        grace: Duration::from_millis(300),
        max_steps: 1000,
        ..Config::new(database(backend, name), ADMIN.into())
    });
    let (state, startup) = Gamemaster::start(config).await.unwrap();
    let imported = startup.imported[0].1.as_ref().unwrap();
    assert!(
        imported.added >= 6 && imported.refused.is_empty(),
        "{imported:?}"
    );
    Site {
        app: router(state.clone()),
        state,
    }
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

impl Site {
    async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    async fn get(&self, path: &str) -> Answer {
        self.get_as(path, None).await
    }

    async fn get_as(&self, path: &str, cookie: Option<&str>) -> Answer {
        let mut r = Request::get(path);
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        self.send(r.body(Body::empty()).unwrap()).await
    }

    /// A JSON request to the API, with a bearer token if given.
    async fn api(&self, method: &str, path: &str, token: Option<&str>, body: Value) -> Answer {
        let mut r = Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(t) = token {
            r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        self.send(r.body(Body::from(body.to_string())).unwrap())
            .await
    }

    /// A form, urlencoded.
    async fn form(&self, path: &str, cookie: Option<&str>, fields: &[(&str, &str)]) -> Answer {
        let body: String = fields
            .iter()
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut r = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::HOST, "gm.test");
        if let Some(c) = cookie {
            r = r.header(header::COOKIE, c);
        }
        self.send(r.body(Body::from(body)).unwrap()).await
    }

    /// Logs in with a token; returns the session cookie and the session's CSRF token.
    async fn login(&self, token: &str) -> (String, String) {
        let a = self.form("/login", None, &[("token", token)]).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
        let cookie = a.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_string();
        let page = self.get_as("/players/new", Some(&cookie)).await;
        let csrf = page
            .body
            .split(r#"name="csrf" value=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default()
            .to_string();
        (cookie, csrf)
    }

    /// Waits until a match has ended; returns its record.
    async fn finished(&self, id: &str) -> Value {
        for _ in 0..600 {
            let m = self.get(&format!("/api/matches/{}", enc(id))).await;
            if m.status == StatusCode::OK {
                let v = m.json();
                if v["status"] != "live" && v["status"] != "unfinished" {
                    return v;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the match {id} did not end");
    }
}

fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A player over HTTP that answers READY, then `reply` to every PLAY.
async fn scripted(reply: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let body = String::from_utf8_lossy(&data).into_owned();
                let answer = if body.contains("(START") {
                    "READY"
                } else if body.contains("(PLAY") {
                    reply
                } else {
                    "DONE"
                };
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{answer}",
                            answer.len()
                        )
                        .as_bytes(),
                    )
                    .await;
            });
        }
    });
    url
}

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
    let mut queue = vec!["/".to_string()];
    let mut pages = Vec::new();
    while let Some(path) = queue.pop() {
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
                queue.push(link);
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

/// The events of a stream, as (name, data).
struct Events {
    stream: axum::body::BodyDataStream,
    buffer: String,
}

impl Events {
    async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((name, serde_json::from_str(&data).unwrap()));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(60), self.stream.next())
                .await
                .expect("an event within a minute")?
                .ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

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

/// An events stream opened with a bearer token (a seat's, or the admin's).
async fn events_as(s: &Site, path: &str, token: Option<&str>) -> (StatusCode, Events) {
    let mut r = Request::get(path);
    if let Some(t) = token {
        r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let response = s
        .app
        .clone()
        .oneshot(r.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    (
        status,
        Events {
            stream: response.into_body().into_data_stream(),
            buffer: String::new(),
        },
    )
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

on_both!(
    statistics,
    a_game_s_and_a_player_s_statistics_count_what_was_played,
    a_game_s_and_a_player_s_statistics_count_what_was_played_on_postgresql
);

/// A real player (`ggp_play::serve`, what `ggp player` runs) with a built-in strategy.
async fn real_player(kind: ggp_play::StrategyKind) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = ggp_play::PlayerConfig {
        name: "steady".into(),
        factory: kind.factory(3),
        margin: Duration::from_millis(200),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    };
    tokio::spawn(ggp_play::serve(listener, config, std::future::pending()));
    url
}

/// The text of an HTML fragment, its tags left out and its spaces collapsed.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rows of the body of the table with the id `id`, each as its cells' text.
fn table_rows(page: &str, id: &str) -> Vec<Vec<String>> {
    let table = page
        .split(&format!(r#"id="{id}""#))
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .and_then(|table| table.split("<tbody>").nth(1))
        .unwrap_or_else(|| panic!("no table {id}: {page}"));
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let inside = cell.split_once('>').map_or("", |(_, rest)| rest);
                    text_of(inside.split("</td>").next().unwrap())
                })
                .collect()
        })
        .collect()
}

/// The text of the element with the id `id` (up to its closing `tag`).
fn element_text(page: &str, id: &str, tag: &str) -> String {
    let inside = page
        .split(&format!(r#"id="{id}""#))
        .nth(1)
        .and_then(|rest| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split(&format!("</{tag}>")).next())
        .unwrap_or_else(|| panic!("no element {id}: {page}"));
    text_of(inside)
}

/// The SVG charts of a page whose class list begins with `class`.
fn charts<'a>(page: &'a str, class: &str) -> Vec<&'a str> {
    page.split(&format!(r#"<svg class="{class}""#))
        .skip(1)
        .map(|rest| rest.split("</svg>").next().unwrap())
        .collect()
}

fn pct(part: usize, whole: usize) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole as f64)
}

/// Whether a seat of a record erred (at START or in a move): the failure rule of ratings.
fn failed_in(record: &Value, seat: usize) -> bool {
    let start = record["startErrors"][seat].as_str().unwrap_or("");
    let moves = record["moves"].as_array().unwrap().len();
    let errors = record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e[seat].as_str().unwrap_or("").is_empty())
        .count();
    !start.is_empty() || 2 * errors > moves
}

/// Plays tictactoe between a registered real player (`steady`, the `legal` strategy behind
/// HTTP), a registered player whose every move is illegal (`wrong`) and built-in players,
/// aborts a match with a person's seat, then checks the game's statistics page (how the
/// matches ended, each role's mean goal and wins, lengths, the share with errors, the SVG
/// charts' bars), the players' per-opponent rows and rates, and the JSON of both.
async fn statistics(backend: Backend) {
    let s = site(backend, "statistics").await;
    let wrong = scripted("(mark 9 9)").await;
    let steady = real_player(ggp_play::StrategyKind::Legal).await;
    for (name, url) in [("wrong", wrong), ("steady", steady)] {
        let a = s
            .api(
                "POST",
                "/api/players",
                Some(ADMIN),
                json!({"name": name, "url": url}),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    }
    let seatings = [
        ["steady", "legal"],
        ["wrong", "steady"],
        ["steady", "wrong"],
        ["random", "random"],
    ];
    let mut records = Vec::new();
    for players in seatings {
        let a = s
            .api(
                "POST",
                "/api/matches",
                Some(ADMIN),
                json!({"game": "tictactoe", "players": players, "startclock": 2, "playclock": 2, "seed": 7}),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        let record = s.finished(a.json()["id"].as_str().unwrap()).await;
        assert_eq!(record["status"], "finished", "{record}");
        records.push((players, record));
    }
    // A match with a person's seat, aborted once it has started.
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "tictactoe", "players": ["human", "random"], "startclock": 1, "playclock": 60}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let id = a.json()["id"].as_str().unwrap().to_string();
    for _ in 0..200 {
        if s.state.db.record(&id).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let aborted = s
        .api(
            "POST",
            &format!("/api/matches/{id}/abort"),
            Some(ADMIN),
            json!({}),
        )
        .await;
    assert!(aborted.status.is_success(), "{}", aborted.body);
    let aborted = s.finished(&id).await;
    assert_eq!(aborted["status"], "aborted", "{aborted}");

    // What the records say, to be found on the pages.
    let goals = |r: &Value, k: usize| r["goalValues"][k].as_u64().unwrap() as f64;
    let length = |r: &Value| r["moves"].as_array().unwrap().len();
    let erred = |r: &Value| {
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .chain([&r["startErrors"]])
            .flat_map(|row| row.as_array().unwrap())
            .any(|e| !e.as_str().unwrap().is_empty())
    };
    let finished: Vec<&Value> = records.iter().map(|(_, r)| r).collect();

    let page = s.get("/games/tictactoe").await.body;
    assert!(
        page.contains(r#"<a href="/games/tictactoe/stats?version=1">"#),
        "{page}"
    );
    let page = s.get("/games/tictactoe/stats").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let page = page.body;
    for (id, n) in [
        ("matches-total", 5),
        ("matches-finished", 4),
        ("matches-aborted", 1),
        ("matches-errored", 0),
        ("matches-unfinished", 0),
    ] {
        assert!(
            element_text(&page, id, "dd").starts_with(&n.to_string()),
            "{id}: {page}"
        );
    }
    // Each role's mean goal and wins alone, in the rules' order.
    let roles: Vec<String> = serde_json::from_value(finished[0]["gameRoleNames"].clone()).unwrap();
    let per_role = table_rows(&page, "per-role");
    assert_eq!(per_role.len(), 2, "{per_role:?}");
    for (k, role) in roles.iter().enumerate() {
        let mean = finished.iter().map(|r| goals(r, k)).sum::<f64>() / 4.0;
        let won = finished
            .iter()
            .filter(|r| goals(r, k) > goals(r, 1 - k))
            .count();
        assert_eq!(
            per_role[k],
            [
                role.to_string(),
                format!("{mean:.1}"),
                format!("{won} {}", pct(won, 4)),
                "4".into()
            ],
            "{per_role:?}"
        );
    }
    let across = charts(&page, "chart across");
    assert_eq!(across.len(), 1, "{page}");
    assert_eq!(across[0].matches(r#"class="bar""#).count(), 2);
    assert!(
        across[0].contains("<title>Mean goal per role of tictactoe, from 0 to 100</title>"),
        "{}",
        across[0]
    );
    for (k, role) in roles.iter().enumerate() {
        let mean = finished.iter().map(|r| goals(r, k)).sum::<f64>() / 4.0;
        assert!(
            across[0].contains(&format!("<title>{role}: {mean:.1}</title>")),
            "{}",
            across[0]
        );
    }
    // Lengths: the summary, and a bar per row of the histogram's table, whose counts add up.
    let mut lengths: Vec<usize> = finished.iter().map(|r| length(r)).collect();
    lengths.sort_unstable();
    let mean = lengths.iter().sum::<usize>() as f64 / 4.0;
    assert_eq!(
        element_text(&page, "lengths", "p"),
        format!(
            "In joint moves, over 4 finished matches: mean {mean:.1}, median {}, shortest {}, longest {}.",
            lengths[1], lengths[0], lengths[3]
        )
    );
    let histogram = table_rows(&page, "length-histogram");
    let columns = charts(&page, "chart columns");
    assert_eq!(columns.len(), 1, "{page}");
    assert_eq!(
        columns[0].matches(r#"class="bar""#).count(),
        histogram.len()
    );
    let counted: usize = histogram
        .iter()
        .map(|r| r[1].parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, 4, "{histogram:?}");
    // Errors: `wrong`'s two matches, of the five that ended; both illegal moves, no timeout.
    let with_errors =
        records.iter().filter(|(_, r)| erred(r)).count() + usize::from(erred(&aborted));
    assert_eq!(with_errors, 2);
    assert!(
        element_text(&page, "error-share", "p")
            .starts_with("40% of the matches that ended (2 of 5)"),
        "{page}"
    );
    let kinds = page
        .split(r#"id="error-kinds">"#)
        .nth(1)
        .and_then(|rest| rest.split("</ul>").next())
        .unwrap_or_else(|| panic!("{page}"));
    assert_eq!(
        kinds,
        "<li>A timeout: 0 (0%)</li><li>An illegal or unparsable move: 2 (40%)</li>"
    );
    let json = s.get("/api/games/tictactoe/stats").await.json();
    assert_eq!(json["ended"]["finished"], 4, "{json}");
    assert_eq!(json["ended"]["aborted"], 1, "{json}");
    assert_eq!(json["errors"]["with_errors"], 2, "{json}");
    assert_eq!(json["lengths"]["matches"], 4, "{json}");
    assert_eq!(json["per_role"][0]["role"], roles[0].as_str(), "{json}");

    // A player's results per opponent, computed from the records the same way.
    for (me, opponents) in [("steady", ["wrong", "legal"]), ("wrong", ["steady", ""])] {
        let page = s.get(&format!("/players/{me}")).await.body;
        let rows = table_rows(&page, "per-opponent");
        let opponents: Vec<&str> = opponents.into_iter().filter(|o| !o.is_empty()).collect();
        assert_eq!(rows.len(), opponents.len(), "{me}: {rows:?}");
        for (row, opponent) in rows.iter().zip(&opponents) {
            let mut expected = [0usize; 6]; // played, won, drawn, lost, failed, goals
            for (players, r) in &records {
                let (Some(mine), Some(theirs)) = (
                    players.iter().position(|p| *p == me),
                    players.iter().position(|p| p == opponent),
                ) else {
                    continue;
                };
                expected[0] += 1;
                expected[5] += goals(r, mine) as usize;
                let failed = failed_in(r, mine);
                if failed {
                    expected[4] += 1;
                } else if goals(r, mine) > goals(r, theirs) {
                    expected[1] += 1;
                } else if goals(r, mine) == goals(r, theirs) {
                    expected[2] += 1;
                } else {
                    expected[3] += 1;
                }
            }
            let [played, won, drawn, lost, failed, total] = expected;
            let mean = format!("{:.1}", total as f64 / played as f64);
            assert_eq!(
                row,
                &[
                    opponent.to_string(),
                    played.to_string(),
                    played.to_string(),
                    won.to_string(),
                    drawn.to_string(),
                    lost.to_string(),
                    mean,
                    failed.to_string()
                ],
                "{me} against {opponent}"
            );
        }
        let across = charts(&page, "chart across");
        assert_eq!(across.len(), 1, "{page}");
        assert_eq!(across[0].matches(r#"class="bar""#).count(), opponents.len());
        // Error and timeout rates over its moves.
        let mine: Vec<(usize, &Value)> = records
            .iter()
            .filter_map(|(players, r)| players.iter().position(|p| *p == me).map(|k| (k, r)))
            .collect();
        let moves: usize = mine.iter().map(|(_, r)| length(r)).sum();
        let errors: usize = mine
            .iter()
            .map(|(k, r)| {
                r["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|e| !e[*k].as_str().unwrap().is_empty())
                    .count()
            })
            .sum();
        assert_eq!(
            element_text(&page, "error-rate", "dd"),
            format!("{} of its moves ({errors})", pct(errors, moves)),
            "{me}"
        );
        assert_eq!(
            element_text(&page, "timeout-rate", "dd"),
            "0% of its moves (0)",
            "{me}"
        );
        assert!(
            element_text(&page, "move-time", "dd").contains("of the play clock"),
            "{me}: {page}"
        );
        let json = s.get(&format!("/api/players/{me}/stats")).await.json();
        assert_eq!(json["matches"], mine.len(), "{json}");
        assert_eq!(json["moves"], moves, "{json}");
        assert_eq!(json["errors"], errors, "{json}");
    }
    // `wrong` erred on every move; `steady` on none.
    let page = s.get("/players/wrong").await.body;
    assert!(
        element_text(&page, "error-rate", "dd").starts_with("100% "),
        "{page}"
    );
    let page = s.get("/players/steady").await.body;
    assert!(
        element_text(&page, "error-rate", "dd").starts_with("0% "),
        "{page}"
    );
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
