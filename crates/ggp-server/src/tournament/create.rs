//! Making a tournament: the request checked against the games and players there are, and
//! its schedule drawn (every round robin's assignment, or random groups, from its seed).

use std::collections::HashSet;
use std::sync::Arc;

use ggp_match::params;
use ggp_match::sql::{self, Conn};
use ggp_play::StrategyKind;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::model::{
    Format, MAX_GAMES, MAX_PLAYERS, MAX_ROUNDS, MAX_SCHEDULE, Tournament, TournamentGame,
    TournamentRequest, tournament,
};
use crate::db::{Player, json, now_ms};
use crate::error::Error;
use crate::seat::HUMAN;
use crate::state::Gamemaster;
use crate::verdict::Verdict;

/// The seeded random number generator of a tournament's `k`th draw.
pub(super) fn rng(seed: u64, k: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Every ordered choice of `k` distinct indices below `n`, in lexicographic order.
pub(super) fn permutations(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn extend(n: usize, k: usize, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == k {
            out.push(prefix.clone());
            return;
        }
        for i in 0..n {
            if !prefix.contains(&i) {
                prefix.push(i);
                extend(n, k, prefix, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    extend(n, k, &mut Vec::new(), &mut out);
    out
}

/// How many matches a round robin schedules per round: the sum over the games of
/// n! / (n - k)!, saturating.
pub fn round_robin_size(players: usize, games: &[TournamentGame]) -> usize {
    games
        .iter()
        .map(|g| {
            (0..g.seats).fold(1usize, |acc, i| {
                acc.saturating_mul(players.saturating_sub(i))
            })
        })
        .fold(0usize, usize::saturating_add)
}

/// The rows a tournament schedules when it is made: `(round, game, players, seed)`.
pub fn schedule(
    format: Format,
    games: &[TournamentGame],
    players: &[String],
    rounds: u64,
    seed: u64,
) -> Vec<(u64, usize, Vec<String>, u64)> {
    let mut out = Vec::new();
    let mut draw = rng(seed, 0);
    for round in 1..=rounds {
        for (g, game) in games.iter().enumerate() {
            match format {
                Format::RoundRobin => {
                    for seats in permutations(players.len(), game.seats) {
                        let names = seats.iter().map(|&i| players[i].clone()).collect();
                        out.push((round, g, names, draw.random()));
                    }
                }
                Format::Random => {
                    let mut order: Vec<&String> = players.iter().collect();
                    order.shuffle(&mut draw);
                    for group in order.chunks_exact(game.seats.max(1)) {
                        let names = group.iter().map(|s| (*s).clone()).collect();
                        out.push((round, g, names, draw.random()));
                    }
                }
                Format::Continuous => {}
            }
        }
    }
    out
}

/// Checks a request against the games and players there are, and makes the tournament and
/// its schedule.
pub async fn create(gm: &Arc<Gamemaster>, req: TournamentRequest) -> Result<Tournament, Error> {
    let Checked {
        format,
        name,
        rounds,
    } = check_request(&req)?;
    let registered = gm.db.players().await?;
    let players = tournament_players(&req.players, &registered)?;
    let games = pinned_games(gm, &req.games, players.len()).await?;
    if players.is_empty() {
        return Err(Error::BadRequest(
            "a tournament needs at least one player".into(),
        ));
    }
    let size = match format {
        Format::RoundRobin => {
            round_robin_size(players.len(), &games).saturating_mul(rounds as usize)
        }
        Format::Random => games
            .iter()
            .map(|g| players.len() / g.seats.max(1))
            .sum::<usize>()
            .saturating_mul(rounds as usize),
        Format::Continuous => 0,
    };
    if size > MAX_SCHEDULE {
        return Err(Error::BadRequest(format!(
            "the tournament would schedule {size} matches: at most {MAX_SCHEDULE} (fewer rounds, players or games)"
        )));
    }
    let seed = req.seed.unwrap_or_else(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
        u64::from_le_bytes(bytes) >> 1
    }) & (i64::MAX as u64);
    let rows = schedule(format, &games, &players, rounds, seed);
    let name = name.unwrap_or_else(|| {
        format!(
            "{} {}",
            games
                .iter()
                .map(|g| g.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            utc_day(now_ms())
        )
    });
    let exclusive: HashSet<String> = players
        .iter()
        .filter(|p| StrategyKind::parse(p).is_none())
        .cloned()
        .collect();
    let (start_clock, play_clock) = (req.startclock, req.playclock);
    let version_ids: Vec<i64> = games.iter().map(|g| g.id).collect();
    let names = players.clone();
    let id = gm
        .db
        .write(move |conn| {
            let id = conn.query_row(
                "INSERT INTO tournaments (name, format, versions, players, start_clock, play_clock,
                                          rounds, seed, status, created)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9) RETURNING id",
                params![
                    name,
                    format.name(),
                    json(&version_ids),
                    json(&names),
                    start_clock as i64,
                    play_clock as i64,
                    rounds as i64,
                    seed as i64,
                    now_ms()
                ],
                |r| r.get::<_, i64>(0),
            )?;
            for (round, g, seated, seed) in &rows {
                insert_scheduled(conn, id, *round, version_ids[*g], seated, *seed, &exclusive)?;
            }
            Ok(id)
        })
        .await?;
    gm.schedule_changed.notify_waiters();
    tournament(&gm.db, id).await
}

/// What a request says of itself, checked: its format, its name if given, its rounds.
struct Checked {
    format: Format,
    name: Option<String>,
    rounds: u64,
}

/// The request's format, name, numbers of games, players and rounds, and clocks within what
/// the server allows.
fn check_request(req: &TournamentRequest) -> Result<Checked, Error> {
    let format = Format::parse(req.format.as_deref().unwrap_or(""))?;
    let name = req
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    if let Some(n) = &name
        && (n.chars().count() > 100 || n.chars().any(char::is_control))
    {
        return Err(Error::BadRequest(
            "a tournament's name has at most 100 characters and no control characters".into(),
        ));
    }
    if req.games.is_empty() {
        return Err(Error::BadRequest(
            "a tournament needs at least one game".into(),
        ));
    }
    if req.games.len() > MAX_GAMES {
        return Err(Error::BadRequest(format!(
            "{} games: a tournament has at most {MAX_GAMES}",
            req.games.len()
        )));
    }
    if req.players.len() > MAX_PLAYERS {
        return Err(Error::BadRequest(format!(
            "{} players: a tournament has at most {MAX_PLAYERS}",
            req.players.len()
        )));
    }
    let rounds = req.rounds.unwrap_or(1);
    if format != Format::Continuous && !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(Error::BadRequest(format!(
            "{rounds} rounds: give 1 to {MAX_ROUNDS}"
        )));
    }
    for (clock, what) in [(req.startclock, "startclock"), (req.playclock, "playclock")] {
        if clock > ggp_protocol::MAX_CLOCK_SECS {
            return Err(Error::BadRequest(format!(
                "the {what} is {clock} seconds: at most a day ({}) is allowed",
                ggp_protocol::MAX_CLOCK_SECS
            )));
        }
    }
    Ok(Checked {
        format,
        name,
        rounds,
    })
}

/// The players as given: built in, or registered (by their names as registered); each once,
/// and never `human`.
fn tournament_players(given: &[String], registered: &[Player]) -> Result<Vec<String>, Error> {
    let mut players: Vec<String> = Vec::new();
    for given in given {
        let given = given.trim();
        let name = if given.eq_ignore_ascii_case(HUMAN) {
            return Err(Error::BadRequest(
                "`human` cannot play in a tournament: its matches are played by programs".into(),
            ));
        } else if let Some(kind) = StrategyKind::parse(given) {
            kind.name().to_string()
        } else if let Some(p) = registered
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(given))
        {
            p.name.clone()
        } else {
            return Err(Error::BadRequest(format!(
                "`{}` is not a player: use a registered player's name or {}",
                given.chars().take(100).collect::<String>(),
                StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
            )));
        };
        if players.iter().any(|p| p.eq_ignore_ascii_case(&name)) {
            return Err(Error::BadRequest(format!(
                "`{name}` is given twice: each player is in a tournament once"
            )));
        }
        players.push(name);
    }
    Ok(players)
}

/// The games as given: their latest versions, playable, each once, with no more seats than
/// the tournament has players.
async fn pinned_games(
    gm: &Gamemaster,
    keys: &[String],
    players: usize,
) -> Result<Vec<TournamentGame>, Error> {
    let mut games: Vec<TournamentGame> = Vec::new();
    for key in keys {
        let version = gm.db.version(key.trim(), None).await?;
        if let Some(why) = version.engine.as_ref().and_then(Verdict::unplayable) {
            return Err(Error::Conflict(format!(
                "the game `{}` (version {}) cannot be played: {why}",
                version.key, version.version
            )));
        }
        if games.iter().any(|g| g.id == version.id) {
            return Err(Error::BadRequest(format!(
                "the game `{}` is given twice",
                version.key
            )));
        }
        let chance = crate::games::random_role(&version.roles);
        let seats = version.roles.len() - usize::from(chance.is_some());
        if seats > players {
            return Err(Error::BadRequest(format!(
                "the game `{}` has {seats} roles to seat, but the tournament has {} player{}",
                version.key,
                players,
                if players == 1 { "" } else { "s" }
            )));
        }
        games.push(TournamentGame {
            id: version.id,
            key: version.key.clone(),
            version: version.version,
            seats,
        });
    }
    Ok(games)
}

pub(super) fn insert_scheduled(
    conn: &Conn,
    tournament: i64,
    round: u64,
    version: i64,
    players: &[String],
    seed: u64,
    exclusive: &HashSet<String>,
) -> sql::Result<()> {
    let row: i64 = conn.query_row(
        "INSERT INTO scheduled (tournament_ref, round, game_version_ref, players, seed, status)
         VALUES ($1, $2, $3, $4, $5, 'queued') RETURNING id",
        params![
            tournament,
            round as i64,
            version,
            json(&players),
            (seed & i64::MAX as u64) as i64
        ],
        |r| r.get(0),
    )?;
    for p in players {
        conn.prepare_cached(
            "INSERT INTO scheduled_seats (scheduled_ref, player, exclusive) VALUES ($1, $2, $3)",
        )?
        .execute(params![row, p, i64::from(exclusive.contains(p))])?;
    }
    Ok(())
}

/// `YYYY-MM-DD` of a time in milliseconds.
pub(super) fn utc_day(ms: i64) -> String {
    ggp_match::utc_date(ms.max(0) as u64)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}
