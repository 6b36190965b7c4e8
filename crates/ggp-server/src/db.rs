//! The Gamemaster's data: its tables in the match database (made by its own migrations,
//! [`SCHEMA`]: `migrations/sqlite` and `migrations/postgres`), read through a pool of read-only connections on blocking threads,
//! written through the match store's writer thread ([`Store::execute`]), so that every write
//! of the process, matches' steps included, goes through one writer.

use std::sync::{Arc, Mutex};

use ggp_match::params;
use ggp_match::sql::{self, Conn, OptionalExtension, Row};
use ggp_match::{Database, DatabaseUrl, MatchRecord, Schema, Store, StoreError};
use serde::Serialize;

use crate::error::Error;
use crate::seat::SeatKind;
use crate::traits::Traits;
use crate::verdict::Verdict;

mod sqlite_files {
    refinery::embed_migrations!("migrations/sqlite");
}

mod postgres_files {
    refinery::embed_migrations!("migrations/postgres");
}

/// The Gamemaster's tables: games and their versions, players, served matches and their
/// seats, servers, tournaments and their schedule; recorded in a history of their own, beside
/// the match store's.
pub const SCHEMA: Schema = Schema {
    owner: "Gamemaster",
    history: "ggp_server_migrations",
    latest: 4,
    sqlite: sqlite_files::migrations::runner,
    postgres: postgres_files::migrations::runner,
    legacy,
};

/// What a database of the schema before refinery held of these tables: its migration 3 is
/// `V1`, 5 is `V2`, 6 is `V3` (1, 2 and 4 were the match store's).
fn legacy(version: usize) -> i32 {
    match version {
        0..=2 => 0,
        3 | 4 => 1,
        5 => 2,
        _ => 3,
    }
}

/// Read connections kept for reuse.
const POOL: usize = 16;

/// What the trial of a version found.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// Which engine plays the rules.
    pub engine: Verdict,
    /// The fluents that can hold, for drawing boards.
    pub fluents: Vec<String>,
    /// Bytes at the trial's peak (0 when it was charged to no account).
    pub memory: usize,
    /// Its turns, board, length, GDL-II.
    pub traits: Traits,
}

/// The database: the writer and a pool of readers.
#[derive(Clone)]
pub struct Db {
    pub store: Store,
    url: DatabaseUrl,
    readers: Arc<Mutex<Vec<Database>>>,
    /// Reads at once at most: each holds a connection (PostgreSQL's are counted by the server).
    reading: Arc<tokio::sync::Semaphore>,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub(crate) fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

/// A version of a game, without its rules and fluents unless asked.
#[derive(Clone, Debug, Serialize)]
pub struct Version {
    #[serde(skip)]
    pub id: i64,
    pub key: String,
    pub version: i64,
    pub roles: Vec<String>,
    pub hash: String,
    /// `ggp check --format json` objects.
    pub warnings: Vec<serde_json::Value>,
    pub source: String,
    pub created: i64,
    /// Which engine plays it, or `None` until analysed.
    pub engine: Option<Verdict>,
    /// The bytes its trial took at the peak (building the engine, a few random games), or
    /// `None` until analysed: what a match's share of the memory is reckoned from.
    #[serde(skip)]
    pub memory: Option<i64>,
    /// What its trial measured besides the engine, or `None` until analysed.
    pub traits: Option<Traits>,
    #[serde(skip)]
    pub rules: Option<String>,
    #[serde(skip)]
    pub fluents: Option<Vec<String>>,
}

/// A game in the list: its latest version, how many versions and matches it has.
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    pub key: String,
    pub versions: i64,
    pub matches: i64,
    /// One of the project's own games (the first `--games` directory's, at the last start
    /// with one): listed first.
    pub featured: bool,
    pub latest: Version,
}

/// A registered player.
#[derive(Clone, Debug, Serialize)]
pub struct Player {
    #[serde(skip)]
    pub id: i64,
    pub name: String,
    pub url: String,
    pub created: i64,
    /// `unknown`, `available`, `busy` or `unreachable`.
    pub status: String,
    /// The name it gives in its INFO reply.
    pub info_name: Option<String>,
    /// What the last INFO said or why it failed.
    pub detail: Option<String>,
    pub last_seen: Option<i64>,
    pub last_checked: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<i64>,
}

