//! Creating a live match from a request and running it on a task of its own: the seats
//! checked and made, the match admitted (a slot and its memory), recorded step by step, and
//! taken off the live list at its end (a tournament's match reported through the server's
//! hook).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ggp_match::{
    Event, MatchConfig, MatchError, MatchRecord, PlayerSpec, SeatChannel, SeatMessage,
    run_match_until,
};
use ggp_play::StrategyKind;
use tokio::sync::{oneshot, watch};

use super::model::{
    Created, Live, LiveData, MAX_CLOCK, MAX_DELAY_MS, MatchRequest, SeatLink, lock,
};
use crate::auth;
use crate::db::{NewMatch, NewSeat, Player, Seat, Version, now_ms};
use crate::error::Error;
use crate::seat::{HUMAN, SeatKind};
use crate::state::Gamemaster;
use crate::verdict::Verdict;

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

/// Creates a match and starts it: the request checked against the game and the limits, its
/// seats made, a slot and memory admitted, the match recorded, then run on a task of its own.
pub async fn create(gm: &Arc<Gamemaster>, req: MatchRequest) -> Result<Created, Error> {
    let version = playable_version(gm, &req).await?;
    let (chance, seated) = seated_roles(&version, &req)?;
    check_limits(&req)?;
    let registered = gm.db.players().await?;
    let Seating {
        specs,
        mut seats,
        rows,
        humans,
    } = seat_players(&seated, &req.players, &registered)?;
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
    // As the version's trial found, or (not tried yet) from the rules.
    let gdl3 = match &version.traits {
        Some(traits) => traits.gdl3,
        None => {
            let text = rules.clone();
            tokio::task::spawn_blocking(move || crate::games::is_gdl3(&text))
                .await
                .map_err(|e| Error::Internal(format!("reading the rules failed: {e}")))?
        }
    };
    let id = new_id(gm, &version.key).await?;
    // Its slot and its memory, before anything is recorded: a match that finds no room is
    // refused, with the limit it met.
    let admitted = admit(gm, &version, &specs)?;
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
        roles: version.roles.clone(),
        seats,
        gdl2,
        gdl3,
        scheduled: req.scheduled,
        start_clock: config.start_clock,
        play_clock: config.play_clock,
        delay: Duration::from_millis(req.delay),
        delays: Default::default(),
        hint: crate::games::hint(&version),
        rules: version.rules.clone().unwrap_or_default().into(),
        known: Mutex::new(Vec::new()),
        data: Mutex::new(LiveData::default()),
        changed: watch::channel(0).0,
        stop: Mutex::new(Some(stop)),
    });
    lock(&gm.live).insert(id.clone(), live.clone());
    let links = human_seats(&live, humans);
    tokio::spawn(run(gm.clone(), live, config, specs, stopped, admitted));
    Ok(Created { id, seats: links })
}

/// The version a request names, if the server takes matches and the version can be played.
async fn playable_version(gm: &Gamemaster, req: &MatchRequest) -> Result<Version, Error> {
    if gm.stopping() {
        return Err(Error::Unavailable("the server is stopping".into()));
    }
    crate::games::check_key(&req.game)?;
    let version = gm.db.version(&req.game, req.version).await?;
    if let Some(why) = version.engine.as_ref().and_then(Verdict::unplayable) {
        return Err(Error::Conflict(format!(
            "the game `{}` (version {}) cannot be played: {why}",
            version.key, version.version
        )));
    }
    Ok(version)
}

/// GDL-II's `random` role, if the game has one (the manager plays it: it is no seat), and the
/// roles that are seats; the request must give a player for each of those.
fn seated_roles(
    version: &Version,
    req: &MatchRequest,
) -> Result<(Option<usize>, Vec<usize>), Error> {
    let roles = &version.roles;
    let chance = crate::games::random_role(roles);
    let seated: Vec<usize> = (0..roles.len()).filter(|&k| Some(k) != chance).collect();
    if req.players.len() == seated.len() {
        return Ok((chance, seated));
    }
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
    Err(Error::BadRequest(match chance {
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
    }))
}

