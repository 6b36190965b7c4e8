//! Parsing speed: the largest corpus file (`ric2b-ggp-base/arithmetic-stupid.kif`, 425 KB) and the
//! whole corpus (944 files), one thread. Skips, saying so, without `../shared`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let Some(shared) = ggp_testdata::shared_or_skip("parse benchmark") else {
        return;
    };
    let largest =
        std::fs::read_to_string(shared.join("corpus/games/ric2b-ggp-base/arithmetic-stupid.kif"))
            .expect("arithmetic-stupid.kif");
    let corpus: Vec<String> = ggp_testdata::corpus_files(&shared)
        .iter()
        .map(|p| gdl_syntax::cst::decode(&std::fs::read(p).expect("corpus file")).0)
        .collect();
    let total: usize = corpus.iter().map(String::len).sum();

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(largest.len() as u64));
    group.bench_function("arithmetic-stupid.kif", |b| {
        b.iter(|| {
            gdl_syntax::parse(std::hint::black_box(&largest))
                .description
                .items
                .len()
        })
    });
    group.throughput(Throughput::Bytes(total as u64));
    group.sample_size(10);
    group.bench_function("whole corpus", |b| {
        b.iter(|| {
            corpus
                .iter()
                .map(|text| {
                    gdl_syntax::parse(std::hint::black_box(text))
                        .description
                        .items
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("format");
    group.throughput(Throughput::Bytes(largest.len() as u64));
    group.bench_function("arithmetic-stupid.kif", |b| {
        b.iter(|| gdl_syntax::format_text(std::hint::black_box(&largest)).map(|s| s.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
