//! Channel seats: moves from inside the process, judged and timed like any player's.

use std::time::Duration;

use ggp_match::{
    MatchConfig, MatchError, MatchRecord, PlayerSpec, SeatChannel, SeatMessage, run_match,
    run_match_until,
};
use ggp_play::StrategyKind;
use tokio::sync::mpsc::UnboundedReceiver;

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

fn config(id: &str, play_clock: Duration) -> MatchConfig {
    MatchConfig {
        match_id: id.into(),
        game_name: "tictactoe".into(),
        rules: TICTACTOE.into(),
        start_clock: Duration::from_secs(5),
        play_clock,
        grace: Duration::from_millis(200),
        seed: 11,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    }
}

async fn play(config: MatchConfig, players: Vec<PlayerSpec>) -> MatchRecord {
    run_match(config, players, |_| {}, |_| async { Ok(()) })
        .await
        .unwrap()
        .record
}

/// Answers every turn with what `choose` makes of the legal moves (`None`: holds the turn open,
/// unanswered), and returns every message it was sent, as text, once the channel closes.
fn answer_with(
    mut messages: UnboundedReceiver<SeatMessage>,
    choose: impl Fn(&[String]) -> Option<String> + Send + 'static,
) -> tokio::task::JoinHandle<Vec<String>> {
    tokio::spawn(async move {
        let mut seen = Vec::new();
        let mut unanswered = Vec::new();
        while let Some(message) = messages.recv().await {
            match message {
                SeatMessage::Start { role, seat, .. } => seen.push(format!("start {role} {seat}")),
                SeatMessage::Turn(turn) => {
                    seen.push(format!("turn {} {}", turn.step, turn.legal.join(" ")));
                    match choose(&turn.legal) {
                        Some(chosen) => drop(turn.reply.send(chosen)),
                        None => unanswered.push(turn.reply),
                    }
                }
                SeatMessage::Stop { moves } => seen.push(format!("stop {moves:?}")),
                SeatMessage::Abort => seen.push("abort".into()),
            }
        }
        seen
    })
}

fn errors_of(record: &MatchRecord, player: usize) -> Vec<&str> {
    record
        .errors
        .iter()
        .map(|row| row[player].as_str())
        .filter(|e| !e.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_seat_plays_its_moves_under_the_clock() {
    let (seat, messages) = SeatChannel::new("human");
    // The last legal move, which the manager would never pick as `legal` does.
    let seen = answer_with(messages, |legal| legal.last().cloned());
    let record = play(
        config("seat.plays", Duration::from_secs(5)),
        vec![
            PlayerSpec::Channel(seat),
            PlayerSpec::Builtin(StrategyKind::Legal),
        ],
    )
    .await;
    let seen = seen.await.unwrap();
    assert!(record.is_completed);
    assert_eq!(record.player_names_from_host[0], "human");
    assert!(errors_of(&record, 0).is_empty(), "{:?}", record.errors);
    assert_eq!(seen[0], "start x 0");
    // A turn at every step, with the seat's legal moves as the rules spell them; the move it
    // chose is the one recorded.
    let turns: Vec<&String> = seen.iter().filter(|m| m.starts_with("turn")).collect();
    assert_eq!(turns.len(), record.moves.len());
    for (k, turn) in turns.iter().enumerate() {
        let chosen = turn.rsplit_once(' ').unwrap().1;
        assert!(turn.starts_with(&format!("turn {k} ")), "{turn}");
        assert!(
            record.moves[k][0].ends_with(chosen),
            "{turn} / {:?}",
            record.moves[k]
        );
    }
    assert!(turns[0].contains("(play 1 1)"), "{}", turns[0]);
    assert_eq!(
        seen.last().unwrap(),
        &format!("stop Some({:?})", record.moves.last().unwrap())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_or_late_move_from_a_channel_seat_is_substituted_and_recorded() {
    // Illegal at once.
    let (seat, messages) = SeatChannel::new("human");
    let seen = answer_with(messages, |_| Some("(play 9 9)".into()));
    let record = play(
        config("seat.illegal", Duration::from_secs(5)),
        vec![
            PlayerSpec::Channel(seat),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    drop(seen.await.unwrap());
    assert!(record.is_completed);
    let errors = errors_of(&record, 0);
    assert!(!errors.is_empty());
    // Only the steps where `x` had a real choice: `wait` is its only move otherwise, and
    // `(play 9 9)` is not it either.
    assert_eq!(errors.len(), record.moves.len());
    assert!(
        errors.iter().all(|e| *e == "illegal: (play 9 9)"),
        "{errors:?}"
    );

    // Never answers: every move is substituted when the clock and the grace run out.
    let (seat, messages) = SeatChannel::new("human");
    let seen = answer_with(messages, |_| None);
    let started = std::time::Instant::now();
    let record = play(
        config("seat.silent", Duration::ZERO),
        vec![
            PlayerSpec::Builtin(StrategyKind::Random),
            PlayerSpec::Channel(seat),
        ],
    )
    .await;
    drop(seen.await.unwrap());
    assert!(record.is_completed);
    let errors = errors_of(&record, 1);
    assert_eq!(errors.len(), record.moves.len());
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("timeout: no reply within 0.2 s")),
        "{errors:?}"
    );
    // Each step waited its clock, not more than a little beyond.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_seat_nobody_listens_to_loses_its_moves_not_the_match() {
    let (seat, messages) = SeatChannel::new("human");
    drop(messages);
    let record = play(
        config("seat.gone", Duration::from_secs(5)),
        vec![
            PlayerSpec::Channel(seat),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
    )
    .await;
    assert!(record.is_completed);
    assert!(record.start_errors[0].starts_with("connection: nobody is at the seat"));
    let errors = errors_of(&record, 0);
    assert_eq!(errors.len(), record.moves.len());
    assert!(errors.iter().all(|e| e.starts_with("connection: ")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_match_tells_its_channel_seats() {
    let (seat, mut messages) = SeatChannel::new("human");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let seen = tokio::spawn(async move {
        let mut seen = Vec::new();
        let mut held = Vec::new();
        let mut stop = Some(stop);
        while let Some(message) = messages.recv().await {
            match message {
                // Stop the match instead of answering the first turn.
                SeatMessage::Turn(turn) => {
                    seen.push(format!("turn {}", turn.step));
                    if let Some(stop) = stop.take() {
                        let _ = stop.send(());
                    }
                    // Keep the turn open: the manager must not wait for it.
                    held.push(turn.reply);
                }
                SeatMessage::Abort => seen.push("abort".into()),
                SeatMessage::Start { .. } => seen.push("start".into()),
                SeatMessage::Stop { .. } => seen.push("stop".into()),
            }
        }
        seen
    });
    let outcome = run_match_until(
        config("seat.stopped", Duration::from_secs(60)),
        vec![
            PlayerSpec::Channel(seat),
            PlayerSpec::Builtin(StrategyKind::Random),
        ],
        |_| {},
        |_| async { Ok(()) },
        async move {
            let _ = stopped.await;
            "the operator stopped it".to_string()
        },
    )
    .await;
    match outcome {
        Err(MatchError::Stopped(reason)) => assert_eq!(reason, "the operator stopped it"),
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.await.unwrap(), ["start", "turn 0", "abort"]);
}
