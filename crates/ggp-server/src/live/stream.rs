//! The stream of a match's events: each watcher keeps its place in the record and is sent
//! what it has not seen (the steps, as JSON and as the match page's rows; the clocks; the
//! human seats' turns; the status), so a slow watcher misses nothing and never slows the
//! match.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use ggp_match::{Knowledge, Known, MatchRecord};
use serde_json::json;
use tokio::sync::watch;

use super::model::{Live, Sight, lock, status_of};
use crate::db::now_ms;
use crate::error::Error;
use crate::state::Gamemaster;
use crate::term::parse_state;

/// Where a watcher is in a match.
struct Watcher {
    gm: Arc<Gamemaster>,
    id: String,
    live: Option<Arc<Live>>,
    changes: Option<watch::Receiver<u64>>,
    html: bool,
    /// What the watcher may see.
    sight: Sight,
    /// States sent (the initial one with `begin`).
    states: usize,
    clock_v: u64,
    turn_v: u64,
    status_v: u64,
    queue: VecDeque<SseEvent>,
    done: bool,
    /// Following a match another server plays, from the database.
    polling: bool,
}

/// How often a match another server plays is read again for its watchers.
const REMOTE_POLL: Duration = Duration::from_millis(500);

fn event(name: &str, data: serde_json::Value) -> SseEvent {
    SseEvent::default().event(name).data(data.to_string())
}

impl Watcher {
    /// Queues what the watcher has not seen, waiting for news if there is none.
    async fn fill(&mut self) {
        let Some(live) = self.live.clone() else {
            if self.polling {
                tokio::time::sleep(REMOTE_POLL).await;
            }
            self.finished_match().await;
            return;
        };
        let Some(mut changes) = self.changes.take() else {
            return;
        };
        loop {
            changes.borrow_and_update();
            self.take_news(&live);
            if !self.queue.is_empty() || self.done {
                self.changes = Some(changes);
                return;
            }
            if changes.changed().await.is_err() {
                self.take_news(&live);
                self.done = true;
                return;
            }
        }
    }

    fn take_news(&mut self, live: &Live) {
        let known = self.known_boards(live);
        let mut data = lock(&live.data);
        if data.record.is_some() {
            let record = data.record.clone().expect("there is a record");
            let sight = self.sight;
            // The first state not sent yet: the first of `known`.
            let first = self.states;
            // The true state's boards, or what a GDL-II role knows.
            let board = |data: &mut super::model::LiveData, k: usize| match sight {
                _ if !self.html => None,
                Sight::All => Some(live.board(data, k)),
                Sight::Role(r) if live.gdl2 => known
                    .get(k.wrapping_sub(first))
                    .cloned()
                    .flatten()
                    .or_else(|| live.known_board(&record, r, k)),
                _ => None,
            };
            if self.states == 0 {
                let board = board(&mut data, 0);
                self.queue.push_back(begin(
                    &live.id,
                    &live.game,
                    Some(live.version),
                    &record,
                    board,
                    sight,
                    live.gdl2,
                ));
                self.states = 1;
            }
            while self.states < record.states.len() {
                let k = self.states;
                let board = board(&mut data, k);
                let knowledge = data.knowledge.get(k).and_then(Option::as_ref);
                self.queue
                    .push_back(step(&record, k, board, knowledge, self.html, sight));
                self.states += 1;
            }
            if data.clock_v != self.clock_v {
                self.clock_v = data.clock_v;
                self.queue.push_back(event(
                    "clock",
                    match &data.clock {
                        Some(c) => json!({"phase": c.phase, "step": c.step, "deadline": c.deadline, "now": now_ms()}),
                        None => json!({"phase": null, "now": now_ms()}),
                    },
                ));
            }
            if data.turn_v != self.turn_v {
                self.turn_v = data.turn_v;
                let seats: Vec<serde_json::Value> = data
                    .turns
                    .iter()
                    .enumerate()
                    .filter_map(|(k, t)| {
                        t.as_ref().and_then(|t| match self.sight {
                            Sight::All => {
                                Some(json!({"seat": k, "role": live.roles[k], "step": t.step,
                                   "moves": t.legal, "targets": t.targets, "deadline": t.deadline}))
                            }
                            // Only its own legal moves (and the cells they name): another
                            // role's depend on what it sees.
                            Sight::Role(r) if r == k => {
                                Some(json!({"seat": k, "role": live.roles[k], "step": t.step,
                                   "moves": t.legal, "targets": t.targets, "deadline": t.deadline}))
                            }
                            Sight::Role(_) => None,
                            Sight::Progress => {
                                Some(json!({"seat": k, "role": live.roles[k], "step": t.step,
                                   "deadline": t.deadline}))
                            }
                        })
                    })
                    .collect();
                self.queue
                    .push_back(event("turn", json!({"seats": seats, "now": now_ms()})));
            }
        }
        if data.status_v != self.status_v {
            self.status_v = data.status_v;
            let status = status_of(data.record.as_ref(), data.ended);
            let payload = status_json(status, data.record.as_ref(), data.failure.as_deref());
            if data.ended {
                self.queue.push_back(event("end", payload));
                self.done = true;
            } else {
                self.queue.push_back(event("status", payload));
            }
        }
    }

