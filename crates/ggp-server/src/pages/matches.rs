//! Pages of matches: the lists, the form that creates one, and the match page, which updates
//! itself from the match's event stream (`match.js`).

use maud::{Markup, html};

use super::{Nav, csrf, game_url, match_url, page, path_part, player_url, status_badge, time};
use crate::auth::Viewer;
use crate::board::Geometry;
use crate::db::{GameSummary, MatchFilter, MatchRow, Player, Served, Version};
use crate::live::model::{Clock, SeatLink, Sight};
use crate::seat::SeatKind;
use crate::term::parse_state;
use ggp_match::{Known, MatchRecord};

/// A table of matches.
pub fn table(matches: &[MatchRow], show_game: bool) -> Markup {
    html! {
        table.list.matches {
            thead { tr {
                th { "Match" }
                @if show_game { th { "Game" } }
                th { "Players" } th { "Status" } th.num { "Steps" } th { "Started" }
            } }
            tbody {
                @for m in matches {
                    tr {
                        td { a href=(match_url(&m.id)) { (m.id) } }
                        @if show_game { td {
                            @if m.served { a href=(game_url(&m.game)) { (m.game) } } @else { (m.game) }
                        } }
                        td.players {
                            @for (k, p) in m.players.iter().enumerate() {
                                @if k > 0 { span.vs { " vs " } }
                                span.player { (p)
                                    @if m.status == "finished" { @if let Some(g) = m.goals.get(k) { " " span.goal { (g) } } }
                                }
                            }
                        }
                        td { (status_badge(&m.status)) }
                        td.num { (m.steps) }
                        td { (time(m.start_time)) }
                    }
                }
            }
        }
    }
}

pub fn list(viewer: &Viewer, matches: &[MatchRow], filter: &MatchFilter, more: bool) -> Markup {
    let status = filter.status.as_deref().unwrap_or("");
    let link = |offset: i64| {
        let mut q = vec![format!("offset={offset}")];
        if let Some(s) = &filter.status {
            q.push(format!("status={}", path_part(s)));
        }
        if let Some(g) = &filter.game {
            q.push(format!("game={}", path_part(g)));
        }
        if let Some(p) = &filter.player {
            q.push(format!("player={}", path_part(p)));
        }
        format!("/matches?{}", q.join("&"))
    };
    page(
        "Matches",
        viewer,
        Nav::Matches,
        html! {
            div.title-row {
                h1 { "Matches" }
                @if viewer.is_admin() { a.button.primary href="/matches/new" { "New match" } }
            }
            form.filters method="get" action="/matches" {
                label { "Status "
                    select name="status" {
                        option value="" selected[status.is_empty()] { "any" }
                        @for s in ["live", "finished", "aborted", "unfinished"] {
                            option value=(s) selected[status == s] { (s) }
                        }
                    }
                }
                label { "Game " input name="game" value=(filter.game.as_deref().unwrap_or("")) size="14"; }
                label { "Player " input name="player" value=(filter.player.as_deref().unwrap_or("")) size="14"; }
                button type="submit" { "Filter" }
            }
            @if matches.is_empty() {
                p.muted { "No match." }
            } @else {
                (table(matches, true))
            }
            p.pager {
                @if filter.offset > 0 { a href=(link((filter.offset - filter.limit).max(0))) { "← Newer" } " " }
                @if more { a href=(link(filter.offset + filter.limit)) { "Older →" } }
            }
        },
    )
}

