//! What can go wrong with a request, and how it is answered: JSON for the API
//! (`{"error": …}`), a page for people.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A request that cannot be done, with a message for whoever sent it.
#[derive(Debug)]
pub enum Error {
    /// 400: the request is malformed.
    BadRequest(String),
    /// 401: no token, or one the server does not know.
    Unauthorized(String),
    /// 403: a known token that may not do this (another player's owner, say).
    Forbidden(String),
    /// 404.
    NotFound(String),
    /// 409: the request conflicts with what is there (a name taken, a move out of turn).
    Conflict(String),
    /// 413.
    TooLarge(String),
    /// 422: understood but refused; a game's diagnostics (as `ggp check --format json`
    /// objects) and their rendering for people.
    Unprocessable {
        message: String,
        diagnostics: Vec<serde_json::Value>,
        rendered: Vec<String>,
    },
    /// 500: the server's own failure (the database, say).
    Internal(String),
    /// 503: the server is stopping, or has not the room for this now (its limit of matches,
    /// its memory); answered with `Retry-After`.
    Unavailable(String),
}

/// Seconds a client told 503 is asked to wait before it tries again.
pub const RETRY_AFTER_SECS: &str = "5";

/// Adds `Retry-After` to a 503.
pub fn retry_later(response: &mut Response) {
    if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(RETRY_AFTER_SECS),
        );
    }
}

impl Error {
    pub fn status(&self) -> StatusCode {
        match self {
            Error::BadRequest(_) => StatusCode::BAD_REQUEST,
            Error::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Error::BadRequest(m)
            | Error::Unauthorized(m)
            | Error::Forbidden(m)
            | Error::NotFound(m)
            | Error::Conflict(m)
            | Error::TooLarge(m)
            | Error::Internal(m)
            | Error::Unavailable(m) => m,
            Error::Unprocessable { message, .. } => message,
        }
    }
}

impl From<ggp_match::StoreError> for Error {
    fn from(e: ggp_match::StoreError) -> Error {
        match e.kind {
            ggp_match::StoreErrorKind::NotFound => Error::NotFound(e.message),
            _ => Error::Internal(e.message),
        }
    }
}

/// An [`Error`] answered as JSON.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl<E: Into<Error>> From<E> for ApiError {
    fn from(e: E) -> ApiError {
        ApiError(e.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        let body = match &self.0 {
            Error::Unprocessable {
                message,
                diagnostics,
                ..
            } => json!({"error": message, "diagnostics": diagnostics}),
            e => json!({"error": e.message()}),
        };
        let mut response = (status, axum::Json(body)).into_response();
        retry_later(&mut response);
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"ggp\""),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
