//! The HTTP player: GGP requests in, replies out, any number of matches at once.
//!
//! Requests come as POST bodies (any content type) or, as ggp-base's players also accept, as
//! the URL-encoded path of a GET (`GET /(INFO)`); CORS preflights (OPTIONS) are answered so
//! browser-based managers can talk to the player. Replies are `text/acl`. The rules are read
//! and the moves chosen on blocking threads, so INFO is answered while the player thinks.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use gdl_reason::StateMachine;
use ggp_protocol::{InfoReply, MAX_CLOCK_SECS, Reply, Request, Start};

use crate::strategy::{Game, MoveReport, Strategy, StrategyFactory, load};

/// How a player presents itself and plays.
#[derive(Clone)]
pub struct PlayerConfig {
    /// The name INFO reports.
    pub name: String,
    pub factory: StrategyFactory,
    /// Time kept back from each clock for the network: the strategy's deadline is the clock
    /// minus this (or a quarter of the clock, if less).
    pub margin: Duration,
    /// Write a line to standard error for every request: what it was, what was answered, and
    /// how long it took.
    pub log: bool,
}

/// The largest request read (a START carries the rules; the largest corpus game is 0.5 MB).
const MAX_REQUEST: usize = 64 * 1024 * 1024;

struct Session {
    game: Game,
    strategy: Box<dyn Strategy>,
    play_clock: Duration,
}

struct Shared {
    config: PlayerConfig,
    sessions: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
    /// What the strategy reported for the last move it chose, in any match (INFO shows it).
    last_report: Mutex<Option<MoveReport>>,
}

/// Serves GGP requests on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: PlayerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        config,
        sessions: Mutex::new(HashMap::new()),
        last_report: Mutex::new(None),
    });
    let app = Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(MAX_REQUEST))
        .with_state(shared);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

fn reply(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/acl"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// When a strategy must have answered: the clock from `from`, less the margin (or a quarter
/// of the clock, if less). Clocks are at most [`MAX_CLOCK_SECS`], so the sum is representable.
fn deadline(from: Instant, clock: Duration, margin: Duration) -> Instant {
    let budget = clock.saturating_sub(margin.min(clock / 4));
    from.checked_add(budget).unwrap_or(from)
}

/// A line of the request log on standard error (a closed standard error loses the line, and
/// nothing else).
fn log_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// A request in a few words for the log: `START m1 as xPlayer`, `PLAY m1`, …
fn describe(request: &Request) -> String {
    match request {
        Request::Start(s) => format!(
            "START {} as {} ({} s, {} s)",
            s.match_id, s.role, s.start_clock, s.play_clock
        ),
        Request::Play { match_id, moves } => match moves {
            None => format!("PLAY {match_id} NIL"),
            Some(m) => format!("PLAY {match_id} ({})", m.join(" ")),
        },
        Request::Stop { match_id, .. } => format!("STOP {match_id}"),
        Request::Sees { match_id, .. } => format!("GDL-II PLAY/STOP {match_id}"),
        Request::Turn(t) => format!(
            "{} {} turn {} move {} sees ({})",
            if t.stop { "STOP" } else { "PLAY" },
            t.match_id,
            t.turn,
            t.last_move.as_deref().unwrap_or("NIL"),
            t.percepts.as_deref().unwrap_or_default().join(" ")
        ),
        Request::Abort { match_id } => format!("ABORT {match_id}"),
        Request::Info => "INFO".into(),
        Request::Preview { .. } => "PREVIEW".into(),
    }
}

/// A reply for the log, shortened.
fn shorten(text: &str) -> String {
    let head = text
        .char_indices()
        .nth(1000)
        .map_or(text, |(at, _)| &text[..at]);
    let one_line: String = head.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

/// Decodes `%XX` escapes (and `+` as a space) of a GET request's path.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let message = match method {
        Method::OPTIONS => {
            let mut response = reply(StatusCode::OK, String::new());
            let headers = response.headers_mut();
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("POST, GET, OPTIONS"),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("Content-Type, Sender, Receiver"),
            );
            headers.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("86400"),
            );
            return response;
        }
        Method::GET => {
            let path = uri.path_and_query().map_or("", |p| p.as_str());
            let path = path.strip_prefix('/').unwrap_or(path);
            percent_decode(path.strip_prefix('?').unwrap_or(path))
        }
        Method::POST => String::from_utf8_lossy(&body).into_owned(),
        _ => {
            return reply(
                StatusCode::METHOD_NOT_ALLOWED,
                "a GGP request is sent with POST (or GET)".into(),
            );
        }
    };
    let received = Instant::now();
    let request = match Request::parse(&message) {
        Ok(request) => request,
        Err(e) => {
            let answer = format!("cannot read the request: {e}");
            if shared.config.log {
                log_line(format_args!(
                    "ggp player: `{}` -> 400 {answer}",
                    shorten(&message)
                ));
            }
            return reply(StatusCode::BAD_REQUEST, answer);
        }
    };
    let what = shared.config.log.then(|| describe(&request));
    let (status, body) = match answer(&shared, request).await {
        Ok(r) => (StatusCode::OK, r.to_string()),
        Err((status, message)) => (status, message),
    };
    if let Some(what) = what {
        log_line(format_args!(
            "ggp player: {what} -> {}{} in {} ms",
            if status == StatusCode::OK {
                String::new()
            } else {
                format!("{} ", status.as_u16())
            },
            shorten(&body),
            received.elapsed().as_millis()
        ));
    }
    reply(status, body)
}

