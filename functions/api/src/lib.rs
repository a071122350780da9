//! The HTTP layer: one axum router per service group, shared by the embedded
//! server and the Lambda functions; auth, error envelopes, and the embedded
//! server with its command line.

#[cfg(feature = "analytics")]
pub mod analytics;
pub mod auth;
#[cfg(feature = "backtest")]
pub mod backtest;
#[cfg(all(feature = "backtest", feature = "analytics", feature = "data"))]
pub mod cli;
pub mod compression;
#[cfg(feature = "data")]
pub mod data;
pub mod error;
pub mod extract;
pub mod jobs;
pub mod limits;
pub mod logging;
pub mod openapi;
pub mod operator;
pub mod report;
pub mod routes;
pub mod rows;
pub mod serve;
pub mod server;
pub mod shape;
pub mod state;
pub mod submit;

pub use error::{ApiError, ErrorStyle};
pub use state::AppState;
