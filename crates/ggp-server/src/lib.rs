//! The Gamemaster: `ggp serve`, a web service where people keep games, register players, run
//! and watch matches, and play them.
//!
//! One process serves an HTML interface ([`pages`], rendered on the server, with a few small
//! ES modules from `assets/`) and a JSON API ([`api`]) over the same data: the match database
//! of `ggp match` (`ggp_match::Store`), whose migrations also create the Gamemaster's tables
//! ([`db`]). Matches run in the server with the Game Manager as it is
//! (`ggp_match::run_match_until`); people play through channel seats
//! (`ggp_match::SeatChannel`), under the same clocks as every player ([`live`]). A match is
//! watched through a stream of server-sent events. Registered players are asked INFO now and
//! then ([`players`]); nothing else is ever sent to their URLs but the GGP protocol.
//!
//! Security: everything from outside (rules, names, URLs, replies) goes into pages through
//! the template engine, which escapes it; pages send a Content-Security-Policy that allows
//! only this site's own scripts and styles. Writes need a token ([`auth`]). Request bodies are
//! limited to [`MAX_BODY`] (rules to [`games::MAX_RULES`]).

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod api;
pub mod assets;
pub mod auth;
pub mod board;
pub mod db;
pub mod error;
mod extract;
pub mod games;
pub mod highlight;
pub mod limits;
pub mod live;
pub mod pages;
pub mod players;
pub mod ratings;
pub mod seat;
mod state;
pub mod stats;
pub mod tags;
pub mod term;
pub mod throttle;
pub mod tournament;
pub mod traits;
pub mod verdict;
mod web;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tokio::sync::Notify;

pub use state::{
    AppState, Config, DEFAULT_CAPACITY, DEFAULT_DEAD_AFTER, DEFAULT_HEARTBEAT, Gamemaster,
    MAX_BODY, Startup, Stats, StatsInner,
};

/// Why the Gamemaster could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Limits(#[from] limits::LimitsError),
    #[error(transparent)]
    Database(#[from] ggp_match::StoreError),
    /// The task opening the database failed (it panicked).
    #[error("opening the database failed: {0}")]
    Opening(#[source] tokio::task::JoinError),
    /// Reaping the matches of servers that are gone, or registering this one.
    #[error("{}", .0.message())]
    Servers(error::Error),
    /// Marking the featured games.
    #[error("{}", .0.message())]
    Games(error::Error),
}

impl Gamemaster {
    /// Opens the database, records matches left running by a previous server as aborted,
    /// imports the game directories, and starts the analysis of games and the INFO rounds.
    /// Runs on a Tokio runtime.
    pub async fn start(config: Config) -> Result<(AppState, Startup), StartError> {
        config.limits.check()?;
        let url = config.db.clone();
        let db = tokio::task::spawn_blocking(move || db::Db::open(&url))
            .await
            .map_err(StartError::Opening)??;
        let mut startup = Startup::default();
        // Matches left running by servers that are gone (this one's earlier run, say).
        let host = tournament::Host::this();
        let reaped = tournament::reap(&db, None, &host, config.dead_after)
            .await
            .map_err(StartError::Servers)?;
        startup.aborted = reaped.aborted.len();
        startup.requeued = reaped.requeued;
        startup.done = reaped.done;
        let server = tournament::register(&db, config.kind, &host)
            .await
            .map_err(StartError::Servers)?;
        let mut keys = games::ImportedKeys::new();
        let mut featured = None;
        for dir in &config.games {
            let imported = games::import(&db, dir, &mut keys).await;
            startup.imported.push((dir.clone(), imported));
            // The first directory's games are the featured ones (the project's own).
            featured.get_or_insert_with(|| keys.keys().cloned().collect::<Vec<_>>());
        }
        if let Some(featured) = featured {
            db.set_featured(featured).await.map_err(StartError::Games)?;
        }
        let admission = limits::Admission::new(config.limits);
        let analysis = games::start_analysis(
            db.clone(),
            tokio::runtime::Handle::current(),
            admission.clone(),
        );
        let gm = Arc::new(Gamemaster {
            auth: auth::Auth::new(&config.admin_token),
            config,
            db,
            live: Mutex::new(Default::default()),
            admission,
            connections: Arc::default(),
            throttle: Arc::default(),
            stats: Stats::default(),
            ended: Notify::new(),
            analysis,
            ping_now: Notify::new(),
            stopping: AtomicBool::new(false),
            server: Some(server),
            scheduled_running: AtomicUsize::new(0),
            schedule_changed: Notify::new(),
            scheduled_ended: Box::new(|gm, row, completed, failure| {
                Box::pin(async move {
                    tournament::match_ended(&gm, row, completed, failure).await;
                })
            }),
        });
        if gm.config.kind != "tournament" {
            tokio::spawn(players::ping_rounds(gm.clone()));
        }
        tokio::spawn(tournament::keep_alive(gm.clone()));
        // `ggp tournament` plays its own tournament only, once it is made.
        if gm.config.capacity > 0 && gm.config.kind != "tournament" {
            tokio::spawn(tournament::work(gm.clone(), None));
        }
        Ok((gm, startup))
    }

    /// Refuses new matches, stops the live ones for `reason` and waits (up to `wait`) until
    /// each has recorded it.
    pub async fn shut_down(&self, reason: &str, wait: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        live::stop_all(self, reason, wait).await;
        if let Some(id) = self.server
            && let Err(e) = tournament::unregister(&self.db, id).await
        {
            tournament::log(&format!(
                "ggp serve: recording that this server stopped failed: {}",
                e.message()
            ));
        }
        let _ = self.db.store.flush().await;
    }
}

/// Every route: pages, the API, the assets.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(web::home))
        .route("/dashboard/now", get(web::dashboard_now))
        .route("/login", get(web::login_page).post(web::login))
        .route("/logout", post(web::logout))
        .route("/games", get(web::games).post(web::upload))
        .route("/games/new", get(web::upload_page))
        .route("/games/{key}", get(web::game))
        .route("/games/{key}/rules.kif", get(web::rules))
        .route("/games/{key}/stats", get(web::game_stats))
        .route("/players", get(web::players).post(web::register))
        .route("/players/new", get(web::register_page))
        .route("/players/{name}", get(web::player))
        .route("/players/{name}/edit", post(web::edit_player))
        .route("/players/{name}/delete", post(web::delete_player))
        .route("/matches", get(web::matches).post(web::create_match))
        .route("/matches/new", get(web::new_match))
        .route("/matches/{id}", get(web::match_page))
        .route("/matches/{id}/export.json", get(web::export))
        .route("/matches/{id}/boards/{k}", get(web::board))
        .route("/matches/{id}/abort", post(web::abort))
        .route(
            "/tournaments",
            get(web::tournaments).post(web::create_tournament),
        )
        .route("/tournaments/{id}", get(web::tournament))
        .route("/tournaments/{id}/live", get(web::tournament_live))
        .route("/tournaments/{id}/{action}", post(web::tournament_action))
        .route("/leaderboard", get(web::leaderboard))
        .route("/static/{name}", get(web::asset))
        .nest("/api", api::router())
        .fallback(web::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            web::with_session_header,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            answer_in_time,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.throttle.clone(),
            throttle::guard,
        ))
        .layer(axum::middleware::from_fn(name_method_not_allowed))
        .layer(axum::middleware::map_response(security_headers))
        .with_state(state)
}

