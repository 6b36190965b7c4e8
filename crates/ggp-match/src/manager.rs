//! Running one match.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gdl_reason::{StateMachine, TermId};
use ggp_play::{Game, Machine, PlayerStats, State, Strategy, StrategyKind, load};
use ggp_protocol::{Request, Start, move_candidates};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use tokio::task::JoinHandle;

use crate::http::{HttpError, post};
use crate::record::{MatchRecord, StepError};

/// Who plays a role.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    /// A player at this URL (`http://127.0.0.1:9147`).
    Url(String),
    /// A built-in strategy, run in this process under the same clocks.
    Builtin(StrategyKind),
}

impl PlayerSpec {
    /// A built-in strategy's name (`random`, `legal`, `montecarlo`, `mcts`: see
    /// [`StrategyKind::parse`]), or an `http://` URL (a bare `host:port` gets `http://`).
    pub fn parse(text: &str) -> Result<PlayerSpec, String> {
        if let Some(kind) = StrategyKind::parse(text) {
            return Ok(PlayerSpec::Builtin(kind));
        }
        match text {
            _ if text.starts_with("http://") => Ok(PlayerSpec::Url(text.to_string())),
            _ if text.contains(':') && !text.contains("://") => {
                Ok(PlayerSpec::Url(format!("http://{text}")))
            }
            _ => Err(format!(
                "`{text}` is not a player: use {} or an http:// URL",
                StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
            )),
        }
    }

    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Url(url) => url.clone(),
            PlayerSpec::Builtin(kind) => kind.name().into(),
        }
    }
}

/// A match to run.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub match_id: String,
    /// A short name of the game for people (the rules' file name, say).
    pub game_name: String,
    pub rules: String,
    pub start_clock: Duration,
    pub play_clock: Duration,
    /// Added to each clock for the network before a reply is late.
    pub grace: Duration,
    /// Seeds the substituted moves and the built-in players: the same seed and the same
    /// replies give the same match.
    pub seed: u64,
}

/// What happened at a step, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// From 0.
    pub step: usize,
    pub moves: Vec<String>,
    pub errors: Vec<StepError>,
    pub terminal: bool,
    /// How long the players' replies to this step's PLAY took to arrive (all of them).
    pub waited: Duration,
}

/// Where the time of a match went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// From the call of [`run_match`] to its return.
    pub elapsed: Duration,
    /// Waiting for players: from sending START, each PLAY and STOP until the last reply came
    /// (or its deadline passed). Built-in players' thinking counts here too.
    pub waiting: Duration,
    /// Joint moves played.
    pub steps: usize,
}

impl Timing {
    /// The manager's own time: reading the rules, judging replies, computing states,
    /// recording; everything but waiting for players.
    pub fn own(&self) -> Duration {
        self.elapsed.saturating_sub(self.waiting)
    }
}

/// A match played to its end.
#[derive(Clone, Debug)]
pub struct Finished {
    pub record: MatchRecord,
    pub timing: Timing,
    /// The manager's reasoner: `fast engine`, or the reference engine and why.
    pub reasoner: String,
    /// What each built-in player did over the match (moves, simulations, thinking time), as
    /// its strategy reports it; `None` for remote players.
    pub player_stats: Vec<Option<PlayerStats>>,
}

/// A built-in strategy and its own view of the game.
type LocalPlayer = (Box<dyn Strategy>, Game);

/// A player's side of the match, as the manager drives it.
enum Seat {
    Remote(String),
    /// A built-in player (empty while it thinks).
    Local(Option<Box<LocalPlayer>>),
}

/// A built-in player back from its turn, with the move it chose.
type LocalTurn = (Box<LocalPlayer>, Result<String, StepError>);

