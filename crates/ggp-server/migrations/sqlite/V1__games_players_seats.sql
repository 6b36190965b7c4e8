-- The Gamemaster's tables (`ggp serve`). Games have immutable versions (the rules, their
-- roles as a JSON array, the checker's warnings as a JSON array of `ggp check --format
-- json` objects, where they came from; `engine` and `fluents` are filled in when the
-- version has been analysed: `fast`, or why the reference engine plays it, and a JSON
-- array of fluents that can hold, for drawing boards). Registered players keep a SHA-256
-- of their owner's token; a removed player's row stays for its matches' history. A
-- served match links a row of `matches` (by its id; the row appears when the match
-- starts) to the game version it plays, with a row of `seats` per role: a registered
-- player, a built-in strategy or a person (`human`, with the SHA-256 of the seat's token).
-- (Migration 3 of the schema before refinery: a database it made at version 3 or later
-- has this one recorded as applied when it is first opened.)
CREATE TABLE games (
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
CREATE INDEX served_by_version ON served_matches (game_version_ref);
