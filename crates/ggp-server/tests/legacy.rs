//! Databases made by ggp before its migrations were SQL files applied by refinery (one list of
//! statements for every table, one counter): each version of that schema, with rows in every
//! table it had, is opened by the new code, on SQLite and on PostgreSQL. Its rows must read back,
//! the migrations it held must be recorded as applied (not applied again: that would fail, the
//! tables being there), the rest applied, and the old counter moved out of an old ggp's reach.

use std::path::PathBuf;

use ggp_match::{DatabaseUrl, LEGACY_LAST, LEGACY_MOVED, MATCH_SCHEMA, SCHEMA_VERSION};
use ggp_server::db::{Analysis, Db, SCHEMA};
use ggp_server::tournament;
use ggp_server::verdict::Verdict;
use ggp_testdata::legacy_schema;

#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

/// Rows for every table of the old schema at `version`, as statements without parameters.
fn rows(version: usize) -> String {
    let mut rows = String::from(
        "INSERT INTO matches (match_id, game_name, rules, random_token, start_time,
            start_clock, play_clock, roles, players, initial_state, initial_time, status,
            goal_values)
         VALUES ('old', 'tictactoe', '(role x) (role o)', 'token', 1000, 10, 5,
            '[\"x\",\"o\"]', '[\"alice\",\"random\"]', '( (cell 1 1 b) )', 1000, 'finished',
            '[100,0]');
         INSERT INTO steps (match_ref, step, moves, errors, state, state_time)
         SELECT id, 1, '[\"(mark 1 1)\",\"noop\"]', '[\"\",\"\"]', '( (cell 1 1 x) )', 2000
         FROM matches WHERE match_id = 'old';",
    );
    if version >= 2 {
        rows.push_str("UPDATE matches SET start_errors = '[\"\",\"late\"]';");
    }
    if version >= 3 {
        rows.push_str(
            "INSERT INTO games (key, created) VALUES ('tictactoe', 1000);
             INSERT INTO game_versions (game_ref, version, rules, hash, roles, warnings, source,
                created, engine, fluents)
             SELECT id, 1, '(role x) (role o)', 'hash', '[\"x\",\"o\"]', '[]', 'upload', 1000,
                'fast', '[]' FROM games;
             INSERT INTO players (name, url, token_hash, created)
             VALUES ('alice', 'http://127.0.0.1:1/', 'hash', 1000);
             INSERT INTO served_matches (match_id, game_version_ref, created)
             SELECT 'old', id, 1000 FROM game_versions;
             INSERT INTO seats (match_id, seat, kind, player_ref, name)
             SELECT 'old', 0, 'player', id, 'alice' FROM players;
             INSERT INTO seats (match_id, seat, kind, name) VALUES ('old', 1, 'builtin', 'random');",
        );
    }
    if version >= 5 {
        rows.push_str(
            "INSERT INTO servers (kind, host, boot, pid, started, heartbeat, stopped)
             VALUES ('web', 'gone', 'boot', 1, 1000, 1000, 2000);
             INSERT INTO tournaments (name, format, versions, players, start_clock, play_clock,
                rounds, seed, status, created, finished)
             SELECT 'old cup', 'roundrobin', '[' || id || ']', '[\"alice\",\"random\"]', 10, 5,
                1, 7, 'finished', 1000, 3000 FROM game_versions;",
        );
    }
    if version >= 6 {
        rows.push_str("UPDATE game_versions SET memory = 123;");
    }
    rows
}

/// A database at `version` of the old schema, with [`rows`].
fn old_database(backend: Backend, version: usize) -> DatabaseUrl {
    let name = format!("legacy_{version}");
    match backend {
        Backend::Sqlite => {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("legacy");
            let path = ggp_testdata::fresh_sqlite_file(&dir, &format!("{name}.sqlite"));
            legacy_schema::sqlite_at(&path, version, &rows(version));
            DatabaseUrl::sqlite(path)
        }
        Backend::Postgres => {
            let url = ggp_testdata::fresh_postgres(&name).expect("GGP_TEST_POSTGRES is set");
            legacy_schema::postgres_at(&url, version, &rows(version));
            url.parse().unwrap()
        }
    }
}

/// The old counter: SQLite's `user_version`, PostgreSQL's `ggp_schema`.
fn old_counter(url: &DatabaseUrl) -> i64 {
    let db = ggp_match::Database::open_existing(url).unwrap();
    let sql = if url.is_postgres() {
        "SELECT max(version) FROM ggp_schema"
    } else {
        "PRAGMA user_version"
    };
    db.connection().query_row(sql, (), |r| r.get(0)).unwrap()
}

/// How many migrations a history table records.
fn recorded(url: &DatabaseUrl, history: &str) -> i64 {
    let db = ggp_match::Database::open_existing(url).unwrap();
    db.connection()
        .query_row(&format!("SELECT count(*) FROM {history}"), (), |r| r.get(0))
        .unwrap()
}

