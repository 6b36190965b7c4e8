//! The protocol's transport: the base protocol's frames (`Content-Length: N`, a blank line,
//! then N bytes of JSON-RPC) read from standard input and written to standard output, with
//! limits.
//!
//! A client may send anything. Every header line is read with a bounded buffer
//! ([`MAX_HEADER_LINE_LEN`], at most [`MAX_HEADER_LINES`] of them), and a body is read only
//! when its length is a number no larger than [`MAX_MESSAGE_LEN`]: a frame beyond these, or
//! one whose body is not a JSON-RPC message, is answered with an error response (`id: null`),
//! logged on standard error, and skipped. After a bad header the reader resynchronises: it
//! never reads or skips the number of bytes a bad header claims, but scans forward (with the
//! input's fixed buffer) to the next `Content-Length:` and reads the frame that starts there.
//! End of input ends the server.

use std::fmt;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message};
use serde_json::{Value, json};

use crate::server::log;

/// The largest message body the server reads: 64 MiB (a game's text in a `didOpen`, escaped
/// as JSON; the largest game of the corpus is 425 KB).
pub const MAX_MESSAGE_LEN: u64 = 64 << 20;

/// The longest header line the server reads, in bytes (`Content-Length: 123` and
/// `Content-Type: application/vscode-jsonrpc; charset=utf-8` are the lines clients send).
pub const MAX_HEADER_LINE_LEN: usize = 4096;

/// The most header lines one frame may have.
pub const MAX_HEADER_LINES: usize = 32;

/// The header field that starts a frame, lowercase (header names are read in any case).
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// Why a frame was refused. Each is answered with an error response whose message is this
/// error's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A `Content-Length` beyond [`MAX_MESSAGE_LEN`] (as written: it may not fit a `u64`).
    TooLarge(String),
    /// A `Content-Length` that is not a number.
    BadLength(String),
    /// A header without `Content-Length`.
    NoLength,
    /// Two `Content-Length` lines in one header.
    TwoLengths,
    /// A header line longer than [`MAX_HEADER_LINE_LEN`].
    LongHeaderLine,
    /// More than [`MAX_HEADER_LINES`] header lines.
    TooManyHeaderLines,
    /// A header line that is not `Name: value` (as shown to people).
    BadHeaderLine(String),
    /// A body that is not JSON (why).
    NotJson(String),
    /// A JSON body that is not a request, a response or a notification (why).
    NotJsonRpc(String),
}

impl FrameError {
    /// The JSON-RPC error code of the response: a parse error for a body that is not JSON, an
    /// invalid request otherwise.
    pub fn code(&self) -> i32 {
        match self {
            FrameError::NotJson(_) => ErrorCode::ParseError as i32,
            _ => ErrorCode::InvalidRequest as i32,
        }
    }

    /// The error response sent to the client (`id: null`: the request, if any, is unknown).
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": self.code(), "message": self.to_string()},
        })
    }

    /// Whether the frame's header was bad, so that where its body ends is unknown.
    fn loses_the_frame(&self) -> bool {
        !matches!(self, FrameError::NotJson(_) | FrameError::NotJsonRpc(_))
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge(length) => write!(
                f,
                "a message of {length} bytes is larger than {MAX_MESSAGE_LEN}, the largest this server reads"
            ),
            FrameError::BadLength(value) => {
                write!(f, "the Content-Length `{value}` is not a number of bytes")
            }
            FrameError::NoLength => write!(f, "a message header without a Content-Length"),
            FrameError::TwoLengths => write!(f, "a message header with two Content-Length lines"),
            FrameError::LongHeaderLine => write!(
                f,
                "a header line longer than {MAX_HEADER_LINE_LEN} bytes, the longest this server reads"
            ),
            FrameError::TooManyHeaderLines => write!(
                f,
                "a message header of more than {MAX_HEADER_LINES} lines, the most this server reads"
            ),
            FrameError::BadHeaderLine(line) => {
                write!(f, "the header line `{line}` is not `Name: value`")
            }
            FrameError::NotJson(why) => write!(f, "the message is not JSON: {why}"),
            FrameError::NotJsonRpc(why) => write!(
                f,
                "the message is not a JSON-RPC request, response or notification: {why}"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// What the next frame of the input holds.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A bad frame, skipped.
    Bad(FrameError),
    /// The end of the input (possibly inside a frame).
    End,
}

/// Text from the input for a message: at most 60 characters, control characters escaped.
fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(60).flat_map(char::escape_debug).collect();
    if text.chars().nth(60).is_some() {
        out.push('…');
    }
    out
}

