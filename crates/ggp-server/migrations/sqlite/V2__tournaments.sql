-- Tournaments and the schedule (`ggp serve`, `ggp serve --worker`, `ggp tournament`).
-- Every process that plays matches is a row of `servers`, with a heartbeat; a served
-- match belongs to the server that plays it. A tournament is a set of players (names, as
-- registered or built in), a set of game versions (a JSON array of ids), clocks and a
-- format. A match to be played is a row of `scheduled` (its players in seat order, a JSON
-- array), `queued` until a server claims it (`claimed`, with the server), then `done`
-- once its match ended, or `failed` when it could not be started (why in `failure`); a
-- claimed row of a server that disappeared is queued again. `scheduled_seats` lists a
-- scheduled match's players, so that a registered player is never claimed for two matches
-- at once. A served match names the scheduled row it plays (every attempt does).
-- (Migration 5 of the schema before refinery: a database it made at version 5 or later
-- has this one recorded as applied when it is first opened.)
CREATE TABLE servers (
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
CREATE INDEX served_by_scheduled ON served_matches (scheduled_ref);
