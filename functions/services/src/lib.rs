//! The use cases between the ports and the HTTP layer: typed requests that
//! validate and name the offending field, the answers as the types that are
//! serialized, and the jobs the worker runs. Both the HTTP functions and the
//! worker link this crate; it links no HTTP crate. The `openapi` feature
//! derives the requests' and answers' schemas for the HTTP side.

pub mod analytics;
pub mod backtest;
pub mod compute;
pub mod data;
pub mod dates;
pub mod error;
pub mod glossary;
pub mod jobs;
pub mod keys;
#[cfg(feature = "openapi")]
pub mod query_params;
pub mod submit;
pub mod tables;
pub mod usage;
pub mod webhooks;

pub use error::{Error, FieldError, Result};
