//! `ggp validate`: whether games are well-formed (termination, playability, goals,
//! winnability, `base` and `input`), proved on the reachable states or refuted with moves that
//! `ggp replay` plays to the offending state. The work is `gdl_validate`'s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gdl_reason::reference::Limits;
use gdl_reason::{EngineChoice, Machine, ReferenceMachine};
use gdl_syntax::SourceFile;
use gdl_validate::{CrossCheck, Options, Rendered, Report, Subject, Verdict};
use serde_json::json;

use crate::cmd::{Engine, count_up_to, positive_seconds, refuse_undecodable, refused};
use crate::report::{Format, Reporter, to_json};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input, out, progress};

#[derive(clap::Args)]
pub struct Args {
    /// Game descriptions (prefix KIF); `-` reads standard input.
    #[arg(required = true)]
    games: Vec<PathBuf>,
    /// Time for each game's exploration and random playouts (building the reasoner is not
    /// counted). Half of it at most goes to the exploration when the states do not all fit.
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds)]
    seconds: f64,
    /// States kept in memory (about 130 bytes each for connect four); a game with more
    /// reachable states is searched, not proved.
    #[arg(long, value_name = "N", default_value_t = gdl_validate::DEFAULT_MAX_STATES,
          value_parser = count_up_to(gdl_validate::MAX_STATES))]
    max_states: usize,
    /// At most this many random playouts when the exploration does not finish (by default,
    /// until the time is up).
    #[arg(long, value_name = "N")]
    playouts: Option<u64>,
    /// Seed of the random playouts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up on a state that derives more facts than this (the reference engine).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_facts)]
    max_facts: usize,
    /// `fast` (the reference engine where the fast one cannot compile the game), or
    /// `reference`, which also runs the fast engine beside it and reports every disagreement.
    #[arg(long, value_enum, default_value = "fast")]
    engine: Engine,
    /// How to print findings (on standard output).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Also write each finding's moves file to this directory, as `GAME.CODE[-ROLE].moves`.
    #[arg(long, value_name = "DIR")]
    counterexamples: Option<PathBuf>,
}

/// Counterexamples longer than this are shown in part in text output.
const SHOWN_MOVES: usize = 40;

pub fn run(args: Args) -> u8 {
    let reporter = Reporter::new(args.format, false);
    if let Some(dir) = &args.counterexamples
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        reporter.message(&format!(
            "ggp validate: cannot create {}: {e}",
            dir.display()
        ));
        return USAGE_OR_IO;
    }
    let mut status = SUCCESS;
    for path in &args.games {
        match validate_one(&args, &reporter, path) {
            Ok(s) => status = status.max(s),
            // `ggp validate … | head` has what it wanted.
            Err(e) if out::is_closed(&e) => return status,
            Err(e) => {
                reporter.message(&format!("ggp validate: cannot write the report: {e}"));
                return USAGE_OR_IO;
            }
        }
    }
    status
}

/// Validates one game and prints what was found; the exit status, or an error writing
/// standard output.
fn validate_one(args: &Args, reporter: &Reporter, path: &Path) -> std::io::Result<u8> {
    let input = match input::read(path) {
        Ok(input) => input,
        Err(message) => {
            reporter.message(&format!("ggp validate: {message}"));
            return Ok(USAGE_OR_IO);
        }
    };
    if let Some(status) = refuse_undecodable("validate", reporter, &input) {
        return Ok(status);
    }
    let spinner = progress::Spinner::start(format!("building the reasoner for {}", input.name));
    let validation = Validation::new(args, reporter, &input);
    let built = Instant::now();
    let validated = match args.engine.choice() {
        EngineChoice::Fast => validation.on_fast_engine(spinner),
        EngineChoice::Reference => validation.cross_checked(spinner),
    };
    let (report, engine) = match validated {
        Ok(validated) => validated,
        Err(status) => return Ok(status),
    };
    let setup = built.elapsed().saturating_sub(report.elapsed);
    validation.print(&report, &engine, setup)
}

/// One game's validation: what its steps share.
struct Validation<'a> {
    args: &'a Args,
    reporter: &'a Reporter,
    input: &'a input::Input,
    checked: gdl_check::Checked<'a>,
    options: Options,
    limits: Limits,
}

