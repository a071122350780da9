//! Backtest service endpoints (section 4).

use super::strategy_body::StrategyBody;
use crate::auth::Tenant;
use crate::compression::{Precompressed, memoized};
use crate::error::ApiError;
use crate::error::Reply;
use crate::extract::Params;
use crate::openapi::MetadataByCode;
use crate::routes::schema_names::documented;
use crate::scopes::scoped;
use crate::state::AppState;
use crate::submit::submit;
use axum::Json;
use axum::http::header;
use axum::response::IntoResponse;
use platform::tasks::TaskKind;
use serde_json::{Value, json};
use services::backtest::UPLOAD_FIELD;
use services::backtest::answers::ValidateResponse;
use services::backtest::encode::validate_response;
use services::backtest::indicators::{self, ListFilter, TYPES, index, list};
use services::backtest::prepare::prepare_with;
use utoipa_axum::router::OpenApiRouter;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(scoped!(Submit: start_backtest))
        .routes(scoped!(Read: validate))
        .routes(scoped!(Read: indicator_list))
        .routes(scoped!(Read: indicator_metadata))
        .routes(scoped!(Submit: super::batch::submit_batch))
        .routes(scoped!(Read: super::batch::batch_status))
        .routes(scoped!(Read: super::batch::batch_results))
        .routes(scoped!(Read: super::batch::batch_rows))
        .routes(scoped!(Read: super::batch::batches))
        .routes(scoped!(Read: super::report::backtest_report))
        .routes(scoped!(Read: super::report::backtest_chart))
        .routes(scoped!(Read: super::exports::backtest_trades))
        .routes(scoped!(Read: super::exports::backtest_equity))
        .routes(scoped!(Read: super::report::batch_report))
        .routes(scoped!(Read: super::report::batch_walk_forward))
        .routes(scoped!(Read: super::monte_carlo::backtest_monte_carlo))
        .routes(scoped!(Read: super::monte_carlo::batch_monte_carlo))
}

/// Endpoints of this service that need no credentials.
pub fn public_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(documented!(tutorial))
        .merge(crate::report::asset_routes())
}

