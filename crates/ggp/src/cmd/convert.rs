//! `ggp convert`: prefix KIF to infix and back.

use std::path::PathBuf;

use clap::ValueEnum;
use gdl_syntax::SourceFile;

use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input, out};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Notation {
    /// Infix: `legal(P, mark(X, Y)) :- true(cell(X, Y, b)) & true(control(P))`.
    Infix,
    /// Prefix KIF: `(<= (legal ?p (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?p)))`.
    Prefix,
}

#[derive(clap::Args)]
pub struct Args {
    /// The notation to write; the input is in the other one.
    #[arg(long, value_enum)]
    to: Notation,
    /// The game description; `-` reads standard input.
    file: PathBuf,
    /// Write the result to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// How to print diagnostics (on standard error).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter::new(args.format, true);
    if let Some(path) = &args.output
        && let Err(message) = input::check_writable(path)
    {
        reporter.message(&format!("ggp convert: {message}"));
        return USAGE_OR_IO;
    }
    let input = match input::read(&args.file) {
        Ok(input) => input,
        Err(message) => {
            reporter.message(&format!("ggp convert: {message}"));
            return USAGE_OR_IO;
        }
    };
    let result = if !input.decode_diagnostics.is_empty() {
        Err(input.decode_diagnostics.clone())
    } else {
        match args.to {
            Notation::Infix => gdl_syntax::prefix_to_infix(&input.text),
            Notation::Prefix => gdl_syntax::infix::infix_to_prefix(&input.text),
        }
    };
    match result {
        Ok(text) => match &args.output {
            Some(path) => match input::write_atomically(path, &text) {
                Ok(()) => SUCCESS,
                Err(message) => {
                    reporter.message(&format!("ggp convert: {message}"));
                    USAGE_OR_IO
                }
            },
            None => match out::print(&text) {
                Ok(()) => SUCCESS,
                Err(e) if out::is_closed(&e) => SUCCESS,
                Err(e) => {
                    reporter.message(&format!("ggp convert: cannot write the result: {e}"));
                    USAGE_OR_IO
                }
            },
        },
        Err(errors) => {
            let file = SourceFile::new(&input.name, input.text);
            let _ = reporter.emit(&file, &errors);
            reporter.message(&format!(
                "ggp convert: {} not converted: {}",
                file.name,
                input::why_not_rewritten(&errors)
            ));
            INPUT_ERRORS
        }
    }
}
