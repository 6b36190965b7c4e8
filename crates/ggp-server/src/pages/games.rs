//! Pages of games: the list, a game with its rules, the upload form.

use maud::{Markup, html};

use super::{Nav, csrf, game_url, page, time};
use crate::auth::Viewer;
use crate::db::{GameSummary, MatchRow, Version};
use crate::highlight;
use crate::tags::{Search, Tag};
use crate::verdict::Verdict;

/// What the engine column says, in words.
pub fn engine(engine: Option<&Verdict>) -> Markup {
    match engine {
        None => html! { span.muted title="being analysed" { "…" } },
        Some(Verdict::Fast) => {
            html! { span.engine.fast title="the fast engine compiles it" { "fast" } }
        }
        Some(Verdict::Reference(why)) => {
            html! { span.engine.reference title=(why) { "reference" } }
        }
        Some(Verdict::Unplayable(why)) => {
            html! { span.engine.unplayable title=(why) { "unplayable" } }
        }
    }
}

/// The games' page: a search by words and tags (the tags of the games found, each a link that
/// adds it to the search or takes it away), the featured games first.
pub fn list(viewer: &Viewer, games: &[GameSummary], search: &Search) -> Markup {
    let tagged: Vec<(&GameSummary, Vec<Tag>)> = games.iter().map(|g| (g, Tag::of(g))).collect();
    let found: Vec<&(&GameSummary, Vec<Tag>)> = tagged
        .iter()
        .filter(|(g, tags)| search.matches(g, tags))
        .collect();
    // The tags of the games found, with how many have each.
    let mut counts: std::collections::BTreeMap<Tag, usize> = std::collections::BTreeMap::new();
    for (_, tags) in &found {
        for t in tags {
            *counts.entry(*t).or_default() += 1;
        }
    }
    for t in &search.tags {
        counts.entry(*t).or_default();
    }
    page(
        "Games",
        viewer,
        Nav::Games,
        html! {
            div.title-row {
                h1 { "Games" }
                @if viewer.is_admin() { a.button.primary href="/games/new" { "Upload a game" } }
            }
            @if games.is_empty() {
                p.muted { "No game yet." }
            } @else {
                form.search method="get" action="/games" {
                    input.filter type="search" name="q" value=(search.words) data-filter="game-rows"
                        placeholder="Search by name, role or tag" aria-label="Search the games by name, role or tag"
                        autocomplete="off";
                    @if !search.tags.is_empty() { input type="hidden" name="tags" value=(search.slugs()); }
                    button type="submit" { "Search" }
                }
                @let (boards, others): (Vec<_>, Vec<_>) =
                    counts.iter().partition(|(t, _)| matches!(t, Tag::Board { .. }));
                nav.tags aria-label="Tags" {
                    @for (tag, n) in &others { (tag_toggle(search, **tag, **n)) }
                    @if !search.is_empty() { a.clear href="/games" { "Clear the search" } }
                }
                @if !boards.is_empty() {
                    details.tags open[boards.iter().any(|(t, _)| search.tags.contains(t))] {
                        summary { (boards.len()) " board size" @if boards.len() != 1 { "s" } }
                        nav.tags aria-label="Board sizes" {
                            @for (tag, n) in &boards { (tag_toggle(search, **tag, **n)) }
                        }
                    }
                }
                p.muted #games-found {
                    (found.len()) " of " (games.len()) " games"
                    @if found.iter().any(|(g, _)| g.featured) { ", the project's own first" }
                }
                table.list.games {
                        thead { tr { th { "Game" } th { "Roles" } th { "Tags" } th.num.wide { "Versions" } th.wide { "Engine" } th.num.wide { "Matches" } th.wide { "Updated" } } }
                        tbody #game-rows {
                            @for (g, tags) in &found {
                                tr.featured[g.featured] {
                                    td { a href=(game_url(&g.key)) { (g.key) } }
                                    td { (g.latest.roles.join(", ")) }
                                    td.tags { (tag_links(search, tags)) }
                                    td.num.wide { (g.versions) }
                                    td.wide { (engine(g.latest.engine.as_ref())) }
                                    td.num.wide { (g.matches) }
                                    td.wide { (time(g.latest.created)) }
                                }
                            }
                        }
                }
            }
        },
    )
}

/// A tag of the games' page: a link that adds it to the search, or takes it away, with how
/// many games found have it.
fn tag_toggle(search: &Search, tag: Tag, count: usize) -> Markup {
    let on = search.tags.contains(&tag);
    html! {
        a.tag.on[on] href=(search_url(&search.toggled(tag))) title=(tag.meaning())
            aria-pressed=(on) { (tag.to_string()) " " span.count { (count) } }
    }
}

/// A game's tags but its engine's (a column of its own) and its number of roles, each a link
/// to the games that have it too.
fn tag_links(search: &Search, tags: &[Tag]) -> Markup {
    html! {
        @for t in tags.iter().filter(|t| !matches!(t, Tag::Fast | Tag::Reference | Tag::Unplayable | Tag::Roles(_))) {
            @let with = if search.tags.contains(t) { search.clone() } else { search.toggled(*t) };
            a.tag href=(search_url(&with)) title=(t.meaning()) { (t.to_string()) }
            " "
        }
    }
}

/// The games' page with this search.
pub fn search_url(search: &Search) -> String {
    let mut parts = Vec::new();
    if !search.words.is_empty() {
        parts.push(format!("q={}", super::path_part(&search.words)));
    }
    if !search.tags.is_empty() {
        parts.push(format!("tags={}", search.slugs()));
    }
    if parts.is_empty() {
        "/games".into()
    } else {
        format!("/games?{}", parts.join("&"))
    }
}

