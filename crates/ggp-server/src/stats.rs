//! Statistics over what the match store recorded, as Tiltyard's and the Dresden server's
//! users had them: a game's matches (how they ended, each role's mean goal, how long they
//! were, how many had a player's error) and a registered player's (per opponent, its error
//! and timeout rates, the time its matches' steps took against the play clock).
//!
//! Everything is aggregated by SQL in the database (SQLite's `json_each` and PostgreSQL's
//! `json_array_elements_text` read the JSON arrays of goals and errors, in the few fragments
//! [`Json`] writes for each), over the latest [`RECENT`] served matches at most: a game or a
//! player with 100,000 matches is counted in full (how many ended how) and described by its
//! latest 10,000, which the page says. What comes back is a row per role, per opponent (at
//! most [`OPPONENTS`]) or per distinct length, never a row per match.

use ggp_match::params;
use ggp_match::sql::{self, Conn, Dialect};
use serde::Serialize;

use crate::db::{Db, sql};
use crate::error::Error;

/// Matches described at most (the latest served ones); how many ended how is counted over
/// all of them.
pub const RECENT: i64 = 10_000;

/// Opponents listed at most on a player's page (those it played most).
pub const OPPONENTS: i64 = 100;

/// Bars of a histogram of lengths at most.
pub const HISTOGRAM_BARS: usize = 12;

/// The longest one statistics query may run on PostgreSQL, in milliseconds: past it the
/// server cancels it (a plan gone wrong, say on tables not analysed yet, would otherwise run
/// on long after the page's answer has timed out, holding a connection).
pub const QUERY_TIMEOUT_MS: u64 = 20_000;

/// How a game's served matches ended, over all of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ended {
    pub total: i64,
    pub finished: i64,
    /// Aborted: by an operator, the step limit, a match's memory budget.
    pub aborted: i64,
    /// Could not be played: the rules or the players failed (`failure` of the served match).
    pub errored: i64,
    /// Still being played, or never ended (a server that went).
    pub unfinished: i64,
}

/// A role of a game: its mean goal in finished matches, and how often its goal was the
/// highest, alone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleStats {
    pub role: String,
    pub mean_goal: Option<f64>,
    pub won_alone: i64,
    /// Finished matches with a goal for this role.
    pub matches: i64,
}

/// Lengths in joint moves of finished matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Lengths {
    pub matches: i64,
    pub mean: Option<f64>,
    pub median: Option<i64>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub histogram: Vec<Bucket>,
}

/// A bar of a histogram: matches of `from` to `to` joint moves (both included).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub from: i64,
    pub to: i64,
    pub matches: i64,
}

/// Matches (finished or aborted) in which a player erred: any error, START's included; a
/// timeout; an illegal or unparsable move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ErrorShare {
    pub matches: i64,
    pub with_errors: i64,
    pub with_timeouts: i64,
    pub with_illegal: i64,
}

/// A game's statistics, over the versions with the roles of `version`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameStats {
    pub key: String,
    pub version: i64,
    pub roles: Vec<String>,
    pub ended: Ended,
    /// Matches described below (the latest [`RECENT`] at most).
    pub described: i64,
    pub capped: bool,
    pub per_role: Vec<RoleStats>,
    pub lengths: Lengths,
    pub errors: ErrorShare,
}

/// A player's results against one opponent (another seat of its matches): won, drawn or
/// lost is its goal against the opponent's, in finished matches it did not fail.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Opponent {
    pub name: String,
    /// A registered player (it has a page), not a built-in or a person.
    pub registered: bool,
    pub played: i64,
    pub finished: i64,
    pub won: i64,
    pub drawn: i64,
    pub lost: i64,
    pub mean_goal: Option<f64>,
    /// Finished matches it failed (see [`crate::ratings::failed`]).
    pub failed: i64,
}

/// A registered player's statistics over its latest [`RECENT`] served matches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayerStats {
    pub matches: i64,
    pub capped: bool,
    /// Joint moves of its matches, and those of its moves that were errors, timeouts.
    pub moves: i64,
    pub errors: i64,
    pub timeouts: i64,
    /// Matches whose START it did not answer READY.
    pub start_failed: i64,
    pub opponents: Vec<Opponent>,
    pub move_time: MoveTime,
}

/// The time a player took to answer PLAY, from the request to its reply (or to the error that
/// stood for it), over the moves whose time the manager recorded (`moveTimes`: matches
/// recorded before it was kept have none).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MoveTime {
    pub moves: i64,
    pub mean_ms: Option<f64>,
    pub max_ms: Option<i64>,
    /// The mean of each move's time over its match's play clock.
    pub mean_of_clock: Option<f64>,
    /// Moves that took longer than the play clock.
    pub over_clock: i64,
}

