//! The server's state, shared by every request and match: its configuration, its database,
//! its live matches, its limits and counters. How it starts and stops is in the crate's root.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::live::model::LiveMap;
use crate::{auth, db, games, limits, throttle};

/// The largest request body: 2 MiB (rules of up to 1 MiB, in a form).
pub const MAX_BODY: usize = 2 << 20;

/// How a Gamemaster is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// The match database.
    pub db: ggp_match::DatabaseUrl,
    /// Directories whose `.kif` files are imported at start.
    pub games: Vec<PathBuf>,
    /// The admin token.
    pub admin_token: String,
    /// How often registered players are asked INFO.
    pub ping_interval: Duration,
    /// Added to each clock for the network before a reply is late.
    pub grace: Duration,
    /// A game still running after this many joint moves is aborted.
    pub max_steps: usize,
    /// What this process is in `servers`: `web` (pages and the API), `worker` (the schedule
    /// only) or `tournament` (`ggp tournament`).
    pub kind: &'static str,
    /// Tournament matches played at once by this process (0: none, a front end only).
    pub capacity: usize,
    /// How often this process tells the database it is alive.
    pub heartbeat: Duration,
    /// A server silent for this long is gone: its matches are aborted and its tournament
    /// matches played by others.
    pub dead_after: Duration,
    /// How often the schedule is looked at for other servers' changes.
    pub poll: Duration,
    /// What users may make the server spend: matches at once, memory, connections, time.
    pub limits: limits::Limits,
}

impl Config {
    /// A web server's configuration with the defaults for the rest.
    pub fn new(db: ggp_match::DatabaseUrl, admin_token: String) -> Config {
        Config {
            db,
            games: Vec::new(),
            admin_token,
            ping_interval: Duration::from_secs(60),
            grace: Duration::from_secs(1),
            max_steps: ggp_match::DEFAULT_MAX_STEPS,
            kind: "web",
            capacity: DEFAULT_CAPACITY,
            heartbeat: DEFAULT_HEARTBEAT,
            dead_after: DEFAULT_DEAD_AFTER,
            poll: Duration::from_secs(1),
            limits: limits::Limits::default(),
        }
    }
}

/// Tournament matches a server plays at once unless told otherwise.
pub const DEFAULT_CAPACITY: usize = 4;

/// How often a server's heartbeat is written.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a server may be silent before it is taken for gone.
pub const DEFAULT_DEAD_AFTER: Duration = Duration::from_secs(15);

/// What the server did: matches finished and the manager's own time in them.
#[derive(Default)]
pub struct Stats {
    inner: Mutex<StatsInner>,
}

#[derive(Default, Clone, Copy, Debug, serde::Serialize)]
pub struct StatsInner {
    pub matches_finished: u64,
    pub steps: u64,
    /// The manager's own time (everything but waiting for players) over those matches.
    pub manager_micros: u64,
    /// Claims of scheduled matches made (a match claimed or none there), their total and
    /// longest time (the transaction, waiting for other servers' included).
    pub claims: u64,
    pub claim_micros: u64,
    pub claim_max_micros: u64,
}

impl Stats {
    /// A match finished; `paused` of its manager's own time was spent in delays between steps.
    pub(crate) fn finished(&self, timing: ggp_match::Timing, paused: Duration) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.matches_finished += 1;
        s.steps += timing.steps as u64;
        s.manager_micros += timing.own().saturating_sub(paused).as_micros() as u64;
    }

    /// A claim of the schedule took `took`.
    pub fn claimed(&self, took: Duration) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let micros = took.as_micros() as u64;
        s.claims += 1;
        s.claim_micros += micros;
        s.claim_max_micros = s.claim_max_micros.max(micros);
    }

    pub fn get(&self) -> StatsInner {
        *self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The server's state, shared by every request and match.
pub struct Gamemaster {
    pub config: Config,
    pub db: db::Db,
    pub auth: auth::Auth,
    pub live: LiveMap,
    /// Who may start a match now (slots and memory).
    pub admission: limits::Admission,
    /// What the server loop did with connections.
    pub connections: Arc<ggp_http::Counters>,
    /// Wrong tokens by client address.
    pub throttle: Arc<throttle::Throttle>,
    pub stats: Stats,
    /// Woken when a match ends.
    pub ended: Notify,
    /// Game versions to analyse.
    pub(crate) analysis: tokio::sync::mpsc::UnboundedSender<i64>,
    /// Woken to ask a player INFO now (after it is registered or edited).
    pub ping_now: Notify,
    pub(crate) stopping: AtomicBool,
    /// This process's row in `servers`.
    pub(crate) server: Option<i64>,
    /// Tournament matches this process is playing.
    pub scheduled_running: AtomicUsize,
    /// Told when a tournament's match ends (its scheduled row, whether it completed, why it
    /// never started): the tournament's bookkeeping, registered at start, so that the live
    /// matches below need not know tournaments.
    pub(crate) scheduled_ended: ScheduledEnded,
    /// Woken when the schedule changes here (a tournament made, paused, resumed; a match
    /// ended).
    pub schedule_changed: Notify,
}

/// What is done when a tournament's match ends: see [`Gamemaster::scheduled_ended`].
pub(crate) type ScheduledEnded = Box<
    dyn Fn(
            Arc<Gamemaster>,
            i64,
            bool,
            Option<String>,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// The state handlers get.
pub type AppState = Arc<Gamemaster>;

/// What happened at start, for the operator.
#[derive(Debug, Default)]
pub struct Startup {
    /// Matches that were running when the server last stopped, now recorded as aborted.
    pub aborted: usize,
    /// Tournament matches claimed by servers that are gone, queued again.
    pub requeued: u64,
    /// Tournament matches claimed by servers that are gone whose match had finished: done.
    pub done: u64,
    /// Per directory: what importing it did.
    pub imported: Vec<(PathBuf, Result<games::Imported, games::ImportError>)>,
}

impl Gamemaster {
    /// This process's row in `servers`.
    pub fn server_id(&self) -> Option<i64> {
        self.server
    }

    /// Queues a game version for analysis.
    pub fn analyse(&self, version_id: i64) {
        let _ = self.analysis.send(version_id);
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}
