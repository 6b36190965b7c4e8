//! Pages of tournaments (the list with the form to make one, a tournament's standings and
//! matches) and the leaderboard.

use maud::{Markup, html};

use super::{
    Nav, csrf, filter_box, game_url, match_url, page, player_url, role_count, status_badge,
};
use crate::auth::Viewer;
use crate::db::{GameSummary, Player};
use crate::ratings::{Entry, Rating, Standing};
use crate::tournament::{Format, ScheduledMatch, Tournament};

pub fn tournament_url(id: i64) -> String {
    format!("/tournaments/{id}")
}

/// A rating as people read it, the same on every page: the conservative rating μ − 3σ that
/// leaderboards sort by, then μ ± 3σ (the range the player's skill is almost surely in).
pub fn rating(r: &Rating) -> Markup {
    html! {
        span.rating title=(format!("μ {:.2}, σ {:.2}; the conservative rating is μ − 3σ", r.mu, r.sigma)) {
            strong { (format!("{:.1}", r.conservative())) }
            span.muted { (format!(" (μ {:.1} ± 3σ {:.1})", r.mu, 3.0 * r.sigma)) }
        }
    }
}

fn progress(t: &Tournament) -> Markup {
    let p = &t.progress;
    html! {
        @if t.format == Format::Continuous {
            (p.done) " played, " (p.playing) " being played"
        } @else {
            (p.done) " of " (p.done + p.playing + p.queued + p.failed) " played, "
            (p.playing) " being played"
            @if p.failed > 0 { ", " (p.failed) " could not be played" }
        }
    }
}

pub fn list(
    viewer: &Viewer,
    tournaments: &[Tournament],
    games: &[GameSummary],
    players: &[Player],
    error: Option<&str>,
) -> Markup {
    page(
        "Tournaments",
        viewer,
        Nav::Tournaments,
        html! {
            div.title-row {
                h1 { "Tournaments" }
                a.button href="/leaderboard" { "Leaderboard" }
            }
            p.muted {
                "A tournament plays its schedule on every server sharing this database ("
                code { "ggp serve" } ", " code { "ggp serve --worker" } "); its standings follow "
                "as matches finish."
            }
            @if let Some(error) = error { p.error-message { (error) } }
            @if tournaments.is_empty() {
                p.muted { "No tournament yet." }
            } @else {
                table.list {
                    thead { tr { th { "Tournament" } th { "Format" } th { "Games" } th.num { "Players" } th { "Progress" } th { "Status" } } }
                    tbody {
                        @for t in tournaments {
                            tr {
                                td { a href=(tournament_url(t.id)) { (t.name) } }
                                td { (t.format.name()) }
                                td { @for (k, g) in t.games.iter().enumerate() { @if k > 0 { ", " } (g.key) } }
                                td.num { (t.players.len()) }
                                td { (progress(t)) }
                                td { (status_badge(&t.status)) }
                            }
                        }
                    }
                }
            }
            @if viewer.is_admin() {
                details.card open[tournaments.is_empty()] {
                    summary { "Make a tournament" }
                    form #new-tournament method="post" action="/tournaments" {
                        (csrf(viewer))
                        label for="name" { "Name" }
                        input #name name="name" maxlength="100" placeholder="(the games and the day)";
                        label for="format" { "Format" }
                        select #format name="format" {
                            option value="roundrobin" { "Round robin: every seating of distinct players, each round" }
                            option value="random" { "Random pairings, each round" }
                            option value="continuous" { "Continuous: a match whenever enough players are idle" }
                        }
                        fieldset {
                            legend { "Games" }
                            (filter_box("tournament-games", "Filter the games"))
                            div.choices #tournament-games {
                                @for g in games {
                                    label.check { input type="checkbox" name="game" value=(g.key); span { (g.key) } span.muted { (role_count(g.latest.roles.len())) } }
                                }
                            }
                        }
                        fieldset {
                            legend { "Players" }
                            (filter_box("tournament-players", "Filter the players"))
                            div.choices #tournament-players {
                                @for name in ggp_play::StrategyKind::NAMES {
                                    label.check { input type="checkbox" name="player" value=(name); span { (name) } span.muted { "built in" } }
                                }
                                @for p in players {
                                    label.check { input type="checkbox" name="player" value=(p.name); span { (p.name) } }
                                }
                            }
                        }
                        div.row {
                            div { label for="rounds" { "Rounds" } input #rounds name="rounds" type="number" min="1" value="1"; }
                            div { label for="startclock" { "Start clock (s)" } input #startclock name="startclock" type="number" min="0" value="10"; }
                            div { label for="playclock" { "Play clock (s)" } input #playclock name="playclock" type="number" min="0" value="5"; }
                            div { label for="seed" { "Seed" } input #seed name="seed" type="number" min="0" placeholder="random"; }
                        }
                        button.primary type="submit" { "Start the tournament" }
                    }
                }
            }
        },
    )
}

