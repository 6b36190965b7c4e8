//! Running one match.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gdl_reason::{StateMachine, TermId};
use ggp_play::{Game, Machine, PlayerStats, State, Strategy, StrategyKind, load};
use ggp_protocol::{Reply, Request, Start, move_candidates};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use tokio::task::JoinHandle;

use crate::http::{HttpError, PlayerUrl, post};
use crate::record::{MatchRecord, StepError};
use crate::seat::{SeatChannel, SeatMessage, Turn};

/// Who plays a role.
#[derive(Clone, Debug)]
pub enum PlayerSpec {
    /// A player at this URL (`http://127.0.0.1:9147`). It is told the joint moves in a GDL
    /// game, and its percepts in the GameController's form ([`Gdl2Form::Percepts`]) in a GDL-II
    /// game.
    Url(String),
    /// A player at this URL that speaks GDL-II in the given form, in any game: in a GDL game it
    /// is sent the GameController's rule `(<= (sees ?p (did ?q ?m)) (role ?p) (does ?q ?m))`
    /// with the rules, and sees every role's move as `(did role move)`.
    Gdl2(String, Gdl2Form),
    /// A built-in strategy, run in this process under the same clocks.
    Builtin(StrategyKind),
    /// A seat whose moves come from a channel (a person at a web page): asked for each move
    /// with its legal moves, under the same clocks (see [`SeatChannel`]).
    Channel(SeatChannel),
}

/// How a GDL-II player is told what it sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gdl2Form {
    /// The GameController's: `(PLAY id NIL)`, then `(PLAY id (percept … ))`, `(STOP id (percept
    /// … ))` (`gdl2:URL`).
    Percepts,
    /// With the turn and the player's own move, as the Dresden server's GDL-II protocol has it:
    /// `(PLAY id 0 NIL NIL)`, then `(PLAY id turn move (percept … ))` (`gdl2-turn:URL`).
    Turn,
}

/// The rule the GameController adds to a GDL game's rules for a GDL-II player, so that it sees
/// every role's move.
pub const DID_RULE: &str = "(<= (sees ?p (did ?q ?m)) (role ?p) (does ?q ?m))";

impl PlayerSpec {
    /// A built-in strategy's name (`random`, `legal`, `montecarlo`, `mcts`, `sample`: see
    /// [`StrategyKind::parse`]), an `http://` URL (a bare `host:port` gets `http://`), checked
    /// ([`PlayerUrl::parse`]) and kept as written, or a URL after `gdl2:` or `gdl2-turn:` for a
    /// GDL-II player ([`Gdl2Form`]).
    pub fn parse(text: &str) -> Result<PlayerSpec, String> {
        let lower = text.to_ascii_lowercase();
        for (prefix, form) in [
            ("gdl2-turn:", Gdl2Form::Turn),
            ("gdl2:", Gdl2Form::Percepts),
        ] {
            if lower.starts_with(prefix) {
                let rest = &text[prefix.len()..];
                return match PlayerSpec::parse(rest)? {
                    PlayerSpec::Url(url) => Ok(PlayerSpec::Gdl2(url, form)),
                    _ => Err(format!(
                        "`{text}`: `{prefix}` is followed by the URL of an HTTP player"
                    )),
                };
            }
        }
        if let Some(kind) = StrategyKind::parse(text) {
            return Ok(PlayerSpec::Builtin(kind));
        }
        match text {
            _ if text.contains(':') => {
                PlayerUrl::parse(text)?;
                Ok(PlayerSpec::Url(if text.contains("://") {
                    text.to_string()
                } else {
                    format!("http://{text}")
                }))
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
            PlayerSpec::Gdl2(url, Gdl2Form::Percepts) => format!("gdl2:{url}"),
            PlayerSpec::Gdl2(url, Gdl2Form::Turn) => format!("gdl2-turn:{url}"),
            PlayerSpec::Builtin(kind) => kind.name().into(),
            PlayerSpec::Channel(seat) => seat.name().into(),
        }
    }

    /// The URL of a remote player.
    pub fn url(&self) -> Option<&str> {
        match self {
            PlayerSpec::Url(url) | PlayerSpec::Gdl2(url, _) => Some(url),
            PlayerSpec::Builtin(_) | PlayerSpec::Channel(_) => None,
        }
    }
}

/// What a remote player is told after each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// The joint move (GDL).
    Moves,
    Gdl2(Gdl2Form),
}

