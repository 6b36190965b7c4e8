-- The memory a game version's trial took (bytes at the peak of building its engine
-- and playing a few random games), from which a match's share of the server's budget is
-- reserved; versions analysed before it have none and are analysed again.
-- (Migration 6 of the schema before refinery: a database it made at version 6 or later
-- has this one recorded as applied when it is first opened.)
ALTER TABLE game_versions ADD COLUMN memory BIGINT;
