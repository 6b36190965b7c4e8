//! The match database's schema as ggp kept it before its migrations were SQL files applied by
//! refinery: one list of statements for every table (the match store's and the Gamemaster's),
//! written for SQLite and turned into PostgreSQL's by replacing words, the version in SQLite's
//! `user_version` or PostgreSQL's `ggp_schema`. Kept, word for word, to make the databases
//! that code made, which the new code must recognise and carry over.

/// The migrations as the old code applied them: migration `k` took a database from version k
/// (SQLite's `user_version`, the largest `version` of PostgreSQL's `ggp_schema`) to k + 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: matches and their steps. `roles`, `players`, `goal_values`, `moves` and `errors` are
    // JSON arrays in role order; times are milliseconds since the Unix epoch. Step `k` (from 1)
    // holds the joint move made in state k - 1, its errors, and the state k it led to.
    "CREATE TABLE matches (
        id            INTEGER PRIMARY KEY,
        match_id      TEXT NOT NULL UNIQUE,
        game_name     TEXT NOT NULL,
        rules         TEXT NOT NULL,
        random_token  TEXT NOT NULL,
        start_time    INTEGER NOT NULL,
        start_clock   INTEGER NOT NULL,
        play_clock    INTEGER NOT NULL,
        roles         TEXT NOT NULL,
        players       TEXT NOT NULL,
        initial_state TEXT NOT NULL,
        initial_time  INTEGER NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('unfinished', 'finished', 'aborted')),
        goal_values   TEXT NOT NULL,
        end_time      INTEGER
    );
    CREATE TABLE steps (
        match_ref  INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        step       INTEGER NOT NULL CHECK (step >= 1),
        moves      TEXT NOT NULL,
        errors     TEXT NOT NULL,
        state      TEXT NOT NULL,
        state_time INTEGER NOT NULL,
        PRIMARY KEY (match_ref, step)
    ) WITHOUT ROWID;
    CREATE INDEX matches_by_start ON matches (start_time, id);",
    // 2: what went wrong with each player's START (a JSON array in role order, empty strings
    // for players that were ready), and why an aborted match was aborted.
    "ALTER TABLE matches ADD COLUMN start_errors TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE matches ADD COLUMN abort_reason TEXT;",
    // 3: the Gamemaster's tables (`ggp serve`). Games have immutable versions (the rules, their
    // roles as a JSON array, the checker's warnings as a JSON array of `ggp check --format
    // json` objects, where they came from; `engine` and `fluents` are filled in when the
    // version has been analysed: `fast`, or why the reference engine plays it, and a JSON
    // array of fluents that can hold, for drawing boards). Registered players keep a SHA-256
    // of their owner's token; a removed player's row stays for its matches' history. A
    // served match links a row of `matches` (by its id; the row appears when the match
    // starts) to the game version it plays, with a row of `seats` per role: a registered
    // player, a built-in strategy or a person (`human`, with the SHA-256 of the seat's token).
    "CREATE TABLE games (
        id      INTEGER PRIMARY KEY,
        key     TEXT NOT NULL UNIQUE,
        created INTEGER NOT NULL
    );
    CREATE TABLE game_versions (
        id       INTEGER PRIMARY KEY,
        game_ref INTEGER NOT NULL REFERENCES games (id),
        version  INTEGER NOT NULL CHECK (version >= 1),
        rules    TEXT NOT NULL,
        hash     TEXT NOT NULL,
        roles    TEXT NOT NULL,
        warnings TEXT NOT NULL,
        source   TEXT NOT NULL,
        created  INTEGER NOT NULL,
        engine   TEXT,
        fluents  TEXT,
        UNIQUE (game_ref, version)
    );
    CREATE TABLE players (
        id           INTEGER PRIMARY KEY,
        name         TEXT NOT NULL,
        url          TEXT NOT NULL,
        token_hash   TEXT NOT NULL,
        created      INTEGER NOT NULL,
        removed      INTEGER,
        status       TEXT NOT NULL DEFAULT 'unknown'
                     CHECK (status IN ('unknown', 'available', 'busy', 'unreachable')),
        info_name    TEXT,
        detail       TEXT,
        last_seen    INTEGER,
        last_checked INTEGER
    );
    CREATE UNIQUE INDEX players_by_name ON players (name COLLATE NOCASE) WHERE removed IS NULL;
    CREATE TABLE served_matches (
        match_id         TEXT PRIMARY KEY,
        game_version_ref INTEGER NOT NULL REFERENCES game_versions (id),
        created          INTEGER NOT NULL,
        failure          TEXT
    ) WITHOUT ROWID;
    CREATE TABLE seats (
        match_id   TEXT NOT NULL REFERENCES served_matches (match_id),
        seat       INTEGER NOT NULL CHECK (seat >= 0),
        kind       TEXT NOT NULL CHECK (kind IN ('player', 'builtin', 'human')),
        player_ref INTEGER REFERENCES players (id),
        name       TEXT NOT NULL,
        token_hash TEXT,
        PRIMARY KEY (match_id, seat)
    ) WITHOUT ROWID;
    CREATE INDEX seats_by_player ON seats (player_ref);
    CREATE INDEX served_by_version ON served_matches (game_version_ref);",
    // 4: GDL-II: what each role saw of the step's joint move (a JSON array in role order of
    // arrays of terms); NULL in a GDL game.
    "ALTER TABLE steps ADD COLUMN percepts TEXT;",
    // 5: tournaments and the schedule (`ggp serve`, `ggp serve --worker`, `ggp tournament`).
    // Every process that plays matches is a row of `servers`, with a heartbeat; a served
    // match belongs to the server that plays it. A tournament is a set of players (names, as
    // registered or built in), a set of game versions (a JSON array of ids), clocks and a
    // format. A match to be played is a row of `scheduled` (its players in seat order, a JSON
    // array), `queued` until a server claims it (`claimed`, with the server), then `done`
    // once its match ended, or `failed` when it could not be started (why in `failure`); a
    // claimed row of a server that disappeared is queued again. `scheduled_seats` lists a
    // scheduled match's players, so that a registered player is never claimed for two matches
    // at once. A served match names the scheduled row it plays (every attempt does).
    "CREATE TABLE servers (
        id        INTEGER PRIMARY KEY,
        kind      TEXT NOT NULL CHECK (kind IN ('web', 'worker', 'tournament')),
        host      TEXT NOT NULL,
        boot      TEXT NOT NULL,
        pid       INTEGER NOT NULL,
        started   INTEGER NOT NULL,
        heartbeat INTEGER NOT NULL,
        stopped   INTEGER
    );
    CREATE TABLE tournaments (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL,
        format      TEXT NOT NULL CHECK (format IN ('roundrobin', 'random', 'continuous')),
        versions    TEXT NOT NULL,
        players     TEXT NOT NULL,
        start_clock INTEGER NOT NULL,
        play_clock  INTEGER NOT NULL,
        rounds      INTEGER NOT NULL,
        seed        INTEGER NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('running', 'paused', 'finished')),
        created     INTEGER NOT NULL,
        finished    INTEGER
    );
    CREATE TABLE scheduled (
        id               INTEGER PRIMARY KEY,
        tournament_ref   INTEGER NOT NULL REFERENCES tournaments (id),
        round            INTEGER NOT NULL,
        game_version_ref INTEGER NOT NULL REFERENCES game_versions (id),
        players          TEXT NOT NULL,
        seed             INTEGER NOT NULL,
        status           TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
        server_ref       INTEGER REFERENCES servers (id),
        claimed          INTEGER,
        match_id         TEXT,
        attempts         INTEGER NOT NULL DEFAULT 0,
        failure          TEXT
    );
    CREATE INDEX scheduled_by_status ON scheduled (status, id);
    CREATE INDEX scheduled_by_tournament ON scheduled (tournament_ref, id);
    CREATE TABLE scheduled_seats (
        scheduled_ref INTEGER NOT NULL REFERENCES scheduled (id),
        player        TEXT NOT NULL,
        exclusive     INTEGER NOT NULL,
        PRIMARY KEY (scheduled_ref, player)
    ) WITHOUT ROWID;
    CREATE INDEX scheduled_seats_by_player ON scheduled_seats (player);
    ALTER TABLE served_matches ADD COLUMN server_ref INTEGER REFERENCES servers (id);
    ALTER TABLE served_matches ADD COLUMN scheduled_ref INTEGER REFERENCES scheduled (id);
    CREATE INDEX served_by_scheduled ON served_matches (scheduled_ref);",
    // 6: the memory a game version's trial took (bytes at the peak of building its engine
    // and playing a few random games), from which a match's share of the server's budget is
    // reserved; versions analysed before it have none and are analysed again.
    "ALTER TABLE game_versions ADD COLUMN memory INTEGER;",
];