/// The fragments of SQL that read JSON arrays, in each database's words.
struct Json(Dialect);

impl Json {
    /// A `FROM` item of the elements of the JSON array in `col`, named `a`.
    fn each(&self, col: &str, a: &str) -> String {
        match self.0 {
            Dialect::Sqlite => format!("json_each({col}) {a}"),
            Dialect::Postgres => {
                format!("json_array_elements_text({col}::json) WITH ORDINALITY {a}(v, k)")
            }
        }
    }

    /// The index (from 0) of an element of [`Json::each`].
    fn key(&self, a: &str) -> String {
        match self.0 {
            Dialect::Sqlite => format!("{a}.key"),
            Dialect::Postgres => format!("({a}.k - 1)"),
        }
    }

    /// The value of an element of [`Json::each`] (a number or text).
    fn value(&self, a: &str) -> String {
        match self.0 {
            Dialect::Sqlite => format!("{a}.value"),
            Dialect::Postgres => format!("{a}.v"),
        }
    }

    /// The element at index `idx` (an SQL expression) of the JSON array in `col`, or NULL.
    fn at(&self, col: &str, idx: &str) -> String {
        match self.0 {
            Dialect::Sqlite => format!("json_extract({col}, '$[' || ({idx}) || ']')"),
            Dialect::Postgres => format!("({col}::json ->> CAST({idx} AS INT))"),
        }
    }
}

fn num(expr: &str) -> String {
    format!("CAST({expr} AS DOUBLE PRECISION)")
}

/// A whole number that PostgreSQL would make a `numeric` (a `sum` of `bigint`s).
fn int(expr: &str) -> String {
    format!("CAST(coalesce({expr}, 0) AS BIGINT)")
}

/// The served matches of the game of version `$1` whose versions have its roles.
const GAME_MATCHES: &str = "FROM served_matches s
     JOIN game_versions v ON v.id = s.game_version_ref
     LEFT JOIN matches m ON m.match_id = s.match_id
     WHERE v.game_ref = (SELECT game_ref FROM game_versions WHERE id = $1)
       AND v.roles = (SELECT roles FROM game_versions WHERE id = $1)";

/// `counted`: the latest `$2` of [`GAME_MATCHES`].
fn counted() -> String {
    format!(
        "WITH counted AS (
            SELECT m.id, m.status, m.goal_values, m.start_errors, s.failure {GAME_MATCHES}
            ORDER BY s.created DESC, s.match_id DESC LIMIT $2)"
    )
}

/// Runs `work` with each of its statements limited to `timeout_ms` on PostgreSQL (SQLite's
/// plans for these queries follow their indexes: it has no such limit).
fn bounded<T>(
    conn: &Conn,
    timeout_ms: u64,
    work: impl FnOnce(&Conn) -> sql::Result<T>,
) -> sql::Result<T> {
    if conn.dialect() != Dialect::Postgres {
        return work(conn);
    }
    conn.execute_batch(&format!("SET statement_timeout = {timeout_ms}"))?;
    let out = work(conn);
    let reset = conn.execute_batch("RESET statement_timeout");
    let out = out?;
    reset?;
    Ok(out)
}

/// A query of statistics cancelled at [`QUERY_TIMEOUT_MS`] is the server's lack of room for
/// it now (503); any other failure is the database's.
fn read_error(e: sql::Error) -> Error {
    if e.message.contains("statement timeout") {
        Error::Unavailable(format!(
            "the statistics took longer than {} s to count, the most a query of them may take: try again later",
            QUERY_TIMEOUT_MS / 1000
        ))
    } else {
        sql(e)
    }
}

/// How the game's served matches ended, all of them.
fn ended(conn: &Conn, version: i64) -> sql::Result<Ended> {
    let text = format!(
        "SELECT CASE WHEN s.failure IS NOT NULL THEN 'errored'
                     ELSE coalesce(m.status, 'unfinished') END AS how, count(*)
         {GAME_MATCHES} GROUP BY how"
    );
    let mut ended = Ended::default();
    for row in conn.query(&text, [version])? {
        let (how, n): (String, i64) = (row.get(0)?, row.get(1)?);
        ended.total += n;
        match how.as_str() {
            "finished" => ended.finished += n,
            "aborted" => ended.aborted += n,
            "errored" => ended.errored += n,
            _ => ended.unfinished += n,
        }
    }
    Ok(ended)
}

