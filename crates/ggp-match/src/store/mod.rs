//! Durable match records: a SQLite database in WAL mode, a row per match and a row per step,
//! every step committed (and synced to disk) before the manager sends the next PLAY.
//!
//! [`Database`] is the synchronous view: open (creating and migrating the schema), read
//! ([`Database::list`], [`Database::load`]) and write. [`Store`] runs a `Database` on a writer
//! thread of its own for the async matches: every match's writes go through one channel and
//! are committed in groups (one transaction and one sync for all the writes waiting at that
//! moment), and the future of each write completes once it is durable, so many matches share
//! one database without blocking the async runtime or each other.
//!
//! The schema is migrations (SQL files per database, applied by refinery: `migrations.rs`),
//! which take a database from any older version to the current one when it is opened; a
//! database written by a newer version is refused rather than misread.

mod migrations;
mod rows;
mod url;

pub use self::migrations::{LEGACY_LAST, LEGACY_MOVED, MATCH_SCHEMA, SCHEMA_VERSION, Schema};
pub use self::rows::{MatchSummary, Update};
pub use self::url::{BadDatabaseUrl, DatabaseUrl};

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::OpenFlags;

use crate::params;
use crate::sql::{self, Conn, Dialect, ErrorKind, OptionalExtension};
use tokio::sync::oneshot;

use crate::record::MatchRecord;

/// How long a write waits for another process's lock before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Writes committed together at most.
const MAX_BATCH: usize = 512;

/// What kind of failure a [`StoreError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The file or its directory cannot be created, opened or written.
    Open,
    /// Another process held a lock on the database for longer than the busy timeout.
    Locked,
    /// The file is not a match database: not SQLite, damaged, or someone else's tables.
    NotADatabase,
    /// The database was written by a newer version of ggp.
    NewerSchema,
    /// A match with this id is already recorded (or another uniqueness constraint refused a
    /// write).
    Duplicate,
    /// No such match (or no database at the path).
    NotFound,
    /// The writer thread is gone.
    Closed,
    /// Anything else SQLite reports (a full disk, say).
    Other,
}

/// Why the match database could not do what was asked; the message names the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    pub kind: StoreErrorKind,
    pub message: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

fn store_error(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
    StoreError {
        kind,
        message: message.into(),
    }
}

/// Translates a database error into one that says what happened to which database.
fn sql_error(url: &DatabaseUrl, e: sql::Error) -> StoreError {
    let file = url;
    match e.kind {
        ErrorKind::Busy => store_error(
            StoreErrorKind::Locked,
            format!("the match database {file} is locked by another process ({e})"),
        ),
        ErrorKind::NotADatabase => store_error(
            StoreErrorKind::NotADatabase,
            format!("{file} is not a match database, or it is damaged ({e})"),
        ),
        ErrorKind::Open => store_error(
            StoreErrorKind::Open,
            format!("cannot open the match database {file} for writing ({e})"),
        ),
        ErrorKind::Constraint => store_error(
            StoreErrorKind::Duplicate,
            format!("the match database {file}: {e}"),
        ),
        _ if e.message.contains("database or disk is full") => store_error(
            StoreErrorKind::Other,
            format!("cannot write the match database {file}: the disk is full"),
        ),
        _ => store_error(
            StoreErrorKind::Other,
            format!("the match database {file}: {e}"),
        ),
    }
}

fn sqlite_error(url: &DatabaseUrl, e: rusqlite::Error) -> StoreError {
    sql_error(url, e.into())
}

/// `what`: what the database has that is newer than this build knows.
fn newer_schema(url: &DatabaseUrl, what: &str) -> StoreError {
    store_error(
        StoreErrorKind::NewerSchema,
        format!("the match database {url} has {what}; use a newer ggp"),
    )
}

/// A database whose tables of `schema` are at `version`, past the latest this build knows.
fn newer_tables(url: &DatabaseUrl, schema: &Schema, version: impl std::fmt::Display) -> StoreError {
    newer_schema(
        url,
        &format!(
            "{} tables at version {version}, newer than this ggp knows ({})",
            schema.owner, schema.latest
        ),
    )
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}

