//! A match while it runs: START, PLAY until a terminal state, then STOP, or ABORT when the
//! match fails or is stopped; every step recorded.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gdl_reason::StateMachine;
use ggp_play::{Game, PlayError, PlayerStats, load};
use ggp_protocol::{Request, Start};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::blocking::{ReasonerFailed, on_blocking_thread, spawn_charged};
use super::clock::{deadline_after, now_ms};
use super::config::{DID_RULE, MANAGER_PLAYS_RANDOM, MatchConfig, PlayerSpec};
use super::outcome::{Event, Finished, MatchError, Progress, Timing};
use super::referee::{Advanced, Answer, Referee};
use super::seats::{
    ChannelReply, GONE, Pending, Seat, Starting, await_channel, http_error, message, observe, send,
    send_timed, start_error, think, told,
};
use crate::http::HttpError;
use crate::record::{MatchRecord, StepError};
use crate::seat::{SeatMessage, Turn};
use crate::store::StoreError;

/// A match while it runs: what it was asked to be, its seats, its record so far, where its
/// time went, and whom it tells. The referee is not kept here but goes along with the play
/// ([`Match::play`]), to a blocking thread and back at every step: a match stopped while the
/// referee is away still has all it needs to send ABORT and record why.
pub(super) struct Match<P, R> {
    config: MatchConfig,
    /// What the players are sent: the sentences without comments, names as written.
    sent_rules: String,
    /// Each role's player, in the order of the roles (`None`: GDL-II's `random` role, which
    /// the manager plays).
    players: Vec<Option<PlayerSpec>>,
    /// The built-in players' seeds, in their order.
    seeds: Vec<u64>,
    roles: Vec<String>,
    seats: Vec<Seat>,
    /// The record so far.
    rec: MatchRecord,
    timing: Timing,
    /// When the match was asked for.
    started: Instant,
    /// The manager's reasoner (see [`Finished::reasoner`]).
    reasoner: String,
    /// Told when START has been answered and after every step.
    events: P,
    /// Keeps the record (see [`run_match_until`](super::run_match_until)).
    record: R,
}

