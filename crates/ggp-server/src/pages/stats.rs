//! Statistics pages: a game's (`/games/{key}/stats`) and the section of a player's page,
//! numbers from [`crate::stats`], with a chart or two ([`super::chart`]) beside the tables
//! that say the same.

use maud::{Markup, html};

use super::chart::{self, Bar};
use super::{Nav, game_url, page, player_url};
use crate::auth::Viewer;
use crate::stats::{self, GameStats, MoveTime, PlayerStats};

/// `part` of `whole` as a percentage, or a dash when there is no whole.
pub fn percent(part: i64, whole: i64) -> String {
    if whole > 0 {
        format!("{:.0}%", 100.0 * part as f64 / whole as f64)
    } else {
        "—".into()
    }
}

/// "1 match", "2 matches".
fn count(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A mean to one decimal, or a dash.
fn mean(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.1}"))
}

/// A duration in milliseconds, in words a person reads.
fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// "of the latest 10,000" when the matches were capped.
fn capped_note(capped: bool) -> Markup {
    html! {
        @if capped {
            p.notice { "There are more matches than "
                (thousands(stats::RECENT)) ": what follows describes the latest "
                (thousands(stats::RECENT)) " (docs/limits.md)." }
        }
    }
}

fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ended(s: &GameStats) -> Markup {
    let e = &s.ended;
    html! {
        dl.facts.stats-ended {
            dt { "Matches" } dd #matches-total { (e.total) }
            dt { "Finished" } dd #matches-finished { (e.finished) }
            dt { "Aborted" } dd #matches-aborted { (e.aborted) " " span.muted { "(by an operator, the step limit, a match's memory)" } }
            dt { "Errored" } dd #matches-errored { (e.errored) " " span.muted { "(could not be played: the rules or the players failed)" } }
            dt { "Not ended" } dd #matches-unfinished { (e.unfinished) " " span.muted { "(being played, or their server went)" } }
        }
    }
}

fn per_role(s: &GameStats) -> Markup {
    let bars: Vec<Bar> = s
        .per_role
        .iter()
        .map(|r| Bar {
            label: r.role.clone(),
            value: r.mean_goal.unwrap_or(0.0),
            shown: mean(r.mean_goal),
        })
        .collect();
    html! {
        h2 { "Mean goal per role" }
        p.muted { "In the rules' order, over the finished matches: a first mover's advantage shows as a longer first bar." }
        (chart::across(&format!("Mean goal per role of {}, from 0 to 100", s.key), &bars, 100.0))
        table.list #per-role {
            thead { tr { th { "Role" } th.num { "Mean goal" } th.num title="Its goal the highest, alone" { "Won alone" } th.num { "Finished" } } }
            tbody {
                @for r in &s.per_role {
                    tr {
                        td { code { (r.role) } }
                        td.num { (mean(r.mean_goal)) }
                        td.num { (r.won_alone) " " span.muted { (percent(r.won_alone, r.matches)) } }
                        td.num { (r.matches) }
                    }
                }
            }
        }
    }
}

fn lengths(s: &GameStats) -> Markup {
    let l = &s.lengths;
    let label = |b: &stats::Bucket| {
        if b.from == b.to {
            b.from.to_string()
        } else {
            format!("{}–{}", b.from, b.to)
        }
    };
    let bars: Vec<Bar> = l
        .histogram
        .iter()
        .map(|b| Bar {
            label: label(b),
            value: b.matches as f64,
            shown: b.matches.to_string(),
        })
        .collect();
    html! {
        h2 { "Length" }
        @if l.matches == 0 {
            p.muted { "No finished match yet." }
        } @else {
            p #lengths {
                "In joint moves, over " (l.matches) " finished matches: "
                "mean " strong { (mean(l.mean)) } ", median " (l.median.unwrap_or_default())
                ", shortest " (l.min.unwrap_or_default()) ", longest " (l.max.unwrap_or_default()) "."
            }
            (chart::columns(&format!("Finished matches of {} per length in joint moves", s.key), &bars))
            table.list #length-histogram {
                thead { tr { th { "Joint moves" } th.num { "Matches" } } }
                tbody {
                    @for (b, bar) in l.histogram.iter().zip(&bars) {
                        tr { td { (bar.label) } td.num { (b.matches) } }
                    }
                }
            }
        }
    }
}

fn errors(s: &GameStats) -> Markup {
    let e = &s.errors;
    html! {
        h2 { "Errors" }
        @if e.matches == 0 {
            p.muted { "No match has ended yet." }
        } @else {
            p #error-share {
                strong { (percent(e.with_errors, e.matches)) } " of the matches that ended ("
                (e.with_errors) " of " (e.matches) ") had a player's error: its START or a move not "
                "answered in time, an illegal or unparsable move, a lost connection."
            }
            ul #error-kinds {
                li { "A timeout: " (e.with_timeouts) " (" (percent(e.with_timeouts, e.matches)) ")" }
                li { "An illegal or unparsable move: " (e.with_illegal) " (" (percent(e.with_illegal, e.matches)) ")" }
            }
        }
    }
}