/// A match database, opened on this thread: a SQLite file or a PostgreSQL database.
pub struct Database {
    conn: Conn,
    /// Where it is (PostgreSQL's URL, to connect again when the connection is lost).
    url: DatabaseUrl,
    read_only: bool,
}

/// Connects to PostgreSQL, with the session's limits: a lock waited for more than the busy
/// timeout is an error (every write of a process goes through one writer, which must not
/// hang on a lock a lost server holds), a session idle in a transaction for a minute is ended
/// by the server, and TCP keepalives notice a lost peer within a minute or so.
fn pg_connect(url: &str) -> Result<Conn, StoreError> {
    let shown = DatabaseUrl::Postgres(url.to_string());
    let fail = |e: sql::Error| {
        store_error(
            StoreErrorKind::Open,
            format!("cannot connect to the PostgreSQL match database {shown}: {e}"),
        )
    };
    let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| fail(e.into()))?;
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10));
    let client =
        sql::outside_runtime(|| config.connect(postgres::NoTls)).map_err(|e| fail(e.into()))?;
    let conn = Conn::postgres(client);
    conn.execute_batch(&format!(
        "SET lock_timeout = {}; SET idle_in_transaction_session_timeout = 60000",
        DEFAULT_BUSY_TIMEOUT.as_millis()
    ))
    .map_err(fail)?;
    Ok(conn)
}

