//! Any text through the infix parser: never panics; what converts to prefix parses cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, _) = gdl_syntax::cst::decode(data);
    if let Ok(prefix) = gdl_syntax::infix::infix_to_prefix(&text) {
        assert!(!gdl_syntax::parse(&prefix).has_errors(), "converted text parses");
    }
});
