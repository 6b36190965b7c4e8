//! Every reference trace in `../shared/conformance/traces/` replays identically with the
//! reference engine (lists compared as sets). `GGP_TRACE_FILTER=substring` runs a subset while
//! debugging; the full run is the test.

use std::path::{Path, PathBuf};

use gdl_reason::ReferenceMachine;
use gdl_reason::trace::{Moves, json_line, parse_moves, replay, role_names};
use ggp_testdata::{parallel_map, shared_or_skip};
use serde_json::Value;

/// The game, moves and expected trace of every trace file.
fn cases(shared: &Path) -> Vec<(PathBuf, PathBuf, PathBuf)> {
    let traces = shared.join("conformance/traces");
    let filter = std::env::var("GGP_TRACE_FILTER").unwrap_or_default();
    let mut out = Vec::new();
    for source in std::fs::read_dir(&traces).unwrap().flatten() {
        for entry in std::fs::read_dir(source.path()).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let source_name = source.file_name();
                let stem = path.file_stem().unwrap().to_owned();
                let game = shared
                    .join("corpus/games")
                    .join(&source_name)
                    .join(format!("{}.kif", stem.to_string_lossy()));
                if path.to_string_lossy().contains(&filter) {
                    out.push((game, path.with_extension("moves"), path));
                }
            }
        }
    }
    out.sort();
    out
}

/// Compares one expected line with one produced line, lists as sets.
fn same_line(expected: &Value, got: &Value) -> bool {
    fn norm(v: &Value) -> Value {
        match v {
            Value::Array(items) => {
                let mut items: Vec<Value> = items.iter().map(norm).collect();
                items.sort_by_key(|i| i.to_string());
                items.dedup();
                Value::Array(items)
            }
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), norm(v))).collect())
            }
            other => other.clone(),
        }
    }
    // `moves` is ordered by role, not a set.
    let moves_equal = expected.get("moves") == got.get("moves");
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().map(|m| m.remove("moves"));
        norm(&v)
    };
    moves_equal && strip(expected) == strip(got)
}

fn check_trace(game: &Path, moves: &Path, expected: &Path) -> Result<(), String> {
    let text = std::fs::read(game).map_err(|e| format!("{}: {e}", game.display()))?;
    let (text, _) = gdl_syntax::cst::decode(&text);
    let mut limits = gdl_reason::reference::Limits::default();
    if let Ok(seconds) = std::env::var("GGP_TRACE_STATE_TIMEOUT") {
        limits.time = Some(std::time::Duration::from_secs_f64(seconds.parse().unwrap()));
    }
    let checked = gdl_check::check(&text);
    let mut machine = ReferenceMachine::with_limits(&checked, limits).map_err(|d| {
        format!(
            "refused: {}",
            d.iter()
                .map(|d| format!("{} {}", d.code, d.message))
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    let moves_text = std::fs::read_to_string(moves).map_err(|e| e.to_string())?;
    let joints = parse_moves(&mut machine, &moves_text)?;
    let roles = role_names(&machine);
    let mut lines = Vec::new();
    let outcome = replay::<_, rand::rngs::StdRng>(&mut machine, Moves::Given(&joints), |step| {
        lines.push(json_line(&roles, &step));
        Ok(())
    });
    if let Err(e) = outcome {
        return Err(format!("replay failed: {e}"));
    }
    let expected_text = std::fs::read_to_string(expected).map_err(|e| e.to_string())?;
    let expected_lines: Vec<&str> = expected_text.lines().collect();
    if expected_lines.len() != lines.len() {
        return Err(format!(
            "{} lines expected, {} produced",
            expected_lines.len(),
            lines.len()
        ));
    }
    for (k, (e, g)) in expected_lines.iter().zip(&lines).enumerate() {
        let e: Value = serde_json::from_str(e).map_err(|x| x.to_string())?;
        let g: Value = serde_json::from_str(g).map_err(|x| x.to_string())?;
        if !same_line(&e, &g) {
            return Err(format!(
                "line {} differs:\n  expected {e}\n  produced {g}",
                k + 1
            ));
        }
    }
    Ok(())
}

#[test]
fn every_reference_trace_replays_identically() {
    let Some(shared) = shared_or_skip("every_reference_trace_replays_identically") else {
        return;
    };
    let all = cases(&shared);
    let mut failures: Vec<String> = parallel_map(&all, |(game, moves, expected)| {
        check_trace(game, moves, expected)
            .err()
            .map(|e| format!("{}: {e}", expected.display()))
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
    if std::env::var("GGP_TRACE_FILTER").is_err() {
        assert_eq!(all.len(), 900, "every trace");
    }
}
