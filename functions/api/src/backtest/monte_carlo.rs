//! `GET /backtest/monte-carlo/{task_id}` and
//! `GET /backtest/batch/{batch_id}/monte-carlo`: the bootstrap of a
//! backtest or of a batch row (`services::backtest::monte_carlo`).

use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::{Params, Query};
use crate::tasks::owned_task;
use axum::Json;
use axum::extract::Path;
use platform::tasks::{Task, TaskKind, TaskStatus};
use services::backtest::monte_carlo::{self, MonteCarlo, MonteCarloQuery};

/// The backtest's trades drawn again with replacement, and its per-bar
/// returns in circular blocks: percentile bands of CAGR, maximum drawdown
/// and final equity, and a fan of equity paths. Seeded: the same query,
/// the same answer. Only for a finished task: one that is not is a 409.
#[utoipa::path(get, path = "/backtest/monte-carlo/{task_id}", tag = "backtest", operation_id = "backtest_monte_carlo",
    params(("task_id" = String, Path, description = "A backtest task of the caller"), MonteCarloQuery),
    responses((status = 200, description = "The bands and fans of both methods", body = MonteCarlo),
        (status = 400, description = "`draws`, `seed` or `block` out of range (the message names it)", body = crate::openapi::ErrorDetail),
        (status = 404, description = "No such task of the caller", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_monte_carlo(
    t: Tenant,
    Path(task_id): Path<String>,
    params: Params,
) -> Result<Json<MonteCarlo>, ApiError> {
    // The task first: another tenant's id is 404 whatever the query.
    let task = succeeded(&t, &task_id).await?;
    let Query(q) = Query::<MonteCarloQuery>::from_params(params)?;
    let settings = q.check()?;
    let place = crate::compute::admit(&t, "monte_carlo").await?;
    let upload = services::backtest::task_upload(&t.state.uploads, &task, false).await?;
    let loaded = monte_carlo::load(t.state.market.as_ref(), &task.params, upload).await?;
    Ok(Json(draw(place, loaded, settings).await?))
}

/// The draws on the compute pool, in the caller's place there (taken
/// before the run's data were read), metered as `monte_carlo` compute.
pub(crate) async fn draw(
    place: crate::compute::Admitted<'_>,
    loaded: monte_carlo::Loaded,
    settings: monte_carlo::Settings,
) -> Result<MonteCarlo, ApiError> {
    place
        .run(move |stop| loaded.monte_carlo(settings, stop))
        .await??
        // Stopped: only a request already dropped asks for that.
        .ok_or_else(|| ApiError::new(503, "the computation was stopped"))
}

/// A batch row's Monte Carlo, as a backtest's: its strategy is run again
/// as the batch ran it.
#[utoipa::path(get, path = "/backtest/batch/{batch_id}/monte-carlo", tag = "backtest", operation_id = "batch_monte_carlo",
    params(("batch_id" = String, Path, description = "A batch of the caller"),
        ("row" = i64, Query, description = "The row's `index` in the batch's results.", minimum = 0, example = 0),
        MonteCarloQuery),
    responses((status = 200, description = "The bands and fans of both methods", body = MonteCarlo),
        (status = 400, description = "`row`, `draws`, `seed` or `block` malformed or out of range (the message names it)", body = crate::openapi::ErrorDetail),
        (status = 404, description = "No such batch of the caller, or no such row in it", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_monte_carlo(
    t: Tenant,
    Path(batch_id): Path<String>,
    params: Params,
) -> Result<Json<MonteCarlo>, ApiError> {
    let record = owned_task(&t.state, &t.caller, &batch_id, &[TaskKind::BatchBacktest]).await?;
    let record = crate::tasks::whole(record)?;
    // The row, then the settings as a backtest's (the query's other fields).
    let row = params
        .opt::<i64>("row", "an integer")?
        .ok_or_else(|| ApiError::field("row", "is required"))?;
    let Query(q) = Query::<MonteCarloQuery>::from_params(params)?;
    let settings = q.check()?;
    let place = crate::compute::admit(&t, "monte_carlo").await?;
    let loaded = monte_carlo::load_batch_row(t.state.market.as_ref(), &record, row).await?;
    Ok(Json(draw(place, loaded, settings).await?))
}

/// The caller's backtest task, once it has succeeded (409 before).
pub(crate) async fn succeeded(t: &Tenant, task_id: &str) -> Result<Task, ApiError> {
    let task = owned_task(&t.state, &t.caller, task_id, &[TaskKind::StrategyBacktest]).await?;
    if task.status != TaskStatus::Success {
        return Err(ApiError::new(
            409,
            format!(
                "task '{task_id}' is {}: its series exist once it has succeeded",
                task.status
            ),
        ));
    }
    Ok(task)
}
