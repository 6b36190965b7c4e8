//! `ggp bench`: random playouts for a number of seconds, reported in the gdl-perf line protocol
//! (`version=`, `millisecondsTaken=`, `numStateChanges=`, `numRollouts=`) and as a summary.
//! With `--percepts` (GDL-II games), every role's percepts of every joint move are computed too.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gdl_reason::machine::sequential_playouts;
use gdl_reason::reference::Limits;
use gdl_reason::{Machine, ReasonError, StateMachine, Until};
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
    /// GDL-II: at every step of every playout, compute each role's percepts (its `sees`) of the
    /// joint move, as a game manager does; one playout at a time, the goals at the end not
    /// evaluated. Refused for a game without `sees` rules.
    #[arg(long)]
    percepts: bool,
}

#[derive(Default)]
struct Tally {
    rollouts: u64,
    /// Playouts cut at `--max-moves`.
    cut: u64,
    state_changes: u64,
    /// Moves of the finished playouts.
    finished_moves: u64,
    /// Playouts that ended in an error of the game's own rules (no goal value, or several, in
    /// a terminal state; a role without legal moves), and the first such error.
    failed: u64,
    first_failure: Option<String>,
    /// `--percepts`: the roles' percepts computed (one role's percepts of one joint move
    /// each), and the terms they held.
    percepts: u64,
    percept_terms: u64,
    elapsed: Duration,
}

impl Tally {
    /// Adds a thread's playouts; the run took as long as its longest thread.
    fn add(&mut self, t: Tally) {
        self.rollouts += t.rollouts;
        self.cut += t.cut;
        self.state_changes += t.state_changes;
        self.finished_moves += t.finished_moves;
        self.percepts += t.percepts;
        self.percept_terms += t.percept_terms;
        self.failed += t.failed;
        if self.first_failure.is_none() {
            self.first_failure = t.first_failure;
        }
        self.elapsed = self.elapsed.max(t.elapsed);
    }
}

/// Playouts for `seconds`, on one reasoner.
fn run_playouts(
    mut machine: Machine,
    seconds: f64,
    seed: u64,
    max_moves: usize,
    sequential: bool,
) -> Result<Tally, String> {
    if !matches!(machine, Machine::Fast(_)) {
        return run_stepped_playouts(machine, seconds, seed, max_moves, false);
    }
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
        ..Tally::default()
    })
}

/// Random playouts one at a time for `seconds`, step by step: the deadline is checked before
/// each step, and the playout running at the deadline is dropped (its steps are counted), as
/// in [`sequential_playouts`]. With `percepts`, every role's percepts of each joint move are
/// computed before it is made (and the goals at the end are not evaluated). A playout that
/// ends in an error of the game's own rules (chess has no goal value at its move limit) is
/// counted as failed, and the run goes on: its steps were computed like any others.
fn run_stepped_playouts(
    mut machine: Machine,
    seconds: f64,
    seed: u64,
    max_moves: usize,
    percepts: bool,
) -> Result<Tally, String> {
    let initial = machine.initial_state().map_err(|e| e.to_string())?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let begin = Instant::now();
    let deadline = begin + Duration::from_secs_f64(seconds);
    // A question still running at the deadline is cut there (a step of a game with millions
    // of legal moves can take seconds).
    machine.set_until(Some(deadline));
    let mut tally = Tally::default();
    match stepped_playouts(
        &mut machine,
        &initial,
        deadline,
        max_moves,
        percepts,
        &mut rng,
        &mut tally,
    ) {
        Ok(()) => {}
        // A question cut short by its budget at the deadline ends the run there.
        Err(ReasonError::Budget(_)) if Instant::now() >= deadline => {}
        Err(e) => return Err(format!("in a playout: {e}")),
    }
    tally.elapsed = begin.elapsed();
    Ok(tally)
}

