//! Matches running in the server: created from a request, run by the Game Manager
//! (`ggp_match::run_match_until`) on a task of their own, recorded step by step, watched
//! through a stream of events, and played by people through their seats' channels.
//!
//! A live match keeps a copy of its record (player names as registered) that grows with each
//! step; the record is written from that copy, and watchers are woken only once a step is
//! durable, so nobody sees a step that a crash could lose. Each watcher keeps its own place in
//! the record and is sent what it has not seen, so a slow watcher misses nothing and never
//! slows the match.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use ggp_match::{
    Event, MatchConfig, MatchError, MatchRecord, PlayerSpec, SeatChannel, SeatMessage,
    run_match_until,
};
use ggp_play::StrategyKind;
use serde_json::json;
use tokio::sync::{oneshot, watch};

use crate::board::{Geometry, Target, targets};
use crate::db::{NewMatch, NewSeat, Seat, now_ms};
use crate::error::Error;
use crate::term::{Term, parse_state};
use crate::{Gamemaster, auth};

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
const MAX_CLOCK: u64 = ggp_protocol::MAX_CLOCK_SECS;

/// The name a human seat has in records.
pub const HUMAN: &str = "human";

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
struct HumanTurn {
    step: usize,
    legal: Vec<String>,
    targets: Vec<Target>,
    deadline: i64,
    reply: Option<oneshot::Sender<String>>,
}

