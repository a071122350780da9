//! Data service endpoints: catalog, history, snapshots and bulk.

use super::access::{may_read, subscribed, user_selected};
use super::format::{push_key, push_num, push_str};
use super::schemas::*;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::error::DataError;
use crate::extract::Params;
use crate::openapi::DataErrors;
use crate::state::AppState;
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::NaiveDate;
use platform::PortError;
use platform::marketdata::{IndicatorMeta, IndicatorSeries};
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Full-history requests of trial accounts return only the last records.
pub const TRIAL_RECORDS: usize = 90;

/// The data service's routes with their documentation, relative to `/ws`.
pub fn routes() -> OpenApiRouter<AppState> {
    use super::{custom, intraday};
    OpenApiRouter::new()
        .routes(routes!(all_symbols))
        .routes(routes!(all_symbols_with_indexes))
        .routes(routes!(user_selected_symbols))
        .routes(routes!(user_selected_with_indexes))
        // The spec spells this one both ways; the first is documented.
        .route(
            "/getAllUserSelectedSymbolswithIndexes",
            get(user_selected_with_indexes),
        )
        .routes(routes!(model_data))
        .routes(routes!(model_with_indexes))
        .routes(routes!(group_symbols))
        .routes(routes!(symbol_data))
        .routes(routes!(symbol_sentiment))
        .routes(routes!(symbol_limit_days))
        .routes(routes!(symbol_sentiment_limit_days))
        .routes(routes!(today))
        .routes(routes!(today_indexes))
        .routes(routes!(symbol_for_date))
        .routes(routes!(all_for_date))
        .routes(routes!(bulk))
        .routes(routes!(intraday::intraday_symbols))
        .routes(routes!(intraday::intraday_history))
        .routes(routes!(intraday::intraday_limit_days))
        .routes(routes!(intraday::today_intraday))
        .routes(routes!(custom::user_indicators))
        .routes(routes!(custom::user_indicator_data))
}

/// A JSON body, or (legacy switch on) that JSON again as a JSON string.
pub(super) fn body(state: &AppState, json: String) -> Response {
    let text = if state.data_legacy_json {
        serde_json::Value::String(json).to_string()
    } else {
        json
    };
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// A catalog list, with market symbols for the `...withIndexes` forms.
fn catalog_list<'a>(items: impl Iterator<Item = &'a IndicatorMeta>, with_market: bool) -> String {
    let items: Vec<CatalogItem> = items
        .map(|m| CatalogItem {
            chart_name: &m.chart_name,
            url: &m.url,
            market_symbol: with_market.then_some(if m.market_symbol.is_empty() {
                "SPX"
            } else {
                m.market_symbol.as_str()
            }),
        })
        .collect();
    serde_json::to_string(&items).expect("catalog items serialize")
}

pub(super) async fn catalog(state: &AppState) -> Result<Arc<Vec<IndicatorMeta>>, ApiError> {
    state.market.indicator_catalog().await.map_err(|e| match e {
        PortError::NotFound(_) => {
            ApiError::new(503, "the indicator catalog is not available; retry shortly")
        }
        other => other.into(),
    })
}

/// The indicator of a path `{symbol}`, if the caller may read it.
pub(super) fn indicator<'a>(
    caller: &Caller,
    catalog: &'a [IndicatorMeta],
    code: &str,
) -> Result<&'a IndicatorMeta, ApiError> {
    let m = catalog
        .iter()
        .find(|m| m.url == code && !m.internal)
        .ok_or_else(|| ApiError::not_found(format!("symbol '{code}' not found")))?;
    if !may_read(&caller.0, m) {
        return Err(ApiError::new(
            405,
            format!(
                "not subscribed to '{code}': add it to your selections or upgrade the data plan"
            ),
        ));
    }
    Ok(m)
}

pub(super) fn days(params: &Params) -> Result<usize, ApiError> {
    match params.opt::<i64>("days", "a positive integer")? {
        Some(d) if d >= 1 => Ok(d as usize),
        Some(d) => Err(ApiError::bad_request(format!(
            "query parameter 'days' must be a positive integer, got {d}"
        ))),
        None => Err(ApiError::bad_request("query parameter 'days' is required")),
    }
}

/// `date` in exactly `YYYYMMDD` form, else 406.
fn date(params: &Params) -> Result<NaiveDate, ApiError> {
    let raw = params.get("date").unwrap_or("");
    let bad = || {
        ApiError::new(
            406,
            format!("query parameter 'date' must be YYYYMMDD (8 digits), got '{raw}'"),
        )
    };
    if raw.len() != 8 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    NaiveDate::parse_from_str(raw, "%Y%m%d").map_err(|_| bad())
}

pub(super) async fn series(state: &AppState, code: &str) -> Result<Arc<IndicatorSeries>, ApiError> {
    Ok(state.market.indicator_series(code).await?)
}

