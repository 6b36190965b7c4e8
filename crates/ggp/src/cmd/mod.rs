pub mod bench;
pub mod check;
pub mod convert;
pub mod fmt;
pub mod matches;
pub mod player;
pub mod records;
pub mod replay;

/// The reasoners a command can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The reference engine: tabled top-down evaluation of the rules, exact on every game.
    Reference,
}

/// A clap value parser for a positive, finite number of seconds.
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

/// Builds the reference engine for a description, or reports why it cannot be built (the
/// diagnostics that leave the description without an agreed meaning, then a line naming
/// `command`) and returns the exit status to end with.
pub fn build_machine(
    command: &str,
    reporter: &crate::report::Reporter,
    input: &crate::input::Input,
    limits: gdl_reason::reference::Limits,
) -> Result<gdl_reason::ReferenceMachine, u8> {
    let checked = gdl_check::check(&input.text);
    gdl_reason::ReferenceMachine::with_limits(&checked, limits).map_err(|diagnostics| {
        let file = gdl_syntax::SourceFile::new(input.name.clone(), input.text.clone());
        reporter.emit(&file, &diagnostics);
        reporter.message(&format!(
            "ggp {command}: {}: the description has errors that leave it without an agreed meaning (see `ggp check`)",
            input.name
        ));
        crate::INPUT_ERRORS
    })
}
