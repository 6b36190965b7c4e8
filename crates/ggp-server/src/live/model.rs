//! The live match as domain state: what a match running in this server is, what it has
//! recorded so far, its clocks and its human seats' turns, and who may see what of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ggp_match::MatchRecord;
use serde_json::json;
use tokio::sync::{oneshot, watch};

use crate::board::{Geometry, Knowledge, Target, render_known, render_step, targets};
use crate::db::{Seat, now_ms};
use crate::error::Error;
use crate::term::{Term, parse_state};

/// What a match is created from.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct MatchRequest {
    /// The game's key.
    pub game: String,
    /// Its version (the latest if absent).
    #[serde(default)]
    pub version: Option<i64>,
    /// A seat per role, in the order of the game's roles: a registered player's name, a
    /// built-in strategy (`random`, `legal`, …) or `human`.
    pub players: Vec<String>,
    pub startclock: u64,
    pub playclock: u64,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Milliseconds to wait after each step before the next PLAY (at most a minute), so that
    /// people can follow fast players; 0 by default.
    #[serde(default)]
    pub delay: u64,
    /// The scheduled row (a tournament's match) this match plays; never from a request.
    #[serde(skip)]
    pub scheduled: Option<i64>,
}

/// The longest delay between steps: a minute.
pub const MAX_DELAY_MS: u64 = 60_000;

/// A created match, and its human seats' tokens (shown once).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Created {
    pub id: String,
    pub seats: Vec<SeatLink>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct SeatLink {
    pub seat: usize,
    pub role: String,
    pub token: String,
    /// The match page with the seat's token, for whoever plays it.
    pub url: String,
}

/// The longest clock a match may have: a day.
pub(super) const MAX_CLOCK: u64 = ggp_protocol::MAX_CLOCK_SECS;

/// A running clock: the start clock, or the play clock of a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `start` or `play`.
    pub phase: &'static str,
    pub step: usize,
    /// Milliseconds since the epoch.
    pub deadline: i64,
}

/// A human seat's move awaited by the manager.
pub(super) struct HumanTurn {
    pub(super) step: usize,
    pub(super) legal: Vec<String>,
    pub(super) targets: Vec<Target>,
    pub(super) deadline: i64,
    pub(super) reply: Option<oneshot::Sender<String>>,
}

/// What changes as a live match goes on.
#[derive(Default)]
pub(super) struct LiveData {
    /// The record so far as written (durable), names as registered; `None` until it is first
    /// written. What the API, the pages and the stream show: a step appears once a restart
    /// would still find it.
    pub(super) record: Option<MatchRecord>,
    /// The record being written: `record` and what the manager recorded since.
    pub(super) pending: Option<MatchRecord>,
    pub(super) started: bool,
    pub(super) clock: Option<Clock>,
    pub(super) clock_v: u64,
    pub(super) turns: Vec<Option<HumanTurn>>,
    pub(super) turn_v: u64,
    pub(super) status_v: u64,
    /// The match task has returned; `failure` says why if it never started.
    pub(super) ended: bool,
    pub(super) failure: Option<String>,
    /// Rendered boards, per state.
    pub(super) boards: Vec<Option<Arc<str>>>,
    pub(super) geometry: Option<Geometry>,
    /// States the geometry was computed from (0: not yet).
    pub(super) geometry_states: usize,
    /// What the last `status` event said: the status and the start errors.
    pub(super) status_seen: Option<(&'static str, Vec<String>)>,
    /// GDL-III: the `knows` atoms that hold after each state's true history, as the manager
    /// reported them (by state; none for the initial state, or in a game without `knows`).
    /// Shown to the admin, and to each seat its own part (see [`ggp_match::Knowledge::of_role`]).
    pub(super) knowledge: Vec<Option<ggp_match::Knowledge>>,
}

/// What a GDL-II role knows, drawn step by step: the boards drawn so far, and the knowledge
/// that draws the next (`None` once it cannot be followed: the rules cannot be played, or a
/// percept is not explained).
pub(super) struct RoleBoards {
    knowledge: Option<Knowledge>,
    /// The board of the fluents the role may see, from the game's fluents and the rules only.
    geometry: Option<Geometry>,
    boards: Vec<Arc<str>>,
    /// The fluents it was sure of at the last board drawn, for the cells the next changes.
    certain: Option<Vec<Term>>,
}

/// What someone may see of a match. In a GDL game, everything. In a GDL-II game, while it is
/// played (its secret phase), the true state, the joint moves and the roles' percepts are
/// shown only to the admin; a seat's token shows its role's view (its percepts, its own moves
/// and errors, its legal moves), and anyone else sees the match's progress (the steps made,
/// the clocks, the status). Once the match is over, everything is public. A page opened as a
/// seat (`?seat=K`) shows that role's view only, whoever opens it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sight {
    /// The true state, every move and every role's percepts.
    All,
    /// One role's view (its index).
    Role(usize),
    /// The steps made, the clocks and the status.
    Progress,
}