type Answer = Result<Reply, (StatusCode, String)>;

async fn answer(shared: &Arc<Shared>, request: Request) -> Answer {
    match request {
        Request::Info => Ok(Reply::Info(InfoReply {
            name: Some(shared.config.name.clone()),
            status: Some("available".into()),
            other: shared
                .last_report
                .lock()
                .expect("not poisoned")
                .as_ref()
                .map(MoveReport::info_pairs)
                .unwrap_or_default(),
        })),
        Request::Preview { .. } => Ok(Reply::Ready),
        Request::Start(start) => {
            // A START for a match this player already plays (another role of it, say): as
            // ggp-base's players do, say so and keep the match it has.
            if shared
                .sessions
                .lock()
                .expect("not poisoned")
                .contains_key(&start.match_id)
            {
                return Ok(Reply::Busy);
            }
            let config = shared.config.clone();
            let id = start.match_id.clone();
            let session = blocking(move || begin(&config, start)).await?;
            shared
                .sessions
                .lock()
                .expect("not poisoned")
                .insert(id, Arc::new(Mutex::new(session)));
            Ok(Reply::Ready)
        }
        Request::Play { match_id, moves } => play(shared, match_id, None, moves).await,
        Request::Turn(ggp_protocol::Turn {
            stop: false,
            match_id,
            last_move,
            percepts,
            ..
        }) => play(shared, match_id, Some(last_move), percepts).await,
        Request::Stop { match_id, moves } => stop(shared, match_id, None, moves).await,
        Request::Turn(ggp_protocol::Turn {
            stop: true,
            match_id,
            last_move,
            percepts,
            ..
        }) => stop(shared, match_id, Some(last_move), percepts).await,
        // (Never read from a message: the GameController's GDL-II form reads as PLAY or STOP.)
        Request::Sees { match_id, .. } => Err((
            StatusCode::BAD_REQUEST,
            format!("match {match_id}: not a request a player receives"),
        )),
        Request::Abort { match_id } => {
            shared
                .sessions
                .lock()
                .expect("not poisoned")
                .remove(&match_id);
            Ok(Reply::Aborted)
        }
    }
}

/// What a PLAY or STOP tells the player of the last step: in a GDL game the joint move; in a
/// GDL-II game its percepts (and, in the form with the turn, its own move: `own` is
/// `Some(…)`).
fn observe(
    game: &mut Game,
    own: Option<Option<String>>,
    list: Option<Vec<String>>,
) -> Result<(), (StatusCode, String)> {
    let Some(list) = list else {
        return Ok(());
    };
    let result = if game.possible.is_some() {
        game.perceive(own.flatten().as_deref(), &list)
    } else {
        game.apply(&list)
    };
    result.map_err(|e| (StatusCode::BAD_REQUEST, e))
}