/// Each role's mean goal and wins alone, by its index, over the finished matches counted.
fn per_role(conn: &Conn, version: i64, roles: &[String]) -> sql::Result<Vec<RoleStats>> {
    let j = Json(conn.dialect());
    let (g, h) = ("g", "h");
    let text = format!(
        "{counted}
         SELECT {gk}, {mean}, {wins}, count(*)
         FROM counted c CROSS JOIN {each_g}
         WHERE c.status = 'finished' AND c.failure IS NULL
         GROUP BY {gk} ORDER BY 1",
        counted = counted(),
        gk = j.key(g),
        mean = num(&format!("avg({})", num(&j.value(g)))),
        wins = int(&format!(
            "sum(CASE WHEN NOT EXISTS (SELECT 1 FROM {each_h}
                 WHERE {hk} <> {gk} AND {hv} >= {gv}) THEN 1 ELSE 0 END)",
            each_h = j.each("c.goal_values", h),
            hk = j.key(h),
            gk = j.key(g),
            hv = num(&j.value(h)),
            gv = num(&j.value(g)),
        )),
        each_g = j.each("c.goal_values", g),
    );
    let mut out: Vec<RoleStats> = roles
        .iter()
        .map(|role| RoleStats {
            role: role.clone(),
            mean_goal: None,
            won_alone: 0,
            matches: 0,
        })
        .collect();
    for row in conn.query(&text, params![version, RECENT])? {
        let k: i64 = row.get(0)?;
        if let Some(role) = usize::try_from(k).ok().and_then(|k| out.get_mut(k)) {
            role.mean_goal = row.get(1)?;
            role.won_alone = row.get(2)?;
            role.matches = row.get(3)?;
        }
    }
    Ok(out)
}

/// The finished matches counted, per length (joint moves): a row per distinct length.
fn lengths(conn: &Conn, version: i64) -> sql::Result<Vec<(i64, i64)>> {
    let text = format!(
        "{}
         SELECT n, count(*) FROM (
            SELECT (SELECT count(*) FROM steps t WHERE t.match_ref = c.id) AS n
            FROM counted c WHERE c.status = 'finished' AND c.failure IS NULL) x
         GROUP BY n ORDER BY n",
        counted()
    );
    conn.query(&text, params![version, RECENT])?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .collect()
}

/// 1 when a player's error of the match `c` (a step's, or START's) is like one of
/// `patterns`, else 0.
fn had(j: &Json, patterns: &[&str]) -> String {
    let like = |a: &str| {
        patterns
            .iter()
            .map(|p| format!("{} LIKE '{p}'", j.value(a)))
            .collect::<Vec<_>>()
            .join(" OR ")
    };
    format!(
        "CASE WHEN EXISTS (SELECT 1 FROM steps t CROSS JOIN {step_errors}
                           WHERE t.match_ref = c.id AND ({in_steps}))
               OR EXISTS (SELECT 1 FROM {start_errors} WHERE {at_start})
         THEN 1 ELSE 0 END",
        step_errors = j.each("t.errors", "e"),
        in_steps = like("e"),
        start_errors = j.each("c.start_errors", "f"),
        at_start = like("f"),
    )
}

/// Matches counted (finished or aborted) with a player's error, a timeout, an illegal move.
fn error_share(conn: &Conn, version: i64) -> sql::Result<ErrorShare> {
    let j = Json(conn.dialect());
    let text = format!(
        "{counted}
         SELECT count(*), {any}, {timeouts}, {illegal}
         FROM counted c WHERE c.status IN ('finished', 'aborted') AND c.failure IS NULL",
        counted = counted(),
        any = int(&format!("sum({})", had(&j, &["_%"]))),
        timeouts = int(&format!("sum({})", had(&j, &["timeout%"]))),
        illegal = int(&format!("sum({})", had(&j, &["illegal%", "unparsable%"]))),
    );
    conn.query_row(&text, params![version, RECENT], |r| {
        Ok(ErrorShare {
            matches: r.get(0)?,
            with_errors: r.get(1)?,
            with_timeouts: r.get(2)?,
            with_illegal: r.get(3)?,
        })
    })
}

/// The lengths' summary and histogram from the matches per length (`(length, matches)`,
/// in increasing length), in at most `bars` bars of equal width, the empty ones kept.
pub fn summarise_lengths(per_length: &[(i64, i64)], bars: usize) -> Lengths {
    let matches: i64 = per_length.iter().map(|&(_, n)| n).sum();
    let (Some(&(min, _)), Some(&(max, _))) = (per_length.first(), per_length.last()) else {
        return Lengths::default();
    };
    if matches <= 0 {
        return Lengths::default();
    }
    let total: i64 = per_length.iter().map(|&(len, n)| len * n).sum();
    let mut seen = 0;
    let median = per_length.iter().find_map(|&(len, n)| {
        seen += n;
        (2 * seen >= matches).then_some(len)
    });
    let bars = bars.max(1) as i64;
    let width = ((max - min + 1) + bars - 1) / bars;
    let mut histogram: Vec<Bucket> = (0..)
        .map(|b| min + b * width)
        .take_while(|&from| from <= max)
        .map(|from| Bucket {
            from,
            to: from + width - 1,
            matches: 0,
        })
        .collect();
    for &(len, n) in per_length {
        if let Some(b) = usize::try_from((len - min) / width)
            .ok()
            .and_then(|b| histogram.get_mut(b))
        {
            b.matches += n;
        }
    }
    Lengths {
        matches,
        mean: Some(total as f64 / matches as f64),
        median,
        min: Some(min),
        max: Some(max),
        histogram,
    }
}