/// Index range of the last `n` records.
pub(super) fn last(n: usize, len: usize) -> std::ops::Range<usize> {
    len.saturating_sub(n)..len
}

/// `{key: {"close": x[, "sentiment": s][, "market_symbol": m]}}` for records `range`.
pub(super) fn history(
    s: &IndicatorSeries,
    range: std::ops::Range<usize>,
    sentiment: bool,
    market: Option<&str>,
) -> String {
    let mut out = String::with_capacity(range.len() * 64 + 2);
    out.push('{');
    for i in range {
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        push_key(&mut out, s.time[i]);
        out.push_str("\":{\"close\":");
        push_num(&mut out, s.close[i]);
        if sentiment {
            out.push_str(",\"sentiment\":");
            match s.sentiment[i] {
                Some(v) => push_num(&mut out, v),
                None => out.push_str("null"),
            }
        }
        if let Some(m) = market {
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, m);
        }
        out.push('}');
    }
    out.push('}');
    out
}

/// Seasonality-month records: `{key: {symbol, month, TotReturn, AvgReturn, std}}`,
/// the month's return with the average and sample deviation of that calendar
/// month's returns up to and including it.
fn seasonality_history(s: &IndicatorSeries, range: std::ops::Range<usize>, symbol: &str) -> String {
    use chrono::Datelike;
    let mut by_month: [Vec<f64>; 12] = Default::default();
    let mut out = String::from("{");
    for i in 0..range.end {
        let month = s.time[i].month();
        let seen = &mut by_month[month as usize - 1];
        seen.push(s.close[i]);
        if i < range.start {
            continue;
        }
        let avg = seen.iter().sum::<f64>() / seen.len() as f64;
        let std = engine::stats::std_dev(seen).unwrap_or(0.0);
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        push_key(&mut out, s.time[i]);
        out.push_str("\":{\"symbol\":");
        push_str(&mut out, symbol);
        out.push_str(&format!(",\"month\":\"{month:02}\",\"TotReturn\":"));
        push_num(&mut out, s.close[i]);
        out.push_str(",\"AvgReturn\":");
        push_num(&mut out, avg);
        out.push_str(",\"std\":");
        push_num(&mut out, std);
        out.push('}');
    }
    out.push('}');
    out
}

/// History records in the indicator's own shape.
fn records(
    m: &IndicatorMeta,
    s: &IndicatorSeries,
    range: std::ops::Range<usize>,
    sentiment: bool,
    market: Option<&str>,
) -> String {
    if m.subtype == "seasonality_month" {
        seasonality_history(s, range, &m.market_symbol)
    } else {
        history(s, range, sentiment, market)
    }
}

pub(super) fn full_range(caller: &Caller, len: usize) -> std::ops::Range<usize> {
    recent(caller, usize::MAX, len)
}

/// The last `n` of `len` records, never more than [`TRIAL_RECORDS`] for a
/// trial account: every path that returns history goes through here, so no
/// form of request (a large `days`, a custom indicator, bulk, intraday) gives a
/// trial more.
pub(super) fn recent(caller: &Caller, n: usize, len: usize) -> std::ops::Range<usize> {
    let n = if caller.0.plan.trial {
        n.min(TRIAL_RECORDS)
    } else {
        n
    };
    last(n, len)
}

/// All indicators except internal and relative-trend records.
#[utoipa::path(get, path = "/getAllSymbols", tag = "data", responses((status = 200, description = "All indicators except internal and relative-trend records", body = [CatalogItem]), DataErrors))]
pub(crate) async fn all_symbols(State(state): State<AppState>) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(
            c.iter().filter(|m| !m.internal && m.kind != "reltrend"),
            false,
        ),
    ))
}

/// The full catalog with each indicator's market symbol.
#[utoipa::path(get, path = "/getAllSymbolswithIndexes", tag = "data", responses((status = 200, description = "The full catalog with each indicator's market symbol", body = [CatalogItem]), DataErrors))]
pub(crate) async fn all_symbols_with_indexes(
    State(state): State<AppState>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(c.iter().filter(|m| !m.internal), true),
    ))
}

/// The account's selections plus its plan's base indicators.
#[utoipa::path(get, path = "/getAllUserSelectedSymbols", tag = "data", responses((status = 200, description = "The account's selections plus its plan's base indicators", body = [CatalogItem]), DataErrors))]
pub(crate) async fn user_selected_symbols(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(user_selected(&caller.0, &c).into_iter(), false),
    ))
}

