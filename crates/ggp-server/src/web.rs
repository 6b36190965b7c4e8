//! The handlers of the pages and their forms.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::Markup;

use crate::auth::{COOKIE, Viewer, same_origin};
use crate::db::MatchFilter;
use crate::error::Error;
use crate::live::{self, MatchRequest, Sight};
use crate::pages::{self, PageError, PageResult, see_other};
use crate::state::AppState;
use crate::{api, games};

use crate::extract::{PageParams as Params, PagePath as Path};

/// A form's fields, in order; a malformed form is a 400 page.
pub struct Fields(pub Vec<(String, String)>);

impl Fields {
    fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Form::<Vec<(String, String)>>::from_request(req, state).await {
            Ok(axum::Form(fields)) => Ok(Fields(fields)),
            Err(rejection) => Err(PageError(match rejection.status() {
                StatusCode::PAYLOAD_TOO_LARGE => Error::TooLarge(format!(
                    "the form is larger than {} bytes, the most the server accepts",
                    crate::state::MAX_BODY
                )),
                _ => Error::BadRequest(rejection.body_text()),
            })),
        }
    }
}

fn ok(markup: Markup) -> PageResult {
    Ok(markup.into_response())
}

fn with_status(status: StatusCode, markup: Markup) -> PageResult {
    Ok((status, markup).into_response())
}

pub async fn not_found(viewer: Viewer) -> Response {
    let _ = viewer;
    PageError(Error::NotFound("there is no such page".into())).into_response()
}

/// `GET /static/{name}`: an embedded asset, cached for a week (its URL changes with it).
pub async fn asset(Path(name): Path<String>) -> Response {
    match crate::assets::file(&name) {
        Some((kind, body)) => (
            [
                (header::CONTENT_TYPE, kind),
                (header::CACHE_CONTROL, "public, max-age=604800, immutable"),
            ],
            body,
        )
            .into_response(),
        None => PageError(Error::NotFound("there is no such file".into())).into_response(),
    }
}

pub async fn home(State(gm): State<AppState>, viewer: Viewer) -> PageResult {
    let live = live::all(&gm);
    let recent = recent_matches(&gm).await?;
    let players = gm.db.players().await?;
    let games = gm.db.games().await?;
    ok(pages::home::home(&viewer, &live, &recent, &players, &games))
}

/// The dashboard's live and recent matches alone, for its script.
pub async fn dashboard_now(State(gm): State<AppState>) -> PageResult {
    let live = live::all(&gm);
    let recent = recent_matches(&gm).await?;
    ok(pages::home::now(&live, &recent))
}

/// The last 8 matches that are not live.
async fn recent_matches(gm: &AppState) -> Result<Vec<crate::db::MatchRow>, PageError> {
    Ok(gm
        .db
        .matches(MatchFilter {
            limit: 10,
            ..MatchFilter::default()
        })
        .await?
        .into_iter()
        .filter(|m| m.status != "live")
        .take(8)
        .collect())
}

// ----- login -----

pub async fn login_page(viewer: Viewer) -> PageResult {
    ok(pages::login(&viewer, None))
}

pub async fn login(State(gm): State<AppState>, headers: HeaderMap, form: Fields) -> PageResult {
    if !same_origin(&headers) {
        return Err(Error::Forbidden("this form was sent from another site".into()).into());
    }
    match gm.auth.token(&gm.db, form.get("token").trim()).await? {
        Some(who) => {
            let session = gm.auth.login(who);
            let cookie =
                format!("{COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict; Max-Age=604800");
            Ok(([(header::SET_COOKIE, cookie)], see_other("/")).into_response())
        }
        None => with_status(
            StatusCode::UNAUTHORIZED,
            pages::login(
                &Viewer::default(),
                Some("That token is not one this server knows."),
            ),
        ),
    }
}

pub async fn logout(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Fields,
) -> PageResult {
    viewer.check_form(&headers, form.get("csrf"))?;
    gm.auth.logout(&headers);
    let cookie = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    Ok(([(header::SET_COOKIE, cookie)], see_other("/")).into_response())
}