impl<'a> Validation<'a> {
    fn new(args: &'a Args, reporter: &'a Reporter, input: &'a input::Input) -> Self {
        let options = Options {
            time: Duration::from_secs_f64(args.seconds),
            max_states: args.max_states,
            playouts: args.playouts,
            seed: args.seed,
            ..Options::default()
        };
        // A question may take the whole budget, not more.
        let limits = Limits {
            max_facts: args.max_facts,
            time: Some(options.time.max(Duration::from_secs(1))),
            ..Limits::default()
        };
        Validation {
            args,
            reporter,
            input,
            checked: gdl_check::check(&input.text),
            options,
            limits,
        }
    }

    fn note(&self, message: String) {
        self.reporter.note(&format!(
            "ggp validate: note: {}: {message}",
            self.input.name
        ));
    }

    /// The spinner shown while the game is validated.
    fn validating(&self) -> progress::Spinner {
        progress::Spinner::start(format!(
            "validating {} (at most {} s)",
            self.input.name, self.args.seconds
        ))
    }

    /// Validates on the fast engine (the reference engine where it cannot compile the game);
    /// the report and the engine's name, or the exit status once a refusal is reported.
    fn on_fast_engine(&self, spinner: progress::Spinner) -> Result<(Report, String), u8> {
        let built = Machine::build(&self.checked, EngineChoice::Fast, self.limits);
        drop(spinner);
        let mut machine = match built {
            Ok(m) => m,
            Err(diagnostics) => {
                return Err(refused("validate", self.reporter, self.input, &diagnostics));
            }
        };
        if let Some(reason) = machine.join_tier() {
            self.note(format!(
                "too large for the fast engine's network ({reason}); the fast engine runs it with join plans"
            ));
        }
        if let Some(reason) = machine.fallback() {
            self.note(format!(
                "the fast engine cannot compile this game ({reason}); using the reference engine"
            ));
        }
        let engine = machine.engine_name();
        let _spinner = self.validating();
        Ok((run_on(&mut machine, &self.options), engine.to_string()))
    }

    /// Validates on the reference engine, with the fast engine run beside it and checked
    /// against it where it can compile the game; the report and the engines' names, or the
    /// exit status once a refusal is reported.
    fn cross_checked(&self, spinner: progress::Spinner) -> Result<(Report, String), u8> {
        if gdl_check::knows::first_use(&self.checked.program).is_some() {
            // GDL-III: the search's nodes are classes of histories, which one machine over
            // histories makes; the two engines' knowledge layers are cross-checked by the
            // tests (`gdl-reason`'s gdl3_engines), not step by step here.
            let built = Machine::build(&self.checked, EngineChoice::Reference, self.limits);
            drop(spinner);
            let mut machine =
                built.map_err(|d| refused("validate", self.reporter, self.input, &d))?;
            self.note(
                "GDL-III: validated on the reference engine over histories alone (the search \
                 over classes of histories is not cross-checked step by step)"
                    .into(),
            );
            let _spinner = self.validating();
            return Ok((run_on(&mut machine, &self.options), "reference".into()));
        }
        let reference = match ReferenceMachine::with_limits(&self.checked, self.limits) {
            Ok(m) => m,
            Err(diagnostics) => {
                drop(spinner);
                return Err(refused("validate", self.reporter, self.input, &diagnostics));
            }
        };
        // The fast engine as `Machine` builds it: a network, or the join tier.
        let fast = Machine::build(&self.checked, EngineChoice::Fast, self.limits);
        drop(spinner);
        match fast {
            Ok(fast) if fast.fallback().is_none() => {
                if let Some(reason) = fast.join_tier() {
                    self.note(format!(
                        "too large for the fast engine's network ({reason}); cross-checking its join tier"
                    ));
                }
                match CrossCheck::new(reference, fast, ("reference", "fast")) {
                    Ok(mut pair) => {
                        let _spinner = self.validating();
                        Ok((
                            run_on(&mut pair, &self.options),
                            "reference+fast".to_string(),
                        ))
                    }
                    Err(e) => {
                        self.reporter
                            .message(&format!("ggp validate: {}: {e}", self.input.name));
                        Err(INPUT_ERRORS)
                    }
                }
            }
            built => {
                let reason = match &built {
                    Ok(m) => m.fallback().unwrap_or_default().to_string(),
                    Err(d) => d.first().map(|d| d.message.clone()).unwrap_or_default(),
                };
                self.note(format!(
                    "the fast engine cannot compile this game ({reason}); nothing to cross-check, using the reference engine alone"
                ));
                let mut reference = reference;
                let _spinner = self.validating();
                Ok((
                    run_on(&mut reference, &self.options),
                    "reference".to_string(),
                ))
            }
        }
    }

