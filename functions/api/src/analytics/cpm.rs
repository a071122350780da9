//! Pattern-match routes (analytics 4.3): the predefined patterns, the
//! synchronous scan forms (POST JSON or GET query) and the task submits.
//! Thin handlers over `services::analytics::cpm`.

use super::AnalyticsErrors;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{Params, Query, json_body, json_value};
use crate::openapi::SubmitResponse;
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use platform::tasks::{NewTask, TaskKind};
use platform::worker::Progress;
use serde_json::Value;
use services::analytics::cpm;
use services::analytics::cpm::answers::{BacktestAnswer, PatternList, ScanAnswer};
use services::analytics::cpm::requests::{CpmParams, Mode, PatternParams};

/// `GET /cpm/get-predefined-patterns`: the names `system_pattern` takes (no envelope).
#[utoipa::path(get, path = "/cpm/get-predefined-patterns", tag = "analytics",
    responses((status = 200, description = "The predefined patterns", body = PatternList), AnalyticsErrors))]
pub(crate) async fn predefined_patterns() -> Json<PatternList> {
    Json(cpm::predefined_patterns())
}

/// Answers a synchronous form at once.
async fn answer_now(
    state: &AppState,
    params: PatternParams,
    mode: Mode,
) -> Result<Response, ApiError> {
    let prepared = cpm::prepare(state.market.as_ref(), &params.into(), mode).await?;
    let answer = cpm::run(state.market.as_ref(), prepared, &Progress::default()).await?;
    Ok(Json(answer).into_response())
}

/// A universe search is work for a task; the synchronous forms say where to send it.
fn no_universe(named: bool) -> Result<(), ApiError> {
    if named {
        return Err(ApiError::bad_request(
            "parameter 'universe': a universe search is too large to answer within a request; submit it as a task with POST /cpm/scan/start",
        ));
    }
    Ok(())
}

fn body(bytes: &Bytes) -> Result<PatternParams, ApiError> {
    let sent: Value = json_body(bytes)?;
    no_universe(sent.get("universe").is_some())?;
    json_value(sent)
}

/// `POST /cpm/scan`: the matches of the template, answered at once.
#[utoipa::path(post, path = "/cpm/scan", tag = "analytics", request_body = PatternParams,
    responses((status = 200, description = "`Found matching patterns!`, or code 407 without data when nothing matched", body = ScanAnswer), AnalyticsErrors))]
pub(crate) async fn scan(
    State(state): State<AppState>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    answer_now(&state, body(&bytes)?, Mode::Scan).await
}

/// `GET /cpm/scan`: the same with the parameters in the query.
#[utoipa::path(get, path = "/cpm/scan", tag = "analytics", operation_id = "scan_query", params(PatternParams),
    responses((status = 200, description = "`Found matching patterns!`, or code 407 without data when nothing matched", body = ScanAnswer), AnalyticsErrors))]
pub(crate) async fn scan_query(
    State(state): State<AppState>,
    raw: Params,
) -> Result<Response, ApiError> {
    answer_now(&state, query(raw).await?, Mode::Scan).await
}

/// `POST /cpm/scan_with_backtest`: the matches and the trades after them, answered at once.
#[utoipa::path(post, path = "/cpm/scan_with_backtest", tag = "analytics", request_body = PatternParams,
    responses((status = 200, description = "`Finish CPM!`, or code 407 without data when nothing matched", body = BacktestAnswer), AnalyticsErrors))]
pub(crate) async fn scan_with_backtest(
    State(state): State<AppState>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    answer_now(&state, body(&bytes)?, Mode::Backtest).await
}

/// `GET /cpm/scan_with_backtest`: the same with the parameters in the query.
#[utoipa::path(get, path = "/cpm/scan_with_backtest", tag = "analytics", operation_id = "scan_with_backtest_query", params(PatternParams),
    responses((status = 200, description = "`Finish CPM!`, or code 407 without data when nothing matched", body = BacktestAnswer), AnalyticsErrors))]
pub(crate) async fn scan_with_backtest_query(
    State(state): State<AppState>,
    raw: Params,
) -> Result<Response, ApiError> {
    answer_now(&state, query(raw).await?, Mode::Backtest).await
}

/// The query's parameters; a universe is refused with where to send it.
pub(crate) async fn query(raw: Params) -> Result<PatternParams, ApiError> {
    no_universe(raw.get("universe").is_some())?;
    Query::<PatternParams>::from_params(raw).map(|q| q.0)
}

/// Checks the request as the worker will, then stores and queues it.
async fn start(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    bytes: &Bytes,
    mode: Mode,
) -> Result<Response, ApiError> {
    let key = crate::submit::idempotency_key(headers)?;
    let sent: Value = json_body(bytes)?;
    let params: CpmParams = match mode {
        Mode::Scan => json_value(sent.clone())?,
        Mode::Backtest => json_value::<PatternParams>(sent.clone())?.into(),
    };
    let prepared = cpm::prepare(state.market.as_ref(), &params, mode).await?;
    let (kind, what) = match mode {
        Mode::Scan => (TaskKind::CpmScan, "Pattern scan"),
        Mode::Backtest => (TaskKind::CpmBacktest, "Pattern backtest"),
    };
    let submitted = crate::submit::submit(
        state,
        &caller.0,
        NewTask {
            owner: caller.0.email.clone(),
            kind,
            params: sent,
        },
        key.as_deref(),
    )
    .await?;
    let mut message = format!("{what} submitted; poll /cpm/status/{{task_id}}");
    for w in &prepared.query.warnings {
        message.push_str(&format!(" (warning: {w})"));
    }
    Ok(crate::submit::accepted(&submitted, message))
}

/// `POST /cpm/scan/start`: a scan task (a universe search too).
#[utoipa::path(post, path = "/cpm/scan/start", tag = "analytics", request_body = CpmParams,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 visible ASCII characters; the same key from the same account within 24 h answers with the task it first created (header Idempotent-Replayed: true)", pattern = "^[!-~]{1,255}$")),
    responses((status = 202, description = "Queued", body = SubmitResponse,
            links(("status" = (operation_id = "cpm_status", parameters(("task_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "cpm_report", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 422, description = "The Idempotency-Key was used for a different request", body = crate::error::AnalyticsError),
        (status = 500, description = "The message broker refused the task (it is marked FAILED)", body = crate::error::AnalyticsError),
        AnalyticsErrors))]
pub(crate) async fn scan_start(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    start(&state, &caller, &headers, &bytes, Mode::Scan).await
}

/// `POST /cpm/backtest/start`: a backtest task.
#[utoipa::path(post, path = "/cpm/backtest/start", tag = "analytics", request_body = PatternParams,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 visible ASCII characters; the same key from the same account within 24 h answers with the task it first created (header Idempotent-Replayed: true)", pattern = "^[!-~]{1,255}$")),
    responses((status = 202, description = "Queued", body = SubmitResponse,
            links(("status" = (operation_id = "cpm_status", parameters(("task_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "cpm_report", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 422, description = "The Idempotency-Key was used for a different request", body = crate::error::AnalyticsError),
        (status = 500, description = "The message broker refused the task (it is marked FAILED)", body = crate::error::AnalyticsError),
        AnalyticsErrors))]
pub(crate) async fn backtest_start(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    start(&state, &caller, &headers, &bytes, Mode::Backtest).await
}
