//! Parsing and printing requests and replies.

use std::fmt;

use gdl_syntax::cst::{NodeId, NodeKind, Tree, parse_tree};

/// Why a message could not be read: what is wrong, and where (a byte offset into the message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    pub message: String,
    pub offset: usize,
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for ProtocolError {}

fn error(message: impl Into<String>, offset: usize) -> ProtocolError {
    ProtocolError {
        message: message.into(),
        offset,
    }
}

/// The START request: a new match, the role this player plays, the rules and the clocks
/// (seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    pub match_id: String,
    pub role: String,
    /// The game description: the sentences inside the rules list, as sent.
    pub rules: String,
    pub start_clock: u64,
    pub play_clock: u64,
}

/// A GDL-II PLAY or STOP with the turn and the player's own move ([`Request::Turn`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// STOP rather than PLAY.
    pub stop: bool,
    pub match_id: String,
    pub turn: u64,
    /// The move made for the player at the last turn (`None`, `NIL`, in the first PLAY): the
    /// manager's substitute if its own reply was late or illegal.
    pub last_move: Option<String>,
    /// What the player sees of the last turn (`None`, `NIL`, in the first PLAY).
    pub percepts: Option<Vec<String>>,
}

/// A request of the Game Manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Start(Start),
    /// The previous joint move (role order), `None` for the first PLAY (`NIL`).
    Play {
        match_id: String,
        moves: Option<Vec<String>>,
    },
    /// The end of the match, with the last joint move.
    Stop {
        match_id: String,
        moves: Option<Vec<String>>,
    },
    Abort {
        match_id: String,
    },
    /// GDL-II, as the GameController sends it: `(PLAY <id> NIL)` first, then
    /// `(PLAY <id> (<percept> … ))` with the player's percepts of the step just played, and
    /// `(STOP <id> (<percept> … ))`; each percept is followed by a space, as the GameController
    /// writes them, and no percepts are `()`. Read back, these are [`Request::Play`] and
    /// [`Request::Stop`] (a list of terms either way): a player knows from the game which it
    /// gets.
    Sees {
        stop: bool,
        match_id: String,
        percepts: Option<Vec<String>>,
    },
    /// GDL-II with the turn and the player's own last move, as the Dresden GGP server's
    /// GDL-II protocol has it: `(PLAY <id> <turn> <move>|NIL <percepts>|NIL)` and
    /// `(STOP …)`; the turn is 0 in the first PLAY (whose move and percepts are `NIL`) and one
    /// more in every later PLAY or STOP.
    Turn(Turn),
    Info,
    /// The rules of a game the player may be asked to play, to study.
    Preview {
        rules: String,
        preview_clock: u64,
    },
}

