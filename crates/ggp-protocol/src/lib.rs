//! The messages of the General Game Playing protocol (§8 and Appendix B of the specification,
//! with ggp-base's ABORT, INFO and PREVIEW): the Game Manager's requests and the players'
//! replies, parsed liberally and printed as the specification shows them.
//!
//! Requests are S-expressions read case-insensitively: `(START <id> <role> (<rules>) <start>
//! <play>)`, `(PLAY <id> <moves>)`, `(STOP <id> <moves>)`, `(ABORT <id>)`, `(INFO)`, `(PREVIEW
//! (<rules>) <clock>)`, where `<moves>` is `NIL` or a list with a move per role. Terms (roles,
//! moves, the rules) are kept as the text the sender wrote; the reasoner reads them.

mod message;

pub use message::{InfoReply, ProtocolError, Reply, Request, Start, move_candidates};