/// The warnings of a version: where and what.
fn warnings(version: &Version) -> Markup {
    html! {
        @if !version.warnings.is_empty() {
            details.warnings open[version.warnings.len() <= 5] {
                summary { (version.warnings.len()) " diagnostic" @if version.warnings.len() != 1 { "s" } " (none blocks play)" }
                ul {
                    @for w in &version.warnings {
                        li {
                            span.severity.(w["severity"].as_str().unwrap_or("info")) { (w["severity"].as_str().unwrap_or("")) }
                            " " code { (w["code"].as_str().unwrap_or("")) } " "
                            a href=(format!("#L{}", w["line"])) { "line " (w["line"]) }
                            ": " (w["message"].as_str().unwrap_or(""))
                        }
                    }
                }
            }
        }
    }
}

pub fn game(
    viewer: &Viewer,
    version: &Version,
    versions: &[Version],
    matches: &[MatchRow],
    added: bool,
) -> Markup {
    let rules = version.rules.as_deref().unwrap_or("");
    let infix = gdl_syntax::prefix_to_infix(rules).ok();
    let latest = versions.first().map(|v| v.version) == Some(version.version);
    page(
        &version.key,
        viewer,
        Nav::Games,
        html! {
            div.title-row {
                h1 { (version.key) " " span.muted.small { "version " (version.version) } }
                @if viewer.is_admin() {
                    a.button.primary href=(format!("/matches/new?game={}", super::path_part(&version.key))) { "New match" }
                }
            }
            @if added {
                p.notice.ok { "Version " (version.version) " is kept." }
            }
            @if !latest {
                p.notice { "This is an older version. " a href=(game_url(&version.key)) { "The latest" } "." }
            }
            dl.facts {
                dt { "Roles" } dd { @for (k, r) in version.roles.iter().enumerate() { @if k > 0 { ", " } code { (r) } } }
                dt { "Engine" } dd {
                    (engine(version.engine.as_ref()))
                    @if let Some(why) = version.engine.as_ref().and_then(Verdict::why) {
                        " " span.muted { (why) }
                    }
                }
                dt { "Tags" } dd.tags { (tag_links(&Search::default(), &Tag::of_version(version))) }
                @if let Some(steps) = version.traits.as_ref().and_then(|t| t.steps) {
                    dt { "Length" } dd { "a random match lasts " (format!("{steps:.1}")) " steps on average" }
                }
                dt { "Source" } dd { (version.source) }
                dt { "Added" } dd { (time(version.created)) }
                dt { "SHA-256" } dd { code.small { (version.hash) } }
                dt { "Statistics" } dd { a href=(format!("{}/stats?version={}", game_url(&version.key), version.version)) { "Matches, goals per role, lengths, errors" } }
            }
            (warnings(version))
            section.rules {
                div.tabs data-tabs="" {
                    button.tab.active type="button" data-show="prefix" { "Prefix (KIF)" }
                    @if infix.is_some() { button.tab type="button" data-show="infix" { "Infix" } }
                    a.tab href=(format!("{}/rules.kif?version={}", game_url(&version.key), version.version)) download=(format!("{}.kif", version.key)) { "Download" }
                }
                pre.code.numbered #prefix { (highlight::prefix(rules)) }
                @if let Some(infix) = &infix {
                    pre.code.numbered #infix hidden { (highlight::infix(infix)) }
                }
            }
            div.columns {
                section {
                    h2 { "Matches" }
                    @if matches.is_empty() {
                        p.muted { "None yet." }
                    } @else {
                        (super::matches::table(matches, false))
                        p { a href=(format!("/matches?game={}", super::path_part(&version.key))) { "All matches of " (version.key) } }
                    }
                }
                section {
                    h2 { "Versions" }
                    ul.versions {
                        @for v in versions {
                            li {
                                a href=(format!("{}?version={}", game_url(&v.key), v.version)) { "version " (v.version) }
                                " · " (time(v.created)) " · " (engine(v.engine.as_ref()))
                                @if v.version == version.version { " " span.muted { "(shown)" } }
                            }
                        }
                    }
                    @if viewer.is_admin() {
                        p { a href=(format!("/games/new?key={}", super::path_part(&version.key))) { "Upload a new version" } }
                    }
                }
            }
        },
    )
}

/// The upload form, with what was sent and why it was refused, if it was.
pub fn upload(
    viewer: &Viewer,
    key: &str,
    rules: &str,
    refused: Option<(&str, &[String])>,
) -> Markup {
    page(
        "Upload a game",
        viewer,
        Nav::Games,
        html! {
            h1 { "Upload a game" }
            p {
                "The rules are checked as " code { "ggp check" } " checks them. Rules with errors that "
                "leave them without an agreed meaning are refused, with the errors shown at their lines; "
                "others are kept, with their warnings. Uploading rules for a key that exists adds a new "
                "version (matches keep the version they played). At most 1 MiB."
            }
            @if let Some((message, rendered)) = refused {
                section.refused {
                    h2 { "Refused: " (message) }
                    @for r in rendered { pre.diagnostic { (r) } }
                }
            }
            form.card method="post" action="/games" enctype="multipart/form-data" {
                (csrf(viewer))
                label for="key" { "Key" }
                input #key name="key" value=(key) pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}" placeholder="the file's name if empty";
                label for="file" { "A file" }
                input #file type="file" name="file" accept=".kif,.gdl,.txt,text/plain";
                label for="rules" { "or the rules" }
                textarea #rules name="rules" rows="18" spellcheck="false" placeholder="(role robot) …" { (rules) }
                button.primary type="submit" { "Check and keep" }
            }
        },
    )
}
