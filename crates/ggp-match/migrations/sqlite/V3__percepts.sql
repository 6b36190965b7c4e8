-- GDL-II: what each role saw of the step's joint move (a JSON array in role order of
-- arrays of terms); NULL in a GDL game.
-- (Migration 4 of the schema before refinery: a database it made at version 4 or later
-- has this one recorded as applied when it is first opened.)
ALTER TABLE steps ADD COLUMN percepts TEXT;