impl Database {
    /// Opens the database, creating a SQLite file (and its directory) if need be, and brings
    /// its schema up to date. A PostgreSQL database must exist; its schema is brought up to
    /// date the same way.
    pub fn open(url: &DatabaseUrl) -> Result<Database, StoreError> {
        let path = match url {
            DatabaseUrl::Postgres(url) => return Database::open_postgres(url, false),
            DatabaseUrl::Sqlite(path) => path,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                store_error(
                    StoreErrorKind::Open,
                    format!(
                        "cannot create the directory {} for the match database: {e}",
                        dir.display()
                    ),
                )
            })?;
        }
        Database::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )
    }

    /// Opens an existing database for reading what it holds: nothing is created or written,
    /// so a database in a read-only directory, or on a read-only medium, can be read. A
    /// database of an older schema is brought up to date first if it can be written (and is
    /// refused, saying so, if it cannot). On PostgreSQL the connection's transactions are
    /// read-only.
    pub fn open_existing(url: &DatabaseUrl) -> Result<Database, StoreError> {
        let path = match url {
            DatabaseUrl::Postgres(url) => return Database::open_postgres(url, true),
            DatabaseUrl::Sqlite(path) => path,
        };
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() && meta.len() == 0 => {
                return Err(store_error(
                    StoreErrorKind::NotADatabase,
                    format!("{} is an empty file, not a match database", path.display()),
                ));
            }
            Ok(meta) if meta.is_file() => {}
            _ => {
                return Err(store_error(
                    StoreErrorKind::NotFound,
                    format!("there is no match database at {}", path.display()),
                ));
            }
        }
        let db = match Database::open_with(path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
            Ok(db) => db,
            // In a directory this process cannot write, SQLite cannot create the files a
            // write-ahead-logged database is read with; the database file alone, which every
            // ended match is checkpointed into, is then read as immutable.
            Err(e) if e.kind == StoreErrorKind::Open => {
                Database::open_immutable(path).map_err(|_| e)?
            }
            Err(e) => return Err(e),
        };
        if db.schema_version()? < SCHEMA_VERSION {
            drop(db);
            return Database::open_with(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(|e| {
                store_error(
                    e.kind,
                    format!(
                        "{e}; the database has an older schema, and it can only be read once it is brought up to date, which needs write access"
                    ),
                )
            });
        }
        Ok(db)
    }

    /// Connects to a PostgreSQL database and brings its schema up to date (both when only
    /// reading, as with SQLite; then its sessions are read-only).
    fn open_postgres(url: &str, read_only: bool) -> Result<Database, StoreError> {
        let mut db = Database {
            conn: pg_connect(url)?,
            url: DatabaseUrl::Postgres(url.to_string()),
            read_only: false,
        };
        // Reading never creates the tables (as with SQLite, where it never creates a file).
        let version = db.schema_version()?;
        if read_only && version == 0 {
            return Err(store_error(
                StoreErrorKind::NotFound,
                format!(
                    "there is no match database in {} (it has no ggp tables yet; `ggp match` or `ggp serve` makes them)",
                    db.url
                ),
            ));
        }
        if version > SCHEMA_VERSION {
            return Err(newer_tables(&db.url, &MATCH_SCHEMA, version));
        }
        if !read_only || version < SCHEMA_VERSION {
            db.migrate()?;
        }
        if read_only {
            db.conn
                .execute_batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(|e| db.error(e))?;
            db.read_only = true;
        }
        Ok(db)
    }

    /// Opens the database file read-only as immutable (`?immutable=1`): no lock, no
    /// write-ahead log, no other file.
    fn open_immutable(path: &Path) -> Result<Database, StoreError> {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut uri = String::from("file:");
        for b in absolute.to_string_lossy().bytes() {
            match b {
                b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(b as char),
                b if b.is_ascii_alphanumeric() => uri.push(b as char),
                b => uri.push_str(&format!("%{b:02X}")),
            }
        }
        uri.push_str("?immutable=1");
        let conn = rusqlite::Connection::open_with_flags(
            &uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite_error(&DatabaseUrl::sqlite(path), e))?;
        let db = Database {
            conn: Conn::sqlite(conn),
            url: DatabaseUrl::sqlite(path),
            read_only: true,
        };
        let version = db.schema_version()?;
        if version == 0 || version > SCHEMA_VERSION {
            return Err(store_error(
                StoreErrorKind::NotADatabase,
                format!("{} is not a match database this ggp reads", path.display()),
            ));
        }
        Ok(db)
    }

    fn open_with(path: &Path, flags: OpenFlags) -> Result<Database, StoreError> {
        let read_only = flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY);
        let flags = flags | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let url = DatabaseUrl::sqlite(path);
        let conn = rusqlite::Connection::open_with_flags(path, flags)
            .map_err(|e| sqlite_error(&url, e))?;
        let mut db = Database {
            conn: Conn::sqlite(conn),
            url,
            read_only,
        };
        db.set_busy_timeout(DEFAULT_BUSY_TIMEOUT)?;
        if read_only {
            // Check that it is a match database of a version this ggp reads.
            let version = db.schema_version()?;
            if version > SCHEMA_VERSION {
                return Err(newer_tables(&db.url, &MATCH_SCHEMA, version));
            }
            if version == 0 {
                return Err(store_error(
                    StoreErrorKind::NotADatabase,
                    format!("{} is not a match database", path.display()),
                ));
            }
            return Ok(db);
        }
        // WAL: readers never block the writer, and a process killed mid-write leaves the last
        // committed step in place. FULL: each commit is synced, so it survives a power cut too.
        // Switching a new file to WAL needs it to itself, and SQLite does not wait for that (no
        // busy handler): another process opening it at the same moment is waited for here.
        let waited = std::time::Instant::now();
        loop {
            match db.conn.query_row("PRAGMA journal_mode = WAL", (), |row| {
                row.get::<_, String>(0)
            }) {
                Err(e) if e.kind == ErrorKind::Busy && waited.elapsed() < DEFAULT_BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                done => break done.map(drop).map_err(|e| db.error(e))?,
            }
        }
        db.conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(|e| db.error(e))?;
        db.migrate()?;
        Ok(db)
    }

    /// Where this database is.
    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// The connection, for a program that keeps tables of its own in the same database
    /// (created by migrations of its own, [`Database::migrate_schema`]): read-only when the database was opened
    /// with [`Database::open_existing`].
    pub fn connection(&self) -> &Conn {
        &self.conn
    }

    /// Which database this is.
    pub fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// How long to wait for another process's lock before failing with
    /// [`StoreErrorKind::Locked`].
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<(), StoreError> {
        match self.conn.as_sqlite() {
            Some(c) => c
                .busy_timeout(timeout)
                .map_err(|e| sqlite_error(&self.url, e)),
            None => self
                .conn
                .execute_batch(&format!("SET lock_timeout = {}", timeout.as_millis()))
                .map_err(|e| self.error(e)),
        }
    }

    fn error(&self, e: sql::Error) -> StoreError {
        sql_error(&self.url, e)
    }

    /// The version of the match tables (0: none).
    pub fn schema_version(&self) -> Result<usize, StoreError> {
        self.applied_version(&MATCH_SCHEMA)
            .map(|v| v.max(0) as usize)
    }

    /// Brings the match tables up to date ([`MATCH_SCHEMA`]). A SQLite file with tables but
    /// neither their history nor the old counter is someone else's, and refused.
    fn migrate(&mut self) -> Result<(), StoreError> {
        if self.conn.dialect() == Dialect::Sqlite {
            // On one snapshot: another process may be making the tables meanwhile (its history
            // table comes first, in a transaction of its own).
            self.conn.begin_read().map_err(|e| self.error(e))?;
            let foreign = self.has_foreign_tables();
            let _ = self.conn.commit();
            if foreign? {
                return Err(store_error(
                    StoreErrorKind::NotADatabase,
                    format!(
                        "{} is a SQLite database, but not a match database (it has other tables)",
                        self.url
                    ),
                ));
            }
        }
        self.migrate_schema(&MATCH_SCHEMA)
    }

    /// Whether the database has tables but neither the match tables' history nor the old
    /// counter.
    fn has_foreign_tables(&self) -> Result<bool, StoreError> {
        if self.history_version(&MATCH_SCHEMA)?.is_some() || self.legacy_version()? > 0 {
            return Ok(false);
        }
        let tables: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                (),
                |row| row.get(0),
            )
            .map_err(|e| self.error(e))?;
        Ok(tables > 0)
    }

    /// A PostgreSQL connection that was lost (the server restarted, the network failed) is
    /// made again; if that fails too, the writes fail, saying why, and the next batch tries
    /// again.
    fn reconnect_if_lost(&mut self) {
        if let DatabaseUrl::Postgres(url) = &self.url
            && self.conn.is_closed()
            && let Ok(conn) = pg_connect(url)
        {
            self.conn = conn;
        }
    }

    /// Runs `work` in a write transaction, committed if it succeeds, rolled back if not.
    fn in_transaction<T>(
        &self,
        work: impl FnOnce(&Conn) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn.begin_write().map_err(|e| self.error(e))?;
        match work(&self.conn) {
            Ok(v) => {
                self.conn.commit().map_err(|e| self.error(e))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.rollback();
                Err(e)
            }
        }
    }

    /// Writes one update in a transaction of its own.
    pub fn write(&mut self, update: &Update) -> Result<(), StoreError> {
        let url = self.url.clone();
        self.in_transaction(|conn| apply(conn, &url, update))
    }

    /// Marks an unfinished match as aborted, for `reason`; `false` if there is no such
    /// unfinished match.
    pub fn abort(&mut self, match_id: &str, reason: &str) -> Result<bool, StoreError> {
        let done = abort(&self.conn, match_id, reason).map_err(|e| self.error(e))?;
        self.checkpoint();
        Ok(done)
    }

    /// Copies what the write-ahead log holds into the database file, as far as readers allow
    /// without waiting for them, so that the file alone (copied, backed up) has every match
    /// that ended. Done when a match ends; a failure only leaves the log to SQLite's own
    /// checkpoints, so it is not an error. Nothing to do on PostgreSQL.
    pub fn checkpoint(&mut self) {
        if !self.read_only && self.conn.dialect() == Dialect::Sqlite {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", (), |_| Ok(()));
        }
    }

    /// Runs a batch of jobs in one transaction, each in a savepoint of its own so that one
    /// failing write (a duplicate match id) does not undo the others; then answers each.
    fn commit_batch(&mut self, mut jobs: Vec<Job>) {
        self.reconnect_if_lost();
        let path = self.url.clone();
        let conn = &self.conn;
        let fail = |e| sql_error(&path, e);
        let mut outcomes: Vec<Result<Outcome, StoreError>> = Vec::with_capacity(jobs.len());
        match conn.begin_write() {
            Err(e) => {
                let e = fail(e);
                outcomes.extend(jobs.iter().map(|_| Err(e.clone())));
            }
            Ok(()) => {
                for job in &mut jobs {
                    let outcome = match conn.savepoint("job") {
                        Err(e) => Err(fail(e)),
                        Ok(()) => {
                            let done = match job {
                                Job::Write(update, _) => {
                                    apply(conn, &path, update).map(|()| Outcome::Done(true))
                                }
                                Job::Abort(match_id, reason, _) => abort(conn, match_id, reason)
                                    .map(Outcome::Done)
                                    .map_err(fail),
                                Job::Flush(_) => Ok(Outcome::Done(true)),
                                Job::Run(work, _) => match work.take() {
                                    Some(work) => work(conn).map(Outcome::Value).map_err(fail),
                                    None => Ok(Outcome::Done(true)),
                                },
                            };
                            match done {
                                Ok(done) => conn.release("job").map(|()| done).map_err(fail),
                                Err(e) => {
                                    // Undo this job only.
                                    let _ = conn.rollback_to("job");
                                    Err(e)
                                }
                            }
                        }
                    };
                    outcomes.push(outcome);
                }
                if let Err(e) = conn.commit() {
                    let e = fail(e);
                    let _ = conn.rollback();
                    for outcome in &mut outcomes {
                        if outcome.is_ok() {
                            *outcome = Err(e.clone());
                        }
                    }
                }
            }
        }
        if jobs.iter().any(Job::ends_a_match) {
            self.checkpoint();
        }
        for (job, outcome) in jobs.into_iter().zip(outcomes) {
            // A requester that went away (Ctrl-C) no longer wants the answer.
            match job {
                Job::Write(_, reply) => drop(reply.send(outcome.map(|_| ()))),
                Job::Abort(_, _, reply) => drop(reply.send(outcome.map(|o| o.done()))),
                Job::Flush(reply) => drop(reply.send(outcome.map(|_| ()))),
                Job::Run(_, reply) => drop(reply.send(outcome.map(Outcome::value))),
            }
        }
    }

    /// Every match, oldest first.
    pub fn list(&self) -> Result<Vec<MatchSummary>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT m.match_id, m.game_name, m.start_time, m.status, m.roles, m.players,
                        m.goal_values, (SELECT count(*) FROM steps s WHERE s.match_ref = m.id)
                 FROM matches m ORDER BY m.start_time, m.id",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map((), |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, String>(6)?,
                    row.get::<_, i64>(7)?,
                ))
            })
            .map_err(|e| self.error(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (match_id, game_name, start_time, status, roles, players, goals, steps) =
                row.map_err(|e| self.error(e))?;
            out.push(MatchSummary {
                roles: self.parse(&match_id, &roles)?,
                players: self.parse(&match_id, &players)?,
                goal_values: self.parse(&match_id, &goals)?,
                match_id,
                game_name,
                start_time: start_time as u64,
                status,
                steps: steps as usize,
            });
        }
        Ok(out)
    }

    fn parse<T: serde::de::DeserializeOwned>(
        &self,
        match_id: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| {
            store_error(
                StoreErrorKind::NotADatabase,
                format!(
                    "the match database {} is damaged: match `{match_id}` has `{text}` where a list belongs ({e})",
                    self.url
                ),
            )
        })
    }

    /// The record of a match, as far as it was played.
    pub fn load(&self, match_id: &str) -> Result<MatchRecord, StoreError> {
        // One read transaction: a snapshot, even while a match is writing its next step.
        self.conn.begin_read().map_err(|e| self.error(e))?;
        let loaded = self.load_in(match_id);
        let _ = self.conn.commit();
        loaded
    }

    fn load_in(&self, match_id: &str) -> Result<MatchRecord, StoreError> {
        let tx = &self.conn;
        let row = tx
            .query_row(
                "SELECT id, game_name, rules, random_token, start_time, start_clock, play_clock,
                        roles, players, initial_state, initial_time, status, goal_values,
                        start_errors, abort_reason
                 FROM matches WHERE match_id = $1",
                [match_id],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, i64>(4)?,
                        row.get::<_, i64>(5)?,
                        row.get::<_, i64>(6)?,
                        row.get::<_, String>(7)?,
                        row.get::<_, String>(8)?,
                        row.get::<_, String>(9)?,
                        row.get::<_, i64>(10)?,
                        row.get::<_, String>(11)?,
                        row.get::<_, String>(12)?,
                        row.get::<_, String>(13)?,
                        row.get::<_, Option<String>>(14)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let Some((
            id,
            game_name,
            rules,
            random_token,
            start_time,
            start_clock,
            play_clock,
            roles,
            players,
            initial_state,
            initial_time,
            status,
            goals,
            start_errors,
            abort_reason,
        )) = row
        else {
            return Err(store_error(
                StoreErrorKind::NotFound,
                format!(
                    "no match `{match_id}` in {} (`ggp matches list` shows the matches)",
                    self.url
                ),
            ));
        };
        let roles: Vec<String> = self.parse(match_id, &roles)?;
        let mut record = MatchRecord {
            match_id: match_id.to_string(),
            game_name,
            random_token,
            start_time: start_time as u64,
            rules,
            player_names_from_host: self.parse(match_id, &players)?,
            start_clock: start_clock as u64,
            play_clock: play_clock as u64,
            states: vec![initial_state],
            moves: Vec::new(),
            state_times: vec![initial_time as u64],
            errors: Vec::new(),
            goal_values: self.parse(match_id, &goals)?,
            is_completed: status == "finished",
            is_aborted: status == "aborted",
            start_errors: self.parse(match_id, &start_errors)?,
            abort_reason,
            game_role_names: roles,
            percepts: Vec::new(),
            move_times: Vec::new(),
        };
        let mut statement = tx
            .prepare(
                "SELECT step, moves, errors, state, state_time, percepts, move_times FROM steps
                 WHERE match_ref = $1 ORDER BY step",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, Option<String>>(5)?,
                    row.get::<_, Option<String>>(6)?,
                ))
            })
            .map_err(|e| self.error(e))?;
        for row in rows {
            let (step, moves, errors, state, time, percepts, times) =
                row.map_err(|e| self.error(e))?;
            if step as usize != record.moves.len() + 1 {
                return Err(store_error(
                    StoreErrorKind::NotADatabase,
                    format!(
                        "the match database {} is damaged: match `{match_id}` has step {step} after step {}",
                        self.url,
                        record.moves.len()
                    ),
                ));
            }
            record.moves.push(self.parse(match_id, &moves)?);
            if let Some(percepts) = percepts {
                record.percepts.push(self.parse(match_id, &percepts)?);
            }
            // Kept since the match store's V4: a match's steps have them all or none.
            if let Some(times) = times {
                record.move_times.push(self.parse(match_id, &times)?);
            }
            record.errors.push(self.parse(match_id, &errors)?);
            record.states.push(state);
            record.state_times.push(time as u64);
        }
        // The last state's errors: none yet (no move was made from it).
        record
            .errors
            .push(vec![String::new(); record.game_role_names.len()]);
        Ok(record)
    }
}

