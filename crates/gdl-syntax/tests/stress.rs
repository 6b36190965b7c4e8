//! Hostile input: deep nesting, huge files, binary garbage. Nothing crashes, hangs or
//! overflows the stack; every problem is a diagnostic.

use gdl_syntax::{cst, format_text, infix, parse, prefix_to_infix};

#[test]
fn hundred_thousand_nested_parentheses() {
    let closed = format!("{}a{}", "(f ".repeat(100_000), ")".repeat(100_000));
    let parsed = parse(&closed);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(parsed.diagnostics[0].code, "S012", "too deep");
    assert!(format_text(&closed).is_err());

    let lists = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
    let parsed = parse(&lists);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(
        parsed.diagnostics[0].code, "S005",
        "`((`: a list where a name belongs"
    );

    let open = "(".repeat(100_000);
    let parsed = parse(&open);
    let unclosed: Vec<_> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.code == "S001")
        .collect();
    assert_eq!(
        unclosed.len(),
        10,
        "the outermost ten, the last counting the rest"
    );
    assert_eq!(unclosed[0].span.start, 0);
    assert!(unclosed[9].help.as_deref().unwrap().contains("99990 more"));

    let stray = ")".repeat(100_000);
    let parsed = parse(&stray);
    assert_eq!(parsed.diagnostics.len(), 1);
    // The first hundred shown, the rest counted.
    assert_eq!(parsed.diagnostics[0].related.len(), 99);
    assert!(
        parsed.diagnostics[0]
            .help
            .as_deref()
            .unwrap()
            .contains("99900 more `)` after these close nothing either")
    );

    // The infix parser recurses on parentheses too.
    for deep in [
        format!("p :- {}q{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("p :- {}q", "~".repeat(100_000)),
        format!("p({}a{})", "f(".repeat(100_000), ")".repeat(100_000)),
        format!("p :- {}q{}", "not(".repeat(100_000), ")".repeat(100_000)),
    ] {
        let errors = infix::infix_to_prefix(&deep).unwrap_err();
        assert!(errors.iter().any(|d| d.code == "I007"), "{errors:?}");
    }
}

#[test]
fn fifty_megabytes() {
    let rule = "(<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n)) (true (cell ?m ?n b))) ; c\n";
    let text = rule.repeat(50_000_000 / rule.len() + 1);
    assert!(text.len() > 50_000_000);
    let parsed = parse(&text);
    assert!(!parsed.has_errors());
    assert_eq!(parsed.description.items.len(), 50_000_000 / rule.len() + 1);
    let formatted = format_text(&text).expect("formats");
    assert!(formatted.len() > 50_000_000);
}

#[test]
fn binary_garbage() {
    // A deterministic pseudo-random byte stream (xorshift), biased towards parentheses.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut bytes = Vec::with_capacity(1 << 20);
    for _ in 0..1 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let b = (state >> 24) as u8;
        bytes.push(match b % 8 {
            0 => b'(',
            1 => b')',
            _ => b,
        });
    }
    let (text, _) = cst::decode(&bytes);
    let parsed = parse(&text);
    assert!(parsed.has_errors());
    let _ = prefix_to_infix(&text);
    let _ = infix::infix_to_prefix(&text);
}