/// One header line, read with a bounded buffer.
enum Line {
    /// The line without its line ending (`\n` or `\r\n`).
    Text,
    /// A line longer than [`MAX_HEADER_LINE_LEN`]: what was read of it is discarded, and the
    /// input is left inside it.
    TooLong,
    End,
}

/// Reads frames from an input; each call to [`FrameReader::next_frame`] reads one.
pub struct FrameReader<R> {
    input: R,
    /// The current header line.
    line: Vec<u8>,
    /// Whether the last frame's header was bad: where the next frame starts is unknown.
    lost: bool,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> FrameReader<R> {
        FrameReader {
            input,
            line: Vec::new(),
            lost: false,
        }
    }

    /// Reads the next frame: a message, a bad frame (skipped), or the end of the input. An
    /// error is one of the input itself.
    pub fn next_frame(&mut self) -> io::Result<Frame> {
        let resumed = if self.lost {
            if !self.skip_to_content_length()? {
                return Ok(Frame::End);
            }
            self.lost = false;
            true
        } else {
            false
        };
        let length = match self.header(resumed)? {
            Ok(Some(length)) => length,
            Ok(None) => return Ok(Frame::End),
            Err(error) => {
                self.lost = error.loses_the_frame();
                return Ok(Frame::Bad(error));
            }
        };
        // Memory for what has arrived, not for what the header claims.
        let mut body = Vec::with_capacity(usize::try_from(length.min(1 << 20)).unwrap_or(0));
        (&mut self.input).take(length).read_to_end(&mut body)?;
        if (body.len() as u64) < length {
            return Ok(Frame::End);
        }
        Ok(match serde_json::from_slice::<Message>(&body) {
            Ok(message) => Frame::Message(message),
            Err(e) if e.is_data() => Frame::Bad(FrameError::NotJsonRpc(e.to_string())),
            Err(e) => Frame::Bad(FrameError::NotJson(e.to_string())),
        })
    }

