//! One minimal bad input per syntax code (`codes/<CODE>.kif`, or `.infix` for the infix
//! codes) and its expected rendering (`codes/<CODE>.out`). Regenerate the renderings with
//! `UPDATE_EXPECT=1 cargo test -p gdl-syntax --test codes` and review the diff.

use std::path::Path;

use gdl_syntax::codes::SYNTAX_CODES;
use gdl_syntax::{Diagnostic, SourceFile, cst, infix, parse, prefix_to_infix};

fn diagnostics_of(path: &Path) -> (String, Vec<Diagnostic>) {
    let bytes = std::fs::read(path).unwrap();
    let (text, mut diagnostics) = cst::decode(&bytes);
    if path.extension().is_some_and(|e| e == "infix") {
        diagnostics.extend(infix::infix_to_prefix(&text).err().unwrap_or_default());
    } else {
        let parsed = parse(&text);
        if parsed.has_errors() {
            diagnostics.extend(parsed.diagnostics);
        } else if let Err(errors) = prefix_to_infix(&text) {
            diagnostics.extend(errors);
        }
    }
    (text, diagnostics)
}

#[test]
fn every_syntax_code_has_a_case_and_renders_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codes");
    let mut mismatches = Vec::new();
    for info in SYNTAX_CODES {
        let input = ["kif", "infix"]
            .iter()
            .map(|ext| dir.join(format!("{}.{ext}", info.code)))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no test input for {}", info.code));
        let (text, diagnostics) = diagnostics_of(&input);
        assert!(
            diagnostics.iter().any(|d| d.code == info.code),
            "{} does not produce {}: {diagnostics:?}",
            input.display(),
            info.code
        );
        for d in &diagnostics {
            assert!(
                SYNTAX_CODES
                    .iter()
                    .any(|c| c.code == d.code && c.severity == d.severity),
                "{} is not registered with severity {}",
                d.code,
                d.severity
            );
        }
        let name = format!("codes/{}", input.file_name().unwrap().to_string_lossy());
        let file = SourceFile::new(name, text);
        let rendered: String = diagnostics
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
