//! GDL-III in the server: the games of `games/` imported and tagged, a match of number
//! guessing played by a person through a seat's stream (its answers, then what it knows), and
//! in muddy children a seat shown only its own knowledge while the admin sees every role's.

use super::*;

on_both!(
    gdl3,
    a_gdl3_match_shows_a_seat_its_percepts_and_what_it_knows,
    a_gdl3_match_shows_a_seat_its_percepts_and_what_it_knows_on_postgresql
);

/// A site with the project's games, the GDL-III ones among them.
async fn gdl3_site(backend: Backend, name: &str) -> Site {
    let s = site(backend, name).await;
    let games = s.get("/api/games").await.json();
    let keys: Vec<&str> = games
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    for key in ["number_guessing", "muddy_children", "russian_cards", "cups"] {
        assert!(keys.contains(&key), "{key} is imported: {keys:?}");
    }
    s
}

/// Number guessing's tags, once its version is analysed.
async fn number_guessing_tags(s: &Site) -> Vec<String> {
    for _ in 0..600 {
        let games = s.get("/api/games").await.json();
        let game = games
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == "number_guessing")
            .expect("number guessing is imported")
            .clone();
        if !game["latest"]["traits"].is_null() {
            let tags = game["tags"].as_array().unwrap().iter();
            return tags.map(|t| t.as_str().unwrap().to_string()).collect();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("number guessing was not analysed within 30 s");
}

/// Creates a match; its id and the seats' tokens.
async fn create(s: &Site, game: &str, players: Value) -> (String, Vec<String>) {
    let a = s
        .api(
            "POST",
            "/api/matches",
            Some(ADMIN),
            json!({"game": game, "players": players, "startclock": 1, "playclock": 60, "seed": 5}),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let created = a.json();
    let tokens = created["seats"].as_array().unwrap().iter();
    let tokens = tokens.map(|t| t["token"].as_str().unwrap().to_string());
    (
        created["id"].as_str().unwrap().to_string(),
        tokens.collect(),
    )
}

/// What a role's step event says it knows: the propositions, common ones marked `*`.
fn known(step: &Value) -> Vec<String> {
    step["known"]
        .as_array()
        .unwrap_or_else(|| panic!("a GDL-III step says what the role knows: {step}"))
        .iter()
        .map(|k| {
            let what = k["what"].as_str().unwrap();
            if k["common"] == true {
                format!("*{what}")
            } else {
                what.to_string()
            }
        })
        .collect()
}

/// Plays the guesser of number guessing from its seat's stream: it bisects with the answers
/// it is told and guesses once it knows. Returns its step events.
async fn guess_from_the_stream(s: &Site, id: &str, token: &str) -> Vec<Value> {
    let path = format!("/api/matches/{id}/events?html=1");
    let (status, mut mine) = events_as(s, &path, Some(token)).await;
    assert_eq!(status, StatusCode::OK);
    let (mut lo, mut hi, mut pending) = (1u32, 8u32, None::<u32>);
    let mut steps = Vec::new();
    loop {
        let (name, data) = mine.next().await.expect("the stream goes on to its end");
        let text = data.to_string();
        // Never the random player's choice, nor the state.
        assert!(
            !text.contains("choose") && !text.contains("chosen"),
            "{text}"
        );
        match name.as_str() {
            "begin" => assert_eq!(data["view"], "role"),
            "step" => {
                let percepts = data["percepts"].as_array().unwrap();
                if let Some(m) = pending.take() {
                    match percepts.as_slice() {
                        [p] if p == "yes" => hi = m - 1,
                        [p] if p == "no" => lo = m,
                        other => panic!("an answer to (ask {m}): {other:?}"),
                    }
                }
                steps.push(data);
            }
            "turn" => {
                let Some(turn) = data["seats"].as_array().unwrap().first() else {
                    continue;
                };
                let mv = if lo < hi {
                    let m = (lo + hi).div_ceil(2);
                    pending = Some(m);
                    format!("(ask {m})")
                } else {
                    format!("(guess {lo})")
                };
                let a = s
                    .api(
                        "POST",
                        &format!("/api/matches/{id}/moves"),
                        Some(token),
                        json!({"move": mv, "step": turn["step"]}),
                    )
                    .await;
                assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
            }
            "end" => {
                assert_eq!(data["status"], "finished", "{data}");
                assert_eq!(data["goals"], json!([100, 100]), "{data}");
                return steps;
            }
            _ => {}
        }
    }
}

async fn gdl3(backend: Backend) {
    let s = gdl3_site(backend, "gdl3").await;
    let tags = number_guessing_tags(&s).await;
    for t in ["gdl-ii", "gdl-iii", "fast"] {
        assert!(tags.contains(&t.to_string()), "{tags:?}");
    }
    let search = s.get("/api/games?tags=gdl-iii").await.json();
    let found: Vec<&str> = search
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert!(found.contains(&"number_guessing"), "{found:?}");
    assert!(!found.contains(&"montyhall"), "{found:?}");

    // Number guessing, a person as the guesser: the admin's stream is opened first, read at
    // the end.
    let (id, tokens) = create(&s, "number_guessing", json!(["human"])).await;
    let all = format!("/api/matches/{id}/events");
    let (status, mut admin) = events_as(&s, &all, Some(ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let steps = guess_from_the_stream(&s, &id, &tokens[0]).await;
    assert_eq!(steps.len(), 5, "wait, three questions, the guess");
    let record = s.finished(&id).await;
    let n = record["moves"][0][0]
        .as_str()
        .unwrap()
        .trim_start_matches("(choose ")
        .trim_end_matches(')')
        .to_string();
    let knows = vec![format!("(secret {n})")];
    let seat_known: Vec<Vec<String>> = steps.iter().map(known).collect();
    assert_eq!(seat_known, [vec![], vec![], vec![], knows.clone(), knows]);
    let page = s.get(&format!("/matches/{id}")).await.body;
    assert!(page.contains(">GDL-III</span>"), "the match page's badge");
    let row = steps[3]["row"].as_str().unwrap();
    assert!(
        row.contains("you know") && row.contains(&format!("(secret {n})")),
        "{row}"
    );
    // The admin sees every atom, and the state.
    let mut admin_knows = Vec::new();
    while let Some((name, data)) = admin.next().await {
        match name.as_str() {
            "step" => admin_knows.push(data["knows"].clone()),
            "end" => break,
            _ => {}
        }
    }
    let atom = format!("(knows guesser (secret {n}))");
    assert_eq!(
        admin_knows,
        [
            json!([]),
            json!([]),
            json!([]),
            json!([atom]),
            json!([atom])
        ]
    );

    // Muddy children, a person as alice: her stream carries what she knows, never what bob or
    // carol know, which the admin's does.
    let (id, tokens) = create(&s, "muddy_children", json!(["human", "random", "random"])).await;
    let (_, mut admin) = events_as(&s, &format!("/api/matches/{id}/events"), Some(ADMIN)).await;
    let path = format!("/api/matches/{id}/events?html=1");
    let (_, mut alice) = events_as(&s, &path, Some(&tokens[0])).await;
    let mut alice_known = Vec::new();
    while let Some((name, data)) = alice.next().await {
        match name.as_str() {
            "step" => alice_known.push(known(&data)),
            "end" => break,
            _ => {}
        }
    }
    let mut others = 0;
    let mut expected = Vec::new();
    while let Some((name, data)) = admin.next().await {
        match name.as_str() {
            "step" => {
                let mut hers = Vec::new();
                for atom in data["knows"].as_array().unwrap() {
                    let atom = atom.as_str().unwrap();
                    if let Some(p) = atom.strip_prefix("(knows alice ") {
                        hers.push(p.strip_suffix(')').unwrap().to_string());
                    } else if let Some(p) = atom.strip_prefix("(knows (") {
                        hers.push(format!("*({}", p.strip_suffix(')').unwrap()));
                    } else {
                        // Another role's knowledge (bob's, carol's, random's).
                        others += 1;
                    }
                }
                expected.push(hers);
            }
            "end" => break,
            _ => {}
        }
    }
    assert!(
        others > 0,
        "the others know something: the test shows a filter"
    );
    assert!(
        alice_known.iter().any(|k| !k.is_empty()),
        "alice knows something"
    );
    assert_eq!(alice_known, expected);
}
