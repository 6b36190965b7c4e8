//! Builds the fast engine for every game given on the command line and prints, per game, the
//! build time and sizes, or why it was refused. A development aid:
//! `cargo run --release -p gdl-reason --example fast_survey -- ../shared/corpus/games/*/*.kif`.

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
        match FastMachine::new(&checked) {
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
