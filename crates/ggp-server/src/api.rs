//! The JSON API, under `/api` (documented in `docs/api.md`): the same data as the pages.
//! Reads are open; writes need `Authorization: Bearer <token>`.

use std::time::Duration;

use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::{HeaderMap, StatusCode, request::Parts};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::{Who, bearer_token};
use crate::db::MatchFilter;
use crate::error::{ApiError, ApiResult, Error};
use crate::live::{self, Asker, MatchRequest, Sight};
use crate::seat::SeatKind;
use crate::state::AppState;
use crate::tags::{Search, Tag};
use crate::{games, players};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/games", get(list_games).post(add_game))
        .route("/games/{key}", get(game))
        .route("/games/{key}/stats", get(game_stats))
        .route("/players/{name}/stats", get(player_stats))
        .route("/players", get(list_players).post(add_player))
        .route(
            "/players/{name}",
            get(player).patch(edit_player).delete(delete_player),
        )
        .route("/matches", get(list_matches).post(create_match))
        .route("/matches/{id}", get(match_json))
        .route("/matches/{id}/events", get(events))
        .route("/matches/{id}/views/{role}", get(view))
        .route("/matches/{id}/moves", post(moves))
        .route("/matches/{id}/abort", post(abort))
        .route(
            "/tournaments",
            get(list_tournaments).post(create_tournament),
        )
        .route("/tournaments/{id}", get(tournament_json))
        .route("/tournaments/{id}/{action}", post(tournament_action))
        .route("/leaderboard", get(leaderboard))
        .route("/server", get(server))
        .fallback(|| async {
            ApiError(Error::NotFound(
                "no such API endpoint (see docs/api.md)".into(),
            ))
        })
}

/// A JSON body, its rejections answered as API errors.
pub struct Body<T>(pub T);

impl<T, S> FromRequest<S> for Body<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(rejection) => Err(ApiError(match rejection.status() {
                StatusCode::PAYLOAD_TOO_LARGE => Error::TooLarge(format!(
                    "the request body is larger than {} bytes",
                    crate::state::MAX_BODY
                )),
                _ => Error::BadRequest(rejection.body_text()),
            })),
        }
    }
}

/// The bearer token's holder: the admin or a player's owner; 401 otherwise. Checked before the
/// body is read.
pub struct Authed(pub Who);

impl FromRequestParts<AppState> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Ok(Authed(state.auth.bearer(&state.db, &parts.headers).await?))
    }
}

fn admin_only(who: &Who) -> Result<(), Error> {
    match who {
        Who::Admin => Ok(()),
        Who::Owner { .. } => Err(Error::Forbidden(
            "this needs the admin token; a player's owner token only edits or removes its player"
                .into(),
        )),
    }
}

use crate::extract::{ApiParams as Params, ApiPath as Path};

fn number<T: std::str::FromStr>(
    params: &std::collections::HashMap<String, String>,
    name: &str,
) -> Result<Option<T>, Error> {
    params
        .get(name)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.trim().parse().map_err(|_| {
                Error::BadRequest(format!("`{name}` must be a whole number, not `{v}`"))
            })
        })
        .transpose()
}

/// The games (found by `?q=` words and `?tags=` tags, as on the games' page), each with its
/// tags.
async fn list_games(State(gm): State<AppState>, params: Params) -> ApiResult<Json<Value>> {
    let search = Search::from_query(&params).map_err(|e| Error::BadRequest(e.to_string()))?;
    let games: Vec<Value> = gm
        .db
        .games()
        .await?
        .into_iter()
        .filter_map(|g| {
            let tags = Tag::of(&g);
            if !search.matches(&g, &tags) {
                return None;
            }
            let mut value = json!(g);
            value["tags"] = json!(tags.iter().map(Tag::slug).collect::<Vec<_>>());
            Some(value)
        })
        .collect();
    Ok(Json(json!(games)))
}

#[derive(Deserialize)]
struct NewGame {
    key: String,
    rules: String,
}

