//! The Gamemaster in process, through its router: what the tests share (a site on SQLite or
//! PostgreSQL, requests and answers, event streams), and the tests by subject: `access` (who
//! may write, what is escaped, hostile requests), `games` (checked, kept, found by tags),
//! `play` (a person's seat, GDL-II, matches of servers that went), `stats` (statistics).

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

const TICTACTOE: &str = include_str!("../../../../games/tictactoe.kif");

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

mod access;
mod games;
mod gdl3;
mod play;
mod stats;
