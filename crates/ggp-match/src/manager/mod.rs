//! Running one match: START, PLAY… and STOP (or ABORT) to the players, each step recorded.
//!
//! What a match is asked to be is in `config`, what it reports in `outcome`; `running` plays it
//! as a [`Match`](running::Match) with a method per step of the protocol, the `referee` judges
//! the replies and plays the joint moves, `seats` speaks to each kind of player, `blocking`
//! runs the reasoning and the built-in players on blocking threads, charged to the match's
//! memory account, `clock` keeps the deadlines, and `knowledge` reads what the roles know
//! after the true history of a GDL-III game.

mod blocking;
mod clock;
mod config;
mod knowledge;
mod outcome;
mod referee;
mod running;
mod seats;

use std::future::Future;
use std::time::Duration;

use ggp_protocol::{Reply, Request};

pub use self::config::{
    DEFAULT_MAX_STEPS, DID_RULE, Gdl2Form, MANAGER_PLAYS_RANDOM, MatchConfig, PlayerSpec,
    PlayerSpecError,
};
pub use self::knowledge::{Knowledge, Known};
pub use self::outcome::{Event, Finished, MatchError, Progress, Timing};
use self::running::Match;
use crate::http::{HttpError, post};
use crate::record::MatchRecord;
use crate::store::StoreError;

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
    F: Future<Output = Result<(), StoreError>>,
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
    events: P,
    record: R,
    stop: S,
) -> Result<Finished, MatchError>
where
    P: FnMut(Event<'_>),
    R: FnMut(&MatchRecord) -> F,
    F: Future<Output = Result<(), StoreError>>,
    S: Future<Output = String>,
{
    let (running, referee) = Match::open(config, players, events, record).await?;
    running.run(referee, stop).await
}

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
