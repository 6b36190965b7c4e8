//! `ggp bench`: random playouts for a number of seconds, reported in the gdl-perf line protocol
//! (`version=`, `millisecondsTaken=`, `numStateChanges=`, `numRollouts=`) and as a summary.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gdl_reason::machine::sequential_playouts;
use gdl_reason::reference::Limits;
use gdl_reason::{Machine, StateMachine, Until};
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::cmd::{Engine, build_machine, count_up_to, positive_seconds};
use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input, out};

/// The most threads `--threads` takes.
const MAX_THREADS: usize = 1024;

#[derive(clap::Args)]
pub struct Args {
    /// The game description (prefix KIF).
    game: PathBuf,
    /// How long to run the playouts (after building the reasoner).
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds)]
    seconds: f64,
    /// The reasoner.
    #[arg(long, value_enum, default_value = "fast")]
    engine: Engine,
    /// Independent playouts on this many threads, each with its own reasoner.
    #[arg(long, default_value_t = 1, value_parser = count_up_to(MAX_THREADS))]
    threads: usize,
    /// Seed of the random moves (thread `k` uses `seed + k`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up on a playout whose questions take longer than this many seconds each.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = positive_seconds)]
    state_timeout: f64,
    /// A playout that reaches this many moves without a terminal state is cut (and not counted).
    #[arg(long, default_value_t = 10_000, value_parser = count_up_to(usize::MAX))]
    max_moves: usize,
    /// One playout at a time (the fast engine otherwise runs 512 side by side, a bit each, as
    /// a player's rollouts can).
    #[arg(long)]
    sequential: bool,
}

#[derive(Default)]
struct Tally {
    rollouts: u64,
    /// Playouts cut at `--max-moves`.
    cut: u64,
    state_changes: u64,
    /// Moves of the finished playouts.
    finished_moves: u64,
    elapsed: Duration,
}

/// Playouts for `seconds`, on one reasoner.
fn run_playouts(
    mut machine: Machine,
    seconds: f64,
    seed: u64,
    max_moves: usize,
    sequential: bool,
) -> Result<Tally, String> {
    let initial = machine.initial_state().map_err(|e| e.to_string())?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let begin = Instant::now();
    let until = Until::Deadline(begin + Duration::from_secs_f64(seconds));
    let batch = if sequential {
        sequential_playouts(&mut machine, &initial, until, max_moves, &mut rng)
    } else {
        machine.playouts(&initial, until, max_moves, &mut rng)
    }
    .map_err(|e| format!("in a playout: {e}"))?;
    // Playouts cut at `max_moves` are not counted.
    Ok(Tally {
        rollouts: batch.finished,
        cut: batch.cut,
        state_changes: batch.steps,
        finished_moves: batch.finished_steps,
        elapsed: begin.elapsed(),
    })
}

