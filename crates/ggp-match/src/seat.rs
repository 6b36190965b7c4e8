//! Seats played from inside the process: a person at a web page, a test.
//!
//! A [`SeatChannel`] is a seat whose moves come from a channel rather than from HTTP or a
//! built-in strategy. The manager drives it as it drives every other seat: it tells the seat
//! the match has begun ([`SeatMessage::Start`]; the seat counts as ready at once), asks it for
//! each move ([`SeatMessage::Turn`], with the seat's legal moves as the rules spell them and a
//! one-shot reply), and judges the reply exactly as a remote player's: a legal move stands;
//! an illegal or unparsable one, or none before the play clock and the grace run out, is
//! replaced by a random legal move and recorded as an error (`illegal: …`, `timeout: …`,
//! `connection: …` when the other end of the channel is gone). It is told how the match ended
//! ([`SeatMessage::Stop`], [`SeatMessage::Abort`]).

use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

/// What the manager tells a [`SeatChannel`].
#[derive(Debug)]
pub enum SeatMessage {
    /// The match has begun; the seat plays `role` (the `seat`th role, from 0).
    Start {
        match_id: String,
        role: String,
        seat: usize,
        start_clock: Duration,
        play_clock: Duration,
    },
    /// The manager waits for the seat's move at this step.
    Turn(Turn),
    /// The match ended normally, after this last joint move (none if it never started).
    Stop { moves: Option<Vec<String>> },
    /// The match was aborted; no more turns come.
    Abort,
}

/// A request for a move.
#[derive(Debug)]
pub struct Turn {
    /// The step, from 0: the move is made in state `step`.
    pub step: usize,
    /// The seat's legal moves, as the rules spell them, in the manager's order.
    pub legal: Vec<String>,
    /// When the play clock runs out. The manager waits the match's grace beyond it, then
    /// substitutes a random legal move.
    pub deadline: Instant,
    /// Where the move goes: its text, judged like a remote player's reply.
    pub reply: oneshot::Sender<String>,
}

/// A seat whose moves come from a channel (see the module documentation). Cheap to clone;
/// every clone feeds the same receiver.
#[derive(Clone, Debug)]
pub struct SeatChannel {
    name: String,
    sender: mpsc::UnboundedSender<SeatMessage>,
}

impl SeatChannel {
    /// A seat named `name` (what the record calls its player: `human`, say), and the receiver
    /// of what the manager tells it.
    pub fn new(name: impl Into<String>) -> (SeatChannel, mpsc::UnboundedReceiver<SeatMessage>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            SeatChannel {
                name: name.into(),
                sender,
            },
            receiver,
        )
    }

    /// The player's name in the record.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends a message; `false` if nobody listens any more.
    pub(crate) fn send(&self, message: SeatMessage) -> bool {
        self.sender.send(message).is_ok()
    }
}
