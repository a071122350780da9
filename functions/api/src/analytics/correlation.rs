//! Correlation and beta endpoints (analytics 4.2): POST, JSON or form bodies,
//! success code 211, and 411 in an HTTP 200 when the data cannot support the
//! answer. Correlations are of daily simple returns on the sessions every
//! symbol shares.

use super::body::Fields;
use super::{envelope, load_daily};
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use engine::correlation::{align, matrix, rolling_beta, rolling_corr};
use engine::stats::returns;
use serde_json::{Map, Value, json};

/// The cross-asset set of `asset_corr`, in answer order.
pub const ASSETS: [&str; 18] = [
    "IVV", "IJH", "IJR", "EFA", "SCZ", "EEM", "AGG", "SHY", "IEF", "TLT", "TIP", "LQD", "VNQ",
    "GLD", "DBC", "HYG", "USO", "DXY",
];

const SUCCESS: u16 = 211;
const MAX_WINDOW: i64 = 2520;

fn insufficient(message: String) -> ApiError {
    ApiError::new(411, message)
}

fn iso(d: NaiveDate) -> String {
    format!("{}T00:00:00", d.format("%Y-%m-%d"))
}

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
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

/// Closes of `symbols` on their common sessions in `[start, end]`.
async fn aligned(
    state: &AppState,
    symbols: &[String],
    start: NaiveDate,
    end: NaiveDate,
) -> Result<(Vec<NaiveDate>, Vec<Vec<f64>>), ApiError> {
    let mut series = Vec::with_capacity(symbols.len());
    for s in symbols {
        let bars = load_daily(state, s)
            .await?
            .slice_dates(Some(start), Some(end));
        let dates: Vec<NaiveDate> = bars.time.iter().map(|t| t.date()).collect();
        series.push((dates, bars.close));
    }
    let views: Vec<(&[NaiveDate], &[f64])> = series
        .iter()
        .map(|(d, c)| (d.as_slice(), c.as_slice()))
        .collect();
    Ok(align(&views))
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
        if symbols.len() < 2 {
            return Err(ApiError::bad_request(
                "field 'stock_comparison' must name a ticker other than the benchmark",
            ));
        }
        let (start, end) = range(fields)?;
        let window = fields.int_in("roll_window", 21, 2, MAX_WINDOW)? as usize;
        let (dates, closes) = aligned(state, &symbols, start, end).await?;
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

    /// One row per session with a full window; `member` adds each comparison's values.
    fn rolling_rows(&self, per_symbol: &[Vec<f64>], price_members: bool) -> Value {
        let n = self.rets[0].len();
        (self.window - 1..n)
            .map(|i| {
                // Return i ends on session i + 1.
                let mut o = Map::new();
                o.insert("Date".into(), json!(iso(self.dates[i + 1])));
                for (k, sym) in self.symbols.iter().enumerate().skip(1) {
                    o.insert(sym.clone(), num(per_symbol[k - 1][i]));
                    if price_members {
                        o.insert(format!("{sym}_price"), json!(self.closes[k][i + 1]));
                    }
                }
                o.insert("stock_price".into(), json!(self.closes[0][i + 1]));
                Value::Object(o)
            })
            .collect()
    }
}

/// `POST /symbol_corr`: the return correlation matrix and each comparison's
/// rolling correlation with the benchmark.
pub async fn symbol_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Json<Value>, ApiError> {
    let study = Study::load(&state, &fields).await?;
    let cols: Vec<&[f64]> = study.rets.iter().map(Vec::as_slice).collect();
    let rolling: Vec<Vec<f64>> = cols[1..]
        .iter()
        .map(|c| rolling_corr(c, cols[0], study.window))
        .collect();
    Ok(envelope(
        SUCCESS,
        json!({
            "corr_matrix": matrix_rows(&study.symbols, &matrix(&cols)),
            "corr_roll": study.rolling_rows(&rolling, false),
        }),
    ))
}

/// `POST /symbol_beta`: each comparison's rolling beta against the benchmark
/// (covariance over benchmark variance = correlation x volatility ratio).
pub async fn symbol_beta(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Json<Value>, ApiError> {
    let study = Study::load(&state, &fields).await?;
    let bench = &study.rets[0];
    let betas: Vec<Vec<f64>> = study.rets[1..]
        .iter()
        .map(|c| rolling_beta(c, bench, study.window))
        .collect();
    Ok(envelope(
        SUCCESS,
        json!({"beta_roll": study.rolling_rows(&betas, true)}),
    ))
}

/// `POST /asset_corr`: return correlations among the 18 cross-asset symbols
/// (those present in the store) over their common sessions.
pub async fn asset_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Json<Value>, ApiError> {
    let (start, end) = range(&fields)?;
    let mut present = Vec::new();
    for a in ASSETS {
        match state.market.daily(a).await {
            Ok(_) => present.push(a.to_string()),
            Err(platform::PortError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let (dates, closes) = aligned(&state, &present, start, end).await?;
    if present.len() < 2 || dates.len() < 3 {
        return Err(insufficient(format!(
            "insufficient data: {} assets with {} common sessions between {start} and {end}",
            present.len(),
            dates.len()
        )));
    }
    let rets: Vec<Vec<f64>> = closes.iter().map(|c| returns(c)).collect();
    let cols: Vec<&[f64]> = rets.iter().map(Vec::as_slice).collect();
    Ok(envelope(
        SUCCESS,
        json!({
            "start_date": dates[0].format("%Y-%m-%d").to_string(),
            "end_date": dates[dates.len() - 1].format("%Y-%m-%d").to_string(),
            "corr_info": matrix_rows(&present, &matrix(&cols)),
        }),
    ))
}

/// `POST /pattern_corr`: similarity 0-100 of the comparison window's closes
/// to the reference window's (resampled to the reference's length).
pub async fn pattern_corr(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Json<Value>, ApiError> {
    let reference = pattern_window(&state, &fields, "reference").await?;
    let comparison = pattern_window(&state, &fields, "comparison").await?;
    let score = engine::patterns::similarity(&reference, &comparison).ok_or_else(|| {
        insufficient("a window's closes do not move, so their correlation is undefined".into())
    })?;
    Ok(envelope(SUCCESS, json!({"pattern_corr": score})))
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
