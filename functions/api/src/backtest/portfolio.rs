//! Portfolio backtests: submit one, read its task (the result inside), its
//! tables as JSON rows, CSV, Parquet or Arrow, its chart data and its
//! report page.

use super::portfolio_body::PortfolioBody;
use crate::auth::Tenant;
use crate::error::{ApiError, Reply};
use crate::extract::{Params, Query};
use crate::openapi::{Binary, ErrorDetail};
use crate::scopes::scoped;
use crate::state::AppState;
use crate::submit::submit;
use crate::table_format::{Format, respond};
use axum::Json;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use platform::tasks::{Task, TaskKind, TaskStatus};
use serde::Serialize;
use serde_json::Value;
use services::backtest::chart::ExportQuery;
use services::backtest::portfolio::answers::PortfolioResult;
use services::backtest::portfolio::chart::{self, PortfolioChart};
use services::backtest::portfolio::request::PortfolioParams;
use services::backtest::portfolio::stored;
use services::backtest::portfolio::tables::{self, PortfolioTable};
use services::glossary::Kind;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Submit: start_portfolio))
        .routes(scoped!(Read: portfolio_status))
        .routes(scoped!(Read: portfolio_equity))
        .routes(scoped!(Read: portfolio_trades))
        .routes(scoped!(Read: portfolio_orders))
        .routes(scoped!(Read: portfolio_weights))
        .routes(scoped!(Read: portfolio_contributions))
        .routes(scoped!(Read: portfolio_chart))
        .routes(scoped!(Read: portfolio_report))
}

