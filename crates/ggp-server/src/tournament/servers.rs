//! The servers sharing the schedule: each one's row with its heartbeat, and the reaping of
//! those that are gone (their matches recorded as aborted, their claims queued again).

use std::io::Write as _;
use std::time::Duration;

use ggp_match::params;
use ggp_match::sql::{self, Conn};

use super::claims::finish_if_played;
use crate::db::{Db, now_ms};
use crate::error::Error;

/// What reaping found.
#[derive(Clone, Debug, Default)]
pub struct Reaped {
    /// Servers found gone.
    pub servers: Vec<i64>,
    /// Matches recorded as aborted.
    pub aborted: Vec<String>,
    /// Served matches that never started, now failed.
    pub never_started: Vec<String>,
    /// Scheduled matches queued again.
    pub requeued: u64,
    /// Scheduled matches whose match had finished when their server went: done.
    pub done: u64,
}

/// Which machine and boot this process runs on, for telling whether a server on the same
/// machine is gone.
#[derive(Clone, Debug)]
pub struct Host {
    pub host: String,
    pub boot: String,
    pub pid: u32,
}

impl Host {
    pub fn this() -> Host {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .ok()
                .filter(|s| !s.is_empty())
        };
        Host {
            host: read("/proc/sys/kernel/hostname")
                .or_else(|| read("/etc/hostname"))
                .unwrap_or_else(|| "unknown".into()),
            boot: read("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
            pid: std::process::id(),
        }
    }

