//! The schema of a match database, as migrations: numbered SQL files per database
//! (`migrations/sqlite/V1__matches.sql`, `migrations/postgres/V1__matches.sql`, …), embedded
//! and applied by refinery, which records each one applied in a history table. Every crate that
//! keeps tables in the database owns them as a [`Schema`] of its own, with its own files and
//! history table: [`MATCH_SCHEMA`] here (matches and their steps), the Gamemaster's in
//! `ggp-server`. Files are never changed once released (refinery refuses a database whose
//! applied migrations differ from the files); a change is a new file.
//!
//! Before refinery, one list of statements in this file made every table (the Gamemaster's
//! too), and one counter said how far a database had gone: SQLite's `user_version`, the
//! `version` of PostgreSQL's `ggp_schema`. A database with such a counter (version `k`, 1 to
//! [`LEGACY_LAST`]) and no history yet has, for each schema, the migrations version `k` held
//! recorded as applied ([`Schema::legacy`]) before the rest are applied; the counter is then
//! set to [`LEGACY_MOVED`] + `k` (also in a database made since, with `k` = 0: on PostgreSQL a
//! `ggp_schema` table is made for it), which a ggp from before refinery refuses as a version
//! newer than it knows.

use refinery::{Runner, Target};

use super::{Database, StoreError, StoreErrorKind, newer_schema, newer_tables, store_error};
use crate::sql::Dialect;

mod sqlite_files {
    refinery::embed_migrations!("migrations/sqlite");
}

mod postgres_files {
    refinery::embed_migrations!("migrations/postgres");
}

/// Tables of the match database that one crate owns, and how they are made.
pub struct Schema {
    /// Whose tables, for messages (`match`, `Gamemaster`).
    pub owner: &'static str,
    /// The table refinery records these migrations in.
    pub history: &'static str,
    /// The last migration's version: the files are `V1` to this, on each database.
    pub latest: i32,
    /// The migrations, for SQLite and for PostgreSQL (`embed_migrations!`'s `runner`).
    pub sqlite: fn() -> Runner,
    pub postgres: fn() -> Runner,
    /// How many of these migrations (`V1` to the answer) a database at version `k` of the
    /// schema before refinery holds.
    pub legacy: fn(usize) -> i32,
}

/// The match store's tables: `matches` and `steps`.
pub const MATCH_SCHEMA: Schema = Schema {
    owner: "match",
    history: "ggp_match_migrations",
    latest: 4,
    sqlite: sqlite_files::migrations::runner,
    postgres: postgres_files::migrations::runner,
    legacy: match_legacy,
};

/// The match tables' schema version this build writes.
pub const SCHEMA_VERSION: usize = MATCH_SCHEMA.latest as usize;

/// The last version of the schema before refinery.
pub const LEGACY_LAST: usize = 6;

/// Added to the old counter once a database is kept by refinery.
pub const LEGACY_MOVED: i64 = 1000;

/// Old migrations 1 and 2 are `V1` and `V2`, old 4 is `V3` (3, 5 and 6 were the
/// Gamemaster's).
fn match_legacy(version: usize) -> i32 {
    match version {
        0 => 0,
        1 => 1,
        2 | 3 => 2,
        _ => 3,
    }
}

/// The advisory lock PostgreSQL migrations take (any number, the same in every process).
const PG_MIGRATION_LOCK: i64 = 0x0067_6770_5f6d_6967;

impl Schema {
    /// The migrations for `dialect`, recorded in this schema's history table, applied in one
    /// transaction.
    fn runner(&self, dialect: Dialect) -> Runner {
        let mut runner = match dialect {
            Dialect::Sqlite => (self.sqlite)(),
            Dialect::Postgres => (self.postgres)(),
        };
        runner.set_migration_table_name(self.history);
        runner.set_grouped(true)
    }
}

impl Database {
    /// Brings `schema`'s tables up to date: records as applied what a database of the old
    /// counter holds (one transaction), refuses a database with migrations newer than this
    /// build's, applies the rest (one transaction: all or none) and sets the old counter (a
    /// crash between two steps leaves what the next open finishes). On PostgreSQL under an
    /// advisory lock, so that
    /// servers starting together migrate one after the other. On SQLite, processes opening a
    /// file at once may read the same history, and all but the first to write then fail (each
    /// transaction undone as a whole): a failure after which the history has moved on is
    /// another's step done, and the migration is run again from there (at most once a step);
    /// any other failure is the answer.
    pub fn migrate_schema(&mut self, schema: &Schema) -> Result<(), StoreError> {
        match self.conn.dialect() {
            Dialect::Sqlite => {
                let mut seen = self.history_version(schema)?;
                loop {
                    let Err(e) = self.migrate_unlocked(schema) else {
                        return Ok(());
                    };
                    let now = self.history_version(schema)?;
                    if now == seen {
                        return Err(e);
                    }
                    seen = now;
                }
            }
            Dialect::Postgres => {
                self.conn
                    .execute_batch(&format!("SELECT pg_advisory_lock({PG_MIGRATION_LOCK})"))
                    .map_err(|e| self.error(e))?;
                let done = self.migrate_unlocked(schema);
                let unlocked = self
                    .conn
                    .execute_batch(&format!("SELECT pg_advisory_unlock({PG_MIGRATION_LOCK})"))
                    .map_err(|e| self.error(e));
                done.and(unlocked)
            }
        }
    }