/// Submit a portfolio backtest: checked against the data, then queued.
///
/// Besides JSON, the body may be `multipart/form-data`: a `portfolio` part
/// (this JSON) and a part `bars.<SYMBOL>` per symbol whose own daily bars
/// are sent (Date, Open, High, Low, Close, Volume as CSV text, a Parquet
/// file or an Arrow IPC stream). The universe and the benchmark read them
/// before stored symbols of the same name; the task's `params.own_bars`
/// names them by digest (docs/portfolios.md#your-own-bars).
#[utoipa::path(post, path = "/backtest/portfolio", tag = "backtest", request_body = PortfolioParams,
    params(crate::openapi::IdempotencyKey),
    responses((status = 202, description = "Queued", body = crate::openapi::SubmitResponse,
            links(("status" = (operation_id = "portfolio_status", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 400, description = "Invalid request, an unknown symbol, or a schedule that never fires; the message names the field", body = crate::openapi::ErrorDetail),
        crate::openapi::BacktestSubmitRefusals,
        crate::openapi::BacktestAccess,
        (status = 503, description = "The task store is unavailable; nothing was queued", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn start_portfolio(
    Tenant { state, caller }: Tenant,
    sent: PortfolioBody,
) -> Reply {
    let params = services::backtest::portfolio::own::accept(
        state.market.as_ref(),
        &state.uploads,
        &caller.owner(),
        sent.body,
        sent.bars,
    )
    .await?;
    let kind = TaskKind::PortfolioBacktest;
    let submitted = submit(&state, &caller, sent.key.as_deref(), kind, params).await?;
    Ok(crate::submit::accepted(
        &submitted,
        "Portfolio task submitted; poll /backtest/portfolio/{task_id}".into(),
    ))
}

/// A portfolio task.
#[derive(Serialize, ToSchema)]
pub struct PortfolioTask {
    #[schema(value_type = String, format = "uuid")]
    pub task_id: Uuid,
    #[schema(value_type = String, pattern = "^(PENDING|RUNNING|SUCCESS|FAILED)$")]
    pub status: TaskStatus,
    /// The request as submitted.
    #[schema(value_type = Object)]
    pub params: Value,
    /// `YYYY-MM-DDTHH:MM:SS`, UTC.
    pub created_at: String,
    /// SUCCESS: the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<services::backtest::portfolio::answers::PortfolioResult>)]
    pub result: Option<Value>,
    /// FAILED: what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The task as a page to open in a browser (charts, metrics, contributions).
    pub report_url: String,
}

fn record(t: Task) -> PortfolioTask {
    let failed = t.status == TaskStatus::Failed;
    PortfolioTask {
        task_id: t.id,
        status: t.status,
        params: t.params,
        created_at: t.created_at.format("%Y-%m-%dT%H:%M:%S").to_string(),
        result: if t.status == TaskStatus::Success {
            t.result
        } else {
            None
        },
        error: if failed {
            Some(t.error.unwrap_or_else(|| "the task failed".into()))
        } else {
            None
        },
        report_url: format!("/backtest/portfolio/{}/report", t.id),
    }
}

/// A finished portfolio's stored answer, typed. One stored before its
/// tables took the results glossary's names and units no longer reads
/// ([`current_form`]): the task is answered as one to run again (409), not
/// as a server fault, and its figures are never shown in the wrong units.
fn answer(task: &Task) -> Result<PortfolioResult, ApiError> {
    current_form(task)?;
    let result = task.result.clone().unwrap_or(Value::Null);
    serde_json::from_value(result)
        .map_err(|e| ApiError::from(services::Error::Port(platform::PortError::internal(e))))
}

/// 409 for a task whose stored result is of the form before the glossary
/// (no `winning_trades`), on every read of it: its status, tables, chart
/// and page.
fn current_form(task: &Task) -> Result<(), ApiError> {
    match &task.result {
        Some(r) if r.is_object() && r.get("winning_trades").is_none() => Err(ApiError::new(
            409,
            format!(
                "task '{}' was stored in an earlier form of the result (percent figures, \
                 `entry_date` columns); submit its request again",
                task.id
            ),
        )),
        _ => Ok(()),
    }
}

/// What a finished portfolio's charts draw, as data: per session the
/// equity, the benchmark and the drawdown; the month-end weights of the
/// most held symbols; each symbol's contribution (409 before success).
#[utoipa::path(get, path = "/backtest/portfolio/{task_id}/chart", tag = "backtest", operation_id = "portfolio_chart",
    params(("task_id" = String, Path, description = "A portfolio task of the caller")),
    responses((status = 200, description = "The series, one value per session of the window", body = PortfolioChart),
        (status = 401, description = "Missing or invalid credentials", body = ErrorDetail),
        (status = 404, description = "No such task of the caller", body = ErrorDetail),
        (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = ErrorDetail)))]
pub(crate) async fn portfolio_chart(
    t: Tenant,
    Path(task_id): Path<String>,
) -> Result<Json<PortfolioChart>, ApiError> {
    let task = succeeded(&t, &task_id).await?;
    Ok(Json(chart::chart(&answer(&task)?)))
}

/// The portfolio as a page: the equity against the benchmark, the
/// drawdown, the weights over time as a stacked area, the contributions
/// and the metrics.
#[utoipa::path(get, path = "/backtest/portfolio/{task_id}/report", tag = "backtest", operation_id = "portfolio_report",
    params(("task_id" = String, Path, description = "A portfolio task of the caller")),
    responses((status = 200, description = "The report page (a task not finished shows its status and reloads every 2 s)", content_type = "text/html", body = String),
        (status = 401, description = "Missing or invalid credentials", body = ErrorDetail),
        (status = 404, description = "No such task of the caller", body = ErrorDetail)))]
pub(crate) async fn portfolio_report(t: Tenant, Path(task_id): Path<String>) -> Reply {
    let kinds = [TaskKind::PortfolioBacktest];
    let task = crate::tasks::owned_task(&t.state, &t.caller, &task_id, &kinds).await?;
    let universe = task
        .params
        .get("universe")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let name = match task.params.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("Portfolio of {universe} symbols"),
    };
    let sub = format!("{universe} symbols");
    let (heading, waiting) = crate::report::task_heading(&name, &sub, &task);
    if let Some(page) = waiting {
        return Ok(page);
    }
    let task = stored::joined(t.state.uploads.blobs().as_ref(), task).await?;
    let r = answer(&task)?;
    let chart = chart::chart(&r);
    // The page inlines the charts and the figures, not the orders and
    // trades (a 500-symbol portfolio's run to MBs: they are tables of
    // their own).
    let mut figures = serde_json::to_value(&r).unwrap_or(Value::Null);
    stored::figures(&mut figures);
    Ok(crate::report::chart_page(
        &name,
        &format!(
            r#"{heading}
<h2>Equity and the benchmark</h2><div id="equity" class="chart tall"></div>
<h2>Drawdown</h2><div id="drawdown" class="chart"></div>
<h2>Weights at month ends</h2>
<p class="sub">Each band is one symbol's share of the account at each month end, stacked from the bottom in the legend's order (the ten most held, the rest together as others); the blank above the bands is cash. <a href="/backtest/portfolio/{id}/weights?format=csv">Every weight</a>.</p>
<div class="stack"><div id="weights" class="chart tall"></div><ul id="weights-legend" class="legend"></ul></div>
<p class="sub" id="weights-at">Point at the chart for a month end's weights.</p>
<h2>Metrics</h2><table class="metrics" id="metrics"></table>
<h2>Against the benchmark</h2><table class="metrics" id="relative"></table>
<h2>Contributions</h2><table id="contributions"></table>
<p class="sub">Tables: <a href="/backtest/portfolio/{id}/trades?format=csv">trades</a>, <a href="/backtest/portfolio/{id}/orders?format=csv">orders</a>, <a href="/backtest/portfolio/{id}/equity?format=csv">equity</a></p>"#,
            id = task.id
        ),
        &serde_json::json!({
            "result": figures,
            "chart": chart,
            // The labels, units and order of every result page (docs/results.md).
            "figures": crate::report::figures::figures(Kind::Portfolio),
        }),
        "report-portfolio.js",
    ))
}

