//! Property: random GDL descriptions (nested terms, rules with every kind of literal, odd
//! names, comments, arbitrary whitespace) parse without errors, format idempotently to the same
//! sentences, and survive prefix → infix → prefix.

use gdl_syntax::{format_text, infix, parse, prefix_to_infix};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum T {
    Var(String),
    Const(String),
    Fun(String, Vec<T>),
}

#[derive(Clone, Debug)]
enum L {
    Atom(String, Vec<T>, bool),
    Not(Box<L>),
    Distinct(T, T),
    Or(Vec<L>),
    And(Vec<L>),
}

#[derive(Clone, Debug)]
enum Item {
    Fact(String, Vec<T>, bool),
    Rule(String, Vec<T>, bool, Vec<L>),
    Comment(String),
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,6}",
        Just("++".to_string()),
        Just("map+".to_string()),
        Just("-1".to_string()),
        Just("<".to_string()),
        Just("x-coord".to_string()),
        "[A-Z][A-Za-z]{0,5}",
        "[0-9]{1,3}",
    ]
}

fn relation() -> impl Strategy<Value = String> {
    // Numbers cannot name relations.
    name()
        .prop_filter("not a number", |n| !n.bytes().all(|b| b.is_ascii_digit()))
        .prop_filter("not a keyword", |n| {
            !["not", "or", "and", "distinct"].contains(&n.to_ascii_lowercase().as_str())
        })
}

fn var() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z][a-z0-9]{0,4}",
        Just("n++".to_string()),
        Just("3c".to_string()),
        Just("_x".to_string())
    ]
}

fn term() -> impl Strategy<Value = T> {
    let leaf = prop_oneof![
        var().prop_map(T::Var),
        name()
            .prop_filter("not a keyword", |n| {
                !["not", "or", "and", "distinct"].contains(&n.to_ascii_lowercase().as_str())
            })
            .prop_map(T::Const),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        (relation(), prop::collection::vec(inner, 0..3)).prop_map(|(n, a)| T::Fun(n, a))
    })
}

fn literal() -> impl Strategy<Value = L> {
    let atom = (
        relation(),
        prop::collection::vec(term(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(n, a, p)| {
            let p = p || !a.is_empty();
            L::Atom(n, a, p)
        });
    atom.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|l| L::Not(Box::new(l))),
            (term(), term()).prop_map(|(a, b)| L::Distinct(a, b)),
            prop::collection::vec(inner.clone(), 0..3).prop_map(L::Or),
            prop::collection::vec(inner, 0..3).prop_map(L::And),
        ]
    })
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        (
            relation(),
            prop::collection::vec(term(), 0..3),
            any::<bool>()
        )
            .prop_map(|(n, a, p)| {
                let p = p || !a.is_empty();
                Item::Fact(n, a, p)
            }),
        (
            relation(),
            prop::collection::vec(term(), 0..3),
            any::<bool>(),
            prop::collection::vec(literal(), 0..4)
        )
            .prop_map(|(n, a, p, b)| {
                let p = p || !a.is_empty();
                Item::Rule(n, a, p, b)
            }),
        "[ a-zA-Z0-9();%]{0,12}".prop_map(|c| Item::Comment(format!(";{c}"))),
    ]
}

/// Renders with whitespace chosen by `ws` (cycled), comments placed after some elements.
struct Render<'a> {
    out: String,
    ws: &'a [u8],
    k: usize,
}