/// Opens the database at old `version` with the new code (first with the match store alone,
/// as `ggp match` would, when `match_first`), and checks what it holds and that the
/// migrations it lacked apply.
async fn carried_over(backend: Backend, version: usize, match_first: bool) {
    let url = old_database(backend, version);
    if match_first {
        let db = ggp_match::Database::open(&url).unwrap();
        assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(db.applied_version(&SCHEMA).unwrap(), legacy_server(version));
        drop(db);
    }
    let db = Db::open(&url).unwrap_or_else(|e| panic!("version {version}: {e}"));
    let reader = ggp_match::Database::open_existing(&url).unwrap();
    assert_eq!(reader.applied_version(&MATCH_SCHEMA).unwrap(), 4);
    assert_eq!(reader.applied_version(&SCHEMA).unwrap(), 4);
    drop(reader);
    assert_eq!(recorded(&url, MATCH_SCHEMA.history), 4);
    assert_eq!(recorded(&url, SCHEMA.history), 4);
    assert_eq!(old_counter(&url), LEGACY_MOVED + version as i64);

    // The match and its step, as they were written.
    let record = db.record("old").await.unwrap();
    assert_eq!(record.moves, [["(mark 1 1)", "noop"]]);
    assert_eq!(record.states, ["( (cell 1 1 b) )", "( (cell 1 1 x) )"]);
    assert_eq!(record.goal_values, [100, 0]);
    assert!(record.is_completed);
    // Matches from before the old schema's 2 have no START errors (its column's default).
    let start_errors: &[&str] = if version >= 2 { &["", "late"] } else { &[] };
    assert_eq!(record.start_errors, start_errors);
    // The migration that came after the old schema's 4 (GDL-II's percepts) is there.
    db.store
        .execute(|c| c.execute("UPDATE steps SET percepts = '[[],[]]'", ()))
        .await
        .unwrap();

    if version >= 3 {
        let v = db.version("tictactoe", None).await.unwrap();
        assert_eq!((v.version, v.engine), (1, Some(Verdict::Fast)));
        assert_eq!(v.memory, (version >= 6).then_some(123));
        assert_eq!(db.player("alice").await.unwrap().url, "http://127.0.0.1:1/");
        let served = db.served("old").await.unwrap().unwrap();
        assert_eq!(served.seats.len(), 2);
        assert_eq!(served.seats[0].name, "alice");
    }
    if version >= 5 {
        let cups = tournament::tournaments(&db).await.unwrap();
        assert_eq!(cups.len(), 1);
        assert_eq!(cups[0].name, "old cup");
    }
    // What the Gamemaster's later migrations added: servers and the schedule (5), a version's
    // memory (6), its traits and a game's being featured (its migration 4); a game version to
    // analyse when there was none.
    let me = tournament::register(&db, "web", &tournament::Host::this())
        .await
        .unwrap();
    tournament::reap(
        &db,
        Some(me),
        &tournament::Host::this(),
        std::time::Duration::from_secs(60),
    )
    .await
    .unwrap();
    let added = db
        .add_version(ggp_server::db::NewVersion {
            key: "tictactoe".into(),
            rules: "(role x) (role o) (init (cell 1 1 b))".into(),
            hash: "other".into(),
            roles: vec!["x".into(), "o".into()],
            warnings: Vec::new(),
            source: "upload".into(),
        })
        .await
        .unwrap();
    let traits = ggp_server::traits::Traits {
        turns: Some(ggp_server::traits::Turns::InTurn),
        gdl2: false,
        gdl3: false,
        board: Some((3, 3)),
        steps: Some(7.5),
    };
    let analysis = Analysis {
        engine: Verdict::Fast,
        fluents: Vec::new(),
        memory: 456,
        traits: traits.clone(),
    };
    db.set_analysis(added.id, analysis).await.unwrap();
    let v = db.version("tictactoe", Some(added.version)).await.unwrap();
    assert_eq!((v.memory, v.traits), (Some(456), Some(traits)));
    db.set_featured(vec!["tictactoe".into()]).await.unwrap();
    let games = db.games().await.unwrap();
    assert!(games.iter().all(|g| g.featured == (g.key == "tictactoe")));
    drop(db);

    // Opened again: nothing more to do, nothing recorded twice.
    let db = Db::open(&url).unwrap();
    drop(db);
    assert_eq!(recorded(&url, MATCH_SCHEMA.history), 4);
    assert_eq!(recorded(&url, SCHEMA.history), 4);
}

/// How many of the Gamemaster's migrations old `version` held.
fn legacy_server(version: usize) -> i32 {
    match version {
        0..=2 => 0,
        3 | 4 => 1,
        5 => 2,
        _ => 3,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_old_sqlite_database_is_carried_over_with_its_rows() {
    for version in 1..=LEGACY_LAST {
        carried_over(Backend::Sqlite, version, false).await;
        carried_over(Backend::Sqlite, version, true).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_old_postgresql_database_is_carried_over_with_its_rows() {
    if std::env::var("GGP_TEST_POSTGRES").is_err() {
        eprintln!("skipped on PostgreSQL: GGP_TEST_POSTGRES is not set");
        return;
    }
    for version in 1..=LEGACY_LAST {
        carried_over(Backend::Postgres, version, version % 2 == 0).await;
    }
}
