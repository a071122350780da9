//! Correlation and beta routes (analytics 4.2): POST, JSON or form bodies,
//! success code 211, and 411 in an HTTP 200 when the data cannot support the
//! answer (in an HTTP 422 to a request for the Arrow stream). Thin handlers over `services::analytics::correlation`.

use super::body::{Fields, SymbolsForm};
use super::{AnalyticsErrors, OrInsufficient, blocking, blocking_table, envelope};
use crate::auth::Tenant;
use crate::error::Reply;
use axum::http::HeaderMap;
use services::analytics::correlation::{self as corr, *};

const SUCCESS: u16 = 211;

/// `POST /symbol_corr`: the return correlation matrix and each comparison's
/// rolling correlation with the benchmark.
#[utoipa::path(post, path = "/symbol_corr", tag = "analytics",
    request_body(content((SymbolsRequest = "application/json"), (SymbolsForm = "application/x-www-form-urlencoded"), (SymbolsForm = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient. With `Accept: application/vnd.apache.arrow.stream`, `corr_roll` as an Arrow IPC stream (`Date` a timestamp; `code` and `corr_matrix` as JSON text in the schema metadata)",
        content((OrInsufficient<CorrData> = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))),
        (status = 422, description = "Code 411, the data are insufficient, when the Arrow stream was asked for (never in an HTTP 200)", body = crate::error::AnalyticsError),
        AnalyticsErrors))]
pub(crate) async fn symbol_corr(t: Tenant, headers: HeaderMap, fields: Fields) -> Reply {
    let request = fields.symbols_request()?;
    let place = crate::compute::admit(&t, "symbol_corr").await?;
    let inputs = Study::read(&*t.state.market, &request).await?;
    blocking_table(place, SUCCESS, &headers, move || {
        Ok(corr::symbol_corr(inputs.align()?))
    })
    .await
}

/// `POST /symbol_beta`: each comparison's rolling beta against the benchmark
/// (covariance over benchmark variance = correlation x volatility ratio).
#[utoipa::path(post, path = "/symbol_beta", tag = "analytics",
    request_body(content((SymbolsRequest = "application/json"), (SymbolsForm = "application/x-www-form-urlencoded"), (SymbolsForm = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient. With `Accept: application/vnd.apache.arrow.stream`, `beta_roll` as an Arrow IPC stream (`Date` a timestamp; `code` in the schema metadata)",
        content((OrInsufficient<BetaData> = "application/json"), (crate::openapi::Binary = "application/vnd.apache.arrow.stream"))),
        (status = 422, description = "Code 411, the data are insufficient, when the Arrow stream was asked for (never in an HTTP 200)", body = crate::error::AnalyticsError),
        AnalyticsErrors))]
pub(crate) async fn symbol_beta(t: Tenant, headers: HeaderMap, fields: Fields) -> Reply {
    let request = fields.symbols_request()?;
    let place = crate::compute::admit(&t, "symbol_beta").await?;
    let inputs = Study::read(&*t.state.market, &request).await?;
    blocking_table(place, SUCCESS, &headers, move || {
        Ok(corr::symbol_beta(inputs.align()?))
    })
    .await
}

/// `POST /asset_corr`: return correlations among the 18 cross-asset symbols
/// (those present in the store) over their common sessions.
#[utoipa::path(post, path = "/asset_corr", tag = "analytics",
    request_body(content((RangeRequest = "application/json"), (RangeRequest = "application/x-www-form-urlencoded"), (RangeRequest = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient", body = OrInsufficient<AssetCorrData>), AnalyticsErrors))]
pub(crate) async fn asset_corr(t: Tenant, fields: Fields) -> Reply {
    let request = fields.range_request()?;
    let place = crate::compute::admit(&t, "asset_corr").await?;
    let inputs = AssetStudy::read(&*t.state.market, &request).await?;
    blocking(place, SUCCESS, move || {
        Ok(corr::asset_corr(inputs.align()?))
    })
    .await
}

/// `POST /pattern_corr`: similarity 0-100 of the comparison window's closes
/// to the reference window's (resampled to the reference's length).
#[utoipa::path(post, path = "/pattern_corr", tag = "analytics",
    request_body(content((PatternRequest = "application/json"), (PatternRequest = "application/x-www-form-urlencoded"), (PatternRequest = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when a window has too few sessions", body = OrInsufficient<PatternData>), AnalyticsErrors))]
pub(crate) async fn pattern_corr(Tenant { state, .. }: Tenant, fields: Fields) -> Reply {
    let answer = corr::pattern_corr(&*state.market, &fields.pattern_request()?).await?;
    envelope(SUCCESS, answer)
}
