//! GDL-III's `knows` through the text layer: the formatter and the infix converters keep both
//! forms of the keyword, nested or negated, word for word, and so every GDL-III game of `games/`
//! (which is kept in the canonical layout, as `games/` is).

use std::path::Path;

const RULES: &str = "(role guesser)
(<= won (true (guessed ?n)) (knows guesser (secret ?n)))
(<= shared (knows (secret 3)))
(<= deep (knows guesser (knows guesser (secret 3))))
(<= unsure (not (knows guesser (secret 3))))
";

/// The `knows` literals of a text, as written.
fn knows_literals(text: &str) -> Vec<String> {
    let parse = gdl_syntax::parse(text);
    assert!(!parse.has_errors(), "{:?}", parse.diagnostics);
    let mut found = Vec::new();
    for item in &parse.description.items {
        if let gdl_syntax::Item::Rule(rule) = item {
            for literal in &rule.body {
                collect(literal, text, &mut found);
            }
        }
    }
    found
}

fn collect(literal: &gdl_syntax::Literal<'_>, text: &str, found: &mut Vec<String>) {
    match literal {
        gdl_syntax::Literal::Atom(s) if gdl_syntax::gdl3::Knows::of(s).is_some() => {
            let p = gdl_syntax::gdl3::Knows::of(s).unwrap().proposition;
            found.push(format!("{} {}", s.args.len(), p.span().text(text)));
        }
        gdl_syntax::Literal::Not { arg, .. } => collect(arg, text, found),
        _ => {}
    }
}

#[test]
fn formatting_keeps_every_knows() {
    let formatted = gdl_syntax::format_text(RULES).expect("formats");
    assert_eq!(knows_literals(&formatted), knows_literals(RULES));
    assert_eq!(knows_literals(RULES).len(), 4);
}

#[test]
fn infix_and_back_keeps_every_knows() {
    let infix = gdl_syntax::prefix_to_infix(RULES).expect("to infix");
    assert!(infix.contains("knows(guesser, secret(N))"), "{infix}");
    assert!(infix.contains("knows(secret(3))"), "{infix}");
    let back = gdl_syntax::infix::infix_to_prefix(&infix).expect("back to prefix");
    assert_eq!(
        knows_literals(&back),
        [
            "2 (secret ?n)",
            "1 (secret 3)",
            "2 (knows guesser (secret 3))",
            "2 (secret 3)"
        ]
    );
}

#[test]
fn the_games_written_here_survive_formatting_and_infix() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../games");
    let mut games = 0;
    for path in ggp_testdata::kif_files(&dir) {
        let text = std::fs::read_to_string(&path).expect("readable");
        let before = knows_literals(&text);
        if before.is_empty() {
            continue;
        }
        let formatted = gdl_syntax::format_text(&text).expect("formats");
        assert_eq!(
            formatted,
            text,
            "{} is not in the canonical layout",
            path.display()
        );
        let infix = gdl_syntax::prefix_to_infix(&text).expect("to infix");
        let back = gdl_syntax::infix::infix_to_prefix(&infix).expect("back");
        assert_eq!(knows_literals(&back), before, "{}", path.display());
        games += 1;
    }
    assert_eq!(games, 4);
}
