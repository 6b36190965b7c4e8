//! The Game Manager under load, over loopback HTTP, every step committed to a SQLite database
//! (WAL, synchronous=FULL) before the next PLAY.
//!
//! - `matches/100 concurrent`: 100 tic-tac-toe matches at once between two HTTP players
//!   (the built-in random and legal strategies behind `ggp_play::serve`, in this process);
//!   the throughput line is matches per second. Players and manager share the machine.
//!   `100 concurrent, no database` is the same without recording.
//! - `manager time per step/*`: one match at a time; the time reported is the manager's own
//!   time per step ([`ggp_match::Timing::own`]: reading the rules, judging replies, computing
//!   states, recording; everything but waiting for the players), with and without the
//!   database.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use ggp_match::{Finished, MatchConfig, MatchRecord, PlayerSpec, Store, run_match};
use ggp_play::{PlayerConfig, StrategyKind, serve};
use tokio::runtime::Runtime;

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn config() -> MatchConfig {
    let k = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    MatchConfig {
        match_id: format!("bench.{}.{k}", std::process::id()),
        game_name: "tictactoe".into(),
        rules: TICTACTOE.into(),
        start_clock: Duration::from_secs(60),
        play_clock: Duration::from_secs(60),
        grace: Duration::from_secs(1),
        seed: k,
        max_steps: ggp_match::DEFAULT_MAX_STEPS,
        memory: None,
    }
}

fn player(runtime: &Runtime, kind: StrategyKind) -> String {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let config = PlayerConfig {
        name: "bench".into(),
        factory: kind.factory(1),
        margin: Duration::from_millis(100),
        log: false,
        limits: ggp_play::PlayerLimits::default(),
    };
    runtime.spawn(serve(listener, config, std::future::pending()));
    format!("http://{addr}")
}

async fn one(players: Vec<PlayerSpec>, store: Option<Store>) -> Finished {
    let mut writer = store.as_ref().map(Store::writer);
    let save = move |r: &MatchRecord| {
        let saved = writer.as_mut().map(|w| w.save(r));
        async move {
            match saved {
                Some(saved) => saved.await,
                None => Ok(()),
            }
        }
    };
    let finished = run_match(config(), players, |_| {}, save).await.unwrap();
    assert!(finished.record.is_completed);
    assert!(
        finished
            .record
            .errors
            .iter()
            .flatten()
            .all(String::is_empty)
    );
    finished
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let x = player(&runtime, StrategyKind::Random);
    let o = player(&runtime, StrategyKind::Legal);
    let players = vec![PlayerSpec::Url(x), PlayerSpec::Url(o)];
    let db = ggp_testdata::fresh_sqlite_file(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        "bench-matches.sqlite",
    );
    let store = Store::open(&ggp_match::DatabaseUrl::sqlite(db)).unwrap();

    let mut group = c.benchmark_group("matches");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Elements(100));
    for (name, store) in [
        ("100 concurrent", Some(store.clone())),
        ("100 concurrent, no database", None),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let all: Vec<_> = (0..100)
                        .map(|_| tokio::spawn(one(players.clone(), store.clone())))
                        .collect();
                    for m in all {
                        m.await.unwrap();
                    }
                })
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("manager time per step");
    group.sample_size(20);
    for (name, store) in [
        ("with the database", Some(store.clone())),
        ("no database", None),
    ] {
        group.bench_function(name, |b| {
            // One iteration is one step: play whole matches until there are enough steps, and
            // report the manager's own time scaled to the iterations asked for.
            b.iter_custom(|iters| {
                let (mut own, mut steps) = (Duration::ZERO, 0u64);
                while steps < iters {
                    let finished = runtime.block_on(one(players.clone(), store.clone()));
                    own += finished.timing.own();
                    steps += finished.timing.steps as u64;
                }
                own.mul_f64(iters as f64 / steps as f64)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
