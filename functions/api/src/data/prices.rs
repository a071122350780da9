//! `GET /ws/prices/{ticker}`: a stored symbol's daily bars, in the format
//! the client asks for.

use super::routes::with_volume;
use crate::auth::Tenant;
use crate::error::{DataError, Reply};
use crate::extract::Query;
use crate::openapi::{Binary, DataErrors};
use crate::table_format::Format;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use services::data::prices::{PricesAnswer, PricesQuery, prices as read};

/// A stored symbol's daily bars (date, open, high, low, close, volume)
/// from `start` to `end`, oldest first: what its backtests run on. A
/// trial account reads the last 90 sessions.
#[utoipa::path(get, path = "/prices/{ticker}", tag = "data", operation_id = "prices",
    params(("ticker" = String, Path, description = "A stored symbol (any case)", example = "SPX"), PricesQuery),
    responses((status = 200, description = "The bars: JSON rows, or a table (`Date` a date, then `Open`, `High`, `Low`, `Close`, `Volume`) as CSV, Parquet or an Arrow IPC stream",
            content((PricesAnswer = "application/json"), (String = "text/csv"), (Binary = "application/vnd.apache.parquet"), (Binary = "application/vnd.apache.arrow.stream"))),
        (status = 400, description = "A malformed date, `start` after `end`, or an unknown format", body = DataError),
        DataErrors))]
pub(crate) async fn prices(
    t: Tenant,
    headers: HeaderMap,
    Path(ticker): Path<String>,
    Query(q): Query<PricesQuery>,
) -> Reply {
    let format = Format::negotiate(q.format.as_deref(), &headers)?;
    let range = q.range()?;
    let p = read(
        &*t.state.market,
        &t.caller.account,
        &ticker,
        range,
        q.adjusted.unwrap_or(true),
    )
    .await?;
    let rows = p.len() as u64;
    let response = match format {
        Format::Json => crate::arrow::vary(axum::Json(p.answer()).into_response()),
        other => crate::table_format::respond(other, p.columns(), &format!("{}-daily", p.symbol))?,
    };
    let bytes = axum::body::HttpBody::size_hint(response.body())
        .exact()
        .unwrap_or(0);
    Ok(with_volume(
        response,
        t.state.metering.is_some().then_some(rows),
        bytes,
    ))
}
