//! Why a request about a document is refused: an edit of the whole text ([`EditError`]) or a
//! rename ([`RenameError`]). The message is what the client shows its user.

use std::fmt;

/// An edit of the whole text that a document with syntax errors is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    Format,
    Convert,
}

impl fmt::Display for Edit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edit::Format => "formatted",
            Edit::Convert => "converted",
        })
    }
}

/// Why a document was not formatted or converted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The document has syntax errors (how many).
    #[error(
        "not {edit}: the file has {errors} syntax error{}",
        if *errors == 1 { "" } else { "s" }
    )]
    SyntaxErrors { edit: Edit, errors: usize },
    /// The formatter or the converter refused the text (the first diagnostic's message).
    #[error("not {edit}: {message}")]
    Refused { edit: Edit, message: String },
}

/// Why a symbol cannot be renamed, or not to the new name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RenameError {
    #[error("there is no relation, function, constant or variable here")]
    NothingHere,
    /// A relation of GDL's own (its name).
    #[error("`{0}` is a GDL relation: renaming it would change what the game means")]
    Reserved(&'static str),
    /// The new name (as given) is not an infix variable.
    #[error("`{0}` is not an infix variable name: it starts with a capital letter or `_`")]
    NotInfixVariable(String),
    /// The new name is not a variable.
    #[error("`{0}` is not a variable name")]
    NotVariable(String),
    /// The new name has no infix spelling.
    #[error("`{0}` cannot be written as an infix variable")]
    NoInfixSpelling(String),
    /// The new name is not a name at all (a keyword, spaces, parentheses, …).
    #[error("`{0}` is not a name GDL can use here")]
    NotAName(String),
    /// A number as the new name of a relation.
    #[error("a number, `{0}`, cannot name a relation")]
    NumberForRelation(String),
    /// The new name is a GDL relation of the same arity.
    #[error("`{0}` is a GDL relation: renaming into it would change what the game means")]
    IntoReserved(String),
    /// The new name is used already for a symbol of the same kind.
    #[error("`{0}` is already used there")]
    Taken(String),
}
