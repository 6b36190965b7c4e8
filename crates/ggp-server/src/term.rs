//! Ground terms as the match record writes them: `((cell 1 1 x) (control xplayer))`,
//! `(mark 1 2)`, `noop`. Read for drawing boards and for finding the cells a move names; a text
//! that is not a term (a damaged record) reads as whatever could be read, never an error.

/// A ground term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Atom(String),
    List(Vec<Term>),
}

/// Deeper lists are read as atoms (their text): records written by the manager are shallow.
const MAX_DEPTH: usize = 64;

impl Term {
    /// The atom's text, if it is one.
    pub fn atom(&self) -> Option<&str> {
        match self {
            Term::Atom(a) => Some(a),
            Term::List(_) => None,
        }
    }

    /// The name of a compound term (`cell` of `(cell 1 1 x)`), or the atom itself.
    pub fn head(&self) -> Option<&str> {
        match self {
            Term::Atom(a) => Some(a),
            Term::List(items) => items.first().and_then(Term::atom),
        }
    }

    /// The arguments of a compound term (none for an atom).
    pub fn args(&self) -> &[Term] {
        match self {
            Term::List(items) if !items.is_empty() => &items[1..],
            _ => &[],
        }
    }

    /// The term as text, with single spaces.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Term::Atom(a) => out.push_str(a),
            Term::List(items) => {
                out.push('(');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(' ');
                    }
                    item.write(out);
                }
                out.push(')');
            }
        }
    }
}

/// Reads one term (the first, if the text holds several). An unclosed list is closed at the end.
pub fn parse(text: &str) -> Option<Term> {
    let tokens = tokens(text);
    let mut pos = 0;
    read(&tokens, &mut pos, 0)
}

/// Reads a state, `((f a) (g b) …)`, as its fluents.
pub fn parse_state(text: &str) -> Vec<Term> {
    match parse(text) {
        Some(Term::List(items)) => items,
        Some(atom) => vec![atom],
        None => Vec::new(),
    }
}

fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c == '(' || c == ')' || c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push(&text[s..i]);
            }
            if !c.is_whitespace() {
                out.push(&text[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

fn read(tokens: &[&str], pos: &mut usize, depth: usize) -> Option<Term> {
    let token = *tokens.get(*pos)?;
    *pos += 1;
    match token {
        ")" => None,
        "(" if depth >= MAX_DEPTH => {
            // Skip to the matching `)`, keeping the text as an atom.
            let start = *pos - 1;
            let mut open = 1;
            while open > 0 && *pos < tokens.len() {
                match tokens[*pos] {
                    "(" => open += 1,
                    ")" => open -= 1,
                    _ => {}
                }
                *pos += 1;
            }
            Some(Term::Atom(tokens[start..*pos].join(" ")))
        }
        "(" => {
            let mut items = Vec::new();
            while let Some(&next) = tokens.get(*pos) {
                if next == ")" {
                    *pos += 1;
                    break;
                }
                match read(tokens, pos, depth + 1) {
                    Some(item) => items.push(item),
                    None => break,
                }
            }
            Some(Term::List(items))
        }
        atom => Some(Term::Atom(atom.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_moves_read_back() {
        let state = parse_state("((cell 1 1 x) (control xPlayer) (step 3))");
        assert_eq!(state.len(), 3);
        assert_eq!(state[0].head(), Some("cell"));
        assert_eq!(state[0].args().len(), 3);
        assert_eq!(state[1].text(), "(control xPlayer)");
        assert_eq!(parse("noop"), Some(Term::Atom("noop".into())));
        assert_eq!(parse("(mark 1 2)").unwrap().text(), "(mark 1 2)");
        assert_eq!(parse_state("()"), Vec::new());
    }

    #[test]
    fn damaged_text_reads_as_far_as_it_goes() {
        assert_eq!(parse(""), None);
        assert_eq!(parse(")"), None);
        assert_eq!(parse("((a b").unwrap().text(), "((a b))");
        let deep = "(".repeat(10_000) + &")".repeat(10_000);
        assert!(parse(&deep).is_some());
        let unclosed = "(".repeat(10_000);
        assert!(parse(&unclosed).is_some());
    }
}