    /// In a role's view of a GDL-II match, the boards of what it knows at the states not sent
    /// yet (from `self.states` on), drawn before the match's data is locked.
    fn known_boards(&self, live: &Live) -> Vec<Option<Arc<str>>> {
        let Sight::Role(r) = self.sight else {
            return Vec::new();
        };
        if !self.html || !live.gdl2 {
            return Vec::new();
        }
        let Some(record) = lock(&live.data).record.clone() else {
            return Vec::new();
        };
        (self.states..record.states.len())
            .map(|k| live.known_board(&record, r, k))
            .collect()
    }

    async fn finished_match(&mut self) {
        self.done = true;
        let record = match self.gm.db.record(&self.id).await {
            Ok(r) => r,
            Err(e) => {
                let failure = match self.gm.db.served(&self.id).await {
                    Ok(Some(s)) => s.failure,
                    _ => None,
                };
                self.queue.push_back(event(
                    "end",
                    json!({"status": "failed", "error": failure.unwrap_or_else(|| e.message().to_string())}),
                ));
                return;
            }
        };
        let served = self.gm.db.served(&self.id).await.ok().flatten();
        let (game, version) = match &served {
            Some(s) => (s.game.clone(), Some(s.version)),
            None => (record.game_name.clone(), None),
        };
        let geometry = if self.html && self.sight == Sight::All {
            let version = match &served {
                Some(s) => self.gm.db.version(&s.game, Some(s.version)).await.ok(),
                None => None,
            };
            let hint = version.as_ref().map(crate::games::hint).unwrap_or_default();
            let rules = version.as_ref().and_then(|v| v.rules.as_deref());
            crate::pages::geometry(&hint, rules, &record)
        } else {
            None
        };
        let gdl2 = !record.percepts.is_empty();
        let sight = self.sight;
        let board = |k: usize| -> Option<Arc<str>> {
            (self.html && sight == Sight::All).then(|| {
                let state = parse_state(&record.states[k]);
                let previous = k.checked_sub(1).map(|p| parse_state(&record.states[p]));
                crate::board::render_step(&state, previous.as_deref(), geometry.as_ref())
                    .into_string()
                    .into()
            })
        };
        if self.states == 0 {
            self.queue.push_back(begin(
                &self.id,
                &game,
                version,
                &record,
                board(0),
                sight,
                gdl2,
            ));
            self.states = 1;
        }
        for k in self.states..record.states.len() {
            self.queue
                .push_back(step(&record, k, board(k), None, self.html, sight));
        }
        self.states = self.states.max(record.states.len());
        let status = if record.is_completed {
            "finished"
        } else if record.is_aborted {
            "aborted"
        } else {
            "unfinished"
        };
        // A match another server is playing (it is served and not over, and servers that are
        // gone have their matches aborted): followed from the database.
        if status == "unfinished" && served.is_some() {
            self.done = false;
            self.polling = true;
            return;
        }
        self.queue
            .push_back(event("end", status_json(status, Some(&record), None)));
    }
}

fn status_json(
    status: &str,
    record: Option<&MatchRecord>,
    failure: Option<&str>,
) -> serde_json::Value {
    json!({
        "status": status,
        "goals": record.map(|r| r.goal_values.clone()).unwrap_or_default(),
        "abortReason": record.and_then(|r| r.abort_reason.clone()),
        "startErrors": record.map(|r| r.start_errors.clone()).unwrap_or_default(),
        "steps": record.map_or(0, |r| r.moves.len()),
        "error": failure,
    })
}

fn begin(
    id: &str,
    game: &str,
    version: Option<i64>,
    record: &MatchRecord,
    board: Option<Arc<str>>,
    sight: Sight,
    gdl2: bool,
) -> SseEvent {
    let mut data = json!({
        "id": id,
        "game": game,
        "version": version,
        "roles": record.game_role_names,
        "players": record.player_names_from_host,
        "startClock": record.start_clock,
        "playClock": record.play_clock,
        "startTime": record.start_time,
        "gdl2": gdl2,
        "view": sight.name(),
        "state": if sight == Sight::All { json!(record.states.first()) } else { json!(null) },
    });
    if let Sight::Role(r) = sight {
        data["role"] = json!(r);
    }
    if let Some(board) = board {
        data["board"] = json!(&*board);
    }
    event("begin", data)
}