enum Pending {
    Remote(JoinHandle<Result<String, HttpError>>),
    Local(JoinHandle<LocalTurn>),
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The manager's view of the game: the rules as a state machine, the current state and what
/// it allows. It works on blocking threads, so that a slow game never holds up the runtime.
struct Referee {
    machine: Machine,
    state: State,
    terminal: bool,
    /// Every role's legal moves in `state` (none when terminal).
    legal: Vec<Vec<TermId>>,
    /// Draws the substituted moves.
    rng: StdRng,
}

/// What a step did.
struct Advanced {
    moves: Vec<String>,
    errors: Vec<StepError>,
    state: String,
    terminal: bool,
    /// Once terminal.
    goals: Option<Vec<u8>>,
}

impl Referee {
    fn load(rules: &str, rng: StdRng) -> Result<Referee, String> {
        let mut machine =
            load(rules).map_err(|first| format!("the rules cannot be played: {first}"))?;
        let state = machine.initial_state().map_err(|e| e.to_string())?;
        let mut referee = Referee {
            machine,
            state,
            terminal: false,
            legal: Vec::new(),
            rng,
        };
        referee.survey(0)?;
        Ok(referee)
    }

    fn text(&self, term: TermId) -> String {
        self.machine.terms().text(self.machine.symbols(), term)
    }

    fn roles(&self) -> Vec<String> {
        self.machine.roles().iter().map(|&r| self.text(r)).collect()
    }

    /// The current state as `((fluent) …)`, fluents sorted.
    fn state_text(&self) -> String {
        let mut fluents: Vec<String> = self
            .machine
            .fluents(&self.state)
            .iter()
            .map(|&f| self.text(f))
            .collect();
        fluents.sort();
        format!("({})", fluents.join(" "))
    }

    /// Whether the current state is terminal, and if not every role's legal moves.
    fn survey(&mut self, step: usize) -> Result<(), String> {
        self.terminal = self
            .machine
            .is_terminal(&self.state)
            .map_err(|e| e.to_string())?;
        self.legal = if self.terminal {
            Vec::new()
        } else {
            self.machine
                .all_legal_moves(&self.state)
                .map_err(|e| e.to_string())?
        };
        if let Some(role) = self.legal.iter().position(Vec::is_empty) {
            return Err(format!(
                "`{}` has no legal move at step {step} (the game is not playable)",
                self.text(self.machine.roles()[role])
            ));
        }
        Ok(())
    }