/// A game's statistics: over the served matches of the versions of `key` whose roles are
/// those of version `version` (its id `version_id`).
pub async fn game(
    db: &Db,
    key: String,
    version: i64,
    version_id: i64,
    roles: Vec<String>,
) -> Result<GameStats, Error> {
    db.read(move |db| {
        let (ended, per_role, per_length, errors) =
            bounded(db.connection(), QUERY_TIMEOUT_MS, |conn| {
                Ok((
                    ended(conn, version_id)?,
                    per_role(conn, version_id, &roles)?,
                    lengths(conn, version_id)?,
                    error_share(conn, version_id)?,
                ))
            })
            .map_err(read_error)?;
        Ok(GameStats {
            key,
            version,
            roles,
            described: ended.total.min(RECENT),
            capped: ended.total > RECENT,
            ended,
            per_role,
            lengths: summarise_lengths(&per_length, HISTOGRAM_BARS),
            errors,
        })
    })
    .await
}

/// The statistics of the game `key` at `version` (the latest when `None`).
pub async fn game_of(db: &Db, key: &str, version: Option<i64>) -> Result<GameStats, Error> {
    let v = db.version(key, version).await?;
    game(db, v.key, v.version, v.id, v.roles).await
}

/// `judged`: the latest `$2` served matches that played (a row in `matches`, no failure) of
/// the registered player `$1`, with its seat, its goal, its steps, errors and timeouts, and
/// whether its START failed.
fn judged(j: &Json) -> String {
    let mine = "j.seat";
    let error_at = j.at("t.errors", mine);
    format!(
        "WITH mine AS (
            SELECT s.match_id, s.seat, m.id AS mref, m.status, m.goal_values, m.start_errors
            FROM seats s
            JOIN served_matches f ON f.match_id = s.match_id
            JOIN matches m ON m.match_id = s.match_id
            WHERE s.player_ref = $1 AND s.kind = 'player' AND f.failure IS NULL
            ORDER BY f.created DESC, f.match_id DESC LIMIT $2),
         judged AS (
            SELECT j.match_id, j.seat, j.mref, j.status, j.goal_values,
                (SELECT count(*) FROM steps t WHERE t.match_ref = j.mref) AS steps,
                (SELECT count(*) FROM steps t
                 WHERE t.match_ref = j.mref AND coalesce({error_at}, '') <> '') AS errors,
                (SELECT count(*) FROM steps t
                 WHERE t.match_ref = j.mref AND {error_at} LIKE 'timeout%') AS timeouts,
                {goal} AS goal,
                CASE WHEN coalesce({start}, '') <> '' THEN 1 ELSE 0 END AS start_failed
            FROM mine j)",
        goal = num(&j.at("j.goal_values", mine)),
        start = j.at("j.start_errors", mine),
    )
}

/// The player's results per opponent, those it played most first.
fn opponents(conn: &Conn, player: i64) -> sql::Result<Vec<Opponent>> {
    let j = Json(conn.dialect());
    let finished = "j.status = 'finished'";
    let kept = "j.start_failed = 0 AND 2 * j.errors <= j.steps";
    let theirs = num(&j.at("j.goal_values", "o.seat"));
    let count = |condition: String| int(&format!("sum(CASE WHEN {condition} THEN 1 ELSE 0 END)"));
    let text = format!(
        "{judged}
         SELECT o.name, count(*), {fin}, {won}, {drawn}, {lost},
                {mean}, {failed}, {registered}
         FROM judged j JOIN seats o ON o.match_id = j.match_id AND o.seat <> j.seat
         GROUP BY o.name ORDER BY count(*) DESC, o.name LIMIT $3",
        judged = judged(&j),
        fin = count(finished.into()),
        won = count(format!("{finished} AND {kept} AND j.goal > {theirs}")),
        drawn = count(format!("{finished} AND {kept} AND j.goal = {theirs}")),
        lost = count(format!("{finished} AND {kept} AND j.goal < {theirs}")),
        mean = num(&format!("avg(CASE WHEN {finished} THEN j.goal END)")),
        failed = count(format!("{finished} AND NOT ({kept})")),
        registered = count("o.kind = 'player'".into()),
    );
    conn.query(&text, params![player, RECENT, OPPONENTS])?
        .iter()
        .map(|r| {
            Ok(Opponent {
                name: r.get(0)?,
                played: r.get(1)?,
                finished: r.get(2)?,
                won: r.get(3)?,
                drawn: r.get(4)?,
                lost: r.get(5)?,
                mean_goal: r.get(6)?,
                failed: r.get(7)?,
                registered: r.get::<_, i64>(8)? > 0,
            })
        })
        .collect()
}

