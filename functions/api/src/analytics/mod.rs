//! The analytics tools service (analytics-service.md) over HTTP: the use
//! cases of `services::analytics` in the minimal envelope `{code, data}` of
//! its section 2.1.

mod body;
pub mod company;
pub mod correlation;
pub mod cpm;
pub mod options;
pub mod reports;
pub mod scanner;
pub mod screens;
pub mod seasonality;
mod task_pages;
pub mod tasks;
mod views;

use crate::error::ApiError;
use crate::error::Reply;
use crate::state::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The analytics routes with their documentation.
pub fn routes() -> OpenApiRouter<AppState> {
    tasks::routes()
        .routes(routes!(seasonality::all_in_one))
        .routes(routes!(seasonality::predefined_holidays))
        .routes(routes!(seasonality::by_week))
        .routes(routes!(seasonality::by_month))
        .routes(routes!(seasonality::by_day_of_month))
        .routes(routes!(seasonality::by_day_of_year))
        .routes(routes!(seasonality::around_holiday))
        .routes(routes!(seasonality::around_specific_days))
        .routes(routes!(seasonality::by_day_of_single_month))
        .routes(routes!(seasonality::one_dollar_curve))
        // Unknown views answer in this service's envelope on any deployment.
        .route(
            "/seasonality/{*view}",
            get(
                |axum::extract::Path(view): axum::extract::Path<String>| async move {
                    ApiError::not_found(format!(
                        "no such seasonality endpoint '/seasonality/{view}'"
                    ))
                },
            ),
        )
        .routes(routes!(correlation::symbol_corr))
        .routes(routes!(correlation::asset_corr))
        .routes(routes!(correlation::pattern_corr))
        .routes(routes!(correlation::symbol_beta))
        .routes(routes!(task_pages::cpm_report))
        .routes(routes!(views::seasonality_view))
        .routes(routes!(views::correlation_view))
        .routes(routes!(views::pattern_view))
        .routes(routes!(task_pages::scanner_report))
        .routes(routes!(cpm::predefined_patterns))
        .routes(routes!(cpm::scan, cpm::scan_query))
        .routes(routes!(
            cpm::scan_with_backtest,
            cpm::scan_with_backtest_query
        ))
        .routes(routes!(cpm::scan_start))
        .routes(routes!(cpm::backtest_start))
        .routes(routes!(scanner::predefined_signals))
        .routes(routes!(scanner::single))
        .routes(routes!(scanner::latest_day_all))
        .routes(routes!(scanner::scanner_backtest_start))
        .routes(routes!(options::options))
        .routes(routes!(reports::report_types))
        .routes(routes!(reports::reports))
        .routes(routes!(company::market_pred))
        .routes(routes!(company::get_profile))
        .routes(routes!(company::get_analysis))
        .routes(routes!(company::get_earning))
        .routes(routes!(company::get_income))
        .routes(routes!(company::get_balance))
        .routes(routes!(company::get_cash))
        .routes(routes!(company::get_news))
        .routes(routes!(company::get_sec))
        .routes(routes!(company::get_holder))
        .routes(routes!(company::get_pred))
        .routes(routes!(screens::predefined_screens))
        .routes(routes!(screens::screen))
        .merge(crate::webhooks::alerts::routes())
}

/// `{code, data}`: 200 for seasonality, 211 for correlation and beta.
#[derive(Serialize, ToSchema)]
pub struct Envelope<T> {
    pub code: u16,
    pub data: T,
}

/// The standard envelope `{code, msg, data}` (scanner, screens, company data).
#[derive(Serialize, ToSchema)]
pub struct Standard<T> {
    pub code: u16,
    pub msg: String,
    pub data: T,
}

/// What an HTTP 200 of a correlation view carries: the answer (code 211) or,
/// when the data cannot support it, the error envelope with code 411. Both
/// are the served types; this union only says that either may come.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum OrInsufficient<T> {
    Answer(Envelope<T>),
    Insufficient(crate::error::AnalyticsError),
}

/// The success envelope, serialized at once.
fn envelope<T: Serialize>(code: u16, data: T) -> Reply {
    let body = serde_json::to_vec(&Envelope { code, data }).map_err(|e| {
        tracing::error!(error = %e, "response serialization");
        ApiError::internal()
    })?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Runs a computation and the serialization of its answer off the async
/// reactor: their cost grows with the symbols, years and window asked for.
async fn blocking<T: Serialize + Send + 'static>(
    code: u16,
    f: impl FnOnce() -> T + Send + 'static,
) -> Reply {
    tokio::task::spawn_blocking(move || envelope(code, f()))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "analytics computation failed");
            ApiError::internal()
        })?
}

/// [`blocking`] for an answer that is a table: as an Arrow stream when the
/// request asks for one (the envelope's code in its metadata), else JSON.
async fn blocking_table<T: Serialize + services::tables::Tabular + Send + 'static>(
    code: u16,
    headers: &axum::http::HeaderMap,
    f: impl FnOnce() -> T + Send + 'static,
) -> Reply {
    let arrow = crate::arrow::wanted(headers);
    tokio::task::spawn_blocking(move || {
        let answer = f();
        if arrow {
            crate::arrow::respond(&answer, &[("code", code.to_string())])
        } else {
            envelope(code, answer).map(crate::arrow::vary)
        }
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "analytics computation failed");
        ApiError::internal()
    })?
}

/// The error answers the analytics operations share.
pub struct AnalyticsErrors;

impl utoipa::IntoResponses for AnalyticsErrors {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        crate::openapi::error_responses(
            "AnalyticsError",
            &[
                ("400", "Invalid parameter; the message names it"),
                ("401", "Missing or wrong credentials"),
                ("403", "The plan does not include the analytics service"),
                ("404", "Unknown ticker, or no data in range"),
            ],
        )
    }
}
