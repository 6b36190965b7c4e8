//! The stylesheet, the ES modules and the icon, embedded in the binary (no build step, nothing
//! fetched from elsewhere). Pages link them with a hash of their contents in the query, so they
//! can be cached for a long time and a new build is fetched at once.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

const FILES: &[(&str, &str, &str)] = &[
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../assets/app.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "match.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/match.js"),
    ),
    (
        "home.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/home.js"),
    ),
    (
        "tournament.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/tournament.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("../assets/favicon.svg"),
    ),
];

fn versions() -> &'static Vec<String> {
    static VERSIONS: OnceLock<Vec<String>> = OnceLock::new();
    VERSIONS.get_or_init(|| {
        FILES
            .iter()
            .map(|(_, _, body)| {
                Sha256::digest(body.as_bytes())[..6]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect()
            })
            .collect()
    })
}

/// The URL of an asset, with its version.
pub fn url(name: &str) -> String {
    match FILES.iter().position(|(n, _, _)| *n == name) {
        Some(k) => format!("/static/{name}?v={}", versions()[k]),
        None => format!("/static/{name}"),
    }
}

/// The file `name`: its content type and its body.
pub fn file(name: &str) -> Option<(&'static str, &'static str)> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, kind, body)| (*kind, *body))
}