    /// Prints the findings (writing their counterexamples with `--counterexamples`) and the
    /// summary; the exit status, or an error writing standard output.
    fn print(&self, report: &Report, engine: &str, setup: Duration) -> std::io::Result<u8> {
        let input = self.input;
        let file = SourceFile::new(input.name.clone(), input.text.clone());
        let rendered = report.diagnostics(&self.checked);
        let stem = Path::new(&input.name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| s != "<stdin>")
            .unwrap_or_else(|| "stdin".into());
        let mut status = if report.has_errors() {
            INPUT_ERRORS
        } else {
            SUCCESS
        };
        let mut text = String::new();
        // The moves shown so far in text output (without their comments), by finding.
        let mut shown: Vec<(String, &str)> = Vec::new();
        for r in &rendered {
            let written = match self.write_counterexample(&stem, r) {
                Ok(written) => written,
                Err(failed) => {
                    status = status.max(failed);
                    None
                }
            };
            match self.args.format {
                Format::Json => {
                    let mut line = to_json(&file, &r.diagnostic);
                    line["counterexample"] = json!(r.counterexample);
                    text.push_str(&line.to_string());
                    text.push('\n');
                }
                Format::Human => {
                    text.push_str(&file.render(&r.diagnostic, self.reporter.color()));
                    text.push('\n');
                    if let Some(moves) = &r.counterexample {
                        let joints: String =
                            moves.lines().filter(|l| !l.starts_with(';')).collect();
                        match shown.iter().find(|(j, _)| *j == joints) {
                            Some((_, name)) if written.is_none() && !joints.is_empty() => text
                                .push_str(&format!(
                                    "counterexample: the same moves as for {name} above\n"
                                )),
                            _ => {
                                text.push_str(&show_moves(moves, &input.name, written.as_deref()));
                                shown.push((joints, &r.name));
                            }
                        }
                    }
                    text.push('\n');
                }
            }
        }
        match self.args.format {
            Format::Json => {
                text.push_str(&summary_json(report, &input.name, engine).to_string());
                text.push('\n');
            }
            Format::Human => text.push_str(&summary_text(report, &input.name, engine, setup)),
        }
        out::print(&text)?;
        Ok(status)
    }

    /// With `--counterexamples`, writes a finding's moves file, named after the game and the
    /// finding; where it was written, or the exit status once the failure is reported.
    fn write_counterexample(&self, stem: &str, r: &Rendered) -> Result<Option<PathBuf>, u8> {
        let (Some(dir), Some(text)) = (&self.args.counterexamples, &r.counterexample) else {
            return Ok(None);
        };
        let target = dir.join(format!("{stem}.{}.moves", r.name));
        match crate::input::write_atomically(&target, text) {
            Ok(()) => Ok(Some(target)),
            Err(e) => {
                self.reporter.message(&format!("ggp validate: {e}"));
                Err(USAGE_OR_IO)
            }
        }
    }
}

fn run_on<M: Subject>(machine: &mut M, options: &Options) -> Report {
    gdl_validate::validate(machine, options)
}

