//! `ggp player`: an HTTP player that speaks the GGP protocol, with a built-in strategy.

use std::time::Duration;

use clap::ValueEnum;
use ggp_memory::Mib;
use ggp_play::{MctsConfig, PlayerConfig, PlayerLimits, StrategyKind, serve};

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
    /// The address to listen on: this machine only by default; `0.0.0.0` for every interface,
    /// as a player in a tournament whose manager runs elsewhere needs (the player has no
    /// authentication: anyone who reaches it can start matches on it, within its limits).
    #[arg(long, default_value = "127.0.0.1")]
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
    /// The memory of one match (its rules, its engine, its search); the matches played at once
    /// share three quarters of `--max-memory`, and a START that finds no room is answered 503
    /// (default: 1 GiB, at most half of that share).
    #[arg(long, value_name = "SIZE", value_parser = super::byte_size(16 << 20, usize::MAX))]
    session_memory: Option<usize>,
    /// The largest request read (a START carries the rules): a size in bytes or with a unit.
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = super::byte_size(64 << 10, 1 << 30))]
    max_request: usize,
    /// Connections open at once; past it, the connection idle the longest is closed (default:
    /// from the limit of open files, 896 under the common 1,024).
    #[arg(long, value_name = "N", value_parser = super::count_up_to(1 << 20))]
    max_connections: Option<usize>,
    /// Connections open at once from one client address (an IPv6 address's /64); past it, that
    /// address's idlest connection is closed for its newcomer (default: a quarter of
    /// `--max-connections`, at least 16).
    #[arg(long, value_name = "N", value_parser = super::count_up_to(1 << 20))]
    max_per_address: Option<usize>,
    /// Matches played at once for one client address (an IPv6 address's /64); a START beyond
    /// it is answered 503. A manager that runs many matches against this player at once (a
    /// tournament's rounds on a large machine) needs it raised.
    #[arg(long, value_name = "N", default_value_t = ggp_play::DEFAULT_SESSIONS_PER_ADDRESS,
          value_parser = super::count_up_to(1 << 20))]
    max_matches_per_address: usize,
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
    let mut limits = PlayerLimits::default();
    if let Some(bytes) = args.session_memory {
        if bytes > limits.memory.capacity() {
            errln!(
                "ggp player: --session-memory {} is more than the {} the sessions share (three quarters of --max-memory)",
                Mib(bytes),
                Mib(limits.memory.capacity())
            );
            return USAGE_OR_IO;
        }
        limits.session_memory = bytes;
    }
    limits.max_request = args.max_request;
    if let Some(n) = args.max_connections {
        limits.http.max_connections = n;
        limits.http.max_per_address = ggp_http::default_per_address(n);
    }
    if let Some(n) = args.max_per_address {
        limits.http.max_per_address = n;
    }
    limits.max_sessions_per_address = args.max_matches_per_address;
    let config = PlayerConfig {
        name: name.clone(),
        factory: kind.factory(args.seed),
        margin: Duration::from_millis(args.margin_ms),
        log: !args.quiet,
        limits,
    };
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            errln!("ggp player: {e}");
            return USAGE_OR_IO;
        }
    };
    let address = format!("{}:{}", args.host, args.port);
    let status = runtime.block_on(async {
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
    });
    // Moves still being chosen (up to a play clock) are not waited for: the matches are the
    // managers' to end.
    runtime.shutdown_timeout(Duration::from_secs(1));
    status
}