/// The same with market symbols (also answered at getAllUserSelectedSymbolswithIndexes).
#[utoipa::path(get, path = "/getAllUserSelectedSymbolsWithIndexes", tag = "data", responses((status = 200, description = "The same with market symbols (also answered at getAllUserSelectedSymbolswithIndexes)", body = [CatalogItem]), DataErrors))]
pub(crate) async fn user_selected_with_indexes(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(user_selected(&caller.0, &c).into_iter(), true),
    ))
}

/// Subscribed model indicators.
#[utoipa::path(get, path = "/getModelData", tag = "data", responses((status = 200, description = "Subscribed model indicators", body = [CatalogItem]), DataErrors))]
pub(crate) async fn model_data(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(
            subscribed(&caller.0, &c)
                .into_iter()
                .filter(|m| m.subtype == "model"),
            false,
        ),
    ))
}

/// Subscribed model indicators with market symbols.
#[utoipa::path(get, path = "/getModelSymbolswithIndexes", tag = "data", responses((status = 200, description = "Subscribed model indicators with market symbols", body = [CatalogItem]), DataErrors))]
pub(crate) async fn model_with_indexes(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    Ok(body(
        &state,
        catalog_list(
            subscribed(&caller.0, &c)
                .into_iter()
                .filter(|m| m.subtype == "model"),
            true,
        ),
    ))
}

/// Subscribed indicators of a metadata group (404 unknown group).
#[utoipa::path(get, path = "/getGroupSymbols/{group}", tag = "data", params(("group" = String, Path, description = "Group name (any case)", example = "Core")), responses((status = 200, description = "Subscribed indicators of a metadata group (404 unknown group)", body = [CatalogItem]), DataErrors))]
pub(crate) async fn group_symbols(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(group): Path<String>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let in_group = |m: &IndicatorMeta| m.groups.iter().any(|g| g.eq_ignore_ascii_case(&group));
    if !c.iter().any(|m| !m.internal && in_group(m)) {
        return Err(ApiError::not_found(format!("group '{group}' not found")));
    }
    Ok(body(
        &state,
        catalog_list(
            subscribed(&caller.0, &c)
                .into_iter()
                .filter(|m| in_group(m)),
            false,
        ),
    ))
}

/// Full history keyed by YYYY-MM-DDT00:00:00.000 (trial: last 90 records).
#[utoipa::path(get, path = "/getSymbolData/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full history keyed by YYYY-MM-DDT00:00:00.000 (trial: last 90 records)", body = History), DataErrors))]
pub(crate) async fn symbol_data(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let m = indicator(&caller, &c, &code)?;
    let s = series(&state, &code).await?;
    Ok(body(
        &state,
        records(m, &s, full_range(&caller, s.time.len()), false, None),
    ))
}

/// Full history with sentiment.
#[utoipa::path(get, path = "/getSymbolSentimentData/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full history with sentiment", body = History), DataErrors))]
pub(crate) async fn symbol_sentiment(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
) -> Result<Response, ApiError> {
    let c = catalog(&state).await?;
    let m = indicator(&caller, &c, &code)?;
    let s = series(&state, &code).await?;
    Ok(body(
        &state,
        records(m, &s, full_range(&caller, s.time.len()), true, None),
    ))
}

/// The last `days` periods of the indicator's own frequency.
#[utoipa::path(get, path = "/getSymbolDataLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` periods of the indicator's own frequency", body = History), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn symbol_limit_days(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let n = days(&params)?;
    let c = catalog(&state).await?;
    let m = indicator(&caller, &c, &code)?;
    let s = series(&state, &code).await?;
    Ok(body(
        &state,
        records(m, &s, recent(&caller, n, s.time.len()), false, None),
    ))
}

/// The last `days` periods with sentiment and market symbol.
#[utoipa::path(get, path = "/getSymbolDataSentimentLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` periods with sentiment and market symbol", body = History), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn symbol_sentiment_limit_days(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let n = days(&params)?;
    let c = catalog(&state).await?;
    let m = indicator(&caller, &c, &code)?;
    let s = series(&state, &code).await?;
    Ok(body(
        &state,
        records(
            m,
            &s,
            recent(&caller, n, s.time.len()),
            true,
            Some(&m.market_symbol),
        ),
    ))
}

/// The latest reading of each subscribed indicator, keyed "0", "1", ...
async fn snapshot(
    state: &AppState,
    caller: &Caller,
    with_market: bool,
) -> Result<String, ApiError> {
    let c = catalog(state).await?;
    let mut out = String::from("{");
    for (n, m) in subscribed(&caller.0, &c).into_iter().enumerate() {
        let s = series(state, &m.url).await?;
        let Some(i) = s.time.len().checked_sub(1) else {
            continue;
        };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&format!("\"{n}\":{{\"name\":"));
        push_str(&mut out, &m.chart_name);
        out.push_str(",\"indicator\":");
        push_str(&mut out, &m.url);
        out.push_str(",\"last_close\":");
        push_num(&mut out, s.close[i]);
        out.push_str(",\"update_date\":\"");
        push_key(&mut out, s.time[i]);
        out.push_str("\",\"sentiment_value\":");
        push_str(
            &mut out,
            &s.sentiment[i].map(|v| format!("{v}")).unwrap_or_default(),
        );
        if with_market {
            out.push_str(",\"market_symbol\":");
            push_str(&mut out, &m.market_symbol);
        }
        out.push('}');
    }
    out.push('}');
    Ok(out)
}