/// How much of the result a task read carries.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct View {
    /// `full` (the default): the whole result. `summary`: its figures
    /// without the series, trades, orders, weights and contributions,
    /// which are the task's tables (`.../equity`, `.../trades`, ...): a
    /// 500-symbol portfolio's result runs to MBs, its summary to a few KB.
    #[param(value_type = Option<String>, pattern = "^(full|summary)$")]
    view: Option<String>,
}

/// One of the caller's portfolio tasks; another account's id is 404.
#[utoipa::path(get, path = "/backtest/portfolio/{task_id}", tag = "backtest",
    params(("task_id" = String, Path, description = "Task UUID"), crate::tasks::Wait, View),
    responses((status = 200, description = "The task", body = PortfolioTask),
        (status = 400, description = "A `wait` that is not a number from 0, or a `view` other than `full` and `summary`", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign task", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn portfolio_status(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    query: Params,
) -> Result<Json<PortfolioTask>, ApiError> {
    let summary = match query.get("view") {
        None | Some("full") => false,
        Some("summary") => true,
        Some(other) => {
            return Err(ApiError::field(
                "view",
                format!("'{other}' is not a view: 'full' or 'summary'"),
            ));
        }
    };
    let kinds = [TaskKind::PortfolioBacktest];
    let mut t = crate::tasks::owned_task_waiting(&state, &caller, &id, &kinds, &query).await?;
    current_form(&t)?;
    if summary {
        if let Some(r) = &mut t.result {
            stored::figures(r);
        }
    } else {
        t = stored::joined(state.uploads.blobs().as_ref(), t).await?;
    }
    Ok(Json(record(t)))
}

/// The caller's portfolio task, once it has succeeded (409 before).
async fn succeeded(t: &Tenant, task_id: &str) -> Result<Task, ApiError> {
    let kinds = [TaskKind::PortfolioBacktest];
    let task = crate::tasks::owned_task(&t.state, &t.caller, task_id, &kinds).await?;
    let task = stored::joined(t.state.uploads.blobs().as_ref(), task).await?;
    if task.status != TaskStatus::Success {
        return Err(ApiError::new(
            409,
            format!(
                "task '{task_id}' is {}: its tables exist once it has succeeded",
                task.status
            ),
        ));
    }
    current_form(&task)?;
    Ok(task)
}

/// One of a finished portfolio's tables in the format asked for.
async fn export(
    t: Tenant,
    headers: HeaderMap,
    task_id: String,
    q: ExportQuery,
    table: PortfolioTable,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), &headers)?;
    let task = succeeded(&t, &task_id).await?;
    let result = task.result.as_ref().unwrap_or(&Value::Null);
    match format {
        Format::Json => Ok(crate::arrow::vary(
            Json(tables::rows(result, table)).into_response(),
        )),
        other => respond(
            other,
            tables::columns(result, table),
            &format!("{}-{task_id}", table.name()),
        ),
    }
}