    /// Reads a frame's header: its `Content-Length`, `None` at the end of the input. With
    /// `resumed`, the header's first line has been read up to `Content-Length:` already.
    fn header(&mut self, resumed: bool) -> io::Result<Result<Option<u64>, FrameError>> {
        let mut length = None;
        let mut lines = 0;
        loop {
            match self.read_line()? {
                Line::Text => {}
                Line::TooLong => return Ok(Err(FrameError::LongHeaderLine)),
                Line::End => return Ok(Ok(None)),
            }
            if resumed && lines == 0 {
                self.line.splice(0..0, CONTENT_LENGTH.iter().copied());
            }
            if self.line.is_empty() {
                // Blank lines between frames are tolerated.
                if lines == 0 {
                    continue;
                }
                return Ok(length.map(Some).ok_or(FrameError::NoLength));
            }
            lines += 1;
            if lines > MAX_HEADER_LINES {
                return Ok(Err(FrameError::TooManyHeaderLines));
            }
            let Some(colon) = self.line.iter().position(|&b| b == b':') else {
                return Ok(Err(FrameError::BadHeaderLine(shown(&self.line))));
            };
            let (name, value) = (&self.line[..colon], &self.line[colon + 1..]);
            if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic()) {
                return Ok(Err(FrameError::BadHeaderLine(shown(&self.line))));
            }
            // Other fields (`Content-Type`, whatever its value) are read and ignored.
            if !name.eq_ignore_ascii_case(&CONTENT_LENGTH[..CONTENT_LENGTH.len() - 1]) {
                continue;
            }
            if length.is_some() {
                return Ok(Err(FrameError::TwoLengths));
            }
            match content_length(value) {
                Ok(n) => length = Some(n),
                Err(e) => return Ok(Err(e)),
            }
        }
    }

    /// Reads one line into `self.line`, at most [`MAX_HEADER_LINE_LEN`] bytes of it.
    fn read_line(&mut self) -> io::Result<Line> {
        self.line.clear();
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(Line::End);
            }
            let end = available.iter().position(|&b| b == b'\n');
            let part = &available[..end.unwrap_or(available.len())];
            let (used, too_long) = if self.line.len() + part.len() > MAX_HEADER_LINE_LEN {
                (part.len(), true)
            } else {
                self.line.extend_from_slice(part);
                (part.len() + usize::from(end.is_some()), false)
            };
            self.input.consume(used);
            if too_long {
                self.line.clear();
                return Ok(Line::TooLong);
            }
            if end.is_some() {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(Line::Text);
            }
        }
    }

    /// Skips the input up to and including the next `Content-Length:` (in any case), with no
    /// more memory than the input's buffer. Whether one was found before the end.
    fn skip_to_content_length(&mut self) -> io::Result<bool> {
        // The pattern's first byte occurs in it only there: a mismatch restarts the match at
        // the current byte.
        let mut matched = 0;
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(false);
            }
            let mut used = available.len();
            let mut found = false;
            for (i, byte) in available.iter().enumerate() {
                let byte = byte.to_ascii_lowercase();
                matched = if byte == CONTENT_LENGTH[matched] {
                    matched + 1
                } else {
                    usize::from(byte == CONTENT_LENGTH[0])
                };
                if matched == CONTENT_LENGTH.len() {
                    used = i + 1;
                    found = true;
                    break;
                }
            }
            self.input.consume(used);
            if found {
                return Ok(true);
            }
        }
    }
}

/// The value of a `Content-Length` field: a number of bytes up to [`MAX_MESSAGE_LEN`].
fn content_length(value: &[u8]) -> Result<u64, FrameError> {
    let value = value.trim_ascii();
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(FrameError::BadLength(shown(value)));
    }
    // Digits enough to overflow a `u64` are a length beyond the limit too.
    match std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
        Some(n) if n <= MAX_MESSAGE_LEN => Ok(n),
        _ => Err(FrameError::TooLarge(shown(value))),
    }
}

/// Writes one frame.
fn write_frame(output: &mut impl Write, body: &str) -> io::Result<()> {
    write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
    output.write_all(body.as_bytes())?;
    output.flush()
}

/// One of the transport's two threads, as messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Reading,
    Writing,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Reading => "reading",
            Direction::Writing => "writing",
        })
    }
}

/// Why the transport could not start, or failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The thread could not be started.
    #[error("cannot start the {direction} thread: {source}")]
    Spawn {
        direction: Direction,
        #[source]
        source: io::Error,
    },
    /// The thread panicked.
    #[error("the {0} thread failed")]
    Panicked(Direction),
    /// Reading or writing the protocol failed.
    #[error("{direction} the protocol failed: {source}")]
    Io {
        direction: Direction,
        #[source]
        source: io::Error,
    },
}

/// The transport's reading and writing threads.
pub struct IoThreads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Waits for both threads (the reader ends at the end of the input or after `exit`, the
    /// writer when the server has dropped its sender); the first error of either.
    pub fn join(self) -> Result<(), TransportError> {
        let read = self
            .reader
            .join()
            .map_err(|_| TransportError::Panicked(Direction::Reading))?;
        let written = self
            .writer
            .join()
            .map_err(|_| TransportError::Panicked(Direction::Writing))?;
        read.map_err(|source| TransportError::Io {
            direction: Direction::Reading,
            source,
        })?;
        written.map_err(|source| TransportError::Io {
            direction: Direction::Writing,
            source,
        })
    }
}

