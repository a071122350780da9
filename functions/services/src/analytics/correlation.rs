//! Correlation and beta (analytics 4.2). Correlations are of daily simple
//! returns on the sessions every symbol shares; data that cannot support an
//! answer is [`Error::Insufficient`].

#[cfg(feature = "openapi")]
use super::TickerText;
use super::{daily, ticker};
use crate::error::{Error, Result};
use crate::tables::Tabular;
use chrono::{Datelike, NaiveDate};
use engine::Bars;
use engine::correlation::{against, align, beta, corr, matrix};
use engine::stats::returns;
use platform::PortError;
use platform::marketdata::MarketData;
use platform::marketdata::columns::Column;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// The cross-asset set of `asset_corr`, in answer order.
pub const ASSETS: [&str; 18] = [
    "IVV", "IJH", "IJR", "EFA", "SCZ", "EEM", "AGG", "SHY", "IEF", "TLT", "TIP", "LQD", "VNQ",
    "GLD", "DBC", "HYG", "USO", "DXY",
];

const MAX_WINDOW: i64 = 2520;
/// Comparison tickers per request: enough for a sector or a portfolio.
pub const MAX_COMPARISONS: usize = 50;

// ---- requests ----

/// Body of `symbol_corr` and `symbol_beta` (JSON or form; in forms the array
/// is JSON text or a comma-separated list).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"], "start_date": "2020-01-02", "end_date": "2024-12-31", "roll_window": 21})))]
#[serde(deny_unknown_fields)]
pub struct SymbolsRequest {
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = TickerText, example = "SPX")
    )]
    pub benchmark: String,
    /// Tickers other than the benchmark, 1-50.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<TickerText>, example = json!(["IVV", "TLT"]), min_items = 1, max_items = 50))]
    pub stock_comparison: Vec<String>,
    /// YYYY-MM-DD, at most `end_date`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2020-01-02"))]
    pub start_date: NaiveDate,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2024-12-31"))]
    pub end_date: NaiveDate,
    /// Trading days per window, 2-2520 (default 21).
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 2, maximum = 2520, example = 21, nullable = false)
    )]
    pub roll_window: Option<i64>,
}

/// Body of `asset_corr`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RangeRequest {
    /// YYYY-MM-DD, at most `end_date`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2020-01-02"))]
    pub start_date: NaiveDate,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date, example = "2024-12-31"))]
    pub end_date: NaiveDate,
}

/// One window of `pattern_corr`.
#[derive(Debug, Clone)]
pub struct Window {
    pub symbol: String,
    pub start: NaiveDate,
    pub end: NaiveDate,
}

/// Body of `pattern_corr`: each window's start at most its end.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"referenceSymbol": "SPX", "referenceStartDate": "2024-01-02", "referenceEndDate": "2024-06-28", "comparisonSymbol": "NDX", "comparisonStartDate": "2023-01-03", "comparisonEndDate": "2023-06-30"})))]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct PatternRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = TickerText))]
    pub referenceSymbol: String,
    pub referenceStartDate: NaiveDate,
    pub referenceEndDate: NaiveDate,
    #[cfg_attr(feature = "openapi", schema(value_type = TickerText))]
    pub comparisonSymbol: String,
    pub comparisonStartDate: NaiveDate,
    pub comparisonEndDate: NaiveDate,
}

// ---- answers ----

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CorrData {
    pub corr_matrix: MatrixRows,
    pub corr_roll: RollingRows,
}

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BetaData {
    pub beta_roll: RollingRows,
}

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct AssetCorrData {
    /// First common session used.
    pub start_date: String,
    /// Last common session used.
    pub end_date: String,
    /// Over the assets of the 18 present in the store.
    pub corr_info: MatrixRows,
}

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PatternData {
    /// 0-100; higher is more similar.
    pub pattern_corr: f64,
}

/// A correlation matrix as rows `{index: symbol, <SYMBOL>: correlation, ...}`
/// (null where undefined). Keys are symbols, so the rows are written from
/// the matrix and described once in [`MatrixRows::schema`].
pub struct MatrixRows {
    symbols: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Serialize for MatrixRows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.symbols.len()))?;
        for (symbol, row) in self.symbols.iter().zip(&self.values) {
            seq.serialize_element(&MatrixRow {
                symbol,
                row,
                symbols: &self.symbols,
            })?;
        }
        seq.end()
    }
}

struct MatrixRow<'a> {
    symbol: &'a str,
    row: &'a [f64],
    symbols: &'a [String],
}

