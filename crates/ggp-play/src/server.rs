//! The HTTP player: GGP requests in, replies out, any number of matches at once.
//!
//! Requests come as POST bodies (any content type) or, as ggp-base's players also accept, as
//! the URL-encoded path of a GET (`GET /(INFO)`); CORS preflights (OPTIONS) are answered so
//! browser-based managers can talk to the player. Replies are `text/acl`. The rules are read
//! and the moves chosen on blocking threads, so INFO is answered while the player thinks.
//!
//! What a manager (or anyone who can connect) can make the player spend is bounded
//! ([`PlayerLimits`]): connections and request heads by the server loop (`ggp_http`), a
//! request's size and the time its body may take here, and memory by session: each START
//! reserves a session's budget from the player's pool (refused with a 503 when the pool has
//! not the room), and everything done for the match (reading the rules, thinking) is charged
//! to it. A session that hears nothing for its clocks' worth (the start clock and ten play
//! clocks) and a margin is dropped, so a manager that vanishes leaves nothing behind. One
//! move is chosen at a time per match (a PLAY meanwhile is refused, not queued on a thread),
//! one client address plays a bounded number of matches, and a large request is read only
//! with the memory reading it may take free.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gdl_reason::StateMachine;
use ggp_memory::{Account, Mib, Pool};
use ggp_protocol::{InfoReply, MAX_CLOCK_SECS, Reply, Request, Start};

use crate::game::{Game, load};
use crate::strategy::{MoveReport, Strategy, StrategyFactory};

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
    /// What clients may make the player spend.
    pub limits: PlayerLimits,
}

/// What clients may make a player spend (docs/limits.md).
#[derive(Clone, Debug)]
pub struct PlayerLimits {
    /// Connections, request heads, idle connections.
    pub http: ggp_http::Limits,
    /// The largest request read, in bytes (a START carries the rules).
    pub max_request: usize,
    /// How long a request's body may take to arrive once its head has.
    pub body_timeout: Duration,
    /// What the sessions' memory comes from: each START takes a first share of it (a START
    /// that finds no room is refused), and a session takes more as it needs, until its match
    /// ends.
    pub memory: Pool,
    /// The most memory one match's session may take: reading its rules, its engine, its
    /// search.
    pub session_memory: usize,
    /// How long a session is kept without a message beyond its clocks' worth (its start clock
    /// and ten play clocks): room for the pauses a manager may make between steps (`ggp
    /// serve`'s `delay`, up to a minute) and for the network.
    pub idle_margin: Duration,
    /// Matches played at once for one client address (an IPv6 address's /64).
    pub max_sessions_per_address: usize,
}

/// The largest request a player reads by default: 4 MiB (a START carries the rules; the
/// largest game of the corpus is 425 KB, and the Gamemaster keeps rules of up to 1 MiB).
pub const DEFAULT_MAX_REQUEST: usize = 4 << 20;

/// The memory of one session by default: 1 GiB (at most half the pool).
pub const DEFAULT_SESSION_MEMORY: usize = 1 << 30;

/// How long a session is kept without a message beyond its clocks' worth, by default.
pub const DEFAULT_IDLE_MARGIN: Duration = Duration::from_secs(120);

/// Matches played at once for one client address, by default.
pub const DEFAULT_SESSIONS_PER_ADDRESS: usize = 64;

impl PlayerLimits {
    /// The defaults, with `memory` bytes for the sessions.
    pub fn with_memory(memory: usize) -> PlayerLimits {
        PlayerLimits {
            // A manager may close its sending side once its request is sent.
            http: ggp_http::Limits {
                half_close: true,
                ..ggp_http::Limits::default()
            },
            max_request: DEFAULT_MAX_REQUEST,
            body_timeout: Duration::from_secs(30),
            memory: Pool::new(memory),
            session_memory: DEFAULT_SESSION_MEMORY.min(memory / 2).max(1),
            idle_margin: DEFAULT_IDLE_MARGIN,
            max_sessions_per_address: DEFAULT_SESSIONS_PER_ADDRESS,
        }
    }
}