impl Request {
    /// Reads a request. Keywords and `NIL` in any letter case; any whitespace.
    pub fn parse(text: &str) -> Result<Request, ProtocolError> {
        let (tree, diagnostics) = parse_tree(text);
        if let Some(d) = diagnostics.iter().find(|d| d.is_error()) {
            return Err(error(d.message.clone(), d.span.start as usize));
        }
        let items: Vec<NodeId> = tree.top_items().collect();
        let list = match items.as_slice() {
            [] => return Err(error("the message is empty", 0)),
            [first, ..] if tree.kind(*first) != NodeKind::List => {
                return Err(error(
                    "a request is a list such as `(PLAY <match id> NIL)`",
                    tree.span(*first).start as usize,
                ));
            }
            [one] => *one,
            [_, second, ..] => {
                return Err(error(
                    "more than one form in the message",
                    tree.span(*second).start as usize,
                ));
            }
        };
        let reader = Reader { tree: &tree, text };
        let args: Vec<NodeId> = tree.items(list).collect();
        let Some((&keyword, args)) = args.split_first() else {
            return Err(error(
                "`()` is not a request",
                tree.span(list).start as usize,
            ));
        };
        let name = reader.atom(keyword, "a command name")?.to_ascii_uppercase();
        // Missing arguments are reported at the closing parenthesis.
        let end = tree.span(list).end as usize - 1;
        let want = |n: usize, shape: &str| -> Result<(), ProtocolError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(error(
                    format!(
                        "{name} takes {n} argument{}: {shape}",
                        if n == 1 { "" } else { "s" }
                    ),
                    args.get(n).map_or(end, |&a| tree.span(a).start as usize),
                ))
            }
        };
        Ok(match name.as_str() {
            "START" => {
                want(
                    5,
                    "(START <match id> <role> (<rules>) <start clock> <play clock>)",
                )?;
                Request::Start(Start {
                    match_id: reader.atom(args[0], "a match id")?.to_owned(),
                    role: reader.term(args[1]),
                    rules: reader.rules(args[2])?,
                    start_clock: reader.number(args[3], "the start clock")?,
                    play_clock: reader.number(args[4], "the play clock")?,
                })
            }
            "PLAY" | "STOP" if args.len() == 4 => {
                let last_move = match reader.term(args[2]) {
                    m if m.eq_ignore_ascii_case("nil") => None,
                    m => Some(m),
                };
                Request::Turn(Turn {
                    stop: name == "STOP",
                    match_id: reader.atom(args[0], "a match id")?.to_owned(),
                    turn: reader.count(args[1], "the turn")?,
                    last_move,
                    percepts: reader.moves(args[3])?,
                })
            }
            "PLAY" | "STOP" => {
                want(
                    2,
                    &format!(
                        "({name} <match id> NIL|(<move> …)), or with GDL-II's turn and move, ({name} <match id> <turn> <move> <percepts>)"
                    ),
                )?;
                let match_id = reader.atom(args[0], "a match id")?.to_owned();
                let moves = reader.moves(args[1])?;
                if name == "PLAY" {
                    Request::Play { match_id, moves }
                } else {
                    Request::Stop { match_id, moves }
                }
            }
            "ABORT" => {
                want(1, "(ABORT <match id>)")?;
                Request::Abort {
                    match_id: reader.atom(args[0], "a match id")?.to_owned(),
                }
            }
            "INFO" => {
                want(0, "(INFO)")?;
                Request::Info
            }
            "PREVIEW" => {
                want(2, "(PREVIEW (<rules>) <preview clock>)")?;
                Request::Preview {
                    rules: reader.rules(args[0])?,
                    preview_clock: reader.number(args[1], "the preview clock")?,
                }
            }
            _ => {
                return Err(error(
                    format!(
                        "unknown command `{name}` (expected START, PLAY, STOP, ABORT, INFO or PREVIEW)"
                    ),
                    tree.span(keyword).start as usize,
                ));
            }
        })
    }

    /// The match a request is about, if any.
    pub fn match_id(&self) -> Option<&str> {
        match self {
            Request::Start(start) => Some(&start.match_id),
            Request::Play { match_id, .. }
            | Request::Stop { match_id, .. }
            | Request::Sees { match_id, .. }
            | Request::Turn(Turn { match_id, .. })
            | Request::Abort { match_id } => Some(match_id),
            Request::Info | Request::Preview { .. } => None,
        }
    }
}

fn write_moves(f: &mut fmt::Formatter<'_>, moves: &Option<Vec<String>>) -> fmt::Result {
    match moves {
        None => f.write_str("NIL"),
        Some(moves) => write!(f, "({})", moves.join(" ")),
    }
}

/// `NIL`, or `(p1 p2 )`: each percept followed by a space, as the GameController writes them.
fn write_percepts(f: &mut fmt::Formatter<'_>, percepts: &Option<Vec<String>>) -> fmt::Result {
    match percepts {
        None => f.write_str("NIL"),
        Some(list) => {
            f.write_str("(")?;
            for p in list {
                write!(f, "{p} ")?;
            }
            f.write_str(")")
        }
    }
}

/// Prints a request as Appendix B shows it: `(PLAY MATCH.1 ((MARK 2 2) NOOP))`. Keywords are
/// upper case; terms are printed as given.
impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::Start(s) => write!(
                f,
                "(START {} {} ({}) {} {})",
                s.match_id, s.role, s.rules, s.start_clock, s.play_clock
            ),
            Request::Play { match_id, moves } => {
                write!(f, "(PLAY {match_id} ")?;
                write_moves(f, moves)?;
                f.write_str(")")
            }
            Request::Stop { match_id, moves } => {
                write!(f, "(STOP {match_id} ")?;
                write_moves(f, moves)?;
                f.write_str(")")
            }
            Request::Sees {
                stop,
                match_id,
                percepts,
            } => {
                let name = if *stop { "STOP" } else { "PLAY" };
                write!(f, "({name} {match_id} ")?;
                write_percepts(f, percepts)?;
                f.write_str(")")
            }
            Request::Turn(t) => {
                let name = if t.stop { "STOP" } else { "PLAY" };
                write!(
                    f,
                    "({name} {} {} {} ",
                    t.match_id,
                    t.turn,
                    t.last_move.as_deref().unwrap_or("NIL")
                )?;
                write_percepts(f, &t.percepts)?;
                f.write_str(")")
            }
            Request::Abort { match_id } => write!(f, "(ABORT {match_id})"),
            Request::Info => f.write_str("(INFO)"),
            Request::Preview {
                rules,
                preview_clock,
            } => write!(f, "(PREVIEW ({rules}) {preview_clock})"),
        }
    }
}