async fn add_game(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Body(body): Body<NewGame>,
) -> ApiResult<Response> {
    admin_only(&who)?;
    let (added, checked) =
        games::add(&gm.db, &body.key, body.rules, Vec::new(), "upload".into()).await?;
    if added.new {
        gm.analyse(added.id);
    }
    let status = if added.new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({
            "key": body.key,
            "version": added.version,
            "new": added.new,
            "roles": checked.roles,
            "warnings": checked.warnings,
        })),
    )
        .into_response())
}

async fn game(
    State(gm): State<AppState>,
    Path(key): Path<String>,
    params: Params,
) -> ApiResult<Json<Value>> {
    let version = gm.db.version(&key, number(&params, "version")?).await?;
    let versions = gm.db.versions(&key).await?;
    let matches = gm
        .db
        .matches(MatchFilter {
            game: Some(key.clone()),
            limit: 1000,
            ..MatchFilter::default()
        })
        .await?;
    Ok(Json(json!({
        "key": version.key,
        "version": version.version,
        "roles": version.roles,
        "engine": version.engine,
        "hash": version.hash,
        "warnings": version.warnings,
        "source": version.source,
        "created": version.created,
        "rules": version.rules,
        "versions": versions,
        "matches": matches.iter().map(|m| &m.id).collect::<Vec<_>>(),
    })))
}

/// A game's statistics (`crate::stats`), of the version asked for or the latest.
async fn game_stats(
    State(gm): State<AppState>,
    Path(key): Path<String>,
    params: Params,
) -> ApiResult<Json<crate::stats::GameStats>> {
    let version = number(&params, "version")?;
    Ok(Json(crate::stats::game_of(&gm.db, &key, version).await?))
}