fn admin_page(viewer: &Viewer) -> Result<(), PageError> {
    match &viewer.who {
        None => Err(Error::Unauthorized("log in with the admin token first".into()).into()),
        Some(w) if !w.is_admin() => Err(Error::Forbidden(
            "only the admin may do this; you are logged in with a player's owner token".into(),
        )
        .into()),
        Some(_) => Ok(()),
    }
}

// ----- games -----

pub async fn games(State(gm): State<AppState>, viewer: Viewer, params: Params) -> PageResult {
    let search =
        crate::tags::Search::from_query(&params).map_err(|e| Error::BadRequest(e.to_string()))?;
    ok(pages::games::list(&viewer, &gm.db.games().await?, &search))
}

pub async fn upload_page(viewer: Viewer, params: Params) -> PageResult {
    admin_page(&viewer)?;
    let key = params.get("key").map_or("", String::as_str);
    ok(pages::games::upload(&viewer, key, "", None))
}

/// A multipart form that could not be read: too large (413, whichever part of it passed the
/// limit), or malformed (400).
fn form_error(e: &axum::extract::multipart::MultipartError) -> PageError {
    PageError(if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        Error::TooLarge(format!(
            "the form is larger than {} bytes; rules may have at most {} bytes",
            crate::state::MAX_BODY,
            games::MAX_RULES
        ))
    } else {
        Error::BadRequest(format!("the form is malformed: {}", e.body_text()))
    })
}

pub async fn upload(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    mut form: Multipart,
) -> PageResult {
    let (mut csrf, mut key, mut text, mut file, mut file_name) = (
        String::new(),
        String::new(),
        String::new(),
        Vec::new(),
        None,
    );
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(form_error(&e)),
        };
        let name = field.name().unwrap_or("").to_string();
        let upload_name = field.file_name().map(str::to_string);
        let bytes = field.bytes().await.map_err(|e| form_error(&e))?;
        match name.as_str() {
            "csrf" => csrf = String::from_utf8_lossy(&bytes).into_owned(),
            "key" => key = String::from_utf8_lossy(&bytes).trim().to_string(),
            "rules" => text = String::from_utf8_lossy(&bytes).into_owned(),
            "file" if !bytes.is_empty() => {
                file = bytes.to_vec();
                file_name = upload_name;
            }
            _ => {}
        }
    }
    viewer.check_admin_form(&headers, &csrf)?;
    let (text, decoding) = if file.is_empty() {
        (text.replace("\r\n", "\n"), Vec::new())
    } else {
        gdl_syntax::cst::decode(&file)
    };
    if key.is_empty() {
        key = file_name
            .as_deref()
            .map(games::key_from_file_name)
            .unwrap_or_default();
    }
    if key.is_empty() {
        return with_status(
            StatusCode::BAD_REQUEST,
            pages::games::upload(
                &viewer,
                &key,
                &text,
                Some(("a game needs a key (or a file, whose name gives it)", &[])),
            ),
        );
    }
    if text.trim().is_empty() {
        return with_status(
            StatusCode::BAD_REQUEST,
            pages::games::upload(&viewer, &key, &text, Some(("there are no rules", &[]))),
        );
    }
    let shown = if text.len() <= games::MAX_RULES {
        text.clone()
    } else {
        String::new()
    };
    match games::add(&gm.db, &key, text, decoding, "upload".into()).await {
        Ok((added, _)) => {
            if added.new {
                gm.analyse(added.id);
            }
            Ok(see_other(&format!(
                "{}?version={}&added=1",
                pages::game_url(&key),
                added.version
            )))
        }
        Err(Error::Unprocessable {
            message, rendered, ..
        }) => with_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            pages::games::upload(&viewer, &key, &shown, Some((&message, &rendered))),
        ),
        Err(e @ (Error::BadRequest(_) | Error::TooLarge(_))) => with_status(
            e.status(),
            pages::games::upload(&viewer, &key, &shown, Some((e.message(), &[]))),
        ),
        Err(e) => Err(e.into()),
    }
}

fn version_param(params: &Params) -> Result<Option<i64>, Error> {
    params
        .get("version")
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse()
                .map_err(|_| Error::BadRequest(format!("`{v}` is not a version number")))
        })
        .transpose()
}

