//! GDL-III's one keyword, `knows` (Thielscher, "GDL-III: A Proposal to Extend the Game
//! Description Language to General Epistemic Games", ECAI 2016): `(knows R P)`, role R knows
//! the proposition P, and `(knows P)`, P is common knowledge.
//!
//! The reader keeps a `knows` literal as a sentence whose last argument is a term, as it keeps
//! any sentence; this module is how every layer recognises the keyword in it and reads that
//! argument as the proposition it stands for. What the keyword may be applied to is the
//! checker's business (`gdl-check`, the `E017`–`E020` codes); docs/gdl3.md describes it all.

use crate::ast::{Sentence, Term, eq_ignore_case};

/// The keyword, in its canonical spelling.
pub const KNOWS: &str = "knows";

/// Whether `name` is the keyword, in any letter case.
pub fn is_knows(name: &str) -> bool {
    eq_ignore_case(name, KNOWS)
}

/// A `knows` literal taken apart: `(knows R P)` or `(knows P)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knows<'s, 'a> {
    /// The role that knows, or `None` for common knowledge.
    pub role: Option<&'s Term<'a>>,
    /// The proposition known, as written (a term in the reader's view).
    pub proposition: &'s Term<'a>,
}

impl<'s, 'a> Knows<'s, 'a> {
    /// The literal `sentence` if it is `knows` with one or two arguments. With any other number
    /// of arguments it is still the keyword, misused (see [`is_knows`]); the checker says so.
    pub fn of(sentence: &'s Sentence<'a>) -> Option<Knows<'s, 'a>> {
        if sentence.name.variable || !is_knows(sentence.name.text) {
            return None;
        }
        match &*sentence.args {
            [proposition] => Some(Knows {
                role: None,
                proposition,
            }),
            [role, proposition] => Some(Knows {
                role: Some(role),
                proposition,
            }),
            _ => None,
        }
    }

    /// The proposition as the sentence it stands for: `p` for the constant `p`, `(p a b)` for
    /// the function term `(p a b)`. `None` when it cannot be a sentence: a variable, a number,
    /// or a variable in the place of the name.
    pub fn sentence(&self) -> Option<Sentence<'a>> {
        term_as_sentence(self.proposition)
    }
}

/// A term read as the sentence it would be in a body: `None` for a variable, a number or a
/// function whose name is a variable.
pub fn term_as_sentence<'a>(term: &Term<'a>) -> Option<Sentence<'a>> {
    match term {
        Term::Variable(_) => None,
        Term::Constant(name) if crate::ast::is_number(name.text) => None,
        Term::Constant(name) => Some(Sentence {
            name: *name,
            args: Box::default(),
            parenthesized: false,
            span: name.span,
        }),
        Term::Function { name, args, span } if !name.variable => Some(Sentence {
            name: *name,
            args: args.clone(),
            parenthesized: true,
            span: *span,
        }),
        Term::Function { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Item, Literal};

    fn body_sentence(text: &str) -> Sentence<'_> {
        let parse = crate::parse(text);
        assert!(!parse.has_errors(), "{:?}", parse.diagnostics);
        let Item::Rule(rule) = &parse.description.items[0] else {
            panic!("not a rule")
        };
        let Literal::Atom(sentence) = &rule.body[0] else {
            panic!("not an atom")
        };
        sentence.clone()
    }

    #[test]
    fn both_forms_are_read_with_their_proposition() {
        let s = body_sentence("(<= (goal r 100) (KNOWS r (secret ?n)))");
        let k = Knows::of(&s).expect("knows");
        assert!(matches!(k.role, Some(Term::Constant(n)) if n.text == "r"));
        let p = k.sentence().expect("a sentence");
        assert_eq!(
            (p.name.text, p.args.len(), p.parenthesized),
            ("secret", 1, true)
        );
        let s = body_sentence("(<= (goal r 100) (knows done))");
        let k = Knows::of(&s).expect("knows");
        assert!(k.role.is_none());
        let p = k.sentence().expect("a sentence");
        assert_eq!((p.name.text, p.args.len()), ("done", 0));
    }

    #[test]
    fn other_shapes_are_not_taken_apart() {
        let three = body_sentence("(<= (goal r 100) (knows r p q))");
        assert!(Knows::of(&three).is_none());
        let none = body_sentence("(<= (goal r 100) (knows))");
        assert!(Knows::of(&none).is_none());
        let other = body_sentence("(<= (goal r 100) (know r p))");
        assert!(Knows::of(&other).is_none());
        let variable = body_sentence("(<= (goal r 100) (knows r ?p))");
        assert_eq!(Knows::of(&variable).unwrap().sentence(), None);
        let number = body_sentence("(<= (goal r 100) (knows r 7))");
        assert_eq!(Knows::of(&number).unwrap().sentence(), None);
    }
}
