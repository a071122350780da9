//! The seasonality answers, serialized from these types.

use super::requests::DayCategory;
use engine::seasonality::Stats;
use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Average, extremes and share of positive returns of one calendar day.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct DayStats {
    #[serde(rename = "AVG RET")]
    pub avg_ret: f64,
    pub MAX: f64,
    pub MIN: f64,
    #[serde(rename = "% POS")]
    pub pos: f64,
}

impl From<&Stats> for DayStats {
    fn from(s: &Stats) -> Self {
        DayStats {
            avg_ret: s.mean,
            MAX: s.max,
            MIN: s.min,
            pos: s.positive_pct,
        }
    }
}

/// Average return and share of positive returns, as the newer answers name them.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct MeanPositive {
    pub Mean_Return: f64,
    pub Positive_Pct: f64,
}

impl From<&Stats> for MeanPositive {
    fn from(s: &Stats) -> Self {
        MeanPositive {
            Mean_Return: s.mean,
            Positive_Pct: s.positive_pct,
        }
    }
}

/// `get-predefined-holidays`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HolidayList {
    pub holidays: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct WeekRow {
    /// Monday-Friday.
    pub Weekday: &'static str,
    /// Average daily return, %.
    pub Return: f64,
    /// % of positive days.
    pub Positive: f64,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct MonthRow {
    /// January-December.
    pub Month: &'static str,
    /// Average monthly return, %.
    pub Return: f64,
    /// % of positive months.
    pub Positive: f64,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct DayOfMonthRow {
    /// `01`-`12`.
    pub Month: String,
    /// `01`-`31`.
    pub Day: String,
    #[serde(flatten)]
    pub stats: DayStats,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct DayOfYearRow {
    /// Trading day of year, 1-252.
    pub Day: u16,
    #[serde(flatten)]
    pub stats: DayStats,
}

/// One session around the day.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct OffsetRow {
    /// Sessions from the day: negative before, 0 the day (or the first session after it).
    pub DayOffset: i64,
    #[serde(flatten)]
    pub stats: MeanPositive,
}

/// `performance-around-holiday`: each session's average around the
/// holiday over the years, `shift` sessions either side.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HolidayData {
    /// As `get-predefined-holidays` names it.
    pub holiday_name: &'static str,
    /// Sessions either side of the holiday.
    pub shift: i64,
    /// One row an offset with returns, `DayOffset` from `-shift` to `shift`.
    pub data: Vec<OffsetRow>,
}

/// `performance-around-specific-days`: the same around a calendar day.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SpecificData {
    /// The calendar day, MM-DD; in a year where it is no session, the first
    /// session after it.
    pub target_date: String,
    /// Sessions either side of the day.
    pub shift: i64,
    /// One row an offset with returns, `DayOffset` from `-shift` to `shift`.
    pub data: Vec<OffsetRow>,
}

/// One day of the month.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct SingleMonthRow {
    /// Zero-padded calendar day or trading day of the month.
    pub Day: String,
    #[serde(flatten)]
    pub stats: MeanPositive,
}

/// `performance-by-day-of-single-month`: one month's days (calendar or
/// trading) averaged over the years.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SingleMonthData {
    /// January-December.
    pub month_name: &'static str,
    /// What `Day` counts: the calendar day, or the trading day of the month
    /// (1 is the month's first session).
    pub category: DayCategory,
    /// One row a day with returns in the years, in day order.
    pub data: Vec<SingleMonthRow>,
}

/// One session of the one-dollar curve.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct CurvePoint {
    /// YYYY-MM-DD.
    pub Date: String,
    /// Value of one dollar invested.
    pub Equity: f64,
}

/// `one-dollar-curve`: a dollar held over the same trading days of
/// each year.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CurveData {
    /// Trading day of the year the dollar is invested, 1-252.
    pub entry_trading_day: i64,
    /// `entry_trading_day + holding_days`; above 252 runs into the next year.
    pub exit_trading_day: i64,
    /// Sessions held each year.
    pub holding_days: i64,
    /// One point a session held, the years in order (overlapping windows
    /// hold a session once).
    pub data: Vec<CurvePoint>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct FeatureMeta {
    pub description: &'static str,
}

/// One feature of the all-in-one answer.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Feature<T> {
    pub meta: FeatureMeta,
    pub data: T,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct WeekRowCombined {
    pub Weekday: &'static str,
    #[serde(flatten)]
    pub stats: MeanPositive,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct MonthRowCombined {
    pub MonthName: &'static str,
    #[serde(flatten)]
    pub stats: MeanPositive,
}

/// The requested features, each under its name, in the order of [`FEATURES`].
#[derive(Debug, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "kebab-case")]
pub struct AllInOne {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_by_week: Option<Feature<Vec<WeekRowCombined>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_by_month: Option<Feature<Vec<MonthRowCombined>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_around_holiday: Option<Feature<HolidayData>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_by_day_of_single_month: Option<Feature<SingleMonthData>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_around_specific_days: Option<Feature<SpecificData>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_by_day_of_month: Option<Feature<Vec<DayOfMonthRow>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance_by_day_of_year: Option<Feature<Vec<DayOfYearRow>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_dollar_curve: Option<Feature<CurveData>>,
}
