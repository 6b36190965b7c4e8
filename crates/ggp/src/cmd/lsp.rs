//! `ggp lsp`: the GDL language server, for editors, on standard input and output.

use crate::{SUCCESS, USAGE_OR_IO, out};

#[derive(clap::Args)]
pub struct Args {
    /// Accepted for editors that pass it (the server always speaks over standard input and
    /// output).
    #[arg(long)]
    stdio: bool,
}

pub fn run(_args: Args) -> u8 {
    match gdl_lsp::serve_stdio() {
        Ok(true) => SUCCESS,
        // The protocol says: exit without a shutdown first ends with status 1.
        Ok(false) => 1,
        Err(message) => {
            out::eprint_line(&format!("ggp lsp: {message}"));
            USAGE_OR_IO
        }
    }
}
