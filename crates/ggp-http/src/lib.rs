//! The HTTP/1.1 server loop of `ggp player` and `ggp serve`: an axum router served with
//! limits on what a client that only opens connections can make the server spend.
//!
//! - **Open connections** are capped ([`Limits::max_connections`], by default from the
//!   process's limit of open files). A connection is *idle* while no request of it is being
//!   answered: before its first request's head is complete, between keep-alive requests.
//!   When a new connection finds the cap reached, the connection idle the longest is closed
//!   for it (as nginx reuses its keep-alive connections), so that a crowd of idle or slow
//!   clients never keeps a real one out. When every connection is busy the new one gets a
//!   `503` and is closed. Running out of descriptors anyway (a server's own outgoing
//!   connections count too) closes the idlest connection and accepts again. One client
//!   address (an IPv6 address's /64) may hold only [`Limits::max_per_address`] of them: its
//!   own idlest connection makes room for its newcomer, and a newcomer of an address whose
//!   connections are all busy is refused, so one client cannot take every connection.
//! - **A request's head** must arrive within [`Limits::header_timeout`], which also closes a
//!   keep-alive connection idle that long (hyper's header read timeout), and may be at most
//!   [`Limits::max_header_bytes`] (`431` beyond).
//! - **A refused connection** gets its `503` and is closed gently (its sending side first,
//!   what it still sends read for a second), so that the reply is not lost to a reset.
//! - **Bodies and answers** are the router's business: each server puts its own timeouts on
//!   them (the Gamemaster answers every page within seconds; a player's answer takes its play
//!   clock), and axum's body limit on their size.
//!
//! A response body being sent (a page, a stream of server-sent events) keeps its connection
//! busy until it ends.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tower::Service;

/// What a server lets its clients spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once (see the crate's documentation for what happens at the cap).
    pub max_connections: usize,
    /// Connections open at once from one client address (an IPv6 address's /64, the block a
    /// single client is usually given): past it, that address's idlest connection is closed
    /// for the newcomer, or the newcomer refused when all of the address's are busy.
    pub max_per_address: usize,
    /// How long a client may take to send a request's head, and how long a keep-alive
    /// connection may stay idle.
    pub header_timeout: Duration,
    /// The largest request head (the request line and the headers).
    pub max_header_bytes: usize,
    /// At shutdown, how long the requests being answered are given to finish.
    pub drain: Duration,
    /// Whether a client may close its sending side once its request is sent and still get its
    /// answer (some managers and `nc -q` do). Off by default: a server whose answers stream
    /// (server-sent events) then notices at once that a client has gone, not at its next write.
    pub half_close: bool,
}

/// The longest a request's head may take to arrive by default, and a keep-alive connection
/// stay idle.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(20);

/// The largest request head by default: 64 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 << 10;

/// The most connections open at once by default, whatever the limit of open files.
pub const MAX_DEFAULT_CONNECTIONS: usize = 4096;

impl Default for Limits {
    fn default() -> Limits {
        let max_connections = default_max_connections();
        Limits {
            max_connections,
            max_per_address: default_per_address(max_connections),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            drain: Duration::from_secs(3),
            half_close: false,
        }
    }
}

/// The process's limit of open files (the soft one), where it can be read (Linux's
/// `/proc/self/limits`).
pub fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line
        .trim_start_matches("Max open files")
        .split_whitespace()
        .next()?;
    match soft {
        "unlimited" => Some(usize::MAX),
        n => n.parse().ok(),
    }
}

/// The default cap on open connections: the limit of open files less what the process
/// needs besides (an eighth, at least 64: its database, its files, its own connections to
/// players), at most [`MAX_DEFAULT_CONNECTIONS`] and at least 16. 896 under the common
/// limit of 1,024.
pub fn default_max_connections() -> usize {
    let files = open_files_limit().unwrap_or(1024);
    let reserve = (files / 8).max(64);
    files
        .saturating_sub(reserve)
        .clamp(16, MAX_DEFAULT_CONNECTIONS)
}

/// The default cap on one address's connections: a quarter of all (224 of 896), at least 16
/// (enough for a page's browser and its event streams, or a classroom behind one address).
pub fn default_per_address(max_connections: usize) -> usize {
    (max_connections / 4).max(16).min(max_connections)
}

/// The key of a client address for the cap per address: an IPv4 address, or an IPv6
/// address's first 64 bits.
pub fn address_key(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => std::net::IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                std::net::IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// What the server loop did, for a server's statistics and for tests.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections accepted and served.
    pub accepted: AtomicU64,
    /// Idle connections closed to make room for new ones.
    pub shed: AtomicU64,
    /// Connections refused with a 503 (every connection busy).
    pub refused: AtomicU64,
    /// Connections open now.
    pub open: AtomicUsize,
}

