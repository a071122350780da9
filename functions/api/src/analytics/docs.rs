//! OpenAPI schemas of the analytics endpoints: query parameters, bodies and
//! rows with the spec's exact field names. Documentation only; the handlers
//! parse with field-naming errors of their own.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

/// `{code, data}`: 200 for seasonality, 211 for correlation and beta.
#[derive(Serialize, ToSchema)]
pub struct Envelope<T: ToSchema> {
    pub code: u16,
    pub data: T,
}

/// Analytics error body; the HTTP status equals `code`, except 407 and 411,
/// which come in an HTTP 200.
#[derive(Serialize, ToSchema)]
pub struct AnalyticsError {
    pub code: u16,
    pub msg: String,
    /// Always null.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
}

/// The error answers the analytics operations share.
pub struct AnalyticsErrors;

impl utoipa::IntoResponses for AnalyticsErrors {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        crate::openapi::error_responses(
            "AnalyticsError",
            &[
                ("400", "Invalid parameter; the message names it"),
                ("401", "Missing or wrong credentials"),
                ("403", "The plan does not include the analytics service"),
                ("404", "Unknown ticker, or no data in range"),
            ],
        )
    }
}

/// Parameters of every seasonality view.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct Years {
    /// Ticker (any case).
    pub ticker: String,
    /// First year; default the latest year in the data - 20.
    pub start_year: Option<String>,
    /// Last year; default the latest year in the data.
    pub end_year: Option<String>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct HolidayParams {
    /// One of `get-predefined-holidays`; default the next one after the latest date.
    pub holiday_name: Option<String>,
    /// Sessions before and after, 0-60 (default 5).
    pub shift: Option<i64>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct SpecificParams {
    /// 1-12, default the latest date's month.
    pub month: Option<i64>,
    /// 1-31, default the latest date's day.
    pub day: Option<i64>,
    /// Sessions before and after, 0-60 (default 5).
    pub shift: Option<i64>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct SingleMonthParams {
    /// Month name (or number); default the latest date's month.
    pub target_month: Option<String>,
    /// `calendar_day` (default) or `trading_day`.
    pub category: Option<String>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CurveParams {
    /// Trading day of year to buy at the close of, 1-252; default the latest date's.
    pub entry_day: Option<i64>,
    /// Sessions held, 1-252 (default 63).
    pub holding_days: Option<i64>,
    /// Overrides `holding_days` as `exit_day - entry_day` (entry+1 to entry+252).
    pub exit_day: Option<i64>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct AllInOneParams {
    /// Comma-separated feature names; default all eight.
    pub features: Option<String>,
    pub holiday_name: Option<String>,
    /// Shared by the two offset views, 0-60 (default 5).
    pub shift: Option<i64>,
    pub month: Option<i64>,
    pub day: Option<i64>,
    pub target_month: Option<String>,
    pub category: Option<String>,
    pub entry_day: Option<i64>,
    pub holding_days: Option<i64>,
    pub exit_day: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct HolidayList {
    pub holidays: Vec<String>,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct WeekRow {
    /// Monday-Friday.
    pub Weekday: String,
    /// Average daily return, %.
    pub Return: f64,
    /// % of positive days.
    pub Positive: f64,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct MonthRow {
    /// January-December.
    pub Month: String,
    /// Average monthly return, %.
    pub Return: f64,
    /// % of positive months.
    pub Positive: f64,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct DayOfMonthRow {
    /// `01`-`12`.
    pub Month: String,
    /// `01`-`31`.
    pub Day: String,
    #[serde(rename = "AVG RET")]
    pub avg_ret: f64,
    pub MAX: f64,
    pub MIN: f64,
    #[serde(rename = "% POS")]
    pub pos: f64,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct DayOfYearRow {
    /// Trading day of year, 1-252.
    pub Day: u16,
    #[serde(rename = "AVG RET")]
    pub avg_ret: f64,
    pub MAX: f64,
    pub MIN: f64,
    #[serde(rename = "% POS")]
    pub pos: f64,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct OffsetRow {
    /// Sessions from the day: negative before, 0 the day (or the first session after it).
    pub DayOffset: i64,
    pub Mean_Return: f64,
    pub Positive_Pct: f64,
}

#[derive(Serialize, ToSchema)]
pub struct HolidayData {
    pub holiday_name: String,
    pub shift: i64,
    pub data: Vec<OffsetRow>,
}

#[derive(Serialize, ToSchema)]
pub struct SpecificData {
    /// MM-DD.
    pub target_date: String,
    pub shift: i64,
    pub data: Vec<OffsetRow>,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct SingleMonthRow {
    /// Zero-padded calendar day or trading day of the month.
    pub Day: String,
    pub Mean_Return: f64,
    pub Positive_Pct: f64,
}

#[derive(Serialize, ToSchema)]
pub struct SingleMonthData {
    pub month_name: String,
    /// `calendar_day` or `trading_day`.
    pub category: String,
    pub data: Vec<SingleMonthRow>,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct CurvePoint {
    /// YYYY-MM-DD.
    pub Date: String,
    /// Value of one dollar invested.
    pub Equity: f64,
}

#[derive(Serialize, ToSchema)]
pub struct CurveData {
    pub entry_trading_day: i64,
    /// `entry_trading_day + holding_days`; above 252 runs into the next year.
    pub exit_trading_day: i64,
    pub holding_days: i64,
    pub data: Vec<CurvePoint>,
}

#[derive(Serialize, ToSchema)]
pub struct FeatureMeta {
    pub description: String,
}

/// One feature of the all-in-one answer.
#[derive(Serialize, ToSchema)]
pub struct Feature<T: ToSchema> {
    pub meta: FeatureMeta,
    pub data: T,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct WeekRowCombined {
    pub Weekday: String,
    pub Mean_Return: f64,
    pub Positive_Pct: f64,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct MonthRowCombined {
    pub MonthName: String,
    pub Mean_Return: f64,
    pub Positive_Pct: f64,
}

/// The requested features, each under its name.
#[derive(Serialize, ToSchema)]
pub struct AllInOne {
    #[serde(rename = "performance-by-week")]
    pub by_week: Option<Feature<Vec<WeekRowCombined>>>,
    #[serde(rename = "performance-by-month")]
    pub by_month: Option<Feature<Vec<MonthRowCombined>>>,
    #[serde(rename = "performance-around-holiday")]
    pub around_holiday: Option<Feature<HolidayData>>,
    #[serde(rename = "performance-by-day-of-single-month")]
    pub single_month: Option<Feature<SingleMonthData>>,
    #[serde(rename = "performance-around-specific-days")]
    pub specific_days: Option<Feature<SpecificData>>,
    #[serde(rename = "performance-by-day-of-month")]
    pub day_of_month: Option<Feature<Vec<DayOfMonthRow>>>,
    #[serde(rename = "performance-by-day-of-year")]
    pub day_of_year: Option<Feature<Vec<DayOfYearRow>>>,
    #[serde(rename = "one-dollar-curve")]
    pub curve: Option<Feature<CurveData>>,
}

/// Body of `symbol_corr` and `symbol_beta` (JSON or form; in forms the array
/// is JSON text).
#[derive(Serialize, ToSchema)]
pub struct SymbolsBody {
    pub benchmark: String,
    pub stock_comparison: Vec<String>,
    /// YYYY-MM-DD.
    pub start_date: String,
    /// YYYY-MM-DD.
    pub end_date: String,
    /// Trading days per window, 2-2520 (default 21).
    pub roll_window: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct RangeBody {
    pub start_date: String,
    pub end_date: String,
}

#[derive(Serialize, ToSchema)]
#[allow(non_snake_case)]
pub struct PatternBody {
    pub referenceSymbol: String,
    pub referenceStartDate: String,
    pub referenceEndDate: String,
    pub comparisonSymbol: String,
    pub comparisonStartDate: String,
    pub comparisonEndDate: String,
}

#[derive(Serialize, ToSchema)]
pub struct CorrData {
    /// Rows `{index: symbol, <SYMBOL>: correlation, ...}`.
    #[schema(value_type = Vec<Object>)]
    pub corr_matrix: Vec<Value>,
    /// Rows `{Date, <SYMBOL>: rolling correlation with the benchmark, ..., stock_price}`.
    #[schema(value_type = Vec<Object>)]
    pub corr_roll: Vec<Value>,
}

#[derive(Serialize, ToSchema)]
pub struct AssetCorrData {
    /// First common session used.
    pub start_date: String,
    /// Last common session used.
    pub end_date: String,
    /// Rows `{index: asset, <ASSET>: correlation, ...}` over the 18 assets.
    #[schema(value_type = Vec<Object>)]
    pub corr_info: Vec<Value>,
}

#[derive(Serialize, ToSchema)]
pub struct PatternData {
    /// 0-100; higher is more similar.
    pub pattern_corr: f64,
}

#[derive(Serialize, ToSchema)]
pub struct BetaData {
    /// Rows `{Date, <SYMBOL>: rolling beta, <SYMBOL>_price, ..., stock_price}`.
    #[schema(value_type = Vec<Object>)]
    pub beta_roll: Vec<Value>,
}
