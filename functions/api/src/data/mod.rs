//! The indicator data service (indicator-data-service.md), under `/ws`.

pub mod custom;
pub mod intraday;
pub mod prices;
pub mod routes;
pub mod schemas;

pub use services::data::{subscribed, user_selected};
