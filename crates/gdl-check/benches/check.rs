//! `ggp check` speed: parse, lower and check the whole corpus (944 games), one thread. Skips,
//! saying so, without `../shared`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let Some(shared) = ggp_testdata::shared_or_skip("check benchmark") else {
        return;
    };
    let corpus: Vec<String> = ggp_testdata::corpus_files(&shared)
        .iter()
        .map(|p| gdl_syntax::cst::decode(&std::fs::read(p).expect("corpus file")).0)
        .collect();
    let total: usize = corpus.iter().map(String::len).sum();
    let mut group = c.benchmark_group("check");
    group.throughput(Throughput::Bytes(total as u64));
    group.sample_size(10);
    group.bench_function("whole corpus", |b| {
        b.iter(|| {
            corpus
                .iter()
                .map(|text| {
                    gdl_check::check(std::hint::black_box(text))
                        .diagnostics
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
