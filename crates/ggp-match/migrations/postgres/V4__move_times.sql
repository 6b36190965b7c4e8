-- How long each player took to answer each PLAY (a JSON array in role order of milliseconds,
-- null for GDL-II's `random` role); NULL for the steps of matches recorded before it.
ALTER TABLE steps ADD COLUMN move_times TEXT;
