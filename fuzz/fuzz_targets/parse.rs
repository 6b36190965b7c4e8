//! Any bytes: decoding and parsing never panic; a text without errors formats idempotently and
//! converts to infix and back to the same formatted text (up to letter case).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, _) = gdl_syntax::cst::decode(data);
    let parsed = gdl_syntax::parse(&text);
    if parsed.has_errors() {
        return;
    }
    let formatted = gdl_syntax::format::format(&parsed.tree, &text);
    let again = gdl_syntax::format_text(&formatted).expect("formatted text parses");
    assert_eq!(again, formatted, "fmt is idempotent");
    if let Ok(infix) = gdl_syntax::prefix_to_infix(&text) {
        let back = gdl_syntax::infix::infix_to_prefix(&infix).expect("infix output parses back");
        assert_eq!(back.to_ascii_lowercase(), formatted.to_ascii_lowercase());
    }
});
