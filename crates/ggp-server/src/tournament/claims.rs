//! Claiming scheduled matches (in one transaction on SQLite; with skipped locks and advisory
//! locks on PostgreSQL), refilling continuous tournaments, and recording a match's end.

use std::collections::HashSet;

use ggp_match::params;
use ggp_match::sql::{self, Conn, Dialect, OptionalExtension};
use ggp_play::StrategyKind;
use rand::Rng;
use rand::seq::SliceRandom;

use super::create::{insert_scheduled, rng};
use crate::db::{Db, from_json, now_ms};
use crate::error::Error;

/// What the schedule tells a server to play.
#[derive(Clone, Debug)]
pub struct Claim {
    pub row: i64,
    pub tournament: i64,
    pub key: String,
    pub version: i64,
    pub players: Vec<String>,
    pub seed: u64,
    pub start_clock: u64,
    pub play_clock: u64,
}

/// Claims the next scheduled match this server may play: the oldest queued match of a
/// running tournament none of whose registered players is in a match being played. A
/// continuous tournament with none queued gets one first, if enough of its players are idle.
pub async fn claim(db: &Db, me: i64, only: Option<i64>) -> Result<Option<Claim>, Error> {
    db.write(move |conn| {
        let now = now_ms();
        refill_continuous(conn)?;
        let found = match conn.dialect() {
            Dialect::Sqlite => conn
                .query_row(&format!("{CLAIMABLE} ORDER BY s.id LIMIT 1"), [only], |r| {
                    r.get::<_, i64>(0)
                })
                .optional()?,
            Dialect::Postgres => claim_postgres(conn, only)?,
        };
        let Some(row) = found else {
            return Ok(None);
        };
        conn.execute(
            "UPDATE scheduled SET status = 'claimed', server_ref = $1, claimed = $2,
                    attempts = attempts + 1
             WHERE id = $3",
            params![me, now, row],
        )?;
        conn.query_row(
            "SELECT s.id, s.tournament_ref, g.key, v.version, s.players, s.seed,
                    t.start_clock, t.play_clock
             FROM scheduled s JOIN tournaments t ON t.id = s.tournament_ref
             JOIN game_versions v ON v.id = s.game_version_ref
             JOIN games g ON g.id = v.game_ref WHERE s.id = $1",
            [row],
            |r| {
                Ok(Claim {
                    row: r.get(0)?,
                    tournament: r.get(1)?,
                    key: r.get(2)?,
                    version: r.get(3)?,
                    players: from_json(&r.get::<_, String>(4)?),
                    seed: r.get::<_, i64>(5)? as u64,
                    start_clock: r.get::<_, i64>(6)? as u64,
                    play_clock: r.get::<_, i64>(7)? as u64,
                })
            },
        )
        .map(Some)
    })
    .await
}

/// The queued rows of running tournaments (`$1`: of this one only, if not NULL) none of whose
/// registered players is in a claimed row.
pub(super) const CLAIMABLE: &str =
    "SELECT s.id FROM scheduled s JOIN tournaments t ON t.id = s.tournament_ref
     WHERE s.status = 'queued' AND t.status = 'running'
       AND ($1 IS NULL OR t.id = $1)
       AND NOT EXISTS (
           SELECT 1 FROM scheduled_seats q
           JOIN scheduled_seats c ON c.player = q.player AND c.exclusive = 1
           JOIN scheduled b ON b.id = c.scheduled_ref AND b.status = 'claimed'
           WHERE q.scheduled_ref = s.id AND q.exclusive = 1)";

/// Candidates looked at per claim on PostgreSQL before giving up for now.
pub(super) const PG_CANDIDATES: usize = 8;