/// Submit a strategy: a task is created and queued.
#[utoipa::path(post, path = "/backtest/start_backtest", tag = "backtest", request_body = services::backtest::request::Strategy,
    params(crate::openapi::IdempotencyKey, crate::openapi::PreferWait),
    responses((status = 200, description = "Sent with `Prefer: wait=N`, the task ended within N seconds: its record, as `GET /backtest/status/{task_id}` answers it (`Preference-Applied: wait=N`)", body = super::tasks::TaskRecord),
        (status = 202, description = "Queued (and, with `Prefer: wait=N`, not ended within N seconds)", body = crate::openapi::SubmitResponse,
            links(("status" = (operation_id = "backtest_status", parameters(("task_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "backtest_report", parameters(("task_id" = "$response.body#/task_id")))),
                ("chart" = (operation_id = "backtest_chart", parameters(("task_id" = "$response.body#/task_id")))),
                ("trades" = (operation_id = "backtest_trades", parameters(("task_id" = "$response.body#/task_id")))),
                ("equity" = (operation_id = "backtest_equity", parameters(("task_id" = "$response.body#/task_id")))),
                ("monte_carlo" = (operation_id = "backtest_monte_carlo", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 400, description = "Missing fields or invalid strategy; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 404, description = "The symbol or benchmark has no data; `field` names it", body = crate::openapi::ErrorDetail),
        crate::openapi::BacktestSubmitRefusals,
        crate::openapi::BacktestAccess,
        (status = 503, description = "The task store is unavailable; nothing was queued", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn start_backtest(
    Tenant { state, caller }: Tenant,
    headers: axum::http::HeaderMap,
    mut sent: StrategyBody,
) -> Reply {
    let key = crate::submit::idempotency_key(&headers)?;
    let upload = sent.upload()?;
    let prepared = prepare_with(state.market.as_ref(), &sent.body, upload).await?;
    let mut params = sent.body;
    if let Some(upload) = prepared.params().csv.clone() {
        // Kept once, as columns: the task names it, status reads stay small.
        let stored = state.uploads.put(&caller.owner(), upload.clone()).await?;
        if let Some(o) = params.as_object_mut() {
            o.remove("csv_data");
            o.insert(
                UPLOAD_FIELD.into(),
                services::backtest::csv::summary(&upload, &stored.digest, stored.bytes),
            );
        }
    }
    let kind = TaskKind::StrategyBacktest;
    let submitted = submit(&state, &caller, key.as_deref(), kind, params).await?;
    if let Some(wait) = crate::submit::preferred_wait(&headers)
        && let Some(t) =
            crate::tasks::ended_within(&state, &caller, submitted.task.id, &[kind], wait).await?
    {
        let record = super::tasks::status_record(&t);
        return Ok(crate::submit::finished(&submitted, wait, record));
    }
    Ok(crate::submit::accepted(
        &submitted,
        "Backtest task submitted; poll /backtest/status/{task_id}".into(),
    ))
}

/// Check a strategy: the merged parameters and encoded signals, no task.
#[utoipa::path(post, path = "/backtest/validate", tag = "backtest", request_body = services::backtest::request::Strategy,
    responses((status = 200, description = "Valid", body = crate::openapi::ValidateResponse),
        (status = 400, description = "Invalid; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 404, description = "The symbol or benchmark has no data; `field` names it", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn validate(
    Tenant { state, .. }: Tenant,
    mut sent: StrategyBody,
) -> Result<Json<ValidateResponse>, ApiError> {
    let upload = sent.upload()?;
    let prepared = prepare_with(state.market.as_ref(), &sent.body, upload).await?;
    Ok(Json(validate_response(&prepared)))
}

/// Indicators that can be used as Sentiment signals; filters combine.
#[utoipa::path(get, path = "/backtest/indicators/list", tag = "backtest",
    params(("q" = Option<String>, Query, description = "Case-insensitive part of the name"),
        ("type" = Option<String>, Query, description = "optix, trend, reltrend or other (any case)", pattern = "^([Oo][Pp][Tt][Ii][Xx]|[Tt][Rr][Ee][Nn][Dd]|[Rr][Ee][Ll][Tt][Rr][Ee][Nn][Dd]|[Oo][Tt][Hh][Ee][Rr])$"),
        ("symbol" = Option<String>, Query, description = "Market symbol")),
    responses((status = 200, description = "Matching indicators", body = Vec<crate::openapi::IndicatorListItem>),
        (status = 400, description = "Unknown type", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn indicator_list(
    Tenant { state, .. }: Tenant,
    headers: axum::http::HeaderMap,
    params: Params,
) -> Reply {
    let filter = ListFilter {
        q: params.get("q").map(str::to_lowercase),
        kind: params.get("type").map(str::to_lowercase),
        symbol: params.get("symbol").map(str::to_uppercase),
    };
    if let Some(k) = &filter.kind
        && !TYPES.contains(&k.as_str())
    {
        return Err(ApiError::field(
            "type",
            format!("'{k}' is not optix, trend, reltrend or other"),
        ));
    }
    let idx = index(state.market.memo(), state.market.indicator_catalog().await?);
    if filter.is_empty() {
        // The whole list is the same for everyone: made and compressed once.
        let whole = memoized(
            state.market.memo(),
            "indicator list, precompressed",
            idx,
            |idx| Precompressed::new("application/json", list(idx, &ListFilter::default())),
            Precompressed::bytes,
        )
        .await;
        return Ok(whole.respond(&headers));
    }
    let body = list(&idx, &filter);
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Metadata of one indicator, keyed by its code.
#[utoipa::path(get, path = "/backtest/indicators/metadata", tag = "backtest",
    params(("indicator" = String, Query, description = "The indicator's url code", example = "SPX_OPTIX", min_length = 1, pattern = "\\S")),
    responses((status = 200, description = "Metadata", body = crate::openapi::MetadataByCode),
        (status = 400, description = "`indicator` missing", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown indicator", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn indicator_metadata(
    Tenant { state, .. }: Tenant,
    params: Params,
) -> Result<Json<MetadataByCode>, ApiError> {
    let code = params.required("indicator")?;
    let catalog = state.market.indicator_catalog().await?;
    Ok(Json(indicators::metadata(&catalog, code)?))
}

/// A worked example a new user can paste.
#[utoipa::path(get, path = "/backtest/tutorial", tag = "public", security(()),
    responses((status = 200, description = "Steps, curl commands and a strategy", body = Object)))]
pub(crate) async fn tutorial() -> Json<Value> {
    let strategy = json!({
        "symbol": "SPX",
        "name": "Buy pessimism, sell optimism",
        "frequency": "Daily",
        "start_date": "2005-01-01",
        "risk_control": "-8//63",
        "entry": {
            "rule_type": "SingleCondition",
            "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"comparison_type": "SV", "type_name": "CrossBelow", "comparison_value": "30"}}
        },
        "exit": {
            "rule_type": "SingleCondition",
            "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"comparison_type": "SV", "type_name": "CrossAbove", "comparison_value": "70"}}
        }
    });
    Json(json!({
        "title": "Your first backtest",
        "steps": [
            {"step": 1, "what": "Check the strategy and see the defaults the service fills in", "request": "POST /backtest/validate", "curl": "curl -u EMAIL:PASSWORD -H 'Content-Type: application/json' -d @strategy.json http://127.0.0.1:8080/backtest/validate"},
            {"step": 2, "what": "Submit it; the answer carries a task_id", "request": "POST /backtest/start_backtest", "curl": "curl -u EMAIL:PASSWORD -H 'Content-Type: application/json' -d @strategy.json http://127.0.0.1:8080/backtest/start_backtest"},
            {"step": 3, "what": "Poll until status is SUCCESS, then read result", "request": "GET /backtest/status/{task_id}", "curl": "curl -u EMAIL:PASSWORD http://127.0.0.1:8080/backtest/status/TASK_ID"},
            {"step": 4, "what": "Find other signals", "request": "GET /backtest/indicators/list?q=optix&type=optix", "curl": "curl -u EMAIL:PASSWORD 'http://127.0.0.1:8080/backtest/indicators/list?q=optix'"}
        ],
        "strategy": strategy,
        "notes": [
            "Only symbol, entry and exit are required; validate lists every default it applied.",
            "risk_control is stop-loss/take-profit/max-holding-bars: '-8//63' exits on an 8% adverse move or after 63 bars; '//' disables risk control.",
            "Signals are detected by name: catalog indicators (Sentiment), technical indicators such as 'Relative Strength Index' (Technical), or 'Symbol Close' (Symbol)."
        ]
    }))
}
