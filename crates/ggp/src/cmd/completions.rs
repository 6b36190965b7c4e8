//! `ggp completions SHELL` and `ggp man`: shell completions and manual pages, generated from
//! the command-line definition itself (clap_complete, clap_mangen), so they never drift from it.

use std::path::PathBuf;

use clap::CommandFactory;

use crate::{SUCCESS, USAGE_OR_IO, out};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Prints the completion script for a shell on standard output. For example, for bash:
/// `ggp completions bash > ~/.local/share/bash-completion/completions/ggp`.
pub fn completions(args: CompletionsArgs) -> u8 {
    let mut command = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "ggp", &mut script);
    write(&String::from_utf8_lossy(&script), "completions")
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write `ggp.1` and a page per subcommand (`ggp-match.1`, …) into this directory instead
    /// of printing `ggp.1`.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the manual page `ggp.1` (roff), or writes every page into a directory.
pub fn man(args: ManArgs) -> u8 {
    let command = crate::Cli::command();
    match args.dir {
        None => {
            let mut page = Vec::new();
            if let Err(e) = clap_mangen::Man::new(command).render(&mut page) {
                out::errln!("ggp man: {e}");
                return USAGE_OR_IO;
            }
            write(&String::from_utf8_lossy(&page), "man")
        }
        Some(dir) => match clap_mangen::generate_to(command, &dir) {
            Ok(()) => SUCCESS,
            Err(e) => {
                out::errln!(
                    "ggp man: cannot write the pages into {}: {e}",
                    dir.display()
                );
                USAGE_OR_IO
            }
        },
    }
}

fn write(text: &str, command: &str) -> u8 {
    match out::print(text) {
        Ok(()) => SUCCESS,
        Err(e) if out::is_closed(&e) => SUCCESS,
        Err(e) => {
            out::errln!("ggp {command}: cannot write standard output: {e}");
            USAGE_OR_IO
        }
    }
}
