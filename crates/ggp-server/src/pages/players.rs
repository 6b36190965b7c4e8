//! Pages of players: the list, a player with its results, registration.

use std::collections::{BTreeMap, HashSet};

use maud::{Markup, html};

use super::tournaments::rating;
use super::{Nav, ago, csrf, game_url, page, player_url};
use crate::auth::Viewer;
use crate::db::{MatchRow, Player};
use crate::ratings::Ratings;
use crate::stats::PlayerStats;

/// A player's status, as a dot and words.
pub fn status(p: &Player) -> Markup {
    html! {
        span.dot.(p.status) {}
        " " (p.status)
        @if let Some(seen) = p.last_seen { span.muted { " · seen " (ago(seen)) } }
    }
}

pub fn list(viewer: &Viewer, players: &[Player]) -> Markup {
    page(
        "Players",
        viewer,
        Nav::Players,
        html! {
            div.title-row {
                h1 { "Players" }
                @if viewer.is_admin() { a.button.primary href="/players/new" { "Register a player" } }
            }
            p.muted {
                "Registered players are asked INFO now and then; their status says whether they answered. "
                "Built-in players are always available: " (ggp_play::StrategyKind::NAMES.join(", "))
                ", and a " em { "human" } " seat is played on the match page."
            }
            @if players.is_empty() {
                p.muted { "No player is registered." }
            } @else {
                table.list {
                    thead { tr { th { "Name" } th { "Status" } th { "Says it is" } th { "URL" } } }
                    tbody {
                        @for p in players {
                            tr {
                                td { a href=(player_url(&p.name)) { (p.name) } }
                                td { (status(p)) }
                                td { (p.info_name.as_deref().unwrap_or("")) }
                                td { code { (p.url) } }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// Results of a player per game: matches, finished, mean goal, wins (the highest goal, alone).
#[derive(Default)]
struct Tally {
    matches: usize,
    finished: usize,
    goals: u64,
    wins: usize,
    /// Finished matches the player failed in (see [`crate::ratings::failed`]).
    failed: usize,
}

/// A player's page; `ratings` (from every rated match) adds its rating overall and per game;
/// `failed` holds the ids of the matches it failed in (no answer to START, or errors on more
/// than half of its moves), which are not counted as won, whatever the goals say.
pub fn player(
    viewer: &Viewer,
    p: &Player,
    matches: &[MatchRow],
    token: Option<&str>,
    ratings: Option<&Ratings>,
    failed: &HashSet<String>,
    stats: Option<&PlayerStats>,
) -> Markup {
    let mut per_game: BTreeMap<&str, Tally> = BTreeMap::new();
    for m in matches {
        let t = per_game.entry(&m.game).or_default();
        t.matches += 1;
        let Some(seat) = m
            .players
            .iter()
            .position(|n| n.eq_ignore_ascii_case(&p.name))
        else {
            continue;
        };
        if m.status == "finished"
            && let Some(&goal) = m.goals.get(seat)
        {
            t.finished += 1;
            t.goals += u64::from(goal);
            if failed.contains(&m.id) {
                t.failed += 1;
            } else if m
                .goals
                .iter()
                .enumerate()
                .all(|(k, &g)| k == seat || g < goal)
            {
                t.wins += 1;
            }
        }
    }
    let may_edit = viewer.who.as_ref().is_some_and(|w| w.may_edit(p.id)) && p.removed.is_none();
    page(
        &p.name,
        viewer,
        Nav::Players,
        html! {
            h1 { (p.name) }
            @if let Some(token) = token {
                section.notice.ok {
                    p { strong { "Registered." } " The owner's token of " (p.name) " is shown only now; keep it: it lets its owner edit or remove the player." }
                    pre.token { (token) }
                }
            }
            @if p.removed.is_some() {
                p.notice { "This player was removed; its matches stay." }
            }
            dl.facts {
                dt { "Status" } dd { (status(p)) }
                @if let Some(detail) = p.detail.as_ref().filter(|_| viewer.who.as_ref().is_some_and(|w| w.may_see_detail(p.id))) {
                    dt { "Last answer" } dd { (detail) }
                }
                dt { "Says it is" } dd { (p.info_name.as_deref().unwrap_or("—")) }
                dt { "URL" } dd { code { (p.url) } }
                dt { "Registered" } dd { (super::time(p.created)) }
                @if let Some(ratings) = ratings {
                    dt { "Rating" }
                    dd {
                        @if let Some(r) = ratings.overall(&p.name) {
                            (rating(&r)) span.muted { " · Weng-Lin, as on the " a href="/leaderboard" { "leaderboard" } }
                        } @else {
                            span.muted { "not rated yet" }
                        }
                    }
                }
            }
            @if may_edit {
                details.card {
                    summary { "Edit or remove" }
                    form method="post" action=(format!("{}/edit", player_url(&p.name))) {
                        (csrf(viewer))
                        label for="url" { "URL" }
                        input #url name="url" value=(p.url) required;
                        button type="submit" { "Save" }
                    }
                    form method="post" action=(format!("{}/delete", player_url(&p.name))) {
                        (csrf(viewer))
                        button.danger type="submit" { "Remove " (p.name) }
                    }
                }
            }
            h2 { "Results per game" }
            @if per_game.is_empty() {
                p.muted { "No match yet." }
            } @else {
                table.list {
                    thead { tr { th { "Game" } th.num { "Matches" } th.num { "Finished" } th.num { "Mean goal" } th.num { "Won" } th.num title="No answer to START, or errors on more than half of its moves: not rated, and not won whatever the goals" { "Failed" } th.num { "Rating" } } }
                    tbody {
                        @for (game, t) in &per_game {
                            tr {
                                td { a href=(game_url(game)) { (game) } }
                                td.num { (t.matches) }
                                td.num { (t.finished) }
                                td.num { @if t.finished > 0 { (format!("{:.1}", t.goals as f64 / t.finished as f64)) } @else { "—" } }
                                td.num { (t.wins) }
                                td.num { (t.failed) }
                                td.num {
                                    @match ratings.and_then(|r| r.per_game(game, &p.name)) {
                                        Some(r) => (rating(&r)),
                                        None => "—",
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(stats) = stats { (super::stats::player_section(stats)) }
            h2 { "Matches" }
            @if matches.is_empty() {
                p.muted { "None yet." }
            } @else {
                (super::matches::table(matches, true))
            }
        },
    )
}

pub fn register(viewer: &Viewer, name: &str, url: &str, error: Option<&str>) -> Markup {
    page(
        "Register a player",
        viewer,
        Nav::Players,
        html! {
            h1 { "Register a player" }
            p {
                "A player is a program that speaks the GGP protocol over HTTP ("
                code { "ggp player --port 9147" } " is one). It is contacted only with the protocol: "
                "INFO now and then, and START, PLAY, STOP and ABORT in its matches. Registering returns "
                "the owner's token, once."
            }
            @if let Some(error) = error { p.error-message { (error) } }
            form.card.narrow method="post" action="/players" {
                (csrf(viewer))
                label for="name" { "Name" }
                input #name name="name" value=(name) required maxlength="64";
                label for="url" { "URL" }
                input #url name="url" value=(url) required placeholder="http://127.0.0.1:9147";
                button.primary type="submit" { "Register" }
            }
        },
    )
}
