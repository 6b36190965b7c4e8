//! Every reference trace in `../shared/conformance/traces/` replays identically with the
//! reference engine (lists compared as sets). `GGP_TRACE_FILTER=substring` runs a subset while
//! debugging; the full run is the test. (`fast_corpus.rs` replays them with the fast engine.)

mod common;

use gdl_reason::ReferenceMachine;
use ggp_testdata::{parallel_map, shared_or_skip};

use common::{check_trace, read_game, trace_cases};

#[test]
fn every_reference_trace_replays_identically() {
    let Some(shared) = shared_or_skip("every_reference_trace_replays_identically") else {
        return;
    };
    let filter = std::env::var("GGP_TRACE_FILTER").unwrap_or_default();
    let all = trace_cases(&shared, &filter);
    let mut failures: Vec<String> = parallel_map(&all, |(game, moves, expected)| {
        let text = read_game(game);
        let mut limits = gdl_reason::reference::Limits::default();
        if let Ok(seconds) = std::env::var("GGP_TRACE_STATE_TIMEOUT") {
            limits.time = Some(std::time::Duration::from_secs_f64(seconds.parse().unwrap()));
        }
        let checked = gdl_check::check(&text);
        let result = match ReferenceMachine::with_limits(&checked, limits) {
            Ok(mut machine) => check_trace(&mut machine, moves, expected),
            Err(d) => Err(format!(
                "refused: {}",
                d.iter()
                    .map(|d| format!("{} {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        };
        result.err().map(|e| format!("{}: {e}", expected.display()))
    })
    .into_iter()
    .flatten()
    .collect();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} traces differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    if filter.is_empty() {
        assert_eq!(all.len(), 900, "every trace");
    }
}
