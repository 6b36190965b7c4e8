//! `ggp serve`: the Gamemaster, a web service to keep games, register players, run and watch
//! matches, and play them (`ggp_server`).

use std::path::PathBuf;
use std::time::Duration;

use ggp_match::DEFAULT_MAX_STEPS;
use ggp_server::{AppState, Config, Gamemaster, Startup, serve};

use crate::cmd::records::default_db_path;
use crate::cmd::{byte_size, count_up_to, milliseconds, seconds_from, zero_up_to};
use crate::out::errln;
use crate::{SUCCESS, USAGE_OR_IO};

#[derive(clap::Args)]
pub struct Args {
    /// The address to listen on (`0.0.0.0:9000` to be reached from other machines; port 0 for
    /// any free port).
    #[arg(long, default_value = "127.0.0.1:9000")]
    addr: String,
    /// The match database, shared with `ggp match` and `ggp matches` (default:
    /// `$XDG_DATA_HOME/ggp/matches.sqlite`, or `~/.local/share/ggp/matches.sqlite`); a
    /// `postgres://user:password@host/db` URL for a PostgreSQL database that servers on
    /// several machines share (docs/deploy.md).
    #[arg(long, value_name = "FILE|URL")]
    db: Option<ggp_match::DatabaseUrl>,
    /// Import every `.kif` file under this directory at start (its key is the file's name); may
    /// be given several times. Rules already kept add nothing; changed rules add a version.
    /// The first directory's games are featured: listed first.
    #[arg(long = "games", value_name = "DIR")]
    games: Vec<PathBuf>,
    /// The admin token, which every write needs (default: `$GGP_ADMIN_TOKEN`, or a new random
    /// one, printed at start). At least 16 characters.
    #[arg(long, value_name = "TOKEN")]
    admin_token: Option<String>,
    /// Seconds between the rounds of INFO sent to registered players (at least 1).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = seconds_from(1.0))]
    ping_interval: f64,
    /// Milliseconds added to each clock for the network before a reply counts as late.
    #[arg(long, default_value_t = 1000, value_parser = milliseconds)]
    grace_ms: u64,
    /// Abort a match whose game has not ended after this many joint moves.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS, value_parser = count_up_to(usize::MAX))]
    max_steps: usize,
    /// No web pages, no API: play the tournaments' scheduled matches only, beside other
    /// servers sharing the database (docs/deploy.md).
    #[arg(long, conflicts_with = "addr")]
    worker: bool,
    /// Tournament matches this process plays at once (0: none; a front end only).
    #[arg(long, value_name = "N", default_value_t = ggp_server::DEFAULT_CAPACITY, value_parser = zero_up_to(1024))]
    capacity: usize,
    /// Seconds without a heartbeat after which another server is taken for gone: its running
    /// matches are recorded as aborted and its tournament matches played again by others. (A
    /// server on this machine whose process is gone is noticed at once.)
    #[arg(long, value_name = "SECONDS", default_value = "15", value_parser = seconds_from(1.0))]
    dead_after: f64,
    /// Matches this process runs at once (live and tournament matches); past it, a new match
    /// is refused with 503 and a tournament's waits (default: 32 per core).
    #[arg(long, value_name = "N", value_parser = count_up_to(100_000))]
    max_matches: Option<usize>,
    /// The most memory one match may take (the manager's engine and its built-in players'):
    /// a game whose trial needs more is unplayable; the matches share three quarters of
    /// `--max-memory` (default: 1 GiB, at most half of that share).
    #[arg(long, value_name = "SIZE", value_parser = byte_size(ggp_server::limits::MIN_MATCH_MEMORY, usize::MAX))]
    match_memory: Option<usize>,
    /// Connections open at once; past it, the connection idle the longest is closed (default:
    /// from the limit of open files, 896 under the common 1,024).
    #[arg(long, value_name = "N", value_parser = count_up_to(1 << 20))]
    max_connections: Option<usize>,
    /// Connections open at once from one client address (an IPv6 address's /64); past it, that
    /// address's idlest connection is closed for its newcomer (default: a quarter of
    /// `--max-connections`, at least 16).
    #[arg(long, value_name = "N", value_parser = count_up_to(1 << 20))]
    max_per_address: Option<usize>,
}

/// Reports a refusal or a failure on standard error; the exit status to end with.
fn fail(message: String) -> u8 {
    errln!("ggp serve: {message}");
    USAGE_OR_IO
}

/// The admin token, and whether it was made up here (and so is printed at start).
struct AdminToken {
    token: String,
    generated: bool,
}