    fn migrate_unlocked(&mut self, schema: &Schema) -> Result<(), StoreError> {
        let legacy = self.legacy_version()?;
        let dialect = self.conn.dialect();
        if self.recorded_version(schema)? == 0 {
            let held = (schema.legacy)(legacy);
            if held > 0 {
                let baseline = schema.runner(dialect).set_target(Target::FakeVersion(held));
                self.run(schema, &baseline)?;
            }
        }
        let applied = self.recorded_version(schema)?;
        if applied > schema.latest {
            return Err(newer_tables(&self.url, schema, applied));
        }
        self.run(schema, &schema.runner(dialect))?;
        self.mark_moved(legacy)
    }

    fn run(&mut self, schema: &Schema, runner: &Runner) -> Result<(), StoreError> {
        self.conn.run_migrations(runner).map(drop).map_err(|e| {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            store_error(
                StoreErrorKind::Other,
                format!(
                    "cannot bring the {} tables of the match database {} up to date: {message}",
                    schema.owner, self.url
                ),
            )
        })
    }

    /// The version of the schema before refinery this database was at (0: none, a new
    /// database), whether or not it has been carried over since.
    pub(super) fn legacy_version(&self) -> Result<usize, StoreError> {
        let version = self.old_counter()?;
        let last = LEGACY_LAST as i64;
        if (0..=last).contains(&version) {
            Ok(version as usize)
        } else if (LEGACY_MOVED..=LEGACY_MOVED + last).contains(&version) {
            Ok((version - LEGACY_MOVED) as usize)
        } else {
            Err(newer_schema(
                &self.url,
                &format!("schema version {version}, newer than this ggp knows"),
            ))
        }
    }

    /// The old counter as it is: SQLite's `user_version`, the largest `version` of PostgreSQL's
    /// `ggp_schema` (0 without the table).
    fn old_counter(&self) -> Result<i64, StoreError> {
        match self.conn.dialect() {
            Dialect::Sqlite => self
                .conn
                .query_row("PRAGMA user_version", (), |row| row.get(0)),
            Dialect::Postgres => self
                .conn
                .query_row("SELECT to_regclass('ggp_schema') IS NOT NULL", (), |row| {
                    row.get::<_, bool>(0)
                })
                .and_then(|exists| {
                    if !exists {
                        return Ok(0);
                    }
                    self.conn.query_row(
                        "SELECT coalesce(max(version), 0) FROM ggp_schema",
                        (),
                        |r| r.get(0),
                    )
                }),
        }
        .map_err(|e| self.error(e))
    }

    /// The last migration of `schema` its history records, `None` if it has no history yet.
    pub(super) fn history_version(&self, schema: &Schema) -> Result<Option<i32>, StoreError> {
        let exists: bool = match self.conn.dialect() {
            Dialect::Sqlite => self.conn.query_row(
                "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = $1",
                [schema.history],
                |row| row.get(0),
            ),
            Dialect::Postgres => self.conn.query_row(
                "SELECT to_regclass($1) IS NOT NULL",
                [schema.history],
                |row| row.get(0),
            ),
        }
        .map_err(|e| self.error(e))?;
        if !exists {
            return Ok(None);
        }
        // The table's name is the schema's own constant, never a parameter from outside.
        self.conn
            .query_row(
                &format!("SELECT coalesce(max(version), 0) FROM {}", schema.history),
                (),
                |row| row.get(0),
            )
            .map(Some)
            .map_err(|e| self.error(e))
    }

    /// The last migration of `schema` its history records, 0 without a history or with one
    /// that records nothing yet: one another process has just made (refinery makes the table
    /// before the transaction that records the migrations), as good as none.
    fn recorded_version(&self, schema: &Schema) -> Result<i32, StoreError> {
        Ok(self.history_version(schema)?.unwrap_or(0))
    }

    /// How far `schema`'s tables are: its history's last migration, or what the old counter
    /// says of a database not carried over yet.
    pub fn applied_version(&self, schema: &Schema) -> Result<i32, StoreError> {
        match self.recorded_version(schema)? {
            0 => Ok((schema.legacy)(self.legacy_version()?)),
            version => Ok(version),
        }
    }

    /// Sets the old counter to [`LEGACY_MOVED`] + the version it had, which a ggp from before
    /// refinery refuses.
    fn mark_moved(&self, legacy: usize) -> Result<(), StoreError> {
        let moved = LEGACY_MOVED + legacy as i64;
        if self.old_counter()? == moved {
            return Ok(());
        }
        match self.conn.dialect() {
            Dialect::Sqlite => self
                .conn
                .execute_batch(&format!("PRAGMA user_version = {moved}")),
            // In a database made since too, where the old code would otherwise find no
            // version and fail on its first table, already there.
            Dialect::Postgres => self.conn.execute_batch(&format!(
                "BEGIN; CREATE TABLE IF NOT EXISTS ggp_schema (version BIGINT NOT NULL);
                 DELETE FROM ggp_schema; INSERT INTO ggp_schema (version) VALUES ({moved});
                 COMMIT"
            )),
        }
        .map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_are_numbered_from_one_to_the_latest_on_both_databases() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let runner = MATCH_SCHEMA.runner(dialect);
            let versions: Vec<i32> = runner
                .get_migrations()
                .iter()
                .map(|m| m.version())
                .collect();
            let mut sorted = versions.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (1..=MATCH_SCHEMA.latest).collect::<Vec<_>>());
        }
        // The schema before refinery ended at `V3`; those after it are refinery's alone.
        assert_eq!(match_legacy(LEGACY_LAST), 3);
    }
}