/// Peak resident memory of this process, from `/proc` (Linux), in MiB.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter::new(Format::Human, true);
    let fail = |message: String, status: u8| {
        reporter.message(&format!("ggp bench: {message}"));
        status
    };
    let input = match input::read(&args.game) {
        Ok(input) => input,
        Err(message) => return fail(message, USAGE_OR_IO),
    };
    let limits = Limits {
        time: Some(Duration::from_secs_f64(args.state_timeout)),
        ..Limits::default()
    };
    // The first thread's reasoner is built here, so that errors are reported once; the others
    // build their own (a reasoner serves one thread).
    let started = Instant::now();
    let mut first = match build_machine("bench", &reporter, &input, args.engine, limits) {
        Ok(machine) => Some(machine),
        Err(status) => return status,
    };
    let build = started.elapsed();
    let engine = match first.as_ref() {
        Some(Machine::Fast(_)) => Engine::Fast,
        _ => Engine::Reference,
    };
    let network = match first.as_ref() {
        Some(Machine::Fast(m)) => {
            let s = m.stats();
            Some(format!(
                "{} nodes, {} edges; {} fluents, {} moves; {} ground rules",
                s.nodes, s.edges, s.fluents, s.moves, s.ground_rules
            ))
        }
        _ => None,
    };
    let engine_name = first.as_ref().map_or("reference", Machine::engine_name);
    let mode = match first.as_ref() {
        Some(Machine::Fast(m)) if m.has_lanes() && !args.sequential => {
            format!("{} playouts side by side", gdl_reason::fast::LANES)
        }
        _ => "one playout at a time".to_string(),
    };
    let results: Vec<Result<Tally, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.threads)
            .map(|k| {
                let text = &input.text;
                let seed = args.seed.wrapping_add(k as u64);
                let machine = first.take();
                std::thread::Builder::new()
                    .name(format!("bench-{k}"))
                    .spawn_scoped(scope, move || {
                        let machine = match machine {
                            Some(machine) => machine,
                            None => {
                                Machine::build(&gdl_check::check(text), engine.choice(), limits)
                                    .map_err(|_| "the reasoner cannot be built".to_string())?
                            }
                        };
                        run_playouts(machine, args.seconds, seed, args.max_moves, args.sequential)
                    })
                    .expect("spawn a thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a playout thread panicked".into()))
            })
            .collect()
    });
    let mut total = Tally::default();
    for result in results {
        match result {
            Ok(t) => {
                total.rollouts += t.rollouts;
                total.cut += t.cut;
                total.state_changes += t.state_changes;
                total.finished_moves += t.finished_moves;
                total.elapsed = total.elapsed.max(t.elapsed);
            }
            Err(e) => return fail(format!("{}: {e}", input.name), INPUT_ERRORS),
        }
    }
    let ms = total.elapsed.as_millis();
    let secs = total.elapsed.as_secs_f64().max(1e-9);
    let mut text = String::new();
    let mut line = |l: String| {
        text.push_str(&l);
        text.push('\n');
    };
    line(format!(
        "version=ggp {} ({engine_name} engine)",
        env!("CARGO_PKG_VERSION")
    ));
    line(format!("millisecondsTaken={ms}"));
    line(format!("numStateChanges={}", total.state_changes));
    line(format!("numRollouts={}", total.rollouts));
    line(String::new());
    line(format!("game:          {}", input.name));
    line(format!(
        "engine:        {engine_name}, {} thread{}",
        args.threads,
        if args.threads == 1 { "" } else { "s" }
    ));
    line(format!("playouts:      {mode}"));
    line(format!(
        "playouts/s:    {:.1}",
        total.rollouts as f64 / secs
    ));
    line(format!(
        "states/s:      {:.1}",
        total.state_changes as f64 / secs
    ));
    if total.rollouts > 0 {
        line(format!(
            "avg length:    {:.1} moves",
            total.finished_moves as f64 / total.rollouts as f64
        ));
    }
    if total.cut > 0 {
        line(format!(
            "cut:           {} playouts reached {} moves without a terminal state",
            total.cut, args.max_moves
        ));
    }
    line(format!(
        "build time:    {:.1} ms",
        build.as_secs_f64() * 1000.0
    ));
    if let Some(network) = network {
        line(format!("network:       {network}"));
    }
    if let Some(mib) = peak_memory_mib() {
        line(format!("peak memory:   {mib:.1} MiB"));
    }
    match out::print(&text) {
        Ok(()) => {}
        // `ggp bench … | head -1` has what it wanted.
        Err(e) if out::is_closed(&e) => {}
        Err(e) => return fail(format!("cannot write the results: {e}"), USAGE_OR_IO),
    }
    if total.cut > 0 && total.rollouts == 0 {
        return fail(
            format!(
                "{}: no playout reached a terminal state: all {} were cut at {} moves (does the game end? `--max-moves` sets the limit)",
                input.name, total.cut, args.max_moves
            ),
            INPUT_ERRORS,
        );
    }
    if total.cut > 0 {
        reporter.message(&format!(
            "ggp bench: warning: {} of {} playouts were cut at {} moves without reaching a terminal state, and are not counted",
            total.cut,
            total.cut + total.rollouts,
            args.max_moves
        ));
    } else if total.rollouts == 0 {
        reporter.message(&format!(
            "ggp bench: warning: no playout finished in {} s; a longer `--seconds` measures this game",
            args.seconds
        ));
    }
    SUCCESS
}