/// A registered player's statistics (`crate::stats`).
async fn player_stats(
    State(gm): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<crate::stats::PlayerStats>> {
    let p = gm.db.player(&name).await?;
    Ok(Json(crate::stats::player(&gm.db, p.id).await?))
}

/// Who asks, by the bearer token or the page session: `None` for anyone. A bearer token the
/// server does not know is refused (401, and counted with the wrong tokens), rather than read
/// as anyone: what it gets back would tell a good token from a bad one.
async fn who_asks(gm: &AppState, headers: &HeaderMap) -> Result<Option<crate::auth::Who>, Error> {
    if let Some(token) = bearer_token(headers) {
        return match gm.auth.token(&gm.db, token).await? {
            Some(who) => Ok(Some(who)),
            None => Err(Error::Unauthorized(
                "the token is not one this server knows".into(),
            )),
        };
    }
    Ok(gm.auth.session(headers).map(|(who, _)| who))
}

/// A player as JSON for `who`: what its last INFO said (or how it failed) only for its owner
/// and the admin; anyone else gets its status, the class of the answer.
fn player_value(p: &crate::db::Player, who: Option<&crate::auth::Who>) -> Value {
    let mut value = json!(p);
    if !who.is_some_and(|w| w.may_see_detail(p.id))
        && let Some(fields) = value.as_object_mut()
    {
        fields.remove("detail");
    }
    value
}

async fn list_players(State(gm): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let who = who_asks(&gm, &headers).await?;
    let players = gm.db.players().await?;
    Ok(Json(Value::Array(
        players
            .iter()
            .map(|p| player_value(p, who.as_ref()))
            .collect(),
    )))
}

async fn player(
    State(gm): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let who = who_asks(&gm, &headers).await?;
    let p = gm.db.player(&name).await?;
    let matches = gm
        .db
        .matches(MatchFilter {
            player: Some(p.name.clone()),
            limit: 1000,
            ..MatchFilter::default()
        })
        .await?;
    let ratings = crate::tournament::ratings(&gm.db).await?;
    let mut value = player_value(&p, who.as_ref());
    value["matches"] = json!(matches);
    value["rating"] = json!(ratings.overall(&p.name));
    value["ratings"] = json!(ratings.player(&p.name));
    Ok(Json(value))
}

#[derive(Deserialize)]
struct NewPlayer {
    name: String,
    url: String,
}

/// Registers a player (admin): returns it with its owner's token, once.
pub async fn register(
    gm: &AppState,
    name: &str,
    url: &str,
) -> Result<(crate::db::Player, String), Error> {
    players::check_name(name)?;
    let url = players::check_url(url)?;
    let token = crate::auth::new_token();
    let player = gm
        .db
        .add_player(name.to_string(), url, crate::auth::hash(&token))
        .await?;
    gm.ping_now.notify_one();
    Ok((player, token))
}

async fn add_player(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Body(body): Body<NewPlayer>,
) -> ApiResult<Response> {
    admin_only(&who)?;
    let (player, token) = register(&gm, &body.name, &body.url).await?;
    let mut value = json!(player);
    value["token"] = json!(token);
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

/// The registered player `name`, if `who` may edit it.
pub async fn editable(gm: &AppState, who: &Who, name: &str) -> Result<crate::db::Player, Error> {
    let p = gm.db.player(name).await?;
    if p.removed.is_some() {
        return Err(Error::NotFound(format!(
            "the player `{}` was removed",
            p.name
        )));
    }
    if !who.may_edit(p.id) {
        return Err(Error::Forbidden(format!(
            "only the admin or the owner of `{}` may change it",
            p.name
        )));
    }
    Ok(p)
}

#[derive(Deserialize)]
struct PlayerEdit {
    url: String,
}

async fn edit_player(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Path(name): Path<String>,
    Body(body): Body<PlayerEdit>,
) -> ApiResult<Json<Value>> {
    let p = editable(&gm, &who, &name).await?;
    let url = players::check_url(&body.url)?;
    gm.db.set_player_url(p.id, url).await?;
    gm.ping_now.notify_one();
    Ok(Json(json!(gm.db.player(&p.name).await?)))
}

async fn delete_player(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    let p = editable(&gm, &who, &name).await?;
    gm.db.remove_player(p.id).await?;
    gm.auth.forget_owner(p.id);
    Ok(StatusCode::NO_CONTENT)
}

/// The filter of a match list from query parameters.
pub fn filter(
    params: &std::collections::HashMap<String, String>,
    limit: i64,
) -> Result<MatchFilter, Error> {
    let text = |name: &str| params.get(name).filter(|v| !v.is_empty()).cloned();
    let status = text("status");
    if let Some(s) = &status
        && !["live", "finished", "aborted", "unfinished"].contains(&s.as_str())
    {
        return Err(Error::BadRequest(format!(
            "`status` is one of live, finished, aborted and unfinished, not `{s}`"
        )));
    }
    let limit = match number::<i64>(params, "limit")? {
        None => limit,
        Some(n @ 1..=1000) => n,
        Some(n) => {
            return Err(Error::BadRequest(format!(
                "`limit` is from 1 to 1000, not `{n}`"
            )));
        }
    };
    let offset = match number::<i64>(params, "offset")? {
        None => 0,
        Some(n) if n >= 0 => n,
        Some(n) => {
            return Err(Error::BadRequest(format!(
                "`offset` is 0 or more, not `{n}`"
            )));
        }
    };
    Ok(MatchFilter {
        status,
        game: text("game"),
        player: text("player"),
        limit,
        offset,
    })
}

async fn list_matches(State(gm): State<AppState>, params: Params) -> ApiResult<Json<Value>> {
    let filter = filter(&params, 100)?;
    Ok(Json(json!(gm.db.matches(filter).await?)))
}

async fn create_match(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Body(body): Body<MatchRequest>,
) -> ApiResult<Response> {
    admin_only(&who)?;
    let created = live::create(&gm, body).await?;
    Ok((StatusCode::CREATED, Json(json!(created))).into_response())
}

/// A tournament's id from the path.
pub fn tournament_id(text: &str) -> Result<i64, Error> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "`{}` is not a tournament's id (a positive number)",
                text.chars().take(50).collect::<String>()
            ))
        })
}

async fn list_tournaments(State(gm): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(json!(crate::tournament::tournaments(&gm.db).await?)))
}

async fn create_tournament(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Body(body): Body<crate::tournament::TournamentRequest>,
) -> ApiResult<Response> {
    admin_only(&who)?;
    let made = crate::tournament::create(&gm, body).await?;
    Ok((StatusCode::CREATED, Json(json!(made))).into_response())
}

