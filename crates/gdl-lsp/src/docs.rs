//! What the hover shows: the GDL keywords and distinguished relations as the specification
//! describes them, and each diagnostic code's page of `docs/codes/`, built into the binary.

/// Every page of `docs/codes/`: (code, markdown). The validator's codes (`V…`, from `ggp
/// validate`) are here too, so that a hover on one written in a comment explains it.
macro_rules! doc {
    ($code:literal) => {
        (
            $code,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../docs/codes/",
                $code,
                ".md"
            )),
        )
    };
}

pub const CODE_PAGES: &[(&str, &str)] = &[
    doc!("E001"),
    doc!("E002"),
    doc!("E003"),
    doc!("E004"),
    doc!("E005"),
    doc!("E006"),
    doc!("E007"),
    doc!("E008"),
    doc!("E009"),
    doc!("E010"),
    doc!("E011"),
    doc!("E012"),
    doc!("E013"),
    doc!("E014"),
    doc!("E015"),
    doc!("E016"),
    doc!("E017"),
    doc!("E018"),
    doc!("E019"),
    doc!("E020"),
    doc!("I001"),
    doc!("I002"),
    doc!("I003"),
    doc!("I004"),
    doc!("I005"),
    doc!("I006"),
    doc!("I007"),
    doc!("R001"),
    doc!("R002"),
    doc!("S001"),
    doc!("S002"),
    doc!("S003"),
    doc!("S004"),
    doc!("S005"),
    doc!("S006"),
    doc!("S007"),
    doc!("S008"),
    doc!("S009"),
    doc!("S010"),
    doc!("S011"),
    doc!("S012"),
    doc!("S013"),
    doc!("S014"),
    doc!("V001"),
    doc!("V002"),
    doc!("V003"),
    doc!("V004"),
    doc!("V005"),
    doc!("V006"),
    doc!("V007"),
    doc!("V008"),
    doc!("V009"),
    doc!("V010"),
    doc!("V011"),
    doc!("V012"),
    doc!("V013"),
    doc!("V014"),
    doc!("V015"),
    doc!("W001"),
    doc!("W002"),
    doc!("W003"),
    doc!("W004"),
    doc!("W005"),
    doc!("W006"),
    doc!("W007"),
    doc!("W008"),
    doc!("W009"),
    doc!("W010"),
    doc!("W011"),
    doc!("W012"),
    doc!("W013"),
    doc!("W014"),
    doc!("W015"),
    doc!("W016"),
];

/// The page of a code.
pub fn code_page(code: &str) -> Option<&'static str> {
    CODE_PAGES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|&(_, page)| page)
}

/// A code's explanation for a hover: its title and severity, then what it does and why it
/// matters (the first paragraph of each), in Markdown.
pub fn code_summary(code: &str) -> Option<String> {
    let page = code_page(code)?;
    let mut lines = page.lines();
    let title = lines.next()?.trim_start_matches('#').trim();
    let (code, name) = title.split_once(' ').unwrap_or((title, ""));
    let mut out = format!("**{code}** `{name}`");
    let mut section = "";
    let mut taken: Vec<&str> = Vec::new();
    let mut paragraph = String::new();
    let flush = |section: &str, paragraph: &mut String, out: &mut String, taken: &mut Vec<&str>| {
        let wanted = ["What it does", "Why is this bad"];
        if let Some(&name) = wanted.iter().find(|w| **w == section)
            && !taken.contains(&name)
            && !paragraph.trim().is_empty()
        {
            out.push_str(&format!("\n\n*{name}:* {}", paragraph.trim()));
            taken.push(name);
        }
        paragraph.clear();
    };
    for line in lines {
        if let Some(severity) = line.strip_prefix("Severity: ") {
            out.push_str(&format!(" ({})", severity.trim_end_matches('.')));
        } else if let Some(heading) = line.strip_prefix("## ") {
            flush(section, &mut paragraph, &mut out, &mut taken);
            section = heading.trim();
        } else if line.trim().is_empty() {
            flush(section, &mut paragraph, &mut out, &mut taken);
        } else {
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(line.trim());
        }
    }
    flush(section, &mut paragraph, &mut out, &mut taken);
    Some(out)
}