/// The time the player took to answer PLAY in its matches, against their play clocks.
fn move_time(conn: &Conn, player: i64) -> sql::Result<MoveTime> {
    let j = Json(conn.dialect());
    let text = format!(
        "WITH mine AS (
            SELECT m.id AS mref, m.play_clock, s.seat FROM seats s
            JOIN served_matches f ON f.match_id = s.match_id
            JOIN matches m ON m.match_id = s.match_id
            WHERE s.player_ref = $1 AND s.kind = 'player' AND f.failure IS NULL
            ORDER BY f.created DESC, f.match_id DESC LIMIT $2)
         SELECT count(*), {mean}, CAST(max(d) AS BIGINT), {of_clock}, {over}
         FROM (SELECT {took} AS d, j.play_clock AS clock
               FROM mine j JOIN steps t ON t.match_ref = j.mref
               WHERE t.move_times IS NOT NULL) x
         WHERE d IS NOT NULL",
        took = num(&j.at("t.move_times", "j.seat")),
        mean = num("avg(d)"),
        of_clock = num(&format!(
            "avg(CASE WHEN clock > 0 THEN {} / ({} * 1000) END)",
            num("d"),
            num("clock")
        )),
        over = int("sum(CASE WHEN d > clock * 1000 THEN 1 ELSE 0 END)"),
    );
    conn.query_row(&text, params![player, RECENT], |r| {
        Ok(MoveTime {
            moves: r.get(0)?,
            mean_ms: r.get(1)?,
            max_ms: r.get(2)?,
            mean_of_clock: r.get(3)?,
            over_clock: r.get(4)?,
        })
    })
}

