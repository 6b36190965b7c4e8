//! Which engine plays a game version: the verdict of its trial (`games::analyse`).

use std::fmt;

/// Which engine plays a game version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The fast engine compiles it.
    Fast,
    /// The reference engine plays it; why the fast engine does not.
    Reference(String),
    /// No engine plays it (within a match's memory, say); why.
    Unplayable(String),
}

impl Verdict {
    /// Reads a verdict as it is stored and shown (see its `Display`: `fast`, `reference: <why>`,
    /// `unplayable: <why>`). A text of no known form (none is ever written) is read as a
    /// game not to be played, saying so.
    pub fn parse(text: &str) -> Verdict {
        match text.split_once(": ") {
            _ if text == "fast" => Verdict::Fast,
            Some(("reference", why)) => Verdict::Reference(why.to_string()),
            Some(("unplayable", why)) => Verdict::Unplayable(why.to_string()),
            _ => Verdict::Unplayable(format!("the verdict `{text}` is not one this server knows")),
        }
    }

    /// `fast`, `reference` or `unplayable`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Fast => "fast",
            Verdict::Reference(_) => "reference",
            Verdict::Unplayable(_) => "unplayable",
        }
    }

    /// Why not the fast engine, or why not at all.
    pub fn why(&self) -> Option<&str> {
        match self {
            Verdict::Fast => None,
            Verdict::Reference(why) | Verdict::Unplayable(why) => Some(why),
        }
    }

    /// Why the game cannot be played, if it cannot.
    pub fn unplayable(&self) -> Option<&str> {
        match self {
            Verdict::Unplayable(why) => Some(why),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.why() {
            None => f.write_str(self.name()),
            Some(why) => write!(f, "{}: {why}", self.name()),
        }
    }
}

/// As the API shows it: the text it is stored as.
impl serde::Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_back_as_they_are_written() {
        for verdict in [
            Verdict::Fast,
            Verdict::Reference("E100: `legal` depends on `does`".into()),
            Verdict::Unplayable("it needs more than 64 MiB: of memory".into()),
        ] {
            assert_eq!(Verdict::parse(&verdict.to_string()), verdict);
        }
        assert_eq!(Verdict::Fast.to_string(), "fast");
        assert_eq!(
            serde_json::to_value(Verdict::Reference("why".into())).unwrap(),
            serde_json::json!("reference: why")
        );
        let unknown = Verdict::parse("slow");
        assert!(
            unknown.unplayable().unwrap().contains("`slow`"),
            "{unknown}"
        );
    }
}