impl Default for PlayerLimits {
    /// The defaults, with three quarters of the process's budget for the sessions.
    fn default() -> PlayerLimits {
        let process =
            ggp_memory::process_limit().unwrap_or_else(ggp_memory::default_process_budget);
        PlayerLimits::with_memory(process / 4 * 3)
    }
}

struct Session {
    game: Game,
    strategy: Box<dyn Strategy>,
    play_clock: Duration,
    /// The session's memory, held so that its budget goes back to the pool only when the
    /// session is dropped (after a move still being chosen, say), not when it leaves the list.
    _memory: Account,
}

/// A session as the list of sessions keeps it.
struct Entry {
    session: Arc<Mutex<Session>>,
    /// The session's memory (read without the session's lock, which a move holds).
    memory: Account,
    /// When the last message for the match arrived.
    heard: Instant,
    /// How long it may go without one.
    idle: Duration,
    /// The client address that started it (see `ggp_http::address_key`).
    address: Option<std::net::IpAddr>,
    /// Whether a move is being chosen for it (a second PLAY meanwhile is refused rather than
    /// queued on a thread of its own).
    thinking: Arc<std::sync::atomic::AtomicBool>,
}

struct Shared {
    config: PlayerConfig,
    sessions: Mutex<HashMap<String, Entry>>,
    /// What the strategy reported for the last move it chose, in any match (INFO shows it).
    last_report: Mutex<Option<MoveReport>>,
}

/// How often sessions are looked at for one whose manager has gone.
const SWEEP: Duration = Duration::from_secs(1);

/// Serves GGP requests on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: PlayerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let http = config.limits.http;
    let shared = Arc::new(Shared {
        config,
        sessions: Mutex::new(HashMap::new()),
        last_report: Mutex::new(None),
    });
    let sweeper = tokio::spawn(sweep(Arc::downgrade(&shared)));
    let app = Router::new().fallback(handle).with_state(shared);
    let served = ggp_http::serve(listener, app, http, shutdown).await;
    sweeper.abort();
    served
}

/// Drops the sessions whose manager has said nothing for longer than their clocks allow, every
/// [`SWEEP`], while the player runs.
async fn sweep(shared: std::sync::Weak<Shared>) {
    loop {
        tokio::time::sleep(SWEEP).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let gone: Vec<(String, Entry)> = {
            let mut sessions = shared.sessions.lock().expect("not poisoned");
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, e)| e.heard.elapsed() > e.idle)
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| sessions.remove(&id).map(|e| (id, e)))
                .collect()
        };
        let ids: Vec<String> = gone.iter().map(|(id, _)| id.clone()).collect();
        forget(gone);
        if shared.config.log {
            for id in ids {
                log_line(format_args!(
                    "ggp player: {id}: dropped, no message from its manager for longer than its clocks allow"
                ));
            }
        }
    }
}

/// What a session is given of the player's memory when it starts (it takes more as it
/// needs, up to `cap`): 64 bytes per byte of rules (checking them takes about 15), at least
/// 16 MiB.
fn first_share(rules: usize, cap: usize) -> usize {
    rules.saturating_mul(64).max(16 << 20).min(cap)
}

/// How long a session may go without a message: its start clock and ten play clocks, and
/// `margin` more.
fn idle_allowed(start_clock: u64, play_clock: u64, margin: Duration) -> Duration {
    Duration::from_secs(start_clock.saturating_add(play_clock.saturating_mul(10)))
        .saturating_add(margin)
}

/// Drops sessions on a blocking thread: a session can hold a large search tree, whose freeing
/// must not hold up the threads that answer requests.
fn forget<T: Send + 'static>(sessions: T) {
    tokio::task::spawn_blocking(move || drop(sessions));
}