/// Makes the SQLite file at `path` a database at version `version` of the old schema, as the
/// old code made it, in one transaction: the statements of `MIGRATIONS[..version]`, then
/// `rows` (statements without parameters, to fill the tables), and the version recorded in
/// `user_version`.
pub fn sqlite_at(path: &std::path::Path, version: usize, rows: &str) {
    let mut batch = String::from("BEGIN;");
    for migration in &MIGRATIONS[..version] {
        batch.push_str(migration);
        batch.push(';');
    }
    batch.push_str(rows);
    batch.push_str(&format!(";PRAGMA user_version = {version}; COMMIT;"));
    rusqlite::Connection::open(path)
        .and_then(|conn| conn.execute_batch(&batch))
        .expect("the old schema applies");
}

/// [`sqlite_at`] on the PostgreSQL database at `url` (which must exist): the statements turned
/// into PostgreSQL's as the old code turned them, the version in `ggp_schema`. Safe to call
/// from an async test (the blocking client runs on a thread of its own).
pub fn postgres_at(url: &str, version: usize, rows: &str) {
    let mut batch =
        String::from("BEGIN; CREATE TABLE IF NOT EXISTS ggp_schema (version BIGINT NOT NULL);");
    for migration in &MIGRATIONS[..version] {
        batch.push_str(&old_postgres_ddl(migration));
        batch.push(';');
    }
    batch.push_str(rows);
    batch.push_str(&format!(
        ";DELETE FROM ggp_schema; INSERT INTO ggp_schema (version) VALUES ({version}); COMMIT;"
    ));
    let url = url.to_string();
    std::thread::spawn(move || {
        postgres::Client::connect(&url, postgres::NoTls)
            .and_then(|mut client| client.batch_execute(&batch))
            .expect("the old schema applies");
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

/// How the old code turned a migration written for SQLite into PostgreSQL's.
fn old_postgres_ddl(sql: &str) -> String {
    sql.replace(
        "INTEGER PRIMARY KEY",
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    )
    .replace("INTEGER", "BIGINT")
    .replace(") WITHOUT ROWID", ")")
    .replace("(name COLLATE NOCASE)", "(lower(name))")
}
