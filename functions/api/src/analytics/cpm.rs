//! Pattern-match routes (analytics 4.3): the predefined patterns, the
//! synchronous scan forms (POST JSON or GET query) and the task submits.
//! Thin handlers over `services::analytics::cpm`.

use super::AnalyticsErrors;
use crate::auth::Tenant;
use crate::error::{ApiError, Reply};
use crate::extract::{Params, Query, json_body, json_value};
use crate::openapi::SubmitResponse;
use crate::state::AppState;
use crate::submit::Submission;
use axum::Json;
use axum::body::Bytes;
use axum::response::IntoResponse;
use platform::tasks::TaskKind;
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
async fn answer_now(state: &AppState, params: PatternParams, mode: Mode) -> Reply {
    let prepared = cpm::prepare(state.market.as_ref(), &params.into(), mode).await?;
    let answer = cpm::run(state.market.as_ref(), prepared, &Progress::default()).await?;
    Ok(Json(answer).into_response())
}

/// A universe search is work for a task; the synchronous forms say where to send it.
fn no_universe(named: bool) -> Result<(), ApiError> {
    if named {
        return Err(ApiError::field(
            "universe",
            "a universe search is too large to answer within a request; submit it as a task with POST /cpm/scan/start",
        ));
    }
    Ok(())
}

fn body(bytes: &Bytes) -> Result<PatternParams, ApiError> {
    let sent: Value = json_body(bytes)?;
    no_universe(sent.get("universe").is_some())?;
    json_value(sent)
}

/// The synchronous forms of one mode: POST with a JSON body, and GET with
/// the same parameters in the query; both answered at once.
macro_rules! answered_now {
    ($mode:expr, $path:literal, $answered:literal, $answer:ident,
     $(#[doc = $post_doc:literal])* $post:ident, $(#[doc = $get_doc:literal])* $get:ident) => {
        $(#[doc = $post_doc])*
        #[utoipa::path(post, path = $path, tag = "analytics", request_body = PatternParams,
            responses((status = 200, description = $answered, body = $answer), AnalyticsErrors))]
        pub(crate) async fn $post(Tenant { state, .. }: Tenant, bytes: Bytes) -> Reply {
            answer_now(&state, body(&bytes)?, $mode).await
        }

        $(#[doc = $get_doc])*
        #[utoipa::path(get, path = $path, tag = "analytics", params(PatternParams),
            responses((status = 200, description = $answered, body = $answer), AnalyticsErrors))]
        pub(crate) async fn $get(Tenant { state, .. }: Tenant, raw: Params) -> Reply {
            answer_now(&state, query(raw).await?, $mode).await
        }
    };
}

answered_now!(
    Mode::Scan,
    "/cpm/scan",
    "`Found matching patterns!`, or code 407 without data when nothing matched",
    ScanAnswer,
    /// `POST /cpm/scan`: the matches of the template, answered at once.
    scan,
    /// `GET /cpm/scan`: the same with the parameters in the query.
    scan_query
);

answered_now!(
    Mode::Backtest,
    "/cpm/scan_with_backtest",
    "`Finish CPM!`, or code 407 without data when nothing matched",
    BacktestAnswer,
    /// `POST /cpm/scan_with_backtest`: the matches and the trades after them, answered at once.
    scan_with_backtest,
    /// `GET /cpm/scan_with_backtest`: the same with the parameters in the query.
    scan_with_backtest_query
);

/// The query's parameters; a universe is refused with where to send it.
pub(crate) async fn query(raw: Params) -> Result<PatternParams, ApiError> {
    no_universe(raw.get("universe").is_some())?;
    Query::<PatternParams>::from_params(raw).map(|q| q.0)
}

/// Checks the request as the worker will, then stores and queues it.
async fn start(t: Tenant, sent: Submission, mode: Mode) -> Reply {
    let Tenant { state, caller } = t;
    let params: CpmParams = match mode {
        Mode::Scan => json_value(sent.body.clone())?,
        Mode::Backtest => json_value::<PatternParams>(sent.body.clone())?.into(),
    };
    let prepared = cpm::prepare(state.market.as_ref(), &params, mode).await?;
    let (kind, what) = match mode {
        Mode::Scan => (TaskKind::CpmScan, "Pattern scan"),
        Mode::Backtest => (TaskKind::CpmBacktest, "Pattern backtest"),
    };
    let params = sent.body.clone();
    let submitted = sent.submit(&state, &caller, kind, params).await?;
    let mut message = format!("{what} submitted; poll /cpm/status/{{task_id}}");
    for w in &prepared.query.warnings {
        message.push_str(&format!(" (warning: {w})"));
    }
    Ok(crate::submit::accepted(&submitted, message))
}

/// A task submit of one mode: checked as the worker will check it, then
/// stored and queued; polled at the same status and report operations.
macro_rules! submitted_task {
    ($mode:expr, $path:literal, $request:ident, $(#[doc = $doc:literal])* $name:ident) => {
        $(#[doc = $doc])*
        #[utoipa::path(post, path = $path, tag = "analytics", request_body = $request,
            params(crate::openapi::IdempotencyKey),
            responses((status = 202, description = "Queued", body = SubmitResponse,
                    links(("status" = (operation_id = "cpm_status", parameters(("task_id" = "$response.body#/task_id")))),
                        ("report" = (operation_id = "cpm_report", parameters(("task_id" = "$response.body#/task_id")))))),
                crate::openapi::AnalyticsSubmitRefusals,
                AnalyticsErrors))]
        pub(crate) async fn $name(t: Tenant, sent: Submission) -> Reply {
            start(t, sent, $mode).await
        }
    };
}

submitted_task!(
    Mode::Scan,
    "/cpm/scan/start",
    CpmParams,
    /// `POST /cpm/scan/start`: a scan task (a universe search too).
    scan_start
);

submitted_task!(
    Mode::Backtest,
    "/cpm/backtest/start",
    PatternParams,
    /// `POST /cpm/backtest/start`: a backtest task.
    backtest_start
);
