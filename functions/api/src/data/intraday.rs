//! Intraday routes (4.5): thin handlers over `services::data::intraday`.

use super::routes::{body, days};
use super::schemas::*;
use crate::auth::Tenant;
use crate::error::DataError;
use crate::error::Reply;
use crate::extract::Params;
use crate::openapi::DataErrors;
use axum::extract::Path;
use services::data::intraday;
use services::data::schemas::*;

/// Indicators with 30-minute series, keyed by chart name.
#[utoipa::path(get, path = "/getIntradaySymbols", tag = "data", responses((status = 200, description = "Indicators with 30-minute series, keyed by chart name", body = IntradaySymbols), DataErrors))]
pub(crate) async fn intraday_symbols(t: Tenant) -> Reply {
    let out = intraday::symbols(&*t.state.market, &t.caller.account).await?;
    Ok(body(&t.state, out))
}

/// Full 30-minute history, keys with time of day.
#[utoipa::path(get, path = "/getSymbolIntradayHistory/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full 30-minute history, keys with time of day", body = History), DataErrors))]
pub(crate) async fn intraday_history(t: Tenant, Path(code): Path<String>) -> Reply {
    let out = intraday::full_history(&*t.state.market, &t.caller.account, &code).await?;
    Ok(body(&t.state, out))
}

/// The last `days` market days of 30-minute readings (13 a day).
#[utoipa::path(get, path = "/getSymbolIntradayLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` market days of 30-minute readings (13 a day)", body = History), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn intraday_limit_days(
    t: Tenant,
    Path(code): Path<String>,
    params: Params,
) -> Reply {
    let n = days(&params)?;
    let out = intraday::limit_days(&*t.state.market, &t.caller.account, &code, n).await?;
    Ok(body(&t.state, out))
}

/// Every 30-minute reading of the latest date.
#[utoipa::path(get, path = "/getTodayIntradayData", tag = "data", responses((status = 200, description = "Every 30-minute reading of the latest date", body = IntradayToday), DataErrors))]
pub(crate) async fn today_intraday(t: Tenant) -> Reply {
    let out = intraday::today(&*t.state.market, &t.caller.account).await?;
    Ok(body(&t.state, out))
}
