//! Data service endpoints: catalog, history, snapshots and bulk.

use super::schemas::*;
use crate::auth::Tenant;
use crate::compression::{Precompressed, memoized};
use crate::error::ApiError;
use crate::error::DataError;
use crate::error::Reply;
use crate::extract::Params;
use crate::openapi::DataErrors;
use crate::scopes::scoped;
use crate::state::AppState;
use axum::extract::Path;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::NaiveDate;
use platform::keys::Scope;
use platform::marketdata::IndicatorMeta;
use services::data::history::{Extras, Span, indicator_history, snapshot};
use services::data::schemas::*;
use services::data::{self, CatalogItem, Listing, catalog_list};
use utoipa_axum::router::OpenApiRouter;

/// The data service's routes with their documentation, relative to `/ws`.
pub fn routes() -> OpenApiRouter<AppState> {
    use super::{custom, intraday, prices};
    OpenApiRouter::new()
        .routes(scoped!(Read: all_symbols))
        .routes(scoped!(Read: all_symbols_with_indexes))
        .routes(scoped!(Read: user_selected_symbols))
        .routes(scoped!(Read: user_selected_with_indexes))
        // The spec spells this one both ways; the first is documented.
        .route(
            "/getAllUserSelectedSymbolswithIndexes",
            crate::scopes::checked(Scope::Read, get(user_selected_with_indexes)),
        )
        .routes(scoped!(Read: model_data))
        .routes(scoped!(Read: model_with_indexes))
        .routes(scoped!(Read: group_symbols))
        .routes(scoped!(Read: symbol_data))
        .routes(scoped!(Read: symbol_sentiment))
        .routes(scoped!(Read: symbol_limit_days))
        .routes(scoped!(Read: symbol_sentiment_limit_days))
        .routes(scoped!(Read: today))
        .routes(scoped!(Read: today_indexes))
        .routes(scoped!(Read: symbol_for_date))
        .routes(scoped!(Read: all_for_date))
        .routes(scoped!(Read: bulk))
        .routes(scoped!(Read: intraday::intraday_symbols))
        .routes(scoped!(Read: intraday::intraday_history))
        .routes(scoped!(Read: intraday::intraday_limit_days))
        .routes(scoped!(Read: intraday::today_intraday))
        .routes(scoped!(Read: custom::user_indicators))
        .routes(scoped!(Read: custom::user_indicator_data))
        .routes(scoped!(Read: prices::prices))
}

/// A JSON body, or (legacy switch on) that JSON again as a JSON string.
/// With metering on, the answer carries its rows and bytes for the auth
/// layer to count.
pub(super) fn body(state: &AppState, json: String) -> Response {
    let rows = state
        .metering
        .is_some()
        .then(|| crate::rows::json_rows(json.as_bytes()));
    let text = legacy(state, json);
    let bytes = text.len() as u64;
    let response = ([(header::CONTENT_TYPE, "application/json")], text).into_response();
    with_volume(response, rows, bytes)
}

fn legacy(state: &AppState, json: String) -> String {
    if state.data_legacy_json {
        serde_json::Value::String(json).to_string()
    } else {
        json
    }
}

pub(super) fn with_volume(mut response: Response, rows: Option<u64>, bytes: u64) -> Response {
    if let Some(rows) = rows {
        response
            .extensions_mut()
            .insert(crate::rows::DataVolume { rows, bytes });
    }
    response
}

/// An answer over every indicator an account reads (a snapshot, a date's
/// readings, the bulk form): the same for every account reading the same
/// indicators, several MB at spec scale and tens of milliseconds to write,
/// so they are kept in the market data store's memo (within its byte
/// budget) until the catalog is replaced.
async fn kept_answer(
    state: &AppState,
    key: String,
    make: impl std::future::Future<Output = services::Result<String>>,
) -> Reply {
    let catalog = data::catalog(&*state.market).await?;
    let key = format!("indicator answer {key}, legacy {}", state.data_legacy_json);
    let memo = state.market.memo();
    let answer: std::sync::Arc<(bytes::Bytes, u64)> = match memo.get(&key, &catalog) {
        Some(a) => a,
        None => {
            let json = make.await?;
            let rows = crate::rows::json_rows(json.as_bytes());
            let a = std::sync::Arc::new((bytes::Bytes::from(legacy(state, json)), rows));
            memo.put(&key, &catalog, a.clone(), a.0.len());
            a
        }
    };
    let response = (
        [(header::CONTENT_TYPE, "application/json")],
        answer.0.clone(),
    )
        .into_response();
    Ok(with_volume(
        response,
        state.metering.is_some().then_some(answer.1),
        answer.0.len() as u64,
    ))
}

