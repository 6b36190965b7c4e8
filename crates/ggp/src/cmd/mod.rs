pub mod arena;
pub mod bench;
pub mod check;
pub mod completions;
pub mod convert;
pub mod fmt;
pub mod lsp;
pub mod matches;
pub mod player;
pub mod records;
pub mod replay;
pub mod serve;
pub mod tournament;
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

/// The longest duration a command accepts, in seconds: a day. Longer ones are refused with a
/// message rather than overflowing a deadline.
pub const MAX_SECONDS: u64 = ggp_protocol::MAX_CLOCK_SECS;

/// A clap value parser for a positive number of seconds, at most a day (`1.5`, `60`).
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= MAX_SECONDS as f64 => Ok(s),
        Ok(s) if s > MAX_SECONDS as f64 => Err(format!(
            "`{text}` seconds is more than a day ({MAX_SECONDS} s), the longest supported"
        )),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

/// A clap value parser for a number of seconds from `min` to a day: for how often a server
/// does something on its own (a round of INFO, a heartbeat), which a tiny value would make it
/// do without pause.
pub fn seconds_from(min: f64) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |text: &str| match positive_seconds(text) {
        Ok(s) if s < min => Err(format!(
            "`{text}` seconds is less than {min} s, the least accepted"
        )),
        other => other,
    }
}

/// A clap value parser for a clock: whole seconds from 0 to a day.
pub fn clock_seconds(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(s) if s <= MAX_SECONDS => Ok(s),
        Ok(_) => Err(format!(
            "`{text}` seconds is more than a day ({MAX_SECONDS} s), the longest clock supported"
        )),
        Err(_)
            if text
                .trim()
                .parse::<f64>()
                .is_ok_and(|s| s > MAX_SECONDS as f64) =>
        {
            Err(format!(
                "`{text}` seconds is more than a day ({MAX_SECONDS} s), the longest clock supported"
            ))
        }
        Err(_) => Err(format!("`{text}` is not a whole number of seconds")),
    }
}

/// A clap value parser for milliseconds, from 0 to a day.
pub fn milliseconds(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if ms <= MAX_SECONDS * 1000 => Ok(ms),
        Ok(_) => Err(format!(
            "`{text}` milliseconds is more than a day, the longest supported"
        )),
        Err(_) => Err(format!("`{text}` is not a whole number of milliseconds")),
    }
}

/// A clap value parser for a count from 1 to `max`.
pub fn count_up_to(max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |text: &str| match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(_) => Err(format!("`{text}` is more than {max}, the most supported")),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// A clap value parser for a number from 0 to `max`.
pub fn zero_up_to(max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |text: &str| match text.trim().parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(format!("`{text}` is more than {max}, the most supported")),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// A clap value parser for a size in bytes from `min` to `max`: a whole number of bytes, or
/// of KiB, MiB, GiB or TiB with that suffix (`K`, `M`, `G` and `T` alone mean the same; in
/// any case, a space allowed before it).
pub fn byte_size(min: usize, max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |text: &str| {
        let not_a_size = || {
            format!("`{text}` is not a size (a number of bytes, or with KiB, MiB or GiB after it)")
        };
        let trimmed = text.trim();
        let digits = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(digits);
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kib" => 10,
            "m" | "mib" => 20,
            "g" | "gib" => 30,
            "t" | "tib" => 40,
            _ => return Err(not_a_size()),
        };
        if number.is_empty() {
            return Err(not_a_size());
        }
        // Digits too many for a `usize` are too large a size too.
        match number
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_mul(1 << shift))
        {
            Some(bytes) if bytes < min => Err(format!(
                "`{text}` is less than {}, the least accepted",
                crate::input::shown_size(min as u64)
            )),
            Some(bytes) if bytes <= max => Ok(bytes),
            _ => Err(format!(
                "`{text}` is more than {}, the most accepted",
                crate::input::shown_size(max as u64)
            )),
        }
    }
}

/// Builds the chosen engine for a description, or reports why it cannot be built (the
/// diagnostics that leave the description without an agreed meaning, then a line naming
/// `command`) and returns the exit status to end with. When the fast engine cannot compile
/// the game, a note on standard error says so and why, and the reference engine is used.
/// The multi-threaded Tokio runtime the networked commands run on.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

