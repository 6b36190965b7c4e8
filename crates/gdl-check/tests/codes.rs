//! One minimal input per check code (`codes/<CODE>.kif`) and the rendering of every diagnostic
//! `ggp check` gives it (`codes/<CODE>.out`). Regenerate the renderings with
//! `UPDATE_EXPECT=1 cargo test -p gdl-check --test codes` and review the diff.

use std::path::Path;

use gdl_check::codes::CHECK_CODES;
use gdl_syntax::SourceFile;

#[test]
fn every_check_code_has_a_case_and_renders_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codes");
    let mut mismatches = Vec::new();
    for info in CHECK_CODES {
        let input = dir.join(format!("{}.kif", info.code));
        let text = std::fs::read_to_string(&input)
            .unwrap_or_else(|_| panic!("no test input for {}", info.code));
        let checked = gdl_check::check(&text);
        assert!(
            checked
                .diagnostics
                .iter()
                .any(|d| d.code == info.code && d.severity == info.severity),
            "{} does not produce {} ({}): {:#?}",
            input.display(),
            info.code,
            info.severity,
            checked.diagnostics
        );
        for d in &checked.diagnostics {
            assert!(
                gdl_check::codes::info(d.code).is_some_and(|c| c.severity == d.severity),
                "{} is not registered with severity {}",
                d.code,
                d.severity
            );
        }
        let file = SourceFile::new(format!("codes/{}.kif", info.code), text.clone());
        let rendered: String = checked
            .diagnostics
            .iter()
            .map(|d| file.render(d, false) + "\n\n")
            .collect();
        let expected_path = dir.join(format!("{}.out", info.code));
        if ggp_testdata::differs_from_recorded(&expected_path, &rendered).is_some() {
            mismatches.push(format!("{}:\n{rendered}", info.code));
        }
    }
    assert!(
        mismatches.is_empty(),
        "renderings differ (UPDATE_EXPECT=1 to accept):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn the_base_game_of_the_cases_is_clean() {
    let text = "(role robot)
(init (cell a))
(<= (legal robot (go ?x)) (true (cell ?x)))
(<= (next (cell ?x)) (does robot (go ?x)))
(<= terminal (true (cell b)))
(goal robot 100)";
    let checked = gdl_check::check(text);
    assert!(checked.diagnostics.is_empty(), "{:#?}", checked.diagnostics);
}

/// Every code the toolkit can report has its page in `docs/codes/`, titled with its code and
/// name, and listed in the index.
#[test]
fn every_code_has_a_documentation_page() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/codes");
    let index = std::fs::read_to_string(docs.join("README.md")).expect("docs/codes/README.md");
    let codes = gdl_syntax::codes::SYNTAX_CODES
        .iter()
        .map(|c| (c.code, c.name))
        .chain(
            gdl_check::codes::CHECK_CODES
                .iter()
                .map(|c| (c.code, c.name)),
        );
    let mut missing = Vec::new();
    for (code, name) in codes {
        let page = std::fs::read_to_string(docs.join(format!("{code}.md"))).unwrap_or_default();
        let title = format!("# {code} {name}\n");
        if !page.starts_with(&title) || !index.contains(&format!("{code}.md")) {
            missing.push(code);
        }
    }
    assert!(
        missing.is_empty(),
        "codes without a page titled `# CODE name` listed in the index: {missing:?}"
    );
}
