//! How the manager talks to each kind of seat: the messages of a remote player, the errors of a
//! request without a usable reply, and a built-in player's turn.

use std::time::{Duration, Instant};

use ggp_play::{Game, PlayError, Strategy};
use ggp_protocol::{Reply, Request};
use tokio::task::JoinHandle;

use super::clock::{deadline_after, seconds};
use super::config::{Gdl2Form, PlayerSpec};
use crate::http::{HttpError, post};
use crate::record::StepError;
use crate::seat::SeatChannel;

/// What a remote player is told after each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// The joint move (GDL).
    Moves,
    Gdl2(Gdl2Form),
}

/// A built-in strategy and its own view of the game.
pub(super) type LocalPlayer = (Box<dyn Strategy>, Game);

/// A player's side of the match, as the manager drives it.
pub(super) enum Seat {
    Remote(String, Form),
    /// GDL-II's `random` role, played by the manager.
    Chance,
    /// A built-in player (empty while it thinks).
    Local(Option<Box<LocalPlayer>>),
    Channel(SeatChannel),
}

impl Seat {
    /// The seat of a role's player (`None`: GDL-II's `random` role) in a GDL-II game or not. A
    /// built-in player takes its seat once it has read the rules, at START.
    pub(super) fn new(player: Option<&PlayerSpec>, gdl2: bool) -> Seat {
        match player {
            Some(PlayerSpec::Url(url)) if gdl2 => {
                Seat::Remote(url.clone(), Form::Gdl2(Gdl2Form::Percepts))
            }
            Some(PlayerSpec::Url(url)) => Seat::Remote(url.clone(), Form::Moves),
            Some(PlayerSpec::Gdl2(url, form)) => Seat::Remote(url.clone(), Form::Gdl2(*form)),
            Some(PlayerSpec::Builtin(_)) => Seat::Local(None),
            Some(PlayerSpec::Channel(seat)) => Seat::Channel(seat.clone()),
            None => Seat::Chance,
        }
    }
}

/// A player's reply to START on its way: a remote player's to the request it was sent, or a
/// built-in player reading the rules.
pub(super) enum Starting {
    Remote(Request, JoinHandle<Result<String, HttpError>>),
    Local(JoinHandle<Result<Box<LocalPlayer>, PlayError>>),
}

/// A built-in player back from its turn, with the move it chose.
pub(super) type LocalTurn = (Box<LocalPlayer>, Result<String, StepError>);

/// A role's reply on its way at a step, each with the moment it came (so that each player's
/// time is measured, though the replies are read in the order of the roles).
pub(super) enum Pending {
    Remote(JoinHandle<(Result<String, HttpError>, Instant)>),
    Local(JoinHandle<(LocalTurn, Instant)>),
    Chance,
    /// The reply to a [`Turn`].
    ///
    /// [`Turn`]: crate::seat::Turn
    Channel(JoinHandle<(ChannelReply, Instant)>),
}

/// What came back from a person's seat (a [`SeatChannel`]).
pub(super) enum ChannelReply {
    Move(String),
    /// The seat's other end is gone (or was before the turn was sent).
    Gone,
    /// No reply before the clock and its grace ran out.
    Late,
}

/// Waits for a person's reply to a turn (`None`: the seat was gone when it was sent) until
/// `until`, as a task of its own.
pub(super) fn await_channel(
    answer: Option<tokio::sync::oneshot::Receiver<String>>,
    until: Instant,
) -> JoinHandle<(ChannelReply, Instant)> {
    tokio::spawn(async move {
        let reply = match answer {
            None => ChannelReply::Gone,
            Some(answer) => match tokio::time::timeout_at(until.into(), answer).await {
                Ok(Ok(body)) => ChannelReply::Move(body),
                Ok(Err(_)) => ChannelReply::Gone,
                Err(_) => ChannelReply::Late,
            },
        };
        (reply, Instant::now())
    })
}

/// The error detail for a channel seat whose other end is gone.
pub(super) const GONE: &str = "nobody is at the seat any more (its channel is closed)";

/// What a remote player is sent at a step (PLAY) or at the end (STOP), after the joint moves
/// `moves`, of which every role saw `percepts` at the last (none before the first).
pub(super) fn message(
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

/// Sends a message to a remote player as a task of its own, so that players are asked at once.
pub(super) fn send(
    url: &str,
    message: String,
    timeout: Duration,
) -> JoinHandle<Result<String, HttpError>> {
    let url = url.to_string();
    tokio::spawn(async move { post(&url, &message, timeout).await })
}

/// [`send`], with the moment the reply (or the error) came.
pub(super) fn send_timed(
    url: &str,
    message: String,
    timeout: Duration,
) -> JoinHandle<(Result<String, HttpError>, Instant)> {
    let url = url.to_string();
    tokio::spawn(async move {
        let reply = post(&url, &message, timeout).await;
        (reply, Instant::now())
    })
}

/// The error entry for a remote player's reply to START (`request`) that is not READY, if it
/// is not.
pub(super) async fn start_error(
    player: usize,
    request: &Request,
    remote: JoinHandle<Result<String, HttpError>>,
    clock: Duration,
    grace: Duration,
) -> Option<StepError> {
    let reply = remote
        .await
        .unwrap_or_else(|e| Err(HttpError::Connection(format!("the request failed: {e}"))));
    match reply {
        Ok(body) => match Reply::parse_for(request, &body) {
            Ok(Reply::Ready) => None,
            Ok(_) => Some(("busy", body)),
            Err(_) => Some(("unexpected", body)),
        }
        .map(|(kind, detail)| StepError {
            player,
            kind: kind.into(),
            detail,
        }),
        Err(e) => Some(http_error(player, e, "start", clock, grace)),
    }
}

/// The error entry for a request (`start` or `play`) that got no usable reply.
pub(super) fn http_error(
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

/// (GDL-II: the player keeps the states it may be in, as a remote one does).
pub(super) fn observe(game: &mut Game, last: Option<&[String]>) -> Result<(), PlayError> {
    match last {
        None => Ok(()),
        Some(percepts) if game.possible.is_some() => game.perceive(None, percepts),
        Some(moves) => game.apply(moves),
    }
}

/// A built-in player's turn: take in the previous step, then choose.
pub(super) fn think(
    strategy: &mut dyn Strategy,
    game: &mut Game,
    last: Option<&[String]>,
    clock: Duration,
) -> Result<String, PlayError> {
    observe(game, last)?;
    let chosen = strategy.select(game, deadline_after(Instant::now(), clock))?;
    game.last_move = Some(chosen);
    Ok(game.text(chosen))
}

/// What a built-in player of role `k` is told after the joint moves `moves`: the last joint
/// move, or in a GDL-II game its percepts of it.
pub(super) fn told(
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