impl<P, R, F> Match<P, R>
where
    P: FnMut(Event<'_>),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), StoreError>>,
{
    /// Reads the rules, seats the players and records the match before anything is sent; the
    /// referee comes back beside the match.
    pub(super) async fn open(
        config: MatchConfig,
        players: Vec<PlayerSpec>,
        events: P,
        record: R,
    ) -> Result<(Match<P, R>, Box<Referee>), MatchError> {
        let started = Instant::now();
        let mut rng = StdRng::seed_from_u64(config.seed);
        let seeds: Vec<u64> = players
            .iter()
            .filter(|p| matches!(p, PlayerSpec::Builtin(_)))
            .map(|_| rng.random())
            .collect();
        // What the players are sent: the sentences without comments, names as written.
        let sent_rules = gdl_syntax::compact_text(&config.rules).map_err(|d| {
            MatchError::Rules(format!(
                "the rules cannot be played: {}",
                d.first()
                    .map_or(String::new(), |d| format!("{}: {}", d.code, d.message))
            ))
        })?;
        let rules = sent_rules.clone();
        let mut referee = Box::new(
            spawn_charged(&config.memory, move || Referee::load(&rules, rng))
                .await
                .map_err(|e| MatchError::Game(ReasonerFailed(e).to_string()))?
                .map_err(|e| MatchError::Rules(e.to_string()))?,
        );
        let roles = referee.roles();
        let players = seat(players, &roles, referee.machine.random_role())?;
        referee.did = !referee.gdl2
            && players
                .iter()
                .any(|p| matches!(p, Some(PlayerSpec::Gdl2(..))));
        let rec = first_record(&config, &players, &roles, referee.state_text());
        let mut running = Match {
            seats: players
                .iter()
                .map(|p| Seat::new(p.as_ref(), referee.gdl2))
                .collect(),
            config,
            sent_rules,
            players,
            seeds,
            roles,
            rec,
            timing: Timing::default(),
            started,
            reasoner: referee.machine.describe_engine(),
            events,
            record,
        };
        running
            .save()
            .await
            .map_err(|e| MatchError::Record(format!("cannot record the match: {e}")))?;
        Ok((running, referee))
    }

    /// Plays the match to its end and sends STOP, unless the match fails or `stop` completes
    /// first: then the players are sent ABORT at once and the record is kept as aborted.
    pub(super) async fn run<S>(
        mut self,
        referee: Box<Referee>,
        stop: S,
    ) -> Result<Finished, MatchError>
    where
        S: Future<Output = String>,
    {
        let played = {
            let playing = self.play(referee);
            tokio::select! {
                played = playing => played,
                reason = stop => Err(MatchError::Stopped(reason)),
            }
        };
        match played {
            Ok(referee) => Ok(self.finish(referee).await),
            Err(e) => Err(self.abort(e).await),
        }
    }

    /// START, then PLAY until a terminal state, recording each step; the record is completed
    /// (and recorded) before it returns, and the referee comes back for STOP.
    async fn play(&mut self, mut referee: Box<Referee>) -> Result<Box<Referee>, MatchError> {
        self.start(referee.did).await?;
        let mut step = 0;
        while !referee.terminal {
            if step >= self.config.max_steps {
                return Err(MatchError::TooLong(self.config.max_steps));
            }
            referee = self.play_step(referee, step).await?;
            step += 1;
        }
        if !self.rec.is_completed {
            // A game whose initial state is terminal.
            let r = &mut *referee;
            self.rec.goal_values = r
                .machine
                .goals(&r.state)
                .map_err(|e| MatchError::Game(e.to_string()))?;
            self.rec.is_completed = true;
            self.save().await.map_err(|e| {
                MatchError::Record(format!("cannot record the end of the match: {e}"))
            })?;
        }
        Ok(referee)
    }

    /// START, everyone at once; play begins when all are READY or the start clock runs out.
    /// Built-in players read the rules and prepare on blocking threads meanwhile. `did`: a
    /// GDL-II player of a GDL game is sent [`DID_RULE`] with the rules.
    async fn start(&mut self, did: bool) -> Result<(), MatchError> {
        let asked = Instant::now();
        let (starting, mut errors) = self.send_start(did);
        // A remote player's reply to START is judged and recorded, but play goes on either way
        // (§8.4): a player that was not ready may still play.
        for (k, task) in starting {
            match task {
                Starting::Remote(request, remote) => {
                    let (clock, grace) = (self.config.start_clock, self.config.grace);
                    errors.extend(start_error(k, &request, remote, clock, grace).await);
                }
                Starting::Local(local) => {
                    let player = local
                        .await
                        .map_err(|e| MatchError::Game(format!("a built-in player failed: {e}")))?
                        .map_err(|e| {
                            MatchError::Game(format!(
                                "a built-in player cannot play these rules: {e}"
                            ))
                        })?;
                    self.seats[k] = Seat::Local(Some(player));
                }
            }
        }
        self.timing.waiting += asked.elapsed();
        errors.sort_by_key(|e| e.player);
        for e in &errors {
            self.rec.start_errors[e.player] = e.text();
        }
        (self.events)(Event::Started {
            errors: &errors,
            players: &self.rec.player_names_from_host,
        });
        if !errors.is_empty() {
            self.save()
                .await
                .map_err(|e| MatchError::Record(format!("cannot record START: {e}")))?;
        }
        Ok(())
    }

    /// Sends START to every player: the replies on their way, by role, and the errors known at
    /// once (a channel seat that is gone).
    fn send_start(&self, did: bool) -> (Vec<(usize, Starting)>, Vec<StepError>) {
        let config = &self.config;
        let start_limit = config.start_clock.saturating_add(config.grace);
        let mut starting = Vec::new();
        let mut errors = Vec::new();
        let mut seeds = self.seeds.iter();
        for (k, p) in self.players.iter().enumerate() {
            match p {
                None => {}
                Some(PlayerSpec::Url(url) | PlayerSpec::Gdl2(url, _)) => {
                    let rules = if did && matches!(p, Some(PlayerSpec::Gdl2(..))) {
                        format!("{} {DID_RULE}", self.sent_rules)
                    } else {
                        self.sent_rules.clone()
                    };
                    let request = Request::Start(Start {
                        match_id: config.match_id.clone(),
                        role: self.roles[k].clone(),
                        rules,
                        start_clock: config.start_clock.as_secs(),
                        play_clock: config.play_clock.as_secs(),
                    });
                    let message = request.to_string();
                    let reply = send(url, message, start_limit);
                    starting.push((k, Starting::Remote(request, reply)));
                }
                Some(PlayerSpec::Channel(seat)) => {
                    // Ready at once: a channel seat has nothing to prepare.
                    let told = seat.send(SeatMessage::Start {
                        match_id: config.match_id.clone(),
                        role: self.roles[k].clone(),
                        seat: k,
                        start_clock: config.start_clock,
                        play_clock: config.play_clock,
                    });
                    if !told {
                        errors.push(StepError {
                            player: k,
                            kind: "connection".into(),
                            detail: GONE.into(),
                        });
                    }
                }
                Some(PlayerSpec::Builtin(kind)) => {
                    let seed = *seeds.next().expect("a seed per built-in player");
                    let factory = kind.factory(seed);
                    let rules = self.sent_rules.clone();
                    let start_clock = config.start_clock;
                    let local = spawn_charged(&config.memory, move || {
                        let mut game = Game::new(load(&rules)?, k)?;
                        let mut strategy = factory();
                        strategy.start(&mut game, deadline_after(Instant::now(), start_clock));
                        Ok::<_, PlayError>(Box::new((strategy, game)))
                    });
                    starting.push((k, Starting::Local(local)));
                }
            }
        }
        (starting, errors)
    }

    /// One step of PLAY: every player is asked at once, the referee judges the replies and
    /// plays the joint move on a blocking thread, and the step is recorded.
    async fn play_step(
        &mut self,
        referee: Box<Referee>,
        step: usize,
    ) -> Result<Box<Referee>, MatchError> {
        let asked = Instant::now();
        let pending = self.ask(&referee, step, asked);
        let (replies, times) = self.answers(pending, asked).await?;
        let waited = asked.elapsed();
        self.timing.waiting += waited;
        let (referee, advanced) = on_blocking_thread(&self.config.memory, referee, move |r| {
            r.advance(replies, step)
        })
        .await
        .map_err(|e| MatchError::Game(e.to_string()))?;
        let advanced = advanced.map_err(|e| MatchError::Game(e.to_string()))?;
        self.note(advanced, step, waited, times, referee.gdl2)
            .await?;
        Ok(referee)
    }

    /// Asks every player at step `step` at once (`asked`): remote ones over HTTP, built-in
    /// ones on blocking threads, channel seats with their legal moves.
    fn ask(&mut self, referee: &Referee, step: usize, asked: Instant) -> Vec<Pending> {
        let config = &self.config;
        let limit = config.play_clock.saturating_add(config.grace);
        let mut pending = Vec::new();
        for (k, seat) in self.seats.iter_mut().enumerate() {
            match seat {
                Seat::Chance => pending.push(Pending::Chance),
                Seat::Remote(url, form) => {
                    let message = message(
                        *form,
                        false,
                        &config.match_id,
                        k,
                        &self.rec.moves,
                        &referee.last_percepts,
                    );
                    pending.push(Pending::Remote(send_timed(url, message, limit)));
                }
                Seat::Local(slot) => {
                    let mut local = slot.take().expect("a built-in player is in its seat");
                    let last = told(referee.gdl2, k, &self.rec.moves, &referee.last_percepts);
                    let play_clock = config.play_clock;
                    pending.push(Pending::Local(spawn_charged(&config.memory, move || {
                        let (strategy, game) = &mut *local;
                        let chosen = think(&mut **strategy, game, last.as_deref(), play_clock)
                            .map_err(|e| StepError {
                                player: k,
                                kind: "failed".into(),
                                detail: e.to_string(),
                            });
                        ((local, chosen), Instant::now())
                    })));
                }
                Seat::Channel(seat) => {
                    let legal = referee.legal[k].iter().map(|&m| referee.text(m)).collect();
                    let (reply, answer) = tokio::sync::oneshot::channel();
                    let told = seat.send(SeatMessage::Turn(Turn {
                        step,
                        legal,
                        deadline: deadline_after(asked, config.play_clock),
                        reply,
                    }));
                    pending.push(Pending::Channel(await_channel(
                        told.then_some(answer),
                        deadline_after(asked, limit),
                    )));
                }
            }
        }
        pending
    }

    /// Waits for every role's answer to PLAY (asked at `asked`), in the order of the roles,
    /// with the milliseconds each player took (`None` for the `random` role, or a reply lost
    /// with its task); a built-in player takes its seat again.
    async fn answers(
        &mut self,
        pending: Vec<Pending>,
        asked: Instant,
    ) -> Result<(Vec<Answer>, Vec<Option<u64>>), MatchError> {
        let (clock, grace) = (self.config.play_clock, self.config.grace);
        let took = |at: Instant| Some(at.saturating_duration_since(asked).as_millis() as u64);
        let failed = |k: usize, e: tokio::task::JoinError| StepError {
            player: k,
            kind: "failed".into(),
            detail: e.to_string(),
        };
        let mut replies: Vec<Answer> = Vec::new();
        let mut times = Vec::new();
        for (k, p) in pending.into_iter().enumerate() {
            let (reply, time) = match p {
                Pending::Chance => (Answer::Chance, None),
                Pending::Remote(task) => match task.await {
                    Ok((Ok(body), at)) => (Answer::Player(Ok(body)), took(at)),
                    Ok((Err(e), at)) => (
                        Answer::Player(Err(http_error(k, e, "play", clock, grace))),
                        took(at),
                    ),
                    Err(e) => (Answer::Player(Err(failed(k, e))), None),
                },
                Pending::Local(task) => {
                    let ((local, chosen), at) = task
                        .await
                        .map_err(|e| MatchError::Game(format!("a built-in player failed: {e}")))?;
                    self.seats[k] = Seat::Local(Some(local));
                    (Answer::Player(chosen), took(at))
                }
                Pending::Channel(task) => {
                    let gone = || StepError {
                        player: k,
                        kind: "connection".into(),
                        detail: GONE.into(),
                    };
                    match task.await {
                        Ok((ChannelReply::Move(body), at)) => (Answer::Player(Ok(body)), took(at)),
                        Ok((ChannelReply::Gone, at)) => (Answer::Player(Err(gone())), took(at)),
                        Ok((ChannelReply::Late, at)) => (
                            Answer::Player(Err(http_error(
                                k,
                                HttpError::Timeout,
                                "play",
                                clock,
                                grace,
                            ))),
                            took(at),
                        ),
                        Err(e) => (Answer::Player(Err(failed(k, e))), None),
                    }
                }
            };
            replies.push(reply);
            times.push(time);
        }
        Ok((replies, times))
    }

    /// Records step `step` as the referee played it (with its percepts in a GDL-II game), and
    /// tells of it.
    async fn note(
        &mut self,
        advanced: Advanced,
        step: usize,
        waited: Duration,
        times: Vec<Option<u64>>,
        gdl2: bool,
    ) -> Result<(), MatchError> {
        let rec = &mut self.rec;
        let mut error_row = vec![String::new(); self.roles.len()];
        for e in &advanced.errors {
            error_row[e.player] = e.text();
        }
        // The errors of the state the move was made in; the new state has none yet.
        *rec.errors.last_mut().expect("a row per state") = error_row;
        rec.errors.push(vec![String::new(); self.roles.len()]);
        rec.moves.push(advanced.moves.clone());
        rec.move_times.push(times);
        if gdl2 {
            rec.percepts.push(advanced.percepts);
        }
        rec.states.push(advanced.state);
        rec.state_times.push(now_ms());
        if let Some(goals) = advanced.goals {
            rec.goal_values = goals;
            rec.is_completed = true;
        }
        (self.events)(Event::Step(&Progress {
            step,
            moves: advanced.moves,
            errors: advanced.errors,
            terminal: advanced.terminal,
            waited,
            knowledge: advanced.knowledge,
        }));
        self.save()
            .await
            .map_err(|e| MatchError::Record(format!("cannot record step {}: {e}", step + 1)))
    }

    /// STOP, everyone at once; the replies do not matter any more. What the match comes to.
    /// (The referee is taken, not borrowed: a borrowed one, held while the players are waited
    /// for, would have to be shared between threads, and it cannot be.)
    async fn finish(mut self, referee: Box<Referee>) -> Finished {
        let player_stats: Vec<Option<PlayerStats>> = self
            .seats
            .iter()
            .map(|seat| match seat {
                Seat::Local(Some(local)) => local.0.stats(),
                _ => None,
            })
            .collect();
        let config = &self.config;
        let (moves, percepts, gdl2) = (&self.rec.moves, &referee.last_percepts, referee.gdl2);
        let asked = Instant::now();
        let mut stops = Vec::new();
        for (k, seat) in self.seats.iter_mut().enumerate() {
            match seat {
                Seat::Chance => {}
                Seat::Remote(url, form) => stops.push(send(
                    url,
                    message(*form, true, &config.match_id, k, moves, percepts),
                    config.play_clock.saturating_add(config.grace),
                )),
                Seat::Local(slot) => {
                    let mut local = slot.take().expect("a built-in player is in its seat");
                    let last = told(gdl2, k, moves, percepts);
                    stops.push(spawn_charged(&config.memory, move || {
                        let (strategy, game) = &mut *local;
                        observe(game, last.as_deref())
                            .map_err(|e| HttpError::Protocol(e.to_string()))?;
                        strategy.stop(game);
                        Ok(String::new())
                    }));
                }
                Seat::Channel(seat) => {
                    // (In a GDL-II game a channel seat is not told the others' moves; it is not
                    // told its percepts either.)
                    seat.send(SeatMessage::Stop {
                        moves: moves.last().cloned().filter(|_| !gdl2),
                    });
                }
            }
        }
        for s in stops {
            let _ = s.await;
        }
        self.timing.waiting += asked.elapsed();
        self.timing.steps = self.rec.moves.len();
        self.timing.elapsed = self.started.elapsed();
        Finished {
            record: self.rec,
            timing: self.timing,
            reasoner: self.reasoner,
            player_stats,
        }
    }

    /// Tells the players of the abort (ABORT, everyone at once) and keeps the record as
    /// aborted, saying why (`e`); what the match ended with.
    async fn abort(mut self, e: MatchError) -> MatchError {
        let abort = Request::Abort {
            match_id: self.config.match_id.clone(),
        }
        .to_string();
        let wait = self.config.grace.max(Duration::from_secs(1));
        let aborts: Vec<_> = self
            .seats
            .iter()
            .filter_map(|seat| match seat {
                Seat::Remote(url, _) => Some(send(url, abort.clone(), wait)),
                Seat::Channel(seat) => {
                    seat.send(SeatMessage::Abort);
                    None
                }
                Seat::Local(_) | Seat::Chance => None,
            })
            .collect();
        for a in aborts {
            let _ = a.await;
        }
        self.rec.is_completed = false;
        self.rec.is_aborted = true;
        self.rec.abort_reason = Some(e.to_string());
        let recorded = self.save().await;
        match (e, recorded) {
            (e @ MatchError::Record(_), _) | (e, Ok(())) => e,
            (e, Err(failed)) => MatchError::Record(format!(
                "{e}; and the aborted match could not be recorded: {failed}"
            )),
        }
    }

    /// Keeps the record so far; nothing more is sent until the future completes.
    fn save(&mut self) -> F {
        (self.record)(&self.rec)
    }
}

/// Each role's player, in the order of the roles: `None` for GDL-II's `random` role (the role
/// `chance`, if any), which is no seat: the manager plays it. The players must fit the other
/// roles.
fn seat(
    players: Vec<PlayerSpec>,
    roles: &[String],
    chance: Option<usize>,
) -> Result<Vec<Option<PlayerSpec>>, MatchError> {
    let seated = roles.len() - usize::from(chance.is_some());
    if players.len() != seated {
        return Err(MatchError::Players(format!(
            "the game has {} role{} ({}){}, but {} player{} given",
            roles.len(),
            if roles.len() == 1 { "" } else { "s" },
            roles.join(", "),
            if chance.is_some() {
                format!(
                    "; `random` is played by the manager, so {seated} player{} needed",
                    if seated == 1 { " is" } else { "s are" }
                )
            } else {
                String::new()
            },
            players.len(),
            if players.len() == 1 { " was" } else { "s were" }
        )));
    }
    let mut players: Vec<Option<PlayerSpec>> = players.into_iter().map(Some).collect();
    if let Some(r) = chance {
        players.insert(r, None);
    }
    Ok(players)
}

/// The record of a match before START: its players, and the initial state `initial`.
fn first_record(
    config: &MatchConfig,
    players: &[Option<PlayerSpec>],
    roles: &[String],
    initial: String,
) -> MatchRecord {
    MatchRecord {
        match_id: config.match_id.clone(),
        game_name: config.game_name.clone(),
        random_token: random_token(),
        start_time: now_ms(),
        rules: config.rules.clone(),
        game_role_names: roles.to_vec(),
        player_names_from_host: players
            .iter()
            .map(|p| {
                p.as_ref()
                    .map_or(MANAGER_PLAYS_RANDOM.into(), PlayerSpec::name)
            })
            .collect(),
        start_clock: config.start_clock.as_secs(),
        play_clock: config.play_clock.as_secs(),
        states: vec![initial],
        moves: Vec::new(),
        state_times: vec![now_ms()],
        errors: vec![vec![String::new(); roles.len()]],
        start_errors: vec![String::new(); roles.len()],
        goal_values: Vec::new(),
        is_completed: false,
        is_aborted: false,
        abort_reason: None,
        percepts: Vec::new(),
        move_times: Vec::new(),
    }
}

/// A random token for a match record: unguessable, different for every match (not drawn from
/// the match's seed, which is often the same).
fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState` is seeded from the operating system's randomness once per process;
    // hashing the time and a counter makes each token of a process distinct.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let high = hasher.finish();
    hasher.write_u64(high);
    format!("{high:016x}{:016x}", hasher.finish())
}