/// A moves file in text output, indented, with the command that replays it.
fn show_moves(text: &str, game: &str, written: Option<&Path>) -> String {
    let mut out = String::new();
    let moves: Vec<&str> = text.lines().filter(|l| !l.starts_with(';')).collect();
    let file = match written {
        Some(path) => path.display().to_string(),
        None => "FILE".into(),
    };
    out.push_str(&format!(
        "counterexample ({} joint move{}; `ggp replay {game} --moves {file}` plays it):\n",
        moves.len(),
        if moves.len() == 1 { "" } else { "s" }
    ));
    let lines: Vec<&str> = text.lines().collect();
    if moves.len() <= SHOWN_MOVES {
        for line in lines {
            out.push_str(&format!("    {line}\n"));
        }
    } else {
        let comments = lines.len() - moves.len();
        for line in &lines[..comments + 20] {
            out.push_str(&format!("    {line}\n"));
        }
        out.push_str(&format!(
            "    ; … {} more joint moves (all of them: --counterexamples DIR, or --format json) …\n",
            moves.len() - 30
        ));
        for line in &lines[lines.len() - 10..] {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// `1 move`, `9 moves`, `1,234 moves`.
fn moves(n: u64) -> String {
    format!(
        "{} move{}",
        gdl_validate::thousands(n),
        if n == 1 { "" } else { "s" }
    )
}

fn names(report: &Report, which: fn(&Verdict) -> bool) -> String {
    report.named(which).join(", ")
}

fn summary_text(report: &Report, name: &str, engine: &str, setup: Duration) -> String {
    use gdl_validate::Property;
    let thousands = gdl_validate::thousands;
    let refuted = report.named(|v| *v == Verdict::Refuted);
    let verdict = if !refuted.is_empty() {
        format!("not well-formed ({} refuted)", refuted.join(", "))
    } else if report.well_formed() {
        "proved well-formed".to_string()
    } else if report.has_errors() {
        "errors found (see above), nothing refuted".to_string()
    } else {
        "no violation found, not proved".to_string()
    };
    // In a GDL-III game the nodes are classes of bisimilar histories.
    let (nodes, histories) = match report.histories {
        Some(n) => (
            "classes of histories",
            format!(
                " (standing for {} histor{})",
                thousands(n),
                if n == 1 { "y" } else { "ies" }
            ),
        ),
        None => ("states", String::new()),
    };
    let figures = if report.exhaustive {
        let depth = match report.verdict(Property::Terminates) {
            Verdict::Proved => format!(", the longest game {}", moves(report.depth)),
            _ => String::new(),
        };
        format!(
            "{} reachable {nodes}{histories}, {} terminal{depth}",
            thousands(report.states),
            thousands(report.terminal_states)
        )
    } else {
        let within = match report.complete_depth {
            Some(0) => " (not every state one move from the start)".to_string(),
            Some(d) => format!(" (every state within {} of the start)", moves(d)),
            None => String::new(),
        };
        format!(
            "{} {nodes} found{histories}, {} explored{within}, {} random playout{} of up to {}",
            thousands(report.states),
            thousands(report.explored),
            thousands(report.playouts),
            if report.playouts == 1 { "" } else { "s" },
            moves(report.longest_playout)
        )
    };
    let mut out = format!(
        "{name}: {verdict}: {figures} ({:.2} s on the {}{})\n",
        report.elapsed.as_secs_f64(),
        match engine {
            "reference+fast" => "reference engine, checked against the fast engine",
            "fast" => "fast engine",
            _ => "reference engine",
        },
        if setup.as_secs_f64() >= 0.01 {
            format!(", {:.2} s to build it", setup.as_secs_f64())
        } else {
            String::new()
        }
    );
    for (label, which) in [
        (
            "proved",
            (|v: &Verdict| *v == Verdict::Proved) as fn(&Verdict) -> bool,
        ),
        ("refuted", |v: &Verdict| *v == Verdict::Refuted),
        ("not applicable", |v: &Verdict| *v == Verdict::NotApplicable),
    ] {
        let list = names(report, which);
        if !list.is_empty() {
            out.push_str(&format!("  {label}: {list}\n"));
        }
    }
    // Undecided properties, grouped by reason.
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (p, v) in &report.verdicts {
        if let Verdict::Undecided(reason) = v {
            match groups.iter_mut().find(|(r, _)| r == reason) {
                Some((_, ps)) => ps.push(p.name()),
                None => groups.push((reason, vec![p.name()])),
            }
        }
    }
    for (reason, ps) in groups {
        out.push_str(&format!("  undecided: {}: {reason}\n", ps.join(", ")));
    }
    out
}

fn summary_json(report: &Report, name: &str, engine: &str) -> serde_json::Value {
    let reasons: serde_json::Map<String, serde_json::Value> = report
        .verdicts
        .iter()
        .filter_map(|(p, v)| match v {
            Verdict::Undecided(reason) => Some((p.name().to_string(), json!(reason))),
            _ => None,
        })
        .collect();
    json!({"summary": {
        "file": name,
        "states": report.states,
        "explored": report.explored,
        "terminal_states": report.terminal_states,
        "depth": report.depth,
        "histories": report.histories,
        "exhaustive": report.exhaustive,
        "proved": report.named(|v| *v == Verdict::Proved),
        "refuted": report.named(|v| *v == Verdict::Refuted),
        "undecided": report.named(|v| matches!(v, Verdict::Undecided(_))),
        "not_applicable": report.named(|v| *v == Verdict::NotApplicable),
        "undecided_because": reasons,
        "complete_depth": report.complete_depth,
        "playouts": report.playouts,
        "longest_playout": report.longest_playout,
        "engine": engine,
        "seconds": report.elapsed.as_secs_f64(),
    }})
}
