//! The match database: schema and migrations, what bad files and locks give, duplicate ids,
//! aborting, and a record read back exactly as the manager made it.

use std::path::PathBuf;
use std::time::Duration;

use ggp_match::{
    Database, DatabaseUrl, MatchConfig, MatchError, MatchRecord, PlayerSpec, SCHEMA_VERSION, Store,
    StoreError, StoreErrorKind, Update, run_match,
};
use ggp_play::StrategyKind;

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn temp_db(name: &str) -> DatabaseUrl {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("store");
    DatabaseUrl::sqlite(ggp_testdata::fresh_sqlite_file(&dir, name))
}

/// The file of a SQLite database.
fn file(url: &DatabaseUrl) -> &std::path::Path {
    url.as_path().expect("a SQLite file")
}

fn config(id: &str) -> MatchConfig {
    MatchConfig {
        match_id: id.into(),
        game_name: "tictactoe".into(),
        rules: TICTACTOE.into(),
        start_clock: Duration::from_secs(10),
        play_clock: Duration::from_secs(10),
        grace: Duration::from_secs(1),
        seed: 3,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    }
}

fn builtins() -> Vec<PlayerSpec> {
    vec![
        PlayerSpec::Builtin(StrategyKind::Random),
        PlayerSpec::Builtin(StrategyKind::Legal),
    ]
}

/// Plays a match of built-in players recorded in `store`; also returns every record the
/// manager handed over, in order.
async fn recorded(store: &Store, id: &str) -> (Result<MatchRecord, MatchError>, Vec<MatchRecord>) {
    let mut writer = store.writer();
    let mut seen = Vec::new();
    let seen_ref = &mut seen;
    let save = move |r: &MatchRecord| {
        seen_ref.push(r.clone());
        writer.save(r)
    };
    let result = run_match(config(id), builtins(), |_| {}, save)
        .await
        .map(|f| f.record);
    (result, seen)
}

#[test]
fn a_new_database_has_the_current_schema_and_reopens() {
    let path = temp_db("new.sqlite");
    let db = Database::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(db.list().unwrap().is_empty());
    drop(db);
    let db = Database::open_existing(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
    let mode: String = rusqlite::Connection::open(file(&path))
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // The old counter, out of an older ggp's reach.
    let counter: i64 = rusqlite::Connection::open(file(&path))
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(counter, ggp_match::LEGACY_MOVED);
}

#[test]
fn a_newer_schema_is_refused() {
    let path = temp_db("newer.sqlite");
    drop(Database::open(&path).unwrap());
    let conn = rusqlite::Connection::open(file(&path)).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let e = Database::open(&path).err().unwrap();
    assert_eq!(e.kind, StoreErrorKind::NewerSchema);
    assert!(e.message.contains("schema version 99"), "{e}");
}

#[test]
fn bad_files_and_paths_are_errors_that_name_them() {
    // Not SQLite at all.
    let garbage = temp_db("garbage.sqlite");
    std::fs::write(file(&garbage), vec![b'x'; 4096]).unwrap();
    for e in [
        Database::open(&garbage).err().unwrap(),
        Database::open_existing(&garbage).err().unwrap(),
    ] {
        assert_eq!(e.kind, StoreErrorKind::NotADatabase, "{e}");
        assert!(e.message.contains("garbage.sqlite"), "{e}");
    }
    // Someone else's SQLite database.
    let foreign = temp_db("foreign.sqlite");
    rusqlite::Connection::open(file(&foreign))
        .unwrap()
        .execute_batch("CREATE TABLE accounts (id INTEGER)")
        .unwrap();
    let e = Database::open(&foreign).err().unwrap();
    assert_eq!(e.kind, StoreErrorKind::NotADatabase);
    assert!(e.message.contains("not a match database"), "{e}");
    // A directory that cannot be made: its parent is a file.
    let a_file = temp_db("a-file");
    std::fs::write(file(&a_file), "").unwrap();
    let e = Database::open(&DatabaseUrl::sqlite(
        file(&a_file).join("sub/matches.sqlite"),
    ))
    .err()
    .unwrap();
    assert_eq!(e.kind, StoreErrorKind::Open);
    assert!(e.message.contains("cannot create the directory"), "{e}");
    // A directory where the file should be.
    let dir = temp_db("a-dir");
    std::fs::create_dir_all(file(&dir)).unwrap();
    assert_eq!(
        Database::open(&dir).err().unwrap().kind,
        StoreErrorKind::Open
    );
    // Nothing there, when reading.
    let e = Database::open_existing(&temp_db("missing.sqlite"))
        .err()
        .unwrap();
    assert_eq!(e.kind, StoreErrorKind::NotFound);
    assert!(e.message.contains("there is no match database at"), "{e}");
}

/// A fresh PostgreSQL database (see [`ggp_testdata::fresh_postgres`]).
fn temp_pg(name: &str) -> Option<DatabaseUrl> {
    ggp_testdata::fresh_postgres(&format!("store_{name}")).map(|url| url.parse().unwrap())
}

fn sqlite(name: &str) -> Option<DatabaseUrl> {
    Some(temp_db(&format!("{name}.sqlite")))
}

/// Runs a test on SQLite and on PostgreSQL, each database made by `fresh`.
macro_rules! on_both {
    ($test:ident, $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $test(sqlite).await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            if std::env::var("GGP_TEST_POSTGRES").is_ok() {
                $test(temp_pg).await;
            } else {
                eprintln!("skipped on PostgreSQL: GGP_TEST_POSTGRES is not set");
            }
        }
    };
}

