//! The games the project ships: checked clean, formatted, and playable to their end.

mod common;

use common::*;

/// The games written for `ggp serve` (and blind breakthrough, for GDL-II, and the GDL-III
/// ones), which `ggp check` finds nothing to say about.
const CLEAN: &[&str] = &[
    "blindbreakthrough.kif",
    "breakthrough6.kif",
    "connect4.kif",
    "cups.kif",
    "lightcycles.kif",
    "lightsout.kif",
    "muddy_children.kif",
    "number_guessing.kif",
    "russian_cards.kif",
    "tictactoe3.kif",
];

#[test]
fn every_shipped_game_is_clean_formatted_and_ends() {
    let dir = workspace().join("games");
    let mut games: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "kif"))
        .collect();
    games.sort();
    for name in CLEAN {
        assert!(games.iter().any(|g| g.ends_with(name)), "{name} is missing");
    }
    for game in &games {
        let path = game.to_str().unwrap();
        let name = game.file_name().unwrap().to_str().unwrap();
        let out = ggp(&["check", "--format", "json", path]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stdout));
        if CLEAN.contains(&name) {
            assert_eq!(text(&out.stdout), "", "{name} has diagnostics");
        }
        let out = ggp(&["fmt", "--check", path]);
        assert_eq!(out.status.code(), Some(0), "{name} is not formatted");
        // A random player per role; the match ends with goals.
        let rules = std::fs::read_to_string(game).unwrap();
        // GDL-II's `random` role is played by the manager: no player for it.
        let roles = rules
            .lines()
            .filter(|l| l.starts_with("(role ") && !l.eq_ignore_ascii_case("(role random)"))
            .count();
        let mut args = vec![
            "match",
            path,
            "--no-db",
            "--playclock",
            "1",
            "--startclock",
            "5",
        ];
        for _ in 0..roles {
            args.extend(["--player", "random"]);
        }
        let out = ggp(&args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("goal"), "{name}");
    }
}
