use std::collections::HashSet;

use super::*;

fn game(seats: usize) -> TournamentGame {
    TournamentGame {
        id: 1,
        key: "g".into(),
        version: 1,
        seats,
    }
}

#[test]
fn a_round_robin_seats_every_ordered_choice_of_distinct_players_once_per_round() {
    let players: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let rows = schedule(Format::RoundRobin, &[game(2)], &players, 2, 7);
    assert_eq!(rows.len(), 12);
    assert_eq!(round_robin_size(3, &[game(2)]), 6);
    let round1: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.0 == 1)
        .map(|r| r.2.clone())
        .collect();
    let mut want: Vec<Vec<String>> = Vec::new();
    for x in &players {
        for y in &players {
            if x != y {
                want.push(vec![x.clone(), y.clone()]);
            }
        }
    }
    assert_eq!(round1, want);
    assert_eq!(round_robin_size(4, &[game(3), game(1)]), 24 + 4);
    // Seeds differ per match and are the same for the same tournament seed.
    let again = schedule(Format::RoundRobin, &[game(2)], &players, 2, 7);
    assert_eq!(rows, again);
    let seeds: HashSet<u64> = rows.iter().map(|r| r.3).collect();
    assert_eq!(seeds.len(), rows.len());
}

#[test]
fn random_pairings_seat_each_player_at_most_once_per_game_and_round() {
    let players: Vec<String> = (0..7).map(|i| format!("p{i}")).collect();
    let rows = schedule(Format::Random, &[game(2), game(3)], &players, 3, 1);
    // 7 players: 3 pairs and 2 triples per round.
    assert_eq!(rows.len(), 3 * (3 + 2));
    for round in 1..=3 {
        for (g, size) in [(0usize, 2usize), (1, 3)] {
            let seated: Vec<&String> = rows
                .iter()
                .filter(|r| r.0 == round && r.1 == g)
                .flat_map(|r| {
                    assert_eq!(r.2.len(), size);
                    r.2.iter()
                })
                .collect();
            let distinct: HashSet<&&String> = seated.iter().collect();
            assert_eq!(distinct.len(), seated.len());
        }
    }
    assert!(schedule(Format::Continuous, &[game(2)], &players, 3, 1).is_empty());
}

#[test]
fn formats_are_read_in_any_spelling_and_refused_by_name() {
    assert_eq!(Format::parse("Round-Robin").unwrap(), Format::RoundRobin);
    assert_eq!(Format::parse("continuous").unwrap(), Format::Continuous);
    let e = Format::parse("swiss").unwrap_err();
    assert!(e.message().contains("`swiss`"), "{}", e.message());
}

#[test]
fn this_process_is_not_gone_and_a_process_that_is_not_ggp_is() {
    let me = Host::this();
    assert!(!me.certainly_gone(&me.host, &me.boot, me.pid as i64));
    if !me.boot.is_empty() {
        // PID 1 is no `ggp`; a PID beyond the kernel's limit is no process.
        assert!(me.certainly_gone(&me.host, &me.boot, 1));
        assert!(me.certainly_gone(&me.host, &me.boot, 1 << 30));
        assert!(me.certainly_gone(&me.host, "another boot", 1));
    }
    assert!(!me.certainly_gone("another machine", &me.boot, 1));
}