/// A seat of a served match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Seat {
    pub kind: SeatKind,
    pub name: String,
}

/// A match in a list.
#[derive(Clone, Debug, Serialize)]
pub struct MatchRow {
    pub id: String,
    /// The game's key (for a match served here), or the recorded game name.
    pub game: String,
    /// The game version (served matches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    pub start_time: i64,
    /// `live`, `finished`, `aborted`, or `unfinished` (a `ggp match` elsewhere, or one whose
    /// manager died).
    pub status: String,
    pub steps: i64,
    pub roles: Vec<String>,
    pub players: Vec<String>,
    pub goals: Vec<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    #[serde(skip)]
    pub served: bool,
}

/// What `matches` may be filtered by.
#[derive(Clone, Debug, Default)]
pub struct MatchFilter {
    pub status: Option<String>,
    pub game: Option<String>,
    pub player: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

/// A served match's link to its game and seats.
#[derive(Clone, Debug)]
pub struct Served {
    pub game: String,
    pub version: i64,
    pub seats: Vec<Seat>,
    pub failure: Option<String>,
}

/// A game version to add: the game's key, the rules and their hash, what the checker found
/// (roles, warnings), where they came from.
pub struct NewVersion {
    pub key: String,
    pub rules: String,
    pub hash: String,
    pub roles: Vec<String>,
    pub warnings: Vec<serde_json::Value>,
    pub source: String,
}

/// What adding a game version did.
#[derive(Clone, Debug)]
pub struct Added {
    pub version: i64,
    pub id: i64,
    /// False when the rules were those of the latest version already: nothing was added.
    pub new: bool,
}

/// A new served match's rows.
pub struct NewMatch {
    pub match_id: String,
    pub version_id: i64,
    /// The server playing it (`servers`), and the scheduled row it plays, if any.
    pub server: Option<i64>,
    pub scheduled: Option<i64>,
    /// GDL-II's `random` role has no seat: the manager plays it.
    pub seats: Vec<NewSeat>,
}

/// A seat of a new served match.
pub struct NewSeat {
    /// The role's index.
    pub seat: usize,
    /// Never [`SeatKind::Manager`] (that seat has no row).
    pub kind: SeatKind,
    /// The registered player's id.
    pub player: Option<i64>,
    pub name: String,
    /// The SHA-256 of a human seat's token.
    pub token_hash: Option<String>,
}

const VERSION_COLUMNS: &str = "v.id, g.key, v.version, v.roles, v.hash, v.warnings, v.source, v.created, v.engine, v.memory, v.traits";

fn version_row(row: &Row) -> sql::Result<Version> {
    Ok(Version {
        id: row.get(0)?,
        key: row.get(1)?,
        version: row.get(2)?,
        roles: from_json(&row.get::<_, String>(3)?),
        hash: row.get(4)?,
        warnings: from_json(&row.get::<_, String>(5)?),
        source: row.get(6)?,
        created: row.get(7)?,
        engine: row
            .get::<_, Option<String>>(8)?
            .map(|text| Verdict::parse(&text)),
        memory: row.get(9)?,
        traits: row
            .get::<_, Option<String>>(10)?
            .and_then(|text| Traits::parse(&text)),
        rules: None,
        fluents: None,
    })
}

const PLAYER_COLUMNS: &str =
    "id, name, url, created, status, info_name, detail, last_seen, last_checked, removed";

fn player_row(row: &Row) -> sql::Result<Player> {
    Ok(Player {
        id: row.get(0)?,
        name: row.get(1)?,
        url: row.get(2)?,
        created: row.get(3)?,
        status: row.get(4)?,
        info_name: row.get(5)?,
        detail: row.get(6)?,
        last_seen: row.get(7)?,
        last_checked: row.get(8)?,
        removed: row.get(9)?,
    })
}

impl Db {
    /// Opens (creating or migrating) the database, the match store's tables and the
    /// Gamemaster's, and its writer.
    pub fn open(url: &DatabaseUrl) -> Result<Db, StoreError> {
        let mut db = Database::open(url)?;
        db.migrate_schema(&SCHEMA)?;
        let store = Store::new(db);
        Ok(Db {
            store,
            url: url.clone(),
            readers: Arc::new(Mutex::new(Vec::new())),
            reading: Arc::new(tokio::sync::Semaphore::new(POOL)),
        })
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// The database as it may be shown: the file, or the URL without its password.
    pub fn shown(&self) -> String {
        self.url.to_string()
    }

    /// Runs a read on a pooled read-only connection, on a blocking thread.
    pub async fn read<T, F>(&self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&Database) -> Result<T, Error> + Send + 'static,
    {
        let db = self.clone();
        let permit = self
            .reading
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| poisoned())?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let reader = db
                .readers
                .lock()
                .map_err(|_| poisoned())?
                .pop()
                .filter(|r| !r.connection().is_closed());
            let reader = match reader {
                Some(r) => r,
                None => Database::open_existing(&db.url)?,
            };
            let out = work(&reader);
            // A lost connection (PostgreSQL restarted, the network failed) is not kept.
            if !reader.connection().is_closed() {
                let mut pool = db.readers.lock().map_err(|_| poisoned())?;
                if pool.len() < POOL {
                    pool.push(reader);
                }
            }
            out
        })
        .await
        .map_err(|e| Error::Internal(format!("a database read failed: {e}")))?
    }

    /// Runs a write on the writer thread.
    pub async fn write<T, F>(&self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&Conn) -> sql::Result<T> + Send + 'static,
    {
        Ok(self.store.execute(work).await?)
    }

    // ----- games -----

    pub async fn games(&self) -> Result<Vec<GameSummary>, Error> {
        self.read(|db| {
            let conn = db.connection();
            let mut st = conn
                .prepare(&format!(
                    "SELECT {VERSION_COLUMNS},
                        (SELECT count(*) FROM game_versions w WHERE w.game_ref = g.id),
                        (SELECT count(*) FROM served_matches s
                           JOIN game_versions w ON s.game_version_ref = w.id
                           WHERE w.game_ref = g.id),
                        g.featured
                     FROM games g JOIN game_versions v ON v.game_ref = g.id
                     WHERE v.version = (SELECT max(version) FROM game_versions w
                                        WHERE w.game_ref = g.id)
                     ORDER BY g.featured DESC, lower(g.key), g.key"
                ))
                .map_err(sql)?;
            let rows = st
                .query_map((), |row| {
                    Ok(GameSummary {
                        latest: version_row(row)?,
                        key: row.get(1)?,
                        versions: row.get(11)?,
                        matches: row.get(12)?,
                        featured: row.get::<_, i64>(13)? != 0,
                    })
                })
                .map_err(sql)?;
            rows.collect::<sql::Result<Vec<_>>>().map_err(sql)
        })
        .await
    }

    /// A version of a game (the latest if `version` is `None`), with its rules and fluents.
    pub async fn version(&self, key: &str, version: Option<i64>) -> Result<Version, Error> {
        let key = key.to_string();
        self.read(move |db| {
            let conn = db.connection();
            let found = conn
                .query_row(
                    &format!(
                        "SELECT {VERSION_COLUMNS}, v.rules, v.fluents
                         FROM games g JOIN game_versions v ON v.game_ref = g.id
                         WHERE g.key = $1 AND v.version = coalesce($2,
                            (SELECT max(version) FROM game_versions w WHERE w.game_ref = g.id))"
                    ),
                    params![key, version],
                    |row| {
                        let mut v = version_row(row)?;
                        v.rules = Some(row.get(11)?);
                        v.fluents = row.get::<_, Option<String>>(12)?.map(|f| from_json(&f));
                        Ok(v)
                    },
                )
                .optional()
                .map_err(sql)?;
            found.ok_or_else(|| {
                Error::NotFound(match version {
                    Some(n) => format!("the game `{key}` has no version {n}"),
                    None => format!("there is no game `{key}`"),
                })
            })
        })
        .await
    }

    /// Every version of a game, newest first (without rules).
    pub async fn versions(&self, key: &str) -> Result<Vec<Version>, Error> {
        let key = key.to_string();
        self.read(move |db| {
            let mut st = db
                .connection()
                .prepare(&format!(
                    "SELECT {VERSION_COLUMNS} FROM games g JOIN game_versions v ON v.game_ref = g.id
                     WHERE g.key = $1 ORDER BY v.version DESC"
                ))
                .map_err(sql)?;
            let rows = st.query_map([&key], version_row).map_err(sql)?;
            rows.collect::<sql::Result<Vec<_>>>().map_err(sql)
        })
        .await
    }

    /// Versions not analysed yet: id and rules.
    pub async fn unanalysed(&self) -> Result<Vec<(i64, String)>, Error> {
        self.read(|db| {
            let mut st = db
                .connection()
                .prepare(
                    "SELECT id, rules FROM game_versions
                     WHERE engine IS NULL OR memory IS NULL OR traits IS NULL ORDER BY id",
                )
                .map_err(sql)?;
            let rows = st
                .query_map((), |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(sql)?;
            rows.collect::<sql::Result<Vec<_>>>().map_err(sql)
        })
        .await
    }

    /// Adds a version of a game (creating the game), unless the rules are those of its latest
    /// version already.
    pub async fn add_version(&self, new: NewVersion) -> Result<Added, Error> {
        let NewVersion {
            key,
            rules,
            hash,
            roles,
            warnings,
            source,
        } = new;
        self.write(move |conn| {
            let now = now_ms();
            conn.execute(
                "INSERT INTO games (key, created) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                params![key, now],
            )?;
            // PostgreSQL: the game's row locked, so that two front ends adding a version of it
            // at once number them one after the other (SQLite's writes take turns anyway).
            let game: i64 = conn.query_row(
                conn.pick(
                    "SELECT id FROM games WHERE key = $1",
                    "SELECT id FROM games WHERE key = $1 FOR UPDATE",
                ),
                [&key],
                |r| r.get(0),
            )?;
            let latest: Option<(i64, i64, String)> = conn
                .query_row(
                    "SELECT id, version, hash FROM game_versions WHERE game_ref = $1
                     ORDER BY version DESC LIMIT 1",
                    [game],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            if let Some((id, version, latest_hash)) = &latest
                && *latest_hash == hash
            {
                return Ok(Added {
                    version: *version,
                    id: *id,
                    new: false,
                });
            }
            let version = latest.map_or(1, |l| l.1 + 1);
            let id: i64 = conn.query_row(
                "INSERT INTO game_versions (game_ref, version, rules, hash, roles, warnings,
                    source, created) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                params![
                    game,
                    version,
                    rules,
                    hash,
                    json(&roles),
                    json(&warnings),
                    source,
                    now
                ],
                |r| r.get(0),
            )?;
            Ok(Added {
                version,
                id,
                new: true,
            })
        })
        .await
    }

    pub async fn set_analysis(&self, id: i64, analysis: Analysis) -> Result<(), Error> {
        let Analysis {
            engine,
            fluents,
            memory,
            traits,
        } = analysis;
        let memory = i64::try_from(memory).unwrap_or(i64::MAX);
        self.write(move |conn| {
            conn.execute(
                "UPDATE game_versions SET engine = $1, fluents = $2, memory = $3, traits = $4
                 WHERE id = $5",
                params![
                    engine.to_string(),
                    json(&fluents),
                    memory,
                    traits.to_json(),
                    id
                ],
            )
            .map(drop)
        })
        .await
    }

    /// Makes the games of these keys the featured ones, and only them.
    pub async fn set_featured(&self, keys: Vec<String>) -> Result<(), Error> {
        self.write(move |conn| {
            conn.execute("UPDATE games SET featured = 0 WHERE featured <> 0", ())?;
            for key in &keys {
                conn.execute("UPDATE games SET featured = 1 WHERE key = $1", [key])?;
            }
            Ok(())
        })
        .await
    }

    // ----- players -----

    pub async fn players(&self) -> Result<Vec<Player>, Error> {
        self.read(|db| {
            let mut st = db
                .connection()
                .prepare(&format!(
                    "SELECT {PLAYER_COLUMNS} FROM players WHERE removed IS NULL
                     ORDER BY lower(name), name"
                ))
                .map_err(sql)?;
            let rows = st.query_map((), player_row).map_err(sql)?;
            rows.collect::<sql::Result<Vec<_>>>().map_err(sql)
        })
        .await
    }

    /// A player by name (any case): the registered one, or else the last removed one of that
    /// name (for its history).
    pub async fn player(&self, name: &str) -> Result<Player, Error> {
        let name = name.to_string();
        self.read(move |db| {
            db.connection()
                .query_row(
                    &format!(
                        "SELECT {PLAYER_COLUMNS} FROM players WHERE lower(name) = lower($1)
                         ORDER BY removed IS NOT NULL, removed DESC LIMIT 1"
                    ),
                    [&name],
                    player_row,
                )
                .optional()
                .map_err(sql)?
                .ok_or_else(|| Error::NotFound(format!("there is no player `{name}`")))
        })
        .await
    }

    /// The owner's token hash of a registered player.
    pub async fn player_token(&self, name: &str) -> Result<Option<(i64, String)>, Error> {
        let name = name.to_string();
        self.read(move |db| {
            db.connection()
                .query_row(
                    "SELECT id, token_hash FROM players WHERE lower(name) = lower($1)
                     AND removed IS NULL",
                    [&name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql)
        })
        .await
    }

    /// The registered player whose owner's token has this hash.
    pub async fn player_by_token(&self, hash: &str) -> Result<Option<(i64, String)>, Error> {
        let hash = hash.to_string();
        self.read(move |db| {
            db.connection()
                .query_row(
                    "SELECT id, name FROM players WHERE token_hash = $1 AND removed IS NULL",
                    [&hash],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql)
        })
        .await
    }

    /// Registers a player; `Conflict` if the name is taken.
    pub async fn add_player(
        &self,
        name: String,
        url: String,
        token_hash: String,
    ) -> Result<Player, Error> {
        let taken = name.clone();
        let added = self
            .write(move |conn| {
                let exists: bool = conn.query_row(
                    "SELECT count(*) > 0 FROM players WHERE lower(name) = lower($1)
                     AND removed IS NULL",
                    [&name],
                    |r| r.get(0),
                )?;
                if exists {
                    return Ok(false);
                }
                conn.execute(
                    "INSERT INTO players (name, url, token_hash, created) VALUES ($1, $2, $3, $4)",
                    params![name, url, token_hash, now_ms()],
                )?;
                Ok(true)
            })
            .await;
        // Another front end registering the same name at the same moment: the unique index
        // refuses the second.
        let added = match added {
            Err(Error::Internal(_)) if self.player_token(&taken).await?.is_some() => false,
            other => other?,
        };
        if !added {
            return Err(Error::Conflict(format!(
                "a player named `{taken}` is already registered"
            )));
        }
        self.player(&taken).await
    }

    pub async fn set_player_url(&self, id: i64, url: String) -> Result<(), Error> {
        self.write(move |conn| {
            conn.execute(
                "UPDATE players SET url = $1, status = 'unknown', detail = NULL WHERE id = $2",
                params![url, id],
            )
            .map(drop)
        })
        .await
    }

    pub async fn remove_player(&self, id: i64) -> Result<(), Error> {
        self.write(move |conn| {
            conn.execute(
                "UPDATE players SET removed = $1 WHERE id = $2 AND removed IS NULL",
                params![now_ms(), id],
            )
            .map(drop)
        })
        .await
    }

    /// Records what an INFO said (`seen`: it answered).
    pub async fn set_player_status(
        &self,
        id: i64,
        status: &'static str,
        info_name: Option<String>,
        detail: Option<String>,
        seen: bool,
    ) -> Result<(), Error> {
        self.write(move |conn| {
            let now = now_ms();
            conn.execute(
                "UPDATE players SET status = $1, info_name = coalesce($2, info_name),
                    detail = $3, last_checked = $4,
                    last_seen = CASE WHEN $5 THEN $4 ELSE last_seen END
                 WHERE id = $6",
                params![status, info_name, detail, now, seen, id],
            )
            .map(drop)
        })
        .await
    }

    // ----- matches -----

    /// Adds a served match; returns its id: `m.match_id`, or with a suffix (`.2`, `.3`, …) if
    /// another process took that id meanwhile (checked in the write's transaction).
    pub async fn add_served(&self, mut m: NewMatch) -> Result<String, Error> {
        self.write(move |conn| {
            let base = m.match_id.clone();
            let mut k = 2;
            // Servers sharing a PostgreSQL database insert at the same moment: a taken id is
            // seen by the check (committed) or by the insert (being committed, waited for).
            loop {
                let taken = conn.query_row(
                    "SELECT (SELECT count(*) FROM matches WHERE match_id = $1)
                          + (SELECT count(*) FROM served_matches WHERE match_id = $1)",
                    [&m.match_id],
                    |r| r.get::<_, i64>(0),
                )? > 0;
                if !taken
                    && conn.execute(
                        "INSERT INTO served_matches
                            (match_id, game_version_ref, created, server_ref, scheduled_ref)
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (match_id) DO NOTHING",
                        params![m.match_id, m.version_id, now_ms(), m.server, m.scheduled],
                    )? == 1
                {
                    break;
                }
                m.match_id = format!("{base}.{k}");
                k += 1;
            }
            if let Some(row) = m.scheduled {
                conn.execute(
                    "UPDATE scheduled SET match_id = $1 WHERE id = $2",
                    params![m.match_id, row],
                )?;
            }
            for seat in &m.seats {
                conn.execute(
                    "INSERT INTO seats (match_id, seat, kind, player_ref, name, token_hash)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    params![
                        m.match_id,
                        seat.seat as i64,
                        seat.kind.name(),
                        seat.player,
                        seat.name,
                        seat.token_hash
                    ],
                )?;
            }
            Ok(m.match_id)
        })
        .await
    }

    pub async fn set_failure(&self, match_id: String, failure: String) -> Result<(), Error> {
        self.write(move |conn| {
            conn.execute(
                "UPDATE served_matches SET failure = $1 WHERE match_id = $2",
                params![failure, match_id],
            )
            .map(drop)
        })
        .await
    }

    /// Whether a match id is taken (recorded, or served).
    pub async fn match_exists(&self, id: &str) -> Result<bool, Error> {
        let id = id.to_string();
        self.read(move |db| {
            db.connection()
                .query_row(
                    "SELECT (SELECT count(*) FROM matches WHERE match_id = $1)
                          + (SELECT count(*) FROM served_matches WHERE match_id = $1)",
                    [&id],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n > 0)
                .map_err(sql)
        })
        .await
    }

    /// A served match's game and seats (`None` for a match recorded by `ggp match`).
    pub async fn served(&self, id: &str) -> Result<Option<Served>, Error> {
        let id = id.to_string();
        self.read(move |db| served(db.connection(), &id)).await
    }

    /// The seat whose token has this hash.
    pub async fn seat_by_token(&self, id: &str, hash: &str) -> Result<Option<usize>, Error> {
        let (id, hash) = (id.to_string(), hash.to_string());
        self.read(move |db| {
            db.connection()
                .query_row(
                    "SELECT seat FROM seats WHERE match_id = $1 AND token_hash = $2",
                    params![id, hash],
                    |r| r.get::<_, i64>(0),
                )
                .optional()
                .map(|s| s.map(|s| s as usize))
                .map_err(sql)
        })
        .await
    }

    /// A recorded match. Not found is said without the store's words, which name the
    /// database's file (the server's business, not its users').
    pub async fn record(&self, id: &str) -> Result<MatchRecord, Error> {
        let id = id.to_string();
        self.read(move |db| match db.load(&id) {
            Err(e) if e.kind == ggp_match::StoreErrorKind::NotFound => {
                Err(Error::NotFound(format!("there is no match `{id}`")))
            }
            loaded => Ok(loaded?),
        })
        .await
    }

    /// Matches, newest first.
    pub async fn matches(&self, filter: MatchFilter) -> Result<Vec<MatchRow>, Error> {
        self.read(move |db| matches(db.connection(), &filter)).await
    }
}