/// A catalog answer: the same for everyone until the catalog is reloaded,
/// so made and compressed once (with its row count for metering).
type CatalogAnswer = (Precompressed, u64);

async fn catalog_answer(
    state: &AppState,
    headers: &HeaderMap,
    name: &'static str,
    make: fn(&[IndicatorMeta]) -> String,
) -> Reply {
    let catalog = data::catalog(&*state.market).await?;
    let legacy_json = state.data_legacy_json;
    let answer = memoized(
        state.market.memo(),
        &format!("{name}, precompressed, legacy {legacy_json}"),
        catalog,
        move |c| {
            let json = make(c);
            let rows = crate::rows::json_rows(json.as_bytes());
            let text = if legacy_json {
                serde_json::Value::String(json).to_string()
            } else {
                json
            };
            (Precompressed::new("application/json", text), rows)
        },
        |(body, _): &CatalogAnswer| body.bytes(),
    )
    .await;
    let (body, rows) = (&answer.0, answer.1);
    Ok(with_volume(
        body.respond(headers),
        state.metering.is_some().then_some(rows),
        body.identity().len() as u64,
    ))
}

pub(super) fn days(params: &Params) -> Result<usize, ApiError> {
    match params.opt::<i64>("days", "a positive integer")? {
        Some(d) if d >= 1 => Ok(d as usize),
        Some(d) => Err(ApiError::field(
            "days",
            format!("must be a positive integer, got {d}"),
        )),
        None => Err(ApiError::field("days", "is required")),
    }
}

/// `date` in exactly `YYYYMMDD` form, else 406 (the data service's code
/// for a malformed date), worded as every field error is.
fn date(params: &Params) -> Result<NaiveDate, ApiError> {
    let raw = params.get("date").unwrap_or("");
    let malformed =
        |why: String| ApiError::new(406, services::FieldError::new("date", why).to_string());
    if raw.len() != 8 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(malformed(format!(
            "must be YYYYMMDD (8 digits), got '{raw}'"
        )));
    }
    services::dates::parse_in(raw, "%Y%m%d", "YYYYMMDD").map_err(malformed)
}

/// All indicators except internal and relative-trend records.
#[utoipa::path(get, path = "/getAllSymbols", tag = "data", responses((status = 200, description = "All indicators except internal and relative-trend records", body = [CatalogItem]), DataErrors))]
pub(crate) async fn all_symbols(Tenant { state, .. }: Tenant, headers: HeaderMap) -> Reply {
    catalog_answer(&state, &headers, "getAllSymbols", |c| {
        catalog_list(
            c.iter().filter(|m| !m.internal && m.kind != "reltrend"),
            false,
        )
    })
    .await
}

/// The full catalog with each indicator's market symbol.
#[utoipa::path(get, path = "/getAllSymbolswithIndexes", tag = "data", responses((status = 200, description = "The full catalog with each indicator's market symbol", body = [CatalogItem]), DataErrors))]
pub(crate) async fn all_symbols_with_indexes(
    Tenant { state, .. }: Tenant,
    headers: HeaderMap,
) -> Reply {
    catalog_answer(&state, &headers, "getAllSymbolswithIndexes", |c| {
        catalog_list(c.iter().filter(|m| !m.internal), true)
    })
    .await
}

/// The account's selections plus its plan's base indicators.
#[utoipa::path(get, path = "/getAllUserSelectedSymbols", tag = "data", responses((status = 200, description = "The account's selections plus its plan's base indicators", body = [CatalogItem]), DataErrors))]
pub(crate) async fn user_selected_symbols(t: Tenant) -> Reply {
    listed(&t, Listing::UserSelected, false).await
}

/// The same with market symbols (also answered at getAllUserSelectedSymbolswithIndexes).
#[utoipa::path(get, path = "/getAllUserSelectedSymbolsWithIndexes", tag = "data", responses((status = 200, description = "The same with market symbols (also answered at getAllUserSelectedSymbolswithIndexes)", body = [CatalogItem]), DataErrors))]
pub(crate) async fn user_selected_with_indexes(t: Tenant) -> Reply {
    listed(&t, Listing::UserSelected, true).await
}

/// Subscribed model indicators.
#[utoipa::path(get, path = "/getModelData", tag = "data", responses((status = 200, description = "Subscribed model indicators", body = [CatalogItem]), DataErrors))]
pub(crate) async fn model_data(t: Tenant) -> Reply {
    listed(&t, Listing::Model, false).await
}