/// One connection as the registry sees it.
struct Conn {
    /// Its client's address (see [`address_key`]).
    address: std::net::IpAddr,
    /// Requests of the connection being answered (their response bodies included).
    busy: AtomicUsize,
    /// When it last became idle, in milliseconds since the registry's epoch.
    idle_since: AtomicU64,
    /// Woken to ask the connection to close (it was the idlest when room was needed).
    close: Notify,
}

struct Registry {
    max: usize,
    per_address: usize,
    epoch: Instant,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    /// Woken when a connection ends (for the drain at shutdown).
    ended: Notify,
    counters: Arc<Counters>,
}

impl Registry {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Room for one more connection from `address`: its id and state, after closing the
    /// idlest connection of that address if it has its most, and the idlest of all if the cap
    /// is reached; otherwise why not.
    fn admit(&self, address: std::net::IpAddr) -> Result<(u64, Arc<Conn>), Refusal> {
        let address = address_key(address);
        let mut conns = self.lock();
        let of_address = conns.values().filter(|c| c.address == address).count();
        if of_address >= self.per_address {
            if !shed_idlest(&mut conns, Some(address)) {
                return Err(Refusal::Address(self.per_address));
            }
            self.counters.shed.fetch_add(1, Ordering::Relaxed);
        }
        if conns.len() >= self.max {
            if !shed_idlest(&mut conns, None) {
                return Err(Refusal::Server(self.max));
            }
            self.counters.shed.fetch_add(1, Ordering::Relaxed);
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            address,
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.now()),
            close: Notify::new(),
        });
        conns.insert(id, conn.clone());
        self.counters.open.store(conns.len(), Ordering::Relaxed);
        Ok((id, conn))
    }

    /// Takes back a connection asked to close that had a request arrive meanwhile: it is
    /// counted until it ends.
    fn restore(&self, id: u64, conn: Arc<Conn>) {
        let mut conns = self.lock();
        conns.insert(id, conn);
        self.counters.open.store(conns.len(), Ordering::Relaxed);
    }

    /// Closes the idlest connection (out of descriptors); whether there was one.
    fn shed(&self) -> bool {
        let shed = shed_idlest(&mut self.lock(), None);
        if shed {
            self.counters.shed.fetch_add(1, Ordering::Relaxed);
        }
        shed
    }

    fn remove(&self, id: u64) {
        let mut conns = self.lock();
        conns.remove(&id);
        self.counters.open.store(conns.len(), Ordering::Relaxed);
        drop(conns);
        self.ended.notify_waiters();
    }

    async fn all_closed(&self) {
        loop {
            let ended = self.ended.notified();
            if self.lock().is_empty() {
                return;
            }
            ended.await;
        }
    }
}

/// Asks the connection idle the longest (of `address`, or of all) to close and takes it off
/// the list (it closes at once: it has nothing to answer; should a request have arrived
/// meanwhile, it comes back on the list until it is answered). `false` when none is idle.
fn shed_idlest(conns: &mut HashMap<u64, Arc<Conn>>, address: Option<std::net::IpAddr>) -> bool {
    let idlest = conns
        .iter()
        .filter(|(_, c)| address.is_none_or(|a| c.address == a))
        .filter(|(_, c)| c.busy.load(Ordering::Relaxed) == 0)
        .min_by_key(|(id, c)| (c.idle_since.load(Ordering::Relaxed), **id))
        .map(|(&id, _)| id);
    match idlest.and_then(|id| conns.remove(&id)) {
        Some(conn) => {
            conn.close.notify_one();
            true
        }
        None => false,
    }
}

/// Serves `router` on `listener` with `limits` until `shutdown` completes; then lets the
/// requests being answered finish (up to [`Limits::drain`]) and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_counted(listener, router, limits, Arc::default(), shutdown).await
}

