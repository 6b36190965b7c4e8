//! What handlers take from a request: path segments and query parameters whose rejections (a
//! segment that is not UTF-8, say) are answered like every other error, as a page for pages
//! and as JSON for the API; and the [`Viewer`] of a page session.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::auth::Viewer;
use crate::error::{ApiError, Error};
use crate::pages::PageError;
use crate::state::AppState;

fn bad(text: String) -> Error {
    Error::BadRequest(text)
}

/// A page's path parameters.
pub struct PagePath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for PagePath<T> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| PagePath(v))
            .map_err(|r| PageError(bad(r.body_text())))
    }
}

/// The API's path parameters.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|r| ApiError(bad(r.body_text())))
    }
}

/// Query parameters as text, for a page.
pub struct PageParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for PageParams {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| PageParams(v))
            .map_err(|r| PageError(bad(r.body_text())))
    }
}

/// Query parameters as text, for the API.
pub struct ApiParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for ApiParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiParams(v))
            .map_err(|r| ApiError(bad(r.body_text())))
    }
}

impl std::ops::Deref for PageParams {
    type Target = HashMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::Deref for ApiParams {
    type Target = HashMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Who is looking, from the page session's cookie (nobody without one).
impl FromRequestParts<AppState> for Viewer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Viewer, Self::Rejection> {
        Ok(Viewer::of(&state.auth, &parts.headers))
    }
}
