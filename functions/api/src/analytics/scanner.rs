//! Smart stock scanner routes (analytics 4.4) in the standard envelope
//! `{code, msg, data}`. Thin handlers over `services::analytics::scanner`,
//! which reads the nightly job's day files.

use super::{AnalyticsErrors, Standard};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::error::Reply;
use crate::extract::json_value;
use crate::extract::{Params, Query};
use crate::openapi::SubmitResponse;
use crate::submit::Submission;
use axum::Json;
use axum::extract::Path;
use axum::response::IntoResponse;
use platform::tasks::TaskKind;
use services::analytics::scanner::answers::{ScannerDayAnswer, ScannerSingleAnswer, SignalList};
use services::analytics::scanner::backtest::requests::ScannerBacktestParams;
use services::analytics::scanner::requests::{DayParams, SingleParams};
use services::analytics::scanner::{self};

/// `GET /smart-stock-scanner/get-predefined-signals`: the 37 signals, flat
/// and by category, with their horizon and holding period.
#[utoipa::path(get, path = "/smart-stock-scanner/get-predefined-signals", tag = "analytics",
    responses((status = 200, description = "The scanner's signals", body = Standard<SignalList>), AnalyticsErrors))]
pub(crate) async fn predefined_signals() -> Json<Standard<SignalList>> {
    Json(Standard {
        code: 200,
        msg: "Predefined signals".into(),
        data: scanner::predefined_signals(),
    })
}

/// `GET /smart-stock-scanner/single/{ticker}`: one stock's signals on the
/// scan dates of a range (default the latest), both horizons.
#[utoipa::path(get, path = "/smart-stock-scanner/single/{ticker}", tag = "analytics",
    params(("ticker" = String, Path, description = "A stock (any case); 404 when unknown", example = "AAPL"), SingleParams),
    responses((status = 200, description = "The stock's signals, or code 407 without data when none fired", body = ScannerSingleAnswer), AnalyticsErrors))]
pub(crate) async fn single(
    Tenant { state, .. }: Tenant,
    Path(ticker): Path<String>,
    raw: Params,
) -> Result<Json<ScannerSingleAnswer>, ApiError> {
    let q = Query::<SingleParams>::from_params(raw)?.0.validate()?;
    Ok(Json(
        scanner::single(state.market.as_ref(), state.scanner.as_ref(), &ticker, &q).await?,
    ))
}

/// `GET /smart-stock-scanner/latest-day-all`: every stock's signals of one
/// horizon on a scan date (default the latest).
#[utoipa::path(get, path = "/smart-stock-scanner/latest-day-all", tag = "analytics",
    params(DayParams),
    responses((status = 200, description = "The day's signals, or code 407 without data when none fired (or the date has no scan). With `Accept: application/vnd.apache.arrow.stream`, `scanner_data` as an Arrow IPC stream (`code`, `msg`, `as_of_date`, `count` and `tickers` in the schema metadata); code 407 stays JSON, in an HTTP 404 when the stream was asked for",
        content((ScannerDayAnswer = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))), AnalyticsErrors))]
pub(crate) async fn latest_day_all(
    Tenant { state, .. }: Tenant,
    headers: axum::http::HeaderMap,
    crate::table_format::AsksForTable(table): crate::table_format::AsksForTable,
    raw: Params,
) -> crate::error::Reply {
    let q = Query::<DayParams>::from_params(raw)?.0.validate()?;
    let answer = scanner::latest_day_all(state.market.as_ref(), state.scanner.as_ref(), &q).await?;
    match &answer.data {
        Some(data) if crate::arrow::wanted(&headers) => crate::arrow::respond(
            data,
            &[
                ("code", answer.code.to_string()),
                ("msg", answer.msg.clone()),
            ],
        ),
        // Nothing to answer (code 407) to a request for a table: an error,
        // which the analytics envelope renders in an error status.
        None if table => Err(crate::error::ApiError::new(answer.code, answer.msg)),
        _ => Ok(crate::arrow::vary(Json(answer).into_response())),
    }
}

/// `POST /smart-scanner-backtest/start`: a portfolio traded on the
/// scanner's items over a range, as a task (the request is checked first).
#[utoipa::path(post, path = "/smart-scanner-backtest/start", tag = "analytics", request_body = ScannerBacktestParams,
    params(crate::openapi::IdempotencyKey),
    responses((status = 202, description = "Queued", body = SubmitResponse,
            links(("status" = (operation_id = "scanner_status", parameters(("task_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "scanner_report", parameters(("task_id" = "$response.body#/task_id")))))),
        crate::openapi::AnalyticsSubmitRefusals,
        AnalyticsErrors))]
pub(crate) async fn scanner_backtest_start(
    Tenant { state, caller }: Tenant,
    sent: Submission,
) -> Reply {
    let sent_params = sent.body.clone();
    let params: ScannerBacktestParams = json_value(sent_params.clone())?;
    let q = params.validate()?;
    scanner::backtest::sessions(state.market.as_ref(), &q).await?;
    let kind = TaskKind::ScannerBacktest;
    let submitted = sent.submit(&state, &caller, kind, sent_params).await?;
    Ok(crate::submit::accepted(
        &submitted,
        "Scanner backtest submitted; poll /smart-scanner-backtest/status/{task_id}".into(),
    ))
}