macro_rules! export_route {
    ($fn:ident, $path:literal, $table:expr, $what:literal) => {
        #[doc = $what]
        #[utoipa::path(get, path = $path, tag = "backtest",
            params(("task_id" = String, Path, description = "A portfolio task of the caller"), ExportQuery),
            responses((status = 200, description = "JSON rows, or the same columns as CSV, Parquet or an Arrow IPC stream",
                    content((Vec<Object> = "application/json"), (String = "text/csv"), (Binary = "application/vnd.apache.parquet"), (Binary = "application/vnd.apache.arrow.stream"))),
                (status = 400, description = "Unknown format", body = ErrorDetail),
                (status = 401, description = "Missing or invalid credentials", body = ErrorDetail),
                (status = 404, description = "No such task of the caller", body = ErrorDetail),
                (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = ErrorDetail)))]
        pub(crate) async fn $fn(
            t: Tenant,
            headers: HeaderMap,
            Path(task_id): Path<String>,
            Query(q): Query<ExportQuery>,
        ) -> Reply {
            export(t, headers, task_id, q, $table).await
        }
    };
}

export_route!(
    portfolio_equity,
    "/backtest/portfolio/{task_id}/equity",
    PortfolioTable::Equity,
    "A finished portfolio's account per session: date, equity, cash, exposure, traded, benchmark."
);
export_route!(
    portfolio_trades,
    "/backtest/portfolio/{task_id}/trades",
    PortfolioTable::Trades,
    "A finished portfolio's round trips: entry_time, exit_time, symbol, side, size, entry_price, exit_price, fees, profit, return (a fraction), bars_held, exit_reason."
);
export_route!(
    portfolio_orders,
    "/backtest/portfolio/{task_id}/orders",
    PortfolioTable::Orders,
    "A finished portfolio's fills: time, symbol, side (buy or sell), size (positive), price, fees."
);
export_route!(
    portfolio_weights,
    "/backtest/portfolio/{task_id}/weights",
    PortfolioTable::Weights,
    "A finished portfolio's weights at each month's last session, a column per symbol held."
);
export_route!(
    portfolio_contributions,
    "/backtest/portfolio/{task_id}/contributions",
    PortfolioTable::Contributions,
    "A finished portfolio's profit per symbol, largest first."
);

#[cfg(test)]
mod tests {
    use super::*;
    use platform::tasks::{NewTask, TaskKind};
    use serde_json::json;

    fn stored(result: Value) -> Task {
        let mut task = NewTask {
            owner: "o".into(),
            kind: TaskKind::PortfolioBacktest,
            params: Value::Null,
        }
        .into_pending();
        task.result = Some(result);
        task
    }

    #[test]
    fn a_result_stored_before_the_glossary_is_a_task_to_run_again_not_a_fault() {
        // The old form: percent figures, `entry_date`, no `winning_trades`.
        let old = stored(json!({"mode": "weights", "total_return": 31.0,
            "trades": [{"symbol": "A", "entry_date": "2024-01-02"}]}));
        let e = answer(&old).unwrap_err();
        assert_eq!(e.status.as_u16(), 409);
        assert!(
            e.message.contains("submit its request again"),
            "{}",
            e.message
        );
        // Damage of another kind stays a server fault.
        let broken = stored(json!({"winning_trades": 1, "trades": "x"}));
        assert_eq!(answer(&broken).unwrap_err().status.as_u16(), 500);
    }
}