/// A connection on standard input and output.
pub fn stdio() -> Result<(Connection, IoThreads), TransportError> {
    connect(io::stdin(), io::stdout())
}

/// A connection that reads frames from `input` and writes them to `output`, each on its own
/// thread. Bad frames are answered (on `output`) by the reading thread itself.
pub fn connect<R, W>(input: R, output: W) -> Result<(Connection, IoThreads), TransportError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    // One message at a time in each direction, as `lsp_server`'s own transport: a client that
    // sends faster than the server answers waits, rather than filling memory.
    let (to_server, from_client) = crossbeam_channel::bounded::<Message>(0);
    let (to_client, from_server) = crossbeam_channel::bounded::<Message>(0);
    let output = Arc::new(Mutex::new(BufWriter::new(output)));
    let answers = output.clone();
    let reader = std::thread::Builder::new()
        .name("ggp-lsp-read".into())
        .spawn(move || {
            let frames = FrameReader::new(BufReader::with_capacity(1 << 16, input));
            read_loop(frames, &to_server, &answers)
        })
        .map_err(|source| TransportError::Spawn {
            direction: Direction::Reading,
            source,
        })?;
    let writer = std::thread::Builder::new()
        .name("ggp-lsp-write".into())
        .spawn(move || write_loop(&from_server, &output))
        .map_err(|source| TransportError::Spawn {
            direction: Direction::Writing,
            source,
        })?;
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    Ok((connection, IoThreads { reader, writer }))
}

fn read_loop<R: BufRead, W: Write>(
    mut frames: FrameReader<R>,
    to_server: &Sender<Message>,
    output: &Mutex<W>,
) -> io::Result<()> {
    loop {
        match frames.next_frame()? {
            Frame::End => return Ok(()),
            Frame::Bad(error) => {
                log(&format!("bad message: {error}"));
                let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
                // A client that no longer reads is gone: the end of its input ends the server.
                let _ = write_frame(&mut *output, &error.response().to_string());
            }
            Frame::Message(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                // The server has stopped: nothing more to read.
                if to_server.send(message).is_err() || exit {
                    return Ok(());
                }
            }
        }
    }
}