/// What the specification says about a keyword or a distinguished relation (any letter case).
pub fn keyword(word: &str) -> Option<&'static str> {
    let word = word.to_ascii_lowercase();
    Some(match word.as_str() {
        "<=" => {
            "**`<=`** — a rule: `(<= head body…)` says the head holds whenever every literal of the \
             body holds (a Datalog rule, Definition 18). Each literal is an atom, a negation, a \
             `distinct` or a disjunction. Every variable of the head, of a negation and of a \
             `distinct` must occur in a positive literal of the body."
        }
        "not" => {
            "**`not`** — negation as failure: `(not φ)` holds when φ cannot be derived. The rules \
             must be stratified: no relation may depend on its own negation (Definition 8), and \
             every variable of a negated literal must be bound by a positive literal of the body."
        }
        "or" => {
            "**`or`** — a disjunction inside a rule body: `(or φ₁ … φₙ)` holds when some φᵢ \
             holds. GDL allows it for convenience (§5.3); a rule with a disjunction means the \
             rules obtained by expanding it."
        }
        "and" => {
            "**`and`** — a conjunction: `(and φ₁ … φₙ)` holds when every φᵢ holds; a rule body \
             is already a conjunction, so `and` is only needed inside an `or`."
        }
        "distinct" => {
            "**`distinct`** — `(distinct t₁ t₂)` holds if and only if t₁ and t₂ are not the same \
             term, syntactically (Definition 19). It counts as a negative literal: its variables \
             must be bound by a positive literal of the body."
        }
        "role" => {
            "**`role`** `(role r)` — the players of the game (§6.1). The role relation only \
             appears in ground facts (Definition 20); the order of the roles is the order of the \
             moves in PLAY messages."
        }
        "init" => {
            "**`init`** `(init f)` — f is true in the initial state (§6.3). `init` only appears \
             in heads, and does not depend on `true`, `does`, `next`, `legal`, `goal` or \
             `terminal` (Definition 20)."
        }
        "true" => {
            "**`true`** `(true f)` — f holds in the current state (§6.2). `true` only appears in \
             rule bodies (Definition 20)."
        }
        "does" => {
            "**`does`** `(does r m)` — role r makes move m in the current step (§6.6). `does` only \
             appears in rule bodies, and `legal`, `goal` and `terminal` must not depend on it \
             (Definition 20)."
        }
        "next" => {
            "**`next`** `(next f)` — f will be true in the next state (§6.4): the state after the \
             joint move is exactly the set of f for which `next` holds. `next` only appears in \
             heads (Definition 20)."
        }
        "legal" => {
            "**`legal`** `(legal r m)` — m is a legal move for role r in the current state \
             (§6.5). Every role must have a legal move in every non-terminal state reachable from \
             the initial state (Definition 22, playability)."
        }
        "goal" => {
            "**`goal`** `(goal r v)` — role r gets the value v, an integer from 0 to 100, in the \
             current state (§6.8); it matters in terminal states."
        }
        "terminal" => {
            "**`terminal`** — the current state is terminal: the game ends (§6.9). Every \
             sequence of legal moves must reach a terminal state (Definition 21)."
        }
        "base" => {
            "**`base`** `(base f)` — f is a fluent that can be true in some state (from the GDL \
             notes): `base` declares the propositions of the state."
        }
        "input" => {
            "**`input`** `(input r m)` — m is a move role r can make in some state (from the GDL \
             notes)."
        }
        "sees" => {
            "**`sees`** `(sees r p)` — GDL-II: role r perceives p in the next state, as `next` \
             describes the next state."
        }
        "knows" => {
            "**`knows`** `(knows r p)`, `(knows p)` — GDL-III: role r knows p, or p is common \
             knowledge, after the current history: p holds after every history r cannot tell \
             from it (the same own moves, the same percepts at every step); common knowledge \
             closes that over all roles. Only in rule bodies, about an atom, with no recursion \
             through it and not about the moves being made (E017–E020). Reasoned by the \
             reference engine over histories (what `ggp replay`, `ggp match`, the players and \
             the Gamemaster build); the fast engine refuses it (R002); see docs/gdl3.md."
        }
        "random" => {
            "**`random`** — GDL-II: the predefined role that chooses its moves at random (chance \
             moves)."
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_code_has_a_page_and_every_page_a_code() {
        let registered: Vec<&str> = gdl_syntax::codes::SYNTAX_CODES
            .iter()
            .map(|c| c.code)
            .chain(gdl_check::codes::CHECK_CODES.iter().map(|c| c.code))
            .collect();
        for code in &registered {
            assert!(code_page(code).is_some(), "{code} has no page");
            let summary = code_summary(code).unwrap();
            assert!(summary.contains("*What it does:*"), "{summary}");
        }
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/codes");
        let pages = std::fs::read_dir(docs)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name != "README.md"
            })
            .count();
        assert_eq!(
            pages,
            CODE_PAGES.len(),
            "a page of docs/codes is not built in"
        );
    }

    #[test]
    fn a_code_summary_reads_its_page() {
        let summary = code_summary("w010").unwrap();
        assert!(summary.starts_with("**W010** `singleton-variable` (warning)"));
        assert!(summary.contains("*Why is this bad:* A variable that occurs once"));
        assert!(keyword("LEGAL").unwrap().contains("legal move"));
    }
}
