//! GDL-II percepts on both engines: along a recorded random playout of each game, every
//! role's percepts of every joint move played (`StateMachine::all_percepts`), and, for scale,
//! the next states of the same steps. One iteration covers the whole playout; criterion's
//! throughput is in steps. Monty Hall is `games/montyhall.kif`; the others come from
//! `../shared/corpus/gdl2` (skipped, saying so, without it). One thread.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gdl_reason::{FastMachine, ReferenceMachine, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const CORPUS: [&str; 4] = ["kriegTTT_5x5", "mastermind", "stratego", "backgammon"];

/// The states and joint moves (as text) of one random playout, at most 200 steps.
fn trajectory(text: &str) -> Vec<Vec<String>> {
    let mut m = FastMachine::from_text(text).expect("the fast engine builds it");
    let mut rng = SmallRng::seed_from_u64(3);
    let mut state = m.initial_state().unwrap();
    let mut joints = Vec::new();
    for _ in 0..200 {
        if m.is_terminal(&state).unwrap() {
            break;
        }
        let joint = m.random_joint_move(&state, &mut rng).unwrap();
        joints.push(
            joint
                .iter()
                .map(|&t| m.terms().text(m.symbols(), t))
                .collect(),
        );
        state = m.next_state(&state, &joint).unwrap();
    }
    joints
}

/// The states along the playout and its joint moves, on `m`.
fn replay<M: StateMachine>(m: &mut M, joints: &[Vec<String>]) -> (Vec<M::State>, Vec<Vec<TermId>>) {
    let mut state = m.initial_state().unwrap();
    let mut states = Vec::new();
    let mut moves = Vec::new();
    for joint in joints {
        let joint: Vec<TermId> = joint.iter().map(|t| m.intern(t).unwrap()).collect();
        states.push(state.clone());
        state = m.next_state(&state, &joint).unwrap();
        moves.push(joint);
    }
    (states, moves)
}

fn bench_engine<M: StateMachine>(
    c: &mut Criterion,
    engine: &str,
    game: &str,
    mut m: M,
    joints: &[Vec<String>],
) {
    let (states, moves) = replay(&mut m, joints);
    let mut group = c.benchmark_group("gdl2");
    group.sample_size(10);
    group.throughput(Throughput::Elements(states.len() as u64));
    group.bench_function(BenchmarkId::new(format!("percepts/{engine}"), game), |b| {
        b.iter(|| {
            for (s, j) in states.iter().zip(&moves) {
                m.all_percepts(s, j).unwrap();
            }
        })
    });
    group.bench_function(BenchmarkId::new(format!("next/{engine}"), game), |b| {
        b.iter(|| {
            for (s, j) in states.iter().zip(&moves) {
                m.next_state(s, j).unwrap();
            }
        })
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let mut games = vec![(
        "montyhall".to_string(),
        include_str!("../../../games/montyhall.kif").to_string(),
    )];
    if let Some(shared) = ggp_testdata::shared_or_skip("percepts benchmark (corpus games)") {
        for g in CORPUS {
            let path = shared.join(format!("corpus/gdl2/uwa-hyperplayer/{g}.kif"));
            let bytes = std::fs::read(&path).expect("a corpus game");
            games.push((g.to_string(), gdl_syntax::cst::decode(&bytes).0));
        }
    }
    for (name, text) in &games {
        let joints = trajectory(text);
        let fast = FastMachine::from_text(text).expect("the fast engine builds it");
        bench_engine(c, "fast", name, fast, &joints);
        let reference = ReferenceMachine::from_text(text).expect("the reference engine");
        bench_engine(c, "reference", name, reference, &joints);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
