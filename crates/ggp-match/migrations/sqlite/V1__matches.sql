-- Matches and their steps. `roles`, `players`, `goal_values`, `moves` and `errors` are
-- JSON arrays in role order; times are milliseconds since the Unix epoch. Step `k` (from 1)
-- holds the joint move made in state k - 1, its errors, and the state k it led to.
-- (Migration 1 of the schema before refinery: a database it made at version 1 or later
-- has this one recorded as applied when it is first opened.)
CREATE TABLE matches (
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
CREATE INDEX matches_by_start ON matches (start_time, id);
