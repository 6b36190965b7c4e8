//! `ggp replay`: plays a game from its initial state with given or random joint moves and
//! prints every visited state (the conformance trace format, or a readable form).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use gdl_reason::reference::Limits;
use gdl_reason::trace::{self, Moves, ReplayError, Step};
use rand::SeedableRng;
use rand::rngs::StdRng;

use gdl_reason::{Machine, MachineState, ReasonError, StateMachine};
use serde_json::{Map, Value, json};

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
    /// GDL-III: also print, at every step, how many histories each role the rules ask about
    /// cannot tell apart and the `knows` atoms that hold (a game without `knows` is refused).
    #[arg(long)]
    knowledge: bool,
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
    if args.knowledge && !matches!(machine, Machine::Knowledge(..)) {
        return fail(
            format!(
                "{}: --knowledge: the rules have no `knows`, so there is no knowledge to print",
                input.name
            ),
            USAGE_OR_IO,
        );
    }
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
    let outcome = if args.knowledge {
        replay_knowing(&mut machine, moves, &roles, args.pretty, &mut out)
    } else {
        let mut number = 0;
        trace::replay(&mut machine, moves, |step: Step| {
            let text = if args.pretty {
                trace::pretty(&roles, number, &step)
            } else {
                trace::json_line(&roles, &step) + "\n"
            };
            number += 1;
            out.write_all(text.as_bytes())
        })
    };
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

/// What one role knows after a history: how many histories it cannot tell from it (itself
/// included) and the `(knows ROLE P)` atoms that hold, in canonical text, sorted.
#[derive(Debug, PartialEq, Eq)]
struct RoleKnowledge {
    histories: usize,
    knows: Vec<String>,
}

/// What is known after one history: per role (`None` for a role the rules never ask the
/// knowledge of), and the common knowledge, `(knows P)`.
#[derive(Debug, PartialEq, Eq)]
struct Knowledge {
    roles: Vec<Option<RoleKnowledge>>,
    common: Vec<String>,
}

/// Replays with knowledge: the steps are those of [`trace::replay`] (every check of legality
/// and termination is its own), kept until it stops, then walked again on the knowledge
/// machine to print each with what is known. The machine keeps the groups of histories it
/// computed, so the second walk asks it nothing new.
fn replay_knowing<R: rand::Rng>(
    machine: &mut Machine,
    moves: Moves<'_, R>,
    roles: &[String],
    pretty: bool,
    out: &mut impl Write,
) -> Result<Option<ReplayError>, ReplayError> {
    let mut steps = Vec::new();
    let outcome = trace::replay(machine, moves, |step: Step| {
        steps.push(step);
        Ok(())
    });
    let mut state = machine
        .initial_state()
        .map_err(|error| ReplayError::Reason { step: 0, error })?;
    for (number, step) in steps.iter().enumerate() {
        let reason = |error| ReplayError::Reason {
            step: number,
            error,
        };
        let known = knowledge(machine, &state).map_err(reason)?;
        let text = if pretty {
            trace::pretty(roles, number, step) + &pretty_knowledge(roles, &known)
        } else {
            json_with_knowledge(roles, step, &known) + "\n"
        };
        out.write_all(text.as_bytes())
            .map_err(ReplayError::Output)?;
        if let Some(joint) = &step.moves {
            let joint = joint
                .iter()
                .map(|m| machine.intern(m))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| reason(ReasonError::BadRequest(e.to_string())))?;
            state = machine.next_state(&state, &joint).map_err(reason)?;
        }
    }
    outcome
}

/// What is known after the history `state`.
fn knowledge(machine: &mut Machine, state: &MachineState) -> Result<Knowledge, ReasonError> {
    let (Machine::Knowledge(m, _), MachineState::Knowledge(history)) = (machine, state) else {
        return Err(ReasonError::BadRequest(
            "knowledge is only kept by the machine over histories".into(),
        ));
    };
    let atoms = m.knows_atoms(history)?;
    let roles = m.roles().to_vec();
    let mut known = Knowledge {
        roles: Vec::new(),
        common: Vec::new(),
    };
    for (index, role) in roles.iter().enumerate() {
        if !m.knowers().contains(&index) {
            known.roles.push(None);
            continue;
        }
        let mut knows: Vec<String> = atoms
            .iter()
            .filter(|&&a| m.terms().args(a).len() == 2 && m.terms().args(a)[0] == *role)
            .map(|&a| m.terms().text(m.symbols(), a))
            .collect();
        knows.sort();
        known.roles.push(Some(RoleKnowledge {
            histories: m.class_size(history, index)?,
            knows,
        }));
    }
    known.common = atoms
        .iter()
        .filter(|&&a| m.terms().args(a).len() == 1)
        .map(|&a| m.terms().text(m.symbols(), a))
        .collect();
    known.common.sort();
    Ok(known)
}

/// The trace's JSON line with `"knowledge":{ROLE:{"histories":N,"knows":[…]},…}` (the roles
/// the rules ask about) and `"common_knowledge":[…]` added.
fn json_with_knowledge(roles: &[String], step: &Step, known: &Knowledge) -> String {
    let mut per_role = Map::new();
    for (name, k) in roles.iter().zip(&known.roles) {
        if let Some(k) = k {
            per_role.insert(
                name.clone(),
                json!({"histories": k.histories, "knows": k.knows}),
            );
        }
    }
    let line = trace::json_line(roles, step);
    let added = format!(
        ",\"knowledge\":{},\"common_knowledge\":{}}}",
        Value::Object(per_role),
        json!(known.common)
    );
    // The trace's line is one JSON object: the knowledge goes in before its closing brace.
    match line.strip_suffix('}') {
        Some(open) => format!("{open}{added}"),
        None => line,
    }
}

/// The knowledge for people, after the trace's lines of a state.
fn pretty_knowledge(roles: &[String], known: &Knowledge) -> String {
    let mut out = String::new();
    for (name, k) in roles.iter().zip(&known.roles) {
        if let Some(k) = k {
            out.push_str(&format!(
                "  {name} cannot tell {} histor{} apart; knows: {}\n",
                k.histories,
                if k.histories == 1 { "y" } else { "ies" },
                if k.knows.is_empty() {
                    "-".to_string()
                } else {
                    k.knows.join(" ")
                }
            ));
        }
    }
    if !known.common.is_empty() {
        out.push_str(&format!("  common knowledge: {}\n", known.common.join(" ")));
    }
    out
}