/// Subscribed model indicators with market symbols.
#[utoipa::path(get, path = "/getModelSymbolswithIndexes", tag = "data", responses((status = 200, description = "Subscribed model indicators with market symbols", body = [CatalogItem]), DataErrors))]
pub(crate) async fn model_with_indexes(t: Tenant) -> Reply {
    listed(&t, Listing::Model, true).await
}

/// Subscribed indicators of a metadata group (404 unknown group).
#[utoipa::path(get, path = "/getGroupSymbols/{group}", tag = "data", params(("group" = String, Path, description = "Group name (any case)", example = "Core")), responses((status = 200, description = "Subscribed indicators of a metadata group (404 unknown group)", body = [CatalogItem]), DataErrors))]
pub(crate) async fn group_symbols(t: Tenant, Path(group): Path<String>) -> Reply {
    listed(&t, Listing::Group(&group), false).await
}

/// An account's catalog list as this service answers it.
async fn listed(t: &Tenant, which: Listing<'_>, with_market: bool) -> Reply {
    let c = data::catalog(&*t.state.market).await?;
    let answer = data::listing(&t.caller.account, &c, which, with_market)?;
    Ok(body(&t.state, answer))
}

/// One indicator's history as this service answers it.
async fn history(t: &Tenant, headers: &HeaderMap, code: &str, span: Span, extras: Extras) -> Reply {
    let json = indicator_history(&*t.state.market, &t.caller.account, code, span, extras).await?;
    if crate::arrow::wanted(headers) {
        return arrow_history(&t.state, &json);
    }
    Ok(crate::arrow::vary(body(&t.state, json)))
}

/// A history answer as an Arrow stream: `Date` (a timestamp, from each
/// record's key) then the records' own fields, as the JSON has them.
fn arrow_history(state: &AppState, json: &str) -> Reply {
    use platform::marketdata::columns::Column;
    let records: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(json).map_err(|e| {
            tracing::error!(error = %e, "history answer");
            ApiError::internal()
        })?;
    let dates: Vec<Option<chrono::NaiveDateTime>> = records
        .keys()
        .map(|k| chrono::NaiveDateTime::parse_from_str(k, "%Y-%m-%dT%H:%M:%S%.3f").ok())
        .collect();
    let rows: Vec<serde_json::Map<String, serde_json::Value>> = records
        .into_iter()
        .filter_map(|(_, v)| match v {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        })
        .collect();
    let mut columns = vec![("Date".to_string(), Column::Time(dates))];
    columns.extend(platform::marketdata::interchange::from_json_rows(&rows));
    let response = crate::arrow::respond_columns(columns, Default::default())?;
    // The length is the body's own (no header carries it yet).
    let bytes = axum::body::HttpBody::size_hint(response.body())
        .exact()
        .unwrap_or(0);
    Ok(with_volume(
        response,
        state.metering.is_some().then_some(rows.len() as u64),
        bytes,
    ))
}

const PLAIN: Extras = Extras {
    sentiment: false,
    market_symbol: false,
};

/// Full history keyed by YYYY-MM-DDT00:00:00.000 (trial: last 90 records).
#[utoipa::path(get, path = "/getSymbolData/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full history keyed by YYYY-MM-DDT00:00:00.000 (trial: last 90 records). With `Accept: application/vnd.apache.arrow.stream`, an Arrow IPC stream: `Date` (a timestamp) and the records' fields", content((History = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))), DataErrors))]
pub(crate) async fn symbol_data(t: Tenant, headers: HeaderMap, Path(code): Path<String>) -> Reply {
    history(&t, &headers, &code, Span::All, PLAIN).await
}

/// Full history with sentiment.
#[utoipa::path(get, path = "/getSymbolSentimentData/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX")), responses((status = 200, description = "Full history with sentiment. With `Accept: application/vnd.apache.arrow.stream`, an Arrow IPC stream: `Date` (a timestamp) and the records' fields", content((History = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))), DataErrors))]
pub(crate) async fn symbol_sentiment(
    t: Tenant,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Reply {
    let extras = Extras {
        sentiment: true,
        ..PLAIN
    };
    history(&t, &headers, &code, Span::All, extras).await
}

/// The last `days` periods of the indicator's own frequency.
#[utoipa::path(get, path = "/getSymbolDataLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` periods of the indicator's own frequency. With `Accept: application/vnd.apache.arrow.stream`, an Arrow IPC stream: `Date` (a timestamp) and the records' fields", content((History = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn symbol_limit_days(
    t: Tenant,
    headers: HeaderMap,
    Path(code): Path<String>,
    params: Params,
) -> Reply {
    let span = Span::Last(days(&params)?);
    history(&t, &headers, &code, span, PLAIN).await
}