impl Serialize for MatrixRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.row.len() + 1))?;
        m.serialize_entry("index", self.symbol)?;
        for (t, v) in self.symbols.iter().zip(self.row) {
            m.serialize_entry(t, &v.is_finite().then_some(*v))?;
        }
        m.end()
    }
}

/// Rolling rows, one per session with a full window: `Date`, each
/// comparison's value (and `<SYMBOL>_price` for beta), `stock_price`.
/// Written straight from the columns (thousands of rows would otherwise
/// become as many maps first) and described once in [`RollingRows::schema`].
pub struct RollingRows {
    study: Arc<Study>,
    /// One column per comparison symbol, indexed like the returns.
    values: Vec<Vec<f64>>,
    price_keys: Option<Vec<String>>,
}

impl Serialize for RollingRows {
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
    rows: &'a RollingRows,
    /// Return index; the return ends on session `i + 1`.
    i: usize,
}

impl Serialize for RollingRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (study, i) = (&self.rows.study, self.i);
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

impl RollingRows {
    /// The rows as columns: `Date` (a timestamp), each comparison's value
    /// (null where undefined; for beta followed by `<SYMBOL>_price`), and
    /// `stock_price`, as the JSON rows hold them.
    fn table(&self) -> Vec<(String, Column)> {
        let (n, w) = (self.study.rets[0].len(), self.study.window);
        let study = &self.study;
        let rows = w - 1..n;
        let mut cols = vec![(
            "Date".to_string(),
            Column::Time(
                rows.clone()
                    .map(|i| study.dates[i + 1].and_hms_opt(0, 0, 0))
                    .collect(),
            ),
        )];
        for (k, sym) in study.symbols.iter().enumerate().skip(1) {
            let v = &self.values[k - 1];
            cols.push((
                sym.clone(),
                Column::Number(
                    rows.clone()
                        .map(|i| v[i].is_finite().then_some(v[i]))
                        .collect(),
                ),
            ));
            if let Some(keys) = &self.price_keys {
                cols.push((
                    keys[k - 1].clone(),
                    Column::Number(rows.clone().map(|i| Some(study.closes[k][i + 1])).collect()),
                ));
            }
        }
        cols.push((
            "stock_price".into(),
            Column::Number(rows.map(|i| Some(study.closes[0][i + 1])).collect()),
        ));
        cols
    }
}

/// `corr_roll` as the table; the matrix, as its JSON rows, beside it.
impl Tabular for CorrData {
    fn columns(&self) -> Vec<(String, Column)> {
        self.corr_roll.table()
    }

    fn extras(&self) -> HashMap<String, String> {
        let matrix = serde_json::to_string(&self.corr_matrix).unwrap_or_default();
        HashMap::from([("corr_matrix".to_string(), matrix)])
    }
}

/// `beta_roll` as the table.
impl Tabular for BetaData {
    fn columns(&self) -> Vec<(String, Column)> {
        self.beta_roll.table()
    }
}

#[cfg(feature = "openapi")]
mod schemas {
    use super::{MatrixRows, RollingRows};
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
    use utoipa::openapi::{RefOr, Schema};

    fn number_or_null() -> ObjectBuilder {
        ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::Number, Type::Null]))
    }

    impl utoipa::PartialSchema for MatrixRows {
        fn schema() -> RefOr<Schema> {
            let row = ObjectBuilder::new()
                .description(Some("`index` names the row's symbol; one member per symbol holds the correlation (null where undefined)."))
                .property("index", ObjectBuilder::new().schema_type(Type::String))
                .required("index")
                .additional_properties(Some(number_or_null()));
            ArrayBuilder::new().items(row).into()
        }
    }
    impl utoipa::ToSchema for MatrixRows {}

    impl utoipa::PartialSchema for RollingRows {
        fn schema() -> RefOr<Schema> {
            let row = ObjectBuilder::new()
                .description(Some("One member per comparison symbol (its rolling value, null where undefined; for beta also `<SYMBOL>_price`), and the benchmark's close as `stock_price`."))
                .property(
                    "Date",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .description(Some("YYYY-MM-DDT00:00:00")),
                )
                .required("Date")
                .property("stock_price", ObjectBuilder::new().schema_type(Type::Number))
                .required("stock_price")
                .additional_properties(Some(number_or_null()));
            ArrayBuilder::new().items(row).into()
        }
    }
    impl utoipa::ToSchema for RollingRows {}
}

// ---- use cases ----