fn reply(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/acl"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
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

/// The body of a request, read up to the player's limits of size and time.
async fn read_body(limits: &PlayerLimits, body: axum::body::Body) -> Result<Vec<u8>, Response> {
    let max = limits.max_request;
    match tokio::time::timeout(limits.body_timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes.to_vec()),
        Ok(Err(e)) if is_too_large(&e) => Err(reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request is larger than {} ({max} bytes), the largest this player reads",
                Mib(max)
            ),
        )),
        Ok(Err(e)) => Err(reply(
            StatusCode::BAD_REQUEST,
            format!("cannot read the request: {e}"),
        )),
        Err(_) => Err(reply(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request's body did not arrive within {} s",
                limits.body_timeout.as_secs()
            ),
        )),
    }
}

/// Whether reading a body stopped at its size limit.
fn is_too_large(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}

async fn handle(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let (method, uri) = (parts.method, parts.uri);
    // The client's address, which the server loop tells each request.
    let address = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|p| ggp_http::address_key(p.0.ip()));
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
        Method::POST => match read_body(&shared.config.limits, body).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(refused) => return refused,
        },
        _ => {
            return reply(
                StatusCode::METHOD_NOT_ALLOWED,
                "a GGP request is sent with POST (or GET)".into(),
            );
        }
    };
    let received = Instant::now();
    // Reading a message takes up to about sixteen times its size (a stream of `(`): a large
    // one is read only with that much of the sessions' memory free, held meanwhile.
    let reading = if message.len() > PARSE_FREE {
        let want = message.len().saturating_mul(PARSE_COST);
        match shared
            .config
            .limits
            .memory
            .account("reading a request", want, want)
        {
            Ok(held) => Some(held),
            Err(full) => {
                return reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "cannot read the request now: the player's memory is taken by the matches it plays ({full})"
                    ),
                );
            }
        }
    } else {
        None
    };
    let parsed = Request::parse(&message);
    drop(reading);
    let request = match parsed {
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
    let (status, body) = match answer(&shared, request, address).await {
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

/// Messages read without holding memory for it: what reading one costs is small beside a
/// session.
const PARSE_FREE: usize = 64 << 10;

/// Bytes of memory per byte of a message that reading it may take at most.
const PARSE_COST: usize = 16;

type Answer = Result<Reply, (StatusCode, String)>;

async fn answer(
    shared: &Arc<Shared>,
    request: Request,
    address: Option<std::net::IpAddr>,
) -> Answer {
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
        Request::Start(start) => begin_session(shared, start, address).await,
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
            let ended = shared
                .sessions
                .lock()
                .expect("not poisoned")
                .remove(&match_id);
            forget(ended);
            Ok(Reply::Aborted)
        }
    }
}

/// A START: the clocks checked, room for the session in the player's memory and for the
/// client's address, then the rules read and the strategy started on a blocking thread
/// charging the session's memory.
async fn begin_session(
    shared: &Arc<Shared>,
    start: Start,
    address: Option<std::net::IpAddr>,
) -> Answer {
    check_clocks(&start)?;
    let limits = &shared.config.limits;
    {
        let sessions = shared.sessions.lock().expect("not poisoned");
        // A START for a match this player already plays (another role of it, say): as
        // ggp-base's players do, say so and keep the match it has.
        if sessions.contains_key(&start.match_id) {
            return Ok(Reply::Busy);
        }
        let of_address = sessions
            .values()
            .filter(|e| e.address.is_some() && e.address == address)
            .count();
        if of_address >= limits.max_sessions_per_address {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "cannot start match {}: this address plays {of_address} matches with the player already, the most it may",
                    start.match_id
                ),
            ));
        }
    }
    let memory = limits
        .memory
        .account(
            format!("the session of match {}", start.match_id),
            first_share(start.rules.len(), limits.session_memory),
            limits.session_memory,
        )
        .map_err(|full| {
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "cannot start match {}: the player's memory is taken by the matches it plays ({full})",
                    start.match_id
                ),
            )
        })?;
    let config = shared.config.clone();
    let id = start.match_id.clone();
    let idle = idle_allowed(start.start_clock, start.play_clock, limits.idle_margin);
    let charged = memory.clone();
    let session = blocking(&charged, move || begin(&config, start, memory)).await?;
    let replaced = shared.sessions.lock().expect("not poisoned").insert(
        id,
        Entry {
            session: Arc::new(Mutex::new(session)),
            memory: charged,
            heard: Instant::now(),
            idle,
            address,
            thinking: Arc::default(),
        },
    );
    forget(replaced);
    Ok(Reply::Ready)
}