/// The player's matches, moves, errors, timeouts and STARTs failed.
fn totals(conn: &Conn, player: i64) -> sql::Result<(i64, i64, i64, i64, i64)> {
    let j = Json(conn.dialect());
    let text = format!(
        "{judged}
         SELECT count(*), {moves}, {errors}, {timeouts}, {start_failed} FROM judged j",
        judged = judged(&j),
        moves = int("sum(j.steps)"),
        errors = int("sum(j.errors)"),
        timeouts = int("sum(j.timeouts)"),
        start_failed = int("sum(j.start_failed)"),
    );
    conn.query_row(&text, params![player, RECENT], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
}

/// The registered player `player`'s statistics.
pub async fn player(db: &Db, player: i64) -> Result<PlayerStats, Error> {
    db.read(move |db| {
        bounded(db.connection(), QUERY_TIMEOUT_MS, |conn| {
            let (matches, moves, errors, timeouts, start_failed) = totals(conn, player)?;
            Ok(PlayerStats {
                matches,
                capped: matches >= RECENT,
                moves,
                errors,
                timeouts,
                start_failed,
                opponents: opponents(conn, player)?,
                move_time: move_time(conn, player)?,
            })
        })
        .map_err(read_error)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use ggp_match::{Database, DatabaseUrl};

    /// A game `trio` of three roles, version 1 (id 1) and a version 2 of other roles (id 2);
    /// a registered player `p` (id 1) in the seat `a` of three matches, `random` and `legal`
    /// in the others. Matches: m1 finished [100, 0, 0] in 2 steps; m2 finished [50, 50, 0] in
    /// 4 steps, a timeout of `c` at its second; m3 finished [0, 100, 50] in 4 steps, `b`'s
    /// START refused; m4 aborted after 1 step, an illegal move of `a`; m5 errored (no row of
    /// `matches`); m6 not ended; m7 finished, of version 2 (other roles: not counted).
    const TRIO: &str = r#"
        INSERT INTO games (id, key, created) VALUES (1, 'trio', 0);
        INSERT INTO game_versions (id, game_ref, version, rules, hash, roles, warnings, source, created)
        VALUES (1, 1, 1, '', 'h1', '["a","b","c"]', '[]', 'test', 0),
               (2, 1, 2, '', 'h2', '["a","b"]', '[]', 'test', 1);
        INSERT INTO players (id, name, url, token_hash, created) VALUES (1, 'p', 'http://p', '', 0);
        INSERT INTO served_matches (match_id, game_version_ref, created, failure) VALUES
            ('m1', 1, 1, NULL), ('m2', 1, 2, NULL), ('m3', 1, 3, NULL), ('m4', 1, 4, NULL),
            ('m5', 1, 5, 'the players failed'), ('m6', 1, 6, NULL), ('m7', 2, 7, NULL);
        INSERT INTO seats (match_id, seat, kind, player_ref, name) VALUES
            ('m1', 0, 'player', 1, 'p'), ('m1', 1, 'builtin', NULL, 'random'), ('m1', 2, 'builtin', NULL, 'legal'),
            ('m2', 0, 'player', 1, 'p'), ('m2', 1, 'builtin', NULL, 'random'), ('m2', 2, 'builtin', NULL, 'legal'),
            ('m3', 0, 'builtin', NULL, 'legal'), ('m3', 1, 'builtin', NULL, 'random'), ('m3', 2, 'builtin', NULL, 'random'),
            ('m4', 0, 'player', 1, 'p'), ('m4', 1, 'builtin', NULL, 'random'), ('m4', 2, 'builtin', NULL, 'legal');
        INSERT INTO matches (id, match_id, game_name, rules, random_token, start_time, start_clock,
            play_clock, roles, players, initial_state, initial_time, status, goal_values, start_errors)
        VALUES
            (1, 'm1', 'trio', '', '', 0, 1, 2, '["a","b","c"]', '[]', '', 1000, 'finished', '[100,0,0]', '["","",""]'),
            (2, 'm2', 'trio', '', '', 0, 1, 2, '["a","b","c"]', '[]', '', 1000, 'finished', '[50,50,0]', '["","",""]'),
            (3, 'm3', 'trio', '', '', 0, 1, 2, '["a","b","c"]', '[]', '', 1000, 'finished', '[0,100,50]', '["","connection: refused",""]'),
            (4, 'm4', 'trio', '', '', 0, 1, 2, '["a","b","c"]', '[]', '', 1000, 'aborted', '[]', '["","",""]'),
            (6, 'm6', 'trio', '', '', 0, 1, 2, '["a","b","c"]', '[]', '', 1000, 'unfinished', '[]', '["","",""]'),
            (7, 'm7', 'trio', '', '', 0, 1, 2, '["a","b"]', '[]', '', 1000, 'finished', '[0,100]', '["",""]');
        INSERT INTO steps (match_ref, step, moves, errors, state, state_time, move_times) VALUES
            (1, 1, '[]', '["","",""]', '', 2000, '[700,10,20]'), (1, 2, '[]', '["","",""]', '', 2500, '[300,5,5]'),
            (2, 1, '[]', '["","",""]', '', 2000, '[100,1,1]'), (2, 2, '[]', '["","","timeout: late"]', '', 3000, '[2500,1,2300]'),
            (2, 3, '[]', '["","",""]', '', 3100, '[50,1,1]'), (2, 4, '[]', '["","",""]', '', 6000, '[900,1,1]'),
            (3, 1, '[]', '["","",""]', '', 2000, '[1,1,1]'), (3, 2, '[]', '["","",""]', '', 2001, '[1,1,1]'),
            (3, 3, '[]', '["","",""]', '', 2002, NULL), (3, 4, '[]', '["","",""]', '', 2003, NULL),
            (4, 1, '[]', '["illegal: (x)","",""]', '', 2000, NULL),
            (7, 1, '[]', '["",""]', '', 2000, '[1,null]');
    "#;

    fn aggregates_are_counted_in_the_database(url: &DatabaseUrl) {
        let mut db = Database::open(url).unwrap();
        db.migrate_schema(&crate::db::SCHEMA).unwrap();
        let conn = db.connection();
        conn.execute_batch(TRIO).unwrap();
        let ended = ended(conn, 1).unwrap();
        assert_eq!(
            ended,
            Ended {
                total: 6,
                finished: 3,
                aborted: 1,
                errored: 1,
                unfinished: 1
            }
        );
        let roles: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let per_role = per_role(conn, 1, &roles).unwrap();
        let got: Vec<(f64, i64, i64)> = per_role
            .iter()
            .map(|r| (r.mean_goal.unwrap(), r.won_alone, r.matches))
            .collect();
        // m2's tie of `a` and `b` is no one's win.
        assert_eq!(got, [(50.0, 1, 3), (50.0, 1, 3), (50.0 / 3.0, 0, 3)]);
        assert_eq!(lengths(conn, 1).unwrap(), [(2, 1), (4, 2)]);
        assert_eq!(
            error_share(conn, 1).unwrap(),
            ErrorShare {
                matches: 4,
                with_errors: 3,
                with_timeouts: 1,
                with_illegal: 1
            }
        );
        let opponents = opponents(conn, 1).unwrap();
        let got: Vec<_> = opponents
            .iter()
            .map(|o| {
                let counts = (o.played, o.finished, o.won, o.drawn, o.lost, o.failed);
                (o.name.as_str(), counts, o.mean_goal, o.registered)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("legal", (3, 2, 2, 0, 0, 0), Some(75.0), false),
                ("random", (3, 2, 1, 1, 0, 0), Some(75.0), false),
            ]
        );
        let time = move_time(conn, 1).unwrap();
        // p's moves (seat 0): 700, 300 (m1); 100, 2500, 50, 900 (m2); none recorded in m4
        // (as in a match recorded before move times were kept); the play clock is 2 s.
        assert_eq!(
            (time.moves, time.max_ms, time.over_clock),
            (6, Some(2500), 1)
        );
        assert!(
            (time.mean_ms.unwrap() - 4550.0 / 6.0).abs() < 1e-9,
            "{time:?}"
        );
        assert!(
            (time.mean_of_clock.unwrap() - 4550.0 / 6.0 / 2000.0).abs() < 1e-9,
            "{time:?}"
        );
    }

    #[test]
    fn aggregates_are_counted_in_sqlite() {
        let dir = std::env::temp_dir().join("ggp-server-stats");
        let path = ggp_testdata::fresh_sqlite_file(&dir, "trio.sqlite");
        aggregates_are_counted_in_the_database(&DatabaseUrl::sqlite(path));
    }

    #[test]
    fn a_query_past_its_time_is_cancelled_on_postgresql_and_said_so() {
        if std::env::var("GGP_TEST_POSTGRES").is_err() {
            eprintln!("skipped on PostgreSQL: GGP_TEST_POSTGRES is not set");
            return;
        }
        let url = ggp_testdata::fresh_postgres("stats_timeout").unwrap();
        let db = Database::open(&url.parse().unwrap()).unwrap();
        let conn = db.connection();
        let slow = bounded(conn, 50, |conn| conn.execute_batch("SELECT pg_sleep(5)"));
        let e = read_error(slow.unwrap_err());
        assert!(
            matches!(&e, Error::Unavailable(m) if m.starts_with("the statistics took longer than 20 s")),
            "{e:?}"
        );
        // The limit is the statistics' alone: the connection goes back to the pool without it.
        let after: String = conn
            .query_row("SELECT current_setting('statement_timeout')", (), |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(after, "0");
        assert_eq!(bounded(conn, 50, |_| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn aggregates_are_counted_in_postgresql() {
        if std::env::var("GGP_TEST_POSTGRES").is_err() {
            eprintln!("skipped on PostgreSQL: GGP_TEST_POSTGRES is not set");
            return;
        }
        let url = ggp_testdata::fresh_postgres("stats_trio").unwrap();
        aggregates_are_counted_in_the_database(&url.parse().unwrap());
    }

    #[test]
    fn lengths_are_summarised_in_bars_of_equal_width_with_the_empty_ones_kept() {
        // Lengths 5 (two matches), 9 and 16: 12 lengths from 5 to 16 in 4 bars of 3.
        let l = summarise_lengths(&[(5, 2), (9, 1), (16, 1)], 4);
        assert_eq!(l.matches, 4);
        assert_eq!(l.mean, Some((5.0 * 2.0 + 9.0 + 16.0) / 4.0));
        assert_eq!((l.min, l.max, l.median), (Some(5), Some(16), Some(5)));
        let bars: Vec<(i64, i64, i64)> = l
            .histogram
            .iter()
            .map(|b| (b.from, b.to, b.matches))
            .collect();
        assert_eq!(bars, [(5, 7, 2), (8, 10, 1), (11, 13, 0), (14, 16, 1)]);
    }

    #[test]
    fn few_lengths_have_a_bar_each_and_none_has_no_bar() {
        let l = summarise_lengths(&[(9, 3)], 12);
        assert_eq!(
            l.histogram,
            [Bucket {
                from: 9,
                to: 9,
                matches: 3
            }]
        );
        assert_eq!((l.mean, l.median), (Some(9.0), Some(9)));
        let l = summarise_lengths(&[(3, 1), (4, 1), (6, 2)], 12);
        let counts: Vec<i64> = l.histogram.iter().map(|b| b.matches).collect();
        assert_eq!(counts, [1, 1, 0, 2]);
        assert_eq!(l.median, Some(4));
        assert_eq!(summarise_lengths(&[], 12), Lengths::default());
    }

    #[test]
    fn many_lengths_fit_in_the_bars_asked_for() {
        let per_length: Vec<(i64, i64)> = (1..=1000).map(|n| (n, 1)).collect();
        let l = summarise_lengths(&per_length, HISTOGRAM_BARS);
        assert!(l.histogram.len() <= HISTOGRAM_BARS, "{:?}", l.histogram);
        assert_eq!(l.histogram.iter().map(|b| b.matches).sum::<i64>(), 1000);
        assert_eq!(l.histogram.first().unwrap().from, 1);
        assert!(l.histogram.last().unwrap().to >= 1000);
        assert_eq!(l.median, Some(500));
    }
}

#[cfg(test)]
mod volume {
    use super::*;
    use ggp_match::{Database, DatabaseUrl};

    /// 100,000 finished matches of 20 steps each, a registered player in every one: the
    /// statistics of the game and of the player, timed, on SQLite and (with
    /// `GGP_TEST_POSTGRES`) PostgreSQL. Run it with `--ignored`.
    #[test]
    #[ignore = "fills a database with two million steps"]
    fn a_hundred_thousand_matches_are_described_in_time() {
        let dir = std::env::temp_dir().join("ggp-server-stats");
        let path = ggp_testdata::fresh_sqlite_file(&dir, "volume.sqlite");
        described_in_time(&DatabaseUrl::sqlite(path));
        if std::env::var("GGP_TEST_POSTGRES").is_ok() {
            let url = ggp_testdata::fresh_postgres("stats_volume").unwrap();
            described_in_time(&url.parse().unwrap());
        }
    }

    fn described_in_time(url: &DatabaseUrl) {
        let mut db = Database::open(url).unwrap();
        db.migrate_schema(&crate::db::SCHEMA).unwrap();
        let conn = db.connection();
        let started = std::time::Instant::now();
        conn.execute_batch(
            r#"BEGIN;
            INSERT INTO games (id, key, created) VALUES (1, 'big', 0);
            INSERT INTO game_versions (id, game_ref, version, rules, hash, roles, warnings, source, created)
            VALUES (1, 1, 1, '', 'h', '["a","b"]', '[]', 'test', 0);
            INSERT INTO players (id, name, url, token_hash, created) VALUES (1, 'p', 'http://p', '', 0);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
            INSERT INTO matches (id, match_id, game_name, rules, random_token, start_time, start_clock,
                play_clock, roles, players, initial_state, initial_time, status, goal_values, start_errors)
            SELECT i, 'm' || i, 'big', '', '', i, 1, 2, '["a","b"]', '[]', '', 0, 'finished',
                   CASE WHEN i % 3 = 0 THEN '[100,0]' ELSE '[50,50]' END, '["",""]' FROM n;
            INSERT INTO served_matches (match_id, game_version_ref, created) SELECT match_id, 1, id FROM matches;
            INSERT INTO seats (match_id, seat, kind, player_ref, name)
                SELECT match_id, 0, 'player', 1, 'p' FROM matches
                UNION ALL SELECT match_id, 1, 'builtin', NULL, 'o' || (id % 50) FROM matches;
            WITH RECURSIVE k(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM k WHERE s < 20)
            INSERT INTO steps (match_ref, step, moves, errors, state, state_time, move_times)
                SELECT m.id, k.s, '[]', CASE WHEN k.s = 7 AND m.id % 10 = 0 THEN '["timeout: late",""]' ELSE '["",""]' END, '', k.s * 100,
                       '[' || (k.s * 10) || ',5]'
                FROM matches m, k;
            COMMIT;"#,
        )
        .unwrap();
        // As the databases' own statistics would be by now (PostgreSQL's autovacuum): without
        // them PostgreSQL plans a scan of every step for each match.
        conn.execute_batch("ANALYZE").unwrap();
        eprintln!("filled in {:?}", started.elapsed());
        let started = std::time::Instant::now();
        let ended = ended(conn, 1).unwrap();
        let roles = per_role(conn, 1, &["a".into(), "b".into()]).unwrap();
        let per_length = lengths(conn, 1).unwrap();
        let errors = error_share(conn, 1).unwrap();
        let game = started.elapsed();
        let started = std::time::Instant::now();
        let opponents = opponents(conn, 1).unwrap();
        let time = move_time(conn, 1).unwrap();
        let player = started.elapsed();
        eprintln!(
            "game {game:?}, player {player:?}: {ended:?} {roles:?} {per_length:?} {errors:?} {} {time:?}",
            opponents.len()
        );
        assert_eq!(ended.total, 100_000);
        assert_eq!(per_length, [(20, RECENT)]);
        assert_eq!(errors.with_timeouts, RECENT / 10);
        assert_eq!(opponents.len(), 50);
        assert_eq!(time.moves, RECENT * 20);
    }
}