/// The benchmark and the comparison tickers of `symbol_corr`/`symbol_beta`,
/// their common sessions, and the window.
pub struct Study {
    symbols: Vec<String>,
    dates: Vec<NaiveDate>,
    closes: Vec<Vec<f64>>,
    rets: Vec<Vec<f64>>,
    window: usize,
}

/// What a [`Study`] is built from: the request's checked symbols, range
/// and window and their stored bars. Reading them waits on storage; aligning
/// them ([`StudyInputs::align`]) is CPU work, done where the answer is
/// computed (the compute pool), not where requests are read.
pub struct StudyInputs {
    symbols: Vec<String>,
    bars: Vec<Arc<Bars>>,
    start: NaiveDate,
    end: NaiveDate,
    window: usize,
}

impl Study {
    pub async fn read(market: &dyn MarketData, q: &SymbolsRequest) -> Result<StudyInputs> {
        let benchmark = ticker(&q.benchmark);
        if benchmark.is_empty() {
            return Err(Error::invalid("benchmark", "is required"));
        }
        let mut symbols = vec![benchmark.clone()];
        for t in &q.stock_comparison {
            let t = ticker(t);
            if t.is_empty() {
                return Err(Error::invalid("stock_comparison", "holds an empty ticker"));
            }
            if t != benchmark && !symbols.contains(&t) {
                symbols.push(t);
            }
        }
        if symbols.len() > MAX_COMPARISONS + 1 {
            return Err(Error::invalid(
                "stock_comparison",
                format!(
                    "names {} tickers; at most {MAX_COMPARISONS} are allowed",
                    symbols.len() - 1
                ),
            ));
        }
        if symbols.len() < 2 {
            return Err(Error::invalid(
                "stock_comparison",
                "must name a ticker other than the benchmark",
            ));
        }
        let (start, end) = range(q.start_date, q.end_date)?;
        let window =
            Error::check_range("roll_window", q.roll_window.unwrap_or(21), 2, MAX_WINDOW)? as usize;
        let mut bars = Vec::with_capacity(symbols.len());
        for (k, s) in symbols.iter().enumerate() {
            let field = if k == 0 {
                "benchmark"
            } else {
                "stock_comparison"
            };
            bars.push(daily(market, field, s).await?);
        }
        Ok(StudyInputs {
            symbols,
            bars,
            start,
            end,
            window,
        })
    }
}