/// The request's clocks and delay within what the server allows.
fn check_limits(req: &MatchRequest) -> Result<(), Error> {
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
    Ok(())
}

/// The seats of a new match: how the manager reaches each player, the seats as the live
/// match shows them, the rows recorded, and each human seat's role, token and messages.
struct Seating {
    specs: Vec<PlayerSpec>,
    seats: Vec<Seat>,
    rows: Vec<NewSeat>,
    humans: Vec<(
        usize,
        String,
        tokio::sync::mpsc::UnboundedReceiver<SeatMessage>,
    )>,
}

/// Seats the named players in the roles `seated`: `human`, a built-in strategy, or a
/// registered player (at most one role each: the protocol's messages do not say which role
/// they are for).
fn seat_players(
    seated: &[usize],
    players: &[String],
    registered: &[Player],
) -> Result<Seating, Error> {
    let mut seating = Seating {
        specs: Vec::new(),
        seats: Vec::new(),
        rows: Vec::new(),
        humans: Vec::new(),
    };
    for (&k, name) in seated.iter().zip(players) {
        let (spec, seat, player, token) = if name.eq_ignore_ascii_case(HUMAN) {
            let (channel, messages) = SeatChannel::new(HUMAN);
            let token = auth::new_token();
            let hash = auth::hash(&token);
            seating.humans.push((k, token, messages));
            let seat = Seat {
                kind: SeatKind::Human,
                name: HUMAN.into(),
            };
            (PlayerSpec::Channel(channel), seat, None, Some(hash))
        } else if let Some(kind) = StrategyKind::parse(name) {
            let seat = Seat {
                kind: SeatKind::Builtin,
                name: kind.name().into(),
            };
            (PlayerSpec::Builtin(kind), seat, None, None)
        } else if let Some(p) = registered
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
        {
            if seating
                .seats
                .iter()
                .any(|s| s.kind == SeatKind::Player && s.name == p.name)
            {
                return Err(Error::BadRequest(format!(
                    "`{}` is given for two roles: a player plays one role of a match (the protocol's messages do not say which role they are for)",
                    p.name
                )));
            }
            let seat = Seat {
                kind: SeatKind::Player,
                name: p.name.clone(),
            };
            (PlayerSpec::Url(p.url.clone()), seat, Some(p.id), None)
        } else {
            return Err(Error::BadRequest(format!(
                "`{}` is not a player: use a registered player's name, {}, or `{HUMAN}`",
                name.chars().take(100).collect::<String>(),
                StrategyKind::NAMES.map(|n| format!("`{n}`")).join(", ")
            )));
        };
        seating.rows.push(NewSeat {
            seat: k,
            kind: seat.kind,
            player,
            name: seat.name.clone(),
            token_hash: token,
        });
        seating.specs.push(spec);
        seating.seats.push(seat);
    }
    Ok(seating)
}

/// A slot and the memory the match needs: its game's trial, and a share for each built-in
/// player (more for a tree search).
fn admit(
    gm: &Gamemaster,
    version: &Version,
    specs: &[PlayerSpec],
) -> Result<crate::limits::Admitted, Error> {
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
    gm.admission.admit(need)
}

/// Relays each human seat's messages to the live match (its turns), and gives the seat's
/// link: the match page with the seat's token.
fn human_seats(
    live: &Arc<Live>,
    humans: Vec<(
        usize,
        String,
        tokio::sync::mpsc::UnboundedReceiver<SeatMessage>,
    )>,
) -> Vec<SeatLink> {
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
            role: live.roles[k].clone(),
            // `?seat=K`: the page shows that role's view only; the token stays in the
            // fragment, which browsers never send.
            url: format!(
                "/matches/{}?seat={k}#seat={k}&token={token}",
                crate::pages::path_part(&live.id)
            ),
            token,
        });
    }
    links
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
            saved.await?;
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
    let events = move |event: Event<'_>| match event {
        Event::Started { .. } => event_live.started(),
        Event::Step(progress) => event_live.knew(progress.step, progress.knowledge.clone()),
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
        (gm.scheduled_ended)(gm.clone(), row, completed, failure).await;
    }
    gm.ended.notify_waiters();
}

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