on_both!(
    roundtrip,
    a_record_reads_back_as_the_manager_made_it_step_by_step,
    a_record_reads_back_as_the_manager_made_it_on_postgresql
);
on_both!(
    duplicate,
    a_duplicate_match_id_is_refused_before_anything_is_sent,
    a_duplicate_match_id_is_refused_on_postgresql
);
on_both!(
    aborting,
    aborting_marks_only_an_unfinished_match,
    aborting_marks_only_an_unfinished_match_on_postgresql
);
on_both!(
    other_work,
    other_work_runs_on_the_writer_and_fails_alone,
    other_work_runs_on_the_writer_and_fails_alone_on_postgresql
);

async fn roundtrip(fresh: fn(&str) -> Option<DatabaseUrl>) {
    let path = fresh("roundtrip").unwrap();
    let store = Store::open(&path).unwrap();
    let (result, seen) = recorded(&store, "roundtrip").await;
    let record = result.unwrap();
    assert!(record.is_completed);
    // Before START, after every step (the last one completes the match).
    assert_eq!(seen.len(), record.moves.len() + 1);
    assert_eq!(seen.last().unwrap(), &record);
    let db = Database::open_existing(&path).unwrap();
    assert_eq!(db.load("roundtrip").unwrap(), record);
    let listed = db.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status, "finished");
    assert_eq!(listed[0].steps, record.moves.len());
    assert_eq!(listed[0].players, ["random", "legal"]);
    // Every intermediate record, written to a database of its own one save at a time, reads
    // back as it was (unfinished, errors with an entry per state).
    let partial = fresh("partial").unwrap();
    let mut db = Database::open(&partial).unwrap();
    for (k, r) in seen.iter().enumerate() {
        let written = if k == 0 { 0 } else { seen[k - 1].moves.len() };
        db.write(&Update::since(r, k == 0, written)).unwrap();
        let back = db.load("roundtrip").unwrap();
        assert_eq!(&back, r, "after save {k}");
        assert_eq!(back.errors.len(), back.states.len());
    }
}