pub async fn game(
    State(gm): State<AppState>,
    viewer: Viewer,
    Path(key): Path<String>,
    params: Params,
) -> PageResult {
    let version = gm.db.version(&key, version_param(&params)?).await?;
    let versions = gm.db.versions(&key).await?;
    let matches = gm
        .db
        .matches(MatchFilter {
            game: Some(version.key.clone()),
            limit: 20,
            ..MatchFilter::default()
        })
        .await?;
    let added = params.contains_key("added");
    ok(pages::games::game(
        &viewer, &version, &versions, &matches, added,
    ))
}

/// A game's statistics, over the versions with the roles of the version asked for (the
/// latest by default).
pub async fn game_stats(
    State(gm): State<AppState>,
    viewer: Viewer,
    Path(key): Path<String>,
    params: Params,
) -> PageResult {
    let stats = crate::stats::game_of(&gm.db, &key, version_param(&params)?).await?;
    ok(pages::stats::game(&viewer, &stats))
}

pub async fn rules(
    State(gm): State<AppState>,
    Path(key): Path<String>,
    params: Params,
) -> PageResult {
    let version = gm.db.version(&key, version_param(&params)?).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        version.rules.unwrap_or_default(),
    )
        .into_response())
}

// ----- players -----

pub async fn players(State(gm): State<AppState>, viewer: Viewer) -> PageResult {
    ok(pages::players::list(&viewer, &gm.db.players().await?))
}

pub async fn register_page(viewer: Viewer) -> PageResult {
    admin_page(&viewer)?;
    ok(pages::players::register(&viewer, "", "", None))
}

pub async fn register(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Fields,
) -> PageResult {
    viewer.check_admin_form(&headers, form.get("csrf"))?;
    let (name, url) = (form.get("name").trim(), form.get("url").trim());
    match api::register(&gm, name, url).await {
        Ok((player, token)) => ok(pages::players::player(
            &viewer,
            &player,
            &[],
            Some(&token),
            None,
            &Default::default(),
            None,
        )),
        Err(e @ (Error::BadRequest(_) | Error::Conflict(_))) => with_status(
            e.status(),
            pages::players::register(&viewer, name, url, Some(e.message())),
        ),
        Err(e) => Err(e.into()),
    }
}

pub async fn player(
    State(gm): State<AppState>,
    viewer: Viewer,
    Path(name): Path<String>,
) -> PageResult {
    let p = gm.db.player(&name).await?;
    let matches = gm
        .db
        .matches(MatchFilter {
            player: Some(p.name.clone()),
            limit: 200,
            ..MatchFilter::default()
        })
        .await?;
    let played = crate::tournament::played(&gm.db, None).await?;
    let ratings = crate::tournament::rate(&played);
    let failed = played
        .iter()
        .filter(|m| m.failed_by(&p.name))
        .map(|m| m.match_id.clone())
        .collect();
    let stats = crate::stats::player(&gm.db, p.id).await?;
    ok(pages::players::player(
        &viewer,
        &p,
        &matches,
        None,
        Some(&ratings),
        &failed,
        Some(&stats),
    ))
}

pub async fn edit_player(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    Path(name): Path<String>,
    form: Fields,
) -> PageResult {
    let who = viewer.check_form(&headers, form.get("csrf"))?;
    let p = api::editable(&gm, &who, &name).await?;
    let url = crate::players::check_url(form.get("url").trim())?;
    gm.db.set_player_url(p.id, url).await?;
    gm.ping_now.notify_one();
    Ok(see_other(&pages::player_url(&p.name)))
}

pub async fn delete_player(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    Path(name): Path<String>,
    form: Fields,
) -> PageResult {
    let who = viewer.check_form(&headers, form.get("csrf"))?;
    let p = api::editable(&gm, &who, &name).await?;
    gm.db.remove_player(p.id).await?;
    gm.auth.forget_owner(p.id);
    Ok(see_other("/players"))
}

// ----- matches -----

pub async fn matches(State(gm): State<AppState>, viewer: Viewer, params: Params) -> PageResult {
    let mut filter = api::filter(&params, 50)?;
    filter.limit += 1;
    let mut rows = gm.db.matches(filter.clone()).await?;
    filter.limit -= 1;
    let more = rows.len() as i64 > filter.limit;
    rows.truncate(filter.limit as usize);
    ok(pages::matches::list(&viewer, &rows, &filter, more))
}

