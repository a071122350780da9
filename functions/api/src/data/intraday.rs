//! Intraday endpoints (4.5): 30-minute readings, 13 a market day.

use super::access::subscribed;
use super::format::{push_key, push_num, push_str};
use super::routes::{body, catalog, days, full_range, history, indicator, recent};
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
use platform::marketdata::{IndicatorMeta, IndicatorSeries};
use std::sync::Arc;

/// Indicators with 30-minute series, keyed by chart name.
#[utoipa::path(get, path = "/getIntradaySymbols", tag = "data", responses((status = 200, description = "Indicators with 30-minute series, keyed by chart name", body = IntradaySymbols), DataErrors))]
pub(crate) async fn intraday_symbols(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let mut out = String::from("{");
    for m in subscribed(&caller.0, &c).into_iter().filter(|m| m.intraday) {
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.chart_name);
        out.push_str(":{\"url\":");
        push_str(&mut out, &m.url);
        out.push_str(",\"market_symbol\":");
        push_str(&mut out, &m.market_symbol);
        out.push('}');
    }
    out.push('}');
    Ok(body(&state, out))
}

async fn intraday_of<'a>(
    state: &AppState,
    caller: &Caller,
    c: &'a [IndicatorMeta],
    code: &str,
) -> Result<(&'a IndicatorMeta, Arc<IndicatorSeries>), ApiError> {
    let m = indicator(caller, c, code)?;
    if !m.intraday {
        return Err(ApiError::not_found(format!(
            "symbol '{code}' has no intraday data"
        )));
    }
    Ok((m, state.market.indicator_intraday(code).await?))
}

/// Full 30-minute history, keys with time of day.
#[utoipa::path(get, path = "/getSymbolIntradayHistory/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full 30-minute history, keys with time of day", body = History), DataErrors))]
pub(crate) async fn intraday_history(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let (m, s) = intraday_of(&state, &caller, &c, &code).await?;
    Ok(body(
        &state,
        history(
            &s,
            full_range(&caller, s.time.len()),
            false,
            Some(&m.market_symbol),
        ),
    ))
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
    let c = catalog(&state).await?;
    let (m, s) = intraday_of(&state, &caller, &c, &code).await?;
    // The last n market days present (about 13 records each).
    let mut start = s.time.len();
    let mut seen = 0;
    while start > 0 {
        let day = s.time[start - 1].date();
        if start == s.time.len() || s.time[start].date() != day {
            seen += 1;
            if seen > n {
                break;
            }
        }
        start -= 1;
    }
    let start = start.max(recent(&caller, usize::MAX, s.time.len()).start);
    Ok(body(
        &state,
        history(&s, start..s.time.len(), false, Some(&m.market_symbol)),
    ))
}

/// Every 30-minute reading of the latest date.
#[utoipa::path(get, path = "/getTodayIntradayData", tag = "data", responses((status = 200, description = "Every 30-minute reading of the latest date", body = IntradayToday), DataErrors))]
pub(crate) async fn today_intraday(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let mut all = Vec::new();
    for m in subscribed(&caller.0, &c).into_iter().filter(|m| m.intraday) {
        all.push((m, state.market.indicator_intraday(&m.url).await?));
    }
    let latest = all
        .iter()
        .filter_map(|(_, s)| s.time.last().map(|t| t.date()))
        .max();
    let mut out = String::from("{");
    let mut n = 0;
    for (m, s) in &all {
        for i in 0..s.time.len() {
            if Some(s.time[i].date()) != latest {
                continue;
            }
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&format!("\"{n}\":{{\"datetime\":\""));
            push_key(&mut out, s.time[i]);
            out.push_str("\",\"close\":");
            push_num(&mut out, s.close[i]);
            out.push_str(",\"symbol\":");
            push_str(&mut out, &m.url);
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, &m.market_symbol);
            out.push('}');
            n += 1;
        }
    }
    out.push('}');
    Ok(body(&state, out))
}
