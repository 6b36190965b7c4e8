//! Writing to standard output and standard error without panicking.
//!
//! `println!` panics when standard output is a closed pipe (`ggp … | head -1`); these return the
//! error instead, so that each command can treat a reader that went away as the end of its
//! interest: read-only commands stop quietly, `ggp match` aborts its match cleanly (ABORT to the
//! players, the record marked aborted). A closed standard error loses the message and nothing
//! else.

use std::io::{self, Write};

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Whether an error writing standard output means its reader went away.
pub fn is_closed(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Writes a line to standard error; a failure is ignored (there is nowhere left to say it).
pub fn eprint_line(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.write_all(b"\n");
}

/// `println!` that returns the error: `outln!("x = {x}")?`.
macro_rules! outln {
    () => { $crate::out::print("\n") };
    ($($arg:tt)*) => { $crate::out::print(&format!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` that cannot panic.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::out::eprint_line(&format!($($arg)*)) };
}

pub(crate) use {errln, outln};
