//! Running one match.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gdl_reason::{ReferenceMachine, ReferenceState, StateMachine, TermId};
use ggp_play::{Game, Strategy, StrategyKind, load};
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
    /// `random`, `legal`, or an `http://` URL (a bare `host:port` gets `http://`).
    pub fn parse(text: &str) -> Result<PlayerSpec, String> {
        match text.to_ascii_lowercase().as_str() {
            "random" => Ok(PlayerSpec::Builtin(StrategyKind::Random)),
            "legal" => Ok(PlayerSpec::Builtin(StrategyKind::Legal)),
            _ if text.starts_with("http://") => Ok(PlayerSpec::Url(text.to_string())),
            _ if text.contains(':') && !text.contains("://") => {
                Ok(PlayerSpec::Url(format!("http://{text}")))
            }
            _ => Err(format!(
                "`{text}` is not a player: use `random`, `legal` or an http:// URL"
            )),
        }
    }

    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Url(url) => url.clone(),
            PlayerSpec::Builtin(StrategyKind::Random) => "random".into(),
            PlayerSpec::Builtin(StrategyKind::Legal) => "legal".into(),
        }
    }
}

/// A match to run.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub match_id: String,
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
    pub step: usize,
    pub moves: Vec<String>,
    pub errors: Vec<StepError>,
    pub terminal: bool,
}

/// A player's side of the match, as the manager drives it.
enum Seat {
    Remote(String),
    /// A built-in strategy and its own view of the game (empty while it thinks).
    Local(Option<Box<LocalPlayer>>),
}

type LocalPlayer = (Box<dyn Strategy>, Game);

/// A built-in player back from its turn, with the move it chose.
type LocalTurn = (Box<LocalPlayer>, Result<String, StepError>);

