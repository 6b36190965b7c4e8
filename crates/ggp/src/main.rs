//! `ggp`: the command-line face of the toolkit. Argument parsing and output only; the work is
//! done by the library crates.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

mod cmd;
mod input;
mod out;
mod progress;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Every allocation is counted, so that the engines can stop at a memory budget (the
/// process's, `--max-memory`; a match's or a player session's) with an error that names it
/// rather than be killed by the system (`ggp_memory`).
#[global_allocator]
static ALLOCATOR: ggp_memory::Counting = ggp_memory::Counting;

/// The least `--max-memory` accepted.
const MIN_MEMORY: usize = 64 << 20;

/// The General Game Playing toolkit: GDL checking, formatting, conversion and reasoning.
#[derive(Parser)]
#[command(name = "ggp", version, about, propagate_version = true)]
struct Cli {
    /// The largest game description, moves file or standard input a command reads: bytes, or
    /// KiB, MiB or GiB (`64KiB`). A larger input is refused with a message.
    #[arg(long, global = true, value_name = "SIZE", default_value = "16MiB",
          value_parser = cmd::byte_size(1, input::MAX_MAX_SIZE as usize))]
    max_input_size: usize,
    /// The most memory the process may take for its work (reasoning, matches, a player's
    /// sessions): past it, the work stops with an error naming this budget. A size in bytes or
    /// with a unit (`8GiB`); default: half the machine's memory (docs/limits.md).
    #[arg(long, global = true, value_name = "SIZE", value_parser = cmd::byte_size(MIN_MEMORY, usize::MAX))]
    max_memory: Option<usize>,
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
    /// Many matches between players, seats rotated, and each player's results.
    Arena(cmd::arena::Args),
    /// The Gamemaster: a web service to keep games, register players, and run, watch and play
    /// matches.
    Serve(cmd::serve::Args),
    /// A tournament without a web server: a round robin between players on games, recorded,
    /// with standings and ratings.
    Tournament(cmd::tournament::Args),
    /// Run the GDL language server for editors (on standard input and output).
    Lsp(cmd::lsp::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page, or write every page into a directory (`--dir`).
    Man(cmd::completions::ManArgs),
}

/// Exit status: the command succeeded.
pub const SUCCESS: u8 = 0;
/// Exit status: the input has errors (or, for `fmt --check`, would change).
pub const INPUT_ERRORS: u8 = 1;
/// Exit status: bad usage, or a file could not be read or written.
pub const USAGE_OR_IO: u8 = 2;
/// Exit status: interrupted by Ctrl-C (128 + SIGINT, as a shell reports it); a match in progress
/// is recorded as aborted and its players are sent ABORT.
pub const INTERRUPTED: u8 = 130;
/// Exit status of `ggp match` when its standard output was closed by its reader (128 + SIGPIPE,
/// as a shell reports it); the match is aborted cleanly, as for Ctrl-C.
pub const OUTPUT_CLOSED: u8 = 141;

fn main() -> ExitCode {
    let cli = Cli::parse();
    input::set_max_size(cli.max_input_size as u64);
    let budget = cli
        .max_memory
        .unwrap_or_else(ggp_memory::default_process_budget);
    ggp_memory::set_process_limit(Some(budget));
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
        Command::Arena(args) => cmd::arena::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Tournament(args) => cmd::tournament::run(args),
        Command::Lsp(args) => cmd::lsp::run(args),
        Command::Completions(args) => cmd::completions::completions(args),
        Command::Man(args) => cmd::completions::man(args),
    };
    ExitCode::from(status)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use proptest::prelude::*;

    use super::Cli;

    /// Numbers as people (and typos, and overflows) write them.
    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
            Just("1e300".to_string()),
            Just("99999999999999999999999999".to_string()),
            Just("NaN".to_string()),
            Just("inf".to_string()),
            Just("-0".to_string()),
            Just("".to_string()),
            "\\PC{0,12}",
        ]
    }

    fn url() -> impl Strategy<Value = String> {
        prop_oneof![
            (
                "(http|HTTP|https|ftp)?(://)?",
                "[a-z0-9.\\[\\]:@ -]{0,20}",
                number()
            )
                .prop_map(|(s, h, p)| format!("{s}{h}:{p}")),
            "\\PC{0,30}",
            Just("random".to_string()),
            Just("legal".to_string()),
        ]
    }

    /// The default of `--max-input-size` is the documented one, and the option is read
    /// before or after the command's name.
    #[test]
    fn the_input_size_limit_defaults_to_16_mib_and_is_global() {
        let cli = Cli::try_parse_from(["ggp", "check", "g.kif"]).unwrap();
        assert_eq!(cli.max_input_size as u64, crate::input::DEFAULT_MAX_SIZE);
        for argv in [
            ["ggp", "--max-input-size", "64KiB", "check", "g.kif"],
            ["ggp", "check", "--max-input-size", "64KiB", "g.kif"],
            ["ggp", "check", "g.kif", "--max-input-size", "65536"],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            assert_eq!(cli.max_input_size, 64 << 10, "{argv:?}");
        }
        let refused = Cli::try_parse_from(["ggp", "check", "g.kif", "--max-input-size", "0"]);
        assert!(refused.is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Whatever numbers, ids and URLs are given, the command line is read or refused with
        /// a message: never a panic.
        #[test]
        fn the_command_line_never_panics(
            clock in number(), seconds in number(), id in "\\PC{0,20}", player in url(),
            count in number(),
        ) {
            let commands: Vec<Vec<String>> = vec![
                vec!["match".into(), "g.kif".into(), "--player".into(), player.clone(),
                     "--playclock".into(), clock.clone(), "--startclock".into(), clock.clone(),
                     "--id".into(), id.clone(), "--grace-ms".into(), count.clone(),
                     "--max-steps".into(), count.clone()],
                vec!["bench".into(), "g.kif".into(), "--seconds".into(), seconds.clone(),
                     "--threads".into(), count.clone(), "--max-moves".into(), count.clone(),
                     "--state-timeout".into(), seconds.clone()],
                vec!["replay".into(), "g.kif".into(), "--random".into(), count.clone(),
                     "--state-timeout".into(), seconds.clone(), "--max-facts".into(), count.clone()],
                vec!["player".into(), "--port".into(), count.clone(), "--margin-ms".into(), clock.clone()],
                vec!["check".into(), "g.kif".into(), "--ignore".into(), id.clone(),
                     "--max-per-code".into(), count.clone()],
            ];
            for args in commands {
                let argv = std::iter::once("ggp".to_string()).chain(args);
                if let Err(e) = Cli::try_parse_from(argv) {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
            // What was accepted can be contacted: it reads as a URL again.
            if let Ok(ggp_match::PlayerSpec::Url(u)) = ggp_match::PlayerSpec::parse(&player) {
                prop_assert!(ggp_match::PlayerUrl::parse(&u).is_ok());
            }
        }
    }
}