pub(crate) fn sql(e: sql::Error) -> Error {
    Error::Internal(format!("the database: {e}"))
}

fn poisoned() -> Error {
    Error::Internal("the database pool is unusable".into())
}

fn served(conn: &Conn, id: &str) -> Result<Option<Served>, Error> {
    let head: Option<(String, i64, Option<String>, String)> = conn
        .query_row(
            "SELECT g.key, v.version, s.failure, v.roles FROM served_matches s
             JOIN game_versions v ON s.game_version_ref = v.id
             JOIN games g ON v.game_ref = g.id WHERE s.match_id = $1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()
        .map_err(sql)?;
    let Some((game, version, failure, roles)) = head else {
        return Ok(None);
    };
    let roles: Vec<String> = from_json(&roles);
    let mut st = conn
        .prepare("SELECT seat, kind, name FROM seats WHERE match_id = $1 ORDER BY seat")
        .map_err(sql)?;
    let rows = st
        .query_map([id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Seat {
                    kind: seat_kind(&r.get::<_, String>(1)?)?,
                    name: r.get(2)?,
                },
            ))
        })
        .map_err(sql)?
        .collect::<sql::Result<Vec<_>>>()
        .map_err(sql)?;
    // A seat per role: the role without a row is GDL-II's `random`, played by the manager.
    let n = roles.len().max(rows.len());
    let mut seats: Vec<Seat> = (0..n).map(|_| manager_seat()).collect();
    for (k, seat) in rows {
        if let Some(slot) = usize::try_from(k).ok().and_then(|k| seats.get_mut(k)) {
            *slot = seat;
        }
    }
    Ok(Some(Served {
        game,
        version,
        seats,
        failure,
    }))
}