impl Sight {
    /// `all`, `role` or `progress`.
    pub fn name(self) -> &'static str {
        match self {
            Sight::All => "all",
            Sight::Role(_) => "role",
            Sight::Progress => "progress",
        }
    }
}

/// Who asks to see a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    Admin,
    /// The holder of this seat's token.
    Seat(usize),
    Anyone,
}

/// What `asker` may see of a match (see [`Sight`]), asking for `role`'s view or (`None`) the
/// whole match. `gdl2`: the match has percepts; `secret`: a GDL-II match being played.
pub fn sight(
    gdl2: bool,
    secret: bool,
    asker: Asker,
    role: Option<usize>,
    roles: &[String],
) -> Result<Sight, Error> {
    if let Some(r) = role
        && r >= roles.len()
    {
        return Err(Error::NotFound(format!(
            "the match has {} roles; there is no role {r}",
            roles.len()
        )));
    }
    if !gdl2 {
        return Ok(Sight::All);
    }
    Ok(match (asker, role) {
        (Asker::Seat(s), None) => Sight::Role(s),
        (Asker::Seat(s), Some(r)) if r == s || !secret => Sight::Role(r),
        (Asker::Seat(s), Some(r)) => {
            return Err(Error::Forbidden(format!(
                "this seat's token shows the view of `{}`, not of `{}`, while the match is played",
                roles[s], roles[r]
            )));
        }
        (Asker::Admin, Some(r)) => Sight::Role(r),
        (Asker::Admin, None) => Sight::All,
        (Asker::Anyone, Some(r)) if secret => {
            return Err(Error::Unauthorized(format!(
                "while a GDL-II match is played, the view of `{}` needs its seat's token (or the admin's): `Authorization: Bearer <token>`",
                roles[r]
            )));
        }
        (Asker::Anyone, Some(r)) => Sight::Role(r),
        (Asker::Anyone, None) if secret => Sight::Progress,
        (Asker::Anyone, None) => Sight::All,
    })
}

