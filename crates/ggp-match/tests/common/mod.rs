//! What the loopback tests' scripted HTTP players share.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Reads one HTTP request from `stream`: the stream back, the whole request as text and its
/// body; `None` when the peer closes first.
pub async fn read_request(mut stream: TcpStream) -> Option<(TcpStream, String, String)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                let body = body.to_string();
                return Some((stream, text, body));
            }
        }
    }
}