fn apply(conn: &Conn, path: &DatabaseUrl, u: &Update) -> Result<(), StoreError> {
    let fail = |e| sql_error(path, e);
    if let Some(h) = &u.header {
        let inserted = conn
            .prepare_cached(
                "INSERT INTO matches (match_id, game_name, rules, random_token, start_time,
                    start_clock, play_clock, roles, players, initial_state, initial_time,
                    status, goal_values)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'unfinished', '[]')",
            )
            .map_err(fail)?
            .execute(params![
                u.match_id,
                h.game_name,
                h.rules,
                h.random_token,
                h.start_time as i64,
                h.start_clock as i64,
                h.play_clock as i64,
                json(&h.roles),
                json(&h.players),
                h.initial_state,
                h.initial_time as i64,
            ]);
        if let Err(e) = inserted {
            if e.kind == ErrorKind::Constraint {
                return Err(store_error(
                    StoreErrorKind::Duplicate,
                    format!(
                        "a match with the id `{}` is already recorded in {path} (choose another id)",
                        u.match_id,
                    ),
                ));
            }
            return Err(fail(e));
        }
    }
    let id: i64 = conn
        .prepare_cached("SELECT id FROM matches WHERE match_id = $1")
        .map_err(fail)?
        .query_row([&u.match_id], |row| row.get(0))
        .optional()
        .map_err(fail)?
        .ok_or_else(|| {
            store_error(
                StoreErrorKind::NotFound,
                format!("no match `{}` in {path}", u.match_id),
            )
        })?;
    let mut insert = conn
        .prepare_cached(
            "INSERT INTO steps (match_ref, step, moves, errors, state, state_time, percepts,
                move_times)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .map_err(fail)?;
    for (k, step) in u.steps.iter().enumerate() {
        insert
            .execute(params![
                id,
                (u.first_step + k) as i64,
                json(&step.moves),
                json(&step.errors),
                step.state,
                step.time as i64,
                step.percepts.as_ref().map(json),
                step.move_times.as_ref().map(json),
            ])
            .map_err(fail)?;
    }
    let end_time = (u.status != "unfinished").then(|| now_ms() as i64);
    // A match another process ended (a server that took this one for gone recorded it as
    // aborted) is not brought back: the write fails, and the match stops.
    let changed = conn
        .prepare_cached(
            "UPDATE matches SET status = $1, goal_values = $2,
                end_time = coalesce(end_time, $3), start_errors = $4, abort_reason = $5
             WHERE id = $6 AND (status = 'unfinished' OR status = $1)",
        )
        .map_err(fail)?
        .execute(params![
            u.status,
            json(&u.goal_values),
            end_time,
            json(&u.start_errors),
            u.abort_reason,
            id
        ])
        .map_err(fail)?;
    if changed == 0 {
        let (status, reason): (String, Option<String>) = conn
            .query_row(
                "SELECT status, abort_reason FROM matches WHERE id = $1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(fail)?;
        return Err(store_error(
            StoreErrorKind::Other,
            format!(
                "the match `{}` was already recorded as {status} in {}{}",
                u.match_id,
                path,
                reason.map(|r| format!(" ({r})")).unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

/// Marks an unfinished match as aborted for `reason`, on a connection in a transaction the caller
/// commits; `false` if there is no such unfinished match.
pub fn abort(conn: &Conn, match_id: &str, reason: &str) -> sql::Result<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE matches SET status = 'aborted', end_time = $1, abort_reason = $2
             WHERE match_id = $3 AND status = 'unfinished'",
        )?
        .execute(params![now_ms() as i64, reason, match_id])?;
    Ok(changed > 0)
}

/// Work on the writer's connection for [`Store::execute`], its answer boxed.
type Work = Box<dyn FnOnce(&Conn) -> sql::Result<Box<dyn Any + Send>> + Send>;

enum Job {
    Write(Box<Update>, oneshot::Sender<Result<(), StoreError>>),
    Abort(String, String, oneshot::Sender<Result<bool, StoreError>>),
    Flush(oneshot::Sender<Result<(), StoreError>>),
    /// The work is taken out when it runs.
    Run(
        Option<Work>,
        oneshot::Sender<Result<Box<dyn Any + Send>, StoreError>>,
    ),
}

/// What a job did, before its transaction is committed.
enum Outcome {
    Done(bool),
    Value(Box<dyn Any + Send>),
}

impl Outcome {
    fn done(self) -> bool {
        matches!(self, Outcome::Done(true))
    }

    fn value(self) -> Box<dyn Any + Send> {
        match self {
            Outcome::Value(v) => v,
            Outcome::Done(done) => Box::new(done),
        }
    }
}

impl Job {
    /// Whether the job ends a match, after which the database is checkpointed.
    fn ends_a_match(&self) -> bool {
        match self {
            Job::Write(update, _) => update.ends(),
            Job::Abort(..) => true,
            Job::Flush(_) | Job::Run(..) => false,
        }
    }
}

/// A match database on a writer thread, for async matches; cheap to clone and share.
#[derive(Clone)]
pub struct Store {
    jobs: mpsc::Sender<Job>,
    url: Arc<DatabaseUrl>,
}

impl Store {
    /// Opens (creating or migrating) the database and starts its writer thread.
    pub fn open(url: &DatabaseUrl) -> Result<Store, StoreError> {
        Ok(Store::new(Database::open(url)?))
    }

    /// Runs an open database on a writer thread of its own, which ends when the last clone of
    /// the store is dropped.
    pub fn new(mut db: Database) -> Store {
        let (jobs, queue) = mpsc::channel::<Job>();
        let url = Arc::new(db.url().clone());
        std::thread::Builder::new()
            .name("ggp-match-db".into())
            .spawn(move || {
                while let Ok(first) = queue.recv() {
                    let mut batch = vec![first];
                    while batch.len() < MAX_BATCH {
                        match queue.try_recv() {
                            Ok(job) => batch.push(job),
                            Err(_) => break,
                        }
                    }
                    db.commit_batch(batch);
                }
            })
            .expect("a thread can be started");
        Store { jobs, url }
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    fn closed(&self) -> StoreError {
        store_error(
            StoreErrorKind::Closed,
            format!("the writer of the match database {} has stopped", self.url),
        )
    }

    /// Sends a job; the future completes with its answer.
    fn send<T: Send + 'static>(
        &self,
        job: Job,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + use<T> {
        let sent = self.jobs.send(job).is_ok();
        let closed = self.closed();
        async move {
            if !sent {
                return Err(closed);
            }
            answer.await.unwrap_or(Err(closed))
        }
    }

    /// A writer for one match: each [`MatchWriter::save`] adds what is new in the record.
    pub fn writer(&self) -> MatchWriter {
        MatchWriter {
            store: self.clone(),
            begun: false,
            written: 0,
        }
    }

    /// Marks an unfinished match as aborted for `reason` (after the writes already sent);
    /// `false` if there is no such unfinished match.
    pub fn abort(
        &self,
        match_id: &str,
        reason: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send + use<> {
        let (reply, answer) = oneshot::channel();
        self.send(
            Job::Abort(match_id.to_string(), reason.to_string(), reply),
            answer,
        )
    }

    /// Runs `work` on the writer's connection, in a transaction (and a savepoint of its own,
    /// so that its failure undoes only its own changes) committed with the writes waiting at
    /// the same moment; the future completes with its answer once that is durable. For a
    /// program that keeps tables of its own in the database (see [`Schema`]): all writes
    /// of a process go through one writer, so they never wait on each other's locks.
    pub fn execute<T, W>(
        &self,
        work: W,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + use<T, W>
    where
        T: Send + 'static,
        W: FnOnce(&Conn) -> sql::Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let work: Work =
            Box::new(move |conn| work(conn).map(|v| Box::new(v) as Box<dyn Any + Send>));
        let sent = self.send(Job::Run(Some(work), reply), answer);
        async move {
            let value = sent.await?;
            Ok(*value
                .downcast::<T>()
                .expect("the writer answers with the work's own value"))
        }
    }

    /// Completes when every write sent before it is durable.
    pub fn flush(&self) -> impl Future<Output = Result<(), StoreError>> + Send + use<> {
        let (reply, answer) = oneshot::channel();
        self.send(Job::Flush(reply), answer)
    }
}

/// Records one match in a [`Store`], step by step.
pub struct MatchWriter {
    store: Store,
    begun: bool,
    written: usize,
}

impl MatchWriter {
    /// Sends what `record` adds since the last save (the match itself the first time); the
    /// future completes when it is committed and synced.
    pub fn save(
        &mut self,
        record: &MatchRecord,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + use<> {
        let update = Update::since(record, !self.begun, self.written);
        self.begun = true;
        self.written = record.moves.len();
        let (reply, answer) = oneshot::channel();
        self.store.send(Job::Write(Box::new(update), reply), answer)
    }
}
