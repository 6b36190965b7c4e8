//! Clocks: deadlines, the time of a record and the seconds of a message.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Now, in milliseconds since 1970: the times of a match record.
pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `from + clock`, or a year from `from` when the clock is too long to add.
pub(super) fn deadline_after(from: Instant, clock: Duration) -> Instant {
    from.checked_add(clock)
        .or_else(|| from.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(from)
}

/// Seconds of a clock for a message, `5 s` or `0.5 s`.
pub(super) fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