/// PostgreSQL's claim, for servers claiming at the same moment without waiting on each other:
/// the oldest claimable rows are locked with `FOR UPDATE SKIP LOCKED` (rows another server is
/// claiming are passed over, not waited for); then each registered player of a candidate is
/// locked for the rest of the transaction with a non-blocking advisory lock, so that two
/// servers never seat one player in two matches (a player another server is deciding about
/// makes the candidate wait for a later claim), and the candidate is checked again once the
/// locks are held (a claim committed meanwhile is seen by then).
pub(super) fn claim_postgres(conn: &Conn, only: Option<i64>) -> sql::Result<Option<i64>> {
    let candidates: Vec<i64> = conn
        .prepare_cached(&format!(
            "{CLAIMABLE} ORDER BY s.id LIMIT {PG_CANDIDATES} FOR UPDATE OF s SKIP LOCKED"
        ))?
        .query_map([only], |r| r.get::<_, i64>(0))?
        .collect::<sql::Result<_>>()?;
    'candidates: for row in candidates {
        let players: Vec<String> = conn
            .prepare_cached(
                "SELECT player FROM scheduled_seats WHERE scheduled_ref = $1 AND exclusive = 1
                 ORDER BY player",
            )?
            .query_map([row], |r| r.get::<_, String>(0))?
            .collect::<sql::Result<_>>()?;
        for p in &players {
            let locked: bool = conn.query_row(
                "SELECT pg_try_advisory_xact_lock(CAST($1 AS integer), hashtext($2))",
                params![PG_PLAYER_LOCKS, p],
                |r| r.get(0),
            )?;
            if !locked {
                continue 'candidates;
            }
        }
        let still: Option<i64> = conn
            .query_row(
                &format!("{CLAIMABLE} AND s.id = $2"),
                params![only, row],
                |r| r.get(0),
            )
            .optional()?;
        if still.is_some() {
            return Ok(Some(row));
        }
    }
    Ok(None)
}

/// The first key of the advisory locks on players (PostgreSQL), and of the one on refilling
/// continuous tournaments.
pub(super) const PG_PLAYER_LOCKS: i32 = 0x6767_7001;

pub(super) const PG_REFILL_LOCK: i64 = 0x6767_7002;

/// Added to a tournament's id: the advisory lock held while a server records that one of its
/// matches ended (PostgreSQL).
pub(super) const PG_TOURNAMENT_LOCKS: i64 = 0x6767_7003 << 32;

/// For each running continuous tournament with nothing queued: a match of a game drawn from
/// its set among idle players drawn at random (a player is idle when no match of the
/// tournament being played has it, and, registered, none of another tournament either).
pub(super) fn refill_continuous(conn: &Conn) -> sql::Result<()> {
    refill(conn, false)
}

pub(super) fn refill(conn: &Conn, refilling: bool) -> sql::Result<()> {
    let mut st = conn.prepare(
        "SELECT t.id, t.versions, t.players, t.seed,
                (SELECT count(*) FROM scheduled s WHERE s.tournament_ref = t.id)
         FROM tournaments t
         WHERE t.format = 'continuous' AND t.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM scheduled s
                           WHERE s.tournament_ref = t.id AND s.status = 'queued')",
    )?;
    let due = st
        .query_map((), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                from_json::<Vec<i64>>(&r.get::<_, String>(1)?),
                from_json::<Vec<String>>(&r.get::<_, String>(2)?),
                r.get::<_, i64>(3)? as u64,
                r.get::<_, i64>(4)? as u64,
            ))
        })?
        .collect::<sql::Result<Vec<_>>>()?;
    drop(st);
    if due.is_empty() {
        return Ok(());
    }
    if conn.dialect() == Dialect::Postgres && !refilling {
        // Servers refill one at a time (then look again: another may have just refilled); one
        // that finds another refilling leaves it to that one, rather than wait holding locks.
        let mine: bool = conn.query_row(
            "SELECT pg_try_advisory_xact_lock($1)",
            [PG_REFILL_LOCK],
            |r| r.get(0),
        )?;
        return if mine { refill(conn, true) } else { Ok(()) };
    }
    for (id, versions, players, seed, made) in due {
        if versions.is_empty() {
            continue;
        }
        let mut busy: HashSet<String> = HashSet::new();
        let mut st = conn.prepare_cached(
            "SELECT c.player FROM scheduled_seats c JOIN scheduled b ON b.id = c.scheduled_ref
             WHERE b.status = 'claimed' AND (b.tournament_ref = $1 OR c.exclusive = 1)",
        )?;
        for p in st.query_map([id], |r| r.get::<_, String>(0))? {
            busy.insert(p?);
        }
        drop(st);
        let mut draw = rng(seed, made + 1);
        let version = versions[draw.random_range(0..versions.len())];
        let roles: String = conn.query_row(
            "SELECT roles FROM game_versions WHERE id = $1",
            [version],
            |r| r.get(0),
        )?;
        let roles: Vec<String> = from_json(&roles);
        let seats = roles.len() - usize::from(crate::games::random_role(&roles).is_some());
        let mut idle: Vec<String> = players.into_iter().filter(|p| !busy.contains(p)).collect();
        if seats == 0 || idle.len() < seats {
            continue;
        }
        idle.shuffle(&mut draw);
        idle.truncate(seats);
        let exclusive: HashSet<String> = idle
            .iter()
            .filter(|p| StrategyKind::parse(p).is_none())
            .cloned()
            .collect();
        insert_scheduled(
            conn,
            id,
            made + 1,
            version,
            &idle,
            draw.random(),
            &exclusive,
        )?;
    }
    Ok(())
}