enum Pending {
    Remote(JoinHandle<Result<String, HttpError>>),
    Local(JoinHandle<LocalTurn>),
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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn state_text(machine: &ReferenceMachine, state: &ReferenceState) -> String {
    let mut fluents: Vec<String> = machine
        .fluents(state)
        .iter()
        .map(|&f| machine.terms().text(machine.symbols(), f))
        .collect();
    fluents.sort();
    format!("({})", fluents.join(" "))
}

/// Runs a match to its end and returns its record. `progress` is called after every step;
/// `record` with the record so far (after START and after each step), for durable storage.
pub async fn run_match(
    config: MatchConfig,
    players: Vec<PlayerSpec>,
    mut progress: impl FnMut(&Progress),
    mut record: impl FnMut(&MatchRecord),
) -> Result<MatchRecord, String> {
    let mut machine =
        load(&config.rules).map_err(|first| format!("the rules cannot be played: {first}"))?;
    let roles: Vec<String> = machine
        .roles()
        .iter()
        .map(|&r| machine.terms().text(machine.symbols(), r))
        .collect();
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
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut state = machine.initial_state().map_err(|e| e.to_string())?;
    let mut rec = MatchRecord {
        match_id: config.match_id.clone(),
        random_token: format!("{:016x}", rng.random::<u64>()),
        start_time: now_ms(),
        rules: config.rules.clone(),
        game_role_names: roles.clone(),
        player_names_from_host: players.iter().map(PlayerSpec::name).collect(),
        start_clock: config.start_clock.as_secs(),
        play_clock: config.play_clock.as_secs(),
        states: vec![state_text(&machine, &state)],
        moves: Vec::new(),
        state_times: vec![now_ms()],
        errors: Vec::new(),
        goal_values: Vec::new(),
        is_completed: false,
        is_aborted: false,
    };
    let mut seats: Vec<Seat> = Vec::with_capacity(players.len());
    for (k, p) in players.iter().enumerate() {
        seats.push(match p {
            PlayerSpec::Url(url) => Seat::Remote(url.clone()),
            PlayerSpec::Builtin(kind) => {
                let mut strategy = kind.factory(rng.random())();
                let mut game = Game {
                    machine: load(&config.rules)
                        .map_err(|first| format!("the rules cannot be played: {first}"))?,
                    state: state.clone(),
                    role: k,
                };
                strategy.start(&mut game, Instant::now() + config.start_clock);
                Seat::Local(Some(Box::new((strategy, game))))
            }
        });
    }
    // START, everyone at once; play begins when all are READY or the start clock runs out.
    let start_deadline = config.start_clock + config.grace;
    let mut starts = Vec::new();
    for (k, seat) in seats.iter().enumerate() {
        let Seat::Remote(url) = seat else { continue };
        let message = Request::Start(Start {
            match_id: config.match_id.clone(),
            role: roles[k].clone(),
            rules: config.rules.clone(),
            start_clock: config.start_clock.as_secs(),
            play_clock: config.play_clock.as_secs(),
        })
        .to_string();
        starts.push(send(url, message, start_deadline));
    }
    for start in starts {
        let _ = start.await;
    }
    record(&rec);
    let mut last: Option<Vec<String>> = None;
    let mut step = 0;
    loop {
        if machine.is_terminal(&state).map_err(|e| e.to_string())? {
            break;
        }
        let legal: Vec<Vec<TermId>> = machine.all_legal_moves(&state).map_err(|e| e.to_string())?;
        if let Some(role) = legal.iter().position(Vec::is_empty) {
            return Err(format!(
                "`{}` has no legal move at step {step} (the game is not playable)",
                roles[role]
            ));
        }
        let message = Request::Play {
            match_id: config.match_id.clone(),
            moves: last.clone(),
        }
        .to_string();
        let deadline = config.play_clock + config.grace;
        // Ask every player at once: remote ones over HTTP, built-in ones on blocking threads.
        let mut pending = Vec::new();
        for (k, seat) in seats.iter_mut().enumerate() {
            match seat {
                Seat::Remote(url) => {
                    pending.push(Pending::Remote(send(url, message.clone(), deadline)));
                }
                Seat::Local(slot) => {
                    let mut local = slot.take().expect("a built-in player is in its seat");
                    let last = last.clone();
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
        // Judge the replies: a legal move stands; anything else is replaced.
        let mut joint = Vec::with_capacity(roles.len());
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
                        .find_map(|c| machine.intern(c).ok().filter(|t| legal[k].contains(t)))
                        .ok_or(StepError {
                            player: k,
                            kind: "illegal".into(),
                            detail: body,
                        }),
                },
                Err(e) => Err(e),
            };
            let m = match chosen {
                Ok(m) => m,
                Err(e) => {
                    errors.push(e);
                    *legal[k].choose(&mut rng).expect("checked non-empty")
                }
            };
            joint.push(m);
        }
        let texts: Vec<String> = joint
            .iter()
            .map(|&m| machine.terms().text(machine.symbols(), m))
            .collect();
        let mut error_row = vec![String::new(); roles.len()];
        for e in &errors {
            error_row[e.player] = e.text();
        }
        state = machine
            .next_state(&state, &joint)
            .map_err(|e| e.to_string())?;
        let terminal = machine.is_terminal(&state).map_err(|e| e.to_string())?;
        rec.moves.push(texts.clone());
        rec.errors.push(error_row);
        rec.states.push(state_text(&machine, &state));
        rec.state_times.push(now_ms());
        progress(&Progress {
            step,
            moves: texts.clone(),
            errors,
            terminal,
        });
        record(&rec);
        last = Some(texts);
        step += 1;
    }
    rec.errors.push(vec![String::new(); roles.len()]);
    rec.goal_values = machine.goals(&state).map_err(|e| e.to_string())?;
    rec.is_completed = true;
    // STOP, everyone at once; the replies do not matter any more.
    let stop = Request::Stop {
        match_id: config.match_id.clone(),
        moves: last,
    }
    .to_string();
    let mut stops = Vec::new();
    for seat in &seats {
        if let Seat::Remote(url) = seat {
            stops.push(send(url, stop.clone(), config.play_clock + config.grace));
        }
    }
    for s in stops {
        let _ = s.await;
    }
    record(&rec);
    Ok(rec)
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