struct Reader<'a> {
    tree: &'a Tree,
    text: &'a str,
}

impl Reader<'_> {
    fn text(&self, node: NodeId) -> &str {
        self.tree.span(node).text(self.text)
    }

    fn offset(&self, node: NodeId) -> usize {
        self.tree.span(node).start as usize
    }

    fn atom(&self, node: NodeId, what: &str) -> Result<&str, ProtocolError> {
        if self.tree.kind(node) == NodeKind::Atom {
            Ok(self.text(node))
        } else {
            Err(error(
                format!("expected {what}, found `{}`", self.text(node)),
                self.offset(node),
            ))
        }
    }

    /// A term as written, with its whitespace runs collapsed to single spaces.
    fn term(&self, node: NodeId) -> String {
        self.text(node)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn number(&self, node: NodeId, what: &str) -> Result<u64, ProtocolError> {
        let text = self.atom(node, what)?;
        text.parse::<u64>().map_err(|_| {
            error(
                format!("{what} must be a whole number of seconds, found `{text}`"),
                self.offset(node),
            )
        })
    }

    fn count(&self, node: NodeId, what: &str) -> Result<u64, ProtocolError> {
        let text = self.atom(node, what)?;
        text.parse::<u64>().map_err(|_| {
            error(
                format!("{what} must be a whole number, found `{text}`"),
                self.offset(node),
            )
        })
    }

    fn rules(&self, node: NodeId) -> Result<String, ProtocolError> {
        if self.tree.kind(node) != NodeKind::List {
            return Err(error(
                format!(
                    "expected the rules as a list of sentences, found `{}`",
                    self.text(node)
                ),
                self.offset(node),
            ));
        }
        let span = self.tree.span(node);
        // Inside the outer parentheses.
        Ok(self.text[span.start as usize + 1..span.end as usize - 1]
            .trim()
            .to_owned())
    }

    fn moves(&self, node: NodeId) -> Result<Option<Vec<String>>, ProtocolError> {
        match self.tree.kind(node) {
            NodeKind::Atom if self.text(node).eq_ignore_ascii_case("nil") => Ok(None),
            NodeKind::List => Ok(Some(self.tree.items(node).map(|m| self.term(m)).collect())),
            _ => Err(error(
                format!(
                    "expected NIL or a list of moves, found `{}`",
                    self.text(node)
                ),
                self.offset(node),
            )),
        }
    }
}

/// A player's answer to INFO: `((name N) (status available) …)`, or a bare status atom.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InfoReply {
    pub name: Option<String>,
    pub status: Option<String>,
    /// Other `(key value)` pairs, in order.
    pub other: Vec<(String, String)>,
}

/// A player's reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Ready,
    Busy,
    Done,
    Aborted,
    /// A move, as written.
    Move(String),
    Info(InfoReply),
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Ready => f.write_str("READY"),
            Reply::Busy => f.write_str("BUSY"),
            Reply::Done => f.write_str("DONE"),
            Reply::Aborted => f.write_str("ABORTED"),
            Reply::Move(m) => f.write_str(m),
            Reply::Info(info) => {
                f.write_str("(")?;
                let mut first = true;
                let mut pair = |f: &mut fmt::Formatter<'_>, k: &str, v: &str| {
                    let sep = if first { "" } else { " " };
                    first = false;
                    write!(f, "{sep}({k} {v})")
                };
                if let Some(name) = &info.name {
                    pair(f, "name", name)?;
                }
                if let Some(status) = &info.status {
                    pair(f, "status", status)?;
                }
                for (k, v) in &info.other {
                    pair(f, k, v)?;
                }
                f.write_str(")")
            }
        }
    }
}