    /// Judges the replies (a legal move stands; anything else is replaced by a random legal
    /// move and recorded as an error), then plays the joint move.
    fn advance(
        &mut self,
        replies: Vec<Result<String, StepError>>,
        step: usize,
    ) -> Result<Advanced, String> {
        let mut joint = Vec::with_capacity(replies.len());
        let mut errors = Vec::new();
        for (k, reply) in replies.into_iter().enumerate() {
            let chosen = match reply {
                Ok(body) => match move_candidates(&body) {
                    None => Err(StepError {
                        player: k,
                        kind: "unparsable".into(),
                        detail: body,
                    }),
                    Some(candidates) => candidates
                        .iter()
                        .find_map(|c| {
                            self.machine
                                .intern(c)
                                .ok()
                                .filter(|t| self.legal[k].contains(t))
                        })
                        .ok_or(StepError {
                            player: k,
                            kind: "illegal".into(),
                            detail: body,
                        }),
                },
                Err(e) => Err(e),
            };
            joint.push(match chosen {
                Ok(m) => m,
                Err(e) => {
                    errors.push(e);
                    *self.legal[k]
                        .choose(&mut self.rng)
                        .expect("every role has a legal move")
                }
            });
        }
        let moves = joint.iter().map(|&m| self.text(m)).collect();
        self.state = self
            .machine
            .next_state(&self.state, &joint)
            .map_err(|e| e.to_string())?;
        self.survey(step + 1)?;
        let goals = if self.terminal {
            Some(self.machine.goals(&self.state).map_err(|e| e.to_string())?)
        } else {
            None
        };
        Ok(Advanced {
            moves,
            errors,
            state: self.state_text(),
            terminal: self.terminal,
            goals,
        })
    }
}

/// Runs `work` on the value in `slot` on a blocking thread, and puts the value back.
async fn on_blocking_thread<S, T>(
    slot: &mut Option<Box<S>>,
    work: impl FnOnce(&mut S) -> T + Send + 'static,
) -> Result<T, String>
where
    S: Send + 'static,
    T: Send + 'static,
{
    let mut value = slot.take().expect("the value is in its slot");
    let (value, out) = tokio::task::spawn_blocking(move || {
        let out = work(&mut value);
        (value, out)
    })
    .await
    .map_err(|e| format!("the manager's reasoner failed: {e}"))?;
    *slot = Some(value);
    Ok(out)
}

/// A built-in player's turn: apply the previous joint move, then choose.
fn think(
    strategy: &mut dyn Strategy,
    game: &mut Game,
    last: Option<&[String]>,
    clock: Duration,
) -> Result<String, String> {
    if let Some(moves) = last {
        game.apply(moves)?;
    }
    let chosen = strategy.select(game, Instant::now() + clock)?;
    Ok(game.text(chosen))
}

/// Runs a match to its end and returns its record and where the time went.
///
/// `progress` is called after every step. `record` is called with the record so far: before
/// START, after every step, and at the end (completed, or aborted after an error); the
/// manager waits for the future it returns before it sends anything more, so a record that
/// is durable when the future completes has every step played before the next PLAY is sent.
/// An error from `record` ends the match (the players are sent ABORT).
pub async fn run_match<P, R, F>(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
    mut progress: P,
    mut record: R,
) -> Result<Finished, String>
where
    P: FnMut(&Progress),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    let mut rng = StdRng::seed_from_u64(config.seed);
    let random_token = format!("{:016x}", rng.random::<u64>());
    let seeds: Vec<u64> = players
        .iter()
        .filter(|p| matches!(p, PlayerSpec::Builtin(_)))
        .map(|_| rng.random())
        .collect();
    let rules = config.rules.clone();
    let mut referee = Some(Box::new(
        tokio::task::spawn_blocking(move || Referee::load(&rules, rng))
            .await
            .map_err(|e| format!("the manager's reasoner failed: {e}"))??,
    ));
    let (roles, initial, reasoner) = {
        let r = referee.as_ref().expect("loaded");
        (r.roles(), r.state_text(), r.machine.describe_engine())
    };
    if players.len() != roles.len() {
        return Err(format!(
            "the game has {} role{} ({}), but {} player{} given",
            roles.len(),
            if roles.len() == 1 { "" } else { "s" },
            roles.join(", "),
            players.len(),
            if players.len() == 1 { " was" } else { "s were" }
        ));
    }
    let mut rec = MatchRecord {
        match_id: config.match_id.clone(),
        game_name: config.game_name.clone(),
        random_token,
        start_time: now_ms(),
        rules: config.rules.clone(),
        game_role_names: roles.clone(),
        player_names_from_host: players.iter().map(PlayerSpec::name).collect(),
        start_clock: config.start_clock.as_secs(),
        play_clock: config.play_clock.as_secs(),
        states: vec![initial],
        moves: Vec::new(),
        state_times: vec![now_ms()],
        errors: vec![vec![String::new(); roles.len()]],
        goal_values: Vec::new(),
        is_completed: false,
        is_aborted: false,
    };
    record(&rec)
        .await
        .map_err(|e| format!("cannot record the match: {e}"))?;
    let mut timing = Timing::default();
    let mut seats: Vec<Seat> = players
        .iter()
        .map(|p| match p {
            PlayerSpec::Url(url) => Seat::Remote(url.clone()),
            PlayerSpec::Builtin(_) => Seat::Local(None),
        })
        .collect();
    let played = play(
        &config,
        &players,
        &seeds,
        &roles,
        &mut referee,
        &mut seats,
        &mut rec,
        &mut timing,
        &mut progress,
        &mut record,
    )
    .await;
    if let Err(e) = played {
        // Tell the players, and keep the record as aborted.
        let abort = Request::Abort {
            match_id: config.match_id.clone(),
        }
        .to_string();
        let wait = config.grace.max(Duration::from_secs(1));
        let aborts: Vec<_> = seats
            .iter()
            .filter_map(|seat| match seat {
                Seat::Remote(url) => Some(send(url, abort.clone(), wait)),
                Seat::Local(_) => None,
            })
            .collect();
        for a in aborts {
            let _ = a.await;
        }
        rec.is_aborted = true;
        let _ = record(&rec).await;
        return Err(e);
    }
    // STOP, everyone at once; the replies do not matter any more.
    let stop = Request::Stop {
        match_id: config.match_id.clone(),
        moves: rec.moves.last().cloned(),
    }
    .to_string();
    let player_stats: Vec<Option<PlayerStats>> = seats
        .iter()
        .map(|seat| match seat {
            Seat::Local(Some(local)) => local.0.stats(),
            _ => None,
        })
        .collect();
    let asked = Instant::now();
    let mut stops = Vec::new();
    for seat in &mut seats {
        match seat {
            Seat::Remote(url) => {
                stops.push(send(url, stop.clone(), config.play_clock + config.grace))
            }
            Seat::Local(slot) => {
                let mut local = slot.take().expect("a built-in player is in its seat");
                let last = rec.moves.last().cloned();
                stops.push(tokio::task::spawn_blocking(move || {
                    let (strategy, game) = &mut *local;
                    if let Some(moves) = last {
                        game.apply(&moves).map_err(HttpError::Protocol)?;
                    }
                    strategy.stop(game);
                    Ok(String::new())
                }));
            }
        }
    }
    for s in stops {
        let _ = s.await;
    }
    timing.waiting += asked.elapsed();
    timing.steps = rec.moves.len();
    timing.elapsed = started.elapsed();
    Ok(Finished {
        record: rec,
        timing,
        reasoner,
        player_stats,
    })
}