/// A seat's kind as stored: a text of no known kind is the column's type error.
fn seat_kind(text: &str) -> sql::Result<SeatKind> {
    SeatKind::parse(text).ok_or_else(|| sql::Error {
        kind: sql::ErrorKind::Type,
        message: format!("a seat's kind is `{text}`, not one this server knows"),
    })
}

/// The seat of GDL-II's `random` role.
pub fn manager_seat() -> Seat {
    Seat {
        kind: SeatKind::Manager,
        name: ggp_match::MANAGER_PLAYS_RANDOM.into(),
    }
}

fn matches(conn: &Conn, f: &MatchFilter) -> Result<Vec<MatchRow>, Error> {
    // `live` is what a served match that is still unfinished is: the server aborts its own
    // unfinished matches when it starts.
    // A player is one of the JSON array `players`: `json_each` in SQLite, its PostgreSQL
    // twin there.
    let players = conn.pick(
        "SELECT 1 FROM json_each(m.players) p WHERE lower(p.value) = lower($3)",
        "SELECT 1 FROM json_array_elements_text(m.players::json) p WHERE lower(p) = lower($3)",
    );
    let text = format!(
        "SELECT m.match_id, coalesce(g.key, m.game_name), v.version, m.start_time, m.status,
            (SELECT count(*) FROM steps t WHERE t.match_ref = m.id),
            m.roles, m.players, m.goal_values, m.abort_reason, s.match_id IS NOT NULL
         FROM matches m
         LEFT JOIN served_matches s ON s.match_id = m.match_id
         LEFT JOIN game_versions v ON s.game_version_ref = v.id
         LEFT JOIN games g ON v.game_ref = g.id
         WHERE ($1 IS NULL OR CASE WHEN $1 = 'live'
                    THEN m.status = 'unfinished' AND s.match_id IS NOT NULL
                    ELSE m.status = $1 END)
           AND ($2 IS NULL OR coalesce(g.key, m.game_name) = $2)
           AND ($3 IS NULL OR EXISTS ({players}))
         ORDER BY m.start_time DESC, m.id DESC
         LIMIT $4 OFFSET $5"
    );
    let mut st = conn.prepare_cached(&text).map_err(sql)?;
    let rows = st
        .query_map(
            params![f.status, f.game, f.player, f.limit, f.offset],
            |r| {
                let served: bool = r.get(10)?;
                let status: String = r.get(4)?;
                Ok(MatchRow {
                    id: r.get(0)?,
                    game: r.get(1)?,
                    version: r.get(2)?,
                    start_time: r.get(3)?,
                    status: if served && status == "unfinished" {
                        "live".into()
                    } else {
                        status
                    },
                    steps: r.get(5)?,
                    roles: from_json(&r.get::<_, String>(6)?),
                    players: from_json(&r.get::<_, String>(7)?),
                    goals: from_json(&r.get::<_, String>(8)?),
                    abort_reason: r.get(9)?,
                    served,
                })
            },
        )
        .map_err(sql)?;
    rows.collect::<sql::Result<Vec<_>>>().map_err(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_numbered_from_one_to_the_latest_on_both_databases() {
        for runner in [(SCHEMA.sqlite)(), (SCHEMA.postgres)()] {
            let mut versions: Vec<i32> = runner
                .get_migrations()
                .iter()
                .map(|m| m.version())
                .collect();
            versions.sort_unstable();
            assert_eq!(versions, (1..=SCHEMA.latest).collect::<Vec<_>>());
        }
        // The schema before refinery ended at `V3`; those after it are refinery's alone.
        assert_eq!(legacy(ggp_match::LEGACY_LAST), 3);
    }
}