/// A tournament, its standings and its scheduled matches.
async fn tournament_json(
    State(gm): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let id = tournament_id(&id)?;
    let t = crate::tournament::tournament(&gm.db, id).await?;
    let standings = crate::tournament::standings(&gm.db, id).await?;
    let matches = crate::tournament::scheduled_matches(&gm.db, id).await?;
    let mut value = json!(t);
    value["standings"] = json!(standings);
    value["matches"] = json!(matches);
    Ok(Json(value))
}

async fn tournament_action(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    admin_only(&who)?;
    let id = tournament_id(&id)?;
    Ok(Json(json!(
        crate::tournament::set_status(&gm, id, &action).await?
    )))
}

/// Ratings from every finished match: overall, or of one game (`?game=KEY`).
async fn leaderboard(State(gm): State<AppState>, params: Params) -> ApiResult<Json<Value>> {
    let game = params.get("game").filter(|g| !g.is_empty()).cloned();
    let ratings = crate::tournament::ratings(&gm.db).await?;
    Ok(Json(json!({
        "game": game,
        "ratings": ratings.leaderboard(game.as_deref()),
    })))
}

/// The record of a match, from the live copy or the database, and its status.
pub async fn record(
    gm: &AppState,
    id: &str,
) -> Result<(ggp_match::MatchRecord, &'static str), Error> {
    if let Some(live) = live::get(gm, id)
        && let Some(record) = live.record()
    {
        let status = if record.is_completed {
            "finished"
        } else if record.is_aborted {
            "aborted"
        } else {
            "live"
        };
        return Ok((record, status));
    }
    let record = gm.db.record(id).await?;
    // A served match not over is played by a server that is there (this one or another):
    // the matches of servers that are gone are aborted.
    let status = match record.status() {
        "unfinished" if live::get(gm, id).is_some() => "live",
        "unfinished" if gm.db.served(id).await?.is_some() => "live",
        s => s,
    };
    Ok((record, status))
}

/// [`record`], or for a match created and not recorded yet (its players being started) what
/// the live match says: its roles, players and clocks, no steps.
pub async fn record_or_starting(
    gm: &AppState,
    id: &str,
) -> Result<(ggp_match::MatchRecord, &'static str), Error> {
    match record(gm, id).await {
        Err(Error::NotFound(m)) => match live::get(gm, id) {
            Some(l) if !l.ended() => Ok((l.provisional_record(), "live")),
            _ => match gm.db.served(id).await?.and_then(|s| s.failure) {
                // Created, but it could not start (the rules failed, say): nothing recorded.
                Some(failure) => Err(Error::Conflict(format!(
                    "the match `{id}` could not start: {failure}"
                ))),
                None => Err(Error::NotFound(m)),
            },
        },
        found => found,
    }
}

/// Who asks to see match `id`: the holder of one of its seats' tokens, or the admin (by
/// the bearer token, or a page session), or anyone. A bearer token the server does not know
/// is refused (401).
pub async fn asker(gm: &AppState, id: &str, headers: &HeaderMap) -> Result<Asker, Error> {
    if let Some(token) = bearer_token(headers) {
        if let Some(seat) = live::seat_of(gm, id, token).await? {
            return Ok(Asker::Seat(seat));
        }
        return match gm.auth.token(&gm.db, token).await? {
            Some(crate::auth::Who::Admin) => Ok(Asker::Admin),
            Some(_) => Ok(Asker::Anyone),
            None => Err(Error::Unauthorized(
                "the token is not one this server knows, nor a seat of this match".into(),
            )),
        };
    }
    Ok(match gm.auth.session(headers) {
        Some((crate::auth::Who::Admin, _)) => Asker::Admin,
        _ => Asker::Anyone,
    })
}

/// Whether a match is GDL-II (it has percepts) and whether what its roles see is secret now
/// (it is being played).
pub fn secrecy(gm: &AppState, id: &str, record: &ggp_match::MatchRecord) -> (bool, bool) {
    match live::get(gm, id) {
        Some(l) => (l.gdl2 || !record.percepts.is_empty(), l.secret()),
        // Not played here: a GDL-II match not over (another server plays it) is as secret.
        None => {
            let gdl2 = !record.percepts.is_empty();
            (gdl2, gdl2 && !record.is_completed && !record.is_aborted)
        }
    }
}