/// The event of step `k` (from 1): the joint move that led to state `k`, as `sight` may see
/// it; in a GDL-III game, with the `knows` atoms that hold after it (`knowledge`): all of
/// them for the admin, and a role only what it knows itself (and what is common knowledge).
fn step(
    record: &MatchRecord,
    k: usize,
    board: Option<Arc<str>>,
    knowledge: Option<&Knowledge>,
    html: bool,
    sight: Sight,
) -> SseEvent {
    let moves = record.moves.get(k - 1).cloned().unwrap_or_default();
    let errors = record.errors.get(k - 1).cloned().unwrap_or_default();
    let percepts = record.percepts.get(k - 1);
    let time = record.state_times.get(k);
    let known_by = |r: usize| -> Vec<&Known> {
        knowledge
            .map(|kn| kn.of_role(r).collect())
            .unwrap_or_default()
    };
    let mut data = match sight {
        Sight::All => {
            let mut data = json!({
                "step": k,
                "moves": moves,
                "errors": errors,
                "state": record.states.get(k),
                "time": time,
            });
            if let Some(percepts) = percepts {
                data["percepts"] = json!(percepts);
            }
            if let Some(knowledge) = knowledge {
                data["knows"] = json!(knowledge.atoms);
            }
            data
        }
        Sight::Role(r) => {
            let mut data = json!({
                "step": k,
                "role": r,
                "move": moves.get(r),
                "error": errors.get(r),
                "percepts": percepts.and_then(|p| p.get(r)).cloned().unwrap_or_default(),
                "time": time,
            });
            if knowledge.is_some() {
                data["known"] = json!(
                    known_by(r)
                        .iter()
                        .map(|kn| known_json(kn))
                        .collect::<Vec<_>>()
                );
            }
            data
        }
        Sight::Progress => json!({"step": k, "time": time}),
    };
    if let Some(board) = board {
        data["board"] = json!(&*board);
    }
    if html {
        let row = match sight {
            Sight::All => {
                crate::pages::matches::step_row(k, &moves, &errors, &record.game_role_names)
            }
            Sight::Role(r) => crate::pages::matches::view_row(
                k,
                moves.get(r).map(String::as_str),
                errors.get(r).map(String::as_str),
                percepts
                    .and_then(|p| p.get(r))
                    .map_or(&[][..], Vec::as_slice),
                &known_by(r),
                true,
            ),
            Sight::Progress => maud::html! {},
        };
        data["row"] = json!(row.into_string());
        if let (Sight::All, Some(percepts)) = (sight, percepts) {
            data["views"] = json!(
                (0..record.game_role_names.len())
                    .map(|r| crate::pages::matches::view_row(
                        k,
                        moves.get(r).map(String::as_str),
                        errors.get(r).map(String::as_str),
                        percepts.get(r).map_or(&[][..], Vec::as_slice),
                        &known_by(r),
                        false,
                    )
                    .into_string())
                    .collect::<Vec<_>>()
            );
        }
    }
    event("step", data).id(k.to_string())
}

/// A `knows` atom a role is shown: `{"what": P, "common": false}` for what it knows itself,
/// `"common": true` for common knowledge.
fn known_json(known: &Known) -> serde_json::Value {
    match known {
        Known::Role { what, .. } => json!({"what": what, "common": false}),
        Known::Common(what) => json!({"what": what, "common": true}),
    }
}

/// The events of a match from step `from` on (0: from its beginning): `begin` (the initial
/// state), a `step` per joint move, `clock`, `turn` (human seats' legal moves), `status`,
/// and `end`, after which the stream ends. With `html`, boards and rows of the moves table are
/// included, rendered.
pub async fn watch_match(
    gm: &Arc<Gamemaster>,
    id: &str,
    from: usize,
    html: bool,
    sight: Sight,
) -> Result<impl Stream<Item = Result<SseEvent, Infallible>> + use<>, Error> {
    let live = lock(&gm.live).get(id).cloned();
    if live.is_none() && !gm.db.match_exists(id).await? {
        return Err(Error::NotFound(format!("there is no match `{id}`")));
    }
    let watcher = Watcher {
        gm: gm.clone(),
        id: id.to_string(),
        changes: live.as_ref().map(|l| l.changed.subscribe()),
        live,
        html,
        sight,
        states: if from > 0 { from + 1 } else { 0 },
        clock_v: 0,
        turn_v: 0,
        status_v: 0,
        queue: VecDeque::new(),
        done: false,
        polling: false,
    };
    Ok(futures_util::stream::unfold(watcher, |mut w| async move {
        loop {
            if let Some(e) = w.queue.pop_front() {
                return Some((Ok(e), w));
            }
            if w.done {
                return None;
            }
            w.fill().await;
        }
    }))
}