/// A game's statistics page.
pub fn game(viewer: &Viewer, s: &GameStats) -> Markup {
    page(
        &format!("{} · statistics", s.key),
        viewer,
        Nav::Games,
        html! {
            h1 { a href=(game_url(&s.key)) { (s.key) } " " span.muted.small { "statistics" } }
            p.muted {
                "Over the matches this server played of every version of " (s.key)
                " with the roles of version " (s.version) ". "
                a href=(format!("/api/games/{}/stats?version={}", super::path_part(&s.key), s.version)) { "As JSON" } "."
            }
            (ended(s))
            (capped_note(s.capped))
            (per_role(s))
            (lengths(s))
            (errors(s))
        },
    )
}

fn move_time(t: &MoveTime) -> Markup {
    html! {
        @match (t.mean_ms, t.max_ms) {
            (Some(mean_ms), Some(max_ms)) => {
                (duration(mean_ms)) " on average"
                @if let Some(of) = t.mean_of_clock { ", " (format!("{:.0}%", 100.0 * of)) " of the play clock" }
                "; the longest " (duration(max_ms as f64)) "; " (t.over_clock) " of " (t.moves)
                " moves over the play clock"
            }
            _ => span.muted { "no move timed yet" },
        }
    }
}

/// The statistics section of a registered player's page: error and timeout rates, time per
/// move, results per opponent with a chart of its mean goal against each.
pub fn player_section(s: &PlayerStats) -> Markup {
    let bars: Vec<Bar> = s
        .opponents
        .iter()
        .filter(|o| o.finished > 0)
        .map(|o| Bar {
            label: o.name.clone(),
            value: o.mean_goal.unwrap_or(0.0),
            shown: mean(o.mean_goal),
        })
        .collect();
    html! {
        h2 { "Statistics" }
        (capped_note(s.capped))
        dl.facts #player-rates {
            dt { "Moves" } dd { (s.moves) " in " (count(s.matches, "match", "matches")) }
            dt { "Errors" } dd #error-rate { (percent(s.errors, s.moves)) " of its moves (" (s.errors) ")" }
            dt { "Timeouts" } dd #timeout-rate { (percent(s.timeouts, s.moves)) " of its moves (" (s.timeouts) ")" }
            dt { "START not answered" } dd { (count(s.start_failed, "match", "matches")) }
            dt { "Time per move" }
            dd #move-time { (move_time(&s.move_time)) }
        }
        p.muted.stats-note {
            "A move's time runs from the manager's PLAY to the player's reply (a timeout counts "
            "as the clock and its grace); matches recorded before the manager kept it are left out."
        }
        h3 { "Per opponent" }
        @if s.opponents.is_empty() {
            p.muted { "No opponent yet." }
        } @else {
            @if !bars.is_empty() {
                (chart::across("Its mean goal against each opponent, from 0 to 100", &bars, 100.0))
            }
            table.list #per-opponent {
                thead { tr {
                    th { "Opponent" } th.num { "Played" } th.num { "Finished" }
                    th.num title="A higher goal than the opponent's, in a finished match it did not fail" { "Won" }
                    th.num { "Drawn" } th.num { "Lost" } th.num { "Mean goal" }
                    th.num title="No answer to START, or errors on more than half of its moves" { "Failed" }
                } }
                tbody {
                    @for o in &s.opponents {
                        tr {
                            td {
                                @if o.registered { a href=(player_url(&o.name)) { (o.name) } }
                                @else { (o.name) }
                            }
                            td.num { (o.played) } td.num { (o.finished) }
                            td.num { (o.won) } td.num { (o.drawn) } td.num { (o.lost) }
                            td.num { (mean(o.mean_goal)) } td.num { (o.failed) }
                        }
                    }
                }
            }
            @if s.opponents.len() as i64 >= stats::OPPONENTS {
                p.muted { "The " (stats::OPPONENTS) " opponents it played most." }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_shown_as_people_read_them() {
        assert_eq!(percent(2, 3), "67%");
        assert_eq!(percent(0, 0), "—");
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(duration(250.0), "250 ms");
        assert_eq!(duration(1500.0), "1.5 s");
        assert_eq!(mean(None), "—");
        assert_eq!(count(1, "match", "matches"), "1 match");
        assert_eq!(count(0, "match", "matches"), "0 matches");
        assert_eq!(mean(Some(33.333)), "33.3");
    }
}