/// Every answer begins within the time allowed (`Limits::request_timeout`; an event stream's
/// begins at once, and its events are not timed): past it, a 408 saying so.
async fn answer_in_time(
    axum::extract::State(gm): axum::extract::State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let allowed = gm.config.limits.request_timeout;
    match tokio::time::timeout(allowed, next.run(request)).await {
        Ok(response) => response,
        Err(_) => (
            axum::http::StatusCode::REQUEST_TIMEOUT,
            axum::Json(serde_json::json!({
                "error": format!(
                    "the answer took longer than {}, the most this server takes (the request or its body came too slowly, or the server is overloaded)",
                    match allowed.as_secs() {
                        0 => format!("{} ms", allowed.as_millis()),
                        s => format!("{s} s"),
                    }
                )
            })),
        )
            .into_response(),
    }
}

/// A request with a method the address does not take gets a body saying so (the router's
/// own answer has none).
async fn name_method_not_allowed(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let method = request.method().clone();
    let path: String = request.uri().path().chars().take(200).collect();
    let response = next.run(request).await;
    if response.status() != axum::http::StatusCode::METHOD_NOT_ALLOWED {
        return response;
    }
    (
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        axum::Json(serde_json::json!({
            "error": format!("`{method}` is not a method that `{path}` takes")
        })),
    )
        .into_response()
}

/// Headers on every response: only this site's scripts and styles, no framing, no sniffing,
/// no referrer to other sites (seat links carry tokens in their fragment, which is never sent,
/// but still). `same-origin` rather than `no-referrer`: under `no-referrer` browsers send
/// `Origin: null` with this site's own forms, which the cross-site check must refuse.
async fn security_headers(mut response: axum::response::Response) -> axum::response::Response {
    let headers = response.headers_mut();
    let mut set = |name: HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::X_FRAME_OPTIONS, "DENY");
    set(header::REFERRER_POLICY, "same-origin");
    response
}

/// Serves until `shutdown` completes, then stops the live matches (recorded as aborted) and
/// gives open connections a few seconds to finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(state.clone());
    let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let server = ggp_http::serve_counted(
        listener,
        app,
        state.config.limits.http,
        state.connections.clone(),
        async move {
            let _ = stopped_rx.await;
        },
    );
    let stopping = async move {
        shutdown.await;
        state
            .shut_down("the server was stopped", Duration::from_secs(10))
            .await;
        let _ = stopped_tx.send(());
        tokio::time::sleep(Duration::from_secs(3)).await;
    };
    tokio::select! {
        served = server => served,
        () = stopping => Ok(()),
    }
}
