//! Correlation and beta endpoints (analytics 4.2): POST, JSON or form bodies,
//! success code 211, and 411 in an HTTP 200 when the data cannot support the
//! answer. Correlations are of daily simple returns on the sessions every
//! symbol shares.

use super::body::Fields;
use super::docs::*;
use super::{envelope, load_daily};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use chrono::{Datelike, NaiveDate};
use engine::Bars;
use engine::correlation::{align, matrix, rolling_beta, rolling_corr};
use engine::stats::returns;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The cross-asset set of `asset_corr`, in answer order.
pub const ASSETS: [&str; 18] = [
    "IVV", "IJH", "IJR", "EFA", "SCZ", "EEM", "AGG", "SHY", "IEF", "TLT", "TIP", "LQD", "VNQ",
    "GLD", "DBC", "HYG", "USO", "DXY",
];

const SUCCESS: u16 = 211;
const MAX_WINDOW: i64 = 2520;
/// Comparison tickers per request: enough for a sector or a portfolio.
const MAX_COMPARISONS: usize = 50;

fn insufficient(message: String) -> ApiError {
    ApiError::new(411, message)
}

fn iso(d: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}T00:00:00", d.year(), d.month(), d.day())
}

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// Runs the computation and serialization off the async reactor: their cost
/// grows with the symbols, the years and the window the caller asks for.
async fn blocking(
    f: impl FnOnce() -> Result<Response, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        tracing::error!(error = %e, "analytics computation failed");
        ApiError::internal()
    })?
}

fn range(fields: &Fields) -> Result<(NaiveDate, NaiveDate), ApiError> {
    let (start, end) = (fields.date("start_date")?, fields.date("end_date")?);
    if start > end {
        return Err(ApiError::bad_request(format!(
            "field 'start_date' ({start}) is after 'end_date' ({end})"
        )));
    }
    Ok((start, end))
}

/// Closes of the series on their common sessions in `[start, end]`, read
/// from the cached bars without copying their other columns.
fn aligned(
    bars: &[Arc<Bars>],
    start: NaiveDate,
    end: NaiveDate,
) -> (Vec<NaiveDate>, Vec<Vec<f64>>) {
    let series: Vec<(Vec<NaiveDate>, &[f64])> = bars
        .iter()
        .map(|b| {
            let lo = b.time.partition_point(|t| t.date() < start);
            let hi = b.time.partition_point(|t| t.date() <= end);
            let dates = b.time[lo..hi].iter().map(|t| t.date()).collect();
            (dates, &b.close[lo..hi])
        })
        .collect();
    let views: Vec<(&[NaiveDate], &[f64])> =
        series.iter().map(|(d, c)| (d.as_slice(), *c)).collect();
    align(&views)
}

/// `index` plus one member per symbol, for each row of a correlation matrix.
fn matrix_rows(symbols: &[String], m: &[Vec<f64>]) -> Value {
    symbols
        .iter()
        .zip(m)
        .map(|(s, row)| {
            let mut o = Map::new();
            o.insert("index".into(), json!(s));
            for (t, v) in symbols.iter().zip(row) {
                o.insert(t.clone(), num(*v));
            }
            Value::Object(o)
        })
        .collect()
}

/// The benchmark and the comparison tickers of `symbol_corr`/`symbol_beta`,
/// their common sessions, and the window.
struct Study {
    symbols: Vec<String>,
    dates: Vec<NaiveDate>,
    closes: Vec<Vec<f64>>,
    rets: Vec<Vec<f64>>,
    window: usize,
}

