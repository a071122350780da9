//! The HTTP layer: one axum router per service group, shared by the embedded
//! server and the Lambda functions; auth, error envelopes, and the embedded
//! server with its command line.

pub mod analytics;
pub mod auth;
pub mod backtest;
pub mod cli;
pub mod data;
pub mod error;
pub mod extract;
pub mod jobs;
pub mod limits;
pub mod logging;
pub mod openapi;
pub mod routes;
pub mod serve;
pub mod server;
pub mod state;
pub mod submit;

pub use error::{ApiError, ErrorStyle};
pub use state::AppState;
