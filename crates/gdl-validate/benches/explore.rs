//! Exploration speed: states explored per second (looked at, and every joint move tried) on
//! the fast engine. Tic-tac-toe (the project's) is validated whole, its 5,478 states; connect
//! four (`../shared/corpus/games/base/connectFour.kif`, skipped without `../shared`) is
//! explored breadth first for its first 200,000 states, without playouts. One thread.
//! `ggp validate GAME --format json` gives the same figures (`explored`, `seconds`).

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gdl_reason::FastMachine;
use gdl_validate::Options;

fn explore(c: &mut Criterion, name: &str, text: &str, max_states: usize) {
    let checked = gdl_check::check(text);
    let options = Options {
        time: Duration::from_secs(600),
        max_states,
        playouts: Some(0),
        ..Options::default()
    };
    let mut machine = FastMachine::new(&checked).unwrap_or_else(|_| panic!("{name} builds"));
    let explored = gdl_validate::validate(&mut machine, &options).explored;
    let mut group = c.benchmark_group("explore");
    group.sample_size(10);
    group.throughput(Throughput::Elements(explored));
    group.bench_function(name, |b| {
        b.iter(|| {
            let report = gdl_validate::validate(&mut machine, &options);
            assert_eq!(report.explored, explored);
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    explore(
        c,
        "tictactoe",
        include_str!("../../../games/tictactoe.kif"),
        gdl_validate::DEFAULT_MAX_STATES,
    );
    if let Some(shared) = ggp_testdata::shared_or_skip("explore connectFour") {
        let path = shared.join("corpus/games/base/connectFour.kif");
        let text = std::fs::read_to_string(path).expect("connectFour.kif");
        explore(c, "connectFour", &text, 200_000);
    }
}

criterion_group!(explore_benches, benches);
criterion_main!(explore_benches);