/// [`serve`], keeping what it does in `counters`.
pub async fn serve_counted(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    counters: Arc<Counters>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let registry = Arc::new(Registry {
        max: limits.max_connections.max(1),
        per_address: limits.max_per_address.max(1),
        epoch: Instant::now(),
        conns: Mutex::default(),
        next: AtomicU64::new(0),
        ended: Notify::new(),
        counters,
    });
    let (stop, stopped) = watch::channel(false);
    let lingering = Arc::new(tokio::sync::Semaphore::new(LINGERING));
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if out_of_descriptors(&e) => {
                // Make room, and give the closed connection a moment to let its descriptor go.
                registry.shed();
                tokio::time::sleep(Duration::from_millis(2)).await;
                continue;
            }
            // A connection that failed before it was accepted (reset by its client): the next.
            Err(e) if is_connection_error(&e) => continue,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (id, conn) = match registry.admit(peer.ip()) {
            Ok(admitted) => admitted,
            Err(refusal) => {
                registry.counters.refused.fetch_add(1, Ordering::Relaxed);
                refuse(stream, refusal, &lingering);
                continue;
            }
        };
        registry.counters.accepted.fetch_add(1, Ordering::Relaxed);
        let registry = registry.clone();
        let router = router.clone();
        let stopped = stopped.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, router, &registry, (id, conn), limits, stopped).await;
            registry.remove(id);
        });
    }
    let _ = stop.send(true);
    let _ = tokio::time::timeout(limits.drain, registry.all_closed()).await;
    Ok(())
}

fn out_of_descriptors(e: &std::io::Error) -> bool {
    // EMFILE (24) and ENFILE (23) on Linux and the BSDs.
    matches!(e.raw_os_error(), Some(23 | 24))
}

fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Why a connection is refused.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// The server has its most connections, all busy.
    Server(usize),
    /// The client's address has its most, all busy.
    Address(usize),
}

/// Refused connections whose reply is being delivered at once at most (past it, the reply is
/// written and the connection dropped).
const LINGERING: usize = 64;

/// Tells a refused connection why, without waiting for it: the reply is written (what the
/// socket takes at once), then, where a permit is free, the connection's sending side is
/// closed and what the client still sends is read and dropped for a second, so that closing
/// with its request unread does not reset the connection before the client reads the reply.
fn refuse(stream: TcpStream, refusal: Refusal, lingering: &Arc<tokio::sync::Semaphore>) {
    let body = match refusal {
        Refusal::Server(max) => {
            format!(
                "the server has its maximum of {max} connections open, all busy: try again later\n"
            )
        }
        Refusal::Address(max) => format!(
            "this address has its maximum of {max} connections open to the server, all busy: try again later\n"
        ),
    };
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nretry-after: 5\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(reply.as_bytes());
    let Ok(permit) = lingering.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let _permit = permit;
        let mut stream = stream;
        let _ = stream.shutdown().await;
        let mut sink = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            let mut read = 0;
            while let Ok(n) = stream.read(&mut sink).await {
                read += n;
                if n == 0 || read > 1 << 20 {
                    break;
                }
            }
        })
        .await;
    });
}

async fn serve_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    registry: &Registry,
    (id, conn): (u64, Arc<Conn>),
    limits: Limits,
    mut stopped: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let service = TowerToHyperService::new(Tracking {
        router,
        conn: conn.clone(),
        epoch: registry.epoch,
        peer,
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(limits.max_header_bytes)
        .half_close(limits.half_close)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = pin!(connection);
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            () = conn.close.notified() => {
                if conn.busy.load(Ordering::Relaxed) == 0 {
                    // Idle: nothing is lost by closing it now.
                    return;
                }
                // A request arrived meanwhile: it is answered, counted again until then, and
                // the connection closes after it.
                registry.restore(id, conn.clone());
                connection.as_mut().graceful_shutdown();
            }
            changed = stopped.changed(), if !stopping => {
                stopping = true;
                if changed.is_ok() {
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// The router, counting the requests of one connection being answered, and telling each
/// where it comes from (`axum::extract::ConnectInfo<SocketAddr>`).
#[derive(Clone)]
struct Tracking {
    router: Router,
    conn: Arc<Conn>,
    epoch: Instant,
    peer: std::net::SocketAddr,
}

/// One request being answered; when it is dropped (the response body sent or abandoned) the
/// connection may be idle again.
struct Busy {
    conn: Arc<Conn>,
    epoch: Instant,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .idle_since
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.conn.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

type Response = axum::response::Response;

impl Service<hyper::Request<Incoming>> for Tracking {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: hyper::Request<Incoming>) -> Self::Future {
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(self.peer));
        self.conn.busy.fetch_add(1, Ordering::Relaxed);
        let busy = Busy {
            conn: self.conn.clone(),
            epoch: self.epoch,
        };
        let answer = self.router.call(request.map(Body::new));
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| Body::new(Tracked { body, _busy: busy })))
        })
    }
}

/// A response body that keeps its connection busy until it is sent (or dropped).
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests;