/// The last `days` periods with sentiment and market symbol.
#[utoipa::path(get, path = "/getSymbolDataSentimentLimitDays/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), Days), responses((status = 200, description = "The last `days` periods with sentiment and market symbol. With `Accept: application/vnd.apache.arrow.stream`, an Arrow IPC stream: `Date` (a timestamp) and the records' fields", content((History = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))), (status = 400, description = "`days` missing or not a positive integer", body = DataError), DataErrors))]
pub(crate) async fn symbol_sentiment_limit_days(
    t: Tenant,
    headers: HeaderMap,
    Path(code): Path<String>,
    params: Params,
) -> Reply {
    let span = Span::Last(days(&params)?);
    let extras = Extras {
        sentiment: true,
        market_symbol: true,
    };
    history(&t, &headers, &code, span, extras).await
}

/// The latest reading of each subscribed indicator, keyed "0", "1", ....
#[utoipa::path(get, path = "/getTodayData", tag = "data", responses((status = 200, description = "The latest reading of each subscribed indicator, keyed \"0\", \"1\", ...", body = Snapshot), DataErrors))]
pub(crate) async fn today(t: Tenant) -> Reply {
    let key = format!("today:{}", data::view_key(&t.caller.account));
    kept_answer(
        &t.state,
        key,
        snapshot(&*t.state.market, &t.caller.account, false),
    )
    .await
}

/// The same with market symbols.
#[utoipa::path(get, path = "/getTodayDataIndexes", tag = "data", responses((status = 200, description = "The same with market symbols", body = Snapshot), DataErrors))]
pub(crate) async fn today_indexes(t: Tenant) -> Reply {
    let key = format!("today-indexes:{}", data::view_key(&t.caller.account));
    kept_answer(
        &t.state,
        key,
        snapshot(&*t.state.market, &t.caller.account, true),
    )
    .await
}

/// The reading on one date (406 unless YYYYMMDD).
#[utoipa::path(get, path = "/getSymbolLimitDate/{symbol}", tag = "data", params(("symbol" = String, Path, description = "Indicator code", example = "SPX_OPTIX"), DateParam), responses((status = 200, description = "The reading on one date (empty when there is none)", body = History), (status = 406, description = "`date` is not a YYYYMMDD date", body = DataError), DataErrors))]
pub(crate) async fn symbol_for_date(t: Tenant, Path(code): Path<String>, params: Params) -> Reply {
    let span = Span::On(date(&params)?);
    // One reading: JSON only.
    history(&t, &HeaderMap::new(), &code, span, PLAIN).await
}

/// Every subscribed indicator's reading on one date.
#[utoipa::path(get, path = "/getAllDataForDate", tag = "data", params(DateParam), responses((status = 200, description = "Every subscribed indicator's reading on one date", body = DateSnapshot), (status = 406, description = "`date` is not a YYYYMMDD date", body = DataError), DataErrors))]
pub(crate) async fn all_for_date(t: Tenant, params: Params) -> Reply {
    let d = date(&params)?;
    let key = format!("date {d}:{}", data::view_key(&t.caller.account));
    kept_answer(
        &t.state,
        key,
        data::history::all_for_date(&*t.state.market, &t.caller.account, d),
    )
    .await
}

/// Recent readings of every subscribed indicator (410 unless 1-90 days).
#[utoipa::path(get, path = "/getAllSymbolDataLimitDays", tag = "data", params(BulkDays), responses((status = 200, description = "Recent readings of every subscribed indicator", body = Bulk), (status = 400, description = "`days` is not an integer", body = DataError), (status = 410, description = "`days` is missing or not 1 to 90", body = DataError), DataErrors))]
pub(crate) async fn bulk(t: Tenant, params: Params) -> Reply {
    let n = match params.opt::<i64>("days", "an integer")? {
        Some(d) if (1..=90).contains(&d) => d as usize,
        other => {
            return Err(ApiError::new(
                410,
                services::FieldError::new(
                    "days",
                    format!(
                        "must be between 1 and 90, got {}",
                        other
                            .map(|d| d.to_string())
                            .unwrap_or_else(|| "nothing".into())
                    ),
                )
                .to_string(),
            ));
        }
    };
    let key = format!(
        "bulk {n} {}:{}",
        t.caller.account.plan.trial,
        data::view_key(&t.caller.account)
    );
    kept_answer(
        &t.state,
        key,
        data::history::bulk(&*t.state.market, &t.caller.account, n),
    )
    .await
}