pub async fn new_match(State(gm): State<AppState>, viewer: Viewer, params: Params) -> PageResult {
    admin_page(&viewer)?;
    let games = gm.db.games().await?;
    let chosen = match params.get("game").filter(|g| !g.is_empty()) {
        Some(key) => Some(gm.db.version(key, version_param(&params)?).await?),
        None => None,
    };
    let players = gm.db.players().await?;
    ok(pages::matches::new_match(
        &viewer,
        &games,
        chosen.as_ref(),
        &players,
        None,
    ))
}

/// A form's whole number: `None` when the field is empty.
fn form_number(form: &Fields, name: &str) -> Result<Option<u64>, Error> {
    let v = form.get(name).trim();
    if v.is_empty() {
        return Ok(None);
    }
    v.parse()
        .map(Some)
        .map_err(|_| Error::BadRequest(format!("the {name} must be a whole number, not `{v}`")))
}

pub async fn create_match(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Fields,
) -> PageResult {
    viewer.check_admin_form(&headers, form.get("csrf"))?;
    let number = |name: &str| form_number(&form, name);
    let players: Vec<String> = (0..)
        .map_while(|k| {
            form.0
                .iter()
                .find(|(n, _)| *n == format!("player{k}"))
                .map(|(_, v)| v.clone())
        })
        .collect();
    let request = MatchRequest {
        game: form.get("game").to_string(),
        version: number("version")?.map(|v| v as i64),
        players,
        startclock: number("startclock")?.unwrap_or(10),
        playclock: number("playclock")?.unwrap_or(10),
        seed: number("seed")?,
        delay: number("delay")?.unwrap_or(0),
        scheduled: None,
    };
    let created = match live::create(&gm, request.clone()).await {
        Ok(c) => c,
        Err(e @ (Error::BadRequest(_) | Error::Conflict(_) | Error::Unavailable(_))) => {
            let games = gm.db.games().await?;
            let chosen = gm.db.version(&request.game, request.version).await.ok();
            let players = gm.db.players().await?;
            return with_status(
                e.status(),
                pages::matches::new_match(
                    &viewer,
                    &games,
                    chosen.as_ref(),
                    &players,
                    Some(e.message()),
                ),
            );
        }
        Err(e) => return Err(e.into()),
    };
    match created.seats.as_slice() {
        [] => Ok(see_other(&pages::match_url(&created.id))),
        [one] => Ok(see_other(&one.url)),
        several => ok(pages::matches::created(&viewer, &created.id, several)),
    }
}

pub async fn match_page(
    State(gm): State<AppState>,
    viewer: Viewer,
    Path(id): Path<String>,
    params: Params,
) -> PageResult {
    let served = gm.db.served(&id).await?;
    let (record, status) = match api::record(&gm, &id).await {
        Ok(found) => found,
        Err(Error::NotFound(_)) if live::get(&gm, &id).is_some() => {
            // Created, not recorded yet: the page waits for its first events.
            return ok(pages::matches::starting(&viewer, &id));
        }
        Err(Error::NotFound(m)) => match served.as_ref().and_then(|s| s.failure.clone()) {
            Some(failure) => {
                return Err(Error::Conflict(format!(
                    "the match `{id}` could not start: {failure}"
                ))
                .into());
            }
            None => return Err(Error::NotFound(m).into()),
        },
        Err(e) => return Err(e.into()),
    };
    let version = match &served {
        Some(s) => gm.db.version(&s.game, Some(s.version)).await.ok(),
        None => None,
    };
    let hint = version.as_ref().map(games::hint).unwrap_or_default();
    let rules = version.as_ref().and_then(|v| v.rules.as_deref());
    let geometry = pages::geometry(&hint, rules, &record);
    let live = live::get(&gm, &id);
    let gdl3 = live.as_ref().is_some_and(|l| l.gdl3)
        || version
            .as_ref()
            .and_then(|v| v.traits.as_ref())
            .is_some_and(|t| t.gdl3);
    let clock = live.and_then(|l| l.clock());
    // Opened as a seat: a GDL-II match being played shows that role's view only, filled in by
    // the page's script with the seat's token (which the server never sees in the address).
    let seat = match params.get("seat").filter(|s| !s.is_empty()) {
        Some(s) => Some(api::role_index(&record.game_role_names, s)?),
        None => None,
    };
    if let Some(k) = seat
        && k >= record.game_role_names.len()
    {
        return Err(Error::NotFound(format!("the match has no seat {k}")).into());
    }
    let (gdl2, secret) = api::secrecy(&gm, &id, &record);
    let sight = match (secret, seat) {
        (false, _) => Sight::All,
        (true, Some(k)) => Sight::Role(k),
        (true, None) if viewer.is_admin() => Sight::All,
        (true, None) => Sight::Progress,
    };
    ok(pages::matches::match_page(
        &viewer,
        &pages::matches::View {
            record: &record,
            status,
            served: served.as_ref(),
            geometry: geometry.as_ref(),
            clock: clock.as_ref(),
            gdl2,
            gdl3,
            sight,
            seat,
        },
    ))
}