impl Render<'_> {
    fn sep(&mut self) {
        let choice = self.ws[self.k % self.ws.len()];
        self.k += 1;
        self.out.push_str(match choice % 6 {
            0..=2 => " ",
            3 => "\n  ",
            4 => "\t",
            _ => "\r\n\n ",
        });
    }

    fn maybe_comment(&mut self) {
        let choice = self.ws[self.k % self.ws.len()];
        self.k += 1;
        if choice.is_multiple_of(11) {
            self.out.push_str(" ; note\n");
        }
    }

    fn list(&mut self, head: &str, f: impl FnOnce(&mut Self)) {
        self.out.push('(');
        self.out.push_str(head);
        f(self);
        self.out.push(')');
    }

    fn term(&mut self, t: &T) {
        match t {
            T::Var(v) => {
                self.out.push('?');
                self.out.push_str(v);
            }
            T::Const(c) => self.out.push_str(c),
            T::Fun(n, args) => self.list(n, |r| {
                for a in args {
                    r.sep();
                    r.maybe_comment();
                    r.term(a);
                }
            }),
        }
    }

    fn sentence(&mut self, n: &str, args: &[T], parens: bool) {
        if parens {
            self.list(n, |r| {
                for a in args {
                    r.sep();
                    r.term(a);
                }
            });
        } else {
            self.out.push_str(n);
        }
    }

    fn literal(&mut self, l: &L) {
        match l {
            L::Atom(n, a, p) => self.sentence(n, a, *p),
            L::Not(inner) => self.list("not", |r| {
                r.sep();
                r.literal(inner);
            }),
            L::Distinct(a, b) => self.list("distinct", |r| {
                r.sep();
                r.term(a);
                r.sep();
                r.term(b);
            }),
            L::Or(args) | L::And(args) => {
                let head = if matches!(l, L::Or(_)) { "or" } else { "and" };
                self.list(head, |r| {
                    for a in args {
                        r.sep();
                        r.maybe_comment();
                        r.literal(a);
                    }
                });
            }
        }
    }
}

fn render(items: &[Item], ws: &[u8]) -> String {
    let mut r = Render {
        out: String::new(),
        ws,
        k: 0,
    };
    for item in items {
        match item {
            Item::Fact(n, a, p) => r.sentence(n, a, *p),
            Item::Rule(n, a, p, body) => r.list("<=", |r| {
                r.sep();
                r.sentence(n, a, *p);
                for l in body {
                    r.sep();
                    r.maybe_comment();
                    r.literal(l);
                }
            }),
            Item::Comment(c) => {
                r.out.push_str(c);
                r.out.push('\n');
            }
        }
        r.sep();
    }
    r.out
}

fn sentences(text: &str) -> Vec<String> {
    parse(text)
        .description
        .items
        .iter()
        .map(|i| {
            let debug = format!("{i:?}");
            // Drop spans so that two different texts compare.
            let mut out = String::new();
            let mut rest = debug.as_str();
            while let Some(at) = rest.find("span: ") {
                out.push_str(&rest[..at]);
                let after = &rest[at + 6..];
                let end = after
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(after.len());
                rest = &after[end..];
            }
            out.push_str(rest);
            out.to_ascii_lowercase()
        })
        .collect()
}

proptest! {
    // 512 cases by default; PROPTEST_CASES=N for a longer search.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_descriptions_round_trip(
        items in prop::collection::vec(item(), 0..8),
        ws in prop::collection::vec(any::<u8>(), 1..16),
    ) {
        let text = render(&items, &ws);
        let parsed = parse(&text);
        prop_assert!(!parsed.has_errors(), "{text}\n{:?}", parsed.diagnostics);
        let formatted = format_text(&text).unwrap();
        prop_assert_eq!(format_text(&formatted).unwrap(), formatted.clone(), "not idempotent:\n{}", text);
        prop_assert_eq!(sentences(&formatted), sentences(&text));
        let infix_text = prefix_to_infix(&text).unwrap();
        let back = infix::infix_to_prefix(&infix_text)
            .unwrap_or_else(|d| panic!("infix does not parse back: {d:?}\n{infix_text}"));
        prop_assert_eq!(back.to_ascii_lowercase(), formatted.to_ascii_lowercase(), "infix was:\n{}", infix_text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let (text, _) = gdl_syntax::cst::decode(&bytes);
        let parsed = parse(&text);
        if !parsed.has_errors() {
            let formatted = format_text(&text).unwrap();
            prop_assert_eq!(format_text(&formatted).unwrap(), formatted);
            let _ = prefix_to_infix(&text);
        }
        let _ = infix::infix_to_prefix(&text);
    }
}
