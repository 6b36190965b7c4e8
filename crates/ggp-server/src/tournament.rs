//! Tournaments and the schedule they make.
//!
//! A tournament is a set of players (registered or built in), a set of game versions, clocks
//! and a format:
//! - `roundrobin`: each round plays every assignment of distinct players to a game's seated
//!   roles once (for 3 players on a two-role game: 6 matches per game and round);
//! - `random`: each round, for each game, the players shuffled and seated in groups (those
//!   left over sit the round out);
//! - `continuous` (Tiltyard's way): whenever enough of its players are idle, a match of a game
//!   drawn from its set among idle players drawn at random; until it is ended.
//!
//! The schedule lives in the database: a match to be played is a row of `scheduled`. Every
//! process that plays matches (`ggp serve`, `ggp serve --worker`, `ggp tournament`) is a row
//! of `servers` with a heartbeat; it claims queued rows in a transaction (SQLite: the
//! writer's immediate transaction, which other processes wait for), plays each as any served
//! match and marks the row done when the match ends. A registered player is never claimed for
//! two matches at once (its protocol does not say which match a message is for); built-in
//! players are. A server whose heartbeat stops (or, on the same machine, whose process is
//! gone) is reaped by any other: its running matches are recorded as aborted, with their
//! steps, and its claimed rows are queued again, to be played by another server.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ggp_match::params;
use ggp_match::sql::{self, Conn, Dialect, OptionalExtension, Row};
use ggp_play::StrategyKind;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::db::{Db, from_json, json, now_ms, sql};
use crate::error::Error;
use crate::live::{self, MatchRequest};
use crate::seat::HUMAN;
use crate::state::Gamemaster;
use crate::verdict::Verdict;

/// The most matches one tournament may schedule.
pub const MAX_SCHEDULE: usize = 100_000;

/// The most rounds.
pub const MAX_ROUNDS: u64 = 10_000;

/// The most players in a tournament.
pub const MAX_PLAYERS: usize = 200;

/// The most games in a tournament.
pub const MAX_GAMES: usize = 100;

/// A tournament's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[serde(rename = "roundrobin")]
    RoundRobin,
    Random,
    Continuous,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::RoundRobin => "roundrobin",
            Format::Random => "random",
            Format::Continuous => "continuous",
        }
    }

    pub fn parse(text: &str) -> Result<Format, Error> {
        match text
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_', ' '], "")
            .as_str()
        {
            "roundrobin" | "" => Ok(Format::RoundRobin),
            "random" => Ok(Format::Random),
            "continuous" => Ok(Format::Continuous),
            _ => Err(Error::BadRequest(format!(
                "`{}` is not a tournament format: `roundrobin`, `random` or `continuous`",
                text.chars().take(50).collect::<String>()
            ))),
        }
    }
}

/// A tournament as asked for (`POST /api/tournaments`, the form, `ggp tournament`).
#[derive(Clone, Debug, Deserialize)]
pub struct TournamentRequest {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub format: Option<String>,
    /// Game keys (their latest versions).
    pub games: Vec<String>,
    /// Registered players' names and built-in strategies.
    pub players: Vec<String>,
    /// Rounds (round robin and random pairings); 1 by default.
    #[serde(default)]
    pub rounds: Option<u64>,
    pub startclock: u64,
    pub playclock: u64,
    #[serde(default)]
    pub seed: Option<u64>,
}

/// A game of a tournament: a version, pinned when the tournament was made.
#[derive(Clone, Debug, Serialize)]
pub struct TournamentGame {
    #[serde(skip)]
    pub id: i64,
    pub key: String,
    pub version: i64,
    /// Roles that take a player (not GDL-II's `random`).
    pub seats: usize,
}

/// How many of a tournament's scheduled matches are in each state.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Progress {
    pub queued: u64,
    pub playing: u64,
    pub done: u64,
    pub failed: u64,
}

/// A tournament.
#[derive(Clone, Debug, Serialize)]
pub struct Tournament {
    pub id: i64,
    pub name: String,
    pub format: Format,
    pub games: Vec<TournamentGame>,
    pub players: Vec<String>,
    #[serde(rename = "startClock")]
    pub start_clock: u64,
    #[serde(rename = "playClock")]
    pub play_clock: u64,
    pub rounds: u64,
    pub seed: u64,
    /// `running`, `paused` or `finished`.
    pub status: String,
    pub created: i64,
    pub finished: Option<i64>,
    pub progress: Progress,
}

/// A scheduled match of a tournament, for its page.
#[derive(Clone, Debug, Serialize)]
pub struct ScheduledMatch {
    pub id: i64,
    pub round: u64,
    pub game: String,
    pub version: i64,
    pub players: Vec<String>,
    /// `queued`, `claimed` (being played), `done` or `failed`.
    pub status: String,
    /// The match playing it, or the last one that did.
    #[serde(rename = "matchId")]
    pub match_id: Option<String>,
    /// How the match ended: `finished`, `aborted`, `unfinished` (being played), or none.
    #[serde(rename = "matchStatus")]
    pub match_status: Option<String>,
    pub goals: Vec<u8>,
    pub attempts: u64,
    pub failure: Option<String>,
    /// The server playing it (while claimed).
    pub server: Option<i64>,
}

/// What the schedule tells a server to play.
#[derive(Clone, Debug)]
pub struct Claim {
    pub row: i64,
    pub tournament: i64,
    pub key: String,
    pub version: i64,
    pub players: Vec<String>,
    pub seed: u64,
    pub start_clock: u64,
    pub play_clock: u64,
}

/// What reaping found.
#[derive(Clone, Debug, Default)]
pub struct Reaped {
    /// Servers found gone.
    pub servers: Vec<i64>,
    /// Matches recorded as aborted.
    pub aborted: Vec<String>,
    /// Served matches that never started, now failed.
    pub never_started: Vec<String>,
    /// Scheduled matches queued again.
    pub requeued: u64,
    /// Scheduled matches whose match had finished when their server went: done.
    pub done: u64,
}

/// Which machine and boot this process runs on, for telling whether a server on the same
/// machine is gone.
#[derive(Clone, Debug)]
pub struct Host {
    pub host: String,
    pub boot: String,
    pub pid: u32,
}

impl Host {
    pub fn this() -> Host {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .ok()
                .filter(|s| !s.is_empty())
        };
        Host {
            host: read("/proc/sys/kernel/hostname")
                .or_else(|| read("/etc/hostname"))
                .unwrap_or_else(|| "unknown".into()),
            boot: read("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
            pid: std::process::id(),
        }
    }

