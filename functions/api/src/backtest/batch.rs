//! Batch backtests over HTTP: submit a list or a grid, follow it, download
//! its results table. The use case is `services::backtest::batch`.

use crate::auth::{Caller, Tenant};
use crate::error::ApiError;
use crate::error::Reply;
use crate::extract::Params;
use crate::shared_reads::Built;
use crate::state::AppState;
use crate::submit::Submission;
use crate::tasks::{TaskList, owned_task};
use axum::Json;
use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;
use platform::marketdata::interchange::TableFormat;
use platform::tasks::{Page, Task, TaskFilter, TaskKind, TaskStatus};
use services::backtest::batch::{self, BatchRow, BatchStatus};
use services::backtest::batch_files;

/// `POST /backtest/batch`: every strategy is checked first; the batch is
/// then one task whose job fans it out in chunks.
#[utoipa::path(post, path = "/backtest/batch", tag = "backtest", request_body = services::backtest::batch::BatchBody,
    params(crate::openapi::IdempotencyKey),
    responses((status = 202, description = "Queued", body = crate::openapi::SubmitResponse,
            links(("status" = (operation_id = "batch_status", parameters(("batch_id" = "$response.body#/task_id")))),
                ("results" = (operation_id = "batch_results", parameters(("batch_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "batch_report", parameters(("batch_id" = "$response.body#/task_id")))),
                ("monte_carlo" = (operation_id = "batch_monte_carlo", parameters(("batch_id" = "$response.body#/task_id")))))),
        (status = 400, description = "An invalid strategy (its index and field named), a bad grid, or more strategies than the plan allows", body = crate::openapi::ErrorDetail),
        (status = 404, description = "A strategy's symbol or benchmark has no data; `field` names it (`strategies[2].symbol`)", body = crate::openapi::ErrorDetail),
        crate::openapi::BacktestAccess,
        crate::openapi::BacktestSubmitRefusals))]
pub(crate) async fn submit_batch(Tenant { state, caller }: Tenant, sent: Submission) -> Reply {
    let market = state.market.as_ref();
    let cap = match &state.metering {
        Some(m) => m.batch_size(caller.account.plan).await,
        None => caller.account.plan.max_batch,
    };
    let params = batch::submission(market, sent.body.clone(), cap).await?;
    let total = params.total;
    let params = serde_json::to_value(params)
        .map_err(|e| ApiError::from(platform::PortError::internal(e)))?;
    let kind = TaskKind::BatchBacktest;
    let submitted = sent.submit(&state, &caller, kind, params).await?;
    Ok(crate::submit::accepted(
        &submitted,
        format!("Batch of {total} strategies submitted; poll /backtest/batch/{{task_id}}"),
    ))
}

/// The caller's batch as it stands; its rows read only with `rows`.
async fn standing(
    state: &AppState,
    caller: &Caller,
    id: &str,
    rows: batch::Rows,
) -> Result<BatchStatus, ApiError> {
    standing_with(state, caller, id, rows, &tokio::sync::OnceCell::new(), None).await
}

/// [`standing`], keeping the batch's record in `fanned` once it has fanned
/// out (it no longer changes then): a long-poll's later reads are its
/// chunks' alone, and none once `counted` (the outcomes counted to the
/// batch) says they have all ended.
async fn standing_with(
    state: &AppState,
    caller: &Caller,
    id: &str,
    rows: batch::Rows,
    fanned: &tokio::sync::OnceCell<Task>,
    counted: Option<u64>,
) -> Result<BatchStatus, ApiError> {
    let read;
    let record = match fanned.get() {
        Some(record) => record,
        None => {
            read = owned_task(state, caller, id, &[TaskKind::BatchBacktest]).await?;
            if read.status == TaskStatus::Success {
                fanned.get_or_init(|| async { read }).await
            } else {
                &read
            }
        }
    };
    let returns = platform::returns::ReturnStore::new(state.uploads.blobs().clone());
    Ok(batch::status_counted(state.tasks.as_ref(), Some(&returns), record, rows, counted).await?)
}

/// `GET /backtest/batch/{batch_id}`: progress, and once finished the
/// statistics; never the rows (`/results` has them), so it stays small
/// (`wait` holds the answer until the batch ends).
#[utoipa::path(get, path = "/backtest/batch/{batch_id}", tag = "backtest", operation_id = "batch_status",
    params(("batch_id" = String, Path, description = "The batch's id"), crate::tasks::Wait),
    responses((status = 200, description = "The batch", body = BatchStatus),
        (status = 400, description = "`wait` is not a number of seconds", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign batch", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_status(t: Tenant, Path(id): Path<String>, query: Params) -> Reply {
    let fanned = tokio::sync::OnceCell::new();
    let (t, id, fanned) = (&t, &id, &fanned);
    let read = |counted| async move {
        let status =
            standing_with(&t.state, &t.caller, id, batch::Rows::Skip, fanned, counted).await?;
        let body = serde_json::to_vec(&status)
            .map_err(|e| ApiError::from(platform::PortError::internal(e)))?;
        Ok(Built {
            ended: status.status == "SUCCESS" || status.status == "FAILED",
            body: body.into(),
        })
    };
    let ended = |b: &Built| b.ended;
    let built = crate::tasks::held_shared(
        &t.state,
        &t.state.batch_reads,
        &t.caller.owner(),
        id,
        &query,
        read,
        ended,
    )
    .await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        built.body.clone(),
    )
        .into_response())
}

/// `GET /backtest/batch/{batch_id}/results?format=csv|parquet|arrow|json`:
/// the finished batch's table (409 while it runs). Without `format`, an
/// `Accept` naming the Arrow stream gets it.
#[utoipa::path(get, path = "/backtest/batch/{batch_id}/results", tag = "backtest", operation_id = "batch_results",
    params(("batch_id" = String, Path, description = "The batch's id"),
        ("format" = Option<String>, Query, description = "`json` (default: the rows, or an Arrow stream when `Accept` names `application/vnd.apache.arrow.stream`), `csv`, `parquet` or `arrow`", pattern = "^(json|csv|parquet|arrow)$")),
    responses((status = 200, description = "The results table",
            content((Vec<BatchRow> = "application/json"), (String = "text/csv"), (crate::openapi::Binary = "application/vnd.apache.parquet"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))),
        (status = 400, description = "Unknown format", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign batch", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The batch has not finished", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_results(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
    params: Params,
) -> Reply {
    let negotiated = if crate::arrow::wanted(&headers) {
        "arrow"
    } else {
        "json"
    };
    let format = params
        .get("format")
        .unwrap_or(negotiated)
        .to_ascii_lowercase();
    if !["json", "csv", "parquet", "arrow"].contains(&format.as_str()) {
        return Err(ApiError::field(
            "format",
            format!("must be json, csv, parquet or arrow, got '{format}'"),
        ));
    }
    let file = |ext: &str| format!("attachment; filename=\"batch-{id}.{ext}\"");
    // The files are written a chunk at a time: the rows are never all held.
    if let Some((table, media)) = match format.as_str() {
        "parquet" => Some((TableFormat::Parquet, "application/vnd.apache.parquet")),
        "arrow" => Some((
            TableFormat::ArrowStream,
            platform::marketdata::interchange::ARROW_STREAM,
        )),
        _ => None,
    } {
        let record = tokio::sync::OnceCell::new();
        let s = standing_with(&state, &caller, &id, batch::Rows::Skip, &record, None).await?;
        let bytes = match record.get() {
            Some(record) => {
                let metadata = batch_files::summary(&s);
                batch::export(state.tasks.as_ref(), record, table, metadata).await?
            }
            None => None,
        };
        let Some(bytes) = bytes else {
            return Err(unfinished(&id, &s, "results"));
        };
        let mut response = ([(header::CONTENT_TYPE, media)], bytes).into_response();
        if table == TableFormat::Parquet {
            let disposition = header::HeaderValue::from_str(&file("parquet"))
                .map_err(|_| ApiError::internal())?;
            response
                .headers_mut()
                .insert(header::CONTENT_DISPOSITION, disposition);
        } else {
            response = crate::arrow::vary(response);
        }
        return Ok(response);
    }
    let s = standing(&state, &caller, &id, batch::Rows::Read).await?;
    let Some(rows) = &s.rows else {
        return Err(unfinished(&id, &s, "results"));
    };
    Ok(match format.as_str() {
        "csv" => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (header::CONTENT_DISPOSITION, file("csv")),
            ],
            batch::to_csv(&s.paths, rows),
        )
            .into_response(),
        _ => crate::arrow::vary(Json(rows).into_response()),
    })
}

/// `GET /backtest/batch/{batch_id}/rows?cursor=&limit=`: the finished
/// batch's rows a page at a time, in batch order (409 while it runs). A
/// page reads only the chunks holding its rows, so a client walks a batch
/// of any size with answers of a bounded size; the pages together are the
/// results table.
#[utoipa::path(get, path = "/backtest/batch/{batch_id}/rows", tag = "backtest", operation_id = "batch_rows",
    params(("batch_id" = String, Path, description = "The batch's id"),
        ("cursor" = Option<String>, Query, description = "The `next_cursor` of the previous page; the first page without it", pattern = "^[0-9]{1,19}$"),
        ("limit" = Option<u32>, Query, description = "Rows in the page: 1 to 10,000, 1,000 when absent", minimum = 1, maximum = 10000)),
    responses((status = 200, description = "A page of rows", body = batch::RowsPage,
            links(("next" = (operation_id = "batch_rows", parameters(("batch_id" = "$request.path.batch_id"), ("cursor" = "$response.body#/next_cursor")))))),
        (status = 400, description = "A bad `cursor` or `limit`", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown or foreign batch", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The batch has not finished", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_rows(
    Tenant { state, caller }: Tenant,
    Path(id): Path<String>,
    params: Params,
) -> Result<Json<batch::RowsPage>, ApiError> {
    let limit = params.int_in(
        "limit",
        batch::PAGE_ROWS as i64,
        1,
        batch::MAX_PAGE_ROWS as i64,
    )? as usize;
    let from = batch::cursor_start(params.get("cursor"))?;
    let record = owned_task(&state, &caller, &id, &[TaskKind::BatchBacktest]).await?;
    let Some(page) = batch::rows_page(state.tasks.as_ref(), &record, from, limit).await? else {
        let s = batch::status(state.tasks.as_ref(), None, &record, batch::Rows::Skip).await?;
        return Err(unfinished(&id, &s, "rows"));
    };
    Ok(Json(page))
}

/// 409 for a batch's `what` (results, rows) asked before it has finished.
fn unfinished(id: &str, s: &BatchStatus, what: &str) -> ApiError {
    ApiError::new(
        409,
        format!(
            "batch '{id}' is {} ({} of {} done); its {what} come when it finishes",
            s.status, s.done, s.total
        ),
    )
}

/// `GET /backtest/batches`: the caller's batches, newest first.
#[utoipa::path(get, path = "/backtest/batches", tag = "backtest",
    params(crate::tasks::Paging),
    responses((status = 200, description = "A page of batches (without their rows)", body = TaskList<BatchStatus>),
        (status = 400, description = "Bad paging", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batches(
    t: Tenant,
    params: Params,
) -> Result<Json<TaskList<BatchStatus>>, ApiError> {
    let limit = params.int_in("limit", 20, 1, 200)? as u32;
    let offset = params.int_in("offset", 0, 0, i64::from(u32::MAX))? as u32;
    let filter = TaskFilter {
        kinds: vec![TaskKind::BatchBacktest],
        status: crate::tasks::status_filter(&params)?,
    };
    let page = t
        .state
        .tasks
        .list(&t.caller.owner(), &filter, Page { limit, offset })
        .await?;
    let mut out = Vec::with_capacity(page.tasks.len());
    for task in &page.tasks {
        let s = batch::status(t.state.tasks.as_ref(), None, task, batch::Rows::Skip).await?;
        out.push(s);
    }
    Ok(Json(TaskList {
        tasks: out,
        total: page.total,
        limit,
        offset,
    }))
}