    /// Whether the server `(host, boot, pid)` is certainly gone, as seen from this machine:
    /// on this machine since an earlier boot, or its process is no `ggp` running now. (Other
    /// machines' servers are gone when their heartbeat stops.)
    pub(super) fn certainly_gone(&self, host: &str, boot: &str, pid: i64) -> bool {
        if host != self.host || boot.is_empty() || self.boot.is_empty() {
            return false;
        }
        if boot != self.boot {
            return true;
        }
        if pid == self.pid as i64 {
            return false;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state …`: no such process, a zombie, or another program.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            return true;
        };
        let comm = head.split_once('(').map_or("", |(_, c)| c);
        let state = rest.split_whitespace().next().unwrap_or("");
        !comm.starts_with("ggp") || state == "Z" || state == "X"
    }
}

/// Writes a line to standard error, for the operator; a closed stream is not an error.
pub(crate) fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Adds this process to `servers`.
pub async fn register(db: &Db, kind: &'static str, host: &Host) -> Result<i64, Error> {
    let host = host.clone();
    db.write(move |conn| {
        let now = db_now(conn)?;
        conn.query_row(
            "INSERT INTO servers (kind, host, boot, pid, started, heartbeat)
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
            params![kind, host.host, host.boot, host.pid as i64, now],
            |r| r.get(0),
        )
    })
    .await
}

/// The database's time in milliseconds since the Unix epoch: heartbeats are written and
/// judged by one clock, whichever machines the servers run on.
pub(super) fn db_now(conn: &Conn) -> sql::Result<i64> {
    conn.query_row(
        conn.pick(
            "SELECT CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
            "SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
        ),
        (),
        |r| r.get(0),
    )
}

/// Beats this server's heart. `true` if another server had taken it for gone (its heartbeat
/// was late): that one has recorded its running matches as aborted and queued its claims
/// again; this server is alive again from now on.
pub async fn heartbeat(db: &Db, id: i64) -> Result<bool, Error> {
    db.write(move |conn| {
        let now = db_now(conn)?;
        if conn.execute(
            "UPDATE servers SET heartbeat = $1 WHERE id = $2 AND stopped IS NULL",
            params![now, id],
        )? == 1
        {
            return Ok(false);
        }
        conn.execute(
            "UPDATE servers SET heartbeat = $1, stopped = NULL WHERE id = $2",
            params![now, id],
        )?;
        Ok(true)
    })
    .await
}

/// Marks this server stopped, and queues again the scheduled matches it claimed and did not
/// finish (its matches were stopped and recorded as aborted).
pub async fn unregister(db: &Db, id: i64) -> Result<(), Error> {
    db.write(move |conn| {
        conn.execute(
            "UPDATE servers SET stopped = $1 WHERE id = $2",
            params![now_ms(), id],
        )?;
        conn.execute(
            "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
             WHERE server_ref = $1 AND status = 'claimed'",
            [id],
        )?;
        Ok(())
    })
    .await
}

/// Finds the servers that are gone (heartbeat older than `dead_after`, or on this machine, a
/// process that is no longer there) and cleans up after them in one transaction: their
/// running matches recorded as aborted with their steps, matches they had not started
/// failed, their claimed scheduled matches queued again. Served matches of no server (from
/// before servers were recorded) are theirs too.
pub async fn reap(
    db: &Db,
    me: Option<i64>,
    host: &Host,
    dead_after: Duration,
) -> Result<Reaped, Error> {
    let host = host.clone();
    db.write(move |conn| {
        let now = db_now(conn)?;
        let stale = now - dead_after.as_millis() as i64;
        let mut st = conn.prepare(
            "SELECT id, host, boot, pid, heartbeat FROM servers WHERE stopped IS NULL",
        )?;
        let rows = st
            .query_map((), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })?
            .collect::<sql::Result<Vec<_>>>()?;
        drop(st);
        let gone: Vec<i64> = rows
            .into_iter()
            .filter(|(id, h, b, pid, beat)| {
                Some(*id) != me && (*beat < stale || host.certainly_gone(h, b, *pid))
            })
            .map(|r| r.0)
            .collect();
        let mut reaped = Reaped::default();
        let when = ggp_match::utc_date(now as u64);
        for id in &gone {
            conn.execute(
                "UPDATE servers SET stopped = $1 WHERE id = $2 AND stopped IS NULL",
                params![now, id],
            )?;
            // A claim whose match finished before the server went (gone between recording
            // the match's end and the row's) was played: done, not played a second time.
            let finished: Vec<i64> = conn
                .prepare(
                    "SELECT DISTINCT q.tournament_ref FROM scheduled q
                     WHERE q.server_ref = $1 AND q.status = 'claimed' AND EXISTS (
                         SELECT 1 FROM served_matches s JOIN matches m USING (match_id)
                         WHERE s.scheduled_ref = q.id AND m.status = 'finished')",
                )?
                .query_map([id], |r| r.get::<_, i64>(0))?
                .collect::<sql::Result<_>>()?;
            reaped.done += conn.execute(
                "UPDATE scheduled SET status = 'done'
                 WHERE server_ref = $1 AND status = 'claimed' AND EXISTS (
                     SELECT 1 FROM served_matches s JOIN matches m USING (match_id)
                     WHERE s.scheduled_ref = scheduled.id AND m.status = 'finished')",
                [id],
            )? as u64;
            for tournament in finished {
                finish_if_played(conn, tournament, now)?;
            }
            reaped.requeued += conn.execute(
                "UPDATE scheduled SET status = 'queued', server_ref = NULL, claimed = NULL
                 WHERE server_ref = $1 AND status = 'claimed'",
                [id],
            )? as u64;
        }
        reaped.servers = gone.clone();
        // Their matches (and any of no server at all) that are not over.
        let mut st = conn.prepare(
            "SELECT s.match_id, s.server_ref, m.status FROM served_matches s
             LEFT JOIN matches m USING (match_id)
             LEFT JOIN servers v ON v.id = s.server_ref
             WHERE s.failure IS NULL AND (m.status IS NULL OR m.status = 'unfinished')
               AND (s.server_ref IS NULL OR v.stopped IS NOT NULL)",
        )?;
        let open = st
            .query_map((), |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?
            .collect::<sql::Result<Vec<_>>>()?;
        drop(st);
        for (match_id, server, status) in open {
            let reason = match (server, me) {
                (Some(s), Some(m)) => format!(
                    "the server stopped while the match was running (server {s}; noticed by server {m} at {when} UTC)"
                ),
                (Some(s), None) => format!(
                    "the server stopped while the match was running (server {s}; noticed when a server started at {when} UTC)"
                ),
                (None, _) => format!(
                    "the server stopped while the match was running (noticed when it started again at {when} UTC)"
                ),
            };
            if status.is_some() {
                if ggp_match::abort_unfinished(conn, &match_id, &reason)? {
                    reaped.aborted.push(match_id);
                }
            } else {
                conn.execute(
                    "UPDATE served_matches SET failure = $1 WHERE match_id = $2",
                    params!["the server stopped before the match started", match_id],
                )?;
                reaped.never_started.push(match_id);
            }
        }
        Ok(reaped)
    })
    .await
}