/// How a scheduled match's match ended.
#[derive(Clone)]
pub enum Ended {
    /// It was played (finished, or aborted by its game: the step limit, rules that failed).
    Played,
    /// It was stopped before its end (the server is stopping): to be played again.
    Interrupted,
    /// It could not be started.
    Failed(String),
}

/// Records how a scheduled match ended; ends the tournament when nothing is left to play.
pub async fn ended(db: &Db, me: Option<i64>, row: i64, how: Ended) -> Result<(), Error> {
    db.write(move |conn| {
        if conn.dialect() == Dialect::Postgres {
            // Servers ending a tournament's last matches at the same moment take turns, so
            // that the last one sees every other's end (SQLite's writes take turns anyway).
            conn.execute(
                "SELECT pg_advisory_xact_lock($1 + (SELECT tournament_ref FROM scheduled
                                                    WHERE id = $2))",
                params![PG_TOURNAMENT_LOCKS, row],
            )?;
        }
        match &how {
            // Only this server's claim: a row queued again while this server was taken for
            // gone may be another's now.
            Ended::Played => conn.execute(
                "UPDATE scheduled SET status = 'done'
                 WHERE id = $1 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM $2",
                params![row, me],
            )?,
            Ended::Interrupted => conn.execute(
                "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
                 WHERE id = $1 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM $2",
                params![row, me],
            )?,
            Ended::Failed(why) => conn.execute(
                "UPDATE scheduled SET status = 'failed', failure = $1
                 WHERE id = $2 AND status = 'claimed' AND server_ref IS NOT DISTINCT FROM $3",
                params![why, row, me],
            )?,
        };
        let tournament: i64 = conn.query_row(
            "SELECT tournament_ref FROM scheduled WHERE id = $1",
            [row],
            |r| r.get(0),
        )?;
        finish_if_played(conn, tournament, now_ms())?;
        Ok(())
    })
    .await
}

/// Ends a tournament (not a continuous one) none of whose scheduled matches is left to play.
pub(super) fn finish_if_played(conn: &Conn, tournament: i64, now: i64) -> sql::Result<()> {
    conn.execute(
        "UPDATE tournaments SET status = 'finished', finished = $1
         WHERE id = $2 AND format != 'continuous' AND status != 'finished'
           AND NOT EXISTS (SELECT 1 FROM scheduled s
                           WHERE s.tournament_ref = tournaments.id
                             AND s.status IN ('queued', 'claimed'))",
        params![now, tournament],
    )?;
    Ok(())
}