/// The clocks of a START: at most a day each.
fn check_clocks(start: &Start) -> Result<(), (StatusCode, String)> {
    for (name, clock) in [
        ("start clock", start.start_clock),
        ("play clock", start.play_clock),
    ] {
        if clock > MAX_CLOCK_SECS {
            return Err((
                StatusCode::BAD_REQUEST,
                format!(
                    "the {name}, {clock} s, is longer than a day ({MAX_CLOCK_SECS} s), the longest this player accepts"
                ),
            ));
        }
    }
    Ok(())
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
    result.map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))
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
    let Some((session, memory, thinking)) = find(shared, &match_id) else {
        return Ok(Reply::Busy);
    };
    if thinking.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err((
            StatusCode::CONFLICT,
            format!("match {match_id}: a move is being chosen already, for an earlier PLAY"),
        ));
    }
    let margin = shared.config.margin;
    let shared = shared.clone();
    blocking(&memory, move || {
        let _done = Done(thinking);
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
    let Some(Entry {
        session, memory, ..
    }) = session
    else {
        // A STOP for a match this player does not know (restarted, say): nothing to do.
        return Ok(Reply::Done);
    };
    blocking(&memory, move || {
        let mut session = session.lock().expect("not poisoned");
        observe(&mut session.game, own, list)?;
        let Session { game, strategy, .. } = &mut *session;
        strategy.stop(game);
        Ok(Reply::Done)
    })
    .await
}

/// Runs a session's work on a blocking thread, its allocations charged to `memory`.
async fn blocking<T: Send + 'static>(
    memory: &Account,
    work: impl FnOnce() -> Result<T, (StatusCode, String)> + Send + 'static,
) -> Result<T, (StatusCode, String)> {
    let memory = memory.clone();
    tokio::task::spawn_blocking(move || {
        let done = memory.run(work);
        memory.trim();
        done
    })
    .await
    .unwrap_or_else(|_| {
        Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "the player failed".into(),
        ))
    })
}

type Thinking = Arc<std::sync::atomic::AtomicBool>;

/// Clears a session's `thinking` when a move's work ends, however it ends.
struct Done(Thinking);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The session of a match, its memory and whether a move is being chosen for it, noting that
/// its manager was heard from.
fn find(shared: &Shared, match_id: &str) -> Option<(Arc<Mutex<Session>>, Account, Thinking)> {
    let mut sessions = shared.sessions.lock().expect("not poisoned");
    let entry = sessions.get_mut(match_id)?;
    entry.heard = Instant::now();
    Some((
        entry.session.clone(),
        entry.memory.clone(),
        entry.thinking.clone(),
    ))
}

/// Reads the rules and prepares a session for a START (on a thread charging `memory`).
fn begin(
    config: &PlayerConfig,
    start: Start,
    memory: Account,
) -> Result<Session, (StatusCode, String)> {
    let started = Instant::now();
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
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
    let mut game = Game::new(machine, role).map_err(|e| bad(e.to_string()))?;
    let mut strategy = (config.factory)();
    let start_clock = Duration::from_secs(start.start_clock);
    strategy.start(&mut game, deadline(started, start_clock, config.margin));
    Ok(Session {
        game,
        strategy,
        play_clock: Duration::from_secs(start.play_clock),
        _memory: memory,
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