/// A role named by its index or its name (without regard to case).
pub fn role_index(roles: &[String], text: &str) -> Result<usize, Error> {
    if let Ok(k) = text.trim().parse::<usize>() {
        return Ok(k);
    }
    roles
        .iter()
        .position(|r| r.eq_ignore_ascii_case(text.trim()))
        .ok_or_else(|| {
            Error::NotFound(format!(
                "`{}` is not a role of the match ({})",
                text.chars().take(100).collect::<String>(),
                roles.join(", ")
            ))
        })
}

/// What of a match's record is hidden while a GDL-II match is played, from all but the admin.
pub const SECRET_FIELDS: [&str; 4] = ["states", "moves", "errors", "percepts"];

async fn match_json(
    State(gm): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let (record, status) = record_or_starting(&gm, &id).await?;
    let asker = asker(&gm, &id, &headers).await?;
    let (gdl2, secret) = secrecy(&gm, &id, &record);
    let sight = live::sight(gdl2, secret, asker, None, &record.game_role_names)?;
    let steps = record.moves.len();
    let mut value = serde_json::to_value(&record)
        .map_err(|e| Error::Internal(format!("the record does not serialise: {e}")))?;
    value["status"] = json!(status);
    if sight != Sight::All
        && let Some(fields) = value.as_object_mut()
    {
        for field in SECRET_FIELDS {
            fields.remove(field);
        }
        value["steps"] = json!(steps);
        value["hidden"] = json!(
            "a GDL-II match being played: its states, moves, errors and percepts are shown when it is over (to the admin now); a seat's token shows its role's view at /api/matches/{id}/views/{role}"
        );
    }
    Ok(Json(value))
}

