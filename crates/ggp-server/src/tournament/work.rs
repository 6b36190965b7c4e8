//! What a server does with the schedule: claims what it may play and plays it, hears of
//! each match's end, and keeps its heartbeat.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::claims::{Claim, Ended, claim, ended};
use super::servers::{Host, heartbeat, log, reap};
use crate::live::{self, MatchRequest};
use crate::state::Gamemaster;

/// Plays scheduled matches (of every tournament, or of `only`) while the server runs: claims
/// one whenever fewer than its capacity are being played, and again when one ends or the
/// schedule changes (every `poll` otherwise, for other servers' changes).
pub async fn work(gm: Arc<Gamemaster>, only: Option<i64>) {
    let Some(me) = gm.server_id() else {
        return;
    };
    let capacity = gm.config.capacity;
    loop {
        let changed = gm.schedule_changed.notified();
        let ended = gm.ended.notified();
        if gm.stopping() {
            return;
        }
        // Claimed only while a match could start here (a slot, the least memory a match
        // takes): otherwise the schedule keeps it for this server later, or another.
        while gm.scheduled_running.load(Ordering::SeqCst) < capacity
            && !gm.stopping()
            && gm.admission.has_room(crate::limits::MIN_MATCH_MEMORY)
        {
            let started = std::time::Instant::now();
            let claimed = claim(&gm.db, me, only).await;
            gm.stats.claimed(started.elapsed());
            match claimed {
                Ok(Some(c)) => {
                    if !start(&gm, c).await {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    log(&format!(
                        "ggp serve: claiming a scheduled match failed: {}",
                        e.message()
                    ));
                    break;
                }
            }
        }
        tokio::select! {
            () = changed => {}
            () = ended => {}
            () = tokio::time::sleep(gm.config.poll) => {}
        }
    }
}

/// Starts a claimed match; a match that cannot start is recorded as failed with why, or, when
/// the server has not the room for it now (its limit of matches, its memory), queued again.
/// Whether to go on claiming.
pub(super) async fn start(gm: &Arc<Gamemaster>, c: Claim) -> bool {
    gm.scheduled_running.fetch_add(1, Ordering::SeqCst);
    let req = MatchRequest {
        game: c.key.clone(),
        version: Some(c.version),
        players: c.players.clone(),
        startclock: c.start_clock,
        playclock: c.play_clock,
        seed: Some(c.seed),
        delay: 0,
        scheduled: Some(c.row),
    };
    match live::create(gm, req).await {
        Ok(_) => true,
        Err(e) => {
            gm.scheduled_running.fetch_sub(1, Ordering::SeqCst);
            let no_room = matches!(e, crate::error::Error::Unavailable(_));
            let how = if gm.stopping() || no_room {
                Ended::Interrupted
            } else {
                Ended::Failed(e.message().to_string())
            };
            if let Err(e2) = ended(&gm.db, gm.server_id(), c.row, how).await {
                log(&format!(
                    "ggp serve: recording that scheduled match {} could not start failed: {}",
                    c.row,
                    e2.message()
                ));
            }
            !no_room
        }
    }
}

/// Called when a scheduled match's match has ended (from `live`).
pub async fn match_ended(gm: &Gamemaster, row: i64, completed: bool, failure: Option<String>) {
    gm.scheduled_running.fetch_sub(1, Ordering::SeqCst);
    let how = match failure {
        Some(why) => Ended::Failed(why),
        None if completed => Ended::Played,
        None if gm.stopping() => Ended::Interrupted,
        None => Ended::Played,
    };
    // Tried again after a failure (a lock another server held too long, a deadlock the
    // database broke): a row left claimed by a live server would never be played again.
    for attempt in 1..=5u64 {
        match ended(&gm.db, gm.server_id(), row, how.clone()).await {
            Ok(()) => break,
            Err(e) => {
                log(&format!(
                    "ggp serve: recording the end of scheduled match {row} failed (attempt {attempt} of 5): {}",
                    e.message()
                ));
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
        }
    }
    gm.schedule_changed.notify_waiters();
}

/// Beats the heart and reaps gone servers until the server stops.
pub async fn keep_alive(gm: Arc<Gamemaster>) {
    let Some(me) = gm.server_id() else {
        return;
    };
    let host = Host::this();
    let mut tick = tokio::time::interval(gm.config.heartbeat);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if gm.stopping() {
            return;
        }
        match heartbeat(&gm.db, me).await {
            Ok(true) => log(&format!(
                "ggp serve: server {me} was taken for gone by another server (its heartbeat was late): its running matches were recorded as aborted and its claims queued again; it goes on from here"
            )),
            Ok(false) => {}
            Err(e) => log(&format!("ggp serve: the heartbeat failed: {}", e.message())),
        }
        match reap(&gm.db, Some(me), &host, gm.config.dead_after).await {
            Ok(r) if !r.servers.is_empty() => {
                log(&format!(
                    "ggp serve: server{} {} gone: {} match{} recorded as aborted, {} scheduled match{} queued again, {} finished before {} went",
                    if r.servers.len() == 1 { "" } else { "s" },
                    r.servers
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.aborted.len(),
                    if r.aborted.len() == 1 { "" } else { "es" },
                    r.requeued,
                    if r.requeued == 1 { "" } else { "es" },
                    r.done,
                    if r.servers.len() == 1 { "it" } else { "they" },
                ));
                gm.schedule_changed.notify_waiters();
            }
            Ok(_) => {}
            Err(e) => log(&format!("ggp serve: reaping failed: {}", e.message())),
        }
    }
}