/// The part of a tournament's page that follows it: progress, standings, results per game,
/// the matches. Sent alone to the page's script as matches finish.
pub fn live_part(t: &Tournament, standings: &[Standing], matches: &[ScheduledMatch]) -> Markup {
    let games: Vec<&str> = t.games.iter().map(|g| g.key.as_str()).collect();
    html! {
        div #live data-status=(t.status) data-done=(t.progress.done) {
            p { (status_badge(&t.status)) " " (progress(t)) }
            h2 { "Standings" }
            @if standings.is_empty() {
                p.muted { "No match has finished yet." }
            } @else {
                table.list #standings {
                    thead {
                        tr {
                            th.num { "#" } th { "Player" } th.num { "Played" } th.num { "Mean goal" }
                            th { "Rating" } th.num { "Failed" }
                        }
                    }
                    tbody {
                        @for (k, s) in standings.iter().enumerate() {
                            tr {
                                td.num { (k + 1) }
                                td { (player_link(&s.player)) }
                                td.num { (s.played) }
                                td.num { (format!("{:.1}", s.mean)) }
                                td { (rating(&s.rating)) }
                                td.num { (s.failed) }
                            }
                        }
                    }
                }
                @if games.len() > 1 {
                    h2 { "Mean goal per game" }
                    table.list {
                        thead { tr { th { "Player" } @for g in &games { th.num { (g) } } } }
                        tbody {
                            @for s in standings {
                                tr {
                                    td { (s.player) }
                                    @for g in &games {
                                        td.num {
                                            @match s.per_game.iter().find(|x| x.game == *g) {
                                                Some(x) => { (format!("{:.1}", x.mean)) span.muted { " (" (x.played) ")" } }
                                                None => "—",
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            h2 { "Matches" }
            table.list #scheduled {
                thead { tr { th.num { "Round" } th { "Game" } th { "Players" } th { "Status" } th { "Goals" } th { "Match" } } }
                tbody {
                    @for m in matches {
                        tr {
                            td.num { (m.round) }
                            td { a href=(game_url(&m.game)) { (m.game) } }
                            td { (m.players.join(", ")) }
                            td {
                                @match (m.status.as_str(), m.match_status.as_deref()) {
                                    ("claimed", _) => (status_badge("live")),
                                    ("done", Some(s)) => (status_badge(s)),
                                    ("failed", _) => { (status_badge("failed")) " " span.muted { (m.failure.as_deref().unwrap_or("")) } }
                                    (s, _) => (status_badge(s)),
                                }
                                @if m.attempts > 1 { span.muted { " (attempt " (m.attempts) ")" } }
                            }
                            td { (m.goals.iter().map(u8::to_string).collect::<Vec<_>>().join(", ")) }
                            td { @if let Some(id) = &m.match_id { a href=(match_url(id)) { (id) } } }
                        }
                    }
                }
            }
        }
    }
}

fn player_link(name: &str) -> Markup {
    html! {
        @if ggp_play::StrategyKind::parse(name).is_some() { (name) span.muted { " (built in)" } }
        @else { a href=(player_url(name)) { (name) } }
    }
}

pub fn tournament(
    viewer: &Viewer,
    t: &Tournament,
    standings: &[Standing],
    matches: &[ScheduledMatch],
) -> Markup {
    page(
        &t.name,
        viewer,
        Nav::Tournaments,
        html! {
            div.title-row {
                h1 { (t.name) }
                @if viewer.is_admin() {
                    div.actions #tournament-actions {
                        @for (action, label, when) in [("pause", "Pause", "running"), ("resume", "Resume", "paused")] {
                            @if t.status == when {
                                form.inline method="post" action=(format!("{}/{action}", tournament_url(t.id))) {
                                    (csrf(viewer))
                                    button type="submit" { (label) }
                                }
                            }
                        }
                        @if t.status != "finished" {
                            form.inline method="post" action=(format!("{}/end", tournament_url(t.id))) {
                                (csrf(viewer))
                                button.danger type="submit" { "End" }
                            }
                        }
                    }
                }
            }
            dl.facts {
                dt { "Format" } dd { (t.format.name()) @if t.format != Format::Continuous { ", " (t.rounds) " round" @if t.rounds != 1 { "s" } } }
                dt { "Games" } dd { @for (k, g) in t.games.iter().enumerate() { @if k > 0 { ", " } a href=(game_url(&g.key)) { (g.key) } " v" (g.version) } }
                dt { "Players" } dd { (t.players.join(", ")) }
                dt { "Clocks" } dd { "start " (t.start_clock) " s, play " (t.play_clock) " s" }
                dt { "Seed" } dd { (t.seed) }
                dt { "Made" } dd { (super::time(t.created)) }
            }
            (live_part(t, standings, matches))
            p.muted {
                "Ratings: Weng-Lin (" a href="/leaderboard" { "leaderboard" } "), from this tournament's "
                "matches only; matches in which a player failed are not rated."
            }
            script type="module" src=(crate::assets::url("tournament.js")) {}
        },
    )
}

pub fn leaderboard(
    viewer: &Viewer,
    game: Option<&str>,
    games: &[GameSummary],
    entries: &[Entry],
) -> Markup {
    page(
        "Leaderboard",
        viewer,
        Nav::Leaderboard,
        html! {
            h1 { "Leaderboard" @if let Some(g) = game { " · " (g) } }
            p.muted {
                "Weng-Lin ratings from every finished match, in the order they ended, per game and "
                "overall; sorted by the conservative rating μ − 3σ."
            }
            details.card {
                summary { "How the ratings work" }
                ul {
                    li { "Each player has a skill μ (25 at first) and an uncertainty σ (25/3 at first). "
                         "After a match, the players are ranked by their goals (equal goals tie), and "
                         "every pair's result moves μ by how surprising it was and shrinks σ." }
                    li { "A rating reads " strong { "μ − 3σ" } " (μ ± 3σ): the first figure, "
                         "conservative, is what the board sorts by, so that a player ranks high only "
                         "after enough matches; the skill is almost surely within ± 3σ of μ." }
                    li { "Not rated: matches in which a player failed (no answer to START, or errors "
                         "on more than half of its moves), self-play, puzzles (one role) and matches "
                         "with a person in a seat." }
                }
            }
            form.inline method="get" action="/leaderboard" data-autosubmit {
                label for="game" { "Game " }
                select #game name="game" {
                    option value="" selected[game.is_none()] { "all games" }
                    @for g in games { option value=(g.key) selected[game == Some(g.key.as_str())] { (g.key) } }
                }
                noscript { button type="submit" { "Show" } }
            }
            @if entries.is_empty() {
                p.muted { "No rated match yet." }
            } @else {
                table.list #leaderboard {
                    thead { tr { th.num { "#" } th { "Player" } th { "Rating" } th.num { "Rated matches" } } }
                    tbody {
                        @for (k, e) in entries.iter().enumerate() {
                            tr {
                                td.num { (k + 1) }
                                td { (player_link(&e.player)) }
                                td { (rating(&e.rating)) }
                                td.num { (e.rated) }
                            }
                        }
                    }
                }
            }
        },
    )
}