/// START, then PLAY until a terminal state, recording each step; the record is completed
/// (and recorded) before it returns.
#[allow(clippy::too_many_arguments)]
async fn play<P, R, F>(
    config: &MatchConfig,
    players: &[PlayerSpec],
    seeds: &[u64],
    roles: &[String],
    referee: &mut Option<Box<Referee>>,
    seats: &mut [Seat],
    rec: &mut MatchRecord,
    timing: &mut Timing,
    progress: &mut P,
    record: &mut R,
) -> Result<(), String>
where
    P: FnMut(&Progress),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), String>>,
{
    // START, everyone at once; play begins when all are READY or the start clock runs out.
    // Built-in players read the rules and prepare on blocking threads meanwhile.
    let asked = Instant::now();
    let start_deadline = config.start_clock + config.grace;
    let mut starting = Vec::new();
    let mut seeds = seeds.iter();
    for (k, p) in players.iter().enumerate() {
        match p {
            PlayerSpec::Url(url) => {
                let message = Request::Start(Start {
                    match_id: config.match_id.clone(),
                    role: roles[k].clone(),
                    rules: config.rules.clone(),
                    start_clock: config.start_clock.as_secs(),
                    play_clock: config.play_clock.as_secs(),
                })
                .to_string();
                starting.push((k, Err(send(url, message, start_deadline))));
            }
            PlayerSpec::Builtin(kind) => {
                let seed = *seeds.next().expect("a seed per built-in player");
                let factory = kind.factory(seed);
                let rules = config.rules.clone();
                let start_clock = config.start_clock;
                starting.push((
                    k,
                    Ok(tokio::task::spawn_blocking(move || {
                        let mut machine = load(&rules)?;
                        let state = machine.initial_state().map_err(|e| e.to_string())?;
                        let mut game = Game {
                            machine,
                            state,
                            role: k,
                        };
                        let mut strategy = factory();
                        strategy.start(&mut game, Instant::now() + start_clock);
                        Ok::<_, String>(Box::new((strategy, game)))
                    })),
                ));
            }
        }
    }
    for (k, task) in starting {
        match task {
            // A remote player's reply to START does not matter: PLAY follows either way.
            Err(remote) => drop(remote.await),
            Ok(local) => {
                let player = local
                    .await
                    .map_err(|e| format!("a built-in player failed: {e}"))?
                    .map_err(|e| format!("a built-in player cannot play these rules: {e}"))?;
                seats[k] = Seat::Local(Some(player));
            }
        }
    }
    timing.waiting += asked.elapsed();
    let mut step = 0;
    while !referee.as_ref().expect("the referee is back").terminal {
        let message = Request::Play {
            match_id: config.match_id.clone(),
            moves: rec.moves.last().cloned(),
        }
        .to_string();
        let deadline = config.play_clock + config.grace;
        // Ask every player at once: remote ones over HTTP, built-in ones on blocking threads.
        let asked = Instant::now();
        let mut pending = Vec::new();
        for (k, seat) in seats.iter_mut().enumerate() {
            match seat {
                Seat::Remote(url) => {
                    pending.push(Pending::Remote(send(url, message.clone(), deadline)));
                }
                Seat::Local(slot) => {
                    let mut local = slot.take().expect("a built-in player is in its seat");
                    let last = rec.moves.last().cloned();
                    let play_clock = config.play_clock;
                    pending.push(Pending::Local(tokio::task::spawn_blocking(move || {
                        let (strategy, game) = &mut *local;
                        let chosen = think(&mut **strategy, game, last.as_deref(), play_clock)
                            .map_err(|detail| StepError {
                                player: k,
                                kind: "failed".into(),
                                detail,
                            });
                        (local, chosen)
                    })));
                }
            }
        }
        let mut replies: Vec<Result<String, StepError>> = Vec::new();
        for (k, p) in pending.into_iter().enumerate() {
            replies.push(match p {
                Pending::Remote(task) => match task.await {
                    Ok(Ok(body)) => Ok(body),
                    Ok(Err(e)) => Err(http_error(k, e)),
                    Err(e) => Err(StepError {
                        player: k,
                        kind: "failed".into(),
                        detail: e.to_string(),
                    }),
                },
                Pending::Local(task) => {
                    let (local, chosen) = task
                        .await
                        .map_err(|e| format!("a built-in player failed: {e}"))?;
                    seats[k] = Seat::Local(Some(local));
                    chosen
                }
            });
        }
        let waited = asked.elapsed();
        timing.waiting += waited;
        let advanced = on_blocking_thread(referee, move |r| r.advance(replies, step)).await??;
        let mut error_row = vec![String::new(); roles.len()];
        for e in &advanced.errors {
            error_row[e.player] = e.text();
        }
        // The errors of the state the move was made in; the new state has none yet.
        *rec.errors.last_mut().expect("a row per state") = error_row;
        rec.errors.push(vec![String::new(); roles.len()]);
        rec.moves.push(advanced.moves.clone());
        rec.states.push(advanced.state);
        rec.state_times.push(now_ms());
        if let Some(goals) = advanced.goals {
            rec.goal_values = goals;
            rec.is_completed = true;
        }
        progress(&Progress {
            step,
            moves: advanced.moves,
            errors: advanced.errors,
            terminal: advanced.terminal,
            waited,
        });
        record(rec)
            .await
            .map_err(|e| format!("cannot record step {}: {e}", step + 1))?;
        step += 1;
    }
    if !rec.is_completed {
        // A game whose initial state is terminal.
        let r = referee.as_mut().expect("the referee is back");
        rec.goal_values = r.machine.goals(&r.state).map_err(|e| e.to_string())?;
        rec.is_completed = true;
        record(rec)
            .await
            .map_err(|e| format!("cannot record the end of the match: {e}"))?;
    }
    Ok(())
}

/// Sends a message to a remote player as a task of its own, so that players are asked at once.
fn send(url: &str, message: String, timeout: Duration) -> JoinHandle<Result<String, HttpError>> {
    let url = url.to_string();
    tokio::spawn(async move { post(&url, &message, timeout).await })
}

fn http_error(player: usize, e: HttpError) -> StepError {
    let (kind, detail) = match e {
        HttpError::Timeout => ("timeout", "no reply within the play clock".to_string()),
        HttpError::Connection(m) => ("connection", m),
        HttpError::Protocol(m) => ("http", m),
    };
    StepError {
        player,
        kind: kind.into(),
        detail,
    }
}
