//! What the corpus-wide reasoner tests share: the conformance traces and how to compare a
//! replay with one.

use std::path::{Path, PathBuf};

use gdl_reason::StateMachine;
use gdl_reason::trace::{Moves, json_line, parse_moves, replay, role_names};
use serde_json::Value;

/// The game, moves and expected trace of every trace file whose path contains `filter`.
pub fn trace_cases(shared: &Path, filter: &str) -> Vec<(PathBuf, PathBuf, PathBuf)> {
    let traces = shared.join("conformance/traces");
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
                if path.to_string_lossy().contains(filter) {
                    out.push((game, path.with_extension("moves"), path));
                }
            }
        }
    }
    out.sort();
    out
}

/// Compares one expected line with one produced line, lists as sets.
pub fn same_line(expected: &Value, got: &Value) -> bool {
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

/// Replays a trace's moves on `machine` and compares every line with the trace's.
pub fn check_trace<M: StateMachine>(
    machine: &mut M,
    moves: &Path,
    expected: &Path,
) -> Result<(), String> {
    let moves_text = std::fs::read_to_string(moves).map_err(|e| e.to_string())?;
    let joints = parse_moves(machine, &moves_text).map_err(|e| e.to_string())?;
    let roles = role_names(machine);
    let mut lines = Vec::new();
    let outcome = replay::<_, rand::rngs::StdRng>(machine, Moves::Given(&joints), |step| {
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

/// A game's text, decoded as the command-line tools decode it.
pub fn read_game(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    gdl_syntax::cst::decode(&bytes).0
}

/// The game's rules as clean S-expressions (`gdl_syntax::compact_text`: no comments, canonical
/// layout, the spelling kept), the key of `ggp_testdata::group_by` that brings the copies of a
/// game together (the corpus holds some in several collections); `None` where it does not
/// parse (such a file is alone).
#[allow(dead_code, reason = "the conformance test compares no copies")]
pub fn same_rules(path: &Path) -> Option<String> {
    gdl_syntax::compact_text(&read_game(path)).ok()
}