/// What changes as a live match goes on.
#[derive(Default)]
struct LiveData {
    /// The record so far as written (durable), names as registered; `None` until it is first
    /// written. What the API, the pages and the stream show: a step appears once a restart
    /// would still find it.
    record: Option<MatchRecord>,
    /// The record being written: `record` and what the manager recorded since.
    pending: Option<MatchRecord>,
    started: bool,
    clock: Option<Clock>,
    clock_v: u64,
    turns: Vec<Option<HumanTurn>>,
    turn_v: u64,
    status_v: u64,
    /// The match task has returned; `failure` says why if it never started.
    ended: bool,
    failure: Option<String>,
    /// Rendered boards, per state.
    boards: Vec<Option<Arc<str>>>,
    geometry: Option<Geometry>,
    /// States the geometry was computed from (0: not yet).
    geometry_states: usize,
    /// What the last `status` event said: the status and the start errors.
    status_seen: Option<(&'static str, Vec<String>)>,
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
    /// The tournament's scheduled match it plays, if any.
    pub scheduled: Option<i64>,
    pub start_clock: Duration,
    pub play_clock: Duration,
    /// Waited after each step before the next PLAY.
    pub delay: Duration,
    /// Delays waited so far.
    delays: std::sync::atomic::AtomicU32,
    /// Fluents that can hold in the game, for its board.
    hint: Vec<Term>,
    data: Mutex<LiveData>,
    changed: watch::Sender<u64>,
    stop: Mutex<Option<oneshot::Sender<String>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Live {
    fn bump(&self) {
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
    fn board(&self, data: &mut LiveData, k: usize) -> Arc<str> {
        let states = data.record.as_ref().map_or(0, |r| r.states.len());
        if data.geometry_states == 0 || (data.geometry.is_none() && states > data.geometry_states) {
            let record = data.record.as_ref();
            let parsed: Vec<Vec<Term>> = record
                .map(|r| r.states.iter().map(|s| parse_state(s)).collect())
                .unwrap_or_default();
            data.geometry = Geometry::detect(self.hint.iter().chain(parsed.iter().flatten()));
            data.geometry_states = states.max(1);
        }
        if data.boards.len() < states {
            data.boards.resize(states, None);
        }
        if let Some(Some(html)) = data.boards.get(k) {
            return html.clone();
        }
        let state = data
            .record
            .as_ref()
            .and_then(|r| r.states.get(k))
            .map(|s| parse_state(s))
            .unwrap_or_default();
        let html: Arc<str> = crate::board::render(&state, data.geometry.as_ref())
            .into_string()
            .into();
        if let Some(slot) = data.boards.get_mut(k) {
            *slot = Some(html.clone());
        }
        html
    }

    /// Takes what the manager recorded into the copy to write (`pending`).
    fn sync(&self, data: &mut LiveData, rec: &MatchRecord) {
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
    fn saved(&self) -> bool {
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
    fn started(&self) {
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
    fn turn(&self, seat: usize, turn: ggp_match::Turn) {
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

    fn clear_turn(&self, seat: usize) {
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

    fn end(&self, failure: Option<String>) {
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
fn normal(text: &str) -> String {
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

/// A match id for a game: `<key>.<milliseconds>`, with a suffix if that is taken.
async fn new_id(gm: &Gamemaster, key: &str) -> Result<String, Error> {
    let base = format!("{key}.{}", now_ms());
    let mut id = base.clone();
    let mut k = 2;
    while gm.db.match_exists(&id).await? || lock(&gm.live).contains_key(&id) {
        id = format!("{base}.{k}");
        k += 1;
    }
    Ok(id)
}

/// Creates a match and starts it.
pub async fn create(gm: &Arc<Gamemaster>, req: MatchRequest) -> Result<Created, Error> {
    if gm.stopping() {
        return Err(Error::Unavailable("the server is stopping".into()));
    }
    crate::games::check_key(&req.game)?;
    let version = gm.db.version(&req.game, req.version).await?;
    if let Some(engine) = &version.engine
        && let Some(why) = engine.strip_prefix("unplayable: ")
    {
        return Err(Error::Conflict(format!(
            "the game `{}` (version {}) cannot be played: {why}",
            version.key, version.version
        )));
    }
    let roles = version.roles.clone();
    // GDL-II's `random` role is no seat: the manager plays it.
    let chance = crate::games::random_role(&roles);
    let seated: Vec<usize> = (0..roles.len()).filter(|&k| Some(k) != chance).collect();
    if req.players.len() != seated.len() {
        let names = |ks: &[usize]| -> String {
            ks.iter()
                .map(|&k| roles[k].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let given = format!(
            "{} player{} given",
            req.players.len(),
            if req.players.len() == 1 {
                " was"
            } else {
                "s were"
            }
        );
        return Err(Error::BadRequest(match chance {
            Some(r) => format!(
                "the game `{}` has {} roles ({}), but `{}` is GDL-II's random role, which the manager plays: give {} player{}, for {}; {given}",
                version.key,
                roles.len(),
                names(&(0..roles.len()).collect::<Vec<_>>()),
                roles[r],
                seated.len(),
                if seated.len() == 1 { "" } else { "s" },
                names(&seated),
            ),
            None => format!(
                "the game `{}` has {} role{} ({}), but {given}",
                version.key,
                roles.len(),
                if roles.len() == 1 { "" } else { "s" },
                names(&seated),
            ),
        }));
    }
    for (clock, name) in [(req.startclock, "startclock"), (req.playclock, "playclock")] {
        if clock > MAX_CLOCK {
            return Err(Error::BadRequest(format!(
                "the {name} is {clock} seconds: at most a day ({MAX_CLOCK}) is allowed"
            )));
        }
    }
    if req.delay > MAX_DELAY_MS {
        return Err(Error::BadRequest(format!(
            "the delay is {} ms: at most a minute ({MAX_DELAY_MS} ms) is allowed",
            req.delay
        )));
    }
    if req.playclock == 0 && req.players.iter().any(|p| p.eq_ignore_ascii_case(HUMAN)) {
        return Err(Error::BadRequest(
            "a match with a human seat needs a play clock of at least a second".into(),
        ));
    }
    let registered = gm.db.players().await?;
    let mut specs = Vec::new();
    let mut seats = Vec::new();
    let mut rows = Vec::new();
    let mut humans = Vec::new();
    for (&k, name) in seated.iter().zip(&req.players) {
        if name.eq_ignore_ascii_case(HUMAN) {
            let (channel, messages) = SeatChannel::new(HUMAN);
            let token = auth::new_token();
            specs.push(PlayerSpec::Channel(channel));
            seats.push(Seat {
                kind: "human".into(),
                name: HUMAN.into(),
            });
            rows.push(NewSeat {
                seat: k,
                kind: "human",
                player: None,
                name: HUMAN.into(),
                token_hash: Some(auth::hash(&token)),
            });
            humans.push((k, token, messages));
        } else if let Some(kind) = StrategyKind::parse(name) {
            specs.push(PlayerSpec::Builtin(kind));
            seats.push(Seat {
                kind: "builtin".into(),
                name: kind.name().into(),
            });
            rows.push(NewSeat {
                seat: k,
                kind: "builtin",
                player: None,
                name: kind.name().into(),
                token_hash: None,
            });
        } else if let Some(p) = registered
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
        {
            if seats.iter().any(|s| s.kind == "player" && s.name == p.name) {
                return Err(Error::BadRequest(format!(
                    "`{}` is given for two roles: a player plays one role of a match (the protocol's messages do not say which role they are for)",
                    p.name
                )));
            }
            specs.push(PlayerSpec::Url(p.url.clone()));
            seats.push(Seat {
                kind: "player".into(),
                name: p.name.clone(),
            });
            rows.push(NewSeat {
                seat: k,
                kind: "player",
                player: Some(p.id),
                name: p.name.clone(),
                token_hash: None,
            });
        } else {
            return Err(Error::BadRequest(format!(
                "`{}` is not a player: use a registered player's name, {}, or `{HUMAN}`",
                name.chars().take(100).collect::<String>(),
                StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
            )));
        }
    }
    if let Some(r) = chance {
        seats.insert(r, crate::db::manager_seat());
    }
    let rules = version.rules.clone().unwrap_or_default();
    let gdl2 = chance.is_some() || {
        let text = rules.clone();
        tokio::task::spawn_blocking(move || crate::games::is_gdl2(&text))
            .await
            .map_err(|e| Error::Internal(format!("reading the rules failed: {e}")))?
    };
    let id = new_id(gm, &version.key).await?;
    // Its slot and its memory, before anything is recorded: a match that finds no room is
    // refused, with the limit it met.
    let builtins: Vec<&StrategyKind> = specs
        .iter()
        .filter_map(|s| match s {
            PlayerSpec::Builtin(kind) => Some(kind),
            _ => None,
        })
        .collect();
    let searchers = builtins
        .iter()
        .filter(|k| matches!(k, StrategyKind::Mcts(_)))
        .count();
    let need = gm
        .admission
        .need(version.memory, 1 + builtins.len(), searchers);
    let admitted = gm.admission.admit(need)?;
    let id = gm
        .db
        .add_served(NewMatch {
            match_id: id,
            version_id: version.id,
            server: gm.server_id(),
            scheduled: req.scheduled,
            seats: rows,
        })
        .await?;
    let seed = req.seed.unwrap_or_else(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
        u64::from_le_bytes(bytes)
    });
    let config = MatchConfig {
        match_id: id.clone(),
        game_name: version.key.clone(),
        rules,
        start_clock: Duration::from_secs(req.startclock),
        play_clock: Duration::from_secs(req.playclock),
        grace: gm.config.grace,
        seed,
        max_steps: gm.config.max_steps,
        memory: Some(admitted.memory.clone()),
    };
    let (stop, stopped) = oneshot::channel();
    let live = Arc::new(Live {
        id: id.clone(),
        game: version.key.clone(),
        version: version.version,
        roles: roles.clone(),
        seats,
        gdl2,
        scheduled: req.scheduled,
        start_clock: config.start_clock,
        play_clock: config.play_clock,
        delay: Duration::from_millis(req.delay),
        delays: Default::default(),
        hint: crate::games::hint(&version),
        data: Mutex::new(LiveData::default()),
        changed: watch::channel(0).0,
        stop: Mutex::new(Some(stop)),
    });
    lock(&gm.live).insert(id.clone(), live.clone());
    let mut links = Vec::new();
    for (k, token, mut messages) in humans {
        let seat_live = live.clone();
        tokio::spawn(async move {
            while let Some(message) = messages.recv().await {
                match message {
                    SeatMessage::Turn(turn) => seat_live.turn(k, turn),
                    SeatMessage::Stop { .. } | SeatMessage::Abort => seat_live.clear_turn(k),
                    SeatMessage::Start { .. } => {}
                }
            }
        });
        links.push(SeatLink {
            seat: k,
            role: roles[k].clone(),
            // `?seat=K`: the page shows that role's view only; the token stays in the
            // fragment, which browsers never send.
            url: format!(
                "/matches/{}?seat={k}#seat={k}&token={token}",
                crate::pages::path_part(&id)
            ),
            token,
        });
    }
    tokio::spawn(run(gm.clone(), live, config, specs, stopped, admitted));
    Ok(Created { id, seats: links })
}

/// Runs a match to its end, then takes it off the live list (and gives back its slot and its
/// memory).
async fn run(
    gm: Arc<Gamemaster>,
    live: Arc<Live>,
    config: MatchConfig,
    specs: Vec<PlayerSpec>,
    stopped: oneshot::Receiver<String>,
    admitted: crate::limits::Admitted,
) {
    let mut writer = gm.db.store.writer();
    let save_live = live.clone();
    let record = move |rec: &MatchRecord| {
        let saved = {
            let mut data = lock(&save_live.data);
            save_live.sync(&mut data, rec);
            writer.save(data.pending.as_ref().expect("synced"))
        };
        let live = save_live.clone();
        async move {
            saved.await.map_err(|e| e.to_string())?;
            let over = live.saved();
            if !over && !live.delay.is_zero() {
                live.delays
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(live.delay).await;
            }
            Ok(())
        }
    };
    let event_live = live.clone();
    let events = move |event: Event<'_>| {
        if let Event::Started { .. } = event {
            event_live.started();
        }
    };
    let stop = async move {
        match stopped.await {
            Ok(reason) => reason,
            Err(_) => std::future::pending().await,
        }
    };
    let id = config.match_id.clone();
    let outcome = run_match_until(config, specs, events, record, stop).await;
    let failure = match outcome {
        Ok(finished) => {
            // The delays between steps are not the manager's work.
            let paused = live.delay * live.delays.load(std::sync::atomic::Ordering::Relaxed);
            gm.stats.finished(finished.timing, paused);
            None
        }
        Err(e @ (MatchError::Rules(_) | MatchError::Players(_))) => {
            let why = e.to_string();
            let _ = gm.db.set_failure(id.clone(), why.clone()).await;
            Some(why)
        }
        Err(_) => None,
    };
    let completed = live.record().is_some_and(|r| r.is_completed);
    live.end(failure.clone());
    lock(&gm.live).remove(&id);
    drop(admitted);
    if let Some(row) = live.scheduled {
        crate::tournament::match_ended(&gm, row, completed, failure).await;
    }
    gm.ended.notify_waiters();
}

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
        let mut data = lock(&live.data);
        if data.record.is_some() {
            let record = data.record.clone().expect("there is a record");
            let sight = self.sight;
            let boards = self.html && sight == Sight::All;
            if self.states == 0 {
                let board = boards.then(|| live.board(&mut data, 0));
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
                let board = boards.then(|| live.board(&mut data, k));
                self.queue
                    .push_back(step(&record, k, board, self.html, sight));
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
                            // Only its own legal moves: another role's depend on what it sees.
                            Sight::Role(r) if r == k => {
                                Some(json!({"seat": k, "role": live.roles[k], "step": t.step,
                                   "moves": t.legal, "targets": [], "deadline": t.deadline}))
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
            let hint = match &served {
                Some(s) => self
                    .gm
                    .db
                    .version(&s.game, Some(s.version))
                    .await
                    .map(|v| crate::games::hint(&v))
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            crate::pages::geometry(&hint, &record)
        } else {
            None
        };
        let gdl2 = !record.percepts.is_empty();
        let sight = self.sight;
        let board = |k: usize| -> Option<Arc<str>> {
            (self.html && sight == Sight::All).then(|| {
                let state = parse_state(&record.states[k]);
                crate::board::render(&state, geometry.as_ref())
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
                .push_back(step(&record, k, board(k), self.html, sight));
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

fn status_of(record: Option<&MatchRecord>, ended: bool) -> &'static str {
    match record {
        Some(r) if r.is_completed => "finished",
        Some(r) if r.is_aborted => "aborted",
        None if ended => "failed",
        _ => "live",
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
/// it.
fn step(
    record: &MatchRecord,
    k: usize,
    board: Option<Arc<str>>,
    html: bool,
    sight: Sight,
) -> SseEvent {
    let moves = record.moves.get(k - 1).cloned().unwrap_or_default();
    let errors = record.errors.get(k - 1).cloned().unwrap_or_default();
    let percepts = record.percepts.get(k - 1);
    let time = record.state_times.get(k);
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
            data
        }
        Sight::Role(r) => json!({
            "step": k,
            "role": r,
            "move": moves.get(r),
            "error": errors.get(r),
            "percepts": percepts.and_then(|p| p.get(r)).cloned().unwrap_or_default(),
            "time": time,
        }),
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
                    )
                    .into_string())
                    .collect::<Vec<_>>()
            );
        }
    }
    event("step", data).id(k.to_string())
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

/// The live matches, by id.
pub type LiveMap = Mutex<HashMap<String, Arc<Live>>>;

/// Stops every live match for `reason` and waits (up to `wait`) until each has recorded it.
pub async fn stop_all(gm: &Gamemaster, reason: &str, wait: Duration) {
    let all: Vec<Arc<Live>> = lock(&gm.live).values().cloned().collect();
    for live in &all {
        live.stop(reason.to_string());
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let notified = gm.ended.notified();
        if lock(&gm.live).is_empty() {
            return;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return;
        }
    }
}

/// Whether the seat `seat` of live match `id` may be played with `token`.
pub async fn seat_of(gm: &Gamemaster, id: &str, token: &str) -> Result<Option<usize>, Error> {
    gm.db.seat_by_token(id, &auth::hash(token)).await
}

/// A live match.
pub fn get(gm: &Gamemaster, id: &str) -> Option<Arc<Live>> {
    lock(&gm.live).get(id).cloned()
}

/// Every live match, newest first.
pub fn all(gm: &Gamemaster) -> Vec<Arc<Live>> {
    let mut all: Vec<Arc<Live>> = lock(&gm.live).values().cloned().collect();
    all.sort_by(|a, b| b.id.cmp(&a.id));
    all
}

#[cfg(test)]
mod tests {
    use super::normal;

    #[test]
    fn moves_compare_without_case_or_spacing() {
        assert_eq!(normal(" ( Mark 1  2 )"), normal("(mark 1 2)"));
        assert_ne!(normal("(mark 1 2)"), normal("(mark 1 3)"));
    }
}
