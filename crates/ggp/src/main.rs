//! `ggp`: the command-line face of the toolkit. Argument parsing and output only; the work is
//! done by the library crates.

mod cmd;
mod input;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The General Game Playing toolkit: GDL checking, formatting, conversion and reasoning.
#[derive(Parser)]
#[command(name = "ggp", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check game descriptions for syntax errors and violations of the GDL specification.
    Check(cmd::check::Args),
    /// Format game descriptions in the canonical prefix layout.
    Fmt(cmd::fmt::Args),
    /// Convert a game description between prefix KIF and infix notation.
    Convert(cmd::convert::Args),
    /// Play a game with given or random joint moves and print every state it visits.
    Replay(cmd::replay::Args),
    /// Decide whether games are well-formed: termination, playability, goals, winnability.
    Validate(cmd::validate::Args),
    /// Measure a reasoner's speed: random playouts for a number of seconds.
    Bench(cmd::bench::Args),
    /// Run an HTTP player that speaks the GGP protocol (START, PLAY, STOP, ABORT, INFO).
    Player(cmd::player::Args),
    /// Run a match between players (built-in or over HTTP) with clocks, and record it.
    Match(cmd::matches::Args),
    /// The recorded matches: list them, show one, export one as ggp.org match JSON.
    Matches(cmd::records::Args),
}

/// Exit status: the command succeeded.
pub const SUCCESS: u8 = 0;
/// Exit status: the input has errors (or, for `fmt --check`, would change).
pub const INPUT_ERRORS: u8 = 1;
/// Exit status: bad usage, or a file could not be read or written.
pub const USAGE_OR_IO: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Fmt(args) => cmd::fmt::run(args),
        Command::Convert(args) => cmd::convert::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Player(args) => cmd::player::run(args),
        Command::Match(args) => cmd::matches::run(args),
        Command::Matches(args) => cmd::records::run(args),
    };
    ExitCode::from(status)
}