/// The form that creates a match: the game first, then a seat per role.
pub fn new_match(
    viewer: &Viewer,
    games: &[GameSummary],
    chosen: Option<&Version>,
    players: &[Player],
    error: Option<&str>,
) -> Markup {
    let key = chosen.map(|v| v.key.as_str()).unwrap_or("");
    page(
        "New match",
        viewer,
        Nav::Matches,
        html! {
            h1 { "New match" }
            @if let Some(error) = error { p.error-message { (error) } }
            form.card.narrow method="get" action="/matches/new" data-autosubmit="" {
                label for="game" { "Game" }
                (super::filter_box("game", "Filter the games"))
                select #game name="game" required {
                    option value="" disabled selected[chosen.is_none()] { "choose a game" }
                    @for g in games {
                        option value=(g.key) selected[g.key == key] { (g.key) " (" (super::role_count(g.latest.roles.len())) ")" }
                    }
                }
                noscript { button type="submit" { "Choose" } }
            }
            @if let Some(v) = chosen {
                form.card.narrow #new-match method="post" action="/matches" {
                    (csrf(viewer))
                    input type="hidden" name="game" value=(v.key);
                    input type="hidden" name="version" value=(v.version);
                    p.muted { a href=(game_url(&v.key)) { (v.key) } ", version " (v.version) }
                    @let chance = crate::games::random_role(&v.roles);
                    @for (k, role) in v.roles.iter().enumerate().filter(|(k, _)| Some(*k) != chance) {
                        @let k = k - usize::from(chance.is_some_and(|r| r < k));
                        label for=(format!("player{k}")) { "Role " code { (role) } }
                        select id=(format!("player{k}")) name=(format!("player{k}")) {
                            optgroup label="Built in" {
                                @for (j, n) in ggp_play::StrategyKind::NAMES.iter().enumerate() {
                                    option value=(n) selected[j == 0] { (n) }
                                }
                            }
                            optgroup label="A person, on the match page" {
                                option value="human" { "human" }
                            }
                            @let (reachable, unreachable): (Vec<&Player>, Vec<&Player>) =
                                players.iter().partition(|p| p.status != "unreachable");
                            @if !reachable.is_empty() {
                                optgroup label="Registered players" {
                                    @for p in reachable {
                                        option value=(p.name) { (p.name) " (" (p.status) ")" }
                                    }
                                }
                            }
                            @if !unreachable.is_empty() {
                                optgroup label="Unreachable at the last INFO: a random legal move is played for each of theirs" {
                                    @for p in unreachable {
                                        option value=(p.name) { (p.name) " (unreachable)" }
                                    }
                                }
                            }
                        }
                    }
                    @if let Some(r) = chance {
                        p.muted.small { "Role " code { (v.roles[r]) } " is GDL-II's random role: it is played by the manager (a uniformly random legal move, drawn from the seed), so it has no seat." }
                    }
                    div.row {
                        div {
                            label for="startclock" { "Start clock (s)" }
                            input #startclock type="number" name="startclock" value="10" min="0" max="86400" required;
                        }
                        div {
                            label for="playclock" { "Play clock (s)" }
                            input #playclock type="number" name="playclock" value="10" min="0" max="86400" required;
                        }
                        div {
                            label for="seed" { "Seed" }
                            input #seed type="number" name="seed" min="0" placeholder="random";
                        }
                    }
                    label for="delay" { "Delay between steps (ms), to follow fast players" }
                    input #delay type="number" name="delay" value="0" min="0" max="60000";
                    button.primary type="submit" { "Start the match" }
                }
            }
        },
    )
}

/// After creating a match with several human seats: each seat's link, shown once.
pub fn created(viewer: &Viewer, id: &str, seats: &[SeatLink]) -> Markup {
    page(
        "Match created",
        viewer,
        Nav::Matches,
        html! {
            h1 { "Match created" }
            p { "Each human seat is played by whoever opens its link; the links are shown only now." }
            ul.seat-links {
                @for s in seats {
                    li { "Role " code { (s.role) } ": " a href=(s.url) { "play " (s.role) } }
                }
            }
            p { a.button href=(match_url(id)) { "Watch the match" } }
        },
    )
}