async fn play(
    shared: &Arc<Shared>,
    match_id: String,
    own: Option<Option<String>>,
    list: Option<Vec<String>>,
) -> Answer {
    // A PLAY for a match this player does not know (it was restarted, or never got
    // START): `busy`, as ggp-base's players answer, so that a manager reads it as the
    // answer it is rather than as a move.
    let Some(session) = find(shared, &match_id) else {
        return Ok(Reply::Busy);
    };
    let margin = shared.config.margin;
    let shared = shared.clone();
    blocking(move || {
        let mut session = session.lock().expect("not poisoned");
        observe(&mut session.game, own, list)?;
        let deadline = deadline(Instant::now(), session.play_clock, margin);
        let Session { game, strategy, .. } = &mut *session;
        if game.is_over().unwrap_or(false) {
            return Err((
                StatusCode::BAD_REQUEST,
                "the game is over (its state is terminal): there is no move to make".into(),
            ));
        }
        let chosen = strategy.select(game, deadline).map_err(|e| {
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no move chosen: {e}"),
            )
        })?;
        game.last_move = Some(chosen);
        let text = game.text(chosen);
        if let Some(report) = strategy.report() {
            if shared.config.log {
                log_line(format_args!(
                    "ggp player: {match_id}: {text}: {}",
                    report.describe()
                ));
            }
            *shared.last_report.lock().expect("not poisoned") = Some(report);
        }
        Ok(Reply::Move(text))
    })
    .await
}

async fn stop(
    shared: &Arc<Shared>,
    match_id: String,
    own: Option<Option<String>>,
    list: Option<Vec<String>>,
) -> Answer {
    let session = shared
        .sessions
        .lock()
        .expect("not poisoned")
        .remove(&match_id);
    let Some(session) = session else {
        // A STOP for a match this player does not know (restarted, say): nothing to do.
        return Ok(Reply::Done);
    };
    blocking(move || {
        let mut session = session.lock().expect("not poisoned");
        observe(&mut session.game, own, list)?;
        let Session { game, strategy, .. } = &mut *session;
        strategy.stop(game);
        Ok(Reply::Done)
    })
    .await
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, (StatusCode, String)> + Send + 'static,
) -> Result<T, (StatusCode, String)> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|_| {
        Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "the player failed".into(),
        ))
    })
}

fn find(shared: &Shared, match_id: &str) -> Option<Arc<Mutex<Session>>> {
    shared
        .sessions
        .lock()
        .expect("not poisoned")
        .get(match_id)
        .cloned()
}

/// Reads the rules and prepares a session for a START.
fn begin(config: &PlayerConfig, start: Start) -> Result<Session, (StatusCode, String)> {
    let started = Instant::now();
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
    for (name, clock) in [
        ("start clock", start.start_clock),
        ("play clock", start.play_clock),
    ] {
        if clock > MAX_CLOCK_SECS {
            return Err(bad(format!(
                "the {name}, {clock} s, is longer than a day ({MAX_CLOCK_SECS} s), the longest this player accepts"
            )));
        }
    }
    let mut machine =
        load(&start.rules).map_err(|first| bad(format!("cannot play these rules: {first}")))?;
    let role_term = machine
        .intern(&start.role)
        .map_err(|e| bad(format!("the role `{}`: {e}", start.role)))?;
    let role = machine
        .roles()
        .iter()
        .position(|&r| r == role_term)
        .ok_or_else(|| bad(format!("`{}` is not a role of this game", start.role)))?;
    let mut game = Game::new(machine, role).map_err(bad)?;
    let mut strategy = (config.factory)();
    let start_clock = Duration::from_secs(start.start_clock);
    strategy.start(&mut game, deadline(started, start_clock, config.margin));
    Ok(Session {
        game,
        strategy,
        play_clock: Duration::from_secs(start.play_clock),
    })
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn get_paths_are_decoded() {
        assert_eq!(percent_decode("(INFO)"), "(INFO)");
        assert_eq!(percent_decode("(PLAY%20m%20NIL)"), "(PLAY m NIL)");
        assert_eq!(percent_decode("(PLAY+m+NIL)"), "(PLAY m NIL)");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