    /// Whether the server `(host, boot, pid)` is certainly gone, as seen from this machine:
    /// on this machine since an earlier boot, or its process is no `ggp` running now. (Other
    /// machines' servers are gone when their heartbeat stops.)
    fn certainly_gone(&self, host: &str, boot: &str, pid: i64) -> bool {
        if host != self.host || boot.is_empty() || self.boot.is_empty() {
            return false;
        }
        if boot != self.boot {
            return true;
        }
        if pid == self.pid as i64 {
            return false;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state …`: no such process, a zombie, or another program.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            return true;
        };
        let comm = head.split_once('(').map_or("", |(_, c)| c);
        let state = rest.split_whitespace().next().unwrap_or("");
        !comm.starts_with("ggp") || state == "Z" || state == "X"
    }
}

/// Writes a line to standard error, for the operator; a closed stream is not an error.
pub(crate) fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The seeded random number generator of a tournament's `k`th draw.
fn rng(seed: u64, k: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Every ordered choice of `k` distinct indices below `n`, in lexicographic order.
fn permutations(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn extend(n: usize, k: usize, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == k {
            out.push(prefix.clone());
            return;
        }
        for i in 0..n {
            if !prefix.contains(&i) {
                prefix.push(i);
                extend(n, k, prefix, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    extend(n, k, &mut Vec::new(), &mut out);
    out
}

/// How many matches a round robin schedules per round: the sum over the games of
/// n! / (n - k)!, saturating.
pub fn round_robin_size(players: usize, games: &[TournamentGame]) -> usize {
    games
        .iter()
        .map(|g| {
            (0..g.seats).fold(1usize, |acc, i| {
                acc.saturating_mul(players.saturating_sub(i))
            })
        })
        .fold(0usize, usize::saturating_add)
}

/// The rows a tournament schedules when it is made: `(round, game, players, seed)`.
pub fn schedule(
    format: Format,
    games: &[TournamentGame],
    players: &[String],
    rounds: u64,
    seed: u64,
) -> Vec<(u64, usize, Vec<String>, u64)> {
    let mut out = Vec::new();
    let mut draw = rng(seed, 0);
    for round in 1..=rounds {
        for (g, game) in games.iter().enumerate() {
            match format {
                Format::RoundRobin => {
                    for seats in permutations(players.len(), game.seats) {
                        let names = seats.iter().map(|&i| players[i].clone()).collect();
                        out.push((round, g, names, draw.random()));
                    }
                }
                Format::Random => {
                    let mut order: Vec<&String> = players.iter().collect();
                    order.shuffle(&mut draw);
                    for group in order.chunks_exact(game.seats.max(1)) {
                        let names = group.iter().map(|s| (*s).clone()).collect();
                        out.push((round, g, names, draw.random()));
                    }
                }
                Format::Continuous => {}
            }
        }
    }
    out
}

/// Checks a request against the games and players there are, and makes the tournament and
/// its schedule.
pub async fn create(gm: &Arc<Gamemaster>, req: TournamentRequest) -> Result<Tournament, Error> {
    let format = Format::parse(req.format.as_deref().unwrap_or(""))?;
    let name = req
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    if let Some(n) = &name
        && (n.chars().count() > 100 || n.chars().any(char::is_control))
    {
        return Err(Error::BadRequest(
            "a tournament's name has at most 100 characters and no control characters".into(),
        ));
    }
    if req.games.is_empty() {
        return Err(Error::BadRequest(
            "a tournament needs at least one game".into(),
        ));
    }
    if req.games.len() > MAX_GAMES {
        return Err(Error::BadRequest(format!(
            "{} games: a tournament has at most {MAX_GAMES}",
            req.games.len()
        )));
    }
    if req.players.len() > MAX_PLAYERS {
        return Err(Error::BadRequest(format!(
            "{} players: a tournament has at most {MAX_PLAYERS}",
            req.players.len()
        )));
    }
    let rounds = req.rounds.unwrap_or(1);
    if format != Format::Continuous && !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(Error::BadRequest(format!(
            "{rounds} rounds: give 1 to {MAX_ROUNDS}"
        )));
    }
    for (clock, what) in [(req.startclock, "startclock"), (req.playclock, "playclock")] {
        if clock > ggp_protocol::MAX_CLOCK_SECS {
            return Err(Error::BadRequest(format!(
                "the {what} is {clock} seconds: at most a day ({}) is allowed",
                ggp_protocol::MAX_CLOCK_SECS
            )));
        }
    }
    // Players: built in, or registered (by their names as registered); each once.
    let registered = gm.db.players().await?;
    let mut players: Vec<String> = Vec::new();
    for given in &req.players {
        let given = given.trim();
        let name = if given.eq_ignore_ascii_case(HUMAN) {
            return Err(Error::BadRequest(
                "`human` cannot play in a tournament: its matches are played by programs".into(),
            ));
        } else if let Some(kind) = StrategyKind::parse(given) {
            kind.name().to_string()
        } else if let Some(p) = registered
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(given))
        {
            p.name.clone()
        } else {
            return Err(Error::BadRequest(format!(
                "`{}` is not a player: use a registered player's name or {}",
                given.chars().take(100).collect::<String>(),
                StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
            )));
        };
        if players.iter().any(|p| p.eq_ignore_ascii_case(&name)) {
            return Err(Error::BadRequest(format!(
                "`{name}` is given twice: each player is in a tournament once"
            )));
        }
        players.push(name);
    }
    // Games: their latest versions, playable, with no more seats than players.
    let mut games: Vec<TournamentGame> = Vec::new();
    for key in &req.games {
        let version = gm.db.version(key.trim(), None).await?;
        if let Some(why) = version.engine.as_ref().and_then(Verdict::unplayable) {
            return Err(Error::Conflict(format!(
                "the game `{}` (version {}) cannot be played: {why}",
                version.key, version.version
            )));
        }
        if games.iter().any(|g| g.id == version.id) {
            return Err(Error::BadRequest(format!(
                "the game `{}` is given twice",
                version.key
            )));
        }
        let chance = crate::games::random_role(&version.roles);
        let seats = version.roles.len() - usize::from(chance.is_some());
        if seats > players.len() {
            return Err(Error::BadRequest(format!(
                "the game `{}` has {seats} roles to seat, but the tournament has {} player{}",
                version.key,
                players.len(),
                if players.len() == 1 { "" } else { "s" }
            )));
        }
        games.push(TournamentGame {
            id: version.id,
            key: version.key.clone(),
            version: version.version,
            seats,
        });
    }
    if players.is_empty() {
        return Err(Error::BadRequest(
            "a tournament needs at least one player".into(),
        ));
    }
    let size = match format {
        Format::RoundRobin => {
            round_robin_size(players.len(), &games).saturating_mul(rounds as usize)
        }
        Format::Random => games
            .iter()
            .map(|g| players.len() / g.seats.max(1))
            .sum::<usize>()
            .saturating_mul(rounds as usize),
        Format::Continuous => 0,
    };
    if size > MAX_SCHEDULE {
        return Err(Error::BadRequest(format!(
            "the tournament would schedule {size} matches: at most {MAX_SCHEDULE} (fewer rounds, players or games)"
        )));
    }
    let seed = req.seed.unwrap_or_else(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
        u64::from_le_bytes(bytes) >> 1
    }) & (i64::MAX as u64);
    let rows = schedule(format, &games, &players, rounds, seed);
    let name = name.unwrap_or_else(|| {
        format!(
            "{} {}",
            games
                .iter()
                .map(|g| g.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            utc_day(now_ms())
        )
    });
    let exclusive: HashSet<String> = players
        .iter()
        .filter(|p| StrategyKind::parse(p).is_none())
        .cloned()
        .collect();
    let (start_clock, play_clock) = (req.startclock, req.playclock);
    let version_ids: Vec<i64> = games.iter().map(|g| g.id).collect();
    let names = players.clone();
    let id = gm
        .db
        .write(move |conn| {
            let id = conn.query_row(
                "INSERT INTO tournaments (name, format, versions, players, start_clock, play_clock,
                                          rounds, seed, status, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9) RETURNING id",
                params![
                    name,
                    format.name(),
                    json(&version_ids),
                    json(&names),
                    start_clock as i64,
                    play_clock as i64,
                    rounds as i64,
                    seed as i64,
                    now_ms()
                ],
                |r| r.get::<_, i64>(0),
            )?;
            for (round, g, seated, seed) in &rows {
                insert_scheduled(conn, id, *round, version_ids[*g], seated, *seed, &exclusive)?;
            }
            Ok(id)
        })
        .await?;
    gm.schedule_changed.notify_waiters();
    tournament(&gm.db, id).await
}

fn insert_scheduled(
    conn: &Conn,
    tournament: i64,
    round: u64,
    version: i64,
    players: &[String],
    seed: u64,
    exclusive: &HashSet<String>,
) -> sql::Result<()> {
    let row: i64 = conn.query_row(
        "INSERT INTO scheduled (tournament_ref, round, game_version_ref, players, seed, status)
         VALUES (?1, ?2, ?3, ?4, ?5, 'queued') RETURNING id",
        params![
            tournament,
            round as i64,
            version,
            json(&players),
            (seed & i64::MAX as u64) as i64
        ],
        |r| r.get(0),
    )?;
    for p in players {
        conn.prepare_cached(
            "INSERT INTO scheduled_seats (scheduled_ref, player, exclusive) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![row, p, i64::from(exclusive.contains(p))])?;
    }
    Ok(())
}

/// `YYYY-MM-DD` of a time in milliseconds.
fn utc_day(ms: i64) -> String {
    ggp_match::utc_date(ms.max(0) as u64)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

const TOURNAMENT_COLUMNS: &str = "id, name, format, versions, players, start_clock, play_clock, rounds, seed, status, created, finished";

struct TournamentRow {
    id: i64,
    name: String,
    format: String,
    versions: Vec<i64>,
    players: Vec<String>,
    start_clock: i64,
    play_clock: i64,
    rounds: i64,
    seed: i64,
    status: String,
    created: i64,
    finished: Option<i64>,
}

fn tournament_row(r: &Row) -> sql::Result<TournamentRow> {
    Ok(TournamentRow {
        id: r.get(0)?,
        name: r.get(1)?,
        format: r.get(2)?,
        versions: from_json(&r.get::<_, String>(3)?),
        players: from_json(&r.get::<_, String>(4)?),
        start_clock: r.get(5)?,
        play_clock: r.get(6)?,
        rounds: r.get(7)?,
        seed: r.get(8)?,
        status: r.get(9)?,
        created: r.get(10)?,
        finished: r.get(11)?,
    })
}

fn complete(conn: &Conn, row: TournamentRow) -> Result<Tournament, Error> {
    let mut games = Vec::new();
    for id in &row.versions {
        let (key, version, roles): (String, i64, String) = conn
            .query_row(
                "SELECT g.key, v.version, v.roles FROM game_versions v
                 JOIN games g ON v.game_ref = g.id WHERE v.id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql)?;
        let roles: Vec<String> = from_json(&roles);
        let seats = roles.len() - usize::from(crate::games::random_role(&roles).is_some());
        games.push(TournamentGame {
            id: *id,
            key,
            version,
            seats,
        });
    }
    let mut progress = Progress::default();
    let mut st = conn
        .prepare_cached(
            "SELECT status, count(*) FROM scheduled WHERE tournament_ref = ?1 GROUP BY status",
        )
        .map_err(sql)?;
    let counts = st
        .query_map([row.id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })
        .map_err(sql)?;
    for c in counts {
        let (status, n) = c.map_err(sql)?;
        let n = n as u64;
        match status.as_str() {
            "queued" => progress.queued = n,
            "claimed" => progress.playing = n,
            "done" => progress.done = n,
            _ => progress.failed = n,
        }
    }
    Ok(Tournament {
        id: row.id,
        name: row.name,
        format: Format::parse(&row.format)?,
        games,
        players: row.players,
        start_clock: row.start_clock as u64,
        play_clock: row.play_clock as u64,
        rounds: row.rounds as u64,
        seed: row.seed as u64,
        status: row.status,
        created: row.created,
        finished: row.finished,
        progress,
    })
}

/// A tournament by id.
pub async fn tournament(db: &Db, id: i64) -> Result<Tournament, Error> {
    db.read(move |db| {
        let conn = db.connection();
        let row = conn
            .query_row(
                &format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?1"),
                [id],
                tournament_row,
            )
            .optional()
            .map_err(sql)?
            .ok_or_else(|| Error::NotFound(format!("there is no tournament {id}")))?;
        complete(conn, row)
    })
    .await
}

/// Every tournament, newest first.
pub async fn tournaments(db: &Db) -> Result<Vec<Tournament>, Error> {
    db.read(move |db| {
        let conn = db.connection();
        let mut st = conn
            .prepare(&format!(
                "SELECT {TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id DESC LIMIT 500"
            ))
            .map_err(sql)?;
        let rows = st
            .query_map((), tournament_row)
            .map_err(sql)?
            .collect::<sql::Result<Vec<_>>>()
            .map_err(sql)?;
        rows.into_iter().map(|r| complete(conn, r)).collect()
    })
    .await
}

/// A tournament's scheduled matches, in schedule order.
pub async fn scheduled_matches(db: &Db, id: i64) -> Result<Vec<ScheduledMatch>, Error> {
    db.read(move |db| {
        let conn = db.connection();
        let mut st = conn
            .prepare(
                "SELECT s.id, s.round, g.key, v.version, s.players, s.status, s.match_id,
                        m.status, m.goal_values, s.attempts, s.failure, s.server_ref
                 FROM scheduled s
                 JOIN game_versions v ON s.game_version_ref = v.id
                 JOIN games g ON v.game_ref = g.id
                 LEFT JOIN matches m ON m.match_id = s.match_id
                 WHERE s.tournament_ref = ?1 ORDER BY s.id",
            )
            .map_err(sql)?;
        st.query_map([id], |r| {
            Ok(ScheduledMatch {
                id: r.get(0)?,
                round: r.get::<_, i64>(1)? as u64,
                game: r.get(2)?,
                version: r.get(3)?,
                players: from_json(&r.get::<_, String>(4)?),
                status: r.get(5)?,
                match_id: r.get(6)?,
                match_status: r.get(7)?,
                goals: r
                    .get::<_, Option<String>>(8)?
                    .map(|g| from_json(&g))
                    .unwrap_or_default(),
                attempts: r.get::<_, i64>(9)? as u64,
                failure: r.get(10)?,
                server: r.get(11)?,
            })
        })
        .map_err(sql)?
        .collect::<sql::Result<Vec<_>>>()
        .map_err(sql)
    })
    .await
}

/// Pauses (no new match of it is started; those being played go on), resumes or ends (a
/// continuous tournament; the others end when their schedule is played) a tournament.
pub async fn set_status(gm: &Gamemaster, id: i64, action: &str) -> Result<Tournament, Error> {
    let current = tournament(&gm.db, id).await?;
    let (from, to): (&[&str], &str) = match action {
        "pause" => (&["running"], "paused"),
        "resume" => (&["paused"], "running"),
        "end" => (&["running", "paused"], "finished"),
        _ => {
            return Err(Error::NotFound(format!(
                "`{}` is not something a tournament does: pause, resume or end",
                action.chars().take(50).collect::<String>()
            )));
        }
    };
    if !from.contains(&current.status.as_str()) {
        return Err(Error::Conflict(format!(
            "the tournament {id} is {}: it cannot {action}",
            current.status
        )));
    }
    let to = to.to_string();
    let from: Vec<String> = from.iter().map(|f| f.to_string()).collect();
    let changed = gm
        .db
        .write(move |conn| {
            // The status checked again in the write: another server may have just ended it.
            let changed = conn.execute(
                "UPDATE tournaments SET status = ?1,
                        finished = CASE WHEN ?1 = 'finished' THEN ?2 ELSE finished END
                 WHERE id = ?3 AND (status = ?4 OR status = ?5)",
                params![
                    to,
                    now_ms(),
                    id,
                    from[0],
                    from.get(1).unwrap_or(&from[0])
                ],
            )?;
            if changed == 1 && to == "finished" {
                // Whatever is left unplayed will not be.
                conn.execute(
                    "UPDATE scheduled SET status = 'failed', failure = 'the tournament was ended first'
                     WHERE tournament_ref = ?1 AND status = 'queued'",
                    [id],
                )?;
            }
            Ok(changed == 1)
        })
        .await?;
    if !changed {
        let now = tournament(&gm.db, id).await?;
        return Err(Error::Conflict(format!(
            "the tournament {id} is {}: it cannot {action}",
            now.status
        )));
    }
    gm.schedule_changed.notify_waiters();
    tournament(&gm.db, id).await
}

/// Adds this process to `servers`.
pub async fn register(db: &Db, kind: &'static str, host: &Host) -> Result<i64, Error> {
    let host = host.clone();
    db.write(move |conn| {
        let now = db_now(conn)?;
        conn.query_row(
            "INSERT INTO servers (kind, host, boot, pid, started, heartbeat)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5) RETURNING id",
            params![kind, host.host, host.boot, host.pid as i64, now],
            |r| r.get(0),
        )
    })
    .await
}

/// The database's time in milliseconds since the Unix epoch: heartbeats are written and
/// judged by one clock, whichever machines the servers run on.
fn db_now(conn: &Conn) -> sql::Result<i64> {
    conn.query_row(
        conn.pick(
            "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
            "SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
        ),
        (),
        |r| r.get(0),
    )
}

/// Beats this server's heart. `true` if another server had taken it for gone (its heartbeat
/// was late): that one has recorded its running matches as aborted and queued its claims
/// again; this server is alive again from now on.
pub async fn heartbeat(db: &Db, id: i64) -> Result<bool, Error> {
    db.write(move |conn| {
        let now = db_now(conn)?;
        if conn.execute(
            "UPDATE servers SET heartbeat = ?1 WHERE id = ?2 AND stopped IS NULL",
            params![now, id],
        )? == 1
        {
            return Ok(false);
        }
        conn.execute(
            "UPDATE servers SET heartbeat = ?1, stopped = NULL WHERE id = ?2",
            params![now, id],
        )?;
        Ok(true)
    })
    .await
}

/// Marks this server stopped, and queues again the scheduled matches it claimed and did not
/// finish (its matches were stopped and recorded as aborted).
pub async fn unregister(db: &Db, id: i64) -> Result<(), Error> {
    db.write(move |conn| {
        conn.execute(
            "UPDATE servers SET stopped = ?1 WHERE id = ?2",
            params![now_ms(), id],
        )?;
        conn.execute(
            "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
             WHERE server_ref = ?1 AND status = 'claimed'",
            [id],
        )?;
        Ok(())
    })
    .await
}

/// Finds the servers that are gone (heartbeat older than `dead_after`, or on this machine, a
/// process that is no longer there) and cleans up after them in one transaction: their
/// running matches recorded as aborted with their steps, matches they had not started
/// failed, their claimed scheduled matches queued again. Served matches of no server (from
/// before servers were recorded) are theirs too.
pub async fn reap(
    db: &Db,
    me: Option<i64>,
    host: &Host,
    dead_after: Duration,
) -> Result<Reaped, Error> {
    let host = host.clone();
    db.write(move |conn| {
        let now = db_now(conn)?;
        let stale = now - dead_after.as_millis() as i64;
        let mut st = conn.prepare(
            "SELECT id, host, boot, pid, heartbeat FROM servers WHERE stopped IS NULL",
        )?;
        let rows = st
            .query_map((), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })?
            .collect::<sql::Result<Vec<_>>>()?;
        drop(st);
        let gone: Vec<i64> = rows
            .into_iter()
            .filter(|(id, h, b, pid, beat)| {
                Some(*id) != me && (*beat < stale || host.certainly_gone(h, b, *pid))
            })
            .map(|r| r.0)
            .collect();
        let mut reaped = Reaped::default();
        let when = ggp_match::utc_date(now as u64);
        for id in &gone {
            conn.execute(
                "UPDATE servers SET stopped = ?1 WHERE id = ?2 AND stopped IS NULL",
                params![now, id],
            )?;
            // A claim whose match finished before the server went (gone between recording
            // the match's end and the row's) was played: done, not played a second time.
            let finished: Vec<i64> = conn
                .prepare(
                    "SELECT DISTINCT q.tournament_ref FROM scheduled q
                     WHERE q.server_ref = ?1 AND q.status = 'claimed' AND EXISTS (
                         SELECT 1 FROM served_matches s JOIN matches m USING (match_id)
                         WHERE s.scheduled_ref = q.id AND m.status = 'finished')",
                )?
                .query_map([id], |r| r.get::<_, i64>(0))?
                .collect::<sql::Result<_>>()?;
            reaped.done += conn.execute(
                "UPDATE scheduled SET status = 'done'
                 WHERE server_ref = ?1 AND status = 'claimed' AND EXISTS (
                     SELECT 1 FROM served_matches s JOIN matches m USING (match_id)
                     WHERE s.scheduled_ref = scheduled.id AND m.status = 'finished')",
                [id],
            )? as u64;
            for tournament in finished {
                finish_if_played(conn, tournament, now)?;
            }
            reaped.requeued += conn.execute(
                "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
                 WHERE server_ref = ?1 AND status = 'claimed'",
                [id],
            )? as u64;
        }
        reaped.servers = gone.clone();
        // Their matches (and any of no server at all) that are not over.
        let mut st = conn.prepare(
            "SELECT s.match_id, s.server_ref, m.status FROM served_matches s
             LEFT JOIN matches m USING (match_id)
             LEFT JOIN servers v ON v.id = s.server_ref
             WHERE s.failure IS NULL AND (m.status IS NULL OR m.status = 'unfinished')
               AND (s.server_ref IS NULL OR v.stopped IS NOT NULL)",
        )?;
        let open = st
            .query_map((), |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?
            .collect::<sql::Result<Vec<_>>>()?;
        drop(st);
        for (match_id, server, status) in open {
            let reason = match (server, me) {
                (Some(s), Some(m)) => format!(
                    "the server stopped while the match was running (server {s}; noticed by server {m} at {when} UTC)"
                ),
                (Some(s), None) => format!(
                    "the server stopped while the match was running (server {s}; noticed when a server started at {when} UTC)"
                ),
                (None, _) => format!(
                    "the server stopped while the match was running (noticed when it started again at {when} UTC)"
                ),
            };
            if status.is_some() {
                if ggp_match::abort_unfinished(conn, &match_id, &reason)? {
                    reaped.aborted.push(match_id);
                }
            } else {
                conn.execute(
                    "UPDATE served_matches SET failure = ?1 WHERE match_id = ?2",
                    params!["the server stopped before the match started", match_id],
                )?;
                reaped.never_started.push(match_id);
            }
        }
        Ok(reaped)
    })
    .await
}

/// Claims the next scheduled match this server may play: the oldest queued match of a
/// running tournament none of whose registered players is in a match being played. A
/// continuous tournament with none queued gets one first, if enough of its players are idle.
pub async fn claim(db: &Db, me: i64, only: Option<i64>) -> Result<Option<Claim>, Error> {
    db.write(move |conn| {
        let now = now_ms();
        refill_continuous(conn)?;
        let found = match conn.dialect() {
            Dialect::Sqlite => conn
                .query_row(&format!("{CLAIMABLE} ORDER BY s.id LIMIT 1"), [only], |r| {
                    r.get::<_, i64>(0)
                })
                .optional()?,
            Dialect::Postgres => claim_postgres(conn, only)?,
        };
        let Some(row) = found else {
            return Ok(None);
        };
        conn.execute(
            "UPDATE scheduled SET status = 'claimed', server_ref = ?1, claimed = ?2,
                    attempts = attempts + 1
             WHERE id = ?3",
            params![me, now, row],
        )?;
        conn.query_row(
            "SELECT s.id, s.tournament_ref, g.key, v.version, s.players, s.seed,
                    t.start_clock, t.play_clock
             FROM scheduled s JOIN tournaments t ON t.id = s.tournament_ref
             JOIN game_versions v ON v.id = s.game_version_ref
             JOIN games g ON g.id = v.game_ref WHERE s.id = ?1",
            [row],
            |r| {
                Ok(Claim {
                    row: r.get(0)?,
                    tournament: r.get(1)?,
                    key: r.get(2)?,
                    version: r.get(3)?,
                    players: from_json(&r.get::<_, String>(4)?),
                    seed: r.get::<_, i64>(5)? as u64,
                    start_clock: r.get::<_, i64>(6)? as u64,
                    play_clock: r.get::<_, i64>(7)? as u64,
                })
            },
        )
        .map(Some)
    })
    .await
}

/// The queued rows of running tournaments (`?1`: of this one only, if not NULL) none of whose
/// registered players is in a claimed row.
const CLAIMABLE: &str = "SELECT s.id FROM scheduled s JOIN tournaments t ON t.id = s.tournament_ref
     WHERE s.status = 'queued' AND t.status = 'running'
       AND (?1 IS NULL OR t.id = ?1)
       AND NOT EXISTS (
           SELECT 1 FROM scheduled_seats q
           JOIN scheduled_seats c ON c.player = q.player AND c.exclusive = 1
           JOIN scheduled b ON b.id = c.scheduled_ref AND b.status = 'claimed'
           WHERE q.scheduled_ref = s.id AND q.exclusive = 1)";

/// Candidates looked at per claim on PostgreSQL before giving up for now.
const PG_CANDIDATES: usize = 8;

/// PostgreSQL's claim, for servers claiming at the same moment without waiting on each other:
/// the oldest claimable rows are locked with `FOR UPDATE SKIP LOCKED` (rows another server is
/// claiming are passed over, not waited for); then each registered player of a candidate is
/// locked for the rest of the transaction with a non-blocking advisory lock, so that two
/// servers never seat one player in two matches (a player another server is deciding about
/// makes the candidate wait for a later claim), and the candidate is checked again once the
/// locks are held (a claim committed meanwhile is seen by then).
fn claim_postgres(conn: &Conn, only: Option<i64>) -> sql::Result<Option<i64>> {
    let candidates: Vec<i64> = conn
        .prepare_cached(&format!(
            "{CLAIMABLE} ORDER BY s.id LIMIT {PG_CANDIDATES} FOR UPDATE OF s SKIP LOCKED"
        ))?
        .query_map([only], |r| r.get::<_, i64>(0))?
        .collect::<sql::Result<_>>()?;
    'candidates: for row in candidates {
        let players: Vec<String> = conn
            .prepare_cached(
                "SELECT player FROM scheduled_seats WHERE scheduled_ref = ?1 AND exclusive = 1
                 ORDER BY player",
            )?
            .query_map([row], |r| r.get::<_, String>(0))?
            .collect::<sql::Result<_>>()?;
        for p in &players {
            let locked: bool = conn.query_row(
                "SELECT pg_try_advisory_xact_lock(CAST(?1 AS integer), hashtext(?2))",
                params![PG_PLAYER_LOCKS, p],
                |r| r.get(0),
            )?;
            if !locked {
                continue 'candidates;
            }
        }
        let still: Option<i64> = conn
            .query_row(
                &format!("{CLAIMABLE} AND s.id = ?2"),
                params![only, row],
                |r| r.get(0),
            )
            .optional()?;
        if still.is_some() {
            return Ok(Some(row));
        }
    }
    Ok(None)
}

/// The first key of the advisory locks on players (PostgreSQL), and of the one on refilling
/// continuous tournaments.
const PG_PLAYER_LOCKS: i32 = 0x6767_7001;
const PG_REFILL_LOCK: i64 = 0x6767_7002;
/// Added to a tournament's id: the advisory lock held while a server records that one of its
/// matches ended (PostgreSQL).
const PG_TOURNAMENT_LOCKS: i64 = 0x6767_7003 << 32;

/// For each running continuous tournament with nothing queued: a match of a game drawn from
/// its set among idle players drawn at random (a player is idle when no match of the
/// tournament being played has it, and, registered, none of another tournament either).
fn refill_continuous(conn: &Conn) -> sql::Result<()> {
    refill(conn, false)
}

fn refill(conn: &Conn, refilling: bool) -> sql::Result<()> {
    let mut st = conn.prepare(
        "SELECT t.id, t.versions, t.players, t.seed,
                (SELECT count(*) FROM scheduled s WHERE s.tournament_ref = t.id)
         FROM tournaments t
         WHERE t.format = 'continuous' AND t.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM scheduled s
                           WHERE s.tournament_ref = t.id AND s.status = 'queued')",
    )?;
    let due = st
        .query_map((), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                from_json::<Vec<i64>>(&r.get::<_, String>(1)?),
                from_json::<Vec<String>>(&r.get::<_, String>(2)?),
                r.get::<_, i64>(3)? as u64,
                r.get::<_, i64>(4)? as u64,
            ))
        })?
        .collect::<sql::Result<Vec<_>>>()?;
    drop(st);
    if due.is_empty() {
        return Ok(());
    }
    if conn.dialect() == Dialect::Postgres && !refilling {
        // Servers refill one at a time (then look again: another may have just refilled); one
        // that finds another refilling leaves it to that one, rather than wait holding locks.
        let mine: bool = conn.query_row(
            "SELECT pg_try_advisory_xact_lock(?1)",
            [PG_REFILL_LOCK],
            |r| r.get(0),
        )?;
        return if mine { refill(conn, true) } else { Ok(()) };
    }
    for (id, versions, players, seed, made) in due {
        if versions.is_empty() {
            continue;
        }
        let mut busy: HashSet<String> = HashSet::new();
        let mut st = conn.prepare_cached(
            "SELECT c.player FROM scheduled_seats c JOIN scheduled b ON b.id = c.scheduled_ref
             WHERE b.status = 'claimed' AND (b.tournament_ref = ?1 OR c.exclusive = 1)",
        )?;
        for p in st.query_map([id], |r| r.get::<_, String>(0))? {
            busy.insert(p?);
        }
        drop(st);
        let mut draw = rng(seed, made + 1);
        let version = versions[draw.random_range(0..versions.len())];
        let roles: String = conn.query_row(
            "SELECT roles FROM game_versions WHERE id = ?1",
            [version],
            |r| r.get(0),
        )?;
        let roles: Vec<String> = from_json(&roles);
        let seats = roles.len() - usize::from(crate::games::random_role(&roles).is_some());
        let mut idle: Vec<String> = players.into_iter().filter(|p| !busy.contains(p)).collect();
        if seats == 0 || idle.len() < seats {
            continue;
        }
        idle.shuffle(&mut draw);
        idle.truncate(seats);
        let exclusive: HashSet<String> = idle
            .iter()
            .filter(|p| StrategyKind::parse(p).is_none())
            .cloned()
            .collect();
        insert_scheduled(
            conn,
            id,
            made + 1,
            version,
            &idle,
            draw.random(),
            &exclusive,
        )?;
    }
    Ok(())
}

/// How a scheduled match's match ended.
#[derive(Clone)]
pub enum Ended {
    /// It was played (finished, or aborted by its game: the step limit, rules that failed).
    Played,
    /// It was stopped before its end (the server is stopping): to be played again.
    Interrupted,
    /// It could not be started.
    Failed(String),
}

/// Records how a scheduled match ended; ends the tournament when nothing is left to play.
pub async fn ended(db: &Db, me: Option<i64>, row: i64, how: Ended) -> Result<(), Error> {
    db.write(move |conn| {
        if conn.dialect() == Dialect::Postgres {
            // Servers ending a tournament's last matches at the same moment take turns, so
            // that the last one sees every other's end (SQLite's writes take turns anyway).
            conn.execute(
                "SELECT pg_advisory_xact_lock(?1 + (SELECT tournament_ref FROM scheduled
                                                    WHERE id = ?2))",
                params![PG_TOURNAMENT_LOCKS, row],
            )?;
        }
        match &how {
            // Only this server's claim: a row queued again while this server was taken for
            // gone may be another's now.
            Ended::Played => conn.execute(
                "UPDATE scheduled SET status = 'done'
                 WHERE id = ?1 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM ?2",
                params![row, me],
            )?,
            Ended::Interrupted => conn.execute(
                "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
                 WHERE id = ?1 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM ?2",
                params![row, me],
            )?,
            Ended::Failed(why) => conn.execute(
                "UPDATE scheduled SET status = 'failed', failure = ?1
                 WHERE id = ?2 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM ?3",
                params![why, row, me],
            )?,
        };
        let tournament: i64 = conn.query_row(
            "SELECT tournament_ref FROM scheduled WHERE id = ?1",
            [row],
            |r| r.get(0),
        )?;
        finish_if_played(conn, tournament, now_ms())?;
        Ok(())
    })
    .await
}

/// Ends a tournament (not a continuous one) none of whose scheduled matches is left to play.
fn finish_if_played(conn: &Conn, tournament: i64, now: i64) -> sql::Result<()> {
    conn.execute(
        "UPDATE tournaments SET status = 'finished', finished = ?1
         WHERE id = ?2 AND format != 'continuous' AND status != 'finished'
           AND NOT EXISTS (SELECT 1 FROM scheduled s
                           WHERE s.tournament_ref = tournaments.id
                             AND s.status IN ('queued', 'claimed'))",
        params![now, tournament],
    )?;
    Ok(())
}

/// Plays scheduled matches (of every tournament, or of `only`) while the server runs: claims
/// one whenever fewer than its capacity are being played, and again when one ends or the
/// schedule changes (every `poll` otherwise, for other servers' changes).
pub async fn work(gm: Arc<Gamemaster>, only: Option<i64>) {
    let Some(me) = gm.server_id() else {
        return;
    };
    let capacity = gm.config.capacity;
    loop {
        let changed = gm.schedule_changed.notified();
        let ended = gm.ended.notified();
        if gm.stopping() {
            return;
        }
        // Claimed only while a match could start here (a slot, the least memory a match
        // takes): otherwise the schedule keeps it for this server later, or another.
        while gm.scheduled_running.load(Ordering::SeqCst) < capacity
            && !gm.stopping()
            && gm.admission.has_room(crate::limits::MIN_MATCH_MEMORY)
        {
            let started = std::time::Instant::now();
            let claimed = claim(&gm.db, me, only).await;
            gm.stats.claimed(started.elapsed());
            match claimed {
                Ok(Some(c)) => {
                    if !start(&gm, c).await {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    log(&format!(
                        "ggp serve: claiming a scheduled match failed: {}",
                        e.message()
                    ));
                    break;
                }
            }
        }
        tokio::select! {
            () = changed => {}
            () = ended => {}
            () = tokio::time::sleep(gm.config.poll) => {}
        }
    }
}

/// Starts a claimed match; a match that cannot start is recorded as failed with why, or, when
/// the server has not the room for it now (its limit of matches, its memory), queued again.
/// Whether to go on claiming.
async fn start(gm: &Arc<Gamemaster>, c: Claim) -> bool {
    gm.scheduled_running.fetch_add(1, Ordering::SeqCst);
    let req = MatchRequest {
        game: c.key.clone(),
        version: Some(c.version),
        players: c.players.clone(),
        startclock: c.start_clock,
        playclock: c.play_clock,
        seed: Some(c.seed),
        delay: 0,
        scheduled: Some(c.row),
    };
    match live::create(gm, req).await {
        Ok(_) => true,
        Err(e) => {
            gm.scheduled_running.fetch_sub(1, Ordering::SeqCst);
            let no_room = matches!(e, crate::error::Error::Unavailable(_));
            let how = if gm.stopping() || no_room {
                Ended::Interrupted
            } else {
                Ended::Failed(e.message().to_string())
            };
            if let Err(e2) = ended(&gm.db, gm.server_id(), c.row, how).await {
                log(&format!(
                    "ggp serve: recording that scheduled match {} could not start failed: {}",
                    c.row,
                    e2.message()
                ));
            }
            !no_room
        }
    }
}

/// Called when a scheduled match's match has ended (from `live`).
pub async fn match_ended(gm: &Gamemaster, row: i64, completed: bool, failure: Option<String>) {
    gm.scheduled_running.fetch_sub(1, Ordering::SeqCst);
    let how = match failure {
        Some(why) => Ended::Failed(why),
        None if completed => Ended::Played,
        None if gm.stopping() => Ended::Interrupted,
        None => Ended::Played,
    };
    // Tried again after a failure (a lock another server held too long, a deadlock the
    // database broke): a row left claimed by a live server would never be played again.
    for attempt in 1..=5u64 {
        match ended(&gm.db, gm.server_id(), row, how.clone()).await {
            Ok(()) => break,
            Err(e) => {
                log(&format!(
                    "ggp serve: recording the end of scheduled match {row} failed (attempt {attempt} of 5): {}",
                    e.message()
                ));
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
        }
    }
    gm.schedule_changed.notify_waiters();
}

/// Beats the heart and reaps gone servers until the server stops.
pub async fn keep_alive(gm: Arc<Gamemaster>) {
    let Some(me) = gm.server_id() else {
        return;
    };
    let host = Host::this();
    let mut tick = tokio::time::interval(gm.config.heartbeat);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if gm.stopping() {
            return;
        }
        match heartbeat(&gm.db, me).await {
            Ok(true) => log(&format!(
                "ggp serve: server {me} was taken for gone by another server (its heartbeat was late): its running matches were recorded as aborted and its claims queued again; it goes on from here"
            )),
            Ok(false) => {}
            Err(e) => log(&format!("ggp serve: the heartbeat failed: {}", e.message())),
        }
        match reap(&gm.db, Some(me), &host, gm.config.dead_after).await {
            Ok(r) if !r.servers.is_empty() => {
                log(&format!(
                    "ggp serve: server{} {} gone: {} match{} recorded as aborted, {} scheduled match{} queued again, {} finished before {} went",
                    if r.servers.len() == 1 { "" } else { "s" },
                    r.servers
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.aborted.len(),
                    if r.aborted.len() == 1 { "" } else { "es" },
                    r.requeued,
                    if r.requeued == 1 { "" } else { "es" },
                    r.done,
                    if r.servers.len() == 1 { "it" } else { "they" },
                ));
                gm.schedule_changed.notify_waiters();
            }
            Ok(_) => {}
            Err(e) => log(&format!("ggp serve: reaping failed: {}", e.message())),
        }
    }
}

/// A finished served match, as standings and ratings see it: its seated players (not the
/// manager's GDL-II `random` seat) in seat order, their goals, and whether each failed.
#[derive(Clone, Debug, Serialize)]
pub struct Played {
    #[serde(rename = "matchId")]
    pub match_id: String,
    pub game: String,
    pub players: Vec<String>,
    pub goals: Vec<u8>,
    pub failed: Vec<bool>,
    /// When it ended (milliseconds since the epoch).
    pub ended: i64,
}

impl Played {
    pub fn result(&self) -> crate::ratings::MatchResult<'_> {
        crate::ratings::MatchResult {
            game: &self.game,
            players: &self.players,
            goals: &self.goals,
            failed: &self.failed,
        }
    }
}

/// The finished served matches, in the order they ended: a tournament's (every attempt that
/// finished), or with `None` every served match's.
pub async fn played(db: &Db, tournament: Option<i64>) -> Result<Vec<Played>, Error> {
    db.read(move |db| {
        let conn = db.connection();
        let mut st = conn
            .prepare(
                "SELECT m.id, m.match_id, g.key, m.goal_values, m.start_errors, m.end_time
                 FROM served_matches s
                 JOIN matches m USING (match_id)
                 JOIN game_versions v ON v.id = s.game_version_ref
                 JOIN games g ON g.id = v.game_ref
                 LEFT JOIN scheduled q ON q.id = s.scheduled_ref
                 WHERE m.status = 'finished' AND (?1 IS NULL OR q.tournament_ref = ?1)
                 ORDER BY m.end_time, m.id",
            )
            .map_err(sql)?;
        let rows = st
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    from_json::<Vec<u8>>(&r.get::<_, String>(3)?),
                    from_json::<Vec<String>>(&r.get::<_, String>(4)?),
                    r.get::<_, Option<i64>>(5)?.unwrap_or_default(),
                ))
            })
            .map_err(sql)?
            .collect::<sql::Result<Vec<_>>>()
            .map_err(sql)?;
        // The seats and the steps' errors of all of them, in two queries (not two per match:
        // a tournament's page asks for its standings every few seconds).
        let filter = "FROM served_matches s
             JOIN matches m USING (match_id)
             LEFT JOIN scheduled q ON q.id = s.scheduled_ref
             WHERE m.status = 'finished' AND (?1 IS NULL OR q.tournament_ref = ?1)";
        let mut seats: HashMap<String, Vec<(usize, String)>> = HashMap::new();
        for seat in conn
            .prepare(&format!(
                "SELECT t.match_id, t.seat, t.name FROM seats t
                 WHERE t.match_id IN (SELECT s.match_id {filter}) ORDER BY t.match_id, t.seat"
            ))
            .map_err(sql)?
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)? as usize,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(sql)?
        {
            let (match_id, k, name) = seat.map_err(sql)?;
            seats.entry(match_id).or_default().push((k, name));
        }
        let mut errors_of: HashMap<i64, Vec<Vec<String>>> = HashMap::new();
        for step in conn
            .prepare(&format!(
                "SELECT t.match_ref, t.errors FROM steps t
                 WHERE t.match_ref IN (SELECT m.id {filter}) ORDER BY t.match_ref, t.step"
            ))
            .map_err(sql)?
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    from_json::<Vec<String>>(&r.get::<_, String>(1)?),
                ))
            })
            .map_err(sql)?
        {
            let (row, errors) = step.map_err(sql)?;
            errors_of.entry(row).or_default().push(errors);
        }
        let mut out = Vec::with_capacity(rows.len());
        for (row, match_id, game, goals, start_errors, ended) in rows {
            let seats = seats.remove(&match_id).unwrap_or_default();
            let errors = errors_of.remove(&row).unwrap_or_default();
            let mut players = Vec::new();
            let mut seat_goals = Vec::new();
            let mut failed = Vec::new();
            for (k, name) in seats {
                let start = start_errors.get(k).map_or("", String::as_str);
                let step_errors: Vec<&str> = errors
                    .iter()
                    .map(|e| e.get(k).map_or("", String::as_str))
                    .collect();
                players.push(name);
                seat_goals.push(goals.get(k).copied().unwrap_or(0));
                failed.push(crate::ratings::failed(start, &step_errors));
            }
            out.push(Played {
                match_id,
                game,
                players,
                goals: seat_goals,
                failed,
                ended,
            });
        }
        Ok(out)
    })
    .await
}

/// A tournament's standings from its finished matches.
pub async fn standings(db: &Db, id: i64) -> Result<Vec<crate::ratings::Standing>, Error> {
    let played = played(db, Some(id)).await?;
    let results: Vec<_> = played.iter().map(Played::result).collect();
    Ok(crate::ratings::standings(&results))
}

/// The ratings from every finished served match, in the order they ended.
pub async fn ratings(db: &Db) -> Result<crate::ratings::Ratings, Error> {
    let played = played(db, None).await?;
    let mut ratings = crate::ratings::Ratings::new();
    for p in &played {
        ratings.record(&p.result());
    }
    Ok(ratings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(seats: usize) -> TournamentGame {
        TournamentGame {
            id: 1,
            key: "g".into(),
            version: 1,
            seats,
        }
    }

    #[test]
    fn a_round_robin_seats_every_ordered_choice_of_distinct_players_once_per_round() {
        let players: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let rows = schedule(Format::RoundRobin, &[game(2)], &players, 2, 7);
        assert_eq!(rows.len(), 12);
        assert_eq!(round_robin_size(3, &[game(2)]), 6);
        let round1: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r.0 == 1)
            .map(|r| r.2.clone())
            .collect();
        let mut want: Vec<Vec<String>> = Vec::new();
        for x in &players {
            for y in &players {
                if x != y {
                    want.push(vec![x.clone(), y.clone()]);
                }
            }
        }
        assert_eq!(round1, want);
        assert_eq!(round_robin_size(4, &[game(3), game(1)]), 24 + 4);
        // Seeds differ per match and are the same for the same tournament seed.
        let again = schedule(Format::RoundRobin, &[game(2)], &players, 2, 7);
        assert_eq!(rows, again);
        let seeds: HashSet<u64> = rows.iter().map(|r| r.3).collect();
        assert_eq!(seeds.len(), rows.len());
    }

    #[test]
    fn random_pairings_seat_each_player_at_most_once_per_game_and_round() {
        let players: Vec<String> = (0..7).map(|i| format!("p{i}")).collect();
        let rows = schedule(Format::Random, &[game(2), game(3)], &players, 3, 1);
        // 7 players: 3 pairs and 2 triples per round.
        assert_eq!(rows.len(), 3 * (3 + 2));
        for round in 1..=3 {
            for (g, size) in [(0usize, 2usize), (1, 3)] {
                let seated: Vec<&String> = rows
                    .iter()
                    .filter(|r| r.0 == round && r.1 == g)
                    .flat_map(|r| {
                        assert_eq!(r.2.len(), size);
                        r.2.iter()
                    })
                    .collect();
                let distinct: HashSet<&&String> = seated.iter().collect();
                assert_eq!(distinct.len(), seated.len());
            }
        }
        assert!(schedule(Format::Continuous, &[game(2)], &players, 3, 1).is_empty());
    }

    #[test]
    fn formats_are_read_in_any_spelling_and_refused_by_name() {
        assert_eq!(Format::parse("Round-Robin").unwrap(), Format::RoundRobin);
        assert_eq!(Format::parse("continuous").unwrap(), Format::Continuous);
        let e = Format::parse("swiss").unwrap_err();
        assert!(e.message().contains("`swiss`"), "{}", e.message());
    }

    #[test]
    fn this_process_is_not_gone_and_a_process_that_is_not_ggp_is() {
        let me = Host::this();
        assert!(!me.certainly_gone(&me.host, &me.boot, me.pid as i64));
        if !me.boot.is_empty() {
            // PID 1 is no `ggp`; a PID beyond the kernel's limit is no process.
            assert!(me.certainly_gone(&me.host, &me.boot, 1));
            assert!(me.certainly_gone(&me.host, &me.boot, 1 << 30));
            assert!(me.certainly_gone(&me.host, "another boot", 1));
        }
        assert!(!me.certainly_gone("another machine", &me.boot, 1));
    }
}
