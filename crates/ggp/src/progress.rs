//! Progress on standard error for work that can take more than a few seconds (checking a
//! large file, building a reasoner), so that a long silence is never mistaken for a hang.
//! Drawn only when standard error is a terminal (indicatif's own rule), so logs and pipes get
//! nothing.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::input::Input;

/// Inputs from this size (bytes) get a spinner while they are checked.
const LARGE_INPUT: usize = 1 << 20;

/// A spinner with a message and the time elapsed; it disappears when dropped.
pub struct Spinner(Option<ProgressBar>);

impl Spinner {
    /// A spinner saying `message…`.
    pub fn start(message: impl Into<String>) -> Spinner {
        let bar = ProgressBar::new_spinner();
        if bar.is_hidden() {
            return Spinner(None);
        }
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}… {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.into());
        bar.enable_steady_tick(Duration::from_millis(120));
        Spinner(Some(bar))
    }

    /// A spinner for `doing` (`checking`) an input, if it is large enough to take a while.
    pub fn for_input(doing: &str, input: &Input) -> Spinner {
        if input.text.len() < LARGE_INPUT {
            return Spinner(None);
        }
        Spinner::start(format!(
            "{doing} {} ({:.1} MB)",
            input.name,
            input.text.len() as f64 / 1e6
        ))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