/// A role's view of a GDL-II match: what it saw at each step, its own moves and errors, and
/// its turn (its legal moves) when one of its seat's moves is awaited.
async fn view(
    State(gm): State<AppState>,
    Path((id, role)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let (record, status) = record_or_starting(&gm, &id).await?;
    let roles = &record.game_role_names;
    let r = role_index(roles, &role)?;
    let asker = asker(&gm, &id, &headers).await?;
    let (gdl2, secret) = secrecy(&gm, &id, &record);
    if !gdl2 {
        return Err(Error::BadRequest(format!(
            "`{id}` is a GDL match: every role is told every joint move, so a role's view is the whole match (GET /api/matches/{id})"
        ))
        .into());
    }
    let Sight::Role(r) = live::sight(gdl2, secret, asker, Some(r), roles)? else {
        return Err(Error::Internal("a role's view is a role's".into()).into());
    };
    Ok(Json(role_view(&gm, &id, &record, status, r)))
}

/// The JSON of role `r`'s view of a match.
pub fn role_view(
    gm: &AppState,
    id: &str,
    record: &ggp_match::MatchRecord,
    status: &str,
    r: usize,
) -> Value {
    let steps: Vec<Value> = (0..record.moves.len())
        .map(|k| {
            json!({
                "step": k + 1,
                "move": record.moves[k].get(r),
                "error": record.errors.get(k).and_then(|e| e.get(r)),
                "percepts": record.percepts.get(k).and_then(|p| p.get(r)).cloned().unwrap_or_default(),
            })
        })
        .collect();
    let turn = live::get(gm, id).and_then(|l| l.turn_of(r));
    json!({
        "id": id,
        "role": record.game_role_names[r],
        "seat": r,
        "player": record.player_names_from_host.get(r),
        "status": status,
        "roles": record.game_role_names,
        "startClock": record.start_clock,
        "playClock": record.play_clock,
        "steps": steps,
        "goal": if record.is_completed { json!(record.goal_values.get(r)) } else { json!(null) },
        "turn": turn,
    })
}

async fn events(
    State(gm): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    params: Params,
) -> ApiResult<Response> {
    let resume: Option<usize> = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let from = match resume {
        Some(n) => n,
        None => number::<usize>(&params, "from")?.unwrap_or(0),
    };
    let html = params.get("html").is_some_and(|v| v == "1" || v == "true");
    let asker = asker(&gm, &id, &headers).await?;
    let (roles, gdl2, secret) = match record(&gm, &id).await {
        Ok((record, _)) => {
            let (gdl2, secret) = secrecy(&gm, &id, &record);
            (record.game_role_names, gdl2, secret)
        }
        // Created, not recorded yet: what the live match says.
        Err(Error::NotFound(m)) => match live::get(&gm, &id) {
            Some(l) => (l.roles.clone(), l.gdl2, l.secret()),
            None => return Err(Error::NotFound(m).into()),
        },
        Err(e) => return Err(e.into()),
    };
    let role = params
        .get("role")
        .filter(|r| !r.is_empty())
        .map(|r| role_index(&roles, r))
        .transpose()?;
    let sight = live::sight(gdl2, secret, asker, role, &roles)?;
    let stream = live::watch_match(&gm, &id, from, html, sight).await?;
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

#[derive(Deserialize)]
struct Move {
    #[serde(rename = "move")]
    mv: String,
    #[serde(default)]
    step: Option<usize>,
    /// The seat (its role's index), for the admin token.
    #[serde(default)]
    seat: Option<usize>,
}

/// A human seat's move, with the seat's token (or the admin token and `seat`).
pub async fn play(
    gm: &AppState,
    id: &str,
    token: Option<&str>,
    seat: Option<usize>,
    step: Option<usize>,
    mv: &str,
) -> Result<String, Error> {
    let token = token.ok_or_else(|| {
        Error::Unauthorized("a move needs the seat's token: `Authorization: Bearer <token>`".into())
    })?;
    let seat = match live::seat_of(gm, id, token).await? {
        Some(s) => s,
        None => match gm.auth.token(&gm.db, token).await? {
            Some(Who::Admin) => seat.ok_or_else(|| {
                Error::BadRequest("with the admin token, say which `seat` moves".into())
            })?,
            Some(Who::Owner { .. }) => {
                return Err(Error::Forbidden(
                    "this token is not a seat of this match".into(),
                ));
            }
            None => {
                return Err(Error::Unauthorized(
                    "the token is not a seat of this match".into(),
                ));
            }
        },
    };
    let Some(live) = live::get(gm, id) else {
        return Err(if gm.db.match_exists(id).await? {
            Error::Conflict(format!("the match `{id}` is not being played (it is over)"))
        } else {
            Error::NotFound(format!("there is no match `{id}`"))
        });
    };
    if seat >= live.seats.len() || live.seats[seat].kind != SeatKind::Human {
        return Err(Error::BadRequest(format!(
            "seat {seat} is not a human seat of this match"
        )));
    }
    live.submit(seat, step, mv)
}

async fn moves(
    State(gm): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Body(body): Body<Move>,
) -> ApiResult<Response> {
    let chosen = play(
        &gm,
        &id,
        bearer_token(&headers),
        body.seat,
        body.step,
        &body.mv,
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"move": chosen}))).into_response())
}

/// Stops a live match (admin); `?reason=` says why (500 characters at most).
async fn abort(
    State(gm): State<AppState>,
    Authed(who): Authed,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<StatusCode> {
    admin_only(&who)?;
    let reason = params
        .get("reason")
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.chars().take(500).collect::<String>())
        .unwrap_or_else(|| "aborted by the admin".into());
    stop(&gm, &id, reason).await?;
    Ok(StatusCode::ACCEPTED)
}

/// Stops a live match.
pub async fn stop(gm: &AppState, id: &str, reason: String) -> Result<(), Error> {
    match live::get(gm, id) {
        Some(live) if live.stop(reason) => Ok(()),
        _ => Err(Error::Conflict(format!(
            "the match `{id}` is not being played"
        ))),
    }
}

async fn server(State(gm): State<AppState>) -> ApiResult<Json<Value>> {
    let stats = gm.stats.get();
    Ok(Json(json!({
        "live": live::all(&gm).len(),
        "matchesFinished": stats.matches_finished,
        "steps": stats.steps,
        "managerMicros": stats.manager_micros,
        "managerMicrosPerStep": stats.manager_micros.checked_div(stats.steps),
    })))
}