impl Study {
    async fn load(state: &AppState, fields: &Fields) -> Result<Study, ApiError> {
        let benchmark = fields.ticker("benchmark")?;
        let mut symbols = vec![benchmark.clone()];
        symbols.extend(
            fields
                .tickers("stock_comparison")?
                .into_iter()
                .filter(|t| *t != benchmark),
        );
        if symbols.len() > MAX_COMPARISONS + 1 {
            return Err(ApiError::bad_request(format!(
                "field 'stock_comparison' names {} tickers; at most {MAX_COMPARISONS} are allowed",
                symbols.len() - 1
            )));
        }
        if symbols.len() < 2 {
            return Err(ApiError::bad_request(
                "field 'stock_comparison' must name a ticker other than the benchmark",
            ));
        }
        let (start, end) = range(fields)?;
        let window = fields.int_in("roll_window", 21, 2, MAX_WINDOW)? as usize;
        let mut bars = Vec::with_capacity(symbols.len());
        for s in &symbols {
            bars.push(load_daily(state, s).await?);
        }
        let (dates, closes) = aligned(&bars, start, end);
        if dates.len() < window + 1 {
            return Err(insufficient(format!(
                "insufficient data: {} common sessions between {start} and {end}, roll_window {window} needs at least {}",
                dates.len(),
                window + 1
            )));
        }
        let rets = closes.iter().map(|c| returns(c)).collect();
        Ok(Study {
            symbols,
            dates,
            closes,
            rets,
            window,
        })
    }
}

/// Rolling rows, one per session with a full window: `Date`, each
/// comparison's value (and its price for beta), `stock_price`. Serialized
/// straight from the columns: thousands of rows would otherwise become as
/// many JSON maps first.
struct RollingRows<'a> {
    study: &'a Study,
    /// One column per comparison symbol, indexed like the returns.
    values: &'a [Vec<f64>],
    price_keys: Option<Vec<String>>,
}

impl Serialize for RollingRows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (n, w) = (self.study.rets[0].len(), self.study.window);
        let mut seq = s.serialize_seq(Some(n + 1 - w))?;
        for i in w - 1..n {
            seq.serialize_element(&RollingRow { rows: self, i })?;
        }
        seq.end()
    }
}

struct RollingRow<'a> {
    rows: &'a RollingRows<'a>,
    /// Return index; the return ends on session `i + 1`.
    i: usize,
}

impl Serialize for RollingRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (study, i) = (self.rows.study, self.i);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("Date", &iso(study.dates[i + 1]))?;
        for (k, sym) in study.symbols.iter().enumerate().skip(1) {
            let v = self.rows.values[k - 1][i];
            m.serialize_entry(sym, &v.is_finite().then_some(v))?;
            if let Some(keys) = &self.rows.price_keys {
                m.serialize_entry(&keys[k - 1], &study.closes[k][i + 1])?;
            }
        }
        m.serialize_entry("stock_price", &study.closes[0][i + 1])?;
        m.end()
    }
}

