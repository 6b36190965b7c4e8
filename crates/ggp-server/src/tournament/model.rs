//! A tournament as the database keeps it: its format, games, players and progress, and the
//! queries that read it; pausing, resuming and ending it.

use ggp_match::params;
use ggp_match::sql::{self, Conn, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::db::{Db, from_json, now_ms, sql};
use crate::error::Error;
use crate::state::Gamemaster;

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

pub(super) const TOURNAMENT_COLUMNS: &str = "id, name, format, versions, players, start_clock, play_clock, rounds, seed, status, created, finished";

pub(super) struct TournamentRow {
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

pub(super) fn tournament_row(r: &Row) -> sql::Result<TournamentRow> {
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

pub(super) fn complete(conn: &Conn, row: TournamentRow) -> Result<Tournament, Error> {
    let mut games = Vec::new();
    for id in &row.versions {
        let (key, version, roles): (String, i64, String) = conn
            .query_row(
                "SELECT g.key, v.version, v.roles FROM game_versions v
                 JOIN games g ON v.game_ref = g.id WHERE v.id = $1",
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
            "SELECT status, count(*) FROM scheduled WHERE tournament_ref = $1 GROUP BY status",
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
                &format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE id = $1"),
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
                 WHERE s.tournament_ref = $1 ORDER BY s.id",
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
                "UPDATE tournaments SET status = $1,
                        finished = CASE WHEN $1 = 'finished' THEN $2 ELSE finished END
                 WHERE id = $3 AND (status = $4 OR status = $5)",
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
                     WHERE tournament_ref = $1 AND status = 'queued'",
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