impl Reply {
    /// Reads a player's reply to `request`, as the protocol expects it: READY to START and
    /// PREVIEW, a move to PLAY (one term, as written, whitespace collapsed), DONE to STOP,
    /// ABORTED to ABORT, an INFO reply to INFO. BUSY is accepted in place of READY or an INFO
    /// reply. Keywords in any letter case; whitespace around the reply is ignored.
    pub fn parse_for(request: &Request, text: &str) -> Result<Reply, ProtocolError> {
        let trimmed = text.trim();
        let offset = text.len() - text.trim_start().len();
        let keyword = |word: &str, reply: Reply| {
            if trimmed.eq_ignore_ascii_case(word) {
                Ok(reply)
            } else {
                Err(error(format!("expected {word}, found `{trimmed}`"), offset))
            }
        };
        let busy = trimmed.eq_ignore_ascii_case("BUSY");
        match request {
            Request::Start(_) | Request::Preview { .. } if busy => Ok(Reply::Busy),
            Request::Info if busy => Ok(Reply::Busy),
            Request::Start(_) | Request::Preview { .. } => keyword("READY", Reply::Ready),
            Request::Stop { .. }
            | Request::Sees { stop: true, .. }
            | Request::Turn(Turn { stop: true, .. }) => keyword("DONE", Reply::Done),
            Request::Abort { .. } => keyword("ABORTED", Reply::Aborted),
            Request::Info => InfoReply::parse(text).map(Reply::Info),
            Request::Play { .. } | Request::Sees { .. } | Request::Turn(_) => {
                match move_candidates(text) {
                    Some(candidates) => Ok(Reply::Move(candidates[0].clone())),
                    None => Err(error(
                        format!("expected a move (one term), found `{trimmed}`"),
                        offset,
                    )),
                }
            }
        }
    }
}

impl InfoReply {
    /// Reads an INFO reply: a list of `(key value)` pairs (keys in any case; a value of more
    /// than one word is kept as written), or one atom, taken as the status.
    pub fn parse(text: &str) -> Result<InfoReply, ProtocolError> {
        let (tree, diagnostics) = parse_tree(text);
        if let Some(d) = diagnostics.iter().find(|d| d.is_error()) {
            return Err(error(d.message.clone(), d.span.start as usize));
        }
        let reader = Reader { tree: &tree, text };
        let items: Vec<NodeId> = tree.top_items().collect();
        let mut info = InfoReply::default();
        match items.as_slice() {
            [one] if tree.kind(*one) == NodeKind::Atom => {
                info.status = Some(reader.text(*one).to_ascii_lowercase())
            }
            [one] if tree.kind(*one) == NodeKind::List => {
                for pair in tree.items(*one) {
                    let parts: Vec<NodeId> = tree.items(pair).collect();
                    let [key, rest @ ..] = parts.as_slice() else {
                        return Err(error("expected a `(key value)` pair", reader.offset(pair)));
                    };
                    if tree.kind(pair) != NodeKind::List || rest.is_empty() {
                        return Err(error("expected a `(key value)` pair", reader.offset(pair)));
                    }
                    let key = reader.atom(*key, "a key")?.to_ascii_lowercase();
                    let value = rest
                        .iter()
                        .map(|&n| reader.term(n))
                        .collect::<Vec<_>>()
                        .join(" ");
                    match key.as_str() {
                        "name" => info.name = Some(value),
                        "status" => info.status = Some(value.to_ascii_lowercase()),
                        _ => info.other.push((key, value)),
                    }
                }
            }
            [] => return Err(error("the reply is empty", 0)),
            _ => {
                return Err(error(
                    "expected one list of `(key value)` pairs or one atom",
                    0,
                ));
            }
        }
        Ok(info)
    }
}

/// The moves a reply to PLAY may mean, most literal first, for the Game Manager to match against
/// the legal moves: the reply as written (whitespace collapsed); if it is one list around a
/// single term, `((mark 2 2))` or `(move)`, that term too. `None` when the reply is not one
/// term (empty, two terms, unbalanced parentheses).
pub fn move_candidates(reply: &str) -> Option<Vec<String>> {
    let (tree, diagnostics) = parse_tree(reply);
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    let reader = Reader {
        tree: &tree,
        text: reply,
    };
    let items: Vec<NodeId> = tree.top_items().collect();
    let [one] = items.as_slice() else {
        return None;
    };
    if tree.kind(*one) == NodeKind::Variable {
        return None;
    }
    let mut out = vec![reader.term(*one)];
    if tree.kind(*one) == NodeKind::List {
        let inner: Vec<NodeId> = tree.items(*one).collect();
        if let [only] = inner.as_slice() {
            out.push(reader.term(*only));
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
