//! The start page: what is being played, what was, who can play, and what.

use maud::{Markup, html};

use super::{Nav, game_url, match_url, page, player_url, status_badge};
use crate::auth::Viewer;
use crate::db::{GameSummary, MatchRow, Player};
use crate::live::Live;
use crate::tags::{Length, Tag};

/// The tags the dashboard offers to find games by.
const BROWSE: [Tag; 5] = [
    Tag::Roles(1),
    Tag::Simultaneous,
    Tag::Gdl2,
    Tag::Length(Length::Short),
    Tag::Fast,
];

pub fn home(
    viewer: &Viewer,
    live: &[std::sync::Arc<Live>],
    recent: &[MatchRow],
    players: &[Player],
    games: &[GameSummary],
) -> Markup {
    let admin = viewer.is_admin();
    page(
        "Gamemaster",
        viewer,
        Nav::Home,
        html! {
            section.hero {
                h1 { "Gamemaster" }
                p.lead {
                    "Games written in the Game Description Language, the players that play them, "
                    "and their matches: watch them live, step through them, or play one yourself."
                }
                @if admin {
                    p.actions {
                        a.button.primary href="/matches/new" { "New match" }
                        a.button href="/games/new" { "Upload a game" }
                        a.button href="/players/new" { "Register a player" }
                    }
                } @else if viewer.who.is_none() {
                    p.notice {
                        a href="/login" { "Log in" } " with the admin token that " code { "ggp serve" }
                        " printed to create matches, upload games and register players."
                    }
                }
            }
            div.grid {
                (now(live, recent))
                section.card #players {
                    h2 { a href="/players" { "Players" } }
                    p.muted { "Built in, always available: " (ggp_play::StrategyKind::NAMES.join(", ")) ", and " em { "human" } " (you, on the match page)." }
                    @if players.is_empty() {
                        p.muted { "No player is registered." }
                    } @else {
                        ul.players {
                            @for p in players {
                                li {
                                    span.dot.(p.status) title=(p.status) {}
                                    a href=(player_url(&p.name)) { (p.name) }
                                }
                            }
                        }
                    }
                }
                section.card #games {
                    h2 { a href="/games" { "Games" } }
                    @if games.is_empty() {
                        p.muted { "No game yet: upload one, or start the server with " code { "--games DIR" } "." }
                    } @else {
                        p.muted {
                            (games.len()) " game" @if games.len() != 1 { "s" }
                            @if games.iter().any(|g| g.featured) { ", the project's own first" } "."
                        }
                        ul.tags {
                            @for g in games.iter().take(40) {
                                li.featured[g.featured] { a href=(game_url(&g.key)) { (g.key) } }
                            }
                        }
                        p.browse {
                            "Find games that are "
                            @for (k, tag) in BROWSE.iter().enumerate() {
                                @if k > 0 { ", " }
                                a href=(format!("/games?tags={}", tag.slug())) title=(tag.meaning()) { (tag.to_string()) }
                            }
                            "."
                        }
                        @if games.len() > 40 {
                            p { a href="/games" { "All " (games.len()) " games" } }
                        }
                    }
                }
            }
            script type="module" src=(crate::assets::url("home.js")) {}
        },
    )
}

/// The dashboard's lists of what is played now and what was: its live matches and its recent
/// ones. Sent alone (`/dashboard/now`) to the page's script, which puts them in place every
/// few seconds, so that a match started after the page was opened shows without a reload.
pub fn now(live: &[std::sync::Arc<Live>], recent: &[MatchRow]) -> Markup {
    html! {
        section.card #live {
            h2 { "Live matches" }
            @if live.is_empty() {
                p.muted { "No match is being played now." }
            } @else {
                ul.matches {
                    @for m in live {
                        @let steps = m.record().map_or(0, |r| r.moves.len());
                        li {
                            a href=(match_url(&m.id)) {
                                strong { (m.game) } " · "
                                (m.seats.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" vs "))
                            }
                            " " span.muted { "step " (steps) }
                        }
                    }
                }
            }
        }
        section.card #recent {
            h2 { a href="/matches" { "Recent matches" } }
            @if recent.is_empty() {
                p.muted { "None yet." }
            } @else {
                ul.matches {
                    @for m in recent {
                        li {
                            a href=(match_url(&m.id)) { strong { (m.game) } " · " (versus(m)) }
                            " " (status_badge(&m.status))
                        }
                    }
                }
            }
        }
    }
}

/// `alice 100 vs random 0`, or `alice vs random` while unfinished.
pub fn versus(m: &MatchRow) -> String {
    m.players
        .iter()
        .enumerate()
        .map(|(k, p)| match m.goals.get(k) {
            Some(g) if m.status == "finished" => format!("{p} {g}"),
            _ => p.clone(),
        })
        .collect::<Vec<_>>()
        .join(" vs ")
}
