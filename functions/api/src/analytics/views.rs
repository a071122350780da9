//! Analytics views: pages a person opens in a browser (see [`crate::report`]).
//! The seasonality and correlation pages fetch their numbers from the API's
//! own endpoints with the page's credentials, so what they show is what a
//! client gets; the request is checked here first (400 naming the field,
//! 404 for an unknown ticker) so a page never opens on a mistake. The
//! pattern view answers a pattern search with its backtest, drawn like a
//! pattern-match task's report.

use super::AnalyticsErrors;
use super::body::Fields;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::error::Reply;
use crate::extract::{Params, Query};
use crate::report::{chart_page, escape};
use platform::worker::Progress;
use serde::Deserialize;
use serde_json::{Map, Value};
use services::analytics::correlation;
use services::analytics::cpm;
use services::analytics::cpm::requests::{CpmParams, Mode, PatternParams};
use services::analytics::seasonality::{Curve, Holiday, Shift, Study, Years};
use utoipa::IntoParams;

/// Seasonality as charts: returns by month and by weekday as bars, the
/// profile around a holiday, and the one-dollar curve, from `GET /seasonality`.
#[utoipa::path(get, path = "/views/seasonality", tag = "analytics", params(Years, Holiday, Shift, Curve),
    responses((status = 200, description = "The page; its script reads `GET /seasonality` with these parameters", content_type = "text/html", body = String),
        AnalyticsErrors))]
pub(crate) async fn seasonality_view(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    // Checked here as `GET /seasonality` will check them for the page.
    _: Query<Holiday>,
    _: Query<Shift>,
    _: Query<Curve>,
) -> Reply {
    Study::load(&*state.market, &years).await?;
    let ticker = years.ticker.trim().to_uppercase();
    let title = format!("Seasonality of {ticker}");
    Ok(chart_page(
        &title,
        &format!(
            r#"<h1 id="name">{}</h1>
<p class="sub" id="years"></p>
<h2>Average return by month</h2><div id="months" class="chart"></div><table id="months-table"></table>
<h2>Average daily return by weekday</h2><div id="weeks" class="chart"></div><table id="weeks-table"></table>
<h2>Around <span id="holiday-name"></span></h2><div id="holiday" class="chart"></div><table id="holiday-table"></table>
<h2>One dollar held from trading day <span id="entry"></span> for <span id="holding"></span> sessions, each year</h2><div id="curve" class="chart"></div>"#,
            escape(&title)
        ),
        &Value::Null,
        "view-seasonality.js",
    ))
}

/// Query of the correlation view: the fields of `POST /symbol_corr`, the
/// comparisons comma-separated.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub(crate) struct CorrelationQuery {
    /// The benchmark's ticker.
    #[param(example = "SPX", pattern = "^[A-Za-z0-9._^-]{1,32}$")]
    benchmark: String,
    /// 1-50 other tickers, comma-separated.
    #[param(
        example = "IVV,TLT",
        pattern = "^[A-Za-z0-9._^-]{1,32}(,[A-Za-z0-9._^-]{1,32}){0,49}$"
    )]
    stock_comparison: String,
    /// YYYY-MM-DD, at most `end_date`.
    #[param(example = "2020-01-02", value_type = String, format = Date)]
    start_date: String,
    #[param(example = "2024-12-31", value_type = String, format = Date)]
    end_date: String,
    /// Trading days per window, 2-2520 (default 21).
    #[param(minimum = 2, maximum = 2520, example = 21)]
    roll_window: Option<i64>,
}

/// Correlation as charts: the return correlation matrix and the 18 assets'
/// as heat maps, each comparison's rolling correlation and beta against the
/// benchmark as lines, from `POST /symbol_corr`, `/symbol_beta` and `/asset_corr`.
#[utoipa::path(get, path = "/views/correlation", tag = "analytics", params(CorrelationQuery),
    responses((status = 200, description = "The page; its script posts these fields to the correlation endpoints", content_type = "text/html", body = String),
        AnalyticsErrors))]
pub(crate) async fn correlation_view(Tenant { state, .. }: Tenant, raw: Params) -> Reply {
    let fields: Map<String, Value> = raw
        .0
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let request = Fields::from_json(Value::Object(fields)).symbols_request()?;
    // Unknown tickers and bad fields stop here; data too short for an
    // answer is the endpoints' code 411, which the page shows where the
    // chart would be.
    correlation::Study::read(&*state.market, &request).await?;
    let title = format!(
        "{} against {}",
        request.stock_comparison.join(", "),
        request.benchmark
    );
    Ok(chart_page(
        &title,
        &format!(
            r#"<h1 id="name">{}</h1>
<p class="sub">{} to {}</p>
<h2>Correlation of daily returns</h2><div id="matrix-note" class="status" hidden></div><table id="matrix" class="heat"></table>
<h2>Rolling correlation with {bench}</h2><div id="rolling" class="chart"></div>
<h2>Rolling beta against {bench}</h2><div id="beta" class="chart"></div>
<h2>Cross-asset correlation</h2><div id="assets-note" class="status" hidden></div><table id="assets" class="heat"></table>"#,
            escape(&title),
            request.start_date,
            request.end_date,
            bench = escape(&request.benchmark),
        ),
        &serde_json::json!({
            "benchmark": request.benchmark,
            "stock_comparison": request.stock_comparison,
            "start_date": request.start_date,
            "end_date": request.end_date,
            "roll_window": request.roll_window,
        }),
        "view-correlation.js",
    ))
}

/// A pattern search as charts: the template with the best matches laid over
/// it, the trades after the matches on the price, their compounded return,
/// the metrics and the lists; the answer is `GET /cpm/scan_with_backtest`'s.
#[utoipa::path(get, path = "/views/pattern", tag = "analytics", params(PatternParams),
    responses((status = 200, description = "The page, with the answer and the series it draws", content_type = "text/html", body = String),
        AnalyticsErrors))]
pub(crate) async fn pattern_view(Tenant { state, .. }: Tenant, raw: Params) -> Reply {
    let params: CpmParams = super::cpm::query(raw).await?.into();
    let prepared = cpm::prepare(state.market.as_ref(), &params, Mode::Backtest).await?;
    let answer = cpm::run(state.market.as_ref(), prepared, &Progress::default()).await?;
    let result = serde_json::to_value(answer).map_err(|e| {
        tracing::error!(error = %e, "pattern answer");
        ApiError::internal()
    })?;
    let symbol = params.symbol.trim().to_uppercase();
    let name = format!("Pattern search of {symbol}");
    let heading = format!(r#"<h1 id="name">{}</h1>"#, escape(&name));
    super::task_pages::cpm_page(&state, &name, &heading, &params, Mode::Backtest, result).await
}
