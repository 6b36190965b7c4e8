pub mod bench;
pub mod check;
pub mod convert;
pub mod fmt;
pub mod matches;
pub mod player;
pub mod records;
pub mod replay;
pub mod validate;

/// The reasoners a command can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The compiled engine (a propositional network); the reference engine where it cannot
    /// compile the game, with a note saying why.
    Fast,
    /// The reference engine: tabled top-down evaluation of the rules, exact on every game.
    Reference,
}

impl Engine {
    pub fn choice(self) -> gdl_reason::EngineChoice {
        match self {
            Engine::Fast => gdl_reason::EngineChoice::Fast,
            Engine::Reference => gdl_reason::EngineChoice::Reference,
        }
    }
}

/// A clap value parser for a positive, finite number of seconds.
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

/// Builds the chosen engine for a description, or reports why it cannot be built (the
/// diagnostics that leave the description without an agreed meaning, then a line naming
/// `command`) and returns the exit status to end with. When the fast engine cannot compile
/// the game, a note on standard error says so and why, and the reference engine is used.
pub fn build_machine(
    command: &str,
    reporter: &crate::report::Reporter,
    input: &crate::input::Input,
    engine: Engine,
    limits: gdl_reason::reference::Limits,
) -> Result<gdl_reason::Machine, u8> {
    let checked = gdl_check::check(&input.text);
    let built = gdl_reason::Machine::build(&checked, engine.choice(), limits);
    if let Some(reason) = built.as_ref().ok().and_then(|m| m.fallback()) {
        reporter.message(&format!(
            "ggp {command}: note: {}: the fast engine cannot compile this game ({reason}); using the reference engine",
            input.name
        ));
    }
    built.map_err(|diagnostics| refused(command, reporter, input, &diagnostics))
}

/// Reports why a machine cannot be built for a description (the diagnostics that leave it
/// without an agreed meaning, then a line naming `command`); returns the exit status.
pub fn refused(
    command: &str,
    reporter: &crate::report::Reporter,
    input: &crate::input::Input,
    diagnostics: &[gdl_syntax::Diagnostic],
) -> u8 {
    let file = gdl_syntax::SourceFile::new(input.name.clone(), input.text.clone());
    reporter.emit(&file, diagnostics);
    reporter.message(&format!(
        "ggp {command}: {}: the description has errors that leave it without an agreed meaning (see `ggp check`)",
        input.name
    ));
    crate::INPUT_ERRORS
}
