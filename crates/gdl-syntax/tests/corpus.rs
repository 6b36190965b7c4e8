//! Every corpus game parses without errors, formats idempotently, survives the round trips
//! prefix → infix → prefix and parse → format → parse, and compacts (as sent to players) to one
//! line without comments that means the same sentences, spelled the same.

use gdl_syntax::{
    Diagnostic, SourceFile, compact_text, cst, format_text, infix, parse, prefix_to_infix,
};
use ggp_testdata::{corpus_files, relative, shared_or_skip};

/// Canonical text of every GDL item, lower case, for comparing two parses.
fn sentences(text: &str) -> Vec<String> {
    spelled_sentences(text)
        .into_iter()
        .map(|s| s.to_ascii_lowercase())
        .collect()
}

/// Every GDL item as written (letter case kept), for comparing two parses.
fn spelled_sentences(text: &str) -> Vec<String> {
    let parsed = parse(text);
    parsed
        .description
        .items
        .iter()
        .map(|item| strip_spans(&format!("{item:?}")))
        .collect()
}

/// Removes `span: a..b` from a Debug rendering, so two parses of different texts compare.
fn strip_spans(debug: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find("span: ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 6..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn report(name: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    let file = SourceFile::new(name, text);
    diagnostics
        .iter()
        .take(3)
        .map(|d| file.render(d, false))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn corpus_round_trips() {
    let Some(shared) = shared_or_skip("corpus_round_trips") else {
        return;
    };
    let files = corpus_files(&shared);
    assert_eq!(files.len(), 944, "the corpus has 944 games");
    let mut failures = Vec::new();
    for path in &files {
        let name = relative(&shared, path).into_owned();
        let bytes = std::fs::read(path).expect("readable corpus file");
        let (text, decode_errors) = cst::decode(&bytes);
        assert!(decode_errors.is_empty(), "{name}: not UTF-8");
        let parsed = parse(&text);
        if parsed.has_errors() {
            failures.push(format!(
                "{name}: parse errors\n{}",
                report(&name, &text, &parsed.diagnostics)
            ));
            continue;
        }
        let compact = compact_text(&text).expect("no errors");
        if compact.contains([';', '\n', '\r'])
            || parse(&compact).has_errors()
            || spelled_sentences(&compact) != spelled_sentences(&text)
        {
            failures.push(format!(
                "{name}: the compact text is not the same sentences on one line"
            ));
            continue;
        }
        let formatted = format_text(&text).expect("no errors");
        let twice = format_text(&formatted).unwrap_or_else(|d| {
            panic!(
                "{name}: formatted text has errors\n{}",
                report(&name, &formatted, &d)
            )
        });
        if formatted != twice {
            failures.push(format!(
                "{name}: fmt is not idempotent\n{}",
                first_difference(&formatted, &twice)
            ));
            continue;
        }
        if sentences(&text) != sentences(&formatted) {
            failures.push(format!("{name}: formatting changed the sentences"));
            continue;
        }
        let infix_text = match prefix_to_infix(&text) {
            Ok(t) => t,
            Err(d) => {
                failures.push(format!(
                    "{name}: to infix failed\n{}",
                    report(&name, &text, &d)
                ));
                continue;
            }
        };
        let back = match infix::infix_to_prefix(&infix_text) {
            Ok(t) => t,
            Err(d) => {
                failures.push(format!(
                    "{name}: infix does not parse back\n{}",
                    report(&format!("{name} (infix)"), &infix_text, &d)
                ));
                continue;
            }
        };
        if !back.eq_ignore_ascii_case(&formatted) {
            failures.push(format!(
                "{name}: prefix → infix → prefix differs from fmt\n{}",
                first_difference(&formatted.to_ascii_lowercase(), &back.to_ascii_lowercase())
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}\n\n{}",
        failures.len(),
        files.len(),
        failures
            .iter()
            .map(|f| f.lines().next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n"),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

fn first_difference(a: &str, b: &str) -> String {
    for (k, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  - {x}\n  + {y}", k + 1);
        }
    }
    format!(
        "lengths differ: {} vs {} lines",
        a.lines().count(),
        b.lines().count()
    )
}
