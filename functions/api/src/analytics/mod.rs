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
use crate::scopes::scoped;
use crate::state::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;

/// The analytics routes with their documentation.
pub fn routes() -> OpenApiRouter<AppState> {
    tasks::routes()
        .routes(scoped!(Read: seasonality::all_in_one))
        .routes(scoped!(Read: seasonality::predefined_holidays))
        .routes(scoped!(Read: seasonality::by_week))
        .routes(scoped!(Read: seasonality::by_month))
        .routes(scoped!(Read: seasonality::by_day_of_month))
        .routes(scoped!(Read: seasonality::by_day_of_year))
        .routes(scoped!(Read: seasonality::around_holiday))
        .routes(scoped!(Read: seasonality::around_specific_days))
        .routes(scoped!(Read: seasonality::by_day_of_single_month))
        .routes(scoped!(Read: seasonality::one_dollar_curve))
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
        .routes(scoped!(Read: correlation::symbol_corr))
        .routes(scoped!(Read: correlation::asset_corr))
        .routes(scoped!(Read: correlation::pattern_corr))
        .routes(scoped!(Read: correlation::symbol_beta))
        .routes(scoped!(Read: task_pages::cpm_report))
        .routes(scoped!(Read: views::seasonality_view))
        .routes(scoped!(Read: views::correlation_view))
        .routes(scoped!(Read: views::pattern_view))
        .routes(scoped!(Read: task_pages::scanner_report))
        .routes(scoped!(Read: cpm::predefined_patterns))
        .routes(scoped!(Read: cpm::scan, cpm::scan_query))
        .routes(scoped!(Read:
            cpm::scan_with_backtest,
            cpm::scan_with_backtest_query
        ))
        .routes(scoped!(Submit: cpm::scan_start))
        .routes(scoped!(Submit: cpm::backtest_start))
        .routes(scoped!(Read: scanner::predefined_signals))
        .routes(scoped!(Read: scanner::single))
        .routes(scoped!(Read: scanner::latest_day_all))
        .routes(scoped!(Submit: scanner::scanner_backtest_start))
        .routes(scoped!(Read: options::options))
        .routes(scoped!(Read: reports::report_types))
        .routes(scoped!(Read: reports::reports))
        .routes(scoped!(Read: company::market_pred))
        .routes(scoped!(Read: company::get_profile))
        .routes(scoped!(Read: company::get_analysis))
        .routes(scoped!(Read: company::get_earning))
        .routes(scoped!(Read: company::get_income))
        .routes(scoped!(Read: company::get_balance))
        .routes(scoped!(Read: company::get_cash))
        .routes(scoped!(Read: company::get_news))
        .routes(scoped!(Read: company::get_sec))
        .routes(scoped!(Read: company::get_holder))
        .routes(scoped!(Read: company::get_pred))
        .routes(scoped!(Read: screens::predefined_screens))
        .routes(scoped!(Read: screens::screen))
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

/// Runs a computation and the serialization of its answer on the compute
/// pool, in the caller's place there (metered as its kind of compute):
/// their cost grows with the symbols, years and window asked for.
async fn blocking<T: Serialize + Send + 'static>(
    place: crate::compute::Admitted<'_>,
    code: u16,
    f: impl FnOnce() -> services::Result<T> + Send + 'static,
) -> Reply {
    place.run(move |_| envelope(code, f()?)).await?
}

/// [`blocking`] for an answer that is a table: as an Arrow stream when the
/// request asks for one (the envelope's code in its metadata), else JSON.
async fn blocking_table<T: Serialize + services::tables::Tabular + Send + 'static>(
    place: crate::compute::Admitted<'_>,
    code: u16,
    headers: &axum::http::HeaderMap,
    f: impl FnOnce() -> services::Result<T> + Send + 'static,
) -> Reply {
    let arrow = crate::arrow::wanted(headers);
    place
        .run(move |_| {
            let answer = f()?;
            if arrow {
                crate::arrow::respond(&answer, &[("code", code.to_string())])
            } else {
                envelope(code, answer).map(crate::arrow::vary)
            }
        })
        .await?
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
