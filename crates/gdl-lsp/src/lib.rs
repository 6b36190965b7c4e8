//! The GDL language server: what `ggp lsp` runs.
//!
//! A thin shell over the toolkit (taplo's layout): documents are kept as text
//! ([`document`]), each version is checked with exactly what `ggp check` runs
//! ([`analysis`]), names are indexed from the same parse ([`index`]), and the protocol's
//! positions (lines and UTF-16 code units) are converted at the edge ([`position`]).
//! [`server`] is the loop; [`features`] computes each answer; [`transport`] reads and writes
//! the protocol's frames, with limits on what a client can make it read.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod analysis;
pub mod docs;
pub mod document;
mod errors;
pub mod features;
pub mod index;
pub mod position;
pub mod server;
pub mod transport;

pub use server::{ServerError, run};
pub use transport::TransportError;

/// Why a client could not be served: the transport or the server failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// Serves one client on standard input and output. Returns whether the client ended the
/// session properly (`shutdown`, then `exit`), or why it could not be served.
pub fn serve_stdio() -> Result<bool, ServeError> {
    let (connection, io_threads) = transport::stdio()?;
    let clean = run(connection)?;
    io_threads.join()?;
    Ok(clean)
}
