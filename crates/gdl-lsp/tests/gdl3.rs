//! The language server on GDL-III: hovering `knows` explains the keyword (in prefix and in
//! infix), a valid GDL-III game gets no diagnostic, and a proposition inside `knows` is a
//! relation a hover describes as one.

use gdl_lsp::analysis::Analysis;
use gdl_lsp::document::{Document, Notation};
use gdl_lsp::features::hover;

const GAME: &str = "(role guesser)
(init (chosen 1))
(<= (legal guesser (guess ?n)) (true (chosen ?n)))
(<= (next (chosen ?n)) (true (chosen ?n)))
(<= (secret ?n) (true (chosen ?n)))
(<= won (knows guesser (secret ?_n)))
(<= terminal won)
(<= (goal guesser 100) won)
(<= (goal guesser 0) (not won))
";

fn hover_at(text: &str, notation: Notation, word: &str) -> String {
    let analysis = Analysis::new(&Document::new(text.to_string(), 1, notation));
    let offset = text.find(word).expect("the word is in the text") as u32 + 1;
    let hover = hover(&analysis, offset).expect("a hover");
    match hover.contents {
        lsp_types::HoverContents::Markup(m) => m.value,
        other => panic!("not markup: {other:?}"),
    }
}

#[test]
fn hovering_knows_explains_the_keyword() {
    let text = hover_at(GAME, Notation::Prefix, "knows");
    assert!(text.starts_with("**`knows`**"), "{text}");
    assert!(text.contains("GDL-III"), "{text}");
    assert!(text.contains("common knowledge"), "{text}");
    let analysis = Analysis::new(&Document::new(GAME.to_string(), 1, Notation::Prefix));
    assert!(
        analysis.diagnostics.is_empty(),
        "{:#?}",
        analysis.diagnostics
    );
}

#[test]
fn hovering_knows_in_infix_explains_the_keyword() {
    let infix = gdl_syntax::prefix_to_infix(GAME).expect("infix");
    let text = hover_at(&infix, Notation::Infix, "knows");
    assert!(text.starts_with("**`knows`**"), "{text}");
}

#[test]
fn the_proposition_known_is_a_relation() {
    let text = hover_at(GAME, Notation::Prefix, "secret ?_n");
    assert!(
        text.starts_with("**relation** `secret` — arity 1"),
        "{text}"
    );
}

#[test]
fn knows_is_offered_as_a_keyword() {
    let text = "(<= won (kn";
    let analysis = Analysis::new(&Document::new(text.to_string(), 1, Notation::Prefix));
    let items = gdl_lsp::features::completion(&analysis, text.len() as u32);
    let knows = items
        .iter()
        .find(|i| i.label == "knows")
        .expect("knows is offered");
    assert_eq!(knows.kind, Some(lsp_types::CompletionItemKind::KEYWORD));
}
