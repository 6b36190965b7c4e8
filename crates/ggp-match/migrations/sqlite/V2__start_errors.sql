-- What went wrong with each player's START (a JSON array in role order, empty strings
-- for players that were ready), and why an aborted match was aborted.
-- (Migration 2 of the schema before refinery: a database it made at version 2 or later
-- has this one recorded as applied when it is first opened.)
ALTER TABLE matches ADD COLUMN start_errors TEXT NOT NULL DEFAULT '[]';
ALTER TABLE matches ADD COLUMN abort_reason TEXT;
