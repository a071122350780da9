//! The indicator data service (indicator-data-service.md), under `/ws`.

mod access;
mod format;
pub mod routes;

pub use access::{subscribed, user_selected};
