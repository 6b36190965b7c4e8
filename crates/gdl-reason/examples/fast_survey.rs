//! Builds the fast engine for every game given on the command line and prints, per game, the
//! build time and sizes, or why it was refused. A development aid:
//! `cargo run --release -p gdl-reason --example fast_survey -- ../shared/corpus/games/*/*.kif`.
//! `GGP_SCALE=n` multiplies the budgets (atoms, rules, work, time) by `n`.

use gdl_reason::FastMachine;
use gdl_reason::fast::BuildError;

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                println!("{path}\tunreadable: {e}");
                continue;
            }
        };
        let (text, _) = gdl_syntax::cst::decode(&bytes);
        let checked = gdl_check::check(&text);
        let started = std::time::Instant::now();
        let scale: usize = std::env::var("GGP_SCALE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let d = gdl_reason::fast::FastLimits::default();
        let limits = gdl_reason::fast::FastLimits {
            max_atoms: d.max_atoms * scale,
            max_rules: d.max_rules * scale,
            max_work: d.max_work * scale as u64,
            time: d.time * scale as u32,
            ..d
        };
        match FastMachine::with_limits(&checked, limits) {
            Ok(m) => {
                let s = m.stats();
                println!(
                    "{path}\tok\t{:.1} ms\t(ground {:.1} ms)\tfluents {}\tmoves {}\tatoms {}\trules {}\tnodes {}\tedges {}",
                    s.build.as_secs_f64() * 1000.0,
                    s.ground.as_secs_f64() * 1000.0,
                    s.fluents,
                    s.moves,
                    s.atoms,
                    s.ground_rules,
                    s.nodes,
                    s.edges
                );
            }
            Err(BuildError::Invalid(_)) => println!("{path}\tinvalid"),
            Err(BuildError::Unsupported(r)) => println!(
                "{path}\trefused\t{:.1} ms\t{r}",
                started.elapsed().as_secs_f64() * 1000.0
            ),
        }
    }
}
