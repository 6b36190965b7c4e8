//! The HTML interface: pages rendered on the server with maud (which escapes everything it is
//! given unless told otherwise, and is told otherwise only for markup it made itself), a
//! stylesheet and a few small ES modules from `assets/`.

pub mod chart;
pub mod games;
pub mod home;
pub mod matches;
pub mod players;
pub mod stats;
pub mod tournaments;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};

use crate::assets;
use crate::auth::{Viewer, Who};
use crate::board::Geometry;
use crate::error::Error;
use crate::term::{Term, parse_state};
use ggp_match::MatchRecord;

/// Which section of the site a page belongs to, for the navigation bar.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Home,
    Matches,
    Games,
    Players,
    Tournaments,
    Leaderboard,
    None,
}

/// A whole page.
pub fn page(title: &str, viewer: &Viewer, nav: Nav, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · ggp Gamemaster" }
                link rel="stylesheet" href=(assets::url("app.css"));
                link rel="icon" type="image/svg+xml" href=(assets::url("favicon.svg"));
                script type="module" src=(assets::url("app.js")) {}
            }
            body {
                header.top {
                    a.brand href="/" { span.logo { "ggp" } " Gamemaster" }
                    nav {
                        a.active[nav == Nav::Matches] href="/matches" { "Matches" }
                        a.active[nav == Nav::Games] href="/games" { "Games" }
                        a.active[nav == Nav::Players] href="/players" { "Players" }
                        a.active[nav == Nav::Tournaments] href="/tournaments" { "Tournaments" }
                        a.active[nav == Nav::Leaderboard] href="/leaderboard" { "Leaderboard" }
                    }
                    div.who {
                        @match &viewer.who {
                            Some(who) => {
                                span.badge { (who_label(who)) }
                                form.inline method="post" action="/logout" {
                                    (csrf(viewer))
                                    button.link type="submit" { "Log out" }
                                }
                            }
                            None => a href="/login" { "Log in" },
                        }
                    }
                }
                main { (body) }
                footer {
                    "ggp — the General Game Playing toolkit. "
                    a href="/api/matches" { "JSON API" }
                }
            }
        }
    }
}

fn who_label(who: &Who) -> String {
    match who {
        Who::Admin => "admin".into(),
        Who::Owner { name, .. } => format!("owner of {name}"),
    }
}

/// The hidden CSRF field of a form.
pub fn csrf(viewer: &Viewer) -> Markup {
    html! { input type="hidden" name="csrf" value=(viewer.csrf); }
}

/// A search box over the element with the id `list` (a list of choices, a table's body, a
/// select's options): as a person types, app.js hides its items whose text does not contain
/// it (a checked one stays).
pub fn filter_box(list: &str, what: &str) -> Markup {
    html! {
        input.filter type="search" data-filter=(list) placeholder=(what) aria-label=(what)
            autocomplete="off";
    }
}

/// "1 role", "3 roles".
pub fn role_count(n: usize) -> String {
    if n == 1 {
        "1 role".into()
    } else {
        format!("{n} roles")
    }
}

/// A path segment with everything but unreserved characters percent-encoded.
pub fn path_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn match_url(id: &str) -> String {
    format!("/matches/{}", path_part(id))
}

pub fn game_url(key: &str) -> String {
    format!("/games/{}", path_part(key))
}

pub fn player_url(name: &str) -> String {
    format!("/players/{}", path_part(name))
}

/// A time (milliseconds since the epoch), in UTC.
pub fn time(ms: i64) -> Markup {
    let text = ggp_match::utc_date(ms.max(0) as u64);
    html! { time datetime=(text.replace(' ', "T") + "Z") { (text) " UTC" } }
}

/// How long ago, in words.
pub fn ago(ms: i64) -> String {
    let secs = (crate::db::now_ms() - ms).max(0) / 1000;
    match secs {
        0..=59 => format!("{secs} s ago"),
        60..=3599 => format!("{} min ago", secs / 60),
        3600..=86_399 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

/// A status as a coloured label.
pub fn status_badge(status: &str) -> Markup {
    html! { span.status.(status) { (status) } }
}

/// The board geometry of a recorded match: the game's fluents and the match's states, and what
/// the game's rules (KIF) say of them.
pub fn geometry(hint: &[Term], rules: Option<&str>, record: &MatchRecord) -> Option<Geometry> {
    let states: Vec<Vec<Term>> = record.states.iter().map(|s| parse_state(s)).collect();
    Geometry::detect_with(hint.iter().chain(states.iter().flatten()), rules)
}

/// An [`Error`] answered as a page.
pub struct PageError(pub Error);

impl<E: Into<Error>> From<E> for PageError {
    fn from(e: E) -> PageError {
        PageError(e.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        let title = match status {
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::UNAUTHORIZED => "Log in first",
            StatusCode::FORBIDDEN => "Not allowed",
            s if s.is_server_error() => "Something went wrong",
            _ => "Cannot do that",
        };
        let body = html! {
            h1 { (title) }
            p.error-message { (self.0.message()) }
            @if status == StatusCode::UNAUTHORIZED {
                p { a.button href="/login" { "Log in" } }
            }
            @if let Error::Unprocessable { rendered, .. } = &self.0 {
                @for r in rendered { pre.diagnostic { (r) } }
            }
            p { a href="/" { "Back to the start page" } }
        };
        let mut response = (
            status,
            page(title, &Viewer::default(), Nav::None, body.clone()),
        )
            .into_response();
        crate::error::retry_later(&mut response);
        response.extensions_mut().insert(ErrorPage { title, body });
        response
    }
}

/// An error page's title and body, kept on its response: drawn first for nobody (the error
/// does not know who asked), then again with the header of the session that asked
/// (`web::with_session_header`), so that a logged-in person is not told to log in.
#[derive(Clone)]
pub struct ErrorPage {
    pub title: &'static str,
    pub body: Markup,
}

pub type PageResult = Result<Response, PageError>;

/// A redirect after a form (303: the browser follows with a GET).
pub fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

/// The login page.
pub fn login(viewer: &Viewer, error: Option<&str>) -> Markup {
    page(
        "Log in",
        viewer,
        Nav::None,
        html! {
            h1 { "Log in" }
            p {
                "Reading needs no login. To upload games, register players and create matches, "
                "log in with the " strong { "admin token" } " (given to " code { "ggp serve" }
                " with " code { "--admin-token" } " or " code { "GGP_ADMIN_TOKEN" }
                ", or printed by it at start). A player's " strong { "owner token" }
                " lets you edit or remove that player."
            }
            @if let Some(error) = error { p.error-message { (error) } }
            form.card.narrow method="post" action="/login" {
                label for="token" { "Token" }
                input #token type="password" name="token" autocomplete="current-password" required autofocus;
                button type="submit" { "Log in" }
            }
        },
    )
}