/// The name recorded for the `random` role of a GDL-II game, which the manager plays.
pub const MANAGER_PLAYS_RANDOM: &str = "(the manager)";

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
    /// The longest match, in joint moves: a game still running after this many is aborted
    /// ([`MatchError::TooLong`]), so that a game that never ends does not run for ever.
    pub max_steps: usize,
    /// The memory account of the match: the manager's reasoning and the built-in players'
    /// (reading the rules, every move) are charged to it, and their engines stop with an
    /// error naming it when it is used up. `None`: the process's budget only.
    pub memory: Option<ggp_memory::Account>,
}

/// The number of joint moves after which `ggp match` aborts a game that has not ended.
pub const DEFAULT_MAX_STEPS: usize = 1000;

/// Why a match did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// The rules cannot be played (they have errors that leave them without an agreed
    /// meaning, or a built-in player cannot read them). Nothing was recorded or sent.
    Rules(String),
    /// The players do not fit the game's roles. Nothing was recorded or sent.
    Players(String),
    /// The game itself failed while being played (no legal move for a role, no goal in a
    /// terminal state, a reasoning budget exceeded); the match is recorded as aborted.
    Game(String),
    /// The game did not end within [`MatchConfig::max_steps`] joint moves; the match is
    /// recorded as aborted.
    TooLong(usize),
    /// The record could not be written; the match is aborted.
    Record(String),
    /// Stopped from outside (Ctrl-C, the reader of the output went away, an operator), for the
    /// reason given; the match is recorded as aborted.
    Stopped(String),
}

impl std::fmt::Display for MatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchError::Rules(m)
            | MatchError::Players(m)
            | MatchError::Game(m)
            | MatchError::Record(m) => f.write_str(m),
            MatchError::TooLong(n) => write!(
                f,
                "the game did not end within {n} joint moves (the match's step limit)"
            ),
            MatchError::Stopped(reason) => write!(f, "the match was stopped: {reason}"),
        }
    }
}

impl std::error::Error for MatchError {}

/// What the manager reports as a match goes on.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// Every player answered START, or its clock ran out: the players that did not reply
    /// READY, with what happened (`timeout: …`, `busy: …`, `connection: …`, …), and the name
    /// of each role's player (a [`StepError`]'s `player` is a role's index: in a GDL-II game
    /// the `random` role, [`MANAGER_PLAYS_RANDOM`], has no player of the list given).
    Started {
        errors: &'a [StepError],
        players: &'a [String],
    },
    /// A joint move was played.
    Step(&'a Progress),
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
    Remote(String, Form),
    /// GDL-II's `random` role, played by the manager.
    Chance,
    /// A built-in player (empty while it thinks).
    Local(Option<Box<LocalPlayer>>),
    Channel(SeatChannel),
}

/// A built-in player back from its turn, with the move it chose.
type LocalTurn = (Box<LocalPlayer>, Result<String, StepError>);

enum Pending {
    Remote(JoinHandle<Result<String, HttpError>>),
    Local(JoinHandle<LocalTurn>),
    Chance,
    /// The reply to a [`Turn`] (`None`: the seat is gone), and when to stop waiting for it.
    Channel(Option<tokio::sync::oneshot::Receiver<String>>, Instant),
}

