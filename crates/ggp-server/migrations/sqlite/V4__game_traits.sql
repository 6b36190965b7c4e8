-- What the trial of a game version measured besides its engine (JSON: whether the roles move
-- in turn or at once, GDL-II, the board's size, how long a random match lasts), from which
-- the games' tags are made; versions analysed before it have none and are analysed again.
ALTER TABLE game_versions ADD COLUMN traits TEXT;
-- A featured game (one of the first `--games` directory's at the last start with one) is
-- listed first.
ALTER TABLE games ADD COLUMN featured INTEGER NOT NULL DEFAULT 0;
