//! `ggp replay`: plays a game from its initial state with given or random joint moves and
//! prints every visited state (the conformance trace format, or a readable form).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use gdl_reason::reference::Limits;
use gdl_reason::trace::{self, Moves, ReplayError, Step};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::cmd::{Engine, build_machine, positive_seconds};
use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input};

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["moves", "random"])))]
pub struct Args {
    /// The game description (prefix KIF); `-` reads standard input.
    game: PathBuf,
    /// Joint moves to play, one per line in role order: `((mark 1 2) noop)`; `-` reads
    /// standard input.
    #[arg(long, value_name = "FILE")]
    moves: Option<PathBuf>,
    /// Play up to N uniformly random joint moves instead (fewer if the game ends).
    #[arg(long, value_name = "N")]
    random: Option<usize>,
    /// Seed of the random moves: the same seed gives the same game.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print states for people instead of JSON lines.
    #[arg(long)]
    pretty: bool,
    /// The reasoner.
    #[arg(long, value_enum, default_value = "fast")]
    engine: Engine,
    /// Give up on a state whose rules take longer than this many seconds to evaluate.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = positive_seconds)]
    state_timeout: f64,
    /// Give up on a state that derives more facts than this.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_facts)]
    max_facts: usize,
    /// How to print the description's diagnostics, if it has errors (on standard error).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter::new(args.format, true);
    let fail = |message: String, status: u8| {
        reporter.message(&format!("ggp replay: {message}"));
        status
    };
    let stdin = PathBuf::from("-");
    if args.game == stdin && args.moves.as_ref() == Some(&stdin) {
        return fail(
            "the game and the moves cannot both be read from standard input".into(),
            USAGE_OR_IO,
        );
    }
    let input = match input::read(&args.game) {
        Ok(input) => input,
        Err(message) => return fail(message, USAGE_OR_IO),
    };
    let limits = Limits {
        max_facts: args.max_facts,
        time: Some(Duration::from_secs_f64(args.state_timeout)),
        ..Limits::default()
    };
    let mut machine = match build_machine("replay", &reporter, &input, args.engine, limits) {
        Ok(machine) => machine,
        Err(status) => return status,
    };
    let joints = match &args.moves {
        Some(path) => {
            let moves = match input::read(path) {
                Ok(moves) => moves,
                Err(message) => return fail(message, USAGE_OR_IO),
            };
            if let Some(bad) = moves.decode_diagnostics.iter().find(|d| d.is_error()) {
                return fail(
                    format!(
                        "{}: {} (at byte {})",
                        moves.name, bad.message, bad.span.start
                    ),
                    INPUT_ERRORS,
                );
            }
            match trace::parse_moves(&mut machine, &moves.text) {
                Ok(joints) => Some(joints),
                Err(e) => return fail(format!("{}: {e}", moves.name), INPUT_ERRORS),
            }
        }
        None => None,
    };
    let mut rng = StdRng::seed_from_u64(args.seed);
    let moves = match &joints {
        Some(joints) => Moves::Given(joints),
        None => Moves::Random(args.random.unwrap_or(0), &mut rng),
    };
    let roles = trace::role_names(&machine);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut number = 0;
    let outcome = trace::replay(&mut machine, moves, |step: Step| {
        let text = if args.pretty {
            trace::pretty(&roles, number, &step)
        } else {
            trace::json_line(&roles, &step) + "\n"
        };
        number += 1;
        out.write_all(text.as_bytes())
    });
    let flushed = out.flush();
    let name = &input.name;
    let outcome = match (outcome, flushed) {
        (Ok(_), Err(e)) => Err(ReplayError::Output(e)),
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(None) => SUCCESS,
        Ok(Some(stop)) => fail(format!("{name}: {stop}"), INPUT_ERRORS),
        // `ggp replay … | head` is not an error.
        Err(ReplayError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => SUCCESS,
        Err(ReplayError::Output(e)) => fail(format!("cannot write the trace: {e}"), USAGE_OR_IO),
        Err(error) => fail(format!("{name}: {error}"), INPUT_ERRORS),
    }
}