/// A role's answer at a step: a player's reply (or what went wrong), or the manager's own
/// turn for the `random` role.
enum Answer {
    Player(Result<String, StepError>),
    Chance,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `from + clock`, or a year from `from` when the clock is too long to add.
pub(crate) fn deadline_after(from: Instant, clock: Duration) -> Instant {
    from.checked_add(clock)
        .or_else(|| from.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(from)
}

/// Seconds of a clock for a message, `5 s` or `0.5 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
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

/// The manager's view of the game: the rules as a state machine, the current state and what
/// it allows. It works on blocking threads, so that a slow game never holds up the runtime.
struct Referee {
    machine: Machine,
    state: State,
    terminal: bool,
    /// Every role's legal moves in `state` (none when terminal), in the order of their text.
    legal: Vec<Vec<TermId>>,
    /// Draws the substituted moves and the `random` role's.
    rng: StdRng,
    /// Whether the game is GDL-II (percepts are computed and recorded).
    gdl2: bool,
    /// Whether every role's percepts are needed even in a GDL game (a GDL-II player is seated:
    /// it sees `(did role move)` for every role).
    did: bool,
    /// Every role's percepts of the last step (none before the first).
    last_percepts: Vec<Vec<String>>,
}

/// What a step did.
struct Advanced {
    moves: Vec<String>,
    errors: Vec<StepError>,
    state: String,
    terminal: bool,
    /// Once terminal.
    goals: Option<Vec<u8>>,
    /// Every role's percepts of the step (GDL-II, or `(did …)` for GDL-II players of a GDL
    /// game), each sorted; empty when no one needs them.
    percepts: Vec<Vec<String>>,
}

impl Referee {
    fn load(rules: &str, rng: StdRng) -> Result<Referee, String> {
        let mut machine =
            load(rules).map_err(|first| format!("the rules cannot be played: {first}"))?;
        let state = machine.initial_state().map_err(|e| e.to_string())?;
        let gdl2 = machine.is_gdl2();
        let mut referee = Referee {
            machine,
            state,
            terminal: false,
            legal: Vec::new(),
            rng,
            gdl2,
            did: false,
            last_percepts: Vec::new(),
        };
        referee.survey(0)?;
        Ok(referee)
    }

    /// A term as the rules spell it: what is sent to the players and recorded.
    fn text(&self, term: TermId) -> String {
        self.machine.terms().spelled(self.machine.symbols(), term)
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
        // In the order of their text, not the engine's (which differs between engines and
        // between versions of one): a human is shown them in that order, and a seeded match
        // substitutes the same moves whichever engine runs it.
        let mut legal = std::mem::take(&mut self.legal);
        for moves in &mut legal {
            moves.sort_by_cached_key(|&m| self.text(m));
        }
        self.legal = legal;
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
    fn advance(&mut self, replies: Vec<Answer>, step: usize) -> Result<Advanced, String> {
        let mut joint = Vec::with_capacity(replies.len());
        let mut errors = Vec::new();
        for (k, answer) in replies.into_iter().enumerate() {
            let reply = match answer {
                Answer::Player(reply) => reply,
                Answer::Chance => {
                    // GDL-II's `random` role: a uniformly random legal move from the match's
                    // seed.
                    joint.push(
                        *self.legal[k]
                            .choose(&mut self.rng)
                            .expect("every role has a legal move"),
                    );
                    continue;
                }
            };
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
        let moves: Vec<String> = joint.iter().map(|&m| self.text(m)).collect();
        let percepts = if self.gdl2 {
            let all = self
                .machine
                .all_percepts(&self.state, &joint)
                .map_err(|e| e.to_string())?;
            all.iter()
                .map(|seen| {
                    let mut texts: Vec<String> = seen.iter().map(|&t| self.text(t)).collect();
                    texts.sort();
                    texts
                })
                .collect()
        } else if self.did {
            // The GameController's convention for a GDL game: every role sees every move.
            let did: Vec<String> = self
                .roles()
                .iter()
                .zip(&moves)
                .map(|(role, m)| format!("(did {role} {m})"))
                .collect();
            vec![did; moves.len()]
        } else {
            Vec::new()
        };
        self.last_percepts = percepts.clone();
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
            percepts,
        })
    }
}

/// Runs the match's blocking `work` (reasoning, a built-in player) on a blocking thread, its
/// allocations charged to the match's memory account.
fn spawn_charged<T: Send + 'static>(
    memory: &Option<ggp_memory::Account>,
    work: impl FnOnce() -> T + Send + 'static,
) -> tokio::task::JoinHandle<T> {
    let memory = memory.clone();
    tokio::task::spawn_blocking(move || {
        let done = ggp_memory::run_in(memory.as_ref(), work);
        // What the work needed beyond what the match keeps goes back to the server.
        if let Some(m) = &memory {
            m.trim();
        }
        done
    })
}

/// Runs `work` on the value in `slot` on a blocking thread (charged to `memory`), and puts
/// the value back.
async fn on_blocking_thread<S, T>(
    memory: &Option<ggp_memory::Account>,
    slot: &mut Option<Box<S>>,
    work: impl FnOnce(&mut S) -> T + Send + 'static,
) -> Result<T, String>
where
    S: Send + 'static,
    T: Send + 'static,
{
    let mut value = slot.take().expect("the value is in its slot");
    let (value, out) = spawn_charged(memory, move || {
        let out = work(&mut value);
        (value, out)
    })
    .await
    .map_err(|e| format!("the manager's reasoner failed: {e}"))?;
    *slot = Some(value);
    Ok(out)
}

/// What a built-in player is told of the last step: the joint move (GDL), or its percepts
/// (GDL-II: the player keeps the states it may be in, as a remote one does).
fn observe(game: &mut Game, last: Option<&[String]>) -> Result<(), String> {
    match last {
        None => Ok(()),
        Some(percepts) if game.possible.is_some() => game.perceive(None, percepts),
        Some(moves) => game.apply(moves),
    }
}

/// A built-in player's turn: take in the previous step, then choose.
fn think(
    strategy: &mut dyn Strategy,
    game: &mut Game,
    last: Option<&[String]>,
    clock: Duration,
) -> Result<String, String> {
    observe(game, last)?;
    let chosen = strategy.select(game, deadline_after(Instant::now(), clock))?;
    game.last_move = Some(chosen);
    Ok(game.text(chosen))
}

/// What a built-in player of role `k` is told after the joint moves `moves`: the last joint
/// move, or in a GDL-II game its percepts of it.
fn told(
    gdl2: bool,
    k: usize,
    moves: &[Vec<String>],
    percepts: &[Vec<String>],
) -> Option<Vec<String>> {
    let last = moves.last()?;
    Some(if gdl2 {
        percepts.get(k).cloned().unwrap_or_default()
    } else {
        last.clone()
    })
}

/// Runs a match to its end (see [`run_match_until`], with nothing to stop it).
pub async fn run_match<P, R, F>(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
    events: P,
    record: R,
) -> Result<Finished, MatchError>
where
    P: FnMut(Event<'_>),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), String>>,
{
    run_match_until(config, players, events, record, std::future::pending()).await
}

/// Runs a match to its end, or until `stop` completes, and returns its record and where the
/// time went.
///
/// `events` is told when START has been answered and after every step. `record` is called with
/// the record so far: before START, after START, after every step, and at the end (completed,
/// or aborted); the manager waits for the future it returns before it sends anything more, so a
/// record that is durable when the future completes has every step played before the next PLAY
/// is sent. An error from `record` ends the match (the players are sent ABORT). When `stop`
/// completes, with a reason, the match is aborted at once: the players are sent ABORT and the
/// record is marked aborted with that reason ([`MatchError::Stopped`]).
pub async fn run_match_until<P, R, F, S>(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
    mut events: P,
    mut record: R,
    stop: S,
) -> Result<Finished, MatchError>
where
    P: FnMut(Event<'_>),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), String>>,
    S: Future<Output = String>,
{
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
    let mut referee = Some(Box::new(
        spawn_charged(&config.memory, move || Referee::load(&rules, rng))
            .await
            .map_err(|e| MatchError::Game(format!("the manager's reasoner failed: {e}")))?
            .map_err(MatchError::Rules)?,
    ));
    let (roles, initial, reasoner, chance, gdl2) = {
        let r = referee.as_ref().expect("loaded");
        (
            r.roles(),
            r.state_text(),
            r.machine.describe_engine(),
            r.machine.random_role(),
            r.gdl2,
        )
    };
    // GDL-II's `random` role is no seat: the manager plays it.
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
    referee.as_mut().expect("loaded").did = !gdl2
        && players
            .iter()
            .any(|p| matches!(p, Some(PlayerSpec::Gdl2(..))));
    let mut rec = MatchRecord {
        match_id: config.match_id.clone(),
        game_name: config.game_name.clone(),
        random_token: random_token(),
        start_time: now_ms(),
        rules: config.rules.clone(),
        game_role_names: roles.clone(),
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
    };
    record(&rec)
        .await
        .map_err(|e| MatchError::Record(format!("cannot record the match: {e}")))?;
    let mut timing = Timing::default();
    let mut seats: Vec<Seat> = players
        .iter()
        .map(|p| match p {
            Some(PlayerSpec::Url(url)) if gdl2 => {
                Seat::Remote(url.clone(), Form::Gdl2(Gdl2Form::Percepts))
            }
            Some(PlayerSpec::Url(url)) => Seat::Remote(url.clone(), Form::Moves),
            Some(PlayerSpec::Gdl2(url, form)) => Seat::Remote(url.clone(), Form::Gdl2(*form)),
            Some(PlayerSpec::Builtin(_)) => Seat::Local(None),
            Some(PlayerSpec::Channel(seat)) => Seat::Channel(seat.clone()),
            None => Seat::Chance,
        })
        .collect();
    let played = {
        let playing = play(
            &config,
            &sent_rules,
            &players,
            &seeds,
            &roles,
            &mut referee,
            &mut seats,
            &mut rec,
            &mut timing,
            &mut events,
            &mut record,
        );
        tokio::select! {
            played = playing => played,
            reason = stop => Err(MatchError::Stopped(reason)),
        }
    };
    if let Err(e) = played {
        // Tell the players, and keep the record as aborted, saying why.
        let abort = Request::Abort {
            match_id: config.match_id.clone(),
        }
        .to_string();
        let wait = config.grace.max(Duration::from_secs(1));
        let aborts: Vec<_> = seats
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
        rec.is_completed = false;
        rec.is_aborted = true;
        rec.abort_reason = Some(e.to_string());
        let recorded = record(&rec).await;
        return Err(match (e, recorded) {
            (e @ MatchError::Record(_), _) | (e, Ok(())) => e,
            (e, Err(failed)) => MatchError::Record(format!(
                "{e}; and the aborted match could not be recorded: {failed}"
            )),
        });
    }
    // STOP, everyone at once; the replies do not matter any more.
    let last_percepts = referee
        .as_ref()
        .map(|r| r.last_percepts.clone())
        .unwrap_or_default();
    let player_stats: Vec<Option<PlayerStats>> = seats
        .iter()
        .map(|seat| match seat {
            Seat::Local(Some(local)) => local.0.stats(),
            _ => None,
        })
        .collect();
    let asked = Instant::now();
    let mut stops = Vec::new();
    for (k, seat) in seats.iter_mut().enumerate() {
        match seat {
            Seat::Chance => {}
            Seat::Remote(url, form) => stops.push(send(
                url,
                message(*form, true, &config.match_id, k, &rec.moves, &last_percepts),
                config.play_clock.saturating_add(config.grace),
            )),
            Seat::Local(slot) => {
                let mut local = slot.take().expect("a built-in player is in its seat");
                let last = told(gdl2, k, &rec.moves, &last_percepts);
                stops.push(spawn_charged(&config.memory, move || {
                    let (strategy, game) = &mut *local;
                    observe(game, last.as_deref()).map_err(HttpError::Protocol)?;
                    strategy.stop(game);
                    Ok(String::new())
                }));
            }
            Seat::Channel(seat) => {
                // (In a GDL-II game a channel seat is not told the others' moves; it is not
                // told its percepts either.)
                seat.send(SeatMessage::Stop {
                    moves: rec.moves.last().cloned().filter(|_| !gdl2),
                });
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
    sent_rules: &str,
    players: &[Option<PlayerSpec>],
    seeds: &[u64],
    roles: &[String],
    referee: &mut Option<Box<Referee>>,
    seats: &mut [Seat],
    rec: &mut MatchRecord,
    timing: &mut Timing,
    events: &mut P,
    record: &mut R,
) -> Result<(), MatchError>
where
    P: FnMut(Event<'_>),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), String>>,
{
    // START, everyone at once; play begins when all are READY or the start clock runs out.
    // Built-in players read the rules and prepare on blocking threads meanwhile.
    let asked = Instant::now();
    let start_limit = config.start_clock.saturating_add(config.grace);
    let mut starting = Vec::new();
    let mut start_errors = Vec::new();
    let mut seeds = seeds.iter();
    for (k, p) in players.iter().enumerate() {
        match p {
            None => {}
            Some(PlayerSpec::Url(url) | PlayerSpec::Gdl2(url, _)) => {
                let did = referee.as_ref().expect("loaded").did;
                let rules = if did && matches!(p, Some(PlayerSpec::Gdl2(..))) {
                    format!("{sent_rules} {DID_RULE}")
                } else {
                    sent_rules.to_string()
                };
                let request = Request::Start(Start {
                    match_id: config.match_id.clone(),
                    role: roles[k].clone(),
                    rules,
                    start_clock: config.start_clock.as_secs(),
                    play_clock: config.play_clock.as_secs(),
                });
                let message = request.to_string();
                starting.push((k, Err((request, send(url, message, start_limit)))));
            }
            Some(PlayerSpec::Channel(seat)) => {
                // Ready at once: a channel seat has nothing to prepare.
                let told = seat.send(SeatMessage::Start {
                    match_id: config.match_id.clone(),
                    role: roles[k].clone(),
                    seat: k,
                    start_clock: config.start_clock,
                    play_clock: config.play_clock,
                });
                if !told {
                    start_errors.push(StepError {
                        player: k,
                        kind: "connection".into(),
                        detail: GONE.into(),
                    });
                }
            }
            Some(PlayerSpec::Builtin(kind)) => {
                let seed = *seeds.next().expect("a seed per built-in player");
                let factory = kind.factory(seed);
                let rules = sent_rules.to_string();
                let start_clock = config.start_clock;
                starting.push((
                    k,
                    Ok(spawn_charged(&config.memory, move || {
                        let mut game = Game::new(load(&rules)?, k)?;
                        let mut strategy = factory();
                        strategy.start(&mut game, deadline_after(Instant::now(), start_clock));
                        Ok::<_, String>(Box::new((strategy, game)))
                    })),
                ));
            }
        }
    }
    // A remote player's reply to START is judged and recorded, but play goes on either way
    // (§8.4): a player that was not ready may still play.
    for (k, task) in starting {
        match task {
            Err((request, remote)) => {
                let reply = remote.await.unwrap_or_else(|e| {
                    Err(HttpError::Connection(format!("the request failed: {e}")))
                });
                let error = match reply {
                    Ok(body) => match Reply::parse_for(&request, &body) {
                        Ok(Reply::Ready) => None,
                        Ok(_) => Some(("busy", body)),
                        Err(_) => Some(("unexpected", body)),
                    }
                    .map(|(kind, detail)| StepError {
                        player: k,
                        kind: kind.into(),
                        detail,
                    }),
                    Err(e) => Some(http_error(k, e, "start", config.start_clock, config.grace)),
                };
                start_errors.extend(error);
            }
            Ok(local) => {
                let player = local
                    .await
                    .map_err(|e| MatchError::Game(format!("a built-in player failed: {e}")))?
                    .map_err(|e| {
                        MatchError::Game(format!("a built-in player cannot play these rules: {e}"))
                    })?;
                seats[k] = Seat::Local(Some(player));
            }
        }
    }
    timing.waiting += asked.elapsed();
    start_errors.sort_by_key(|e| e.player);
    for e in &start_errors {
        rec.start_errors[e.player] = e.text();
    }
    events(Event::Started {
        errors: &start_errors,
        players: &rec.player_names_from_host,
    });
    if !start_errors.is_empty() {
        record(rec)
            .await
            .map_err(|e| MatchError::Record(format!("cannot record START: {e}")))?;
    }
    let mut step = 0;
    while !referee.as_ref().expect("the referee is back").terminal {
        if step >= config.max_steps {
            return Err(MatchError::TooLong(config.max_steps));
        }
        let (last_percepts, gdl2) = {
            let r = referee.as_ref().expect("the referee is back");
            (r.last_percepts.clone(), r.gdl2)
        };
        let limit = config.play_clock.saturating_add(config.grace);
        // Ask every player at once: remote ones over HTTP, built-in ones on blocking threads.
        let asked = Instant::now();
        let mut pending = Vec::new();
        for (k, seat) in seats.iter_mut().enumerate() {
            match seat {
                Seat::Chance => pending.push(Pending::Chance),
                Seat::Remote(url, form) => {
                    let message = message(
                        *form,
                        false,
                        &config.match_id,
                        k,
                        &rec.moves,
                        &last_percepts,
                    );
                    pending.push(Pending::Remote(send(url, message, limit)));
                }
                Seat::Local(slot) => {
                    let mut local = slot.take().expect("a built-in player is in its seat");
                    let last = told(gdl2, k, &rec.moves, &last_percepts);
                    let play_clock = config.play_clock;
                    pending.push(Pending::Local(spawn_charged(&config.memory, move || {
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
                Seat::Channel(seat) => {
                    let legal = {
                        let r = referee.as_ref().expect("the referee is back");
                        r.legal[k].iter().map(|&m| r.text(m)).collect()
                    };
                    let (reply, answer) = tokio::sync::oneshot::channel();
                    let told = seat.send(SeatMessage::Turn(Turn {
                        step,
                        legal,
                        deadline: deadline_after(asked, config.play_clock),
                        reply,
                    }));
                    pending.push(Pending::Channel(
                        told.then_some(answer),
                        deadline_after(asked, limit),
                    ));
                }
            }
        }
        let mut replies: Vec<Answer> = Vec::new();
        for (k, p) in pending.into_iter().enumerate() {
            replies.push(match p {
                Pending::Chance => Answer::Chance,
                Pending::Remote(task) => Answer::Player(match task.await {
                    Ok(Ok(body)) => Ok(body),
                    Ok(Err(e)) => Err(http_error(k, e, "play", config.play_clock, config.grace)),
                    Err(e) => Err(StepError {
                        player: k,
                        kind: "failed".into(),
                        detail: e.to_string(),
                    }),
                }),
                Pending::Local(task) => {
                    let (local, chosen) = task
                        .await
                        .map_err(|e| MatchError::Game(format!("a built-in player failed: {e}")))?;
                    seats[k] = Seat::Local(Some(local));
                    Answer::Player(chosen)
                }
                Pending::Channel(answer, until) => {
                    let gone = || StepError {
                        player: k,
                        kind: "connection".into(),
                        detail: GONE.into(),
                    };
                    Answer::Player(match answer {
                        None => Err(gone()),
                        Some(answer) => match tokio::time::timeout_at(until.into(), answer).await {
                            Ok(Ok(body)) => Ok(body),
                            Ok(Err(_)) => Err(gone()),
                            Err(_) => Err(http_error(
                                k,
                                HttpError::Timeout,
                                "play",
                                config.play_clock,
                                config.grace,
                            )),
                        },
                    })
                }
            });
        }
        let waited = asked.elapsed();
        timing.waiting += waited;
        let advanced =
            on_blocking_thread(&config.memory, referee, move |r| r.advance(replies, step))
                .await
                .map_err(MatchError::Game)?
                .map_err(MatchError::Game)?;
        let mut error_row = vec![String::new(); roles.len()];
        for e in &advanced.errors {
            error_row[e.player] = e.text();
        }
        // The errors of the state the move was made in; the new state has none yet.
        *rec.errors.last_mut().expect("a row per state") = error_row;
        rec.errors.push(vec![String::new(); roles.len()]);
        rec.moves.push(advanced.moves.clone());
        if referee.as_ref().expect("the referee is back").gdl2 {
            rec.percepts.push(advanced.percepts);
        }
        rec.states.push(advanced.state);
        rec.state_times.push(now_ms());
        if let Some(goals) = advanced.goals {
            rec.goal_values = goals;
            rec.is_completed = true;
        }
        events(Event::Step(&Progress {
            step,
            moves: advanced.moves,
            errors: advanced.errors,
            terminal: advanced.terminal,
            waited,
        }));
        record(rec)
            .await
            .map_err(|e| MatchError::Record(format!("cannot record step {}: {e}", step + 1)))?;
        step += 1;
    }
    if !rec.is_completed {
        // A game whose initial state is terminal.
        let r = referee.as_mut().expect("the referee is back");
        rec.goal_values = r
            .machine
            .goals(&r.state)
            .map_err(|e| MatchError::Game(e.to_string()))?;
        rec.is_completed = true;
        record(rec)
            .await
            .map_err(|e| MatchError::Record(format!("cannot record the end of the match: {e}")))?;
    }
    Ok(())
}

/// What a remote player is sent at a step (PLAY) or at the end (STOP), after the joint moves
/// `moves`, of which every role saw `percepts` at the last (none before the first).
fn message(
    form: Form,
    stop: bool,
    match_id: &str,
    role: usize,
    moves: &[Vec<String>],
    percepts: &[Vec<String>],
) -> String {
    let match_id = match_id.to_string();
    let last = moves.last();
    let seen = || last.map(|_| percepts.get(role).cloned().unwrap_or_default());
    match form {
        Form::Moves if stop => Request::Stop {
            match_id,
            moves: last.cloned(),
        },
        Form::Moves => Request::Play {
            match_id,
            moves: last.cloned(),
        },
        Form::Gdl2(Gdl2Form::Percepts) => Request::Sees {
            stop,
            match_id,
            percepts: seen(),
        },
        Form::Gdl2(Gdl2Form::Turn) => Request::Turn(ggp_protocol::Turn {
            stop,
            match_id,
            turn: moves.len() as u64,
            last_move: last.map(|m| m[role].clone()),
            percepts: seen(),
        }),
    }
    .to_string()
}

/// The error detail for a channel seat whose other end is gone.
const GONE: &str = "nobody is at the seat any more (its channel is closed)";

/// Asks a player for INFO: whether it can be reached at all, and what it says of itself. Any
/// HTTP reply counts as reachable (`Ok`); a reply that is not an INFO reply (older players do
/// not know INFO) is `Ok(None)`. The Game Manager contacts every player this way before START,
/// so that an unreachable one is reported before the match rather than at every step.
pub async fn ping(
    url: &str,
    timeout: Duration,
) -> Result<Option<ggp_protocol::InfoReply>, HttpError> {
    let body = post(url, &Request::Info.to_string(), timeout).await?;
    Ok(match Reply::parse_for(&Request::Info, &body) {
        Ok(Reply::Info(info)) => Some(info),
        Ok(Reply::Busy) => Some(ggp_protocol::InfoReply {
            status: Some("busy".into()),
            ..Default::default()
        }),
        _ => None,
    })
}

/// Sends a message to a remote player as a task of its own, so that players are asked at once.
fn send(url: &str, message: String, timeout: Duration) -> JoinHandle<Result<String, HttpError>> {
    let url = url.to_string();
    tokio::spawn(async move { post(&url, &message, timeout).await })
}

/// The error entry for a request (`start` or `play`) that got no usable reply.
fn http_error(
    player: usize,
    e: HttpError,
    request: &str,
    clock: Duration,
    grace: Duration,
) -> StepError {
    let (kind, detail) = match e {
        HttpError::Timeout => (
            "timeout",
            format!(
                "no reply within {} (the {request} clock, {}, and the grace, {})",
                seconds(clock.saturating_add(grace)),
                seconds(clock),
                seconds(grace)
            ),
        ),
        HttpError::Connection(m) => ("connection", m),
        HttpError::Protocol(m) => ("http", m),
    };
    StepError {
        player,
        kind: kind.into(),
        detail,
    }
}
