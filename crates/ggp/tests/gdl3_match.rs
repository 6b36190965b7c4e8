//! `ggp match` plays every GDL-III game of `games/` with the built-in players: the manager
//! referees over histories (the knowledge machine), the players keep the histories they may
//! be in, and the match completes with every goal recorded and no error.

mod common;

use std::path::Path;

use common::{ggp, text};

/// The games, each with the number of roles the manager does not play (all but `random`).
const GAMES: [(&str, usize); 4] = [
    ("number_guessing", 1),
    ("muddy_children", 3),
    ("russian_cards", 3),
    ("cups", 1),
];

/// The built-in players, given to the roles in turn.
const PLAYERS: [&str; 3] = ["mcts", "sample", "random"];

#[test]
fn every_gdl3_game_is_played_to_the_end_by_built_in_players() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gdl3_match");
    std::fs::create_dir_all(&dir).unwrap();
    for (k, (name, seats)) in GAMES.into_iter().enumerate() {
        let game = format!("games/{name}.kif");
        let json = dir.join(format!("{name}.json"));
        let mut args = vec![
            "match".to_string(),
            game,
            "--no-db".into(),
            "--startclock".into(),
            "1".into(),
            "--playclock".into(),
            "1".into(),
            "--seed".into(),
            "3".into(),
            "--json".into(),
            json.to_str().unwrap().into(),
        ];
        for seat in 0..seats {
            args.push("--player".into());
            args.push(PLAYERS[(k + seat) % PLAYERS.len()].into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ggp(&args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(record["isCompleted"], true, "{name}");
        assert_eq!(record["isAborted"], false, "{name}");
        let roles = record["gameRoleNames"].as_array().unwrap().len();
        assert_eq!(roles, seats + 1, "{name}: the random role and the seats");
        let goals = record["goalValues"].as_array().unwrap();
        assert_eq!(goals.len(), roles, "{name}: {goals:?}");
        assert!(
            goals.iter().all(|g| g.as_u64().is_some_and(|g| g <= 100)),
            "{name}: {goals:?}"
        );
        // No player erred at the start or at any step (a late or illegal move is an error).
        for errors in record["errors"]
            .as_array()
            .unwrap()
            .iter()
            .chain(std::iter::once(&record["startErrors"]))
        {
            assert!(
                errors
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|e| e.as_str() == Some("")),
                "{name}: {errors}"
            );
        }
        assert!(
            record["moves"].as_array().unwrap().len() >= 2,
            "{name}: the random role's move and at least one of the players'"
        );
    }
}