/// `POST /symbol_corr`: the return correlation matrix and each comparison's
/// rolling correlation with the benchmark.
#[utoipa::path(post, path = "/symbol_corr", tag = "analytics",
    request_body(content((SymbolsBody = "application/json"), (SymbolsBody = "application/x-www-form-urlencoded"), (SymbolsBody = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient", body = Envelope<CorrData>), AnalyticsErrors))]
pub(crate) async fn symbol_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Response, ApiError> {
    let study = Study::load(&state, &fields).await?;
    blocking(move || {
        let cols: Vec<&[f64]> = study.rets.iter().map(Vec::as_slice).collect();
        let rolling: Vec<Vec<f64>> = cols[1..]
            .iter()
            .map(|c| rolling_corr(c, cols[0], study.window))
            .collect();
        #[derive(Serialize)]
        struct Data<'a> {
            corr_matrix: Value,
            corr_roll: RollingRows<'a>,
        }
        envelope(
            SUCCESS,
            Data {
                corr_matrix: matrix_rows(&study.symbols, &matrix(&cols)),
                corr_roll: RollingRows {
                    study: &study,
                    values: &rolling,
                    price_keys: None,
                },
            },
        )
    })
    .await
}

/// `POST /symbol_beta`: each comparison's rolling beta against the benchmark
/// (covariance over benchmark variance = correlation x volatility ratio).
#[utoipa::path(post, path = "/symbol_beta", tag = "analytics",
    request_body(content((SymbolsBody = "application/json"), (SymbolsBody = "application/x-www-form-urlencoded"), (SymbolsBody = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient", body = Envelope<BetaData>), AnalyticsErrors))]
pub(crate) async fn symbol_beta(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Response, ApiError> {
    let study = Study::load(&state, &fields).await?;
    blocking(move || {
        let bench = &study.rets[0];
        let betas: Vec<Vec<f64>> = study.rets[1..]
            .iter()
            .map(|c| rolling_beta(c, bench, study.window))
            .collect();
        #[derive(Serialize)]
        struct Data<'a> {
            beta_roll: RollingRows<'a>,
        }
        let price_keys = study.symbols[1..]
            .iter()
            .map(|s| format!("{s}_price"))
            .collect();
        envelope(
            SUCCESS,
            Data {
                beta_roll: RollingRows {
                    study: &study,
                    values: &betas,
                    price_keys: Some(price_keys),
                },
            },
        )
    })
    .await
}

/// `POST /asset_corr`: return correlations among the 18 cross-asset symbols
/// (those present in the store) over their common sessions.
#[utoipa::path(post, path = "/asset_corr", tag = "analytics",
    request_body(content((RangeBody = "application/json"), (RangeBody = "application/x-www-form-urlencoded"), (RangeBody = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when the data are insufficient", body = Envelope<AssetCorrData>), AnalyticsErrors))]
pub(crate) async fn asset_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Response, ApiError> {
    let (start, end) = range(&fields)?;
    let (mut present, mut bars) = (Vec::new(), Vec::new());
    for a in ASSETS {
        match state.market.daily(a).await {
            Ok(b) => {
                present.push(a.to_string());
                bars.push(b);
            }
            Err(platform::PortError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let (dates, closes) = aligned(&bars, start, end);
    if present.len() < 2 || dates.len() < 3 {
        return Err(insufficient(format!(
            "insufficient data: {} assets with {} common sessions between {start} and {end}",
            present.len(),
            dates.len()
        )));
    }
    blocking(move || {
        let rets: Vec<Vec<f64>> = closes.iter().map(|c| returns(c)).collect();
        let cols: Vec<&[f64]> = rets.iter().map(Vec::as_slice).collect();
        envelope(
            SUCCESS,
            json!({
                "start_date": dates[0].format("%Y-%m-%d").to_string(),
                "end_date": dates[dates.len() - 1].format("%Y-%m-%d").to_string(),
                "corr_info": matrix_rows(&present, &matrix(&cols)),
            }),
        )
    })
    .await
}

/// `POST /pattern_corr`: similarity 0-100 of the comparison window's closes
/// to the reference window's (resampled to the reference's length).
#[utoipa::path(post, path = "/pattern_corr", tag = "analytics",
    request_body(content((PatternBody = "application/json"), (PatternBody = "application/x-www-form-urlencoded"), (PatternBody = "multipart/form-data"))),
    responses((status = 200, description = "code 211, or code 411 when a window has too few sessions", body = Envelope<PatternData>), AnalyticsErrors))]
pub(crate) async fn pattern_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Response, ApiError> {
    let reference = pattern_window(&state, &fields, "reference").await?;
    let comparison = pattern_window(&state, &fields, "comparison").await?;
    let score = engine::patterns::similarity(&reference, &comparison).ok_or_else(|| {
        insufficient("a window's closes do not move, so their correlation is undefined".into())
    })?;
    envelope(SUCCESS, json!({"pattern_corr": score}))
}

/// The closes of one `pattern_corr` window, from its `<prefix>Symbol`,
/// `<prefix>StartDate` and `<prefix>EndDate` fields.
async fn pattern_window(
    state: &AppState,
    fields: &Fields,
    prefix: &str,
) -> Result<Vec<f64>, ApiError> {
    let symbol = fields.ticker(&format!("{prefix}Symbol"))?;
    let (start_name, end_name) = (format!("{prefix}StartDate"), format!("{prefix}EndDate"));
    let (start, end) = (fields.date(&start_name)?, fields.date(&end_name)?);
    if start > end {
        return Err(ApiError::bad_request(format!(
            "field '{start_name}' ({start}) is after '{end_name}' ({end})"
        )));
    }
    let bars = load_daily(state, &symbol)
        .await?
        .slice_dates(Some(start), Some(end));
    if bars.len() < 3 {
        return Err(insufficient(format!(
            "insufficient data: {symbol} has {} sessions between {start} and {end} (at least 3 needed)",
            bars.len()
        )));
    }
    Ok(bars.close)
}
