use std::time::{Duration, Instant};

use axum::routing::get;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// A server on a free port of 127.0.0.1 with `limits`: `/` answers `hello`, `/slow` after
/// `slow`, `/stream` sends one event and never ends.
async fn start(limits: Limits) -> (std::net::SocketAddr, Arc<Counters>) {
    let router = Router::new()
        .route("/", get(|| async { "hello" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        )
        .route(
            "/stream",
            get(|| async {
                let events = futures_stream();
                Body::from_stream(events)
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let served = counters.clone();
    tokio::spawn(async move {
        serve_counted(listener, router, limits, served, std::future::pending()).await
    });
    (address, counters)
}

/// One chunk, then nothing for ever.
fn futures_stream()
-> impl futures_core_stream::Stream<Item = Result<axum::body::Bytes, Infallible>> + Send {
    futures_core_stream::once_then_pending(axum::body::Bytes::from_static(b"data: hi\n\n"))
}

/// A minimal stream (the crate does not depend on futures): one item, then pending.
mod futures_core_stream {
    pub use futures_util::Stream;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    pub struct OnceThenPending(Option<axum::body::Bytes>);

    pub fn once_then_pending(first: axum::body::Bytes) -> OnceThenPending {
        OnceThenPending(Some(first))
    }

    impl Stream for OnceThenPending {
        type Item = Result<axum::body::Bytes, std::convert::Infallible>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.0.take() {
                Some(b) => Poll::Ready(Some(Ok(b))),
                None => Poll::Pending,
            }
        }
    }
}

fn limits(max_connections: usize) -> Limits {
    Limits {
        max_connections,
        max_per_address: max_connections,
        header_timeout: Duration::from_secs(20),
        max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
        drain: Duration::from_millis(100),
        half_close: false,
    }
}

/// Sends `request` on a new connection and reads until the server closes it or `within`.
async fn exchange(address: std::net::SocketAddr, request: &[u8], within: Duration) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(within, stream.read_to_end(&mut reply)).await;
    String::from_utf8_lossy(&reply).into_owned()
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";

#[tokio::test]
async fn idle_connections_past_the_cap_make_room_for_a_real_request() {
    let (address, counters) = start(limits(8)).await;
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(TcpStream::connect(address).await.unwrap());
    }
    // A slow client: half a request head.
    let mut slow = TcpStream::connect(address).await.unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nhost:").await.unwrap();
    let asked = Instant::now();
    let reply = exchange(address, GET, Duration::from_secs(5)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("hello"), "{reply}");
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert!(counters.shed.load(Ordering::Relaxed) >= 14);
    assert!(counters.open.load(Ordering::Relaxed) <= 8);
    // The oldest idle connections were closed: reading one gives its end.
    let mut byte = [0u8; 1];
    let first = tokio::time::timeout(Duration::from_secs(1), idle[0].read(&mut byte)).await;
    assert!(matches!(first, Ok(Ok(0)) | Ok(Err(_))), "{first:?}");
}

#[tokio::test]
async fn busy_connections_are_kept_and_a_newcomer_is_told_why_it_is_refused() {
    let (address, counters) = start(Limits {
        max_per_address: 100,
        ..limits(2)
    })
    .await;
    let mut streams = Vec::new();
    for path in ["/stream", "/slow"] {
        let mut s = TcpStream::connect(address).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        streams.push(s);
    }
    // The event stream's first event arrives: the request is being answered.
    let mut head = [0u8; 12];
    streams[0].read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let reply = exchange(address, GET, Duration::from_secs(2)).await;
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(
        reply.contains("maximum of 2 connections open, all busy"),
        "{reply}"
    );
    assert_eq!(counters.refused.load(Ordering::Relaxed), 1);
    assert_eq!(counters.shed.load(Ordering::Relaxed), 0);
    // Once the stream's client goes, its place is free.
    drop(streams.remove(0));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reply = exchange(address, GET, Duration::from_secs(2)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

#[tokio::test]
async fn a_head_that_does_not_arrive_in_time_closes_the_connection() {
    let (address, _) = start(Limits {
        header_timeout: Duration::from_millis(300),
        ..limits(8)
    })
    .await;
    let mut slow = TcpStream::connect(address).await.unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nhost").await.unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut reply)).await;
    assert!(read.is_ok(), "the connection stayed open");
    assert!(started.elapsed() < Duration::from_secs(2));
    // A keep-alive connection idle as long is closed too.
    let mut kept = TcpStream::connect(address).await.unwrap();
    kept.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), kept.read_to_end(&mut reply)).await;
    assert!(read.is_ok(), "the idle keep-alive connection stayed open");
    assert!(String::from_utf8_lossy(&reply).contains("hello"));
}

#[tokio::test]
async fn a_head_too_large_is_refused() {
    let (address, _) = start(limits(8)).await;
    for size in [
        DEFAULT_MAX_HEADER_BYTES + 1000,
        DEFAULT_MAX_HEADER_BYTES * 2,
    ] {
        let huge = format!(
            "GET / HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n",
            "a".repeat(size)
        );
        let reply = exchange(address, huge.as_bytes(), Duration::from_secs(5)).await;
        assert!(reply.starts_with("HTTP/1.1 431"), "{size}: {reply}");
    }
    let fits = format!(
        "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-big: {}\r\n\r\n",
        "a".repeat(DEFAULT_MAX_HEADER_BYTES - 1000)
    );
    let reply = exchange(address, fits.as_bytes(), Duration::from_secs(5)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

#[tokio::test]
async fn one_address_cannot_take_every_connection() {
    let (address, counters) = start(Limits {
        max_per_address: 2,
        ..limits(100)
    })
    .await;
    // Its idle connections make room for its own newcomers.
    let mut idle = Vec::new();
    for _ in 0..5 {
        idle.push(TcpStream::connect(address).await.unwrap());
    }
    let reply = exchange(address, GET, Duration::from_secs(5)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(counters.open.load(Ordering::Relaxed) <= 2);
    // Two busy connections: the third is refused, saying why, and gets the whole reply.
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(address).await.unwrap();
        s.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        busy.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..3 {
        let reply = exchange(address, GET, Duration::from_secs(5)).await;
        assert!(
            reply.contains(
                "this address has its maximum of 2 connections open to the server, all busy"
            ),
            "{reply}"
        );
    }
}

#[test]
fn the_default_cap_leaves_room_for_the_process_s_own_files() {
    let cap = default_max_connections();
    assert!((16..=MAX_DEFAULT_CONNECTIONS).contains(&cap));
    if let Some(files) = open_files_limit() {
        assert!(cap < files, "{cap} of {files}");
    }
}

#[tokio::test]
async fn a_client_that_closes_its_side_after_its_request_gets_its_answer() {
    let (address, _) = start(Limits {
        half_close: true,
        ..limits(8)
    })
    .await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.0\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    stream.shutdown().await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut reply))
        .await
        .unwrap()
        .unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.0 200"), "{reply}");
}