async fn duplicate(fresh: fn(&str) -> Option<DatabaseUrl>) {
    let path = fresh("duplicate").unwrap();
    let store = Store::open(&path).unwrap();
    let (first, _) = recorded(&store, "same").await;
    let first = first.unwrap();
    let (second, seen) = recorded(&store, "same").await;
    let e = second.unwrap_err();
    assert!(matches!(e, MatchError::Record(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("a match with the id `same` is already recorded"),
        "{e}"
    );
    // Only the record before START was offered: the match never started.
    assert_eq!(seen.len(), 1);
    let db = Database::open_existing(&path).unwrap();
    assert_eq!(db.load("same").unwrap(), first);
}

async fn aborting(fresh: fn(&str) -> Option<DatabaseUrl>) {
    let path = fresh("abort").unwrap();
    let store = Store::open(&path).unwrap();
    let (done, _) = recorded(&store, "done").await;
    done.unwrap();
    // A match that played two steps and stopped there.
    let (_, seen) = recorded(&store, "model").await;
    let mut writer = store.writer();
    let mut partial = seen[2].clone();
    partial.match_id = "cut".into();
    writer.save(&partial).await.unwrap();
    assert!(store.abort("cut", "a test").await.unwrap());
    assert!(
        !store.abort("cut", "a test").await.unwrap(),
        "already aborted"
    );
    // The match's own writer, going on (a server that another took for gone): refused, and
    // nothing of it is written.
    let mut more = seen[3].clone();
    more.match_id = "cut".into();
    let e = writer.save(&more).await.unwrap_err();
    assert!(
        e.message
            .contains("the match `cut` was already recorded as aborted")
            && e.message.contains("(a test)"),
        "{e}"
    );
    assert!(!store.abort("done", "a test").await.unwrap(), "finished");
    assert!(!store.abort("nothing", "a test").await.unwrap());
    let db = Database::open_existing(&path).unwrap();
    let cut = db.load("cut").unwrap();
    assert!(cut.is_aborted && !cut.is_completed);
    assert_eq!(cut.abort_reason.as_deref(), Some("a test"));
    assert_eq!(cut.moves, partial.moves);
    assert_eq!(db.load("done").unwrap().status(), "finished");
    let e = db.load("nothing").err().unwrap();
    assert_eq!(e.kind, StoreErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_stops_the_match_with_a_clear_error() {
    let path = temp_db("locked.sqlite");
    let mut db = Database::open(&path).unwrap();
    db.set_busy_timeout(Duration::from_millis(200)).unwrap();
    let store = Store::new(db);
    // Another process holds the write lock.
    let other = rusqlite::Connection::open(file(&path)).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (result, _) = recorded(&store, "locked").await;
    let e = result.unwrap_err();
    assert!(matches!(e, MatchError::Record(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("cannot record the match:"), "{e}");
    assert!(
        e.contains("locked.sqlite is locked by another process"),
        "{e}"
    );
    other.execute_batch("ROLLBACK").unwrap();
    // The lock gone, the same store records again.
    let (result, _) = recorded(&store, "unlocked").await;
    assert!(result.unwrap().is_completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_write_ends_the_match_as_aborted() {
    let mut calls = 0;
    let mut last = None;
    let last_ref = &mut last;
    let save = move |r: &MatchRecord| {
        calls += 1;
        *last_ref = Some(r.clone());
        let fail = calls == 3;
        async move {
            if fail {
                Err(StoreError {
                    kind: StoreErrorKind::Other,
                    message: "the disk is full".to_string(),
                })
            } else {
                Ok(())
            }
        }
    };
    let e = run_match(config("fails"), builtins(), |_| {}, save)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        MatchError::Record("cannot record step 2: the disk is full".into())
    );
    assert_eq!(
        last.as_ref().unwrap().abort_reason.as_deref(),
        Some("cannot record step 2: the disk is full")
    );
    let last = last.unwrap();
    assert!(last.is_aborted && !last.is_completed);
    assert_eq!(last.moves.len(), 2);
}

async fn other_work(fresh: fn(&str) -> Option<DatabaseUrl>) {
    let path = fresh("execute").unwrap();
    let store = Store::open(&path).unwrap();
    let (played, _) = recorded(&store, "execute.1").await;
    played.unwrap();
    // A read and a write of the program's own, on the writer's connection.
    let count = store
        .execute(|conn| conn.query_row("SELECT count(*) FROM matches", (), |r| r.get::<_, i64>(0)))
        .await
        .unwrap();
    assert_eq!(count, 1);
    let failing = store.execute(|conn| {
        conn.execute(
            "UPDATE matches SET game_name = 'changed' WHERE match_id = 'execute.1'",
            (),
        )?;
        conn.execute("INSERT INTO no_such_table VALUES (1)", ())
    });
    let passing = store.execute(|conn| {
        conn.execute(
            "UPDATE matches SET abort_reason = 'kept' WHERE match_id = 'execute.1'",
            (),
        )
    });
    let (failing, passing) = tokio::join!(failing, passing);
    let e = failing.unwrap_err();
    assert!(e.message.contains("no_such_table"), "{e}");
    assert_eq!(passing.unwrap(), 1);
    store.flush().await.unwrap();
    // What the failing work changed before it failed is undone; the other work is kept.
    let db = Database::open_existing(&path).unwrap();
    let (name, reason): (String, Option<String>) = db
        .connection()
        .query_row(
            "SELECT game_name, abort_reason FROM matches WHERE match_id = 'execute.1'",
            (),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(name, "tictactoe");
    assert_eq!(reason.as_deref(), Some("kept"));
}

/// On PostgreSQL as with SQLite files: reading an empty database is an error naming it, and
/// creates nothing; opening it to write creates the schema, which then reads.
#[test]
fn an_empty_postgresql_database_is_not_read_as_one_until_written() {
    let Some(url) = temp_pg("empty") else {
        return;
    };
    let e = Database::open_existing(&url).err().unwrap();
    assert_eq!(e.kind, StoreErrorKind::NotFound, "{e}");
    assert!(e.message.contains("no ggp tables"), "{e}");
    assert!(Database::open_existing(&url).is_err(), "still nothing");
    let db = Database::open(&url).unwrap();
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
    // The old counter, out of an older ggp's reach.
    let counter: i64 = db
        .connection()
        .query_row("SELECT max(version) FROM ggp_schema", (), |r| r.get(0))
        .unwrap();
    assert_eq!(counter, ggp_match::LEGACY_MOVED);
    drop(db);
    let db = Database::open_existing(&url).unwrap();
    assert!(db.list().unwrap().is_empty());
    // An unreachable server names itself and why.
    let e = Database::open_existing(&"postgres://nobody@127.0.0.1:1/x".parse().unwrap())
        .err()
        .unwrap();
    assert_eq!(e.kind, StoreErrorKind::Open);
    assert!(
        e.message.contains("127.0.0.1:1") && e.message.contains("refused"),
        "{e}"
    );
}

on_both!(
    spelling,
    names_are_recorded_as_the_rules_spell_them,
    names_are_recorded_as_the_rules_spell_them_on_postgresql
);

/// GDL is read without case, but what is recorded keeps the rules' own spelling (other
/// programs compare symbols with their case): moves spelled `PlaY` and `WaiT` in the rules are
/// so in the record read back, on either database, and the rules are kept as given.
async fn spelling(fresh: fn(&str) -> Option<DatabaseUrl>) {
    let path = fresh("spelling").unwrap();
    let store = Store::open(&path).unwrap();
    let rules = TICTACTOE.replace("play", "PlaY").replace("wait", "WaiT");
    let mut writer = store.writer();
    let save = move |r: &MatchRecord| writer.save(r);
    let config = MatchConfig {
        rules: rules.clone(),
        ..config("spelling")
    };
    let played = run_match(config, builtins(), |_| {}, save).await.unwrap();
    let db = Database::open_existing(&path).unwrap();
    let back = db.load("spelling").unwrap();
    assert_eq!(back, played.record);
    assert_eq!(back.rules, rules);
    let moves: Vec<&String> = back.moves.iter().flatten().collect();
    assert!(!moves.is_empty());
    for m in moves {
        assert!(
            m.starts_with("(PlaY ") || m == "WaiT",
            "a move not as the rules spell it: {m}"
        );
    }
}

/// A database whose history records a match migration this build does not have was written
/// by a newer ggp: refused, saying so, on either database.
#[test]
fn a_migration_newer_than_this_build_is_refused() {
    for url in [sqlite("newer-history"), temp_pg("newer_history")]
        .into_iter()
        .flatten()
    {
        let db = Database::open(&url).unwrap();
        db.connection()
            .execute(
                &format!(
                    "INSERT INTO {} (version, name, applied_on, checksum)
                     VALUES ($1, 'future', '2100-01-01T00:00:00Z', '1')",
                    ggp_match::MATCH_SCHEMA.history
                ),
                [SCHEMA_VERSION as i64 + 1],
            )
            .unwrap();
        drop(db);
        let e = Database::open(&url).err().unwrap();
        assert_eq!(e.kind, StoreErrorKind::NewerSchema, "{e}");
        assert!(
            e.message.contains(&format!(
                "match tables at version {}, newer than this ggp knows",
                SCHEMA_VERSION + 1
            )),
            "{e}"
        );
        let e = Database::open_existing(&url).err().unwrap();
        assert_eq!(e.kind, StoreErrorKind::NewerSchema, "{e}");
    }
}

/// A database the old code made at its last version lacks the tables' later migrations (the
/// players' move times, V4): read, it is brought up to date first (which needs write access),
/// the old counter moved out of an old ggp's reach; read again, it is read as it is.
#[test]
fn an_old_database_is_brought_up_to_date_when_first_read() {
    let url = temp_db("old-read.sqlite");
    ggp_testdata::legacy_schema::sqlite_at(
        file(&url),
        ggp_match::LEGACY_LAST,
        "INSERT INTO matches (match_id, game_name, rules, random_token, start_time, start_clock,
            play_clock, roles, players, initial_state, initial_time, status, goal_values)
         VALUES ('old', 'g', '(role r)', 't', 5, 1, 1, '[\"r\"]', '[\"p\"]', '()', 5,
            'aborted', '[]')",
    );
    let recorded = |url: &DatabaseUrl| -> (i64, i64) {
        let raw = rusqlite::Connection::open(file(url)).unwrap();
        let counter = raw
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        let history = format!("SELECT count(*) FROM {}", ggp_match::MATCH_SCHEMA.history);
        (counter, raw.query_row(&history, [], |r| r.get(0)).unwrap())
    };
    for read in 0..2 {
        let db = Database::open_existing(&url).unwrap();
        assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION, "read {read}");
        let listed = db.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].match_id.as_str(), listed[0].status.as_str()),
            ("old", "aborted")
        );
        assert!(db.load("old").unwrap().move_times.is_empty());
        drop(db);
        assert_eq!(
            recorded(&url),
            (
                ggp_match::LEGACY_MOVED + ggp_match::LEGACY_LAST as i64,
                SCHEMA_VERSION as i64
            ),
            "read {read}"
        );
    }
}

/// Processes that open a new database file at the same moment each find it made once; and an
/// old one (made before refinery, at the old version 2: the carry-over is recorded, then the
/// rest applied, two steps each may race in) carried over once.
#[test]
fn a_new_file_opened_by_several_at_once_is_made_once() {
    for round in 0..16 {
        let url = temp_db(&format!("at-once-{round}.sqlite"));
        if round % 2 == 1 {
            ggp_testdata::legacy_schema::sqlite_at(file(&url), 2, "");
        }
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    barrier.wait();
                    let db = Database::open(&url).unwrap_or_else(|e| panic!("round {round}: {e}"));
                    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
                });
            }
        });
        let db = Database::open_existing(&url).unwrap();
        let recorded: i64 = db
            .connection()
            .query_row(
                &format!("SELECT count(*) FROM {}", ggp_match::MATCH_SCHEMA.history),
                (),
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(recorded, SCHEMA_VERSION as i64);
    }
}
