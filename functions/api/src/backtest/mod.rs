//! The backtest service's routes; the request model and the job live in
//! `services::backtest`.

pub mod batch;
pub mod exports;
pub mod monte_carlo;
pub mod portfolio;
pub mod portfolio_body;
pub mod report;
pub mod routes;
pub mod strategy_body;
pub mod tasks;

use crate::state::AppState;
use utoipa_axum::router::OpenApiRouter;

/// Every authenticated route of the group, its task routes included.
pub fn routes() -> OpenApiRouter<AppState> {
    routes::routes()
        .merge(tasks::routes())
        .merge(portfolio::routes())
}