/// Refuses to show the whole of a GDL-II match being played to anyone but the admin.
async fn whole_match(
    gm: &AppState,
    id: &str,
    headers: &HeaderMap,
    record: &ggp_match::MatchRecord,
) -> Result<(), Error> {
    let (gdl2, secret) = api::secrecy(gm, id, record);
    if !secret {
        return Ok(());
    }
    let asker = api::asker(gm, id, headers).await?;
    match live::sight(gdl2, secret, asker, None, &record.game_role_names)? {
        Sight::All => Ok(()),
        _ => Err(Error::Forbidden(
            "a GDL-II match being played: its states and moves are secret until it ends (except to the admin)".into(),
        )),
    }
}

/// The ggp.org match JSON, as `ggp matches export` prints it.
pub async fn export(
    State(gm): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> PageResult {
    let (record, _) = api::record(&gm, &id).await?;
    whole_match(&gm, &id, &headers, &record).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"{}.json\"",
                    id.replace(
                        |c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-',
                        "_"
                    )
                ),
            ),
        ],
        record.to_json() + "\n",
    )
        .into_response())
}

/// The board of state `k` of a match, as a fragment (for the match page's slider).
pub async fn board(
    State(gm): State<AppState>,
    Path((id, k)): Path<(String, String)>,
    headers: HeaderMap,
) -> PageResult {
    let k: usize = k
        .parse()
        .map_err(|_| Error::BadRequest(format!("`{k}` is not a state number")))?;
    let (record, _) = api::record(&gm, &id).await?;
    whole_match(&gm, &id, &headers, &record).await?;
    let Some(state) = record.states.get(k) else {
        return Err(
            Error::NotFound(format!("the match has {} states", record.states.len())).into(),
        );
    };
    let version = match gm.db.served(&id).await? {
        Some(s) => gm.db.version(&s.game, Some(s.version)).await.ok(),
        None => None,
    };
    let hint = version.as_ref().map(games::hint).unwrap_or_default();
    let rules = version.as_ref().and_then(|v| v.rules.as_deref());
    let geometry = pages::geometry(&hint, rules, &record);
    // The cells the move into it changed are marked.
    let previous = k
        .checked_sub(1)
        .map(|p| crate::term::parse_state(&record.states[p]));
    let html = crate::board::render_step(
        &crate::term::parse_state(state),
        previous.as_deref(),
        geometry.as_ref(),
    );
    Ok(([(header::CACHE_CONTROL, "private, max-age=60")], html).into_response())
}

pub async fn abort(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    Path(id): Path<String>,
    form: Fields,
) -> PageResult {
    viewer.check_admin_form(&headers, form.get("csrf"))?;
    api::stop(&gm, &id, "aborted by the admin".into()).await?;
    // Wait a moment for the abort to be recorded, so the page shows it.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while live::get(&gm, &id).is_some() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(see_other(&pages::match_url(&id)))
}

// ----- tournaments -----

async fn tournaments_page(gm: &AppState, viewer: &Viewer, error: Option<&str>) -> PageResult {
    let list = crate::tournament::tournaments(&gm.db).await?;
    let games = gm.db.games().await?;
    let players = gm.db.players().await?;
    let page = pages::tournaments::list(viewer, &list, &games, &players, error);
    match error {
        Some(_) => with_status(StatusCode::BAD_REQUEST, page),
        None => ok(page),
    }
}

pub async fn tournaments(State(gm): State<AppState>, viewer: Viewer) -> PageResult {
    tournaments_page(&gm, &viewer, None).await
}