pub fn build_machine(
    command: &str,
    reporter: &crate::report::Reporter,
    input: &crate::input::Input,
    engine: Engine,
    limits: gdl_reason::reference::Limits,
) -> Result<gdl_reason::Machine, u8> {
    if let Some(status) = refuse_undecodable(command, reporter, input) {
        return Err(status);
    }
    let spinner =
        crate::progress::Spinner::start(format!("building the reasoner for {}", input.name));
    let checked = gdl_check::check(&input.text);
    let built = gdl_reason::Machine::build(&checked, engine.choice(), limits);
    drop(spinner);
    if let Some(reason) = built.as_ref().ok().and_then(|m| m.fallback()) {
        reporter.note(&format!(
            "ggp {command}: note: {}: the fast engine cannot compile this game ({reason}); using the reference engine",
            input.name
        ));
    }
    if let Some(reason) = built.as_ref().ok().and_then(|m| m.join_tier()) {
        reporter.note(&format!(
            "ggp {command}: note: {}: too large for the fast engine's network ({reason}); the fast engine runs it with join plans",
            input.name
        ));
    }
    built.map_err(|diagnostics| refused(command, reporter, input, &diagnostics))
}

/// Reports a description that is not valid UTF-8 outside its comments (the decoding errors,
/// then a line naming `command`) and returns the exit status to end with; `None` when it is.
pub fn refuse_undecodable(
    command: &str,
    reporter: &crate::report::Reporter,
    input: &crate::input::Input,
) -> Option<u8> {
    let decode_errors: Vec<_> = input
        .decode_diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    if decode_errors.is_empty() {
        return None;
    }
    let file = gdl_syntax::SourceFile::new(input.name.clone(), input.text.clone());
    let _ = reporter.emit(&file, &decode_errors);
    reporter.message(&format!(
        "ggp {command}: {}: the description is not valid UTF-8 outside its comments (see `ggp check`)",
        input.name
    ));
    Some(crate::INPUT_ERRORS)
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
    let _ = reporter.emit(&file, diagnostics);
    reporter.message(&format!(
        "ggp {command}: {}: {}",
        input.name,
        refusal_reason(diagnostics)
    ));
    crate::INPUT_ERRORS
}

/// Why a machine was refused, in a line: a GDL-III game passes `ggp check`, so sending its
/// author there would mislead.
fn refusal_reason(diagnostics: &[gdl_syntax::Diagnostic]) -> &'static str {
    if !diagnostics.is_empty()
        && diagnostics
            .iter()
            .all(|d| d.code == gdl_reason::gdl3::KNOWS_NOT_REASONED)
    {
        "the rules use GDL-III's `knows`, which this engine does not reason over states (the machines over histories do, which `Machine` builds for such rules: docs/gdl3.md)"
    } else {
        "the description has errors that leave it without an agreed meaning (see `ggp check`)"
    }
}

#[cfg(test)]
mod tests {
    use super::byte_size;

    #[test]
    fn a_gdl3_refusal_does_not_send_its_author_to_ggp_check() {
        let game = "(role r) (<= (legal r go) (knows r (p))) (<= (p) (true x))
            (<= (next x) (does r go)) (<= terminal (true x)) (goal r 100)";
        let Err(diagnostics) = gdl_reason::ReferenceMachine::from_text(game) else {
            panic!("built");
        };
        assert!(super::refusal_reason(&diagnostics).contains("GDL-III's `knows`"));
        let invalid = gdl_reason::ReferenceMachine::from_text("(role r) (<= (p ?x) (q))");
        let Err(diagnostics) = invalid else {
            panic!("built");
        };
        assert!(super::refusal_reason(&diagnostics).contains("see `ggp check`"));
    }

    #[test]
    fn sizes_are_read_in_bytes_or_binary_units() {
        let size = byte_size(1, u32::MAX as usize);
        assert_eq!(size("1000"), Ok(1000));
        assert_eq!(size("64KiB"), Ok(64 << 10));
        assert_eq!(size(" 16 mib "), Ok(16 << 20));
        assert_eq!(size("16M"), Ok(16 << 20));
        assert_eq!(size("2G"), Ok(2 << 30));
        assert_eq!(size("4294967295"), Ok(u32::MAX as usize));
        assert!(size("0").unwrap_err().contains("less than 1 byte"));
        assert!(size("4GiB").unwrap_err().contains("the most accepted"));
        for huge in ["99999999999999999999", "18446744073709551615G", "4097M"] {
            assert!(
                size(huge).unwrap_err().contains("the most accepted"),
                "{huge}"
            );
        }
        for bad in ["", "MiB", "-1", "1.5MiB", "16 MB", "1e6", "0x10"] {
            assert!(size(bad).unwrap_err().contains("not a size"), "{bad}");
        }
        assert!(
            byte_size(64 << 20, usize::MAX)("1MiB")
                .unwrap_err()
                .contains("less than 64 MiB")
        );
    }
}