/// Writes the server's messages until it drops its sender. After a failed write the messages
/// are still taken (and dropped), so that the server never finds its sender closed; the first
/// error is returned at the end.
fn write_loop<W: Write>(from_server: &Receiver<Message>, output: &Mutex<W>) -> io::Result<()> {
    let mut failed = None;
    for message in from_server {
        if failed.is_some() {
            continue;
        }
        let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = message.write(&mut *output) {
            failed = Some(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    fn notification(method: &str) -> String {
        json!({"jsonrpc": "2.0", "method": method}).to_string()
    }

    /// Every frame of `input` until its end: the method of each message, or why it was bad.
    /// The header line buffer never grows past its bound.
    fn frames(input: &[u8]) -> Vec<Result<String, FrameError>> {
        let mut reader = FrameReader::new(Cursor::new(input));
        let mut out = Vec::new();
        loop {
            let frame = reader.next_frame().unwrap();
            assert!(reader.line.capacity() <= 2 * MAX_HEADER_LINE_LEN);
            match frame {
                Frame::End => return out,
                Frame::Bad(error) => out.push(Err(error)),
                Frame::Message(Message::Notification(n)) => out.push(Ok(n.method)),
                Frame::Message(Message::Request(r)) => out.push(Ok(r.method)),
                Frame::Message(Message::Response(r)) => out.push(Ok(format!("response {}", r.id))),
            }
        }
    }

    fn ok(method: &str) -> Result<String, FrameError> {
        Ok(method.to_string())
    }

    #[test]
    fn well_formed_frames_are_read_in_every_accepted_form() {
        let a = notification("a");
        let mut input = frame(&a);
        input.extend(
            format!(
                "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:{}\r\n\r\n{a}",
                a.len()
            )
            .bytes(),
        );
        // Bare line feeds, and blank lines between frames.
        input.extend(format!("\r\n\nCONTENT-LENGTH:  {} \n\n{a}", a.len()).bytes());
        input.extend(frame(
            r#"{"jsonrpc":"2.0","id":7,"method":"b","params":{"x":[1]}}"#,
        ));
        input.extend(frame(r#"{"jsonrpc":"2.0","id":"s","result":null}"#));
        assert_eq!(
            frames(&input),
            vec![ok("a"), ok("a"), ok("a"), ok("b"), ok("response \"s\"")]
        );
    }

    #[test]
    fn hostile_lengths_are_refused_without_reading_them() {
        let good = frame(&notification("good"));
        for length in [
            "99999999999999999",
            "18446744073709551615",
            "99999999999999999999999999999999",
            "67108865",
        ] {
            let refused = Err(FrameError::TooLarge(length.into()));
            // Without a body, and with one (the next frame then starts inside a line).
            let mut input = format!("Content-Length: {length}\r\n\r\n").into_bytes();
            input.extend(&good);
            assert_eq!(
                frames(&input),
                vec![refused.clone(), ok("good")],
                "{length}"
            );
            let mut input = format!("Content-Length: {length}\r\n\r\n{{\"jsonrpc\":").into_bytes();
            input.extend(&good);
            assert_eq!(
                frames(&input),
                vec![refused.clone(), ok("good")],
                "{length}"
            );
        }
        let message = FrameError::TooLarge("99999999999999999".into()).to_string();
        assert_eq!(
            message,
            "a message of 99999999999999999 bytes is larger than 67108864, the largest this server reads"
        );
        // The largest length is read (here, up to the end of the input).
        let input = format!("Content-Length: {MAX_MESSAGE_LEN}\r\n\r\n{{}}");
        assert_eq!(frames(input.as_bytes()), vec![]);
    }

    #[test]
    fn bad_headers_are_refused_and_the_next_frame_read() {
        let good = frame(&notification("good"));
        let long = format!("X-Long: {}\r\n", "x".repeat(3 * MAX_HEADER_LINE_LEN));
        let many = "X-Field: 1\r\n".repeat(MAX_HEADER_LINES + 1);
        let cases: Vec<(String, FrameError)> = vec![
            (
                "Content-Length: abc\r\n\r\n{}".into(),
                FrameError::BadLength("abc".into()),
            ),
            (
                "Content-Length: -5\r\n\r\n".into(),
                FrameError::BadLength("-5".into()),
            ),
            (
                "Content-Length:\r\n\r\n".into(),
                FrameError::BadLength(String::new()),
            ),
            (
                "Content-Type: text/plain\r\n\r\n{\"jsonrpc\":\"2.0\"}".into(),
                FrameError::NoLength,
            ),
            (
                "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}".into(),
                FrameError::TwoLengths,
            ),
            (long.clone(), FrameError::LongHeaderLine),
            (format!("{long}\r\n{{}}"), FrameError::LongHeaderLine),
            (many, FrameError::TooManyHeaderLines),
            (
                "hello\r\n\r\n".into(),
                FrameError::BadHeaderLine("hello".into()),
            ),
            (
                ": nameless\r\n\r\n".into(),
                FrameError::BadHeaderLine(": nameless".into()),
            ),
        ];
        for (bad, error) in cases {
            let mut input = bad.clone().into_bytes();
            input.extend(&good);
            input.extend(&good);
            assert_eq!(
                frames(&input),
                vec![Err(error), ok("good"), ok("good")],
                "{bad:.80}"
            );
        }
    }

    #[test]
    fn bodies_that_are_not_messages_are_refused_and_the_next_frame_read() {
        let good = frame(&notification("good"));
        for (body, code) in [
            ("{\"jsonrpc\": ", -32700),
            ("not json", -32700),
            ("\u{1}\u{2}", -32700),
            (&"[".repeat(10_000), -32700),
            ("{}", -32600),
            ("[1, 2]", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":null}", -32600),
            ("{\"jsonrpc\":\"2.0\",\"id\":1}", -32600),
        ] {
            let mut input = frame(body);
            input.extend(&good);
            let read = frames(&input);
            assert_eq!(read.len(), 2, "{body:.40}: {read:?}");
            let error = read[0].clone().unwrap_err();
            assert_eq!(error.code(), code, "{body:.40}: {error}");
            assert_eq!(read[1], ok("good"));
            let response = error.response();
            assert_eq!(response["id"], Value::Null);
            assert_eq!(response["error"]["code"], code);
            assert_eq!(response["error"]["message"], error.to_string());
        }
    }

    #[test]
    fn the_end_of_the_input_ends_anywhere_in_a_frame() {
        let good = frame(&notification("good"));
        for end in 0..good.len() {
            assert_eq!(frames(&good[..end]), vec![], "{end}");
        }
        let mut input = b"Content-Length: 99999999999999999\r\n\r\n".to_vec();
        input.extend(&good[..good.len() - 1]);
        assert_eq!(
            frames(&input),
            vec![Err(FrameError::TooLarge("99999999999999999".into()))]
        );
    }

    /// A piece of a random stream: the bytes, the message a well-formed frame holds, and
    /// whether it is certainly bad.
    #[derive(Clone, Debug)]
    struct Piece {
        bytes: Vec<u8>,
        message: Option<String>,
        bad: bool,
    }

    /// Bytes without `Content-Length:` in them (in any case), so that they cannot start a
    /// frame: garbage may only ever hide itself, never a later frame.
    fn garbage(max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..max),
            proptest::string::string_regex(&format!("[ -~\r\n]{{0,{max}}}"))
                .unwrap()
                .prop_map(String::into_bytes),
        ]
        .prop_map(|mut bytes| {
            while let Some(at) = bytes
                .windows(CONTENT_LENGTH.len())
                .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
            {
                bytes.remove(at);
            }
            bytes
        })
    }

    fn piece() -> impl Strategy<Value = Piece> {
        let good = "[a-z/$]{1,12}".prop_map(|method| Piece {
            bytes: frame(&notification(&method)),
            message: Some(method),
            bad: false,
        });
        let huge = prop_oneof![
            (MAX_MESSAGE_LEN + 1..=u64::MAX).prop_map(|n| n.to_string()),
            "[1-9][0-9]{19,39}",
            Just("18446744073709551615".to_string()),
        ];
        let bad_value = prop_oneof![
            "[^0-9\r\n]{1,10}",
            "-[0-9]{1,5}",
            "[0-9]{1,3}[a-z.]{1,3}",
            Just(String::new()),
        ];
        let length_header = prop_oneof![huge, bad_value];
        let bad_length = (length_header, garbage(200)).prop_map(|(value, body)| {
            let mut bytes = format!("Content-Length: {value}\r\n\r\n").into_bytes();
            bytes.extend(body);
            Piece {
                bytes,
                message: None,
                bad: true,
            }
        });
        let no_length = (garbage(100), garbage(200)).prop_map(|(header, body)| {
            let mut bytes = b"Content-Type: ".to_vec();
            bytes.extend(header.iter().filter(|b| !matches!(b, b'\r' | b'\n')));
            bytes.extend(b"\r\n\r\n");
            bytes.extend(body);
            Piece {
                bytes,
                message: None,
                bad: true,
            }
        });
        let long_line = (
            MAX_HEADER_LINE_LEN + 1..3 * MAX_HEADER_LINE_LEN,
            garbage(100),
        )
            .prop_map(|(len, body)| {
                let mut bytes = vec![b'x'; len];
                bytes.extend(b"\r\n\r\n");
                bytes.extend(body);
                Piece {
                    bytes,
                    message: None,
                    bad: true,
                }
            });
        let bad_body = prop_oneof![
            garbage(300),
            "[a-z/]{1,8}".prop_map(|m| {
                let text = notification(&m);
                text.as_bytes()[..text.len() / 2].to_vec()
            }),
            Just(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":7}".to_vec()),
        ]
        .prop_map(|body| {
            let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            bytes.extend(body);
            Piece {
                bytes,
                message: None,
                bad: false,
            }
        });
        // Random bytes, ended by a blank line so that they end any header they begin.
        let random = garbage(300).prop_map(|mut bytes| {
            bytes.extend(b"\r\n\r\n");
            Piece {
                bytes,
                message: None,
                bad: false,
            }
        });
        prop_oneof![
            3 => good,
            2 => bad_length,
            1 => no_length,
            1 => long_line,
            2 => bad_body,
            2 => random,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Whatever comes before it, a well-formed frame is read: every message of the stream
        /// is read, in order, each bad frame is refused (none read as a message), and the
        /// reader's memory stays bounded (checked in `frames`).
        #[test]
        fn every_well_formed_frame_is_read_whatever_surrounds_it(
            pieces in proptest::collection::vec(piece(), 0..12),
        ) {
            let mut input = Vec::new();
            for piece in &pieces {
                input.extend(&piece.bytes);
            }
            input.extend(frame(&notification("last")));
            let read = frames(&input);
            let messages: Vec<String> = read.iter().filter_map(|r| r.clone().ok()).collect();
            let mut expected: Vec<String> =
                pieces.iter().filter_map(|p| p.message.clone()).collect();
            expected.push("last".into());
            prop_assert_eq!(messages, expected);
            if pieces.iter().any(|p| p.bad) {
                prop_assert!(read.iter().any(Result::is_err));
            }
            for error in read.iter().filter_map(|r| r.clone().err()) {
                let response = error.response();
                prop_assert_eq!(&response["id"], &Value::Null);
                prop_assert!(matches!(error.code(), -32700 | -32600));
            }
        }
    }

    /// An output the test can read after the writer is done with it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The JSON bodies of the frames a server wrote.
    fn written(output: &[u8]) -> Vec<Value> {
        let mut reader = FrameReader::new(output);
        let mut out = Vec::new();
        loop {
            match reader.next_frame().unwrap() {
                Frame::End => return out,
                Frame::Message(message) => out.push(serde_json::to_value(message).unwrap()),
                // Responses with `id: null` are not `Message`s: read them as JSON.
                Frame::Bad(FrameError::NotJsonRpc(_)) => {}
                Frame::Bad(error) => panic!("the server wrote a bad frame: {error}"),
            }
        }
    }

    #[test]
    fn the_server_answers_every_bad_frame_and_then_the_next_request() {
        let mut input = Vec::new();
        input.extend(b"Content-Length: 99999999999999999\r\n\r\n");
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"capabilities": {}}})
            .to_string(),
        ));
        input.extend(frame(&notification("initialized")));
        input.extend(b"Content-Length: 18446744073709551615\r\n\r\n");
        input.extend(frame("{not json"));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}).to_string(),
        ));
        input.extend(frame(&notification("exit")));
        let output = Shared::default();
        let (connection, threads) = connect(Cursor::new(input), output.clone()).unwrap();
        let ran = crate::run(connection);
        assert!(matches!(ran, Ok(true)), "{ran:?}");
        threads.join().unwrap();
        let bytes = output.0.lock().unwrap().clone();
        // Every frame written is JSON; the errors (id null) are counted from the raw text.
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.matches("\"id\":null").count(), 3, "{text}");
        assert_eq!(text.matches("-32700").count(), 1, "{text}");
        assert!(text.contains("a message of 18446744073709551615 bytes is larger than 67108864"));
        let responses = written(&bytes);
        let ids: Vec<&Value> = responses.iter().map(|r| &r["id"]).collect();
        assert_eq!(ids, vec![&json!(1), &json!(2)], "{text}");
        assert_eq!(responses[1]["result"], Value::Null);
    }
}
