//! Backtest service endpoints (section 4).

use crate::auth::Caller;
use crate::compression::{Cached, Precompressed};
use crate::error::ApiError;
use crate::extract::{Params, json_body};
use crate::openapi::{IndicatorListItem, IndicatorMetadata, MetadataByCode};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use platform::marketdata::IndicatorMeta;
use platform::tasks::{NewTask, TaskKind};
use serde_json::{Value, json};
use services::backtest::answers::ValidateResponse;
use services::backtest::encode::validate_response;
use services::backtest::prepare::prepare;
use std::sync::{Arc, Mutex};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start_backtest))
        .routes(routes!(validate))
        .routes(routes!(indicator_list))
        .routes(routes!(indicator_metadata))
        .routes(routes!(super::batch::submit_batch))
        .routes(routes!(super::batch::batch_status))
        .routes(routes!(super::batch::batch_results))
        .routes(routes!(super::batch::batches))
        .routes(routes!(super::report::backtest_report))
        .routes(routes!(super::report::batch_report))
}

/// Endpoints of this service that need no credentials.
pub fn public_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(tutorial))
        .merge(crate::report::asset_routes())
}

/// Submit a strategy: a task is created and queued.
#[utoipa::path(post, path = "/backtest/start_backtest", tag = "backtest", request_body = services::backtest::schema::StrategyParams,
    params(("Idempotency-Key" = Option<String>, Header, description = "1-255 visible ASCII characters; the same key from the same account within 24 h answers with the task it first created (header Idempotent-Replayed: true)", pattern = "^[!-~]{1,255}$")),
    responses((status = 202, description = "Queued", body = crate::openapi::SubmitResponse,
            links(("status" = (operation_id = "backtest_status", parameters(("task_id" = "$response.body#/task_id")))),
                ("report" = (operation_id = "backtest_report", parameters(("task_id" = "$response.body#/task_id")))))),
        (status = 400, description = "Missing fields or invalid strategy; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 422, description = "The Idempotency-Key was used for a different request", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 403, description = "The plan does not include the backtest service", body = crate::openapi::ErrorDetail),
        (status = 500, description = "The message broker refused the task (it is marked FAILED)", body = crate::openapi::ErrorDetail),
        (status = 503, description = "The task store is unavailable; nothing was queued", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn start_backtest(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let key = crate::submit::idempotency_key(&headers)?;
    let body: Value = json_body(&body)?;
    let prepared = prepare(state.market.as_ref(), &body).await?;
    let mut params = prepared.parsed.user_supplied.clone();
    if let Some(rows) = &prepared.params().csv {
        params["csv_data"] = services::backtest::csv::csv_rows_json(rows);
    }
    let submitted = crate::submit::submit(
        &state,
        &caller.0,
        NewTask {
            owner: caller.0.email.clone(),
            kind: TaskKind::StrategyBacktest,
            params,
        },
        key.as_deref(),
    )
    .await?;
    Ok(crate::submit::accepted(
        &submitted,
        "Backtest task submitted; poll /backtest/status/{task_id}".into(),
    ))
}

/// Check a strategy: the merged parameters and encoded signals, no task.
#[utoipa::path(post, path = "/backtest/validate", tag = "backtest", request_body = services::backtest::schema::StrategyParams,
    responses((status = 200, description = "Valid", body = crate::openapi::ValidateResponse),
        (status = 400, description = "Invalid; the message names the field", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn validate(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<ValidateResponse>, ApiError> {
    let body: Value = json_body(&body)?;
    let prepared = prepare(state.market.as_ref(), &body).await?;
    Ok(Json(validate_response(&prepared)))
}

/// The catalog prepared for listing: each public entry's JSON written once,
/// with lower-cased names for matching.
struct Index {
    catalog: Arc<Vec<IndicatorMeta>>,
    entries: Vec<(String, usize, String)>,
}

fn index(catalog: Arc<Vec<IndicatorMeta>>) -> Arc<Index> {
    static CACHE: Mutex<Option<Arc<Index>>> = Mutex::new(None);
    let mut cache = CACHE.lock().expect("index lock");
    if let Some(i) = cache.as_ref()
        && Arc::ptr_eq(&i.catalog, &catalog)
    {
        return i.clone();
    }
    let entries = catalog
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.internal)
        .map(|(i, m)| {
            let item = IndicatorListItem {
                chart_name: m.chart_name.clone(),
                url: m.url.clone(),
                market_symbol: m.market_symbol.clone(),
                kind: m.kind.clone(),
                updated: m.updated.clone(),
            };
            let json = serde_json::to_string(&item).expect("list items serialize");
            (m.chart_name.to_lowercase(), i, json)
        })
        .collect();
    let built = Arc::new(Index { catalog, entries });
    *cache = Some(built.clone());
    built
}

const TYPES: [&str; 4] = ["optix", "trend", "reltrend", "other"];

/// Indicators that can be used as Sentiment signals; filters combine.
#[utoipa::path(get, path = "/backtest/indicators/list", tag = "backtest",
    params(("q" = Option<String>, Query, description = "Case-insensitive part of the name"),
        ("type" = Option<String>, Query, description = "optix, trend, reltrend or other (any case)", pattern = "^([Oo][Pp][Tt][Ii][Xx]|[Tt][Rr][Ee][Nn][Dd]|[Rr][Ee][Ll][Tt][Rr][Ee][Nn][Dd]|[Oo][Tt][Hh][Ee][Rr])$"),
        ("symbol" = Option<String>, Query, description = "Market symbol")),
    responses((status = 200, description = "Matching indicators", body = Vec<crate::openapi::IndicatorListItem>),
        (status = 400, description = "Unknown type", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn indicator_list(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    params: Params,
) -> Result<Response, ApiError> {
    let q = params.get("q").map(str::to_lowercase);
    let kind = params.get("type").map(str::to_lowercase);
    if let Some(k) = &kind
        && !TYPES.contains(&k.as_str())
    {
        return Err(ApiError::bad_request(format!(
            "query parameter 'type': '{k}' is not optix, trend, reltrend or other"
        )));
    }
    let symbol = params.get("symbol").map(str::to_uppercase);
    let idx = index(state.market.indicator_catalog().await?);
    if q.is_none() && kind.is_none() && symbol.is_none() {
        // The whole list is the same for everyone: made and compressed once.
        static WHOLE: Cached<Index, Precompressed> = Cached::new();
        let whole = WHOLE
            .get_or(idx, |idx| {
                Precompressed::new("application/json", list(idx, None, None, None))
            })
            .await;
        return Ok(whole.respond(&headers));
    }
    let body = list(&idx, q.as_deref(), kind.as_deref(), symbol.as_deref());
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The JSON array of the entries that pass the filters (lower-case `q` and
/// `kind`, upper-case `symbol`).
fn list(idx: &Index, q: Option<&str>, kind: Option<&str>, symbol: Option<&str>) -> String {
    let mut body = String::with_capacity(idx.entries.len() * 120);
    body.push('[');
    for (name, i, item) in &idx.entries {
        let m = &idx.catalog[*i];
        if q.is_some_and(|q| !name.contains(q))
            || kind.is_some_and(|k| m.kind != k)
            || symbol.is_some_and(|s| !m.market_symbol.eq_ignore_ascii_case(s))
        {
            continue;
        }
        if body.len() > 1 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push(']');
    body
}

/// Metadata of one indicator, keyed by its code.
#[utoipa::path(get, path = "/backtest/indicators/metadata", tag = "backtest",
    params(("indicator" = String, Query, description = "The indicator's url code", example = "SPX_OPTIX", min_length = 1, pattern = "\\S")),
    responses((status = 200, description = "Metadata", body = crate::openapi::MetadataByCode),
        (status = 400, description = "`indicator` missing", body = crate::openapi::ErrorDetail),
        (status = 401, description = "Missing or invalid credentials", body = crate::openapi::ErrorDetail),
        (status = 404, description = "Unknown indicator", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn indicator_metadata(
    State(state): State<AppState>,
    params: Params,
) -> Result<Json<MetadataByCode>, ApiError> {
    let code = params.required("indicator")?;
    let catalog = state.market.indicator_catalog().await?;
    let m = catalog
        .iter()
        .find(|m| m.url == code && !m.internal)
        .ok_or_else(|| ApiError::not_found(format!("indicator '{code}' not found")))?;
    let metadata = IndicatorMetadata {
        sentiment: m.sentiment.clone(),
        description: m.description.clone(),
        opt_extreme: m.opt_extreme,
        pess_extreme: m.pess_extreme,
        contrary: if m.contrary { "1.0" } else { "0" }.into(),
        premium: if m.premium { "1" } else { "0" }.into(),
        chart_type: m.chart_type.clone(),
        updated: m.updated.clone(),
    };
    Ok(Json(MetadataByCode([(m.url.clone(), metadata)].into())))
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
