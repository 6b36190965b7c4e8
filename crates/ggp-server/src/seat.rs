//! Who plays a seat of a match.

/// The name a human seat has in records, and what a request names one by.
pub const HUMAN: &str = "human";