/// One row of the moves table: step `k` (from 1), each role's move and what went wrong.
pub fn step_row(k: usize, moves: &[String], errors: &[String], roles: &[String]) -> Markup {
    html! {
        tr id=(format!("step-{k}")) data-step=(k) {
            th scope="row" { (k) }
            @for r in 0..roles.len() {
                td {
                    code { (moves.get(r).map(String::as_str).unwrap_or("")) }
                    @if let Some(e) = errors.get(r).filter(|e| !e.is_empty()) {
                        (error(e))
                    }
                }
            }
        }
    }
}

/// One row of a role's view: step `k` (from 1), the role's own move (and what went wrong
/// with it), what it saw of the joint move and, in a GDL-III game, what it knows after it
/// (`you`: said to the role itself, "you know").
pub fn view_row(
    k: usize,
    mv: Option<&str>,
    error: Option<&str>,
    percepts: &[String],
    known: &[&Known],
    you: bool,
) -> Markup {
    html! {
        tr data-step=(k) {
            th scope="row" { (k) }
            td {
                code { (mv.unwrap_or("")) }
                @if let Some(e) = error.filter(|e| !e.is_empty()) { (self::error(e)) }
            }
            td.percepts {
                @if percepts.is_empty() { span.muted { "nothing" } }
                @for (j, p) in percepts.iter().enumerate() {
                    @if j > 0 { " " }
                    code.percept { (p) }
                }
                @for kn in known {
                    div.known {
                        @match kn {
                            Known::Role { what, .. } => {
                                @if you { "you know " } @else { "knows " }
                                code.known { (what) }
                            }
                            Known::Common(what) => {
                                "everyone knows " code.known { (what) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A role's view of a GDL-II match: a table of what it saw at each step.
fn role_view(
    r: usize,
    role: &str,
    record: Option<&MatchRecord>,
    hidden: bool,
    mine: bool,
) -> Markup {
    html! {
        section.role-view id=(format!("view-{r}")) data-role=(r) hidden[hidden] {
            h2 {
                @if mine { "What you know, as " } @else { "What " }
                code { (role) }
                @if !mine { " knows" }
            }
            p.muted { "The percepts it was sent after each joint move, and its own moves; not the state." }
            table.list.view {
                thead { tr { th { "Step" } th { "Its move" } th { "It saw" } } }
                tbody {
                    @if let Some(rec) = record {
                        @for k in 1..=rec.moves.len() {
                            (view_row(
                                k,
                                rec.moves[k - 1].get(r).map(String::as_str),
                                rec.errors.get(k - 1).and_then(|e| e.get(r)).map(String::as_str),
                                rec.percepts.get(k - 1).and_then(|p| p.get(r)).map_or(&[][..], Vec::as_slice),
                                &[],
                                mine,
                            ))
                        }
                    }
                }
            }
        }
    }
}

/// An error entry, `kind: detail`, with the kind as a label.
fn error(entry: &str) -> Markup {
    let (kind, detail) = entry.split_once(": ").unwrap_or(("error", entry));
    let shown: String = detail.chars().take(300).collect();
    html! {
        div.step-error title=(detail.chars().take(2000).collect::<String>()) {
            span.kind { (kind) } " " (shown) @if shown.len() < detail.len() { "…" }
        }
    }
}

/// What the match page shows.
pub struct View<'a> {
    pub record: &'a MatchRecord,
    /// `live`, `finished`, `aborted` or `unfinished`.
    pub status: &'a str,
    pub served: Option<&'a Served>,
    pub geometry: Option<&'a Geometry>,
    pub clock: Option<&'a Clock>,
    /// A GDL-II match (its roles see percepts).
    pub gdl2: bool,
    /// A GDL-III match (its rules use `knows`: a role's view says what it knows).
    pub gdl3: bool,
    /// What the page may show: everything; a role's view, to be filled in by the page's script
    /// with the seat's token (a GDL-II match being played, opened as a seat); or the progress.
    pub sight: Sight,
    /// The seat the page was opened as (`?seat=K`).
    pub seat: Option<usize>,
}

/// The board of a match's last state, the cells its last move changed marked.
fn last_board(r: &MatchRecord, geometry: Option<&Geometry>) -> Markup {
    let state = |k: usize| r.states.get(k).map(|s| parse_state(s));
    let last = r.states.len().saturating_sub(1);
    let previous = last.checked_sub(1).and_then(state);
    crate::board::render_step(
        &state(last).unwrap_or_default(),
        previous.as_deref(),
        geometry,
    )
}

pub fn match_page(viewer: &Viewer, v: &View<'_>) -> Markup {
    let r = v.record;
    let all = v.sight == Sight::All;
    let last = r.states.len().saturating_sub(1);
    let live = v.status == "live";
    let errors_of = |k: usize| {
        r.errors
            .iter()
            .filter(|row| row.get(k).is_some_and(|e| !e.is_empty()))
            .count()
    };
    let game = v.served.map_or(r.game_name.as_str(), |s| s.game.as_str());
    let roles = &r.game_role_names;
    page(
        &format!("{game} · {}", r.match_id),
        viewer,
        Nav::Matches,
        html! {
            div #match data-id=(r.match_id) data-live=(live) data-steps=(r.moves.len())
                data-playclock=(r.play_clock) data-gdl2=(v.gdl2) data-sight=(v.sight.name())
                data-seat=[v.seat] {
                div.title-row {
                    h1 {
                        @if let Some(s) = v.served {
                            a href=(format!("{}?version={}", game_url(&s.game), s.version)) { (s.game) }
                        } @else { (game) }
                        " " span.muted.small { (r.match_id) }
                        @if v.gdl2 { " " span.badge.gdl2 title="a game of imperfect information: each role sees only its percepts" { "GDL-II" } }
                        @if v.gdl3 { " " span.badge.gdl2 title="the rules depend on what the roles know (knows): each role's view says what it knows" { "GDL-III" } }
                    }
                    span #status { (status_badge(v.status)) }
                }
                @if r.is_aborted {
                    p.notice.aborted #abort-reason {
                        strong { "Aborted" } ": " (r.abort_reason.as_deref().unwrap_or("no reason was recorded"))
                        " (the " (r.moves.len()) " step" @if r.moves.len() != 1 { "s" } " played are kept)"
                    }
                } @else if v.status == "unfinished" {
                    p.notice { "Not finished: its manager is still running elsewhere, or stopped without recording an end." }
                }
                p.notice.aborted #abort-reason-live hidden {}
                @if v.gdl2 && all {
                    nav.views aria-label="point of view" {
                        span.muted { "Point of view: " }
                        button.view-tab.active type="button" data-view="truth" { "the true state" }
                        @for (k, role) in roles.iter().enumerate() {
                            button.view-tab type="button" data-view=(k) { code { (role) } }
                        }
                    }
                }
                div.match-layout {
                    section.board-panel {
                        @if all {
                            div #truth {
                                div #board { (last_board(r, v.geometry)) }
                                div.stepper {
                                    button #first type="button" title="first state" { "«" }
                                    button #prev type="button" title="previous state" { "◀" }
                                    input #slider type="range" min="0" max=(last) value=(last) aria-label="state";
                                    button #next type="button" title="next state" { "▶" }
                                    button #latest type="button" title="latest state" { "»" }
                                    span #step-label { "state " (last) " of " (last) }
                                }
                            }
                            @if v.gdl2 {
                                @for (k, role) in roles.iter().enumerate() {
                                    (role_view(k, role, Some(r), true, false))
                                }
                            }
                        } @else {
                            p.notice.secret {
                                "A GDL-II match being played: the state, the moves and what each role sees are secret until it ends"
                                @if let Sight::Role(k) = v.sight { " (you see what " code { (roles.get(k).map_or("", String::as_str)) } " sees)" }
                                ". Steps played: " span #progress-steps { (r.moves.len()) } "."
                            }
                            @if let Sight::Role(k) = v.sight {
                                // A game with a board: what the role knows, drawn by the page's
                                // script from its view's events, shaded where it cannot be sure.
                                @if v.geometry.is_some() { div #board.known {} }
                                (role_view(k, roles.get(k).map_or("", String::as_str), None, false, true))
                            }
                        }
                        section #seat.card hidden {
                            h2 { "You play " span #seat-role {} }
                            p #seat-status.muted {}
                            div #seat-moves.move-buttons {}
                        }
                    }
                    aside.side {
                        div #clock.clock hidden[v.clock.is_none()]
                            data-deadline=[v.clock.map(|c| c.deadline)]
                            data-phase=[v.clock.map(|c| c.phase)] {
                            span.label #clock-label { @if let Some(c) = v.clock { (c.phase) " clock" } }
                            span.time #clock-time { "–" }
                        }
                        table.players {
                            thead { tr { th { "Role" } th { "Player" } th.num { "Goal" } th.num { "Errors" } } }
                            tbody {
                                @for (k, role) in roles.iter().enumerate() {
                                    @let name = r.player_names_from_host.get(k).map(String::as_str).unwrap_or("");
                                    @let kind = v.served.and_then(|s| s.seats.get(k)).map(|s| s.kind);
                                    tr {
                                        td { code { (role) } }
                                        td {
                                            @if kind == Some(SeatKind::Player) { a href=(player_url(name)) { (name) } }
                                            @else { (name) }
                                            @if let Some(e) = r.start_errors.get(k).filter(|e| !e.is_empty()) {
                                                div.step-error { span.kind { "start" } " " (e) }
                                            }
                                        }
                                        td.num.goal data-role=(k) {
                                            @if r.is_completed { (r.goal_values.get(k).map_or(String::new(), u8::to_string)) }
                                        }
                                        td.num.errors data-role=(k) { @if all { (errors_of(k)) } @else { "–" } }
                                    }
                                }
                            }
                        }
                        dl.facts {
                            dt { "Clocks" } dd { "start " (r.start_clock) " s, play " (r.play_clock) " s" }
                            dt { "Started" } dd { (time(r.start_time as i64)) }
                            @if let Some(s) = v.served { dt { "Game" } dd { a href=(format!("{}?version={}", game_url(&s.game), s.version)) { (s.game) " v" (s.version) } } }
                        }
                        @if all {
                            p.links {
                                a href=(format!("{}/export.json", match_url(&r.match_id))) download=(format!("{}.json", r.match_id)) { "Export (ggp.org JSON)" }
                            }
                        }
                        @if live && viewer.is_admin() {
                            form #abort-form method="post" action=(format!("{}/abort", match_url(&r.match_id))) {
                                (csrf(viewer))
                                button.danger type="submit" { "Abort the match" }
                            }
                        }
                    }
                }
                @if all {
                    section #truth-moves {
                        h2 { "Moves" }
                        table.list.moves #moves {
                            thead { tr { th { "Step" } @for role in roles { th { code { (role) } } } } }
                            tbody {
                                @for k in 1..=r.moves.len() {
                                    (step_row(k, &r.moves[k - 1], r.errors.get(k - 1).map_or(&[][..], Vec::as_slice), roles))
                                }
                            }
                        }
                    }
                }
            }
            script type="module" src=(crate::assets::url("match.js")) {}
        },
    )
}

/// A match created but not recorded yet (its manager is reading the rules): the page reloads
/// itself when the match begins.
pub fn starting(viewer: &Viewer, id: &str) -> Markup {
    page(
        id,
        viewer,
        Nav::Matches,
        html! {
            div #match data-id=(id) data-live="true" data-steps="0" data-starting="" {
                h1 { (id) }
                p.muted { "The match is starting…" }
            }
            script type="module" src=(crate::assets::url("match.js")) {}
        },
    )
}