pub async fn create_tournament(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Fields,
) -> PageResult {
    viewer.check_admin_form(&headers, form.get("csrf"))?;
    let number = |name: &str| form_number(&form, name);
    let all = |name: &str| -> Vec<String> {
        form.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let request = (|| -> Result<crate::tournament::TournamentRequest, Error> {
        Ok(crate::tournament::TournamentRequest {
            name: Some(form.get("name").to_string()),
            format: Some(form.get("format").to_string()),
            games: all("game"),
            players: all("player"),
            rounds: number("rounds")?,
            startclock: number("startclock")?.unwrap_or(10),
            playclock: number("playclock")?.unwrap_or(5),
            seed: number("seed")?,
        })
    })();
    let made = match request {
        Ok(r) => crate::tournament::create(&gm, r).await,
        Err(e) => Err(e),
    };
    match made {
        Ok(t) => Ok(see_other(&pages::tournaments::tournament_url(t.id))),
        Err(e @ (Error::BadRequest(_) | Error::Conflict(_) | Error::NotFound(_))) => {
            tournaments_page(&gm, &viewer, Some(e.message())).await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn tournament(
    State(gm): State<AppState>,
    viewer: Viewer,
    Path(id): Path<String>,
) -> PageResult {
    let id = api::tournament_id(&id)?;
    let t = crate::tournament::tournament(&gm.db, id).await?;
    let standings = crate::tournament::standings(&gm.db, id).await?;
    let matches = crate::tournament::scheduled_matches(&gm.db, id).await?;
    ok(pages::tournaments::tournament(
        &viewer, &t, &standings, &matches,
    ))
}

/// The live part of a tournament's page, alone (for its script).
pub async fn tournament_live(State(gm): State<AppState>, Path(id): Path<String>) -> PageResult {
    let id = api::tournament_id(&id)?;
    let t = crate::tournament::tournament(&gm.db, id).await?;
    let standings = crate::tournament::standings(&gm.db, id).await?;
    let matches = crate::tournament::scheduled_matches(&gm.db, id).await?;
    ok(pages::tournaments::live_part(&t, &standings, &matches))
}

pub async fn tournament_action(
    State(gm): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
    form: Fields,
) -> PageResult {
    viewer.check_admin_form(&headers, form.get("csrf"))?;
    let id = api::tournament_id(&id)?;
    crate::tournament::set_status(&gm, id, &action).await?;
    Ok(see_other(&pages::tournaments::tournament_url(id)))
}

pub async fn leaderboard(State(gm): State<AppState>, viewer: Viewer, params: Params) -> PageResult {
    let game = params.get("game").filter(|g| !g.is_empty()).cloned();
    let games = gm.db.games().await?;
    if let Some(g) = &game
        && !games.iter().any(|x| &x.key == g)
    {
        return Err(Error::NotFound(format!(
            "there is no game `{}`",
            g.chars().take(100).collect::<String>()
        ))
        .into());
    }
    let ratings = crate::tournament::ratings(&gm.db).await?;
    let entries = ratings.leaderboard(game.as_deref());
    ok(pages::tournaments::leaderboard(
        &viewer,
        game.as_deref(),
        &games,
        &entries,
    ))
}

/// Error pages with the header of the session that asked (its name, "Log out"): a page's error
/// is drawn without knowing the viewer ([`pages::ErrorPage`]); here, where the request's
/// session cookie is known, it is drawn again for that viewer, status and headers kept. Only
/// the cookie is kept from the request: the session is looked up for an error page alone.
pub async fn with_session_header(
    State(gm): State<AppState>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let cookie = request.headers().get(header::COOKIE).cloned();
    let mut response = next.run(request).await;
    let Some(cookie) = cookie else {
        return response;
    };
    let Some(error) = response.extensions_mut().remove::<pages::ErrorPage>() else {
        return response;
    };
    let viewer = Viewer::of(&gm.auth, &HeaderMap::from_iter([(header::COOKIE, cookie)]));
    if viewer.who.is_none() {
        return response;
    }
    let (mut head, _) = response.into_parts();
    head.headers.remove(header::CONTENT_LENGTH);
    let page = pages::page(error.title, &viewer, pages::Nav::None, error.body);
    Response::from_parts(head, axum::body::Body::from(page.into_string()))
}