pub fn run(args: Args) -> u8 {
    let admin = match AdminToken::choose(&args) {
        Ok(admin) => admin,
        Err(status) => return status,
    };
    let config = match configure(&args, &admin) {
        Ok(config) => config,
        Err(status) => return status,
    };
    let runtime = match super::runtime() {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    runtime.block_on(serve_until_stopped(&args, &admin, config))
}

impl AdminToken {
    /// `--admin-token`, `$GGP_ADMIN_TOKEN`, or a new random one; refused when too short or
    /// with spaces.
    fn choose(args: &Args) -> Result<Self, u8> {
        let (token, generated) = match args.admin_token.clone().or_else(|| {
            std::env::var("GGP_ADMIN_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
        }) {
            Some(token) => (token, false),
            None => (ggp_server::auth::new_token(), true),
        };
        if token.chars().count() < 16 || token.chars().any(char::is_whitespace) {
            return Err(fail(
                "the admin token must have at least 16 characters and no spaces (leave it out to get a random one)".into(),
            ));
        }
        Ok(AdminToken { token, generated })
    }
}

/// The server's configuration from the arguments, refused when they do not fit together.
fn configure(args: &Args, admin: &AdminToken) -> Result<Config, u8> {
    for dir in &args.games {
        if !dir.is_dir() {
            return Err(fail(format!("--games {}: not a directory", dir.display())));
        }
    }
    let db = args
        .db
        .clone()
        .map_or_else(default_db_path, Ok)
        .map_err(fail)?;
    let dead_after = Duration::from_secs_f64(args.dead_after);
    let mut limits = ggp_server::limits::Limits::default();
    if let Some(n) = args.max_matches {
        limits.max_matches = n;
    }
    if let Some(bytes) = args.match_memory {
        limits.match_memory = bytes;
    }
    if let Some(n) = args.max_connections {
        limits.http.max_connections = n;
        limits.http.max_per_address = ggp_http::default_per_address(n);
    }
    if let Some(n) = args.max_per_address {
        limits.http.max_per_address = n;
    }
    limits.check().map_err(|e| fail(e.to_string()))?;
    let config = Config {
        limits,
        games: args.games.clone(),
        ping_interval: Duration::from_secs_f64(args.ping_interval),
        grace: Duration::from_millis(args.grace_ms),
        max_steps: args.max_steps,
        kind: if args.worker { "worker" } else { "web" },
        capacity: args.capacity,
        heartbeat: (dead_after / 5).clamp(Duration::from_millis(50), ggp_server::DEFAULT_HEARTBEAT),
        dead_after,
        ..Config::new(db, admin.token.clone())
    };
    if args.worker && args.capacity == 0 {
        return Err(fail("--worker with --capacity 0 would do nothing".into()));
    }
    Ok(config)
}

/// Starts the Gamemaster and serves (or, as a worker, plays the tournaments' matches) until
/// Ctrl-C or SIGTERM; the exit status.
async fn serve_until_stopped(args: &Args, admin: &AdminToken, config: Config) -> u8 {
    // Listen first: a port in use is reported before anything is imported.
    let listener = if args.worker {
        None
    } else {
        match tokio::net::TcpListener::bind(&args.addr).await {
            Ok(l) => Some(l),
            Err(e) => return fail(format!("cannot listen on {}: {e}", args.addr)),
        }
    };
    let bound = listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map_or(args.addr.clone(), |a| a.to_string());
    errln!("ggp serve: the match database is {}", config.db);
    let (state, startup) = match Gamemaster::start(config).await {
        Ok(started) => started,
        Err(e) => return fail(e.to_string()),
    };
    report_startup(&startup);
    if admin.generated && !args.worker {
        errln!(
            "ggp serve: the admin token (new; choose one with --admin-token or GGP_ADMIN_TOKEN): {}",
            admin.token
        );
    }
    let server = state.server_id().unwrap_or_default();
    if args.worker {
        errln!(
            "ggp serve: worker (server {server}) playing up to {} tournament match{} at once (Ctrl-C to stop)",
            args.capacity,
            if args.capacity == 1 { "" } else { "es" }
        );
    } else {
        errln!("ggp serve: listening on http://{bound}/ — open it in a browser (Ctrl-C to stop)");
    }
    let Some(listener) = listener else {
        work_until_stopped(&state, server).await;
        return SUCCESS;
    };
    match serve(listener, state, shutdown()).await {
        Ok(()) => SUCCESS,
        Err(e) => fail(e.to_string()),
    }
}

/// Says what the Gamemaster found at start: matches left running, games imported, tournament
/// matches of servers that are gone.
fn report_startup(startup: &Startup) {
    if startup.aborted > 0 {
        errln!(
            "ggp serve: {} match{} running when the server last stopped {} recorded as aborted",
            startup.aborted,
            if startup.aborted == 1 { "" } else { "es" },
            if startup.aborted == 1 { "is" } else { "are" }
        );
    }
    for (dir, imported) in &startup.imported {
        match imported {
            Ok(i) => {
                errln!(
                    "ggp serve: games from {}: {} added, {} unchanged, {} refused",
                    dir.display(),
                    i.added,
                    i.unchanged,
                    i.refused.len()
                );
                for (file, why) in &i.refused {
                    errln!("ggp serve:   refused {}: {why}", file.display());
                }
            }
            Err(e) => errln!("ggp serve: games from {}: {e}", dir.display()),
        }
    }
    if startup.requeued > 0 {
        errln!(
            "ggp serve: {} tournament match{} claimed by servers that are gone {} queued again",
            startup.requeued,
            if startup.requeued == 1 { "" } else { "es" },
            if startup.requeued == 1 { "is" } else { "are" }
        );
    }
    if startup.done > 0 {
        errln!(
            "ggp serve: {} tournament match{} claimed by servers that are gone had finished: recorded as played",
            startup.done,
            if startup.done == 1 { "" } else { "es" },
        );
    }
}

/// A worker: plays the tournaments' matches until stopped, then says what it did.
async fn work_until_stopped(state: &AppState, server: i64) {
    shutdown().await;
    state
        .shut_down("the server was stopped", Duration::from_secs(10))
        .await;
    let s = state.stats.get();
    errln!(
        "ggp serve: worker (server {server}) stopped: {} match{} finished; {} claims of the schedule, {:.2} ms on average, {:.2} ms at most",
        s.matches_finished,
        if s.matches_finished == 1 { "" } else { "es" },
        s.claims,
        s.claim_micros as f64 / 1000.0 / s.claims.max(1) as f64,
        s.claim_max_micros as f64 / 1000.0
    );
}

/// Waits for Ctrl-C (or SIGTERM), then says that the server stops.
async fn shutdown() {
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    errln!("ggp serve: stopping: live matches are aborted and recorded");
}
