//! Every corpus game is checked without a panic, and the errors found are exactly those recorded
//! in `corpus_errors.txt` (one line per game and error code, with a count), each of which the
//! closing notes and `docs/corpus-errors.md` explain. Regenerate with
//! `UPDATE_EXPECT=1 cargo test -p gdl-check --test corpus` and review the diff.

use std::collections::BTreeMap;
use std::path::Path;

use ggp_testdata::{assert_recorded, corpus_files, relative, shared_or_skip};

#[test]
fn corpus_errors_are_the_recorded_ones() {
    let Some(shared) = shared_or_skip("corpus_errors_are_the_recorded_ones") else {
        return;
    };
    let mut found = String::new();
    for path in corpus_files(&shared) {
        let bytes = std::fs::read(&path).unwrap();
        let (text, _) = gdl_syntax::cst::decode(&bytes);
        let checked = gdl_check::check(&text);
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for d in checked.diagnostics.iter().filter(|d| d.is_error()) {
            *counts.entry(d.code).or_default() += 1;
        }
        for (code, count) in counts {
            let blocking = if gdl_check::blocks_reasoning(code) {
                "blocking"
            } else {
                "non-blocking"
            };
            found.push_str(&format!(
                "{}\t{code}\t{count}\t{blocking}\n",
                relative(&shared, &path)
            ));
        }
    }
    assert_recorded(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_errors.txt"),
        &found,
    );
}