/// A match running in this server.
pub struct Live {
    pub id: String,
    pub game: String,
    pub version: i64,
    pub roles: Vec<String>,
    /// A seat per role (GDL-II's `random`: the manager's).
    pub seats: Vec<Seat>,
    /// A GDL-II game: while it is played, what each role sees is secret (see [`Sight`]).
    pub gdl2: bool,
    /// A GDL-III game (its rules use `knows`): each role's view says what it knows.
    pub gdl3: bool,
    /// The tournament's scheduled match it plays, if any.
    pub scheduled: Option<i64>,
    pub start_clock: Duration,
    pub play_clock: Duration,
    /// Waited after each step before the next PLAY.
    pub delay: Duration,
    /// Delays waited so far.
    pub(super) delays: std::sync::atomic::AtomicU32,
    /// Fluents that can hold in the game, for its board.
    pub(super) hint: Vec<Term>,
    /// The game's rules (KIF), for what the board looks like and what a GDL-II role knows.
    pub(super) rules: Arc<str>,
    /// GDL-II: what each role knows, step by step (its boards), for its seat's view; apart
    /// from `data`, so that following a role's knowledge never holds up the match.
    pub(super) known: Mutex<Vec<Option<RoleBoards>>>,
    pub(super) data: Mutex<LiveData>,
    pub(super) changed: watch::Sender<u64>,
    pub(super) stop: Mutex<Option<oneshot::Sender<String>>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Live {
    pub(super) fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    /// Whether the match has ended (its task returned).
    pub fn ended(&self) -> bool {
        lock(&self.data).ended
    }

    /// Whether what the roles see is secret now: a GDL-II match not over yet.
    pub fn secret(&self) -> bool {
        let data = lock(&self.data);
        self.gdl2
            && !data.ended
            && !data
                .record
                .as_ref()
                .is_some_and(|r| r.is_completed || r.is_aborted)
    }

    /// The record so far (names as registered).
    pub fn record(&self) -> Option<MatchRecord> {
        lock(&self.data).record.clone()
    }

    /// The record of a match whose players are being started, before anything is recorded:
    /// its roles, players and clocks, no steps.
    pub fn provisional_record(&self) -> MatchRecord {
        MatchRecord {
            match_id: self.id.clone(),
            game_name: self.game.clone(),
            random_token: String::new(),
            start_time: 0,
            rules: String::new(),
            game_role_names: self.roles.clone(),
            player_names_from_host: self.seats.iter().map(|s| s.name.clone()).collect(),
            start_clock: self.start_clock.as_secs(),
            play_clock: self.play_clock.as_secs(),
            states: Vec::new(),
            moves: Vec::new(),
            state_times: Vec::new(),
            errors: Vec::new(),
            start_errors: Vec::new(),
            goal_values: Vec::new(),
            is_completed: false,
            is_aborted: false,
            abort_reason: None,
            percepts: Vec::new(),
            move_times: Vec::new(),
        }
    }

    /// The move awaited from seat `seat`, if any: `{"step", "moves", "deadline"}`.
    pub fn turn_of(&self, seat: usize) -> Option<serde_json::Value> {
        let data = lock(&self.data);
        let turn = data.turns.get(seat)?.as_ref()?;
        Some(json!({"step": turn.step, "moves": turn.legal, "deadline": turn.deadline}))
    }

    /// The running clock, if any.
    pub fn clock(&self) -> Option<Clock> {
        lock(&self.data).clock.clone()
    }

    /// Asks the match to stop (ABORT to the players, recorded as aborted for `reason`).
    pub fn stop(&self, reason: String) -> bool {
        match lock(&self.stop).take() {
            Some(stop) => stop.send(reason).is_ok(),
            None => false,
        }
    }

    /// The board of state `k`, rendered once.
    pub(super) fn board(&self, data: &mut LiveData, k: usize) -> Arc<str> {
        let states = data.record.as_ref().map_or(0, |r| r.states.len());
        if data.geometry_states == 0 || (data.geometry.is_none() && states > data.geometry_states) {
            let record = data.record.as_ref();
            let parsed: Vec<Vec<Term>> = record
                .map(|r| r.states.iter().map(|s| parse_state(s)).collect())
                .unwrap_or_default();
            data.geometry = Geometry::detect_with(
                self.hint.iter().chain(parsed.iter().flatten()),
                Some(&self.rules),
            );
            data.geometry_states = states.max(1);
        }
        if data.boards.len() < states {
            data.boards.resize(states, None);
        }
        if let Some(Some(html)) = data.boards.get(k) {
            return html.clone();
        }
        let state_of = |k: usize| {
            data.record
                .as_ref()
                .and_then(|r| r.states.get(k))
                .map(|s| parse_state(s))
        };
        let state = state_of(k).unwrap_or_default();
        let previous = k.checked_sub(1).and_then(state_of);
        let html: Arc<str> = render_step(&state, previous.as_deref(), data.geometry.as_ref())
            .into_string()
            .into();
        if let Some(slot) = data.boards.get_mut(k) {
            *slot = Some(html.clone());
        }
        html
    }

    /// The board of what role `r` knows at state `k` of a GDL-II match (its percepts and its
    /// own moves so far), drawn once; `None` where the game has no board or the role's
    /// knowledge cannot be followed.
    pub(super) fn known_board(&self, record: &MatchRecord, r: usize, k: usize) -> Option<Arc<str>> {
        let mut known = lock(&self.known);
        if known.len() < self.roles.len() {
            known.resize_with(self.roles.len(), || None);
        }
        let rules = self.rules.clone();
        let hint = &self.hint;
        let role = known.get_mut(r)?.get_or_insert_with(|| {
            let knowledge = Knowledge::new(&rules, r);
            let start = knowledge.as_ref().map(Knowledge::known).unwrap_or_default();
            RoleBoards {
                geometry: Geometry::detect_with(hint.iter().chain(&start.possible), Some(&rules)),
                knowledge,
                boards: Vec::new(),
                certain: None,
            }
        });
        // A game without a board shows its role's view as the percepts alone.
        role.geometry.as_ref()?;
        while role.boards.len() <= k && role.boards.len() < record.states.len() {
            let step = role.boards.len();
            let knowledge = role.knowledge.as_mut()?;
            if step > 0 {
                let own = record.moves.get(step - 1).and_then(|m| m.get(r));
                let percepts = record
                    .percepts
                    .get(step - 1)
                    .and_then(|p| p.get(r))
                    .cloned()
                    .unwrap_or_default();
                if !knowledge.step(own.map(String::as_str), &percepts) {
                    role.knowledge = None;
                    return None;
                }
            }
            let known = knowledge.known();
            let html = render_known(
                &known.certain,
                &known.possible,
                role.certain.as_deref(),
                role.geometry.as_ref(),
            );
            role.boards.push(html.into_string().into());
            role.certain = Some(known.certain);
        }
        role.boards.get(k).cloned()
    }

    /// Takes what the manager recorded into the copy to write (`pending`).
    pub(super) fn sync(&self, data: &mut LiveData, rec: &MatchRecord) {
        let names: Vec<String> = self.seats.iter().map(|s| s.name.clone()).collect();
        match &mut data.pending {
            None => {
                let mut copy = rec.clone();
                copy.player_names_from_host = names;
                data.pending = Some(copy);
            }
            Some(copy) => {
                let n = copy.moves.len();
                copy.moves
                    .extend_from_slice(&rec.moves[n.min(rec.moves.len())..]);
                let s = copy.states.len();
                copy.states
                    .extend_from_slice(&rec.states[s.min(rec.states.len())..]);
                let t = copy.state_times.len();
                copy.state_times
                    .extend_from_slice(&rec.state_times[t.min(rec.state_times.len())..]);
                // The errors of the state a move was made from are filled in with the move.
                copy.errors.truncate(n);
                copy.errors
                    .extend_from_slice(&rec.errors[n.min(rec.errors.len())..]);
                let p = copy.percepts.len();
                copy.percepts
                    .extend_from_slice(&rec.percepts[p.min(rec.percepts.len())..]);
                let m = copy.move_times.len();
                copy.move_times
                    .extend_from_slice(&rec.move_times[m.min(rec.move_times.len())..]);
                copy.start_errors.clone_from(&rec.start_errors);
                copy.goal_values.clone_from(&rec.goal_values);
                copy.is_completed = rec.is_completed;
                copy.is_aborted = rec.is_aborted;
                copy.abort_reason.clone_from(&rec.abort_reason);
            }
        }
    }

    /// After a write is durable: the clock that runs now, turns of past steps dropped, and
    /// the watchers woken. Returns whether the match is over.
    pub(super) fn saved(&self) -> bool {
        let mut data = lock(&self.data);
        // What was written is what the manager recorded up to now (it waits for each write).
        let LiveData {
            record, pending, ..
        } = &mut *data;
        record.clone_from(pending);
        let Some(record) = &data.record else {
            return false;
        };
        let steps = record.moves.len();
        let over = record.is_completed || record.is_aborted;
        let clock = if over {
            None
        } else if !data.started {
            Some(Clock {
                phase: "start",
                step: 0,
                deadline: now_ms() + self.start_clock.as_millis() as i64,
            })
        } else {
            Some(Clock {
                phase: "play",
                step: steps,
                deadline: now_ms() + (self.delay + self.play_clock).as_millis() as i64,
            })
        };
        if over
            || data.clock.as_ref().map(|c| (c.phase, c.step))
                != clock.as_ref().map(|c| (c.phase, c.step))
        {
            data.clock = clock;
            data.clock_v += 1;
        }
        let before = data.turns.iter().filter(|t| t.is_some()).count();
        for turn in &mut data.turns {
            if turn.as_ref().is_some_and(|t| over || t.step < steps) {
                *turn = None;
            }
        }
        if data.turns.iter().filter(|t| t.is_some()).count() != before {
            data.turn_v += 1;
        }
        let status = (
            status_of(data.record.as_ref(), false),
            data.record
                .as_ref()
                .map(|r| r.start_errors.clone())
                .unwrap_or_default(),
        );
        if data.status_seen.as_ref() != Some(&status) {
            data.status_seen = Some(status);
            data.status_v += 1;
        }
        drop(data);
        self.bump();
        over
    }

    /// START went out and every player answered (or its clock ran out): the first play clock.
    pub(super) fn started(&self) {
        let mut data = lock(&self.data);
        data.started = true;
        data.clock = Some(Clock {
            phase: "play",
            step: 0,
            deadline: now_ms() + self.play_clock.as_millis() as i64,
        });
        data.clock_v += 1;
        drop(data);
        self.bump();
    }

    /// The manager asks a human seat for a move. A seat with one legal move (the `noop` of a
    /// turn-taking game) has no choice to make: that move is made at once for the person.
    pub(super) fn turn(&self, seat: usize, turn: ggp_match::Turn) {
        if let [only] = turn.legal.as_slice() {
            let only = only.clone();
            let _ = turn.reply.send(only);
            self.clear_turn(seat);
            return;
        }
        let mut data = lock(&self.data);
        let states = data.record.as_ref().map_or(0, |r| r.states.len());
        // The board's geometry, for the cells the moves name.
        if states > 0 {
            self.board(&mut data, states - 1);
        }
        let targets = data
            .geometry
            .as_ref()
            .map(|g| targets(&turn.legal, g))
            .unwrap_or_default();
        let remaining = turn
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        if data.turns.len() < self.seats.len() {
            data.turns.resize_with(self.seats.len(), || None);
        }
        data.turns[seat] = Some(HumanTurn {
            step: turn.step,
            legal: turn.legal,
            targets,
            deadline: now_ms() + remaining.as_millis() as i64,
            reply: Some(turn.reply),
        });
        data.turn_v += 1;
        drop(data);
        self.bump();
    }

    /// The manager reported the `knows` atoms after step `step` (from 0): they hold at state
    /// `step + 1`. Kept before the step is written, so that it is there when the step is sent.
    pub(super) fn knew(&self, step: usize, knowledge: Option<ggp_match::Knowledge>) {
        let mut data = lock(&self.data);
        if data.knowledge.len() <= step + 1 {
            data.knowledge.resize(step + 2, None);
        }
        data.knowledge[step + 1] = knowledge;
    }

    pub(super) fn clear_turn(&self, seat: usize) {
        let mut data = lock(&self.data);
        if let Some(turn) = data.turns.get_mut(seat)
            && turn.is_some()
        {
            *turn = None;
            data.turn_v += 1;
            drop(data);
            self.bump();
        }
    }

    /// A human seat's move: it must be the seat's turn (at `step`, if given), and the move one
    /// of its legal moves (compared without regard to case or spacing). Returns the move as
    /// the rules spell it.
    pub fn submit(&self, seat: usize, step: Option<usize>, mv: &str) -> Result<String, Error> {
        let mut data = lock(&self.data);
        let Some(turn) = data.turns.get_mut(seat).and_then(Option::as_mut) else {
            return Err(Error::Conflict(format!(
                "no move is awaited from seat {seat} now (it is not its turn, or the match is over)"
            )));
        };
        if let Some(step) = step
            && step != turn.step
        {
            return Err(Error::Conflict(format!(
                "the move is for step {step}, but the match is at step {}",
                turn.step
            )));
        }
        let wanted = normal(mv);
        let Some(chosen) = turn.legal.iter().find(|m| normal(m) == wanted).cloned() else {
            let shown: Vec<&str> = turn.legal.iter().take(50).map(String::as_str).collect();
            return Err(Error::Unprocessable {
                message: format!(
                    "`{}` is not a legal move now; the legal moves are: {}{}",
                    mv.chars().take(200).collect::<String>(),
                    shown.join(", "),
                    if turn.legal.len() > shown.len() {
                        ", …"
                    } else {
                        ""
                    }
                ),
                diagnostics: Vec::new(),
                rendered: Vec::new(),
            });
        };
        let sent = turn
            .reply
            .take()
            .is_some_and(|reply| reply.send(chosen.clone()).is_ok());
        data.turns[seat] = None;
        data.turn_v += 1;
        drop(data);
        self.bump();
        if sent {
            Ok(chosen)
        } else {
            Err(Error::Conflict(
                "too late: the play clock ran out and a random legal move was made".into(),
            ))
        }
    }

    pub(super) fn end(&self, failure: Option<String>) {
        let mut data = lock(&self.data);
        data.ended = true;
        data.failure = failure;
        data.clock = None;
        data.clock_v += 1;
        for t in &mut data.turns {
            *t = None;
        }
        data.turn_v += 1;
        data.status_v += 1;
        drop(data);
        self.bump();
    }
}

/// Text compared without regard to case or spacing.
pub(super) fn normal(text: &str) -> String {
    let mut out = String::new();
    for token in text
        .replace('(', " ( ")
        .replace(')', " ) ")
        .split_whitespace()
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&token.to_ascii_lowercase());
    }
    out
}
pub(super) fn status_of(record: Option<&MatchRecord>, ended: bool) -> &'static str {
    match record {
        Some(r) if r.is_completed => "finished",
        Some(r) if r.is_aborted => "aborted",
        None if ended => "failed",
        _ => "live",
    }
}

/// The live matches, by id.
pub type LiveMap = Mutex<HashMap<String, Arc<Live>>>;

#[cfg(test)]
mod tests {
    use super::normal;

    #[test]
    fn moves_compare_without_case_or_spacing() {
        assert_eq!(normal(" ( Mark 1  2 )"), normal("(mark 1 2)"));
        assert_ne!(normal("(mark 1 2)"), normal("(mark 1 3)"));
    }
}
