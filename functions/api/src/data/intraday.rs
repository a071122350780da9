//! Intraday routes (4.5): thin handlers over `services::data::intraday`.

use super::routes::{body, days};
use super::schemas::*;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::error::DataError;
use crate::extract::Params;
use crate::openapi::DataErrors;
use crate::state::AppState;
use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use services::data::intraday;
use services::data::schemas::*;

/// Indicators with 30-minute series, keyed by chart name.
#[utoipa::path(get, path = "/getIntradaySymbols", tag = "data", responses((status = 200, description = "Indicators with 30-minute series, keyed by chart name", body = IntradaySymbols), DataErrors))]
pub(crate) async fn intraday_symbols(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let out = intraday::symbols(&*state.market, &caller.0).await?;
    Ok(body(&state, out))
}

/// Full 30-minute history, keys with time of day.
#[utoipa::path(get, path = "/getSymbolIntradayHistory/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full 30-minute history, keys with time of day", body = History), DataErrors))]
pub(crate) async fn intraday_history(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
) -> Result<Response, ApiError> {
    let out = intraday::full_history(&*state.market, &caller.0, &code).await?;
    Ok(body(&state, out))
}

/// The last `days` market days of 30-minute readings (13 a day).
#[utoipa::path(get, path = "/getSymbolIntradayLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` market days of 30-minute readings (13 a day)", body = History), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn intraday_limit_days(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let n = days(&params)?;
    let out = intraday::limit_days(&*state.market, &caller.0, &code, n).await?;
    Ok(body(&state, out))
}

/// Every 30-minute reading of the latest date.
#[utoipa::path(get, path = "/getTodayIntradayData", tag = "data", responses((status = 200, description = "Every 30-minute reading of the latest date", body = IntradayToday), DataErrors))]
pub(crate) async fn today_intraday(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let out = intraday::today(&*state.market, &caller.0).await?;
    Ok(body(&state, out))
}