/// The loop of [`run_stepped_playouts`], adding to `tally`.
fn stepped_playouts(
    machine: &mut Machine,
    initial: &<Machine as StateMachine>::State,
    deadline: Instant,
    max_moves: usize,
    percepts: bool,
    rng: &mut SmallRng,
    tally: &mut Tally,
) -> Result<(), ReasonError> {
    // An error of the game's own rules ends the playout, counted as failed.
    let failed = |tally: &mut Tally, e: ReasonError| match e {
        ReasonError::Evaluation(m) => {
            tally.failed += 1;
            tally.first_failure.get_or_insert(m);
            Ok(())
        }
        e => Err(e),
    };
    while Instant::now() < deadline {
        let mut state = initial.clone();
        let mut steps = 0u64;
        loop {
            if Instant::now() >= deadline {
                return Ok(());
            }
            if machine.is_terminal(&state)? {
                // With percepts, the goals are not evaluated.
                let goals = if percepts {
                    Ok(())
                } else {
                    machine.goals(&state).map(drop)
                };
                match goals {
                    Ok(()) => {
                        tally.rollouts += 1;
                        tally.finished_moves += steps;
                    }
                    Err(e) => failed(tally, e)?,
                }
                break;
            }
            if steps >= max_moves as u64 {
                tally.cut += 1;
                break;
            }
            let joint = match machine.random_joint_move(&state, rng) {
                Ok(joint) => joint,
                Err(e) => {
                    failed(tally, e)?;
                    break;
                }
            };
            // The percepts are counted with the step they belong to, once it is made: a
            // next state cut short at the deadline ends the run, and neither is counted.
            let seen = if percepts {
                Some(machine.all_percepts(&state, &joint)?)
            } else {
                None
            };
            state = machine.next_state(&state, &joint)?;
            tally.state_changes += 1;
            if let Some(seen) = seen {
                tally.percepts += seen.len() as u64;
                tally.percept_terms += seen.iter().map(|s| s.len() as u64).sum::<u64>();
            }
            steps += 1;
        }
    }
    Ok(())
}

/// Peak resident memory of this process, from `/proc` (Linux), in MiB.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Reports a refusal or a failure; the exit status to end with.
fn fail(reporter: &Reporter, message: String, status: u8) -> u8 {
    reporter.message(&format!("ggp bench: {message}"));
    status
}

/// What `ggp bench`'s steps share: the arguments, the game, and what building its first
/// reasoner told.
struct Bench<'a> {
    args: &'a Args,
    reporter: Reporter,
    input: input::Input,
    limits: Limits,
    /// The engine each thread after the first builds its reasoner with.
    engine: Engine,
    engine_name: &'static str,
    /// How long building the first reasoner took.
    build: Duration,
    /// The fast engine's network (or its join plans), described.
    network: Option<String>,
    /// How the playouts are run, described.
    mode: String,
}

pub fn run(args: Args) -> u8 {
    let (bench, first) = match Bench::prepare(&args) {
        Ok(prepared) => prepared,
        Err(status) => return status,
    };
    let total = match bench.measure(first) {
        Ok(total) => total,
        Err(status) => return status,
    };
    bench.report(&total)
}

impl<'a> Bench<'a> {
    /// Reads the game and builds the first thread's reasoner; the exit status, once the
    /// refusal is reported, when the game cannot be measured.
    fn prepare(args: &'a Args) -> Result<(Self, Machine), u8> {
        let reporter = Reporter::new(Format::Human, true);
        let input = input::read(&args.game).map_err(|m| fail(&reporter, m, USAGE_OR_IO))?;
        let limits = Limits {
            time: Some(Duration::from_secs_f64(args.state_timeout)),
            ..Limits::default()
        };
        // The first thread's reasoner is built here, so that errors are reported once; the
        // others build their own (a reasoner serves one thread).
        let started = Instant::now();
        let first = build_machine("bench", &reporter, &input, args.engine, limits)?;
        let build = started.elapsed();
        if args.percepts && !first.has_sees() {
            return Err(fail(
                &reporter,
                format!(
                    "{}: `--percepts` measures GDL-II percepts, and this game has no `sees` rules",
                    input.name
                ),
                INPUT_ERRORS,
            ));
        }
        let engine = match &first {
            Machine::Fast(_) | Machine::Joins(..) => Engine::Fast,
            Machine::Reference(..) | Machine::Knowledge(..) => Engine::Reference,
        };
        let mode = match &first {
            _ if args.percepts => {
                "one playout at a time, every role's percepts at every step".into()
            }
            Machine::Fast(m) if m.has_lanes() && !args.sequential => {
                format!("{} playouts side by side", gdl_reason::fast::LANES)
            }
            _ => "one playout at a time".to_string(),
        };
        let bench = Bench {
            args,
            reporter,
            input,
            limits,
            engine,
            engine_name: first.engine_name(),
            build,
            network: network(&first),
            mode,
        };
        Ok((bench, first))
    }

