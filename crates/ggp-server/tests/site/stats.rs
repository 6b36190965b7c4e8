//! A game's and a player's statistics, counted from what was played.

use super::*;

on_both!(
    statistics,
    a_game_s_and_a_player_s_statistics_count_what_was_played,
    a_game_s_and_a_player_s_statistics_count_what_was_played_on_postgresql
);

/// A real player (`ggp_play::serve`, what `ggp player` runs) with a built-in strategy.
async fn real_player(kind: ggp_play::StrategyKind) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let config = ggp_play::PlayerConfig {
        name: "steady".into(),
        factory: kind.factory(3),
        margin: Duration::from_millis(200),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    };
    tokio::spawn(ggp_play::serve(listener, config, std::future::pending()));
    url
}

/// The text of an HTML fragment, its tags left out and its spaces collapsed.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rows of the body of the table with the id `id`, each as its cells' text.
fn table_rows(page: &str, id: &str) -> Vec<Vec<String>> {
    let table = page
        .split(&format!(r#"id="{id}""#))
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .and_then(|table| table.split("<tbody>").nth(1))
        .unwrap_or_else(|| panic!("no table {id}: {page}"));
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let inside = cell.split_once('>').map_or("", |(_, rest)| rest);
                    text_of(inside.split("</td>").next().unwrap())
                })
                .collect()
        })
        .collect()
}

/// The text of the element with the id `id` (up to its closing `tag`).
fn element_text(page: &str, id: &str, tag: &str) -> String {
    let inside = page
        .split(&format!(r#"id="{id}""#))
        .nth(1)
        .and_then(|rest| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split(&format!("</{tag}>")).next())
        .unwrap_or_else(|| panic!("no element {id}: {page}"));
    text_of(inside)
}

/// The SVG charts of a page whose class list begins with `class`.
fn charts<'a>(page: &'a str, class: &str) -> Vec<&'a str> {
    page.split(&format!(r#"<svg class="{class}""#))
        .skip(1)
        .map(|rest| rest.split("</svg>").next().unwrap())
        .collect()
}

fn pct(part: usize, whole: usize) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole as f64)
}

