//! Third-party parser and formatter expectations (`../shared/expectations/`): Griddle's
//! bracket scan, parse and indenter cases, and ggp-base's parsing case.

use std::path::Path;

use gdl_syntax::{format_text, parse};
use ggp_testdata::shared_or_skip;
use serde_json::Value;

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable expectations");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn griddle_parentheses_parse_and_format_cases() {
    let Some(shared) = shared_or_skip("griddle_parentheses_parse_and_format_cases") else {
        return;
    };
    let dir = shared.join("expectations/gdl-validation");
    let cases = load(&dir.join("validator_cases.json"));
    let mut ran = 0;
    for case in cases["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().unwrap();
        let input = dir.join(case["input"].as_str().unwrap());
        let text = std::fs::read_to_string(&input).unwrap();
        let expected = &case["expected"];
        match (
            case["operation"].as_str().unwrap(),
            case["validator"].as_str(),
        ) {
            ("validate", Some("parentheses")) => {
                // Griddle's bracket scan maps to our bracket codes: an unclosed `(` (S001), a
                // `)` that closes nothing (S002), a `(` opening a list in the place of a name,
                // i.e. `((` (S005). Other errors in these files (`0123` as a relation name)
                // are real but outside that scan.
                let errors: Vec<_> = parse(&text)
                    .diagnostics
                    .into_iter()
                    .filter(|d| d.is_error() && matches!(d.code, "S001" | "S002" | "S005"))
                    .collect();
                assert_eq!(
                    errors.len() as u64,
                    expected["problem_count"].as_u64().unwrap(),
                    "{id}: {errors:?}"
                );
                if let Some(span) = expected.get("if_lf_line_endings").or(Some(expected))
                    && let Some(start) = span["start"].as_u64()
                {
                    assert_eq!(errors[0].span.start as u64, start, "{id}");
                    assert_eq!(
                        errors[0].span.end as u64,
                        span["end"].as_u64().unwrap(),
                        "{id}"
                    );
                }
            }
            ("parse", _) => {
                let parsed = parse(&text);
                assert!(!parsed.has_errors(), "{id}: {:?}", parsed.diagnostics);
                if let Some(count) = expected["top_level_count"].as_u64() {
                    assert_eq!(parsed.tree.top_items().count() as u64, count, "{id}");
                }
            }
            ("format", _) => {
                let after = dir.join(expected["output_equals_file"].as_str().unwrap());
                let after = std::fs::read_to_string(after).unwrap();
                // Documented style choice: our output ends with a newline; Griddle's "after"
                // files have none. Everything else must match byte for byte.
                let formatted = format_text(&text).expect("formats");
                assert_eq!(formatted, format!("{after}\n"), "{id}");
                assert_eq!(format_text(&after).unwrap(), formatted, "{id}: idempotent");
            }
            _ => continue, // validation by the checker: see gdl-check's tests
        }
        ran += 1;
    }
    assert_eq!(
        ran, 10,
        "six bracket cases, two parse cases, two formatter pairs"
    );
}

#[test]
fn ggp_base_parse_case_counts_top_level_forms() {
    let Some(shared) = shared_or_skip("ggp_base_parse_case_counts_top_level_forms") else {
        return;
    };
    let cases = load(&shared.join("expectations/ggp-base/extra_cases.json"));
    let case = cases["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "parse-comments-and-rules")
        .expect("the parse case");
    let text = case["input_text"].as_str().unwrap();
    let parsed = parse(text);
    assert!(!parsed.has_errors());
    assert_eq!(
        parsed.description.items.len() as u64,
        case["expected"]["top_level_count"].as_u64().unwrap()
    );
}