    /// Runs the playouts on every thread, the first on `first`; their sum, or the exit status
    /// once a thread's failure is reported.
    fn measure(&self, first: Machine) -> Result<Tally, u8> {
        let mut first = Some(first);
        let results: Vec<Result<Tally, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.args.threads)
                .map(|k| {
                    let seed = self.args.seed.wrapping_add(k as u64);
                    let machine = first.take();
                    std::thread::Builder::new()
                        .name(format!("bench-{k}"))
                        .spawn_scoped(scope, move || self.playouts(machine, seed))
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
                Ok(t) => total.add(t),
                Err(e) => {
                    return Err(fail(
                        &self.reporter,
                        format!("{}: {e}", self.input.name),
                        INPUT_ERRORS,
                    ));
                }
            }
        }
        Ok(total)
    }

    /// One thread's playouts, on `machine`, or on a reasoner of its own built here.
    fn playouts(&self, machine: Option<Machine>, seed: u64) -> Result<Tally, String> {
        let args = self.args;
        let machine = match machine {
            Some(machine) => machine,
            None => Machine::build(
                &gdl_check::check(&self.input.text),
                self.engine.choice(),
                self.limits,
            )
            .map_err(|_| "the reasoner cannot be built".to_string())?,
        };
        if args.percepts {
            run_stepped_playouts(machine, args.seconds, seed, args.max_moves, true)
        } else {
            run_playouts(machine, args.seconds, seed, args.max_moves, args.sequential)
        }
    }

    /// Prints the results, and warns of playouts cut or none finished; the exit status.
    fn report(&self, total: &Tally) -> u8 {
        let args = self.args;
        match out::print(&self.results(total)) {
            Ok(()) => {}
            // `ggp bench … | head -1` has what it wanted.
            Err(e) if out::is_closed(&e) => {}
            Err(e) => {
                return fail(
                    &self.reporter,
                    format!("cannot write the results: {e}"),
                    USAGE_OR_IO,
                );
            }
        }
        if total.cut > 0 && total.rollouts == 0 {
            return fail(
                &self.reporter,
                format!(
                    "{}: no playout reached a terminal state: all {} were cut at {} moves (does the game end? `--max-moves` sets the limit)",
                    self.input.name, total.cut, args.max_moves
                ),
                INPUT_ERRORS,
            );
        }
        if total.cut > 0 {
            self.reporter.message(&format!(
                "ggp bench: warning: {} of {} playouts were cut at {} moves without reaching a terminal state, and are not counted",
                total.cut,
                total.cut + total.rollouts,
                args.max_moves
            ));
        } else if total.rollouts == 0 {
            self.reporter.message(&format!(
                "ggp bench: warning: no playout finished in {} s; a longer `--seconds` measures this game",
                args.seconds
            ));
        }
        SUCCESS
    }

    /// The results: the gdl-perf lines, then a summary.
    fn results(&self, total: &Tally) -> String {
        let args = self.args;
        let engine_name = self.engine_name;
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
        line(format!("game:          {}", self.input.name));
        line(format!(
            "engine:        {engine_name}, {} thread{}",
            args.threads,
            if args.threads == 1 { "" } else { "s" }
        ));
        line(format!("playouts:      {}", self.mode));
        line(format!(
            "playouts/s:    {:.1}",
            total.rollouts as f64 / secs
        ));
        line(format!(
            "states/s:      {:.1}",
            total.state_changes as f64 / secs
        ));
        if args.percepts {
            line(format!(
                "percepts/s:    {:.1} ({} in all, each one role's percepts of one joint move)",
                total.percepts as f64 / secs,
                total.percepts
            ));
            line(format!(
                "terms seen/s:  {:.1} ({} in all)",
                total.percept_terms as f64 / secs,
                total.percept_terms
            ));
        }
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
        if let Some(first) = &total.first_failure {
            line(format!(
                "failed:        {} playouts ended in an error of the game's rules (the first: {first})",
                total.failed
            ));
        }
        line(format!(
            "build time:    {:.1} ms",
            self.build.as_secs_f64() * 1000.0
        ));
        if let Some(network) = &self.network {
            line(format!("network:       {network}"));
        }
        if let Some(mib) = peak_memory_mib() {
            line(format!("peak memory:   {mib:.1} MiB"));
        }
        text
    }
}

/// The fast engine's network, or its join plans, described; `None` for the reference engine.
fn network(machine: &Machine) -> Option<String> {
    match machine {
        Machine::Fast(m) => {
            let s = m.stats();
            Some(format!(
                "{} nodes, {} edges; {} fluents, {} moves; {} ground rules",
                s.nodes, s.edges, s.fluents, s.moves, s.ground_rules
            ))
        }
        Machine::Joins(m, reason) => {
            let (rules, components) = m.size();
            Some(format!(
                "none: join plans, {rules} rules in {components} components (too large for a network: {reason})"
            ))
        }
        Machine::Reference(..) | Machine::Knowledge(..) => None,
    }
}
