//! Reasoner speed on the six games of issue 5 (`../shared/corpus/games/base/`): one random
//! playout from the initial state (goals read at the end) with the fast engine and with the
//! reference engine; batches of `4 * LANES` playouts with the fast engine's bit-parallel
//! playouts (throughput in playouts); and the fast engine's build (parse, check, ground,
//! network). One thread.
//! Skips, saying so, without `../shared`. `ggp bench GAME --seconds N` gives playouts per
//! second in the gdl-perf format.

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use gdl_reason::fast::LANES;
use gdl_reason::{FastMachine, ReferenceMachine, StateMachine, Until};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const GAMES: [&str; 6] = [
    "ticTacToe",
    "connectFour",
    "breakthrough",
    "reversi",
    "hex",
    "speedChess",
];

/// Playouts are cut here (none of the six games comes near it).
const MAX_STEPS: usize = 10_000;

/// One random playout from the initial state, goals read at the end.
fn bench_playout<M: StateMachine>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    engine: &str,
    game: &str,
    mut machine: M,
) {
    let s0 = machine.initial_state().expect("an initial state");
    let mut rng = SmallRng::seed_from_u64(1);
    group.bench_function(BenchmarkId::new(engine, game), |b| {
        b.iter(|| {
            machine
                .random_playout(&s0, MAX_STEPS, &mut rng)
                .expect("a playout")
        })
    });
}

fn bench(c: &mut Criterion) {
    let Some(shared) = ggp_testdata::shared_or_skip("playouts benchmark") else {
        return;
    };
    let games: Vec<(&str, String)> = GAMES
        .iter()
        .map(|g| {
            let path = shared.join(format!("corpus/games/base/{g}.kif"));
            let bytes = std::fs::read(&path).expect("a corpus game");
            (*g, gdl_syntax::cst::decode(&bytes).0)
        })
        .collect();

    let mut group = c.benchmark_group("playout");
    for (name, text) in &games {
        let fast = FastMachine::from_text(text).expect("the fast engine builds it");
        bench_playout(&mut group, "fast", name, fast);
    }
    group.sample_size(10);
    for (name, text) in &games {
        let reference = ReferenceMachine::from_text(text).expect("the reference engine");
        bench_playout(&mut group, "reference", name, reference);
    }
    group.finish();

    let mut group = c.benchmark_group("lanes");
    group.sample_size(10);
    let batch = 4 * LANES as u64;
    group.throughput(Throughput::Elements(batch));
    for (name, text) in &games {
        let mut fast = FastMachine::from_text(text).expect("the fast engine builds it");
        let s0 = fast.initial_state().expect("an initial state");
        let mut rng = SmallRng::seed_from_u64(1);
        group.bench_function(BenchmarkId::new("fast", name), |b| {
            b.iter(|| {
                fast.playouts(&s0, Until::Playouts(batch), MAX_STEPS, &mut rng)
                    .expect("playouts")
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for (name, text) in &games {
        group.bench_function(BenchmarkId::new("fast", name), |b| {
            b.iter(|| FastMachine::from_text(std::hint::black_box(text)).expect("it builds"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