impl StudyInputs {
    /// The symbols' common sessions in range and their returns.
    pub fn align(self) -> Result<Study> {
        let StudyInputs {
            symbols,
            bars,
            start,
            end,
            window,
        } = self;
        let (dates, closes) = aligned(&bars, start, end);
        if dates.len() < window + 1 {
            return Err(Error::Insufficient(format!(
                "{} common sessions between {start} and {end}, roll_window {window} needs at least {}",
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

/// The return correlation matrix and each comparison's rolling correlation
/// with the benchmark.
pub fn symbol_corr(study: Study) -> CorrData {
    let cols: Vec<&[f64]> = study.rets.iter().map(Vec::as_slice).collect();
    let values = against(cols[0], &cols[1..], study.window, corr);
    let corr_matrix = MatrixRows {
        symbols: study.symbols.clone(),
        values: matrix(&cols),
    };
    CorrData {
        corr_matrix,
        corr_roll: RollingRows {
            study: Arc::new(study),
            values,
            price_keys: None,
        },
    }
}

/// Each comparison's rolling beta against the benchmark (covariance over
/// benchmark variance).
pub fn symbol_beta(study: Study) -> BetaData {
    let cols: Vec<&[f64]> = study.rets.iter().map(Vec::as_slice).collect();
    let values = against(cols[0], &cols[1..], study.window, beta);
    let price_keys = study.symbols[1..]
        .iter()
        .map(|s| format!("{s}_price"))
        .collect();
    BetaData {
        beta_roll: RollingRows {
            study: Arc::new(study),
            values,
            price_keys: Some(price_keys),
        },
    }
}

/// The closes of the cross-asset set over their common sessions.
pub struct AssetStudy {
    present: Vec<String>,
    dates: Vec<NaiveDate>,
    closes: Vec<Vec<f64>>,
}

/// What an [`AssetStudy`] is built from: the range and the cross-asset
/// symbols present in the store, read; aligned on the compute pool.
pub struct AssetInputs {
    present: Vec<String>,
    bars: Vec<Arc<Bars>>,
    start: NaiveDate,
    end: NaiveDate,
}

impl AssetStudy {
    pub async fn read(market: &dyn MarketData, q: &RangeRequest) -> Result<AssetInputs> {
        let (start, end) = range(q.start_date, q.end_date)?;
        let (mut present, mut bars) = (Vec::new(), Vec::new());
        for a in ASSETS {
            match market.daily(a).await {
                Ok(b) => {
                    present.push(a.to_string());
                    bars.push(b);
                }
                Err(PortError::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(AssetInputs {
            present,
            bars,
            start,
            end,
        })
    }
}

impl AssetInputs {
    /// The assets' common sessions in range and their closes.
    pub fn align(self) -> Result<AssetStudy> {
        let AssetInputs {
            present,
            bars,
            start,
            end,
        } = self;
        let (dates, closes) = aligned(&bars, start, end);
        if present.len() < 2 || dates.len() < 3 {
            return Err(Error::Insufficient(format!(
                "{} assets with {} common sessions between {start} and {end}",
                present.len(),
                dates.len()
            )));
        }
        Ok(AssetStudy {
            present,
            dates,
            closes,
        })
    }
}

/// Return correlations among the cross-asset symbols present in the store.
pub fn asset_corr(study: AssetStudy) -> AssetCorrData {
    let rets: Vec<Vec<f64>> = study.closes.iter().map(|c| returns(c)).collect();
    let cols: Vec<&[f64]> = rets.iter().map(Vec::as_slice).collect();
    AssetCorrData {
        start_date: study.dates[0].format("%Y-%m-%d").to_string(),
        end_date: study.dates[study.dates.len() - 1]
            .format("%Y-%m-%d")
            .to_string(),
        corr_info: MatrixRows {
            values: matrix(&cols),
            symbols: study.present,
        },
    }
}

/// Similarity 0-100 of the comparison window's closes to the reference
/// window's (resampled to the reference's length).
pub async fn pattern_corr(market: &dyn MarketData, q: &PatternRequest) -> Result<PatternData> {
    let reference = window_closes(
        market,
        "reference",
        &q.referenceSymbol,
        q.referenceStartDate,
        q.referenceEndDate,
    )
    .await?;
    let comparison = window_closes(
        market,
        "comparison",
        &q.comparisonSymbol,
        q.comparisonStartDate,
        q.comparisonEndDate,
    )
    .await?;
    let score = engine::patterns::similarity(&reference, &comparison).ok_or_else(|| {
        Error::Insufficient(
            "a window's closes do not move, so their correlation is undefined".into(),
        )
    })?;
    Ok(PatternData {
        pattern_corr: score,
    })
}

async fn window_closes(
    market: &dyn MarketData,
    prefix: &str,
    symbol: &str,
    start: NaiveDate,
    end: NaiveDate,
) -> Result<Vec<f64>> {
    let symbol = ticker(symbol);
    if symbol.is_empty() {
        return Err(Error::invalid(format!("{prefix}Symbol"), "is required"));
    }
    if start > end {
        return Err(Error::invalid(
            format!("{prefix}StartDate"),
            format!("({start}) is after '{prefix}EndDate' ({end})"),
        ));
    }
    let bars = daily(market, &format!("{prefix}Symbol"), &symbol)
        .await?
        .slice_dates(Some(start), Some(end));
    if bars.len() < 3 {
        return Err(Error::Insufficient(format!(
            "{symbol} has {} sessions between {start} and {end} (at least 3 needed)",
            bars.len()
        )));
    }
    Ok(bars.close)
}

fn range(start: NaiveDate, end: NaiveDate) -> Result<(NaiveDate, NaiveDate)> {
    if start > end {
        return Err(Error::invalid(
            "start_date",
            format!("({start}) is after 'end_date' ({end})"),
        ));
    }
    Ok((start, end))
}

fn iso(d: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}T00:00:00", d.year(), d.month(), d.day())
}

/// Closes of the series on their common sessions in `[start, end]`, read
/// from the cached bars without copying their other columns (daily bars are
/// stamped at midnight, so their times align as their dates do).
pub fn aligned(
    bars: &[Arc<Bars>],
    start: NaiveDate,
    end: NaiveDate,
) -> (Vec<NaiveDate>, Vec<Vec<f64>>) {
    let views: Vec<(&[chrono::NaiveDateTime], &[f64])> = bars
        .iter()
        .map(|b| {
            let lo = b.time.partition_point(|t| t.date() < start);
            let hi = b.time.partition_point(|t| t.date() <= end);
            (&b.time[lo..hi], &b.close[lo..hi])
        })
        .collect();
    let (times, closes) = align(&views);
    (times.iter().map(|t| t.date()).collect(), closes)
}