/// Whether a seat of a record erred (at START or in a move): the failure rule of ratings.
fn failed_in(record: &Value, seat: usize) -> bool {
    let start = record["startErrors"][seat].as_str().unwrap_or("");
    let moves = record["moves"].as_array().unwrap().len();
    let errors = record["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e[seat].as_str().unwrap_or("").is_empty())
        .count();
    !start.is_empty() || 2 * errors > moves
}

/// Plays tictactoe between a registered real player (`steady`, the `legal` strategy behind
/// HTTP), a registered player whose every move is illegal (`wrong`) and built-in players,
/// aborts a match with a person's seat, then checks the game's statistics page (how the
/// matches ended, each role's mean goal and wins, lengths, the share with errors, the SVG
/// charts' bars), the players' per-opponent rows and rates, and the JSON of both.
async fn statistics(backend: Backend) {
    let s = site(backend, "statistics").await;
    let wrong = scripted("(mark 9 9)").await;
    let steady = real_player(ggp_play::StrategyKind::Legal).await;
    for (name, url) in [("wrong", wrong), ("steady", steady)] {
        let a = s
            .api(
                "POST",
                "/api/players",
                Some(ADMIN),
                json!({"name": name, "url": url}),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    }
    let seatings = [
        ["steady", "legal"],
        ["wrong", "steady"],
        ["steady", "wrong"],
        ["random", "random"],
    ];
    let mut records = Vec::new();
    for players in seatings {
        let a = s
            .api(
                "POST",
                "/api/matches",
                Some(ADMIN),
                json!({"game": "tictactoe", "players": players, "startclock": 2, "playclock": 2, "seed": 7}),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        let record = s.finished(a.json()["id"].as_str().unwrap()).await;
        assert_eq!(record["status"], "finished", "{record}");
        records.push((players, record));
    }
    // A match with a person's seat, aborted once it has started.
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": "tictactoe", "players": ["human", "random"], "startclock": 1, "playclock": 60}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let id = a.json()["id"].as_str().unwrap().to_string();
    for _ in 0..200 {
        if s.state.db.record(&id).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let aborted = s
        .api(
            "POST",
            &format!("/api/matches/{id}/abort"),
            Some(ADMIN),
            json!({}),
        )
        .await;
    assert!(aborted.status.is_success(), "{}", aborted.body);
    let aborted = s.finished(&id).await;
    assert_eq!(aborted["status"], "aborted", "{aborted}");

    // What the records say, to be found on the pages.
    let goals = |r: &Value, k: usize| r["goalValues"][k].as_u64().unwrap() as f64;
    let length = |r: &Value| r["moves"].as_array().unwrap().len();
    let erred = |r: &Value| {
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .chain([&r["startErrors"]])
            .flat_map(|row| row.as_array().unwrap())
            .any(|e| !e.as_str().unwrap().is_empty())
    };
    let finished: Vec<&Value> = records.iter().map(|(_, r)| r).collect();

    let page = s.get("/games/tictactoe").await.body;
    assert!(
        page.contains(r#"<a href="/games/tictactoe/stats?version=1">"#),
        "{page}"
    );
    let page = s.get("/games/tictactoe/stats").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let page = page.body;
    for (id, n) in [
        ("matches-total", 5),
        ("matches-finished", 4),
        ("matches-aborted", 1),
        ("matches-errored", 0),
        ("matches-unfinished", 0),
    ] {
        assert!(
            element_text(&page, id, "dd").starts_with(&n.to_string()),
            "{id}: {page}"
        );
    }
    // Each role's mean goal and wins alone, in the rules' order.
    let roles: Vec<String> = serde_json::from_value(finished[0]["gameRoleNames"].clone()).unwrap();
    let per_role = table_rows(&page, "per-role");
    assert_eq!(per_role.len(), 2, "{per_role:?}");
    for (k, role) in roles.iter().enumerate() {
        let mean = finished.iter().map(|r| goals(r, k)).sum::<f64>() / 4.0;
        let won = finished
            .iter()
            .filter(|r| goals(r, k) > goals(r, 1 - k))
            .count();
        assert_eq!(
            per_role[k],
            [
                role.to_string(),
                format!("{mean:.1}"),
                format!("{won} {}", pct(won, 4)),
                "4".into()
            ],
            "{per_role:?}"
        );
    }
    let across = charts(&page, "chart across");
    assert_eq!(across.len(), 1, "{page}");
    assert_eq!(across[0].matches(r#"class="bar""#).count(), 2);
    assert!(
        across[0].contains("<title>Mean goal per role of tictactoe, from 0 to 100</title>"),
        "{}",
        across[0]
    );
    for (k, role) in roles.iter().enumerate() {
        let mean = finished.iter().map(|r| goals(r, k)).sum::<f64>() / 4.0;
        assert!(
            across[0].contains(&format!("<title>{role}: {mean:.1}</title>")),
            "{}",
            across[0]
        );
    }
    // Lengths: the summary, and a bar per row of the histogram's table, whose counts add up.
    let mut lengths: Vec<usize> = finished.iter().map(|r| length(r)).collect();
    lengths.sort_unstable();
    let mean = lengths.iter().sum::<usize>() as f64 / 4.0;
    assert_eq!(
        element_text(&page, "lengths", "p"),
        format!(
            "In joint moves, over 4 finished matches: mean {mean:.1}, median {}, shortest {}, longest {}.",
            lengths[1], lengths[0], lengths[3]
        )
    );
    let histogram = table_rows(&page, "length-histogram");
    let columns = charts(&page, "chart columns");
    assert_eq!(columns.len(), 1, "{page}");
    assert_eq!(
        columns[0].matches(r#"class="bar""#).count(),
        histogram.len()
    );
    let counted: usize = histogram
        .iter()
        .map(|r| r[1].parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, 4, "{histogram:?}");
    // Errors: `wrong`'s two matches, of the five that ended; both illegal moves, no timeout.
    let with_errors =
        records.iter().filter(|(_, r)| erred(r)).count() + usize::from(erred(&aborted));
    assert_eq!(with_errors, 2);
    assert!(
        element_text(&page, "error-share", "p")
            .starts_with("40% of the matches that ended (2 of 5)"),
        "{page}"
    );
    let kinds = page
        .split(r#"id="error-kinds">"#)
        .nth(1)
        .and_then(|rest| rest.split("</ul>").next())
        .unwrap_or_else(|| panic!("{page}"));
    assert_eq!(
        kinds,
        "<li>A timeout: 0 (0%)</li><li>An illegal or unparsable move: 2 (40%)</li>"
    );
    let json = s.get("/api/games/tictactoe/stats").await.json();
    assert_eq!(json["ended"]["finished"], 4, "{json}");
    assert_eq!(json["ended"]["aborted"], 1, "{json}");
    assert_eq!(json["errors"]["with_errors"], 2, "{json}");
    assert_eq!(json["lengths"]["matches"], 4, "{json}");
    assert_eq!(json["per_role"][0]["role"], roles[0].as_str(), "{json}");

    // A player's results per opponent, computed from the records the same way.
    for (me, opponents) in [("steady", ["wrong", "legal"]), ("wrong", ["steady", ""])] {
        let page = s.get(&format!("/players/{me}")).await.body;
        let rows = table_rows(&page, "per-opponent");
        let opponents: Vec<&str> = opponents.into_iter().filter(|o| !o.is_empty()).collect();
        assert_eq!(rows.len(), opponents.len(), "{me}: {rows:?}");
        for (row, opponent) in rows.iter().zip(&opponents) {
            let mut expected = [0usize; 6]; // played, won, drawn, lost, failed, goals
            for (players, r) in &records {
                let (Some(mine), Some(theirs)) = (
                    players.iter().position(|p| *p == me),
                    players.iter().position(|p| p == opponent),
                ) else {
                    continue;
                };
                expected[0] += 1;
                expected[5] += goals(r, mine) as usize;
                let failed = failed_in(r, mine);
                if failed {
                    expected[4] += 1;
                } else if goals(r, mine) > goals(r, theirs) {
                    expected[1] += 1;
                } else if goals(r, mine) == goals(r, theirs) {
                    expected[2] += 1;
                } else {
                    expected[3] += 1;
                }
            }
            let [played, won, drawn, lost, failed, total] = expected;
            let mean = format!("{:.1}", total as f64 / played as f64);
            assert_eq!(
                row,
                &[
                    opponent.to_string(),
                    played.to_string(),
                    played.to_string(),
                    won.to_string(),
                    drawn.to_string(),
                    lost.to_string(),
                    mean,
                    failed.to_string()
                ],
                "{me} against {opponent}"
            );
        }
        let across = charts(&page, "chart across");
        assert_eq!(across.len(), 1, "{page}");
        assert_eq!(across[0].matches(r#"class="bar""#).count(), opponents.len());
        // Error and timeout rates over its moves.
        let mine: Vec<(usize, &Value)> = records
            .iter()
            .filter_map(|(players, r)| players.iter().position(|p| *p == me).map(|k| (k, r)))
            .collect();
        let moves: usize = mine.iter().map(|(_, r)| length(r)).sum();
        let errors: usize = mine
            .iter()
            .map(|(k, r)| {
                r["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|e| !e[*k].as_str().unwrap().is_empty())
                    .count()
            })
            .sum();
        assert_eq!(
            element_text(&page, "error-rate", "dd"),
            format!("{} of its moves ({errors})", pct(errors, moves)),
            "{me}"
        );
        assert_eq!(
            element_text(&page, "timeout-rate", "dd"),
            "0% of its moves (0)",
            "{me}"
        );
        assert!(
            element_text(&page, "move-time", "dd").contains("of the play clock"),
            "{me}: {page}"
        );
        let json = s.get(&format!("/api/players/{me}/stats")).await.json();
        assert_eq!(json["matches"], mine.len(), "{json}");
        assert_eq!(json["moves"], moves, "{json}");
        assert_eq!(json["errors"], errors, "{json}");
    }
    // `wrong` erred on every move; `steady` on none.
    let page = s.get("/players/wrong").await.body;
    assert!(
        element_text(&page, "error-rate", "dd").starts_with("100% "),
        "{page}"
    );
    let page = s.get("/players/steady").await.body;
    assert!(
        element_text(&page, "error-rate", "dd").starts_with("0% "),
        "{page}"
    );
}
