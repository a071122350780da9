//! The HTTP layer: one axum router per service group, shared by the embedded
//! server (package `marketlab`) and the Lambda functions; auth, error
//! envelopes, request limits and the connection loop.

#[cfg(feature = "analytics")]
pub mod analytics;
pub mod arrow;
pub mod auth;
#[cfg(feature = "backtest")]
pub mod backtest;
pub mod compression;
pub mod compute;
#[cfg(feature = "data")]
pub mod data;
pub mod error;
pub mod extract;
pub mod jobs;
pub mod keys;
pub mod limits;
pub mod logging;
pub mod openapi;
pub mod panics;
pub mod report;
pub mod routes;
pub mod rows;
pub mod scopes;
pub mod serve;
pub mod shape;
pub mod shared_reads;
pub mod state;
pub mod strict_query;
pub mod submit;
pub mod table_format;
#[cfg(any(feature = "backtest", feature = "analytics"))]
pub mod tasks;
pub mod telemetry;
#[cfg(any(feature = "backtest", feature = "analytics"))]
pub mod webhooks;

pub use error::{ApiError, ErrorStyle};
pub use state::AppState;
