//! The indicator data service (indicator-data-service.md), under `/ws`.

mod access;
pub mod custom;
mod format;
pub mod intraday;
pub mod routes;
pub mod schemas;

pub use access::{subscribed, user_selected};
