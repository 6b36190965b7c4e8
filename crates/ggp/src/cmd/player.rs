//! `ggp player`: an HTTP player that speaks the GGP protocol, with a built-in strategy.

use std::time::Duration;

use clap::ValueEnum;
use ggp_play::{MctsConfig, PlayerConfig, StrategyKind, serve};

use crate::cmd::milliseconds;
use crate::out::errln;
use crate::{SUCCESS, USAGE_OR_IO};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Strategy {
    /// A uniformly random legal move.
    Random,
    /// The first legal move in canonical order (as ggp-base's legal player).
    Legal,
    /// Flat Monte Carlo: random playouts after each legal move until the clock; the best mean
    /// (a GDL-II game, where the state is hidden: as `sample`).
    Montecarlo,
    /// Monte Carlo tree search (UCT with rollouts in batches, a solver, tree reuse; a
    /// GDL-II game: as `sample`).
    Mcts,
    /// Flat Monte Carlo over the states the player may be in (GDL-II) or the state (GDL):
    /// the move with the best average goal in random playouts, by the play clock.
    Sample,
}

#[derive(clap::Args)]
pub struct Args {
    /// The port to listen on.
    #[arg(long, default_value_t = 9147)]
    port: u16,
    /// The address to listen on (`0.0.0.0` for every interface).
    #[arg(long, default_value = "0.0.0.0")]
    host: String,
    /// How the player chooses its moves.
    #[arg(long, value_enum, default_value = "random")]
    strategy: Strategy,
    /// The name INFO reports (default: `ggp-<strategy>`).
    #[arg(long)]
    name: Option<String>,
    /// Seed of the strategy's random choices (match `k` uses `seed + k`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Milliseconds kept back from each clock for the network.
    #[arg(long, default_value_t = 1000, value_parser = milliseconds)]
    margin_ms: u64,
    /// MCTS: threads searching, each its own tree (root-parallel; one with the reference
    /// engine).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    /// MCTS: the most nodes the search trees of a match hold (the least visited are dropped
    /// beyond it).
    #[arg(long, default_value_t = MctsConfig::default().max_nodes as u64,
          value_parser = clap::value_parser!(u64).range(1000..=1_000_000_000))]
    max_nodes: u64,
    /// Log nothing (by default each request is logged on standard error: what it was, the
    /// answer, and how long it took).
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: Args) -> u8 {
    let kind = match args.strategy {
        Strategy::Random => StrategyKind::Random,
        Strategy::Legal => StrategyKind::Legal,
        Strategy::Montecarlo => StrategyKind::MonteCarlo,
        Strategy::Mcts => StrategyKind::Mcts(MctsConfig {
            threads: args.threads as usize,
            max_nodes: args.max_nodes as usize,
            ..MctsConfig::default()
        }),
        Strategy::Sample => StrategyKind::Sample,
    };
    let name = args.name.unwrap_or_else(|| {
        format!(
            "ggp-{}",
            format!("{:?}", args.strategy).to_ascii_lowercase()
        )
    });
    let config = PlayerConfig {
        name: name.clone(),
        factory: kind.factory(args.seed),
        margin: Duration::from_millis(args.margin_ms),
        log: !args.quiet,
    };
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            errln!("ggp player: {e}");
            return USAGE_OR_IO;
        }
    };
    let address = format!("{}:{}", args.host, args.port);
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(&address).await {
            Ok(listener) => listener,
            Err(e) => {
                errln!("ggp player: cannot listen on {address}: {e}");
                return USAGE_OR_IO;
            }
        };
        let bound = listener
            .local_addr()
            .map_or(address.clone(), |a| a.to_string());
        errln!("ggp player: `{name}` listening on {bound} (Ctrl-C to stop)");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        match serve(listener, config, shutdown).await {
            Ok(()) => SUCCESS,
            Err(e) => {
                errln!("ggp player: {e}");
                USAGE_OR_IO
            }
        }
    })
}