/// The latest reading of each subscribed indicator, keyed "0", "1", ....
#[utoipa::path(get, path = "/getTodayData", tag = "data", responses((status = 200, description = "The latest reading of each subscribed indicator, keyed \"0\", \"1\", ...", body = Snapshot), DataErrors))]
pub(crate) async fn today(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    Ok(body(&state, snapshot(&state, &caller, false).await?))
}

/// The same with market symbols.
#[utoipa::path(get, path = "/getTodayDataIndexes", tag = "data", responses((status = 200, description = "The same with market symbols", body = Snapshot), DataErrors))]
pub(crate) async fn today_indexes(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    Ok(body(&state, snapshot(&state, &caller, true).await?))
}

fn on_date(s: &IndicatorSeries, d: NaiveDate) -> Option<usize> {
    let i = s.time.partition_point(|t| t.date() < d);
    (i < s.time.len() && s.time[i].date() == d).then_some(i)
}

/// The reading on one date (406 unless YYYYMMDD).
#[utoipa::path(get, path = "/getSymbolLimitDate/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), DateParam), responses((status = 200, description = "The reading on one date (empty when there is none)", body = History), (status = 406, description = "`date` is not a YYYYMMDD date", body = DataError), DataErrors))]
pub(crate) async fn symbol_for_date(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(code): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let d = date(&params)?;
    let c = catalog(&state).await?;
    let m = indicator(&caller, &c, &code)?;
    let s = series(&state, &code).await?;
    let range = on_date(&s, d).map(|i| i..i + 1).unwrap_or(0..0);
    Ok(body(&state, records(m, &s, range, false, None)))
}

/// Every subscribed indicator's reading on one date.
#[utoipa::path(get, path = "/getAllDataForDate", tag = "data", params(DateParam), responses((status = 200, description = "Every subscribed indicator's reading on one date", body = DateSnapshot), (status = 406, description = "`date` is not a YYYYMMDD date", body = DataError), DataErrors))]
pub(crate) async fn all_for_date(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Response, ApiError> {
    let d = date(&params)?;
    let c = catalog(&state).await?;
    let mut out = String::from("{");
    for m in subscribed(&caller.0, &c) {
        let s = series(&state, &m.url).await?;
        let Some(i) = on_date(&s, d) else { continue };
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.url);
        out.push_str(":{\"name\":");
        push_str(&mut out, &m.chart_name);
        out.push_str(",\"last_close\":");
        push_num(&mut out, s.close[i]);
        out.push_str(&format!(
            ",\"update_date\":\"{}\",\"sentiment_value\":",
            s.time[i].date().format("%Y-%m-%d")
        ));
        match s.sentiment[i] {
            Some(v) => push_num(&mut out, v),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push('}');
    Ok(body(&state, out))
}

/// Recent readings of every subscribed indicator (410 unless 1-90 days).
#[utoipa::path(get, path = "/getAllSymbolDataLimitDays", tag = "data", params(BulkDays), responses((status = 200, description = "Recent readings of every subscribed indicator", body = Bulk), (status = 400, description = "`days` is not an integer", body = DataError), (status = 410, description = "`days` is missing or not 1 to 90", body = DataError), DataErrors))]
pub(crate) async fn bulk(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Response, ApiError> {
    let n = match params.opt::<i64>("days", "an integer")? {
        Some(d) if (1..=90).contains(&d) => d as usize,
        other => {
            return Err(ApiError::new(
                410,
                format!(
                    "query parameter 'days' must be between 1 and 90, got {}",
                    other
                        .map(|d| d.to_string())
                        .unwrap_or_else(|| "nothing".into())
                ),
            ));
        }
    };
    let c = catalog(&state).await?;
    let mut out = String::from("{");
    for m in subscribed(&caller.0, &c) {
        let s = series(&state, &m.url).await?;
        if out.len() > 1 {
            out.push(',');
        }
        push_str(&mut out, &m.url);
        out.push_str(":[");
        for (k, i) in recent(&caller, n, s.time.len()).enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"date\":\"{}\",\"close\":",
                s.time[i].date().format("%Y-%m-%d")
            ));
            push_num(&mut out, s.close[i]);
            out.push('}');
        }
        out.push(']');
    }
    out.push('}');
    Ok(body(&state, out))
}
